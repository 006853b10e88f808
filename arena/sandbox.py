"""A bubblewrap sandbox for bot processes: no network, no view of other processes or files,
capped memory, processes, file size, CPU time and tmp space.

`wrap(argv, env, cwd, policy)` turns the command line of a bot into one that runs it under
`bwrap` (Debian package `bubblewrap`); everything else here is pure policy: the modes
(`auto`, `on`, `off`), the limits and their per-tournament / per-bot overrides, the availability
probe (cached), and the mapping of a bot killed by a limit to a readable forfeit detail.

What the bot sees (see SECURITY.md for the threat model):
- a fresh root: the system's programs and libraries read-only (`/usr`, `/lib*`, `/bin`, `/sbin`,
  `/opt`, `/etc` with its secrets masked), the arena's Python installation read-only, the arena
  package read-only (for bots using `arena.sdk`), and its own folder read-only (a folder bot with a
  `bot.toml`: the whole folder; a single program file: that file only, never its siblings);
- a private, size-capped, writable `/tmp`, which is also its `HOME` and `TMPDIR`;
- a fresh `/proc` (its own PID namespace: it sees only its own processes) and a minimal `/dev`;
- its own network namespace (only its own loopback: nothing of the host, not even 127.0.0.1),
  IPC and UTS namespaces, a new session (no terminal injection), and it dies with the arena.

Limits are rlimits set by `prlimit` inside the sandbox, after the namespaces are made:
address space (memory), processes/threads, file size, CPU seconds, plus the tmpfs size; where
the machine allows, a memory cgroup per bot (`arena.cgroup`, joined by the shell that becomes
bwrap) caps all of the bot's memory together at `memory_mb + tmp_mb`. The
process limit counts per user: an arena running as root (uid 0 is exempt from it) runs every bot
under its own unprivileged uid through `setpriv`, which also drops every capability.
"""

from __future__ import annotations

import functools
import os
import platform
import re
import resource
import secrets
import shutil
import signal
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from arena import cgroup, numba_cache
from arena.spelling import did_you_mean
from arena.tomlcheck import as_toml

MODES = ("auto", "on", "off")
DEFAULT_MODE = "auto"
MIB = 1024 * 1024

# Inside the sandbox: one private writable place, HOME and TMPDIR both.
SANDBOX_TMP = "/tmp"
BOT_MANIFEST = "bot.toml"
ARENA_PACKAGE = Path(__file__).resolve().parent
# The bundled bots are the arena's own, published code: a bundled bot sees them all (read-only), so
# one may build on another (perfect plays alphabeta's search off its book). Submitted bots do not,
# nor does a bot an organiser keeps beside them in bots/: only the folders named here are bound
# (binding bots/ whole handed each such entrant every other one's code).
BUNDLED_BOTS = ARENA_PACKAGE.parent / "bots"
SHIPPED_BOTS = ("alphabeta", "awk", "greedy", "mcts", "perfect", "random")

# The unprivileged uids given to bots when the arena runs as root: far above any real account,
# random per bot so that two live bots never share a process budget.
BOT_UID_BASE = 1_900_000_000
BOT_UID_SPAN = 1 << 24

# System folders bound read-only when present (a symlink, as `/lib -> usr/lib` on merged-/usr
# systems, is recreated as the same symlink).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/etc")
# Secrets under /etc hidden from the bot: files are replaced by an empty file, folders by an
# empty tmpfs. A bot never runs as root, so most of these are unreadable anyway; masking them
# keeps that true for a bot folder owned by a user who can read them.
MASKED_ETC_FILES = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
                    "/etc/sudoers", "/etc/security/opasswd", "/etc/machine-id")
MASKED_ETC_DIRS = ("/etc/ssh", "/etc/ssl/private", "/etc/sudoers.d", "/etc/credstore",
                   "/etc/credstore.encrypted", "/etc/NetworkManager/system-connections",
                   "/etc/wireguard", "/etc/letsencrypt")

NAMESPACES_HINT = ("let bwrap make its namespaces (as a user other than root: "
                   "sysctl kernel.unprivileged_userns_clone=1, and on Ubuntu 24.04 "
                   "kernel.apparmor_restrict_unprivileged_userns=0; or run the arena as root)")
INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: "
                "sudo dnf install bubblewrap; Arch: sudo pacman -S bubblewrap)")


