"""The cluster executor's checks of its workers (operator review of Dask clusters): workers that
run another arena, cannot import it or cannot sandbox; without a Dask process (a fake client)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from arena.game import parse_variant
from arena.referee import TimeControl
from arena.sandbox import SandboxPolicy
from arena.tournament import dask_executor
from arena.tournament.dask_executor import (
    ClusterError,
    DaskExecutor,
    RemoteResult,
    RemoteSetup,
    code_fingerprint,
    connect,
    play_remote,
    tls_problem,
)
from arena.tournament.executor import Outcome, OutcomeKind, WorkerSetup
from arena.tournament.schedule import ScheduledGame
from arena.tournament.startwatch import StartWatch

GAME = ScheduledGame("g1", "p1", 0, parse_variant("classic"), "a", "b")


class FakeClient:
    """The client calls the executor makes: workers with their threads and probe answers."""

    status = "running"

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers  # address -> what the probe returns there
        self.submitted: list[dict] = []
        self.ran: list[tuple[Any, list[str]]] = []

    def nthreads(self) -> dict[str, int]:
        return {address: 1 for address in self.answers}

    def run(self, function: Any, *args: Any, workers: list[str], **kwargs: Any) -> dict:
        self.ran.append((function, workers))
        self.args = args
        if function is dask_executor._probe_function():
            return {w: self.answers[w] for w in workers}
        return {}

    def submit(self, function: Any, game: ScheduledGame, *args: Any, **kwargs: Any) -> Any:
        self.submitted.append({"game": game, **kwargs})
        return SimpleNamespace(key=kwargs["key"], status="pending")


@dataclass
class FakeDone:
    futures: list = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    thread_condition: threading.Condition = field(default_factory=threading.Condition)

    def add(self, future: Any) -> None:
        self.futures.append(future)

    def has_ready(self) -> bool:
        return False

    def next_batch(self, block: bool = False) -> list:
        return []


def executor_with(answers: dict[str, Any], tmp_path: Path, sandbox: str = "off") -> DaskExecutor:
    """A DaskExecutor on a fake client whose workers answer the probe with `answers`, for a run
    whose bots have the sandbox mode `sandbox`."""
    setup = WorkerSetup({}, TimeControl(), False, tmp_path / "logs",
                        policies={"a": SandboxPolicy(sandbox), "b": SandboxPolicy(sandbox)})
    executor = object.__new__(DaskExecutor)
    executor.__dict__.update(
        _client=FakeClient(answers), _done=FakeDone(), _unsent=[], _queue=[], _games={},
        _stopped_at=None, _closed=False, _slots=1, _slots_read=0.0, _notes=[], _usable={},
        _refused={}, _waiting=False, _address="tcp://s:8786", _probe=None,
        remote=RemoteSetup.of("run-1", {}, setup),
        _snapshots={"a": None, "b": None}, setup=setup)
    executor._refresh_workers()
    return executor


def test_the_code_fingerprint_is_the_version_and_a_hash_of_the_package() -> None:
    import arena

    version, _, digest = code_fingerprint().partition("/")
    assert version == arena.__version__ and len(digest) == 12
    assert RemoteSetup.of("r", {}, WorkerSetup({}, TimeControl(), False, Path())).code \
        == code_fingerprint()


def test_workers_with_another_arena_or_none_are_named_once_and_get_no_game(
        tmp_path: Path) -> None:
    ours = code_fingerprint()
    executor = executor_with({
        "tcp://good:1": {"code": ours, "sandbox": ""},
        "tcp://old:2": {"code": "0.1.0/0123456789ab", "sandbox": ""},
        "tcp://none:3": {"error": "ModuleNotFoundError: No module named 'arena'"},
    }, tmp_path)
    notes = executor.notes()
    assert notes == [
        f"worker tcp://old:2 runs arena 0.1.0/0123456789ab, this machine arena {ours}: install "
        "the same arena on every worker; that worker gets no games of this run",
        "worker tcp://none:3: arena is not importable there (ModuleNotFoundError: No module "
        "named 'arena'); install it there (pip install -e '.[cluster]'), the same as on this "
        "machine; it gets no games of this run",
    ]
    assert executor.slots == 1 and set(executor._usable) == {"tcp://good:1"}
    executor.submit(GAME)
    assert executor._client.submitted[0]["workers"] == ["tcp://good:1"]
    # the workers that cannot play are probed once, and never sent an arena function (a worker
    # without arena could not unpickle one, and Dask closed it)
    executor._on_workers(dask_executor._close_earlier_runs)
    assert executor._client.ran[-1] == (dask_executor._close_earlier_runs, ["tcp://good:1"])
    executor._refresh_workers()
    assert executor.notes() == []


def test_the_probe_travels_by_value() -> None:
    """Pickled by value: a worker that cannot import arena can still run it and say so (a
    function pickled by reference would not even unpickle there: checked in a process where
    arena cannot be imported)."""
    import subprocess
    import sys

    import cloudpickle

    data = cloudpickle.dumps(dask_executor._probe_function())
    probe = cloudpickle.loads(data)
    assert probe(False) == {"code": code_fingerprint(), "sandbox": ""}
    code = ("import sys, pickle, cloudpickle; sys.modules['arena'] = None; "
            "print(cloudpickle.loads(sys.stdin.buffer.read())(False))")
    there = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True,
                           timeout=60)
    assert there.returncode == 0, there.stderr.decode()
    assert "'error'" in there.stdout.decode() and "arena" in there.stdout.decode()


def test_a_silent_worker_does_not_hold_the_run(tmp_path: Path) -> None:
    """A worker whose event loop is blocked: the probe's `client.run` waited for it, on the
    coordinator's thread, deaf to Ctrl-C (second review). The run goes on without it, and takes
    it once it answers."""
    import time

    answered = threading.Event()

    class Silent(FakeClient):
        def run(self, function: Any, *args: Any, workers: list[str], **kwargs: Any) -> dict:
            if function is dask_executor._probe_function() and "tcp://stuck:2" in workers:
                answered.wait(60)
            return super().run(function, *args, workers=workers, **kwargs)

    ours = {"code": code_fingerprint(), "sandbox": ""}
    started = time.monotonic()
    executor = executor_with({}, tmp_path)
    executor._client = Silent({"tcp://stuck:2": ours})
    executor._refresh_workers()
    assert time.monotonic() - started < 30 and executor._usable == {}
    answered.set()
    executor._probe[0].join(60)
    executor._refresh_workers()
    assert set(executor._usable) == {"tcp://stuck:2"}


def test_a_result_from_another_arena_is_not_stored_and_its_game_is_played_again(
        tmp_path: Path) -> None:
    """An older worker's result (no fingerprint, no start_failures): refused, not a traceback."""
    executor = executor_with({"tcp://good:1": {"code": code_fingerprint(), "sandbox": ""}},
                             tmp_path)
    old = object.__new__(Outcome)  # as an older arena's pickle: no start_failures
    old.__dict__.update(game=GAME, kind=OutcomeKind.DONE, row={"worker": "tcp://old:2"})
    result = object.__new__(RemoteResult)
    result.__dict__.update(outcome=old, logs={})
    executor._games["k"] = GAME
    assert executor._outcome(SimpleNamespace(key="k", status="finished"), result) is None
    assert executor._queue == [GAME]
    (note,) = executor.notes()
    assert note.startswith("worker tcp://old:2 runs arena (an older version, no fingerprint), "
                           f"this machine arena {code_fingerprint()}: install the same arena")
    # and the start watch reads such an outcome without a traceback
    assert StartWatch().admit(old) == [old]


