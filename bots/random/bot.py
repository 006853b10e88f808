"""random: plays a uniformly random legal move. Seedable with `--seed N`."""

import argparse
import random

from arena.sdk import run_bot


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    def choose(turn):
        return rng.choice(turn.game.legal_moves())

    run_bot(choose, name="random", version="1.0", author="arena")


if __name__ == "__main__":
    main()
