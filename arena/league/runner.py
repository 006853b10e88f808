"""`arena league run`: play a league continuously, where each next pair of games settles the most.

The coordinator (this module) is the only writer of games. It hands the two games of each
seat-swapped pair it chooses to a `GameExecutor`, the tournament's own (forked workers keeping
bots warm between games, `arena.tournament.worker`), and stores every game that comes back in its
own transaction at once. Entrants are re-read before every scheduling decision, so `submit` and
`remove` from other processes take effect without a restart: new versions join the workers'
field, retired ones leave it (`GameExecutor.change_field`).

Crash safety: a game is stored whole or not at all. Game ids are `P<pair>-1`/`P<pair>-2` with
pair numbers above every stored one, so nothing is stored twice; a pair cut in half by a crash is
completed first on the next run (the missing seat, same variant and opening), which keeps seats
exactly balanced per pair.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena import proctree, sandbox
from arena.affinity import follows
from arena.botspec import BotSpecError
from arena.game import DEFAULT_VARIANT, parse_move, parse_variant
from arena.league import registry
from arena.league.forfeits import FORFEIT_PAUSE_S, ForfeitStreaks
from arena.league.scheduler import (
    RepeatTracker,
    Scheduler,
    SchedulerSettings,
    balanced_variant,
    is_settled,
)
from arena.league.tally import StoredTally
from arena.ratings.elo import PairCounts, fit_elo
from arena.reasons import forfeiter_seat
from arena.referee import TimeControl
from arena.solver.scope import ADJUDICATION_BUDGET_S, adjudication_note
from arena.tournament.config import default_concurrency, league_openings
from arena.tournament.executor import (
    WARM_CAP,
    FieldChange,
    GameExecutor,
    LostGames,
    Outcome,
    OutcomeKind,
    WorkerSetup,
)
from arena.tournament.progress import game_text
from arena.tournament.runner import (
    ExecutorFactory,
    RunError,
    default_executor_factory,
    install_stop_handlers,
    restore_handlers,
    set_from_signal_handler,
)
from arena.tournament.schedule import ScheduledGame
from arena.tournament.store import LOG_DIR, RunLock, Store

# Games in a row a version fails to start before this run leaves it out, and for how long
# (a start failure may be the machine's: a full disk, a moment without memory).
START_FAILURES_OUT = 3
START_FAILURE_PAUSE_S = 600.0

STATUS_FILE = ".league-status.json"
IDLE_WAIT_S = 1.0  # how often an idle league looks for new submissions
STOP_WAIT_S = 30.0  # how long a stopping league waits for its games in flight to come back


@dataclass(frozen=True)
class Until:
    """When `league run` stops by itself: games played by this run, a duration, or settled."""

    games: int | None = None
    seconds: float | None = None
    settled: bool = False

    @staticmethod
    def parse(text: str | None) -> Until:
        if text is None or not text.strip():
            return Until()
        text = text.strip().lower()
        if text == "settled":
            return Until(settled=True)
        if text.isdigit() and int(text) > 0:
            return Until(games=int(text))
        match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(s|m|h|d)", text)
        if match and float(match[1]) > 0:
            scale = {"s": 1, "m": 60, "h": 3600, "d": 86400}[match[2]]
            return Until(seconds=float(match[1]) * scale)
        raise ValueError(f"--until {text!r}: expected a number of games (200), a duration "
                         "(90s, 30m, 2h, 1d) or 'settled'")


@dataclass
class PairJob:
    pair_no: int
    first: str   # plays seat 1 in the pair's first game
    second: str
    variant: str
    opening: list[str]
    seats: tuple[int, ...] = (1, 2)  # which of the pair's games to play (a half pair has one)

    @property
    def pair_id(self) -> str:
        return f"P{self.pair_no:07d}"


@dataclass
class RunSummary:
    games: int = 0
    stopped_by: str = ""
    forfeits: Counter = field(default_factory=Counter)
    error: str = ""  # an error that stopped the run (not a bot's fault): `league run` exits 1
    signal: int = 0  # the signal that stopped it (SIGINT, SIGTERM, SIGHUP), 0 if none


def time_control_of(settings: dict[str, Any]) -> TimeControl:
    raw = settings.get("time_control") or {}
    return TimeControl(**{k: v for k, v in raw.items() if v is not None})


class LeagueRunner:
    def __init__(self, folder: str | Path, concurrency: int | None = None,
                 until: Until | None = None, publish_every: int | None = None,
                 seed: int | None = None,
                 out: Callable[[str], None] = print,
                 executor_factory: ExecutorFactory | None = None) -> None:
        self.folder = registry.open_league(folder)
        self.settings = registry.settings(self.folder)
        self.variants = [parse_variant(v).spec for v in self.settings.get("variants", [DEFAULT_VARIANT])]
        self.openings = {variant: league_openings(self.settings.get("openings", []), variant)
                         for variant in self.variants}
        self.tc = time_control_of(self.settings)
        # unset: the league file's `concurrency` and `seed`, else one pair per core and 0
        if concurrency is None:
            concurrency = self.settings.get("concurrency") or default_concurrency()
        self.concurrency = max(1, concurrency)
        if seed is None:
            seed = int(self.settings.get("seed") or 0)
        self.until = until or Until()
        self.publish_every = publish_every
        self.scheduler = Scheduler(SchedulerSettings(**self.settings.get("scheduler", {})), seed=seed)
        self.repeats = RepeatTracker(self.scheduler.settings.repeats_settle)
        self.forfeits = ForfeitStreaks()
        # the stored games' counts, read once and then only the new ones (`_feed`)
        self.tally = StoredTally(self.repeats, self.forfeits)
        self.out = out
        self.stop = threading.Event()
        # the same executors as a tournament's: forked workers keeping bots warm across pairs
        self.executor_factory = executor_factory or default_executor_factory("process")
        self.in_flight: dict[int, PairJob] = {}  # pair number -> the pair, while games are out
        self.games_out: Counter[int] = Counter()  # pair number -> its games not yet back
        self.fielded: set[str] = set()  # entrants the executor's workers know
        self.unplayable: dict[str, str] = {}  # entrant -> why it cannot play (said once)
        self.start_failures: dict[str, int] = {}  # entrant -> games in a row it did not start
        # entrant left out -> (its stored hash then, the monotonic time it may play again)
        self.left_out: dict[str, tuple[str, float | None]] = {}
        self.waiting = ""  # why the run waits for submissions, as last said ("" while playing)
        self.lost = LostGames()  # games whose worker died or failed
        self.summary = RunSummary()
        self.published_at = 0  # games of this run when the site was last rebuilt
        self._publisher: subprocess.Popen | None = None  # a site rebuild under way
        self._publisher_said: Any = None  # the file its stderr goes to
        self._publishing_at = 0  # games of this run when it began

    # -- the loop -------------------------------------------------------------------------------
    def run(self) -> RunSummary:
        started = time.monotonic()
        with RunLock(self.folder, "arena league run"), Store(self.folder) as store, \
                _stop_on_signals(self.stop, self.summary), _run_key_of(self.folder) as left_behind:
            # said once the lock is ours: a second run announced it, then refused (league review)
            self.out(f"league {self.folder}: playing (Ctrl-C stops; games in flight are replayed "
                     "later)")
            if left_behind:
                self.out(f"removed {left_behind} bot process(es) left running by an earlier run")
            if self.settings.get("adjudicate") == "solver" and (
                    note := adjudication_note([parse_variant(v) for v in self.variants])):
                self.out(note)
            next_pair = self._next_pair_no(store)
            executor = self.executor_factory(self._setup(), self.concurrency)
            try:
                self._update_field(executor)
                backlog = self._half_pairs(store)
                while not self.stop.is_set():
                    if not self.summary.stopped_by:
                        self.summary.stopped_by = self._should_stop(store, started)
                    if self.summary.stopped_by:
                        # --until: no new pairs; the pairs in flight finish, so seats stay balanced.
                        if not self.in_flight:
                            break
                        self._collect(store, executor, wait=IDLE_WAIT_S)
                        continue
                    self._feed(store)  # before the field: a forfeiter is left out of it
                    self._update_field(executor)
                    while len(self.in_flight) < executor.slots:  # a cluster's: its threads
                        job = backlog.pop(0) if backlog else self._choose(store, next_pair)
                        if job is None:
                            break
                        next_pair = max(next_pair, job.pair_no + 1)
                        if {job.first, job.second} <= set(self._playable()) \
                                and self._still_intact(job):
                            self._submit(executor, job)
                    self._say_waiting()
                    self._write_status()
                    self._collect(store, executor, wait=IDLE_WAIT_S)
            finally:
                self.stop.set()  # games in flight are aborted: not stored, played again later
                try:
                    executor.stop()
                    self._drain(store, executor)
                finally:  # whatever went wrong, no worker or bot outlives the run
                    executor.close()
                    self._clear_status()
                    # a rebuild under way finishes, unless the run was stopped by a signal
                    self._reap_publisher(wait=True, interrupt=bool(self.summary.signal))
        if not self.summary.stopped_by:
            self.summary.stopped_by = "stopped"
        return self.summary

    def _feed(self, store: Store) -> None:
        """Bring the counts up to the games stored since the last look (the first look reads
        them all), and leave out the versions whose latest games were all their forfeits."""
        self.tally.update(store.conn)
        touched = self.forfeits.take_touched()
        if not touched:
            return
        hashes = {e.display: e.program_hash for e in registry.active_entrants(self.folder)}
        for name in sorted(touched & hashes.keys()):
            if name not in self.unplayable and \
                    (streak := self.forfeits.out(name, hashes[name])) is not None:
                self._unplayable(name, streak.describe(), pause_s=FORFEIT_PAUSE_S)

    def _setup(self) -> WorkerSetup:
        """Workers start knowing no bot: entrants join (and leave) by `_update_field`, each with
        the sandbox policy `league run` set for this process."""
        adjudicate = ADJUDICATION_BUDGET_S if self.settings.get("adjudicate") == "solver" else None
        # every worker may meet every bot: a share of the warm cap each keeps the league's idle
        # bot processes near WARM_CAP in all, however many workers there are
        warm = max(2, WARM_CAP // self.concurrency)
        return WorkerSetup({}, self.tc, restart_every_game=False,
                           log_dir=self.folder / LOG_DIR, warm_cap=warm, adjudicate_s=adjudicate,
                           ponder=self.settings.get("ponder", True) is not False,
                           follow=follows(self.concurrency))

    def _update_field(self, executor: GameExecutor) -> None:
        """Tell the workers of new submissions, and of retired or replaced versions (once no
        game of theirs is out)."""
        current = registry.active_entrants(self.folder)
        self._try_again(current)
        active = [e for e in current if e.display not in self.unplayable]
        added = {}
        for entrant in active:
            if entrant.display in self.fielded:
                continue
            try:
                added[entrant.display] = registry.spec_of(self.folder, entrant)
            except (registry.LeagueError, BotSpecError) as error:
                self._unplayable(entrant.display, str(error))
        names = {e.display for e in active if e.display not in self.unplayable}
        busy = {name for job in self.in_flight.values() for name in (job.first, job.second)}
        retired = tuple(sorted(self.fielded - names - busy))
        # the policy `league run` set for this process, spelled out for workers elsewhere
        policy = sandbox.default_policy()
        change = FieldChange(added=added, retired=retired,
                             policies={name: policy for name in added})
        if change:
            refused = executor.change_field(change)
            for name, why in refused.items():
                self._unplayable(name, why)
            self.fielded = (self.fielded | (set(added) - set(refused))) - set(retired)

    def _unplayable(self, name: str, why: str, pause_s: float | None = None) -> None:
        """Leave a version out of this run's scheduling, saying why once: until its stored hash
        changes (`league rehash`, a version brought back), or for `pause_s` seconds."""
        if name not in self.unplayable:
            self.unplayable[name] = why
            hashes = {e.display: e.program_hash for e in registry.entrants(self.folder)}
            until = None if pause_s is None else time.monotonic() + pause_s
            self.left_out[name] = (hashes.get(name, ""), until)
            later = "" if pause_s is None else f"; tried again in {duration_text(pause_s)}"
            self.out(f"{name} cannot play: {why}{later}")

    def _try_again(self, active: list[registry.Entrant]) -> None:
        """Versions left out that may play again: their hash changed since (the marker had
        kept a rehashed or brought-back version out for the whole run: second review), or
        their pause is over (a start failure may be the machine's, not the bot's)."""
        now = time.monotonic()
        for entrant in active:
            left = self.left_out.get(entrant.display)
            if left is None:
                continue
            stored_hash, until = left
            if entrant.program_hash != stored_hash or (until is not None and now >= until):
                del self.left_out[entrant.display]
                self.unplayable.pop(entrant.display, None)
                self.start_failures.pop(entrant.display, None)
                # a forfeit streak stays (under its hash): the next game judges it again
                self.out(f"{entrant.display} is tried again")

    def _still_intact(self, job: PairJob) -> bool:
        """Both snapshots still hash as stored (checked before every pair, as a bot running
        unsandboxed could change its own folder); a changed one is left out from now on."""
        by_name = {e.display: e for e in registry.entrants(self.folder)}
        for name in (job.first, job.second):
            try:
                registry.spec_of(self.folder, by_name[name])
            except (KeyError, registry.LeagueError, BotSpecError) as error:
                self._unplayable(name, str(error))
                return False
        return True

    def _submit(self, executor: GameExecutor, job: PairJob) -> None:
        variant = parse_variant(job.variant)
        opening = tuple(parse_move(token) for token in job.opening)
        self.in_flight[job.pair_no] = job
        for seat in job.seats:
            first, second = (job.first, job.second) if seat == 1 else (job.second, job.first)
            executor.submit(ScheduledGame(f"{job.pair_id}-{seat}", job.pair_id, 0, variant,
                                          first, second, opening))
            self.games_out[job.pair_no] += 1

    def _should_stop(self, store: Store, started: float) -> str:
        if self.until.games is not None and self.summary.games >= self.until.games:
            # the games still in flight finish after this, so the count may end above it
            return (f"reached --until {self.until.games} games (the pairs in flight were "
                    "finished, so seats stay balanced)")
        if self.until.seconds is not None and time.monotonic() - started >= self.until.seconds:
            return "time is up"
        if self.until.settled and not self.in_flight:
            # the bots that cannot play are left out: they would never be ordered, and a run
            # waiting for their games would wait for ever. Not only the fielded ones: a bot
            # submitted since the last look has no games, so the ranking is not settled yet.
            self._feed(store)  # first: a version its games leave out is not waited for
            playable = [e.display for e in registry.active_entrants(self.folder)
                        if e.display not in self.unplayable]
            if len(playable) < 2:
                return f"nothing to order: {self._too_few(playable)}"
            counts = self._counts(playable)
            if counts.total_games() > 0 and \
                    is_settled(fit_elo(counts), counts, playable, self.scheduler.settings,
                               self._repeating()):
                return "the ranking is settled"
        return ""

    def _too_few(self, playable: list[str]) -> str:
        """Why fewer than two bots can play, in a few words."""
        cannot = ", ".join(e.display for e in registry.active_entrants(self.folder)
                           if e.display in self.unplayable)
        if not playable:
            return f"no active bot can play ({cannot} cannot)" if cannot else "the league has no active bots"
        return (f"{playable[0]} is the only active bot" if not cannot
                else f"{playable[0]} is the only active bot that can play ({cannot} cannot)")

    def _say_waiting(self) -> None:
        """With nothing to play, say once (and again when it changes) that the run waits for
        submissions: a league may wait for its bots, but not silently."""
        playable = self._playable() if not self.in_flight else []
        why = "" if self.in_flight or len(playable) >= 2 else self._too_few(playable)
        if why and why != self.waiting:
            # games that cannot be played never count up to `--until N`: say what ends the wait
            ends = "Ctrl-C stops" if self.until.seconds is not None else \
                "Ctrl-C stops, or a duration such as --until 10m"
            self.out(f"waiting for two active bots that can play: {why} (bots join with "
                     f"`arena league submit {self.folder} PATH`; {ends})")
        self.waiting = why

    # -- scheduling -----------------------------------------------------------------------------
    def _counts(self, active: list[str]) -> PairCounts:
        """Wins, draws and losses per pair of every rated game counted (`tally.StoredTally`: a
        choice no longer reads every game, which had cost 69 ms at 10,000 games); the caller
        brings the tally up to date first (`_feed`)."""
        return self.tally.pair_counts(active)

    def _repeating(self) -> set[frozenset[str]]:
        """The pairs whose latest games only repeat earlier ones (`scheduler.RepeatTracker`, fed
        by `_feed`)."""
        return self.repeats.repeating()

    def _playable(self) -> list[str]:
        """Active entrants the workers know (a snapshot that failed its check is left out)."""
        return [e.display for e in registry.active_entrants(self.folder)
                if e.display in self.fielded and e.display not in self.unplayable]

    def _choose(self, store: Store, pair_no: int) -> PairJob | None:
        self._feed(store)  # first: a version it leaves out is not chosen
        busy = [(j.first, j.second) for j in self.in_flight.values()]
        # a version let back in after its forfeits' pause plays one pair at a time until it
        # plays a game out: a try costs one pair, not one a slot
        playing = {name for pair in busy for name in pair}
        active = [name for name in self._playable()
                  if name not in playing or not self.forfeits.on_probation(name)]
        picks = self.scheduler.choose(self._counts(active), active, k=1, in_flight=busy,
                                      repeating=self._repeating())
        if not picks:
            return None
        a, b = picks[0]
        variant = balanced_variant(self.variants, self.tally.by_bot_variant, a, b)
        openings = self.openings[variant]
        opening = openings[pair_no % len(openings)]
        return PairJob(pair_no, a, b, variant, opening)

    @staticmethod
    def _next_pair_no(store: Store) -> int:
        row = store.conn.execute("SELECT MAX(pair_id) FROM games WHERE pair_id LIKE 'P%'").fetchone()
        return int(row[0][1:]) + 1 if row and row[0] else 1

    def _half_pairs(self, store: Store) -> list[PairJob]:
        """Pairs a crash cut in half, whose two bots can still play: the missing seat, first."""
        playable = set(self._playable())
        rows = store.conn.execute(
            "SELECT pair_id, MIN(game_id), first, second, variant, opening FROM games "
            "WHERE pair_id LIKE 'P%' AND result IS NOT NULL GROUP BY pair_id HAVING COUNT(*) = 1"
        ).fetchall()
        jobs = []
        for pair_id, game_id, first, second, variant, opening in rows:
            if {first, second} <= playable:
                played_seat = int(game_id.rsplit("-", 1)[1])
                a, b = (first, second) if played_seat == 1 else (second, first)
                jobs.append(PairJob(int(pair_id[1:]), a, b, variant, opening.split(),
                                    seats=(3 - played_seat,)))
        return jobs

    # -- storing (the coordinator: the only writer) ---------------------------------------------
    def _collect(self, store: Store | None, executor: GameExecutor, wait: float) -> None:
        """Take the outcomes that are back; `store` None: account for them without storing. A
        failure to store is raised once the whole batch is accounted for."""
        failure: Exception | None = None
        outcomes = executor.results(timeout=wait)
        for note in executor.notes():  # a cluster's workers that cannot play, say (once each)
            self.out(note)
        for outcome in outcomes:
            game = outcome.game
            pair_no = int(game.pair_id[1:])
            self.games_out[pair_no] -= 1
            try:
                self._outcome(store, executor, outcome, pair_no)
            except Exception as error:  # e.g. the disk is full: the rest still gets counted
                failure = failure or error
                store = None
            if self.games_out[pair_no] <= 0:
                del self.games_out[pair_no]
                self.in_flight.pop(pair_no, None)
        if failure is not None:
            raise failure

    def _outcome(self, store: Store | None, executor: GameExecutor, outcome: Outcome,
                 pair_no: int) -> None:
        game = outcome.game
        if outcome.kind in (OutcomeKind.ERROR, OutcomeKind.CHANGED) or (outcome.kind is OutcomeKind.LOST
                                                 and not self.stop.is_set()):
            if (error := self.lost.error(outcome)) is not None:
                self._fail(error)  # the next run completes the pair
            else:
                executor.submit(game)  # its worker died: not the bots' fault, play it again
                self.games_out[pair_no] += 1
        elif outcome.kind is OutcomeKind.DONE and outcome.row is not None \
                and not (outcome.void and self.stop.is_set()) and store is not None:
            self._store(store, game, dict(outcome.row), outcome.void)
            self._count_start_failures(game.bots, outcome.start_failures)

    def _count_start_failures(self, bots: tuple[str, str], failures: dict[str, str]) -> None:
        """A version that failed to start in its last `START_FAILURES_OUT` games is left out of
        this run: two such bots had locked a league into void games between them (void games
        count for no pair, so theirs stayed the least played and most even; review of a
        league over weeks)."""
        for name in bots:
            if name not in failures:
                self.start_failures.pop(name, None)
                continue
            streak = self.start_failures[name] = self.start_failures.get(name, 0) + 1
            if streak >= START_FAILURES_OUT:
                self._unplayable(name, f"it failed to start in its last {streak} games "
                                       f"({failures[name]})", pause_s=START_FAILURE_PAUSE_S)

    def _fail(self, error: str) -> None:
        """Stop for an error that is not a bot's (a bug, a cluster gone); stored games stay."""
        if not self.summary.error:
            self.summary.error = error
            self.summary.stopped_by = error
            self.out(error)
        self.stop.set()

    def _drain(self, store: Store, executor: GameExecutor) -> None:
        """After a stop: wait (a while) for the games still out, storing the finished ones; once
        storing fails, only account for the rest."""
        deadline = time.monotonic() + STOP_WAIT_S
        target: Store | None = store
        failure: Exception | None = None
        while self.in_flight and time.monotonic() < deadline:
            try:
                self._collect(target, executor, wait=0.2)
            except RunError:  # the executor lost its workers (a Dask scheduler): none will come
                break
            except Exception as error:
                failure = failure or error
                target = None
        if failure is not None:
            raise failure

    def _store(self, store: Store, game: ScheduledGame, row: dict, void: bool) -> None:
        if void:
            row["result"] = None
        store.add_game(row, pair_id=game.pair_id)
        self.summary.games += 1
        seat = forfeiter_seat(row.get("reason"), row.get("forfeit_by"), row.get("result"))
        if seat is not None:
            self.summary.forfeits[row["first"] if seat == 1 else row["second"]] += 1
        # one line a game, as `arena run` prints them where no live display is drawn
        self.out(f"[{self.summary.games}] {game.game_id} {game_text(row)}")
        if self.publish_every and self.summary.games % self.publish_every == 0:
            self._publish_aside()

    def _publish_aside(self) -> None:
        """Rebuild the site in a process of its own while play goes on: built here, it held the
        league still for its seconds (and Ctrl-C with it); a rebuild still running when the
        next is due makes that one wait for the next count (league review)."""
        self._reap_publisher()
        if self._publisher is not None:
            return
        # its messages go to a file: a pipe read only at its end could fill and stop it
        self._publisher_said = tempfile.TemporaryFile()
        self._publishing_at = self.summary.games
        self._publisher = subprocess.Popen(
            [sys.executable, "-m", "arena", "publish", str(self.folder)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._publisher_said,
            start_new_session=True)  # a Ctrl-C for the league is passed on below, not twice

    def _reap_publisher(self, wait: bool = False, interrupt: bool = False) -> None:
        """Say how the background rebuild ended, once it has; `interrupt`: stop it (SIGINT:
        `arena publish` leaves the last site whole and no half-built folder, and exits 130)."""
        publisher = self._publisher
        if publisher is None:
            return
        if interrupt and publisher.poll() is None:
            publisher.send_signal(signal.SIGINT)
        if wait:
            publisher.wait()
        if publisher.poll() is None:
            return
        self._publisher = None
        said_file, self._publisher_said = self._publisher_said, None
        said_file.seek(0)
        said = said_file.read().decode("utf-8", "replace").strip().splitlines()
        said_file.close()
        if publisher.returncode == 0:
            self.published_at = self._publishing_at  # a failed rebuild is tried again
        elif not (interrupt and publisher.returncode in (-signal.SIGINT, 128 + signal.SIGINT)):
            self.out(f"publish failed: {said[-1] if said else f'exit {publisher.returncode}'}")

    def publish(self) -> None:
        """Rebuild FOLDER/site; readers never see half a site (it is built aside, then swapped in)."""
        from arena.publish.site import build_site

        self.published_at = self.summary.games
        try:
            build_site(self.folder)
        except Exception as error:
            self.out(f"publish failed: {error}")

    # -- status for `league status` -------------------------------------------------------------
    def _write_status(self) -> None:
        status = {"pid": os.getpid(), "games_this_run": self.summary.games,
                  "playing": [{"pair": j.pair_id, "first": j.first, "second": j.second,
                               "variant": j.variant} for j in self.in_flight.values()],
                  "left_out": self._left_out_status()}
        path = self.folder / STATUS_FILE
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(status))
        temporary.replace(path)

    def _left_out_status(self) -> list[dict[str, Any]]:
        """The versions this run leaves out, why, and in how many seconds it tries them again
        (None: when their hash changes), for `league status`."""
        if not self.unplayable:
            return []
        now = time.monotonic()
        active = {e.display for e in registry.active_entrants(self.folder)}  # not the retired
        out = []
        for name, why in sorted(self.unplayable.items()):
            if name not in active:
                continue
            until = self.left_out.get(name, ("", None))[1]
            out.append({"name": name, "why": why,
                        "back_in_s": None if until is None else max(0.0, round(until - now))})
        return out

    def _clear_status(self) -> None:
        (self.folder / STATUS_FILE).unlink(missing_ok=True)


