"""Load a games table from a results directory, a CSV file or a JSONL file.

Files from elsewhere need only ``first``, ``second`` and ``result`` (``white``/``black``/
``result_white`` are accepted as aliases); ``result`` is the first player's score: ``1``, ``0.5``,
``0`` or ``1-0``, ``1/2-1/2``, ``0-1`` (also ``½``, ``=``, ``draw``, ``1.0``). An empty result or
``*`` marks a void game (kept with result NaN, excluded from ratings). Missing columns of the games
table (docs/DESIGN.md) are filled in: ``seq`` = file order, ``variant`` empty, and so on.

Bad input raises :class:`GamesFileError` (a ValueError) with a one-line message naming the file,
the line and the column.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

REQUIRED = ("first", "second", "result")
ALIASES = {"white": "first", "black": "second", "result_white": "result", "score": "result"}
STRING_COLUMNS = ("game_id", "variant", "reason", "moves", "opening", "pair_id", "move_ms",
                  "move_cpu_ms", "detail", "started_at", "finished_at", "first_hash",
                  "second_hash", "first_version", "second_version")

_RESULTS = {
    "1": 1.0, "1.0": 1.0, "1-0": 1.0, "1:0": 1.0, "w": 1.0, "win": 1.0,
    "0": 0.0, "0.0": 0.0, "0-1": 0.0, "0:1": 0.0, "l": 0.0, "loss": 0.0,
    "0.5": 0.5, ".5": 0.5, "1/2": 0.5, "½": 0.5, "1/2-1/2": 0.5, "½-½": 0.5, "0.5-0.5": 0.5,
    "=": 0.5, "d": 0.5, "draw": 0.5,
}
_VOID = {"", "*", "nan", "none", "null", "void"}


class GamesFileError(ValueError):
    """A games file or results directory that cannot be read; the message is one line."""


def parse_result(value: object) -> float | None:
    """Score of the first player as 1.0 / 0.5 / 0.0, NaN for a void game, None if unreadable."""
    if value is None:
        return math.nan
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        f = float(value)
        if math.isnan(f):
            return math.nan
        return f if f in (0.0, 0.5, 1.0) else None
    text = str(value).strip().lower()
    if text in _VOID:
        return math.nan
    return _RESULTS.get(text)


def load_games(path: str | Path) -> pd.DataFrame:
    """The games table of a results directory, a ``.csv`` or a ``.jsonl``/``.ndjson`` file."""
    path = Path(path)
    if path.is_dir():
        try:
            from arena.tournament.store import load_games as store_load
        except ImportError as exc:
            raise GamesFileError(
                f"{path}: cannot read a results directory (arena.tournament.store: {exc})"
            ) from exc
        from arena.tournament.store import StoreError

        try:
            frame = store_load(path)
        except GamesFileError:
            raise
        except (FileNotFoundError, StoreError) as exc:  # already one line naming the file
            raise GamesFileError(str(exc)) from exc
        except Exception as exc:  # noqa: BLE001 - turn store errors into one line
            raise GamesFileError(f"{path}: cannot load the results: {exc}") from exc
        return _complete(frame, str(path))
    if not path.exists():
        raise GamesFileError(f"{path}: no such file or directory")
    if not path.is_file():
        raise GamesFileError(f"{path}: not a regular file")
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        raw = _read_jsonl(path)
        first_line = 1
    elif suffix in (".csv", ".tsv", ".txt"):
        raw = _read_csv(path, sep="\t" if suffix == ".tsv" else ",")
        first_line = 2  # header is line 1
    else:
        raise GamesFileError(f"{path}: unknown file type {suffix!r} (use .csv or .jsonl, or a "
                             "results directory)")
    return _normalise(raw, path, first_line)


def _read_csv(path: Path, sep: str) -> pd.DataFrame:
    """Read with the csv module (BOM, CRLF and blank lines are fine), keeping each row's line."""
    import csv

    rows: list[list[str]] = []
    lines: list[int] = []
    header: list[str] | None = None
    header_line = start = 0
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle, delimiter=sep, skipinitialspace=True, strict=True)
            while True:
                start = reader.line_num + 1
                try:
                    row = next(reader)
                except StopIteration:
                    break
                if not any(field.strip() for field in row):
                    continue  # a blank line
                if header is None:
                    header, header_line = [field.strip() for field in row], start
                    continue
                if len(row) > len(header) and any(f.strip() for f in row[len(header):]):
                    raise GamesFileError(
                        f"{path} line {start}: {len(row)} fields, but the header (line "
                        f"{header_line}) names {len(header)} columns")
                rows.append((row + [""] * len(header))[: len(header)])
                lines.append(start)
    except UnicodeDecodeError as exc:
        raise GamesFileError(f"{path}: not UTF-8 text: {exc.reason}") from exc
    except csv.Error as exc:
        raise GamesFileError(f"{path} line {start}: not a readable CSV file: {exc}") from exc
    except OSError as exc:
        raise GamesFileError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if header is None:
        raise GamesFileError(f"{path}: the file is empty (expected a header with columns "
                             "first,second,result)")
    seen: set[str] = set()
    for name in header:
        key = name.lower()
        if key in seen:
            raise GamesFileError(f"{path} line {header_line}: column {name!r} appears twice "
                                 "in the header")
        seen.add(key)
    frame = pd.DataFrame(rows, columns=header, dtype=object)
    frame.attrs["lines"] = lines
    return frame


