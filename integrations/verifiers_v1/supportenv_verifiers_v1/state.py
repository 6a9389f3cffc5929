"""One rollout's episode as verifiers carries it: the rollout state (`vf.State`) that the host
and the shared tool server both read, and the episode it stands for, rebuilt by replay.

The tool server is one process for every rollout, so it keeps no episode between calls: the
state names the episode (task, split, seed) and records the actions applied (as
`Action.to_dict()`), their step rewards and whether the episode has ended, and each call
replays those actions through `SupportEnv` (pure and deterministic, so the replay is the
episode) before applying its own. The reward is the replayed episode's `grade()`.
"""

import verifiers.v1 as vf
from pydantic import Field

from supportenv.actions import Action
from supportenv.env import SupportEnv
from supportenv.episode import Observation


class SupportState(vf.State):
    task_id: str = ""
    split: str = ""
    seed: int = 0
    actions: list[dict] = Field(default_factory=list)
    step_rewards: list[float] = Field(default_factory=list)
    done: bool = False


def replay(state: SupportState) -> tuple[SupportEnv, Observation]:
    """The episode the state records, played up to now: its env and current observation."""
    env = SupportEnv(state.task_id, state.split, state.seed)
    observation = env.reset()
    for action in state.actions:
        observation, _, _, _ = env.step(Action.from_dict(action))
    return env, observation
