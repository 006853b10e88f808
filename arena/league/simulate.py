"""Simulated leagues: games drawn from known true strengths, to measure schedulers without processes.

Used by bench/scheduling.py and the scheduler's tests. A game between ratings r_a and r_b is a win,
draw or loss for `a` with the Elo expected score E = 1 / (1 + 10 ** ((r_b - r_a) / 400)) and a draw
share that is largest between equals (`draw_rate` there, none at E = 0 or 1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from arena.league.scheduler import Scheduler, SchedulerSettings, is_settled
from arena.ratings.elo import PairCounts, fit_elo


class SimulatedField:
    """True strengths and the running wins/draws/losses matrix of every ordered pair."""

    def __init__(self, strengths: Sequence[float], seed: int = 0, draw_rate: float = 0.1) -> None:
        self.names = [f"bot{k:02d}" for k in range(len(strengths))]
        self.strength = dict(zip(self.names, strengths, strict=True))
        self.rng = np.random.default_rng(seed)
        self.draw_rate = draw_rate
        n = len(self.names)
        self._index = {name: k for k, name in enumerate(self.names)}
        self.wdl = np.zeros((3, n, n), dtype=np.int64)  # [win/draw/loss of first, first, second]

    def play_pair(self, a: str, b: str) -> None:
        """A seat-swapped pair of games (a first, then b first)."""
        for first, second in ((a, b), (b, a)):
            expected = 1.0 / (1.0 + 10.0 ** ((self.strength[second] - self.strength[first]) / 400.0))
            draw = self.draw_rate * (1.0 - abs(2.0 * expected - 1.0))
            outcome = self.rng.choice(3, p=[expected - draw / 2, draw, 1.0 - expected - draw / 2])
            self.wdl[outcome, self._index[first], self._index[second]] += 1

    def counts(self) -> PairCounts:
        n = len(self.names)
        total = self.wdl.sum(axis=0).ravel()
        nz = np.flatnonzero(total)
        return PairCounts(names=list(self.names), first=(nz // n).astype(np.int64),
                          second=(nz % n).astype(np.int64), wins=self.wdl[0].ravel()[nz],
                          draws=self.wdl[1].ravel()[nz], losses=self.wdl[2].ravel()[nz])

    def games(self) -> int:
        return int(self.wdl.sum())

    def order_is_right(self) -> bool:
        fit = fit_elo(self.counts())
        estimated = [fit.names[k] for k in np.argsort(-fit.elo, kind="stable")]
        return estimated == sorted(self.names, key=lambda b: -self.strength[b])


@dataclass(frozen=True)
class RunOutcome:
    games: int
    settled: bool
    order_right: bool


def _until_settled(field: SimulatedField, step: Callable[[], None], settings: SchedulerSettings,
                   max_games: int) -> RunOutcome:
    while field.games() < max_games:
        step()
        counts = field.counts()
        if is_settled(fit_elo(counts), counts, field.names, settings):
            return RunOutcome(field.games(), True, field.order_is_right())
    return RunOutcome(field.games(), False, field.order_is_right())


def run_round_robin(field: SimulatedField, settings: SchedulerSettings, max_games: int) -> RunOutcome:
    """Whole round-robin rounds (every pair once, seats swapped) until settled, checked per round."""
    pairs = [(a, b) for x, a in enumerate(field.names) for b in field.names[x + 1:]]

    def one_round() -> None:
        for a, b in pairs:
            field.play_pair(a, b)

    return _until_settled(field, one_round, settings, max_games)


def run_active(field: SimulatedField, settings: SchedulerSettings, max_games: int, seed: int = 0,
               batch: int = 16) -> RunOutcome:
    """The active scheduler choosing `batch` pairs at a time (as parallel workers would)."""
    scheduler = Scheduler(settings, seed=seed)

    def one_batch() -> None:
        for a, b in scheduler.choose(field.counts(), field.names, k=batch):
            field.play_pair(a, b)

    return _until_settled(field, one_batch, settings, max_games)
