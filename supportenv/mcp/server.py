"""The MCP server: one episode per MCP session, played through tools.

Tools (the list is the same for every task, since clients usually fetch it once):
- `reset(task_id, split, seed)` starts an episode and returns the prompt a model needs: the
  system and user prompt text of supportenv.llm worded for function calls (`tool_calls=True`),
  then a note on playing it through this server's tools.
- one tool per action kind and one per help-desk tool, named and shaped exactly as
  `supportenv.llm.action_tools` describes them (each description says which tasks take it).
  A call is read with `supportenv.llm.parse_tool_call`, as the LLM policy reads a model's tool
  call, so arguments that do not validate are a penalised invalid step, not an error. It returns
  the step's reward, whether the episode ended, and the next observation as text (`user_prompt`).
- `grade()` returns the grader's score, whether it passed, and every component with its detail.

Errors are tool errors (an `isError` result whose message says what to do), never a crash of
the session: an unknown tool, an action before reset or after the episode ended, an action the
current task does not take (naming the ones it takes), bad reset arguments.

The session's episode lives in the server's lifespan context, which the SDK enters once per
session (per stdio connection, per streamable-HTTP session), so sessions never share one.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread
from mcp import types
from mcp.server.lowlevel import Server

from supportenv.catalog import TOOL_KIND
from supportenv.graders import Grade
from supportenv.llm import action_tools, parse_tool_call, system_prompt, user_prompt
from supportenv.mcp.backends import Backend, BackendError, Transition
from supportenv.tasks import ALL_TASK_IDS, get_task
from supportenv.tools import TOOLS_BY_NAME
from supportenv.world import SPLITS

SERVER_NAME = "supportenv"
DEFAULT_TASK, DEFAULT_SPLIT, DEFAULT_SEED = "end_to_end_resolution", "train", 0
RESET, GRADE = "reset", "grade"
log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "A customer-support ticket environment. Call reset(task_id, split, seed) to start an episode; it returns "
    "the rules and the ticket. Then take one action per turn by calling its tool (only the actions the task "
    "takes); each returns the reward, whether the episode ended and what you see next. Call grade() for the "
    "score. One episode per session; reset again to start another."
)
PLAYING_NOTE = (
    "Over MCP the functions are this server's tools (a help-desk tool by its own name); call grade() once the "
    "episode has ended. Actions this task takes: {allowed}."
)


class ToolError(Exception):
    """A call the server refuses; the message says what to do instead (an isError result)."""


def _kind(function: str) -> str:
    """The action kind a function's call is: a help-desk tool's is use_tool."""
    return TOOL_KIND if function in TOOLS_BY_NAME else function


def _takes(task_id: str, function: str) -> bool:
    return _kind(function) in get_task(task_id).allowed_actions


def _action_functions() -> list[dict[str, Any]]:
    """Every task's functions, each once, in action_tools' order (the actions, then the tools)."""
    seen: dict[str, dict[str, Any]] = {}
    for task_id in ALL_TASK_IDS:
        for tool in action_tools(task_id):
            seen.setdefault(tool["function"]["name"], tool["function"])
    return list(seen.values())


def _reset_tool() -> types.Tool:
    return types.Tool(
        name=RESET,
        description=(
            "Start a new episode (a ticket) of a task and get the prompt: the rules, the actions and their "
            "parameters, the knowledge base, the policy, and the ticket as the agent sees it. Ends any episode "
            "this session was playing. The same (task_id, split, seed) always gives the same ticket."
        ),
        inputSchema={
            "type": "object",
            "properties": {
                "task_id": {"type": "string", "enum": list(ALL_TASK_IDS), "default": DEFAULT_TASK},
                "split": {"type": "string", "enum": list(SPLITS), "default": DEFAULT_SPLIT},
                "seed": {"type": "integer", "minimum": 0, "default": DEFAULT_SEED},
            },
            "additionalProperties": False,
        },
    )


def _grade_tool() -> types.Tool:
    return types.Tool(
        name=GRADE,
        description=(
            "Grade this session's episode (so far; normally called once it has ended): the score in [0, 1], "
            "whether it passed, and each graded component with its weight and the reason for its score."
        ),
        inputSchema={"type": "object", "properties": {}, "additionalProperties": False},
        annotations=types.ToolAnnotations(readOnlyHint=True),
    )


def _action_tool(function: dict[str, Any]) -> types.Tool:
    tasks = [task_id for task_id in ALL_TASK_IDS if _takes(task_id, function["name"])]
    return types.Tool(
        name=function["name"],
        description=f"{function['description']} Tasks that take it: {', '.join(tasks)}.",
        inputSchema=function["parameters"],
    )


TOOL_LIST = [_reset_tool(), *(_action_tool(f) for f in _action_functions()), _grade_tool()]
ACTION_FUNCTIONS = tuple(tool.name for tool in TOOL_LIST[1:-1])


def _text(*blocks: str) -> list[types.ContentBlock]:
    return [types.TextContent(type="text", text=block) for block in blocks]


def _signed_parts(breakdown: tuple[tuple[str, float], ...]) -> str:
    return ", ".join(f"{name} {value:+.2f}" for name, value in breakdown)


class Episode:
    """One session's episode over its backend. Calls are serialised: the SDK handles a session's
    requests concurrently, and an episode is a sequence."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.lock = anyio.Lock()
        self.task_id = ""  # "" until the first reset
        self.ending = ""  # why the episode ended, "" while it goes on

    async def reset(self, arguments: dict[str, Any]) -> tuple[list[types.ContentBlock], dict[str, Any]]:
        task_id, split, seed = _reset_arguments(arguments)
        observation = await anyio.to_thread.run_sync(self.backend.reset, task_id, split, seed)
        self.task_id, self.ending = task_id, ""
        allowed = get_task(task_id).allowed_actions
        tools = [name for name in ACTION_FUNCTIONS if _takes(task_id, name)]
        structured = {
            "task_id": task_id,
            "split": split,
            "seed": seed,
            "ticket_id": observation.ticket_id,
            "max_steps": observation.max_steps,
            "allowed_actions": list(allowed),
            "tools": tools,
        }
        note = PLAYING_NOTE.format(allowed=", ".join(allowed))
        return _text(
            system_prompt(observation, tool_calls=True), user_prompt(observation, tool_calls=True), note
        ), structured

    async def act(self, function: str, arguments: dict[str, Any]) -> tuple[list[types.ContentBlock], dict[str, Any]]:
        if not self.task_id:
            raise ToolError(f"no episode yet: call {RESET}(task_id, split, seed) first, then {function}")
        if self.ending:
            raise ToolError(
                f"the episode has ended ({self.ending}): call {GRADE}() for its score, "
                f"or {RESET}(task_id, split, seed) to start another"
            )
        allowed = get_task(self.task_id).allowed_actions
        if not _takes(self.task_id, function):
            what = f"{TOOL_KIND} (the help-desk tool {function})" if _kind(function) == TOOL_KIND else function
            raise ToolError(
                f"task {self.task_id} does not take {what}; its actions: {', '.join(allowed)}"
                + (f" (help-desk tools: {', '.join(TOOLS_BY_NAME)})" if TOOL_KIND in allowed else "")
                + f". Call one of those, or {RESET} to start a task that takes {function}."
            )
        action = parse_tool_call(function, arguments, allowed)  # as the LLM policy reads a tool call
        result: Transition = await anyio.to_thread.run_sync(self.backend.step, action)
        if result.done:
            self.ending = "terminated: the ticket was marked resolved" if result.terminated else "truncated"
        parts = _signed_parts(result.breakdown)
        summary = f"Reward {result.reward:+.2f}" + (f" ({parts})" if parts else "") + ". "
        if result.done:
            summary += f"The episode has ended ({self.ending}): call {GRADE}() for the score."
        else:
            summary += f"The episode goes on: step {result.observation.step} of {result.observation.max_steps}."
        structured = {
            "reward": result.reward,
            "done": result.done,
            "terminated": result.terminated,
            "truncated": result.truncated,
            "reward_breakdown": dict(result.breakdown),
            "action": action.to_dict(),
            "step": result.observation.step,
        }
        return _text(summary, user_prompt(result.observation, tool_calls=True)), structured

    async def grade(self) -> tuple[list[types.ContentBlock], dict[str, Any]]:
        if not self.task_id:
            raise ToolError(f"no episode to grade: call {RESET}(task_id, split, seed) first and play it")
        grade: Grade = await anyio.to_thread.run_sync(self.backend.grade)
        return _text(format_grade(grade, finished=bool(self.ending))), grade_dict(grade)


