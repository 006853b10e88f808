"""Progress of a running tournament: a live rich display on a terminal, plain lines otherwise.

Shows games done/total, games per second, ETA, forfeits and a standings table (score and a quick
Elo from a Bradley-Terry fit, draws counting half).
"""

from __future__ import annotations

import math
import sys
import time
from collections import defaultdict
from collections.abc import Iterable
from typing import TextIO

FORFEIT_REASONS = ("timeout", "illegal", "protocol", "crash", "handshake")


def quick_elo(games: Iterable[tuple[str, str, float]], names: Iterable[str] = ()) -> dict[str, float]:
    """Bradley-Terry ratings on the Elo scale (mean 0) by minorization-maximization.

    Each pairing gets one virtual draw, which keeps ratings finite for perfect scores.
    """
    wins: dict[str, float] = defaultdict(float)
    meetings: dict[tuple[str, str], float] = defaultdict(float)
    players = set(names)
    for a, b, score in games:
        if score is None or score != score:
            continue
        players.update((a, b))
        wins[a] += score
        wins[b] += 1 - score
        key = (a, b) if a < b else (b, a)
        meetings[key] += 1
    for (a, b) in list(meetings):
        wins[a] += 0.5
        wins[b] += 0.5
        meetings[(a, b)] += 1
    gamma = {p: 1.0 for p in players}
    opponents: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for (a, b), n in meetings.items():
        opponents[a].append((b, n))
        opponents[b].append((a, n))
    for _ in range(100):
        new = {}
        for p in players:
            denominator = sum(n / (gamma[p] + gamma[q]) for q, n in opponents[p])
            new[p] = wins[p] / denominator if denominator > 0 and wins[p] > 0 else gamma[p]
        mean_log = sum(math.log(g) for g in new.values()) / max(1, len(new))
        gamma = {p: math.exp(math.log(g) - mean_log) for p, g in new.items()}
    return {p: 400 * math.log10(g) for p, g in gamma.items()}


