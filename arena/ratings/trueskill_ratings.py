"""TrueSkill ratings through the ``trueskill`` package.

Games are processed in the rating order (``arena.ratings.table.in_rating_order``: a tournament's
schedule, round then game id, so that the same games give the same numbers whatever order they
finished in; else ``seq``), so TrueSkill, like sequential Elo, depends on the order of the games;
with ``tau = 0`` (the default here: bots do not change strength between games) the dependence is
weak, but not nil (a few tenths of mu over a few dozen games).

For speed the one-against-one update is written out in closed form (the two-team factor graph has
no loop, so one pass is exact) using the package's own environment: its ``v``/``w`` functions, its
draw margin and its normal CDF backend. The result equals ``trueskill.rate_1vs1`` (tested against
the package and against reference vectors); ``exact=True`` calls ``rate_1vs1`` for every game.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import trueskill

from arena.ratings.system import Display, Rated, RatingOptions
from arena.ratings.table import ORDER_WORDS, CodedGames

DEFAULT_MU = 25.0
DEFAULT_SIGMA = DEFAULT_MU / 3.0


@dataclass
class TrueSkillResult:
    names: list[str]
    mu: np.ndarray
    sigma: np.ndarray
    draw_probability: float
    tau: float
    beta: float

    @property
    def conservative(self) -> np.ndarray:
        """mu - 3 sigma: a rating the bot is very likely (99.9 %) to exceed."""
        return self.mu - 3.0 * self.sigma

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({"bot": self.names, "ts_mu": self.mu, "ts_sigma": self.sigma,
                             "ts_conservative": self.conservative})


def make_env(
    mu: float = DEFAULT_MU,
    sigma: float | None = None,
    beta: float | None = None,
    tau: float = 0.0,
    draw_probability: float = 0.1,
) -> trueskill.TrueSkill:
    sigma = mu / 3.0 if sigma is None else sigma
    beta = sigma / 2.0 if beta is None else beta
    return trueskill.TrueSkill(mu=mu, sigma=sigma, beta=beta, tau=tau,
                               draw_probability=draw_probability)


def rate_1vs1_fast(env: trueskill.TrueSkill, r1: tuple[float, float], r2: tuple[float, float],
                   drawn: bool = False, draw_margin: float | None = None):
    """Closed-form ``trueskill.rate_1vs1``: r1 is the winner unless drawn. Returns (mu, sigma) x 2."""
    mu1, s1 = r1
    mu2, s2 = r2
    tau2 = env.tau * env.tau
    v1 = s1 * s1 + tau2
    v2 = s2 * s2 + tau2
    c2 = 2.0 * env.beta * env.beta + v1 + v2
    c = math.sqrt(c2)
    if draw_margin is None:
        draw_margin = trueskill.calc_draw_margin(env.draw_probability, 2, env=env)
    t = (mu1 - mu2) / c
    eps = draw_margin / c
    if drawn:
        v = env.v_draw(t, eps)
        w = env.w_draw(t, eps)
    else:
        v = env.v_win(t, eps)
        w = env.w_win(t, eps)
    new1 = (mu1 + v1 / c * v, math.sqrt(v1 * (1.0 - v1 / c2 * w)))
    new2 = (mu2 - v2 / c * v, math.sqrt(v2 * (1.0 - v2 / c2 * w)))
    return new1, new2


def _default_backend(env: trueskill.TrueSkill) -> bool:
    """Does ``env`` use the package's own pure-Python normal functions (the default backend)?"""
    return env.cdf is trueskill.backends.cdf and env.pdf is trueskill.backends.pdf


_SQRT2 = math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


def _erfc(x: float) -> float:
    """``trueskill.backends.erfc``, the same operations in the same order (same numbers)."""
    z = abs(x)
    t = 1. / (1. + z / 2.)
    r = t * math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (
        0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (
            0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
                -0.82215223 + t * 0.17087277)))))))))
    return 2. - r if x < 0 else r


def _rate_sequence(env: trueskill.TrueSkill, mus: list[float], sig: list[float], triples):
    """Every game of ``triples`` through the closed-form 1-vs-1 update, written out in one loop.

    The same arithmetic as :func:`rate_1vs1_fast` with the package's default ``cdf``/``pdf``
    inlined: the per-game cost is the loop itself (about 2.5 times faster). A game
    whose update is numerically degenerate goes through :func:`rate_1vs1_fast`, which raises
    the package's own error.
    """
    tau2 = env.tau * env.tau
    beta2x2 = 2.0 * env.beta * env.beta
    margin = trueskill.calc_draw_margin(env.draw_probability, 2, env=env)
    sqrt, exp, erfc = math.sqrt, math.exp, _erfc
    for a, b, s in triples:
        if s == 0.0:
            a, b = b, a  # the winner first
        mu1, mu2 = mus[a], mus[b]
        v1 = sig[a] * sig[a] + tau2
        v2 = sig[b] * sig[b] + tau2
        c2 = beta2x2 + v1 + v2
        c = sqrt(c2)
        t = (mu1 - mu2) / c
        eps = margin / c
        if s != 0.5:
            x = t - eps
            denom = 0.5 * erfc(-x / _SQRT2)
            v = (_INV_SQRT_2PI * exp(-(x ** 2 / 2)) / denom) if denom else -x
            w = v * (v + x)
            ok = 0 < w < 1
        else:
            abs_t = abs(t)
            lo, hi = eps - abs_t, -eps - abs_t
            denom = 0.5 * erfc(-lo / _SQRT2) - 0.5 * erfc(-hi / _SQRT2)
            pdf_lo = _INV_SQRT_2PI * exp(-(lo ** 2 / 2))
            pdf_hi = _INV_SQRT_2PI * exp(-(hi ** 2 / 2))
            ok = bool(denom)
            v_abs = ((pdf_hi - pdf_lo) / denom) if denom else lo
            v = v_abs * (-1 if t < 0 else +1)
            w = (v_abs ** 2) + (lo * pdf_lo - hi * pdf_hi) / denom if ok else 0.0
        if not ok:
            (mus[a], sig[a]), (mus[b], sig[b]) = rate_1vs1_fast(
                env, (mu1, sig[a]), (mu2, sig[b]), s == 0.5, margin)
            continue
        mus[a] = mu1 + v1 / c * v
        sig[a] = sqrt(v1 * (1.0 - v1 / c2 * w))
        mus[b] = mu2 - v2 / c * v
        sig[b] = sqrt(v2 * (1.0 - v2 / c2 * w))
    return mus, sig


