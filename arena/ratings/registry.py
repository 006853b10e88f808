"""The one list of rating systems. ``arena standings``, the standings files and the renderers
iterate it: a new system (Glicko-2, OpenSkill, ...) is a module defining ``SYSTEM`` (see
:mod:`arena.ratings.system`) plus one entry here (and, if users may turn it off, its name in
``OPTIONAL_SYSTEMS`` of :mod:`arena.commands.standings`)."""

from __future__ import annotations

from arena.ratings import elo, sequential, trueskill_ratings
from arena.ratings.system import RatingSystem

# Order = column order in the standings; the first system's "elo" column sorts the table.
SYSTEMS: tuple[RatingSystem, ...] = (
    elo.SYSTEM,
    trueskill_ratings.SYSTEM,
    sequential.SYSTEM,
)


def system_names() -> list[str]:
    return [s.name for s in SYSTEMS]


def get_system(name: str) -> RatingSystem:
    for system in SYSTEMS:
        if system.name == name:
            return system
    raise KeyError(f"no rating system {name!r} (known: {', '.join(system_names())})")
