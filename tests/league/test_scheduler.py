"""The league scheduler: placement, floor, value, cap and `settled`, on counts without processes."""

from __future__ import annotations

import pytest

from arena.league.scheduler import (
    RepeatTracker,
    Scheduler,
    SchedulerSettings,
    balanced_variant,
    empty_counts,
    is_settled,
    neighbours,
    pair_games,
    repeating_pairs,
)
from arena.league.simulate import SimulatedField, run_active, run_round_robin
from arena.ratings.elo import fit_elo


def _field_after_round_robin(strengths, rounds, seed=0):
    field = SimulatedField(strengths, seed=seed)
    for _ in range(rounds):
        for x, a in enumerate(field.names):
            for b in field.names[x + 1:]:
                field.play_pair(a, b)
    return field


def test_choices_on_a_fixed_seed_are_pinned():
    field = _field_after_round_robin([0, 40, 80, 120, 160], rounds=3, seed=7)
    choices = Scheduler(SchedulerSettings(placement_pairs=0, floor_every=4), seed=3).choose(
        field.counts(), field.names, k=6)
    # Value picks spread over the most uncertain neighbours within a batch; the 4th is the floor's.
    assert choices == [("bot02", "bot03"), ("bot00", "bot02"), ("bot02", "bot03"), ("bot03", "bot04"),
                       ("bot00", "bot02"), ("bot04", "bot00")]


def test_same_seed_same_choices_and_pairs_are_distinct_bots():
    field = _field_after_round_robin([0, 30, 60, 90], rounds=2, seed=1)
    first = Scheduler(seed=5).choose(field.counts(), field.names, k=10)
    again = Scheduler(seed=5).choose(field.counts(), field.names, k=10)
    assert first == again and all(a != b for a, b in first)


def test_value_choice_is_the_least_certain_neighbouring_pair():
    # bot01 and bot02 are equal: their order is the least certain of all neighbours.
    field = _field_after_round_robin([0, 200, 200, 400], rounds=10, seed=2)
    scheduler = Scheduler(SchedulerSettings(placement_pairs=0, floor_every=1000), seed=0)
    [(a, b)] = scheduler.choose(field.counts(), field.names, k=1)
    assert {a, b} == {"bot01", "bot02"}


def test_newcomer_is_placed_against_opponents_spread_over_the_ranking():
    field = _field_after_round_robin([0, 100, 200, 300, 400, 500, 600], rounds=4, seed=3)
    names = [*field.names, "newbie"]
    counts = field.counts()  # "newbie" was just submitted: no games, not in the counts
    ranking = [p.lower for p in neighbours(fit_elo(counts), counts, field.names)]
    scheduler = Scheduler(SchedulerSettings(placement_pairs=3), seed=0)
    picks = scheduler.choose(counts, names, k=3)
    assert [a for a, _ in picks] == ["newbie"] * 3
    opponents = [b for _, b in picks]
    top = next(p.higher for p in neighbours(fit_elo(counts), counts, field.names))
    assert opponents[0] == top and opponents[2] == ranking[-1]  # the top, then middle, then bottom
    assert len(set(opponents)) == 3


def test_floor_reaches_every_pair_and_in_flight_pairs_count():
    field = _field_after_round_robin([0, 300, 600, 900], rounds=1, seed=4)
    scheduler = Scheduler(SchedulerSettings(placement_pairs=0, floor_every=1), seed=0)
    picks = scheduler.choose(field.counts(), field.names, k=6)
    assert {frozenset(p) for p in picks} == {frozenset((a, b)) for x, a in enumerate(field.names)
                                             for b in field.names[x + 1:]}
    busy = scheduler.choose(field.counts(), field.names, k=1, in_flight=[("bot00", "bot01")] * 3)
    assert frozenset(busy[0]) != frozenset(("bot00", "bot01"))


def test_pair_cap_stops_value_choices_and_settles():
    field = _field_after_round_robin([0, 0], rounds=5, seed=5)  # equal bots: never ordered
    counts = field.counts()
    settings = SchedulerSettings(placement_pairs=0, floor_every=1000, pair_cap=10)
    assert pair_games(counts) == {frozenset(field.names): 10}
    assert is_settled(fit_elo(counts), counts, field.names, settings)
    assert not is_settled(fit_elo(counts), counts, field.names, SchedulerSettings(pair_cap=1000))


