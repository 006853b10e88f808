"""The bytecode the arena writes for bots (arena/bytecode.py): bots run with
PYTHONDONTWRITEBYTECODE, so without it the arena modules they import were compiled from source
at every start (issue 13)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from arena import bytecode
from arena.botspec import PROJECT_ROOT, arena_modules_of, resolve_bot, resolve_command


def _imported_from_cache(folder: Path, module: str) -> bool:
    """Whether a fresh interpreter that may not write caches loads `module` from its cache."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(folder)}
    env.pop("PYTHONPYCACHEPREFIX", None)
    done = subprocess.run([sys.executable, "-v", "-c", f"import {module}"], env=env,
                          capture_output=True, text=True, check=True)
    return f"{bytecode.cache_path(folder / f'{module}.py')} matches" in done.stderr


def test_a_written_cache_is_the_one_the_interpreter_loads(tmp_path):
    source = tmp_path / "helper.py"
    source.write_text("VALUE = 1\n")
    assert not _imported_from_cache(tmp_path, "helper")
    assert bytecode.write_caches([source]) == 1
    assert bytecode.is_current(source, bytecode.cache_path(source))
    assert _imported_from_cache(tmp_path, "helper")
    assert bytecode.write_caches([source]) == 0  # current: not written again


def test_a_changed_source_gets_a_new_cache(tmp_path):
    source = tmp_path / "helper.py"
    source.write_text("VALUE = 1\n")
    bytecode.write_caches([source])
    source.write_text("VALUE = 22\n")  # another size, whatever the clock's resolution
    assert not bytecode.is_current(source, bytecode.cache_path(source))
    assert bytecode.write_caches([source]) == 1
    assert _imported_from_cache(tmp_path, "helper")


def test_a_folder_that_cannot_hold_caches_is_skipped_quietly(tmp_path):
    source = tmp_path / "helper.py"
    source.write_text("VALUE = 1\n")
    (tmp_path / "__pycache__").write_text("a file where the cache folder would go\n")
    assert bytecode.write_caches([source, tmp_path / "missing.py"]) == 0


def test_the_modules_of_an_sdk_bot_are_the_arena_files_it_imports():
    modules = arena_modules_of(resolve_bot("random"))
    assert PROJECT_ROOT / "arena" / "sdk.py" in modules
    assert PROJECT_ROOT / "arena" / "__init__.py" in modules
    assert all(path.is_relative_to(PROJECT_ROOT / "arena") for path in modules)
    bytecode.ensure(modules)
    assert all(bytecode.is_current(p, bytecode.cache_path(p)) for p in modules)


def test_a_bot_that_imports_no_arena_module_gets_nothing_compiled(tmp_path, monkeypatch):
    monkeypatch.setattr(bytecode, "_prepared", set())
    (tmp_path / "helper.py").write_text("VALUE = 1\n")
    script = tmp_path / "plain.py"
    script.write_text("import helper\nprint('hello name=plain')\n")
    spec = resolve_command(["plain.py"], tmp_path)
    assert arena_modules_of(spec) == []
    assert arena_modules_of(resolve_command(["sh", "-c", "true"], tmp_path)) == []
    bytecode.prepare_bot(spec)
    assert not (tmp_path / "__pycache__").exists()  # the entrant's own code is never compiled


def _package(tmp_path, monkeypatch) -> Path:
    """A stand-in arena package in `tmp_path`, with one module."""
    package = tmp_path / "pkg" / "arena"
    package.mkdir(parents=True)
    (package / "referee.py").write_text("VALUE = 1\n")
    monkeypatch.setattr(bytecode, "ARENA_PACKAGE", package.resolve())
    return package


def test_only_the_packages_own_files_get_caches_never_a_bots_or_a_hosts(tmp_path, monkeypatch):
    # A bot named a host file as an arena module (`import arena./abs/path/x` in a docstring),
    # linked its folder's __pycache__ into the package, or sat inside the package: the arena
    # wrote bytecode there that the next arena process ran (diff review).
    package = _package(tmp_path, monkeypatch)
    host = tmp_path / "host.py"
    host.write_text("VALUE = 2\n")
    assert bytecode.ensure([host]) == 0 and not (tmp_path / "__pycache__").exists()
    bot = package / "evil"  # a bot folder inside the package
    bot.mkdir()
    (bot / "referee.py").write_text("VALUE = 3\n")
    assert bytecode.ensure([bot / "referee.py"], outside=bot) == 0
    linked = tmp_path / "bot"
    linked.mkdir()
    (linked / "referee.py").symlink_to(package / "referee.py")
    assert bytecode.ensure([linked / "referee.py"]) == 0  # reached through a link
    (package / "__pycache__").symlink_to(tmp_path, target_is_directory=True)
    assert bytecode.ensure([package / "referee.py"]) == 0  # its __pycache__ is a link
    (package / "__pycache__").unlink()
    assert bytecode.ensure([package / "referee.py"]) == 1  # the package's own file


def test_a_module_name_that_is_no_dotted_name_is_no_arena_module(tmp_path):
    host = tmp_path / "host.py"  # a file of the host, named as an arena module
    host.write_text("VALUE = 1\n")
    bot = tmp_path / "bot.py"
    bot.write_text(f'"""\nimport arena.{tmp_path}/host\n"""\nimport arena.sdk\n')
    modules = arena_modules_of(resolve_command(["bot.py"], tmp_path))
    assert PROJECT_ROOT / "arena" / "sdk.py" in modules
    assert all(path.resolve().is_relative_to(PROJECT_ROOT / "arena") for path in modules)


def test_every_bot_transport_prepares_its_bytecode_once_per_program(monkeypatch):
    from arena import player

    prepared = []
    monkeypatch.setattr(bytecode, "_prepared", set())
    monkeypatch.setattr(bytecode, "ensure",
                        lambda sources, outside=None: prepared.append(list(sources)) or 0)
    spec = resolve_bot("random")
    for _ in range(3):
        player.bot_process(spec)  # a transport, not yet started: no process
    assert len(prepared) == 1 and PROJECT_ROOT / "arena" / "sdk.py" in prepared[0]
