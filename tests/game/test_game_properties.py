"""Property tests on random games in every preset and several sizes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.game import Game, format_record, parse_move, parse_record, parse_variant
from arena.game.replay import replay_record

SPECS = [
    "classic", "popout", "five", "popout-five",
    "classic:4x4", "popout:5x4", "classic:12x12", "popout:9x7", "five:11x8",
    "popout-five:10x5", "classic:8x5,connect=3", "popout:6x6,max-plies=30",
]


@st.composite
def random_games(draw):
    variant = parse_variant(draw(st.sampled_from(SPECS)))
    game = Game(variant)
    length = draw(st.integers(min_value=0, max_value=200))
    for _ in range(length):
        moves = game.legal_moves()
        if not moves:
            break
        game.push(draw(st.sampled_from(moves)))
    return game


def column_of(game: Game, c: int) -> str:
    return "".join(row[c] for row in reversed(game.board_rows()))


@settings(max_examples=150, deadline=None)
@given(random_games())
def test_gravity_holds(game):
    for c in range(game.variant.columns):
        column = column_of(game, c).rstrip(".")
        assert "." not in column  # no gaps below a disc
        assert len(column) == game.heights[c]


@settings(max_examples=150, deadline=None)
@given(random_games())
def test_disc_counts(game):
    cells = "".join(game.board_rows())
    fixed = sum(len(column) for column in game.variant.start)
    ones, twos = cells.count("1"), cells.count("2")
    assert ones + twos - fixed <= game.ply
    if not game.variant.pops:
        assert ones + twos - fixed == game.ply
        assert ones - twos == (game.ply % 2)
    assert game.to_move == (1 if game.ply % 2 == 0 else 2)


@settings(max_examples=150, deadline=None)
@given(random_games())
def test_legal_moves_never_raise_and_undo_restores(game):
    if game.outcome is not None:
        assert game.legal_moves() == []
        return
    state = (game.board_rows(), game.key(), list(game.heights))
    for move in game.legal_moves():
        assert game.is_legal(move)
        game.push(move)
        game.pop()
        assert (game.board_rows(), game.key(), list(game.heights)) == state


@settings(max_examples=150, deadline=None)
@given(random_games())
def test_replay_of_a_record_reproduces_the_state(game):
    record = format_record(game.variant, game.moves)
    variant, tokens = parse_record(record, parse_variant("classic"))
    again = Game(variant)
    for token in tokens:
        again.push(parse_move(token))
    assert again.board_rows() == game.board_rows()
    assert again.outcome == game.outcome and again.to_move == game.to_move
    result = replay_record(record, parse_variant("classic"))
    assert result.error is None and result.to_dict()["board"] == game.board_rows()


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(SPECS), st.integers(0, 2**32))
def test_random_playout_ends_with_a_valid_outcome(spec, seed):
    import random

    game = Game(parse_variant(spec))
    outcome = game.random_playout(random.Random(seed))
    assert outcome is game.outcome
    assert outcome.reason in ("line", "full", "empty", "repetition", "max-plies")
    # The playout's moves are a legal game: replaying them gives the same end.
    again = Game(game.variant)
    for move in game.moves:
        again.push(move)
    assert again.outcome == outcome and again.board_rows() == game.board_rows()
