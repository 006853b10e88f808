"""Optional CPU affinity: each worker and the two bots of its game on one core (as fastchess's
`affinity` option does), so that a game's three processes share one cache and no two games
compete for a core.

Pinning is done on the calling *thread* (Linux keeps the mask per thread, and `pid` 0 in
`sched_setaffinity` means the calling thread): a worker pins itself before it starts any bot,
and every process it starts afterwards (bots, a sandbox runtime and whatever the bot starts)
inherits the mask from birth, with no window in which a bot runs unpinned. A forked worker
process pins itself the same way before it starts any thread.

Unpinned, a game's bots still follow their worker when the run's games fill the CPUs
(`follows`): each worker is given a core in turn (`follow_cores`, as with affinity), and as each
game begins it pins its two bots' programs to it (`follow`), and nothing else: the kernel moves
the worker freely. (The core the worker happened to run on as the game began had often been
another worker's, and both games' bots then shared one core for the whole game.) Left to
itself, the kernel woke a bot on whichever core it had last run on, often the other one, so
that each turn crossed cores: a field of 16 bots played 0.68-0.83 times as fast as one of 4
(its turns 65% slower on the same 2 cores); with its bots following, 0.98 (median of 5
interleaved rounds 0.90; issue 13's measure, `bench/throughput.py --unfollowed` prints both).
The worker follows no one: a worker pinned under load had made `affinity = true` slower.

Workers are given the CPUs this arena may use (`os.sched_getaffinity(0)`) in turn, so with more
workers than CPUs some share a core (said once, as a note). Where the platform has no affinity
call (not Linux) a note says so and everything runs unpinned.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

UNAVAILABLE_NOTE = "note: CPU affinity is not available on this platform: the bots run unpinned"


def available() -> bool:
    return hasattr(os, "sched_setaffinity") and hasattr(os, "sched_getaffinity")


# The threads of one bot process pinned at most (a bot may start many; each costs a system
# call whenever its worker changes core, and the rest only keeps running where it was).
FOLLOW_THREADS = 256


@functools.cache
def _sched_getcpu() -> ctypes._CFuncPtr | None:
    """glibc's `sched_getcpu` (Python has no binding of it), None where there is none."""
    try:
        function = ctypes.CDLL(None, use_errno=True).sched_getcpu
    except (OSError, AttributeError):
        return None
    function.restype, function.argtypes = ctypes.c_int, []
    return function


def current_cpu() -> int | None:
    """The CPU the calling thread runs on now (about a microsecond), None where unknown."""
    function = _sched_getcpu()
    cpu = function() if function is not None else -1
    return cpu if cpu >= 0 else None


def follow(pid: int, cpu: int) -> bool:
    """Pin every thread of process `pid` and of the processes it started (up to FOLLOW_THREADS
    in all) to `cpu`; False if it could not be done (no affinity call, the process gone, or a
    CPU taken from us meanwhile). A bot may widen its own mask again: it is a hint for the
    scheduler, not a limit. The processes it started count: a bot run by a wrapper (`sh run.sh`
    starting `java`, without exec) had its wrapper pinned and its program free on every core,
    against an opponent held to one."""
    if not available():
        return False
    from arena.proctree import children_of

    pinned = False
    budget = FOLLOW_THREADS
    processes, seen = [pid], {pid}
    while processes and budget > 0:
        process = processes.pop(0)
        try:
            threads = os.listdir(f"/proc/{process}/task")[:budget]
        except OSError:
            continue  # gone meanwhile
        budget -= len(threads)
        for thread in threads:
            try:
                os.sched_setaffinity(int(thread), {cpu})
                pinned = True
            except (OSError, ValueError):  # a thread that ended meanwhile
                continue
        for child in children_of(process) or ():
            if child not in seen:
                seen.add(child)
                processes.append(child)
    return pinned


def follows(workers: int) -> bool:
    """Whether the bots of a run playing `workers` games at once follow their workers: when
    the games fill this arena's CPUs. With a core to spare, a bot's threads (a parallel search,
    pondering) may use it, as they always could."""
    return available() and workers >= len(allowed_cpus())


def follow_cores(follow: bool) -> tuple[int, ...]:
    """The cores given in turn to workers whose bots follow them (`follows`), one each, as
    `affinity = true` gives them, the workers themselves left unpinned; () when not following."""
    return allowed_cpus() if follow else ()


def allowed_cpus() -> tuple[int, ...]:
    """The CPUs this process may run on, in order; () where affinity is not available."""
    if not available():
        return ()
    return tuple(sorted(os.sched_getaffinity(0)))


def worker_cores(enabled: bool) -> tuple[int, ...]:
    """The CPUs to give workers in turn when affinity is `enabled`; () means unpinned."""
    return allowed_cpus() if enabled else ()


def core_of(slot: int, cores: Sequence[int]) -> int | None:
    """The core of the worker in `slot` (0-based): the CPUs round-robin; None if unpinned."""
    return cores[slot % len(cores)] if cores else None


def free_core(cores: Sequence[int], in_use: Iterable[int | None]) -> int | None:
    """The core for a new worker beside workers on `in_use`: the least shared, in order (so
    workers started one by one go round-robin, and a replacement takes the core it vacated)."""
    if not cores:
        return None
    taken = list(in_use)
    return min(cores, key=lambda core: (taken.count(core), cores.index(core)))


def pin_thread(cpus: Iterable[int]) -> bool:
    """Pin the calling thread (and every process and thread it starts from now on) to `cpus`;
    False if that cannot be done (no affinity call, or a CPU taken away meanwhile)."""
    if not available():
        return False
    try:
        os.sched_setaffinity(0, set(cpus))
    except OSError:  # e.g. the CPU left our cpuset since the cores were chosen
        return False
    return True


@contextmanager
def pinned(cpus: Iterable[int]) -> Iterator[bool]:
    """`pin_thread` for a block (True if pinned), the thread's former CPUs restored after it."""
    before = os.sched_getaffinity(0) if available() else None
    ok = pin_thread(cpus)
    try:
        yield ok
    finally:
        if ok and before is not None:
            pin_thread(before)


def notes(enabled: bool, workers: int, cores: Sequence[int] | None = None) -> list[str]:
    """What to tell the user before a run with `workers` workers: nothing when each worker has a
    core of its own; the sharing when there are more workers than CPUs; the platform's lack."""
    if not enabled:
        return []
    if not available():
        return [UNAVAILABLE_NOTE]
    cores = allowed_cpus() if cores is None else cores
    if workers > len(cores):
        return [f"note: affinity: {workers} workers on {len(cores)} CPU"
                f"{'s' if len(cores) != 1 else ''} ({', '.join(map(str, cores))}): "
                "assigned round-robin, so some workers and their bots share a core"]
    return []
