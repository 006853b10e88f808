"""Move-quality analysis of games against perfect play (pure: no files, no terminal).

For each position of a game the solver's score for the side to move (Pons' scale) or None when
the position was not settled within the budget; for each move the mover's score before and after
it. A move is *optimal* when it keeps the exact score (fastest win, slowest loss, a draw when that
is best) and a *blunder* when it turns a win into a draw or loss, or a draw into a loss. The
blunder rate counts blunders among the moves that could be one (from a won or drawn position):
among all moves, a bot that threw a game away early and then played on in a lost position
looked more careful than one that played well until its one slip.
Moves set by the arena's opening are nobody's and are not counted.

Game phases follow the split of Pons' test sets: `opening` for moves made with at most 14 discs
on the board, `middle` for 15-28, `end` beyond.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from arena.game import Game, Variant, parse_move

PHASES = ("opening", "middle", "end")
Z95 = 1.959964


def phase_of(ply: int) -> str:
    """Phase of the move made at `ply` (0-based: the number of moves made before it)."""
    return "opening" if ply <= 14 else "middle" if ply <= 28 else "end"


def sign(x: int) -> int:
    return (x > 0) - (x < 0)


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion k/n (95% by default); (nan, nan) for n = 0."""
    if n <= 0:
        return math.nan, math.nan
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class MoveRecord:
    ply: int  # 0-based ply of the move
    seat: int  # 1 or 2: who made it
    move: str  # canonical token
    before: int | None  # mover's score before the move (None: not settled)
    after: int | None  # mover's score after it

    @property
    def judged(self) -> bool:
        return self.before is not None and self.after is not None

    @property
    def optimal(self) -> bool:
        return self.judged and self.after == self.before

    @property
    def blunder(self) -> bool:
        return self.judged and sign(self.after) < sign(self.before)

    @property
    def could_blunder(self) -> bool:
        """Made from a won or drawn position: the moves a blunder rate counts."""
        return self.judged and sign(self.before) >= 0


@dataclass
class GameAnalysis:
    moves: list[MoveRecord] = field(default_factory=list)
    values: list[int | None] = field(default_factory=list)  # per position, side to move's score
    decided_ply: int | None = None  # plies after which the theoretical result never changed


# A settler gives the score of a position that is not over (side to move), or None.
Settler = Callable[[Game], "int | None"]


def terminal_score(variant: Variant, game: Game) -> int:
    """Mover's score of the move that just ended `game` (win now, or the board filled)."""
    if game.outcome.winner is None:
        return 0
    empty_before = variant.columns * variant.rows - (game.boards[0] | game.boards[1]).bit_count() + 1
    return (empty_before + 1) // 2


def moves_to_win(score: int, empty: int) -> int:
    """How many of the winner's own moves a won position takes under perfect play, counted as
    chess counts a "mate in N" (1: the side to move wins now). The inverse of `terminal_score`:
    `score` is the side to move's (non-zero; negative when the other side wins), `empty` the
    number of empty cells of the position."""
    if score > 0:  # the winner moves first: its k-th move is made with empty - 2(k - 1) cells left
        return (empty + 3) // 2 - score
    return (empty + 2) // 2 + score  # the winner's first move is made with empty - 1 cells left


def position_scores(moves: list[MoveRecord], plies: int, over: bool) -> list[int | None]:
    """The side to move's score of positions 0..plies of a game, from its stored move records
    (the `values` of `analyse`, rebuilt): a position's score is the `before` of the move made
    from it; the last position's, for a game that is not over, minus the last move's `after`.
    None where not settled, in the opening (never analysed), and for a finished game's end."""
    values: list[int | None] = [None] * (plies + 1)
    for record in moves:
        if 0 <= record.ply < plies:
            values[record.ply] = record.before
    last = moves[-1] if moves else None
    if not over and last is not None and last.ply == plies - 1 and last.after is not None:
        values[plies] = -last.after
    return values


def analyse(variant: Variant, tokens: list[str], opening_plies: int, settle: Settler,
            adjudicated: float | None = None) -> GameAnalysis:
    """Scores of every position of a game from the end of the opening on (the opening's moves
    are nobody's, its earlier positions stay None) and the verdict of each move after it.
    `adjudicated`: the result (seat 1's score) of a game that ended where the solver proved it
    (reason `adjudicated`): the result its last position holds, whatever this budget settles.

    Positions are settled from the last to the first: late ones are cheap and fill the solver's
    table for the earlier ones. Raises ValueError (from the engine) on an illegal move."""
    game = Game(variant)
    games = []
    for token in tokens:
        games.append(game.copy())
        game.push(parse_move(token))
    final = game
    values: list[int | None] = [None] * (len(tokens) + 1)
    for i in range(len(tokens) - 1, min(opening_plies, len(tokens)) - 1, -1):
        values[i] = settle(games[i])
    if final.outcome is None:
        values[len(tokens)] = settle(final)
    result = GameAnalysis(values=values)
    for i, token in enumerate(tokens):
        if i < opening_plies:
            continue
        before = values[i]
        if i + 1 == len(tokens) and final.outcome is not None:
            after: int | None = terminal_score(variant, final)
        else:
            nxt = values[i + 1]
            after = None if nxt is None else -nxt
        result.moves.append(MoveRecord(i, games[i].to_move, token, before, after))
    result.decided_ply = decided_ply(values, final, opening_plies, adjudicated)
    return result


