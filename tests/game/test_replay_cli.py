"""`arena replay` and `arena variants` through the real command."""

from __future__ import annotations

import json
import subprocess
import sys

from arena.game import PRESETS


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


def test_a_missing_file_is_not_read_as_a_record(tmp_path):
    """Issue 14 #17: an argument that looks like a path and does not exist says so."""
    for argument in ("nonexistent.txt", str(tmp_path / "games"), "dir/x"):
        result = arena("replay", argument)
        assert result.returncode == 1, argument
        assert f"{argument}: no such file" in result.stderr and "Traceback" not in result.stderr
        assert result.stdout == ""
    assert arena("replay", "4455").returncode == 0  # records still work


def test_no_argument_on_a_terminal_prints_a_hint():
    """Issue 14 #17: `arena replay` on a terminal does not wait silently for input."""
    import os
    import pty

    controller, terminal = pty.openpty()
    try:
        result = subprocess.run(
            [sys.executable, "-c", "from arena.cli import main; main()", "replay"],
            stdin=terminal, capture_output=True, text=True, timeout=60,
        )
    finally:
        os.close(controller)
        os.close(terminal)
    assert result.returncode == 2
    assert "no records given" in result.stderr and "arena replay 4453" in result.stderr


def test_variants_header_is_aligned_with_the_rows():
    """Issue 14 #26: every header label lines up with its column."""
    header, *rows = arena("variants").stdout.splitlines()[:5]
    for row in rows:
        fields = row.split()
        assert row.index(fields[1]) == header.index("size")  # left-aligned
        for label, value in zip(("connect", "pops", "fixed", "max-plies"), fields[2:6],
                                strict=True):  # right-aligned
            end = header.index(label) + len(label)
            assert row[end - len(value):end] == value, (label, row)


def test_help_and_replay_do_not_import_click_or_heavy_modules():
    """Issue 13: `arena --help` and `arena replay` start without click, pandas, numpy, ..."""
    # dataclasses (with inspect) and typing alone doubled `arena replay`'s start-up (issue 13).
    heavy = ("click", "pandas", "numpy", "matplotlib", "rich", "jinja2", "dataclasses", "typing")
    for argv in (["--help"], ["replay", "4455"], ["replay", "--json", "44"]):
        code = ("import atexit, sys\n"
                f"atexit.register(lambda: sys.stderr.write('MODULES ' + ' '.join("
                f"m for m in {heavy!r} if m in sys.modules)))\n"
                "from arena.cli import main\nmain()")
        result = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True,
                                text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert result.stderr.strip() == "MODULES", (argv, result.stderr)
    help_text = arena("--help").stdout
    assert "Commands:" in help_text and "replay" in help_text and "--version" in help_text


def test_cli_entry_point_still_works_as_a_click_group():
    from click.testing import CliRunner

    from arena.cli import main

    result = CliRunner().invoke(main, ["replay", "--json", "44"])
    assert result.exit_code == 0 and json.loads(result.output)["plies"] == 2
    assert CliRunner().invoke(main, ["--help"]).output.startswith("Usage: arena ")


# --- `arena replay`: a bad variant lists the presets; --json keys and the exit status -----------

def test_replay_bad_variant_option_lists_presets_through_the_command():
    result = arena("replay", "--variant", "classic:13", "d1")
    assert result.returncode == 2
    assert "bad size '13'" in result.stderr and ", ".join(PRESETS) in result.stderr


def test_replay_json_keys_and_exit_status():
    result = arena("replay", "--json", "popout:8x7: d4 d4 p4", "4453", "classic: d1 d8 d1")
    assert result.returncode == 1
    first, pons, bad = (json.loads(line) for line in result.stdout.splitlines())
    for key in ("variant", "plies", "status", "winner", "reason", "to_move", "legal", "board"):
        assert key in first
    assert first["variant"] == "popout:8x7" and first["plies"] == 3
    assert first["status"] == "ongoing" and first["winner"] is None and first["reason"] is None
    assert first["to_move"] == 2 and "p4" in first["legal"] and len(first["board"]) == 7
    assert pons["plies"] == 4 and pons["board"][-1] == "..211.."
    assert bad["ply"] == 2 and "d8" in bad["error"]


def test_a_pipe_given_as_a_path_is_read(tmp_path):
    # `arena replay <(...)` and /dev/stdin name pipes, not regular files: they were taken for a
    # missing file ("no such file")
    import os
    import threading

    from arena.replay_text import record_lines

    fifo = tmp_path / "records"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "w") as handle:
            handle.write("4453\n44\n")

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        assert [line for _source, line, _extra in record_lines([str(fifo)])] == ["4453", "44"]
    finally:
        writer.join(timeout=10)


