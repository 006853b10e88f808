"""Games analysed on one or several processes, in the order given.

A process keeps one `Oracle` per variant (64 MiB of solver table each, plus about 80 MB for
numba's machine code) and analyses whole games, so the positions of a game share the table its
first positions filled. Results come back in the order of the games given, whatever the order
they finish in, so the caller (the one writer of analysis.db) stores them as they come and a
rerun's output does not depend on the number of processes.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from arena.game import parse_variant
from arena.solver.analysis import GameAnalysis, analyse
from arena.solver.oracle import Oracle

_ORACLES: dict[str, Oracle] = {}  # this process's, by variant spec


@dataclass(frozen=True)
class Analysed:
    """One game's outcome: its analysis, or why its moves could not be replayed."""

    key: str
    row: dict
    analysis: GameAnalysis | None
    error: str | None = None


def analyse_row(key: str, row: dict, budget_s: float) -> Analysed:
    """Analyse one game row (as `arena analyze` builds it) with this process's oracles."""
    oracle = _ORACLES.get(row["variant"])
    if oracle is None:
        oracle = _ORACLES[row["variant"]] = Oracle(parse_variant(row["variant"]))
    try:
        analysis = analyse(oracle.variant, row["moves"].split(), row["opening_plies"],
                           lambda game: oracle.timed(oracle.score, game, budget_s),
                           adjudicated=row["result"] if row["adjudicated"] else None)
    except ValueError as exc:
        return Analysed(key, row, None, str(exc))
    return Analysed(key, row, analysis)


def _job(task: tuple[str, dict, float]) -> Analysed:
    return analyse_row(*task)


def _worker_start() -> None:
    # Ctrl-C reaches the whole process group: the parent stops the workers, which must not
    # each print a traceback
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Results(Protocol):
    """What `analysed` returns: the analyses in order, and `close()` to stop early."""

    def __iter__(self) -> Iterator[Analysed]: ...

    def __next__(self) -> Analysed: ...

    def close(self) -> None: ...


class _PoolResults:
    """The results of a pool's jobs, in order; `close()` stops its workers at once."""

    def __init__(self, pool, tasks: list[tuple[str, dict, float]]) -> None:
        self.pool = pool
        self._results = pool.imap(_job, tasks, chunksize=1)

    def __iter__(self) -> _PoolResults:
        return self

    def __next__(self) -> Analysed:
        return next(self._results)

    def close(self) -> None:
        self.pool.terminate()
        self.pool.join()


def analysed(todo: Sequence[tuple[str, dict]], budget_s: float, processes: int) -> Results:
    """The games of `todo` ((key, row) pairs) analysed, in their order, on up to `processes`
    processes (1: in this one). The processes start now (before the caller starts a progress
    bar's thread: they are forked); `close()` on the result stops them at once (after an error
    or Ctrl-C: the games already yielded are the caller's to keep)."""
    processes = min(processes, len(todo))
    if processes <= 1:
        return (analyse_row(key, row, budget_s) for key, row in todo)
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    pool = multiprocessing.get_context(method).Pool(processes, initializer=_worker_start)
    return _PoolResults(pool, [(key, row, budget_s) for key, row in todo])
