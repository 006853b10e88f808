"""Games played on the workers of a Dask cluster (`arena run FILE --cluster tcp://HOST:8786`).

One more `GameExecutor`: `submit` is `client.submit` of `play_remote` (which runs the shared
`worker.play_scheduled`), `results` drains an `as_completed`, and the coordinator stays the only
writer of the store. Each game carries the snapshots of its two bots (`snapshot.py`): a worker
unpacks a snapshot once, checks it against its hash, and keeps warm players per thread, so a
worker with `nthreads` threads plays that many games at once. A worker lost mid-game costs
nothing: Dask runs the task again elsewhere, or, once it gives up (`KilledWorker`), the outcome
is LOST and the coordinator plays the game again. A worker that lacks what a bot needs (its
interpreter) reports the game void, with the reason, rather than as the bot's forfeit.

Dask is an optional extra: this module imports it only when an executor is made.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
import shutil
import socket
import threading
import time
import traceback
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from arena import affinity, provenance
from arena.clock import utc_now_iso
from arena.referee import GameRecord, log_file_name
from arena.tournament.executor import FieldChange, GameExecutor, Outcome, OutcomeKind, WorkerSetup
from arena.tournament.runner import ExecutorFactory, RunError
from arena.tournament.schedule import ScheduledGame
from arena.tournament.snapshot import (
    MissingProgram,
    PortableBot,
    Snapshot,
    SnapshotError,
    take_snapshot,
    unpack,
)
from arena.tournament.worker import PlayerPool, close_all, play_scheduled

INSTALL_HINT = "the cluster extra is not installed: pip install -e '.[cluster]'"
CONNECT_TIMEOUT = 30.0  # seconds to reach the scheduler
STOP_GRACE = 20.0  # seconds after a stop before games still out are given up (ABORTED)
SLOTS_EVERY = 2.0  # seconds between reads of the cluster's thread count
RUN_IDLE = 300.0  # seconds after which a worker closes the warm bots of a silent run
# seconds the coordinator waits on a probe or its close before going on without the silent
# workers (a worker whose event loop is blocked had frozen the run, deaf to Ctrl-C: review)
PROBE_WAIT = 2.0
CLOSE_WAIT = 30.0
_LOCAL_RE = re.compile(r"^local:(\d+)$")
# [scheme://]HOST:PORT or [scheme://][IPv6]:PORT; the port is required
_ADDRESS_RE = re.compile(r"^(?:([a-z][a-z0-9+.-]*)://)?(\[[0-9A-Fa-f:.]+\]|[^\s/:\[\]]+):(\d+)$")
SCHEMES = ("tcp", "tls", "ws", "wss")  # Dask's comms across machines (not ucx, inproc)
TLS_SETTINGS = ("distributed.comm.tls.ca-file, distributed.comm.tls.client.cert and "
                "distributed.comm.tls.client.key (in ~/.config/dask/*.yaml, or the variables "
                "DASK_DISTRIBUTED__COMM__TLS__CA_FILE, DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT, "
                "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY)")


class ClusterError(RunError):
    """A cluster run that cannot start (one line)."""


def cluster_problem(text: str) -> str:
    """'' if `text` names a cluster (`local:N`, `tcp://HOST:PORT`, `HOST:PORT`); else why not."""
    if match := _LOCAL_RE.match(text):
        return "" if int(match.group(1)) >= 1 else "local:N needs at least 1 worker"
    if text == "local" or text.startswith("local:"):  # not localhost:8786, a scheduler's
        return f"{text!r} is not local:N (N worker processes on this machine)"
    match = _ADDRESS_RE.match(text)
    if not match:
        return f"{text!r} is not a scheduler address such as tcp://HOST:8786, nor local:N"
    scheme, host, port = match.group(1), match.group(2), match.group(3)
    if scheme is not None and scheme not in SCHEMES:
        return (f"{text!r}: unknown address scheme {scheme!r}: a Dask scheduler is reached "
                f"with {', '.join(s + '://' for s in SCHEMES)}")
    if not 1 <= int(port) <= 65535:
        return f"{text!r}: {port} is not a port number (1 to 65535)"
    if scheme is None and int(port) < 1024 and host != "localhost" and _near_local(host):
        # `locl:2` is a host name to Dask: 30 s of trying to reach it (newcomer review); a
        # scheduler listens on a port of its own (8786), not on a worker count
        return (f"{text!r}: did you mean local:{port} ({port} worker processes on this machine)? "
                "A scheduler's address is written tcp://HOST:PORT")
    return ""


def _near_local(host: str) -> bool:
    from arena.spelling import closest

    return closest(host.lower(), ["local"]) is not None


# A worker whose fingerprint differs from the coordinator's plays nothing: its referee, time
# control or sandbox may differ, and its games would be stored as ours. (Its home is
# arena.provenance, which records it with every run.)
code_fingerprint = provenance.code_fingerprint


def mismatch_message(address: str, theirs: str, ours: str) -> str:
    """The one line for a worker that runs another arena than the coordinator."""
    return (f"worker {address} runs arena {theirs or '(an older version, no fingerprint)'}, "
            f"this machine arena {ours}: install the same arena on every worker; "
            "that worker gets no games of this run")


def run_sandbox_mode(policies: Mapping[str, Any]) -> str:
    """The sandbox mode of a run from its bots' policies (a tournament has one mode; the
    strictest wins should they differ): `on`, `auto` or `off` (no bot yet: `off`)."""
    modes = {getattr(policy, "mode", "off") for policy in policies.values()}
    return next((mode for mode in ("on", "auto") if mode in modes), "off")


def unsandboxed_message(address: str, reason: str) -> str:
    """The one line for a worker that cannot sandbox bots in a run with `sandbox = "on"`."""
    return (f"worker {address} cannot sandbox the bots ({reason}) and this run has "
            "sandbox = \"on\": install bubblewrap there; that worker gets no games of this run")


def worker_status(check_sandbox: bool = False) -> dict[str, str]:
    """What the coordinator's probe learns of this worker (`_probe_function` calls it)."""
    status = {"code": code_fingerprint(), "sandbox": ""}
    if check_sandbox:
        from arena.sandbox import probe

        if not (result := probe()).available:
            status["sandbox"] = result.reason
    return status


