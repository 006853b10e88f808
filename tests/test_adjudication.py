"""Solver adjudication (issue 16): `play --adjudicate`, `adjudicate = "solver"` in tournament
files, the reason `adjudicated`, and the standings' count of games it cut short."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pandas as pd
import pytest

from arena.ratings.standings import compute_standings
from arena.reasons import ALL_REASONS, END_REASONS, Reason
from arena.tournament.config import ConfigError, load_config
from tests.conftest import ROOT

pytest.importorskip("numba", reason="the exact solver needs numba (a declared dependency)")


def arena(*args: str, cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_the_adjudication_note_names_the_variants_the_solver_does_not_take():
    from arena.game import PRESETS, parse_variant
    from arena.solver.scope import adjudication_note

    assert adjudication_note([PRESETS["classic"], parse_variant("classic:6x5")]) is None
    note = adjudication_note([PRESETS["classic"], PRESETS["popout"], PRESETS["five"]])
    assert note is not None
    assert note.endswith("games of popout (pops), five (5 in a row) are played out")


def test_each_variant_the_solver_cannot_take_is_told_why():
    """One test behind `solvable` and its messages: a rule other than the standard one was
    left out of the note's wording, which blamed the board for a misère variant's games."""
    from arena.game import PRESETS, Rules, Variant, parse_variant
    from arena.solver.scope import SCOPE, solvable, unsolvable_message, unsolvable_reason

    class Other(Rules):
        name = "other"

    classic = PRESETS["classic"]
    ruled = Variant(classic.name, classic.columns, classic.rows, classic.connect, classic.pops,
                    max_plies=classic.max_plies, rules=Other())
    cases = {
        "classic": None, "classic:7x7": None, "popout": "pops", "five": "5 in a row",
        "classic:8x7": "8x7 is over 63 bits", "classic,max-plies=20": "a ply cap of 20",
    }
    for spec, why in cases.items():
        reason = unsolvable_reason(parse_variant(spec))
        assert (reason is None) if why is None else why in reason, spec
        assert solvable(parse_variant(spec)) == (why is None)
    assert unsolvable_reason(ruled) == "rule=other, not the standard rules" and not solvable(ruled)
    message = unsolvable_message(parse_variant("popout"))
    assert message == f"popout: the exact solver handles {SCOPE} only (pops)"
    assert unsolvable_message(classic) is None


def test_adjudicated_is_a_reason_of_its_own():
    assert Reason.ADJUDICATED.value in ALL_REASONS and Reason.ADJUDICATED.value not in END_REASONS


def test_play_adjudicate_ends_games_once_the_result_is_proven(no_leftover_processes):
    done = arena("play", "random", "random", "-n", "2", "--move-ms", "500", "--adjudicate",
                 "--openings", "none", "--json", "--sandbox", "off")
    assert done.returncode == 0, done.stderr
    games = [json.loads(line) for line in done.stdout.splitlines()]
    assert {g["reason"] for g in games} <= {"adjudicated", "line", "full"}
    # (a random game that ends by a line at ply 11 or later had a win on the move before it,
    # which the solver proves at once: only a game over by ply 10 escapes adjudication)
    assert any(g["reason"] == "adjudicated" for g in games), (
        [(g["reason"], g["plies"], g["moves"]) for g in games], done.stderr[-2000:])
    for g in games:
        if g["reason"] == "adjudicated":
            assert 10 <= g["plies"] < 42 and g["result"] in (0.0, 0.5, 1.0)


def test_tournament_files_take_adjudicate_and_store_the_reason(tmp_path):
    file = tmp_path / "t.toml"
    file.write_text(f'variants = ["classic", "popout"]\ngames = 4\nadjudicate = "solver"\nsandbox = "off"\n'
                    f'output = "{tmp_path / "out"}"\n[time]\nmove_ms = 500\n'
                    '[[bots]]\npath = "random"\n[[bots]]\npath = "awk"\n')
    assert load_config(file).adjudicate_s is not None
    done = arena("run", str(file))
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(tmp_path / "out" / "games.db") as conn:
        reasons = [r for (r,) in conn.execute("SELECT reason FROM games")]
        settings = conn.execute("SELECT value FROM meta WHERE key='settings'").fetchone()[0]
    assert "adjudicated" in reasons and json.loads(settings)["adjudicate"] == "solver"
    # the solver does not take popout: said, not silently played out (a review finding)
    assert "adjudication applies where the exact solver reaches" in done.stdout + done.stderr
    assert "games of popout (pops) are played out" in done.stdout + done.stderr
    assert "ended early by adjudication" in arena("standings", str(tmp_path / "out")).stdout


def test_a_bad_adjudicate_value_is_a_one_line_error_with_its_line(tmp_path):
    file = tmp_path / "bad.toml"
    file.write_text('variants = ["classic"]\nadjudicate = "tablebase"\n[[bots]]\npath = "random"\n'
                    '[[bots]]\npath = "greedy"\n')
    with pytest.raises(ConfigError, match=r"bad.toml:2: 'adjudicate' must be"):
        load_config(file)
    file.write_text(file.read_text().replace('"tablebase"', "true"))  # read clumsily once
    with pytest.raises(ConfigError, match=r"bad.toml:2: 'adjudicate' must be \"solver\" \(end a "
                       r"game once the exact solver proves its result\) or \"off\", got true$"):
        load_config(file)


def test_standings_count_the_games_adjudication_cut():
    games = pd.DataFrame({"first": ["a", "b", "a"], "second": ["b", "a", "b"],
                          "result": [1.0, 0.0, 0.5], "reason": ["adjudicated", "line", "adjudicated"],
                          "variant": ["classic"] * 3})
    notes = compute_standings(games).attrs["notes"]
    assert any(note.startswith("2 games ended early by adjudication") for note in notes)
