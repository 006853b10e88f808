"""The store: one transaction per game, void replacement, consistency checks, readers, export."""

from __future__ import annotations

import json
import sqlite3

import pandas as pd
import pytest
from tournament_helpers import PROJECT, copy_bot, run_cli, write_toml

from arena.schema import COLUMNS_BY_NAME, FRAME_COLUMNS, STORED_COLUMNS, create_table_sql
from arena.tournament.export import export_games
from arena.tournament.store import (
    BOT_COLUMNS,
    SCHEMA_VERSION,
    RunLock,
    Store,
    StoreError,
    iter_game_rows,
    load_games,
    move_aside,
    read_bots,
    read_settings,
)


def row(game_id, result=1.0, **extra):
    base = {
        "game_id": game_id, "variant": "classic", "first": "a", "second": "b", "result": result,
        "winner": None if result in (None, 0.5) else (1 if result == 1 else 2),
        "reason": "line" if result is not None else "handshake", "forfeit_by": None,
        "plies": 3, "moves": "d4 d4 d4", "opening": "", "move_ms": "[1.0, 2.0, 3.0]",
        "move_cpu_ms": [0.5, 0.5, 0.5], "detail": "", "started_at": "2024-01-01T00:00:00Z",
        "finished_at": "2024-01-01T00:00:01Z", "first_hash": "h1", "second_hash": "h2",
        "first_version": "1", "second_version": "2",
    }
    base.update(extra)
    return base


FP = {"time_control": {"move_ms": 100}, "openings_digest": "", "seed": None,
      "bots": {"a": {"command": ["a"], "args": [], "program_hash": "h1"},
               "b": {"command": ["b"], "args": [], "program_hash": "h2"}}}


def test_games_round_trip_with_the_design_columns(tmp_path):
    with Store(tmp_path) as store:
        store.save_settings({"name": "x", "variants": ["classic"]}, FP)
        assert store.add_game(row("g1"), pair_id="p1", round=0) == 1
        assert store.add_game(row("g2", 0.5), pair_id="p1", round=0) == 2
        assert store.finished_ids() == {"g1", "g2"}
        mode = store.conn.execute("PRAGMA journal_mode").fetchone()[0]
        sync = store.conn.execute("PRAGMA synchronous").fetchone()[0]
        assert (mode, sync) == ("wal", 2)
    df = load_games(tmp_path)
    assert list(df.columns) == list(FRAME_COLUMNS)
    assert list(df.seq) == [1, 2]
    assert df.result.tolist() == [1.0, 0.5]
    assert df.winner.isna().tolist() == [False, True]
    assert json.loads(df.move_cpu_ms[0]) == [0.5, 0.5, 0.5]
    assert df.pair_id.tolist() == ["p1", "p1"]


def test_a_finished_game_is_never_stored_twice(tmp_path):
    with Store(tmp_path) as store:
        store.add_game(row("g1"))
        with pytest.raises(StoreError):
            store.add_game(row("g1"))
        assert store.game_count() == 1


def test_void_games_are_replayed_and_replaced(tmp_path):
    with Store(tmp_path) as store:
        store.add_game(row("g1", None))
        assert store.finished_ids() == set()
        assert store.all_ids() == {"g1"}
        store.add_game(row("g1", 0.0))
        assert store.finished_ids() == {"g1"}
    df = load_games(tmp_path)
    assert len(df) == 1 and df.result[0] == 0.0


def test_void_games_load_as_nan(tmp_path):
    with Store(tmp_path) as store:
        store.add_game(row("g1", None))
    df = load_games(tmp_path)
    assert df.result.isna().all()


def test_conflicts_name_what_changed(tmp_path):
    with Store(tmp_path) as store:
        store.save_settings({}, FP)
        assert store.conflicts({**FP, "time_control": {"move_ms": 200}}) == []  # no games yet
        store.add_game(row("g1"))
        assert store.conflicts(FP) == []
        problems = store.conflicts({**FP, "time_control": {"move_ms": 200}})
        assert len(problems) == 1 and "time control" in problems[0] and "200" in problems[0]
        changed = json.loads(json.dumps(FP))
        changed["bots"]["a"]["program_hash"] = "other"
        assert "bot 'a' changed" in store.conflicts(changed)[0]
        changed = json.loads(json.dumps(FP))
        changed["bots"]["b"]["args"] = ["--level", "easy"]
        assert "arguments" in store.conflicts(changed)[0]
        moved = json.loads(json.dumps(FP))
        moved["bots"]["b"]["command"] = ["/other/python", "b"]
        assert store.conflicts(moved) == []  # another interpreter or folder is the same bot
        # a new bot is fine
        more = json.loads(json.dumps(FP))
        more["bots"]["c"] = {"command": ["c"], "args": [], "program_hash": "h3"}
        assert store.conflicts(more) == []


