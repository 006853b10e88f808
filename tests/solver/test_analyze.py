"""Move analysis: values agree with Pons' reference, blunders and decided plies are found, the
statistics are right, and `arena analyze` stores its work beside the games and reuses it."""

from __future__ import annotations

import json
import math
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena.game import PRESETS, format_move, parse_variant
from arena.solver.analysis import MoveRecord, analyse, bot_stats, phase_of, wilson
from arena.solver.oracle import Oracle
from tests.solver_helpers import play_out

pytest.importorskip("numba", reason="the exact solver needs numba, a dependency: pip install -e .")

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = next((p / "shared" / "reference" / "connect4" for p in (ROOT.parent, ROOT.parent.parent)
                  if (p / "shared" / "reference" / "connect4").is_dir()), ROOT / "bench" / "data" / "connect4")
CLASSIC = PRESETS["classic"]


@pytest.fixture(scope="module")
def oracle() -> Oracle:
    return Oracle(CLASSIC)


def pons(name: str, count: int) -> list[tuple[str, int]]:
    rows = [line.split() for line in (REFERENCE / name).read_text().splitlines() if line.strip()]
    return [(m, int(s)) for m, s in rows[:count]]


def settle(oracle: Oracle):
    return lambda g: oracle.score(g)


def test_values_match_pons_and_perfect_moves_are_optimal(oracle):
    for moves, expected in pons("Test_L2_R1", 6) + pons("Test_L3_R1", 6):
        game = play_out(oracle, moves)
        tokens = [format_move(m) for m in game.moves]
        result = analyse(CLASSIC, tokens, len(moves), settle(oracle))
        assert result.values[len(moves)] == expected, moves
        assert result.moves[0].before == expected and result.moves[0].ply == len(moves)
        assert all(r.optimal and not r.blunder for r in result.moves), moves
        # perfect play from the reference position: its value is already the final result
        assert result.decided_ply is not None and result.decided_ply <= len(moves)


def test_a_blunder_is_found_where_it_was_made(oracle):
    moves, expected = next((m, s) for m, s in pons("Test_L2_R1", 50) if s > 0)
    game = play_out(oracle, moves, blunder_at=len(moves))
    tokens = [format_move(m) for m in game.moves]
    result = analyse(CLASSIC, tokens, len(moves), settle(oracle))
    first = result.moves[0]
    assert first.before == expected and first.blunder and not first.optimal
    assert [r.ply for r in result.moves if r.blunder] == [len(moves)]
    # after the blunder the result is no longer the one of the reference position
    assert result.decided_ply is not None and result.decided_ply >= len(moves) + 1
    stats = {s.bot: s for s in bot_stats([("A", "B", result.moves)])}
    mover = "A" if len(moves) % 2 == 0 else "B"
    # the move after `len(moves)` moves is ply len(moves) + 1, as the replay numbers it
    assert stats[mover].total.blunders == 1 and stats[mover].first_blunders == [len(moves) + 1]
    assert stats[mover].by_phase[phase_of(len(moves))].blunders == 1


def test_an_adjudicated_game_is_decided_where_its_proven_result_held(oracle):
    """An adjudicated game ends before its board is over, at a position the solver settled:
    its decided ply comes from that result (it was always unknown, '-', before)."""
    moves, expected = next((m, s) for m, s in pons("Test_L2_R1", 50) if s > 0)
    tokens = [format_move(int(d)) for d in moves]
    mover_won = 1.0 if len(moves) % 2 == 0 else 0.0  # seat 1's score: the side to move wins
    result = analyse(CLASSIC, tokens, 0, settle(oracle), adjudicated=mover_won)
    assert result.values[-1] == expected
    assert result.decided_ply is not None and result.decided_ply <= len(moves)
    # the stored result counts, not what this budget settles at the end (here: nothing)
    unsettled = analyse(CLASSIC, tokens, len(tokens), lambda g: None, adjudicated=mover_won)
    assert unsettled.decided_ply == len(tokens)
    assert analyse(CLASSIC, tokens, 0, settle(oracle)).decided_ply is None  # e.g. a forfeit


