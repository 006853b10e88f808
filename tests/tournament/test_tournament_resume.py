"""Real tournaments with subprocess bots: kill -9 / Ctrl-C / SIGTERM and resume, concurrency,
changed files. Bots are private copies of the random bot, so their processes can be found."""

from __future__ import annotations

import json
import os
import signal
import time
from collections import Counter

import pytest
from tournament_helpers import (
    copy_bot,
    processes_matching,
    run_cli,
    runners_in,
    start_cli,
    stored_ids,
    wait_for_games,
    wait_no_processes,
    write_toml,
)

from arena.tournament.config import load_config
from arena.tournament.schedule import build_schedule

BODY = """
name = "rt"
variants = ["classic", "popout:5x4"]
games = {games}
concurrency = 2
[time]
move_ms = 1000
[[bots]]
path = "rb"
name = "r1"
args = ["--seed", "1"]
[[bots]]
path = "rb"
name = "r2"
args = ["--seed", "2"]
[[bots]]
path = "rb"
name = "r3"
args = ["--seed", "3"]
[[bots]]
path = "rb"
name = "r4"
args = ["--seed", "4"]
{more}
"""


@pytest.fixture
def tour(tmp_path):
    bot = copy_bot(tmp_path, "random", "rb")
    path = write_toml(tmp_path / "rt.toml", BODY.format(games=6, more=""))
    return tmp_path, path, str(bot)


def expected_ids(path) -> list[str]:
    return [g.game_id for g in build_schedule(load_config(path))]


def check_complete(results, path):
    ids = stored_ids(results)
    assert len(ids) == len(set(ids)), "a game was stored twice"
    assert sorted(ids) == sorted(expected_ids(path))


def test_a_run_started_with_sighup_ignored_survives_the_hang_up(tour):
    """`nohup arena run ... &` ignores SIGHUP so that the run outlives the logout; the runner
    had installed its stop handler over it, and the hang-up stopped the run (exit 129)."""
    tmp_path, path, bot = tour
    results = tmp_path / "results" / "rt"
    proc = start_cli("run", str(path), "--quiet", cwd=tmp_path, ignored=(signal.SIGHUP,))
    wait_for_games(results, 5, proc)
    proc.send_signal(signal.SIGHUP)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    check_complete(results, path)
    assert wait_no_processes(bot) == []


def test_ctrl_c_pressed_again_and_again_still_stops_cleanly(tour):
    """An impatient operator's burst of Ctrl-C: a second one had interrupted the last writes
    (`run_state` left "running"), printed "Stopped before any game ran; nothing was lost." with
    games stored, or a bare "Aborted!"."""
    from arena.tournament.store import read_settings

    tmp_path, path, bot = tour
    results = tmp_path / "results" / "rt"
    proc = start_cli("run", str(path), cwd=tmp_path)
    wait_for_games(results, 5, proc)
    for _ in range(200):
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGINT)
        time.sleep(0.005)  # a burst, as a held-down key sends; not a synchronisation
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Run the same command again to resume" in err, err
    assert "Aborted" not in err and "Stopped;" not in err and "Traceback" not in err
    assert read_settings(results)["run_state"] == "stopped"
    # the burst may cut the standings short (a supervisor's stop must not wait for them)
    assert (results / "standings.json").is_file() or "Standings files not written" in err
    assert wait_no_processes(bot) == []


