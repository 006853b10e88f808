"""The durable store: one SQLite file per results directory, written by the coordinator only.

`<results>/games.db` (WAL, synchronous=FULL) holds the tournament settings, the bots and one row
per finished game, each committed in its own transaction, so a crash never loses a finished game.
Bot stderr logs live in `<results>/logs/`.

The games table is `arena.schema.create_table_sql()`; a column added there is added to older
databases when a run opens them (ALTER TABLE ... ADD COLUMN, with its default), and reads as its
default from databases not yet upgraded.

Readers: `load_games(results_dir)` (a pandas DataFrame with the games-table columns of
docs/DESIGN.md, ordered by `seq`; void games are included with `result` NaN, and consumers that
rate bots must drop them), `iter_game_rows`, `read_settings(results_dir)` and `read_bots`. They
never write: they work on read-only folders and create no file in the results directory
(arena/tournament/sqlite_read.py).
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from arena import __version__
from arena.clock import utc_now_iso
from arena.schema import (
    COLUMNS_BY_NAME,
    FRAME_COLUMNS,
    GAME_COLUMNS,
    STORED_COLUMNS,
    Column,
    create_table_sql,
)
from arena.tournament import sqlite_read

_T = TypeVar("_T")

DB_NAME = "games.db"
LOG_DIR = "logs"
LOCK_NAME = ".arena-run.lock"
SCHEMA_VERSION = 1

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
""" + create_table_sql("games") + """
CREATE INDEX IF NOT EXISTS games_by_pair ON games(pair_id);
"""


_LEFT_AS_IS = ("; it was left untouched: use another results directory, or --fresh to move it "
               "to a backup folder and start over")


# How the last run of a store ended (`run_state`); none in stores older than it.
RUN_RUNNING, RUN_FINISHED, RUN_STOPPED = "running", "finished", "stopped"


class StoreError(RuntimeError):
    """A results directory that cannot be used (locked, newer schema, inconsistent settings).
    `resumable`: the games are kept and the same command resumes once the cause is gone (a
    full disk, a lock): the command that ran adds its own resume line (`arena run`'s
    `_resume_hint`, with its --output, --cluster, --concurrency)."""

    def __init__(self, message: str, resumable: bool = False) -> None:
        super().__init__(message)
        self.resumable = resumable


def db_path(results_dir: str | Path) -> Path:
    path = Path(results_dir)
    return path if path.suffix == ".db" else path / DB_NAME


def db_error(path: Path, error: sqlite3.Error, hint: str = "") -> str:
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


_DEFAULT = re.compile(r"\bDEFAULT\s+('(?:[^']|'')*'|-?[0-9.]+|NULL)", re.IGNORECASE)


def _default_sql(column: Column) -> str:
    """The SQL literal a column holds when nothing is given (NULL without a DEFAULT clause)."""
    match = _DEFAULT.search(column.sql)
    return match.group(1) if match else "NULL"


def _default_value(column: Column) -> Any:
    literal = _default_sql(column)
    if literal.upper() == "NULL":
        return None
    if literal.startswith("'"):
        return literal[1:-1].replace("''", "'")
    return float(literal) if "." in literal else int(literal)


def _table_columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and value != value


def _stored_value(column: Column, value: Any) -> Any:
    """`value` as the games table holds it in `column` (None/NaN -> the column's default)."""
    if value is None or _is_nan(value):
        return _default_value(column)
    kind = column.sql.split()[0].upper()
    if kind == "INTEGER":
        return int(value)
    if kind == "REAL":
        return float(value)
    if not isinstance(value, str) and isinstance(value, list | tuple):
        return json.dumps(list(value), separators=(",", ":"))  # move_ms and the like
    return value


def _disk_full(error: BaseException) -> bool:
    if isinstance(error, sqlite3.Error):
        code = getattr(error, "sqlite_errorcode", None)
        return (code is not None and code & 0xFF == sqlite3.SQLITE_FULL) or \
            "disk is full" in str(error)
    return isinstance(error, OSError) and error.errno == errno.ENOSPC


