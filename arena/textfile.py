"""Text files a user wrote: UTF-8 (a byte-order mark is fine), and where one is not, one
wording with its line for every reader (tournament, bot.toml and openings files, records,
games files)."""

from __future__ import annotations

import codecs
from pathlib import Path

BOM = codecs.BOM_UTF8


def decode(data: bytes) -> str:
    """`data` as text without its byte-order mark; a UnicodeDecodeError's positions are those
    of `data` (`utf-8-sig` counts them after the mark: 3 bytes short)."""
    skip = len(BOM) if data.startswith(BOM) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as error:
        raise UnicodeDecodeError("utf-8", data, error.start + skip, error.end + skip,
                                 error.reason) from None


def not_utf8(error: UnicodeDecodeError) -> str:
    """`not UTF-8 text (invalid continuation byte at line 3, byte 46)` for an error of bytes
    decoded whole (a text-mode read decodes in chunks: its positions are the chunk's)."""
    data = error.object
    line = bytes(data[:error.start]).count(b"\n") + 1
    return f"not UTF-8 text ({error.reason} at line {line}, byte {error.start})"


def not_utf8_file(path: Path) -> str:
    """`not_utf8` of a file found not to be UTF-8 by a reader that decoded it in chunks."""
    try:
        decode(Path(path).read_bytes())
    except UnicodeDecodeError as error:
        return not_utf8(error)
    except OSError:
        pass
    return "not UTF-8 text"