def _reset_arguments(arguments: dict[str, Any]) -> tuple[str, str, int]:
    unknown = sorted(set(arguments) - {"task_id", "split", "seed"})
    if unknown:
        raise ToolError(f"{RESET} takes task_id, split and seed; unknown argument(s): {', '.join(unknown)}")
    task_id = arguments.get("task_id") or DEFAULT_TASK
    split = arguments.get("split") or DEFAULT_SPLIT
    seed = arguments.get("seed", DEFAULT_SEED)
    if task_id not in ALL_TASK_IDS:
        raise ToolError(f"unknown task_id {task_id!r}; the tasks: {', '.join(ALL_TASK_IDS)}")
    if split not in SPLITS:
        raise ToolError(f"unknown split {split!r}; the splits: {', '.join(SPLITS)}")
    if isinstance(seed, float) and seed.is_integer():
        seed = int(seed)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ToolError(f"seed must be a non-negative integer, got {seed!r}")
    return task_id, split, seed


def grade_dict(grade: Grade) -> dict[str, Any]:
    return {
        "task_id": grade.task_id,
        "score": grade.score,
        "passed": grade.passed,
        "pass_threshold": grade.pass_threshold,
        "components": [
            {"name": c.name, "score": c.score, "weight": c.weight, "detail": c.detail} for c in grade.components
        ],
        "failed_gates": list(grade.failed_gates),
        "steps": grade.steps,
        "cumulative_reward": grade.cumulative_reward,
    }


