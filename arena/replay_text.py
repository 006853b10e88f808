"""`arena replay` without click: reading records and printing positions.

Kept free of click (and of json until `--json` is asked for) so that `arena replay 4455` starts
about as fast as Python itself; `arena/commands/replay.py` is the click front end of the same code.
"""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Callable, Iterator, Sequence

from arena.game import DEFAULT_VARIANT, VariantError, parse_variant
from arena.game.replay import ReplayResult, replay_record

# Files the arena writes games to (`arena export`, `games_file`): replayed game by game, like a
# results folder; any other file holds one record a line.
GAMES_FILE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson", ".json")  # as load_games reads

STDIN_HINT = ("no records given: name a file of records or give records, e.g.  arena replay "
              "4453  or  arena replay games.txt  (or pipe them in:  ... | arena replay -)")


class ReplayInputError(ValueError):
    """Records that cannot be read (one-line message; exit status 1)."""


class ReplayUsageError(ValueError):
    """A bad option or a missing argument (exit status 2)."""


def looks_like_path(argument: str) -> bool:
    """A path separator, or one word with a file extension (`games.txt`): never a game record
    (records are `VARIANT: moves` or move tokens, which have no dot)."""
    if "/" in argument or os.sep in argument:
        return True
    stem, dot, extension = argument.rpartition(".")
    return (bool(dot and stem and extension[:1].isalpha() and extension.isalnum())
            and ":" not in argument and not any(c.isspace() for c in argument))


def render(result: ReplayResult, label: str) -> str:
    game = result.game
    lines = [label]
    if game is None:
        return f"{label}\n  error: {result.error}"
    columns = game.variant.columns
    width = max(len(str(columns)), 1)
    fixed = set(game.variant.fixed_columns)
    for row in game.board_rows():
        lines.append("  " + " ".join(cell.rjust(width) for cell in row))
    lines.append(
        "  " + " ".join(("#" if c in fixed else str(c)).rjust(width) for c in range(1, columns + 1))
    )
    data = result.to_dict()
    if result.error:
        lines.append(f"  error: {result.error}")
    elif data["status"] == "ongoing":
        lines.append(f"  ongoing after {data['plies']} plies, player {data['to_move']} to move; "
                     f"legal: {' '.join(data['legal'])}")
    elif data["status"] == "draw":
        lines.append(f"  draw ({data['reason']}) after {data['plies']} plies")
    else:
        lines.append(f"  player {data['winner']} wins ({data['reason']}) after {data['plies']} plies")
    return "\n".join(lines)


PIPE_CAP = 64 << 20  # bytes read from a pipe or device: /dev/zero must not fill the memory


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return _read_capped(handle, path)
    except OSError as error:
        raise ReplayInputError(f"cannot read {path}: {error.strerror or error}") from None


def _read_capped(handle: io.BufferedIOBase, name: str) -> bytes:
    """A regular file whole; a pipe or device (standard input too: `< /dev/zero`) up to the
    cap."""
    if stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
        return handle.read()
    data = handle.read(PIPE_CAP + 1)
    if len(data) > PIPE_CAP:
        raise ReplayInputError(f"{name}: more than {PIPE_CAP >> 20} MiB of records")
    return data


def _is_games_source(argument: str) -> bool:
    """A results or league folder, or a games file the arena wrote (by its suffix)."""
    return os.path.isdir(argument) or (os.path.isfile(argument)
                                       and argument.lower().endswith(GAMES_FILE_SUFFIXES))


def _games_tables(sources: list[str]) -> dict[str, object]:
    """The games table of each source (pandas is loaded only here: plain records stay light)."""
    from arena.reports.games_io import GamesFileError, load_games

    tables = {}
    for source in sources:
        try:
            table = load_games(source)
        except GamesFileError as error:
            raise ReplayInputError(str(error)) from None
        if "moves" not in table or not table["moves"].fillna("").astype(str).str.strip().any():
            raise ReplayInputError(f"{source}: no moves stored, nothing to replay (a games "
                                   "file of first,second,result rates games but cannot show them)")
        tables[source] = table
    return tables


def _looks_like_game_id(argument: str) -> bool:
    """The arena's ids: `g` and hex digits (tournaments, play), `P0000001-1` (leagues)."""
    import re

    return re.fullmatch(r"g[0-9a-f]+|P\d+-\d+", argument) is not None


def _stored_games(source: str, table, wanted: set[str]) -> Iterator[tuple[str, str, dict]]:
    """(label, record, extra JSON fields) of the games of one source: those whose id is in
    `wanted` if any is wanted, else all, in the order they were played."""
    from arena.reports.render import game_label, record_line, result_text

    for row in table.itertuples(index=False):
        game_id = str(getattr(row, "game_id", ""))
        if wanted and game_id not in wanted:
            continue
        reason = getattr(row, "reason", "") or ""
        label = f"{source} {game_label(game_id, row.first, row.second, row.result, reason)}"
        # "stored_": what the games table says (a forfeit leaves the board unfinished)
        extra = {"game_id": game_id, "first": str(row.first), "second": str(row.second),
                 "stored_result": result_text(row.result), "stored_reason": str(reason),
                 STORED_SCORE: row.result, STORED_ROW: row._asdict(), STORED_SOURCE: source}
        yield label, record_line(getattr(row, "variant", ""), getattr(row, "moves", "")), extra


