"""Failures that are nobody's fault in the stored games: a worker process killed or stopped
(its game is played again, on a new worker), and pairings whose bots never start."""

from __future__ import annotations

import os
import shutil
import signal
import time

import pytest
from tournament_helpers import PROJECT, processes_matching, run_cli, stored_ids, write_toml

from arena.botspec import resolve_bot
from arena.game import parse_variant
from arena.referee import TimeControl
from arena.tournament.executor import OutcomeKind, WorkerSetup
from arena.tournament.process_executor import ProcessExecutor
from arena.tournament.schedule import ScheduledGame

MISBEHAVE = PROJECT / "tests" / "bots_misbehaving" / "misbehave.py"


def game(game_id: str, first: str, second: str) -> ScheduledGame:
    return ScheduledGame(game_id, "p" + game_id, 0, parse_variant("classic:5x4"), first, second)


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as handle:
        return int(handle.read().rpartition(")")[2].split()[1])


def collect(executor, until, timeout=60.0) -> list:
    """Outcomes from `executor.results` (which is also when it checks its workers)."""
    deadline = time.monotonic() + timeout
    seen: list = []
    while not until(seen):
        assert time.monotonic() < deadline, f"not reached within {timeout} s: {seen}"
        seen += executor.results(timeout=0.05)
    return seen


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSTOP])
def test_a_killed_or_stopped_worker_is_replaced_and_its_game_comes_back(tmp_path, sig):
    script = tmp_path / "hang_bot.py"  # answers the handshake, then never moves nor reads
    shutil.copy(MISBEHAVE, script)
    specs = {"hang": resolve_bot(str(script), args=("never",), name="hang"),
             "r1": resolve_bot("random", args=("--seed", "1"), name="r1"),
             "r2": resolve_bot("random", args=("--seed", "2"), name="r2")}
    setup = WorkerSetup(specs, TimeControl(move_ms=600_000), False, tmp_path / "logs")
    executor = ProcessExecutor(setup, workers=1)
    try:
        executor.submit(game("stuck", "hang", "r1"))
        collect(executor, lambda _: processes_matching(str(script)))
        [bot] = processes_matching(str(script))
        worker = parent_of(bot)
        executor.results(timeout=0.05)  # one check of the workers while the bot runs
        os.kill(worker, sig)
        [lost] = collect(executor, lambda seen: seen)
        assert lost.kind is OutcomeKind.LOST and lost.game.game_id == "stuck"
        why = "stopped by a signal" if sig == signal.SIGSTOP else "exited (killed by SIGKILL)"
        assert lost.detail == f"worker process {worker} {why}"
        # the replacement plays the next game; the dead worker's bots are gone
        following = game("next", "r1", "r2")
        executor.submit(following)
        [done] = collect(executor, lambda seen: seen)
        assert done.kind is OutcomeKind.DONE
        assert done.game is following  # the submitted game, not a copy that crossed a pipe
        assert processes_matching(str(script)) == []
    finally:
        executor.close()
    assert processes_matching(str(script)) == []


def test_a_pairing_that_never_starts_stops_being_replayed(tmp_path):
    script = tmp_path / "dead_bot.py"
    shutil.copy(MISBEHAVE, script)
    path = write_toml(tmp_path / "v.toml", f"""
        name = "v"
        variants = ["classic:5x4"]
        games = 8
        concurrency = 1
        [[bots]]
        path = "{script}"
        name = "d1"
        args = ["crash_start"]
        [[bots]]
        path = "{script}"
        name = "d2"
        args = ["crash_start"]
        """)
    first = run_cli("run", str(path), "-q", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    out = first.stdout
    assert "Done: 0 of 8 games (0 played now)." in out
    assert "d1 and d2 both failed to start in 3 games" in out
    voids = len(stored_ids(tmp_path / "results" / "v"))
    assert voids in (3, 4)  # the game already queued behind the third may end void too
    # the void games are not replayed either: the pairing is stopped (it said "played again")
    assert f"{voids} void (neither bot started): not rated, and not played again" in out
    assert "played again next run" not in out
    assert f"{8 - voids} skipped: both bots failed to start too often." in out
    again = run_cli("run", str(path), "-q", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "Nothing to play: 0 of 8 games done, 8 skipped." in again.stdout
    assert "their 8 remaining game(s) are skipped" in again.stdout
