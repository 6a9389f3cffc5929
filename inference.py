"""Baseline inference: the rule-based agent plays every task through the env service,
the grader service scores every episode, and the per-task scores and the weighted
average (weights 0.2 / 0.3 / 0.5) are printed. Deterministic: the same command
prints the same scores on any machine.

    python inference.py [--split test] [--episodes 20] [--quiet]

With no SUPPORTENV_ENV_ADDR / SUPPORTENV_GRADER_ADDR set, both services are started
on free loopback ports for the run and stopped at the end.
"""

from __future__ import annotations

import argparse
import sys

from baseline_agent.__main__ import main as run_agent
from supportenv.world import SPLITS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=SPLITS, default="test")
    parser.add_argument("--episodes", type=int, default=20, help="episodes per task")
    parser.add_argument("--quiet", action="store_true", help="only the summary, no per-step lines")
    args = parser.parse_args(argv)
    agent_args = ["--policy", "rule", "--split", args.split, "--episodes", str(args.episodes)]
    return run_agent(agent_args + (["--quiet"] if args.quiet else []))


if __name__ == "__main__":
    sys.exit(main())
