"""Standings tables: one per variant and one pooled over all variants."""

from __future__ import annotations

import numpy as np
import pandas as pd

from arena.ratings.elo import count_games, fit_elo, sequential_elo
from arena.ratings.facts import forfeits_by_bot
from arena.ratings.pairs import pairwise_table  # noqa: F401  (re-exported for callers)
from arena.ratings.trueskill_ratings import trueskill_ratings

ALL = "all"
STANDINGS_COLUMNS = [
    "rank", "bot", "games", "wins", "draws", "losses", "points", "score", "elo", "elo_lo",
    "elo_hi", "elo_se", "ts_mu", "ts_sigma", "ts_conservative", "forfeits",
]


def variants_of(games: pd.DataFrame) -> list[str]:
    if "variant" not in games.columns:
        return []
    return sorted(games["variant"].dropna().astype(str).unique())


def select_variant(games: pd.DataFrame, variant: str | None) -> pd.DataFrame:
    """Games of one variant; ``None`` or ``"all"`` = every game (pooled).

    ``variant`` may be the canonical spec stored in the table or anything
    ``arena.game.parse_variant`` understands (a preset name, say). Raises ValueError naming the
    variants present when there is no such variant.
    """
    if variant is None or variant == ALL:
        return games
    present = variants_of(games)
    if variant in present:
        return games.loc[games["variant"].astype(str) == variant]
    try:  # a preset name or a non-canonical spelling
        from arena.game import parse_variant

        canonical = parse_variant(variant).spec
    except Exception:  # noqa: BLE001 - engine missing or spec invalid: fall through
        canonical = None
    if canonical is not None and canonical in present:
        return games.loc[games["variant"].astype(str) == canonical]
    shown = ", ".join(present[:10]) if present else "(the games have no variant column)"
    raise ValueError(f"no games of variant {variant!r}; variants present: {shown}")


def parse_anchor(text: str) -> tuple[str, float]:
    """``"BOT=ELO"`` -> ``("BOT", ELO)``; ValueError otherwise."""
    bot, sep, value = text.rpartition("=")
    if not sep or not bot.strip():
        raise ValueError(f"anchor must be BOT=ELO, got {text!r}")
    return bot.strip(), float(value)


def _rated(games: pd.DataFrame) -> pd.DataFrame:
    res = pd.to_numeric(games["result"], errors="coerce")
    keep = res.notna() & (games["first"].astype(str) != games["second"].astype(str))
    return games.loc[keep].assign(result=res[keep].astype(float))


