"""`arena standings`: ratings and standings from a results directory or a games file."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import click

BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def single_threaded_numerics() -> None:
    """One BLAS thread, unless the user chose otherwise: the ratings' linear algebra is small
    (a bots x bots Newton step, bootstrap refits), where OpenBLAS's spinning threads only lose,
    badly so on a busy machine (a 0.6 s bootstrap took 25 s). Takes effect only before numpy is
    loaded, so the commands call it first; arena.ratings.elo also limits threads through
    threadpoolctl when it is installed."""
    for variable in BLAS_THREAD_VARIABLES:
        os.environ.setdefault(variable, "1")


single_threaded_numerics()

from arena.cli_common import FiniteRange, WholeRange, exclude_option  # noqa: E402
from arena.reasons import FORFEIT_REASONS  # noqa: E402
from arena.reports.render import FORMATS  # noqa: E402 - loads numpy: after the thread limit

# The rating systems users may turn off (``--no-trueskill``), with what their option's help adds.
# Listed here by name so that `arena --help` does not import the rating code; a test pins it to
# the registry's optional systems (a new optional system goes in both).
OPTIONAL_SYSTEMS: dict[str, str] = {"trueskill": " (the slow part on large files)"}


def parse_anchor(value: str | None) -> tuple[str, float] | None:
    """``BOT=ELO`` -> (bot, elo); raises click.BadParameter."""
    if value is None:
        return None
    from arena.ratings.table import parse_anchor as parse

    try:
        return parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--anchor'") from None


def check_anchor(games, anchor, variant=None) -> None:
    """BadParameter unless the anchor's bot has rated games (in ``variant`` when given)."""
    if anchor is None:
        return
    from arena.ratings.table import rated_bots, select_variant

    bots = rated_bots(select_variant(games, variant))
    if anchor[0] not in bots:
        shown = ", ".join(bots[:10]) + (" ..." if len(bots) > 10 else "")
        raise click.BadParameter(f"bot {anchor[0]!r} has no rated games (bots: {shown})",
                                 param_hint="'--anchor'")


def load_or_fail(path: str, exclude: tuple[str, ...] = ()):
    from arena.reports.games_io import GamesFileError, UnknownBotError, load_games, without_bots

    try:
        games = load_games(path)
    except GamesFileError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        return without_bots(games, exclude)
    except UnknownBotError as exc:
        raise click.BadParameter(str(exc), param_hint="'--exclude'") from None


def terminal_width() -> int | None:
    """Columns to fit the table to: ``COLUMNS`` when set, else the terminal's width; None (no
    limit) when writing to a file or a pipe."""
    import os
    import shutil
    import sys

    value = os.environ.get("COLUMNS", "").strip()
    if value.isdigit() and int(value) > 0:
        return max(int(value), 40)
    if sys.stdout.isatty():
        return max(shutil.get_terminal_size().columns, 40)
    return None


def _skip_options(func: Callable) -> Callable:
    for name, why in reversed(OPTIONAL_SYSTEMS.items()):
        func = click.option(f"--no-{name}", f"no_{name}", is_flag=True,
                            help=f"Do not compute the {name} ratings{why}.")(func)
    return func


