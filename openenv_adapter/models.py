"""The OpenEnv wire models: action, observation and state, as pydantic subclasses of
openenv's own base types.

Field names are supportenv's own (Action, Observation), so converting either way is a
copy; the JSON schema the server publishes at /schema is generated from these classes.

A tool call (the expert task's use_tool) is {"kind": "use_tool", "tool": "look_up_order",
"arguments": {"order_id": "ORD-123456"}}; argument values are strings (numbers are accepted and
read as their text). The observation carries the task's `allowed_actions` and the last tool call's
`tool_result` (null after any other action).
"""

from __future__ import annotations

from typing import Any, Literal

from openenv.core.env_server.types import Action, Observation, State
from pydantic import BaseModel, ConfigDict, Field, field_validator

from supportenv import actions as lib_actions
from supportenv import episode
from supportenv.catalog import CATEGORIES, DEPARTMENTS, PRIORITIES, REQUESTABLE_FIELDS, TOOL_KIND
from supportenv.tools import STATUSES, TOOL_NAMES, ToolResult

# The eight agent actions, the tool call (use_tool: only the tasks whose allowed_actions list it
# take it; on any other it is a penalised step), plus invalid_action: how a harness reports model
# output it could not parse, so it becomes a penalised step (as in the gRPC contract) instead of an error.
ActionKind = Literal[(*lib_actions.ACTION_KINDS, TOOL_KIND, lib_actions.INVALID_KIND)]


class SupportAction(Action):
    """One agent action. Only the parameters of the chosen kind are read."""

    kind: ActionKind = Field(description="which action; the other fields are its parameters")
    category: str = Field("", description=f"classify_issue: one of {', '.join(CATEGORIES)}")
    priority: str = Field("", description=f"classify_issue: one of {', '.join(PRIORITIES)}, or empty")
    issue_type: str = Field("", description="classify_issue: one of the observation's issue_types, or empty")
    fields: list[str] = Field(
        default_factory=list, description=f"ask_for_more_info: facts to ask for, from {', '.join(REQUESTABLE_FIELDS)}"
    )
    text: str = Field(
        "",
        description=(
            "the question (ask_for_more_info), message (respond_with_solution), note (assign_department), "
            "reason (escalate_to_human, request_callback), summary (mark_resolved) or raw output (invalid_action)"
        ),
    )
    article_id: str = Field("", description="suggest_knowledge_base (required) or respond_with_solution (optional)")
    department: str = Field("", description=f"assign_department: one of {', '.join(DEPARTMENTS)}")
    error: str = Field("", description="invalid_action: why the raw output did not parse; ignored otherwise")
    tool: str = Field("", description=f"use_tool: the tool, one of {', '.join(TOOL_NAMES)}")
    arguments: dict[str, str] = Field(
        default_factory=dict,
        description='use_tool: the tool\'s arguments by name, e.g. {"order_id": "ORD-123456"}; string values',
    )

    @field_validator("arguments", mode="before")
    @classmethod
    def _numbers_as_text(cls, value: Any) -> Any:
        # A model writes an amount as a number as often as a string; both mean the same.
        if isinstance(value, dict):
            return {
                k: str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v for k, v in value.items()
            }
        return value

    def to_library(self) -> lib_actions.Action:
        """The validated library action; raises supportenv's InvalidActionError."""
        if self.kind == lib_actions.INVALID_KIND:
            return lib_actions.invalid(self.text, self.error or "unparseable output")
        return lib_actions.validate(
            lib_actions.Action(
                kind=self.kind,
                category=self.category,
                priority=self.priority,
                issue_type=self.issue_type,
                fields=tuple(self.fields),
                text=self.text,
                article_id=self.article_id,
                department=self.department,
                tool=self.tool,
                arguments=tuple(self.arguments.items()),
            )
        )

    @classmethod
    def from_library(cls, action: lib_actions.Action) -> SupportAction:
        return cls.model_validate(action.to_dict())


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Turn(_Part):
    speaker: Literal["customer", "agent", "system"]
    text: str
    step: int = Field(description="the step it happened at; 0 for the opening and a colleague's earlier steps")


class KnowledgeBaseMatch(_Part):
    article_id: str
    title: str
    score: float


class Fact(_Part):
    name: str
    value: str


class RewardPart(_Part):
    name: str
    value: float


class ToolCallResult(_Part):
    """What a tool call returned (supportenv.tools.ToolResult)."""

    tool: str
    status: Literal[STATUSES] = Field(description="ok, not_found (nothing matches) or refused (policy forbids it)")
    message: str = Field(description="one sentence for a reader")
    data: dict[str, Any] = Field(default_factory=dict, description="what the tool found or did; empty if nothing")

    @classmethod
    def from_library(cls, result: ToolResult) -> ToolCallResult:
        return cls(tool=result.tool, status=result.status, message=result.message, data=dict(result.data))

    def to_library(self) -> ToolResult:
        return ToolResult(self.tool, self.status, self.message, dict(self.data))


