"""The rows a supportenv verifiers environment plays: one per (task, split, seed).

Each row's prompt is what `supportenv.llm` shows a model for the episode's first observation
(the system message with the rules, the user message with the ticket), and its `info` names the
episode and carries the task's tools: one function per action kind and, on a task that takes
use_tool, one per help-desk tool (`supportenv.llm.action_tools`), in verifiers' tool form. `info`
is stored as a JSON string, as verifiers accepts it: the tools' schemas differ from task to
task, and a column of them would be forced into one Arrow schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from supportenv.env import SupportEnv
from supportenv.llm import action_tools, render_prompt


def tool_defs(task_id: str) -> list[dict[str, Any]]:
    """The task's functions in verifiers' tool form ({name, description, parameters})."""
    return [
        {"name": f["name"], "description": f["description"], "parameters": f["parameters"]}
        for f in (tool["function"] for tool in action_tools(task_id))
    ]


def episode_row(task_id: str, split: str, seed: int) -> dict[str, Any]:
    """One row: the first observation's prompt, and the episode's identity and tools."""
    prompt = render_prompt(SupportEnv(task_id, split, seed).reset(), tool_calls=True)
    info = {"task_id": task_id, "split": split, "seed": seed, "tool_defs": tool_defs(task_id)}
    return {"prompt": prompt, "info": json.dumps(info)}


def episode_rows(tasks: Sequence[str], split: str, seeds: Iterable[int]) -> list[dict[str, Any]]:
    """Rows seed by seed, every task per seed, so the first rows already cover every task."""
    return [episode_row(task_id, split, seed) for seed in seeds for task_id in tasks]


def build_dataset(tasks: Sequence[str], split: str, seeds: Sequence[int]) -> Any:
    from datasets import Dataset

    return Dataset.from_list(episode_rows(tasks, split, seeds))