def test_a_worker_with_another_arena_refuses_to_play(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dask_executor, "_this_worker", lambda: ("tcp://w:9", tmp_path))
    setup = WorkerSetup({}, TimeControl(), False, tmp_path / "logs")
    remote = RemoteSetup("run-x", {}, setup, code="9.9.9/ffffffffffff")
    result = play_remote(GAME, remote, None, None)  # type: ignore[arg-type]
    assert result.refused == (f"worker tcp://w:9 runs arena {code_fingerprint()}, this machine "
                              "arena 9.9.9/ffffffffffff: install the same arena on every worker; "
                              "that worker gets no games of this run")
    assert result.worker == "tcp://w:9" and "run-x" not in dask_executor._runs


def test_a_worker_that_cannot_sandbox_gets_no_game_of_a_run_that_requires_it(
        tmp_path: Path) -> None:
    ours = code_fingerprint()
    answers = {"tcp://jail:1": {"code": ours, "sandbox": ""},
               "tcp://bare:2": {"code": ours, "sandbox": "bwrap not found on PATH"}}
    executor = executor_with(answers, tmp_path, sandbox="on")
    assert executor._client.args == (True,)  # the probe asked about the sandbox
    assert executor.notes() == [
        'worker tcp://bare:2 cannot sandbox the bots (bwrap not found on PATH) and this run has '
        'sandbox = "on": install bubblewrap there; that worker gets no games of this run']
    assert set(executor._usable) == {"tcp://jail:1"}


