"""Failures that are nobody's fault in the stored games: a worker process killed or stopped
(its game is played again, on a new worker), and a bot that never starts (the run stops
before storing any of its games)."""

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


def test_a_bot_that_cannot_start_stops_the_run_and_runs_again_once_fixed(tmp_path):
    # a typo in `args`: without the stop it played its schedule as crash forfeits, and the
    # fixed bot then differed from its stored games', so resuming needed --fresh
    body = """
        name = "typo"
        variants = ["classic:5x4"]
        games = 4
        concurrency = 1
        [[bots]]
        path = "random"
        name = "r"
        [[bots]]
        path = "greedy"
        name = "g"
        [[bots]]
        path = "random"
        name = "t"
        args = ["--sed", "3"]
        """
    path = write_toml(tmp_path / "typo.toml", body)
    first = run_cli("run", str(path), "-q", cwd=tmp_path)
    assert first.returncode == 1 and "Traceback" not in first.stderr
    assert (f"bot 't' ({path}:12) did not start in 2 games: crash: during the handshake: bot "
            "exited with code 2; stderr: bot.py: error: unrecognized argument: --sed") \
        in first.stderr
    assert "None of its games of this run is stored" in first.stderr
    assert "Run the same command again to resume" in first.stderr
    stored = stored_ids(tmp_path / "results" / "typo")
    assert stored  # r - g played, in order: the schedule starts with their pair
    write_toml(path, body.replace("--sed", "--seed"))
    again = run_cli("run", str(path), "-q", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"Done: 12 of 12 games ({12 - len(stored)} played now)." in again.stdout
    # or, as the organiser chooses, the run goes on and the bot forfeits (review of the diff)
    forfeit = write_toml(tmp_path / "goes_on.toml", 'start_failure = "forfeit"\n'
                         + body.replace('name = "typo"', 'name = "goes_on"'))
    on = run_cli("run", str(forfeit), "-q", cwd=tmp_path)
    assert on.returncode == 0, on.stderr
    assert "Done: 12 of 12 games (12 played now)" in on.stdout and "8 forfeits" in on.stdout


FLAKY_BOT = """
import fcntl, os, sys, time
# counted under a lock: the two workers start it within a few ms of each other, and two starts
# that both read the counter before either wrote it both played (the test then saw 1 start)
counter = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(counter, fcntl.LOCK_EX)
starts = int(os.read(counter, 32) or 0) + 1
os.pwrite(counter, str(starts).encode(), 0)
os.close(counter)
if starts > 1:
    sys.exit(2)  # every later start fails: the first process is kept for its worker's games
from arena.sdk import run_bot
def choose(turn):
    time.sleep(0.03)  # its first game ends well after the other worker's failed start
    return turn.game.legal_moves()[0]
run_bot(choose, name="flaky")
"""


def test_a_bot_that_started_once_is_not_stopped_by_quicker_failures(tmp_path):
    # the start that worked comes back only with its game, after the other worker's failed
    # starts: the run stopped a bot that had started (review of the diff)
    bot = tmp_path / "flaky.py"
    bot.write_text(FLAKY_BOT)
    path = write_toml(tmp_path / "flaky.toml", f"""
        name = "flaky"
        variants = ["classic:5x4"]
        games = 4
        concurrency = 2
        sandbox = "off"
        [[bots]]
        path = "{bot}"
        args = ["{tmp_path / 'starts'}"]
        [[bots]]
        path = "random"
        [[bots]]
        path = "greedy"
        """)
    done = run_cli("run", str(path), "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Done: 12 of 12 games" in done.stdout
    assert int((tmp_path / "starts").read_text()) >= 2  # a start did fail, and was a forfeit


def test_file_stamps_see_a_modified_or_removed_file_not_an_added_or_touched_one(tmp_path):
    from arena.botspec import file_stamps, first_changed

    bot, helper = tmp_path / "bot.py", tmp_path / "helper.py"
    bot.write_text("print('hello')\n")
    helper.write_text("x = 1\n")
    stamps = file_stamps([bot, helper])
    (tmp_path / "log.txt").write_text("a bot's own log\n")
    assert first_changed(stamps) is None
    os.utime(bot, ns=(1, 1))  # `touch`, or a checkout of the same content: no change
    assert first_changed(stamps) is None
    bot.write_text("print('hello, world')\n")
    assert first_changed(stamps) == f"{bot} was modified"
    helper.unlink()
    assert first_changed(file_stamps([tmp_path / "log.txt", helper])) is None
    assert first_changed(stamps) == f"{bot} was modified"
    assert first_changed(stamps[1:]) == f"{helper} was removed"


def test_a_bot_changed_during_the_run_stops_it_before_its_new_games_are_stored(tmp_path):
    """A `git pull` into a bot's folder mid-run: its next process ran the new code while its
    games were stored under the old program hash, and the run ended with exit 0 (operator
    review). Now a process started from changed files stops the run; its game is not stored."""
    from tournament_helpers import copy_bot, start_cli, wait_for_games, wait_no_processes

    from arena.tournament.store import load_games

    bot = copy_bot(tmp_path, "random", "rb")
    path = write_toml(tmp_path / "t.toml", """
name = "t"
variants = ["classic:5x4"]
games = 40
restart = "every-game"
concurrency = 1
[[bots]]
path = "rb"
name = "a"
[[bots]]
path = "greedy"
""")
    results = tmp_path / "results" / "t"
    proc = start_cli("run", str(path), cwd=tmp_path)
    wait_for_games(results, 3, proc)
    script = next(p for p in bot.iterdir() if p.suffix == ".py")
    script.write_text(script.read_text() + "\n# changed mid-run\n")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert f"bot 'a' changed during the run ({script} was modified)" in err, err
    assert "Traceback" not in err
    stored = len(load_games(results))
    assert 3 <= stored < 40
    again = run_cli("run", str(path), cwd=tmp_path)  # the bot stays changed: refused as before
    assert again.returncode != 0 and "bot 'a' changed" in again.stderr
    assert wait_no_processes(str(bot)) == []
