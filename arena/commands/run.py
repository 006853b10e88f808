"""`arena run`: run (or resume) a tournament from a TOML file."""

from __future__ import annotations

import os
import shlex
import signal
import sqlite3
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import click

from arena.cli_common import WholeRange

if TYPE_CHECKING:
    from arena.tournament.config import TournamentConfig
    from arena.tournament.runner import RunResult


def _resume_hint(file: Path, concurrency: int | None, output: Path | None,
                 cluster: str | None = None) -> str:
    argv = ["arena", "run", str(file)]
    if cluster is not None:
        argv += ["--cluster", cluster]
    if concurrency is not None:
        argv += ["--concurrency", str(concurrency)]
    if output is not None:
        argv += ["--output", str(output)]
    return shlex.join(argv)


def _duration(seconds: float) -> str:
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(int(minutes), 60)
    if hours:
        return f"{hours}:{minutes:02d}:{int(secs):02d}"
    return f"{minutes}:{secs:04.1f}" if minutes else f"{secs:.1f} s"


# A set-up shorter than this is not worth a mention in the summary.
SETUP_WORTH_SAYING_S = 1.0


def summary_lines(result: RunResult, output: Path) -> list[str]:
    """The end-of-run summary, in lines that fit 80 columns (paths aside)."""
    if not result.played and not result.voids:
        if result.skipped:
            return [f"Nothing to play: {result.done} of {result.total} games done, "
                    f"{result.skipped} skipped.", f"Results in {output}/"]
        return [f"Nothing to play: all {result.total} games are done.", f"Results in {output}/"]
    playing = result.elapsed - result.setup
    rate = result.played / playing if playing > 0 else 0.0
    # the rate is of play, as the progress lines' was (a cold start's set-up, seconds of
    # bytecode and workers, had made the summary's rate a fifteenth of theirs)
    setup = f" ({_duration(result.setup)} of set-up)" if result.setup >= SETUP_WORTH_SAYING_S else ""
    lines = [
        f"Done: {result.done} of {result.total} games ({result.played} played now).",
        f"{_duration(result.elapsed)} elapsed{setup}, {rate:.2f} games/s, "
        f"{result.forfeits} forfeits.",
    ]
    replayed = result.voids - result.voids_stopped
    if replayed:
        lines.append(f"{replayed} void (neither bot started): not rated, played again next run.")
    if result.voids_stopped:
        lines.append(f"{result.voids_stopped} void (neither bot started): not rated, and not "
                     "played again: their pairing is stopped (see the note above).")
    if result.skipped:
        lines.append(f"{result.skipped} skipped: both bots failed to start too often.")
    if result.forfeits:
        lines.append(f"A forfeit's moves and logs: arena replay {shlex.quote(str(output))} "
                     "GAME_ID --moves")
    from arena.referee import fallback_note

    lines += [f"note: {fallback_note(name, count)}"
              for name, count in sorted(result.fallbacks.items())]
    return [*lines, f"Results in {output}/"]


@click.command(name="run")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--concurrency", "-j", type=WholeRange(min=1), default=None,
              help="Games played at once (default: the file's `concurrency`, else the cores).")
@click.option("--fresh", is_flag=True,
              help="Start over: move the stored results, logs, reports and site aside to a "
                   "backup folder (never deleted).")
