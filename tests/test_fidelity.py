"""Fidelity: what the grader rewards is stated in the observation, feedback says what went
wrong, an article id is a citation and not an answer, and a grade passes only when a
supervisor would accept the handling (every gate), with each shortfall explained."""

from __future__ import annotations

import dataclasses
import re
from itertools import pairwise

import pytest

from baseline_agent.policies import KeywordStufferPolicy
from supportenv import expert
from supportenv.actions import Action, ask, classify, resolve, respond
from supportenv.catalog import (
    ARTICLE_NEEDS,
    ARTICLES_BY_ID,
    CATEGORIES,
    IDENTITY_FACT,
    ISSUE_TYPES,
    ISSUE_TYPES_BY_ID,
    POLICY_VARIANTS,
    REQUESTABLE_FIELDS,
    policy_rules,
)
from supportenv.episode import fact_label, missing_facts, observe, start_state, step
from supportenv.graders import grade_state
from supportenv.llm import render_prompt
from supportenv.replay import new_episode
from supportenv.tasks import TASK_IDS
from supportenv.text import judge, verdict
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
    refunds = next(line for line in policy if line.startswith("Refunds whose amount"))
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
    assert "(none until the ticket is classified)" in user
    step(scenario, state, classify(scenario.expected.category))
    obs = observe(scenario, state)
    user = render_prompt(obs)[1]["content"]
    assert obs.kb_matches
    for article_id, _, _ in obs.kb_matches:
        assert f"- {article_id} (" in user and "needs" in user


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
    "solved without escalating, as policy says",
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


# ---- one objective: the return and the grade rank plans alike ----


def _return_and_grade(task_id: str, seed: int, actions: list[Action]) -> tuple[float, float]:
    scenario, state = new_episode(task_id, "validation", seed)
    for action in actions:
        if state.done:
            break
        step(scenario, state, action)
    return round(state.cumulative_reward, 6), grade_state(scenario, state).score


def _reasonable_alternatives(plan: list[Action]) -> dict[str, list[Action]]:
    """Plans a reasonable agent might follow instead of the expert's: one step skipped, two
    neighbours swapped, one extra question, the answer before the questions, closed early."""
    body, close = plan[:-1], plan[-1]
    alternatives = {f"skip step {i + 1}": body[:i] + body[i + 1 :] + [close] for i in range(len(body))}
    alternatives |= {
        f"swap steps {i + 1}, {i + 2}": [*body[:i], body[i + 1], body[i], *body[i + 2 :], close]
        for i in range(len(body) - 1)
    }
    if body:
        alternatives["close early"] = [*body[:-1], close]
    after_triage = 1 if body and body[0].kind == "classify_issue" else 0
    extra = ask("invoice_number", question="Could you also share the invoice number, please?")
    alternatives["one extra question"] = [*body[:after_triage], extra, *body[after_triage:], close]
    asked = next((i for i, a in enumerate(body) if a.kind == "ask_for_more_info"), None)
    answered = next((i for i, a in enumerate(body) if a.kind == "respond_with_solution"), None)
    if asked is not None and answered is not None and answered > asked:
        alternatives["answer first"] = [
            *body[:asked],
            body[answered],
            *body[asked:answered],
            *body[answered + 1 :],
            close,
        ]
    return alternatives


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_the_experts_plan_is_best_by_both_the_return_and_the_grade(task_id):
    """Item 3 of the fidelity issue: no reasonable alternative earns more return or a better
    grade than the expert's plan, and one the grade marks down earns less return too (a plan
    the grade calls as good may lose only step-reward shaping, such as a personal touch)."""
    for seed in range(40):
        plan = expert_plan(task_id, "validation", seed)
        best = _return_and_grade(task_id, seed, plan)
        for name, actions in _reasonable_alternatives(plan).items():
            got = _return_and_grade(task_id, seed, actions)
            where = f"{task_id} seed {seed}, {name}: return, grade {got} vs the expert's {best}"
            assert got[0] <= best[0] + 1e-9 and got[1] <= best[1] + 1e-9, where
            if got[1] < best[1] - 1e-9:
                assert got[0] < best[0] - 1e-9, where


# ---- findings of the sixth blind audit, and the exploits' classes ----