def decided_ply(values: list[int | None], final: Game, opening_plies: int = 0,
                adjudicated: float | None = None) -> int | None:
    """The number of plies after which the theoretical result (for seat 1) equalled the result
    reached at the end and never changed again, at the earliest the end of the opening; None if
    unknown (a position left unsettled in that stretch, or a game not over and not
    `adjudicated`, e.g. ended by a forfeit). `adjudicated`: seat 1's proven score."""
    n = len(values) - 1
    if final.outcome is not None:
        winner = final.outcome.winner
        end = 0 if winner is None else (1 if winner == 1 else -1)
    elif adjudicated is not None:  # the proven result the game was given
        end = 0 if adjudicated == 0.5 else (1 if adjudicated == 1.0 else -1)
    else:
        return None
    decided = n
    for i in range(n - 1, min(opening_plies, n) - 1, -1):
        v = values[i]
        if v is None:
            return None
        seat1 = sign(v) if i % 2 == 0 else -sign(v)
        if seat1 != end:
            break
        decided = i
    return decided


@dataclass
class Tally:
    moves: int = 0
    optimal: int = 0
    blunders: int = 0
    chances: int = 0  # moves from a won or drawn position (`MoveRecord.could_blunder`)

    def add(self, record: MoveRecord) -> None:
        if record.judged:
            self.moves += 1
            self.optimal += record.optimal
            self.blunders += record.blunder
            self.chances += record.could_blunder


@dataclass
class BotStats:
    bot: str
    total: Tally = field(default_factory=Tally)
    unjudged: int = 0
    by_phase: dict[str, Tally] = field(default_factory=lambda: {p: Tally() for p in PHASES})
    by_seat: dict[int, Tally] = field(default_factory=lambda: {1: Tally(), 2: Tally()})
    games: int = 0
    # per game, the ply of its first blunder, counted from 1 as the replay numbers the moves
    first_blunders: list[int] = field(default_factory=list)

    def row(self) -> dict:
        """One flat row: accuracy and blunder rate (percent) with the Wilson 95% interval."""
        t = self.total
        low, high = wilson(t.blunders, t.chances)
        row = {
            "bot": self.bot, "games": self.games, "moves": t.moves, "unjudged": self.unjudged,
            "accuracy": _pct(t.optimal, t.moves), "blunders": t.blunders,
            "blunder_chances": t.chances, "blunder_rate": _pct(t.blunders, t.chances),
            "blunder_low": 100 * low if t.chances else math.nan,
            "blunder_high": 100 * high if t.chances else math.nan,
        }
        for phase, tally in self.by_phase.items():
            row[f"{phase}_moves"] = tally.moves
            row[f"{phase}_blunder_rate"] = _pct(tally.blunders, tally.chances)
        for seat, tally in self.by_seat.items():
            row[f"seat{seat}_moves"] = tally.moves
            row[f"seat{seat}_blunder_rate"] = _pct(tally.blunders, tally.chances)
        row["games_with_blunder"] = len(self.first_blunders)
        row["first_blunder_ply"] = (_median(self.first_blunders) if self.first_blunders
                                    else math.nan)
        return row


def _pct(k: int, n: int) -> float:
    return 100.0 * k / n if n else math.nan


def _median(values: list[int]) -> float:
    s = sorted(values)
    mid = len(s) // 2
    return float(s[mid]) if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def bot_stats(games: Iterable[tuple[str, str, list[MoveRecord]]]) -> list[BotStats]:
    """Per-bot statistics over (first, second, move records) of analysed games, by name."""
    stats: dict[str, BotStats] = {}
    for first, second, moves in games:
        names = {1: first, 2: second}
        seen_blunder: set[int] = set()
        for seat in (1, 2):
            stats.setdefault(names[seat], BotStats(names[seat])).games += 1
        for record in moves:
            s = stats[names[record.seat]]
            if not record.judged:
                s.unjudged += 1
                continue
            s.total.add(record)
            s.by_phase[phase_of(record.ply)].add(record)
            s.by_seat[record.seat].add(record)
            if record.blunder and record.seat not in seen_blunder:
                seen_blunder.add(record.seat)
                s.first_blunders.append(record.ply + 1)
    return sorted(stats.values(), key=lambda s: s.bot)
