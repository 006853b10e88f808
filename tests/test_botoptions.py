"""arena.botoptions: the bots' light command-line options (argparse's behaviour, not its cost)."""

import pytest

from arena.botoptions import Option, OptionError, parse, parse_options

SPEC = {"seed": Option(int, help="seed"), "level": Option(str, "hard", ("easy", "hard")),
        "think_ms": Option(float, 5.0)}


def test_defaults_when_nothing_is_given():
    assert parse(SPEC, []) == {"seed": None, "level": "hard", "think_ms": 5.0}


def test_values_are_converted_in_both_spellings():
    assert parse(SPEC, ["--seed", "7", "--level=easy", "--think-ms", "2.5"]) == {
        "seed": 7, "level": "easy", "think_ms": 2.5}


@pytest.mark.parametrize(("argv", "message"), [
    (["--seed", "x"], "argument --seed: invalid int value: 'x'"),
    (["--seed"], "argument --seed: expected one argument"),
    (["--level", "hardest"], "argument --level: invalid choice: 'hardest' (choose from 'easy', 'hard')"),
    (["--depth", "3"], "unrecognized argument: --depth (options: --seed, --level, --think-ms)"),
    (["--think_ms", "3"], "unrecognized argument: --think_ms"),
    (["--s", "x"], "argument --seed: invalid int value"),  # --s is --seed (unique prefix)
    (["--", "3"], "unrecognized argument: --"),
    (["7"], "unrecognized argument: 7"),
])
def test_a_bad_command_line_names_the_option(argv, message):
    with pytest.raises(OptionError) as error:
        parse(SPEC, argv)
    assert str(error.value).startswith(message)


def test_parse_options_exits_like_argparse(capsys):
    with pytest.raises(SystemExit) as stop:
        parse_options(SPEC, ["--seed", "x"], prog="mybot")
    assert stop.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["usage: mybot [--seed VALUE] [--level VALUE] [--think-ms VALUE]",
                   "mybot: error: argument --seed: invalid int value: 'x'"]


def test_help_lists_the_options_and_exits_0(capsys):
    with pytest.raises(SystemExit) as stop:
        parse_options(SPEC, ["--help"], prog="mybot", description="plays well")
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "plays well" in out and "--level VALUE" in out and "(one of: easy, hard)" in out
    assert "(default: 5.0)" in out


def test_a_unique_prefix_names_an_option_and_an_ambiguous_one_is_an_error():
    assert parse(SPEC, ["--se", "3", "--lev=easy", "--th", "1"]) == {
        "seed": 3, "level": "easy", "think_ms": 1.0}
    spec = {"seed": Option(int), "search": Option(str)}
    with pytest.raises(OptionError, match="ambiguous option: --se could match --seed, --search"):
        parse(spec, ["--se", "3"])


def test_a_text_default_is_converted_and_the_last_repeat_wins():
    spec = {"think_ms": Option(float, "5"), "seed": Option(int)}
    assert parse(spec, ["--seed", "1", "--seed=-2"]) == {"think_ms": 5.0, "seed": -2}
