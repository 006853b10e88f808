"""A new rule is a local change: a misère rule (a line of K loses) defined only in this file,
through the public hook API, played by the engine, the records, the bots' bitboard `apply` and
a bundled bot."""

from __future__ import annotations

import importlib.util
import random

import pytest

from arena.bitboard import apply, geometry_for
from arena.game import (
    MOVER_LOSES,
    MOVER_WINS,
    PRESETS,
    RULES,
    STANDARD,
    Game,
    IllegalMoveError,
    Outcome,
    Rules,
    RulesError,
    VariantError,
    Verdict,
    format_record,
    parse_move,
    parse_variant,
    register_rules,
)
from arena.game.replay import replay_record
from tests.bot_helpers import ROOT


class Misere(Rules):
    """Whoever completes a line loses; a pop that completes only the opponent's line wins."""

    name = "test-misere"
    summary = "a line of K loses"

    def after_drop(self, geo, mover, other):
        if geo.has_line(mover):
            return MOVER_LOSES
        return super().after_drop(geo, mover, other)

    def after_pop(self, geo, mover, other):
        if geo.has_line(mover):
            return MOVER_LOSES
        if geo.has_line(other):
            return MOVER_WINS
        return super().after_pop(geo, mover, other)


@pytest.fixture
def misere():
    rules = register_rules(Misere())
    yield rules
    del RULES[rules.name]


def play(spec: str, tokens: str) -> Game:
    game = Game(parse_variant(spec))
    for token in tokens.split():
        game.push(parse_move(token))
    return game


def test_a_spec_names_the_rule_and_the_canonical_spec_keeps_it(misere):
    variant = parse_variant("classic:5x4,rule=test-misere")
    assert variant.rules is misere
    assert variant.spec == "classic:5x4,rule=test-misere"
    assert parse_variant(variant.spec) == variant
    assert variant.describe()["rule"] == "test-misere"
    # the standard rule is the default and is not spelled out
    assert parse_variant("classic,rule=standard") == PRESETS["classic"]
    assert PRESETS["classic"].spec == "classic" and PRESETS["classic"].rules is STANDARD


def test_a_line_made_by_a_drop_loses(misere):
    game = play("classic,rule=test-misere", "d1 d2 d1 d2 d1 d2 d1")
    assert game.outcome == Outcome(2, "line")
    assert game.winning_cells() == []  # the winner has no line to show
    standard = play("classic", "d1 d2 d1 d2 d1 d2 d1")
    assert standard.outcome == Outcome(1, "line")


OPPONENT_LINE_AFTER_POP = [  # player 1 pops column 1: row 2 becomes 2222 (player 2's line)
    ".......",
    ".......",
    ".......",
    "2......",
    "1222...",
    "1121...",
]


def test_a_pop_completing_only_the_opponents_line_wins(misere):
    outcomes = {}
    for spec in ("popout", "popout,rule=test-misere"):
        game = Game.from_rows(parse_variant(spec), OPPONENT_LINE_AFTER_POP, to_move=1)
        game.push(-1)
        assert game.board_rows()[-2:] == ["2222...", "1121..."]
        outcomes[spec] = game.outcome
    assert outcomes["popout"] == Outcome(2, "line")  # standard: the opponent's line wins for it
    assert outcomes["popout,rule=test-misere"] == Outcome(1, "line")  # misère: the popper wins


def test_records_replay_under_the_rule(misere):
    game = play("classic,rule=test-misere", "d1 d2 d1 d2 d1 d2 d1")
    record = format_record(game.variant, game.moves)
    assert record == "classic,rule=test-misere: d1 d2 d1 d2 d1 d2 d1"
    replayed = replay_record(record, PRESETS["classic"])
    assert replayed.error is None and replayed.game.outcome == Outcome(2, "line")


