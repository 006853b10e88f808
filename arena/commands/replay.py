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
@click.option("--ply", type=click.IntRange(min=0), default=None, metavar="N",
              help="Stop after the first N plies: the position of the game's `turn ply=N` line "
              "(a forfeit's detail and `--moves` number plies so).")
@click.option("--moves", "list_moves", is_flag=True,
              help="Also list every ply: who moved, its wall and CPU time in ms, the time_ms "
              "its bot was told, its info line; then who forfeited and why, and the stored "
              "games' stderr log files.")
@click.option("--protocol", "feed", is_flag=True,
              help="Print only the lines the arena sends the bot to move at that position "
              "(hello, game, turn, quit; its time control, the clocks rebuilt from the stored "
              "move times), to feed to the bot by hand: ... --protocol | ./mybot. One game.")
@click.argument("records", nargs=-1)
def command(variant_spec: str, as_json: bool, ply: int | None, list_moves: bool, feed: bool,
            records: tuple[str, ...]) -> None:
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

    \b
    Why did my bot lose game G, and what did it see?
      arena replay results/demo G --moves             every ply, times, forfeit, log files
      arena replay results/demo G --ply 9             the board at its turn ply=9
      arena replay results/demo G --protocol | ./bot  its last position, fed to the bot
    """
    try:
        status = run(variant_spec, as_json, records, click.echo, ply=ply, moves=list_moves,
                     feed=feed)
    except ReplayUsageError as error:
        message = str(error)
        if message.startswith("--variant: "):
            raise click.BadParameter(message.split(": ", 1)[1], param_hint="--variant") from None
        raise click.UsageError(message) from None
    except ReplayInputError as error:
        raise click.ClickException(str(error)) from None
    if status:
        sys.exit(status)
