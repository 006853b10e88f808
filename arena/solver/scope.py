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


# What the exact solver takes, in words: every message about its scope says this one sentence.
SCOPE = ("drop-only four in a row under the standard rules, on boards of at most 63 bits "
         "(columns x (rows + 1))")


def unsolvable_reason(variant: Variant) -> str | None:
    """Why the exact solver cannot take `variant` (a short phrase naming what differs), None
    when it can: the one test behind `solvable` and every message about its scope."""
    if variant.pops:
        return "pops"
    if variant.rules is not STANDARD:
        return f"rule={variant.rules.name}, not the standard rules"
    if variant.connect != 4:
        return f"{variant.connect} in a row"
    if not fits(variant.columns, variant.rows, variant.connect):
        return f"{variant.columns}x{variant.rows} is over 63 bits"
    if variant.max_plies < variant.columns * variant.rows:
        return f"a ply cap of {variant.max_plies}, below the board's {variant.columns * variant.rows} cells"
    return None


def solvable(variant: Variant) -> bool:
    """Whether positions of `variant` can be solved exactly by `arena.solver.engine.Engine`:
    drop-only, four in a row, standard rules, a board of at most 63 bits, and a ply cap that
    cannot cut the game short."""
    return unsolvable_reason(variant) is None


def adjudication_note(variants: list[Variant]) -> str | None:
    """The note for an adjudicating run with variants the solver does not take (their games
    are played out), None when it takes them all: `play`, tournaments and leagues say it."""
    left = [f"{v.spec} ({why})" for v in variants if (why := unsolvable_reason(v))]
    if not left:
        return None
    return (f"note: adjudication applies where the exact solver reaches ({SCOPE}); "
            f"games of {', '.join(left)} are played out")


def unsolvable_message(variant: Variant) -> str | None:
    """`SPEC: the exact solver handles ... only (here: WHY)`, None for a variant it takes."""
    why = unsolvable_reason(variant)
    return None if why is None else f"{variant.spec}: the exact solver handles {SCOPE} only ({why})"
