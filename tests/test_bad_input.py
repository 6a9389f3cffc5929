"""The bad-input matrix: every RPC of both services, over real gRPC, fed the inputs a
careless or hostile client sends. Each case names the documented status code it must
get (never UNKNOWN or INTERNAL) and, where it helps, words its message must contain.
After the matrix both services still report SERVING, and two episodes another client
started before it (one unary, one on a Session stream) carry on and finish normally.

BOUNDARIES is the other side of every limit: inputs right at a limit are accepted."""

from __future__ import annotations

import ast
import inspect
import queue
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from baseline_agent.embedded import start_service
from env_service import token_keys, tokens
from supportenv import expert
from supportenv.catalog import REQUESTABLE_FIELDS
from supportenv.episode import step as library_step
from supportenv.graders import grade_trajectory
from supportenv.replay import new_episode
from supportenv.tasks import EXPERT_TASK_ID, get_task
from supportenv.tools import MAX_ARGUMENT_CHARS
from supportenv.v1 import codec, convert, env_pb2, env_pb2_grpc, grader_pb2, server, status
from supportenv.v1 import limits as limits_module
from supportenv.v1 import types_pb2 as pb
from supportenv.v1.grader_pb2_grpc import GraderServiceStub
from supportenv.v1.limits import (
    MAX_ACTION_TEXT_CHARS,
    MAX_BATCH,
    MAX_EPISODE_ID_CHARS,
    MAX_MESSAGE_BYTES,
    MAX_TOKEN_BYTES,
)

TASK = "end_to_end_resolution"
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
OK = grpc.StatusCode.OK
INVALID = grpc.StatusCode.INVALID_ARGUMENT
NOT_FOUND = grpc.StatusCode.NOT_FOUND
PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION
EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED
DOCUMENTED = {INVALID, NOT_FOUND, PRECONDITION, EXHAUSTED}
TIMEOUT = 20

# Token layout, from the codec itself: version byte | (key id) | MAC | payload.
HEADER_BYTES = getattr(tokens, "HEADER_BYTES", 1 + tokens.MAC_BYTES)
MAC_AT = HEADER_BYTES - tokens.MAC_BYTES
KEY_ID_AT = 1 if MAC_AT > 1 else None


# ---- building blocks ----


def classify(category: int = pb.ISSUE_CATEGORY_BILLING, priority: int = 0, issue_type: str = "") -> pb.Action:
    return pb.Action(classify_issue=pb.ClassifyIssue(category=category, priority=priority, issue_type=issue_type))


def ask(*fields: str, question: str = "") -> pb.Action:
    return pb.Action(ask_for_more_info=pb.AskForMoreInfo(fields=fields, question=question))


def respond(message: str, article_id: str = "") -> pb.Action:
    return pb.Action(respond_with_solution=pb.RespondWithSolution(message=message, article_id=article_id))


def assign(department: int = pb.DEPARTMENT_BILLING, note: str = "") -> pb.Action:
    return pb.Action(assign_department=pb.AssignDepartment(department=department, note=note))


def resolve(summary: str = "done") -> pb.Action:
    return pb.Action(mark_resolved=pb.MarkResolved(summary=summary))


def tool(name: str, *arguments: tuple[str, str]) -> pb.Action:
    """A UseTool action as a client builds it: any name, any (argument, value) pairs."""
    pairs = [pb.ToolArgument(name=key, value=value) for key, value in arguments]
    return pb.Action(use_tool=pb.UseTool(tool=name, arguments=pairs))


EXPERT = EXPERT_TASK_ID
LOOK_UP = tool("look_up_order", ("order_id", "ORD-123456"))
# Malformed tool calls, each refused (INVALID_ARGUMENT) on the expert task, with words of its message.
BAD_TOOL_CALLS = {
    "no-tool-name": (tool(""), "unknown tool"),
    "unknown-tool": (tool("format_disk"), "unknown tool 'format_disk'"),
    "tool-name-100k": (tool("t" * 100_000), "unknown tool"),
    "missing-argument": (tool("look_up_order"), "needs order_id"),
    "blank-argument": (tool("look_up_order", ("order_id", "  ")), "needs order_id"),
    "unknown-argument": (tool("look_up_order", ("order_id", "ORD-1"), ("sql", "drop")), "takes order_id"),
    "argument-twice": (tool("look_up_order", ("order_id", "ORD-1"), ("order_id", "ORD-2")), "takes order_id"),
    "argument-for-no-argument-tool": (tool("verify_identity", ("account_email", "a@b.c")), "no arguments"),
    "argument-over-limit": (tool("look_up_order", ("order_id", "O" * (MAX_ARGUMENT_CHARS + 1))), "at most 200"),
    "refund-amount-not-a-number": (
        tool("issue_refund", ("order_id", "ORD-1"), ("amount", "lots")),
        "must be a number",
    ),
    "refund-amount-negative": (tool("issue_refund", ("order_id", "ORD-1"), ("amount", "-5")), "must be from"),
    "refund-amount-zero": (tool("issue_refund", ("order_id", "ORD-1"), ("amount", "0")), "must be from"),
    "refund-amount-nan": (tool("issue_refund", ("order_id", "ORD-1"), ("amount", "nan")), "must be from"),
    "refund-amount-inf": (tool("issue_refund", ("order_id", "ORD-1"), ("amount", "inf")), "must be from"),
    "refund-amount-huge": (tool("issue_refund", ("order_id", "ORD-1"), ("amount", "1e300")), "must be from"),
}


LONG = "x" * (MAX_ACTION_TEXT_CHARS + 1)
# Every free-text field of every action kind, one character over the limit.
OVERSIZED_TEXTS = {
    "ask-question": ask(question=LONG),
    "respond-message": respond(LONG),
    "assign-note": assign(note=LONG),
    "escalate-reason": pb.Action(escalate_to_human=pb.EscalateToHuman(reason=LONG)),
    "callback-reason": pb.Action(request_callback=pb.RequestCallback(reason=LONG)),
    "resolve-summary": resolve(LONG),
    "invalid-raw": pb.Action(invalid_action=pb.InvalidAction(raw=LONG, error="x")),
    "invalid-error": pb.Action(invalid_action=pb.InvalidAction(raw="x", error=LONG)),
}
# A legal action whose texts take the most room in a state token (JSON escapes control characters).
FAT = pb.Action(
    invalid_action=pb.InvalidAction(raw="\x00" * MAX_ACTION_TEXT_CHARS, error="\x01" * MAX_ACTION_TEXT_CHARS)
)


