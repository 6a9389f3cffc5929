"""`python -m training`: train on `train`, evaluate on `validation` and `test`, write the curve.

    python -m training                       # what `make train` runs: 5 seeds, 30000 episodes each
    python -m training --seeds 2 --episodes 3000 --out /tmp/curve --workers 2

Seeds run in worker processes (`--workers`, default 2: one per core of the reference machine); the
reference policies run as one more job. Progress: one line per evaluation.
"""

from __future__ import annotations

import os

# One BLAS thread per process: the matrices are small, and with several workers on few cores
# threaded BLAS spends its time waiting. Set before numpy is first imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import multiprocessing  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from supportenv.cli import ignore_sigint, run_cli  # noqa: E402
from supportenv.tasks import TASK_IDS  # noqa: E402
from training.experiment import Budget, run_references, run_seed, summarise  # noqa: E402
from training.reinforce import Config  # noqa: E402

PROG = "python -m training"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    defaults, budget = Config(), Budget()
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=5, help="training seeds 0..N-1 (default 5)")
    p.add_argument("--episodes", type=int, default=defaults.episodes, help="training episodes per seed")
    p.add_argument("--eval-every", type=int, default=defaults.eval_every, help="episodes between evaluations")
    p.add_argument(
        "--curve-tickets", type=int, default=budget.curve_seeds, help="validation tickets per task per evaluation"
    )
    p.add_argument(
        "--final-tickets", type=int, default=budget.final_seeds, help="tickets per task and split at the end"
    )
    p.add_argument(
        "--tasks", nargs="+", default=list(TASK_IDS), choices=TASK_IDS, help="tasks to train and evaluate on"
    )
    p.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--out", type=Path, default=Path("docs"), help="where learning_curve.{json,png} go (default docs/)")
    p.add_argument("--no-plot", action="store_true", help="write the JSON only")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    config = Config(episodes=args.episodes, eval_every=args.eval_every, tasks=tuple(args.tasks))
    budget = Budget(curve_seeds=args.curve_tickets, final_seeds=args.final_tickets)
    seeds = list(range(args.seeds))
    print(
        f"training {len(seeds)} seed(s) x {config.episodes} episodes on {', '.join(config.tasks)}; "
        f"{args.workers} worker(s)",
        flush=True,
    )
    start = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(max(1, args.workers), initializer=ignore_sigint) as pool:
        jobs = [pool.apply_async(run_seed, (seed, config, budget, not args.quiet)) for seed in seeds]
        # Last, so that it fills the core the odd seed leaves free.
        references_job = pool.apply_async(run_references, (budget, config.tasks))
        runs = [job.get() for job in jobs]
        references = references_job.get()
    wall = time.perf_counter() - start

    summary = summarise(runs, references, config, budget, wall)
    args.out.mkdir(parents=True, exist_ok=True)
    json_path = args.out / "learning_curve.json"
    json_path.write_text(json.dumps(summary, indent=2) + "\n")
    written = [json_path]
    if not args.no_plot:
        from training.plot import plot

        plot(summary, args.out / "learning_curve.png")
        written.append(args.out / "learning_curve.png")

    trained = summary["trained"]
    print(
        f"trained (mean of {len(seeds)} seeds): train {trained['train']:.3f}  validation {trained['validation']:.3f}  "
        f"test {trained['test']:.3f}\n"
        f"test references: random {summary['random']:.3f}  rule {summary['rule']:.3f}  oracle {summary['oracle']:.3f}\n"
        f"validation curve: first {summary['first_validation']:.3f} -> final {summary['final_validation']:.3f}\n"
        f"wrote {', '.join(map(str, written))} in {wall:.0f}s",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
