"""The mcts bot: legal games in every preset and size, immediate wins and blocks, deadlines."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from arena.game import parse_variant
from tests.bot_helpers import SPECS, bot_help, heavy_modules_after_import, play_game, position

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "bots" / "mcts"
sys.path.insert(0, str(BOT))

from tree import LEVELS, MctsPlayer  # noqa: E402


@pytest.mark.parametrize("spec", SPECS)
def test_plays_legal_games_in_every_preset_and_size(spec):
    variant = parse_variant(spec)
    game = play_game(variant, [MctsPlayer(variant, "hard", 1), MctsPlayer(variant, "easy", 2)],
                     move_s=0.02)
    assert game.outcome.reason in ("line", "full", "empty", "repetition", "max-plies")



@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize(
    "spec, moves, expected",
    [
        ("classic", "4 1 4 1 4", {4}),
        ("classic", "1 1 2 2 3", {4}),
        ("classic", "4 4 3 3 2 2", {1, 5}),
        ("classic", "1 2 1 2 1 2", {1}),  # win rather than block
        ("popout", "1 2 1 2 1 2", {1}),
        ("five", "3 3 4 4 5 5 6 6", {2, 7}),
        ("popout-five", "3 3 4 4 5 5 6 6", {2, 7}),
        ("popout", "4 1 1 2 2 3 3 4 4 7", {-4, 4}),  # popping column 4 wins at once
    ],
)
def test_takes_immediate_wins_and_blocks(level, spec, moves, expected):
    game = position(spec, moves)
    move = MctsPlayer(game.variant, level, 0).choose(game, time.monotonic() + 1.0)
    if spec == "popout" and -4 in expected:
        assert game.push(move) == (1, "line")
    else:
        assert move in expected


def test_popout_threat_search_finds_a_double_threat():
    # player 1 holds columns 3 and 4 at the bottom: a third disc beside them threatens both ends
    game = position("popout", "3 3 4 4")
    player = MctsPlayer(game.variant, "hard", 0)
    win = player._forced_win(game.boards[0], game.boards[1], game.ply, 1,
                             time.monotonic() + 60)
    assert win in (2, 5)
    # and the player plays one of them (or wins as fast another way)
    move = player.choose(game, time.monotonic() + 1.0)
    assert move in (2, 5)


def test_heuristic_leaves_only_for_long_popout_lines():
    assert MctsPlayer(parse_variant("popout-five"), "hard", 0).evaluated
    assert not MctsPlayer(parse_variant("popout"), "hard", 0).evaluated
    assert not MctsPlayer(parse_variant("five"), "hard", 0).evaluated


def test_keeps_to_a_short_deadline():
    game = position("popout", "4 4 3 5")
    player = MctsPlayer(game.variant, "hard")
    start = time.monotonic()
    player.choose(game, start + 0.05)
    assert time.monotonic() - start < 0.5  # generous: the machine may be loaded
    assert player.playouts > 0


def test_bot_modules_stay_light():
    assert heavy_modules_after_import(BOT, "tree", "arena.bitboard") == []


def test_bot_script_runs_under_the_sdk():
    out = bot_help(BOT / "mcts.py")
    assert out.returncode == 0 and "--level" in out.stdout, out.stderr
