"""CSV cells a spreadsheet would run as formulas are escaped, and read back exactly."""

from __future__ import annotations

import pandas as pd
import pytest

from arena.spreadsheet import read_cell, read_frame, write_cell, write_frame


@pytest.mark.parametrize("text", ["=1+1", "+1", "-minus", "@SUM(A1)", "\tx", "\rx", "'", "''x",
                                  "plain", "", "d4 d5", "[1, 2]"])
def test_every_text_reads_back_exactly(text):
    written = write_cell(text)
    assert not str(written).startswith(("=", "+", "-", "@", "\t", "\r"))
    assert read_cell(written) == text


def test_numbers_stay_numbers_and_frames_round_trip():
    frame = pd.DataFrame({
        "bot": ["=evil", "ok", "-minus"], "elo": [-35.5, 0.0, 12.0],
        "author": pd.Series(["@x", "ok", "@x"], dtype="category"), "mixed": ["+2", 3, None]})
    written = write_frame(frame)
    assert written.bot.tolist() == ["'=evil", "ok", "'-minus"] and written.elo.tolist()[0] == -35.5
    assert list(written.author) == ["'@x", "ok", "'@x"] and frame.bot[0] == "=evil"  # a copy
    read_frame(written)
    assert written.astype(str).equals(frame.astype(str))


def test_a_file_written_elsewhere_keeps_its_apostrophes():
    """`arena standings` reads any CSV: two bots named quote and 'quote stay two bots."""
    assert read_cell("'quote") == "'quote" and read_cell("quote") == "quote"
    frame = pd.DataFrame({"first": ["quote", "'quote", "'=x"], "n": [1, 2, 3]})
    read_frame(frame)
    assert frame["first"].tolist() == ["quote", "'quote", "=x"]
