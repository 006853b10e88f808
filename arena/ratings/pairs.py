"""Head-to-head statistics between two bots.

Conventions (as fastchess/cutechess, see ``../shared/reference/README.md``):

* score ``mu = (W + D/2) / N``, Elo difference ``-400 log10(1/mu - 1)``;
* standard error of the score ``SE^2 = [w(1-mu)^2 + d(1/2-mu)^2 + l mu^2] / N`` (w, d, l the
  fractions), 95 % margin ``[Elo(mu + z SE) - Elo(mu - z SE)] / 2`` with z = 1.959964;
* likelihood of superiority ``LOS = Phi((mu - 1/2) / SE)``; where every result is alike (SE = 0),
  cutechess' ``LOS = (1 + erf((W - L) / sqrt(2 (W + L)))) / 2`` instead, but never below the LOS
  of the same record with one result a step nearer a draw (so that 10-0 ranks above 9-1);
* normalized Elo ``(mu - 1/2) / sigma * 800 / ln 10`` (sigma the per-game standard deviation;
  per pair of games: the pair's standard deviation times sqrt 2);
* pentanomial: two games with the same start and swapped seats form a pair scoring
  0, 1/4, 1/2, 3/4 or 1, and the same formulas apply to pair scores.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from arena.ratings.elo import Z95, count_games, fit_elo
from arena.ratings.table import between_two, select_variant

NELO_SCALE = 800.0 / math.log(10.0)


def phi(x: float) -> float:
    """Standard normal CDF."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def score_to_elo(mu: float) -> float:
    """Logistic Elo difference for an expected score; +-inf at 1 and 0."""
    if mu <= 0.0:
        return -math.inf
    if mu >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / mu - 1.0)


@dataclass
class MatchStats:
    """Score, Elo and uncertainty of a series of games or game pairs, from one side."""

    n: float  # games (trinomial) or pairs (pentanomial)
    score: float
    elo: float
    elo_margin: float
    los: float  # likelihood of superiority, 0..1
    nelo: float
    nelo_margin: float
    se: float  # standard error of the score

    def as_dict(self) -> dict[str, float]:
        return dict(self.__dict__)


def _stats(values: Sequence[float], counts: Sequence[float], games_per_obs: int,
           z: float = Z95) -> MatchStats:
    counts = np.asarray(counts, dtype=float)
    values = np.asarray(values, dtype=float)
    n = float(counts.sum())
    if n == 0:
        nan = float("nan")
        return MatchStats(0, nan, nan, nan, nan, nan, nan, nan)
    frac = counts / n
    mu = float(np.dot(frac, values))
    var = float(np.dot(frac, (values - mu) ** 2))
    se = math.sqrt(var / n)
    elo = score_to_elo(mu)
    if se > 0:
        hi = score_to_elo(min(mu + z * se, 1.0))
        lo = score_to_elo(max(mu - z * se, 0.0))
        margin = (hi - lo) / 2.0
        los = phi((mu - 0.5) / se)
        sigma_game = math.sqrt(var * games_per_obs)  # per-game sd (pair sd * sqrt 2)
        nelo = (mu - 0.5) / sigma_game * NELO_SCALE
        nelo_margin = z * NELO_SCALE / math.sqrt(n * games_per_obs)
    else:
        margin = float("nan")
        los = _los_of_alike_results(values, counts, games_per_obs)
        nelo = float("nan")
        nelo_margin = float("nan")
    return MatchStats(n, mu, elo, margin, los, nelo, nelo_margin, se)


def _los_of_alike_results(values: np.ndarray, counts: np.ndarray, games_per_obs: int) -> float:
    """LOS where every result is alike (SE = 0), never below the next-worse record's.

    Phi((mu - 1/2) / 0) would claim certainty after one game; cutechess' wins-and-losses formula
    says 84 % after 1-0-0, but alone it put 10-0-0 (99.92 %) below 9-1-0 (99.998 % by the normal
    approximation). So a clean sweep is at least as likely superior as the same record with one
    result moved a step toward a draw, and a whitewash at most as likely.
    """
    los = los_wl(float(counts[values > 0.5].sum()), float(counts[values < 0.5].sum()))
    [alike] = np.flatnonzero(counts)
    if values[alike] == 0.5:
        return los
    toward_middle = [j for j in range(len(values))
                     if min(values[alike], 0.5) <= values[j] <= max(values[alike], 0.5)
                     and j != alike]
    step = min(toward_middle, key=lambda j: abs(values[j] - values[alike]))
    worse = counts.copy()
    worse[alike] -= 1
    worse[step] += 1
    neighbour = _stats(values, worse, games_per_obs).los
    return max(los, neighbour) if values[alike] > 0.5 else min(los, neighbour)


def wdl_stats(wins: float, draws: float, losses: float, z: float = Z95) -> MatchStats:
    """Trinomial statistics of W/D/L counts (seen from the side that has ``wins``)."""
    return _stats([1.0, 0.5, 0.0], [wins, draws, losses], 1, z)


