"""`arena openings`: an openings file of positions with a known theoretical value."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import click

from arena.cli_common import WholeRange, solver_processes_option
from arena.game import DEFAULT_VARIANT

LABELS = {1: "first player wins", 0: "draw", -1: "second player wins"}


def positions_at(variant, plies: int, count: int, seed: int) -> list[list[int]]:
    """Move lists of distinct positions `plies` moves in (mirror images counted once), the game
    not over: all of them when there are at most `count`, else `count` drawn at random."""
    from arena.game import Game
    from arena.solver.book import book_key

    def key(game: Game) -> int:
        side = game.to_move - 1
        cur, mask = game.boards[side], game.boards[0] | game.boards[1]
        return book_key(cur, mask, variant.columns, variant.rows)

    level: dict[int, list[int]] = {key(Game(variant)): []}
    for _ in range(plies):
        nxt: dict[int, list[int]] = {}
        for moves in level.values():
            game = Game(variant)
            for m in moves:
                game.push(m)
            for m in game.legal_moves():
                game.push(m)
                if game.outcome is None:
                    nxt.setdefault(key(game), moves + [m])
                game.pop()
        level = nxt
        if len(level) > 20_000:  # listing them all would take longer than solving
            return _sample(variant, plies, count, seed, key)
    found = sorted(level.values())
    if len(found) > count:
        found = sorted(random.Random(seed).sample(found, count))
    return found


def _sample(variant, plies: int, count: int, seed: int, key) -> list[list[int]]:
    """`count` distinct positions from random games (too many positions to list them all)."""
    from arena.game import Game

    rng = random.Random(seed)
    found: dict[int, list[int]] = {}
    attempts = 0
    while len(found) < count and attempts < 50 * count:
        attempts += 1
        game = Game(variant)
        for _ in range(plies):
            game.push(rng.choice(game.legal_moves()))
            if game.outcome is not None:
                break
        if game.outcome is None:
            found.setdefault(key(game), list(game.moves))
    return sorted(found.values())


@click.command(name="openings")
@click.option("--variant", "spec", default=DEFAULT_VARIANT, show_default=True, metavar="SPEC",
              help="A variant the exact solver handles (drop-only four in a row, e.g. classic).")
@click.option("--plies", type=WholeRange(min=1), required=True,
              help="Moves in each opening.")
@click.option("--balanced", is_flag=True, help="Only positions whose theoretical value is a draw.")
@click.option("--all", "every", is_flag=True,
              help="Every value, each line labelled with a trailing '# value' comment.")
@click.option("--count", type=WholeRange(min=1), default=100, show_default=True,
              help="At most this many positions are examined (a seeded random choice when "
                   "there are more).")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--budget-ms", type=WholeRange(min=1, max=86_400_000), default=2000, show_default=True,
              help="Solver time per position; a position not settled in it is left out.")
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file (default: standard output).")
@solver_processes_option
def command(spec: str, plies: int, balanced: bool, every: bool, count: int, seed: int,
            budget_ms: int, out: Path | None, concurrency: int | None) -> None:
    """Write an openings file (the format tournaments read: one move list per
    line) of positions PLIES moves in whose theoretical value is known:
    with --balanced only draws, so that paired games test play rather than
    the opening's verdict; with --all every value, labelled."""
    from arena.game import VariantError, format_move, parse_variant
    from arena.solver.scope import unsolvable_message

    try:
        variant = parse_variant(spec)
    except VariantError as exc:
        raise click.BadParameter(str(exc), param_hint="'--variant'") from None
    problem = unsolvable_message(variant)
    if problem:  # said first: --balanced would not make it one (newcomer review)
        raise click.BadParameter(problem, param_hint="'--variant'")
    if balanced == every:
        raise click.UsageError("--balanced and --all: give one, not both" if balanced else
                               "give one of --balanced (draws only) or --all (every value)")
    free = variant.columns * variant.rows - sum(len(column) for column in variant.start)
    if plies >= free:  # the start's discs (five's outer columns) take cells too
        cells = f"the {free} free cells of " if free < variant.columns * variant.rows else ""
        raise click.BadParameter(f"{plies} plies fill {cells}the {variant.columns}x{variant.rows} "
                                 "board", param_hint="'--plies'")
    from contextlib import closing

    from arena.cli_common import stop_exits
    from arena.solver.pool import WorkerDied, in_order
    from arena.solver.tasks import weak_score
    from arena.tournament.config import default_concurrency

    candidates = positions_at(variant, plies, count, seed)
    if not candidates:  # every game is over by then (or random games never got there)
        raise click.ClickException(f"no opening: found no unfinished position {plies} plies "
                                   f"into {variant.spec}; try fewer --plies")
    lines = [f"# arena openings --variant {variant.spec} --plies {plies} "
             f"{'--balanced' if balanced else '--all'} --count {count} --seed {seed}"]
    unsettled = kept = 0
    tasks = [(variant.spec, moves, budget_ms / 1000) for moves in candidates]
    try:
        # closing: a stop or an error ends the workers at once
        with (stop_exits("Stopped: no openings file written."),
              closing(in_order(weak_score, tasks, concurrency or default_concurrency())) as scores):
            solved = list(zip(candidates, scores, strict=True))
    except WorkerDied as exc:
        raise click.ClickException(f"{exc}; no openings file written") from None
    for moves, score in solved:
        if score is None:
            unsettled += 1
            continue
        mover = (score > 0) - (score < 0)
        value = mover if len(moves) % 2 == 0 else -mover  # for seat 1, who moves at even plies
        if balanced and value != 0:
            continue
        text = " ".join(format_move(m) for m in moves)
        lines.append(f"{text}  # {LABELS[value]}" if every else text)
        kept += 1
    unsettled_note = f"{unsettled} not settled within {budget_ms} ms each" if unsettled else ""
    if not kept:
        # an empty file would only fail later, in the tournament that reads it
        found = "is a draw" if balanced else "was settled"
        raise click.ClickException(
            f"no opening: none of the {len(candidates)} position(s) examined {found}"
            + (f" ({unsettled_note})" if unsettled else "")
            + "; try fewer --plies, a larger --budget-ms or --count"
            + (", or --all" if balanced else ""))
    text = "\n".join(lines) + "\n"
    if out is None:
        click.echo(text, nl=False)
    else:
        try:
            out.write_text(text)
        except OSError as exc:
            raise click.ClickException(f"{out}: cannot write: {exc.strerror or exc}") from None
    print(f"{kept} opening(s) of {len(candidates)} position(s) examined"
          + (f"; {unsettled_note} (left out)" if unsettled else ""), file=sys.stderr)
