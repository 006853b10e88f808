"""Build the static leaderboard site of a results directory.

The site is plain files: HTML pages rendered with jinja2, one stylesheet and two small scripts, the
plots of `arena plot`, and CSV / JSON / Markdown downloads. Every piece of data the pages need is
inside the pages themselves (replay frames as inline JSON), so the site opens from disk (file://)
and from any static host, offline.

Page map (relative to the output directory)::

    index.html            leaderboard (overall + one tab per variant), tournament settings, downloads
    crosstable.html       head-to-head scores with LOS, per variant
    plots.html            the charts of `arena plot`
    games.html            filterable list of every game
    games/<id>.html       replay viewer of one game
    bots/<name>.html      one bot: results by opponent and variant, move times, forfeits + stderr
    leaderboard.md        Markdown leaderboard for a README or a forum post
    data/*.csv, *.json    games, standings and head-to-head tables
    plots/*.png, *.svg    the charts
    static/               style.css, site.js, replay.js
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jinja2

from arena import __version__
from arena.publish.replay import frames_json, replay_frames

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
ALL = "all"
LOG_TAIL_LINES = 40
LOG_TAIL_CHARS = 4000
FORFEIT_REASONS = ("timeout", "illegal", "protocol", "crash", "handshake")


class PublishError(Exception):
    """A problem with the input of `arena publish`, reported as one line."""


# ----------------------------------------------------------------------------------------------
# dependencies (other parts of arena), imported lazily with a clear message when missing


def _require(module: str, name: str) -> Any:
    import importlib

    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as error:
        raise PublishError(
            f"arena publish needs {module}.{name}, which is not available ({error})"
        ) from None


def load_results(path: Path) -> tuple[Any, dict, Path | None]:
    """The games table, the tournament settings and the logs folder of a results path.

    A results directory is read through `arena.tournament.store`; a games file (CSV / JSONL) through
    `arena.reports.games_io` (no settings, no logs).
    """
    path = Path(path)
    if not path.exists():
        raise PublishError(f"results path {path} does not exist")
    settings: dict = {}
    logs: Path | None = None
    if path.is_dir():
        load = _store_loader()
        from arena.tournament.store import StoreError

        try:
            games = load(path)
        except PublishError:
            raise
        except (FileNotFoundError, ValueError, OSError, StoreError) as error:
            raise PublishError(f"cannot read results in {path}: {_one_line(error)}") from None
        try:
            read_settings = _require("arena.tournament.store", "read_settings")
            settings = dict(read_settings(path) or {})
        except PublishError:
            settings = {}
        except (FileNotFoundError, ValueError, OSError, KeyError, StoreError):
            settings = {}
        if (path / "logs").is_dir():
            logs = path / "logs"
    else:
        load = _require("arena.reports.games_io", "load_games")
        try:
            games = load(path)
        except (FileNotFoundError, ValueError, OSError, KeyError) as error:
            raise PublishError(f"cannot read games from {path}: {_one_line(error)}") from None
    return games, settings, logs


def _store_loader() -> Any:
    try:
        return _require("arena.tournament.store", "load_games")
    except PublishError:
        return _require("arena.reports.games_io", "load_games")


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def build_site(results_dir: str | Path, out_dir: str | Path | None = None,
               plots: bool = True) -> Path:
    """Build the site of a results directory (or games file) into `out_dir`; returns `out_dir`.

    `out_dir` defaults to `<results_dir>/site`.
    """
    results_dir = Path(results_dir)
    games, settings, logs = load_results(results_dir)
    if out_dir is None:
        out_dir = (results_dir if results_dir.is_dir() else results_dir.parent) / "site"
    if not settings.get("name"):
        settings.setdefault("name", results_dir.stem if results_dir.is_file() else results_dir.name)
    return build_site_from_games(games, out_dir, settings=settings, logs_dir=logs, plots=plots)


# ----------------------------------------------------------------------------------------------
# formatting helpers (also registered as jinja filters)


def _isnum(x: Any) -> bool:
    try:
        return x is not None and not math.isnan(float(x))
    except (TypeError, ValueError):
        return False


def fmt(x: Any, digits: int = 1) -> str:
    if not _isnum(x):
        return "–"
    value = float(x)
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    text = f"{value:.{digits}f}"
    if text.startswith("-"):
        text = "−" + text[1:]
    if text in ("−0", "−0.0", "−0.00"):
        text = text[1:]
    return text


def fmt_ms(x: Any) -> str:
    """A move time: sub-millisecond times as `<1`, short ones with a decimal."""
    if not _isnum(x):
        return "–"
    value = float(x)
    if value < 1:
        return "<1"
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"


def fmt_int(x: Any) -> str:
    return str(int(float(x))) if _isnum(x) else "–"


def fmt_signed(x: Any, digits: int = 0) -> str:
    if not _isnum(x):
        return "–"
    text = fmt(x, digits)
    return text if text.startswith("−") or float(x) == 0 else "+" + text


def fmt_pct(x: Any, digits: int = 1) -> str:
    return f"{fmt(100 * float(x), digits)}%" if _isnum(x) else "–"


def fmt_result(result: Any) -> str:
    if not _isnum(result):
        return "void"
    r = float(result)
    return "1–0" if r == 1 else "0–1" if r == 0 else "½–½"


def slugify(text: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", str(text)).strip("-.")
    return slug or "x"


class _Slugs:
    """Unique, filesystem-safe file names for arbitrary strings (bot names, game ids)."""

    def __init__(self) -> None:
        self.by_key: dict[str, str] = {}
        self.used: set[str] = set()

    def __call__(self, key: str) -> str:
        if key in self.by_key:
            return self.by_key[key]
        base = slugify(key)
        slug, n = base, 2
        while slug.lower() in self.used:
            slug = f"{base}-{n}"
            n += 1
        self.used.add(slug.lower())
        self.by_key[key] = slug
        return slug


# ----------------------------------------------------------------------------------------------
# data preparation


def _records(frame: Any) -> list[dict]:
    """DataFrame rows as plain dicts with NaN turned into None."""
    rows = []
    for row in frame.to_dict("records"):
        rows.append({k: (None if isinstance(v, float) and math.isnan(v) else v)
                     for k, v in row.items()})
    return rows


def _clean_games(games: Any) -> Any:
    import pandas as pd

    if not isinstance(games, pd.DataFrame):
        games = pd.DataFrame(games)
    required = {"variant", "first", "second", "result", "moves"}
    missing = required - set(games.columns)
    if missing:
        raise PublishError(f"games table lacks columns: {', '.join(sorted(missing))}")
    games = games[games["result"].notna()].copy()
    if games.empty:
        raise PublishError("no finished games to publish (the store is empty or every game is void)")
    defaults: dict[str, Any] = {
        "game_id": None, "seq": None, "winner": float("nan"), "reason": "", "forfeit_by": float("nan"),
        "plies": None, "opening": "", "pair_id": "", "move_ms": "[]", "move_cpu_ms": "[]",
        "detail": "", "started_at": "", "finished_at": "", "first_hash": "", "second_hash": "",
        "first_version": "", "second_version": "",
    }
    for column, value in defaults.items():
        if column not in games.columns:
            games[column] = value
    if games["seq"].isna().any():
        games["seq"] = range(1, len(games) + 1)
    games["game_id"] = [
        str(g) if g is not None and str(g) not in ("", "nan") else f"game-{int(s)}"
        for g, s in zip(games["game_id"], games["seq"], strict=True)
    ]
    games["plies"] = [
        int(p) if _isnum(p) else len(str(m or "").split())
        for p, m in zip(games["plies"], games["moves"], strict=True)
    ]
    for column in ("moves", "opening", "reason", "detail", "started_at", "finished_at", "first_hash",
                   "second_hash", "first_version", "second_version", "pair_id"):
        games[column] = games[column].fillna("").astype(str)
    games = games.sort_values("seq", kind="stable").reset_index(drop=True)
    return games


def _ms_list(value: Any) -> list[float]:
    if isinstance(value, list | tuple):
        items = value
    else:
        try:
            items = json.loads(value) if value else []
        except (TypeError, ValueError):
            return []
    out = []
    for v in items if isinstance(items, list) else []:
        if _isnum(v):
            out.append(float(v))
    return out


def _standings(games: Any, variant: str | None) -> list[dict]:
    compute = _require("arena.ratings.standings", "compute_standings")
    table = compute(games, variant=variant)
    rows = _records(table)
    for i, row in enumerate(rows):
        if row.get("rank") is None:
            row["rank"] = i + 1
    return rows


def _pairwise(games: Any, variant: str | None) -> dict[tuple[str, str], dict]:
    pairwise = _require("arena.ratings.standings", "pairwise_table")
    table = pairwise(games, variant=variant)
    out: dict[tuple[str, str], dict] = {}
    for row in _records(table):
        out[(row["bot_a"], row["bot_b"])] = row
    for (a, b), row in list(out.items()):
        if (b, a) not in out:
            los = row.get("los")
            diff = row.get("elo_diff")
            games_n = row.get("games") or 0
            out[(b, a)] = {
                "bot_a": b, "bot_b": a, "games": games_n,
                "wins": row.get("losses"), "draws": row.get("draws"), "losses": row.get("wins"),
                "elo_diff": -diff if _isnum(diff) else None, "elo_margin": row.get("elo_margin"),
                "los": 1 - los if _isnum(los) else None,
            }
    for row in out.values():
        w, d, n = row.get("wins") or 0, row.get("draws") or 0, row.get("games") or 0
        row["points"] = w + d / 2
        row["pct"] = (w + d / 2) / n if n else None
    return out


def _score_view(rows: list[dict]) -> None:
    """Add `points` (wins + draws/2) and `pct` (points per game) to standings rows."""
    for row in rows:
        w, d, n = row.get("wins") or 0, row.get("draws") or 0, row.get("games") or 0
        row.setdefault("points", w + d / 2)
        row["pct"] = row["score"] if _isnum(row.get("score")) else ((w + d / 2) / n if n else None)



def public_command(words: list) -> str:
    """A bot's command line as shown on a public page: without the publisher's own paths.

    The interpreter shows as `python`, files of this project relative to it, and other absolute
    paths as their last two parts.
    """
    from arena.process import PROJECT_ROOT

    shown = []
    for word in map(str, words):
        path = Path(word)
        if not path.is_absolute():
            shown.append(word)
        elif path.name.startswith("python"):
            shown.append("python")
        elif path.is_relative_to(PROJECT_ROOT):
            shown.append(str(path.relative_to(PROJECT_ROOT)))
        else:
            shown.append(str(Path("…", *path.parts[-2:])))
    return " ".join(shown)


def _bot_infos(games: Any, settings: dict) -> dict[str, dict]:
    """Versions and program hashes of every bot, from the games table and the settings."""
    infos: dict[str, dict] = {}
    for seat in ("first", "second"):
        for name, version, digest in zip(
            games[seat], games[f"{seat}_version"], games[f"{seat}_hash"], strict=True
        ):
            info = infos.setdefault(name, {"name": name, "versions": set(), "hashes": set()})
            if version:
                info["versions"].add(version)
            if digest:
                info["hashes"].add(digest)
    configured = settings.get("bots")
    if isinstance(configured, dict):
        configured = [dict(v, name=v.get("name", k)) if isinstance(v, dict) else {"name": k}
                      for k, v in configured.items()]
    for entry in configured or []:
        if not isinstance(entry, dict):
            continue
        name = entry.get("name") or entry.get("display_name")
        if name not in infos:
            continue
        info = infos[name]
        for key in ("command", "path", "spec", "ref"):
            if entry.get(key) and not info.get("command"):
                value = entry[key]
                words = list(value) if isinstance(value, list | tuple) else [str(value)]
                if key == "command" and isinstance(entry.get("args"), list | tuple):
                    words += [str(a) for a in entry["args"]]
                info["command"] = public_command(words)
        for key in ("ref", "author", "language"):
            if entry.get(key):
                info[key] = str(entry[key])
        for key in ("version",):
            if entry.get(key):
                info["versions"].add(str(entry[key]))
        for key in ("hash", "program_hash", "sha256"):
            if entry.get(key):
                info["hashes"].add(str(entry[key]))
    for info in infos.values():
        info["versions"] = sorted(info["versions"])
        info["hashes"] = sorted(info["hashes"])
    return infos


_SETTINGS_SKIP = {"bots", "name", "settings", "schema_version", "output", "games", "variants",
                  "arena_version", "openings_digest"}
_SETTINGS_LABELS = {
    "file": "Tournament file", "format": "Format", "time_control": "Time control",
    "variants": "Variants", "created_at": "Created", "updated_at": "Updated",
    "arena_version": "Arena version", "void_games": "Void games", "description": "Description",
    "gauntlet_bot": "Gauntlet bot", "openings": "Openings", "openings_file": "Openings file",
    "openings_digest": "Openings digest", "concurrency": "Concurrency", "seed": "Seed",
    "restart": "Restart policy",
}


def _settings_text(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {_settings_text(v)}" for k, v in value.items()
                         if v is not None and v != "")
    if isinstance(value, list | tuple):
        if value and all(isinstance(v, dict) for v in value):
            return f"{len(value)} entries"
        return ", ".join(_settings_text(v) for v in value)
    return "" if value is None else str(value)


def _settings_items(settings: dict) -> list[tuple[str, str]]:
    """Settings as (label, text) pairs for a definition list; bots and games are shown elsewhere.

    Understands the dict of `arena.tournament.store.read_settings` (top-level keys plus a nested
    ``settings`` dict) and shows any other key generically.
    """
    merged: dict[str, Any] = {}
    nested = settings.get("settings")
    for source in (settings, nested if isinstance(nested, dict) else {}):
        for key, value in source.items():
            if key in _SETTINGS_SKIP or key in merged:
                continue
            merged[key] = value
    items = []
    if isinstance(nested, dict) and _isnum(nested.get("games")):
        items.append(("Games per pairing", str(nested["games"])))
    for key, value in merged.items():
        text = public_command([value]) if key in ("file", "openings_file") else _settings_text(value)
        if text == "" or (key in ("void_games", "openings") and not value):
            continue
        label = _SETTINGS_LABELS.get(key, key.replace("_", " ").capitalize())
        items.append((label, text))
    return items


def _dates(games: Any, settings: dict) -> dict[str, str]:
    started = [s for s in games["started_at"] if s]
    finished = [s for s in games["finished_at"] if s]
    return {
        "first_game": min(started) if started else settings.get("created_at", "") or "",
        "last_game": max(finished) if finished else settings.get("updated_at", "") or "",
        "published": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _log_tail(logs_dir: Path | None, game_id: str, seat: int, bot: str) -> tuple[str, str]:
    """(file name, last lines) of a bot's stderr log for one game, or ('', '') if there is none."""
    if logs_dir is None or not logs_dir.is_dir():
        return "", ""
    candidates = sorted(p for p in logs_dir.glob("*.log") if p.name.startswith(f"{game_id}-"))
    chosen = None
    seat_names = {str(seat), ("first", "second")[seat - 1], f"p{seat}", f"seat{seat}"}
    for path in candidates:
        rest = path.name[len(game_id) + 1:-4]
        seat_part, _, name_part = rest.partition("-")
        if seat_part in seat_names:
            chosen = path
            break
        if name_part == bot or rest == bot:
            chosen = path
    if chosen is None and len(candidates) == 1:
        chosen = candidates[0]
    if chosen is None:
        return "", ""
    try:
        data = chosen.read_bytes()[-LOG_TAIL_CHARS * 2:]
    except OSError:
        return chosen.name, ""
    text = data.decode("utf-8", errors="replace")
    lines = text.splitlines()[-LOG_TAIL_LINES:]
    tail = "\n".join(lines)[-LOG_TAIL_CHARS:]
    return chosen.name, tail


