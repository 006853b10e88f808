"""Bot processes: the only place that spawns them.

Each bot runs in its own session and process group (`start_new_session`), in its own working
directory, with a minimal environment. `BotProcess` puts the parts together: lines are read from
its stdout by a `LineReader` (absolute deadlines, a line cap, lateness judged by arrival), its
stderr is captured by a thread into a capped buffer (so a chatty bot never blocks), and it is
ended through `arena.proctree`: the quit line, then SIGTERM, then SIGKILL to the whole group and
to every other process that belongs to the bot, all reaped.

The bot process is reaped only at the end of `close()`, once its group and session are gone:
until then its pid, also the id of its group and session, cannot be given to another process, so
signalling the group never touches a stranger (such as the bot of another game in another thread).
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
from collections.abc import Callable
from pathlib import Path

from arena import affinity, cgroup, proctree, sandbox
from arena.boterrors import (
    Aborted,
    BotExited,
    BotIOError,
    BotLineTooLong,
    BotStartError,
    BotTimeout,
    telling_line,
)
from arena.linereader import READ_CHUNK, LineReader
from arena.proctree import LIVE_BOTS, TOKEN_VAR, describe_status
from arena.protocol import LINE_CAP, QUIT_LINE
from arena.stallwatch import STALL_S, guarded

__all__ = [
    "Aborted", "BotExited", "BotIOError", "BotLineTooLong", "BotProcess", "BotStartError",
    "BotTimeout", "PROJECT_ROOT", "describe_status", "minimal_env",
]

PROJECT_ROOT = Path(__file__).resolve().parent.parent
STDERR_CAP = 64 * 1024
TAIL_BYTES = 4096  # the end of a bot's stderr kept past the cap, for its last line
TAKE_CHUNKS = 32  # reads of what is in a stderr pipe when it is taken (a pipe holds 1 MiB at most)
HOME_PREFIX = "arena-bot-"

_homes_swept_by: int | None = None  # the pid that swept (once per arena: a forked worker inherits it)


def _sweep_stale_homes() -> None:
    """Remove the bots' HOME folders left behind by arenas that were killed outright.

    An arena that gets SIGKILL cannot clean up; its folders carry its pid, so the next arena
    removes those whose owner is gone (once per process), and ends the bots still holding one
    as their HOME: an unsandboxed bot the arena had stopped between turns (`ponder = false`)
    waits stopped forever, as it never sees its input end (sandboxed ones die with the arena).
    """
    global _homes_swept_by
    if _homes_swept_by is not None:
        return
    _homes_swept_by = os.getpid()
    stale = [folder for folder in Path(tempfile.gettempdir()).glob(f"{HOME_PREFIX}*-*")
             if proctree.left_by_dead_owner(folder.name, HOME_PREFIX)]
    if stale:  # rare: only after an arena was killed outright
        proctree.kill_holding({f"HOME={folder}".encode() for folder in stale})
    for folder in stale:
        shutil.rmtree(folder, ignore_errors=True)


def minimal_env(home: str, token: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONPATH": str(PROJECT_ROOT),
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        TOKEN_VAR: token,
        **({proctree.RUN_VAR: proctree.run_key()} if proctree.run_key() else {}),
    }


class StderrCapture:
    """A bot's stderr, drained by a thread into a capped buffer.

    Every read of the pipe happens under the lock, and `take` first reads what is in the pipe:
    so whatever the bot wrote before `take` is in what it returns, never in the next take (a
    kept process's last line cannot land in the next game's log). Besides the capped head, the
    last `TAIL_BYTES` since the last take are kept: where a dying bot says why, after a head
    that a chatty bot filled with debug lines long before.
    """

    def __init__(self, fd: int, cap: int, on_stall: Callable[[], None] | None = None) -> None:
        self.fd = fd
        self.cap = cap
        self.on_stall = on_stall  # ends the bot when a read waits on its pipe (`stallwatch`)
        self._lock = threading.Lock()
        self._data = bytearray()
        self._tail = bytearray()
        self._dropped = 0
        self._eof = False
        os.set_blocking(fd, False)
        self._thread = threading.Thread(target=self._drain, name=f"stderr-{fd}", daemon=True)
        self._thread.start()

    def _read_available(self, max_chunks: int) -> None:
        """Read what is in the pipe now, at most `max_chunks` reads (the lock held; bounded,
        so that a bot that floods stderr cannot keep the lock)."""
        for _ in range(max_chunks):
            if self._eof:
                return
            try:
                chunk = guarded(self.on_stall, os.read, self.fd, READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._eof = True
                return
            room = self.cap - len(self._data)
            if room > 0:
                self._data += chunk[:room]
            self._dropped += max(0, len(chunk) - max(room, 0))
            self._tail += chunk[-TAIL_BYTES:]
            del self._tail[:-TAIL_BYTES]

    def _drain(self) -> None:
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        while not self._eof:
            try:
                poller.poll()
            except OSError:  # pragma: no cover - the fd closed under us
                return
            with self._lock:
                self._read_available(1)

    def take(self, wait: float = 0.0) -> tuple[bytes, int]:
        """What the bot wrote since the last take (up to the cap) and the bytes dropped; with
        `wait`, first wait that long for the end of the output (after the bot was ended)."""
        if wait:
            self._thread.join(wait)
        with self._lock:
            self._read_available(TAKE_CHUNKS)
            data, dropped = bytes(self._data), self._dropped
            self._data.clear()
            self._tail.clear()
            self._dropped = 0
        return data, dropped

    def peek(self, wait: float = 0.0, tail: bool = False) -> bytes:
        """What `take` would return now, left in place (after waiting up to `wait` for the end);
        `tail`: only the last `TAIL_BYTES` written since the last take, past the cap too."""
        if wait:
            self._thread.join(wait)
        with self._lock:
            self._read_available(TAKE_CHUNKS)
            return bytes(self._tail if tail else self._data)

    def close(self, close_fd: Callable[[], None], wait: float = 0.5) -> None:
        """Wait for the drain to see the end of the output (its writers are gone), then close
        the pipe with `close_fd`; what was captured can still be taken, and the fd number,
        free for reuse, is never read again."""
        self._thread.join(wait)
        with self._lock:
            self._eof = True
            close_fd()


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
        self._cpu_clock_pid: int | None = None  # sandbox hook (issue 10)
        self._sandbox_inits: set[int] = set()  # bwrap's children, to reap if they fall to us
        self.started_at = 0.0
        self.closed = False
        self._home: str | None = None
        self._cgroup: cgroup.BotCgroup | None = None  # sandbox hook: its total memory
        self._reader: LineReader | None = None
        self._stderr: StderrCapture | None = None
        self._exit: proctree.ExitWatch | None = None
        self._cpu_ms = 0.0
        self._cpu_clock: int | None = None
        self._quit_sent = False
        self._frozen = ""  # how it is stopped between turns (`freeze`): "cgroup", "signal" or not
        self._group: int | None = None  # the process group `freeze` stops without a cgroup
        self.stalled = False  # killed by `stallwatch`: it held one of its pipes' locks
        self._followed: int | None = None  # the core its program was last pinned to (`follow_cpu`)

    # --- life cycle ---------------------------------------------------------------------------

    def start(self) -> None:
        proctree.make_subreaper()
        _sweep_stale_homes()
        self._home = tempfile.mkdtemp(prefix=f"{HOME_PREFIX}{os.getpid()}-")
        env = minimal_env(self._home, self.token.partition("=")[2])
        # --- sandbox hook (issue 10): run the bot under bwrap when the policy says so ---
        policy = self.sandbox_policy or sandbox.default_policy()
        self.sandboxed = policy.enabled  # `on` without bwrap: SandboxUnavailable (commands
        self._cgroup = sandbox.memory_cgroup(policy) if self.sandboxed else None
        try:
            self._spawn(policy, env)
        except BaseException:  # whatever failed (the sandbox's files, the spawn): nothing left
            self.closed = True
            shutil.rmtree(self._home, ignore_errors=True)
            if self._cgroup is not None:
                self._cgroup.remove()
            raise
        self.started_at = time.monotonic()
        self._cpu_clock = ((~self.pid) << 3) | 2  # CPUCLOCK_SCHED of the whole process
        self._exit = proctree.ExitWatch(self.pid)
        os.set_blocking(self.proc.stdin.fileno(), False)
        self._in_fd = self.proc.stdin.fileno()
        self._reader = LineReader(self.proc.stdout.fileno(), self.line_cap,
                                  on_stall=self.kill_now)
        self._stderr = StderrCapture(self.proc.stderr.fileno(), self.stderr_cap,
                                     on_stall=self.kill_now)

    def _spawn(self, policy: sandbox.SandboxPolicy, env: dict[str, str]) -> None:
        argv, env = sandbox.wrap(self.command, env, self.cwd, policy,  # check that up front)
                                 group=self._cgroup)
        # --- end of the sandbox hook ---
        with LIVE_BOTS.lock:
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
                raise BotStartError(f"cannot start {self.command[0]!r}: {error.strerror}") from None
            self.pid = self.proc.pid
            LIVE_BOTS.add(self.pid)

    def take_stderr(self, wait: float = 0.0) -> tuple[bytes, int]:
        """The stderr captured since the last call (head, up to the cap) and the bytes dropped."""
        if self._stderr is None:
            return b"", 0
        return self._stderr.take(wait)

    def stderr_last_line(self, wait: float = 0.0) -> str:
        """The line of the bot's stderr that says why it died, left in place for its log ('' if
        none): a usage error, a traceback's last line, an exception's, not the stack frames and
        footers after it (`boterrors.telling_line`); `wait`: up to that long for the end of its
        output first."""
        if self._stderr is None:
            return ""
        text = self._stderr.peek(wait, tail=True).decode("utf-8", "replace")
        return telling_line(text)[:200]

    def poll(self) -> int | None:
        """The bot's exit status (negative: killed by that signal), None while it runs; the
        process is not reaped here (see the module's docstring)."""
        if self.proc is None:
            return None
        if self.proc.returncode is not None:
            return self.proc.returncode
        return self._exit.poll()

    @property
    def alive(self) -> bool:
        return self.proc is not None and not self.closed and self.poll() is None

    def wait_exit(self, timeout: float) -> int | None:
        """Wait up to `timeout` seconds for the bot to exit (without reaping it); its status or
        None if it still runs."""
        if self.proc is None:
            return None
        if self.proc.returncode is not None:
            return self.proc.returncode
        return self._exit.wait(timeout)

    def status(self) -> str:
        if self.stalled:
            return (f"killed by the arena: it held a pipe of its own locked for over "
                    f"{STALL_S:.0f} s (a read or write of the arena's waited on it)")
        if self.sandboxed and self._stderr is not None:  # sandbox hook (issue 10): bwrap's 128+N
            exited = self.poll() is not None  # and the limit hit, named by the runtime's last words
            return sandbox.status_text(self.poll(), self._stderr.peek(wait=0.5 if exited else 0.0),
                                       self._cgroup is not None and self._cgroup.oom_killed())
        return describe_status(self.poll())

    # --- I/O ----------------------------------------------------------------------------------

    def send(self, line: str, deadline: float | None = None) -> None:
        """Write one line; raises BotExited if the bot is gone, BotTimeout if its stdin stays full."""
        data = (line + "\n").encode()
        if deadline is None:
            deadline = time.monotonic() + 5.0
        while data:
            try:
                n = guarded(self.kill_now, os.write, self._in_fd, data)
                data = data[n:]
                continue
            except BlockingIOError:
                pass
            except (BrokenPipeError, ConnectionResetError, ValueError, OSError) as error:
                if isinstance(error, OSError) and error.errno not in (
                    errno.EPIPE, errno.ECONNRESET, errno.EBADF, None
                ):
                    raise
                if self.wait_exit(0.5) is None:
                    raise BotExited("bot closed its stdin (input) and kept running") from None
                # the same words as a read's: which of the two first met the exit is timing
                # (a check's detail read either way, on a loaded machine)
                raise BotExited(f"bot {self.status()}", exit_code=self.poll()) from None
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
        line = self._reader.read_line(deadline, stop, exited=lambda: self.poll() is not None)
        if line is not None:
            return line
        head = self._reader.buffer.head()
        tail = f"; unfinished line {head!r}" if head else ""
        if self.wait_exit(0.5) is None:
            raise BotExited(f"bot closed its stdout (output) and kept running{tail}")
        raise BotExited(f"bot {self.status()}{tail}", exit_code=self.poll())

    @property
    def last_line_at(self) -> float:
        """time.monotonic() at which the last line returned by `read_line` arrived."""
        return self._reader.last_line_at

    def fileno(self) -> int:
        """The fd of the bot's stdout (for waiting on several bots at once)."""
        return self._reader.fd

    def ready(self) -> bool:
        """Read what is available without waiting; True if `read_line` would return or raise
        at once (a complete line, an over-long line, end of output or an exited process)."""
        return self._reader.ready() or self.poll() is not None

    def pending_lines(self) -> list[str]:
        """Complete lines already sent by the bot, without waiting (for unsolicited output)."""
        return self._reader.pending_lines()

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
            self._sandbox_inits |= set(proctree.children_of(self.pid) or ())
            if self._cpu_clock_pid is None:
                return self._cpu_ms
            self._cpu_clock = ((~self._cpu_clock_pid) << 3) | 2
        if self._cpu_clock is not None:
            try:
                self._cpu_ms = time.clock_gettime(self._cpu_clock) * 1000
                return self._cpu_ms
            except OSError:
                if self.proc is not None and self.poll() is None:
                    self._cpu_clock = None  # not supported here: use /proc from now on
                else:
                    return self._cpu_ms
        st = proctree.read_stat(self.pid)
        if st is not None:
            self._cpu_ms = st.cpu_ms
        return self._cpu_ms

    def follow_cpu(self, cpu: int) -> None:
        """Run the bot's program on `cpu` (its worker's core as a game begins: `affinity.
        follow`); nothing when it already does, so that a worker staying on its core pays one
        comparison a game."""
        if self.proc is None or self.closed or cpu == self._followed or self.poll() is not None:
            return  # an exited bot: its pid, or the sandboxed program's, may be another's now
        program = self._cpu_clock_pid if self.sandboxed else self.pid
        if program is None:  # the program inside the sandbox, found as the CPU clock is
            self.cpu_ms()
            program = self._cpu_clock_pid
        if program is not None and affinity.follow(program, cpu):
            self._followed = cpu

    # --- between turns (`ponder = false`) -----------------------------------------------------

    def freeze(self) -> None:
        """Stop every process of the bot until `thaw`, so that it cannot compute while its
        opponent thinks: its cgroup frozen (at once: no fork slips out, no signal undoes it),
        else SIGSTOP to its process group (where a child that leaves the group escapes, and may
        even SIGCONT the rest: SECURITY.md)."""
        if self.proc is None or self.closed or self._frozen or self.poll() is not None:
            return
        if self._cgroup is not None and self._cgroup.freeze():
            self._frozen = "cgroup"
            return
        group = self._group_leader()
        if group is not None:
            self._frozen = "signal"
            proctree.kill_group(group, signal.SIGSTOP)

    def thaw(self) -> None:
        """Let a frozen bot run again, the way it was stopped."""
        frozen, self._frozen = self._frozen, ""
        if frozen == "cgroup":
            self._cgroup.thaw()
        elif frozen == "signal":
            group = self._group_leader()
            if group is not None:
                proctree.kill_group(group, signal.SIGCONT)

    def _group_leader(self) -> int | None:
        """The bot's process group: the bot itself when unsandboxed (its own session and group),
        else the group of the program inside the sandbox (bwrap's new session, which its init
        may lead: stopping the init with it holds nothing up, as it is resumed first). Found
        once: a session's group does not change."""
        if self._group is None:
            if not self.sandboxed:
                self._group = self.pid
            else:
                inner = sandbox.inner_pid(self.pid)
                stat = proctree.read_stat(inner) if inner is not None else None
                self._group = stat.pgid if stat is not None and stat.pgid > 0 else None
        return self._group

    # --- ending -------------------------------------------------------------------------------

    def begin_close(self, quit_line: str | None = QUIT_LINE) -> None:
        """Send the quit line without waiting, so that several bots can exit at once."""
        self.thaw()  # a stopped bot reads no quit line, and a SIGTERM waits for it to run
        if self.proc is None or self.closed or self._quit_sent or quit_line is None:
            return
        self._quit_sent = True
        if self.poll() is None:
            try:
                self.send(quit_line, time.monotonic() + 0.05)
            except (BotIOError, OSError):
                pass

    def close(self, quit_line: str | None = QUIT_LINE, quit_grace: float = 0.5,
              term_grace: float = 0.2) -> None:
        """End the bot: quit line (if given), then SIGTERM, then SIGKILL to everything it owns."""
        if self.proc is None or self.closed:
            return
        # bwrap's own init inside the sandbox can outlive bwrap by a moment and then becomes our
        # zombie (we are a subreaper): note it now, while it is still bwrap's child.
        if self.sandboxed:
            self._sandbox_inits |= set(proctree.children_of(self.pid) or ())
        sandbox_inits = self._sandbox_inits
        self.begin_close(quit_line)
        self.closed = True
        token = self.token.encode()
        status = self.poll()
        if status is None and self._quit_sent:
            status = self._exit.wait(quit_grace)
        # A sandboxed bot lives in its own pid namespace, which dies with the namespace's init:
        # the kernel kills every process in it before the init's exit is seen, and nothing of
        # the bot can live outside it. So once bwrap and its init are gone, no /proc scan is
        # needed (the scans were most of a sandboxed close's cost).
        if not (status is not None and sandbox_inits
                and proctree.all_exited(sandbox_inits, quit_grace)):
            self._end_everything(status, token, term_grace)
        self._release()
        if sandbox_inits:
            proctree.reap_orphans(sandbox_inits)
            proctree.reap_sandbox_zombies()  # and any an earlier, busier close left behind
        if self._cgroup is not None:
            # after the reaping: a zombie still counts as inside. Still busy: removed at a
            # later start (never waited for here)
            self._cgroup.remove()

    def _end_everything(self, status: int | None, token: bytes, term_grace: float) -> None:
        """SIGTERM, then SIGKILL, to the bot's group and every process it owns, all reaped."""
        owned: set[int] = set()
        if status is None:
            if proctree.may_have_leftovers(self.pid, token):
                owned = proctree.owned_pids(self.pid, token)
            proctree.kill_group(self.pid, signal.SIGTERM)
            for pid in owned:
                proctree.kill(pid, signal.SIGTERM)
            if self._exit.wait(term_grace) is None:
                proctree.kill_group(self.pid, signal.SIGKILL)
                self._exit.wait(0.5)
        if owned or self.poll() is None or proctree.may_have_leftovers(self.pid, token):
            proctree.kill_and_reap(self.pid, token, lambda: self.poll() is not None,
                                   self._exit.wait)

    def _release(self) -> None:
        """Reap the bot (its group and session are gone now) and free what it held."""
        proc = self.proc
        with LIVE_BOTS.lock:
            try:
                proc.wait(5.0)
            except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILLed, cannot take long
                pass
            LIVE_BOTS.discard(self.pid)
        self._exit.close()
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        def close_stderr() -> None:
            try:
                proc.stderr.close()
            except OSError:
                pass

        self._stderr.close(close_stderr)
        if self._home:
            shutil.rmtree(self._home, ignore_errors=True)

    def kill_now(self) -> None:
        """SIGKILL every process of the bot at once, from any thread and holding no lock of
        this object: the watchdog's end for a bot that holds one of its pipes' locks
        (`stallwatch`); `close` then reaps and frees as for any dead bot."""
        if self.proc is None or self.pid <= 0 or self.proc.returncode is not None:
            return
        self.stalled = True
        if self._cgroup is not None:
            self._cgroup.thaw()  # v1: a frozen process cannot even die
            self._cgroup.kill_all()
        with LIVE_BOTS.lock:  # `_release` reaps under it: no pid of another process is hit
            if self.proc.returncode is not None:
                return
            stopped = self._cgroup is None and self._frozen == "signal"
            if stopped and (group := self._group_leader()) is not None:
                proctree.kill_group(group, signal.SIGCONT)  # SIGKILL ends a stopped one anyway
            if self.sandboxed:  # its pid namespace dies with its init
                for pid in proctree.children_of(self.pid) or ():
                    proctree.kill(pid, signal.SIGKILL)
            proctree.kill_group(self.pid, signal.SIGKILL)
            for pid in proctree.owned_pids(self.pid, self.token.encode()):
                proctree.kill(pid, signal.SIGKILL)

    def kill(self) -> None:
        """End the bot at once: no quit line, short SIGTERM grace."""
        self.close(quit_line=None, term_grace=0.05)

