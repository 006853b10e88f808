"""The site shows `arena analyze`: an accuracy column with the numbers the command prints, blunders
and theoretical values in the replays; no analysis, no column; a damaged one, a warning.

A tiny results folder is written through the store: classic games played perfectly by the solver
from late reference positions (fast to analyse), one with a known blunder, and one PopOut game (a
variant the solver cannot settle). `arena analyze` runs as a user runs it, then the site is built.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.game import PRESETS, Game, format_move, parse_variant
from arena.publish import accuracy
from arena.publish.site import build_site
from arena.solver.analysis import MoveRecord, moves_to_win, position_scores
from arena.solver.analysis_store import StoredAnalysis, game_key
from tests.solver_helpers import play_out

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "bench" / "data" / "connect4"  # Pons' test positions (tracked)
CLASSIC = PRESETS["classic"]
NAMES = {1: "alpha", 2: "beta"}


# -- pure parts: no solver, no files ------------------------------------------------------------

def test_theory_text_counts_the_winners_moves():
    names = {1: "a", 2: "b"}
    assert accuracy.theory_text(None, 1, 20, names) == "unknown"
    assert accuracy.theory_text(0, 2, 20, names) == "draw"
    # the side to move wins with the move it makes now: 1 empty cell, score (1 + 1) // 2
    assert accuracy.theory_text(1, 2, 1, names) == "second player (b) wins in 1 move"
    # seat 1 to move loses: seat 2 wins on its first move, made with 9 cells left (score 5)
    assert accuracy.theory_text(-5, 1, 10, names) == "second player (b) wins in 1 move"
    assert moves_to_win(5, 10) == 1 and moves_to_win(3, 10) == 3 and moves_to_win(-3, 10) == 3


def test_move_verdicts_and_position_scores_from_stored_records():
    records = [MoveRecord(2, 1, "d4", 3, 3), MoveRecord(3, 2, "d4", -3, -3),
               MoveRecord(4, 1, "d5", 3, 0), MoveRecord(5, 2, "d1", 0, -2),
               MoveRecord(6, 1, "d2", 2, 1), MoveRecord(7, 2, "d3", None, 4)]
    kinds = [(accuracy.move_verdict(r) or {}).get("kind") for r in records]
    assert kinds == ["optimal", "optimal", "blunder", "blunder", "inexact", None]
    assert accuracy.move_verdict(records[2])["text"] == "blunder: win → draw"
    assert accuracy.move_verdict(records[3])["text"] == "blunder: draw → loss"
    assert accuracy.move_verdict(None) is None
    # positions 0-1 are the opening (never analysed); a game not over gets its last position's
    # value from the last move's `after`, a finished one none
    assert position_scores(records, 8, over=False) == [None, None, 3, -3, 3, 0, 2, None, -4]
    assert position_scores(records, 8, over=True)[-1] is None


def _stored() -> StoredAnalysis:
    games = [{"game_key": "g1#x", "game_id": "g1", "variant": "classic", "first": "a", "second": "b"},
             {"game_key": "g2#y", "game_id": "g2", "variant": "classic:6x5", "first": "b", "second": "a"}]
    moves = {"g1#x": [MoveRecord(0, 1, "d4", 1, 1), MoveRecord(1, 2, "d4", -1, 0)],
             "g2#y": [MoveRecord(0, 1, "d1", 0, -1)]}
    return StoredAnalysis(games, moves)


def test_scope_accuracy_follows_the_variant_switcher():
    stored = _stored()
    scopes = ["all", "classic", "classic:6x5", "popout"]
    spec_of = {"all": None, "classic": "classic", "classic:6x5": "classic:6x5", "popout": "popout"}
    by_scope = accuracy.scope_accuracy(stored, scopes, spec_of)
    assert set(by_scope) == {"all", "classic", "classic:6x5"}  # no analysed PopOut game: no column
    # the all scope is exactly what `arena analyze` prints (every analysed game)
    assert {b: r["accuracy"] for b, r in by_scope["all"].items()} == {
        r["bot"]: r["accuracy"] for r in stored.bot_rows()}
    assert by_scope["classic"]["a"]["accuracy_f"] == 1.0 and by_scope["classic"]["b"]["blunders"] == 0
    assert by_scope["classic:6x5"]["b"]["blunders"] == 1 and "a" in by_scope["classic:6x5"]
    assert math.isclose(by_scope["classic:6x5"]["b"]["blunder_f"], 1.0)
    assert accuracy.scope_accuracy(None, scopes, spec_of) == {}


def test_games_are_found_under_the_key_arena_analyze_gave_them():
    spec = parse_variant("classic").spec
    known = {game_key("g7", spec, "d4 d4"), game_key("", spec, "d1 d2")}
    assert accuracy.analysis_key(known, "g7", "classic", "d4  d4") == game_key("g7", spec, "d4 d4")
    # a games file without ids: analysed under '', published as game-<seq>
    assert accuracy.analysis_key(known, "game-2", spec, "d1 d2") == game_key("", spec, "d1 d2")
    assert accuracy.analysis_key(known, "g7", "classic", "d4 d5") is None
    assert accuracy.analysis_key(known, "g7", "no-such-variant", "d4 d4") is None
    counts = accuracy.analysed_counts(["a", "a", "b"], ["k", None, None], ["all", "a", "b"],
                                      {"all": None, "a": "a", "b": "b"})
    assert counts == {"all": (1, 3), "a": (1, 2), "b": (0, 1)}


# -- a real results folder, analysed by `arena analyze` ------------------------------------------

def _arena(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=240)
    assert done.returncode == 0, f"arena {' '.join(args)} failed:\n{done.stderr}"
    return done


def _row(game_id: str, variant: str, first: str, second: str, game: Game, opening: list[str]) -> dict:
    winner = game.outcome.winner
    moves = [format_move(m) for m in game.moves]
    return {"game_id": game_id, "variant": variant, "first": first, "second": second,
            "result": 0.5 if winner is None else float(winner == 1), "winner": winner,
            "reason": game.outcome.reason, "plies": len(moves), "moves": " ".join(moves),
            "opening": " ".join(opening), "move_ms": json.dumps([1.0] * len(moves)),
            "started_at": "2024-05-01T10:00:00Z", "finished_at": "2024-05-01T10:00:01Z"}


@pytest.fixture(scope="module")
def analysed(tmp_path_factory) -> dict:
    pytest.importorskip("numba", reason="the exact solver needs numba: pip install -e .")
    from arena.solver.oracle import Oracle
    from arena.tournament.store import Store

    oracle = Oracle(CLASSIC)
    lines = [line.split() for line in (REFERENCE / "Test_L3_R1").read_text().splitlines() if line]
    won = next(m for m, s in lines if int(s) > 0)
    prefixes = [won] + [m for m, _ in lines[:3] if m != won]
    results = tmp_path_factory.mktemp("analysed") / "results"
    with Store(results) as store:
        store.save_settings({"name": "perfect cup"}, {"bots": {}})
        for i, prefix in enumerate(prefixes):
            game = play_out(oracle, prefix, blunder_at=len(prefix) if i == 0 else None)
            seats = (NAMES[1], NAMES[2]) if i % 2 == 0 else (NAMES[2], NAMES[1])
            opening = [format_move(int(d)) for d in prefix]
            store.add_game(_row(f"g{i}", CLASSIC.spec, *seats, game, opening))
        popout = Game(parse_variant("popout"))
        for token in "d1 d2 d1 d2 d1 d2 d1".split():
            popout.push(int(token[1:]))
        store.add_game(_row("pop1", parse_variant("popout").spec, "alpha", "beta", popout, []))
    bare = tmp_path_factory.mktemp("bare") / "results"  # the same games, never analysed
    shutil.copytree(results, bare)
    report = json.loads(_arena("analyze", str(results), "--format", "json").stdout)
    blunder_ply = len(prefixes[0])
    return {"results": results, "bare": bare, "report": {r["bot"]: r for r in report},
            "blunder_ply": blunder_ply, "classic_games": len(prefixes),
            "blunderer": NAMES[1] if blunder_ply % 2 == 0 else NAMES[2],  # g0: alpha moves first
            "tmp": tmp_path_factory.mktemp("sites")}


def _leaderboard_cells(html: str, scope: str) -> dict[str, dict[str, float]]:
    """bot -> the raw values of its accuracy and blunder cells in one scope's leaderboard."""
    table = re.search(rf'<table class="leaderboard" data-leaderboard="{re.escape(scope)}".*?</table>',
                      html, re.S).group(0)
    cells = {}
    for bot, row in re.findall(r'<tr data-bot="([^"]+)"(.*?)</tr>', table, re.S):
        acc = re.search(r'class="num accuracy"[^>]*data-value="([^"]+)"[^>]*>([^<]*)<', row)
        bl = re.search(r'class="num blunders"[^>]*data-value="([^"]+)"[^>]*data-low="([^"]+)"'
                       r'[^>]*data-high="([^"]+)"[^>]*>([^<]*)<', row)
        if acc and bl:
            cells[bot] = {"accuracy": float(acc.group(1)), "accuracy_text": acc.group(2),
                          "blunder_rate": float(bl.group(1)), "blunder_low": float(bl.group(2)),
                          "blunder_high": float(bl.group(3)), "blunder_text": bl.group(4)}
    return cells


