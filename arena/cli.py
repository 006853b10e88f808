"""The `arena` command: a thin, lazily loaded click group.

Each subcommand lives in `arena/commands/<name>.py` as a click command called `command`.
Loading is lazy so that `arena play` does not pay for pandas or matplotlib at start-up.
"""

from __future__ import annotations

import importlib

import click

from arena import __version__

# name -> one-line help shown by `arena --help` without importing the module.
COMMANDS: dict[str, str] = {
    "variants": "List the variant presets and their parameters.",
    "replay": "Check game records move by move and print the final state.",
    "play": "Play a match between two bots.",
    "check": "Run a conformance test on a bot.",
    "run": "Run (or resume) a tournament from a TOML file.",
    "export": "Export the games of a results directory as CSV or JSONL.",
    "standings": "Ratings and standings from a results directory or a games file.",
    "plot": "Plot ratings, head-to-head and timing charts.",
    "publish": "Build a static leaderboard website from a results directory.",
    "league": "A league: submit bots while it plays; games go where they settle the ranking.",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(f"arena.commands.{cmd_name.replace('-', '_')}")
        return module.command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl(sorted(COMMANDS.items()))


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="arena")
def main() -> None:
    """Run tournaments between Four-in-a-Row bots and rate them."""


if __name__ == "__main__":
    main()
