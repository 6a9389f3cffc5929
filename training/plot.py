"""docs/learning_curve.png from the learning_curve.json summary (matplotlib, no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

from supportenv.tasks import TASK_IDS

_REFERENCE_STYLE = {
    "oracle": {"color": "tab:green", "linestyle": ":"},
    "rule": {"color": "tab:orange", "linestyle": "--"},
    "random": {"color": "tab:gray", "linestyle": "-."},
}
_SHORT = {
    "issue_classification": "classification",
    "action_selection": "action sel.",
    "end_to_end_resolution": "end to end",
}


def plot(summary: dict[str, Any], path: Path) -> None:
    curve, refs = summary["curve"], summary["references"]
    n_seeds = len(summary["seeds"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5.2), gridspec_kw={"width_ratios": [1.6, 1]})

    episodes = curve["episodes"]
    left.fill_between(episodes, curve["low95"], curve["high95"], color="tab:blue", alpha=0.25, label="95% interval")
    label = f"trained policy, mean of {n_seeds} seeds"
    left.plot(episodes, curve["mean"], color="tab:blue", linewidth=2, marker="o", markersize=3, label=label)
    for name in ("oracle", "rule", "random"):
        value = refs[name]["validation_curve"]
        left.axhline(value, linewidth=1.5, label=f"{name} ({value:.2f})", **_REFERENCE_STYLE[name])
    left.set_xlabel("training episodes (train split, all three tasks in turn)")
    left.set_ylabel("weighted grader score (validation)")
    left.set_title(f"Greedy policy on {curve['tickets_per_task']} validation tickets per task")
    left.set_ylim(-0.02, 1.05)
    left.set_xlim(0, max(episodes))
    left.grid(alpha=0.3)
    left.legend(loc="lower right", bbox_to_anchor=(1.0, 0.06), fontsize=9)

    # Held-out test: weighted score and per task, trained (mean +- 95% interval) against the references.
    groups = ["weighted", *TASK_IDS]
    trained = [summary["trained"]["test"], *(summary["trained_per_task"]["test"][t] for t in TASK_IDS)]
    low, high = summary["trained_interval95"]["test"]
    bars = {
        "random": [refs["random"]["test"], *(refs["random"]["per_task"]["test"][t] for t in TASK_IDS)],
        "rule": [refs["rule"]["test"], *(refs["rule"]["per_task"]["test"][t] for t in TASK_IDS)],
        "trained": trained,
        "oracle": [refs["oracle"]["test"], *(refs["oracle"]["per_task"]["test"][t] for t in TASK_IDS)],
    }
    colors = {"random": "tab:gray", "rule": "tab:orange", "trained": "tab:blue", "oracle": "tab:green"}
    width = 0.2
    for i, (name, values) in enumerate(bars.items()):
        xs = [g + (i - 1.5) * width for g in range(len(groups))]
        right.bar(xs, values, width, color=colors[name], label=name)
        if name == "trained":
            right.errorbar(xs[0], values[0], yerr=[[values[0] - low], [high - values[0]]], color="black", capsize=3)
            tops = [max(values[0], high), *values[1:]]
            for x, v, top in zip(xs, values, tops, strict=True):
                right.text(x, top + 0.02, f"{v:.2f}", ha="center", fontsize=7)
    right.set_xticks(range(len(groups)), ["weighted", *(_SHORT.get(t, t) for t in TASK_IDS)])
    right.set_ylabel("grader score (test)")
    right.set_ylim(0, 1.1)
    right.set_title(f"Held-out test split, {summary['final_tickets_per_task']} tickets per task")
    right.grid(axis="y", alpha=0.3)
    right.legend(loc="upper right", fontsize=8, ncol=4)

    fig.suptitle(
        "REINFORCE with a value baseline on SupportEnvFeatures-v0, learning from the step rewards "
        f"({summary['episodes']} episodes per seed)",
        fontsize=11,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
