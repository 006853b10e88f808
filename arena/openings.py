"""Openings for `arena play`: a built-in set of short openings, or a file like a tournament's.

Deterministic bots play the same game over and over from the empty board, so `arena play`
starts each seat-swapped pair of games from the next opening, as tournaments do.

The built-in set is two drops next to the centre: the first player avoids the centre column (the
strongest first move on the usual boards) and the second answers in one of the three central
columns, e.g. `d3 d4` on a 7-wide board. They are placed relative to the centre, so they fit any
board size, and any that is illegal in a variant (a fixed column, a full column) is left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from arena.game import Game, IllegalMoveError, Variant

BUILTIN = "builtin"
NONE = "none"

# (first drop, reply) as offsets from the centre column, mirrored pairs next to each other.
_BUILTIN_OFFSETS: tuple[tuple[int, int], ...] = (
    (-1, 0), (1, 0), (-1, -1), (1, 1), (-1, 1), (1, -1),
)


class OpeningsError(ValueError):
    """An openings file or name that cannot be used (one-line message)."""


def builtin_openings(variant: Variant) -> list[tuple[int, ...]]:
    """The built-in openings that are legal in `variant` and do not end the game."""
    centre = (variant.columns + 1) // 2
    openings = []
    for first, reply in _BUILTIN_OFFSETS:
        moves = (centre + first, centre + reply)
        if opening_problem(variant, moves) is None:
            openings.append(moves)
    return openings


def opening_problem(variant: Variant, moves: Sequence[int],
                    tokens: Sequence[str] | None = None) -> str | None:
    """Why an opening cannot start a game of `variant` (an illegal move, or a game it already
    ends), None if it can; `tokens` are the moves as written, to quote (the one check of
    tournament files, openings files, `play --opening` and the built-in set)."""
    game = Game(variant)
    for index, move in enumerate(moves):
        try:
            game.push(move)
        except IllegalMoveError as error:
            token = tokens[index] if tokens is not None else str(move)
            return f"move {token!r} is illegal in {variant.spec}: {error}"
    if game.outcome is not None:
        return f"the opening already ends the game in {variant.spec}"
    return None


def wins_at_once(variant: Variant, moves: Sequence[int]) -> bool:
    """Whether the player to move after an opening (one `opening_problem` accepts) has a
    winning move: its games are decided by the first move, whoever the bots are."""
    game = Game(variant)
    for move in moves:
        game.push(move)
    mover = game.to_move
    for move in game.legal_moves():
        outcome = game.push(move)
        game.pop()
        if outcome is not None and outcome.winner == mover:
            return True
    return False


def reuse_note(variant_spec: str, available: int, pairs: int) -> str | None:
    """A note when `pairs` seat-swapped game pairs (per pairing) cycle through fewer openings:
    bots that always answer a position alike replay the same games, which the statistics then
    count as independent (new-user review: 24 games, 12 distinct, without a word)."""
    if available < 1 or pairs <= available:
        return None
    return (f"note: {pairs} game pairs per pairing in {variant_spec} cycle through "
            f"{available} opening(s): bots that always answer a position alike replay the same "
            "games; name an openings file with more (`arena openings --plies 4 --balanced "
            "--count 1000` writes 101 for classic)")


def openings_file(choice: str) -> Path:
    """The file an `--openings` choice names (neither `builtin` nor `none`); OpeningsError when
    there is none."""
    path = Path(choice)
    if not path.is_file():
        raise OpeningsError(f"{choice}: no such openings file (or use 'builtin' or 'none')")
    return path


def openings_for_variants(choice: str, variants: Sequence[Variant]) -> dict[str, list[tuple[int, ...]]]:
    """Per variant spec, the openings to cycle through: `builtin`, `none` (the empty board
    only) or a file of move lists (the tournament format, checked against every variant)."""
    if choice == NONE:
        return {v.spec: [()] for v in variants}
    if choice == BUILTIN:
        return {v.spec: builtin_openings(v) or [()] for v in variants}
    path = openings_file(choice)
    from arena.tournament.config import ConfigError, _read_openings

    try:
        read = _read_openings(path, list(variants))
    except ConfigError as error:
        raise OpeningsError(str(error)) from None
    out = {}
    for variant in variants:
        mine = [o.moves for o in read if o.variant in (None, variant.spec)]
        if not mine:
            raise OpeningsError(f"{choice}: no opening for {variant.spec}")
        out[variant.spec] = mine
    return out
