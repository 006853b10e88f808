"""Tournaments on a real Dask cluster (issue 12): a scheduler and two one-thread workers on
127.0.0.1, started once for the module; `arena run --cluster` against them, compared with a local
run, with a worker killed, with the coordinator killed, and with bots that must be refused or
cannot start on the workers."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.tournament.config import load_config
from arena.tournament.dask_executor import (
    ClusterError,
    DaskExecutor,
    RemoteSetup,
    play_remote,
)
from arena.tournament.executor import OutcomeKind, WorkerSetup
from arena.tournament.progress import Progress
from arena.tournament.runner import Runner
from arena.tournament.schedule import build_schedule
from arena.tournament.snapshot import Snapshot, take_snapshot
from tests.tournament.tournament_helpers import (
    PROJECT,
    copy_bot,
    run_cli,
    start_cli,
    stored_ids,
    wait_for_games,
    wait_no_processes,
    write_toml,
)

distributed = pytest.importorskip(
    "distributed", reason="the cluster extra is not installed (pip install -e '.[cluster]')")

START_TIMEOUT = 60.0


class Cluster:
    """A `dask scheduler` and `dask worker --nthreads 1` processes, each in its own session."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.procs: list[subprocess.Popen] = []
        self.workers: dict[str, subprocess.Popen] = {}
        # workers see the project but not the test's own programs (see test_missing_interpreter)
        self.env = {**os.environ, "PYTHONPATH": str(PROJECT), "PATH": "/usr/bin:/bin"}
        file = folder / "scheduler.json"
        self._spawn("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                    "--scheduler-file", str(file))
        deadline = time.monotonic() + START_TIMEOUT
        while not file.is_file() or not file.read_text().strip().endswith("}"):
            assert time.monotonic() < deadline, "the Dask scheduler did not start"
            assert self.procs[0].poll() is None, "the Dask scheduler exited"
            time.sleep(0.05)
        self.address = json.loads(file.read_text())["address"]
        self.client = distributed.Client(self.address, timeout=START_TIMEOUT)

    def _spawn(self, *args: str) -> subprocess.Popen:
        log = open(self.folder / f"{args[0]}-{len(self.procs)}.log", "wb")
        proc = subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=log, stderr=log,
                                env=self.env, cwd=self.folder, start_new_session=True)
        log.close()
        self.procs.append(proc)
        return proc

    def add_worker(self) -> str:
        """Start one worker; returns its address once the scheduler knows it."""
        name = f"w{len(self.procs)}"
        proc = self._spawn("worker", self.address, "--nthreads", "1", "--no-nanny",
                           "--host", "127.0.0.1", "--no-dashboard", "--name", name,
                           "--local-directory", str(self.folder / name))
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            by_name = {info["name"]: address for address, info
                       in self.client.scheduler_info()["workers"].items()}
            if name in by_name:
                self.workers[by_name[name]] = proc
                return by_name[name]
            assert proc.poll() is None, f"dask worker {name} exited"
            assert time.monotonic() < deadline, f"dask worker {name} did not join"
            time.sleep(0.05)

    def kill_worker(self, address: str) -> None:
        proc = self.workers.pop(address)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)

    def close(self) -> None:
        self.client.close()
        for proc in reversed(self.procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=5)  # a worker still closing bots is not waited for
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    running = Cluster(tmp_path_factory.mktemp("dask"))
    try:
        running.add_worker()
        running.add_worker()
        yield running
    finally:
        running.close()


def tournament(folder: Path, *, bots: str = "", games: int = 2, extra: str = "") -> Path:
    """Three seeded bots restarted every game: each game's moves depend only on the schedule."""
    body = bots or """
        [[bots]]
        path = "random"
        name = "r1"
        args = ["--seed", "1"]
        [[bots]]
        path = "random"
        name = "r2"
        args = ["--seed", "2"]
        [[bots]]
        path = "greedy"
        args = ["--seed", "3"]
    """
    return write_toml(folder / "cup.toml", f"""
        name = "cup"
        variants = ["classic:5x4"]
        games = {games}
        seed = 7
        restart = "every-game"
        {extra}
        [time]
        move_ms = 2000
        startup_ms = 20000
    """ + body)