STORED_SCORE = "_score"  # a stored game's result as a number, for the check, not printed
STORED_ROW = "_row"  # every stored field of the game, for --moves and --protocol, not printed
STORED_SOURCE = "_source"  # the results folder or games file it came from, not printed


def record_lines(arguments: Sequence[str]) -> Iterator[tuple[str, str, dict | None]]:
    """(source label, record line, extra JSON fields) for every record in the arguments, in
    their order: files, `-`, records, and the games of results folders and games files (all of
    them, or those whose ids are among the arguments)."""
    if not arguments:
        if sys.stdin is None or sys.stdin.isatty():
            raise ReplayUsageError(STDIN_HINT)  # would wait silently for typed records
        arguments = ("-",)
    sources = [a for a in dict.fromkeys(arguments) if _is_games_source(a)]
    tables = _games_tables(sources) if sources else {}
    ids: set[str] = set()
    if tables:
        known = {str(i) for table in tables.values() for i in table.get("game_id", ())}
        ids = {a for a in arguments if a in known and a not in tables}
        # after a results folder or games file, what is not a file is a game id (`nosuchid`,
        # `5`: replayed as moves, they printed every game and then a board); before one, what
        # has the form of the arena's ids
        after = arguments[next(k for k, a in enumerate(arguments) if a in tables) + 1:]
        unknown = [a for a in arguments if a not in known and a not in tables
                   and not os.path.exists(a) and a != "-" and not looks_like_path(a)
                   and (a in after or _looks_like_game_id(a))]
        if unknown:
            raise ReplayInputError(f"no game {unknown[0]} in {', '.join(tables)} (the ids are "
                                   "in `arena export` and on the published site)")
    for argument in arguments:
        if argument in ids:
            continue
        if argument in tables:
            yield from _stored_games(argument, tables[argument], ids)
        elif argument == "-":
            data = _read_capped(sys.stdin.buffer, "standard input")
            for label, line in _lines_of(data, "stdin", "standard input"):
                yield label, line, None
        elif os.path.exists(argument):  # a file, or a pipe such as <(...) or /dev/stdin
            for label, line in _lines_of(_read(argument), argument, argument):
                yield label, line, None
        elif looks_like_path(argument):
            raise ReplayInputError(f"{argument}: no such file (a record is e.g. 4453 or "
                                   "'popout: d4 d4 p4')")
        else:
            yield "record", argument, None


def _lines_of(data: bytes, label: str, name: str) -> Iterator[tuple[str, str]]:
    """The record lines of a file's bytes (UTF-8, a BOM is fine), skipping blanks and comments."""
    from arena.textfile import decode, not_utf8

    try:
        text = decode(data)
    except UnicodeDecodeError as error:
        raise ReplayInputError(f"cannot read {name}: {not_utf8(error)}") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            yield f"{label}:{number}", line


def run(variant_spec: str, as_json: bool, records: Sequence[str],
        echo: Callable[[str], None], *, ply: int | None = None, moves: bool = False,
        feed: bool = False) -> int:
    """Replay every record, print each (text or JSON); 1 if any holds a bad move, else 0.
    Raises ReplayUsageError / ReplayInputError before printing anything for bad input.

    `ply`: stop each record after that many plies (the position its `turn ply=N` line showed);
    `moves`: also list every ply (times, info lines), the forfeit and the bots' stderr logs;
    `feed`: print only the protocol lines the bot to move was sent there (one record)."""
    try:
        default_variant = parse_variant(variant_spec)
    except VariantError as error:
        raise ReplayUsageError(f"--variant: {error}") from None
    if feed and as_json:
        raise ReplayUsageError("--protocol prints protocol lines, not JSON: give one of them")
    lines = list(record_lines(records))
    if not lines:  # `arena replay </dev/null` printed nothing and exited 0 (new-user review)
        where = ", ".join(records) if records else "standard input"
        raise ReplayInputError(f"no game records to replay in {where}")
    if feed and len(lines) != 1:
        raise ReplayInputError(f"--protocol feeds one position to a bot, and {len(lines)} games "
                               "were given: name one (e.g. a results folder and a game id)")
    dumps = None
    if as_json:
        from json import dumps
    failed = False
    infos: dict[str, dict[str, object]] = {}  # per results folder: game id -> its info lines
    for source, line, extra in lines:
        result = replay_record(line, default_variant)
        row = extra.pop(STORED_ROW) if extra else None
        where = extra.pop(STORED_SOURCE) if extra else None
        score = extra.pop(STORED_SCORE) if extra else None
        if ply is not None:
            result = _at_ply(result, ply, source)
        mismatch = (_stored_mismatch(result, score, extra["stored_reason"])
                    if extra and ply is None else None)
        failed = failed or result.error is not None or mismatch is not None
        if feed:
            _feed(result, row, source, echo)
            continue
        detail = None
        if moves and result.game is not None:
            if row is not None and where is not None and os.path.isdir(where):
                row = {**row, "infos": _folder_infos(where, infos).get(str(row.get("game_id")))}
            detail = _detail(result, row, where)
        if dumps:
            data = {**(extra or {}), **result.to_dict()}
            if detail is not None:
                data.update(turns=detail["turns"], forfeit=detail["forfeit"],
                            logs=[str(path) for _, path in detail["logs"]])
            echo(dumps({**data, "stored_mismatch": mismatch} if mismatch else data))
            continue
        text = render(result, f"{source}: {line.strip()}")
        if detail is not None:
            head, _, board = text.partition("\n")
            text = "\n".join([head, *detail["text"], board])
        echo(f"{text}\n  error: {mismatch}" if mismatch else text)
    return 1 if failed else 0


