"""Language-model agents' side of the environment: the prompt and the parser.

- `render_prompt(obs)` turns an Observation into chat messages: a system message with
  the task, the eight actions, their JSON parameters and allowed values, the public
  knowledge base, the policy rules and the output format; and a user message with
  what the agent sees now. Only the observation and the public catalog go in, so
  no hidden fact can leak into a prompt.
- `parse_action(text)` reads a model's reply: a JSON object such as
  {"action": "classify_issue", "category": "billing", "priority": "high", "issue_type": "double_charge"}
  (bare, inside ```json fences or surrounded by prose), or a tool call written as JSON
  ({"name": "classify_issue", "arguments": {...}}, the arguments possibly a JSON string).
- `action_tools(task_id)` gives OpenAI-style function schemas for tool-calling models, and
  `parse_tool_call(name, arguments)` reads one tool call.

The help desk's tools (supportenv.tools; only tasks whose `allowed_actions` include use_tool,
i.e. expert_resolution): the prompt lists use_tool and every tool (its arguments, what it does,
its cost, whether it needs the customer verified) and shows the last call's result (status,
message, data as compact JSON). A reply calls a tool as
{"action": "use_tool", "tool": "issue_refund", "arguments": {"order_id": "ORD-1", "amount": "12.50"}}
(numbers are accepted for argument values), or names the tool as the action:
{"action": "issue_refund", "order_id": "ORD-1", "amount": 12.5}. For function-calling models
each tool is its own function, named by the tool itself (`issue_refund`, whose parameters are
the tool's arguments): tool names never clash with the action kinds, a model reads one
function per tool more reliably than a tool enum beside free-form arguments, and
`parse_tool_call("issue_refund", {...})` reads it back as the use_tool action. A generic
`use_tool` function (tool, arguments) is accepted too, but not offered. The three source tasks'
prompts and schemas do not mention tools at all.

The parsers never raise: anything that does not parse or validate becomes
`invalid(raw_text, error)`, which the environment applies as a penalised step and whose
error the agent reads in the next observation's `last_action_feedback`.

Pure: no network, no clock, no randomness.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from supportenv.actions import ACTION_KINDS, INVALID_KIND, Action, invalid, parse
from supportenv.catalog import (
    ACTION_COSTS,
    ARTICLE_NEEDS,
    ARTICLES,
    CATEGORIES,
    DEPARTMENTS,
    ISSUE_TYPES,
    PRIORITIES,
    REQUESTABLE_FIELDS,
    TOOL_KIND,
)
from supportenv.episode import Observation
from supportenv.errors import InvalidActionError
from supportenv.graders import gate_rules, share_rule
from supportenv.tasks import get_task
from supportenv.tools import DATA_KEY_ORDER, TOOLS, TOOLS_BY_NAME, ToolResult, ToolSpec

ARTICLE_IDS = tuple(a.article_id for a in ARTICLES)
EXAMPLE_REPLY = '{"action": "classify_issue", "category": "billing", "priority": "high", "issue_type": "double_charge"}'
# Keys naming the action in a reply, in order of preference.
_KIND_KEYS = ("action", "action_type", "kind", "name")
# Keys that carry an action's parameters as one nested object.
_PARAM_KEYS = ("arguments", "parameters", "params", "args")
_ENUM_KEYS = ("category", "priority", "issue_type", "department")
_FENCE_RE = re.compile(r"```[a-zA-Z]*[ \t]*\n?(.*?)```", re.S)
_THINK_RE = re.compile(r"<think>.*?</think>", re.S | re.I)
_MAX_SCAN = 200  # '{' positions tried when looking for JSON inside prose

# kind -> (what it does, {parameter: JSON schema}, required parameters)
_STRING = {"type": "string"}
ACTION_SPECS: dict[str, tuple[str, dict[str, dict[str, Any]], tuple[str, ...]]] = {
    "classify_issue": (
        "Set the ticket's category, issue type and priority. Do it once, before answering.",
        {
            "category": {"type": "string", "enum": list(CATEGORIES)},
            "priority": {"type": "string", "enum": list(PRIORITIES)},
            "issue_type": {"type": "string", "enum": [i.issue_id for i in ISSUE_TYPES]},
        },
        ("category", "priority", "issue_type"),
    ),
    "ask_for_more_info": (
        "Ask the customer for facts you need, by field name, with an optional question.",
        {
            "fields": {"type": "array", "items": {"type": "string", "enum": list(REQUESTABLE_FIELDS)}},
            "question": _STRING,
        },
        ("fields",),
    ),
    "respond_with_solution": (
        "Answer the customer with the solution, naming the knowledge-base article it comes from.",
        {"message": _STRING, "article_id": {"type": "string", "enum": list(ARTICLE_IDS)}},
        ("message",),
    ),
    "suggest_knowledge_base": (
        "Send the customer a knowledge-base article.",
        {"article_id": {"type": "string", "enum": list(ARTICLE_IDS)}},
        ("article_id",),
    ),
    "assign_department": (
        "Route the ticket to a department.",
        {"department": {"type": "string", "enum": list(DEPARTMENTS)}, "note": _STRING},
        ("department",),
    ),
    "escalate_to_human": (
        "Hand the ticket to a human specialist; the reason is what you tell the customer.",
        {"reason": _STRING},
        (),
    ),
    "request_callback": ("Schedule a phone callback for the customer.", {"reason": _STRING}, ()),
    "mark_resolved": (
        "Close the ticket. This ends the episode; the customer is told the ticket is closed (and may reply), "
        "and the summary is an internal note the customer does not see.",
        {"summary": _STRING},
        (),
    ),
}
assert tuple(ACTION_SPECS) == ACTION_KINDS
USE_TOOL_WHAT = (
    "Call one of the help desk's tools (listed below) on the customer's records; its result (status, "
    "message and data) shows in the next observation."
)
USE_TOOL_EXAMPLE = f'{{"action": "{TOOL_KIND}", "tool": "<tool>", "arguments": {{"<argument>": "<value>"}}}}'
TOOL_EXAMPLE_REPLY = (
    '{"action": "use_tool", "tool": "issue_refund", "arguments": {"order_id": "ORD-123456", "amount": "12.50"}}'
)
# Keys that may name the tool of a use_tool reply.
_TOOL_KEYS = ("tool", "tool_name")
assert not set(TOOLS_BY_NAME) & {*ACTION_KINDS, TOOL_KIND, INVALID_KIND}, "a tool's function name is the tool's"


class _ReplyError(Exception):
    """The reply could not be read as an action; the message says why."""


# ---- prompt ----


def action_example(kind: str) -> str:
    """A reply taking this action, its parameters as placeholders (the prompt shows it)."""
    _, params, _ = ACTION_SPECS[kind]
    example: dict[str, Any] = {"action": kind}
    for name, schema in params.items():
        if schema.get("type") == "array":
            example[name] = ["<field>", "..."]
        elif "enum" in schema:
            example[name] = f"<{name}>"
        else:
            example[name] = "<text>"
    return json.dumps(example)


_TRIAGE_RULE = (
    "A message may raise more than one issue: classify the ticket by the first issue it raises (an issue the "
    "customer only mentions from the past does not count, nor "
    "does small talk about anything that is not one of the issue types below), with the ticket's priority as the "
    "policy gives it: from what the customer says of how much the problem holds them up, whichever issue it is "
    "said of."
)
_HANDLING_RULE = (
    " Handle every issue: answer what you can solve (one answer may cover several issues: say each "
    "solution in words and cite the article of one of them), route and escalate what policy requires; "
    "safe first steps for an issue you must escalate may come before the escalation. Facts come "
    "only from the customer: ask for them by field name. The customer reads your questions, answers, "
    "escalation and callback reasons (never department notes), and they are judged for tone."
)


def grading_rule(task_id: str) -> str:
    """The prompt's grading sentence: the components' weights, the pass mark and the gates."""
    rules = "; ".join(gate_rules(task_id).values())
    task = get_task(task_id)
    share = share_rule(task_id)
    return (
        "Grading: the score is partial credit over the task's components (weights "
        + ", ".join(f"{name} {weight:g}" for name, weight in task.components)
        + (f"; {share}" if share else "")
        + f"); the ticket passes when the score is at least {task.pass_threshold:g} and every gate holds: {rules}."
    )


def takes_tools(obs: Observation) -> bool:
    """Whether the observation's task takes use_tool (the observation says; else its task)."""
    allowed = obs.allowed_actions or get_task(obs.task_id).allowed_actions
    return TOOL_KIND in allowed


