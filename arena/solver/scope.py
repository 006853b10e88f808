"""Which variants the exact solver takes: a light module (no numpy, no numba), so that a bot can
ask before it loads either."""

from __future__ import annotations

from arena.game import Variant
from arena.game.rules import STANDARD


def fits(columns: int, rows: int, connect: int) -> bool:
    """Whether the engine handles this board (four in a row, every cell in one 63-bit word)."""
    return connect == 4 and columns * (rows + 1) <= 63 and columns >= 1 and rows >= 1


def solvable(variant: Variant) -> bool:
    """Whether positions of `variant` can be solved exactly by `arena.solver.engine.Engine`:
    drop-only, four in a row, standard rules, a board of at most 63 bits, and a ply cap that
    cannot cut the game short."""
    return (
        not variant.pops
        and variant.rules is STANDARD
        and fits(variant.columns, variant.rows, variant.connect)
        and variant.max_plies >= variant.columns * variant.rows
    )
