"""The pure simulation library: interface, transitions, reward table, graders."""

from __future__ import annotations

import math

import pytest

from supportenv import SupportEnv, expert
from supportenv.actions import Action, ask, assign, classify, escalate, parse, resolve, respond
from supportenv.catalog import ARTICLE_CATEGORY
from supportenv.episode import EpisodeState, observe, step
from supportenv.errors import EpisodeFinishedError, InvalidActionError, InvalidRequestError, UnknownTaskError
from supportenv.graders import grade_state, grade_trajectory
from supportenv.replay import new_episode
from supportenv.rewards import REWARD_TABLE
from supportenv.tasks import TASK_IDS, TASKS
from supportenv.world import generate


def find_seed(task_id: str, predicate, split: str = "train") -> int:
    for seed in range(20_000):
        if predicate(generate(task_id, split, seed)):
            return seed
    raise AssertionError("no seed matches")


def expert_run(task_id: str, split: str, seed: int) -> list[Action]:
    scenario, state = new_episode(task_id, split, seed)
    actions = []
    while not state.done:
        action = expert.expert_action(scenario, state, task_id)
        actions.append(action)
        step(scenario, state, action)
    return actions


def test_first_design_interface_reset_step_state():
    seed = find_seed("end_to_end_resolution", lambda scenario: scenario.hidden_facts)
    env = SupportEnv(task_id="end_to_end_resolution", split="train", seed=seed)
    obs = env.reset()
    assert obs.customer_message and obs.ticket_id and obs.step == 0
    assert obs.steps_left == obs.max_steps == 12
    obs, reward, done, info = env.step({"action_type": "classify_issue", "category": "billing", "priority": "high"})
    assert isinstance(reward, float) and not done
    assert set(info) >= {"terminated", "truncated", "reward_breakdown", "cumulative_reward"}
    assert math.isclose(sum(info["reward_breakdown"].values()), reward, abs_tol=1e-9)
    snapshot = env.state()
    assert snapshot["step"] == 1 and snapshot["scenario"]["hidden_facts"]
    obs, reward, done, info = env.step("mark_resolved")
    assert done and info["terminated"] and not info["truncated"]
    with pytest.raises(EpisodeFinishedError):
        env.step("mark_resolved")


def test_observation_carries_both_designs_fields():
    obs = SupportEnv(seed=1).reset()
    for name in (
        "ticket_id",
        "customer_message",
        "history",
        "sentiment_label",
        "sentiment_score",
        "customer_tier",
        "customer_tenure_days",
        "customer_total_revenue",
        "priority",
        "kb_matches",
        "revealed_facts",
        "steps_left",
        "task_instructions",
        "policy",
        "cost_so_far",
    ):
        assert hasattr(obs, name), name
    assert obs.kb_matches == (), "no suggestion triages the ticket for the agent"
    assert obs.revealed_facts == ()  # hidden until asked
    scenario, state = new_episode("end_to_end_resolution", "train", 3)
    step(scenario, state, classify(scenario.expected.category))
    suggested = observe(scenario, state).kb_matches
    assert suggested and all(0 < s <= 1 for _, _, s in suggested)
    assert {ARTICLE_CATEGORY[a] for a, _, _ in suggested} == {scenario.expected.category}


def test_first_design_reward_table_exactly():
    table = {k: v for k, (v, _) in REWARD_TABLE.items()}
    assert table["classify_correct"] == 0.3 and table["classify_repeat"] == -0.1
    assert table["respond_after_classify"] == 0.5 and table["respond_before_classify"] == -0.2
    assert table["escalate_required"] == 0.5 and table["escalate_premium_bonus"] == 0.1
    assert table["escalate_unneeded"] == -0.3
    assert table["resolve_proper"] == 0.3 and -0.2 <= table["resolve_premature"] <= table["resolve_partial"] <= -0.1


def test_rewards_follow_the_table():
    task = "end_to_end_resolution"
    seed = find_seed(task, lambda s: not s.expected.escalate and s.tier == "regular" and len(s.intents) == 1)
    scenario, state = new_episode(task, "train", seed)
    exp = scenario.expected
    early = step(scenario, state, respond("Thank you, we will " + scenario.issue.solution_phrases[0]))
    assert dict(early.breakdown)["respond_before_classify"] == -0.2
    first = step(scenario, state, classify(exp.category))
    assert dict(first.breakdown) == {"classify_correct": 0.3}
    again = step(scenario, state, classify(exp.category))
    assert dict(again.breakdown)["classify_repeat"] == -0.1
    for fact in exp.facts:
        step(scenario, state, ask(fact))
    answer = step(scenario, state, respond("We will " + scenario.issue.solution_phrases[0] + " now."))
    assert dict(answer.breakdown)["respond_after_classify"] == 0.5
    unneeded = step(scenario, state, escalate("just in case"))
    assert dict(unneeded.breakdown)["escalate_unneeded"] == -0.3
    assert not unneeded.terminated, "escalating alone never ends the episode"
    done = step(scenario, state, resolve())
    assert dict(done.breakdown)["resolve_proper"] == 0.3 and done.terminated and not done.truncated


def test_required_escalation_rewarded_with_premium_bonus():
    task = "end_to_end_resolution"
    seed = find_seed(task, lambda s: s.expected.escalate and s.tier in ("premium", "enterprise"))
    scenario, state = new_episode(task, "train", seed)
    step(scenario, state, classify(scenario.expected.category))
    result = step(scenario, state, escalate("policy"))
    assert dict(result.breakdown) == {"escalate_required": 0.5, "escalate_premium_bonus": 0.1}
    assert not result.terminated


def test_premature_resolution_is_penalised():
    result = step(*new_episode("end_to_end_resolution", "train", 0), resolve())
    assert dict(result.breakdown) == {"resolve_premature": -0.2} and result.terminated


