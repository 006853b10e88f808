"""Charts of a games table, written as PNG and SVG.

Matplotlib is used through the object API with the Agg canvas only (no pyplot, no global backend
switch), so plotting is safe inside other programs and headless machines. Every chart has a title,
labelled axes and bot names sized to stay legible with 20+ bots (horizontal layouts, figure height
growing with the number of bots).
"""

from __future__ import annotations

import textwrap
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator

from arena.ratings.elo import elo_history
from arena.ratings.facts import move_times, variant_facts
from arena.ratings.pairs import score_matrix
from arena.ratings.standings import compute_standings
from arena.ratings.system import format_number
from arena.ratings.table import select_variant, variants_of
from arena.stats import percentile

FORMATS = ("png", "svg")
DPI = 150
STYLE = {
    "font.size": 10,
    "axes.titlesize": 12,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "svg.fonttype": "none",  # text stays text in SVG: smaller, searchable
    # labels are bot names, plain text: `$...$` in a name was parsed as math and `x$\frac{$`
    # broke every chart, and `arena publish` with them
    "text.parse_math": False,
}
ACCENT = "#1f5fa8"


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Figure, out_dir: Path, stem: str, formats: Sequence[str]) -> list[Path]:
    paths = []
    for fmt in formats:
        path = out_dir / f"{stem}.{fmt}"
        with warnings.catch_warnings():
            # a bot named with an emoji: the font draws a box, and matplotlib warned once per
            # label and chart, burying the run's own output
            warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from", category=UserWarning)
            fig.savefig(path, dpi=DPI if fmt == "png" else None, format=fmt)
        # the constrained layout is about half of a save; the first save placed everything, so
        # the other formats keep that placement (it differs only in fractions of a point)
        fig.set_layout_engine("none")
        paths.append(path)
    return paths


def _short(name: str, width: int = 28) -> str:
    """`name` in at most `width` characters, cut in the middle: names often share a long
    prefix and differ at the end (`random-bot-with-a-long-name-1`, `...-2`)."""
    if len(name) <= width:
        return name
    tail = (width - 1) // 2
    return name[: width - 1 - tail] + "…" + name[len(name) - tail:]


def _short_labels(names: Sequence[str], width: int = 28) -> list[str]:
    """Each name shortened by `_short`, numbered where two would still read alike (names cut
    at the end read the same on every chart: new-user review)."""
    labels = [_short(name, width) for name in names]
    seen: dict[str, int] = {}
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
    counter: dict[str, int] = {}
    for k, label in enumerate(labels):
        if seen[label] > 1:
            counter[label] = counter.get(label, 0) + 1
            mark = f" #{counter[label]}"
            labels[k] = _short(names[k], width - len(mark)) + mark
    return labels


def _wrap_variant(spec: str, width: int = 16) -> str:
    """Break a variant spec at its commas (then anywhere) to fit ``width`` characters a line."""
    if len(spec) <= width:
        return spec
    lines = []
    for part in spec.split(","):
        lines += textwrap.wrap(part, width) or [""]
    return ",\n".join(lines)


def _score_cmap():
    import matplotlib

    return matplotlib.colormaps["RdBu"].with_extremes(bad="#eeeeee")


def _score_norm() -> TwoSlopeNorm:
    """Scores in percent, white at 50 %: the cells' text and the colour bar share this scale."""
    return TwoSlopeNorm(vmin=0.0, vcenter=50.0, vmax=100.0)


def _percent_colorbar(fig: Figure, im, ax, shrink: float, label: str) -> None:
    cbar = fig.colorbar(im, ax=ax, shrink=shrink, ticks=[0, 25, 50, 75, 100])
    cbar.ax.yaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:.0f}%"))
    cbar.set_label(label)


def _fitted_title(ax, title: str, fig_width: float) -> None:
    """A title wrapped to the figure's width: bold 12 pt is about 9 characters an inch, and the
    axes get the width less about 1.8 inch of labels and colour bar."""
    chars = max(16, int((fig_width - 1.8) * 9))
    ax.set_title(textwrap.fill(title, chars, break_long_words=False))


