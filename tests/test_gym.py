"""The Gymnasium adapters: registration, the env checker, seeding, hidden information stays
hidden, macro-actions can earn full marks, random play never raises, and a remote env service
gives exactly what the in-process library gives."""

from __future__ import annotations

import copy
import dataclasses
import math
import secrets
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

gymnasium = pytest.importorskip("gymnasium")
np = pytest.importorskip("numpy")

from gymnasium import spaces  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402

import supportenv.gym as sg  # noqa: E402
from baseline_agent.embedded import start_service  # noqa: E402
from supportenv.actions import Action  # noqa: E402
from supportenv.catalog import ARTICLE_NEEDS, ISSUE_TYPE_IDS, REQUESTABLE_FIELDS  # noqa: E402
from supportenv.episode import observe, step  # noqa: E402
from supportenv.gym import features  # noqa: E402
from supportenv.gym.features import FeatureEncoder, macro_action, macro_index  # noqa: E402
from supportenv.gym.text_env import render_observation  # noqa: E402
from supportenv.replay import new_episode  # noqa: E402
from supportenv.tasks import TASKS  # noqa: E402
from supportenv.world import generate  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ENV_IDS = (sg.TEXT_ENV_ID, sg.FEATURE_ENV_ID)
TASK_IDS = tuple(t.task_id for t in TASKS)


def _same(a, b) -> bool:
    return bool(np.array_equal(a, b)) if isinstance(a, np.ndarray) else a == b


def _find_seed(want, task_id="end_to_end_resolution", split="train", limit=500) -> int:
    return next(seed for seed in range(limit) if want(generate(task_id, split, seed)))


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_env_checker_passes(env_id):
    env = gymnasium.make(env_id, render_mode="ansi")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the checker may warn; it must not raise
            check_env(env.unwrapped)
    finally:
        env.close()


def test_spaces_and_macro_layout():
    text_env = gymnasium.make(sg.TEXT_ENV_ID).unwrapped
    assert isinstance(text_env.observation_space, spaces.Text)
    assert isinstance(text_env.action_space, spaces.Dict)
    assert set(text_env.action_space.spaces) == {
        "kind",
        "category",
        "priority",
        "issue_type",
        "fields",
        "article",
        "department",
        "text",
    }
    assert text_env.action_space["kind"].n == 8
    assert text_env.action_space["fields"].n == len(REQUESTABLE_FIELDS)

    env = gymnasium.make(sg.FEATURE_ENV_ID).unwrapped
    assert isinstance(env.observation_space, spaces.Box) and env.observation_space.dtype == np.float32
    # One classify and one answer per issue type, one ask per field, then the fixed ten (the
    # layout is the world's: a world with more issue types has more macro-actions).
    issues, fields = len(ISSUE_TYPE_IDS), len(REQUESTABLE_FIELDS)
    assert env.action_space.n == len(sg.MACRO_ACTIONS) == 2 * issues + fields + 10
    assert env.action_labels == sg.MACRO_ACTIONS
    assert sg.MACRO_ACTIONS[0] == f"classify:{ISSUE_TYPE_IDS[0]}"
    assert sg.MACRO_ACTIONS[issues] == f"ask:{REQUESTABLE_FIELDS[0]}"
    assert sg.MACRO_ACTIONS[issues + fields] == f"answer:{ISSUE_TYPE_IDS[0]}"
    assert sg.MACRO_ACTIONS[2 * issues + fields :] == (
        "assign:billing",
        "assign:logistics",
        "assign:technical",
        "assign:accounts",
        "assign:security",
        "assign:enterprise_success",
        "escalate",
        "callback",
        "resolve",
        "gather",  # added last: the indices before it never move
    )
    assert len(env.feature_names) == env.observation_space.shape[0]
    assert gymnasium.make(sg.FEATURE_ENV_ID, n_buckets=256).observation_space.shape[0] == len(env.feature_names) - 256


