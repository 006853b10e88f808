"""The executor seam: the coordinator driven by an in-memory executor (no processes), the
worker-side player pool, and the two real executors storing the same games."""

from __future__ import annotations

import os
import re
import threading
from collections import Counter

import pytest
from tournament_helpers import copy_bot, wait_no_processes, write_toml

from arena.game import parse_variant
from arena.tournament.config import load_config
from arena.tournament.executor import MAX_LOSSES, GameExecutor, Outcome, OutcomeKind, WorkerSetup
from arena.tournament.progress import Progress
from arena.tournament.runner import WORKER_QUEUE, Runner
from arena.tournament.schedule import ScheduledGame, build_schedule
from arena.tournament.store import load_games
from arena.tournament.worker import PlayerPool, play_scheduled

BODY = """
name = "ex"
variants = ["classic:5x4", "popout:5x4"]
games = 4
seed = 3
{extra}
[time]
move_ms = 2000
[[bots]]
path = "{bot}"
name = "a"
args = ["--seed", "1"]
[[bots]]
path = "{bot}"
name = "b"
args = ["--seed", "2"]
[[bots]]
path = "{bot}"
name = "c"
args = ["--seed", "3"]
"""


def quiet(*args, **kwargs):
    return Progress(*args, quiet=True, **kwargs)


class FakeExecutor(GameExecutor):
    """Plays games instantly in memory: the lower name wins; `lose` and `fail` pick games whose
    first submission comes back LOST or ERROR; a bot of `broken` never starts (it forfeits),
    and neither bot of a game of `void` starts."""

    def __init__(self, setup: WorkerSetup, workers: int, lose=None, fail=(), broken=(),
                 void=()) -> None:
        self.slots = workers
        self.setup = setup
        self.queued: list[ScheduledGame] = []
        self.submitted: list[str] = []
        self.most_in_flight = 0
        self.lose, self.fail, self.broken = dict(lose or {}), set(fail), set(broken)
        self.void = set(void)
        self.stopped = self.closed = False

    def submit(self, game):
        self.queued.append(game)
        self.submitted.append(game.game_id)
        self.most_in_flight = max(self.most_in_flight, len(self.queued))

    def results(self, timeout):
        outcomes = []
        for game in self.queued[:1]:  # one at a time: the coordinator must refill
            if self.stopped:
                outcomes.append(Outcome(game, OutcomeKind.ABORTED))
            elif self.lose.get(game.game_id):
                self.lose[game.game_id] -= 1
                outcomes.append(Outcome(game, OutcomeKind.LOST, detail="worker killed"))
            elif game.game_id in self.fail:
                outcomes.append(Outcome(game, OutcomeKind.ERROR, detail="Boom"))
            elif game.game_id in self.void:
                row = {"result": None, "reason": "void", "plies": 0, "moves": "",
                       "move_ms": "[]", "move_cpu_ms": "[]"}
                outcomes.append(Outcome(game, OutcomeKind.DONE, row=row, void=True,
                                        start_failures=dict.fromkeys(game.bots, "timeout")))
            elif self.broken & set(game.bots):
                seat = 1 if game.first in self.broken else 2
                row = {"result": float(seat == 2), "winner": 3 - seat, "reason": "crash",
                       "forfeit_by": seat, "plies": 0, "moves": "", "move_ms": "[]",
                       "move_cpu_ms": "[]"}
                outcomes.append(Outcome(game, OutcomeKind.DONE, row=row, start_failures={
                    game.bots[seat - 1]: "crash: bot exited with code 2"}))
            else:
                result = 1.0 if game.first < game.second else 0.0
                row = {"result": result, "winner": 1 if result else 2, "reason": "line",
                       "plies": 7, "moves": "d1 d2", "move_ms": "[]", "move_cpu_ms": "[]"}
                outcomes.append(Outcome(game, OutcomeKind.DONE, row=row))
        del self.queued[:1]
        return outcomes

    def stop(self):
        self.stopped = True

    def close(self):
        self.closed = True


