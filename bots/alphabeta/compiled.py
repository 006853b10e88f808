"""The heuristic tree search of `search.Searcher`, compiled by numba: the same moves, order,
evaluation, table and repetition rule, 15-25 times the nodes per second, so the same time
reaches 3-4 plies deeper.

Only where `available` says so (the standard rules, at most 63 bits, shifts under 64, games the
repetition table holds); the bot uses `search.Searcher` elsewhere, and until the machine code
is ready (`warm_up`, run in a thread from the bot's start: loaded from the cache beside this
file, which the arena fills outside the sandbox (`arena/numba_cache.py`), else compiled).

Boards are int64 (at most 63 bits, so never negative); only right shifts of unshifted boards are
taken, and left shifts are masked, so the arithmetic shift of int64 acts as a logical one.
numba reads no clock: a search asks the time (in object mode) every 4,096 nodes and, once past
its deadline, sets `stats[ABORTED]` and unwinds.

Differences from `search.Searcher`, both invisible at the depths a move reaches: the table is
a 4-way set-associative array (the Python one a dict, cleared past a million entries), so a
long search may lose an entry; and repetition counts live in a hash table of 4,096 entries.
"""

from __future__ import annotations

import threading
import time
from itertools import combinations

import numpy as np
from search import RootSearch, Searcher, Timeout  # bots/alphabeta

from arena.game.rules import uses_standard_hooks
from arena.solver.kernel import COMPILED, compiled, popcount

if COMPILED:
    import numba

    from arena.numba_cache import seed_private_cache

    seed_private_cache(__file__)  # a sandboxed bot loads the machine code compiled outside

WIN = 1_000_000
MATE = WIN - 10_000
EXACT, LOWER, UPPER = 0, 1, 2
NODES, ABORTED = 0, 1  # stats slots
CHECK_EVERY = 4095  # nodes between clock reads (a mask)
WAYS = 4
TT_BITS = 18
TT_SETS = 1 << TT_BITS  # x 4 ways: 1 M entries of two int64 (key, data), 16 MB
# An entry's data: value (32 bits, signed) << 32 | depth (16 bits) << 16 | flag << 8 | move (8
# bits, signed). Key and data side by side, a set's 4 ways in one 64-byte cache line: a probe
# and a store touch one line (five arrays, one per field, took up to five).
SEEN_BITS = 12
SEEN_SIZE = 1 << SEEN_BITS  # repetition table
GOLDEN = -7046029254386353131  # 0x9E3779B97F4A7C15 as a signed 64-bit number
SEEN_EMPTY = -1

# geometry slots of the `g` array
(G_W, G_H, G_K, G_STRIDE, G_FULL, G_BOTTOM, G_FIXED, G_ODD, G_EVEN, G_MAXPLY, G_POPS,
 G_REPEATS, G_ZUGZWANG, G_SIZE) = range(14)

_ready = threading.Event()


def available(variant) -> bool:
    """Whether the compiled search plays `variant`: numba present, the standard rules, at most
    63 bits, every line test's shift under 64 (numba, like C, takes a shift count modulo 64),
    and a game short enough for the repetition table (4,096 entries, half full at most)."""
    stride = variant.rows + 1
    return (COMPILED and variant.columns * stride <= 63
            and (variant.connect - 1) * (stride + 1) < 64
            and variant.max_plies + 64 <= SEEN_SIZE // 2
            and uses_standard_hooks(variant.rules))  # every hook, a later one too


def ready() -> bool:
    return _ready.is_set()


@compiled
def win_spots(p, mask, g):
    """Empty cells where a disc of `p` would complete a line (as bitboard.win_spots)."""
    k, stride, full = g[G_K], g[G_STRIDE], g[G_FULL]
    r = full
    for i in range(1, k):  # vertical: only discs below
        r &= (p << i) & full
    for s in (stride, stride - 1, stride + 1):
        for a in range(k):  # a own discs in a row on the low side of the spot, the rest high
            t = full
            for i in range(1, a + 1):
                t &= p << (i * s)
            for i in range(1, k - a):
                t &= p >> (i * s)
            r |= t & full
    return r & (full ^ mask)


@compiled
def has_line(b, g):
    k, stride = g[G_K], g[G_STRIDE]
    for s in (1, stride, stride - 1, stride + 1):
        m = b
        for i in range(1, k):
            m &= b >> (i * s)
        if m:
            return True
    return False


