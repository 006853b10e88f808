"""`arena league`: a league that bots join while it plays (init, submit, remove, run, status)."""

from __future__ import annotations

from pathlib import Path

import click
from click.core import ParameterSource

from arena.cli_common import WholeRange
from arena.game import DEFAULT_VARIANT


def _fail(error: BaseException) -> click.ClickException:
    return click.ClickException(str(error).splitlines()[0] if str(error) else type(error).__name__)


@click.group(name="league")
def command() -> None:
    """A league: bots are submitted while play goes on, and each next pair of games goes where it
    settles the ranking fastest. A league folder works with standings, plot, export and publish."""


@command.command(name="init")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--variants", "variants", multiple=True,
              help="Variant specs, comma-separated or repeated (default: classic).")
@click.option("--move-ms", type=WholeRange(min=1), default=1000, show_default=True,
              help="Per-move limit in ms.")
@click.option("--startup-ms", type=WholeRange(min=0), default=5000, show_default=True,
              help="Allowance to start and answer the handshake, in ms.")
@click.option("--sandbox", "sandbox_mode", type=click.Choice(["auto", "on", "off"]), default="auto",
              show_default=True, help="Run submitted bots in the bubblewrap sandbox (SECURITY.md).")
@click.option("--openings", "openings_choice", default="builtin", show_default=True,
              help="Where games start: builtin (two drops next to the centre, each variant's "
                   "own, as `arena play` uses), none (the empty board) or an openings file.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A league TOML file: the keys of a tournament file without bots and game counts "
              "(variants, [time], openings, seed, sandbox, [limits], ...), instead of the options above.")
@click.pass_context
def init(ctx: click.Context, folder: Path, variants: tuple[str, ...], move_ms: int, startup_ms: int,
         openings_choice: str, sandbox_mode: str, config_file: Path | None) -> None:
    """Create a league in FOLDER."""
    from arena.game import VariantError, parse_variant
    from arena.league.registry import LeagueError, init_league
    from arena.tournament.config import ConfigError, league_openings_setting, load_league_file

    given = [option for option, param in (("--variants", "variants"), ("--move-ms", "move_ms"),
                                          ("--startup-ms", "startup_ms"), ("--sandbox", "sandbox_mode"),
                                          ("--openings", "openings_choice"))
             if ctx.get_parameter_source(param) not in (None, ParameterSource.DEFAULT)]
    if config_file is not None and given:
        # the file holds these settings too: taking either silently made a league unlike the
        # one asked for
        raise click.BadParameter(f"give --config (a league file, which sets them) or "
                                 f"{', '.join(given)}, not both", param_hint="'--config'")
    try:
        if config_file is not None:
            if not config_file.exists():
                raise LeagueError(f"--config {config_file}: no such league file")
            settings = load_league_file(config_file)
        else:
            specs = _variant_specs(variants) if variants else [DEFAULT_VARIANT]
            settings = {"variants": specs, "sandbox": sandbox_mode,
                        "time_control": {"move_ms": move_ms, "startup_ms": startup_ms},
                        "openings": league_openings_setting(
                            openings_choice, [parse_variant(spec) for spec in specs])}
        init_league(folder, settings)
    except (VariantError, LeagueError, ConfigError) as error:
        raise _fail(error) from None
    from arena.timecontrol import time_limits_text

    # the whole time control: a clock beside move_ms read as a per-move limit alone (review)
    limits = time_limits_text(settings["time_control"])
    click.echo(f"league created in {folder} ({', '.join(settings['variants'])}"
               + (f"; {limits}" if limits else "") + f"); add bots with "
               f"`arena league submit {folder} PATH`")


def _variant_specs(texts: tuple[str, ...]) -> list[str]:
    """The specs of --variants; click.BadParameter for an empty list or a repeated variant,
    VariantError for a bad spec (a league's variants are fixed at init: no silent default or
    merge)."""
    from arena.game import parse_variant
    from arena.game.variant import split_variant_list

    specs: list[str] = []
    for text in texts:
        parts = split_variant_list(text)
        if not parts:
            raise click.BadParameter(f"{text!r} names no variant (e.g. classic,popout)",
                                     param_hint="'--variants'")
        for part in parts:
            spec = parse_variant(part).spec
            if spec in specs:  # as `arena play`: the league would hold it once, not as asked
                same = f" ({part!r} is {spec!r})" if part != spec else ""
                raise click.BadParameter(f"variant {spec!r} is given twice{same}",
                                         param_hint="'--variants'")
            specs.append(spec)
    return specs


@command.command(name="submit")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.argument("path", type=click.Path())  # as typed: errors quote it (`./nobot`, not `nobot`)
@click.option("--name", help="The bot's name in the league (default: its bot.toml name or file name).")
@click.option("--author", default="", help="Who submitted it (shown on the site; default: the "
              "name's previous version's, else the bot.toml's).")
@click.option("--key", envvar="ARENA_LEAGUE_KEY", default=None, metavar="KEY",
              help="The bot's submission key: set by its first submission (made and shown once "
              "if not given), needed for every new version. Better in ARENA_LEAGUE_KEY, out of "
              "the process list.")