def test_a_games_file_without_moves_is_one_line(tmp_path):
    bare = tmp_path / "games.csv"
    bare.write_text("first,second,result\nA,B,1\n")
    out = subprocess.run([sys.executable, "-m", "arena", "analyze", str(bare)],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 1 and "no game has its moves" in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_unsettled_positions_leave_moves_unjudged():
    record = MoveRecord(3, 2, "d4", None, 0)
    assert not record.judged and not record.blunder and not record.optimal
    stats = bot_stats([("A", "B", [record, MoveRecord(4, 1, "d4", 1, -2)])])
    a, b = stats
    assert (a.bot, a.total.moves, a.total.blunders, a.unjudged) == ("A", 1, 1, 0)
    assert (b.bot, b.total.moves, b.unjudged) == ("B", 0, 1)
    assert math.isnan(b.row()["blunder_rate"]) and a.row()["blunder_rate"] == 100.0


def test_the_blunder_rate_counts_only_moves_that_could_be_one():
    # P throws the win away at once and then plays on in lost positions; Q plays four exact
    # moves and then turns a win into a draw. Over all moves P looked the more careful (9.1%
    # against 20%); over the moves from won or drawn positions each blundered every chance
    # it had: P 1 of 1 a game, Q 1 of 5
    thrown = [MoveRecord(0, 1, "d1", 3, -2)] + [
        MoveRecord(2 * k, 1, "a1", -2, -2) for k in range(1, 11)]
    slip = [MoveRecord(2 * k, 1, "d1", 3, 3) for k in range(4)] + [MoveRecord(8, 1, "a1", 3, 0)]
    games = [("P", "x", thrown) for _ in range(10)] + [("Q", "x", slip) for _ in range(10)]
    rows = {s.bot: s.row() for s in bot_stats(games)}
    assert rows["P"]["blunder_rate"] == pytest.approx(100.0)
    assert rows["P"]["blunder_chances"] == 10
    assert rows["Q"]["blunder_rate"] == pytest.approx(20.0)
    assert rows["Q"]["blunder_low"] < 20.0 < rows["Q"]["blunder_high"]
    assert rows["P"]["accuracy"] == pytest.approx(100 * 100 / 110)  # accuracy: every move


def test_wilson_interval():
    low, high = wilson(0, 10)
    assert low == 0.0 and high == pytest.approx(0.27753, abs=1e-4)
    low, high = wilson(5, 10)
    assert (low, high) == (pytest.approx(0.23659, abs=1e-4), pytest.approx(0.76341, abs=1e-4))
    assert all(math.isnan(x) for x in wilson(0, 0))


def test_arena_analyze_stores_beside_the_games_and_reuses_them(oracle, tmp_path):
    lines = []
    rows = pons("Test_L3_R1", 40)
    won = next(i for i, (_, score) in enumerate(rows) if score > 0)
    for i, (moves, _) in enumerate([rows[won]] + rows[:3]):
        # the first game has one blunder: its won reference position thrown away
        game = play_out(oracle, moves, blunder_at=len(moves) if i == 0 else None)
        winner = game.outcome.winner
        lines.append(json.dumps({
            "game_id": f"g{i}", "first": "A", "second": "B", "variant": "classic",
            "result": 0.5 if winner is None else float(winner == 1),
            "moves": " ".join(format_move(m) for m in game.moves),
            "opening": " ".join(format_move(int(d)) for d in moves)}))
    games = tmp_path / "games.jsonl"
    games.write_text("\n".join(lines) + "\n")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "arena", "analyze", str(games), *args],
                              capture_output=True, text=True, cwd=ROOT, timeout=240)

    out = run("--format", "json")
    assert out.returncode == 0, out.stderr
    assert "analysed 4 new game(s), 0 already analysed" in out.stderr
    rows = {r["bot"]: r for r in json.loads(out.stdout)}
    assert rows["A"]["blunders"] + rows["B"]["blunders"] == 1
    assert rows["A"]["moves"] + rows["B"]["moves"] > 0
    db = tmp_path / "games.jsonl.analysis.db"
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM analysed_games").fetchone()[0] == 4
    again = run("--games", "--format", "csv")
    assert again.returncode == 0 and "analysed 0 new game(s), 4 already analysed" in again.stderr
    header, *body = again.stdout.splitlines()
    assert header.startswith("game_id,variant,first,second,result,plies,decided_ply") and len(body) == 4


