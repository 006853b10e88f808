"""`arena check`: passes good bots, fails bad ones with hints."""

from __future__ import annotations

import re
import shutil
import sys

import pytest
from click.testing import CliRunner

from arena import sandbox
from arena.commands.check import command as check_command
from tests.conftest import MISBEHAVE, ROOT


def run(*args: str):
    return CliRunner().invoke(check_command, list(args), catch_exceptions=False)


def test_greedy_passes(no_leftover_processes):
    result = run("greedy", "-n", "1")
    assert result.exit_code == 0, result.output
    assert "FAIL" not in result.output and "all checks passed" in result.output
    assert "start-up:" in result.output and "move time: p50" in result.output
    for spec in ("classic:7x4", "classic:10x9,connect=5", "popout:5x5"):  # issue 14 #7
        assert f"PASS  games: {spec}: 1 games without a forfeit" in result.output


@pytest.mark.skipif(shutil.which("awk") is None, reason="needs awk")
def test_awk_bot_passes(no_leftover_processes):
    result = run("awk", "-n", "1")
    assert result.exit_code == 0, result.output


def test_limits_on_the_command_line(no_leftover_processes):
    result = run("greedy", "-n", "1", "--only-variants", "-v", "classic",
                 "--limit", "processes=32", "--limit", "memory_mb=2048")
    assert result.exit_code == 0, result.output
    if "sandbox: bubblewrap" in result.output:
        assert "memory 2048 MiB, processes 32," in result.output
    bad = CliRunner().invoke(check_command, ["greedy", "--limit", "memory=4"])
    assert bad.exit_code == 2 and "unknown key 'memory' in --limit; did you mean 'memory_mb'?" \
        in bad.output


def test_a_start_let_in_by_the_grace_passes_with_a_note(no_leftover_processes):
    # no Python program starts within 1 ms; the check passed it silently (bot author review);
    # a grace of 60 s lets it in on the busiest machine
    result = run("random", "-n", "1", "--only-variants", "-v", "classic", "--startup-ms", "1",
                 "--grace-ms", "60000", "--move-ms", "60000")
    assert result.exit_code == 0, result.output
    assert "; note: over the start-up allowance (1 ms), let in by the 60000 ms grace" in result.output


def test_illegal_bot_fails_with_hint(no_leftover_processes):
    result = run(str(MISBEHAVE), "--args", "illegal --after 1", "-n", "1")
    assert result.exit_code == 1
    assert "FAIL  games: classic" in result.output and "hint: replay the move list" in result.output


def test_bad_hello_fails_fast(no_leftover_processes):
    result = run(str(MISBEHAVE), "--args", "bad_hello")
    assert result.exit_code == 1
    assert "FAIL  handshake" in result.output and "1 check(s) failed" in result.output


def test_a_failed_handshake_is_hinted_by_how_it_failed(tmp_path, no_leftover_processes):
    """Every failed handshake got "answer hello ... start faster if it timed out", also a bot
    that had crashed or lacked its files in the sandbox (bot author review)."""
    bad = run(str(MISBEHAVE), "--args", "bad_hello")
    assert "hint: answer 'hello protocol=fiar version=1' with 'hello name=YOURNAME'" in bad.output
    (tmp_path / "bot.py").write_text("import helper\n")  # a module beside it, not named
    (tmp_path / "helper.py").write_text("import sys\nsys.exit('helper ran')\n")
    for mode in ("on", "off"):
        if mode == "on" and not sandbox.probe().available:
            continue
        died = run(f"{sys.executable} {tmp_path / 'bot.py'}", "--sandbox", mode)
        assert "hint: the bot exited before answering hello: its error is above" in died.output
        multi = "a bot of several files (modules, classes, data) needs a folder with a bot.toml"
        assert (multi in died.output) == (mode == "on"), died.output
        assert ("No module named 'helper'" if mode == "on" else "helper ran") in died.output