def submit(folder: Path, path: str, name: str | None, author: str, key: str | None) -> None:
    """Check the bot at PATH and add it to the league (a new version if NAME is already there,
    given its submission key)."""
    from arena import sandbox
    from arena.botspec import resolve_bot
    from arena.conformance import check_command, failed_game_lines, run_checks
    from arena.league import registry
    from arena.league.runner import time_control_of

    try:
        registry.open_league(folder)
        source = registry.check_source(path)
        spec = resolve_bot(str(source))
        if foreign := spec.foreign_program():
            raise registry.LeagueError(f"{path}: its command runs {foreign}, outside its folder: a "
                                       "submitted bot brings its own program (or names a system "
                                       "one, or one the PATH finds)")
        where = "--name" if name else str(path)
        name = registry.league_name(name or spec.name)
        # before the checks, as the key: both are refused in a moment, the checks take minutes
        registry.check_version_name(folder, name, where)
        registry.check_key(folder, name, key)
        registry.check_changed(folder, name, spec.program_hash)
        league_settings = registry.settings(folder)
        # The check runs in the sandbox the bot will play in.
        with sandbox.policy_for_command(league_settings.get("sandbox", "auto"),
                                        lambda line: click.echo(line, err=True),
                                        league_settings.get("limits")), \
                registry.checking_copy(folder, source, spec.program_hash) as checked:
            # in the league's own variants and time control, the only ones it will meet; on a
            # copy of what will be stored, never the submitter's own folder
            report = run_checks(checked, time_control_of(league_settings),
                                variants=league_settings.get("variants", [DEFAULT_VARIANT]),
                                only_these=True)
        if not report.ok:
            for result in report.results:
                if not result.ok:
                    click.echo(f"FAIL  {result.name}: {result.detail}"
                               + (f" (hint: {result.hint})" if result.hint else ""), err=True)
                    for line in failed_game_lines(result):
                        click.echo(f"      {line}", err=True)
            again = check_command(str(source),
                                  tc=time_control_of(league_settings),
                                  limits=league_settings.get("limits"),
                                  variants=league_settings.get("variants", [DEFAULT_VARIANT]),
                                  sandbox_mode=league_settings.get("sandbox"))
            raise registry.LeagueError(f"{name} was refused: it failed the conformance check "
                                       f"(`{again}` shows the full report; the league checked "
                                       "a copy of its folder alone, without the files beside "
                                       "it); nothing was stored")
        entry, spec = registry.snapshot(folder, source, name, spec.program_hash)
        before = [e for e in registry.entrants(folder) if e.name == name]
        entrant, made = registry.add_version(folder, name, entry, spec, author=author, key=key)
    except registry.UnchangedSubmission as unchanged:
        click.echo(str(unchanged))
        return
    except (registry.LeagueError, sandbox.SandboxUnavailable, OSError, ValueError) as error:
        raise _fail(error) from None
    # after `league remove` nothing is replaced: the bot comes back (review: it said "replaces")
    active = [e.display for e in before if e.active]
    if any(e.version == entrant.version for e in before):  # a program it ran before
        replaced = (" (the same program as before: back in play with its games and rating"
                    + (f", replacing {active[0]})" if active else ")"))
    else:
        replaced = "" if not before else f" (replaces {active[0]})" if active \
            else f" (back in play: {name} had been removed)"
    click.echo(f"submitted {entrant.display}{replaced}: program {entrant.program_hash}, "
               f"{len(report.results)} checks passed")
    if made is not None:
        click.echo(f"submission key of {name}: {made} (shown once: a new version of {name} needs "
                   "it, as --key or ARENA_LEAGUE_KEY)")


@command.command(name="key")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.argument("name")
@click.option("--key", envvar="ARENA_LEAGUE_KEY", default=None, metavar="KEY",
              help="The new key (default: one is made and shown once). Better in "
              "ARENA_LEAGUE_KEY, out of the process list.")
def key(folder: Path, name: str, key: str | None) -> None:
    """Set or reset the submission key of bot NAME (the organiser's command: a lost key, or a
    bot submitted before keys existed); its new versions then need this key."""
    from arena.league import registry

    try:
        made = registry.set_key(folder, name, key)
    except (registry.LeagueError, ValueError) as error:
        raise _fail(error) from None
    click.echo(f"submission key of {name}: {made} (shown once)" if made is not None
               else f"submission key of {name} set")


@command.command(name="remove")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.argument("name")
def remove(folder: Path, name: str) -> None:
    """Retire bot NAME: its games stay, it gets no new ones."""
    from arena.league import registry

    try:
        retired = registry.retire(folder, name)
    except registry.LeagueError as error:
        raise _fail(error) from None
    click.echo(f"retired {', '.join(retired)}")


