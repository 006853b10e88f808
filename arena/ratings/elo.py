"""Elo ratings: maximum likelihood over all bots at once (the rating every report shows).

Maximum likelihood
------------------
The model is the logistic Bradley-Terry model on the standard Elo scale, with a draw counted as half
a point (as in Ordo): the expected score of bot *i* moving first against bot *j* is

    P(i beats j) = 1 / (1 + 10 ** (-(R_i - R_j + A) / 400))

where ``A`` is the first-move advantage (fitted by default; 0 with ``first_move=False``). The
log-likelihood of a game with score ``s`` (1, 1/2 or 0 for the first player) is
``s log P + (1 - s) log(1 - P)``, so it only depends on the number of games and the total score
of each *ordered* pair (first, second). Games are therefore counted per ordered pair first
(:func:`count_pairs`, vectorised with numpy) and the fit (:func:`fit_elo`) runs Newton's method on
those counts: a million games cost one pass of counting, the fit itself works on at most
``n_bots ** 2`` numbers.

Uncertainty
-----------
``interval="covariance"`` (default): the covariance of the estimate is the inverse of the observed
Fisher information (the negative Hessian of the log-likelihood at the optimum), taken as a
Moore-Penrose pseudo-inverse because ratings are only defined up to a constant, scaled by the
dispersion of the scores (a quasi-likelihood): the information assumes a game's score varies as
p(1 - p), a win or a loss, and draws make it vary less, p(1 - p) - d/4 at a draw rate d, so
unscaled intervals were too wide wherever games are drawn (the scale is shrunk toward 1 by 50
games' worth, so that a few drawn games do not narrow them). The reported
intervals are ``elo +- 1.959964 * se`` where *se* is the standard error of each rating **relative to
the reference**: the pool mean (default, ratings sum to 0) or the anchor bot (which then has se 0).

``bootstrap=B``: a parametric bootstrap, as Ordo's simulations: B times, each ordered pair's games
are drawn again from the fitted model (its expected score, with the pool's draw rate where the
score allows it), the model is refitted, and the interval is the 2.5 %-97.5 % percentile range of
the refits. (Resampling each pair's own results instead gives a zero-width interval to a bot that
won every game of a pairing, and covered the true ratings only about 79 % of the time in a
simulated 8-bot round-robin, against 94 % now.) A replicate keeps the original fit's virtual
draws (see Regularisation).

Regularisation
--------------
The maximum-likelihood estimate exists only if the "scored at least half a point against" graph is
strongly connected: a bot that never lost (or never scored) would have an infinite rating. In that
case only, every bot gets ``prior_games`` (default 1) virtual drawn game against one fixed virtual
opponent (rated 0 on the fit's own scale, before the ratings are shifted to their reference: not
the pool mean of the result, which a lopsided field moves). That keeps every rating finite, with
a wide interval for the bots that caused it, and leaves data sets whose estimate exists untouched
(exact Ordo-style ratings). The fit reports ``regularised=True`` and a note when this happened. The
same virtual draw is given to the first-move term when the first player won (or lost) every game.
Bootstrap intervals are not drawn for such a fit (its covariance intervals are kept, and the note
says so): refits drawn from it keep the virtual draws and understate the uncertainty.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from arena.ratings.system import Display, Rated, RatingOptions, format_number
from arena.ratings.table import Anchor, CodedGames, codes, games_in_order, normalise_results

ELO_PER_NAT = 400.0 / math.log(10.0)  # 173.7177927613007: Elo points per natural-log unit
Z95 = 1.959963984540054  # two-sided 95 % normal quantile


# ---------------------------------------------------------------------------------------------
# Counting
# ---------------------------------------------------------------------------------------------


@dataclass
class PairCounts:
    """Wins/draws/losses of each ordered pair (first seat, second seat), from the first's side."""

    names: list[str]
    first: np.ndarray  # int index into names (seat 1)
    second: np.ndarray  # int index into names (seat 2)
    wins: np.ndarray  # int64
    draws: np.ndarray
    losses: np.ndarray

    @property
    def n_bots(self) -> int:
        return len(self.names)

    @property
    def games(self) -> np.ndarray:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> np.ndarray:
        return self.wins + 0.5 * self.draws

    def total_games(self) -> int:
        return int(self.games.sum())


