"""What a rating system is, for the standings: one surface every system module implements.

A rating system is a module that defines ``SYSTEM``, an object with

* ``name`` - the key of the system (``elo``, ``trueskill``, ...), used by ``--no-<name>``;
* ``display`` - the columns a standings table shows for it (:class:`Display`);
* ``optional`` - True when users may turn it off (``arena standings --no-<name>``; its name also
  goes in ``OPTIONAL_SYSTEMS`` of :mod:`arena.commands.standings`, which ``--help`` reads without
  importing the rating code);
* ``wanted(options)`` - whether it runs with these options (sequential Elo only with a K);
* ``rate(games, options)`` - its ratings of :class:`~arena.ratings.table.CodedGames`, one value per
  bot in ``games.names`` order, as :class:`Rated`.

The systems are listed once, in :data:`arena.ratings.registry.SYSTEMS`; the standings, the
renderers and ``arena standings`` iterate that list, so adding Glicko-2 or OpenSkill is one module
plus one entry there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

from arena.ratings.table import Anchor, CodedGames


@dataclass(frozen=True)
class RatingOptions:
    """Options of a standings computation; each system reads the ones it knows."""

    anchor: Anchor | None = None  # report Elo-scale ratings relative to this bot at this value
    # Elo: also fit a first-move advantage. On by default: with seats alternating, a first
    # player who scores 76% made an unfitted spread 0.79x the true one, and its 95% intervals
    # covered the truth 29-68% of the time (simulated round robins)
    first_move: bool = True
    bootstrap: int = 0  # Elo: intervals from this many bootstrap refits (0: covariance)
    seed: int = 0
    tau: float = 0.0  # TrueSkill dynamics factor
    draw_probability: float | None = None  # TrueSkill; None: the observed draw rate
    sequential_k: float | None = None  # sequential Elo runs only when a K-factor is given
    skip: frozenset[str] = frozenset()  # names of systems not to run (e.g. {"trueskill"})


@dataclass(frozen=True)
class Display:
    """One column of a standings table as shown on a terminal or in Markdown.

    ``keys`` names one table column (a number) or two (an interval ``[lo, hi]``). ``scale``:
    ``"elo"`` for ratings on the Elo scale relative to a reference (signed while the reference is
    the pool mean, plain numbers once anchored), ``"signed"`` always signed (a rating that starts
    at 0), ``"plain"`` never.
    """

    header: str
    keys: tuple[str, ...]
    digits: int
    scale: str = "plain"


@dataclass
class Rated:
    """A system's output: standings columns aligned with ``CodedGames.names``, the notes that
    say how they were computed, the warnings among them that qualify these very numbers (the
    site shows those beside the table), and values for the table's ``attrs``."""

    columns: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)


class RatingSystem(Protocol):
    name: str
    display: tuple[Display, ...]
    optional: bool

    def wanted(self, options: RatingOptions) -> bool: ...

    def rate(self, games: CodedGames, options: RatingOptions) -> Rated: ...


def format_number(x: object, digits: int = 1, signed: bool = False) -> str:
    """A number as tables, charts and notes show it: fixed digits, `-` when missing, never
    `-0` (a rating of exactly 0 read as `-0` on the chart: new-user review)."""
    if x is None:
        return "-"
    try:
        f = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(f):
        return "-"
    if math.isinf(f):  # signed only as asked: a margin's `+inf` read as a difference
        return ("+inf" if signed else "inf") if f > 0 else "-inf"
    f = round(f, digits) + 0.0  # a value that rounds to zero prints as 0, never as -0
    return f"{f:+.{digits}f}" if signed else f"{f:.{digits}f}"
