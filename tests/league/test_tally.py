"""`StoredTally`: the counts a league's choices ask for, kept from the games as they are stored,
against the old computation that read every stored game at every choice (a generated store)."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from arena.league.scheduler import RepeatTracker, Scheduler, balanced_variant, repeating_pairs
from arena.league.tally import StoredTally
from arena.ratings.elo import PairCounts, count_pairs
from arena.tournament.store import Store

VARIANTS = ["classic", "popout"]


def old_counts(store: Store, active: list[str]) -> PairCounts:
    """The league runner's `_counts` before the tally: every stored game, at every choice."""
    rows = [r for r in store.results() if r[2] is not None]
    names = sorted({*active, *(r[0] for r in rows), *(r[1] for r in rows)})
    return count_pairs([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], names=names)


def old_by_bot_variant(store: Store) -> Counter:
    """The league runner's variant counts before the tally (read again at every choice)."""
    counted: Counter = Counter()
    for first, second, result, _, variant in store.results():
        if result is not None:
            counted[(first, variant)] += 1
            counted[(second, variant)] += 1
    return counted


def old_repeating(store: Store) -> set[frozenset[str]]:
    games = store.conn.execute(
        "SELECT first, second, variant, COALESCE(opening, ''), COALESCE(moves, '') FROM games "
        "WHERE result IS NOT NULL ORDER BY seq")
    return repeating_pairs(games, 10)


def add_random_games(store: Store, rng: random.Random, bots: list[str], n: int,
                     start: int) -> None:
    """Games of every kind a league stores: wins, draws, forfeits, void games (no result),
    a replayed void game, self-play, repeated move lists, bots no longer active."""
    for k in range(start, start + n):
        first, second = rng.choice(bots), rng.choice(bots)
        if rng.random() > 0.02:  # self-play now and then: counted for names, not for pairs
            while second == first:
                second = rng.choice(bots)
        void = rng.random() < 0.05
        result = None if void else rng.choice([1.0, 0.0, 0.5, 1.0, 0.0])
        reason = "void" if void else rng.choice(["line", "line", "full", "timeout", "crash"])
        forfeit_by = (2 if result == 1.0 else 1) if reason in ("timeout", "crash") else None
        row = {"game_id": f"P{k:07d}-1", "variant": rng.choice(VARIANTS), "first": first,
               "second": second, "result": result, "reason": reason, "forfeit_by": forfeit_by,
               "plies": 7, "moves": rng.choice(["d1 d2 d1 d2 d1 d2 d1", f"d{k % 7 + 1}"]),
               "opening": rng.choice(["", "d4"])}
        store.add_game(row, pair_id=f"P{k:07d}")
        if void and rng.random() < 0.5:  # a void game played again: the row is replaced
            store.add_game({**row, "result": 0.5, "reason": "full"}, pair_id=f"P{k:07d}")


def assert_same_counts(new: PairCounts, old: PairCounts) -> None:
    assert new.names == old.names
    for name in ("first", "second", "wins", "draws", "losses"):
        assert np.array_equal(getattr(new, name), getattr(old, name)), name
        assert getattr(new, name).dtype == getattr(old, name).dtype, name


@pytest.fixture
def store(tmp_path: Path):
    with Store(tmp_path) as opened:
        yield opened


def test_the_tally_counts_as_reading_every_game_did_and_the_choices_are_the_same(
        store: Store) -> None:
    rng = random.Random(7)
    bots = [f"bot{k}@1" for k in range(7)]
    active = bots[:5] + ["newcomer@1"]  # two that left, one that has not played yet
    tally = StoredTally(RepeatTracker(10))
    old_scheduler, new_scheduler = Scheduler(seed=3), Scheduler(seed=3)
    games = 0
    for step, batch in enumerate([0, 1, 2, 40, 3, 300, 7, 600]):
        add_random_games(store, rng, bots, batch, start=games + 1)
        games += batch
        tally.update(store.conn)
        assert tally.update(store.conn) == 0  # nothing new: nothing read twice
        old, new = old_counts(store, active), tally.pair_counts(active)
        assert_same_counts(new, old)
        assert tally.by_bot_variant == old_by_bot_variant(store)
        assert tally.repeats.repeating() == old_repeating(store)
        busy = [(active[step % 5], active[(step + 1) % 5])]
        for _ in range(12):  # floor choices (one in eight) draw from the seeded generator too
            picks = old_scheduler.choose(old, active, in_flight=busy, repeating=old_repeating(store))
            assert new_scheduler.choose(new, active, in_flight=busy,
                                        repeating=tally.repeats.repeating()) == picks
            a, b = picks[0]
            assert balanced_variant(VARIANTS, tally.by_bot_variant, a, b) == \
                balanced_variant(VARIANTS, old_by_bot_variant(store), a, b)


def test_an_empty_store_gives_the_counts_of_no_games(store: Store) -> None:
    tally = StoredTally(RepeatTracker(10))
    assert tally.update(store.conn) == 0
    assert_same_counts(tally.pair_counts(["b@1", "a@1"]), old_counts(store, ["b@1", "a@1"]))
    assert tally.pair_counts(["b@1", "a@1"]).names == ["a@1", "b@1"]


def test_a_result_that_is_no_score_is_refused_as_count_pairs_does(store: Store) -> None:
    store.conn.execute("INSERT INTO games(game_id, seq, variant, first, second, result, reason, "
                       "plies, moves, opening, pair_id, started_at, finished_at) VALUES "
                       "('x', 1, 'classic', 'a', 'b', 2.0, 'line', 0, '', '', 'P1', '', '')")
    with pytest.raises(ValueError, match="results must be 1, 0.5 or 0"):
        StoredTally(RepeatTracker(10)).update(store.conn)
