"""python -m baseline_agent --policy rule --split test --episodes 20 [--tasks ...]
[--env-addr HOST:PORT --grader-addr HOST:PORT] [--json PATH] [--trajectories PATH.jsonl] [--quiet]

Without addresses it starts both services on free loopback ports and stops them at the end.
On a terminal, a progress bar on stderr counts the episodes (not with --quiet, never in a pipe).
--trajectories writes one JSON object per episode, replayable by `python -m baseline_agent.rescore`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

import grpc

from baseline_agent.embedded import EmbeddedServices
from baseline_agent.policies import POLICIES, make_policy
from baseline_agent.progress import BarSafeLines, Progress, is_terminal, wants_bar
from baseline_agent.runner import (
    STOCHASTIC_TRIALS,
    EpisodeRecord,
    Runner,
    TrajectoryWriter,
    default_trials,
    render_table,
    write_json,
)
from baseline_agent.story import Narrator, explain_table
from supportenv.cli import run_cli
from supportenv.tasks import TASK_IDS
from supportenv.world import SPLITS

PROG = "python -m baseline_agent"

STORY_TASK = "end_to_end_resolution"  # the one that shows every kind of action


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--policy", choices=list(POLICIES), default="rule")
    parser.add_argument("--split", choices=SPLITS, default="test")
    parser.add_argument(
        "--episodes", type=int, default=20, help="episodes per task (seeds seed-start .. seed-start+N-1)"
    )
    parser.add_argument("--seed-start", type=int, default=0)
    parser.add_argument(
        "--trials",
        type=int,
        help=f"runs per seed, for pass^k (default: {STOCHASTIC_TRIALS} for stochastic policies such as random, else 1)",
    )
    parser.add_argument(
        "--tasks", nargs="+", default=list(TASK_IDS), metavar="TASK", help=f"default: all ({', '.join(TASK_IDS)})"
    )
    parser.add_argument(
        "--env-addr",
        default=os.environ.get("SUPPORTENV_ENV_ADDR"),
        help="env service HOST:PORT (env SUPPORTENV_ENV_ADDR)",
    )
    parser.add_argument(
        "--grader-addr",
        default=os.environ.get("SUPPORTENV_GRADER_ADDR"),
        help="grader service HOST:PORT (env SUPPORTENV_GRADER_ADDR)",
    )
    parser.add_argument("--json", type=Path, help="write the summary and every episode's record here")
    parser.add_argument(
        "--trajectories",
        type=Path,
        metavar="PATH.jsonl",
        help="write every episode's trajectory here, one JSON object per line (re-score with baseline_agent.rescore)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no per-step log lines and no progress bar, only the summary"
    )
    parser.add_argument(
        "--story",
        action="store_true",
        help="tell one hard-task episode in full first (ticket, actions, rewards, replies, grade), then only "
        "count the run's episodes (no per-step log lines) and explain the table's columns",
    )
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error("--episodes must be at least 1")
    if args.trials is not None and args.trials < 1:
        parser.error("--trials must be at least 1")
    if bool(args.env_addr) != bool(args.grader_addr):
        parser.error("give both --env-addr and --grader-addr, or neither to start embedded services")
    return args


def tell_one_episode(runner: Runner, tasks: list[str], seed: int, policy_name: str) -> None:
    """The hard task's first episode (or the first task's), told in full before the run; if it
    fails (a service or the model unreachable), the run would fail the same way: stop here."""
    task = STORY_TASK if STORY_TASK in tasks else tasks[0]
    record = runner.play(task, seed, narrator=Narrator(sys.stdout, policy_name))
    if record.error:
        raise SystemExit(f"{PROG}: stopped before the run, as its first episode failed: {record.error}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with contextlib.ExitStack() as stack:
        env_addr, grader_addr = args.env_addr, args.grader_addr
        if not env_addr:
            services = stack.enter_context(EmbeddedServices())
            env_addr, grader_addr = services.env.address, services.grader.address  # type: ignore[union-attr]
            print(f"started embedded services: env {env_addr}, grader {grader_addr}", file=sys.stderr)
        policy = make_policy(args.policy)
        trials = args.trials or default_trials(policy)
        writer = None
        if args.trajectories:
            writer = stack.enter_context(TrajectoryWriter(args.trajectories, args.policy, args.split, policy.name))
        total = len(args.tasks) * args.episodes * trials
        if args.story:  # before the bar, which would otherwise sit above it
            with Runner(env_addr, grader_addr, policy, args.split, quiet=True) as teller:
                tell_one_episode(teller, args.tasks, args.seed_start, policy.name)
            print(f"\nNow the run: {total} episodes of {len(args.tasks)} tasks, each graded by the grader service ...")
        progress = stack.enter_context(Progress(total, wants_bar(sys.stderr, args.quiet)))
        # [STEP] lines printed to the same terminal as the bar go around it, never through it.
        out = BarSafeLines(progress, sys.stdout) if progress.enabled and is_terminal(sys.stdout) else None
        runner = Runner(env_addr, grader_addr, policy, args.split, out=out, quiet=args.quiet or args.story)
        stack.callback(runner.close)

        def on_episode(record: EpisodeRecord) -> None:
            if writer is not None:
                writer.write(record)
            progress.advance(record.task_id)

        summaries, records = runner.run(args.tasks, args.episodes, args.seed_start, trials, on_episode)
    print(render_table(args.policy, args.split, summaries), flush=True)
    if args.story:
        print(explain_table(args.episodes, args.split), flush=True)
    if args.json:
        write_json(args.json, args.policy, args.split, summaries, records)
        print(f"wrote {args.json}")
    if args.trajectories:
        print(f"wrote {len(records)} trajectories to {args.trajectories}")
    errors = [r for r in records if r.error]
    if errors:
        print(f"{len(errors)} episode(s) failed; first: {errors[0].error}", file=sys.stderr)
        return 1
    return 0


def cli(argv: list[str] | None = None) -> int:
    """main, with a call that fails outside any episode (ListTasks to a service that is not
    there, say) said in one line instead of a traceback."""
    try:
        return main(argv)
    except grpc.RpcError as exc:
        code, details = exc.code(), exc.details()  # type: ignore[attr-defined]
        hint = ""
        if code == grpc.StatusCode.UNAVAILABLE:
            hint = "; is the service at --env-addr / --grader-addr up? (leave both out to start both services here)"
        print(f"{PROG}: {code.name}: {details}{hint}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(run_cli(cli, PROG))
