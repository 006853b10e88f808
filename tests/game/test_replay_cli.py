"""`arena replay` and `arena variants` through the real command."""

from __future__ import annotations

import json
import subprocess
import sys


def arena(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from arena.cli import main; main()", *args],
        input=stdin, capture_output=True, text=True, timeout=60,
    )


def test_replay_json_reports_state_of_each_record(tmp_path):
    records = tmp_path / "games.txt"
    records.write_text("4455332\n# a comment\npopout:8x7: d4 d4 p4\nfive: d2\n")
    result = arena("replay", "--json", str(records))
    assert result.returncode == 0, result.stderr
    first, second, third = (json.loads(line) for line in result.stdout.splitlines())
    assert first["status"] == "win" and first["winner"] == 1 and first["reason"] == "line"
    assert first["to_move"] is None and first["legal"] == [] and first["plies"] == 7
    assert second["variant"] == "popout:8x7" and second["status"] == "ongoing"
    assert second["to_move"] == 2 and "p4" in second["legal"] and second["winner"] is None
    assert second["board"][-1] == "...2...." and len(second["board"]) == 7
    assert third["board"][-1] == "11......2"


def test_replay_reports_bad_moves_with_their_index_and_exits_1():
    result = arena("replay", "--json", "classic: d1 d2 p1", "-", stdin="1 2 1 2 1 2 1 3\n")
    assert result.returncode == 1
    bad_pop, after_end = (json.loads(line) for line in result.stdout.splitlines())
    assert bad_pop["ply"] == 3 and "p1" in bad_pop["error"]
    assert after_end["ply"] == 8 and "over" in after_end["error"]


def test_replay_text_uses_default_variant_and_shows_the_board():
    result = arena("replay", "--variant", "popout", "d1 d2 p1 p2")
    assert result.returncode == 0
    assert "draw (empty) after 4 plies" in result.stdout


def test_bad_variant_is_a_one_line_error():
    result = arena("replay", "--variant", "classic:99x6", "1")
    assert result.returncode == 2
    assert "columns must be between" in result.stderr and "Traceback" not in result.stderr


def test_variants_lists_presets():
    result = arena("variants")
    assert result.returncode == 0
    for name in ("classic", "popout", "five", "popout-five"):
        assert name in result.stdout
    rows = [json.loads(line) for line in arena("variants", "--json").stdout.splitlines()]
    assert {row["name"] for row in rows} == {"classic", "popout", "five", "popout-five"}


def test_import_of_the_engine_stays_light():
    heavy = "('pandas', 'matplotlib', 'click', 'numpy')"
    code = f"import sys, arena.game; print(sorted(m for m in {heavy} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "[]"