def count_pairs(
    first: Sequence, second: Sequence, result: Sequence, names: Sequence[str] | None = None
) -> PairCounts:
    """Count wins/draws/losses per ordered pair.

    ``result`` is the first player's score (1, 0.5, 0); NaN (void) games and games of a bot against
    itself are ignored. Bots are indexed in sorted order of their names unless ``names`` is given.
    """
    res = normalise_results(result)
    first_a = np.asarray(first, dtype=object)
    second_a = np.asarray(second, dtype=object)
    if not (len(first_a) == len(second_a) == len(res)):
        raise ValueError("first, second and result must have the same length")
    keep = ~np.isnan(res)
    first_a, second_a, res = first_a[keep], second_a[keep], res[keep]
    i, j, names = codes(first_a, second_a, names)
    n = len(names)
    bad = ~np.isin(res, (0.0, 0.5, 1.0))
    if bad.any():
        raise ValueError(f"results must be 1, 0.5 or 0, got {res[bad][0]!r}")
    other = i != j
    i, j, res = i[other], j[other], res[other]
    key = i * n + j
    size = n * n
    wins = np.bincount(key[res == 1.0], minlength=size)
    draws = np.bincount(key[res == 0.5], minlength=size)
    losses = np.bincount(key[res == 0.0], minlength=size)
    total = wins + draws + losses
    nz = np.flatnonzero(total)
    return PairCounts(
        names=names,
        first=(nz // n).astype(np.int64),
        second=(nz % n).astype(np.int64),
        wins=wins[nz].astype(np.int64),
        draws=draws[nz].astype(np.int64),
        losses=losses[nz].astype(np.int64),
    )


def count_games(games: pd.DataFrame, names: Sequence[str] | None = None) -> PairCounts:
    """:func:`count_pairs` over a games table (columns ``first``, ``second``, ``result``)."""
    return count_coded(CodedGames.from_frame(games, names=names))


def count_coded(games: CodedGames) -> PairCounts:
    """Wins/draws/losses per ordered pair of already coded rated games (one pass of bincount)."""
    res = games.result
    bad = ~np.isin(res, (0.0, 0.5, 1.0))
    if bad.any():
        raise ValueError(f"results must be 1, 0.5 or 0, got {res[bad][0]!r}")
    n = games.n_bots
    key = games.first * n + games.second
    size = n * n
    wins = np.bincount(key[res == 1.0], minlength=size)
    draws = np.bincount(key[res == 0.5], minlength=size)
    losses = np.bincount(key[res == 0.0], minlength=size)
    nz = np.flatnonzero(wins + draws + losses)
    return PairCounts(names=list(games.names), first=(nz // n).astype(np.int64),
                      second=(nz % n).astype(np.int64), wins=wins[nz].astype(np.int64),
                      draws=draws[nz].astype(np.int64), losses=losses[nz].astype(np.int64))


# ---------------------------------------------------------------------------------------------
# Maximum likelihood
# ---------------------------------------------------------------------------------------------


@dataclass
class EloFit:
    """Result of :func:`fit_elo`. Ratings in Elo points, relative to ``reference``."""

    names: list[str]
    elo: np.ndarray
    se: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    cov: np.ndarray  # covariance (Elo^2) of the reported ratings
    first_move: float | None = None  # fitted first-move advantage (Elo), None if not fitted
    first_move_se: float | None = None
    reference: str = "mean 0"
    interval: str = "covariance"
    regularised: bool = False
    note: str = ""
    iterations: int = 0
    converged: bool = True
    log_likelihood: float = float("nan")
    games: int = 0
    dispersion: float = 1.0  # scale of the covariance (see `_dispersion`)
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict[str, float]:
        return dict(zip(self.names, self.elo.tolist(), strict=True))

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {"bot": self.names, "elo": self.elo, "elo_se": self.se, "elo_lo": self.lo,
             "elo_hi": self.hi}
        )

    def describe(self) -> str:
        """One paragraph saying how the numbers were computed (for reports)."""
        parts = [
            "Elo: logistic Bradley-Terry maximum likelihood over all games at once "
            "(draw = half a point, 400/ln10 scale, as Ordo)",
            f"reference: {self.reference}",
        ]
        if self.interval == "covariance":
            parts.append(
                "95% intervals: +-1.96 standard errors from the inverse Fisher information "
                f"(covariance, times the score dispersion {self.dispersion:.2f}, which draws "
                "lower), relative to the reference"
            )
        else:
            parts.append(f"95% intervals: {self.interval}")
        if self.first_move is not None:
            parts.append(
                f"first-move advantage fitted: {format_number(self.first_move, 1, True)} +- "
                f"{Z95 * (self.first_move_se or 0.0):.1f} Elo"
            )
        if self.regularised:
            parts.append(self.note)
        return "; ".join(parts) + "."


def _strongly_connected(n: int, i: np.ndarray, j: np.ndarray, scored_i: np.ndarray,
                        scored_j: np.ndarray) -> bool:
    """Is the graph with an edge a->b when a scored against b strongly connected?"""
    if n <= 1:
        return True
    adj = np.zeros((n, n), dtype=bool)
    adj[i[scored_i], j[scored_i]] = True
    adj[j[scored_j], i[scored_j]] = True
    return bool(_reachable(adj, 0).all() and _reachable(adj.T, 0).all())


def _reachable(adj: np.ndarray, start: int) -> np.ndarray:
    """The nodes reachable from `start` along `adj` (a boolean adjacency matrix), itself
    included: a breadth-first search, one matrix row-OR per level."""
    seen = np.zeros(len(adj), dtype=bool)
    seen[start] = True
    frontier = seen.copy()
    while frontier.any():
        new = adj[frontier].any(axis=0) & ~seen
        seen |= new
        frontier = new
    return seen


def _groups_that_met(counts: PairCounts) -> list[list[int]]:
    """The bots in groups linked by games (in either seat), largest first."""
    n = counts.n_bots
    adj = np.zeros((n, n), dtype=bool)
    played = counts.games > 0
    adj[counts.first[played], counts.second[played]] = True
    adj |= adj.T
    found: list[list[int]] = []
    placed = np.zeros(n, dtype=bool)
    for start in range(n):
        if not placed[start]:
            group = _reachable(adj, start)
            placed |= group
            found.append(list(np.flatnonzero(group)))
    return sorted(found, key=lambda members: (-len(members), members))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -x)