def test_every_macro_action_is_well_formed_and_triages_by_the_policy():
    seed = _find_seed(lambda s: s.impact == "soon")
    scenario, state = new_episode("end_to_end_resolution", "train", seed)
    obs = observe(scenario, state)
    for index in range(sg.N_MACRO_ACTIONS):
        action = macro_action(index, obs)
        assert action.kind != "invalid_action"
    locked = macro_action(macro_index("classify:account_locked"), obs)  # "... in the next day or two": high
    assert (locked.category, locked.issue_type, locked.priority) == ("account", "account_locked", "high")
    with pytest.raises(ValueError):
        macro_action(sg.N_MACRO_ACTIONS, obs)


def test_gather_asks_for_what_the_raised_issues_articles_need():
    """`gather` asks, in one question, for every fact that the articles of the issues the agent's own
    search reads in the message need (as the prompt states them) and that is not given yet; the
    ``raised_needs`` features show the same fields."""
    encoder = sg.FeatureEncoder()
    for seed in range(40):
        scenario, state = new_episode("action_selection", "validation", seed)
        obs = observe(scenario, state)
        raised = features.raised_issues(obs)
        given = {name for name, _ in obs.revealed_facts}
        wanted = [f for issue in raised for f in ARTICLE_NEEDS[issue.article_id] if f not in given]
        action = macro_action(macro_index("gather"), obs)
        assert action.kind == "ask_for_more_info"
        if wanted:
            assert list(action.fields) == list(dict.fromkeys(wanted))
        x = encoder.encode(obs)
        shown = {REQUESTABLE_FIELDS[i] for i in np.flatnonzero(x[encoder.slices["raised_needs"]])}
        assert shown == set(wanted)
    # The classified issue comes first, whatever the search reads.
    step(scenario, state, macro_action(macro_index("classify:account_takeover"), obs))
    assert features.raised_issues(observe(scenario, state))[0].issue_id == "account_takeover"


