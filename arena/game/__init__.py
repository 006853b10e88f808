"""The rules of Four in a Row and its variants: pure, I/O-free and light to import.

Bots import this package, so it must not pull in pandas, matplotlib or click.
"""

from arena.game.moves import MoveError, format_move, parse_move
from arena.game.record import format_record, parse_record
from arena.game.rules import (
    DRAW_EMPTY,
    DRAW_FULL,
    MOVER_LOSES,
    MOVER_WINS,
    RULES,
    STANDARD,
    Outcome,
    Rules,
    RulesError,
    Verdict,
    first_player_score,
    register_rules,
)
from arena.game.state import Game, IllegalMoveError
from arena.game.variant import (
    DEFAULT_VARIANT,
    PRESET_SUMMARIES,
    PRESETS,
    Variant,
    VariantError,
    build_variant,
    parse_variant,
)
from arena.reasons import END_REASONS as REASONS

__all__ = [
    "DEFAULT_VARIANT",
    "DRAW_EMPTY",
    "DRAW_FULL",
    "MOVER_LOSES",
    "MOVER_WINS",
    "RULES",
    "STANDARD",
    "Game",
    "IllegalMoveError",
    "MoveError",
    "Outcome",
    "first_player_score",
    "PRESETS",
    "PRESET_SUMMARIES",
    "REASONS",
    "Rules",
    "RulesError",
    "Variant",
    "VariantError",
    "Verdict",
    "build_variant",
    "format_move",
    "format_record",
    "parse_move",
    "parse_record",
    "parse_variant",
    "register_rules",
]