def _histogram(values: list[float], bins: int = 24) -> dict | None:
    """Bars of a log-scale histogram of move times, ready to draw as an inline SVG."""
    if not values:
        return None
    lo = max(min(values), 0.1)
    hi = max(max(values), lo * 1.5)
    llo, lhi = math.log10(lo), math.log10(hi)
    width = (lhi - llo) / bins or 1.0
    counts = [0] * bins
    for v in values:
        i = int((math.log10(max(v, lo)) - llo) / width)
        counts[min(max(i, 0), bins - 1)] += 1
    top = max(counts)
    bars = []
    for i, c in enumerate(counts):
        bars.append({
            "x": i * (100 / bins), "w": 100 / bins, "h": 100 * c / top if top else 0, "count": c,
            "from": 10 ** (llo + i * width), "to": 10 ** (llo + (i + 1) * width),
        })
    ticks = []
    for exp in range(math.floor(llo), math.ceil(lhi) + 1):
        for mult in (1, 10 ** 0.5):
            value = 10 ** exp * mult
            if lo <= value <= hi:
                label = f"{value:.0f}" if value >= 1 else f"{value:.1g}"
                ticks.append({"x": 100 * (math.log10(value) - llo) / (lhi - llo), "label": label})
    return {"bars": bars, "ticks": ticks, "lo": lo, "hi": hi}


