"""Inference: an agent plays every task through the env service, the grader service
scores every episode, and the per-task scores and the weighted average (weights
0.2 / 0.3 / 0.5) are printed.

    python inference.py [--split test] [--episodes 20] [--quiet]

The agent:
- with API_BASE_URL and MODEL_NAME set, a language model behind that OpenAI-compatible
  endpoint (API key from HF_TOKEN or API_KEY), asked at temperature 0 for one JSON
  action per step; `model=` in the log is MODEL_NAME;
- otherwise the rule-based baseline (`model=rule`), which is deterministic: the same
  command prints the same scores on any machine.

Every episode prints as
    [START] task=<task> env=supportenv model=<model>
    [STEP] step=<n> action=<action> reward=<0.00> done=<true|false> error=<msg|null>
    [END] success=<true|false> steps=<n> score=<0.00> rewards=<r1,...>
([END] even when the episode failed), then the per-task table and the weighted score.
The exit status is 1 when any episode failed (e.g. the model API returned an error).

With no SUPPORTENV_ENV_ADDR / SUPPORTENV_GRADER_ADDR set, both services are started
on free loopback ports for the run and stopped at the end.
"""

from __future__ import annotations

import argparse
import os
import sys

from baseline_agent.__main__ import cli as run_agent
from supportenv.cli import run_cli
from supportenv.world import SPLITS


def choose_policy() -> str:
    """`llm` when a model endpoint is configured, else the rule baseline."""
    if os.environ.get("API_BASE_URL") and os.environ.get("MODEL_NAME"):
        return "llm"
    if os.environ.get("API_BASE_URL") or os.environ.get("MODEL_NAME"):
        print("set both API_BASE_URL and MODEL_NAME to use a model; using the rule baseline", file=sys.stderr)
    return "rule"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python inference.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", choices=SPLITS, default="test")
    parser.add_argument("--episodes", type=int, default=20, help="episodes per task")
    parser.add_argument("--quiet", action="store_true", help="only the summary, no per-step lines")
    parser.add_argument(
        "--story",
        action="store_true",
        help="instead of the log lines: one episode told in full, a progress bar, the table explained (make run)",
    )
    args = parser.parse_args(argv)
    agent_args = ["--policy", choose_policy(), "--split", args.split, "--episodes", str(args.episodes)]
    return run_agent(agent_args + (["--quiet"] if args.quiet else []) + (["--story"] if args.story else []))


if __name__ == "__main__":
    sys.exit(run_cli(main, "python inference.py"))
