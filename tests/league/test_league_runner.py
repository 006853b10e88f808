"""The league coordinator driven by an in-memory executor (no game processes): what it does with
workers that keep dying, internal errors, a store that fails, and a snapshot changed on disk."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from arena.league import registry
from arena.league.runner import LeagueRunner, Until
from arena.tournament.executor import MAX_LOSSES, GameExecutor, Outcome, OutcomeKind
from arena.tournament.store import Store


@pytest.fixture(scope="module")
def made_league(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("made") / "league"
    for args in (("init", str(folder), "--variants", "classic:5x4", "--move-ms", "500"),
                 ("submit", str(folder), "random"), ("submit", str(folder), "greedy")):
        done = subprocess.run([sys.executable, "-m", "arena", "league", *args],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    return folder


@pytest.fixture
def league(made_league: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(made_league, tmp_path / "league"))


class Scripted(GameExecutor):
    """Answers every game at once with `kind`; DONE games are won by their first player."""

    def __init__(self, kind: OutcomeKind) -> None:
        self.kind, self.slots = kind, 2
        self.queue: list = []
        self.submitted = 0
        self.fields: list = []
        self.closed = False

    def submit(self, game) -> None:
        self.submitted += 1
        self.queue.append(game)

    def change_field(self, change) -> dict[str, str]:
        self.fields.append(change)
        return {}

    def results(self, timeout: float) -> list[Outcome]:
        out, self.queue = self.queue, []
        return [self._outcome(g) for g in out]

    def _outcome(self, game) -> Outcome:
        if self.kind is not OutcomeKind.DONE:
            return Outcome(game, self.kind, detail="boom")
        row = {"game_id": game.game_id, "variant": game.variant.spec, "first": game.first,
               "second": game.second, "result": 1.0, "winner": 1, "reason": "line",
               "plies": 7, "moves": "1 2 1 2 1 2 1", "opening": ""}
        return Outcome(game, OutcomeKind.DONE, row=row)

    def stop(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def run_with(league: Path, executor: Scripted, until: Until) -> tuple[LeagueRunner, list[str]]:
    lines: list[str] = []
    runner = LeagueRunner(league, concurrency=2, until=until, out=lines.append,
                          executor_factory=lambda setup, workers: executor)
    runner.run()
    return runner, lines


def stored(league: Path) -> int:
    with sqlite3.connect(f"file:{league / 'games.db'}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]


def test_every_bot_joins_the_field_and_games_are_stored(league: Path) -> None:
    executor = Scripted(OutcomeKind.DONE)
    runner, _ = run_with(league, executor, Until(games=6))
    assert set(executor.fields[0].added) == {"random@1", "greedy@1"}
    assert executor.fields[0].policies.keys() == executor.fields[0].added.keys()
    assert runner.summary.games == stored(league) >= 6 and executor.closed


def test_a_game_whose_worker_keeps_dying_stops_the_league_not_replayed_for_ever(
        league: Path) -> None:
    executor = Scripted(OutcomeKind.LOST)
    runner, lines = run_with(league, executor, Until())  # no --until: only the losses stop it
    assert f"lost its worker {MAX_LOSSES} times" in runner.summary.error
    # a game tried MAX_LOSSES times, not thousands; nothing stored, nothing left running
    assert executor.submitted <= 4 * MAX_LOSSES and stored(league) == 0 and executor.closed
    assert not runner.in_flight


def test_an_internal_error_stops_the_league_with_an_error(league: Path) -> None:
    executor = Scripted(OutcomeKind.ERROR)
    runner, lines = run_with(league, executor, Until())  # no --until: only the error stops it
    assert runner.summary.error.startswith("internal error in game ")
    assert executor.submitted <= 4 and executor.closed
    assert sum("internal error" in line for line in lines) == 1


def test_a_store_that_fails_still_closes_every_worker(league: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A disk that fills up mid-run: the error reaches the command, and the workers (and their
    bots) are closed rather than left waiting, which would hang the process at exit."""
    def full(self, *args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Store, "add_game", full)
    executor = Scripted(OutcomeKind.DONE)
    runner = LeagueRunner(league, concurrency=2, until=Until(games=4), out=lambda line: None,
                          executor_factory=lambda setup, workers: executor)
    with pytest.raises(sqlite3.OperationalError):
        runner.run()
    assert executor.closed and not runner.in_flight
    assert not (league / ".league-status.json").exists()