class SandboxConfigError(ValueError):
    """A bad sandbox setting: a one-line message; `key` names the offending key (for file:line)."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class SandboxUnavailable(RuntimeError):
    """`sandbox = "on"` but the sandbox cannot be set up here (one-line message)."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed bot process; 0 means no limit.

    memory_mb     the bot's memory, MiB: 1 GiB by default. Where a memory cgroup can be made,
                  all of the bot's processes together, with its /tmp and /dev/shm, are capped at
                  memory_mb + tmp_mb of real memory (`memory_cap_bytes`), and the address space
                  of each process (RLIMIT_AS) is only a backstop at ADDRESS_SPACE_FACTOR times
                  memory_mb: the JVM reserves its class space (1 GiB) and a quarter of the
                  machine's RAM before it starts, Node's V8 its code range, and under 1 GiB of
                  address space neither started. Elsewhere RLIMIT_AS at memory_mb is the only
                  cap, and such runtimes need it raised or set to 0.
    processes     processes + threads of the bot at once (RLIMIT_NPROC in its own user id): 64.
    file_size_mb  largest file it may write (RLIMIT_FSIZE), MiB: 64.
    cpu_seconds   CPU seconds of the bot process over its lifetime (RLIMIT_CPU), a backstop for a
                  bot that computes between turns; a kept process plays the consecutive games of a
                  pairing, so this is per process, not per move: 600.
    tmp_mb        size of its private writable /tmp (HOME, TMPDIR), MiB: 64.
    open_files    open files per process (RLIMIT_NOFILE): 1024, the usual default. Without it a
                  bot inherited the arena's limit (a hard one of 524,288 on many hosts), and with
                  its 64 processes took half of the machine's file table (`fs.file-max`).
    """

    memory_mb: int = 1024
    processes: int = 64
    file_size_mb: int = 64
    cpu_seconds: int = 600
    tmp_mb: int = 64
    open_files: int = 1024

    def describe(self) -> str:
        """One line for `arena check` and the stored settings, e.g. `memory 1024 MiB, ...`."""
        def cap(value: int, unit: str) -> str:
            return f"{value}{unit}" if value else "unlimited"

        return (f"memory {cap(self.memory_mb, ' MiB')}, processes {cap(self.processes, '')}, "
                f"file size {cap(self.file_size_mb, ' MiB')}, "
                f"cpu {cap(self.cpu_seconds, ' s')}, tmp {cap(self.tmp_mb, ' MiB')}, "
                f"open files {cap(self.open_files, '')}")


LIMIT_KEYS = tuple(f.name for f in fields(Limits))
# Where a cgroup caps a bot's real memory, each process may reserve this many times memory_mb of
# address space (64 GiB at the default): what runtimes reserve and never touch costs nothing,
# and the backstop still bounds the page tables of a sparse hoard the cgroup may not count.
ADDRESS_SPACE_FACTOR = 64
# What a bot may lock in RAM (RLIMIT_MEMLOCK): the kernel's old default, for a runtime that locks
# a page or two; beyond it, locked memory is memory no cgroup counts.
LOCKED_MEMORY_BYTES = 64 * 1024
# Below this much address space the loader cannot map libc (Python needs 13-16 MiB to start).
MIN_MEMORY_MB = 16
# Below this many open files a runtime cannot load (its libraries, the three pipes).
MIN_OPEN_FILES = 16
# Largest accepted values: well beyond any machine, small enough to stay in rlimit range.
_LIMIT_MAX = {"memory_mb": 1 << 30, "processes": 1 << 22, "file_size_mb": 1 << 30,
              "cpu_seconds": 1 << 31, "tmp_mb": 1 << 30, "open_files": 1 << 20}


@dataclass(frozen=True)
class SandboxPolicy:
    """The mode (`auto`, `on`, `off`) and the limits of one bot."""

    mode: str = DEFAULT_MODE
    limits: Limits = field(default_factory=Limits)

    @property
    def enabled(self) -> bool:
        """Whether bots run sandboxed under this policy on this machine.

        Raises SandboxUnavailable for `on` when the sandbox cannot be set up."""
        return resolve_mode(self.mode)


# --- parsing and merging (pure) ---------------------------------------------------------------

def parse_mode(value: object, key: str = "sandbox") -> str:
    """A mode from a tournament file or an option; raises SandboxConfigError (one line)."""
    if not isinstance(value, str) or value not in MODES:
        hint = did_you_mean(str(value), MODES, cutoff=0.5)  # `of` for `off`
        raise SandboxConfigError(
            f"{key!r} must be one of {', '.join(repr(m) for m in MODES)}, "
            f"got {as_toml(value)}{hint}", key
        )
    return value


def parse_limits(table: object, label: str = "limits") -> dict[str, int]:
    """Check a limits table (`{memory_mb = 2048, processes = 128}`) and return it as overrides.

    Every key is optional; values are non-negative integers, 0 meaning no limit. Raises
    SandboxConfigError naming the key."""
    if not isinstance(table, Mapping):
        raise SandboxConfigError(
            f"{label!r} must be a table of limits ({', '.join(LIMIT_KEYS)}), got {as_toml(table)}",
            "limits",
        )
    overrides: dict[str, int] = {}
    for key, value in table.items():
        if key not in LIMIT_KEYS:
            hint = did_you_mean(str(key), LIMIT_KEYS) or f"; known: {', '.join(LIMIT_KEYS)}"
            raise SandboxConfigError(f"unknown key {key!r} in {label}{hint}", key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise SandboxConfigError(
                f"{label} {key!r} must be a whole number (0 for no limit), got {as_toml(value)}", key
            )
        if not 0 <= value <= _LIMIT_MAX[key]:
            raise SandboxConfigError(
                f"{label} {key!r} must be between 0 (no limit) and {_LIMIT_MAX[key]}, got {value}",
                key,
            )
        overrides[key] = value
    if 0 < overrides.get("memory_mb", 0) < MIN_MEMORY_MB:
        raise SandboxConfigError(
            f"{label} 'memory_mb' = {overrides['memory_mb']} is too small for a program to start "
            f"(at least {MIN_MEMORY_MB}, or 0 for no limit)", "memory_mb")
    if overrides.get("tmp_mb", 1) == 0:
        raise SandboxConfigError(f"{label} 'tmp_mb' must be at least 1 (the bot's HOME lives "
                                 "there)", "tmp_mb")
    if 0 < overrides.get("open_files", MIN_OPEN_FILES) < MIN_OPEN_FILES:
        raise SandboxConfigError(
            f"{label} 'open_files' = {overrides['open_files']} is too small for a program to "
            f"start (at least {MIN_OPEN_FILES}, or 0 for no limit)", "open_files")
    return overrides


def merge_limits(base: Limits, *overrides: Mapping[str, int] | None) -> Limits:
    """The limits of one bot: the defaults, then the tournament's, then the bot's own."""
    result = base
    for layer in overrides:
        if layer:
            result = replace(result, **parse_limits(layer))
    return result


# Tournament file keys (arena/tournament/config.py checks their types, then calls the parsers):
#   sandbox = "auto"                       top level: the mode
#   [limits]                               top level: limits for every bot
#   memory_mb = 2048
#   [[bots]] ... limits = { cpu_seconds = 1200 }   one bot's own limits, over the [limits] table
TOURNAMENT_KEYS = {"sandbox": "one of 'auto', 'on', 'off'",
                   "limits": f"a [limits] table ({', '.join(LIMIT_KEYS)})"}
BOT_KEYS = {"limits": "a table of limits, e.g. { memory_mb = 2048 }"}


@dataclass(frozen=True)
class TournamentSandbox:
    """The sandbox settings of a tournament file: the mode and the [limits] overrides."""

    mode: str = DEFAULT_MODE
    limits: Mapping[str, int] = field(default_factory=dict)

    def policy(self, bot_limits: Mapping[str, int] | None = None) -> SandboxPolicy:
        """The policy of one bot: the defaults, then [limits], then the bot's own `limits`."""
        return SandboxPolicy(self.mode, merge_limits(Limits(), self.limits, bot_limits))

    def settings(self) -> dict:
        """For the stored tournament settings (what ran, and with which limits by default)."""
        return {"sandbox": self.mode, "limits": self.policy().limits.describe()}


