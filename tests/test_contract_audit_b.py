"""Contract audit (issues 5 and 7): gaps found by running the real commands, pinned by tests.

- Issue 5: "95% intervals (say in the output how they are computed: covariance or bootstrap)" —
  the csv / json outputs of `arena standings` did not say it (only the table notes did); they now
  carry an ``elo_interval`` column, and ``first_move_elo`` when ``--first-move`` is given.
- Issue 5: `bench/ratings.py` prints ``name: value unit``; the throughput value had a thousands
  separator (``373,949``), so it did not parse as a number.
- Issue 7: the site's leaderboard note now says how the interval is computed.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from arena.cli import main

ROOT = Path(__file__).resolve().parents[1]
REQUIRED = ["bot", "games", "wins", "draws", "losses", "score", "elo", "elo_lo", "elo_hi",
            "ts_mu", "ts_sigma"]


def _games_csv(path: Path) -> Path:
    rows = []
    results = ["1-0", "0-1", "1/2-1/2", "1", "0", "0.5"]
    bots = ["A", "B", "C"]
    k = 0
    for _ in range(4):
        for a in bots:
            for b in bots:
                if a != b:
                    rows.append({"first": a, "second": b, "result": results[k % len(results)],
                                 "variant": "classic" if k % 2 else "popout"})
                    k += 1
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_json_standings_say_how_intervals_are_computed(tmp_path):
    games = _games_csv(tmp_path / "games.csv")
    rows = json.loads(_run("standings", str(games), "--format", "json"))
    assert isinstance(rows, list) and rows
    for row in rows:
        assert set(REQUIRED) <= set(row)
        assert row["elo_interval"] == "covariance"
        assert "first_move_elo" not in row
    elos = [r["elo"] for r in rows]
    assert elos == sorted(elos, reverse=True)

    rows = json.loads(_run("standings", str(games), "--format", "json", "--bootstrap", "20",
                           "--first-move"))
    assert {r["elo_interval"] for r in rows} == {"bootstrap"}
    fm = {r["first_move_elo"] for r in rows}
    assert len(fm) == 1 and isinstance(fm.pop(), float)


def test_csv_standings_say_how_intervals_are_computed(tmp_path):
    games = _games_csv(tmp_path / "games.csv")
    out = _run("standings", str(games), "--format", "csv", "--variant", "classic")
    table = list(csv.DictReader(io.StringIO(out)))
    assert table and set(REQUIRED) <= set(table[0])
    assert {r["elo_interval"] for r in table} == {"covariance"}


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
        float(value)  # no thousands separators: a script can parse every value
        assert unit, line


def test_site_leaderboard_note_names_the_interval_method(tmp_path):
    from arena.publish.site import build_site

    games = _games_csv(tmp_path / "games.csv")
    out = build_site(str(games), str(tmp_path / "site"), plots=False)
    index = (Path(out) / "index.html").read_text(encoding="utf-8")
    assert "covariance" in index
