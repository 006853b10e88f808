"""Export the games of a results directory as CSV or JSON Lines (games-table columns)."""

from __future__ import annotations

import csv
import json
import math
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from arena.tournament.store import DB_NAME, GAME_COLUMNS, db_path, iter_game_rows

FORMATS = ("csv", "jsonl")


def _clean(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def write_games(rows: Iterable[dict], fmt: str, out: TextIO) -> int:
    """Write game rows to `out`; returns how many were written."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    count = 0
    if fmt == "csv":
        writer = csv.DictWriter(out, fieldnames=list(GAME_COLUMNS), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in GAME_COLUMNS})
            count += 1
    else:
        for row in rows:
            record = {k: _clean(row.get(k)) for k in GAME_COLUMNS}
            out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
            count += 1
    return count


def export_games(results_dir: str | Path, fmt: str = "csv", out: str | Path | None = None) -> int:
    """Export every stored game (in `seq` order) to a file, or to stdout when `out` is None."""
    if not db_path(results_dir).is_file():
        raise FileNotFoundError(f"no tournament results in {results_dir} (missing {DB_NAME})")
    rows = iter_game_rows(results_dir)
    if out is None or str(out) == "-":
        return write_games(rows, fmt, sys.stdout)
    target = Path(out)
    tmp = target.with_name(target.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as handle:
        count = write_games(rows, fmt, handle)
    tmp.replace(target)
    return count
