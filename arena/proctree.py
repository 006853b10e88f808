"""Process trees on Linux: finding every process that belongs to a bot, killing and reaping them.

A bot runs in its own session and process group (its pid is the id of both) and carries a token
in its environment. What belongs to it: anything in its session or group, its descendants, and
anything carrying its token (which finds grandchildren that started their own session).

The arena makes itself a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`), so orphaned
grandchildren are re-parented to the arena rather than to init and can be reaped here. It follows
that every process of a bot is in a tree whose root is a child of the bot or a direct child of the
arena: `may_have_leftovers` looks there first, and only if something there may be the bot's is
the whole of `/proc` scanned (`owned_pids`).

Reaping never steals an exit status that another part of the arena waits for: only zombies whose
parent is this process and that were attributed to the bot being closed are reaped, and the pids
of live bots are kept in `LIVE_BOTS` (the one piece of process-wide state: a pid is reaped only if
no live bot of another game has it).
"""

from __future__ import annotations

import os
import select
import signal
import threading
import time
from collections.abc import Callable, Iterable
from typing import NamedTuple

TOKEN_VAR = "ARENA_BOT_TOKEN"
# Every bot of a tournament run carries its results folder's key in this variable, so that the
# next run of the same folder can find what an earlier, killed run left behind.
RUN_VAR = "ARENA_RUN"
_run_key: str | None = None


def set_run_key(key: str | None) -> None:
    """The key the bots started from now on carry in RUN_VAR (a forked worker inherits it)."""
    global _run_key
    _run_key = key


def run_key() -> str | None:
    return _run_key


def kill_left_behind(key: str) -> int:
    """SIGKILL every process (and its process group) that carries RUN_VAR=key, except this one;
    returns how many. Call it while holding the folder's run lock: no live run owns them then."""
    marker = f"{RUN_VAR}={key}".encode()
    me = os.getpid()
    found = []
    for pid in all_pids():
        if pid == me:
            continue
        env = read_environ(pid)
        if env and marker in env.split(b"\0"):
            found.append(pid)
    for pid in found:
        st = read_stat(pid)
        if st is not None and st.pgid not in (0, os.getpgrp()):
            kill_group(st.pgid, signal.SIGKILL)
        kill(pid, signal.SIGKILL)
    for pid in found:
        reap(pid)
    return len(found)
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
_TICK_MS = 1000.0 / os.sysconf("SC_CLK_TCK")


def _prctl(option: int, value: int) -> bool:
    """`prctl(option, value)` through libc; False where it is not available (not Linux)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


_subreaper_of: int | None = None  # the pid that made itself a subreaper (not inherited by fork)


def make_subreaper() -> bool:
    """Make this process a child subreaper (once per process); returns whether it is one."""
    global _subreaper_of
    if _subreaper_of != os.getpid() and _prctl(PR_SET_CHILD_SUBREAPER, 1):
        _subreaper_of = os.getpid()
    return _subreaper_of == os.getpid()


def is_subreaper() -> bool:
    return _subreaper_of == os.getpid()


def die_with_parent(sig: int = signal.SIGKILL) -> bool:
    """Get `sig` when the parent process dies (even by SIGKILL); returns whether it is set."""
    return _prctl(PR_SET_PDEATHSIG, int(sig))


class LiveBots:
    """Pids of the bot processes this process started and has not reaped yet.

    A forked child (a tournament worker) owns none of its parent's bots: the set, and its lock
    (which another thread may have held at the fork), start afresh in a new process.
    """

    def __init__(self) -> None:
        self._owner = os.getpid()
        self._lock = threading.Lock()
        self._pids: set[int] = set()

    def _here(self) -> None:
        if self._owner != os.getpid():
            self._owner, self._lock, self._pids = os.getpid(), threading.Lock(), set()

    @property
    def lock(self) -> threading.Lock:
        """Held by the caller of `add` and `discard`: around starting a bot, so its pid is
        registered before anyone may reap it, and around reaping it, so the number is not
        handed to a new bot before it leaves the set."""
        self._here()
        return self._lock

    def add(self, pid: int) -> None:
        self._here()
        self._pids.add(pid)

    def discard(self, pid: int) -> None:
        self._here()
        self._pids.discard(pid)

    def __contains__(self, pid: int) -> bool:
        self._here()
        return pid in self._pids

    def __len__(self) -> int:
        self._here()
        return len(self._pids)


LIVE_BOTS = LiveBots()


class ProcStat(NamedTuple):
    ppid: int
    pgid: int
    sid: int
    state: str  # R, S, D, Z, T, ...
    cpu_ticks: int  # user + system, with waited-for children

    @property
    def cpu_ms(self) -> float:
        return self.cpu_ticks * _TICK_MS


def read_stat(pid: int) -> ProcStat | None:
    """A process's /proc/<pid>/stat fields, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()
    try:
        return ProcStat(int(fields[1]), int(fields[2]), int(fields[3]), fields[0].decode(),
                        int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14]))
    except (IndexError, ValueError):
        return None


