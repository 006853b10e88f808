"""The one timestamp format of the arena: ISO-8601 UTC with milliseconds and a `Z`."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now_iso() -> str:
    """Now, e.g. `2026-11-30T22:15:03.412Z` (sorts as text, parses with datetime.fromisoformat)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