def test_under_auto_a_worker_without_the_sandbox_plays_and_is_named_once(tmp_path: Path) -> None:
    ours = code_fingerprint()
    answers = {"tcp://jail:1": {"code": ours, "sandbox": ""},
               "tcp://bare:2": {"code": ours, "sandbox": "bwrap not found on PATH"}}
    executor = executor_with(answers, tmp_path, sandbox="auto")
    assert executor.notes() == [
        'note: worker tcp://bare:2 cannot sandbox the bots (bwrap not found on PATH): under '
        'sandbox = "auto" its games run unsandboxed; install bubblewrap there, or set '
        'sandbox = "on" to give it no games']
    assert set(executor._usable) == {"tcp://jail:1", "tcp://bare:2"}
    executor._refresh_workers()
    assert executor.notes() == []


def test_under_off_the_probe_does_not_ask_about_the_sandbox(tmp_path: Path) -> None:
    executor = executor_with({"tcp://bare:2": {"code": code_fingerprint(), "sandbox": ""}},
                             tmp_path, sandbox="off")
    assert executor._client.args == (False,) and executor.notes() == []


def test_a_worker_without_the_sandbox_refuses_a_game_that_requires_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A game handed out before the probe's answer: refused there, not a start failure that
    would stop the run blaming the bot."""
    monkeypatch.setattr(dask_executor, "_this_worker", lambda: ("tcp://w:9", tmp_path))
    monkeypatch.setattr(dask_executor, "worker_status", lambda check_sandbox=False: {
        "code": code_fingerprint(), "sandbox": "bwrap not found on PATH" if check_sandbox else ""})
    setup = WorkerSetup({}, TimeControl(), False, tmp_path / "logs",
                        policies={"a": SandboxPolicy("on"), "b": SandboxPolicy("on")})
    result = play_remote(GAME, RemoteSetup.of("run-y", {}, setup), None, None)  # type: ignore[arg-type]
    assert result.refused.startswith("worker tcp://w:9 cannot sandbox the bots (bwrap not found")
    assert result.outcome.kind is OutcomeKind.LOST and "run-y" not in dask_executor._runs


def test_without_a_worker_that_can_play_the_run_says_so_once_and_waits(tmp_path: Path) -> None:
    executor = executor_with({}, tmp_path)  # no worker has joined yet
    executor.submit(GAME)
    executor.submit(GAME)
    assert executor.results(0.01) == []
    executor._slots_read = 0.0
    assert executor.results(0.01) == []
    assert executor.notes() == ["waiting for workers: tcp://s:8786 has none that can play "
                                "(Ctrl-C to stop)"]
    assert executor._client.submitted == [] and len(executor._queue) == 2
    executor._client.answers["tcp://new:1"] = {"code": code_fingerprint(), "sandbox": ""}
    executor._slots_read = 0.0  # a worker joined: the games go to it
    executor.results(0.01)
    assert [s["workers"] for s in executor._client.submitted] == [["tcp://new:1"]] * 2
    # a stop while games wait gives them back at once (played by the next run)
    executor._queue.append(GAME)
    executor._stopped_at = 0.0
    assert [o.kind for o in executor.results(0.01)] == [OutcomeKind.ABORTED]


# -- reaching the scheduler ----------------------------------------------------------------------
distributed = pytest.importorskip("distributed")


def test_tls_without_dask_tls_settings_names_them(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(__import__("os").environ):
        if name.startswith("DASK_DISTRIBUTED__COMM__TLS"):
            monkeypatch.delenv(name)
    with pytest.raises(ClusterError) as caught:
        connect(distributed, "tls://127.0.0.1:1")
    assert str(caught.value).startswith("tls:// needs Dask's TLS settings: "
                                        "distributed.comm.tls.ca-file, ")
    assert "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT" in str(caught.value)
    assert tls_problem("tcp://127.0.0.1:1") == ""


def test_a_refused_connection_is_said_at_once() -> None:
    with socket.socket() as free:  # a port nobody listens on
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(ClusterError, match=r"^cannot reach the Dask cluster tcp://127\.0\.0\.1:"
                                           r"\d+: connection refused"):
        connect(distributed, f"tcp://127.0.0.1:{port}", timeout=20)
    assert time.monotonic() - started < 5


@pytest.fixture
def silent_service() -> Iterator[str]:
    """A TCP service that accepts connections and never answers (an HTTP server, to Dask)."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    thread = threading.Thread(target=lambda: accepted.append(server.accept()[0]), daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()
        for conn in accepted:
            conn.close()


