"""cgroups for sandboxed bots: one cap on everything a bot holds in RAM, and a freezer.

The sandbox's rlimits cap each process's address space, not their sum, and not memory held
outside any address space (its /tmp, shared memory, anonymous files from `memfd_create`): a bot
of 64 processes could hold 64 times `memory_mb`. Where the arena may make a cgroup with the
memory controller, each sandboxed bot gets its own (`arena-bot-<arena pid>-<n>`, below the
arena's cgroup, never above it), with a hard limit and no swap, and the bot's first process joins it
before it becomes bwrap (`sandbox.build_argv`), so that every process of the bot is inside. When
the bot's memory passes the limit, the kernel's OOM killer ends a process of the bot, never one
of the arena; `oom_killed` tells the forfeit detail why. The same cgroup (v2), or its twin in
the v1 freezer hierarchy, freezes the bot between its turns under `ponder = false`.

Where no such cgroup can be made (no write access, cgroup v2 without a delegated subtree), bots
keep the per-process limits only and `probe()` says why (`arena check` shows it).
Pure parsing (`own_paths`, `cgroup_mounts`, `find_base`) is separate from the file system work.
"""

from __future__ import annotations

import atexit
import itertools
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from arena import proctree

PREFIX = "arena-bot-"
_numbers = itertools.count(1)
# cgroups that were still busy when their bot was released (a process of the bot was still on
# its way out): removed at the next start of a bot, never waited for in a close
_pending: list[BotCgroup] = []
_pending_lock = threading.Lock()  # the games of a worker start and close bots on several threads


@dataclass(frozen=True)
class Support:
    """Where this process makes its bots' cgroups, or why it cannot (`base` None)."""

    version: int = 0  # 1 or 2
    base: Path | None = None
    reason: str = ""
    # v1: this process's folder in the freezer hierarchy, for bots' freezer cgroups (None: not
    # mounted or not writable); v2 freezes in the bot's own cgroup
    freezer: Path | None = None

    @property
    def available(self) -> bool:
        return self.base is not None

    def describe(self) -> str:
        if self.base is None:
            return f"no memory cgroup ({self.reason})"
        return f"memory cgroup v{self.version}"

    @property
    def caps_swap(self) -> bool:
        """Whether a bot's cgroup here can keep it out of swap (or the machine has none), as
        `BotCgroup.set_limit` does: its controls are in the cgroup it is made under."""
        if self.base is None:
            return False
        return not swap_on() or any((self.base / name).exists()
                                    for name in SWAP_CONTROLS[self.version])

    @property
    def freezes(self) -> bool:
        """Whether bots' cgroups can be frozen (`ponder = false`): v1 with a freezer hierarchy,
        v2 always (`cgroup.freeze`)."""
        return self.base is not None and (self.version == 2 or self.freezer is not None)


# --- parsing (pure) ---------------------------------------------------------------------------

def own_paths(proc_self_cgroup: str) -> dict[str, str]:
    """{"memory": path, "freezer": path (v1), "": path (v2)} from the text of /proc/self/cgroup."""
    found: dict[str, str] = {}
    for line in proc_self_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            found[""] = path
        else:
            for controller in ("memory", "freezer"):
                if controller in controllers.split(","):
                    found[controller] = path
    return found


def cgroup_mounts(mountinfo: str) -> dict[str, tuple[str, str]]:
    """{"memory": (mount point, root), "freezer": ..., "": ...}: the v1 memory and freezer
    hierarchies and the v2 hierarchy, from the text of /proc/self/mountinfo (root: the
    hierarchy's path mounted)."""
    found: dict[str, tuple[str, str]] = {}
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        root, point = _unescape(fields[3]), _unescape(fields[4])
        fstype, options = tail[0], tail[2].split(",")
        if fstype == "cgroup":
            for controller in ("memory", "freezer"):
                if controller in options:
                    found.setdefault(controller, (point, root))
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
        folder = _own_folder(key, paths, mounts)
        if folder is not None:
            return version, folder
    return None


def find_freezer(paths: dict[str, str], mounts: dict[str, tuple[str, str]]) -> Path | None:
    """The folder of this process's cgroup in the v1 freezer hierarchy (None: not mounted; in
    v2 every cgroup freezes itself through `cgroup.freeze`)."""
    return _own_folder("freezer", paths, mounts)


