"""Scenario generation speed: the mean time to build one ticket from (task, split, seed),
uncached, over every task and split. Target: under 200 µs.

    python benchmarks/bench_world.py [--scenarios N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from supportenv import build
from supportenv.cli import run_cli
from supportenv.tasks import TASK_IDS
from supportenv.world import SPLITS, generate

PROG = "python benchmarks/bench_world.py"

TARGET_US = 200.0


def measure(scenarios: int) -> float:
    build = generate.__wrapped__  # bypass the cache: we time the generator itself
    keys = [
        (task, split, seed)
        for seed in range(scenarios // (len(TASK_IDS) * len(SPLITS)) + 1)
        for task in TASK_IDS
        for split in SPLITS
    ][:scenarios]
    start = time.perf_counter()
    for key in keys:
        build(*key)
    return (time.perf_counter() - start) / len(keys) * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scenarios", type=int, default=30_000)
    args = parser.parse_args(argv)
    best = min(measure(args.scenarios) for _ in range(3))
    print(f"world ({build()} build): mean scenario generation {best:.1f} µs over {args.scenarios} scenarios", end="")
    print(f" (best of 3; target < {TARGET_US:.0f} µs)")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