def trueskill_ratings(
    games: pd.DataFrame,
    tau: float = 0.0,
    draw_probability: float | None = None,
    mu: float = DEFAULT_MU,
    sigma: float | None = None,
    beta: float | None = None,
    names: Sequence[str] | None = None,
    exact: bool = False,
) -> TrueSkillResult:
    """TrueSkill of every bot of a games table, games in the rating order (``in_rating_order``).

    draw_probability: None = the observed draw rate of the games (clamped to [0.001, 0.9]).
    tau: dynamics factor added to sigma before every game; 0 for bots of constant strength.
    """
    return trueskill_coded(CodedGames.from_frame(games, names=names), tau=tau,
                           draw_probability=draw_probability, mu=mu, sigma=sigma, beta=beta,
                           exact=exact)


def trueskill_coded(
    games: CodedGames,
    tau: float = 0.0,
    draw_probability: float | None = None,
    mu: float = DEFAULT_MU,
    sigma: float | None = None,
    beta: float | None = None,
    exact: bool = False,
) -> TrueSkillResult:
    """TrueSkill of coded games (rated, in the rating order); see :func:`trueskill_ratings`."""
    res = games.result
    if draw_probability is None:
        rate = float(np.mean(res == 0.5)) if len(res) else 0.1
        draw_probability = min(max(rate, 0.001), 0.9)
    env = make_env(mu=mu, sigma=sigma, beta=beta, tau=tau, draw_probability=draw_probability)
    n = games.n_bots
    mus = [env.mu] * n
    sig = [env.sigma] * n
    triples = games.triples()
    if exact:
        ratings = [env.create_rating() for _ in range(n)]
        for a, b, s in triples:
            if s == 0.0:
                ratings[b], ratings[a] = trueskill.rate_1vs1(ratings[b], ratings[a], env=env)
            else:
                ratings[a], ratings[b] = trueskill.rate_1vs1(ratings[a], ratings[b],
                                                             drawn=s == 0.5, env=env)
        mus = [r.mu for r in ratings]
        sig = [r.sigma for r in ratings]
    elif _default_backend(env):
        mus, sig = _rate_sequence(env, mus, sig, triples)
    else:
        margin = trueskill.calc_draw_margin(env.draw_probability, 2, env=env)
        for a, b, s in triples:
            if s == 0.0:
                (mus[b], sig[b]), (mus[a], sig[a]) = rate_1vs1_fast(
                    env, (mus[b], sig[b]), (mus[a], sig[a]), False, margin)
            else:
                (mus[a], sig[a]), (mus[b], sig[b]) = rate_1vs1_fast(
                    env, (mus[a], sig[a]), (mus[b], sig[b]), s == 0.5, margin)
    return TrueSkillResult(names=list(games.names), mu=np.array(mus, dtype=float),
                           sigma=np.array(sig, dtype=float), draw_probability=draw_probability,
                           tau=float(tau), beta=float(env.beta))


class TrueSkillSystem:
    """TrueSkill (mu, sigma, mu - 3 sigma), games in order; ``--no-trueskill`` skips it (it is
    the one sequential computation of the standings: about 1.5 s per million games)."""

    name = "trueskill"
    optional = True
    display = (
        Display("TS mu", ("ts_mu",), 2),
        Display("TS sigma", ("ts_sigma",), 2),
        Display("mu-3s", ("ts_conservative",), 2),
    )

    def wanted(self, options: RatingOptions) -> bool:
        return True

    def rate(self, games: CodedGames, options: RatingOptions) -> Rated:
        ts = trueskill_coded(games, tau=options.tau, draw_probability=options.draw_probability)
        note = (f"TrueSkill: trueskill package, {ORDER_WORDS[games.order]}, tau={ts.tau:g}, "
                f"draw probability {ts.draw_probability:.3f}, conservative = mu - 3 sigma.")
        return Rated(columns={"ts_mu": ts.mu, "ts_sigma": ts.sigma,
                              "ts_conservative": ts.conservative}, notes=[note])


SYSTEM = TrueSkillSystem()