def parse_tournament(data: Mapping[str, object]) -> TournamentSandbox:
    """`sandbox` and `[limits]` of a tournament file (the top-level table); raises
    SandboxConfigError whose `key` is the offending key (inside [limits] for a limit)."""
    mode = parse_mode(data.get("sandbox", DEFAULT_MODE))
    limits = parse_limits(data.get("limits", {}), "[limits]")
    return TournamentSandbox(mode, limits)


def parse_bot_limits(item: Mapping[str, object], label: str) -> dict[str, int]:
    """A [[bots]] table's own `limits` (empty if none); `label` names the bot in errors."""
    return parse_limits(item.get("limits", {}), f"{label} limits")


# --- availability (probed once per process) ---------------------------------------------------

@dataclass(frozen=True)
class Probe:
    available: bool
    reason: str = ""  # why not, one line
    installable: bool = False  # whether installing bubblewrap (or util-linux) is the cure


@functools.lru_cache(maxsize=1)
def probe() -> Probe:
    """Whether the sandbox can be set up here: `bwrap`, `prlimit` (and `setpriv` as root) on
    PATH, and a trivial sandboxed `true` that succeeds. Cached for the life of the process."""
    missing = [tool for tool in _helper_tools() if shutil.which(tool) is None]
    if missing:
        return Probe(False, f"{', '.join(missing)} not found on PATH", installable=True)
    if not _bwrap_supports("--size"):
        return Probe(False, "bwrap is older than 0.7 (no --size to cap the bot's tmp)",
                     installable=True)
    true = shutil.which("true") or "/bin/true"
    argv = build_argv([true], "/", Limits(), uid=_bot_uid())  # "/": always there inside
    try:
        done = subprocess.run(argv, cwd="/", stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=20,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    except (OSError, subprocess.TimeoutExpired) as error:
        return Probe(False, f"bwrap does not run: {error}")
    if done.returncode != 0:
        text = done.stderr.decode("utf-8", "replace").strip().splitlines()
        last = text[-1] if text else f"exit code {done.returncode}"
        return Probe(False, f"bwrap cannot create the sandbox: {last}")
    return Probe(True)


@functools.cache
def _bwrap_supports(option: str) -> bool:
    """Whether the installed bwrap knows `option` (read once from `bwrap --help`)."""
    try:
        done = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return f"{option} " in done.stdout + done.stderr


def _helper_tools() -> tuple[str, ...]:
    return ("bwrap", "prlimit", "setpriv") if _running_as_root() else ("bwrap", "prlimit")


def unavailable_message(reason: str, installable: bool = True) -> str:
    """The one line for `sandbox = "on"` (or `--sandbox on`) when the sandbox cannot be set up."""
    return (f"the bot sandbox is required (sandbox = \"on\") but cannot be set up: {reason}; "
            f"{_cure(installable)}, or run without it: --sandbox off / sandbox = \"off\"")


def auto_notice(reason: str, installable: bool = True) -> str:
    """The one line said once (stderr and the stored settings) when `auto` runs unsandboxed."""
    return (f"note: bots run without the sandbox ({reason}); {_cure(installable)} to isolate "
            "them, or set sandbox = \"off\" to silence this")


def _cure(installable: bool) -> str:
    """What makes the sandbox work: installing it, or (bwrap there but failing) the kernel's
    leave; "install bubblewrap" followed a bwrap that was installed (non-root review)."""
    return INSTALL_HINT if installable else NAMESPACES_HINT


def resolve_mode(mode: str) -> bool:
    """True if bots run sandboxed under `mode` here; `on` without a sandbox raises
    SandboxUnavailable with the message to print."""
    mode = parse_mode(mode)
    if mode == "off":
        return False
    result = probe()
    if mode == "on" and not result.available:
        raise SandboxUnavailable(unavailable_message(result.reason, result.installable))
    return result.available


# --- the policy of this process's bots -------------------------------------------------------

_default_policy = SandboxPolicy("off")


def set_default_policy(policy: SandboxPolicy) -> None:
    """The policy of every bot started in this process without one of its own (set once by a
    command: `arena play --sandbox`, `arena check`, a tournament; a forked worker inherits it).
    Until a command sets it, bots run unsandboxed, as library users and older tests expect."""
    global _default_policy
    _default_policy = policy


def default_policy() -> SandboxPolicy:
    return _default_policy


@dataclass(frozen=True)
class RunSandbox:
    """What a command learns before it starts bots: whether they run sandboxed, and the one
    line to say once (stderr, stored settings) when `auto` runs them without the sandbox."""

    mode: str
    enabled: bool
    notice: str = ""

    def settings(self) -> dict:
        """For the stored tournament settings."""
        settings = {"sandbox": self.mode, "sandboxed": self.enabled,
                    "sandbox_notice": self.notice}
        if self.enabled:
            settings["memory_cgroup"] = cgroup.probe().describe()
            settings["freezer_cgroup"] = cgroup.probe().freezes
        return settings

    def describe(self, limits: Limits | None = None) -> str:
        """What a bot gets, one line (for `arena check`: the sandbox it will meet)."""
        if not self.enabled:
            why = "sandbox = off" if self.mode == "off" else "bubblewrap unavailable"
            return (f"sandbox: none ({why}): the bot runs as {_user()} with the arena's view of "
                    "the machine, network included")
        limits = limits or Limits()
        support = cgroup.probe()
        capped = support.available and support.caps_swap and memory_cap_bytes(limits) is not None
        lowered = lowered_limits(limits, bool(capped))
        ceiling = (f" (lowered to this user's hard limits: {', '.join(lowered)})"
                   if lowered else "")
        return ("sandbox: bubblewrap: network none, processes its own only, files its own "
                f"folder read-only + a private /tmp; {limits.describe()}{ceiling}; "
                f"{describe_total_memory(limits)}; {describe_freezing()}")


def describe_freezing() -> str:
    """How `ponder = false` stops a sandboxed bot between its turns here, one clause."""
    if cgroup.probe().freezes:
        return "between turns (ponder = false): its cgroup frozen"
    return ("between turns (ponder = false): its process group stopped by signals (a bot can get "
            "around that)")


def describe_total_memory(limits: Limits) -> str:
    """How the sum of a sandboxed bot's memory is capped here, one clause."""
    cap = memory_cap_bytes(limits)
    if cap is None:
        return "total memory not capped (memory_mb = 0)"
    support = cgroup.probe()
    if not support.available:
        return (f"total memory not capped: {support.describe()}; {limits.memory_mb} MiB of "
                "address space a process (the JVM and Node reserve more: raise memory_mb)")
    if not support.caps_swap:  # a bot at its cap would be swapped out: the address space stays
        return (f"total memory {cap // MIB} MiB ({support.describe()}), not counting swap; "
                f"{limits.memory_mb} MiB of address space a process")
    backstop = limits.memory_mb * ADDRESS_SPACE_FACTOR
    return (f"total memory {cap // MIB} MiB ({support.describe()}); address space a process "
            f"{backstop // 1024 if backstop % 1024 == 0 else backstop / 1024:g} GiB, a backstop")


def _user() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return f"uid {os.geteuid()}"


def start_run(mode: str) -> RunSandbox:
    """Resolve `mode` for a run; raises SandboxUnavailable (the message to print, then exit
    non-zero) for `on` without a sandbox, and SandboxConfigError for a bad mode."""
    enabled = resolve_mode(mode)
    notice = ("" if enabled or mode == "off"
              else auto_notice(probe().reason, probe().installable))
    return RunSandbox(mode, enabled, notice)


# --- the command line -------------------------------------------------------------------------

def wrap(argv: Sequence[str], env: Mapping[str, str], cwd: str | os.PathLike[str],
         policy: SandboxPolicy,
         group: cgroup.BotCgroup | None = None) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that run `argv` (in `cwd`, with `env`) under `policy`;
    `group`: the bot's cgroups (`memory_cgroup(...)`), joined first; their memory cap
    (`caps_real_memory`) makes the address-space limit a backstop.

    Unchanged when the policy does not sandbox (mode `off`, or `auto` without bubblewrap); raises
    SandboxUnavailable for `on` without it. The returned argv starts `bwrap`, which becomes the
    spawned process: it exits with the bot's exit code, or 128 + N when the bot was killed by
    signal N (see `describe_status`).
    """
    if not policy.enabled:
        return list(argv), dict(env)
    prepare_bundled(cwd)
    inner_env = dict(env)
    inner_env["HOME"] = SANDBOX_TMP
    inner_env["TMPDIR"] = SANDBOX_TMP
    uid = _bot_uid()
    # the bot's host-side HOME (private to this start, removed after it) holds the filter
    filter_file = _write_seccomp_filter(env["HOME"]) if uid is not None and env.get("HOME") else None
    return build_argv(_found_on_path(argv, env, cwd), cwd, policy.limits, uid=uid,
                      seccomp_file=filter_file,
                      cgroup_procs=group.procs_files if group is not None else None,
                      memory_capped=caps_real_memory(group, policy.limits)), inner_env


def caps_real_memory(group: cgroup.BotCgroup | None, limits: Limits) -> bool:
    """Whether `group` holds the bot's memory at `memory_mb + tmp_mb` of RAM: capped, with no
    swap beyond (a bot at its cap swapped out, not killed, would slow every clock)."""
    return group is not None and group.swap_capped and memory_cap_bytes(limits) is not None


def memory_cap_bytes(limits: Limits) -> int | None:
    """What all of a bot's processes may hold in RAM together, its /tmp and /dev/shm included:
    `memory_mb + tmp_mb` (None: `memory_mb = 0`, no limit)."""
    return (limits.memory_mb + limits.tmp_mb) * MIB if limits.memory_mb else None


def memory_cgroup(policy: SandboxPolicy) -> cgroup.BotCgroup | None:
    """New cgroups for one sandboxed bot of `policy`: its total memory capped at
    `memory_cap_bytes` (not capped with `memory_mb = 0`), and its freezer (`ponder = false`);
    None when it runs unsandboxed, or where this machine gives the arena no cgroup
    (`cgroup.probe()` says why)."""
    if not policy.enabled:
        return None
    return cgroup.BotCgroup.create(memory_cap_bytes(policy.limits))


def prepare_bundled(cwd: str | os.PathLike[str]) -> None:
    """Before a sandboxed start of a bot run from `cwd`: if it is a bundled bot, its numba code
    compiled out here, where the machine code can be kept, not in every sandboxed process
    (`arena.numba_cache`; once per process, a file check when nothing changed)."""
    folder = Path(cwd).resolve()
    if is_shipped(folder):
        numba_cache.warm_for_bot(folder)


def _found_on_path(argv: Sequence[str], env: Mapping[str, str], cwd: str | os.PathLike[str]) -> list[str]:
    """argv with a bare program name (`node`, a PATH entry's `python`) made the absolute path the
    host's PATH finds, as the shell would, so that the sandbox can show that program (and the
    symlinks to it) to the bot: the bot's own PATH lookup inside cannot see hidden folders."""
    if not argv or "/" in argv[0]:
        return list(argv)
    found = shutil.which(argv[0], path=env.get("PATH", os.defpath))
    if found is None:
        return list(argv)
    return [os.path.join(cwd, found) if not os.path.isabs(found) else found, *argv[1:]]


def _running_as_root() -> bool:
    return os.geteuid() == 0


def _bot_uid() -> int | None:
    """A fresh unprivileged uid for a bot when the arena is root (else None: keep the user's)."""
    if not _running_as_root():
        return None
    return BOT_UID_BASE + secrets.randbelow(BOT_UID_SPAN)


def build_argv(argv: Sequence[str], cwd: str | os.PathLike[str], limits: Limits,
               uid: int | None = None, seccomp_file: str | None = None,
               cgroup_procs: str | Sequence[str] | None = None,
               memory_capped: bool = False) -> list[str]:
    """The `bwrap ... -- prlimit ... [-- setpriv ...] -- argv` command line.

    `uid`: run the bot under this unprivileged uid (required when the arena is root, since
    root is exempt from the process limit); None keeps the caller's uid in a user namespace.
    `seccomp_file`: a filter (`no_userns_filter`) bwrap installs, read through a shell that
    opens it on descriptor 3 and becomes bwrap.
    `cgroup_procs`: the `cgroup.procs` files of the bot's cgroups (`arena.cgroup`), joined by
    that shell before it becomes bwrap.
    `memory_capped`: those cgroups cap the bot's real memory, so its address space is only a
    backstop (`prlimit_argv`).
    Reads the file system only to see which of the paths to bind exist.
    """
    cwd_path = Path(cwd).resolve()
    out = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--die-with-parent", "--new-session",
           "--hostname", "arena-bot"]
    if uid is None:
        out += ["--unshare-user"]
        if _bwrap_supports("--disable-userns"):  # bubblewrap 0.8 and later
            out += ["--disable-userns"]
    out += _system_binds()
    out += ["--proc", "/proc", "--dev", "/dev"]
    tmp_bytes = str(limits.tmp_mb * MIB)
    out += ["--perms", "1777", "--size", tmp_bytes, "--tmpfs", SANDBOX_TMP]
    # /dev/shm (POSIX shared memory) would otherwise be an uncapped tmpfs in RAM.
    out += ["--perms", "1777", "--size", tmp_bytes, "--tmpfs", "/dev/shm"]
    # No pseudo-terminals: the kernel's pool of them (kernel.pty.max) is machine-wide, and a bot
    # that opened them all would leave other sandboxes and containers none. An empty /dev/pts
    # hides the new devpts instance's ptmx, so /dev/ptmx (a link to pts/ptmx) opens nothing.
    # Read-only and tiny: as another user the bot owns its mounts, and could fill a tmpfs of
    # half the RAM here (/dev too: made read-only below, once every mount under it is made).
    out += ["--perms", "0755", "--size", "4096", "--tmpfs", "/dev/pts", "--remount-ro", "/dev/pts"]
    bound = _program_binds(argv, cwd_path)  # (host path, path in the sandbox)
    binds = [inside for _, inside in bound]
    links = [(target, link) for target, link in _program_symlinks(argv)
             if not link.startswith(_SYSTEM_PREFIXES)
             and not any(link == b or link.startswith(b.rstrip("/") + "/") for b in binds)]
    folders = _ancestors([*binds, *(link for _, link in links)])
    if not any(_is_within(cwd_path, Path(b)) for b in binds) \
            and not str(cwd_path).startswith(_SYSTEM_PREFIXES):
        # the bot starts in its folder, of which nothing may be bound (`python3 -m module`, a
        # program named outside it): an empty folder then, else bwrap cannot chdir there
        folders = sorted({*folders, *_ancestors([str(cwd_path)]), str(cwd_path)},
                         key=lambda p: (p.count("/"), p))
    for folder in folders:
        if folder not in (SANDBOX_TMP, "/dev"):  # already mounted, with their own modes
            out += ["--perms", "0755", "--dir", folder]  # bwrap makes missing parents 0700
    for host, inside in bound:
        out += ["--ro-bind", host, inside]
    for target, link in links:
        out += ["--symlink", target, link]
    # The root too (a tmpfs bwrap made, with the folders above the binds): as a user other
    # than root the bot owns it, and wrote 2.4 GiB into it, past tmp_mb (non-root review). Its
    # only writable places are then /tmp and /dev/shm, both capped at tmp_mb.
    out += ["--remount-ro", "/", "--remount-ro", "/dev", "--chdir", str(cwd_path), "--"]
    out += prlimit_argv(limits, memory_capped)
    if uid is not None:
        out += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    out += list(argv)
    if seccomp_file is not None:
        out[1:1] = ["--seccomp", "3"]
    return _through_shell(out, seccomp_file, cgroup_procs)