def test_a_fixed_triage_gets_no_help_from_the_suggestions():
    """Knowledge-base suggestions appear only once the ticket is classified, and only from the
    category set: what the help desk shows never triages a ticket for the agent."""
    for task_id in TASK_IDS:
        for seed in range(60):
            scenario, state = new_episode(task_id, "test", seed)
            if not state.category:
                assert observe(scenario, state).kb_matches == ()
            wrong = next(c for c in CATEGORIES if c not in {i.category for i in scenario.intents})
            step(scenario, state, classify(wrong))
            assert all(
                a not in {i.article_id for i in scenario.intents} for a, _, _ in observe(scenario, state).kb_matches
            )


def test_the_triage_gate_needs_the_issue_type_in_every_task():
    seed = find_seed(lambda s: len(s.intents) == 1 and not s.expected.escalate)
    plan = expert_plan(HARD, "train", seed)
    same_category = next(
        i.issue_id for i in ISSUE_TYPES if i.category == plan[0].category and i.issue_id != plan[0].issue_type
    )
    plan[0] = plan[0]._replace(issue_type=same_category)
    scenario, state, _ = play(HARD, seed, plan)
    assert "triage: wrong issue type" in grade_state(scenario, state).failed_gates


def test_the_triage_task_passes_only_with_the_priority_it_asks_for():
    """The triage task asks for category, issue type and priority: a triage right in the first
    two but with a wrong priority scored 0.80 and passed, so a constant guess passed one ticket
    in every issue type's share. Its triage gate now needs the priority, and says so."""
    task = "issue_classification"
    scenario, _ = new_episode(task, "train", 3)
    exp = scenario.expected
    wrong = next(p for p in ("low", "medium", "high", "urgent") if p != exp.priority)
    for priority, passed in ((exp.priority, True), (wrong, False)):
        _, state, _ = play(task, 3, [classify(exp.category, priority, exp.issue_type), resolve()])
        grade = grade_state(scenario, state)
        assert grade.passed is passed
        assert ("triage: wrong priority" in grade.failed_gates) is not passed
    assert (
        "right category, issue type and priority"
        in render_prompt(observe(*new_episode(task, "train", 3)))[0]["content"]
    )


def test_a_right_answer_in_its_own_words_is_not_stuffing():
    """From the audit: a full answer on a refund's status that also says "issue a refund" and
    "looked up" (other articles' words) solves the ticket and is not marked stuffed."""
    text = (
        "Thank you for the order number. I have looked up when the return for order ORD-740990 was processed. "
        "Once we issue a refund, your bank typically takes 5-10 business days to process it and show it on "
        "your statement. I will share the refund reference number for this order with you."
    )
    judged = verdict(text, (("refund_status", "KB-REF-02"),), "KB-REF-02")
    assert judged.solves == ("refund_status",) and not judged.stuffed and judged.wrong_solutions == 0
    stuffed = verdict(KeywordStufferPolicy.ALL_PHRASES, (("refund_status", "KB-REF-02"),), "")
    assert stuffed.stuffed and stuffed.solves == ()


def test_a_long_answer_is_not_charged_for_words_that_only_meet_across_its_sentences():
    """From blind audit round 11: a refund-status answer with a safe first step for a deletion that
    must be escalated gathers, across its sentences, most words of other articles' steps; it solves
    both issues and is not stuffed. Other articles' steps said one to a sentence still are."""
    text = (
        "Thanks for the details, and no need to apologise! I've looked up order ORD-410578: your blender "
        "return has been processed, so the refund is on its way back to your original payment method. Banks "
        "usually take 5-10 business days to show a refund on your statement after we process it. I'll share "
        "your refund reference number with you so you can quote it to your bank if it takes longer than that. "
        "Regarding deleting your account and data: I'm passing that to our accounts team, who handle deletion "
        "requests, and I'll confirm in my next message. If you'd like a copy of your data, it's a good idea to "
        "export it before the deletion goes through."
    )
    intents = (("refund_status", "KB-REF-02"), ("data_deletion", "KB-ACC-05"))
    judged = verdict(text, intents, "KB-REF-02")
    assert judged.solves == ("refund_status", "data_deletion") and not judged.stuffed
    every_step = " ".join(s for issue in ISSUE_TYPES for s in ARTICLES_BY_ID[issue.article_id].steps)
    assert verdict(every_step, intents, "KB-REF-02").stuffed