def tool_example(spec: ToolSpec) -> str:
    """A use_tool reply calling this tool, its arguments as placeholders."""
    return json.dumps({"action": TOOL_KIND, "tool": spec.name, "arguments": {a: f"<{a}>" for a in spec.arguments}})


def _tool_line(spec: ToolSpec) -> str:
    signature = f"{spec.name}({', '.join(spec.arguments)})"
    kind = "a look-up" if spec.kind == "look_up" else "a change"
    verified = (
        "needs the customer verified first (verify_identity)" if spec.needs_verification else "no verification needed"
    )
    return f"- {signature}: {spec.description} Cost ${spec.cost:.2f}; {kind}; {verified}.\n  {tool_example(spec)}"


def _tools_section() -> str:
    return TOOLS_HEADER + "\n" + "\n".join(_tool_line(spec) for spec in TOOLS)


_TOOL_RULE = (
    " On this task the customer's records are also read and changed, only with use_tool (one tool call per "
    "step; its result shows in the next observation only, so note what you need from it); what you look up "
    "is not a fact the customer gave."
)


# The fixed texts of the system prompt (DescribeEnvironment's PromptTexts gives them to other clients).
INTRO = (
    "You are a customer-support agent working one ticket, one action per turn. Each action is "
    "rewarded or penalised; the finished conversation is graded."
)
TOOLS_HEADER = (
    "Tools (for use_tool; every argument value is a string; a tool with no arguments takes an empty "
    '"arguments" object):'
)
KNOWLEDGE_BASE_HEADER = (
    "Knowledge base (article_id, title (the facts it needs before it can be applied): steps). An answer "
    "must say the solution in words; citing an article_id alone is not an answer:"
)
OUTPUT_FORMAT = (
    "Output format: reply with one JSON object and nothing else, no prose and no code fences. "
    'Its "action" key names the action; the other keys are that action\'s parameters. Example:'
)
# For a model that acts by function calls (tool_calls=True): the last section and the user prompt's last line.
TOOL_CALL_OUTPUT_FORMAT = (
    "Output format: take each action by calling the function of the same name, one call per turn, with the "
    "action's parameters (on the help desk, call the tool's own function with its arguments). The function's "
    "reply is what you see next: your reward and feedback, then the ticket as it stands."
)
JSON_REPLY_LINE = "Choose the next action. Reply with one JSON object only."
TOOL_CALL_REPLY_LINE = "Choose the next action: call one function."


