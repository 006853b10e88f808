"""`arena check`: passes good bots, fails bad ones with hints."""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner

from arena.commands.check import command as check_command
from tests.conftest import MISBEHAVE


def run(*args: str):
    return CliRunner().invoke(check_command, list(args), catch_exceptions=False)


def test_greedy_passes(no_leftover_processes):
    result = run("greedy", "-n", "1")
    assert result.exit_code == 0, result.output
    assert "FAIL" not in result.output and "all checks passed" in result.output
    assert "start-up:" in result.output and "move time: p50" in result.output


@pytest.mark.skipif(shutil.which("awk") is None, reason="needs awk")
def test_awk_bot_passes(no_leftover_processes):
    result = run("awk", "-n", "1")
    assert result.exit_code == 0, result.output


def test_illegal_bot_fails_with_hint(no_leftover_processes):
    result = run(str(MISBEHAVE), "--args", "illegal --after 1", "-n", "1")
    assert result.exit_code == 1
    assert "FAIL  games: classic" in result.output and "hint: replay the move list" in result.output


def test_bad_hello_fails_fast(no_leftover_processes):
    result = run(str(MISBEHAVE), "--args", "bad_hello")
    assert result.exit_code == 1
    assert "FAIL  handshake" in result.output and "1 check(s) failed" in result.output


def test_unknown_bot_is_one_line_error():
    result = CliRunner().invoke(check_command, ["no-such-bot-xyz"])
    assert result.exit_code == 1 and "Traceback" not in result.output
