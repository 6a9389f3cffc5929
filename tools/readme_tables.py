"""Print the README's task and reward tables from the library's own definitions.

    python tools/readme_tables.py

A test checks that every row printed here stands in README.md, so the README cannot
drift from the code."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from supportenv.rewards import REWARD_TABLE
from supportenv.tasks import ALL_TASKS


def task_rows() -> list[str]:
    rows = [
        "| task | difficulty | weight | max steps | pass mark | grader components (weight) |",
        "|---|---|---|---|---|---|",
    ]
    for t in ALL_TASKS:
        comps = ", ".join(f"{name} ({w:g})" for name, w in t.components)
        weight = f"{t.weight:g}" if t.weight else "apart"  # the expert task is reported apart
        rows.append(f"| `{t.task_id}` | {t.difficulty} | {weight} | {t.max_steps} | {t.pass_threshold:g} | {comps} |")
    return rows


def reward_rows() -> list[str]:
    rows = ["| component | reward | when |", "|---|---|---|"]
    rows += [f"| `{name}` | {value:+.2f} | {when} |" for name, (value, when) in REWARD_TABLE.items()]
    return rows


if __name__ == "__main__":
    print("\n".join(task_rows()))
    print()
    print("\n".join(reward_rows()))