@compiled
def potential(own, free, g, groups):
    """K-cell windows of cells in `free` holding enough discs of `own` (bitboard.potential)."""
    k, stride = g[G_K], g[G_STRIDE]
    n = 0
    for s in (1, stride, stride - 1, stride + 1):
        w = free
        for i in range(1, k):
            w &= free >> (i * s)
        any_group = 0
        for group in groups:
            t = w
            for i in range(k):
                if (group >> i) & 1:
                    t &= own >> (i * s)
            any_group |= t
        n += popcount(w & any_group)
    return n


@compiled
def above(t, g):
    full = g[G_FULL]
    u = (t << 1) & full
    for _ in range(max(0, g[G_H] - 2)):
        u |= (u << 1) & full
    return u


@compiled
def evaluate(cur, opp, side, my, op, g, groups, centre_w, centre_m):
    """Static score for the side to move (search.Searcher's evaluations, per variant)."""
    full = g[G_FULL]
    s = 0
    if g[G_ZUGZWANG]:
        odd, even = g[G_ODD], g[G_EVEN]
        if side == 0:
            t1, t2, b1, b2 = my, op, cur, opp
        else:
            t1, t2, b1, b2 = op, my, opp, cur
        a1 = above(t1, g) if t1 else 0
        a2 = above(t2, g) if t2 else 0
        g1 = t1 & ~a1 & ~a2
        g2 = t2 & ~a2 & ~a1
        o1 = popcount(g1 & odd)
        if o1:
            o2 = popcount(g2 & odd)
            if o2:
                s = 60 * (o1 - o2) - 60
            else:
                s = 220 + 40 * o1
        else:
            s = -40
            if g2 & odd:
                s -= 60
            e2 = popcount(g2 & even)
            if e2:
                s -= 120 if e2 == 1 else 280
        s += 8 * (popcount(t1 & ~g1) - popcount(t2 & ~g2))
        s += 60 * (popcount(t1 & (t1 >> 1)) - popcount(t2 & (t2 >> 1)))
        s += 4 * (potential(b1, full & ~b2, g, groups) - potential(b2, full & ~b1, g, groups))
        for i in range(centre_w.shape[0]):
            s += centre_w[i] * (popcount(b1 & centre_m[i]) - popcount(b2 & centre_m[i]))
        return (s if side == 0 else -s) + 4
    if side == 0:
        good_me, good_op = g[G_ODD], g[G_EVEN]
    else:
        good_me, good_op = g[G_EVEN], g[G_ODD]
    s = 24 * (popcount(my) - popcount(op))
    s += 16 * (popcount(my & good_me) - popcount(op & good_op))
    s += 48 * (popcount(my & (my >> 1)) - popcount(op & (op >> 1)))
    s += 4 * (potential(cur, full & ~opp, g, groups) - potential(opp, full & ~cur, g, groups))
    for i in range(centre_w.shape[0]):
        s += centre_w[i] * (popcount(cur & centre_m[i]) - popcount(opp & centre_m[i]))
    return s + 4


@compiled
def apply(cur, opp, ply, mv, g, column_masks):
    """(next cur, next opp, mover's result: -1 none, 0 loss, 1 draw, 2 win) after move `mv`
    (+c drop, -c pop) under the standard rules, then the ply cap (as bitboard.apply)."""
    full = g[G_FULL]
    if mv > 0:
        mover = cur | (((cur | opp) + g[G_BOTTOM]) & column_masks[mv - 1])
        other = opp
        if has_line(mover, g):
            return other, mover, 2
        if mover | other == full:
            return other, mover, 1
    else:
        cm = column_masks[-mv - 1]
        mover = (cur & ~cm) | (((cur & cm) >> 1) & cm)
        other = (opp & ~cm) | (((opp & cm) >> 1) & cm)
        if has_line(mover, g):
            return other, mover, 2
        if has_line(other, g):
            return other, mover, 0
        if (mover | other) & ~g[G_FIXED] == 0:
            return other, mover, 1
    if ply + 1 >= g[G_MAXPLY]:
        return other, mover, 1
    return other, mover, -1


@compiled
def _hash(key, bits):
    """`bits` well-mixed bits of a key: the top ones of a Fibonacci product (the low bits of a
    key are the left columns only)."""
    return ((key * GOLDEN) >> (64 - bits)) & ((1 << bits) - 1)


