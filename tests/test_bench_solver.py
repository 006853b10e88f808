"""`python bench/solver.py` runs without ../shared/reference, on the positions shipped with it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def solver_bench():
    spec = importlib.util.spec_from_file_location("bench_solver", ROOT / "bench" / "solver.py")
    module = importlib.util.module_from_spec(spec)
    saved_path = list(sys.path)
    spec.loader.exec_module(module)
    yield module
    sys.path[:] = saved_path


def test_without_the_shared_data_it_uses_the_shipped_positions(solver_bench, tmp_path, capsys,
                                                                monkeypatch):
    monkeypatch.setattr(solver_bench, "SHARED", tmp_path / "missing")
    assert solver_bench.main(["--limit", "3"]) == 0
    out, err = capsys.readouterr()
    assert "Test_L3_R1_positions: 3 count" in out and "Test_L2_R1_solved: 100.0 %" in out
    assert "Test_L3_R1_compiled_wrong: 0 count" in out and "Test_L2_R1_compiled_mean_nodes" in out
    assert "not found" in err and "bench/data/connect4" in err and len(err.splitlines()) == 1


def test_a_missing_set_is_a_one_line_error(solver_bench, tmp_path, capsys):
    assert solver_bench.main(["--reference", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: test set Test_L3_R1 not found in {tmp_path}\n"
