"""Fast bitboard helpers for search bots, specialised per variant (used by bots/alphabeta and
bots/mcts; light to import, like `arena.sdk`). `apply` is the one place where the bots play a move
on bitboards: it asks the variant's rules (`arena.game.rules`), as the engine does.

Same layout as the engine (`arena.game.state`): column c owns bits c*(R+1) .. c*(R+1)+R-1, bottom
first, plus an always-empty sentinel bit on top. A position is two ints: `cur` (the discs of the
side to move) and `opp`; `mask = cur | opp`. Because columns always fill from the bottom (pops
shift a column down), `mask + BOTTOM` marks the next free cell of each column.

The line tests are generated as Python source with the shifts as literals (one function per
board geometry and line length), which is about twice as fast as looping over directions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from arena.game.rules import uses_standard_hooks

if TYPE_CHECKING:
    from arena.game import Variant

_CACHE: dict[Variant, Geometry] = {}


def _win_spots_source(k: int, stride: int, full: int) -> str:
    """Source of `win_spots(p, mask)`: empty cells where a disc of `p` would complete a line.
    That such a disc wins is the standard rules' knowledge: see `Geometry.standard`."""
    lines = ["def win_spots(p, mask):"]
    # vertical: only the cells below an empty cell can hold discs
    lines.append("    r = " + " & ".join(f"(p << {i})" for i in range(1, k)))
    for s in (stride, stride - 1, stride + 1):
        # lN: N own discs in a row on the low side of the spot; hN: on the high side
        lines.append(f"    l1 = p << {s}")
        lines.append(f"    h1 = p >> {s}")
        for i in range(2, k):
            lines.append(f"    l{i} = l{i - 1} & (p << {i * s})")
            lines.append(f"    h{i} = h{i - 1} & (p >> {i * s})")
        terms = [f"l{k - 1}", f"h{k - 1}"] + [f"(l{a} & h{k - 1 - a})" for a in range(1, k - 1)]
        lines.append("    r |= " + " | ".join(terms))
    lines.append(f"    return r & ({full} ^ mask)")
    return "\n".join(lines) + "\n"


def _has_line_source(k: int, stride: int) -> str:
    lines = ["def has_line(b):"]
    for s in (1, stride, stride - 1, stride + 1):
        # doubling: after each step m marks the starts of runs of `length` discs
        lines.append("    m = b")
        length = 1
        while length * 2 <= k:
            lines.append(f"    m &= m >> {length * s}")
            length *= 2
        if length < k:
            lines.append(f"    m &= m >> {(k - length) * s}")
        lines.append("    if m:")
        lines.append("        return True")
    lines.append("    return False")
    return "\n".join(lines) + "\n"


def _potential_source(k: int, stride: int) -> str:
    """Source of `potential(own, free)`: number of K-cell windows made only of cells in `free`
    (the cells not held by the opponent) holding at least K-2 (at least 1) discs of `own`."""
    from itertools import combinations

    need = max(1, k - 2)
    lines = ["def potential(own, free):", "    n = 0"]
    for s in (1, stride, stride - 1, stride + 1):
        lines.append("    w = " + " & ".join(["free"] + [f"(free >> {i * s})" for i in range(1, k)]))
        for i in range(k):
            lines.append(f"    a{i} = own >> {i * s}" if i else "    a0 = own")
        groups = list(combinations(range(k), need))
        if len(groups) > 40:  # long lines: count windows with any disc
            groups = [(i,) for i in range(k)]
        terms = ["(" + " & ".join(f"a{i}" for i in g) + ")" for g in groups]
        lines.append("    n += (w & (" + " | ".join(terms) + ")).bit_count()")
    lines.append("    return n")
    return "\n".join(lines) + "\n"


def _compile(source: str, name: str) -> Callable:
    namespace: dict = {}
    exec(compile(source, f"<bitboard {name}>", "exec"), namespace)
    return namespace[name]


