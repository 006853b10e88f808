"""Naming a bot: paths, .py files, folders with bot.toml, bundled names."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from arena.botspec import BotSpecError, distinct_names, name_problem, resolve_bot, resolve_command
from arena.tournament.config import load_config
from tests.conftest import ROOT


def test_bundled_name():
    spec = resolve_bot("greedy", ["--seed", "1"])
    assert spec.name == "greedy" and spec.cwd == ROOT / "bots" / "greedy"
    assert spec.command == [sys.executable, str(ROOT / "bots" / "greedy" / "bot.py")]
    assert spec.args == ("--seed", "1") and spec.argv[-2:] == ["--seed", "1"]
    assert spec.version == "1.0" and spec.language == "python" and len(spec.program_hash) == 16
    assert resolve_bot("greedy", name="g2").name == "g2"


def test_a_missing_bot_names_the_folder_it_was_looked_for_in(tmp_path):
    """A path relative to another folder than meant is the usual cause (user review)."""
    with pytest.raises(BotSpecError, match=f"no bot at 'nothere': not a file or folder in "
                                           f"'{tmp_path}', not a command on PATH, and not a "
                                           r"bundled bot \(alphabeta, "):
        resolve_bot("nothere", base=tmp_path)


def test_a_missing_bot_of_a_tournament_names_both_folders_and_a_close_bundled_name(tmp_path,
                                                                                monkeypatch):
    # run from the parent folder, the file's own folder (tried first) went unnamed, and a
    # misspelt bundled bot got no suggestion (newcomer review)
    from arena.tournament.config import ConfigError, load_config

    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "x.toml").write_text('[[bots]]\npath = "gredy"\n[[bots]]\npath = "random"\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as info:
        load_config(Path("m/x.toml"))
    assert str(info.value).endswith(f"no bot at 'gredy': not a file or folder in "
                                    f"'{tmp_path / 'm'}' or '{tmp_path}', not a command on PATH, and "
                                    "not a bundled bot (alphabeta, awk, greedy, mcts, perfect, "
                                    "random); did you mean 'greedy'?")


def test_py_file_and_executable(tmp_path):
    script = tmp_path / "mine.py"
    script.write_text("print('hi')\n")
    spec = resolve_bot(str(script))
    assert spec.name == "mine" and spec.command == [sys.executable, str(script)]
    exe = tmp_path / "run.sh"
    exe.write_text("#!/bin/sh\n")
    with pytest.raises(BotSpecError, match=r"is not executable: run  chmod \+x .*\(or put its "
                       r"interpreter first: command = \[\"sh\", \"run.sh\"\] in a bot.toml\)"):
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
        ("name = \n", "bot.toml:1: not valid TOML"),
        ("name = 'x'\n", "bot.toml: 'command' is missing"),
        ("name = 'x'\ncommand = 3\n", "bot.toml:2: 'command' must be"),
        ("name = 'x'\ncomand = 'bot.py'\n", "bot.toml:2: unknown key 'comand'; did you mean 'command'"),
        ("name = 'x'\ncommand = 'sh'\nlanguge = 'sh'\n", "did you mean 'language'"),
        ("name = 'x'\ncommand = 'run.sh'\n", "not executable: run  chmod"),
        ("name = 'x'\ncommand = 'no-such-runtime-xyz bot.js'\n", "not found"),
        ("name = 'x'\ncommand = 'missing.py'\n", "not found"),
        ("name = 'x'\ncommand = 'sh'\nargs = 'a'\n", "'args' must be"),
    ],
)
def test_bad_manifests(tmp_path, manifest, message):
    (tmp_path / "bot.toml").write_text(manifest)
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")  # not executable
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


def _python_on_path(tmp_path, monkeypatch) -> None:
    """A `python3` and a `node` stand-in on PATH (node: a shell script), for command rules."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    node = bin_dir / "fakenode"
    node.write_text("#!/bin/sh\nexec python3 \"$@\"\n")
    node.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ.get('PATH', '')}")


