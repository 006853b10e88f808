"""SIGTERM as an exception, so that a command stopped by it (a service manager, `timeout`, a
container's stop) unwinds like Ctrl-C: `finally` blocks run, bot and solver processes are
ended, and the command exits with 143."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

EXIT_SIGTERM = 128 + signal.SIGTERM  # 143, what a shell reports for a process it killed
EXIT_SIGINT = 128 + signal.SIGINT  # 130


class Terminated(BaseException):
    """SIGTERM arrived: unwinds like KeyboardInterrupt (a BaseException, past `except
    Exception`)."""


def _raise_terminated(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: let the clean-up finish
    raise Terminated()


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises `Terminated` (in the main thread only; elsewhere the
    handler cannot be set and nothing changes); the previous handler comes back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