def task_rules(task_id: str, tools: bool | None = None) -> str:
    """The prompt's rules paragraph for a task: triage; then handling; then, with tools (by
    default where the task takes them), the records."""
    if task_id == "issue_classification":
        return _TRIAGE_RULE
    tools = TOOL_KIND in get_task(task_id).allowed_actions if tools is None else tools
    return _TRIAGE_RULE + _HANDLING_RULE + (_TOOL_RULE if tools else "")


def _action_line(kind: str) -> str:
    what, _, required = ACTION_SPECS[kind]
    cost = ACTION_COSTS.get(kind, 0.0)
    needs = f"required: {', '.join(required)}" if required else "all parameters optional"
    return f"- {kind}: {what} Cost ${cost:.0f}; {needs}.\n  {action_example(kind)}"


def system_prompt(obs: Observation, tool_calls: bool = False) -> str:
    """The rules of the ticket's task; `tool_calls`: for a model that acts by function calls
    (action_tools) rather than by a JSON reply."""
    tools = takes_tools(obs)
    actions = [_action_line(kind) for kind in ACTION_SPECS]
    if tools:
        actions.append(
            f"- {TOOL_KIND}: {USE_TOOL_WHAT} Cost: the tool's; required: tool, and the tool's arguments.\n"
            f"  {USE_TOOL_EXAMPLE}"
        )
    issues = [f"  - {i.issue_id} ({i.category}): {i.title}" for i in ISSUE_TYPES]
    articles = [f"- {a.article_id} {a.title} ({_needs(a.article_id)}): {'; '.join(a.steps)}." for a in ARTICLES]
    policy = [f"- {rule}" for rule in obs.policy]
    sections = [
        INTRO,
        f"Task: {obs.task_instructions}",
        grading_rule(obs.task_id),
        task_rules(obs.task_id, tools),
        "Actions (reply with exactly one):\n" + "\n".join(actions),
        *([_tools_section()] if tools else []),
        "Allowed values:\n"
        f"- category: {', '.join(CATEGORIES)}\n"
        f"- priority: {', '.join(PRIORITIES)}\n"
        f"- department: {', '.join(DEPARTMENTS)}\n"
        f"- fields (facts you can ask for): {', '.join(REQUESTABLE_FIELDS)}\n"
        "- issue_type (with its category):\n" + "\n".join(issues),
        KNOWLEDGE_BASE_HEADER + "\n" + "\n".join(articles),
        "Policy rules:\n" + "\n".join(policy),
        TOOL_CALL_OUTPUT_FORMAT
        if tool_calls
        else OUTPUT_FORMAT + "\n" + EXAMPLE_REPLY + (f"\nA tool call:\n{TOOL_EXAMPLE_REPLY}" if tools else ""),
    ]
    return "\n\n".join(sections)


