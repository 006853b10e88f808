"""What a league's scheduling needs from its stored games, counted as they come.

`league run` chose each pair from counts it rebuilt by reading every stored game (and again for
the variants), so a choice cost grew with the league: about 5 ms on a small one, 69 ms at 10,000
games. `StoredTally` reads the store once at the start of a run and then only the games stored
since its last look (`seq` is unique, so indexed: the look costs the same at any size), and keeps
the counts a choice asks for: wins/draws/losses per ordered pair (`pair_counts`, the same
`PairCounts` as `count_pairs` over every game), games per bot and variant (`by_bot_variant`), and
it feeds the same rows, in the order played, to the trackers that follow the games one by one
(`scheduler.RepeatTracker`, `forfeits.ForfeitStreaks`).

Reading from the store rather than from the runner's own results keeps one source of truth: a
game counts once it is stored, whoever stored it, and a run started on an old league counts its
old games the same way.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Sequence

import numpy as np

from arena.league.forfeits import ForfeitStreaks
from arena.league.scheduler import RepeatTracker
from arena.ratings.elo import PairCounts

# result of the first seat -> index into a pair's [wins, draws, losses]
_OUTCOME = {1.0: 0, 0.5: 1, 0.0: 2}


class StoredTally:
    """Counts of the rated games stored so far (void games, with no result, count for nothing
    here: as in `count_pairs`), brought up to date by `update`."""

    def __init__(self, repeats: RepeatTracker, forfeits: ForfeitStreaks | None = None) -> None:
        self.repeats = repeats
        self.forfeits = forfeits
        self.last_seq = 0  # the store's `seq` of the latest game counted
        self._wdl: dict[tuple[str, str], list[int]] = {}  # (first, second) -> wins, draws, losses
        self._names: set[str] = set()  # every bot in a rated game, self-play included
        self.by_bot_variant: Counter[tuple[str, str]] = Counter()  # (bot, variant) -> games

    def update(self, conn: sqlite3.Connection) -> int:
        """Count the games stored since the last look; returns how many there were."""
        rows = conn.execute(
            "SELECT seq, first, second, result, variant, COALESCE(opening, ''), "
            "COALESCE(moves, ''), reason, forfeit_by, COALESCE(detail, ''), "
            "COALESCE(first_hash, ''), COALESCE(second_hash, '') "
            "FROM games WHERE result IS NOT NULL AND seq > ? ORDER BY seq", (self.last_seq,))
        added = 0
        for (seq, first, second, result, variant, opening, moves, reason, forfeit_by, detail,
             first_hash, second_hash) in rows:
            self._add(first, second, float(result), variant)
            self.repeats.add(first, second, variant, opening, moves)
            if self.forfeits is not None:
                self.forfeits.add(first, second, reason, forfeit_by, result, detail,
                                  (first_hash, second_hash))
            self.last_seq = seq
            added += 1
        return added

    def _add(self, first: str, second: str, result: float, variant: str) -> None:
        if result not in _OUTCOME:
            raise ValueError(f"results must be 1, 0.5 or 0, got {result!r}")
        self._names.update((first, second))
        self.by_bot_variant[(first, variant)] += 1
        self.by_bot_variant[(second, variant)] += 1
        if first != second:  # a bot's games against itself rate nothing (as count_pairs)
            self._wdl.setdefault((first, second), [0, 0, 0])[_OUTCOME[result]] += 1

    def pair_counts(self, active: Sequence[str]) -> PairCounts:
        """`count_pairs` over every rated game stored, its bots and `active` as the names
        (sorted), pairs in the order of their indices: equal to it, array for array."""
        names = sorted({*active, *self._names})
        index = {name: k for k, name in enumerate(names)}
        keyed = sorted(((index[a], index[b]), wdl) for (a, b), wdl in self._wdl.items())
        table = np.array([wdl for _, wdl in keyed], dtype=np.int64).reshape(-1, 3)
        return PairCounts(names=names,
                          first=np.array([i for (i, _), _ in keyed], dtype=np.int64),
                          second=np.array([j for (_, j), _ in keyed], dtype=np.int64),
                          wins=table[:, 0].copy(), draws=table[:, 1].copy(),
                          losses=table[:, 2].copy())
