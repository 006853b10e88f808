"""The schedule: every pairing x every variant x the game pairs, in balanced, interleaved rounds.

Games come in pairs with the same start (empty board or an opening) and the seats swapped; the
two games of a pair share a `pair_id`. Round k holds game pair k of every pairing in every
variant, so a tournament stopped half way is still balanced. Ids are hashes of what defines a
game (variant spec, the two bot names, opening, pair index, who starts), so they are the same on
every run and do not move when bots or variants are added.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations

from arena.game import Variant, format_move
from arena.openings import reuse_note, wins_at_once
from arena.tournament.config import Opening, TournamentConfig


@dataclass(frozen=True)
class ScheduledGame:
    game_id: str
    pair_id: str
    round: int  # the game-pair index k: round k holds pair k of every pairing and variant
    variant: Variant
    first: str
    second: str
    opening: tuple[int, ...] = ()
    seed: int | None = None  # sent to both bots in the `game` line: game_seed(config seed, id)

    @property
    def opening_text(self) -> str:
        return " ".join(format_move(m) for m in self.opening)

    @property
    def bots(self) -> tuple[str, str]:
        return (self.first, self.second)


def _digest(prefix: str, parts: list) -> str:
    text = json.dumps(parts, separators=(",", ":"), ensure_ascii=True)
    return prefix + hashlib.sha256(text.encode()).hexdigest()[:16]


def pair_id_for(variant_spec: str, a: str, b: str, opening_text: str, k: int) -> str:
    low, high = sorted((a, b))
    return _digest("p", [variant_spec, low, high, opening_text, k])


def game_id_for(variant_spec: str, a: str, b: str, opening_text: str, k: int, first: str) -> str:
    low, high = sorted((a, b))
    return _digest("g", [variant_spec, low, high, opening_text, k, first])


def game_seed(seed: int, game_id: str) -> int:
    """The seed a game's bots are given (`game ... seed=N`, 0 <= N < 2**31): a hash of the
    tournament's seed and the game's id, so it is the same on every run of the file, at any
    concurrency, after a resume and on another machine, and a bot whose process plays many
    games draws the same numbers in each game whatever it played before. To reproduce it
    elsewhere: the first 8 hex digits of sha256 of "SEED/GAME_ID", as an integer, less 2**31 if
    not below it."""
    digest = hashlib.sha256(f"{seed}/{game_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def pairings(config: TournamentConfig) -> list[tuple[str, str]]:
    """Unordered pairs of bot names (round-robin), or the gauntlet bot against each other bot."""
    names = [b.name for b in config.bots]
    if config.format == "gauntlet":
        hero = config.gauntlet_bot
        return [(hero, other) for other in names if other != hero]
    return list(combinations(names, 2))


def openings_order(config: TournamentConfig, variant: Variant) -> list[Opening]:
    """The variant's openings in a seeded order (the same for every pairing)."""
    openings = config.openings_for(variant)
    random.Random(f"{config.seed}/{variant.spec}").shuffle(openings)
    return openings


def pair_count(config: TournamentConfig, variant: Variant) -> int:
    """Game pairs per pairing in this variant: games / 2, or one per opening by default."""
    if config.games is not None:
        return config.games // 2
    return max(1, len(config.openings_for(variant)))


def openings_notes(config: TournamentConfig) -> list[str]:
    """Say so when the file names no openings, and when `games` is too small for every opening:
    each game pair plays one opening (both seats), so only the first `games / 2` openings of the
    seeded order are played."""
    notes = []
    if not config.openings_given and any(pair_count(config, v) > 1 for v in config.variants):
        # as fastchess warns: bots that always answer alike would replay one game pair
        notes.append('note: no openings: every game starts from the empty board, so bots that '
                     'always answer a position alike replay the same game; openings = "builtin" '
                     'plays `arena play`\'s set (or name a file; "none" to keep the empty board)')
    for variant in config.variants:
        decided = [o.text for o in config.openings_for(variant) if wins_at_once(variant, o.moves)]
        if decided:
            notes.append(f"note: {len(decided)} opening(s) leave the player to move a win at once "
                         f"in {variant.spec} (e.g. '{decided[0]}'): their games are decided by "
                         "the first move, whoever plays")
        available = len(config.openings_for(variant))
        if config.openings and not available:  # every line is for other variants
            notes.append(f"note: no opening of the openings file is for {variant.spec}: its "
                         "games start from the empty board")
        pairs = pair_count(config, variant)
        if config.openings_given and (note := reuse_note(variant.spec, available, pairs)):
            notes.append(note)
        used = min(available, pairs)
        # a file's openings are meant to be played; the built-in set is a pool to draw from
        # (the demo said so five times)
        if used < available and config.openings_file is not None:
            notes.append(
                f"note: {used} of the {available} openings are played in {variant.spec}: "
                f"games = {config.games} is {used} game pair(s) per pairing, one opening each "
                f"(both seats); set games = {2 * available} or remove `games` to play them all"
            )
    return notes


def iter_schedule(config: TournamentConfig) -> Iterator[ScheduledGame]:
    pairs = pairings(config)
    plans = [(v, pair_count(config, v), openings_order(config, v)) for v in config.variants]
    rounds = max(count for _, count, _ in plans)
    for k in range(rounds):
        for variant, count, openings in plans:
            if k >= count:
                continue
            opening = openings[k % len(openings)].moves if openings else ()
            text = " ".join(format_move(m) for m in opening)
            for a, b in pairs:
                low, high = sorted((a, b))
                # alternate who opens the pair from round to round
                seats = [(low, high), (high, low)] if k % 2 == 0 else [(high, low), (low, high)]
                pid = pair_id_for(variant.spec, a, b, text, k)
                for first, second in seats:
                    gid = game_id_for(variant.spec, a, b, text, k, first)
                    yield ScheduledGame(gid, pid, k, variant, first, second, opening,
                                        game_seed(config.seed, gid))


def build_schedule(config: TournamentConfig) -> list[ScheduledGame]:
    """The whole schedule, in play order. Raises ValueError if two games would share an id."""
    games = list(iter_schedule(config))
    ids = {g.game_id for g in games}
    if len(ids) != len(games):  # pragma: no cover - would need a hash collision
        raise ValueError("duplicate game ids in the schedule")
    return games
