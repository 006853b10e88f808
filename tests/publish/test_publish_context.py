"""What the site's pages show, checked on the pure page contexts: no browser, no files."""

from __future__ import annotations

import json
import math
import re
import shutil

import pandas as pd
import pytest

from arena.publish import context
from arena.publish.load import PublishError, clean_games, publish_logs_setting
from arena.publish.replay import replay_frames
from arena.ratings.pairs import pairwise_table
from arena.ratings.standings import compute_standings
from arena.reports.render import render_standings
from arena.stats import percentile

# What `arena.tournament.store.read_settings` returns for a small tournament (its real shape).
STORED = {
    "name": "cup", "file": "/home/ada/private/cup.toml", "format": "round-robin",
    "time_control": {"base_ms": None, "grace_ms": 200, "increment_ms": 0, "move_ms": 1000,
                     "startup_ms": 5000},
    "variants": ["classic"], "games": 12, "void_games": 0,
    "created_at": "2026-11-30T22:12:56Z", "updated_at": "2026-11-30T23:01:02.345Z",
    "arena_version": "0.1.0", "schema_version": 1,
    "bots": [
        {"name": "alpha", "ref": "/home/ada/bots/alpha", "command": ["/usr/bin/python3",
         "/home/ada/bots/alpha/bot.py"], "args": ["--fast"], "cwd": "/home/ada/bots/alpha",
         "program_hash": "ab" * 8, "version": "1.0", "author": "Ada", "language": "C"},
        {"name": "beta", "ref": "beta", "command": ["beta"], "args": [], "cwd": "",
         "program_hash": "", "version": "", "author": "", "language": ""},
    ],
    "settings": {"name": "cup", "file": "/home/ada/private/cup.toml", "description": "",
                 "format": "round-robin", "gauntlet_bot": None, "games": 4,
                 "variants": ["classic"], "openings_file": None, "openings": 0,
                 "openings_digest": "", "concurrency": 2, "seed": 3, "restart": "on-failure",
                 "output": "/home/ada/private/results", "time_control": {}, "bots": []},
}


def games(rows: list[tuple]) -> pd.DataFrame:
    """A games table from (first, second, result[, reason, forfeit_by]) tuples."""
    frame = pd.DataFrame([{"first": r[0], "second": r[1], "result": r[2],
                           "reason": r[3] if len(r) > 3 else "line",
                           "forfeit_by": r[4] if len(r) > 4 else float("nan"),
                           "variant": "classic"} for r in rows])
    return clean_games(frame)


def test_tournament_panel_is_worded_for_people():
    items = context.tournament_items(STORED)
    text = "\n".join(f"{label}: {value}" for label, value in items)
    assert "None" not in text and "null" not in text
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", text), text  # no raw keys such as grace_ms
    labels = dict(items)
    assert labels["Time control"] == ("1 s per move (200 ms grace; 5 s to start up, in the first "
                                      "move of a bot process)")
    assert labels["Openings"] == "none: every game starts on the empty board"
    # a small `games` plays few of the openings: the panel says how many (site review)
    builtin = {**STORED, "settings": {**STORED["settings"], "openings": 30}}
    played = pd.DataFrame({"variant": ["classic", "classic", "five", "five"],
                           "opening": ["d3 d4", "d3 d4", "d4 d5", ""]})
    assert dict(context.tournament_items(builtin, played))["Openings"] == (
        "30 from the built-in set; 2 played (each game pair plays one, both seats)")
    assert labels["Concurrency"] == "2 games at a time"
    # no more at a time than there were games (`concurrency = 100000`: new-user review)
    huge = {**STORED, "settings": {**STORED["settings"], "concurrency": 100000}}
    assert dict(context.tournament_items(huge, played))["Concurrency"] == "4 games at a time"
    assert labels["Tournament file"] == "cup.toml"  # never the publisher's folders
    assert "/home/ada" not in text
    # both stored timestamp spellings (with and without milliseconds) show one way
    assert labels["Started"] == "2026-11-30 22:12:56 UTC"
    assert labels["Last updated"] == "2026-11-30 23:01:02 UTC"


