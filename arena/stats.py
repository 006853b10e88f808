"""Small descriptive statistics shared by every report (check, facts, site): one rule each."""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0 <= q <= 100) by linear interpolation between closest ranks.

    The same rule as numpy's default (`method="linear"`), so a value computed here, in pandas or
    in numpy agrees. None for no values.
    """
    if not 0 <= q <= 100:
        raise ValueError(f"percentile must be within 0..100, got {q}")
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def time_summary(values: Sequence[float]) -> dict[str, float | None]:
    """n, mean, p50, p90, p99 and max of move times (ms); None entries for no values."""
    n = len(values)
    return {
        "n": n,
        "mean": sum(values) / n if n else None,
        "p50": percentile(values, 50),
        "p90": percentile(values, 90),
        "p99": percentile(values, 99),
        "max": max(values) if n else None,
    }
