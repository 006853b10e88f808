"""A series of games between two bots (used by `arena play`).

Memory stays flat in the number of games: a finished game is handed to `on_game` and then only
counted (`MatchResult` keeps W/D/L tallies, not the records).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import EllipsisType
from typing import Any

from arena.botspec import BotSpec, distinct_names, name_problem
from arena.game import Variant
from arena.referee import GameRecord, Player, TimeControl, log_file_name, play_game


@dataclass
class MoveTimes:
    """One bot's own move times over a match, in constant memory: how many, their sum, and the
    slowest with where it was (game id, the turn's ply), so that an author whose bot is slow now
    and then can replay that position (`arena replay GAMES ID --ply N --protocol`)."""

    moves: int = 0
    total_ms: float = 0.0
    slowest_ms: float = -1.0
    slowest_at: tuple[str, int] = ("", 0)

    def add(self, record: GameRecord, seat: int) -> None:
        skip = len(record.opening)  # the arena's moves are nobody's
        for ply, ms in enumerate(record.move_ms):
            if ply >= skip and ply % 2 == seat - 1:
                self.moves += 1
                self.total_ms += ms
                if ms > self.slowest_ms:
                    self.slowest_ms, self.slowest_at = ms, (record.game_id, ply)

    def text(self, name: str) -> str:
        if not self.moves:
            return f"{name} made no move"
        game_id, ply = self.slowest_at
        return (f"{name} {self.moves} moves, mean {self.total_ms / self.moves:.1f} ms, slowest "
                f"{self.slowest_ms:.1f} ms ({game_id}, turn ply={ply})")


@dataclass
class MatchResult:
    a: str  # display names
    b: str
    games: int = 0
    void_games: int = 0
    # (variant spec, move_ms) -> [wins, draws, losses] of bot A over non-void games
    tallies: dict[tuple[str, int | None], list[int]] = field(default_factory=dict)
    # bot A's and bot B's own move times
    times: tuple[MoveTimes, MoveTimes] = field(default_factory=lambda: (MoveTimes(), MoveTimes()))

    def add(self, record: GameRecord, move_ms: int | None | EllipsisType = ...) -> None:
        """Count a game; `move_ms` keys its tally (the match's per-move limit: under time odds
        the seats' own limits differ), by default the record's."""
        self.games += 1
        if record.void:
            self.void_games += 1
            return
        a_first = record.first == self.a
        self.times[0].add(record, 1 if a_first else 2)
        self.times[1].add(record, 2 if a_first else 1)
        limit = record.time_control.get("move_ms") if move_ms is ... else move_ms
        tally = self.tallies.setdefault((record.variant, limit), [0, 0, 0])
        name = record.winner_name
        tally[2 if name is not None and name != self.a else 0 if name is not None else 1] += 1

    def score(self, variant: str | None = None, move_ms: int | None = None) -> tuple[int, int, int]:
        """(wins, draws, losses) of bot A, over non-void games (of one variant / move limit if given)."""
        total = [0, 0, 0]
        for (spec, limit), tally in self.tallies.items():
            if (variant is None or spec == variant) and (move_ms is None or limit == move_ms):
                total = [t + x for t, x in zip(total, tally, strict=True)]
        return total[0], total[1], total[2]


def handshake_names(specs: Sequence[BotSpec], players: Sequence[Player]) -> list[str]:
    """Display names: a bot that was not given a name shows the name from its handshake
    (`hello name=...`), if valid; else the name its spec has (see arena/botspec.py). Where two
    names are alike, the one a bot claimed (unlike its file's, folder's or manifest's name) gets
    the `#2`: a bot that says `name=random` must not take the name of the real `random` it
    plays (which became `random#2`)."""
    names, claimed = [], []
    for spec, player in zip(specs, players, strict=True):
        said = player.hello.get("name", "")
        names.append(said if not spec.named and said and name_problem(said) is None
                     else spec.name)
        claimed.append(names[-1] != spec.name)  # not the name of its file, folder or manifest
    order = sorted(range(len(names)), key=lambda k: claimed[k])  # the others first, stable
    distinct = distinct_names([names[k] for k in order])
    return [distinct[order.index(k)] for k in range(len(names))]


def play_match(
    spec_a: BotSpec,
    spec_b: BotSpec,
    variants: Sequence[Variant],
    games: int,
    time_control: TimeControl | Sequence[TimeControl],
    restart_every_game: bool = False,
    log_dir: Path | None = None,
    opening: Sequence[int | str] = (),
    on_game: Callable[[int, GameRecord, str], None] | None = None,
    stop: threading.Event | None = None,
    game_id_prefix: str = "g",
    finished: Callable[[], bool] | None = None,
    openings: Mapping[str, Sequence[Sequence[int | str]]] | None = None,
    result: MatchResult | None = None,
    odds: tuple[Mapping[str, Any], Mapping[str, Any]] = ({}, {}),
    adjudicate_s: float | None = None,
    ponder: bool = True,
) -> MatchResult:
    """Play `games` games per variant, A and B alternating as first player (A starts).

    With several time controls, the whole series is played under each in turn. `openings` maps a
    variant spec to openings cycled through per seat-swapped pair of games (games 1-2 the first,
    3-4 the next, ...); without it every game starts from `opening`. `odds` gives time odds:
    TimeControl keys that replace, for bot A and for bot B, those of each time control (e.g.
    `({"move_ms": 50}, {})`); each bot keeps its own control whichever seat it takes.

    `finished` is asked before each game whether the match is decided (e.g. by an SPRT);
    unlike `stop`, it never interrupts a game in progress. Pass `result` to watch the tallies
    (and the display names, settled after the first handshakes) while the match runs.
    `on_game(n, record, pair)` gets each game as it ends, with the id of its seat-swapped pair
    (the same for games 1-2, 3-4, ... of each time control and variant).
    `ponder=False` stops each bot's processes between its turns (`Player.ponder`).
    """
    name_a, name_b = distinct_names([spec_a.name, spec_b.name])
    if result is None:
        result = MatchResult(name_a, name_b)
    result.a, result.b = name_a, name_b
    settled = spec_a.named and spec_b.named
    with Player(spec_a, name_a, log_dir, restart_every_game, ponder=ponder) as a, Player(
        spec_b, name_b, log_dir, restart_every_game, ponder=ponder
    ) as b:
        n = 0
        controls = [time_control] if isinstance(time_control, TimeControl) else list(time_control)
        for t, tc in enumerate(controls):
            tc_a, tc_b = bot_controls(tc, odds)
            for variant in variants:
                cycle = openings.get(variant.spec) if openings else None
                for i in range(games):
                    if finished is not None and finished():
                        return result
                    n += 1
                    first, second = (a, b) if i % 2 == 0 else (b, a)
                    seats = (tc_a, tc_b) if i % 2 == 0 else (tc_b, tc_a)
                    start = cycle[(i // 2) % len(cycle)] if cycle else opening
                    record = play_game(
                        variant, first, second, seats if tc_a != tc_b else tc, start,
                        game_id=f"{game_id_prefix}{n:04d}", stop=stop, adjudicate_s=adjudicate_s,
                    )
                    if not settled and (a.hello or b.hello):
                        settled = _settle_names(result, (spec_a, spec_b), (a, b), record)
                    result.add(record, tc.move_ms)
                    if on_game is not None:
                        on_game(n, record, f"{t}:{variant.spec}:{i // 2}")
    return result


def bot_controls(tc: TimeControl, odds: tuple[Mapping[str, Any], Mapping[str, Any]] = ({}, {}),
                 ) -> tuple[TimeControl, TimeControl]:
    """Bot A's and bot B's time controls: `tc` with each bot's odds applied (ValueError if one
    makes an impossible control)."""
    return replace(tc, **odds[0]), replace(tc, **odds[1])


def _settle_names(result: MatchResult, specs, players, record: GameRecord) -> bool:
    """Rename the players after their handshake names, once, this game's record included."""
    new_a, new_b = handshake_names(specs, players)
    renames = {result.a: new_a, result.b: new_b}
    for seat, old in ((1, record.first), (2, record.second)):
        new = renames.get(old, old)
        player = players[0] if old == result.a else players[1]
        if new != old and player.log_dir is not None:  # this game's log, under the new name
            path = player.log_dir / log_file_name(record.game_id, seat, old)
            with contextlib.suppress(OSError):
                path.rename(path.with_name(log_file_name(record.game_id, seat, new)))
    record.first = renames.get(record.first, record.first)
    record.second = renames.get(record.second, record.second)
    result.a, result.b = new_a, new_b
    players[0].display_name, players[1].display_name = new_a, new_b
    return bool(players[0].hello and players[1].hello)
