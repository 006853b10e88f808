"""Load a games table from a results directory, a CSV file or a JSONL file.

Files from elsewhere need only ``first``, ``second`` and ``result`` (``white``/``black``/
``result_white`` are accepted as aliases); ``result`` is the first player's score: ``1``, ``0.5``,
``0`` or ``1-0``, ``1/2-1/2``, ``0-1`` (also ``½``, ``=``, ``draw``, ``1.0``). An empty result or
``*`` marks a void game (kept with result NaN, excluded from ratings). Missing columns of the games
table (docs/DESIGN.md) are filled in: ``seq`` = file order, ``variant`` empty, and so on.

Bad input raises :class:`GamesFileError` (a ValueError) with a one-line message naming the file,
the line and the column.
"""

from __future__ import annotations

import csv
import json
import math
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from arena.schema import GAME_COLUMNS, JSON_COLUMNS, RATING_ORDER_COLUMNS
from arena.spreadsheet import read_frame
from arena.textfile import decode, not_utf8, not_utf8_file

REQUIRED = ("first", "second", "result")
ALIASES = {"white": "first", "black": "second", "result_white": "result", "score": "result"}
# Filled in when a games file lacks them: the text and the other numeric columns of the schema.
STRING_COLUMNS = tuple(c.name for c in GAME_COLUMNS
                       if c.in_frame and c.dtype == "string" and c.name not in REQUIRED)
OPTIONAL_NUMBERS = tuple(c.name for c in GAME_COLUMNS if c.in_frame and c.dtype != "string"
                         and c.name not in (*REQUIRED, "seq", "winner"))
# Numeric columns the schema keeps as float64 (NaN for none), whatever a file's numbers read as.
FLOAT_COLUMNS = tuple(c.name for c in GAME_COLUMNS if c.dtype == "float64")

_RESULTS = {
    "1": 1.0, "1.0": 1.0, "1-0": 1.0, "1:0": 1.0, "w": 1.0, "win": 1.0,
    "0": 0.0, "0.0": 0.0, "0-1": 0.0, "0:1": 0.0, "l": 0.0, "loss": 0.0,
    "0.5": 0.5, ".5": 0.5, "1/2": 0.5, "½": 0.5, "1/2-1/2": 0.5, "½-½": 0.5, "0.5-0.5": 0.5,
    "=": 0.5, "d": 0.5, "draw": 0.5,
}
_VOID = {"", "*", "nan", "none", "null", "void"}


class GamesFileError(ValueError):
    """A games file or results directory that cannot be read; the message is one line."""


def parse_result(value: object) -> float | None:
    """Score of the first player as 1.0 / 0.5 / 0.0, NaN for a void game, None if unreadable."""
    if value is None:
        return math.nan
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        f = float(value)
        if math.isnan(f):
            return math.nan
        return f if f in (0.0, 0.5, 1.0) else None
    text = str(value).strip().lower()
    if text in _VOID:
        return math.nan
    if text in _RESULTS:
        return _RESULTS[text]
    try:  # a number written otherwise: `0.50`, `1.00`, `+1`, `5e-1`
        number = float(text)
    except ValueError:
        return None
    return number + 0.0 if number in (0.0, 0.5, 1.0) else None  # + 0.0: no -0.0


# Columns read as categories by the fast CSV path: few distinct values, a million rows.
_CATEGORICAL = ("first", "second", "variant", "reason", "result", "white", "black",
                "result_white", "score")

LineOf = Callable[[int], str]  # data row index -> where it is in the file ("line 3", "item 3")


class UnknownBotError(ValueError):
    """`--exclude` named a bot with no games (one-line message)."""


def without_bots(games: pd.DataFrame, names: Iterable[str]) -> pd.DataFrame:
    """The games table without the games of `names` (a bot disqualified, or removed from the
    tournament file while its games stay stored); a league bot's name without its `@N` stands
    for all of its versions (one had to list every `name@N`). UnknownBotError for a name with
    no games."""
    names = list(dict.fromkeys(names))
    if not names:
        return games
    present = sorted(set(games["first"]) | set(games["second"])) if len(games) else []
    left_out: list[str] = []
    for name in names:
        # a league's `name@N` only where no bot has the name itself (a tournament's `engine`
        # and `engine@2` are two bots: diff review)
        versions = [name] if name in present else [bot for bot in present if (
            bot.rpartition("@")[0] == name and bot.rpartition("@")[2].isdigit())]
        if not versions:
            from arena.spelling import did_you_mean

            raise UnknownBotError(f"no games of a bot named {name!r}{did_you_mean(name, present)}")
        left_out += versions
    keep = ~(games["first"].isin(left_out) | games["second"].isin(left_out))
    return games[keep].reset_index(drop=True)