def _through_shell(argv: list[str], seccomp_file: str | None,
                   cgroup_procs: str | Sequence[str] | None) -> list[str]:
    """`argv` run by a shell that first moves itself into the bot's cgroups (`echo 0` into each
    `cgroup.procs`: its memory cgroup's and, in cgroup v1, its freezer cgroup's; every process
    of the bot starts inside) and opens the seccomp filter on descriptor 3, then becomes `argv`;
    `argv` itself when there is neither.

    In a cgroup the bot also asks for the highest OOM score (1000), so that the kernel kills a
    bot before the arena when the machine runs out of memory. Best effort: a bot may lower it
    again down to the floor the arena inherited (0 unless a privileged parent lowered it), and
    a failed write does not stop the start. A failed join does (status 125)."""
    procs = [cgroup_procs] if isinstance(cgroup_procs, str) else list(cgroup_procs or ())
    if not procs and seccomp_file is None:
        return argv
    if not procs:
        return ["/bin/sh", "-c", 'exec "$@" 3<"$0"', seccomp_file, *argv]
    # $0, $1, ...: the procs files, then the filter (if any), then argv
    script = cgroup.join_script(len(procs))
    script += "{ echo 1000 >/proc/self/oom_score_adj; } 2>/dev/null; "
    extra = len(procs) - 1
    if seccomp_file is not None:
        script += f'f=${{{len(procs)}}}; '
        extra += 1
    script += (f"shift {extra}; " if extra else "") + 'exec "$@"'
    script += ' 3<"$f"' if seccomp_file is not None else ""
    return ["/bin/sh", "-c", script, *procs, *([seccomp_file] if seccomp_file else []), *argv]


