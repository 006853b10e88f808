"""Every rule of the engine, PopOut's corner cases most of all."""

from __future__ import annotations

import pytest

from arena.game import (
    PRESETS,
    Game,
    IllegalMoveError,
    MoveError,
    Outcome,
    VariantError,
    format_move,
    format_record,
    parse_move,
    parse_record,
    parse_variant,
)


def play(spec: str, tokens: str) -> Game:
    game = Game(parse_variant(spec))
    for token in tokens.split():
        game.push(parse_move(token))
    return game


# --- variants -------------------------------------------------------------------------------

def test_presets_have_the_documented_shapes():
    assert (PRESETS["classic"].columns, PRESETS["classic"].rows, PRESETS["classic"].connect) == (7, 6, 4)
    assert PRESETS["popout"].pops and not PRESETS["classic"].pops
    five = PRESETS["five"]
    assert (five.columns, five.rows, five.connect, five.pops) == (9, 6, 5, False)
    assert five.fixed_columns == (1, 9)
    assert five.start[0] == (1, 2, 1, 2, 1, 2)  # column 1: first player at the bottom
    assert five.start[-1] == (2, 1, 2, 1, 2, 1)  # column C: second player at the bottom
    assert PRESETS["popout-five"].pops and PRESETS["popout-five"].fixed_columns == (1, 9)
    assert PRESETS["classic"].max_plies == 4 * 42


@pytest.mark.parametrize(
    ("spec", "shape"),
    [
        ("popout:8x7", (8, 7, 4, True)),
        ("classic:5x4", (5, 4, 4, False)),
        ("classic:9x7,connect=5", (9, 7, 5, False)),
        ("five:12x12", (12, 12, 5, False)),
        ("Popout-Five:10x8", (10, 8, 5, True)),
        ("classic:4x4", (4, 4, 4, False)),
    ],
)
def test_variant_specs_parse_at_any_size(spec, shape):
    variant = parse_variant(spec)
    assert (variant.columns, variant.rows, variant.connect, variant.pops) == shape
    assert parse_variant(variant.spec) == variant


def test_canonical_spec_names_only_what_differs():
    assert parse_variant("classic:7x6").spec == "classic"
    assert parse_variant("popout:8x7").spec == "popout:8x7"
    assert parse_variant("classic,max-plies=10").spec == "classic,max-plies=10"
    assert parse_variant("five:11x6").fixed_columns == (1, 11)


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ("chess", "unknown preset 'chess'"),
        ("clasic:8x7", "unknown preset 'clasic' in variant spec 'clasic:8x7' (did you mean "
                       "'classic'?); presets: classic, popout"),
        ("five-popout", "(did you mean 'popout-five'?)"),  # the same parts in another order
        ("classic:7by6", "bad size '7by6'"),
        ("classic:3x6", "columns must be between"),
        ("classic:7x6,connect=9", "connect must be between"),
        ("classic,colour=red", "bad option 'colour=red'"),
        ("", "empty variant spec"),
        ("classic,max-plies=-5", "max-plies must be positive, got -5"),
        ("classic,max-plies=0", "max-plies must be positive, got 0"),
        ("classic,cap=-1", "max-plies must be positive, got -1"),
        ("classic,connect=-4", "connect must be between 2 and the longer side (7), got -4"),
        ("classic,max-plies=x", "bad option 'max-plies=x'"),
        ("classic,rule=nope", "unknown rule 'nope'"),
        ("classic,connect=3,connect=4", "option 'connect' given twice"),  # the last one won
        ("classic,max-plies=30,cap=40", "option 'cap' given twice"),
    ],
)
def test_bad_variant_specs_name_the_bad_part_and_list_presets(spec, names):
    with pytest.raises(VariantError) as error:
        parse_variant(spec)
    assert names in str(error.value)
    if "preset" in names:
        assert "classic, popout, five, popout-five" in str(error.value)


# --- moves ----------------------------------------------------------------------------------

def test_move_tokens():
    assert parse_move("d4") == 4 and parse_move("p3") == -3 and parse_move("5") == 5
    assert parse_move("D12") == 12
    assert format_move(4) == "d4" and format_move(-3) == "p3"
    for bad in ("", "x4", "d", "p0", "0", "d-1", "4.0", "d٣"):
        with pytest.raises(MoveError):
            parse_move(bad)


# --- drops, lines, full grid ----------------------------------------------------------------

