"""A bot that cannot start stops the run before any of its games is stored.

A typo in a bot's command or `args`, a missing interpreter or module, a bot that never answers
`hello`: without this, such a bot plays its whole schedule as start-up forfeits, and storing
them binds the results folder to the broken bot (once fixed, its program or arguments differ
from those of its stored games, so resuming asks for --fresh). fastchess and cutechess stop a
tournament whose engine does not start; so does the arena, without a start per bot before the
first game: the coordinator holds back the games in which a bot that has not yet started in this
run failed to start. When it starts in a later game, its held games are stored (a start that
fails now and then is the bot's fault, like any other forfeit); when it fails in
`START_ATTEMPTS` games (or in all its games of the run, if fewer), the run stops and none of
them is stored. Games of the other bots are stored as they finish.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from arena.botspec import MANIFEST
from arena.conformance import check_command as conformance_check_command
from arena.reasons import NO_HELLO, NO_HELLO_HINT
from arena.sandbox import NOT_FOUND, NOT_FOUND_HINT
from arena.timecontrol import TimeControl
from arena.tournament.executor import Outcome
from arena.tournament.schedule import ScheduledGame

if TYPE_CHECKING:
    from arena.tournament.config import BotEntry

START_ATTEMPTS = 2


class StartWatch:
    """Decides, outcome by outcome, which finished games the coordinator stores now, and which
    games it may hand out: a bot that failed to start and has not started since (a suspect)
    plays one game at a time, so that its verdict waits for its games still out (one of them
    may be a start that worked: it comes back only when its game ends, after quicker failures).

    The coordinator calls `submitted` for each game it hands out, `returned` for each outcome
    of any kind, `admit` for each finished one, and `verdict` after each."""

    def __init__(self, attempts: int = START_ATTEMPTS, where: Mapping[str, str] | None = None,
                 checks: Mapping[str, str] | None = None, enabled: bool = True) -> None:
        self.enabled = enabled  # False (`start_failure = "forfeit"`): every game is stored
        self.attempts = attempts
        self.where = dict(where or {})  # bot name -> "file:line" of its entry, for the error
        self.checks = dict(checks or {})  # bot name -> the `arena check` command that tries it
        self.started: set[str] = set()  # bots that started (or were warm) in a game of this run
        self.failures: Counter[str] = Counter()  # start failures of bots not started yet
        self.last_failure: dict[str, str] = {}
        self.held: list[Outcome] = []
        self.out: Counter[str] = Counter()  # per bot: its games handed out, not back yet
        self.sandboxed = True  # the run's bots are (the runner says): exit 127's likely cause

    def suspects(self) -> set[str]:
        return {name for name in self.failures if name not in self.started}

    def may_submit(self, game: ScheduledGame) -> bool:
        """Whether `game` may be handed out now: a suspect bot plays one game at a time."""
        return not self.failures or all(self.out[name] == 0 for name in game.bots
                                        if name in self.failures and name not in self.started)

    def submitted(self, game: ScheduledGame) -> None:
        self.out.update(game.bots)

    def returned(self, game: ScheduledGame) -> None:
        self.out.subtract(game.bots)

    def admit(self, outcome: Outcome) -> list[Outcome]:
        """The outcomes to store now, in the order they finished: `outcome` and any held ones
        it releases, or nothing while a bot of it failed to start and has not started since."""
        if not self.enabled:
            return [outcome]
        failed = getattr(outcome, "start_failures", None) or {}  # an older worker's lacks it
        if not outcome.void:  # a void game is one where neither bot started
            self.started.update(name for name in outcome.game.bots if name not in failed)
        suspects = [name for name in failed if name not in self.started]
        if suspects:
            self.held.append(outcome)
            for name in suspects:
                self.failures[name] += 1
                self.last_failure[name] = failed[name]
            return []
        released: list[Outcome] = []
        still_held: list[Outcome] = []
        for held in self.held:
            done = all(name in self.started for name in getattr(held, "start_failures", {}))
            (released if done else still_held).append(held)
        self.held = still_held
        return [*released, outcome]

    def verdict(self) -> str | None:
        """The error that stops the run: a bot that failed to start in `attempts` games of it
        and has none out that could still show it started."""
        hopeless = sorted(name for name in self.suspects()
                          if self.failures[name] >= self.attempts and self.out[name] <= 0)
        return self.error(hopeless) if hopeless else None

    def finish(self) -> str | None:
        """At the end of the run's play: the error for the bots whose every game of this run
        failed to start (fewer than `attempts`), if any; their games stay unstored."""
        never = sorted({name for held in self.held for name in getattr(held, "start_failures", {})
                        if name not in self.started})
        return self.error(never) if never else None

    def error(self, names: list[str]) -> str:
        name = names[0]
        where = f" ({self.where[name]})" if name in self.where else ""
        tries = self.failures[name]
        others = f" (and {', '.join(names[1:])})" if len(names) > 1 else ""
        check = f"try `{self.checks[name]}`" if name in self.checks else \
            "`arena check` tries one bot alone"
        if NOT_FOUND in self.last_failure[name] and self.sandboxed:
            check += f"; {NOT_FOUND_HINT}"
        if NO_HELLO in self.last_failure[name]:  # slow to load rather than broken, maybe
            # its own table: a change of [time] would not match the games already stored (and
            # startup_ms is time a fresh process may think on its first move: user review)
            check += (f"; {NO_HELLO_HINT}; if it is only slow to start, give it more time "
                      "to start in its [[bots]] table: time = { startup_ms = N }")
        return (f"bot {name!r}{where}{others} did not start in {tries} game"
                f"{'s' if tries > 1 else ''}: {self.last_failure[name]}. None of its games of "
                f"this run is stored: fix it ({check}), then run the same command again")

    @classmethod
    def of_field(cls, path: object, bots: list[BotEntry], startup_ms: int,
                 enabled: bool = True, limits: Mapping[str, int] | None = None,
                 sandbox_mode: str | None = None) -> StartWatch:
        """The watch of a tournament file's bots (each named by its entry's line); `limits`
        and `sandbox_mode`: the file's."""
        return cls(where={bot.name: f"{path}:{bot.line}" for bot in bots},
                   checks={bot.name: check_command(bot, startup_ms, limits, sandbox_mode)
                           for bot in bots},
                   enabled=enabled)