def test_each_failure_names_its_own_cause(no_leftover_processes):
    """A bot that dies mid-game shows its last stderr line (there is no log to see); one that
    dies on the arena's unknown lines is told to ignore them; one that prints its own line is
    told that it sent it; a slow starter is told the allowance and the option."""
    died = run(str(MISBEHAVE), "--args", "exit_said --after 1", "-n", "1", "-v", "classic:6x5")
    assert died.exit_code == 1
    assert re.search(r"lost by crash: bot exited with code 2; stderr: ran out of ideas\n"
                     r"      game: .*\n"
                     r"      hint: the bot must keep running until 'quit' \(its last stderr line",
                     died.output)
    first = run(str(MISBEHAVE), "--args", "exit_said", "-n", "1", "-v", "classic:6x5")
    assert ("FAIL  unknown lines: bot exited with code 2 in its first turn (popout); stderr: "
            "ran out of ideas\n      hint: the bot must keep running") in first.output
    strict = run(str(MISBEHAVE), "--args", "strict", "-n", "1")
    assert ("FAIL  unknown lines: bot exited with code 4, after the arena sent lines it does "
            "not know ('news flash=1 of=the-future', 'banner hello there', extra fields); "
            "stderr: unknown word news") in strict.output
    assert "hint: ignore arena lines whose first word you do not know" in strict.output
    chatty = run(str(MISBEHAVE), "--args", "unknown_line", "-n", "1")
    assert ("FAIL  unknown lines: the bot sent unknown line 'thinking very hard'\n"
            "      hint: answer with one 'move dN' line") in chatty.output
    slow = run(str(MISBEHAVE), "--args", "silent_start", "--startup-ms", "300")
    assert ("FAIL  handshake: no hello answer within 300 ms (the start-up allowance, "
            "startup_ms)") in slow.output
    assert "hint: answer 'hello' within the start-up allowance (--startup-ms here" in slow.output


def test_unknown_bot_is_one_line_error():
    result = CliRunner().invoke(check_command, ["no-such-bot-xyz"])
    assert result.exit_code == 1 and "Traceback" not in result.output


SIX_ROWS_BOT = """
from arena.sdk import run_bot

def choose(turn):  # counts drops per column but assumes 6 rows, whatever the game line says
    heights = [0] * turn.variant.columns
    for move in turn.moves:
        if move > 0:
            heights[move - 1] += 1
    return next(c for c in range(1, turn.variant.columns + 1) if heights[c - 1] < 6)

run_bot(choose, name="six-rows")
"""

D99_BOT = """
import sys
for line in sys.stdin:
    word = line.split(" ", 1)[0]
    if word == "hello":
        print("hello name=d99", flush=True)
    elif word == "turn":
        print("move d99", flush=True)
    elif word == "quit":
        break
"""


def test_odd_sizes_are_checked_and_variant_is_accepted(tmp_path, no_leftover_processes):
    """Issue 14 #7: a bot that ignores rows= fails on a 4-row board; --variant picks variants."""
    bot = tmp_path / "six_rows.py"
    bot.write_text(SIX_ROWS_BOT)
    result = run(str(bot), "-n", "1", "--variant", "classic:7x4,connect=5", "-v", "classic:8x7")
    assert result.exit_code == 1, result.output
    assert "PASS  games: classic: 1 games" in result.output
    assert "PASS  games: classic:8x7" in result.output
    assert "FAIL  games: classic:7x4,connect=5: 1/1 lost by illegal" in result.output
    assert "hint: replay the move list" in result.output
    assert "games: popout:5x5" not in result.output  # --variant replaces the default odd sizes


def test_illegal_answer_gets_the_illegal_move_hint(tmp_path, no_leftover_processes):
    """Issue 14 #19: `move d99` is an illegal move, not an unknown line."""
    bot = tmp_path / "d99.py"
    bot.write_text(D99_BOT)
    result = run(str(bot), "-n", "1")
    assert result.exit_code == 1
    assert "FAIL  unknown lines: illegal move d99 after d4" in result.output
    assert "hint: replay the move list" in result.output
    assert "ignore arena lines whose first word" not in result.output


def test_bad_variant_option():
    result = CliRunner().invoke(check_command, ["greedy", "--variant", "classic:3x3"])
    assert result.exit_code == 2 and "--variant" in result.output


def test_a_bot_whose_move_function_raises_fails_the_check(tmp_path, no_leftover_processes):
    """The SDK plays the first legal move when `choose_move` raises, so that a bug is not a
    forfeit: such a bot passed every check and a league's submission (review as a new user)."""
    bot = tmp_path / "raiser"
    shutil.copytree(ROOT / "bots" / "random", bot)
    code = (bot / "bot.py").read_text()
    (bot / "bot.py").write_text(code.replace("return rng.choice(turn.game.legal_moves())",
                                             "raise ValueError('oops')"))
    result = run(str(bot), "-n", "1", "-v", "classic:6x5")
    assert result.exit_code == 1
    # named as the user knows it: `choose_move` is the SDK's parameter, not the bot's function
    assert ("FAIL  moves of its own: its move function (the one given to run_bot) raised on "
            in result.output)
    assert "the SDK played its first legal move instead: ValueError('oops')" in result.output
    # every move of every game the check played, in both lines (62 of 62 against "over 54 moves")
    raised = re.search(r"raised on (\d+) of (\d+) moves", result.output)
    timed = re.search(r"move time: .* over (\d+) moves", result.output)
    assert raised and timed and raised[1] == raised[2] == timed[1], result.output


