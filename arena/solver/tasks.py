"""The solver pool's tasks (`arena.solver.pool.in_order`): a game's analysis (`arena
analyze`) and a position's result (`arena openings`).

Each game is analysed whole by one process, so its positions share the solver table its last
positions filled (`analyse` settles them from the end)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena.game import Game
from arena.solver.analysis import GameAnalysis, analyse
from arena.solver.pool import Results, in_order, oracle_for


@dataclass(frozen=True)
class Analysed:
    """One game's outcome: its analysis, or why its moves could not be replayed."""

    key: str
    row: dict
    analysis: GameAnalysis | None
    error: str | None = None


def analyse_row(task: tuple[str, dict, float]) -> Analysed:
    """Analyse one game row (key, the row `arena analyze` builds, seconds per position)."""
    key, row, budget_s = task
    oracle = oracle_for(row["variant"])
    try:
        analysis = analyse(oracle.variant, row["moves"].split(), row["opening_plies"],
                           lambda game: oracle.timed(oracle.score, game, budget_s),
                           adjudicated=row["result"] if row["adjudicated"] else None)
    except ValueError as exc:
        return Analysed(key, row, None, str(exc))
    return Analysed(key, row, analysis)


def analysed(todo: Sequence[tuple[str, dict]], budget_s: float,
             processes: int) -> Results[Analysed]:
    """The games of `todo` ((key, row) pairs) analysed, in their order (see `in_order`)."""
    return in_order(analyse_row, [(key, row, budget_s) for key, row in todo], processes)


def weak_score(task: tuple[str, list[int], float]) -> int | None:
    """A task for `in_order`: the result (-1, 0, 1) for the side to move of the position after
    the moves (variant spec, engine moves, seconds), None when not settled in time."""
    spec, moves, seconds = task
    oracle = oracle_for(spec)
    game = Game(oracle.variant)
    for move in moves:
        game.push(move)
    return oracle.timed(oracle.weak_score, game, seconds)