def _label_size(n: int) -> float:
    return 10 if n <= 12 else 9 if n <= 24 else 8 if n <= 40 else 6.5


# ---------------------------------------------------------------------------------------------
# Individual charts: each draws into a new Figure or returns None when there is nothing to show
# ---------------------------------------------------------------------------------------------


def plot_ratings(standings: pd.DataFrame) -> Figure | None:
    """Horizontal Elo ratings with 95 % intervals, best at the top."""
    if standings.empty:
        return None
    t = standings.sort_values("elo", ascending=True)
    n = len(t)
    fig = _figure(9.0, 1.6 + 0.34 * n)
    ax = fig.add_subplot()
    y = np.arange(n)
    elo = t["elo"].to_numpy(dtype=float)
    lo = t["elo_lo"].to_numpy(dtype=float)
    hi = t["elo_hi"].to_numpy(dtype=float)
    ax.hlines(y, lo, hi, color=ACCENT, alpha=0.55, linewidth=3.5, zorder=2)
    ax.plot(elo, y, "o", color=ACCENT, markersize=6, zorder=3)
    ax.axvline(0 if standings.attrs.get("method", "").find("mean 0") >= 0 else np.nan,
               color="0.4", linewidth=0.8, linestyle="--", zorder=1)
    ax.set_yticks(y, _short_labels(list(t["bot"])), fontsize=_label_size(n))
    ax.grid(axis="y", visible=False)
    span = float(np.nanmax(hi) - np.nanmin(lo)) if n else 1.0
    span = span if span > 0 else 1.0
    signed = not standings.attrs.get("anchored")  # anchored ratings are absolute
    for yy, e, h in zip(y, elo, hi, strict=True):
        ax.text(h + 0.015 * span, yy, format_number(e, 0, signed), va="center", fontsize=8,
                color="0.25")
    ax.set_xlim(float(np.nanmin(lo)) - 0.05 * span, float(np.nanmax(hi)) + 0.12 * span)
    ax.set_ylim(-0.7, n - 0.3)
    ref = "relative to the pool mean" if "mean 0" in standings.attrs.get("method", "") else (
        "anchored")
    ax.set_xlabel(f"Elo ({ref}); bar = 95% interval")
    games = standings.attrs.get("games", int(standings["games"].sum() // 2))
    ax.set_title(f"Elo ratings by maximum likelihood ({games:,} games)")
    interval = standings.attrs.get("interval", "covariance")
    how = "covariance (inverse Fisher information)" if interval == "covariance" else "bootstrap"
    fig.text(0.01, 0.0, f"95% intervals from {how}", fontsize=7, color="0.4", ha="left",
             va="bottom")
    return fig


def _spread_labels(values: list[float], min_gap: float) -> list[float]:
    """Move label positions apart by at least ``min_gap`` while keeping their order."""
    order = np.argsort(values)
    pos = np.array(values, dtype=float)[order]
    for _ in range(200):
        moved = False
        for k in range(1, len(pos)):
            gap = pos[k] - pos[k - 1]
            if gap < min_gap:
                shift = (min_gap - gap) / 2
                pos[k - 1] -= shift
                pos[k] += shift
                moved = True
        if not moved:
            break
    out = np.empty_like(pos)
    out[order] = pos
    return out.tolist()


def plot_progress(games: pd.DataFrame, order: Sequence[str], points: int = 30) -> Figure | None:
    """Maximum-likelihood Elo refitted after every ~1/points of the tournament."""
    hist = elo_history(games, points=points)
    if hist.empty or hist["games"].nunique() < 2:
        return None
    n = len(order)
    fig = _figure(11.0, max(4.5, 1.5 + 0.28 * n))
    ax = fig.add_subplot()
    colors = _palette(n)
    ends = []
    names = dict(zip(order, _short_labels(list(order), 22), strict=True))
    for k, bot in enumerate(order):
        h = hist.loc[hist["bot"] == bot]
        if h.empty:
            continue
        ax.plot(h["games"], h["elo"], color=colors[k], linewidth=1.6, marker="o",
                markersize=2.5)
        ends.append((bot, float(h["games"].iloc[-1]), float(h["elo"].iloc[-1]), colors[k]))
    lo, hi = ax.get_ylim()
    ylabels = _spread_labels([e for _, _, e, _ in ends], (hi - lo) / max(30.0, 2.2 * n))
    xmax = float(hist["games"].max())
    for (bot, x, e, color), yl in zip(ends, ylabels, strict=True):
        ax.annotate(names[bot], xy=(x, e), xytext=(xmax * 1.02, yl), color=color,
                    fontsize=_label_size(n), va="center", annotation_clip=False,
                    arrowprops={"arrowstyle": "-", "color": color, "alpha": 0.4,
                                "linewidth": 0.6})
    ax.set_xlim(0, xmax * 1.01)
    ax.set_xlabel("games played")
    ax.set_ylabel("Elo (maximum likelihood on the games so far)")
    ax.set_title("Ratings over the course of the tournament")
    return fig


def _palette(n: int) -> list:
    import matplotlib

    if n <= 10:
        cmap = matplotlib.colormaps["tab10"]
        return [cmap(k) for k in range(n)]
    if n <= 20:
        cmap = matplotlib.colormaps["tab20"]
        return [cmap(k) for k in range(n)]
    cmap = matplotlib.colormaps["turbo"]
    return [cmap(x) for x in np.linspace(0.05, 0.95, n)]


def plot_head_to_head(games: pd.DataFrame, order: Sequence[str]) -> Figure | None:
    """Heatmap of the score of each row bot against each column bot."""
    n = len(order)
    if n < 2:
        return None
    mat = score_matrix(games, names=list(order))
    counts = mat.attrs["games"]
    size = min(max(5.0, 2.2 + 0.42 * n), 30.0)
    fig = _figure(size + 1.2, size)
    ax = fig.add_subplot()
    data = np.ma.masked_invalid(100.0 * mat.to_numpy(dtype=float))  # percent, as the cells
    im = ax.imshow(data, cmap=_score_cmap(), norm=_score_norm(), aspect="equal")
    labels = _short_labels(list(order), 22)
    fs = _label_size(n)
    ax.set_xticks(np.arange(n), labels, rotation=45, ha="right", rotation_mode="anchor",
                  fontsize=fs)
    ax.set_yticks(np.arange(n), labels, fontsize=fs)
    ax.grid(False)
    ax.set_xticks(np.arange(-0.5, n, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, n, 1), minor=True)
    ax.grid(which="minor", color="white", linewidth=1.0)
    ax.tick_params(which="minor", length=0)
    if n <= 24:
        for r in range(n):
            for c in range(n):
                v = mat.iat[r, c]
                if not np.isnan(v):
                    color = "white" if abs(v - 0.5) > 0.3 else "black"
                    text = f"{100 * v:.0f}%"
                    if n <= 12:
                        text += f"\n({int(counts.iat[r, c])})"
                    ax.text(c, r, text, ha="center", va="center", fontsize=max(6, fs - 2),
                            color=color)
    ax.set_xlabel("opponent")
    ax.set_ylabel("bot")
    note = " (games in brackets)" if n <= 12 else ""
    _fitted_title(ax, f"Head to head: score of the row bot{note}", size + 1.2)
    _percent_colorbar(fig, im, ax, 0.7, "score of the row bot against the column bot")
    return fig


def plot_variant_scores(games: pd.DataFrame, order: Sequence[str]) -> Figure | None:
    """Heatmap bot x variant of each bot's score (%), bots in overall rating order."""
    variants = variants_of(games)
    variants = [v for v in variants if v != ""] or []
    if not variants or not order:
        return None
    n, m = len(order), len(variants)
    data = np.full((n, m), np.nan)
    games_n = np.zeros((n, m), dtype=int)
    index = {b: k for k, b in enumerate(order)}
    for c, v in enumerate(variants):
        part = select_variant(games, v)
        res = pd.to_numeric(part["result"], errors="coerce")
        part = part.loc[res.notna()].assign(result=res[res.notna()])
        pts = pd.concat([
            pd.DataFrame({"bot": part["first"].astype(str), "p": part["result"]}),
            pd.DataFrame({"bot": part["second"].astype(str), "p": 1.0 - part["result"]}),
        ]).groupby("bot")["p"].agg(["sum", "count"])
        for bot, row in pts.iterrows():
            if bot in index:
                data[index[bot], c] = row["sum"] / row["count"]
                games_n[index[bot], c] = int(row["count"])
    fig = _figure(max(6.0, 3.2 + 1.1 * m), 1.8 + 0.34 * n)
    ax = fig.add_subplot()
    im = ax.imshow(np.ma.masked_invalid(100.0 * data), cmap=_score_cmap(), norm=_score_norm(),
                   aspect="auto")
    fs = _label_size(n)
    ax.set_yticks(np.arange(n), _short_labels(list(order)), fontsize=fs)
    # slanted from three on: level, `classic` and `popout` ran together as one word beside
    # long bot names, which narrow the cells (site review)
    ax.set_xticks(np.arange(m), [_wrap_variant(v) for v in variants],
                  fontsize=9, rotation=0 if m <= 2 else 30, ha="center" if m <= 2 else "right")
    ax.grid(False)
    for r in range(n):
        for c in range(m):
            if not np.isnan(data[r, c]):
                color = "white" if abs(data[r, c] - 0.5) > 0.3 else "black"
                ax.text(c, r, f"{100 * data[r, c]:.0f}%", ha="center", va="center",
                        fontsize=max(6, fs - 1), color=color)
    ax.set_xlabel("variant")
    ax.set_ylabel("bot (best overall at the top)")
    _fitted_title(ax, "Score per variant", max(6.0, 3.2 + 1.1 * m))
    _percent_colorbar(fig, im, ax, 0.8, "score: (wins + draws/2) / games")
    return fig


def plot_first_player(games: pd.DataFrame) -> Figure | None:
    """Per variant: share of first-player wins, draws and second-player wins, with the first
    player's score and its 95 % margin."""
    facts = variant_facts(games)
    if facts.empty:
        return None
    m = len(facts)
    fig = _figure(10.0, 1.8 + 0.55 * m)
    ax = fig.add_subplot()
    y = np.arange(m)[::-1]
    n = facts["games"].to_numpy(dtype=float)
    fw = facts["first_wins"].to_numpy() / n
    dr = facts["draws"].to_numpy() / n
    sw = facts["second_wins"].to_numpy() / n
    ax.barh(y, fw, color="#2b7bba", label="first player wins", height=0.6)
    ax.barh(y, dr, left=fw, color="#bdbdbd", label="draws", height=0.6)
    ax.barh(y, sw, left=fw + dr, color="#d7301f", label="second player wins", height=0.6)
    score = facts["first_score"].to_numpy(dtype=float)
    margin = facts["first_score_margin"].to_numpy(dtype=float)
    ax.errorbar(score, y, xerr=margin, fmt="D", color="black", markersize=5, capsize=3,
                label="first player's score (95%)")
    ax.axvline(0.5, color="black", linewidth=0.8, linestyle="--")
    labels = []
    for v, g, s in zip(facts["variant"], facts["games"], score, strict=True):
        name = _wrap_variant(v, 26) or "(no variant)"
        labels.append(f"{name}\n{g:,} games, score {100 * s:.1f}%")
    ax.set_yticks(y, labels, fontsize=9)
    ax.grid(axis="y", visible=False)
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(lambda x, _pos: f"{100 * x:.0f}%")
    ax.set_xlabel("share of games")
    ax.set_title("First-player advantage per variant")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.25 / max(m, 1)), ncol=4,
              frameon=False, fontsize=8)
    return fig


