"""Shared helpers for the tournament tests (not a test module)."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tests.conftest import processes_matching as processes_matching  # re-exported for the tournament tests

PROJECT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from arena.cli import main; main()"]



def copy_bot(tmp_path: Path, name: str = "random", folder: str | None = None) -> Path:
    """A private copy of a bundled bot, so that its processes can be told apart from others'."""
    target = tmp_path / (folder or f"{name}-copy")
    shutil.copytree(PROJECT / "bots" / name, target,
                    ignore=shutil.ignore_patterns("__pycache__"))
    return target


def write_toml(path: Path, body: str) -> Path:
    path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return path


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 120,
            **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, **kwargs)


def start_cli(*args: str, cwd: Path | None = None, ignored: tuple[int, ...] = ()
              ) -> subprocess.Popen:
    """Start the CLI in the background; a runner killed outright cannot remove its bots' temp
    folders, so with a `cwd` they go in a folder of it, which the test's tmp_path cleans up.
    `ignored` signals start ignored, as `nohup` leaves SIGHUP."""
    env = None
    if cwd is not None:
        (cwd / ".tmp").mkdir(exist_ok=True)
        env = {**os.environ, "TMPDIR": str(cwd / ".tmp")}

    def ignore() -> None:
        for signum in ignored:
            signal.signal(signum, signal.SIG_IGN)

    return subprocess.Popen([*CLI, *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=ignore if ignored else None)


def stored_ids(results: Path) -> list[str]:
    db = results / "games.db"
    if not db.exists():
        return []
    conn = sqlite3.connect(db, timeout=10)
    try:
        return [r[0] for r in conn.execute("SELECT game_id FROM games ORDER BY seq")]
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()


def wait_for_games(results: Path, count: int, proc: subprocess.Popen, timeout: float = 60) -> int:
    """Poll the store until it holds at least `count` games; returns how many it holds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        n = len(stored_ids(results))
        if n >= count:
            return n
        if proc.poll() is not None:
            raise AssertionError(f"runner exited early ({proc.returncode}): "
                                 f"{proc.stderr.read() if proc.stderr else ''}")
        time.sleep(0.02)
    raise AssertionError(f"fewer than {count} games stored after {timeout} s")


def wait_no_processes(text: str, timeout: float = 10) -> list[int]:
    deadline = time.monotonic() + timeout
    while True:
        left = processes_matching(text)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def runners_in(folder: Path) -> list[int]:
    """Pids of `arena` CLI processes (coordinators and their workers) running in `folder`."""
    pids = []
    for pid in processes_matching("from arena.cli import main"):
        try:
            if Path(os.readlink(f"/proc/{pid}/cwd")) == folder:
                pids.append(pid)
        except OSError:
            continue
    return pids
