"""Every shipped agent on every task, as the README's scoreboard table.

    python -m baseline_agent.scoreboard --split test --episodes 200 [--json PATH]

Starts both services once (or uses --env-addr/--grader-addr), plays each policy on the
same seeds, grades every episode with the grader service and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path

from baseline_agent.embedded import EmbeddedServices
from baseline_agent.policies import POLICIES, make_policy
from baseline_agent.runner import Runner, TaskSummary, weighted_score
from supportenv.tasks import TASK_IDS
from supportenv.world import SPLITS


def markdown(rows: dict[str, list[TaskSummary]]) -> str:
    head = "| agent | " + " | ".join(f"`{t}`" for t in TASK_IDS) + " | weighted | mean return (hard) |"
    lines = [head, "|---" * (len(TASK_IDS) + 3) + "|"]
    for policy, summaries in rows.items():
        by_task = {s.task_id: s for s in summaries}
        cells = " | ".join(f"{by_task[t].mean_score:.3f}" for t in TASK_IDS)
        hard = by_task[TASK_IDS[-1]].mean_reward
        lines.append(f"| `{policy}` | {cells} | **{weighted_score(summaries):.3f}** | {hard:+.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m baseline_agent.scoreboard",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--split", choices=SPLITS, default="test")
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--policies", nargs="+", default=list(POLICIES), choices=list(POLICIES))
    parser.add_argument("--env-addr", default=os.environ.get("SUPPORTENV_ENV_ADDR"))
    parser.add_argument("--grader-addr", default=os.environ.get("SUPPORTENV_GRADER_ADDR"))
    parser.add_argument("--json", type=Path, help="also write every policy's per-task summary here")
    args = parser.parse_args(argv)
    rows: dict[str, list[TaskSummary]] = {}
    with contextlib.ExitStack() as stack:
        env_addr, grader_addr = args.env_addr, args.grader_addr
        if not (env_addr and grader_addr):
            services = stack.enter_context(EmbeddedServices())
            env_addr, grader_addr = services.env.address, services.grader.address  # type: ignore[union-attr]
        for name in args.policies:
            policy = make_policy(name)
            runner = Runner(env_addr, grader_addr, policy, args.split, quiet=True)
            try:
                rows[name], _ = runner.run(TASK_IDS, args.episodes, 0, 4 if policy.stochastic else 1)
            finally:
                runner.close()
            print(f"  {name}: weighted {weighted_score(rows[name]):.3f}", file=sys.stderr, flush=True)
    print(markdown(rows))
    if args.json:
        data = {name: {s.task_id: vars(s) for s in summaries} for name, summaries in rows.items()}
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
