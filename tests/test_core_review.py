"""Regression tests from a review of the core (process, protocol, referee).

- the bot process is not reaped before `close()`, so its pid (= its group and session id) cannot
  be reused by another process while `close()` still signals that group;
- a forked child (tournament worker) starts with a clean process registry and becomes a
  subreaper itself, so orphans of its bots never end up as zombies of the parent;
- a `\\r\\n` line ending does not count towards the line cap;
- any whitespace separates the words of a bot line;
- `arena play` ends its bots on SIGTERM as it does on Ctrl-C.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import datetime
from pathlib import Path

import pytest

from arena import process as process_module
from arena.botspec import BotSpec, resolve_bot
from arena.game import parse_variant
from arena.process import BotExited, BotLineTooLong, BotProcess, BotTimeout
from arena.protocol import LINE_CAP, ProtocolError, parse_bot_line
from arena.referee import Player, TimeControl, play_game
from tests.conftest import MISBEHAVE, pid_alive, process_table


def _bot(code: str, cwd: Path, line_cap: int = LINE_CAP) -> BotProcess:
    process = BotProcess([sys.executable, "-c", textwrap.dedent(code)], cwd, line_cap=line_cap)
    process.start()
    return process


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2:].split()[0].decode()


def _zombie_children(pid: int) -> list[int]:
    return [child for child, (ppid, state) in process_table().items() if ppid == pid and state == "Z"]


# --- the bot's pid stays reserved until close() ----------------------------------------------

def test_exited_bot_is_not_reaped_before_close(tmp_path, no_leftover_processes):
    p = _bot("""
        import sys
        sys.stdin.readline()
        sys.exit(7)
    """, tmp_path)
    try:
        pid = p.pid
        p.send("go")
        with pytest.raises(BotExited) as info:
            p.read_line(time.monotonic() + 30)
        assert "exited with code 7" in str(info.value)
        assert p.poll() == 7 and not p.alive
        # A zombie: the pid, the id of the bot's process group and session, is still taken, so
        # close() can signal the group without hitting a process that reused the number.
        assert _state(pid) == "Z"
    finally:
        p.close()
    assert _state(pid) is None  # reaped by close()
    assert p.poll() == 7


def test_killed_bot_status_without_reaping(tmp_path, no_leftover_processes):
    p = _bot("""
        import os, signal, sys
        sys.stdin.readline()
        os.kill(os.getpid(), signal.SIGKILL)
    """, tmp_path)
    try:
        p.send("go")
        with pytest.raises(BotExited) as info:
            p.read_line(time.monotonic() + 30)
        assert "killed by SIGKILL" in str(info.value)
        assert _state(p.pid) == "Z"
    finally:
        p.close()
    assert _state(p.pid) is None


# --- fork: clean registry, own subreaper ------------------------------------------------------

def _child_plays_grandchild_bot(pidfile: str, out) -> None:
    # In the forked child: nothing of the parent's registry, not a subreaper yet.
    clean = not process_module._live_children and not process_module._subreaper_done
    spec = BotSpec("gc", [sys.executable, str(MISBEHAVE), "grandchild", "--pidfile", pidfile],
                   MISBEHAVE.parent, "h")
    with Player(spec) as a, Player(resolve_bot("random")) as b:
        play_game(parse_variant("classic"), a, b, TimeControl(move_ms=5000, startup_ms=20000))
    out.send((clean, process_module._subreaper_done))
    out.close()


def test_forked_worker_is_its_own_subreaper(tmp_path, no_leftover_processes):
    # This process becomes a subreaper with a live bot registered, then forks (as the runner does).
    holder = _bot("import sys\nsys.stdin.readline()\n", tmp_path)
    try:
        assert process_module._subreaper_done and holder.pid in process_module._live_children
        ctx = multiprocessing.get_context("fork")
        receive, send = ctx.Pipe(duplex=False)
        pidfile = str(tmp_path / "grandchild.pid")
        child = ctx.Process(target=_child_plays_grandchild_bot, args=(pidfile, send))
        child.start()
        send.close()
        assert receive.poll(120), "the child did not finish its game"
        clean, subreaper = receive.recv()
        child.join(60)
        assert child.exitcode == 0
        assert clean and subreaper
        grandchild = int(Path(pidfile).read_text())
        # The grandchild was killed and reaped by the child (its subreaper), never handed to us.
        assert _state(grandchild) is None
        assert grandchild not in _zombie_children(os.getpid())
    finally:
        holder.close()


# --- line endings and the cap -----------------------------------------------------------------

def test_crlf_line_exactly_at_cap(tmp_path, no_leftover_processes):
    cap = 32
    p = _bot(f"""
        import sys
        out = sys.stdout.buffer
        out.write(b"x" * {cap} + b"\\r\\n"); out.flush()
        sys.stdin.readline()
        out.write(b"y" * {cap} + b"\\r"); out.flush()   # the \\n comes later
        sys.stdin.readline()
        out.write(b"\\n" + b"z" * ({cap} + 1) + b"\\r\\n"); out.flush()
        sys.stdin.readline()
    """, tmp_path, line_cap=cap)
    try:
        assert p.read_line(time.monotonic() + 30) == "x" * cap
        p.send("next")
        try:  # the half line is not over the cap: at most a timeout while waiting for its end
            p.read_line(time.monotonic() + 0.3)
        except BotTimeout:
            pass
        p.send("next")
        assert p.read_line(time.monotonic() + 30) == "y" * cap
        with pytest.raises(BotLineTooLong):
            p.read_line(time.monotonic() + 30)
    finally:
        p.close()


def test_pending_lines_strip_crlf(tmp_path, no_leftover_processes):
    p = _bot("""
        import sys
        sys.stdout.write("info a\\r\\ninfo b\\n"); sys.stdout.flush()
        sys.stdin.readline()
    """, tmp_path)
    try:
        lines: list[str] = []
        deadline = time.monotonic() + 30
        while len(lines) < 2 and time.monotonic() < deadline:
            lines += p.pending_lines()
            time.sleep(0.01)
        assert lines == ["info a", "info b"]
    finally:
        p.close()


@pytest.mark.parametrize(("line", "expected"), [
    ("info\tdepth 3", ("info", "depth 3")),
    ("move\td4", ("move", "d4")),
    ("move d4   ", ("move", "d4")),
    ("  d4 \t", ("move", "d4")),
    ("info", ("info", "")),
    ("\t", ("blank", "")),
])
def test_bot_line_words_split_on_any_whitespace(line, expected):
    assert parse_bot_line(line) == expected


def test_bot_line_two_bare_words_is_not_a_move():
    with pytest.raises(ProtocolError):
        parse_bot_line("d4\td5")


# --- a whole game with CRLF, trailing spaces and an info line at the cap -----------------------

CRLF_BOT = """
import sys
from arena.game import Game, format_move, parse_move
from arena.protocol import LINE_CAP, parse_game_line, parse_turn_line
from arena.sdk import variant_from_setup

