"""The engine against published reference data in ../shared/reference/connect4/."""

from __future__ import annotations

import pytest

from arena.game import PRESETS, Game, build_variant
from tests.conftest import REFERENCE_ROOT, reference_path

REFERENCE = REFERENCE_ROOT / "connect4"


@pytest.fixture(autouse=True)
def _reference_data() -> None:
    reference_path("connect4")  # skip, or fail in CI, before a test reads the data

STATUS = {"win-first": (1, "line"), "win-second": (2, "line"), "draw": (None, "full")}


def data_lines(name: str) -> list[list[str]]:
    lines = (REFERENCE / name).read_text().splitlines()
    return [line.split("\t") for line in lines if line.strip() and not line.startswith("#")]


def play_digits(game: Game, digits: str) -> Game:
    for digit in digits:
        game.push(int(digit))
    return game


@pytest.mark.parametrize("name", ["Test_L1_R1", "Test_L2_R1", "Test_L3_R1"])
def test_pons_positions_are_legal_and_not_over(name):
    lines = (REFERENCE / name).read_text().split("\n")
    positions = [line.split()[0] for line in lines if line.strip()]
    assert len(positions) == 1000
    for moves in positions:
        game = play_digits(Game(PRESETS["classic"]), moves)
        assert game.outcome is None, moves
        assert game.ply == len(moves)


def test_terminal_vectors():
    rows = [row for row in data_lines("c4_terminal_vectors.tsv") if row[0].isdigit()]
    assert rows
    for width, height, moves, status, plies, *_ in rows:
        game = play_digits(Game(build_variant("classic", int(width), int(height))), moves)
        assert game.ply == int(plies)
        if status == "ongoing":
            assert game.outcome is None, moves
        else:
            assert tuple(game.outcome) == STATUS[status], moves


def test_distinct_positions_per_ply_match_oeis_a212693():
    expected = {int(n): int(count) for n, count in data_lines("c4_position_counts.tsv")[1:]}
    frontier = {Game(PRESETS["classic"]).key(): Game(PRESETS["classic"])}
    last = 8
    for ply in range(last + 1):
        assert len(frontier) == expected[ply], f"ply {ply}"
        if ply == last:
            break  # the next ply's ~80,000 positions would be built only to be dropped
        following: dict[int, Game] = {}
        for game in frontier.values():
            if game.outcome is not None:
                continue  # a won position is counted, not expanded
            for move in game.legal_moves():
                game.push(move)
                key = game.key()
                if key not in following:
                    following[key] = game.copy()
                game.pop()
        frontier = following