def _own_folder(key: str, paths: dict[str, str], mounts: dict[str, tuple[str, str]]) -> Path | None:
    if key not in paths or key not in mounts:
        return None
    point, root = mounts[key]
    path = paths[key]
    if root != "/" and (path == root or path.startswith(root.rstrip("/") + "/")):
        path = path[len(root.rstrip("/")):]  # a container that mounts its own subtree
    return Path(point) / path.lstrip("/")


# --- the machine ------------------------------------------------------------------------------

_probe_lock = threading.Lock()
_probed: Support | None = None


def _after_fork_in_child() -> None:
    global _probe_lock, _pending_lock
    _probe_lock, _pending_lock = threading.Lock(), threading.Lock()  # none held by a lost thread
    # the parent's busy cgroups stay the parent's (a group's own lock may be held by a thread
    # the child does not have)
    _pending.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


def probe() -> Support:
    """Whether bots can get a memory cgroup here, found once per process (the first caller
    probes, the others wait for its answer): a test cgroup is made, given a limit, joined by a
    shell, and removed. Never raises: anything unexpected means "not capped", and why."""
    global _probed
    with _probe_lock:
        if _probed is None:
            try:
                _probed = _probe_now()
            except Exception as error:  # the cap is a safeguard: never a reason to stop a run
                _probed = Support(reason=f"probe failed: {error!r}")
        return _probed


def _probe_now() -> Support:
    try:
        paths = own_paths(Path("/proc/self/cgroup").read_text())
        mounts = cgroup_mounts(Path("/proc/self/mountinfo").read_text())
    except OSError as error:
        return Support(reason=f"cannot read /proc/self: {error.strerror}")
    found = find_base(paths, mounts)
    if found is None:
        return Support(reason="no cgroup file system mounted")
    version, own = found
    if version == 2:
        reason = _v2_children_allowed(own, os.getpid())
        if reason is not None:
            return Support(version, reason=reason)
    freezer = find_freezer(paths, mounts) if version == 1 else None
    reason = _try_base(version, own, freezer)
    if reason is not None and freezer is not None:
        # bots are stopped between turns by signals instead (`ponder = false`)
        freezer, reason = None, _try_base(version, own)
    if reason is not None:
        return Support(version, reason=reason)
    _sweep_stale(version, own, freezer)
    return Support(version, own, freezer=freezer)


def _delegated(path: Path) -> bool:
    """Whether systemd delegated the cgroup (its `trusted.delegate` or `user.delegate` mark)."""
    for name in ("trusted.delegate", "user.delegate"):
        try:
            if os.getxattr(path, name).strip() == b"1":
                return True
        except OSError:
            continue
    return False


# The arena's own leaf, in cgroup v2, when it moves out of the way of its bots' cgroups.
V2_LEAF = "arena-main"


def _v2_children_allowed(own: Path, pid: int) -> str | None:
    """None once cgroups with the memory controller can be made below `own` (cgroup v2), else
    why not.

    v2 allows no process in a cgroup that gives controllers to its children, and the arena is
    in `own`. Bots' cgroups never go above it (there they would escape the limits of the unit
    or container the arena runs in), so when `own` is delegated to it (systemd's
    `Delegate=yes`) and the arena is alone there, it moves into a leaf of its own,
    `own/arena-main`, and enables the memory controller for the children of `own`, as
    container runtimes do; otherwise nothing is changed."""
    if "memory" in _read(own / "cgroup.subtree_control").split():
        return None
    if "memory" not in _read(own / "cgroup.controllers").split():
        return f"the memory controller is not available in {own}"
    if not _delegated(own):
        # a cgroup systemd manages and did not hand over: moving processes in it and changing its
        # controllers would break its contract (later processes of the unit, its own rewrites)
        return (f"the memory controller is not enabled below {own}, and it is not delegated to "
                "the arena (systemd: Delegate=yes)")
    others = [p for p in _read(own / "cgroup.procs").split() if p != str(pid)]
    if others:
        return (f"the memory controller is not enabled below {own}, and the arena is not alone "
                "there (run it in a delegated cgroup of its own)")
    leaf = own / V2_LEAF
    try:
        leaf.mkdir(exist_ok=True)
    except OSError as error:
        return f"cannot make a cgroup in {own}: {error.strerror}"
    if not _write(leaf / "cgroup.procs", str(pid)):
        return f"cannot move the arena into {leaf}"
    if not _write(own / "cgroup.subtree_control", "+memory"):
        _write(own / "cgroup.procs", str(pid))  # back where it was
        return f"cannot enable the memory controller below {own}"
    return None


