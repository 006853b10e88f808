"""One rating fit and one percentile rule, whichever report shows them."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import arena.ratings.facts as facts
from arena.cli import main
from arena.ratings.elo import count_pairs, elo_mle, elo_ratings, fit_elo
from arena.ratings.facts import bot_facts
from arena.ratings.pairs import pairwise_table
from arena.ratings.standings import compute_standings
from arena.stats import percentile


def seat_biased_games(n: int = 300, seed: int = 3) -> pd.DataFrame:
    """Strong first-move advantage and unbalanced seats: a first-move fit moves the ratings."""
    rng = np.random.default_rng(seed)
    bots = ["ann", "bob", "cid", "dan"]
    rows = []
    for k in range(n):
        a, b = rng.choice(4, 2, replace=False)
        if rng.random() < 0.8 and a > b:  # lower-index bots mostly move first
            a, b = b, a
        p = 1 / (1 + 10 ** (-(60.0 * (b - a) + 150.0) / 400))
        u = rng.random()
        rows.append({"seq": k + 1, "first": bots[a], "second": bots[b],
                     "result": 1.0 if u < p - 0.1 else 0.5 if u < p + 0.1 else 0.0})
    return pd.DataFrame(rows)


def test_move_time_percentiles_follow_the_one_rule():
    games = pd.DataFrame({"first": ["a"], "second": ["b"], "result": [1.0],
                          "move_ms": [json.dumps([v for t in range(1, 11) for v in (t, 0)])]})
    row = bot_facts(games).set_index("bot").loc["a"]
    assert facts.percentile is percentile
    times = list(range(1, 11))
    assert row["ms_p90"] == pytest.approx(percentile(times, 90)) == pytest.approx(9.1)
    assert row["ms_p50"] == pytest.approx(5.5) and row["ms_p99"] == pytest.approx(9.91)


def test_standings_elo_is_the_one_fit_the_live_table_can_call():
    games = seat_biased_games()
    extra = pd.DataFrame({"seq": [1000, 1001], "first": ["ann", "ghost"], "second": ["ann", "bob"],
                          "result": [1.0, np.nan]})  # self-play and a void game
    games = pd.concat([games, extra], ignore_index=True)
    table = compute_standings(games)
    standings = dict(zip(table["bot"], table["elo"], strict=True))
    assert set(standings) == {"ann", "bob", "cid", "dan"}
    live = elo_ratings(games["first"].tolist(), games["second"].tolist(),
                       games["result"].tolist())
    assert live == pytest.approx(standings, abs=1e-9)
    assert elo_mle(games).as_dict() == pytest.approx(standings, abs=1e-9)
    counted = fit_elo(count_pairs(games["first"], games["second"], games["result"]))
    assert counted.as_dict() == pytest.approx(standings, abs=1e-9)
    anchored = elo_ratings(games["first"], games["second"], games["result"], anchor=("bob", 1500))
    assert anchored["bob"] == 1500.0
    assert anchored["ann"] - anchored["cid"] == pytest.approx(standings["ann"] - standings["cid"])


def test_head_to_head_shows_the_standings_fit_even_with_first_move():
    games = seat_biased_games()
    table = compute_standings(games, first_move=True)
    rating = dict(zip(table["bot"], table["elo"], strict=True))
    pairs = pairwise_table(games, ratings=rating)
    for row in pairs.itertuples(index=False):
        assert row.mle_diff == pytest.approx(rating[row.bot_a] - rating[row.bot_b])
    plain = pairwise_table(games)  # without ratings: the same fit_elo, the same default
    assert np.allclose(plain["mle_diff"].to_numpy(), pairs["mle_diff"].to_numpy())
    unfitted = compute_standings(games, first_move=False)
    other = pairwise_table(games, ratings=dict(zip(unfitted["bot"], unfitted["elo"], strict=True)))
    assert not np.allclose(other["mle_diff"].to_numpy(), pairs["mle_diff"].to_numpy())


def test_cli_pairs_use_the_standings_fit(tmp_path):
    path = tmp_path / "games.csv"
    seat_biased_games().to_csv(path, index=False)
    runner = CliRunner()
    stand = runner.invoke(main, ["standings", str(path), "--first-move", "--format", "json",
                                 "--no-trueskill"])
    assert stand.exit_code == 0, stand.output
    rating = {r["bot"]: r["elo"] for r in json.loads(stand.output)}
    res = runner.invoke(main, ["standings", str(path), "--first-move", "--pairs", "--format",
                               "json"])
    assert res.exit_code == 0, res.output
    for row in json.loads(res.output):
        assert row["mle_diff"] == pytest.approx(rating[row["bot_a"]] - rating[row["bot_b"]])


def test_bots_with_the_same_results_share_a_rank_whatever_the_float_noise():
    """Two bots with the same W/D/L were ranked 1 and 2 by the 14th digit of their Elo (site
    review): they share rank 1, listed by name, and the next bot is third."""
    import pandas as pd

    from arena.ratings.standings import compute_standings

    games = pd.DataFrame({"first": ["b", "c", "a", "c", "b", "a"],
                          "second": ["c", "b", "c", "a", "a", "b"],
                          "result": [1.0, 0.0, 1.0, 0.0, 0.5, 0.5], "variant": ["classic"] * 6})
    table = compute_standings(games)
    assert table["bot"].tolist() == ["a", "b", "c"] and table["rank"].tolist() == [1, 1, 3]
