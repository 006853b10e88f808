"""Read an SQLite database without writing anything next to it (read-only folders, archives, live runs).

SQLite's plain read-only open (`mode=ro`) of a WAL database creates `-wal` and `-shm` files beside
it, leaves them behind, and fails with "unable to open database file" in a folder it cannot write.
So the way of opening depends on the files found beside the database:

- both `-wal` and `-shm` exist (a writer is running, or one crashed): `mode=ro` has nothing to
  create, and it reads the games committed to the WAL;
- neither exists (a finished run, a copied or read-only folder): `immutable=1`, which takes no
  locks and creates nothing; because a writer could start meanwhile, the file is compared before
  and after and the read is repeated if it changed;
- anything else (a lone `-wal` or `-shm`, a rollback `-journal`), or `mode=ro` failing for want of
  write access to the `-shm`: the files are copied to a private temporary folder and read there,
  so the committed content of a WAL is never skipped.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

READ_ONLY = "ro"
IMMUTABLE = "immutable"
SNAPSHOT = "snapshot"
SIDE_FILES = ("-wal", "-shm", "-journal")
# SQLite primary result codes meaning "cannot open / cannot write the files a reader needs".
_SQLITE_READONLY, _SQLITE_CANTOPEN = 8, 14


def side_file(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def open_mode(path: Path) -> str:
    """How to open `path` for reading without creating any file beside it."""
    present = {suffix for suffix in SIDE_FILES if side_file(path, suffix).exists()}
    if not present:
        return IMMUTABLE
    if present == {"-wal", "-shm"}:
        # `mode=ro` writes the -shm: where it cannot (a folder of another user), a private copy
        return READ_ONLY if os.access(side_file(path, "-shm"), os.W_OK) else SNAPSHOT
    return SNAPSHOT


def file_state(path: Path) -> tuple:
    """What identifies the database's content on disk: its and its side files' stat fields."""
    state = []
    for candidate in (path, *(side_file(path, s) for s in SIDE_FILES)):
        try:
            st = candidate.stat()
        except FileNotFoundError:
            state.append(None)
        else:
            state.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(state)


class Reader:
    """One read-only connection to a database, opened the way `open_mode` chose."""

    def __init__(self, path: Path, mode: str | None = None) -> None:
        self.path = Path(path)
        self.mode = mode or open_mode(self.path)
        self.before = file_state(self.path)
        self._tmp: tempfile.TemporaryDirectory | None = None
        if self.mode == SNAPSHOT:
            self.conn = self._open_snapshot()
        else:
            query = "mode=ro&immutable=1" if self.mode == IMMUTABLE else "mode=ro"
            uri = f"{self.path.absolute().as_uri()}?{query}"
            self.conn = sqlite3.connect(uri, uri=True, timeout=10)

    def _open_snapshot(self) -> sqlite3.Connection:
        self._tmp = tempfile.TemporaryDirectory(prefix="arena-read-")
        copy = Path(self._tmp.name) / self.path.name
        try:
            shutil.copyfile(self.path, copy)
            for suffix in ("-wal", "-journal"):  # a stale -shm is rebuilt from the WAL
                if side_file(self.path, suffix).exists():
                    shutil.copyfile(side_file(self.path, suffix), side_file(copy, suffix))
            # A private copy: SQLite may recover a WAL or roll back a journal there.
            return sqlite3.connect(copy, timeout=10)
        except BaseException:
            self._tmp.cleanup()
            raise

    def changed(self) -> bool:
        """True if a writer may have changed the file under an immutable read."""
        return self.mode == IMMUTABLE and file_state(self.path) != self.before

    def close(self) -> None:
        try:
            self.conn.close()
        finally:
            if self._tmp is not None:
                self._tmp.cleanup()
                self._tmp = None


def needs_write_access(error: sqlite3.Error) -> bool:
    """An error of `mode=ro` that a private copy avoids (an unwritable `-shm`, a hot journal)."""
    code = getattr(error, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (_SQLITE_READONLY, _SQLITE_CANTOPEN)


def read(path: Path, work: Callable[[sqlite3.Connection], T], attempts: int = 3) -> T:
    """`work(conn)` on a read-only connection to `path`; creates and changes no file near it.

    An immutable read that raced with a writer is repeated (the writer's `-wal` then exists, so
    the next attempt reads through it). Raises sqlite3.Error and OSError as they come.
    """
    mode: str | None = None
    for _ in range(attempts):
        reader = Reader(path, mode)
        try:
            result = work(reader.conn)
        except sqlite3.Error as error:
            if reader.mode == READ_ONLY and needs_write_access(error):
                mode = SNAPSHOT
                continue
            if reader.changed():
                mode = None
                continue
            raise
        finally:
            reader.close()
        if not reader.changed():
            return result
        mode = None
    # Still changing after several reads: read a private copy, which cannot change under us.
    reader = Reader(path, SNAPSHOT)
    try:
        return work(reader.conn)
    finally:
        reader.close()

