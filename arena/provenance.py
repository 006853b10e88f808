"""What a reader of published results needs to reproduce them: which arena played (its version
and a hash of its code: the version string alone stays 0.1.0 across hundreds of changes), on
what machine (Python, OS, CPU, cores, the numeric libraries the ratings use), when and how (the
concurrency, a cluster). Each run of a results folder appends one such record to its store
(`runs`), and `arena run` writes them with the tournament's settings to `provenance.json`.

Standard library only, and nothing here reads the bots: bot hashes, variants, the time control,
the openings digest and the seed are the tournament's settings, stored beside these records.
"""

from __future__ import annotations

import functools
import os
import platform
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import arena

# The libraries whose versions can move the numbers: the ratings (numpy, pandas, scipy,
# trueskill), the bundled bots' compiled search (numba), the table and file handling.
PACKAGES = ("numpy", "pandas", "scipy", "trueskill", "numba", "click")

PROVENANCE_FILE = "provenance.json"


@functools.cache
def code_fingerprint() -> str:
    """This process's arena: its version and a hash of the package's .py files (read once per
    process). A cluster's workers must match the coordinator's; a run records it."""
    from arena.botspec import hash_files

    root = Path(arena.__file__).resolve().parent
    return f"{arena.__version__}/{hash_files(root, root.rglob('*.py'))[:12]}"


def _cpu_model() -> str:
    """The CPU's model name (Linux's /proc/cpuinfo; the platform's word elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                key, sep, value = line.partition(":")
                if sep and key.strip() in ("model name", "Hardware", "cpu model"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor()


def _version(package: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return ""


def machine_facts() -> dict[str, Any]:
    """The facts of this machine that a reproduction compares (no host name or user: a results
    folder is often published)."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on every platform
        usable = os.cpu_count()
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "usable_cpus": usable,
        "packages": {name: _version(name) for name in PACKAGES},
    }


def run_record(started_at: str, *, concurrency: int, cluster: bool,
               file_digest: str = "") -> dict[str, Any]:
    """One run of a results folder: when, which arena, where and how it played."""
    return {
        "started_at": started_at,
        "arena_version": arena.__version__,
        "arena_code": code_fingerprint(),
        "concurrency": int(concurrency),
        "cluster": bool(cluster),
        "file_sha256": file_digest,
        "machine": machine_facts(),
    }


def provenance(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The record of a results folder (from `store.read_settings`): the tournament's settings
    (bots with their program hashes, variants, time control, openings and their digest, seed),
    the bots as stored, and every run with its arena and machine (an older store has none)."""
    return {
        "name": settings.get("name", ""),
        "arena_version": settings.get("arena_version", ""),
        "created_at": settings.get("created_at", ""),
        "updated_at": settings.get("updated_at", ""),
        "games": settings.get("games", 0),
        "void_games": settings.get("void_games", 0),
        "scheduled_games": settings.get("scheduled_games"),
        "run_state": settings.get("run_state", ""),
        "settings": settings.get("settings", {}),
        "bots": settings.get("bots", []),
        "runs": settings.get("runs", []),
    }
