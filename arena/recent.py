"""`RecentlyUsed`: the values made for the keys used last, at most a few of them.

A process may meet many variants (a tournament over board sizes, a games file of many sizes):
each bot player holds its search tables (alphabeta about 17 MB, perfect 64 MiB of solver table
more), each solver oracle 64 MiB, and one kept per variant ran a process out of the sandbox's
memory. The least recently used value goes. Light: bots import it at start."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator


class RecentlyUsed:
    """Values made by `make(key)`, those of the `limit` most recently asked keys kept."""

    def __init__(self, make: Callable, limit: int) -> None:
        self.make = make
        self.limit = limit
        self._values: OrderedDict = OrderedDict()

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator:
        return iter(list(self._values.values()))

    def get(self, key: Hashable):
        value = self._values.pop(key, None)
        if value is None:
            value = self.make(key)
            while len(self._values) >= self.limit:
                self._values.popitem(last=False)  # its tables go with it
        self._values[key] = value  # the most recent last
        return value