def _quantile(sorted_values: list[float], q: float) -> float | None:
    if not sorted_values:
        return None
    i = min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[i]


def _time_stats(values: list[float]) -> dict:
    v = sorted(values)
    return {
        "n": len(v),
        "mean": sum(v) / len(v) if v else None,
        "median": _quantile(v, 0.5),
        "p90": _quantile(v, 0.9),
        "p99": _quantile(v, 0.99),
        "max": v[-1] if v else None,
    }


def _time_limit_ms(settings: dict) -> float | None:
    """The per-move time limit, if the settings state one (for a marker on the histograms)."""
    def find(d: Any) -> float | None:
        if isinstance(d, dict):
            for key in ("move_ms", "move_time_ms", "time_per_move_ms"):
                if _isnum(d.get(key)):
                    return float(d[key])
            for v in d.values():
                found = find(v)
                if found is not None:
                    return found
        return None

    return find(settings)


# ----------------------------------------------------------------------------------------------
# the build


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(fmt=fmt, fmt_ms=fmt_ms, fmt_int=fmt_int, fmt_signed=fmt_signed, fmt_pct=fmt_pct,
                       fmt_result=fmt_result)
    return env


def _variant_label(spec: str) -> str:
    return spec


def build_site_from_games(
    games: Any,
    out_dir: str | Path,
    settings: dict | None = None,
    logs_dir: str | Path | None = None,
    plots: bool = True,
) -> Path:
    """Build the site from a games DataFrame (columns of the games table in DESIGN.md)."""
    settings = dict(settings or {})
    out = Path(out_dir)
    logs = Path(logs_dir) if logs_dir else None
    games = _clean_games(games)
    variants = sorted(games["variant"].unique())
    scopes = [ALL, *variants] if len(variants) > 1 else [ALL]
    scope_labels = {ALL: "All variants" if len(variants) > 1 else variants[0]}
    scope_labels.update({v: _variant_label(v) for v in variants})

    standings = {s: _standings(games, None if s == ALL else s) for s in scopes}
    for rows in standings.values():
        _score_view(rows)
    pairs = {s: _pairwise(games, None if s == ALL else s) for s in scopes}

    bot_slug = _Slugs()
    game_slug = _Slugs()
    bots = [row["bot"] for row in standings[ALL]]
    for name in sorted(set(games["first"]) | set(games["second"])):
        if name not in bots:
            bots.append(name)
    bot_links = {b: f"bots/{bot_slug(b)}.html" for b in bots}
    game_links = {g: f"games/{game_slug(g)}.html" for g in games["game_id"]}

    _check_out_dir(out)
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("games", "bots", "data", "plots", "static"):
        folder = out / sub
        if folder.is_dir() and sub in ("games", "bots", "plots", "static"):
            shutil.rmtree(folder)
        folder.mkdir(exist_ok=True)
    for asset in STATIC.iterdir():
        if asset.is_file():
            shutil.copyfile(asset, out / "static" / asset.name)

    plot_files: list[dict] = []
    if plots:
        write_plots = _require("arena.reports.plots", "write_plots")
        written = [Path(p) for p in write_plots(games, out / "plots")]
        by_stem: dict[str, dict] = {}
        for path in written:
            try:
                rel = path.resolve().relative_to(out.resolve()).as_posix()
            except ValueError:
                target = out / "plots" / path.name
                shutil.copyfile(path, target)
                rel = f"plots/{path.name}"
            entry = by_stem.setdefault(path.stem, {"stem": path.stem, "title": _plot_title(path.stem)})
            entry[path.suffix.lstrip(".").lower()] = rel
        plot_files = [e for e in by_stem.values() if "png" in e or "svg" in e]

    infos = _bot_infos(games, settings)
    dates = _dates(games, settings)
    name = str(settings.get("name") or settings.get("tournament") or "Tournament")
    arena_version = str(settings.get("arena_version") or settings.get("version") or "")
    common = {
        "title": name,
        "scopes": scopes,
        "scope_labels": scope_labels,
        "arena_version": arena_version,
        "publisher_version": __version__,
        "dates": dates,
        "n_games": len(games),
        "variants": variants,
        "bot_links": bot_links,
    }
    env = _environment()

    def render(template: str, target: Path, root: str, **context: Any) -> None:
        html = env.get_template(template).render(root=root, **common, **context)
        target.write_text(html, encoding="utf-8")

    # downloads
    data_files = _write_data(out, games, standings, pairs, scopes)
    md = _markdown(name, standings, scopes, scope_labels, dates, arena_version, len(games))
    (out / "leaderboard.md").write_text(md, encoding="utf-8")

    render("index.html", out / "index.html", "", page="index", standings=standings,
           settings_items=_settings_items(settings), infos=infos, data_files=data_files)
    matrix = {}
    for s in scopes:
        scope_bots = [row["bot"] for row in standings[s]]
        nested: dict[str, dict[str, dict]] = {}
        for (a, b), v in pairs[s].items():
            nested.setdefault(a, {})[b] = v
        matrix[s] = {"bots": scope_bots, "pairs": nested}
    render("crosstable.html", out / "crosstable.html", "", page="crosstable", matrix=matrix,
           pair_lists={s: sorted(pairs[s].values(), key=lambda r: (r["bot_a"], r["bot_b"]))
                       for s in scopes})
    render("plots.html", out / "plots.html", "", page="plots", plot_files=plot_files)

    games_rows = []
    for row in _records(games):
        games_rows.append({
            **row,
            "link": game_links[row["game_id"]],
            "result_text": fmt_result(row["result"]),
            "forfeit": _isnum(row.get("forfeit_by")),
        })
    reasons = sorted({r["reason"] for r in games_rows if r["reason"]})
    render("games.html", out / "games.html", "", page="games", games=games_rows, bots=sorted(bots),
           reasons=reasons)

    time_limit = _time_limit_ms(settings)
    by_id = {r["game_id"]: r for r in games_rows}
    for i, row in enumerate(games_rows):
        replay = replay_frames(row["variant"], row["moves"], row.get("move_ms"))
        replay["game"] = {
            "first": row["first"], "second": row["second"], "result": row["result"],
            "reason": row["reason"],
            "forfeit_by": int(row["forfeit_by"]) if _isnum(row.get("forfeit_by")) else None,
        }
        prev_link = games_rows[i - 1]["link"] if i > 0 else None
        next_link = games_rows[i + 1]["link"] if i + 1 < len(games_rows) else None
        render("game.html", out / row["link"], "../", page="game", game=row,
               replay=replay, replay_json=frames_json(replay), prev_link=prev_link,
               next_link=next_link, time_limit=time_limit)

    for bot in bots:
        context = _bot_context(bot, games, standings, scopes, logs, time_limit, by_id, infos)
        render("bot.html", out / bot_links[bot], "../", page="bot", **context)
    return out


