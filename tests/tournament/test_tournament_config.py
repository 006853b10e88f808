"""Tournament files: defaults, and a clear error for each kind of bad file."""

from __future__ import annotations

import pytest
from tournament_helpers import copy_bot, run_cli, write_toml

from arena.tournament.config import ConfigError, load_config

GOOD = """
name = "t"
variants = ["classic", "popout:5x4"]
games = 4
[time]
move_ms = 500
[[bots]]
path = "random"
[[bots]]
path = "greedy"
"""


def load(tmp_path, body):
    return load_config(write_toml(tmp_path / "t.toml", body))


def error_of(tmp_path, body) -> str:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, body)
    return str(info.value)


def test_good_file_and_defaults(tmp_path):
    config = load(tmp_path, GOOD)
    assert config.name == "t"
    assert [v.spec for v in config.variants] == ["classic", "popout:5x4"]
    assert [b.name for b in config.bots] == ["random", "greedy"]
    assert config.games == 4
    assert config.time_control.move_ms == 500
    assert config.format == "round-robin"
    assert config.restart == "on-failure"
    assert config.concurrency >= 1
    assert str(config.output) == "results/t"


def test_minimal_file_gets_defaults(tmp_path):
    config = load(tmp_path, '[[bots]]\npath = "random"\n[[bots]]\npath = "greedy"\n')
    assert config.name == "t"  # the file's stem
    assert [v.spec for v in config.variants] == ["classic"]
    assert config.games is None  # 2 per pairing per variant
    assert config.time_control.move_ms == 1000


def test_bot_paths_relative_to_the_file(tmp_path):
    copy_bot(tmp_path, "random", "mybot")
    config = load(tmp_path, '[[bots]]\npath = "mybot"\nname = "mine"\n[[bots]]\npath = "greedy"\n')
    assert config.bots[0].name == "mine"
    assert str(config.bots[0].spec.cwd) == str((tmp_path / "mybot").resolve())


def test_args_make_a_separate_entrant(tmp_path):
    config = load(tmp_path, GOOD + '[[bots]]\npath = "random"\nname = "r2"\nargs = ["--seed", "3"]\n')
    assert config.bot("r2").spec.args[-2:] == ("--seed", "3")


def test_command_string(tmp_path):
    copy_bot(tmp_path, "random", "rb")
    config = load(tmp_path, GOOD + '[[bots]]\ncommand = "rb --seed 1"\nname = "r3"\n')
    assert config.bot("r3").args == ("--seed", "1")


@pytest.mark.parametrize(
    ("body", "needles"),
    [
        ("concurency = 2\n" + GOOD, ["t.toml:1:", "'concurency'", "did you mean 'concurrency'"]),
        (GOOD + "concurrency = 2\n", ["t.toml:10:", "'concurrency'", "in bot #2",
                                      "top-level key: move it above"]),
        (GOOD.replace("move_ms = 500", "move_ms = 500\nmove_mss = 3"),
         ["t.toml:6:", "'move_mss'", "[time]", "did you mean 'move_ms'"]),
        (GOOD.replace('path = "greedy"', 'path = "greedy"\nnmae = "x"'),
         ["t.toml:10:", "'nmae'", "did you mean 'name'"]),
        (GOOD.replace("[time]", "[timing]"), ["t.toml:4:", "'timing'", "did you mean 'time'"]),
    ],
)
def test_unknown_keys_name_key_line_and_suggestion(tmp_path, body, needles):
    message = error_of(tmp_path, body)
    for needle in needles:
        assert needle in message


def test_missing_bot(tmp_path):
    message = error_of(tmp_path, GOOD.replace('"greedy"', '"no-such-bot"'))
    assert "t.toml:9:" in message and "no-such-bot" in message


def test_a_command_whose_script_is_missing_is_named_whole(tmp_path):
    """`command = "sh nothere.sh"` was reported as `bot 'sh'`, a name it never has (user review)."""
    message = error_of(tmp_path, GOOD.replace('path = "greedy"', 'command = "sh nothere.sh"'))
    assert "t.toml:9:" in message and "command 'sh nothere.sh':" in message
    assert "bot 'sh'" not in message and "script 'nothere.sh' not found" in message


def test_bad_variant(tmp_path):
    message = error_of(tmp_path, GOOD.replace('"popout:5x4"', '"popout:3x99"'))
    assert "t.toml:2:" in message and "variant" in message