@click.command(name="standings")
@click.argument("input_path", metavar="INPUT", type=click.Path())
@click.option("--variant", "variant", metavar="SPEC", default=None,
              help="Only the games of this variant (default: pooled over all variants, then "
                   "one table per variant).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="Output format. csv/json give one table: the pooled one or --variant's.")
@click.option("--anchor", metavar="BOT=ELO", default=None,
              help="Report ratings relative to BOT fixed at ELO (default: mean 0).")
@click.option("--pairs", "show_pairs", is_flag=True,
              help="Also print the pairwise table (head-to-head, Elo difference, LOS, "
                   "pentanomial). With csv/json, print only the pairwise table.")
@click.option("--first-move/--no-first-move", default=True, show_default=True,
              help="Fit a first-move advantage (Elo added to the first player) with the "
                   "ratings. Without it a large advantage pulls every rating toward the mean.")
@click.option("--bootstrap", type=WholeRange(min=0), default=0, metavar="N",
              help="95% intervals from N bootstrap refits instead of the covariance.")
# upper limits: beyond them the rating maths overflows (a traceback for --tau inf or
# --sequential 1e6), and no sensible rating uses them (TrueSkill's initial sigma is 8.3; chess
# K-factors run 10-40)
@click.option("--tau", type=FiniteRange(min=0.0, max=25.0), default=0.0, show_default=True,
              help="TrueSkill dynamics factor, 0-25 (0: strengths do not change).")
@click.option("--sequential", "sequential_k",
              type=FiniteRange(min=0.0, max=400.0, min_open=True), default=None, metavar="K",
              help="Add a sequential Elo column with K-factor K, at most 400 (depends on game "
                   "order).")
@click.option("--facts", "show_facts", is_flag=True,
              help="Also print game facts: first-player score per variant, draws, lengths, "
                   "forfeits and move times per bot.")
@exclude_option
@_skip_options
def command(input_path: str, variant: str | None, fmt: str, anchor: str | None,
            show_pairs: bool, first_move: bool, bootstrap: int, tau: float,
            sequential_k: float | None, show_facts: bool, exclude: tuple[str, ...],
            **skips: bool) -> None:
    """Ratings and standings of the games in INPUT.

    \b
    INPUT is a results directory, or a CSV / JSONL file of games with the
    columns first, second, result (1, 0.5, 0 or 1-0, 1/2-1/2, 0-1 from the
    first player's side) and optionally variant, seq, pair_id.
    Elo is the maximum-likelihood (Bradley-Terry) fit over all games, with
    95% intervals; TrueSkill is computed with the trueskill package, one game
    after the other (about 1.5 s per million games; --no-trueskill skips it).
    """
    from arena.ratings.pairs import pairwise_table
    from arena.ratings.standings import compute_standings
    from arena.ratings.table import anchor_if_present, canonical_variant, select_variant, variants_of
    from arena.reports.games_io import with_accuracy, with_bot_info
    from arena.reports.render import render_pairwise, render_standings
    from arena.solver.analysis_store import analysis_beside

    games = load_or_fail(input_path, exclude)
    analysis = analysis_beside(Path(input_path), games)  # arena analyze's, read once for all tables
    anchor_t = parse_anchor(anchor)
    skip = frozenset(name for name in OPTIONAL_SYSTEMS if skips.get(f"no_{name}"))
    options = {"first_move": first_move, "bootstrap": bootstrap, "tau": tau,
               "sequential_k": sequential_k, "skip": skip}
    try:
        check_anchor(games, anchor_t, variant)
        if fmt in ("csv", "json"):
            if show_pairs:  # the standings' Elo fit, without the other systems
                elo_only = compute_standings(games, variant, anchor=anchor_t,
                                             first_move=first_move, skip=frozenset(OPTIONAL_SYSTEMS))
                pairs = pairwise_table(games, variant, ratings=_ratings(elo_only),
                                       first_move=first_move)
                click.echo(render_pairwise(pairs, fmt), nl=False)
            else:
                table = with_accuracy(with_bot_info(
                    compute_standings(games, variant, anchor=anchor_t, **options), input_path),
                    analysis, variant)
                click.echo(render_standings(table, fmt).rstrip("\n"))
                # the notes that qualify these numbers (a regularised fit, games left out)
                # reach a script on stderr: the table's format has no place for them
                for warning in table.attrs.get("warnings", []):
                    click.echo(f"warning: {warning}", err=True)
                if table.empty:
                    click.echo(f"warning: no rated games in {input_path}", err=True)
            return
        sections: list[tuple[str | None, str | None]] = []
        present = variants_of(games)
        if variant is not None:
            # titled by the spec the games store (`classic:7x6` is `classic`: new-user review)
            sections.append((variant, f"Variant {canonical_variant(games, variant)}"))
        elif len(present) > 1:
            sections.append((None, "All variants (pooled)"))
            sections += [(v, f"Variant {v}") for v in present]
        else:
            sections.append((None, f"Variant {present[0]}" if present and present[0] else None))
        width = terminal_width() if fmt == "table" else None
        out = []
        pair_ratings = None  # the first table is the one of --pairs' games
        for spec, title in sections:
            part_anchor = anchor_t if spec is None or spec == variant else anchor_if_present(
                select_variant(games, spec), anchor_t)
            table = compute_standings(games, spec, anchor=part_anchor, **options)
            if pair_ratings is None:
                pair_ratings = _ratings(table)
            if table.empty:
                out.append(f"{title + ': ' if title else ''}no rated games in {input_path}")
                continue
            table = with_accuracy(with_bot_info(table, input_path), analysis, spec)
            out.append(render_standings(table, fmt, title, width))
        if show_pairs:
            pair_title = "Head to head" + (f" ({variant})" if variant else "")
            pairs = pairwise_table(games, variant, ratings=pair_ratings, first_move=first_move)
            out.append(render_pairwise(pairs, fmt, pair_title, width))
        if show_facts:
            out.append(_facts(games, variant, fmt, width))
        click.echo("\n".join(out).rstrip("\n"))
    except ValueError as exc:
        if "variant" in str(exc):
            raise click.BadParameter(str(exc), param_hint="'--variant'") from None
        raise click.ClickException(str(exc)) from None


def _ratings(table) -> dict[str, float]:
    """Bot -> Elo of a standings table (the one fit, passed on to the pairwise table)."""
    return dict(zip(table["bot"].tolist(), table["elo"].tolist(), strict=True))


def _facts(games, variant, fmt, width=None) -> str:
    from arena.ratings.facts import bot_facts, variant_facts
    from arena.ratings.table import select_variant
    from arena.reports.render import markdown_table, text_table

    g = select_variant(games, variant)
    vf = variant_facts(g)
    bf = bot_facts(g)

    def num(x: float, d: int = 1) -> str:
        return "-" if x != x else f"{x:.{d}f}"

    def table(headers: list[str], rows: list[list[str]], align: list[str]) -> str:
        if fmt == "markdown":
            return markdown_table(headers, rows, align)
        return text_table(headers, rows, align, width, keep=1)

    vh = ["variant", "games", "1st wins", "draws", "2nd wins", "1st score", "+-95%", "draw rate",
          "mean plies"]
    vr = [[str(r.variant) or "-", str(r.games), str(r.first_wins), str(r.draws),
           str(r.second_wins), f"{100 * r.first_score:.1f}%",
           f"{100 * r.first_score_margin:.1f}%", f"{100 * r.draw_rate:.1f}%", num(r.mean_plies)]
          for r in vf.itertuples(index=False)]
    bh = ["bot", "forfeits", *FORFEIT_REASONS, "moves", "ms p50", "ms p90", "ms p99", "ms max"]
    br = [[str(r["bot"]), str(r["forfeits"]),
           *(str(r[f"forfeit_{reason}"]) for reason in FORFEIT_REASONS),
           str(r["moves_timed"]), *(num(r[c]) for c in ("ms_p50", "ms_p90", "ms_p99", "ms_max"))]
          for r in bf.to_dict("records")]
    head = "## " if fmt == "markdown" else ""
    return (f"{head}Game facts per variant\n\n"
            + table(vh, vr, ["l"] + ["r"] * (len(vh) - 1))
            + f"\n\n{head}Forfeits and move times per bot\n\n"
            + table(bh, br, ["l"] + ["r"] * (len(bh) - 1)) + "\n")