def _horizontal() -> dict:
    import matplotlib

    major, minor = (int(x) for x in matplotlib.__version__.split(".")[:2])
    return {"orientation": "horizontal"} if (major, minor) >= (3, 10) else {"vert": False}


def plot_move_times(games: pd.DataFrame, order: Sequence[str]) -> Figure | None:
    """Distribution of wall-clock time per move for each bot (box 25-75 %, whiskers 5-95 %)."""
    times = move_times(games)
    bots = [b for b in order if b in times] + sorted(set(times) - set(order))
    if not bots:
        return None
    bots = sorted(bots, key=lambda b: float(np.median(times[b])))  # fastest at the bottom
    n = len(bots)
    fig = _figure(9.5, 1.6 + 0.34 * n)
    ax = fig.add_subplot()
    data = [np.clip(times[b], 0.01, None) for b in bots]
    ax.boxplot(data, **_horizontal(), whis=(5, 95), showfliers=False, widths=0.6, patch_artist=True,
               boxprops={"facecolor": "#c6dbef", "edgecolor": ACCENT},
               medianprops={"color": "#08306b", "linewidth": 1.6},
               whiskerprops={"color": ACCENT}, capprops={"color": ACCENT})
    p99 = [float(percentile(d.tolist(), 99)) for d in data]  # the one percentile rule
    ax.plot(p99, np.arange(1, n + 1), "|", color="#d7301f", markersize=9)
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_minor_locator(LogLocator(base=10, subs=np.arange(1, 10) * 1.0))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:g}"))
    labels = _short_labels(list(bots))
    ax.set_yticks(np.arange(1, n + 1), labels, fontsize=_label_size(n))
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("wall-clock time per move (ms, log scale)")
    # long bot names narrow the axes the title is centred on: it ran off the edge (site review)
    label_inches = max(len(label) for label in labels) * _label_size(n) * 0.6 / 72
    _fitted_title(ax, "Move time per bot (box 25-75%, whiskers 5-95%, red tick 99%)",
                  9.5 - max(0.0, label_inches - 1.0))
    return fig


