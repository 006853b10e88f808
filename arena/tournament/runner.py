"""The tournament runner: N games at once, one writer, clean stops and resume.

Threads: the coordinator (the calling thread) is the only one that writes the store; N workers
take games from the pending list and play them with `arena.referee.play_game`. Each worker keeps
its own `Player` objects (a bot's process lives across that worker's consecutive games of the
bot) and prefers, within a short window of the schedule, a game whose bots it already runs.

SIGINT/SIGTERM set the stop event: no new games start, running games are aborted by the referee
(bots killed, nothing recorded), every Player is closed, and finished games stay in the store.
Running the same file again plays only what is missing.
"""

from __future__ import annotations

import os
import queue
import signal
import threading
import time
import traceback
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from arena.tournament.config import TournamentConfig
from arena.tournament.progress import FORFEIT_REASONS, Progress
from arena.tournament.schedule import ScheduledGame, build_schedule
from arena.tournament.store import LOG_DIR, RunLock, Store, StoreError, move_aside

WORKER_QUEUE = 2  # games sent to a worker ahead of its results
PLAYERS_PER_WORKER = 8  # bot processes a worker keeps warm (least recently used are closed)


class RunError(RuntimeError):
    """A run that cannot start or went wrong (one-line message)."""


@dataclass
class RunResult:
    results_dir: Path
    total: int  # games in the schedule
    done: int  # games of the schedule that are stored (finished)
    played: int  # games played and stored by this run
    forfeits: int = 0
    stopped_by: int | None = None  # the signal that stopped the run, if any
    elapsed: float = 0.0
    backup: Path | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.done >= self.total and self.stopped_by is None and self.error is None


class _Pending:
    """The games still to play, in schedule order, handed out under a lock."""

    def __init__(self, games: list[ScheduledGame], window: int) -> None:
        self.games = list(games)
        self.window = max(1, window)
        self.lock = threading.Lock()

    def take(self, warm: set[str]) -> ScheduledGame | None:
        with self.lock:
            if not self.games:
                return None
            best, best_score = 0, -1
            for index, game in enumerate(self.games[: self.window]):
                score = (game.first in warm) + (game.second in warm)
                if score > best_score:
                    best, best_score = index, score
                    if score == 2:
                        break
            return self.games.pop(best)

    def __len__(self) -> int:
        with self.lock:
            return len(self.games)


