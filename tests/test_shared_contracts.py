"""The leaf contracts every part imports: reasons, percentiles, timestamps, the games-table spec."""

from __future__ import annotations

import random
from datetime import datetime

import numpy as np
import pytest

from arena.clock import utc_now_iso
from arena.game import REASONS as ENGINE_REASONS
from arena.reasons import ALL_REASONS, END_REASONS, FORFEIT_REASONS, REFEREE_REASONS, Reason, is_forfeit
from arena.schema import FRAME_COLUMNS, STORED_COLUMNS, create_table_sql
from arena.stats import percentile, time_summary
from tests.conftest import ROOT


def test_reason_sets_partition_the_vocabulary():
    assert (set(END_REASONS) | set(FORFEIT_REASONS) | set(REFEREE_REASONS) | {"void"}
            == set(ALL_REASONS) == {r.value for r in Reason})
    assert not set(END_REASONS) & set(FORFEIT_REASONS)
    assert is_forfeit("timeout") and not is_forfeit("line") and not is_forfeit("void")


def test_engine_outcomes_use_the_shared_vocabulary():
    assert tuple(ENGINE_REASONS) == END_REASONS


@pytest.mark.parametrize("n", [1, 2, 3, 10, 57])
def test_percentile_agrees_with_numpy(n):
    rng = random.Random(n)
    values = [rng.uniform(0, 100) for _ in range(n)]
    for q in (0, 1, 50, 90, 99, 100):
        assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)))


def test_percentile_of_ten_values_is_interpolated():
    assert percentile(list(range(1, 11)), 90) == pytest.approx(9.1)
    assert percentile([], 50) is None
    with pytest.raises(ValueError):
        percentile([1.0], 101)
    assert time_summary([]) == {"n": 0, "mean": None, "p50": None, "p90": None, "p99": None, "max": None}
    assert time_summary([2.0, 4.0])["mean"] == 3.0


def test_timestamps_are_utc_milliseconds():
    stamp = utc_now_iso()
    assert stamp.endswith("Z") and len(stamp) == len("2026-11-30T22:15:03.412Z")
    assert datetime.fromisoformat(stamp).utcoffset().total_seconds() == 0


def test_schema_frame_columns_are_a_prefix_order_of_the_stored_ones():
    assert set(FRAME_COLUMNS) < set(STORED_COLUMNS)
    assert FRAME_COLUMNS[:3] == ("game_id", "seq", "variant")
    sql = create_table_sql()
    assert all(f"\n    {name} " in sql for name in STORED_COLUMNS)


def test_the_lazily_built_reason_enum_is_one_class_that_pickles():
    import pickle
    import subprocess
    import sys

    from arena.reasons import Reason

    assert pickle.loads(pickle.dumps(Reason.LINE)) is Reason.LINE
    assert repr(Reason.VOID) == "<Reason.VOID: 'void'>"
    # threads that ask for it first, all at once, get one class (a fresh interpreter: here it
    # is built already)
    probe = ("import threading, arena.reasons as r\n"
             "barrier = threading.Barrier(8); seen = []\n"
             "def ask():\n    barrier.wait(); seen.append(r.Reason)\n"
             "threads = [threading.Thread(target=ask) for _ in range(8)]\n"
             "[t.start() for t in threads]; [t.join() for t in threads]\n"
             "print(len({id(c) for c in seen}), seen[0] is r.Reason, 'Reason' in dir(r))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["1", "True", "True"], out.stderr


def test_who_forfeited_is_one_rule_for_live_rows_files_and_the_whole_table():
    """The progress line, a league's summary, the site and the standings' facts each worked out
    who forfeited: the site ignored a hand-written record without `forfeit_by` that the facts
    counted (review of the seams). One rule now, and the facts' vectorised form agrees."""
    import pandas as pd

    from arena.publish.context import game_rows, reason_badge
    from arena.ratings.facts import forfeits_by_bot
    from arena.reasons import forfeiter_seat

    assert forfeiter_seat("timeout", 2, 1.0) == 2 and forfeiter_seat("crash", 1.0, 0.0) == 1
    assert forfeiter_seat("timeout", None, 0.0) == 1  # no seat recorded: the loser
    assert forfeiter_seat("illegal", float("nan"), 1.0) == 2
    assert forfeiter_seat("line", None, 0.0) is None and forfeiter_seat("timeout", None, 0.5) is None
    rows = [("timeout", 2, 1.0), ("crash", None, 0.0), ("illegal", float("nan"), 1.0),
            ("line", None, 0.0)]
    games = pd.DataFrame({"game_id": ["g1", "g2", "g3", "g4"], "first": ["a", "a", "b", "b"],
                          "second": ["b", "c", "c", "a"], "reason": [r for r, _, _ in rows],
                          "forfeit_by": [f for _, f, _ in rows], "result": [x for _, _, x in rows]})
    expected = {"b": 1, "a": 1, "c": 1}
    table = forfeits_by_bot(games)
    assert table["total"].to_dict() == expected
    shown = [row for row in game_rows(games, {}) if row["forfeit"]]
    assert [row["game_id"] for row in shown] == ["g1", "g2", "g3"]
    assert reason_badge(games.iloc[1].to_dict(), None) == {"text": "crash by a", "bad": True}


def test_every_reason_has_the_sites_phrase_and_protocol_md_lists_every_reason():
    import re

    from arena import reasons

    assert set(reasons.REASON_PHRASES) == set(reasons.ALL_REASONS)
    # PROTOCOL.md's `end` section names every reason a bot can receive (all but void), and no
    # other: nothing checked it against reasons.py (review of the seams)
    text = (ROOT / "PROTOCOL.md").read_text(encoding="utf-8")
    section = text[text.index("### 4. End"):text.index("### 5. Quit")]
    reasons_text = section.split("Reasons", 1)[1].split("Then comes", 1)[0]
    listed = set(re.findall(r"`([a-z-]+)`", reasons_text))
    assert listed == set(reasons.ALL_REASONS) - {reasons.VOID}


def test_the_spec_syntax_is_said_alike_everywhere():
    # `arena variants` and the demo's comment had lost `[,rule=NAME]` (seams review)
    from arena.commands.variants import command
    from arena.game.variant import SPEC_SYNTAX, parse_variant

    for path in ("README.md", "tournaments/demo.toml"):
        assert SPEC_SYNTAX in (ROOT / path).read_text(encoding="utf-8"), path
    for text in (command.help, parse_variant.__doc__):
        assert SPEC_SYNTAX in " ".join(text.split()), text
