"""Deterministic graders: one small function per named component, combined by the
task's weights. Grading trusts only (task, split, seed, actions): it regenerates the
scenario and replays the actions. Components that reward "doing no harm" are scaled
by progress, so an agent that does nothing earns nothing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from supportenv import expert
from supportenv.actions import Action
from supportenv.catalog import PRIORITIES
from supportenv.episode import EpisodeState, advance, handled, missing_facts, solved_all
from supportenv.replay import opening_state, replay
from supportenv.tasks import get_task
from supportenv.world import Scenario

GRADER_VERSION = "graders-1"


@dataclass(frozen=True)
class Component:
    name: str
    score: float
    weight: float
    detail: str


@dataclass(frozen=True)
class Grade:
    task_id: str
    score: float
    passed: bool
    pass_threshold: float
    components: tuple[Component, ...]
    steps: int
    terminated: bool
    truncated: bool
    cumulative_reward: float
    rewards: tuple[float, ...]
    grader_version: str = GRADER_VERSION


def _clip(x: float) -> float:
    return round(min(1.0, max(0.0, x)), 6)


@dataclass(frozen=True)
class _Optimum:
    steps: int
    cost: float
    start_milestones: int  # milestones already reached when the agent took over


def milestones(scenario: Scenario, state: EpisodeState) -> list[bool]:
    """Right category, needed facts gathered (when any are needed), core handling, closed."""
    exp = scenario.expected
    routed = (state.escalated and state.department == exp.department) if exp.escalate else True
    core = routed and solved_all(scenario, state)
    reached = [state.first_category == exp.category, core, state.terminated and core]
    if exp.facts:
        reached.append(not missing_facts(scenario, state))
    return reached


def optimum(scenario: Scenario, task_id: str) -> _Optimum:
    """Steps and cost of the expert's own handling of this scenario, from the agent's start."""
    state = opening_state(scenario)
    start = sum(milestones(scenario, state))
    while not state.done:
        advance(scenario, state, expert.expert_action(scenario, state, task_id))
    return _Optimum(state.step, state.cost, start)


def progress(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> float:
    """The share of the remaining milestones the agent itself reached."""
    reached = milestones(scenario, state)
    left = len(reached) - opt.start_milestones
    return max(0, sum(reached) - opt.start_milestones) / left if left else 1.0


def violations(scenario: Scenario, state: EpisodeState) -> list[str]:
    found = list(state.violations)
    if scenario.expected.escalate and not state.escalated and state.terminated:
        found.append("missed_escalation")
    found.extend(["rude_language"] * state.rude)
    return found


# ---- issue_classification ----


def c_category(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    if state.first_category == scenario.expected.category:
        return 1.0, "right category on the first try"
    if state.category == scenario.expected.category:
        return 0.5, "right category after a correction"
    return 0.0, f"category {state.category or 'never set'}"


def c_issue_type(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    if state.first_issue_type == scenario.expected.issue_type:
        return 1.0, "right issue type on the first try"
    if state.issue_type == scenario.expected.issue_type:
        return 0.5, "right issue type after a correction"
    return 0.0, f"issue type {state.issue_type or 'never set'}"


def c_priority(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    if state.first_category != scenario.expected.category:
        return 0.0, "no credit for priority without the right category"
    if not state.first_priority:
        return 0.0, "no priority given"
    gap = abs(PRIORITIES.index(state.first_priority) - PRIORITIES.index(scenario.expected.priority))
    return {0: 1.0, 1: 0.5}.get(gap, 0.0), f"priority off by {gap} level(s)"


def c_classification_efficiency(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    if state.category != scenario.expected.category:
        return 0.0, "no credit for speed without the right category"
    score = opt.steps / max(state.step, opt.steps)
    if not state.terminated:
        score *= 0.5
    return score, f"{state.step} steps for an optimum of {opt.steps}"


# ---- action_selection ----


def expert_grade_steps(scenario: Scenario, state: EpisodeState) -> int:
    """How many of the episode's actions an expert would have taken where they were taken,
    judged on a replay of its actions from the start."""
    replayed = opening_state(scenario, state.episode_id)
    good = 0
    for action in state.actions:
        good += expert.is_acceptable(scenario, replayed, state.task_id, action)
        advance(scenario, replayed, action)
    return good


def c_step_quality(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    good = expert_grade_steps(scenario, state)
    return good / max(state.step, opt.steps), f"{good} expert-grade steps of {state.step}"


def c_policy_compliance(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    found = violations(scenario, state)
    score = max(0.0, 1.0 - 0.5 * len(found)) * progress(scenario, state, opt)
    return score, ", ".join(found) or "no violations"


def c_escalation_judgement(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    exp = scenario.expected
    if exp.escalate:
        if state.escalated and state.department == exp.department:
            return 1.0, "escalated and routed as required"
        return (0.5, "escalated but misrouted") if state.escalated else (0.0, "escalation required but not done")
    if state.escalated or state.transfers:
        return 0.0, "escalated or transferred a case the agent could solve"
    solved = solved_all(scenario, state)
    return (1.0, "solved without escalating") if solved else (0.0, "neither solved nor escalated")


def c_efficiency(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    if handled(scenario, state, state.task_id) != "proper" or not state.terminated:
        return 0.0, "the case was not handled and closed"
    steps = opt.steps / max(state.step, opt.steps)
    cost = (opt.cost + 1.0) / (max(state.cost, opt.cost) + 1.0)
    return (
        0.5 * steps + 0.5 * cost,
        f"{state.step} steps (optimum {opt.steps}), ${state.cost:.0f} (optimum ${opt.cost:.0f})",
    )


# ---- end_to_end_resolution ----


def _answered_fraction(scenario: Scenario, state: EpisodeState) -> float:
    solvable = scenario.expected.solvable
    return sum(1 for i in solvable if i in state.solved_intents) / len(solvable) if solvable else 1.0


def c_resolution(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    exp = scenario.expected
    answered = _answered_fraction(scenario, state)
    if exp.escalate:
        routed = 1.0 if state.escalated and state.department == exp.department else 0.5 if state.escalated else 0.0
        # Escalation covers its own issues; the agent still answers the rest.
        core = routed * len(exp.escalate_intents) / len(scenario.intents) + answered * len(exp.solvable) / len(
            scenario.intents
        )
    else:
        core = answered
    score = core * (1.0 if state.terminated else 0.7)
    detail = f"answered {answered:.0%} of what the agent must solve" + (", escalated" if state.escalated else "")
    return score, detail + (", closed" if state.terminated else ", not closed")


def c_information_gathering(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    needed = scenario.expected.facts
    got = sum(1 for f in needed if f in state.revealed)
    wasted = state.repeated_asks + state.unknown_asks
    # With nothing to ask, credit goes to handling the case without pointless questions.
    gathered = got / len(needed) if needed else float(bool(state.solved_intents or state.escalated))
    return gathered - 0.2 * wasted, f"{got}/{len(needed)} needed facts; {wasted} wasted questions"


def c_response_quality(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    if not state.responses:
        return 0.0, "nothing written to the customer"
    useful = _answered_fraction(scenario, state)
    score = 0.4 * useful + 0.3 * state.polite / state.responses + 0.3 * min(1, state.personalised)
    score -= 0.5 * state.rude + 0.2 * state.wrong_solutions
    return score * progress(
        scenario, state, opt
    ), f"{state.responses} responses, {state.polite} polite, {state.rude} rude"


def c_customer_sentiment(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    if state.customer_left:
        return 0.0, "the customer left"
    # Judged on the change the agent made, since tickets start from different moods.
    change = state.sentiment - scenario.initial_sentiment
    score = (0.6 + change) * progress(scenario, state, opt)
    return score, f"sentiment {scenario.initial_sentiment:+.2f} -> {state.sentiment:+.2f}"


_Fn = Callable[[Scenario, EpisodeState, _Optimum], tuple[float, str]]
COMPONENT_FUNCTIONS: dict[str, dict[str, _Fn]] = {
    "issue_classification": {
        "category": c_category,
        "issue_type": c_issue_type,
        "priority": c_priority,
        "efficiency": c_classification_efficiency,
    },
    "action_selection": {
        "step_quality": c_step_quality,
        "policy_compliance": c_policy_compliance,
        "escalation_judgement": c_escalation_judgement,
        "efficiency": c_efficiency,
    },
    "end_to_end_resolution": {
        "resolution": c_resolution,
        "information_gathering": c_information_gathering,
        "policy_compliance": c_policy_compliance,
        "response_quality": c_response_quality,
        "customer_sentiment": c_customer_sentiment,
        "efficiency": c_efficiency,
    },
}


def grade_state(scenario: Scenario, state: EpisodeState) -> Grade:
    task = get_task(state.task_id)
    opt = optimum(scenario, task.task_id)
    functions = COMPONENT_FUNCTIONS[task.task_id]
    components = []
    for name, weight in task.components:
        score, detail = functions[name](scenario, state, opt)
        components.append(Component(name, _clip(score), weight, detail))
    total = _clip(sum(c.score * c.weight for c in components))
    return Grade(
        task_id=task.task_id,
        score=total,
        passed=total >= task.pass_threshold,
        pass_threshold=task.pass_threshold,
        components=tuple(components),
        steps=state.step,
        terminated=state.terminated,
        truncated=state.truncated,
        cumulative_reward=state.cumulative_reward,
        rewards=tuple(state.rewards),
    )


def grade_trajectory(
    task_id: str, split: str, seed: int, actions: Sequence[Action], world_key: bytes | None = None
) -> Grade:
    scenario, state = replay(task_id, split, seed, actions, world_key=world_key)
    return grade_state(scenario, state)
