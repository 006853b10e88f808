"""StartWatch: the games of a bot that has not started yet in the run wait; one that cannot
start stops the run with none of its games of the run stored (pure: outcomes made by hand)."""

from __future__ import annotations

from arena.game import PRESETS
from arena.tournament.executor import Outcome, OutcomeKind
from arena.tournament.schedule import ScheduledGame
from arena.tournament.startwatch import StartWatch

WHY = "crash: during the handshake: bot exited with code 2"


def scheduled(k: int, first: str, second: str) -> ScheduledGame:
    return ScheduledGame(f"g{k}", f"p{k}", 0, PRESETS["classic"], first, second)


def outcome(k: int, first: str, second: str, *failed: str) -> Outcome:
    return Outcome(scheduled(k, first, second), OutcomeKind.DONE,
                   row={"reason": "crash" if failed else "line"}, void=len(failed) == 2,
                   start_failures={name: WHY for name in failed})


def back(watch: StartWatch, result: Outcome) -> list[str]:
    """What the coordinator does with one outcome: the ids it stores."""
    watch.returned(result.game)
    return [o.game.game_id for o in watch.admit(result)]


def out(watch: StartWatch, *games: ScheduledGame) -> None:
    for game in games:
        watch.submitted(game)


def test_games_of_healthy_bots_pass_at_once():
    watch = StartWatch()
    for k in range(3):
        out(watch, scheduled(k, "a", "b"))
        assert back(watch, outcome(k, "a", "b")) == [f"g{k}"] and watch.verdict() is None
    assert watch.finish() is None


def test_a_bot_that_never_starts_stops_the_run_with_none_of_its_games_stored():
    watch = StartWatch(where={"typo": "t.toml:11"}, checks={"typo": "arena check /b --args x"})
    out(watch, scheduled(1, "a", "typo"), scheduled(2, "a", "b"), scheduled(3, "typo", "b"))
    assert back(watch, outcome(1, "a", "typo", "typo")) == [] and watch.verdict() is None
    assert back(watch, outcome(2, "a", "b")) == ["g2"]  # the other bots' games are not held
    assert back(watch, outcome(3, "typo", "b", "typo")) == []
    assert watch.verdict() == (
        f"bot 'typo' (t.toml:11) did not start in 2 games: {WHY}. None of its games of this run "
        "is stored: fix it (try `arena check /b --args x`), then run the same command again")


def test_a_bot_that_starts_later_has_its_held_games_stored_in_order():
    watch = StartWatch()
    out(watch, scheduled(1, "flaky", "a"), scheduled(2, "a", "flaky"))
    assert back(watch, outcome(1, "flaky", "a", "flaky")) == []
    assert back(watch, outcome(2, "a", "flaky")) == ["g1", "g2"] and watch.verdict() is None
    # from now on its start failures are forfeits like any other
    out(watch, scheduled(3, "flaky", "b"))
    assert back(watch, outcome(3, "flaky", "b", "flaky")) == ["g3"]
    assert watch.verdict() is None and watch.finish() is None


def test_quick_failures_wait_for_a_start_that_worked_and_a_suspect_plays_one_game_at_a_time():
    # with several games at once, a start that worked comes back only when its game ends,
    # after quicker failures: the run stopped a bot that had started (review of the diff)
    watch = StartWatch()
    first, second, third, fourth = (scheduled(k, "flaky", "a") for k in range(1, 5))
    out(watch, first, second, third)
    assert back(watch, outcome(2, "flaky", "a", "flaky")) == []
    assert back(watch, outcome(3, "flaky", "a", "flaky")) == []
    assert watch.verdict() is None  # its first game is still out
    assert not watch.may_submit(fourth) and watch.may_submit(scheduled(5, "a", "b"))
    assert back(watch, outcome(1, "flaky", "a")) == ["g2", "g3", "g1"]
    assert watch.verdict() is None and watch.may_submit(fourth)


def test_a_bot_with_a_single_game_that_failed_to_start_is_reported_at_the_end():
    watch = StartWatch(attempts=2)
    out(watch, scheduled(1, "a", "once"))
    assert back(watch, outcome(1, "a", "once", "once")) == [] and watch.verdict() is None
    error = watch.finish()
    assert error is not None and error.startswith("bot 'once' did not start in 1 game: ")
    assert "`arena check` tries one bot alone" in error