def _needs(article_id: str) -> str:
    needs = ARTICLE_NEEDS.get(article_id, ())
    return "needs: " + ", ".join(needs) if needs else "needs no facts"


def _yes_no(value: bool) -> str:
    return "yes" if value else "no"


def _last_reward(obs: Observation) -> str:
    """The last step's reward and its named parts, e.g. "+0.40 (classify_correct +0.30, priority_correct +0.10)"."""
    if obs.step == 0:  # the action_selection task's opening steps were a colleague's, not the agent's
        return "(no action yet)"
    parts = ", ".join(f"{name} {value:+.2f}" for name, value in obs.last_reward_breakdown)
    return f"{obs.last_reward:+.2f}" + (f" ({parts})" if parts else "")


def user_prompt(obs: Observation, tool_calls: bool = False) -> str:
    """What the agent sees now; `tool_calls`: as system_prompt's."""
    history = [f"[step {n}] {speaker}: {text}" for speaker, text, n in obs.history]
    facts = [f"- {name}: {value}" for name, value in obs.revealed_facts]
    matches = [f"- {a} ({title}; {_needs(a)}): score {score:.2f}" for a, title, score in obs.kb_matches]
    triage = ", ".join(
        f"{name} {value or 'not set'}"
        for name, value in (("category", obs.category), ("issue type", obs.issue_type), ("priority", obs.priority))
    )
    lines = [
        f"Ticket {obs.ticket_id} (task {obs.task_id}). Step {obs.step} of {obs.max_steps}; "
        f"{obs.steps_left} steps left; cost so far ${obs.cost_so_far:.2f}.",
        f"Customer: tier {obs.customer_tier}, tenure {obs.customer_tenure_days} days, "
        f"total revenue ${obs.customer_total_revenue:,.2f}, sentiment {obs.sentiment_label} "
        f"({obs.sentiment_score:+.2f}).",
        f"Triage so far: {triage}. Department: {obs.assigned_department or 'none'}. "
        f"Escalated: {_yes_no(obs.escalated)}. Callback scheduled: {_yes_no(obs.callback_scheduled)}.",
        "",
        "Latest customer message:",
        obs.customer_message,
        "",
        "Conversation so far:",
        *(history or ["(none)"]),
        "",
        "Facts the customer has given:",
        *(facts or ["(none yet)"]),
        "",
        *(_tool_result_lines(obs.tool_result) if takes_tools(obs) else []),
        "Knowledge-base suggestions (the article of the issue type you set, then the other articles of the "
        "category you set by keyword score against the ticket; they can be misleading):",
        *(
            matches
            or [
                "(none until the ticket is classified)" if not obs.category else "(no article of that category matches)"
            ]
        ),
        "",
        f"Reward for your last action: {_last_reward(obs)}",
        f"Feedback on your last action: {obs.last_action_feedback or '(none)'}",
        "",
        TOOL_CALL_REPLY_LINE if tool_calls else JSON_REPLY_LINE,
    ]
    return "\n".join(lines)


