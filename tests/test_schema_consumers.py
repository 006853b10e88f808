"""Everything that lists games-table columns takes them from arena.schema: GameRecord rows,
`arena play --json` and `arena export`."""

from __future__ import annotations

import json

from arena.commands.play import _game_dict
from arena.referee import GameRecord
from arena.schema import FRAME_COLUMNS, STORED_COLUMNS
from arena.tournament.export import write_games

# What the store adds to a referee's row: the finishing order and the seat-swapped pair.
ASSIGNED_BY_THE_STORE = {"seq", "pair_id"}


def record() -> GameRecord:
    return GameRecord("g1", "classic", "a", "b", result=1.0, winner=1, reason="line", plies=3,
                      moves=["d4", "d5", "d4"], opening=["d4"], move_ms=[0.0, 1.5, 2.0],
                      move_cpu_ms=[0.0, 1.0, 1.0], time_control={"move_ms": 100},
                      infos=[[], ["depth 3", "depth 4 score 1"], ["x" * 300]])


def test_a_game_record_row_has_the_schema_columns_the_game_knows():
    row = record().to_row()
    assert list(row) == [*(c for c in FRAME_COLUMNS if c not in ASSIGNED_BY_THE_STORE), "infos"]
    assert row["moves"] == "d4 d5 d4" and json.loads(row["move_ms"]) == [0.0, 1.5, 2.0]
    # the last info line of each ply, cut short (PROTOCOL.md said it was stored: it was not)
    assert json.loads(row["infos"]) == ["", "depth 4 score 1", "x" * 200]


def test_play_json_has_every_column_of_a_game_and_its_own_fields():
    game = json.loads(json.dumps(_game_dict(record())))
    assert set(game) == set(GameRecord.ROW_COLUMNS) | {"winner_seat", "void", "time_control",
                                                       "infos"}
    assert game["infos"][1] == "depth 4 score 1"
    assert game["winner"] == "a" and game["winner_seat"] == 1  # the name, as before
    assert game["moves"] == ["d4", "d5", "d4"] and game["time_control"] == {"move_ms": 100}


def test_export_writes_the_stored_columns_in_schema_order():
    class Out:
        text = ""

        def write(self, chunk: str) -> None:
            self.text += chunk

    out = Out()
    assert write_games([{**record().to_row(), "seq": 1, "round": None}], "jsonl", out) == 1
    exported = json.loads(out.text)
    assert list(exported) == list(STORED_COLUMNS)
    # lists and time controls as JSON values, not JSON text inside the JSON (Kaggle user review)
    from arena.schema import JSON_COLUMNS

    assert JSON_COLUMNS == {"move_ms", "move_cpu_ms", "first_tc", "second_tc", "infos"}
    assert all(isinstance(exported[name], list) for name in ("move_ms", "move_cpu_ms", "infos"))
    assert all(isinstance(exported[name], dict | None) for name in ("first_tc", "second_tc"))


def test_a_gap_in_the_move_times_keeps_every_later_move_with_its_seat():
    """The standings' move times, a bot page's and the replay viewer's read `move_ms` through
    one parser: the bot page dropped a gap before splitting by seat, which gave seat 2 the
    first player's later moves (review of the seams)."""
    import pandas as pd

    from arena.publish.context import bot_context
    from arena.publish.replay import replay_frames
    from arena.ratings.facts import move_times
    from arena.schema import ply_times

    raw = "[10, null, 30, 40, 50]"
    assert ply_times(raw) == [10.0, None, 30.0, 40.0, 50.0]
    assert ply_times('[1, "x", true, Infinity]') == [1.0, None, None, None]
    assert ply_times("not json") == [] and ply_times('{"a": 1}') == [] and ply_times(None) == []
    games = pd.DataFrame({"seq": [1], "game_id": ["g1"], "variant": ["classic"],
                          "first": ["a"], "second": ["b"], "result": [1.0], "winner": [1],
                          "reason": ["line"], "forfeit_by": [None], "plies": [5],
                          "moves": ["d1 d2 d1 d2 d1"], "move_ms": [raw]})
    times = move_times(games)
    assert list(times["a"]) == [10.0, 30.0, 50.0] and list(times["b"]) == [40.0]
    page = bot_context("b", games, {}, {}, None, None)
    summary = page["time_rows"][0]
    assert (summary["n"], summary["mean"], summary["max"]) == (1, 40.0, 40.0), summary
    frames = replay_frames("classic", "d1 d2 d1 d2 d1", raw)
    assert [f.get("ms") for f in frames["frames"][1:]] == [10.0, None, 30.0, 40.0, 50.0]



def test_move_times_leave_out_the_openings_plies():
    """The arena plays an opening's moves (recorded as 0 ms): counted as the bots' own, they
    made 40 of mcts's 551 moves on its page and pulled its mean from 54 to 50 ms (site
    review); the facts and plots counted them too."""
    import pandas as pd

    from arena.publish.context import bot_context
    from arena.ratings.facts import move_times
    from arena.schema import seat_times

    raw = "[0, 0, 30, 40, 50]"
    assert seat_times(raw, 1, "d1 d2") == [30.0, 50.0] and seat_times(raw, 2, "d1 d2") == [40.0]
    assert seat_times(raw, 1) == [0.0, 30.0, 50.0]  # no opening
    games = pd.DataFrame({"seq": [1], "game_id": ["g1"], "variant": ["classic"],
                          "first": ["a"], "second": ["b"], "result": [1.0], "winner": [1],
                          "reason": ["line"], "forfeit_by": [None], "plies": [5],
                          "moves": ["d1 d2 d1 d2 d1"], "opening": ["d1 d2"], "move_ms": [raw]})
    times = move_times(games)
    assert list(times["a"]) == [30.0, 50.0] and list(times["b"]) == [40.0]
    summary = bot_context("a", games, {}, {}, None, None)["time_rows"][0]
    assert (summary["n"], summary["mean"]) == (2, 40.0), summary


