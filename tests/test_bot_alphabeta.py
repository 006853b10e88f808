"""The alphabeta bot: legal games everywhere, tactics, and exact solving of reference positions."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from arena.game import Game, parse_variant
from tests.bot_helpers import SPECS, bot_help, heavy_modules_after_import, play_game, position
from tests.conftest import reference_path

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "bots" / "alphabeta"
sys.path.insert(0, str(BOT))

import player as player_module  # noqa: E402
from player import LEVELS, AlphaBetaPlayer  # noqa: E402
from search import Searcher, Solver  # noqa: E402

from arena.bitboard import geometry_for  # noqa: E402


@pytest.mark.parametrize("spec", SPECS)
def test_plays_legal_games_in_every_preset_and_size(spec):
    variant = parse_variant(spec)
    for level in ("easy", "hard"):
        game = play_game(variant, [AlphaBetaPlayer(variant, level, 1),
                                   AlphaBetaPlayer(variant, "medium", 2)])
        assert game.outcome.reason in ("line", "full", "empty", "repetition", "max-plies")



@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize(
    "spec, moves, expected",
    [
        ("classic", "4 1 4 1 4", 4),  # player 2 must block the vertical three
        ("classic", "1 1 2 2 3", 4),  # player 2 must block the horizontal three
        ("classic", "4 4 3 3 2 2", {1, 5}),  # player 1 completes the open three
        ("popout", "1 2 1 2 1 2", 1),
        ("five", "3 3 4 4 5 5 6 6", {2, 7}),
        ("popout-five", "3 3 4 4 5 5 6 6", {2, 7}),
    ],
)
def test_takes_immediate_wins_and_blocks(level, spec, moves, expected):
    game = position(spec, moves)
    player = AlphaBetaPlayer(game.variant, level, 0)
    move = player.choose(game, time.monotonic() + 2.0)
    assert move in (expected if isinstance(expected, set) else {expected})


def test_takes_the_immediate_win_rather_than_blocking():
    game = position("classic", "1 2 1 2 1 2")  # both have three in a column; player 1 to move
    assert AlphaBetaPlayer(game.variant, "hard").choose(game, time.monotonic() + 2.0) == 1


def test_popout_win_by_popping():
    # player 1 holds row 2 of columns 1-3; popping its disc under column 4 drops its own disc
    # from row 3 to row 2 and completes the line
    game = position("popout", "4 1 1 2 2 3 3 4 4 7")
    probe = game.copy()
    assert probe.push(-4) == (1, "line")
    move = AlphaBetaPlayer(game.variant, "hard").choose(game, time.monotonic() + 2.0)
    assert game.push(move) == (1, "line")


def read_reference(name: str, count: int) -> list[tuple[str, int]]:
    path = reference_path("connect4", name)
    rows = []
    for line in path.read_text().splitlines()[:count]:
        moves, score = line.split()
        rows.append((moves, int(score)))
    return rows


@pytest.mark.parametrize("name", ["Test_L3_R1", "Test_L2_R1"])
def test_solver_finds_the_exact_value_of_reference_positions(name):
    solver = Solver(geometry_for(parse_variant("classic")))
    for moves, expected in read_reference(name, 25):
        game = position("classic", " ".join(moves))
        side = game.to_move - 1
        solver.reset()
        cur, opp = game.boards[side], game.boards[1 - side]
        assert solver.solve(cur, opp) == expected, moves
        weak = solver.solve(cur, opp, weak=True)
        assert weak == (expected > 0) - (expected < 0), moves
        if expected > 0:
            column = solver.move_values(cur, opp, expected)[0]
            game.push(column + 1)
            if game.outcome is None:
                side = game.to_move - 1
                assert solver.solve(game.boards[side], game.boards[1 - side]) == -expected


def test_player_plays_a_winning_move_in_won_reference_positions():
    for moves, expected in read_reference("Test_L3_R1", 40):
        if expected <= 0:
            continue
        game = position("classic", " ".join(moves))
        player = AlphaBetaPlayer(game.variant, "hard")
        move = player.choose(game, time.monotonic() + 5.0)
        game.push(move)
        if game.outcome is None:
            side = game.to_move - 1
            solver = Solver(geometry_for(game.variant))
            assert solver.solve(game.boards[side], game.boards[1 - side], weak=True) < 0, moves


def test_evaluation_values_zugzwang_control():
    # player 1 threatens row 3 (odd) in columns 1 and 5, player 2 has no threat: player 1's game
    variant = parse_variant("classic")
    game = Game.from_rows(variant, [".......", ".......", ".......",
                                    ".111...",
                                    ".212...",
                                    "2121.2."], to_move=2)
    geo = geometry_for(variant)
    searcher = Searcher(geo)
    values = []
    for side in (0, 1):
        cur, opp = game.boards[side], game.boards[1 - side]
        mask = cur | opp
        values.append(searcher.evaluate(cur, opp, side, geo.win_spots(cur, mask),
                                        geo.win_spots(opp, mask)))
    assert values[0] > 200 and values[1] < -200, values


def test_solver_small_board_values():
    # four in a row on 4x4 and 5x4 are draws with perfect play (Tromp)
    for spec in ("classic:4x4", "classic:5x4"):
        game = Game(parse_variant(spec))
        solver = Solver(geometry_for(game.variant))
        assert solver.solve(game.boards[0], game.boards[1], weak=True) == 0


def test_keeps_to_a_short_deadline():
    variant = parse_variant("popout")
    game = position("popout", "4 4 3 5")
    player = AlphaBetaPlayer(variant, "hard")
    start = time.monotonic()
    player.choose(game, start + 0.05)
    assert time.monotonic() - start < 0.5  # generous: the machine may be loaded


def test_bot_modules_stay_light():
    assert heavy_modules_after_import(BOT, "player", "search", "arena.bitboard") == []


def test_bot_script_runs_under_the_sdk():
    out = bot_help(BOT / "alphabeta.py")
    assert out.returncode == 0 and "--level" in out.stdout, out.stderr


@pytest.fixture
def book_loaded(monkeypatch):
    """The classic book loaded, as alphabeta.py's loader thread does (undone afterwards)."""
    monkeypatch.setattr(player_module, "_book", None)
    player_module.load_book()
    return player_module._book


