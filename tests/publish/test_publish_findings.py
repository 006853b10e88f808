"""`arena publish` as a user meets it: bare games files, failed builds, private logs, bad moves.

Results directories are written through the store API (no bots run); the command runs as a
subprocess, as a user would run it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from arena.publish import site as site_module
from arena.publish.context import slugify
from arena.publish.swap import build_and_swap
from arena.referee import log_file_name
from arena.tournament.store import Store

REPO = Path(__file__).resolve().parents[2]
TAIL = "secret stderr line"


def arena(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True,
                          env=env, timeout=180)


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    return result


def make_results(directory: Path, publish_logs: bool | None = None) -> Path:
    """A results directory with two bots (one with author and language) and one forfeit."""
    settings = {"name": "cup", "file": str(directory / "cup.toml"), "format": "round-robin",
                "games": 2, "variants": ["classic"], "openings_file": None, "openings": 0,
                "concurrency": 1, "seed": 1, "restart": "on-failure", "gauntlet_bot": None,
                "time_control": {"move_ms": 1000, "base_ms": None, "increment_ms": 0,
                                 "startup_ms": 5000, "grace_ms": 200}}
    if publish_logs is not None:
        settings["publish_logs"] = publish_logs
    spec = SimpleNamespace(command=["/opt/ada/cbot"], args=[], cwd="/opt/ada",
                           program_hash="c0ffee" * 3, version="2.0", author="Ada Lovelace",
                           language="C")
    with Store(directory) as store:
        store.save_settings(settings, {"bots": {}})
        store.upsert_bots([SimpleNamespace(name="cbot", ref="/opt/ada", args=[], spec=spec)])
        store.add_game({"game_id": "g1", "variant": "classic", "first": "cbot", "second": "other",
                        "result": 1.0, "winner": 1, "reason": "line", "plies": 7,
                        "moves": "d1 d2 d1 d2 d1 d2 d1", "move_ms": [5, 6, 5, 6, 5, 6, 5]})
        store.add_game({"game_id": "g2", "variant": "classic", "first": "other", "second": "cbot",
                        "result": 1.0, "winner": 1, "reason": "crash", "forfeit_by": 2,
                        "plies": 1, "moves": "d4",
                        "detail": "exit code 3; stderr: no weights in /home/ada/private"})
    (directory / "logs").mkdir(exist_ok=True)
    (directory / "logs" / log_file_name("g2", 2, "cbot")).write_text(f"hello\n{TAIL}\n")
    return directory


def page(site: Path, bot: str) -> str:
    return (site / "bots" / f"{slugify(bot)}.html").read_text(encoding="utf-8")


def test_a_csv_with_only_first_second_result_publishes(tmp_path):
    csv = tmp_path / "games.csv"
    csv.write_text("first,second,result\na,b,1\nb,a,0.5\na,b,0\n")
    result = ok(arena("publish", str(csv), "--out", str(tmp_path / "site"), "--no-plots"))
    assert result.stderr == ""
    site = tmp_path / "site"
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "unnamed variant" in index and "None" not in index
    assert not (site / "games").exists()  # no moves, no replays
    games = (site / "games.html").read_text(encoding="utf-8")
    assert games.count("<tr data-variant") == 3 and 'href="games/' not in games
    assert {p.name for p in (site / "bots").glob("*.html")} == {"a.html", "b.html"}


def test_the_sites_csv_files_run_no_spreadsheet_formula(tmp_path):
    """The site's data files are downloaded by visitors: a league entrant named
    `=HYPERLINK(...)` must not become a formula in their spreadsheet."""
    csv = tmp_path / "games.csv"
    csv.write_text('first,second,result\n"=HYPERLINK(""http://x"")",-minus,1\n-minus,ok,0.5\n')
    ok(arena("publish", str(csv), "--out", str(tmp_path / "site"), "--no-plots"))
    for name in ("games.csv", "standings.csv", "crosstable.csv"):
        text = (tmp_path / "site" / "data" / name).read_text(encoding="utf-8")
        cells = [cell.strip('"') for line in text.splitlines() for cell in line.split(",")]
        assert "'-minus" in cells and not any(
            cell.startswith(("=", "-", "+", "@")) and not cell[1:2].isdigit() for cell in cells), (
            name, text)


def test_games_files_in_one_folder_publish_to_their_own_sites_by_default(tmp_path):
    for name, text in (("one.csv", "first,second,result\na,b,1\n"),
                       ("two.csv", "first,second,result\nc,d,0\n")):
        (tmp_path / name).write_text(text)
        result = ok(arena("publish", str(tmp_path / name), "--no-plots"))
        assert f"{name[:-4]}_site/index.html" in result.stdout
    assert "c.html" not in {p.name for p in (tmp_path / "one_site" / "bots").iterdir()}
    assert {p.name for p in (tmp_path / "two_site" / "bots").iterdir()} == {"c.html", "d.html"}


def test_a_failed_build_leaves_the_previous_site_untouched(tmp_path, games_df, monkeypatch):
    site = tmp_path / "site"
    site_module.build_site_from_games(games_df, site, settings={"name": "first"}, plots=False)
    before = {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()}

    def broken(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(site_module, "write_plots", broken)
    with pytest.raises(OSError, match="No space left"):
        site_module.build_site_from_games(games_df, site, settings={"name": "second"})
    after = {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # no half-built folder
    with pytest.raises(OSError):
        site_module.build_site_from_games(games_df, tmp_path / "new", settings={})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_build_and_swap_replaces_the_whole_folder(tmp_path, monkeypatch, exchange):
    if not exchange:
        monkeypatch.setattr("arena.publish.swap._exchange", lambda _a, _b: False)
    target = tmp_path / "live"
    target.mkdir()
    (target / "old.txt").write_text("old")

    def build(folder: Path) -> None:
        (folder / "new.txt").write_text("new")

    assert build_and_swap(target, build) == target
    assert [p.name for p in target.iterdir()] == ["new.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["live"]
    assert target.stat().st_mode & 0o755 == 0o755  # readable by a web server


def test_build_and_swap_through_a_symlink_keeps_the_link(tmp_path):
    real = tmp_path / "releases" / "site"
    real.mkdir(parents=True)
    link = tmp_path / "live"
    link.symlink_to(real, target_is_directory=True)
    build_and_swap(link, lambda folder: (folder / "index.html").write_text("v2"))
    assert link.is_symlink() and (link / "index.html").read_text() == "v2"


def test_a_variant_the_engine_does_not_know_gets_no_replay(tmp_path):
    csv = tmp_path / "games.csv"
    csv.write_text("first,second,result,variant,moves\na,b,1,misere,d1 d2\n")
    result = ok(arena("publish", str(csv), "--out", str(tmp_path / "site"), "--no-plots"))
    assert "warning: variant 'misere' is not one this arena knows" in result.stderr
    assert not (tmp_path / "site" / "games").exists()
    assert "misere" in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")


def test_logs_are_published_unless_turned_off(tmp_path):
    results = make_results(tmp_path / "res")
    ok(arena("publish", str(results), "--no-plots"))
    shown = page(results / "site", "cbot")
    assert TAIL in shown and "exit code 3" in shown
    # and beside the game itself, where an author reading it looks (bot author review)
    game = (results / "site" / "games" / "g2.html").read_text(encoding="utf-8")
    assert TAIL in game and "g2-2-cbot.log" in game
    assert TAIL not in (results / "site" / "games" / "g1.html").read_text(encoding="utf-8")
    ok(arena("publish", str(results), "--no-plots", "--no-logs"))
    hidden = page(results / "site", "cbot")
    assert TAIL not in hidden and "stderr logs are not published" in hidden
    assert "not published" in (results / "site" / "index.html").read_text(encoding="utf-8")
    # nor the stderr line a crash's detail quotes, on any page or in any download
    site_text = "".join(f.read_text(encoding="utf-8", errors="replace")
                        for f in (results / "site").rglob("*") if f.is_file())
    assert "exit code 3" in site_text and "/home/ada/private" not in site_text
    assert TAIL not in site_text


def test_the_stored_publish_logs_setting_is_honoured(tmp_path):
    results = make_results(tmp_path / "res", publish_logs=False)
    ok(arena("publish", str(results), "--no-plots"))
    assert TAIL not in page(results / "site", "cbot")


def test_author_language_and_a_human_tournament_panel(tmp_path):
    results = make_results(tmp_path / "res")
    ok(arena("publish", str(results), "--no-plots"))
    index = (results / "site" / "index.html").read_text(encoding="utf-8")
    assert "by Ada Lovelace · C" in index
    assert "by Ada Lovelace · C" in page(results / "site", "cbot")
    panel = re.search(r"<h2>Tournament</h2>(.*?)</section>", index, re.S).group(1)
    assert "None" not in panel and not re.search(r"\b[a-z]+_ms\b", panel), panel
    assert "1 s per move (200 ms grace; 5 s to start up, in the first move of a bot process)" in panel
    stamps = re.findall(r"<time[^>]*>([^<]*)</time>", index)
    assert stamps and all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", s) for s in stamps)
    assert "/opt/ada" not in index  # the publisher's folders stay private


def test_illegal_moves_warn_and_show_on_the_replay_page(tmp_path):
    csv = tmp_path / "games.csv"
    csv.write_text("first,second,result,variant,moves\n"
                   "a,b,1,classic,d1 d2 d1 d2 d1 d2 d1\n"
                   "b,a,0,classic,d1 d1 d1 d1 d1 d1 d1 d2\n")
    result = ok(arena("publish", str(csv), "--out", str(tmp_path / "site"), "--no-plots"))
    warnings = [ln for ln in result.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1 and "game 2 (b vs a): ply 7:" in warnings[0], result.stderr
    html = (tmp_path / "site" / "games" / "2.html").read_text(encoding="utf-8")
    assert re.search(r'<span class="tag reason bad">illegal move at ply 7</span>', html)
    ended = (tmp_path / "site" / "games" / "1.html").read_text(encoding="utf-8")
    assert '<span class="tag reason">line</span>' in ended


def test_a_stderr_tail_shows_hidden_characters_as_escapes(tmp_path):
    # a bot's `\u202e` reversed the bot page's text after it (site review)
    from arena.publish.load import log_tail

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / log_file_name("g2", 2, "cbot")).write_text(
        "fine\n\u202eevil rtl\x1b[31m\n\tat Main.main(Main.java:3)\n", encoding="utf-8")
    name, tail = log_tail(logs, "g2", 2, "cbot")
    assert tail == "fine\n\\u202eevil rtl\\x1b[31m\n    at Main.main(Main.java:3)"


def test_a_long_name_makes_a_file_name_of_bounded_length():
    # a 300-character bot name of a games file: "File name too long" stopped the build
    from arena.publish.context import SLUG_CHARS, Slugs

    slugs = Slugs()
    long_a, long_b = "W" * 300, "W" * 299 + "V"
    assert len(slugs(long_a)) == SLUG_CHARS
    assert slugs(long_b) == "W" * SLUG_CHARS + "-2"  # the same first 80: still two pages


def test_the_crosstable_legend_is_the_cells_scale():
    # the legend ran red-yellow-green while the cells run red-none-blue (site review)
    from arena.publish.context import score_colour

    css = (REPO / "arena" / "publish" / "static" / "style.css").read_text(encoding="utf-8")
    bar = re.search(r"\.scale-bar \{[^}]*\}", css).group(0)
    hues = [int(h) for h in re.findall(r"hsl\((\d+) ", bar)]
    assert hues[0] == int(re.match(r"hsl\((\d+)", score_colour(0.0)).group(1))
    assert hues[-1] == int(re.match(r"hsl\((\d+)", score_colour(1.0)).group(1))


def test_a_site_folder_with_files_of_the_organisers_is_not_replaced(tmp_path):
    # a web root holding a site and a CNAME lost the CNAME at the next publish (site review)
    csv = tmp_path / "games.csv"
    csv.write_text("first,second,result\na,b,1\nb,a,0.5\n")
    site = tmp_path / "site"
    ok(arena("publish", str(csv), "--out", str(site), "--no-plots"))
    ok(arena("publish", str(csv), "--out", str(site), "--no-plots"))  # its own files: rebuilt
    (site / "CNAME").write_text("arena.example.org\n")
    refused = arena("publish", str(csv), "--out", str(site), "--no-plots")
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert f"output folder {site} holds files its site did not make (CNAME)" in refused.stderr
    assert (site / "CNAME").read_text() == "arena.example.org\n"
    # a site built before the list of its files: judged by the names a site has
    (site / "CNAME").unlink()
    (site / site_module.SITE_MANIFEST).unlink()
    ok(arena("publish", str(csv), "--out", str(site), "--no-plots"))


def test_a_site_that_cannot_be_made_names_the_folder_asked_for(tmp_path):
    # "results/t2/standings.csv: File exists", "/proc/.arena_site.new-i3ydwe6_: No such file":
    # the build's temporary folder, or a message about the wrong path (site review)
    csv = tmp_path / "games.csv"
    csv.write_text("first,second,result\na,b,1\n")
    (tmp_path / "afile").write_text("")
    under_file = arena("publish", str(csv), "--out", str(tmp_path / "afile" / "x"), "--no-plots")
    assert under_file.returncode != 0
    assert under_file.stderr.strip() == (f"Error: cannot build the site: {tmp_path}/afile/x: "
                                         f"{tmp_path}/afile is a file, not a folder")
    assert not list(tmp_path.glob(".*new-*"))
    deeper = arena("publish", str(csv), "--out", str(tmp_path / "afile" / "sub" / "site"))
    assert deeper.stderr.strip().endswith(f"{tmp_path}/afile is a file, not a folder")