def test_in_process_path_never_imports_grpc():
    code = (
        "import sys, gymnasium, supportenv.gym\n"
        "for env_id in ('SupportEnv-v0', 'SupportEnvFeatures-v0'):\n"
        "    env = gymnasium.make(env_id)\n"
        "    env.reset(seed=1)\n"
        "    env.action_space.seed(1)\n"
        "    for _ in range(30):\n"
        "        if any(env.step(env.action_space.sample())[2:4]):\n"
        "            env.reset()\n"
        "bad = [m for m in sys.modules if m == 'grpc' or m.startswith(('grpc.', 'google.protobuf', 'supportenv.v1'))]\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_seeding_and_reset_options(env_id):
    env = gymnasium.make(env_id).unwrapped
    _, info = env.reset(seed=7)
    assert (info["seed"], info["task_id"], info["split"]) == (7, "end_to_end_resolution", "train")
    assert info["ticket_id"] == generate("end_to_end_resolution", "train", 7).ticket_id
    drawn = [env.reset()[1]["seed"] for _ in range(3)]
    assert len(set(drawn)) == 3  # seed=None moves on to new tickets
    again = gymnasium.make(env_id).unwrapped
    again.reset(seed=7)
    assert [again.reset()[1]["seed"] for _ in range(3)] == drawn  # ... deterministically

    _, info = env.reset(seed=3, options={"task_id": "issue_classification", "split": "validation"})
    assert (info["task_id"], info["split"]) == ("issue_classification", "validation")
    assert env.last_observation.task_id == "issue_classification" and env.last_observation.max_steps == 4
    _, info = env.reset(seed=3)
    assert (info["task_id"], info["split"]) == ("end_to_end_resolution", "train")  # options last one episode
    with pytest.raises(ValueError):
        env.reset(seed=3, options={"tasks": "x"})


def test_features_do_not_see_hidden_facts():
    """Two scenarios that differ only in hidden facts not yet revealed give identical features."""

    def single_fact_case(s):
        return len(s.intents) == 1 and len(s.hidden_facts) >= 3 and len(s.expected.facts) >= 1

    seed = _find_seed(single_fact_case)
    scenario, state = new_episode("end_to_end_resolution", "train", seed)
    asked = scenario.expected.facts[0]

    def changed(value: str) -> str:
        return value[:-1] + ("1" if value[-1] != "1" else "2")

    other = dataclasses.replace(
        scenario,
        hidden_facts=tuple((n, v if n == asked else changed(v)) for n, v in scenario.hidden_facts),
    )
    assert other.hidden_facts != scenario.hidden_facts
    other_state = copy.deepcopy(state)
    encoder = FeatureEncoder()
    issue = scenario.expected.issue_type
    plan = [f"classify:{issue}", f"ask:{asked}", f"answer:{issue}", "escalate", "assign:billing", "resolve"]
    last_kind = ""
    for label in [None, *plan]:
        if label is not None:
            obs_a, obs_b = observe(scenario, state), observe(other, other_state)
            action = macro_action(macro_index(label), obs_a)
            assert action == macro_action(macro_index(label), obs_b)
            step(scenario, state, action)
            step(other, other_state, action)
            last_kind = action.kind
        obs_a, obs_b = observe(scenario, state), observe(other, other_state)
        assert np.array_equal(encoder.encode(obs_a, last_kind), encoder.encode(obs_b, last_kind)), label
        assert render_observation(obs_a) == render_observation(obs_b)
        if state.done:
            break
    assert asked in state.revealed


def test_scripted_macro_actions_solve_a_solvable_ticket():
    def solvable(s):
        return len(s.intents) == 1 and not s.expected.escalate and len(s.expected.facts) == 2

    seed = _find_seed(solvable)
    expected = generate("end_to_end_resolution", "train", seed).expected
    env = gymnasium.make(sg.FEATURE_ENV_ID).unwrapped
    env.reset(seed=seed)
    plan = [f"classify:{expected.issue_type}", *(f"ask:{f}" for f in expected.facts)]
    plan += [f"answer:{expected.issue_type}", "resolve"]
    for n, label in enumerate(plan, start=1):
        _, _, terminated, truncated, info = env.step(macro_index(label))
        assert info["macro_action"] == label
        assert terminated == (n == len(plan)) and not truncated
    assert info["score"] >= 0.9 and info["passed"], info
    assert set(info["grade_components"]) >= {"resolution", "efficiency"}


def test_scripted_macro_actions_route_and_escalate_a_security_ticket():
    def security(s):
        return len(s.intents) == 1 and s.expected.escalate and s.expected.department == "security"

    seed = _find_seed(security)
    expected = generate("end_to_end_resolution", "train", seed).expected
    env = gymnasium.make(sg.FEATURE_ENV_ID).unwrapped
    env.reset(seed=seed)
    plan = [f"classify:{expected.issue_type}", *(f"ask:{f}" for f in expected.facts)]
    plan += ["assign:security", "escalate", "resolve"]
    for label in plan:
        obs, _, terminated, _, info = env.step(macro_index(label))
    assert terminated and info["score"] >= 0.8, info
    enc = env.encoder
    assert obs[enc.slices["escalated"]][0] == 1.0 and obs[enc.slices["policy_escalation"]][0] == 1.0


@pytest.mark.parametrize("task_id", TASK_IDS)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_random_rollouts_never_raise(env_id, task_id):
    env = gymnasium.make(env_id, task_id=task_id, render_mode="ansi")
    env.action_space.seed(11)
    obs, _ = env.reset(seed=11)
    episodes = 0
    for _ in range(200):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        assert env.observation_space.contains(obs)
        assert math.isfinite(reward) and isinstance(info["reward_breakdown"], dict)
        if terminated or truncated:
            assert 0.0 <= info["score"] <= 1.0 and isinstance(info["passed"], bool)
            assert isinstance(env.render(), str)
            episodes += 1
            obs, _ = env.reset()
    assert episodes >= 10
    env.close()


def test_text_env_turns_bad_actions_into_penalised_steps():
    env = gymnasium.make(sg.TEXT_ENV_ID).unwrapped
    env.reset(seed=2)
    respond = sg.encode_action(Action("respond_with_solution", text=""))
    obs, reward, terminated, truncated, info = env.step(respond)
    assert reward == -0.1 and not terminated and not truncated
    assert info["action"] == "invalid_action" and info["reward_breakdown"] == {"invalid_action": -0.1}
    assert "needs a message" in info["invalid_action"] and "needs a message" in obs
    no_category = sg.encode_action(Action("classify_issue", priority="high"))
    assert env.step(no_category)[4]["action"] == "invalid_action"
    for junk in ({"kind": 99}, {"nothing": 1}, "mark_resolved", None):
        assert env.step(junk)[4]["action"] == "invalid_action"
    # A library Action, an action dict, and the Dict form of a real action are all played as such.
    assert env.step(Action("ask_for_more_info", fields=("order_id",)))[4]["action"] == "ask_for_more_info(order_id)"
    assert env.step({"action_type": "escalate_to_human"})[4]["action"] == "escalate_to_human"
    _, _, terminated, _, info = env.step(sg.encode_action(Action("mark_resolved", text="Done.")))
    assert terminated and "score" in info
    with pytest.raises(Exception, match="ended"):
        env.step(sg.encode_action(Action("mark_resolved")))


def test_text_observation_shows_the_last_step_s_reward():
    opening, _ = gymnasium.make(sg.TEXT_ENV_ID, task_id="action_selection").unwrapped.reset(seed=3)
    assert "\nLast reward: none\n" in opening, "a previous agent's opening steps are not this agent's reward"
    env = gymnasium.make(sg.TEXT_ENV_ID, task_id="end_to_end_resolution", split="train").unwrapped
    obs, _ = env.reset(seed=3)
    assert "\nLast reward: none\n" in obs
    expected = generate("end_to_end_resolution", "train", 3).expected
    classify = Action("classify_issue", category=expected.category, priority=expected.priority)
    obs, *_ = env.step(sg.encode_action(classify))
    assert "\nLast reward: +0.40 (classify_correct +0.30, priority_correct +0.10)\n" in obs
    obs, *_ = env.step(sg.encode_action(Action("respond_with_solution", text="")))
    assert "\nLast reward: -0.10 (invalid_action -0.10)\n" in obs


# ---- remote: a real env service, compared step for step with the library in this process ----


@pytest.fixture(scope="module")
def env_service():
    service = start_service("env_service", {"SUPPORTENV_TOKEN_KEY": secrets.token_hex(32)})
    try:
        yield service
    finally:
        service.stop()


def _play(env, seed: int, actions) -> list[tuple]:
    obs, info = env.reset(seed=seed)
    record = [(obs, info)]
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        record.append((obs, reward, terminated, truncated, info, env.last_observation))
        if terminated or truncated:
            break
    return record


@pytest.mark.parametrize("task_id", TASK_IDS)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_remote_matches_in_process(env_service, env_id, task_id):
    local = gymnasium.make(env_id, task_id=task_id).unwrapped
    remote = gymnasium.make(env_id, task_id=task_id, remote=env_service.address).unwrapped
    try:
        sampler = local.action_space
        sampler.seed(5)
        compared = 0
        for seed in range(4):
            if env_id == sg.FEATURE_ENV_ID and seed == 0:
                expected = generate(task_id, "train", seed).expected
                labels = [f"classify:{expected.issue_type}", *(f"ask:{f}" for f in expected.facts)]
                actions = [macro_index(label) for label in [*labels, f"answer:{expected.issue_type}", "resolve"]]
            else:
                actions = [sampler.sample() for _ in range(12)]
            mine, theirs = _play(local, seed, actions), _play(remote, seed, actions)
            assert len(mine) == len(theirs)
            for a, b in zip(mine, theirs, strict=True):
                assert len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True)), (seed, a, b)
                compared += 1
            assert "score" in mine[-1][4] or len(mine) == len(actions) + 1
        # Seeds drawn from np_random match as well.
        assert [local.reset()[1]["seed"] for _ in range(2)] == [remote.reset()[1]["seed"] for _ in range(2)]
        assert compared > 8
    finally:
        local.close()
        remote.close()