@command.command(name="rehash")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
def rehash(folder: Path) -> None:
    """Keep the active bots' versions across an upgrade of the arena.

    A bot's hash covers the arena modules it imports, so an upgrade changes every SDK bot's,
    and `league run` says it cannot play. This records the hashes the stored snapshots have
    now under the same versions (ratings and games kept). An active version whose snapshot's
    own files changed since it was submitted (not the arena's modules) is refused, and nothing
    is rehashed (remove it, or resubmit the bot); a retired one is left as it was."""
    from arena.league import registry

    left: list[str] = []
    try:
        changed = registry.rehash(folder, left)
    except registry.LeagueError as error:
        raise _fail(error) from None
    for line in left:
        click.echo(f"note: {line}", err=True)
    for display, old, new in changed:
        click.echo(f"{display}: hash {old} -> {new}")
    click.echo(f"{len(changed)} bot(s) rehashed" if changed else "every active bot hashes as stored")


@command.command(name="run")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--concurrency", "-j", type=WholeRange(min=1), default=None,
              help="Pairs of games at once (default: the league file's concurrency, else the "
              "number of cores).")
@click.option("--until", "until", default=None,
              help="Stop after N games of this run (200), a duration (30m, 2h) or 'settled'.")
@click.option("--publish-every", type=WholeRange(min=1), default=None,
              help="Rebuild the site (FOLDER/site) every N games.")
@click.option("--seed", type=int, default=None,
              help="Seeds the scheduler's tie-breaks (default: the league file's seed, else 0).")
@click.option("--cluster", default=None, metavar="ADDRESS",
              help="Play on a Dask cluster: tcp://HOST:8786, or local:N worker processes here "
              "(pip install -e '.[cluster]'); the league folder stays on this machine.")
def run(folder: Path, concurrency: int | None, until: str | None, publish_every: int | None,
        seed: int | None, cluster: str | None) -> None:
    """Play the league until stopped (Ctrl-C, SIGTERM) or until --until; resumable at any time."""

    from arena import sandbox
    from arena.league import registry
    from arena.league.runner import LeagueRunner, Until
    from arena.tournament.runner import RunError
    from arena.tournament.store import StoreError

    try:
        stop_when = Until.parse(until)
        if cluster is not None:
            from arena.tournament.dask_executor import cluster_executor_factory, cluster_problem

            if problem := cluster_problem(cluster):
                raise click.BadParameter(problem, param_hint="--cluster")  # as `arena run`
        runner = LeagueRunner(folder, concurrency=concurrency, until=stop_when,
                              publish_every=publish_every, seed=seed, out=click.echo)
        if cluster is not None:  # with the run's stop: Ctrl-C ends the wait for the scheduler
            runner.executor_factory = cluster_executor_factory(cluster, runner.stop)
        with sandbox.policy_for_command(runner.settings.get("sandbox", "auto"),
                                        lambda line: click.echo(line, err=True),
                                        runner.settings.get("limits")):
            summary = runner.run()
    except (registry.LeagueError, StoreError, sandbox.SandboxUnavailable, RunError,
            ValueError) as error:
        raise _fail(error) from None
    # after Ctrl-C the run ends now: the site keeps its last rebuild
    if publish_every and summary.games > runner.published_at and not summary.signal:
        runner.publish()
    click.echo(f"Done: {summary.games} games this run; {summary.stopped_by}.")
    if summary.error:  # not a bot's fault: the games played are stored, the run is not done
        raise SystemExit(1)
    if summary.signal:  # as `run` and `play`: 130 after Ctrl-C, 143 after SIGTERM
        raise SystemExit(128 + summary.signal)


@command.command(name="status")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.pass_context
def status(ctx: click.Context, folder: Path) -> None:
    """Bots, versions, games, what is being played now, and the current standings."""
    from arena.league import registry
    from arena.league.runner import duration_text, read_status

    try:
        entrants = registry.entrants(folder)
        games, total = registry.game_counts(folder)
    except registry.LeagueError as error:
        raise _fail(error) from None
    click.echo(f"{len(entrants)} version(s) of {len({e.name for e in entrants})} bot(s), {total} games")
    for e in entrants:
        state = "active" if e.active else f"retired {e.retired_at}"
        by = f", by {e.author}" if e.author else ""
        click.echo(f"  {e.display:<24} {games.get(e.display, 0):>6} games  {state}{by}")
    running = read_status(folder)
    if running is None:
        click.echo("not running")
    else:
        playing = ", ".join(f"{p['first']} vs {p['second']} ({p['variant']})" for p in running["playing"])
        click.echo(f"running (pid {running['pid']}, {running['games_this_run']} games this run); "
                   f"playing: {playing or 'nothing'}")
        for left in running.get("left_out", []):  # a status file of an older run has none
            back = left.get("back_in_s")
            when = "when its hash changes" if back is None else \
                f"in {duration_text(back)}, or when its hash changes"
            click.echo(f"  left out: {left['name']}: {left['why']} (tried again {when})")
    if total:
        from arena.commands.standings import command as standings
        from arena.publish.context import retired_note

        click.echo("")
        ctx.invoke(standings, input_path=str(folder))
        if note := retired_note(e.display for e in entrants if not e.active):
            click.echo(note)