def test_a_stopped_run_says_how_much_of_its_schedule_was_played():
    # "Games per pairing: 40" beside "Games: 29", nothing saying the run had stopped (site
    # review); and "Last updated" before the last game on a site published during the run
    assert "Progress" not in dict(context.tournament_items(STORED))  # an older store
    done = {**STORED, "scheduled_games": 12, "run_state": "finished"}
    assert "Progress" not in dict(context.tournament_items(done))
    stopped = {**STORED, "scheduled_games": 40, "run_state": "stopped"}
    assert dict(context.tournament_items(stopped))["Progress"] == (
        "12 of 40 scheduled games played: the run stopped before the end (run it again to go "
        "on, once what stopped it is mended)")
    running = {**stopped, "run_state": "running", "void_games": 2}  # void games are not played
    assert dict(context.tournament_items(running))["Progress"] == (
        "10 of 40 scheduled games played: the run is still going, or ended without a word")
    # finished with games no bot could start (start_failure = "forfeit" skips them): not
    # "stopped" (diff review)
    cut = {**STORED, "scheduled_games": 14, "run_state": "finished"}
    assert dict(context.tournament_items(cut))["Progress"] == (
        "12 of 14 scheduled games played: the others could not be played (bots that did not "
        "start)")
    later = pd.DataFrame({"finished_at": ["2026-11-30T23:00:00Z", "2026-11-30T23:05:00Z"]})
    assert dict(context.tournament_items(stopped, later))["Last updated"] == (
        "2026-11-30 23:05:00 UTC")


def test_time_control_wording_for_a_clock():
    tc = {"base_ms": 60000, "increment_ms": 500, "move_ms": 2000, "grace_ms": 0, "startup_ms": 0}
    assert context.time_control_text(tc) == "60 s per game + 500 ms per move, at most 2 s per move"


def test_games_file_settings_show_nothing_invented():
    assert context.tournament_items({}) == []


def test_bot_author_and_language_come_from_the_store():
    frame = games([("alpha", "beta", 1.0), ("beta", "alpha", 0.5)])
    infos = context.bot_infos(frame, STORED)
    assert (infos["alpha"]["author"], infos["alpha"]["language"]) == ("Ada", "C")
    assert infos["alpha"]["byline"] == "by Ada · C"
    assert infos["alpha"]["command"] == "python …/alpha/bot.py --fast"
    assert infos["beta"]["byline"] == ""
    plain = context.bot_infos(frame, {})  # a games file: no bots table, nothing to show
    assert plain["alpha"]["byline"] == "" and plain["alpha"]["command"] == ""


def test_crosstable_colour_grows_with_the_score():
    rows = [("a", "b", 1.0)] * 14 + [("a", "b", 0.0)] * 6 + [("a", "c", 1.0)] * 20 \
        + [("b", "c", 0.5)] * 20
    frame = games(rows)
    matrix = context.pair_matrix(pairwise_table(frame), ["a", "b", "c"])
    cells = matrix["cells"]
    assert cells["a"]["b"]["points"] == 14 and cells["b"]["a"]["points"] == 6
    # blue for a won pairing, red for a lost one (the plots' RdBu), deeper further from even
    shade = {pair: re.match(r"hsl\((\d+) 70% 45% / ([\d.]+)\)",
                            cells[pair[0]][pair[1]]["colour"]).groups()
             for pair in (("a", "c"), ("a", "b"), ("b", "c"), ("b", "a"), ("c", "a"))}
    assert shade[("a", "c")] == ("215", "0.45") and shade[("c", "a")] == ("5", "0.45")
    assert shade[("b", "c")][1] == "0.00"  # even: no colour
    assert shade[("a", "b")][0] == "215" and shade[("b", "a")][0] == "5"
    assert float(shade[("a", "c")][1]) > float(shade[("a", "b")][1]) > 0
    assert len(matrix["pairs"]) == 6  # both directions of the three pairs


@pytest.mark.parametrize("values", [
    [400 + 5 * i for i in range(110)],          # a bot that spends most of a 1 s budget
    [0.05, 0.2, 3.0, 17.0, 950.0, 999.0],       # sub-millisecond to the limit
    [42.0] * 10,                                # every move the same time
    [0.0, 0.0, 1.0],
])
def test_histogram_bars_lie_within_the_labelled_axis(values):
    hist = context.histogram(values)
    ticks = hist["ticks"]
    assert ticks[0]["x"] == pytest.approx(0) and ticks[-1]["x"] == pytest.approx(100)
    assert ticks[0]["value"] == hist["lo"] and ticks[-1]["value"] == hist["hi"]
    assert hist["lo"] <= max(min(values), 0.1) and max(values) <= hist["hi"]
    assert all(0 <= b["x"] and b["x"] + b["w"] <= 100 + 1e-9 for b in hist["bars"])
    assert sum(b["count"] for b in hist["bars"]) == len(values)
    tallest = max(hist["bars"], key=lambda b: b["count"])
    assert hist["peak"]["count"] == tallest["count"]
    assert ticks[0]["value"] <= tallest["from"] and tallest["to"] <= ticks[-1]["value"] * 1.000001
    labels = [t["label"] for t in ticks]
    assert all(re.fullmatch(r"[0-9.]+", label) for label in labels), labels