def test_long_observations_leave_out_the_oldest_turns():
    scenario, state = new_episode("end_to_end_resolution", "train", 4)
    obs = observe(scenario, state)
    turns = tuple(("agent" if n % 2 else "customer", f"Turn {n}: " + "more words here. " * 20, n) for n in range(12))
    long_obs = dataclasses.replace(obs, history=obs.history + turns)
    budget = len(render_observation(obs)) + 1000  # room for a few of the long turns, not all
    text = render_observation(long_obs, max_chars=budget)
    assert len(text) <= budget and "earlier turn(s) left out" in text
    assert text.startswith("Ticket ") and "Turn 11:" in text and "Last feedback:" in text
    assert spaces.Text(budget, charset=sg.text_env.OBSERVATION_CHARSET).contains(text)
    assert render_observation(dataclasses.replace(obs, customer_message="caf\u00e9 \u2014 ok")).count("cafe - ok") == 1


# ---- the expert task: the text env takes use_tool; the feature env refuses it ----

EXPERT = "expert_resolution"


def test_text_env_action_space_for_the_expert_task():
    env = gymnasium.make(sg.TEXT_ENV_ID, task_id=EXPERT).unwrapped
    space = env.action_space
    assert set(space.spaces) == {
        "kind",
        "category",
        "priority",
        "issue_type",
        "fields",
        "article",
        "department",
        "text",
        "tool",
        "arguments",
    }
    assert space["kind"].n == 9 and sg.text_env.TOOL_ACTION_KINDS[8] == "use_tool"
    assert space["tool"].n == 11
    call = Action("use_tool", tool="issue_refund", arguments=(("order_id", "ORD-1"), ("amount", "12.50")))
    encoded = sg.encode_action(call)
    assert space.contains(encoded) and sg.decode_action(encoded) == call
    plain = sg.encode_action(Action("mark_resolved", text="Done."), tools=True)
    assert space.contains(plain) and sg.decode_action(plain) == Action("mark_resolved", text="Done.")
    # The source tasks' space is unchanged.
    assert "tool" not in gymnasium.make(sg.TEXT_ENV_ID).unwrapped.action_space.spaces


