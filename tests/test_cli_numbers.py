"""Numbers the commands refuse in one line (no traceback): nan passes every range comparison,
and the rating maths fails on nan, infinities and huge values; SPRT error rates whose bounds
cross would accept a hypothesis before any game."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from arena.cli import main


@pytest.mark.parametrize(("args", "fragment"), [
    (["standings", "-", "--tau", "nan"], "'nan' is not a finite number"),
    (["standings", "-", "--tau", "inf"], "not in the range"),
    (["standings", "-", "--tau", "1e300"], "not in the range"),
    (["standings", "-", "--sequential", "nan"], "'nan' is not a finite number"),
    (["standings", "-", "--sequential", "1e308"], "not in the range"),
    (["play", "random", "greedy", "--sprt", "0,50", "--sprt-alpha", "nan"],
     "'nan' is not a finite number"),
    (["play", "random", "greedy", "--sprt", "0,50", "--sprt-alpha", "0.6", "--sprt-beta", "0.6"],
     "alpha + beta must be below 1, not 0.6 + 0.6"),
    (["play", "random", "greedy", "--sprt", "50,0"], "SPRT needs elo0 < elo1"),
    (["play", "random", "greedy", "--sprt", "nan,50"], "between -2000 and 2000"),
    (["play", "random", "greedy", "--sprt", "0,1e308"], "between -2000 and 2000"),
    # a unit in the value: click said "'100ms' is not a valid integer range"
    (["play", "random", "greedy", "--move-ms", "100ms"],
     "'100ms' is not a whole number of milliseconds, e.g. 100"),
    (["check", "random", "--startup-ms", "5s"], "'5s' is not a whole number of milliseconds"),
    (["play", "random", "greedy", "--move-ms-a", "100ms"],
     "'100ms' is not a whole number of milliseconds"),
    (["play", "random", "greedy", "--games", "ten"], "'ten' is not a whole number."),
    # not numbers, but the same kind of slip: a variant given twice was played twice
    (["play", "random", "greedy", "-v", "classic", "-v", "Classic"],
     "'Classic' names the variant classic a second time"),
])
def test_out_of_range_numbers_are_one_line(args, fragment):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert fragment in result.output, result.output