# ---------------------------------------------------------------------------------------------


def write_plots(games_df: pd.DataFrame, out_dir: str | Path,
                anchor: tuple[str, float] | None = None,
                formats: Sequence[str] = FORMATS,
                standings: pd.DataFrame | None = None) -> list[Path]:
    """Write every chart that the data allows as PNG and SVG; returns the files written.

    Charts: ``ratings``, ``rating_progress``, ``head_to_head``, ``variant_scores``,
    ``first_player`` and ``move_times`` (the last only when move times were recorded).
    """
    out = Path(out_dir)
    if not pd.to_numeric(games_df["result"], errors="coerce").notna().any():
        return []  # no rated games (none at all, or only void ones): nothing to draw
    out.mkdir(parents=True, exist_ok=True)
    if standings is None:
        standings = compute_standings(games_df, anchor=anchor)
    order = list(standings["bot"])
    jobs: list[tuple[str, Callable[[], Figure | None]]] = [
        ("ratings", lambda: plot_ratings(standings)),
        ("rating_progress", lambda: plot_progress(games_df, order)),
        ("head_to_head", lambda: plot_head_to_head(games_df, order)),
        ("variant_scores", lambda: plot_variant_scores(games_df, order)),
        ("first_player", lambda: plot_first_player(games_df)),
        ("move_times", lambda: plot_move_times(games_df, order)),
    ]
    import matplotlib

    written: list[Path] = []
    with matplotlib.rc_context(STYLE):
        for stem, make in jobs:
            fig = make()
            if fig is None:
                continue
            written += _save(fig, out, stem, formats)
    return written