@click.option("--quiet", "-q", is_flag=True, help="No progress output, only the summary.")
@click.option("--output", "-o", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Results directory (default: the file's `output`, else results/<name>/).")
@click.option("--plots", is_flag=True,
              help="Also draw the charts into <results>/plots/, as `plots = true` in the file "
                   "does (otherwise `arena plot` or `arena publish` draws them).")
@click.option("--cluster", default=None, metavar="ADDRESS",
              help="Play the games on a Dask cluster: its scheduler (tcp://HOST:8786), or local:N "
                   "for N worker processes here (needs pip install -e '.[cluster]').")
def command(file: Path, concurrency: int | None, fresh: bool, quiet: bool,
            output: Path | None, plots: bool, cluster: str | None) -> None:
    """Run (or resume) a tournament from a TOML file.

    Finished games are stored one by one in the results directory; running the same command
    again skips them and plays the rest. Ctrl-C stops cleanly. At the end, and on a stop, the
    standings files (standings.md/.csv/.json, standings_variants.csv, pairs.csv,
    standings_notes.txt) are written
    there.
    """
    from arena.cli_common import EXIT_SIGINT
    from arena.tournament.config import ConfigError, load_config
    from arena.tournament.progress import Progress
    from arena.tournament.runner import STOP_SIGNALS, RunError, Runner, install_stop_handlers
    from arena.tournament.store import StoreError

    try:
        config = load_config(file, concurrency=concurrency)
    except ConfigError as error:
        raise click.ClickException(str(error)) from None
    except KeyboardInterrupt:
        click.echo("Stopped before anything ran.", err=True)
        sys.exit(EXIT_SIGINT)
    if output is not None:
        config.output = output
        config.output_explicit = True
    if cluster is not None:  # issue 12: overrides the file's `cluster`
        from arena.tournament.dask_executor import cluster_problem

        if problem := cluster_problem(cluster):
            raise click.BadParameter(problem, param_hint="--cluster")
        config.cluster = cluster
    def say_error(error: str) -> None:  # as the run stops, before the games in flight end
        click.echo(f"Error: {error}", err=True)

    runner = Runner(config, fresh=fresh, progress_factory=partial(Progress, quiet=quiet),
                    on_error=say_error)
    early: list[int] = []

    def outside_the_runner(signum: int, _frame: object) -> None:
        """A stop signal while the runner's own handler is not in place (before it, or after
        the run): the command stops where it is, but not while the runner, stopping already,
        makes its last writes (an impatient operator's second Ctrl-C had cut them short)."""
        if runner.stop.is_set() and not reports[0]:
            return
        early.append(signum)
        raise KeyboardInterrupt

    reports = [False]  # True once only the reports are left to write: a signal may cut them

    install_stop_handlers(outside_the_runner)
    try:
        result = runner.run()
    except KeyboardInterrupt:  # outside the runner's own handler: no stored game is lost
        click.echo("Stopped; no stored game was lost. Run the same command again to resume:",
                   err=True)
        click.echo(f"  {_resume_hint(file, concurrency, output, cluster)}", err=True)
        sys.exit(128 + (early[0] if early else signal.SIGINT))
    except (StoreError, RunError) as error:
        if getattr(error, "resumable", False):  # with this command's own options
            raise click.ClickException(
                f"{error}: {_resume_hint(file, concurrency, output, cluster)}") from None
        raise click.ClickException(str(error)) from None
    except BrokenPipeError:  # `arena run ... | head`: the reader went, not the results folder
        sys.stdout = open(os.devnull, "w")
        click.echo("Stopped: the output was closed (broken pipe); the finished games are "
                   "stored. Run the same command again to resume.", err=True)
        sys.exit(1)
    except OSError as error:
        raise click.ClickException(f"cannot use {config.output}: {error}") from None
    except sqlite3.Error as error:  # the store turns known cases into StoreError; a last guard
        raise click.ClickException(f"{config.output}: results database error: {error}") from None

    if result.stopped_by is not None or result.error is not None:
        click.echo(f"Stopped: {result.done} of {result.total} games done. Run the same "
                   "command again to resume:", err=True)
        click.echo(f"  {_resume_hint(file, concurrency, output, cluster)}", err=True)
        if result.played:  # standings.* of the games so far, not an earlier run's (no plots)
            reports[0] = True  # one more signal cuts them short: the games are stored
            try:
                _write_reports(config, False)
            except KeyboardInterrupt:
                click.echo(f"Standings files not written: `arena standings {config.output}` "
                           "draws them.", err=True)
        # ignored, not handled, from here: Python's exit puts back the default action of a
        # handled signal, and one more Ctrl-C of a burst then killed the command (status -2)
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
        if result.error is not None:
            sys.exit(1)
        sys.exit(128 + int(result.stopped_by or signal.SIGINT))

    reports[0] = True
    try:
        if not quiet and not sys.stdout.isatty() and result.played:
            _echo_standings(config)
        for line in summary_lines(result, Path(config.output)):
            click.echo(line)
        _write_reports(config, plots or config.plots)
    except KeyboardInterrupt:  # the games are all stored: only the reports are cut short
        click.echo(f"Stopped while writing the reports; every game is stored. `arena standings "
                   f"{config.output}` and `arena plot {config.output}` write them.", err=True)
        sys.exit(128 + (early[-1] if early else signal.SIGINT))


def _echo_standings(config: TournamentConfig) -> None:
    """The plain-output table: the same computation as the live one (`Standings`)."""
    from arena.tournament.progress import Standings
    from arena.tournament.reporting import select_results
    from arena.tournament.store import Store, StoreError

    standings = Standings([b.name for b in config.bots])
    try:
        with Store(config.output) as store:
            for first, second, res, reason, _variant in select_results(config, store.results()):
                standings.add(first, second, res, reason)
    except (StoreError, sqlite3.Error) as error:
        click.echo(f"warning: cannot show the standings: {error}", err=True)
        return
    for line in standings.lines():
        click.echo(line)


def _write_reports(config: TournamentConfig, plots: bool) -> None:
    from arena.tournament.reporting import write_run_reports

    try:
        write_run_reports(config, plots=plots)
    except Exception as error:  # the games are safe; reports can be redone
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        click.echo(f"warning: could not write the reports: {first} "
                   f"(the games are stored; try `arena standings {config.output}`)", err=True)
