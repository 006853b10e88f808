"""`arena replay`: check game records and print the resulting positions (click front end of
arena/replay_text.py, which `arena` also runs directly for the plain forms, for start-up time)."""

from __future__ import annotations

import sys

import click

from arena.game import DEFAULT_VARIANT
from arena.replay_text import ReplayInputError, ReplayUsageError, run


@click.command(name="replay")
@click.option("--variant", "variant_spec", default=DEFAULT_VARIANT, show_default=True,
              help="Variant for records without a 'VARIANT:' prefix.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per record.")
@click.argument("records", nargs=-1)
def command(variant_spec: str, as_json: bool, records: tuple[str, ...]) -> None:
    """Check game records move by move and print the board and state.

    \b
    RECORDS are files of records (one per line), '-' for standard input, or records
    given directly, e.g.  arena replay 'popout:8x7: d4 d4 p4'  or  arena replay 4453.
    An argument that looks like a file name (games.txt, dir/x) must exist.
    A results or league folder, or a games file (.csv, .jsonl: `arena export`), replays
    its games: all of them, or those whose ids follow, e.g.
    arena replay results/demo g74aa5ac946b38893
    Exits with status 1 if any record holds an illegal or malformed move, or a
    stored game's result is not how its moves end.
    """
    try:
        status = run(variant_spec, as_json, records, click.echo)
    except ReplayUsageError as error:
        message = str(error)
        if message.startswith("--variant: "):
            raise click.BadParameter(message.split(": ", 1)[1], param_hint="--variant") from None
        raise click.UsageError(message) from None
    except ReplayInputError as error:
        raise click.ClickException(str(error)) from None
    if status:
        sys.exit(status)