def _try_base(version: int, base: Path, freezer: Path | None = None) -> str | None:
    """None if a bot's cgroup (and its freezer cgroup, in v1) works under `base`, else why not."""
    name = f"{PREFIX}{os.getpid()}-probe{next(_numbers)}"
    group = BotCgroup(version, base / name, freezer / name if freezer is not None else None)
    try:
        group.path.mkdir()
    except OSError as error:
        return f"cannot make a cgroup in {base}: {error.strerror}"
    try:
        if group.freezer is not None and group.freezer != group.path:
            group.freezer.mkdir()
            if not (group.freezer / "freezer.state").exists():
                return f"no freezer in {group.freezer.parent}"
        if not group.set_limit(64 << 20):
            return f"no memory controller in {base}"
        files = group.procs_files
        done = subprocess.run(["/bin/sh", "-c", join_script(len(files)), *files],
                              capture_output=True, timeout=10)
        if done.returncode != 0:
            return f"a process cannot join a cgroup in {base}"
        return None
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"cannot use a cgroup in {base}: {error}"
    finally:
        group.remove()


def join_script(count: int) -> str:
    """Shell commands that move the shell running them into the cgroups whose `cgroup.procs`
    files are its first `count` arguments ($0, $1, ...: `echo 0` moves the writer), exiting
    125 if one cannot be joined."""
    return "".join(f'echo 0 >"${{{k}}}" || exit 125; ' for k in range(count))


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def sweep_stale() -> None:
    """Remove now the cgroups of bots whose arena process is gone (an arena's first probe does
    it too; a coordinator, after its workers, for those of a worker that was killed). Nothing
    in a process that has not probed: it started no sandboxed bot."""
    support = _probed
    if support is not None and support.base is not None:
        _sweep_stale(support.version, support.base, support.freezer)


def _sweep_stale(version: int, base: Path, freezer: Path | None = None) -> None:
    """Remove the bots' cgroups left by arenas that were killed outright (their processes,
    sandboxed with --die-with-parent, are gone or go now), and their v1 freezer twins."""
    names: set[str] = set()
    for folder in (f for f in (base, freezer) if f is not None):
        try:
            names.update(p.name for p in folder.iterdir())
        except OSError:
            pass
    for name in names:
        if proctree.left_by_dead_owner(name, PREFIX):
            BotCgroup(version, base / name, freezer / name if freezer is not None else None).remove()