def _read_jsonl(path: Path) -> pd.DataFrame:
    records = []
    lines = []
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise GamesFileError(f"{path}: not UTF-8 text: {exc.reason}") from exc
    except OSError as exc:
        raise GamesFileError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if not text.strip():
        raise GamesFileError(f"{path}: the file is empty (expected one JSON object per line "
                             "with first, second, result)")
    stripped = text.lstrip()
    if stripped.startswith("["):  # a JSON array of objects
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise GamesFileError(f"{path} line {exc.lineno}: invalid JSON: {exc.msg}") from exc
        for k, obj in enumerate(data):
            if not isinstance(obj, dict):
                raise GamesFileError(f"{path}: item {k + 1} of the array is not an object")
            records.append(obj)
            lines.append(k + 1)
        frame = pd.DataFrame.from_records(records)
        frame.attrs["lines"] = lines
        return frame
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GamesFileError(f"{path} line {lineno}: invalid JSON: {exc.msg}") from exc
        if not isinstance(obj, dict):
            raise GamesFileError(f"{path} line {lineno}: expected a JSON object per line")
        records.append(obj)
        lines.append(lineno)
    frame = pd.DataFrame.from_records(records)
    frame.attrs["lines"] = lines
    return frame


def _normalise(raw: pd.DataFrame, path: Path, first_line: int) -> pd.DataFrame:
    lines = raw.attrs.get("lines")
    frame = raw.copy()
    frame.columns = [str(c).strip() for c in frame.columns]
    lower = {c: c.lower() for c in frame.columns}
    frame = frame.rename(columns=lower)
    for alias, canon in ALIASES.items():
        if alias in frame.columns and canon not in frame.columns:
            frame = frame.rename(columns={alias: canon})
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        have = ", ".join(" ".join(str(c).split())[:40] for c in frame.columns[:8]) or "none"
        raise GamesFileError(f"{path}: missing column(s) {', '.join(missing)} "
                             f"(need first, second, result; found: {have})")

    def where(k: int) -> str:
        line = lines[k] if lines is not None else k + first_line
        return f"{path} line {line}"

    results = np.empty(len(frame))
    for k, value in enumerate(frame["result"].tolist()):
        parsed = parse_result(value)
        if parsed is None:
            raise GamesFileError(
                f"{where(k)}, column result: cannot read {value!r} as a result "
                "(use 1, 0.5, 0 or 1-0, 1/2-1/2, 0-1, from the first player's side)")
        results[k] = parsed
    for col in ("first", "second"):
        values = frame[col]
        empty = values.isna() | (values.astype(str).str.strip() == "")
        if empty.any():
            k = int(np.flatnonzero(empty.to_numpy())[0])
            raise GamesFileError(f"{where(k)}, column {col}: empty bot name")
        frame[col] = values.astype(str).str.strip()
    frame["result"] = results
    return _complete(frame, str(path))


def _complete(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """Add the missing columns of the games table with neutral values."""
    frame = frame.copy()
    n = len(frame)
    for col in REQUIRED:
        if col not in frame.columns:
            raise GamesFileError(f"{source}: the games table has no column {col!r}")
    frame["result"] = pd.to_numeric(frame["result"], errors="coerce").astype(float)
    if "seq" not in frame.columns:
        frame["seq"] = np.arange(1, n + 1)
    else:
        seq = pd.to_numeric(frame["seq"], errors="coerce")
        frame["seq"] = seq.fillna(pd.Series(np.arange(1, n + 1), index=frame.index)).astype(
            np.int64)
    if "game_id" not in frame.columns:
        frame["game_id"] = [str(k) for k in range(1, n + 1)]
    if "winner" not in frame.columns:
        frame["winner"] = frame["result"].map({1.0: 1.0, 0.0: 2.0})
    if "forfeit_by" not in frame.columns:
        frame["forfeit_by"] = np.nan
    else:
        frame["forfeit_by"] = pd.to_numeric(frame["forfeit_by"], errors="coerce")
    if "plies" not in frame.columns:
        frame["plies"] = np.nan
    else:
        frame["plies"] = pd.to_numeric(frame["plies"], errors="coerce")
    for col in STRING_COLUMNS:
        if col not in frame.columns:
            frame[col] = ""
        else:
            frame[col] = frame[col].where(frame[col].notna(), "").astype(str)
    return frame
