"""What several `arena` commands share: SIGTERM as an exception, a clean stop's exit status,
the `-j` option of the solver commands, and a number range that refuses nan.

SIGTERM (a service manager, `timeout`, a container's stop) unwinds like Ctrl-C, so that `finally`
blocks run and bot and solver processes are ended; the command then exits 130 after Ctrl-C and
143 after SIGTERM, as a shell reports a process a signal ended."""

from __future__ import annotations

import math
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import click

EXIT_SIGINT = 128 + signal.SIGINT  # 130
EXIT_SIGTERM = 128 + signal.SIGTERM  # 143


class Terminated(BaseException):
    """SIGTERM arrived: unwinds like KeyboardInterrupt (a BaseException, past `except
    Exception`)."""


def _raise_terminated(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: let the clean-up finish
    raise Terminated()


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises `Terminated` (in the main thread only; elsewhere the
    handler cannot be set and nothing changes); the previous handler comes back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def stop_exits(message: str) -> Iterator[None]:
    """Within the block, Ctrl-C or SIGTERM ends the command: `message` on stderr, then exit
    130 or 143 (after the block's own clean-up has run)."""
    try:
        with sigterm_raises():
            yield
    except (KeyboardInterrupt, Terminated) as stop:
        print(message, file=sys.stderr)
        sys.exit(EXIT_SIGINT if isinstance(stop, KeyboardInterrupt) else EXIT_SIGTERM)


class WholeRange(click.IntRange):
    """click's IntRange, with a message for a value that is no whole number: click's own read
    "'100ms' is not a valid integer range." (the unit goes in the option's name, not the value)."""

    def convert(self, value, param, ctx):
        if isinstance(value, str):
            try:
                int(value)
            except ValueError:
                in_ms = param is not None and any(o.endswith("-ms") or "-ms-" in o
                                                  for o in param.opts)  # --move-ms-a
                self.fail(f"{value!r} is not a whole number"
                          f"{' of milliseconds, e.g. 100' if in_ms else ''}.", param, ctx)
        return super().convert(value, param, ctx)


def solver_processes_option(function):
    """`-j/--concurrency N` of the commands that solve on several processes (`arena.solver.pool`)."""
    import click

    return click.option(
        "--concurrency", "-j", type=WholeRange(min=1), default=None,
        help="Processes solving at once, each with its own solver tables (64 MiB each, two "
             "variants at most, and about 80 MB for numba; default: the cores).")(function)


class FiniteRange(click.FloatRange):
    """click's FloatRange, without nan (which passes every comparison, so every range) or an
    infinity: the options that take it feed rating maths that fail on them with a traceback."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


def exclude_option(function):
    """`--exclude BOT` (repeatable): leave a bot's games out of the tables and pages."""
    return click.option("--exclude", "exclude", metavar="BOT", multiple=True,
                        help="Leave out every game of this bot (repeat for several): a bot "
                             "disqualified, or removed from the tournament file, whose games "
                             "stay stored; in a league, a name without @N leaves out all "
                             "its versions.")(function)


class LimitSetting(click.ParamType):
    """`--limit KEY=VALUE`: one sandbox limit (`memory_mb=0`), checked as a [limits] table's."""

    name = "KEY=VALUE"

    def convert(self, value, param, ctx) -> tuple[str, int]:
        if isinstance(value, tuple):
            return value
        from arena.sandbox import LIMIT_KEYS, SandboxConfigError, parse_limits

        key, sep, number = str(value).partition("=")
        if not sep:
            self.fail(f"{value!r}: use KEY=VALUE, e.g. memory_mb=0 (keys: {', '.join(LIMIT_KEYS)})",
                      param, ctx)
        try:
            amount = int(number.strip())
        except ValueError:
            self.fail(f"{value!r}: the value must be a whole number (0 for no limit)", param, ctx)
        try:
            [(name, amount)] = parse_limits({key.strip(): amount}, "--limit").items()
        except SandboxConfigError as error:
            self.fail(str(error), param, ctx)
        return name, amount


LIMIT_HELP = ("A sandbox limit, as in a tournament's [limits] (repeat for several), e.g. "
              "--limit memory_mb=4096 --limit processes=256; see SECURITY.md.")


def make_log_dir(log_dir) -> None:
    """Create a command's `--log-dir` (and its parents), or stop with a usage error: a folder
    that cannot be made would lose every log without a word (`arena check` had run on)."""
    from pathlib import Path

    try:
        Path(log_dir).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise click.BadParameter(f"cannot create {log_dir}: {error.strerror or error}",
                                 param_hint="'--log-dir'") from None
