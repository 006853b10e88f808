"""Game records: `VARIANT: m1 m2 ...` on one line, or Pascal Pons' digit strings (`4453`)."""

from __future__ import annotations

from arena.game.moves import format_move
from arena.game.variant import Variant, parse_variant


def parse_record(line: str, default_variant: Variant) -> tuple[Variant, list[str]]:
    """Split a record into its variant and its move tokens (not yet checked).

    The spec may itself hold a colon (`popout:8x7: d4 p4`), so the moves start after the last one.
    A single all-digit token in a variant without pops and at most 9 columns is Pons' notation:
    one column digit per move.
    """
    variant = default_variant
    text = line.strip()
    if ":" in text:
        spec, _, text = text.rpartition(":")
        variant = parse_variant(spec)
    tokens = text.split()
    if (
        len(tokens) == 1
        and len(tokens[0]) > 1
        and tokens[0].isdigit()
        and not variant.pops
        and variant.columns <= 9
    ):
        tokens = list(tokens[0])
    return variant, tokens


def format_record(variant: Variant, moves: list[int]) -> str:
    return f"{variant.spec}: {' '.join(format_move(m) for m in moves)}".rstrip()
