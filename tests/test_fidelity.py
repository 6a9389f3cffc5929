"""Fidelity: what the grader rewards is stated in the observation, feedback says what went
wrong, an article id is a citation and not an answer, and a grade passes only when a
supervisor would accept the handling (every gate), with each shortfall explained."""

from __future__ import annotations

import dataclasses
import re

import pytest

from supportenv import expert
from supportenv.actions import Action, ask, classify, resolve, respond
from supportenv.catalog import ARTICLE_NEEDS, ARTICLES_BY_ID, IDENTITY_FACT, ISSUE_TYPES, ISSUE_TYPES_BY_ID
from supportenv.episode import fact_label, observe, start_state, step
from supportenv.graders import grade_state
from supportenv.llm import render_prompt
from supportenv.replay import new_episode
from supportenv.tasks import TASK_IDS
from supportenv.world import SPLITS, generate
from tests.test_library import expert_run as expert_plan
from tests.test_library import find_seed as find_seed_of

HARD = "end_to_end_resolution"


def find_seed(predicate, task_id: str = HARD, split: str = "train") -> int:
    return find_seed_of(task_id, predicate, split)


def play(task_id: str, seed: int, actions: list[Action], split: str = "train"):
    scenario, state = new_episode(task_id, split, seed)
    results = [step(scenario, state, a) for a in actions]
    return scenario, state, results


# ---- the policy the agent reads is the policy the episode enforces ----


def _stated_rules(policy: tuple[str, ...]) -> dict:
    """Read the rules back from the policy text alone, as an agent would."""
    text = "\n".join(policy)
    listed = dict(re.findall(r"(\w+) \(to (\w+)\)", text))
    always = next(line for line in policy if line.startswith("Always escalate"))
    enterprise = next(line for line in policy if line.startswith("For enterprise customers"))
    refunds = next(line for line in policy if line.startswith("Refunds above"))
    identity = next(line for line in policy if line.startswith("Verify identity"))
    return {
        "department": listed,
        "always": set(re.findall(r"(\w+) \(to", always)),
        "enterprise": set(re.findall(r"(\w+) \(to", enterprise)),
        "over_cap": set(re.findall(r"(\w+) \(to", refunds)),
        "caps": {tier: float(cap) for tier, cap in re.findall(r"(regular|premium|enterprise) \$(\d+)", refunds)},
        "identity": set(identity.split(": ", 1)[1].rstrip(".").split(", ")),
    }


@pytest.mark.parametrize("split", SPLITS)
def test_every_enforced_rule_is_stated(split):
    """Escalation, routing and identity checks, derived from the stated policy alone, agree with
    what the episode enforces on every ticket (a rule enforced but not stated fails here)."""
    for seed in range(300):
        scenario = generate(HARD, split, seed)
        rules, exp = _stated_rules(scenario.policy_text), scenario.expected
        facts = scenario.facts_by_name
        must = [
            i.issue_id
            for i in scenario.intents
            if i.issue_id in rules["always"]
            or (i.issue_id in rules["enterprise"] and scenario.tier == "enterprise")
            or (i.issue_id in rules["over_cap"] and float(facts["amount"]) > rules["caps"][scenario.tier])
        ]
        assert tuple(must) == exp.escalate_intents, (seed, scenario.ticket_id)
        if must:
            assert rules["department"][must[0]] == exp.department
        assert any(i.issue_id in rules["identity"] for i in scenario.intents) == exp.identity_required


def test_articles_state_what_they_need_in_the_prompt():
    for issue in ISSUE_TYPES:
        assert ARTICLE_NEEDS[issue.article_id] == issue.required_facts
    scenario, state = new_episode(HARD, "validation", 3)
    system, user = (m["content"] for m in render_prompt(observe(scenario, state)))
    for article_id, needs in ARTICLE_NEEDS.items():
        stated = f"needs: {', '.join(needs)}" if needs else "needs no facts"
        assert f"{article_id} {ARTICLES_BY_ID[article_id].title} ({stated})" in system
    for article_id, _, _ in scenario.briefing.kb_matches:
        assert article_id in user and "needs" in user


# ---- feedback says what happened ----


def test_ask_feedback_names_each_field():
    seed = find_seed(lambda s: s.expected.facts and any(f not in s.facts_by_name for f in ("invoice_number",)))
    scenario = generate(HARD, "train", seed)
    needed = scenario.expected.facts[0]
    unneeded = next((f for f in scenario.facts_by_name if f not in scenario.expected.facts), None)
    asked = (needed, "invoice_number", *((unneeded,) if unneeded else ()))
    exp = scenario.expected
    _, _, results = play(HARD, seed, [classify(exp.category), ask(*asked)])
    feedback = results[-1].observation.last_action_feedback
    assert f"{fact_label(needed)}: given" in feedback
    assert "invoice number: the customer cannot give it" in feedback
    if unneeded:
        assert f"{fact_label(unneeded)}: given, but this ticket does not need it" in feedback
    _, _, again = play(HARD, seed, [classify(exp.category), ask(needed), ask(needed)])
    assert f"{fact_label(needed)}: already given" in again[-1].observation.last_action_feedback


