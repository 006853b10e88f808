"""random: plays a uniformly random legal move. Seedable with `--seed N`."""

import random

from arena.sdk import Option, parse_options, reseed, run_bot


def main() -> None:
    options = parse_options({"seed": Option(int, help="seed of the moves")}, description=__doc__)
    rng = random.Random(options["seed"])

    def choose(turn):
        return rng.choice(turn.game.legal_moves())

    run_bot(choose, name="random", version="1.0", author="arena",
            on_new_game=lambda setup: reseed(rng, setup, options["seed"]))


if __name__ == "__main__":
    main()