class _Problem:
    """Log-likelihood, gradient and information matrix of the model on pair counts."""

    def __init__(self, counts: PairCounts, first_move: bool, prior_theta: float,
                 prior_h: float):
        self.n = counts.n_bots
        self.i = counts.first
        self.j = counts.second
        self.N = counts.games.astype(float)
        self.S = counts.points.astype(float)
        self.first_move = first_move
        self.prior_theta = prior_theta
        self.prior_h = prior_h
        self.dim = self.n + (1 if first_move else 0)

    def split(self, x: np.ndarray) -> tuple[np.ndarray, float]:
        return x[: self.n], (float(x[self.n]) if self.first_move else 0.0)

    def loglik(self, x: np.ndarray) -> float:
        theta, h = self.split(x)
        d = theta[self.i] - theta[self.j] + h
        ll = float(np.sum(self.S * _log_sigmoid(d) + (self.N - self.S) * _log_sigmoid(-d)))
        if self.prior_theta:
            ll += self.prior_theta * float(
                np.sum(0.5 * _log_sigmoid(theta) + 0.5 * _log_sigmoid(-theta)))
        if self.first_move and self.prior_h:
            ll += self.prior_h * float(0.5 * _log_sigmoid(h) + 0.5 * _log_sigmoid(-h))
        return ll

    def derivatives(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and information matrix (negative Hessian)."""
        n = self.n
        theta, h = self.split(x)
        d = theta[self.i] - theta[self.j] + h
        p = _sigmoid(d)
        g = self.S - self.N * p
        w = self.N * p * (1.0 - p)
        grad = np.zeros(self.dim)
        grad[:n] = np.bincount(self.i, g, n) - np.bincount(self.j, g, n)
        info = np.zeros((self.dim, self.dim))
        wi = np.bincount(self.i, w, n)
        wj = np.bincount(self.j, w, n)
        off = np.bincount(self.i * n + self.j, w, n * n).reshape(n, n)
        block = -(off + off.T)
        block[np.diag_indices(n)] += wi + wj
        info[:n, :n] = block
        if self.first_move:
            grad[n] = g.sum()
            info[n, n] = w.sum()
            info[:n, n] = info[n, :n] = wi - wj
        if self.prior_theta:
            ps = _sigmoid(theta)
            grad[:n] += self.prior_theta * (0.5 - ps)
            info[np.arange(n), np.arange(n)] += self.prior_theta * ps * (1.0 - ps)
        if self.first_move and self.prior_h:
            ph = _sigmoid(np.array(h))
            grad[n] += self.prior_h * float(0.5 - ph)
            info[n, n] += self.prior_h * float(ph * (1.0 - ph))
        return grad, info


def _newton(prob: _Problem, x0: np.ndarray, tol: float = 1e-12, max_iter: int = 200):
    """Maximise the log-likelihood; returns (x, information matrix, iterations, converged)."""
    n = prob.n
    e = np.zeros(prob.dim)
    e[:n] = 1.0
    # Without a prior the ratings are defined up to a constant: add e e^T / n to the information
    # (the pseudo-inverse trick) so that the Newton step keeps the mean of the ratings fixed.
    fix = np.outer(e, e) / n if not prob.prior_theta else 0.0
    x = x0.copy()
    ll = prob.loglik(x)
    converged = False
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007
        grad, info = prob.derivatives(x)
        try:
            step = np.linalg.solve(info + fix, grad)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(info + fix, grad, rcond=None)[0]
        t = 1.0
        while True:
            cand = x + t * step
            ll_c = prob.loglik(cand)
            if ll_c >= ll - 1e-12 * max(1.0, abs(ll)) or t < 1e-10:
                break
            t *= 0.5
        x, ll = cand, ll_c
        if float(np.max(np.abs(t * step), initial=0.0)) < tol:
            converged = True
            break
    _, info = prob.derivatives(x)
    return x, info, it, converged, ll


def _covariance(prob: _Problem, info: np.ndarray) -> np.ndarray:
    n = prob.n
    if prob.prior_theta:
        try:
            return np.linalg.inv(info)
        except np.linalg.LinAlgError:
            return np.linalg.pinv(info)
    e = np.zeros(prob.dim)
    e[:n] = 1.0
    ee = np.outer(e, e) / n
    try:
        return np.linalg.inv(info + ee) - ee
    except np.linalg.LinAlgError:
        return np.linalg.pinv(info)


DISPERSION_PRIOR_GAMES = 50.0  # games' worth of "no draws" the dispersion starts from


def _dispersion(prob: _Problem, x: np.ndarray, counts: PairCounts) -> float:
    """How much less a game's score varies than the p(1 - p) the information matrix assumes (a
    win-or-loss coin): a draw takes a quarter of the draw rate off it, p(1 - p) - d/4, with
    each ordered pair's own draw rate. Without this the intervals were too wide wherever games
    are drawn (99-100% coverage at draw rates of 0.3-0.6 in simulations, 95% with it); 1 when
    no game is drawn. Pearson's statistic over the games would estimate the same, but lopsided
    pairs (a strong bot against a weak one, its rare losses unseen) bias it low."""
    theta, h = prob.split(x)
    p = _sigmoid(theta[prob.i] - theta[prob.j] + h)
    binary = prob.N * p * (1.0 - p)
    with_draws = np.clip(binary - counts.draws / 4.0, 0.0, None)
    if not binary.sum() > 0:
        return 1.0
    # shrunk toward 1 by DISPERSION_PRIOR_GAMES: from a handful of games the draw rate is a
    # guess (two drawn games made the intervals 4x narrower, and 4-10 games covered 85-89%)
    games = float(prob.N.sum())
    observed = with_draws.sum() / binary.sum()
    return float((games * observed + DISPERSION_PRIOR_GAMES) / (games + DISPERSION_PRIOR_GAMES))


def _reference_transform(n: int, names: list[str], anchor: tuple[str, float] | None):
    """Matrix T mapping raw ratings to reported ones (before adding the anchor value)."""
    if anchor is None:
        return np.eye(n) - np.full((n, n), 1.0 / n), 0.0, "mean 0"
    bot, value = anchor
    if bot not in names:
        raise ValueError(f"anchor bot {bot!r} has no rated games")
    a = names.index(bot)
    t = np.eye(n)
    t[:, a] -= 1.0
    return t, float(value), f"{bot} = {value:g}"


def one_blas_thread() -> contextlib.AbstractContextManager:
    """Limit BLAS to one thread while fitting, when threadpoolctl is installed: the matrices
    are small (bots x bots), and spinning BLAS threads on a busy machine made a 0.6 s
    bootstrap take 25 s. (The commands also set OPENBLAS_NUM_THREADS before numpy loads.)"""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def fit_elo(
    counts: PairCounts,
    anchor: Anchor | None = None,
    first_move: bool = True,
    bootstrap: int = 0,
    seed: int = 0,
    prior_games: float = 1.0,
    regularise: str = "auto",
) -> EloFit:
    """Maximum-likelihood Elo ratings from pair counts (see the module docstring).

    anchor: ``(bot, value)`` to report ratings relative to that bot; default mean 0.
    first_move: also fit a first-move advantage (in Elo, added to the first player's rating);
        on by default, as everywhere (see `RatingOptions.first_move`).
    bootstrap: number of bootstrap resamples for the intervals (0 = covariance intervals).
    regularise: ``"auto"`` (only when the estimate does not exist), ``"always"`` or ``"never"``.
    """
    with one_blas_thread():
        return _fit_elo(counts, anchor, first_move, bootstrap, seed, prior_games, regularise)


def _fit_elo(counts: PairCounts, anchor: Anchor | None, first_move: bool, bootstrap: int,
             seed: int, prior_games: float, regularise: str) -> EloFit:
    names = counts.names
    n = len(names)
    if n == 0:
        empty = np.zeros(0)
        return EloFit(names=[], elo=empty, se=empty, lo=empty, hi=empty, cov=np.zeros((0, 0)),
                      first_move=0.0 if first_move else None,
                      first_move_se=0.0 if first_move else None)
    transform, offset, reference = _reference_transform(n, names, anchor)

    prior_theta, prior_h, note = _choose_prior(counts, first_move, prior_games, regularise)
    prob = _Problem(counts, first_move, prior_theta, prior_h)
    x, info, iterations, converged, ll = _newton(prob, np.zeros(prob.dim))
    dispersion = _dispersion(prob, x, counts)
    cov_raw = _covariance(prob, info) * dispersion * ELO_PER_NAT**2
    theta = x[:n] * ELO_PER_NAT
    elo = transform @ theta + offset
    cov = transform @ cov_raw[:n, :n] @ transform.T
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    fm = float(x[n] * ELO_PER_NAT) if first_move else None
    fm_se = float(math.sqrt(max(cov_raw[n, n], 0.0))) if first_move else None
    fit = EloFit(
        names=list(names), elo=elo, se=se, lo=elo - Z95 * se, hi=elo + Z95 * se, cov=cov,
        first_move=fm, first_move_se=fm_se, reference=reference, interval="covariance",
        regularised=bool(prior_theta or prior_h), note=note, iterations=iterations,
        converged=converged, log_likelihood=ll, games=counts.total_games(), dispersion=dispersion,
    )
    if bootstrap and bootstrap > 0 and prior_theta:
        # Refits drawn from a regularised fit keep the virtual draws that set its ratings: a bot
        # that never scored almost never scores in a refit either, and the percentiles measure
        # only the prior (95% intervals covered 0-73% of true ratings in simulation, the
        # covariance's 96-99%: statistics review)
        fit.note += f"; {BOOTSTRAP_NOT_USED}"
    elif bootstrap and bootstrap > 0:
        _bootstrap(fit, counts, transform, offset, first_move, bootstrap, seed, prior_games,
                   regularise, x)
    return fit


BOOTSTRAP_NOT_USED = ("the intervals are the covariance's, not the bootstrap's: refits drawn from "
                      "a regularised fit keep the virtual draws and understate the uncertainty")


SEAT_SCORED_ALL = "one seat scored every point"
SEAT_UNSETTLED = "the seats' results leave the first-move advantage without an estimate"


def _seat_problem(counts: PairCounts) -> str:
    """Why the first-move advantage has no finite estimate ('' when it has one): one seat
    scored every point, or some change of the ratings, with the advantage raised (or lowered)
    by one, fits every ordered pair at least as well (a pair that scored every point wants its
    first player's edge up, one that scored none wants it down, a mixed one wants it unchanged).
    Three games (z-a 1-0, a-z 0-1, z-a draw) are so: the fit ran off to 3,400 Elo apart. The
    changes are difference constraints between ratings, feasible when their graph has no
    negative cycle (Bellman-Ford)."""
    n, cells = counts.n_bots, counts.games > 0
    if counts.points[cells].sum() in (0, counts.games[cells].sum()):
        return SEAT_SCORED_ALL  # (or no games)
    first, second = counts.first[cells], counts.second[cells]
    points, games = counts.points[cells], counts.games[cells]
    below, above = points < games, points > 0  # d <= 0 wanted; d >= 0 wanted
    mixed = np.zeros((n, n), dtype=bool)
    mixed[first[below & above], second[below & above]] = True
    if (mixed & mixed.T).any():
        # two bots with mixed results in both seat orders pin the advantage (x_i - x_j = -edge
        # and x_j - x_i = -edge cannot both hold): the usual case, settled without the search
        return ""
    # x_v - x_u <= c as an edge u -> v of weight c, for d = x_i - x_j + edge
    tails = np.concatenate([second[below], first[above]])
    heads = np.concatenate([first[below], second[above]])
    order = np.argsort(heads, kind="stable")
    tails, heads = tails[order], heads[order]
    targets, starts = np.unique(heads, return_index=True)
    for edge in (1.0, -1.0):
        weights = np.concatenate([np.full(below.sum(), -edge), np.full(above.sum(), edge)])[order]
        distance = np.zeros(n)
        for _ in range(n):  # Bellman-Ford from a virtual source, every edge relaxed per pass
            best = np.minimum.reduceat(distance[tails] + weights, starts)
            relaxed = distance.copy()
            relaxed[targets] = np.minimum(relaxed[targets], best)
            if np.all(relaxed >= distance - 1e-12):
                return SEAT_UNSETTLED  # settled: no negative cycle, so such a change exists
            distance = relaxed
    return ""


def _choose_prior(counts: PairCounts, first_move: bool, prior_games: float, regularise: str):
    if regularise == "never":
        return 0.0, 0.0, ""
    if regularise == "always":
        return (prior_games, prior_games if first_move else 0.0,
                f"regularised: {prior_games:g} virtual draw per bot against one fixed virtual opponent")
    scored_i = (counts.wins + counts.draws) > 0
    scored_j = (counts.losses + counts.draws) > 0
    ok = _strongly_connected(counts.n_bots, counts.first, counts.second, scored_i, scored_j)
    prior_theta = 0.0 if ok else prior_games
    seat_problem = _seat_problem(counts) if first_move else ""
    prior_h = prior_games if seat_problem else 0.0
    note = ""
    if prior_theta or prior_h:
        why = []
        if prior_theta:
            never_lost = [counts.names[k] for k in _never(counts, lost=True)]
            never_scored = [counts.names[k] for k in _never(counts, lost=False)]
            if never_lost:
                why.append("never lost: " + ", ".join(never_lost[:5]))
            if never_scored:
                why.append("never scored: " + ", ".join(never_scored[:5]))
            groups = _groups_that_met(counts)
            if len(groups) > 1:
                shown = " and ".join("[" + ", ".join(counts.names[k] for k in group[:5])
                                     + (", ..." if len(group) > 5 else "") + "]"
                                     for group in groups[:4])
                why.append(f"{len(groups)} groups of bots never met: {shown}; how the groups "
                           "compare rests on the virtual draws, not on games")
            if not why:
                why.append("the results do not connect every bot in both directions")
        if seat_problem:
            why.append(seat_problem)
        note = (
            "regularised because the maximum-likelihood estimate does not exist ("
            + "; ".join(why)
            + f"): {prior_games:g} virtual draw per bot against one fixed virtual opponent, so those "
            "ratings are finite with wide intervals"
        )
    return prior_theta, prior_h, note


def _never(counts: PairCounts, lost: bool) -> list[int]:
    n = counts.n_bots
    if lost:  # points given away: losses as first, wins of the opponent when second
        given = np.bincount(counts.first, counts.losses + counts.draws, n) + np.bincount(
            counts.second, counts.wins + counts.draws, n)
    else:
        given = np.bincount(counts.first, counts.wins + counts.draws, n) + np.bincount(
            counts.second, counts.losses + counts.draws, n)
    return [int(k) for k in np.flatnonzero(given == 0)]


def _bootstrap(fit: EloFit, counts: PairCounts, transform, offset, first_move, b, seed,
               prior_games, regularise, x0) -> None:
    rng = np.random.default_rng(seed)
    n = counts.n_bots
    games = counts.games
    probs = _model_wdl(counts, x0, first_move)
    # a replicate keeps the original fit's virtual draws: drawn from a regularised fit, it may
    # give the bot that never lost a loss and so need none of its own, while the estimate it
    # varies still rests on them (without, a first-move term confounded with a bot always
    # seated first ran off to +-4000 Elo)
    prior_theta, prior_h, _ = _choose_prior(counts, first_move, prior_games, regularise)
    samples = np.empty((b, n))
    fm_samples = np.empty(b)
    for r in range(b):
        wdl = rng.multinomial(games, probs)
        c = PairCounts(counts.names, counts.first, counts.second, wdl[:, 0], wdl[:, 1], wdl[:, 2])
        pt, ph, _ = _choose_prior(c, first_move, prior_games, regularise)
        pt, ph = max(pt, prior_theta), max(ph, prior_h)
        prob = _Problem(c, first_move, pt, ph)
        x, _, _, _, _ = _newton(prob, x0, tol=1e-9, max_iter=50)
        samples[r] = transform @ (x[:n] * ELO_PER_NAT) + offset
        fm_samples[r] = x[n] * ELO_PER_NAT if first_move else 0.0
    # numpy's linear rule, the rule of arena.stats.percentile, vectorised over the bots
    fit.lo = np.percentile(samples, 2.5, axis=0)
    fit.hi = np.percentile(samples, 97.5, axis=0)
    fit.se = samples.std(axis=0, ddof=1) if b > 1 else np.zeros(n)
    fit.cov = np.cov(samples, rowvar=False) if b > 1 else np.zeros((n, n))
    if first_move and b > 1:
        fit.first_move_se = float(fm_samples.std(ddof=1))
    fit.interval = (f"bootstrap: 2.5-97.5 percentiles of {b} refits on games drawn from the "
                    "fitted ratings (parametric, as Ordo)")


def _model_wdl(counts: PairCounts, x: np.ndarray, first_move: bool) -> np.ndarray:
    """Win, draw and loss probabilities of each ordered pair under the fitted model: its expected
    score P, with draws at the pool's rate where P leaves room for them (a draw rate d needs
    d / 2 <= P <= 1 - d / 2)."""
    n = counts.n_bots
    h = float(x[n]) if first_move else 0.0
    expected = _sigmoid(x[counts.first] - x[counts.second] + h)
    # the pool's draw rate, as if one more game had not been drawn: a pool of draws only
    # (rate 1) would draw nothing but draws, and give zero-width intervals
    pool_draws = counts.draws.sum() / (counts.games.sum() + 1.0)
    draws = np.minimum(pool_draws, 2.0 * np.minimum(expected, 1.0 - expected))
    wdl = np.stack([expected - draws / 2, draws, 1.0 - expected - draws / 2], axis=1)
    return np.clip(wdl, 0.0, 1.0) / np.clip(wdl, 0.0, 1.0).sum(axis=1, keepdims=True)


def elo_mle(
    games: pd.DataFrame,
    anchor: tuple[str, float] | None = None,
    first_move: bool = True,
    bootstrap: int = 0,
    seed: int = 0,
    names: Sequence[str] | None = None,
) -> EloFit:
    """Maximum-likelihood Elo of every bot of a games table (``first``, ``second``, ``result``)."""
    return fit_elo(count_games(games, names=names), anchor=anchor, first_move=first_move,
                   bootstrap=bootstrap, seed=seed)

def elo_ratings(first: Sequence, second: Sequence, result: Sequence,
                anchor: Anchor | None = None) -> dict[str, float]:
    """Bot -> maximum-likelihood Elo of these games: the very numbers ``arena standings`` shows.

    For a running table (``(first, second, score)`` of the games so far): void games (NaN) and
    self-play are ignored and only bots with rated games are fitted, as in the standings (a bot
    listed without games would otherwise force the regularised fit on everyone).
    """
    games = CodedGames.from_frame(pd.DataFrame({"first": pd.Series(first, dtype=object),
                                                "second": pd.Series(second, dtype=object),
                                                "result": normalise_results(result)}))
    if anchor is not None and anchor[0] not in games.names:
        anchor = None
    return fit_elo(count_coded(games), anchor=anchor).as_dict()


def expected_score(elo_diff: float | np.ndarray) -> float | np.ndarray:
    """Logistic expected score for a rating difference in Elo."""
    return 1.0 / (1.0 + np.power(10.0, -np.asarray(elo_diff, dtype=float) / 400.0))


def elo_history(games: pd.DataFrame, points: int = 30, anchor: tuple[str, float] | None = None,
                ) -> pd.DataFrame:
    """Maximum-likelihood ratings refitted on the first k games (in ``seq`` order) for about
    ``points`` values of k: columns ``games`` (k), ``bot``, ``elo``, ``elo_lo``, ``elo_hi``.

    Unlike sequential Elo every point is the order-free estimate of the games so far. Bots enter
    the curve once they have played.
    """
    first, second, res = games_in_order(games)
    i, j, names = codes(first, second, None)
    other = i != j
    i, j, res = i[other], j[other], res[other]
    total = len(res)
    cols = ["games", "bot", "elo", "elo_lo", "elo_hi"]
    if total == 0:
        return pd.DataFrame(columns=cols)
    n = len(names)
    ks = np.unique(np.linspace(0, total, num=max(2, points) + 1)[1:].round().astype(int))
    ks = ks[ks > 0]
    key = i * n + j
    # first game index of every bot, to know who is in the pool at each k
    entry = np.full(n, total, dtype=np.int64)
    np.minimum.at(entry, i, np.arange(total))
    np.minimum.at(entry, j, np.arange(total))
    frames = []
    for k in ks.tolist():
        present = np.flatnonzero(entry < k)
        if len(present) < 2:
            continue
        remap = np.full(n, -1, dtype=np.int64)
        remap[present] = np.arange(len(present))
        m = len(present)
        kk = key[:k]
        rr = res[:k]
        sub_key = remap[kk // n] * m + remap[kk % n]
        wins = np.bincount(sub_key[rr == 1.0], minlength=m * m)
        draws = np.bincount(sub_key[rr == 0.5], minlength=m * m)
        losses = np.bincount(sub_key[rr == 0.0], minlength=m * m)
        nz = np.flatnonzero(wins + draws + losses)
        sub_names = [names[p] for p in present]
        counts = PairCounts(sub_names, nz // m, nz % m, wins[nz], draws[nz], losses[nz])
        use_anchor = anchor if anchor is not None and anchor[0] in sub_names else None
        fit = fit_elo(counts, anchor=use_anchor)
        frames.append(pd.DataFrame({"games": k, "bot": sub_names, "elo": fit.elo,
                                    "elo_lo": fit.lo, "elo_hi": fit.hi}))
    if not frames:
        return pd.DataFrame(columns=cols)
    return pd.concat(frames, ignore_index=True)


# ---------------------------------------------------------------------------------------------
# The rating system (arena.ratings.system): the one Elo fit of every standings table
# ---------------------------------------------------------------------------------------------


class EloSystem:
    """Maximum-likelihood Elo with 95 % intervals (and the fitted first-move advantage)."""

    name = "elo"
    optional = False
    display = (
        Display("Elo", ("elo",), 1, "elo"),
        Display("95% interval", ("elo_lo", "elo_hi"), 0, "elo"),
    )

    def wanted(self, options: RatingOptions) -> bool:
        return True  # the standings are sorted by it

    def rate(self, games: CodedGames, options: RatingOptions) -> Rated:
        fit = fit_elo(count_coded(games), anchor=options.anchor, first_move=options.first_move,
                      bootstrap=options.bootstrap, seed=options.seed)
        columns = {
            "elo": fit.elo, "elo_lo": fit.lo, "elo_hi": fit.hi, "elo_se": fit.se,
            # say in every output (csv and json too) how the intervals were computed
            "elo_interval": "bootstrap" if fit.interval.startswith("bootstrap") else "covariance",
        }
        if options.first_move:
            columns["first_move_elo"] = fit.first_move
        attrs = {"method": fit.describe(), "first_move": fit.first_move,
                 "first_move_se": fit.first_move_se, "regularised": fit.regularised,
                 "interval": fit.interval, "reference": fit.reference,
                 "anchored": options.anchor is not None}
        return Rated(columns=columns, notes=[fit.describe()], attrs=attrs,
                     warnings=[fit.note] if fit.note else [])


SYSTEM = EloSystem()
