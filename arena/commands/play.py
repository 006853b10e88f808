"""`arena play BOT_A BOT_B`: a match between two bots, with a line per game and a W/D/L summary."""

from __future__ import annotations

import contextlib
import json
import shlex
import sys
from pathlib import Path

import click

from arena.cli_common import (
    EXIT_SIGINT,
    EXIT_SIGTERM,
    LIMIT_HELP,
    FiniteRange,
    LimitSetting,
    Terminated,
    WholeRange,
    make_log_dir,
    sigterm_raises,
)
from arena.game import DEFAULT_VARIANT


def _game_dict(record) -> dict:
    # The games-table columns a game knows (arena.schema, via GameRecord.ROW_COLUMNS), with
    # lists kept as JSON lists; then what only `play` reports: `winner` is the winner's name here
    # (its seat is `winner_seat`), `void` and `time_control` (seat 1's; under time odds the
    # seats' own are the columns `first_tc` and `second_tc`).
    game = {name: getattr(record, name) for name in record.ROW_COLUMNS}
    game.update(winner=record.winner_name, winner_seat=record.winner, void=record.void,
                time_control=record.time_control, infos=record.stored_infos())
    return game


def describe_game(record) -> str:
    head = f"{record.game_id} {record.variant}: {record.first} (1) vs {record.second} (2):"
    if record.void:
        return f"{head} void ({record.detail})"
    # a start-up failure (a silent bot, a crash in its handshake) comes before any move of the
    # bots: the plies would be the opening's
    played = record.plies > len(record.opening)
    how = f"{record.reason}, {record.plies} plies" if played else record.reason
    if record.winner is None:
        text = f"draw ({how})"
    else:
        text = f"{record.winner_name} wins ({how})"
    if record.forfeit_by:
        text += f" - seat {record.forfeit_by} forfeits: {record.detail}"
    from arena.referee import fallback_note

    for name, count in zip((record.first, record.second), record.fallback_counts(), strict=True):
        if count:
            text += f" - {fallback_note(name, count)}"
    return f"{head} {text}"


def forfeit_log(record, log_dir: Path) -> Path | None:
    """The stderr log of the bot that forfeited `record`, if it wrote one: the first place to
    look for why (a crash's traceback), named where the game is reported."""
    if not record.forfeit_by:
        return None
    from arena.player import log_file_name

    name = record.first if record.forfeit_by == 1 else record.second
    path = log_dir / log_file_name(record.game_id, record.forfeit_by, name)
    return path if path.is_file() else None


def earlier_logs_note(log_dir: Path) -> str:
    """A note when `log_dir` holds logs of an earlier `arena play`: every match numbers its games
    from g0001, so its logs replace those of the same game and bot, and the others stay beside
    them, looking like this match's (bot author review)."""
    earlier = sum(1 for _ in log_dir.glob("g[0-9][0-9][0-9][0-9]-[12]-*.log"))
    if not earlier:
        return ""
    return (f"note: {log_dir} already holds {earlier} log(s) of an earlier match; this match's "
            "games are numbered from g0001 again and replace those of the same game and bot: "
            "give a fresh --log-dir to keep them apart")


@click.command(name="play")
@click.argument("bot_a")
@click.argument("bot_b")
@click.option("--variant", "-v", "variants", multiple=True, default=(DEFAULT_VARIANT,), show_default=True,
              help="Variant spec (repeat for several), e.g. classic, popout:8x7, five.")
@click.option("--games", "-n", default=2, show_default=True, type=WholeRange(min=1),
              help="Games per variant; the first player alternates, A first.")
@click.option("--move-ms", "move_ms_values", type=WholeRange(min=1), multiple=True,
              help="Per-move limit in ms [default: 1000 unless --base-ms is given]; repeat it "
              "to play the whole match under each limit in turn.")
@click.option("--base-ms", type=WholeRange(min=1), default=None,
              help="Clock: base time per game in ms.")
@click.option("--increment-ms", type=WholeRange(min=0), default=0, show_default=True,
              help="Clock: increment per move in ms.")
