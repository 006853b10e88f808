"""Render standings and pairwise tables as plain text, Markdown, CSV or JSON."""

from __future__ import annotations

import html
import json
import math
import textwrap
from collections.abc import Mapping
from typing import Any

import pandas as pd

from arena.game import first_player_score
from arena.ratings import registry
from arena.ratings.system import Display
from arena.ratings.system import format_number as _num

FORMATS = ("table", "csv", "json", "markdown")


def display_cell(row: Mapping[str, Any], display: Display, anchored: bool = False) -> str:
    """One rating column of a standings row as its system displays it (an interval `[lo, hi]`
    for two keys); see `Display`."""
    signed = display.scale == "signed" or (display.scale == "elo" and not anchored)
    if len(display.keys) == 2:
        lo, hi = (row.get(k) for k in display.keys)
        return f"[{_num(lo, display.digits, signed)}, {_num(hi, display.digits, signed)}]"
    return _num(row.get(display.keys[0]), display.digits, signed)


# Who submitted a bot and in what language: shown after its name when the results know them.
WHO_COLUMNS = ("author", "language")
WHO_HEADERS = {"author": "author", "language": "lang"}
# Against perfect play (`arena analyze`, percent): shown last when the results were analysed.
ACCURACY_HEADERS = {"accuracy": "accuracy", "blunder_rate": "blunders"}


def _percent(value: object) -> str:
    text = _num(value, 1)
    return text if text == "-" else text + "%"


def standings_display(table: pd.DataFrame) -> tuple[list[str], list[list[str]], list[str]]:
    """Headers, rows of strings and alignments ('l'/'r') for a standings table.

    The rating columns are those of the registry's systems present in the table. Elo-scale
    ratings are signed while they are relative to the pool mean and plain numbers once anchored
    (``BOT=1500`` makes them absolute).
    """
    shown = [d for system in registry.SYSTEMS for d in system.display
             if all(k in table.columns for k in d.keys)]
    anchored = bool(table.attrs.get("anchored", False))
    who = [c for c in WHO_COLUMNS if c in table.columns]
    judged = [c for c in ACCURACY_HEADERS if c in table.columns]
    headers = ["#", "bot", *(WHO_HEADERS[c] for c in who), "games", "W", "D", "L", "score",
               *(d.header for d in shown), "forfeits", *(ACCURACY_HEADERS[c] for c in judged)]
    rows = []
    for r in table.to_dict("records"):
        rows.append([
            str(r["rank"]), str(r["bot"]), *(str(r[c] or "-") for c in who), str(r["games"]),
            str(r["wins"]), str(r["draws"]),
            str(r["losses"]), _num(100 * r["score"], 1) + "%",
            *(display_cell(r, d, anchored) for d in shown), str(r["forfeits"]),
            *(_percent(r[c]) for c in judged),
        ])
    align = ["r", "l"] + ["l"] * len(who) + ["r"] * (len(headers) - 2 - len(who))
    return headers, rows, align


def pairwise_display(table: pd.DataFrame) -> tuple[list[str], list[list[str]], list[str]]:
    headers = ["bot A", "bot B", "games", "W", "D", "L", "score A", "Elo diff", "+-95%", "LOS",
               "fit LOS", "pairs", "penta (0..1)", "nElo", "+-95%"]
    rows = []
    for r in table.to_dict("records"):
        rows.append([
            str(r["bot_a"]), str(r["bot_b"]), str(r["games"]), str(r["wins"]), str(r["draws"]),
            str(r["losses"]), _num(100 * r["score"], 1) + "%", _num(r["elo_diff"], 1, True),
            _num(r["elo_margin"], 1), percent(r["los"]), percent(r.get("mle_los")), str(r["pairs"]),
            r["penta"] or "-", _num(r["nelo"], 1, True), _num(r["nelo_margin"], 1),
        ])
    return headers, rows, ["l", "l"] + ["r"] * (len(headers) - 2)


def text_table(headers: list[str], rows: list[list[str]], align: list[str],
               width: int | None = None, keep: int = 2) -> str:
    """A plain-text table; with ``width``, no line is longer than that (when at all possible).

    A table wider than ``width`` is cut into blocks of whole columns, one below the other, each
    repeating the first ``keep`` columns (rank and bot, say), as pandas prints a wide frame: a
    terminal never wraps a cell in the middle of a word.
    """
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    columns = list(range(len(headers)))
    if width is None or _line_width(widths, columns) <= width or len(columns) <= keep:
        return _text_block(headers, rows, align, widths, columns)
    key = columns[:keep]
    blocks: list[list[int]] = []
    for c in columns[keep:]:
        if blocks and _line_width(widths, key + blocks[-1] + [c]) <= width:
            blocks[-1].append(c)
        else:
            blocks.append([c])
    return "\n\n".join(_text_block(headers, rows, align, widths, key + block)
                        for block in blocks)


