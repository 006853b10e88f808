"""`arena analyze`: judge every move of stored games against perfect play."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import click

from arena.cli_common import WholeRange, solver_processes_option
from arena.game import DEFAULT_VARIANT
from arena.reasons import ADJUDICATED

FORMATS = ("table", "csv", "json")


def _load(path: str):
    from arena.reports.games_io import GamesFileError, load_games

    try:
        return load_games(path)
    except GamesFileError as exc:
        raise click.ClickException(str(exc)) from None


def _rows_to_analyse(games, known: set[str]) -> tuple[list[tuple[str, dict]], int, int]:
    """(key, row) of the games not analysed yet whose variant the solver handles, the number
    of games skipped because it does not (pops, other line lengths, boards over 63 bits), and
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


def _progress(total: int):
    """A rich progress bar on a terminal (stderr), else nothing."""
    if not sys.stderr.isatty() or total == 0:
        return None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    progress = Progress("[progress.description]{task.description}", BarColumn(),
                        MofNCompleteColumn(), TimeRemainingColumn(),
                        console=Console(file=sys.stderr), transient=True)
    return progress


def analyse_new_games(source: Path, budget_s: float, redo: bool,
                      processes: int = 1) -> tuple[int, int, int, object]:
    """Analyse the games of `source` not in its analysis.db yet, on up to `processes`
    processes: (analysed, already, skipped, the source's games table)."""
    from contextlib import closing

    from arena.solver.analysis_store import AnalysisStore, analysis_path, move_tokens
    from arena.solver.pool import WorkerDied
    from arena.solver.tasks import analysed

    games = _load(str(source))
    if len(games) and not any(move_tokens(m) for m in games["moves"]):
        raise click.ClickException(
            f"{source}: no game has its moves (a games file needs a moves column, as `arena "
            "export` writes it): nothing to analyse")
    try:
        store = AnalysisStore(analysis_path(source))
    except OSError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        if redo:
            store.forget_all()
        known = store.known()
        todo, unsupported, already = _rows_to_analyse(games, known)
        progress = None
        try:
            # forked before the bar's thread; closing: an error or Ctrl-C ends the workers now
            with closing(analysed(todo, budget_s, processes)) as results:
                progress = _progress(len(todo))
                task = progress.add_task("analysing", total=len(todo)) if progress else None
                if progress:
                    progress.start()
                for done in results:
                    if done.analysis is None:
                        raise click.ClickException(
                            f"{source}: game {done.row['game_id'] or done.key}: cannot replay "
                            f"its moves: {done.error} (moves are space-separated tokens such "
                            "as 'd4 d3', as `arena export` writes them)")
                    store.save(done.key, done.row, done.analysis)
                    if progress:
                        progress.advance(task)
        except WorkerDied as exc:
            raise click.ClickException(f"{source}: {exc}; the games analysed so far are kept "
                                       "in analysis.db: run again to go on") from None
        finally:
            if progress:
                progress.stop()
        return len(todo), already, unsupported, games
    finally:
        store.close()


def _fmt(x: object, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


BOT_COLUMNS = [
    ("bot", "bot"), ("games", "games"), ("moves", "judged"), ("unjudged", "unjudged"),
    ("accuracy", "accuracy %"), ("blunder_rate", "blunders %"), ("interval", "95% interval"),
    ("opening_blunder_rate", "opening %"), ("middle_blunder_rate", "middle %"),
    ("end_blunder_rate", "end %"), ("seat1_blunder_rate", "seat 1 %"),
    ("seat2_blunder_rate", "seat 2 %"), ("first_blunder_ply", "first blunder ply"),
]
ANALYSED_GAME_COLUMNS = ["game_id", "variant", "first", "second", "result", "plies", "decided_ply",
                         "positions", "settled"]


def render(rows: list[dict], columns: list[str], fmt: str, headers: list[str] | None = None) -> str:
    import csv
    import io
    import json

    if fmt == "json":
        clean = [{c: (None if isinstance(r.get(c), float) and math.isnan(r[c]) else r.get(c))
                  for c in columns} for r in rows]
        return json.dumps(clean, indent=2)
    if fmt == "csv":
        from arena.spreadsheet import write_cell

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        for r in rows:
            writer.writerow(["" if isinstance(r.get(c), float) and math.isnan(r[c])
                             else write_cell(r.get(c, "")) for c in columns])
        return buffer.getvalue().rstrip("\n")
    from arena.reports.render import text_table

    headers = headers or columns
    cells = [[_fmt(r.get(c)) if c != "interval" else r["interval"] for c in columns] for r in rows]
    return text_table(headers, cells, ["l"] + ["r"] * (len(columns) - 1))


@click.command(name="analyze")
@click.argument("source", metavar="RESULTS", type=click.Path(exists=True, path_type=Path))
@click.option("--budget-ms", type=WholeRange(min=1, max=86_400_000), default=500, show_default=True,
              help="Solver time per position; a position not settled in it counts as unjudged.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option("--games", "per_game", is_flag=True,
              help="Print the per-game table (the ply where each result was decided) instead "
                   "of the per-bot one.")
@click.option("--redo", is_flag=True, help="Analyse every game again (e.g. with a larger budget).")
@solver_processes_option
def command(source: Path, budget_ms: int, fmt: str, per_game: bool, redo: bool,
            concurrency: int | None) -> None:
    """Judge every move in RESULTS against perfect play.

    \b
    RESULTS is a results or league folder, or a games file (CSV/JSONL).
    For every game of a variant the exact solver handles (classic 7x6 and
    other drop-only four-in-a-row boards of at most 63 bits) it settles the
    value of each position; per bot it reports accuracy (moves keeping the
    exact score), blunders (a win turned into a draw or loss, a draw into a
    loss) with a Wilson 95% interval, split by phase (opening <= 14 discs,
    middle <= 28, end) and seat, and the median ply of the first blunder.
    Results are kept in analysis.db beside the games: a rerun analyses only
    new games.
    """
    from arena.cli_common import stop_exits
    from arena.solver.analysis_store import AnalysisStore, analysis_path
    from arena.tournament.config import default_concurrency

    processes = concurrency or default_concurrency()
    with stop_exits("Stopped: the games analysed so far are kept in analysis.db; run again to "
                    "go on."):
        done, before, unsupported, games = analyse_new_games(source, budget_ms / 1000, redo,
                                                             processes)
    print(f"analysed {done} new game(s), {before} already analysed"
          + (f", {unsupported} in variants the solver cannot settle" if unsupported else ""),
          file=sys.stderr)
    store = AnalysisStore(analysis_path(source))
    try:
        stored = store.read().of_games(games)  # not games since taken out of a games file
    finally:
        store.close()
    if per_game:
        click.echo(render(stored.games, ANALYSED_GAME_COLUMNS, fmt))
        return
    rows = stored.bot_rows()  # the site's accuracy column shows these same rows
    for r in rows:
        r["interval"] = (f"{r['blunder_low']:.1f}-{r['blunder_high']:.1f}"
                         if not math.isnan(r["blunder_low"]) else "-")
    if fmt == "table":
        click.echo(render(rows, [c for c, _ in BOT_COLUMNS], fmt, [h for _, h in BOT_COLUMNS]))
    else:
        columns = [c for c in rows[0] if c != "interval"] if rows else ["bot"]
        click.echo(render(rows, columns, fmt))