_KEY_RANK = {key: rank for rank, key in enumerate(DATA_KEY_ORDER)}


def _in_reading_order(data: Any) -> Any:
    """`data` with every object's keys in the records' order (tools.DATA_KEY_ORDER; any other key
    after them, sorted): the same however the data came, in process or sorted off the wire."""
    if isinstance(data, dict):
        keys = sorted(data, key=lambda k: (_KEY_RANK.get(k, len(_KEY_RANK)), k))
        return {key: _in_reading_order(data[key]) for key in keys}
    if isinstance(data, list):
        return [_in_reading_order(item) for item in data]
    return data


def compact_json(data: Any) -> str:
    return json.dumps(_in_reading_order(data), ensure_ascii=False, separators=(",", ":"), default=str)


def format_tool_result(result: ToolResult) -> list[str]:
    """A tool call's result as lines of text: the tool, its status and message, then its data."""
    lines = [f"- {result.tool}: {result.status}: {result.message}"]
    lines.append(f"  data: {compact_json(result.data)}" if result.data else "  data: (none)")
    return lines


def _tool_result_lines(result: ToolResult | None) -> list[str]:
    shown = format_tool_result(result) if result is not None else ["(your last action was not a tool call)"]
    return ["Result of your last tool call (shown once; look it up again if you need it later):", *shown, ""]


def render_prompt(obs: Observation, tool_calls: bool = False) -> list[dict[str, str]]:
    """Chat messages for one decision: the rules (system) and the current observation (user);
    `tool_calls`: worded for a model that acts by function calls (action_tools), not JSON replies."""
    return [
        {"role": "system", "content": system_prompt(obs, tool_calls)},
        {"role": "user", "content": user_prompt(obs, tool_calls)},
    ]


# ---- tools ----


def _tool_function(spec: ToolSpec) -> dict[str, Any]:
    verified = " Needs the customer verified first (verify_identity)." if spec.needs_verification else ""
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": f"Tool ({TOOL_KIND}): {spec.description} Cost ${spec.cost:.2f}.{verified}",
            "parameters": {
                "type": "object",
                "properties": {name: dict(_STRING) for name in spec.arguments},
                "required": list(spec.arguments),
                "additionalProperties": False,
            },
        },
    }


def action_tools(task_id: str | None = None) -> list[dict[str, Any]]:
    """OpenAI tool (function) schemas for tool-calling models: one per action and, for a task
    that takes use_tool, one per help-desk tool, named by the tool (its parameters are the
    tool's arguments). Without a task: the eight actions."""
    with_tools = task_id is not None and TOOL_KIND in get_task(task_id).allowed_actions
    tools = []
    for kind, (what, params, required) in ACTION_SPECS.items():
        tools.append(
            {
                "type": "function",
                "function": {
                    "name": kind,
                    "description": what,
                    "parameters": {
                        "type": "object",
                        "properties": {name: dict(schema) for name, schema in params.items()},
                        "required": list(required),
                        "additionalProperties": False,
                    },
                },
            }
        )
    if with_tools:
        tools.extend(_tool_function(spec) for spec in TOOLS)
    return tools


# ---- parsing ----


def _decode_arguments(arguments: Any) -> dict[str, Any]:
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise _ReplyError(f"the tool call's arguments are not valid JSON: {exc}") from None
    if not isinstance(arguments, Mapping):
        raise _ReplyError(f"the action's arguments must be a JSON object, got {type(arguments).__name__}")
    return dict(arguments)