class Store:
    """The single writer of a results directory's database."""

    def __init__(self, results_dir: str | Path) -> None:
        self.dir = Path(results_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
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
                self._add_missing_columns()
                self._set_meta("schema_version", str(SCHEMA_VERSION))
            # only now: a folder whose database is refused is left exactly as it was
            try:
                (self.dir / LOG_DIR).mkdir(exist_ok=True)
            except OSError as error:
                raise StoreError(f"{self.dir / LOG_DIR}: cannot make the bots' log folder: "
                                 f"{error.strerror or error}") from None
        except StoreError:
            self.conn.close()
            raise
        except sqlite3.Error as error:
            self.conn.close()
            raise StoreError(db_error(self.path, error, _LEFT_AS_IS)) from None

    # -- plumbing -------------------------------------------------------------------------------
    def transaction(self):
        conn = self.conn

        class _Tx:
            def __enter__(self_inner):
                conn.execute("BEGIN IMMEDIATE")
                return conn

            def __exit__(self_inner, kind, value, tb):
                try:
                    conn.execute("COMMIT" if kind is None else "ROLLBACK")
                except sqlite3.Error as error:
                    if conn.in_transaction:  # a failed COMMIT can leave it open
                        try:
                            conn.execute("ROLLBACK")
                        except sqlite3.Error:
                            pass
                    if value is None:  # the COMMIT failed
                        if _disk_full(error):
                            raise StoreError(self._disk_full_message(), resumable=True) from None
                        raise
                    # A failed ROLLBACK after an error (SQLite may have rolled back already):
                    # the error that caused it is the one to report.
                if value is not None and _disk_full(value):
                    raise StoreError(self._disk_full_message(), resumable=True) from None
                return False

        return _Tx()

    def _disk_full_message(self) -> str:
        """One line: nothing stored is lost, and what to do before resuming."""
        try:
            kept = self.conn.execute(
                "SELECT COUNT(*) FROM games WHERE result IS NOT NULL").fetchone()[0]
        except sqlite3.Error:  # a new database whose tables could not be created
            kept = 0
        return (f"the disk holding {self.path} is full: the {kept} finished games stored so far "
                f"are kept, nothing is lost; free some space, then run the same command again "
                f"to resume")

    def _add_missing_columns(self) -> None:
        """Give a database written by an older arena the games-table columns it lacks."""
        present = _table_columns(self.conn, "games")
        for column in GAME_COLUMNS:
            if column.name not in present:
                self.conn.execute(f"ALTER TABLE games ADD COLUMN {column.name} {column.sql}")

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

    def _stored_setting(self, key: str) -> Any:
        try:
            settings = json.loads(self.meta("settings") or "{}")
        except ValueError:
            return None
        return settings.get(key) if isinstance(settings, dict) else None

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
        old_by, new_by = old.get("variant_openings"), fingerprint.get("variant_openings")
        if isinstance(old_by, dict) and isinstance(new_by, dict):
            # per variant: one added or dropped leaves the others' games as they were
            common = old_by.keys() & new_by.keys()
            changed = sorted(v for v in common if old_by[v] != new_by[v])
            openings_changed = f"the openings of {', '.join(changed)} changed" if changed else ""
            seeded = any(new_by[v] for v in common)  # the seed orders only openings
        else:  # a store from before per-variant digests
            openings_changed = "the openings changed" \
                if old.get("openings_digest") != fingerprint.get("openings_digest") else ""
            seeded = True
        if openings_changed:
            problems.append(openings_changed)
        elif seeded and old.get("seed") != fingerprint.get("seed"):
            problems.append(
                f"the seed changed ({old.get('seed')} -> {fingerprint.get('seed')}); "
                "it orders the openings"
            )
        # a store from before the fingerprint kept it has it in its settings (the diff review:
        # every older store let the switch through, and then kept the new value)
        before = old.get("adjudicate") or self._stored_setting("adjudicate")
        if before and "adjudicate" in fingerprint and before != fingerprint["adjudicate"]:
            problems.append(
                f"adjudication changed (adjudicate = {before!r} for the stored games, "
                f"now {fingerprint['adjudicate']!r}): games would end in two ways"
            )
        old_bots = old.get("bots", {})
        for name, new in fingerprint.get("bots", {}).items():
            # The program (hash) and its arguments define a bot; the interpreter's or the
            # folder's path may differ between machines and does not count.
            before = old_bots.get(name)
            if before is None or self.game_count(name) == 0:
                continue
            if before.get("program_hash") != new.get("program_hash") and not _only_files_added(before, new):
                problems.append(
                    f"bot {name!r} changed: its program hash was {before.get('program_hash', '')[:12]}"
                    f", now {new.get('program_hash', '')[:12]} (the hash covers its files and the "
                    f"arena modules it imports: an update of arena changes it too)"
                )
            elif list(before.get("args", [])) != list(new.get("args", [])):
                problems.append(
                    f"bot {name!r} changed its arguments: was {_cmd(before)}, now {_cmd(new)}"
                )
            elif ((before.get("time_control") or new.get("time_control")) and (
                    (before.get("time_control") or old.get("time_control"))
                    != (new.get("time_control") or fingerprint.get("time_control")))):
                # what the bot played under: its own control, else [time] (a change of [time]
                # itself is the one problem above)
                problems.append(  # time odds: absent for a bot under the tournament's [time]
                    f"bot {name!r} changed its own time control (stored "
                    f"{_short(before.get('time_control') or '[time]')}, now "
                    f"{_short(new.get('time_control') or '[time]')})"
                )
        return problems

    def save_settings(self, settings: Mapping[str, Any], fingerprint: Mapping[str, Any]) -> None:
        old = self.stored_fingerprint() or {}
        merged = dict(fingerprint)
        merged["bots"] = {**old.get("bots", {}), **fingerprint.get("bots", {})}
        if isinstance(old.get("variant_openings"), dict) and "variant_openings" in fingerprint:
            # a variant left out of the file keeps its digest, should it come back
            merged["variant_openings"] = {**old["variant_openings"], **fingerprint["variant_openings"]}
        stamp = utc_now_iso()
        with self.transaction():
            if self.meta("created_at") is None:
                self._set_meta("created_at", stamp)
            self._set_meta("updated_at", stamp)
            self._set_meta("arena_version", __version__)
            self._set_meta("settings", json.dumps(settings, sort_keys=True))
            self._set_meta("fingerprint", json.dumps(merged, sort_keys=True))

    def begin_run(self, scheduled: int, run: Mapping[str, Any] | None = None) -> None:
        """A run starts: how many games its schedule holds, and that it is under way (a site
        says how much of a stopped or running tournament was played); `run`, its record
        (`arena.provenance.run_record`: which arena, on what machine), is appended to `runs`,
        so that a folder played in several runs, or on several machines, says so."""
        with self.transaction():
            self._set_meta("scheduled_games", str(int(scheduled)))
            self._set_meta("run_state", RUN_RUNNING)
            if run is not None:
                runs = _json_list(self.meta("runs"))
                self._set_meta("runs", json.dumps([*runs, dict(run)][-MAX_RUNS:],
                                                  sort_keys=True))

    def end_run(self, state: str) -> None:
        """`RUN_FINISHED` (all it could play) or `RUN_STOPPED` (Ctrl-C, an error)."""
        try:
            with self.transaction():
                self._set_meta("run_state", state)
        except StoreError:  # as `touch`: it must not hide the error that stopped the run
            pass
        except sqlite3.OperationalError as error:  # nor another program's lock (a viewer)
            if not is_locked(error):
                raise

    def touch(self) -> None:
        try:
            with self.transaction():
                self._set_meta("updated_at", utc_now_iso())
        except StoreError:
            # Only a timestamp: on a full disk it must not hide the error that stopped the run.
            pass
        except sqlite3.OperationalError as error:  # nor another program's lock
            if not is_locked(error):
                raise

    def upsert_bots(self, entries: Iterable[Any]) -> None:
        stamp = utc_now_iso()
        with self.transaction():
            for entry in entries:
                spec = entry.spec
                self.conn.execute(
                    "INSERT INTO bots(name, ref, command, args, cwd, program_hash, version, author,"
                    " language, first_seen, last_seen) VALUES(?,?,?,?,?,?,?,?,?,?,?) "
                    "ON CONFLICT(name) DO UPDATE SET ref=excluded.ref, command=excluded.command,"
                    " args=excluded.args, cwd=excluded.cwd, program_hash=excluded.program_hash,"
                    " version=CASE WHEN excluded.version != '' THEN excluded.version ELSE"
                    " bots.version END, author=CASE WHEN excluded.author != '' THEN"
                    " excluded.author ELSE bots.author END, language=CASE WHEN"
                    " excluded.language != '' THEN excluded.language ELSE bots.language END,"
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

    def set_bot_author(self, name: str, author: str) -> None:
        """The author a bot gave in its handshake; its `bot.toml`'s `author`, if any, wins."""
        if author:
            with self.transaction():
                self.conn.execute("UPDATE bots SET author=? WHERE name=? AND author=''",
                                  (author, name))

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
        given = {**row, "pair_id": pair_id or row.get("pair_id") or "", "round": round,
                 "arena_version": row.get("arena_version") or __version__}
        values = {c.name: _stored_value(c, given.get(c.name)) for c in GAME_COLUMNS
                  if c.name != "seq"}
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


def is_locked(error: sqlite3.Error) -> bool:
    """Whether `error` is another connection's lock outlasting the busy timeout."""
    text = str(error).lower()
    return isinstance(error, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def _only_files_added(before: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Does the bot's folder still hold every file it held at the stored hash, unchanged (so
    that it only gained files, e.g. a log it wrote while playing)? Never true for a bot whose
    stored settings do not list its files (older stores, one-file bots)."""
    files, folder = before.get("files"), new.get("folder")
    if not files or not folder:
        return False
    from arena.botspec import hash_folder_files

    try:
        return hash_folder_files(Path(folder), files) == before.get("program_hash")
    except OSError:
        return False


def _short(tc: Any) -> str:
    """A stored or new time control in one order (sorted keys), so the two read side by side."""
    if not isinstance(tc, dict):
        return str(tc)
    return ", ".join(f"{k}={v}" for k, v in sorted(tc.items()) if v is not None)


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


def _readable_db(results_dir: str | Path) -> Path:
    """The results database of `results_dir`, checked to exist and to be readable by this user.

    Raises FileNotFoundError if there is none, StoreError (one line) if it cannot be read.
    """
    path = db_path(results_dir)
    denied = StoreError(f"cannot read {path}: permission denied (this user may not read the "
                        "file or its folder)")
    # Never open() the database to test it: closing any descriptor of it drops every POSIX lock
    # this process holds on it (SQLite's "How To Corrupt" 2.2), so that the next writer of another
    # process took itself for the last one and deleted the WAL under a live connection (a league
    # publishing its site in-process, while `league submit` ran: "disk I/O error").
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(missing_results(results_dir)) from None
    except PermissionError:
        raise denied from None
    except OSError as error:
        raise StoreError(f"cannot read {path}: {error.strerror or error}") from None
    if stat.S_ISDIR(info.st_mode):
        raise FileNotFoundError(missing_results(results_dir))
    if not os.access(path, os.R_OK):
        raise denied
    return path


def _check_readable(conn: sqlite3.Connection, path: Path) -> None:
    if _check_schema(conn, path, hint="; upgrade arena to read it") is None:
        raise StoreError(f"{path} holds no games table (an empty database)")


def _read(results_dir: str | Path, work: Callable[[sqlite3.Connection], _T]) -> _T:
    """`work(conn)` on a checked, read-only connection; nothing is written in `results_dir`.

    Raises FileNotFoundError if there are no results, StoreError (one line) if they cannot be
    read: unreadable, damaged, not an arena database, or from a newer arena.
    """
    path = _readable_db(results_dir)

    def checked(conn: sqlite3.Connection) -> _T:
        _check_readable(conn, path)
        return work(conn)

    try:
        return sqlite_read.read(path, checked)
    except sqlite3.Error as error:
        raise StoreError(db_error(path, error)) from None
    except json.JSONDecodeError as error:  # a settings or command value edited by hand
        raise StoreError(f"{path}: a stored value is not valid JSON ({error.msg}, at character "
                         f"{error.pos}): the database was edited or damaged") from None
    except OSError as error:  # e.g. an unreadable -wal file that had to be copied
        raise StoreError(f"cannot read {error.filename or path}: "
                         f"{error.strerror or error}") from None


def _select_games(conn: sqlite3.Connection, columns: Iterable[str]) -> sqlite3.Cursor:
    """The games, in `seq` order; a column an older database lacks reads as its default."""
    present = _table_columns(conn, "games")
    fields = [
        name if name in present else f"{_default_sql(COLUMNS_BY_NAME[name])} AS {name}"
        for name in columns
    ]
    return conn.execute(f"SELECT {', '.join(fields)} FROM games ORDER BY seq")


def load_games(results_dir: str | Path, extra: Sequence[str] = ()):
    """The games of a results directory as a pandas DataFrame, ordered by `seq`.

    Columns are exactly the games table of docs/DESIGN.md (`arena.schema.FRAME_COLUMNS`), with
    the dtypes of `arena.schema`, then the stored columns named in `extra` (e.g. `round`, which
    the ratings' order reads). Void games (neither bot could start) are included with `result`
    NaN: drop them (`df.dropna(subset=["result"])`) before rating. Reads without writing.
    """
    columns = [*FRAME_COLUMNS, *(c for c in extra if c not in FRAME_COLUMNS)]
    import pandas as pd

    def games(conn: sqlite3.Connection) -> list:
        odd = conn.execute("SELECT game_id, result FROM games WHERE result IS NOT NULL AND "
                           "result NOT IN (0, 0.5, 1) ORDER BY seq LIMIT 1").fetchone()
        if odd is not None:  # what the arena never writes: every rating would stop on it
            raise StoreError(f"{db_path(results_dir)}: game {odd[0]} has result {odd[1]!r}, "
                             "not 1, 0.5 or 0 (or NULL for a void game): the database was "
                             "edited or damaged")
        return _select_games(conn, columns).fetchall()

    rows = _read(results_dir, games)
    frame = pd.DataFrame.from_records(rows, columns=columns)
    return frame.astype({name: COLUMNS_BY_NAME[name].dtype for name in columns})


def iter_game_rows(results_dir: str | Path) -> Iterable[dict]:
    """Stored games as dicts (every stored field: `arena.schema.STORED_COLUMNS`), in `seq` order.

    Without pandas, and without writing anything. The database is opened and checked at the call
    (errors are raised here, before any row); the rows are then read lazily.
    """
    path = _readable_db(results_dir)
    reader = None
    try:
        reader = sqlite_read.Reader(path)
        try:
            _check_readable(reader.conn, path)
        except sqlite3.Error as error:
            if reader.mode != sqlite_read.READ_ONLY or not sqlite_read.needs_write_access(error):
                raise
            reader.close()
            reader = sqlite_read.Reader(path, sqlite_read.SNAPSHOT)
            _check_readable(reader.conn, path)
        cursor = _select_games(reader.conn, STORED_COLUMNS)
    except BaseException as error:
        if reader is not None:
            reader.close()
        if isinstance(error, sqlite3.Error):
            raise StoreError(db_error(path, error)) from None
        if isinstance(error, OSError):
            raise StoreError(f"cannot read {error.filename or path}: "
                             f"{error.strerror or error}") from None
        raise

    def rows() -> Iterable[dict]:
        try:
            for row in cursor:
                yield dict(zip(STORED_COLUMNS, row, strict=True))
            if reader.changed():
                raise StoreError(f"{path} changed while it was read (did a run start?); "
                                 "read it again")
        except sqlite3.Error as error:
            raise StoreError(db_error(path, error)) from None
        finally:
            reader.close()

    return rows()


# Run records kept in a store (`runs`): the latest, should a folder be resumed thousands of times.
MAX_RUNS = 1000


def _json_list(text: str | None) -> list:
    """A stored JSON list; [] for none, or for text that is not one (a hand-edited store)."""
    try:
        value = json.loads(text) if text else []
    except ValueError:
        return []
    return value if isinstance(value, list) else []


def read_settings(results_dir: str | Path) -> dict:
    """Tournament name, file, settings (incl. time control, variants), bots, timestamps, version."""
    return _read(results_dir, _read_settings)


BOT_COLUMNS: tuple[str, ...] = ("name", "author", "language", "version", "program_hash", "command")


def read_bots(results_dir: str | Path):
    """The bots of a results directory as a pandas DataFrame with `BOT_COLUMNS`, for standings and
    the site: who submitted each bot and in what language (from its `bot.toml` and handshake).

    `command` is the command line as one shell-quoted string; missing text is ''. Bots are in the
    tournament file's order. Reads without writing.
    """
    import shlex

    import pandas as pd

    bots = read_settings(results_dir)["bots"]
    records = [
        {**{key: str(bot.get(key) or "") for key in BOT_COLUMNS},
         "command": shlex.join([*bot.get("command", []), *bot.get("args", [])])}
        for bot in bots
    ]
    return pd.DataFrame.from_records(records, columns=list(BOT_COLUMNS)).astype("string")


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
        "scheduled_games": int(meta["scheduled_games"]) if meta.get("scheduled_games") else None,
        "run_state": meta.get("run_state", ""),
        "arena_version": meta.get("arena_version", ""),
        "schema_version": int(meta.get("schema_version", 0)),
        "runs": _json_list(meta.get("runs")),  # `arena.provenance.run_record`s, oldest first
    }


# -- run lock and fresh starts ------------------------------------------------------------------
LOCK_TRIES = 10


class RunLock:
    """An exclusive lock on a results directory, so that two runs never write it at once. The
    lock file holds the holder's pid and command, for the message the next one gets."""

    def __init__(self, results_dir: str | Path, command: str = "arena run") -> None:
        self.path = Path(results_dir) / LOCK_NAME
        self.command = command
        self.handle = None

    def acquire(self) -> None:
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+")
        try:
            # a few tries over a tenth of a second: `held` (league status) takes the lock shared
            # for a moment to look, which is no run (second review: starts refused beside a poller)
            for attempt in range(LOCK_TRIES):
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError:
                    if attempt == LOCK_TRIES - 1:
                        raise
                    time.sleep(0.01)
        except OSError:
            handle.seek(0)
            pid, _, command = handle.read().strip().partition(" ")
            handle.close()
            raise StoreError(
                f"{self.path.parent} is in use by another `{command or 'arena run'}`"
                + (f" (pid {pid})" if pid else "")
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()} {self.command}")
        handle.flush()
        self.handle = handle

    def release(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None

    @staticmethod
    def held(results_dir: str | Path) -> bool:
        """Whether a run holds the folder now: the lock itself, not a pid written down (a pid
        from a killed run's file may be another process's after a reboot)."""
        import fcntl

        try:
            handle = open(Path(results_dir) / LOCK_NAME)
        except OSError:
            return False
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        finally:
            handle.close()  # also drops the shared lock taken to look
        return False

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def foreign_files(results_dir: Path) -> str:
    """The first names (`a, b, ...`) in `results_dir` when it holds files but no results
    database (a folder of the user's, not a run's), else ''. Hidden files (`.gitkeep`,
    `.DS_Store`), bots' logs and backups a run made are no sign of a user's folder."""
    if not results_dir.is_dir() or (results_dir / DB_NAME).exists():
        return ""
    names = sorted(p.name for p in results_dir.iterdir()
                   if not p.name.startswith(".") and p.name != LOG_DIR
                   and not p.name.startswith("backup-"))
    return ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")


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
