"""The wire format between the arena and a bot: building and parsing protocol lines.

See PROTOCOL.md for the full description. Every line is `WORD key=value key=value ...` (UTF-8,
ending in a newline); values never hold whitespace. Readers ignore keys they do not know, and a
bot ignores whole lines whose first word it does not know, so that new versions can add both.

This module is imported by the SDK, so it must stay light: standard library only, no regexes.
"""

from __future__ import annotations

import unicodedata

PROTOCOL = "fiar"
VERSION = 1

LINE_CAP = 64 * 1024  # longest line a bot may send, in bytes (newline excluded)
INFO_CAP = 4 * 1024  # info text kept per move, in characters (the rest is dropped, not a loss)
DETAIL_CAP = 200  # offending text kept in a forfeit detail, in characters


class ProtocolError(ValueError):
    """A line that does not follow the protocol."""


def clean(value: object) -> str:
    """A value made safe for a `key=value` field: no whitespace, never empty."""
    text = "_".join(str(value).split())
    return text or "-"


# Control characters as escapes: text a bot wrote reaches the operator's terminal (details,
# names, versions in progress lines and `arena check`), and an escape sequence there can move
# the cursor, rewrite lines or set the clipboard (OSC 52).
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_CONTROLS.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"})


# Beyond the controls, characters that hide or reorder text around them: invisible formatting
# (zero-width spaces, right-to-left overrides), private use, unassigned code points, surrogates,
# line and paragraph separators. A bot's `version=\u202e1.0` flipped the text after it (hostile
# review); league names refuse them (`arena.league.registry`), text a bot writes shows them as
# escapes.
HIDDEN_CATEGORIES = frozenset({"Cf", "Co", "Cn", "Cs", "Zl", "Zp"})


def printable(text: str) -> str:
    """`text` with every control character written as an escape (`\\x1b`, `\\n`), and every
    character that hides or reorders text as `\\u202e` (`\\U000e0001` beyond 16 bits)."""
    text = text.translate(_CONTROLS)
    if text.isascii():
        return text
    return "".join(_escaped(c) if unicodedata.category(c) in HIDDEN_CATEGORIES
                   and not _joining(text, k) else c for k, c in enumerate(text))


# Zero-width joiner and non-joiner: format characters, but emoji sequences and Persian and Indic
# text need them (diff review); between ASCII characters they only hide (`Ada\u200dLovelace`).
_JOINERS = frozenset("\u200c\u200d")


def _joining(text: str, k: int) -> bool:
    """Whether text[k] is a joiner between two characters beyond ASCII."""
    return (text[k] in _JOINERS and 0 < k < len(text) - 1
            and not text[k - 1].isascii() and not text[k + 1].isascii())


