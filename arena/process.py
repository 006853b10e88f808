"""Bot processes: the only place that spawns them.

Each bot runs in its own session and process group (`start_new_session`), in its own working
directory, with a minimal environment. Its stdout is read in bounded chunks with an absolute
deadline and a line cap; its stderr is drained by a thread into a capped buffer, so that a chatty
bot never blocks. On close: the quit line, then SIGTERM, then SIGKILL to the whole group and to
every other process that belongs to the bot (any descendant, anything in its session or process
group, and anything carrying its environment token, which finds grandchildren that started their
own session), all reaped.

On Linux the arena makes itself a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`), so that
orphaned grandchildren are re-parented to the arena rather than to init: they can then be reaped
here. The reaper only ever waits for specific pids that it has attributed to one bot, or for
zombie orphans that are not a live bot's direct child, so it never steals another game's exit
status (games run in parallel threads).
"""

from __future__ import annotations

import errno
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

from arena import sandbox
from arena.protocol import LINE_CAP

PROJECT_ROOT = Path(__file__).resolve().parent.parent
STDERR_CAP = 64 * 1024
READ_CHUNK = 64 * 1024
TOKEN_VAR = "ARENA_BOT_TOKEN"

_registry_lock = threading.Lock()
_live_children: set[int] = set()  # pids of bot processes started here and not yet reaped
_attributed: set[int] = set()  # pids seen belonging to a bot (candidates for reaping)
_subreaper_done = False


def _after_fork_in_child() -> None:
    """A forked child (e.g. a tournament worker) owns none of its parent's bots, may have been
    forked while another thread held the registry lock, and is not a subreaper (the setting is
    not inherited): start from a clean registry."""
    global _registry_lock, _subreaper_done
    _registry_lock = threading.Lock()
    _live_children.clear()
    _attributed.clear()
    _subreaper_done = False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class BotIOError(Exception):
    """Base class for a bot's failure to do I/O as expected."""

    reason = "protocol"

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail or message


class BotTimeout(BotIOError):
    reason = "timeout"


class BotLineTooLong(BotIOError):
    reason = "protocol"


class BotExited(BotIOError):
    reason = "crash"


class BotStartError(BotIOError):
    reason = "crash"


class Aborted(Exception):
    """The stop event was set while waiting for a bot."""


HOME_PREFIX = "arena-bot-"
_homes_swept = False


def _sweep_stale_homes() -> None:
    """Remove the bots' HOME folders left behind by arenas that were killed outright.

    An arena that gets SIGKILL cannot clean up; its folders carry its pid, so the next arena
    removes those whose owner is gone (once per process).
    """
    global _homes_swept
    if _homes_swept:
        return
    _homes_swept = True
    for folder in Path(tempfile.gettempdir()).glob(f"{HOME_PREFIX}*-*"):
        owner = folder.name[len(HOME_PREFIX):].partition("-")[0]
        if owner.isdigit() and not _pid_exists(int(owner)):
            shutil.rmtree(folder, ignore_errors=True)


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def make_subreaper() -> bool:
    """Make this process a child subreaper (Linux only); returns whether it is one."""
    global _subreaper_done
    if _subreaper_done:
        return True
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_CHILD_SUBREAPER = 36
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
            _subreaper_done = True
    except (OSError, AttributeError):
        pass
    return _subreaper_done


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


