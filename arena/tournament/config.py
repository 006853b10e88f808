"""Tournament files: TOML read with tomllib, checked against a schema before anything runs.

Every mistake is reported as a `ConfigError` whose message starts with `FILE:LINE:` and names the
key, with a suggestion for a misspelt key. A minimal file:

    name = "demo"
    variants = ["classic", "popout"]
    [time]
    move_ms = 100
    [[bots]]
    path = "random"
    [[bots]]
    path = "greedy"
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import tomllib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from arena.affinity import available as affinity_available
from arena.botspec import (
    ARGS_RULE,
    MANIFEST,
    NAME_RULE,
    BotSpec,
    argument_list,
    folder_files,
    name_problem,
    resolve_command,
)
from arena.game import DEFAULT_VARIANT, MoveError, Variant, VariantError, format_move, parse_move
from arena.game import parse_variant as _parse_variant
from arena.game.variant import split_variant_list
from arena.openings import BUILTIN as BUILTIN_OPENINGS
from arena.openings import NONE as NO_OPENINGS
from arena.openings import OpeningsError, builtin_openings, opening_problem, openings_file
from arena.sandbox import (
    LIMIT_KEYS,
    SandboxConfigError,
    TournamentSandbox,
    parse_bot_limits,
    parse_tournament,
)
from arena.solver.scope import ADJUDICATION_BUDGET_S
from arena.spelling import closest, did_you_mean
from arena.textfile import decode, not_utf8
from arena.timecontrol import TimeControl, own_time_keys
from arena.tomlcheck import KeyLines as _Lines
from arena.tomlcheck import as_toml, syntax_error
from arena.tomlcheck import suggest as _suggest

FORMATS = ("round-robin", "gauntlet")
MAX_GAMES = 1_000_000  # games in one schedule (it is built in memory)
RESTART_POLICIES = ("on-failure", "every-game")
# What a bot that never starts does to a run: stop it before its games are stored (fix it, run
# again), or forfeit each of its games (the event goes on; fixing it then needs --fresh).
START_FAILURE_POLICIES = ("stop", "forfeit")


class ConfigError(ValueError):
    """A tournament file that cannot be run; the message names the file, line and key."""


def default_concurrency() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


# Known keys: name -> (accepted types, human description). Defaults are applied in `load_config`.
_TOP_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "name": ((str,), "a string"),
    "description": ((str,), "a string"),
    "bots": ((list,), "an array of [[bots]] tables"),
    "variants": ((list, str), "a list of variant specs"),
    "format": ((str,), f"one of {', '.join(FORMATS)}"),
    "gauntlet_bot": ((str,), "a bot name"),
    "games": ((int,), "an even number"),
    "openings": ((str,), 'a file name, "builtin" or "none"'),
    "time": ((dict,), "a [time] table"),
    "concurrency": ((int,), "a positive number"),
    "cluster": ((str,), "a Dask scheduler address (tcp://HOST:8786) or local:N"),  # issue 12
    "seed": ((int,), "an integer"),
    "restart": ((str,), f"one of {', '.join(RESTART_POLICIES)}"),
    "start_failure": ((str,), '"stop" (a bot that never starts stops the run) or "forfeit"'),
    "output": ((str,), "a directory"),
    "plots": ((bool,), "true or false"),
    "publish_logs": ((bool,), "true or false: publish the stderr tails of bots that forfeited"),
    "adjudicate": ((str,), '"solver" (end a game once the exact solver proves its result) or "off"'),
    "sandbox": ((str,), "one of auto, on, off"),
    "limits": ((dict,), "a [limits] table, e.g. memory_mb = 1024"),
    "affinity": ((bool,), "true or false: pin each worker and its two bots to one CPU core"),
    "ponder": ((bool,), "true or false: false stops each bot's processes between its turns"),
}
_TIME_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "move_ms": ((int,), "milliseconds per move"),
    "base_ms": ((int,), "milliseconds on each clock at the start"),
    "increment_ms": ((int,), "milliseconds added after each move"),
    "startup_ms": ((int,), "milliseconds for a bot to start and answer the handshake"),
    "grace_ms": ((int,), "milliseconds of tolerance for pipe latency"),
}
_BOT_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "path": ((str,), "a bot folder, script, executable or bundled bot name"),
    "command": ((str, list), "a command line (string or list)"),
    "name": ((str,), "a display name"),
    "args": ((list,), "a list of extra command-line arguments"),
    "limits": ((dict,), "a table of sandbox limits, e.g. { memory_mb = 2048 }"),
    "time": ((dict,), "a time table with the keys of [time], e.g. { move_ms = 50 }"),
}

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


@dataclass(frozen=True)
class BotEntry:
    """One entrant: a resolved bot plus the name it plays under."""

    name: str
    ref: str
    args: tuple[str, ...]
    spec: BotSpec
    line: int = 0
    limits: Mapping[str, int] = field(default_factory=dict)  # the bot's own sandbox limits
    # time odds: the bot's own time control, None when it plays under [time]
    time_control: TimeControl | None = None

    def fingerprint(self) -> dict:
        data = {
            "command": list(self.spec.command),
            "args": list(self.spec.args),
            "program_hash": self.spec.program_hash,
        }
        if self.time_control is not None:  # absent otherwise: older stores stay comparable
            data["time_control"] = _tc_dict(self.time_control)
        if (self.spec.cwd / MANIFEST).is_file():
            # What the hash covered, so that a resume can tell a bot that only wrote new files
            # into its folder (a log) from a changed one (store.conflicts).
            data["folder"] = str(self.spec.cwd)
            data["files"] = [p.relative_to(self.spec.cwd).as_posix() for p in folder_files(self.spec.cwd)]
        return data


@dataclass(frozen=True)
class Opening:
    """A start position given as moves; `variant` is None when it applies to every variant."""

    moves: tuple[int, ...]
    variant: str | None
    line: int

    @property
    def text(self) -> str:
        return " ".join(format_move(m) for m in self.moves)


@dataclass
class TournamentConfig:
    name: str
    path: Path
    bots: list[BotEntry]
    variants: list[Variant]
    format: str = "round-robin"
    gauntlet_bot: str | None = None
    games: int | None = None  # per pairing per variant; None: 2, or 2 per opening
    openings_file: Path | None = None
    openings: list[Opening] = field(default_factory=list)
    openings_given: bool = False  # the file names its openings (`"none"` included)
    time_control: TimeControl = field(default_factory=TimeControl)
    concurrency: int = 1
    cluster: str | None = None  # issue 12: play the games on this Dask cluster (dask_executor)
    seed: int = 0
    restart: str = "on-failure"
    start_failure: str = "stop"  # START_FAILURE_POLICIES
    output: Path = Path("results")
    sandbox: TournamentSandbox = field(default_factory=TournamentSandbox)
    publish_logs: bool = True
    adjudicate_s: float | None = None  # solver seconds per position; None: games are played out
    description: str = ""
    # `output` was chosen on purpose (in the file or with --output): another tournament file's
    # results may be there, and the run joins them rather than being refused
    output_explicit: bool = False
    plots: bool = False  # draw the charts at the end of `arena run` (as `--plots` does)
    affinity: bool = False  # each worker and its two bots pinned to one core (arena.affinity)
    ponder: bool = True  # False: a bot's processes are stopped between its turns

    def bot(self, name: str) -> BotEntry:
        for entry in self.bots:
            if entry.name == name:
                return entry
        raise KeyError(name)

    def time_control_of(self, name: str) -> TimeControl:
        """The time control the bot `name` plays under: its own, else [time]."""
        return self.bot(name).time_control or self.time_control

    def openings_for(self, variant: Variant) -> list[Opening]:
        return [o for o in self.openings if o.variant in (None, variant.spec)]

    def openings_digest(self) -> str:
        return _digest_of(self.openings)

    def variant_openings(self) -> dict[str, str]:
        """Each variant's openings digest: a variant added to a file leaves the others' games
        comparable (one digest of all made it "the openings changed": user review)."""
        return {v.spec: _digest_of(self.openings_for(v)) for v in self.variants}

    def settings(self) -> dict:
        """Everything about the tournament, as plain JSON-able data (stored with the games)."""
        return {
            "name": self.name,
            "file": str(self.path),
            "description": self.description,
            "format": self.format,
            "gauntlet_bot": self.gauntlet_bot,
            "games": self.games,
            "variants": [v.spec for v in self.variants],
            "openings_file": str(self.openings_file) if self.openings_file else None,
            "openings": len(self.openings),
            "openings_digest": self.openings_digest(),
            "time_control": _tc_dict(self.time_control),
            "concurrency": self.concurrency,
            "seed": self.seed,
            "restart": self.restart,
            "start_failure": self.start_failure,
            "output": str(self.output),
            "bots": [{"name": b.name, "ref": b.ref, **b.fingerprint()} for b in self.bots],
            "publish_logs": self.publish_logs,
            "adjudicate": self.adjudicate_mode,
            **self.sandbox.settings(),
            # what ran: false where the platform cannot pin (a note said so)
            "affinity": self.affinity and affinity_available(),
            "ponder": self.ponder,
        }

    @property
    def adjudicate_mode(self) -> str:
        """The file's `adjudicate` value: "solver" or "off"."""
        return "solver" if self.adjudicate_s is not None else "off"

    def fingerprint(self) -> dict:
        """What stored games depend on: if any of it changes, old games are not comparable."""
        return {
            "time_control": _tc_dict(self.time_control),
            "openings_digest": self.openings_digest(),
            "variant_openings": self.variant_openings(),
            "seed": self.seed if self.openings else None,
            "bots": {b.name: b.fingerprint() for b in self.bots},
            # the solver ends games a bot could still have swindled: not to be mixed
            "adjudicate": self.adjudicate_mode,
        }


