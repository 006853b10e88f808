"""Where a file a user wrote is not UTF-8 text: one wording, with its line, for every reader
(tournament, bot.toml and openings files, records, games files)."""

from __future__ import annotations


def not_utf8(error: UnicodeDecodeError) -> str:
    """`not UTF-8 text (invalid continuation byte at line 3, byte 46)` for an error of bytes
    decoded whole (a text-mode read decodes in chunks: its positions are the chunk's)."""
    data = error.object
    line = bytes(data[:error.start]).count(b"\n") + 1
    return f"not UTF-8 text ({error.reason} at line {line}, byte {error.start})"
