"""Time odds in tournaments (issue 14, finding 32): a [[bots]] table may carry its own `time`."""

from __future__ import annotations

import json
import sqlite3

import pytest
from tournament_helpers import copy_bot, run_cli, write_toml

from arena.timecontrol import TimeControl
from arena.tournament.config import ConfigError, load_config
from arena.tournament.executor import WorkerSetup
from arena.tournament.store import Store

HEAD = """
name = "t"
variants = ["classic"]
games = 2
[time]
move_ms = 500
startup_ms = 6000
"""


def load(tmp_path, body):
    return load_config(write_toml(tmp_path / "t.toml", HEAD + body))


def error_of(tmp_path, body) -> str:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, body)
    return str(info.value)


def test_a_bot_time_table_inline_or_as_a_sub_table(tmp_path):
    config = load(tmp_path, """
        [[bots]]
        path = "random"
        time = { move_ms = 50 }
        [[bots]]
        path = "greedy"
        [[bots]]
        path = "mcts"
        [bots.time]
        base_ms = 3000
        increment_ms = 20
        """)
    assert config.time_control_of("random") == TimeControl(move_ms=50, startup_ms=6000)
    assert config.bot("greedy").time_control is None  # plays under [time]
    assert config.time_control_of("greedy") == config.time_control
    # naming a limit replaces [time]'s limits: a clock alone, no 500 ms per-move cap
    assert config.time_control_of("mcts") == TimeControl(move_ms=None, base_ms=3000,
                                                         increment_ms=20, startup_ms=6000)
    setup = WorkerSetup.from_config(config, tmp_path)
    assert setup.time_control_of("random").move_ms == 50
    assert setup.time_control_of("greedy").move_ms == 500


def test_other_keys_change_only_themselves_and_an_equal_control_is_none(tmp_path):
    config = load(tmp_path, """
        [[bots]]
        path = "random"
        time = { startup_ms = 20000 }
        [[bots]]
        path = "greedy"
        time = { move_ms = 500 }
        """)
    assert config.time_control_of("random") == TimeControl(move_ms=500, startup_ms=20000)
    assert config.bot("greedy").time_control is None
    assert "time_control" not in config.fingerprint()["bots"]["greedy"]


def test_the_fingerprint_holds_each_bots_own_control(tmp_path):
    odds = load(tmp_path, '[[bots]]\npath = "random"\ntime = { move_ms = 50 }\n'
                          '[[bots]]\npath = "greedy"\n').fingerprint()
    assert odds["bots"]["random"]["time_control"]["move_ms"] == 50
    assert "time_control" not in odds["bots"]["greedy"]
    other = load(tmp_path, '[[bots]]\npath = "random"\ntime = { move_ms = 60 }\n'
                           '[[bots]]\npath = "greedy"\n').fingerprint()
    assert other != odds


@pytest.mark.parametrize("bot_lines, line, message", [
    ('time = { move_ms = 50, move = 3 }', 11,
     "unknown key 'move' in the time table of bot 'random'; did you mean 'move_ms'?"),
    ('time = { increment_ms = 5 }', 11,
     "the time table of bot 'random': impossible time control: increment_ms needs a clock"),
    ('time = { move_ms = "fast" }', 11, "'move_ms' must be milliseconds per move, got the string \"fast\""),
    ('time = 50', 11, "'time' must be a time table with the keys of [time]"),
    ('[bots.time]\nmove_ms = 50\ngrace_ms = -1', 13,
     "the time table of bot 'random': impossible time control: grace_ms must be an integer"),
])
def test_bad_bot_time_tables_are_one_line_errors_at_their_line(tmp_path, bot_lines, line,
                                                                message):
    error = error_of(tmp_path, f'[[bots]]\npath = "greedy"\n[[bots]]\npath = "random"\n'
                               f'{bot_lines}\n')
    assert error.startswith(f"{tmp_path / 't.toml'}:{line}: "), error
    assert message in error and "\n" not in error


def stored_game(folder, fingerprint) -> Store:
    """A store of one game a-b under `fingerprint`."""
    store = Store(folder)
    store.save_settings({}, fingerprint)
    store.add_game({"game_id": "g1", "variant": "classic", "first": "a", "second": "b",
                    "result": 1.0, "winner": 1, "reason": "line", "plies": 1, "moves": "d4"})
    return store