def _digest_of(openings: Sequence[Opening]) -> str:
    text = "\n".join(f"{o.variant or '*'}:{o.text}" for o in openings)
    return hashlib.sha256(text.encode()).hexdigest()[:16] if openings else ""


def _tc_dict(tc: TimeControl) -> dict:
    return dict(tc.to_dict())


# The keys of each table, to tell where a key unknown in one table belongs: any key written
# below a header is read as that header's table's.
_TABLES: dict[str, Collection[str]] = {"time": _TIME_KEYS, "limits": LIMIT_KEYS, "bots": _BOT_KEYS}
_MOVE_UP = ("move it above the first [table] or [[bots]] header (keys below a header belong to "
            "its table)")


class _Checker:
    def __init__(self, path: Path, text: str,
                 top: Mapping[str, tuple[tuple[type, ...], str]] = _TOP_KEYS) -> None:
        self.path = path
        self.lines = _Lines(text)
        self.top = top  # the file's top-level keys: a league file has fewer

    def error(self, message: str, key: str | None = None, table: str = "", index: int = 0):
        number = self.lines.line(key, table, index)
        where = f"{self.path}:{number}" if number else f"{self.path}"
        return ConfigError(f"{where}: {message}")

    def check_keys(
        self,
        data: dict,
        schema: dict[str, tuple[tuple[type, ...], str]],
        table: str = "",
        index: int = 0,
        label: str = "",
    ) -> None:
        for key, value in data.items():
            if key not in schema:
                place = f" in {label}" if label else ""
                hint = self._hint(key, schema, table)
                raise self.error(f"unknown key {key!r}{place}{hint}", key, table, index)
            types, description = schema[key]
            # a TOML boolean is a Python int: accept it only where a boolean is meant
            if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
                place = f"[{table}] " if table and table != "bots" else ""
                raise self.error(
                    f"{place}{key!r} must be {description}, got {as_toml(value)}", key, table,
                    index)

    def _hint(self, key: str, schema: Collection[str], table: str) -> str:
        """Where an unknown key belongs: a key of another table, written here, is more likely
        misplaced than misspelt; else the closest key of this table, else of another one."""
        others = self._other_homes(table)
        home = next((name for name, keys in others.items() if key in keys), None)
        if home is not None:
            return f"; {self._belongs(key, home, table)}"
        if close := did_you_mean(key, list(schema)):
            return close
        # a near miss of a table this one is in is no misplaced key: `bogus` in a bot's time
        # table is not `bots`
        around = set(table.split("."))
        elsewhere = {known: name for name, keys in others.items() for known in keys
                     if known not in around}
        near = closest(key, elsewhere)
        if near:
            return f"; did you mean {near!r}? {self._belongs(near, elsewhere[near], table)}"
        return _suggest(key, list(schema))

    def _other_homes(self, table: str) -> dict[str, Collection[str]]:
        """The keys of every table but `table` (`bots.time` has the keys of `time`) that this
        kind of file has."""
        here = table.rpartition(".")[2]
        homes = {"": self.top, **{name: keys for name, keys in _TABLES.items() if name in self.top}}
        return {name: keys for name, keys in homes.items() if name != here}

    def _belongs(self, key: str, home: str, table: str) -> str:
        if not home:
            return f"{key!r} is a top-level key: {_MOVE_UP}"
        if home == "bots":
            return f"{key!r} belongs in a [[bots]] table"
        own = f" (or, for this bot only, in {home} = {{ {key} = ... }})" if table == "bots" else ""
        return f"{key!r} belongs in the [{home}] table{own}"


