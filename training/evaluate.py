"""Scores: the trained (greedy) policy on the feature env, and the reference policies of
`baseline_agent.policies` (random, rule, oracle) played in-process through the library, graded by
the same graders as the grader service. Ticket `seed`s 0..n-1 of a split, like `python -m baseline_agent`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from baseline_agent.policies import OraclePolicy, Policy, RandomPolicy, RulePolicy
from supportenv.episode import observe, step
from supportenv.graders import grade_state
from supportenv.gym import SupportFeatureEnv
from supportenv.replay import new_episode
from supportenv.tasks import TASK_IDS, get_task
from training.reinforce import play

REFERENCES: dict[str, Callable[[], Policy]] = {"random": RandomPolicy, "rule": RulePolicy, "oracle": OraclePolicy}


def weighted(per_task: dict[str, float]) -> float:
    """The weighted score of `baseline_agent.runner.weighted_score`: task means by the tasks' weights."""
    total = sum(get_task(t).weight for t in per_task)
    return sum(get_task(t).weight * score for t, score in per_task.items()) / total


def agent_scores(
    act: Callable[[np.ndarray], int], split: str, seeds: int, tasks: Sequence[str] = TASK_IDS
) -> dict[str, float]:
    """Mean grader score per task of a feature-env policy (observation -> macro-action) on tickets 0..seeds-1."""
    env = SupportFeatureEnv(split=split)
    try:
        return {t: float(np.mean([play(env, t, split, s, act).score for s in range(seeds)])) for t in tasks}
    finally:
        env.close()


def _episode_score(policy: Policy, task_id: str, split: str, seed: int) -> float:
    scenario, state = new_episode(task_id, split, seed)
    policy.begin(task_id, split, seed)
    while not state.done:
        step(scenario, state, policy.act(observe(scenario, state)))
    return grade_state(scenario, state).score


def reference_scores(name: str, split: str, seeds: int, tasks: Sequence[str] = TASK_IDS) -> dict[str, float]:
    """Mean grader score per task of reference policy `name` on tickets 0..seeds-1."""
    policy = REFERENCES[name]()
    return {t: float(np.mean([_episode_score(policy, t, split, s) for s in range(seeds)])) for t in tasks}
