"""VoidTracker: a pairing whose bots never start stops being replayed, however few its games."""

from __future__ import annotations

from arena.game import PRESETS
from arena.tournament.schedule import ScheduledGame
from arena.tournament.voids import VoidTracker


def games(first: str, second: str, n: int) -> list[ScheduledGame]:
    return [ScheduledGame(f"{first}-{second}-{k}", f"p{k // 2}", k // 2, PRESETS["classic"],
                          *((first, second) if k % 2 == 0 else (second, first)))
            for k in range(n)]


def test_a_pairing_of_two_games_stops_when_both_were_void():
    # its void games were played again every run: the limit of 3 could never be reached
    short, long = games("a", "b", 2), games("a", "c", 6)
    tracker = VoidTracker(short + long, set())
    assert not tracker.record(short[0]) and tracker.record(short[1])
    assert tracker.is_blocked(short[0])
    assert "failed to start in 2 games: no more of their games are played" in tracker.note(short[0], 0)
    assert not tracker.record(long[0]) and not tracker.record(long[1])
    assert not tracker.is_blocked(long[2]) and tracker.record(long[2])
    # and from the store, in the next run
    again = VoidTracker(short + long, {g.game_id for g in short})
    assert again.is_blocked(short[0]) and not again.is_blocked(long[0])
