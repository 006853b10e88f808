"""Monte Carlo tree search (UCT) on bitboards, for every variant.

Playouts are inlined on bitboards: the side to move takes an immediate win, otherwise blocks the
opponent's playable winning cell, otherwise plays a random move that does not put a disc just
below an opponent's winning cell (when it can avoid it). In the tree, a node with a winning move
has only that child and, in drop-only variants, a node facing a threat has only the blocking child,
so short tactics are solved exactly. Every move is played through `arena.bitboard.apply`, so wins,
the ply cap, full boards and empty boards end games as in the engine; repetition is not tracked
inside the tree (an approximation).

PopOut variants: the tree leaves out moves the opponent punishes at once, and a threat-space
search at the root plays forced wins and prunes the moves that allow one. With lines of 5 or more
(where random playouts end mostly undecided), a new node is scored by a heuristic evaluation
rather than a random playout (`PLAYOUT_CAP`) and starts with a few virtual visits at that value
(`PRIOR_VISITS`).

Levels (`--level`): `easy` (150 playouts), `medium` (1500 playouts, half the budget), `hard`
(default: the whole budget).
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass

from arena.bitboard import Geometry, geometry_for, pop_column


@dataclass(frozen=True)
class Level:
    max_playouts: int
    time_share: float
    deep_check: bool = True  # PopOut: prune root moves refuted by a two-ply look-ahead


LEVELS = {
    "easy": Level(max_playouts=150, time_share=0.3, deep_check=False),
    "medium": Level(max_playouts=1500, time_share=0.5),
    "hard": Level(max_playouts=10**9, time_share=1.0),
}
DEFAULT_LEVEL = "hard"
EXPLORATION = 0.9
POP_SHARE = 0.05  # share of random pops in PopOut playouts
PRIOR_VISITS = 4  # PopOut: virtual visits of a new node at its heuristic value
PLAYOUT_CAP = 0  # PopOut, K >= 5: no random playout, the heuristic evaluation of the new node


class Node:
    # no parent links: the tree has no reference cycles, so it is freed at once without the
    # cyclic garbage collector (whose pauses on big trees could cost a move on time)
    __slots__ = ("move", "children", "untried", "visits", "score",
                 "cur", "opp", "side", "ply", "terminal")

    def __init__(self, move, cur, opp, side, ply, terminal):
        self.move = move
        self.children: list[Node] = []
        self.untried: list[int] | None = None
        self.visits = 0
        self.score = 0.0  # reward of the player who moved into this node
        self.cur, self.opp, self.side, self.ply = cur, opp, side, ply
        self.terminal = terminal  # None, or the reward of the player who moved into this node


class MctsPlayer:
    def __init__(self, variant, level: str = DEFAULT_LEVEL, seed: int | None = None) -> None:
        self.variant = variant
        self.level = LEVELS[level]
        self.geo: Geometry = geometry_for(variant)
        self.rng = random.Random(seed)
        self.playouts = 0
        # PopOut with lines of 5 or more: heuristic evaluation instead of random playouts
        self.evaluated = self.geo.pops and self.geo.connect >= 5 and self.geo.standard
        # arena.bitboard.apply: (cur, opp, ply, move) -> (next cur, next opp, reward of the
        # mover if the move ended the game, else None)
        self.play = self.geo.apply
        if self.geo.standard:
            self._playout = self._build_playout()
        else:
            # another rule (a misère line loses): no standard-rule shortcuts (a win first,
            # forced blocks, threat heuristics); every legal move, random playouts by `apply`
            self.moves = self._all_moves
            self._playout = self._build_plain_playout()

    # -- rules on bitboards --------------------------------------------------------------------
    def moves(self, cur: int, opp: int) -> list[int]:
        """Candidate moves (engine ints): only a win if there is one, only blocks when forced."""
        geo = self.geo
        mask = cur | opp
        possible = (mask + geo.bottom_all) & geo.full
        wins = geo.win_spots(cur, mask) & possible
        if wins:
            for c in geo.order:
                if wins & geo.column_mask[c]:
                    return [c + 1]
        theirs = geo.win_spots(opp, mask)
        if not geo.pops:
            forced = theirs & possible
            if forced:
                possible = forced
            safe = possible & ~(theirs >> 1)
            if safe:
                possible = safe
        out = [c + 1 for c in geo.order if possible & geo.column_mask[c]]
        play = self.play
        played: dict[int, tuple[int, int, float | None]] = {}
        for c in geo.poppable:
            if cur & geo.bottom[c]:
                move = -(c + 1)
                played[move] = result = play(cur, opp, 0, move)
                if result[2] == 1.0:
                    # a pop that wins at once (even if it makes a line of the opponent's too):
                    # play only that
                    return [move]
                out.append(move)
        if geo.pops and len(out) > 1 and self.level.deep_check:
            # PopOut: leave out the moves the opponent punishes at once (when others exist), so
            # that the tree follows forced lines as it does in drop-only variants
            wins_now = self._wins_now
            safe = []
            for move in out:
                ncur, nopp, term = played.get(move) or play(cur, opp, 0, move)
                if term is None:
                    if not wins_now(ncur, nopp):
                        safe.append(move)
                elif term >= 0.5:
                    safe.append(move)
            if safe:
                return safe
        return out

    def _build_playout(self):
        geo = self.geo
        full, bottom_all = geo.full, geo.bottom_all
        win_spots, stride = geo.win_spots, geo.stride
        colmasks = [geo.column_mask[c] for c in geo.order]
        popcols = [(geo.bottom[c], -(c + 1)) for c in geo.poppable]
        pops = geo.pops
        play = self.play
        rand = self.rng.random
        # long lines with pops: random playouts end mostly undecided, evaluate instead
        length_cap = PLAYOUT_CAP if self.evaluated else 10**9

        potential = geo.potential

        def cutoff(cur: int, opp: int, side: int) -> float:
            """Heuristic result (reward of side 0) of an unfinished playout: threats (empty
            cells completing a line, stacked pairs) and open windows holding K-2 discs."""
            mask = cur | opp
            mine = win_spots(cur, mask)
            theirs = win_spots(opp, mask)
            d = 4 * (mine.bit_count() - theirs.bit_count())
            d += 6 * ((mine & (mine >> 1)).bit_count() - (theirs & (theirs >> 1)).bit_count())
            d += potential(cur, full & ~opp) - potential(opp, full & ~cur)
            v = 0.5 + max(-0.4, min(0.4, 0.03 * d))
            return v if side == 0 else 1.0 - v

        def playout(cur: int, opp: int, side: int, ply: int) -> int | float | None:
            """Winner (0/1, the side index) of a quick playout, None for a draw; a cut-off
            playout (PopOut: `PLAYOUT_CAP` plies) returns a float, the reward of side 0."""
            stop = ply + length_cap
            while True:
                if ply >= stop:
                    return cutoff(cur, opp, side)
                mask = cur | opp
                possible = (mask + bottom_all) & full
                if win_spots(cur, mask) & possible:
                    return side
                theirs = win_spots(opp, mask)
                block = theirs & possible
                move = 0
                if block:
                    if not pops and block & (block - 1):
                        return 1 - side
                    m = block & -block
                else:
                    cand = possible & ~(theirs >> 1) or possible
                    if pops and rand() < POP_SHARE:
                        mine = [pc for pc in popcols if cur & pc[0]]
                        if mine:
                            move = mine[int(rand() * len(mine))][1]
                    if not move:
                        cols = [cm for cm in colmasks if cand & cm]
                        m = cand & cols[int(rand() * len(cols))]
                if not move:
                    move = (m.bit_length() - 1) // stride + 1
                cur, opp, term = play(cur, opp, ply, move)
                if term is not None:
                    return None if term == 0.5 else side if term == 1.0 else 1 - side
                ply += 1
                side = 1 - side

        self.cutoff = cutoff
        return playout

    def _build_plain_playout(self):
        all_moves, play, rand = self._all_moves, self.play, self.rng.random

        def playout(cur: int, opp: int, side: int, ply: int) -> int | None:
            """Winner (0/1, the side index) of a uniformly random playout, None for a draw;
            the ply cap in `apply` ends one that repeats positions."""
            while True:
                moves = all_moves(cur, opp)
                cur, opp, term = play(cur, opp, ply, moves[int(rand() * len(moves))])
                if term is not None:
                    return None if term == 0.5 else side if term == 1.0 else 1 - side
                ply += 1
                side = 1 - side

        return playout

    def prior(self, move: int, child_cur: int, child_opp: int, child_side: int) -> float:
        """Heuristic reward of the player who made `move` (PopOut progressive bias): the
        cut-off evaluation of the new position, nudged towards central drops."""
        v = self.cutoff(child_cur, child_opp, child_side)
        v = v if child_side == 1 else 1.0 - v
        geo = self.geo
        if move > 0:
            half = (geo.width - 1) / 2 or 1
            v += 0.08 * (1 - abs(move - 1 - half) / half)
        # a little noise: without random playouts the search is nearly deterministic, and
        # matches would repeat the same games
        return v + 0.04 * (self.rng.random() - 0.5)

    @staticmethod
    def _safe_moves(game, moves: list[int]) -> list[int]:
        """At the root, with the engine's exact rules: the moves after which the opponent has no
        winning reply (drop or pop), or all of them if there are none."""
        me = game.to_move
        safe = []
        for move in moves:
            outcome = game.push(move)
            ok = outcome is None or outcome.winner != 3 - me
            if outcome is None:
                for reply in game.legal_moves():
                    result = game.push(reply)
                    game.pop()
                    if result is not None and result.winner == 3 - me:
                        ok = False
                        break
            game.pop()
            if ok:
                safe.append(move)
        return safe or moves

    def _all_moves(self, cur: int, opp: int) -> list[int]:
        """Every legal move (engine ints) of the side to move on bitboards."""
        geo = self.geo
        possible = ((cur | opp) + geo.bottom_all) & geo.full
        out = [c + 1 for c in geo.order if possible & geo.column_mask[c]]
        out += [-(c + 1) for c in geo.poppable if cur & geo.bottom[c]]
        return out

    def _wins_now(self, cur: int, opp: int) -> bool:
        """Whether the side to move (`cur`) has a move that wins at once (drop or pop).

        Search knowledge of the standard win condition, as `win_spots` is: a pop can only win
        if it leaves a line of the popper, so only such pops are played (by `apply`) to check.
        """
        geo = self.geo
        mask = cur | opp
        if geo.win_spots(cur, mask) & (mask + geo.bottom_all) & geo.full:
            return True
        play, has_line, column_mask = self.play, geo.has_line, geo.column_mask
        for c in geo.poppable:
            if (cur & geo.bottom[c] and has_line(pop_column(cur, column_mask[c]))
                    and play(cur, opp, 0, -(c + 1))[2] == 1.0):
                return True
        return False

    def _forced_win(self, cur: int, opp: int, ply: int, depth: int, stop: float) -> int:
        """A move with which the side to move (`cur`) wins by force within `depth` threats:
        it wins at once, or every answer loses at once (a double threat, a zugzwang), or it
        threatens a win and every answer that parries it leads to such a forced win again.
        0 if none found. Bitboard rules (repetition aside); only threatening moves are
        followed, so it is cheap; raises `TimeoutError` at `stop`."""
        if time.monotonic() > stop:
            raise TimeoutError
        play, wins_now, all_moves = self.play, self._wins_now, self._all_moves
        candidates = []
        for move in all_moves(cur, opp):
            c1, o1, term = play(cur, opp, ply, move)
            if term is not None:
                if term == 1.0:
                    return move
                continue
            candidates.append((move, c1, o1))
        for move, c1, o1 in candidates:
            # the opponent (c1) to move must not win now; a move that threatens a win is
            # followed deeper, any other only for zugzwang (every answer loses at once)
            if wins_now(c1, o1):
                continue
            deeper = depth > 1 and wins_now(o1, c1)
            for answer in all_moves(c1, o1):
                c2, o2, term = play(c1, o1, ply + 1, answer)
                if term is not None:
                    if term >= 0.5:
                        break  # the answer wins or draws at once
                    continue
                if wins_now(c2, o2):
                    continue  # the answer loses at once
                if deeper and self._forced_win(c2, o2, ply + 2, depth - 1, stop):
                    continue
                break  # this answer holds
            else:
                return move
        return 0

    # -- search --------------------------------------------------------------------------------
    def choose(self, game, deadline: float) -> int:
        start = time.monotonic()
        legal = game.legal_moves()
        if len(legal) == 1:
            return legal[0]
        side = game.to_move - 1
        root = Node(0, game.boards[side], game.boards[1 - side], side, game.ply, None)
        root.untried = self.moves(root.cur, root.opp)
        root.untried = [m for m in root.untried if m in legal] or legal
        if len(root.untried) > 1:
            root.untried = self._safe_moves(game, root.untried)
        if len(root.untried) == 1:
            return root.untried[0]
        remaining = max(0.0, deadline - start)
        stop = start + max(0.0, remaining - max(0.003, 0.05 * remaining)) * self.level.time_share
        if self.geo.pops and self.level.deep_check and self.geo.standard:
            # PopOut: short tactics (chains of threats by drops and pops) escape the playouts:
            # play a forced win, prune the moves that allow one (deeper while time allows,
            # within a third of the budget)
            check_stop = start + 0.35 * (stop - start)
            kept = root.untried
            try:
                for depth in range(1, 7):
                    win = self._forced_win(root.cur, root.opp, root.ply, depth, check_stop)
                    if win and win in legal:
                        return win
                    found = []
                    for move in root.untried:
                        ncur, nopp, term = self.play(root.cur, root.opp, root.ply, move)
                        if term is None and self._forced_win(ncur, nopp, root.ply + 1, depth,
                                                             check_stop):
                            continue
                        found.append(move)
                    kept = found or kept
            except TimeoutError:
                pass
            root.untried = kept
            if len(root.untried) == 1:
                return root.untried[0]
        limit = self.level.max_playouts
        prior_visits = PRIOR_VISITS if self.evaluated and self.level.deep_check else 0
        playout = self._playout
        rand = self.rng.random
        log, sqrt = math.log, math.sqrt
        n = 0
        monotonic = time.monotonic
        while n < limit:
            if monotonic() > stop:
                break
            n += 1
            node = root
            path = [root]
            # selection
            while not node.untried and node.children and node.terminal is None:
                c = EXPLORATION * sqrt(log(node.visits))
                best, best_value = None, -1.0
                for child in node.children:
                    value = child.score / child.visits + c / sqrt(child.visits)
                    if value > best_value:
                        best, best_value = child, value
                node = best
                path.append(node)
            # expansion
            if node.terminal is None and node.untried:
                move = node.untried.pop(int(rand() * len(node.untried)))
                ncur, nopp, term = self.play(node.cur, node.opp, node.ply, move)
                child = Node(move, ncur, nopp, 1 - node.side, node.ply + 1, term)
                if term is None:
                    child.untried = self.moves(ncur, nopp)
                    if prior_visits:
                        # virtual visits at the heuristic value: a prior for the selection
                        child.visits = prior_visits
                        child.score = prior_visits * self.prior(move, ncur, nopp, child.side)
                node.children.append(child)
                node = child
                path.append(node)
            # simulation: reward for the player who moved into `node`
            if node.terminal is not None:
                reward = node.terminal
            else:
                winner = playout(node.cur, node.opp, node.side, node.ply)
                if winner is None:
                    reward = 0.5
                elif winner.__class__ is float:  # a cut-off playout: reward of side 0
                    reward = winner if node.side == 1 else 1.0 - winner
                else:
                    reward = 1.0 if winner != node.side else 0.0
            # backpropagation
            for node in reversed(path):
                node.visits += 1
                node.score += reward
                reward = 1.0 - reward
        self.playouts = n
        if not root.children:
            return root.untried[0]
        best = max(root.children, key=lambda ch: (ch.visits, ch.score))
        return best.move
