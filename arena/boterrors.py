"""How talking to a bot can fail: each error carries the forfeit reason it stands for."""

from __future__ import annotations

from arena.reasons import Reason


class BotIOError(Exception):
    """Base class for a bot's failure to do I/O as expected."""

    reason: str = Reason.PROTOCOL

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail or message


class BotTimeout(BotIOError):
    reason = Reason.TIMEOUT


class BotLineTooLong(BotIOError):
    reason = Reason.PROTOCOL


class BotExited(BotIOError):
    reason = Reason.CRASH


class BotStartError(BotIOError):
    reason = Reason.CRASH


class Aborted(Exception):
    """The stop event was set while waiting for a bot."""
