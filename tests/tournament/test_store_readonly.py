"""Reading results never writes: read-only folders, live runs, crashed runs, unreadable files.

SQLite's plain open of a WAL database creates `-wal`/`-shm` files (and fails where it cannot);
the readers must neither need nor leave them. As root every folder is writable, so the opener's
choice is tested directly, and one test runs the readers as an unprivileged user for real.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from test_tournament_store import FP, row
from tournament_helpers import PROJECT, run_cli

from arena.tournament import sqlite_read
from arena.tournament.export import export_games
from arena.tournament.sqlite_read import IMMUTABLE, READ_ONLY, SNAPSHOT, open_mode
from arena.tournament.store import (
    Store,
    StoreError,
    iter_game_rows,
    load_games,
    read_bots,
    read_settings,
)


def make_results(directory: Path, games: int = 3) -> Path:
    with Store(directory) as store:
        store.save_settings({"name": "ro", "file": "ro.toml"}, FP)
        for k in range(games):
            store.add_game(row(f"g{k}"), pair_id=f"p{k // 2}", round=0)
    return directory


def folder_state(directory: Path) -> dict:
    """Every entry with its stat identity, plus the folder's own mtime (changed by any create)."""
    state = {".": directory.stat().st_mtime_ns}
    for entry in sorted(directory.rglob("*")):
        st = entry.stat()
        state[str(entry.relative_to(directory))] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return state


def read_everything(directory: Path, out: Path) -> tuple[int, int, int, int]:
    frame = load_games(directory)
    settings = read_settings(directory)
    bots = read_bots(directory)
    rows = list(iter_game_rows(directory))
    exported = export_games(directory, "jsonl", out)
    assert len(rows) == exported == len(frame) == settings["games"]
    return len(frame), settings["games"], len(bots), exported


def test_readers_create_and_change_nothing_in_the_results_folder(tmp_path):
    results = make_results(tmp_path / "results")
    before = folder_state(results)
    assert read_everything(results, tmp_path / "out.jsonl")[0] == 3
    assert folder_state(results) == before  # not even a -wal created and removed again


def test_the_opener_needs_no_side_files_and_reads_committed_wal_content(tmp_path):
    db = make_results(tmp_path / "r") / "games.db"
    assert open_mode(db) == IMMUTABLE
    for present, mode in (({"-wal", "-shm"}, READ_ONLY), ({"-wal"}, SNAPSHOT),
                          ({"-shm"}, SNAPSHOT), ({"-journal"}, SNAPSHOT)):
        for suffix in present:
            sqlite_read.side_file(db, suffix).write_bytes(b"")
        assert open_mode(db) == mode, present
        for suffix in present:
            sqlite_read.side_file(db, suffix).unlink()


def test_a_live_run_is_read_through_its_wal(tmp_path):
    results = make_results(tmp_path / "r", games=1)
    with Store(results) as writer:  # a run in progress: games sit in the WAL, not the file
        writer.add_game(row("late"))
        names = sorted(p.name for p in results.iterdir())
        assert open_mode(results / "games.db") == READ_ONLY
        assert load_games(results).game_id.tolist() == ["g0", "late"]
        assert sorted(p.name for p in results.iterdir()) == names


def test_a_crashed_run_with_a_lone_wal_is_read_from_a_private_copy(tmp_path):
    live = make_results(tmp_path / "live", games=1)
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    with Store(live) as writer:
        writer.add_game(row("in-wal"))
        for name in ("games.db", "games.db-wal"):  # a copy that lost its -shm
            shutil.copyfile(live / name, crashed / name)
    db = crashed / "games.db"
    # Ignoring the WAL would lose the game committed there.
    immutable = sqlite_read.Reader(db, IMMUTABLE)
    try:
        assert immutable.conn.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 1
    finally:
        immutable.close()
    before = folder_state(crashed)
    assert load_games(crashed).game_id.tolist() == ["g0", "in-wal"]
    assert folder_state(crashed) == before


def test_an_immutable_read_that_raced_with_a_writer_is_repeated(tmp_path):
    results = make_results(tmp_path / "r", games=1)
    db = results / "games.db"
    calls = []

    def count_then_write(conn: sqlite3.Connection) -> int:
        calls.append(sqlite_read.open_mode(db))
        n = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        if len(calls) == 1:  # a run starts while we read, and commits a game
            with Store(results) as writer:
                writer.add_game(row("raced"))
        return n

    assert sqlite_read.read(db, count_then_write) == 2
    assert calls == [IMMUTABLE, IMMUTABLE]