out = sys.stdout.buffer
def say(text):
    out.write(text.encode() + b"\\r\\n")
    out.flush()

variant = None
for raw in sys.stdin:
    word = raw.split(" ", 1)[0].strip()
    if word == "hello":
        say("hello name=crlf version=1   ")
    elif word == "game":
        variant = variant_from_setup(parse_game_line(raw.strip()))
    elif word == "turn":
        game = Game(variant)
        for token in parse_turn_line(raw.strip())["moves"]:
            game.push(parse_move(token))
        say("info " + "i" * (LINE_CAP - 5))  # exactly at the cap, then \\r\\n
        say("move\\t" + format_move(game.legal_moves()[0]) + "  ")
        say("info after-the-move")  # same chunk as the move: counts for the next turn
    elif word == "quit":
        break
"""


def test_game_with_crlf_bot(tmp_path, no_leftover_processes):
    path = tmp_path / "crlf.py"
    path.write_text(CRLF_BOT)
    tc = TimeControl(move_ms=None, base_ms=60000, increment_ms=100, startup_ms=20000)
    with Player(resolve_bot(str(path))) as a, Player(resolve_bot("random")) as b:
        for i, (first, second) in enumerate(((a, b), (b, a))):
            rec = play_game(parse_variant("classic"), first, second, tc, game_id=f"g{i}")
            assert rec.forfeit_by is None, rec.detail
            assert rec.reason in ("line", "full")
            seat = 1 if first is a else 2
            mine = rec.infos[seat - 1::2]
            assert all(len("".join(infos)) == 4096 for infos in mine)
            assert a.version == "1"
            # wall times of the moves fit in the game (timestamps have ms resolution)
            started = datetime.fromisoformat(rec.started_at.replace("Z", "+00:00"))
            finished = datetime.fromisoformat(rec.finished_at.replace("Z", "+00:00"))
            assert sum(rec.move_ms) <= (finished - started).total_seconds() * 1000 + 2
            assert len(json.loads(rec.to_row()["move_cpu_ms"])) == rec.plies


# --- `arena play` ends its bots on SIGTERM (and Ctrl-C) mid-move --------------------------------

SLOW_BOT = """
import os, sys, time
for line in sys.stdin:
    word = line.split(" ", 1)[0].strip()
    if word == "hello":
        print("hello name=slow", flush=True)
    elif word == "turn":
        with open(sys.argv[1] + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
        time.sleep(600)
"""


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_play_stopped_mid_move_ends_its_bots(tmp_path, sig, code):
    bot = tmp_path / "slow.py"
    bot.write_text(SLOW_BOT)
    marker = tmp_path / "moving.pid"
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "play", str(bot), "random", "--move-ms", "600000",
         "--args-a", str(marker), "--sandbox", "off"],  # the bot writes a host file
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # a shell may start background jobs with SIGINT ignored: the test wants the default
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the bot never got its turn"
            time.sleep(0.02)
        bot_pid = int(marker.read_text())
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert not pid_alive(bot_pid)  # ended (and reaped) before the command returned


def test_bot_homes_left_by_a_killed_arena_are_swept(tmp_path):
    # An arena killed with SIGKILL leaves its bots' HOME folders; the next arena removes them.
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f"arena-bot-{dead.pid}-abc"
    (stale / "cache").mkdir(parents=True)
    alive = tmp_path / f"arena-bot-{os.getpid()}-keep"
    alive.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "arena", "play", "random", "random", "--games", "1"],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert not stale.exists()
    assert alive.exists()  # its owner (this test process) is alive
    # The arena's own HOME folders are gone after a clean exit.
    assert sorted(p.name for p in tmp_path.iterdir()) == [alive.name]
