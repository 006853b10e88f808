"""The analysis of a results folder's (or games file's) games: which games the solver judges,
and the loop that judges the new ones into its analysis.db (`arena analyze`, the site and
`standings` read what it stores). No terminal here: the command gives a progress callback."""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

from arena.game import DEFAULT_VARIANT
from arena.reasons import ADJUDICATED

# total -> (a callable advancing the bar by one game, a callable ending the bar), or None
ProgressFactory = Callable[[int], tuple[Callable[[], None], Callable[[], None]] | None]


class AnalysisError(RuntimeError):
    """An analysis that cannot go on (one-line message); the games judged so far are kept."""


def rows_to_analyse(games: Any, known: set[str]) -> tuple[list[tuple[str, dict]], int, int]:
    """(key, row) of the games not analysed yet whose variant the solver handles, the number
    of games skipped because it does not (`scope.unsolvable_reason`: pops, another rule, other
    line lengths, boards over 63 bits), and
    the number analysed before."""
    from arena.game import VariantError, parse_variant
    from arena.solver.analysis_store import game_key, move_tokens
    from arena.solver.scope import solvable

    todo, unsupported, already = [], 0, 0
    for record in games.to_dict("records"):
        spec = str(record.get("variant") or DEFAULT_VARIANT)
        moves = move_tokens(record.get("moves"))
        try:
            variant = parse_variant(spec)
        except VariantError:
            unsupported += 1
            continue
        if not solvable(variant):
            unsupported += 1
            continue
        row = {
            "game_id": str(record.get("game_id") or ""), "variant": variant.spec,
            "first": str(record["first"]), "second": str(record["second"]),
            "result": None if record.get("result") is None or (
                isinstance(record.get("result"), float) and math.isnan(record["result"]))
            else float(record["result"]),
            "plies": len(moves.split()), "moves": moves,
            "opening_plies": len(move_tokens(record.get("opening")).split()),
            "adjudicated": str(record.get("reason") or "") == ADJUDICATED,  # result proven
        }
        key = game_key(row["game_id"], row["variant"], moves)
        if key not in known:
            todo.append((key, row))
        else:
            already += 1
    return todo, unsupported, already


def analyse_games(source: Path, games: Any, budget_s: float, redo: bool, processes: int = 1,
                  progress: ProgressFactory | None = None) -> tuple[int, int, int]:
    """Judge the games of `source` (its games table `games`) not in its analysis.db yet, on
    up to `processes` processes: (analysed, already, skipped). AnalysisError on a game whose
    moves cannot be replayed, a worker that died or an analysis.db that cannot be opened."""
    from arena.solver.analysis_store import AnalysisStore, analysis_path, move_tokens
    from arena.solver.pool import WorkerDied
    from arena.solver.tasks import analysed

    if len(games) and not any(move_tokens(m) for m in games["moves"]):
        raise AnalysisError(
            f"{source}: no game has its moves (a games file needs a moves column, as `arena "
            "export` writes it): nothing to analyse")
    path = analysis_path(source)
    fresh = not path.exists()
    try:
        store = AnalysisStore(path)
    except OSError as exc:
        raise AnalysisError(str(exc)) from None
    saved = 0
    failed = True
    try:
        if redo:
            store.forget_all()
        todo, unsupported, already = rows_to_analyse(games, store.known())
        bar = None
        try:
            # forked before the bar's thread; closing: an error or Ctrl-C ends the workers now
            with closing(analysed(todo, budget_s, processes)) as results:
                bar = progress(len(todo)) if progress is not None else None
                for done in results:
                    if done.analysis is None:
                        raise AnalysisError(
                            f"{source}: game {done.row['game_id'] or done.key}: cannot replay "
                            f"its moves: {done.error} (moves are space-separated tokens such "
                            "as 'd4 d3', as `arena export` writes them)")
                    store.save(done.key, done.row, done.analysis)
                    saved += 1
                    if bar is not None:
                        bar[0]()
        except WorkerDied as exc:
            raise AnalysisError(f"{source}: {exc}; the games analysed so far are kept in "
                                "analysis.db: run again to go on") from None
        finally:
            if bar is not None:
                bar[1]()
        failed = False
        return len(todo), already, unsupported
    finally:
        store.close()
        if failed and fresh and not saved:  # a first run that kept nothing leaves no file
            for leftover in (path, path.with_name(path.name + "-wal"),
                             path.with_name(path.name + "-shm")):
                leftover.unlink(missing_ok=True)