def _escaped(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


HELLO_FIELD_CAP = 64


def truncate(text: str, cap: int = DETAIL_CAP) -> str:
    text = printable(text)
    return text if len(text) <= cap else text[:cap] + f"...[{len(text) - cap} more]"


def split_line(line: str) -> tuple[str, dict[str, str], list[str]]:
    """(first word, key=value fields, other words) of a line."""
    words = line.split()
    if not words:
        return "", {}, []
    fields: dict[str, str] = {}
    rest: list[str] = []
    for word in words[1:]:
        key, eq, value = word.partition("=")
        if eq and key:
            fields[key] = value
        else:
            rest.append(word)
    return words[0], fields, rest


def fields_line(word: str, **fields: object) -> str:
    return " ".join([word, *(f"{key}={clean(value)}" for key, value in fields.items())])


# --- arena -> bot -------------------------------------------------------------------------------

def hello_line() -> str:
    return f"hello protocol={PROTOCOL} version={VERSION}"


def game_line(
    game_id: str,
    seat: int,
    variant_info: dict,
    time_control: dict,
    opponent: str = "",
    seed: int | None = None,
) -> str:
    """The `game` line. `variant_info` is `Variant.describe()`, `time_control` is
    `TimeControl.to_dict()` (missing limits are sent as 0); `seed`, the game's seed, goes last
    and only when there is one (a key bots of protocol version 1 ignore)."""
    start = variant_info["start"]
    extra = {} if seed is None else {"seed": int(seed)}
    return fields_line(
        "game",
        id=game_id or "-",
        seat=seat,
        spec=variant_info["spec"],
        columns=variant_info["columns"],
        rows=variant_info["rows"],
        connect=variant_info["connect"],
        pops=1 if variant_info["pops"] else 0,
        fixed=",".join(str(c) for c in variant_info["fixed_columns"]) or "-",
        start="/".join(column or "-" for column in start),
        cap=variant_info["max_plies"],
        move_ms=time_control.get("move_ms") or 0,
        base_ms=time_control.get("base_ms") or 0,
        increment_ms=time_control.get("increment_ms") or 0,
        startup_ms=time_control.get("startup_ms") or 0,
        grace_ms=time_control.get("grace_ms") or 0,
        opponent=opponent or "-",
        **extra,
    )


def turn_line(
    moves: list[str],
    time_ms: int,
    opponent_time_ms: int | None,
    last_ms: float | None = None,
) -> str:
    """The `turn` line: every move so far, the time this bot has for this move (its per-move limit
    or its remaining clock, whichever is smaller), the opponent's remaining clock (`-` under a
    per-move limit) and the arena's measurement of this bot's previous move (`-` if none)."""
    return (
        f"turn ply={len(moves)} moves={','.join(moves) or '-'} time_ms={int(time_ms)}"
        f" opponent_time_ms={'-' if opponent_time_ms is None else int(opponent_time_ms)}"
        f" last_ms={'-' if last_ms is None else int(round(last_ms))}"
    )


def end_line(result: str, winner: int | None, reason: str, plies: int) -> str:
    """`result` is from the receiving bot's point of view: win, loss or draw."""
    return fields_line("end", result=result, winner=winner or 0, reason=reason, plies=plies)


QUIT_LINE = "quit"


# --- bot -> arena -------------------------------------------------------------------------------

def hello_reply(name: str, version: str = "", author: str = "") -> str:
    fields: dict[str, object] = {"name": name}
    if version:
        fields["version"] = version
    if author:
        fields["author"] = author
    return fields_line("hello", **fields)


def parse_hello_reply(line: str) -> dict[str, str]:
    """The bot's answer to `hello`: returns its fields (name, and maybe version and author)."""
    word, fields, _ = split_line(line)
    if word != "hello":
        raise ProtocolError(f"expected 'hello name=...', got {truncate(line)!r}")
    if not fields.get("name") or fields["name"] == "-":
        raise ProtocolError(f"hello without a name=...: {truncate(line)!r}")
    # stored with every game and printed: short, and without control characters (a 65,000
    # character version went into every row of the games table)
    return {key: truncate(value, HELLO_FIELD_CAP) for key, value in fields.items()}


def parse_bot_line(line: str) -> tuple[str, str]:
    """Classify a bot line during a turn: ('move', token), ('info', text) or ('blank', '').

    A move is `move TOKEN`, or a bare token (`d4`, `p4`, `4`). Raises ProtocolError otherwise.
    """
    stripped = line.strip()
    if not stripped:
        return "blank", ""
    word, *more = stripped.split(None, 1)  # any whitespace separates words (e.g. a tab)
    rest = more[0] if more else ""
    if word == "info":
        return "info", rest
    if word == "move":
        token = rest.split()
        if not token:
            raise ProtocolError("'move' without a move token")
        return "move", token[0]
    if not more and _looks_like_move(stripped):
        return "move", stripped
    raise ProtocolError(f"unknown line {truncate(stripped)!r}")


def _looks_like_move(token: str) -> bool:
    text = token.lower()
    if text[:1] in ("d", "p"):
        text = text[1:]
    return text.isascii() and text.isdigit()


# --- parsing arena lines (used by the SDK and by tests) -----------------------------------------

def parse_game_line(line: str) -> dict:
    """The `game` line as a dict with ints, bools and tuples; raises ProtocolError."""
    word, f, _ = split_line(line)
    if word != "game":
        raise ProtocolError(f"not a game line: {truncate(line)!r}")
    try:
        columns = int(f["columns"])
        start_text = f.get("start", "-")
        start = tuple(
            () if part in ("-", "") else tuple(int(ch) for ch in part)
            for part in start_text.split("/")
        ) if start_text != "-" else tuple(() for _ in range(columns))
        fixed_text = f.get("fixed", "-")
        fixed = () if fixed_text in ("-", "") else tuple(int(c) for c in fixed_text.split(","))
        return {
            "id": f.get("id", "-"),
            "seat": int(f["seat"]),
            "spec": f.get("spec", ""),
            "columns": columns,
            "rows": int(f["rows"]),
            "connect": int(f["connect"]),
            "pops": f.get("pops", "0") not in ("0", "false", "no"),
            "fixed": fixed,
            "start": start,
            "cap": int(f["cap"]),
            "move_ms": int(f.get("move_ms", 0)) or None,
            "base_ms": int(f.get("base_ms", 0)) or None,
            "increment_ms": int(f.get("increment_ms", 0)),
            "startup_ms": int(f.get("startup_ms", 0)),
            "grace_ms": int(f.get("grace_ms", 0)),
            "opponent": f.get("opponent", "-"),
            "seed": int(f["seed"]) if f.get("seed", "-") not in ("-", "") else None,
        }
    except (KeyError, ValueError) as error:
        raise ProtocolError(f"bad game line ({error}): {truncate(line)!r}") from None


def parse_turn_line(line: str) -> dict:
    word, f, _ = split_line(line)
    if word != "turn":
        raise ProtocolError(f"not a turn line: {truncate(line)!r}")
    try:
        moves_text = f.get("moves", "-")
        return {
            "moves": [] if moves_text in ("-", "") else moves_text.split(","),
            "time_ms": int(f["time_ms"]),
            "opponent_time_ms": None if f.get("opponent_time_ms", "-") == "-"
            else int(f["opponent_time_ms"]),
            "last_ms": None if f.get("last_ms", "-") == "-" else int(f["last_ms"]),
        }
    except (KeyError, ValueError) as error:
        raise ProtocolError(f"bad turn line ({error}): {truncate(line)!r}") from None
