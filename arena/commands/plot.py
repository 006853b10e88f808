"""`arena plot`: charts of ratings, head-to-head results and timings."""

from __future__ import annotations

import re
from pathlib import Path

import click


def variant_folder(spec: str) -> str:
    """The folder name of one variant's plots: ``popout:7x6`` -> ``variant-popout-7x6``."""
    return "variant-" + (re.sub(r"[^A-Za-z0-9]+", "-", spec).strip("-") or "unnamed")


@click.command(name="plot")
@click.argument("input_path", metavar="INPUT", type=click.Path())
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output directory (default: INPUT/plots for a results directory, "
                   "<file>_plots next to a games file; with --variant, its own folder "
                   "variant-<spec> inside it).")
@click.option("--variant", metavar="SPEC", default=None,
              help="Only the games of this variant (written to their own folder, never over "
                   "the plots of all variants).")
@click.option("--anchor", metavar="BOT=ELO", default=None,
              help="Report ratings relative to BOT fixed at ELO (default: mean 0).")
def command(input_path: str, out_dir: str | None, variant: str | None,
            anchor: str | None) -> None:
    """Plot ratings, head-to-head and timing charts as PNG and SVG.

    \b
    Charts: ratings with 95% intervals, ratings over the tournament,
    head-to-head heatmap, score per variant, first-player advantage per
    variant, move-time distribution per bot (when move times were recorded).
    """
    from arena.commands.standings import (  # first: limits BLAS threads before numpy loads
        check_anchor,
        load_or_fail,
        parse_anchor,
    )
    from arena.ratings.table import canonical_variant, select_variant
    from arena.reports.plots import write_plots

    src = Path(input_path)
    games = load_or_fail(input_path)
    anchor_t = parse_anchor(anchor)
    try:
        spec = canonical_variant(games, variant) if variant is not None else None
        games = select_variant(games, spec)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--variant'") from None
    check_anchor(games, anchor_t)
    if out_dir is None:
        out = src / "plots" if src.is_dir() else src.with_name(src.stem + "_plots")
        if spec is not None:
            out = out / variant_folder(spec)
    else:
        out = Path(out_dir)
    try:
        written = write_plots(games, out, anchor=anchor_t)
    except OSError as exc:
        raise click.ClickException(f"{out}: cannot write the plots: {exc.strerror or exc}") \
            from None
    if not written:
        click.echo("no rated games: nothing to plot")
        return
    for path in written:
        click.echo(str(path))
