"""Games played by forked worker processes, each with its own `PlayerPool` (the default on Linux).

Each worker has its own pair of pipes: games go down one, outcomes come back on the other, so a
worker that dies mid-write can corrupt nothing but its own pipe. The coordinator watches its
workers: one that exited, was killed or was stopped (SIGSTOP, e.g. by a hostile bot) is killed
with its bots and replaced, and the games it held come back as LOST, to be played again, never
charged to a bot. Stopping is one pipe that every worker watches (closing it is seen even by a
worker whose coordinator died).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections import OrderedDict
from dataclasses import replace
from multiprocessing.connection import Connection, wait

from arena import cgroup
from arena.affinity import follow_cores, free_core, pin_thread
from arena.proctree import die_with_parent
from arena.tournament.executor import FieldChange, GameExecutor, Outcome, OutcomeKind, WorkerSetup
from arena.tournament.schedule import ScheduledGame
from arena.tournament.worker import PlayerPool, play_scheduled

HEALTH_EVERY = 0.25  # seconds between checks that every worker is alive and running
CLOSE_WAIT = 15.0  # seconds the workers get to close their bots before they are killed


def fork_available() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


class _Worker:
    """The coordinator's handle on one worker process."""

    def __init__(self, wid: int, process: multiprocessing.process.BaseProcess,
                 tasks: Connection, outcomes: Connection, warm_cap: int) -> None:
        self.wid = wid
        self.process = process
        self.tasks = tasks
        self.outcomes = outcomes
        self.inflight: dict[str, ScheduledGame] = {}
        self.warm: OrderedDict[str, None] = OrderedDict()  # what its pool most likely holds
        self.warm_cap = warm_cap
        # its children (pid, start time) at the last check: killed with it if it dies
        self.bots: list[tuple[int, str]] = []
        self.core: int | None = None  # the CPU it and its bots are pinned to (affinity)

    def send(self, game: ScheduledGame) -> None:
        self.inflight[game.game_id] = game
        for name in game.bots:
            self.warm[name] = None
            self.warm.move_to_end(name)
        while len(self.warm) > self.warm_cap:
            self.warm.popitem(last=False)
        self.tasks.send(game)

    def health(self) -> str:
        """'' if running; else what is wrong."""
        if not self.process.is_alive():
            return f"exited ({_exit_text(self.process)})"
        state = _proc_state(self.process.pid)
        if state in ("T", "t"):
            return "stopped by a signal"
        return ""


class ProcessExecutor(GameExecutor):
    def __init__(self, setup: WorkerSetup, workers: int) -> None:
        self.slots = max(1, workers)
        self.setup = setup
        self._ctx = multiprocessing.get_context("fork")
        self._stop_r, self._stop_w = os.pipe()
        self._stopped = False
        self._closed = False
        self._next_wid = 0
        self._workers: dict[int, _Worker] = {}
        self._checked = time.monotonic()
        self._lost: list[Outcome] = []  # games of workers found dead while submitting
        for _ in range(self.slots):
            self._spawn()

    # -- workers --------------------------------------------------------------------------------
    def _spawn(self) -> _Worker:
        wid = self._next_wid
        self._next_wid += 1
        task_r, task_w = self._ctx.Pipe(duplex=False)
        out_r, out_w = self._ctx.Pipe(duplex=False)
        # affinity: round-robin over the cores; a replacement takes the core its predecessor left
        # (following, `setup.follow`: the core its bots follow, the worker itself left free)
        core = free_core(self.setup.cores or follow_cores(self.setup.follow),
                         (w.core for w in self._workers.values()))
        process = self._ctx.Process(
            target=_worker_main,
            args=(task_r, out_w, self.setup, self._stop_r, self._stop_w, core),
            name=f"arena-worker-{wid}", daemon=True,
        )
        process.start()
        # our copies of the child's ends: closed, so that its death reads as EOF here
        task_r.close()
        out_w.close()
        worker = _Worker(wid, process, task_w, out_r, self.setup.warm_cap)
        worker.core = core
        self._workers[wid] = worker
        return worker

    def _retire(self, worker: _Worker, why: str) -> list[Outcome]:
        """Kill a failed worker and its bots; its games come back as LOST."""
        self._workers.pop(worker.wid, None)
        _kill_worker(worker.process, worker.bots)
        for conn in (worker.tasks, worker.outcomes):
            conn.close()
        detail = f"worker process {worker.process.pid} {why}"
        lost = [Outcome(game, OutcomeKind.LOST, detail=detail) for game in worker.inflight.values()]
        if not self._stopped and not self._closed:
            self._spawn()
        return lost

    def _check_health(self) -> list[Outcome]:
        self._checked = time.monotonic()
        lost: list[Outcome] = []
        children = _children_by_parent() if any(w.inflight for w in self._workers.values()) else {}
        for worker in list(self._workers.values()):
            why = worker.health()
            if why:
                lost += self._retire(worker, why)
            elif worker.inflight:
                worker.bots = children.get(worker.process.pid or 0, [])
        return lost

    # -- the seam -------------------------------------------------------------------------------
    def submit(self, game: ScheduledGame) -> None:
        def preference(worker: _Worker) -> tuple[int, int, int]:
            warm = sum(name in worker.warm for name in game.bots)
            return (len(worker.inflight), -warm, worker.wid)

        while True:
            worker = min(self._workers.values(), key=preference)
            try:
                worker.send(game)
                return
            except OSError:  # it died since the last check: replace it, its games come back
                self._lost += [o for o in self._retire(worker, "exited")
                               if o.game.game_id != game.game_id]

    def change_field(self, change: FieldChange) -> dict[str, str]:
        self.setup = self.setup.changed(change)  # what a replacement worker starts with
        for worker in list(self._workers.values()):
            for name in change.retired:
                worker.warm.pop(name, None)
            try:
                worker.tasks.send(change)  # read before any game submitted after it
            except OSError:
                pass  # it died: its replacement starts from the changed setup
        return {}

    def results(self, timeout: float) -> list[Outcome]:
        outcomes, self._lost = self._lost, []
        by_conn = {w.outcomes: w for w in self._workers.values()}
        ready = wait(list(by_conn), timeout=0 if outcomes else timeout) if by_conn else []
        for conn in ready:
            worker = by_conn[conn]
            try:
                while conn.poll():
                    outcome = conn.recv()
                    game = worker.inflight.pop(outcome.game.game_id, None)
                    if game is not None:  # our own game, not the copy that crossed the pipe
                        outcomes.append(replace(outcome, game=game))
            except (EOFError, OSError):
                outcomes += self._retire(worker, f"exited ({_exit_text(worker.process)})")
        if time.monotonic() - self._checked >= HEALTH_EVERY or not ready:
            outcomes += self._check_health()
        return outcomes

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            os.close(self._stop_w)

    def close(self) -> None:
        if self._closed:
            return
        self.stop()
        self._closed = True
        for worker in self._workers.values():
            try:
                worker.tasks.send(None)
            except OSError:
                pass
        deadline = time.monotonic() + CLOSE_WAIT
        for worker in self._workers.values():
            worker.process.join(timeout=max(0.1, deadline - time.monotonic()))
            if worker.process.is_alive():
                _kill_worker(worker.process)
            worker.tasks.close()
            worker.outcomes.close()
        self._workers.clear()
        os.close(self._stop_r)
        cgroup.sweep_stale()  # the bots' cgroups of a worker that was killed


