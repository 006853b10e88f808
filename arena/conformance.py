"""The checks behind `arena check BOT`: a conformance test for bot authors."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena import protocol
from arena.boterrors import UNENDED_LINE
from arena.botspec import MANIFEST, BotSpec, program_problem, resolve_bot
from arena.bytecode import prepare_bot
from arena.game import PRESETS, Game, MoveError, format_move, parse_move, parse_variant
from arena.player import WrongHello, log_file_name, wrong_hello
from arena.process import BotIOError, BotProcess, BotTimeout
from arena.reasons import CRASH, STDERR_SAID, TIMEOUT, no_hello
from arena.referee import GameRecord, Player, TimeControl, play_game
from arena.sandbox import Limits
from arena.sdk import FALLBACK_INFO
from arena.tournament.schedule import game_seed

HINTS = {
    "handshake": f"answer '{protocol.hello_line()}' with 'hello name=YOURNAME' as the first "
                 "line on stdout, and flush it; write anything else (logs, a runtime's "
                 "messages) to stderr",
    "unknown lines": "ignore arena lines whose first word you do not know, and unknown key=value "
                     "fields",
    "timeout": "answer every turn within time_ms; flush stdout after each line",
    "illegal": "replay the move list from the start position of the game line (start=, fixed=), "
               "dN drops and pN pops, columns counted from 1 (d1 is the leftmost); only play "
               "legal moves",
    "protocol": "answer with one 'move dN' line; send nothing but 'info ...' lines before it "
                "(write debug output to stderr, which is logged)",
    "crash": "the bot must keep running until 'quit' (its last stderr line, if any, is above; "
             "--log-dir DIR keeps all of it)",
    "quit": "exit promptly after the 'quit' line",
}
NEWLINE_HINT = "end each line with a newline (\\n), then flush"


@dataclass
class CheckResult:
    name: str
    ok: bool
    detail: str = ""
    hint: str = ""
    # a failed game: its record up to the bot's failure (`VARIANT: moves`, what `arena replay`
    # reads), the bot's seat, and its stderr log when a log folder was given; without them an
    # author could not find or replay the position the bot failed on (bot author review)
    game: str = ""
    seat: int = 0
    log: str = ""

    def __post_init__(self) -> None:
        # a detail quotes the bot (its stderr, its info lines): as printed by `arena check` and
        # `league submit`, an escape sequence in it rewrote a FAIL line as PASS (hostile review)
        self.detail = protocol.printable(self.detail)


@dataclass
class CheckReport:
    bot: str
    results: list[CheckResult] = field(default_factory=list)
    startup_ms: list[float] = field(default_factory=list)
    move_ms: list[float] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.results) and all(r.ok for r in self.results)

    def percentiles(self) -> dict[str, float]:
        values = sorted(self.move_ms)
        if not values:
            return {}

        def pick(q: float) -> float:
            return values[min(len(values) - 1, int(q * len(values)))]

        return {"p50": pick(0.5), "p90": pick(0.9), "p99": pick(0.99), "max": values[-1]}


def check_command(target: str, *, args: Sequence[str] = (), tc: TimeControl | None = None,
                  limits: Mapping[str, int] | None = None, variants: Sequence[str] = (),
                  sandbox_mode: str | None = None) -> str:
    """The `arena check` command that tries a bot as a tournament or league runs it: its
    arguments, time control, sandbox limits and mode, and variants (only those). A tournament's
    stop and a league's refusal said it two ways, one a bare `arena check PATH` that passed
    where the league's own check failed (diff review)."""
    extra: list[str] = ["--args", shlex.join(args)] if args else []
    default = TimeControl()
    if tc is not None:
        if tc.move_ms is not None and tc.move_ms != default.move_ms:  # check's default is it
            extra += ["--move-ms", str(tc.move_ms)]
        if tc.startup_ms != default.startup_ms:  # `arena check`'s default is the same
            extra += ["--startup-ms", str(tc.startup_ms)]
    if variants:
        extra += ["--only-variants", *(word for spec in variants for word in ("-v", spec))]
    defaults = Limits()
    for key, value in (limits or {}).items():
        if value != getattr(defaults, key):
            extra += ["--limit", f"{key}={value}"]
    if sandbox_mode == "off":
        extra += ["--sandbox", "off"]
    return shlex.join(["arena", "check", target, *extra])


