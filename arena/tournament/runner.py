"""The tournament runner: N games at once, one writer, clean stops and resume.

The coordinator (the calling thread) is the only writer of the store. It hands games, in
schedule order, to a `GameExecutor` (`executor.py`: forked worker processes by default, threads
with `mode="thread"`, any other implementation through `executor_factory`) and stores each
outcome as it comes back. It reads nothing of the executor but the outcomes.

SIGINT/SIGTERM/SIGHUP stop the run: no new games start, running games are aborted by the
referee (bots killed, nothing recorded), every bot is closed, and finished games stay in the
store. Running the same file again plays only what is missing.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena import proctree, provenance
from arena.affinity import notes as affinity_notes
from arena.clock import utc_now_iso
from arena.reasons import FORFEIT_REASONS
from arena.referee import fallback_counts
from arena.reports import STANDINGS_FILES
from arena.sandbox import SandboxUnavailable, prepare_bundled, start_run
from arena.sdk import FALLBACK_INFO
from arena.solver.scope import adjudication_note
from arena.tournament.config import TournamentConfig, default_concurrency
from arena.tournament.executor import (
    GameExecutor,
    LostGames,
    Outcome,
    OutcomeKind,
    WorkerSetup,
)
from arena.tournament.progress import Progress
from arena.tournament.reporting import select_results
from arena.tournament.schedule import ScheduledGame, build_schedule, openings_notes
from arena.tournament.startwatch import StartWatch
from arena.tournament.store import (
    DB_NAME,
    LOG_DIR,
    RUN_FINISHED,
    RUN_STOPPED,
    RunLock,
    Store,
    StoreError,
    foreign_files,
    is_locked,
    move_aside,
)
from arena.tournament.voids import VoidTracker, pairing_of

WORKER_QUEUE = 2  # games submitted per executor slot: a worker never waits for the coordinator
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def install_stop_handlers(handler: Callable[[int, Any], None]) -> dict[int, Any]:
    """`handler` for each of `STOP_SIGNALS` the process does not ignore; returns the handlers
    it replaced (for `restore_handlers`). An ignored signal stays ignored: `nohup arena run`
    (SIGHUP ignored on purpose) had stopped at the logout it was started to survive."""
    saved: dict[int, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return saved
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) is signal.SIG_IGN:
            continue
        saved[signum] = signal.signal(signum, handler)
    return saved


def set_from_signal_handler(event: threading.Event) -> None:
    """Set `event` from a signal handler without waiting on its lock. `Event.set` takes the
    event's lock, and a handler runs in the main thread between any two bytecodes: inside
    another handler's `set` (a burst of Ctrl-C) it waited for a lock its own thread held, for
    good (a hung `arena run`, its bots still running). A helper thread sets it instead; waiting
    for it briefly keeps the usual case synchronous."""
    if event.is_set():
        return
    setter = threading.Thread(target=event.set, name="stop-signal", daemon=True)
    setter.start()
    setter.join(0.05)  # holds only when the interrupted code holds the lock: it goes on later


def restore_handlers(saved: dict[int, Any]) -> None:
    for signum, handler in saved.items():
        signal.signal(signum, handler)

ExecutorFactory = Callable[[WorkerSetup, int], GameExecutor]
# What is drawn from the games (reports, plots, the site): moved aside with them by --fresh, so
# nothing in the folder shows the old tournament
DERIVED_OUTPUTS = ("site", "plots", *STANDINGS_FILES, provenance.PROVENANCE_FILE, "analysis.db")


class RunError(RuntimeError):
    """A run that cannot start or went wrong (one-line message)."""


@dataclass
class RunResult:
    results_dir: Path
    total: int  # games in the schedule
    done: int  # games of the schedule that are stored (finished)
    played: int  # games played and stored by this run
    forfeits: int = 0
    starts: int = 0  # bot processes started by this run
    voids: int = 0  # void games of this run (neither bot started): stored, not done
    voids_stopped: int = 0  # of them, those of a pairing now stopped: not played again either
    skipped: int = 0  # games not played: both bots of the pairing failed to start too often
    stopped_by: int | None = None  # the signal that stopped the run, if any
    elapsed: float = 0.0
    setup: float = 0.0  # of `elapsed`, the time before the first game could start (workers, bytecode)
    backup: Path | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    # bot -> its moves the SDK played because its move function raised (`fallback_counts`)
    fallbacks: dict[str, int] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.done >= self.total and self.stopped_by is None and self.error is None


def foreign_program_notes(bots: Iterable[Any]) -> list[str]:
    """A note for each bot whose manifest runs a program outside its folder (`BotSpec.
    foreign_program`): `league submit` refuses them, a tournament's organiser decides (a folder
    sent in by someone may run another entrant's program as its own)."""
    return [f"note: {bot.name} runs {program}, outside its folder (if the folder came from "
            "someone else: another entrant's program, played as theirs?)"
            for bot in bots if (program := bot.spec.foreign_program())]


