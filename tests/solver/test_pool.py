"""The solver pool: results in the tasks' order, a bounded queue, and a stop that ends it."""

from __future__ import annotations

import time
from pathlib import Path

from arena.solver.pool import AHEAD, in_order


def _mark_and_wait(task: tuple[str, int]) -> int:
    folder, number = task
    (Path(folder) / str(number)).touch()  # the task started
    time.sleep(0.2 if number % 3 else 0.4)  # some finish out of order
    return number


def test_results_come_in_order_and_a_close_runs_no_queued_task(tmp_path, no_leftover_processes):
    results = in_order(_mark_and_wait, [(str(tmp_path), n) for n in range(40)], 2)
    assert [next(results) for _ in range(5)] == [0, 1, 2, 3, 4]
    results.close()
    started = len(list(tmp_path.iterdir()))
    # taken, plus what the two processes ran and had queued: not the 40 submitted at once
    assert 5 <= started <= 5 + 2 * (1 + AHEAD), started


def test_one_process_runs_in_this_one(tmp_path):
    results = in_order(_mark_and_wait, [(str(tmp_path), n) for n in range(3)], 1)
    assert list(results) == [0, 1, 2]
