"""LLM agents: the prompt, the reply parser, the tool schemas, and inference.py end to end
against a scripted OpenAI-compatible server on loopback (the real model is external)."""

from __future__ import annotations

import ast
import dataclasses
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from baseline_agent.runner import Runner
from supportenv import SupportEnv
from supportenv.actions import ACTION_KINDS, INVALID_KIND, Action, invalid, parse
from supportenv.catalog import ARTICLE_NEEDS, ARTICLES, CATEGORIES, DEPARTMENTS, PRIORITIES
from supportenv.episode import Observation
from supportenv.llm import ACTION_SPECS, action_tools, parse_action, parse_tool_call, render_prompt
from supportenv.world import generate
from tests.scripted_model import ScriptedModel

ROOT = Path(__file__).resolve().parent.parent
TASKS = ("issue_classification", "action_selection", "end_to_end_resolution")
START = re.compile(r"^\[START\] task=(\S+) env=supportenv model=(\S+)$")
STEP = re.compile(r"^\[STEP\] step=(\d+) action=(\S+) reward=(-?\d+\.\d\d) done=(true|false) error=(null|\S.*)$")
END = re.compile(r"^\[END\] success=(true|false) steps=(\d+) score=(\d\.\d\d) rewards=(-?\d+\.\d\d(?:,-?\d+\.\d\d)*)?$")
CLASSIFY = {"action": "classify_issue", "category": "billing", "priority": "high", "issue_type": "double_charge"}
NO_JSON = "the reply contains no JSON object"


# ---- parse_action ----


def test_parses_a_bare_json_object():
    action = parse_action(json.dumps(CLASSIFY))
    assert action == Action("classify_issue", category="billing", priority="high", issue_type="double_charge")


def test_parses_fenced_json_and_json_inside_prose():
    fenced = 'Here you go:\n```json\n{"action": "ask_for_more_info", "fields": ["order_id", "amount"]}\n```\n'
    assert parse_action(fenced) == Action("ask_for_more_info", fields=("order_id", "amount"))
    prose = 'I will answer now. {"action": "respond_with_solution", "message": "Please retry.", "article_id": '
    prose += f'"{ARTICLES[0].article_id}"}} Hope that helps!'
    action = parse_action(prose)
    assert (action.kind, action.text, action.article_id) == ("respond_with_solution", "Please retry.", "KB-PAY-01")
    thinking = '<think>maybe {"action": "escalate_to_human"}</think>\n{"action": "mark_resolved", "summary": "Done"}'
    assert parse_action(thinking) == Action("mark_resolved", text="Done")


def test_parses_tool_call_style():
    args = {"department": "billing", "note": "Refund over the cap"}
    assert parse_action(json.dumps({"name": "assign_department", "arguments": args})) == Action(
        "assign_department", department="billing", text="Refund over the cap"
    )
    as_string = json.dumps({"name": "assign_department", "arguments": json.dumps(args)})
    assert parse_action(as_string).department == "billing"
    openai_shape = {"type": "function", "function": {"name": "mark_resolved", "arguments": '{"summary": "ok"}'}}
    assert parse_action(json.dumps(openai_shape)) == Action("mark_resolved", text="ok")
    assert parse_tool_call("classify_issue", json.dumps(CLASSIFY | {"action": None})).category == "billing"
    assert parse_tool_call("escalate_to_human", None) == Action("escalate_to_human")


