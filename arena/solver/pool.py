"""Solver work on one or several processes, the results in the order of the tasks.

A process keeps one `Oracle` per variant (`oracle_for`: 64 MiB of solver table each, plus about
80 MB for numba's machine code), so the tasks a process takes in turn share its table. Results
come back in the order of the tasks, whatever the order they finish in: a caller that stores
them as they come (one writer) writes the same thing for any number of processes.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TypeVar

from arena.game import Game, parse_variant
from arena.solver.oracle import Oracle

Task = TypeVar("Task")
Result = TypeVar("Result", covariant=True)

_ORACLES: dict[str, Oracle] = {}  # this process's, by variant spec


def oracle_for(spec: str) -> Oracle:
    """This process's oracle for a variant (made on first use)."""
    oracle = _ORACLES.get(spec)
    if oracle is None:
        oracle = _ORACLES[spec] = Oracle(parse_variant(spec))
    return oracle


def weak_score(task: tuple[str, list[int], float]) -> int | None:
    """A task for `in_order`: the result (-1, 0, 1) for the side to move of the position after
    the moves (variant spec, engine moves, seconds), None when not settled in time."""
    spec, moves, seconds = task
    oracle = oracle_for(spec)
    game = Game(oracle.variant)
    for move in moves:
        game.push(move)
    return oracle.timed(oracle.weak_score, game, seconds)


class Results(Protocol[Result]):
    """What `in_order` returns: the results in the tasks' order, and `close()` to stop early."""

    def __iter__(self) -> Iterator[Result]: ...

    def __next__(self) -> Result: ...

    def close(self) -> None: ...


class _PoolResults:
    """A pool's results, in order; `close()` stops its workers at once."""

    def __init__(self, pool, function: Callable, tasks: Sequence) -> None:
        self.pool = pool
        self._results = pool.imap(function, tasks, chunksize=1)

    def __iter__(self) -> _PoolResults:
        return self

    def __next__(self):
        return next(self._results)

    def close(self) -> None:
        self.pool.terminate()
        self.pool.join()


def _worker_start() -> None:
    # Ctrl-C reaches the whole process group: the parent stops the workers, which must not
    # each print a traceback
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def in_order(function: Callable[[Task], Result], tasks: Sequence[Task],
             processes: int) -> Results[Result]:
    """`function` (a module-level function, as workers import it) over `tasks`, in their
    order, on up to `processes` processes (1: in this one). The processes start now (before a
    caller's progress bar starts its thread: they are forked); `close()` on the result stops
    them at once (after an error or Ctrl-C; the results already taken are the caller's)."""
    processes = min(processes, len(tasks))
    if processes <= 1:
        return (function(task) for task in tasks)
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    pool = multiprocessing.get_context(method).Pool(processes, initializer=_worker_start)
    return _PoolResults(pool, function, tasks)