class Geometry:
    """Constants and specialised functions for one variant: board size, line length, start,
    and the hooks of its rules."""

    def __init__(self, variant: Variant) -> None:
        self.width = w = variant.columns
        self.height = h = variant.rows
        self.connect = connect = variant.connect
        self.pops = variant.pops
        self.max_plies = variant.max_plies
        self.stride = stride = h + 1
        self.bottom = [1 << (c * stride) for c in range(w)]
        self.column_mask = [((1 << h) - 1) << (c * stride) for c in range(w)]
        self.bottom_all = sum(self.bottom)
        self.full = self.full_mask = sum(self.column_mask)
        fixed = {c - 1 for c in variant.fixed_columns}
        self.fixed_mask = sum(self.column_mask[c] for c in fixed)
        centre = (w - 1) / 2
        # centre first, then alternating outwards (left before right)
        self.order = sorted(range(w), key=lambda c: (abs(c - centre), c))
        self.order = [c for c in self.order if c not in fixed]
        rules = variant.rules
        poppable = set(rules.poppable_columns(variant))
        self.poppable = [c for c in self.order if c in poppable]
        self.after_drop = rules.after_drop
        self.after_pop = rules.after_pop
        # the standard rules at every hook: only then may a search take the standard win
        # condition's shortcuts (`win_spots` as "wins now", forced blocks, a solver); under any
        # other rule it learns results from `apply` alone (a misère line loses)
        self.standard = uses_standard_hooks(rules)
        # occurrences of a position that draw (None: positions never repeat)
        self.repetition_limit = rules.repetition_limit(variant)
        row_bits = [sum(1 << (c * stride + r) for c in range(w)) for r in range(h)]
        # 1-based odd rows (0-based even) and 1-based even rows
        self.odd_rows = sum(row_bits[r] for r in range(0, h, 2))
        self.even_rows = sum(row_bits[r] for r in range(1, h, 2))
        # centre weighting: discs in the middle columns take part in more lines
        self.centre_masks = []
        for c in range(w):
            weight = max(0, connect - int(abs(c - centre) + 0.5))
            self.centre_masks.append((self.column_mask[c], weight))
        self.win_spots = _compile(_win_spots_source(connect, stride, self.full), "win_spots")
        self.has_line = _compile(_has_line_source(connect, stride), "has_line")
        self.potential = _compile(_potential_source(connect, stride), "potential")
        self.apply = _bound_apply(self)


def geometry_for(variant: Variant) -> Geometry:
    """The geometry of an `arena.game.Variant` (cached)."""
    geo = _CACHE.get(variant)
    if geo is None:
        geo = _CACHE[variant] = Geometry(variant)
    return geo


def pop_column(board: int, column_mask: int) -> int:
    """`board` with column `column_mask` shifted down by one (the bottom disc removed)."""
    return (board & ~column_mask) | ((board & column_mask) >> 1 & column_mask)


def apply(geo: Geometry, cur: int, opp: int, ply: int, move: int) -> tuple[int, int, float | None]:
    """Play the legal `move` (engine int: +c drops, -c pops) of the side to move (`cur`) at ply
    `ply`: returns (next cur, next opp, score) where the next side to move is the opponent and
    `score` is the mover's result if the move ended the game (1 win, 0.5 draw, 0 loss), else None.

    The rules' verdict comes first, then the ply cap, as in the engine; repetition needs the game's
    history, so the caller counts it (`Geometry.repetition_limit`). `geo.apply(cur, opp, ply,
    move)` is the same function with the geometry bound (faster in a search's inner loop).
    """
    return geo.apply(cur, opp, ply, move)


def _bound_apply(geo: Geometry) -> Callable[[int, int, int, int], tuple[int, int, float | None]]:
    bottom_all, column_mask, max_plies = geo.bottom_all, geo.column_mask, geo.max_plies
    after_drop, after_pop = geo.after_drop, geo.after_pop

    def apply(cur: int, opp: int, ply: int, move: int) -> tuple[int, int, float | None]:
        if move > 0:
            mover = cur | (((cur | opp) + bottom_all) & column_mask[move - 1])
            other = opp
            verdict = after_drop(geo, mover, other)
        else:
            cm = column_mask[-move - 1]
            mover = (cur & ~cm) | ((cur & cm) >> 1 & cm)
            other = (opp & ~cm) | ((opp & cm) >> 1 & cm)
            verdict = after_pop(geo, mover, other)
        if verdict is not None:
            return other, mover, verdict.score
        if ply + 1 >= max_plies:
            return other, mover, 0.5
        return other, mover, None

    return apply