def _check_out_dir(out: Path) -> None:
    """Refuse an output folder whose contents the build would delete or mix with other files.

    The build replaces the games/, bots/, plots/ and static/ folders of a previous site; in a
    results directory (games.db) or a folder that holds such subfolders but no site, refuse.
    """
    if out.exists() and not out.is_dir():
        raise PublishError(f"output path {out} exists and is not a directory")
    if not out.is_dir():
        return
    if (out / "games.db").exists():
        raise PublishError(f"output folder {out} is a results directory (it holds games.db); "
                           f"write the site elsewhere, e.g. --out {out / 'site'}")
    if not (out / "index.html").is_file():
        taken = [sub for sub in ("games", "bots", "plots", "static") if (out / sub).exists()]
        if taken:
            raise PublishError(
                f"output folder {out} holds a {taken[0]}/ folder but no site (index.html); the "
                "build would replace it: choose a new or empty folder")


def _plot_title(stem: str) -> str:
    words = stem.replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:]


def _bot_context(bot: str, games: Any, standings: dict, scopes: list[str], logs: Path | None,
                 time_limit: float | None, by_id: dict, infos: dict) -> dict:
    mine = games[(games["first"] == bot) | (games["second"] == bot)]
    rows: dict[tuple[str, str], dict] = {}
    times: list[float] = []
    times_by_variant: dict[str, list[float]] = {}
    forfeits = []
    for g in _records(mine):
        seat = 1 if g["first"] == bot else 2
        opponent = g["second"] if seat == 1 else g["first"]
        score = g["result"] if seat == 1 else 1 - g["result"]
        key = (g["variant"], opponent)
        r = rows.setdefault(key, {"variant": g["variant"], "opponent": opponent, "games": 0,
                                  "wins": 0, "draws": 0, "losses": 0, "forfeits": 0,
                                  "opp_forfeits": 0, "as_first": 0, "first_points": 0.0})
        r["games"] += 1
        r["wins"] += score == 1
        r["draws"] += score == 0.5
        r["losses"] += score == 0
        if seat == 1:
            r["as_first"] += 1
            r["first_points"] += score
        fb = g.get("forfeit_by")
        if _isnum(fb) and int(fb) == seat:
            r["forfeits"] += 1
            log_name, tail = _log_tail(logs, g["game_id"], seat, bot)
            forfeits.append({**by_id[g["game_id"]], "seat": seat, "opponent": opponent,
                             "log_name": log_name, "log_tail": tail})
        elif _isnum(fb):
            r["opp_forfeits"] += 1
        ms = _ms_list(g.get("move_ms"))
        own = ms[seat - 1::2]
        times.extend(own)
        times_by_variant.setdefault(g["variant"], []).extend(own)
    table = sorted(rows.values(), key=lambda r: (r["variant"], r["opponent"]))
    for r in table:
        r["points"] = r["wins"] + r["draws"] / 2
        r["pct"] = r["points"] / r["games"] if r["games"] else None
    summary = {}
    for s in scopes:
        for row in standings[s]:
            if row["bot"] == bot:
                summary[s] = row
    time_rows = [{"variant": "all", **_time_stats(times)}]
    if len(times_by_variant) > 1:
        time_rows += [{"variant": v, **_time_stats(t)} for v, t in sorted(times_by_variant.items())]
    hist = _histogram(times)
    limit_x = None
    if hist and time_limit and hist["lo"] <= time_limit <= hist["hi"]:
        span = math.log10(hist["hi"]) - math.log10(hist["lo"])
        limit_x = 100 * (math.log10(time_limit) - math.log10(hist["lo"])) / span
    return {
        "bot": bot, "info": infos.get(bot, {}), "summary": summary, "by_opponent": table,
        "time_rows": time_rows, "hist": hist, "time_limit": time_limit, "limit_x": limit_x,
        "forfeits": forfeits,
    }


