"""Bot snapshots and the cluster executor's pure parts (issue 12): no Dask process is started."""

from __future__ import annotations

import asyncio
import builtins
import subprocess
import sys
from pathlib import Path

import pytest

from arena.botspec import resolve_bot
from arena.tournament.dask_executor import (
    INSTALL_HINT,
    ClusterError,
    _import_distributed,
    cluster_problem,
)
from arena.tournament.snapshot import (
    FILE,
    FOLDER,
    MissingProgram,
    Snapshot,
    SnapshotError,
    take_snapshot,
    unpack,
)
from tests.tournament.tournament_helpers import copy_bot, write_toml


def test_a_folder_bot_travels_and_runs_from_its_snapshot(tmp_path: Path) -> None:
    bot = copy_bot(tmp_path, "random")
    (bot / "tool.sh").write_text("#!/bin/sh\n")
    (bot / "tool.sh").chmod(0o755)
    (bot / "__pycache__").mkdir()
    (bot / "__pycache__" / "x.pyc").write_bytes(b"cache")  # not hashed, so not shipped
    spec = resolve_bot(str(bot))
    snapshot, portable = take_snapshot(spec)
    assert (snapshot.kind, snapshot.digest) == (FOLDER, spec.program_hash)
    folder = unpack(snapshot, tmp_path / "worker")
    assert folder == tmp_path / "worker" / spec.program_hash
    assert (folder / "tool.sh").stat().st_mode & 0o100
    assert not (folder / "__pycache__").exists()
    local = portable.localize(folder)
    assert local.argv == [sys.executable, str(folder / "bot.py")]
    assert (local.cwd, local.program_hash, local.name) == (folder, spec.program_hash, "random")
    # once unpacked, the folder is reused as is
    (folder / "bot.py").write_text("# a later game sees the verified copy\n")
    assert unpack(snapshot, tmp_path / "worker") == folder


def test_a_single_program_bot_travels_alone(tmp_path: Path) -> None:
    program = tmp_path / "solo.py"
    program.write_text("print('hi')\n")
    (tmp_path / "neighbour.txt").write_text("not part of the bot\n")
    spec = resolve_bot(str(program), args=["--x", "1"])
    snapshot, portable = take_snapshot(spec)
    assert snapshot.kind == FILE
    folder = unpack(snapshot, tmp_path / "worker")
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) == ["solo.py"]
    assert portable.localize(folder).argv == [sys.executable, str(folder / "solo.py"), "--x", "1"]


def test_files_that_do_not_match_the_digest_are_refused(tmp_path: Path) -> None:
    one = take_snapshot(resolve_bot(str(copy_bot(tmp_path, "random"))))[0]
    other = take_snapshot(resolve_bot(str(copy_bot(tmp_path, "greedy"))))[0]
    with pytest.raises(SnapshotError, match=rf"snapshot {one.digest} does not match its hash"):
        unpack(Snapshot(one.digest, one.kind, other.data), tmp_path / "worker")
    with pytest.raises(SnapshotError, match="cannot be unpacked"):
        unpack(Snapshot(one.digest, one.kind, b"not a tar"), tmp_path / "worker")
    with pytest.raises(SnapshotError, match="bad snapshot digest"):
        unpack(Snapshot("../escape", one.kind, one.data), tmp_path / "worker")
    assert not (tmp_path / "worker" / one.digest).exists()  # nothing half-made is kept
    assert unpack(one, tmp_path / "worker").is_dir()


def test_a_bot_changed_after_it_was_resolved_is_refused(tmp_path: Path) -> None:
    program = tmp_path / "solo.py"
    program.write_text("print('hi')\n")
    spec = resolve_bot(str(program))
    program.write_text("print('changed')\n")
    with pytest.raises(SnapshotError, match=r"bot 'solo': no file or folder of it hashes to"):
        take_snapshot(spec)


@pytest.mark.parametrize("kind", ["fifo", "zero", "secret"])
def test_a_snapshot_takes_regular_files_only(tmp_path: Path, kind: str) -> None:
    """A link to a FIFO hung a cluster run before its first game, one to /dev/zero ran it out
    of memory, one to a file outside the folder sent its content to the workers (hostile
    review): refused by name, as the hash reads no link either."""
    import os

    bot = copy_bot(tmp_path, "random", "linked")
    if kind == "fifo":
        os.mkfifo(tmp_path / "pipe")
        (bot / "data").symlink_to(tmp_path / "pipe")
    elif kind == "zero":
        (bot / "data").symlink_to("/dev/zero")
    else:
        (tmp_path / "secret.txt").write_text("the organiser's")
        (bot / "data").symlink_to(tmp_path / "secret.txt")
    spec = resolve_bot(str(bot))
    with pytest.raises(SnapshotError, match=r"data is a link or not a regular file"):
        take_snapshot(spec)


