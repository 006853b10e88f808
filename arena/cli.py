"""The `arena` command: a thin, lazily loaded click group behind a click-free fast path.

Each subcommand lives in `arena/commands/<name>.py` as a click command called `command`.
Loading is lazy so that `arena play` does not pay for pandas or matplotlib at start-up. Importing
click alone costs about as much as starting Python, so `arena --help`, `arena --version` and the
plain forms of `arena replay` are answered without it (`main` is the entry point either way,
and it stands in for the click group wherever one is expected, e.g. click's CliRunner).
"""

from __future__ import annotations

import os
import sys

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
    "analyze": "Judge every move of stored games against perfect play (exact solver).",
    "openings": "Write an openings file of positions with a given theoretical value.",
}
ABOUT = "Run tournaments between Four-in-a-Row bots and rate them."
_HELP_OPTIONS = ("-h", "--help")


def _program_name() -> str:
    """What click would call the program: `python -m arena` under -m, else the script's name."""
    first = sys.argv[0] if sys.argv else ""
    if os.path.basename(first) == "__main__.py":
        return "python -m arena"
    name = os.path.basename(first)
    return name if name and name != "-c" else "arena"


def help_text(program: str) -> str:
    """The group's --help, the same text click prints."""
    width = max(len(name) for name in COMMANDS)
    lines = [
        f"Usage: {program} [OPTIONS] COMMAND [ARGS]...", "", f"  {ABOUT}", "",
        "Options:",
        "  --version   Show the version and exit.",
        "  -h, --help  Show this message and exit.",
        "", "Commands:",
    ]
    lines += [f"  {name:<{width}}  {text}" for name, text in sorted(COMMANDS.items())]
    return "\n".join(lines)


def _fast(arguments: list[str]) -> int | None:
    """The exit status of a command answered without click, or None to hand over to click."""
    if len(arguments) == 1 and arguments[0] in _HELP_OPTIONS:
        print(help_text(_program_name()))
        return 0
    if len(arguments) == 1 and arguments[0] == "--version":
        print(f"arena, version {__version__}")
        return 0
    if arguments and arguments[0] == "replay":
        from arena.replay_text import fast_main

        return fast_main(arguments[1:])
    return None


_GROUP = None


def group() -> object:
    """The click group (built on first use)."""
    global _GROUP
    if _GROUP is None:
        _GROUP = _build_group()
    return _GROUP


def _build_group() -> object:
    import importlib

    import click

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

        def resolve_command(self, ctx: click.Context, args: list[str]):
            if args and args[0] not in COMMANDS and not args[0].startswith("-"):
                from arena.spelling import closest

                # `arena rnu`: no suggestion, where `arena league subimt` has click's (newcomer
                # review); worded as click words it there
                near = closest(args[0], COMMANDS)
                ctx.fail(f"No such command {args[0]!r}." + (f" Did you mean {near!r}?" if near
                                                             else ""))
            return super().resolve_command(ctx, args)

    @click.group(cls=LazyGroup, context_settings={"help_option_names": list(_HELP_OPTIONS)},
                 help=ABOUT)
    @click.version_option(__version__, prog_name="arena")
    def arena() -> None:
        pass

    return arena


class _Entry:
    """`arena`'s entry point: the fast path first, then the click group. Attribute access
    (`main`, `name`, `commands`, ...) goes to the group, so it can be used as one."""

    name = "arena"

    def __call__(self, args: list[str] | None = None, **extra) -> object:
        arguments = list(sys.argv[1:] if args is None else args)
        if not extra:
            try:
                status = _fast(arguments)
                if status is not None:
                    sys.stdout.flush()
            except BrokenPipeError:  # `arena --help | head -1`: quiet, as click's own path is
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                status = 1
            if status is not None:
                sys.exit(status)
        return group()(args, **extra)

    def __getattr__(self, attribute: str) -> object:
        return getattr(group(), attribute)


main = _Entry()


if __name__ == "__main__":
    main()
