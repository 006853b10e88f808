"""Hostile input through the real `arena` command: one clear line, a non-zero exit, no traceback,
and stored results never lost or overwritten.

Each test runs `python -m arena ...` as a subprocess (the real entry point, real stderr).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BOTS = '[[bots]]\npath = "random"\n[[bots]]\npath = "greedy"\n'
SQLITE_MAGIC = b"SQLite format 3\x00"


def arena(*args: str, cwd: Path | None = None, stdin: bytes | None = None,
          timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-m", "arena", *args], cwd=cwd, input=stdin,
                          capture_output=True, timeout=timeout, env=env)
    return subprocess.CompletedProcess(proc.args, proc.returncode,
                                       proc.stdout.decode("utf-8", "replace"),
                                       proc.stderr.decode("utf-8", "replace"))


def fails(result: subprocess.CompletedProcess, fragment: str, code: int | None = None) -> None:
    """A clean failure: non-zero exit, the fragment on stderr, no traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode != 0, (result.stdout, result.stderr)
    if code is not None:
        assert result.returncode == code, result.stderr
    assert fragment in result.stderr, result.stderr
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("Error")]
    assert len(error_lines) == 1, result.stderr


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_store(directory: Path, results=(1.0, 0.0)) -> Path:
    """A small results directory written through the store API (no bots run)."""
    from arena.tournament.store import Store

    with Store(directory) as store:
        store.save_settings({"name": "t", "variants": ["classic"]}, {"bots": {}})
        for k, result in enumerate(results, start=1):
            store.add_game({"game_id": f"g{k}", "variant": "classic", "first": "a" if k % 2 else "b",
                            "second": "b" if k % 2 else "a", "result": result, "reason": "line",
                            "plies": 7, "moves": "d1 d2 d1 d2 d1 d2 d1"}, pair_id="p1")
    return directory / "games.db"


def edited_store(directory: Path, *statements: str) -> Path:
    """A small results directory (`make_store`) changed by hand with SQL statements."""
    db = make_store(directory)
    conn = sqlite3.connect(db)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()
    return db


