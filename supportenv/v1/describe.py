"""DescribeEnvironment's reply: the world as a model is shown it, built from the very data the
library and its LLM prompt use (supportenv.catalog, tasks, tools, rewards, graders, llm), so a
client in another language presents exactly what a Python agent sees. clients/node/prompt.js
renders supportenv.llm's system prompt from it, byte for byte (tests/test_describe.py)."""

from __future__ import annotations

import json
from functools import lru_cache

from supportenv import llm
from supportenv.catalog import (
    ACTION_COSTS,
    ARTICLE_NEEDS,
    ARTICLES,
    CATEGORIES,
    DEPARTMENTS,
    HELD_OUT_POLICY_VARIANTS,
    ISSUE_TYPES,
    POLICY_VARIANTS,
    PRIORITIES,
    REQUESTABLE_FIELDS,
    TOOL_KIND,
    PolicyVariant,
    desk_rules,
    policy_rules,
)
from supportenv.episode import Observation
from supportenv.graders import gate_rules
from supportenv.rewards import REWARD_TABLE
from supportenv.tasks import ALL_TASKS, Task
from supportenv.tools import CHANGE, TOOLS, ToolSpec
from supportenv.v1 import convert, env_pb2
from supportenv.world import SPLITS


def _schema_json(function: dict) -> str:
    """An OpenAI function's parameters as canonical JSON."""
    return json.dumps(function["function"]["parameters"], sort_keys=True, separators=(",", ":"))


def _task(task: Task) -> env_pb2.TaskDescription:
    return env_pb2.TaskDescription(
        task=convert.task_to_pb(task),
        components=[env_pb2.WeightedComponent(name=name, weight=weight) for name, weight in task.components],
        gates=[env_pb2.GateRule(name=name, rule=rule) for name, rule in gate_rules(task.task_id).items()],
        grading=llm.grading_rule(task.task_id),
        rules=llm.task_rules(task.task_id),
    )


def _actions() -> list[env_pb2.ActionDescription]:
    functions = {f["function"]["name"]: f for f in llm.action_tools()}
    return [
        env_pb2.ActionDescription(
            kind=kind,
            description=what,
            parameters_json_schema=_schema_json(functions[kind]),
            required=required,
            cost=ACTION_COSTS.get(kind, 0.0),
            example=llm.action_example(kind),
        )
        for kind, (what, _, required) in llm.ACTION_SPECS.items()
    ]


def _use_tool() -> env_pb2.ActionDescription:
    schema = {
        "type": "object",
        "properties": {
            "tool": {"type": "string", "enum": [spec.name for spec in TOOLS]},
            "arguments": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "required": ["tool", "arguments"],
        "additionalProperties": False,
    }
    return env_pb2.ActionDescription(
        kind=TOOL_KIND,
        description=llm.USE_TOOL_WHAT,
        parameters_json_schema=json.dumps(schema, sort_keys=True, separators=(",", ":")),
        required=["tool", "arguments"],
        cost=0.0,  # each tool has its own cost (ToolDescription.cost)
        example=llm.USE_TOOL_EXAMPLE,
    )


def _tool(spec: ToolSpec, function: dict) -> env_pb2.ToolDescription:
    return env_pb2.ToolDescription(
        name=spec.name,
        description=spec.description,
        arguments=spec.arguments,
        cost=spec.cost,
        changes_records=spec.kind == CHANGE,
        needs_verification=spec.needs_verification,
        parameters_json_schema=_schema_json(function),
        example=llm.tool_example(spec),
    )


def _policy_variant(variant: PolicyVariant) -> env_pb2.PolicyVariantDescription:
    return env_pb2.PolicyVariantDescription(
        name=variant.name,
        refund_caps=[env_pb2.RefundCap(tier=tier, dollars=cap) for tier, cap in variant.refund_caps],
        rules=policy_rules(variant),
        desk_rules=desk_rules(variant),
        splits=("test",) if variant.name in HELD_OUT_POLICY_VARIANTS else SPLITS,
    )


@lru_cache(maxsize=1)
def _description_bytes() -> bytes:
    """The reply without an episode's prompt; the same for every call, so built once."""
    tool_functions = {f["function"]["name"]: f for f in llm.action_tools(_a_tool_task())}
    reply = env_pb2.DescribeEnvironmentResponse(
        tasks=[_task(task) for task in ALL_TASKS],
        actions=_actions(),
        use_tool=_use_tool(),
        tools=[_tool(spec, tool_functions[spec.name]) for spec in TOOLS],
        knowledge_base=[
            env_pb2.ArticleDescription(
                article_id=a.article_id, title=a.title, steps=a.steps, needs=ARTICLE_NEEDS.get(a.article_id, ())
            )
            for a in ARTICLES
        ],
        issue_types=[
            env_pb2.IssueTypeDescription(issue_id=i.issue_id, category=i.category, title=i.title) for i in ISSUE_TYPES
        ],
        categories=CATEGORIES,
        priorities=PRIORITIES,
        departments=DEPARTMENTS,
        requestable_fields=REQUESTABLE_FIELDS,
        policy_variants=[_policy_variant(v) for v in POLICY_VARIANTS.values()],
        rewards=[
            env_pb2.RewardRule(name=name, value=value, applies=when) for name, (value, when) in REWARD_TABLE.items()
        ],
        prompt=env_pb2.PromptTexts(
            intro=llm.INTRO,
            tools_header=llm.TOOLS_HEADER,
            knowledge_base_header=llm.KNOWLEDGE_BASE_HEADER,
            output_format=llm.OUTPUT_FORMAT,
            example_reply=llm.EXAMPLE_REPLY,
            tool_example_reply=llm.TOOL_EXAMPLE_REPLY,
            tool_call_output_format=llm.TOOL_CALL_OUTPUT_FORMAT,
            json_reply_line=llm.JSON_REPLY_LINE,
            tool_call_reply_line=llm.TOOL_CALL_REPLY_LINE,
        ),
    )
    return reply.SerializeToString()


def _a_tool_task() -> str:
    return next(t.task_id for t in ALL_TASKS if TOOL_KIND in t.allowed_actions)


def describe_environment(obs: Observation | None = None) -> env_pb2.DescribeEnvironmentResponse:
    """The whole description; with an observation, also the prompt supportenv.llm writes for it."""
    reply = env_pb2.DescribeEnvironmentResponse.FromString(_description_bytes())
    if obs is not None:
        system, user = llm.render_prompt(obs)
        reply.system_prompt, reply.user_prompt = system["content"], user["content"]
    return reply
