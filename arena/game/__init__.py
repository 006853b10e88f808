"""The rules of Four in a Row and its variants: pure, I/O-free and light to import.

Bots import this package, so it must not pull in pandas, matplotlib or click.
"""

from arena.game.moves import MoveError, format_move, parse_move
from arena.game.record import format_record, parse_record
from arena.game.state import Game, IllegalMoveError, Outcome
from arena.game.variant import (
    PRESET_SUMMARIES,
    PRESETS,
    Variant,
    VariantError,
    build_variant,
    parse_variant,
)
from arena.reasons import END_REASONS as REASONS

__all__ = [
    "Game",
    "IllegalMoveError",
    "MoveError",
    "Outcome",
    "PRESETS",
    "PRESET_SUMMARIES",
    "REASONS",
    "Variant",
    "VariantError",
    "build_variant",
    "format_move",
    "format_record",
    "parse_move",
    "parse_record",
    "parse_variant",
]