def handshake_hint(error: Exception, own: str, detail: str, spec: BotSpec, sandboxed: bool) -> str:
    """The hint for a failed handshake, by how it failed: the same advice to answer hello and
    start faster followed a bot that had crashed, hit a limit or lacked its files (bot author
    review). `own`: the arena's words for the failure; `detail`: with the bot's stderr after
    them, which is the bot's to word and decides nothing here."""
    if own.startswith("bot hit the ") and " limit (" in own:  # `sandbox.status_text`
        return ("raise the limit it hit with --limit (e.g. --limit memory_mb=4096, or 0 for none; "
                "a tournament's [limits]), or make the bot need less")
    if getattr(error, "reason", "") == CRASH:
        if problem := _program_problem(spec):  # not the sandbox's view (user review)
            return f"the bot exited before answering hello: {problem}"
        hint = "the bot exited before answering hello: " + (
            "its error is above" if STDERR_SAID in detail else
            "it wrote nothing to stderr; run its command by hand and type the hello line")
        if sandboxed and not (spec.cwd / MANIFEST).is_file():
            hint += ("; in the sandbox a bot named by a command line sees only the files the "
                     "command names: a bot of several files (modules, classes, data) needs a "
                     "folder with a bot.toml (command = [...]), which it then sees whole")
        return hint
    if isinstance(error, WrongHello) and error.ended:
        return ("it wrote that instead of hello and ended: most likely its program's or its "
                "runtime's error (run its command by hand); the answer to hello must be the "
                "first line on stdout, and everything else go to stderr")
    if isinstance(error, BotTimeout) or str(error) == TIMEOUT:  # re-raised with the allowance
        return ("answer 'hello' within the start-up allowance (--startup-ms here, startup_ms "
                "in a tournament), and flush stdout after the line")
    return HINTS["handshake"]


def _program_problem(spec: BotSpec) -> str:
    """`botspec.program_problem` of the program the bot's command starts (a path: an
    interpreter named by a bare word is the system's)."""
    if not spec.command or not Path(spec.command[0]).is_absolute():
        return ""
    return program_problem(Path(spec.command[0]))


def failed_game(record: GameRecord, seat: int, log_dir: Path | None,
                name: str = "bot") -> dict:
    """The `game`, `seat` and `log` fields of a CheckResult for a game the bot failed."""
    log = ""
    if log_dir is not None:
        path = log_dir / log_file_name(record.game_id, seat, name)
        log = str(path) if path.is_file() else ""
    return {"game": f"{record.variant}: {' '.join(record.moves)}".rstrip(), "seat": seat,
            "log": log}


def failed_game_lines(result: CheckResult) -> list[str]:
    """How `arena check` shows a failed game: its record, the bot's seat, the command that feeds
    the bot its position, and its log."""
    if not result.game:
        return []
    plies = len(result.game.partition(": ")[2].split())
    lines = [f"game: {result.game} (the bot is seat {result.seat}, to move at ply={plies}); "
             f"its position: arena replay {shlex.quote(result.game)} --protocol"]
    if result.log:
        lines.append(f"log: {result.log}")
    return lines


def _hint_for(record: GameRecord) -> str:
    if record.reason == TIMEOUT and UNENDED_LINE in record.detail:
        return NEWLINE_HINT
    return HINTS.get(record.reason, "")


def _stderr_tail(process: BotProcess) -> str:
    """`; stderr: <last line>` when the bot wrote to stderr (e.g. a traceback), else ''."""
    said = process.stderr_last_line(wait=0.3)
    return f"{STDERR_SAID}{said}" if said else ""


