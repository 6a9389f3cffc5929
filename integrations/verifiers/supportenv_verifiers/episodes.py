"""One episode per rollout, played over either backend behind the same small interface.

- `LibraryEpisode`: in process over `supportenv.env.SupportEnv` (pure and fast, so it steps on
  the event loop itself); graded by `SupportEnv.grade()`.
- `ServiceEpisode`: over the project's gRPC env service (`supportenv.v1.client.AsyncEnvClient`,
  the asyncio client, so concurrent rollouts never block each other); graded by the grader
  service when one is given, else by replaying the actions with the library
  (`supportenv.graders.grade_trajectory`, the public world: a service run with a world key needs
  its grader, since the library cannot regenerate a sealed ticket).

Each episode owns its client (its state token): rollouts never share one. Both record the actions
applied, in order, so a rollout can be replayed and regraded.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from supportenv.actions import Action
from supportenv.env import SupportEnv
from supportenv.episode import Observation
from supportenv.graders import grade_trajectory


class StepOutcome(NamedTuple):
    observation: Observation
    reward: float
    done: bool  # terminated or truncated


class Verdict(NamedTuple):
    score: float
    passed: bool


class Episode(Protocol):
    actions: list[Action]

    async def reset(self) -> Observation: ...

    async def step(self, action: Action) -> StepOutcome: ...

    async def grade(self) -> Verdict: ...

    async def close(self) -> None: ...


class LibraryEpisode:
    def __init__(self, task_id: str, split: str, seed: int) -> None:
        self.env = SupportEnv(task_id, split, seed)
        self.actions: list[Action] = []

    async def reset(self) -> Observation:
        return self.env.reset()

    async def step(self, action: Action) -> StepOutcome:
        observation, reward, done, _ = self.env.step(action)
        self.actions.append(action)
        return StepOutcome(observation, reward, done)

    async def grade(self) -> Verdict:
        grade = self.env.grade()
        return Verdict(grade.score, grade.passed)

    async def close(self) -> None:
        pass


class ServiceEpisode:
    def __init__(self, task_id: str, split: str, seed: int, env_address: str, grader_address: str | None) -> None:
        from supportenv.v1.client import AsyncEnvClient  # grpc only where this backend is used

        self.task_id, self.split, self.seed = task_id, split, seed
        self.grader_address = grader_address
        self.client = AsyncEnvClient(env_address)
        self.actions: list[Action] = []

    async def reset(self) -> Observation:
        observation, _ = await self.client.reset(self.task_id, self.split, self.seed)
        return observation

    async def step(self, action: Action) -> StepOutcome:
        observation, reward, terminated, truncated, _ = await self.client.step(action)
        self.actions.append(action)
        return StepOutcome(observation, reward, terminated or truncated)

    async def grade(self) -> Verdict:
        if not self.grader_address:
            grade = grade_trajectory(self.task_id, self.split, self.seed, self.actions)
            return Verdict(grade.score, grade.passed)
        from supportenv.v1.client import AsyncGraderClient

        async with AsyncGraderClient(self.grader_address) as grader:
            reply = await grader.grade(self.task_id, self.split, self.seed, self.actions)
        return Verdict(reply.score, reply.passed)

    async def close(self) -> None:
        await self.client.close()


def open_episode(task_id: str, split: str, seed: int, env_address: str | None, grader_address: str | None) -> Episode:
    """The rollout's own episode: over the env service at `env_address`, else in process."""
    if env_address:
        return ServiceEpisode(task_id, split, seed, env_address, grader_address)
    return LibraryEpisode(task_id, split, seed)
