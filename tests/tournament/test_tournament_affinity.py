"""`affinity = true` in a real tournament: each worker pinned to one core, round-robin over the
CPUs, and both bots of every game on their worker's core (through both executors)."""

from __future__ import annotations

import os
import re
import shutil
import time

import pytest
from tournament_helpers import PROJECT, run_cli, wait_no_processes, write_toml

from arena import affinity
from arena.game import parse_variant
from arena.tournament.config import load_config
from arena.tournament.executor import OutcomeKind, WorkerSetup
from arena.tournament.process_executor import ProcessExecutor
from arena.tournament.progress import Progress
from arena.tournament.runner import Runner
from arena.tournament.schedule import ScheduledGame
from arena.tournament.store import load_games, read_settings

CPUS = affinity.allowed_cpus()
pytestmark = pytest.mark.skipif(not CPUS, reason="no CPU affinity on this platform")

BODY = """
name = "aff"
variants = ["classic:5x4"]
games = 2
concurrency = 2
restart = "every-game"
{extra}
[time]
move_ms = 5000
[[bots]]
path = "cpus.py"
name = "a"
[[bots]]
path = "cpus.py"
name = "b"
[[bots]]
path = "cpus.py"
name = "c"
"""


def quiet(*args, **kwargs):
    return Progress(*args, quiet=True, **kwargs)


def tournament(tmp_path, extra: str):
    bot = tmp_path / "cpus.py"
    shutil.copy(PROJECT / "tests" / "bots_affinity" / "cpus.py", bot)
    return write_toml(tmp_path / "aff.toml", BODY.format(extra=extra)), bot


def allowed_list(pid: int) -> str:
    with open(f"/proc/{pid}/status") as status:
        return re.search(r"^Cpus_allowed_list:\s*(\S+)", status.read(), re.M).group(1)


def test_each_worker_process_is_pinned_to_one_core_round_robin(tmp_path):
    setup = WorkerSetup({}, None, False, tmp_path, cores=(CPUS[-1], CPUS[0]))
    executor = ProcessExecutor(setup, 3)
    try:
        # one game each, of bots the setup does not know: each comes back as an ERROR outcome,
        # which proves its worker is past its start (where it pins itself)
        for i in range(3):
            executor.submit(ScheduledGame(f"g{i}", f"p{i}", 0, parse_variant("classic"), "x", "y"))
        outcomes = []
        deadline = time.monotonic() + 60
        while len(outcomes) < 3 and time.monotonic() < deadline:
            outcomes += executor.results(timeout=1.0)
        assert [o.kind for o in outcomes] == [OutcomeKind.ERROR] * 3
        workers = sorted(executor._workers.values(), key=lambda w: w.wid)
        assert [w.core for w in workers] == [CPUS[-1], CPUS[0], CPUS[-1]]
        for worker in workers:
            assert allowed_list(worker.process.pid) == str(worker.core)
    finally:
        executor.close()


@pytest.mark.parametrize("mode", ["process", "thread"])
def test_both_bots_of_every_game_run_on_their_workers_core(tmp_path, mode):
    path, bot = tournament(tmp_path, "affinity = true")
    config = load_config(path)
    config.output = tmp_path / "out"
    result = Runner(config, mode=mode, install_signals=False, progress_factory=quiet).run()
    assert result.complete and result.played == 6
    games = load_games(config.output)
    cores = set()
    for first, second in zip(games.first_version, games.second_version, strict=True):
        assert first == second, (first, second)  # the two bots of a game share one core
        core = first.removeprefix("cpus-")
        assert core.isdigit() and int(core) in CPUS, first  # exactly one core
        cores.add(core)
    assert len(cores) <= min(2, len(CPUS))
    assert read_settings(config.output)["settings"]["affinity"] is True
    assert wait_no_processes(str(bot)) == []


def test_arena_run_without_affinity_leaves_the_bots_unpinned(tmp_path):
    path, bot = tournament(tmp_path, "")
    out = run_cli("run", str(path), "--output", str(tmp_path / "out"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    games = load_games(tmp_path / "out")
    free = f"cpus-{allowed_list(os.getpid()).replace(',', '+')}"  # every CPU we may use
    assert set(games.first_version) | set(games.second_version) == {free}
    assert read_settings(tmp_path / "out")["settings"]["affinity"] is False
    assert wait_no_processes(str(bot)) == []


@pytest.mark.skipif(len(CPUS) > 2, reason="needs more workers than CPUs")
def test_arena_run_says_when_workers_share_a_core(tmp_path):
    path, bot = tournament(tmp_path, "affinity = true")
    out = run_cli("run", str(path), "--output", str(tmp_path / "out"), "--concurrency", "3",
                  cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert f"3 workers on {len(CPUS)} CPU" in out.stdout + out.stderr
    # and that the clocks run while a game waits for a core (40 workers on 2 cores: no word)
    assert f"note: concurrency 3 on {len(CPUS)} core(s): games share the cores" in \
        out.stdout + out.stderr
    games = load_games(tmp_path / "out")
    assert (games.first_version == games.second_version).all()
    assert wait_no_processes(str(bot)) == []