def _replay(page: Path) -> dict:
    html = page.read_text(encoding="utf-8")
    return json.loads(re.search(r'id="replay-data">(.*?)</script>', html, re.S).group(1))


def test_leaderboard_accuracy_is_what_arena_analyze_prints(analysed):
    warnings: list[str] = []
    site = build_site(analysed["results"], analysed["tmp"] / "site", plots=False,
                      warn=warnings.append)
    assert warnings == []
    html = (site / "index.html").read_text(encoding="utf-8")
    report = analysed["report"]
    for scope in ("all", CLASSIC.spec):  # only classic games are analysed: the same rows
        cells = _leaderboard_cells(html, scope)
        assert set(cells) == set(report) == {"alpha", "beta"}
        for bot, cell in cells.items():
            for field in ("accuracy", "blunder_rate", "blunder_low", "blunder_high"):
                assert cell[field] == pytest.approx(report[bot][field], abs=1e-9), (scope, bot)
            assert cell["accuracy_text"] == f"{report[bot]['accuracy']:.1f}%"
            assert cell["blunder_text"] == f"{report[bot]['blunder_rate']:.1f}%"
    assert report[analysed["blunderer"]]["blunders"] == 1
    # PopOut is a variant the solver cannot settle: its scope has no column
    popout = re.search(r'data-leaderboard="popout".*?</table>', html, re.S).group(0)
    assert "Accuracy" not in popout and "accuracy" not in popout
    n = analysed["classic_games"]
    assert f"{n} of these {n + 1} games analysed: the solver judges games without pops" in html
    bot_page = (site / "bots" / f"{analysed['blunderer']}.html").read_text(encoding="utf-8")
    assert "Against perfect play" in bot_page
    assert f'data-value="{report[analysed["blunderer"]]["blunder_rate"]}"' in bot_page


