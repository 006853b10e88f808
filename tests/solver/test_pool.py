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


class CountedTasks(list):
    """A task list that counts how many tasks the pool has taken from it."""

    taken = 0

    def __iter__(self):
        for task in super().__iter__():
            self.taken += 1
            yield task


def test_results_come_in_order_from_a_bounded_queue_and_a_close_ends_it(tmp_path,
                                                                       no_leftover_processes):
    tasks = CountedTasks((str(tmp_path), n) for n in range(40))
    results = in_order(_mark_and_wait, tasks, 2)
    queued = 2 * (1 + AHEAD)  # each process's task, and AHEAD more each
    assert tasks.taken == queued  # not the 40 at once: a stop would have run them all
    assert [next(results) for _ in range(5)] == [0, 1, 2, 3, 4]
    assert tasks.taken == 5 + queued
    results.close()
    assert len(list(tmp_path.iterdir())) <= 5 + queued  # nothing started after the close


def test_one_process_runs_in_this_one(tmp_path):
    results = in_order(_mark_and_wait, [(str(tmp_path), n) for n in range(3)], 1)
    assert list(results) == [0, 1, 2]
