"""Ratings: pure functions over a games table (see docs/DESIGN.md for its columns).

Layers, bottom first (a module imports only modules of lower layers; a test pins it):

* :mod:`arena.ratings.table` - which games count, variants, anchors, ``seq`` order, bot codes;
  :mod:`arena.ratings.sprt` - SPRT log-likelihood ratios and an incremental :class:`SPRT`;
* :mod:`arena.ratings.system` - the one surface of a rating system (``SYSTEM.rate``);
* the rating systems, one module each: :mod:`arena.ratings.elo` (maximum-likelihood Elo,
  Bradley-Terry with draws as half a point), :mod:`arena.ratings.trueskill_ratings` (TrueSkill),
  :mod:`arena.ratings.sequential` (K-factor Elo, order-dependent);
* :mod:`arena.ratings.pairs` - head-to-head W/D/L, Elo difference, margin, LOS, pentanomial;
  :mod:`arena.ratings.registry` - ``SYSTEMS``, the one list of rating systems;
* :mod:`arena.ratings.facts` - first-player advantage, draw rate, lengths, forfeits, move times;
* :mod:`arena.ratings.standings` - the standings table per variant and pooled.
"""

from arena.ratings.elo import EloFit, PairCounts, count_games, count_pairs, elo_mle, fit_elo
from arena.ratings.pairs import pairwise_table, penta_stats, pentanomial_counts, wdl_stats
from arena.ratings.registry import SYSTEMS
from arena.ratings.sequential import sequential_elo
from arena.ratings.sprt import SPRT, llr_pentanomial, llr_trinomial, sprt_bounds
from arena.ratings.standings import compute_standings, standings_by_variant
from arena.ratings.trueskill_ratings import trueskill_ratings

__all__ = [
    "SPRT",
    "SYSTEMS",
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
