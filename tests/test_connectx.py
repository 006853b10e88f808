"""Kaggle ConnectX agents as arena bots (arena/connectx.py): the observation they get, the
column they answer, the file they come in, and one such agent through `arena check`."""

from __future__ import annotations

import numpy
import pytest
from click.testing import CliRunner

from arena.commands.check import command as check_command
from arena.connectx import (
    board,
    call_agent,
    configuration,
    load_agent,
    move_of,
    observation,
)
from arena.game import Game, parse_variant
from arena.sdk import GameSetup, Turn
from tests.conftest import ROOT
from tests.test_docs_examples import code_blocks

KAGGLE_AGENT = '''
import random

print("agent loaded")  # Kaggle sends prints to the episode's log: here, to stderr
last_step = -1  # state kept in globals, which Kaggle starts afresh for every episode


def helper(board, columns):
    return [c for c in range(columns) if board[c] == 0]


def agent(observation, configuration):
    global last_step
    if observation.step <= last_step:
        raise RuntimeError("a new game with the last game's globals")
    last_step = observation.step
    open_columns = helper(observation.board, configuration.columns)
    print("open columns:", open_columns)
    centre = configuration.columns // 2
    return centre if centre in open_columns else random.choice(open_columns)


if __name__ == "__main__":
    raise SystemExit("Kaggle never runs this, and neither does the arena")
'''


def _turn(spec: str, moves: list[int], base_ms: int | None = None, time_left_ms: int = 1000,
          budget_ms: float = 850.0) -> Turn:
    variant = parse_variant(spec)
    game = Game(variant)
    for move in moves:
        game.push(move)
    setup = GameSetup("g1", variant, 1, None if base_ms else 1000, base_ms, 0, 0, 0, "x", {})
    return Turn(game, variant, 1, len(moves), list(moves), time_left_ms, None, setup.move_ms, 0,
                budget_ms, 0.0, setup, 0.0)


def test_the_board_is_flat_top_row_first_with_the_movers_mark():
    turn = _turn("classic", [1, 4, 1])  # player 1 twice in column 1, player 2 once in column 4
    cells = board(turn)
    assert len(cells) == 42
    bottom, above = cells[35:42], cells[28:35]
    assert bottom == [1, 0, 0, 2, 0, 0, 0] and above == [1, 0, 0, 0, 0, 0, 0]
    assert cells[:28] == [0] * 28
    seen = observation(turn)
    assert seen.mark == 2 and seen["step"] == 3 and seen.remainingOverageTime == 0.0
    assert seen.board == cells


def test_five_in_a_row_shows_its_filled_outer_columns():
    cells = board(_turn("five", []))
    rows = [cells[r * 9:(r + 1) * 9] for r in range(6)]
    assert all(row[0] and row[8] and not any(row[1:8]) for row in rows)
    assert configuration(_turn("five", [])).inarow == 5


def test_configuration_and_time():
    config = configuration(_turn("classic:10x9,connect=5", [], budget_ms=850.0))
    assert (config.columns, config.rows, config.inarow) == (10, 9, 5)
    assert config.actTimeout == pytest.approx(0.85)
    clock = observation(_turn("classic", [], base_ms=60_000, time_left_ms=30_000,
                              budget_ms=1_000.0))
    assert clock.remainingOverageTime == pytest.approx(29.0)


def test_columns_count_from_zero_and_must_be_integers():
    assert move_of(0) == 1 and move_of(numpy.int64(6)) == 7
    for bad in (True, 3.0, "3", None):
        with pytest.raises(TypeError):
            move_of(bad)
    for negative in (-1, numpy.int8(-2)):  # -2 was played as the pop p1
        with pytest.raises(ValueError, match="columns count from 0"):
            move_of(negative)


def test_an_agent_gets_as_many_arguments_as_it_takes_and_prints_to_stderr(capsys):
    turn = _turn("classic", [4])
    seen, config = observation(turn), configuration(turn)

    class Callable:
        def __call__(self, obs, config):
            return config.columns

    class Agents:
        def method(self, obs):
            return obs.mark

    def noisy(obs, config):
        print("thinking")
        return len(obs.board)

    assert call_agent(lambda obs: obs.step, seen, config) == 1
    assert call_agent(lambda: 5, seen, config) == 5
    assert call_agent(lambda *args: len(args), seen, config) == 2
    assert call_agent(Callable(), seen, config) == 7
    assert call_agent(Agents().method, seen, config) == 2
    assert call_agent(noisy, seen, config) == 42
    out = capsys.readouterr()
    assert out.out == "" and out.err == "thinking\n"


