"""Plain facts about the games: first-player advantage, draws, lengths, forfeits, move times."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from arena.ratings.elo import Z95
from arena.ratings.pairs import score_to_elo
from arena.ratings.table import decided
from arena.reasons import FORFEIT_REASONS
from arena.schema import seat_times
from arena.stats import percentile


def variant_facts(games: pd.DataFrame) -> pd.DataFrame:
    """Per variant: games, first-player wins/draws/second-player wins, the first player's score
    with its 95 % margin and as Elo, draw rate, mean and median length (plies), forfeits."""
    cols = ["variant", "games", "first_wins", "draws", "second_wins", "first_score",
            "first_score_margin", "first_elo", "draw_rate", "mean_plies", "median_plies",
            "forfeits"]
    g = decided(games)
    if g.empty:
        return pd.DataFrame(columns=cols)
    if "variant" not in g.columns:
        g = g.assign(variant="")
    rows = []
    for variant, part in g.groupby(g["variant"].fillna("").astype(str), sort=True):
        res = part["result"].to_numpy()
        n = len(res)
        w, d = int((res == 1).sum()), int((res == 0.5).sum())
        lo = n - w - d
        mu = float(res.mean())
        var = float(((res - mu) ** 2).mean())
        margin = Z95 * math.sqrt(var / n) if n else float("nan")
        plies = pd.to_numeric(part["plies"], errors="coerce") if "plies" in part else None
        reasons = part["reason"].astype(str) if "reason" in part else pd.Series(dtype=str)
        rows.append({
            "variant": variant, "games": n, "first_wins": w, "draws": d, "second_wins": lo,
            "first_score": mu, "first_score_margin": margin, "first_elo": score_to_elo(mu),
            "draw_rate": d / n,
            "mean_plies": float(plies.mean()) if plies is not None else float("nan"),
            "median_plies": float(plies.median()) if plies is not None else float("nan"),
            "forfeits": int(reasons.isin(FORFEIT_REASONS).sum()),
        })
    return pd.DataFrame(rows, columns=cols)


def forfeits_by_bot(games: pd.DataFrame) -> pd.DataFrame:
    """Rows = bots, columns = forfeit reasons (+ ``total``): how often each bot forfeited."""
    if "reason" not in games.columns or games.empty:
        return pd.DataFrame(columns=[*FORFEIT_REASONS, "total"])
    mask = games["reason"].isin(FORFEIT_REASONS).to_numpy()  # no copy of a million strings
    f = games.loc[mask]
    reason = f["reason"].astype(str)
    if f.empty:
        return pd.DataFrame(columns=[*FORFEIT_REASONS, "total"])
    if "forfeit_by" in f.columns:
        seat = pd.to_numeric(f["forfeit_by"], errors="coerce")
    else:
        seat = pd.Series(np.nan, index=f.index)
    # no seat recorded: the loser forfeited
    res = pd.to_numeric(f["result"], errors="coerce")
    seat = seat.fillna(res.map({0.0: 1.0, 1.0: 2.0}))
    bot = np.where(seat == 1, f["first"].astype(str), np.where(seat == 2, f["second"].astype(str),
                                                                None))
    frame = pd.DataFrame({"bot": bot, "reason": reason.to_numpy()}).dropna()
    table = pd.crosstab(frame["bot"], frame["reason"])
    for r in FORFEIT_REASONS:
        if r not in table.columns:
            table[r] = 0
    table = table[list(FORFEIT_REASONS)]
    table["total"] = table.sum(axis=1)
    table.index.name = "bot"
    return table


def move_times(games: pd.DataFrame, column: str = "move_ms") -> dict[str, np.ndarray]:
    """Per bot: all its move times in ms (seat 1 plays plies 1, 3, ...; seat 2 plies 2, 4, ...),
    its own moves only (not the opening's)."""
    out: dict[str, list] = {}
    if column not in games.columns:
        return {}
    openings = games["opening"] if "opening" in games.columns else [""] * len(games)
    for first, second, raw, opening in zip(games["first"].astype(str),
                                           games["second"].astype(str), games[column], openings,
                                           strict=True):
        out.setdefault(first, []).extend(seat_times(raw, 1, opening))
        out.setdefault(second, []).extend(seat_times(raw, 2, opening))
    return {bot: np.array(vals, dtype=float) for bot, vals in out.items() if vals}


def bot_facts(games: pd.DataFrame) -> pd.DataFrame:
    """Per bot: forfeits by reason and move-time percentiles (ms: p50, p90, p99, max, mean)."""
    forf = forfeits_by_bot(games)
    times = move_times(games)
    bots = sorted(set(games["first"].astype(str)) | set(games["second"].astype(str)))
    rows = []
    for bot in bots:
        row: dict[str, object] = {"bot": bot}
        for r in (*FORFEIT_REASONS, "total"):
            row[f"forfeit_{r}" if r != "total" else "forfeits"] = (
                int(forf.loc[bot, r]) if bot in forf.index else 0)
        t = times.get(bot)
        row["moves_timed"] = 0 if t is None else len(t)
        values = t.tolist() if t is not None else []
        for name, q in (("ms_p50", 50), ("ms_p90", 90), ("ms_p99", 99)):  # the one rule
            p = percentile(values, q)
            row[name] = float(p) if p is not None else float("nan")
        row["ms_max"] = float(t.max()) if t is not None else float("nan")
        row["ms_mean"] = float(t.mean()) if t is not None else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)