def test_read_settings(tmp_path):
    class Spec:
        command = ["python", "bot.py"]
        args = ("--x",)
        cwd = "/tmp"
        program_hash = "abc"
        version = ""
        author = "me"
        language = "python"

    class Entry:
        name, ref, args, spec = "a", "bots/a", ("--x",), Spec()

    with Store(tmp_path) as store:
        store.save_settings({"name": "t", "variants": ["classic"], "time_control": {"move_ms": 5},
                             "bots": [{"name": "a"}]}, FP)
        store.upsert_bots([Entry()])
        store.set_bot_version("a", "2.1")
        store.add_game(row("g1"))
    info = read_settings(tmp_path)
    assert info["name"] == "t" and info["variants"] == ["classic"]
    assert info["time_control"] == {"move_ms": 5}
    assert info["bots"][0]["command"] == ["python", "bot.py"]
    assert info["bots"][0]["version"] == "2.1" and info["bots"][0]["program_hash"] == "abc"
    assert info["games"] == 1 and info["created_at"] and info["updated_at"]
    assert info["arena_version"]


def test_move_aside_keeps_everything(tmp_path):
    with Store(tmp_path) as store:
        store.add_game(row("g1"))
    (tmp_path / "logs" / "x.log").write_text("hello")
    backup = move_aside(tmp_path)
    assert backup is not None and (backup / "games.db").exists()
    assert (backup / "logs" / "x.log").read_text() == "hello"
    assert not (tmp_path / "games.db").exists()
    conn = sqlite3.connect(backup / "games.db")
    assert conn.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 1
    conn.close()


def test_lock_refuses_a_second_runner_and_names_the_first(tmp_path):
    import os

    with RunLock(tmp_path):
        with pytest.raises(StoreError, match=f"in use by another `arena run` \\(pid {os.getpid()}\\)"):
            RunLock(tmp_path).acquire()
    with RunLock(tmp_path, "arena league run"):  # a league's lock said `arena run`
        with pytest.raises(StoreError, match="in use by another `arena league run`"):
            RunLock(tmp_path).acquire()
    (tmp_path / ".arena-run.lock").write_text("123")  # a lock of an older arena: a pid alone
    RunLock(tmp_path).acquire()


def test_reading_the_results_keeps_a_live_writers_wal(tmp_path):
    """A league built its site in the process that stores its games; the site's reader opened
    and closed games.db to test it, which dropped the process's locks on it, and the next
    writer of another process (`league submit`) deleted the WAL under the live connection: the
    league stopped with "disk I/O error" (league review)."""
    import subprocess
    import sys

    from arena.tournament.store import iter_game_rows

    with Store(tmp_path) as store:
        store.add_game(row("g1"))
        assert [r["game_id"] for r in iter_game_rows(tmp_path)] == ["g1"]
        other = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
                 "c.execute('PRAGMA user_version = 7'); c.commit(); c.close()")
        subprocess.run([sys.executable, "-c", other, str(tmp_path / "games.db")], check=True,
                       timeout=60)
        assert (tmp_path / "games.db-wal").exists(), "another process deleted the live WAL"
        store.add_game(row("g2"))
    assert [r["game_id"] for r in iter_game_rows(tmp_path)] == ["g1", "g2"]


def test_export_csv_and_jsonl(tmp_path):
    with Store(tmp_path) as store:
        store.add_game(row("g1"))
        store.add_game(row("g2", None))
    out = tmp_path / "games.csv"
    assert export_games(tmp_path, "csv", out) == 2
    df = pd.read_csv(out)
    assert list(df.columns) == list(STORED_COLUMNS)
    assert df.result.isna().tolist() == [False, True]
    result = run_cli("export", str(tmp_path), "--format", "jsonl")
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["game_id"] for r in records] == ["g1", "g2"]
    assert records[1]["result"] is None and list(records[0]) == list(STORED_COLUMNS)
    assert records[0]["arena_version"] and "round" in records[0]