def test_a_changed_own_time_control_is_a_conflict(tmp_path):
    fingerprint = {"time_control": {"move_ms": 100}, "openings_digest": "", "seed": None,
                   "bots": {"a": {"command": ["a"], "args": [], "program_hash": "h1",
                                  "time_control": {"move_ms": 50}},
                            "b": {"command": ["b"], "args": [], "program_hash": "h2"}}}
    with stored_game(tmp_path, fingerprint) as store:
        assert store.conflicts(fingerprint) == []
        changed = json.loads(json.dumps(fingerprint))
        changed["bots"]["a"]["time_control"]["move_ms"] = 80
        dropped = json.loads(json.dumps(fingerprint))
        del dropped["bots"]["a"]["time_control"]
        for new, now in ((changed, "move_ms=80"), (dropped, "now [time]")):
            problems = store.conflicts(new)
            assert len(problems) == 1 and "bot 'a' changed its own time control" in problems[0]
            assert "move_ms=50" in problems[0] and now in problems[0]


def test_a_bot_s_own_table_that_restates_time_is_no_conflict(tmp_path):
    """What a bot played under is its own control, else [time]: a table that only restates
    [time] may go, and the start watch's advice, a start-up of its own for a bot that loads
    slowly (with no stored games yet), is taken; a changed [time] is still one problem."""
    fingerprint = {"time_control": {"move_ms": 100, "startup_ms": 5000}, "openings_digest": "",
                   "seed": None,
                   "bots": {"a": {"command": ["a"], "args": [], "program_hash": "h1",
                                  "time_control": {"move_ms": 100, "startup_ms": 5000}},
                            "b": {"command": ["b"], "args": [], "program_hash": "h2"}}}
    with stored_game(tmp_path, fingerprint) as store:
        restated = json.loads(json.dumps(fingerprint))
        del restated["bots"]["a"]["time_control"]
        assert store.conflicts(restated) == []
        slow = json.loads(json.dumps(fingerprint))
        slow["bots"]["c"] = {"command": ["c"], "args": [], "program_hash": "h3",
                             "time_control": {"move_ms": 100, "startup_ms": 20000}}
        assert store.conflicts(slow) == []
        raised = json.loads(json.dumps(fingerprint))
        raised["time_control"]["startup_ms"] = 8000  # a fresh process's first move: it counts
        [problem] = store.conflicts(raised)
        assert "the time control changed" in problem


def test_a_tournament_plays_each_bot_under_its_own_control_and_the_site_shows_it(tmp_path):
    copy_bot(tmp_path, "random", "rb")
    file = write_toml(tmp_path / "odds.toml", """
        name = "odds"
        variants = ["classic:5x4"]
        games = 2
        concurrency = 1
        [time]
        move_ms = 2000
        [[bots]]
        path = "rb"
        name = "quick"
        args = ["--seed", "1"]
        time = { move_ms = 700 }
        [[bots]]
        path = "rb"
        name = "slow"
        args = ["--seed", "2"]
        """)
    done = run_cli("run", str(file), "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    results = tmp_path / "results" / "odds"
    with sqlite3.connect(results / "games.db") as conn:
        rows = conn.execute("SELECT first, second, first_tc, second_tc FROM games").fetchall()
    assert sorted((r[0], r[1]) for r in rows) == [("quick", "slow"), ("slow", "quick")]
    own = {"quick": 700, "slow": 2000}  # whichever seat the bot took
    for first, second, first_tc, second_tc in rows:
        assert json.loads(first_tc)["move_ms"] == own[first]
        assert json.loads(second_tc)["move_ms"] == own[second]

    site = tmp_path / "site"
    published = run_cli("publish", str(results), "--out", str(site), "--no-plots", cwd=tmp_path)
    assert published.returncode == 0, published.stderr
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "Time odds" in index and "quick: 700 ms per move" in index
    pages = [p.read_text(encoding="utf-8") for p in (site / "games").glob("*.html")]
    assert pages and all("time odds:" in page for page in pages)
    assert any("quick: 700 ms per move · slow: 2 s per move" in page for page in pages)