@click.option("--move-ms-a", type=WholeRange(min=1), default=None,
              help="Time odds: bot A's own per-move limit in ms (in place of the shared limit and "
              "clock).")
@click.option("--move-ms-b", type=WholeRange(min=1), default=None,
              help="Time odds: bot B's own per-move limit in ms.")
@click.option("--base-ms-a", type=WholeRange(min=1), default=None,
              help="Time odds: bot A's own clock base in ms (a clock alone, unless "
              "--move-ms-a caps its moves).")
@click.option("--base-ms-b", type=WholeRange(min=1), default=None,
              help="Time odds: bot B's own clock base in ms.")
@click.option("--increment-ms-a", type=WholeRange(min=0), default=None,
              help="Time odds: bot A's own clock increment in ms.")
@click.option("--increment-ms-b", type=WholeRange(min=0), default=None,
              help="Time odds: bot B's own clock increment in ms.")
@click.option("--startup-ms", type=WholeRange(min=0), default=5000, show_default=True,
              help="Allowance for start-up and the handshake (and again for the first move).")
@click.option("--grace-ms", type=WholeRange(min=0), default=200, show_default=True,
              help="Grace margin added to every deadline.")
@click.option("--opening", default="", help="Opening moves applied before every game, e.g. "
              "'d4 d3' (instead of --openings).")
@click.option("--openings", "openings_choice", default="builtin", show_default=True,
              metavar="builtin|none|FILE",
              help="Each seat-swapped pair of games starts from the next opening: 'builtin' "
              "(two drops next to the centre, the first player off-centre; always used by "
              "default, so that deterministic bots do not replay one game), 'none' (the empty "
              "board), or a file of move lists as in tournaments.")
@click.option("--args-a", default="", help="Extra command-line arguments for bot A (one string).")
@click.option("--args-b", default="", help="Extra command-line arguments for bot B (one string).")
@click.option("--restart-every-game", is_flag=True,
              help="Start fresh bot processes for every game (default: keep them).")
@click.option("--log-dir", type=click.Path(file_okay=False), default=None,
              help="Write each bot's stderr per game to this folder.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object per game (summary on stderr).")
@click.option("--sprt", "sprt_bounds", default=None, metavar="ELO0,ELO1",
              help="Stop the match once an SPRT of H1: A is ELO1 stronger against H0: ELO0 "
              "decides (then --games is the most games per variant). As in fishtest, it weighs "
              "the two bounds against each other, not the score alone: a lopsided match can take "
              "more games than its score suggests (39-0-1 had not decided 0,50).")