def stored(results: Path, columns: str = "game_id, first, second, variant, result, moves"
           ) -> list[tuple]:
    conn = sqlite3.connect(results / "games.db")
    try:
        return sorted(conn.execute(f"SELECT {columns} FROM games"))
    finally:
        conn.close()


def stored_workers(results: Path) -> set[str] | None:
    conn = sqlite3.connect(results / "games.db")
    try:
        if "worker" not in {r[1] for r in conn.execute("PRAGMA table_info(games)")}:
            return None
        return {r[0] for r in conn.execute("SELECT worker FROM games")}
    finally:
        conn.close()


def test_cluster_run_plays_the_local_schedule(cluster: Cluster, tmp_path: Path) -> None:
    file = tournament(tmp_path)
    local = run_cli("run", str(file), "-q", "-j", "1", "-o", str(tmp_path / "local"), cwd=tmp_path)
    assert local.returncode == 0, local.stderr
    remote = run_cli("run", str(file), "-q", "--cluster", cluster.address, "-o",
                     str(tmp_path / "remote"), cwd=tmp_path)
    assert remote.returncode == 0, remote.stderr
    assert "Done: 6 of 6 games" in remote.stdout
    assert stored(tmp_path / "remote") == stored(tmp_path / "local")
    assert len(stored(tmp_path / "remote")) == 6
    assert wait_no_processes("/arena-bots/") == [], "bots left running on the workers"


