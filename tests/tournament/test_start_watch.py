"""StartWatch: the games of a bot that has not started yet in the run wait; one that cannot
start stops the run with none of its games stored (pure: outcomes made by hand)."""

from __future__ import annotations

from arena.game import PRESETS
from arena.tournament.executor import Outcome, OutcomeKind
from arena.tournament.schedule import ScheduledGame
from arena.tournament.startwatch import StartWatch

WHY = "crash: during the handshake: bot exited with code 2"


def outcome(k: int, first: str, second: str, *failed: str) -> Outcome:
    game = ScheduledGame(f"g{k}", f"p{k}", 0, PRESETS["classic"], first, second)
    return Outcome(game, OutcomeKind.DONE, row={"reason": "crash" if failed else "line"},
                   void=len(failed) == 2, start_failures={name: WHY for name in failed})


def ids(outcomes: list[Outcome]) -> list[str]:
    return [o.game.game_id for o in outcomes]


def test_games_of_healthy_bots_pass_at_once():
    watch = StartWatch()
    for k in range(3):
        stored, error = watch.admit(outcome(k, "a", "b"))
        assert ids(stored) == [f"g{k}"] and error is None
    assert watch.finish() is None


def test_a_bot_that_never_starts_stops_the_run_with_none_of_its_games_stored():
    watch = StartWatch(where={"typo": "t.toml:11"}, checks={"typo": "arena check /b --args x"})
    assert watch.admit(outcome(1, "a", "typo", "typo")) == ([], None)
    stored, _ = watch.admit(outcome(2, "a", "b"))
    assert ids(stored) == ["g2"]  # the other bots' games are not held
    stored, error = watch.admit(outcome(3, "typo", "b", "typo"))
    assert stored == []
    assert error == (f"bot 'typo' (t.toml:11) did not start in 2 games: {WHY}. None of its games "
                     "is stored: fix it (try `arena check /b --args x`), then run the same "
                     "command again")


def test_a_bot_that_starts_later_has_its_held_games_stored_in_order():
    watch = StartWatch()
    assert watch.admit(outcome(1, "flaky", "a", "flaky")) == ([], None)
    stored, error = watch.admit(outcome(2, "a", "flaky"))
    assert ids(stored) == ["g1", "g2"] and error is None
    # from now on its start failures are forfeits like any other
    stored, error = watch.admit(outcome(3, "flaky", "b", "flaky"))
    assert ids(stored) == ["g3"] and error is None
    assert watch.finish() is None


def test_a_bot_with_a_single_game_that_failed_to_start_is_reported_at_the_end():
    watch = StartWatch(attempts=2)
    assert watch.admit(outcome(1, "a", "once", "once")) == ([], None)
    error = watch.finish()
    assert error is not None and error.startswith("bot 'once' did not start in 1 game: ")
    assert "`arena check` tries one bot alone" in error


def test_a_void_game_waits_for_both_bots_and_names_both_when_neither_ever_starts():
    watch = StartWatch()
    assert watch.admit(outcome(1, "x", "y", "x", "y")) == ([], None)
    stored, error = watch.admit(outcome(2, "y", "x", "x", "y"))
    assert stored == [] and error.startswith("bot 'x' (and y) did not start in 2 games")
    # a void between bots that started before in the run is stored (`VoidTracker` counts it)
    watch = StartWatch()
    watch.admit(outcome(1, "x", "y"))
    stored, error = watch.admit(outcome(2, "x", "y", "x", "y"))
    assert ids(stored) == ["g2"] and error is None


def test_a_bot_too_slow_to_answer_hello_is_told_of_startup_ms():
    watch = StartWatch(attempts=1)
    game = ScheduledGame("g1", "p1", 0, PRESETS["classic"], "slow", "a")
    _, error = watch.admit(Outcome(game, OutcomeKind.DONE, row={"reason": "handshake"},
                                   start_failures={"slow": "handshake: no hello answer within "
                                                           "2000 ms"}))
    assert error.endswith("(`arena check` tries one bot alone; if it is only slow to start, "
                          "raise `startup_ms` in [time]), then run the same command again")
