"""The worker side of every executor: a pool of warm players and the function that plays one game.

A worker (thread, forked process or remote task) owns one `PlayerPool`: a bot's process lives
across the worker's games of that bot, so it starts once per worker rather than once per game.
The pool holds up to `WorkerSetup.warm_cap` bots: the whole field when it is small (every bot the
worker will meet again stays warm), the least recently used closed beyond that. With
`restart = "every-game"` the referee closes each process after its game, so the pool keeps
only the Player objects, never a running process.
"""

from __future__ import annotations

import threading
import traceback
from collections import OrderedDict
from collections.abc import Callable, Iterable
from functools import partial

from arena import affinity, cgroup
from arena.botspec import first_changed
from arena.player import bot_process
from arena.referee import GameAborted, Player, play_game
from arena.tournament.executor import FieldChange, Outcome, OutcomeKind, WorkerSetup
from arena.tournament.schedule import ScheduledGame

PlayerFactory = Callable[[str, WorkerSetup], Player]


def _new_player(name: str, setup: WorkerSetup) -> Player:
    policy = setup.policies.get(name)  # the bot's sandbox, with its own limits
    return Player(setup.specs[name], display_name=name, log_dir=setup.log_dir,
                  restart_every_game=setup.restart_every_game,
                  transport_factory=partial(bot_process, sandbox_policy=policy),
                  ponder=setup.ponder)


class PlayerPool:
    """The worker's players, least recently used first; never more than `capacity`."""

    def __init__(self, setup: WorkerSetup, factory: PlayerFactory = _new_player) -> None:
        self.setup = setup
        self.capacity = max(2, setup.warm_cap)  # a game needs two players at once
        self.factory = factory
        self.players: OrderedDict[str, Player] = OrderedDict()
        self.created = 0  # players created (a created player starts its process at its game)
        # the core this worker's bots follow (`setup.follow`), one per worker in turn, as
        # `affinity = true` gives: None follows the core the worker runs on as a game begins
        self.home_core: int | None = None

    def get(self, name: str) -> Player:
        if name in self.players:
            self.players.move_to_end(name)
            return self.players[name]
        while len(self.players) >= self.capacity:
            _close(self.players.popitem(last=False)[1])
        player = self.factory(name, self.setup)
        self.players[name] = player
        self.created += 1
        return player

    def warm(self) -> set[str]:
        return set(self.players)

    def change_field(self, change: FieldChange) -> None:
        """Learn the added bots; close the warm processes of the retired ones."""
        self.setup = self.setup.changed(change)
        self.retire(change.retired)

    def retire(self, names: Iterable[str]) -> None:
        """Close the warm processes of `names` (the setup is left as it is)."""
        close_all(self.detach(names))

    def detach(self, names: Iterable[str]) -> list[Player]:
        """Take the players of `names` out of the pool, for the caller to close."""
        return [self.players.pop(n) for n in names if n in self.players]

    def close(self) -> None:
        players = list(self.players.values())
        self.players.clear()
        close_all(players)
        # the end of a worker: the bots' cgroups still busy at their close go now (a forked
        # worker leaves by os._exit, past any atexit hook)
        cgroup.drain_pending()


def _close(player: Player) -> None:
    _guarded(player.close)


def close_all(players: list[Player]) -> None:
    """Close players at once: all are asked to quit before any is waited for, so a worker
    holding the whole field waits for one exit, not one after another."""
    for player in players:
        _guarded(player.begin_close)
    for player in players:
        _guarded(player.close)


def _guarded(action: Callable[[], None]) -> None:
    try:
        action()
    except Exception:  # one failing close must not keep the others running
        pass


def _changed_bot(setup: WorkerSetup, game: ScheduledGame, starts: tuple[int, int],
                 before: tuple[int, int]) -> str | None:
    """Why the game must not be stored: a bot whose process started for it from files changed
    since the run began (its row would carry the old program hash; a `git pull` into a bot's
    folder mid-run had mixed two programs under one). None when no process started for it (a
    warm one runs the code it started with), or none from changed files."""
    for name, now, then in zip(game.bots, starts, before, strict=True):
        stamps = setup.stamps.get(name)
        if now != then and stamps and (what := first_changed(stamps)):
            return (f"bot {name!r} changed during the run ({what}): the games stored so far "
                    "are kept, this one is not; put the bot back as it was and run the same "
                    "command to resume, or start over with --fresh")
    return None


def _follow_worker(pool: PlayerPool, players: tuple[Player, Player]) -> None:
    """The game's bots run on their worker's core (`arena.affinity`: the turns of a 16-bot
    field had crossed cores): its own core among the workers' (`pool.home_core`), else the one
    it runs on now. A worker pinned with its bots (`affinity = true`) has them there already.
    The core the worker happened to run on had often been another worker's: both games' four
    bots then shared one core for the whole game while the other idled (half the CPU each, under
    a wall-clock move limit)."""
    setup = pool.setup
    if setup.cores or not setup.follow:
        return
    cpu = pool.home_core if pool.home_core is not None else affinity.current_cpu()
    if cpu is not None:
        for player in players:
            player.follow_cpu(cpu)


def play_scheduled(game: ScheduledGame, pool: PlayerPool, stop: threading.Event) -> Outcome:
    """Play one scheduled game with the pool's players; never raises for a game's sake."""
    if stop.is_set():
        return Outcome(game, OutcomeKind.ABORTED)
    try:
        first, second = pool.get(game.first), pool.get(game.second)
        _follow_worker(pool, (first, second))
        before = (first.starts, second.starts)
        seats = (pool.setup.time_control_of(game.first), pool.setup.time_control_of(game.second))
        record = play_game(game.variant, first, second, seats, opening=game.opening,
                           game_id=game.game_id, stop=stop, adjudicate_s=pool.setup.adjudicate_s,
                           seed=game.seed)
        if record.void and stop.is_set():
            return Outcome(game, OutcomeKind.ABORTED)  # cut short by the stop, not a finished game
        if changed := _changed_bot(pool.setup, game, (first.starts, second.starts), before):
            return Outcome(game, OutcomeKind.CHANGED, detail=changed)
        # the row is made here, inside the guard: a column the record cannot give is a bug to
        # report, not a lost worker the coordinator would retry and advise resuming
        row = record.to_row()
    except GameAborted:
        return Outcome(game, OutcomeKind.ABORTED)
    except Exception as error:  # a bug, not a bot's fault: the coordinator stops the run
        detail = "".join(traceback.format_exception_only(type(error), error)).strip()
        return Outcome(game, OutcomeKind.ERROR, detail=detail)
    names = (game.first, game.second)
    return Outcome(game, OutcomeKind.DONE, row=row, void=bool(record.void),
                   starts=first.starts + second.starts - sum(before),
                   start_failures={names[seat - 1]: why
                                   for seat, why in record.start_failures.items()})
