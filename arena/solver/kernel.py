"""The exact solver's inner search, compiled by numba (pure Python when numba is missing).

A drop-only, connect-4 game on a board of W columns and H rows with W*(H+1) <= 63 bits, in the
layout of the engine (`arena.game.state`): column c owns bits c*(H+1) .. c*(H+1)+H-1, bottom
first, plus an empty sentinel bit. A position is `cur` (discs of the side to move) and `mask`
(all discs). The algorithm is Pascal Pons' (blog.gamesolver.org): non-losing move generation,
ordering by the number of winning spots a move creates, centre-first columns, a transposition
table of bounds, and a null-window search that narrows the score window; bots/alphabeta's
`Solver` is the same algorithm on Python ints, this module is the compiled copy for speed, with
one addition: enhanced transposition cutoffs (a child's stored bound can end a node at once).

Scores are on Pons' scale for the side to move: a win with the disc that leaves `e` cells empty
after it scores `(e + 2) // 2`, a draw 0, a loss the negative of the opponent's win.

numba cannot read a clock, so a search is bounded by a node budget: once `stats[0]` (nodes)
passes `stats[1]` it sets `stats[2]` and unwinds without storing anything in the table.

The table has two tiers in one array (`tiers` gives their layout): positions with many empty
cells in a large one, those near the leaves in one small enough to stay in the core's cache.
Most probes are of the second kind, and in a single large table nearly every probe missed the
caches: two tiers search 10-35% more nodes but 2.2-2.5x faster (6- to 10-ply positions).
"""

from __future__ import annotations

from functools import partial, wraps

import numpy as np

try:
    import numba

    COMPILED = True
    from arena.numba_cache import seed_private_cache

    seed_private_cache(__file__)  # a sandboxed bot loads the machine code compiled outside
except ImportError:  # pragma: no cover - exercised only where numba is missing
    # the same code as plain Python: right, but some 100 times slower (fine for small boards
    # and late positions, not for play in time: see `COMPILED`)
    COMPILED = False


def compiled(function, inline: bool = False):
    """`function` compiled by numba, the machine code cached on disk where a writable place is
    found (beside this file, else the user's cache folder: a sandboxed bot's private HOME), else
    compiled afresh in each process (about 1-5 s). inline: compiled into each compiled caller
    (which may then fold its constant arguments), and callable from Python as well."""
    if not COMPILED:
        return function if inline else _wrapping(function)
    options = {"inline": "always"} if inline else {}
    try:
        return numba.njit(cache=True, **options)(function)
    except RuntimeError:  # "no locator available": nowhere to write the cache
        return numba.njit(**options)(function)


def _wrapping(function):
    """`function` as plain Python with numpy's integer overflow allowed silently, as in the
    compiled code, whose int64 products wrap by design (the hashes, the popcount): numpy would
    warn of each. The helpers (`inline`) run inside these entry points."""

    @wraps(function)
    def run(*args):
        with np.errstate(over="ignore"):
            return function(*args)

    return run


NODES, LIMIT, ABORTED = 0, 1, 2
# The transposition table is one int64 array, an entry `(key & KEY_MASK) << VALUE_BITS | value`
# (0: empty), so a probe touches one cache line, not one in a key array and one in a value array.
# value: an upper bound u is stored as u + BIAS, a lower bound l as l + BIAS + LOWER_BOUND
# (scores lie within +-64 on any board the solver takes). The low 53 bits of a key (< 2**63) and
# its slot (key % size, for the sizes `engine.table_entries` gives) determine it.
BIAS = 128
LOWER_BOUND = 256
VALUE_BITS = 10
VALUE_MASK = (1 << VALUE_BITS) - 1
KEY_MASK = (1 << 53) - 1
# `tiers`: entries and hash shift of the large tier (slots from 0), of the small tier (after the
# large one), and the first ply stored in the small tier. A shift of 0 means `key % entries`
# (keys above 53 bits, where the slot must help tell keys apart, see above); otherwise the
# entries are a power of two and the slot is the top bits of the key times an odd constant
# (Fibonacci hashing: no division, and spread better than the key's structured low bits).
LARGE, LARGE_SHIFT, SMALL, SMALL_SHIFT, DEEP_PLY = 0, 1, 2, 3, 4
GOLDEN = -7046029254386353131  # 0x9E3779B97F4A7C15 as an int64: numba's products wrap