def renamed_bots(stored: Mapping[str, Any], current: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(old name, new name) of the bots that left the file while a bot with the same program,
    arguments and time came in: most likely a rename, which plays every game again (the games
    are keyed by the names), leaving the old name's games in the results as another entrant."""
    def same(fingerprint: Mapping[str, Any]) -> str:
        return json.dumps({k: fingerprint.get(k) for k in ("command", "args", "program_hash",
                                                            "time_control")}, sort_keys=True)

    gone = {same(fp): name for name, fp in stored.items() if name not in current}
    return [(gone[key], name) for name, fp in current.items()
            if name not in stored and (key := same(fp)) in gone]


def move_outputs_aside(results_dir: Path, backup: Path) -> None:
    for name in DERIVED_OUTPUTS:
        source = results_dir / name
        if source.exists():
            shutil.move(str(source), str(backup / name))


def default_executor_factory(mode: str) -> ExecutorFactory:
    """The executor of a `mode`: "process" (forked workers; threads where fork is missing)."""
    if mode not in ("process", "thread"):
        raise ValueError(f"mode must be 'process' or 'thread', got {mode!r}")
    if mode == "process":
        from arena.tournament.process_executor import ProcessExecutor, fork_available

        if fork_available():
            return ProcessExecutor
    from arena.tournament.thread_executor import ThreadExecutor

    return ThreadExecutor


class Runner:
    def __init__(
        self,
        config: TournamentConfig,
        *,
        fresh: bool = False,
        progress_factory: Callable[..., Progress] | None = None,
        install_signals: bool = True,
        mode: str = "process",
        executor_factory: ExecutorFactory | None = None,
        on_error: Callable[[str], None] | None = None,
    ) -> None:
        # told of the error that stops the run as it happens, not once the games in flight
        # are back (`arena run` prints it on stderr then)
        self.on_error = on_error
        self.stop = threading.Event()
        if executor_factory is None and config.cluster:  # issue 12: games on a Dask cluster
            from arena.tournament.dask_executor import cluster_executor_factory

            # the stop ends its wait for the scheduler
            executor_factory = cluster_executor_factory(config.cluster, self.stop)
        self.executor_factory = executor_factory or default_executor_factory(mode)
        self.config = config
        self.fresh = fresh
        self.progress_factory = progress_factory or Progress
        self.install_signals = install_signals
        self.stopped_by: int | None = None
        self.results_dir = Path(config.output)
        self.voids = VoidTracker((), set())  # set up from the store by _prepare
        self.void_games: list[ScheduledGame] = []  # this run's
        # games of bots not started yet in this run wait here: one that cannot start stops it
        self.start_watch = StartWatch.of_field(config.path, config.bots,
                                               config.time_control.startup_ms,
                                               enabled=config.start_failure == "stop",
                                               limits=config.sandbox.limits,
                                               sandbox_mode=config.sandbox.mode)
        self.lost = LostGames()  # games whose worker died or failed
        self.left_behind = 0  # bot processes of an earlier, killed run removed at the start

    # -- signals --------------------------------------------------------------------------------
    def _on_signal(self, signum: int, frame: object) -> None:
        if self.stopped_by is None:
            self.stopped_by = signum
        set_from_signal_handler(self.stop)

    # -- main -----------------------------------------------------------------------------------
    def run(self) -> RunResult:
        try:  # before anything is touched: `sandbox = "on"` without bubblewrap refuses to start
            self.sandbox_run = start_run(self.config.sandbox.mode)
        except SandboxUnavailable as error:
            raise RunError(str(error)) from None
        self.start_watch.sandboxed = self.sandbox_run.enabled
        from arena.league.registry import is_league  # here: the league imports the tournament

        if is_league(self.results_dir):  # its games and settings would be mixed, or moved aside
            raise RunError(f"{self.results_dir} is a league's folder (`arena league run "
                           f"{self.results_dir}` plays it): choose another --output for "
                           f"{self.config.path.name}")
        if foreign := foreign_files(self.results_dir):
            # the run writes standings and charts there by name: a user's own standings.md was
            # replaced without a word (new-user review); `arena publish` refuses the same
            raise RunError(f"output folder {self.results_dir} holds other files ({foreign}) and "
                           f"no tournament results ({DB_NAME}): choose a new or empty folder "
                           f"for {self.config.path.name} (--output)")
        lock = RunLock(self.results_dir)
        lock.acquire()
        # With the lock held no live run owns bots of this folder: any still carrying its key were
        # left by an earlier run that was killed (SIGKILL, a hang-up) and go now.
        key = hashlib.sha256(str(self.results_dir.resolve()).encode()).hexdigest()[:16]
        self.left_behind = proctree.kill_left_behind(key)
        proctree.set_run_key(key)
        try:
            backup = move_aside(self.results_dir) if self.fresh else None
            if backup is not None:
                move_outputs_aside(self.results_dir, backup)
            store = Store(self.results_dir)
            try:
                result = self._run(store, backup)
                result.backup = backup
                return result
            finally:
                store.close()
        finally:
            proctree.set_run_key(None)
            lock.release()

    def _prepare(self, store: Store
                 ) -> tuple[list[ScheduledGame], list[ScheduledGame], list[str], int]:
        """(schedule, games to play, notes, games skipped for their pairing's void games)"""
        config = self.config
        owners = self._check_owner(store)
        # hashes every bot's folder and the openings: once
        fingerprint = config.fingerprint()
        problems = store.conflicts(fingerprint)
        if problems:
            raise StoreError(
                f"{self.results_dir} holds games that would not be comparable with "
                f"{config.path.name}: {'; '.join(problems)}. Rerun with --fresh to start over "
                "(the old results are moved to a backup folder, not deleted), or choose another "
                "output directory."
            )
        settings = {**config.settings(), **self.sandbox_run.settings()}
        # every file that has played here may go on without --output: a copy run once with
        # `output` pointing here took the folder from the original, and a file moved and run
        # once with --output must keep it (`_check_owner`)
        settings["files"] = sorted(owners | {str(config.path)})
        renames = renamed_bots((store.stored_fingerprint() or {}).get("bots") or {},
                               fingerprint["bots"])
        store.save_settings(settings, fingerprint)
        store.upsert_bots(config.bots)
        schedule = build_schedule(config)
        store.begin_run(len(schedule), _run_record(config))
        finished = store.finished_ids()
        self.voids = VoidTracker(schedule, store.all_ids() - finished)
        pending, skipped = self._to_play(schedule, finished)
        notes = openings_notes(config) + foreign_program_notes(config.bots)
        if config.adjudicate_s is not None and (note := adjudication_note(config.variants)):
            notes.append(note)
        if self.sandbox_run.notice:  # `auto` without bubblewrap: said once, and stored
            notes.append(self.sandbox_run.notice)
        if self.left_behind:
            notes.append(f"removed {self.left_behind} bot process(es) left running by an earlier "
                         f"run of {self.results_dir}")
        if pending:  # affinity: CPUs shared by several workers, or no affinity on this platform
            notes += affinity_notes(config.affinity, min(max(1, config.concurrency), len(pending)))
        if pending and not config.cluster and config.concurrency > (cores := default_concurrency()):
            # 40 workers on 2 cores started without a word (new-user review)
            notes.append(f"note: concurrency {config.concurrency} on {cores} core(s): games share "
                         "the cores, and a bot's clock runs while it waits for one (forfeits on "
                         f"time; concurrency = {cores} plays as fast without that)")
        notes += [self.voids.note(games[0], len(games)) for games in skipped.values()]
        if not finished and (note := self._elsewhere_note()):
            notes.append(note)
        scheduled_ids = {g.game_id for g in schedule}
        extra = len(store.all_ids() - scheduled_ids)
        if extra:
            notes.append(
                f"note: {extra} stored games are not in this schedule (a bot, variant or games "
                "were removed); they are kept in the results, and those between this file's "
                "bots in its variants count in its standings"
                + "".join(f"; {new} runs what {old} ran: if you renamed {old}, its games stay "
                          f"under that name and {new} plays them again (name it {old} to keep "
                          "them)" for old, new in renames)
            )
        return schedule, pending, notes, sum(map(len, skipped.values()))

    def _elsewhere_note(self) -> str:
        """For a run starting from nothing: a note naming the results folder of the same name
        beside the tournament file, when it holds games. `output` is relative to the current
        folder, the bots' paths to the file's: a run started from another folder began again
        without a word (user review)."""
        output = Path(self.config.output)
        if output.is_absolute():
            return ""
        beside = self.config.path.parent / output
        try:
            if not (beside / DB_NAME).is_file() or beside.resolve() == self.results_dir.resolve():
                return ""
        except OSError:
            return ""
        return (f"note: {beside} holds games of a run from {self.config.path.parent} (results "
                f"folders are relative to the current folder): this run starts anew in "
                f"{self.results_dir}; to go on with those, run from {self.config.path.parent} or "
                f"pass --output {beside}")

    def _to_play(self, schedule: list[ScheduledGame], finished: set[str]
                 ) -> tuple[list[ScheduledGame], dict[frozenset[str], list[ScheduledGame]]]:
        """The unfinished games, and those skipped (per pairing) for too many void games."""
        pending: list[ScheduledGame] = []
        skipped: dict[frozenset[str], list[ScheduledGame]] = {}
        for game in schedule:
            if game.game_id in finished:
                continue
            if self.voids.is_blocked(game):
                skipped.setdefault(pairing_of(game), []).append(game)
            else:
                pending.append(game)
        return pending, skipped

    def _check_owner(self, store: Store) -> set[str]:
        """A results directory belongs to the tournament files whose games it holds: returns
        those that have played into it (the last one alone in a folder from before `files` was
        stored), StoreError for another file without an explicit output."""
        settings = json.loads(store.meta("settings") or "{}")
        stored = settings.get("file") or ""
        owners = {str(f) for f in settings.get("files") or [stored] if f}
        here = str(self.config.path)
        if (not stored or here in owners or self.config.output_explicit
                or not store.game_count()):
            return owners
        raise StoreError(
            f"{self.results_dir} holds the games of another tournament file ({stored}), not of "
            f"{here}: give this file its own `name` or `output`, or pass --output DIR "
            "(--fresh moves the old results to a backup folder and starts over)"
        )

    def _run(self, store: Store, backup: Path | None = None) -> RunResult:
        config = self.config
        schedule, pending, notes, skipped = self._prepare(store)
        if backup is not None:  # said before the games, not after the last (user review)
            notes.insert(0, f"Previous results moved to {backup}")
        total = len(schedule)
        done_before = total - len(pending) - skipped
        progress = self.progress_factory(
            total, done_before, [b.name for b in config.bots], title=config.name
        )
        progress.preload(select_results(config, store.results()))
        result = RunResult(self.results_dir, total, done_before, 0, skipped=skipped, notes=notes)
        started = time.monotonic()
        # kept until the store says how the run ended: a second Ctrl-C while it stops must not
        # interrupt the last writes (it had left `run_state` "running" and lost the summary)
        old_handlers = install_stop_handlers(self._on_signal) if self.install_signals else {}
        try:
            return self._play(store, pending, progress, result, started)
        finally:
            restore_handlers(old_handlers)

    def _play(self, store: Store, pending: list[ScheduledGame], progress: Progress,
              result: RunResult, started: float) -> RunResult:
        config, total = self.config, result.total
        executor = None
        try:
            if pending and not self.stop.is_set():
                # workers are forked before any thread of ours exists (the live display has one)
                setup = WorkerSetup.from_config(config, self.results_dir / LOG_DIR)
                if self.sandbox_run.enabled:  # once here, not in every forked worker
                    for bot in config.bots:
                        prepare_bundled(bot.spec.cwd)
                try:
                    executor = self.executor_factory(setup, min(max(1, config.concurrency),
                                                                len(pending)))
                except RunError:
                    if not self.stop.is_set():
                        raise  # else stopped while it started (a cluster's connect): a stop

            progress.start()  # its rate and ETA count play only; the summary says the set-up
            result.setup = time.monotonic() - started
            for note in result.notes:
                progress.note(note)
            if executor is not None:
                self._coordinate(executor, store, deque(pending), progress, result)
                if not self.stop.is_set() and (error := self.start_watch.finish()):
                    self._fail(result, error)
        except BaseException:
            store.end_run(RUN_STOPPED)  # a crash is no run still going (second review)
            raise
        finally:
            if executor is not None:
                executor.close()
            progress.stop()
            store.touch()
        result.stopped_by = self.stopped_by if result.done < total else None
        store.end_run(RUN_STOPPED if result.stopped_by or result.error else RUN_FINISHED)
        result.voids_stopped = sum(self.voids.is_blocked(g) for g in self.void_games)
        result.elapsed = time.monotonic() - started
        return result

    def _coordinate(self, executor: GameExecutor, store: Store, pending: deque[ScheduledGame],
                    progress: Progress, result: RunResult) -> None:
        """Keep the executor fed, store each outcome; returns when every submitted game is back."""
        versions: dict[str, str] = {}
        inflight = 0
        stopping = False
        while True:
            while not self.stop.is_set() and pending and inflight < executor.slots * WORKER_QUEUE:
                game = self._next_game(pending)
                if game is None:  # only games of a bot whose start is in doubt, one of them out
                    break
                self.start_watch.submitted(game)
                executor.submit(game)
                inflight += 1
            for note in executor.notes():
                progress.note(note)
            if not inflight:
                return
            if self.stop.is_set() and not stopping:
                stopping = True
                executor.stop()
            for outcome in executor.results(timeout=0.2):
                inflight -= 1
                self.start_watch.returned(outcome.game)
                self._outcome(outcome, store, pending, progress, result, versions)
                if (error := self.start_watch.verdict()) is not None:
                    self._fail(result, error)

    def _next_game(self, pending: deque[ScheduledGame]) -> ScheduledGame | None:
        """The first pending game the start watch lets out (the first one, but while a bot's
        start is in doubt)."""
        if self.start_watch.may_submit(pending[0]):
            return pending.popleft()
        for index, game in enumerate(pending):
            if self.start_watch.may_submit(game):
                del pending[index]
                return game
        return None

    def _outcome(self, outcome: Outcome, store: Store, pending: deque[ScheduledGame],
                 progress: Progress, result: RunResult, versions: dict[str, str]) -> None:
        game = outcome.game
        result.starts += outcome.starts
        if outcome.kind is OutcomeKind.DONE and outcome.row is not None:
            if outcome.void and self.stop.is_set():
                return  # cut short by the stop
            for done in self.start_watch.admit(outcome):
                self._finished(store, done.game, done.row, done.void, progress, result, versions)
                if done.void and self.voids.record(done.game):
                    kept = [g for g in pending if not self.voids.is_blocked(g)]
                    result.skipped += len(pending) - len(kept)
                    progress.note(self.voids.note(done.game, len(pending) - len(kept)))
                    pending.clear()
                    pending.extend(kept)
        elif outcome.kind in (OutcomeKind.LOST, OutcomeKind.ERROR, OutcomeKind.CHANGED):
            if (error := self.lost.error(outcome)) is not None:
                self._fail(result, error)
            elif not self.stop.is_set():
                pending.appendleft(game)  # not the bots' fault: play it again
                progress.note(f"note: game {game.game_id} ({game.first} - {game.second}) will be "
                              f"played again: {outcome.detail}")

    def _fail(self, result: RunResult, error: str) -> None:
        """Stop the run for an error (the finished games stay stored); `on_error` is told, and
        `result.error` says it (`arena run`: on stderr, where a script looks for it)."""
        if result.error is None:
            result.error = error
            if self.on_error is not None:
                self.on_error(error)
        self.stop.set()

    def _finished(self, store: Store, game: ScheduledGame, row: dict, void: bool,
                  progress: Progress, result: RunResult, versions: dict[str, str]) -> None:
        row = self._while_locked(store, progress, lambda: self._store_game(store, game, row, void))
        if void:
            result.voids += 1
            self.void_games.append(game)
        else:
            result.done += 1
            result.played += 1
        if row.get("reason") in FORFEIT_REASONS:
            result.forfeits += 1
        self._count_fallbacks(row, result)
        for seat in ("first", "second"):
            name, version = row[seat], row.get(f"{seat}_version") or ""
            if version and versions.get(name) != version:
                versions[name] = version
                store.set_bot_version(name, version)
        progress.game_done(row)

    @staticmethod
    def _count_fallbacks(row: dict, result: RunResult) -> None:
        infos = row.get("infos") or "[]"
        if FALLBACK_INFO not in infos:  # the common case: no JSON to read
            return
        counts = fallback_counts(json.loads(infos), len((row.get("opening") or "").split()))
        for name, count in zip((row["first"], row["second"]), counts, strict=True):
            if count:
                result.fallbacks[name] = result.fallbacks.get(name, 0) + count

    def _while_locked(self, store: Store, progress: Progress, write: Callable[[], dict]) -> dict:
        """`write()`, tried again while another program holds games.db's write lock (a
        database viewer with unsaved changes, an open `sqlite3` shell): each try waits out
        the store's busy timeout; a note says so once. A stop gives up with one line (the run
        had ended on a raw "database is locked" after 10 s, with no resume hint)."""
        said = False
        while True:
            try:
                return write()
            except sqlite3.OperationalError as error:
                if not is_locked(error):
                    raise
                if self.stop.is_set():
                    raise StoreError(
                        f"{store.path} stayed locked by another program: the games stored so far "
                        "are kept (the one just finished is played again); run the same command "
                        "again to resume", resumable=True) from None
                if not said:
                    said = True
                    progress.note(f"note: {store.path} is locked by another program (a database "
                                  "viewer with unsaved changes?); waiting to store the games that "
                                  "finish (Ctrl-C stops the run, nothing stored is lost)")

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


def run_tournament(config: TournamentConfig, **kwargs) -> RunResult:
    return Runner(config, **kwargs).run()


def _run_record(config: TournamentConfig) -> dict[str, Any]:
    """This run's record for the store's `runs` (arena.provenance): the file's exact bytes by
    their hash too, as the settings hold what it says but not how (comments, spelling)."""
    try:
        digest = hashlib.sha256(config.path.read_bytes()).hexdigest()
    except OSError:  # moved meanwhile: the settings still say what it held
        digest = ""
    return provenance.run_record(utc_now_iso(), concurrency=config.concurrency,
                                 cluster=bool(config.cluster), file_digest=digest)
