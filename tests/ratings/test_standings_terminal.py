"""`arena standings` on a terminal: fits its width, footnotes wrapped, signs only where relative."""

from __future__ import annotations

import re

from click.testing import CliRunner

from arena.cli import main
from arena.reports.render import text_table
from tests.ratings.test_ratings_cli import write_games_csv


def standings(*args: str, columns: str | None) -> str:
    res = CliRunner(env={"COLUMNS": columns}).invoke(main, ["standings", *args],
                                                      catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


def test_80_columns_no_line_too_long_and_no_word_cut(tmp_path):
    csv = write_games_csv(tmp_path / "games.csv")
    out = standings(str(csv), "--sequential", "16", "--pairs", "--facts", columns="80")
    assert max(len(line) for line in out.splitlines()) <= 80
    for header in ("95% interval", "TS sigma", "mu-3s", "seq Elo*", "forfeits", "penta (0..1)",
                   "handshake", "ms p99"):
        assert header in out
    for bot in ("Strong", "Middle", "Weak", "Rookie"):  # every block repeats the bot column
        assert len(re.findall(rf"^\d+\s+{bot}\s", out, flags=re.M)) >= 2 * 3
    notes = [block for block in out.split("\n\n") if block.startswith("* ")]
    text = " ".join(" ".join(block.split()) for block in notes)
    assert "* Elo: logistic Bradley-Terry maximum likelihood over all games at once" in text
    assert "it depends on the order of the games" in text


def test_without_a_terminal_the_table_stays_whole(tmp_path):
    csv = write_games_csv(tmp_path / "games.csv")
    out = standings(str(csv), "--variant", "classic", columns=None)
    header = next(line for line in out.splitlines() if line.startswith("#"))
    assert "Elo" in header and "TS mu" in header and header.rstrip().endswith("forfeits")


def test_blocks_of_whole_columns():
    rows = [["1", "alpha", "x" * 30, "y" * 30], ["2", "beta", "z", "w"]]
    text = text_table(["#", "bot", "long one", "long two"], rows, ["r", "l", "l", "l"], width=50)
    blocks = text.split("\n\n")
    assert len(blocks) == 2 and all(max(map(len, b.splitlines())) <= 50 for b in blocks)
    assert blocks[1].splitlines()[0].split() == ["#", "bot", "long", "two"]


def test_anchored_ratings_are_absolute_and_seq_elo_has_its_footnote(tmp_path):
    csv = write_games_csv(tmp_path / "games.csv")
    out = standings(str(csv), "--variant", "classic", "--anchor", "Weak=1500", "--sequential",
                    "16", columns=None)
    rows = [line.split() for line in out.splitlines() if re.match(r"^\d+ ", line)]
    header = next(line.split("  ") for line in out.splitlines() if line.startswith("#"))
    assert rows and "seq Elo*" in " ".join(header)
    for row in rows:
        elo = row[7]
        assert not elo.startswith("+") and float(elo) > 1000, row
        interval = " ".join(row[8:10])
        assert "+" not in interval, row
        assert row[-2][0] in "+-"  # seq Elo stays relative to its start at 0
    assert any(line.startswith("* seq Elo*: sequential Elo with K=16") for line in
               out.splitlines())
    relative = standings(str(csv), "--variant", "classic", columns=None)
    assert any(line.split()[7].startswith("+") for line in relative.splitlines()
               if re.match(r"^\d+ ", line))