def _centre_drops(variant, plies: int) -> list[str]:
    """A legal opening of `plies` drops in `variant`, each into the centre-most open column."""
    game = Game(variant)
    centre = (variant.columns + 1) / 2
    for _ in range(plies):
        drops = [m for m in game.legal_moves() if m > 0]
        if not drops or game.outcome is not None:
            break
        game.push(min(drops, key=lambda column: (abs(column - centre), column)))
    return [format_move(m) for m in game.moves]


# Lines of a later protocol version that a bot must ignore (PROTOCOL.md)
UNKNOWN_LINE = "news flash=1 of=the-future"
UNKNOWN_LINE_2 = "banner hello there"
# what a bot that chokes on them tends to quote (a word of them, or of the extra fields)
UNKNOWN_WORDS = ("news", "flash", "future", "banner", "colour", "extra")


def _by_hand(spec: BotSpec, tc: TimeControl, report: CheckReport,
             variant_spec: str = "popout") -> list[CheckResult]:
    """Handshake (with unknown keys), unknown lines, a turn in `variant_spec`, quit: driven line
    by line."""
    results = []
    prepare_bot(spec)  # as every start through `player.bot_process`: timed from bytecode
    process = BotProcess(spec.argv, spec.cwd)
    try:
        try:
            process.start()
            process.send(protocol.hello_line() + " future=yes")  # a key it must ignore
            try:
                line = process.read_line(tc.hello_deadline(process.started_at))
            except BotTimeout as error:
                # `check` has --startup-ms, a league its startup_ms: name the setting
                raise BotIOError(TIMEOUT, f"{no_hello(tc.startup_ms)} (the start-up "
                                          f"allowance, startup_ms){error.unfinished_note()}") from None
            try:
                hello = protocol.parse_hello_reply(line)
            except protocol.ProtocolError as error:
                raise wrong_hello(error, process) from None
            startup = (time.monotonic() - process.started_at) * 1000
            report.startup_ms.append(startup)
            detail = f"name={hello['name']} version={hello.get('version', '-')}, {startup:.0f} ms"
            if startup > tc.startup_ms:  # in only by the grace, which a busy machine eats
                detail += (f"; note: over the start-up allowance ({tc.startup_ms} ms), let in by "
                           f"the {tc.grace_ms} ms grace, which PROTOCOL.md says not to rely on")
            stray = protocol.split_line(line)[2]
            if stray:  # `hello name=py good`: played as `py`, as PROTOCOL.md says; pointed out
                detail += (f"; note: {' '.join(map(repr, stray))} is not key=value and is ignored "
                           "(values hold no spaces: name=py-good)")
            results.append(CheckResult("handshake", True, detail))
        except (BotIOError, protocol.ProtocolError) as error:
            own = getattr(error, "detail", str(error))
            detail = own + _stderr_tail(process)
            results.append(CheckResult("handshake", False, detail,
                                       handshake_hint(error, own, detail, spec,
                                                      process.sandboxed)))
            return results
        variant = parse_variant(variant_spec)
        game = Game(variant)
        first = _centre_drops(variant, 1)[0]  # d4 in the presets
        try:
            process.send(UNKNOWN_LINE)
            process.send(protocol.game_line("check-1", 2, variant.describe(), tc.to_dict(),
                                            "checker") + " colour=red")
            process.send(UNKNOWN_LINE_2)
            game.push(parse_move(first))
            process.send(protocol.turn_line([first], tc.move_ms or 1000, None) + " extra=1")
            deadline = time.monotonic() + (tc.startup_ms + (tc.move_ms or 1000) + tc.grace_ms) / 1000
            while True:
                kind, value = protocol.parse_bot_line(process.read_line(deadline))
                if kind == "move":
                    break
            move = parse_move(value)
            if not game.is_legal(move):
                # It read the lines fine; the move itself is wrong: the illegal-move hint.
                results.append(CheckResult(
                    "unknown lines", False,
                    f"illegal move {format_move(move)} after {first} in {variant.spec}",
                    HINTS["illegal"]))
                return results
            results.append(CheckResult("unknown lines", True, f"answered {value}"))
        except (protocol.ProtocolError, MoveError) as error:
            # the bot's own line is wrong (a debug print on stdout, a malformed move): not a
            # matter of reading the arena's
            results.append(CheckResult("unknown lines", False, f"the bot sent {error}",
                                       HINTS["protocol"]))
            return results
        except BotIOError as error:
            detail, hint = error.detail, HINTS.get(error.reason, HINTS["unknown lines"])
            if isinstance(error, BotTimeout) and error.unfinished_note():
                detail += error.unfinished_note()
                hint = NEWLINE_HINT
            if error.reason == CRASH:
                said = _stderr_tail(process)
                if any(word in said for word in UNKNOWN_WORDS):  # it died on one of them
                    detail += (f", after the arena sent lines it does not know ('{UNKNOWN_LINE}', "
                               f"'{UNKNOWN_LINE_2}', extra fields){said}")
                    hint = HINTS["unknown lines"]
                else:  # or on the game itself (a bot that cannot play popout)
                    detail += f" in its first turn ({variant.spec}){said}"
            results.append(CheckResult("unknown lines", False, detail, hint))
            return results
        try:
            process.send(protocol.end_line("draw", None, "max-plies", 2))
            process.send(protocol.QUIT_LINE)
            status = process.wait_exit(2.0)  # not reaped: close() does that, safely
            if status is None:
                raise TimeoutError("still running")
            results.append(CheckResult("quit", True, f"exited by itself ({status})"))
        except Exception:
            results.append(CheckResult("quit", False, "still running 2 s after 'quit'",
                                       HINTS["quit"]))
    finally:
        process.close()
    return results


