"""DescribeEnvironment: the world over the contract, from the library's own data. Its parts are
the library's (tasks, actions and their schemas, tools, knowledge base, policy variants, rewards,
grader components and gates); with a state token it gives the prompt supportenv.llm writes for that
episode; and a Node.js script holding only the .proto files renders, from it and each observation,
the same system prompt as supportenv.llm, byte for byte, on 60 observations of every task and split."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import grpc
import pytest

from baseline_agent.embedded import EmbeddedServices
from baseline_agent.policies import make_policy
from supportenv import llm
from supportenv.catalog import ARTICLES, ISSUE_TYPES, POLICY_VARIANTS, TOOL_KIND, desk_rules, policy_rules
from supportenv.env import SupportEnv
from supportenv.graders import gate_rules
from supportenv.rewards import REWARD_TABLE
from supportenv.tasks import ALL_TASKS
from supportenv.tools import TOOLS
from supportenv.v1 import env_pb2
from supportenv.v1.client import EnvClient, SessionClient
from supportenv.world import SPLITS
from tests.npm import npm_ci

ROOT = Path(__file__).resolve().parent.parent
NODE_CLIENT = ROOT / "clients" / "node"
NODE, NPM = shutil.which("node"), shutil.which("npm")

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def services():
    with EmbeddedServices() as running:
        yield running


@pytest.fixture(scope="module")
def description(services) -> env_pb2.DescribeEnvironmentResponse:
    with EnvClient(services.env.address) as client:
        return client.describe()


def test_the_description_is_the_librarys(description):
    assert [t.task.task_id for t in description.tasks] == [t.task_id for t in ALL_TASKS]
    for told, task in zip(description.tasks, ALL_TASKS, strict=True):
        assert list(told.task.allowed_actions) == list(task.allowed_actions)
        assert told.task.max_steps == task.max_steps and told.task.weight == task.weight
        assert [(c.name, c.weight) for c in told.components] == list(task.components)
        assert {g.name: g.rule for g in told.gates} == gate_rules(task.task_id)
        assert told.grading == llm.grading_rule(task.task_id) and told.rules == llm.task_rules(task.task_id)
    functions = {f["function"]["name"]: f["function"] for f in llm.action_tools("expert_resolution")}
    assert [a.kind for a in description.actions] == list(llm.ACTION_SPECS)
    for action in description.actions:
        assert json.loads(action.parameters_json_schema) == functions[action.kind]["parameters"]
        assert action.description == functions[action.kind]["description"]
        assert list(action.required) == functions[action.kind]["parameters"]["required"]
    assert description.use_tool.kind == TOOL_KIND
    assert [t.name for t in description.tools] == [spec.name for spec in TOOLS]
    for told, spec in zip(description.tools, TOOLS, strict=True):
        assert json.loads(told.parameters_json_schema) == functions[spec.name]["parameters"]
        assert (told.cost, told.needs_verification, list(told.arguments)) == (
            spec.cost,
            spec.needs_verification,
            list(spec.arguments),
        )
    assert [a.article_id for a in description.knowledge_base] == [a.article_id for a in ARTICLES]
    assert [(i.issue_id, i.category) for i in description.issue_types] == [
        (i.issue_id, i.category) for i in ISSUE_TYPES
    ]
    variants = {v.name: v for v in description.policy_variants}
    assert set(variants) == set(POLICY_VARIANTS)
    for name, variant in POLICY_VARIANTS.items():
        assert list(variants[name].rules) == list(policy_rules(variant))
        assert list(variants[name].desk_rules) == list(desk_rules(variant))
    assert list(variants["strict_caps"].splits) == ["test"] and list(variants["standard"].splits) == list(SPLITS)
    assert {r.name: (r.value, r.applies) for r in description.rewards} == REWARD_TABLE
    assert not description.system_prompt and not description.user_prompt  # no token, no episode


@pytest.mark.parametrize("task", [t.task_id for t in ALL_TASKS])
def test_with_a_token_it_gives_the_episodes_prompt(services, task):
    """Unary tokens at every step of an oracle episode, and a Session's token: each gives the
    prompt the library writes for the observation it carries."""
    oracle, env = make_policy("oracle"), SupportEnv(task, "validation", 4)
    oracle.begin(task, "validation", 4)
    obs = env.reset()
    with EnvClient(services.env.address) as client:
        client.reset(task, "validation", 4)
        while True:
            told = client.describe(with_prompt=True)
            assert [told.system_prompt, told.user_prompt] == [m["content"] for m in llm.render_prompt(obs)]
            action = oracle.act(obs)
            obs, _, done, _ = env.step(action)
            _, _, terminated, truncated, _ = client.step(action)
            assert terminated or truncated or not done
            if done:
                break
    with EnvClient(services.env.address) as client:
        client.token = asyncio.run(_session_token(services.env.address, task))
        assert client.describe(with_prompt=True).system_prompt == llm.system_prompt(
            SupportEnv(task, "validation", 4).reset()
        )


async def _session_token(address: str, task: str) -> bytes:
    """The state token a Session stream's reset gives (it resumes with it)."""
    async with SessionClient(address) as session:
        await session.reset(task, "validation", 4)
        return session.token


def test_a_bad_token_is_refused_as_step_refuses_it(services):
    with EnvClient(services.env.address) as client:
        for token in (b"garbage", b"\x05" + b"x" * 40):
            client.token = token
            with pytest.raises(grpc.RpcError) as described:
                client.describe(with_prompt=True)
            with pytest.raises(grpc.RpcError) as stepped:
                client.step({"action": "mark_resolved"})
            assert described.value.code() == stepped.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert described.value.details() == stepped.value.details()


# Every task on every split, 5 seeds each: 60 observations, the test split's held-out policy among them.
EPISODES = [(t.task_id, split, seed) for t in ALL_TASKS for split in SPLITS for seed in range(5)]


def _node_prompts(address: str, episodes: list[tuple[str, str, int]], *flags: str) -> list[dict]:
    listed = ",".join(f"{task}:{split}:{seed}" for task, split, seed in episodes)
    done = subprocess.run(
        [NODE, "prompt.js", "--env", address, "--episodes", listed, *flags],
        cwd=NODE_CLIENT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"prompt.js exited {done.returncode}:\n{done.stderr}"
    rendered = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["task_id"], r["split"], r["seed"]) for r in rendered] == episodes
    return rendered


@pytest.mark.skipif(NODE is None or NPM is None, reason="node and npm are needed for the Node.js client")
def test_node_renders_the_same_system_prompt(services):
    npm_ci(NODE_CLIENT)
    policies = set()
    for line, (task, split, seed) in zip(_node_prompts(services.env.address, EPISODES), EPISODES, strict=True):
        obs = SupportEnv(task, split, seed).reset()
        assert line["system_prompt"] == llm.system_prompt(obs), f"{task} {split} {seed}"
        policies.add(obs.policy)
    held_out = policy_rules(POLICY_VARIANTS["strict_caps"])
    assert any(policy[: len(held_out)] == held_out for policy in policies)  # the held-out policy was rendered too
    # Worded for a function-calling model, as system_prompt(obs, tool_calls=True).
    some = EPISODES[::7]
    for line, (task, split, seed) in zip(_node_prompts(services.env.address, some, "--tool-calls"), some, strict=True):
        assert line["system_prompt"] == llm.system_prompt(SupportEnv(task, split, seed).reset(), tool_calls=True)