@partial(compiled, inline=True)
def winning_spots(position, mask, h, board_mask):
    """Empty cells where a disc of `position` would complete a line of four."""
    r = (position << 1) & (position << 2) & (position << 3)
    for s in (h + 1, h, h + 2):
        p = (position << s) & (position << (2 * s))
        r |= p & (position << (3 * s))
        r |= p & (position >> s)
        p = (position >> s) & (position >> (2 * s))
        r |= p & (position << s)
        r |= p & (position >> (3 * s))
    return r & (board_mask ^ mask)


@partial(compiled, inline=True)
def slot_of(key, entries, shift, base):
    """The slot of `key` in the tier of `entries` entries starting at `base` (see `tiers`)."""
    if shift:
        return base + (((key * GOLDEN) >> shift) & (entries - 1))
    return base + key % entries


@partial(compiled, inline=True)
def tier_slot(key, ply, deep_ply, large, large_shift, small, small_shift):
    """The slot of the position `key` at `ply`: in the small tier from `deep_ply` on."""
    if ply < deep_ply:
        return slot_of(key, large, large_shift, 0)
    return slot_of(key, small, small_shift, large)


@partial(compiled, inline=True)
def popcount(x):
    """Set bits of a non-negative board (at most 63 bits): the SWAR count, constant time (also
    right on Python ints, whose product keeps the wanted byte at bits 56-63)."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return ((x * 0x0101010101010101) >> 56) & 0xFF


@compiled
def _trunc_half(x):
    """x / 2 rounded toward zero (C's integer division, as in Pons' solver)."""
    return x // 2 if x >= 0 else -((-x) // 2)


@compiled
def negamax(cur, mask, moves, alpha, beta, w, h, bottom, board_mask, order, table, tiers, scratch,
            stats):
    """Score of a position whose side to move cannot win at once, within [alpha, beta].

    A depth-first search on an explicit stack (one row of `frames` per ply below the root),
    not recursive calls: a call of compiled code costs about as much as a node's own work (it
    passes and reference-counts four arrays). With the two small helpers inlined, 1.15-1.2x
    the nodes per second of the recursive form, the same nodes."""
    cells = w * h
    large, large_shift = tiers[LARGE], tiers[LARGE_SHIFT]
    small, small_shift = tiers[SMALL], tiers[SMALL_SHIFT]
    deep_ply = tiers[DEEP_PLY]
    column_bits = (np.int64(1) << h) - 1
    depth_max = cells - moves + 1
    # per ply: cur, mask, alpha, beta, slot, tag, children, next child
    frames = np.empty((depth_max, 8), dtype=np.int64)
    d = 0
    frames[0, 0] = cur
    frames[0, 1] = mask
    frames[0, 2] = alpha
    frames[0, 3] = beta
    entering = True
    value = 0
    while True:
        if entering:
            cur = frames[d, 0]
            mask = frames[d, 1]
            alpha = frames[d, 2]
            beta = frames[d, 3]
            ply = moves + d
            stats[NODES] += 1
            if stats[NODES] > stats[LIMIT]:
                stats[ABORTED] = 1
                return 0
            done = True
            possible = (mask + bottom) & board_mask
            opp_win = winning_spots(cur ^ mask, mask, h, board_mask)
            forced = possible & opp_win
            if forced and forced & (forced - 1):
                value = -((cells - ply) // 2)
            else:
                if forced:
                    possible = forced
                nxt = possible & ~(opp_win >> 1)
                if nxt == 0:
                    value = -((cells - ply) // 2)
                elif ply >= cells - 2:
                    value = 0
                else:
                    done = False
            if not done:
                lo = -((cells - 2 - ply) // 2)
                if alpha < lo:
                    alpha = lo
                    if alpha >= beta:
                        value = alpha
                        done = True
            if not done:
                hi = (cells - 1 - ply) // 2
                key = cur + mask + bottom  # + bottom: never 0, the key of an empty slot
                slot = tier_slot(key, ply, deep_ply, large, large_shift, small, small_shift)
                tag = (key & KEY_MASK) << VALUE_BITS
                entry = table[slot]
                if entry ^ tag <= VALUE_MASK:  # the same key: only the value bits differ
                    v = entry & VALUE_MASK
                    if v >= LOWER_BOUND:
                        lo = v - LOWER_BOUND - BIAS
                        if alpha < lo:
                            alpha = lo
                            if alpha >= beta:
                                value = alpha
                                done = True
                    else:  # upper bound
                        hi = v - BIAS
                        if beta > hi:
                            beta = hi
                            if alpha >= beta:
                                value = beta
                                done = True
            if not done and beta > hi:
                beta = hi
                if alpha >= beta:
                    value = beta
                    done = True
            if not done:
                # move ordering: insertion sort by the number of winning spots the move
                # creates; on equal counts the column added later (further from the centre)
                # goes after
                row = scratch[ply]
                count = 0
                for i in range(w):
                    col = order[i]
                    m = nxt & (column_bits << (col * (h + 1)))
                    if m:
                        score = popcount(winning_spots(cur | m, mask, h, board_mask))
                        j = count
                        while j > 0 and row[2 * (j - 1) + 1] < score:
                            row[2 * j] = row[2 * (j - 1)]
                            row[2 * j + 1] = row[2 * (j - 1) + 1]
                            j -= 1
                        row[2 * j] = m
                        row[2 * j + 1] = score
                        count += 1
                # enhanced transposition cutoff: a child whose stored upper bound u already
                # gives this node a score of at least -u >= beta ends the node before any
                # child is searched (27% fewer nodes, 21% less time on 8-ply positions)
                opponent = cur ^ mask
                for i in range(count):
                    child_key = opponent + (mask | row[2 * i]) + bottom
                    child = table[tier_slot(child_key, ply + 1, deep_ply, large, large_shift,
                                            small, small_shift)]
                    if child ^ ((child_key & KEY_MASK) << VALUE_BITS) <= VALUE_MASK:
                        v = child & VALUE_MASK
                        if v < LOWER_BOUND and BIAS - v >= beta:  # -(v - BIAS): the bound, negated
                            table[slot] = tag | (BIAS - v + BIAS + LOWER_BOUND)
                            value = BIAS - v
                            done = True
                            break
            if not done:
                frames[d, 2] = alpha
                frames[d, 3] = beta
                frames[d, 4] = slot
                frames[d, 5] = tag
                frames[d, 6] = count
                frames[d, 7] = 0
        else:  # `value`: the score of the child of ply d just searched, for its mover
            score = -value
            beta = frames[d, 3]
            done = False
            if score >= beta:
                table[frames[d, 4]] = frames[d, 5] | (score + BIAS + LOWER_BOUND)
                value = score
                done = True
            else:
                if score > frames[d, 2]:
                    frames[d, 2] = score
                frames[d, 7] += 1
        if not done:
            i = frames[d, 7]
            if i < frames[d, 6]:  # search the next child
                cur = frames[d, 0]
                mask = frames[d, 1]
                frames[d + 1, 0] = cur ^ mask
                frames[d + 1, 1] = mask | scratch[moves + d, 2 * i]
                frames[d + 1, 2] = -frames[d, 3]
                frames[d + 1, 3] = -frames[d, 2]
                d += 1
                entering = True
                continue
            value = frames[d, 2]
            table[frames[d, 4]] = frames[d, 5] | (value + BIAS)
        if d == 0:
            return value
        d -= 1
        entering = False


@compiled
def solve(cur, mask, moves, weak, w, h, bottom, board_mask, order, table, tiers, scratch, stats):
    """Exact score of a position that is not over (weak: only -1/0/+1)."""
    cells = w * h
    possible = (mask + bottom) & board_mask
    if winning_spots(cur, mask, h, board_mask) & possible:
        return 1 if weak else (cells + 1 - moves) // 2
    if moves >= cells:
        return 0
    lo = -((cells - moves) // 2)
    hi = (cells + 1 - moves) // 2
    if weak:
        lo, hi = -1, 1
    while lo < hi:
        med = lo + (hi - lo) // 2
        if med <= 0 and _trunc_half(lo) < med:
            med = _trunc_half(lo)
        elif med >= 0 and _trunc_half(hi) > med:
            med = _trunc_half(hi)
        r = negamax(cur, mask, moves, med, med + 1, w, h, bottom, board_mask, order, table,
                    tiers, scratch, stats)
        if stats[ABORTED]:
            return 0
        if r <= med:
            hi = r
        else:
            lo = r
    if weak:  # a null window may fail beyond +-1: only the sign is known
        return (lo > 0) - (lo < 0)
    return lo