def _per_bot_wdl(games: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    idx = {b: k for k, b in enumerate(names)}
    n = len(names)
    i = games["first"].astype(str).map(idx).to_numpy(dtype=np.int64)
    j = games["second"].astype(str).map(idx).to_numpy(dtype=np.int64)
    r = games["result"].to_numpy(dtype=float)
    wins = np.bincount(i, r == 1.0, n) + np.bincount(j, r == 0.0, n)
    draws = np.bincount(i, r == 0.5, n) + np.bincount(j, r == 0.5, n)
    losses = np.bincount(i, r == 0.0, n) + np.bincount(j, r == 1.0, n)
    return pd.DataFrame({"bot": names, "wins": wins.astype(int), "draws": draws.astype(int),
                         "losses": losses.astype(int)})


def compute_standings(
    games_df: pd.DataFrame,
    variant: str | None = None,
    anchor: tuple[str, float] | str | None = None,
    *,
    first_move: bool = False,
    bootstrap: int = 0,
    seed: int = 0,
    tau: float = 0.0,
    draw_probability: float | None = None,
    sequential_k: float | None = None,
) -> pd.DataFrame:
    """Standings sorted by maximum-likelihood Elo (one row per bot with rated games).

    Columns: rank, bot, games, wins, draws, losses, points, score (points / games), elo, elo_lo,
    elo_hi (95 % interval), elo_se, ts_mu, ts_sigma, ts_conservative (mu - 3 sigma), forfeits,
    elo_interval (how the interval was computed: ``covariance`` or ``bootstrap``),
    ``first_move_elo`` (the fitted first-move advantage) when ``first_move`` is set, and
    ``elo_seq`` when ``sequential_k`` is given (order-dependent K-factor Elo).
    ``df.attrs`` holds ``method`` (how the numbers were computed), ``games``, ``variant``,
    ``first_move`` (fitted advantage or None) and ``notes``.
    """
    if isinstance(anchor, str):
        anchor = parse_anchor(anchor)
    selected = select_variant(games_df, variant)
    g = _rated(selected)
    counts = count_games(g)
    names = counts.names
    fit = fit_elo(counts, anchor=anchor, first_move=first_move, bootstrap=bootstrap, seed=seed)
    table = _per_bot_wdl(g, names)
    table["games"] = table["wins"] + table["draws"] + table["losses"]
    table["points"] = table["wins"] + 0.5 * table["draws"]
    with np.errstate(invalid="ignore", divide="ignore"):
        table["score"] = table["points"] / table["games"]
    table["elo"] = fit.elo
    table["elo_lo"] = fit.lo
    table["elo_hi"] = fit.hi
    table["elo_se"] = fit.se
    ts = trueskill_ratings(g, tau=tau, draw_probability=draw_probability, names=names)
    table["ts_mu"] = ts.mu
    table["ts_sigma"] = ts.sigma
    table["ts_conservative"] = ts.conservative
    forf = forfeits_by_bot(selected)
    table["forfeits"] = [int(forf.loc[b, "total"]) if b in forf.index else 0 for b in names]
    # Say in every output (csv and json too, not only the table notes) how the intervals were
    # computed, and the fitted first-move advantage when it was asked for.
    table["elo_interval"] = "bootstrap" if fit.interval.startswith("bootstrap") else "covariance"
    columns = [*STANDINGS_COLUMNS, "elo_interval"]
    if first_move:
        table["first_move_elo"] = fit.first_move
        columns.append("first_move_elo")
    if sequential_k is not None:
        seq = sequential_elo(g, k=sequential_k, names=names)
        table["elo_seq"] = seq.elo
        columns.append("elo_seq")
    table = table.sort_values(["elo", "score", "bot"], ascending=[False, False, True],
                              kind="stable").reset_index(drop=True)
    table["rank"] = np.arange(1, len(table) + 1)
    table = table[columns]
    notes = [fit.describe(),
             f"TrueSkill: trueskill package, games in order, tau={ts.tau:g}, "
             f"draw probability {ts.draw_probability:.3f}, conservative = mu - 3 sigma."]
    if sequential_k is not None:
        notes.append(f"elo_seq: sequential Elo with K={sequential_k:g}; it depends on the order "
                     "of the games.")
    table.attrs.update({
        "method": fit.describe(), "games": counts.total_games(),
        "variant": variant if variant is not None else ALL,
        "first_move": fit.first_move, "first_move_se": fit.first_move_se,
        "regularised": fit.regularised, "interval": fit.interval, "notes": notes,
    })
    return table


def standings_by_variant(games_df: pd.DataFrame, anchor: tuple[str, float] | str | None = None,
                         **kwargs) -> dict[str, pd.DataFrame]:
    """``{"all": pooled standings, variant: standings, ...}`` (pooled first)."""
    out = {ALL: compute_standings(games_df, None, anchor=_anchor_if_present(games_df, anchor),
                                  **kwargs)}
    for v in variants_of(games_df):
        part = select_variant(games_df, v)
        out[v] = compute_standings(part, None, anchor=_anchor_if_present(part, anchor), **kwargs)
        out[v].attrs["variant"] = v
    return out


def _anchor_if_present(games: pd.DataFrame, anchor):
    if anchor is None:
        return None
    if isinstance(anchor, str):
        anchor = parse_anchor(anchor)
    rated = _rated(games)
    bots = set(rated["first"].astype(str)) | set(rated["second"].astype(str))
    return anchor if anchor[0] in bots else None
