"""What `arena replay --moves` and `--protocol` add to a game: the table of its plies (who moved,
the time each move took and the time the bot was told it had, its info line), who forfeited and
why, where the bots' stderr logs are, and the lines the arena sent the bot to move at a position,
to feed to the bot by hand (`arena replay results/t GAME --protocol | ./mybot`).

Pure: a stored game comes in as a dict of its games-table fields (any of them may be missing, as
in a games file of a few columns); nothing here reads a store or starts a process.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from arena import protocol
from arena.clocks import GameClocks
from arena.game import Game, format_move
from arena.reasons import forfeiter_seat
from arena.schema import json_list, opening_plies, ply_times
from arena.timecontrol import TimeControl

OPENING = "opening"  # who made the plies the arena set (the games table's `opening`)


def _text(value: object) -> str:
    """A stored text field, '' for a missing one (None, NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def _seed(row: Mapping[str, object]) -> int | None:
    """The game's stored seed (the `game` line's `seed=`), None when none was sent: a float from
    a games file or a frame (NaN for none), an int from the store."""
    value = row.get("seed")
    if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _opening_count(row: Mapping[str, object]) -> int:
    opening = row.get("opening")
    if isinstance(opening, list | tuple):  # `arena play --json` writes a list
        return len(opening)
    return opening_plies(opening)


def _infos(raw: object) -> list[str]:
    """The per-ply info lines of a stored game (a JSON list or its text), '' where none."""
    return [entry if isinstance(entry, str) else "" for entry in json_list(raw)]


def seat_control(row: Mapping[str, object] | None, seat: int) -> TimeControl:
    """The time control a seat played under (`first_tc`/`second_tc`), the default one where the
    game has none stored (a plain record, an older store)."""
    raw = (row or {}).get("first_tc" if seat == 1 else "second_tc")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else None
        except ValueError:
            raw = None
    if isinstance(raw, dict):
        try:
            return TimeControl.from_dict(raw)
        except (TypeError, ValueError):
            pass
    return TimeControl()


def replay_clocks(row: Mapping[str, object] | None, upto: int) -> tuple[GameClocks, list[int | None]]:
    """The clocks of a game after its first `upto` plies, rebuilt from the stored move times,
    and the `time_ms` each of those plies' turn line told its bot (None for the opening's).
    A process's first move is taken as a kept process's (charged in full): under a clock, the
    first game of a fresh process was told up to its start-up time more on later moves."""
    clocks = GameClocks((seat_control(row, 1), seat_control(row, 2)))
    times = ply_times((row or {}).get("move_ms"))
    skip = _opening_count(row or {})
    told: list[int | None] = []
    for ply in range(upto):
        if ply < skip:
            told.append(None)
            continue
        seat = 1 if ply % 2 == 0 else 2  # seat 1 moves first, from any start (PROTOCOL.md)
        budget = clocks.budget(seat, False)
        told.append(budget.limit_ms)
        elapsed = times[ply] if ply < len(times) else None
        clocks.charge(seat, elapsed if elapsed is not None else 0.0, budget)
        if elapsed is None:  # a record without times: no measurement to tell the bot
            clocks.last_ms[seat] = None
    return clocks, told


def _number(value: float | None, digits: int = 1) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def ply_rows(game: Game, row: Mapping[str, object] | None) -> list[dict]:
    """One dict per ply of `game` (0-based `ply`, as the turn line that asked for it): the move,
    the seat and bot that made it (`opening` for the arena's), its wall and CPU time in ms, the
    `time_ms` its bot was told, and its info line."""
    row = row or {}
    names = {1: _text(row.get("first")) or "player 1", 2: _text(row.get("second")) or "player 2"}
    wall, cpu = ply_times(row.get("move_ms")), ply_times(row.get("move_cpu_ms"))
    infos = _infos(row.get("infos"))
    skip = _opening_count(row)
    _, told = replay_clocks(row, len(game.moves))
    rows = []
    for ply, move in enumerate(game.moves):
        seat = 1 if ply % 2 == 0 else 2
        ours = ply >= skip
        rows.append({
            "ply": ply, "move": format_move(move), "seat": seat,
            "by": names[seat] if ours else OPENING,
            "ms": wall[ply] if ours and ply < len(wall) else None,
            "cpu_ms": cpu[ply] if ours and ply < len(cpu) else None,
            "time_ms": told[ply] if row else None,
            "info": infos[ply] if ply < len(infos) else "",
        })
    return rows


def ply_table(rows: Sequence[dict]) -> list[str]:
    """The plies as aligned text lines (times blank where none is stored)."""
    width = max([len("by"), *(len(protocol.printable(r["by"])) for r in rows)])
    lines = [f"  {'ply':>4}  {'move':<5} {'by':<{width}}  {'wall ms':>8}  {'cpu ms':>7}  "
             f"{'time_ms':>7}  info"]
    for r in rows:
        told = "" if r["time_ms"] is None else str(r["time_ms"])
        lines.append(f"  {r['ply']:>4}  {r['move']:<5} {protocol.printable(r['by']):<{width}}  "
                     f"{_number(r['ms']):>8}  {_number(r['cpu_ms']):>7}  {told:>7}  "
                     f"{protocol.printable(r['info'])}".rstrip())
    return lines


def forfeit_line(row: Mapping[str, object]) -> str:
    """`seat 2 (crashy) forfeits at ply=3: crash: bot exited ...`, '' if nobody forfeited."""
    reason = _text(row.get("reason"))
    seat = forfeiter_seat(reason, row.get("forfeit_by"), row.get("result"))
    if seat is None:
        return ""
    name = _text(row.get("first" if seat == 1 else "second"))
    plies = row.get("plies")
    at = f" in its turn at ply={int(plies)}" if isinstance(plies, int | float) and plies == plies else ""
    detail = protocol.printable(_text(row.get("detail")))
    return f"seat {seat} ({protocol.printable(name)}) forfeits{at}: {reason}" + (
        f": {detail}" if detail else "")


def log_paths(logs_dir: Path | None, row: Mapping[str, object]) -> list[tuple[str, Path]]:
    """(bot, path) of the stderr logs of a stored game that exist, seat 1 first (PROTOCOL.md:
    `<game_id>-<seat>-<name>.log`; an empty log is not written)."""
    if logs_dir is None:
        return []
    from arena.player import log_file_name  # the referee's name for it; processes: loaded late

    game_id = _text(row.get("game_id"))
    found = []
    for seat, key in ((1, "first"), (2, "second")):
        name = _text(row.get(key))
        path = logs_dir / log_file_name(game_id, seat, name)
        if game_id and name and path.is_file():
            found.append((name, path))
    return found


def bot_input(game: Game, row: Mapping[str, object] | None) -> list[str]:
    """The lines the arena sends the bot to move at `game`'s position, as one process's session:
    `hello`, its `game` line (its own time control, and the game's `seed` when one was sent),
    its `turn` line (the clocks rebuilt from the stored move times, `last_ms` its previous
    move's), then `quit`. Raises ValueError when no one is to move (the game is over at that
    ply)."""
    if game.outcome is not None:
        raise ValueError(f"the game is over after {game.ply} plies ({game.outcome.reason}): "
                         "nobody is to move; choose an earlier position with --ply N")
    row = row or {}
    seat = game.to_move
    clocks, _ = replay_clocks(row, game.ply)
    budget = clocks.budget(seat, False)
    opponent = _text(row.get("second" if seat == 1 else "first")) or "-"
    game_id = _text(row.get("game_id")) or "replay"
    return [
        protocol.hello_line(),
        protocol.game_line(game_id, seat, game.variant.describe(),
                           clocks.controls[seat].to_dict(), opponent, seed=_seed(row)),
        protocol.turn_line([format_move(m) for m in game.moves], budget.limit_ms,
                           clocks.opponent_time_ms(seat), clocks.last_ms[seat]),
        protocol.QUIT_LINE,
    ]
