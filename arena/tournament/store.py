"""The durable store: one SQLite file per results directory, written by the coordinator only.

`<results>/games.db` (WAL, synchronous=FULL) holds the tournament settings, the bots and one row
per finished game, each committed in its own transaction, so a crash never loses a finished game.
Bot stderr logs live in `<results>/logs/`.

Readers: `load_games(results_dir)` (a pandas DataFrame with the games-table columns of
docs/DESIGN.md, ordered by `seq`; void games are included with `result` NaN, and consumers that
rate bots must drop them) and `read_settings(results_dir)`.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from arena import __version__

DB_NAME = "games.db"
LOG_DIR = "logs"
LOCK_NAME = ".arena-run.lock"
SCHEMA_VERSION = 1

# The games table of docs/DESIGN.md, in order.
GAME_COLUMNS: tuple[str, ...] = (
    "game_id", "seq", "variant", "first", "second", "result", "winner", "reason", "forfeit_by",
    "plies", "moves", "opening", "pair_id", "move_ms", "move_cpu_ms", "detail", "started_at",
    "finished_at", "first_hash", "second_hash", "first_version", "second_version",
)
# Stored as well, but not part of the DataFrame contract.
EXTRA_COLUMNS: tuple[str, ...] = ("round", "arena_version")
EXPORT_COLUMNS: tuple[str, ...] = GAME_COLUMNS + EXTRA_COLUMNS  # every stored field of a game

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY,
    ref TEXT NOT NULL DEFAULT '',
    command TEXT NOT NULL DEFAULT '[]',
    args TEXT NOT NULL DEFAULT '[]',
    cwd TEXT NOT NULL DEFAULT '',
    program_hash TEXT NOT NULL DEFAULT '',
    version TEXT NOT NULL DEFAULT '',
    author TEXT NOT NULL DEFAULT '',
    language TEXT NOT NULL DEFAULT '',
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    seq INTEGER NOT NULL UNIQUE,
    game_id TEXT PRIMARY KEY,
    pair_id TEXT NOT NULL DEFAULT '',
    round INTEGER,
    variant TEXT NOT NULL,
    first TEXT NOT NULL,
    second TEXT NOT NULL,
    result REAL,
    winner INTEGER,
    reason TEXT NOT NULL DEFAULT '',
    forfeit_by INTEGER,
    plies INTEGER NOT NULL DEFAULT 0,
    moves TEXT NOT NULL DEFAULT '',
    opening TEXT NOT NULL DEFAULT '',
    move_ms TEXT NOT NULL DEFAULT '[]',
    move_cpu_ms TEXT NOT NULL DEFAULT '[]',
    detail TEXT NOT NULL DEFAULT '',
    started_at TEXT NOT NULL DEFAULT '',
    finished_at TEXT NOT NULL DEFAULT '',
    first_hash TEXT NOT NULL DEFAULT '',
    second_hash TEXT NOT NULL DEFAULT '',
    first_version TEXT NOT NULL DEFAULT '',
    second_version TEXT NOT NULL DEFAULT '',
    arena_version TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS games_by_pair ON games(pair_id);
"""


_LEFT_AS_IS = ("; it was left untouched: use another results directory, or --fresh to move it "
               "to a backup folder and start over")


class StoreError(RuntimeError):
    """A results directory that cannot be used (locked, newer schema, inconsistent settings)."""


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def db_path(results_dir: str | Path) -> Path:
    path = Path(results_dir)
    return path if path.suffix == ".db" else path / DB_NAME


def _db_error(path: Path, error: sqlite3.Error, hint: str = "") -> str:
    """One line for an SQLite error on a results database (corrupt, not a database, locked)."""
    text = str(error)
    if isinstance(error, sqlite3.DatabaseError) and (
        "not a database" in text or "malformed" in text or "encrypted" in text
    ):
        return f"{path} is damaged or not an arena results database ({text}){hint}"
    return f"{path}: cannot use the results database: {text}"