def test_a_read_only_shm_falls_back_to_a_private_copy(tmp_path, monkeypatch):
    results = make_results(tmp_path / "r", games=2)
    real_reader = sqlite_read.Reader
    modes = []

    class UnwritableShm(real_reader):
        def __init__(self, path, mode=None):
            super().__init__(path, mode)
            modes.append(self.mode)
            if self.mode == READ_ONLY:  # what SQLite says when it cannot set up the -shm
                error = sqlite3.OperationalError("attempt to write a readonly database")
                error.sqlite_errorcode = 1288  # SQLITE_READONLY_CANTINIT
                self.conn.close()
                self.conn = _Raising(error)

    monkeypatch.setattr(sqlite_read, "Reader", UnwritableShm)
    monkeypatch.setattr(sqlite_read, "open_mode", lambda path: READ_ONLY)
    assert len(load_games(results)) == 2
    assert modes == [READ_ONLY, SNAPSHOT]


class _Raising:
    def __init__(self, error: sqlite3.Error) -> None:
        self.error = error

    def execute(self, *args):
        raise self.error

    def close(self) -> None:
        pass


# -- for real, as a user who cannot write ----------------------------------------------------
def _unprivileged() -> list[str]:
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot drop privileges")
    prefix = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    probe = subprocess.run([*prefix, sys.executable, "-c", "import arena, pandas"],
                           capture_output=True, env=_env(), timeout=60)
    if probe.returncode != 0:
        pytest.skip("user nobody cannot run this Python and project")
    return prefix


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(PROJECT)}


@pytest.fixture
def shared_tmp():
    """A folder other users can enter (pytest's tmp_path is private to root); removed after."""
    folder = Path(tempfile.mkdtemp(prefix="arena-ro-"))
    folder.chmod(0o755)
    yield folder
    for path in (folder, *folder.rglob("*")):
        if not path.is_symlink():
            path.chmod(stat.S_IRWXU | path.stat().st_mode)
    shutil.rmtree(folder)


def _freeze(directory: Path) -> None:
    """chmod -R a-w"""
    for path in (*directory.rglob("*"), directory):
        path.chmod(path.stat().st_mode & ~0o222)


READ_ALL = """
import sys
from arena.tournament.store import load_games, read_bots, read_settings
d = sys.argv[1]
print(len(load_games(d)), read_settings(d)["games"], len(read_bots(d)))
"""


def test_a_read_only_copy_is_read_by_a_user_who_cannot_write_it(shared_tmp):
    prefix = _unprivileged()
    finished = make_results(shared_tmp / "finished")
    crashed = shared_tmp / "crashed"  # a writer's files, -wal and -shm included, copied as is
    crashed.mkdir()
    with Store(finished) as writer:
        writer.add_game(row("in-wal"))
        for name in ("games.db", "games.db-wal", "games.db-shm"):
            shutil.copyfile(finished / name, crashed / name)
    for folder in (finished, crashed):
        _freeze(folder)
        before = folder_state(folder)
        done = subprocess.run([*prefix, sys.executable, "-c", READ_ALL, str(folder)],
                              capture_output=True, text=True, env=_env(), timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["4", "4", "0"]
        export = subprocess.run(
            [*prefix, sys.executable, "-m", "arena", "export", str(folder), "--format", "jsonl"],
            capture_output=True, text=True, env=_env(), timeout=120)
        assert export.returncode == 0, export.stderr
        assert len(export.stdout.splitlines()) == 4
        standings = subprocess.run(
            [*prefix, sys.executable, "-m", "arena", "standings", str(folder), "--format", "csv"],
            capture_output=True, text=True, env=_env(), timeout=120)
        assert standings.returncode == 0, standings.stderr
        assert "a" in standings.stdout and "b" in standings.stdout
        assert folder_state(folder) == before


def test_an_unreadable_database_is_a_one_line_error(shared_tmp):
    prefix = _unprivileged()
    results = make_results(shared_tmp / "r")
    (results / "games.db").chmod(0)
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "arena", "export", str(results)],
        capture_output=True, text=True, env=_env(), timeout=120)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    message = done.stderr.strip()
    assert len(message.splitlines()) == 1
    assert "permission denied" in message and "games.db" in message


def test_an_empty_file_as_database_says_so_and_is_left_alone(tmp_path):
    results = tmp_path / "r"
    results.mkdir()
    (results / "games.db").write_bytes(b"")
    with pytest.raises(StoreError, match="empty database"):
        load_games(results)
    assert sorted(p.name for p in results.iterdir()) == ["games.db"]
    bad = run_cli("export", str(results))
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
