"""A test bot that tells where it may run: its `hello` version is `cpus-LIST`, LIST being the
`Cpus_allowed_list` of /proc/self/status (e.g. `cpus-0`, `cpus-0-1`; commas become `+`).
It plays the first legal move."""

import re
from pathlib import Path

from arena.sdk import run_bot


def allowed_cpus() -> str:
    status = Path("/proc/self/status").read_text()
    match = re.search(r"^Cpus_allowed_list:\s*(\S+)", status, re.M)
    return match.group(1).replace(",", "+") if match else "unknown"


def main() -> None:
    run_bot(lambda turn: turn.game.legal_moves()[0], name="cpus", version=f"cpus-{allowed_cpus()}")


if __name__ == "__main__":
    main()
