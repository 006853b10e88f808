"""Process trees: stat parsing, the cheap leftover check, exit waits without reaping, forks."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from arena import proctree
from arena.botspec import BotSpec, resolve_bot
from arena.game import parse_variant
from arena.process import BotProcess
from arena.referee import Player, TimeControl, play_game
from tests.conftest import MISBEHAVE, pid_alive


def _state(pid: int) -> str | None:
    st = proctree.read_stat(pid)
    return None if st is None else st.state


def test_read_stat_of_this_process():
    st = proctree.read_stat(os.getpid())
    assert st.ppid == os.getppid() and st.pgid == os.getpgid(0) and st.sid == os.getsid(0)
    assert st.state == "R" and st.cpu_ms > 0
    assert proctree.read_stat(2**22 + 1) is None


def test_exit_watch_waits_without_reaping(tmp_path):
    for use_pidfd in (True, False):
        child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.readline()"],
                                 stdin=subprocess.PIPE)
        watch = proctree.ExitWatch(child.pid)
        if not use_pidfd:  # the fallback: a thread blocked in waitid(WNOWAIT)
            watch.close()
        try:
            assert watch.wait(0.05) is None and watch.poll() is None
            child.stdin.close()
            assert watch.wait(60) == 0
            assert _state(child.pid) == "Z"  # not reaped: the pid stays taken
        finally:
            watch.close()
            child.wait()
        assert _state(child.pid) is None


def test_cheap_leftover_check_sees_a_grandchild_in_its_own_session(tmp_path):
    proctree.make_subreaper()
    clean = BotProcess([sys.executable, "-c", "pass"], tmp_path)
    clean.start()
    pidfile = tmp_path / "gc.pid"
    leaver = BotProcess([sys.executable, str(MISBEHAVE), "grandchild", "--pidfile",
                         str(pidfile)], MISBEHAVE.parent)
    leaver.start()
    try:
        assert clean.wait_exit(60) == 0
        assert not proctree.may_have_leftovers(clean.pid, clean.token.encode())
        deadline = time.monotonic() + 60
        while not pidfile.exists():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        grandchild = int(pidfile.read_text())
        # re-parented to us (subreaper), its own session, our bot's token: found cheaply
        assert proctree.read_stat(grandchild).ppid == os.getpid()
        assert proctree.may_have_leftovers(leaver.pid, leaver.token.encode())
        assert grandchild in proctree.owned_pids(leaver.pid, leaver.token.encode())
    finally:
        clean.close()
        leaver.close()
    assert not pid_alive(grandchild) and _state(grandchild) is None  # killed and reaped


def test_die_with_parent_sets_the_parent_death_signal():
    code = textwrap.dedent("""
        import ctypes, signal
        from arena.proctree import die_with_parent
        assert die_with_parent(signal.SIGTERM)
        value = ctypes.c_int()
        ctypes.CDLL(None).prctl(2, ctypes.byref(value), 0, 0, 0)  # PR_GET_PDEATHSIG
        print(value.value)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(Path.cwd())})
    assert int(out.stdout) == 15


def _child_plays_grandchild_bot(pidfile: str, out) -> None:
    # In the forked child: nothing of the parent's live bots, not a subreaper yet.
    clean = len(proctree.LIVE_BOTS) == 0 and not proctree.is_subreaper()
    spec = BotSpec("gc", [sys.executable, str(MISBEHAVE), "grandchild", "--pidfile", pidfile],
                   MISBEHAVE.parent, "h")
    with Player(spec) as a, Player(resolve_bot("random")) as b:
        play_game(parse_variant("classic"), a, b, TimeControl(move_ms=5000, startup_ms=20000))
    out.send((clean, proctree.is_subreaper()))
    out.close()


def test_forked_worker_starts_clean_and_is_its_own_subreaper(tmp_path, no_leftover_processes):
    holder = BotProcess([sys.executable, "-c", "import sys\nsys.stdin.readline()\n"], tmp_path)
    holder.start()
    try:
        assert proctree.is_subreaper() and holder.pid in proctree.LIVE_BOTS
        ctx = multiprocessing.get_context("fork")
        receive, send = ctx.Pipe(duplex=False)
        pidfile = str(tmp_path / "grandchild.pid")
        child = ctx.Process(target=_child_plays_grandchild_bot, args=(pidfile, send))
        child.start()
        send.close()
        assert receive.poll(120), "the child did not finish its game"
        clean, subreaper = receive.recv()
        child.join(60)
        assert child.exitcode == 0
        assert clean and subreaper
        grandchild = int(Path(pidfile).read_text())
        # killed and reaped by the child (its subreaper), never handed to us
        assert _state(grandchild) is None
    finally:
        holder.close()
    assert holder.pid not in proctree.LIVE_BOTS


def test_clean_close_does_not_scan_proc(tmp_path, monkeypatch, no_leftover_processes):
    scans: list[int] = []
    real = proctree.owned_pids

    def counted(bot_pid: int, token: bytes) -> set[int]:
        scans.append(bot_pid)
        return real(bot_pid, token)

    monkeypatch.setattr(proctree, "owned_pids", counted)
    quits = BotProcess([sys.executable, "-c", "import sys; sys.stdin.readline()"], tmp_path)
    quits.start()
    quits.close()  # exits on the quit line, nothing else of it exists: no scan
    assert scans == [] and quits.poll() == 0
    child = BotProcess([sys.executable, "-c", textwrap.dedent("""
        import subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(100)"])
        print("ready", flush=True)
        sys.stdin.readline()
    """)], tmp_path)
    child.start()
    assert child.read_line(time.monotonic() + 60) == "ready"
    child.close()  # its child is left over after it quits: found, killed and reaped
    assert scans and set(scans) == {child.pid}


def test_all_exited_counts_a_zombie_and_waits_for_a_runner():
    done = subprocess.Popen(["true"])
    running = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.readline()"],
                               stdin=subprocess.PIPE)
    try:
        proctree.ExitWatch(done.pid).wait(30)  # a zombie now: exited, not reaped
        assert _state(done.pid) == "Z"
        assert proctree.all_exited([done.pid], 5.0)
        assert not proctree.all_exited([done.pid, running.pid], 0.05)
    finally:
        running.stdin.close()
        running.wait(30)
        done.wait(30)
    assert proctree.all_exited([done.pid, running.pid], 5.0)  # reaped: gone