@pytest.mark.parametrize("moves", ["", "4", "1", "4 4", "3 5", "7 1", "2 6", "4 4 4", "2 2 6"])
def test_hard_plays_the_books_best_move_at_once(book_loaded, moves):
    """Where the book settles every move, hard plays one of the best exact score with no search
    (a deadline already past leaves no time for one), and says so; lower levels search."""
    from arena.solver.oracle import Oracle

    game = position("classic", moves)
    scores = book_loaded.move_scores(*Oracle.position(game))
    assert scores is not None
    best = max(scores.values())
    player = AlphaBetaPlayer(game.variant, "hard")
    move = player.choose(game.copy(), time.monotonic())
    assert scores[move - 1] == best and player.book_score == best and player.last_depth == 0
    medium = AlphaBetaPlayer(game.variant, "medium")
    medium.choose(game.copy(), time.monotonic() + 0.02)
    assert medium.book_score is None


def test_hard_plays_a_booked_best_move_where_the_book_has_only_that(monkeypatch):
    """The builder's `--best-moves` books a position's score and one best child: hard plays
    that move at once, even where a more central move is as good but not booked."""
    from arena.solver.book import Book, book_key
    from arena.solver.oracle import Oracle

    game = position("classic", " ".join("2737271465741732"))  # score 4; columns 3 and 1 keep it
    cur, mask = Oracle.position(game)
    child = game.copy()
    child.push(1)
    entries = {book_key(cur, mask, 7, 6): 4, book_key(*Oracle.position(child), 7, 6): -4}
    monkeypatch.setattr(player_module, "_book", Book.from_entries(7, 6, entries))
    player = AlphaBetaPlayer(game.variant, "hard")
    assert player.choose(game.copy(), time.monotonic()) == 1
    assert player.book_score == 4 and player.last_depth == 0


def test_the_book_is_for_classic_7x6_only(book_loaded):
    for spec in ("classic:6x6", "popout", "five"):
        player = AlphaBetaPlayer(parse_variant(spec), "hard")
        player.choose(Game(parse_variant(spec)), time.monotonic() + 0.02)
        assert not player.booked and player.book_score is None


def test_without_the_book_loaded_hard_searches(monkeypatch):
    monkeypatch.setattr(player_module, "_book", None)
    player = AlphaBetaPlayer(parse_variant("classic"), "hard")
    player.choose(Game(parse_variant("classic")), time.monotonic() + 0.05)
    assert player.book_score is None and player.last_depth > 0