def _line_width(widths: list[int], columns: list[int]) -> int:
    return sum(widths[c] for c in columns) + 2 * (len(columns) - 1)


def _text_block(headers: list[str], rows: list[list[str]], align: list[str], widths: list[int],
                columns: list[int]) -> str:
    def fmt(cells: list[str]) -> str:
        out = [cells[c].ljust(widths[c]) if align[c] == "l" else cells[c].rjust(widths[c])
               for c in columns]
        return "  ".join(out).rstrip()

    lines = [fmt(headers), "  ".join("-" * widths[c] for c in columns)]
    lines += [fmt(r) for r in rows]
    return "\n".join(lines)


def footnotes(notes: list[str], bullet: str, width: int | None = None) -> list[str]:
    """Notes as bulleted lines, wrapped at word boundaries to ``width`` when given."""
    if width is None:
        return [f"{bullet} {n}" for n in notes]
    return [textwrap.fill(n, width, initial_indent=f"{bullet} ", subsequent_indent="  ",
                          break_long_words=False, break_on_hyphens=False) for n in notes]


# Characters that make markup inside a table cell or after a list bullet (neither starts a
# line, so `#`, `-`, `+` and `1.` cannot), and `:` and `@`, whose URLs and addresses GitHub
# links on its own: backslash-escaped, as CommonMark allows for any ASCII punctuation.
_MARKDOWN_MARKUP = frozenset("\\`*_[]~|:@")


def markdown_text(text: str) -> str:
    """`text` as Markdown that shows it as it is: a bot's name is text, not markup (raw HTML such
    as <b>, a name "[Claim prize](javascript:...)" that was a link in a pasted leaderboard:
    hostile review; notes quote names too: diff review)."""
    return "".join("\\" + ch if ch in _MARKDOWN_MARKUP else ch
                   for ch in html.escape(text, quote=False))


def markdown_table(headers: list[str], rows: list[list[str]], align: list[str]) -> str:
    esc = markdown_text
    lines = ["| " + " | ".join(esc(h) for h in headers) + " |",
             "|" + "|".join("---:" if a == "r" else ":---" for a in align) + "|"]
    lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


# Below this a fitted number is floating-point noise (an Elo of -5.99e-15 for two level bots):
# written as 0, and never as -0
NOISE = 1e-9


def _clean(value: object) -> object:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, float) and abs(value) < NOISE:
        return 0.0
    if hasattr(value, "item"):  # numpy scalar
        return _clean(value.item())  # type: ignore[union-attr]
    return value


def records(table: pd.DataFrame) -> list[dict]:
    return [{k: _clean(v) for k, v in row.items()} for row in table.to_dict("records")]


def to_json(table: pd.DataFrame) -> str:
    return json.dumps(records(table), indent=2)


def to_csv(table: pd.DataFrame) -> str:
    """A table as CSV: floats without noise, text safe to open in a spreadsheet, and an
    infinite value (the unbounded margin of a clean sweep) an empty cell, as JSON's null (`inf`
    was text to spreadsheets and SQL imports, a float to pandas)."""
    from arena.spreadsheet import write_frame

    table = write_frame(table)
    floats = table.select_dtypes("float").columns
    if len(floats):
        table = table.copy()
        for column in floats:
            values = table[column]
            table[column] = values.mask(values.abs() < NOISE, 0.0).mask(values.abs() == math.inf)
    return table.to_csv(index=False, float_format="%.6g", lineterminator="\n")


def notes_of(table: pd.DataFrame) -> list[str]:
    return list(table.attrs.get("notes", []))


def render_standings(table: pd.DataFrame, fmt: str, title: str | None = None,
                     width: int | None = None) -> str:
    """One standings table in ``fmt`` (table, markdown, csv, json); ``width`` (characters) fits
    the plain table and its footnotes to a terminal."""
    if fmt == "json":
        return to_json(table)
    if fmt == "csv":
        return to_csv(table)
    headers, rows, align = standings_display(table)
    notes = notes_of(table)
    if fmt == "markdown":
        parts = []
        if title:
            parts.append(f"## {title}\n")
        parts.append(markdown_table(headers, rows, align))
        if notes:
            parts.append("")
            parts += footnotes([markdown_text(n) for n in notes], "-")
        return "\n".join(parts) + "\n"
    parts = []
    if title:
        parts += [title, "=" * len(title)]
    keep = 2 + sum(c in table.columns for c in WHO_COLUMNS)  # rank, bot (and who) in every block
    parts.append(text_table(headers, rows, align, width, keep=keep))
    if notes:
        parts.append("")
        parts += footnotes(notes, "*", width)
    return "\n".join(parts) + "\n"


