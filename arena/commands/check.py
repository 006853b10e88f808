"""`arena check BOT`: a conformance test for bot authors (exit status 0 only if all pass)."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from arena.cli_common import LIMIT_HELP, LimitSetting, WholeRange, make_log_dir
from arena.timecontrol import TimeControl


@click.command(name="check")
@click.argument("bot")
@click.option("--args", "bot_args", default="", help="Extra command-line arguments (one string).")
@click.option("--games", "-n", default=2, show_default=True, type=WholeRange(min=1),
              help="Games per preset against random.")
@click.option("--move-ms", default=TimeControl().move_ms, show_default=True, type=WholeRange(min=1),
              help="Per-move limit in ms.")
@click.option("--startup-ms", default=5000, show_default=True, type=WholeRange(min=0),
              help="Start-up allowance in ms.")
@click.option("--grace-ms", default=TimeControl().grace_ms, show_default=True,
              type=WholeRange(min=0),
              help="Grace added to every deadline (the start-up allowance's too), as on play.")
@click.option("--variant", "-v", "variants", multiple=True, metavar="SPEC",
              help="Also play games in this variant (repeat for several), e.g. the variants of "
              "your tournament; replaces the default odd sizes (classic:7x4, "
              "classic:10x9,connect=5, popout:5x5).")
@click.option("--only-variants", "only_variants", is_flag=True,
              help="Play only the --variant ones, not the presets: for a bot that plays only "
              "your tournament's variants (e.g. classic only), as `league submit` checks.")
@click.option("--sandbox", "sandbox_mode", type=click.Choice(["auto", "on", "off"]), default="auto",
              show_default=True, help="Check the bot in the bubblewrap sandbox it will meet in "
              "tournaments (see SECURITY.md); on refuses to start without it.")
@click.option("--limit", "limit_settings", multiple=True, type=LimitSetting(), help=LIMIT_HELP)
@click.option("--log-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write the bot's stderr of each game to this folder (check-N-SEAT-bot.log); "
              "a failed game's log is named under it.")
def command(bot, bot_args, games, move_ms, startup_ms, grace_ms, variants, only_variants,
            sandbox_mode, limit_settings, log_dir) -> None:
    """Check that BOT follows the protocol: handshake, unknown lines, games against random in
    every preset (pops, fixed columns) and in odd sizes and line lengths (or the --variant
    ones), an opening, a clock, back-to-back games in one process, quit. Prints pass/fail per
    check with hints, start-up time and move-time percentiles."""
    from arena.botspec import BotSpecError, resolve_bot
    from arena.conformance import ODD_VARIANTS, failed_game_lines, run_checks

    if log_dir is not None:
        make_log_dir(log_dir)
    from arena.game import VariantError, parse_variant

    for spec_text in variants:
        try:
            parse_variant(spec_text)
        except VariantError as error:
            raise click.BadParameter(str(error), param_hint="'--variant'") from None
    if only_variants and not variants:
        raise click.BadParameter("name the variants to play with --variant (e.g. -v classic)",
                                 param_hint="'--only-variants'")

    try:
        extra = shlex.split(bot_args)
    except ValueError as error:
        raise click.BadParameter(f"{bot_args!r}: {error}", param_hint="'--args'") from None
    try:
        spec = resolve_bot(bot, extra)
    except (BotSpecError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    tc = TimeControl(move_ms=move_ms, startup_ms=startup_ms, grace_ms=grace_ms)
    from arena.protocol import printable

    click.echo(printable(f"checking {spec.name} ({' '.join(spec.argv)})"))  # args: the bot's

    def show(result) -> None:
        mark = "PASS" if result.ok else "FAIL"
        text = f"{mark}  {result.name}"
        if result.detail:
            text += f": {result.detail}"
        click.echo(text)
        for line in failed_game_lines(result):
            click.echo(f"      {line}")
        if not result.ok and result.hint:
            click.echo(f"      hint: {result.hint}")

    from arena import sandbox

    try:
        limits = dict(limit_settings)
        with sandbox.policy_for_command(sandbox_mode, lambda line: click.echo(line, err=True),
                                        limits) as run:
            # what the bot will have (network, memory cap, ...): the policy its starts get
            click.echo(run.describe(sandbox.default_policy().limits))
            report = run_checks(spec, tc, games, progress=show, variants=variants or ODD_VARIANTS,
                                only_these=only_variants, log_dir=log_dir)
    except sandbox.SandboxUnavailable as error:
        raise click.ClickException(str(error)) from None
    if report.startup_ms:
        values = sorted(report.startup_ms)
        click.echo(f"start-up: {values[len(values) // 2]:.0f} ms median, {values[-1]:.0f} ms max "
                   f"over {len(values)} start(s)")
    pct = report.percentiles()
    if pct:
        click.echo("move time: " + ", ".join(f"{k} {v:.1f} ms" for k, v in pct.items())
                   + f" over {len(report.move_ms)} moves")
    failed = sum(not r.ok for r in report.results)
    click.echo("all checks passed" if report.ok else f"{failed} check(s) failed")
    raise SystemExit(0 if report.ok else 1)