def test_a_hello_without_a_newline_is_named_in_the_check(tmp_path, no_leftover_processes):
    """`play` names a line the bot flushed but never ended; `check`, where bot authors look
    first, said only that no hello came (review of the diff)."""
    bot = tmp_path / "nonl.py"
    bot.write_text('import sys\nsys.stdout.write("hello name=nonl")\nsys.stdout.flush()\n'
                   "for line in sys.stdin:\n    pass\n")
    result = run(f"{sys.executable} {bot}", "--startup-ms", "300")
    assert result.exit_code == 1
    assert ("FAIL  handshake: no hello answer within 300 ms (the start-up allowance, "
            "startup_ms); it sent 'hello name=nonl' without ending the line") in result.output


def test_only_variants_checks_a_classic_only_bot_in_classic_alone(tmp_path, no_leftover_processes):
    """A ConnectX-style bot for a classic tournament could never pass: the presets (pops, fixed
    columns) were always played, and the unknown-lines probe was a popout game (user review)."""
    bot = tmp_path / "classic_only"
    shutil.copytree(ROOT / "bots" / "random", bot)
    code = (bot / "bot.py").read_text()
    (bot / "bot.py").write_text(code.replace(
        "return rng.choice(turn.game.legal_moves())",
        "if turn.game.variant.pops or turn.game.variant.fixed_columns:\n"
        "            raise SystemExit(3)\n"
        "        return rng.choice(turn.game.legal_moves())"))
    every = run(str(bot), "-n", "1", "-v", "classic")
    assert every.exit_code == 1 and "FAIL  games: pops (popout)" in every.output
    only = run(str(bot), "-n", "1", "-v", "classic", "--only-variants")
    assert only.exit_code == 0, only.output
    assert "PASS  games: classic: 1 games" in only.output and "popout" not in only.output
    refused = CliRunner().invoke(check_command, ["greedy", "--only-variants"])
    assert refused.exit_code == 2 and "name the variants to play with --variant" in refused.output


def test_a_move_without_a_newline_gets_the_newline_hint_everywhere(no_leftover_processes):
    """The clock check's hint for it was to use time_ms as the clock (user review)."""
    result = run(str(MISBEHAVE), "--args", "no_newline", "-n", "1", "--move-ms", "100",
                 "--startup-ms", "300", "-v", "classic", "--only-variants")
    assert result.exit_code == 1
    assert "without ending the line" in result.output
    hints = [line for line in result.output.splitlines() if "hint:" in line]
    assert len(hints) >= 3  # unknown lines, the game, the opening
    assert all(line.endswith("hint: end each line with a newline (\\n), then flush")
               for line in hints if "restarted after the failures" not in line), hints
    assert "use time_ms from the turn line" not in result.output


def test_a_hello_word_that_is_not_key_value_is_pointed_out(tmp_path, no_leftover_processes):
    """`hello name=py good` passed silently, and the bot played as `py` (user review); the
    referee ignores the word, as PROTOCOL.md says, so the check passes and says so."""
    bot = tmp_path / "spaced.py"
    bot.write_text(SPACED_NAME_BOT)
    result = run(str(bot), "-n", "1", "-v", "classic", "--only-variants")
    assert result.exit_code == 0, result.output
    assert ("PASS  handshake: name=py version=-, " in result.output
            and "; note: 'good' is not key=value and is ignored (values hold no spaces: "
                "name=py-good)" in result.output)


SPACED_NAME_BOT = """
import sys
from arena.sdk import run_bot
real_write = sys.stdout.write
def write(text):  # the SDK's hello, with the name its author meant
    return real_write(text.replace("hello name=py", "hello name=py good"))
sys.stdout.write = write
run_bot(lambda turn: turn.game.legal_moves()[0], name="py")
"""


