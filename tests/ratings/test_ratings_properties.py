"""Properties of the rating functions: order, seats, degenerate data, SPRT, pentanomial."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.ratings.elo import count_games, elo_history, elo_mle, fit_elo
from arena.ratings.facts import bot_facts, forfeits_by_bot, variant_facts
from arena.ratings.pairs import pairwise_table, penta_stats, pentanomial_counts
from arena.ratings.sequential import sequential_elo
from arena.ratings.sprt import SPRT, llr_trinomial, sprt_bounds
from arena.ratings.standings import compute_standings, select_variant, standings_by_variant
from arena.ratings.trueskill_ratings import trueskill_ratings

BOTS = ["alpha", "beta", "gamma", "delta"]


def random_games(n: int, seed: int, bots=BOTS) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    strength = {b: 100.0 * k for k, b in enumerate(bots)}
    rows = []
    for k in range(n):
        a, b = rng.choice(len(bots), 2, replace=False)
        p = 1 / (1 + 10 ** (-(strength[bots[a]] - strength[bots[b]]) / 400))
        u = rng.random()
        res = 1.0 if u < p - 0.1 else 0.5 if u < p + 0.1 else 0.0
        rows.append({"seq": k + 1, "first": bots[a], "second": bots[b], "result": res})
    return pd.DataFrame(rows)


games_strategy = st.lists(
    st.tuples(st.sampled_from(BOTS), st.sampled_from(BOTS), st.sampled_from([0.0, 0.5, 1.0])),
    min_size=1, max_size=60,
).map(lambda rows: pd.DataFrame(rows, columns=["first", "second", "result"]))


@settings(max_examples=40, deadline=None)
@given(games=games_strategy, seed=st.integers(0, 2**32 - 1))
def test_mle_invariant_to_game_order(games, seed):
    shuffled = games.sample(frac=1.0, random_state=seed % (2**32 - 1)).reset_index(drop=True)
    a, b = elo_mle(games), elo_mle(shuffled)
    assert a.names == b.names
    assert np.all(np.isfinite(a.elo)) and np.all(np.isfinite(a.se))
    np.testing.assert_allclose(a.elo, b.elo, atol=1e-6)
    np.testing.assert_allclose(a.hi - a.lo, b.hi - b.lo, atol=1e-6)


@settings(max_examples=30, deadline=None)
@given(games=games_strategy)
def test_symmetric_set_seat_swap_changes_nothing(games):
    games = games.loc[games["first"] != games["second"]]
    if games.empty:
        return
    mirror = games.rename(columns={"first": "second", "second": "first"})
    mirror = mirror.assign(result=1.0 - mirror["result"])
    sym = pd.concat([games, mirror], ignore_index=True)  # every game also with seats swapped
    swapped = sym.rename(columns={"first": "second", "second": "first"})
    swapped = swapped.assign(result=1.0 - swapped["result"])
    for first_move in (False, True):
        a = elo_mle(sym, first_move=first_move)
        b = elo_mle(swapped, first_move=first_move)
        np.testing.assert_allclose(a.elo, b.elo, atol=1e-6)
        np.testing.assert_allclose(a.se, b.se, atol=1e-6)
        if first_move:
            assert a.first_move == pytest.approx(0.0, abs=1e-6)


def test_bot_that_never_lost_gets_finite_rating_and_wide_interval():
    games = random_games(300, 3, bots=["a", "b", "c"])
    unbeaten = pd.DataFrame({"first": ["z"] * 6 + ["a"] * 6, "second": ["a"] * 6 + ["z"] * 6,
                             "result": [1.0] * 6 + [0.0] * 6})
    fit = elo_mle(pd.concat([games, unbeaten], ignore_index=True))
    assert fit.regularised and "never lost: z" in fit.note
    z = fit.names.index("z")
    assert np.all(np.isfinite(fit.elo)) and np.all(np.isfinite(fit.hi))
    assert fit.elo[z] == max(fit.elo)
    widths = fit.hi - fit.lo
    assert widths[z] > 2 * np.median(np.delete(widths, z))


def test_all_wins_two_bots_and_single_game():
    for games in (
        pd.DataFrame({"first": ["a"], "second": ["b"], "result": [1.0]}),
        pd.DataFrame({"first": ["a", "b"] * 5, "second": ["b", "a"] * 5,
                      "result": [1.0, 0.0] * 5}),
    ):
        table = compute_standings(games)
        assert list(table["bot"]) == ["a", "b"]
        assert np.isfinite(table[["elo", "elo_lo", "elo_hi", "ts_mu"]].to_numpy()).all()
        assert table["elo"].iloc[0] > 0 > table["elo"].iloc[1]


def test_a_draw_is_enough_for_a_finite_mle():
    games = pd.DataFrame({"first": ["z", "a", "z"], "second": ["a", "z", "a"],
                          "result": [1.0, 0.0, 0.5]})
    fit = elo_mle(games, first_move=False)
    assert not fit.regularised
    # z scored 2.5 of 3: expected score 5/6 -> 400 log10(5) apart
    assert fit.elo[1] - fit.elo[0] == pytest.approx(400 * math.log10(5), abs=1e-6)
    # with the first-move advantage fitted (the default) these games have no estimate: z won
    # as second, its first moves scored 1.5 of 2, a's none. The fit ran off to 3,439 Elo apart
    seats = elo_mle(games)
    assert seats.regularised and "first-move advantage without an estimate" in seats.note
    assert 0 < seats.elo[1] - seats.elo[0] < 400


def test_regularisation_only_when_needed():
    fit = elo_mle(random_games(500, 1))
    assert not fit.regularised and fit.note == ""


def test_disconnected_groups_do_not_crash():
    games = pd.DataFrame({"first": ["a", "b", "c", "d"], "second": ["b", "a", "d", "c"],
                          "result": [1.0, 0.5, 0.0, 0.5]})
    fit = elo_mle(games)
    assert fit.regularised and np.all(np.isfinite(fit.elo))


def test_void_and_self_games_are_ignored():
    games = random_games(200, 5)
    extra = pd.DataFrame({"first": ["alpha", "beta"], "second": ["beta", "beta"],
                          "result": [np.nan, 1.0]})
    a = elo_mle(games)
    b = elo_mle(pd.concat([games, extra], ignore_index=True))
    np.testing.assert_allclose(a.elo, b.elo, atol=1e-9)


def test_covariance_intervals_match_bootstrap_roughly():
    games = random_games(2000, 7)
    cov = elo_mle(games)
    boot = elo_mle(games, bootstrap=200, seed=1)
    assert "bootstrap" in boot.interval
    np.testing.assert_allclose(boot.elo, cov.elo)  # same point estimate
    ratio = (boot.hi - boot.lo) / (cov.hi - cov.lo)
    assert np.all((ratio > 0.6) & (ratio < 1.4))


def test_count_pairs_aggregates():
    games = pd.DataFrame({"first": ["a", "a", "a", "b"], "second": ["b", "b", "b", "a"],
                          "result": ["1", "0.5", "0", "1"]})
    c = count_games(games)
    assert c.names == ["a", "b"]
    got = {(c.names[i], c.names[j]): (w, d, lo) for i, j, w, d, lo in
           zip(c.first, c.second, c.wins, c.draws, c.losses, strict=True)}
    assert got == {("a", "b"): (1, 1, 1), ("b", "a"): (1, 0, 0)}


def test_sequential_elo_is_order_dependent_and_zero_sum():
    games = random_games(100, 2)
    a = sequential_elo(games, k=20)
    b = sequential_elo(games.iloc[::-1].assign(seq=range(100)), k=20)
    assert sum(a.elo) == pytest.approx(0.0, abs=1e-9)
    assert not np.allclose(a.elo, b.elo)
    first = sequential_elo(pd.DataFrame({"first": ["x"], "second": ["y"], "result": [1.0]}), k=32)
    assert first.as_dict() == {"x": 16.0, "y": -16.0}


def test_trueskill_fast_path_equals_package():
    games = random_games(150, 11)
    for tau in (0.0, 0.1):
        fast = trueskill_ratings(games, tau=tau)
        exact = trueskill_ratings(games, tau=tau, exact=True)
        np.testing.assert_allclose(fast.mu, exact.mu, atol=1e-9)
        np.testing.assert_allclose(fast.sigma, exact.sigma, atol=1e-9)
        np.testing.assert_allclose(fast.conservative, fast.mu - 3 * fast.sigma)


def test_standings_columns_sorted_and_consistent():
    games = random_games(400, 4)
    table = compute_standings(games, sequential_k=16)
    for col in ["rank", "bot", "games", "wins", "draws", "losses", "score", "elo", "elo_lo",
                "elo_hi", "ts_mu", "ts_sigma", "ts_conservative", "forfeits", "elo_seq"]:
        assert col in table.columns
    assert list(table["rank"]) == [1, 2, 3, 4]
    assert table["elo"].is_monotonic_decreasing
    assert (table["elo_lo"] < table["elo"]).all() and (table["elo"] < table["elo_hi"]).all()
    assert table["games"].sum() == 2 * 400
    assert (table["wins"] + table["draws"] + table["losses"] == table["games"]).all()
    assert table["elo"].sum() == pytest.approx(0.0, abs=1e-6)
    assert "covariance" in table.attrs["method"]


def test_standings_anchor_as_text():
    games = random_games(300, 6)
    table = compute_standings(games, anchor="gamma=1500").set_index("bot")
    assert table.loc["gamma", "elo"] == 1500.0
    assert table.loc["gamma", "elo_lo"] == table.loc["gamma", "elo_hi"] == 1500.0
    base = compute_standings(games).set_index("bot")
    diff = table["elo"] - base["elo"]
    assert np.allclose(diff, diff.iloc[0])


def test_per_variant_and_pooled():
    a = random_games(200, 1).assign(variant="classic")
    b = random_games(200, 2).assign(variant="popout")
    games = pd.concat([a, b], ignore_index=True)
    tables = standings_by_variant(games)
    assert list(tables) == ["all", "classic", "popout"]
    assert tables["classic"]["games"].sum() == 400
    assert tables["all"]["games"].sum() == 800
    assert len(select_variant(games, "popout")) == 200
    with pytest.raises(ValueError, match="variants present: classic, popout"):
        select_variant(games, "nope")


def _paired_games() -> pd.DataFrame:
    # a vs b: pair 1 a wins both, pair 2 split (each wins as first), pair 3 a wins one, draws one
    rows = [
        ("p1", "a", "b", 1.0), ("p1", "b", "a", 0.0),
        ("p2", "a", "b", 1.0), ("p2", "b", "a", 1.0),
        ("p3", "b", "a", 0.5), ("p3", "a", "b", 1.0),
        ("p4", "a", "c", 0.0), ("p4", "c", "a", 1.0),
        ("lonely", "a", "c", 1.0),
    ]
    return pd.DataFrame(rows, columns=["pair_id", "first", "second", "result"])


def test_pentanomial_counts_from_pairs():
    pc = pentanomial_counts(_paired_games())
    got = {(r.bot_a, r.bot_b): [r.p0, r.p1, r.p2, r.p3, r.p4] for r in pc.itertuples()}
    assert got == {("a", "b"): [0, 0, 1, 1, 1], ("a", "c"): [1, 0, 0, 0, 0]}


def test_pairwise_table():
    games = pd.concat([_paired_games(), random_games(50, 3, bots=["a", "b", "c"])])
    table = pairwise_table(games)
    assert {"bot_a", "bot_b", "games", "wins", "draws", "losses", "score", "elo_diff",
            "elo_margin", "los"} <= set(table.columns)
    ab = table.loc[(table["bot_a"].isin(["a", "b"])) & (table["bot_b"].isin(["a", "b"]))].iloc[0]
    sub = games.loc[games["first"].isin(["a", "b"]) & games["second"].isin(["a", "b"])]
    assert ab["games"] == len(sub)
    assert 0 <= ab["los"] <= 1 and math.isfinite(ab["elo_margin"])
    assert ab["pairs"] == 3
    vec = [int(x) for x in ab["penta"].split(";")]
    if ab["bot_a"] == "b":
        vec = vec[::-1]
    assert vec == [0, 0, 1, 1, 1]
    assert ab["nelo"] == pytest.approx(
        penta_stats([0, 0, 1, 1, 1]).nelo * (1 if ab["bot_a"] == "a" else -1))


def test_sprt_bounds_and_incremental():
    lower, upper = sprt_bounds(0.05, 0.05)
    assert lower == pytest.approx(-math.log(19)) and upper == pytest.approx(math.log(19))
    strong = SPRT(elo0=0, elo1=50, model="logistic", pentanomial=False)
    rng = np.random.default_rng(0)
    status = "continue"
    while status == "continue" and strong.games < 10_000:
        status = strong.add(1.0 if rng.random() < 0.75 else 0.0)
    assert status == "H1" and strong.games < 500
    weak = SPRT(elo0=0, elo1=50, pentanomial=True)
    status = "continue"
    k = 0
    while status == "continue" and k < 20_000:
        status = weak.add(float(rng.choice([0.0, 0.5, 1.0])), pair_id=str(k // 2))
        k += 1
    assert status == "H0"
    assert sum(weak.penta) > 0 and "pentanomial" in weak.summary()


def test_sprt_bayeselo_takes_game_pairs_as_single_games():
    # `arena play` passes a pair id with every game: the bayeselo model has no pentanomial form
    # and raised "unknown SPRT model" at the first complete pair
    sprt = SPRT(elo0=0, elo1=10, model="bayeselo")
    for k, score in enumerate([1.0, 0.5, 0.0, 1.0, 1.0, 0.5]):
        sprt.add(score, pair_id=str(k // 2))
    assert sprt.llr() == pytest.approx(llr_trinomial(3, 2, 1, 0, 10, "bayeselo"))
    assert "trinomial" in sprt.summary()


def test_sprt_llr_symmetry():
    # mirrored results with mirrored hypotheses (H0' = -H1, H1' = -H0): the LLR changes sign
    for model in ("logistic", "normalized"):
        assert llr_trinomial(120, 80, 100, 0, 5, model) == pytest.approx(
            -llr_trinomial(100, 80, 120, -5, 0, model), abs=1e-9)


def test_facts():
    games = pd.DataFrame({
        "variant": ["v1", "v1", "v1", "v2"], "first": ["a", "b", "a", "a"],
        "second": ["b", "a", "b", "b"], "result": [1.0, 0.5, 0.0, 1.0], "plies": [10, 20, 30, 7],
        "reason": ["line", "full", "timeout", "illegal"], "forfeit_by": [np.nan, np.nan, 1, 2],
        "move_ms": ["[1, 100, 2, 200]", "[5, 6]", "", "[3]"],
    })
    vf = variant_facts(games).set_index("variant")
    assert vf.loc["v1", "first_score"] == pytest.approx(0.5)
    assert vf.loc["v1", "draw_rate"] == pytest.approx(1 / 3)
    assert vf.loc["v1", "mean_plies"] == 20
    forf = forfeits_by_bot(games)
    assert forf.loc["a", "timeout"] == 1 and forf.loc["b", "illegal"] == 1
    bf = bot_facts(games).set_index("bot")
    assert bf.loc["a", "moves_timed"] == 4  # 1, 2, 6 (as second), 3
    assert bf.loc["b", "ms_max"] == 200
    assert bf.loc["a", "forfeits"] == 1


def test_elo_history_ends_at_full_fit():
    games = random_games(300, 9)
    hist = elo_history(games, points=10)
    last = hist.loc[hist["games"] == hist["games"].max()].set_index("bot")["elo"]
    full = elo_mle(games).as_dict()
    for bot, value in full.items():
        assert last[bot] == pytest.approx(value, abs=1e-6)


def test_fit_on_empty_counts():
    fit = fit_elo(count_games(pd.DataFrame({"first": [], "second": [], "result": []})))
    assert fit.names == []
