"""Active scheduling for a league: each next pair of games goes where it settles the ranking fastest.

Pure: the scheduler sees pair counts (who scored what against whom) and returns the pairs of bots
to play next; it plays nothing and stores nothing. Every choice is a *seat-swapped pair* of games
from one opening, so seat balance per pair is exact by construction.

The rules, in order of precedence:
1. Placement: a bot with fewer than `placement_pairs` pairs played meets opponents spread over the
   current ranking (top, middle, bottom ...), so its first rating is not built on one neighbour.
2. Floor: one choice in `floor_every` goes to the least-played pair of active bots, so every pair
   keeps meeting and a wrong ranking cannot hide behind never-played pairs.
3. Value: otherwise the pair of neighbouring ranks whose order is least certain (LOS nearest 50%,
   from the Elo maximum-likelihood fit and its covariance) that has not reached `pair_cap` games
   and does not only repeat itself (`repeating_pairs`: its last `repeats_settle` games each a copy
   of an earlier one, move for move: two deterministic bots that have played all they will play;
   two such bots of equal strength took 582 of 646 games, 24 of them distinct: user review).
A league is `settled` when every pair of neighbouring ranks is ordered at `confidence` LOS, has
reached `pair_cap` games or only repeats itself.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from arena.ratings.elo import EloFit, PairCounts, fit_elo

BATCH_SPREAD = 0.05  # LOS distance one earlier pick in the same batch is worth


@dataclass(frozen=True)
class SchedulerSettings:
    placement_pairs: int = 3  # seat-swapped pairs a new entrant plays before ranking-driven choices
    floor_every: int = 8      # every N-th choice goes to the least-played pair
    pair_cap: int = 1000      # games after which a pair is never chosen for its value again
    confidence: float = 0.95  # LOS at which two neighbours count as ordered
    repeats_settle: int = 10  # games in a row that copy earlier ones, after which a pair is settled

    def __post_init__(self) -> None:
        if self.placement_pairs < 0 or self.floor_every < 1 or self.pair_cap < 2 \
                or self.repeats_settle < 1:
            raise ValueError("placement_pairs >= 0, floor_every >= 1, pair_cap >= 2 and "
                             "repeats_settle >= 1 are required")
        if not 0.5 < self.confidence < 1.0:
            raise ValueError(f"confidence must be within (0.5, 1), got {self.confidence}")


@dataclass(frozen=True)
class Neighbours:
    """Two bots of neighbouring rank: `higher` is rated above `lower`."""

    higher: str
    lower: str
    los: float   # probability that `higher` is really stronger
    games: int   # games played between them

    def ordered(self, confidence: float) -> bool:
        return self.los >= confidence


def _normal_cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def pair_games(counts: PairCounts) -> dict[frozenset[str], int]:
    """Games played per unordered pair of bots."""
    played: dict[frozenset[str], int] = {}
    for i, j, n in zip(counts.first, counts.second, counts.games, strict=True):
        key = frozenset((counts.names[i], counts.names[j]))
        played[key] = played.get(key, 0) + int(n)
    return played


def neighbours(fit: EloFit, counts: PairCounts, active: Sequence[str]) -> list[Neighbours]:
    """The active bots in rating order, as pairs of neighbouring ranks with their LOS."""
    index = {name: k for k, name in enumerate(fit.names)}
    rated = sorted((b for b in active if b in index), key=lambda b: -fit.elo[index[b]])
    played = pair_games(counts)
    out = []
    for hi, lo in zip(rated, rated[1:], strict=False):
        a, b = index[hi], index[lo]
        var = fit.cov[a, a] + fit.cov[b, b] - 2.0 * fit.cov[a, b]
        diff = fit.elo[a] - fit.elo[b]
        los = _normal_cdf(diff / math.sqrt(var)) if var > 0 else (1.0 if diff > 0 else 0.5)
        out.append(Neighbours(hi, lo, los, played.get(frozenset((hi, lo)), 0)))
    return out


class RepeatTracker:
    """Per pair of bots, the games seen (hashed) and how many in a row, up to the latest, each
    repeated an earlier one move for move from the same seats and opening: fed the games in the
    order played, as they come (a league's run keeps one instead of reading every game's moves
    before each choice: diff review)."""

    def __init__(self, repeats_settle: int) -> None:
        self.repeats_settle = repeats_settle
        self._seen: dict[frozenset[str], set[int]] = {}
        self._streak: dict[frozenset[str], int] = {}

    def add(self, first: str, second: str, variant: str, opening: str, moves: str) -> None:
        key = frozenset((first, second))
        game = hash((first, variant, opening, moves))
        earlier = self._seen.setdefault(key, set())
        self._streak[key] = self._streak.get(key, 0) + 1 if game in earlier else 0
        earlier.add(game)

    def repeating(self) -> set[frozenset[str]]:
        """The pairs whose last `repeats_settle` games only repeated earlier ones."""
        return {key for key, n in self._streak.items() if n >= self.repeats_settle}


def repeating_pairs(games: Iterable[tuple[str, str, str, str, str]],
                    repeats_settle: int) -> set[frozenset[str]]:
    """The pairs of bots whose last `repeats_settle` games, of `games` (first, second, variant,
    opening, moves: in the order played), each repeated an earlier game of theirs move for move
    from the same seats and opening: more such games tell nothing new."""
    tracker = RepeatTracker(repeats_settle)
    for game in games:
        tracker.add(*game)
    return tracker.repeating()


def is_settled(fit: EloFit, counts: PairCounts, active: Sequence[str], settings: SchedulerSettings,
               repeating: Iterable[frozenset[str]] = ()) -> bool:
    """Every neighbouring pair ordered at the confidence, at its game cap, or only repeating
    itself (`repeating`; a single bot is settled)."""
    repeating = set(repeating)
    return all(p.ordered(settings.confidence) or p.games >= settings.pair_cap
               or frozenset((p.higher, p.lower)) in repeating
               for p in neighbours(fit, counts, active))


class Scheduler:
    """Chooses the next pairs; `seed` makes every choice reproducible (ties are broken at random)."""

    def __init__(self, settings: SchedulerSettings | None = None, seed: int = 0) -> None:
        self.settings = settings or SchedulerSettings()
        self.seed = seed
        self._rng = random.Random(seed)
        self._choices = 0

    def choose(self, counts: PairCounts, active: Sequence[str], k: int = 1,
               in_flight: Iterable[tuple[str, str]] = (),
               repeating: Iterable[frozenset[str]] = ()) -> list[tuple[str, str]]:
        """Up to `k` pairs (a, b) to play next, each as a seat-swapped pair of games.

        `in_flight` pairs are being played now: they count as played, so parallel workers spread out.
        `repeating` pairs (`repeating_pairs`) are not chosen for their value.
        """
        repeating = set(repeating)
        active = sorted(set(active))
        if len(active) < 2:
            return []
        played = pair_games(counts)
        for a, b in in_flight:
            key = frozenset((a, b))
            played[key] = played.get(key, 0) + 2
        fit = fit_elo(counts) if counts.names else None
        chosen: list[tuple[str, str]] = []
        neighbour_pairs = neighbours(fit, counts, active) if fit is not None else []
        for _ in range(k):
            pair = self._next(neighbour_pairs, chosen, active, played, repeating)
            if pair is None:
                break
            chosen.append(pair)
            key = frozenset(pair)
            played[key] = played.get(key, 0) + 2
        return chosen

    # -- one choice -------------------------------------------------------------------------

    def _next(self, neighbour_pairs: list[Neighbours], chosen: list[tuple[str, str]], active: list[str],
              played: dict[frozenset[str], int],
              repeating: set[frozenset[str]]) -> tuple[str, str] | None:
        self._choices += 1
        ranking = self._ranking(neighbour_pairs, active)
        for pair in (self._placement(ranking, played), self._floor(active, played)
                     if self._choices % self.settings.floor_every == 0 else None):
            if pair is not None:
                return pair
        pair = self._most_uncertain(neighbour_pairs, chosen, played, repeating)
        return pair if pair is not None else self._floor(active, played)

    @staticmethod
    def _ranking(neighbour_pairs: list[Neighbours], active: list[str]) -> list[str]:
        known = [neighbour_pairs[0].higher, *(p.lower for p in neighbour_pairs)] if neighbour_pairs else []
        return known + [b for b in active if b not in known]  # bots without games: not rated yet

    def _placement(self, ranking: list[str], played: dict[frozenset[str], int]) -> tuple[str, str] | None:
        def pairs_of(bot: str) -> int:
            return sum(n for key, n in played.items() if bot in key) // 2

        newcomers = [b for b in ranking if pairs_of(b) < self.settings.placement_pairs]
        if not newcomers:
            return None
        bot = min(newcomers, key=lambda b: (pairs_of(b), ranking.index(b)))
        others = [b for b in ranking if b != bot]
        step = pairs_of(bot)
        # Spread over the ranking: top, bottom, then the quantiles between (k / (P - 1)).
        spread = max(self.settings.placement_pairs - 1, 1)
        target = round(min(step, spread) / spread * (len(others) - 1))
        by_distance = sorted(range(len(others)),
                             key=lambda k: (abs(k - target), played.get(frozenset((bot, others[k])), 0)))
        return bot, others[by_distance[0]]

    def _floor(self, active: list[str], played: dict[frozenset[str], int]) -> tuple[str, str] | None:
        pairs = [(a, b) for x, a in enumerate(active) for b in active[x + 1:]]
        fewest = min(played.get(frozenset(p), 0) for p in pairs)
        candidates = [p for p in pairs if played.get(frozenset(p), 0) == fewest]
        return self._rng.choice(candidates)

    def _most_uncertain(self, neighbour_pairs: list[Neighbours], chosen: list[tuple[str, str]],
                        played: dict[frozenset[str], int],
                        repeating: set[frozenset[str]]) -> tuple[str, str] | None:
        open_pairs = [p for p in neighbour_pairs
                      if played.get(frozenset((p.higher, p.lower)), 0) < self.settings.pair_cap
                      and frozenset((p.higher, p.lower)) not in repeating]
        if not open_pairs:
            return None

        def score(p: Neighbours) -> float:
            # Within one batch the fit does not move, so each earlier pick of a pair makes it a
            # little less urgent: parallel workers spread over the few most uncertain neighbours.
            return abs(p.los - 0.5) + BATCH_SPREAD * chosen.count((p.higher, p.lower))

        best = min(score(p) for p in open_pairs)
        ties = [p for p in open_pairs if score(p) - best < 1e-9]
        pick = self._rng.choice(ties)
        return pick.higher, pick.lower


def balanced_variant(variants: Sequence[str], games_by_bot_variant: dict[tuple[str, str], int],
                     a: str, b: str) -> str:
    """The variant in which bots a and b have played least (together), first listed on ties."""
    return min(variants, key=lambda v: (games_by_bot_variant.get((a, v), 0)
                                        + games_by_bot_variant.get((b, v), 0), variants.index(v)))


def empty_counts(names: Sequence[str]) -> PairCounts:
    """Pair counts with no games (for a league whose bots have not played yet)."""
    none = np.zeros(0, dtype=np.int64)
    return PairCounts(names=list(names), first=none, second=none, wins=none, draws=none, losses=none)