def no_such_path(path: str | Path) -> str:
    """What standings, plot, publish and analyze say of a results path that is not there."""
    return f"{path}: no such file or directory"


def load_games(path: str | Path) -> pd.DataFrame:
    """The games table of a results directory, a ``.csv`` or a ``.jsonl``/``.ndjson`` file."""
    path = Path(path)
    if path.is_dir():
        from arena.tournament.store import StoreError
        from arena.tournament.store import load_games as store_load

        try:
            frame = store_load(path, extra=RATING_ORDER_COLUMNS)
        except GamesFileError:
            raise
        except (FileNotFoundError, StoreError) as exc:  # already one line naming the file
            raise GamesFileError(str(exc)) from exc
        except Exception as exc:
            raise GamesFileError(f"{path}: cannot load the results: {exc}") from exc
        return _complete(frame, str(path))
    if not path.exists():
        raise GamesFileError(no_such_path(path))
    if not path.is_file():
        raise GamesFileError(f"{path}: not a regular file")
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        raw, line_of = _read_jsonl(path)
    elif suffix in (".csv", ".tsv", ".txt"):
        raw, line_of = _read_csv(path, sep="\t" if suffix == ".tsv" else ",")
    elif suffix == ".db":  # games.db: the store is read through its folder (the analysis too)
        raise GamesFileError(f"{path}: a results database: give its folder, {path.parent}")
    elif suffix == ".toml":
        raise GamesFileError(f"{path}: {_folder_of(path)}")
    else:
        raise GamesFileError(f"{path}: unknown file type {suffix!r} (use .csv or .jsonl, or a "
                             "results directory)")
    return _normalise(raw, path, line_of)


def _folder_of(file: Path) -> str:
    """What to give instead of a tournament or league file: its results folder."""
    from arena.tournament.config import ConfigError, output_of

    try:
        if "[[bots]]" not in file.read_text(encoding="utf-8", errors="replace"):
            return "a league file: give the league's folder (the one `league init` made)"
        return f"a tournament file: give its results folder, {output_of(file)}"
    except (ConfigError, OSError):
        return "a tournament file: give its results folder (its `output`, else results/NAME)"


def _csv_rows(path: Path, sep: str) -> Iterator[tuple[int, list[str]]]:
    """(first line, fields) of each non-blank CSV record (BOM, CRLF, quoted newlines are fine);
    GamesFileError naming the line for unreadable text."""
    start = 0
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle, delimiter=sep, skipinitialspace=True, strict=True)
            while True:
                start = reader.line_num + 1
                try:
                    row = next(reader)
                except StopIteration:
                    return
                if any(field.strip() for field in row):
                    yield start, row
    except UnicodeDecodeError as exc:
        raise GamesFileError(f"{path}: {not_utf8_file(path)}") from exc
    except csv.Error as exc:
        hint = f" ({SEMICOLONS})" if sep == "," and _semicolon_separated(path) else ""
        raise GamesFileError(f"{path} line {start}: not a readable CSV file: {exc}{hint}") \
            from exc
    except OSError as exc:
        raise GamesFileError(f"{path}: cannot read: {exc.strerror or exc}") from exc


# A spreadsheet set to a language whose decimal mark is a comma exports with semicolons.
SEMICOLONS = ("the columns are separated by semicolons, not commas: save it as CSV with commas "
              "(or tabs, named .tsv)")