def test_load_agent_takes_the_last_callable_and_not_the_main_block(tmp_path):
    path = tmp_path / "submission.py"
    path.write_text(KAGGLE_AGENT)
    agent = load_agent(path)
    assert agent.__name__ == "agent"
    assert agent(observation(_turn("classic", [])), configuration(_turn("classic", []))) == 3
    broken = tmp_path / "broken.py"
    broken.write_text("def agent(obs, config)\n    return 0\n")
    with pytest.raises(SystemExit, match=r"broken.py:1: SyntaxError: expected ':'"):
        load_agent(broken)
    empty = tmp_path / "empty.py"
    empty.write_text("VALUE = 1\n")
    with pytest.raises(ValueError, match="defines no function"):
        load_agent(empty)


def test_an_unchanged_kaggle_submission_passes_arena_check(tmp_path, no_leftover_processes):
    folder = tmp_path / "kaggle-bot"
    folder.mkdir()
    (folder / "submission.py").write_text(KAGGLE_AGENT)
    # the README's bot.py, as a user copies it
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    source = next(b for b in code_blocks(readme, "python") if "run_agent" in b)
    (folder / "bot.py").write_text(source)
    (folder / "bot.toml").write_text('name = "kaggle-centre"\ncommand = "bot.py"\n')
    result = CliRunner().invoke(check_command, [str(folder), "-n", "1"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "FAIL" not in result.output and "all checks passed" in result.output
    assert "PASS  games: pops (popout): 1 games without a forfeit" in result.output  # drops only


def test_work_at_import_is_done_between_games_not_on_a_moves_clock(tmp_path,
                                                                   no_leftover_processes):
    # The file runs afresh for every game: at the previous game's end, so a submission that
    # builds its tables at import (0.6 s here) does not lose its next first move on time at
    # 300 ms a move (it did when the file ran at the `game` line: diff review)
    from arena.commands.play import command as play_command

    folder = tmp_path / "slow"
    folder.mkdir()
    (folder / "submission.py").write_text(
        "import time\ntime.sleep(0.6)\n\n\ndef agent(obs, config):\n"
        "    return [c for c in range(config.columns) if obs.board[c] == 0][0]\n")
    (folder / "bot.py").write_text('from arena.connectx import run_agent\n\n'
                                   'run_agent("submission.py", name="slow")\n')
    (folder / "bot.toml").write_text('name = "slow"\ncommand = "bot.py"\n')
    result = CliRunner().invoke(play_command, [str(folder), "random", "--games", "4",
                                               "--move-ms", "300"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "forfeits" not in result.output and "fallback" not in result.output, result.output


def test_a_submission_gets_its_globals_back_for_every_game_without_running_again(tmp_path):
    from arena.connectx import Submission

    runs = tmp_path / "runs"
    path = tmp_path / "submission.py"
    path.write_text(f"import random\nopen({str(runs)!r}, 'a').write('ran ')\n"
                    "seen = []\ntable = {'built': 1}\n\n\ndef agent(obs, config):\n"
                    "    seen.append(obs)\n    table['built'] += 1\n    return len(seen)\n")
    submission = Submission(path)
    agent = submission.agent
    assert agent(None, None) == 1 and agent(None, None) == 2
    fresh = submission.fresh()
    assert fresh(None, None) == 1  # globals as after the file ran
    assert fresh.__globals__["table"] == {"built": 2} and runs.read_text() == "ran "
    # a global that cannot be copied (a lock): the file runs again instead
    locked = tmp_path / "locked.py"
    locked.write_text(f"import threading\nopen({str(runs)!r}, 'a').write('locked ')\n"
                      "lock = threading.Lock()\ncalls = []\n\n\ndef agent(obs):\n"
                      "    calls.append(obs)\n    return len(calls)\n")
    again = Submission(locked)
    assert again.agent(None) == 1 and again.agent(None) == 2
    assert again.fresh()(None) == 1 and runs.read_text() == "ran locked locked "