def _normalise(params: dict[str, Any]) -> dict[str, Any]:
    """Forgive harmless variations: enum case and spacing, fields given as one string."""
    out = dict(params)
    for key in _ENUM_KEYS:
        if isinstance(out.get(key), str):
            out[key] = out[key].strip().lower().replace(" ", "_")
    if isinstance(out.get("article_id"), str):
        out["article_id"] = out["article_id"].strip().upper()
    fields = out.get("fields")
    if isinstance(fields, str):
        fields = [f for f in re.split(r"[,\s]+", fields) if f]
    if isinstance(fields, list | tuple):
        out["fields"] = [f.strip().lower() if isinstance(f, str) else f for f in fields]
    for key, value in out.items():
        if value is None:
            out[key] = ""
    return out


def _argument_text(name: str, value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _ReplyError(f"the tool argument {name!r} must be a string (or a number), got {json.dumps(value)}")
    return str(value)


def _tool_action(tool: Any, params: dict[str, Any]) -> Action:
    """A use_tool action: the tool's name and its arguments, given nested (under "arguments" or
    another parameter key) or flat beside the tool."""
    if not isinstance(tool, str) or not tool.strip():
        raise _ReplyError(f"{TOOL_KIND} needs a tool, one of {', '.join(TOOLS_BY_NAME)}; e.g. {TOOL_EXAMPLE_REPLY}")
    arguments: dict[str, Any] = {}
    for key, value in params.items():
        if key in _PARAM_KEYS:
            arguments.update(_decode_arguments(value))
        elif key not in (*_KIND_KEYS, *_TOOL_KEYS):
            arguments[key] = value
    values = {str(name).strip(): _argument_text(str(name), value) for name, value in arguments.items()}
    spec = TOOLS_BY_NAME.get(tool.strip().lower())
    if spec is not None:  # the tool's own argument order, however the reply ordered them
        order = {name: n for n, name in enumerate(spec.arguments)}
        values = dict(sorted(values.items(), key=lambda item: order.get(item[0], len(order))))
    return parse({"action_type": TOOL_KIND, "tool": tool.strip().lower(), "arguments": values})


def _to_action(kind: Any, params: dict[str, Any]) -> Action:
    if not isinstance(kind, str) or not kind.strip():
        raise _ReplyError(f"the action name must be a non-empty string, got {json.dumps(kind)}")
    name = kind.strip().lower()
    if name == TOOL_KIND:
        return _tool_action(next((params[k] for k in (*_TOOL_KEYS, "name") if k in params), None), params)
    if name in TOOLS_BY_NAME:  # a tool named as the action (a tool function's call)
        return _tool_action(name, params)
    data = {k: v for k, v in _normalise(params).items() if k not in (*_KIND_KEYS, *_PARAM_KEYS)}
    if not isinstance(data.get("fields", []), list | tuple):
        raise _ReplyError("fields must be a list of field names")
    data["action_type"] = kind.strip().lower()
    return parse(data)


def _from_object(obj: Any) -> Action:
    """An action from a decoded JSON value in any of the accepted shapes."""
    if isinstance(obj, list):
        if len(obj) != 1:
            raise _ReplyError(f"expected one action, got a list of {len(obj)}")
        obj = obj[0]
    if not isinstance(obj, Mapping):
        raise _ReplyError(f"expected a JSON object, got {type(obj).__name__}")
    if isinstance(obj.get("tool_calls"), list) and obj["tool_calls"]:
        return _from_object(obj["tool_calls"][0])
    if isinstance(obj.get("function"), Mapping):  # {"type": "function", "function": {"name", "arguments"}}
        obj = obj["function"]
    key = next((k for k in _KIND_KEYS if k in obj), None)
    if key is None:
        raise _ReplyError(
            f'the JSON object has no "action" key (it has {", ".join(map(str, obj)) or "no keys"}); '
            f"expected e.g. {EXAMPLE_REPLY}"
        )
    if isinstance(obj[key], Mapping):  # {"action": {"name": ..., "arguments": ...}}
        return _from_object(obj[key])
    params = {k: v for k, v in obj.items() if k != key}
    for nested in _PARAM_KEYS:
        if nested in params:
            params.update(_decode_arguments(params.pop(nested)))
    return _to_action(obj[key], params)


def _looks_like_action(value: Any) -> bool:
    return isinstance(value, Mapping) and any(k in value for k in (*_KIND_KEYS, "function", "tool_calls"))


def _find_json(text: str) -> Any:
    """The JSON value a reply means: the whole text, a fenced block, or the first
    action-like object embedded in prose."""
    text = _THINK_RE.sub(" ", text).strip()
    if not text:
        raise _ReplyError(f"the reply is empty; expected one JSON object such as {EXAMPLE_REPLY}")
    candidates = [text, *(m.group(1).strip() for m in _FENCE_RE.finditer(text))]
    first_error = ""
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError as exc:
            first_error = first_error or str(exc)
    decoder = json.JSONDecoder()
    found = []
    for n, match in enumerate(re.finditer(r"[{\[]", text)):
        if n >= _MAX_SCAN:
            break
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if _looks_like_action(value):
            return value
        found.append(value)
    if any(isinstance(v, Mapping) for v in found):
        return next(v for v in found if isinstance(v, Mapping))
    if "{" in text:
        raise _ReplyError(f"the reply's JSON is malformed ({first_error}); expected e.g. {EXAMPLE_REPLY}")
    raise _ReplyError(f"the reply contains no JSON object; expected e.g. {EXAMPLE_REPLY}")


def _allowed(action: Action, allowed_actions: Sequence[str] | None, raw: str) -> Action:
    """The action, or an invalid one when the task does not take its kind (which a step would refuse)."""
    if not allowed_actions or action.kind == INVALID_KIND or action.kind in allowed_actions:
        return action
    return invalid(raw, f"this task does not take {action.kind}; its actions: {', '.join(allowed_actions)}")


def parse_action(text: str, allowed_actions: Sequence[str] | None = None) -> Action:
    """Read a model's reply as an Action. Never raises: anything unusable becomes an
    invalid action carrying the raw text and a clear error. Given the task's `allowed_actions`
    (an observation's), an action of any other kind (e.g. use_tool outside the expert task) is
    invalid too, as a penalised step rather than an error of the episode."""
    raw = text if isinstance(text, str) else repr(text)
    try:
        return _allowed(_from_object(_find_json(raw)), allowed_actions, raw)
    except (_ReplyError, InvalidActionError) as exc:
        return invalid(raw, str(exc))
    except Exception as exc:  # a parser must not crash an episode
        return invalid(raw, f"could not read the reply: {type(exc).__name__}: {exc}")


def parse_tool_call(
    name: str, arguments: str | Mapping[str, Any] | None, allowed_actions: Sequence[str] | None = None
) -> Action:
    """Read one tool call (function name and its arguments, a JSON string or a mapping): an
    action's function, or a help-desk tool's (named by the tool) as a use_tool action.
    Never raises, like parse_action."""
    try:
        raw = json.dumps({"name": name, "arguments": arguments}, default=str)
    except Exception:
        raw = repr((name, arguments))
    try:
        return _allowed(_to_action(name, _decode_arguments(arguments)), allowed_actions, raw)
    except (_ReplyError, InvalidActionError) as exc:
        return invalid(raw, str(exc))
    except Exception as exc:
        return invalid(raw, f"could not read the tool call: {type(exc).__name__}: {exc}")


def tool_call_of(action: Action) -> tuple[str, dict[str, Any]]:
    """The function call a function-calling model makes for `action` (the inverse of
    parse_tool_call): the function's name, as action_tools names it (a help-desk tool's own name
    for a use_tool action), and its arguments (an action's text in its kind's one free-text
    parameter: question, message, note, reason or summary; empty values left out)."""
    if action.kind == TOOL_KIND:
        return action.tool, dict(action.arguments)
    arguments: dict[str, Any] = {}
    for name, schema in ACTION_SPECS[action.kind][1].items():
        if name == "fields":
            value: Any = list(action.fields)
        elif schema == _STRING:
            value = action.text
        else:
            value = getattr(action, name)
        if value:
            arguments[name] = value
    return action.kind, arguments
