"""Where an adapter's episodes run: in this process, or in a running env service. The Gymnasium
environments (supportenv.gym) and the MCP server (supportenv.mcp) play through this one interface.

`Backend`: `reset(task_id, split, seed)` gives the library's `Observation`, `step(action)` a
`Transition` (observation, reward, terminated, truncated, reward breakdown), `grade()` the
grader's `Grade` of the episode so far, and `close()`.

- `InProcessBackend` runs the pure simulation library directly (the default).
- `RemoteBackend` plays the episode through the gRPC `EnvService` with the SDK's `EnvClient`
  (Reset, then Step with the state token each response hands back; the SDK's deadline, retries
  and channel options). `grpc` and the wire code are imported only when one is made, so the
  in-process path never loads them. It grades with the grader service when given its address,
  otherwise by replaying the actions it sent with the library's own grader (what the grader
  service computes; for a service with a world key only the grader service grades right).

The simulation is deterministic, so both give identical observations and rewards for the same
(task, split, seed, actions); tests/test_gym.py and tests/test_mcp.py check it against a real service.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from supportenv.actions import Action, validate
from supportenv.episode import EpisodeState, Observation, observe, step
from supportenv.errors import EpisodeFinishedError
from supportenv.graders import Grade, grade_state, grade_trajectory
from supportenv.replay import new_episode
from supportenv.world import Scenario

REMOTE_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Transition:
    observation: Observation
    reward: float
    terminated: bool
    truncated: bool
    breakdown: tuple[tuple[str, float], ...]

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated


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
    the signed state token and sends it back with every action. Graded by the grader service at
    `grader_address` when given, else by a replay here."""

    def __init__(self, address: str, timeout: float = REMOTE_TIMEOUT_S, grader_address: str | None = None) -> None:
        # Imported here, not at module level: the in-process path must never load grpc.
        from supportenv.v1 import codec, convert
        from supportenv.v1.client import EnvClient, GraderClient

        self.address, self.timeout, self.grader_address = address, timeout, grader_address
        self._codec, self._grade_from_pb = codec, convert.grade_from_pb
        # wait_for_ready: an env made while its service is still starting (compose, a training
        # job launched next to the server) waits for it up to the deadline; the retries alone
        # give up within a second.
        self._client = EnvClient(address, timeout, wait_for_ready=True)
        self._grader = GraderClient(grader_address, timeout, wait_for_ready=True) if grader_address else None
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
        if self._grader is None:
            return grade_trajectory(*self._key, self._actions)
        return self._grade_from_pb(self._grader.grade(*self._key, self._actions))

    def close(self) -> None:
        self._client.close()
        if self._grader is not None:
            self._grader.close()


def make_backend(
    remote: str | None = None, timeout: float = REMOTE_TIMEOUT_S, grader_address: str | None = None
) -> Backend:
    """In-process unless `remote` names an env service as "HOST:PORT"."""
    return RemoteBackend(remote, timeout, grader_address) if remote else InProcessBackend()