class Standings:
    """Running score table."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self.names = list(names)
        self.games: list[tuple[str, str, float]] = []
        self.points: dict[str, float] = defaultdict(float)
        self.played: dict[str, int] = defaultdict(int)
        self.wdl: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        self.forfeits: dict[str, int] = defaultdict(int)

    def add(self, first: str, second: str, result: float | None, reason: str = "",
            forfeit_by: float | None = None) -> None:
        if result is None or result != result:
            return
        for name in (first, second):
            if name not in self.names:
                self.names.append(name)
        self.games.append((first, second, float(result)))
        self.points[first] += result
        self.points[second] += 1 - result
        self.played[first] += 1
        self.played[second] += 1
        for name, score in ((first, result), (second, 1 - result)):
            self.wdl[name][0 if score == 1 else 1 if score == 0.5 else 2] += 1
        if reason in FORFEIT_REASONS:
            loser = first if forfeit_by == 1 or (forfeit_by is None and result == 0) else second
            self.forfeits[loser] += 1

    def rows(self) -> list[tuple[str, int, float, list[int], int, float]]:
        elo = quick_elo(self.games, self.names)
        rows = [
            (n, self.played[n], self.points[n], self.wdl[n], self.forfeits[n], elo.get(n, 0.0))
            for n in self.names
        ]
        rows.sort(key=lambda r: (-r[5], -r[2], r[0]))
        return rows

    def lines(self) -> list[str]:
        width = max([len(n) for n in self.names] + [4])
        out = [f"{'#':>2}  {'bot':<{width}}  {'games':>5}  {'score':>6}  {'pct':>5}  "
               f"{'W-D-L':>11}  {'forf':>4}  {'elo':>6}"]
        for rank, (name, played, points, wdl, forfeits, elo) in enumerate(self.rows(), start=1):
            pct = f"{100 * points / played:.0f}%" if played else "-"
            out.append(
                f"{rank:>2}  {name:<{width}}  {played:>5}  {points:>6g}  {pct:>5}  "
                f"{'-'.join(map(str, wdl)):>11}  {forfeits:>4}  {elo:>+6.0f}"
            )
        return out


def _fmt_duration(seconds: float) -> str:
    if seconds != seconds or seconds == math.inf:
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _score_text(result: float | None) -> str:
    if result is None or result != result:
        return "void"
    return {1.0: "1-0", 0.0: "0-1", 0.5: "½-½"}.get(float(result), str(result))


class Progress:
    """Reports progress; `live=True` draws a rich display, otherwise one plain line per game."""

    def __init__(
        self,
        total: int,
        done: int = 0,
        names: Iterable[str] = (),
        *,
        live: bool | None = None,
        quiet: bool = False,
        stream: TextIO | None = None,
        title: str = "",
    ) -> None:
        self.stream = stream or sys.stdout
        self.total = total
        self.done = done
        self.start_done = done
        self.played = 0
        self.forfeits = 0
        self.voids = 0
        self.quiet = quiet
        self.title = title
        self.live_mode = (self.stream.isatty() if live is None else live) and not quiet
        self.standings = Standings(names)
        self.started = time.monotonic()
        self.last_line = ""
        self._live = None
        self._console = None

    # -- numbers --------------------------------------------------------------------------------
    def rate(self) -> float:
        elapsed = time.monotonic() - self.started
        return self.played / elapsed if elapsed > 0 and self.played else 0.0

    def eta(self) -> float:
        rate = self.rate()
        remaining = self.total - self.done
        return remaining / rate if rate > 0 else (0.0 if remaining <= 0 else math.inf)

    def status(self) -> str:
        return (
            f"{self.done}/{self.total} games, {self.rate():.2f} games/s, "
            f"ETA {_fmt_duration(self.eta())}, {self.forfeits} forfeits"
        )

    # -- events ---------------------------------------------------------------------------------
    def preload(self, rows: Iterable[tuple]) -> None:
        """Games already stored (first, second, result, reason, variant)."""
        for first, second, result, reason, _variant in rows:
            self.standings.add(first, second, result, reason)

    def start(self) -> None:
        self.started = time.monotonic()
        if self.live_mode:
            from rich.console import Console
            from rich.live import Live

            self._console = Console(file=self.stream)
            self._live = Live(
                self._render(), console=self._console, refresh_per_second=4, transient=False,
                get_renderable=self._render,
            )
            self._live.start()
        elif not self.quiet:
            self._print(f"{self.title}: {self.total - self.done} games to play, "
                        f"{self.done} of {self.total} already done")

    def game_done(self, row: dict) -> None:
        self.done += 1
        self.played += 1
        result = row.get("result")
        reason = row.get("reason", "")
        if result is None or result != result:
            self.voids += 1
        if reason in FORFEIT_REASONS:
            self.forfeits += 1
        self.standings.add(row["first"], row["second"], result, reason, row.get("forfeit_by"))
        if self.live_mode or self.quiet:
            return
        extra = f"{reason}, {row.get('plies', 0)} plies"
        if reason in FORFEIT_REASONS:
            by = row["first"] if row.get("forfeit_by") == 1 else row["second"]
            extra = f"forfeit by {by}: {reason}"
        width = len(str(self.total))
        self._print(
            f"[{self.done:>{width}}/{self.total}] {row.get('variant', '')}  {row['first']} "
            f"{_score_text(result)} {row['second']}  ({extra})  {self.rate():.2f} games/s  "
            f"ETA {_fmt_duration(self.eta())}"
        )

    def note(self, message: str) -> None:
        if self._live is not None:
            self._live.console.print(message, markup=False, highlight=False)
        else:
            self._print(message)

    def stop(self) -> None:
        if self._live is not None:
            self._live.update(self._render(), refresh=True)
            self._live.stop()
            self._live = None

    def _print(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def _render(self):
        from rich.console import Group
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        header = Text(f"{self.title}  " if self.title else "", style="bold")
        header.append(self.status())
        # A bar renders without a line end of its own: a one-cell grid gives it one.
        bar = Table.grid()
        bar.add_row(ProgressBar(total=max(1, self.total), completed=self.done, width=60))
        table = Table(box=None, pad_edge=False, show_edge=False)
        for column, justify in (("#", "right"), ("bot", "left"), ("games", "right"),
                                ("score", "right"), ("pct", "right"), ("W-D-L", "right"),
                                ("forfeits", "right"), ("elo", "right")):
            table.add_column(column, justify=justify)
        for rank, (name, played, points, wdl, forfeits, elo) in enumerate(
            self.standings.rows(), start=1
        ):
            pct = f"{100 * points / played:.0f}%" if played else "-"
            table.add_row(str(rank), name, str(played), f"{points:g}", pct,
                          "-".join(map(str, wdl)), str(forfeits), f"{elo:+.0f}")
        return Group(header, bar, table)