Resolver = Callable[..., BotSpec]


def _default_resolver() -> Resolver:
    from arena.botspec import resolve_bot

    return resolve_bot


def _resolve_ref(ref: str, base: Path, args: Sequence[str], name: str | None,
                 resolver: Resolver) -> BotSpec:
    """Try the ref relative to the tournament file's folder, then as given (CWD, bundled names)."""
    local = base / ref
    errors: list[Exception] = []
    if not Path(ref).is_absolute() and local.exists():
        try:
            return resolver(str(local), args=tuple(args), name=name)
        except ValueError as error:
            errors.append(error)
    try:
        if Path(ref).is_absolute() or errors:
            return resolver(ref, args=tuple(args), name=name)
        return resolver(ref, args=tuple(args), name=name, looked_in=(base,))
    except ValueError as error:
        raise (errors[0] if errors else error) from None


def load_config(
    path: str | Path,
    *,
    concurrency: int | None = None,
    resolver: Resolver | None = None,
) -> TournamentConfig:
    """Read and check a tournament file; raise `ConfigError` naming the key and line."""
    path = Path(path)
    text = _read_text(path)
    data = _parse_toml(path, text)
    check = _Checker(path, text)
    check.check_keys(data, _TOP_KEYS)
    base = path.resolve().parent
    name = _name(check, data, path)
    variants = _variants(check, data)
    fmt = _format(check, data)
    games = _games(check, data)
    bots = _bots(check, data.get("bots"), base, resolver)
    time_control = _time_control(check, data.get("time", {}))
    bots = _bot_time_controls(check, data.get("bots"), bots, time_control)
    openings_file, openings = _openings(check, data, base, variants)
    _check_size(check, _pairings(fmt, bots), games, variants, openings)
    return TournamentConfig(
        name=name,
        path=path.resolve(),
        bots=bots,
        variants=variants,
        format=fmt,
        gauntlet_bot=_gauntlet_bot(check, data, fmt, bots),
        games=games,
        openings_file=openings_file,
        openings=openings,
        openings_given="openings" in data,
        time_control=time_control,
        concurrency=_concurrency(check, data, concurrency),
        cluster=_cluster(check, data),
        seed=data.get("seed", 0),
        restart=_restart(check, data),
        start_failure=_start_failure(check, data),
        output=_output(check, data, name),
        description=data.get("description", ""),
        output_explicit="output" in data,
        plots=data.get("plots", False),
        sandbox=_sandbox(check, data),
        publish_logs=data.get("publish_logs", True),
        affinity=data.get("affinity", False),
        ponder=data.get("ponder", True),
        adjudicate_s=_adjudicate(check, data),
    )


