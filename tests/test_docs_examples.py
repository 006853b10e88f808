"""Every example in README.md and PROTOCOL.md is legal and runs as shown.

- Move records and move lists quoted in the docs (and in `tournaments/demo.toml`'s comments) are
  replayed through the engine.
- PROTOCOL.md's example exchange is replayed line by line: each arena line is rebuilt with
  `arena.protocol` and must be identical, each bot move must be legal, each `end` must be what
  the engine says.
- Each command of the README's `sh` blocks is either run (the cheap ones) or named in `SKIPPED`
  with the reason; a command in neither fails, so a new example cannot go untested silently.
- The README's Python SDK bot is run through a short protocol session.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from arena import protocol
from arena.game import PRESETS, Game, parse_move, parse_record, parse_variant
from arena.game.replay import replay_record

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("README.md", "PROTOCOL.md")
VENV = "python3 -m venv .venv && . .venv/bin/activate"  # how the README's set-up commands start

# Commands of the README that the test does not run, each with the reason. Keys are prefixes.
SKIPPED = {
    f"{VENV} && pip install -e . && arena run tournaments/demo.toml":
        "installs the project and plays the whole demo (minutes); the venv part is run by "
        "test_readme_setup_commands_create_and_use_their_own_venv",
    f"{VENV} && pip install -e '.[dev]' && pytest":
        "is the test suite itself; .ci/run runs exactly it (test_ci_runs_exactly_the_readme_test_command)",
    "arena run tournaments/demo.toml": "plays the 200-game demo tournament (about a minute or more)",
    "arena standings results/demo": "needs the demo's results (tests/tournament cover standings)",
    "arena publish results/demo": "needs the demo's results (tests/publish cover the site)",
    "arena export results/demo": "needs the demo's results (tests/tournament cover export)",
    "arena plot results/demo": "needs the demo's results (tests/ratings cover plots)",
    "arena standings games.csv": "needs a games file the reader brings",
    "arena play alphabeta mcts": "plays up to 200 games until an SPRT decides (minutes)",
    "arena check path/to/mybot": "names the reader's own bot (tests/test_check_cli.py runs checks)",
    "arena replay games.txt": "reads a records file the reader brings (tests/game/test_replay_cli.py "
                              "replays files)",
    "arena replay results/demo": "needs the demo's results (tests/game/test_replay_cli.py "
                                 "replays a results folder and an exported file)",
    "dask scheduler": "starts a cluster scheduler (tests/tournament/test_dask_cluster.py starts one)",
    "dask worker": "starts cluster workers (tests/tournament/test_dask_cluster.py starts two)",
    "arena play perfect alphabeta": "a match at 1 s per move (tests/test_bot_perfect.py plays perfect)",
    "arena analyze results/demo": "needs the demo's results (tests/solver test analyze)",
    "arena openings --variant classic": "solves positions for seconds to minutes (tests/solver test "
                                        "openings on cheap positions)",
    "ARENA_LEAGUE_KEY=... arena league ": "a new version of the reader's own league bot "
                                          "(tests/league/test_league_cli.py submits one with "
                                          "ARENA_LEAGUE_KEY)",
    "arena league ": "a league walk-through on the reader's own bots that plays until Ctrl-C "
                     "(tests/league/test_league_cli.py runs every league command end to end)",
}

# Commands run as shown, with what their output must hold.
RUN = {
    "arena replay 4455332": lambda out: "player 1 wins (line) after 7 plies" in out,
    "arena replay --json 'popout: d1 d2 p1 p2'":
        lambda out: json.loads(out)["reason"] == "empty",
    "arena replay 'classic: d4 d4 d3' --protocol":
        lambda out: out.splitlines()[2] == ("turn ply=3 moves=d4,d4,d3 time_ms=1000 "
                                            "opponent_time_ms=- last_ms=-"),
    "arena play greedy random --variant popout --games 10 --move-ms 200":
        lambda out: re.search(r"^greedy vs random: W (\d+) D (\d+) L (\d+)", out, re.MULTILINE)
        and sum(map(int, re.search(r"W (\d+) D (\d+) L (\d+)", out).groups())) == 10,
    "arena play alphabeta greedy --games 2 --move-ms 200 --move-ms-a 50":
        lambda out: "time odds: alphabeta 50 ms/move, greedy 200 ms/move" in out
        and re.search(r"^alphabeta vs greedy: W \d+ D \d+ L \d+ \(score [\d.]+/2\)", out,
                      re.MULTILINE),
}


def read(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


def readme_commands() -> list[str]:
    commands = []
    for block in code_blocks(read("README.md"), "sh"):
        for line in block.splitlines():
            command = re.split(r"\s+#", line, maxsplit=1)[0].strip()
            if command:
                commands.append(command)
    return commands


def run_arena(command: str) -> subprocess.CompletedProcess:
    argv = shlex.split(command)
    assert argv[0] == "arena", command
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "arena", *argv[1:]], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=300)


# --- commands -------------------------------------------------------------------------------

def test_every_readme_command_is_run_or_skipped_with_a_reason():
    commands = readme_commands()
    assert len(commands) >= 10
    unknown = [c for c in commands if c not in RUN and not any(c.startswith(p) for p in SKIPPED)]
    assert not unknown, f"add these README commands to RUN or SKIPPED: {unknown}"
    stale = [p for p in SKIPPED if not any(c.startswith(p) for c in commands)]
    stale += [c for c in RUN if c not in commands]
    assert not stale, f"no longer in the README: {stale}"


@pytest.mark.parametrize("command", sorted(RUN))
def test_cheap_readme_commands_run_as_shown(command):
    out = run_arena(command)
    assert out.returncode == 0, out.stderr
    assert RUN[command](out.stdout), out.stdout


def test_arena_variants_lists_what_the_readme_table_lists():
    out = run_arena("arena variants")
    assert out.returncode == 0, out.stderr
    table = re.findall(r"^\| `([a-z-]+)` \|", read("README.md"), re.MULTILINE)
    assert table == list(PRESETS)
    for name in table:
        assert re.search(rf"^{name}\s", out.stdout, re.MULTILINE), out.stdout


def readme_setup_commands() -> list[str]:
    first_block = code_blocks(read("README.md"), "sh")[0]
    return [line.strip() for line in first_block.splitlines() if line.strip()]


def test_ci_runs_exactly_the_readme_test_command():
    test_command = next(c for c in readme_setup_commands() if c.endswith("&& pytest"))
    ci = read(".ci/run")
    commands = [line.strip() for line in ci.splitlines()
                if line.strip() and not line.strip().startswith("#")]
    assert commands[-1] == test_command
    assert "ruff check ." in commands[:-1]  # lint runs before the tests, after the install
    dev = read("README.md").split("## Development")[1]
    assert ".ci/run" in dev and "ruff check ." in dev
    packages = " ".join(line for line in ci.splitlines() if "packages+=" in line)
    for package in ("chromium", "bubblewrap"):
        assert f"packages+=({package})" in packages
    assert 'apt-get install -y -qq "${packages[@]}"' in ci
    assert subprocess.run(["bash", "-n", str(ROOT / ".ci" / "run")]).returncode == 0


def test_readme_setup_commands_create_and_use_their_own_venv(tmp_path):
    commands = readme_setup_commands()
    assert len(commands) == 2
    for command in commands:
        assert command.startswith(f"{VENV} && pip install -e ")
    # in a POSIX shell, the pip the commands run is the new environment's, never the system's
    out = subprocess.run(["sh", "-c", f"{VENV} && command -v pip && python -c 'import sys; "
                          "print(sys.prefix)'"], capture_output=True, text=True, cwd=tmp_path,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(tmp_path / ".venv" / "bin" / "pip"), str(tmp_path / ".venv")]


# --- records and move lists -----------------------------------------------------------------

RECORD = re.compile(r"^[a-z-]+(:\d+x\d+)?(,[a-z-]+=[\w-]+)*: ([dp]?\d+ ?)+$")
MOVE_LIST = re.compile(r"^([dp]\d+ )+[dp]\d+$")


def quoted(text: str) -> list[str]:
    return [span.strip("'\"") for span in re.findall(r"`([^`\n]+)`", text)]


def doc_records() -> list[tuple[str, str]]:
    found = []
    for name in (*DOCS, "tournaments/demo.toml"):
        text = read(name)
        if name.endswith(".toml"):  # only comments hold examples there
            text = "\n".join(line.split("#", 1)[1] for line in text.splitlines() if "#" in line)
        for span in quoted(text):
            span = span.removeprefix("arena replay --json ").removeprefix("arena replay ")
            if RECORD.match(span) or MOVE_LIST.match(span) or re.fullmatch(r"\d{4,}", span):
                found.append((name, span))
    return found


def test_the_docs_quote_records():
    spans = [span for _, span in doc_records()]
    for expected in ("popout:8x7: d4 d4 p4", "d4 d4 d3", "popout: d4 d4 p4"):
        assert expected in spans


@pytest.mark.parametrize(("doc", "record"), doc_records())
def test_every_quoted_record_is_legal(doc, record):
    variants = [PRESETS["classic"]]
    if doc == "tournaments/demo.toml" and ":" not in record:
        # a bare opening is played in every variant of the file
        variants = [parse_variant(v) for v in tomllib.loads(read(doc))["variants"]]
    for variant in variants:
        result = replay_record(record, variant)
        assert result.error is None, f"{doc}: {record!r} in {variant.spec}: {result.error}"


# --- PROTOCOL.md's example exchange ---------------------------------------------------------

def exchange_lines() -> list[tuple[str, str]]:
    block = next(b for b in code_blocks(read("PROTOCOL.md"), "") if "arena -> bot" in b)
    lines = []
    for raw in block.splitlines():
        if raw.strip() == "...":
            lines.append(("gap", ""))
            continue
        sender, _, text = raw.partition("   ")
        lines.append(({"arena -> bot": "arena", "bot -> arena": "bot"}[sender.strip()], text.strip()))
    return lines


def test_protocol_example_exchange_is_legal_and_what_the_arena_sends():
    lines = exchange_lines()
    assert lines[0] == ("arena", protocol.hello_line())
    assert protocol.parse_hello_reply(lines[1][1])["name"] == "mybot"
    game = seat = None
    expected_moves: list[str] | None = None  # what the next turn must list, when known
    games = ends = bot_moves = 0
    for sender, text in lines[2:]:
        word = text.split(" ", 1)[0]
        if sender == "gap":
            expected_moves = None
        elif word == "game":
            fields = dict(part.split("=", 1) for part in text.split()[1:] if "=" in part)
            variant, seat = parse_variant(fields["spec"]), int(fields["seat"])
            if "..." not in text:
                rebuilt = protocol.game_line(
                    fields["id"], seat, variant.describe(),
                    {k: int(fields[k]) for k in ("move_ms", "base_ms", "increment_ms",
                                                 "startup_ms", "grace_ms")},
                    fields["opponent"])
                assert text == rebuilt
            game, expected_moves, games = Game(variant), [], games + 1
        elif word == "turn":
            turn = protocol.parse_turn_line(text)
            assert text == protocol.turn_line(turn["moves"], turn["time_ms"],
                                              turn["opponent_time_ms"], turn["last_ms"])
            if expected_moves is not None:
                assert turn["moves"][:len(expected_moves)] == expected_moves, text
            game = Game(game.variant)
            for token in turn["moves"]:
                game.push(parse_move(token))
            assert game.outcome is None and game.to_move == seat, text
        elif word == "move":
            kind, token = protocol.parse_bot_line(text)
            assert game.is_legal(parse_move(token)), f"{text!r} after {game.moves}"
            game.push(parse_move(token))
            expected_moves = [f"{'d' if m > 0 else 'p'}{abs(m)}" for m in game.moves]
            bot_moves += 1
        elif word == "end":
            fields = dict(part.split("=", 1) for part in text.split()[1:])
            if expected_moves is not None:  # the whole game was shown: the engine agrees
                outcome = game.outcome
                result = ("draw" if outcome.winner is None else
                          "win" if outcome.winner == seat else "loss")
                assert text == protocol.end_line(result, outcome.winner, outcome.reason, game.ply)
            else:
                assert int(fields["plies"]) > game.ply
                assert fields["reason"] != "repetition" or game.variant.pops
            ends += 1
        else:
            assert word in ("info", "quit"), text
    assert (games, ends) == (2, 2) and bot_moves >= 5


def test_protocol_start_example_is_the_five_preset():
    start = "/".join(column or "-" for column in PRESETS["five"].describe()["start"])
    assert f"`five`: `{start}`" in read("PROTOCOL.md")


# --- the README's SDK bot -------------------------------------------------------------------

def test_readme_sdk_bot_answers_a_session(tmp_path):
    source = next(b for b in code_blocks(read("README.md"), "python") if "run_bot" in b)
    bot = tmp_path / "first_legal.py"
    bot.write_text(source, encoding="utf-8")
    variant = PRESETS["classic"]
    session = "\n".join([
        protocol.hello_line(),
        protocol.game_line("g1", 2, variant.describe(), {"move_ms": 1000}, "someone"),
        protocol.turn_line(["d4"], 1000, None),
        protocol.QUIT_LINE,
    ]) + "\n"
    out = subprocess.run([sys.executable, str(bot)], input=session, capture_output=True,
                         text=True, cwd=tmp_path, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    replies = out.stdout.splitlines()
    assert protocol.parse_hello_reply(replies[0])["name"] == "first-legal"
    assert replies[-1] == "move d1"


def test_readme_record_example_reads_back():
    variant, tokens = parse_record("popout:8x7: d4 d4 p4", PRESETS["classic"])
    assert variant.spec == "popout:8x7" and tokens == ["d4", "d4", "p4"]


# --- what the README says the demo and the bundled bots do ----------------------------------

NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


def test_readme_says_what_the_demo_plays():
    demo = tomllib.loads(read("tournaments/demo.toml"))
    sentence = re.search(r"The demo plays (.*?)\n\n", read("README.md"), re.DOTALL).group(1)
    sentence = " ".join(sentence.split())
    bots, variants = demo["bots"], demo["variants"]
    paths = sorted({bot["path"] for bot in bots})
    pairings = len(bots) * (len(bots) - 1) // 2
    assert sentence.startswith(f"{NUMBERS[len(bots)]} entrants, {NUMBERS[len(paths)]} of the "
                               "bundled bots"), sentence
    for path in paths:
        assert f"`{path}`" in sentence
    for bot in bots:
        if bot.get("args"):
            assert f"`{' '.join(bot['args'])}`" in sentence
    assert f"in {NUMBERS[len(variants)]} variants ({pairings * len(variants) * demo['games']} games" \
        in sentence