# Sizes and line lengths besides the presets' 6 rows: a bot that assumes 7x6 fails here.
ODD_VARIANTS = ("classic:7x4", "classic:10x9,connect=5", "popout:5x5")


def run_checks(
    spec: BotSpec,
    tc: TimeControl | None = None,
    games: int = 2,
    progress: Callable[[CheckResult], None] | None = None,
    variants: Sequence[str] = ODD_VARIANTS,
    only_these: bool = False,
    log_dir: Path | None = None,
) -> CheckReport:
    """Run every check; `progress` is called with each result as it comes. Games are played in
    every preset and in each of `variants` (default: odd sizes and line lengths).

    `only_these`: the bot will meet only `variants` and `tc` (a league's submission): no games
    in the other presets, the set-opening game in the first of `variants`, no clock game.
    `log_dir`: where the bot's stderr of each game goes (`check-N-SEAT-bot.log`)."""
    tc = tc or TimeControl(move_ms=1000)
    report = CheckReport(spec.name)

    def add(result: CheckResult) -> None:
        report.results.append(result)
        if progress is not None:
            progress(result)

    for result in _by_hand(spec, tc, report, *(variants[:1] if only_these else ())):
        add(result)
    if not report.results[0].ok:
        return report
    opponent = resolve_bot("random")
    # Games in every preset (pops, fixed start columns), all in one kept process.
    bot = Player(spec, "bot", log_dir=log_dir)
    other = Player(opponent, "random")
    fallbacks: list[str] = []  # info lines of moves the SDK played because choose_move raised
    own_moves = 0

    def tally(rec: GameRecord, seat: int) -> None:
        """The bot's own moves of a game (not the opening's): their times and fallbacks, from
        every game the check plays (the times had left out two games, and the counts of the
        two lines disagreed: new-user review)."""
        nonlocal own_moves
        plies = [ply for ply in range(len(rec.infos))
                 if ply % 2 == seat - 1 and ply >= len(rec.opening)]
        own_moves += len(plies)
        fallbacks.extend(line for ply in plies for line in rec.infos[ply]
                         if line.startswith(FALLBACK_INFO))
        report.move_ms.extend(rec.move_ms[ply] for ply in plies if ply < len(rec.move_ms))

    try:
        n = 0
        extra = [parse_variant(v) for v in variants]
        playlist = [] if only_these else list(PRESETS.items())
        playlist += [(v.spec, v) for v in extra if v.spec not in dict(playlist)]
        for name, variant in dict(playlist).items():
            failures = []
            for i in range(games):
                n += 1
                first, second = (bot, other) if i % 2 == 0 else (other, bot)
                # with a game seed, as a tournament's games have (`seed=`): the bot's use of
                # it had been left to its first tournament
                rec = play_game(variant, first, second, tc, game_id=f"check-{n}",
                                seed=game_seed(0, f"check-{n}"))
                seat = 1 if first is bot else 2
                tally(rec, seat)
                if rec.startup_ms[seat - 1] is not None:
                    report.startup_ms.append(rec.startup_ms[seat - 1])
                if rec.forfeit_by == seat or rec.void:
                    failures.append(rec)
            label = {"popout": "pops (popout)", "five": "fixed start columns (five)",
                     "popout-five": "pops and fixed columns (popout-five)"}.get(name, name)
            if failures:
                rec = failures[0]
                add(CheckResult(f"games: {label}", False,
                                f"{len(failures)}/{games} lost by {rec.reason}: {rec.detail}",
                                _hint_for(rec), **failed_game(rec, rec.forfeit_by or 1, log_dir)))
            else:
                add(CheckResult(f"games: {label}", True, f"{games} games without a forfeit"))
        opening_variant, opening = PRESETS["classic"], ["d4", "d4", "d3"]
        if only_these and extra:
            opening_variant = extra[0]
            opening = _centre_drops(opening_variant, 3)
        opening_rec = play_game(opening_variant, bot, other, tc, opening=opening,
                                game_id="check-opening")
        tally(opening_rec, 1)
        ok = opening_rec.forfeit_by != 1
        add(CheckResult("opening position (moves set by the arena)", ok,
                        "" if ok else f"{opening_rec.reason}: {opening_rec.detail}",
                        "" if ok else _hint_for(opening_rec),
                        **({} if ok else failed_game(opening_rec, 1, log_dir))))
        if tc.base_ms is None and not only_these:
            clock = TimeControl(move_ms=None, base_ms=20_000, increment_ms=100,
                                startup_ms=tc.startup_ms, grace_ms=tc.grace_ms)
            clock_rec = play_game(PRESETS["classic"], other, bot, clock, game_id="check-clock")
            tally(clock_rec, 2)
            ok = clock_rec.forfeit_by != 2
            add(CheckResult("clock time control (20 s + 0.1 s)", ok,
                            "" if ok else f"{clock_rec.reason}: {clock_rec.detail}",
                            "" if ok else _hint_for(clock_rec) if clock_rec.reason != TIMEOUT
                            or UNENDED_LINE in clock_rec.detail
                            else "use time_ms from the turn line as your remaining clock; spend "
                            "a fraction of it",
                            **({} if ok else failed_game(clock_rec, 2, log_dir))))
        if fallbacks:  # legal moves, but not the bot's own: its move function fails
            add(CheckResult(
                "moves of its own", False,
                f"its move function (the one given to run_bot) raised on {len(fallbacks)} of "
                f"{own_moves} moves, and the SDK played its first legal move instead: "
                f"{fallbacks[0][len(FALLBACK_INFO):].strip()}",
                "fix the exception in the move function (its traceback is in the bot's stderr: "
                "--log-dir DIR keeps it)"))
        ok = bot.starts == 1
        earlier = any(not r.ok for r in report.results)
        add(CheckResult("back-to-back games in one process", ok,
                        f"{n + 2} games, {bot.starts} process(es)",
                        "" if ok else "restarted after the failures above" if earlier
                        else "after 'end', wait for the next 'game' line; do not exit"))
    finally:
        bot.close()
        other.close()
    return report
