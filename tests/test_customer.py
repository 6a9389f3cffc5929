"""The customer simulator and the policy rules, through the episode transition."""

from __future__ import annotations

from supportenv.actions import ask, assign, callback, classify, escalate, respond
from supportenv.catalog import REQUESTABLE_FIELDS
from supportenv.episode import observe, step
from supportenv.expert import solution_message
from supportenv.replay import new_episode
from supportenv.world import generate

HARD = "end_to_end_resolution"


def seed_where(predicate, task=HARD, split="train"):
    return next(seed for seed in range(5_000) if predicate(generate(task, split, seed)))


def test_facts_stay_hidden_until_asked_for():
    seed = seed_where(lambda s: len(s.expected.facts) >= 2)
    scenario, state = new_episode(HARD, "train", seed)
    first, second = scenario.expected.facts[:2]
    obs = step(scenario, state, classify(scenario.expected.category)).observation
    text = " ".join(t for _, t, _ in obs.history)
    assert scenario.facts_by_name.get(first) not in text and obs.revealed_facts == ()
    obs = step(scenario, state, ask(first)).observation
    assert dict(obs.revealed_facts) == {first: scenario.facts_by_name.get(first)}
    assert (
        scenario.facts_by_name.get(first) in obs.customer_message
        and scenario.facts_by_name.get(second) not in obs.customer_message
    )


def test_free_text_questions_are_understood():
    seed = seed_where(lambda s: "order_id" in s.expected.facts)
    scenario, state = new_episode(HARD, "train", seed)
    obs = step(scenario, state, ask(question="Could you tell me your order number?")).observation
    assert ("order_id", scenario.facts_by_name.get("order_id")) in obs.revealed_facts


def test_unknown_facts_get_i_dont_know_and_cost_patience():
    seed = seed_where(lambda s: any(s.facts_by_name.get(f) is None for f in REQUESTABLE_FIELDS))
    scenario, state = new_episode(HARD, "train", seed)
    unknown = next(f for f in REQUESTABLE_FIELDS if scenario.facts_by_name.get(f) is None)
    patience = state.patience
    result = step(scenario, state, ask(unknown))
    assert result.observation.revealed_facts == ()
    assert any(
        w in result.observation.customer_message.lower() for w in ("don't", "not sure", "no idea", "can't", "haven't")
    )
    assert state.patience < patience and dict(result.breakdown)["ask_irrelevant"] < 0


def test_repeated_questions_anger_and_exhaust_the_customer():
    seed = seed_where(lambda s: "order_id" in s.expected.facts)
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, ask("order_id"))
    before = state.sentiment
    result = step(scenario, state, ask("order_id"))
    assert state.sentiment < before and "ask_repeat" in dict(result.breakdown)
    while not result.truncated:
        result = step(scenario, state, ask("order_id"))
    assert state.customer_left and not result.terminated and "customer_left" in dict(result.breakdown)


def test_sentiment_moves_with_the_agent():
    seed = seed_where(lambda s: not s.expected.escalate and s.persona != "angry")
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, classify(scenario.expected.category))
    for fact in scenario.expected.facts:
        step(scenario, state, ask(fact))
    calm = state.sentiment
    step(scenario, state, respond(solution_message(scenario, state, list(scenario.expected.solvable))))
    assert state.sentiment > calm, "a right answer calms"
    scenario, state = new_episode(HARD, "train", seed)
    before = state.sentiment
    step(scenario, state, respond("Calm down, it's your own fault."))
    assert state.sentiment < before, "rudeness angers"
    scenario, state = new_episode(HARD, "train", seed)
    before = state.sentiment
    result = step(scenario, state, assign(scenario.expected.department))
    assert state.sentiment < before and "department_needless" in dict(result.breakdown), "needless transfers anger"


def test_identity_must_be_verified_before_refunds():
    seed = seed_where(
        lambda s: s.issue.issue_id == "refund_request" and not s.expected.escalate and len(s.intents) == 1
    )
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, classify("refund"))
    step(scenario, state, ask("order_id", "amount"))
    step(scenario, state, respond(solution_message(scenario, state, ["refund_request"])))
    assert "verify_identity" in state.violations


def test_callbacks_only_for_premium_and_enterprise():
    for tier, ok in (("regular", False), ("premium", True)):
        seed = seed_where(lambda s, t=tier: s.tier == t)
        scenario, state = new_episode(HARD, "train", seed)
        result = step(scenario, state, callback("call me"))
        assert ("callback_ok" in dict(result.breakdown)) == ok
        assert ("callback_not_allowed" in state.violations) == (not ok)


def test_policy_is_stated_to_the_agent():
    scenario, state = new_episode(HARD, "test", seed_where(lambda s: s.policy.name == "strict_caps", split="test"))
    policy = " ".join(observe(scenario, state).policy)
    assert "regular $50" in policy and "identity" in policy and "Callbacks" in policy


def test_escalation_required_by_policy_is_rewarded():
    seed = seed_where(lambda s: s.issue.escalation == "always")
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, classify(scenario.expected.category))
    result = step(scenario, state, escalate("security incident"))
    assert dict(result.breakdown)["escalate_required"] == 0.5