def test_the_replay_marks_the_openings_moves_as_the_arenas():
    """A replay showed the opening's moves as the bots' own, at <1 ms (site review)."""
    from arena.publish.replay import replay_frames

    frames = replay_frames("classic", "d1 d2 d1 d2 d1", "[0, 0, 30, 40, 50]", "d1 d2")["frames"]
    assert [f["opening"] for f in frames[1:]] == [True, True, False, False, False]
    assert [f["ms"] for f in frames[1:]] == [None, None, 30.0, 40.0, 50.0]


def test_a_game_page_labels_the_openings_moves(tmp_path):
    import pandas as pd

    from arena.publish.site import build_site_from_games

    games = pd.DataFrame({"seq": [1], "game_id": ["g1"], "variant": ["classic"],
                          "first": ["alpha"], "second": ["bravo"], "result": [1.0],
                          "winner": [1], "reason": ["line"], "plies": [7],
                          "moves": ["d1 d2 d1 d2 d1 d2 d1"], "opening": ["d1 d2"],
                          "move_ms": ["[0, 0, 3, 4, 5, 6, 7]"]})
    site = build_site_from_games(games, tmp_path / "site", plots=False)
    [page] = (site / "games").glob("*.html")
    text = page.read_text()
    assert text.count('title="a move of the opening, set by the arena">opening</span>') == 2


def test_a_fraction_short_of_certainty_never_reads_as_0_or_100_percent():
    """A crosstable cell said "LOS 100%" where its tooltip said 99.9% (site review)."""
    from arena.reports.render import percent

    assert (percent(0.99992), percent(0.99992, 0)) == (">99.9%", ">99%")
    assert (percent(0.00001), percent(0.00001, 0)) == ("<0.1%", "<1%")
    assert (percent(1.0), percent(0.0), percent(0.575), percent(None)) == (
        "100.0%", "0.0%", "57.5%", "-")
    from arena.reports.render import points

    assert (points(8.0), points(8.5), points(None)) == ("8", "8.5", "-")


def test_the_crosstable_shows_no_margin_where_there_is_none(tmp_path):
    """A pair with every result alike has no Elo margin: the crosstable said '+241 ± -'."""
    import pandas as pd

    from arena.publish.site import build_site_from_games

    games = pd.DataFrame({"seq": [1, 2], "game_id": ["g1", "g2"], "variant": ["classic"] * 2,
                          "first": ["alpha", "bravo"], "second": ["bravo", "alpha"],
                          "result": [1.0, 0.0], "winner": [1, 2], "reason": ["line"] * 2,
                          "plies": [7, 7], "moves": ["d1 d2 d1 d2 d1 d2 d1"] * 2})
    site = build_site_from_games(games, tmp_path / "site", plots=False)
    text = (site / "crosstable.html").read_text()
    assert "Elo difference" in text and "± -" not in text
    assert ">2/2</a>" in text and "2.0/2" not in text  # points as people write them


def test_the_leaderboards_medals_follow_the_rank_not_the_row(tmp_path):
    """Sorted by another column, the gold went to whoever was in the first row (site review);
    two bots tied for first both get it."""
    import pandas as pd

    from arena.publish.site import build_site_from_games

    games = pd.DataFrame({"seq": range(1, 7), "game_id": [f"g{k}" for k in range(6)],
                          "variant": ["classic"] * 6,
                          "first": ["b", "c", "a", "c", "b", "a"],
                          "second": ["c", "b", "c", "a", "a", "b"],
                          "result": [1.0, 0.0, 1.0, 0.0, 0.5, 0.5], "reason": ["line"] * 6,
                          "plies": [7] * 6, "moves": ["d1 d2 d1 d2 d1 d2 d1"] * 6})
    site = build_site_from_games(games, tmp_path / "site", plots=False)
    text = (site / "index.html").read_text()
    assert text.count('class="num rank rank-1"') >= 2 and 'class="num rank rank-2"' not in text


def test_a_jsonl_export_reads_back_with_its_time_controls_and_move_times(tmp_path):
    # the export's JSON values must load as the games table keeps them: a time control came
    # back as Python's repr, and every game's time control read as none (diff review)
    from arena.publish.context import game_time_text
    from arena.reports.games_io import load_games

    game = record()
    game.first_tc = game.second_tc = {"move_ms": 100, "base_ms": None, "increment_ms": 0,
                                      "startup_ms": 5000, "grace_ms": 100}
    row = {**game.to_row(), "seq": 1, "round": None}
    path = tmp_path / "games.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        write_games([row], "jsonl", out)
    loaded = load_games(path).iloc[0]
    assert json.loads(loaded["first_tc"]) == game.first_tc
    assert json.loads(loaded["move_ms"]) == [0.0, 1.5, 2.0]
    assert game_time_text(loaded) == game_time_text(row) != ""