def fake_run(tmp_path, on_error=None, **fake):
    config = load_config(write_toml(tmp_path / "ex.toml", BODY.format(bot="random", extra="")),
                         concurrency=2)
    config.output = tmp_path / "out"
    made: list[FakeExecutor] = []

    def factory(setup, workers):
        made.append(FakeExecutor(setup, workers, **fake))
        return made[0]

    result = Runner(config, install_signals=False, progress_factory=quiet,
                    executor_factory=factory, on_error=on_error).run()
    return config, result, made[0]


def test_coordinator_stores_every_game_once_through_any_executor(tmp_path):
    config, result, fake = fake_run(tmp_path)
    ids = [g.game_id for g in build_schedule(config)]
    assert result.complete and result.played == result.total == len(ids) == 24
    games = load_games(config.output)
    assert sorted(games.game_id) == sorted(ids) and games.seq.tolist() == list(range(1, 25))
    assert (games.result == (games["first"] < games["second"]).astype(float)).all()
    assert fake.most_in_flight == 2 * WORKER_QUEUE and fake.closed
    assert fake.setup.specs.keys() == {"a", "b", "c"} and fake.setup.warm_cap == 3


def test_a_lost_game_is_played_again_and_not_charged(tmp_path):
    ids = [g.game_id for g in build_schedule(load_config(
        write_toml(tmp_path / "ex.toml", BODY.format(bot="random", extra=""))))]
    config, result, fake = fake_run(tmp_path, lose={ids[3]: 1})
    assert result.complete and result.played == 24 and result.forfeits == 0
    assert Counter(fake.submitted)[ids[3]] == 2
    assert sorted(load_games(config.output).game_id) == sorted(ids)


def test_a_bot_that_cannot_start_stops_the_run_and_none_of_its_games_is_stored(tmp_path):
    config, result, fake = fake_run(tmp_path, broken={"c"})
    # its games already out when it first failed come back first: 2 or more failures
    assert re.match(r"bot 'c' \(.*\) did not start in [2-9] games: crash: ", result.error)
    assert f"{config.path}:" in result.error and "try `arena check " in result.error
    games = load_games(config.output)
    assert len(games) == result.done > 0 and not result.complete
    assert "c" not in set(games["first"]) | set(games["second"])


def test_void_games_of_bots_that_started_before_stop_their_pairing_not_the_run(tmp_path):
    schedule = build_schedule(load_config(
        write_toml(tmp_path / "ex.toml", BODY.format(bot="random", extra=""))))
    seen: set[str] = set()
    void = []
    for game in schedule:  # a and b's games once both have played one: their processes ran
        if {"a", "b"} <= seen and set(game.bots) == {"a", "b"}:
            void.append(game.game_id)
        seen |= set(game.bots)
    assert len(void) >= 4
    config, result, fake = fake_run(tmp_path, void=void)
    assert result.error is None and result.voids == 3
    assert result.skipped == len(void) - 3 and result.played == 24 - len(void)
    assert set(fake.submitted).isdisjoint(void[3:])


def test_a_game_that_keeps_losing_its_worker_stops_the_run(tmp_path):
    ids = [g.game_id for g in build_schedule(load_config(
        write_toml(tmp_path / "ex.toml", BODY.format(bot="random", extra=""))))]
    config, result, fake = fake_run(tmp_path, lose={ids[0]: MAX_LOSSES})
    assert Counter(fake.submitted)[ids[0]] == MAX_LOSSES
    assert result.error.startswith(f"game {ids[0]} (") and "lost its worker 3 times" in result.error
    assert ids[0] not in set(load_games(config.output).game_id)


def test_an_internal_error_stops_the_run_and_keeps_the_finished_games(tmp_path):
    ids = [g.game_id for g in build_schedule(load_config(
        write_toml(tmp_path / "ex.toml", BODY.format(bot="random", extra=""))))]
    told: list[str] = []  # as the run stops, not once its games are back (diff review)
    config, result, fake = fake_run(tmp_path, on_error=told.append, fail={ids[5]})
    assert told == [result.error]
    game = build_schedule(config)[5]
    assert result.error == (f"internal error in game {ids[5]} ({game.first} - {game.second}): "
                            "Boom") and not result.complete
    assert fake.stopped and fake.closed
    assert 0 < result.played < 24 and len(load_games(config.output)) == result.played