@pytest.mark.parametrize("spec", ["classic:5x4,rule=test-misere", "popout:5x4,rule=test-misere"])
def test_random_games_end_with_the_loser_holding_the_line(misere, spec):
    variant = parse_variant(spec)
    geo = geometry_for(variant)
    for seed in range(30):
        game = Game(variant)
        outcome = game.random_playout(random.Random(seed))
        if outcome.reason == "line":
            loser = 3 - outcome.winner
            assert geo.has_line(game.boards[loser - 1]), (seed, game.moves)


def test_the_bots_bitboard_apply_asks_the_same_rule(misere):
    variant = parse_variant("classic,rule=test-misere")
    geo = geometry_for(variant)
    game = play(variant.spec, "d1 d2 d1 d2 d1 d2")
    side = game.to_move - 1
    _, _, score = apply(geo, game.boards[side], game.boards[1 - side], game.ply, 1)
    assert score == 0.0  # the mover loses
    standard = geometry_for(PRESETS["classic"])
    assert apply(standard, game.boards[side], game.boards[1 - side], game.ply, 1)[2] == 1.0


def test_the_greedy_bot_plays_the_rule_through_the_engine(misere):
    spec = importlib.util.spec_from_file_location("greedy_bot", ROOT / "bots" / "greedy" / "bot.py")
    greedy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(greedy)
    # player 1 to move with three in column 1: misère greedy never completes it, standard does
    game = play("classic,rule=test-misere", "d1 d2 d1 d2 d1 d3")
    assert greedy.choose_greedy(game, random.Random(0)) != 1
    standard = play("classic", "d1 d2 d1 d2 d1 d3")
    assert greedy.choose_greedy(standard, random.Random(0)) == 1


def test_unknown_and_clashing_rules_are_clear_errors(misere):
    with pytest.raises(VariantError, match=r"unknown rule 'nope'.*rules: .*test-misere"):
        parse_variant("classic,rule=nope")
    with pytest.raises(RulesError, match="already registered"):
        register_rules(Misere())
    bad = Misere()
    bad.name = "Bad Name"
    with pytest.raises(RulesError, match="bad rule name"):
        register_rules(bad)


def test_a_verdict_uses_the_one_vocabulary_of_reasons():
    assert Verdict(0.0, "line").outcomes == (Outcome(2, "line"), Outcome(1, "line"))
    with pytest.raises(ValueError, match="reason is one of line, full"):
        Verdict(0.0, "misere")
    with pytest.raises(ValueError, match="0, 0.5 or 1"):
        Verdict(2.0, "line")


class NoCentrePops(Rules):
    """The legal-moves hook: the centre column cannot be popped."""

    name = "test-no-centre-pops"

    def poppable_columns(self, variant):
        centre = variant.columns // 2
        return tuple(c for c in super().poppable_columns(variant) if c != centre)


def test_the_legal_moves_hook_decides_which_columns_pop():
    rules = register_rules(NoCentrePops())
    try:
        variant = parse_variant("popout,rule=test-no-centre-pops")
        game = play(variant.spec, "d4 d3 d5 d2")
        assert -4 not in game.legal_moves() and -5 in game.legal_moves()
        with pytest.raises(IllegalMoveError, match="column 4 cannot be popped under rule "
                                                   "test-no-centre-pops"):
            game.push(-4)
        assert 3 not in geometry_for(variant).poppable and 4 in geometry_for(variant).poppable
        assert -4 in play("popout", "d4 d3 d5 d2").legal_moves()
    finally:
        del RULES[rules.name]


def test_a_variant_survives_pickling_and_copying_with_its_rule():
    import copy
    import pickle

    from arena.game import parse_variant

    for spec in ("classic:5x4", "popout"):
        variant = parse_variant(spec)
        for clone in (pickle.loads(pickle.dumps(variant)), copy.deepcopy(variant)):
            assert clone == variant and clone.spec == variant.spec
            assert clone.rules is variant.rules


