"""Tournament files and bot manifests: where a misplaced key belongs, the line of every error
(inline tables and dotted keys too), one form for TOML syntax errors, an `output` that is a file."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.botspec import BotSpecError, resolve_bot
from arena.sandbox import LIMIT_KEYS
from arena.tomlcheck import KeyLines
from arena.tournament.config import (
    _BOT_KEYS,
    _TIME_KEYS,
    _TOP_KEYS,
    ConfigError,
    load_config,
    load_league_file,
)

BOTS = '[[bots]]\npath = "random"\n\n[[bots]]\npath = "greedy"\n'
TIMED = '[time]\nmove_ms = 100\n\n' + BOTS  # the last bot's keys start at line 8


def error_of(tmp_path: Path, body: str) -> str:
    path = tmp_path / "t.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert "\n" not in str(info.value)
    return str(info.value)


@pytest.mark.parametrize("key", [k for k in _TOP_KEYS if k not in _BOT_KEYS])
def test_a_top_level_key_after_the_bots_says_to_move_it_up(tmp_path, key):
    message = error_of(tmp_path, f"{TIMED}{key} = 1\n")
    assert message.startswith(f"{tmp_path / 't.toml'}:9: unknown key {key!r} in bot #2; ")
    assert f"{key!r} is a top-level key: move it above the first [table]" in message
    assert "did you mean" not in message


@pytest.mark.parametrize(("key", "table"), [*((k, "time") for k in _TIME_KEYS),
                                            *((k, "limits") for k in LIMIT_KEYS)])
def test_a_key_of_a_section_in_a_bot_names_the_section_and_the_bots_own_table(tmp_path, key,
                                                                              table):
    message = error_of(tmp_path, f"{TIMED}{key} = 50\n")
    assert f"{key!r} belongs in the [{table}] table" in message
    assert f"for this bot only, in {table} = {{ {key} = ... }}" in message


def test_a_section_key_at_the_top_level_names_its_section(tmp_path):
    message = error_of(tmp_path, f"move_ms = 50\n{BOTS}")
    assert message.endswith(":1: unknown key 'move_ms'; 'move_ms' belongs in the [time] table")


def test_a_bot_key_elsewhere_names_the_bots_table(tmp_path):
    message = error_of(tmp_path, f'[time]\nmove_ms = 100\npath = "x"\n{BOTS}')
    assert message.endswith(":3: unknown key 'path' in [time]; 'path' belongs in a [[bots]] table")


def test_a_key_is_not_sent_to_the_table_it_is_already_in(tmp_path):
    # `bogus` is close to `bots`, which holds this very table
    message = error_of(tmp_path, f"{TIMED}time = {{ bogus = 0 }}\n")
    assert "'bots'" not in message and "known keys: move_ms" in message
    assert "'bost'" in error_of(tmp_path, f"{TIMED}bost = 1\n")
    assert "'bots'" not in error_of(tmp_path, f"{TIMED}bost = 1\n")


def test_a_near_miss_of_a_key_elsewhere_says_both(tmp_path):
    message = error_of(tmp_path, f"{TIMED}seeds = 1\n")
    assert "did you mean 'seed'? 'seed' is a top-level key: move it above" in message


def test_a_league_file_is_not_told_of_keys_it_cannot_have(tmp_path):
    path = tmp_path / "league.toml"
    path.write_text("[time]\nmove_ms = 100\ngames = 2\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_league_file(path)
    assert ":3: unknown key 'games' in [time]" in str(info.value)
    assert "top-level" not in str(info.value)


@pytest.mark.parametrize(("body", "line"), [
    ('name = "x"\nlimits = { memory_mb = "1G" }\n' + BOTS, 2),
    ('name = "x"\nbots = [{path = "random"}, {path = "nonexistent"}]\n', 2),
    (BOTS + "time.move_ms = 0\n", 6),
    (BOTS + "time . 'move_ms' = 0\n", 6),
    (BOTS + "limits.memory_mb = -1\n", 6),
])
def test_errors_in_inline_tables_and_dotted_keys_have_their_line(tmp_path, body, line):
    assert error_of(tmp_path, body).startswith(f"{tmp_path / 't.toml'}:{line}: ")


def test_dotted_keys_are_keys_of_their_tables():
    lines = KeyLines('[[bots]]\npath = "a"\n[[bots]]\n"time".move_ms = 0\n')
    assert lines.line("move_ms", "bots.time", 1) == 4
    assert lines.line("time", "bots", 1) == 4
    assert lines.line("move_ms", "bots.time", 0) == 1  # bot #1 has none: its header


@pytest.mark.parametrize(("manifest", "line"), [('name = "abc\n', 1), ('name = "x"\nargs = [\n', 2)])
def test_a_manifest_that_is_not_toml_says_file_and_line_as_tournament_files_do(tmp_path,
                                                                              manifest, line):
    (tmp_path / "bot.toml").write_text(manifest, encoding="utf-8")
    with pytest.raises(BotSpecError) as info:
        resolve_bot(str(tmp_path))
    assert str(info.value).startswith(f"{tmp_path / 'bot.toml'}:{line}: not valid TOML: ")
    tournament = error_of(tmp_path, manifest)
    assert tournament.startswith(f"{tmp_path / 't.toml'}:{line}: not valid TOML: ")


def test_output_naming_a_file_says_so_at_its_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taken").write_text("", encoding="utf-8")
    for output in ("taken", "taken/results"):
        message = error_of(tmp_path, f'name = "x"\noutput = "{output}"\n{BOTS}')
        assert message == (f"{tmp_path / 't.toml'}:2: 'output': 'taken' is a file, not a "
                           "folder: name a results folder")


def test_output_naming_a_file_is_one_line_from_the_cli(tmp_path, monkeypatch):
    from arena.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "taken").write_text("", encoding="utf-8")
    (tmp_path / "t.toml").write_text(f'output = "taken"\n{BOTS}', encoding="utf-8")
    result = CliRunner().invoke(main, ["run", "t.toml"])
    assert result.exit_code != 0 and "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == ["Error: t.toml:1: 'output': 'taken' is a file, not a folder: name a "
                     "results folder"]


def test_args_follow_one_rule_in_a_tournament_file_and_a_bot_toml(tmp_path):
    """`args = ["--seed", 3]` was accepted in a bot.toml and refused in a tournament file
    (league review): numbers are taken as written in both, anything else refused in both."""
    path = tmp_path / "t.toml"
    path.write_text('[[bots]]\npath = "random"\nargs = ["--seed", 3]\n\n[[bots]]\npath = "greedy"\n')
    assert list(load_config(path).bots[0].args) == ["--seed", "3"]
    assert "t.toml:3: 'args' must be a list of strings" in error_of(
        tmp_path, '[[bots]]\npath = "random"\nargs = ["--seed", true]\n\n' + BOTS)
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.py").write_text("print('hi')\n")
    (folder / "bot.toml").write_text('command = "bot.py"\nargs = ["--seed", 3]\n')
    assert resolve_bot(str(folder)).args[-2:] == ("--seed", "3")
    (folder / "bot.toml").write_text('command = "bot.py"\nargs = ["--fast", true]\n')
    with pytest.raises(BotSpecError, match="'args' must be a list of strings"):
        resolve_bot(str(folder))


@pytest.mark.parametrize(("text", "said"), [
    ("games = 2\ngames = 4\n", "t.toml:2: not valid TOML: key 'games' clashes with an earlier "
                               "line (the key, or the key or table it belongs to, given twice)"),
    ('name = "x"\n[bots]\nx = 1\n[[bots]]\n', "t.toml:4: not valid TOML: [bots] clashes with "
                                               "an earlier line"),
    ("[time]\nmove_ms = 1\n[time]\n", "t.toml:3: not valid TOML: [time] clashes with an "
                                       "earlier line (a table, key or list of tables given "
                                       "twice, or a key where a table goes): keep one"),
    ("time = 1\n[time.x]\n", "t.toml:2: not valid TOML: [time.x] clashes with an earlier line"),
    ("time = 5\n[time]\n", "t.toml:2: not valid TOML: [time] clashes with an earlier line"),
    ("a = 1\na.b = 2\n", "t.toml:2: not valid TOML: key 'a.b' clashes with an earlier line"),
    # in an inline table tomllib names the key itself
    ("time = { move_ms = 1, move_ms = 2 }\n", "t.toml:1: not valid TOML: Duplicate inline table "
                                              "key 'move_ms'"),
])
def test_a_key_or_table_given_twice_is_named(tmp_path, text, said):
    # tomllib's "Cannot overwrite a value" named neither the key nor what to do (newcomer review)
    assert error_of(tmp_path, text).startswith(f"{tmp_path}/{said}")


def test_variants_written_as_one_string_are_shown_as_a_list(tmp_path):
    # "bad option 'popout' in variant spec 'classic,popout'" did not say what to write
    said = error_of(tmp_path, 'variants = "classic,popout"\n[[bots]]\npath = "random"\n'
                              '[[bots]]\npath = "greedy"\n')
    assert said.endswith(":1: 'variants' is one variant spec, and 'classic,popout' is not one: "
                         'several variants are a list, variants = ["classic", "popout"]')
    # a spec with options stays one spec
    said = error_of(tmp_path, 'variants = "classic,connect=9"\n[[bots]]\npath = "random"\n'
                              '[[bots]]\npath = "greedy"\n')
    assert "bad variant in 'variants'" in said