class BotCgroup:
    """One bot's cgroup: made with its limit before the bot starts, removed after it ends."""

    def __init__(self, version: int, path: Path, freezer: Path | None = None) -> None:
        self.version = version
        self.path = path
        self.procs = path / "cgroup.procs"
        # where it is frozen between turns (`ponder = false`): v2 in itself (`cgroup.freeze`),
        # v1 in its twin of the freezer hierarchy (None: not there)
        self.freezer = path if version == 2 else freezer
        self._oom_kills = 0
        # its cap holds the bot's memory in RAM: swap capped too, or none on the machine (else a
        # bot at its cap is swapped out, not killed, and the address space must stay the cap)
        self.swap_capped = False
        self.removed = False
        self._frozen = False
        self._freeze_fd: int | None = None  # the freeze file, kept open: two writes a move
        # the referee's thread freezes and thaws, a retry of pending removals may come from
        # any game's thread: one at a time, so that the kept file is never closed under a write
        self._lock = threading.Lock()

    @classmethod
    def create(cls, limit_bytes: int | None) -> BotCgroup | None:
        """A new cgroup capped at `limit_bytes` (None: not capped, only for its freezer), or
        None where bots cannot have one."""
        support = probe()
        if support.base is None:
            return None
        _retry_pending()
        name = f"{PREFIX}{os.getpid()}-{next(_numbers)}"
        freezer = support.freezer / name if support.freezer is not None else None
        group = cls(support.version, support.base / name, freezer)
        try:
            group.path.mkdir()
        except OSError:
            return None
        if freezer is not None:
            try:
                freezer.mkdir()
            except OSError:
                group.freezer = None  # it is stopped by signals instead
        if limit_bytes is not None and not group.set_limit(limit_bytes):
            group.remove()
            return None
        return group

    @property
    def procs_files(self) -> list[str]:
        """The `cgroup.procs` files a bot's first process joins: its memory cgroup's and, in
        v1, its freezer cgroup's."""
        files = [str(self.procs)]
        if self.version == 1 and self.freezer is not None:
            files.append(str(self.freezer / "cgroup.procs"))
        return files

    @property
    def can_freeze(self) -> bool:
        return self._open_freeze_file() is not None

    def _open_freeze_file(self) -> int | None:
        if self._freeze_fd is None and self.freezer is not None and not self.removed:
            name = "freezer.state" if self.version == 1 else "cgroup.freeze"
            try:
                self._freeze_fd = os.open(self.freezer / name, os.O_WRONLY | os.O_CLOEXEC)
            except OSError:
                self.freezer = None  # it is stopped by signals instead
        return self._freeze_fd

    def _write_freeze(self, frozen: bool) -> bool:
        fd = self._open_freeze_file()
        if fd is None:
            return False
        text = (b"FROZEN" if frozen else b"THAWED") if self.version == 1 else (b"1" if frozen else b"0")
        try:
            os.write(fd, text)
        except OSError:
            return False
        return True

    def freeze(self) -> bool:
        """Stop every process inside at once (a fork cannot slip out, and no signal undoes it);
        False where this cgroup cannot freeze. About 0.1 ms (each sleeping process is woken to
        be frozen)."""
        with self._lock:
            if self.removed or not self._write_freeze(True):
                return False
            self._frozen = True
            return True

    def thaw(self) -> None:
        with self._lock:
            self._thaw()

    def _thaw(self) -> None:
        if self._frozen:
            self._write_freeze(False)
        self._frozen = False

    def set_limit(self, limit_bytes: int) -> bool:
        """A hard limit with no swap beyond it (and, in v2, the whole bot killed on OOM)."""
        if self.version == 1:
            if not _write(self.path / "memory.limit_in_bytes", str(limit_bytes)):
                return False
            # no swap beyond the limit: memsw where the kernel accounts swap, else no swapping
            memsw, swappiness = SWAP_CONTROLS[1]
            written = [_write(self.path / memsw, str(limit_bytes)),
                       _write(self.path / swappiness, "0")]
            self.swap_capped = any(written) or not swap_on()
            return True
        if not _write(self.path / "memory.max", str(limit_bytes)):
            return False
        [swap_max] = SWAP_CONTROLS[2]
        self.swap_capped = _write(self.path / swap_max, "0") or not swap_on()
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
        return [int(p) for p in _read(self.procs).split() if p.isascii() and p.isdigit()]

    def kill_all(self) -> None:
        """SIGKILL every process inside (a frozen v1 cgroup's die only once thawed)."""
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def remove(self) -> bool:
        """Kill what is left in it and remove it; False (and retried at a later bot's start) while
        a process is still on its way out."""
        with self._lock:
            return self._remove()

    def _remove(self) -> bool:
        if self.removed:
            return True
        self.oom_killed()  # read before the files go
        if self.can_freeze:  # v1: a frozen process cannot even die: thaw whatever the state
            self._frozen = True
            self._thaw()
        if self._freeze_fd is not None:
            os.close(self._freeze_fd)
            self._freeze_fd = None
        # v2 kills every process inside at once (no pid read, then killed: no reuse race)
        if not (self.version == 2 and _write(self.path / "cgroup.kill", "1")):
            self.kill_all()
        busy = False
        for folder in {self.path, self.freezer} - {None}:
            try:
                folder.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                busy = True
        if busy:
            with _pending_lock:
                if self not in _pending:
                    _pending.append(self)
            return False
        self.removed = True
        return True


def drain_pending(patience: float = 1.0) -> None:
    """Remove the cgroups still busy when their bots closed, waiting for them up to `patience`
    seconds: for the end of a process (a worker's pool, the interpreter's exit), not a close."""
    deadline = time.monotonic() + patience
    while True:
        _retry_pending()
        with _pending_lock:
            if not _pending or time.monotonic() > deadline:
                return
        time.sleep(0.01)


atexit.register(drain_pending)


def _retry_pending() -> None:
    with _pending_lock:  # taken off the list: no other thread retries the same one meanwhile
        waiting = list(_pending)
        _pending.clear()
    for group in waiting:
        group.remove()  # still busy: back on the list


# The files that keep a bot's cgroup out of swap, per cgroup version (`set_limit` writes them;
# `Support.caps_swap` looks for them before any cgroup is made).
SWAP_CONTROLS = {1: ("memory.memsw.limit_in_bytes", "memory.swappiness"), 2: ("memory.swap.max",)}


def swap_on() -> bool:
    """Whether the machine has any swap space in use (a line beyond /proc/swaps' header)."""
    return len(_read(Path("/proc/swaps")).strip().splitlines()) > 1


def _write(path: Path, text: str) -> bool:
    try:
        with open(path, "w") as handle:
            handle.write(text)
        return True
    except OSError:
        return False