def test_arena_analyze_bad_input_is_one_line(tmp_path):
    bad = tmp_path / "games.jsonl"
    bad.write_text(json.dumps({"first": "A", "second": "B", "result": 1, "variant": "classic",
                               "moves": "d1 d1 d1 d1 d1 d1 d1"}) + "\n")
    out = subprocess.run([sys.executable, "-m", "arena", "analyze", str(bad)],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode != 0
    assert len(out.stderr.strip().splitlines()) == 1 and "cannot replay" in out.stderr
    assert "Traceback" not in out.stderr


def test_games_written_by_arena_play_json_are_read(oracle, tmp_path):
    """`arena play --json` writes moves and opening as lists."""
    moves, _ = next((m, s) for m, s in pons("Test_L3_R1", 40) if s > 0)
    game = play_out(oracle, moves)
    tokens = [format_move(m) for m in game.moves]
    games = tmp_path / "play.jsonl"
    games.write_text(json.dumps({
        "game_id": "g0001", "first": "A", "second": "B", "variant": "classic",
        "result": float(game.outcome.winner == 1), "moves": tokens,
        "opening": tokens[:len(moves)]}) + "\n")
    out = subprocess.run([sys.executable, "-m", "arena", "analyze", str(games), "--games",
                          "--format", "json"], capture_output=True, text=True, cwd=ROOT,
                         timeout=240)
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout)
    assert row["plies"] == len(tokens) and row["decided_ply"] == len(moves)


def _games_file(oracle: Oracle, path: Path, count: int, bad_last: bool = False) -> list[str]:
    """A JSONL games file of `count` games played out from Pons' end-game positions (the last
    one's moves illegal if `bad_last`); returns the game ids in the file's order."""
    lines = []
    for i, (moves, _) in enumerate(pons("Test_L3_R1", count)):
        game = play_out(oracle, moves)
        tokens = [format_move(m) for m in game.moves]
        if bad_last and i == count - 1:
            tokens = ["d1"] * 7  # a full column, and one more
        winner = game.outcome.winner
        lines.append(json.dumps({
            "game_id": f"g{count - i}", "first": "A", "second": "B", "variant": "classic",
            "result": 0.5 if winner is None else float(winner == 1), "moves": " ".join(tokens),
            "opening": " ".join(format_move(int(d)) for d in moves)}))
    path.write_text("\n".join(lines) + "\n")
    return [json.loads(line)["game_id"] for line in lines]


