"""The games table as the rating code reads it: the bottom module of :mod:`arena.ratings`.

Every rule about which games count and in which order lives here once: a decided game has a
result (void games have none), a rated game is decided and between two different bots
(:class:`CodedGames` holds exactly those), the order-dependent ratings read games in the rating
order (:func:`in_rating_order`: a tournament's schedule, else ``seq``).
:class:`CodedGames` is the compact form (bot codes and results as numpy arrays) that the rating
systems compute on, built once per table.

This module imports nothing else from ``arena.ratings`` (a test pins the layering).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from arena.game import parse_variant

ALL = "all"  # the pooled "variant": every game

Anchor = tuple[str, float]


# ---------------------------------------------------------------------------------------------
# Results and the games that count
# ---------------------------------------------------------------------------------------------


def results_of(games: pd.DataFrame) -> np.ndarray:
    """The ``result`` column as floats (1, 0.5, 0; NaN for a void or unreadable result)."""
    return normalise_results(games["result"])


def normalise_results(result: Sequence | pd.Series | np.ndarray) -> np.ndarray:
    """Results as floats (1, 0.5, 0 or NaN for void games)."""
    if isinstance(result, np.ndarray) and result.dtype.kind == "f":
        return result
    if isinstance(result, pd.Series) and result.dtype.kind == "f":
        return result.to_numpy()
    series = result if isinstance(result, pd.Series) else pd.Series(np.asarray(result))
    numbers = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float, copy=True)
    written = np.isnan(numbers) & series.notna().to_numpy()
    if written.any():  # results as text ("1-0", "1/2-1/2", "draw"): read as a games file's are
        from arena.reports.games_io import parse_result

        numbers[written] = [math.nan if (r := parse_result(v)) is None else r
                            for v in series[written]]
    return numbers


def decided(games: pd.DataFrame) -> pd.DataFrame:
    """Games with a result (void games left out), ``result`` as float."""
    res = results_of(games)
    keep = ~np.isnan(res)
    if keep.all() and games["result"].dtype.kind == "f":
        return games
    return games.loc[keep].assign(result=res[keep])


def between_two(games: pd.DataFrame) -> pd.DataFrame:
    """Decided games between two different bots: the games every rating and head-to-head count
    (a hand-made games file may hold a bot against itself, which rates nothing)."""
    g = decided(games)
    same = g["first"].to_numpy(dtype=object) == g["second"].to_numpy(dtype=object)
    return g.loc[~same] if same.any() else g


def rated_bots(games: pd.DataFrame) -> list[str]:
    """Sorted names of the bots that have rated games."""
    return CodedGames.from_frame(games).names


def _unique_names(column: pd.Series) -> list[str]:
    if isinstance(column.dtype, pd.CategoricalDtype):
        used = column.cat.remove_unused_categories().cat.categories
        return [str(x) for x in used]
    return [str(x) for x in pd.unique(column.to_numpy(dtype=object))]


# ---------------------------------------------------------------------------------------------
# Anchors
# ---------------------------------------------------------------------------------------------


def parse_anchor(text: str) -> Anchor:
    """``"BOT=ELO"`` -> ``("BOT", ELO)``; ValueError naming the problem otherwise."""
    bot, sep, value = text.rpartition("=")
    if not sep or not bot.strip():
        raise ValueError(f"expected BOT=ELO, got {text!r}")
    try:
        rating = float(value)
    except ValueError:
        raise ValueError(f"{value.strip()!r} is not a number (expected BOT=ELO)") from None
    if not math.isfinite(rating):
        raise ValueError(f"{value.strip()!r} is not a finite Elo (expected BOT=ELO)")
    return bot.strip(), rating


def as_anchor(anchor: Anchor | str | None) -> Anchor | None:
    """An anchor given as ``(bot, elo)``, as ``"BOT=ELO"`` or not at all."""
    if anchor is None or isinstance(anchor, tuple):
        return anchor
    return parse_anchor(anchor)


def anchor_if_present(games: pd.DataFrame, anchor: Anchor | str | None) -> Anchor | None:
    """The anchor when its bot has rated games in ``games``, else None (the pool mean is used)."""
    anchor = as_anchor(anchor)
    if anchor is None:
        return None
    return anchor if anchor[0] in rated_bots(games) else None


# ---------------------------------------------------------------------------------------------
# Variants
# ---------------------------------------------------------------------------------------------


def variants_of(games: pd.DataFrame) -> list[str]:
    """The variants present, sorted (empty when the table has no variant column)."""
    if "variant" not in games.columns:
        return []
    return sorted(set(_unique_names(games["variant"].dropna())))


def canonical_variant(games: pd.DataFrame, variant: str) -> str:
    """The stored spelling of ``variant`` (a stored spec, a preset name or another spelling of a
    spec); ValueError naming the variants present when there is no such variant."""
    present = variants_of(games)
    if variant in present:
        return variant
    try:  # a preset name or a non-canonical spelling
        canonical = parse_variant(variant).spec
    except ValueError:  # VariantError and any other unreadable spec
        canonical = None
    if canonical is not None and canonical in present:
        return canonical
    shown = ", ".join(present[:10]) if present else "(the games have no variant column)"
    raise ValueError(f"no games of variant {variant!r}; variants present: {shown}")


def select_variant(games: pd.DataFrame, variant: str | None) -> pd.DataFrame:
    """Games of one variant; ``None`` or ``"all"`` = every game (pooled).

    ``variant`` may be the canonical spec stored in the table or anything
    ``arena.game.parse_variant`` understands (a preset name, say).
    """
    if variant is None or variant == ALL:
        return games
    spec = canonical_variant(games, variant)
    column = games["variant"]
    if isinstance(column.dtype, pd.CategoricalDtype):
        return games.loc[(column == spec).to_numpy()]
    return games.loc[column.astype(str).to_numpy() == spec]


# ---------------------------------------------------------------------------------------------
# Order and codes
# ---------------------------------------------------------------------------------------------


def in_seq_order(games: pd.DataFrame) -> pd.DataFrame:
    """The games in ``seq`` order (table order without it, ties keep table order)."""
    if "seq" not in games.columns or len(games) < 2:
        return games
    seq = pd.to_numeric(games["seq"], errors="coerce").to_numpy(dtype=float)
    if bool(np.all(seq[1:] >= seq[:-1])):
        return games
    return games.iloc[np.argsort(seq, kind="stable")]


SCHEDULE_ORDER = "schedule"  # round, then game_id
SEQ_ORDER = "seq"
ORDER_WORDS = {SCHEDULE_ORDER: "games in schedule order (round, then game id)",
               SEQ_ORDER: "games in seq order"}


def rating_order_of(games: pd.DataFrame) -> str:
    """Which order the order-dependent ratings (TrueSkill, sequential Elo) read ``games`` in:
    ``schedule`` when every game has a schedule round and an id (a tournament's games), else
    ``seq``. ``seq`` is the order games finished in, which moves with the concurrency, a resume
    or the machine's speed: the same games must give the same numbers (reproducibility review),
    so a tournament's are read in the order of its schedule, which no run changes."""
    if "round" not in games.columns or "game_id" not in games.columns or games.empty:
        return SEQ_ORDER
    rounds = pd.to_numeric(games["round"], errors="coerce").to_numpy(dtype=float)
    ids = games["game_id"]
    if not np.isfinite(rounds).all() or ids.isna().any():
        return SEQ_ORDER
    return SCHEDULE_ORDER


def in_rating_order(games: pd.DataFrame) -> pd.DataFrame:
    """The games in the rating order (:func:`rating_order_of`): by round, then ``game_id`` (ties,
    such as one game of two runs joined, in ``seq`` order), or in ``seq`` order."""
    g = in_seq_order(games)
    if len(g) < 2 or rating_order_of(g) != SCHEDULE_ORDER:
        return g
    rounds = pd.to_numeric(g["round"], errors="coerce").to_numpy(dtype=float)
    ids = g["game_id"].astype(str).to_numpy(dtype=object)
    later = rounds[1:] > rounds[:-1]
    if bool(np.all(later | ((rounds[1:] == rounds[:-1]) & (ids[1:] >= ids[:-1])))):
        return g  # already in order: a million rows need no sort
    id_codes = pd.factorize(ids, sort=True)[0]
    return g.iloc[np.lexsort((id_codes, rounds))]  # lexsort is stable: ties keep seq order


def games_in_order(games: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, second, result) of the decided games in ``seq`` order, for the order-dependent
    ratings; void games are left out."""
    g = in_seq_order(games)
    res = results_of(g)
    keep = ~np.isnan(res)
    first = np.asarray(g["first"], dtype=object)[keep]
    second = np.asarray(g["second"], dtype=object)[keep]
    return first, second, res[keep]


# the code of both seats of a game of a bot against itself that `names` does not list
SELF_PLAY_UNLISTED = -2


def codes(first: Sequence | pd.Series, second: Sequence | pd.Series,
          names: Sequence[str] | None) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Integer codes of the two seats' bots into ``names`` (sorted names of both seats when
    None); ValueError for a bot missing from a given ``names``."""
    left, right = _as_series(first), _as_series(second)
    if names is None and isinstance(left.dtype, pd.CategoricalDtype) and isinstance(
            right.dtype, pd.CategoricalDtype):
        return _categorical_codes(left, right)
    both = pd.concat([left.astype(object), right.astype(object)], ignore_index=True)
    if names is None:
        all_codes, uniques = pd.factorize(both, sort=True)
        names = [str(x) for x in uniques]
    else:
        names = list(names)
        all_codes = pd.Index(names, dtype=object).get_indexer(both.astype(str))
        unknown = all_codes < 0
        if unknown.any():
            # a bot's games against itself rate nothing, so they may name a bot not listed
            # (both seats then code as SELF_PLAY_UNLISTED, which the rated games leave out)
            text = both.astype(str).to_numpy()
            half = len(left)
            self_play = np.concatenate([text[:half] == text[half:]] * 2) & unknown
            all_codes = np.where(self_play, SELF_PLAY_UNLISTED, all_codes)
            unknown &= ~self_play
            if unknown.any():
                missing = sorted({str(name) for name in text[unknown]})
                raise ValueError(f"bots not in the list of names: {', '.join(missing[:5])}")
    all_codes = np.asarray(all_codes, dtype=np.int64)
    return all_codes[: len(left)], all_codes[len(left):], names


def _as_series(values: Sequence | pd.Series) -> pd.Series:
    if isinstance(values, pd.Series):
        return values.reset_index(drop=True)
    return pd.Series(np.asarray(values, dtype=object))


def _categorical_codes(left: pd.Series, right: pd.Series):
    """Codes of two categorical columns over the sorted union of their used categories, without
    turning a million rows back into strings."""
    cats_l = [str(x) for x in left.cat.categories]
    cats_r = [str(x) for x in right.cat.categories]
    used_l = np.bincount(left.cat.codes.to_numpy()[left.cat.codes.to_numpy() >= 0],
                         minlength=len(cats_l)) > 0
    used_r = np.bincount(right.cat.codes.to_numpy()[right.cat.codes.to_numpy() >= 0],
                         minlength=len(cats_r)) > 0
    names = sorted({c for c, u in zip(cats_l, used_l, strict=True) if u}
                   | {c for c, u in zip(cats_r, used_r, strict=True) if u})
    index = {name: k for k, name in enumerate(names)}
    map_l = np.array([index.get(c, -1) for c in cats_l] + [-1], dtype=np.int64)
    map_r = np.array([index.get(c, -1) for c in cats_r] + [-1], dtype=np.int64)
    # code -1 (missing) maps through the trailing -1
    return map_l[left.cat.codes.to_numpy()], map_r[right.cat.codes.to_numpy()], names


@dataclass
class CodedGames:
    """The rated games of a table, compact: bot codes and results in the rating order
    (:func:`in_rating_order`, named by ``order``).

    ``first``/``second`` index ``names`` (sorted); ``result`` is the first player's score.
    """

    names: list[str]
    first: np.ndarray
    second: np.ndarray
    result: np.ndarray
    self_play: int = 0  # decided games of a bot against itself, left out (they rate nothing)
    void: int = 0  # games without a result (neither bot started, or none given), left out
    order: str = SEQ_ORDER  # the order of the games: SCHEDULE_ORDER or SEQ_ORDER

    @property
    def n_bots(self) -> int:
        return len(self.names)

    def __len__(self) -> int:
        return len(self.result)

    @classmethod
    def from_frame(cls, games: pd.DataFrame, names: Sequence[str] | None = None) -> CodedGames:
        """The rated games of ``games``; bots are those with rated games unless ``names`` is
        given (then every listed bot keeps its place, rated or not)."""
        g = in_rating_order(games)
        order = rating_order_of(g)
        res = results_of(g)
        void = np.isnan(res)
        if void.any():  # void games may name bots that never played: leave them out first
            g, res = g.loc[~void], res[~void]
        i, j, all_names = codes(g["first"], g["second"], names)
        keep = (i != j) & (i >= 0) & (j >= 0)
        self_play = int(((i == j) & (i != -1)).sum())  # -1: no name (void), not self-play
        if not keep.all():
            i, j, res = i[keep], j[keep], res[keep]
        if names is None:  # only the bots that have rated games, still in sorted order
            n = len(all_names)
            used = (np.bincount(i, minlength=n) + np.bincount(j, minlength=n)) > 0
            if not used.all():
                remap = np.cumsum(used) - 1
                i, j = remap[i], remap[j]
                all_names = [b for b, u in zip(all_names, used, strict=True) if u]
        return cls(names=list(all_names), first=i.astype(np.int64), second=j.astype(np.int64),
                   result=np.asarray(res, dtype=float), self_play=self_play,
                   void=int(void.sum()), order=order)

    def triples(self, chunk: int = 1 << 16) -> Iterator[tuple[int, int, float]]:
        """(first, second, result) game after game, for the sequential ratings; Python objects
        are made a chunk at a time (a million floats at once would cost ~30 MB)."""
        for start in range(0, len(self.result), chunk):
            stop = start + chunk
            yield from zip(self.first[start:stop].tolist(), self.second[start:stop].tolist(),
                           self.result[start:stop].tolist(), strict=True)

    def wdl(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per bot (in ``names`` order): wins, draws, losses over both seats."""
        n, i, j, r = self.n_bots, self.first, self.second, self.result
        wins = np.bincount(i, r == 1.0, n) + np.bincount(j, r == 0.0, n)
        draws = np.bincount(i, r == 0.5, n) + np.bincount(j, r == 0.5, n)
        losses = np.bincount(i, r == 0.0, n) + np.bincount(j, r == 1.0, n)
        return wins.astype(np.int64), draws.astype(np.int64), losses.astype(np.int64)
