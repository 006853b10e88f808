"""`arena replay`: check game records and print the resulting positions."""

from __future__ import annotations

import json
import sys

import click

from arena.game import VariantError, parse_variant
from arena.game.replay import ReplayResult, replay_record


def _render(result: ReplayResult, label: str) -> str:
    game = result.game
    lines = [label]
    if game is None:
        return f"{label}\n  error: {result.error}"
    columns = game.variant.columns
    width = max(len(str(columns)), 1)
    fixed = set(game.variant.fixed_columns)
    for row in game.board_rows():
        lines.append("  " + " ".join(cell.rjust(width) for cell in row))
    lines.append(
        "  " + " ".join(("#" if c in fixed else str(c)).rjust(width) for c in range(1, columns + 1))
    )
    data = result.to_dict()
    if result.error:
        lines.append(f"  error: {result.error}")
    elif data["status"] == "ongoing":
        lines.append(f"  ongoing after {data['plies']} plies, player {data['to_move']} to move; "
                     f"legal: {' '.join(data['legal'])}")
    elif data["status"] == "draw":
        lines.append(f"  draw ({data['reason']}) after {data['plies']} plies")
    else:
        lines.append(f"  player {data['winner']} wins ({data['reason']}) after {data['plies']} plies")
    return "\n".join(lines)


@click.command(name="replay")
@click.option("--variant", "variant_spec", default="classic", show_default=True,
              help="Variant for records without a 'VARIANT:' prefix.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per record.")
@click.argument("records", nargs=-1)
def command(variant_spec: str, as_json: bool, records: tuple[str, ...]) -> None:
    """Check game records move by move and print the board and state.

    \b
    RECORDS are a file of records (one per line), '-' for standard input, or records
    given directly, e.g.  arena replay 'popout:8x7: d4 d4 p4'  or  arena replay 4453.
    Exits with status 1 if any record holds an illegal or malformed move.
    """
    try:
        default_variant = parse_variant(variant_spec)
    except VariantError as error:
        raise click.BadParameter(str(error), param_hint="--variant") from None
    lines = list(_record_lines(records))
    failed = False
    for source, line in lines:
        result = replay_record(line, default_variant)
        failed = failed or result.error is not None
        if as_json:
            click.echo(json.dumps(result.to_dict()))
        else:
            click.echo(_render(result, f"{source}: {line.strip()}"))
    if failed:
        sys.exit(1)


def _record_lines(arguments: tuple[str, ...]):
    import os

    if not arguments:
        arguments = ("-",)
    for argument in arguments:
        if argument == "-":
            data = sys.stdin.buffer.read()
            yield from _lines_of(data, "stdin", "standard input")
        elif os.path.isdir(argument):
            raise click.ClickException(f"{argument} is a directory, not a file of records")
        elif os.path.isfile(argument):
            try:
                with open(argument, "rb") as handle:
                    data = handle.read()
            except OSError as error:
                raise click.ClickException(
                    f"cannot read {argument}: {error.strerror or error}") from None
            yield from _lines_of(data, argument, argument)
        else:
            yield "record", argument


def _lines_of(data: bytes, label: str, name: str):
    """The record lines of a file's bytes (UTF-8, a BOM is fine), skipping blanks and comments."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise click.ClickException(
            f"cannot read {name}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            yield f"{label}:{number}", line