def test_text_env_plays_the_expert_task_with_tool_calls():
    from supportenv import casework

    seed = 3
    scenario, _ = new_episode(EXPERT, "train", seed)
    env = gymnasium.make(sg.TEXT_ENV_ID, task_id=EXPERT).unwrapped
    obs, info = env.reset(seed=seed)
    assert "Allowed actions: " in obs and "use_tool" in obs and "issue_refund(order_id, amount)*" in obs
    assert "Last tool result: none" in obs
    # JSON text, as a language model writes it.
    ask = '{"action": "ask_for_more_info", "fields": ["account_email", "order_id", "card_last_four"]}'
    obs, *_ = env.step(ask)
    facts = dict(env.last_observation.revealed_facts)
    assert "account_email" in facts
    # The Dict form of a look-up.
    obs, _, _, _, info = env.step(
        sg.encode_action(
            Action("use_tool", tool="look_up_payments", arguments=(("account_email", facts["account_email"]),))
        )
    )
    assert info["action"].startswith("look_up_payments(") and info["tool_result"]["status"] == "ok"
    assert "Last tool result: look_up_payments: ok: " in obs and '"payments":[' in obs
    # An action dict and an Action.
    obs, *_, info = env.step({"action_type": "use_tool", "tool": "verify_identity", "arguments": {}})
    assert info["tool_result"]["tool"] == "verify_identity"
    for call in casework.remedy_calls(scenario):
        if call.name != "verify_identity":
            obs, *_, info = env.step(Action("use_tool", tool=call.name, arguments=call.arguments))
            assert "tool_result" in info
    obs, *_, info = env.step(
        sg.encode_action(Action("respond_with_solution", text="Thank you, all sorted."), tools=True)
    )
    assert "tool_result" not in info and "Last tool result: none" in obs
    *_, terminated, _, info = env.step(sg.encode_action(Action("mark_resolved", text="Done."), tools=True))
    assert terminated and "score" in info and "records" in info["grade_components"]