def test_one_rule_for_commands_path_lookup_and_script_name(tmp_path, monkeypatch):
    """Issue 14 #2: `fakenode bot.js` finds the interpreter on PATH, is named after the script,
    the same in a bot.toml, on the command line and in a tournament file."""
    _python_on_path(tmp_path, monkeypatch)
    folder = tmp_path / "jsbot"
    folder.mkdir()
    (folder / "bot.js").write_text("// a bot\n")
    (folder / "bot.toml").write_text('command = "fakenode bot.js"\n')
    from_manifest = resolve_bot(str(folder))
    assert from_manifest.command == ["fakenode", "bot.js"] and from_manifest.name == "jsbot"
    monkeypatch.chdir(folder)
    from_line = resolve_bot("fakenode bot.js")
    assert from_line.command == ["fakenode", "bot.js"] and from_line.name == "bot"
    assert from_line.cwd == folder and not from_line.named
    other = tmp_path / "other.js"
    other.write_text("// another\n")
    spec = resolve_command(["fakenode", "other.js"], tmp_path, name="o")
    assert spec.name == "o" and spec.named and spec.cwd == tmp_path
    assert spec.program_hash != from_line.program_hash  # the script is hashed, not the runtime
    with pytest.raises(BotSpecError, match="'no-such-runtime-xyz' not found on PATH"):
        resolve_bot("no-such-runtime-xyz bot.js")
    # a missing script is a one-line error, not a bot named `fakenode` that crashes every game
    # (bot author review); options and words without a script's ending are the runtime's
    with pytest.raises(BotSpecError, match=r"script 'nothere.js' not found in '.*jsbot'"):
        resolve_bot("fakenode nothere.js")
    assert resolve_bot("fakenode --trace bot.js").name == "bot"
    # inline code and a script's later arguments are the interpreter's: not checked (diff review)
    assert resolve_bot("fakenode -e 'require(\"./x.js\")'").command[0] == "fakenode"
    assert resolve_bot("fakenode bot.js --book later.py").name == "bot"
    assert resolve_bot("sh -c 'exec node main.js'").command == ["sh", "-c", "exec node main.js"]


def test_tournament_command_uses_the_same_rule(tmp_path, monkeypatch):
    _python_on_path(tmp_path, monkeypatch)
    for name in ("a", "b"):
        (tmp_path / f"{name}.js").write_text(f"// {name}\n")
    (tmp_path / "t.toml").write_text(
        '[[bots]]\ncommand = "fakenode a.js"\n[[bots]]\ncommand = ["fakenode", "b.js"]\n'
    )
    config = load_config(tmp_path / "t.toml")
    assert [b.name for b in config.bots] == ["a", "b"]  # not "node" twice
    assert config.bots[0].spec.command == ["fakenode", "a.js"]
    assert config.bots[0].spec.cwd == tmp_path


def test_venv_interpreter_symlink_is_not_resolved(tmp_path):
    """Issue 14 #29: `.venv/bin/python bot.py` runs the venv's python, not its target."""
    venv_bin = tmp_path / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to(sys.executable)
    (tmp_path / "bot.py").write_text("pass\n")
    (tmp_path / "bot.toml").write_text('name = "v"\ncommand = ".venv/bin/python bot.py"\n')
    spec = resolve_bot(str(tmp_path))
    assert spec.command == [str(venv_bin / "python"), "bot.py"]
    assert spec.language == "python"
    linked = tmp_path / "link"
    linked.symlink_to(tmp_path)
    assert resolve_bot(str(linked)).cwd == linked


@pytest.mark.parametrize("name", ["ünï cödé 🤖", "<b>bot<b> ü", "Łódź-bot", "a"])
def test_unicode_names_are_allowed(tmp_path, name):
    """Issue 14 #16: one rule for names from a manifest, a file or an argument."""
    assert name_problem(name) is None
    (tmp_path / "bot.toml").write_text(f'name = "{name}"\ncommand = "sh"\n')
    assert resolve_bot(str(tmp_path)).name == name
    assert resolve_bot(str(tmp_path), name=name).named


@pytest.mark.parametrize("name", ["", " x", "x ", "a\tb", "a\x00b", "x" * 65, "-"])
def test_bad_names_are_rejected(tmp_path, name):
    assert name_problem(name)
    with pytest.raises(BotSpecError, match="bot name"):
        resolve_bot("greedy", name=name)


def test_tournament_accepts_unicode_bot_names(tmp_path):
    (tmp_path / "t.toml").write_text(
        '[[bots]]\npath = "random"\nname = "ünï cödé 🤖"\n[[bots]]\npath = "greedy"\n'
    )
    assert load_config(tmp_path / "t.toml").bots[0].name == "ünï cödé 🤖"


def test_hash_covers_the_arena_modules_a_bot_imports(tmp_path, monkeypatch):
    """Issue 14 #33: changing arena/sdk.py (or what it imports) changes an SDK bot's hash, while
    an arena module the bot does not import leaves it alone."""
    import arena.botspec as botspec

    project = tmp_path / "project"
    shutil.copytree(ROOT / "arena", project / "arena",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "bots" / "greedy", project / "bots" / "greedy")
    monkeypatch.setattr(botspec, "PROJECT_ROOT", project)
    monkeypatch.setattr(botspec, "BUNDLED_DIR", project / "bots")
    first = resolve_bot("greedy").program_hash
    (project / "arena" / "stats.py").write_text("# not imported by the SDK\n")
    assert resolve_bot("greedy").program_hash == first
    with (project / "arena" / "game" / "state.py").open("a") as handle:
        handle.write("\n# changed\n")
    second = resolve_bot("greedy").program_hash
    assert second != first
    # a Python script that is not the command's first word (`sh run.sh bot.py`) runs the same
    # arena modules, which the arena compiles for it: its hash covers them too
    wrapped = tmp_path / "wrapped"
    shutil.copytree(project / "bots" / "greedy", wrapped)
    (wrapped / "run.sh").write_text('exec python3 "$1"\n')
    command = resolve_command(["sh", "run.sh", "bot.py"], wrapped)
    assert project / "arena" / "sdk.py" in botspec.arena_modules_of(command)
    with (project / "arena" / "sdk.py").open("a") as handle:
        handle.write("\n# changed\n")
    assert resolve_bot("greedy").program_hash != second
    assert resolve_command(["sh", "run.sh", "bot.py"], wrapped).program_hash != command.program_hash
    modules = {p.relative_to(project).as_posix()
               for p in botspec._arena_modules([project / "bots" / "greedy" / "bot.py"])}
    assert {"arena/__init__.py", "arena/sdk.py", "arena/protocol.py", "arena/game/__init__.py",
            "arena/game/state.py"} <= modules
    assert "arena/stats.py" not in modules and "arena/referee.py" not in modules


