"""The rule points of the game as hooks on one class, and the registry of rules.

Every rule point the engine consults lives here, in the style of python-chess's `variant.py`: a
`Rules` subclass overrides the hooks it changes, and one `register_rules` call makes it usable
in variant specs (`classic,rule=NAME`), in `Game`, in `arena replay` and in the bots' bitboard
`apply` (`arena.bitboard`). The hooks:

- `poppable_columns(variant)`: legal moves. Drops go into any column that is not full; these
  (0-based) columns may also be popped by the player whose disc is at their bottom.
- `after_drop(geo, mover, other)` / `after_pop(geo, mover, other)`: the win condition and the
  pop outcome, with the full-grid and emptied-grid draws: a `Verdict` for the player who just
  moved, or None if the game goes on. `mover` and `other` are the two players' bitboards after the
  move; `geo` offers `has_line(board)`, `full_mask` and `fixed_mask` (see `arena.game.state`).
- `repetition_limit(variant)`: the occurrence of a position (discs and player to move, the start
  position included) that draws, or None if positions cannot repeat.

Fixed rule points, the same for every rule: the verdict of a move comes first, then repetition,
then the ply cap (`Variant.max_plies`), so a line made on the last allowed ply still counts.

The hooks must be pure functions of their arguments: the engine and the bots' searches call them
on positions they later undo.
"""

from __future__ import annotations

from collections import namedtuple

from arena.reasons import EMPTY, END_REASONS, FULL, LINE

TYPE_CHECKING = False  # typing is not imported at run time: `import arena.game` stays light
if TYPE_CHECKING:
    from typing import Protocol

    from arena.game.variant import Variant

    class BoardGeometry(Protocol):
        """What the hooks may use of a geometry (`arena.game.state` and `arena.bitboard` offer it)."""

        full_mask: int
        fixed_mask: int

        def has_line(self, board: int) -> bool: ...


# How a game ended: the winning player (1 or 2, None for a draw) and the reason (an
# arena.reasons.END_REASONS value). collections' namedtuple, not typing's: the same tuple, and
# the engine imports in a few milliseconds (`arena replay` starts like `python -c pass`).
Outcome = namedtuple("Outcome", ["winner", "reason"])


def first_player_score(winner: int | None) -> float:
    """The first player's score (the games table's `result`) of a game `winner` won (1 or 2;
    None: a draw)."""
    return {1: 1.0, 2: 0.0, None: 0.5}[winner]


class Verdict:
    """How a move ended the game, from the point of view of the player who made it."""

    __slots__ = ("score", "reason", "outcomes")

    def __init__(self, score: float, reason: str) -> None:
        if score not in (0.0, 0.5, 1.0):
            raise ValueError(f"a verdict scores 0, 0.5 or 1 for the mover, got {score}")
        if reason not in END_REASONS:  # the store, ratings and site know only these
            raise ValueError(f"a verdict's reason is one of {', '.join(END_REASONS)}, got {reason!r}")
        self.score = score  # 1: the mover wins, 0.5: draw, 0: the mover loses
        self.reason = str(reason)
        self.outcomes: tuple[Outcome, Outcome] = (self._outcome(1), self._outcome(2))

    def _outcome(self, mover: int) -> Outcome:
        winner = mover if self.score == 1.0 else None if self.score == 0.5 else 3 - mover
        return Outcome(winner, self.reason)

    def __repr__(self) -> str:
        return f"Verdict({self.score}, {self.reason!r})"


MOVER_WINS = Verdict(1.0, LINE)
MOVER_LOSES = Verdict(0.0, LINE)
DRAW_FULL = Verdict(0.5, FULL)
DRAW_EMPTY = Verdict(0.5, EMPTY)


class Rules:
    """The standard rules (README "Games and variants", PROTOCOL.md "Rules").

    A line of `connect` or more discs (fixed discs included) wins for its owner at once. A drop
    that completes a line wins for the dropper, else a drop that fills the grid draws. After a
    pop the popper wins if it has a line (even if the opponent has one too), else the opponent
    wins if it has one, else a grid emptied of all but fixed discs draws. With pops, the third
    occurrence of a position draws.
    """

    name = "standard"
    summary = "a line of K or more wins"

    def poppable_columns(self, variant: Variant) -> tuple[int, ...]:
        if not variant.pops:
            return ()
        fixed = set(variant.fixed_columns)
        return tuple(c for c in range(variant.columns) if c + 1 not in fixed)

    def after_drop(self, geo: BoardGeometry, mover: int, other: int) -> Verdict | None:
        if geo.has_line(mover):
            return MOVER_WINS
        if mover | other == geo.full_mask:
            return DRAW_FULL
        return None

    def after_pop(self, geo: BoardGeometry, mover: int, other: int) -> Verdict | None:
        if geo.has_line(mover):
            return MOVER_WINS
        if geo.has_line(other):
            return MOVER_LOSES
        if (mover | other) & ~geo.fixed_mask == 0:
            return DRAW_EMPTY
        return None

    def repetition_limit(self, variant: Variant) -> int | None:
        # only pops take discs away: without them no position can come back
        return 3 if variant.pops else None

    def __repr__(self) -> str:
        return f"<rules {self.name}>"

    # A rule is its registered name: a pickled or copied Variant (a forked or remote worker's)
    # gets the same registered object back, so specs and equality survive the trip.
    def __reduce__(self) -> tuple:
        return (rules_named, (self.name,))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rules) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


def rules_named(name: str) -> Rules:
    """The registered rule called `name` (how pickled rules come back)."""
    try:
        return RULES[name]
    except KeyError:
        raise RulesError(f"no rule named {name!r} is registered here ({', '.join(sorted(RULES))})") from None


STANDARD = Rules()

RULES: dict[str, Rules] = {STANDARD.name: STANDARD}


class RulesError(ValueError):
    """A rule that cannot be registered."""


def register_rules(rules: Rules) -> Rules:
    """Make `rules` usable as `rule=NAME` in variant specs; returns it (usable as a decorator's
    result). A name can be registered once."""
    name = rules.name
    if not name or not all(ch.isalnum() or ch == "-" for ch in name) or name != name.lower():
        raise RulesError(f"bad rule name {name!r}: use lower-case letters, digits and '-'")
    if name in RULES and RULES[name] is not rules:
        raise RulesError(f"rule {name!r} is already registered")
    RULES[name] = rules
    return rules


# Every hook a rule may override: the one list (a test holds it to `Rules`' methods), so that a
# fast path asking for all of them (`uses_standard_hooks(rules)`) also refuses a rule that
# overrides a hook added later (naming hooks one by one let a new one through unseen).
RULE_HOOKS: tuple[str, ...] = ("poppable_columns", "after_drop", "after_pop", "repetition_limit")


def uses_standard_hooks(rules: Rules, *hooks: str) -> bool:
    """True if `rules` keeps the standard behaviour of every hook named, or of every hook
    (`RULE_HOOKS`) when none is named (fast paths may inline it)."""
    return all(getattr(type(rules), hook) is getattr(Rules, hook) for hook in hooks or RULE_HOOKS)
