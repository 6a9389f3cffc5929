"""Every shipped agent on every task, as the README's scoreboard table.

    python -m baseline_agent.scoreboard --split test --episodes 200 [--json PATH] [--png PATH.png] [--quiet]

Starts both services once (or uses --env-addr/--grader-addr), plays each policy on the
same seeds, grades every episode with the grader service and prints a Markdown table.
On a terminal, a progress bar on stderr counts the episodes (not with --quiet, never in a pipe).
--png draws the mean score per agent and task as a grouped bar chart (needs matplotlib).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from baseline_agent.embedded import EmbeddedServices
from baseline_agent.policies import EXTERNAL, POLICIES, make_policy
from baseline_agent.progress import Progress, wants_bar
from baseline_agent.runner import Runner, TaskSummary, default_trials, extended_score, weighted_score
from supportenv.cli import run_cli
from supportenv.tasks import ALL_TASK_IDS, EXPERT_TASK_ID, TASK_IDS, get_task
from supportenv.world import SPLITS

PROG = "python -m baseline_agent.scoreboard"


def markdown(rows: dict[str, list[TaskSummary]], tasks: Sequence[str] = ALL_TASK_IDS) -> str:
    """The three tasks of the source designs and their weighted score, then the expert task
    (reported apart) and the extended score of all four (tasks.EXTENDED_WEIGHTS); the columns
    of the tasks played."""
    source = [t for t in TASK_IDS if t in tasks]
    full = len(source) == len(TASK_IDS)
    expert = EXPERT_TASK_ID in tasks
    head = ["agent", *(f"`{t}` (pass)" for t in source)]
    head += ["weighted", "mean return (hard)"] if full else []
    head += [f"`{EXPERT_TASK_ID}` (pass)", "mean return (expert)"] if expert else []
    head += ["extended"] if full and expert else []
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for policy, summaries in rows.items():
        by_task = {s.task_id: s for s in summaries}
        cells = [f"`{policy}`", *(f"{by_task[t].mean_score:.3f} ({by_task[t].pass_rate:.0%})" for t in source)]
        if full:
            cells += [f"**{weighted_score(summaries):.3f}**", f"{by_task[TASK_IDS[-1]].mean_reward:+.2f}"]
        if expert:
            mine = by_task[EXPERT_TASK_ID]
            cells += [f"{mine.mean_score:.3f} ({mine.pass_rate:.0%})", f"{mine.mean_reward:+.2f}"]
        if full and expert:
            cells.append(f"{extended_score(summaries):.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot_png(rows: dict[str, list[TaskSummary]], path: Path, split: str, episodes: int) -> None:
    """A grouped bar chart: one group per agent, one bar per task plus the weighted score,
    each bar labelled with its value. Uses matplotlib's Agg canvas directly (no pyplot, no
    display, no global backend switch), imported only when a PNG is asked for."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise SystemExit("--png needs matplotlib: pip install 'matplotlib>=3.8' (or the [plot] extra)") from None

    agents = list(rows)
    played = {s.task_id for s in next(iter(rows.values()))}
    weight = {t: f"weight {get_task(t).weight:g}" if get_task(t).weight else "reported apart" for t in ALL_TASK_IDS}
    series = [
        (f"{t} ({get_task(t).difficulty}, {weight[t]})", [_score(rows[a], t) for a in agents])
        for t in ALL_TASK_IDS
        if t in played
    ]
    if set(TASK_IDS) <= played:
        series.append(("weighted score", [weighted_score(rows[a]) for a in agents]))
    colors = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#7F7F7F")
    width = 0.8 / len(series)
    fig_width = max(8.0, 1.45 * len(agents) + 2.0)
    fig = Figure(figsize=(fig_width, 5.6), dpi=150, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for i, (label, values) in enumerate(series):
        xs = [a + (i - (len(series) - 1) / 2) * width for a in range(len(agents))]
        bars = ax.bar(xs, values, width, label=label, color=colors[i % len(colors)], edgecolor="white", linewidth=0.5)
        ax.bar_label(bars, labels=[f"{v:.2f}" for v in values], padding=2, fontsize=6.5, rotation=90)
    ax.set_xticks(range(len(agents)), agents)
    ax.set_xlabel("agent")
    ax.set_ylabel("mean grader score (0 to 1)")
    ax.set_ylim(0, 1.15)
    ax.set_yticks([i / 10 for i in range(11)])
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.set_title(f"Mean score per agent and task ({split} split, {episodes} episodes per task)")
    # Below the axes, so it never hides a bar; one row when the figure is wide enough for it.
    ncol = len(series) if fig_width >= 12 else 2
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=ncol, fontsize=8, frameon=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")


def _score(summaries: list[TaskSummary], task_id: str) -> float:
    return next((s.mean_score for s in summaries if s.task_id == task_id), 0.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--split", choices=SPLITS, default="test")
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument(
        "--policies",
        nargs="+",
        default=[p for p in POLICIES if p not in EXTERNAL],
        choices=list(POLICIES),
        help=f"default: every policy but the external ones ({', '.join(EXTERNAL)})",
    )
    parser.add_argument(
        "--tasks",
        nargs="+",
        default=list(ALL_TASK_IDS),
        choices=list(ALL_TASK_IDS),
        metavar="TASK",
        help="default: all four; the weighted and extended scores need the tasks they weigh",
    )
    parser.add_argument("--env-addr", default=os.environ.get("SUPPORTENV_ENV_ADDR"))
    parser.add_argument("--grader-addr", default=os.environ.get("SUPPORTENV_GRADER_ADDR"))
    parser.add_argument("--json", type=Path, help="also write every policy's per-task summary here")
    parser.add_argument("--png", type=Path, metavar="PATH.png", help="also draw the scores as a bar chart here")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or per-agent lines, only the table")
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error("--episodes must be at least 1")
    rows: dict[str, list[TaskSummary]] = {}
    policies = {name: make_policy(name) for name in args.policies}
    trials = {name: default_trials(policy) for name, policy in policies.items()}
    total = len(args.tasks) * args.episodes * sum(trials.values())
    with contextlib.ExitStack() as stack:
        env_addr, grader_addr = args.env_addr, args.grader_addr
        if not (env_addr and grader_addr):
            services = stack.enter_context(EmbeddedServices())
            env_addr, grader_addr = services.env.address, services.grader.address  # type: ignore[union-attr]
        progress = stack.enter_context(Progress(total, wants_bar(sys.stderr, args.quiet)))
        for name, policy in policies.items():
            runner = Runner(env_addr, grader_addr, policy, args.split, quiet=True)
            try:
                rows[name], _ = runner.run(
                    args.tasks, args.episodes, 0, trials[name], lambda r, n=name: progress.advance(f"{n} {r.task_id}")
                )
            finally:
                runner.close()
            if not args.quiet and set(TASK_IDS) <= set(args.tasks):
                progress.write(f"  {name}: weighted {weighted_score(rows[name]):.3f}", sys.stderr)
    print(markdown(rows, args.tasks))
    if args.json:
        data = {name: {s.task_id: vars(s) for s in summaries} for name, summaries in rows.items()}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    if args.png:
        plot_png(rows, args.png, args.split, args.episodes)
        print(f"wrote {args.png}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
