"""Memory cgroups for sandboxed bots: one cap on everything a bot holds in RAM.

The sandbox's rlimits cap each process's address space, not their sum, and not memory held
outside any address space (its /tmp, shared memory, anonymous files from `memfd_create`): a bot
of 64 processes could hold 64 times `memory_mb`. Where the arena may make a cgroup with the
memory controller, each sandboxed bot gets its own (`arena-bot-<arena pid>-<n>`, beside or
below the arena's cgroup), with a hard limit and no swap, and the bot's first process joins it
before it becomes bwrap (`sandbox.build_argv`), so that every process of the bot is inside. When
the bot's memory passes the limit, the kernel's OOM killer ends a process of the bot, never one
of the arena; `oom_killed` tells the forfeit detail why.

Where no such cgroup can be made (no write access, cgroup v2 without a delegated subtree), bots
keep the per-process limits only and `probe()` says why (`arena check` shows it).
Pure parsing (`own_paths`, `memory_mounts`, `find_base`) is separate from the file system work.
"""

from __future__ import annotations

import functools
import itertools
import os
import signal
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

PREFIX = "arena-bot-"
_numbers = itertools.count(1)
# cgroups that were still busy when their bot was released (a process of the bot was still on
# its way out): removed at the next start of a bot, never waited for in a close
_pending: list[MemoryCgroup] = []
_pending_lock = threading.Lock()  # the games of a worker start and close bots on several threads


@dataclass(frozen=True)
class Support:
    """Where this process makes its bots' cgroups, or why it cannot (`base` None)."""

    version: int = 0  # 1 or 2
    base: Path | None = None
    reason: str = ""

    @property
    def available(self) -> bool:
        return self.base is not None

    def describe(self) -> str:
        if self.base is None:
            return f"no memory cgroup ({self.reason})"
        return f"memory cgroup v{self.version}"


# --- parsing (pure) ---------------------------------------------------------------------------

def own_paths(proc_self_cgroup: str) -> dict[str, str]:
    """{"memory": path (v1), "": path (v2)} from the text of /proc/self/cgroup."""
    found: dict[str, str] = {}
    for line in proc_self_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            found[""] = path
        elif "memory" in controllers.split(","):
            found["memory"] = path
    return found


def memory_mounts(mountinfo: str) -> dict[str, tuple[str, str]]:
    """{"memory": (mount point, root), "": (mount point, root)}: the v1 memory hierarchy and the
    v2 hierarchy, from the text of /proc/self/mountinfo (root: the hierarchy's path mounted)."""
    found: dict[str, tuple[str, str]] = {}
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        root, point = _unescape(fields[3]), _unescape(fields[4])
        fstype, options = tail[0], tail[2].split(",")
        if fstype == "cgroup" and "memory" in options:
            found.setdefault("memory", (point, root))
        elif fstype == "cgroup2":
            found.setdefault("", (point, root))
    return found


def _unescape(field: str) -> str:
    """mountinfo's octal escapes (a space is `\\040`)."""
    return field.encode().decode("unicode_escape") if "\\" in field else field


def find_base(paths: dict[str, str], mounts: dict[str, tuple[str, str]]) -> tuple[int, Path] | None:
    """(version, the folder of this process's cgroup) in the hierarchy holding the memory
    controller: v1 if it has a memory hierarchy, else v2; None if neither is mounted."""
    for key, version in (("memory", 1), ("", 2)):
        if key in paths and key in mounts:
            point, root = mounts[key]
            path = paths[key]
            if root != "/" and (path == root or path.startswith(root.rstrip("/") + "/")):
                path = path[len(root.rstrip("/")):]  # a container that mounts its own subtree
            return version, Path(point) / path.lstrip("/")
    return None


# --- the machine ------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def probe() -> Support:
    """Whether bots can get a memory cgroup here (cached for the life of the process): a test
    cgroup is made, given a limit, joined by a shell, and removed."""
    try:
        paths = own_paths(Path("/proc/self/cgroup").read_text())
        mounts = memory_mounts(Path("/proc/self/mountinfo").read_text())
    except OSError as error:
        return Support(reason=f"cannot read /proc/self: {error.strerror}")
    found = find_base(paths, mounts)
    if found is None:
        return Support(reason="no cgroup file system mounted")
    version, own = found
    candidates = [own]
    if version == 2:  # v2 allows no processes beside child cgroups: ours has us, so its parent
        candidates = [own, own.parent] if own != own.parent else [own]
    last = "no write access to the arena's cgroup"
    for base in candidates:
        if version == 2 and "memory" not in _read(base / "cgroup.subtree_control").split():
            last = f"the memory controller is not enabled below {base}"
            continue
        reason = _try_base(version, base)
        if reason is None:
            _sweep_stale(version, base)
            return Support(version, base)
        last = reason
    return Support(version, reason=last)


