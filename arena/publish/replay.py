"""Replay frames computed by the rules engine, so that the browser only draws.

Every game page embeds the output of :func:`replay_frames` as JSON: the board after each ply (top
row first, as `Game.board_rows()` gives it), the move that led to it (drop or pop, column, seat),
its wall-clock time, and at the end the winning cells. The JavaScript viewer never applies rules.
"""

from __future__ import annotations

import json
from typing import Any

from arena.game import Game, IllegalMoveError, MoveError, format_move, parse_move, parse_variant
from arena.reasons import REASON_PHRASES
from arena.schema import opening_plies, ply_times


def replay_frames(variant_spec: str, moves: str | list[str], move_ms: Any = None,
                  opening: Any = "") -> dict:
    """Replay a game with the engine and describe every position for the viewer.

    Returns a JSON-ready dict: ``variant`` (the engine's `describe()` plus the preset name),
    ``frames`` (frame 0 is the start position; frame i is the board after ply i, with ``move``,
    ``kind`` ``"drop"``/``"pop"``, ``column`` (1-based), ``seat``, ``ms`` and ``opening``: a
    move of the `opening` the arena set, whose ``ms`` is None), ``winning_cells``
    (1-based ``[column, row]``, row 1 at the bottom), ``outcome`` (engine outcome or None when the
    game stopped early, e.g. a forfeit), ``error`` (text if a recorded move could not be played)
    and ``error_ply`` (the ply of that move, else None).
    """
    variant = parse_variant(variant_spec)
    game = Game(variant)
    tokens = moves.split() if isinstance(moves, str) else list(moves)
    set_by_arena = opening_plies(opening)
    times = [None if t is None else round(t, 1) for t in ply_times(move_ms)]
    frames: list[dict] = [
        {"ply": 0, "board": game.board_rows(), "move": None, "kind": None, "column": None,
         "seat": None, "ms": None}
    ]
    error = None
    error_ply = None
    for i, token in enumerate(tokens):
        seat = game.to_move
        try:
            move = parse_move(token)
            game.push(move)
        except (MoveError, IllegalMoveError) as exc:
            error = f"ply {i + 1}: {exc}"
            error_ply = i + 1
            break
        frames.append({
            "ply": i + 1,
            "board": game.board_rows(),
            "move": format_move(move),
            "kind": "drop" if move > 0 else "pop",
            "column": abs(move),
            "seat": seat,
            # the opening's moves are the arena's, not the bots' (their 0 ms is no time)
            "ms": times[i] if i < len(times) and i >= set_by_arena else None,
            "opening": i < set_by_arena,
        })
    outcome = None
    if game.outcome is not None:
        outcome = {"winner": game.outcome.winner, "reason": game.outcome.reason}
    description = variant.describe()
    description["name"] = variant.name
    return {
        "variant": description,
        "frames": frames,
        "winning_cells": [list(cell) for cell in game.winning_cells()],
        "outcome": outcome,
        "final_board": game.board_rows(),
        "error": error,
        "error_ply": error_ply,
        "reason_texts": REASON_PHRASES,
    }


def frames_json(data: dict) -> str:
    """JSON safe to embed inside a `<script>` element."""
    text = json.dumps(data, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
