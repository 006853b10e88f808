"""Ratings against the reference data in ../shared/reference/ratings (see its README)."""

from __future__ import annotations

import csv
import json

import pandas as pd
import pytest
import trueskill

from arena.ratings.elo import elo_mle
from arena.ratings.pairs import Z95, los_wl, penta_stats, wdl_stats
from arena.ratings.sprt import llr_bayeselo, llr_pentanomial, llr_trinomial
from arena.ratings.trueskill_ratings import rate_1vs1_fast, trueskill_ratings
from tests.conftest import REFERENCE_ROOT, reference_path

REF = REFERENCE_ROOT / "ratings"
# Without the data a parametrized test gets this one case, so that the fixture below reports
# the missing data (a skip, a failure in CI) instead of pytest quietly collecting no cases.
NO_DATA = [pytest.param(None, id="no-reference-data")]


@pytest.fixture(autouse=True)
def _reference_data() -> None:
    reference_path("ratings")  # skip, or fail in CI, before a test reads the data


def laskos3() -> pd.DataFrame:
    frame = pd.read_csv(REF / "laskos3_games.csv")
    return frame.rename(columns={"white": "first", "black": "second", "result_white": "result"})


def test_laskos3_exact_mle_mean_zero():
    fit = elo_mle(laskos3(), first_move=False)  # Ordo's default
    got = fit.as_dict()
    assert sorted(got.values()) == pytest.approx([-190.8485, 0.0, 190.8485], abs=1e-3)
    assert got["Houdini"] == pytest.approx(400 * 0.47712125472, abs=1e-3)  # 400 log10(3)
    assert not fit.regularised and fit.converged
    assert sum(got.values()) == pytest.approx(0.0, abs=1e-9)


def test_laskos3_with_first_move_advantage():
    fit = elo_mle(laskos3(), first_move=True)
    assert sorted(fit.as_dict().values()) == pytest.approx([-191.0501, 0.0, 191.0501], abs=1e-3)
    assert fit.first_move == pytest.approx(12.46, abs=0.01)


def test_laskos3_anchor_shifts_only():
    fit = elo_mle(laskos3(), anchor=("Komodo", 1000.0), first_move=False)
    got = fit.as_dict()
    assert got["Komodo"] == 1000.0
    assert got["Houdini"] == pytest.approx(1000 + 2 * 190.8485, abs=1e-3)
    assert fit.se[fit.names.index("Komodo")] == 0.0


def _elo_rows():
    if not REF.is_dir():
        return NO_DATA
    with open(REF / "elo_vectors.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def _close(got: float, expected: str, digits: int = 2) -> None:
    if expected.strip():
        assert round(got, digits) == pytest.approx(float(expected), abs=1.01 * 10**-digits)


@pytest.mark.parametrize("row", _elo_rows(), ids=lambda r: f"{r['input_kind'][:5]}:{r['counts']}")
def test_elo_vectors(row):
    cutechess = row["source"].startswith("cutechess")
    z = 1.95716 if cutechess else Z95  # cutechess' approximate inverse normal
    if row["input_kind"] == "WDL":
        c = dict(kv.split("=") for kv in row["counts"].split(";"))
        w, d, lo = float(c["W"]), float(c["D"]), float(c["L"])
        st = wdl_stats(w, d, lo, z=z)
        los = los_wl(w, lo) if cutechess else st.los
    else:
        ll, ld, wl, dd, wd, ww = (float(x) for x in row["counts"].split(";"))
        st = penta_stats([ll, ld, wl + dd, wd, ww], z=z)
        los = st.los
    _close(st.score, row["expected_score"], 3)
    _close(st.elo, row["expected_elo"])
    _close(st.elo_margin, row["expected_elo95"])
    _close(st.nelo, row["expected_nelo"])
    _close(st.nelo_margin, row["expected_nelo95"])
    _close(100 * los, row["expected_los_pct"])
    if "elo=" in row["notes"]:  # values computed by the reference author, same formulas
        elo, margin = row["notes"].split("elo=")[1].split()[0].split("+-")
        assert st.elo == pytest.approx(float(elo), abs=0.01)
        assert st.elo_margin == pytest.approx(float(margin), abs=0.01)


def _sprt_rows():
    if not REF.is_dir():
        return NO_DATA
    with open(REF / "sprt_vectors.csv", newline="") as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


@pytest.mark.parametrize("row", _sprt_rows(), ids=lambda r: f"{r['kind']}-{r['model']}-{r['counts']}")
def test_sprt_vectors(row):
    elo0, elo1 = float(row["elo0"]), float(row["elo1"])
    model = row["model"]
    if row["kind"] == "trinomial":
        c = dict(kv.split("=") for kv in row["counts"].split(";"))
        w, d, lo = float(c["W"]), float(c["D"]), float(c["L"])
        if model.startswith("cutechess"):
            got = llr_bayeselo(w, d, lo, elo0, elo1, prior=0.5)
        elif model == "bayesian":  # fastchess: hypotheses already in BayesElo
            got = llr_bayeselo(w, d, lo, elo0, elo1, hypotheses_in="bayeselo")
            assert got == pytest.approx(float(row["expected_from_source"]), rel=0.01)
            assert got == pytest.approx(float(row["standalone"]), rel=1e-5)
            return
        else:
            got = llr_trinomial(w, d, lo, elo0, elo1, model=model)
    else:
        penta = [float(x) for x in row["counts"].split("=")[1].split(";")]
        got = llr_pentanomial(penta, elo0, elo1, model=model)
    assert got == pytest.approx(float(row["standalone"]), abs=1e-8)
    if row["fishtest_LLRcalc"] not in ("", "nan"):
        assert got == pytest.approx(float(row["fishtest_LLRcalc"]), abs=1e-8)
    assert got == pytest.approx(float(row["expected_from_source"]), abs=0.03, rel=0.01)


def _ts_rows():
    if not REF.is_dir():
        return NO_DATA
    return json.loads((REF / "trueskill_vectors.json").read_text())


@pytest.mark.parametrize("case", _ts_rows(), ids=lambda c: f"{c['r1']}-{c['r2']}-{c['drawn']}")
def test_trueskill_vectors(case):
    env = trueskill.TrueSkill(**case["env"])
    expected = case["result"]["None"]  # the pure-Python backend, the package default
    r1, r2 = trueskill.rate_1vs1(env.create_rating(*case["r1"]),
                                 env.create_rating(*case["r2"]), drawn=case["drawn"], env=env)
    assert [r1.mu, r1.sigma, r2.mu, r2.sigma] == pytest.approx(expected, abs=1e-9)
    fast = rate_1vs1_fast(env, tuple(case["r1"]), tuple(case["r2"]), drawn=case["drawn"])
    assert [*fast[0], *fast[1]] == pytest.approx(expected, abs=1e-9)
    q = trueskill.quality_1vs1(env.create_rating(*case["r1"]), env.create_rating(*case["r2"]),
                               env=env)
    assert q == pytest.approx(case["quality_1vs1"], abs=1e-12)


def test_trueskill_ratings_of_one_game_match_vector():
    case = _ts_rows()[0]  # default environment, two fresh players, first wins
    games = pd.DataFrame({"first": ["a"], "second": ["b"], "result": [1.0]})
    ts = trueskill_ratings(games, tau=trueskill.TAU, draw_probability=trueskill.DRAW_PROBABILITY)
    assert [ts.mu[0], ts.sigma[0], ts.mu[1], ts.sigma[1]] == pytest.approx(
        case["result"]["None"], abs=1e-9)