def test_unknown_variant(tmp_path):
    message = error_of(tmp_path, GOOD.replace('"popout:5x4"', '"clasic"'))
    assert "t.toml:2:" in message and "clasic" in message


@pytest.mark.parametrize("games", [3, 0, -2])
def test_odd_or_nonpositive_game_count(tmp_path, games):
    message = error_of(tmp_path, GOOD.replace("games = 4", f"games = {games}"))
    assert "t.toml:3:" in message and "'games'" in message and "even" in message


@pytest.mark.parametrize(
    ("time", "key"),
    [("move_ms = 0", "move_ms"), ("move_ms = -5", "move_ms"),
     ("move_ms = 100\nincrement_ms = 50", "increment_ms"), ("base_ms = 0", "base_ms"),
     ("startup_ms = -1", "startup_ms"), ('move_ms = "fast"', "move_ms")],
)
def test_impossible_time_control(tmp_path, time, key):
    message = error_of(tmp_path, GOOD.replace("move_ms = 500", time))
    assert key in message and "t.toml:" in message


def test_clock_time_control(tmp_path):
    config = load(tmp_path, GOOD.replace("move_ms = 500", "base_ms = 10000\nincrement_ms = 100"))
    assert config.time_control.base_ms == 10000
    assert config.time_control.move_ms is None


def test_wrong_types_and_values(tmp_path):
    assert "'games'" in error_of(tmp_path, GOOD.replace("games = 4", 'games = "4"'))
    assert "'format'" in error_of(tmp_path, 'format = "round-robbin"\n' + GOOD)
    assert "did you mean 'round-robin'" in error_of(tmp_path, 'format = "round-robbin"\n' + GOOD)
    assert "'restart'" in error_of(tmp_path, 'restart = "always"\n' + GOOD)
    assert "'concurrency'" in error_of(tmp_path, "concurrency = 0\n" + GOOD)


def test_duplicate_bot_names(tmp_path):
    message = error_of(tmp_path, GOOD + '[[bots]]\npath = "random"\n')
    assert "two bots are named 'random'" in message and "t.toml:" in message


def test_too_few_bots(tmp_path):
    assert "at least two bots" in error_of(tmp_path, '[[bots]]\npath = "random"\n')
    assert "no bots" in error_of(tmp_path, 'name = "x"\n')


def test_gauntlet_needs_a_known_bot(tmp_path):
    assert "gauntlet_bot" in error_of(tmp_path, 'format = "gauntlet"\n' + GOOD)
    message = error_of(tmp_path, 'format = "gauntlet"\ngauntlet_bot = "greddy"\n' + GOOD)
    assert "did you mean 'greedy'" in message


def test_not_toml(tmp_path):
    message = error_of(tmp_path, GOOD + "games = = 2\n")
    assert "not valid TOML" in message and "t.toml:" in message


def test_openings(tmp_path):
    (tmp_path / "open.txt").write_text("# comment\nd4 d4\n44\nclassic: d3\npopout: p1\n")
    config = load(tmp_path, 'openings = "open.txt"\n' + GOOD)
    assert len(config.openings) == 2  # "44" repeats "d4 d4"; popout is not played
    assert len(config.openings_for(config.variants[0])) == 2
    assert len(config.openings_for(config.variants[1])) == 1


def test_bad_openings(tmp_path):
    (tmp_path / "open.txt").write_text("d4 d9\n")
    message = error_of(tmp_path, 'openings = "open.txt"\n' + GOOD)
    assert "open.txt:1:" in message and "illegal" in message
    assert "not found" in error_of(tmp_path, 'openings = "missing.txt"\n' + GOOD)


def test_an_opening_illegal_in_one_variant_names_the_prefix_that_fits(tmp_path):
    """The hint said "prefix the line with its variant: 'classic: ...'" whatever the variants,
    even where classic was the variant the line is illegal in."""
    (tmp_path / "open.txt").write_text("d6 d4\n")
    message = error_of(tmp_path, 'openings = "open.txt"\n' + GOOD)  # classic and popout:5x4
    assert "move 'd6' is illegal in popout:5x4" in message
    assert "write 'classic: d6 d4'" in message