# As root, bwrap cannot keep a bot from making user namespaces (`--disable-userns` needs one of
# its own, which would map the bot to root outside): in one, a bot mounted its own tmpfs past
# `tmp_mb`. A seccomp filter refuses them instead: unshare or clone with CLONE_NEWUSER get
# EPERM, clone3 (whose flags a filter cannot read) ENOSYS, so that the C library falls back to
# clone. It also refuses (ENOSYS, as a kernel without them) what a bot could use to take a
# machine-wide kernel pool or leave state behind outside any cgroup: AIO contexts and io_uring
# (`fs.aio-max-nr` is one count for the whole machine) and the kernel keyrings (a bot's uid's
# keys outlive it), as Docker's default profile does; and `perf_event_open`, whose ring buffers
# are locked memory outside any cgroup (a bot of 200 processes pinned 1.5 GiB: hostile review).
# Sockets are Unix ones only (any other family: EAFNOSUPPORT): a bot has no network, and the
# buffers of the others are memory no cgroup v1 counts: on its own loopback a TCP socket's (one
# bot held 2.5 GiB, past the machine's `tcp_mem`), a netlink socket's queue (1.5 GiB from one
# process: hostile review). The 32-bit `socketcall`, whose arguments a filter cannot read, is
# refused outright (a C library built for kernels 4.3 on uses `socket` itself; older 32-bit
# ones get no sockets, SECURITY.md says so). Per machine, each syscall ABI it runs: (audit
# arch, clone, unshare, x32 ABI too, the syscalls refused outright, socket and socketpair).
_SECCOMP_ABIS = {
    "x86_64": ((0xC000003E, 56, 272, True, (206, 425, 248, 249, 250, 298), (41, 53)),
               (0x40000003, 120, 310, False, (245, 425, 286, 287, 288, 102, 336), (359, 360))),
    "aarch64": ((0xC00000B7, 220, 97, False, (0, 425, 217, 218, 219, 241), (198, 199)),
                (0x40000028, 120, 337, False, (243, 425, 309, 310, 311, 364), (281, 288))),
}
_CLONE3 = 435
_CLONE_NEWUSER = 0x10000000
_AF_UNIX = 1


