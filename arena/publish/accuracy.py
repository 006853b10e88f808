"""What the site shows of `arena analyze` (analysis.db beside the games), as plain data.

Per bot: accuracy and blunder rate with its 95% interval, exactly the rows `arena analyze` prints
(`StoredAnalysis.bot_rows`; nothing is recomputed here). Per replayed game: the theoretical value
of every position and the verdict on every move, from the stored move records.

Variant scopes: the analysis keeps each game's variant, so the leaderboard's variant switcher
is followed: the `all` scope pools every analysed game (what `arena analyze` prints), a variant's
scope its games only. A scope with no analysed game (a variant the solver cannot settle, such as
PopOut) gets no accuracy column at all rather than a column of dashes.

Pure: no files; `arena.solver.analysis_store.analysis_beside` reads the database.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from arena.solver.analysis import PHASES, MoveRecord, moves_to_win, position_scores, sign
from arena.solver.analysis_store import StoredAnalysis, canonical_spec, stored_keys

OUTCOME_WORDS = {1: "win", 0: "draw", -1: "loss"}
SEAT_WORDS = {1: "first player", 2: "second player"}


def _fraction(percent: float) -> float | None:
    """The analysis rows are in percent; the site's `percent` filter takes fractions."""
    return None if percent is None or math.isnan(percent) else percent / 100


def accuracy_entry(row: Mapping[str, Any]) -> dict:
    """One bot's analysis row (`BotStats.row()`, percent) with the fractions the templates show."""
    return {**row, "accuracy_f": _fraction(row["accuracy"]),
            "blunder_f": _fraction(row["blunder_rate"]),
            "blunder_low_f": _fraction(row["blunder_low"]),
            "blunder_high_f": _fraction(row["blunder_high"]),
            "phase_f": {p: _fraction(row[f"{p}_blunder_rate"]) for p in PHASES}}


def scope_accuracy(analysis: StoredAnalysis | None, scopes: Sequence[str],
                   variant_of_scope: Mapping[str, str | None]) -> dict[str, dict[str, dict]]:
    """scope -> bot -> accuracy entry; scopes without an analysed game are left out (the page
    then shows no column there), and so is everything when there is no analysis."""
    if analysis is None:
        return {}
    out: dict[str, dict[str, dict]] = {}
    for scope in scopes:
        variant = variant_of_scope[scope]
        spec = None if variant is None else canonical_spec(variant)
        if variant is not None and spec is None:
            continue
        if not any(spec is None or g["variant"] == spec for g in analysis.games):
            continue
        out[scope] = {r["bot"]: accuracy_entry(r) for r in analysis.bot_rows(spec)}
    return out


def analysed_keys(analysis: StoredAnalysis | None) -> set[str]:
    return {g["game_key"] for g in analysis.games} if analysis else set()


def analysis_key(known: set[str], game_id: str, variant: str, moves: str) -> str | None:
    """The key under which `arena analyze` stored a game (`known`: `analysed_keys`), None if it
    did not (`analysis_store.stored_keys`: its id, or '' for a games file without ids)."""
    if not known:
        return None
    return next((key for key in stored_keys(game_id, variant, moves) if key in known), None)


def analysed_counts(variants: Sequence[str], keys: Sequence[str | None], scopes: Sequence[str],
                    variant_of_scope: Mapping[str, str | None]) -> dict[str, tuple[int, int]]:
    """scope -> (games of the site that are analysed, games of the site), from each game's
    variant and analysis key (None: not analysed): the leaderboard says how much the column
    covers, since analysis.db may predate the latest games."""
    counts = {}
    for scope in scopes:
        wanted = variant_of_scope[scope]
        mine = [k for v, k in zip(variants, keys, strict=True) if wanted is None or v == wanted]
        counts[scope] = (sum(k is not None for k in mine), len(mine))
    return counts


def theory_text(score: int | None, to_move: int, empty: int, names: Mapping[int, str]) -> str:
    """A position's value under perfect play in words, e.g. `first player (alpha) wins in 4
    moves` (the winner's own moves, as chess counts a mate in N), `draw` or `unknown`."""
    if score is None:
        return "unknown"
    if score == 0:
        return "draw"
    winner = to_move if score > 0 else 3 - to_move
    n = moves_to_win(score, empty)
    return f"{SEAT_WORDS[winner]} ({names[winner]}) wins in {n} move{'s' if n != 1 else ''}"


def move_verdict(record: MoveRecord | None) -> dict | None:
    """How a move compares with perfect play: `blunder` (the mover's outcome got worse), `inexact`
    (same outcome, not the exact score: a slower win, a faster loss) or `optimal`, with a tooltip
    text; None for a move not judged (opening, unsettled position)."""
    if record is None or not record.judged:
        return None
    if record.blunder:
        change = f"{OUTCOME_WORDS[sign(record.before)]} → {OUTCOME_WORDS[sign(record.after)]}"
        return {"kind": "blunder", "text": f"blunder: {change}"}
    if record.optimal:
        return {"kind": "optimal", "text": "optimal: keeps the exact value"}
    still = "still a win, but a slower one" if record.before > 0 else "still a loss, but a faster one"
    return {"kind": "inexact", "text": f"not optimal: {still}"}


def annotate_replay(replay: dict, records: list[MoveRecord], names: Mapping[int, str]) -> None:
    """Add the analysis to a replay (the frames of `arena.publish.replay.replay_frames`): per
    frame `theory` (the value of its position in words, 'game over' at the end of a finished
    game) and `verdict` (of the move that led to it); `analysed` marks the replay."""
    frames = replay["frames"]
    plies = len(frames) - 1
    over = replay.get("outcome") is not None
    scores = position_scores(records, plies, over)
    by_ply = {r.ply: r for r in records}
    cells = replay["variant"]["columns"] * replay["variant"]["rows"]
    for i, frame in enumerate(frames):
        if over and i == plies:
            frame["theory"] = "game over"
        else:
            discs = sum(line.count("1") + line.count("2") for line in frame["board"])
            frame["theory"] = theory_text(scores[i], _to_move(frames, i), cells - discs, names)
        frame["verdict"] = move_verdict(by_ply.get(i - 1)) if i > 0 else None
    replay["analysed"] = True


def _to_move(frames: Sequence[Mapping[str, Any]], i: int) -> int:
    """Who moves in the position of frame i: the seat of the next move, else the other of the
    last mover's (frame 0 of a game with no moves: seat 1)."""
    if i + 1 < len(frames):
        return frames[i + 1]["seat"]
    return 3 - frames[i]["seat"] if frames[i]["seat"] else 1
