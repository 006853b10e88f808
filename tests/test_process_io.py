"""BotProcess: deadlines, caps, exit statuses, stderr draining and killing whole trees."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from arena.process import (
    BotExited,
    BotLineTooLong,
    BotProcess,
    BotStartError,
    BotTimeout,
    StderrCapture,
)
from arena.protocol import LINE_CAP
from tests.conftest import pid_alive, process_state


def bot(code: str, tmp_path, line_cap: int = LINE_CAP) -> BotProcess:
    """A started bot running ``code`` (indented source is dedented) with ``tmp_path`` as its folder."""
    process = BotProcess([sys.executable, "-c", textwrap.dedent(code)], tmp_path, line_cap=line_cap)
    process.start()
    return process


def test_echo_lines_and_environment(tmp_path, no_leftover_processes):
    code = (
        "import os, sys\n"
        "for line in sys.stdin:\n"
        "    print('got', line.strip(), os.environ['HOME'] != '', os.getcwd(), flush=True)\n"
    )
    p = bot(code, tmp_path)
    try:
        p.send("a b")
        line = p.read_line(time.monotonic() + 10)
        assert line == f"got a b True {tmp_path}"
        assert p.cpu_ms() >= 0
    finally:
        p.close()
    assert not p.alive


def test_timeout_is_an_absolute_deadline_despite_trickling(tmp_path, no_leftover_processes):
    p = bot("import sys, time\nwhile True:\n    sys.stdout.write('x'); sys.stdout.flush(); "
            "time.sleep(0.01)\n", tmp_path)
    try:
        start = time.monotonic()
        with pytest.raises(BotTimeout):
            p.read_line(start + 0.5)
        assert time.monotonic() - start < 1.5
    finally:
        p.close()


def test_line_cap(tmp_path, no_leftover_processes):
    p = bot("import sys\nsys.stdout.write('y' * 200000 + '\\n'); sys.stdout.flush()\n"
            "import time; time.sleep(30)", tmp_path)
    try:
        with pytest.raises(BotLineTooLong):
            p.read_line(time.monotonic() + 10)
    finally:
        p.close()


@pytest.mark.parametrize("code,status", [("import sys; sys.exit(7)", "exited with code 7"),
                                         ("import os; os.abort()", "killed by SIGABRT")])
def test_exit_status_is_reported(code, status, tmp_path, no_leftover_processes):
    p = bot(code, tmp_path)
    try:
        with pytest.raises(BotExited, match=status):
            p.read_line(time.monotonic() + 10)
    finally:
        p.close()


def test_cannot_start(tmp_path):
    p = BotProcess([str(tmp_path / "missing")], tmp_path)
    with pytest.raises(BotStartError, match="cannot start"):
        p.start()


def test_stderr_is_drained_and_capped(tmp_path, no_leftover_processes):
    p = bot("import sys\nsys.stderr.write('e' * 1_000_000); sys.stderr.flush()\n"
            "print('done', flush=True)\nimport time; time.sleep(30)", tmp_path)
    try:
        assert p.read_line(time.monotonic() + 10) == "done"
        data, dropped = p.take_stderr(wait=0.0)
        # the writer finished, so everything is counted once the drain thread caught up
        deadline = time.monotonic() + 5
        while len(data) + dropped < 1_000_000 and time.monotonic() < deadline:
            more, more_dropped = p.take_stderr(wait=0.05)
            data += more
            dropped += more_dropped
        assert len(data) <= 64 * 1024 and len(data) + dropped == 1_000_000
    finally:
        p.close()


def test_close_kills_sigterm_ignoring_tree_with_new_sessions(tmp_path, no_leftover_processes):
    code = (
        "import os, signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "c = subprocess.Popen([sys.executable, '-c', 'import signal, time; "
        "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(100)'], "
        "start_new_session=True)\n"
        "print(c.pid, flush=True)\n"
        "time.sleep(100)\n"
    )
    p = bot(code, tmp_path)
    child = int(p.read_line(time.monotonic() + 10))
    assert pid_alive(child)
    start = time.monotonic()
    p.close()
    assert time.monotonic() - start < 3
    assert not pid_alive(child) and not pid_alive(p.pid)


def test_bot_that_never_reads_stdin_times_out_on_send(tmp_path, no_leftover_processes):
    p = bot("import time; time.sleep(100)", tmp_path)
    try:
        with pytest.raises(BotTimeout):
            for _ in range(100):
                p.send("z" * 60000, time.monotonic() + 0.3)
    finally:
        p.close()


def test_a_write_to_a_bot_that_exited_says_how_it_exited_as_a_read_does(tmp_path,
                                                                        no_leftover_processes):
    """Which of a write and a read first meets a bot's exit is timing: `check`'s detail read
    "bot closed its input: exited with code 4" instead of "bot exited with code 4" on a loaded
    machine, and its test failed once in a full run."""
    p = bot("import sys; sys.exit(4)", tmp_path)
    try:
        assert p.wait_exit(30) is not None
        with pytest.raises(BotExited) as written:
            for _ in range(100):  # the first write may still land in the pipe's buffer
                p.send("z" * 60000)
        with pytest.raises(BotExited) as read:
            p.read_line(time.monotonic() + 5)
        assert written.value.detail == read.value.detail == "bot exited with code 4"
    finally:
        p.close()


def test_stderr_written_before_a_take_is_in_that_take():
    # The drain thread may not have run yet: take() reads what is in the pipe itself, so a
    # kept bot's last line before its move is in that game's log, never in the next one's.
    r, w = os.pipe()
    capture = StderrCapture(r, cap=1 << 20)
    try:
        for i in range(300):
            os.write(w, f"game {i} last line\n".encode())
            assert capture.take() == (f"game {i} last line\n".encode(), 0)
    finally:
        os.close(w)
        capture.close(lambda: os.close(r))
    assert capture.take() == (b"", 0)  # closed: the fd number is never read again


def test_stderr_take_counts_what_is_over_the_cap():
    r, w = os.pipe()
    capture = StderrCapture(r, cap=10)
    try:
        os.write(w, b"x" * 25)
        assert capture.take() == (b"x" * 10, 15)
    finally:
        os.close(w)
        capture.close(lambda: os.close(r))


def test_the_last_line_is_kept_past_the_cap_until_the_next_take():
    """A dying bot's last line, after a head that debug lines filled long before (the crash
    forfeit said `debug line 33 xxx...` instead of why it died)."""
    r, w = os.pipe()
    capture = StderrCapture(r, cap=100)
    try:
        for i in range(50):
            os.write(w, f"debug line {i} ".encode() + b"x" * 2000 + b"\n")
        os.write(w, b"FATAL: weights.bin missing\n")
        head = capture.peek()
        assert len(head) == 100 and head.startswith(b"debug line 0 ")
        assert capture.peek(tail=True).endswith(b"\nFATAL: weights.bin missing\n")
        capture.take()  # the next game's: nothing of this one's is its last line
        assert capture.peek(tail=True) == b""
    finally:
        os.close(w)
        capture.close(lambda: os.close(r))


# --- the bot's pid stays reserved until close() ----------------------------------------------

def test_exited_bot_is_not_reaped_before_close(tmp_path, no_leftover_processes):
    p = bot("""
        import sys
        sys.stdin.readline()
        sys.exit(7)
    """, tmp_path)
    try:
        pid = p.pid
        p.send("go")
        with pytest.raises(BotExited) as info:
            p.read_line(time.monotonic() + 30)
        assert "exited with code 7" in str(info.value)
        assert p.poll() == 7 and not p.alive
        # A zombie: the pid, the id of the bot's process group and session, is still taken, so
        # close() can signal the group without hitting a process that reused the number.
        assert process_state(pid) == "Z"
    finally:
        p.close()
    assert process_state(pid) is None  # reaped by close()
    assert p.poll() == 7


def test_killed_bot_status_without_reaping(tmp_path, no_leftover_processes):
    p = bot("""
        import os, signal, sys
        sys.stdin.readline()
        os.kill(os.getpid(), signal.SIGKILL)
    """, tmp_path)
    try:
        p.send("go")
        with pytest.raises(BotExited) as info:
            p.read_line(time.monotonic() + 30)
        assert "killed by SIGKILL" in str(info.value)
        assert process_state(p.pid) == "Z"
    finally:
        p.close()
    assert process_state(p.pid) is None


# --- line endings and the cap: a \r\n ending does not count towards the cap -------------------

def test_crlf_line_exactly_at_cap(tmp_path, no_leftover_processes):
    cap = 32
    p = bot(f"""
        import sys
        out = sys.stdout.buffer
        out.write(b"x" * {cap} + b"\\r\\n"); out.flush()
        sys.stdin.readline()
        out.write(b"y" * {cap} + b"\\r"); out.flush()   # the \\n comes later
        sys.stdin.readline()
        out.write(b"\\n" + b"z" * ({cap} + 1) + b"\\r\\n"); out.flush()
        sys.stdin.readline()
    """, tmp_path, line_cap=cap)
    try:
        assert p.read_line(time.monotonic() + 30) == "x" * cap
        p.send("next")
        try:  # the half line is not over the cap: at most a timeout while waiting for its end
            p.read_line(time.monotonic() + 0.3)
        except BotTimeout:
            pass
        p.send("next")
        assert p.read_line(time.monotonic() + 30) == "y" * cap
        with pytest.raises(BotLineTooLong):
            p.read_line(time.monotonic() + 30)
    finally:
        p.close()


def test_pending_lines_strip_crlf(tmp_path, no_leftover_processes):
    p = bot("""
        import sys
        sys.stdout.write("info a\\r\\ninfo b\\n"); sys.stdout.flush()
        sys.stdin.readline()
    """, tmp_path)
    try:
        lines: list[str] = []
        deadline = time.monotonic() + 30
        while len(lines) < 2 and time.monotonic() < deadline:
            lines += p.pending_lines()
            time.sleep(0.01)
        assert lines == ["info a", "info b"]
    finally:
        p.close()


def test_bot_homes_left_by_a_killed_arena_are_swept(tmp_path):
    # An arena killed with SIGKILL leaves its bots' HOME folders; the next arena removes them.
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f"arena-bot-{dead.pid}-abc"
    (stale / "cache").mkdir(parents=True)
    # A killed arena that nobody has waited for yet is a zombie: its pid exists, its folders
    # are still left behind.
    zombie = subprocess.Popen(["true"])
    deadline = time.monotonic() + 30
    while pid_alive(zombie.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert process_state(zombie.pid) == "Z"
    of_zombie = tmp_path / f"arena-bot-{zombie.pid}-def"
    of_zombie.mkdir()
    alive = tmp_path / f"arena-bot-{os.getpid()}-keep"
    alive.mkdir()
    # an unsandboxed bot the killed arena had stopped between turns (`ponder = false`): it
    # never sees its input end, and waits stopped until someone ends it
    stopped = subprocess.Popen(["sleep", "600"], env={"HOME": str(stale), "PATH": os.defpath})
    os.kill(stopped.pid, signal.SIGSTOP)
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    try:
        result = subprocess.run(
            [sys.executable, "-m", "arena", "play", "random", "random", "--games", "1"],
            env=env, capture_output=True, text=True, timeout=120,
        )
        ended = stopped.wait(30)  # the arena ended it when it swept the folder, at its start
    finally:
        zombie.wait()
        if stopped.poll() is None:
            stopped.kill()
            stopped.wait()
    assert ended == -signal.SIGKILL
    assert result.returncode == 0, result.stderr
    assert not stale.exists()
    assert not of_zombie.exists()
    assert alive.exists()  # its owner (this test process) is alive
    # The arena's own HOME folders are gone after a clean exit.
    assert sorted(p.name for p in tmp_path.iterdir()) == [alive.name]


def test_a_bot_is_resumed_the_way_it_was_stopped():
    # a cgroup whose freezing fails (a dying cgroup) falls back to SIGSTOP: the resume must be
    # a SIGCONT then, not a thaw of a cgroup that was never frozen
    class Unfreezable:
        can_freeze = True

        def freeze(self):
            return False

        def thaw(self):
            raise AssertionError("thawed a cgroup that was never frozen")

        def remove(self):
            return True

    p = BotProcess([sys.executable, "-c", "import time; time.sleep(600)"], ".")
    p.start()
    try:
        p._cgroup = Unfreezable()
        p.freeze()
        deadline = time.monotonic() + 30
        while process_state(p.pid) != "T" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert process_state(p.pid) == "T"
        p.thaw()
        while process_state(p.pid) == "T" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert process_state(p.pid) in ("S", "R")
    finally:
        p._cgroup = None
        p.close()


def test_follow_cpu_leaves_an_exited_bot_alone(tmp_path, monkeypatch, no_leftover_processes):
    """A bot that ended (a crash at the end of its game) is followed no more: the pid pinned
    would be its program's, which inside the sandbox nothing keeps from going to another
    process (and `follow` pins whatever process has it)."""
    from arena import affinity

    pinned: list[tuple[int, int]] = []
    monkeypatch.setattr(affinity, "follow", lambda pid, cpu: pinned.append((pid, cpu)) or True)
    p = bot("import sys; sys.stdin.readline()", tmp_path)
    try:
        p.follow_cpu(0)
        assert pinned == [(p.pid, 0)]
        p.send("bye", time.monotonic() + 5)
        assert p.wait_exit(30) is not None
        p.follow_cpu(1)
        assert pinned == [(p.pid, 0)]
    finally:
        p.close()