def check_command(bot: BotEntry, startup_ms: int, limits: Mapping[str, int] | None = None,
                  sandbox_mode: str | None = None) -> str:
    """`arena check` of a bot as the tournament runs it (`conformance.check_command`: its
    arguments, its start-up allowance, its sandbox limits, the file's [limits] then its own),
    from any folder: its folder, else its command line with the files it names made absolute
    (`node ../js/bot.js`, relative to the tournament file, failed the check pasted from
    elsewhere: bot author review)."""
    if bot.time_control is not None:
        startup_ms = bot.time_control.startup_ms
    if (bot.spec.cwd / MANIFEST).is_file():  # the manifest's command, then the entry's args
        target, args = str(bot.spec.cwd), tuple(bot.args)
    else:  # the whole command line (its arguments in it)
        target, args = shlex.join(_absolute(bot.spec.argv, bot.spec.cwd)), ()
    return conformance_check_command(target, args=args, tc=TimeControl(startup_ms=startup_ms),
                                     limits={**(limits or {}), **bot.limits},
                                     sandbox_mode=sandbox_mode)


def _absolute(argv: list[str], cwd: Path) -> list[str]:
    """The words of a command line that name a file or folder beside `cwd`, made absolute."""
    return [str((cwd / word).resolve()) if not word.startswith("-") and not Path(word).is_absolute()
            and (cwd / word).exists() else word for word in argv]