def no_userns_filter(machine: str) -> bytes | None:
    """The classic-BPF seccomp program (struct sock_filter[]) for `machine`, None if unknown."""
    abis = _SECCOMP_ABIS.get(machine)
    if abis is None:
        return None
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, eperm, enosys, nofamily = 0x7FFF0000, 0x00050001, 0x00050026, 0x00050061
    code: list[tuple[int, object, object, int]] = []  # (op, jump if true, if false, k)
    for n, (arch, clone, unshare, x32, refused, sockets) in enumerate(abis):
        code += [(ld, 0, 0, 4), (jeq, 0, f"abi{n + 1}", arch), (ld, 0, 0, 0)]
        if x32:  # the x32 ABI shares the arch: its syscalls have bit 30 set; a bot has no use
            code.append((jge, "eperm", 0, 0x40000000))
        code += [(jeq, "enosys", 0, number) for number in refused]
        code += [(jeq, "enosys", 0, _CLONE3), (jeq, "flags", 0, clone),
                 (jeq, "flags", 0, unshare)]
        code += [(jeq, "socket", 0, number) for number in sockets]
        code += [(ret, 0, 0, allow), ("label", f"abi{n + 1}", 0, 0)]
    code += [(ret, 0, 0, allow),
             ("label", "flags", 0, 0), (ld, 0, 0, 16), (jset, "eperm", 0, _CLONE_NEWUSER),
             (ret, 0, 0, allow),
             # the first argument's low word (little-endian): the address family
             ("label", "socket", 0, 0), (ld, 0, 0, 16), (jeq, 0, "nofamily", _AF_UNIX),
             (ret, 0, 0, allow),
             ("label", "nofamily", 0, 0), (ret, 0, 0, nofamily),
             ("label", "eperm", 0, 0), (ret, 0, 0, eperm),
             ("label", "enosys", 0, 0), (ret, 0, 0, enosys)]
    labels, program = {}, []
    for op, *rest in code:
        if op == "label":
            labels[rest[0]] = len(program)
        else:
            program.append((op, *rest))
    out = bytearray()
    for index, (op, true, false, k) in enumerate(program):
        jumps = [labels[j] - index - 1 if isinstance(j, str) else j for j in (true, false)]
        out += struct.pack("<HBBI", op, *jumps, k)
    return bytes(out)


def _write_seccomp_filter(folder: str) -> str | None:
    """The filter for this machine written into `folder` (a bot's private host-side HOME);
    None where there is none."""
    program = no_userns_filter(platform.machine())
    if program is None or not os.path.isdir(folder):  # no HOME made for it: a caller's test
        return None
    path = os.path.join(folder, "seccomp.bpf")
    with open(path, "wb") as handle:
        handle.write(program)
    return path


def prlimit_argv(limits: Limits, memory_capped: bool = False) -> list[str]:
    """`prlimit --as=... -- ` for the limits; soft = hard except CPU, whose soft limit sends
    SIGXCPU (a readable cause) a second before the hard one kills. `memory_capped`: a cgroup
    caps the bot's real memory, and the address space is a backstop at ADDRESS_SPACE_FACTOR
    times memory_mb. Each value is kept within the arena's own hard limit (`rlimit_values`)."""
    values = rlimit_values(limits, memory_capped)
    args = ["prlimit", "--core=0", f"--memlock={values['memlock']}"]
    for option in ("as", "nproc", "fsize"):
        if option in values:
            args.append(f"--{option}={values[option]}")
    if "cpu" in values:
        soft, hard = values["cpu"]
        args.append(f"--cpu={soft}:{hard}")
    if "nofile" in values:
        args.append(f"--nofile={values['nofile']}")
    return [*args, "--"]


def rlimit_values(limits: Limits, memory_capped: bool = False) -> dict:
    """The rlimits a bot gets ({prlimit option: value}, `cpu`: (soft, hard)), none above the
    arena's own hard limit where it cannot raise one (not root): prlimit's attempt would fail
    every start, and under `auto` the failed probe ran every bot without the sandbox (a user's
    `ulimit -t 600` in a login profile: non-root review)."""
    # locked memory: none a bot needs, and it is memory no cgroup counts (perf ring buffers; the
    # bot inherited the arena's 8 MiB, or no limit where the arena has none)
    values: dict = {"memlock": _not_above_own(resource.RLIMIT_MEMLOCK, LOCKED_MEMORY_BYTES)}
    if limits.memory_mb:
        factor = ADDRESS_SPACE_FACTOR if memory_capped else 1
        values["as"] = _not_above_own(resource.RLIMIT_AS, limits.memory_mb * MIB * factor)
    if limits.processes:
        values["nproc"] = _not_above_own(resource.RLIMIT_NPROC, limits.processes)
    if limits.file_size_mb:
        values["fsize"] = _not_above_own(resource.RLIMIT_FSIZE, limits.file_size_mb * MIB)
    if limits.cpu_seconds:
        hard = _not_above_own(resource.RLIMIT_CPU, limits.cpu_seconds + 1)
        values["cpu"] = (max(1, min(limits.cpu_seconds, hard - 1)), hard)
    if limits.open_files:
        values["nofile"] = _not_above_own(resource.RLIMIT_NOFILE, limits.open_files)
    return values


