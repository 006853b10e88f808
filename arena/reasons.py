"""The one vocabulary of how a game ends: rule endings, forfeits, and void games.

Everything that stores, counts or shows a reason imports it from here (the engine, the referee,
the store, ratings, progress displays, the site). It imports nothing, so bots can use it too.
"""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    """Why a game ended; the value is what the games table's `reason` column holds."""

    # The rules ended the game (arena.game.Outcome.reason).
    LINE = "line"
    FULL = "full"
    EMPTY = "empty"
    REPETITION = "repetition"
    MAX_PLIES = "max-plies"
    # A bot lost by forfeit (`forfeit_by` names its seat).
    TIMEOUT = "timeout"
    ILLEGAL = "illegal"
    PROTOCOL = "protocol"
    CRASH = "crash"
    HANDSHAKE = "handshake"
    # The referee ended a game whose result the exact solver proved (like tablebase adjudication).
    ADJUDICATED = "adjudicated"
    # Neither bot could play (e.g. neither started): not rated, played again on resume.
    VOID = "void"


END_REASONS: tuple[str, ...] = tuple(r.value for r in (
    Reason.LINE, Reason.FULL, Reason.EMPTY, Reason.REPETITION, Reason.MAX_PLIES))
FORFEIT_REASONS: tuple[str, ...] = tuple(r.value for r in (
    Reason.TIMEOUT, Reason.ILLEGAL, Reason.PROTOCOL, Reason.CRASH, Reason.HANDSHAKE))
REFEREE_REASONS: tuple[str, ...] = (Reason.ADJUDICATED.value,)
ALL_REASONS: tuple[str, ...] = (*END_REASONS, *FORFEIT_REASONS, *REFEREE_REASONS, Reason.VOID.value)
ADJUDICATION_BUDGET_S = 0.05  # solver time per position when adjudicating (`adjudicate = "solver"`)


def is_forfeit(reason: str) -> bool:
    return reason in FORFEIT_REASONS