def duration_text(seconds: float) -> str:
    """A pause as a person says it: "10 minutes", "2 hours" (what is left of one: rounded
    up, so a pause under way never reads as "0 minutes")."""
    minutes = math.ceil(seconds / 60)
    if minutes >= 120 and minutes % 60 == 0:
        return f"{minutes // 60} hours"
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


@contextmanager
def _run_key_of(folder: Path) -> Iterator[int]:
    """Inside the folder's run lock: remove bots an earlier, killed run left (they carry the
    folder's key), and give the key to every bot started here; yields how many were removed."""
    key = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]
    removed = proctree.kill_left_behind(key)
    proctree.set_run_key(key)
    try:
        yield removed
    finally:
        proctree.set_run_key(None)


class _stop_on_signals:
    """SIGINT, SIGTERM and SIGHUP set the stop event (main thread only), restored afterwards."""

    def __init__(self, stop: threading.Event, summary: RunSummary) -> None:
        self.stop = stop
        self.summary = summary
        self.saved: dict[int, Any] = {}

    def __enter__(self) -> None:
        self.saved = install_stop_handlers(self._stop)  # an ignored one (nohup) stays ignored

    def _stop(self, signum: int, _frame: object) -> None:
        self.summary.signal = self.summary.signal or signum  # the command exits 128 + it
        set_from_signal_handler(self.stop)

    def __exit__(self, *exc: object) -> None:
        restore_handlers(self.saved)


def read_status(folder: str | Path) -> dict[str, Any] | None:
    """What a running league is playing now (None when none runs)."""
    path = Path(folder) / STATUS_FILE
    try:
        status = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not RunLock.held(folder):
        return None  # a stale file from a killed run (its pid may be another process's now)
    return status
