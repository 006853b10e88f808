"""Games files of two runs of one tournament joined (a replication on another machine) repeat
every game id and pair id: their seat-swapped pairs still count, each run's with its own."""

from __future__ import annotations

import pandas as pd

from arena.ratings.pairs import pentanomial_counts


def run(results: list[float]) -> pd.DataFrame:
    """Two pairs of a vs b (ids as a schedule makes them: the same in every run)."""
    rows = []
    for k, (r1, r2) in enumerate(zip(results[0::2], results[1::2], strict=True)):
        rows.append({"game_id": f"g{k}a", "pair_id": f"p{k}", "first": "a", "second": "b",
                     "result": r1})
        rows.append({"game_id": f"g{k}b", "pair_id": f"p{k}", "first": "b", "second": "a",
                     "result": r2})
    return pd.DataFrame(rows)


def counts(games: pd.DataFrame) -> list[int]:
    row = pentanomial_counts(games).iloc[0]
    return [int(row[f"p{i}"]) for i in range(5)]


def test_joined_runs_keep_every_pair():
    one, two = run([1.0, 0.0, 1.0, 1.0]), run([0.0, 1.0, 0.5, 0.5])
    assert counts(one) == [0, 0, 1, 0, 1] and counts(two) == [1, 0, 1, 0, 0]
    joined = pd.concat([one, two], ignore_index=True)
    assert counts(joined) == [1, 0, 2, 0, 1]  # was [0, 0, 0, 0, 0]: every pair lost
    assert int(pentanomial_counts(joined)["pairs"].iloc[0]) == 4


def test_a_lone_copy_stays_out():
    one, two = run([1.0, 0.0]), run([1.0, 1.0])
    joined = pd.concat([one, two.iloc[:1]], ignore_index=True)  # the second run was cut short
    assert counts(joined) == [0, 0, 0, 0, 1]  # the first run's pair
