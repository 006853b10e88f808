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


# -- the position as text and as a static picture ----------------------------------------------

# The discs' colours as style.css draws them (--p1, --p2, in both colour schemes): the position
# text names a disc by its colour, and says once which bot each colour is.
SEAT_COLOURS = {1: "red", 2: "yellow"}


def _column_discs(board: list[str], column: int) -> list[int]:
    """The seats of a column's discs, bottom up (`board` is top row first)."""
    return [int(line[column - 1]) for line in reversed(board) if line[column - 1] in "12"]


def position_text(replay: dict, index: int, first: str, second: str) -> str:
    """Frame `index` of a replay in words, the board's name for a screen reader.

    The move list and the status line give the moves, not the board after them; in PopOut,
    where discs move down, a listener cannot rebuild the board from the moves (a11y review).
    So: the ply and whose turn, each column's discs bottom up by colour, the winning line at
    the end, and which bot each colour is.
    """
    frames = replay["frames"]
    frame = frames[index]
    variant = replay["variant"]
    last = index == len(frames) - 1
    names = {1: first, 2: second}
    if frame["ply"] == 0:
        head = "Start position"
    else:
        head = f"Position after ply {frame['ply']} of {len(frames) - 1}"
    if last and replay.get("outcome") is not None:
        head += ", game over"
    else:
        to_move = 1 if frame["seat"] is None else 3 - frame["seat"]
        head += f", {SEAT_COLOURS[to_move]} ({names[to_move]}) to move"
    fixed = set(variant.get("fixed_columns") or [])
    columns = []
    for c in range(1, variant["columns"] + 1):
        discs = _column_discs(frame["board"], c)
        where = f"{c} (fixed)" if c in fixed else str(c)
        columns.append(f"{where}: " + (", ".join(SEAT_COLOURS[s] for s in discs) or "empty"))
    text = f"{head}. Columns from the bottom up: {'; '.join(columns)}."
    cells = replay.get("winning_cells") or []
    if last and cells:
        owner = _column_discs(frame["board"], cells[0][0])[cells[0][1] - 1]
        where = ", ".join(f"column {c} row {r}" for c, r in sorted(map(tuple, cells)))
        text += f" Winning line, {SEAT_COLOURS[owner]}: {where}."
    return text + f" Red is {first}, yellow is {second}."


def add_position_texts(replay: dict, first: str, second: str) -> None:
    """Give every frame its `text` (see `position_text`): replay.js names the board with it.

    Made here, once, so that the page without JavaScript (the static board) and the viewer
    say the same, and the wording is tested in Python."""
    for i, frame in enumerate(replay["frames"]):
        frame["text"] = position_text(replay, i, first, second)


# The board's geometry in the SVG's user units; replay.js draws with the same numbers.
CELL, PAD, TOP = 10, 2, 9
DISC_R, MARK_R = 3.9, 1.7