class Runner:
    def __init__(
        self,
        config: TournamentConfig,
        *,
        fresh: bool = False,
        progress_factory: Callable[..., Progress] | None = None,
        install_signals: bool = True,
        mode: str = "process",
    ) -> None:
        if mode not in ("process", "thread"):
            raise ValueError(f"mode must be 'process' or 'thread', got {mode!r}")
        if mode == "process":
            import multiprocessing

            if "fork" not in multiprocessing.get_all_start_methods():  # pragma: no cover
                mode = "thread"
        self.mode = mode
        self.config = config
        self.fresh = fresh
        self.progress_factory = progress_factory or Progress
        self.install_signals = install_signals
        self.stop = threading.Event()
        self.stopped_by: int | None = None
        self.results: queue.Queue = queue.Queue()
        self.results_dir = Path(config.output)

    # -- signals --------------------------------------------------------------------------------
    def _on_signal(self, signum, frame) -> None:  # noqa: ARG002
        if self.stopped_by is None:
            self.stopped_by = signum
        self.stop.set()

    def request_stop(self, signum: int = signal.SIGINT) -> None:
        self._on_signal(signum, None)

    # -- main -----------------------------------------------------------------------------------
    def run(self) -> RunResult:
        lock = RunLock(self.results_dir)
        lock.acquire()
        try:
            backup = move_aside(self.results_dir) if self.fresh else None
            store = Store(self.results_dir)
            try:
                result = self._run(store)
                result.backup = backup
                return result
            finally:
                store.close()
        finally:
            lock.release()

    def _prepare(self, store: Store) -> tuple[list[ScheduledGame], list[ScheduledGame], list[str]]:
        config = self.config
        problems = store.conflicts(config.fingerprint())
        if problems:
            raise StoreError(
                f"{self.results_dir} holds games that would not be comparable with "
                f"{config.path.name}: {'; '.join(problems)}. Rerun with --fresh to start over "
                "(the old results are moved to a backup folder, not deleted), or choose another "
                "output directory."
            )
        store.save_settings(config.settings(), config.fingerprint())
        store.upsert_bots(config.bots)
        schedule = build_schedule(config)
        finished = store.finished_ids()
        pending = [g for g in schedule if g.game_id not in finished]
        notes = []
        scheduled_ids = {g.game_id for g in schedule}
        extra = len(store.all_ids() - scheduled_ids)
        if extra:
            notes.append(
                f"note: {extra} stored games are not in this schedule (a bot, variant or games "
                "were removed); they are kept in the results"
            )
        return schedule, pending, notes

    def _run(self, store: Store) -> RunResult:
        config = self.config
        schedule, pending, notes = self._prepare(store)
        total = len(schedule)
        done_before = total - len(pending)
        progress = self.progress_factory(
            total, done_before, [b.name for b in config.bots], title=config.name
        )
        progress.preload(store.results())
        result = RunResult(self.results_dir, total, done_before, 0, notes=notes)
        started = time.monotonic()
        old_handlers = {}
        if self.install_signals and threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                old_handlers[signum] = signal.signal(signum, self._on_signal)
        pool = None
        try:
            if pending and self.mode == "process":
                # fork the workers before any thread of ours exists (the live display has one)
                pool = _ProcessPool(self, min(max(1, config.concurrency), len(pending)))
            progress.start()
            for note in notes:
                progress.note(note)
            if pool is not None:
                self._play_processes(pool, store, pending, progress, result)
            elif pending and not self.stop.is_set():
                self._play(store, pending, progress, result)
        finally:
            if pool is not None:
                pool.shutdown()
            progress.stop()
            for signum, handler in old_handlers.items():
                signal.signal(signum, handler)
            store.touch()
        result.stopped_by = self.stopped_by if result.done < total else None
        result.elapsed = time.monotonic() - started
        return result

    def _play(self, store: Store, pending: list[ScheduledGame], progress: Progress,
              result: RunResult) -> None:
        workers_n = max(1, min(self.config.concurrency, len(pending)))
        work = _Pending(pending, window=2 * workers_n)
        threads = [
            threading.Thread(target=self._worker, args=(work,), name=f"arena-worker-{i}",
                             daemon=True)
            for i in range(workers_n)
        ]
        for thread in threads:
            thread.start()
        versions: dict[str, str] = {}
        alive = len(threads)
        while alive:
            try:
                kind, game, payload = self.results.get(timeout=0.25)
            except queue.Empty:
                continue
            if kind == "exit":
                alive -= 1
            elif kind == "error":
                if result.error is None:
                    result.error = f"internal error in game {game.game_id}: {payload}"
                    progress.note(result.error)
                self.stop.set()
            elif kind == "done":
                self._finished(store, game, payload.to_row(), payload.void, progress, result,
                               versions)
        for thread in threads:
            thread.join(timeout=30)

    def _finished(self, store: Store, game: ScheduledGame, row: dict, void: bool,
                  progress: Progress, result: RunResult, versions: dict[str, str]) -> None:
        row = self._store_game(store, game, row, void)
        result.done += 1
        result.played += 1
        if row.get("reason") in FORFEIT_REASONS:
            result.forfeits += 1
        for seat in ("first", "second"):
            name, version = row[seat], row.get(f"{seat}_version") or ""
            if version and versions.get(name) != version:
                versions[name] = version
                store.set_bot_version(name, version)
        progress.game_done(row)

    def _play_processes(self, pool: _ProcessPool, store: Store, pending: list[ScheduledGame],
                        progress: Progress, result: RunResult) -> None:
        work = _Pending(pending, window=2 * len(pool.workers))
        versions: dict[str, str] = {}
        # Each worker gets a second game queued behind the one it plays, so that it never
        # waits while the coordinator commits another worker's result.
        for _ in range(WORKER_QUEUE):
            for wid in range(len(pool.workers)):
                pool.assign(wid, work)
        while pool.busy():
            if self.stop.is_set():
                pool.stop_all()
            try:
                kind, wid, payload = pool.results.get(timeout=0.2)
            except queue.Empty:
                lost = pool.check_alive()
                if lost and result.error is None:
                    result.error = f"a worker process died unexpectedly ({lost})"
                    progress.note(result.error)
                    self.stop.set()
                continue
            queued = pool.inflight.get(wid)
            game = queued.popleft() if queued and kind != "exit" else None
            if kind == "error" and game is not None:
                if result.error is None:
                    result.error = f"internal error in game {game.game_id}: {payload}"
                    progress.note(result.error)
                self.stop.set()
            # hand out the next game first: the worker plays while the result is committed
            if kind == "exit":
                pool.exited(wid)
            elif self.stop.is_set():
                pool.finish(wid)
            else:
                pool.assign(wid, work)
            if kind == "done" and game is not None:
                row, void = payload
                if not (void and self.stop.is_set()):
                    self._finished(store, game, row, void, progress, result, versions)

    def _store_game(self, store: Store, game: ScheduledGame, row: dict, void: bool) -> dict:
        row = dict(row)
        row["game_id"] = game.game_id
        row["variant"] = game.variant.spec
        row["first"], row["second"] = game.first, game.second
        if void:
            row["result"] = None
        if not row.get("opening"):
            row["opening"] = game.opening_text
        seq = store.add_game(row, pair_id=game.pair_id, round=game.round)
        row["seq"] = seq
        row["pair_id"] = game.pair_id
        return row

    def _worker(self, work: _Pending) -> None:
        from arena.referee import GameAborted, Player, play_game

        config = self.config
        log_dir = self.results_dir / LOG_DIR
        pool: OrderedDict[str, Player] = OrderedDict()

        def player(name: str) -> Player:
            if name in pool:
                pool.move_to_end(name)
                return pool[name]
            entry = config.bot(name)
            pool[name] = Player(
                entry.spec, display_name=name, log_dir=log_dir,
                restart_every_game=config.restart == "every-game",
            )
            while len(pool) > PLAYERS_PER_WORKER:
                _, old = pool.popitem(last=False)
                _close(old)
            return pool[name]

        try:
            while not self.stop.is_set():
                game = work.take(set(pool))
                if game is None:
                    break
                first = player(game.first)
                second = player(game.second)
                try:
                    record = play_game(
                        game.variant, first, second, config.time_control,
                        opening=game.opening, game_id=game.game_id, stop=self.stop,
                    )
                except GameAborted:
                    break
                except Exception as error:  # a bug, not a bot's fault: stop cleanly
                    detail = "".join(traceback.format_exception_only(type(error), error)).strip()
                    self.results.put(("error", game, detail))
                    break
                if self.stop.is_set() and getattr(record, "void", False):
                    break  # a game cut short by the stop is not a finished game
                self.results.put(("done", game, record))
        finally:
            for p in pool.values():
                _close(p)
            self.results.put(("exit", None, None))