def penta_stats(penta: Sequence[float], z: float = Z95) -> MatchStats:
    """Pentanomial statistics; ``penta`` = numbers of pairs scoring 0, 1/4, 1/2, 3/4, 1."""
    if len(penta) != 5:
        raise ValueError("pentanomial counts need 5 entries")
    return _stats([0.0, 0.25, 0.5, 0.75, 1.0], penta, 2, z)


def los_wl(wins: float, losses: float) -> float:
    """cutechess' likelihood of superiority from wins and losses only."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


# ---------------------------------------------------------------------------------------------
# From a games table
# ---------------------------------------------------------------------------------------------


def pentanomial_counts(games: pd.DataFrame) -> pd.DataFrame:
    """Pentanomial counts for every pair of bots from games sharing a ``pair_id``.

    Only pairs of exactly two games between the same two bots with swapped seats count. Files
    of several runs joined (a replication on another machine) repeat each ``pair_id`` and
    ``game_id``: the k-th copy of each game of a pair pairs with the k-th copy of the other, in
    table order (all their pairs were lost: a pair of four games is no pair). Returns
    columns bot_a, bot_b (bot_a < bot_b by name), p0 .. p4 (pairs in which bot_a scored 0, 1/4,
    1/2, 3/4, 1 of the two games) and ``pairs``.
    """
    cols = ["bot_a", "bot_b", "p0", "p1", "p2", "p3", "p4", "pairs"]
    if "pair_id" not in games.columns or games.empty:
        return pd.DataFrame(columns=cols)
    g = between_two(games)
    g = g.loc[g["pair_id"].notna() & (g["pair_id"].astype(str) != "")]
    if g.empty:
        return pd.DataFrame(columns=cols)
    g = g[["pair_id", "first", "second", "result",
           *(["game_id"] if "game_id" in g.columns else [])]].copy()
    g["pair_id"] = g["pair_id"].astype(str)
    g["first"] = g["first"].astype(str)
    g["second"] = g["second"].astype(str)
    if "game_id" in g.columns:
        copy = g.groupby(["pair_id", g["game_id"].astype(str)], sort=False).cumcount()
        if copy.any():  # runs joined: the k-th copies of a pair's games are one pair
            g["pair_id"] = g["pair_id"] + "#" + copy.astype(str)
    size = g.groupby("pair_id")["result"].transform("size")
    g = g.loc[size == 2].sort_values(["pair_id", "first"], kind="stable")
    if g.empty:
        return pd.DataFrame(columns=cols)
    a_rows = g.iloc[0::2].reset_index(drop=True)
    b_rows = g.iloc[1::2].reset_index(drop=True)
    ok = (a_rows["first"] == b_rows["second"]) & (a_rows["second"] == b_rows["first"]) & (
        a_rows["first"] != a_rows["second"])
    a_rows, b_rows = a_rows.loc[ok], b_rows.loc[ok]
    # bot_a = alphabetically first of the two; its score over both games
    bot_a = np.minimum(a_rows["first"].to_numpy(dtype=object), a_rows["second"].to_numpy(
        dtype=object))
    a_is_first_in_row_a = a_rows["first"].to_numpy(dtype=object) == bot_a
    ra = a_rows["result"].to_numpy()
    rb = b_rows["result"].to_numpy()
    score_a = np.where(a_is_first_in_row_a, ra + (1.0 - rb), (1.0 - ra) + rb)
    idx = np.rint(score_a * 2).astype(int)
    bot_b = np.where(a_is_first_in_row_a, a_rows["second"].to_numpy(dtype=object),
                     a_rows["first"].to_numpy(dtype=object))
    frame = pd.DataFrame({"bot_a": bot_a, "bot_b": bot_b, "idx": idx})
    table = pd.crosstab([frame["bot_a"], frame["bot_b"]], frame["idx"])
    for k in range(5):
        if k not in table.columns:
            table[k] = 0
    table = table[[0, 1, 2, 3, 4]]
    table.columns = ["p0", "p1", "p2", "p3", "p4"]
    table = table.reset_index()
    table["pairs"] = table[["p0", "p1", "p2", "p3", "p4"]].sum(axis=1)
    return table[cols]


def head_to_head(games: pd.DataFrame, names: Sequence[str] | None = None) -> pd.DataFrame:
    """W/D/L of every unordered pair (bot_a < bot_b by index in ``names`` or by name)."""
    counts = count_games(games, names=names)
    i, j = counts.first, counts.second
    swap = i > j
    a = np.where(swap, j, i)
    b = np.where(swap, i, j)
    w = np.where(swap, counts.losses, counts.wins)
    lo = np.where(swap, counts.wins, counts.losses)
    frame = pd.DataFrame({"a": a, "b": b, "wins": w, "draws": counts.draws, "losses": lo})
    frame = frame.groupby(["a", "b"], as_index=False).sum()
    names_arr = np.asarray(counts.names, dtype=object)
    frame.insert(0, "bot_a", names_arr[frame["a"].to_numpy()])
    frame.insert(1, "bot_b", names_arr[frame["b"].to_numpy()])
    return frame.drop(columns=["a", "b"])


def pairwise_table(games: pd.DataFrame, variant: str | None = None,
                   ratings: Mapping[str, float] | None = None,
                   first_move: bool = True) -> pd.DataFrame:
    """One row per pair of bots that met: head-to-head and its statistics.

    Columns: bot_a, bot_b, games, wins, draws, losses (from bot_a's side), score, elo_diff,
    elo_margin, los (all from the score formulas of the module docstring), mle_diff (difference of
    the joint maximum-likelihood ratings), mle_se and mle_los (its standard error from the fit's
    covariance, and the probability that bot_a is the stronger by it: all games count, not only
    these two's; whether two bots' separate intervals overlap is no test of their difference:
    statistics review), pairs, penta (``"p0;p1;p2;p3;p4"``, pairs in which bot_a
    scored 0..1), nelo, nelo_margin (pentanomial when there are game pairs, else trinomial).
    bot_a is the better-rated bot of the two; rows are sorted by bot_a's rating, then bot_b's.

    ``ratings`` (bot -> Elo): the standings' maximum-likelihood ratings of these games, so that
    ``mle_diff`` shows the very numbers of the standings (e.g. with a fitted first-move
    advantage); without it the same fit (:func:`~arena.ratings.elo.fit_elo`) is run here.
    ``first_move``: whether that fit has a first-move term (as the standings' had); the
    covariance of ``mle_se`` is always this fit's.
    """
    g = select_variant(games, variant)
    cols = ["bot_a", "bot_b", "games", "wins", "draws", "losses", "score", "elo_diff",
            "elo_margin", "los", "mle_diff", "mle_se", "mle_los", "pairs", "penta", "nelo",
            "nelo_margin"]
    g = between_two(g)
    if g.empty:
        return pd.DataFrame(columns=cols)
    counts = count_games(g)
    fit = fit_elo(counts, first_move=first_move)
    if ratings is None or not set(counts.names) <= set(ratings):
        ratings = fit.as_dict()
    rating = {b: float(ratings[b]) for b in counts.names}
    index = {b: k for k, b in enumerate(fit.names)}
    names = sorted(counts.names, key=lambda b: (-rating[b], b))
    h2h = head_to_head(g, names=names)
    penta = pentanomial_counts(g)
    penta_map = {}
    for row in penta.itertuples(index=False):
        vec = [row.p0, row.p1, row.p2, row.p3, row.p4]
        penta_map[(row.bot_a, row.bot_b)] = vec
        penta_map[(row.bot_b, row.bot_a)] = vec[::-1]
    rows = []
    for r in h2h.itertuples(index=False):
        st = wdl_stats(r.wins, r.draws, r.losses)
        vec = penta_map.get((r.bot_a, r.bot_b))
        if vec is not None and sum(vec) > 0:
            ps = penta_stats(vec)
            nelo, nelo_margin, npairs = ps.nelo, ps.nelo_margin, int(sum(vec))
            penta_s = ";".join(str(int(v)) for v in vec)
        else:
            nelo, nelo_margin, npairs, penta_s = st.nelo, st.nelo_margin, 0, ""
        rows.append({
            "bot_a": r.bot_a, "bot_b": r.bot_b, "games": int(r.wins + r.draws + r.losses),
            "wins": int(r.wins), "draws": int(r.draws), "losses": int(r.losses),
            "score": st.score, "elo_diff": st.elo, "elo_margin": st.elo_margin, "los": st.los,
            "mle_diff": (diff := float(rating[r.bot_a] - rating[r.bot_b])),
            **_difference_se(fit.cov, index[r.bot_a], index[r.bot_b], diff), "pairs": npairs,
            "penta": penta_s, "nelo": nelo, "nelo_margin": nelo_margin,
        })
    return pd.DataFrame(rows, columns=cols)


def _difference_se(cov: np.ndarray, a: int, b: int, diff: float) -> dict[str, float]:
    """`mle_se` and `mle_los` of the rating difference of bots `a` and `b` in a fit's covariance."""
    var = float(cov[a, a] + cov[b, b] - 2.0 * cov[a, b])
    if not var > 0:
        return {"mle_se": float("nan"), "mle_los": float("nan")}
    se = math.sqrt(var)
    return {"mle_se": se, "mle_los": phi(diff / se)}


def score_matrix(games: pd.DataFrame, names: Sequence[str] | None = None) -> pd.DataFrame:
    """Square table: score of the row bot against the column bot (NaN if they never met)."""
    h2h = head_to_head(games, names=names)
    if names is None:
        names = sorted(set(h2h["bot_a"]) | set(h2h["bot_b"]))
    mat = pd.DataFrame(np.nan, index=list(names), columns=list(names))
    games_mat = pd.DataFrame(0, index=list(names), columns=list(names))
    for r in h2h.itertuples(index=False):
        n = r.wins + r.draws + r.losses
        if n == 0:
            continue
        s = (r.wins + 0.5 * r.draws) / n
        mat.loc[r.bot_a, r.bot_b] = s
        mat.loc[r.bot_b, r.bot_a] = 1.0 - s
        games_mat.loc[r.bot_a, r.bot_b] = n
        games_mat.loc[r.bot_b, r.bot_a] = n
    mat.attrs["games"] = games_mat
    return mat