def reset_req(task_id: str = TASK, split: int = pb.SPLIT_TRAIN, seed: int = 0, episode_id: str = ""):
    return env_pb2.ResetRequest(task_id=task_id, split=split, seed=seed, episode_id=episode_id)


def step_req(token: bytes, action: pb.Action | None = None) -> env_pb2.StepRequest:
    return env_pb2.StepRequest(state_token=token, action=action)


def grade_req(task_id: str = TASK, actions=(), split: int = pb.SPLIT_TRAIN, seed: int = 0, episode_id: str = ""):
    trajectory = pb.Trajectory(task_id=task_id, split=split, seed=seed, actions=actions, episode_id=episode_id)
    return grader_pb2.GradeRequest(trajectory=trajectory)


def session(*requests: env_pb2.SessionRequest) -> list[env_pb2.SessionRequest]:
    return list(requests)


def s_reset(**kw: Any) -> env_pb2.SessionRequest:
    return env_pb2.SessionRequest(reset=reset_req(**kw))


def s_step(action: pb.Action, want_token: bool = False) -> env_pb2.SessionRequest:
    return env_pb2.SessionRequest(step=action, want_token=want_token)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def padded(message: Any, total: int) -> bytes:
    """`message` serialized, plus an unknown length-delimited field (number 1000, which
    every parser skips) so that the whole is exactly `total` bytes."""
    base = message.SerializeToString() if not isinstance(message, bytes) else message
    tag = _varint((1000 << 3) | 2)
    size = total - len(base) - len(tag)
    body = size - len(_varint(size))
    assert len(_varint(body)) == len(_varint(size)) and body >= 0
    data = base + tag + _varint(body) + b"p" * body
    assert len(data) == total
    return data


def flip(token: bytes, at: int, bit: int = 0) -> bytes:
    out = bytearray(token)
    out[at] ^= 1 << bit
    return bytes(out)


GARBAGE = b"\xff\xff\xff\xff\x0f"  # a varint that never ends: not a message of any type
BAD_UTF8_TASK = b"\x0a\x02\xff\xfe"  # field 1 (a string) holding invalid UTF-8


# ---- the episodes the cases start from ----


@dataclass
class World:
    fresh: bytes  # end_to_end_resolution, just reset
    selection: bytes  # action_selection, just reset
    ended: bytes  # terminated by mark_resolved
    spent: bytes  # issue_classification, truncated: step budget spent
    foreign: bytes  # signed by a replica with another key
    fat: bytes  # the next FAT step would outgrow MAX_TOKEN_BYTES
    expert: bytes  # expert_resolution (takes use_tool), just reset


def call_env(env: env_pb2_grpc.EnvServiceStub, method: str, request: Any) -> Any:
    return getattr(env, method)(request, timeout=TIMEOUT)


@pytest.fixture(scope="module")
def world(env) -> World:
    fresh = call_env(env, "Reset", reset_req(seed=1)).state_token
    selection = call_env(env, "Reset", reset_req("action_selection", seed=0)).state_token
    ended = call_env(env, "Step", step_req(fresh, resolve())).state_token
    spent = call_env(env, "Reset", reset_req("issue_classification", seed=3)).state_token
    for _ in range(get_task("issue_classification").max_steps):
        reply = call_env(env, "Step", step_req(spent, classify()))
        spent = reply.state_token
    assert reply.truncated and not reply.terminated

    fat = call_env(env, "Reset", reset_req(seed=2)).state_token
    for _ in range(get_task(TASK).max_steps):
        try:
            fat = call_env(env, "Step", step_req(fat, FAT)).state_token
        except grpc.RpcError as exc:
            assert exc.code() == EXHAUSTED, exc.details()
            break
    else:
        pytest.fail("FAT steps never reached the token limit: the FAT case tests nothing")
    assert len(fat) <= MAX_TOKEN_BYTES
    call_env(env, "State", env_pb2.StateRequest(state_token=fat))  # every token the server issues, it accepts

    other = start_service("env_service", {token_keys.KEY_ENV: secrets.token_hex(32), "SUPPORTENV_WORKERS": "1"})
    try:
        with grpc.insecure_channel(other.address) as channel:
            foreign = env_pb2_grpc.EnvServiceStub(channel).Reset(reset_req(seed=1), timeout=TIMEOUT).state_token
    finally:
        assert other.stop() == 0
    expert_token = call_env(env, "Reset", reset_req(EXPERT, seed=1)).state_token
    return World(fresh, selection, ended, spent, foreign, fat, expert_token)


def heavy_batch(w: World) -> env_pb2.StepBatchRequest:
    """A StepBatch under MAX_MESSAGE_BYTES whose answers would be over it: each closes an expert
    episode and autoresets another, so each answer carries two observations with the desk rules."""
    items = [
        env_pb2.StepRequest(state_token=w.expert, action=resolve(), next_episode=reset_req(EXPERT, seed=i))
        for i in range(MAX_BATCH)
    ]
    request = env_pb2.StepBatchRequest(requests=items)
    assert request.ByteSize() < MAX_MESSAGE_BYTES
    return request


def swap_task(token: bytes) -> bytes:
    """An action_selection token claiming to be end_to_end_resolution, MAC left as it was."""
    head, payload = token[:HEADER_BYTES], token[HEADER_BYTES:]
    assert b'"action_selection"' in payload
    return head + payload.replace(b'"action_selection"', b'"end_to_end_resolution"', 1)