def _read_stat(pid: int) -> tuple[int, int, int, str, int] | None:
    """(ppid, pgid, sid, state, cpu ticks) of a process, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()
    try:
        return (int(fields[1]), int(fields[2]), int(fields[3]), fields[0].decode(),
                int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14]))
    except (IndexError, ValueError):
        return None


_TICK_MS = 1000.0 / (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)


def _all_pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _has_token(pid: int, token: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return token in f.read()
    except OSError:
        return False


def reap_orphan_zombies() -> None:
    """Reap zombies re-parented to us (subreaper) that were seen belonging to a bot.

    Only pids attributed to a bot are waited for, so the exit status of any other child of the
    arena (a bot of another game, or a subprocess started by other code) is never stolen.
    """
    me = os.getpid()
    with _registry_lock:
        for pid in list(_attributed):
            st = _read_stat(pid)
            if st is None:
                _attributed.discard(pid)
            elif st[0] == me and st[3] == "Z" and pid not in _live_children:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
                _attributed.discard(pid)


def minimal_env(home: str, token: str) -> dict[str, str]:
    pythonpath = str(PROJECT_ROOT)
    return {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONPATH": pythonpath,
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        TOKEN_VAR: token,
    }


class BotProcess:
    """One running bot program with line-based, deadline-bounded I/O."""

    def __init__(
        self,
        command: list[str],
        cwd: Path | str,
        line_cap: int = LINE_CAP,
        stderr_cap: int = STDERR_CAP,
        sandbox_policy: sandbox.SandboxPolicy | None = None,  # sandbox hook (issue 10)
    ) -> None:
        self.command = list(command)
        self.sandbox_policy = sandbox_policy  # sandbox hook (issue 10): None = the default
        self.sandboxed = False  # sandbox hook (issue 10)
        self.cwd = Path(cwd)
        self.line_cap = line_cap
        self.stderr_cap = stderr_cap
        self.token = f"{TOKEN_VAR}={uuid.uuid4().hex}"
        self.proc: subprocess.Popen | None = None
        self.pid = 0
        self._buf = bytearray()
        self._eof = False
        self._stderr_lock = threading.Lock()
        self._stderr = bytearray()
        self._stderr_dropped = 0
        self._stderr_thread: threading.Thread | None = None
        self._home: str | None = None
        self._cpu_ms = 0.0
        self._cpu_clock: int | None = None
        self._cpu_clock_pid: int | None = None  # sandbox hook (issue 10)
        self.started_at = 0.0
        self.closed = False

    # --- life cycle ---------------------------------------------------------------------------

    def start(self) -> None:
        make_subreaper()
        _sweep_stale_homes()
        self._home = tempfile.mkdtemp(prefix=f"{HOME_PREFIX}{os.getpid()}-")
        env = minimal_env(self._home, self.token.partition("=")[2])
        # --- sandbox hook (issue 10): run the bot under bwrap when the policy says so ---
        policy = self.sandbox_policy or sandbox.default_policy()
        self.sandboxed = policy.enabled  # `on` without bwrap: SandboxUnavailable (commands
        argv, env = sandbox.wrap(self.command, env, self.cwd, policy)  # check that up front)
        # --- end of the sandbox hook ---
        with _registry_lock:
            try:
                self.proc = subprocess.Popen(
                    argv,
                    cwd=self.cwd,
                    env=env,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                    close_fds=True,
                    bufsize=0,
                )
            except OSError as error:
                shutil.rmtree(self._home, ignore_errors=True)
                self.closed = True
                raise BotStartError(f"cannot start {self.command[0]!r}: {error.strerror}") from None
            self.pid = self.proc.pid
            self._cpu_clock = ((~self.pid) << 3) | 2  # CPUCLOCK_SCHED of the whole process
            _live_children.add(self.pid)
        self.started_at = time.monotonic()
        os.set_blocking(self.proc.stdin.fileno(), False)
        self._out_fd = self.proc.stdout.fileno()
        self._in_fd = self.proc.stdin.fileno()
        self._poll = select.poll()
        self._poll.register(self._out_fd, select.POLLIN)
        self._stderr_thread = threading.Thread(
            target=self._drain_stderr, name=f"stderr-{self.pid}", daemon=True
        )
        self._stderr_thread.start()

    def _drain_stderr(self) -> None:
        fd = self.proc.stderr.fileno()
        while True:
            try:
                chunk = os.read(fd, READ_CHUNK)
            except OSError:
                return
            if not chunk:
                return
            with self._stderr_lock:
                room = self.stderr_cap - len(self._stderr)
                if room > 0:
                    self._stderr += chunk[:room]
                self._stderr_dropped += max(0, len(chunk) - max(room, 0))

    def take_stderr(self, wait: float = 0.0) -> tuple[bytes, int]:
        """The stderr captured since the last call (head, up to the cap) and the bytes dropped."""
        if wait and self._stderr_thread is not None:
            self._stderr_thread.join(wait)
        with self._stderr_lock:
            data, dropped = bytes(self._stderr), self._stderr_dropped
            self._stderr.clear()
            self._stderr_dropped = 0
        return data, dropped

    def poll(self) -> int | None:
        """The bot's exit status (negative: killed by that signal), None while it runs.

        The bot process is not reaped here: see `_exit_status`."""
        return self._exit_status()

    @property
    def alive(self) -> bool:
        return self.proc is not None and not self.closed and self._exit_status() is None

    def _exit_status(self) -> int | None:
        """Exit status of the bot process, or None while it runs, WITHOUT reaping it.

        The bot is reaped only at the end of `close()`, once its process group and session are
        gone. Until then its pid, which is also the id of its group and session, cannot be given
        to another process, so signalling the group or scanning for its session never touches a
        stranger (such as the bot of a game that another thread starts meanwhile).
        """
        proc = self.proc
        if proc is None:
            return None
        if proc.returncode is not None:
            return proc.returncode
        try:
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # reaped already (not by this class)
            return proc.poll()
        except AttributeError:  # pragma: no cover - no waitid on this platform
            return proc.poll()
        if info is None or info.si_pid == 0:
            return None
        return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status

    def wait_exit(self, timeout: float) -> int | None:
        """Wait up to `timeout` seconds for the bot to exit (without reaping it); its status or
        None if it still runs."""
        deadline = time.monotonic() + timeout
        delay = 0.001
        while True:
            status = self._exit_status()
            if status is not None:
                return status
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            time.sleep(min(delay, remaining))
            delay = min(2 * delay, 0.02)

    def status(self) -> str:
        if self.sandboxed:  # sandbox hook (issue 10): bwrap's 128+N, and the limit hit
            if self.poll() is not None and self._stderr_thread is not None:
                self._stderr_thread.join(0.5)  # the runtime's last words name the limit
            with self._stderr_lock:
                return sandbox.status_text(self.poll(), bytes(self._stderr))
        return describe_status(self.poll())

    # --- I/O ----------------------------------------------------------------------------------

    def send(self, line: str, deadline: float | None = None) -> None:
        """Write one line; raises BotExited if the bot is gone, BotTimeout if its stdin stays full."""
        data = (line + "\n").encode()
        if deadline is None:
            deadline = time.monotonic() + 5.0
        while data:
            try:
                n = os.write(self._in_fd, data)
                data = data[n:]
                continue
            except BlockingIOError:
                pass
            except (BrokenPipeError, ConnectionResetError, ValueError, OSError) as error:
                if isinstance(error, OSError) and error.errno not in (
                    errno.EPIPE, errno.ECONNRESET, errno.EBADF, None
                ):
                    raise
                self._wait_exit(0.5)
                raise BotExited(f"bot closed its input: {self.status()}") from None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BotTimeout("bot does not read its input")
            poller = select.poll()
            poller.register(self._in_fd, select.POLLOUT)
            poller.poll(min(remaining, 0.05) * 1000)

    def read_line(self, deadline: float, stop: threading.Event | None = None) -> str:
        """Read one line by an absolute `time.monotonic()` deadline.

        Raises BotTimeout, BotLineTooLong, BotExited (with the exit status) or Aborted.
        """
        buf = self._buf
        while True:
            line = self._take_line()
            if line is not None:
                return line
            if self._unfinished_over_cap():
                raise BotLineTooLong(
                    f"line over the cap of {self.line_cap} bytes without a newline",
                    f"{len(buf)}+ bytes without a newline: {bytes(buf[:80])!r}...",
                )
            if self._eof:
                self._wait_exit(0.5)
                tail = f"; unfinished line {bytes(buf[:80])!r}" if buf else ""
                raise BotExited(f"bot {self.status()}{tail}")
            now = time.monotonic()
            remaining = deadline - now
            if remaining <= 0:
                # What was already in the pipe counts (another bot may have been read first).
                if not self._eof and self._poll.poll(0):
                    self._read_chunk()
                    continue
                raise BotTimeout("no answer in time")
            if stop is not None and stop.is_set():
                raise Aborted()
            wait = min(remaining, 0.05) if stop is not None else min(remaining, 0.25)
            if self._poll.poll(wait * 1000 + 0.5):
                self._read_chunk()
            elif self._exit_status() is not None:
                # Exited, though a grandchild may still hold the pipe open: drain what is there.
                self._read_available()
                self._eof = True

    def _take_line(self) -> str | None:
        """The first complete line of the buffer, removed from it with its ending (`\n` or
        `\r\n`, which do not count towards the cap); None if there is none yet.
        Raises BotLineTooLong."""
        buf = self._buf
        i = buf.find(b"\n")
        if i < 0:
            return None
        end = i - 1 if i > 0 and buf[i - 1] == 0x0D else i
        if end > self.line_cap:
            raise BotLineTooLong(
                f"line over the cap of {self.line_cap} bytes",
                f"line of {end} bytes: {bytes(buf[:80])!r}...",
            )
        line = buf[:end].decode("utf-8", "replace")
        del buf[: i + 1]
        return line

    def _unfinished_over_cap(self) -> bool:
        """True if the buffer holds no newline and already more than a line may hold (a `\r`
        after exactly `line_cap` bytes may still be followed by its `\n`)."""
        n = len(self._buf)
        return n > self.line_cap + 1 or (n == self.line_cap + 1 and self._buf[-1] != 0x0D)

    def _read_chunk(self) -> None:
        try:
            chunk = os.read(self._out_fd, READ_CHUNK)
        except OSError:
            chunk = b""
        if chunk:
            self._buf += chunk
        else:
            self._eof = True

    def _read_available(self) -> None:
        while not self._eof and self._poll.poll(0) and len(self._buf) <= self.line_cap + 1:
            self._read_chunk()

    def fileno(self) -> int:
        """The fd of the bot's stdout (for waiting on several bots at once)."""
        return self._out_fd

    def ready(self) -> bool:
        """Read what is available without waiting; True if `read_line` would return or raise
        at once (a complete line, an over-long line, end of output or an exited process)."""
        self._read_available()
        return (
            b"\n" in self._buf or self._unfinished_over_cap() or self._eof
            or self._exit_status() is not None
        )

    def pending_lines(self) -> list[str]:
        """Complete lines already sent by the bot, without waiting (for unsolicited output)."""
        self._read_available()
        lines = []
        while True:
            try:
                line = self._take_line()
            except BotLineTooLong:
                break  # left in the buffer: `read_line` reports it
            if line is None:
                return lines
            lines.append(line)
        return lines

    def cpu_ms(self) -> float:
        """CPU time (user + system, all threads) used by the bot process so far, in ms.

        Read through the process's CPU clock (`clock_gettime` on the clock id of the pid, Linux:
        nanosecond resolution, well under a microsecond per read), falling back to
        /proc/<pid>/stat (clock-tick resolution); it keeps the last value once the process is gone.
        """
        if not self.pid:
            return self._cpu_ms
        if self.sandboxed and self._cpu_clock is not None and self._cpu_clock_pid is None:
            # sandbox hook (issue 10): measure the bot inside, not bwrap, once it runs
            self._cpu_clock_pid = sandbox.cpu_pid(self.pid, True)
            if self._cpu_clock_pid is None:
                return self._cpu_ms
            self._cpu_clock = ((~self._cpu_clock_pid) << 3) | 2
        if self._cpu_clock is not None:
            try:
                self._cpu_ms = time.clock_gettime(self._cpu_clock) * 1000
                return self._cpu_ms
            except OSError:
                if self.proc is not None and self._exit_status() is None:
                    self._cpu_clock = None  # not supported here: use /proc from now on
                else:
                    return self._cpu_ms
        st = _read_stat(self.pid)
        if st is not None:
            self._cpu_ms = st[4] * _TICK_MS
        return self._cpu_ms

    # --- ending -------------------------------------------------------------------------------

    def _wait_exit(self, timeout: float) -> int | None:
        return self.wait_exit(timeout)

    def close(self, quit_line: str | None = "quit", quit_grace: float = 0.5,
              term_grace: float = 0.2) -> None:
        """End the bot: quit line (if given), then SIGTERM, then SIGKILL to everything it owns."""
        if self.proc is None or self.closed:
            return
        self.closed = True
        proc = self.proc
        if quit_line is not None and self._exit_status() is None:
            try:
                self.send(quit_line, time.monotonic() + 0.05)
                self._wait_exit(quit_grace)
            except (BotIOError, OSError):
                pass
        owned = self._owned_pids()
        if self._exit_status() is None:
            self._signal_group(signal.SIGTERM)
            for pid in owned:
                _kill(pid, signal.SIGTERM)
            if self._wait_exit(term_grace) is None:
                self._signal_group(signal.SIGKILL)
        # Kill and reap every process of the bot, until none is left. Later rounds use a fresh
        # scan (not the first snapshot) so that a reused pid is never signalled.
        current = owned
        seen = set(owned)
        for _ in range(100):
            self._signal_group(signal.SIGKILL)
            for pid in current:
                _kill(pid, signal.SIGKILL)
            if self._exit_status() is None:
                self._wait_exit(0.5)
            for pid in current:
                _reap(pid)
            current = self._owned_pids()
            seen |= current
            for pid in current:
                _reap(pid)
            if not any(_is_running(pid) for pid in current):
                break
            time.sleep(0.005)
        # Only now, with its group and session gone, may the bot's pid be released.
        try:
            proc.wait(5.0)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILLed, cannot take long
            pass
        # Orphans we killed become our zombies (subreaper) a moment later: reap them.
        for _ in range(40):
            if not any(_read_stat(pid) for pid in seen):
                break
            for pid in seen:
                _reap(pid)
            time.sleep(0.005)
        with _registry_lock:
            _live_children.discard(self.pid)
        reap_orphan_zombies()
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        if self._stderr_thread is not None:
            self._stderr_thread.join(0.5)
        try:
            proc.stderr.close()
        except OSError:
            pass
        if self._home:
            shutil.rmtree(self._home, ignore_errors=True)

    def kill(self) -> None:
        """End the bot at once: no quit line, short SIGTERM grace."""
        self.close(quit_line=None, term_grace=0.05)

    def _signal_group(self, sig: int) -> None:
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _owned_pids(self) -> set[int]:
        """Every live process that belongs to this bot (excluding the bot process itself)."""
        me = os.getpid()
        token = self.token.encode()
        stats = {}
        for pid in _all_pids():
            if pid in (me, self.pid):
                continue
            st = _read_stat(pid)
            if st is not None:
                stats[pid] = st
        owned = set()
        for pid, (_ppid, pgid, sid, _state, _cpu) in stats.items():
            if sid == self.pid or pgid == self.pid:
                owned.add(pid)
        # descendants through parent links
        frontier = {self.pid} | owned
        while frontier:
            children = {pid for pid, st in stats.items() if st[0] in frontier and pid not in owned}
            owned |= children
            frontier = children
        for pid, st in stats.items():
            if pid not in owned and st[3] != "Z" and _has_token(pid, token):
                owned.add(pid)
        if owned:
            with _registry_lock:
                _attributed.update(owned)
        return owned


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _is_running(pid: int) -> bool:
    st = _read_stat(pid)
    return st is not None and st[3] not in ("Z", "X")


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