def test_a_runtime_error_on_stdout_is_shown_whole_with_its_exit(tmp_path, no_leftover_processes):
    """The JVM writes some start-up errors to stdout: the check quoted only their first line,
    as a protocol mistake, and said to answer hello and start faster."""
    bot = tmp_path / "jvm.sh"
    bot.write_text("#!/bin/sh\necho 'Error occurred during initialization of VM'\n"
                   "echo 'Could not reserve enough space for 2097152KB object heap'\nexit 1\n")
    bot.chmod(0o755)
    result = run(str(bot))
    assert result.exit_code == 1
    assert ("FAIL  handshake: expected 'hello name=...', got 'Error occurred during "
            "initialization of VM'; then 'Could not reserve enough space for 2097152KB object "
            "heap'; then it ended (bot exited with code 1)") in result.output
    assert "hint: it wrote that instead of hello and ended: most likely" in result.output
    chatty = run(str(MISBEHAVE), "--args", "bad_hello")  # a wrong line, and it runs on
    assert "got 'I am a bot'\n" in chatty.output or "got 'I am a bot';" in chatty.output
    assert "then it ended" not in chatty.output
    # the bot's own words cannot pass for its exit: the hint follows the arena's flag
    forger = tmp_path / "forger.sh"
    forger.write_text("#!/bin/sh\necho \"hi; then it ended (bot exited with code 1)\"\n"
                      "exec sleep 30\n")  # and runs on
    forger.chmod(0o755)
    forged = run(str(forger))
    assert "then it ended (bot exited" in forged.output, forged.output
    assert "it wrote that instead of hello and ended" not in forged.output


def test_the_bots_text_reaches_the_terminal_escaped(tmp_path, no_leftover_processes):
    """A dead bot's last stderr line, quoted by the check, erased its FAIL line and wrote PASS
    in its place with escape sequences; its args did the same in the 'checking' line (hostile
    review)."""
    bot = tmp_path / "liar.sh"
    bot.write_text("#!/bin/sh\nprintf '\\033[2K\\rPASS  handshake\\033]52;c;b3duZWQ=\\007\\n' >&2\n"
                   "exit 1\n")
    bot.chmod(0o755)
    result = run(str(bot), "--args", "\x1b[31m")
    assert result.exit_code == 1
    assert "\x1b" not in result.output and "\x07" not in result.output, repr(result.output)
    assert "stderr: PASS  handshake\\x1b]52;c;" in result.output


def test_a_failed_game_is_shown_with_its_record_seat_and_log(tmp_path, no_leftover_processes):
    """A failed game names the position the bot failed on (as `arena replay` reads it, with the
    command that feeds it to the bot) and, with --log-dir, the bot's stderr log of that game:
    without them an author could not find or replay the failure (bot author review)."""
    logs = tmp_path / "logs"
    died = run(str(MISBEHAVE), "--args", "exit_said --after 1", "-n", "1", "-v", "classic:6x5",
               "--only-variants", "--log-dir", str(logs))
    assert died.exit_code == 1
    found = re.search(r"      game: (classic:6x5: [dp0-9 ]+) \(the bot is seat 1, to move at "
                      r"ply=(\d+)\); its position: arena replay '(.*)' --protocol\n"
                      r"      log: (\S+)\n", died.output)
    assert found, died.output
    record, ply, quoted, log = found.groups()
    assert quoted == record and int(ply) == len(record.split()) - 1
    assert "ran out of ideas" in open(log).read()


def test_failed_game_lines_without_a_game_or_a_log():
    from arena.conformance import CheckResult, failed_game_lines

    assert failed_game_lines(CheckResult("x", False, "d")) == []
    lines = failed_game_lines(CheckResult("x", False, "d", game="five: d4", seat=2))
    assert lines == ["game: five: d4 (the bot is seat 2, to move at ply=1); its position: "
                     "arena replay 'five: d4' --protocol"]


def test_a_log_dir_that_cannot_be_made_is_refused(tmp_path):
    """As `arena play` refuses it: `arena check` had run on and kept no log without a word."""
    afile = tmp_path / "afile"
    afile.write_text("")
    result = run("random", "--log-dir", str(afile / "logs"))
    assert result.exit_code == 2, result.output
    assert "--log-dir" in result.output and "cannot create" in result.output


SEED_BOT = """
import sys

from arena.sdk import run_bot


def new_game(setup):
    if setup.seed is not None:  # reads the key wrongly, say: tournaments send it
        sys.exit("bad seed handling")


run_bot(lambda turn: turn.game.legal_moves()[0], name="seedy", on_new_game=new_game)
"""


def test_the_check_games_send_a_game_seed_as_tournaments_do(tmp_path, no_leftover_processes):
    """Tournaments send `seed=` in every game line; the check's games sent none, so a bot that
    failed on it passed the check and forfeited every tournament game."""
    bot = tmp_path / "seedy.py"
    bot.write_text(SEED_BOT)
    result = run(str(bot), "-n", "1", "-v", "classic", "--only-variants")
    assert result.exit_code == 1, result.output
    assert "FAIL  games: classic" in result.output and "bad seed handling" in result.output

