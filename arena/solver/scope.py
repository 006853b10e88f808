"""Which variants the exact solver takes: a light module (no numpy, no numba), so that a bot can
ask before it loads either."""

from __future__ import annotations

from arena.game import Variant
from arena.game.rules import STANDARD

# The solver's time per position when adjudicating (`adjudicate = "solver"`, `play --adjudicate`).
ADJUDICATION_BUDGET_S = 0.05


def fits(columns: int, rows: int, connect: int) -> bool:
    """Whether the engine handles this board (four in a row, every cell in one 63-bit word)."""
    return connect == 4 and columns * (rows + 1) <= 63 and columns >= 1 and rows >= 1


def adjudication_note(variants: list[Variant]) -> str | None:
    """The note for an adjudicating run with variants the solver does not take (their games
    are played out), None when it takes them all: `play`, tournaments and leagues say it."""
    left = [v.spec for v in variants if not solvable(v)]
    if not left:
        return None
    return (f"note: adjudication applies where the exact solver reaches (drop-only four in a "
            f"row, boards of at most 63 bits): {', '.join(left)} games are played out")


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
