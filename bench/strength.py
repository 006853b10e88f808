"""Strength against perfect play: alphabeta's blunder rate, and the perfect bot's move times.

    python bench/strength.py [--positions 300] [--alphabeta-ms 100 ...] [--perfect-positions 10]
                             [--perfect-plies 8 ...] [--perfect-random] [--judge-ms 60000]
                             [--budget-ms 1000] [--seed 1] [--python-search]
                             [--games N] [--game-ms 1000] [--game-level hard] [--game-openings]

Positions come from games between two noisy `alphabeta --level medium` players (in-process,
seeded), plies 8-30: positions a real game reaches, not random ones. Only positions the exact
solver settles within `--budget-ms` are used (the count of the others is printed). For each, the
bundled alphabeta (level hard) chooses a move in the given time; the move is a blunder when it
turns a win into a draw or loss, or a draw into a loss (judged by `arena.solver`).

Then the perfect bot (in-process, its own tables, as in a game) chooses a move from the empty
board and from `--perfect-positions` positions of each of `--perfect-plies` (default: 8 plies)
with a 1 s deadline: the time it took, whether its exact score was proven (`exact`), whether at
least its win/draw/loss result was (`result_proven`; the rest came from the fallback search), and
whether it was optimal (it keeps the position's exact score: the fastest win, a draw, the slowest
loss), judged by the solver with `--judge-ms` per position (positions it cannot settle are
counted as unjudged). A drawn position needs only its result proven, and a search move is often
right, so `optimal` is what perfect play asks for, and `exact` a lower bound of it.
`--perfect-random` adds positions of uniformly random play at each ply (not positions a real game
reaches, but "any position"). `--positions 0 --perfect-plies 4 6 8 10 12`
measures only that.

With `--games N` it also plays N games of perfect against alphabeta (level hard) from the empty
board (or, with `--game-openings`, from `arena play`'s built-in openings in turn), seats
alternating, `--game-ms` a move each (`--game-level medium` or `easy`: noisy, so the games
differ): perfect's score per seat (from the empty board the first player wins with perfect
play, so perfect must win every game it starts; the built-in openings are draws, so it must not
lose one), and the share of its moves that were exact and their worst time, by phase (plies
0-12, where the strategy book answers every move from the empty board, through ply 10 from the
openings (`arena.solver.strategy`), 13-20 and 21 on).

With `--ladder RESULTS` (a results folder of `arena run tournaments/ladder.toml`, or any
other tournament of the bundled bots) it prints instead, per variant, the score of each bot
against the next one down the variant's Elo ranking (`ladder_<variant>_<upper>_vs_<lower>`),
with the games it rests on: the measured ladder the README's table shows.

Prints `name: value unit` lines.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bots" / "alphabeta"))
sys.path.insert(0, str(ROOT / "bots" / "perfect"))

from perfect_player import PerfectPlayer  # noqa: E402
from player import AlphaBetaPlayer  # noqa: E402

from arena.game import PRESETS, Game  # noqa: E402
from arena.openings import builtin_openings  # noqa: E402
from arena.solver.analysis import sign, wilson  # noqa: E402
from arena.solver.oracle import Oracle  # noqa: E402

CLASSIC = PRESETS["classic"]


def medium_game(rng: random.Random, seed: int, number: int, high: int = 42):
    """The positions of one game between two noisy `alphabeta --level medium` players (a random
    first move, then 20 ms a move), one after each ply until the game ends or reaches `high`."""
    players = [AlphaBetaPlayer(CLASSIC, "medium", seed * 1000 + number),
               AlphaBetaPlayer(CLASSIC, "medium", seed * 1000 + number + 500)]
    game = Game(CLASSIC)
    game.push(rng.choice(game.legal_moves()))  # a varied start
    yield game
    while game.outcome is None and game.ply < high:
        game.push(players[game.ply % 2].choose(game.copy(), time.monotonic() + 0.02))
        yield game


def game_positions(count: int, seed: int, low: int = 8, high: int = 30) -> list[list[int]]:
    """Move lists of `count` distinct positions (plies low..high) from medium-level games."""
    rng = random.Random(seed)
    found: dict[tuple[int, ...], None] = {}
    game_no = 0
    while len(found) < count:
        game_no += 1
        for game in medium_game(rng, seed, game_no, high):
            if game.outcome is None and game.ply >= low and rng.random() < 0.3:
                found.setdefault(tuple(game.moves), None)
                if len(found) >= count:
                    break
    return [list(m) for m in found]


def replay(moves: list[int]) -> Game:
    game = Game(CLASSIC)
    for m in moves:
        game.push(m)
    return game


def mover_score_after(oracle: Oracle, game: Game, move: int, budget_s: float,
                      exact: bool = False) -> int | None:
    """The score, for the side that plays `move`, of the position after it: its sign only, or
    (`exact`) Pons' score; None when the solver does not settle it within `budget_s`."""
    child = game.copy()
    outcome = child.push(move)
    if outcome is not None:  # the rules end the game: no solve
        if outcome.winner is None:
            return 0
        return (CLASSIC.cells - game.ply + 1) // 2 if exact else 1
    value = oracle.timed(oracle.score if exact else oracle.weak_score, child, budget_s)
    return None if value is None else -value


