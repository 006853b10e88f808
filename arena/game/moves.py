"""Move tokens: `dN` drops into column N, `pN` pops column N; a bare `N` is a drop.

Internally a move is an int: `+N` for a drop, `-N` for a pop (columns are 1-based).
"""

from __future__ import annotations


class MoveError(ValueError):
    """A move token that cannot be parsed."""


MAX_COLUMN_DIGITS = 9


def parse_move(token: str) -> int:
    text = token.strip().lower()
    kind = "d"
    if text[:1] in ("d", "p"):
        kind, text = text[0], text[1:]
    # past 4,300 digits int() raises a ValueError of its own (a bot's 5,000-digit move crashed
    # every run: hostile review); no board has a column of more than a few digits
    if not text.isdigit() or not text.isascii() or len(text) > MAX_COLUMN_DIGITS or int(text) < 1:
        raise MoveError(f"malformed move {token!r}: expected dN, pN or N with N a column from 1")
    column = int(text)
    return column if kind == "d" else -column


def format_move(move: int) -> str:
    return f"d{move}" if move > 0 else f"p{-move}"
