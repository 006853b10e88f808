"""Leagues end to end through `python -m arena league ...` with real subprocess bots."""

from __future__ import annotations

import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import ROOT, processes_matching

BAD_BOT = """import sys
print("hello name=bad", flush=True)
for line in sys.stdin:
    if line.startswith("turn"):
        print("move banana", flush=True)
"""


def arena(*args: str, check: bool = True, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})})
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def games(folder: Path) -> list[tuple]:
    with sqlite3.connect(f"file:{folder / 'games.db'}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT game_id, pair_id, first, second, variant, opening, result "
                            "FROM games ORDER BY seq").fetchall()


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


@pytest.fixture(scope="module")
def league_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("template") / "league"
    arena("league", "init", str(folder), "--variants", "classic,popout", "--move-ms", "200")
    for bot in ("random", "greedy"):
        arena("league", "submit", str(folder), bot)
    return folder


@pytest.fixture
def league(tmp_path: Path, league_template: Path) -> Path:
    """A league of random and greedy, each test its own copy: submitting checks each bot by
    playing it (about 3 s for the two), and a league folder holds only relative paths."""
    folder = tmp_path / "league"
    shutil.copytree(league_template, folder)
    return folder


def start_run(folder: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "arena", "league", "run", str(folder), "-j", "2", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def stop_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass
    proc.communicate(timeout=60)


def test_submissions_and_new_versions_are_picked_up_while_running(league: Path, no_leftover_processes):
    run = start_run(league)
    try:
        wait_for(lambda: len(games(league)) >= 4, "the first games")
        arena("league", "submit", str(league), "random", "--name", "late", "--author", "Ada",
              "--key", "ada's own key")
        wait_for(lambda: any("late@1" in (g[2], g[3]) for g in games(league)), "late@1 to play")
        # somebody else cannot replace Ada's bot: a new version needs its key (refused before
        # the checks, nothing stored)
        for key in ([], ["--key", "not ada's key"]):
            refused = arena("league", "submit", str(league), "random", "--name", "late", *key,
                            check=False)
            assert refused.returncode == 1 and "late" in refused.stderr, refused.stderr
            assert len(refused.stderr.strip().splitlines()) == 1
        changed = league.parent / "random-v2"  # a new version is a new program
        shutil.copytree(Path(__file__).parents[2] / "bots" / "random", changed)
        (changed / "bot.py").write_text((changed / "bot.py").read_text() + "# v2\n")
        arena("league", "submit", str(league), str(changed),
              "--name", "late", env={"ARENA_LEAGUE_KEY": "ada's own key"})
        wait_for(lambda: any("late@2" in (g[2], g[3]) for g in games(league)), "late@2 to play")
        arena("league", "remove", str(league), "greedy")
        # Pairs that started before the removal may still finish; none start after it.
        mark = len(games(league)) + 4
        wait_for(lambda: len(games(league)) >= mark + 6, "games after the removal")
    finally:
        stop_group(run, signal.SIGINT)
    assert run.returncode == 130, run.stderr  # as `run` and `play` after Ctrl-C
    rows = games(league)
    last_v1 = max(k for k, g in enumerate(rows) if "late@1" in (g[2], g[3]))
    first_v2 = min(k for k, g in enumerate(rows) if "late@2" in (g[2], g[3]))
    assert all("late@1" not in (g[2], g[3]) for g in rows[first_v2 + 4:])  # v2 replaced v1
    assert last_v1 < first_v2 + 4
    assert all("greedy@1" not in (g[2], g[3]) for g in rows[mark:])
    status = arena("league", "status", str(league)).stdout
    assert "late@1" in status and "retired" in status and "by Ada" in status
    assert "late@3" not in status  # the refused submissions stored nothing


def test_a_first_submission_without_a_key_gets_one_shown_once(tmp_path: Path):
    from arena.league import keys

    folder = tmp_path / "keys"
    arena("league", "init", str(folder), "--variants", "classic", "--move-ms", "200")
    done = arena("league", "submit", str(folder), "random")
    line = done.stdout.strip().splitlines()[-1]
    assert line.startswith("submission key of random: ")
    key = line.split(": ", 1)[1].split(" ", 1)[0]
    with sqlite3.connect(f"file:{folder / 'games.db'}?mode=ro", uri=True) as conn:
        stored = conn.execute("SELECT key_hash FROM league_keys WHERE name='random'").fetchone()[0]
        assert key.encode() not in b"".join(  # only a hash of it is kept
            str(v).encode() for row in conn.execute("SELECT * FROM league_keys") for v in row)
    assert keys.matches(key, stored) and not keys.matches(key + "x", stored)
    refused = arena("league", "submit", str(folder), "random", check=False)
    assert "has a submission key" in refused.stderr
    # a lost key: the organiser makes a new one, and the old one stops working
    reset = arena("league", "key", str(folder), "random").stdout
    fresh = reset.split(": ", 1)[1].split(" ", 1)[0]
    with sqlite3.connect(f"file:{folder / 'games.db'}?mode=ro", uri=True) as conn:
        stored = conn.execute("SELECT key_hash FROM league_keys WHERE name='random'").fetchone()[0]
    assert keys.matches(fresh, stored) and not keys.matches(key, stored)
    unknown = arena("league", "key", str(folder), "nobody", check=False)
    assert unknown.returncode == 1 and "no bot named 'nobody'" in unknown.stderr
    # look-alike names are refused before any check
    for lookalike, why in (("Random", "too close to 'random'"), ("random\u200b", "U+200B")):
        refused = arena("league", "submit", str(folder), "random", "--name", lookalike, check=False)
        assert refused.returncode == 1 and why in refused.stderr, refused.stderr


def test_sigkill_mid_game_never_loses_or_repeats_a_game_and_seats_stay_balanced(league: Path):
    for round_no in range(3):
        run = start_run(league)
        try:
            target = len(games(league)) + 3
            wait_for(lambda target=target: len(games(league)) >= target, f"games in round {round_no}")
        finally:
            stop_group(run, signal.SIGKILL)
        wait_for(lambda: not processes_matching(str(league)), "the bots of the killed league to end", 30)
    arena("league", "run", str(league), "-j", "2", "--until", "6")
    rows = games(league)
    ids = [g[0] for g in rows]
    assert len(ids) == len(set(ids))
    by_pair: dict[str, list[tuple]] = {}
    for g in rows:
        by_pair.setdefault(g[1], []).append(g)
    half = [p for p, gs in by_pair.items() if len(gs) != 2]
    assert not half, f"pairs cut in half were not completed: {half}"
    for pair, gs in by_pair.items():
        if len(gs) == 2:
            (a, b) = gs
            assert (a[2], a[3]) == (b[3], b[2]), f"{pair}: seats not swapped"
            assert (a[4], a[5]) == (b[4], b[5]), f"{pair}: variant or opening differs"


def test_a_failing_submission_changes_nothing(league: Path, tmp_path: Path):
    bad = tmp_path / "bad.py"
    bad.write_text(BAD_BOT)
    before = sorted(p.relative_to(league) for p in (league / "bots").rglob("*"))
    status_before = arena("league", "status", str(league)).stdout
    proc = arena("league", "submit", str(league), str(bad), check=False)
    assert proc.returncode == 1
    assert "refused" in proc.stderr and "FAIL" in proc.stderr and "Traceback" not in proc.stderr
    assert sorted(p.relative_to(league) for p in (league / "bots").rglob("*")) == before
    assert arena("league", "status", str(league)).stdout == status_before


CLASSIC_ONLY_BOT = """from arena.sdk import run_bot


def choose(turn):
    if turn.variant.spec != "classic":
        raise SystemExit(3)  # plays nothing but classic 7x6
    return turn.game.legal_moves()[0]


run_bot(choose, name="classiconly")
"""


def test_a_submission_is_checked_in_the_league_variants_only(league: Path, tmp_path: Path):
    bot = tmp_path / "classiconly.py"
    bot.write_text(CLASSIC_ONLY_BOT)
    classic = tmp_path / "classic-league"
    arena("league", "init", str(classic), "--variants", "classic", "--move-ms", "200")
    accepted = arena("league", "submit", str(classic), str(bot))
    assert "submitted classiconly@1" in accepted.stdout
    refused = arena("league", "submit", str(league), str(bot), check=False)  # classic, popout
    assert refused.returncode == 1 and "FAIL  games: pops (popout)" in refused.stderr
    assert "five" not in refused.stderr and "classic:" not in refused.stderr


def test_a_league_whose_first_variant_fixes_column_4_takes_bots(tmp_path: Path):
    """The check's set opening and first turn are drops the league's first variant allows (in
    five:4x6 columns 1 and 4 are full from the start, so not d4)."""
    folder = tmp_path / "narrow"
    arena("league", "init", str(folder), "--variants", "five:4x6", "--move-ms", "200")
    assert "submitted random@1" in arena("league", "submit", str(folder), "random").stdout


def test_a_league_folder_name_with_uri_characters_works(tmp_path: Path):
    folder = tmp_path / "club #1?"
    arena("league", "init", str(folder), "--variants", "classic,classic:9x6,connect=5")
    status = arena("league", "status", str(folder))
    assert "0 games" in status.stdout


def test_league_errors_are_one_line(tmp_path: Path, league: Path):
    missing = arena("league", "run", str(tmp_path / "nowhere"), check=False)
    assert missing.returncode == 1 and "not a league" in missing.stderr
    again = arena("league", "init", str(league), check=False)
    assert again.returncode == 1 and "already holds a league" in again.stderr
    bad_until = arena("league", "run", str(league), "--until", "soon", check=False)
    assert bad_until.returncode == 1 and "--until 'soon'" in bad_until.stderr
    typed = arena("league", "submit", str(league), "./nobot", check=False)
    assert "no bot at './nobot'" in typed.stderr  # as typed, not `nobot` (league review)
    unknown = arena("league", "remove", str(league), "nobody", check=False)
    assert unknown.returncode == 1 and "greedy" in unknown.stderr
    for proc in (missing, again, bad_until, unknown):
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    arena("league", "remove", str(league), "greedy")
    after = arena("league", "remove", str(league), "nobody", check=False)
    assert "(active: random)" in after.stderr  # not the retired greedy
    # submitted again after its removal: nothing is replaced, it comes back (league review)
    arena("league", "key", str(league), "greedy", "--key", "k-greedy-2")
    back = arena("league", "submit", str(league), "greedy", "--key", "k-greedy-2")
    # the same program as its removed version: that version comes back with its games and
    # rating, not a new one from zero (a league over weeks: a removal could not be undone)
    assert ("submitted greedy@1 (the same program as before: back in play with its games and "
            "rating): program") in back.stdout
    status = arena("league", "status", str(league)).stdout
    assert "greedy@1" in status and "greedy@2" not in status


def test_results_commands_work_on_a_league(league: Path, tmp_path: Path):
    ran = arena("league", "run", str(league), "-j", "1", "--until", "4", "--publish-every", "4")
    assert "games this run; reached --until 4 games (the pairs in flight" in ran.stdout
    # a line a game, as `arena run` prints (a league run into a log said nothing of them)
    lines = [line for line in ran.stdout.splitlines() if re.match(r"\[\d+\] P\d+", line)]
    assert len(lines) >= 4 and re.search(r"classic  \S+ (1-0|0-1|½-½|void) \S+  \(", lines[0])
    assert (league / "site" / "index.html").is_file()
    # a league stores only its mode ("auto"): the site said "not available" of sandboxed games
    from arena.tournament.store import load_games

    ran_in = set(load_games(league)["sandboxed"].astype(int))
    said = "bubblewrap: no network" if ran_in == {1} else "none: bubblewrap was not available"
    assert f"Sandbox</dt><dd>{said}" in (league / "site" / "index.html").read_text()
    standings = arena("standings", str(league), "--format", "csv").stdout
    assert "random@1" in standings and "greedy@1" in standings
    header, *rows = standings.splitlines()
    assert header.startswith("rank,bot,author,language,") and all(",arena,python," in r for r in rows)
    assert "author" in arena("standings", str(league)).stdout  # who wrote each bot, from bot.toml
    out = tmp_path / "games.csv"
    arena("export", str(league), "--out", str(out))
    assert out.read_text().count("\n") == 5


def test_a_league_file_sets_variants_time_openings_and_sandbox(tmp_path: Path):
    (tmp_path / "openings.txt").write_text("d4 d3\nd3 d4\n")
    config = tmp_path / "club.toml"
    config.write_text('name = "club"\nvariants = ["classic", "popout"]\nopenings = "openings.txt"\n'
                      'sandbox = "off"\n[time]\nmove_ms = 150\nbase_ms = 2000\n'
                      '[limits]\nmemory_mb = 768\n')
    folder = tmp_path / "club"
    made = arena("league", "init", str(folder), "--config", str(config))
    # the clock too: `150 ms per move` alone hid it (league review)
    assert "(classic, popout; 2 s per game, at most 150 ms per move)" in made.stdout
    from arena.league.registry import settings

    stored = settings(folder)
    assert stored["variants"] == ["classic", "popout"] and stored["openings"] == ["d4 d3", "d3 d4"]
    assert stored["time_control"]["move_ms"] == 150 and stored["sandbox"] == "off"
    assert stored["limits"] == {"memory_mb": 768}
    config.write_text('variants = ["classic"]\ngames = 4\n')
    bad = arena("league", "init", str(tmp_path / "other"), "--config", str(config), check=False)
    assert bad.returncode == 1 and "club.toml:2" in bad.stderr and "games" in bad.stderr
    assert "not of league files: the league's scheduler decides" in bad.stderr  # was: 'name'?
    assert not (tmp_path / "other").exists()


def test_a_league_plays_openings_each_variants_own_by_default(tmp_path: Path):
    # from the empty board, two bots that always answer alike replayed one game pair, and the
    # scheduler, finding their order least certain, gave them most of the league's games
    from arena.league.registry import settings
    from arena.tournament.config import league_openings

    arena("league", "init", str(tmp_path / "a"), "--variants", "classic,five")
    stored = settings(tmp_path / "a")["openings"]
    assert league_openings(stored, "classic")[:2] == [["d3", "d4"], ["d5", "d4"]]
    assert league_openings(stored, "five")[:2] == [["d4", "d5"], ["d6", "d5"]]
    assert len(stored) == 12
    arena("league", "init", str(tmp_path / "b"), "--openings", "none")
    assert settings(tmp_path / "b")["openings"] == []
    # a line of a league file for one variant stays that variant's
    (tmp_path / "open.txt").write_text("d4\npopout: d1 d2\n")
    (tmp_path / "c.toml").write_text('variants = ["classic", "popout"]\nopenings = "open.txt"\n')
    arena("league", "init", str(tmp_path / "c"), "--config", str(tmp_path / "c.toml"))
    stored = settings(tmp_path / "c")["openings"]
    assert league_openings(stored, "classic") == [["d4"]]
    assert league_openings(stored, "popout") == [["d4"], ["d1", "d2"]]
    assert league_openings([], "classic") == [[]]
    (tmp_path / "d.toml").write_text('variants = ["classic"]\n')
    arena("league", "init", str(tmp_path / "d"), "--config", str(tmp_path / "d.toml"))
    assert len(settings(tmp_path / "d")["openings"]) == 6  # a file without `openings`: builtin
    missing = arena("league", "init", str(tmp_path / "e"), "--openings", "nosuch.txt", check=False)
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert ("--openings nosuch.txt: no such openings file (or use 'builtin' or 'none')"
            in missing.stderr)


def test_a_tournament_run_refuses_a_league_folder(league: Path, tmp_path: Path):
    """`arena run FILE -o LEAGUE` stored its games and settings in the league (which then
    failed with a traceback), and with --fresh moved the league's games aside."""
    file = tmp_path / "t.toml"
    file.write_text('variants = ["classic"]\ngames = 2\n[[bots]]\npath = "random"\n'
                    '[[bots]]\npath = "greedy"\n')
    for extra in ([], ["--fresh"]):
        refused = arena("run", str(file), "-o", str(league), *extra, check=False)
        assert refused.returncode == 1 and "is a league's folder" in refused.stderr, refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
    assert not list(league.glob("backup-*")) and games(league) == []
    assert "2 version(s) of 2 bot(s)" in arena("league", "status", str(league)).stdout


def test_a_submission_must_bring_its_own_program(league: Path, tmp_path: Path):
    """A manifest naming a program outside its folder (another entrant's submitted engine,
    whose path the site and /proc show) played that program as its own (sandbox review)."""
    engine = tmp_path / "victim" / "engine"
    engine.parent.mkdir()
    engine.write_text("#!/bin/sh\nexit 0\n")
    engine.chmod(0o755)
    thief = tmp_path / "thief"
    thief.mkdir()
    (thief / "bot.toml").write_text(f'name = "thief"\ncommand = "{engine}"\n')
    refused = arena("league", "submit", str(league), str(thief), check=False)
    assert refused.returncode == 1 and "outside its folder" in refused.stderr, refused.stderr
    assert "thief" not in arena("league", "status", str(league)).stdout


def test_a_second_league_run_refuses_before_it_announces_play(league: Path):
    """It printed `league ...: playing` and then refused (league review)."""
    from arena.tournament.store import RunLock

    with RunLock(league, "arena league run"):
        second = arena("league", "run", str(league), "--until", "2", check=False)
    assert second.returncode == 1 and "in use by another `arena league run`" in second.stderr
    assert "playing" not in second.stdout
    first = arena("league", "run", str(league), "--until", "2")
    assert first.stdout.startswith(f"league {league}: playing (Ctrl-C stops")


def test_a_bad_cluster_address_reads_as_in_arena_run(tmp_path: Path):
    # `league run` said `--cluster: ...` where `run` says click's `Invalid value for --cluster`
    arena("league", "init", str(tmp_path / "club"))
    league_run = arena("league", "run", str(tmp_path / "club"), "--cluster", "local:x", check=False)
    assert league_run.returncode == 2
    assert ("Error: Invalid value for --cluster: 'local:x' is not local:N (N worker processes on "
            "this machine)") in league_run.stderr


def test_a_refused_submission_names_the_check_that_fails_as_the_league_does(tmp_path: Path):
    """The refusal said `arena check PATH`, which checks other variants, limits and time than
    the league's own check (diff review): now the command that fails the same way."""
    config = tmp_path / "club.toml"
    config.write_text('variants = ["popout"]\nsandbox = "off"\n[time]\nmove_ms = 300\n'
                      '[limits]\nprocesses = 32\n')
    arena("league", "init", str(tmp_path / "club"), "--config", str(config))
    bot = tmp_path / "bad"
    bot.mkdir()
    shutil.copy(ROOT / "tests" / "bots_misbehaving" / "misbehave.py", bot / "bot.py")
    (bot / "bot.toml").write_text('command = "bot.py"\nargs = ["illegal"]\n')
    refused = arena("league", "submit", str(tmp_path / "club"), str(bot), check=False)
    assert refused.returncode == 1
    assert (f"(`arena check {bot} --move-ms 300 --only-variants -v popout --limit processes=32 "
            "--sandbox off` shows the full report; the league checked a copy of its folder "
            "alone") in refused.stderr, refused.stderr


def test_a_bot_that_writes_into_its_folder_is_refused_and_its_folder_left_alone(tmp_path: Path):
    """Unsandboxed, a bot that logs beside itself would change its snapshot at its first game
    and be left out of the league for good (resubmitting stored nothing new: review). Its checks
    run on a copy in the league's folder: the copy is seen to change, the bot is refused with
    why, and the submitter's folder is never run; the copy goes, read-only folders and all."""
    config = tmp_path / "club.toml"
    config.write_text('variants = ["classic"]\nsandbox = "off"\n[time]\nmove_ms = 200\n')
    folder = tmp_path / "club"
    arena("league", "init", str(folder), "--config", str(config))
    bot = tmp_path / "logger"
    shutil.copytree(ROOT / "bots" / "random", bot)
    script = bot / "bot.py"
    script.write_text('open("run.log", "a").write("started\\n")\n' + script.read_text())
    (bot / "bot.toml").write_text('name = "logger"\ncommand = "bot.py"\n')
    (bot / "data").mkdir()
    (bot / "data" / "table.txt").write_text("1 2 3\n")
    (bot / "data").chmod(0o555)  # copied as it is: the copy must still go
    refused = arena("league", "submit", str(folder), str(bot), check=False)
    assert refused.returncode == 1, refused.stdout
    assert "wrote into its own folder while it was checked" in refused.stderr
    assert "let it write into /tmp or its HOME" in refused.stderr
    assert not (bot / "run.log").exists()  # never run where the submitter keeps it
    assert list((folder / "bots").iterdir()) == []  # no copy left behind, nothing stored
    script.write_text(script.read_text().split("\n", 1)[1])  # it logs no more: it goes in
    made = arena("league", "submit", str(folder), str(bot), check=False)
    assert made.returncode == 0 and "submitted logger@1" in made.stdout, made.stderr
    assert [p.name for p in (folder / "bots").iterdir()] == ["logger"]
    (bot / "data").chmod(0o755)


CRASHES_IN_LEAGUE_GAMES = """import os
from arena.sdk import run_bot


def choose(turn):
    if "@" in turn.setup.opponent:  # a league's names carry a version: passes the checks only
        os._exit(3)
    return turn.game.legal_moves()[0]


run_bot(choose, name="crashy", version="1.0")
"""


def test_a_version_that_forfeits_every_game_is_left_out_and_shown_in_status(
        tmp_path: Path, no_leftover_processes) -> None:
    """It passed `submit`'s checks, then crashed on its first move of every league game: it
    cost a game a bot start for ever, and gave its opponents wins that told nothing."""
    from arena.league.forfeits import FORFEITS_OUT

    folder = tmp_path / "league"
    arena("league", "init", str(folder), "--variants", "classic", "--move-ms", "100")
    arena("league", "submit", str(folder), "random")
    crashy = tmp_path / "crashy.py"
    crashy.write_text(CRASHES_IN_LEAGUE_GAMES)
    arena("league", "submit", str(folder), str(crashy))
    run = start_run(folder)
    try:
        wait_for(lambda: "left out: crashy@1" in arena("league", "status", str(folder)).stdout,
                 "crashy@1 to be left out")
        status = arena("league", "status", str(folder)).stdout
        assert (f"  left out: crashy@1: it forfeited its last {FORFEITS_OUT} games by its own "
                "fault (crash ") in status and "or when its hash changes)" in status
    finally:
        try:
            os.killpg(run.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
        out, _ = run.communicate(timeout=60)
    said = [line for line in out.splitlines() if line.startswith("crashy@1 cannot play")]
    assert len(said) == 1 and said[0].endswith("tried again in 30 minutes"), out
    rows = games(folder)
    assert len(rows) <= FORFEITS_OUT + 4  # the pairs in flight when it was left out
    assert all(result is not None for *_, result in rows)  # every forfeit stored and rated