def _semicolon_separated(path: Path) -> bool:
    """Whether the first line has semicolons and no comma (`"first";"second";"result"`)."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(65536)
    except OSError:
        return False
    return b";" in first and b"," not in first


def _read_csv(path: Path, sep: str) -> tuple[pd.DataFrame, LineOf]:
    """Read with pandas' C parser; a file it rejects is read again by the careful csv-module
    reader, which names the line and the problem. Line numbers are not kept per row: an error
    message finds its line by reading the file again (see :func:`_csv_line_of`)."""
    header_line, header = _csv_header(path, sep)
    try:
        with warnings.catch_warnings():
            # a row with more fields than the header: the careful reader says which
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(
                path, sep=sep, encoding="utf-8-sig", engine="c", header=0, index_col=False,
                skipinitialspace=True, skip_blank_lines=True, keep_default_na=False,
                na_values=[""], low_memory=False,
                dtype={k: "category" for k, name in enumerate(header)
                       if name.lower() in _CATEGORICAL},
            )
    except (pd.errors.ParserError, pd.errors.ParserWarning, ValueError):
        return _read_csv_careful(path, sep)
    except UnicodeDecodeError as exc:
        raise GamesFileError(f"{path}: {not_utf8_file(path)}") from exc
    except OSError as exc:
        raise GamesFileError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if len(frame.columns) != len(header) or _blank_rows_read(frame):
        return _read_csv_careful(path, sep)  # e.g. whitespace-only lines, which it skips
    if _maybe_cut_short(frame, header):
        # a row cut short before its result reads as a void game here: counting the fields of
        # each record tells the two apart (a void game of an export has its reason, `void`)
        _refuse_short_rows(path, sep, header_line, header)
    frame.columns = header
    read_frame(frame)  # the escapes of text a spreadsheet would run (arena.spreadsheet)
    return frame, lambda k: f"line {_csv_line_of(path, sep, k)}"


def _required_columns(header: list[str]) -> list[int]:
    """Where first, second and result are, an alias standing in only for a missing name (as
    `_normalise` reads them: a `score` beside a `result` is not the result)."""
    names = [name.strip().lower() for name in header]
    found = []
    for canon in REQUIRED:
        if canon in names:
            found.append(names.index(canon))
        else:
            found += [k for k, name in enumerate(names) if ALIASES.get(name) == canon][:1]
    return found


def _maybe_cut_short(frame: pd.DataFrame, header: list[str]) -> bool:
    """Rows with no result and nothing after it: a void game, or a row cut short."""
    required = _required_columns(header)
    if not required:
        return False
    last = max(required)
    empty = frame.iloc[:, last].isna().to_numpy().copy()
    for k in range(last + 1, len(header)):
        if not empty.any():
            return False
        empty &= frame.iloc[:, k].isna().to_numpy()
    return bool(empty.any())


def _records(path: Path, sep: str, header_line: int,
             header: list[str]) -> Iterator[tuple[int, list[str]]]:
    """(line, fields) of the records after the header; GamesFileError for the first with fewer
    fields than up to the last required column (trailing optional fields may be left out, not
    these)."""
    needed = max(_required_columns(header), default=-1)
    for line, row in _csv_rows(path, sep):
        if line <= header_line:
            continue
        if len(row) <= needed:
            raise GamesFileError(
                f"{path} line {line}: {len(row)} field{'s' if len(row) != 1 else ''}, but the "
                f"header (line {header_line}) names {len(header)} columns: a row cut short? "
                "(a void game has its result empty, not left out)")
        yield line, row


def _refuse_short_rows(path: Path, sep: str, header_line: int, header: list[str]) -> None:
    """One pass of `_records` for its refusal (the fast reader's rows were read by pandas)."""
    for _record in _records(path, sep, header_line, header):
        pass


def _blank_rows_read(frame: pd.DataFrame) -> bool:
    """Rows of nothing but whitespace, which the C parser keeps and the careful reader skips."""
    if frame.empty:
        return False
    return bool(frame.isna().all(axis=1).any())


def _csv_header(path: Path, sep: str) -> tuple[int, list[str]]:
    for line, row in _csv_rows(path, sep):
        header = [field.strip() for field in row]
        if sep == "," and len(header) == 1 and ";" in header[0]:
            raise GamesFileError(f"{path} line {line}: {SEMICOLONS}")
        seen: set[str] = set()
        for name in header:
            if name.lower() in seen:
                raise GamesFileError(f"{path} line {line}: column {name!r} appears twice in the "
                                     "header")
            seen.add(name.lower())
        return line, header
    raise GamesFileError(f"{path}: the file is empty (expected a header with columns "
                         "first,second,result)")


def _csv_line_of(path: Path, sep: str, k: int) -> int:
    """The line where data row ``k`` (0-based, after the header) starts."""
    for index, (line, _row) in enumerate(_csv_rows(path, sep)):
        if index == k + 1:
            return line
    return 0


def _read_csv_careful(path: Path, sep: str) -> tuple[pd.DataFrame, LineOf]:
    """The csv module, record by record: exact messages for malformed files."""
    rows: list[list[str]] = []
    lines: list[int] = []
    header_line, header = _csv_header(path, sep)
    for line, row in _records(path, sep, header_line, header):  # one pass, short rows refused
        if len(row) > len(header) and any(f.strip() for f in row[len(header):]):
            raise GamesFileError(
                f"{path} line {line}: {len(row)} fields, but the header (line "
                f"{header_line}) names {len(header)} columns")
        rows.append((row + [""] * len(header))[: len(header)])
        lines.append(line)
    frame = pd.DataFrame(rows, columns=header, dtype=object)
    read_frame(frame)
    line_numbers = np.asarray(lines, dtype=np.int64)
    return frame, lambda k: f"line {line_numbers[k]}"


def _read_jsonl(path: Path) -> tuple[pd.DataFrame, LineOf]:
    records = []
    lines = []
    try:
        text = decode(path.read_bytes())
    except UnicodeDecodeError as exc:
        raise GamesFileError(f"{path}: {not_utf8(exc)}") from exc
    except OSError as exc:
        raise GamesFileError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if not text.strip():
        raise GamesFileError(f"{path}: the file is empty (expected one JSON object per line "
                             "with first, second, result)")
    stripped = text.lstrip()
    if stripped.startswith("["):  # a JSON array of objects
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise GamesFileError(f"{path} line {exc.lineno}: invalid JSON: {exc.msg}") from exc
        for k, obj in enumerate(data):
            if not isinstance(obj, dict):
                raise GamesFileError(f"{path}: item {k + 1} of the array is not an object")
            records.append(obj)
        return pd.DataFrame.from_records(records), lambda k: f"item {k + 1}"  # no line kept
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GamesFileError(f"{path} line {lineno}: invalid JSON: {exc.msg}") from exc
        if not isinstance(obj, dict):
            raise GamesFileError(f"{path} line {lineno}: expected a JSON object per line")
        records.append(obj)
        lines.append(lineno)
    line_numbers = np.asarray(lines, dtype=np.int64)
    return pd.DataFrame.from_records(records), lambda k: f"line {line_numbers[k]}"


def _normalise(raw: pd.DataFrame, path: Path, line_of: LineOf) -> pd.DataFrame:
    frame = raw
    given = [str(c) for c in frame.columns]
    frame.columns = [c.strip().lower() for c in given]
    if frame.columns.has_duplicates:  # JSON keys differing only in case: `result`, `Result`
        name = frame.columns[frame.columns.duplicated()][0]
        spellings = [g for g in given if g.strip().lower() == name]
        raise GamesFileError(f"{path}: column {name!r} is given twice (as "
                             f"{' and '.join(map(repr, spellings))}): keep one")
    for alias, canon in ALIASES.items():
        if alias in frame.columns and canon not in frame.columns:
            frame = frame.rename(columns={alias: canon})
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        have = ", ".join(" ".join(str(c).split())[:40] for c in frame.columns[:8]) or "none"
        raise GamesFileError(f"{path}: missing column(s) {', '.join(missing)} "
                             f"(need first, second, result; found: {have})")

    def where(k: int) -> str:
        return f"{path} {line_of(k)}"

    def factorize(col: str) -> tuple[np.ndarray, list]:
        try:
            return _factorize(frame[col])
        except TypeError:  # a JSON list or object where a value goes: unhashable
            k = next(k for k, v in enumerate(frame[col]) if isinstance(v, list | dict))
            kind = "list" if isinstance(frame[col].iloc[k], list) else "object"
            raise GamesFileError(f"{where(k)}, column {col}: a JSON {kind} where a single value "
                                 "goes") from None

    # Every column computation works on the distinct values (a handful), then one take.
    codes, values = factorize("result")
    parsed = [parse_result(v) for v in values]
    for code, value in enumerate(parsed):
        if value is None:
            k = int(np.flatnonzero(codes == code)[0])
            raise GamesFileError(
                f"{where(k)}, column result: cannot read {values[code]!r} as a result "
                "(use 1, 0.5, 0 or 1-0, 1/2-1/2, 0-1, from the first player's side)")
    table = np.array([*parsed, math.nan], dtype=float)  # code -1 (missing) -> void
    results = table[codes]
    for col in ("first", "second"):
        codes, values = factorize(col)
        stripped = [str(v).strip() for v in values]
        named = np.array([name != "" for name in stripped] + [False])  # code -1: missing
        if not named[codes].all():
            k = int(np.flatnonzero(~named[codes])[0])
            raise GamesFileError(f"{where(k)}, column {col}: empty bot name")
        # stripping may make two spellings one name; as categories a million rows cost a byte
        # or two each, and the ratings read the codes directly
        name_codes, names = pd.factorize(np.array(stripped, dtype=object))
        frame[col] = pd.Categorical.from_codes(name_codes[codes], categories=list(names))
    frame["result"] = results
    for col in (*_WHOLE_NUMBERS, *_SEATS, "winner_seat"):
        if col in frame.columns and not pd.api.types.is_numeric_dtype(frame[col].dtype):
            factorize(col)  # a JSON list or object where a number goes: said with its line
    if "winner" in frame.columns:
        frame["winner"] = _winner_seats(frame)
    _check_numbers(frame, where)
    _check_winners(frame, where)
    if "variant" in frame.columns:
        frame["variant"] = _canonical_variants(frame["variant"], where)
    if "game_id" in frame.columns:
        _check_copies(frame, where, line_of)
    return _complete(frame, str(path))


# The numeric columns a file may give, and what each may hold (besides being empty).
_WHOLE_NUMBERS = {"seq": (None, "a whole number (the order of the games)"),
                  "plies": (0, "a whole number of moves, 0 or more")}
_SEATS = {"winner": "1 or 2 (the winning seat; empty for a draw or a void game) or either "
                      "bot's name",
          "forfeit_by": "1 or 2 (the seat that forfeited; empty if none)",
          "sandboxed": "1 or 0 (empty if unknown)"}


def _check_numbers(frame: pd.DataFrame, where: Callable[[int], str]) -> None:
    """The numeric columns hold what they mean: a `seq` of `inf` or `abc`, a `plies` of -3,
    a `winner` of 3 was read as something else (an order moved, a mean of plies of `inf`)."""
    for col in (*_WHOLE_NUMBERS, *_SEATS):
        if col not in frame.columns:
            continue
        raw = frame[col]
        numbers = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
        given = _given(raw)
        if col in _SEATS:
            allowed = {"sandboxed": (0.0, 1.0)}.get(col, (1.0, 2.0))
            bad = given & ~np.isin(numbers, allowed)
            meaning = _SEATS[col]
        else:
            low, meaning = _WHOLE_NUMBERS[col]
            with np.errstate(invalid="ignore"):
                whole = np.isfinite(numbers) & (numbers == np.round(numbers))
                bad = given & ~(whole & (numbers >= (low if low is not None else -np.inf)))
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise GamesFileError(f"{where(k)}, column {col}: {_shown(raw.iloc[k])} is not "
                                 f"{meaning}")


def _given(column: pd.Series) -> np.ndarray:
    """Which cells hold something: not missing, and for text not blank (each distinct value
    stripped once: a million cells hold few)."""
    given = ~column.isna().to_numpy()
    if pd.api.types.is_numeric_dtype(column.dtype):
        return given
    codes, values = _factorize(column)
    blank = np.array([isinstance(v, str) and not v.strip() for v in values] + [True])
    return given & ~blank[codes]


def _winner_seats(frame: pd.DataFrame) -> pd.Series:
    """The `winner` column as seats: a store and `arena export` write the seat, 1 or 2; `arena
    play --json` the winner's name, with the seat in `winner_seat` (read first: a bot named
    `2` in seat 1 made its name a seat). A name that is neither bot's stays as written (and is
    refused as no seat)."""
    if "winner_seat" in frame.columns:
        seats = pd.to_numeric(frame["winner_seat"], errors="coerce")
        if seats.notna().any() or not _given(frame["winner"]).any():
            return seats
    raw = frame["winner"]
    if pd.api.types.is_numeric_dtype(raw.dtype):
        return raw
    codes, values = _factorize(raw)
    # text only: a JSON number is a seat, `"2"` a name (a bot named 2)
    text = np.array([isinstance(v, str) and bool(v.strip()) for v in values] + [False])[codes]
    given = _given(raw)
    names = raw.astype(object).where(text).astype(str).str.strip().to_numpy()
    first = frame["first"].astype(str).to_numpy()
    second = frame["second"].astype(str).to_numpy()
    by_name = np.where(text & (names == first), 1.0,
                       np.where(text & (names == second), 2.0, np.nan))
    numbers = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    resolved = np.where(np.isnan(by_name), numbers, by_name)  # a name before a number
    unknown = given & np.isnan(resolved)
    if unknown.any():  # kept as text: `_check_numbers` names it
        return raw.where(unknown, pd.Series(resolved, index=raw.index))
    return pd.Series(resolved, index=raw.index)


def _check_winners(frame: pd.DataFrame, where: Callable[[int], str]) -> None:
    """A `winner` that contradicts the `result` (a hand edit of one of the two): which one is
    right cannot be told, and the ratings read the result."""
    if "winner" not in frame.columns:
        return
    result = frame["result"].to_numpy(dtype=float)
    winner = pd.to_numeric(frame["winner"], errors="coerce").to_numpy(dtype=float)
    expected = np.where(result == 1.0, 1.0, np.where(result == 0.0, 2.0, np.nan))
    # a decisive result without a winner is not wrong: older stores and other tools leave it out
    wrong = ~np.isnan(result) & ~np.isnan(winner) & (winner != expected)
    if wrong.any():
        k = int(np.flatnonzero(wrong)[0])
        says = f"winner {int(winner[k])}"
        score = {1.0: "1-0", 0.0: "0-1"}.get(float(result[k]), "1/2-1/2")
        raise GamesFileError(f"{where(k)}: result {score} but {says}: the two columns "
                             "disagree (mend the one that is wrong)")


def _canonical_variants(column: pd.Series, where: Callable[[int], str]) -> pd.Categorical:
    """Each variant as its canonical spec (`Classic` and `classic:7x6` are `classic`: tables
    split by variant showed them apart). One the engine does not know stays as written (a rule
    of a plugin, another tool's label), but not a misspelt preset (`clasic` is no variant of
    its own); an empty one stays empty."""
    from arena.game import VariantError, parse_variant

    codes, values = _factorize(column)
    canonical: list[str] = []
    for code, value in enumerate(values):
        text = "" if value is None or (isinstance(value, float) and math.isnan(value)) \
            else str(value).strip()
        try:
            canonical.append(parse_variant(text).spec if text else "")
        except VariantError as error:
            if (label := _label(text)) is not None:
                canonical.append(label)
                continue
            k = int(np.flatnonzero(codes == code)[0])
            raise GamesFileError(f"{where(k)}, column variant: {error}") from None
    categories, remap = np.unique(np.array([*canonical, ""], dtype=object), return_inverse=True)
    return pd.Categorical.from_codes(remap[codes], categories=list(categories))


def _label(text: str) -> str | None:
    """A variant the engine cannot build, kept as a name of its own: another tool's (`gomoku`)
    or a rule the engine lacks (`classic,rule=no-such-rule` of a plugin: written canonically,
    as the engine writes the rest of it). None for a misspelt preset (`clasic`, the engine's own
    suggestion: `variant.near_preset`) or a bad size or option of a known one (`classic:99x1`)."""
    from arena.game import PRESETS, VariantError, parse_variant
    from arena.game.variant import UnknownRuleError, near_preset

    try:
        parse_variant(text)
    except UnknownRuleError as error:  # only its rule is unknown
        return f"{error.base},rule={error.rule}" if error.rule else None
    except VariantError:
        preset = text.split(",")[0].partition(":")[0].strip().lower()
        if preset not in PRESETS:
            return None if near_preset(preset) else text
    return None


# What tells one game from another with the same id, when a file has it: a copy repeats them.
IDENTIFYING = ("moves", "started_at", "finished_at")


def _check_copies(frame: pd.DataFrame, where: Callable[[int], str], line_of: LineOf) -> None:
    """A game given twice (a file joined twice, a row pasted twice) would count twice: the same
    id, players, result and moves or times is a copy. Two games that share an id and differ
    (two `arena play` outputs, both numbered from g0001) are two games, rated (a site refuses
    them: one page per id). A file with none of `IDENTIFYING` cannot tell them apart: its ids
    are not compared."""
    identifying = [c for c in IDENTIFYING if c in frame.columns]
    if not identifying or first_repeat(frame["game_id"]) is None:
        return  # the common case, at the cost of one hash of the ids
    ids = frame["game_id"].to_numpy(dtype=object)
    shared = pd.Series(ids).duplicated(keep=False).to_numpy() & _given(frame["game_id"])
    columns = ["game_id", "first", "second", "result", *identifying]
    # compared as read by either reader: text stripped, the result a number
    rows = frame.loc[shared, columns].astype(str).apply(lambda c: c.str.strip())
    hashes = pd.util.hash_pandas_object(rows, index=False).to_numpy()
    copies = pd.Series(hashes).duplicated(keep="first").to_numpy()
    if not copies.any():
        return
    at = int(np.flatnonzero(copies)[0])
    second = int(rows.index[at])
    first = int(rows.index[np.flatnonzero(hashes == hashes[at])[0]])
    raise GamesFileError(f"{where(second)}: the game {_shown(ids[second])} again, as on "
                         f"{line_of(first)}: a game counts once (a file joined twice? remove "
                         "the copy)")


def first_repeat(ids: pd.Series) -> tuple[str, tuple[int, int]] | None:
    """(id, (row of its first use, row of its second)) of the first id given twice, ignoring
    empty ones; None if each id is given once. Ids are compared as written (a million rows:
    stripping each would cost more than the check)."""
    values = ids.to_numpy(dtype=object)
    repeated = pd.Series(values).duplicated(keep="first").to_numpy(copy=True)
    if not repeated.any():
        return None
    given = ~pd.isna(values) & (values != "")
    repeated &= given
    if not repeated.any():
        return None
    second = int(np.flatnonzero(repeated)[0])
    gid = values[second]
    first = int(np.flatnonzero((values == gid) & given)[0])
    return str(gid), (first, second)


def _shown(value: object) -> str:
    """A cell's value in a message: quoted, cut short (a whole float as written: `3`)."""
    is_whole = isinstance(value, float) and value.is_integer()
    text = str(int(value)) if is_whole else str(value)
    return repr(text if len(text) <= 40 else text[:40] + "...")


def _factorize(column: pd.Series) -> tuple[np.ndarray, list]:
    """(codes, distinct values) of a column; code -1 for a missing value."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(dtype=np.int64), list(column.cat.categories)
    codes, uniques = pd.factorize(column.to_numpy(dtype=object), use_na_sentinel=True)
    return np.asarray(codes, dtype=np.int64), list(uniques)


def _complete(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """Add the missing columns of the games table with neutral values.

    Filled-in text columns are categories of one value (one byte a row), so a games file of a
    million rows with only first, second and result stays small.
    """
    n = len(frame)
    for col in REQUIRED:
        if col not in frame.columns:
            raise GamesFileError(f"{source}: the games table has no column {col!r}")
    columns: dict[str, object] = {}
    columns["result"] = pd.to_numeric(frame["result"], errors="coerce").astype(float)
    if "seq" not in frame.columns:
        columns["seq"] = np.arange(1, n + 1, dtype=np.int64)
    else:
        seq = pd.to_numeric(frame["seq"], errors="coerce").to_numpy(dtype=float, copy=True)
        missing = np.isnan(seq)
        if missing.any():
            seq[missing] = np.flatnonzero(missing) + 1
        columns["seq"] = seq.astype(np.int64)
    if "game_id" not in frame.columns:
        ids = np.array(list(map(str, range(1, n + 1))), dtype=object)  # 2x numpy's astype(str)
        columns["game_id"] = pd.Series(ids, index=frame.index, dtype=object)
    if "winner" not in frame.columns:
        res = columns["result"].to_numpy()
        columns["winner"] = np.where(res == 1.0, 1.0, np.where(res == 0.0, 2.0, np.nan))
    for col in OPTIONAL_NUMBERS:
        if col not in frame.columns:
            columns[col] = np.full(n, np.nan)
        else:
            columns[col] = pd.to_numeric(frame[col], errors="coerce")
    for col in STRING_COLUMNS:
        if col in columns:  # game_id, numbered above
            continue
        if col not in frame.columns:
            columns[col] = pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), [""])
        else:
            columns[col] = _text(frame[col], json_values=col in JSON_COLUMNS)
    for col in FLOAT_COLUMNS:  # the schema's dtype, as the store's loader gives it: a file
        # without a draw or a void game had read `winner` as int64, another file as float64
        if col not in columns and col in frame.columns:
            columns[col] = frame[col]
        if col in columns and pd.api.types.is_numeric_dtype(columns[col]):
            columns[col] = pd.Series(columns[col], index=frame.index).astype("float64")
    return frame.assign(**columns)


def _text(column: pd.Series, json_values: bool = False) -> pd.Series:
    """A text column with "" for missing values (categories stay categories). `json_values`: a
    column whose text is JSON (`schema.JSON_COLUMNS`), where a JSON export has lists and time
    controls as values: they become their JSON text again (a time control became Python's repr,
    which nothing read: diff review)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        if not column.hasnans:
            return column
        if "" not in column.cat.categories:
            column = column.cat.add_categories([""])
        return column.fillna("")
    if column.dtype == object:
        if json_values:
            column = column.map(_json_text)
        elif _has_lists(column):
            column = column.map(_list_text)
    return column.where(column.notna(), "").astype(str)


def _json_text(value: object) -> object:
    return json.dumps(value) if isinstance(value, list | dict) else value


def _has_lists(column: pd.Series) -> bool:
    first = column.dropna().head(1).tolist()
    return bool(first) and isinstance(first[0], list)


def _list_text(value: object) -> object:
    """A JSON list as the games table keeps it: move tokens space-separated (`arena play --json`
    writes `moves` and `opening` as lists), numbers (move times) as a JSON list."""
    if not isinstance(value, list):
        return value
    if all(isinstance(v, str) for v in value):
        return " ".join(value)
    return json.dumps(value)


def with_bot_info(table: pd.DataFrame, path: str | Path) -> pd.DataFrame:
    """The standings `table` with `author` and `language` after `bot`, when the results folder at
    `path` knows any (its `bots` table); unchanged for a games file or bots without them."""
    from arena.tournament.store import DB_NAME, read_bots

    folder = Path(path)
    if table.empty or not (folder / DB_NAME).is_file():
        return table
    try:
        bots = read_bots(folder)
    except Exception:
        return table
    known = bots.set_index("name")
    out = table.copy()
    position = list(out.columns).index("bot") + 1
    for column in ("author", "language"):
        values = out["bot"].map(lambda b, c=column: str(known[c].get(b, "") or "") if c in known else "")
        if values.astype(bool).any():
            out.insert(position, column, values)
            position += 1
    out.attrs = dict(table.attrs)
    return out


# `arena analyze`'s per-bot figures as standings columns (percent), when analysis.db is there
ACCURACY_COLUMNS = ("accuracy", "blunder_rate")


def with_accuracy(table: pd.DataFrame, analysis, variant: str | None = None) -> pd.DataFrame:
    """The standings `table` with `accuracy` and `blunder_rate` (percent: `arena analyze`'s own
    rows, `StoredAnalysis.bot_rows`) over the analysed games of `variant` (None: all of them, as
    `arena analyze` pools them); unchanged when there are none."""
    from arena.solver.analysis_store import canonical_spec

    if analysis is None or table.empty:
        return table
    spec = None if variant is None else canonical_spec(variant)
    if variant is not None and spec is None:
        return table
    rows = {r["bot"]: r for r in analysis.bot_rows(spec)}
    if not rows:
        return table
    out = table.copy()
    for column in ACCURACY_COLUMNS:
        out[column] = out["bot"].map(lambda b, c=column: rows[b][c] if b in rows else float("nan"))
    out.attrs = dict(table.attrs)
    return out
