"""Void games (neither bot of a game could start): counted apart, and not replayed for ever.

Bots that never start at all stop the run before their games are stored (`startwatch`); the
void games stored are those of bots that started in other games of the run (a machine too busy
for both start-ups in time, a cluster worker without the bots' interpreter). A void game is
stored (not rated) and played again by the next run. A pairing whose bots both
failed to start in `VOID_LIMIT` of its games (or in every game of a pairing with fewer) is
stopped: its remaining games are skipped, with a note, in this run and in the runs after (until
its void games are gone, e.g. with --fresh), so that a field whose entrants cannot start never
settles into replaying them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from arena.tournament.schedule import ScheduledGame

VOID_LIMIT = 3


def pairing_of(game: ScheduledGame) -> frozenset[str]:
    return frozenset(game.bots)


class VoidTracker:
    def __init__(self, schedule: Iterable[ScheduledGame], void_ids: set[str],
                 limit: int = VOID_LIMIT) -> None:
        self.limit = limit
        self.void_ids = set(void_ids)
        schedule = list(schedule)
        # a pairing of two games could never reach 3 void ones: it was replayed every run
        self.games: Counter[frozenset[str]] = Counter(pairing_of(g) for g in schedule)
        self.counts: Counter[frozenset[str]] = Counter(
            pairing_of(g) for g in schedule if g.game_id in self.void_ids)

    def limit_of(self, pairing: frozenset[str]) -> int:
        return min(self.limit, self.games[pairing]) if self.games[pairing] else self.limit

    def is_blocked(self, game: ScheduledGame) -> bool:
        return self.counts[pairing_of(game)] >= self.limit_of(pairing_of(game))

    def record(self, game: ScheduledGame) -> bool:
        """Count a void game; True when it is the one that stops its pairing."""
        if game.game_id in self.void_ids:
            return False  # a void game played again and void again: the same failure
        self.void_ids.add(game.game_id)
        self.counts[pairing_of(game)] += 1
        return self.counts[pairing_of(game)] == self.limit_of(pairing_of(game))

    def note(self, game: ScheduledGame, skipped: int) -> str:
        first, second = sorted(game.bots)
        failed = self.limit_of(pairing_of(game))
        left = f"their {skipped} remaining game(s) are skipped" if skipped else "no more of " \
            "their games are played"
        return (f"note: {first} and {second} both failed to start in {failed} games: {left}, "
                "in this run and the next (see the void games' detail in `arena export`; fix "
                "the bots, then run with --fresh)")
