"""alphabeta's compiled search: the very tree of the Python one, used once loaded, and its machine
code compiled outside the sandbox and loaded inside it (arena/numba_cache.py)."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.game import Game, parse_variant

pytest.importorskip("numba", reason="the compiled search needs numba, a dependency: pip install -e .")

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "bots" / "alphabeta"
sys.path.insert(0, str(BOT))

import compiled  # noqa: E402
from player import AlphaBetaPlayer  # noqa: E402
from search import Searcher, decode_position  # noqa: E402

from arena.bitboard import geometry_for  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def machine_code():
    compiled.warm_up()


def positions(spec: str, count: int, seed: int):
    """Positions of games between noisy shallow searches (with their move histories)."""
    variant = parse_variant(spec)
    geo = geometry_for(variant)
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        game = Game(variant)
        mover = Searcher(geo, rng.randrange(1000))
        mover.eval_noise = 30
        for _ in range(rng.randint(2, 30)):
            if game.outcome is not None:
                break
            cur, opp, side, ply = decode_position(geo, game)
            mover.tt.clear()
            game.push(mover.root_search(cur, opp, side, ply, 2, None)[0])
        if game.outcome is None:
            found.append(game)
    return variant, geo, found


@pytest.mark.parametrize("spec", ["classic", "popout", "five", "popout-five",
                                  "classic:9x6,connect=5", "popout:6x5"])
def test_the_compiled_search_walks_the_very_tree_of_the_python_one(spec):
    """Same scores of every root move and the same number of nodes, depth after depth (iterative
    deepening through both tables, the history heuristic and, with pops, the repetition rule)."""
    variant, geo, games = positions(spec, 4, seed=len(spec))
    for game in games:
        history = AlphaBetaPlayer(variant)._history_keys(game)
        cur, opp, side, ply = decode_position(geo, game)
        runs = []
        for searcher in (Searcher(geo, 1), compiled.CompiledSearcher(geo, 1)):
            searcher.set_history(history)
            order, trace = None, []
            for depth in range(1, 5):
                move, score, scores = searcher.root_search(cur, opp, side, ply, depth, order)
                order = sorted(scores, key=scores.__getitem__, reverse=True)
                trace.append((move, score, scores, searcher.nodes))
            runs.append(trace)
        assert runs[0] == runs[1], f"{spec} after {game.moves}"


def test_a_third_occurrence_is_a_draw_in_the_compiled_search_too():
    variant = parse_variant("popout:5x4")
    geo = geometry_for(variant)
    searcher = compiled.CompiledSearcher(geo)
    cur, opp = 1, 1 << geo.stride  # one disc each, bottom of columns 1 and 2
    ccur, copp, _ = geo.apply(cur, opp, 2, 3)  # the mover drops in column 3
    child_key = Searcher.key(ccur, copp, 1)
    args = (cur, opp, 0, 2, 3, searcher.g, searcher.column_masks)
    assert compiled.child(*args, searcher.seen_keys, searcher.seen_counts)[2] is False
    searcher.set_history([child_key, child_key])  # seen twice: the move makes the third
    over, score = compiled.child(*args, searcher.seen_keys, searcher.seen_counts)[2:]
    assert over is True and score == 0


def test_the_player_uses_it_once_loaded_and_keeps_to_its_deadline():
    variant = parse_variant("five")
    player = AlphaBetaPlayer(variant)
    game = Game(variant)
    started = time.monotonic()
    player.choose(game, started + 0.2)
    assert time.monotonic() - started < 2.0  # generous: a loaded machine
    assert player.fast is not None and player.fast.nodes > 0 and player.searcher.nodes == 0


def test_a_table_entry_gives_back_what_was_stored():
    """Key, value, depth, flag and move share one entry (two int64): every field's range; a
    set's four entries are one 64-byte cache line."""
    tt = compiled.CompiledSearcher(geometry_for(parse_variant("classic"))).tt
    assert tt.ctypes.data % 64 == 0 and tt.shape == (compiled.TT_SETS * compiled.WAYS, 2)
    assert tt.flags.c_contiguous and not tt.any()
    cases = [(value, depth, flag, move)
             for value in (-compiled.WIN, -compiled.MATE - 7, -1, 0, 5, compiled.WIN - 3)
             for depth in (-2, 0, 1, 42, 1000)
             for flag in (compiled.EXACT, compiled.LOWER, compiled.UPPER)
             for move in (-20, -1, 0, 1, 20)]
    for i, (value, depth, flag, move) in enumerate(cases):
        key = 1 + i * 7919
        compiled._tt_store(tt, key, depth, flag, value, move)
        slot = compiled._tt_find(tt, key)
        data = tt[slot, 1]
        assert tt[slot, 0] == key
        assert (data >> 32, compiled._tt_depth(data), compiled._tt_flag(data),
                compiled._tt_move(data)) == (value, depth, flag, move)


