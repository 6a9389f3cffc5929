"""The bookkeeping both Gymnasium environments share, over a backend (supportenv.adapters.backends:
in this process, or a remote env service): `Session` holds the episode's key, the actions sent, the last
observation, and the `info` dict of a step (the grade when the episode ends); `check_action` turns an
action that does not validate into the penalised invalid step."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from supportenv.actions import INVALID_KIND, Action, invalid, validate
from supportenv.adapters.backends import REMOTE_TIMEOUT_S, Backend, Transition, make_backend
from supportenv.episode import Observation
from supportenv.errors import EpisodeFinishedError, InvalidActionError, InvalidRequestError
from supportenv.tasks import get_task
from supportenv.world import SPLITS

__all__ = ["REMOTE_TIMEOUT_S", "Backend", "Session", "Transition", "check_action", "make_backend"]

DEFAULT_TASK = "end_to_end_resolution"
DEFAULT_SPLIT = "train"


def check_action(action: Action, task_id: str | None = None) -> Action:
    """The action if it validates (and, given `task_id`, is of a kind the task takes), otherwise a
    penalised `invalid_action` step saying why."""
    try:
        validate(action)
    except InvalidActionError as exc:
        return invalid(json.dumps(action.to_dict(), sort_keys=True), str(exc))
    allowed = get_task(task_id).allowed_actions if task_id else ()
    if allowed and action.kind not in (*allowed, INVALID_KIND):
        why = f"task {task_id} does not take {action.kind}; its actions: {', '.join(allowed)}"
        return invalid(json.dumps(action.to_dict(), sort_keys=True), why)
    return action


class Session:
    """One environment's episodes over a backend: the key, the actions sent, the last
    observation, and each step's `info` (the grader's score once the episode has ended)."""

    def __init__(self, task_id: str, split: str, remote: str | None = None, timeout: float = REMOTE_TIMEOUT_S):
        self.task_id, self.split = task_id, split
        self.backend = make_backend(remote, timeout)
        self.episode_task, self.episode_split, self.seed = task_id, split, -1
        self.observation: Observation | None = None
        self.actions: list[Action] = []
        self.done = False

    def reset(self, seed: int, options: dict[str, Any] | None = None) -> tuple[Observation, dict[str, Any]]:
        """Start the episode of `seed`; options "task_id" and "split" override the defaults for it."""
        options = dict(options or {})
        unknown = sorted(set(options) - {"task_id", "split"})
        if unknown:
            raise ValueError(f"unknown reset options {unknown}; supported: task_id, split")
        task_id, split = options.get("task_id") or self.task_id, options.get("split") or self.split
        # Checked here so that in-process and remote raise the same errors.
        get_task(task_id)
        if split not in SPLITS:
            raise InvalidRequestError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
        self.episode_task, self.episode_split = task_id, split
        self.seed = seed
        self.observation = self.backend.reset(self.episode_task, self.episode_split, seed)
        self.actions, self.done = [], False
        info = {
            "task_id": self.episode_task,
            "split": self.episode_split,
            "seed": seed,
            "ticket_id": self.observation.ticket_id,
        }
        return self.observation, info

    def step(self, action: Action) -> tuple[Transition, dict[str, Any]]:
        if self.observation is None:
            raise EpisodeFinishedError("call reset() before step()")
        if self.done:
            raise EpisodeFinishedError("the episode has ended; call reset()")
        action = check_action(action, self.episode_task)
        result = self.backend.step(action)
        self.actions.append(action)
        self.observation = result.observation
        self.done = result.terminated or result.truncated
        info: dict[str, Any] = {
            "action": action.label(),
            "reward_breakdown": dict(result.breakdown),
            "feedback": result.observation.last_action_feedback,
            "invalid_action": action.error,
        }
        if result.observation.tool_result is not None:
            info["tool_result"] = asdict(result.observation.tool_result)
        if self.done:
            grade = self.backend.grade()
            info["score"] = grade.score
            info["passed"] = grade.passed
            info["grade_components"] = {c.name: c.score for c in grade.components}
            info["cumulative_reward"] = grade.cumulative_reward
        return result, info

    def close(self) -> None:
        self.backend.close()
