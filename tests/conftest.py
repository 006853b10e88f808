"""Shared test fixtures (keep small and generic)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MISBEHAVE = ROOT / "tests" / "bots_misbehaving" / "misbehave.py"
# Published reference data (solver scores, rating vectors), kept beside the project, not in it.
REFERENCE_ROOT = ROOT.parent / "shared" / "reference"
# Tables printed by `arena` fit themselves to COLUMNS when it is set, and pytest-xdist's workers
# set it to 80 (a shell may export it too): the commands under test write to pipes, and tests
# that read their tables expect the pipe's layout whatever ran the suite.
os.environ.pop("COLUMNS", None)


def pytest_configure(config: pytest.Config) -> None:
    # Dask keeps a scratch folder (lock files) in /tmp/dask-scratch-space unless told otherwise:
    # the cluster tests' schedulers, workers and `local:N` runs keep it in a folder of this
    # pytest process instead (a hook, not module code: tests import this module a second time).
    config.dask_scratch = tempfile.mkdtemp(prefix="arena-tests-dask-")
    os.environ["DASK_TEMPORARY_DIRECTORY"] = config.dask_scratch


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(getattr(config, "dask_scratch", ""), ignore_errors=True)
    # the bots' memory cgroups of arenas the tests killed outright (the next arena would)
    from arena import cgroup

    cgroup.probe()
    cgroup.sweep_stale()


def reference_path(*parts: str) -> Path:
    """A file or folder of ../shared/reference; without it the calling test skips, or fails in CI.

    CI (the environment variable CI is "true") must not pass by skipping the checks against the
    reference data, so there a missing path is a failure that says where the data was looked for.
    """
    path = REFERENCE_ROOT.joinpath(*parts)
    if not path.exists():
        message = f"reference data not found at {path} (../shared/reference)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}; CI=true requires it", pytrace=False)
        pytest.skip(message)
    return path


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


def process_state(pid: int) -> str | None:
    """The process's state letter from /proc (``Z`` for a zombie), None once it is reaped."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2:].split()[0].decode()


def pid_alive(pid: int) -> bool:
    """True if the process exists and is not a zombie."""
    return process_state(pid) not in (None, "Z", "X")


def processes_matching(text: str) -> list[int]:
    """Pids whose command line contains `text` (zombies excluded)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{entry}/stat") as handle:
                state = handle.read().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            pids.append(int(entry))
    return pids


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