def test_only_standard_boards_of_at_most_63_bits_are_compiled():
    assert compiled.available(parse_variant("popout-five"))  # 9 x 7 = 63 bits
    assert not compiled.available(parse_variant("classic:10x9"))
    assert AlphaBetaPlayer(parse_variant("classic:10x9"))._fast() is None  # Python's search
    assert AlphaBetaPlayer(parse_variant("popout-five"))._fast() is not None
    # a line test would shift by 64 (numba, like C, takes shift counts modulo 64)
    assert not compiled.available(parse_variant("classic:4x14,connect=5"))
    assert compiled.available(parse_variant("classic:4x13,connect=5"))
    # more plies than the repetition table has room for
    assert not compiled.available(parse_variant("popout,max-plies=5000"))


def test_a_failed_compile_outside_leaves_no_stamp_and_the_machine_code_in_place(tmp_path,
                                                                              monkeypatch):
    from arena import numba_cache

    module = tmp_path / "mod.py"
    module.write_text("x = 1\n")
    (tmp_path / "__pycache__").mkdir()
    code = tmp_path / "__pycache__" / "mod.f-1.py311.nbi"
    code.write_bytes(b"machine code")
    numba_cache._stamp(module).write_text("a stamp of an earlier compile\n")
    monkeypatch.setitem(numba_cache.BUNDLED, module, ("raise SystemExit(3)", ("bot",)))
    assert numba_cache.warm.__wrapped__(module) is False
    assert not numba_cache._stamp(module).exists() and code.read_bytes() == b"machine code"


SANDBOXED_LOAD = """
import sys
sys.path.insert(0, '.')
import compiled
compiled.warm_up()
stats = compiled.node.stats
print(sum(stats.cache_hits.values()), sum(stats.cache_misses.values()), stats.cache_path)
"""


def test_a_read_only_bot_folder_loads_the_code_compiled_outside(tmp_path):
    """seed_private_cache: numba, unable to write beside the module, gets a private cache holding
    copies of the machine code found there, and loads it (a hit, no compile)."""
    code = ("import arena.numba_cache as cache; cache._writable = lambda folder: False\n"
            + SANDBOXED_LOAD)
    out = subprocess.run([sys.executable, "-c", code], cwd=BOT, capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path)}, timeout=300)
    assert out.returncode == 0, out.stderr
    hits, misses, path = out.stdout.split()
    assert (int(hits), int(misses)) == (1, 0) and path.startswith(str(tmp_path))


