"""The expert: what correct handling does next, given the hidden scenario.

Used by the action-selection grader (was each step an expert-acceptable choice?)
and by the oracle agent (which proves full marks are reachable)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from supportenv.actions import Action
from supportenv.world import Scenario

if TYPE_CHECKING:
    from supportenv.episode import EpisodeState


def missing_facts(scenario: Scenario, state: EpisodeState) -> list[str]:
    return [f for f in scenario.expected.facts if f not in state.revealed]


def solution_message(scenario: Scenario, state: EpisodeState) -> str:
    """A polite, relevant, personalised answer naming the issue's first solution."""
    phrase = scenario.issue.solution_phrases[0]
    facts = [value for name, value in scenario.hidden_facts if name in state.revealed]
    ref = f" (regarding {facts[0]})" if facts else ""
    return f"Thank you for your patience{ref}. I'm sorry for the trouble: we will {phrase} for you right away."


def escalation_message(scenario: Scenario, state: EpisodeState) -> str:
    facts = [value for name, value in scenario.hidden_facts if name in state.revealed]
    ref = f" about {facts[0]}" if facts else ""
    return (
        f"I'm sorry for the trouble{ref}. Our policy requires a specialist for this "
        f"{scenario.issue.title.lower()}, so I'm escalating it to the {scenario.expected.department} team now."
    )


def expert_action(scenario: Scenario, state: EpisodeState, task_id: str) -> Action:
    exp = scenario.expected
    if not state.category:
        return Action("classify_issue", category=exp.category, priority=exp.priority)
    if task_id == "issue_classification":
        return Action("mark_resolved", text="Ticket triaged.")
    missing = missing_facts(scenario, state)
    if missing:
        return Action("ask_for_more_info", fields=tuple(missing[:2]), text="Could you please share these details?")
    if exp.escalate:
        if state.department != exp.department:
            return Action("assign_department", department=exp.department, text="Routing per policy.")
        if not state.escalated:
            return Action("escalate_to_human", text=escalation_message(scenario, state))
        return Action("mark_resolved", text="Escalated to the right team.")
    if not state.solved:
        return Action("respond_with_solution", text=solution_message(scenario, state), article_id=exp.article_id)
    return Action("mark_resolved", text="Solved.")


def is_acceptable(scenario: Scenario, state: EpisodeState, task_id: str, action: Action) -> bool:
    """Would an expert accept this action here? Judged before the action is applied."""
    exp = scenario.expected
    missing = missing_facts(scenario, state)
    asks_missing = action.kind == "ask_for_more_info" and bool(action.fields) and set(action.fields) <= set(missing)
    if not state.category:
        if action.kind == "classify_issue":
            return action.category == exp.category
        return asks_missing and task_id != "issue_classification"
    if task_id == "issue_classification":
        return action.kind == "mark_resolved"
    if missing:
        return asks_missing
    if exp.escalate:
        if action.kind == "assign_department":
            return action.department == exp.department and state.department != exp.department
        if action.kind == "escalate_to_human":
            return not state.escalated
        if action.kind == "request_callback":
            return exp.callback_allowed and not state.callback
        return action.kind == "mark_resolved" and state.escalated and state.department == exp.department
    if not state.solved:
        if action.kind == "suggest_knowledge_base":
            return action.article_id == exp.article_id and action.article_id not in state.articles
        return action.kind == "respond_with_solution" and expert_would_accept_text(scenario, action)
    return action.kind == "mark_resolved"


def expert_would_accept_text(scenario: Scenario, action: Action) -> bool:
    from supportenv.text import judge_response

    judged = judge_response(action.text, scenario.issue, action.article_id, [])
    return judged.relevant and not judged.rude and judged.wrong_solutions == 0