@compiled
def _seen_slot(seen_keys, key):
    i = _hash(key, SEEN_BITS)
    while seen_keys[i] != key and seen_keys[i] != SEEN_EMPTY:
        i = (i + 1) & (SEEN_SIZE - 1)
    return i


@compiled
def seen_add(seen_keys, seen_counts, key, delta):
    i = _seen_slot(seen_keys, key)
    seen_keys[i] = key
    seen_counts[i] += delta
    if seen_counts[i] == 0:
        # removals come in the reverse order of the additions (a search path is a stack), so no
        # key added earlier probed past this slot: emptying it breaks no chain
        seen_keys[i] = SEEN_EMPTY


@compiled
def seen_count(seen_keys, seen_counts, key):
    i = _seen_slot(seen_keys, key)
    return seen_counts[i] if seen_keys[i] == key else 0


@compiled
def position_key(cur, opp, side):
    # cur + mask < 2 ** 63 (Pons' key), so the side fits below it only as a separate bit: keys
    # of the two sides may meet in the hashed tables, whose entries compare the whole pair
    return (cur + (cur | opp)) * 2 + side


@compiled
def child(cur, opp, side, ply, mv, g, column_masks, seen_keys, seen_counts):
    """(child cur, child opp, whether the move ends the game, its score for the mover)."""
    ccur, copp, result = apply(cur, opp, ply, mv, g, column_masks)
    if result == 2:
        return ccur, copp, True, WIN - ply
    if result == 0:
        return ccur, copp, True, -(WIN - ply - 1)
    if result == 1:
        return ccur, copp, True, 0
    repeats = g[G_REPEATS]
    if repeats and seen_count(seen_keys, seen_counts, position_key(ccur, copp, 1 - side)) >= repeats:
        return ccur, copp, True, 0
    return ccur, copp, False, 0


@compiled
def _tt_find(tt, key):
    base = _hash(key, TT_BITS) * WAYS
    for i in range(base, base + WAYS):
        if tt[i, 0] == key:
            return i
    return -1


@compiled
def _tt_depth(data):
    return (((data >> 16) & 0xFFFF) ^ 0x8000) - 0x8000


@compiled
def _tt_flag(data):
    return (data >> 8) & 0xFF


@compiled
def _tt_move(data):
    return ((data & 0xFF) ^ 0x80) - 0x80


@compiled
def _tt_store(tt, key, depth, flag, val, move):
    base = _hash(key, TT_BITS) * WAYS
    slot = -1
    shallowest = base
    for i in range(base, base + WAYS):
        if tt[i, 0] == key or tt[i, 0] == 0:
            slot = i
            break
        if _tt_depth(tt[i, 1]) < _tt_depth(tt[shallowest, 1]):
            shallowest = i
    if slot < 0:
        slot = shallowest
    tt[slot, 0] = key
    tt[slot, 1] = (val << 32) | ((depth & 0xFFFF) << 16) | ((flag & 0xFF) << 8) | (move & 0xFF)