def _close(player) -> None:
    try:
        player.close()
    except Exception:  # noqa: BLE001 - closing must not stop the others from closing
        pass


class _ProcessPool:
    """Worker processes (forked), each with up to WORKER_QUEUE games sent; the coordinator
    assigns the games and is told of each one's end, in the order they were sent."""

    def __init__(self, runner: Runner, count: int) -> None:
        import multiprocessing

        config = runner.config
        ctx = multiprocessing.get_context("fork")
        self.results = ctx.Queue()
        # Stop signal: the workers wait for EOF on this pipe (also seen if the coordinator dies).
        # (A multiprocessing.Event can deadlock `set()` when a waiter has exited.)
        stop_r, self.stop_w = os.pipe()
        self.tasks = [ctx.SimpleQueue() for _ in range(count)]
        specs = {b.name: b.spec for b in config.bots}
        args = (specs, config.time_control, config.restart == "every-game",
                runner.results_dir / LOG_DIR, (stop_r, self.stop_w), self.results)
        self.workers = [
            ctx.Process(target=_worker_process, args=(wid, self.tasks[wid], *args),
                        name=f"arena-worker-{wid}", daemon=True)
            for wid in range(count)
        ]
        self.warm: list[OrderedDict[str, None]] = [OrderedDict() for _ in range(count)]
        self.inflight: dict[int, deque[ScheduledGame]] = {}  # per worker, in the order sent
        self.open = set(range(count))  # workers that have not said "exit"
        self.finished: set[int] = set()  # workers told to finish
        for worker in self.workers:
            worker.start()
        os.close(stop_r)

    def assign(self, wid: int, work: _Pending) -> None:
        game = work.take(set(self.warm[wid]))
        if game is None:
            self.finish(wid)
            return
        warm = self.warm[wid]
        for name in game.bots:
            warm[name] = None
            warm.move_to_end(name)
        while len(warm) > PLAYERS_PER_WORKER:
            warm.popitem(last=False)
        self.inflight.setdefault(wid, deque()).append(game)
        self.tasks[wid].put((game.variant, game.first, game.second, game.opening, game.game_id))

    def finish(self, wid: int) -> None:
        if wid not in self.finished:
            self.finished.add(wid)
            self.tasks[wid].put(None)

    def _signal_stop(self) -> None:
        if self.stop_w is not None:
            os.close(self.stop_w)
            self.stop_w = None

    def stop_all(self) -> None:
        self._signal_stop()
        for wid in self.open:
            if not self.inflight.get(wid):
                self.finish(wid)

    def exited(self, wid: int) -> None:
        self.open.discard(wid)
        self.inflight.pop(wid, None)

    def busy(self) -> bool:
        return bool(self.open)

    def check_alive(self) -> str:
        lost = []
        for wid in list(self.open):
            worker = self.workers[wid]
            if not worker.is_alive():
                lost.append(f"worker {wid}: exit code {worker.exitcode}")
                self.exited(wid)
        return ", ".join(lost)

    def shutdown(self) -> None:
        self._signal_stop()
        for wid in range(len(self.workers)):
            self.finish(wid)
        deadline = time.monotonic() + 15
        for worker in self.workers:
            worker.join(timeout=max(0.1, deadline - time.monotonic()))
            if worker.is_alive():
                worker.kill()
                worker.join(timeout=5)


