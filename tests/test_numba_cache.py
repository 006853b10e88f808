"""arena/numba_cache.py's `compile_aside`: a bot's compile runs in a child process, so that the
bot's own search keeps the GIL; this process then only loads the machine code, wherever numba
keeps it (beside the module, or a private folder in the sandbox)."""

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
COMPILE = "import mod; assert mod.plus_one(1) == 2"
# compile aside, then load: numba's own count of cache hits and compiles in this process
ASIDE_THEN_LOAD = """
from arena import numba_cache
{patch}
ran = numba_cache.compile_aside("mod.py", {compile!r})
import mod
mod.plus_one(1)
stats = mod.plus_one.stats
print(ran, sum(stats.cache_hits.values()), sum(stats.cache_misses.values()))
"""


def aside_then_load(folder, env, patch="", argv_wrap=None) -> tuple[str, int, int]:
    code = ASIDE_THEN_LOAD.format(patch=patch, compile=COMPILE)
    argv = [sys.executable, "-c", code]
    if argv_wrap is not None:
        argv, env = argv_wrap(argv, env)
    out = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    ran, hits, misses = out.stdout.split()
    return ran, int(hits), int(misses)


@pytest.fixture
def module(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "mod.py").write_text(MODULE)
    return folder / "mod.py"


def test_compiled_beside_the_module_in_a_child_stamped_and_then_only_loaded(module, tmp_path):
    env = {"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path)}
    assert aside_then_load(module.parent, env) == ("True", 1, 0)  # loaded, not compiled here
    assert numba_cache.is_warm(module)
    assert not numba_cache.compile_aside(module, "raise SystemExit(3)")  # fresh: nothing runs
    module.write_text(MODULE + "# an edit\n")  # stale: compiled again, aside
    assert not numba_cache.is_warm(module)
    assert aside_then_load(module.parent, env) == ("True", 1, 0)


def test_where_the_module_cannot_be_written_both_processes_share_a_private_folder(module,
                                                                                tmp_path):
    """As in the sandbox: the child writes into this process's private folder, not into one of
    its own that would go with it."""
    env = {"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path)}
    patch = "numba_cache._writable = lambda folder: False"
    assert aside_then_load(module.parent, env, patch) == ("True", 1, 0)
    assert not list(module.parent.glob("__pycache__/mod.*.nb[ic]"))


def test_inside_the_sandbox_a_copied_bot_compiles_aside_and_loads(module, tmp_path):
    from arena import sandbox

    policy = sandbox.SandboxPolicy("on")
    try:
        assert policy.enabled
    except sandbox.SandboxUnavailable as error:
        pytest.skip(str(error))

    def wrap(argv, env):
        return sandbox.wrap(argv, env, module.parent, policy)

    (module.parent / "bot.toml").write_text("# a bot folder: the sandbox shows it, read-only\n")
    # as bots/alphabeta/compiled.py does: the arena's kernel, read-only in the sandbox, gives
    # numba a private folder in each process, the child's removed with it
    module.write_text("import arena.solver.kernel\n" + MODULE)
    assert aside_then_load(module.parent, {"PATH": "/usr/bin:/bin"},
                           argv_wrap=wrap) == ("True", 1, 0)


def test_a_failing_compile_is_no_error(module):
    assert not numba_cache.compile_aside(module, "raise SystemExit(3)")
    assert not numba_cache.is_warm(module)
