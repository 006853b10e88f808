"""Time accounting without processes: budgets, deadlines, charging, increments."""

from __future__ import annotations

import pytest

from arena.clocks import GameClocks, TurnBudget
from arena.referee import TimeControl as ReexportedTimeControl
from arena.timecontrol import TimeControl


def test_time_control_lives_in_a_leaf_module_and_is_reexported():
    assert ReexportedTimeControl is TimeControl


def test_per_move_limit_budget_and_deadline():
    clocks = GameClocks(TimeControl(move_ms=300, startup_ms=2000, grace_ms=50))
    fresh = clocks.budget(1, fresh=True)
    assert fresh == TurnBudget(limit_ms=300, startup_ms=2000, grace_ms=50)
    assert fresh.deadline(10.0) == pytest.approx(12.35)
    warm = clocks.budget(1, fresh=False)
    assert warm.allowed_ms == 350 and warm.deadline(10.0) == pytest.approx(10.35)
    assert clocks.opponent_time_ms(1) is None  # no clock: the turn line says '-'
    clocks.charge(1, 120.4, warm)
    assert clocks.last_ms == {1: 120.4, 2: None} and clocks.remaining == {1: None, 2: None}


def test_timeout_detail_names_every_part_of_the_allowance():
    assert TurnBudget(300, 0, 50).timeout_detail() == "no move within 300 ms (+50 ms grace)"
    assert (TurnBudget(300, 2000, 50).timeout_detail()
            == "no move within 300 ms + 2000 ms start-up (+50 ms grace)")


def test_clock_is_charged_with_increment_and_never_the_startup():
    clocks = GameClocks(TimeControl(move_ms=None, base_ms=1000, increment_ms=100,
                                    startup_ms=5000))
    budget = clocks.budget(2, fresh=True)
    assert budget.limit_ms == 1000 and budget.startup_ms == 5000
    clocks.charge(2, 5250.0, budget)  # 5000 ms of it was the start-up allowance
    assert clocks.remaining == {1: 1000, 2: 1000 - 250 + 100}
    assert clocks.opponent_time_ms(1) == 850
    assert clocks.opponent_time_ms(2) == 1000


def test_time_used_past_zero_is_owed_out_of_the_grace():
    """A sudden-death clock never ran out: at 0 ms left each move was allowed its whole grace
    again, and a bot answering in 180 ms of a 200 ms grace played a whole game on 500 ms."""
    clocks = GameClocks(TimeControl(move_ms=None, base_ms=500, grace_ms=200))
    clocks.charge(1, 500.0, clocks.budget(1, fresh=False))  # the clock is spent
    budget = clocks.budget(1, fresh=False)
    assert (budget.limit_ms, budget.grace_ms) == (0, 200)
    clocks.charge(1, 180.0, budget)  # in time, on the grace
    budget = clocks.budget(1, fresh=False)
    assert (budget.limit_ms, budget.grace_ms, budget.allowed_ms) == (0, 20, 20)  # 180 ms is late
    assert clocks.opponent_time_ms(2) == 0  # shown as spent, not below zero


def test_clock_capped_by_per_move_limit_and_owing_at_most_the_grace():
    clocks = GameClocks(TimeControl(move_ms=500, base_ms=2000, increment_ms=10))
    assert clocks.budget(1, fresh=False).limit_ms == 500  # the smaller of the two
    clocks.charge(1, 1900.0, clocks.budget(1, fresh=False))
    assert clocks.remaining[1] == 100 + 10
    assert clocks.budget(1, fresh=False).limit_ms == 110
    clocks.charge(1, 9999.0, clocks.budget(1, fresh=False))  # used the grace and more
    assert clocks.remaining[1] == -200 + 10  # owed at most the grace