def test_forgives_harmless_variations():
    action = parse_action('{"action": "Classify_Issue", "category": "Billing", "priority": "HIGH"}')
    assert (action.kind, action.category, action.priority) == ("classify_issue", "billing", "high")
    assert parse_action('{"action": "ask_for_more_info", "fields": "order_id, amount"}').fields == (
        "order_id",
        "amount",
    )
    assert parse_action('{"action": "close_resolved"}').kind == "mark_resolved"  # the source design's alias


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ("I am not sure what to do here.", NO_JSON),
        ("", "the reply is empty"),
        ("   \n ", "the reply is empty"),
        ('{"action": "classify_issue", "category": ', "malformed"),
        ('{"foo": 1}', 'no "action" key'),
        ('{"action": "fly_to_the_moon"}', "unknown action kind 'fly_to_the_moon'"),
        ('{"action": "classify_issue", "category": "billing", "priority": "sometimes"}', "priority must be one of"),
        ('{"action": "classify_issue", "category": "weather"}', "classify_issue needs a category, one of billing"),
        ('{"action": "assign_department", "department": "sales"}', "department, one of billing"),
        ('{"action": "ask_for_more_info", "fields": ["shoe_size"]}', "unknown fields ['shoe_size']"),
        ('{"action": "ask_for_more_info", "fields": 5}', "fields must be a list"),
        ('{"action": "suggest_knowledge_base", "article_id": "KB-NOPE-99"}', "unknown article 'KB-NOPE-99'"),
        ('{"action": "respond_with_solution"}', "respond_with_solution needs a message"),
        ('{"name": "mark_resolved", "arguments": "{not json"}', "arguments are not valid JSON"),
        ('{"action": 7}', "the action name must be a non-empty string"),
        ("[1, 2]", "expected one action, got a list of 2"),
        ('"mark_resolved"', "expected a JSON object, got str"),
    ],
)
def test_unusable_replies_become_invalid_actions_with_a_clear_error(reply, error):
    action = parse_action(reply)
    assert action.kind == INVALID_KIND
    assert error in action.error, action.error
    assert action.text == reply


def test_parser_never_raises():
    for reply in ("{" * 5000, "}{" * 100, "```json\n```", '{"action": {"action": {}}}', "\x00\ud800", "[" * 3000):
        assert parse_action(reply).kind == INVALID_KIND
    assert parse_action(None).kind == INVALID_KIND  # type: ignore[arg-type]
    assert parse_tool_call(None, 3).kind == INVALID_KIND  # type: ignore[arg-type]
    huge = json.dumps({"action": "mark_resolved", "summary": "x" * 10_000})
    assert "limit" in parse_action(huge).error and len(parse_action(huge).text) <= 4000


def test_action_tools_cover_every_action_and_round_trip():
    tools = action_tools()
    assert [t["function"]["name"] for t in tools] == list(ACTION_KINDS)
    for tool in tools:
        assert tool["type"] == "function"
        params = tool["function"]["parameters"]
        assert params["type"] == "object" and set(params["required"]) <= set(params["properties"])
    by_name = {t["function"]["name"]: t["function"]["parameters"]["properties"] for t in tools}
    assert by_name["classify_issue"]["category"]["enum"] == list(CATEGORIES)
    assert by_name["assign_department"]["department"]["enum"] == list(DEPARTMENTS)
    args = {"category": "refund", "priority": "urgent", "issue_type": "refund_request"}
    assert parse_tool_call("classify_issue", args) == Action("classify_issue", **args)


# ---- render_prompt ----


def _observation_after_asking(task_id: str, seed: int) -> tuple[Observation, SupportEnv]:
    env = SupportEnv(task_id=task_id, split="test", seed=seed)
    env.reset()
    env.step({"action_type": "classify_issue", "category": generate(task_id, "test", seed).expected.category})
    obs, *_ = env.step({"action_type": "ask_for_more_info", "fields": ["order_id", "account_email"]})
    return obs, env


def _strict_caps_seed() -> int:
    """A test ticket under the held-out strict_caps policy."""
    return next(s for s in range(500) if generate("end_to_end_resolution", "test", s).policy.name == "strict_caps")


def test_prompt_has_the_rules_actions_and_output_format():
    obs, _ = _observation_after_asking("end_to_end_resolution", _strict_caps_seed())
    system, user = render_prompt(obs)
    assert (system["role"], user["role"]) == ("system", "user")
    text = system["content"]
    for word in (*ACTION_KINDS, *CATEGORIES, *PRIORITIES, *DEPARTMENTS, *obs.issue_types, *obs.requestable_fields):
        assert word in text, word
    for rule in obs.policy:
        assert rule in text
    assert obs.task_instructions in text
    assert "$50" in text  # the held-out strict_caps policy of this test ticket, not a fixed text
    assert '{"action": "classify_issue", "category": "billing"' in text and "one JSON object" in text


