"""The experiment behind `make train`: train one policy per seed, evaluate it, compute the
reference lines, and gather everything into the summary written to docs/learning_curve.json.

`run_seed` and `run_references` are the jobs `python -m training` hands to its worker processes;
each is a pure function of its arguments (no shared state), so the results do not depend on how
the jobs are scheduled.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from supportenv.tasks import TASK_IDS
from training.evaluate import REFERENCES, agent_scores, reference_scores, weighted
from training.reinforce import Config, train

SPLITS = ("train", "validation", "test")


@dataclass(frozen=True)
class Budget:
    curve_seeds: int = 100  # validation tickets per task at every evaluation during training
    final_seeds: int = 200  # tickets per task and split for the final evaluation and the references


def _rounded(per_task: dict[str, float]) -> dict[str, float]:
    return {t: round(v, 4) for t, v in per_task.items()}


def run_seed(seed: int, config: Config, budget: Budget, verbose: bool = True) -> dict[str, Any]:
    """Train with `seed` (evaluating on validation as it goes), then score the final greedy policy
    on every split."""
    tasks = config.tasks

    def validation(act) -> float:
        return weighted(agent_scores(act, "validation", budget.curve_seeds, tasks))

    log = (lambda line: print(line, flush=True)) if verbose else None
    result = train(config, seed, validation, log)
    final = {split: agent_scores(result.model.act, split, budget.final_seeds, tasks) for split in SPLITS}
    if verbose:
        print(
            f"seed {seed}: done in {result.seconds:.0f}s; final "
            + "  ".join(f"{split} {weighted(final[split]):.3f}" for split in SPLITS),
            flush=True,
        )
    return {
        "seed": seed,
        "seconds": round(result.seconds, 1),
        "curve": {"episodes": [e for e, _ in result.curve], "validation": [round(v, 4) for _, v in result.curve]},
        **{split: round(weighted(final[split]), 4) for split in SPLITS},
        "per_task": {split: _rounded(final[split]) for split in SPLITS},
    }


def run_references(budget: Budget, tasks: Sequence[str] = TASK_IDS) -> dict[str, Any]:
    """Weighted and per-task scores of the reference policies: on the validation tickets of the
    curve (the plot's lines) and on `final_seeds` tickets of validation and test."""
    out: dict[str, Any] = {}
    for name in REFERENCES:
        runs = {
            "validation_curve": reference_scores(name, "validation", budget.curve_seeds, tasks),
            "validation": reference_scores(name, "validation", budget.final_seeds, tasks),
            "test": reference_scores(name, "test", budget.final_seeds, tasks),
        }
        out[name] = {
            **{key: round(weighted(per_task), 4) for key, per_task in runs.items()},
            "per_task": {key: _rounded(per_task) for key, per_task in runs.items()},
        }
    return out


# Two-sided 95% quantiles of Student's t by degrees of freedom (1.96 beyond the table).
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}
_T95.update({11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042})


def t95(dof: int) -> float:
    if dof < 1:
        return math.nan
    known = [d for d in _T95 if d <= dof]
    return _T95[max(known)] if dof <= 30 else 1.96


def interval(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean and the 95% confidence interval of the mean (Student's t; the mean itself for one value)."""
    v = np.asarray(values, dtype=float)
    mean = float(v.mean())
    if len(v) < 2:
        return mean, mean, mean
    half = t95(len(v) - 1) * float(v.std(ddof=1)) / math.sqrt(len(v))
    return mean, mean - half, mean + half


def summarise(
    runs: Sequence[dict[str, Any]], references: dict[str, Any], config: Config, budget: Budget, wall_seconds: float
) -> dict[str, Any]:
    """The learning_curve.json document. Its top-level "trained" holds the mean over seeds of the
    final policies' weighted scores per split; "random", "rule" and "oracle" are the references'
    weighted scores on `test` (the acceptance split); the rest is the detail behind them."""
    runs = sorted(runs, key=lambda r: r["seed"])
    episodes = runs[0]["curve"]["episodes"]
    if any(r["curve"]["episodes"] != episodes for r in runs):
        raise ValueError("the seeds were evaluated at different points")
    by_point = np.array([r["curve"]["validation"] for r in runs])
    bands = [interval(by_point[:, i]) for i in range(by_point.shape[1])]
    trained = {split: round(float(np.mean([r[split] for r in runs])), 4) for split in SPLITS}
    return {
        "trained": trained,
        "random": references["random"]["test"],
        "rule": references["rule"]["test"],
        "oracle": references["oracle"]["test"],
        "seeds": [r["seed"] for r in runs],
        "episodes": config.episodes,
        "references_split": "test",
        "trained_interval95": {
            split: [round(x, 4) for x in interval([r[split] for r in runs])[1:]] for split in SPLITS
        },
        "trained_per_task": {
            split: {t: round(float(np.mean([r["per_task"][split][t] for r in runs])), 4) for t in config.tasks}
            for split in SPLITS
        },
        "per_seed": [{k: r[k] for k in ("seed", *SPLITS, "per_task", "seconds")} for r in runs],
        "curve": {
            "split": "validation",
            "tickets_per_task": budget.curve_seeds,
            "episodes": episodes,
            "mean": [round(b[0], 4) for b in bands],
            "low95": [round(b[1], 4) for b in bands],
            "high95": [round(b[2], 4) for b in bands],
            "per_seed": {str(r["seed"]): r["curve"]["validation"] for r in runs},
        },
        "first_validation": round(bands[0][0], 4),
        "final_validation": round(bands[-1][0], 4),
        "references": references,
        "final_tickets_per_task": budget.final_seeds,
        "config": {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(config).items()},
        "wall_seconds": round(wall_seconds, 1),
    }