def test_escalating_before_the_facts_is_charged_where_the_step_reward_says():
    """The policy says to gather an article's facts before answering or escalating; closing an
    escalation that skipped them is 'half done' in the step reward as in the grade's gate."""
    assert any("before answering or escalating" in rule for rule in generate(HARD, "train", 0).policy_text)
    seed = find_seed(lambda s: len(s.intents) == 1 and s.expected.escalate and s.expected.facts)
    plan = [a for a in expert_plan(HARD, "train", seed) if a.kind != "ask_for_more_info"]
    scenario, state, results = play(HARD, seed, plan)
    escalated = next(r for r, a in zip(results, plan, strict=True) if a.kind == "escalate_to_human")
    assert "escalated before gathering" in escalated.observation.last_action_feedback
    closed = results[-1]
    assert "resolve_partial" in dict(closed.breakdown) and "never gathered" in closed.observation.last_action_feedback
    assert any(g.startswith("facts_first") for g in grade_state(scenario, state).failed_gates)


def test_closing_a_triage_ticket_is_not_a_message_to_the_customer():
    """The triage hands the ticket to a colleague: the customer is told nothing, so it says nothing."""
    plan = expert_plan("issue_classification", "train", 1)
    _, state, results = play("issue_classification", 1, plan)
    assert state.history[-1][0] == "system" and results[-1].terminated


def test_a_wrong_step_is_charged_once_in_action_selection():
    """A step no expert would take costs step quality; efficiency counts expert-grade steps only."""
    seed = find_seed(lambda s: not s.expected.escalate, task_id="action_selection")
    plan = expert_plan("action_selection", "train", seed)
    needless = next(f for f in REQUESTABLE_FIELDS if f not in generate("action_selection", "train", seed).facts_by_name)
    detour = [plan[0], ask(needless, question="Could you share that too, please?"), *plan[1:]]
    grades = [grade_state(*play("action_selection", seed, p)[:2]) for p in (plan, detour)]
    parts = [{c.name: c for c in g.components} for g in grades]
    assert parts[1]["step_quality"].score < 1.0 and "(not: step 2)" in parts[1]["step_quality"].detail
    assert parts[1]["efficiency"].score == parts[0]["efficiency"].score == 1.0


def test_a_credited_step_below_the_expert_is_taken_out_of_efficiency_once():
    """From blind audit round 33: "$-1 counted of $1 spent". An open issue's guide sent before its
    facts are in is credited by its step reward (free in efficiency) but is a step no expert takes
    there (step quality's): efficiency took it out twice, its dollar and its step. Counted money
    is never negative nor more than was spent, and a step taken out is never also called free."""
    task = "action_selection"
    money = re.compile(r"\$(-?\d+) counted of \$(\d+) spent")
    seen = 0
    for split in ("validation", "train"):
        for seed in range(80):
            scenario, state = new_episode(task, split, seed)
            if not state.category:
                step(scenario, state, expert.expert_action(scenario, state, task))
            if not missing_facts(scenario, state):
                continue
            guide = Action("suggest_knowledge_base", article_id=scenario.intents[0].article_id)
            assert not expert.is_acceptable(scenario, state, task, guide)
            assert "kb_correct" in dict(step(scenario, state, guide).breakdown)
            while not state.done:
                step(scenario, state, expert.expert_action(scenario, state, task))
            detail = next(c.detail for c in grade_state(scenario, state).components if c.name == "efficiency")
            counted, spent = map(int, money.search(detail).groups())
            assert 0 <= counted <= spent and "accepted offer or helpful extra" not in detail, detail
            seen += 1
    assert seen >= 10