def _write_data(out: Path, games: Any, standings: dict, pairs: dict, scopes: list[str]) -> list[dict]:
    import pandas as pd

    data = out / "data"
    games.to_csv(data / "games.csv", index=False)
    (data / "games.json").write_text(
        games.to_json(orient="records", indent=1, force_ascii=False), encoding="utf-8"
    )
    standing_rows = []
    for s in scopes:
        for row in standings[s]:
            clean = {k: v for k, v in row.items() if k != "pct"}
            standing_rows.append({"variant": s, **clean})
    frame = pd.DataFrame(standing_rows)
    frame.to_csv(data / "standings.csv", index=False)
    (data / "standings.json").write_text(
        json.dumps({s: [_jsonable({k: v for k, v in r.items() if k != "pct"})
                        for r in standings[s]] for s in scopes}, indent=1),
        encoding="utf-8",
    )
    pair_rows = []
    for s in scopes:
        for row in pairs[s].values():
            pair_rows.append({"variant": s, **{k: v for k, v in row.items()
                                                if k not in ("points", "pct")}})
    pd.DataFrame(pair_rows).to_csv(data / "crosstable.csv", index=False)
    files = [
        ("leaderboard.md", "Leaderboard (Markdown)"),
        ("data/standings.csv", "Standings (CSV)"),
        ("data/standings.json", "Standings (JSON)"),
        ("data/crosstable.csv", "Head-to-head (CSV)"),
        ("data/games.csv", "Games (CSV)"),
        ("data/games.json", "Games (JSON)"),
    ]
    return [{"href": href, "label": label} for href, label in files]


