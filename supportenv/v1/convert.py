"""The wire vocabulary: enums, actions, tasks and grades, between the library's objects and
the v1 messages. (Observations and the env service's replies have their own codec:
supportenv.v1.codec.)

A tool call (use_tool) travels as UseTool, its arguments in order; a tool's result as
ToolResult, its data as canonical JSON (tool_result_to_pb / tool_result_from_pb).

Enum values map by name (library "billing" <-> ISSUE_CATEGORY_BILLING), so adding a
value to both sides is all a new category needs. Unknown or unset values from a
client raise the library's InvalidActionError / InvalidRequestError."""

from __future__ import annotations

import json
from typing import Any

from supportenv.actions import Action
from supportenv.catalog import CATEGORIES, DEPARTMENTS, PRIORITIES, SENTIMENT_LABELS, TIERS, TOOL_KIND
from supportenv.errors import InvalidActionError, InvalidRequestError
from supportenv.graders import Component, Grade
from supportenv.tasks import Task
from supportenv.tools import ToolResult
from supportenv.v1 import grader_pb2
from supportenv.v1 import types_pb2 as pb
from supportenv.world import SPLITS


def _enum_maps(enum: Any, prefix: str, names: tuple[str, ...]) -> tuple[dict[str, Any], dict[int, str]]:
    """name -> value and back for a generated enum (the values typed Any: each enum has its own ValueType)."""
    to_pb = {name: enum.Value(prefix + name.upper()) for name in names}
    return to_pb, {v: k for k, v in to_pb.items()}


# (declared first: the compiled codec reads them, and mypy must know their types before inferring them)
CATEGORY_TO_PB: dict[str, Any]
PRIORITY_TO_PB: dict[str, Any]
TIER_TO_PB: dict[str, Any]
DEPARTMENT_TO_PB: dict[str, Any]
SENTIMENT_TO_PB: dict[str, Any]
SPLIT_TO_PB: dict[str, Any]
SPEAKER_TO_PB: dict[str, Any]
CATEGORY_TO_PB, CATEGORY_FROM_PB = _enum_maps(pb.IssueCategory, "ISSUE_CATEGORY_", CATEGORIES)
PRIORITY_TO_PB, PRIORITY_FROM_PB = _enum_maps(pb.Priority, "PRIORITY_", PRIORITIES)
TIER_TO_PB, TIER_FROM_PB = _enum_maps(pb.CustomerTier, "CUSTOMER_TIER_", TIERS)
DEPARTMENT_TO_PB, DEPARTMENT_FROM_PB = _enum_maps(pb.Department, "DEPARTMENT_", DEPARTMENTS)
SENTIMENT_TO_PB, SENTIMENT_FROM_PB = _enum_maps(pb.SentimentLabel, "SENTIMENT_LABEL_", SENTIMENT_LABELS)
SPLIT_TO_PB, SPLIT_FROM_PB = _enum_maps(pb.Split, "SPLIT_", SPLITS)
DIFFICULTY_TO_PB, _ = _enum_maps(pb.Difficulty, "DIFFICULTY_", ("easy", "medium", "hard", "expert"))
SPEAKER_TO_PB, SPEAKER_FROM_PB = _enum_maps(pb.Speaker, "SPEAKER_", ("customer", "agent", "system"))


def split_from_pb(value: int) -> str:
    if value == pb.SPLIT_UNSPECIFIED:
        return "train"
    try:
        return SPLIT_FROM_PB[value]
    except KeyError:
        raise InvalidRequestError(
            f"unknown split value {value}; use SPLIT_TRAIN, SPLIT_VALIDATION or SPLIT_TEST"
        ) from None


def _enum_from_pb(value: int, table: dict[int, str], what: str, optional: bool = False) -> str:
    if value == 0 and optional:
        return ""
    try:
        return table[value]
    except KeyError:
        state = "unset" if value == 0 else f"unknown value {value}"
        raise InvalidActionError(f"{what} is {state}; expected one of {', '.join(table.values())}") from None


def action_from_pb(msg: pb.Action) -> Action:
    kind = msg.WhichOneof("kind")
    if kind is None:
        raise InvalidActionError("action has no kind set: set exactly one field of the Action oneof")
    body = getattr(msg, kind)
    if kind == "classify_issue":
        return Action(
            kind,
            category=_enum_from_pb(body.category, CATEGORY_FROM_PB, "category"),
            priority=_enum_from_pb(body.priority, PRIORITY_FROM_PB, "priority", optional=True),
            issue_type=body.issue_type,
        )
    if kind == "ask_for_more_info":
        return Action(kind, fields=tuple(body.fields), text=body.question)
    if kind == "respond_with_solution":
        return Action(kind, text=body.message, article_id=body.article_id)
    if kind == "suggest_knowledge_base":
        return Action(kind, article_id=body.article_id)
    if kind == "assign_department":
        return Action(kind, department=_enum_from_pb(body.department, DEPARTMENT_FROM_PB, "department"), text=body.note)
    if kind == "escalate_to_human":
        return Action(kind, text=body.reason)
    if kind == "request_callback":
        return Action(kind, text=body.reason)
    if kind == "invalid_action":
        return Action(kind, text=body.raw, error=body.error or "unparseable output")
    if kind == "use_tool":
        return Action(TOOL_KIND, tool=body.tool, arguments=tuple([(a.name, a.value) for a in body.arguments]))
    return Action(kind, text=body.summary)


