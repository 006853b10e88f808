"""The live and end-of-run display: the same Elo as `arena standings`, recent forfeits, elapsed
time, and a summary that fits 80 columns."""

from __future__ import annotations

import io
import math
from pathlib import Path

import pandas as pd

from arena.commands.run import summary_lines
from arena.ratings.standings import standings_by_variant
from arena.tournament.progress import Progress, Standings, forfeit_text
from arena.tournament.runner import RunResult

GAMES = [("a", "b", 1.0), ("b", "a", 0.5), ("a", "c", 1.0), ("c", "b", 0.0), ("b", "c", 1.0),
         ("c", "a", 0.5), ("a", "b", 1.0), ("c", "b", 1.0)]


def test_the_live_table_has_the_elo_of_arena_standings():
    standings = Standings(["a", "b", "c", "idle"])
    for first, second, result in GAMES:
        standings.add(first, second, result, "line")
    standings.add("a", "b", None, "void")  # not rated
    frame = pd.DataFrame(GAMES, columns=["first", "second", "result"]).assign(variant="classic")
    expected = standings_by_variant(frame)["all"].set_index("bot")["elo"]
    rows = {row[0]: row[5] for row in standings.rows()}
    for bot in ("a", "b", "c"):
        assert math.isclose(rows[bot], expected[bot], abs_tol=1e-6)
    assert math.isnan(rows["idle"])  # no games: no rating, shown as "-"
    assert standings.lines()[-1].split()[-1] == "-"


def test_an_elo_near_zero_is_shown_as_plus_zero():
    standings = Standings()
    standings.add("a", "b", 1.0)
    standings.add("b", "a", 1.0)
    assert [line.split()[-1] for line in standings.lines()[1:]] == ["+0", "+0"]


def test_the_live_fit_is_refreshed_at_most_every_interval_but_exact_at_the_end():
    standings = Standings()
    standings.add("a", "b", 1.0)
    first = standings.elo(fresh=False)
    standings.add("a", "b", 1.0)
    assert standings.elo(fresh=False) is first  # within REFIT_SECONDS: the cached fit
    assert standings.elo(fresh=True) is not first


def forfeit_row(bot_seat: int, reason: str, detail: str) -> dict:
    return {"first": "alpha", "second": "beta", "result": 1.0 if bot_seat == 2 else 0.0,
            "reason": reason, "forfeit_by": bot_seat, "detail": detail, "plies": 3,
            "variant": "classic"}


def test_live_display_names_recent_forfeits_and_the_elapsed_time():
    stream = io.StringIO()
    progress = Progress(10, names=["alpha", "beta"], live=True, stream=stream, title="t")
    from rich.console import Console

    progress.game_done(forfeit_row(2, "timeout", "no move within 100 ms"))
    progress.game_done(forfeit_row(1, "illegal", "d9: no such column " + "x" * 200))
    console = Console(file=io.StringIO(), width=80, color_system=None)
    console.print(progress._render())
    text = console.file.getvalue()
    assert "elapsed" in text and "recent forfeits:" in text
    assert "beta: timeout (no move within 100 ms)" in text
    assert "alpha: illegal (d9: no such column" in text
    assert all(len(line) <= 80 for line in text.splitlines())


def test_the_summary_fits_80_columns_even_for_big_runs():
    result = RunResult(Path("r"), total=1_000_000, done=999_999, played=999_999,
                       forfeits=123_456, elapsed=3 * 86400 + 0.4)
    lines = summary_lines(result, Path("results/demo"))
    assert lines[0] == "Done: 999999 of 1000000 games (999999 played now)."
    assert lines[-1] == "Results in results/demo/"
    assert all(len(line) <= 80 for line in lines)


def test_the_summary_rate_is_of_play_and_says_a_long_set_up():
    """A cold start (bytecode, workers) took 12 of 13 s: the summary said 0.91 games/s where
    every progress line had said 14; the rate is now of play, and the set-up is said."""
    cold = RunResult(Path("r"), total=12, done=12, played=12, elapsed=13.2, setup=12.4)
    assert summary_lines(cold, Path("r"))[1] == ("13.2 s elapsed (12.4 s of set-up), 15.00 "
                                                 "games/s, 0 forfeits.")
    warm = RunResult(Path("r"), total=12, done=12, played=12, elapsed=2.0, setup=0.4)
    assert summary_lines(warm, Path("r"))[1] == "2.0 s elapsed, 7.50 games/s, 0 forfeits."


def test_the_summary_counts_void_games_replayed_and_stopped_and_skipped_games():
    # said through a real run before the start watch stopped runs whose bots never start
    result = RunResult(Path("r"), total=20, done=10, played=10, voids=5, voids_stopped=3,
                       skipped=4, elapsed=2.0)
    lines = summary_lines(result, Path("results/v"))
    assert "2 void (neither bot started): not rated, played again next run." in lines
    assert ("3 void (neither bot started): not rated, and not played again: their pairing is "
            "stopped (see the note above).") in lines
    assert "4 skipped: both bots failed to start too often." in lines
    nothing = RunResult(Path("r"), total=8, done=0, played=0, skipped=8)
    assert summary_lines(nothing, Path("results/v"))[0] == ("Nothing to play: 0 of 8 games "
                                                            "done, 8 skipped.")


def test_a_forfeit_line_shows_what_a_dead_bot_said():
    row = {"first": "alphabeta", "second": "random", "forfeit_by": 1, "reason": "crash",
           "detail": "during the handshake: bot exited with code 2; stderr: alphabeta: error: "
                     "argument --level: invalid choice: 'ultra'"}
    assert forfeit_text(row) == ("alphabeta: crash (stderr: alphabeta: error: argument --level: "
                                 "invalid choice: 'ultra')")
    row["detail"] = "no move within 50 ms (+200 ms grace)"
    assert forfeit_text(row) == "alphabeta: crash (no move within 50 ms (+200 ms grace))"


def test_a_games_line_and_a_recent_forfeit_carry_its_id_and_the_summary_how_to_look_into_one():
    """The id is the key to a game's stderr logs (`logs/ID-SEAT-NAME.log`) and to `arena replay
    DIR ID --moves`: without it a forfeit in a run's output could not be looked into (bot
    author review)."""
    stream = io.StringIO()
    progress = Progress(10, names=["alpha", "beta"], live=False, stream=stream)
    progress.game_done({**forfeit_row(2, "crash", "bot exited with code 1"), "game_id": "g12ab"})
    assert stream.getvalue().startswith("[ 1/10] g12ab classic  alpha 1-0 beta  (forfeit by beta:")
    assert progress.recent_forfeits[-1] == "g12ab beta: crash (bot exited with code 1)"
    result = RunResult(Path("r"), total=2, done=2, played=2, forfeits=1, elapsed=1.0)
    assert ("A forfeit's moves and logs: arena replay results/t GAME_ID --moves"
            in summary_lines(result, Path("results/t")))
    assert ("A forfeit's moves and logs: arena replay 'my results/t' GAME_ID --moves"
            in summary_lines(result, Path("my results/t")))  # a command to paste as it is
    clean = RunResult(Path("r"), total=2, done=2, played=2, elapsed=1.0)
    assert not any("arena replay" in line for line in summary_lines(clean, Path("results/t")))