def test_the_courtesy_the_policy_names_is_what_earns_the_politeness_reward():
    """From blind audit round 33: warm answers without please, thanks or sorry ("That sounds
    really frustrating", "I hear you") earned no politeness, and the policy said only "Be polite".
    The policy names the courtesy that counts, each phrase it names is judged polite, and an
    answer courteous in other words earns the reward."""
    from supportenv.text import is_polite

    rule = next(line for line in generate(HARD, "validation", 0).policy_text if line.startswith("Be polite"))
    named = [*re.findall(r'"([^"]+)"', rule), "thanks", "please"]
    assert len(named) >= 6 and "thanks" in rule and "apology" in rule, rule
    for phrase in named:
        assert is_polite(f"{phrase[0].upper()}{phrase[1:]}, the label is in the returns portal."), phrase
    assert not is_polite("The label is in the returns portal.")
    seed = find_seed(lambda s: len(s.intents) == 1 and not s.expected.escalate, split="validation")
    for warm in ("That sounds really frustrating.", "I hear you.", "Completely understand.", "I'm here to help."):
        scenario, state = new_episode(HARD, "validation", seed)
        while (action := expert.expert_action(scenario, state, HARD)).kind != "respond_with_solution":
            step(scenario, state, action)
        steps = "; ".join(ARTICLES_BY_ID[action.article_id].steps)
        result = step(scenario, state, respond(f"{warm} {steps}.", action.article_id))
        assert "politeness" in dict(result.breakdown), (warm, result.breakdown)


def test_manners_pay_for_the_share_of_the_case_handled():
    """Handling one issue of two earns half the credit for rules kept, tone, mood and speed."""
    seed = find_seed(lambda s: len(s.intents) == 2 and not s.expected.escalate)
    plan = expert_plan(HARD, "train", seed)
    answers = [i for i, a in enumerate(plan) if a.kind == "respond_with_solution"]
    half = [a for i, a in enumerate(plan) if i != answers[-1]]
    scenario, state, _ = play(HARD, seed, half)
    parts = {c.name: c for c in grade_state(scenario, state).components}
    for name in ("policy_compliance", "response_quality", "efficiency", "information_gathering"):
        assert parts[name].score <= 0.5 and "share of the case handled" in parts[name].detail, parts[name]


def test_every_field_asked_in_vain_is_charged():
    seed = find_seed(lambda s: len(s.intents) == 1 and not s.expected.escalate and s.expected.facts)
    plan = expert_plan(HARD, "train", seed)
    ask_all = ask(*REQUESTABLE_FIELDS, question="Could you share all of these, please?")
    scenario, state, _ = play(HARD, seed, [plan[0], ask_all, *plan[2:]])
    gathering = next(c for c in grade_state(scenario, state).components if c.name == "information_gathering")
    in_vain = len(REQUESTABLE_FIELDS) - len(scenario.expected.facts)
    assert gathering.score <= max(0.0, 1.0 - 0.1 * in_vain) + 1e-9
    assert "asked that this case does not need" in gathering.detail


def test_an_account_email_gathered_in_time_counts_as_gathered():
    """From audits 7-10: the articles list the account email as a need and the step reward pays for
    it, so information gathering counts it when it came in time; only a missing or late one is left
    to policy compliance (charged once)."""
    seed = find_seed(
        lambda s: (
            len(s.intents) == 1
            and s.expected.identity_required
            and not s.expected.escalate
            and IDENTITY_FACT in s.expected.facts
            and len(s.expected.facts) > 1
        )
    )
    scenario, state, _ = play(HARD, seed, expert_plan(HARD, "train", seed))
    gathering = next(c for c in grade_state(scenario, state).components if c.name == "information_gathering")
    n = len(scenario.expected.facts)
    assert gathering.score == 1.0 and gathering.detail.startswith(f"{n}/{n} needed facts"), gathering.detail


# ---- findings of the eleventh blind audit, and the exploits' classes ----


def _with_issue_type(plan: list[Action], issue_type: str) -> list[Action]:
    return [plan[0]._replace(issue_type=issue_type), *plan[1:]]


@pytest.mark.parametrize("task_id", ["action_selection", HARD])
def test_no_grade_is_full_marks_with_a_wrong_triage(task_id):
    """A ticket filed under the wrong issue type fails the triage gate, and its score says so in
    one component: action_selection's step quality (the classify step is below the expert's),
    the hard task's resolution (half credit, the detail naming the type)."""
    for seed in range(12):
        plan = expert_plan(task_id, "validation", seed)
        exp = generate(task_id, "validation", seed).expected
        other = next(i.issue_id for i in ISSUE_TYPES if i.category == exp.category and i.issue_id != exp.issue_type)
        scenario, state, _ = play(task_id, seed, _with_issue_type(plan, other), split="validation")
        grade = grade_state(scenario, state)
        assert "triage: wrong issue type" in grade.failed_gates
        below = [c for c in grade.components if c.score < 1.0]
        assert grade.score < 1.0 and below, (seed, grade)
        if task_id == HARD:
            resolution = next(c for c in grade.components if c.name == "resolution")
            assert f"triaged as {other}, not {exp.issue_type}" in resolution.detail


