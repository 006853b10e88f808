"""Progress of a running tournament: a live rich display on a terminal, plain lines otherwise.

Shows games done/total, elapsed time, games per second, ETA, forfeits (and the latest few: who
and why) and a standings table whose Elo is the one `arena standings` computes
(`arena.ratings.elo.fit_elo`), refitted at most every `REFIT_SECONDS` while games come in.
"""

from __future__ import annotations

import math
import sys
import time
from collections import defaultdict, deque
from collections.abc import Iterable
from typing import TextIO

from arena.reasons import FORFEIT_REASONS, STDERR_SAID, forfeiter_seat

REFIT_SECONDS = 1.0  # the live table's Elo is refitted at most this often
RECENT_FORFEITS = 5  # forfeits listed under the live table


def fit_ratings(games: list[tuple[str, str, float]]) -> dict[str, float]:
    """Elo of each bot with games, exactly as `arena standings` computes it (mean 0)."""
    if not games:
        return {}
    from arena.ratings.elo import count_pairs, fit_elo

    first, second, result = zip(*games, strict=True)
    fit = fit_elo(count_pairs(first, second, result))
    return {name: float(value) for name, value in zip(fit.names, fit.elo, strict=True)}


class Standings:
    """Running score table."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self.names = list(names)
        self.games: list[tuple[str, str, float]] = []
        self.points: dict[str, float] = defaultdict(float)
        self.played: dict[str, int] = defaultdict(int)
        self.wdl: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        self.forfeits: dict[str, int] = defaultdict(int)
        self._elo: dict[str, float] = {}
        self._elo_games = 0  # games the cached fit covers
        self._elo_at = -math.inf

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
        seat = forfeiter_seat(reason, forfeit_by, result)
        if seat is not None:
            self.forfeits[first if seat == 1 else second] += 1

    def elo(self, fresh: bool = True) -> dict[str, float]:
        """The fitted Elo; `fresh=False` may reuse a fit up to REFIT_SECONDS old."""
        now = time.monotonic()
        stale = self._elo_games != len(self.games)
        if stale and (fresh or now - self._elo_at >= REFIT_SECONDS):
            self._elo = fit_ratings(self.games)
            self._elo_games, self._elo_at = len(self.games), now
        return self._elo

    def rows(self, fresh: bool = True) -> list[tuple[str, int, float, list[int], int, float]]:
        elo = self.elo(fresh)
        rows = [
            (n, self.played[n], self.points[n], self.wdl[n], self.forfeits[n],
             elo.get(n, math.nan))
            for n in self.names
        ]
        rows.sort(key=lambda r: (-_or(r[5], -math.inf), -r[2], r[0]))
        return rows

    def lines(self) -> list[str]:
        width = max([len(n) for n in self.names] + [4])
        out = [f"{'#':>2}  {'bot':<{width}}  {'games':>5}  {'score':>6}  {'pct':>5}  "
               f"{'W-D-L':>11}  {'forf':>4}  {'elo':>6}"]
        for rank, (name, played, points, wdl, forfeits, elo) in enumerate(self.rows(), start=1):
            pct = f"{100 * points / played:.0f}%" if played else "-"
            out.append(
                f"{rank:>2}  {name:<{width}}  {played:>5}  {points:>6g}  {pct:>5}  "
                f"{'-'.join(map(str, wdl)):>11}  {forfeits:>4}  {_elo_text(elo):>6}"
            )
        return out


def _or(value: float, default: float) -> float:
    return default if value != value else value


def _elo_text(elo: float) -> str:
    return "-" if elo != elo else f"{round(elo):+d}"  # never "-0"


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
        self.recent_forfeits: deque[str] = deque(maxlen=RECENT_FORFEITS)
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
            f"{self.done}/{self.total} games, {_fmt_duration(time.monotonic() - self.started)} "
            f"elapsed, {self.rate():.2f} games/s, ETA {_fmt_duration(self.eta())}, "
            f"{self.forfeits} forfeits" + (f", {self.voids} void" if self.voids else "")
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
        self.played += 1
        result = row.get("result")
        reason = row.get("reason", "")
        if result is None or result != result:
            self.voids += 1  # stored, played again on the next run: not done
        else:
            self.done += 1
        if reason in FORFEIT_REASONS:
            self.forfeits += 1
            # the id finds the game's logs and replay (`arena replay DIR ID --moves`)
            self.recent_forfeits.append(f"{row.get('game_id', '')} {forfeit_text(row)}".strip())
        self.standings.add(row["first"], row["second"], result, reason, row.get("forfeit_by"))
        if self.live_mode or self.quiet:
            return
        width = len(str(self.total))
        # with its id, as `league run` prints it: the key to its stderr logs (`logs/ID-*.log`)
        # and to `arena replay DIR ID`; without it a forfeit could not be looked into
        game_id = f"{row['game_id']} " if row.get("game_id") else ""
        self._print(f"[{self.done:>{width}}/{self.total}] {game_id}{game_text(row)}  "
                    f"{self.rate():.2f} games/s  ETA {_fmt_duration(self.eta())}")

    def note(self, message: str) -> None:
        if self._live is not None:
            self._live.console.print(message, markup=False, highlight=False)
        else:
            self._print(message)

    def stop(self) -> None:
        if self._live is not None:
            self.standings.elo(fresh=True)  # the final table is fitted on every game
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
            self.standings.rows(fresh=self._live is None), start=1
        ):
            pct = f"{100 * points / played:.0f}%" if played else "-"
            table.add_row(str(rank), name, str(played), f"{points:g}", pct,
                          "-".join(map(str, wdl)), str(forfeits), _elo_text(elo))
        parts = [header, bar, table]
        if self.recent_forfeits:
            parts.append(Text("recent forfeits:", style="bold"))
            parts += [Text(f"  {line}", overflow="ellipsis", no_wrap=True)
                      for line in self.recent_forfeits]
        return Group(*parts)


def game_text(row: dict) -> str:
    """`classic  alpha 1-0 beta  (line, 17 plies)` (or the forfeit): one finished game, as
    `arena run` and `arena league run` print it."""
    reason = row.get("reason", "")
    extra = f"{reason}, {row.get('plies', 0)} plies"
    if reason in FORFEIT_REASONS:
        extra = f"forfeit by {forfeit_text(row)}"
    return (f"{row.get('variant', '')}  {row['first']} {_score_text(row.get('result'))} "
            f"{row['second']}  ({extra})")


def forfeit_text(row: dict) -> str:
    """`BOT: REASON (detail)`, short: who forfeited a game and why."""
    seat = forfeiter_seat(row.get("reason"), row.get("forfeit_by"), row.get("result"))
    by = row["first"] if seat == 1 else row["second"]
    detail = " ".join(str(row.get("detail") or "").split())
    _, said, stderr = detail.partition(STDERR_SAID)
    if said:  # what a bot that died said on stderr says most (e.g. its usage error)
        detail = f"stderr: {stderr}"
    if len(detail) > 80:
        detail = detail[:77] + "..."
    return f"{by}: {row.get('reason', '')}" + (f" ({detail})" if detail else "")
