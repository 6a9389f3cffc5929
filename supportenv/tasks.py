"""The tasks: what the agent is asked to do, its budget, weight and pass mark.

`TASKS` are the three of the source designs, whose weights (0.2/0.3/0.5) make the weighted
score; `EXPERT_TASKS` work the ticket against its system of record with the help desk's tools
and are reported apart (and in the extended score). `get_task` knows them all."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from supportenv.catalog import ACTION_KINDS, TOOL_KIND
from supportenv.errors import UnknownTaskError
from supportenv.records import picklable


@dataclass(frozen=True)
class Task:
    task_id: str
    name: str
    difficulty: str
    description: str
    instructions: str
    max_steps: int
    pass_threshold: float
    weight: float
    # Grader components and their weights (sum to 1).
    components: tuple[tuple[str, float], ...]
    # The action kinds the task takes (an unreadable output, invalid_action, is always taken as a
    # penalised step); the tool call (catalog.TOOL_KIND) only where listed.
    allowed_actions: tuple[str, ...] = ACTION_KINDS


TASKS: tuple[Task, ...] = (
    Task(
        task_id="issue_classification",
        name="Issue classification",
        difficulty="easy",
        description="Read the ticket and identify its issue category, issue type and priority.",
        instructions=(
            "Triage only: classify this ticket with classify_issue (category, issue type and priority), then "
            "close it with mark_resolved; a colleague handles the conversation after you. Do not ask or answer "
            "here: only the triage is graded, and every extra step costs efficiency."
        ),
        max_steps=4,
        pass_threshold=0.7,
        weight=0.2,
        components=(("category", 0.25), ("issue_type", 0.4), ("priority", 0.2), ("efficiency", 0.15)),
    ),
    Task(
        task_id="action_selection",
        name="Action selection",
        difficulty="medium",
        description=(
            "Pick up a two-issue ticket mid-conversation and choose the right next action at every step: "
            "classify, ask, answer, suggest an article, route, escalate, call back or close."
        ),
        instructions=(
            "A colleague may have replied first and asked the customer for details (see the history); the "
            "ticket is not triaged yet. Choose the right action at each step: classify it, gather the facts "
            "still missing, answer each issue you can solve, route and escalate what policy requires, then "
            "mark_resolved."
        ),
        max_steps=8,
        pass_threshold=0.6,
        weight=0.3,
        components=(
            ("step_quality", 0.4),
            ("policy_compliance", 0.2),
            ("escalation_judgement", 0.25),
            ("efficiency", 0.15),
        ),
    ),
    Task(
        task_id="end_to_end_resolution",
        name="End-to-end resolution",
        difficulty="hard",
        description=(
            "Work the whole conversation: gather facts, solve or escalate by policy, keep the customer happy, resolve."
        ),
        instructions=(
            "Resolve the ticket end to end: classify it, ask the customer for the facts you need, "
            "answer with the right solution (or route and escalate when policy requires), be polite, "
            "keep costs down, then mark_resolved."
        ),
        max_steps=12,
        pass_threshold=0.6,
        weight=0.5,
        components=(
            ("resolution", 0.3),
            ("information_gathering", 0.15),
            ("policy_compliance", 0.15),
            ("response_quality", 0.15),
            ("customer_sentiment", 0.1),
            ("efficiency", 0.15),
        ),
    ),
)
EXPERT_TASK_ID = "expert_resolution"
EXPERT_TASKS: tuple[Task, ...] = (
    Task(
        task_id=EXPERT_TASK_ID,
        name="Expert resolution",
        difficulty="expert",
        description=(
            "Work the ticket against the customer's records with the help desk's tools: look up what the records "
            "say, verify the customer, make the changes policy allows, tell the customer what was done, resolve."
        ),
        instructions=(
            "Resolve the ticket end to end against the system of record: classify it, ask the customer for what "
            "you need, look up the account, orders, payments or service status with use_tool, verify the customer "
            "before any change, make each change the case needs and no other (the records decide, not the claim), "
            "then tell the customer what was done (the amount and when it arrives) or why not, escalate what "
            "policy requires, and mark_resolved."
        ),
        max_steps=16,
        pass_threshold=0.7,
        weight=0.0,  # reported apart from the weighted score of the source designs' three tasks
        components=(
            ("triage", 0.1),
            ("records", 0.3),
            ("communication", 0.25),
            ("policy_compliance", 0.15),
            ("efficiency", 0.2),
        ),
        allowed_actions=(*ACTION_KINDS, TOOL_KIND),
    ),
)
ALL_TASKS = (*TASKS, *EXPERT_TASKS)
# The extended score: the source designs' weighted score kept at three quarters of the weight
# (0.15/0.225/0.375), and the expert task the last quarter.
EXPERT_SHARE = 0.25
EXTENDED_WEIGHTS = {
    **{t.task_id: round((1 - EXPERT_SHARE) * t.weight, 6) for t in TASKS},
    **{t.task_id: EXPERT_SHARE / len(EXPERT_TASKS) for t in EXPERT_TASKS},
}
TASKS_BY_ID = {t.task_id: t for t in ALL_TASKS}
TASK_IDS = tuple(t.task_id for t in TASKS)  # the source designs' three, which the weighted score weighs
ALL_TASK_IDS = tuple(TASKS_BY_ID)


def get_task(task_id: Any) -> Task:
    task = TASKS_BY_ID.get(task_id) if isinstance(task_id, str) else None
    if task is None:
        raise UnknownTaskError(f"unknown task {task_id!r}; available: {', '.join(ALL_TASK_IDS)}")
    return task


def task_ids(tasks: str | Iterable[str] | None) -> tuple[str, ...]:
    """The task ids asked for ("a,b", ["a", "b"], or None for the source designs' three), each
    checked (an unknown one raises UnknownTaskError naming the tasks there are)."""
    if tasks is None:
        return TASK_IDS
    ids = tuple(t.strip() for t in (tasks.split(",") if isinstance(tasks, str) else tasks) if t.strip())
    for task_id in ids:
        get_task(task_id)
    if not ids:
        raise ValueError("tasks names no task")
    return ids


picklable(Task)  # pickle and copy alike on both builds