def _n(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


def board_svg(replay: dict) -> dict[str, str]:
    """The final position as static SVG: the board a page shows before (or without) its script.

    Returns ``viewbox``, ``label`` (the position text, when `add_position_texts` gave one),
    ``over`` (``"over"`` when a line won) and ``markup``, the SVG's content; replay.js clears
    and redraws it, so the two must draw alike (same classes, same geometry)."""
    variant = replay["variant"]
    cols, rows = variant["columns"], variant["rows"]
    fixed = set(variant.get("fixed_columns") or [])
    bottom = 15 if variant.get("pops") or fixed else 6
    width, height = cols * CELL + 2 * PAD, TOP + rows * CELL + 2 * PAD + bottom
    frame = replay["frames"][-1]
    winning = {tuple(cell) for cell in replay.get("winning_cells") or []}

    def cx(c: float) -> float:
        return PAD + (c - 0.5) * CELL

    def cy(r: float) -> float:
        return TOP + PAD + (rows - r + 0.5) * CELL

    below = TOP + rows * CELL + 2 * PAD
    out = ['<g class="static">',
           f'<rect class="frame" x="0.3" y="{_n(TOP + 0.3)}" width="{_n(width - 0.6)}" '
           f'height="{_n(rows * CELL + 2 * PAD - 0.6)}" rx="2.5"/>']
    for c in range(1, cols + 1):
        if c in fixed:
            out.append(f'<rect class="fixed-col" x="{_n(PAD + (c - 1) * CELL + 0.4)}" '
                       f'y="{_n(TOP + PAD - 0.8)}" width="{_n(CELL - 0.8)}" '
                       f'height="{_n(rows * CELL + 1.6)}" rx="1.5"/>')
            out.append(f'<text class="label fixed" x="{_n(cx(c))}" y="{_n(below + 8.6)}">fixed</text>')
        out.append(f'<text class="label" x="{_n(cx(c))}" y="{_n(below + 4)}">{c}</text>')
        out.extend(f'<circle class="hole" cx="{_n(cx(c))}" cy="{_n(cy(r))}" r="{DISC_R}"/>'
                   for r in range(1, rows + 1))
    out.append('</g><g class="discs">')
    for c in range(1, cols + 1):
        discs = _column_discs(frame["board"], c)
        for r, seat in enumerate(discs, start=1):
            cls = f"disc p{seat}"
            if (c, r) in winning:
                cls += " win"
            if frame["kind"] == "drop" and c == frame["column"] and r == len(discs):
                cls += " last"
            out.append(f'<circle class="{cls}" cx="{_n(cx(c))}" cy="{_n(cy(r))}" r="{DISC_R}" '
                       f'data-col="{c}" data-row="{r}" data-owner="{seat}"/>')
            if seat == 2:
                out.append(f'<circle class="mark" cx="{_n(cx(c))}" cy="{_n(cy(r))}" r="{MARK_R}"/>')
    out.append('</g><g class="overlay">')
    if frame["kind"] == "drop":
        out.append(f'<path class="marker" d="M{_n(cx(frame["column"]) - 2.4)} {_n(TOP - 5.5)} '
                   'h4.8 l-2.4 3.6 z"/>')
    elif frame["kind"] == "pop":  # the popped disc leaves through the bottom, as in replay.js
        c, seat = frame["column"], frame["seat"]
        out.append(f'<rect class="marker" x="{_n(PAD + (c - 1) * CELL + 0.6)}" '
                   f'y="{_n(TOP + 0.4)}" width="{_n(CELL - 1.2)}" height="1.2" rx="0.6" '
                   'opacity="0.7"/>')
        out.append(f'<g class="pop-marker" data-pop-column="{c}">'
                   f'<circle class="disc p{seat} popped" cx="{_n(cx(c))}" cy="{_n(below + 10)}" '
                   'r="3.2"/>')
        if seat == 2:
            out.append(f'<circle class="mark" cx="{_n(cx(c))}" cy="{_n(below + 10)}" r="1.4"/>')
        out.append(f'<circle class="popped-ring" cx="{_n(cx(c))}" cy="{_n(below + 10)}" r="4.2"/>'
                   f'<text class="marker-text" x="{_n(cx(c))}" y="{_n(TOP - 2.5)}">pop</text></g>')
    ends = sorted(winning)
    if len(ends) >= 2 and _collinear(ends):
        (c1, r1), (c2, r2) = ends[0], ends[-1]
        coords = f'x1="{_n(cx(c1))}" y1="{_n(cy(r1))}" x2="{_n(cx(c2))}" y2="{_n(cy(r2))}"'
        out.append(f'<line class="winline-under" {coords}/><line class="winline" {coords}/>')
    out.append("</g>")
    return {"viewbox": f"0 0 {_n(width)} {_n(height)}", "markup": "".join(out),
            "label": frame.get("text", "board"), "over": "over" if len(winning) else ""}


def _collinear(cells: list[tuple[int, int]]) -> bool:
    (ax, ay), (bx, by) = cells[0], cells[-1]
    return all((bx - ax) * (py - ay) - (by - ay) * (px - ax) == 0 for px, py in cells)