def test_prompt_shows_the_observation():
    obs, _ = _observation_after_asking("end_to_end_resolution", 138)
    assert obs.revealed_facts and obs.kb_matches and obs.category
    user = render_prompt(obs)[1]["content"]
    assert obs.ticket_id in user and obs.customer_message in user
    for speaker, line, _ in obs.history:
        assert f"{speaker}: {line}" in user
    for name, value in obs.revealed_facts:
        assert f"{name}: {value}" in user
    for article_id, title, score in obs.kb_matches:
        needs = ARTICLE_NEEDS[article_id]
        stated = f"needs: {', '.join(needs)}" if needs else "needs no facts"
        assert f"{article_id} ({title}; {stated}): score {score:.2f}" in user
    assert f"tier {obs.customer_tier}" in user and f"sentiment {obs.sentiment_label}" in user
    assert f"{obs.steps_left} steps left" in user
    assert render_prompt(obs) == render_prompt(obs), "a pure function of the observation"


def test_prompt_shows_the_last_feedback():
    env = SupportEnv(task_id="end_to_end_resolution", split="train", seed=3)
    env.reset()
    obs, reward, *_ = env.step(invalid("???", "the reply contains no JSON object"))
    assert reward < 0
    assert (
        "Feedback on your last action: your last output did not parse: the reply contains no JSON"
        in (render_prompt(obs)[1]["content"])
    )


def test_prompt_shows_the_last_step_s_reward_and_its_parts():
    # action_selection opens after a previous agent's steps: their rewards are not this agent's.
    opened = next(
        s for s in range(50) if len(SupportEnv(task_id="action_selection", split="train", seed=s).reset().history) > 1
    )
    opening = SupportEnv(task_id="action_selection", split="train", seed=opened).reset()
    assert len(opening.history) > 1
    assert "Reward for your last action: (no action yet)" in render_prompt(opening)[1]["content"]
    env = SupportEnv(task_id="end_to_end_resolution", split="train", seed=3)
    assert "Reward for your last action: (no action yet)" in render_prompt(env.reset())[1]["content"]
    expected = generate("end_to_end_resolution", "train", 3).expected
    obs, *_ = env.step(Action("classify_issue", category=expected.category, priority=expected.priority))
    assert (
        "Reward for your last action: +0.40 (classify_correct +0.30, priority_correct +0.10)"
        in render_prompt(obs)[1]["content"]
    )
    obs, *_ = env.step(invalid("???", "the reply contains no JSON object"))
    assert "Reward for your last action: -0.10 (invalid_action -0.10)" in render_prompt(obs)[1]["content"]


def test_prompt_never_shows_hidden_facts():
    for task_id in TASKS:
        for seed in range(25):
            scenario = generate(task_id, "test", seed)
            obs, _ = _observation_after_asking(task_id, seed)
            revealed = dict(obs.revealed_facts)
            prompt = "\n".join(m["content"] for m in render_prompt(obs))
            for name, value in scenario.hidden_facts:
                if name not in revealed:
                    assert value not in prompt, (task_id, seed, name, value)


