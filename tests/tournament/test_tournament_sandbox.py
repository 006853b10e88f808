"""The sandbox in tournaments: `sandbox`/`[limits]` in the file, per-bot limits, the stored flag
per game, the site's wording, and a hostile entrant that tries to tamper with games.db."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena import cgroup, sandbox
from arena.publish.context import sandbox_text
from arena.tournament.config import ConfigError, load_config
from arena.tournament.store import read_settings
from tests.conftest import ROOT

HOSTILE = ROOT / "tests" / "bots_hostile"
needs_bwrap = pytest.mark.skipif(not sandbox.probe().available,
                                 reason=f"sandbox unavailable: {sandbox.probe().reason}")


def tournament(tmp_path: Path, mode: str, extra_bot: str = "") -> Path:
    path = tmp_path / f"t-{mode}.toml"
    path.write_text(f"""
variants = ["classic"]
games = 2
sandbox = "{mode}"
output = "{tmp_path / ('out-' + mode)}"
[limits]
memory_mb = 768
[time]
move_ms = 500
[[bots]]
path = "random"
limits = {{ processes = 32 }}
{extra_bot}
""")
    return path


def run(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", "run", str(path)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})


def stored(out: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(f"file:{out / 'games.db'}?mode=ro", uri=True) as conn:
        return conn.execute(sql).fetchall()


def test_the_file_sets_the_mode_and_limits_per_tournament_and_per_bot(tmp_path):
    config = load_config(tournament(tmp_path, "off", '[[bots]]\npath = "greedy"'))
    assert config.sandbox.mode == "off"
    random_policy = config.sandbox.policy(config.bots[0].limits)
    greedy_policy = config.sandbox.policy(config.bots[1].limits)
    assert random_policy.limits.memory_mb == 768 and random_policy.limits.processes == 32
    assert greedy_policy.limits.processes == 64  # the default
    assert config.settings()["sandbox"] == "off"


@pytest.mark.parametrize(("text", "needle"), [
    ('sandbox = "maybe"', ":4: "),
    ('[limits]\nmemroy_mb = 5', "bad.toml:3: unknown key 'memroy_mb' in [limits]"),  # the line too
])
def test_bad_sandbox_settings_are_one_line_errors_with_the_line(tmp_path, text, needle):
    path = tmp_path / "bad.toml"
    path.write_text(f'variants = ["classic"]\n[[bots]]\npath = "random"\n{text}\n'
                    '[[bots]]\npath = "greedy"\n' if "sandbox" in text else
                    f'variants = ["classic"]\n{text}\n[[bots]]\npath = "random"\n[[bots]]\npath = "greedy"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert needle in str(caught.value) and "\n" not in str(caught.value)


@needs_bwrap
def test_a_hostile_entrant_cannot_rewrite_games_db_when_sandboxed(tmp_path, no_leftover_processes):
    attack = ('[[bots]]\nname = "tamper"\npath = "' + str(HOSTILE) + '"\nargs = ["procfd", "games.db"]')
    boxed = run(tournament(tmp_path, "on", attack))
    assert boxed.returncode == 0, boxed.stderr
    out = tmp_path / "out-on"
    assert stored(out, "SELECT DISTINCT sandboxed FROM games") == [(1,)]
    assert "hostile procfd: denied" in "".join(p.read_text() for p in (out / "logs").glob("*tamper*"))
    integrity = stored(out, "PRAGMA integrity_check")
    assert integrity == [("ok",)] and len(stored(out, "SELECT game_id FROM games")) == 2

    plain = run(tournament(tmp_path, "off", attack))
    assert plain.returncode == 0, plain.stderr
    out = tmp_path / "out-off"
    assert stored(out, "SELECT DISTINCT sandboxed FROM games") == [(0,)]
    assert "hostile procfd: ok" in "".join(p.read_text() for p in (out / "logs").glob("*tamper*"))


def test_the_site_says_how_the_bots_ran():
    assert sandbox_text({}) == ""  # results from before the sandbox
    assert sandbox_text({"sandbox": "auto", "sandboxed": True, "limits": "memory 1024 MiB"}).startswith(
        "bubblewrap: no network")
    assert "sandbox = off" in sandbox_text({"sandbox": "off", "sandboxed": False})
    assert "not available" in sandbox_text({"sandbox": "auto", "sandboxed": False})
    # the games decide (a league stores only its mode)
    assert sandbox_text({"sandbox": "auto"}, (10, 10)).startswith("bubblewrap: no network")
    assert "not available" in sandbox_text({"sandbox": "auto"}, (0, 10))
    assert "sandbox = off" in sandbox_text({"sandbox": "off"}, (0, 4))
    assert sandbox_text({"sandbox": "auto"}, (3, 10)).startswith("bubblewrap in 3 of 10 games")
    assert sandbox_text({}, (0, 0)) == ""
    assert sandbox_text({}, (0, 3)) == "none: the bots ran outside the sandbox"  # a games file
    import pandas as pd

    from arena.publish.context import games_sandboxed

    assert games_sandboxed(pd.DataFrame({"sandboxed": [1, 0, None, 1]})) == (2, 3)
    assert games_sandboxed(pd.DataFrame({"result": [1.0]})) is None


def _zombie_children() -> set[int]:
    from tests.conftest import process_table

    return {pid for pid, (ppid, state) in process_table().items() if ppid == os.getpid() and state == "Z"}


@needs_bwrap
def test_sandboxed_bots_leave_no_zombies_behind(tmp_path):
    """bwrap's init can outlive bwrap and fall to us (a subreaper): it must be reaped too."""
    from click.testing import CliRunner

    from arena.cli import main

    before = _zombie_children()
    for extra in ([], ["--restart-every-game"]):
        result = CliRunner().invoke(main, ["play", "random", "greedy", "-n", "2", "--move-ms", "200",
                                           "--sandbox", "on", *extra])
        assert result.exit_code == 0, result.output
    assert _zombie_children() - before == set()