# The probe travels by value (defined outside any importable module), so that a worker that
# cannot import arena unpickles it and says so, rather than fail on an arena function and be
# closed by Dask (the coordinator's first call had shut such workers down).
_PROBE_SOURCE = """
def arena_worker_probe(check_sandbox):
    try:
        from arena.tournament.dask_executor import worker_status
    except BaseException as error:
        return {"error": type(error).__name__ + ": " + str(error)}
    try:
        return worker_status(check_sandbox)
    except TypeError:  # an arena from before the sandbox check
        return worker_status()
"""


@functools.cache
def _probe_function() -> Any:
    namespace: dict[str, Any] = {"__name__": "arena_probe_by_value"}
    exec(_PROBE_SOURCE, namespace)  # a constant: the function is pickled by value
    return namespace["arena_worker_probe"]


def tls_problem(address: str) -> str:
    """'' unless `address` is tls:// or wss:// and Dask has no TLS settings to connect with."""
    if not address.startswith(("tls://", "wss://")):
        return ""
    from distributed.security import Security

    try:
        context = Security().get_connection_args("client").get("ssl_context")
    except Exception as error:  # a certificate file that cannot be read, say
        return f"{address}: Dask's TLS settings do not work: {_first_line(error)}"
    if context is None:
        return f"{address.partition(':')[0]}:// needs Dask's TLS settings: {TLS_SETTINGS}"
    return ""


def _host_port(address: str) -> tuple[str, int]:
    match = _ADDRESS_RE.match(address)
    assert match is not None
    return match.group(2).strip("[]"), int(match.group(3))


class _Connecting:
    """A `distributed.Client` made in a thread of its own: its constructor blocks (a service
    that accepts the connection and never answers Dask's handshake held it for ever, deaf to
    Ctrl-C), so the caller waits in short steps and may leave it behind."""

    def __init__(self, distributed: Any, address: str, timeout: float) -> None:
        self.distributed, self.address, self.timeout = distributed, address, timeout
        self.client: Any = None
        self.error: BaseException | None = None
        self.reached = False  # something accepted a TCP connection at the address
        self.abandoned = False
        self.lock = threading.Lock()
        self.done = threading.Event()
        threading.Thread(target=self._run, name="arena-dask-connect", daemon=True).start()

    def _run(self) -> None:
        client = None
        try:
            # a refused connection, a name that does not resolve: at once (Dask tries for `timeout`)
            socket.create_connection(_host_port(self.address), timeout=self.timeout).close()
            self.reached = True
            client = object.__new__(self.distributed.Client)  # kept, to be closed on a failure
            client.__init__(self.address, timeout=self.timeout, set_as_default=False)
        except BaseException as error:  # said in one line by the caller
            self.error = error
            _discard(client)
            client = None
        with self.lock:
            self.client = client
            self.done.set()
            abandoned = self.abandoned
        if abandoned:
            _discard(client)

    def abandon(self) -> None:
        with self.lock:
            self.abandoned = True
            client = self.client
        _discard(client)


def _discard(client: Any) -> None:
    """Close a client that failed or is not wanted, quickly: a half-made one left to its
    __del__ closed for 60 s, then printed a traceback."""
    if client is None:
        return
    try:
        client.close(timeout=2)
    except BaseException:  # whatever state it is in, it is dropped
        pass
    client.__dict__["_Client__loop"] = None  # its __del__: nothing more to close