def test_export_as_records_replays(tmp_path):
    """`--format records`: a game a line in the record format, which `arena replay` reads back
    (the comment naming each game is skipped); a name's newline cannot split a record."""
    with Store(tmp_path) as store:
        store.add_game(row("g1", moves="d4 d5 d4 d5 d4 d5 d4", plies=7))
        store.add_game(row("g2", None, moves="", first="evil\nclassic: d9"))
        store.add_game(row("g3", 0.0, variant="popout:8x7", moves="d1 d2 p1", plies=3,
                           reason="illegal-move"))
    out = tmp_path / "games.txt"
    assert run_cli("export", str(tmp_path), "--format", "records", "-o", str(out)).returncode == 0
    assert out.read_text().splitlines() == [
        "# g1: a vs b, 1-0 (line)", "classic: d4 d5 d4 d5 d4 d5 d4",
        "# g2: evil classic: d9 vs b, void (handshake)", "classic:",
        "# g3: a vs b, 0-1 (illegal-move)", "popout:8x7: d1 d2 p1"]
    replayed = run_cli("replay", "--json", str(out))
    assert replayed.returncode == 0, replayed.stderr
    games = [json.loads(line) for line in replayed.stdout.splitlines()]
    assert [g["plies"] for g in games] == [7, 0, 3]
    assert games[0]["winner"] == 1 and games[2]["variant"] == "popout:8x7"


def test_exported_csv_runs_no_spreadsheet_formula_and_reads_back_exactly(tmp_path):
    """Names, versions and details come from bot authors: a cell starting with = + - @ would be
    a formula to a spreadsheet opening the export. It is written with an apostrophe, and the
    arena's own reader (`arena standings games.csv`) takes it off again."""
    hostile = {"first": "-minus", "second": "=HYPERLINK(\"http://x\",\"y\")",
               "first_version": "@SUM(1)", "second_version": "'quoted"}
    with Store(tmp_path) as store:
        store.add_game(row("g1", **hostile))
        store.add_game(row("g2", 0.0, first="=HYPERLINK(\"http://x\",\"y\")", second="-minus"))
    out = tmp_path / "games.csv"
    export_games(tmp_path, "csv", out)
    raw = pd.read_csv(out, dtype=str, keep_default_na=False)
    cells = [cell for column in raw.columns for cell in raw[column]]
    assert not any(cell.startswith(("=", "+", "-", "@")) for cell in cells), cells
    assert raw.first[0] == "'-minus" and raw.second_version[0] == "''quoted"
    from arena.reports.games_io import load_games as load_games_file

    back = load_games_file(str(out))
    for key, value in hostile.items():
        assert back[key][0] == value
    result = run_cli("standings", str(out), "--format", "csv")
    assert result.returncode == 0, result.stderr
    assert "'-minus," in result.stdout and "\n-minus" not in result.stdout
    assert "'=HYPERLINK" in result.stdout


def test_export_of_a_missing_directory_is_a_one_line_error(tmp_path):
    result = run_cli("export", str(tmp_path / "nope"))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "no tournament results" in result.stderr


def test_loaded_dtypes_and_timestamps_come_from_the_shared_contracts(tmp_path):
    with Store(tmp_path) as store:
        store.save_settings({"name": "x"}, FP)
        store.add_game(row("g1"))
    df = load_games(tmp_path)
    assert {c: str(df.dtypes[c]) for c in df.columns} == {
        c: str(pd.Series([], dtype=COLUMNS_BY_NAME[c].dtype).dtype) for c in FRAME_COLUMNS}
    created = read_settings(tmp_path)["created_at"]
    assert created.endswith("Z") and len(created) == len("2026-11-30T22:15:03.412Z")


def test_a_new_store_creates_the_games_table_of_the_schema(tmp_path):
    with Store(tmp_path) as store:
        columns = [r[1] for r in store.conn.execute("PRAGMA table_info(games)")]
        conn = sqlite3.connect(":memory:")
        conn.execute(create_table_sql())
        assert columns == [r[1] for r in conn.execute("PRAGMA table_info(games)")]
        assert columns == list(STORED_COLUMNS)