def test_bot_page_times_use_the_one_percentile_rule():
    frame = games([("a", "b", 1.0), ("b", "a", 0.0)])
    frame["move_ms"] = [json.dumps([1, 100, 2, 100, 3, 100, 4, 100, 5, 100, 10]),
                        json.dumps([100, 6, 100, 7, 100, 8, 100, 9])]
    standings = {context.ALL: context.standings_rows(compute_standings(frame))}
    page = context.bot_context("a", frame, standings, {}, None, 5)
    mine = [1, 2, 3, 4, 5, 10, 6, 7, 8, 9]
    row = page["time_rows"][0]
    assert row["n"] == 10 and row["p90"] == pytest.approx(percentile(mine, 90)) == 9.1
    assert row["p50"] == pytest.approx(5.5)
    assert 0 < page["limit_x"] < 100  # the 5 ms limit is on the 1..10 ms axis


def test_a_bot_page_lists_its_latest_games_from_its_side():
    """A bot page linked only to the filtered games page (site review): now its own last games,
    newest first, each result as the bot's win, draw or loss in either seat."""
    rows = [("a", "b", 1.0), ("b", "a", 1.0), ("c", "b", 0.5)] + [("a", "c", 0.0)] * 10
    frame = games(rows)
    standings = {context.ALL: context.standings_rows(compute_standings(frame))}
    links = {game_id: f"games/{game_id}.html" for game_id in frame["game_id"]}
    page = context.bot_context("a", frame, standings, links, None, None)
    latest = page["latest"]
    assert page["n_played"] == 12 and len(latest) == context.LATEST_GAMES
    assert [g["seq"] for g in latest] == sorted(
        frame.loc[(frame["first"] == "a") | (frame["second"] == "a"), "seq"], reverse=True)[:10]
    assert {g["outcome"] for g in latest} == {"loss"} and latest[0]["opponent"] == "c"
    early = context.bot_context("a", frame.iloc[:3], standings, links, None, None)["latest"]
    assert [(g["opponent"], g["seat"], g["outcome"]) for g in early] == [
        ("b", 2, "loss"), ("b", 1, "win")]
    assert early[0]["link"] == links[frame["game_id"][1]]


def test_reason_badge_never_empty():
    row = {"first": "a", "second": "b", "reason": "", "forfeit_by": math.nan}
    illegal = replay_frames("classic", "d1 d1 d1 d1 d1 d1 d1")
    assert context.reason_badge(row, illegal) == {"text": "illegal move at ply 7", "bad": True}
    won = replay_frames("classic", "d1 d2 d1 d2 d1 d2 d1")
    assert context.reason_badge(row, won) == {"text": "line", "bad": False}
    assert context.reason_badge(row, replay_frames("classic", "d1")) is None
    recorded = {**row, "reason": "timeout", "forfeit_by": 2.0}
    assert context.reason_badge(recorded, won) == {"text": "timeout by b", "bad": True}
    message = context.replay_warning({**row, "game_id": "g7"}, illegal)
    assert message.startswith("game g7 (a vs b): ply 7:")


def test_a_games_file_with_only_first_second_result_is_one_unnamed_variant():
    frame = clean_games(pd.DataFrame({"first": ["a", "b"], "second": ["b", "a"],
                                      "result": [1.0, 0.5]}))
    variants, scopes, labels = context.scopes_of(frame)
    assert variants == [""] and scopes == [context.ALL]
    assert labels[context.ALL] == context.UNNAMED_VARIANT
    rows = context.game_rows(frame, {})
    assert [r["result_text"] for r in rows] == ["1-0", "½-½"] and rows[0]["link"] == ""


def test_clean_games_needs_the_three_columns():
    with pytest.raises(PublishError, match="lacks columns: result"):
        clean_games(pd.DataFrame({"first": ["a"], "second": ["b"]}))