def connect(distributed: Any, address: str, stop: threading.Event | None = None,
            timeout: float | None = None) -> Any:
    """A client of the scheduler at `address`, or ClusterError (one line) within `timeout`
    seconds (CONNECT_TIMEOUT) and a few; a `stop` set meanwhile (Ctrl-C) ends the wait."""
    timeout = CONNECT_TIMEOUT if timeout is None else timeout
    if problem := tls_problem(address):
        raise ClusterError(problem)
    attempt = _Connecting(distributed, address, timeout)
    deadline = time.monotonic() + timeout + min(5.0, timeout / 2)  # Dask's own, then ours
    while not attempt.done.wait(0.1):
        if stop is not None and stop.is_set():
            attempt.abandon()
            raise ClusterError(f"stopped while connecting to the Dask scheduler {address}")
        if time.monotonic() > deadline:
            attempt.abandon()
            raise ClusterError(f"{address} answers, but not as a Dask scheduler (no Dask "
                               f"handshake in {timeout:g} s)")
    if attempt.error is None:
        return attempt.client
    error = attempt.error
    if isinstance(error, socket.gaierror):
        why = f"cannot resolve {_host_port(address)[0]!r}"
    elif isinstance(error, ConnectionRefusedError):
        why = "connection refused (is the scheduler running, on that port?)"
    elif _tls_trouble(error):  # a real scheduler: a certificate, or TLS one side only
        why = (f"TLS failed ({_first_line(error)}): check the certificates, and that the "
               "address's scheme (tcp:// or tls://) is the scheduler's")
    elif attempt.reached and isinstance(error, (TimeoutError, OSError)):
        raise ClusterError(f"{address} answers, but not as a Dask scheduler "
                           f"({_first_line(error)}; a TLS scheduler needs a tls:// address)")
    else:
        why = _first_line(error)
    raise ClusterError(f"cannot reach the Dask cluster {address}: {why}")


def _tls_trouble(error: BaseException) -> bool:
    """Whether a failed connect is TLS's (it had read "not a Dask scheduler": second review)."""
    import ssl

    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, ssl.SSLError) or "SSL" in str(seen) or "certificate" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def cluster_executor_factory(cluster: str, stop: threading.Event | None = None
                             ) -> ExecutorFactory:
    return partial(DaskExecutor, cluster=cluster, stop=stop)


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise ClusterError(INSTALL_HINT) from None
    return distributed


# -- what travels with each game ---------------------------------------------------------------
@dataclass(frozen=True)
class RemoteSetup:
    """What a worker needs besides the snapshots: the `WorkerSetup` without the coordinator's
    paths (its specs and log folder are this worker's own, made from `bots`; every other
    setting travels as is)."""

    run: str  # this run's token: a worker's players and stop flag belong to one run
    bots: Mapping[str, PortableBot]  # display name -> bot
    setup: WorkerSetup  # with no specs and no log folder
    code: str = ""  # the coordinator's `code_fingerprint()`: a worker with another plays nothing

    @classmethod
    def of(cls, run: str, bots: Mapping[str, PortableBot], setup: WorkerSetup) -> RemoteSetup:
        # no stamps: the coordinator's paths mean nothing there, and snapshots cannot change
        return cls(run, dict(bots), replace(setup, specs={}, log_dir=Path(), stamps={}),
                   code_fingerprint())


@dataclass(frozen=True)
class RemoteResult:
    """A task's answer. Results pickled by another arena version may lack the later fields:
    the coordinator reads them with getattr (their defaults are class attributes too)."""

    outcome: Outcome
    logs: Mapping[str, bytes] = field(default_factory=dict)  # file name -> a bot's stderr
    code: str = ""  # the worker's code_fingerprint()
    worker: str = ""  # its address
    refused: str = ""  # why this worker plays no game of the run (one line); the game: again