def lowered_limits(limits: Limits, memory_capped: bool = False) -> list[str]:
    """The limits kept below what was asked by the arena's own hard limits, for `arena check`
    (it said `open files 50000` where the bot got 20000)."""
    values = rlimit_values(limits, memory_capped)
    factor = ADDRESS_SPACE_FACTOR if memory_capped else 1
    asked = {"as": ("address space", limits.memory_mb * MIB * factor, MIB, " MiB"),
             "nproc": ("processes", limits.processes, 1, ""),
             "fsize": ("file size", limits.file_size_mb * MIB, MIB, " MiB"),
             "cpu": ("cpu", limits.cpu_seconds, 1, " s"),
             "nofile": ("open files", limits.open_files, 1, "")}
    out = []
    for option, (label, wanted, unit, suffix) in asked.items():
        if option not in values:
            continue
        got = values[option][0] if option == "cpu" else values[option]
        if got < wanted:
            out.append(f"{label} {got // unit}{suffix}")
    return out


def _not_above_own(kind: int, wanted: int) -> int:
    """`wanted`, but not above the arena's own hard limit of `kind` where it cannot raise one
    (not root)."""
    _, hard = resource.getrlimit(kind)
    if os.geteuid() == 0 or hard == resource.RLIM_INFINITY:
        return wanted
    return min(wanted, hard)


def _system_binds() -> list[str]:
    out: list[str] = []
    for folder in SYSTEM_DIRS:
        if os.path.islink(folder):
            out += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            out += ["--ro-bind", folder, folder]
    for path in MASKED_ETC_FILES:
        if os.path.isfile(path) and not os.path.islink(path):
            out += ["--ro-bind", "/dev/null", path]
    for path in MASKED_ETC_DIRS:
        if os.path.isdir(path) and not os.path.islink(path):
            # read-only: as a user other than root the bot owns these tmpfs mounts, and wrote
            # 180 MiB into each, past tmp_mb (non-root review)
            out += ["--perms", "0755", "--tmpfs", path, "--remount-ro", path]
    return out


_SYSTEM_PREFIXES = tuple(f"{d}/" for d in SYSTEM_DIRS)


def _program_binds(argv: Sequence[str], cwd: Path) -> list[tuple[str, str]]:
    """(host path, path in the sandbox) of what the bot needs besides the system: its program
    (its folder if it has a manifest, else the files its command line names, see
    `_named_files`), the Python installation when it runs under the arena's Python, the arena
    package, and for a bundled bot the other bundled bots."""
    paths: list[Path] = []
    named: list[tuple[str, str]] = []
    if (cwd / BOT_MANIFEST).is_file():
        paths.append(cwd)
    else:
        named = _named_files(argv, cwd)
    executable = Path(argv[0]) if argv else None
    python = Path(sys.executable)
    if executable is not None and (executable == python or _same_file(executable, python)):
        for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
            paths.append(Path(prefix).resolve())
            paths.append(Path(prefix))  # a venv's bin/python is a symlink to the base prefix
    elif executable is not None and executable.is_absolute() and executable.is_file():
        paths.append(executable.resolve())  # a symlink to it is recreated (_program_symlinks)
    paths.append(ARENA_PACKAGE)
    if is_shipped(cwd):
        paths += [BUNDLED_BOTS / name for name in SHIPPED_BOTS if (BUNDLED_BOTS / name).is_dir()]
    whole = _outermost(p for p in paths if not str(p).startswith(_SYSTEM_PREFIXES))
    return [(p, p) for p in whole] + [
        (host, inside) for host, inside in named if not inside.startswith(_SYSTEM_PREFIXES)
        and not any(_is_within(Path(inside), Path(w)) for w in whole)]


def _named_files(argv: Sequence[str], cwd: Path) -> list[tuple[str, str]]:
    """(file, the path the command names it by) for each file a command line without a
    manifest names, in the bot's folder or beside it (`../mine/bot.js`), seen in the sandbox
    where the command names it. A symlink is followed only to a file where the link is: one
    inside the bot's folder to a file inside it, one elsewhere to a file in its own folder;
    else an author could link a named file to any file the arena may read (another entrant's
    code, a games.db) and read it at the link's target."""
    found: list[tuple[str, str]] = []
    for part in argv:
        named = Path(os.path.normpath(part if os.path.isabs(part) else cwd / part))
        if not named.is_file():
            continue
        home = cwd if _is_within(named, cwd) else named.parent.resolve()
        real = named.resolve()
        if _is_within(real, home):
            found.append((str(real), str(named)))
    return found


def _program_symlinks(argv: Sequence[str]) -> list[tuple[str, str]]:
    """(target as written, link) for each symlink on the way from the program named by an
    absolute argv[0] to its file, so the sandbox recreates them: a venv's or a PATH entry's
    `python` must stay a symlink for the interpreter to find its home (issue 14 #29)."""
    if not argv or not os.path.isabs(argv[0]):
        return []
    chain: list[tuple[str, str]] = []
    path = Path(argv[0])
    while path.is_symlink() and len(chain) < 40:  # 40: the kernel's own limit on a chain
        target = os.readlink(path)
        chain.append((target, str(path)))
        path = Path(target) if os.path.isabs(target) else path.parent / target
    return chain