# The games table as arena wrote it before arena/schema.py (schema version 1, another order).
LEGACY_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE bots (name TEXT PRIMARY KEY, ref TEXT NOT NULL DEFAULT '', command TEXT NOT NULL
    DEFAULT '[]', args TEXT NOT NULL DEFAULT '[]', cwd TEXT NOT NULL DEFAULT '', program_hash TEXT
    NOT NULL DEFAULT '', version TEXT NOT NULL DEFAULT '', author TEXT NOT NULL DEFAULT '',
    language TEXT NOT NULL DEFAULT '', first_seen TEXT NOT NULL, last_seen TEXT NOT NULL);
CREATE TABLE games (seq INTEGER NOT NULL UNIQUE, game_id TEXT PRIMARY KEY, pair_id TEXT NOT NULL
    DEFAULT '', round INTEGER, variant TEXT NOT NULL, first TEXT NOT NULL, second TEXT NOT NULL,
    result REAL, winner INTEGER, reason TEXT NOT NULL DEFAULT '', forfeit_by INTEGER, plies INTEGER
    NOT NULL DEFAULT 0, moves TEXT NOT NULL DEFAULT '', opening TEXT NOT NULL DEFAULT '', move_ms
    TEXT NOT NULL DEFAULT '[]', move_cpu_ms TEXT NOT NULL DEFAULT '[]', detail TEXT NOT NULL DEFAULT
    '', started_at TEXT NOT NULL DEFAULT '', finished_at TEXT NOT NULL DEFAULT '', first_hash TEXT
    NOT NULL DEFAULT '', second_hash TEXT NOT NULL DEFAULT '', first_version TEXT NOT NULL DEFAULT
    '', second_version TEXT NOT NULL DEFAULT '', arena_version TEXT NOT NULL DEFAULT '');
INSERT INTO meta VALUES ('schema_version', '1');
INSERT INTO games (seq, game_id, variant, first, second, result, winner, reason, plies, moves,
    arena_version) VALUES (1, 'old', 'classic', 'a', 'b', 1.0, 1, 'line', 7, 'd4 d5', '0.9');
