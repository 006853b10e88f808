"""The one definition of the games table: every column, its SQL type, its pandas dtype, its meaning.

The store's SQL, the DataFrame loaders, `GameRecord.to_row`, exports, `arena play --json` and
docs/DESIGN.md's table all derive from `GAME_COLUMNS`; a new column is one `Column` here plus what
produces its value: a field or property of `GameRecord` (arena/referee.py) for a column a game
knows (`tests/test_schema_consumers.py` names one missing), and a DEFAULT if it is NOT NULL (old
stores get it by ALTER TABLE; `tests/test_schema_docs.py` checks).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Column:
    name: str
    sql: str        # SQLite type and constraints for the store's CREATE TABLE
    dtype: str      # pandas dtype of the loaded DataFrame ("float64" for nullable numbers)
    doc: str        # one line for docs/DESIGN.md
    in_frame: bool = True   # part of the DataFrame contract (False: stored and exported only)
    json: bool = False      # its text is JSON (a list, a time control): a value in JSON exports


GAME_COLUMNS: tuple[Column, ...] = (
    Column("game_id", "TEXT PRIMARY KEY", "string",
           "deterministic id from the schedule (any unique string for `arena play`)"),
    Column("seq", "INTEGER NOT NULL UNIQUE", "int64", "order in which games finished (1-based)"),
    Column("variant", "TEXT NOT NULL", "string", "canonical variant spec"),
    Column("first", "TEXT NOT NULL", "string", "display name of the bot in seat 1 (moved first)"),
    Column("second", "TEXT NOT NULL", "string", "display name of the bot in seat 2"),
    Column("result", "REAL", "float64", "score of `first`: 1, 0.5 or 0; NaN for a void game"),
    Column("winner", "INTEGER", "float64", "the winning seat, 1 or 2; NaN for a draw"),
    Column("reason", "TEXT NOT NULL DEFAULT ''", "string",
           "how it ended: a rule ending, a forfeit or `void` (arena/reasons.py)"),
    Column("forfeit_by", "INTEGER", "float64", "seat (1/2) that forfeited, NaN if none"),
    Column("plies", "INTEGER NOT NULL DEFAULT 0", "int64", "number of moves played"),
    Column("moves", "TEXT NOT NULL DEFAULT ''", "string", "space-separated canonical move tokens"),
    Column("opening", "TEXT NOT NULL DEFAULT ''", "string",
           "opening moves (space-separated tokens, may be empty)"),
    Column("pair_id", "TEXT NOT NULL DEFAULT ''", "string",
           "shared by the two games with the same start and swapped seats"),
    Column("move_ms", "TEXT NOT NULL DEFAULT '[]'", "string",
           "JSON list of wall-clock ms per ply, in ply order (opening plies 0)", json=True),
    Column("move_cpu_ms", "TEXT NOT NULL DEFAULT '[]'", "string", "JSON list of CPU ms per ply",
           json=True),
    Column("detail", "TEXT NOT NULL DEFAULT ''", "string",
           "forfeit detail (offending text, exit code/signal), truncated; empty otherwise"),
    Column("started_at", "TEXT NOT NULL DEFAULT ''", "string", "ISO-8601 UTC"),
    Column("finished_at", "TEXT NOT NULL DEFAULT ''", "string", "ISO-8601 UTC"),
    Column("first_hash", "TEXT NOT NULL DEFAULT ''", "string", "program hash of `first`"),
    Column("second_hash", "TEXT NOT NULL DEFAULT ''", "string", "program hash of `second`"),
    Column("first_version", "TEXT NOT NULL DEFAULT ''", "string", "version from `first`'s handshake"),
    Column("second_version", "TEXT NOT NULL DEFAULT ''", "string",
           "version from `second`'s handshake"),
    Column("sandboxed", "INTEGER", "float64",
           "1 if both bots ran in the bubblewrap sandbox, 0 if not, NaN if unknown (older stores)"),
    Column("first_tc", "TEXT NOT NULL DEFAULT ''", "string",
           "JSON time control `first` played under (`move_ms`, `base_ms`, `increment_ms`, "
           "`startup_ms`, `grace_ms`); empty in older stores", json=True),
    Column("second_tc", "TEXT NOT NULL DEFAULT ''", "string",
           "JSON time control of `second`: differs from `first_tc` under time odds", json=True),
    Column("seed", "INTEGER", "float64",
           "the game's seed sent to both bots (`game ... seed=N`): `game_seed(seed, game_id)` of "
           "the tournament's seed; NaN when none was sent (`arena play`, leagues, older stores)"),
    Column("round", "INTEGER", "float64", "schedule round (tournaments only)", in_frame=False),
    Column("arena_version", "TEXT NOT NULL DEFAULT ''", "string", "arena version that played it",
           in_frame=False),
    Column("worker", "TEXT NOT NULL DEFAULT ''", "string",
           "the Dask worker that played it (`--cluster`); empty when played locally",
           in_frame=False),
    Column("infos", "TEXT NOT NULL DEFAULT '[]'", "string",
           "JSON list per ply of the last `info` line the mover sent with it (its first 200 "
           "characters, e.g. depth and score; empty if none); `[]` in older stores",
           in_frame=False, json=True),
)

COLUMNS_BY_NAME: dict[str, Column] = {c.name: c for c in GAME_COLUMNS}
# The columns whose text is JSON, written as JSON values (not strings) by JSON exports.
JSON_COLUMNS: frozenset[str] = frozenset(c.name for c in GAME_COLUMNS if c.json)
# The DataFrame contract, in order.
FRAME_COLUMNS: tuple[str, ...] = tuple(c.name for c in GAME_COLUMNS if c.in_frame)
# Every stored field of a game (exports write all of them).
STORED_COLUMNS: tuple[str, ...] = tuple(c.name for c in GAME_COLUMNS)
# Stored columns beyond the DataFrame contract that the readers feeding the ratings load too:
# the order-dependent ratings read a tournament's games in schedule order (round, then game_id),
# not in the order they finished (arena.ratings.table.in_rating_order).
RATING_ORDER_COLUMNS: tuple[str, ...] = ("round",)


def create_table_sql(table: str = "games") -> str:
    body = ",\n    ".join(f"{c.name} {c.sql}" for c in GAME_COLUMNS)
    return f"CREATE TABLE IF NOT EXISTS {table} (\n    {body}\n);"


def markdown_table() -> str:
    """docs/DESIGN.md's games-table section is this text (a test pins it)."""
    lines = ["| column | type | meaning |", "|---|---|---|"]
    lines += [f"| `{c.name}` | {c.dtype} | {c.doc} |" for c in GAME_COLUMNS if c.in_frame]
    return "\n".join(lines)