@pytest.mark.parametrize(
    ("record", "winner"),
    [
        ("1 1 2 2 3 3 4", 1),  # across
        ("1 2 1 2 1 2 1", 1),  # up
        ("1 2 2 3 3 4 3 4 4 7 4", 1),  # diagonal /
        ("7 6 6 5 5 4 5 4 4 1 4", 1),  # diagonal \
        ("1 2 1 2 3 2 5 2", 2),  # second player up
    ],
)
def test_a_line_of_four_wins_at_once(record, winner):
    game = play("classic", record)
    assert game.outcome == Outcome(winner, "line")
    assert game.legal_moves() == []
    with pytest.raises(IllegalMoveError, match="game is over"):
        game.push(1)


def test_longer_lines_also_win_and_k_is_respected():
    five = play("classic:9x6,connect=5", "1 1 2 2 3 3 4 4")
    assert five.outcome is None
    five.push(5)
    assert five.outcome == Outcome(1, "line")
    # Filling a gap makes a line of five, which wins under K=4 too.
    game = play("classic:9x6", "1 1 2 2 4 4 5 5")
    game.push(3)
    assert game.outcome == Outcome(1, "line")


def test_lines_do_not_wrap_across_columns():
    # Discs at the top of column 1 and bottom of column 2 are adjacent bits without the sentinel row.
    game = play("classic:4x4", "1 2 1 2 2 1 3 1")
    assert game.outcome is None


def test_a_drop_filling_the_grid_without_a_line_is_a_draw():
    record = ("d4 d4 d1 d3 d6 d5 d6 d7 d5 d3 d3 d4 d4 d6 d6 d3 d3 d5 d4 d4 d2 d2 d3 d2 d6 d6 d1 d5 "
              "d1 d5 d5 d7 d7 d7 d7 d1 d2 d1 d7 d1 d2")
    game = play("classic", record)
    assert game.outcome is None and game.legal_moves() == [2]
    game.push(2)
    assert game.outcome == Outcome(None, "full")


def test_a_drop_filling_the_grid_is_a_draw_in_popout_too():
    record = ("d5 d6 d7 d7 d3 d6 d1 d2 d7 d1 d3 d3 d2 d4 d2 d5 d7 d5 d6 d5 d3 d3 d1 d7 d2 d1 d5 d6 "
              "d4 d4 d4 d5 d4 d7 d4 d2 d1 d1 d6 d6 d3 d2")
    assert play("popout", record).outcome == Outcome(None, "full")


def test_illegal_drops():
    game = play("classic:4x4", "1 1 1 1")
    assert 1 not in game.legal_moves()
    with pytest.raises(IllegalMoveError, match="column 1 is full"):
        game.push(1)
    with pytest.raises(IllegalMoveError, match="no column 5"):
        game.push(5)


# --- pops -----------------------------------------------------------------------------------

def test_pop_removes_own_bottom_disc_and_everything_drops():
    game = play("popout", "d1 d1 d1")
    game.push(2)  # player 2 elsewhere
    game.push(-1)
    assert [row[0] for row in game.board_rows()[-2:]] == ["1", "2"]
    assert game.heights[0] == 2


def test_popping_an_opponents_disc_is_illegal():
    game = play("popout", "d1")
    assert -1 not in game.legal_moves()
    with pytest.raises(IllegalMoveError, match="not player 2's"):
        game.push(-1)


def test_pops_are_illegal_without_pops_and_on_fixed_columns():
    with pytest.raises(IllegalMoveError, match="not allowed"):
        play("classic", "d1 d2 p1")
    game = Game(parse_variant("popout-five"))
    assert all(m > 0 for m in game.legal_moves())
    with pytest.raises(IllegalMoveError, match="fixed"):
        game.push(-1)
    with pytest.raises(IllegalMoveError, match="column 9 is full"):
        game.push(9)
    with pytest.raises(IllegalMoveError, match="empty"):
        game.push(-3)


BOTH_LINES = [  # player 1 pops column 1: row 2 becomes 1111, row 3 becomes 2222
    ".......",
    ".......",
    "2......",
    "1222...",
    "2111...",
    "1212...",
]


def test_a_pop_completing_lines_for_both_players_wins_for_the_popper():
    game = Game.from_rows(PRESETS["popout"], BOTH_LINES, to_move=1)
    assert -1 in game.legal_moves()
    game.push(-1)
    rows = game.board_rows()
    assert rows[-2].startswith("1111") and rows[-3].startswith("2222")
    assert game.outcome == Outcome(1, "line")


def test_a_pop_completing_only_the_opponents_line_loses():
    rows = list(BOTH_LINES)
    rows[-2] = "2122..."  # row 2 no longer completes for player 1
    game = Game.from_rows(PRESETS["popout"], rows, to_move=1)
    game.push(-1)
    assert game.outcome == Outcome(2, "line")


