"""Kaggle ConnectX agents as arena bots, unchanged.

A ConnectX agent is a function `agent(observation, configuration) -> column`: the board as a flat
list, top row first (0 empty, 1 and 2 the players' discs), the agent's `mark`, and the board's
`columns`, `rows` and `inarow`; it answers a column counted from 0. This module gives it exactly
that from each `turn` and sends its column back as a drop, through the SDK's protocol loop:

    # bot.py, beside the unchanged Kaggle file submission.py (and a bot.toml: command = "bot.py")
    from arena.connectx import run_agent

    run_agent("submission.py", name="my-agent")

As on Kaggle: the agent is the file's last callable (an imported function or class counts too),
it is fresh for every game (as in each Kaggle episode, its file's globals start over: they are
put back as they were after the file ran, so that work at import costs no move's time:
`Submission`), it gets as many of the two arguments as it takes, and whatever it prints goes
to the bot's stderr (the log), not to the protocol. It plays every variant it can see on its
board: any size and line length; in PopOut it only drops (ConnectX has no pops), and in
5-in-a-Row the pre-filled outer columns are discs on its board. `actTimeout` (also `timeout`
and `agentTimeout`) is the SDK's safe budget for the move in seconds (the move limit less its
margin), and `remainingOverageTime` what a clock would leave beyond it (0 under a move limit).
A column that is full or beyond the board is an illegal move: the bot loses the game, as on
Kaggle; an agent that raises, or answers something that is no column number (negative, or not
an integer), gets the SDK's fallback (the first legal move, and an `info` line saying so, which
`arena check` fails and `arena play` and the standings point out).
"""

from __future__ import annotations

import contextlib
import copy
import operator
import os
import runpy
import sys
import types
from collections.abc import Callable
from typing import Any

from arena.sdk import Turn, run_bot

Agent = Callable[[Any, Any], Any]
EPISODE_STEPS = 1000  # ConnectX's default; an arena game ends by its own rules
RUN_TIMEOUT_S = 1200


class Struct(dict):
    """A dict whose keys are also attributes (`obs.board` and `obs["board"]`), as Kaggle's."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value


def board(turn: Turn) -> list[int]:
    """The grid as ConnectX's flat list: top row first, left to right."""
    game, variant = turn.game, turn.variant
    return [game.cell(column, row)
            for row in range(variant.rows, 0, -1) for column in range(1, variant.columns + 1)]


def observation(turn: Turn) -> Struct:
    budget_s = turn.budget_ms / 1000
    overage = 0.0
    if turn.setup.base_ms is not None:  # a clock: what it holds beyond this move's budget
        overage = max(0.0, turn.time_left_ms / 1000 - budget_s)
    return Struct(board=board(turn), mark=turn.game.to_move, step=turn.ply,
                  remainingOverageTime=overage)


def configuration(turn: Turn) -> Struct:
    variant = turn.variant
    budget_s = turn.budget_ms / 1000
    return Struct(columns=variant.columns, rows=variant.rows, inarow=variant.connect,
                  actTimeout=budget_s, timeout=budget_s, agentTimeout=budget_s,
                  episodeSteps=EPISODE_STEPS, runTimeout=RUN_TIMEOUT_S)


def move_of(column: Any) -> int:
    """The arena's drop for a ConnectX column (counted from 0); TypeError if it is no integer
    (numpy's integers are; `True` and 3.0 are not), ValueError if it is negative (a pop's
    number here, and no column on Kaggle)."""
    if isinstance(column, bool) or isinstance(column, float):
        raise TypeError(f"the agent answered {column!r}, not a column number")
    index = operator.index(column)
    if index < 0:
        raise ValueError(f"the agent answered {index}: columns count from 0")
    return index + 1


def call_agent(agent: Agent, observation: Struct, configuration: Struct) -> Any:
    """Call `agent` as Kaggle does: with as many of (observation, configuration) as it takes,
    its prints sent to stderr (stdout is the protocol's)."""
    with contextlib.redirect_stdout(sys.stderr):
        return agent(*(observation, configuration)[:_arity(agent)])


