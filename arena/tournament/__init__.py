"""Tournaments: TOML files, round-robin scheduling, a parallel runner and a durable store.

Light to import: submodules are loaded on demand (`arena.tournament.store`, `.config`, ...).
"""

from __future__ import annotations

__all__ = ["config", "schedule", "runner", "store", "export", "progress", "executor", "worker",
           "thread_executor", "process_executor", "reporting", "voids"]
