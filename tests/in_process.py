"""A shipped policy played in process, on the library alone: the episode the services would give
(tests/test_determinism.py and tests/test_transports.py show them identical), at a fraction of the
cost, for the tests that score every policy on hundreds of seeds."""

from __future__ import annotations

from baseline_agent.policies import make_policy
from supportenv.episode import EpisodeState, observe, step
from supportenv.graders import Grade, grade_state
from supportenv.replay import new_episode
from supportenv.world import Scenario


def play(policy_name: str, task_id: str, split: str, seed: int, trial: int = 0) -> tuple[Scenario, EpisodeState, Grade]:
    """One episode of `policy_name`, graded: (scenario, final state, grade)."""
    policy = make_policy(policy_name)
    policy.begin(task_id, split, seed, trial)
    scenario, state = new_episode(task_id, split, seed)
    observation = observe(scenario, state)
    while not state.done:
        observation = step(scenario, state, policy.act(observation)).observation
    return scenario, state, grade_state(scenario, state)
