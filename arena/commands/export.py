"""`arena export`: the games of a results directory as CSV or JSON Lines."""

from __future__ import annotations

from pathlib import Path

import click


@click.command(name="export")
@click.argument("results_dir", metavar="DIR", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl", "records"]), default="csv",
              show_default=True,
              help="Output format; `records`: one `VARIANT: moves` line a game (after a `#` "
                   "line naming it), as `arena replay` reads.")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Output file (default: standard output).")
def command(results_dir: Path, fmt: str, out: Path | None) -> None:
    """Export the games of a results directory as CSV or JSONL (one row per game), or as game
    records.

    In CSV and JSONL every stored column is written, in the order of docs/DESIGN.md's games table followed by
    `round` and `arena_version`. Only reads DIR: a read-only copy of a results folder works.
    """
    import sqlite3

    from arena.tournament.export import ExportError, export_games
    from arena.tournament.store import StoreError

    try:
        count = export_games(results_dir, fmt, out)
    except BrokenPipeError:  # e.g. piped into `head`
        import os
        import sys

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except (ExportError, StoreError) as error:
        raise click.ClickException(str(error)) from None
    except OSError as error:
        if error.filename is None and isinstance(error, FileNotFoundError):
            raise click.ClickException(str(error)) from None  # no results in DIR
        if out is not None and error.filename is not None:
            raise click.ClickException(
                f"cannot write {out}: {error.strerror or error}") from None
        raise click.ClickException(f"cannot export {results_dir}: {error}") from None
    except sqlite3.Error as error:
        raise click.ClickException(f"cannot export {results_dir}: {error}") from None
    if out is not None:
        click.echo(f"{count} games written to {out}", err=True)
