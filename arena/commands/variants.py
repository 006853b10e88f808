"""`arena variants`: the presets and their parameters."""

from __future__ import annotations

import json

import click

from arena.game import PRESET_SUMMARIES, PRESETS


@click.command(name="variants")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per preset.")
def command(as_json: bool) -> None:
    """List the variant presets and their parameters.

    \b
    A variant spec is PRESET[:COLSxROWS][,connect=K][,max-plies=N], for example
    popout:8x7 or classic:9x7,connect=5. Sizes run from 4x4 to 20x20.
    """
    if as_json:
        for variant in PRESETS.values():
            click.echo(json.dumps({"name": variant.name, **variant.describe()}))
        return
    header = f"{'preset':<12} {'size':>6} {'connect':>7} {'pops':>5} {'fixed':>7} {'max-plies':>9}  about"
    click.echo(header)
    for name, variant in PRESETS.items():
        fixed = ",".join(map(str, variant.fixed_columns)) or "-"
        click.echo(
            f"{name:<12} {variant.columns}x{variant.rows:<4} {variant.connect:>7} "
            f"{'yes' if variant.pops else 'no':>5} {fixed:>7} {variant.max_plies:>9}  "
            f"{PRESET_SUMMARIES[name]}"
        )
    click.echo("\nSpec: PRESET[:COLSxROWS][,connect=K][,max-plies=N]  e.g. popout:8x7, classic:9x7,connect=5")
