"""`arena variants`: the presets and their parameters."""

from __future__ import annotations

import json

import click

from arena.game import PRESET_SUMMARIES, PRESETS
from arena.game.rules import RULES
from arena.game.variant import SPEC_SYNTAX


@click.command(name="variants")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per preset.")
def command(as_json: bool) -> None:
    """List the variant presets and their parameters.

    \b
    A variant spec is PRESET[:COLSxROWS][,connect=K][,max-plies=N][,rule=NAME], for
    example popout:8x7 or classic:9x7,connect=5. Sizes run from 4x4 to 20x20.
    """
    if as_json:
        for variant in PRESETS.values():
            click.echo(json.dumps({"name": variant.name, **variant.describe()}))
        return
    # One format for the header and the rows, so that they cannot drift apart.
    row = "{:<12} {:<6} {:>7} {:>5} {:>7} {:>9}  {}"
    click.echo(row.format("preset", "size", "connect", "pops", "fixed", "max-plies", "about"))
    for name, variant in PRESETS.items():
        fixed = ",".join(map(str, variant.fixed_columns)) or "-"
        click.echo(row.format(name, f"{variant.columns}x{variant.rows}", variant.connect,
                              "yes" if variant.pops else "no", fixed, variant.max_plies,
                              PRESET_SUMMARIES[name]))
    click.echo(f"\nSpec: {SPEC_SYNTAX}  e.g. popout:8x7, classic:9x7,connect=5")
    click.echo("\nRules (rule=NAME; a spec without it plays the standard rules):")
    for name in sorted(RULES):
        click.echo(f"  {name:<14} {RULES[name].summary}")
