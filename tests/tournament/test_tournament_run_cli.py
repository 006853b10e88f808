"""`arena run` end to end: a results folder belongs to one tournament file, standings cover that
file's bots only, plots only on request, and --fresh moves every old output aside."""

from __future__ import annotations

import csv
import os

from tournament_helpers import copy_bot, run_cli, stored_ids, wait_no_processes, write_toml

FILE = """
name = "t"
variants = ["classic:5x4"]
games = 2
[time]
move_ms = 2000
{bots}
"""


def bots(*names: str) -> str:
    return "\n".join(f'[[bots]]\npath = "../rb"\nname = "{n}"\nargs = ["--seed", "{i}"]'
                     for i, n in enumerate(names))


def standings_bots(results) -> set[str]:
    with open(results / "standings.csv", newline="") as handle:
        return {row["bot"] for row in csv.DictReader(handle)}


def test_a_results_folder_belongs_to_one_file(tmp_path):
    bot = copy_bot(tmp_path, "random", "rb")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = write_toml(tmp_path / "a" / "t.toml", FILE.format(bots=bots("r1", "r2", "r3")))
    copy = write_toml(tmp_path / "b" / "t.toml", FILE.format(bots=bots("r1", "r2")))
    results = tmp_path / "results" / "t"

    done = run_cli("run", str(first), "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert standings_bots(results) == {"r1", "r2", "r3"} and len(stored_ids(results)) == 6
    assert not (results / "plots").exists()  # charts are not drawn in the run's hot path
    (results / "site").mkdir()
    (results / "site" / "index.html").write_text("the old tournament")

    refused = run_cli("run", str(copy), "-q", cwd=tmp_path)
    assert refused.returncode == 1 and len(stored_ids(results)) == 6
    message = refused.stderr.strip()
    assert "\n" not in message and "Traceback" not in message
    assert f"holds the games of another tournament file ({first.resolve()})" in message
    assert "--output" in message and "--fresh" in message

    joined = run_cli("run", str(copy), "-q", "--output", str(results), "--plots", cwd=tmp_path)
    assert joined.returncode == 0, joined.stderr
    assert standings_bots(results) == {"r1", "r2"}  # the file that ran, not every stored game
    assert any((results / "plots").iterdir())
    # joining the folder did not lock the first file out, and the copy, having played here
    # once with --output, may go on without it (as a moved file must)
    again = run_cli("run", str(first), "-q", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    moved = run_cli("run", str(copy), "-q", cwd=tmp_path)
    assert moved.returncode == 0, moved.stderr

    (results / "plots" / "old.png").write_text("an old chart")
    (results / "analysis.db").write_text("the old games' analysis")  # stale after --fresh
    fresh = run_cli("run", str(copy), "-q", "--fresh", cwd=tmp_path)
    assert fresh.returncode == 0, fresh.stderr
    [backup] = results.glob("backup-*")
    # said first (it came after the last game, or after a Ctrl-C: user review)
    assert fresh.stdout.splitlines()[0] == f"Previous results moved to {backup.relative_to(tmp_path)}"
    assert (backup / "site" / "index.html").read_text() == "the old tournament"
    assert (backup / "plots" / "old.png").is_file() and (backup / "games.db").is_file()
    assert (backup / "analysis.db").is_file() and not (results / "analysis.db").exists()
    assert not (results / "site").exists() and not (results / "plots").exists()
    assert len(stored_ids(results)) == 2
    # a folder of the user's own files is not a results folder: its standings.md was replaced
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "standings.md").write_text("my own notes")
    refused = run_cli("run", str(copy), "-q", "--output", str(precious), cwd=tmp_path)
    assert refused.returncode == 1 and "\n" not in refused.stderr.strip(), refused.stderr
    assert "holds other files (standings.md) and no tournament results (games.db)" in refused.stderr
    assert (precious / "standings.md").read_text() == "my own notes"
    assert sorted(p.name for p in precious.iterdir()) == ["standings.md"]
    assert wait_no_processes(str(bot)) == []


def test_a_closed_output_stops_the_run_as_such_not_as_a_results_folder_problem(tmp_path):
    """`arena run FILE | head -2` said "cannot use results/t: [Errno 32] Broken pipe"."""
    import subprocess

    from tournament_helpers import CLI

    folder = copy_bot(tmp_path, "random", "rb").parent / "t"
    folder.mkdir()
    path = write_toml(folder / "t.toml", FILE.format(bots=bots("a", "b", "c", "d")))
    reader, writer = os.pipe()
    os.close(reader)  # no one reads: the first line written breaks the pipe
    try:
        done = subprocess.run([*CLI, "run", str(path)], cwd=folder, stdout=writer,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(writer)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "the output was closed (broken pipe); the finished games are stored" in done.stderr
    assert "cannot use" not in done.stderr
    assert wait_no_processes(str(tmp_path / "rb")) == []


RAISING_BOT = """
from arena.sdk import run_bot


def choose(turn):
    if turn.ply % 4 == 1:  # every other move of the second seat
        raise ValueError("a bug")
    return turn.game.legal_moves()[0]


run_bot(choose, name="buggy")
"""


def test_moves_played_by_the_sdks_fallback_are_pointed_out(tmp_path):
    # A bot whose move function raises plays the SDK's first legal move instead: its games
    # looked played by it, won or lost, and only the stored infos said otherwise (Kaggle user
    # review). The run's summary says how many of its moves were the fallback's.
    copy_bot(tmp_path, "random", "rb")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "buggy.py").write_text(RAISING_BOT)
    file = write_toml(tmp_path / "a" / "t.toml", FILE.format(bots=bots("r1")) +
                      '[[bots]]\npath = "buggy.py"\nname = "buggy"\n')
    done = run_cli("run", str(file), "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if "fallback" in line)
    assert line.startswith("note: buggy: ") and "moves by the SDK's fallback (its move " \
        "function raised; see its log)" in line
    assert "r1:" not in done.stdout