def _check_schema(conn: sqlite3.Connection, path: Path, hint: str = "") -> int | None:
    """The schema version of an arena database; StoreError if it is not one this arena reads.

    None for an empty database (a new store). Raises sqlite3.Error for a file that
    is not an SQLite database at all (callers turn that into a StoreError).
    """
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not tables:
        return None
    if "meta" not in tables or "games" not in tables:
        shown = ", ".join(sorted(tables)[:6])
        raise StoreError(f"{path} is an SQLite database but not an arena results database "
                         f"(tables: {shown}); it was left untouched")
    value = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    try:
        version = int(value[0]) if value else 0
    except (TypeError, ValueError):
        raise StoreError(f"{path}: unreadable schema version {value[0]!r} in its meta table; "
                         "it was left untouched") from None
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} was written by a newer arena (schema {version}, this arena reads "
            f"{SCHEMA_VERSION}){hint}"
        )
    return version


def _jsonish(value: Any) -> str:
    if value is None:
        return "[]"
    if isinstance(value, str):
        return value
    return json.dumps(list(value), separators=(",", ":"))


class Store:
    """The single writer of a results directory's database."""

    def __init__(self, results_dir: str | Path) -> None:
        self.dir = Path(results_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / LOG_DIR).mkdir(exist_ok=True)
        self.path = self.dir / DB_NAME
        if self.path.exists() and not self.path.is_file():
            raise StoreError(f"{self.path} is not a file: cannot store the games there")
        try:
            self.conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: cannot open the results database: {error}") from None
        try:
            self.conn.execute("PRAGMA busy_timeout=10000")
            # Check what the file holds before changing anything in it.
            _check_schema(self.conn, self.path, hint="; upgrade arena or use --fresh")
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
            with self.transaction():
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self.conn.execute(statement)
                self._set_meta("schema_version", str(SCHEMA_VERSION))
        except StoreError:
            self.conn.close()
            raise
        except sqlite3.Error as error:
            self.conn.close()
            raise StoreError(_db_error(self.path, error, _LEFT_AS_IS)) from None

    # -- plumbing -------------------------------------------------------------------------------
    def transaction(self):
        conn = self.conn

        class _Tx:
            def __enter__(self_inner):
                conn.execute("BEGIN IMMEDIATE")
                return conn

            def __exit__(self_inner, kind, value, tb):
                conn.execute("COMMIT" if kind is None else "ROLLBACK")
                return False

        return _Tx()

    def _set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES(?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (key, value),
        )

    def meta(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:  # pragma: no cover
            pass

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- settings -------------------------------------------------------------------------------
    def game_count(self, bot: str | None = None) -> int:
        if bot is None:
            return self.conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        return self.conn.execute(
            "SELECT COUNT(*) FROM games WHERE first=? OR second=?", (bot, bot)
        ).fetchone()[0]

    def stored_fingerprint(self) -> dict | None:
        text = self.meta("fingerprint")
        try:
            value = json.loads(text) if text else None
        except ValueError:
            value = None
        if value is not None and not isinstance(value, dict):
            value = None
        if value is None and text:
            raise StoreError(f"{self.path}: the stored settings are unreadable (meta "
                             "'fingerprint'); use --fresh to start over")
        return value

    def conflicts(self, fingerprint: Mapping[str, Any]) -> list[str]:
        """Why stored games would be inconsistent with a tournament of this fingerprint."""
        old = self.stored_fingerprint()
        if not old or self.game_count() == 0:
            return []
        problems: list[str] = []
        if old.get("time_control") != fingerprint.get("time_control"):
            problems.append(
                f"the time control changed (stored {_short(old.get('time_control'))}, "
                f"now {_short(fingerprint.get('time_control'))})"
            )
        if old.get("openings_digest") != fingerprint.get("openings_digest"):
            problems.append("the openings changed")
        elif old.get("seed") != fingerprint.get("seed"):
            problems.append(
                f"the seed changed ({old.get('seed')} -> {fingerprint.get('seed')}); "
                "it orders the openings"
            )
        old_bots = old.get("bots", {})
        for name, new in fingerprint.get("bots", {}).items():
            # The program (hash) and its arguments define a bot; the interpreter's or the
            # folder's path may differ between machines and does not count.
            before = old_bots.get(name)
            if before is None or self.game_count(name) == 0:
                continue
            if before.get("program_hash") != new.get("program_hash"):
                problems.append(
                    f"bot {name!r} changed: its program hash was {before.get('program_hash', '')[:12]}"
                    f", now {new.get('program_hash', '')[:12]}"
                )
            elif list(before.get("args", [])) != list(new.get("args", [])):
                problems.append(
                    f"bot {name!r} changed its arguments: was {_cmd(before)}, now {_cmd(new)}"
                )
        return problems

    def save_settings(self, settings: Mapping[str, Any], fingerprint: Mapping[str, Any]) -> None:
        old = self.stored_fingerprint() or {}
        merged = dict(fingerprint)
        merged["bots"] = {**old.get("bots", {}), **fingerprint.get("bots", {})}
        stamp = now_iso()
        with self.transaction():
            if self.meta("created_at") is None:
                self._set_meta("created_at", stamp)
            self._set_meta("updated_at", stamp)
            self._set_meta("arena_version", __version__)
            self._set_meta("settings", json.dumps(settings, sort_keys=True))
            self._set_meta("fingerprint", json.dumps(merged, sort_keys=True))

    def touch(self) -> None:
        with self.transaction():
            self._set_meta("updated_at", now_iso())

    def upsert_bots(self, entries: Iterable[Any]) -> None:
        stamp = now_iso()
        with self.transaction():
            for entry in entries:
                spec = entry.spec
                self.conn.execute(
                    "INSERT INTO bots(name, ref, command, args, cwd, program_hash, version, author,"
                    " language, first_seen, last_seen) VALUES(?,?,?,?,?,?,?,?,?,?,?) "
                    "ON CONFLICT(name) DO UPDATE SET ref=excluded.ref, command=excluded.command,"
                    " args=excluded.args, cwd=excluded.cwd, program_hash=excluded.program_hash,"
                    " version=CASE WHEN excluded.version != '' THEN excluded.version ELSE"
                    " bots.version END, author=excluded.author, language=excluded.language,"
                    " last_seen=excluded.last_seen",
                    (
                        entry.name,
                        entry.ref,
                        json.dumps(list(getattr(spec, "command", []))),
                        json.dumps(list(getattr(spec, "args", entry.args))),
                        str(getattr(spec, "cwd", "")),
                        getattr(spec, "program_hash", ""),
                        getattr(spec, "version", "") or "",
                        getattr(spec, "author", "") or "",
                        getattr(spec, "language", "") or "",
                        stamp,
                        stamp,
                    ),
                )

    def set_bot_version(self, name: str, version: str) -> None:
        if version:
            with self.transaction():
                self.conn.execute("UPDATE bots SET version=? WHERE name=?", (version, name))

    # -- games ----------------------------------------------------------------------------------
    def finished_ids(self) -> set[str]:
        """Ids of games that count as done (void games are played again on resume)."""
        rows = self.conn.execute("SELECT game_id FROM games WHERE result IS NOT NULL")
        return {r[0] for r in rows}

    def all_ids(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT game_id FROM games")}

    def results(self) -> list[tuple[str, str, float | None, str, str]]:
        """(first, second, result, reason, variant) of every stored game, in `seq` order."""
        return list(
            self.conn.execute(
                "SELECT first, second, result, reason, variant FROM games ORDER BY seq"
            )
        )

    def add_game(self, row: Mapping[str, Any], *, pair_id: str = "", round: int | None = None) -> int:
        """Store one finished game in its own transaction; returns its `seq`.

        A void game stored earlier under the same id is replaced.
        """
        values = {c: row.get(c) for c in GAME_COLUMNS if c != "seq"}
        values["pair_id"] = pair_id or row.get("pair_id") or ""
        values["round"] = round
        values["arena_version"] = row.get("arena_version") or __version__
        values["move_ms"] = _jsonish(values.get("move_ms"))
        values["move_cpu_ms"] = _jsonish(values.get("move_cpu_ms"))
        for key in ("winner", "forfeit_by"):
            if values.get(key) is not None and values[key] == values[key]:  # not NaN
                values[key] = int(values[key])
            else:
                values[key] = None
        if values.get("result") is not None and values["result"] != values["result"]:
            values["result"] = None
        for key in ("reason", "moves", "opening", "detail", "started_at", "finished_at",
                    "first_hash", "second_hash", "first_version", "second_version"):
            if values.get(key) is None:
                values[key] = ""
        if values.get("plies") is None:
            values["plies"] = 0
        with self.transaction():
            existing = self.conn.execute(
                "SELECT result FROM games WHERE game_id=?", (values["game_id"],)
            ).fetchone()
            if existing is not None:
                if existing[0] is not None:
                    raise StoreError(f"game {values['game_id']} is already stored")
                self.conn.execute("DELETE FROM games WHERE game_id=?", (values["game_id"],))
            seq = self.conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM games").fetchone()[0]
            values["seq"] = seq
            columns = list(values)
            self.conn.execute(
                f"INSERT INTO games({', '.join(columns)}) VALUES({', '.join('?' for _ in columns)})",
                [values[c] for c in columns],
            )
        return seq


def _short(tc: Any) -> str:
    if not isinstance(tc, dict):
        return str(tc)
    return ", ".join(f"{k}={v}" for k, v in tc.items() if v is not None)


def _cmd(fp: Mapping[str, Any]) -> str:
    return " ".join(fp.get("args", [])) or "(none)"


# -- readers ------------------------------------------------------------------------------------
def missing_results(results_dir: str | Path) -> str:
    """Why `results_dir` holds no results database (one line)."""
    directory, path = Path(results_dir), db_path(results_dir)
    if directory.is_file() and directory != path:
        return f"{results_dir} is a file, not a results directory"
    if not directory.exists():
        return f"no tournament results in {results_dir}: no such directory"
    return f"no tournament results in {results_dir} (missing {path.name})"


def _connect_read(results_dir: str | Path) -> sqlite3.Connection:
    """A connection to a results database that is known to be readable by this arena.

    Raises FileNotFoundError if there is none, StoreError if it is damaged, not an arena
    database or from a newer arena.
    """
    path = db_path(results_dir)
    if not path.is_file():
        raise FileNotFoundError(missing_results(results_dir))
    try:
        conn = sqlite3.connect(path, timeout=10)
    except sqlite3.Error as error:
        raise StoreError(_db_error(path, error)) from None
    try:
        if _check_schema(conn, path, hint="; upgrade arena to read it") is None:
            raise StoreError(f"{path} holds no games table (an empty database)")
    except StoreError:
        conn.close()
        raise
    except sqlite3.Error as error:
        conn.close()
        raise StoreError(_db_error(path, error)) from None
    return conn


def _query(results_dir: str | Path, sql: str) -> list[tuple]:
    conn = _connect_read(results_dir)
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.Error as error:
        raise StoreError(_db_error(db_path(results_dir), error)) from None
    finally:
        conn.close()


def load_games(results_dir: str | Path):
    """The games of a results directory as a pandas DataFrame, ordered by `seq`.

    Columns are exactly the games table of docs/DESIGN.md. Void games (neither bot could start)
    are included with `result` NaN: drop them (`df.dropna(subset=["result"])`) before rating.
    """
    import pandas as pd

    rows = _query(results_dir, f"SELECT {', '.join(GAME_COLUMNS)} FROM games ORDER BY seq")
    frame = pd.DataFrame.from_records(rows, columns=list(GAME_COLUMNS))
    for column in ("result", "winner", "forfeit_by"):
        frame[column] = frame[column].astype("float64")
    for column in ("seq", "plies"):
        frame[column] = frame[column].astype("int64")
    for column in GAME_COLUMNS:
        if column not in ("result", "winner", "forfeit_by", "seq", "plies"):
            frame[column] = frame[column].astype("object")
    return frame


def iter_game_rows(results_dir: str | Path) -> Iterable[dict]:
    """Stored games as dicts (every stored field: `EXPORT_COLUMNS`), in `seq` order, without pandas.

    The database is opened and checked at the call (errors are raised here, before any row);
    the rows are then read lazily.
    """
    path = db_path(results_dir)
    conn = _connect_read(results_dir)
    try:
        cursor = conn.execute(f"SELECT {', '.join(EXPORT_COLUMNS)} FROM games ORDER BY seq")
    except sqlite3.Error as error:
        conn.close()
        raise StoreError(_db_error(path, error)) from None

    def rows() -> Iterable[dict]:
        try:
            for row in cursor:
                yield dict(zip(EXPORT_COLUMNS, row, strict=True))
        except sqlite3.Error as error:
            raise StoreError(_db_error(path, error)) from None
        finally:
            conn.close()

    return rows()


def read_settings(results_dir: str | Path) -> dict:
    """Tournament name, file, settings (incl. time control, variants), bots, timestamps, version."""
    conn = _connect_read(results_dir)
    try:
        return _read_settings(conn)
    except sqlite3.Error as error:
        raise StoreError(_db_error(db_path(results_dir), error)) from None
    finally:
        conn.close()


def _read_settings(conn: sqlite3.Connection) -> dict:
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    bots = []
    for row in conn.execute(
        "SELECT name, ref, command, args, cwd, program_hash, version, author, language "
        "FROM bots ORDER BY rowid"
    ):
        name, ref, command, args, cwd, program_hash, version, author, language = row
        bots.append({
            "name": name, "ref": ref, "command": json.loads(command), "args": json.loads(args),
            "cwd": cwd, "program_hash": program_hash, "version": version, "author": author,
            "language": language,
        })
    counts = conn.execute(
        "SELECT COUNT(*), SUM(result IS NULL) FROM games"
    ).fetchone()
    settings = json.loads(meta.get("settings", "{}"))
    order = {b["name"]: i for i, b in enumerate(settings.get("bots", []))}
    bots.sort(key=lambda b: order.get(b["name"], len(order)))
    return {
        "name": settings.get("name", ""),
        "file": settings.get("file", ""),
        "settings": settings,
        "time_control": settings.get("time_control", {}),
        "variants": settings.get("variants", []),
        "format": settings.get("format", ""),
        "bots": bots,
        "games": int(counts[0] or 0),
        "void_games": int(counts[1] or 0),
        "created_at": meta.get("created_at", ""),
        "updated_at": meta.get("updated_at", ""),
        "arena_version": meta.get("arena_version", ""),
        "schema_version": int(meta.get("schema_version", 0)),
    }


# -- run lock and fresh starts ------------------------------------------------------------------
class RunLock:
    """An exclusive lock on a results directory, so that two runs never write it at once."""

    def __init__(self, results_dir: str | Path) -> None:
        self.path = Path(results_dir) / LOCK_NAME
        self.handle = None

    def acquire(self) -> None:
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+")  # noqa: SIM115
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip()
            handle.close()
            raise StoreError(
                f"{self.path.parent} is in use by another `arena run`"
                + (f" (pid {holder})" if holder else "")
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self.handle = handle

    def release(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def move_aside(results_dir: str | Path) -> Path | None:
    """Move the database and logs into `backup-<UTC time>/` (never deletes). Returns that folder."""
    directory = Path(results_dir)
    path = directory / DB_NAME
    if not path.exists():
        return None
    if path.is_file():
        try:
            conn = sqlite3.connect(path)
            try:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                conn.close()
        except sqlite3.Error:
            pass  # a damaged database is moved aside as it is, with its -wal file
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    backup = directory / f"backup-{stamp}"
    suffix = 1
    while backup.exists():
        suffix += 1
        backup = directory / f"backup-{stamp}-{suffix}"
    backup.mkdir()
    for name in (DB_NAME, DB_NAME + "-wal", DB_NAME + "-shm", LOG_DIR):
        source = directory / name
        if source.exists():
            shutil.move(str(source), str(backup / name))
    return backup