def _try_base(version: int, base: Path) -> str | None:
    """None if a bot's cgroup works under `base`, else why not."""
    group = MemoryCgroup(version, base / f"{PREFIX}{os.getpid()}-probe")
    try:
        group.path.mkdir()
    except OSError as error:
        return f"cannot make a cgroup in {base}: {error.strerror}"
    try:
        if not group.set_limit(64 << 20):
            return f"no memory controller in {base}"
        done = subprocess.run(["/bin/sh", "-c", 'echo 0 >"$0"', str(group.procs)],
                              capture_output=True, timeout=10)
        if done.returncode != 0:
            return f"a process cannot join a cgroup in {base}"
        return None
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"cannot use a cgroup in {base}: {error}"
    finally:
        group.remove()


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def sweep_stale() -> None:
    """Remove now the cgroups of bots whose arena process is gone (an arena's first probe does
    it too)."""
    support = probe()
    if support.base is not None:
        _sweep_stale(support.version, support.base)


def _sweep_stale(version: int, base: Path) -> None:
    """Remove the bots' cgroups left by arenas that were killed outright (their processes,
    sandboxed with --die-with-parent, are gone or go now)."""
    try:
        entries = list(base.iterdir())
    except OSError:
        return
    for entry in entries:
        owner = entry.name[len(PREFIX):].partition("-")[0] if entry.name.startswith(PREFIX) else ""
        if owner.isdigit() and not _running(int(owner)):
            MemoryCgroup(version, entry).remove()


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class MemoryCgroup:
    """One bot's cgroup: made with its limit before the bot starts, removed after it ends."""

    def __init__(self, version: int, path: Path) -> None:
        self.version = version
        self.path = path
        self.procs = path / "cgroup.procs"
        self._oom_kills = 0
        self.removed = False

    @classmethod
    def create(cls, limit_bytes: int) -> MemoryCgroup | None:
        """A new cgroup capped at `limit_bytes`, or None where bots cannot have one."""
        support = probe()
        if support.base is None:
            return None
        _retry_pending()
        group = cls(support.version, support.base / f"{PREFIX}{os.getpid()}-{next(_numbers)}")
        try:
            group.path.mkdir()
        except OSError:
            return None
        if not group.set_limit(limit_bytes):
            group.remove()
            return None
        return group

    def set_limit(self, limit_bytes: int) -> bool:
        """A hard limit with no swap beyond it (and, in v2, the whole bot killed on OOM)."""
        if self.version == 1:
            if not _write(self.path / "memory.limit_in_bytes", str(limit_bytes)):
                return False
            _write(self.path / "memory.memsw.limit_in_bytes", str(limit_bytes))  # absent: no swap accounting
            return True
        if not _write(self.path / "memory.max", str(limit_bytes)):
            return False
        _write(self.path / "memory.swap.max", "0")
        _write(self.path / "memory.oom.group", "1")
        return True

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of the bot for passing the limit."""
        if not self.removed:
            self._oom_kills = max(self._oom_kills, self._read_oom_kills())
        return self._oom_kills > 0

    def _read_oom_kills(self) -> int:
        name = "memory.oom_control" if self.version == 1 else "memory.events"
        for line in _read(self.path / name).splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
        return 0

    def pids(self) -> list[int]:
        return [int(p) for p in _read(self.procs).split() if p.isdigit()]

    def remove(self) -> bool:
        """Kill what is left in it and remove it; False (and retried at a later bot's start) while
        a process is still on its way out."""
        if self.removed:
            return True
        self.oom_killed()  # read before the files go
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            self.path.rmdir()
        except FileNotFoundError:
            pass
        except OSError:
            with _pending_lock:
                if self not in _pending:
                    _pending.append(self)
            return False
        self.removed = True
        return True


def _retry_pending() -> None:
    with _pending_lock:
        waiting = list(_pending)
    for group in waiting:
        if group.remove():
            with _pending_lock:
                if group in _pending:
                    _pending.remove(group)


def _write(path: Path, text: str) -> bool:
    try:
        with open(path, "w") as handle:
            handle.write(text)
        return True
    except OSError:
        return False