"""


def test_a_database_of_the_earlier_layout_is_read_and_extended(tmp_path):
    conn = sqlite3.connect(tmp_path / "games.db")
    conn.executescript(LEGACY_SCHEMA)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    assert load_games(tmp_path).game_id.tolist() == ["old"]
    with Store(tmp_path) as store:
        assert store.add_game(row("new"), pair_id="p", round=2) == 2
    df = load_games(tmp_path)
    assert df.game_id.tolist() == ["old", "new"] and df.plies.tolist() == [7, 3]
    assert [r["round"] for r in iter_game_rows(tmp_path)] == [None, 2]
    assert read_settings(tmp_path)["schema_version"] == SCHEMA_VERSION == 1


def test_columns_an_older_database_lacks_read_as_defaults_and_are_added_by_a_run(tmp_path):
    with Store(tmp_path) as store:
        store.add_game(row("g1"))
    conn = sqlite3.connect(tmp_path / "games.db")
    for name in ("round", "move_cpu_ms", "arena_version", "infos"):  # as if the schema had grown
        conn.execute(f"ALTER TABLE games DROP COLUMN {name}")
    conn.close()
    (first,) = iter_game_rows(tmp_path)
    assert (first["round"], first["move_cpu_ms"], first["arena_version"], first["infos"]) == (
        None, "[]", "", "[]")
    assert load_games(tmp_path).move_cpu_ms.tolist() == ["[]"]
    conn = sqlite3.connect(tmp_path / "games.db")
    assert "arena_version" not in {r[1] for r in conn.execute("PRAGMA table_info(games)")}
    conn.close()  # reading did not migrate it
    with Store(tmp_path) as store:
        store.add_game(row("g2"), round=1)
    rows = list(iter_game_rows(tmp_path))
    assert [r["round"] for r in rows] == [None, 1] and rows[1]["arena_version"]
    assert json.loads(rows[1]["move_cpu_ms"]) == [0.5, 0.5, 0.5]


def test_a_full_disk_keeps_every_stored_game_and_says_how_to_resume(tmp_path):
    store = Store(tmp_path)
    store.save_settings({"name": "x", "file": "tournaments/my cup.toml"}, FP)
    for k in range(3):
        store.add_game(row(f"g{k}"))
    # The database may not grow any more: the next game that needs a page fails like ENOSPC.
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count={pages}")
    with pytest.raises(StoreError) as caught:
        for k in range(3, 100):
            store.add_game(row(f"g{k}", detail="x" * 4000))
    message = str(caught.value)
    stored = store.game_count()
    assert "\n" not in message and "is full" in message
    assert f"the {stored} finished games stored so far are kept" in message
    assert message.endswith("free some space, then run the same command again to resume")
    assert caught.value.resumable  # `arena run` adds its own resume line (_resume_hint)
    assert not store.conn.in_transaction
    store.touch()  # only a timestamp: never hides the error that stopped the run
    store.close()
    assert len(load_games(tmp_path)) == stored >= 3


class _Spec:
    def __init__(self, author="", language="", version="1.0") -> None:
        self.command = ["python3", "bot.py"]
        self.args = ("--seed", "1")
        self.cwd = "/bots/x"
        self.program_hash = "abc"
        self.version, self.author, self.language = version, author, language


class _Entry:
    def __init__(self, name, spec) -> None:
        self.name, self.ref, self.args, self.spec = name, f"bots/{name}", spec.args, spec


def test_read_bots_has_author_and_language_from_bot_toml_or_the_handshake(tmp_path):
    with Store(tmp_path) as store:
        store.save_settings({"bots": [{"name": "b"}, {"name": "a"}]}, FP)
        store.upsert_bots([_Entry("a", _Spec("Ann", "c")), _Entry("b", _Spec())])
        store.set_bot_author("a", "someone else")  # bot.toml's author wins
        store.set_bot_author("b", "Bea")  # a bot.toml without one: the handshake's
        store.upsert_bots([_Entry("b", _Spec(language="rust"))])  # a resume keeps it
    bots = read_bots(tmp_path)
    assert list(bots.columns) == list(BOT_COLUMNS)
    assert bots.to_dict("records") == [
        {"name": "b", "author": "Bea", "language": "rust", "version": "1.0",
         "program_hash": "abc", "command": "python3 bot.py --seed 1"},
        {"name": "a", "author": "Ann", "language": "c", "version": "1.0",
         "program_hash": "abc", "command": "python3 bot.py --seed 1"},
    ]


def test_a_tournament_stores_its_bots_author_and_language(tmp_path):
    copy_bot(tmp_path, "random", "rb")
    (tmp_path / "plain.py").write_text((PROJECT / "bots" / "random" / "bot.py").read_text())
    path = write_toml(tmp_path / "t.toml", """
        variants = ["classic"]
        games = 2
        concurrency = 1
        output = "res"
        [time]
        move_ms = 2000
        [[bots]]
        path = "rb"
        [[bots]]
        path = "plain.py"
    """)
    done = run_cli("run", str(path), "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    bots = read_bots(tmp_path / "res").set_index("name")
    assert bots.loc["random", ["author", "language", "version"]].tolist() == [
        "arena", "python", "1.0"]
    assert bots.loc["plain", "language"] == "python" and bots.loc["plain", "author"] == ""
    assert all(bots.program_hash.str.len() > 0)


def test_a_time_control_conflict_lists_both_controls_in_one_order(tmp_path):
    """Issue 14 #26: the stored control (JSON, sorted keys) and the new one (file order) read alike."""
    from arena.tournament.store import Store

    with Store(tmp_path) as store:
        store.save_settings({}, {"time_control": {"move_ms": 100, "grace_ms": 200}, "bots": {}})
        store.add_game({"game_id": "g1", "variant": "classic", "first": "a", "second": "b",
                        "result": 1.0, "reason": "line"})
        [problem] = store.conflicts({"time_control": {"move_ms": 50, "grace_ms": 200}, "bots": {}})
    stored, now = problem.split("stored ")[1].split(", now ")
    assert stored.split(", ")[0] == "grace_ms=200" and now.split(", ")[0] == "grace_ms=200"


