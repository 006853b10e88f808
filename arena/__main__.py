"""`python -m arena` runs the `arena` command."""

from arena.cli import main

main()