def test_sigkill_at_several_points_then_resume(tour):
    tmp_path, path, bot = tour
    results = tmp_path / "results" / "rt"
    total = len(expected_ids(path))
    assert total == 72
    for k in (3, 25, 50):
        proc = start_cli("run", str(path), cwd=tmp_path)
        try:
            wait_for_games(results, k, proc)
        finally:
            proc.kill()
            proc.wait(timeout=10)
            proc.stdout.close()
            proc.stderr.close()
        assert proc.returncode == -signal.SIGKILL
        assert len(stored_ids(results)) < total
        # the workers die with the coordinator; orphaned bots see EOF on stdin and exit
        assert wait_no_processes(bot) == []
        deadline = time.monotonic() + 10
        while runners_in(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert runners_in(tmp_path) == []
    # the killed runs' bot HOME folders (in the folder start_cli gives them) are swept by the
    # next run that starts bots there
    killed_tmp = tmp_path / ".tmp"
    assert list(killed_tmp.glob("arena-bot-*"))
    done = run_cli("run", str(path), "--quiet", cwd=tmp_path,
                   env={**os.environ, "TMPDIR": str(killed_tmp)})
    assert done.returncode == 0, done.stderr
    assert list(killed_tmp.glob("arena-bot-*")) == []
    check_complete(results, path)
    # an uninterrupted run gives exactly the same games
    other = run_cli("run", str(path), "--quiet", "--output", str(tmp_path / "clean"),
                    cwd=tmp_path)
    assert other.returncode == 0, other.stderr
    assert sorted(stored_ids(tmp_path / "clean")) == sorted(stored_ids(results))
    assert processes_matching(bot) == []


@pytest.mark.parametrize(("sig", "code"),
                         [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_clean_stop_then_resume(tour, sig, code):
    tmp_path, path, bot = tour
    results = tmp_path / "results" / "rt"
    proc = start_cli("run", str(path), cwd=tmp_path)
    wait_for_games(results, 10, proc)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert "Run the same command again to resume" in err
    assert "Traceback" not in err
    stopped_at = len(stored_ids(results))
    assert 10 <= stopped_at < 72
    assert processes_matching(bot) == []  # every bot process is gone when the command returns
    # the standings files are those of the games stored so far (they were left from no run)
    with (results / "standings.json").open() as handle:
        standings = json.load(handle)
    assert sum(row["games"] for row in standings) == 2 * stopped_at
    # what a site says of it: stopped, with its share of the schedule (site review)
    from arena.tournament.store import read_settings

    stopped = read_settings(results)
    assert (stopped["run_state"], stopped["scheduled_games"]) == ("stopped", 72)
    again = run_cli("run", str(path), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"{72 - stopped_at} games to play" in again.stdout
    check_complete(results, path)
    assert read_settings(results)["run_state"] == "finished"


def test_concurrency_gives_the_same_games_as_one(tour):
    tmp_path, path, _ = tour
    path.write_text(path.read_text().replace("games = 6", "games = 2"))
    one = run_cli("run", str(path), "-j", "1", "-q", "-o", str(tmp_path / "one"), cwd=tmp_path)
    four = run_cli("run", str(path), "-j", "4", "-q", "-o", str(tmp_path / "four"), cwd=tmp_path)
    assert one.returncode == 0 and four.returncode == 0, one.stderr + four.stderr
    assert len(stored_ids(tmp_path / "one")) == 24
    assert sorted(stored_ids(tmp_path / "one")) == sorted(stored_ids(tmp_path / "four"))


def test_adding_a_bot_plays_only_the_new_games_and_changes_are_refused(tour):
    tmp_path, path, _ = tour
    path.write_text(BODY.format(games=2, more="").replace(
        '["classic", "popout:5x4"]', '["popout:5x4"]'))
    first = run_cli("run", str(path), "-q", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    results = tmp_path / "results" / "rt"
    before = stored_ids(results)
    assert len(before) == 12
    path.write_text(BODY.format(games=2, more='[[bots]]\npath = "greedy"\n').replace(
        '["classic", "popout:5x4"]', '["popout:5x4"]'))
    second = run_cli("run", str(path), cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "8 games to play, 12 of 20 already done" in second.stdout
    after = stored_ids(results)
    assert after[:12] == before and len(after) == 20
    assert Counter(after)[after[-1]] == 1

    # another time control would make stored games incomparable: refused, nothing touched
    changed = path.read_text().replace("move_ms = 1000", "move_ms = 900")
    path.write_text(changed)
    refused = run_cli("run", str(path), cwd=tmp_path)
    assert refused.returncode == 1
    assert "time control changed" in refused.stderr and "--fresh" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert stored_ids(results) == after

    fresh = run_cli("run", str(path), "--fresh", "-q", cwd=tmp_path)
    assert fresh.returncode == 0, fresh.stderr
    backups = list(results.glob("backup-*/games.db"))
    assert len(backups) == 1
    assert len(stored_ids(results)) == 20


def test_a_second_runner_on_the_same_results_is_refused(tour):
    tmp_path, path, _ = tour
    # Enough games that the first run is still playing (holding the lock) when the second starts.
    path.write_text(path.read_text().replace("games = 6", "games = 400"))
    results = tmp_path / "results" / "rt"
    proc = start_cli("run", str(path), cwd=tmp_path)
    try:
        wait_for_games(results, 1, proc)
        second = run_cli("run", str(path), cwd=tmp_path)
        assert second.returncode == 1 and "in use by another" in second.stderr
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)


@pytest.mark.parametrize("mode", ["process", "thread"])
def test_in_process_runner_modes(tour, mode):
    from arena.tournament.progress import Progress
    from arena.tournament.runner import Runner
    from arena.tournament.store import load_games, read_settings

    tmp_path, path, bot = tour
    path.write_text(path.read_text().replace("games = 6", "games = 2"))
    config = load_config(path, concurrency=3)
    config.output = tmp_path / mode
    runner = Runner(config, mode=mode, install_signals=False,
                    progress_factory=lambda *a, **k: Progress(*a, quiet=True, **k))
    result = runner.run()
    assert result.complete and result.played == result.total == 24
    # the warm pool holds the whole field: each worker starts each bot at most once
    assert 4 <= result.starts <= 3 * 4
    df = load_games(config.output)
    assert sorted(df.game_id) == sorted(expected_ids(path))
    assert df.seq.tolist() == list(range(1, 25))
    assert df.pair_id.value_counts().eq(2).all()
    assert set(df.first_version) == {"1.0"}
    info = read_settings(config.output)
    assert [b["name"] for b in info["bots"]] == ["r1", "r2", "r3", "r4"]
    assert info["bots"][0]["version"] == "1.0" and info["games"] == 24
    assert info["scheduled_games"] == 24  # what a site compares a stopped run with
    assert info["run_state"] == "finished"
    assert wait_no_processes(bot) == []


def test_a_renamed_bot_is_recognised_by_its_program_arguments_and_time():
    from arena.tournament.runner import renamed_bots

    ab = {"command": ["python3", "ab.py"], "args": ["--level", "easy"], "program_hash": "h1"}
    other = {**ab, "args": ["--level", "hard"]}
    stored = {"ab": ab, "greedy": {"command": ["g"], "args": [], "program_hash": "h2"}}
    assert renamed_bots(stored, {"ab-easy": ab, "greedy": stored["greedy"]}) == [("ab", "ab-easy")]
    assert renamed_bots(stored, {"ab-hard": other, "greedy": stored["greedy"]}) == []
    assert renamed_bots(stored, {**stored, "ab-copy": ab}) == []  # added beside it, not renamed
    timed = {**ab, "time_control": {"move_ms": 10}}  # time odds: another entrant
    assert renamed_bots(stored, {"ab-fast": timed}) == []
    assert renamed_bots({}, {"ab": ab}) == []


def test_a_run_from_another_folder_names_the_results_beside_the_file(tmp_path):
    """`output` is relative to the current folder, bots to the file's: `arena run club/t.toml`
    from the parent folder began again in ./results without a word (user review)."""
    club = tmp_path / "club"
    club.mkdir()
    write_toml(club / "t.toml", """
name = "t"
variants = ["classic:5x4"]
games = 2
concurrency = 1
[time]
move_ms = 1000
[[bots]]
path = "random"
name = "r1"
[[bots]]
path = "random"
name = "r2"
args = ["--seed", "2"]
""")
    first = run_cli("run", "t.toml", "--quiet", cwd=club)
    assert first.returncode == 0, first.stderr
    assert len(stored_ids(club / "results" / "t")) == 2
    elsewhere = run_cli("run", "club/t.toml", "--quiet", cwd=tmp_path)
    assert elsewhere.returncode == 0, elsewhere.stderr
    said = elsewhere.stdout + elsewhere.stderr
    assert f"note: {club / 'results' / 't'} holds games" in said and "--output" in said
    again = run_cli("run", "club/t.toml", "--quiet", cwd=tmp_path)  # its own games now: no note
    assert "holds games of a run" not in again.stdout + again.stderr


def test_fewer_games_on_resume_says_the_stored_ones_still_count(tour):
    """`games` cut from 6 to 2: "2 of 2 done" while the standings rated every stored game; the
    note now says that they count (operator review)."""
    tmp_path, path, bot = tour
    first = run_cli("run", str(path), "--quiet", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    fewer = write_toml(tmp_path / "rt.toml", BODY.format(games=2, more=""))
    again = run_cli("run", str(fewer), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert ("48 stored games are not in this schedule (a bot, variant or games were removed); "
            "they are kept in the results, and those between this file's bots in its variants "
            "count in its standings") in " ".join((again.stdout + again.stderr).split())
    standings = json.loads((tmp_path / "results" / "rt" / "standings.json").read_text())
    assert sum(row["games"] for row in standings) == 2 * 72
    assert wait_no_processes(bot) == []