PAIRWISE_NOTE = ("Score, Elo diff, +-95% margin and LOS from A's W/D/L (trinomial); fit LOS = "
                 "likelihood that A is the stronger by the joint Elo fit of all games (the "
                 "difference's standard error from its covariance: mle_se); penta = pairs "
                 "of games with swapped seats in which A scored 0, 1/4, 1/2, 3/4, 1; nElo = "
                 "normalized Elo (pentanomial when there are pairs).")


def render_pairwise(table: pd.DataFrame, fmt: str, title: str | None = None,
                    width: int | None = None) -> str:
    if fmt == "json":
        return to_json(table)
    if fmt == "csv":
        return to_csv(table)
    headers, rows, align = pairwise_display(table)
    if fmt == "markdown":
        head = f"## {title}\n\n" if title else ""
        return head + markdown_table(headers, rows, align) + f"\n\n- {markdown_text(PAIRWISE_NOTE)}\n"
    head = f"{title}\n{'=' * len(title)}\n" if title else ""
    note = "\n".join(footnotes([PAIRWISE_NOTE], "*", width))
    return head + text_table(headers, rows, align, width) + f"\n\n{note}\n"


# -- cell formatters shared with the published site (arena/publish/filters.py) ------------------

def number(x: object, digits: int = 1, signed: bool = False) -> str:
    """A number as the tables show it: fixed digits, `-` when missing, never `-0`."""
    return _num(x, digits, signed)


def count(x: object) -> str:
    """A whole count (games, wins, forfeits); `-` when missing."""
    text = _num(x, 0)
    return text if text in ("-", "inf", "+inf", "-inf") else str(int(float(text)))


def points(x: object) -> str:
    """Points (a win 1, a draw ½): `8`, `8.5`; `-` when missing."""
    text = _num(x, 1)
    return text[:-2] if text.endswith(".0") else text


def percent(x: object, digits: int = 1) -> str:
    """A fraction (0..1) as a percentage, e.g. `57.5%`; `-` when missing. A fraction short of
    0 or 1 never reads as 0% or 100% (`>99.9%`, `<1%`): a LOS of 0.9992 is not a certainty."""
    if _num(x, 6) == "-":
        return "-"
    value = float(x)  # type: ignore[arg-type]  # unrounded: 0.99999999999976 is short of 1
    shown = _num(100 * value, digits)
    if 0 < value < 1 and float(shown) in (0.0, 100.0):
        step = 10.0 ** -digits
        return (f">{_num(100 - step, digits)}%" if value > 0.5 else f"<{_num(step, digits)}%")
    return shown + "%"


def move_time(ms: object) -> str:
    """A move time in ms: below a millisecond as `<1` (never `0`), then one decimal below 10."""
    text = _num(ms, 3)
    if text == "-":
        return text
    value = float(text)
    if value < 1:
        return "<1"
    return _num(value, 1 if value < 10 else 0)


def result_text(result: object) -> str:
    """The score of the first bot as a result: `1-0`, `½-½`, `0-1`, or `void` (no score)."""
    text = _num(result, 2)
    return {"1.00": "1-0", "0.50": "½-½", "0.00": "0-1"}.get(text, "void")


def result_mismatch(stored: object, stored_reason: object, winner: int | None,
                    reason: str) -> str | None:
    """How a game's stored result (a score, `reason` as stored) differs from how its moves end
    (`winner` None for a draw, the rule's `reason`), or None where they agree or nothing was
    stored (a void game): `arena replay` and `arena publish` say it of a hand-edited file."""
    said = result_text(stored)
    if said == "void":
        return None
    stored_reason = str(stored_reason or "")
    if said == result_text(first_player_score(winner)) and stored_reason in ("", reason):
        return None
    ends = f"player {winner} wins" if winner else "a draw"
    return (f"its stored result {said}{f' ({stored_reason})' if stored_reason else ''} is not how "
            f"its moves end ({ends}, {reason})")


def game_label(game_id: object, first: object, second: object, result: object,
               reason: object = "") -> str:
    """`g1: a vs b, 1-0 (line)`: a stored game named in one line (`arena replay`'s label, the
    comment above each game of `arena export --format records`)."""
    return (f"{game_id}: {first} vs {second}, {result_text(result)}"
            f"{f' ({reason})' if reason else ''}")


def record_line(variant: object, moves: object) -> str:
    """A stored game's record, `VARIANT: m1 m2 ...` (its moves alone without a variant)."""
    variant, moves = str(variant or ""), str(moves or "")
    return f"{variant}: {moves}".rstrip() if variant else moves


def timestamp(iso: object) -> str:
    """A stored ISO-8601 UTC time (with or without milliseconds) as `2026-11-30 22:15:03 UTC`."""
    text = "" if iso is None else str(iso).strip()
    if len(text) < 19 or text[10] != "T":
        return text
    return f"{text[:10]} {text[11:19]} UTC"