def _outermost(paths) -> list[str]:
    """Distinct paths without those inside another (binding the outer one covers them)."""
    unique = sorted({str(p) for p in paths if os.path.exists(p)})
    kept: list[str] = []
    for path in unique:
        if not any(path == k or path.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(path)
    return kept


def _ancestors(paths: Sequence[str]) -> list[str]:
    found: set[str] = set()
    for path in paths:
        parent = Path(path).parent
        while str(parent) != "/":
            found.add(str(parent))
            parent = parent.parent
    return sorted(found, key=lambda p: (p.count("/"), p))


def is_shipped(folder: str | os.PathLike[str]) -> bool:
    """Whether `folder` is one of the bots the arena ships (`SHIPPED_BOTS`, in `bots/`)."""
    folder = Path(folder).resolve()
    return folder.parent == BUNDLED_BOTS and folder.name in SHIPPED_BOTS


def _is_within(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


# --- after the fact: why a sandboxed bot died --------------------------------------------------

def describe_status(returncode: int | None) -> str:
    """`exited with code N` / `killed by SIGNAME` for a sandboxed bot, whose status comes back
    through bwrap as 128 + N for a bot killed by signal N."""
    if returncode is None:
        return "still running"
    signum = _signal_of(returncode)
    if signum:
        try:
            return f"killed by {signal.Signals(signum).name}"
        except ValueError:
            return f"killed by signal {signum}"
    return f"exited with code {returncode}"


def _signal_of(returncode: int) -> int:
    if returncode < 0:
        return -returncode
    if 128 < returncode < 128 + 65:
        return returncode - 128
    return 0


_MEMORY_PATTERNS = re.compile(
    r"MemoryError|Cannot allocate memory|std::bad_alloc|out of memory|OutOfMemoryError"
    r"|memory allocation of \d+ bytes failed|failed to allocate|mmap\(\) failed|ENOMEM"
    r"|failed to map segment"  # the dynamic loader, out of address space before main()
    # V8 and the JVM, short of address space before they run a line of the bot
    r"|Fatal process OOM|Failed to reserve virtual memory|Could not reserve enough space"
    r"|Could not allocate compressed class space",
    re.IGNORECASE,
)
_PROCESS_PATTERNS = re.compile(
    r"Resource temporarily unavailable|can't start new thread|fork: retry|Cannot fork"
    r"|unable to create (native|new native) thread|EAGAIN.*(fork|clone|thread)"
    r"|pthread_create",
    re.IGNORECASE,
)
_FILE_SIZE_PATTERNS = re.compile(r"File too large|EFBIG|No space left on device|ENOSPC",
                                 re.IGNORECASE)


def limit_detail(returncode: int | None, stderr: str = "") -> str | None:
    """The limit a dead sandboxed bot most likely hit: `memory limit`, `process limit`,
    `file size limit` (also a full tmp), `cpu limit`, or None when nothing points to one.

    A pure function of its exit status (negative or 128 + N: killed by signal N) and the tail
    of its stderr, for the referee's `crash` detail. Signals are certain (SIGXCPU, SIGXFSZ);
    memory and processes show only as failed allocations and forks, named in the message the
    runtime prints before it exits.
    """
    if returncode is None:
        return None
    signum = _signal_of(returncode)
    if signum == signal.SIGXCPU:
        return "cpu limit"
    if signum == signal.SIGXFSZ:
        return "file size limit"
    text = stderr[-4096:]
    if _MEMORY_PATTERNS.search(text):
        return "memory limit"
    if _PROCESS_PATTERNS.search(text):
        return "process limit"
    if _FILE_SIZE_PATTERNS.search(text):
        return "file size limit"
    if signum == signal.SIGKILL and "cpu" in text.lower() and "limit" in text.lower():
        return "cpu limit"
    return None


# --- the sandboxed bot's own process ----------------------------------------------------------

def inner_pid(outer_pid: int) -> int | None:
    """The pid (in the arena's view) of the bot program inside a sandbox started as
    `outer_pid`, or None while it is not started yet.

    bwrap keeps a monitor process outside and an init (pid 1) inside; the bot is init's first
    child. Its CPU clock, not bwrap's, measures the bot's move CPU time.
    """
    pid = outer_pid
    for _ in range(2):
        children = _children(pid)
        if not children:
            return None
        pid = min(children)
    return pid


def cpu_pid(pid: int, sandboxed: bool) -> int | None:
    """The process whose CPU clock measures a bot started as `pid`: itself, or the program
    inside the sandbox (None until it runs)."""
    return inner_pid(pid) if sandboxed else pid


def status_text(returncode: int | None, stderr: bytes, oom_killed: bool = False) -> str:
    """`exited with code 1`, or for a bot that hit a limit `hit the memory limit (exited with
    code 1)`: how a sandboxed bot's end reads in a forfeit detail (`bot ...`); `oom_killed`:
    its memory cgroup says the kernel killed a process of it for passing the limit."""
    text = describe_status(returncode)
    # the kernel's OOM kill is a SIGKILL; an earlier one (of a child the bot lived on without)
    # must not relabel another end
    killed_for_memory = oom_killed and returncode is not None and \
        _signal_of(returncode) == signal.SIGKILL
    limit = "memory limit" if killed_for_memory else \
        limit_detail(returncode, stderr.decode("utf-8", "replace"))
    return f"hit the {limit} ({text})" if limit else text


# Exit code 127 is a shell's (and prlimit's) "command not found": inside the sandbox, most often
# an interpreter the host finds under a home folder (newcomer review: a pyenv shim). Said as a
# hint beside the forfeit, whose detail keeps room for the bot's own last words.
NOT_FOUND = "exited with code 127"
NOT_FOUND_HINT = ("exit code 127 is a command not found: the sandbox shows the system's folders, "
                  "the arena's Python and the bot's own folder, not a home folder's pyenv or nvm "
                  "shims: name an interpreter under /usr, or the script alone for the arena's "
                  "Python")


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except (OSError, ValueError):
        pass
    found = []  # kernels without CONFIG_PROC_CHILDREN: scan the process table
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    data = f.read()
            except OSError:
                continue
            if int(data[data.rfind(b")") + 2:].split()[1]) == pid:
                found.append(int(name))
    return found


@contextmanager
def policy_for_command(mode: str, say: Callable[[str], None],
                       limits: Mapping[str, int] | None = None) -> Iterator[RunSandbox]:
    """For a command that starts bots in this process (`play`, `check`, a league): resolve
    `mode` (SandboxUnavailable for `on` without bubblewrap), `say` the notice once when `auto`
    runs without it, and make it the default policy of every bot started inside the block;
    the previous policy comes back afterwards (the command may run inside a longer process)."""
    run = start_run(mode)
    if run.notice:
        say(run.notice)
    before = default_policy()
    set_default_policy(SandboxPolicy(mode, merge_limits(Limits(), limits)))
    try:
        yield run
    finally:
        set_default_policy(before)