def test_a_name_from_a_file_follows_the_same_rule(tmp_path):
    odd = tmp_path / "bad\tname.py"
    odd.write_text("pass\n")
    with pytest.raises(BotSpecError, match="control or non-printable"):
        resolve_bot(str(odd))
    assert resolve_bot(str(odd), name="fine").name == "fine"
    html = tmp_path / "<b>bot<b> ü.py"
    html.write_text("pass\n")
    assert resolve_bot(str(html)).name == "<b>bot<b> ü"


def test_distinct_names_never_collide_with_a_name_already_taken():
    assert distinct_names(["a", "a", "a"]) == ["a", "a#2", "a#3"]
    for names in (["x", "x#2", "x"], ["x#2", "x", "x"], ["x", "x", "x#2"]):
        out = distinct_names(names)
        assert len(set(out)) == len(out), out


def test_hashing_a_bot_folder_reads_regular_files_only(tmp_path):
    """The arena hashes a submitted folder on the host, before any sandbox: a link to
    /dev/zero ran it out of memory and a FIFO hung it (a sandbox review's finding)."""
    import threading

    from arena.botspec import hash_folder

    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.toml").write_text('name = "x"\ncommand = "bot.py"\n')
    (folder / "bot.py").write_text("print('hello name=x')\n")
    plain = hash_folder(folder)
    os.symlink("/dev/zero", folder / "data.bin")
    os.symlink("/dev/zero", folder / "more.py")  # a "script" scanned for arena imports, too
    os.mkfifo(folder / "pipe")
    done: list[str] = []
    worker = threading.Thread(target=lambda: done.append(hash_folder(folder)), daemon=True)
    worker.start()
    worker.join(30)
    assert done and done[0] != plain  # the links and the FIFO are named in the hash, not read


def test_a_program_saved_with_windows_line_endings_is_refused_where_it_is_named(tmp_path):
    """`#!/bin/sh\\r` starts nothing (the system looks for `sh\\r`): said when the bot is
    resolved, as a file, from a command line or a folder's bot.toml, not as an unrelated hint
    after it failed (user review)."""
    program = tmp_path / "crlf"
    program.write_bytes(b"#!/bin/sh\r\necho 'hello name=x'\r\n")
    program.chmod(0o755)
    for ref in (str(program), "./crlf"):
        with pytest.raises(BotSpecError, match=r"#! line ends in a carriage return .*dos2unix"):
            resolve_command([ref], tmp_path) if ref.startswith("./") else resolve_bot(ref)
    program.write_bytes(b"#!/bin/sh\necho 'hello name=x'\r\n")  # CR after the #! line: its own
    assert resolve_bot(str(program)).command == [str(program)]
    # with Notepad's byte-order mark, and through a link to it
    program.write_bytes(b"\xef\xbb\xbf#!/bin/sh\r\necho 'hello name=x'\r\n")
    (tmp_path / "link").symlink_to(program)
    for ref in (str(program), str(tmp_path / "link")):
        with pytest.raises(BotSpecError, match="#! line comes after a byte-order mark"):
            resolve_bot(ref)
    program.write_bytes(b"#!/bin/sh\r\necho 'hello name=x'\r\n")
    with pytest.raises(BotSpecError, match="#! line ends in a carriage return"):
        resolve_bot(str(tmp_path / "link"))  # through the link


def test_a_program_without_a_hash_bang_line_is_told_so_when_it_fails_to_start(tmp_path):
    from arena.boterrors import BotStartError
    from arena.botspec import program_problem
    from arena.conformance import handshake_hint

    script = tmp_path / "noshebang"
    script.write_text("echo 'hello name=x'\n")
    script.chmod(0o755)
    assert "no #! first line" in program_problem(script)
    (tmp_path / "good").write_text("#!/bin/sh\necho 'hello name=x'\n")
    assert program_problem(tmp_path / "good") == ""
    assert program_problem(Path(os.path.realpath(sys.executable))) == ""  # a compiled program
    spec = resolve_bot(str(script))
    error = BotStartError(f"cannot start {str(script)!r}: Exec format error")
    hint = handshake_hint(error, str(error), str(error), spec, sandboxed=True)
    assert "no #! first line naming its interpreter" in hint and "sandbox" not in hint
