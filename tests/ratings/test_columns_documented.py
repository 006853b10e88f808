"""README's tables of the standings and pairs columns are exactly what the code writes: users'
scripts read these names, so a column cannot be added, renamed or dropped without the docs."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from arena.ratings.pairs import pairwise_table
from arena.ratings.standings import compute_standings
from arena.reports.render import ACCURACY_HEADERS, WHO_COLUMNS

README = Path(__file__).resolve().parents[2] / "README.md"


def documented(after: str) -> list[str]:
    """The backticked names of the first column of the README table after `after`."""
    text = README.read_text(encoding="utf-8")
    rows = []
    for line in text[text.index(after):].splitlines()[1:]:
        if rows and not line.startswith("|"):
            break
        if line.startswith("| `"):
            rows += re.findall(r"`([a-z_]+)`", line.split("|")[1])
    return rows


def test_the_standings_columns_are_documented():
    games = pd.DataFrame({"first": ["A", "B", "A", "B"], "second": ["B", "A", "B", "A"],
                          "result": [1.0, 0.5, 0.0, 1.0]})
    written = list(compute_standings(games, first_move=True).columns)
    written[2:2] = WHO_COLUMNS  # added by the commands from bot.toml, after `bot`
    written += list(ACCURACY_HEADERS)  # added after `arena analyze`
    assert sorted(documented("The columns of `--format csv`/`json`")) == sorted(written)


def test_the_pairs_columns_are_documented():
    games = pd.DataFrame({"first": ["A", "B"], "second": ["B", "A"], "result": [1.0, 0.5]})
    assert documented("and of `--pairs` (`pairs.csv`)") == list(pairwise_table(games).columns)