@click.option("--sprt-alpha", type=FiniteRange(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True, help="SPRT false-positive rate.")
@click.option("--sprt-beta", type=FiniteRange(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True, help="SPRT false-negative rate.")
@click.option("--sprt-model", type=click.Choice(["logistic", "normalized", "bayeselo"]),
              default="logistic", show_default=True,
              help="Elo model of the SPRT hypotheses (bayeselo, as cutechess, decides nothing "
                   "until a game is drawn: weak bots that never draw run out their games).")
@click.option("--sandbox", "sandbox_mode", type=click.Choice(["auto", "on", "off"]),
              default="auto", show_default=True,
              help="Run the bots in the bubblewrap sandbox (see SECURITY.md): auto uses it when "
              "available, on refuses to start without it.")
@click.option("--adjudicate", "adjudicate", is_flag=True,
              help="End a game as soon as the exact solver proves its result (classic-like boards), "
              "recorded with reason 'adjudicated', like tablebase adjudication in chess.")
@click.option("--affinity", is_flag=True,
              help="Pin the match and its two bots to one CPU core (the first this arena may "
              "use), as a tournament's `affinity = true` pins each worker and its bots.")
@click.option("--ponder/--no-ponder", default=True, show_default=True,
              help="--no-ponder lets each bot's processes run only on its turns (stopped from its "
              "hello answer and each move until its next turn), so that it cannot take CPU from "
              "its opponent (a tournament's `ponder = false`).")
@click.option("--limit", "limit_settings", multiple=True, type=LimitSetting(), help=LIMIT_HELP)
def command(bot_a, bot_b, variants, games, move_ms_values, base_ms, increment_ms, move_ms_a,
            move_ms_b, base_ms_a, base_ms_b, increment_ms_a, increment_ms_b, startup_ms, grace_ms,
            opening, openings_choice, args_a, args_b, restart_every_game, log_dir, as_json, sprt_bounds, sprt_alpha,
            sprt_beta, sprt_model, sandbox_mode, adjudicate, affinity, ponder,
            limit_settings) -> None:
    """Play GAMES games per variant between BOT_A and BOT_B.

    A bot is a path to an executable, a .py file, a folder with a bot.toml, a command line
    such as "node bot.js", or the name of a bundled bot (random, greedy, ...). Games start from
    the built-in openings unless --openings or --opening says otherwise (see --openings).
    With --sprt, the match stops as soon as the sequential probability ratio test accepts H0
    or H1 (pentanomial over seat-swapped game pairs); the LLR and its bounds are shown after
    every game. Ctrl-C prints the summary of the games played and exits with status 130;
    with every game void (neither bot started) the status is 1.

    Time odds: --move-ms-a, --base-ms-a, --increment-ms-a (and -b for bot B) give one bot its
    own per-move limit or clock in place of the shared one, e.g. --move-ms 1000 --move-ms-a 250;
    as a bot's own time table in a tournament file, naming a limit (-a's --move-ms-a or
    --base-ms-a) replaces all the shared limits, and an increment alone changes only itself.
    Each bot keeps its own in either seat, is told it on its game and turn lines, and every game
    record holds both (first_tc, second_tc).
    """
    sprt = _make_sprt(sprt_bounds, sprt_alpha, sprt_beta, sprt_model)

    from arena.botspec import BotSpecError, resolve_bot
    from arena.game import VariantError, parse_variant
    from arena.match import play_match
    from arena.referee import TimeControl

    def split_args(text: str, option: str) -> list[str]:
        try:
            return shlex.split(text)
        except ValueError as error:
            raise click.BadParameter(f"{text!r}: {error}", param_hint=option) from None

    extra_a, extra_b = split_args(args_a, "'--args-a'"), split_args(args_b, "'--args-b'")
    try:
        spec_a = resolve_bot(bot_a, extra_a)
        spec_b = resolve_bot(bot_b, extra_b)
        parsed = [parse_variant(v) for v in variants]
        specs = [variant.spec for variant in parsed]
        for k, (given, spec) in enumerate(zip(variants, specs, strict=True)):
            if spec in specs[:k]:  # its games would be played twice and tallied as one series
                raise click.BadParameter(f"{given!r} names the variant {spec} a second time",
                                         param_hint="'--variant'")
        limits: list[int | None] = list(dict.fromkeys(move_ms_values))
        if not limits:
            limits = [1000 if base_ms is None else None]
        tcs = [TimeControl(move_ms=limit, base_ms=base_ms, increment_ms=increment_ms,
                           startup_ms=startup_ms, grace_ms=grace_ms) for limit in limits]
        odds = (_odds(move_ms_a, base_ms_a, increment_ms_a),
                _odds(move_ms_b, base_ms_b, increment_ms_b))
        _check_odds(tcs, odds)
    except (BotSpecError, VariantError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    if opening and openings_choice != "builtin":
        raise click.BadParameter("give --opening (one start for every game) or --openings, "
                                 "not both", param_hint="'--openings'")
    opening_moves = _check_opening(opening, parsed)
    from arena.openings import NONE, OpeningsError, openings_for_variants, reuse_note

    try:
        cycles = None if opening else openings_for_variants(openings_choice, parsed)
    except OpeningsError as error:
        raise click.BadParameter(str(error), param_hint="'--openings'") from None
    if cycles and openings_choice != NONE:  # `none` asks for one start: no note for it
        for spec, openings in cycles.items():
            if note := reuse_note(spec, len(openings), (games + 1) // 2):
                click.echo(note, err=True)
    if log_dir:
        make_log_dir(log_dir)
        if note := earlier_logs_note(Path(log_dir)):
            click.echo(note, err=True)

    out = click.echo

    from arena.match import MatchResult
    from arena.reasons import NO_HELLO, NO_HELLO_HINT, Reason

    result = MatchResult(spec_a.name, spec_b.name)
    hinted: set[str] = set()  # each hint once, at the first game that needs it

    def hint(key: str, text: str) -> None:
        if key not in hinted:
            hinted.add(key)
            click.echo(f"hint: {text}", err=True)

    def on_game(n: int, record, pair: str) -> None:
        if log_dir is None and record.reason == "crash":  # its cause is on stderr
            hint("crash", "--log-dir DIR keeps each bot's stderr, where a crash usually says why")
        if sandbox.NOT_FOUND in record.detail and sandbox.default_policy().enabled:
            hint("not-found", sandbox.NOT_FOUND_HINT)
        if record.reason == Reason.HANDSHAKE and record.detail.startswith(NO_HELLO):
            hint("silent", f"{NO_HELLO_HINT}; --startup-ms gives a slow starter more time")
        state = ""
        if sprt is not None and not record.void:
            score = record.result if record.first == result.a else 1 - record.result
            sprt.add(score, pair)  # its seat-swapped twin: the same opening
            state = _sprt_state(sprt)
        if as_json:
            out(json.dumps(_game_dict(record)))
            if state:
                click.echo(state, err=True)
        else:
            log = forfeit_log(record, Path(log_dir)) if log_dir else None
            out(describe_game(record) + (f"  [{state}]" if state else "")
                + (f"  (log: {log})" if log else ""))
        sys.stdout.flush()

    from arena import sandbox
    from arena.solver.scope import ADJUDICATION_BUDGET_S

    if adjudicate:
        from arena.solver.scope import adjudication_note

        if note := adjudication_note(parsed):
            click.echo(note, err=True)
    interrupted = False
    try:
        with (sigterm_raises(),
              sandbox.policy_for_command(sandbox_mode, lambda line: click.echo(line, err=True),
                                         dict(limit_settings)),
              _pinned_match(affinity)):
            play_match(
                spec_a, spec_b, parsed, games, tcs, restart_every_game=restart_every_game,
                log_dir=Path(log_dir) if log_dir else None, opening=opening_moves, on_game=on_game,
                finished=(lambda: sprt.status() != "continue") if sprt is not None else None,
                openings=cycles, result=result, odds=odds,
                adjudicate_s=ADJUDICATION_BUDGET_S if adjudicate else None, ponder=ponder,
            )
    except sandbox.SandboxUnavailable as error:
        raise click.ClickException(str(error)) from None
    except KeyboardInterrupt:
        interrupted = True  # the bots are ended and reaped by now; report what was played
    except Terminated:
        sys.exit(EXIT_SIGTERM)
    _summary(result, parsed, tcs, sprt, as_json, interrupted, odds)
    if interrupted:
        sys.exit(EXIT_SIGINT)
    if result.void_games and not sum(result.score()):  # a script must not read it as a match
        n = result.void_games
        raise click.ClickException(f"no game was played: {'the game was' if n == 1 else f'all {n} games were'} "
                                   "void (neither bot started; the details are above)")


@contextlib.contextmanager
def _pinned_match(enabled: bool):
    """--affinity: this thread (the referee) on one core for the match; the bots it starts
    inherit the core from birth."""
    if not enabled:
        yield
        return
    from arena import affinity

    cores = affinity.allowed_cpus()
    with affinity.pinned(cores[:1]) as ok:
        if not ok:
            click.echo(affinity.UNAVAILABLE_NOTE, err=True)
        yield


def _sprt_state(sprt) -> str:
    return f"SPRT LLR {sprt.llr():.2f} in [{sprt.lower:.2f}, {sprt.upper:.2f}]: {sprt.status()}"


def _odds(move_ms: int | None, base_ms: int | None, increment_ms: int | None) -> dict:
    """One bot's time odds: the TimeControl keys its own options replace, read as its own time
    table in a tournament file is (`arena.timecontrol.own_time_keys`)."""
    from arena.timecontrol import own_time_keys

    given = {"move_ms": move_ms, "base_ms": base_ms, "increment_ms": increment_ms}
    return own_time_keys({k: v for k, v in given.items() if v is not None})


def _check_odds(tcs, odds) -> None:
    """Raise ValueError, naming the bot, if its odds make an impossible time control."""
    from dataclasses import replace

    for tc in tcs:
        for bot, own in zip("AB", odds, strict=True):
            try:
                replace(tc, **own)
            except ValueError as error:
                raise ValueError(f"bot {bot}'s time odds: {error}") from None


def _summary(result, parsed, tcs, sprt, as_json: bool, interrupted: bool, odds=({}, {})) -> None:
    """The W/D/L lines (per time control and variant when there are several) and the SPRT."""
    lines = ["interrupted: the games played so far"] if interrupted else []
    if any(odds):
        from arena.match import bot_controls

        for tc in tcs:
            tc_a, tc_b = bot_controls(tc, odds)
            lines.append(f"time odds: {result.a} {tc_a.describe()}, {result.b} {tc_b.describe()}")
    if len(tcs) > 1:
        for tc in tcs:
            for variant in parsed:
                w, d, losses = result.score(variant.spec, tc.move_ms)
                lines.append(f"{variant.spec} at {tc.move_ms} ms/move: {result.a} vs {result.b}: "
                             f"W {w} D {d} L {losses}")
    if len(parsed) > 1:
        for variant in parsed:
            w, d, losses = result.score(variant.spec)
            lines.append(f"{variant.spec}: {result.a} vs {result.b}: W {w} D {d} L {losses}")
    if result.games > result.void_games:
        lines.append(f"move times: {result.times[0].text(result.a)}; "
                     f"{result.times[1].text(result.b)}")
    w, d, losses = result.score()
    total = f"{result.a} vs {result.b}: W {w} D {d} L {losses} (score {w + d / 2:g}/{w + d + losses})"
    if result.void_games:
        total += f", {result.void_games} void"
    lines.append(total)
    if sprt is not None:
        lines.append(sprt.summary())
    for line in lines:
        click.echo(line, err=as_json)


def _check_opening(opening: str, variants) -> list[int]:
    """The --opening moves, checked to be legal and not game-ending in every variant."""
    from arena.game import MoveError, parse_move
    from arena.openings import opening_problem

    try:
        moves = [parse_move(t) for t in opening.split()]
    except MoveError as error:
        raise click.BadParameter(f"{opening!r}: {error}", param_hint="'--opening'") from None
    for variant in variants:
        if problem := opening_problem(variant, moves, opening.split()):
            raise click.BadParameter(f"{opening!r}: {problem}", param_hint="'--opening'")
    return moves


def _make_sprt(bounds: str | None, alpha: float, beta: float, model: str):
    if bounds is None:
        return None
    from arena.ratings.sprt import SPRT

    try:
        elo0, elo1 = (float(part) for part in bounds.split(","))
    except ValueError:
        raise click.BadParameter(f"{bounds!r}: expected two numbers ELO0,ELO1, e.g. 0,50",
                                 param_hint="--sprt") from None
    try:
        return SPRT(elo0=elo0, elo1=elo1, alpha=alpha, beta=beta, model=model)
    except ValueError as error:  # elo0 >= elo1, bounds out of range, or alpha + beta >= 1
        hint = "--sprt-alpha/--sprt-beta" if "alpha" in str(error) else "--sprt"
        raise click.BadParameter(f"{bounds!r}: {error}" if hint == "--sprt" else str(error),
                                 param_hint=hint) from None
