"""The awk bot plays what the README says: a random drop into an open column, never a pop."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from arena import protocol
from arena.game import Game, parse_move, parse_variant

ROOT = Path(__file__).resolve().parent.parent
AWK = ROOT / "bots" / "awk"


def test_awk_drops_at_random_into_open_columns_and_never_pops():
    variant = parse_variant("popout")
    game = Game(variant)
    for move in (4, 4, 4, 4, 4, 4, 3, 1):  # column 4 full, its bottom disc player 1's
        game.push(move)
    # player 1 to move: it may pop columns 3 and 4, and column 4 takes no drop
    assert any(move < 0 for move in game.legal_moves())
    tokens = [f"{'d' if m > 0 else 'p'}{abs(m)}" for m in game.moves]
    turns = [protocol.turn_line(tokens, 1000, None) for _ in range(40)]
    session = "\n".join([protocol.hello_line(),
                         protocol.game_line("g1", 1, variant.describe(), {"move_ms": 1000}),
                         *turns, protocol.QUIT_LINE]) + "\n"
    out = subprocess.run(["sh", str(AWK / "bot.sh")], input=session, capture_output=True,
                         text=True, cwd=AWK, timeout=60)
    assert out.returncode == 0, out.stderr
    replies = out.stdout.splitlines()
    assert protocol.parse_hello_reply(replies[0])["name"] == "awk"
    moves = [parse_move(line.split()[1]) for line in replies[1:]]
    assert len(moves) == 40
    assert all(move > 0 and game.is_legal(move) for move in moves), moves
    assert len(set(moves)) >= 3  # random, not a fixed choice


def test_greedy_beats_awk_as_the_readme_ranks_them():
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    ladder = re.search(r"Bundled bots, weakest to strongest: (.*?)\. `mcts` and", readme).group(1)
    order = re.findall(r"`(\w+)` \(", ladder)
    assert order.index("awk") < order.index("greedy") < order.index("mcts") < order.index("alphabeta")
    out = subprocess.run(
        # a wide grace: this checks the ranking, not clocks, and a core shared with the other
        # tests can hold a bot back past the default 200 ms (a flaky failure in a full run)
        [sys.executable, "-m", "arena", "play", "greedy", "awk", "--games", "8", "--move-ms", "500",
         "--grace-ms", "10000", "--json"], capture_output=True, text=True, cwd=ROOT, timeout=300,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    records = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert len(records) == 8, out.stdout + out.stderr
    # stronger, not unbeatable: a random move sometimes makes a double threat greedy's one-move
    # look cannot stop (awk won one game of four by a line in a CI run); greedy wins about 97 of
    # 100, so 6 of 8 fails by chance about once in 700 runs, and a bot no better than awk nearly
    # always
    assert not any(r["reason"] not in ("line", "full") for r in records), records
    greedy_wins = sum(r["winner"] == "greedy" for r in records)
    assert greedy_wins >= 6, [
        (r["first"], r["winner"], r["reason"], r.get("detail"), r["moves"]) for r in records]