def test_a_long_answer_in_a_list_is_not_taken_for_stuffing():
    """From blind audit round 12: a detailed answer in numbered sections with bullet lines, whose
    small words ("look ... up", "signing in ... locked out") meet other articles' steps, solves
    both issues it covers and is not stuffed."""
    text = (
        "Thank you, Maria, that confirms you're the account holder for maria.89@mail.test, so I can help "
        "with both requests right away, and I'm sorry the earlier experience didn't go the way it should "
        "have.\n\n1) Changing the email on your account\n- Sign in and open Account settings (click your "
        "profile picture in the top-right corner, then Account settings).\n- Find the Login email field, "
        "replace maria.89@mail.test with the address you'd like to use, and save.\n- We'll send a "
        "confirmation link to the new address. The change only takes effect once you click that link, so "
        "please check your spam or promotions folder if it doesn't arrive within a few minutes.\n- Until "
        "you confirm, you can keep signing in with your current address, so there's no risk of getting "
        "locked out in the meantime.\n\n2) Cancelling your subscription\n- I've cancelled the subscription "
        "for you from the plan settings, so you don't need to do anything further.\n- No further renewals "
        "will be billed. You'll keep access to anything you've already paid for until the end of the "
        "current period.\n- You'll receive a cancellation confirmation at your account email for your "
        "records.\n\nIf anything about either of these doesn't look right when you check, just reply here "
        "and I'll pick it straight up. Thanks for your patience."
    )
    judged = verdict(text, (("email_change", "KB-ACC-02"), ("subscription_cancel", "KB-BIL-04")), "KB-ACC-02")
    assert judged.solves == ("email_change", "subscription_cancel") and not judged.stuffed
    assert judged.wrong_solutions == 0


def test_the_suggestions_follow_the_triage_not_the_ticket():
    """Once classified, the help desk suggests the article of the issue type set first, then the
    category's others by keyword score: a fixed triage that trusts the top suggestion is handed
    its own triage's article, never the ticket's."""
    for seed in range(30):
        scenario, _ = new_episode(HARD, "validation", seed)
        for issue in ISSUE_TYPES[:6]:
            probe = start_state(scenario)
            step(scenario, probe, classify(issue.category, "medium", issue.issue_id))
            matches = observe(scenario, probe).kb_matches
            assert matches[0][0] == issue.article_id
            rest = [score for _, _, score in matches[1:]]
            assert rest == sorted(rest, reverse=True)


def test_routing_before_the_triage_is_not_a_hidden_rule():
    """The policy asks for the triage before an answer, not before routing: a right routing and
    escalation before classifying are expert-grade, as their step rewards say."""
    # A ticket whose expert routes right after the triage (the facts in hand already).
    seed = next(
        s for s in range(5000) if expert_plan("action_selection", "validation", s)[1].kind == "assign_department"
    )
    plan = expert_plan("action_selection", "validation", seed)
    swapped = [plan[1], plan[0], *plan[2:]]
    scenario, state, _ = play("action_selection", seed, swapped, split="validation")
    quality = next(c for c in grade_state(scenario, state).components if c.name == "step_quality")
    assert quality.score == 1.0, quality


def _extras(scenario, plan: list[Action]) -> dict[str, Action]:
    answered = next((a for a in plan if a.kind == "respond_with_solution"), None)
    extras = {"callback": Action("request_callback", text="A specialist will call you to follow up.")}
    if answered is not None:
        extras["article already answered"] = Action("suggest_knowledge_base", article_id=answered.article_id)
    return extras