def _adjudicate(check: _Checker, data: dict[str, Any]) -> float | None:
    value = data.get("adjudicate", "off")
    if value not in ("solver", "off"):
        raise check.error(f"'adjudicate' must be \"solver\" or \"off\", got {value!r}", "adjudicate")
    return ADJUDICATION_BUDGET_S if value == "solver" else None


def _sandbox(check: _Checker, data: dict[str, Any]) -> TournamentSandbox:
    try:
        return parse_tournament(data)
    except SandboxConfigError as error:
        key = error.key or "sandbox"
        limits = data.get("limits")
        in_limits = key in LIMIT_KEYS or (isinstance(limits, dict) and key in limits)
        raise check.error(str(error), key, "limits" if in_limits else "") from None


def _read_text(path: Path) -> str:
    try:
        return decode(path.read_bytes())
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such tournament file") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: {not_utf8(error)}") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from None


def _parse_toml(path: Path, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(syntax_error(path, text, error)) from None


def _name(check: _Checker, data: dict[str, Any], path: Path) -> str:
    name = data.get("name", path.stem)
    if "name" not in data and not _NAME_RE.match(name):  # the file's name, not a key written
        raise check.error(
            f"the tournament is named after its file, {name!r}, which cannot name the output "
            "folder (letters, digits, '.', '_', '-' or '+'): add name = \"...\" to the file, or "
            "rename it", "name")
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise check.error(
            f"'name' must be letters, digits, '.', '_', '-' or '+' (it names the output folder), "
            f"got {name!r}",
            "name",
        )
    return name


def _variants(check: _Checker, data: dict[str, Any]) -> list[Variant]:
    raw = data.get("variants", [DEFAULT_VARIANT])
    if isinstance(raw, str):
        raw = [raw]
    if not raw:
        raise check.error("'variants' is empty: list at least one variant spec", "variants")
    variants: list[Variant] = []
    for spec in raw:
        if not isinstance(spec, str):
            raise check.error(f"'variants' must hold spec strings, got {spec!r}", "variants")
        try:
            variant = _parse_variant(spec)
        except VariantError as error:
            if isinstance(data.get("variants"), str) and (listed := _as_list(spec)):
                raise check.error(f"'variants' is one variant spec, and {spec!r} is not one: "
                                  f"several variants are a list, variants = {listed}",
                                  "variants") from None
            raise check.error(f"bad variant in 'variants': {error}", "variants") from None
        if any(v.spec == variant.spec for v in variants):
            raise check.error(f"variant {variant.spec!r} is listed twice in 'variants'", "variants")
        variants.append(variant)
    return variants


def _as_list(text: str) -> str | None:
    """`["classic", "popout"]` for `"classic,popout"` written as one string, if each part is a
    variant; else None."""
    try:
        parts = split_variant_list(text)
        for part in parts:
            _parse_variant(part)
    except VariantError:
        return None
    return "[" + ", ".join(f'"{part}"' for part in parts) + "]" if len(parts) > 1 else None


def _format(check: _Checker, data: dict[str, Any]) -> str:
    fmt = data.get("format", "round-robin")
    if fmt not in FORMATS:
        raise check.error(
            f"'format' must be one of {', '.join(FORMATS)}, got {fmt!r}{did_you_mean(fmt, FORMATS)}",
            "format",
        )
    return fmt


def _games(check: _Checker, data: dict[str, Any]) -> int | None:
    games = data.get("games")
    if games is not None and (games < 2 or games % 2):
        raise check.error(
            f"'games' must be a positive even number (each bot starts half the games), got {games}",
            "games",
        )
    return games


def _restart(check: _Checker, data: dict[str, Any]) -> str:
    restart = data.get("restart", "on-failure")
    if restart not in RESTART_POLICIES:
        raise check.error(
            f"'restart' must be one of {', '.join(RESTART_POLICIES)}, got {restart!r}", "restart"
        )
    return restart


def _start_failure(check: _Checker, data: dict[str, Any]) -> str:
    policy = data.get("start_failure", "stop")
    if policy not in START_FAILURE_POLICIES:
        raise check.error(f"'start_failure' must be \"stop\" or \"forfeit\", got {policy!r}"
                          f"{did_you_mean(str(policy), START_FAILURE_POLICIES)}", "start_failure")
    return policy


def _concurrency(check: _Checker, data: dict[str, Any], override: int | None) -> int:
    conc = override if override is not None else data.get("concurrency")
    if conc is None:
        return default_concurrency()
    if conc < 1:
        raise check.error(f"'concurrency' must be at least 1, got {conc}", "concurrency")
    return conc


def _cluster(check: _Checker, data: dict[str, Any]) -> str | None:
    """Issue 12: `cluster = "tcp://HOST:8786"` or `"local:N"` (checked without importing Dask)."""
    from arena.tournament.dask_executor import cluster_problem

    if "cluster" in data and (problem := cluster_problem(data["cluster"])):
        raise check.error(f"'cluster': {problem}", "cluster")
    return data.get("cluster")


def output_of(path: str | Path) -> Path:
    """The results folder of a tournament file, read without resolving its bots (for a
    command given the file where it wants the folder)."""
    path = Path(path)
    text = _read_text(path)
    data = _parse_toml(path, text)
    check = _Checker(path, text)
    return _output(check, data, _name(check, data, path))


def _output(check: _Checker, data: dict[str, Any], name: str) -> Path:
    if "output" not in data:
        return Path(f"results/{name}")
    if not data["output"].strip():
        raise check.error("'output' is empty: name a results directory, e.g. \"results/NAME\"",
                          "output")
    if "\x00" in data["output"]:
        raise check.error("'output' contains a NUL character", "output")
    output = Path(data["output"])
    if (blocker := _file_in_the_way(output)) is not None:
        raise check.error(f"'output': {str(blocker)!r} is a file, not a folder: name a results "
                          "folder", "output")
    return output


def _file_in_the_way(folder: Path) -> Path | None:
    """The existing non-folder at `folder` or above it, which would stop it being created."""
    for candidate in (folder, *folder.parents):
        try:
            if candidate.exists():
                return None if candidate.is_dir() else candidate
        except OSError:  # unreadable: the run, which creates the folder, says why
            return None
    return None


def _gauntlet_bot(check: _Checker, data: dict[str, Any], fmt: str,
                  bots: list[BotEntry]) -> str | None:
    gauntlet_bot = data.get("gauntlet_bot")
    if fmt != "gauntlet":
        if gauntlet_bot is not None:
            raise check.error("'gauntlet_bot' is only used with format = \"gauntlet\"",
                              "gauntlet_bot")
        return None
    names = [b.name for b in bots]
    if gauntlet_bot is None:
        raise check.error("format 'gauntlet' needs 'gauntlet_bot = \"NAME\"'", "format")
    if gauntlet_bot not in names:
        raise check.error(
            f"'gauntlet_bot' {gauntlet_bot!r} is not one of the bots ({', '.join(names)})"
            f"{did_you_mean(gauntlet_bot, names)}",
            "gauntlet_bot",
        )
    return gauntlet_bot


def _openings(check: _Checker, data: dict[str, Any], base: Path,
              variants: list[Variant]) -> tuple[Path | None, list[Opening]]:
    """The openings file and its openings; `openings = "builtin"` is `arena play`'s built-in
    set (each variant's own), `"none"` (or no key) the empty board."""
    if data.get("openings", NO_OPENINGS) == NO_OPENINGS:
        return None, []
    if data["openings"] == BUILTIN_OPENINGS:
        return None, _builtin_openings(variants, check.lines.line("openings"))
    openings_file = _find_file(data["openings"], base)
    if openings_file is None:
        keywords = (BUILTIN_OPENINGS, NO_OPENINGS)  # `"Builtin"`: a keyword, not a file name
        hint = did_you_mean(str(data["openings"]).lower(), keywords) or \
            f" (or use {keywords[0]!r} or {keywords[1]!r})"
        raise check.error(f"openings file {data['openings']!r} not found{hint}", "openings")
    openings = _read_openings(openings_file, variants)
    if not openings:
        played = ", ".join(v.spec for v in variants)
        raise check.error(f"openings file {data['openings']!r} holds no openings for the "
                          f"variants played ({played}): a line 'VARIANT: moves' is for that "
                          "variant only", "openings")
    return openings_file, openings


def _pairings(fmt: str, bots: list[BotEntry]) -> int:
    return len(bots) - 1 if fmt == "gauntlet" else len(bots) * (len(bots) - 1) // 2


def _check_size(check: _Checker, pairings: int, games: int | None, variants: list[Variant],
                openings: list[Opening]) -> None:
    """The schedule is built in memory: refuse one too big before building it."""
    total = pairings * sum(
        games if games is not None
        else 2 * max(1, sum(o.variant in (None, v.spec) for o in openings))
        for v in variants
    )
    if total > MAX_GAMES:
        raise check.error(
            f"the schedule would hold {total:,} games, more than arena plays in one tournament "
            f"({MAX_GAMES:,}): lower 'games' or split the tournament",
            "games" if games is not None else "openings",
        )


def _find_file(ref: str, base: Path) -> Path | None:
    for candidate in (base / ref, Path(ref)):
        if candidate.is_file():
            return candidate.resolve()
    return None


def _time_control(check: _Checker, table: dict[str, Any]) -> TimeControl:
    """The [time] table as a TimeControl, whose own rules are the only ones checked."""
    check.check_keys(table, _TIME_KEYS, table="time", label="[time]")
    return _checked_time_control(check, table, table, "[time]", "time")


def _checked_time_control(check: _Checker, values: dict[str, Any], table: dict[str, Any],
                          label: str, where: str, index: int = 0) -> TimeControl:
    """`values` as a TimeControl; an error points at the key of `table` it names."""
    try:
        return TimeControl.from_dict(values)
    except (ValueError, TypeError) as error:
        message = str(error).removeprefix("time control: ")
        named = [(message.find(k), k) for k in _TIME_KEYS if k in message and k in table]
        key = min(named)[1] if named else None
        raise check.error(f"{label} impossible time control: {message}", key, where,
                          index) from None


def _bot_time_controls(check: _Checker, raw: list[Any], bots: list[BotEntry],
                       default: TimeControl) -> list[BotEntry]:
    """Time odds: each bot's own `time` table, read over [time]. Naming a limit (`move_ms` or
    `base_ms`) replaces [time]'s limits (per-move limit, clock and increment) as if written in
    [time]; other keys (`startup_ms`, `grace_ms`, an `increment_ms` alone) change only
    themselves. A bot whose control comes out equal to [time] plays under [time]."""
    entries = []
    for index, (item, entry) in enumerate(zip(raw, bots, strict=True)):
        table = item.get("time")
        if table is None:
            entries.append(entry)
            continue
        label = f"the time table of bot {entry.name!r}"
        check.check_keys(table, _TIME_KEYS, table="bots.time", index=index, label=label)
        values = {**default.to_dict(), **own_time_keys(table)}
        own = _checked_time_control(check, values, table, f"{label}:", "bots.time", index)
        entries.append(entry if own == default else replace(entry, time_control=own))
    return entries


def _bots(check: _Checker, raw: list[Any] | None, base: Path,
          resolver: Resolver | None) -> list[BotEntry]:
    if not raw:
        raise check.error(
            "no bots: add at least two [[bots]] tables, e.g. [[bots]] path = \"random\"", "bots"
        )
    if not all(isinstance(item, dict) for item in raw):
        raise check.error("'bots' must be [[bots]] tables with a 'path' key", "bots")
    resolve = resolver or _default_resolver()
    entries: list[BotEntry] = []
    for index, item in enumerate(raw):
        entry = _bot(check, item, index, base, resolve)
        twin = next((e for e in entries if e.name == entry.name), None)
        if twin is not None:
            raise check.error(
                f"two bots are named {entry.name!r} (lines {twin.line} and {entry.line}); "
                "give each a distinct name = \"...\"",
                "name" if "name" in item else _ref_key(item), "bots", index,
            )
        entries.append(entry)
    if len(entries) < 2:
        raise check.error("a tournament needs at least two bots", "bots")
    return entries


def _ref_key(item: dict[str, Any]) -> str:
    return "path" if "path" in item else "command"


def _bot(check: _Checker, item: dict[str, Any], index: int, base: Path,
         resolve: Resolver) -> BotEntry:
    """One [[bots]] table, resolved; its `line` is that of its path or command."""
    check.check_keys(item, _BOT_KEYS, table="bots", index=index, label=f"bot #{index + 1}")
    if ("path" in item) == ("command" in item):
        raise check.error(
            f"bot #{index + 1} needs exactly one of 'path' or 'command'", None, "bots", index
        )
    ref, args = _bot_command(check, item, index)
    name = item.get("name")
    _check_bot_name(check, name, index)
    key = _ref_key(item)
    try:
        if key == "command":  # one rule for commands everywhere, relative to this file's folder
            spec = resolve_command(_command_parts(item), base, item.get("args", []), name)
        else:
            spec = _resolve_ref(ref, base, args, name, resolve)
    except ValueError as error:
        # a command is named whole: `bot 'node'` read as a bot named node (user review)
        label = f"bot {name!r}" if name else \
            f"command {shlex.join(_command_parts(item))!r}" if key == "command" else f"bot {ref!r}"
        raise check.error(f"{label}: {error}", key, "bots", index) from None
    try:
        limits = parse_bot_limits(item, f"bot #{index + 1}")
    except SandboxConfigError as error:
        raise check.error(str(error), "limits", "bots", index) from None
    return BotEntry(name or spec.name, ref, tuple(args), spec, check.lines.line(key, "bots", index),
                    limits)


def _bot_command(check: _Checker, item: dict[str, Any], index: int) -> tuple[str, list[str]]:
    """(reference, extra arguments) of a bot given by `path` + `args` or by `command`."""
    args = argument_list(item.get("args", []))
    if args is None:
        raise check.error(ARGS_RULE, "args", "bots", index)
    if "path" in item:
        if not item["path"].strip():
            raise check.error("'path' is empty: name a bot folder, script, executable or "
                              "bundled bot", "path", "bots", index)
        return item["path"], args
    parts = _command_parts(item)
    if not parts:
        raise check.error("'command' is empty", "command", "bots", index)
    return parts[0], parts[1:] + args


def _command_parts(item: dict[str, Any]) -> list[str]:
    command = item["command"]
    return shlex.split(command) if isinstance(command, str) else [str(p) for p in command]


def _check_bot_name(check: _Checker, name: str | None, index: int) -> None:
    if name is not None and name_problem(name):
        raise check.error(f"bot name {name!r} {name_problem(name)} ({NAME_RULE})", "name", "bots", index)


def _prefix_hint(line: str, tokens: list[str], moves: tuple[int, ...],
                 variants: list[Variant]) -> str:
    """For an unprefixed opening line that fails in one of the tournament's variants (it is
    played in all of them): the prefix of a variant where it can start a game, if any."""
    fits = next((v for v in variants if opening_problem(v, moves, tokens) is None), None)
    if fits is None:
        return ""
    return (f" (a line without a variant is played in every variant; to play it in "
            f"{fits.spec} only, write '{fits.spec}: {line}')")


def _read_openings(path: Path, variants: list[Variant]) -> list[Opening]:
    """Lines of moves (`d4 d4 d3`, `4453`, or `VARIANT: d4 d4`); `#` starts a comment."""
    from arena.game import parse_record

    openings: list[Opening] = []
    seen: set[tuple[str | None, tuple[int, ...]]] = set()
    specs = {v.spec for v in variants}
    try:
        text = decode(path.read_bytes())
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: the openings file is {not_utf8(error)}") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the openings file: {error.strerror or error}") \
            from None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{path}:{number}"
        try:
            variant, tokens = parse_record(line, variants[0])
            moves = tuple(parse_move(t) for t in tokens)
        except (VariantError, MoveError) as error:
            raise ConfigError(f"{where}: {error}") from None
        scoped = variant.spec if ":" in line else None
        if scoped is not None and scoped not in specs:
            continue  # an opening for a variant this tournament does not play
        if not moves:
            raise ConfigError(f"{where}: an opening needs at least one move")
        targets = [variant] if scoped else variants
        for target in targets:
            problem = opening_problem(target, moves, tokens)
            if problem is not None:
                hint = "" if scoped else _prefix_hint(line, tokens, moves, variants)
                raise ConfigError(f"{where}: {problem}{hint}")
        if (scoped, moves) in seen:
            continue
        seen.add((scoped, moves))
        openings.append(Opening(moves, scoped, number))
    return openings


