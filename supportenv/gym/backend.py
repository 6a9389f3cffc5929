"""Where the episodes of the Gymnasium adapters run: in this process, or in a remote env service.

Both backends have one interface (`Backend`): `reset(task_id, split, seed)` gives the library's
`Observation`, `step(action)` a `Transition` (observation, reward, terminated, truncated, reward
breakdown), `grade()` the grader's `Grade` of the episode so far, and `close()`.

- `InProcessBackend` runs the pure simulation library directly (the default).
- `RemoteBackend` plays the episode through the gRPC `EnvService` with the SDK's `EnvClient`
  (Reset, then Step with the state token each response hands back; the SDK's deadline, retries
  and channel options). `grpc` and the wire code are imported only when one is made, so the
  in-process path never loads them. The grade is a replay of the actions this client sent with
  the library's own grader (what the grader service computes), so no second service is needed.

The simulation is deterministic, so both give identical observations and rewards for the same
(task, split, seed, actions); `tests/test_gym.py` checks it step for step against a real service.

`Session` is the bookkeeping both Gymnasium environments share: the episode's key, the actions
sent, the last observation, and the `info` dict of a step (the grade when the episode ends).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from supportenv.actions import INVALID_KIND, Action, invalid, validate
from supportenv.episode import EpisodeState, Observation, observe, step
from supportenv.errors import EpisodeFinishedError, InvalidActionError, InvalidRequestError
from supportenv.graders import Grade, grade_state, grade_trajectory
from supportenv.replay import new_episode
from supportenv.tasks import get_task
from supportenv.world import SPLITS, Scenario

DEFAULT_TASK = "end_to_end_resolution"
DEFAULT_SPLIT = "train"
REMOTE_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Transition:
    observation: Observation
    reward: float
    terminated: bool
    truncated: bool
    breakdown: tuple[tuple[str, float], ...]


class Backend(Protocol):
    def reset(self, task_id: str, split: str, seed: int) -> Observation: ...

    def step(self, action: Action) -> Transition: ...

    def grade(self) -> Grade: ...

    def close(self) -> None: ...


class InProcessBackend:
    """The library itself: no network, no clock, no global random state."""

    def __init__(self) -> None:
        self._scenario: Scenario | None = None
        self._state: EpisodeState | None = None

    def reset(self, task_id: str, split: str, seed: int) -> Observation:
        self._scenario, self._state = new_episode(task_id, split, seed)
        return observe(self._scenario, self._state)

    def step(self, action: Action) -> Transition:
        if self._scenario is None or self._state is None:
            raise EpisodeFinishedError("call reset() before step()")
        result = step(self._scenario, self._state, validate(action))
        return Transition(result.observation, result.reward, result.terminated, result.truncated, result.breakdown)

    def grade(self) -> Grade:
        if self._scenario is None or self._state is None:
            raise EpisodeFinishedError("call reset() first")
        return grade_state(self._scenario, self._state)

    def close(self) -> None:
        self._scenario = self._state = None


class RemoteBackend:
    """An `EnvService` at `address` ("HOST:PORT"). The server keeps no episode: this client holds
    the signed state token and sends it back with every action."""

    def __init__(self, address: str, timeout: float = REMOTE_TIMEOUT_S) -> None:
        # Imported here, not at module level: the in-process path must never load grpc.
        from supportenv.v1 import codec
        from supportenv.v1.client import EnvClient

        self.address, self.timeout = address, timeout
        self._codec = codec
        # wait_for_ready: an env made while its service is still starting (compose, a training
        # job launched next to the server) waits for it up to the deadline; the retries alone
        # give up within a second.
        self._client = EnvClient(address, timeout, wait_for_ready=True)
        self._key: tuple[str, str, int] | None = None
        self._actions: list[Action] = []
        self._done = False

    def reset(self, task_id: str, split: str, seed: int) -> Observation:
        response = self._client.reset_reply(task_id, split, seed)
        self._key, self._actions, self._done = (task_id, split, seed), [], False
        return self._codec.observation_from_pb(response.observation)

    def step(self, action: Action) -> Transition:
        if self._key is None:
            raise EpisodeFinishedError("call reset() before step()")
        if self._done:
            raise EpisodeFinishedError(f"episode {self._key} already ended; call reset()")
        response = self._client.step_reply(validate(action))
        self._actions.append(action)
        self._done = response.terminated or response.truncated
        return Transition(
            observation=self._codec.observation_from_pb(response.observation),
            reward=response.reward,
            terminated=response.terminated,
            truncated=response.truncated,
            breakdown=tuple((c.name, c.value) for c in response.reward_breakdown),
        )

    def grade(self) -> Grade:
        if self._key is None:
            raise EpisodeFinishedError("call reset() first")
        return grade_trajectory(*self._key, self._actions)

    def close(self) -> None:
        self._client.close()


def make_backend(remote: str | None = None, timeout: float = REMOTE_TIMEOUT_S) -> Backend:
    """In-process unless `remote` names an env service as "HOST:PORT"."""
    return RemoteBackend(remote, timeout) if remote else InProcessBackend()


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