def test_a_program_missing_on_the_worker_is_named(tmp_path: Path) -> None:
    bot = copy_bot(tmp_path, "random")
    (bot / "bot.toml").write_text('name = "r"\ncommand = "sh bot.py"\n')
    snapshot, portable = take_snapshot(resolve_bot(str(bot)))
    folder = unpack(snapshot, tmp_path / "worker")
    local = portable.localize(folder)  # the script stays relative to the bot's folder
    assert (local.argv, local.cwd) == (["sh", "bot.py"], folder)
    gone = portable.__class__(portable.name, portable.digest,
                              (("text", "no-such-runtime-xyz"), *portable.command[1:]), ())
    with pytest.raises(MissingProgram, match="'no-such-runtime-xyz', which is not on this"):
        gone.localize(folder)
    absolute = portable.__class__(portable.name, portable.digest, (("text", "/nonexistent/x"),), ())
    with pytest.raises(MissingProgram, match="needs /nonexistent/x"):
        absolute.localize(folder)


@pytest.mark.parametrize(("text", "problem"), [
    ("local:2", ""), ("tcp://10.0.0.5:8786", ""), ("scheduler:8786", ""),
    ("tls://host.example:8786", ""), ("local:0", "at least 1"), ("local", "not local:N"),
    ("local:x", "not local:N"), ("two words", "not a scheduler address"), ("", "not a scheduler"),
    # a scheduler on this machine is no misspelt local:N (it was refused as one)
    ("localhost:8786", ""), ("tcp://localhost:8786", ""), ("local1:8786", ""),
    # a misspelt local:N is a host name to Dask: 30 s of trying to reach it (newcomer review)
    ("locl:2", "did you mean local:2"), ("lcoal:4", "did you mean local:4"),
    # Dask's schemes across machines, and IPv6 (operator review of Dask); others at once
    ("ws://h:8786", ""), ("wss://h:8786", ""), ("tcp://[::1]:8786", ""), ("[fe80::1]:8786", ""),
    ("ucx://h:8786", "unknown address scheme 'ucx'"), ("inproc://x:1", "scheme 'inproc'"),
    ("http://h:8788", "scheme 'http'"), ("tcp://h:99999", "99999 is not a port number"),
    ("tcp://h:0", "is not a port number"), ("tcp://[::1:8786", "not a scheduler address"),
])
def test_cluster_addresses(text: str, problem: str) -> None:
    assert (problem in cluster_problem(text)) and bool(cluster_problem(text)) == bool(problem)


