"""Kaggle ConnectX agents as arena bots, unchanged.

A ConnectX agent is a function `agent(observation, configuration) -> column`: the board as a flat
list, top row first (0 empty, 1 and 2 the players' discs), the agent's `mark`, and the board's
`columns`, `rows` and `inarow`; it answers a column counted from 0. This module gives it exactly
that from each `turn` and sends its column back as a drop, through the SDK's protocol loop:

    # bot.py, beside the unchanged Kaggle file submission.py (and a bot.toml: command = "bot.py")
    from arena.connectx import load_agent, run_agent

    run_agent(load_agent("submission.py"), name="my-agent")

`load_agent` takes the file's last callable, as Kaggle does. The agent plays every variant it
can see on its board: any size and line length; in PopOut it only drops (ConnectX has no pops),
and in 5-in-a-Row the pre-filled outer columns are discs on its board. `actTimeout` is the
SDK's safe budget for the move in seconds (the move limit less its margin), and
`remainingOverageTime` what a clock would leave beyond it (0 under a move limit). A column
that is full or off the board is an illegal move: the bot loses the game, as on Kaggle; an
agent that raises, or answers something that is not an integer, gets the SDK's fallback (the
first legal move, and an `info` line saying so, which `arena check` fails).
"""

from __future__ import annotations

import operator
import os
import runpy
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
    (numpy's integers are; `True` and 3.0 are not)."""
    if isinstance(column, bool) or isinstance(column, float):
        raise TypeError(f"the agent answered {column!r}, not a column number")
    return operator.index(column) + 1


def chooser(agent: Agent) -> Callable[[Turn], int]:
    """The SDK's move function for `agent`."""

    def choose(turn: Turn) -> int:
        return move_of(agent(observation(turn), configuration(turn)))

    choose.__name__ = getattr(agent, "__name__", "agent")
    return choose


def load_agent(path: str | os.PathLike[str]) -> Agent:
    """The last callable a ConnectX submission file defines (Kaggle's rule), the file run as a
    module that is not `__main__`; ValueError if it defines none."""
    names = runpy.run_path(os.fspath(path), run_name="submission")
    agents = [value for key, value in names.items()
              if callable(value) and not key.startswith("__")]
    if not agents:
        raise ValueError(f"{os.fspath(path)}: defines no function to play with")
    return agents[-1]


def run_agent(agent: Agent, name: str = "connectx", version: str = "",
              author: str = "") -> None:
    """Play `agent` as a bot on stdin/stdout until `quit` (see `arena.sdk.run_bot`)."""
    run_bot(chooser(agent), name=name, version=version, author=author)
