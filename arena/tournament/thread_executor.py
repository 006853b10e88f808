"""Games played by threads of this process: each thread owns a `PlayerPool`.

Used where `fork` is not available, and in tests; the referee and the bots' I/O release the GIL,
so threads play concurrently, but a slow pure-Python referee shares one core.
"""

from __future__ import annotations

import queue
import threading

from arena.affinity import core_of, follow_cores, pin_thread
from arena.tournament.executor import FieldChange, GameExecutor, Outcome, WorkerSetup
from arena.tournament.schedule import ScheduledGame
from arena.tournament.worker import PlayerPool, play_scheduled


class ThreadExecutor(GameExecutor):
    def __init__(self, setup: WorkerSetup, workers: int) -> None:
        self.slots = max(1, workers)
        # each game with the number of field changes made before it was submitted
        self._tasks: queue.SimpleQueue[tuple[int, ScheduledGame] | None] = queue.SimpleQueue()
        self._outcomes: queue.SimpleQueue[Outcome] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._changes: list[FieldChange] = []  # every field change, in order
        self._threads = [
            threading.Thread(target=self._work,
                             args=(PlayerPool(setup),
                                   core_of(i, setup.cores or follow_cores(setup.follow))),
                             name=f"arena-worker-{i}", daemon=True)
            for i in range(self.slots)
        ]
        for thread in self._threads:
            thread.start()
        self._closed = False

    def _work(self, pool: PlayerPool, core: int | None) -> None:
        if core is not None and pool.setup.cores:  # it and every bot it starts run on `core`
            pin_thread({core})
        pool.home_core = core  # following (`setup.follow`): its bots' core, the thread free
        applied = 0  # field changes this thread's pool has taken
        try:
            while (task := self._tasks.get()) is not None:
                known, game = task
                # the changes made before the game was submitted, not later ones: a bot retired
                # after it was queued still plays it (the pool belongs to this thread alone)
                with self._lock:
                    changes = self._changes[applied:known]
                for change in changes:
                    pool.change_field(change)
                applied = max(applied, known)
                self._outcomes.put(play_scheduled(game, pool, self._stop))
        finally:
            pool.close()

    def submit(self, game: ScheduledGame) -> None:
        with self._lock:
            known = len(self._changes)
        self._tasks.put((known, game))

    def change_field(self, change: FieldChange) -> dict[str, str]:
        # each worker thread applies it to its own pool before its first game submitted after
        with self._lock:
            self._changes.append(change)
        return {}

    def results(self, timeout: float) -> list[Outcome]:
        try:
            outcomes = [self._outcomes.get(timeout=timeout)]
        except queue.Empty:
            return []
        while True:
            try:
                outcomes.append(self._outcomes.get_nowait())
            except queue.Empty:
                return outcomes

    def stop(self) -> None:
        self._stop.set()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        for _ in self._threads:
            self._tasks.put(None)
        for thread in self._threads:
            thread.join(timeout=60)
