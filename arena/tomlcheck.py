"""Helpers shared by the TOML readers (tournament files, `bot.toml`): where a key is, and a
"did you mean" for a misspelt one. tomllib reports no positions, so lines are found in the text."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from typing import Any


class KeyLines:
    """Finds the line of a key in the TOML text (tomllib does not report positions)."""

    _HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\"'-]+)\s*\]\]?")
    _KEY = re.compile(r"^\s*[\"']?([A-Za-z0-9_-]+)[\"']?\s*=")

    def __init__(self, text: str) -> None:
        self.where: dict[tuple[str, int, str | None], int] = {}
        table, index = "", 0
        counts: dict[str, int] = {}
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.split("#", 1)[0] if not raw.strip().startswith(("'", '"')) else raw
            header = self._HEADER.match(line)
            if header:
                table = header.group(2).strip("\"'")
                if header.group(1) == "[[":
                    index = counts.get(table, -1) + 1
                    counts[table] = index
                else:
                    # `[bots.time]` after the 3rd `[[bots]]` belongs to that bot: index 2
                    index = counts.get(table.rsplit(".", 1)[0], 0) if "." in table else 0
                self.where.setdefault((table, index, None), number)
                continue
            key = self._KEY.match(line)
            if key:
                self.where.setdefault((table, index, key.group(1)), number)

    def line(self, key: str | None, table: str = "", index: int = 0) -> int:
        probes = [(table, index, key), (table, index, None)]
        if not table and key:
            probes.insert(1, (key, 0, None))  # a top-level key given as a [table]
        for probe in probes:
            if probe in self.where:
                return self.where[probe]
        return 0


def suggest(key: str, known: Sequence[str]) -> str:
    """`; did you mean 'x'?` for a close known key, else the list of known keys."""
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    if close:
        return f"; did you mean {close[0]!r}?"
    return f"; known keys: {', '.join(known)}"


def close_match(word: str, choices: Sequence[str]) -> str:
    """`; did you mean 'x'?` for a close choice, else ''."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def as_toml(value: Any) -> str:
    """A value as the file wrote it, for errors: `true`, not Python's `True`; a string said to
    be one (`games = "2"` is the string "2", not the number)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the string {json.dumps(value)}"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return f"a list ({json.dumps(value, default=str)[:60]})"
    return repr(value)
