"""Monte Carlo tree search (UCT) on bitboards, for every variant.

Playouts are inlined on bitboards: the side to move takes an immediate win, otherwise blocks the
opponent's playable winning cell, otherwise plays a random move that does not put a disc just
below an opponent's winning cell (when it can avoid it). In the tree, a node with a winning move
has only that child and, in drop-only variants, a node facing a threat has only the blocking child,
so short tactics are solved exactly. Repetition is not tracked inside the tree (an approximation);
the ply cap, full boards and empty boards end games as in the engine.

Levels (`--level`): `easy` (150 playouts), `medium` (1500 playouts, half the budget), `hard`
(default: the whole budget).
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass

from mcts_board import Geometry, geometry_for, pop_column


@dataclass(frozen=True)
class Level:
    max_playouts: int
    time_share: float


LEVELS = {
    "easy": Level(max_playouts=150, time_share=0.3),
    "medium": Level(max_playouts=1500, time_share=0.5),
    "hard": Level(max_playouts=10**9, time_share=1.0),
}
DEFAULT_LEVEL = "hard"
EXPLORATION = 0.9
POP_SHARE = 0.05  # share of random pops in PopOut playouts


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
        self._playout = self._build_playout()

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
        for c in geo.poppable:
            if cur & geo.bottom[c]:
                # a pop that completes a line of the popper wins at once (even if it makes one
                # of the opponent's too): play only that
                if geo.has_line(pop_column(cur, geo.column_mask[c])):
                    return [-(c + 1)]
                out.append(-(c + 1))
        return out

    def play(self, cur: int, opp: int, ply: int, move: int) -> tuple[int, int, float | None]:
        """(next cur, next opp, terminal reward of the mover or None) after `move`."""
        geo = self.geo
        if move > 0:
            cm = geo.column_mask[move - 1]
            mask = cur | opp
            nm = cur | ((mask + geo.bottom_all) & cm)
            if geo.has_line(nm):
                return opp, nm, 1.0
            if (nm | opp) == geo.full:
                return opp, nm, 0.5
            no = opp
        else:
            cm = geo.column_mask[-move - 1]
            nm, no = pop_column(cur, cm), pop_column(opp, cm)
            if geo.has_line(nm):
                return no, nm, 1.0
            if geo.has_line(no):
                return no, nm, 0.0
            if not (nm | no) & ~geo.fixed_mask:
                return no, nm, 0.5
        if ply + 1 >= self.variant.max_plies:
            return no, nm, 0.5
        return no, nm, None

    def _build_playout(self):
        geo = self.geo
        full, bottom_all, fixed = geo.full, geo.bottom_all, geo.fixed_mask
        win_spots, has_line = geo.win_spots, geo.has_line
        colmasks = [geo.column_mask[c] for c in geo.order]
        popcols = [(geo.bottom[c], geo.column_mask[c]) for c in geo.poppable]
        pops = geo.pops
        cap = self.variant.max_plies
        rand = self.rng.random

        def playout(cur: int, opp: int, side: int, ply: int) -> int | None:
            """Winner (0/1, the side index) of a quick playout, None for a draw."""
            while True:
                mask = cur | opp
                possible = (mask + bottom_all) & full
                if win_spots(cur, mask) & possible:
                    return side
                theirs = win_spots(opp, mask)
                block = theirs & possible
                popped = False
                if block:
                    if not pops and block & (block - 1):
                        return 1 - side
                    m = block & -block
                else:
                    cand = possible & ~(theirs >> 1) or possible
                    if pops and rand() < POP_SHARE:
                        mine = [pc for pc in popcols if cur & pc[0]]
                        if mine:
                            cm = mine[int(rand() * len(mine))][1]
                            nm, no = pop_column(cur, cm), pop_column(opp, cm)
                            if has_line(nm):
                                return side
                            if has_line(no):
                                return 1 - side
                            if not (nm | no) & ~fixed:
                                return None
                            popped = True
                    if not popped:
                        cols = [cm for cm in colmasks if cand & cm]
                        m = cand & cols[int(rand() * len(cols))]
                if not popped:
                    nm = cur | m
                    no = opp
                    if (nm | no) == full:
                        return None
                ply += 1
                if ply >= cap:
                    return None
                cur, opp = no, nm
                side = 1 - side

        return playout

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
        limit = self.level.max_playouts
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
                node.children.append(child)
                node = child
                path.append(node)
            # simulation: reward for the player who moved into `node`
            if node.terminal is not None:
                reward = node.terminal
            else:
                winner = playout(node.cur, node.opp, node.side, node.ply)
                reward = 0.5 if winner is None else (1.0 if winner != node.side else 0.0)
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