def test_a_variant_added_to_a_file_leaves_the_stored_games_comparable(tmp_path):
    """Each variant's openings have their own digest: adding `popout` with its built-in openings
    was refused as "the openings changed" (user review); a changed opening of a variant that has
    games still is."""
    from arena.tournament.config import load_config

    body = """name = "t"
variants = [{variants}]
openings = "{openings}"
games = 2
[[bots]]
path = "random"
[[bots]]
path = "greedy"
"""

    def fingerprint(variants: str, openings: str = "builtin") -> dict:
        path = write_toml(tmp_path / "t.toml", body.format(variants=variants, openings=openings))
        return load_config(path).fingerprint()

    with Store(tmp_path / "out") as store:
        store.save_settings({}, fingerprint('"classic"'))
        store.add_game(row("g1", first="random", second="greedy"))
        assert store.conflicts(fingerprint('"classic", "popout"')) == []
        store.save_settings({}, fingerprint('"classic", "popout"'))
        assert store.conflicts(fingerprint('"popout"')) == []  # one left out: the other's stay
        (tmp_path / "mine.txt").write_text("d1 d2\n")
        assert store.conflicts(fingerprint('"classic", "popout"', "mine.txt")) == [
            "the openings of classic, popout changed"]


def test_turning_adjudication_on_or_off_is_a_conflict(tmp_path):
    """Adjudicated games end where the solver proves the result, played-out ones where a bot
    may still swindle: a resume that switched `adjudicate` had mixed them without a word
    (operator review). A store from before the key was kept is not refused for it."""
    from arena.tournament.config import load_config

    def fingerprint(adjudicate: str) -> dict:
        path = write_toml(tmp_path / "t.toml", f'name = "t"\nadjudicate = "{adjudicate}"\n'
                          'games = 2\n[[bots]]\npath = "random"\n[[bots]]\npath = "greedy"\n')
        return load_config(path).fingerprint()

    with Store(tmp_path / "out") as store:
        store.save_settings({}, fingerprint("off"))
        store.add_game(row("g1", first="random", second="greedy"))
        assert store.conflicts(fingerprint("off")) == []
        assert store.conflicts(fingerprint("solver")) == [
            "adjudication changed (adjudicate = 'off' for the stored games, now 'solver'): "
            "games would end in two ways"]
        older = {k: v for k, v in fingerprint("off").items() if k != "adjudicate"}
        store.save_settings({}, older)  # a store from before the fingerprint kept it ...
        assert store.conflicts(fingerprint("solver")) == []
        store.save_settings({"adjudicate": "off"}, older)  # ... but its settings did
        assert store.conflicts(fingerprint("solver"))[0].startswith("adjudication changed")


def test_a_store_locked_by_another_program_is_waited_for_and_said_once(tmp_path):
    """A database viewer holding games.db's write lock past the 10 s busy timeout ended a run
    with a raw "database is locked" (operator review): the runner tries again, with one note,
    until the lock goes or the run is stopped."""
    import threading
    from types import SimpleNamespace

    from arena.tournament.runner import Runner

    notes, tries = [], []

    def write():
        tries.append(1)
        if len(tries) < 3:
            raise sqlite3.OperationalError("database is locked")
        return {"seq": 7}

    owner = SimpleNamespace(stop=threading.Event())
    progress = SimpleNamespace(note=notes.append)
    store = SimpleNamespace(path=tmp_path / "games.db")
    assert Runner._while_locked(owner, store, progress, write) == {"seq": 7}
    assert len(tries) == 3 and len(notes) == 1 and "is locked by another program" in notes[0]
    owner.stop.set()
    tries.clear()
    with pytest.raises(StoreError, match="stayed locked by another program"):
        Runner._while_locked(owner, store, progress, write)

    def broken():
        raise sqlite3.OperationalError("no such table: games")

    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        Runner._while_locked(owner, store, progress, broken)


def test_ending_a_run_on_a_store_locked_by_another_program_hides_nothing(tmp_path):
    """A stop while another program held the lock ended on a raw "database is locked" from
    these last writes instead of the error that stopped the run (diff review)."""
    with Store(tmp_path) as store:
        store.begin_run(4)
        store.conn.execute("PRAGMA busy_timeout=50")  # the test waits 50 ms, not 10 s
        other = sqlite3.connect(store.path, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            store.end_run("stopped")  # no exception: the lock is another program's
            store.touch()
            other.execute("ROLLBACK")
        finally:
            other.close()
