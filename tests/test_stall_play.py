"""A bot that holds one of its pipes' locks (splice() waiting with it held) made the arena's
read or write of that pipe wait in the kernel, past every deadline, Ctrl-C and SIGKILL (hostile
review): the stall watch ends such a bot, and the game goes on as a forfeit."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from arena.stallwatch import StallWatch
from tests.conftest import ROOT

SPLICER = ROOT / "tests" / "bots_hostile" / "splicer.py"


def test_the_watch_ends_the_calls_that_last_too_long_once():
    now = [0.0]
    watch = StallWatch(limit_s=2.0, clock=lambda: now[0])
    killed: list[str] = []
    slow = watch.begin(lambda: killed.append("slow"))
    now[0] = 1.0
    quick = watch.begin(lambda: killed.append("quick"))
    watch.end(quick)
    assert watch.overdue() == []
    now[0] = 2.5
    for kill in watch.overdue():
        kill()
    assert killed == ["slow"] and watch.overdue() == []
    watch.end(slow)  # the call returned after its bot was ended: nothing left to do


@pytest.mark.parametrize("mode", ["stdout", "stdin"])
def test_a_bot_holding_its_pipes_lock_is_ended_and_forfeits(mode, no_leftover_processes):
    done = subprocess.run(
        [sys.executable, "-m", "arena", "play", f"{SPLICER} {mode}", "random", "-n", "2",
         "--move-ms", "500", "--sandbox", "off"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("g000")]
    assert len(lines) == 2, done.stdout
    assert all("random wins" in line for line in lines), done.stdout
    # Without the watch the match never ended (the timeout above): stdout, the read of its
    # hello answer (or of its next output) waits on the lock; stdin, the turn or quit line.
    # Which read or write meets the lock is a race: the game is lost on time or as killed
    assert all("timeout" in line or "held a pipe of its own locked" in line
               for line in lines), done.stdout
