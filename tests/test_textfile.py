"""Where a text file is not UTF-8: the same line and byte whether read whole or in chunks."""

from __future__ import annotations

import codecs

import pytest

from arena.textfile import decode, not_utf8, not_utf8_file


@pytest.mark.parametrize("data", [
    b"first,second,result\na,b,1\nc\xe9,d,0\n",
    codecs.BOM_UTF8 + b"a\nb\n\xff",  # the mark counts: `utf-8-sig` put it 3 bytes short
    ("x" * 10 + "\n").encode() * 300 + "\u00e9".encode() + b"\n\xe9z",
    "a\u00e9".encode() * 5 + b"\n\xff",  # a character cut by a chunk's end, before the error
    b"ab\xe2\x82",  # the file ends inside a character
])
@pytest.mark.parametrize("chunk", [7, 1 << 20])
def test_a_file_read_in_chunks_names_the_line_and_byte_of_a_whole_read(tmp_path, data, chunk):
    path = tmp_path / "t.txt"
    path.write_bytes(data)
    with pytest.raises(UnicodeDecodeError) as whole:
        decode(data)
    assert not_utf8_file(path, chunk=chunk) == not_utf8(whole.value)


def test_decode_drops_the_byte_order_mark():
    assert decode(codecs.BOM_UTF8 + "caf\u00e9".encode()) == "caf\u00e9"
    assert not_utf8(pytest.raises(UnicodeDecodeError, decode, b"ok\n\n\xff").value) == (
        "not UTF-8 text (invalid start byte at line 3, byte 4)")
