"""Each scheduled game gives its bots a seed (`game ... seed=N`) that no run changes, so that a
bot drawing random numbers plays the same games on every run of a tournament file, at any
concurrency and after a resume, whatever games its warm process played before."""

from __future__ import annotations

import hashlib
import random

from test_tournament_schedule import config

from arena import protocol
from arena.game import PRESETS
from arena.player import Player
from arena.referee import TimeControl, play_game
from arena.sdk import GameSetup, reseed
from arena.tournament.schedule import build_schedule, game_seed
from tests.fake_transport import Events, FirstLegal, factory, spec


def test_the_game_seed_is_the_documented_hash_of_the_seed_and_the_id():
    digest = hashlib.sha256(b"7/g0123456789abcdef").hexdigest()
    assert game_seed(7, "g0123456789abcdef") == int(digest[:8], 16) % 2 ** 31
    assert 0 <= game_seed(0, "x") < 2 ** 31
    assert game_seed(1, "g1") != game_seed(2, "g1") != game_seed(2, "g2")


def test_every_scheduled_game_has_the_seed_of_its_id(tmp_path):
    games = build_schedule(config(tmp_path, extra="seed = 5"))
    assert all(g.seed == game_seed(5, g.game_id) for g in games)
    assert len({g.seed for g in games}) == len(games)  # distinct: one per game
    # the same file schedules the same seeds again; another seed, other seeds
    assert [g.seed for g in build_schedule(config(tmp_path, extra="seed = 5"))] == [
        g.seed for g in games]
    assert {g.seed for g in build_schedule(config(tmp_path, extra="seed = 6"))}.isdisjoint(
        g.seed for g in games)


def test_the_game_line_carries_the_seed_only_when_there_is_one():
    info = PRESETS["classic"].describe()
    tc = TimeControl(move_ms=100).to_dict()
    with_seed = protocol.game_line("g1", 1, info, tc, "x", seed=42)
    assert with_seed.endswith(" opponent=x seed=42")
    assert protocol.parse_game_line(with_seed)["seed"] == 42
    without = protocol.game_line("g1", 1, info, tc, "x")
    assert "seed=" not in without and protocol.parse_game_line(without)["seed"] is None


def test_the_referee_tells_both_bots_the_seed_and_stores_it():
    events = Events()
    one, two = FirstLegal("one"), FirstLegal("two")
    a = Player(spec("one"), transport_factory=factory("one", one, events))
    b = Player(spec("two"), transport_factory=factory("two", two, events))
    try:
        rec = play_game(PRESETS["classic"], a, b, TimeControl(move_ms=1000), game_id="g1",
                        seed=1234)
    finally:
        a.close()
        b.close()
    for name in ("one", "two"):
        game_lines = [line for line in events.of(name, "send") if line.startswith("game ")]
        assert game_lines and game_lines[0].endswith(" seed=1234")
    assert rec.seed == 1234 and rec.to_row()["seed"] == 1234


def setup_with(seed: int | None) -> GameSetup:
    return GameSetup("g", PRESETS["classic"], 1, 100, None, 0, 5000, 200, "x", {}, seed=seed)


def test_reseed_makes_a_game_s_draws_independent_of_earlier_games():
    fresh, used = random.Random(1), random.Random(1)
    for _ in range(17):
        used.random()  # games this process played before
    reseed(fresh, setup_with(99), own_seed=3)
    reseed(used, setup_with(99), own_seed=3)
    assert [fresh.random() for _ in range(5)] == [used.random() for _ in range(5)]
    other = random.Random()
    reseed(other, setup_with(99), own_seed=4)  # the bot's own --seed still counts
    reseed(fresh, setup_with(99), own_seed=3)
    assert other.random() != fresh.random()


def test_without_a_game_seed_reseed_leaves_the_generator_alone():
    rng, twin = random.Random(5), random.Random(5)
    reseed(rng, setup_with(None), own_seed=3)
    assert rng.random() == twin.random()