def action_to_pb(action: Action) -> pb.Action:
    k = action.kind
    if k == "classify_issue":
        return pb.Action(
            classify_issue=pb.ClassifyIssue(
                category=CATEGORY_TO_PB[action.category],
                priority=PRIORITY_TO_PB.get(action.priority, 0),
                issue_type=action.issue_type,
            )
        )
    if k == "ask_for_more_info":
        return pb.Action(ask_for_more_info=pb.AskForMoreInfo(fields=action.fields, question=action.text))
    if k == "respond_with_solution":
        return pb.Action(
            respond_with_solution=pb.RespondWithSolution(message=action.text, article_id=action.article_id)
        )
    if k == "suggest_knowledge_base":
        return pb.Action(suggest_knowledge_base=pb.SuggestKnowledgeBase(article_id=action.article_id))
    if k == "assign_department":
        dept = DEPARTMENT_TO_PB[action.department]
        return pb.Action(assign_department=pb.AssignDepartment(department=dept, note=action.text))
    if k == "escalate_to_human":
        return pb.Action(escalate_to_human=pb.EscalateToHuman(reason=action.text))
    if k == "request_callback":
        return pb.Action(request_callback=pb.RequestCallback(reason=action.text))
    if k == "invalid_action":
        return pb.Action(invalid_action=pb.InvalidAction(raw=action.text, error=action.error))
    if k == TOOL_KIND:
        arguments = [pb.ToolArgument(name=name, value=value) for name, value in action.arguments]
        return pb.Action(use_tool=pb.UseTool(tool=action.tool, arguments=arguments))
    return pb.Action(mark_resolved=pb.MarkResolved(summary=action.text))


def data_json(data: dict[str, Any]) -> str:
    """A tool result's data as canonical JSON: sorted keys, no spaces, UTF-8 as is."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def tool_result_to_pb(result: ToolResult) -> pb.ToolResult:
    return pb.ToolResult(
        tool=result.tool, status=result.status, message=result.message, data_json=data_json(result.data)
    )


def tool_result_from_pb(msg: pb.ToolResult) -> ToolResult:
    """The library's ToolResult of a wire one, its data decoded (an empty data_json is {})."""
    data = json.loads(msg.data_json) if msg.data_json else {}
    return ToolResult(tool=msg.tool, status=msg.status, message=msg.message, data=data)


def task_to_pb(task: Task) -> pb.TaskInfo:
    return pb.TaskInfo(
        task_id=task.task_id,
        name=task.name,
        difficulty=DIFFICULTY_TO_PB[task.difficulty],
        description=task.description,
        max_steps=task.max_steps,
        pass_threshold=task.pass_threshold,
        weight=task.weight,
        grader_components=[name for name, _ in task.components],
        instructions=task.instructions,
        allowed_actions=task.allowed_actions,
    )


def grade_to_pb(grade: Grade, episode_id: str = "") -> grader_pb2.GradeResponse:
    return grader_pb2.GradeResponse(
        score=grade.score,
        passed=grade.passed,
        components=[
            grader_pb2.GradeComponent(name=c.name, score=c.score, weight=c.weight, detail=c.detail)
            for c in grade.components
        ],
        grader_version=grade.grader_version,
        task_id=grade.task_id,
        pass_threshold=grade.pass_threshold,
        steps=grade.steps,
        terminated=grade.terminated,
        truncated=grade.truncated,
        cumulative_reward=grade.cumulative_reward,
        rewards=grade.rewards,
        episode_id=episode_id,
        failed_gates=grade.failed_gates,
    )


def grade_from_pb(msg: grader_pb2.GradeResponse) -> Grade:
    """The library's Grade of a GradeResponse (the inverse of grade_to_pb, less its episode_id)."""
    return Grade(
        task_id=msg.task_id,
        score=msg.score,
        passed=msg.passed,
        pass_threshold=msg.pass_threshold,
        components=tuple(Component(c.name, c.score, c.weight, c.detail) for c in msg.components),
        steps=msg.steps,
        terminated=msg.terminated,
        truncated=msg.truncated,
        cumulative_reward=msg.cumulative_reward,
        rewards=tuple(msg.rewards),
        grader_version=msg.grader_version,
        failed_gates=tuple(msg.failed_gates),
    )