def test_only_bundled_bots_see_the_other_bundled_bots(tmp_path):
    from arena.sandbox import BUNDLED_BOTS, SHIPPED_BOTS, Limits, build_argv

    def bound(argv, cwd):
        args = build_argv(argv, cwd, Limits())
        return {args[k + 1] for k, a in enumerate(args) if a == "--ro-bind"}

    bundled = BUNDLED_BOTS / "random"
    seen = bound([sys.executable, str(bundled / "bot.py")], bundled)
    assert {str(BUNDLED_BOTS / name) for name in SHIPPED_BOTS} <= seen
    assert str(BUNDLED_BOTS) not in seen  # folder by folder: not what else is kept in bots/
    (tmp_path / "bot.py").write_text("print('hello name=x')\n")
    submitted = bound([sys.executable, str(tmp_path / "bot.py")], tmp_path)
    assert not any(path.startswith(str(BUNDLED_BOTS)) for path in submitted)


@needs_bwrap
@pytest.mark.skipif(not cgroup.probe().available, reason=f"no memory cgroup: {cgroup.probe().reason}")
def test_an_entrant_holding_memory_outside_its_address_space_is_killed(tmp_path,
                                                                        no_leftover_processes):
    # 160 MiB in anonymous files, within every per-process limit; its cgroup caps it at 112 MiB
    hog = ('[[bots]]\nname = "hog"\npath = "' + str(HOSTILE) + '"\nargs = ["memfd", "160"]\n'
           'limits = { memory_mb = 96, tmp_mb = 16 }')
    # it takes the memory before its hello: a bot that cannot start stops the run
    done = run(tournament(tmp_path, "on", hog))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert ("did not start in 2 games: crash: during the handshake: bot hit the memory limit "
            "(killed by SIGKILL)") in done.stderr
    out = tmp_path / "out-on"
    assert stored(out, "SELECT reason FROM games") == []
    assert read_settings(out)["settings"]["memory_cgroup"] == cgroup.probe().describe()


def test_a_bot_running_a_program_outside_its_folder_gets_a_note(tmp_path):
    """`league submit` refuses it; in a tournament a folder sent in by someone could play
    another entrant's program as its own (sandbox review): the organiser is told."""
    from types import SimpleNamespace

    from arena.botspec import resolve_bot
    from arena.tournament.runner import foreign_program_notes

    victim = tmp_path / "victim"
    victim.mkdir()
    engine = victim / "engine.sh"
    engine.write_text("#!/bin/sh\n")
    engine.chmod(0o755)
    copycat = tmp_path / "copycat"
    copycat.mkdir()
    (copycat / "bot.toml").write_text(f'name = "copycat"\ncommand = "{engine}"\n')
    (victim / "bot.toml").write_text('name = "victim"\ncommand = "./engine.sh"\n')
    bots = [SimpleNamespace(name=name, spec=resolve_bot(str(tmp_path / name)))
            for name in ("victim", "copycat")]
    assert foreign_program_notes(bots) == [
        f"note: copycat runs {engine}, outside its folder (if the folder came from someone "
        "else: another entrant's program, played as theirs?)"]
    assert foreign_program_notes([SimpleNamespace(name="random", spec=resolve_bot("random"))]) == []
    # the arena's own Python by another of its names is not another entrant's program: a venv's
    # `python` beside the `python3` running the arena was noted (review as a user)
    other_name = next((p for p in Path(sys.executable).parent.glob("python*")
                       if p.resolve() == Path(sys.executable).resolve()
                       and str(p) != sys.executable), None)
    if other_name is not None:
        (copycat / "bot.toml").write_text(f'name = "copycat"\ncommand = "{other_name} x.py"\n')
        spec = resolve_bot(str(copycat))
        assert foreign_program_notes([SimpleNamespace(name="copycat", spec=spec)]) == []


@needs_bwrap
def test_commands_that_name_no_file_in_their_folder_start_in_the_sandbox(tmp_path, monkeypatch):
    """`arena play "python3 ../bots/random/bot.py" ...` from a folder beside the bots, and a
    command that names no file at all, crashed every game with `bwrap: Can't chdir to ...`: the
    sandbox made the bot's folder only around a program file inside it, and bound no program
    named outside it (review as a new user). Both play now, the first with its program bound."""
    from click.testing import CliRunner

    from arena.cli import main

    folder = tmp_path / "tournaments"
    folder.mkdir()
    shutil.copytree(ROOT / "bots" / "random", tmp_path / "mine")
    monkeypatch.chdir(folder)
    inline = ("from arena.sdk import run_bot; "
              "run_bot(lambda turn: turn.game.legal_moves()[0], name='inline')")
    for command in (f"{sys.executable} ../mine/bot.py", f"{sys.executable} -c \"{inline}\""):
        result = CliRunner().invoke(main, ["play", command, "greedy", "-n", "2", "--move-ms",
                                           "500", "--sandbox", "on"])
        assert result.exit_code == 0, result.output
        assert "forfeits" not in result.stdout and "chdir" not in result.output, result.output
    argv = sandbox.build_argv([sys.executable, "../mine/bot.py"], folder, sandbox.Limits())
    binds = [argv[k + 1] for k, a in enumerate(argv) if a == "--ro-bind"]
    assert str(tmp_path / "mine" / "bot.py") in binds and str(tmp_path / "mine") not in binds
