"""Episodes from their keys: `new_episode` starts one, `replay` rebuilds one from its actions.

(task, split, seed) fixes the ticket (in the world of the optional world key, see
supportenv.world), and the transition is deterministic, so an episode's key and its action
log *are* its state: the env service's tokens and the grader both rebuild episodes here.
The action-selection task opens mid-conversation, after a colleague's question, so starting
an episode may play it.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from supportenv import expert
from supportenv.actions import Action, validate
from supportenv.episode import EpisodeState, advance, start_state
from supportenv.errors import EpisodeFinishedError, InvalidActionError, InvalidRequestError
from supportenv.tasks import get_task
from supportenv.world import SPLITS, Scenario, generate

MAX_SEED = 2**63 - 1


def check_episode_key(task_id: Any, split: Any, seed: Any) -> None:
    """Raise UnknownTaskError / InvalidRequestError unless new_episode would accept these (typed Any,
    as are the entry points that call it: the compiled build checks nothing before this does)."""
    get_task(task_id)  # raises UnknownTaskError
    if split not in SPLITS:
        raise InvalidRequestError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    if not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise InvalidRequestError(f"seed must be an integer from 0 to {MAX_SEED}, got {seed!r}")


def new_episode(
    task_id: Any, split: Any, seed: Any, episode_id: str = "", world_key: bytes | None = None
) -> tuple[Scenario, EpisodeState]:
    """The ticket of (task_id, split, seed) in the world of `world_key` (None: the public
    world) and the state the agent takes it over in."""
    check_episode_key(task_id, split, seed)
    scenario = generate(task_id, split, seed, world_key)
    return scenario, opening_state(scenario, episode_id)


def opening_state(scenario: Scenario, episode_id: str = "") -> EpisodeState:
    """The state the agent takes a scenario over in (what new_episode gives, for a scenario at hand)."""
    state = start_state(scenario, episode_id)
    if scenario.prefix_steps:
        _play_opening(scenario, state)
    return state


def _play_opening(scenario: Scenario, state: EpisodeState) -> None:
    """action_selection starts mid-conversation: a colleague who replied first asked the
    customer for the details the expert would ask for, and left the triage and the rest to
    the agent (so the customer's words, not a colleague's triage, say what the case is). The
    exchange shows in the history but is not the agent's step."""
    question = next((a for a in _expert_plan(scenario, state) if a.kind == "ask_for_more_info"), None)
    if question is None:
        return
    advance(scenario, state, question)
    state.history = [(speaker, text, 0) for speaker, text, _ in state.history]
    state.step, state.cost = 0, 0.0
    state.rewards, state.actions, state.last_feedback, state.last_breakdown = [], [], "", ()


def _expert_plan(scenario: Scenario, state: EpisodeState) -> list[Action]:
    scratch = copy.deepcopy(state)
    plan = []
    while not scratch.done:
        plan.append(expert.expert_action(scenario, scratch, state.task_id))
        advance(scenario, scratch, plan[-1])
    return plan


def replay(
    task_id: Any,
    split: Any,
    seed: Any,
    actions: Sequence[Action],
    episode_id: str = "",
    world_key: bytes | None = None,
) -> tuple[Scenario, EpisodeState]:
    """Rebuild an episode from its actions; rejects trajectories a task cannot have."""
    task = get_task(task_id)
    if len(actions) > task.max_steps:
        raise InvalidRequestError(
            f"trajectory has {len(actions)} actions; task {task_id} allows at most {task.max_steps}"
        )
    scenario, state = new_episode(task_id, split, seed, episode_id, world_key)
    for index, action in enumerate(actions):
        # A failing action is named by its index from 0, as StepBatch names its items; an action
        # after the end is refused as Step refuses it (EpisodeFinishedError: FAILED_PRECONDITION).
        if state.done:
            why = "ticket marked resolved" if state.terminated else "out of steps"
            raise EpisodeFinishedError(
                f"actions[{index}] comes after the episode ended at step {state.step} ({why}): a trajectory ends "
                "with the action that ends its episode"
            )
        try:
            advance(scenario, state, validate(action))
        except InvalidActionError as exc:
            raise InvalidActionError(f"actions[{index}]: {exc}") from exc
    return scenario, state
