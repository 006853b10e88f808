"""arena/numba_cache.py's `compile_aside`: a bot's first compile runs in a child process, so
that the bot's own search keeps the GIL; the result is machine code this process then loads."""

from __future__ import annotations

import subprocess
import sys

import pytest

from arena import numba_cache

pytest.importorskip("numba", reason="numba is a dependency: pip install -e .")

MODULE = """
import numba


@numba.njit(cache=True)
def plus_one(x):
    return x + 1
"""


def test_machine_code_is_found_beside_the_module_or_in_the_named_cache(tmp_path, monkeypatch):
    module = tmp_path / "mod.py"
    module.write_text(MODULE)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    assert not numba_cache.has_machine_code(module)
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "other.plus_one-5.py311.nbi").write_text("")
    assert not numba_cache.has_machine_code(module)  # another module's
    (tmp_path / "__pycache__" / "mod.plus_one-5.py311.nbi").write_text("")
    assert numba_cache.has_machine_code(module)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "cache" / "deep").mkdir(parents=True)
    (elsewhere / "mod.py").write_text(MODULE)
    assert not numba_cache.has_machine_code(elsewhere / "mod.py")
    (elsewhere / "cache" / "deep" / "mod.plus_one-5.py311.nbi").write_text("")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(elsewhere / "cache"))
    assert numba_cache.has_machine_code(elsewhere / "mod.py")


def test_a_module_never_compiled_is_compiled_in_a_child_and_then_only_loaded(tmp_path,
                                                                             monkeypatch):
    module = tmp_path / "mod.py"
    module.write_text(MODULE)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    assert numba_cache.compile_aside(module, "import mod; assert mod.plus_one(1) == 2")
    assert numba_cache.has_machine_code(module)
    assert not numba_cache.compile_aside(module, "raise SystemExit(3)")  # cached: nothing runs
    # a process that loads it finds the machine code: numba reports no compile of its own
    out = subprocess.run([sys.executable, "-c",
                          "import mod; mod.plus_one(1); "
                          "s = mod.plus_one.stats; "
                          "print(sum(s.cache_hits.values()), sum(s.cache_misses.values()))"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    hits, misses = out.stdout.split()
    assert (int(hits), int(misses)) == (1, 0)


def test_a_failing_compile_is_no_error(tmp_path, monkeypatch):
    module = tmp_path / "mod.py"
    module.write_text(MODULE)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    assert not numba_cache.compile_aside(module, "raise SystemExit(3)")
    assert not numba_cache.has_machine_code(module)
