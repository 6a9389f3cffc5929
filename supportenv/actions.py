"""The eight actions of the source designs and the tool call, as one flat immutable record,
with validation and parsing.

Users may pass an `Action`, a bare kind string ("classify_issue", as in the first
source design) or a dict such as {"action_type": "assign_department", "department": "billing"}
or {"action_type": "use_tool", "tool": "look_up_order", "arguments": {"order_id": "ORD-123456"}}.
A tool call (`use_tool`, see supportenv.tools) is an action only the tasks that list it allow.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from supportenv.catalog import (
    ACTION_KINDS,
    ARTICLES_BY_ID,
    CATEGORIES,
    DEPARTMENTS,
    ISSUE_TYPE_IDS,
    PRIORITIES,
    REQUESTABLE_FIELDS,
    TOOL_KIND,
)
from supportenv.errors import InvalidActionError
from supportenv.tools import ToolCall
from supportenv.tools import validate as validate_tool_call

# Not an agent's choice but a parse failure (an LLM's unreadable output), applied as a penalised step.
INVALID_KIND = "invalid_action"
MAX_TEXT_CHARS = 4000
MAX_FIELDS = len(REQUESTABLE_FIELDS)
# Aliases used by the second source design.
_KIND_ALIASES = {"request_more_info": "ask_for_more_info", "close_resolved": "mark_resolved"}


class Action(NamedTuple):
    """One agent action. An immutable record (a named tuple: equality, hashing and building
    one are the tuple's own), so a step can compare it with every earlier action cheaply."""

    kind: str
    category: str = ""
    priority: str = ""
    issue_type: str = ""
    fields: tuple[str, ...] = ()
    text: str = ""  # question, message, reason, note or summary, by kind
    article_id: str = ""
    department: str = ""
    error: str = ""  # invalid_action only: why the raw output did not parse
    tool: str = ""  # use_tool only: the tool's name
    arguments: tuple[tuple[str, str], ...] = ()  # use_tool only: (argument, value) pairs, in the tool's order

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        for name in ("category", "priority", "issue_type", "text", "article_id", "department", "error"):
            value = getattr(self, name)
            if value:
                out[name] = value
        if self.fields:
            out["fields"] = list(self.fields)
        if self.tool:
            out["tool"] = self.tool
            out["arguments"] = dict(self.arguments)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Action:
        return cls(
            kind=data["kind"],
            category=data.get("category", ""),
            priority=data.get("priority", ""),
            issue_type=data.get("issue_type", ""),
            fields=tuple(data.get("fields", ())),
            text=data.get("text", ""),
            article_id=data.get("article_id", ""),
            department=data.get("department", ""),
            error=data.get("error", ""),
            tool=data.get("tool", ""),
            arguments=tuple((str(k), str(v)) for k, v in dict(data.get("arguments", {})).items()),
        )

    def label(self) -> str:
        """Compact one-token description for logs, e.g. classify_issue(billing,high)."""
        if self.kind == TOOL_KIND:
            return self.tool_call().label()
        params = [p for p in (self.category, self.issue_type, self.priority, self.department, self.article_id) if p]
        params.extend(self.fields)
        return f"{self.kind}({','.join(params)})" if params else self.kind

    def tool_call(self) -> ToolCall:
        return ToolCall(self.tool, self.arguments)


def classify(category: str, priority: str = "", issue_type: str = "") -> Action:
    return Action("classify_issue", category=category, priority=priority, issue_type=issue_type)


def ask(*fields: str, question: str = "") -> Action:
    return Action("ask_for_more_info", fields=tuple(fields), text=question)


def respond(message: str, article_id: str = "") -> Action:
    return Action("respond_with_solution", text=message, article_id=article_id)


def suggest_article(article_id: str) -> Action:
    return Action("suggest_knowledge_base", article_id=article_id)


def assign(department: str, note: str = "") -> Action:
    return Action("assign_department", department=department, text=note)


def escalate(reason: str = "") -> Action:
    return Action("escalate_to_human", text=reason)


def callback(reason: str = "") -> Action:
    return Action("request_callback", text=reason)


def resolve(summary: str = "") -> Action:
    return Action("mark_resolved", text=summary)


def use_tool(tool: str, **arguments: str) -> Action:
    return Action(TOOL_KIND, tool=tool, arguments=tuple((k, str(v)) for k, v in arguments.items()))


def invalid(raw: str, error: str) -> Action:
    """Stand-in for output that did not parse; truncated so it always validates."""
    return Action(INVALID_KIND, text=raw[:MAX_TEXT_CHARS], error=error[:MAX_TEXT_CHARS])


_KINDS = frozenset((*ACTION_KINDS, TOOL_KIND, INVALID_KIND))
_OPTIONAL_PRIORITIES = frozenset(("", *PRIORITIES))
_OPTIONAL_ISSUE_TYPES = frozenset(("", *ISSUE_TYPE_IDS))


def validate(action: Action) -> Action:
    """Raise InvalidActionError with a clear message unless the action is well formed."""
    kind = action.kind
    if kind not in _KINDS:
        raise InvalidActionError(
            f"unknown action kind {kind!r}; expected one of {', '.join((*ACTION_KINDS, TOOL_KIND))}"
        )
    if len(action.text) > MAX_TEXT_CHARS:
        raise InvalidActionError(f"text is {len(action.text)} characters; the limit is {MAX_TEXT_CHARS}")
    if len(action.error) > MAX_TEXT_CHARS:
        raise InvalidActionError(f"error is longer than {MAX_TEXT_CHARS} characters")
    if kind == "classify_issue":
        if action.category not in CATEGORIES:
            raise InvalidActionError(f"classify_issue needs a category, one of {', '.join(CATEGORIES)}")
        if action.priority not in _OPTIONAL_PRIORITIES:
            raise InvalidActionError(f"priority must be one of {', '.join(PRIORITIES)} or empty")
        if action.issue_type not in _OPTIONAL_ISSUE_TYPES:
            raise InvalidActionError(f"unknown issue_type {action.issue_type!r}; see the observation's issue_types")
    elif kind == "ask_for_more_info":
        if not action.fields and not action.text.strip():
            raise InvalidActionError("ask_for_more_info needs fields or a question")
        if len(action.fields) > MAX_FIELDS:
            raise InvalidActionError(f"at most {MAX_FIELDS} fields per question")
        unknown = [f for f in action.fields if f not in REQUESTABLE_FIELDS]
        if unknown:
            raise InvalidActionError(f"unknown fields {unknown}; requestable: {', '.join(REQUESTABLE_FIELDS)}")
    elif kind == "respond_with_solution":
        if not action.text.strip():
            raise InvalidActionError("respond_with_solution needs a message")
        if action.article_id and action.article_id not in ARTICLES_BY_ID:
            raise InvalidActionError(f"unknown article {action.article_id!r}")
    elif kind == "suggest_knowledge_base":
        if action.article_id and action.article_id not in ARTICLES_BY_ID:
            raise InvalidActionError(f"unknown article {action.article_id!r}")
        if not action.article_id:
            raise InvalidActionError("suggest_knowledge_base needs an article_id")
    elif kind == "assign_department" and action.department not in DEPARTMENTS:
        raise InvalidActionError(f"assign_department needs a department, one of {', '.join(DEPARTMENTS)}")
    elif kind == TOOL_KIND:
        validate_tool_call(action.tool_call())
    if (action.tool or action.arguments) and kind != TOOL_KIND:
        raise InvalidActionError(f"only {TOOL_KIND} takes a tool and arguments, not {kind}")
    return action


def parse(raw: Any) -> Action:
    """Accept an Action, a kind string or a dict, and return a validated Action (anything else:
    InvalidActionError; typed Any so that the compiled build refuses it the same way)."""
    if isinstance(raw, Action):
        return validate(raw)
    if isinstance(raw, str):
        # Bare kinds suit the parameter-free actions; the others say what they need.
        return validate(Action(_KIND_ALIASES.get(raw, raw)))
    if isinstance(raw, dict):
        data = dict(raw)
        # "action": the key of the prompt's JSON replies (supportenv.play, the LLM policy), so a
        # reply played there works here as written.
        kind = data.pop("action_type", None) or data.pop("kind", None) or data.pop("action", None)
        if not isinstance(kind, str):
            raise InvalidActionError("an action dict needs 'action_type' (or 'kind', or 'action' as in the prompt)")
        params = data.pop("parameters", None) or {}
        if not isinstance(params, dict):
            raise InvalidActionError(f"'parameters' must be a dict, not {type(params).__name__}")
        data.update(params)
        text = next((data[k] for k in ("text", "message", "question", "reason", "note", "summary") if data.get(k)), "")
        fields = data.get("fields", ())
        if isinstance(fields, str):
            fields = (fields,)
        arguments = data.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise InvalidActionError(f"'arguments' must be a dict, not {type(arguments).__name__}")
        try:
            action = Action(
                kind=_KIND_ALIASES.get(kind, kind),
                category=str(data.get("category", "")),
                priority=str(data.get("priority", "")),
                issue_type=str(data.get("issue_type", "")),
                fields=tuple(str(f) for f in fields),
                text=str(text),
                article_id=str(data.get("article_id", "")),
                department=str(data.get("department", "")),
                tool=str(data.get("tool", "")),
                arguments=tuple((str(k), str(v)) for k, v in arguments.items()),
            )
        except (TypeError, ValueError) as exc:  # e.g. fields that are not a list, an int too long for str()
            raise InvalidActionError(f"bad action parameters: {exc}") from exc
        return validate(action)
    raise InvalidActionError(f"cannot make an action from {type(raw).__name__}")