def _arity(agent: Agent) -> int:
    """How many positional arguments `agent` takes, at most 2 (2 when it cannot be told)."""
    function, bound = agent, 0
    if hasattr(agent, "__func__"):  # a bound method: self is given
        function, bound = agent.__func__, 1
    elif not hasattr(agent, "__code__"):  # an object: its class's __call__
        function, bound = vars(type(agent)).get("__call__"), 1
    code = getattr(function, "__code__", None)
    if code is None or code.co_flags & _VARARGS:
        return 2
    return max(0, min(2, code.co_argcount - bound))


_VARARGS = 0x04  # CO_VARARGS: a function of *args takes both


def chooser(agent: Agent, fresh: Callable[[], Agent] | None = None) -> Callable[[Turn], int]:
    """The SDK's move function for `agent`, with a `new_game` hook that takes `fresh()` for
    each game after one it played (none given: the same agent throughout)."""
    used = False  # played a game since it was taken

    def choose(turn: Turn) -> int:
        nonlocal used
        used = True
        return move_of(call_agent(agent, observation(turn), configuration(turn)))

    def new_game(setup: object) -> None:
        nonlocal agent, used
        if used and fresh is not None:
            agent, used = fresh(), False

    choose.__name__ = getattr(agent, "__name__", "agent")
    choose.new_game = new_game  # type: ignore[attr-defined]
    return choose


class Submission:
    """A submission file's agent, fresh for every game as in each Kaggle episode: the file runs
    once, and each later game gets its module globals back as they were right after it ran (a
    deep copy, in microseconds to milliseconds). Running the file again at each game charged
    its import work (a table built, weights loaded) to that game's first move, which lost on
    time (diff review). Where a global cannot be copied, the file runs again."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path
        self.agent = load_agent(path)
        self.names: dict | None = getattr(self.agent, "__globals__", None)
        self.saved = _snapshot(self.names) if self.names is not None else None

    def fresh(self) -> Agent:
        if self.names is None or self.saved is None:
            return load_agent(self.path)
        shared, copied = self.saved
        self.names.clear()
        self.names.update(shared)
        self.names.update(copy.deepcopy(copied))
        return self.agent


# Kept as they are, not copied: what the file defined or imported rather than its state.
_SHARED = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)


def _snapshot(names: dict) -> tuple[dict, dict] | None:
    """(the globals kept as they are, a deep copy of the others), None if one cannot be copied."""
    shared = {k: v for k, v in names.items() if isinstance(v, _SHARED) or k == "__builtins__"}
    state = {k: v for k, v in names.items() if k not in shared}
    try:
        return shared, copy.deepcopy(state)
    except Exception:  # a lock, a file, an object that refuses: run the file again instead
        return None


def load_agent(path: str | os.PathLike[str]) -> Agent:
    """The last callable a ConnectX submission file defines (Kaggle's rule), the file run as a
    module that is not `__main__`, its prints sent to stderr. ValueError if it defines none;
    SystemExit with `file:line: message` for a syntax error (the last stderr line is what a
    forfeit quotes, and a traceback's last line names no place)."""
    where = os.fspath(path)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            names = runpy.run_path(where, run_name="submission")
    except SyntaxError as error:
        raise SystemExit(f"{error.filename or where}:{error.lineno}: SyntaxError: "
                         f"{error.msg}") from None
    agents = [(key, value) for key, value in names.items()
              if callable(value) and not key.startswith("__")]
    if not agents:
        raise ValueError(f"{where}: defines no function to play with")
    name, agent = agents[-1]
    print(f"connectx: playing {name} from {where} (the file's last callable)", file=sys.stderr,
          flush=True)
    return agent


def run_agent(agent: Agent | str | os.PathLike[str], name: str = "connectx", version: str = "",
              author: str = "") -> None:
    """Play a ConnectX agent as a bot on stdin/stdout until `quit` (see `arena.sdk.run_bot`).
    `agent`: a submission file, loaded afresh for every game as Kaggle runs each episode, or
    the agent function itself (then its globals live on from game to game)."""
    if isinstance(agent, str | os.PathLike):
        submission = Submission(agent)
        choose = chooser(submission.agent, submission.fresh)
    else:
        choose = chooser(agent)
    run_bot(choose, name=name, version=version, author=author,
            on_new_game=choose.new_game)  # type: ignore[attr-defined]