def test_a_sandboxed_bundled_bot_loads_machine_code_instead_of_compiling(tmp_path):
    from arena import numba_cache, sandbox

    policy = sandbox.SandboxPolicy("on")
    try:
        enabled = policy.enabled
    except sandbox.SandboxUnavailable as error:
        pytest.skip(str(error))
    assert enabled
    argv, env = sandbox.wrap([sys.executable, "-c", SANDBOXED_LOAD],
                             {"PATH": "/usr/bin:/bin"}, BOT, policy)
    assert numba_cache.is_warm(BOT / "compiled.py")  # wrap compiled it out here
    out = subprocess.run(argv, cwd=BOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    hits, misses, _ = out.stdout.split()
    assert (int(hits), int(misses)) == (1, 0)


def test_the_bot_says_how_deep_it_searched_with_each_move():
    from arena import protocol

    variant = parse_variant("five")
    lines = [protocol.hello_line(),
             protocol.game_line("g1", 1, variant.describe(), {"move_ms": 300}, "opponent"),
             protocol.turn_line([], 300, None), protocol.QUIT_LINE]
    out = subprocess.run([sys.executable, str(BOT / "alphabeta.py")], cwd=BOT, timeout=120,
                         input="\n".join(lines) + "\n", capture_output=True, text=True)
    replies = out.stdout.splitlines()
    assert replies[-1].startswith("move "), out.stderr
    assert re.fullmatch(r"info depth \d+ score -?\d+ search (compiled|python)", replies[-2])


def test_the_bot_plays_the_book_in_classic_and_says_so():
    """A real alphabeta process plays the book's best move, with an `info book score S` line,
    from its first move on: it waits there, within the start-up allowance, for the book its
    loader thread reads."""
    from arena import protocol
    from arena.game.moves import format_move, parse_move
    from arena.solver.book import load_classic
    from arena.solver.oracle import Oracle

    variant = parse_variant("classic")
    book = load_classic()
    proc = subprocess.Popen([sys.executable, str(BOT / "alphabeta.py")], cwd=BOT, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        def send(line: str) -> None:
            proc.stdin.write(line + "\n")
            proc.stdin.flush()

        def reply_to_turn() -> list[str]:
            lines = []
            while not lines or not lines[-1].startswith("move "):
                line = proc.stdout.readline()
                assert line, "the bot exited"
                lines.append(line.strip())
            return lines

        send(protocol.hello_line())
        assert proc.stdout.readline().startswith("hello")
        send(protocol.game_line("g1", 1, variant.describe(), {"move_ms": 200, "startup_ms": 5000},
                                    "opponent"))
        game = Game(variant)
        for reply in (4, 1):  # the opponent's replies
            send(protocol.turn_line([format_move(m) for m in game.moves], 200, None))
            lines = reply_to_turn()
            scores = book.move_scores(*Oracle.position(game))
            best = max(scores.values())
            move = parse_move(lines[-1].split()[1])
            assert lines[-2] == f"info book score {best}" and scores[move - 1] == best, lines
            game.push(move)
            game.push(reply)
    finally:
        proc.kill()
        proc.wait()


def test_the_first_move_keeps_its_own_time_after_waiting_for_the_loader():
    """The first move of a process waits for the book and numba within the start-up allowance,
    then searches for its whole time: it must not have spent its time on the wait."""
    from arena import protocol

    variant = parse_variant("five")  # no book: the move is searched
    lines = [protocol.hello_line(),
             protocol.game_line("g1", 1, variant.describe(),
                                {"move_ms": 300, "startup_ms": 5000}, "opponent"),
             protocol.turn_line([], 300, None), protocol.QUIT_LINE]
    out = subprocess.run([sys.executable, str(BOT / "alphabeta.py")], cwd=BOT, timeout=120,
                         input="\n".join(lines) + "\n", capture_output=True, text=True)
    replies = out.stdout.splitlines()
    assert replies[-1].startswith("move "), out.stderr
    depth = int(re.fullmatch(r"info depth (\d+) score -?\d+ search \w+", replies[-2])[1])
    assert depth >= 3, replies  # depth 1: the wait took the move's time


def test_the_loader_puts_numbas_objects_out_of_the_collectors_sight():
    """alphabeta collects garbage between games; with numba's ~100,000 objects in sight that took
    70-90 ms, on the clock of a first turn sent right behind the game line."""
    code = ("import gc, sys; sys.path.insert(0, '.'); import alphabeta; alphabeta.load_compiled(); "
            "print(gc.get_freeze_count())")
    out = subprocess.run([sys.executable, "-c", code], cwd=BOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) > 50_000, out.stdout