def blunder_rate(oracle: Oracle, positions: list[list[int]], move_ms: int,
                 budget_s: float) -> tuple[int, int, int]:
    """(judged, blunders, unsettled) of alphabeta hard at `move_ms` per move."""
    player = AlphaBetaPlayer(CLASSIC, "hard", 1)
    judged = blunders = unsettled = 0
    for moves in positions:
        game = replay(moves)
        before = oracle.timed(oracle.weak_score, game, budget_s)
        if before is None:
            unsettled += 1
            continue
        player.new_game()
        move = player.choose(game.copy(), time.monotonic() + move_ms / 1000)
        after = mover_score_after(oracle, game, move, budget_s)
        if after is None:
            unsettled += 1
            continue
        judged += 1
        blunders += sign(after) < sign(before)
    return judged, blunders, unsettled


def perfect_times(positions: list[list[int]]) -> tuple[list[float], int, int, list[int]]:
    """(seconds per move, how many moves had their exact score proven, how many at least their
    win/draw/loss result, the moves) of the perfect bot, 1 s per move."""
    player = PerfectPlayer(CLASSIC)
    player.new_game()  # as the bot does before a game: tables made, the solver's rate measured
    times, exact, proven, moves_played = [], 0, 0, []
    for moves in positions:
        game = replay(moves)
        start = time.monotonic()
        moves_played.append(player.choose(game, start + 1.0))
        times.append(time.monotonic() - start)
        exact += player.last.startswith("exact score")
        proven += player.last.startswith(("exact", "search within the proven result"))
    return times, exact, proven, moves_played


def optimal_moves(oracle: Oracle, positions: list[list[int]], moves: list[int],
                  budget_s: float) -> tuple[int, int]:
    """(judged, optimal): how many of the moves keep their position's exact score (the fastest
    win, a draw, the slowest loss), judged by the solver with `budget_s` per position; a move
    is optimal whatever its own search proved (a search move is often right)."""
    judged = optimal = 0
    for played, move in zip(positions, moves, strict=True):
        game = replay(played)
        before = oracle.timed(oracle.score, game, budget_s)
        after = mover_score_after(oracle, game, move, budget_s, exact=True)
        if before is None or after is None:
            continue
        judged += 1
        optimal += after == before
    return judged, optimal


def random_positions(count: int, ply: int, seed: int) -> list[list[int]]:
    """Move lists of `count` positions reached by uniformly random moves, not yet over."""
    rng = random.Random(seed)
    found: list[list[int]] = []
    while len(found) < count:
        game = Game(CLASSIC)
        while game.ply < ply and game.outcome is None:
            game.push(rng.choice(game.legal_moves()))
        if game.outcome is None:
            found.append(list(game.moves))
    return found


