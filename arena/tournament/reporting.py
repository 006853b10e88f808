"""What `arena run` writes after the games: the standings files of the tournament file that ran.

A results directory can hold games the file no longer schedules (a bot or variant removed, or
a shared `output`); those games stay stored, but the run's standings are about this file's
bots and variants only.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from arena.tournament.config import TournamentConfig

if TYPE_CHECKING:
    import pandas as pd


def select_results(config: TournamentConfig, rows: Iterable[tuple]) -> list[tuple]:
    """The (first, second, result, reason, variant) rows of `Store.results()` in this file."""
    names = {b.name for b in config.bots}
    specs = {v.spec for v in config.variants}
    return [r for r in rows if r[0] in names and r[1] in names and r[4] in specs]


def select_games(config: TournamentConfig, games: pd.DataFrame) -> pd.DataFrame:
    """The rows of a games table between this file's bots, in its variants."""
    names = [b.name for b in config.bots]
    specs = [v.spec for v in config.variants]
    keep = games["first"].isin(names) & games["second"].isin(names) & games["variant"].isin(specs)
    return games[keep].reset_index(drop=True)


def write_run_reports(config: TournamentConfig, plots: bool) -> list[Path]:
    """The standings files (and, if asked, the plots) of this file's games."""
    from arena.reports import load_games, write_reports

    results_dir = Path(config.output)
    games = select_games(config, load_games(results_dir))
    return [*write_reports(results_dir, plots=plots, games=games),
            write_provenance(results_dir)]


def write_provenance(results_dir: Path) -> Path:
    """`provenance.json`: the settings, bots and runs (arena, machine) behind the results, the
    file to publish with them (arena.provenance)."""
    import json

    from arena.provenance import PROVENANCE_FILE, provenance
    from arena.tournament.store import read_settings

    path = results_dir / PROVENANCE_FILE
    text = json.dumps(provenance(read_settings(results_dir)), indent=1, sort_keys=True,
                      ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")
    return path