def test_a_variant_is_an_immutable_value():
    from arena.game import PRESETS, parse_variant

    variant = parse_variant("popout:8x7")
    assert variant == parse_variant("popout:8x7") and hash(variant) == hash(parse_variant("popout:8x7"))
    assert variant != PRESETS["popout"] and len({variant, parse_variant("popout:8x7")}) == 1
    with pytest.raises(AttributeError, match="immutable"):
        variant.rows = 9
    assert "columns=8" in repr(variant)


def test_rule_hooks_lists_every_hook_and_fast_paths_refuse_any_overridden_one():
    from arena.game.rules import RULE_HOOKS, Rules, uses_standard_hooks

    methods = {name for name, value in vars(Rules).items()
               if callable(value) and not name.startswith("_")}
    assert set(RULE_HOOKS) == methods  # a new hook joins RULE_HOOKS, and every fast path checks it

    class Later(Rules):  # overrides only a hook no fast path names one by one
        name = "later-hook-test"

        def repetition_limit(self, variant):
            return 5

    assert not uses_standard_hooks(Later()) and uses_standard_hooks(Later(), "after_drop")
    assert uses_standard_hooks(Rules())


def test_arena_variants_lists_each_rule_with_its_summary(misere):
    """`summary` is what a user reads to choose a rule (it was set but shown nowhere)."""
    from click.testing import CliRunner

    from arena.commands.variants import command

    out = CliRunner().invoke(command, []).output
    assert "  standard       a line of K or more wins" in out
    assert "  test-misere    a line of K loses" in out


def _suicide_positions(variant, count: int) -> list[Game]:
    """Positions of `variant` (misère) where some drops complete the mover's own line, the move
    a standard-rule shortcut (`win_spots` as "wins now") plays, and some do not."""
    rng, found = random.Random(5), []
    while len(found) < count:
        game = Game(variant)
        while game.outcome is None and len(found) < count:
            legal = game.legal_moves()
            losing = [m for m in legal if _loses_at_once(game, m)]
            if losing and len(losing) < len(legal):
                found.append(game.copy())
            safe = [m for m in legal if m not in losing] or legal
            game.push(rng.choice(safe))
    return found


def _loses_at_once(game: Game, move: int) -> bool:
    mover = game.to_move
    outcome = game.push(move)
    game.pop()
    return outcome is not None and outcome.winner == 3 - mover


@pytest.mark.parametrize("bot", ["alphabeta", "mcts", "perfect"])
def test_search_bots_take_no_standard_shortcut_under_another_rule(misere, bot):
    """Under a rule where a line loses, mcts, alphabeta and perfect completed their own lines:
    each played the standard rules' "win now" and blocks before asking the rules (they lost
    every game to random). They now learn results from the rules' `apply` alone."""
    import sys
    import time

    sys.path.insert(0, str(ROOT / "bots" / bot))
    variant = parse_variant("classic,rule=test-misere")
    if bot == "alphabeta":
        from player import AlphaBetaPlayer as Player
    elif bot == "mcts":
        from tree import MctsPlayer as Player
    else:
        from perfect_player import PerfectPlayer as Player
    player = Player(variant)
    for game in _suicide_positions(variant, 6):
        move = player.choose(game.copy(), time.monotonic() + 0.3)
        assert not _loses_at_once(game, move), (bot, format_record(variant, game.moves), move)


def test_a_spec_right_but_for_its_rule_says_what_the_rest_is():
    """A plugin's rule missing here: the error carries the canonical spec without it, which a
    games file keeps as a label (its reader had a second parser of specs for this)."""
    from arena.game.variant import UnknownRuleError

    with pytest.raises(UnknownRuleError) as caught:
        parse_variant("PopOut:8x7, rule=Plugin")
    assert (caught.value.base, caught.value.rule) == ("popout:8x7", "plugin")
    with pytest.raises(VariantError) as wrong_size:  # the size is wrong first: no label
        parse_variant("classic:99x1,rule=plugin")
    assert not isinstance(wrong_size.value, UnknownRuleError)
