"""Checking a game record move by move: the shared core of `arena replay` and record validation."""

from __future__ import annotations

from arena.game.moves import MoveError, format_move, parse_move
from arena.game.record import parse_record
from arena.game.state import Game, IllegalMoveError
from arena.game.variant import Variant, VariantError


class ReplayResult:
    """A replayed record: the game as far as it went, and why it stopped early (if it did)."""

    __slots__ = ("game", "error", "error_ply")

    def __init__(self, game: Game | None, error: str | None = None, error_ply: int | None = None) -> None:
        self.game = game
        self.error = error
        self.error_ply = error_ply  # 1-based index of the offending move

    def __repr__(self) -> str:
        return f"ReplayResult(game={self.game!r}, error={self.error!r}, error_ply={self.error_ply!r})"

    def to_dict(self) -> dict:
        game = self.game
        if game is None:
            return {"error": self.error, "ply": self.error_ply}
        outcome = game.outcome
        status = "ongoing" if outcome is None else ("draw" if outcome.winner is None else "win")
        data = {
            "variant": game.variant.spec,
            "plies": game.ply,
            "moves": [format_move(m) for m in game.moves],
            "status": status,
            "winner": None if outcome is None else outcome.winner,
            "reason": None if outcome is None else outcome.reason,
            "to_move": None if outcome is not None else game.to_move,
            "legal": [format_move(m) for m in game.legal_moves()],
            "board": game.board_rows(),
        }
        if self.error is not None:
            data["error"] = self.error
            data["ply"] = self.error_ply
        return data


def replay_record(line: str, default_variant: Variant) -> ReplayResult:
    """Replay one record; on a bad move, the game up to it is kept along with the error."""
    try:
        variant, tokens = parse_record(line, default_variant)
    except VariantError as error:
        return ReplayResult(None, str(error), None)
    game = Game(variant)
    for index, token in enumerate(tokens, start=1):
        try:
            game.push(parse_move(token))
        except MoveError as error:
            return ReplayResult(game, f"move {index} {token!r}: {error}", index)
        except IllegalMoveError as error:
            return ReplayResult(game, f"move {index} {token!r}: {error}", index)
    return ReplayResult(game)
