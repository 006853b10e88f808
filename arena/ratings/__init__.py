"""Ratings: pure functions over a games table (see docs/DESIGN.md for its columns).

* :mod:`arena.ratings.elo` - maximum-likelihood Elo (Bradley-Terry, draws = half a point) and
  sequential K-factor Elo;
* :mod:`arena.ratings.trueskill_ratings` - TrueSkill (mu, sigma, mu - 3 sigma);
* :mod:`arena.ratings.pairs` - head-to-head W/D/L, Elo difference, margin, LOS, pentanomial;
* :mod:`arena.ratings.sprt` - SPRT log-likelihood ratios and an incremental :class:`SPRT`;
* :mod:`arena.ratings.facts` - first-player advantage, draw rate, lengths, forfeits, move times;
* :mod:`arena.ratings.standings` - the standings table per variant and pooled.
"""

from arena.ratings.elo import (
    EloFit,
    PairCounts,
    count_games,
    count_pairs,
    elo_mle,
    fit_elo,
    sequential_elo,
)
from arena.ratings.pairs import pairwise_table, penta_stats, pentanomial_counts, wdl_stats
from arena.ratings.sprt import SPRT, llr_pentanomial, llr_trinomial, sprt_bounds
from arena.ratings.standings import compute_standings, standings_by_variant
from arena.ratings.trueskill_ratings import trueskill_ratings

__all__ = [
    "SPRT",
    "EloFit",
    "PairCounts",
    "compute_standings",
    "count_games",
    "count_pairs",
    "elo_mle",
    "fit_elo",
    "llr_pentanomial",
    "llr_trinomial",
    "pairwise_table",
    "penta_stats",
    "pentanomial_counts",
    "sequential_elo",
    "sprt_bounds",
    "standings_by_variant",
    "trueskill_ratings",
    "wdl_stats",
]