# Ways to spoil a good token; each is tried on Step, State and StepBatch.
BAD_TOKENS: dict[str, Callable[[World], bytes]] = {
    "empty": lambda w: b"",
    "one-byte": lambda w: w.fresh[:1],
    "header-only": lambda w: w.fresh[:HEADER_BYTES],
    "truncated-half": lambda w: w.fresh[: len(w.fresh) // 2],
    "truncated-last-byte": lambda w: w.fresh[:-1],
    "extra-byte": lambda w: w.fresh + b"]",
    "flip-version-low-bit": lambda w: flip(w.fresh, 0),
    "flip-version-high-bit": lambda w: flip(w.fresh, 0, 7),
    "flip-mac-first": lambda w: flip(w.fresh, MAC_AT),
    "flip-mac-last": lambda w: flip(w.fresh, HEADER_BYTES - 1, 5),
    "flip-payload-first": lambda w: flip(w.fresh, HEADER_BYTES),
    "flip-payload-middle": lambda w: flip(w.fresh, (HEADER_BYTES + len(w.fresh)) // 2, 3),
    "flip-payload-last": lambda w: flip(w.fresh, len(w.fresh) - 1, 1),
    "other-task-in-payload": lambda w: swap_task(w.selection),
    "other-key": lambda w: w.foreign,
    "garbage": lambda w: bytes(range(256)),
    "over-max-token-bytes": lambda w: w.fresh[:1] + b"\x00" * MAX_TOKEN_BYTES,
}
if KEY_ID_AT is not None:
    BAD_TOKENS["flip-key-id"] = lambda w: flip(w.fresh, KEY_ID_AT, 2)


# ---- the matrix ----


@dataclass(frozen=True)
class Case:
    rpc: str  # ListTasks, Reset, Step, State, ResetBatch, StepBatch, Session or Grade
    make: Callable[[World], Any]  # a message, raw bytes, or (Session) a list of either
    code: grpc.StatusCode
    hint: str = ""  # words the status message must contain
    limit: str = ""  # the limit of supportenv/v1/limits.py this case goes over (or sits at)


def over_message_limit(message: Any) -> Callable[[World], bytes]:
    return lambda w: padded(message, MAX_MESSAGE_BYTES + 1)


CASES: dict[str, Case] = {
    # ListTasks takes nothing, so only broken and oversized bytes can be wrong.
    "ListTasks/garbage-bytes": Case("ListTasks", lambda w: GARBAGE, INVALID, "malformed request"),
    "ListTasks/over-message-limit": Case(
        "ListTasks", over_message_limit(env_pb2.ListTasksRequest()), EXHAUSTED, limit="MAX_MESSAGE_BYTES"
    ),
    # Reset
    "Reset/empty": Case("Reset", lambda w: env_pb2.ResetRequest(), INVALID, "task_id is required"),
    "Reset/unknown-task": Case("Reset", lambda w: reset_req("no_such_task"), NOT_FOUND, "no_such_task"),
    "Reset/task-wrong-case": Case("Reset", lambda w: reset_req(TASK.upper()), NOT_FOUND, "unknown task"),
    "Reset/task-100k-chars": Case("Reset", lambda w: reset_req("t" * 100_000), NOT_FOUND, "unknown task"),
    "Reset/task-bad-utf8": Case("Reset", lambda w: BAD_UTF8_TASK, INVALID, "malformed request"),
    "Reset/split-99": Case("Reset", lambda w: reset_req(split=99), INVALID, "unknown split"),
    "Reset/split-negative": Case("Reset", lambda w: reset_req(split=-1), INVALID, "unknown split"),
    "Reset/seed-minus-1": Case("Reset", lambda w: reset_req(seed=-1), INVALID, "seed"),
    "Reset/seed-int64-min": Case("Reset", lambda w: reset_req(seed=INT64_MIN), INVALID, "seed"),
    "Reset/episode-id-too-long": Case(
        "Reset",
        lambda w: reset_req(episode_id="e" * (MAX_EPISODE_ID_CHARS + 1)),
        INVALID,
        "episode_id",
        "MAX_EPISODE_ID_CHARS",
    ),
    "Reset/over-message-limit": Case("Reset", over_message_limit(reset_req()), EXHAUSTED, limit="MAX_MESSAGE_BYTES"),
    "Reset/garbage-bytes": Case("Reset", lambda w: GARBAGE, INVALID, "malformed request"),
    # Step: the request, the action, then the token
    "Step/empty": Case("Step", lambda w: env_pb2.StepRequest(), INVALID, "state_token is empty"),
    "Step/no-action": Case("Step", lambda w: step_req(w.fresh), INVALID, "action is required"),
    "Step/action-without-kind": Case("Step", lambda w: step_req(w.fresh, pb.Action()), INVALID, "no kind"),
    "Step/category-unset": Case("Step", lambda w: step_req(w.fresh, classify(0)), INVALID, "category is unset"),
    "Step/category-99": Case("Step", lambda w: step_req(w.fresh, classify(99)), INVALID, "unknown value 99"),
    "Step/category-negative": Case("Step", lambda w: step_req(w.fresh, classify(-1)), INVALID, "unknown value -1"),
    "Step/priority-99": Case("Step", lambda w: step_req(w.fresh, classify(priority=99)), INVALID, "priority"),
    "Step/unknown-issue-type": Case(
        "Step", lambda w: step_req(w.fresh, classify(issue_type="alien_invasion")), INVALID, "issue_type"
    ),
    "Step/department-unset": Case("Step", lambda w: step_req(w.fresh, assign(0)), INVALID, "department is unset"),
    "Step/department-99": Case("Step", lambda w: step_req(w.fresh, assign(99)), INVALID, "unknown value 99"),
    "Step/ask-nothing": Case("Step", lambda w: step_req(w.fresh, ask()), INVALID, "needs fields or a question"),
    "Step/ask-blank-question": Case("Step", lambda w: step_req(w.fresh, ask(question="  \n")), INVALID, "question"),
    "Step/ask-unknown-field": Case("Step", lambda w: step_req(w.fresh, ask("shoe_size")), INVALID, "unknown fields"),
    "Step/ask-too-many-fields": Case(
        "Step", lambda w: step_req(w.fresh, ask(*REQUESTABLE_FIELDS, "order_id")), INVALID, "at most"
    ),
    "Step/respond-empty": Case("Step", lambda w: step_req(w.fresh, respond("")), INVALID, "needs a message"),
    "Step/respond-unknown-article": Case(
        "Step", lambda w: step_req(w.fresh, respond("hi", "KB-NOPE")), INVALID, "unknown article"
    ),
    "Step/suggest-no-article": Case(
        "Step",
        lambda w: step_req(w.fresh, pb.Action(suggest_knowledge_base=pb.SuggestKnowledgeBase())),
        INVALID,
        "needs an article_id",
    ),
    "Step/suggest-100k-article": Case(
        "Step",
        lambda w: step_req(w.fresh, pb.Action(suggest_knowledge_base=pb.SuggestKnowledgeBase(article_id="a" * 10**5))),
        INVALID,
        "unknown article",
    ),
    **{
        f"Step/text-over-limit-{name}": Case(
            "Step",
            lambda w, a=action: step_req(w.fresh, a),
            INVALID,
            str(MAX_ACTION_TEXT_CHARS),
            "MAX_ACTION_TEXT_CHARS",
        )
        for name, action in OVERSIZED_TEXTS.items()
    },
    **{
        f"Step/token-{name}": Case(
            "Step",
            lambda w, bad=bad: step_req(bad(w), classify()),
            INVALID,
            "state_token",
            "MAX_TOKEN_BYTES" if name == "over-max-token-bytes" else "",
        )
        for name, bad in BAD_TOKENS.items()
    },
    # Step: tool calls. On a task that does not take use_tool, the library's refusal; on the
    # expert task, every malformed call.
    **{
        f"Step/use-tool-on-{task}": Case(
            "Step",
            lambda w, task=task: step_req(getattr(w, task), LOOK_UP),
            INVALID,
            "does not take use_tool; its actions: classify_issue",
        )
        for task in ("fresh", "selection")
    },
    **{
        f"Step/use-tool-{name}": Case("Step", lambda w, a=action: step_req(w.expert, a), INVALID, hint)
        for name, (action, hint) in BAD_TOOL_CALLS.items()
    },
    "Step/after-terminated": Case("Step", lambda w: step_req(w.ended, classify()), PRECONDITION, "already ended"),
    "Step/after-budget-spent": Case("Step", lambda w: step_req(w.spent, classify()), PRECONDITION, "truncated"),
    "Step/token-would-outgrow-limit": Case(
        "Step", lambda w: step_req(w.fat, FAT), EXHAUSTED, "state token would be", "MAX_TOKEN_BYTES"
    ),
    "Step/over-message-limit": Case(
        "Step",
        lambda w: padded(step_req(w.fresh, classify()), MAX_MESSAGE_BYTES + 1),
        EXHAUSTED,
        limit="MAX_MESSAGE_BYTES",
    ),
    "Step/garbage-bytes": Case("Step", lambda w: GARBAGE, INVALID, "malformed request"),
    # State
    "State/empty": Case("State", lambda w: env_pb2.StateRequest(), INVALID, "state_token is empty"),
    **{
        f"State/token-{name}": Case(
            "State", lambda w, bad=bad: env_pb2.StateRequest(state_token=bad(w)), INVALID, "state_token"
        )
        for name, bad in BAD_TOKENS.items()
        if name != "empty"
    },
    "State/over-message-limit": Case(
        "State",
        lambda w: padded(env_pb2.StateRequest(state_token=w.fresh), MAX_MESSAGE_BYTES + 1),
        EXHAUSTED,
        limit="MAX_MESSAGE_BYTES",
    ),
    "State/garbage-bytes": Case("State", lambda w: GARBAGE, INVALID, "malformed request"),
    # DescribeEnvironment: its token is optional, but a bad one is refused as State refuses it
    **{
        f"DescribeEnvironment/token-{name}": Case(
            "DescribeEnvironment",
            lambda w, bad=bad: env_pb2.DescribeEnvironmentRequest(state_token=bad(w)),
            INVALID,
            "state_token",
        )
        for name, bad in BAD_TOKENS.items()
        if name != "empty"
    },
    "DescribeEnvironment/over-message-limit": Case(
        "DescribeEnvironment",
        lambda w: padded(env_pb2.DescribeEnvironmentRequest(state_token=w.fresh), MAX_MESSAGE_BYTES + 1),
        EXHAUSTED,
        limit="MAX_MESSAGE_BYTES",
    ),
    "DescribeEnvironment/garbage-bytes": Case("DescribeEnvironment", lambda w: GARBAGE, INVALID, "malformed request"),
    # ResetBatch: errors name the failing item
    "ResetBatch/over-max-batch": Case(
        "ResetBatch",
        lambda w: env_pb2.ResetBatchRequest(requests=[reset_req(seed=i) for i in range(MAX_BATCH + 1)]),
        EXHAUSTED,
        f"limit is {MAX_BATCH}",
        "MAX_BATCH",
    ),
    "ResetBatch/empty-item": Case(
        "ResetBatch", lambda w: env_pb2.ResetBatchRequest(requests=[env_pb2.ResetRequest()]), INVALID, "item 0"
    ),
    "ResetBatch/unknown-task-item-3": Case(
        "ResetBatch",
        lambda w: env_pb2.ResetBatchRequest(requests=[reset_req()] * 3 + [reset_req("nope")]),
        NOT_FOUND,
        "item 3",
    ),
    "ResetBatch/split-99-item": Case(
        "ResetBatch", lambda w: env_pb2.ResetBatchRequest(requests=[reset_req(split=99)]), INVALID, "unknown split"
    ),
    "ResetBatch/seed-minus-1-item": Case(
        "ResetBatch", lambda w: env_pb2.ResetBatchRequest(requests=[reset_req(), reset_req(seed=-1)]), INVALID, "item 1"
    ),
    "ResetBatch/episode-id-too-long-item": Case(
        "ResetBatch",
        lambda w: env_pb2.ResetBatchRequest(requests=[reset_req(episode_id="e" * (MAX_EPISODE_ID_CHARS + 1))]),
        INVALID,
        "episode_id",
        "MAX_EPISODE_ID_CHARS",
    ),
    "ResetBatch/over-message-limit": Case(
        "ResetBatch",
        over_message_limit(env_pb2.ResetBatchRequest(requests=[reset_req()])),
        EXHAUSTED,
        limit="MAX_MESSAGE_BYTES",
    ),
    "ResetBatch/garbage-bytes": Case("ResetBatch", lambda w: GARBAGE, INVALID, "malformed request"),
    # StepBatch
    "StepBatch/over-max-batch": Case(
        "StepBatch",
        lambda w: env_pb2.StepBatchRequest(requests=[step_req(w.fresh, classify())] * (MAX_BATCH + 1)),
        EXHAUSTED,
        f"limit is {MAX_BATCH}",
        "MAX_BATCH",
    ),
    "StepBatch/empty-item": Case(
        "StepBatch", lambda w: env_pb2.StepBatchRequest(requests=[env_pb2.StepRequest()]), INVALID, "item 0"
    ),
    "StepBatch/no-action-item": Case(
        "StepBatch",
        lambda w: env_pb2.StepBatchRequest(requests=[step_req(w.fresh, classify()), step_req(w.fresh)]),
        INVALID,
        "item 1: action is required",
    ),
    "StepBatch/action-without-kind-item": Case(
        "StepBatch", lambda w: env_pb2.StepBatchRequest(requests=[step_req(w.fresh, pb.Action())]), INVALID, "no kind"
    ),
    "StepBatch/category-99-item": Case(
        "StepBatch", lambda w: env_pb2.StepBatchRequest(requests=[step_req(w.fresh, classify(99))]), INVALID, "99"
    ),
    "StepBatch/text-over-limit-item": Case(
        "StepBatch",
        lambda w: env_pb2.StepBatchRequest(requests=[step_req(w.fresh, respond(LONG))]),
        INVALID,
        "limit",
        "MAX_ACTION_TEXT_CHARS",
    ),
    **{
        f"StepBatch/token-{name}-item-2": Case(
            "StepBatch",
            lambda w, bad=bad: env_pb2.StepBatchRequest(
                requests=[step_req(w.fresh, classify())] * 2 + [step_req(bad(w), classify())]
            ),
            INVALID,
            "item 2: state_token",
        )
        for name, bad in BAD_TOKENS.items()
        if name
        in ("empty", "truncated-half", "flip-mac-first", "flip-payload-middle", "other-key", "other-task-in-payload")
    },
    "StepBatch/use-tool-on-task-without-tools-item-1": Case(
        "StepBatch",
        lambda w: env_pb2.StepBatchRequest(requests=[step_req(w.expert, LOOK_UP), step_req(w.fresh, LOOK_UP)]),
        INVALID,
        "item 1: task end_to_end_resolution does not take use_tool",
    ),
    "StepBatch/use-tool-unknown-tool-item-0": Case(
        "StepBatch",
        lambda w: env_pb2.StepBatchRequest(requests=[step_req(w.expert, tool("format_disk"))]),
        INVALID,
        "item 0: unknown tool",
    ),
    "StepBatch/after-end-item": Case(
        "StepBatch",
        lambda w: env_pb2.StepBatchRequest(requests=[step_req(w.fresh, classify()), step_req(w.ended, classify())]),
        PRECONDITION,
        "item 1",
    ),
    "StepBatch/responses-over-message-limit": Case(
        "StepBatch",
        heavy_batch,
        EXHAUSTED,
        "larger than max",
        "MAX_MESSAGE_BYTES",
    ),
    "StepBatch/over-message-limit": Case(
        "StepBatch",
        lambda w: padded(env_pb2.StepBatchRequest(requests=[step_req(w.fresh, classify())]), MAX_MESSAGE_BYTES + 1),
        EXHAUSTED,
        limit="MAX_MESSAGE_BYTES",
    ),
    "StepBatch/garbage-bytes": Case("StepBatch", lambda w: GARBAGE, INVALID, "malformed request"),
    # Session: the stream ends with the status of its first bad request
    "Session/empty-request": Case("Session", lambda w: session(env_pb2.SessionRequest()), INVALID, "needs one of"),
    "Session/want-token-only": Case(
        "Session", lambda w: session(env_pb2.SessionRequest(want_token=True)), INVALID, "needs one of"
    ),
    "Session/step-before-reset": Case("Session", lambda w: session(s_step(classify())), PRECONDITION, "send a reset"),
    "Session/state-before-reset": Case(
        "Session",
        lambda w: session(env_pb2.SessionRequest(state=env_pb2.StateRequest())),
        PRECONDITION,
        "send a reset",
    ),
    "Session/reset-empty": Case(
        "Session", lambda w: session(env_pb2.SessionRequest(reset=env_pb2.ResetRequest())), INVALID, "task_id"
    ),
    "Session/reset-unknown-task": Case("Session", lambda w: session(s_reset(task_id="nope")), NOT_FOUND, "nope"),
    "Session/reset-split-99": Case("Session", lambda w: session(s_reset(split=99)), INVALID, "unknown split"),
    "Session/reset-seed-minus-1": Case("Session", lambda w: session(s_reset(seed=-1)), INVALID, "seed"),
    "Session/reset-episode-id-too-long": Case(
        "Session",
        lambda w: session(s_reset(episode_id="e" * (MAX_EPISODE_ID_CHARS + 1))),
        INVALID,
        "episode_id",
        "MAX_EPISODE_ID_CHARS",
    ),
    "Session/action-without-kind": Case(
        "Session", lambda w: session(s_reset(), s_step(pb.Action())), INVALID, "no kind"
    ),
    "Session/category-99": Case("Session", lambda w: session(s_reset(), s_step(classify(99))), INVALID, "99"),
    "Session/priority-99": Case(
        "Session", lambda w: session(s_reset(), s_step(classify(priority=99))), INVALID, "priority"
    ),
    "Session/department-99": Case("Session", lambda w: session(s_reset(), s_step(assign(99))), INVALID, "99"),
    "Session/text-over-limit": Case(
        "Session", lambda w: session(s_reset(), s_step(respond(LONG))), INVALID, "limit", "MAX_ACTION_TEXT_CHARS"
    ),
    "Session/use-tool-on-task-without-tools": Case(
        "Session",
        lambda w: session(s_reset(task_id="issue_classification"), s_step(LOOK_UP)),
        INVALID,
        "task issue_classification does not take use_tool",
    ),
    **{
        f"Session/use-tool-{name}": Case(
            "Session", lambda w, a=BAD_TOOL_CALLS[name][0]: session(s_reset(task_id=EXPERT), s_step(a)), INVALID, hint
        )
        for name, hint in (
            ("unknown-tool", "unknown tool"),
            ("missing-argument", "needs order_id"),
            ("argument-over-limit", "at most 200"),
            ("refund-amount-not-a-number", "must be a number"),
        )
    },
    "Session/step-after-terminated": Case(
        "Session", lambda w: session(s_reset(), s_step(resolve()), s_step(classify())), PRECONDITION, "already ended"
    ),
    "Session/steps-past-budget": Case(
        "Session",
        lambda w: session(
            s_reset(task_id="issue_classification"),
            *[s_step(classify())] * (get_task("issue_classification").max_steps + 1),
        ),
        PRECONDITION,
        "truncated",
    ),
    "Session/token-would-outgrow-limit": Case(
        "Session",
        lambda w: session(s_reset(seed=2), *[s_step(FAT, want_token=True)] * get_task(TASK).max_steps),
        EXHAUSTED,
        "state token would be",
        "MAX_TOKEN_BYTES",
    ),
    "Session/over-message-limit": Case(
        "Session",
        lambda w: [s_reset().SerializeToString(), padded(s_step(classify()), MAX_MESSAGE_BYTES + 1)],
        EXHAUSTED,
        limit="MAX_MESSAGE_BYTES",
    ),
    **{
        f"Session/resume-token-{name}": Case(
            "Session",
            lambda w, bad=bad: session(env_pb2.SessionRequest(resume=bad(w))),
            INVALID,
            "state_token",
            "MAX_TOKEN_BYTES" if name == "over-max-token-bytes" else "",
        )
        for name, bad in BAD_TOKENS.items()
    },
    "Session/garbage-bytes-first": Case("Session", lambda w: [GARBAGE], INVALID, "malformed request"),
    "Session/garbage-bytes-after-reset": Case(
        "Session", lambda w: [s_reset().SerializeToString(), GARBAGE], INVALID, "malformed request"
    ),
    # Grade
    "Grade/empty": Case("Grade", lambda w: grader_pb2.GradeRequest(), INVALID, "trajectory is required"),
    "Grade/no-task": Case("Grade", lambda w: grade_req(""), INVALID, "task_id is required"),
    "Grade/unknown-task": Case("Grade", lambda w: grade_req("no_such_task"), NOT_FOUND, "no_such_task"),
    "Grade/split-99": Case("Grade", lambda w: grade_req(split=99), INVALID, "unknown split"),
    "Grade/seed-minus-1": Case("Grade", lambda w: grade_req(seed=-1), INVALID, "seed"),
    "Grade/seed-int64-min": Case("Grade", lambda w: grade_req(seed=INT64_MIN), INVALID, "seed"),
    "Grade/action-without-kind": Case("Grade", lambda w: grade_req(actions=[pb.Action()]), INVALID, "no kind"),
    "Grade/category-99": Case("Grade", lambda w: grade_req(actions=[classify(99)]), INVALID, "99"),
    "Grade/priority-99": Case("Grade", lambda w: grade_req(actions=[classify(priority=99)]), INVALID, "priority"),
    "Grade/department-99": Case("Grade", lambda w: grade_req(actions=[assign(99)]), INVALID, "99"),
    "Grade/unknown-field": Case("Grade", lambda w: grade_req(actions=[ask("shoe_size")]), INVALID, "unknown fields"),
    "Grade/text-over-limit": Case(
        "Grade", lambda w: grade_req(actions=[respond(LONG)]), INVALID, "limit", "MAX_ACTION_TEXT_CHARS"
    ),
    "Grade/use-tool-on-task-without-tools": Case(
        "Grade", lambda w: grade_req(actions=[classify(), LOOK_UP]), INVALID, "does not take use_tool"
    ),
    **{
        f"Grade/use-tool-{name}": Case(
            "Grade", lambda w, a=BAD_TOOL_CALLS[name][0]: grade_req(EXPERT, [a]), INVALID, hint
        )
        for name, hint in (
            ("unknown-tool", "unknown tool"),
            ("unknown-argument", "takes order_id"),
            ("argument-over-limit", "at most 200"),
            ("refund-amount-negative", "must be from"),
        )
    },
    "Grade/longer-than-task-allows": Case(
        "Grade",
        lambda w: grade_req("issue_classification", [classify()] * (get_task("issue_classification").max_steps + 1)),
        INVALID,
        "at most",
    ),
    "Grade/actions-after-the-end": Case(
        "Grade",
        lambda w: grade_req(actions=[resolve(), classify()]),
        PRECONDITION,
        "actions[1] comes after the episode ended",
    ),
    "Grade/episode-id-too-long": Case(
        "Grade",
        lambda w: grade_req(episode_id="e" * (MAX_EPISODE_ID_CHARS + 1)),
        INVALID,
        "episode_id",
        "MAX_EPISODE_ID_CHARS",
    ),
    "Grade/over-message-limit": Case("Grade", over_message_limit(grade_req()), EXHAUSTED, limit="MAX_MESSAGE_BYTES"),
    "Grade/garbage-bytes": Case("Grade", lambda w: GARBAGE, INVALID, "malformed request"),
}


# ---- inputs right at a limit, or at the edge of the contract, that must work ----

BOUNDARIES: dict[str, Case] = {
    "ListTasks/empty": Case("ListTasks", lambda w: env_pb2.ListTasksRequest(), OK),
    "Reset/seed-int64-max": Case("Reset", lambda w: reset_req(seed=INT64_MAX), OK),
    "Reset/split-unspecified-means-train": Case("Reset", lambda w: reset_req(split=pb.SPLIT_UNSPECIFIED), OK),
    "Reset/episode-id-at-limit": Case(
        "Reset", lambda w: reset_req(episode_id="e" * MAX_EPISODE_ID_CHARS), OK, limit="MAX_EPISODE_ID_CHARS"
    ),
    "Reset/exactly-message-limit": Case(
        "Reset", lambda w: padded(reset_req(), MAX_MESSAGE_BYTES), OK, limit="MAX_MESSAGE_BYTES"
    ),
    "Step/text-at-limit": Case(
        "Step", lambda w: step_req(w.fresh, respond("y" * MAX_ACTION_TEXT_CHARS)), OK, limit="MAX_ACTION_TEXT_CHARS"
    ),
    "Step/every-field-at-once": Case("Step", lambda w: step_req(w.fresh, ask(*REQUESTABLE_FIELDS)), OK),
    "Step/use-tool-argument-at-limit": Case(
        "Step", lambda w: step_req(w.expert, tool("look_up_order", ("order_id", "O" * MAX_ARGUMENT_CHARS))), OK
    ),
    "Step/use-tool-refund-amount-with-dollar-sign": Case(
        "Step", lambda w: step_req(w.expert, tool("issue_refund", ("order_id", "ORD-1"), ("amount", "$1,000.50"))), OK
    ),
    "Step/use-tool-no-argument-tool": Case("Step", lambda w: step_req(w.expert, tool("check_service_status")), OK),
    "Step/token-at-its-largest": Case("Step", lambda w: step_req(w.fat, classify()), OK, limit="MAX_TOKEN_BYTES"),
    "State/ended-episode": Case("State", lambda w: env_pb2.StateRequest(state_token=w.ended), OK),
    "DescribeEnvironment/no-token": Case("DescribeEnvironment", lambda w: env_pb2.DescribeEnvironmentRequest(), OK),
    "DescribeEnvironment/ended-episode": Case(
        "DescribeEnvironment", lambda w: env_pb2.DescribeEnvironmentRequest(state_token=w.ended), OK
    ),
    "ResetBatch/empty": Case("ResetBatch", lambda w: env_pb2.ResetBatchRequest(), OK),
    "ResetBatch/at-max-batch": Case(
        "ResetBatch",
        lambda w: env_pb2.ResetBatchRequest(requests=[reset_req(seed=i) for i in range(MAX_BATCH)]),
        OK,
        limit="MAX_BATCH",
    ),
    "StepBatch/empty": Case("StepBatch", lambda w: env_pb2.StepBatchRequest(), OK),
    "StepBatch/at-max-batch": Case(
        "StepBatch",
        lambda w: env_pb2.StepBatchRequest(requests=[step_req(w.fresh, classify())] * MAX_BATCH),
        OK,
        limit="MAX_BATCH",
    ),
    "Session/reset-then-state": Case(
        "Session",
        lambda w: session(s_reset(seed=INT64_MAX), env_pb2.SessionRequest(state=env_pb2.StateRequest())),
        OK,
    ),
    "Grade/no-actions": Case("Grade", lambda w: grade_req(), OK),
    "Grade/seed-int64-max": Case("Grade", lambda w: grade_req(seed=INT64_MAX, actions=[resolve()]), OK),
    "Grade/exactly-max-steps": Case(
        "Grade",
        lambda w: grade_req("issue_classification", [classify()] * get_task("issue_classification").max_steps),
        OK,
    ),
    "Grade/episode-id-at-limit": Case(
        "Grade", lambda w: grade_req(episode_id="e" * MAX_EPISODE_ID_CHARS), OK, limit="MAX_EPISODE_ID_CHARS"
    ),
}

RESPONSE_TYPES = {
    "ListTasks": env_pb2.ListTasksResponse,
    "Reset": env_pb2.ResetResponse,
    "Step": env_pb2.StepResponse,
    "State": env_pb2.StateResponse,
    "DescribeEnvironment": env_pb2.DescribeEnvironmentResponse,
    "ResetBatch": env_pb2.ResetBatchResponse,
    "StepBatch": env_pb2.StepBatchResponse,
    "Session": env_pb2.SessionResponse,
    "Grade": grader_pb2.GradeResponse,
}


def _wire(message: Any) -> bytes:
    return message if isinstance(message, bytes) else message.SerializeToString()


def invoke(channels: dict[str, grpc.Channel], case: Case, w: World) -> list[Any]:
    """Send the case's request(s) as bytes over a generic call; the parsed responses."""
    service = "GraderService" if case.rpc == "Grade" else "EnvService"
    path = f"/supportenv.v1.{service}/{case.rpc}"
    parse = RESPONSE_TYPES[case.rpc].FromString
    request = case.make(w)
    if case.rpc == "Session":
        call = channels[service].stream_stream(path, request_serializer=_wire, response_deserializer=parse)
        return list(call(iter(request), timeout=TIMEOUT))
    call = channels[service].unary_unary(path, request_serializer=_wire, response_deserializer=parse)
    return [call(request, timeout=TIMEOUT)]


@pytest.fixture(scope="module")
def channels(services) -> Iterator[dict[str, grpc.Channel]]:
    with grpc.insecure_channel(services.env.address) as env_ch, grpc.insecure_channel(services.grader.address) as gr:
        yield {"EnvService": env_ch, "GraderService": gr}


class Bystander:
    """Another client, on its own connection, with two episodes open across the matrix:
    one over unary calls and one on a Session stream that stays open the whole time.
    The library plays the same episodes alongside, so every later step can be compared."""

    SEED = 11

    def __init__(self, address: str) -> None:
        self.channel = grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
        self.env = env_pb2_grpc.EnvServiceStub(self.channel)
        self.scenario, self.state = new_episode(TASK, "train", self.SEED, "bystander")
        self.token = self.env.Reset(reset_req(seed=self.SEED, episode_id="bystander"), timeout=TIMEOUT).state_token
        self.step_both()
        self.outbox: queue.Queue[env_pb2.SessionRequest | None] = queue.Queue()
        self.inbox = self.env.Session(iter(self.outbox.get, None), timeout=600)
        self.stream_first = self.send(s_reset(task_id="action_selection", seed=5)).reset

    def step_both(self) -> env_pb2.StepResponse:
        """The expert's next action, on the service and in the library: the same result."""
        action = expert.expert_action(self.scenario, self.state, TASK)
        expected = library_step(self.scenario, self.state, action)
        reply = self.env.Step(step_req(self.token, convert.action_to_pb(action)), timeout=TIMEOUT)
        assert codec.observation_from_pb(reply.observation) == expected.observation
        assert (reply.reward, reply.terminated, reply.truncated) == (
            expected.reward,
            expected.terminated,
            expected.truncated,
        )
        self.token = reply.state_token
        return reply

    def send(self, request: env_pb2.SessionRequest) -> env_pb2.SessionResponse:
        self.outbox.put(request)
        return next(self.inbox)

    def close(self) -> None:
        self.outbox.put(None)
        self.channel.close()


@pytest.fixture(scope="module")
def bystander(services) -> Iterator[Bystander]:
    other = Bystander(services.env.address)
    yield other
    other.close()


def assert_clear(exc: grpc.RpcError, case: Case) -> None:
    message = exc.details() or ""
    assert exc.code() in DOCUMENTED, f"{exc.code()}: {message}"
    assert exc.code() == case.code, f"expected {case.code}, got {exc.code()}: {message}"
    assert message.strip(), "every error carries a message"
    assert not message.startswith(("Unexpected", "Exception")), message  # gRPC's text for a crashed handler
    assert len(message.encode()) < 2 * status.MAX_DETAILS_BYTES, "messages are clipped"
    assert case.hint in message, f"{case.hint!r} not in {message!r}"


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_gets_the_documented_status(name, channels, world, bystander):
    case = CASES[name]
    with pytest.raises(grpc.RpcError) as info:
        invoke(channels, case, world)
    assert_clear(info.value, case)


@pytest.mark.parametrize("name", list(BOUNDARIES))
def test_inputs_at_the_limits_are_accepted(name, channels, world, bystander):
    case = BOUNDARIES[name]
    responses = invoke(channels, case, world)
    if case.rpc.endswith("Batch"):
        assert len(responses[0].responses) == len(case.make(world).requests)
    else:
        assert responses and all(r.ByteSize() for r in responses)


def test_the_matrix_tries_every_rpc_with_every_kind_of_bad_input():
    rpcs = {case.rpc for case in CASES.values()}
    assert rpcs == set(RESPONSE_TYPES)
    codes = {case.code for case in CASES.values()}
    assert codes == DOCUMENTED
    for rpc in rpcs:
        names = [n for n, c in CASES.items() if c.rpc == rpc]
        assert any("garbage" in n for n in names) and any("over-message-limit" in n for n in names), rpc


def test_every_documented_limit_is_enforced():
    """Each request limit of supportenv/v1/limits.py is used by the service code, and the
    matrix goes over it (rejected) and, where a client can reach it, sits right at it (accepted)."""
    tree = ast.parse(inspect.getsource(limits_module))
    names = {
        t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)
    }
    request_limits = names - {"SHUTDOWN_GRACE_S"}
    assert request_limits == {
        "MAX_MESSAGE_BYTES",
        "MAX_BATCH",
        "MAX_TOKEN_BYTES",
        "MAX_EPISODE_ID_CHARS",
        "MAX_ACTION_TEXT_CHARS",
    }, "a new limit needs cases in this matrix"
    over = {c.limit for c in CASES.values()}
    at = {c.limit for c in BOUNDARIES.values()}
    for name in request_limits:
        assert name in over, f"no case goes over {name}"
        assert name in at, f"no case sits right at {name}"
    # The one limit that is not about requests: SIGTERM's grace period is what serve() stops with.
    assert "server.stop(SHUTDOWN_GRACE_S)" in inspect.getsource(server.serve)


def test_after_the_matrix_the_services_serve_and_other_clients_finish(services, channels, bystander):
    for channel, names in (
        (channels["EnvService"], ("", "supportenv.v1.EnvService")),
        (channels["GraderService"], ("", "supportenv.v1.GraderService")),
    ):
        for service in names:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=TIMEOUT
            )
            assert reply.status == health_pb2.HealthCheckResponse.SERVING, service
    for service in (services.env, services.grader):
        assert service.process.poll() is None, f"{service.module} exited"

    # The unary episode picks up where it was, step for step as in the library, and
    # the grader gives its trajectory the library's grade.
    while not bystander.state.done:
        bystander.step_both()
    assert bystander.state.terminated
    state = bystander.env.State(env_pb2.StateRequest(state_token=bystander.token), timeout=TIMEOUT).state
    assert state.episode_id == "bystander" and state.terminated and state.step == bystander.state.step
    trajectory = pb.Trajectory(task_id=TASK, seed=Bystander.SEED, actions=state.actions)
    grade = GraderServiceStub(channels["GraderService"]).Grade(
        grader_pb2.GradeRequest(trajectory=trajectory), timeout=TIMEOUT
    )
    expected = grade_trajectory(TASK, "train", Bystander.SEED, bystander.state.actions)
    assert grade.score == expected.score and grade.passed

    # The stream, open all along, still holds its episode.
    assert bystander.stream_first.observation.step == 0
    first = bystander.send(s_step(classify(pb.ISSUE_CATEGORY_ACCOUNT)))
    assert first.step.observation.step == 1
    last = bystander.send(s_step(resolve()))
    assert last.step.terminated
    public = bystander.send(env_pb2.SessionRequest(state=env_pb2.StateRequest())).state.state
    assert public.task_id == "action_selection" and public.step == 2 and public.terminated


@pytest.mark.parametrize("task_id", ["issue_classification", "action_selection", "end_to_end_resolution", EXPERT])
def test_a_reset_batch_of_the_largest_size_fits_one_message(env, task_id):
    """A ResetBatch of MAX_BATCH fresh episodes of any task is answered: 256 handed-over tickets
    (each observation with its history, knowledge base suggestions and policy text) came to 1.08 MB,
    over a 1 MiB limit, once the world grew to 32 issue types."""
    requests = [reset_req(task_id=task_id, seed=i) for i in range(MAX_BATCH)]
    reply = env.ResetBatch(env_pb2.ResetBatchRequest(requests=requests), timeout=TIMEOUT)
    assert len(reply.responses) == MAX_BATCH and reply.ByteSize() < MAX_MESSAGE_BYTES
