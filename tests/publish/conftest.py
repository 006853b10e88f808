"""Fixtures for the publish tests: a synthetic games table made of real, legal engine games."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from arena.game import Game, format_move, parse_variant

BOTS = ("alpha", "beta bot", "gamma/γ")


def play_random(spec: str, rng: random.Random, stop_at: int | None = None) -> Game:
    game = Game(parse_variant(spec))
    while game.outcome is None and (stop_at is None or game.ply < stop_at):
        moves = game.legal_moves()
        pops = [m for m in moves if m < 0]
        # prefer pops now and then so that PopOut games really pop
        move = rng.choice(pops) if pops and rng.random() < 0.3 else rng.choice(moves)
        game.push(move)
    return game


def synthetic_games(seed: int = 7, rounds: int = 2):
    """Round robin of three bots on classic, popout and five, with a few forfeits."""
    import pandas as pd

    rng = random.Random(seed)
    rows = []
    seq = 0
    variants = [parse_variant(v).spec for v in ("classic", "popout", "five")]
    for spec in variants:
        for r in range(rounds):
            for i, a in enumerate(BOTS):
                for j, b in enumerate(BOTS):
                    if a == b:
                        continue
                    seq += 1
                    forfeit = rng.random() < 0.12
                    stop = rng.randint(2, 9) if forfeit else None
                    game = play_random(spec, rng, stop)
                    moves = [format_move(m) for m in game.moves]
                    times = [round(rng.lognormvariate(2.5, 1.0), 1) for _ in moves]
                    if game.outcome is not None:
                        winner = game.outcome.winner
                        reason = game.outcome.reason
                        forfeit_by = None
                        detail = ""
                    else:
                        forfeit_by = game.to_move
                        winner = 3 - forfeit_by
                        reason = rng.choice(["timeout", "crash", "illegal"])
                        detail = f"{reason} at ply {game.ply + 1}"
                    result = 0.5 if winner is None else (1.0 if winner == 1 else 0.0)
                    rows.append({
                        "game_id": f"{spec}-r{r}-{i}{j}",
                        "seq": seq,
                        "variant": spec,
                        "first": a,
                        "second": b,
                        "result": result,
                        "winner": float("nan") if winner is None else float(winner),
                        "reason": reason,
                        "forfeit_by": float("nan") if forfeit_by is None else float(forfeit_by),
                        "plies": len(moves),
                        "moves": " ".join(moves),
                        "opening": "",
                        "pair_id": f"{spec}-r{r}-{min(a, b)}-{max(a, b)}",
                        "move_ms": json.dumps(times),
                        "move_cpu_ms": json.dumps(times),
                        "detail": detail,
                        "started_at": f"2024-05-01T10:{seq // 60:02d}:{seq % 60:02d}Z",
                        "finished_at": f"2024-05-01T10:{seq // 60:02d}:{seq % 60:02d}Z",
                        "first_hash": f"{abs(hash(a)) % 10**12:012x}" * 4,
                        "second_hash": f"{abs(hash(b)) % 10**12:012x}" * 4,
                        "first_version": "1.0",
                        "second_version": "2.1",
                    })
    # one void game, which must be left out
    rows.append({**rows[0], "game_id": "void-1", "seq": seq + 1, "result": float("nan"),
                 "reason": "handshake"})
    return pd.DataFrame(rows)


@pytest.fixture(scope="session")
def games_df():
    return synthetic_games()


@pytest.fixture(scope="session")
def synthetic_site(tmp_path_factory, games_df) -> Path:
    from arena.publish.site import build_site_from_games
    from arena.referee import log_file_name

    logs = tmp_path_factory.mktemp("logs")
    for row in games_df.itertuples():
        if row.forfeit_by == row.forfeit_by:  # not NaN
            seat = int(row.forfeit_by)
            name = row.first if seat == 1 else row.second
            (logs / log_file_name(row.game_id, seat, name)).write_text(
                "starting\n" + "\n".join(f"thinking {i}" for i in range(60)) + "\nTraceback: boom\n"
            )
    out = tmp_path_factory.mktemp("site")
    settings = {"name": "Synthetic cup", "time_control": {"move_ms": 50}, "arena_version": "0.1.0"}
    return build_site_from_games(games_df, out, settings=settings, logs_dir=logs)