def test_a_pop_that_empties_the_grid_is_a_draw():
    assert play("popout", "d1 d2 p1 p2").outcome == Outcome(None, "empty")
    # In popout-five the fixed columns stay: "empty" means nothing but them.
    assert play("popout-five", "d2 d3 p2 p3").outcome == Outcome(None, "empty")


def test_fixed_columns_count_for_lines():
    # Row 1 of five: column 1 holds player 1's disc; d2..d5 by player 1 makes five across.
    game = play("five", "d2 d2 d3 d3 d4 d4")
    assert game.outcome is None
    game.push(5)
    assert game.outcome == Outcome(1, "line")


# --- repetition and the ply cap -------------------------------------------------------------

def test_third_occurrence_of_a_position_is_a_draw():
    game = play("popout", "d3 d4 d1 d2 p1 p2 d1 d2 p1")
    assert game.outcome is None
    game.push(-2)
    assert game.outcome == Outcome(None, "repetition")
    assert game.ply == 10


def test_repetition_needs_the_same_player_to_move():
    # The same discs with the other player to move is another position.
    game = play("popout", "d3 d4 d1 d2 p1 p2 d1 d2")
    assert game.outcome is None


def test_the_ply_cap_is_a_draw():
    game = play("classic,max-plies=5", "d1 d2 d3 d4")
    assert game.outcome is None
    game.push(5)
    assert game.outcome == Outcome(None, "max-plies")
    # A line on the last allowed ply still wins.
    assert play("classic,max-plies=7", "1 2 1 2 1 2 1").outcome == Outcome(1, "line")


def test_default_cap_is_four_times_the_cells():
    assert parse_variant("popout:8x7").max_plies == 4 * 56


# --- undo, copy, records --------------------------------------------------------------------

def test_push_pop_restores_everything():
    game = play("popout", "d3 d4 d1 d2 p1 p2 d1 d2 p1")
    before = (game.board_rows(), game.key(), game.to_move, list(game.heights), game.legal_moves())
    game.push(-2)
    assert game.outcome is not None
    assert game.pop() == -2
    after = (game.board_rows(), game.key(), game.to_move, list(game.heights), game.legal_moves())
    assert before == after and game.outcome is None


def test_copy_is_independent():
    game = play("classic", "4 4")
    other = game.copy()
    other.push(4)
    assert game.ply == 2 and other.ply == 3


def test_records_round_trip_and_accept_pons_notation():
    variant, tokens = parse_record("popout:8x7: d4 d4 p4", PRESETS["classic"])
    assert variant.spec == "popout:8x7" and tokens == ["d4", "d4", "p4"]
    variant, tokens = parse_record("4453", PRESETS["classic"])
    assert variant.spec == "classic" and tokens == ["4", "4", "5", "3"]
    game = play("popout:8x7", "d4 d4 p4")
    assert format_record(game.variant, game.moves) == "popout:8x7: d4 d4 p4"
    # In a variant with pops a digit string is one bare move, not Pons' notation.
    assert parse_record("popout: 12", PRESETS["classic"])[1] == ["12"]


def test_winning_cells_mark_the_line():
    game = play("classic", "1 1 2 2 3 3 4")
    assert game.winning_cells() == [(1, 1), (2, 1), (3, 1), (4, 1)]


def test_from_rows_rejects_floating_discs():
    with pytest.raises(ValueError, match="floating"):
        Game.from_rows(parse_variant("classic:4x4"),
                       ["....", "1...", "....", "...."])


# --- every bad spec lists the presets, once ------------------------------------------------------

PRESET_LIST = "classic, popout, five, popout-five"


@pytest.mark.parametrize(
    ("spec", "part"),
    [
        ("chess", "'chess'"),
        ("classic:3x3", "columns must be between"),
        ("classic:8", "bad size '8'"),
        ("classic:7by6", "bad size '7by6'"),
        ("classic,connect=9", "connect must be between"),
        ("classic,colour=red", "bad option 'colour=red'"),
        ("classic,max-plies=0", "max-plies must be positive"),
        ("", "empty variant spec"),
    ],
)
def test_every_bad_spec_names_the_part_and_lists_the_presets_once(spec, part):
    with pytest.raises(VariantError) as error:
        parse_variant(spec)
    message = str(error.value)
    assert part in message
    assert message.count(PRESET_LIST) == 1


def test_a_comma_separated_variant_list_keeps_each_spec_with_its_options():
    from arena.game.variant import split_variant_list

    assert split_variant_list("classic, five:9x6,connect=5,max-plies=80 ,popout") == [
        "classic", "five:9x6,connect=5,max-plies=80", "popout"]
    assert split_variant_list("") == []