# -- the coordinator side ----------------------------------------------------------------------
class DaskExecutor(GameExecutor):
    # `workers` (the file's concurrency) is not used: the cluster's threads decide (`slots`)
    def __init__(self, setup: WorkerSetup, workers: int = 1, *, cluster: str,
                 stop: threading.Event | None = None) -> None:
        distributed = _import_distributed()
        self._distributed = distributed
        self.setup = setup
        self._snapshots: dict[str, Snapshot] = {}
        bots: dict[str, PortableBot] = {}
        for name, spec in setup.specs.items():
            try:
                self._snapshots[name], bots[name] = take_snapshot(spec, name)
            except SnapshotError as error:
                raise ClusterError(str(error)) from None
        self.remote = RemoteSetup.of(run_token(setup.log_dir), bots, setup)
        self._cluster = None
        self._address = cluster
        self._client = self._connect(cluster, stop)
        self._done = distributed.as_completed(loop=self._client.loop, with_results=True,
                                             raise_errors=False)
        self._games: dict[str, ScheduledGame] = {}  # future key -> game
        self._unsent: list[Outcome] = []  # games the client could not submit
        self._queue: list[ScheduledGame] = []  # games waiting for a worker that can play them
        self._stopped_at: float | None = None
        self._closed = False
        self._slots, self._slots_read = 1, 0.0
        self._notes: list[str] = []  # for the coordinator's progress (`notes`), once each
        self._usable: dict[str, int] = {}  # workers that passed the probe -> their threads
        self._refused: dict[str, str] = {}  # workers that play no game of this run -> why
        self._waiting = False  # the operator was told that no worker can play
        self._probe: tuple[threading.Thread, dict[str, Any], list[str]] | None = None
        self._refresh_workers()
        # a coordinator killed before it could close its run left warm bots on the workers
        # (until RUN_IDLE): the next run of the same results closes them now
        self._on_workers(_close_earlier_runs)

    def notes(self) -> list[str]:
        notes, self._notes = self._notes, []
        return notes

    def _refuse(self, address: str, why: str) -> None:
        """`address` plays no more game of this run: said once."""
        if address and address not in self._refused:
            self._refused[address] = why
            self._notes.append(why)
        self._usable.pop(address, None)

    def _refresh_workers(self) -> None:
        """Read the cluster's workers and probe those not seen yet (their arena's fingerprint):
        only those whose arena is the coordinator's get games."""
        self._slots_read = time.monotonic()
        try:
            threads = self._client.nthreads()
        except Exception:  # keep the last view while the scheduler is away
            return
        for gone in set(self._usable) - set(threads):
            del self._usable[gone]
        if self._probe is None:
            new = [a for a in threads if a not in self._usable and a not in self._refused]
            if new:
                self._probe = self._start_probe(new)
        if self._probe is not None:
            thread, answers, asked = self._probe
            thread.join(PROBE_WAIT)  # a silent worker is probed on: the run goes on meanwhile
            if not thread.is_alive():
                self._probe = None
                for address, answer in answers.items():
                    if address in threads and (why := self._probe_problem(address, answer)):
                        self._refuse(address, why)
                    elif address in threads:
                        self._usable[address] = threads[address]
                        if unsandboxed := self._unsandboxed_note(address, answer):
                            self._notes.append(unsandboxed)
        for address in self._usable:
            self._usable[address] = threads.get(address, 1)
        self._slots = max(1, sum(self._usable.values()))

    def _start_probe(self, workers: list[str]) -> tuple[threading.Thread, dict[str, Any], list[str]]:
        """The probe of `workers` in a thread of its own: `client.run` waits for every worker it
        asks, however long one takes."""
        answers: dict[str, Any] = {}

        def probe() -> None:
            try:
                answers.update(self._client.run(_probe_function(), self._check_sandbox(),
                                                workers=workers, on_error="return"))
            except Exception:  # a worker that left meanwhile: probed at the next read
                pass

        thread = threading.Thread(target=probe, name="arena-dask-probe", daemon=True)
        thread.start()
        return thread, answers, workers

    def _check_sandbox(self) -> bool:
        """Whether the probe asks each worker if it can sandbox bots: not under `off`."""
        return run_sandbox_mode(self.remote.setup.policies) != "off"

    def _probe_problem(self, address: str, answer: Any) -> str:
        """Why the worker that gave `answer` to the probe cannot play ('' if it can)."""
        if not isinstance(answer, Mapping):
            return f"worker {address}: the arena probe failed there: {_first_line(answer)}"
        if "error" in answer:
            return (f"worker {address}: arena is not importable there ({answer['error']}); "
                    "install it there (pip install -e '.[cluster]'), the same as on this "
                    "machine; it gets no games of this run")
        if (code := str(answer.get("code", ""))) != self.remote.code:
            return mismatch_message(address, code, self.remote.code)
        if (reason := str(answer.get("sandbox") or "")) and \
                run_sandbox_mode(self.remote.setup.policies) == "on":
            return unsandboxed_message(address, reason)
        return ""

    def _unsandboxed_note(self, address: str, answer: Any) -> str:
        """The note for a worker that plays this `auto` run's games without the sandbox ('' if
        it has one): each worker decides `auto` for itself, and only the games' `sandboxed`
        column had said so (review of the cluster's leftovers)."""
        if isinstance(answer, Mapping) and (reason := str(answer.get("sandbox") or "")):
            return (f"note: worker {address} cannot sandbox the bots ({reason}): under "
                    "sandbox = \"auto\" its games run unsandboxed; install bubblewrap there, or "
                    "set sandbox = \"on\" to give it no games")
        return ""

    def _connect(self, cluster: str, stop: threading.Event | None) -> Any:
        distributed = self._distributed
        problem = cluster_problem(cluster)
        if problem:
            raise ClusterError(f"--cluster: {problem}")
        try:
            if match := _LOCAL_RE.match(cluster):
                self._cluster = distributed.LocalCluster(
                    n_workers=int(match.group(1)), threads_per_worker=1, processes=True,
                    host="127.0.0.1", dashboard_address=None, silence_logs=logging.ERROR)
                return distributed.Client(self._cluster, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as error:  # ValueError: a malformed address
            if self._cluster is not None:
                self._cluster.close()
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise ClusterError(f"cannot reach the Dask cluster {cluster}: {first}") from None
        # its raw "Failed to reconnect to scheduler" line: the run says it in one of its own
        logging.getLogger("distributed.client").setLevel(logging.CRITICAL)
        return connect(distributed, cluster, stop)

    @property
    def slots(self) -> int:  # type: ignore[override]
        """The threads of the workers that can play (one game each), read again now and then:
        workers come and go."""
        if time.monotonic() - self._slots_read > SLOTS_EVERY and not self._closed:
            self._refresh_workers()
        return self._slots

    def change_field(self, change: FieldChange) -> dict[str, str]:
        """New bots travel as snapshots with their games, like the first ones; the workers learn
        them from the next task that names them. A bot whose snapshot cannot be taken is
        refused. Every worker closes a retired bot's warm processes now, or after the game
        it plays; its games submitted before still travel and play (on a fresh process)."""
        bots = dict(self.remote.bots)
        refused: dict[str, str] = {}
        taken: dict[str, Any] = {}
        for name, spec in change.added.items():
            try:
                self._snapshots[name], bots[name] = take_snapshot(spec, name)
                taken[name] = spec
            except SnapshotError as error:
                refused[name] = str(error)
        self.setup = self.setup.changed(replace(change, added=taken))
        self.remote = RemoteSetup.of(self.remote.run, bots, self.setup)
        if change.retired or taken:
            self._on_workers(_field_changed, tuple(change.retired), tuple(taken))
        return refused

    def submit(self, game: ScheduledGame) -> None:
        self._queue.append(game)
        self._send()

    def _send(self) -> None:
        """Submit the queued games to the workers that can play them (none: they wait, and the
        operator is told once, until some worker can play again)."""
        if self._queue and not self._usable and not self._waiting:
            self._waiting = True
            self._notes.append(f"waiting for workers: {self._address} has none that can play "
                               "(Ctrl-C to stop)")
        # not while the client reconnects: a game sent then came back cancelled a second time
        # (a second "will be played again" note for the same loss)
        while (self._queue and self._usable and self._stopped_at is None
               and self._client.status == "running"):
            self._waiting = False
            self._submit(self._queue.pop(0))

    def _submit(self, game: ScheduledGame) -> None:
        try:
            # loose: should every such worker be gone, another takes the game, and refuses it
            # if its arena differs (`play_remote`)
            future = self._client.submit(
                play_remote, game, self.remote, self._snapshots[game.first],
                self._snapshots[game.second], pure=False,
                key=f"arena-game-{game.game_id}-{uuid.uuid4().hex[:8]}",
                workers=sorted(self._usable), allow_other_workers=True,
            )
        except Exception as error:  # e.g. the scheduler is gone: stop the run
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            self._unsent.append(Outcome(game, OutcomeKind.ERROR,
                                        detail=f"cannot submit it to the cluster: {first}"))
            return
        self._games[future.key] = game
        self._done.add(future)

    def results(self, timeout: float) -> list[Outcome]:
        if self._unsent:
            unsent, self._unsent = self._unsent, []
            return unsent
        if self._stopped_at is not None and self._queue:  # never sent: played next run
            queued, self._queue = self._queue, []
            return [Outcome(game, OutcomeKind.ABORTED) for game in queued]
        if time.monotonic() - self._slots_read > SLOTS_EVERY and not self._closed:
            self._refresh_workers()
        self._send()
        deadline = time.monotonic() + timeout
        while not self._done.has_ready() and time.monotonic() < deadline:
            if self._client.status in ("closing", "closed"):
                if self._stopped_at is not None:  # after a stop: nothing more will come back
                    return self._give_up()
                self._lost_cluster()
            if self._stopped_at is not None and time.monotonic() - self._stopped_at > STOP_GRACE:
                return self._give_up()
            with self._done.thread_condition:
                self._done.thread_condition.wait(timeout=min(0.05, timeout))
        outcomes = [self._outcome(future, result)
                    for future, result in self._done.next_batch(block=False)]
        return [outcome for outcome in outcomes if outcome is not None]

    def _outcome(self, future: Any, result: Any) -> Outcome | None:
        """The outcome of a finished task; None for a game refused by its worker (queued again)."""
        game = self._games.pop(future.key)
        if future.status == "finished" and isinstance(result, RemoteResult):
            code, refused = getattr(result, "code", ""), getattr(result, "refused", "")
            if refused or code != self.remote.code:  # another arena: its game is not ours
                address = getattr(result, "worker", "") or self._worker_of(future, result)
                self._refuse(address, refused or mismatch_message(address, code, self.remote.code))
                self._queue.insert(0, game)
                return None
            self._write_logs(result.logs)
            return result.outcome
        error = future.exception() if future.status == "error" else None
        if future.status == "cancelled" or error is None:
            kind = OutcomeKind.ABORTED if self._stopped_at is not None else OutcomeKind.LOST
            return Outcome(game, kind, detail=f"its task was {future.status} by the cluster")
        if isinstance(error, self._distributed.KilledWorker):
            return Outcome(game, OutcomeKind.LOST, detail=f"Dask gave up on it: {error}")
        text = "".join(traceback.format_exception_only(type(error), error)).strip()
        if isinstance(error, ImportError):
            text += " (is the arena installed on every worker?)"
        return Outcome(game, OutcomeKind.ERROR, detail=f"on the cluster: {text}")

    def _worker_of(self, future: Any, result: Any) -> str:
        """The worker that ran a task whose result does not say (an older arena's)."""
        row = getattr(getattr(result, "outcome", None), "row", None) or {}
        if row.get("worker"):
            return str(row["worker"])
        try:
            return next(iter(self._client.who_has(future).get(future.key, ())), "")
        except Exception:
            return ""

    def _write_logs(self, logs: Mapping[str, bytes]) -> None:
        for name, data in logs.items():
            try:
                self.setup.log_dir.mkdir(parents=True, exist_ok=True)
                (self.setup.log_dir / Path(name).name).write_bytes(data)
            except OSError:
                pass  # a log is a convenience; the game is what must be stored

    def _give_up(self) -> list[Outcome]:
        """After a stop, games whose workers do not answer come back ABORTED (played next run)."""
        with self._done.lock:
            pending = [f for f in self._done.futures if f.key in self._games]
            self._done.futures.clear()
        try:
            self._client.cancel(pending)
        except Exception:  # the scheduler is gone (ClosedClientError): nothing left to cancel
            pass
        return [Outcome(self._games.pop(f.key), OutcomeKind.ABORTED) for f in pending]

    def _lost_cluster(self) -> None:
        """The client gave up on the scheduler (Dask retries for 30 s): the games out there
        will never come back, so the run ends here, with one line, rather than wait forever."""
        raise ClusterError(
            f"lost the Dask scheduler ({self._address}): it stopped answering, and "
            f"{len(self._games)} game{'s' if len(self._games) != 1 else ''} in play there "
            "will be played again; the stored games are kept: start the scheduler and run the "
            "same command again to resume")

    def stop(self) -> None:
        if self._stopped_at is None:
            self._stopped_at = time.monotonic()
            self._on_workers(_stop_run)

    def close(self) -> None:
        if self._closed:
            return
        self.stop()
        self._closed = True
        try:
            self._client.cancel(list(self._done.futures))
            # the warm bots end before we leave, but a silent worker does not hold us for ever
            closing = threading.Thread(target=self._on_workers, args=(_close_run,),
                                       kwargs={"wait": True}, daemon=True)
            closing.start()
            closing.join(CLOSE_WAIT)
            self._client.close(timeout=10)
        except Exception:  # closing must finish even if the scheduler is gone
            pass
        if self._cluster is not None:
            self._cluster.close(timeout=30)

    def _on_workers(self, function: Any, *args: Any, wait: bool = False) -> None:
        """`function(run, *args)` on the workers that play this run (an arena function: a
        worker that cannot import arena would fail to unpickle it, and Dask close it)."""
        if not self._usable:
            return
        try:
            # only those still in the cluster: asking a killed one waited out Dask's connect
            # timeout (30 s) at a stop and again at the close
            here = set(self._client.nthreads())
            workers = sorted(set(self._usable) & here)
            if workers:
                self._client.run(function, self.remote.run, *args, wait=wait,
                                 on_error="ignore", workers=workers)
        except Exception:  # a worker that is gone has nothing to stop
            pass


# -- the worker side ---------------------------------------------------------------------------
class _WorkerRun:
    """One run's state on one worker: a stop flag and a player pool per thread in use."""

    def __init__(self, remote: RemoteSetup, scratch: Path, threads: int | None = None) -> None:
        self.remote = remote
        self.stop = threading.Event()
        self.log_dir = scratch / "arena-logs" / remote.run
        self.specs: dict[str, Any] = {}  # display name -> this worker's BotSpec
        # shared by this run's pools, and filled by every task: a league's field grows
        self.policies: dict[str, Any] = dict(remote.setup.policies)
        # following (`affinity.follows`) is this machine's to decide: whether this worker's
        # games (its threads) fill its CPUs, not the coordinator's concurrency and cores
        self.setup = replace(remote.setup, specs=self.specs, policies=self.policies,
                             log_dir=self.log_dir,
                             follow=threads is not None and affinity.follows(threads))
        self._pools = 0  # pools made: each follows its own core in turn
        self.idle: list[PlayerPool] = []
        self.retired: set[str] = set()  # bots that left the field: never kept warm again
        self.busy = 0
        self.used = time.monotonic()
        self.closed = False
        self.lock = threading.Lock()

    def take(self) -> PlayerPool:
        with self.lock:
            self.busy += 1
            self.used = time.monotonic()
            if self.idle:
                pool = self.idle.pop()
            else:
                pool = PlayerPool(self.setup)
                pool.home_core = affinity.core_of(self._pools,
                                                  affinity.follow_cores(self.setup.follow))
                self._pools += 1
            retired = tuple(self.retired & pool.warm())
        if retired:  # the field changed while the pool waited: no game meets a retired process
            pool.retire(retired)
        return pool

    def give_back(self, pool: PlayerPool) -> None:
        with self.lock:
            self.busy -= 1
            self.used = time.monotonic()
            retired = tuple(self.retired & pool.warm())
            closed = self.closed
            if not closed and not retired:
                self.idle.append(pool)
                return
        if closed:
            pool.close()  # the run was closed while this game played
            return
        # a game of a retired bot submitted before its retirement: played, then not kept
        pool.retire(retired)  # not change_field: the pools share the run's specs dict
        with self.lock:
            if not self.closed:
                self.idle.append(pool)
                return
        pool.close()

    def change_field(self, retired: tuple[str, ...], added: tuple[str, ...]) -> list:
        """Note a change of the field; returns the idle pools' players of the retired bots, taken
        out of them for the caller to close (busy pools close theirs when given back). An added
        bot that this worker knew under the same name is learned again from its next snapshot.
        Quick, so that it runs on the worker's event loop, in the order the changes came."""
        with self.lock:
            self.retired.update(retired)
            self.retired.difference_update(added)
            stale = [name for name in added if self.specs.pop(name, None) is not None]
            return [player for pool in self.idle for player in pool.detach((*retired, *stale))]

    def close(self) -> None:
        with self.lock:
            self.closed = True
            pools, self.idle = self.idle, []
        for pool in pools:
            pool.close()
        shutil.rmtree(self.log_dir, ignore_errors=True)


_runs: dict[str, _WorkerRun] = {}
_stopped: set[str] = set()  # runs told to stop: their games that start here now are not played
_runs_lock = threading.Lock()


_reaper: threading.Thread | None = None


def _worker_run(remote: RemoteSetup, scratch: Path) -> _WorkerRun:
    global _reaper
    with _runs_lock:
        run = _runs.get(remote.run)
        if run is None:
            run = _runs[remote.run] = _WorkerRun(remote, scratch, _this_worker_threads())
            if remote.run in _stopped:
                run.stop.set()
            _sweep_cgroups()
        if _reaper is None:
            _reaper = threading.Thread(target=_reap_forever, name="arena-reaper", daemon=True)
            _reaper.start()
    return run


def _sweep_cgroups() -> None:
    """As a run starts here: remove the bot cgroups of arena processes that are gone (a worker
    of this machine killed mid-game left them; a worker that lives on swept only once, at its
    first probe)."""
    from arena import cgroup

    try:
        cgroup.probe()  # the first probe sweeps too
        cgroup.sweep_stale()
    except Exception:  # a convenience: never a reason not to play
        pass


def run_token(log_dir: Path) -> str:
    """A run's name on the workers: where its results live (this machine, that folder), then a
    part of its own, so that a later run of the same results can close this one's leftovers."""
    import socket

    origin = hashlib.sha256(f"{socket.gethostname()}:{Path(log_dir).resolve()}".encode())
    return f"{origin.hexdigest()[:16]}-{uuid.uuid4().hex}"


def _same_results(run: str, other: str) -> bool:
    return run != other and run.partition("-")[0] == other.partition("-")[0]


def reap_silent_runs(now: float) -> list[str]:
    """Close the warm bots of runs idle since `now - RUN_IDLE` (their coordinator was killed,
    or lost the cluster, before it could close them); returns their tokens."""
    with _runs_lock:
        silent = [r for r in _runs.values() if not r.busy and now - r.used > RUN_IDLE]
        for run in silent:
            del _runs[run.remote.run]
    for run in silent:
        run.close()
    return [run.remote.run for run in silent]


def _reap_forever() -> None:
    while True:
        time.sleep(RUN_IDLE / 10)
        reap_silent_runs(time.monotonic())


# Run on every worker's event loop by `client.run` (coroutines, so that a stop need not wait
# for the workers' answers); each returns at once.
async def _stop_run(run: str) -> None:
    with _runs_lock:
        _stopped.add(run)
        state = _runs.get(run)
    if state is not None:
        state.stop.set()


async def _field_changed(run: str, retired: tuple[str, ...], added: tuple[str, ...]) -> None:
    with _runs_lock:
        state = _runs.get(run)
    if state is not None:
        detached = state.change_field(retired, added)
        if detached:  # bots take a moment to close: not on the worker's event loop
            threading.Thread(target=close_all, args=(detached,), name="arena-field-change",
                             daemon=True).start()


async def _close_earlier_runs(run: str) -> None:
    """Close the runs of the same results as `run` that are still here: their coordinator was
    killed (a live one holds the results' lock, so there is no other)."""
    with _runs_lock:
        earlier = [name for name in _runs if _same_results(run, name)]
    for name in earlier:
        await _close_run(name)


async def _close_run(run: str) -> None:
    with _runs_lock:
        _stopped.add(run)  # a game of it that starts here later is not played
        state = _runs.pop(run, None)
    if state is not None:  # bots take a moment to close: not on the worker's event loop
        state.stop.set()
        threading.Thread(target=state.close, name="arena-close-run", daemon=True).start()


def _this_worker_threads() -> int | None:
    """The threads (games at once) of the Dask worker running the current task, None if unknown."""
    from distributed import get_worker

    try:
        return int(get_worker().state.nthreads)
    except (AttributeError, ValueError, TypeError):
        return None


def _this_worker() -> tuple[str, Path]:
    """(address, scratch folder) of the Dask worker running the current task."""
    from distributed import get_worker

    worker = get_worker()
    return worker.address, Path(worker.local_directory)


def play_remote(game: ScheduledGame, remote: RemoteSetup, first: Snapshot,
                second: Snapshot) -> RemoteResult:
    """The task: one game on this worker, with its bots' snapshots; never raises for a game."""
    address, scratch = _this_worker()
    if remote.code != code_fingerprint():  # a worker that joined with another arena
        return _refusal(game, address, mismatch_message(address, code_fingerprint(), remote.code))
    if run_sandbox_mode(remote.setup.policies) == "on" and \
            (reason := worker_status(check_sandbox=True)["sandbox"]):
        # a game handed out before the probe's answer came: a start failure would blame the bot
        return _refusal(game, address, unsandboxed_message(address, reason))
    run = _worker_run(remote, scratch)
    run.policies.update(remote.setup.policies)  # bots that joined the field since the run began
    try:
        for name, snapshot in ((game.first, first), (game.second, second)):
            if name not in run.specs:
                folder = unpack(snapshot, scratch / "arena-bots")
                run.specs[name] = remote.bots[name].localize(folder)
    except SnapshotError as error:
        return RemoteResult(Outcome(game, OutcomeKind.ERROR, detail=f"worker {address}: {error}"),
                            code=code_fingerprint(), worker=address)
    except MissingProgram as error:
        return RemoteResult(_void(game, remote, f"worker {address} cannot start a bot: {error}",
                                  address), code=code_fingerprint(), worker=address)
    pool = run.take()
    try:
        outcome = play_scheduled(game, pool, run.stop)
    finally:
        run.give_back(pool)
    if outcome.row is not None:
        outcome = replace(outcome, row={**outcome.row, "worker": address})
    return RemoteResult(outcome, _take_logs(run.log_dir, game), code_fingerprint(), address)


def _refusal(game: ScheduledGame, address: str, why: str) -> RemoteResult:
    """This worker plays no game of the run: the coordinator queues the game again elsewhere."""
    return RemoteResult(Outcome(game, OutcomeKind.LOST, detail=why), code=code_fingerprint(),
                        worker=address, refused=why)


def _void(game: ScheduledGame, remote: RemoteSetup, detail: str, address: str) -> Outcome:
    """A game this worker cannot play: void (not rated, played again later), not a forfeit."""
    now = utc_now_iso()
    record = GameRecord(game.game_id, game.variant.spec, game.first, game.second, reason="void",
                        detail=detail, started_at=now, finished_at=now, void=True,
                        first_hash=remote.bots[game.first].digest,
                        second_hash=remote.bots[game.second].digest)
    return Outcome(game, OutcomeKind.DONE, row={**record.to_row(), "worker": address}, void=True,
                   detail=detail)


def _take_logs(log_dir: Path, game: ScheduledGame) -> dict[str, bytes]:
    """The game's stderr logs, removed from the worker: they belong in the coordinator's folder."""
    logs = {}
    for seat, name in ((1, game.first), (2, game.second)):
        path = log_dir / log_file_name(game.game_id, seat, name)
        try:
            logs[path.name] = path.read_bytes()
            path.unlink()
        except OSError:
            continue
    return logs


def _first_line(error: Any) -> str:
    text = str(error)
    return text.splitlines()[0] if text else type(error).__name__