def test_openings_only_for_other_variants_are_said(tmp_path):
    from arena.tournament.schedule import openings_notes

    (tmp_path / "open.txt").write_text("five: d4 d4\n")
    message = error_of(tmp_path, 'openings = "open.txt"\n' + GOOD)
    assert "holds no openings for the variants played (classic, popout:5x4)" in message
    (tmp_path / "open.txt").write_text("classic: d4 d4\n")
    config = load(tmp_path, 'openings = "open.txt"\n' + GOOD)
    assert openings_notes(config)[1:] == ["note: no opening of the openings file is for "
                                          "popout:5x4: its games start from the empty board"]
    assert "2 game pairs per pairing in classic cycle through 1 opening(s)" in \
        openings_notes(config)[0]


def test_cli_error_is_one_line_without_traceback(tmp_path):
    path = write_toml(tmp_path / "t.toml", "concurency = 2\n" + GOOD)
    result = run_cli("run", str(path), cwd=tmp_path)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "did you mean 'concurrency'" in lines[0]
    assert not (tmp_path / "results").exists()  # nothing ran


def test_demo_file_is_valid():
    from tournament_helpers import PROJECT

    config = load_config(PROJECT / "tournaments" / "demo.toml")
    assert len(config.variants) >= 5
    assert len(config.bots) >= 3


@pytest.mark.parametrize("time", ["move_ms = 100\nincrement_ms = 50", "base_ms = 0",
                                  "move_ms = 100\ngrace_ms = -1"])
def test_time_rules_are_checked_once_by_the_time_control_itself(tmp_path, time):
    from arena.referee import TimeControl

    message = error_of(tmp_path, GOOD.replace("move_ms = 500", time))
    values = dict(line.split(" = ") for line in time.splitlines())
    with pytest.raises(ValueError) as direct:
        TimeControl.from_dict({k: int(v) for k, v in values.items()})
    own = str(direct.value).removeprefix("time control: ")
    bad_key = time.splitlines()[-1].split(" = ")[0]
    line = 5 + len(time.splitlines()) - 1  # the [time] table starts on line 4
    assert message == f"{tmp_path / 't.toml'}:{line}: [time] impossible time control: {own}"
    assert bad_key in own


def test_the_time_control_is_typed(tmp_path):
    from arena.referee import TimeControl

    config = load(tmp_path, GOOD)
    assert isinstance(config.time_control, TimeControl) and config.time_control.move_ms == 500


def test_plots_is_a_boolean(tmp_path):
    assert load(tmp_path, GOOD).plots is False
    assert load(tmp_path, "plots = true\n" + GOOD).plots is True
    message = error_of(tmp_path, "plots = 1\n" + GOOD)
    assert "t.toml:1:" in message and "'plots' must be true or false" in message
    assert "'games'" in error_of(tmp_path, GOOD.replace("games = 4", "games = true"))


def test_type_errors_quote_the_value_as_toml_wrote_it(tmp_path):
    assert "'games' must be an even number, got the string \"4\"" in error_of(
        tmp_path, GOOD.replace("games = 4", 'games = "4"'))
    assert "got true" in error_of(tmp_path, "concurrency = true\n" + GOOD)  # not Python's True


def test_a_file_name_that_cannot_name_the_output_folder_says_so(tmp_path):
    path = write_toml(tmp_path / "my demo.toml", GOOD.replace('name = "t"\n', ""))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert "named after its file, 'my demo'" in str(info.value)
    assert 'add name = "..."' in str(info.value)


def test_ponder_is_on_unless_the_file_turns_it_off(tmp_path):
    from arena.tournament.config import load_league_file
    from arena.tournament.executor import WorkerSetup

    assert load(tmp_path, GOOD).ponder is True
    config = load(tmp_path, "ponder = false\n" + GOOD)
    assert config.ponder is False and config.settings()["ponder"] is False
    assert WorkerSetup.from_config(config, tmp_path).ponder is False
    assert "t.toml:1: 'ponder'" in error_of(tmp_path, 'ponder = "no"\n' + GOOD)
    league = write_toml(tmp_path / "league.toml", 'variants = ["classic"]\nponder = false\n')
    assert load_league_file(league)["ponder"] is False


def test_the_site_says_when_bots_were_stopped_between_turns():
    from arena.publish.context import tournament_items

    assert dict(tournament_items({"settings": {"ponder": False}}))["Between turns"].startswith(
        "Bots stopped from their move")
    assert "Between turns" not in dict(tournament_items({"settings": {"ponder": True}}))