def corrupt_store(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    db = directory / "games.db"
    db.write_bytes(bytes(range(256)) * 20)
    return db


def tournament(tmp_path: Path, text: str, name: str = "t.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# -- arena run -------------------------------------------------------------------------------

def test_run_refuses_a_corrupt_database_and_leaves_it_untouched(tmp_path):
    db = corrupt_store(tmp_path / "res")
    before = digest(db)
    file = tournament(tmp_path, BOTS)
    fails(arena("run", str(file), "-o", str(tmp_path / "res")), "damaged or not an arena results")
    assert digest(db) == before
    # nothing added but the run lock's file (a lock file is never deleted: that would race)
    left = sorted(p.name for p in (tmp_path / "res").iterdir())
    assert left == [".arena-run.lock", db.name]


def test_a_file_where_the_log_folder_goes_is_a_one_line_error(tmp_path):
    (tmp_path / "res").mkdir()
    (tmp_path / "res" / "logs").write_text("not a folder")  # a run's own name: not a user's
    (tmp_path / "res" / ".gitkeep").write_text("")
    file = tournament(tmp_path, BOTS)
    fails(arena("run", str(file), "-o", str(tmp_path / "res")), "cannot make the bots' log folder")


def test_league_commands_name_a_damaged_store_as_such(tmp_path):
    corrupt_store(tmp_path / "res")
    fails(arena("league", "status", str(tmp_path / "res")), "damaged or not an arena results")


def test_run_fresh_moves_a_corrupt_database_aside(tmp_path):
    db = corrupt_store(tmp_path / "res")
    before = digest(db)
    file = tournament(tmp_path, '[time]\nmove_ms = 500\n' + BOTS)
    result = arena("run", "-q", str(file), "-o", str(tmp_path / "res"), "--fresh")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    backups = list((tmp_path / "res").glob("backup-*/games.db"))
    assert len(backups) == 1 and digest(backups[0]) == before


def test_run_refuses_a_foreign_sqlite_database(tmp_path):
    (tmp_path / "res").mkdir()
    db = tmp_path / "res" / "games.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE photos(x)")
    conn.commit()
    conn.close()
    before = digest(db)
    fails(arena("run", str(tournament(tmp_path, BOTS)), "-o", str(tmp_path / "res")),
          "not an arena results database")
    assert digest(db) == before


def test_run_refuses_a_newer_schema(tmp_path):
    edited_store(tmp_path / "res", "UPDATE meta SET value='99' WHERE key='schema_version'")
    fails(arena("run", str(tournament(tmp_path, BOTS)), "-o", str(tmp_path / "res")),
          "newer arena")


def test_run_with_a_directory_where_the_database_goes(tmp_path):
    (tmp_path / "res" / "games.db").mkdir(parents=True)
    fails(arena("run", str(tournament(tmp_path, BOTS)), "-o", str(tmp_path / "res")),
          "is not a file")


@pytest.mark.parametrize("text,fragment", [
    ('output = ""\n' + BOTS, "'output' is empty"),
    ('output = "a\\u0000b"\n' + BOTS, "NUL character"),
    ("games = 1000000000000\n" + BOTS, "the schedule would hold"),
    ('[[bots]]\npath = ""\n[[bots]]\npath = "random"\n', "'path' is empty"),
    ('name = "x"\nvariants = [\n', "t.toml:2: not valid TOML"),
    ('games = "four"\n' + BOTS, "t.toml:1: 'games'"),
])
def test_run_config_errors(tmp_path, text, fragment):
    fails(arena("run", str(tournament(tmp_path, text)), "-o", str(tmp_path / "res")), fragment)
    assert not (tmp_path / "res" / "games.db").exists()


def test_a_tournament_file_that_is_not_utf8_names_its_line(tmp_path):
    # Python's codec text ("can't decode byte 0xe9 in position 16"), no line (newcomer review)
    file = tmp_path / "t.toml"
    file.write_bytes(b'name = "t"\ndescription = "caf\xe9"\n' + BOTS.encode())
    fails(arena("run", str(file), "-o", str(tmp_path / "res")),
          f"{file}: not UTF-8 text (invalid continuation byte at line 2, byte 29)")


def test_run_openings_file_that_is_not_text(tmp_path):
    (tmp_path / "open.txt").write_bytes(b"\x00\xff\xfe garbage")
    file = tournament(tmp_path, 'openings = "open.txt"\n' + BOTS)
    fails(arena("run", str(file), "-o", str(tmp_path / "res")), "open.txt: the openings file is "
          "not UTF-8")


# -- arena export ----------------------------------------------------------------------------

def test_export_never_overwrites_the_results_database(tmp_path):
    db = make_store(tmp_path / "res")
    before = digest(db)
    fails(arena("export", str(tmp_path / "res"), "--out", str(db)), "results database itself")
    assert digest(db) == before
    other = tmp_path / "other.db"
    other.write_bytes(db.read_bytes())
    fails(arena("export", str(tmp_path / "res"), "--out", str(other)), "SQLite database")
    assert other.read_bytes().startswith(SQLITE_MAGIC)


def test_export_of_a_corrupt_store_writes_nothing(tmp_path):
    corrupt_store(tmp_path / "res")
    result = arena("export", str(tmp_path / "res"))
    fails(result, "damaged or not an arena results database")
    assert result.stdout == ""
    out = tmp_path / "games.csv"
    fails(arena("export", str(tmp_path / "res"), "--out", str(out)), "damaged")
    assert not out.exists() and not (tmp_path / "games.csv.tmp").exists()


def test_export_to_a_missing_folder_and_from_a_file(tmp_path):
    make_store(tmp_path / "res")
    fails(arena("export", str(tmp_path / "res"), "--out", str(tmp_path / "no" / "x.csv")),
          "cannot write")
    (tmp_path / "plain").write_text("x")
    fails(arena("export", str(tmp_path / "plain")), "is a file, not a results directory")


@pytest.mark.parametrize("command", ["export", "standings", "plot", "publish"])
def test_readers_refuse_a_newer_schema(tmp_path, command):
    edited_store(tmp_path / "res", "UPDATE meta SET value='99' WHERE key='schema_version'",
                 "ALTER TABLE games DROP COLUMN moves")
    fails(arena(command, str(tmp_path / "res")), "written by a newer arena")


@pytest.mark.parametrize("command", ["standings", "publish"])
def test_readers_of_a_corrupt_store(tmp_path, command):
    corrupt_store(tmp_path / "res")
    fails(arena(command, str(tmp_path / "res")), "damaged or not an arena results database")


def test_a_hand_edited_store_is_named_with_its_problem(tmp_path):
    # a result no arena writes read "results must be 1, 0.5 or 0, got np.float64(7.0)" with
    # no file; settings that are not JSON gave only the JSON parser's message
    from arena.publish.load import PublishError, load_results

    edited_store(tmp_path / "res", "UPDATE games SET result = 7 WHERE game_id = 'g2'")
    with pytest.raises(PublishError, match=r"games.db: game g2 has result 7.0, not 1, 0.5 or 0"):
        load_results(tmp_path / "res")
    edited_store(tmp_path / "other", "UPDATE meta SET value = '{bad' WHERE key = 'settings'")
    with pytest.raises(PublishError, match=r"games.db: a stored value is not valid JSON"):
        load_results(tmp_path / "other")


# -- arena publish ---------------------------------------------------------------------------

def test_publish_refuses_to_build_over_results_or_foreign_folders(tmp_path):
    db = make_store(tmp_path / "res")
    before = digest(db)
    fails(arena("publish", str(tmp_path / "res"), "--out", str(tmp_path / "res"), "--no-plots"),
          "is a results directory")
    assert digest(db) == before
    precious = tmp_path / "mine" / "games" / "notes.txt"
    precious.parent.mkdir(parents=True)
    precious.write_text("keep")
    fails(arena("publish", str(tmp_path / "res"), "--out", str(tmp_path / "mine"), "--no-plots"),
          "no site (index.html)")
    assert precious.read_text() == "keep"


def test_publish_void_only_store(tmp_path):
    make_store(tmp_path / "res", results=(None,))
    fails(arena("publish", str(tmp_path / "res")), "no finished games")


# -- games files: standings / plot -----------------------------------------------------------

def test_csv_blank_lines_keep_line_numbers(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("first,second,result\na,b,1\n\n\nb,a,7\n")
    fails(arena("standings", str(path)), "g.csv line 5, column result")


def test_csv_bom_crlf_and_jsonl_bom_are_read(tmp_path):
    csv = tmp_path / "g.csv"
    csv.write_bytes(b"\xef\xbb\xbffirst,second,result\r\na,b,1\r\n\r\nb,a,0-1\r\n")
    jsonl = tmp_path / "g.jsonl"
    jsonl.write_bytes(b'\xef\xbb\xbf{"first":"a","second":"b","result":1}\r\n\r\n'
                      b'{"first":"b","second":"a","result":"0-1"}\r\n')
    for path in (csv, jsonl):
        result = arena("standings", str(path), "--format", "json")
        assert result.returncode == 0, result.stderr
        rows = json.loads(result.stdout)
        assert {r["bot"]: r["games"] for r in rows} == {"a": 2, "b": 2}


@pytest.mark.parametrize("name,content,fragment", [
    ("g.csv", b"first,second,result\na,b,1,x,y\n", "g.csv line 2: 5 fields"),
    ("g.csv", b'first,second,result\n"a,b,1\n', "g.csv line 2: not a readable CSV"),
    ("g.csv", b"first,second,result,first\na,b,1,c\n", "appears twice"),
    ("g.csv", b"\x00\xff\xfe", "not UTF-8"),
    ("g.jsonl", b"", "the file is empty"),
    ("g.jsonl", b"\xff\xfe{}", "not UTF-8"),
])
def test_bad_games_files(tmp_path, name, content, fragment):
    path = tmp_path / name
    path.write_bytes(content)
    fails(arena("standings", str(path)), fragment)


@pytest.mark.parametrize("command", ["standings", "plot"])
@pytest.mark.parametrize("anchor", ["a=nan", "a=inf"])
def test_anchor_must_be_finite(tmp_path, command, anchor):
    path = tmp_path / "g.csv"
    path.write_text("first,second,result\na,b,1\nb,a,1\n")
    extra = ["--out", str(tmp_path / "plots")] if command == "plot" else []
    fails(arena(command, str(path), "--anchor", anchor, *extra), "finite", code=2)


def test_plot_of_void_games_draws_nothing(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("first,second,result,variant\na,b,*,classic\n")
    result = arena("plot", str(path), "--out", str(tmp_path / "p"))
    assert result.returncode == 0 and "nothing to plot" in result.stdout
    assert "Warning" not in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "p").exists()


# -- arena replay ----------------------------------------------------------------------------

def test_replay_files(tmp_path):
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbfclassic: d4\r\n")
    result = arena("replay", "--json", str(bom))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["moves"] == ["d4"]
    fails(arena("replay", str(tmp_path)), "no tournament results in")  # a folder: its games
    fails(arena("replay", "-", stdin=b"\xff\xfe d4\n"), "standard input: not UTF-8")
    # nothing to replay is said, not an empty success (new-user review)
    fails(arena("replay", stdin=b""), "no game records to replay in standard input")
    (tmp_path / "empty.txt").write_text("")
    fails(arena("replay", str(tmp_path / "empty.txt")), "no game records to replay in")


# -- arena play / check ----------------------------------------------------------------------

@pytest.mark.parametrize("args,fragment", [
    (["--args-a", "'unclosed"], "--args-a"),
    (["--log-dir", "/proc/no/such"], "--log-dir"),
    (["--opening", "d4 d9"], "--opening"),
    (["-v", "classic", "-v", "popout", "--opening", "p1"], "move 'p1' is illegal in classic: "),
    (["--opening", "d4 d5 d4 d5 d4 d5 d4"], "the opening already ends the game in classic"),
])
def test_play_bad_options(args, fragment):
    fails(arena("play", "random", "greedy", *args), fragment, code=2)


def test_play_bad_bots(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "bot.toml").write_text('name = "x"\ncommand = [\n')
    fails(arena("play", "random", str(bad)), "bot.toml:2: not valid TOML")
    fails(arena("play", "random", "/dev/null"), "not a regular file")
    script = tmp_path / "mybot"
    script.write_text("#!/bin/sh\n")
    fails(arena("play", "random", str(script)), f"chmod +x {script}")  # issue 14 #26
    source = tmp_path / "bot.c"
    source.write_text("int main(void) { return 0; }\n")
    fails(arena("play", "random", str(source)), "is source code: compile it (e.g. gcc -O2 -o "
          "bot bot.c)")  # not `chmod +x bot.c` (user review)
    unknown = tmp_path / "unknown"
    unknown.mkdir()
    (unknown / "bot.toml").write_text('command = "sh"\nauthr = "me"\n')
    fails(arena("play", "random", str(unknown)), "bot.toml:2: unknown key 'authr'; did you "
          "mean 'author'?")  # issue 14 #20
    fails(arena("play", "random", "greedy", "--opening", "d4", "--openings", "none"),
          "not both", code=2)


def test_check_shows_why_a_bot_died(tmp_path, no_leftover_processes):
    bot = tmp_path / "boom.py"
    bot.write_text("raise RuntimeError('boom at import')\n")
    result = arena("check", str(bot), "--startup-ms", "3000")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "stderr: RuntimeError: boom at import" in result.stdout
    fails(arena("check", "random", "--args", "'x"), "--args", code=2)


def test_a_misspelt_command_gets_a_suggestion():
    # `arena rnu`: "No such command 'rnu'." where `arena league subimt` suggested (newcomer review)
    fails(arena("rnu"), "Error: No such command 'rnu'. Did you mean 'run'?", code=2)
    fails(arena("xyz"), "Error: No such command 'xyz'.", code=2)