# A league file has the keys of a tournament file, less the field and the game counts (bots
# are submitted, and the scheduler decides how many games each pair plays).
_NOT_LEAGUE_KEYS = {
    "bots": "entrants join with `arena league submit`",
    "games": "the league's scheduler decides which pairs play and how often",
    "format": "the league's scheduler decides which pairs play and how often",
    "gauntlet_bot": "the league's scheduler decides which pairs play and how often",
    "output": "a league's results are its own folder",
    "plots": "`arena plot` or `arena publish` draws them",
    "restart": "a league keeps each bot's processes for its next games",
    "start_failure": "a league's bots passed `arena check` when submitted",
    "affinity": "leagues do not pin workers to cores (tournaments and `arena play --affinity` do)",
    "cluster": "`arena league run --cluster ADDRESS` plays a league on a cluster",
}
LEAGUE_KEYS = {k: v for k, v in _TOP_KEYS.items() if k not in _NOT_LEAGUE_KEYS}


def _builtin_openings(variants: list[Variant], line: int = 0) -> list[Opening]:
    """`arena play`'s built-in openings, each variant's own (scoped to it)."""
    return [Opening(moves, variant.spec, line) for variant in variants
            for moves in builtin_openings(variant)]


def _league_lines(openings: list[Opening]) -> list[str]:
    """Openings as a league stores them: a line for one variant keeps its prefix
    (`league_openings` reads them back)."""
    return [f"{o.variant}: {o.text}" if o.variant else o.text for o in openings]


