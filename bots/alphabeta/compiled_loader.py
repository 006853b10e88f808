"""Loading the compiled search in a bot's loader thread without costing its moves their time
(alphabeta.py and bots/perfect, which falls back on this search)."""

from __future__ import annotations

import gc
import os

COMPILED_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compiled.py")


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
