"""`arena publish`: build a static leaderboard website from a results directory."""

from __future__ import annotations

import click

from arena.cli_common import exclude_option


@click.command(name="publish")
@click.argument("results", metavar="RESULTS", type=click.Path(path_type=str))
@click.option("--out", "out_dir", metavar="DIR", type=click.Path(file_okay=False, path_type=str),
              default=None, help="Where to write the site (default: RESULTS/site, or <file>_site next to a "
                   "games file).")
@click.option("--no-plots", is_flag=True, help="Skip the charts (faster).")
@click.option("--no-logs", is_flag=True,
              help="Leave out the bots' stderr logs (by default the last lines of each "
                   "forfeiting bot's log are shown, unless the tournament sets "
                   "publish_logs = false).")
@exclude_option
def command(results: str, out_dir: str | None, no_plots: bool, no_logs: bool,
            exclude: tuple[str, ...]) -> None:
    """Build a static site from the tournament in RESULTS.

    \b
    RESULTS is a results directory (or a CSV / JSONL games file). The site is plain files:
    leaderboard (overall and per variant), crosstable, plots, a page per bot, a list of games
    with a replay viewer, a Markdown leaderboard and CSV / JSON downloads. It works offline:
    open DIR/index.html in a browser or copy DIR to any static host. DIR is replaced as a
    whole once the new site is complete; a failed build leaves it as it was.
    After `arena analyze RESULTS`, the leaderboard and bot pages show accuracy and
    blunder rates, and the replays mark blunders and the theoretical value of each ply.

    \b
    What the site shows: every stored field of every game (moves, move times, forfeit
    details), the bots' names, authors, languages, versions, program hashes and command
    lines (without the publisher's folders), the tournament settings, and the end of the
    stderr log of each bot that forfeited (not with --no-logs).
    """
    from arena.publish.load import PublishError
    from arena.publish.site import build_site
    from arena.reports.games_io import UnknownBotError

    def warn(message: str) -> None:
        click.echo(f"warning: {message}", err=True)

    from arena.cli_common import stop_exits

    try:
        # Ctrl-C: 130, with the last site whole and no half-built folder (a league's background
        # rebuild is stopped so; click's "Aborted!" exit 1 read as a failed build)
        with stop_exits("Stopped: the site is as it was before this build."):
            out = build_site(results, out_dir, plots=not no_plots,
                             logs=False if no_logs else None, warn=warn, exclude=exclude)
    except UnknownBotError as error:
        raise click.BadParameter(str(error), param_hint="'--exclude'") from None
    except PublishError as error:
        raise click.ClickException(str(error)) from None
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        raise click.ClickException(f"cannot build the site: {where}{error.strerror or error}") \
            from None
    except ValueError as error:  # GamesFileError and friends: one line, no traceback
        text = str(error).strip().splitlines()
        raise click.ClickException(text[0] if text else type(error).__name__) from None
    click.echo(f"site written to {out}/index.html")