def test_standings_show_the_accuracy_arena_analyze_prints(analysed):
    """`arena standings` reads the same analysis: its accuracy and blunder-rate columns are the
    rows of `arena analyze`, in the pooled table and a variant's; none without an analysis."""
    report = analysed["report"]
    for extra in ((), ("--variant", CLASSIC.spec)):
        done = _arena("standings", str(analysed["results"]), "--format", "json", *extra)
        assert done.returncode == 0, done.stderr
        rows = {r["bot"]: r for r in json.loads(done.stdout)}
        for bot in ("alpha", "beta"):
            assert rows[bot]["accuracy"] == pytest.approx(report[bot]["accuracy"], abs=1e-9)
            assert rows[bot]["blunder_rate"] == pytest.approx(report[bot]["blunder_rate"], abs=1e-9)
    table = _arena("standings", str(analysed["results"]), "--variant", CLASSIC.spec).stdout
    blunderer = analysed["blunderer"]
    line = next(line for line in table.splitlines() if f" {blunderer} " in line)
    assert "blunders" in table and f"{report[blunderer]['blunder_rate']:.1f}%" in line
    popout = _arena("standings", str(analysed["results"]), "--variant", "popout").stdout
    assert "accuracy" not in popout  # the solver settles no PopOut game: no column
    bare = json.loads(_arena("standings", str(analysed["bare"]), "--format", "json").stdout)
    assert "accuracy" not in bare[0]