def test_answering_early_names_the_missing_facts():
    seed = find_seed(lambda s: len(s.intents) == 1 and not s.expected.escalate and len(s.expected.facts) >= 1)
    plan = [a for a in expert_plan(HARD, "train", seed) if a.kind != "ask_for_more_info"]
    scenario, state, results = play(HARD, seed, plan)
    answered = next(r for a, r in zip(plan, results, strict=True) if a.kind == "respond_with_solution")
    first = fact_label(scenario.expected.facts[0])
    missing = ", ".join(fact_label(f) for f in scenario.expected.facts)
    assert f"answered before gathering what the case needs: {missing}" in answered.observation.last_action_feedback
    assert first in answered.observation.customer_message, "the customer asks for what is missing"
    assert state.solved_intents == [], "an answer that needs facts it does not have fixes nothing"
    grade = grade_state(scenario, state)
    assert not grade.passed and f"facts_first: never gathered {missing}" in grade.failed_gates


def test_facts_the_customer_already_wrote_count_as_given():
    scenario = generate(HARD, "train", find_seed(lambda s: "order_id" in s.expected.facts))
    value = scenario.facts_by_name["order_id"]
    wrote = dataclasses.replace(scenario, opening_message=f"{scenario.opening_message} My order is {value}.")
    assert "order_id" in start_state(wrote).revealed
    assert "order_id" not in start_state(scenario).revealed


# ---- a citation is not an answer ----


def test_an_article_id_alone_solves_nothing():
    seed = find_seed(lambda s: len(s.intents) == 1 and not s.expected.escalate and not s.expected.facts)
    scenario = generate(HARD, "train", seed)
    exp, issue = scenario.expected, ISSUE_TYPES_BY_ID[scenario.expected.issue_type]
    cite = respond("Thank you for your patience. Please see the article I attached.", issue.article_id)
    _, state, results = play(HARD, seed, [classify(exp.category, exp.priority, exp.issue_type), cite, resolve()])
    assert state.solved_intents == [] and "respond_irrelevant" in dict(results[1].breakdown)
    grade = grade_state(scenario, state)
    assert not grade.passed and any(g.startswith("handled: not answered") for g in grade.failed_gates)
    solution = expert.solution_message(scenario, state, [issue.issue_id])
    _, state, _ = play(HARD, seed, [classify(exp.category, exp.priority, exp.issue_type), respond(solution), resolve()])
    assert state.solved_intents == [issue.issue_id]


# ---- pass means a supervisor would accept the handling ----


def test_the_expert_passes_every_gate():
    for task_id in TASK_IDS:
        for seed in range(40):
            scenario, state, _ = play(task_id, seed, expert_plan(task_id, "test", seed), split="test")
            grade = grade_state(scenario, state)
            assert grade.passed and grade.failed_gates == (), (task_id, seed, grade.failed_gates)


@pytest.mark.parametrize(
    ("change", "gate"),
    [
        ("drop_resolve", "closed: never marked resolved"),
        ("wrong_category", "triage: wrong category"),
        ("rude_answer", "rules: rude_language"),
    ],
)
def test_each_gate_fails_the_grade_on_its_own(change, gate):
    seed = find_seed(lambda s: len(s.intents) == 1 and not s.expected.escalate and s.expected.facts)
    plan = expert_plan(HARD, "train", seed)
    if change == "drop_resolve":
        plan = plan[:-1]
    elif change == "wrong_category":
        right = plan[0].category
        plan[0] = plan[0]._replace(category=next(c for c in ("billing", "technical") if c != right))
    else:
        at = next(i for i, a in enumerate(plan) if a.kind == "respond_with_solution")
        plan[at] = plan[at]._replace(text=plan[at].text + " It's your own fault, read the manual.")
    scenario, state, _ = play(HARD, seed, plan)
    grade = grade_state(scenario, state)
    assert not grade.passed and gate in grade.failed_gates, grade.failed_gates


def test_identity_is_charged_once():
    """Answering an identity-checked issue without the account email breaks a policy rule;
    information gathering does not charge the same missing email again."""
    seed = find_seed(
        lambda s: (
            len(s.intents) == 1
            and s.expected.identity_required
            and not s.expected.escalate
            and s.expected.facts == (IDENTITY_FACT,)
        )
    )
    plan = expert_plan(HARD, "train", seed)  # classify, ask, answer, close
    answer = next(a for a in plan if a.kind == "respond_with_solution")
    scenario, state, _ = play(HARD, seed, [plan[0], answer, *plan[1:]])  # answered once before asking
    grade = grade_state(scenario, state)
    parts = {c.name: c for c in grade.components}
    assert parts["policy_compliance"].score < 1.0 and "verify_identity" in parts["policy_compliance"].detail
    assert parts["information_gathering"].score == 1.0, parts["information_gathering"].detail


_FINE = (
    "every issue handled, closed",
    "no rules broken",
    "right category on the first try",
    "solved without escalating",
)


def test_every_component_below_full_marks_says_why():
    """Over the expert, detoured and truncated plans of every task, a component below 1.0
    never reads as if nothing was wrong."""
    for task_id in TASK_IDS:
        for seed in range(30):
            plan = expert_plan(task_id, "validation", seed)
            for variant in (plan, plan[:-1], plan[1:], [a for a in plan if a.kind != "ask_for_more_info"]):
                scenario, state = new_episode(task_id, "validation", seed)
                for action in variant:
                    if state.done:
                        break
                    step(scenario, state, action)
                for part in grade_state(scenario, state).components:
                    if part.score < 1.0:
                        assert part.detail and part.detail not in _FINE, (task_id, seed, part)
