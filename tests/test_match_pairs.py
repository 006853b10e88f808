"""`play_match` names each game's seat-swapped pair (what `arena play --sprt` pairs), through
scripted bots: no processes."""

from __future__ import annotations

from collections import defaultdict

from arena import match
from arena.game import PRESETS
from arena.player import Player
from arena.referee import TimeControl
from tests.fake_transport import Events, FirstLegal, factory, spec


def test_pairs_restart_with_each_variant_and_time_control(monkeypatch):
    events = Events()

    class ScriptedPlayer(Player):
        def __init__(self, bot, *args, **options) -> None:
            super().__init__(bot, *args, transport_factory=factory(
                bot.name, FirstLegal(bot.name), events), **options)

    monkeypatch.setattr(match, "Player", ScriptedPlayer)
    seen: list[tuple[str, str]] = []
    controls = [TimeControl(move_ms=1000), TimeControl(move_ms=2000)]
    # an odd number of games per variant: the old ids ran on across variants, and paired the
    # last game of one variant with the first of the next
    match.play_match(spec("a"), spec("b"), [PRESETS["classic"], PRESETS["five"]], 3, controls,
                     on_game=lambda n, record, pair: seen.append((record.first, pair)))
    assert len(seen) == 12
    pairs = defaultdict(list)
    for first, pair in seen:
        pairs[pair].append(first)
    # per time control and variant: games 1-2 a pair with swapped seats, game 3 alone
    assert sorted(len(firsts) for firsts in pairs.values()) == [1] * 4 + [2] * 4
    assert all(sorted(firsts) == ["a", "b"] for firsts in pairs.values() if len(firsts) == 2)
    assert len({pair for _first, pair in seen[:3]} & {pair for _first, pair in seen[3:6]}) == 0


def test_a_bot_cannot_take_its_opponents_name_in_its_hello():
    # `hello name=random` from a bot named after its file `bot` showed as `random`, and the
    # real random it played as `random#2` (hostile review)
    from types import SimpleNamespace

    from arena.match import handshake_names

    def bot(file_name: str, says: str, named: bool = False):
        return SimpleNamespace(name=file_name, named=named), SimpleNamespace(hello={"name": says})

    impostor, real = bot("bot", "random"), bot("random", "random")
    for pair, expected in (((impostor, real), ["random#2", "random"]),
                           ((real, impostor), ["random", "random#2"])):
        specs, players = zip(*pair, strict=True)
        assert handshake_names(specs, players) == expected
    # its own name otherwise, and two alike in seat order
    assert handshake_names(*zip(bot("bot", "deep"), real, strict=True)) == ["deep", "random"]
    assert handshake_names(*zip(real, real, strict=True)) == ["random", "random#2"]


def test_the_match_keeps_each_bots_move_times_and_where_its_slowest_move_was():
    """`arena play`'s summary names each bot's slowest move by game and turn ply, in constant
    memory: an author whose bot is slow now and then replays that position (bot author review)."""
    from types import SimpleNamespace

    from arena.match import MatchResult

    result = MatchResult("a", "b")
    game = SimpleNamespace(void=False, first="a", second="b", opening=["d4"], game_id="g0001",
                           move_ms=[0.0, 5.0, 7.0, 90.0, 1.0], time_control={"move_ms": 100},
                           variant="classic", winner_name="a")
    result.add(game)
    result.add(SimpleNamespace(**{**vars(game), "first": "b", "second": "a", "game_id": "g0002",
                                  "move_ms": [0.0, 200.0, 3.0]}))
    a, b = result.times
    assert (a.moves, a.slowest_at, a.slowest_ms) == (3, ("g0002", 1), 200.0)  # 7, 1 and 200
    assert (b.moves, b.slowest_at) == (3, ("g0001", 3))  # 5, 90 and 3: the opening is nobody's
    assert b.text("b") == "b 3 moves, mean 32.7 ms, slowest 90.0 ms (g0001, turn ply=3)"
    assert MatchResult("x", "y").times[0].text("x") == "x made no move"
