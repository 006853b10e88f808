"""Sequential (K-factor) Elo: the classic incremental update, game after game in the rating order.

ORDER-DEPENDENT: the same games in another order give other numbers, so it is shown only on
request, marked ``seq Elo*`` with a footnote; compare strengths with the maximum-likelihood Elo.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from arena.ratings.system import Display, Rated, RatingOptions
from arena.ratings.table import ORDER_WORDS, CodedGames


@dataclass
class SequentialElo:
    """Classic incremental Elo. ORDER-DEPENDENT: the same games in another order give other
    numbers; use the maximum-likelihood ratings to compare strengths."""

    names: list[str]
    elo: np.ndarray
    k: float
    history: np.ndarray | None = None  # (games, n_bots) ratings after each game, if requested

    def as_dict(self) -> dict[str, float]:
        return dict(zip(self.names, self.elo.tolist(), strict=True))


def sequential_coded(games: CodedGames, k: float = 16.0, initial: float = 0.0,
                     keep_history: bool = False) -> SequentialElo:
    """Sequential Elo of coded games (already rated and in the rating order)."""
    r = [float(initial)] * games.n_bots
    hist = np.empty((len(games), games.n_bots)) if keep_history else None
    kk = float(k)
    for t, (a, b, s) in enumerate(games.triples()):
        expected = 1.0 / (1.0 + 10.0 ** ((r[b] - r[a]) / 400.0))
        delta = kk * (s - expected)
        r[a] += delta
        r[b] -= delta
        if hist is not None:
            hist[t] = r
    return SequentialElo(names=list(games.names), elo=np.array(r), k=kk, history=hist)


def sequential_elo(
    games: pd.DataFrame,
    k: float = 16.0,
    initial: float = 0.0,
    names: Sequence[str] | None = None,
    keep_history: bool = False,
) -> SequentialElo:
    """Incremental Elo with a fixed K-factor, processing games in the rating order
    (``arena.ratings.table.in_rating_order``: a tournament's schedule, else ``seq``).

    The result depends on the order of the games (it is labelled so in every output).
    """
    return sequential_coded(CodedGames.from_frame(games, names=names), k=k, initial=initial,
                            keep_history=keep_history)


class SequentialSystem:
    """Sequential Elo, only when a K-factor is given (``arena standings --sequential K``)."""

    name = "sequential"
    optional = False
    display = (Display("seq Elo*", ("elo_seq",), 1, "signed"),)

    def wanted(self, options: RatingOptions) -> bool:
        return options.sequential_k is not None

    def rate(self, games: CodedGames, options: RatingOptions) -> Rated:
        k = float(options.sequential_k or 16.0)
        seq = sequential_coded(games, k=k)
        note = (f"seq Elo*: sequential Elo with K={k:g}, every bot starting at 0, "
                f"{ORDER_WORDS[games.order]}; it depends on the order of the games (compare "
                "strengths by Elo).")
        return Rated(columns={"elo_seq": seq.elo}, notes=[note])


SYSTEM = SequentialSystem()
