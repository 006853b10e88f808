"""Charts: titles inside the figure, cells and colour bars on one scale, filtered plots apart."""

from __future__ import annotations

import numpy as np
import pandas as pd
from click.testing import CliRunner
from matplotlib.figure import Figure

from arena.cli import main
from arena.ratings.standings import compute_standings
from arena.reports.plots import plot_head_to_head, plot_ratings, plot_variant_scores

LONG = ["a-very-long-bot-name-01", "another-long-bot-name-2", "x"]


def games_of(bots: list[str], variants=("classic", "popout"), rounds: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    rows = []
    for v in variants:
        for _ in range(rounds):
            for a in bots:
                for b in bots:
                    if a != b:
                        rows.append({"variant": v, "first": a, "second": b,
                                     "result": float(rng.choice([0.0, 0.5, 1.0]))})
    return pd.DataFrame(rows)


def inside_figure(fig: Figure) -> None:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    for ax in fig.axes:
        title = ax.title.get_window_extent(renderer)
        if ax.get_title():
            assert 0 <= title.x0 and title.x1 <= width and title.y1 <= height, ax.get_title()


def colorbar_limits(fig: Figure) -> tuple[float, float]:
    cbar_ax = fig.axes[1]
    return cbar_ax.get_ylim()


def cell_values(fig: Figure) -> list[float]:
    texts = [t.get_text().split("\n")[0] for t in fig.axes[0].texts]
    return [float(t.rstrip("%")) for t in texts if t]


def test_head_to_head_title_fits_and_cells_share_the_colour_bar_scale():
    for bots in (LONG, ["a", "b"], [f"bot{k}" for k in range(8)]):
        fig = plot_head_to_head(games_of(bots), bots)
        inside_figure(fig)
        assert colorbar_limits(fig) == (0.0, 100.0)
        values = cell_values(fig)
        assert values and all(0 <= v <= 100 for v in values)
        assert all(t.get_text().split("\n")[0].endswith("%") for t in fig.axes[0].texts)
        ticks = [t.get_text() for t in fig.axes[1].get_yticklabels()]
        assert ticks == ["0%", "25%", "50%", "75%", "100%"]


def test_variant_scores_cells_and_colour_bar_in_percent():
    fig = plot_variant_scores(games_of(LONG), LONG)
    inside_figure(fig)
    assert colorbar_limits(fig) == (0.0, 100.0)
    assert [t.get_text() for t in fig.axes[1].get_yticklabels()][-1] == "100%"


def test_anchored_rating_labels_have_no_plus_sign():
    games = games_of(["a", "b", "c"])
    mean0 = plot_ratings(compute_standings(games))
    assert any(t.get_text().startswith(("+", "-")) for t in mean0.axes[0].texts)
    anchored = plot_ratings(compute_standings(games, anchor=("a", 1500.0)))
    labels = [t.get_text() for t in anchored.axes[0].texts]
    assert labels and not any(label.startswith("+") for label in labels)


def test_plot_of_one_variant_keeps_the_all_variant_plots(tmp_path):
    path = tmp_path / "games.csv"
    games_of(["a", "b", "c"]).to_csv(path, index=False)
    runner = CliRunner()
    res = runner.invoke(main, ["plot", str(path)])
    assert res.exit_code == 0, res.output
    plots = tmp_path / "games_plots"
    before = {p.name: p.read_bytes() for p in plots.glob("*.svg")}
    assert "variant_scores.svg" in before
    res = runner.invoke(main, ["plot", str(path), "--variant", "popout"])
    assert res.exit_code == 0, res.output
    after = {p.name: p.read_bytes() for p in plots.glob("*.svg")}
    assert after == before  # the all-variant plots are untouched
    folder = plots / "variant-popout"
    assert (folder / "ratings.svg").exists() and str(folder) in res.output
    again = runner.invoke(main, ["plot", str(path), "--variant", "popout:7x6"])
    assert again.exit_code == 0 and str(folder / "ratings.png") in again.output


def test_a_name_the_font_cannot_draw_warns_nothing(tmp_path):
    import warnings

    import pandas as pd

    from arena.reports.plots import write_plots

    games = pd.DataFrame({"first": ["🤖", "B"], "second": ["B", "🤖"], "result": [1.0, 0.5]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        write_plots(games, tmp_path, formats=("png",))
    assert not [w for w in caught if "missing from" in str(w.message)]


def test_a_name_with_dollar_signs_is_text_not_math(tmp_path):
    import pandas as pd

    from arena.reports.plots import write_plots

    odd = "x$\\frac{$"
    games = pd.DataFrame({"first": [odd, "B"], "second": ["B", odd], "result": [1.0, 0.5]})
    assert write_plots(games, tmp_path, formats=("svg",))  # raised ValueError: \frac{
    assert odd in (tmp_path / "ratings.svg").read_text()  # drawn as written


def test_long_names_that_share_a_prefix_stay_apart_on_every_chart():
    """Names cut at the end read alike (`random-bot-with-a-rea…` ten times: new-user review):
    cut in the middle, numbered when that is not enough."""
    from arena.reports.plots import _short_labels

    bots = [f"random-bot-with-a-really-long-name-{k}" for k in range(10)]
    games = games_of(bots, variants=("classic",), rounds=1)
    head = plot_head_to_head(games, bots)
    labels = [tick.get_text() for tick in head.axes[0].get_yticklabels()]
    assert len(set(labels)) == 10 and all(len(label) <= 22 for label in labels), labels
    ratings = plot_ratings(compute_standings(games))
    labels = [tick.get_text() for tick in ratings.axes[0].get_yticklabels()]
    assert len(set(labels)) == 10, labels
    # alike even when cut in the middle: numbered, within the width
    twins = ["abcdefghijklmnop-middle-one-abcdefghijklmnop", "abcdefghijklmnop-middle-two-abcdefghijklmnop"]
    short = _short_labels(twins, 22)
    assert len(set(short)) == 2 and all(len(label) <= 22 for label in short), short
    assert _short_labels(["x", "y"]) == ["x", "y"]


def test_a_rating_of_zero_reads_zero_on_the_chart_and_in_the_notes():
    """A rating of exactly 0 read `-0` on the chart and a first-move advantage `-0.0` (new-user
    review): one formatter, `system.format_number`, for tables, charts and notes."""
    from arena.ratings.system import format_number

    assert format_number(-0.0, 0, True) == "+0" and format_number(-0.04, 1, True) == "+0.0"
    assert format_number(-0.4, 0) == "0" and format_number(float("nan")) == "-"
    even = pd.DataFrame([{"variant": "classic", "first": a, "second": b, "result": r}
                         for a, b, r in (("a", "b", 1.0), ("b", "a", 1.0), ("a", "b", 0.0),
                                         ("b", "a", 0.0))])
    standings = compute_standings(even)
    labels = [t.get_text() for t in plot_ratings(standings).axes[0].texts]
    assert labels == ["+0", "+0"], labels
    assert "-0" not in " ".join(standings.attrs.get("notes", [])) + str(standings.attrs)


def test_move_time_title_and_variant_labels_stay_readable_beside_long_names():
    # the move-time title ran off the right edge, and three variants' labels ran together as
    # one word ("classicpopout") beside long names (site review)
    from arena.reports.plots import plot_move_times

    for bots in (LONG, ["W" * 64, "b"], ["a", "b"]):
        games = games_of(bots).assign(move_ms="[5, 12, 30, 7, 250]")
        fig = plot_move_times(games, bots)
        inside_figure(fig)
        right = fig.axes[0].title.get_window_extent(fig.canvas.get_renderer()).x1
        assert right <= 0.98 * fig.bbox.width  # not at the very edge, where a saved file cuts
        fig = plot_variant_scores(games_of(bots, ("classic", "popout", "five")), bots)
        assert {t.get_rotation() for t in fig.axes[0].get_xticklabels()} == {30.0}
    level = plot_variant_scores(games_of(LONG, ("classic", "popout")), LONG)
    assert {t.get_rotation() for t in level.axes[0].get_xticklabels()} == {0.0}
