"""`ForfeitStreaks`: which versions forfeited their last games by their own fault (pure)."""

from __future__ import annotations

from arena.league.forfeits import FORFEITS_OUT, ForfeitStreaks
from arena.reasons import FORFEIT_REASONS

H = ("hash-a", "hash-b")


def forfeit(streaks: ForfeitStreaks, loser: str, other: str, as_seat: int, reason: str = "timeout",
            detail: str = "no move within 200 ms") -> None:
    """`loser` forfeits a game against `other`, playing seat `as_seat`."""
    if as_seat == 1:
        streaks.add(loser, other, reason, 1, 0.0, detail, H)
    else:
        streaks.add(other, loser, reason, 2, 1.0, detail, (H[1], H[0]))


def test_a_version_forfeiting_every_game_is_out_at_the_limit_with_its_reasons() -> None:
    streaks = ForfeitStreaks()
    for k in range(FORFEITS_OUT - 1):
        forfeit(streaks, "bad@1", "good@1", as_seat=1 + k % 2,
                reason=("timeout", "crash")[k % 3 == 0])
        assert streaks.out("bad@1", "hash-a") is None
    forfeit(streaks, "bad@1", "good@1", as_seat=2, reason="illegal", detail="d9\nis   full")
    streak = streaks.out("bad@1", "hash-a")
    assert streak is not None and streak.games == FORFEITS_OUT
    assert streaks.on_probation("bad@1") and not streaks.on_probation("good@1")
    text = streak.describe()
    assert text.startswith(f"it forfeited its last {FORFEITS_OUT} games by its own fault (")
    assert "timeout " in text and "crash " in text and "illegal 1" in text
    assert text.endswith("; the last: d9 is full)")  # one line, whatever the detail held


def test_its_opponent_is_never_out_and_every_forfeit_reason_counts() -> None:
    streaks = ForfeitStreaks()
    for k in range(5 * FORFEITS_OUT):
        forfeit(streaks, "bad@1", "good@1", as_seat=1 + k % 2,
                reason=FORFEIT_REASONS[k % len(FORFEIT_REASONS)])
    assert streaks.out("bad@1", "hash-a") is not None
    assert streaks.out("good@1", "hash-b") is None  # free wins are not its fault


def test_a_version_that_forfeits_only_sometimes_is_never_out() -> None:
    """All but one game in every FORFEITS_OUT, and every game in one seat: never out."""
    streaks = ForfeitStreaks()
    for k in range(20 * FORFEITS_OUT):
        if k % FORFEITS_OUT == 0:  # one game on the board: a loss, then a draw
            streaks.add("flaky@1", "good@1", "line", None, 0.0 if k % 2 else 0.5, "", H)
        else:
            forfeit(streaks, "flaky@1", "good@1", as_seat=1)
        assert streaks.out("flaky@1", "hash-a") is None
    for _ in range(20 * FORFEITS_OUT):  # crashes whenever it moves first, plays as second
        forfeit(streaks, "seat1@1", "good@1", as_seat=1)
        streaks.add("good@1", "seat1@1", "line", None, 1.0, "", (H[1], H[0]))
        assert streaks.out("seat1@1", "hash-a") is None


def test_void_and_self_play_and_a_record_without_its_seat() -> None:
    streaks = ForfeitStreaks(out_after=2)
    streaks.add("bad@1", "bad@1", "crash", 1, 0.0)  # self-play says nothing
    assert streaks.take_touched() == set()
    # no forfeit_by (a record written by hand): the loser's seat, as `forfeiter_seat` says
    streaks.add("bad@1", "good@1", "crash", None, 0.0)
    streaks.add("good@1", "bad@1", "crash", None, 1.0)
    assert streaks.out("bad@1", "") is not None
    assert streaks.take_touched() == {"bad@1", "good@1"} and streaks.take_touched() == set()


def test_another_program_of_the_same_version_starts_afresh() -> None:
    """After a `league rehash` the games of the old hash do not count against the new one."""
    streaks = ForfeitStreaks(out_after=3)
    for _ in range(3):
        forfeit(streaks, "bad@1", "good@1", as_seat=1)
    assert streaks.out("bad@1", "hash-a") is not None
    assert streaks.out("bad@1", "hash-new") is None  # its streak is of another program
    streaks.add("bad@1", "good@1", "timeout", 1, 0.0, "", ("hash-new", "hash-b"))
    assert streaks.out("bad@1", "hash-new") is None  # one game of the new program, not three
    for _ in range(2):
        streaks.add("bad@1", "good@1", "timeout", 1, 0.0, "", ("hash-new", "hash-b"))
    assert streaks.out("bad@1", "hash-new").games == 3
    streaks.add("bad@1", "good@1", "line", None, 0.5, "", ("hash-new", "hash-b"))
    assert not streaks.on_probation("bad@1")  # a game played out ends it
