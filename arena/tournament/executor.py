"""The executor seam: where scheduled games are played, and how their outcomes come back.

The coordinator (`arena.tournament.runner`) is the only writer of the store; it hands games to a
`GameExecutor` and reads one `Outcome` back for every game it submitted. It knows nothing else
about the executor: threads (`thread_executor.py`), forked worker processes
(`process_executor.py`) and, later, a cluster (a Dask executor: `submit` becomes `client.submit`
of `play_scheduled`, `results` iterates `as_completed`) are each one module implementing these
four methods. The worker side is shared: `worker.PlayerPool` keeps bots warm and
`worker.play_scheduled` plays one game.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.affinity import follows, worker_cores
from arena.botspec import code_files, file_stamps
from arena.referee import TimeControl
from arena.tournament.schedule import ScheduledGame

if TYPE_CHECKING:
    from arena.tournament.config import TournamentConfig

# An idle bundled bot holds ~14 MB, so a worker's warm bots stay under ~450 MB.
WARM_CAP = 32


class OutcomeKind(StrEnum):
    DONE = "done"  # played to the end (possibly void): `row` holds the games-table row
    ABORTED = "aborted"  # not played, or cut short by `stop()`: nothing to store
    ERROR = "error"  # an internal error (a bug, not a bot's fault): `detail` says what
    LOST = "lost"  # the worker playing it died or was stopped: play the game again
    # a bot's files changed since the run began, seen as its process (re)started: the game is
    # not stored (it would carry the old program hash) and the run stops; `detail` says what
    CHANGED = "changed"


@dataclass(frozen=True)
class Outcome:
    game: ScheduledGame
    kind: OutcomeKind
    row: Mapping[str, Any] | None = None
    void: bool = False
    detail: str = ""
    starts: int = 0  # bot processes started for this game (0 when both were warm)
    # name -> "reason: detail" of each bot of the game that failed to start (`startwatch`)
    start_failures: Mapping[str, str] = field(default_factory=dict)


MAX_LOSSES = 3  # a game whose worker dies this often stops the run rather than loop for ever


class LostGames:
    """What a coordinator (a tournament's or a league's) does with a game whose worker died
    (LOST) or failed (ERROR): neither is the bots' fault, so a lost game is played again, up to
    `MAX_LOSSES` times, and then, like an internal error, stops the run (stored games stay)."""

    def __init__(self) -> None:
        self.losses: Counter[str] = Counter()  # game id -> times its worker was lost

    def error(self, outcome: Outcome) -> str | None:
        """None: play this LOST game again; else why the run stops (LOST too often, ERROR)."""
        game = outcome.game
        where = f"game {game.game_id} ({game.first} - {game.second})"
        if outcome.kind is OutcomeKind.ERROR:
            return f"internal error in {where}: {outcome.detail}"
        if outcome.kind is OutcomeKind.CHANGED:
            return outcome.detail
        self.losses[game.game_id] += 1
        if self.losses[game.game_id] >= MAX_LOSSES:
            return f"{where} lost its worker {MAX_LOSSES} times, last: {outcome.detail}"
        return None


@dataclass(frozen=True)
class FieldChange:
    """Bots that join or leave a running field (a league's submissions and retirements); a
    retired bot's warm processes are closed, its games already submitted are still played."""

    added: Mapping[str, Any] = field(default_factory=dict)  # display name -> BotSpec
    retired: tuple[str, ...] = ()
    # the added bots' sandbox policies (a worker on another machine has no default of ours)
    policies: Mapping[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.added or self.retired)


@dataclass(frozen=True)
class WorkerSetup:
    """What every worker needs to play any game of the tournament (picklable)."""

    specs: Mapping[str, Any]  # display name -> arena.botspec.BotSpec
    time_control: TimeControl
    restart_every_game: bool
    log_dir: Path
    warm_cap: int = WARM_CAP  # bots a worker keeps running between games
    policies: Mapping[str, Any] = field(default_factory=dict)  # name -> arena.sandbox.SandboxPolicy
    # CPU affinity: the CPUs given to workers in turn, each worker and its bots pinned to one
    # (arena.affinity); () = unpinned. An executor that cannot pin its workers ignores it.
    cores: tuple[int, ...] = ()
    # unpinned, each game's bots follow their worker's core (`arena.affinity.follows`)
    follow: bool = False
    # time odds: name -> the bot's own TimeControl (a bot not in it plays under `time_control`)
    bot_time_controls: Mapping[str, TimeControl] = field(default_factory=dict)
    adjudicate_s: float | None = None  # solver seconds per position (`adjudicate = "solver"`)
    ponder: bool = True  # False: bots stopped between their turns (`ponder = false`)
    # name -> `botspec.file_stamps` of its code (`code_files`), taken as the run began: a
    # process started later from changed files stops the run (a cluster plays snapshots: none)
    stamps: Mapping[str, Any] = field(default_factory=dict)

    def time_control_of(self, name: str) -> TimeControl:
        return self.bot_time_controls.get(name) or self.time_control

    def changed(self, change: FieldChange) -> WorkerSetup:
        """This setup with `change`'s bots added and its retired ones dropped."""
        specs = {n: s for n, s in {**self.specs, **change.added}.items() if n not in change.retired}
        policies = {n: p for n, p in {**self.policies, **change.policies}.items() if n in specs}
        return replace(self, specs=specs, policies=policies)

    @classmethod
    def from_config(cls, config: TournamentConfig, log_dir: Path) -> WorkerSetup:
        specs = {b.name: b.spec for b in config.bots}
        policies = {b.name: config.sandbox.policy(b.limits) for b in config.bots}
        own = {b.name: b.time_control for b in config.bots if b.time_control is not None}
        return cls(specs, config.time_control, config.restart == "every-game", log_dir,
                   warm_cap=max(2, min(WARM_CAP, len(specs))), policies=policies,
                   cores=worker_cores(config.affinity), follow=follows(config.concurrency),
                   bot_time_controls=own,
                   adjudicate_s=config.adjudicate_s, ponder=config.ponder,
                   stamps={b.name: file_stamps(code_files(b.spec)) for b in config.bots})


class GameExecutor(ABC):
    """Plays submitted games; exactly one `Outcome` comes back from `results` per submission."""

    #: games it plays at once; the coordinator keeps a few more submitted so no worker waits
    slots: int

    @abstractmethod
    def submit(self, game: ScheduledGame) -> None:
        """Queue one game to be played."""

    @abstractmethod
    def results(self, timeout: float) -> Iterable[Outcome]:
        """The outcomes available now, waiting up to `timeout` seconds for the first one."""

    @abstractmethod
    def stop(self) -> None:
        """Start no more games and cut the running ones short (their outcome: ABORTED)."""

    @abstractmethod
    def close(self) -> None:
        """Stop, and end every worker and every bot process; safe to call twice."""

    def notes(self) -> list[str]:
        """One-line notes for the operator that came up since the last call (a cluster's
        workers that cannot play, say); the coordinator shows each once."""
        return []

    def change_field(self, change: FieldChange) -> dict[str, str]:
        """Bots join or leave while games are played (a league). Games submitted after this
        call may name the added bots that were taken; returns those refused, with why (e.g. a
        bot that cannot travel to a cluster). Games submitted before it, retired bots' too, are
        still played. An executor built for a fixed field refuses."""
        raise NotImplementedError(f"{type(self).__name__} plays a fixed field of bots")

    def __enter__(self) -> GameExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