@compiled
def node(cur, opp, side, ply, depth, alpha, beta, g, column_masks, drop_order, pop_order,
         groups, centre_w, centre_m, tt, work, history, seen_keys, seen_counts, stats, deadline):
    """Negamax value for the side to move of a position that is not over (search.Searcher's
    `node`, move for move); 0 with stats[ABORTED] set once past `deadline`."""
    stats[NODES] += 1
    if (stats[NODES] & CHECK_EVERY) == 0:
        with numba.objmode(now="float64"):
            now = time.monotonic()
        if now > deadline:
            stats[ABORTED] = 1
    if stats[ABORTED]:
        return 0
    full = g[G_FULL]
    mask = cur | opp
    possible = (mask + g[G_BOTTOM]) & full
    my = win_spots(cur, mask, g)
    if my & possible:
        return WIN - ply
    op = win_spots(opp, mask, g)
    extend = 0
    pops = g[G_POPS]
    if not pops:
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
        return evaluate(cur, opp, side, my, op, g, groups, centre_w, centre_m)
    key = position_key(cur, opp, side)
    slot = _tt_find(tt, key)
    best_move = 0
    alpha0 = alpha
    if slot >= 0:
        data = tt[slot, 1]
        best_move = _tt_move(data)
        val = data >> 32
        if val > MATE:
            val -= ply
        elif val < -MATE:
            val += ply
        if _tt_depth(data) >= depth:
            flag = _tt_flag(data)
            if flag == EXACT:
                return val
            if flag == LOWER:
                if val > alpha:
                    alpha = val
            elif val < beta:
                beta = val
            if alpha >= beta:
                return val
    width = g[G_W]
    # this node's move list and sort keys: a row of `work` (no allocation per node); the plies
    # of the nodes on the current line are consecutive, so rows taken modulo never meet
    row = work[ply % work.shape[0]]
    moves = row[:2 * width]
    n = 0
    for c in drop_order:
        if possible & column_masks[c]:
            moves[n] = c + 1
            n += 1
    if pops:
        for c in pop_order:
            if cur & (1 << (c * g[G_STRIDE])):
                moves[n] = -(c + 1)
                n += 1
    if best_move or depth >= 2:
        # stable sort, best first: the table's move, then by history (as Python's sorted)
        keys = row[2 * width:]
        for i in range(n):
            mv = moves[i]
            keys[i] = (mv == best_move) * 1_000_000 + history[mv + width]
        for i in range(1, n):
            mk, mm = keys[i], moves[i]
            j = i - 1
            while j >= 0 and keys[j] < mk:
                keys[j + 1] = keys[j]
                moves[j + 1] = moves[j]
                j -= 1
            keys[j + 1] = mk
            moves[j + 1] = mm
    best = -WIN - 1
    bm = 0
    ndepth = depth - 1 + extend
    for i in range(n):
        mv = moves[i]
        ccur, copp, over, score = child(cur, opp, side, ply, mv, g, column_masks, seen_keys,
                                        seen_counts)
        if not over:
            if pops:
                ck = position_key(ccur, copp, 1 - side)
                seen_add(seen_keys, seen_counts, ck, 1)
            score = -node(ccur, copp, 1 - side, ply + 1, ndepth, -beta, -alpha, g,
                          column_masks, drop_order, pop_order, groups, centre_w, centre_m,
                          tt, work, history, seen_keys, seen_counts, stats, deadline)
            if pops:
                seen_add(seen_keys, seen_counts, ck, -1)
            if stats[ABORTED]:
                return 0
        if score > best:
            best = score
            bm = mv
            if score > alpha:
                alpha = score
                if alpha >= beta:
                    history[mv + width] += depth * depth
                    break
    if best >= beta:
        flag = LOWER
    elif best <= alpha0:
        flag = UPPER
    else:
        flag = EXACT
    if best > MATE:
        store = best + ply
    elif best < -MATE:
        store = best - ply
    else:
        store = best
    _tt_store(tt, key, depth, flag, store, bm)
    return best


def _cache_aligned_pairs(rows: int) -> np.ndarray:
    """A zeroed (rows, 2) int64 array that starts on a 64-byte boundary (numpy aligns to 16), so
    that each set of the table, its four ways, is one cache line."""
    raw = np.zeros(2 * rows + 8, np.int64)
    skip = (-raw.ctypes.data % 64) // 8
    return raw[skip:skip + 2 * rows].reshape(rows, 2)