def _at_ply(result: ReplayResult, ply: int, source: str) -> ReplayResult:
    """The record's position after its first `ply` plies (a bad move after them is cut off)."""
    game = result.game
    if game is None or (result.error_ply is not None and result.error_ply <= ply):
        return result  # the position cannot be reached: the error says why
    if ply > game.ply:
        raise ReplayInputError(f"{source}: --ply {ply} is past the end of the game "
                               f"({game.ply} plies)")
    while game.ply > ply:
        game.pop()
    return ReplayResult(game)


def _folder_infos(folder: str, cache: dict[str, dict[str, object]]) -> dict[str, object]:
    """The stored info lines of every game of a results folder (not in its games table)."""
    if folder not in cache:
        from arena.tournament.store import StoreError, iter_game_rows

        try:
            cache[folder] = {str(r["game_id"]): r.get("infos") for r in iter_game_rows(folder)}
        except StoreError as error:
            raise ReplayInputError(str(error)) from None
    return cache[folder]


def _detail(result: ReplayResult, row: dict | None, where: str | None) -> dict:
    """--moves: the ply table, the forfeit and the logs of a replayed record."""
    from pathlib import Path

    from arena.replay_detail import forfeit_line, log_paths, ply_rows, ply_table

    turns = ply_rows(result.game, row)
    forfeit = forfeit_line(row) if row else ""
    logs_dir = Path(where) / "logs" if where and os.path.isdir(where) else None
    logs = log_paths(logs_dir, row) if row else []
    text = ply_table(turns)
    if forfeit:
        text.append(f"  {forfeit}")
    text += [f"  log of {printable_name}: {path}" for printable_name, path in
             ((_printable(name), path) for name, path in logs)]
    if row and where and os.path.isdir(where) and not logs:
        text.append(f"  no stderr log of this game in {Path(where) / 'logs'} (a bot that "
                    "wrote nothing to stderr has none)")
    return {"turns": turns, "forfeit": forfeit, "logs": logs, "text": text}


def _printable(text: str) -> str:
    from arena.protocol import printable

    return printable(text)


def _feed(result: ReplayResult, row: dict | None, source: str,
          echo: Callable[[str], None]) -> None:
    """--protocol: the lines the bot to move was sent at the replayed position."""
    if result.game is None or result.error:
        raise ReplayInputError(f"{source}: {result.error}")
    from arena.replay_detail import bot_input

    try:
        for text in bot_input(result.game, row):
            echo(text)
    except ValueError as error:
        raise ReplayInputError(f"{source}: {error}") from None


def _stored_mismatch(result: ReplayResult, score: object, reason: str) -> str | None:
    """How a stored game's moves end otherwise than its stored result (a hand-edited file)."""
    game = result.game
    if result.error is not None or game is None or game.outcome is None:
        return None  # a forfeit leaves the board unfinished; a bad move is said already
    from arena.reports.render import result_mismatch

    return result_mismatch(score, reason, game.outcome.winner, game.outcome.reason)


def fast_main(arguments: Sequence[str]) -> int | None:
    """`arena replay ARGS` without click, for the plain forms; None when click must handle them
    (help, unknown options, errors that print a usage line)."""
    variant, as_json, records = DEFAULT_VARIANT, False, []
    items = iter(arguments)
    for item in items:
        if item == "--json":
            as_json = True
        elif item == "--variant":
            variant = next(items, "")
            if not variant:
                return None
        elif item.startswith("--variant="):
            variant = item.split("=", 1)[1]
        elif item == "--":
            records.extend(items)
        elif item.startswith("-") and item != "-":
            return None
        else:
            records.append(item)
    if not records:
        return None

    def echo(text: str) -> None:
        sys.stdout.write(text + "\n")

    try:
        return run(variant, as_json, records, echo)
    except ReplayUsageError:
        return None
    except ReplayInputError as error:
        sys.stdout.flush()
        sys.stderr.write(f"Error: {error}\n")
        return 1
