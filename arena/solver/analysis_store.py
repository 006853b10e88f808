"""Where analyses are kept: `analysis.db`, an SQLite file beside the games (never games.db).

For a results or league folder it is `FOLDER/analysis.db`; for a games file `FILE.analysis.db`.
A game is known by its id plus a hash of its variant and moves, so a rerun analyses only the
games it has not seen (a replayed or renumbered game counts as new).

Tables: `analysed_games` (one row per game: the plies after which its result was decided, how
many positions were settled) and `analysed_moves` (one row per move made by a bot: the mover's
score before and after it, NULL where not settled).
"""

from __future__ import annotations

import hashlib
import math
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arena.clock import utc_now_iso
from arena.solver.analysis import GameAnalysis, MoveRecord, bot_stats
from arena.tournament import sqlite_read

SCHEMA = """
CREATE TABLE IF NOT EXISTS analysed_games (
    game_key TEXT PRIMARY KEY, game_id TEXT, variant TEXT, first TEXT, second TEXT,
    result REAL, plies INTEGER, decided_ply INTEGER, positions INTEGER, settled INTEGER,
    analysed_at TEXT
);
CREATE TABLE IF NOT EXISTS analysed_moves (
    game_key TEXT, ply INTEGER, seat INTEGER, bot TEXT, move TEXT, before INTEGER, after INTEGER,
    PRIMARY KEY (game_key, ply)
);
"""


def canonical_spec(variant: str) -> str | None:
    """The spec `arena analyze` stores for a games-table variant (it reads a missing one as
    classic); None for one the engine does not know."""
    from arena.game import DEFAULT_VARIANT, parse_variant

    try:
        return parse_variant(variant or DEFAULT_VARIANT).spec
    except ValueError:
        return None


def analysis_path(source: Path) -> Path:
    return source / "analysis.db" if source.is_dir() else source.with_name(source.name + ".analysis.db")


def game_key(game_id: str, variant: str, moves: str) -> str:
    digest = hashlib.sha1(f"{variant}|{moves}".encode()).hexdigest()[:16]
    return f"{game_id}#{digest}"


def move_tokens(value: object) -> str:
    """Move tokens from a games-table cell (a string, or the list that `arena play --json`
    writes), separated by single spaces: the form a game's key is made of."""
    if isinstance(value, list | tuple):
        return " ".join(str(t) for t in value)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    text = str(value).strip()
    if text.startswith("["):  # such a list as the loader turned it into text
        import ast

        try:
            return move_tokens(list(ast.literal_eval(text)))
        except (ValueError, SyntaxError):
            pass
    return " ".join(text.split())


def stored_keys(game_id: str, variant: str, moves: object) -> tuple[str, ...]:
    """The keys under which `arena analyze` may have stored a game: under its id, and under ''
    (a games file without ids, whose games the site names `game-<seq>`); () for a variant the
    engine does not know."""
    spec = canonical_spec(variant)
    if spec is None:
        return ()
    tokens = move_tokens(moves)
    return game_key(game_id, spec, tokens), game_key("", spec, tokens)


@dataclass
class StoredAnalysis:
    """What an analysis.db holds: its games (`analysed_games` rows, oldest first) and the move
    records of each, by game key."""

    games: list[dict]
    moves: dict[str, list[MoveRecord]]

    def of_games(self, games) -> StoredAnalysis:
        """Only the analysed games still in `games` (a games table): a games file exported
        again, cut down or edited keeps its analysis.db, whose other games must not count."""
        column = lambda name: games[name] if name in games else [""] * len(games)  # noqa: E731
        keys = {key for gid, variant, moves in zip(column("game_id"), column("variant"),
                                                   column("moves"), strict=True)
                for key in stored_keys(str(gid or ""), str(variant or ""), moves)}
        return StoredAnalysis([g for g in self.games if g["game_key"] in keys],
                              {k: v for k, v in self.moves.items() if k in keys})

    def bot_rows(self, variant: str | None = None) -> list[dict]:
        """`BotStats.row()` of every bot over the analysed games, or those of one variant (its
        canonical spec): the one computation behind `arena analyze` and the published site."""
        games = [g for g in self.games if variant is None or g["variant"] == variant]
        return [s.row() for s in bot_stats((g["first"], g["second"], self.moves.get(g["game_key"], []))
                                           for g in games)]


def _games(conn: sqlite3.Connection) -> list[dict]:
    cur = conn.execute("SELECT game_key, game_id, variant, first, second, result, plies, "
                       "decided_ply, positions, settled FROM analysed_games ORDER BY rowid")
    columns = [d[0] for d in cur.description]
    return [dict(zip(columns, r, strict=True)) for r in cur]


def _moves(conn: sqlite3.Connection) -> dict[str, list[MoveRecord]]:
    out: dict[str, list[MoveRecord]] = {}
    for key, ply, seat, move, before, after in conn.execute(
            "SELECT game_key, ply, seat, move, before, after FROM analysed_moves "
            "ORDER BY game_key, ply"):
        out.setdefault(key, []).append(MoveRecord(ply, seat, move, before, after))
    return out


def read_analysis(path: Path) -> StoredAnalysis:
    """The content of an analysis.db, read without writing anything (a read-only results folder
    works, no journal file is left behind): the way `arena.tournament.store` reads games.db.
    Raises sqlite3.Error for a damaged file and OSError for an unreadable one."""
    return sqlite_read.read(path, lambda conn: StoredAnalysis(_games(conn), _moves(conn)))


def analysis_beside(source: Path, games, warn: Callable[[str], None] | None = None,
                    ) -> StoredAnalysis | None:
    """The analysis.db beside a results folder or games file (what the site and `arena
    standings` show), of the games of `games` (the source's games table) only; None when there
    is none; None, and one line to `warn`, when it cannot be read: a damaged analysis costs the
    accuracy columns, never the site or the standings."""
    path = analysis_path(source)
    if not path.exists():
        return None
    try:
        return read_analysis(path).of_games(games)
    except (OSError, sqlite3.Error) as error:
        if warn is not None:
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            warn(f"{path}: cannot read the move analysis ({first}); no accuracy is shown "
                 "(remove it and run arena analyze again)")
        return None


class AnalysisStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.conn = sqlite3.connect(path)
            self.conn.executescript(SCHEMA)
        except sqlite3.Error as exc:
            raise OSError(f"{path}: cannot open the analysis database: {exc}") from None

    def close(self) -> None:
        self.conn.close()

    def known(self) -> set[str]:
        return {row[0] for row in self.conn.execute("SELECT game_key FROM analysed_games")}

    def forget_all(self) -> None:
        with self.conn:
            self.conn.execute("DELETE FROM analysed_games")
            self.conn.execute("DELETE FROM analysed_moves")

    def save(self, key: str, row: dict, analysis: GameAnalysis) -> None:
        """One game, in one transaction (an interrupted run keeps every finished game)."""
        settled = sum(v is not None for v in analysis.values)
        with self.conn:
            self.conn.execute(
                "INSERT OR REPLACE INTO analysed_games VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (key, row["game_id"], row["variant"], row["first"], row["second"], row["result"],
                 row["plies"], analysis.decided_ply, len(analysis.values), settled,
                 utc_now_iso()))
            names = {1: row["first"], 2: row["second"]}
            self.conn.executemany(
                "INSERT OR REPLACE INTO analysed_moves VALUES (?,?,?,?,?,?,?)",
                [(key, m.ply, m.seat, names[m.seat], m.move, m.before, m.after)
                 for m in analysis.moves])

    def read(self) -> StoredAnalysis:
        return StoredAnalysis(_games(self.conn), _moves(self.conn))