@pytest.mark.parametrize("task_id", ["action_selection", HARD])
def test_an_optional_extra_is_paid_by_the_step_reward_only_when_the_grade_agrees(task_id):
    """From blind audit round 12: a callback or an article sent before closing changes the return
    and the grade the same way. Paid (the specialist's callback for a premium case), it costs
    nothing in the grade; not needed (no specialist calls, an issue already answered), it earns
    less return and a lower grade; a dollar over an expert who spent nothing costs a little."""
    checked = 0
    for seed in range(40):
        plan = expert_plan(task_id, "validation", seed)
        scenario = generate(task_id, "validation", seed)
        best = _return_and_grade(task_id, seed, plan)
        for name, extra in _extras(scenario, plan).items():
            if name == "callback" and not scenario.expected.callback_allowed:
                continue
            got = _return_and_grade(task_id, seed, [*plan[:-1], extra, plan[-1]])
            where = f"{task_id} seed {seed}, {name}: return, grade {got} vs the expert's {best}"
            if got[1] < best[1] - 1e-9:
                assert got[0] < best[0] - 1e-9, where
                assert got[1] >= best[1] - 0.1, where  # one extra step or $10, not a fifth of the grade
            else:
                assert name == "callback" and scenario.expected.escalate, where
            checked += 1
    assert checked >= 40


# ---- findings of the thirteenth blind audit ----


def test_a_right_answer_citing_an_unrelated_article_is_charged_for_the_citation():
    """From blind audit round 13: an answer that says the fix but cites an article of no issue on
    the ticket (a gift-card guide for a declined card) is charged once for the citation: the step
    reward and the feedback name it, response quality counts it, and no expert cites that way."""
    seed = find_seed(lambda s: [i.issue_id for i in s.intents] == ["payment_failure"])
    plan = expert_plan(HARD, "train", seed)
    answer = next(i for i, a in enumerate(plan) if a.kind == "respond_with_solution")
    plan[answer] = plan[answer]._replace(article_id="KB-GEN-04")
    scenario, state, results = play(HARD, seed, plan)
    parts = dict(results[answer].breakdown)
    assert "respond_after_classify" in parts and parts["respond_wrong_citation"] < 0
    assert "KB-GEN-04 is not the article" in results[answer].observation.last_action_feedback
    grade = grade_state(scenario, state)
    quality = next(c for c in grade.components if c.name == "response_quality")
    assert quality.score < 1.0 and "citations" in quality.detail


def test_a_rude_escalation_reason_gets_the_customer_s_answer_to_the_insult():
    """From blind audit round 13: the customer reads an escalation reason, so a rude one is
    answered as rudeness (not with thanks), and policy compliance says which component charges it."""
    seed = find_seed(lambda s: s.expected.escalate)
    plan = expert_plan(HARD, "train", seed)
    at = next(i for i, a in enumerate(plan) if a.kind == "escalate_to_human")
    plan[at] = plan[at]._replace(text="Fine, a specialist will have to clean up your mistake, you idiot.")
    scenario, state, results = play(HARD, seed, plan)
    assert "rude_language" in dict(results[at].breakdown)
    assert "thank" not in results[at].observation.customer_message.lower()
    grade = grade_state(scenario, state)
    compliance = next(c for c in grade.components if c.name == "policy_compliance")
    assert "rude language is charged by response quality" in compliance.detail
    assert any(g.startswith("rules:") for g in grade.failed_gates)


def test_a_question_for_something_new_is_not_a_question_for_the_fact_on_record():
    """From blind audit round 13: "which new email address would you like?" does not ask again
    for the account email the customer gave, so it is not charged as a repeat."""
    from supportenv.customer import fields_in_question

    assert fields_in_question("Which new email address would you like to switch to?") == ()
    assert fields_in_question("and the new login email?") == ()
    assert fields_in_question("What is the email address on your account?") == ("account_email",)
    assert fields_in_question("What is the new address for the delivery?") == ("new_address",)


# ---- findings of the fourteenth blind audit ----


def test_the_guide_to_an_issue_to_escalate_is_a_guide_to_an_open_issue():
    """From blind audit round 14: before the escalation, the article of an issue policy says to
    escalate (its safe first steps) is paid as a guide to an open issue, not called answered."""
    seed = find_seed(lambda s: s.expected.escalate and s.expected.solvable)
    scenario, state = new_episode(HARD, "train", seed)
    escalating = ISSUE_TYPES_BY_ID[scenario.expected.escalate_intents[0]]
    step(
        scenario, state, classify(scenario.expected.category, scenario.expected.priority, scenario.expected.issue_type)
    )
    result = step(scenario, state, Action("suggest_knowledge_base", article_id=escalating.article_id))
    assert "kb_correct" in dict(result.breakdown), result.breakdown
    assert "already answered" not in result.observation.last_action_feedback