def test_stored_games_replay_from_a_results_folder_and_an_exported_file(tmp_path):
    """Game ids after a results folder (or an `arena export` file) pick its games; none: all."""
    from tests.test_cli_bad_input import make_store

    results = tmp_path / "results"
    make_store(results, results=(1.0, 0.0, 0.5))  # g1, g2, g3: the same seven moves
    one = arena("replay", str(results), "g1")
    assert one.returncode == 0, one.stderr
    assert one.stdout.startswith(f"{results} g1: a vs b, 1-0 (line): classic: d1 d2 d1 d2")
    assert "player 1 wins (line) after 7 plies" in one.stdout and " g2:" not in one.stdout
    # g2 and g3 store results their moves do not end with (a hand edit): said, and exit 1
    two = arena("replay", str(results), "g2")
    assert two.returncode == 1, two.stderr
    assert two.stdout.startswith(f"{results} g2: b vs a, 0-1 (line): classic: d1 d2 d1 d2")
    assert two.stdout.rstrip().endswith("player 1 wins (line) after 7 plies\n  error: its "
                                        "stored result 0-1 (line) is not how its moves end "
                                        "(player 1 wins, line)")
    every = arena("replay", "--json", str(results))
    assert every.returncode == 1
    rows = [json.loads(line) for line in every.stdout.splitlines()]
    assert [row["game_id"] for row in rows] == ["g1", "g2", "g3"]
    assert (rows[1]["stored_result"], rows[1]["stored_reason"], rows[1]["reason"]) == (
        "0-1", "line", "line")
    assert "stored_mismatch" not in rows[0] and "_score" not in rows[0]
    assert rows[2]["stored_mismatch"].startswith("its stored result ½-½ (line) is not how")
    exported = tmp_path / "games.jsonl"
    assert arena("export", str(results), "--format", "jsonl", "-o", str(exported)).returncode == 0
    picked = arena("replay", "--json", str(exported), "g3")
    assert [json.loads(line)["game_id"] for line in picked.stdout.splitlines()] == ["g3"]
    missing = arena("replay", str(results), "g9")
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr.strip() == (f"Error: no game g9 in {results} (the ids are in "
                                      "`arena export` and on the published site)")
    # after a results folder, whatever is not a file is an id, not a record of moves: these
    # printed every game, then a board (review as a new user)
    for wrong in ("nosuchid", "5"):
        missing = arena("replay", str(results), wrong)
        assert missing.returncode == 1 and missing.stdout == "", missing.stdout
        assert missing.stderr.startswith(f"Error: no game {wrong} in {results} ")
    # a store whose results are its moves': the exit status is the records' own
    clean = tmp_path / "clean"
    make_store(clean, results=(1.0, 1.0, 1.0))
    piped = arena("replay", str(clean), "-", stdin="4453\n")  # `-` is still standard input
    assert piped.returncode == 0 and "stdin:1: 4453" in piped.stdout, piped.stderr
    gone = arena("replay", str(results), "nodir/x.txt")  # and a path still a missing file
    assert gone.returncode == 1 and "nodir/x.txt: no such file" in gone.stderr, gone.stderr
    before = arena("replay", "4453", str(clean))  # before one, a record stays a record
    assert before.returncode == 0 and before.stdout.startswith("record: 4453"), before.stdout


def test_any_stored_id_picks_its_game_and_a_file_without_moves_says_so(tmp_path):
    """League ids (P0000001-2) and the row numbers of a games file without ids were replayed
    as records ("malformed move"); a file of first,second,result replayed empty variants."""
    from arena.tournament.store import Store

    league = tmp_path / "league"
    with Store(league) as store:
        for k in (1, 2):
            store.add_game({"game_id": f"P0000001-{k}", "variant": "classic", "first": "a@1",
                            "second": "b@1", "result": 1.0, "reason": "line", "plies": 7,
                            "moves": "d1 d2 d1 d2 d1 d2 d1"}, pair_id="P0000001")
    picked = arena("replay", "--json", str(league), "P0000001-2")
    assert picked.returncode == 0, picked.stderr
    assert [json.loads(line)["game_id"] for line in picked.stdout.splitlines()] == ["P0000001-2"]
    plain = tmp_path / "games.csv"
    plain.write_text("first,second,result,moves\na,b,1,d1 d2 d1 d2 d1 d2 d1\nb,a,0,4455\n")
    second = arena("replay", "--json", str(plain), "2")
    assert [json.loads(line)["moves"] for line in second.stdout.splitlines()] == [
        ["d4", "d4", "d5", "d5"]]
    bare = tmp_path / "bare.csv"
    bare.write_text("first,second,result\na,b,1\n")
    refused = arena("replay", str(bare))
    assert refused.returncode == 1 and refused.stderr.strip() == (
        f"Error: {bare}: no moves stored, nothing to replay (a games file of first,second,result "
        "rates games but cannot show them)")


def test_standard_input_is_read_up_to_the_cap_like_any_pipe(tmp_path):
    # `arena replay - < /dev/zero` read until the memory ran out, then a MemoryError traceback
    with open("/dev/zero", "rb") as zero:
        done = subprocess.run([sys.executable, "-c", "from arena.cli import main; main()",
                               "replay", "-"], stdin=zero, capture_output=True, text=True,
                              timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip() == "Error: standard input: more than 64 MiB of records"
    assert "Traceback" not in done.stderr


def test_a_json_array_of_games_replays_as_standings_read_it(tmp_path):
    # standings and publish read a JSON array of games; replay read its name as a record
    games = tmp_path / "g.json"
    games.write_text('[{"game_id": "g1", "first": "a", "second": "b", "result": 1, '
                     '"moves": "d1 d2 d1 d2 d1 d2 d1", "variant": "classic"}]\n')
    done = arena("replay", str(games), "g1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("player 1 wins (line) after 7 plies")