class FakePlayer:
    def __init__(self, name, setup, events=None):
        self.name, self.closed, self.events = name, False, events if events is not None else []

    def begin_close(self):
        self.events.append(("quit", self.name))

    def close(self):
        self.events.append(("wait", self.name))
        self.closed = True


def test_a_record_that_cannot_make_its_row_is_an_error_not_a_lost_worker(tmp_path, monkeypatch):
    """A bug in making the stored row (a new schema column without its GameRecord field) is
    reported as the run's error: it had escaped the guard, killed the process worker, and
    read as a worker lost three times with advice to resume."""
    import arena.tournament.worker as worker

    class Record:
        void, start_failures = False, {}

        def to_row(self):
            raise AttributeError("'GameRecord' object has no attribute 'new_column'")

    class Counted(FakePlayer):
        starts = 1

    monkeypatch.setattr(worker, "play_game", lambda *args, **kwargs: Record())
    setup = WorkerSetup({"a": None, "b": None}, None, False, tmp_path, warm_cap=4)
    pool = PlayerPool(setup, factory=Counted)
    game = ScheduledGame(game_id="g0001", pair_id="p1", round=1, variant=parse_variant("classic"),
                         first="a", second="b")
    outcome = play_scheduled(game, pool, threading.Event())
    assert outcome.kind is OutcomeKind.ERROR and "new_column" in outcome.detail
    pool.close()


def test_player_pool_keeps_the_field_and_never_more_than_its_cap(tmp_path):
    setup = WorkerSetup({n: None for n in "abcdef"}, None, False, tmp_path, warm_cap=4)
    pool = PlayerPool(setup, factory=FakePlayer)
    made = [pool.get(n) for n in "abcd"]
    assert pool.get("a") is made[0] and pool.created == 4  # warm: not made again
    pool.get("e")  # over the cap: the least recently used ("b") is closed
    assert pool.warm() == {"a", "c", "d", "e"} and made[1].closed and not made[0].closed
    for name in "abcdefabcdef":
        pool.get(name)
        assert len(pool.players) <= 4
    pool.close()
    assert not pool.players and all(p.closed for p in made)


def test_closing_the_pool_asks_every_bot_to_quit_before_waiting_for_any(tmp_path):
    """Issue 13: a worker holding the whole field waits for the exits together, not in turn;
    one failing close does not keep the others running."""
    events = []

    class Failing(FakePlayer):
        def begin_close(self):
            raise OSError("gone")

    setup = WorkerSetup({n: None for n in "abcd"}, None, False, tmp_path, warm_cap=4)
    pool = PlayerPool(setup, factory=lambda name, s: (Failing if name == "b" else FakePlayer)(
        name, s, events))
    players = [pool.get(n) for n in "abcd"]
    pool.close()
    kinds = [kind for kind, _ in events]
    assert kinds == ["quit"] * 3 + ["wait"] * 4 and all(p.closed for p in players)


def stored_games(config):
    columns = ["game_id", "variant", "first", "second", "result", "reason", "moves", "opening",
               "pair_id"]
    games = load_games(config.output)
    return games[columns].sort_values("game_id").reset_index(drop=True)


def test_both_real_executors_store_the_same_games(tmp_path):
    bot = copy_bot(tmp_path, "random", "rb")
    # every-game: each game starts fresh seeded bots, so the moves do not depend on which
    # worker played which game before
    body = BODY.format(bot="rb", extra='restart = "every-game"')
    path = write_toml(tmp_path / "ex.toml", body.replace('"classic:5x4", "popout:5x4"',
                                                         '"classic:5x4"'))
    tables = []
    for mode in ("thread", "process"):
        config = load_config(path, concurrency=2)
        config.output = tmp_path / mode
        result = Runner(config, mode=mode, install_signals=False, progress_factory=quiet).run()
        assert result.complete and result.played == 12
        tables.append(stored_games(config))
        assert wait_no_processes(str(bot)) == []
    assert len(set(tables[0].moves)) > 1  # real games, not one repeated
    assert tables[0].equals(tables[1])


