"""Text cells of the CSV files a spreadsheet may open: `arena export`, the standings and pairs
files, the published site's data, `arena analyze --format csv`.

A cell starting with = + - @ (or a tab or a carriage return) is a formula to a spreadsheet, and
bot names, versions and authors come from bot authors: `=HYPERLINK(...)` would run on the
machine of whoever opens the file (OWASP: CSV injection). Such a text cell is written with a
leading apostrophe, which spreadsheets do not show, and so is a text cell that already starts
with one, so that `read_cell` gives back exactly the text written (the arena's own reader does:
an exported games CSV goes back into `arena standings`); it takes an apostrophe off only before
such a start, so a file written elsewhere keeps a name like "'quote". Numbers stay numbers: a
negative Elo is not text. JSON files are not touched: no spreadsheet runs them.
"""

from __future__ import annotations

from typing import Any

ESCAPE = "'"
ESCAPED_STARTS = ("=", "+", "-", "@", "\t", "\r", ESCAPE)


def write_cell(value: Any) -> Any:
    """`value` as a CSV cell: text that a spreadsheet would run gets the escape."""
    if isinstance(value, str) and value.startswith(ESCAPED_STARTS):
        return ESCAPE + value
    return value


# what `write_cell` makes: the escape, then a start it escapes (a file the arena did not write
# keeps its other apostrophes: "'quote" stays "'quote")
_WRITTEN_STARTS = tuple(ESCAPE + start for start in ESCAPED_STARTS)


def read_cell(value: Any) -> Any:
    """The text `write_cell` was given (any other value unchanged)."""
    if isinstance(value, str) and value.startswith(_WRITTEN_STARTS):
        return value[1:]
    return value


def _text_columns(frame) -> list:
    from pandas.api import types  # here: write_cell and read_cell need no pandas

    return [c for c in frame.columns
            if types.is_object_dtype(frame[c]) or types.is_string_dtype(frame[c])
            or isinstance(frame[c].dtype, types.CategoricalDtype)]


def write_frame(frame):
    """A copy of a DataFrame with its text cells escaped (the frame itself is left alone)."""
    columns = _text_columns(frame)
    if not columns:
        return frame
    frame = frame.copy()
    for column in columns:
        frame[column] = _mapped(frame[column], write_cell)
    return frame


def read_frame(frame) -> None:
    """Undo `write_frame` in place: a frame read from an escaped CSV file. Vectorised: a
    million-row games file is read this way (`arena standings`)."""
    for column in _text_columns(frame):
        series = frame[column]
        if _categorical(series):
            frame[column] = _mapped(series, read_cell)
            continue
        escaped = series.str.startswith(_WRITTEN_STARTS, na=False)
        if escaped.any():
            series = series.copy()
            series[escaped] = series[escaped].str[1:]
            frame[column] = series


def _categorical(series) -> bool:
    from pandas.api import types

    return isinstance(series.dtype, types.CategoricalDtype)


def _mapped(series, function):
    if _categorical(series):
        old = list(series.cat.categories)
        new = [function(v) for v in old]
        if new == old:
            return series
        if len(set(new)) == len(new):
            return series.cat.rename_categories(new)
        return series.astype(object).map(function).astype("category")
    return series.map(function)
