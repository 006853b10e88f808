"""How talking to a bot can fail: each error carries the forfeit reason it stands for."""

from __future__ import annotations

import re

from arena.reasons import Reason

# How a detail names a line the bot flushed without its newline (`arena check` hints on it).
UNENDED_LINE = "without ending the line"


class BotIOError(Exception):
    """Base class for a bot's failure to do I/O as expected."""

    reason: str = Reason.PROTOCOL

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail or message


class BotTimeout(BotIOError):
    reason = Reason.TIMEOUT

    def __init__(self, message: str, unfinished: bytes = b"") -> None:
        super().__init__(message)
        self.unfinished = unfinished  # what the bot sent of a line it never ended

    def unfinished_note(self) -> str:
        """`; it sent 'move 4' without ending the line` when the bot wrote part of a line (a
        missing newline: it flushed, and the arena still waits), else ''."""
        if not self.unfinished:
            return ""
        text = self.unfinished.decode("utf-8", "replace")
        return f"; it sent {text!r} {UNENDED_LINE} (a newline)"


class BotLineTooLong(BotIOError):
    reason = Reason.PROTOCOL


class BotExited(BotIOError):
    reason = Reason.CRASH

    def __init__(self, message: str, detail: str = "", exit_code: int | None = None) -> None:
        super().__init__(message, detail)
        self.exit_code = exit_code  # of a bot that ended (None: it runs, or no status)


class BotStartError(BotIOError):
    reason = Reason.CRASH


class Aborted(Exception):
    """The stop event was set while waiting for a bot."""


# Lines a runtime prints after the error that says why a program died: stack frames (Java's
# `\tat ...`, Node's `    at ...`, Go's functions and tab-indented files, Python's `  File ...`),
# Node's version footer, Rust's backtrace advice, Go's goroutine headers. A forfeit quoting them
# read `stderr: Node.js v20.20.2` (bot author review).
_EPILOGUE = re.compile(
    r"^(\s+at\s|\s+File\s\"|\t|\s*\.\.\. \d+ more$|Node\.js v\d|note: run with `RUST_BACKTRACE"
    r"|goroutine \d+ \[|exit status \d+$|\s*\^+\s*$|[\w.*/()-]+\([^ ]*\)$)")


def telling_line(stderr_text: str) -> str:
    """The line of a dead bot's stderr tail that says why it died: the last one that is not
    blank, a stack frame or a runtime's footer (the last line at all if every one is)."""
    lines = [line for line in stderr_text.splitlines() if line.strip()]
    for line in reversed(lines):
        if not _EPILOGUE.match(line):
            return line.strip()
    return lines[-1].strip() if lines else ""
