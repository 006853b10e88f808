"""Helpers shared by the TOML readers (tournament files, `bot.toml`): where a key is, and a
"did you mean" for a misspelt one. tomllib reports no positions, so lines are found in the text."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from arena.spelling import did_you_mean


class KeyLines:
    """Finds the line of a key in the TOML text (tomllib does not report positions)."""

    _HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\"'-]+)\s*\]\]?")
    _PART = r"(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')"
    # `a = 1`, and a dotted `time.move_ms = 0`, which is the key `move_ms` of the table `time`
    _KEY = re.compile(rf"^\s*({_PART}(?:\s*\.\s*{_PART})*)\s*=")
    _SPLIT = re.compile(rf"\s*({_PART})\s*(?:\.|$)")

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
                self._add_key(table, index, key.group(1), number)

    def _add_key(self, table: str, index: int, dotted: str, number: int) -> None:
        """Each part of `a.b.c = ` is a key on this line: `a` of `table`, `b` of `table.a`..."""
        parts = [part.strip("\"'") for part in self._SPLIT.findall(dotted)]
        for depth, part in enumerate(parts):
            owner = ".".join(filter(None, [table, *parts[:depth]]))
            self.where.setdefault((owner, index, part), number)

    def line(self, key: str | None, table: str = "", index: int = 0) -> int:
        """The key's line, else its table's (a header, or the key an inline table is written
        at: `limits = { ... }`, `bots = [{ ... }]`), else 0."""
        probes = [(table, index, key), (table, index, None)]
        if not table and key:
            probes.insert(1, (key, 0, None))  # a top-level key given as a [table]
        for probe in probes:
            if probe in self.where:
                return self.where[probe]
        if not table:
            return 0
        parent, _, name = table.rpartition(".")
        # a table's own index counts its parent's entries ([[bots]]); a top-level one has none
        return self.line(name, parent, index if parent else 0)


def syntax_error(path: object, text: str, error: Exception) -> str:
    """`FILE:LINE: not valid TOML: ...` for a tomllib error, the one form for every TOML file
    arena reads; tomllib gives no line at the end of the document (an unclosed `[` or string),
    and that is the last line."""
    message = str(error).splitlines()[0] if str(error) else type(error).__name__
    match = re.search(r"line (\d+)", message)
    if match:
        where = f"{path}:{match.group(1)}"
    elif "end of document" in message:
        where = f"{path}:{max(1, len(text.splitlines()))}"
    else:
        where = str(path)
    if match and ("Cannot overwrite a value" in message or "Cannot declare" in message):
        message = _given_twice(text, int(match.group(1))) or message
    return f"{where}: not valid TOML: {message}"


def _given_twice(text: str, line: int) -> str | None:
    """What tomllib's "Cannot overwrite a value" / "Cannot declare ('time',) twice" means, named:
    the key or table of that line given a second time."""
    lines = text.splitlines()
    source = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    table = re.match(r"\[\[?\s*([^\]]+?)\s*\]", source)
    if table:  # `[time]` twice, `time = 5` then `[time]`, `[bots]` then `[[bots]]`
        name = table.group(1)
        return (f"[{name}] clashes with an earlier line (a table, key or list of tables "
                "given twice, or a key where a table goes): keep one")
    key = re.match(r"([^=#]+?)\s*=", source)
    if key and "{" not in source:  # in an inline table, which of its keys is not known here
        # `games` twice, or `a = 1` then `a.b = 2`: the key or what it belongs to
        return (f"key {key.group(1).strip()!r} clashes with an earlier line (the key, or the "
                "key or table it belongs to, given twice): keep one")
    return None


def suggest(key: str, known: Sequence[str]) -> str:
    """`; did you mean 'x'?` for a close known key, else the list of known keys."""
    return did_you_mean(key, known) or f"; known keys: {', '.join(known)}"


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
