"""What a site is built from: the finished games, the stored settings, the bots' stderr logs and
the move analysis of `arena analyze`.

A results directory is read through `arena.tournament.store` (games, `read_settings`, `logs/`);
a games file (CSV / JSONL) through `arena.reports.games_io` (games only: no settings, no logs).
The analysis (`analysis.db` beside the games, when there is one) through
`arena.solver.analysis_store.analysis_beside`. Everything else of the site works on the
`SiteInput` this module returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from arena.protocol import printable
from arena.referee import log_file_name
from arena.reports import games_io
from arena.schema import COLUMNS_BY_NAME, FRAME_COLUMNS, RATING_ORDER_COLUMNS
from arena.solver.analysis_store import StoredAnalysis
from arena.tournament import store

LOG_TAIL_LINES = 40
LOG_TAIL_CHARS = 4000


class PublishError(Exception):
    """A problem with the input or output of `arena publish`, reported as one line."""


@dataclass
class SiteInput:
    """The games (finished only, every games-table column), settings and logs of one tournament.

    `settings` is exactly what `arena.tournament.store.read_settings` returns (empty for a games
    file); `logs_dir` is the results directory's `logs/` folder, if there is one.
    """

    games: pd.DataFrame
    settings: dict = field(default_factory=dict)
    logs_dir: Path | None = None
    name: str = "Tournament"
    analysis: StoredAnalysis | None = None  # `arena analyze`'s, None when there is none


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def load_results(path: str | Path) -> SiteInput:
    """Read a results directory or a games file; PublishError (one line) when it cannot be."""
    path = Path(path)
    if not path.exists():
        from arena.reports.games_io import no_such_path

        raise PublishError(no_such_path(path))
    if path.is_dir():
        try:
            games = store.load_games(path, extra=RATING_ORDER_COLUMNS)
            settings = store.read_settings(path)
        except (OSError, ValueError, store.StoreError) as error:
            raise PublishError(f"cannot read results in {path}: {_one_line(error)}") from None
        from arena.league import registry

        if registry.is_league(path):  # which bots are retired (replaced or removed) versions
            settings["retired"] = sorted(e.display for e in registry.entrants(path)
                                         if e.retired_at is not None)
        logs = path / "logs"
        return SiteInput(clean_games(games, path), settings, logs if logs.is_dir() else None,
                         settings.get("name") or path.name)
    try:
        games = games_io.load_games(path)
    except (OSError, ValueError, KeyError) as error:
        raise PublishError(f"cannot read games from {path}: {_one_line(error)}") from None
    return SiteInput(clean_games(games, path), {}, None, path.stem)


def clean_games(games: pd.DataFrame, source: object = None) -> pd.DataFrame:
    """The finished games in `seq` order with every column of the games table filled in.

    Void games (no result) are left out. A frame made by hand may lack columns; those a site
    cannot do without (first, second, result) are required, the others get the empty value the
    store would hold (a missing `variant` is one unnamed variant, missing `moves` no replays).
    `source` (the results folder or games file) is named in the errors.
    """
    where = f"{source}: " if source is not None else ""
    if not isinstance(games, pd.DataFrame):
        games = pd.DataFrame(games)
    missing = {"first", "second", "result"} - set(games.columns)
    if missing:
        raise PublishError(f"{where}games table lacks columns: {', '.join(sorted(missing))}")
    games = games[pd.to_numeric(games["result"], errors="coerce").notna()].copy()
    if games.empty:
        raise PublishError(f"{where}no finished games to publish (the store is empty or every "
                           "game is void)")
    games["result"] = games["result"].astype(float)
    for column in ("winner", "forfeit_by"):
        games[column] = (pd.to_numeric(games[column], errors="coerce") if column in games
                         else float("nan"))
    if "seq" not in games or games["seq"].isna().any():
        games["seq"] = range(1, len(games) + 1)
    games["seq"] = games["seq"].astype(int)
    for column in FRAME_COLUMNS:
        numeric = COLUMNS_BY_NAME[column].dtype != "string"
        if column not in games:
            games[column] = (float("nan") if numeric else
                             "[]" if column in ("move_ms", "move_cpu_ms") else "")
        elif not numeric:
            games[column] = games[column].fillna("").astype(str)
    games["game_id"] = [gid or f"game-{seq}" for gid, seq in zip(games["game_id"], games["seq"],
                                                                  strict=True)]
    repeat = games_io.first_repeat(games["game_id"])
    if repeat is not None:  # each game has its own replay page, named by its id
        gid, (first, second) = repeat
        raise PublishError(
            f"{where}game_id {gid} is given twice (games {first + 1} and {second + 1}, counting "
            "finished games): a site needs one id per game (two `arena play` outputs "
            "joined start from g0001 each: rename the ids of one)")
    plies = pd.to_numeric(games["plies"], errors="coerce")
    games["plies"] = [int(p) if p == p else len(m.split())
                      for p, m in zip(plies, games["moves"], strict=True)]
    return games.sort_values("seq", kind="stable").reset_index(drop=True)


def log_tail(logs_dir: Path | None, game_id: str, seat: int, bot: str) -> tuple[str, str]:
    """(file name, last lines) of a bot's stderr log of one game, ('', '') when there is none.

    The file is the one the referee writes: `arena.referee.log_file_name(game_id, seat, bot)`.
    """
    if logs_dir is None:
        return "", ""
    path = logs_dir / log_file_name(game_id, seat, bot)
    try:
        data = path.read_bytes()[-LOG_TAIL_CHARS * 2:]
    except OSError:
        return "", ""
    lines = data.decode("utf-8", errors="replace").splitlines()[-LOG_TAIL_LINES:]
    # what a bot wrote: a direction override reversed the page's text after it (site review)
    # (tabs as spaces: a Java stack trace's `\tat Main...` would read `\\tat`)
    shown = (printable(line.expandtabs(4)) for line in lines)
    return path.name, "\n".join(shown)[-LOG_TAIL_CHARS:]


def forfeit_logs(site_input: SiteInput) -> dict[tuple[str, int], tuple[str, str]]:
    """The stderr tails of every forfeiting bot, keyed by (game_id, seat)."""
    tails: dict[tuple[str, int], tuple[str, str]] = {}
    games = site_input.games
    for game_id, first, second, seat in zip(games["game_id"], games["first"], games["second"],
                                            games["forfeit_by"], strict=True):
        if seat == seat:  # not NaN
            seat = int(seat)
            tails[(game_id, seat)] = log_tail(site_input.logs_dir, game_id, seat,
                                              first if seat == 1 else second)
    return tails


def publish_logs_setting(settings: dict[str, Any]) -> bool:
    """The tournament's `publish_logs` setting (True unless the stored settings say false)."""
    stored = settings.get("settings")
    value = stored.get("publish_logs", True) if isinstance(stored, dict) else True
    return value is not False
