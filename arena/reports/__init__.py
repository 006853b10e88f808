"""Reports: loading games tables, standings files and charts.

``write_reports(results_dir)`` is what the tournament runner calls at the end of a run: it writes
``standings.md`` (pooled and per-variant tables, head to head), ``standings.csv`` and
``standings.json`` (pooled), ``standings_variants.csv`` (every table, with a ``variant`` column,
``all`` = pooled), ``pairs.csv`` and ``standings_notes.txt`` (what qualifies the numbers: a
regularised fit, games left out; the CSV and JSON files have no place for it) into the results
directory, and the charts into ``results_dir/plots/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["STANDINGS_FILES", "load_games", "write_plots", "write_reports"]

# What `write_reports` writes into a results directory (besides `plots/`)
STANDINGS_FILES = ("standings.md", "standings.csv", "standings.json", "standings_variants.csv",
                   "pairs.csv", "standings_notes.txt")


def load_games(path):
    from arena.reports.games_io import load_games as _load

    return _load(path)


def write_plots(games_df, out_dir, **kwargs):
    from arena.reports.plots import write_plots as _write

    return _write(games_df, out_dir, **kwargs)


def write_reports(results_dir: Path, anchor: tuple[str, float] | None = None,
                  plots: bool = True, games: pd.DataFrame | None = None) -> list[Path]:
    """Load the games of ``results_dir`` (or use ``games``, a games table) and write the
    standings files and the plots.

    Returns the paths written (the tournament runner may ignore it).
    """
    from arena.ratings.pairs import pairwise_table
    from arena.ratings.standings import standings_by_variant
    from arena.reports.games_io import load_games as _load
    from arena.reports.games_io import with_bot_info
    from arena.reports.render import render_pairwise, render_standings, to_csv, to_json

    results_dir = Path(results_dir)
    games = _load(results_dir) if games is None else games
    tables = {name: with_bot_info(table, results_dir)
              for name, table in standings_by_variant(games, anchor=anchor).items()}
    pooled = tables["all"]
    written: list[Path] = []

    md = ["# Standings", ""]
    if len(tables) > 2:  # pooled + more than one variant
        md.append(render_standings(pooled, "markdown", "All variants (pooled)"))
        for name, table in tables.items():
            if name != "all":
                md.append(render_standings(table, "markdown", f"Variant {name}"))
    else:
        title = next((k for k in tables if k != "all"), None)
        md.append(render_standings(pooled, "markdown", f"Variant {title}" if title else None))
    # the pooled table's Elo fit: head to head shows the standings' numbers
    pairs = pairwise_table(games, ratings=dict(zip(pooled["bot"], pooled["elo"], strict=True)))
    md.append(render_pairwise(pairs, "markdown", "Head to head (all variants)"))
    import pandas as pd

    long = pd.concat([t.assign(variant=name) for name, t in tables.items()], ignore_index=True)
    contents = {
        "standings.md": "\n".join(md),
        "standings.csv": to_csv(pooled),
        "standings.json": to_json(pooled) + "\n",
        "standings_variants.csv": to_csv(long[["variant", *pooled.columns]]),
        "pairs.csv": to_csv(pairs),
        "standings_notes.txt": notes_text(tables),
    }
    for name in STANDINGS_FILES:  # the one list of these files (the runner's outputs too)
        path = results_dir / name
        path.write_text(contents.pop(name), encoding="utf-8")
        written.append(path)
    assert not contents, f"written but not in STANDINGS_FILES: {sorted(contents)}"
    if plots:
        from arena.reports.plots import write_plots as _write

        written += _write(games, results_dir / "plots", anchor=anchor, standings=pooled)
    return written


def notes_text(tables: dict[str, pd.DataFrame]) -> str:
    """`standings_notes.txt`: each table's notes (the pooled one's as `all`), one per line as
    `table<TAB>note`, those that qualify the numbers (a regularised fit, games left out) as
    `table<TAB>warning<TAB>note` (a tab: variant names hold colons, `popout:5x4`)."""
    lines = []
    for name, table in tables.items():
        warnings = list(table.attrs.get("warnings", []))
        notes = [n for n in table.attrs.get("notes", []) if n not in warnings]
        lines += [f"{name}\twarning\t{w}" for w in warnings] + [f"{name}\t{n}" for n in notes]
    return "".join(f"{line}\n" for line in lines)
