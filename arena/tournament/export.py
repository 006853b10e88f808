"""Export the games of a results directory as CSV or JSON Lines (every stored column of
`arena.schema.STORED_COLUMNS`, in its order; in JSON Lines the lists and time controls as JSON
values, `schema.JSON_COLUMNS`), or as game records (`VARIANT: m1 m2 ...`, the
one-line format `arena replay` reads). Reading the results writes nothing
there."""

from __future__ import annotations

import csv
import json
import math
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from arena.schema import JSON_COLUMNS, STORED_COLUMNS
from arena.spreadsheet import write_cell
from arena.tournament.store import db_path, iter_game_rows, missing_results

FORMATS = ("csv", "jsonl", "records")


def _clean(name: str, value):
    if isinstance(value, float) and math.isnan(value):
        return None
    if name in JSON_COLUMNS and isinstance(value, str):
        # a list or a time control as itself, not as JSON text inside the JSON (parsed twice:
        # Kaggle user review); empty (older stores) is null, damaged text stays text
        if not value:
            return None
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def write_games(rows: Iterable[dict], fmt: str, out: TextIO) -> int:
    """Write game rows to `out`; returns how many were written."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    count = 0
    if fmt == "csv":
        writer = csv.DictWriter(out, fieldnames=list(STORED_COLUMNS), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if row.get(k) is None else write_cell(row.get(k)))
                             for k in STORED_COLUMNS})
            count += 1
    elif fmt == "records":
        for row in rows:
            out.write(record_lines(row))
            count += 1
    else:
        for row in rows:
            record = {k: _clean(k, row.get(k)) for k in STORED_COLUMNS}
            out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
            count += 1
    return count


def record_lines(row: dict) -> str:
    """A game as a comment naming it (id, players, result, reason) and its record line.

    The comment is what `arena replay` and other record readers skip; the names come from bot
    authors' files, so a control character in them could not break the record onto a new line.
    """
    from arena.reports.render import game_label, record_line

    about = game_label(row.get("game_id"), row.get("first"), row.get("second"), row.get("result"),
                       row.get("reason") or "")
    about = "".join(c if c.isprintable() else " " for c in about)
    return f"# {about}\n{record_line(row.get('variant'), row.get('moves'))}\n"


class ExportError(ValueError):
    """An output file that must not or cannot be written (one-line message)."""


SQLITE_MAGIC = b"SQLite format 3\x00"


def check_target(results_dir: str | Path, target: Path) -> None:
    """Refuse to write the export over the results database (or any SQLite database)."""
    database = db_path(results_dir)
    protected = [database, database.with_name(database.name + "-wal"),
                 database.with_name(database.name + "-shm")]
    resolved = target.resolve()
    if any(resolved == p.resolve() for p in protected):
        raise ExportError(f"--out {target} is the results database itself: choose another file")
    if target.exists() and not target.is_file():
        raise ExportError(f"--out {target} exists and is not a regular file")
    try:
        with open(target, "rb") as handle:
            head = handle.read(len(SQLITE_MAGIC))
    except OSError:
        return
    if head == SQLITE_MAGIC:
        raise ExportError(f"--out {target} is an SQLite database; refusing to overwrite it")


def export_games(results_dir: str | Path, fmt: str = "csv", out: str | Path | None = None) -> int:
    """Export every stored game (in `seq` order) to a file, or to stdout when `out` is None.

    The database is checked before anything is written; a file is written to a temporary name
    and renamed, so an existing file is replaced only by a complete export.
    """
    if not db_path(results_dir).is_file():
        raise FileNotFoundError(missing_results(results_dir))
    to_stdout = out is None or str(out) == "-"
    if not to_stdout:
        check_target(results_dir, Path(out))
    rows = iter_game_rows(results_dir)  # opens and checks the database (StoreError)
    if to_stdout:
        return write_games(rows, fmt, sys.stdout)
    target = Path(out)
    tmp = target.with_name(target.name + ".tmp")
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as handle:
            count = write_games(rows, fmt, handle)
        tmp.replace(target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return count
