"""`RecentPlayers`: the players of the variants a bot process played last, at most a few.

A process may meet many variants (a tournament over board sizes): each player holds its search
tables (alphabeta about 17 MB, perfect 64 MiB of solver table more), and one kept per variant
ran a process out of the sandbox's memory. The least recently played variant's player goes."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

Player = TypeVar("Player")


class RecentPlayers(Generic[Player]):
    """Players made by `make(variant)`, the `limit` most recently asked for kept."""

    def __init__(self, make: Callable[[object], Player], limit: int) -> None:
        self.make = make
        self.limit = limit
        self._players: OrderedDict[object, Player] = OrderedDict()

    def __len__(self) -> int:
        return len(self._players)

    def __iter__(self) -> Iterator[Player]:
        return iter(list(self._players.values()))

    def get(self, variant) -> Player:
        player = self._players.pop(variant, None)
        if player is None:
            player = self.make(variant)
            while len(self._players) >= self.limit:
                self._players.popitem(last=False)  # its tables go with it
        self._players[variant] = player  # the most recent last
        return player