def test_publish_logs_setting():
    assert publish_logs_setting({}) is True
    assert publish_logs_setting(STORED) is True
    assert publish_logs_setting({"settings": {"publish_logs": False}}) is False


def test_markdown_leaderboard_is_the_standings_table():
    frame = games([("a", "b", 1.0), ("b", "a", 0.5), ("a", "b", 1.0)])
    table = compute_standings(frame)
    when = context.dates(frame, "2026-11-30T22:00:00.000Z")
    text = context.leaderboard_markdown("cup", {context.ALL: table}, {context.ALL: "classic"},
                                        when, 3, "0.1.0")
    assert text.startswith("# cup\n\n3 games, arena 0.1.0.\n")
    assert render_standings(table, "markdown") in text
    # games of one day give that day once (site review)
    one_day = {"first_game": "2026-12-02T10:00:00Z", "last_game": "2026-12-02T11:00:00Z"}
    text = context.leaderboard_markdown("cup", {context.ALL: table}, {context.ALL: "classic"},
                                        one_day, 3, "")
    assert text.startswith("# cup\n\n3 games, 2026-12-02.\n")


def test_a_stored_result_its_moves_contradict_is_warned_about():
    """A hand-edited result (1-0 where the second player's line ends the game) was published
    without a word, though publish replays every game."""
    moves = "d1 d2 d1 d2 d1 d3 d4 d2 d7 d2"  # player 2 completes column 2 at ply 10
    replay = replay_frames("classic", moves)
    assert replay["outcome"] == {"winner": 2, "reason": "line"}

    def warning(result: float, reason: str = "line") -> str | None:
        row = {"game_id": "g1", "first": "a", "second": "b", "result": result, "reason": reason}
        return context.replay_warning(row, replay)

    assert warning(0.0) is None and warning(0.0, "") is None
    assert warning(1.0) == ("game g1 (a vs b): its stored result 1-0 (line) is not how its "
                            "moves end (player 2 wins, line); the site shows the stored result")
    assert "½-½ (full)" in warning(0.5, "full")
    assert "0-1 (timeout)" in warning(0.0, "timeout")  # a forfeit after the game was over
    assert warning(float("nan")) is None  # void: nothing stored to contradict
    unfinished = replay_frames("classic", "d1 d2")
    assert context.replay_warning({"game_id": "g2", "first": "a", "second": "b", "result": 1.0,
                                   "reason": "crash"}, unfinished) is None


def test_a_leagues_retired_versions_are_marked(tmp_path):
    from click.testing import CliRunner

    from arena.commands.league import command as league_command

    """The site ranked a replaced version among the active bots with nothing to tell them
    apart (`league status` said "retired")."""
    from arena.league import registry
    from arena.publish.load import load_results
    from arena.tournament.store import Store

    folder = registry.init_league(tmp_path / "club", {"variants": ["classic"],
                                                      "time_control": {"move_ms": 50}})
    for version in range(2):  # two programs: the same one again would not be a new version
        program = tmp_path / f"random-{version}"
        shutil.copytree(registry.check_source("random"), program)
        (program / "bot.py").write_text((program / "bot.py").read_text() + f"# {version}\n")
        entry, spec = registry.snapshot(folder, program, "random")
        registry.add_version(folder, "random", entry, spec, key="k" * 20)
    with Store(folder) as store:
        store.add_game({"game_id": "g1", "variant": "classic", "first": "random@1",
                        "second": "random@2", "result": 1.0, "reason": "line", "plies": 7,
                        "moves": "d1 d2 d1 d2 d1 d2 d1"}, pair_id="p1")
    site_input = load_results(folder)
    assert site_input.settings["retired"] == ["random@1"]
    infos = context.bot_infos(site_input.games, site_input.settings)
    assert infos["random@1"]["byline"] == "by arena · python · retired"
    assert infos["random@2"]["byline"] == "by arena · python"
    # the Markdown download and `league status` name them too (they were ranked unmarked)
    from arena.publish.site import build_site

    build_site(folder, tmp_path / "site", plots=False)
    markdown = (tmp_path / "site" / "leaderboard.md").read_text()
    assert "Retired versions (replaced or removed" in markdown and r"random\@1." in markdown
    status = CliRunner().invoke(league_command, ["status", str(folder)]).output
    assert "Retired versions (replaced or removed: their games count, they play no more): " \
           "random@1." in status