def _exit_text(process: multiprocessing.process.BaseProcess) -> str:
    process.join(timeout=1)
    code = process.exitcode
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _proc_state(pid: int | None) -> str:
    fields = _stat_fields(pid or 0)
    return fields[0] if fields else ""


def _stat_fields(pid: int | str) -> list[str]:
    """/proc/PID/stat after the command name: [state, ppid, ...]; [] if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rpartition(")")[2].split()
    except OSError:
        return []


def _children_by_parent() -> dict[int, list[tuple[int, str]]]:
    """{ppid: [(pid, start time)]}; the start time tells a pid from a later reuse of it."""
    found: dict[int, list[tuple[int, str]]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and len(fields := _stat_fields(entry)) > 19:
            found.setdefault(int(fields[1]), []).append((int(entry), fields[19]))
    return found


def _kill_worker(process: multiprocessing.process.BaseProcess,
                 known: list[tuple[int, str]] | None = None) -> None:
    """SIGKILL a worker and the process groups of its bots (each bot leads its own group): its
    children now, or, if it is already dead, those seen at the last check (an orphaned bot
    that ignores its closed stdin would otherwise run on)."""
    if process.is_alive():
        known = _children_by_parent().get(process.pid or 0, [])
    bots = [pid for pid, start in known or []
            if len(fields := _stat_fields(pid)) > 19 and fields[19] == start]
    for pid in bots:
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
            except OSError:
                pass
    if process.is_alive():
        process.kill()
    process.join(timeout=5)


def _worker_main(tasks: Connection, outcomes: Connection, setup: WorkerSetup, stop_r: int,
                 stop_w: int, core: int | None = None) -> None:
    """A worker process: plays the games it is sent, one `Outcome` back for each."""
    if core is not None and setup.cores:  # before any thread or bot starts: they inherit it
        pin_thread({core})
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)  # the coordinator decides when to stop
    _die_with_parent()
    os.close(stop_w)
    stop = threading.Event()

    def watch() -> None:
        try:
            while os.read(stop_r, 64):
                pass
        except OSError:
            pass
        stop.set()

    threading.Thread(target=watch, daemon=True).start()
    pool = PlayerPool(setup)
    pool.home_core = core
    try:
        while True:
            try:
                game = tasks.recv()
            except EOFError:
                break
            if game is None:
                break
            if isinstance(game, FieldChange):
                pool.change_field(game)
                continue
            outcomes.send(play_scheduled(game, pool, stop))
    finally:
        pool.close()
        outcomes.close()


def _die_with_parent() -> None:
    """Linux: get SIGKILL when the coordinator dies (even by SIGKILL), so nothing lingers."""
    die_with_parent()
    if os.getppid() == 1:  # the parent is already gone
        os._exit(1)
