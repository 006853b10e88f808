"""`python bench/scheduling.py`'s choice figures: one `name: value unit` line each, plain numbers."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_bench_scheduling_times_a_choice_read_every_time_and_tallied():
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "scheduling.py"), "--no-simulation", "--bots", "6",
         "--choice-games", "200", "--choices", "3"],
        capture_output=True, text=True, timeout=120, check=True)
    figures = {}
    for line in done.stdout.splitlines():
        name, sep, rest = line.partition(": ")
        value, _, unit = rest.partition(" ")
        assert sep and " " not in name and unit, line
        figures[name] = float(value)
    assert set(figures) == {"league_choice_every_game_200_games", "league_choice_tally_200_games",
                            "league_choice_speedup_200_games", "league_tally_first_read_200_games"}