def opening_plies(opening: Any) -> int:
    """How many of a game's first moves the arena set (the games table's `opening` text; a
    missing one, NaN in a games file, sets none)."""
    return len(opening.split()) if isinstance(opening, str) else 0


def seat_times(raw: Any, seat: int, opening: Any = "") -> list[float]:
    """The times of one seat's own moves in a game (`move_ms` or `move_cpu_ms`): its plies
    after the `opening` (the arena's moves, recorded as 0 ms, are nobody's), gaps left out."""
    skip = opening_plies(opening)
    return [t for ply, t in enumerate(ply_times(raw))
            if ply >= skip and ply % 2 == seat - 1 and t is not None]


def ply_times(raw: Any) -> list[float | None]:
    """The per-ply numbers of a `move_ms` or `move_cpu_ms` value (its JSON text, or the list),
    position for position: a gap or a bad entry is None, so that plies 1, 3, ... stay seat 1's
    and 2, 4, ... seat 2's. Anything that is not a JSON list gives no plies."""
    return [float(v) if isinstance(v, int | float) and not isinstance(v, bool)
            and math.isfinite(v) else None for v in json_list(raw)]


def json_list(raw: Any) -> list:
    """A stored JSON list column (`move_ms`, `infos`, ...): its text or the list itself (`arena
    play --json`, a JSONL file); [] for anything else (empty, not JSON, not a list)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else []
        except ValueError:
            return []
    return list(raw) if isinstance(raw, list | tuple) else []
