"""`arena export` files read back as the store reads: the same values, and the schema's numeric
dtypes (a file without a draw had read `winner` as int64, the store float64)."""

from __future__ import annotations

import pandas as pd
from test_rating_order import _store_of, tournament

from arena.reports.games_io import load_games
from arena.schema import COLUMNS_BY_NAME, FRAME_COLUMNS, RATING_ORDER_COLUMNS
from arena.tournament.export import export_games


def test_exports_read_back_with_the_store_s_values_and_numeric_dtypes(tmp_path):
    games = tournament(rounds=2)
    games = games.assign(result=games["result"].replace(0.5, 1.0))  # no draw: winner all 1 or 2
    _store_of(tmp_path / "r", games)
    stored = load_games(tmp_path / "r")
    columns = [*FRAME_COLUMNS, *RATING_ORDER_COLUMNS]
    for fmt in ("csv", "jsonl"):
        out = tmp_path / f"games.{fmt}"
        export_games(tmp_path / "r", fmt, out)
        read = load_games(out)
        for column in columns:
            if COLUMNS_BY_NAME[column].dtype != "string":
                assert read[column].dtype == stored[column].dtype == COLUMNS_BY_NAME[
                    column].dtype, (fmt, column)
            left = stored[column].astype(object).where(stored[column].notna(), None).tolist()
            right = read[column].astype(object).where(read[column].notna(), None).tolist()
            assert left == right, (fmt, column)
        pd.testing.assert_series_equal(read["seq"], stored["seq"], check_names=False)
