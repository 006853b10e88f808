"""Naming a bot: paths, .py files, folders with bot.toml, bundled names."""

from __future__ import annotations

import sys

import pytest

from arena.botspec import BotSpecError, distinct_names, resolve_bot
from tests.conftest import ROOT


def test_bundled_name():
    spec = resolve_bot("greedy", ["--seed", "1"])
    assert spec.name == "greedy" and spec.cwd == ROOT / "bots" / "greedy"
    assert spec.command == [sys.executable, str(ROOT / "bots" / "greedy" / "bot.py")]
    assert spec.args == ("--seed", "1") and spec.argv[-2:] == ["--seed", "1"]
    assert spec.version == "1.0" and spec.language == "python" and len(spec.program_hash) == 16
    assert resolve_bot("greedy", name="g2").name == "g2"


def test_py_file_and_executable(tmp_path):
    script = tmp_path / "mine.py"
    script.write_text("print('hi')\n")
    spec = resolve_bot(str(script))
    assert spec.name == "mine" and spec.command == [sys.executable, str(script)]
    exe = tmp_path / "run.sh"
    exe.write_text("#!/bin/sh\n")
    with pytest.raises(BotSpecError, match="neither executable"):
        resolve_bot(str(exe))
    exe.chmod(0o755)
    assert resolve_bot(str(exe)).command == [str(exe)]


def test_manifest_folder_and_hash(tmp_path):
    (tmp_path / "bot.toml").write_text(
        'name = "x"\ncommand = "main.py --fast"\nargs = ["--level", "easy"]\nauthor = "me"\n'
    )
    (tmp_path / "main.py").write_text("pass\n")
    spec = resolve_bot(str(tmp_path), ["--more"])
    assert spec.command == [sys.executable, str(tmp_path / "main.py"), "--fast"]
    assert spec.args == ("--level", "easy", "--more") and spec.author == "me"
    first = spec.program_hash
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "junk.pyc").write_bytes(b"junk")
    assert resolve_bot(str(tmp_path)).program_hash == first
    (tmp_path / "main.py").write_text("pass  # changed\n")
    assert resolve_bot(str(tmp_path)).program_hash != first


@pytest.mark.parametrize(
    "manifest,message",
    [
        ("name = \n", "bad manifest"),
        ("name = 'x'\n", "'command' must be"),
        ("name = 'x'\ncommand = 'no-such-runtime-xyz bot.js'\n", "not found"),
        ("name = 'x'\ncommand = 'missing.py'\n", "not found"),
        ("name = 'x'\ncommand = 'sh'\nargs = 'a'\n", "'args' must be"),
    ],
)
def test_bad_manifests(tmp_path, manifest, message):
    (tmp_path / "bot.toml").write_text(manifest)
    with pytest.raises(BotSpecError, match=message) as info:
        resolve_bot(str(tmp_path))
    assert "\n" not in str(info.value)


def test_unknown_reference(tmp_path):
    with pytest.raises(BotSpecError, match="no bot at"):
        resolve_bot("no/such/bot")
    with pytest.raises(BotSpecError, match="no bot.toml"):
        resolve_bot(str(tmp_path))


def test_distinct_names():
    assert distinct_names(["a", "a", "b", "a"]) == ["a", "a#2", "b", "a#3"]