def _jsonable(row: dict) -> dict:
    out = {}
    for k, v in row.items():
        if hasattr(v, "item"):
            v = v.item()
        if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
            v = None
        out[k] = v
    return out


def _markdown(name: str, standings: dict, scopes: list[str], labels: dict, dates: dict,
              arena_version: str, n_games: int) -> str:
    lines = [f"# {name}", ""]
    period = " – ".join(d for d in (dates["first_game"][:10], dates["last_game"][:10]) if d)
    meta = [f"{n_games} games"]
    if period:
        meta.append(period)
    if arena_version:
        meta.append(f"arena {arena_version}")
    lines += [", ".join(meta) + ".", ""]
    for s in scopes:
        if len(scopes) > 1:
            lines += [f"## {labels[s]}", ""]
        lines += [
            "| # | Bot | Elo | 95% interval | TrueSkill μ ± σ | Games | W / D / L | Score | Forfeits |",
            "|--:|:----|----:|:------------:|:---------------:|------:|:---------:|------:|---------:|",
        ]
        for r in standings[s]:
            bot = str(r["bot"]).replace("|", "\\|")
            lines.append(
                f"| {fmt_int(r['rank'])} | {bot} | {fmt(r.get('elo'), 0)} "
                f"| {fmt(r.get('elo_lo'), 0)} … {fmt(r.get('elo_hi'), 0)} "
                f"| {fmt(r.get('ts_mu'), 1)} ± {fmt(r.get('ts_sigma'), 1)} "
                f"| {fmt_int(r.get('games'))} "
                f"| {fmt_int(r.get('wins'))} / {fmt_int(r.get('draws'))} / {fmt_int(r.get('losses'))} "
                f"| {fmt_pct(r.get('pct'))} | {fmt_int(r.get('forfeits'))} |"
            )
        lines.append("")
    lines.append(f"Published with arena {__version__}.")
    return "\n".join(lines) + "\n"


def iter_pages(out_dir: str | Path) -> Iterable[Path]:
    """Every HTML page of a built site (handy for tests and link checks)."""
    return sorted(Path(out_dir).rglob("*.html"))