class CompiledSearcher(RootSearch):
    """`search.Searcher`'s interface (root_search, set_history, the tables) on the compiled
    tree search; the root (`search.RootSearch`) stays in Python, where the levels' evaluation
    noise applies."""

    def __init__(self, geo, seed: int | None = None) -> None:
        import random

        self.geo = geo
        self.rng = random.Random(seed)
        self.eval_noise = 0
        self.deadline: float | None = None
        self.partial: tuple[int, int, int] = (0, 0, 0)
        w = geo.width
        g = np.zeros(G_SIZE, np.int64)
        g[G_W], g[G_H], g[G_K], g[G_STRIDE] = w, geo.height, geo.connect, geo.stride
        g[G_FULL], g[G_BOTTOM], g[G_FIXED] = geo.full, geo.bottom_all, geo.fixed_mask
        odd, even = geo.odd_rows, geo.even_rows
        zugzwang = not geo.pops
        if zugzwang and (geo.full & ~geo.fixed_mask).bit_count() % 2:
            odd, even = even, odd  # as search.Searcher's zugzwang evaluation
        g[G_ODD], g[G_EVEN] = odd, even
        g[G_MAXPLY], g[G_POPS], g[G_ZUGZWANG] = geo.max_plies, int(geo.pops), int(zugzwang)
        g[G_REPEATS] = 0 if geo.repetition_limit is None else geo.repetition_limit - 1
        self.g = g
        self.column_masks = np.array(geo.column_mask, np.int64)
        self.drop_order = np.array(geo.order, np.int64)
        self.pop_order = np.array(geo.poppable, np.int64)
        k = geo.connect
        need = max(1, k - 2)
        groups = list(combinations(range(k), need))
        if len(groups) > 40:  # as bitboard.potential: long lines count windows with any disc
            groups = [(i,) for i in range(k)]
        self.groups = np.array([sum(1 << i for i in grp) for grp in groups], np.int64)
        weights: dict[int, int] = {}
        for cm, weight in geo.centre_masks:
            if weight:
                weights[weight] = weights.get(weight, 0) | cm
        centre = sorted(weights.items())
        self.centre_w = np.array([wt for wt, _ in centre], np.int64)
        self.centre_m = np.array([m for _, m in centre], np.int64)
        size = TT_SETS * WAYS
        self.tt = _cache_aligned_pairs(size)
        # a row per ply of the game (moves and their sort keys), see `node`
        self.work = np.zeros((geo.max_plies + 2, 4 * geo.width), np.int64)
        self.history_table = np.zeros(2 * w + 1, np.int64)
        self.seen_keys = np.full(SEEN_SIZE, SEEN_EMPTY, np.int64)
        self.seen_counts = np.zeros(SEEN_SIZE, np.int64)
        self.stats = np.zeros(2, np.int64)

    @property
    def nodes(self) -> int:
        return int(self.stats[NODES])

    # what player.py clears between games and decays between moves
    def clear_tables(self) -> None:
        self.tt[:, 0] = 0
        self.history_table[:] = 0

    def decay_history(self) -> None:
        self.history_table //= 4

    def table_size(self) -> int:
        return 0  # fixed size: never needs clearing for room

    @staticmethod
    def key(cur: int, opp: int, side: int) -> int:
        """search.Searcher.key as the compiled code computes it: wrapped to int64."""
        return _int64(Searcher.key(cur, opp, side))

    def set_history(self, keys) -> None:
        """The game's positions so far, by search.Searcher.key (for the repetition rule)."""
        self.seen_keys[:] = SEEN_EMPTY
        self.seen_counts[:] = 0
        for k in keys:
            seen_add(self.seen_keys, self.seen_counts, _int64(k), 1)

    def _node(self, cur, opp, side, ply, depth, alpha, beta) -> int:
        deadline = self.deadline if self.deadline is not None else float("inf")
        value = node(cur, opp, side, ply, depth, alpha, beta, self.g, self.column_masks,
                     self.drop_order, self.pop_order, self.groups, self.centre_w, self.centre_m,
                     self.tt, self.work,
                     self.history_table, self.seen_keys, self.seen_counts, self.stats, deadline)
        if self.stats[ABORTED]:
            self.stats[ABORTED] = 0
            raise Timeout
        return int(value)

    def _root_children(self, cur, opp, side, ply):
        geo = self.geo
        possible = ((cur | opp) + geo.bottom_all) & geo.full
        moves = [c + 1 for c in geo.order if possible & geo.column_mask[c]]
        if geo.pops:
            moves += [-(c + 1) for c in geo.poppable if cur & geo.bottom[c]]
        kids = []
        for mv in moves:
            ccur, copp, over, term = child(cur, opp, side, ply, mv, self.g, self.column_masks,
                                           self.seen_keys, self.seen_counts)
            kids.append((mv, int(ccur), int(copp), int(term) if over else None))
        return kids

    def _count(self, key: int, delta: int) -> None:
        seen_add(self.seen_keys, self.seen_counts, key, delta)

def _int64(key: int) -> int:
    return key - (1 << 64) if key >= 1 << 63 else key


def warm_up() -> None:
    """Compile (or load) every entry point on a small board, then mark the search ready."""
    if not COMPILED:
        return
    from arena.bitboard import geometry_for
    from arena.game import parse_variant

    for spec in ("classic:5x4", "popout:5x4"):
        searcher = CompiledSearcher(geometry_for(parse_variant(spec)))
        searcher.set_history([0])
        searcher.root_search(0, 0, 0, 0, 2, None)
    _ready.set()