def test_bad_tool_actions_are_penalised_steps_on_every_task():
    env = gymnasium.make(sg.TEXT_ENV_ID, task_id=EXPERT).unwrapped
    env.reset(seed=1)
    base = sg.encode_action(Action("mark_resolved"), tools=True)
    for junk in (
        {**base, "kind": 8, "tool": 0},
        {**base, "kind": 8, "tool": 2, "arguments": "not json"},
        {**base, "kind": 8, "tool": 2, "arguments": '["x"]'},
        {**base, "kind": 8, "tool": 2, "arguments": '{"order_id": null}'},
        {**base, "kind": 8, "tool": 2, "arguments": "{}"},
        {**base, "kind": 8, "tool": 99},
        '{"action": "use_tool", "tool": "nope"}',
    ):
        _, reward, _, _, info = env.step(junk)
        assert info["action"] == "invalid_action" and reward < 0, junk
    old = gymnasium.make(sg.TEXT_ENV_ID).unwrapped
    obs, _ = old.reset(seed=1)
    assert "Last tool result" not in obs and "Allowed actions" not in obs
    obs, reward, *_, info = old.step(Action("use_tool", tool="check_service_status"))
    assert info["action"] == "invalid_action" and "does not take use_tool" in info["invalid_action"]
    assert reward < 0 and "does not take use_tool" in obs


def test_feature_env_refuses_the_expert_task_and_names_the_text_env():
    with pytest.raises(ValueError, match="use the text env SupportEnv-v0"):
        gymnasium.make(sg.FEATURE_ENV_ID, task_id=EXPERT)
    env = gymnasium.make(sg.FEATURE_ENV_ID).unwrapped
    with pytest.raises(ValueError, match="does not take task expert_resolution"):
        env.reset(seed=0, options={"task_id": EXPERT})
    env.reset(seed=0)  # the env still works for its own tasks


def test_random_expert_rollouts_never_raise():
    env = gymnasium.make(sg.TEXT_ENV_ID, task_id=EXPERT)
    env.action_space.seed(7)
    for seed in range(3):
        env.reset(seed=seed)
        done = False
        while not done:
            *_, terminated, truncated, _ = env.step(env.action_space.sample())
            done = terminated or truncated


def test_expert_text_env_passes_the_env_checker():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(gymnasium.make(sg.TEXT_ENV_ID, task_id=EXPERT).unwrapped, skip_render_check=True)


def test_the_oracle_passes_the_expert_task_through_the_text_env():
    from supportenv import expert

    seed = 4
    scenario, state = new_episode(EXPERT, "train", seed)
    env = gymnasium.make(sg.TEXT_ENV_ID, task_id=EXPERT, split="train").unwrapped
    env.reset(seed=seed)
    done = False
    while not done:
        action = expert.expert_action(scenario, state, EXPERT)
        step(scenario, state, action)
        *_, terminated, truncated, info = env.step(sg.encode_action(action, tools=True))
        done = terminated or truncated
    assert info["passed"] and info["score"] == pytest.approx(1.0)