def test_pairs_that_only_repeat_themselves_are_settled_and_not_chosen_for_value():
    """Two deterministic bots of equal strength took 582 of a league's 646 games, 24 of them
    distinct (user review): once a pair's last games all copy earlier ones, it is settled."""
    def game(first, second, moves, opening="d1"):
        return (first, second, "classic", opening, moves)

    played = [game("a", "b", "d1 d2"), game("b", "a", "d1 d3")]
    repeats = [game("a", "b", "d1 d2"), game("b", "a", "d1 d3")] * 5  # 10 copies in a row
    assert repeating_pairs(played + repeats, 10) == {frozenset("ab")}
    assert repeating_pairs(played + repeats[:-1], 10) == set()  # 9 in a row: not yet
    # a new game breaks the streak; another pair's games do not
    assert repeating_pairs(played + repeats + [game("a", "b", "d1 d4")], 10) == set()
    assert repeating_pairs(played + repeats + [game("a", "c", "d1")], 10) == {frozenset("ab")}
    # the same moves from the other seat or another opening are a new game
    assert repeating_pairs([game("a", "b", "d1"), game("b", "a", "d1")], 1) == set()
    assert repeating_pairs([game("a", "b", "d1"), game("a", "b", "d1", "d2")], 1) == set()
    assert repeating_pairs([game("a", "b", "d1"), game("a", "b", "d1")], 1) == {frozenset("ab")}

    # fed as the games come (a league's run reads only those stored since its last look)
    tracker = RepeatTracker(10)
    for g in played + repeats[:5]:
        tracker.add(*g)
    assert tracker.repeating() == set()
    for g in repeats[5:]:
        tracker.add(*g)
    assert tracker.repeating() == {frozenset("ab")}

    field = _field_after_round_robin([0, 0, 400], rounds=5, seed=5)
    counts = field.counts()
    equal = frozenset(("bot00", "bot01"))
    settings = SchedulerSettings(placement_pairs=0, floor_every=1000)
    assert not is_settled(fit_elo(counts), counts, field.names, settings)
    choices = Scheduler(settings, seed=1).choose(counts, field.names, k=4)
    assert any(frozenset(c) == equal for c in choices)
    choices = Scheduler(settings, seed=1).choose(counts, field.names, k=4, repeating={equal})
    assert not any(frozenset(c) == equal for c in choices)
    fit = fit_elo(counts)  # bot02 is ordered above the two (LOS 0.99); the two never will be
    assert is_settled(fit, counts, field.names, settings, repeating={equal})


def test_neighbours_are_in_rating_order_with_los():
    field = _field_after_round_robin([0, 300, 600], rounds=20, seed=6)
    counts = field.counts()
    pairs = neighbours(fit_elo(counts), counts, field.names)
    assert [(p.higher, p.lower) for p in pairs] == [("bot02", "bot01"), ("bot01", "bot00")]
    assert all(p.los > 0.95 for p in pairs)


def test_active_scheduling_settles_with_far_fewer_games_than_round_robin():
    settings = SchedulerSettings()
    strengths = [60 * k for k in range(6)]
    active = run_active(SimulatedField(strengths, seed=11), settings, 200_000, seed=11)
    rr = run_round_robin(SimulatedField(strengths, seed=11), settings, 200_000)
    assert active.settled and rr.settled and active.order_right
    assert active.games < rr.games


def test_variants_stay_balanced_per_bot_and_bad_settings_are_refused():
    played = {("a", "classic"): 4, ("b", "classic"): 4, ("a", "popout"): 2}
    assert balanced_variant(["classic", "popout", "five"], played, "a", "b") == "five"
    assert balanced_variant(["classic", "popout"], played, "a", "b") == "popout"
    assert Scheduler().choose(empty_counts(["solo"]), ["solo"]) == []
    assert len(Scheduler().choose(empty_counts(["x", "y"]), ["x", "y"], k=2)) == 2
    with pytest.raises(ValueError, match="confidence"):
        SchedulerSettings(confidence=1.5)
