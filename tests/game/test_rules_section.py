"""PROTOCOL.md's "Rules" section, rule by rule, against the engine: `test_rule_N_*` pins rule N."""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pytest

from arena.game import PRESETS, Game, IllegalMoveError, Outcome, parse_move, parse_variant

ROOT = Path(__file__).resolve().parents[2]


def play(spec: str, tokens: str, game: Game | None = None) -> Game:
    game = game or Game(parse_variant(spec))
    for token in tokens.split():
        game.push(parse_move(token))
    return game


def rules_section() -> str:
    text = (ROOT / "PROTOCOL.md").read_text(encoding="utf-8")
    return text.split("\n## Rules\n", 1)[1].split("\n## ", 1)[0]


def test_every_numbered_rule_has_a_test():
    numbers = {int(n) for n in re.findall(r"^(\d+)\. \*\*", rules_section(), re.MULTILINE)}
    assert numbers == set(range(1, 9))
    tested = {int(name.split("_")[2]) for name in dir(sys.modules[__name__])
              if re.match(r"test_rule_\d+_", name)}
    assert tested == numbers


def test_rule_1_seat_1_moves_first_whatever_the_start_and_discs_fall():
    game = Game(PRESETS["five"])  # the start holds discs of both players
    assert game.to_move == 1
    game.push(3)
    assert game.board_rows()[-1][2] == "1" and game.to_move == 2


def test_rule_2_drops_into_any_open_column_pops_only_own_bottom_discs_off_fixed_columns():
    game = play("popout-five", "d2 d3")
    assert set(game.legal_moves()) == {*range(2, 9), -2}
    for move, why in ((-3, "not player 1's"), (-1, "fixed"), (9, "full"), (-4, "empty")):
        with pytest.raises(IllegalMoveError, match=why):
            game.push(move)
    game.push(-2)
    assert game.board_rows()[-1] == "1.2.....2"  # fixed column 1 starts 1 at the bottom


def test_rule_2_a_fixed_column_that_is_not_full_takes_drops():
    variant = PRESETS["popout-five"]
    game = Game.from_rows(variant, [".........", "2.......1", "1.......2", "2.......1",
                                    "1.......2", "2.......1"])
    assert 1 in game.legal_moves() and -1 not in game.legal_moves()


def test_rule_2_the_player_to_move_always_has_a_legal_move():
    for spec in ("popout:4x4", "classic:4x4", "popout-five:6x4"):
        variant = parse_variant(spec)
        for seed in range(20):
            game, rng = Game(variant), random.Random(seed)
            while game.outcome is None:
                moves = game.legal_moves()
                assert moves, (spec, game.moves)
                game.push(rng.choice(moves))


def test_rule_3_fixed_discs_count_in_lines_in_every_direction():
    # row 1 of five: column 1 holds player 1's fixed disc; d2..d5 by player 1 make five across
    assert play("five", "d2 d2 d3 d3 d4 d4 d5").outcome == Outcome(1, "line")
    assert play("classic", "1 2 1 2 1 2 1").outcome == Outcome(1, "line")  # vertical
    assert play("classic", "1 2 2 3 3 4 3 4 4 7 4").outcome == Outcome(1, "line")  # diagonal /
    assert play("classic", "7 6 6 5 5 4 5 4 4 1 4").outcome == Outcome(1, "line")  # diagonal, falling
    assert play("classic:9x6", "1 1 2 2 4 4 5 5 3").outcome == Outcome(1, "line")  # K or more
    # the top of column 1 and the bottom of column 2 are not neighbours
    assert play("classic:4x4", "1 2 1 2 2 1 3 1").outcome is None


def test_rule_4_a_drop_completing_a_line_wins_else_a_full_grid_draws():
    moves = "d4 d4 d2 d2 d1 d3 d2 d4 d2 d3 d1 d3 d3 d1 d4 d1"
    game = play("classic:4x4", moves)
    assert game.outcome == Outcome(None, "full")
    # a drop that fills the grid and completes a line wins
    assert play("classic:4x4,connect=2", "d1 d1 d2").outcome == Outcome(1, "line")


BOTH_LINES = [  # player 1 pops column 1: row 2 becomes 1111, row 3 becomes 2222
    ".......",
    ".......",
    "2......",
    "1222...",
    "2111...",
    "1212...",
]


def test_rule_5_after_a_pop_the_poppers_line_first_then_the_opponents_then_empty():
    both = Game.from_rows(PRESETS["popout"], BOTH_LINES, to_move=1)
    assert both.push(-1) == Outcome(1, "line")
    rows = list(BOTH_LINES)
    rows[-2] = "2122..."  # row 2 no longer completes for player 1
    only_opponent = Game.from_rows(PRESETS["popout"], rows, to_move=1)
    assert only_opponent.push(-1) == Outcome(2, "line")
    assert play("popout", "d1 d2 p1 p2").outcome == Outcome(None, "empty")
    # with fixed columns, "empty" means nothing left but them
    assert play("popout-five", "d2 d3 p2 p3").outcome == Outcome(None, "empty")


def test_rule_6_the_start_position_counts_as_the_first_occurrence():
    rows = [".......", ".......", ".......", ".......", ".......", "..12..."]
    game = Game.from_rows(PRESETS["popout"], rows, to_move=1)
    play("", "d1 d2 p1 p2", game)  # the start position again: second occurrence
    assert game.outcome is None
    play("", "d1 d2 p1", game)
    assert game.push(-2) == Outcome(None, "repetition")  # third occurrence, ply 8
    assert game.ply == 8


def test_rule_6_a_position_is_the_discs_and_the_player_to_move():
    game = play("popout", "d3 d4 d1 d2 p1 p2 d1 d2 p1")
    assert game.outcome is None
    assert game.push(-2) == Outcome(None, "repetition")
    # the same discs with the other player to move is another position
    assert play("popout", "d3 d4 d1 d2 p1 p2 d1 d2").outcome is None


def test_rule_7_the_move_reaching_the_cap_draws():
    game = play("classic,max-plies=5", "d1 d2 d3 d4")
    assert game.outcome is None
    assert game.push(5) == Outcome(None, "max-plies")


def test_rule_8_a_line_or_a_full_grid_on_the_last_ply_beats_the_cap():
    assert play("classic,max-plies=7", "1 2 1 2 1 2 1").outcome == Outcome(1, "line")
    moves = "d4 d4 d2 d2 d1 d3 d2 d4 d2 d3 d1 d3 d3 d1 d4 d1"
    assert play("classic:4x4,max-plies=16", moves).outcome == Outcome(None, "full")


def test_rule_8_a_third_occurrence_on_the_last_ply_is_a_repetition():
    game = play("popout,max-plies=10", "d3 d4 d1 d2 p1 p2 d1 d2 p1 p2")
    assert game.outcome == Outcome(None, "repetition")
