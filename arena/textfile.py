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
        return str(memoryview(data)[skip:], "utf-8")  # no copy of a large file's bytes
    except UnicodeDecodeError as error:
        raise UnicodeDecodeError("utf-8", data, error.start + skip, error.end + skip,
                                 error.reason) from None


def not_utf8(error: UnicodeDecodeError) -> str:
    """`not UTF-8 text (invalid continuation byte at line 3, byte 46)` for an error of bytes
    decoded whole (a text-mode read decodes in chunks: its positions are the chunk's)."""
    data = error.object
    line = bytes(data[:error.start]).count(b"\n") + 1
    return f"not UTF-8 text ({error.reason} at line {line}, byte {error.start})"


def not_utf8_file(path: Path, chunk: int = 1 << 20) -> str:
    """`not_utf8` of a file found not to be UTF-8 by a reader that decoded it in chunks, read
    again a chunk at a time (a large games file is not held whole for its error)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = lines = 0
    try:
        with open(path, "rb") as handle:
            while block := handle.read(chunk):
                if offset == 0 and block.startswith(BOM):
                    block, offset = block[len(BOM):], len(BOM)
                pending = decoder.getstate()[0]  # a character cut by the last block
                try:
                    decoder.decode(block)
                except UnicodeDecodeError as error:
                    line = lines + (pending + block)[:error.start].count(b"\n") + 1
                    at = offset - len(pending) + error.start
                    return f"not UTF-8 text ({error.reason} at line {line}, byte {at})"
                lines += block.count(b"\n")
                offset += len(block)
            cut = len(decoder.getstate()[0])
            decoder.decode(b"", final=True)
    except UnicodeDecodeError as error:  # the file ends inside a character
        return f"not UTF-8 text ({error.reason} at line {lines + 1}, byte {offset - cut})"
    except OSError:
        pass
    return "not UTF-8 text"
