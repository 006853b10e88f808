"""League reads create nothing beside games.db, so a league folder the user may not write can be
read (`arena league status` failed there with "attempt to write a readonly database", while
standings, export and publish worked: non-root review)."""

from __future__ import annotations

import gc
import sqlite3

from arena.league import registry
from arena.tournament import sqlite_read


def _league(tmp_path):
    folder = tmp_path / "club"
    registry.init_league(folder, {})
    conn = sqlite3.connect(folder / registry.DB_NAME)  # a WAL database, as a run leaves
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()  # closed, not left to the collector: see below
    return folder


def test_reading_a_league_leaves_no_file_beside_its_database(tmp_path):
    folder = _league(tmp_path)
    before = sorted(p.name for p in folder.iterdir())
    assert registry.is_league(folder)
    assert registry.entrants(folder) == [] and registry.game_counts(folder) == ({}, 0)
    registry.settings(folder)
    assert sorted(p.name for p in folder.iterdir()) == before  # no -wal, no -shm


def test_a_live_wal_whose_shm_cannot_be_written_is_read_from_a_private_copy(tmp_path,
                                                                            monkeypatch):
    folder = _league(tmp_path)
    path = folder / registry.DB_NAME
    # no connection of this process may still map the -shm this empties: SQLite touching a
    # truncated mapping (a connection closed later by the garbage collector) is a bus error,
    # which crashed an xdist worker
    gc.collect()
    for suffix in ("-wal", "-shm"):
        sqlite_read.side_file(path, suffix).write_bytes(b"")
    assert sqlite_read.open_mode(path) == sqlite_read.READ_ONLY
    monkeypatch.setattr(sqlite_read.os, "access", lambda *_: False)
    assert sqlite_read.open_mode(path) == sqlite_read.SNAPSHOT
    assert registry.entrants(folder) == []
