"""A researcher's check, end to end through `arena`: the same tournament file run twice at
different concurrency plays the same games (schedule, seeds, and so the moves of seeded bots),
and the standings recomputed from the exported files are those of the results folders, bit for
bit. One run each, a few fast games."""

from __future__ import annotations

import json

import pandas as pd
from tournament_helpers import run_cli, write_toml

from arena.provenance import code_fingerprint

TOURNAMENT = """
name = "repro"
variants = ["classic", "popout"]
games = 2
openings = "builtin"
seed = 11
[time]
move_ms = 500
[[bots]]
path = "random"
name = "ünï 🤖"
[[bots]]
path = "greedy"
[[bots]]
path = "awk"
"""


def standings(path, *args) -> list[dict]:
    done = run_cli("standings", str(path), "--format", "json", "--pairs", *args)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    return [{k: v for k, v in row.items() if k not in ("author", "language")} for row in rows]


def test_two_runs_at_other_concurrency_and_their_exports_agree(tmp_path):
    toml = write_toml(tmp_path / "repro.toml", TOURNAMENT)
    for folder, jobs in (("one", "2"), ("two", "1")):
        done = run_cli("run", str(toml), "--output", str(tmp_path / folder), "--concurrency", jobs,
                       cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    games = {}
    for folder in ("one", "two"):
        out = tmp_path / f"{folder}.csv"
        done = run_cli("export", str(tmp_path / folder), "--format", "csv", "--out", str(out))
        assert done.returncode == 0, done.stderr
        games[folder] = pd.read_csv(out, keep_default_na=False).sort_values("game_id")
    columns = ["game_id", "pair_id", "round", "variant", "first", "second", "opening", "seed",
               "moves", "result"]
    assert len(games["one"]) == 12
    assert games["one"][columns].values.tolist() == games["two"][columns].values.tolist()
    done = run_cli("export", str(tmp_path / "one"), "--format", "jsonl", "--out",
                   str(tmp_path / "one.jsonl"))
    assert done.returncode == 0, done.stderr
    expected = standings(tmp_path / "one")
    assert standings(tmp_path / "two") == expected  # TrueSkill too: not the finish order's
    assert standings(tmp_path / "one.csv") == expected
    assert standings(tmp_path / "one.jsonl") == expected
    for folder, jobs in (("one", 2), ("two", 1)):
        record = json.loads((tmp_path / folder / "provenance.json").read_text(encoding="utf-8"))
        (run,) = record["runs"]
        assert run["concurrency"] == jobs and run["arena_code"] == code_fingerprint()
        assert record["settings"]["seed"] == 11 and record["games"] == 12