def format_grade(grade: Grade, finished: bool) -> str:
    verdict = "passed" if grade.passed else "not passed"
    lines = [
        f"Score {grade.score:.3f} of 1 ({verdict}; passing needs {grade.pass_threshold:g} and every gate) "
        f"after {grade.steps} steps" + ("." if finished else "; the episode has not ended yet."),
        "Components (score x weight: why):",
        *(f"- {c.name}: {c.score:.2f} x {c.weight:g}: {c.detail}" for c in grade.components),
    ]
    if grade.failed_gates:
        lines += ["Gates that did not hold:", *(f"- {gate}" for gate in grade.failed_gates)]
    return "\n".join(lines)


def make_server(open_backend: Callable[[], Backend]) -> Server[Episode, Any]:
    """The MCP server; `open_backend` makes each session's backend (closed when the session ends)."""

    @asynccontextmanager
    async def session(_: Server[Episode, Any]) -> AsyncIterator[Episode]:
        backend = await anyio.to_thread.run_sync(open_backend)
        try:
            yield Episode(backend)
        finally:
            backend.close()

    server: Server[Episode, Any] = Server(SERVER_NAME, instructions=INSTRUCTIONS, lifespan=session)

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return TOOL_LIST

    # No schema validation by the SDK: arguments go to parse_tool_call as the LLM policy's do, so
    # arguments that do not validate are a penalised invalid step there too.
    @server.call_tool(validate_input=False)
    async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
        episode = server.request_context.lifespan_context
        async with episode.lock:
            try:
                if name == RESET:
                    return await episode.reset(arguments)
                if name == GRADE:
                    return await episode.grade()
                if name in ACTION_FUNCTIONS:
                    return await episode.act(name, arguments)
            except (ToolError, BackendError):
                raise
            except Exception as exc:  # a session must outlive anything one call does
                log.exception("tool %s failed", name)
                raise ToolError(f"{name} failed: {type(exc).__name__}: {exc}") from exc
        names = ", ".join(tool.name for tool in TOOL_LIST)
        raise ToolError(f"unknown tool {name!r}; the tools: {names}")

    return server
