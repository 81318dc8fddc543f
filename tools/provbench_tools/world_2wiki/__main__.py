"""``python -m provbench_tools.world_2wiki OUT [--questions N] [--seed S] [--mix L D S]``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from . import write_world
from .world import MINI_SEED, MINI_SIZE


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m provbench_tools.world_2wiki",
        description="Write an invented world as 2WikiMultiHopQA questions (plain dev.json format). "
        "Defaults reproduce datasets/2wiki-mini/dev.json.",
    )
    parser.add_argument("out", type=Path, help="output .json file")
    parser.add_argument("--questions", type=int, default=MINI_SIZE, help=f"number of questions (default {MINI_SIZE})")
    parser.add_argument("--seed", type=int, default=MINI_SEED, help=f"world seed (default {MINI_SEED})")
    parser.add_argument(
        "--mix",
        type=int,
        nargs=3,
        metavar=("LOCAL", "DISTRACTOR", "SUMMARY"),
        help="questions per category (default 40%% / 40%% / 20%%)",
    )
    args = parser.parse_args(argv)
    if args.questions < 1:
        parser.error("--questions must be at least 1")
    try:
        path = write_world(args.out, args.questions, args.seed, tuple(args.mix) if args.mix else None)
    except ValueError as exc:
        parser.error(str(exc))
    print(f"wrote {args.questions} questions to {path}")


if __name__ == "__main__":
    main()