def test_an_escalation_names_only_the_facts_of_the_issues_escalated():
    """From blind audit round 14: escalating one issue before asking for another issue's facts
    is not 'escalated before gathering' those facts (the policy asks for the escalated issue's)."""
    seed = find_seed(
        lambda s: (
            s.expected.escalate
            and any(f not in ISSUE_TYPES_BY_ID[s.expected.escalate_intents[0]].required_facts for f in s.expected.facts)
        )
    )
    scenario, state = new_episode(HARD, "train", seed)
    exp = scenario.expected
    own = [f for f in ISSUE_TYPES_BY_ID[exp.escalate_intents[0]].required_facts if f not in state.revealed]
    step(scenario, state, classify(exp.category, exp.priority, exp.issue_type))
    if own:
        step(scenario, state, ask(*own))
    step(scenario, state, Action("assign_department", department=exp.department))
    result = step(scenario, state, Action("escalate_to_human", text="I'm sorry; a specialist will take this over."))
    others = [f for f in missing_facts(scenario, state) if f not in own]
    assert others and "escalated before gathering" not in result.observation.last_action_feedback


# ---- findings of the twenty-fifth blind audit ----


def test_the_priority_is_paid_as_the_grade_judges_it():
    """The grade gives no credit for a priority without the right category; nor does the step."""
    seed = find_seed(lambda s: True, "issue_classification")
    exp = generate("issue_classification", "train", seed).expected
    wrong = next(c for c in CATEGORIES if c != exp.category)
    _, _, (right_step,) = play("issue_classification", seed, [classify(exp.category, exp.priority, exp.issue_type)])
    _, _, (wrong_step,) = play("issue_classification", seed, [classify(wrong, exp.priority)])
    assert "priority_correct" in dict(right_step.breakdown)
    assert "priority_correct" not in dict(wrong_step.breakdown), wrong_step.breakdown


def test_an_amount_named_however_written_is_personal():
    """ "$90" names the customer's amount of 90.00, as "$1,400" does 1400.00."""
    intents = (("refund_request", "KB-REF-01"),)
    for text, amount in (("Your $90 is on its way back.", "90.00"), ("I've sent back the $1,400.", "1400.00")):
        assert judge(text, intents, "KB-REF-01", ["ORD-123456", amount]).personalised, text
    assert not judge("Your refund is on its way back.", intents, "KB-REF-01", ["ORD-123456", "90.00"]).personalised


def test_a_question_naming_no_fact_is_called_one_in_the_grade():
    """From audit round 27: a question that named no field was called "1 field asked in vain"."""
    seed = find_seed(lambda s: len(s.intents) == 1 and not s.expected.escalate and s.expected.facts)
    plan = expert_plan(HARD, "train", seed)
    vague = ask(question="Could you tell me a bit more about what happened?")
    scenario, state, _ = play(HARD, seed, [plan[0], vague, *plan[1:]])
    gathering = next(c for c in grade_state(scenario, state).components if c.name == "information_gathering")
    assert "1 question that named no fact" in gathering.detail and "field" not in gathering.detail, gathering.detail


def test_escalation_and_routing_come_in_either_order_as_the_policy_says():
    """From audit round 34: the policy said "escalate ... after routing", but escalating first was
    graded the same. The policy now says either may come first, and the grade agrees."""
    policy = policy_rules(POLICY_VARIANTS["standard"])
    always = next(line for line in policy if line.startswith("Always escalate"))
    assert "either may come first" in always and not any("after routing" in line for line in policy)

    def routes_then_escalates(plan: list[Action]) -> bool:
        kinds = [a.kind for a in plan]
        return kinds.count("escalate_to_human") == 1 and ("assign_department", "escalate_to_human") in pairwise(kinds)

    seed = next(s for s in range(5000) if routes_then_escalates(expert_plan(HARD, "validation", s)))
    plan = expert_plan(HARD, "validation", seed)
    i = next(k for k, a in enumerate(plan) if a.kind == "assign_department")
    swapped = [*plan[:i], plan[i + 1], plan[i], *plan[i + 2 :]]
    scenario, state, _ = play(HARD, seed, swapped, split="validation")
    grade = grade_state(scenario, state)
    assert grade.score == 1.0 and grade.passed, grade