@pytest.mark.parametrize("restart", ["every-game", "on-failure"])
def test_every_game_restarts_exactly_and_on_failure_keeps_the_process(tmp_path, restart):
    bot = copy_bot(tmp_path, "random", "rb")
    path = write_toml(tmp_path / "ex.toml", BODY.format(bot="rb", extra=f'restart = "{restart}"'))
    config = load_config(path)
    setup = WorkerSetup.from_config(config, tmp_path / "logs")
    pool = PlayerPool(setup)
    games = [g for g in build_schedule(config) if {g.first, g.second} == {"a", "b"}][:3]
    stop = threading.Event()
    try:
        for game in games:
            outcome = play_scheduled(game, pool, stop)
            assert outcome.kind is OutcomeKind.DONE and outcome.row["reason"] != "crash"
            assert outcome.starts == (2 if restart == "every-game" or game is games[0] else 0)
            running = [p for p in pool.players.values() if p.running]
            assert len(running) == (0 if restart == "every-game" else 2)
        starts = {name: p.starts for name, p in pool.players.items()}
        assert starts == ({"a": 3, "b": 3} if restart == "every-game" else {"a": 1, "b": 1})
    finally:
        pool.close()
    assert wait_no_processes(str(bot)) == []


def test_a_pool_learns_added_bots_and_closes_retired_ones(tmp_path):
    """A league's field changes while it plays: the pool takes the new specs, and the warm
    processes of retired bots are closed at once (not left for the LRU)."""
    from arena.tournament.executor import FieldChange

    setup = WorkerSetup({"a": "spec-a"}, None, False, tmp_path, warm_cap=8)
    pool = PlayerPool(setup, factory=FakePlayer)
    a = pool.get("a")
    pool.change_field(FieldChange(added={"b": "spec-b"}, retired=("a",)))
    assert dict(pool.setup.specs) == {"b": "spec-b"} and a.closed and pool.warm() == set()
    assert not pool.get("b").closed


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_real_executors_take_bots_that_join_and_leave_a_running_field(tmp_path, mode,
                                                                      no_leftover_processes):
    from arena.botspec import resolve_bot
    from arena.timecontrol import TimeControl
    from arena.tournament.executor import FieldChange
    from arena.tournament.runner import default_executor_factory

    spec = resolve_bot("random")
    variant = parse_variant("classic:5x4")
    setup = WorkerSetup({}, TimeControl(move_ms=2000), False, tmp_path, warm_cap=8)
    executor = default_executor_factory(mode)(setup, 1)

    def play(game_id, first, second):
        executor.submit(ScheduledGame(game_id, "p" + game_id, 0, variant, first, second))
        outcomes = []
        while not outcomes:
            outcomes = list(executor.results(timeout=30))
        return outcomes[0]

    try:
        executor.change_field(FieldChange(added={"a": spec, "b": spec}))
        first = play("g1", "a", "b")
        assert first.kind is OutcomeKind.DONE and first.starts == 2
        assert play("g2", "b", "a").starts == 0  # kept warm between games
        executor.change_field(FieldChange(added={"c": spec}, retired=("a",)))
        assert play("g3", "b", "c").starts == 1
        executor.change_field(FieldChange(added={"a": spec}))  # back: a new process
        assert play("g4", "a", "b").starts == 1
    finally:
        executor.close()


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_games_submitted_before_a_bot_retires_are_still_played(tmp_path, mode,
                                                               no_leftover_processes):
    """`change_field`'s contract: a retirement counts from the games submitted after it; one
    worker and three queued games of the bot, then the bot retires: all three are played."""
    from arena.botspec import resolve_bot
    from arena.timecontrol import TimeControl
    from arena.tournament.executor import FieldChange
    from arena.tournament.runner import default_executor_factory

    spec = resolve_bot("random")
    variant = parse_variant("classic:5x4")
    setup = WorkerSetup({}, TimeControl(move_ms=2000), False, tmp_path, warm_cap=8)
    executor = default_executor_factory(mode)(setup, 1)
    try:
        assert executor.change_field(FieldChange(added={"a": spec, "b": spec})) == {}
        for i in range(3):
            executor.submit(ScheduledGame(f"g{i}", f"p{i}", 0, variant, "a", "b"))
        executor.change_field(FieldChange(retired=("b",)))
        outcomes = []
        while len(outcomes) < 3:
            outcomes += executor.results(timeout=30)
        assert [o.kind for o in outcomes] == [OutcomeKind.DONE] * 3, [o.detail for o in outcomes]
    finally:
        executor.close()