def test_the_bot_keeps_the_players_of_its_last_few_variants_only(monkeypatch):
    """Each player holds about 17 MB of search tables: a process meeting many board sizes (a
    tournament over sizes keeps it warm for all of them) kept one for every size it met."""
    import gc
    import io
    import weakref

    import alphabeta

    made: list[weakref.ref] = []
    alive_at_moves: list[int] = []  # players alive at each move, after a collection

    class CountedPlayer:
        book_score, last_depth = None, 0

        def __init__(self, variant, level, seed) -> None:
            made.append(weakref.ref(self))

        def new_game(self) -> None:
            pass

        def choose(self, game, deadline):
            gc.collect()
            alive_at_moves.append(sum(ref() is not None for ref in made))
            return game.legal_moves()[0]

    monkeypatch.setattr(alphabeta, "AlphaBetaPlayer", CountedPlayer)
    monkeypatch.setattr(alphabeta, "load_compiled",
                        lambda: alphabeta.HEAVY_LOADED.set() or alphabeta.SEARCH_READY.set())
    lines = ["hello protocol=fiar version=1"]
    sizes = [(4, 4), (5, 4), (5, 5), (6, 5), (6, 6), (7, 6), (7, 7)]
    for c, r in sizes:
        lines += [f"game id={c}{r} seat=1 spec=classic:{c}x{r} columns={c} rows={r} connect=4 "
                  f"pops=0 fixed=- start={'/'.join(['-'] * c)} cap={4 * c * r} move_ms=1000 "
                  "base_ms=0 increment_ms=0 startup_ms=5000 grace_ms=200 opponent=x",
                  "turn ply=0 moves=- time_ms=1000 opponent_time_ms=- last_ms=-",
                  "end result=draw winner=- reason=full plies=1"]
    pending = iter([(line + "\n").encode() for line in [*lines, "quit"]])

    class _Stdin:
        class buffer:  # sys.stdin.buffer, lower case
            readline = staticmethod(lambda: next(pending, b""))

    out = io.StringIO()
    monkeypatch.setattr(sys, "stdin", _Stdin())
    monkeypatch.setattr(sys, "stdout", out)
    alphabeta.main([])
    assert len(made) == len(sizes)  # one made for each size, each move answered
    assert out.getvalue().count("move ") == len(sizes)
    assert alive_at_moves == [1, 2, 3, 4, 4, 4, 4] and alphabeta.MAX_PLAYERS == 4


def test_the_first_move_waits_for_the_compiled_search_to_be_loaded(monkeypatch):
    """Loading the compiled search holds the GIL for 0.2 s and more: a search beside it overran
    a 100 ms move by 200 ms (a demo forfeit, after seven instant book moves). The first move,
    which has the start-up allowance, waits for it."""
    import io
    import threading

    import alphabeta

    seen: list[bool] = []

    class Player:
        book_score, last_depth = None, 0

        def __init__(self, variant, level, seed) -> None:
            pass

        def new_game(self) -> None:
            pass

        def choose(self, game, deadline):
            seen.append(alphabeta.SEARCH_READY.is_set())
            return game.legal_moves()[0]

    def slow_load() -> None:  # numba imported at once, the compiled search 0.3 s later
        alphabeta.HEAVY_LOADED.set()
        threading.Timer(0.3, alphabeta.SEARCH_READY.set).start()

    monkeypatch.setattr(alphabeta, "HEAVY_LOADED", threading.Event())  # fresh, unset
    monkeypatch.setattr(alphabeta, "SEARCH_READY", threading.Event())
    monkeypatch.setattr(alphabeta, "AlphaBetaPlayer", Player)
    monkeypatch.setattr(alphabeta, "load_compiled", slow_load)
    lines = ["hello protocol=fiar version=1",
             "game id=a seat=1 spec=classic columns=7 rows=6 connect=4 pops=0 fixed=- "
             "start=-/-/-/-/-/-/- cap=168 move_ms=100 base_ms=0 increment_ms=0 startup_ms=5000 "
             "grace_ms=200 opponent=x",
             "turn ply=0 moves=- time_ms=100 opponent_time_ms=- last_ms=-", "quit"]
    pending = iter([(line + "\n").encode() for line in lines])

    class _Stdin:
        class buffer:  # sys.stdin.buffer, lower case
            readline = staticmethod(lambda: next(pending, b""))

    monkeypatch.setattr(sys, "stdin", _Stdin())
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    alphabeta.main([])
    assert seen == [True]  # without the wait: False, the move made beside the load