def test_a_void_game_waits_for_both_bots_and_names_both_when_neither_ever_starts():
    watch = StartWatch()
    out(watch, scheduled(1, "x", "y"), scheduled(2, "y", "x"))
    assert back(watch, outcome(1, "x", "y", "x", "y")) == []
    assert back(watch, outcome(2, "y", "x", "x", "y")) == []
    assert watch.verdict().startswith("bot 'x' (and y) did not start in 2 games")
    # a void between bots that started before in the run is stored (`VoidTracker` counts it)
    watch = StartWatch()
    out(watch, scheduled(1, "x", "y"), scheduled(2, "x", "y"))
    back(watch, outcome(1, "x", "y"))
    assert back(watch, outcome(2, "x", "y", "x", "y")) == ["g2"] and watch.verdict() is None


def test_a_void_game_without_start_failures_shows_no_bot_started():
    # a cluster worker without the bots' interpreter voids the game before any start
    watch = StartWatch()
    void = Outcome(scheduled(1, "x", "y"), OutcomeKind.DONE, row={"reason": "void"}, void=True)
    out(watch, void.game)
    back(watch, void)
    assert watch.started == set()


def test_a_bot_too_slow_to_answer_hello_is_told_of_flushing_and_startup_ms():
    # most bots without a hello in time printed it into a buffer (mawk): told only of the
    # start-up time, their authors waited longer for nothing (newcomer review)
    watch = StartWatch(attempts=1)
    game = scheduled(1, "slow", "a")
    out(watch, game)
    watch.returned(game)
    watch.admit(Outcome(game, OutcomeKind.DONE, row={"reason": "handshake"},
                        start_failures={"slow": "handshake: no hello answer within 2000 ms"}))
    assert watch.verdict().endswith(
        "(`arena check` tries one bot alone; a bot must answer 'hello' with 'hello name=...' and "
        "flush stdout after each line; if it is only slow to start, give it more time to "
        "start in its [[bots]] table: time = { startup_ms = N }), then run the same command again")


def test_the_check_command_tries_the_bot_as_the_tournament_runs_it(tmp_path):
    # a single-file bot got no command, and none carried the tournament's startup_ms
    # (review of the diff)
    from types import SimpleNamespace

    from arena.botspec import resolve_bot
    from arena.timecontrol import TimeControl
    from arena.tournament.startwatch import check_command

    def entry(ref: str, args: tuple[str, ...] = (), time_control=None, limits=None, cwd=None):
        return SimpleNamespace(spec=resolve_bot(ref, args, base=cwd), args=args,
                               time_control=time_control, limits=limits or {})

    folder = entry("random", ("--seed", "3"))
    assert check_command(folder, 5000) == (f"arena check {folder.spec.cwd} --args '--seed 3'")
    assert check_command(folder, 800).endswith("--args '--seed 3' --startup-ms 800")
    script = tmp_path / "mine.py"
    script.write_text("print('hello name=x')\n")
    single = entry(str(script), ("--fast",))
    assert check_command(single, 5000) == (
        f"arena check '{' '.join(single.spec.argv)}'")
    odds = entry(str(script), (), TimeControl(move_ms=100, startup_ms=9000))
    assert check_command(odds, 800).endswith("--startup-ms 9000")  # its own time control's
    # the sandbox limits it runs under: the file's, then its own (bot author review: a JVM
    # that started only with memory_mb = 0 was sent to a check that always failed)
    java = entry("random", limits={"memory_mb": 0, "processes": 256})
    assert check_command(java, 5000, {"memory_mb": 4096, "tmp_mb": 64}) == (
        f"arena check {java.spec.cwd} --limit memory_mb=0 --limit processes=256")
    # a command line's files relative to the tournament file: absolute, to paste from anywhere
    (tmp_path / "js").mkdir()
    (tmp_path / "js" / "bot.js").write_text("")
    (tmp_path / "t").mkdir()
    node = entry("python3 ../js/bot.js", cwd=tmp_path / "t")
    assert check_command(node, 5000).endswith(f" {tmp_path / 'js' / 'bot.js'}'")


def test_a_bot_whose_command_is_not_found_is_told_what_the_sandbox_shows():
    from arena.sandbox import NOT_FOUND_HINT

    watch = StartWatch(attempts=1)
    game = scheduled(1, "shim", "a")
    out(watch, game)
    watch.returned(game)
    watch.admit(Outcome(game, OutcomeKind.DONE, row={"reason": "crash"}, start_failures={
        "shim": "crash: during the handshake: bot exited with code 127; stderr: pyenv: no"}))
    assert f"; {NOT_FOUND_HINT}), then run the same command again" in watch.verdict()
    watch.sandboxed = False  # `sandbox = "off"`: not the sandbox's doing (diff review)
    assert NOT_FOUND_HINT not in watch.verdict() and "code 127" in watch.verdict()