def perfect_lines(name: str, oracle: Oracle, positions: list[list[int]],
                  judge_s: float) -> list[str]:
    """The perfect bot's lines for one set of positions: move times, proofs, optimal moves."""
    times, exact, proven, moves = perfect_times(positions)
    judged, optimal = optimal_moves(oracle, positions, moves, judge_s)
    n = len(positions)
    return [f"{name}_positions: {n} count",
            f"{name}_move_time_mean: {1000.0 * sum(times) / n:.0f} ms",
            f"{name}_move_time_max: {1000.0 * max(times):.0f} ms",
            f"{name}_exact: {100.0 * exact / n:.0f} %",
            f"{name}_result_proven: {100.0 * proven / n:.0f} %",
            f"{name}_optimal: {100.0 * optimal / max(1, judged):.0f} %",
            f"{name}_unjudged: {n - judged} count"]


PHASES = ((0, 12), (13, 20), (21, 42))


def perfect_games(count: int, move_ms: int, seed: int, level: str = "hard",
                  openings: list[tuple[int, ...]] | None = None) -> list[str]:
    """`name: value unit` lines of `count` games of perfect vs alphabeta (at `level`; below
    hard its moves are noisy, seeded per game, so the games differ) from the empty board, or
    from each of `openings` in turn (each with both seats)."""
    openings = openings or [()]
    points = {1: [], 2: []}  # perfect's points per game, by its seat
    exact = {phase: [] for phase in PHASES}  # per perfect move: exact score proven?
    slowest = {phase: 0.0 for phase in PHASES}
    for number in range(count):
        seat = 1 + number % 2
        perfect = PerfectPlayer(CLASSIC)
        players = {seat: perfect, 3 - seat: AlphaBetaPlayer(CLASSIC, level, seed + number)}
        game = Game(CLASSIC)
        for move in openings[(number // 2) % len(openings)]:
            game.push(move)
        while game.outcome is None:
            start = time.monotonic()
            move = players[game.to_move].choose(game.copy(), start + move_ms / 1000)
            took = time.monotonic() - start
            if game.to_move == seat:
                phase = next(p for p in PHASES if p[0] <= game.ply <= p[1])
                exact[phase].append(perfect.last.startswith("exact score"))
                slowest[phase] = max(slowest[phase], took)
            game.push(move)
        winner = game.outcome.winner
        points[seat].append(0.5 if winner is None else float(winner == seat))
    start = "openings" if openings != [()] else "empty_board"
    lines = [f"perfect_games_vs_alphabeta_{level}_from_{start}: {count} games"]
    for seat, got in points.items():
        if got:
            lines.append(f"perfect_score_seat{seat}: {100.0 * sum(got) / len(got):.1f} %")
    lines.append(f"perfect_losses: {sum(p == 0.0 for got in points.values() for p in got)} count")
    for (low, high), flags in exact.items():
        if flags:
            name = f"perfect_game_plies_{low}_{high}"
            lines.append(f"{name}_exact: {100.0 * sum(flags) / len(flags):.1f} %")
            lines.append(f"{name}_moves: {len(flags)} count")
            lines.append(f"{name}_move_time_max: {1000.0 * slowest[(low, high)]:.0f} ms")
    return lines


def ladder_lines(results: Path) -> list[str]:
    """Per variant, each bot's score against the next one down that variant's Elo ranking."""
    from arena.ratings.pairs import pairwise_table
    from arena.ratings.standings import ALL, standings_by_variant
    from arena.reports.games_io import load_games

    games = load_games(results)
    lines = []
    for variant, table in standings_by_variant(games, skip=frozenset({"trueskill"})).items():
        if variant == ALL:
            continue
        ranking = list(table["bot"])
        pairs = pairwise_table(games, variant=variant)
        by_pair = {(r.bot_a, r.bot_b): r for r in pairs.itertuples(index=False)}
        for upper, lower in zip(ranking, ranking[1:], strict=False):
            row = by_pair.get((upper, lower))
            if row is None and (lower, upper) not in by_pair:
                continue  # they never met (a gauntlet): no score to print
            score = row.score if row is not None else 1.0 - by_pair[(lower, upper)].score
            count = (row or by_pair[(lower, upper)]).games
            name = f"ladder_{variant}_{upper}_vs_{lower}"
            lines.append(f"{name}: {100.0 * score:.1f} %")
            lines.append(f"{name}_games: {count} games")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ladder", type=Path, default=None, metavar="RESULTS",
                        help="print the ladder's adjacent scores per variant from these results")
    parser.add_argument("--positions", type=int, default=300)
    parser.add_argument("--alphabeta-ms", type=int, nargs="+", default=[100])
    parser.add_argument("--perfect-positions", type=int, default=10, help="positions per ply")
    parser.add_argument("--perfect-plies", type=int, nargs="+", default=[8], metavar="PLY",
                        help="plies of the positions the perfect bot is timed on (default 8)")
    parser.add_argument("--budget-ms", type=int, default=1000,
                        help="solver time per judged position")
    parser.add_argument("--judge-ms", type=int, default=60000,
                        help="solver time per position when judging the perfect bot's moves")
    parser.add_argument("--perfect-random", action="store_true",
                        help="also time the perfect bot on positions of random play, per ply")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--games", type=int, default=0,
                        help="games of perfect vs alphabeta from the empty board (default 0)")
    parser.add_argument("--game-ms", type=int, default=1000, help="per move in --games")
    parser.add_argument("--game-openings", action="store_true",
                        help="start --games from arena play's built-in openings, not the empty board")
    parser.add_argument("--game-level", choices=("easy", "medium", "hard"), default="hard",
                        help="alphabeta's level in --games (default hard)")
    parser.add_argument("--python-search", action="store_true",
                        help="alphabeta without its compiled search (as before numba)")
    args = parser.parse_args(argv)
    if args.ladder is not None:
        print("\n".join(ladder_lines(args.ladder)))
        return 0
    if not args.python_search:
        import compiled  # as alphabeta.py does at start: its players use it from then on

        compiled.warm_up()
    print(f"alphabeta_search_compiled: {int(not args.python_search)} bool")
    oracle = Oracle(CLASSIC)
    oracle.score(replay([4, 4, 4, 4, 3, 3, 5, 5, 2]), nodes=1000)  # compile before timing
    positions = game_positions(args.positions, args.seed)
    budget = args.budget_ms / 1000
    for ms in args.alphabeta_ms if positions else []:  # --positions 0: the perfect bot only
        judged, blunders, unsettled = blunder_rate(oracle, positions, ms, budget)
        low, high = wilson(blunders, judged)
        name = f"alphabeta_{ms}ms"
        print(f"{name}_positions_judged: {judged} count")
        print(f"{name}_positions_unsettled: {unsettled} count")
        print(f"{name}_blunder_rate: {100.0 * blunders / max(1, judged):.2f} %")
        print(f"{name}_blunder_rate_low95: {100.0 * low:.2f} %")
        print(f"{name}_blunder_rate_high95: {100.0 * high:.2f} %")
    times, exact, _, _ = perfect_times([[]])
    print(f"perfect_empty_board_move_time: {1000.0 * times[0]:.0f} ms")
    print(f"perfect_empty_board_exact: {exact} count")
    judge_s = args.judge_ms / 1000
    for ply in args.perfect_plies if args.perfect_positions else []:
        found = [m[:ply] for m in game_positions(args.perfect_positions, args.seed + ply - 7, ply, ply + 1)]
        print("\n".join(perfect_lines(f"perfect_{ply}ply", oracle, found, judge_s)), flush=True)
        if args.perfect_random:
            found = random_positions(args.perfect_positions, ply, args.seed + ply)
            print("\n".join(perfect_lines(f"perfect_random_{ply}ply", oracle, found, judge_s)),
                  flush=True)
    if args.games:
        print("\n".join(perfect_games(args.games, args.game_ms, args.seed, args.game_level,
                                  builtin_openings(CLASSIC) if args.game_openings else None)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
