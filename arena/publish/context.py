"""What each page of the site shows, as plain data: pure functions of the games and settings.

Nothing here reads or writes files, renders HTML or draws: the templates only lay these dicts out,
and the tests check them directly. Numbers stay numbers (the templates format them with
`arena.publish.filters`); text meant for people (the Tournament panel) is worded here.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from arena import __version__
from arena.ratings import registry
from arena.ratings.system import Display
from arena.ratings.table import ALL  # the pooled scope: the standings key, the site's too
from arena.reasons import STDERR_SAID, forfeiter_seat, is_forfeit
from arena.reports import render
from arena.schema import seat_times
from arena.stats import time_summary
from arena.timecontrol import seconds_text, time_limits_text

UNNAMED_VARIANT = "unnamed variant"  # the label of games whose variant was not recorded


def _isnum(x: Any) -> bool:
    try:
        return x is not None and not math.isnan(float(x))
    except (TypeError, ValueError):
        return False


# -- names and links ---------------------------------------------------------------------------

SLUG_CHARS = 80  # a file name's part: a 300-character bot name of a games file was too long


def slugify(text: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", str(text))[:SLUG_CHARS].strip("-.")
    return slug or "x"


class Slugs:
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


def public_command(words: Iterable[Any]) -> str:
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


# -- scopes: all variants, then one per variant --------------------------------------------------

def scopes_of(games: pd.DataFrame) -> tuple[list[str], list[str], dict[str, str]]:
    """(variants, scopes, labels): `all` plus one scope per variant when there are several."""
    variants = sorted(games["variant"].unique())
    labels = {v: v or UNNAMED_VARIANT for v in variants}
    if len(variants) > 1:
        return variants, [ALL, *variants], {ALL: "All variants", **labels}
    return variants, [ALL], {ALL: labels[variants[0]]}


def variant_of_scope(scope: str) -> str | None:
    return None if scope == ALL else scope


# -- bots ----------------------------------------------------------------------------------------

def bot_infos(games: pd.DataFrame, settings: Mapping[str, Any]) -> dict[str, dict]:
    """Versions, program hashes, command, author and language of every bot that played.

    Versions and hashes come from the games; command, author and language from the `bots` of
    `read_settings` (a games file has none, so its bots simply show without them).
    """
    infos: dict[str, dict] = {}
    for seat in ("first", "second"):
        for name, version, digest in zip(games[seat], games[f"{seat}_version"],
                                         games[f"{seat}_hash"], strict=True):
            info = infos.setdefault(name, {"name": name, "versions": set(), "hashes": set(),
                                           "command": "", "author": "", "language": ""})
            if version:
                info["versions"].add(version)
            if digest:
                info["hashes"].add(digest)
    for entry in settings.get("bots") or []:
        info = infos.get(entry.get("name"))
        if info is None:
            continue
        words = [*(entry.get("command") or []), *(entry.get("args") or [])]
        info["command"] = public_command(words) if words else ""
        info["author"] = str(entry.get("author") or "")
        info["language"] = str(entry.get("language") or "")
    retired = set(settings.get("retired") or ())  # a league's replaced or removed versions
    for info in infos.values():
        info["retired"] = info["name"] in retired
        info["versions"] = sorted(info["versions"])
        info["hashes"] = sorted(info["hashes"])
        info["byline"] = byline(info)
    return infos


def byline(info: Mapping[str, Any]) -> str:
    """`by Ada · C`, `by Ada`, `C` or '' (what a leaderboard shows under a bot's name), and
    `retired` for a league's replaced or removed version."""
    parts = []
    if info.get("author"):
        parts.append(f"by {info['author']}")
    if info.get("language"):
        parts.append(str(info["language"]))
    if info.get("retired"):
        parts.append("retired")
    return " · ".join(parts)


# -- the Tournament panel ------------------------------------------------------------------------

def time_control_text(tc: Mapping[str, Any]) -> str:
    """A stored time control in words, e.g. `1 s per move (200 ms grace; 5 s to start up, in the
    first move of a bot process)`: that move may take longer than the limit (site review)."""
    text = time_limits_text(tc)
    extras = []
    if tc.get("grace_ms"):
        extras.append(f"{seconds_text(tc['grace_ms'])} grace")
    if tc.get("startup_ms"):
        extras.append(f"{seconds_text(tc['startup_ms'])} to start up, in the first move of a bot process")
    return f"{text} ({'; '.join(extras)})" if extras and text else text


def stored_time_control(text: Any) -> dict:
    """A games-table `first_tc`/`second_tc` value as a dict ({} if empty or unreadable)."""
    if isinstance(text, Mapping):
        return dict(text)
    try:
        value = json.loads(text) if isinstance(text, str) and text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def game_time_text(row: Mapping[str, Any]) -> str:
    """The time control(s) of one game for its page: one for both seats, or each bot's under
    time odds (`random: 50 ms per move · greedy: 1 s per move`); '' for older stores."""
    first, second = (stored_time_control(row.get(k)) for k in ("first_tc", "second_tc"))
    if not first or not second:
        return ""
    if first == second:
        return time_limits_text(first)
    return (f"{row.get('first')}: {time_limits_text(first)} · "
            f"{row.get('second')}: {time_limits_text(second)}")


def _own_controls(stored: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Bot name -> its own time control (time odds), from the stored settings."""
    bots = stored.get("bots") if isinstance(stored.get("bots"), list) else []
    return {str(b["name"]): b["time_control"] for b in bots
            if isinstance(b, Mapping) and b.get("name") and isinstance(b.get("time_control"), Mapping)}


def own_move_limits(stored: Mapping[str, Any]) -> dict[str, int | None]:
    """Bot name -> the per-move limit of its own time control, for the bots that have one."""
    return {name: tc.get("move_ms") for name, tc in _own_controls(stored).items()}


def time_odds_text(stored: Mapping[str, Any]) -> str:
    """The bots with their own time control (time odds), from the stored settings; '' if none."""
    return "; ".join(f"{name}: {time_limits_text(tc)}" for name, tc in _own_controls(stored).items())


def sandbox_text(stored: Mapping[str, Any], games_sandboxed: tuple[int, int] | None = None) -> str:
    """How the bots ran: in the bubblewrap sandbox with its limits, or not (and why); '' for
    results that predate the sandbox. `games_sandboxed`: (sandboxed, all) of the games that
    say, which decide over the settings: a league stores only its mode (`auto`), and a site
    said "not available" of a league whose every game was sandboxed."""
    if games_sandboxed is not None and games_sandboxed[1]:
        sandboxed, counted = games_sandboxed
        if 0 < sandboxed < counted:
            return (f"bubblewrap in {sandboxed} of {counted} games (no network, own processes "
                    "only, read-only files); the others ran without it")
        stored = {**stored, "sandboxed": sandboxed == counted}
    elif "sandboxed" not in stored and "sandbox" not in stored:
        return ""
    if stored.get("sandboxed"):
        limits = f" ({stored['limits']})" if stored.get("limits") else ""
        return f"bubblewrap: no network, own processes only, read-only files{limits}"
    if stored.get("sandbox") == "off":
        return "none (sandbox = off): bots ran with the organiser's rights"
    if "sandbox" not in stored:  # a games file: how it was run is not known
        return "none: the bots ran outside the sandbox"
    return "none: bubblewrap was not available"


def games_sandboxed(games: Any) -> tuple[int, int] | None:
    """(sandboxed, all) over the games of a table that record it; None without the column."""
    if games is None or "sandboxed" not in games:
        return None
    known = games["sandboxed"].dropna()
    return int((known.astype(float) == 1).sum()), int(len(known))


def tournament_items(settings: Mapping[str, Any], games: Any = None) -> list[tuple[str, str]]:
    """The stored settings (`read_settings`) as (label, text) pairs worded for people (`games`:
    the games table, which says how each game's bots ran).

    Only what a reader can use is shown, never an unset value or a raw key; the bots and the
    games are on the rest of the site.
    """
    stored = settings.get("settings") or {}
    items: list[tuple[str, str]] = []
    if stored.get("description"):
        items.append(("Description", str(stored["description"])))
    if stored.get("format") == "gauntlet" and stored.get("gauntlet_bot"):
        items.append(("Format", f"gauntlet: every bot plays {stored['gauntlet_bot']}"))
    elif stored.get("format"):
        items.append(("Format", "round robin: every bot plays every other"))
    if isinstance(stored.get("games"), int):
        items.append(("Games per pairing", f"{stored['games']} per variant, each bot starting "
                                            "half of them"))
    tc = settings.get("time_control") or {}
    if tc:
        items.append(("Time control", time_control_text(tc)))
    odds = time_odds_text(stored)
    if odds:
        items.append(("Time odds", f"{odds}; every other bot plays under the time control"))
    openings = stored.get("openings")
    if isinstance(openings, int) and openings > 0:
        # the file's (or the built-in set's) count over all variants, and the starts the games
        # had: a small `games` plays few of them ("Openings: 30" of which 5 were played)
        source = Path(str(stored.get("openings_file") or "")).name or "the built-in set"
        text = f"{openings} from {source}"
        if games is not None and "opening" in getattr(games, "columns", ()):
            played = games[["variant", "opening"]].drop_duplicates()
            played = played[played["opening"].astype(str).str.strip() != ""]
            text += f"; {len(played)} played (each game pair plays one, both seats)"
        items.append(("Openings", text))
    elif openings == 0:
        items.append(("Openings", "none: every game starts on the empty board"))
    if isinstance(stored.get("concurrency"), int):
        n = stored["concurrency"]
        if games is not None and len(games):  # `concurrency = 100000` ran its 12 games at once
            n = min(n, len(games))
        items.append(("Concurrency", f"{n} game{'s' if n != 1 else ''} at a time"))
    if stored.get("restart") == "every-game":
        items.append(("Bot processes", "a fresh process for every game"))
    elif stored.get("restart") == "on-failure":
        items.append(("Bot processes", "kept between games, restarted after a failure"))
    if stored.get("affinity") is True:
        items.append(("CPU affinity", "Bots pinned to cores: each worker and the two bots of its "
                                      "game on one core"))
    if stored.get("ponder") is False:
        items.append(("Between turns", "Bots stopped from their move until their next turn "
                                       "(ponder = false): no computing on the opponent's time"))
    if stored.get("seed") is not None:
        items.append(("Seed", str(stored["seed"])))
    sandbox = sandbox_text(stored, games_sandboxed(games))
    if sandbox:
        items.append(("Sandbox", sandbox))
    if settings.get("void_games"):
        n = settings["void_games"]
        items.append(("Void games", f"{n} (neither bot could start; not rated)"))
    if progress := progress_text(settings):
        items.append(("Progress", progress))
    if settings.get("file"):
        items.append(("Tournament file", Path(str(settings["file"])).name))
    last_game = ""
    if games is not None and "finished_at" in getattr(games, "columns", ()):
        last_game = max((str(s) for s in games["finished_at"] if s), default="")
    for key, label in (("created_at", "Started"), ("updated_at", "Last updated")):
        when = str(settings.get(key) or "")
        if key == "updated_at":  # a site published during a run: its last game is later
            when = max(when, last_game)
        if when:
            items.append((label, render.timestamp(when)))
    return items


def progress_text(settings: Mapping[str, Any]) -> str:
    """How much of its schedule a stopped, running or cut-short tournament played ('' when all
    of it, or for a store older than the count): "Games: 29" beside 40 per pairing looked like
    a finished tournament (site review)."""
    from arena.tournament.store import RUN_FINISHED, RUN_STOPPED

    scheduled, state = settings.get("scheduled_games"), settings.get("run_state")
    played = int(settings.get("games") or 0) - int(settings.get("void_games") or 0)
    if not isinstance(scheduled, int) or not state or played >= scheduled:
        return ""
    why = {RUN_STOPPED: "the run stopped before the end (run it again to go on, once what "
                        "stopped it is mended)",
           RUN_FINISHED: "the others could not be played (bots that did not start)"}.get(
        state, "the run is still going, or ended without a word")
    return f"{played} of {scheduled} scheduled games played: {why}"


def dates(games: pd.DataFrame, published: str) -> dict[str, str]:
    """First and last game, and the time of publishing (all ISO-8601 UTC, shown by `timestamp`)."""
    started = [s for s in games["started_at"] if s]
    finished = [s for s in games["finished_at"] if s]
    return {"first_game": min(started) if started else "",
            "last_game": max(finished) if finished else "", "published": published}


# -- leaderboard and crosstable ------------------------------------------------------------------

def standings_rows(table: pd.DataFrame) -> list[dict]:
    return render.records(table)


# The rating systems whose cells the site's pages draw themselves (Elo with its interval and a
# bar, TrueSkill as mean ± sd). Every other system of the registry shows its own display columns
# (`render.display_cell`), so that a new system is on the site with no change to a template.
DRAWN_BY_THE_PAGES = ("elo", "trueskill")


def more_ratings(tables: Iterable[pd.DataFrame]) -> list[Display]:
    """The display columns of the other rating systems with values in any of `tables`."""
    tables = list(tables)
    return [d for system in registry.SYSTEMS if system.name not in DRAWN_BY_THE_PAGES
            for d in system.display
            if any(all(k in t.columns for k in d.keys) for t in tables)]


def score_colour(pct: float | None) -> str:
    """The crosstable's colour scale, the plots' (RdBu): red for a lost pairing, blue for a won
    one, deeper the further from even, none at 50%. Red and blue stay apart for colour-blind
    readers, whom the red-to-green scale lost (site review)."""
    if pct is None:
        return ""
    p = min(max(pct, 0.0), 1.0)
    hue = 215 if p > 0.5 else 5
    return f"hsl({hue} 70% 45% / {0.45 * abs(p - 0.5) * 2:.2f})"


def pair_matrix(table: pd.DataFrame, order: list[str]) -> dict:
    """Head-to-head cells for both directions of every pair, with the score and its colour."""
    cells: dict[str, dict[str, dict]] = {}
    for row in render.records(table):
        a, b = row["bot_a"], row["bot_b"]
        los, diff = row.get("los"), row.get("elo_diff")
        mirrored = {"bot_a": b, "bot_b": a, "games": row["games"], "wins": row["losses"],
                    "draws": row["draws"], "losses": row["wins"],
                    "elo_diff": -diff if diff is not None else None,
                    "elo_margin": row.get("elo_margin"),
                    "los": 1 - los if los is not None else None}
        for cell in (row, mirrored):
            n = cell["games"] or 0
            points = cell["wins"] + cell["draws"] / 2
            cells.setdefault(cell["bot_a"], {})[cell["bot_b"]] = {
                **{k: cell.get(k) for k in ("bot_a", "bot_b", "games", "wins", "draws", "losses",
                                            "elo_diff", "elo_margin", "los")},
                "points": points, "pct": points / n if n else None,
                "colour": score_colour(points / n if n else None),
            }
    pairs = sorted((c for row in cells.values() for c in row.values()),
                   key=lambda c: (c["bot_a"], c["bot_b"]))
    return {"bots": order, "cells": cells, "pairs": pairs}


# -- games -----------------------------------------------------------------------------------

def game_rows(games: pd.DataFrame, links: Mapping[str, str]) -> list[dict]:
    """Rows of the games list: every stored field plus link, result text and forfeit flag."""
    rows = []
    for row in render.records(games):
        rows.append({**row, "link": links.get(row["game_id"], ""),
                     "result_text": render.result_text(row["result"]),
                     "forfeit": _forfeiter(row) is not None,
                     "sandboxed_text": {1.0: "yes", 0.0: "no"}.get(_sandboxed(row), ""),
                     "time_text": game_time_text(row),
                     "time_odds": row.get("first_tc") != row.get("second_tc")})
    return rows


def _forfeiter(row: Mapping[str, Any]) -> int | None:
    return forfeiter_seat(row.get("reason"), row.get("forfeit_by"), row.get("result"))


def _sandboxed(row: Mapping[str, Any]) -> float | None:
    value = row.get("sandboxed")
    return float(value) if _isnum(value) else None


def reason_badge(row: Mapping[str, Any], replay: Mapping[str, Any] | None) -> dict | None:
    """What the reason badge of a game says, and whether it is bad news; None for nothing known.

    A recorded reason wins; a games file without one gets the engine's ending, or, when the
    recorded moves break the rules, where they do.
    """
    name = {1: row.get("first"), 2: row.get("second")}
    if row.get("reason"):
        seat = _forfeiter(row)
        text = str(row["reason"])
        if seat is not None:
            text += f" by {name[seat]}"
        return {"text": text, "bad": seat is not None or is_forfeit(text)}
    if replay and replay.get("error"):
        return {"text": f"illegal move at ply {replay['error_ply']}", "bad": True}
    if replay and replay.get("outcome"):
        return {"text": str(replay["outcome"]["reason"]), "bad": False}
    return None


def without_stderr(games: pd.DataFrame) -> pd.DataFrame:
    """The games with the bots' stderr lines cut from their forfeit details (`...; stderr: LINE`,
    what a crashed bot last wrote), for a site that leaves the stderr logs out."""
    if "detail" not in games or not games["detail"].astype(str).str.contains(
            STDERR_SAID, regex=False).any():
        return games
    games = games.copy()
    games["detail"] = games["detail"].astype(str).str.split(STDERR_SAID, n=1, regex=False).str[0]
    return games


def replay_warning(row: Mapping[str, Any], replay: Mapping[str, Any]) -> str | None:
    """One line for the command line when a game's recorded moves cannot all be replayed, or
    when they end the game otherwise than its stored result (a hand-edited games file)."""
    game = f"game {row['game_id']} ({row['first']} vs {row['second']})"
    if replay.get("error"):
        return f"{game}: {replay['error']}; its replay stops there"
    outcome = replay.get("outcome")
    if outcome is None:
        return None
    mismatch = render.result_mismatch(row.get("result"), row.get("reason"), outcome["winner"],
                                      outcome["reason"])
    return None if mismatch is None else f"{game}: {mismatch}; the site shows the stored result"


# -- bot pages ---------------------------------------------------------------------------------

def _nice_values(lo: float, hi: float) -> list[float]:
    """1-2-5 steps (0.1, 0.2, 0.5, 1, 2, 5, 10, ...) from the last one <= lo to the first >= hi."""
    values: list[float] = []
    for exponent in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 2):
        values += [round(m * 10.0 ** exponent, 12) for m in (1, 2, 5)]
    below = [v for v in values if v <= lo * (1 + 1e-9)]
    above = [v for v in values if v >= hi * (1 - 1e-9)]
    start, stop = below[-1], above[0]
    if stop <= start:
        stop = next(v for v in values if v > start)
    return [v for v in values if start <= v <= stop]


def histogram(values: list[float], bins: int = 24) -> dict | None:
    """A log-scale histogram of move times whose axis starts and ends on a labelled tick.

    Positions (`x`, `w`, tick `x`) are percentages of the axis width, heights percentages of the
    tallest bar; `peak` is the tallest bar, labelled with its count on the page.
    """
    if not values:
        return None
    nice = _nice_values(max(min(values), 0.1), max(max(values), 0.1))
    lo, hi = nice[0], nice[-1]
    llo, span = math.log10(lo), math.log10(hi) - math.log10(lo)
    width = span / bins
    counts = [0] * bins
    for v in values:
        i = int((math.log10(max(v, lo)) - llo) / width)
        counts[min(max(i, 0), bins - 1)] += 1
    top = max(counts)
    bars = [{"x": i * 100 / bins, "w": 100 / bins, "h": 100 * c / top, "count": c,
             "from": 10 ** (llo + i * width), "to": 10 ** (llo + (i + 1) * width)}
            for i, c in enumerate(counts)]
    shown = nice if len(nice) <= 8 else [v for v in nice if v in (lo, hi)
                                          or math.log10(v).is_integer()]
    ticks = [{"x": 100 * (math.log10(v) - llo) / span, "value": v, "label": f"{v:g}"}
             for v in shown]
    peak = bars[counts.index(top)]
    middle = peak["x"] + peak["w"] / 2
    # the label hangs from its bar's middle, but never past either end of the axis
    shift = 0 if middle < 10 else -100 if middle > 90 else -50
    return {"bars": bars, "ticks": ticks, "lo": lo, "hi": hi,
            "peak": {"x": middle, "count": top, "shift": shift}}


def limit_position(hist: Mapping[str, Any] | None, limit_ms: float | None) -> float | None:
    """Where the per-move limit falls on the histogram's axis (percent), None if off the axis."""
    if not hist or not limit_ms or not hist["lo"] <= limit_ms <= hist["hi"]:
        return None
    return 100 * (math.log10(limit_ms) - math.log10(hist["lo"])) / (
        math.log10(hist["hi"]) - math.log10(hist["lo"]))


def bot_context(bot: str, games: pd.DataFrame, standings: Mapping[str, list[dict]],
                links: Mapping[str, str], logs: Mapping[tuple[str, int], tuple[str, str]] | None,
                limit_ms: float | None) -> dict:
    """The page of one bot: ratings per scope, results per opponent, move times and forfeits.

    `logs` maps (game_id, seat) to (log file name, stderr tail); None when the logs are not
    published (the page then says so instead of showing them).
    """
    mine = games[(games["first"] == bot) | (games["second"] == bot)]
    rows: dict[tuple[str, str], dict] = {}
    times: list[float] = []
    times_by_variant: dict[str, list[float]] = {}
    forfeits = []
    played = []
    for g in render.records(mine):
        seat = 1 if g["first"] == bot else 2
        opponent = g["second"] if seat == 1 else g["first"]
        score = g["result"] if seat == 1 else 1 - g["result"]
        # a games file may hold only some of the stored columns
        played.append({"seq": g.get("seq"), "link": links.get(g.get("game_id"), ""),
                       "seat": seat, "variant": g["variant"] or UNNAMED_VARIANT,
                       "opponent": opponent, "outcome": OUTCOMES.get(score, "void"),
                       "reason": g.get("reason") or "", "plies": g.get("plies"),
                       "finished_at": g.get("finished_at") or ""})
        r = rows.setdefault((g["variant"], opponent), {
            "variant": g["variant"] or UNNAMED_VARIANT, "opponent": opponent, "games": 0,
            "wins": 0, "draws": 0, "losses": 0, "forfeits": 0, "opp_forfeits": 0, "as_first": 0,
            "first_points": 0.0})
        r["games"] += 1
        r["wins"] += score == 1
        r["draws"] += score == 0.5
        r["losses"] += score == 0
        if seat == 1:
            r["as_first"] += 1
            r["first_points"] += score
        forfeiter = _forfeiter(g)
        if forfeiter == seat:
            r["forfeits"] += 1
            log_name, tail = (logs or {}).get((g["game_id"], seat), ("", ""))
            forfeits.append({**g, "link": links.get(g["game_id"], ""), "seat": seat,
                             "opponent": opponent, "log_name": log_name, "log_tail": tail})
        elif forfeiter is not None:
            r["opp_forfeits"] += 1
        own = seat_times(g.get("move_ms"), seat, g.get("opening"))
        times.extend(own)
        times_by_variant.setdefault(g["variant"] or UNNAMED_VARIANT, []).extend(own)
    table = sorted(rows.values(), key=lambda r: (r["variant"], r["opponent"]))
    for r in table:
        r["points"] = r["wins"] + r["draws"] / 2
        r["pct"] = r["points"] / r["games"]
    summary = {scope: row for scope, scope_rows in standings.items()
               for row in scope_rows if row["bot"] == bot}
    time_rows = [{"variant": ALL, **time_summary(times)}]
    if len(times_by_variant) > 1:
        time_rows += [{"variant": v, **time_summary(t)} for v, t in sorted(times_by_variant.items())]
    hist = histogram(times)
    return {"bot": bot, "summary": summary, "by_opponent": table, "time_rows": time_rows,
            "hist": hist, "time_limit": limit_ms, "limit_x": limit_position(hist, limit_ms),
            "forfeits": forfeits,
            "latest": played[::-1][:LATEST_GAMES],  # the table is in the order played
            "n_played": len(played)}


LATEST_GAMES = 10  # a bot page's own short list; the games page has them all
OUTCOMES = {1: "win", 0.5: "draw", 0: "loss"}


# -- downloads -------------------------------------------------------------------------------

def retired_note(retired: Iterable[str]) -> str:
    """The line under a league's standings naming its retired versions, ranked with the
    others by their games (read as competitors where unmarked: a league over weeks)."""
    names = sorted(retired)
    return (f"Retired versions (replaced or removed: their games count, they play no more): "
            f"{', '.join(names)}.") if names else ""


def leaderboard_markdown(title: str, tables: Mapping[str, pd.DataFrame], labels: Mapping[str, str],
                         when: Mapping[str, str], n_games: int, arena_version: str,
                         retired: Iterable[str] = ()) -> str:
    """leaderboard.md: the same tables as `arena standings --format markdown`, one per scope."""
    days = dict.fromkeys(d[:10] for d in (when["first_game"], when["last_game"]) if d)
    period = " – ".join(days)  # one day once, not "2026-12-02 – 2026-12-02"
    meta = [f"{n_games} games", *([period] if period else []),
            *([f"arena {arena_version}"] if arena_version else [])]
    parts = [f"# {title}", "", ", ".join(meta) + ".", ""]
    for scope, table in tables.items():
        heading = labels[scope] if len(tables) > 1 else None
        parts.append(render.render_standings(table, "markdown", title=heading))
    if note := retired_note(retired):
        parts += [render.markdown_text(note), ""]
    parts.append(f"Published with arena {__version__}.")
    return "\n".join(parts) + "\n"
