"""Search cores of the alphabeta bot: an exact solver (drop-only) and a heuristic iterative search.

`Solver` follows Pascal Pons' Connect 4 solver: bitboard position + mask, non-losing move
generation (forced blocks, never below an opponent threat), move ordering by the number of winning
spots a move creates, centre-first columns, a transposition table of bounds and a null-window
search narrowing the score window. Scores are on Pons' scale from the side to move: a win with
the move that leaves `e` cells empty scores `(e + 2) // 2` (a win now, `E` cells empty, scores
`(E + 1) // 2`), 0 a draw, negative a loss.

`Searcher` is a negamax alpha-beta with a transposition table, iterative deepening under a deadline
and a heuristic evaluation (threat counting with odd/even rows, stacked threats, open windows,
centre control). It handles every variant: pops are moves like any other, repetition (third
occurrence) and the ply cap end the game as draws, a pop that completes a line of the opponent's
only loses.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable

from arena.bitboard import Geometry


class Timeout(Exception):
    """The search ran past its deadline."""


# ---------------------------------------------------------------------------------------------
# exact solver


class Solver:
    """Exact solver for drop-only positions (any size and line length)."""

    def __init__(self, geo: Geometry) -> None:
        self.geo = geo
        self.lower: dict[int, int] = {}
        self.upper: dict[int, int] = {}
        self.nodes = 0
        self.deadline: float | None = None
        self._negamax = self._build()

    def reset(self) -> None:
        self.lower.clear()
        self.upper.clear()

    def _build(self):
        geo = self.geo
        full, bottom_all = geo.full, geo.bottom_all
        win_spots = geo.win_spots
        colmasks = [geo.column_mask[c] for c in geo.order]
        lower, upper = self.lower, self.upper
        monotonic = time.monotonic
        solver = self

        def negamax(cur: int, mask: int, empties: int, alpha: int, beta: int) -> int:
            # Precondition: the side to move cannot win with its next move.
            solver.nodes += 1
            if not solver.nodes & 511:
                deadline = solver.deadline
                if deadline is not None and monotonic() > deadline:
                    raise Timeout
            possible = (mask + bottom_all) & full
            opp_spots = win_spots(cur ^ mask, mask)
            forced = possible & opp_spots
            if forced:
                if forced & (forced - 1):
                    return -(empties // 2)
                possible = forced
            nxt = possible & ~(opp_spots >> 1)
            if not nxt:
                return -(empties // 2)
            if empties <= 2:
                return 0
            lo = -((empties - 2) // 2)
            if alpha < lo:
                alpha = lo
                if alpha >= beta:
                    return alpha
            hi = (empties - 1) // 2
            key = cur + mask
            v = upper.get(key)
            if v is not None and v < hi:
                hi = v
            if beta > hi:
                beta = hi
                if alpha >= beta:
                    return beta
            v = lower.get(key)
            if v is not None and alpha < v:
                alpha = v
                if alpha >= beta:
                    return alpha
            moves = []
            i = 0
            for cm in colmasks:
                m = nxt & cm
                if m:
                    i -= 1
                    moves.append((win_spots(cur | m, mask).bit_count(), i, m))
            if len(moves) > 1:
                moves.sort(reverse=True)
            child_cur = cur ^ mask
            for _, _, m in moves:
                score = -negamax(child_cur, mask | m, empties - 1, -beta, -alpha)
                if score >= beta:
                    lower[key] = score
                    return score
                if score > alpha:
                    alpha = score
            upper[key] = alpha
            return alpha

        return negamax

    def empties(self, cur: int, opp: int) -> int:
        return self.geo.full.bit_count() - (cur | opp).bit_count()

    def can_win_now(self, cur: int, mask: int) -> int:
        geo = self.geo
        return geo.win_spots(cur, mask) & (mask + geo.bottom_all) & geo.full

    def solve(self, cur: int, opp: int, weak: bool = False) -> int:
        """Exact score of the position for the side to move (weak: only its sign, -1/0/+1)."""
        mask = cur | opp
        empties = self.empties(cur, opp)
        if self.can_win_now(cur, mask):
            return 1 if weak else (empties + 1) // 2
        lo, hi = -(empties // 2), (empties + 1) // 2
        if weak:
            lo, hi = -1, 1
        while lo < hi:
            med = lo + (hi - lo) // 2
            if med <= 0 and int(lo / 2) < med:
                med = int(lo / 2)
            elif med >= 0 and int(hi / 2) > med:
                med = int(hi / 2)
            r = self._negamax(cur, mask, empties, med, med + 1)
            if r <= med:
                hi = r
            else:
                lo = r
        return max(-1, min(1, lo)) if weak else lo

    def move_values(self, cur: int, opp: int, value: int, weak: bool = False) -> list[int]:
        """Columns (0-based) whose move reaches `value` (the solved value of the position)."""
        geo = self.geo
        mask = cur | opp
        empties = self.empties(cur, opp)
        possible = (mask + geo.bottom_all) & geo.full
        wins = geo.win_spots(cur, mask) & possible
        result = []
        for c in geo.order:
            m = possible & geo.column_mask[c]
            if not m:
                continue
            if m & wins:
                result.append(c)
                continue
            if wins:
                continue
            child_cur, child_mask = cur ^ mask, mask | m
            if self.can_win_now(child_cur, child_mask):
                score = -((empties - 1 + 1) // 2)
                if weak:
                    score = -1
            elif empties - 1 == 0:
                score = 0
            else:
                target = -value
                r = self._negamax(child_cur, child_mask, empties - 1, target, target + 1)
                score = -r
                if weak:
                    score = max(-1, min(1, score))
            if score >= value:
                result.append(c)
        return result


# ---------------------------------------------------------------------------------------------
# heuristic search

WIN = 1_000_000
MATE = WIN - 10_000  # scores beyond this are wins/losses at a known distance
EXACT, LOWER, UPPER = 0, 1, 2


class RootSearch:
    """The root of the search, written once for `Searcher` and `compiled.CompiledSearcher`: the
    root moves in the previous depth's order, the levels' evaluation noise, the partial result
    of an interrupted depth. A subclass gives the moves (`_root_children`), the repetition count
    of the path (`_count`), the position key (`key`) and the tree below (`_node`)."""

    geo: Geometry
    eval_noise: int
    rng: random.Random
    partial: tuple[int, int, int]  # (best move, score, moves searched)

    def _root_children(self, cur: int, opp: int, side: int,
                       ply: int) -> list[tuple[int, int, int, int | None]]:
        """(move, child cur, child opp, terminal score for the mover or None) of each move."""
        raise NotImplementedError

    def _count(self, key: int, delta: int) -> None:
        raise NotImplementedError

    def key(self, cur: int, opp: int, side: int) -> int:
        raise NotImplementedError

    def _node(self, cur: int, opp: int, side: int, ply: int, depth: int, alpha: int,
              beta: int) -> int:
        raise NotImplementedError

    def root_search(self, cur: int, opp: int, side: int, ply: int, depth: int,
                    order: list[int] | None,
                    allowed: set[int] | None = None) -> tuple[int, int, dict[int, int]]:
        """Search every root move to `depth`; returns (best move, best score, move scores)."""
        kids = self._root_children(cur, opp, side, ply)
        if allowed is not None:
            kids = [k for k in kids if k[0] in allowed] or kids
        if order:
            rank = {mv: i for i, mv in enumerate(order)}
            kids.sort(key=lambda k: rank.get(k[0], len(rank)))
        alpha, beta = -WIN - 1, WIN + 1
        best, best_move = -WIN - 2, kids[0][0]
        self.partial = (best_move, best, 0)
        scores: dict[int, int] = {}
        noise = self.eval_noise
        for mv, ccur, copp, term in kids:
            if term is not None:
                score = term
            else:
                ck = self.key(ccur, copp, 1 - side)
                self._count(ck, 1)
                try:
                    # a window just below the best so far keeps scores of near-best moves exact
                    score = -self._node(ccur, copp, 1 - side, ply + 1, depth - 1,
                                        -beta, -(alpha - noise - 1))
                finally:
                    self._count(ck, -1)
            if noise and -MATE < score < MATE:
                score += self.rng.randint(-noise, noise)
            scores[mv] = score
            if score > best:
                best, best_move = score, mv
                if score > alpha:
                    alpha = score
            # what an interrupted search can still use: the best of the moves searched so far
            self.partial = (best_move, best, len(scores))
        return best_move, best, scores


class Searcher(RootSearch):
    """Iterative-deepening negamax with a heuristic evaluation, for every variant."""

    def __init__(self, geo: Geometry, seed: int | None = None) -> None:
        self.geo = geo
        self.tt: dict[int, tuple[int, int, int, int]] = {}
        self.history: dict[int, int] = {}
        self.seen: dict[int, int] = {}  # repetition counts: game history plus current path
        self.nodes = 0
        self.deadline: float | None = None
        self.eval_noise = 0
        self.rng = random.Random(seed)
        self.partial: tuple[int, int, int] = (0, 0, 0)  # (best move, score, moves searched)
        self._node = self._build()

    # -- tables (the player's calls, shared with compiled.CompiledSearcher) ----------------------
    def clear_tables(self) -> None:
        self.tt.clear()
        self.history.clear()

    def decay_history(self) -> None:
        for mv in list(self.history):
            self.history[mv] //= 4

    def table_size(self) -> int:
        return len(self.tt)

    # -- the root's hooks ----------------------------------------------------------------------
    def _root_children(self, cur, opp, side, ply):
        mask = cur | opp
        return self._children(cur, opp, side, ply, mask, (mask + self.geo.bottom_all) & self.geo.full)

    def _count(self, key: int, delta: int) -> None:
        self.seen[key] = self.seen.get(key, 0) + delta

    # -- position keys -------------------------------------------------------------------------
    @staticmethod
    def key(cur: int, opp: int, side: int) -> int:
        """Unique key: cur + mask identifies the discs; side (0: player 1 to move) the mover."""
        return ((cur + (cur | opp)) << 1) | side

    def set_history(self, keys: Iterable[int]) -> None:
        # in place: the search closures hold this very dict
        seen = self.seen
        seen.clear()
        for k in keys:
            seen[k] = seen.get(k, 0) + 1

    # -- evaluation ----------------------------------------------------------------------------
    def _build_eval(self):
        geo = self.geo
        full = geo.full
        odd, even = geo.odd_rows, geo.even_rows
        potential = geo.potential
        weights: dict[int, int] = {}
        for cm, w in geo.centre_masks:
            if w:
                weights[w] = weights.get(w, 0) | cm
        centre = sorted(weights.items())
        if not geo.pops:
            return self._build_zugzwang_eval(centre)

        def evaluate(cur: int, opp: int, side: int, my: int, op: int) -> int:
            """Static score for the side to move; `my`/`op` are the empty winning spots."""
            if side == 0:
                good_me, good_op = odd, even
            else:
                good_me, good_op = even, odd
            s = 24 * (my.bit_count() - op.bit_count())
            s += 16 * ((my & good_me).bit_count() - (op & good_op).bit_count())
            s += 48 * ((my & (my >> 1)).bit_count() - (op & (op >> 1)).bit_count())
            s += 4 * (potential(cur, full & ~opp) - potential(opp, full & ~cur))
            for w, cm in centre:
                s += w * ((cur & cm).bit_count() - (opp & cm).bit_count())
            return s + 4  # tempo

        return evaluate

    def _build_zugzwang_eval(self, centre):
        """Evaluation for drop-only variants after Allis' threat analysis (zugzwang control).

        With an even number of empty cells when player 1 is to move, the second player can
        answer every move in the same column ("follow-up") and so claims every even row (1-based),
        the first player every odd row. Only the lowest threat (empty cell completing a line) of a
        column with no threat of the opponent below it is counted. The values follow what the
        exact solver says of positions 18-24 empty cells from the end (classic and five, games
        of alphabeta against mcts): player 1 with an odd threat wins when player 2 has no odd
        threat (even with even threats), and is at best level when it has one; without an odd
        threat of player 1, player 2 is ahead, clearly so with an even threat, winning with two.
        """
        geo = self.geo
        full = geo.full
        potential = geo.potential
        h = geo.height
        # rows parity: player 1 (side 0) wants odd rows (1-based), player 2 even rows
        odd, even = geo.odd_rows, geo.even_rows
        if (geo.full & ~geo.fixed_mask).bit_count() % 2:
            # an odd number of playable cells swaps who claims which parity
            odd, even = even, odd
        steps = range(max(0, h - 2))

        def above(t: int) -> int:
            u = (t << 1) & full
            for _ in steps:
                u |= (u << 1) & full
            return u

        def evaluate(cur: int, opp: int, side: int, my: int, op: int) -> int:
            if side == 0:
                t1, t2, b1, b2 = my, op, cur, opp
            else:
                t1, t2, b1, b2 = op, my, opp, cur
            a1 = above(t1) if t1 else 0
            a2 = above(t2) if t2 else 0
            g1 = t1 & ~a1 & ~a2
            g2 = t2 & ~a2 & ~a1
            o1 = (g1 & odd).bit_count()
            if o1:
                o2 = (g2 & odd).bit_count()
                if o2:
                    s = 60 * (o1 - o2) - 60
                else:
                    s = 220 + 40 * o1
            else:
                s = -40
                if g2 & odd:
                    s -= 60
                e2 = (g2 & even).bit_count()
                if e2:
                    s -= 120 if e2 == 1 else 280
            s += 8 * ((t1 & ~g1).bit_count() - (t2 & ~g2).bit_count())
            s += 60 * ((t1 & (t1 >> 1)).bit_count() - (t2 & (t2 >> 1)).bit_count())
            s += 4 * (potential(b1, full & ~b2) - potential(b2, full & ~b1))
            for w, cm in centre:
                s += w * ((b1 & cm).bit_count() - (b2 & cm).bit_count())
            return (s if side == 0 else -s) + 4  # tempo

        return evaluate

    # -- the tree ------------------------------------------------------------------------------
    def _build(self):
        geo = self.geo
        full, bottom_all = geo.full, geo.bottom_all
        win_spots = geo.win_spots
        pops = geo.pops
        # a child seen this many times before is a draw by repetition (None: cannot repeat)
        repeats = None if geo.repetition_limit is None else geo.repetition_limit - 1
        drops = [(c + 1, geo.column_mask[c]) for c in geo.order]
        popcols = [(-(c + 1), geo.bottom[c]) for c in geo.poppable]
        # another rule (a misère line loses): results come from `apply` alone, and the
        # evaluation, which prizes the standard rules' threats, is left out (every leaf 0)
        standard = geo.standard
        evaluate = self._build_eval() if standard else (lambda cur, opp, side, my, op: 0)
        self.evaluate = evaluate
        tt = self.tt
        history = self.history
        searcher = self
        monotonic = time.monotonic
        apply = geo.apply  # arena.bitboard.apply with the geometry bound

        def moves_of(cur, possible):
            """The moves of the side to move: drops into `possible`, centre first, then pops."""
            out = [mv for mv, cm in drops if possible & cm]
            if popcols:
                out += [mv for mv, b in popcols if cur & b]
            return out

        def child(cur, opp, side, ply, mv):
            """(child_cur, child_opp, terminal score for the mover or None): `mv` played by
            `arena.bitboard.apply`, plus the repetition draw it cannot see."""
            ccur, copp, result = apply(cur, opp, ply, mv)
            if result is not None:
                # sooner wins and later losses score better; a loss is counted at the reply
                if result == 1.0:
                    return ccur, copp, WIN - ply
                return ccur, copp, -(WIN - ply - 1) if result == 0.0 else 0
            if repeats is not None and seen.get(((ccur + (ccur | copp)) << 1) | (1 - side),
                                                0) >= repeats:
                return ccur, copp, 0
            return ccur, copp, None

        def children(cur, opp, side, ply, mask, possible):
            """(move, child_cur, child_opp, terminal score for the mover or None) of each move."""
            return [(mv, *child(cur, opp, side, ply, mv)) for mv in moves_of(cur, possible)]

        seen = self.seen

        def node(cur, opp, side, ply, depth, alpha, beta):
            """Negamax value for the side to move of a position that is not over."""
            searcher.nodes += 1
            if not searcher.nodes & 255:
                deadline = searcher.deadline
                if deadline is not None and monotonic() > deadline:
                    raise Timeout
            mask = cur | opp
            possible = (mask + bottom_all) & full
            my = win_spots(cur, mask)
            if standard and my & possible:
                return WIN - ply
            op = win_spots(opp, mask)
            extend = 0
            if standard and not pops:
                forced = possible & op
                if forced:
                    if forced & (forced - 1):
                        return -(WIN - ply - 1)
                    possible = forced
                    extend = 1
                possible &= ~(op >> 1)
                if not possible:
                    return -(WIN - ply - 1)
            if depth <= 0:
                return evaluate(cur, opp, side, my, op)
            key = ((cur + mask) << 1) | side
            ent = tt.get(key)
            best_move = 0
            alpha0 = alpha
            if ent is not None:
                edepth, flag, val, best_move = ent
                if val > MATE:
                    val -= ply
                elif val < -MATE:
                    val += ply
                if edepth >= depth:
                    if flag == EXACT:
                        return val
                    if flag == LOWER:
                        if val > alpha:
                            alpha = val
                    elif val < beta:
                        beta = val
                    if alpha >= beta:
                        return val
            # moves are played only when searched: a cut-off spares the rest
            moves = moves_of(cur, possible)
            if best_move or depth >= 2:
                moves.sort(key=lambda mv: (mv == best_move) * 1_000_000 + history.get(mv, 0),
                           reverse=True)
            best = -WIN - 1
            bm = 0
            ndepth = depth - 1 + extend
            for mv in moves:
                ccur, copp, term = child(cur, opp, side, ply, mv)
                if term is not None:
                    score = term
                elif pops:
                    ck = ((ccur + (ccur | copp)) << 1) | (1 - side)
                    seen[ck] = seen.get(ck, 0) + 1
                    try:
                        score = -node(ccur, copp, 1 - side, ply + 1, ndepth, -beta, -alpha)
                    finally:
                        seen[ck] -= 1
                else:
                    score = -node(ccur, copp, 1 - side, ply + 1, ndepth, -beta, -alpha)
                if score > best:
                    best = score
                    bm = mv
                    if score > alpha:
                        alpha = score
                        if alpha >= beta:
                            history[mv] = history.get(mv, 0) + depth * depth
                            break
            if best >= beta:
                flag = LOWER
            elif best <= alpha0:
                flag = UPPER
            else:
                flag = EXACT
            store = best + ply if best > MATE else best - ply if best < -MATE else best
            tt[key] = (depth, flag, store, bm)
            return best

        self._children = children
        return node


def decode_position(geo: Geometry, game) -> tuple[int, int, int, int]:
    """(cur, opp, side, ply) of an `arena.game.Game`: side 0 when player 1 is to move."""
    side = game.to_move - 1
    return game.boards[side], game.boards[1 - side], side, game.ply
