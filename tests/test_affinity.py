"""CPU affinity: the pure parts (core choice, notes), the tournament key, the site panel, and
`arena play --affinity` end to end with a bot that reports the CPUs it may run on."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from arena import affinity
from arena.publish.context import tournament_items
from arena.tournament.config import ConfigError, load_config
from tests.conftest import ROOT

CPU_BOT = ROOT / "tests" / "bots_affinity" / "cpus.py"
CPUS = affinity.allowed_cpus()
needs_affinity = pytest.mark.skipif(not CPUS, reason="no CPU affinity on this platform")

BODY = """
name = "aff"
variants = ["classic:5x4"]
{extra}
[[bots]]
path = "random"
[[bots]]
path = "greedy"
"""


def cpu_list(cpus: list[int] | tuple[int, ...]) -> str:
    """`Cpus_allowed_list` spelling of a set of CPUs, as the test bot reports it (0-1, 0+2-3)."""
    runs: list[list[int]] = []
    for cpu in sorted(cpus):
        if runs and cpu == runs[-1][-1] + 1:
            runs[-1].append(cpu)
        else:
            runs.append([cpu])
    return "+".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def test_cores_go_round_robin_and_a_replacement_takes_the_vacated_core():
    assert [affinity.core_of(i, (0, 1)) for i in range(5)] == [0, 1, 0, 1, 0]
    assert affinity.core_of(3, ()) is None
    taken: list[int | None] = []
    for _ in range(3):
        taken.append(affinity.free_core((4, 7), taken))
    assert taken == [4, 7, 4]
    assert affinity.free_core((4, 7), [4, 4]) == 7  # the worker on 7 died: 7 is taken again
    assert affinity.free_core((), [None]) is None


def test_notes_say_when_workers_share_a_core_and_nothing_otherwise(monkeypatch):
    assert affinity.notes(False, 8, (0, 1)) == []
    if affinity.available():
        assert affinity.notes(True, 2, (0, 1)) == []
        [note] = affinity.notes(True, 3, (0, 1))
        assert "3 workers on 2 CPUs (0, 1)" in note and "round-robin" in note
    monkeypatch.delattr(os, "sched_setaffinity")
    assert not affinity.available() and affinity.allowed_cpus() == ()
    assert affinity.notes(True, 2) == [affinity.UNAVAILABLE_NOTE]
    assert affinity.pin_thread({0}) is False


@needs_affinity
def test_pinned_restores_the_threads_cpus():
    before = os.sched_getaffinity(0)
    with affinity.pinned({CPUS[-1]}) as ok:
        assert ok and os.sched_getaffinity(0) == {CPUS[-1]}
    assert os.sched_getaffinity(0) == before
    with affinity.pinned(set()) as ok:  # an impossible set: not pinned, nothing changed
        assert not ok and os.sched_getaffinity(0) == before


def test_affinity_key_is_read_stored_and_defaults_off(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(BODY.format(extra="affinity = true"))
    config = load_config(path)
    assert config.affinity is True
    assert config.settings()["affinity"] is affinity.available()
    assert "affinity" not in config.fingerprint()  # pinning does not change which games compare
    path.write_text(BODY.format(extra=""))
    assert load_config(path).affinity is False
    assert load_config(path).settings()["affinity"] is False


@pytest.mark.parametrize("value", ["1", '"yes"'])
def test_affinity_must_be_a_boolean(tmp_path, value):
    path = tmp_path / "t.toml"
    path.write_text(BODY.format(extra=f"\naffinity = {value}"))
    line = path.read_text().splitlines().index(f"affinity = {value}") + 1
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: ") and "'affinity' must be true or false" in message
    assert "\n" not in message


def test_misspelt_affinity_is_named_with_a_suggestion(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(BODY.format(extra="afinity = true"))
    with pytest.raises(ConfigError, match=r"t.toml:4: unknown key 'afinity'.*'affinity'"):
        load_config(path)


def test_site_panel_says_bots_were_pinned_only_when_they_were():
    items = dict(tournament_items({"settings": {"affinity": True}}))
    assert items["CPU affinity"].startswith("Bots pinned to cores")
    assert "CPU affinity" not in dict(tournament_items({"settings": {"affinity": False}}))
    assert tournament_items({}) == []


def play(*options: str) -> list[dict]:
    out = subprocess.run(
        [sys.executable, "-m", "arena", "play", str(CPU_BOT), str(CPU_BOT), "-v", "classic:5x4",
         "-n", "2", "--restart-every-game", "--json", *options],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


@needs_affinity
def test_play_affinity_pins_both_bots_to_one_core_and_without_it_they_are_free(
        no_leftover_processes):
    games = play("--affinity")
    assert len(games) == 2
    for game in games:  # both bots of every game on the first CPU this arena may use
        assert (game["first_version"], game["second_version"]) == (f"cpus-{CPUS[0]}",) * 2
    free = f"cpus-{cpu_list(CPUS)}"
    for game in play():
        assert (game["first_version"], game["second_version"]) == (free, free)


def test_bots_follow_their_workers_only_when_the_games_fill_the_cpus(monkeypatch):
    monkeypatch.setattr(affinity, "available", lambda: True)
    monkeypatch.setattr(affinity, "allowed_cpus", lambda: (0, 1))
    assert [affinity.follows(n) for n in (1, 2, 3)] == [False, True, True]
    monkeypatch.setattr(affinity, "available", lambda: False)
    assert not affinity.follows(8)


@needs_affinity
def test_the_current_cpu_is_one_this_arena_may_use():
    assert affinity.current_cpu() in CPUS


@needs_affinity
def test_follow_pins_every_thread_of_a_process_and_a_gone_one_is_no_error(
        no_leftover_processes):
    code = ("import threading, time\n"
            "for _ in range(3): threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
            "print('ready', flush=True); time.sleep(60)\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "ready\n"
        assert affinity.follow(child.pid, CPUS[-1])
        threads = os.listdir(f"/proc/{child.pid}/task")
        assert len(threads) == 4
        assert all(os.sched_getaffinity(int(t)) == {CPUS[-1]} for t in threads)
    finally:
        child.kill()
        child.wait()
    assert not affinity.follow(child.pid, CPUS[-1])


@needs_affinity
def test_follow_pins_the_processes_a_bot_started_too(no_leftover_processes):
    """A bot run by a wrapper that does not exec (`sh run.sh` starting its program) had only
    the wrapper pinned: its program ran free on every core against an opponent held to one."""
    code = ("import subprocess, sys, time\n"
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            "print(child.pid, flush=True); time.sleep(60)\n")
    wrapper = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    program = None
    try:
        program = int(wrapper.stdout.readline())
        assert affinity.follow(wrapper.pid, CPUS[-1])
        assert os.sched_getaffinity(program) == {CPUS[-1]}
    finally:
        if program is not None:
            os.kill(program, 9)
        wrapper.kill()
        wrapper.wait()
