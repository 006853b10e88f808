"""Build the static leaderboard site of a results directory: compute, then write every file.

The site is plain files: HTML pages rendered with jinja2, one stylesheet and two small scripts, the
plots of `arena plot`, and CSV / JSON / Markdown downloads. Every piece of data the pages need is
inside the pages themselves (replay frames as inline JSON), so the site opens from disk (file://)
and from any static host, offline.

The parts: `load` reads the input, `context` says what each page shows (pure), `accuracy` what
they show of `arena analyze` when analysis.db is beside the games (pure), `filters` formats
numbers in the templates, `swap` puts the finished folder in place; this module ties them
together and writes the files.

Page map (relative to the output directory)::

    index.html            leaderboard (overall + one tab per variant; accuracy after `arena analyze`),
                          tournament settings, downloads
    crosstable.html       head-to-head scores with LOS, per variant
    plots.html            the charts of `arena plot`
    games.html            filterable list of every game
    games/<id>.html       replay viewer of one game (games whose variant is recorded)
    bots/<name>.html      one bot: results by opponent and variant, move times, forfeits + stderr
    leaderboard.md        Markdown leaderboard for a README or a forum post
    data/*.csv, *.json    games, standings and head-to-head tables
    plots/*.png, *.svg    the charts
    static/               style.css, site.js, replay.js
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd

from arena import __version__
from arena.clock import utc_now_iso
from arena.game import parse_variant
from arena.publish import accuracy, context
from arena.publish.context import ALL
from arena.publish.filters import FILTERS
from arena.publish.load import (
    PublishError,
    SiteInput,
    clean_games,
    forfeit_logs,
    load_results,
    publish_logs_setting,
)
from arena.publish.replay import add_position_texts, board_svg, frames_json, replay_frames
from arena.publish.swap import build_and_swap
from arena.ratings.pairs import pairwise_table
from arena.ratings.standings import compute_standings
from arena.reports import render
from arena.reports.games_io import without_bots
from arena.reports.plots import write_plots
from arena.schema import RATING_ORDER_COLUMNS
from arena.solver.analysis_store import analysis_beside

__all__ = ["PublishError", "build_site", "build_site_from_games", "build_site_from_input",
           "iter_pages"]

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
GENERATOR = '<meta name="generator" content="arena'  # how a previous site is recognised
# What a site holds at its top level, listed by the build: a folder with anything else (a CNAME,
# the organiser's notes) is not the build's to replace. Sites built before the list: these.
SITE_MANIFEST = ".arena-site"
EARLIER_SITE_ENTRIES = frozenset({"index.html", "crosstable.html", "plots.html", "games.html",
                                  "leaderboard.md", "static", "data", "plots", "games", "bots"})

Warn = Callable[[str], None]


def build_site(results: str | Path, out_dir: str | Path | None = None, plots: bool = True,
               logs: bool | None = None, warn: Warn | None = None,
               exclude: Sequence[str] = ()) -> Path:
    """Build the site of a results directory (or games file) into `out_dir`; returns `out_dir`.

    `out_dir` defaults to `<results>/site` (`<file>_site` beside a games file). `logs`
    publishes the bots' stderr tails (None: as the tournament's `publish_logs` setting says,
    default yes). `warn` gets one line per
    problem that does not stop the build (a game whose moves cannot be replayed, a damaged
    analysis.db). The move analysis of `arena analyze`, when it is there, adds the accuracy
    column and the replays' theoretical values. `exclude`: bots whose games are left out
    (`games_io.UnknownBotError` for one without games).
    """
    results = Path(results)
    site_input = load_results(results)
    if exclude:
        site_input.games = without_bots(site_input.games, exclude)
        if site_input.games.empty:
            raise PublishError(f"no games left to publish without {', '.join(exclude)}")
        site_input.settings = _without_bot_settings(site_input.settings, set(exclude))
    site_input.analysis = analysis_beside(results, site_input.games, warn)
    if out_dir is None:
        # beside a games file its own folder, as `arena plot` does: two files never share one
        out_dir = results / "site" if results.is_dir() else results.with_name(results.stem + "_site")
    return build_site_from_input(site_input, out_dir, plots=plots, logs=logs, warn=warn)


def _without_bot_settings(settings: dict, names: set[str]) -> dict:
    """The stored settings without the entries of `names` (their commands, time odds): a bot
    left out of the games is left out of the pages."""
    def kept(bots: object) -> object:
        if not isinstance(bots, list):
            return bots
        return [b for b in bots if not (isinstance(b, dict) and b.get("name") in names)]

    out = {**settings, "bots": kept(settings.get("bots"))} if "bots" in settings else dict(settings)
    stored = settings.get("settings")
    if isinstance(stored, dict) and "bots" in stored:
        out["settings"] = {**stored, "bots": kept(stored.get("bots"))}
    return out


def build_site_from_games(games: pd.DataFrame, out_dir: str | Path, settings: dict | None = None,
                          logs_dir: str | Path | None = None, plots: bool = True,
                          logs: bool | None = None, warn: Warn | None = None) -> Path:
    """Build the site from a games DataFrame (the games table of DESIGN.md) and the settings of
    `arena.tournament.store.read_settings` (or none)."""
    settings = dict(settings or {})
    site_input = SiteInput(clean_games(games), settings, Path(logs_dir) if logs_dir else None,
                           str(settings.get("name") or "Tournament"))
    return build_site_from_input(site_input, out_dir, plots=plots, logs=logs, warn=warn)


def build_site_from_input(site_input: SiteInput, out_dir: str | Path, *, plots: bool = True,
                          logs: bool | None = None, warn: Warn | None = None) -> Path:
    out = Path(out_dir)
    check_out_dir(out)
    publish_logs = publish_logs_setting(site_input.settings) if logs is None else logs
    return build_and_swap(out, lambda folder: write_site(folder, site_input, plots=plots,
                                                          publish_logs=publish_logs, warn=warn))


def check_out_dir(out: Path) -> None:
    """Refuse an output folder that is not ours to replace: a file, a results directory, or a
    folder with other contents than a site built by arena."""
    if out.exists() and not out.is_dir():
        raise PublishError(f"output path {out} exists and is not a directory")
    if not out.is_dir():
        return
    if (out / "games.db").exists():
        raise PublishError(f"output folder {out} is a results directory (it holds games.db); "
                           f"write the site elsewhere, e.g. --out {out / 'site'}")
    index = out / "index.html"
    if not any(out.iterdir()):
        return
    try:
        ours = GENERATOR in index.read_text(encoding="utf-8", errors="replace")[:2000]
    except OSError:
        ours = False
    if not ours:
        raise PublishError(f"output folder {out} holds other files and no site (index.html) "
                           "made by arena; the build replaces the whole folder: choose a new or "
                           "empty one")
    try:
        listed = set((out / SITE_MANIFEST).read_text(encoding="utf-8").split("\n"))
    except OSError:
        listed = set(EARLIER_SITE_ENTRIES)
    others = sorted(p.name for p in out.iterdir() if p.name not in listed | {SITE_MANIFEST})
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        raise PublishError(f"output folder {out} holds files its site did not make ({shown}); "
                           "the build replaces the whole folder: move them, or choose another "
                           "folder")


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             autoescape=jinja2.select_autoescape(["html"]),
                             trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    env.filters.update(FILTERS)
    return env


def _replayable(variant: str, warn: Warn) -> bool:
    try:
        parse_variant(variant)
    except ValueError as error:
        warn(f"variant {variant!r} is not one this arena knows ({error}): its games get no "
             "replay")
        return False
    return True


def write_site(out: Path, site_input: SiteInput, *, plots: bool, publish_logs: bool,
               warn: Warn | None) -> None:
    """Write every file of the site into the (empty) folder `out`."""
    warn = warn or (lambda _message: None)
    games, settings = site_input.games, site_input.settings
    if not publish_logs:  # a crash's forfeit detail quotes the bot's stderr: the logs' secret
        games = context.without_stderr(games)
    variants, scopes, labels = context.scopes_of(games)
    tables = {s: compute_standings(games, variant=context.variant_of_scope(s)) for s in scopes}
    standings = {s: context.standings_rows(t) for s, t in tables.items()}
    pair_tables = {s: pairwise_table(games, variant=context.variant_of_scope(s)) for s in scopes}
    matrix = {s: context.pair_matrix(pair_tables[s], [r["bot"] for r in standings[s]])
              for s in scopes}
    analysis = site_input.analysis
    scope_variants = {s: context.variant_of_scope(s) for s in scopes}
    accuracy_rows = accuracy.scope_accuracy(analysis, scopes, scope_variants)

    bot_slug, game_slug = context.Slugs(), context.Slugs()
    bots = [row["bot"] for row in standings[ALL]]
    bots += sorted((set(games["first"]) | set(games["second"])) - set(bots))
    bot_links = {b: f"bots/{bot_slug(b)}.html" for b in bots}
    # a game gets a replay page when its variant was recorded and is one the engine can play
    known = {v: bool(v) and _replayable(v, warn) for v in variants}
    game_links = {g: f"games/{game_slug(g)}.html"
                  for g, v in zip(games["game_id"], games["variant"], strict=True) if known[v]}

    when = context.dates(games, utc_now_iso())
    arena_version = str(settings.get("arena_version") or "")
    infos = context.bot_infos(games, settings)
    common = {"title": site_input.name, "scopes": scopes, "scope_labels": labels,
              "arena_version": arena_version, "publisher_version": __version__, "dates": when,
              "n_games": len(games), "variants": variants, "bot_links": bot_links, "infos": infos,
              "unnamed": context.UNNAMED_VARIANT, "logs_published": publish_logs,
              "has_logs": site_input.logs_dir is not None,
              "more_ratings": context.more_ratings(tables.values())}
    env = _environment()

    def render_page(template: str, target: Path, root: str, **page: Any) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        html = env.get_template(template).render(root=root, **common, **page)
        target.write_text(html, encoding="utf-8")

    (out / "static").mkdir()
    for asset in STATIC.iterdir():
        if asset.is_file():
            shutil.copyfile(asset, out / "static" / asset.name)
    plot_files = _write_plots(out, games, tables[ALL]) if plots else []
    data_files = _write_data(out, games, tables, pair_tables)
    (out / "leaderboard.md").write_text(context.leaderboard_markdown(
        site_input.name, tables, labels, when, len(games), arena_version,
        retired=settings.get("retired") or ()), encoding="utf-8")

    known = accuracy.analysed_keys(analysis)
    keys = {g: accuracy.analysis_key(known, g, v, m)
            for g, v, m in zip(games["game_id"], games["variant"], games["moves"], strict=True)}
    analysed = accuracy.analysed_counts(list(games["variant"]), list(keys.values()), scopes,
                                        scope_variants)
    # the warnings among the notes `arena standings` prints (a regularised fit, adjudicated or
    # self-play games): a reader of the site needs them as much
    notes = {s: list(t.attrs.get("warnings", [])) for s, t in tables.items()}
    render_page("index.html", out / "index.html", "", page="index", standings=standings,
                settings_items=context.tournament_items(settings, games),
                data_files=data_files,
                accuracy=accuracy_rows, analysed=analysed, notes=notes)
    render_page("crosstable.html", out / "crosstable.html", "", page="crosstable", matrix=matrix)
    render_page("plots.html", out / "plots.html", "", page="plots", plot_files=plot_files)
    rows = context.game_rows(games, game_links)
    render_page("games.html", out / "games.html", "", page="games", games=rows, bots=sorted(bots),
                reasons=sorted({r["reason"] for r in rows if r["reason"]}))

    limit_ms = (settings.get("time_control") or {}).get("move_ms")
    linked = [r for r in rows if r["link"]]
    logs = forfeit_logs(site_input) if publish_logs else None
    for i, row in enumerate(linked):
        replay = replay_frames(row["variant"], row["moves"], row["move_ms"], row.get("opening"))
        message = context.replay_warning(row, replay)
        if message:
            warn(message)
        replay["game"] = {"first": row["first"], "second": row["second"],
                          "result": row["result"], "reason": row["reason"],
                          "forfeit_by": int(row["forfeit_by"]) if row["forfeit"] else None}
        add_position_texts(replay, row["first"], row["second"])
        key = keys.get(row["game_id"])
        if key is not None:
            accuracy.annotate_replay(replay, analysis.moves.get(key, []),
                                     {1: row["first"], 2: row["second"]})
        render_page("game.html", out / row["link"], "../", page="game", game=row, replay=replay,
                    replay_json=frames_json(replay), board=board_svg(replay), badge=context.reason_badge(row, replay),
                    prev_link=linked[i - 1]["link"] if i > 0 else None,
                    next_link=linked[i + 1]["link"] if i + 1 < len(linked) else None,
                    # the forfeiter's stderr beside the game, as CodinGame's replays show it:
                    # on its bot's page alone, an author reading the game did not find it
                    forfeit_log=(logs or {}).get((row["game_id"], replay["game"]["forfeit_by"])))

    own_limits = context.own_move_limits(settings.get("settings") or {})  # time odds
    for bot in bots:
        page = context.bot_context(bot, games, standings, game_links, logs,
                                   own_limits.get(bot, limit_ms))
        mine = {s: by_bot[bot] for s, by_bot in accuracy_rows.items() if bot in by_bot}
        render_page("bot.html", out / bot_links[bot], "../", page="bot", info=infos[bot],
                    accuracy=mine, **page)
    (out / SITE_MANIFEST).write_text("".join(f"{entry.name}\n" for entry in
                                             sorted(out.iterdir())), encoding="utf-8")


def _write_plots(out: Path, games: pd.DataFrame, standings: pd.DataFrame) -> list[dict]:
    by_stem: dict[str, dict] = {}
    for path in write_plots(games, out / "plots", standings=standings):
        path = Path(path)
        entry = by_stem.setdefault(path.stem, {"stem": path.stem, "png": "", "svg": "",
                                               "title": _plot_title(path.stem),
                                               "alt": _plot_alt(path.stem)})
        entry[path.suffix.lstrip(".").lower()] = f"plots/{path.name}"
    return [e for e in by_stem.values() if e["png"] or e["svg"]]


# What each chart of `arena plot` shows and where its numbers are, for the image's alt text: the
# title alone repeated the caption and left a screen-reader user without the content (a11y review)
PLOT_ALT = {
    "ratings": "Chart of each bot's Elo rating with its 95% interval, best at the top. The "
               "numbers are in the leaderboard table and in data/standings.csv.",
    "rating_progress": "Chart of each bot's Elo rating as the tournament went on, one line per "
                       "bot. The final ratings are in the leaderboard table; every game is in "
                       "data/games.csv.",
    "head_to_head": "Heat map of the score of each bot (rows) against each other bot (columns), "
                    "red for a lost pairing through blue for a won one. The numbers are on the "
                    "crosstable page and in data/crosstable.csv.",
    "variant_scores": "Heat map of each bot's score in each variant. The numbers are in the "
                      "leaderboard, one tab per variant, and in data/standings.csv.",
    "first_player": "Chart per variant of the share of games won by the first player, drawn and "
                    "won by the second, with the first player's score and its 95% margin. The "
                    "games are in data/games.csv.",
    "move_times": "Box plot of each bot's time per move (box 25 to 75%, whiskers 5 to 95%), "
                  "fastest at the bottom. The numbers are in the move-time table on each bot's "
                  "page.",
}


def _plot_alt(stem: str) -> str:
    return PLOT_ALT.get(stem, f"Chart: {_plot_title(stem)}.")


def _plot_title(stem: str) -> str:
    words = stem.replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:]


def _by_variant_csv(tables: dict[str, pd.DataFrame]) -> str:
    """One CSV of the tables of every scope, each row led by its scope (`variant`)."""
    return render.to_csv(pd.concat([t.assign(variant=s)[["variant", *t.columns]]
                                    for s, t in tables.items()]))


def _write_data(out: Path, games: pd.DataFrame, tables: dict[str, pd.DataFrame],
                pair_tables: dict[str, pd.DataFrame]) -> list[dict]:
    data = out / "data"
    data.mkdir()
    # the schedule round is read by the ratings' order, not published (README: what a site shows)
    games = games.drop(columns=[c for c in RATING_ORDER_COLUMNS if c in games.columns])
    (data / "games.csv").write_text(render.to_csv(games), encoding="utf-8")
    (data / "games.json").write_text(json.dumps(render.records(games), indent=1,
                                                ensure_ascii=False), encoding="utf-8")
    (data / "standings.csv").write_text(_by_variant_csv(tables), encoding="utf-8")
    (data / "standings.json").write_text(
        json.dumps({s: render.records(t) for s, t in tables.items()}, indent=1), encoding="utf-8")
    (data / "crosstable.csv").write_text(_by_variant_csv(pair_tables), encoding="utf-8")
    files = [("leaderboard.md", "Leaderboard (Markdown)"),
             ("data/standings.csv", "Standings (CSV)"),
             ("data/standings.json", "Standings (JSON)"),
             ("data/crosstable.csv", "Head-to-head (CSV)"),
             ("data/games.csv", "Games (CSV)"),
             ("data/games.json", "Games (JSON)")]
    return [{"href": href, "label": label} for href, label in files]


def iter_pages(out_dir: str | Path) -> Iterable[Path]:
    """Every HTML page of a built site (handy for tests and link checks)."""
    return sorted(Path(out_dir).rglob("*.html"))
