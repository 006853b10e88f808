"""Loading the compiled search in a bot's loader thread without costing its moves their time
(alphabeta.py and bots/perfect, which falls back on this search)."""

from __future__ import annotations

import gc
import os
import time

COMPILED_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compiled.py")
# of the start-up allowance, at most spent by a process's first move waiting for the loader
FIRST_MOVE_WAIT_SHARE = 0.4


def first_move_wait_left(turn, since: float) -> float:
    """How much longer the first move of a process, waiting since `since`, may wait for the
    loader thread: FIRST_MOVE_WAIT_SHARE of the start-up allowance in all (PROTOCOL.md: the
    first move has the allowance on top of its time)."""
    return max(0.0, FIRST_MOVE_WAIT_SHARE * turn.setup.startup_ms / 1000
               - (time.monotonic() - since))


def first_move_deadline(turn, since: float) -> float:
    """The first move's deadline moved by its wait, so that it keeps its own time after it,
    but never by more than the start-up allowance."""
    return turn.deadline + min(time.monotonic() - since, turn.setup.startup_ms / 1000)


def load_compiled_search() -> None:
    """Compile `compiled.py` in a child process where its machine code is not known fresh (a
    copy of this bot, or every run of one in the sandbox: in this process the compile would cost
    the search the GIL for 4-40 s, and 100 ms moves took up to 200 ms), load it, then put
    numba's 100,000 objects out of the collector's sight (the collection between games took
    70-90 ms, on the clock of a first turn sent right behind the game line)."""
    from arena import numba_cache  # here, not at import: off the bot's start

    numba_cache.compile_aside(COMPILED_PY, "import compiled; compiled.warm_up()")
    import compiled

    compiled.warm_up()
    gc.freeze()
