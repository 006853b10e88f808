"""Issue 13: a Python process of the project's environment starts without import hooks of ours.

An editable install (`pip install -e .`, the README's) writes a plain path entry, not setuptools'
import-hook finder, which would make every Python bot's start and every `arena` command import
pathlib, importlib.util and urllib first (about 10 ms, a third of a bare interpreter start).
"""

import subprocess
import sys


def test_the_interpreter_starts_without_an_editable_import_hook():
    # ours only: another project installed in the same venv may bring its own hook
    probe = ("import sys; print(sorted(m for m in sys.modules "
             "if 'editable' in m.lower() and 'arena' in m.lower()))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         cwd="/")
    assert out.stdout.strip() == "[]", (
        f"startup imports {out.stdout.strip()}: keep `package-dir` in pyproject.toml's "
        "[tool.setuptools] and reinstall (pip install -e .)")


def test_arena_is_importable_from_anywhere():
    out = subprocess.run([sys.executable, "-c", "import arena.game, arena.sdk; print('ok')"],
                         capture_output=True, text=True, cwd="/")
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_a_bot_start_imports_no_regex_engine():
    # `re` (with enum's parser tables) is about 4 ms of a 12 ms interpreter start; every Python
    # bot pays it at every start, so the SDK and the rules it imports parse without it
    probe = "import sys, arena.sdk; print('re' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         cwd="/")
    assert out.stdout.strip() == "False", "arena.sdk imports `re`: parse by hand on the bot path"