@pytest.mark.parametrize("concurrency", [1, 64])
def test_the_bots_of_a_game_follow_their_workers_core_when_the_games_fill_the_cpus(
        tmp_path, concurrency):
    """Issue 13: a 16-bot field's turns had crossed cores (0.73 of a 4-bot field's rate); with
    as many games at once as CPUs, each game's bots are pinned to their worker's core as the
    game begins. With a core to spare they stay free (a bot's threads may use it)."""
    from arena import affinity
    from arena.sandbox import cpu_pid

    cpus = set(affinity.allowed_cpus())
    if len(cpus) < 2:
        pytest.skip("following needs CPU affinity and two CPUs to tell pinned from free")
    bot = copy_bot(tmp_path, "random", "rb")
    path = write_toml(tmp_path / "ex.toml",
                      BODY.format(bot="rb", extra=f"concurrency = {concurrency}"))
    setup = WorkerSetup.from_config(load_config(path), tmp_path / "logs")
    assert setup.follow is (concurrency >= len(cpus))
    pool = PlayerPool(setup)
    games = [g for g in build_schedule(load_config(path)) if {g.first, g.second} == {"a", "b"}]
    try:
        for game in games[:2]:  # the processes start in the first; the second begins on them
            assert play_scheduled(game, pool, threading.Event()).kind is OutcomeKind.DONE
        masks = [os.sched_getaffinity(cpu_pid(p.process.pid, p.process.sandboxed))
                 for p in pool.players.values()]
    finally:
        pool.close()
    assert wait_no_processes(str(bot)) == []
    if setup.follow:
        assert len(masks) == 2 and masks[0] == masks[1] and len(masks[0]) == 1 <= len(cpus)
        assert masks[0] <= cpus
    else:
        assert masks == [cpus, cpus]


def test_following_workers_each_get_their_own_core_for_their_bots(tmp_path):
    """Pinned to the core their worker happened to run on as a game began, two workers' games
    often shared one core for the whole game while the other idled (half the CPU for each bot
    under a wall-clock limit): each worker is given its own core for its bots, in turn."""
    from arena import affinity
    from arena.tournament.process_executor import ProcessExecutor
    from arena.tournament.worker import _follow_worker

    cpus = affinity.allowed_cpus()
    if len(cpus) < 2:
        pytest.skip("following needs CPU affinity and two CPUs")
    copy_bot(tmp_path, "random", "rb")
    path = write_toml(tmp_path / "ex.toml", BODY.format(bot="rb", extra=f"concurrency = {len(cpus)}"))
    setup = WorkerSetup.from_config(load_config(path), tmp_path / "logs")
    assert setup.follow and not setup.cores
    executor = ProcessExecutor(setup, len(cpus))
    try:
        assert sorted(w.core for w in executor._workers.values()) == sorted(cpus)
    finally:
        executor.close()

    class Followed:
        def __init__(self) -> None:
            self.cpus: list[int] = []

        def follow_cpu(self, cpu: int) -> None:
            self.cpus.append(cpu)

    pool = PlayerPool(setup)
    pool.home_core = cpus[-1]
    players = (Followed(), Followed())
    _follow_worker(pool, players)  # the worker's own core, wherever the worker runs now
    assert [p.cpus for p in players] == [[cpus[-1]], [cpus[-1]]]