def _worker_process(wid, tasks, specs, time_control, restart_every_game, log_dir, stop_pipe,
                    results) -> None:
    """A worker process: plays the games it is sent, keeps its bots' processes warm."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator decides when to stop
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _die_with_parent()
    from arena.referee import GameAborted, Player, play_game

    stop = threading.Event()
    stop_r, stop_w = stop_pipe
    os.close(stop_w)

    def watch() -> None:
        try:
            while os.read(stop_r, 64):
                pass
        except OSError:
            pass
        stop.set()

    threading.Thread(target=watch, daemon=True).start()
    pool: OrderedDict[str, Player] = OrderedDict()

    def player(name: str) -> Player:
        if name in pool:
            pool.move_to_end(name)
            return pool[name]
        pool[name] = Player(specs[name], display_name=name, log_dir=log_dir,
                            restart_every_game=restart_every_game)
        while len(pool) > PLAYERS_PER_WORKER:
            _close(pool.popitem(last=False)[1])
        return pool[name]

    try:
        while True:
            task = tasks.get()
            if task is None:
                break
            variant, first_name, second_name, opening, game_id = task
            if stop.is_set():
                results.put(("aborted", wid, None))
                continue
            first, second = player(first_name), player(second_name)
            try:
                record = play_game(variant, first, second, time_control, opening=opening,
                                   game_id=game_id, stop=stop)
            except GameAborted:
                results.put(("aborted", wid, None))
                continue
            except Exception as error:  # a bug, not a bot's fault
                detail = "".join(traceback.format_exception_only(type(error), error)).strip()
                results.put(("error", wid, detail))
                continue
            results.put(("done", wid, (record.to_row(), bool(record.void))))
    finally:
        for p in pool.values():
            _close(p)
        results.put(("exit", wid, None))
        results.close()
        results.join_thread()


def _die_with_parent() -> None:
    """Linux: get SIGKILL when the coordinator dies (even by SIGKILL), so nothing lingers."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass
    if os.getppid() == 1:  # the parent is already gone
        os._exit(1)


def run_tournament(config: TournamentConfig, **kwargs) -> RunResult:
    return Runner(config, **kwargs).run()
