"""A games file's rows say what they mean or are refused with their line: a game given twice,
a winner against its result, an order or a move count that is no number, a variant that is not
one, two columns that differ only in case (review of damaged and joined games tables)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.reports.games_io import GamesFileError, first_repeat, load_games

HEADER = "game_id,seq,variant,first,second,result,winner,plies\n"
ROWS = ("g1,1,classic,A,B,1,1,7\n"
        "g2,2,classic,B,A,0,2,9\n"
        "g3,3,popout,A,B,0.5,,42\n"
        "g4,4,,B,A,*,,0\n")


def write(tmp_path, rows: str = ROWS, name: str = "g.csv", header: str = HEADER):
    path = tmp_path / name
    path.write_text(header + rows, encoding="utf-8")
    return path


def test_a_clean_file_loads(tmp_path):
    games = load_games(write(tmp_path))
    assert list(games["result"].fillna(-1)) == [1.0, 0.0, 0.5, -1]


@pytest.mark.parametrize("old, new, message", [
    ("g2,2,", "g2,inf,", r"line 3, column seq: 'inf' is not a whole number"),
    ("g2,2,", "g2,abc,", r"line 3, column seq: 'abc' is not a whole number"),
    ("g2,2,", "g2,2.5,", r"line 3, column seq: '2.5' is not a whole number"),
    (",42\n", ",-3\n", r"line 4, column plies: '-3' is not a whole number of moves"),
    (",42\n", ",inf\n", r"line 4, column plies: 'inf' is not a whole number of moves"),
    ("B,A,0,2,9", "B,A,0,1,9", r"line 3: result 0-1 but winner 1: the two columns disagree"),
    ("A,B,0.5,,42", "A,B,0.5,2,42", r"line 4: result 1/2-1/2 but winner 2"),
    ("A,B,1,1,7", "A,B,1,3,7", r"line 2, column winner: '3' is not 1 or 2"),
    ("A,B,1,1,7", "A,B,1,C,7", r"line 2, column winner: 'C' is not 1 or 2 .* or either bot's"),
    ("2,classic,B", "2,clasic,B", r"line 3, column variant: unknown preset 'clasic'.*did you mean "
                                  r"'classic'"),
])
def test_rows_that_contradict_themselves_are_refused_with_their_line(tmp_path, old, new, message):
    assert old in ROWS
    path = write(tmp_path, ROWS.replace(old, new, 1))
    with pytest.raises(GamesFileError, match=message):
        load_games(path)


def test_two_exports_joined_are_refused_not_counted_twice(tmp_path):
    # the copy doubled every bot's games and narrowed every interval, exit 0
    rows = "g1,A,B,1,d1 d2\ng2,B,A,0,d3 d4\n"
    path = write(tmp_path, rows + rows, header="game_id,first,second,result,moves\n")
    result = CliRunner().invoke(main, ["standings", str(path)])
    assert result.exit_code != 0
    assert ("line 4: the game 'g1' again, as on line 2: a game counts once (a file joined "
            "twice? remove the copy)") in result.output
    assert "Traceback" not in result.output
    # read by the careful reader (a blank line sends it there), a number written otherwise
    # is the same copy: the two readers agree (second review)
    careful = write(tmp_path, "g1,A,B,1.0,d1 d2\n , , , ,\ng1,A,B,1,d1 d2 \n",
                    header="game_id,first,second,result,moves\n")
    with pytest.raises(GamesFileError, match=r"line 4: the game 'g1' again, as on line 2"):
        load_games(careful)
    # without moves or times, a shared id cannot tell a copy from another game: not compared
    assert len(load_games(write(tmp_path, ROWS.replace("g2,2,", "g1,2,")))) == 4

def test_a_decisive_result_without_a_winner_is_read(tmp_path):
    # older stores and other tools leave the winner out: unknown, not a contradiction
    games = load_games(write(tmp_path, ROWS.replace("A,B,1,1,7", "A,B,1,,7")))
    assert games["result"].iloc[0] == 1.0


def test_two_games_that_share_an_id_are_two_games(tmp_path):
    # two `arena play` outputs joined number their games from g0001 each: rated (a site, one
    # page per id, refuses them); only a row repeated whole is a copy
    games = load_games(write(tmp_path, ROWS.replace("g2,2,", "g1,2,")))
    assert len(games) == 4


def test_the_winners_name_of_arena_play_json_is_its_seat(tmp_path):
    # `arena play --json` writes the winner's name (its seat is winner_seat): every such file
    # was refused by the seat check (diff review)
    path = tmp_path / "p.jsonl"
    path.write_text('{"game_id": "g1", "first": "a", "second": "b", "result": 0.0, '
                    '"winner": "b", "winner_seat": 2}\n'
                    '{"game_id": "g2", "first": "b", "second": "a", "result": 0.5, '
                    '"winner": null, "winner_seat": null}\n', encoding="utf-8")
    games = load_games(path)
    assert list(games["winner"].fillna(0)) == [2.0, 0.0]
    path.write_text('{"first": "a", "second": "b", "result": 1.0, "winner": "b"}\n',
                    encoding="utf-8")
    with pytest.raises(GamesFileError, match=r"line 1: result 1-0 but winner 2"):
        load_games(path)
    # bots named with numbers: the name first (a bot `2` in seat 1 won), winner_seat before all
    path.write_text('{"first": "2", "second": "1", "result": 1.0, "winner": "2"}\n'
                    '{"first": "7", "second": "42", "result": 0.0, "winner": "42"}\n'
                    '{"first": "2", "second": "1", "result": 0.0, "winner": 2}\n',
                    encoding="utf-8")
    assert list(load_games(path)["winner"]) == [1.0, 2.0, 2.0]


def test_rows_without_ids_are_not_compared(tmp_path):
    games = load_games(write(tmp_path, ",A,B,1\n,B,A,0\n", header="game_id,first,second,result\n"))
    assert len(games) == 2  # empty ids: no game is named twice


def test_variants_read_as_their_canonical_spec(tmp_path):
    # `Classic` and `classic:7x6` are classic: per-variant tables showed four variants
    path = write(tmp_path, "A,B,1,Classic\nB,A,0,classic:7x6\nA,B,1, classic\nB,A,0,\n",
                 header="first,second,result,variant\n")
    games = load_games(path)
    assert list(games["variant"]) == ["classic", "classic", "classic", ""]


def test_a_variant_the_engine_does_not_know_stays_a_label(tmp_path):
    # a plugin's rule (written canonically), another tool's name: kept (publish warns of it);
    # a name the engine would suggest a preset for, or a bad size of a known preset, refused
    path = write(tmp_path, "A,B,1,misere\nB,A,0,gomoku 15x15\n"
                           'B,A,0,"classic,rule=no-such-rule"\nA,B,1,"Classic, rule = No-Such-Rule"\n',
                 header="first,second,result,variant\n")
    assert list(load_games(path)["variant"]) == ["misere", "gomoku 15x15",
                                                 "classic,rule=no-such-rule",
                                                 "classic,rule=no-such-rule"]
    for wrong, said in (("classic:99x1", "line 2, column variant: "),
                        ("classci", "did you mean 'classic'"), ("fiv", "did you mean 'five'"),
                        ('"classic,rule="', "line 2, column variant: ")):
        path = write(tmp_path, f"A,B,1,{wrong}\n", header="first,second,result,variant\n")
        with pytest.raises(GamesFileError, match=said):
            load_games(path)


def test_json_keys_differing_in_case_are_one_line(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text('{"first":"A","second":"B","result":1}\n'
                    '{"first":"B","second":"A","Result":1}\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["standings", str(path)])
    assert result.exit_code != 0
    assert "column 'result' is given twice (as 'result' and 'Result')" in result.output
    assert "Traceback" not in result.output


def test_an_item_of_a_json_array_is_named_as_an_item(tmp_path):
    # its line in the file is not known: `line 2` pointed at the wrong line
    path = tmp_path / "g.json"
    path.write_text('[\n  {"first": "A", "second": "B", "result": 1},\n'
                    '  {"first": "B", "second": "A", "result": 7}\n]\n', encoding="utf-8")
    with pytest.raises(GamesFileError, match=r"g.json item 2, column result"):
        load_games(path)


def test_first_repeat():
    import pandas as pd

    assert first_repeat(pd.Series(["a", "b", "c"])) is None
    assert first_repeat(pd.Series(["", "", None, None])) is None
    assert first_repeat(pd.Series(["a", "b", "", "b", "a"])) == ("b", (1, 3))


@pytest.mark.parametrize("content, message", [
    (b"first;second;result\r\nA;B;1\r\n", r"s.csv line 1: the columns are separated by "
                                          r"semicolons, not commas"),
    # an Excel export with every field quoted: the csv module's words, then why
    (b'\xef\xbb\xbf"first";"second";"result"\r\n"A";"B";"1"\r\n',
     r"s.csv line 1: not a readable CSV file: .*\(the columns are separated by semicolons"),
])
def test_a_semicolon_separated_file_is_said_so(tmp_path, content, message):
    (tmp_path / "s.csv").write_bytes(content)
    pytest.raises(GamesFileError, load_games, tmp_path / "s.csv").match(message)


def test_blank_cells_are_empty_however_blank(tmp_path):
    # "  " or a tab in a number's cell was refused as no number (second review)
    path = tmp_path / "g.jsonl"
    path.write_text('{"first": "a", "second": "b", "result": 1, "plies": "  ", '
                    '"forfeit_by": "\\t", "winner": " "}\n', encoding="utf-8")
    assert len(load_games(path)) == 1


def test_a_row_cut_short_is_not_a_void_game(tmp_path):
    # `a,b` (a truncated last line) was left out as a void game, with a warning naming no line
    path = write(tmp_path, "a,b,1\na,b\n", header="first,second,result\n")
    with pytest.raises(GamesFileError, match=r"g.csv line 3: 2 fields, but the header \(line 1\) "
                                             r"names 3 columns: a row cut short\? \(a void game has its result empty"):
        load_games(path)
    # an empty result is a void game, and trailing optional fields may be left out
    games = load_games(write(tmp_path, "a,b,1,7\nb,a,0\na,b,\n",
                             header="first,second,result,plies\n"))
    assert list(games["result"].fillna(-1)) == [1.0, 0.0, -1]


@pytest.mark.parametrize("cell", ['"plies": [1]', '"winner": [1]', '"seq": {"a": 1}'])
def test_a_json_list_where_a_number_goes_is_one_line(tmp_path, cell):
    # a traceback (unhashable type: 'list') from the checks of the numbers (final read)
    path = tmp_path / "g.jsonl"
    path.write_text('{"first": "a", "second": "b", "result": 1, ' + cell + "}\n",
                    encoding="utf-8")
    with pytest.raises(GamesFileError, match=r"g.jsonl line 1, column \w+: a JSON (list|object) "
                                             r"where a single value goes"):
        load_games(path)