def test_without_dask_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_dask(name: str, *args, **kwargs):
        if name == "distributed" or name.startswith("distributed."):
            raise ImportError("No module named 'distributed'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_dask)
    with pytest.raises(ClusterError) as raised:
        _import_distributed()
    assert str(raised.value) == INSTALL_HINT == ("the cluster extra is not installed: "
                                                 "pip install -e '.[cluster]'")


def test_arena_run_without_dask_says_what_to_install(tmp_path: Path) -> None:
    file = write_toml(tmp_path / "cup.toml", """
        name = "cup"
        variants = ["classic:5x4"]
        [[bots]]
        path = "random"
        [[bots]]
        path = "greedy"
    """)
    code = "import sys; sys.modules['distributed'] = None; from arena.cli import main; main()"
    out = subprocess.run([sys.executable, "-c", code, "run", str(file), "--cluster", "local:1"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines()[-1] == f"Error: {INSTALL_HINT}"
    assert "Traceback" not in out.stderr


def test_a_stop_reaches_games_that_start_on_a_worker_after_it(tmp_path: Path) -> None:
    """A worker told to stop a run it has not played yet plays none of its games."""
    from arena.referee import TimeControl
    from arena.tournament.dask_executor import RemoteSetup, _close_run, _stop_run, _worker_run
    from arena.tournament.executor import WorkerSetup

    setup = WorkerSetup({}, TimeControl(), False, tmp_path / "logs")
    token = f"test-{tmp_path.name}"
    asyncio.run(_stop_run(token))
    run = _worker_run(RemoteSetup.of(token, {}, setup), tmp_path)
    assert run.stop.is_set()
    assert run.setup.log_dir == tmp_path / "arena-logs" / token  # the worker's own folder
    other = _worker_run(RemoteSetup.of(token + "-other", {}, setup), tmp_path)
    assert not other.stop.is_set()
    for name in (token, token + "-other"):
        asyncio.run(_close_run(name))


def test_a_worker_closes_the_bots_of_runs_closed_or_gone_silent(tmp_path: Path) -> None:
    from arena.referee import TimeControl
    from arena.tournament.dask_executor import (
        RUN_IDLE,
        RemoteSetup,
        _close_run,
        _worker_run,
        reap_silent_runs,
    )
    from arena.tournament.executor import WorkerSetup

    setup = WorkerSetup({}, TimeControl(), False, tmp_path / "logs")
    playing = _worker_run(RemoteSetup.of(f"closed-{tmp_path.name}", {}, setup), tmp_path)
    pool = playing.take()
    closed = []
    pool.close = lambda: closed.append(pool)  # type: ignore[method-assign]
    asyncio.run(_close_run(playing.remote.run))  # closed while its game plays
    playing.give_back(pool)
    assert closed == [pool] and playing.idle == []

    silent = _worker_run(RemoteSetup.of(f"silent-{tmp_path.name}", {}, setup), tmp_path)
    silent.give_back(silent.take())
    assert silent.remote.run not in reap_silent_runs(silent.used + RUN_IDLE / 2)
    assert silent.remote.run in reap_silent_runs(silent.used + RUN_IDLE * 2)
    assert silent.closed and silent.idle == []

    # a coordinator killed with kill -9: the next run of the same results closes its bots at
    # once, not RUN_IDLE later (league review); another results folder's run is left alone
    from arena.tournament.dask_executor import _close_earlier_runs, _runs, run_token

    killed = _worker_run(RemoteSetup.of(run_token(tmp_path / "logs"), {}, setup), tmp_path)
    other = _worker_run(RemoteSetup.of(run_token(tmp_path / "other"), {}, setup), tmp_path)
    killed.give_back(killed.take())
    again = run_token(tmp_path / "logs")
    assert again != killed.remote.run
    asyncio.run(_close_earlier_runs(again))
    assert killed.stop.is_set() and killed.remote.run not in _runs  # closed by a thread
    assert not other.stop.is_set() and other.remote.run in _runs
    asyncio.run(_close_run(other.remote.run))


def test_a_worker_closes_retired_bots_now_or_after_their_game(tmp_path: Path) -> None:
    """A league bot that leaves the field: the worker's idle pools close its process at once, a
    pool playing its last game closes it when given back, and a bot re-added under the same
    name is learned again from its next snapshot (not kept closing, not run from the old one)."""
    from arena.referee import TimeControl
    from arena.tournament.dask_executor import RemoteSetup, _close_run, _worker_run
    from arena.tournament.executor import WorkerSetup
    from arena.tournament.worker import PlayerPool
    from tests.tournament.test_tournament_executor import FakePlayer

    setup = WorkerSetup({}, TimeControl(), False, tmp_path / "logs", warm_cap=8)
    run = _worker_run(RemoteSetup.of(f"retire-{tmp_path.name}", {}, setup), tmp_path)
    try:
        idle, busy = (PlayerPool(run.setup, factory=FakePlayer) for _ in range(2))
        a = idle.get("a")
        idle.get("b")
        run.idle = [idle, busy]
        assert run.take() is busy
        c = busy.get("c")
        detached = run.change_field(("a", "c"), ())
        assert detached == [a] and idle.warm() == {"b"}  # for the caller to close
        assert not c.closed and "c" in busy.warm()  # c's game is still on
        run.give_back(busy)
        assert c.closed and busy.warm() == set() and busy in run.idle
        assert idle.setup.specs is run.specs  # the pools still share the growing field
        late = PlayerPool(run.setup, factory=FakePlayer)
        d = late.get("d")
        run.retired.add("d")  # as if the retirement had raced this pool's return
        run.idle = [late]
        assert run.take() is late and d.closed and late.warm() == set()
        run.give_back(late)

        run.specs["a"] = "the old snapshot's spec"
        run.change_field((), ("a",))
        assert "a" not in run.specs and "a" not in run.retired
        kept = run.take()
        kept.get("a")
        run.give_back(kept)
        assert "a" in kept.warm()
    finally:
        asyncio.run(_close_run(run.remote.run))


def test_a_lost_scheduler_ends_the_run_in_one_line() -> None:
    """The scheduler killed mid-run: the coordinator waited on games that would never come back
    for minutes, then died with a traceback from cancelling them through a closed client
    (league review). The executor's side, without a cluster: a client Dask has closed."""
    import threading
    from types import SimpleNamespace

    from arena.tournament.dask_executor import ClusterError, DaskExecutor
    from arena.tournament.executor import OutcomeKind

    class ClosedClient:
        status = "closed"

        def cancel(self, futures) -> None:
            raise RuntimeError("Client is closed. Can't send cancel-keys message.")

    done = SimpleNamespace(has_ready=lambda: False, lock=threading.Lock(), futures=set(),
                           thread_condition=threading.Condition())
    executor = object.__new__(DaskExecutor)
    executor.__dict__.update(_client=ClosedClient(), _done=done, _unsent=[], _stopped_at=None,
                             _games={"k1": "g1", "k2": "g2"}, _address="tcp://a:8786",
                             _queue=[], _usable={}, _refused={}, _notes=[], _closed=False,
                             _slots_read=float("inf"))  # no read of the workers
    with pytest.raises(ClusterError) as caught:
        executor.results(5.0)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("lost the Dask scheduler (tcp://a:8786): it stopped answering, and "
                              "2 games in play there will be played again")
    # a stop after the loss gives the games up at once, in the order the run meets it (a
    # league's drain after the error called results() in a busy loop for 30 s: diff review)
    done.futures = [SimpleNamespace(key="k1")]
    executor._stopped_at = 0.0
    assert [o.kind for o in executor.results(5.0)] == [OutcomeKind.ABORTED]
