"""Shared test fixtures (keep small and generic)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MISBEHAVE = ROOT / "tests" / "bots_misbehaving" / "misbehave.py"


def process_table() -> dict[int, tuple[int, str]]:
    """{pid: (parent pid, state letter)} of every process, from /proc."""
    table: dict[int, tuple[int, str]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2:].split()
        table[int(name)] = (int(fields[1]), fields[0].decode())
    return table


def descendant_pids(root: int | None = None) -> list[int]:
    """Live (non-zombie) descendants of this process, found through /proc parent links."""
    root = os.getpid() if root is None else root
    table = process_table()
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, (ppid, _) in table.items() if ppid in frontier} - found
        found |= frontier
    return sorted(pid for pid in found if table.get(pid, (0, "X"))[1] not in ("Z", "X"))


def pid_alive(pid: int) -> bool:
    """True if the process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return False
    return data[data.rfind(b")") + 2:].split()[0] not in (b"Z", b"X")


@pytest.fixture
def no_leftover_processes():
    """Fails the test if it leaves any child or grandchild process running."""
    before = set(descendant_pids())
    yield
    left = [pid for pid in descendant_pids() if pid not in before]
    assert not left, f"processes left behind: {left}"


@pytest.fixture
def misbehave_bot() -> Path:
    return MISBEHAVE
