"""The one vocabulary of how a game ends: rule endings, forfeits, and void games.

Everything that stores, counts or shows a reason imports it from here (the engine, the referee,
the store, ratings, progress displays, the site). It imports nothing, so bots can use it too.

Each reason is a plain string constant (`LINE == "line"`, what the games table's `reason` column
holds), and `Reason` is the same vocabulary as a StrEnum (`Reason.LINE`, iteration, `Reason(s)`).
The engine and the SDK use the constants: `enum` and building the class cost about 2.5 ms, paid by
every Python bot at every start, so `Reason` is built on its first use.
"""

from __future__ import annotations

__all__ = ["ADJUDICATED", "ALL_REASONS", "CRASH", "EMPTY", "END_REASONS",
           "FORFEIT_REASONS", "FULL", "HANDSHAKE", "ILLEGAL", "LINE", "MAX_PLIES", "NO_HELLO",
           "NO_HELLO_HINT", "PROTOCOL", "REASON_PHRASES", "REFEREE_REASONS", "REPETITION",
           "STDERR_SAID", "TIMEOUT", "VOID",
           "forfeiter_seat", "is_forfeit", "no_hello", "Reason"]  # noqa: F822 (built by __getattr__)

# Where a forfeit's detail adds what a dying bot last wrote to stderr (`...; stderr: LINE`):
# the referee and `arena check` write it, the progress line shows that part first.
STDERR_SAID = "; stderr: "
# How a bot that never answered `hello` in time is described (the referee's forfeit, `arena
# check`); `arena play` knows it by this start, to give its hint.
NO_HELLO = "no hello answer within"
# What to try then (`arena play`'s hint, a tournament's start watch): most such bots answered
# into a buffer they never flushed (awk, C's stdio, Python to a pipe).
NO_HELLO_HINT = "a bot must answer 'hello' with 'hello name=...' and flush stdout after each line"


def no_hello(startup_ms: int) -> str:
    return f"{NO_HELLO} {startup_ms} ms"

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

END_REASONS: tuple[str, ...] = (LINE, FULL, EMPTY, REPETITION, MAX_PLIES)
FORFEIT_REASONS: tuple[str, ...] = (TIMEOUT, ILLEGAL, PROTOCOL, CRASH, HANDSHAKE)
REFEREE_REASONS: tuple[str, ...] = (ADJUDICATED,)
ALL_REASONS: tuple[str, ...] = (*END_REASONS, *FORFEIT_REASONS, *REFEREE_REASONS, VOID)


# How the site says each reason ("X wins with ...", "X forfeits by ...", "Draw: ..."): the one
# list, embedded in each replay page (its script had a copy that lacked `adjudicated`). `{connect}`
# is the variant's line length.
REASON_PHRASES: dict[str, str] = {
    LINE: "{connect} in a row", FULL: "the board is full", EMPTY: "the board is empty",
    REPETITION: "threefold repetition", MAX_PLIES: "the ply limit",
    TIMEOUT: "a timeout", ILLEGAL: "an illegal move", PROTOCOL: "a protocol error",
    CRASH: "a crash", HANDSHAKE: "a failed handshake",
    ADJUDICATED: "adjudication (the exact solver proved the result)",
    VOID: "no game (neither bot started)",
}


def is_forfeit(reason: str) -> bool:
    return reason in FORFEIT_REASONS


def forfeiter_seat(reason: object, forfeit_by: object, result: object) -> int | None:
    """The seat (1 or 2) that forfeited a game: the one recorded in `forfeit_by`, else (a record
    that lacks it, e.g. written by hand) the loser's; None when no bot forfeited it.
    `ratings.facts.forfeits_by_bot` applies the same rule to a whole table at once."""
    if reason not in FORFEIT_REASONS:
        return None
    try:
        seat = int(forfeit_by)  # type: ignore[call-overload]
    except (TypeError, ValueError):  # None, NaN or missing
        seat = {0.0: 1, 1.0: 2}.get(float(result)) if isinstance(result, int | float) else None
    return seat if seat in (1, 2) else None


def _reason_enum() -> type:
    """`Reason`: a member per reason of ALL_REASONS, named after its value (`max-plies` is
    MAX_PLIES), with the module and name pickle finds it by (through `__getattr__`)."""
    from enum import StrEnum

    reason = StrEnum("Reason", [(value.upper().replace("-", "_"), value) for value in ALL_REASONS],
                     module=__name__, qualname="Reason")
    reason.__doc__ = "Why a game ended; the value is what the games table's `reason` column holds."
    return reason


def __getattr__(name: str) -> object:
    # PEP 562: `from arena.reasons import Reason` builds the enum on first use
    if name == "Reason":
        # setdefault: threads that race here all get the class the first of them stored
        return globals().setdefault("Reason", _reason_enum())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
