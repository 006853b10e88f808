"""Which games standings and publish read: `--exclude BOT`, and the folder to give for a
tournament file or a games.db. `--exclude`: a bot removed from the tournament file (or
disqualified) stayed on the tables and the public site, with no way to leave it out (user
review)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from arena.reports.games_io import UnknownBotError, load_games, without_bots
from tests.test_cli_bad_input import arena, fails

GAMES = """first,second,result,variant,moves
alpha,bravo,1,classic,d1 d2 d1 d2 d1 d2 d1
bravo,alpha,1,classic,d1 d2 d1 d2 d1 d2 d1
alpha,cheat,0,classic,d1 d2 d1 d2 d1 d2 d1
cheat,bravo,1,classic,d1 d2 d1 d2 d1 d2 d1
"""


@pytest.fixture
def games_file(tmp_path: Path) -> Path:
    path = tmp_path / "games.csv"
    path.write_text(GAMES)
    return path


def test_without_bots_drops_every_game_of_the_bot(games_file):
    games = load_games(games_file)
    kept = without_bots(games, ["cheat"])
    assert len(kept) == 2 and "cheat" not in set(kept["first"]) | set(kept["second"])
    assert without_bots(games, []) is games
    with pytest.raises(UnknownBotError, match="no games of a bot named 'chet'; did you mean 'cheat'"):
        without_bots(games, ["chet"])
    # a league's versions: the bare name leaves them all out (league review), a version itself
    versions = {"cheat": "cheat@1", "bravo": "cheat@2"}
    league = games.assign(**{seat: [versions.get(n, n) for n in games[seat].astype(str)]
                             for seat in ("first", "second")})
    assert len(without_bots(league, ["cheat"])) == 0
    assert len(without_bots(league, ["cheat@1"])) == 2
    with pytest.raises(UnknownBotError):
        without_bots(league, ["che"])
    # a tournament's bot named `cheat` beside one named `cheat@2`: the name is that bot alone
    both = league.assign(first=["cheat" if n == "cheat@1" else n for n in league["first"]])
    assert "cheat@2" in set(without_bots(both, ["cheat"])["first"]) | set(
        without_bots(both, ["cheat"])["second"])


def test_standings_and_publish_leave_the_bot_out(games_file, tmp_path):
    done = arena("standings", str(games_file), "--exclude", "cheat", "--format", "csv")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert {row["bot"] for row in rows} == {"alpha", "bravo"}
    assert all(row["games"] == "2" for row in rows)
    fails(arena("standings", str(games_file), "--exclude", "chet"),
          "no games of a bot named 'chet'; did you mean 'cheat'?", code=2)
    site = tmp_path / "site"
    built = arena("publish", str(games_file), "--out", str(site), "--no-plots",
                  "--exclude", "cheat")
    assert built.returncode == 0, built.stderr
    pages = "".join(p.read_text() for p in site.rglob("*.html"))
    assert "alpha" in pages and "cheat" not in pages
    fails(arena("publish", str(games_file), "--out", str(site), "--exclude", "alpha",
                "--exclude", "bravo", "--exclude", "cheat"),
          "no games left to publish without alpha, bravo, cheat")


def test_a_tournament_file_or_games_db_names_the_folder_to_give(tmp_path):
    """`arena standings FILE.toml` / `games.db` said only "unknown file type" (user review)."""
    toml = tmp_path / "cup.toml"
    toml.write_text('output = "out/cup"\n[[bots]]\npath = "random"\n[[bots]]\npath = "greedy"\n')
    fails(arena("standings", str(toml)), f"{toml}: a tournament file: give its results folder, "
          "out/cup")
    league = tmp_path / "club.toml"
    league.write_text('variants = ["classic"]\n')
    fails(arena("standings", str(league)), f"{league}: a league file: give the league's folder")
    db = tmp_path / "games.db"
    db.write_bytes(b"")
    fails(arena("standings", str(db)), f"{db}: a results database: give its folder, {tmp_path}")


def test_publish_leaves_an_excluded_bots_settings_out_too(tmp_path, no_leftover_processes):
    """The site listed an excluded bot's time odds and command from the stored settings
    (review of the diff)."""
    toml = tmp_path / "odds.toml"
    toml.write_text('variants = ["classic:5x4"]\ngames = 2\noutput = "res"\n[time]\nmove_ms = 500\n'
                    '[[bots]]\npath = "random"\nname = "alpha"\n'
                    '[[bots]]\npath = "random"\nname = "bravo"\nargs = ["--seed", "2"]\n'
                    '[[bots]]\npath = "greedy"\nname = "cheat"\ntime = { move_ms = 900 }\n')
    ran = arena("run", str(toml), "-q", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    site = tmp_path / "site"
    built = arena("publish", str(tmp_path / "res"), "--out", str(site), "--no-plots",
                  "--exclude", "cheat")
    assert built.returncode == 0, built.stderr
    pages = "".join(p.read_text() for p in site.rglob("*.html"))
    assert "alpha" in pages and "cheat" not in pages
