"""`arena play --sandbox` end to end: a hostile bot through the real referee, sandboxed and not."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from arena import sandbox
from tests.conftest import ROOT, processes_matching

HOSTILE = ROOT / "tests" / "bots_hostile"
needs_bwrap = pytest.mark.skipif(not sandbox.probe().available,
                                 reason=f"sandbox unavailable: {sandbox.probe().reason}")


def play(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", "play", *args], capture_output=True,
                          text=True, timeout=180, cwd=ROOT,
                          env=env or {**os.environ, "PYTHONPATH": str(ROOT)})


@needs_bwrap
def test_a_bot_over_the_memory_limit_forfeits_with_a_readable_detail(no_leftover_processes):
    # 100 GiB: beyond the address-space backstop (64 GiB) where a cgroup caps real memory
    boxed = play(str(HOSTILE), "random", "--args-a", "alloc 100", "-n", "1", "--json",
                 "--sandbox", "on")
    assert boxed.returncode == 0, boxed.stderr
    game = json.loads(boxed.stdout.splitlines()[0])
    assert (game["reason"], game["forfeit_by"]) == ("crash", 1)
    assert "memory limit" in game["detail"], game["detail"]
    plain = play(str(HOSTILE), "random", "--args-a", "alloc 100", "-n", "1", "--json",
                 "--sandbox", "off")
    game = json.loads(plain.stdout.splitlines()[0])
    assert game["reason"] != "crash" and game["forfeit_by"] is None, game
    # --limit reaches the bots, as a tournament's [limits] does (a JVM needing memory_mb = 0
    # could not be tried outside a tournament: bot author review)
    unlimited = play(str(HOSTILE), "random", "--args-a", "alloc 100", "-n", "1", "--json",
                     "--sandbox", "on", "--limit", "memory_mb=0")
    game = json.loads(unlimited.stdout.splitlines()[0])
    assert game["reason"] != "crash" and game["forfeit_by"] is None, game


@needs_bwrap
def test_a_bot_cannot_read_its_opponents_source(tmp_path, no_leftover_processes):
    secret = ROOT / "bots" / "greedy" / "bot.py"
    outcome = {}
    for mode in ("on", "off"):
        logs = tmp_path / mode
        done = play(str(HOSTILE), "greedy", "--args-a", f"read {secret}", "-n", "1",
                    "--log-dir", str(logs), "--sandbox", mode)
        assert done.returncode == 0, done.stderr
        log = next(logs.glob("*-hostile.log")).read_text()
        outcome[mode] = log.splitlines()[0]
    assert outcome["on"] == "hostile read: denied No such file or directory"
    assert outcome["off"] == f"hostile read: ok {secret.stat().st_size} bytes"


def test_sandbox_on_without_bwrap_refuses_in_one_line():
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": "/nonexistent"}
    done = play("random", "random", "--sandbox", "on", env=env)
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert "sandbox is required" in lines[0] and "apt-get install bubblewrap" in lines[0]


def test_sandbox_auto_without_bwrap_says_so_once_and_plays():
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": "/nonexistent"}
    done = play("random", "random", "-n", "2", "--sandbox", "auto", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("bots run without the sandbox") == 1
    assert "random vs random#2: W" in done.stdout


# On its turn the bot becomes a sleeper with MARKER-turn in its argv: the test finds it in /proc.
THINKING_BOT = """
import os, sys
for line in sys.stdin:
    word = line.split(" ", 1)[0].strip()
    if word == "hello":
        print("hello name=thinker", flush=True)
    elif word == "turn":
        code = "import time; time.sleep(600)"
        os.execv(sys.executable, [sys.executable, "-c", code, sys.argv[1] + "-turn"])
"""


@needs_bwrap
def test_sigterm_mid_move_ends_the_sandboxed_bots(tmp_path):
    bot = tmp_path / "thinker.py"
    bot.write_text(THINKING_BOT)
    marker = f"thinker-{os.getpid()}-{id(tmp_path)}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "play", str(bot), "random", "--move-ms", "600000",
         "--args-a", marker, "--sandbox", "on"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        deadline = time.monotonic() + 60
        while not processes_matching(f"{marker}-turn"):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the bot never got its turn"
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err
    assert processes_matching(marker) == []  # the sandbox and the bot in it are gone


@needs_bwrap
def test_a_sandboxed_close_ends_a_daemon_without_scanning_proc(monkeypatch,
                                                              no_leftover_processes):
    # The bot leaves a double-forked, setsid() daemon, then quits when told. Its pid namespace
    # dies with the namespace's init, which takes the daemon along: the close needs no /proc scan
    # (the scans were most of a sandboxed close's cost, issue 13), and nothing is left after it.
    from arena import proctree
    from arena.process import BotProcess

    scans: list[int] = []
    for name in ("owned_pids", "may_have_leftovers"):
        real = getattr(proctree, name)
        monkeypatch.setattr(proctree, name,
                            lambda *a, real=real: scans.append(1) or real(*a))
    marker = f"daemon-{os.getpid()}-{time.monotonic_ns()}"
    bot = BotProcess([sys.executable, str(HOSTILE / "hostile.py"), "daemon", marker], HOSTILE,
                     sandbox_policy=sandbox.SandboxPolicy("on"))
    bot.start()
    try:
        bot.send("hello protocol=fiar version=1\n")
        assert bot.read_line(time.monotonic() + 60).startswith("hello")
        assert "ok left a daemon" in bot.stderr_last_line(wait=5)
    finally:
        bot.close()
    assert scans == []
    assert processes_matching(marker) == []


@needs_bwrap
def test_a_command_not_found_in_the_sandbox_is_hinted_at(tmp_path, no_leftover_processes):
    # `command = ["python3", "bot.py"]` with python3 a pyenv shim ended "exited with code 127"
    # and the shim's own words, nothing about what the sandbox shows (newcomer review)
    bot = tmp_path / "shim"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "shim"\ncommand = ["sh", "run.sh"]\n')
    (bot / "run.sh").write_text("echo 'pyenv: not found' >&2\nexit 127\n")
    done = play(str(bot), "random", "--games", "2", "--sandbox", "on")
    assert done.stderr.count(f"hint: {sandbox.NOT_FOUND_HINT}") == 1, done.stderr
    assert "exited with code 127; stderr: pyenv: not found" in done.stdout + done.stderr
