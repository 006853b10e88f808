"""Standings tables: one per variant and one pooled over all variants.

The counting columns (games, W/D/L, points, score, forfeits) are computed here; every rating
column comes from a system of :data:`arena.ratings.registry.SYSTEMS`, in registry order.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from arena.ratings import registry
from arena.ratings.facts import forfeits_by_bot
from arena.ratings.pairs import pairwise_table
from arena.ratings.system import RatingOptions, RatingSystem
from arena.ratings.table import (
    ALL,
    Anchor,
    CodedGames,
    anchor_if_present,
    as_anchor,
    parse_anchor,
    select_variant,
    variants_of,
)
from arena.reasons import Reason
from arena.schema import RATING_ORDER_COLUMNS

__all__ = [
    "ALL", "BASE_COLUMNS", "compute_standings", "pairwise_table", "parse_anchor", "rate_all",
    "select_variant", "standings_by_variant", "variants_of",
]

SORT_COLUMN = "elo"  # written by the Elo system, the first of the registry
BASE_COLUMNS = ["rank", "bot", "games", "wins", "draws", "losses", "points", "score", "forfeits"]


def wanted_systems(options: RatingOptions) -> list[RatingSystem]:
    return [s for s in registry.SYSTEMS if s.name not in options.skip and s.wanted(options)]


def rate_all(coded: CodedGames, options: RatingOptions) -> tuple[dict, list[str], dict]:
    """Every wanted system's columns, notes and attrs (with ``warnings``), in registry order."""
    columns: dict = {}
    notes: list[str] = []
    attrs: dict = {"systems": [], "warnings": []}
    for system in wanted_systems(options):
        rated = system.rate(coded, options)
        columns.update(rated.columns)
        notes += rated.notes
        attrs["warnings"] += rated.warnings
        attrs.update({k: v for k, v in rated.attrs.items() if k != "warnings"})
        attrs["systems"].append(system.name)
    return columns, notes, attrs


def compute_standings(
    games_df: pd.DataFrame,
    variant: str | None = None,
    anchor: Anchor | str | None = None,
    *,
    first_move: bool = True,
    bootstrap: int = 0,
    seed: int = 0,
    tau: float = 0.0,
    draw_probability: float | None = None,
    sequential_k: float | None = None,
    skip: frozenset[str] | set[str] | tuple[str, ...] = frozenset(),
) -> pd.DataFrame:
    """Standings sorted by maximum-likelihood Elo (one row per bot with rated games).

    Columns: rank, bot, games, wins, draws, losses, points, score (points / games), forfeits,
    then each rating system's columns in registry order: elo, elo_lo, elo_hi (95 % interval),
    elo_se, elo_interval (``covariance`` or ``bootstrap``), ``first_move_elo`` when ``first_move``
    is set; ts_mu, ts_sigma, ts_conservative (mu - 3 sigma) unless ``"trueskill"`` is in
    ``skip``; ``elo_seq`` when ``sequential_k`` is given (order-dependent K-factor Elo).
    ``df.attrs`` holds ``method`` (how the Elo numbers were computed), ``games``, ``variant``,
    ``first_move`` (fitted advantage or None), ``reference``, ``anchored``, ``systems``,
    ``notes`` and ``warnings`` (the notes that qualify these numbers: a regularised fit,
    adjudicated games, self-play left out).
    """
    options = RatingOptions(anchor=as_anchor(anchor), first_move=first_move,
                            bootstrap=bootstrap, seed=seed, tau=tau,
                            draw_probability=draw_probability, sequential_k=sequential_k,
                            skip=frozenset(skip))
    # only the columns read here: selecting a variant of a million games copies less
    needed = [c for c in ("seq", "variant", "first", "second", "result", "reason", "forfeit_by",
                          "game_id", *RATING_ORDER_COLUMNS) if c in games_df.columns]
    selected = select_variant(games_df[needed], variant)
    coded = CodedGames.from_frame(selected)
    names = coded.names
    wins, draws, losses = coded.wdl()
    table = pd.DataFrame({"bot": names, "wins": wins, "draws": draws, "losses": losses})
    table["games"] = table["wins"] + table["draws"] + table["losses"]
    table["points"] = table["wins"] + 0.5 * table["draws"]
    with np.errstate(invalid="ignore", divide="ignore"):
        table["score"] = table["points"] / table["games"]
    forf = forfeits_by_bot(selected)["total"].reindex(names, fill_value=0)
    table["forfeits"] = forf.to_numpy(dtype=np.int64) if len(names) else np.zeros(0, np.int64)
    columns, notes, attrs = rate_all(coded, options)
    about_games: list[str] = []  # notes on the games behind the numbers, not on a system
    if "reason" in selected.columns:
        cut = int((selected["reason"].astype(str) == Reason.ADJUDICATED.value).sum())
        if cut:  # the ratings say how many games adjudication cut short (issue 16)
            about_games.append(f"{cut} game{'s' if cut != 1 else ''} ended early by "
                               "adjudication: the exact solver proved the result, recorded as "
                               "reason 'adjudicated'")
    if coded.void:  # a hand-made file's row without a result was dropped without a word
        about_games.append(f"left out of the ratings: {coded.void} game"
                           f"{'s' if coded.void != 1 else ''} without a result (void: neither "
                           "bot started, or the result is empty)")
    if coded.self_play:
        about_games.append(f"left out of the ratings: {coded.self_play} game"
                           f"{'s' if coded.self_play != 1 else ''} of a bot against itself")
    notes = [*notes, *about_games]
    attrs["warnings"] = [*attrs["warnings"], *about_games]
    for key, values in columns.items():
        table[key] = values
    # Elo to a millionth of a point: ratings equal but for float noise (304.11680473277073 and
    # 304.1168047327707 of two bots with the same results) share a rank, then by name
    table["_level"] = table[SORT_COLUMN].round(6)
    table = table.sort_values(["_level", "score", "bot"], ascending=[False, False, True],
                              kind="stable").reset_index(drop=True)
    tied = table.duplicated(["_level", "score"])  # the same as the row above: its rank
    position = pd.Series(np.arange(1, len(table) + 1), index=table.index)
    table["rank"] = position.where(~tied).ffill().astype(int) if len(table) else position
    table = table.drop(columns="_level")
    table = table[[*BASE_COLUMNS, *columns]]
    attrs.update({"games": len(coded), "variant": variant if variant is not None else ALL,
                  "notes": notes})
    table.attrs.update(attrs)
    return table


def standings_by_variant(games_df: pd.DataFrame, anchor: Anchor | str | None = None,
                         **kwargs) -> dict[str, pd.DataFrame]:
    """``{"all": pooled standings, variant: standings, ...}`` (pooled first).

    The anchor applies to each table whose games include its bot (others use the pool mean).
    """
    out = {ALL: compute_standings(games_df, None, anchor=anchor_if_present(games_df, anchor),
                                  **kwargs)}
    for v in variants_of(games_df):
        part = select_variant(games_df, v)
        out[v] = compute_standings(part, None, anchor=anchor_if_present(part, anchor), **kwargs)
        out[v].attrs["variant"] = v
    return out
