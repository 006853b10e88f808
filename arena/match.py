"""A series of games between two bots (used by `arena play` and `arena check`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.botspec import BotSpec, distinct_names
from arena.game import Variant
from arena.referee import GameRecord, Player, TimeControl, play_game


@dataclass
class MatchResult:
    a: str  # display names
    b: str
    records: list[GameRecord] = field(default_factory=list)

    def score(self, variant: str | None = None, move_ms: int | None = None) -> tuple[int, int, int]:
        """(wins, draws, losses) of bot A, over non-void games (of one variant / move limit if given)."""
        w = d = losses = 0
        for rec in self.records:
            if rec.void or (variant is not None and rec.variant != variant):
                continue
            if move_ms is not None and rec.time_control.get("move_ms") != move_ms:
                continue
            name = rec.winner_name
            if name is None:
                d += 1
            elif name == self.a:
                w += 1
            else:
                losses += 1
        return w, d, losses

    @property
    def void_games(self) -> int:
        return sum(rec.void for rec in self.records)


def play_match(
    spec_a: BotSpec,
    spec_b: BotSpec,
    variants: Sequence[Variant],
    games: int,
    time_control: TimeControl | Sequence[TimeControl],
    restart_every_game: bool = False,
    log_dir: Path | None = None,
    opening: Sequence[int | str] = (),
    on_game: Callable[[int, GameRecord], None] | None = None,
    stop: threading.Event | None = None,
    game_id_prefix: str = "g",
    finished: Callable[[], bool] | None = None,
) -> MatchResult:
    """Play `games` games per variant, A and B alternating as first player (A starts).

    With several time controls, the whole series is played under each in turn.

    `finished` is asked before each game whether the match is decided (e.g. by an SPRT);
    unlike `stop`, it never interrupts a game in progress.
    """
    name_a, name_b = distinct_names([spec_a.name, spec_b.name])
    result = MatchResult(name_a, name_b)
    with Player(spec_a, name_a, log_dir, restart_every_game) as a, Player(
        spec_b, name_b, log_dir, restart_every_game
    ) as b:
        n = 0
        controls = [time_control] if isinstance(time_control, TimeControl) else list(time_control)
        for tc in controls:
            for variant in variants:
                for i in range(games):
                    if finished is not None and finished():
                        return result
                    n += 1
                    first, second = (a, b) if i % 2 == 0 else (b, a)
                    record = play_game(
                        variant, first, second, tc, opening,
                        game_id=f"{game_id_prefix}{n:04d}", stop=stop,
                    )
                    result.records.append(record)
                    if on_game is not None:
                        on_game(n, record)
    return result
