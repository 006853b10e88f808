"""Schedule properties: balance, seats, pairs, interleaving and stable ids."""

from __future__ import annotations

from collections import Counter

from tournament_helpers import write_toml

from arena.tournament.config import load_config
from arena.tournament.schedule import build_schedule, openings_notes, openings_order, pairings

BASE = """
name = "s"
variants = {variants}
games = {games}
{extra}
[[bots]]
path = "random"
[[bots]]
path = "greedy"
[[bots]]
path = "random"
name = "r2"
args = ["--seed", "2"]
{more}
"""


def config(tmp_path, variants=("classic", "popout:5x4"), games=4, extra="", more="",
           name="s.toml"):
    body = BASE.format(variants=list(variants), games=games, extra=extra, more=more)
    body = body.replace("'", '"')
    return load_config(write_toml(tmp_path / name, body))


def test_every_pair_meets_equally_with_each_seat_in_every_variant(tmp_path):
    cfg = config(tmp_path, games=6)
    games = build_schedule(cfg)
    assert len(games) == 3 * 2 * 6  # pairs x variants x games
    seats = Counter((g.variant.spec, g.first, g.second) for g in games)
    for variant in cfg.variants:
        for a, b in pairings(cfg):
            assert seats[(variant.spec, a, b)] == 3
            assert seats[(variant.spec, b, a)] == 3


def test_games_come_in_seat_swapped_pairs(tmp_path):
    games = build_schedule(config(tmp_path))
    by_pair: dict[str, list] = {}
    for g in games:
        by_pair.setdefault(g.pair_id, []).append(g)
    assert all(len(v) == 2 for v in by_pair.values())
    for first, second in by_pair.values():
        assert (first.first, first.second) == (second.second, second.first)
        assert first.variant == second.variant and first.opening == second.opening
    # the two games of a pair are adjacent in the play order
    order = [g.pair_id for g in games]
    assert all(order[i] == order[i + 1] for i in range(0, len(order), 2))


def test_rounds_are_interleaved_so_any_round_prefix_is_balanced(tmp_path):
    cfg = config(tmp_path, games=6)
    games = build_schedule(cfg)
    per_round = len(games) // 3
    for k in range(1, 4):
        prefix = games[: k * per_round]
        counts = Counter((g.variant.spec, g.first, g.second) for g in prefix)
        assert len(set(counts.values())) == 1, counts
        assert {g.round for g in prefix} == set(range(k))


def test_ids_are_unique_and_stable(tmp_path):
    first = [g.game_id for g in build_schedule(config(tmp_path))]
    second = [g.game_id for g in build_schedule(config(tmp_path, name="other.toml"))]
    assert first == second
    assert len(set(first)) == len(first)
    assert all(i.startswith("g") and len(i) == 17 for i in first)


def test_adding_bots_variants_or_games_keeps_the_old_ids(tmp_path):
    old = {g.game_id for g in build_schedule(config(tmp_path))}
    bigger = config(tmp_path, variants=("classic", "popout:5x4", "five"), games=6,
                    more='[[bots]]\npath = "random"\nname = "r3"\n')
    new = {g.game_id for g in build_schedule(bigger)}
    assert old < new
    assert len(new) == 6 * 3 * 6


def test_openings_each_played_twice_with_seats_swapped(tmp_path):
    (tmp_path / "open.txt").write_text("d4 d4\nd3\nd1 d2 d3\n")
    body = BASE.format(variants=["classic"], games=2, extra='openings = "open.txt"', more="")
    body = body.replace("games = 2\n", "").replace("'", '"')
    cfg = load_config(write_toml(tmp_path / "o.toml", body))
    games = build_schedule(cfg)
    assert len(games) == 3 * 3 * 2  # pairs x openings x 2
    per_pair_opening = Counter((frozenset(g.bots), g.opening) for g in games)
    assert set(per_pair_opening.values()) == {2}
    assert {g.opening for g in games} == {(4, 4), (3,), (1, 2, 3)}


def test_gauntlet(tmp_path):
    cfg = config(tmp_path, extra='format = "gauntlet"\ngauntlet_bot = "greedy"')
    games = build_schedule(cfg)
    assert all("greedy" in g.bots for g in games)
    assert len(games) == 2 * 2 * 4


