"""Sequential probability ratio test (SPRT) between two bots.

The generalised log-likelihood ratio (GLLR) of fishtest is used: for H0 "the true score is s0" and
H1 "the true score is s1", the multinomial distribution of results closest in likelihood to the
observed one under each constraint is found (the constrained maximum-likelihood estimate, a
one-dimensional "secular equation"), and

    LLR = N * sum_i p_i * (log q1_i - log q0_i)

where p is the observed distribution (zero counts replaced by 1e-3 so that the logarithms stay
finite), q0/q1 the constrained estimates and N the number of observations: games (trinomial:
loss/draw/win, scores 0, 1/2, 1) or game pairs with swapped seats (pentanomial: pair scores
0, 1/4, 1/2, 3/4, 1).

Models of the hypotheses:
* ``logistic``: elo0/elo1 are logistic Elo, the constraint is on the expected score.
* ``normalized``: elo0/elo1 are normalized Elo, the constraint is on the t-value
  (mean - 1/2) / sigma (per game; per pair divided by sqrt 2).
* ``bayeselo``: the cutechess model (BayesElo with a draw Elo estimated from the data; the
  hypotheses are logistic Elo converted to BayesElo), trinomial only, with an optional prior added
  to every count.

The test stops when the LLR leaves [log(beta/(1-alpha)), log((1-beta)/alpha)].
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

NELO_PER_T = 800.0 / math.log(10.0)  # normalized Elo per unit of t-value
_EPS_COUNT = 1e-3


def elo_to_score(elo: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """(lower, upper) LLR bounds: accept H0 below lower, H1 above upper."""
    if not (0 < alpha < 1 and 0 < beta < 1):
        raise ValueError("alpha and beta must be in (0, 1)")
    if alpha + beta >= 1:  # the bounds would cross: H1 (or H0) accepted before any game
        raise ValueError(f"alpha + beta must be below 1, not {alpha:g} + {beta:g}")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def _pdf(counts: Sequence[float]) -> tuple[float, list[float], list[float]]:
    reg = [float(c) if c > 0 else _EPS_COUNT for c in counts]
    total = sum(reg)
    k = len(reg)
    return total, [i / (k - 1) for i in range(k)], [c / total for c in reg]


def _mean_var(a: Sequence[float], p: Sequence[float]) -> tuple[float, float]:
    mu = sum(pi * ai for ai, pi in zip(a, p, strict=True))
    var = sum(pi * (ai - mu) ** 2 for ai, pi in zip(a, p, strict=True))
    return mu, var


def _secular(a: Sequence[float], p: Sequence[float]) -> float:
    """Root x of sum_i p_i a_i / (1 + x a_i) = 0 with every 1 + x a_i > 0 (decreasing in x)."""
    lo_a, hi_a = min(a), max(a)
    if not (lo_a < 0 < hi_a):
        raise ValueError("hypothesis outside the range of possible scores")
    lo, hi = -1.0 / hi_a, -1.0 / lo_a

    def f(x: float) -> float:
        return sum(pi * ai / (1.0 + x * ai) for ai, pi in zip(a, p, strict=True))

    # bisection down to machine precision (f is strictly decreasing on (lo, hi))
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def mle_expected(a: Sequence[float], p: Sequence[float], s: float) -> list[float]:
    """Most likely distribution on scores ``a`` with mean ``s`` given the observed ``p``."""
    shifted = [ai - s for ai in a]
    x = _secular(shifted, p)
    return [pi / (1.0 + x * di) for pi, di in zip(p, shifted, strict=True)]


def mle_t_value(a: Sequence[float], p: Sequence[float], ref: float, t: float) -> list[float]:
    """Most likely distribution on ``a`` with (mean - ref) / sigma = t given the observed ``p``."""
    q = [1.0 / len(a)] * len(a)
    for _ in range(50):
        mu, var = _mean_var(a, q)
        sigma = math.sqrt(var)
        shifted = [ai - ref - t * sigma * (1.0 + ((mu - ai) / sigma) ** 2) / 2.0 for ai in a]
        x = _secular(shifted, p)
        new = [pi / (1.0 + x * di) for pi, di in zip(p, shifted, strict=True)]
        done = max(abs(u - v) for u, v in zip(new, q, strict=True)) < 1e-12
        q = new
        if done:
            break
    return q


def _gllr(counts: Sequence[float], q0_q1) -> float:
    n, a, p = _pdf(counts)
    q0, q1 = q0_q1(a, p)
    return n * sum(pi * (math.log(b) - math.log(c)) for pi, b, c in zip(p, q1, q0, strict=True))


def llr_counts(counts: Sequence[float], elo0: float, elo1: float,
               model: str = "logistic") -> float:
    """LLR for counts in ascending score order: (L, D, W) or (LL, LD, WL+DD, WD, WW)."""
    k = len(counts)
    if k not in (3, 5):
        raise ValueError("counts must have 3 (L, D, W) or 5 (pentanomial) entries")
    if model == "logistic":
        s0, s1 = elo_to_score(elo0), elo_to_score(elo1)
        return _gllr(counts, lambda a, p: (mle_expected(a, p, s0), mle_expected(a, p, s1)))
    if model == "normalized":
        scale = 1.0 if k == 3 else math.sqrt(2.0)
        t0, t1 = elo0 / NELO_PER_T * scale, elo1 / NELO_PER_T * scale
        return _gllr(counts, lambda a, p: (mle_t_value(a, p, 0.5, t0),
                                           mle_t_value(a, p, 0.5, t1)))
    raise ValueError(f"unknown SPRT model {model!r} (logistic, normalized, bayeselo)")


def llr_trinomial(wins: float, draws: float, losses: float, elo0: float, elo1: float,
                  model: str = "logistic", prior: float = 0.0) -> float:
    """LLR of a series of games seen from one bot (``model``: logistic, normalized, bayeselo)."""
    if model == "bayeselo":
        return llr_bayeselo(wins, draws, losses, elo0, elo1, prior=prior)
    return llr_counts((losses, draws, wins), elo0, elo1, model)


def llr_pentanomial(penta: Sequence[float], elo0: float, elo1: float,
                    model: str = "logistic") -> float:
    """LLR over game pairs; ``penta`` = counts of pair scores 0, 1/4, 1/2, 3/4, 1."""
    if len(penta) != 5:
        raise ValueError("pentanomial counts need 5 entries")
    return llr_counts(penta, elo0, elo1, model)


def llr_bayeselo(wins: float, draws: float, losses: float, elo0: float, elo1: float,
                 prior: float = 0.0, hypotheses_in: str = "elo") -> float:
    """cutechess-style LLR: BayesElo model, draw Elo estimated from the results.

    ``prior`` is added to each of wins, draws and losses (cutechess adds 0.5). Returns 0 while one of
    the counts is still 0 (the draw Elo cannot be estimated yet). ``hypotheses_in="elo"`` (cutechess)
    converts logistic-Elo hypotheses to BayesElo; ``"bayeselo"`` takes them as BayesElo already
    (fastchess' "bayesian" SPRT).
    """
    w, d, lo = wins + prior, draws + prior, losses + prior
    if w <= 0 or d <= 0 or lo <= 0:
        return 0.0
    n = w + d + lo
    pw, pl = w / n, lo / n
    draw_elo = 200.0 * math.log10((1.0 - pl) / pl * (1.0 - pw) / pw)
    x = 10.0 ** (-draw_elo / 400.0)
    scale = 4.0 * x / (1.0 + x) ** 2

    def probs(bayes_elo: float) -> tuple[float, float, float]:
        p_win = 1.0 / (1.0 + 10.0 ** ((draw_elo - bayes_elo) / 400.0))
        p_loss = 1.0 / (1.0 + 10.0 ** ((draw_elo + bayes_elo) / 400.0))
        return p_win, 1.0 - p_win - p_loss, p_loss

    if hypotheses_in == "elo":
        elo0, elo1 = elo0 / scale, elo1 / scale
    elif hypotheses_in != "bayeselo":
        raise ValueError("hypotheses_in must be 'elo' or 'bayeselo'")
    w0, d0, l0 = probs(elo0)
    w1, d1, l1 = probs(elo1)
    return w * math.log(w1 / w0) + d * math.log(d1 / d0) + lo * math.log(l1 / l0)


ELO_LIMIT = 2000  # beyond it a hypothesis is a score of 1 to the float: no test at all


@dataclass
class SPRT:
    """An SPRT that can be fed game by game (used by ``arena play`` to stop a match early).

    Results are seen from bot A: ``add(score, pair_id)`` with score 1, 0.5 or 0. With
    ``pentanomial=True`` games that share a ``pair_id`` are combined into pairs once both are in;
    the pentanomial LLR is used as soon as there is a complete pair (the usual choice when
    openings are played twice with swapped seats), the trinomial one otherwise. The bayeselo
    model is trinomial only (cutechess' SPRT): it ignores the pairs.
    """

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "logistic"
    pentanomial: bool = True
    wins: int = 0
    draws: int = 0
    losses: int = 0
    penta: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 0])
    _pending: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.lower, self.upper = sprt_bounds(self.alpha, self.beta)
        if self.model == "bayeselo":  # a model of single games: no pentanomial form
            self.pentanomial = False
        if not all(-ELO_LIMIT <= elo <= ELO_LIMIT for elo in (self.elo0, self.elo1)):
            # nan, infinities and scores of 0 or 1 failed after the first game with a traceback
            raise ValueError(f"SPRT bounds must be numbers between -{ELO_LIMIT} and {ELO_LIMIT}")
        if self.elo1 <= self.elo0:
            raise ValueError("SPRT needs elo0 < elo1")

    def add(self, score: float, pair_id: str | None = None) -> str:
        if score == 1:
            self.wins += 1
        elif score == 0.5:
            self.draws += 1
        elif score == 0:
            self.losses += 1
        else:
            raise ValueError(f"score must be 1, 0.5 or 0, got {score!r}")
        if self.pentanomial and pair_id is not None:
            if pair_id in self._pending:
                total = self._pending.pop(pair_id) + score
                self.penta[int(round(total * 2))] += 1
            else:
                self._pending[pair_id] = score
        return self.status()

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def llr(self) -> float:
        if self.games == 0:
            return 0.0
        if self.pentanomial and sum(self.penta) > 0:
            return llr_pentanomial(self.penta, self.elo0, self.elo1, self.model)
        if self.model == "bayeselo":
            return llr_bayeselo(self.wins, self.draws, self.losses, self.elo0, self.elo1)
        return llr_trinomial(self.wins, self.draws, self.losses, self.elo0, self.elo1, self.model)

    def status(self) -> str:
        """``"H1"`` (A is stronger by elo1), ``"H0"`` (not stronger than elo0) or ``"continue"``."""
        value = self.llr()
        if value >= self.upper:
            return "H1"
        if value <= self.lower:
            return "H0"
        return "continue"

    def summary(self) -> str:
        kind = "pentanomial" if self.pentanomial and sum(self.penta) else "trinomial"
        return (f"SPRT [{self.elo0:g}, {self.elo1:g}] ({self.model}, {kind}): LLR {self.llr():.2f} "
                f"in [{self.lower:.2f}, {self.upper:.2f}] after {self.games} games "
                f"(W {self.wins} D {self.draws} L {self.losses}) -> {self.status()}")
