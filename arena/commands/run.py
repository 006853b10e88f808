"""`arena run`: run (or resume) a tournament from a TOML file."""

from __future__ import annotations

import shlex
import signal
import sqlite3
import sys
from functools import partial
from pathlib import Path

import click


def _resume_hint(file: Path, concurrency: int | None) -> str:
    argv = ["arena", "run", str(file)]
    if concurrency is not None:
        argv += ["--concurrency", str(concurrency)]
    return shlex.join(argv)


@click.command(name="run")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--concurrency", "-j", type=click.IntRange(min=1), default=None,
              help="Games played at once (default: the file's `concurrency`, else the cores).")
@click.option("--fresh", is_flag=True,
              help="Start over: move the stored results aside to a backup folder (never deleted).")
@click.option("--quiet", "-q", is_flag=True, help="No progress output, only the summary.")
@click.option("--output", "-o", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Results directory (default: the file's `output`, else results/<name>/).")
def command(file: Path, concurrency: int | None, fresh: bool, quiet: bool,
            output: Path | None) -> None:
    """Run (or resume) a tournament from a TOML file.

    Finished games are stored one by one in the results directory; running the same command
    again skips them and plays the rest. Ctrl-C stops cleanly.
    """
    from arena.tournament.config import ConfigError, load_config
    from arena.tournament.progress import Progress
    from arena.tournament.runner import RunError, Runner
    from arena.tournament.store import StoreError

    try:
        config = load_config(file, concurrency=concurrency)
    except ConfigError as error:
        raise click.ClickException(str(error)) from None
    except KeyboardInterrupt:
        click.echo("Stopped before anything ran.", err=True)
        sys.exit(130)
    if output is not None:
        config.output = output
    runner = Runner(config, fresh=fresh, progress_factory=partial(Progress, quiet=quiet))
    try:
        result = runner.run()
    except KeyboardInterrupt:  # before the runner's own handler was installed
        click.echo("Stopped before any game ran; nothing was lost.", err=True)
        sys.exit(130)
    except (StoreError, RunError) as error:
        raise click.ClickException(str(error)) from None
    except OSError as error:
        raise click.ClickException(f"cannot use {config.output}: {error}") from None
    except sqlite3.Error as error:  # the store turns known cases into StoreError; a last guard
        raise click.ClickException(f"{config.output}: results database error: {error}") from None

    if result.backup is not None:
        click.echo(f"Previous results moved to {result.backup}")
    progress_plain = quiet or not sys.stdout.isatty()
    if result.stopped_by is not None or result.error is not None:
        click.echo(
            f"Stopped: {result.done} of {result.total} games done. "
            f"Run the same command again to resume: {_resume_hint(file, concurrency)}",
            err=True,
        )
        if result.error is not None:
            sys.exit(1)
        sys.exit(128 + int(result.stopped_by or signal.SIGINT))

    if progress_plain and not quiet and result.played:
        from arena.tournament.progress import Standings
        from arena.tournament.store import Store

        standings = Standings([b.name for b in config.bots])
        try:
            with Store(config.output) as store:
                for first, second, res, reason, _variant in store.results():
                    standings.add(first, second, res, reason)
        except (StoreError, sqlite3.Error) as error:
            click.echo(f"warning: cannot show the standings: {error}", err=True)
        else:
            for line in standings.lines():
                click.echo(line)
    rate = result.played / result.elapsed if result.elapsed > 0 else 0.0
    if result.played:
        click.echo(
            f"Done: {result.done} of {result.total} games ({result.played} played now in "
            f"{result.elapsed:.1f} s, {rate:.2f} games/s, {result.forfeits} forfeits). "
            f"Results in {config.output}/"
        )
    else:
        click.echo(f"Nothing to play: all {result.total} games are done. Results in "
                   f"{config.output}/")
    _write_reports(Path(config.output))


def _write_reports(results_dir: Path) -> None:
    try:
        from arena.reports import write_reports
    except ImportError:
        return
    try:
        write_reports(results_dir)
    except Exception as error:  # noqa: BLE001 - the games are safe; reports can be redone
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        click.echo(f"warning: could not write the reports: {first} "
                   f"(the games are stored; try `arena standings {results_dir}`)", err=True)