def test_a_small_games_count_plays_the_first_openings_and_says_so(tmp_path):
    (tmp_path / "open.txt").write_text("d4 d4\nd3\nd1 d2 d3\nd2\n")
    body = BASE.format(variants=["classic"], games=4, extra='openings = "open.txt"', more="")
    cfg = load_config(write_toml(tmp_path / "o.toml", body.replace("'", '"')))
    used = {g.opening for g in build_schedule(cfg)}
    first_two = {o.moves for o in openings_order(cfg, cfg.variants[0])[:2]}
    assert used == first_two  # games = 4: two game pairs, one opening each
    assert openings_notes(cfg) == [
        "note: 2 of the 4 openings are played in classic: games = 4 is 2 game pair(s) per "
        "pairing, one opening each (both seats); set games = 8 or remove `games` to play them all"
    ]
    cfg.games = 8
    assert openings_notes(cfg) == [] and len({g.opening for g in build_schedule(cfg)}) == 4


def test_builtin_openings_are_each_variants_own_and_none_keeps_the_empty_board(tmp_path):
    cfg = config(tmp_path, variants=("classic", "five"), games=12, extra='openings = "builtin"')
    played = {(g.variant.spec, g.opening_text) for g in build_schedule(cfg)}
    # two drops next to each board's centre: d4 on 7 columns, d5 on 9
    assert {text for spec, text in played if spec == "classic"} == {
        "d3 d4", "d5 d4", "d3 d3", "d5 d5", "d3 d5", "d5 d3"}
    assert {text for spec, text in played if spec == "five"} == {
        "d4 d5", "d6 d5", "d4 d4", "d6 d6", "d4 d6", "d6 d4"}
    assert openings_notes(cfg) == [] and cfg.openings_file is None
    # a pool to draw from, not a list to play through: no note that some are not played
    few = config(tmp_path, variants=("classic",), games=4, extra='openings = "builtin"',
                 name="few.toml")
    assert len({g.opening for g in build_schedule(few)}) == 2 and openings_notes(few) == []
    empty = config(tmp_path, extra='openings = "none"', name="n.toml")
    assert {g.opening for g in build_schedule(empty)} == {()} and openings_notes(empty) == []
    # more game pairs than openings: games repeat for deterministic bots, and the notes say so
    many = config(tmp_path, variants=("classic",), games=14, extra='openings = "builtin"',
                  name="many.toml")
    assert len({g.opening for g in build_schedule(many)}) == 6
    assert [n[:70] for n in openings_notes(many)] == [
        "note: 7 game pairs per pairing in classic cycle through 6 opening(s): "]


def test_no_openings_with_more_than_one_game_pair_is_noted(tmp_path):
    # as fastchess warns: deterministic bots replay one game pair from the empty board
    [note] = openings_notes(config(tmp_path, games=4))
    assert note.startswith("note: no openings: every game starts from the empty board")
    assert 'openings = "builtin"' in note
    assert openings_notes(config(tmp_path, games=2, name="two.toml")) == []


def test_an_opening_that_leaves_a_win_at_once_is_noted(tmp_path):
    # accepted silently before: its games are decided by the first move (user review)
    (tmp_path / "open.txt").write_text("d4 d3 d4 d3 d4 d3\nd4 d4\n")
    cfg = config(tmp_path, variants=("classic",), games=4, extra='openings = "open.txt"')
    [note] = openings_notes(cfg)
    assert note == ("note: 1 opening(s) leave the player to move a win at once in classic (e.g. "
                    "'d4 d3 d4 d3 d4 d3'): their games are decided by the first move, whoever "
                    "plays")


def test_a_misspelt_openings_keyword_is_suggested(tmp_path):
    import pytest

    from arena.tournament.config import ConfigError

    with pytest.raises(ConfigError, match="openings file 'Builtin' not found; did you mean "
                                          "'builtin'"):
        config(tmp_path, extra='openings = "Builtin"')
    with pytest.raises(ConfigError, match=r"openings file 'gone.txt' not found \(or use "
                                          r"'builtin' or 'none'\)"):
        config(tmp_path, extra='openings = "gone.txt"', name="g.toml")


def test_start_failure_is_stop_or_forfeit(tmp_path):
    import pytest

    from arena.tournament.config import ConfigError

    assert config(tmp_path).start_failure == "stop"
    assert config(tmp_path, extra='start_failure = "forfeit"', name="f.toml").start_failure == \
        "forfeit"
    with pytest.raises(ConfigError, match=r"'start_failure' must be \"stop\" or \"forfeit\", got "
                                          r"'forfiet'; did you mean 'forfeit'"):
        config(tmp_path, extra='start_failure = "forfiet"', name="b.toml")
