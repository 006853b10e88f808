"""The line framing without processes: bytes in, lines out, caps, CRLF, tabs, arrival times."""

from __future__ import annotations

import pytest

from arena.boterrors import BotLineTooLong
from arena.linebuffer import Arrival, LineBuffer


def test_lines_split_across_chunks_and_endings():
    buf = LineBuffer(cap=100)
    buf.feed(b"hello na")
    assert buf.take_line() is None and not buf.has_line()
    buf.feed(b"me=x\r\ninfo a\tb\n\nmove d4")
    assert buf.take_line() == "hello name=x"  # \r\n stripped
    assert buf.take_line() == "info a\tb"  # tabs kept: the parser splits words on them
    assert buf.take_line() == ""
    assert buf.take_line() is None and len(buf) == len(b"move d4")


def test_invalid_utf8_is_replaced_not_fatal():
    buf = LineBuffer(cap=100)
    buf.feed(b"info \xff\xfe\n")
    assert buf.take_line() == "info \ufffd\ufffd"


def test_line_exactly_at_the_cap_with_crlf_and_one_over():
    cap = 8
    buf = LineBuffer(cap)
    buf.feed(b"x" * cap + b"\r\n")
    assert buf.take_line() == "x" * cap
    buf.feed(b"y" * cap + b"\r")  # the \n may still come: not over the cap yet
    assert not buf.over_cap()
    buf.check_cap()
    buf.feed(b"\n" + b"z" * (cap + 1) + b"\r\n")
    assert buf.take_line() == "y" * cap
    with pytest.raises(BotLineTooLong, match="over the cap of 8 bytes") as info:
        buf.take_line()
    assert info.value.detail.startswith("line of 9 bytes: b'zzz")


def test_unfinished_line_over_the_cap():
    buf = LineBuffer(cap=8)
    buf.feed(b"x" * 9)
    assert buf.over_cap()
    with pytest.raises(BotLineTooLong, match="without a newline") as info:
        buf.check_cap()
    assert info.value.detail == "9+ bytes without a newline: b'xxxxxxxxx'..."
    assert buf.wants_more()  # cap + 1 bytes: a \r\n could still have followed a \r
    buf.feed(b"x")
    assert not buf.wants_more()  # reading more cannot make a valid line: stop reading ahead


def test_pending_lines_leave_an_overlong_line_for_take_line():
    buf = LineBuffer(cap=4)
    buf.feed(b"info\r\nab\ntoolong\nok\n")
    assert buf.pending_lines() == ["info", "ab"]
    with pytest.raises(BotLineTooLong):
        buf.take_line()


def test_each_line_carries_the_arrival_of_the_chunk_that_completed_it():
    buf = LineBuffer(cap=100)
    buf.feed(b"info 1\ninfo", Arrival(1.0, 1.5))
    buf.feed(b" 2\nmove d4\n", Arrival(2.0, 2.5))
    assert buf.take_line() == "info 1" and buf.last_arrival == Arrival(1.0, 1.5)
    assert buf.take_line() == "info 2" and buf.last_arrival == Arrival(2.0, 2.5)
    assert buf.take_line() == "move d4" and buf.last_arrival == Arrival(2.0, 2.5)
