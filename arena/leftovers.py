"""Temporary folders a killed process left beside its work (a site's `.site.new-*` being built,
a submission's `.checking-*` copy): the next process that makes one there removes those older
than an hour (by their change time), which no live process still uses (a build or a check takes minutes at most)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterable
from pathlib import Path

STALE_AFTER_S = 3600.0


def remove_stale(parent: Path, prefixes: Iterable[str], older_than_s: float = STALE_AFTER_S) -> int:
    """Remove the folders in `parent` named with one of `prefixes` and not modified for
    `older_than_s` seconds; returns how many. Never follows a link; errors are ignored (a
    leftover that cannot go now goes next time)."""
    prefixes = tuple(prefixes)
    cutoff = time.time() - older_than_s
    removed = 0
    try:
        entries = list(parent.iterdir())
    except OSError:
        return 0
    for entry in entries:
        try:
            # the change time, which no copy can set back: a copy with its source's dates had
            # made a live staging folder look days old (second review)
            if (entry.name.startswith(prefixes) and not entry.is_symlink() and entry.is_dir()
                    and entry.stat().st_ctime < cutoff):
                shutil.rmtree(entry)
                removed += 1
        except OSError:
            continue
    return removed