def _analyze(path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", "analyze", str(path), *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=240)


def test_several_processes_give_the_same_analysis_in_the_games_order(oracle, tmp_path):
    """`--concurrency` (the cores by default) analyses games on several processes; what is
    stored and printed, and in which order, does not depend on it."""
    ids = _games_file(oracle, tmp_path / "one.jsonl", 5)
    (tmp_path / "two.jsonl").write_text((tmp_path / "one.jsonl").read_text())
    one = _analyze(tmp_path / "one.jsonl", "--games", "--format", "json", "-j", "1")
    two = _analyze(tmp_path / "two.jsonl", "--games", "--format", "json", "-j", "3")
    assert one.returncode == 0 and two.returncode == 0, one.stderr + two.stderr
    assert json.loads(one.stdout) == json.loads(two.stdout)
    assert [row["game_id"] for row in json.loads(two.stdout)] == ids  # the file's order
    assert "analysed 5 new game(s)" in two.stderr


def test_a_bad_game_stops_the_workers_and_keeps_the_games_before_it(oracle, tmp_path):
    games = tmp_path / "games.jsonl"
    ids = _games_file(oracle, games, 4, bad_last=True)
    out = _analyze(games, "-j", "2")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert f"game {ids[-1]}: cannot replay its moves" in out.stderr
    with sqlite3.connect(tmp_path / "games.jsonl.analysis.db") as conn:
        stored = [r[0] for r in conn.execute(
            "SELECT game_id FROM analysed_games ORDER BY rowid")]
    assert stored == ids[:-1]


def test_a_first_run_that_kept_nothing_leaves_no_analysis_file(tmp_path):
    # a games file whose only game cannot be replayed left FILE.analysis.db behind (newcomer
    # review); one that kept games keeps its file (the test above)
    games = tmp_path / "bad.csv"
    games.write_text("game_id,first,second,result,moves,variant\ng1,a,b,1,d1 d9,classic\n")
    out = _analyze(games)
    assert out.returncode == 1 and "g1: cannot replay its moves" in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv"]


@pytest.mark.parametrize(("stop", "code", "said"), [
    ("ctrl-c", 130, "Stopped: the games analysed so far are kept"),
    ("sigterm", 143, "Stopped: the games analysed so far are kept"),
    # a worker killed (out of memory, a signal): multiprocessing.Pool waited for it forever
    ("worker-killed", 1, "a solver process ended without its result"),
    # the arena itself killed outright: its workers waited on their queue for ever
    ("parent-killed", -9, ""),
])
def test_a_stopped_run_keeps_the_games_done_and_leaves_no_process(
        oracle, tmp_path, no_leftover_processes, stop, code, said):
    import os
    import random
    import signal
    import time

    from arena.game import Game
    from arena.proctree import is_running

    games = tmp_path / "games.jsonl"
    _games_file(oracle, games, 2)  # two quick ones, then games whose early positions are slow:
    # on 7x7, which has no book (random classic games were slow before the book reached ply 7)
    rng = random.Random(7)
    lines = games.read_text().splitlines()
    for number in range(4):
        game = Game(parse_variant("classic:7x7"))
        while game.outcome is None:
            game.push(rng.choice(game.legal_moves()))
        lines.append(json.dumps({"game_id": f"slow{number}", "first": "A", "second": "B",
                                 "variant": "classic:7x7", "result": 0.5,
                                 "moves": " ".join(format_move(m) for m in game.moves)}))
    games.write_text("\n".join(lines) + "\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "analyze", str(games), "-j", "2", "--budget-ms", "5000"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    db = tmp_path / "games.jsonl.analysis.db"
    try:
        deadline = time.monotonic() + 120
        stored = 0
        while stored < 2 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)  # waiting for a condition the test observes, with a deadline
            if db.exists():
                with sqlite3.connect(db) as conn:
                    try:
                        stored = conn.execute("SELECT COUNT(*) FROM analysed_games").fetchone()[0]
                    except sqlite3.OperationalError:  # made, its tables not yet (a CI failure)
                        continue
        assert stored == 2 and process.poll() is None
        workers = [int(pid) for pid in subprocess.run(
            ["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()]
        assert workers
        if stop == "worker-killed":
            os.kill(workers[0], signal.SIGKILL)
        elif stop == "parent-killed":
            os.kill(process.pid, signal.SIGKILL)
        else:
            # a terminal's Ctrl-C goes to the whole process group; SIGTERM to the arena only
            sig = signal.SIGINT if stop == "ctrl-c" else signal.SIGTERM
            for pid in [process.pid, *workers] if stop == "ctrl-c" else [process.pid]:
                os.kill(pid, sig)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == code, err
    if stop == "parent-killed":  # the workers are no longer the test's descendants: by pid
        deadline = time.monotonic() + 30
        while any(is_running(pid) for pid in workers):
            assert time.monotonic() < deadline, f"workers left behind: {workers}"
            time.sleep(0.1)  # waiting for the kernel to end them, with a deadline
    else:
        assert said in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM analysed_games").fetchone()[0] == 2



def test_only_the_games_still_in_the_source_count():
    # a games file exported again (or cut down) keeps its FILE.analysis.db: the games no longer
    # in it were still counted by analyze's report, standings and the site
    import pandas as pd

    from arena.solver.analysis_store import StoredAnalysis, stored_keys

    def stored(game_id: str, moves: str) -> tuple[dict, list[MoveRecord]]:
        key = stored_keys(game_id, "classic", moves)[0]
        return ({"game_key": key, "game_id": game_id, "variant": "classic", "first": "a",
                 "second": "b"}, [MoveRecord(0, 1, moves.split()[0], 0, 0)])

    rows = [stored("g1", "d1 d2"), stored("g2", "c1 c2"), stored("", "e1 e2")]
    analysis = StoredAnalysis([g for g, _ in rows], {g["game_key"]: m for g, m in rows})
    now = pd.DataFrame({"game_id": ["g1", "game-3", "g2"], "variant": ["classic"] * 3,
                        "moves": ["d1  d2", "e1 e2", "c1 c2 c3"]})  # g2 replayed differently
    kept = analysis.of_games(now)
    assert [g["game_id"] for g in kept.games] == ["g1", ""]
    assert set(kept.moves) == {g["game_key"] for g in kept.games}
    assert analysis.of_games(now.drop(columns=["moves"])).games == []