def test_replay_marks_the_blunder_and_shows_the_theoretical_value(analysed):
    site = build_site(analysed["results"], analysed["tmp"] / "site-replay", plots=False)
    replay = _replay(site / "games" / "g0.html")
    assert replay["analysed"] is True
    frames, ply = replay["frames"], analysed["blunder_ply"]
    verdicts = {f["ply"]: f["verdict"] for f in frames if f["verdict"]}
    blunders = [p for p, v in verdicts.items() if v["kind"] == "blunder"]
    assert blunders == [ply + 1]  # the move made at 0-based ply `ply` leads to frame ply + 1
    assert verdicts[ply + 1]["text"] in ("blunder: win → draw", "blunder: win → loss")
    assert min(verdicts) == ply + 1  # the opening's moves are nobody's: not judged
    # the reference position is won for the side to move, who then blunders
    mover = frames[ply + 1]["seat"]
    seat = "first" if mover == 1 else "second"
    assert re.fullmatch(rf"{seat} player \({NAMES[mover]}\) wins in \d+ moves?", frames[ply]["theory"])
    assert frames[0]["theory"] == "unknown" and frames[-1]["theory"] == "game over"
    html = (site / "games" / "g0.html").read_text(encoding="utf-8")
    row = re.search(rf'<tr data-ply="{ply + 1}"[^>]*>.*?</tr>', html, re.S).group(0)
    assert 'class="blunder"' in row and '<span class="blunder-mark"' in row and "??</span>" in row
    assert "win → " in row
    assert "data-theory" in html and "Theoretical value" in html
    # a perfectly played game has no blunder; a PopOut game no analysis at all
    perfect = _replay(site / "games" / "g1.html")
    assert all(f["verdict"] is None or f["verdict"]["kind"] == "optimal" for f in perfect["frames"])
    assert "analysed" not in _replay(site / "games" / "pop1.html")


def test_no_analysis_no_column(analysed):
    site = build_site(analysed["bare"], analysed["tmp"] / "site-bare", plots=False)
    html = (site / "index.html").read_text(encoding="utf-8")
    assert "Accuracy" not in html and 'class="num accuracy"' not in html
    game = (site / "games" / "g0.html").read_text(encoding="utf-8")
    assert "Theoretical value" not in game and "blunder-mark" not in game
    assert "analysed" not in _replay(site / "games" / "g0.html")
    assert "Against perfect play" not in (site / "bots" / "alpha.html").read_text(encoding="utf-8")


def test_a_damaged_analysis_warns_in_one_line_and_the_site_builds(analysed):
    damaged = analysed["tmp"] / "damaged"
    shutil.copytree(analysed["bare"], damaged)
    (damaged / "analysis.db").write_bytes(b"this is not an SQLite database\n" * 40)
    warnings: list[str] = []
    site = build_site(damaged, analysed["tmp"] / "site-damaged", plots=False, warn=warnings.append)
    assert len(warnings) == 1 and "\n" not in warnings[0]
    assert "analysis.db" in warnings[0] and "no accuracy" in warnings[0]
    assert 'class="num accuracy"' not in (site / "index.html").read_text(encoding="utf-8")


def test_a_read_only_results_folder_is_read_and_left_as_it_was(analysed):
    frozen = analysed["tmp"] / "frozen"
    shutil.copytree(analysed["results"], frozen)
    files = [p for p in frozen.rglob("*") if p.is_file()]
    for path in files:
        path.chmod(0o444)
    for folder in [frozen, *(p for p in frozen.rglob("*") if p.is_dir())]:
        folder.chmod(0o555)
    before = sorted(str(p.relative_to(frozen)) for p in frozen.rglob("*"))
    try:
        site = build_site(frozen, analysed["tmp"] / "site-frozen", plots=False)
        assert 'class="num accuracy"' in (site / "index.html").read_text(encoding="utf-8")
        # no journal, -wal or -shm file left beside analysis.db (or games.db)
        assert sorted(str(p.relative_to(frozen)) for p in frozen.rglob("*")) == before
    finally:
        for folder in [frozen, *(p for p in frozen.rglob("*") if p.is_dir())]:
            folder.chmod(0o755)
