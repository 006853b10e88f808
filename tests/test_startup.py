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
    probe = "import sys, arena.sdk; print('re' in sys.modules, 'enum' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         cwd="/")
    has_re, has_enum = out.stdout.split()
    assert has_re == "False", "arena.sdk imports `re`: parse by hand on the bot path"
    # enum and building arena.reasons.Reason: 2.5 ms; the engine uses the plain constants
    assert has_enum == "False", "arena.sdk imports `enum`: use arena.reasons' constants, not Reason"


def test_the_bundled_bots_start_without_argparse():
    # argparse brings `re`, gettext and shutil: about 8 ms of a 26 ms start of the random bot,
    # paid again at every start under restart = "every-game" (arena.botoptions replaces it)
    from pathlib import Path

    bots = Path(__file__).resolve().parent.parent / "bots"
    for folder, script in (("random", "bot.py"), ("greedy", "bot.py")):
        out = subprocess.run([sys.executable, "-X", "importtime", script, "--seed", "1"],
                             cwd=bots / folder, stdin=subprocess.DEVNULL, capture_output=True,
                             text=True, timeout=60)
        imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines()
                    if line.startswith("import time:")}
        assert "arena.sdk" in imported, out.stderr[-500:]
        assert not imported & {"argparse", "re", "gettext"}, (folder, imported & {"argparse", "re"})


def test_the_installed_arena_command_imports_no_regex_engine():
    # pip's wrapper for a [project.scripts] entry point imports `re` (a third of `arena --help`):
    # the command is the plain script bin/arena instead (pyproject's script-files)
    import os
    from pathlib import Path

    import pytest

    script = Path(sys.executable).parent / "arena"
    if not script.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"no installed `arena` command beside {sys.executable}")
        pytest.skip("the project is not installed in this Python's environment")
    assert "import re" not in script.read_text(), f"{script} is pip's wrapper: reinstall (pip install -e .)"
    out = subprocess.run([sys.executable, "-X", "importtime", str(script), "--help"],
                         capture_output=True, text=True, timeout=60, cwd="/")
    assert out.returncode == 0 and out.stdout.startswith("Usage: arena"), out.stderr[-500:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines()
                if line.startswith("import time:")}
    assert "arena.cli" in imported and "re" not in imported


def test_help_into_a_closed_pipe_is_quiet():
    # `arena --help | head -1` may close the pipe first: exit 1 without a traceback, like click
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        out = subprocess.run([sys.executable, "-m", "arena", "--help"], stdout=write_end,
                             stderr=subprocess.PIPE, text=True, timeout=60, cwd="/")
    finally:
        os.close(write_end)
    assert out.returncode == 1 and out.stderr == "", out.stderr
