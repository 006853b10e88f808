"""The jinja filters of the site's templates: the formatters of `arena.reports.render`, by name.

The site shows numbers, percentages, move times, results and timestamps exactly as the terminal
tables do; nothing here formats on its own. `{{ x|number(0, true) }}` is a signed number.
"""

from __future__ import annotations

from collections.abc import Callable

from arena.reports import render

FILTERS: dict[str, Callable[..., str]] = {
    "number": render.number,
    "count": render.count,
    "percent": render.percent,
    "points": render.points,
    "move_time": render.move_time,
    "result_text": render.result_text,
    "timestamp": render.timestamp,
    "rating": render.display_cell,  # `{{ row|rating(display) }}`: another system's column
}
