"""`python bench/ratings.py` prints one `name: value unit` line per figure, each value a plain number."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_bench_ratings_prints_numeric_values():
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "ratings.py"), "--bots", "6", "--games", "3000"],
        capture_output=True, text=True, timeout=120, check=True)
    lines = [ln for ln in done.stdout.splitlines() if ln.strip()]
    assert any(ln.startswith("standings_throughput:") for ln in lines)
    for line in lines:
        name, sep, rest = line.partition(": ")
        assert sep and name and " " not in name, line
        value, _, unit = rest.partition(" ")
        float(value)  # no thousands separators (373,949 was one): a script can parse every value
        assert unit, line
