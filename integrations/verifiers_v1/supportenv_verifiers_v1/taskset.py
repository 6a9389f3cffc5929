"""The taskset: one task per (task, split, seed) episode, and what a rollout of one is.

A task's prompt is what `supportenv.llm` shows a model for the episode's first observation,
worded for function calls (`render_prompt(obs, tool_calls=True)`: the rules as the system
prompt, the ticket as the user's). The model acts through the taskset's tool server
(supportenv_verifiers_v1.toolset), one tool call per step; `setup` names the episode in the
rollout's state, and the `episode_over` stop ends the rollout once the episode has ended (closed
or out of steps). A reply without a tool call ends the harness's chat loop, and so the rollout,
where it stands.

The reward is the episode's grade, `SupportEnv.grade().score` of the actions the rollout
applied (replayed); `passed`, `step_reward` (the summed step rewards, the shaped signal) and
`steps` are metrics. The actions, as `Action.to_dict()`, are in the trace's state.
"""

from collections.abc import Iterator

import verifiers.v1 as vf
from pydantic import Field

from supportenv.env import SupportEnv
from supportenv.llm import render_prompt
from supportenv.tasks import TASK_IDS, task_ids
from supportenv_verifiers_v1.state import SupportState, replay
from supportenv_verifiers_v1.toolset import SupportToolset


class SupportData(vf.TaskData):
    task_id: str
    split: str
    seed: int


class SupportTask(vf.Task[SupportData, SupportState, vf.TaskConfig]):
    @property
    def key(self) -> str:
        return f"{self.data.task_id}/{self.data.split}/{self.data.seed}"

    async def setup(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        trace.state.task_id, trace.state.split, trace.state.seed = self.data.task_id, self.data.split, self.data.seed

    @vf.stop
    async def episode_over(self, trace: vf.Trace) -> bool:
        return trace.state.done

    @vf.reward(weight=1.0)
    async def grade_score(self, trace: vf.Trace) -> float:
        env, _ = replay(trace.state)
        return env.grade().score

    @vf.metric
    async def passed(self, trace: vf.Trace) -> float:
        env, _ = replay(trace.state)
        return float(env.grade().passed)

    @vf.metric
    async def step_reward(self, trace: vf.Trace) -> float:
        return float(sum(trace.state.step_rewards))

    @vf.metric
    async def steps(self, trace: vf.Trace) -> float:
        return float(len(trace.state.actions))


class SupportTasksetConfig(vf.TasksetConfig):
    tasks: list[str] = Field(default_factory=lambda: list(TASK_IDS))
    """Task ids: the three source tasks by default; add expert_resolution for the help desk's tools."""
    split: str = "train"
    """train, validation or test."""
    seeds: list[int] | None = None
    """The episodes' seeds; default `seed_start` .. `seed_start + num_examples - 1`."""
    num_examples: int = Field(50, ge=1)
    seed_start: int = 0
    tools: vf.SharedToolsetConfig = vf.SharedToolsetConfig()
    """Where the tool server runs (a local subprocess by default)."""


class SupportTaskset(vf.Taskset[SupportTask, SupportTasksetConfig]):
    @classmethod
    def toolsets(cls, config: SupportTasksetConfig) -> list[vf.Toolset]:
        return [SupportToolset(config.tools)]

    def load(self) -> Iterator[SupportTask]:
        """Seed by seed, every task per seed, so the first tasks already cover every task."""
        config = self.config
        tasks = task_ids(config.tasks)
        seeds = (
            config.seeds
            if config.seeds is not None
            else range(config.seed_start, config.seed_start + config.num_examples)
        )
        for seed in seeds:
            for task_id in tasks:
                system, user = render_prompt(SupportEnv(task_id, config.split, seed).reset(), tool_calls=True)
                yield SupportTask(
                    SupportData(
                        name=f"{task_id}/{config.split}/{seed}",
                        system_prompt=system["content"],
                        prompt=user["content"],
                        task_id=task_id,
                        split=config.split,
                        seed=seed,
                    ),
                    config.task,
                )