def test_an_interrupted_cluster_run_stops_cleanly_and_resumes(cluster: Cluster,
                                                              tmp_path: Path) -> None:
    file = tournament(tmp_path, games=4)
    results = tmp_path / "results" / "cup"
    proc = start_cli("run", str(file), "-q", "--cluster", cluster.address, cwd=tmp_path)
    try:
        wait_for_games(results, 1, proc, timeout=START_TIMEOUT)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert f"arena run {file} --cluster {cluster.address}" in err  # the resume hint
    assert wait_no_processes("/arena-bots/") == [], "bots left running on the workers"
    again = run_cli("run", str(file), "-q", "--cluster", cluster.address, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    ids = stored_ids(results)
    assert len(ids) == len(set(ids)) == 12


def test_each_game_records_its_worker(cluster: Cluster, tmp_path: Path) -> None:
    file = tournament(tmp_path, extra=f'cluster = "{cluster.address}"')
    done = run_cli("run", str(file), "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    workers = stored_workers(tmp_path / "results" / "cup")
    assert workers and workers <= set(cluster.workers)


def test_the_executor_returns_one_outcome_per_game_naming_its_worker(cluster: Cluster,
                                                                     tmp_path: Path) -> None:
    talker = copy_bot(tmp_path, "random", "talker")  # its stderr log must reach the coordinator
    script = talker / "bot.py"
    script.write_text("import sys\nprint('talker here', file=sys.stderr, flush=True)\n"
                      + script.read_text())
    config = load_config(tournament(tmp_path, bots=f"""
        [[bots]]
        path = "{talker}"
        name = "talker"
        [[bots]]
        path = "greedy"
    """))
    games = build_schedule(config)
    setup = WorkerSetup.from_config(config, tmp_path / "logs")
    outcomes = []
    with DaskExecutor(setup, 1, cluster=cluster.address) as executor:
        assert executor.slots == 2  # the cluster's threads, whatever concurrency says
        for game in games:
            executor.submit(game)
        deadline = time.monotonic() + START_TIMEOUT
        while len(outcomes) < len(games) and time.monotonic() < deadline:
            outcomes += executor.results(timeout=0.5)
    assert sorted(o.game.game_id for o in outcomes) == sorted(g.game_id for g in games)
    assert {o.kind for o in outcomes} == {OutcomeKind.DONE}
    assert {o.row["worker"] for o in outcomes} <= set(cluster.workers)
    logs = [p for p in (tmp_path / "logs").iterdir() if "talker" in p.name]
    assert len(logs) == len(games) and all(b"talker here" in p.read_bytes() for p in logs)


def test_a_league_plays_on_the_cluster_and_new_submissions_join_it(cluster: Cluster,
                                                                   tmp_path: Path) -> None:
    """`league run --cluster`: every bot joins the workers' field through `change_field` (a
    league starts with none), travelling as a snapshot; a version submitted between runs plays
    its placement games there too, and each game names its worker."""
    league = tmp_path / "league"
    for args in (("init", str(league), "--variants", "classic:5x4", "--move-ms", "2000"),
                 ("submit", str(league), "random"), ("submit", str(league), "greedy")):
        done = run_cli("league", *args, cwd=tmp_path)
        assert done.returncode == 0, done.stderr

    def league_games() -> list[tuple[str, str, str | None]]:
        with sqlite3.connect(f"file:{league / 'games.db'}?mode=ro", uri=True) as conn:
            return conn.execute("SELECT first, second, worker FROM games ORDER BY seq").fetchall()

    run = run_cli("league", "run", str(league), "--cluster", cluster.address, "--until", "4",
                  cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    first = league_games()
    assert len(first) >= 4 and {w for _, _, w in first} <= set(cluster.workers)
    done = run_cli("league", "submit", str(league), "random", "--name", "newcomer", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run = run_cli("league", "run", str(league), "--cluster", cluster.address, "--until", "2",
                  cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    later = league_games()[len(first):]
    assert later and all("newcomer@1" in (a, b) for a, b, _ in later)  # placement first
    assert {w for _, _, w in later} <= set(cluster.workers)
    bad = run_cli("league", "run", str(league), "--cluster", "tcp://nowhere", cwd=tmp_path)
    assert bad.returncode != 0 and "is not a scheduler address" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_a_worker_killed_mid_tournament_costs_no_game(cluster: Cluster, tmp_path: Path) -> None:
    victim = cluster.add_worker()
    file = tournament(tmp_path, games=4)
    total = len(build_schedule(load_config(file)))
    proc = start_cli("run", str(file), "-q", "--cluster", cluster.address, cwd=tmp_path)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not any(cluster.client.processing().get(victim, ())):
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "no game ever ran on the third worker"
            time.sleep(0.02)
        cluster.kill_worker(victim)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    ids = stored_ids(tmp_path / "results" / "cup")
    assert len(ids) == len(set(ids)) == total
    assert {g.game_id for g in build_schedule(load_config(file))} == set(ids)


def test_coordinator_killed_then_resumed(cluster: Cluster, tmp_path: Path) -> None:
    file = tournament(tmp_path, games=4)
    results = tmp_path / "results" / "cup"
    proc = start_cli("run", str(file), "-q", "--cluster", cluster.address, cwd=tmp_path)
    try:
        wait_for_games(results, 2, proc, timeout=START_TIMEOUT)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    before = set(stored_ids(results))
    again = run_cli("run", str(file), "-q", "--cluster", cluster.address, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    ids = stored_ids(results)
    schedule = {g.game_id for g in build_schedule(load_config(file))}
    assert len(ids) == len(set(ids)) == len(schedule) and set(ids) == schedule
    assert before < set(ids)


def test_local_n_starts_its_own_cluster(tmp_path: Path) -> None:
    """Through the `arena` script itself, as users run it: Dask's worker processes import the
    script as their main module, and it ran the whole command again in each of them (a
    traceback: 'Nanny failed to start') until it had a __name__ guard."""
    file = tournament(tmp_path, extra='cluster = "local:2"')
    script = Path(__file__).resolve().parents[2] / "bin" / "arena"
    done = subprocess.run([sys.executable, str(script), "run", str(file), "-q"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Done: 6 of 6 games" in done.stdout
    assert len(stored(tmp_path / "results" / "cup")) == 6
    assert wait_no_processes("/arena-bots/") == [], "bots left running"


def test_a_bot_changed_since_the_file_was_read_is_refused(tmp_path: Path) -> None:
    bot = copy_bot(tmp_path, "random", "changing")
    config = load_config(tournament(tmp_path, bots=f"""
        [[bots]]
        path = "{bot}"
        [[bots]]
        path = "greedy"
    """))
    (bot / "bot.py").write_text((bot / "bot.py").read_text() + "\n# changed\n")
    config.cluster = "tcp://127.0.0.1:9"  # never reached: the snapshot is refused first
    runner = Runner(config, install_signals=False,
                    progress_factory=lambda *a, **k: Progress(*a, quiet=True, **k))
    with pytest.raises(ClusterError, match=r"'random' changed since .* refused"):
        runner.run()
    assert stored_ids(Path(config.output)) == []


def test_a_snapshot_that_does_not_match_its_hash_is_refused_by_the_worker(
        cluster: Cluster, tmp_path: Path) -> None:
    config = load_config(tournament(tmp_path))
    game = build_schedule(config)[0]
    taken = {b.name: take_snapshot(b.spec) for b in config.bots}
    remote = RemoteSetup.of("refusal-test", {n: t[1] for n, t in taken.items()},
                            WorkerSetup.from_config(config, tmp_path / "logs"))
    good = taken[game.second][0]
    honest = taken[game.first][0]
    # a digest no worker has unpacked yet (a known one is served from the worker's verified
    # copy), with the files of another bot
    forged = Snapshot("0123456789abcdef", honest.kind, good.data)
    result = cluster.client.submit(play_remote, game, remote, forged, good,
                                   pure=False).result(timeout=120)
    assert result.outcome.kind is OutcomeKind.ERROR
    assert "snapshot 0123456789abcdef does not match its hash" in result.outcome.detail
    assert "refused" in result.outcome.detail


def test_a_worker_without_the_bots_interpreter_voids_the_game(cluster: Cluster,
                                                              tmp_path: Path) -> None:
    tools = tmp_path / "tools"  # on the coordinator's PATH only, not on the workers'
    tools.mkdir()
    interp = tools / "arena-test-python"
    interp.write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    interp.chmod(0o755)
    bot = copy_bot(tmp_path, "random", "needs-interp")
    manifest = (bot / "bot.toml").read_text().replace('command = "bot.py"',
                                                      'command = "arena-test-python bot.py"')
    (bot / "bot.toml").write_text(manifest)
    file = tournament(tmp_path, games=2, bots=f"""
        [[bots]]
        path = "{bot}"
        [[bots]]
        path = "greedy"
    """)
    env = {**os.environ, "PATH": f"{tools}:{os.environ['PATH']}"}
    done = run_cli("run", str(file), "-q", "--cluster", cluster.address, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "2 void" in done.stdout
    rows = stored(tmp_path / "results" / "cup", "result, reason, forfeit_by, detail")
    assert len(rows) == 2
    for result, reason, forfeit_by, detail in rows:
        assert (result, reason, forfeit_by) == (None, "void", None)
        assert "'arena-test-python', which is not on this machine's PATH" in detail


def test_cluster_option_is_checked_before_anything_runs(tmp_path: Path) -> None:
    file = tournament(tmp_path)
    bad = run_cli("run", str(file), "--cluster", "local:0", cwd=tmp_path)
    assert bad.returncode != 0 and "local:N needs at least 1 worker" in bad.stderr
    assert "Traceback" not in bad.stderr
    in_file = tournament(tmp_path, extra='cluster = "no such place"')
    bad = run_cli("run", str(in_file), cwd=tmp_path)
    assert bad.returncode != 0 and "cup.toml:6:" in bad.stderr and "'cluster'" in bad.stderr
    assert not (tmp_path / "results").exists()