def test_a_snapshot_changed_on_disk_is_left_out_and_said_once(league: Path) -> None:
    target = next((league / "bots" / "greedy").rglob("*.py"))
    target.write_text(target.read_text() + "\n# changed after submission\n")
    executor = Scripted(OutcomeKind.DONE)
    runner, lines = run_with(league, executor, Until(seconds=1.5))
    assert sum("greedy@1 cannot play" in line for line in lines) == 1
    assert "greedy@1" in runner.unplayable and stored(league) == 0
    # its own files, told apart from the arena it imports (whose upgrade `rehash` takes)
    assert "its own files changed since it was submitted" in runner.unplayable["greedy@1"]


def test_a_snapshot_whose_arena_modules_changed_is_left_out_with_the_rehash_hint(
        league: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    upgrade_arena(monkeypatch, tmp_path)
    runner, lines = run_with(league, Scripted(OutcomeKind.DONE), Until(seconds=1.5))
    assert "files or the arena modules it imports changed" in runner.unplayable["greedy@1"]
    assert "league rehash" in runner.unplayable["greedy@1"]


def test_a_league_without_pondering_tells_its_workers(tmp_path: Path):
    from arena.league.registry import init_league

    folder = init_league(tmp_path / "quiet", {"variants": ["classic"], "ponder": False,
                                              "time_control": {"move_ms": 200}})
    assert LeagueRunner(folder, out=lambda line: None)._setup().ponder is False
    folder = init_league(tmp_path / "default", {"variants": ["classic"],
                                                "time_control": {"move_ms": 200}})
    assert LeagueRunner(folder, out=lambda line: None)._setup().ponder is True


def run_briefly(runner: LeagueRunner, timeout: float = 20.0) -> bool:
    """Run in a thread; whether it ended by itself within `timeout` (else it is stopped, as by
    Ctrl-C, so a run that would wait for ever fails the test instead of hanging it)."""
    thread = threading.Thread(target=runner.run)
    thread.start()
    thread.join(timeout)
    ended = not thread.is_alive()
    runner.stop.set()
    thread.join()
    return ended


def runner_of(folder: Path, until: Until) -> tuple[LeagueRunner, list[str]]:
    lines: list[str] = []
    executor = Scripted(OutcomeKind.DONE)
    return LeagueRunner(folder, concurrency=2, until=until, out=lines.append,
                        executor_factory=lambda setup, workers: executor), lines


@pytest.fixture
def empty_league(tmp_path: Path) -> Path:
    return registry.init_league(tmp_path / "empty", {"variants": ["classic"], "time_control": {"move_ms": 50}})


def test_settled_ends_at_once_with_nothing_to_order(empty_league: Path, league: Path) -> None:
    runner, _ = runner_of(empty_league, Until(settled=True))
    assert run_briefly(runner)
    assert runner.summary.stopped_by == "nothing to order: the league has no active bots"
    registry.retire(league, "greedy")
    runner, _ = runner_of(league, Until(settled=True))
    assert run_briefly(runner)
    assert runner.summary.stopped_by == "nothing to order: random@1 is the only active bot"


def test_a_bot_that_cannot_play_is_left_out_of_settled(league: Path) -> None:
    """It would never be ordered: the run waited for ever for its games."""
    target = next((league / "bots" / "greedy").rglob("*.py"))
    target.write_text(target.read_text() + "\n# changed after submission\n")
    runner, lines = runner_of(league, Until(settled=True))
    assert run_briefly(runner)
    assert runner.summary.stopped_by == ("nothing to order: random@1 is the only active bot that "
                                         "can play (greedy@1 cannot)")
    assert sum("greedy@1 cannot play" in line for line in lines) == 1


def test_a_run_waiting_for_bots_says_so_once(empty_league: Path, league: Path) -> None:
    runner, lines = runner_of(empty_league, Until(seconds=0.6))
    assert run_briefly(runner) and runner.summary.games == 0
    assert lines == [f"league {empty_league}: playing (Ctrl-C stops; games in flight are "
                     "replayed later)",
                     f"waiting for two active bots that can play: the league has no active bots "
                     f"(bots join with `arena league submit {empty_league} PATH`; Ctrl-C stops)"]
    target = next((league / "bots" / "greedy").rglob("*.py"))
    target.write_text(target.read_text() + "\n# changed after submission\n")
    runner, lines = runner_of(league, Until(games=2))  # a submission may still come: it waits
    assert not run_briefly(runner, timeout=0.6)
    waiting = [line for line in lines if line.startswith("waiting")]
    assert len(waiting) == 1 and "random@1 is the only active bot that can play (greedy@1 " \
        "cannot)" in waiting[0]
    # games that cannot be played never reach --until 2: it says what ends the wait
    assert waiting[0].endswith("; Ctrl-C stops, or a duration such as --until 10m)")


def test_a_league_files_concurrency_and_seed_are_the_runs_defaults(tmp_path: Path):
    """`concurrency` and `seed` of a league file were stored and shown on the site but not used:
    `league run` took the number of cores and seed 0 (review as a new user). Options still win."""
    from arena.league.registry import init_league
    from arena.tournament.config import default_concurrency, load_league_file

    folder = init_league(tmp_path / "set", {"variants": ["classic"], "concurrency": 1,
                                            "seed": 7, "time_control": {"move_ms": 200}})
    runner = LeagueRunner(folder, out=lambda line: None)
    assert runner.concurrency == 1 and runner.scheduler.seed == 7
    runner = LeagueRunner(folder, concurrency=3, seed=2, out=lambda line: None)
    assert runner.concurrency == 3 and runner.scheduler.seed == 2
    folder = init_league(tmp_path / "unset", {"variants": ["classic"],
                                              "time_control": {"move_ms": 200}})
    runner = LeagueRunner(folder, out=lambda line: None)
    assert runner.concurrency == default_concurrency() and runner.scheduler.seed == 0
    # a league file without the key stores none: the cores counted are those of the machine
    # that runs the league, not of the one that made it (review of the diff)
    path = tmp_path / "league.toml"
    path.write_text('variants = ["classic"]\n[time]\nmove_ms = 100\n')
    assert load_league_file(path)["concurrency"] is None
    path.write_text('variants = ["classic"]\nconcurrency = 3\n[time]\nmove_ms = 100\n')
    assert load_league_file(path)["concurrency"] == 3


@pytest.mark.parametrize("line", ['restart = "every-game"', "affinity = true",
                                  'cluster = "local:2"'])
def test_tournament_keys_a_league_cannot_honour_are_refused(tmp_path: Path, line: str):
    from arena.tournament.config import ConfigError, load_league_file

    path = tmp_path / "league.toml"
    path.write_text(f'variants = ["classic"]\n{line}\n[time]\nmove_ms = 100\n')
    key = line.split()[0]
    with pytest.raises(ConfigError, match=rf"league.toml:2: '{key}' is a key of tournament files"):
        load_league_file(path)


def test_the_site_is_rebuilt_beside_the_play(tmp_path: Path) -> None:
    """--publish-every built the site in the league's own process: no game was stored for its
    seconds, and Ctrl-C waited for it (league review). Now a process of its own: one at a time,
    its failure said in one line, stopped quietly by a Ctrl-C of the league, and a rebuild that
    failed or was stopped is not counted as done (diff review)."""
    import subprocess
    import sys
    import tempfile

    from arena.league.runner import LeagueRunner, RunSummary

    said: list[str] = []
    runner = object.__new__(LeagueRunner)
    runner.__dict__.update(out=said.append, summary=RunSummary(), folder=tmp_path,
                           published_at=0, _publisher=None, _publisher_said=None,
                           _publishing_at=0)

    def child(code: str) -> None:
        runner._publisher_said = tempfile.TemporaryFile()
        runner._publisher = subprocess.Popen([sys.executable, "-c", code],
                                             stdin=subprocess.PIPE,
                                             stderr=runner._publisher_said)

    child("import sys; sys.stdin.read()")
    waiting = runner._publisher
    runner.summary.games = 10
    runner._publish_aside()  # the last rebuild still runs: no second one
    assert runner._publisher is waiting
    # the league's Ctrl-C stops it (130, or killed by the signal early in its start): quietly
    runner._reap_publisher(wait=True, interrupt=True)
    waiting.stdin.close()
    assert runner._publisher is None and said == [] and runner.published_at == 0
    child("import sys; sys.stderr.write('x' * 200000 + '\\n'); sys.exit('disk full')")
    runner._reap_publisher(wait=True)  # 200 KB of warnings first: no pipe to fill and block
    assert said == ["publish failed: disk full"] and runner.published_at == 0
    runner._publish_aside()  # the real command, of a folder without results: it fails, says so
    runner._reap_publisher(wait=True)
    assert len(said) == 2 and said[-1].startswith("publish failed: ") and runner.published_at == 0


def test_a_stopped_publish_exits_130_and_leaves_no_half_site(tmp_path: Path,
                                                             monkeypatch) -> None:
    """The league stops its background rebuild with SIGINT: click made that `Aborted!` and exit
    1, which read as a failed build (diff review)."""
    from click.testing import CliRunner

    from arena.cli import main
    from arena.publish import site

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(site, "build_site", interrupted)
    result = CliRunner().invoke(main, ["publish", str(tmp_path)])
    assert result.exit_code == 130, result.output


def test_a_drain_ends_when_the_executor_lost_its_workers() -> None:
    """A lost Dask scheduler raised from every results() call, and the drain after the stop
    retried it in a busy loop for STOP_WAIT_S (diff review)."""
    import time

    from arena.league.runner import STOP_WAIT_S, LeagueRunner
    from arena.tournament.runner import RunError

    calls = []

    class Lost:
        def results(self, timeout: float):
            calls.append(timeout)
            raise RunError("lost the Dask scheduler")

    runner = object.__new__(LeagueRunner)
    runner.__dict__.update(in_flight={1: object()}, games_out={1: 2})
    started = time.monotonic()
    runner._drain(None, Lost())
    assert len(calls) == 1 and time.monotonic() - started < STOP_WAIT_S / 2


class NeverStarting(Scripted):
    """Every game void: neither bot starts (a broken dependency, a licence expired)."""

    def _outcome(self, game) -> Outcome:
        row = {"game_id": game.game_id, "variant": game.variant.spec, "first": game.first,
               "second": game.second, "result": None, "reason": "crash", "plies": 0,
               "moves": "", "opening": ""}
        return Outcome(game, OutcomeKind.DONE, row=row, void=True,
                       start_failures={game.first: "exit 1: boom", game.second: "exit 1: boom"})


def test_versions_that_keep_failing_to_start_are_left_out_not_played_for_ever(
        league: Path) -> None:
    """Two bots that both fail to start locked a league into void games between them (1,294 of
    1,314 games in 100 s; a league over weeks): each is left out after its third in a row."""
    from arena.league.runner import START_FAILURES_OUT

    executor = NeverStarting(OutcomeKind.DONE)
    runner, lines = run_with(league, executor, Until(seconds=1.5))
    for name in ("random@1", "greedy@1"):
        assert f"failed to start in its last {START_FAILURES_OUT} games" in runner.unplayable[name]
        assert sum(line.startswith(f"{name} cannot play") for line in lines) == 1
    assert executor.submitted <= 2 * START_FAILURES_OUT + 2  # a few, not thousands


def test_status_is_read_only_while_a_run_holds_the_folder(tmp_path: Path) -> None:
    """After a kill -9 or a reboot the status file stays, and its pid may be another live
    process's: `league status` said "running" (a league over weeks); the run lock decides."""
    import json
    import os

    from arena.league.runner import STATUS_FILE, read_status
    from arena.tournament.store import RunLock

    (tmp_path / STATUS_FILE).write_text(json.dumps({"pid": os.getpid(), "playing": []}))
    assert read_status(tmp_path) is None  # a live pid, but no run holds the folder
    with RunLock(tmp_path, "arena league run"):
        assert read_status(tmp_path) == {"pid": os.getpid(), "playing": []}
    assert read_status(tmp_path) is None


def upgrade_arena(monkeypatch: pytest.MonkeyPatch, folder: Path, bot: str = "greedy") -> None:
    """What an upgrade of the arena does to an SDK bot's hash (here `bot`'s alone): a module of
    the arena it imports changes; its own files stay as submitted."""
    from arena import botspec

    changed = folder / "upgraded_module.py"
    changed.write_text("# an arena module as a newer release has it\n")
    original = botspec._arena_modules

    def modules(scripts):
        found = original(scripts)
        return [*found, changed] if any(bot in str(script) for script in scripts) else found

    monkeypatch.setattr(botspec, "_arena_modules", modules)


def test_rehash_keeps_the_versions_an_arena_upgrade_left_out(
        league: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An upgrade of the arena changes every SDK bot's hash (it covers the arena modules the
    bot imports): each became "cannot play" until its author resubmitted it as a new version
    with a fresh rating (a league over weeks). `league rehash` keeps the versions."""
    from click.testing import CliRunner

    from arena.commands.league import command

    upgrade_arena(monkeypatch, tmp_path)
    runner, lines = run_with(league, Scripted(OutcomeKind.DONE), Until(seconds=1))
    assert "greedy@1" in runner.unplayable and "league rehash" in runner.unplayable["greedy@1"]
    out = CliRunner().invoke(command, ["rehash", str(league)])
    assert out.exit_code == 0, out.output
    assert out.output.startswith("greedy@1: hash ") and "1 bot(s) rehashed" in out.output
    runner, lines = run_with(league, Scripted(OutcomeKind.DONE), Until(games=4))
    assert not runner.unplayable and stored(league) >= 4
    assert [e.version for e in registry.active_entrants(league)] == [1, 1]  # no new version
    again = CliRunner().invoke(command, ["rehash", str(league)])
    assert again.output.strip() == "every active bot hashes as stored"


def test_rehash_refuses_a_snapshot_whose_own_files_changed(league: Path) -> None:
    """`rehash` took the snapshots as they were: a snapshot altered in the league folder (by a
    bot run unsandboxed, or by hand) was recorded as the version's program. Its own files are
    hashed apart from the arena's at submission, and only the arena's share may change."""
    from click.testing import CliRunner

    from arena.commands.league import command

    target = next((league / "bots" / "greedy").rglob("*.py"))
    target.write_text(target.read_text() + "\n# not the program submitted\n")
    greedy = next(e for e in registry.entrants(league) if e.name == "greedy")
    with pytest.raises(registry.LeagueError, match="greedy@1: its own files changed since it "
                       "was submitted .* nothing was rehashed"):
        registry.rehash(league)
    assert next(e for e in registry.entrants(league) if e.name == "greedy") == greedy
    with pytest.raises(registry.LeagueError, match="its snapshot in the league folder was "
                       "altered"):
        registry.spec_of(league, greedy)  # what the run says of it, too
    out = CliRunner().invoke(command, ["rehash", str(league)])
    assert out.exit_code != 0 and "its own files changed" in out.output
    assert "Traceback" not in out.output


def test_an_altered_snapshot_removed_from_the_league_no_longer_stops_its_rehash(
        league: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusal told to remove the version, yet a retired one's altered snapshot refused every
    rehash for good (retired versions are checked too): after an upgrade of the arena no SDK
    bot could play again. A retired version is left as it was, and said so; the others rehash."""
    from click.testing import CliRunner

    from arena.commands.league import command

    target = next((league / "bots" / "random").rglob("*.py"))
    target.write_text(target.read_text() + "\n# written by the bot, say\n")
    with pytest.raises(registry.LeagueError, match="random@1: its own files changed"):
        registry.rehash(league)
    registry.retire(league, "random")
    before = next(e for e in registry.entrants(league) if e.name == "random")
    upgrade_arena(monkeypatch, tmp_path)
    out = CliRunner().invoke(command, ["rehash", str(league)])
    assert out.exit_code == 0, out.output + out.stderr
    assert "greedy@1: hash " in out.stdout and "random@1" not in out.stdout
    assert "note: random@1: its own files changed" in out.stderr and "retired" in out.stderr
    assert next(e for e in registry.entrants(league) if e.name == "random") == before
    with pytest.raises(registry.LeagueError, match="altered"):
        registry.spec_of(league, before)  # never played again under its old hash


def test_an_older_league_gets_its_own_hashes_at_its_first_rehash(
        league: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A league stored before the own-files hash: read as none, recorded by the first rehash
    (the organiser's call, as every rehash was), refused from then on if altered."""
    import sqlite3

    conn = sqlite3.connect(league / "games.db")
    conn.execute("ALTER TABLE league_entrants DROP COLUMN own_hash")
    conn.commit()
    conn.close()
    assert {e.own_hash for e in registry.entrants(league)} == {""}
    upgrade_arena(monkeypatch, tmp_path)
    assert [d for d, _, _ in registry.rehash(league)] == ["greedy@1"]
    assert all(len(e.own_hash) > 8 for e in registry.entrants(league))
    target = next((league / "bots" / "random").rglob("*.py"))
    target.write_text(target.read_text() + "\n# altered after\n")
    with pytest.raises(registry.LeagueError, match="random@1: its own files changed"):
        registry.rehash(league)


def test_a_version_left_out_for_start_failures_is_tried_again_after_its_pause(
        league: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A start failure may be the machine's (a moment without memory): left out for good, both
    bots of a league stayed out and it idled (second review)."""
    import arena.league.runner as league_runner

    monkeypatch.setattr(league_runner, "START_FAILURE_PAUSE_S", 0.0)
    runner, lines = run_with(league, NeverStarting(OutcomeKind.DONE), Until(seconds=1.5))
    assert any(line == "random@1 is tried again" for line in lines)
    assert any("tried again in 0 minutes" in line for line in lines)


def test_a_rehash_during_the_run_brings_the_version_back(
        league: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The left-out marker was kept for the whole run: a `league rehash` made while it played
    changed nothing until a restart (second review)."""
    upgrade_arena(monkeypatch, tmp_path)

    class RehashOnce(Scripted):
        def results(self, timeout: float) -> list[Outcome]:
            if not getattr(self, "rehashed", False) and self.submitted == 0:
                self.rehashed = True
                registry.rehash(league)
            return super().results(timeout)

    runner, lines = run_with(league, RehashOnce(OutcomeKind.DONE), Until(games=4))
    assert "greedy@1 cannot play" in " ".join(lines) and "greedy@1 is tried again" in lines
    assert stored(league) >= 4


class Forfeiting(Scripted):
    """`forfeiter` forfeits its games by its own fault (a timeout, a crash), but every
    `on_board`-th game, which its opponent wins on the board."""

    def __init__(self, forfeiter: str = "random@1", on_board: int = 0) -> None:
        super().__init__(OutcomeKind.DONE)
        self.forfeiter, self.on_board, self.played = forfeiter, on_board, 0

    def _outcome(self, game) -> Outcome:
        outcome = super()._outcome(game)
        self.played += 1
        if self.forfeiter not in game.bots or (self.on_board and self.played % self.on_board == 0):
            return outcome
        seat = 1 if game.first == self.forfeiter else 2
        outcome.row.update(result=float(seat == 2), winner=3 - seat, forfeit_by=seat,
                           reason=("timeout", "crash")[self.played % 2], plies=seat - 1,
                           moves="d1" if seat == 2 else "", detail="no move within 500 ms")
        return outcome


def game_lines(lines: list[str]) -> int:
    return sum(line.startswith("[") for line in lines)


def test_a_version_that_forfeits_every_game_is_left_out_said_once_its_games_kept(
        league: Path) -> None:
    """A bot that started fine and then forfeited every game cost its league a move timeout a
    game for ever, its opponents winning games that told nothing."""
    from arena.league.forfeits import FORFEITS_OUT

    executor = Forfeiting()
    runner, lines = run_with(league, executor, Until(seconds=1.5))
    said = [line for line in lines if line.startswith("random@1 cannot play")]
    assert len(said) == 1 and "greedy@1" not in runner.unplayable
    assert f"it forfeited its last {FORFEITS_OUT} games by its own fault (" in said[0]
    assert "timeout " in said[0] and "crash " in said[0] and "no move within 500 ms" in said[0]
    assert said[0].endswith("; tried again in 30 minutes")
    assert executor.submitted <= FORFEITS_OUT + 4  # a few, not one a second for ever
    assert stored(league) == runner.summary.games >= FORFEITS_OUT  # real results: all kept
    (left,) = runner._left_out_status()
    assert left["name"] == "random@1" and 1790 <= left["back_in_s"] <= 1800
    assert left["why"].startswith(f"it forfeited its last {FORFEITS_OUT} games")
    # a run started again knows it from the stored games: out at once, no game played
    again = Forfeiting()
    runner, lines = run_with(league, again, Until(seconds=0.5))
    assert again.submitted == 0 and "random@1" in runner.unplayable
    assert sum(line.startswith("random@1 cannot play") for line in lines) == 1


def test_a_version_that_forfeits_only_sometimes_or_whose_opponent_forfeits_plays_on(
        league: Path) -> None:
    from arena.league.forfeits import FORFEITS_OUT

    executor = Forfeiting(on_board=FORFEITS_OUT)  # 19 forfeits in a row, then a game played
    runner, lines = run_with(league, executor, Until(games=3 * FORFEITS_OUT))
    assert not runner.unplayable and stored(league) >= 3 * FORFEITS_OUT
    assert not any("cannot play" in line for line in lines)


def test_a_forfeiter_is_tried_again_after_its_pause_one_game_at_a_time(
        league: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the pause its streak is still there: one more forfeit leaves it out again, and it
    plays one pair at a time meanwhile, so a try costs a pair, not another FORFEITS_OUT games
    (nor a pair per slot)."""
    import arena.league.runner as league_runner
    from arena.league.forfeits import FORFEITS_OUT

    monkeypatch.setattr(league_runner, "FORFEIT_PAUSE_S", 0.0)
    executor = Forfeiting()
    runner, lines = run_with(league, executor, Until(games=FORFEITS_OUT + 12))
    tries = [k for k, line in enumerate(lines) if line == "random@1 is tried again"]
    assert len(tries) >= 3
    for start, end in zip(tries, tries[1:], strict=False):
        assert game_lines(lines[start:end]) <= 2
        assert sum(line.startswith("random@1 cannot play") for line in lines[start:end]) == 1


def test_league_status_shows_the_versions_left_out_and_when_they_are_tried_again(
        league: Path) -> None:
    import json
    import os

    from click.testing import CliRunner

    from arena.commands.league import command
    from arena.league.runner import STATUS_FILE
    from arena.tournament.store import RunLock

    left = [{"name": "random@1", "why": "it forfeited its last 20 games by its own fault "
             "(timeout 20)", "back_in_s": 601},
            {"name": "greedy@1", "why": "it no longer hashes", "back_in_s": None}]
    (league / STATUS_FILE).write_text(json.dumps({"pid": os.getpid(), "games_this_run": 3,
                                                  "playing": [], "left_out": left}))
    with RunLock(league, "arena league run"):
        out = CliRunner().invoke(command, ["status", str(league)])
    assert out.exit_code == 0, out.output
    assert ("  left out: random@1: it forfeited its last 20 games by its own fault (timeout 20) "
            "(tried again in 11 minutes, or when its hash changes)") in out.output.splitlines()
    assert ("  left out: greedy@1: it no longer hashes (tried again when its hash changes)"
            in out.output.splitlines())
