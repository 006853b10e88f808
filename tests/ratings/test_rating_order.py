"""The order-dependent ratings (TrueSkill, sequential Elo) read a tournament's games in schedule
order, so the same games give the same numbers whatever order they finished in (concurrency,
a resume, another machine), from the store and from its exported files alike."""

from __future__ import annotations

import numpy as np
import pandas as pd

from arena.ratings.standings import compute_standings
from arena.ratings.table import SCHEDULE_ORDER, SEQ_ORDER, CodedGames, in_rating_order
from arena.reports.games_io import load_games
from arena.tournament.export import export_games
from arena.tournament.store import Store
from arena.tournament.store import load_games as store_load

BOTS = ("ant", "bee", "cat", "dog")


def tournament(rounds: int = 6, seed: int = 5) -> pd.DataFrame:
    """A round-robin's games with rounds and ids, results drawn at random, in schedule order."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(rounds):
        for i, a in enumerate(BOTS):
            for b in BOTS[i + 1:]:
                for first, second in ((a, b), (b, a)):
                    rows.append({"game_id": f"g{rng.integers(1 << 40):010x}", "round": k,
                                 "first": first, "second": second, "variant": "classic",
                                 "result": float(rng.choice([0.0, 0.5, 1.0], p=[.4, .2, .4]))})
    games = pd.DataFrame(rows)
    games["seq"] = np.arange(1, len(games) + 1)
    return games


def finished_in_another_order(games: pd.DataFrame, seed: int) -> pd.DataFrame:
    """The same games as another run stores them: another finish order, so other `seq`s."""
    shuffled = games.sample(frac=1, random_state=seed).reset_index(drop=True)
    return shuffled.assign(seq=np.arange(1, len(shuffled) + 1))


def order_dependent(games: pd.DataFrame) -> pd.DataFrame:
    table = compute_standings(games, sequential_k=16)
    return table.set_index("bot")[["ts_mu", "ts_sigma", "ts_conservative", "elo_seq", "elo"]]


def test_trueskill_and_sequential_elo_do_not_depend_on_the_finish_order():
    games = tournament()
    expected = order_dependent(games)
    for seed in range(3):
        pd.testing.assert_frame_equal(order_dependent(finished_in_another_order(games, seed)),
                                      expected, check_exact=True)


def test_the_note_says_which_order_was_read():
    games = tournament(rounds=2)
    notes = " ".join(compute_standings(games).attrs["notes"])
    assert "games in schedule order (round, then game id)" in notes
    notes = " ".join(compute_standings(games.drop(columns="round")).attrs["notes"])
    assert "games in seq order" in notes


def test_games_without_a_round_keep_their_seq_order():
    """A games file of another tool (or `arena play`, or a league) has no schedule: its order
    is its seq, as before (a chronological file keeps its meaning)."""
    games = tournament(rounds=2)
    no_round = games.drop(columns="round")
    assert CodedGames.from_frame(no_round).order == SEQ_ORDER
    reordered = no_round.assign(seq=no_round["seq"].to_numpy()[::-1])
    assert in_rating_order(reordered)["game_id"].tolist() == no_round["game_id"].tolist()[::-1]
    partly = games.assign(round=games["round"].astype(float).where(games.index > 0))
    assert CodedGames.from_frame(partly).order == SEQ_ORDER  # one game without a round


def test_schedule_order_is_round_then_game_id_and_ties_keep_seq():
    games = pd.DataFrame({"game_id": ["gb", "ga", "gc", "ga"], "round": [1, 1, 0, 1],
                          "first": ["x"] * 4, "second": ["y"] * 4, "result": [1.0] * 4,
                          "seq": [1, 2, 3, 4]})
    ordered = in_rating_order(games)
    assert ordered["seq"].tolist() == [3, 2, 4, 1]
    assert CodedGames.from_frame(games).order == SCHEDULE_ORDER


def _store_of(folder, games: pd.DataFrame) -> None:
    with Store(folder) as store:
        store.save_settings({"name": "t", "variants": ["classic"]},
                            {"time_control": {"move_ms": 100}, "openings_digest": "",
                             "seed": None, "bots": {}})
        for row in games.to_dict("records"):
            rnd = int(row.pop("round"))
            row.pop("seq")
            seat = 1 if row["result"] == 1.0 else 2 if row["result"] == 0.0 else None
            store.add_game({**row, "winner": seat, "reason": "line", "plies": 7}, round=rnd)


def test_a_store_and_its_exports_rate_alike_whatever_the_finish_order(tmp_path):
    games = tournament(rounds=3)
    _store_of(tmp_path / "one", games)
    _store_of(tmp_path / "two", finished_in_another_order(games, 1))
    assert "round" not in store_load(tmp_path / "one").columns  # the frame contract stands
    assert "round" in store_load(tmp_path / "one", extra=("round",)).columns
    expected = order_dependent(load_games(tmp_path / "one"))
    pd.testing.assert_frame_equal(order_dependent(load_games(tmp_path / "two")), expected,
                                  check_exact=True)
    for fmt in ("csv", "jsonl"):
        out = tmp_path / f"games.{fmt}"
        export_games(tmp_path / "two", fmt, out)
        pd.testing.assert_frame_equal(order_dependent(load_games(out)), expected,
                                      check_exact=True)
