"""Building and parsing protocol lines."""

from __future__ import annotations

import pytest

from arena import protocol
from arena.game import PRESETS, parse_variant
from arena.sdk import variant_from_setup
from arena.timecontrol import TimeControl


@pytest.mark.parametrize("spec", [*PRESETS, "popout:8x7", "five:11x8,connect=4",
                                  "classic,max-plies=20"])
def test_game_line_round_trip_rebuilds_the_variant(spec):
    variant = parse_variant(spec)
    line = protocol.game_line("g 1", 2, variant.describe(), TimeControl().to_dict(), "my bot")
    assert "\n" not in line and "  " not in line
    setup = protocol.parse_game_line(line)
    assert setup["seat"] == 2 and setup["id"] == "g_1" and setup["opponent"] == "my_bot"
    assert setup["move_ms"] == 1000 and setup["base_ms"] is None
    rebuilt = variant_from_setup(setup)
    assert rebuilt == variant and rebuilt.spec == variant.spec


def test_variant_without_known_spec_is_rebuilt_from_fields():
    variant = parse_variant("five:10x7")
    setup = protocol.parse_game_line(
        protocol.game_line("x", 1, variant.describe(), TimeControl().to_dict())
        .replace("spec=five:10x7", "spec=mystery")
    )
    rebuilt = variant_from_setup(setup)
    assert (rebuilt.columns, rebuilt.rows, rebuilt.connect, rebuilt.start, rebuilt.fixed_columns,
            rebuilt.max_plies) == (10, 7, 5, variant.start, (1, 10), variant.max_plies)
    assert rebuilt.spec == "mystery"
    from arena.game import Game

    game = Game(rebuilt)
    assert not game.is_legal(1) and game.is_legal(2)


def test_turn_line():
    line = protocol.turn_line(["d4", "p4"], 900, None, 12.4)
    assert line == "turn ply=2 moves=d4,p4 time_ms=900 opponent_time_ms=- last_ms=12"
    parsed = protocol.parse_turn_line(line + " future=1")
    assert parsed == {"moves": ["d4", "p4"], "time_ms": 900, "opponent_time_ms": None,
                      "last_ms": 12}
    assert protocol.parse_turn_line(protocol.turn_line([], 5, 7))["moves"] == []


@pytest.mark.parametrize(
    "line,expected",
    [("move d4", ("move", "d4")), ("move p3 ply=4", ("move", "p3")), ("d4", ("move", "d4")),
     ("4", ("move", "4")), ("  ", ("blank", "")), ("info depth 3", ("info", "depth 3")),
     ("move x9", ("move", "x9"))],
)
def test_parse_bot_line(line, expected):
    assert protocol.parse_bot_line(line) == expected


@pytest.mark.parametrize("line", ["hello", "moves d4", "d4 d5", "x", "move"])
def test_parse_bot_line_rejects(line):
    with pytest.raises(protocol.ProtocolError):
        protocol.parse_bot_line(line)


def test_hello():
    assert protocol.hello_line() == "hello protocol=fiar version=1"
    reply = protocol.hello_reply("My Bot", "1.0", "A B")
    assert reply == "hello name=My_Bot version=1.0 author=A_B"
    assert protocol.parse_hello_reply(reply)["name"] == "My_Bot"
    for bad in ("hi name=x", "hello version=1", ""):
        with pytest.raises(protocol.ProtocolError):
            protocol.parse_hello_reply(bad)


def test_end_line_and_truncate():
    assert protocol.end_line("draw", None, "full", 42) == "end result=draw winner=0 reason=full plies=42"
    assert protocol.truncate("a\nb" * 200, 10).startswith("a\\nba\\nba\\")


# --- any whitespace separates the words of a bot line ----------------------------------------

@pytest.mark.parametrize(("line", "expected"), [
    ("info\tdepth 3", ("info", "depth 3")),
    ("move\td4", ("move", "d4")),
    ("move d4   ", ("move", "d4")),
    ("  d4 \t", ("move", "d4")),
    ("info", ("info", "")),
    ("\t", ("blank", "")),
])
def test_bot_line_words_split_on_any_whitespace(line, expected):
    assert protocol.parse_bot_line(line) == expected


def test_bot_line_two_bare_words_is_not_a_move():
    with pytest.raises(protocol.ProtocolError):
        protocol.parse_bot_line("d4\td5")


def test_bot_text_reaches_the_terminal_without_control_characters():
    """A bot's stderr line, hello fields and manifest fields are printed in progress lines and
    by `arena check`: an escape sequence there could rewrite lines or set the clipboard."""
    attack = "x\x1b[2K\x1b[1APASS\x1b]52;c;AAAA\x07\u009b"
    assert protocol.printable(attack) == "x\\x1b[2K\\x1b[1APASS\\x1b]52;c;AAAA\\x07\\x9b"
    assert "\x1b" not in protocol.truncate(attack)
    fields = protocol.parse_hello_reply("hello name=v version=" + "V" * 65000 + "\x1b[2J")
    assert len(fields["version"]) < 100 and "\x1b" not in fields["version"]  # was stored whole


def test_bot_text_cannot_hide_or_reorder_what_is_shown_around_it():
    """A hello's version or author with a right-to-left override flipped the text after it on
    the terminal and the site, and zero-width spaces padded it unseen (hostile review)."""
    fields = protocol.parse_hello_reply(
        "hello name=bot version=\u202e1.0\u2066 author=Ada\u200b\u200bLovelace")
    assert fields["version"] == "\\u202e1.0\\u2066"
    assert fields["author"] == "Ada\\u200b\\u200bLovelace"
    assert protocol.printable("tag\U000e0041\u2028x") == "tag\\U000e0041\\u2028x"
    assert protocol.printable("ünï cödé 🤖 名前") == "ünï cödé 🤖 名前"  # any script stays as it is
    family, persian = "\U0001f468\u200d\U0001f469\u200d\U0001f467", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
    assert protocol.printable(family) == family and protocol.printable(persian) == persian
    assert protocol.printable("Ada\u200dLovelace") == "Ada\\u200dLovelace"  # hides, joins nothing