def league_openings_setting(choice: str, variants: list[Variant]) -> list[str]:
    """What a league stores for `league init --openings CHOICE`: "builtin", "none" or a file."""
    if choice == NO_OPENINGS:
        return []
    if choice == BUILTIN_OPENINGS:
        return _league_lines(_builtin_openings(variants))
    try:
        path = openings_file(choice)
    except OpeningsError as error:
        raise ConfigError(f"--openings {error}") from None
    return _league_lines(_read_openings(path, variants))


def league_openings(stored: list[str], variant: str) -> list[list[str]]:
    """A league's openings for `variant` (its stored lines without a variant, and those for
    it), as move tokens; [[]] (the empty board) when there is none."""
    mine = []
    for line in stored:
        scope, _, moves = line.rpartition(": ")  # a spec may hold ':' (classic:7x6), moves not
        if scope in ("", variant):
            mine.append(moves.split())
    return mine or [[]]


def load_league_file(path: str | Path) -> dict[str, Any]:
    """Read and check a league TOML file; the league's stored settings. ConfigError names the
    key and line, as for tournament files."""
    path = Path(path)
    text = _read_text(path)
    data = _parse_toml(path, text)
    check = _Checker(path, text, LEAGUE_KEYS)
    for key in data:  # a tournament file's keys: say why they are not a league's
        if key in _NOT_LEAGUE_KEYS:
            raise check.error(f"{key!r} is a key of tournament files, not of league files: "
                              f"{_NOT_LEAGUE_KEYS[key]}", key)
    check.check_keys(data, LEAGUE_KEYS)
    variants = _variants(check, data)
    _, openings = _openings(check, data, path.resolve().parent, variants)
    sandbox = _sandbox(check, data)
    return {
        "name": _name(check, data, path),
        "description": data.get("description", ""),
        "variants": [v.spec for v in variants],
        "time_control": _tc_dict(_time_control(check, data.get("time", {}))),
        # a league file without `openings` plays the built-in set, as `league init` does
        "openings": _league_lines(openings if "openings" in data
                                  else _builtin_openings(variants)),
        "seed": data.get("seed", 0),
        # only when the file sets it: else `league run` counts the cores of its own machine,
        # not those of the one that made the league
        "concurrency": _concurrency(check, data, None) if "concurrency" in data else None,
        "publish_logs": data.get("publish_logs", True),
        "adjudicate": "solver" if _adjudicate(check, data) is not None else "off",
        "ponder": data.get("ponder", True),
        "sandbox": sandbox.mode,
        "limits": dict(sandbox.limits),
    }