def test_a_service_that_is_not_a_scheduler_is_said_in_one_line(silent_service: str) -> None:
    started = time.monotonic()
    with pytest.raises(ClusterError) as caught:
        connect(distributed, silent_service, timeout=1)
    assert str(caught.value).startswith(f"{silent_service} answers, but not as a Dask scheduler")
    assert time.monotonic() - started < 10  # it had waited for ever


def test_a_stop_ends_the_wait_for_the_scheduler(silent_service: str) -> None:
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    started = time.monotonic()
    with pytest.raises(ClusterError, match="stopped while connecting"):
        connect(distributed, silent_service, stop=stop, timeout=30)
    assert time.monotonic() - started < 3


def test_games_wait_while_the_client_reconnects(tmp_path: Path) -> None:
    """A lost scheduler: games given back are not sent to a client that is reconnecting (they
    came back cancelled again, each noted twice)."""
    executor = executor_with({"tcp://good:1": {"code": code_fingerprint(), "sandbox": ""}},
                             tmp_path)
    executor._client.status = "connecting"
    executor.submit(GAME)
    assert executor.results(0.01) == [] and executor._client.submitted == []
    executor._client.status = "running"
    executor.results(0.01)
    assert len(executor._client.submitted) == 1 and executor._queue == []


def test_a_run_starting_on_a_worker_sweeps_stale_cgroups(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Cgroups left by a killed sibling worker go when a run starts here, not at a restart."""
    import asyncio

    from arena import cgroup

    sweeps: list[int] = []
    monkeypatch.setattr(cgroup, "sweep_stale", lambda: sweeps.append(1))
    setup = WorkerSetup({}, TimeControl(), False, tmp_path / "logs")
    for _ in range(2):  # the same run: once
        dask_executor._worker_run(RemoteSetup.of("sweep-run", {}, setup), tmp_path)
    assert sweeps == [1]
    asyncio.run(dask_executor._close_run("sweep-run"))


def test_a_tls_failure_is_said_as_one() -> None:
    """A certificate mismatch at a real TLS scheduler read "answers, but not as a Dask
    scheduler" (second review)."""
    import ssl

    wrapped = OSError("Timed out during handshake")
    wrapped.__cause__ = ssl.SSLCertVerificationError("certificate verify failed")
    assert dask_executor._tls_trouble(wrapped)
    assert not dask_executor._tls_trouble(OSError("Timed out during handshake"))


def test_a_workers_bots_follow_its_cores_as_its_own_threads_fill_them(tmp_path, monkeypatch):
    """Following is decided on the worker, from its threads and CPUs: the coordinator's
    `concurrency` (unused by a cluster) and cores had decided it for every machine, pinning the
    bots of a 4-thread worker on a 64-core machine to one core each game."""
    from arena import affinity
    from arena.tournament.executor import WorkerSetup

    monkeypatch.setattr(affinity, "available", lambda: True)
    monkeypatch.setattr(affinity, "allowed_cpus", lambda: (0, 1))
    coordinators = WorkerSetup({}, TimeControl(move_ms=100), False, tmp_path / "logs", follow=True)
    remote = SimpleNamespace(run="r1", setup=coordinators)
    assert not dask_executor._WorkerRun(remote, tmp_path, threads=1).setup.follow
    assert not dask_executor._WorkerRun(remote, tmp_path, threads=None).setup.follow
    run = dask_executor._WorkerRun(SimpleNamespace(run="r2", setup=replace(
        coordinators, follow=False)), tmp_path, threads=2)
    assert run.setup.follow
    pools = [run.take(), run.take()]
    assert [pool.home_core for pool in pools] == [0, 1]
    for pool in pools:
        run.give_back(pool)
    run.close()