class SupportObservation(Observation):
    """Every field of supportenv.episode.Observation, plus the step's reward breakdown.

    `reward` is the step's shaped reward (None after reset); `done` is terminated or truncated.
    """

    ticket_id: str = ""
    task_id: str = ""
    customer_message: str = Field("", description="the customer's latest message")
    history: list[Turn] = Field(default_factory=list)
    sentiment_label: str = ""
    sentiment_score: float = 0.0
    customer_tier: str = ""
    customer_tenure_days: int = 0
    customer_total_revenue: float = 0.0
    category: str = Field("", description="as triaged by the agent")
    issue_type: str = Field("", description="as triaged by the agent")
    priority: str = Field("", description="as triaged by the agent")
    kb_matches: list[KnowledgeBaseMatch] = Field(default_factory=list)
    revealed_facts: list[Fact] = Field(default_factory=list)
    requestable_fields: list[str] = Field(default_factory=list)
    issue_types: list[str] = Field(default_factory=list)
    policy: list[str] = Field(default_factory=list)
    task_instructions: str = ""
    step: int = 0
    max_steps: int = 0
    steps_left: int = 0
    cost_so_far: float = 0.0
    escalated: bool = False
    assigned_department: str = ""
    callback_scheduled: bool = False
    last_action_feedback: str = ""
    last_reward: float = Field(0.0, description="the reward of the agent's last step; 0 before its first")
    last_reward_breakdown: list[RewardPart] = Field(
        default_factory=list, description="the named parts of last_reward, in order; empty before the first step"
    )
    tool_result: ToolCallResult | None = Field(
        None, description="what the last step's tool call (use_tool) returned; null after any other action"
    )
    allowed_actions: list[str] = Field(default_factory=list, description="the action kinds the task takes")
    reward_breakdown: dict[str, float] = Field(
        default_factory=dict, description="the named parts the step's reward is the sum of"
    )
    terminated: bool = Field(False, description="the agent closed the ticket (mark_resolved)")
    truncated: bool = Field(False, description="the step budget ran out or the customer left")

    @classmethod
    def from_library(cls, obs: episode.Observation, result: episode.StepResult | None = None) -> SupportObservation:
        """After reset pass no result: the reward is then None and the episode not done."""
        return cls(
            ticket_id=obs.ticket_id,
            task_id=obs.task_id,
            customer_message=obs.customer_message,
            history=[Turn(speaker=s, text=t, step=n) for s, t, n in obs.history],
            sentiment_label=obs.sentiment_label,
            sentiment_score=obs.sentiment_score,
            customer_tier=obs.customer_tier,
            customer_tenure_days=obs.customer_tenure_days,
            customer_total_revenue=obs.customer_total_revenue,
            category=obs.category,
            issue_type=obs.issue_type,
            priority=obs.priority,
            kb_matches=[KnowledgeBaseMatch(article_id=a, title=t, score=s) for a, t, s in obs.kb_matches],
            revealed_facts=[Fact(name=n, value=v) for n, v in obs.revealed_facts],
            requestable_fields=list(obs.requestable_fields),
            issue_types=list(obs.issue_types),
            policy=list(obs.policy),
            task_instructions=obs.task_instructions,
            step=obs.step,
            max_steps=obs.max_steps,
            steps_left=obs.steps_left,
            cost_so_far=obs.cost_so_far,
            escalated=obs.escalated,
            assigned_department=obs.assigned_department,
            callback_scheduled=obs.callback_scheduled,
            last_action_feedback=obs.last_action_feedback,
            last_reward=obs.last_reward,
            last_reward_breakdown=[RewardPart(name=n, value=v) for n, v in obs.last_reward_breakdown],
            tool_result=None if obs.tool_result is None else ToolCallResult.from_library(obs.tool_result),
            allowed_actions=list(obs.allowed_actions),
            reward=None if result is None else result.reward,
            done=result is not None and (result.terminated or result.truncated),
            reward_breakdown=dict(result.breakdown) if result else {},
            terminated=result is not None and result.terminated,
            truncated=result is not None and result.truncated,
        )

    def to_library(self) -> episode.Observation:
        """The library's Observation, so the same policies play in-process, over gRPC and here."""
        return episode.Observation(
            ticket_id=self.ticket_id,
            task_id=self.task_id,
            customer_message=self.customer_message,
            history=tuple((t.speaker, t.text, t.step) for t in self.history),
            sentiment_label=self.sentiment_label,
            sentiment_score=self.sentiment_score,
            customer_tier=self.customer_tier,
            customer_tenure_days=self.customer_tenure_days,
            customer_total_revenue=self.customer_total_revenue,
            category=self.category,
            issue_type=self.issue_type,
            priority=self.priority,
            kb_matches=tuple((m.article_id, m.title, m.score) for m in self.kb_matches),
            revealed_facts=tuple((f.name, f.value) for f in self.revealed_facts),
            requestable_fields=tuple(self.requestable_fields),
            issue_types=tuple(self.issue_types),
            policy=tuple(self.policy),
            task_instructions=self.task_instructions,
            step=self.step,
            max_steps=self.max_steps,
            steps_left=self.steps_left,
            cost_so_far=self.cost_so_far,
            escalated=self.escalated,
            assigned_department=self.assigned_department,
            callback_scheduled=self.callback_scheduled,
            last_action_feedback=self.last_action_feedback,
            last_reward=self.last_reward,
            last_reward_breakdown=tuple((p.name, p.value) for p in self.last_reward_breakdown),
            tool_result=None if self.tool_result is None else self.tool_result.to_library(),
            allowed_actions=tuple(self.allowed_actions),
        )


class SupportState(State):
    """The public episode state (no hidden scenario). `step_count` counts the agent's steps,
    not a colleague's earlier ones in action_selection; `actions` is the trajectory the
    grader service replays."""

    task_id: str = ""
    split: str = ""
    seed: int | None = None
    max_steps: int = 0
    terminated: bool = False
    truncated: bool = False
    cumulative_reward: float = 0.0
    actions: list[dict[str, Any]] = Field(
        default_factory=list, description="the actions so far, each in the shape of an action"
    )