def test_a_wrong_priority_is_no_expert_grade_triage_in_any_task():
    """From audit round 36: in action_selection and the hard task a triage with a priority the
    policy does not give was graded "expert-grade" and the score stayed 1.000."""
    for task_id in ("action_selection", HARD):
        seed = next(s for s in range(200) if expert_plan(task_id, "validation", s)[0].kind == "classify_issue")
        plan = expert_plan(task_id, "validation", seed)
        wrong = next(p for p in ("low", "urgent") if p != plan[0].priority)
        triage = classify(plan[0].category, wrong, plan[0].issue_type)
        scenario, state, _ = play(task_id, seed, [triage, *plan[1:]], "validation")
        name = "step_quality" if task_id == "action_selection" else "resolution"
        charged = next(c for c in grade_state(scenario, state).components if c.name == name)
        assert charged.score < 1.0 and ("step 1" in charged.detail or "priority" in charged.detail), charged


def test_the_prompt_names_every_component_that_pays_by_the_share_handled():
    """From blind audit rounds 33 to 40: an issue left undone halved components whose detail said
    they were met ("no rules broken (x0.50 ...)"), read as one mistake charged many times. The
    prompt states which components credit only the share of the case handled, and those are
    exactly the ones whose detail says so when half of it is done."""
    from supportenv.episode import unsolved
    from supportenv.graders import PAID_BY_SHARE, share_rule
    from supportenv.llm import system_prompt

    for task_id in PAID_BY_SHARE:
        seen = 0
        for seed in range(60):
            scenario, state = new_episode(task_id, "validation", seed)
            if len(scenario.intents) < 2 or scenario.expected.escalate:
                continue
            while not state.done and not state.solved_intents:
                step(scenario, state, expert.expert_action(scenario, state, task_id))
            if state.done or not unsolved(scenario, state):
                continue
            step(scenario, state, Action("mark_resolved", text="Done."))
            grade = grade_state(scenario, state)
            scaled = {c.name for c in grade.components if "credited for the share of the case handled" in c.detail}
            assert scaled == set(PAID_BY_SHARE[task_id]), grade.components
            seen += 1
        assert seen >= 5, task_id
        scenario, state = new_episode(task_id, "validation", 0)
        assert share_rule(task_id) in system_prompt(observe(scenario, state))
    assert not share_rule("issue_classification")


def test_a_question_in_vain_is_charged_once_by_information_gathering():
    """From blind audit round 41: a tracking number asked for a damaged item cost information
    gathering and efficiency both. The question's fields are information gathering's to charge;
    efficiency does not count its step (but counts a question that gathered a needed fact)."""
    task = "end_to_end_resolution"
    seen = 0
    for seed in range(30):
        scenario, state = new_episode(task, "validation", seed)
        if "invoice_number" in scenario.expected.facts:
            continue
        step(scenario, state, expert.expert_action(scenario, state, task))
        step(scenario, state, ask("invoice_number", question="Could you share your invoice number, please?"))
        while not state.done:
            step(scenario, state, expert.expert_action(scenario, state, task))
        grade = {c.name: c for c in grade_state(scenario, state).components}
        assert grade["information_gathering"].score < 1.0
        assert grade["efficiency"].score == 1.0, grade["efficiency"].detail
        assert "charged by information gathering" in grade["efficiency"].detail
        seen += 1
    assert seen >= 20


def test_a_component_says_an_identity_charge_only_where_policy_compliance_makes_it():
    """make run's first episode (the rule baseline on end_to_end_resolution test seed 0): information
    gathering said the missing account email "is charged by policy compliance (identity check)"
    while policy compliance said "no rules broken" (newcomer walk-through, 2026-12-04): the issue
    that needed the email was never answered, so no answer went out without it."""
    from baseline_agent.policies import make_policy

    scenario, state = new_episode("end_to_end_resolution", "test", 0)
    policy = make_policy("rule")
    policy.begin("end_to_end_resolution", "test", 0)
    while not state.done:
        step(scenario, state, policy.act(observe(scenario, state)))
    details = {c.name: c.detail for c in grade_state(scenario, state).components}
    assert "verify_identity" not in state.violations
    assert "charged by policy compliance" not in details["information_gathering"], details
    assert "not answered" in details["information_gathering"], details
