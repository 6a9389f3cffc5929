"""Where the MCP server's episodes run: in this process, or in a running env service.

Both backends have one small interface (`Backend`): `reset(task_id, split, seed)` gives the
library's `Observation`, `step(action)` a `Transition`, `grade()` the grader's `Grade` of the
episode so far, and `close()`. The MCP tools (supportenv.mcp.server) see nothing else.

- `LibraryBackend` plays the pure library in this process (`SupportEnv`), the default.
- `ServiceBackend` plays through the gRPC env service with the SDK's `EnvClient`, and grades
  with the grader service (`GraderClient`) when given its address, otherwise by replaying the
  actions it sent with the library's own grader (what the grader service computes; against a
  sealed service, one with a world key, only the grader service grades right).
  grpc and the wire code are imported only when one is made.

(supportenv.gym.backend has the same shape, but that package needs gymnasium.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from supportenv.actions import Action
from supportenv.env import SupportEnv
from supportenv.episode import Observation
from supportenv.graders import Grade, grade_trajectory

T = TypeVar("T")
SERVICE_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Transition:
    """One step's outcome: the next observation, the reward and its named parts, how it ended."""

    observation: Observation
    reward: float
    terminated: bool
    truncated: bool
    breakdown: dict[str, float]

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated


class BackendError(RuntimeError):
    """The environment behind the MCP server failed (a service that cannot be reached, say)."""


class Backend(Protocol):
    def reset(self, task_id: str, split: str, seed: int) -> Observation: ...

    def step(self, action: Action) -> Transition: ...

    def grade(self) -> Grade: ...

    def close(self) -> None: ...


class LibraryBackend:
    """The library itself, in this process: no network."""

    def __init__(self) -> None:
        self._env = SupportEnv()

    def reset(self, task_id: str, split: str, seed: int) -> Observation:
        return self._env.reset(seed=seed, task_id=task_id, split=split)

    def step(self, action: Action) -> Transition:
        observation, reward, _, info = self._env.step(action)
        return Transition(observation, reward, info["terminated"], info["truncated"], info["reward_breakdown"])

    def grade(self) -> Grade:
        return self._env.grade()

    def close(self) -> None:
        pass


class ServiceBackend:
    """An env service at `env_address` ("HOST:PORT"); it keeps no episode: the client holds the
    signed state token. Graded by the grader service at `grader_address`, or by a local replay."""

    def __init__(self, env_address: str, grader_address: str | None = None, timeout: float = SERVICE_TIMEOUT_S):
        import grpc  # here, not at module level: the in-process path never loads grpc

        from supportenv.v1 import convert
        from supportenv.v1.client import EnvClient, GraderClient

        self._rpc_error, self._grade_from_pb = grpc.RpcError, convert.grade_from_pb
        self.env_address, self.grader_address = env_address, grader_address
        # wait_for_ready: a server started next to its env service waits for it (up to the deadline).
        self._env = EnvClient(env_address, timeout, wait_for_ready=True)
        self._grader = GraderClient(grader_address, timeout, wait_for_ready=True) if grader_address else None
        self._episode: tuple[str, str, int] | None = None
        self._actions: list[Action] = []

    def _call(self, service: str, address: str, call: Callable[[], T]) -> T:
        try:
            return call()
        except self._rpc_error as exc:
            code, details = exc.code(), exc.details()  # type: ignore[attr-defined]
            raise BackendError(f"the {service} service at {address} failed: {code.name}: {details}") from None

    def reset(self, task_id: str, split: str, seed: int) -> Observation:
        observation, _ = self._call("env", self.env_address, lambda: self._env.reset(task_id, split, seed))
        self._episode, self._actions = (task_id, split, seed), []
        return observation

    def step(self, action: Action) -> Transition:
        observation, reward, terminated, truncated, info = self._call(
            "env", self.env_address, lambda: self._env.step(action)
        )
        self._actions.append(action)
        return Transition(observation, reward, terminated, truncated, info["reward_breakdown"])

    def grade(self) -> Grade:
        if self._episode is None:
            raise BackendError("no episode to grade: reset first")
        task_id, split, seed = self._episode
        if self._grader is None:
            return grade_trajectory(task_id, split, seed, self._actions)
        grader, address = self._grader, self.grader_address or ""
        reply = self._call("grader", address, lambda: grader.grade(task_id, split, seed, self._actions))
        return self._grade_from_pb(reply)

    def close(self) -> None:
        self._env.close()
        if self._grader is not None:
            self._grader.close()


def backend_factory(
    env_address: str | None = None, grader_address: str | None = None, timeout: float = SERVICE_TIMEOUT_S
) -> Callable[[], Backend]:
    """What makes each MCP session's backend: in-process unless `env_address` names an env service."""
    if env_address:
        return lambda: ServiceBackend(env_address, grader_address, timeout)
    return LibraryBackend


def describe(env_address: str | None, grader_address: str | None) -> str:
    """Where episodes run, for the ready line."""
    if not env_address:
        return "episodes in-process (the library)"
    graded = f"graded by the grader service at {grader_address}" if grader_address else "graded by a local replay"
    return f"episodes on the env service at {env_address}, {graded}"