def all_pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def read_environ(pid: int) -> bytes | None:
    """The environment block of a process (empty for a zombie), None if unreadable."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f.read()
    except OSError:
        return None


def children_of(pid: int) -> list[int] | None:
    """Direct children of a process (all its threads), None if the kernel does not list them."""
    children: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                children.extend(int(c) for c in f.read().split())
        except FileNotFoundError:
            continue  # a thread that just ended
        except OSError:
            return None
    return children


def may_have_leftovers(bot_pid: int, token: bytes) -> bool:
    """Could anything of the bot exist besides the bot process itself? (Cheap: no /proc scan.)

    Everything a bot starts hangs from the bot while it runs, and once its parent is gone
    from a direct child of this (subreaper) process. So only the bot's children and ours are
    looked at: a bot with children, or a child of ours in the bot's session or group, or
    carrying its token, or that cannot be told apart (no token readable), means yes. Children
    that carry another bot's token belong to other games. Without the subreaper or the
    kernel's children lists: always yes.
    """
    if not is_subreaper():
        return True
    bot_children = children_of(bot_pid)
    if bot_children:
        return True
    children = children_of(os.getpid())
    if children is None or (bot_children is None and is_running(bot_pid)):
        return True
    other_bot = TOKEN_VAR.encode() + b"="
    for child in children:
        if child == bot_pid:
            continue
        st = read_stat(child)
        if st is None or st.state in ("Z", "X"):
            continue  # dead already: nothing of it can run on (its children would show here)
        if st.sid == bot_pid or st.pgid == bot_pid:
            return True
        if child in LIVE_BOTS:
            continue  # another game's bot (its own session)
        env = read_environ(child)
        if not env or token in env or other_bot not in env:
            return True
    return False


def owned_pids(bot_pid: int, token: bytes) -> set[int]:
    """Every process that belongs to the bot, except the bot process itself (a full scan)."""
    me = os.getpid()
    stats = {}
    for pid in all_pids():
        if pid in (me, bot_pid):
            continue
        st = read_stat(pid)
        if st is not None:
            stats[pid] = st
    owned = {pid for pid, st in stats.items() if bot_pid in (st.sid, st.pgid)}
    frontier = {bot_pid} | owned  # descendants through parent links
    while frontier:
        children = {pid for pid, st in stats.items() if st.ppid in frontier and pid not in owned}
        owned |= children
        frontier = children
    for pid, st in stats.items():
        if pid not in owned and st.state != "Z" and token in (read_environ(pid) or b""):
            owned.add(pid)
    return owned


def kill_holding(markers: set[bytes]) -> int:
    """SIGKILL (which ends a stopped process too) every process whose environment holds one
    of `markers` (`NAME=value` entries), except this one; returns how many."""
    me, found = os.getpid(), []
    for pid in all_pids():
        env = read_environ(pid) if pid != me else None
        if env and not markers.isdisjoint(env.split(b"\0")):
            found.append(pid)
    for pid in found:
        kill(pid, signal.SIGKILL)
        reap(pid)
    return len(found)


def kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def is_running(pid: int) -> bool:
    st = read_stat(pid)
    return st is not None and st.state not in ("Z", "X")


def left_by_dead_owner(name: str, prefix: str) -> bool:
    """Whether `name` (`<prefix><pid>-...`: a bot's HOME folder, a bot's cgroup) was made by an
    arena process that is gone. A zombie owner is gone (a killed arena whose parent has not
    waited for it yet, e.g. under a subreaper); one that /proc hides from us (hidepid, another
    user's arena) is taken as alive."""
    owner = name[len(prefix):].partition("-")[0] if name.startswith(prefix) else ""
    if not (owner.isascii() and owner.isdigit()):
        return False
    try:
        os.kill(int(owner), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    stat = read_stat(int(owner))
    return stat is not None and stat.state in ("Z", "X")


def reap(pid: int) -> None:
    """Reap `pid` if it is a zombie child of this process and not a live bot of another game."""
    if pid in LIVE_BOTS:
        return
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def all_exited(pids: Iterable[int], timeout: float) -> bool:
    """Whether every one of `pids` has exited (a zombie counts) within `timeout` seconds, each
    watched through a pidfd; False where pidfds are missing. A pid that was reaped and given to
    another process can only make this wait longer, never answer wrongly: it had exited."""
    deadline = time.monotonic() + timeout
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        except (AttributeError, OSError):
            return False
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            if not poller.poll(max(0.0, deadline - time.monotonic()) * 1000):
                return False
        finally:
            os.close(fd)
    return True


def reap_orphans(pids: set[int], patience: float = 1.0) -> None:
    """Reap these processes once they are zombies re-parented to us (they were children of a
    process of ours that exited first); pids that are gone or belong to someone else are left."""
    me = os.getpid()
    deadline = time.monotonic() + patience
    waiting = set(pids)
    while waiting:
        for pid in list(waiting):
            st = read_stat(pid)
            if st is None or (st.ppid != me and st.state == "Z"):
                waiting.discard(pid)  # gone, or reaped by its own parent's parent
            elif st.ppid == me and st.state == "Z" and pid not in LIVE_BOTS:
                reap(pid)
                waiting.discard(pid)
        if not waiting or time.monotonic() > deadline:
            return
        _pause(0.005)


def reap_sandbox_zombies() -> None:
    """Reap zombie children of ours named `bwrap` that are no live bot: a sandbox's own init,
    which can outlive its bwrap under load and then falls to us (a subreaper). Only bot
    processes start bwrap here, so nobody else waits for these."""
    for child in children_of(os.getpid()) or ():
        if child in LIVE_BOTS:
            continue
        try:
            with open(f"/proc/{child}/stat", "rb") as f:
                head = f.read(64)
        except OSError:
            continue
        if b"(bwrap) Z" in head:
            reap(child)


def kill_and_reap(bot_pid: int, token: bytes, is_done: Callable[[], bool],
                  wait_exit: Callable[[float], object]) -> None:
    """SIGKILL the bot's group and every process it owns, round after round until none runs,
    then reap what became our zombies. Later rounds scan afresh (never the first snapshot), so
    a reused pid is never signalled. `wait_exit(seconds)` waits for the bot process itself."""
    seen: set[int] = set()
    current = owned_pids(bot_pid, token)
    for _ in range(100):
        seen |= current
        kill_group(bot_pid, signal.SIGKILL)
        for pid in current:
            kill(pid, signal.SIGKILL)
        if not is_done():
            wait_exit(0.5)
        for pid in current:
            reap(pid)
        current = owned_pids(bot_pid, token)
        for pid in current:
            reap(pid)
        if not any(is_running(pid) for pid in current):
            break
        _pause(0.005)
    seen |= current
    # Orphans we killed become our zombies (subreaper) a moment later: reap them.
    for _ in range(40):
        if not any(read_stat(pid) for pid in seen):
            break
        for pid in seen:
            reap(pid)
        _pause(0.005)


def _pause(seconds: float) -> None:
    """A short pause between rounds of killing (only on the slow path: a bot that left
    processes behind); select() so that it is not a busy loop."""
    select.select([], [], [], seconds)


def describe_status(returncode: int | None) -> str:
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name}"
    return f"exited with code {returncode}"


# --- waiting for one process to exit, without reaping it -----------------------------------------

class ExitWatch:
    """Waits for one child process to exit without reaping it (so its pid, which is also the
    id of its group and session, stays taken): a pidfd polled with a deadline, or where pidfds
    are missing a thread blocked in waitid(WNOWAIT)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.status: int | None = None
        self._fd: int | None = None
        self._thread: threading.Thread | None = None
        self._exited = threading.Event()
        try:
            self._fd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            self._fd = None

    def poll(self) -> int | None:
        """The exit status (negative: killed by that signal), None while it runs."""
        if self.status is not None:
            return self.status
        try:
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return None
        if info is None or info.si_pid == 0:
            return None
        self.status = info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
        return self.status

    def wait(self, timeout: float) -> int | None:
        """Wait up to `timeout` seconds; the exit status, or None if it still runs."""
        if self.poll() is not None or timeout <= 0:
            return self.status
        if self._fd is not None:
            poller = select.poll()
            poller.register(self._fd, select.POLLIN)
            poller.poll(timeout * 1000)
        else:
            self._wait_in_thread(timeout)
        return self.poll()

    def _wait_in_thread(self, timeout: float) -> None:
        if self._thread is None:
            def block() -> None:
                try:
                    os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
                except ChildProcessError:
                    pass
                self._exited.set()

            self._thread = threading.Thread(target=block, name=f"exit-{self.pid}", daemon=True)
            self._thread.start()
        self._exited.wait(timeout)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
