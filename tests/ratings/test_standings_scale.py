"""Standings at scale: a compact, vectorised games loader, TrueSkill optional, one BLAS thread.

Speed and memory goals are measured by bench/ratings.py; these tests pin the behaviour that
makes them possible (and that the fast paths give the same answers as the careful ones).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.ratings.standings import compute_standings
from arena.ratings.table import CodedGames, codes
from arena.reports import games_io
from arena.reports.games_io import GamesFileError, load_games

ROOT = Path(__file__).resolve().parents[2]


def synthetic_csv(path: Path, n: int, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    bots = np.array([f"bot{k:02d}" for k in range(12)], dtype=object)
    a = rng.integers(0, 12, n)
    b = (a + rng.integers(1, 12, n)) % 12
    results = np.array(["1", "0", "1/2-1/2", "0.5", "1-0", "*"], dtype=object)
    pd.DataFrame({"seq": np.arange(1, n + 1), "variant": rng.choice(["classic", "popout"], n),
                  "first": bots[a], "second": bots[b],
                  "result": results[rng.integers(0, 6, n)]}).to_csv(path, index=False)
    return path


def test_fast_loader_equals_the_careful_reader(tmp_path):
    path = synthetic_csv(tmp_path / "g.csv", 3000)
    fast = load_games(path)
    careful_raw, line_of = games_io._read_csv_careful(path, ",")
    careful = games_io._normalise(careful_raw, path, line_of)
    for col in ("first", "second", "variant", "game_id"):
        assert fast[col].astype(str).tolist() == careful[col].astype(str).tolist(), col
    np.testing.assert_array_equal(fast["result"].to_numpy(), careful["result"].to_numpy())
    np.testing.assert_array_equal(fast["seq"].to_numpy(), careful["seq"].to_numpy())
    a, b = compute_standings(fast), compute_standings(careful)
    pd.testing.assert_frame_equal(a, b)


def test_loaded_table_is_compact_and_keeps_no_per_row_lists(tmp_path):
    path = tmp_path / "g.csv"
    pd.DataFrame({"first": ["a", "b"] * 10000, "second": ["b", "a"] * 10000,
                  "result": ["1", "0-1"] * 10000}).to_csv(path, index=False)
    games = load_games(path)
    # a per-row list in attrs is deep-copied by every pandas operation (31.9 s for 1 M games)
    assert not any(isinstance(v, list | np.ndarray) for v in games.attrs.values())
    assert isinstance(games["first"].dtype, pd.CategoricalDtype)
    per_row = games.memory_usage(deep=True, index=False).sum() / len(games)
    assert per_row < 200, per_row  # was over 400 bytes a row: object columns of ""
    assert games["moves"].astype(str).eq("").all() and games["game_id"].iat[-1] == "20000"


@pytest.mark.parametrize("content, line", [
    ('first,second,result,detail\na,b,1,"two\nlines"\nb,a,7,x\n', 4),  # quoted newline
    ("first,second,result\na,b,1\n  \nb,a,7\n", 4),  # a whitespace-only line
    ("\n\nfirst,second,result\na,b,1\n\nb,a,7\n", 6),  # blank lines before the header
])
def test_error_lines_without_stored_line_numbers(tmp_path, content, line):
    path = tmp_path / "g.csv"
    path.write_text(content)
    with pytest.raises(GamesFileError, match=rf"g.csv line {line}, column result: cannot read"):
        load_games(path)


def test_bot_names_are_stripped_and_merged(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("first,second,result\n a ,b,1\na, b ,0\n")
    games = load_games(path)
    assert games["first"].astype(str).tolist() == ["a", "a"]
    assert compute_standings(games)["games"].tolist() == [2, 2]


def test_categorical_codes_match_string_codes():
    first = pd.Series(["c", "a", "b", "a"], dtype=pd.CategoricalDtype(["z", "c", "b", "a"]))
    second = pd.Series(["a", "c", "c", "b"], dtype=pd.CategoricalDtype(["b", "c", "a"]))
    i, j, names = codes(first, second, None)
    i2, j2, names2 = codes(first.astype(str).tolist(), second.astype(str).tolist(), None)
    assert names == names2 == ["a", "b", "c"]  # "z" is never used
    assert i.tolist() == i2.tolist() and j.tolist() == j2.tolist()
    coded = CodedGames.from_frame(pd.DataFrame({"first": first, "second": second,
                                                "result": [1.0, np.nan, 0.5, 0.0]}))
    assert coded.names == ["a", "b", "c"] and len(coded) == 3


def test_no_trueskill(tmp_path):
    path = synthetic_csv(tmp_path / "g.csv", 400)
    runner = CliRunner()
    res = runner.invoke(main, ["standings", str(path), "--no-trueskill", "--format", "json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert rows and "ts_mu" not in rows[0] and "elo" in rows[0]
    text = runner.invoke(main, ["standings", str(path), "--no-trueskill"]).output
    assert "TS mu" not in text and "TrueSkill" not in text and "95% interval" in text
    full = json.loads(runner.invoke(main, ["standings", str(path), "--format", "json"]).stdout)
    assert [r["elo"] for r in full] == [r["elo"] for r in rows]


SPY = """
import os, sys
class Spy:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":
            print("numpy loads with", os.environ.get("OPENBLAS_NUM_THREADS"), flush=True)
            sys.meta_path.remove(self)
        return None
sys.meta_path.insert(0, Spy())
from arena.cli import main
sys.argv = ["arena", "standings", sys.argv[1], "--format", "json"]
main()
"""


@pytest.mark.parametrize("preset, expected", [(None, "1"), ("2", "2")])
def test_blas_threads_limited_before_numpy_loads(tmp_path, preset, expected):
    path = synthetic_csv(tmp_path / "g.csv", 50)
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env["PYTHONPATH"] = str(ROOT)
    if preset is not None:
        env["OPENBLAS_NUM_THREADS"] = preset  # the user's choice wins
    done = subprocess.run([sys.executable, "-c", SPY, str(path)], capture_output=True,
                          text=True, env=env, timeout=120, check=True)
    assert done.stdout.splitlines()[0] == f"numpy loads with {expected}"
