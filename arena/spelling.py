"""The "did you mean" of every one-line error: the closest known word to a misspelt one.

One rule for configs, options and variant specs (difflib's ratio, 0.6 unless a caller has
a reason for another); imported lazily where start-up time counts (the game package)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.6


def closest(word: str, known: Iterable[str], cutoff: float = CUTOFF) -> str | None:
    """The known word closest to `word`, if any is close enough."""
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=cutoff)
    return close[0] if close else None


def did_you_mean(word: str, known: Iterable[str], cutoff: float = CUTOFF) -> str:
    """`; did you mean 'x'?` for a close known word, else ''."""
    near = closest(word, known, cutoff)
    return f"; did you mean {near!r}?" if near else ""
