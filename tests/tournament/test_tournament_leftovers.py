"""A run starts by removing bot processes an earlier, killed run of the same results folder left
running (issue 10): every bot carries the folder's key in ARENA_RUN, and the next run (holding the
folder's lock) kills what still carries it."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import ROOT, pid_alive

KEY_BOT = """import os
from arena.sdk import run_bot
run_bot(lambda turn: turn.game.legal_moves()[0], name="keyed", version=os.environ.get("ARENA_RUN", "none"))
"""


def run_key(results: Path) -> str:
    return hashlib.sha256(str(results.resolve()).encode()).hexdigest()[:16]


def test_a_new_run_removes_what_a_killed_run_left_and_bots_carry_the_key(tmp_path):
    results = tmp_path / "out"
    bot = tmp_path / "keyed.py"
    bot.write_text(KEY_BOT)
    file = tmp_path / "t.toml"
    file.write_text(f'variants = ["classic"]\ngames = 2\nsandbox = "off"\noutput = "{results}"\n'
                    f'[time]\nmove_ms = 2000\n[[bots]]\npath = "{bot}"\n[[bots]]\npath = "random"\n')
    # What a SIGKILLed arena leaves: a bot's daemon in its own session, still carrying the key.
    env = {**os.environ, "ARENA_RUN": run_key(results)}
    leftover = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], env=env,
                                start_new_session=True)
    try:
        done = subprocess.run([sys.executable, "-m", "arena", "run", str(file)], capture_output=True,
                              text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 0, done.stderr
        assert "removed 1 bot process(es) left running by an earlier run" in done.stdout + done.stderr
        deadline = time.monotonic() + 30
        while leftover.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert leftover.poll() is not None and not pid_alive(leftover.pid)
    finally:
        if leftover.poll() is None:
            leftover.kill()
        leftover.wait()
    with sqlite3.connect(results / "games.db") as conn:
        versions = {v for row in conn.execute("SELECT first_version, second_version FROM games")
                    for v in row}
    assert run_key(results) in versions  # the bot saw the folder's key in its environment


LOGGING_BOT = """import os
from arena.sdk import run_bot

def choose(turn):
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "debug.log"), "a") as log:
        log.write(f"ply {turn.game.ply}\\n")  # a harmless bot that logs into its own folder
    return turn.game.legal_moves()[0]

run_bot(choose, name="logger")
"""


def test_a_bot_that_writes_into_its_folder_can_be_resumed_but_a_changed_one_cannot(tmp_path):
    folder = tmp_path / "logger"
    folder.mkdir()
    (folder / "bot.toml").write_text('name = "logger"\ncommand = "bot.py"\n')
    (folder / "bot.py").write_text(LOGGING_BOT)
    file = tmp_path / "t.toml"
    file.write_text(f'variants = ["classic"]\ngames = 2\nsandbox = "off"\noutput = "{tmp_path / "out"}"\n'
                    f'[time]\nmove_ms = 2000\n[[bots]]\npath = "{folder}"\n[[bots]]\npath = "random"\n')
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def run(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "arena", "run", str(file), *extra],
                              capture_output=True, text=True, timeout=300, env=env)

    assert run().returncode == 0
    assert (folder / "debug.log").is_file()  # the folder now holds a file it did not
    file.write_text(file.read_text().replace("games = 2", "games = 4"))
    resumed = run()
    assert resumed.returncode == 0, resumed.stderr  # only a new file: the same bot
    (folder / "bot.py").write_text(LOGGING_BOT.replace("legal_moves()[0]", "legal_moves()[-1]"))
    refused = run()
    assert refused.returncode != 0 and "bot 'logger' changed" in refused.stderr