def test_llm_module_is_pure():
    tree = ast.parse((ROOT / "supportenv" / "llm.py").read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    banned = ("grpc", "time", "os", "socket", "threading", "asyncio", "subprocess", "uuid", "datetime", "openai")
    assert not {m for m in imported if m.split(".")[0] in banned}


def parse_log(stdout: str) -> list[dict[str, Any]]:
    """Every [..] line against the strict format; episodes as START, STEP 1..n, END."""
    episodes: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for line in stdout.splitlines():
        if not line.startswith("["):
            continue
        if match := START.match(line):
            assert current is None, f"[START] inside an episode: {line}"
            current = {"task": match.group(1), "model": match.group(2), "steps": []}
        elif match := STEP.match(line):
            assert current is not None, f"[STEP] outside an episode: {line}"
            assert int(match.group(1)) == len(current["steps"]) + 1, line
            current["steps"].append(
                {"action": match.group(2), "reward": match.group(3), "done": match.group(4), "error": match.group(5)}
            )
        elif match := END.match(line):
            assert current is not None, f"[END] outside an episode: {line}"
            assert int(match.group(2)) == len(current["steps"]), line
            assert (match.group(4) or "") == ",".join(s["reward"] for s in current["steps"]), line
            current.update(success=match.group(1), score=match.group(3))
            episodes.append(current)
            current = None
        else:
            raise AssertionError(f"line breaks the log format: {line!r}")
    assert current is None, "an episode without [END]"
    return episodes


def run_inference(extra_env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **extra_env}
    for name in ("SUPPORTENV_ENV_ADDR", "SUPPORTENV_GRADER_ADDR", "LLM_TOOL_CALLS"):
        env.pop(name, None)
    for name in ("API_BASE_URL", "MODEL_NAME"):
        if name not in extra_env:
            env.pop(name, None)
    return subprocess.run(
        [sys.executable, "inference.py", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=240
    )


def test_inference_with_a_model_end_to_end():
    pytest.importorskip("openai")
    respond = {"action": "respond_with_solution", "message": "Thank you, please retry.", "article_id": "KB-BIL-02"}
    script = [
        # issue_classification: garbage first (a penalised invalid step), then prose + JSON, then fenced JSON.
        "Hmm, I am not sure what to do.",
        f"Let me classify it. {json.dumps(CLASSIFY)}",
        '```json\n{"action": "mark_resolved", "summary": "Classified."}\n```',
        # action_selection: tool-call style (arguments as a JSON string), JSON, JSON.
        json.dumps({"name": "ask_for_more_info", "arguments": json.dumps({"fields": ["order_id"]})}),
        json.dumps(respond),
        json.dumps({"action": "mark_resolved", "summary": "Answered."}),
        # end_to_end_resolution: one step, then the API fails for good.
        json.dumps(CLASSIFY),
        500,
    ]
    with ScriptedModel(script) as model:
        done = run_inference(
            {"API_BASE_URL": model.url, "MODEL_NAME": "scripted-model", "HF_TOKEN": "test-token"}, "--episodes", "1"
        )
    assert done.returncode == 1, done.stdout + done.stderr  # one episode failed
    episodes = parse_log(done.stdout)
    assert [e["task"] for e in episodes] == list(TASKS)
    assert {e["model"] for e in episodes} == {"scripted-model"}
    easy, medium, hard = episodes
    assert [s["action"] for s in easy["steps"]] == [
        "invalid_action",
        "classify_issue(billing,double_charge,high)",
        "mark_resolved",
    ]
    assert float(easy["steps"][0]["reward"]) < 0 and NO_JSON in easy["steps"][0]["error"]
    assert [s["done"] for s in easy["steps"]] == ["false", "false", "true"]
    assert [s["error"] for s in easy["steps"][1:] + medium["steps"]] == ["null"] * 5
    assert [s["action"] for s in medium["steps"]] == [
        "ask_for_more_info(order_id)",
        "respond_with_solution(KB-BIL-02)",
        "mark_resolved",
    ]
    assert len(hard["steps"]) == 1 and hard["steps"][0]["done"] == "false"
    assert hard["success"] == "false" and hard["score"] == "0.00"
    assert "InternalServerError" in done.stderr and "500" in done.stderr
    assert re.search(r"^weighted score\s+\d\.\d{3}$", done.stdout, re.M)
    # What the model was sent: the whole protocol, and the parse error right after the garbage.
    assert len(model.requests) == 8
    first = model.requests[0]
    assert first["model"] == "scripted-model" and first["temperature"] == 0
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert model.headers[0].get("authorization") == "Bearer test-token"
    prompts = model.user_prompts()
    assert "Feedback on your last action: (none)" in prompts[0]
    assert f"your last output did not parse: {NO_JSON}" in prompts[1]
    assert "The agent's output could not be used" in prompts[1]  # and in the history


def test_inference_without_a_model_uses_the_rule_baseline():
    done = run_inference({}, "--episodes", "1")
    assert done.returncode == 0, done.stderr
    episodes = parse_log(done.stdout)
    assert [e["task"] for e in episodes] == list(TASKS)
    assert {e["model"] for e in episodes} == {"rule"}
    for episode in episodes:
        assert episode["steps"] and episode["steps"][-1]["done"] == "true"
        assert all(s["done"] == "false" for s in episode["steps"][:-1])
    assert run_inference({}, "--episodes", "1", "--quiet").stdout.splitlines()[-1] == done.stdout.splitlines()[-1]


# ---- the policy and the runner in process ----


def test_llm_policy_with_tool_calls():
    pytest.importorskip("openai")
    from baseline_agent.llm_policy import LLMPolicy

    obs, _ = _observation_after_asking("end_to_end_resolution", 5)
    script = [("tool", "classify_issue", json.dumps(CLASSIFY | {"action": None})), ("tool", "nope", "{}"), 503]
    with ScriptedModel(script) as model:
        policy = LLMPolicy(model="tool model", base_url=model.url, api_key="k", tool_calls=True, timeout_s=10)
        assert policy.name == "tool_model"
        policy.begin("end_to_end_resolution", "test", 5)
        assert policy.act(obs) == Action(
            "classify_issue", category="billing", priority="high", issue_type="double_charge"
        )
        assert "unknown action kind 'nope'" in policy.act(obs).error
        import openai

        with pytest.raises(openai.APIStatusError):
            policy.act(obs)
    assert model.requests[0]["tool_choice"] == "required"
    assert [t["function"]["name"] for t in model.requests[0]["tools"]] == list(ACTION_KINDS)
    # The prompt asks for a function call, not the JSON reply it asks of a text model.
    assert [m["content"] for m in model.requests[0]["messages"]] == [
        m["content"] for m in render_prompt(obs, tool_calls=True)
    ]
    assert "call one function" in model.requests[0]["messages"][1]["content"]


def test_llm_policy_needs_a_model_name(monkeypatch):
    from baseline_agent.llm_policy import LLMPolicy

    monkeypatch.delenv("MODEL_NAME", raising=False)
    with pytest.raises(SystemExit, match="MODEL_NAME"):
        LLMPolicy()


def test_policies_import_without_openai():
    code = "import sys, baseline_agent.policies as p; assert 'llm' in p.POLICIES; assert 'openai' not in sys.modules"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


class _FailingPolicy:
    name = "failing"
    stochastic = False

    def begin(self, task_id: str, split: str, seed: int, trial: int = 0) -> None:
        self.calls = 0

    def act(self, obs: Observation) -> Action:
        self.calls += 1
        if self.calls > 1:
            raise ConnectionError("model endpoint unreachable")
        return Action("classify_issue", category="billing")


def test_any_exception_in_an_episode_still_prints_end(services):
    out = io.StringIO()
    runner = Runner(services.env.address, services.grader.address, _FailingPolicy(), "test", out=out)
    try:
        record = runner.play("end_to_end_resolution", 0)
        again = runner.play("issue_classification", 1)
    finally:
        runner.close()
    assert record.error == "ConnectionError: model endpoint unreachable" and record.steps == 1
    assert again.error == record.error
    episodes = parse_log(out.getvalue())
    assert [len(e["steps"]) for e in episodes] == [1, 1]
    assert all(e["success"] == "false" for e in episodes)


# ---- the expert task: use_tool and the help desk's tools ----

EXPERT = "expert_resolution"


def _expert_observation_after_a_look_up(seed: int = 3) -> Observation:
    from supportenv import actions
    from supportenv.episode import observe, step
    from supportenv.replay import new_episode

    scenario, state = new_episode(EXPERT, "validation", seed)
    step(scenario, state, actions.ask("account_email", "order_id"))
    order_id = dict(observe(scenario, state).revealed_facts)["order_id"]
    return step(scenario, state, actions.use_tool("look_up_order", order_id=order_id)).observation


def test_expert_prompt_lists_use_tool_every_tool_and_the_last_tool_result():
    from supportenv.tools import TOOLS

    obs = _expert_observation_after_a_look_up()
    system, user = (m["content"] for m in render_prompt(obs))
    assert "- use_tool: " in system
    for spec in TOOLS:
        line = next(line for line in system.splitlines() if line.startswith(f"- {spec.name}("))
        assert line.startswith(f"- {spec.name}({', '.join(spec.arguments)}): {spec.description}")
        assert f"Cost ${spec.cost:.2f}" in line
        assert ("needs the customer verified first" in line) == spec.needs_verification
        example = {"action": "use_tool", "tool": spec.name, "arguments": {a: f"<{a}>" for a in spec.arguments}}
        assert json.dumps(example) in system
    result = obs.tool_result
    assert result is not None and result.status == "ok"
    assert f"- look_up_order: ok: {result.message}" in user
    # In the records' order (as the library writes the data; the wire's sorted keys are put back in it).
    assert "  data: " + json.dumps(result.data, separators=(",", ":"), ensure_ascii=False) in user
    # After any other action the result is gone, and the prompt says so.
    plain = dataclasses.replace(obs, tool_result=None)
    assert "(your last action was not a tool call)" in render_prompt(plain)[1]["content"]


def test_the_source_tasks_prompts_and_schemas_never_mention_tools():
    for task_id in TASKS:
        obs, _ = _observation_after_asking(task_id, 1)
        text = "\n".join(m["content"] for m in render_prompt(obs))
        assert "use_tool" not in text and "look_up_order" not in text and "tool call" not in text
        assert [t["function"]["name"] for t in action_tools(task_id)] == list(ACTION_KINDS)


@pytest.mark.parametrize(
    "reply",
    [
        '{"action": "use_tool", "tool": "issue_refund", "arguments": {"order_id": "ORD-1", "amount": "12.50"}}',
        '{"action_type": "use_tool", "tool": "issue_refund", "arguments": {"order_id": "ORD-1", "amount": 12.50}}',
        '{"action": "use_tool", "tool": "issue_refund", "arguments": {"amount": "12.50", "order_id": "ORD-1"}}',
        '{"action": "use_tool", "tool": "issue_refund", "order_id": "ORD-1", "amount": "12.50"}',
        '{"action": "use_tool", "tool": "Issue_Refund", '
        '"arguments": "{\\"order_id\\": \\"ORD-1\\", \\"amount\\": 12.50}"}',
        '{"action": "issue_refund", "order_id": "ORD-1", "amount": "12.50"}',
        '{"name": "use_tool", "arguments": {"tool": "issue_refund", '
        '"arguments": {"order_id": "ORD-1", "amount": "12.50"}}}',
        'Refunding now:\n```json\n{"action": "use_tool", "tool": "issue_refund", "arguments": {"order_id": "ORD-1", '
        '"amount": "12.50"}}\n```',
    ],
)
def test_parses_a_use_tool_reply(reply):
    from supportenv.actions import use_tool

    action = parse_action(reply)
    expected = use_tool("issue_refund", order_id="ORD-1", amount="12.50")
    assert action.kind == "use_tool" and action.tool == "issue_refund", action.error
    assert dict(action.arguments)["order_id"] == "ORD-1" and float(dict(action.arguments)["amount"]) == 12.5
    assert [k for k, _ in action.arguments] == [k for k, _ in expected.arguments]  # the tool's argument order


def test_use_tool_replies_that_do_not_validate_are_invalid_with_a_clear_error():
    cases = {
        '{"action": "use_tool"}': "use_tool needs a tool",
        '{"action": "use_tool", "tool": "delete_everything"}': "unknown tool 'delete_everything'",
        '{"action": "use_tool", "tool": "look_up_order", "arguments": {}}': "look_up_order needs order_id",
        '{"action": "use_tool", "tool": "look_up_order", "arguments": {"order_id": null}}': "must be a string",
        '{"action": "use_tool", "tool": "look_up_order", "arguments": {"order_id": ["x"]}}': "must be a string",
        '{"action": "use_tool", "tool": "look_up_order", "arguments": {"order": "ORD-1"}}': "look_up_order takes",
        '{"action": "use_tool", "tool": "issue_refund", "arguments": {"order_id": "O", "amount": "lots"}}': "a number",
        '{"action": "use_tool", "tool": "look_up_order", "arguments": 7}': "must be a JSON object",
    }
    for reply, error in cases.items():
        action = parse_action(reply)
        assert action.kind == INVALID_KIND and error in action.error, (reply, action.error)


def test_an_action_the_task_does_not_take_is_an_invalid_step_not_a_crash():
    from supportenv.tasks import get_task

    reply = '{"action": "use_tool", "tool": "check_service_status", "arguments": {}}'
    allowed = get_task("end_to_end_resolution").allowed_actions
    action = parse_action(reply, allowed)
    assert action.kind == INVALID_KIND and "does not take use_tool" in action.error
    assert parse_tool_call("check_service_status", {}, allowed).kind == INVALID_KIND
    assert parse_action(reply, get_task(EXPERT).allowed_actions).tool == "check_service_status"
    env = SupportEnv(task_id="end_to_end_resolution", split="test", seed=1)
    obs = env.reset()
    obs, reward, *_ = env.step(parse_action(reply, obs.allowed_actions))
    assert reward < 0 and "does not take use_tool" in obs.last_action_feedback


def test_expert_tool_schemas_one_function_per_tool_named_by_the_tool():
    from supportenv.tools import TOOLS

    tools = action_tools(EXPERT)
    names = [t["function"]["name"] for t in tools]
    assert names == [*ACTION_KINDS, *(spec.name for spec in TOOLS)]
    assert action_tools() == action_tools("end_to_end_resolution")  # the old schemas, unchanged
    for spec, tool in zip(TOOLS, tools[len(ACTION_KINDS) :], strict=True):
        params = tool["function"]["parameters"]
        assert list(params["properties"]) == list(spec.arguments) == params["required"]
        assert spec.description in tool["function"]["description"]
        args = {a: ("12.50" if a == "amount" else "ORD-1") for a in spec.arguments}
        action = parse_tool_call(spec.name, json.dumps(args))
        assert (action.kind, action.tool, dict(action.arguments)) == ("use_tool", spec.name, args), action.error
    generic = parse_tool_call("use_tool", {"tool": "verify_identity", "arguments": {}})
    assert (generic.kind, generic.tool, generic.arguments) == ("use_tool", "verify_identity", ())


def test_llm_policy_offers_the_tools_on_the_expert_task():
    pytest.importorskip("openai")
    from baseline_agent.llm_policy import LLMPolicy

    obs = _expert_observation_after_a_look_up()
    order_id = dict(obs.revealed_facts)["order_id"]
    script = [("tool", "look_up_order", json.dumps({"order_id": order_id})), json.dumps({"action": "mark_resolved"})]
    with ScriptedModel(script) as model:
        policy = LLMPolicy(model="m", base_url=model.url, api_key="k", tool_calls=True, timeout_s=10)
        policy.begin(EXPERT, "validation", 3)
        action = policy.act(obs)
        assert (action.kind, action.tool, action.arguments) == ("use_tool", "look_up_order", (("order_id", order_id),))
        assert policy.act(obs).kind == "mark_resolved"
    names = [t["function"]["name"] for t in model.requests[0]["tools"]]
    assert "issue_refund" in names and "use_tool" not in names


def test_a_reply_as_the_prompt_writes_it_is_an_action_dict_of_the_library_too():
    """A newcomer played a ticket with supportenv.play, then passed the same JSON to
    SupportEnv.step and got "an action dict needs 'action_type'" (walk-through, 2026-12-04)."""
    replies = [
        {"action": "classify_issue", "category": "billing", "priority": "high", "issue_type": "double_charge"},
        {"action": "ask_for_more_info", "fields": ["order_id", "amount"], "question": "Which order was it?"},
        {"action": "respond_with_solution", "message": "I have refunded the duplicate.", "article_id": "KB-PAY-01"},
        {"action": "suggest_knowledge_base", "article_id": "KB-PAY-01"},
        {"action": "assign_department", "department": "billing", "note": "duplicate charge"},
        {"action": "escalate_to_human", "reason": "over the cap"},
        {"action": "request_callback", "reason": "wants a call"},
        {"action": "mark_resolved", "summary": "refunded"},
        {"action": "use_tool", "tool": "look_up_order", "arguments": {"order_id": "ORD-123456"}},
    ]
    assert {r["action"] for r in replies} >= set(ACTION_SPECS)
    for reply in replies:
        assert parse(reply) == parse_action(json.dumps(reply)), reply
