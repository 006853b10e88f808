"""`arena analyze`: judge every move of stored games against perfect play."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import click

from arena.cli_common import WholeRange, solver_processes_option

FORMATS = ("table", "csv", "json")


def _load(path: str):
    from arena.reports.games_io import GamesFileError, load_games

    try:
        return load_games(path)
    except GamesFileError as exc:
        raise click.ClickException(str(exc)) from None


def _progress(total: int):
    """A rich progress bar on a terminal (stderr), else None: (advance, stop)."""
    if not sys.stderr.isatty() or total == 0:
        return None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    progress = Progress("[progress.description]{task.description}", BarColumn(),
                        MofNCompleteColumn(), TimeRemainingColumn(),
                        console=Console(file=sys.stderr), transient=True)
    task = progress.add_task("analysing", total=total)
    progress.start()
    return (lambda: progress.advance(task)), progress.stop


def analyse_new_games(source: Path, budget_s: float, redo: bool,
                      processes: int = 1) -> tuple[int, int, int, object]:
    """Analyse the games of `source` not in its analysis.db yet (`arena.solver.analysis_run`),
    with a progress bar on a terminal: (analysed, already, skipped, the source's games)."""
    from arena.solver.analysis_run import AnalysisError, analyse_games

    games = _load(str(source))
    try:
        counts = analyse_games(source, games, budget_s, redo, processes, progress=_progress)
    except AnalysisError as exc:
        raise click.ClickException(str(exc)) from None
    return (*counts, games)


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
@click.argument("source", metavar="RESULTS", type=click.Path(path_type=Path))
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
    other drop-only four-in-a-row boards of at most 63 bits, standard
    rules) it settles the value of each position; per bot it reports
    accuracy (moves keeping the exact score), blunders (a win turned into
    a draw or loss, a draw into a loss) with a Wilson 95% interval, split
    by phase (opening <= 14 discs, middle <= 28, end) and seat, and the
    median ply of the first blunder. Results are kept in analysis.db
    beside the games: a rerun analyses only new games.
    """
    from arena.cli_common import stop_exits
    from arena.solver.analysis_store import AnalysisStore, analysis_path
    from arena.tournament.config import default_concurrency

    if not source.exists():  # one line, as standings and publish say it (click's was three)
        from arena.reports.games_io import no_such_path

        raise click.ClickException(no_such_path(source))
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
