"""Solver work on one or several processes, the results in the order of the tasks.

A process keeps the `Oracle`s of its last variants (`oracle_for`: 64 MiB of solver table each,
plus about 80 MB for numba's machine code), so the tasks a process takes in turn share a table.
Results come back in the order of the tasks, whatever the order they finish in: a caller that
stores them as they come (one writer) stores them in the same order for any number of
processes. (Their values are the same where every position settles within its budget: each
process's table holds different positions, so one near the budget's edge may settle in one run
and not in another.)
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TypeVar

from arena.game import parse_variant
from arena.proctree import die_with_parent
from arena.recent import RecentlyUsed
from arena.solver.oracle import Oracle

Task = TypeVar("Task")
Result = TypeVar("Result", covariant=True)

# this process's oracles, by variant spec, of the variants used last: each holds a 64 MiB table,
# and a games file over many board sizes would otherwise keep one per size
MAX_ORACLES = 2
_ORACLES = RecentlyUsed(lambda spec: Oracle(parse_variant(spec)), MAX_ORACLES)


def oracle_for(spec: str) -> Oracle:
    """This process's oracle for a variant (made on first use; at most MAX_ORACLES kept)."""
    return _ORACLES.get(spec)


class Results(Protocol[Result]):
    """What `in_order` returns: the results in the tasks' order, and `close()` to stop early."""

    def __iter__(self) -> Iterator[Result]: ...

    def __next__(self) -> Result: ...

    def close(self) -> None: ...


class WorkerDied(RuntimeError):
    """A solver process ended without its result (killed: out of memory, a signal)."""


_DIED = ("a solver process ended without its result (killed, or out of memory: try fewer "
         "processes with -j)")
# tasks queued per process beyond the one it runs: enough to keep it busy, few enough that a
# stop cancels the rest at once (every task submitted up front took 5 s for 100,000 tasks, and
# an interpreter exiting runs every queued task to its end)
AHEAD = 2
_STOPS = {signal.SIGINT, signal.SIGTERM}


class _PoolResults:
    """The results of `function` over `tasks` on a process pool, in order; at most `AHEAD`
    tasks per process wait in its queue; `close()` stops the pool at once."""

    def __init__(self, processes: int, function: Callable, tasks: Sequence) -> None:
        from concurrent.futures import ProcessPoolExecutor

        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        self.executor = ProcessPoolExecutor(processes, multiprocessing.get_context(method),
                                            initializer=_worker_start, initargs=(os.getpid(),))
        self.function = function
        self._tasks = iter(tasks)
        self._pending: deque = deque()
        self._room = processes * (1 + AHEAD)
        # the first submission forks the workers: a stop signal then would be lost inside the
        # fork's own locking (an "Exception ignored"), so it waits until they are there
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
        try:
            try:
                self._fill()
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)  # a pending stop: now
        except BaseException:
            self.close()
            raise

    def _fill(self) -> None:
        from concurrent.futures.process import BrokenProcessPool

        while len(self._pending) < self._room:
            task = next(self._tasks, _END)
            if task is _END:
                return
            try:
                self._pending.append(self.executor.submit(self.function, task))
            except BrokenProcessPool:
                raise WorkerDied(_DIED) from None

    def __iter__(self) -> _PoolResults:
        return self

    def __next__(self):
        from concurrent.futures.process import BrokenProcessPool

        if not self._pending:
            raise StopIteration
        future = self._pending.popleft()
        try:
            result = future.result()
        except BrokenProcessPool:  # multiprocessing.Pool would wait for it forever
            raise WorkerDied(_DIED) from None
        self._fill()
        return result

    def close(self) -> None:
        for future in self._pending:
            future.cancel()
        # a running solve may take its whole budget, many times over: end it now (Python
        # 3.14 has a method for that; before, the processes are a private attribute)
        terminate = getattr(self.executor, "terminate_workers", None)
        if terminate is not None:
            terminate()
        else:
            for process in list((getattr(self.executor, "_processes", None) or {}).values()):
                process.terminate()
        self.executor.shutdown(wait=True, cancel_futures=True)


_END = object()


def _worker_start(parent: int) -> None:
    # Ctrl-C reaches the whole process group: the parent stops the workers, which must not
    # each print a traceback; and SIGTERM (the parent's way to stop them) ends a worker
    # quietly, whatever handler the parent had when it forked it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)  # blocked by the parent while it forked
    # a parent killed outright (SIGKILL, the OOM killer) cannot stop its workers, and they
    # would wait on their task queue for ever: the kernel ends them with it
    die_with_parent(signal.SIGTERM)
    if os.getppid() != parent:  # it died before that was set
        os._exit(1)


def in_order(function: Callable[[Task], Result], tasks: Sequence[Task],
             processes: int) -> Results[Result]:
    """`function` (a module-level function, as workers import it) over `tasks`, in their
    order, on up to `processes` processes (1: in this one). The processes start now (before a
    caller's progress bar starts its thread: they are forked); `close()` on the result stops
    them at once (after an error or Ctrl-C; the results already taken are the caller's). A
    process that dies raises `WorkerDied` where its result was due."""
    processes = min(processes, len(tasks))
    if processes <= 1:
        return (function(task) for task in tasks)
    return _PoolResults(processes, function, tasks)