def test_truncated_when_step_budget_is_spent():
    scenario, state = new_episode("issue_classification", "train", 3)
    results = [step(scenario, state, classify("general")) for _ in range(4)]
    assert results[-1].truncated and not results[-1].terminated
    assert not any(r.truncated for r in results[:-1])


def test_hidden_fact_revealed_only_when_asked_and_patience_runs_out():
    task = "end_to_end_resolution"
    seed = find_seed(task, lambda s: "order_id" in s.expected.facts)
    scenario, state = new_episode(task, "train", seed)
    value = scenario.facts_by_name.get("order_id")
    assert value not in scenario.opening_message
    result = step(scenario, state, ask("order_id"))
    assert ("order_id", value) in result.observation.revealed_facts
    assert value in result.observation.customer_message
    while not state.done:
        result = step(scenario, state, ask("order_id"))  # asking again costs patience
    assert result.truncated and state.customer_left and not result.terminated
    assert "customer_left" in dict(result.breakdown)


def test_rude_language_penalised_and_angers_customer():
    scenario, state = new_episode("end_to_end_resolution", "train", 7)
    before = state.sentiment
    result = step(scenario, state, respond("Calm down, this is your own fault."))
    assert dict(result.breakdown)["rude_language"] == -0.3
    assert state.sentiment < before


def test_bad_input_raises_clear_errors():
    with pytest.raises(UnknownTaskError, match="unknown task"):
        new_episode("nope", "train", 0)
    with pytest.raises(InvalidRequestError, match="split"):
        new_episode("action_selection", "holdout", 0)
    with pytest.raises(InvalidRequestError, match="seed"):
        new_episode("action_selection", "train", -1)
    with pytest.raises(InvalidActionError, match="category"):
        parse("classify_issue")
    with pytest.raises(InvalidActionError, match="unknown action kind"):
        parse({"action_type": "dance"})
    with pytest.raises(InvalidActionError, match="unknown fields"):
        parse(Action("ask_for_more_info", fields=("shoe_size",)))
    assert parse({"action_type": "assign_department", "parameters": {"department": "billing"}}) == assign("billing")


def test_state_round_trips_through_plain_data():
    scenario, state = new_episode("end_to_end_resolution", "validation", 11)
    for action in expert_run("end_to_end_resolution", "validation", 11)[:3]:
        step(scenario, state, action)
    assert EpisodeState.from_dict(state.to_dict()) == state


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_oracle_full_marks_and_noop_nothing(task_id):
    for seed in range(40):
        oracle = grade_trajectory(task_id, "test", seed, expert_run(task_id, "test", seed))
        assert oracle.score >= 0.95 and oracle.passed
        noop = grade_trajectory(task_id, "test", seed, [resolve()])
        assert noop.score == 0.0 and not noop.passed
        for grade in (oracle, noop):
            assert 0.0 <= grade.score <= 1.0
            assert all(0.0 <= c.score <= 1.0 for c in grade.components)


def test_task_weights_and_components():
    assert [t.weight for t in TASKS] == [0.2, 0.3, 0.5]
    for task in TASKS:
        assert math.isclose(sum(w for _, w in task.components), 1.0)


def test_grade_is_a_pure_replay():
    actions = expert_run("action_selection", "train", 21)
    scenario, state = new_episode("action_selection", "train", 21)
    for action in actions:
        step(scenario, state, action)
    assert grade_state(scenario, state) == grade_trajectory("action_selection", "train", 21, actions)


def test_grader_rejects_impossible_trajectories():
    with pytest.raises(InvalidRequestError, match="at most"):
        grade_trajectory("issue_classification", "train", 0, [classify("billing")] * 5)
    # As stepping a finished episode is refused (EpisodeFinishedError), the action named from 0.
    with pytest.raises(EpisodeFinishedError, match=r"actions\[1\] comes after the episode ended"):
        grade_trajectory("issue_classification", "train", 0, [resolve(), resolve()])


def test_unparseable_output_is_a_penalised_step_not_an_error():
    from supportenv.actions import invalid

    scenario, state = new_episode("end_to_end_resolution", "train", 4)
    result = step(scenario, state, parse(invalid("{not json", "expected a JSON object")))
    assert dict(result.breakdown) == {"invalid_action": -0.1} and not result.terminated
    assert "expected a JSON object" in result.observation.last_action_feedback
    assert grade_trajectory("end_to_end_resolution", "train", 4, [invalid("x", "bad")]).steps == 1


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_each_observation_shows_the_reward_of_the_step_before_it(task_id):
    """Observation k carries step k's reward and its parts; the first carries none, even in
    action_selection, where the opening steps were a previous agent's and not rewarded to this one."""
    opening = 1 if task_id == "action_selection" else 0  # a colleague's question
    seed = find_seed(task_id, lambda s: not s.expected.escalate and s.prefix_steps >= opening)
    scenario, state = new_episode(task_id, "train", seed)
    first = observe(scenario, state)
    assert (first.last_reward, first.last_reward_breakdown) == (0.0, ())
    if task_id == "action_selection":
        assert len(first.history) > 1, "the opening was played"
    # A needless escalation first, so a penalty shows as well as the expert's rewards.
    actions = [escalate("just in case")]
    shown = []
    while not state.done:
        action = actions.pop() if actions else expert.expert_action(scenario, state, task_id)
        result = step(scenario, state, action)
        assert result.observation.last_reward == result.reward == state.rewards[-1]
        assert result.observation.last_reward_breakdown == result.breakdown
        assert result.observation == observe(scenario, state)
        shown.append(result.observation.last_reward)
    assert min(shown) < 0 < max(shown)
