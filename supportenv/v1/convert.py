"""Conversion between the library's objects and the v1 wire messages.

Enum values map by name (library "billing" <-> ISSUE_CATEGORY_BILLING), so adding a
value to both sides is all a new category needs. Unknown or unset values from a
client raise the library's InvalidActionError / InvalidRequestError."""

from __future__ import annotations

from functools import lru_cache

from supportenv.actions import Action
from supportenv.catalog import CATEGORIES, DEPARTMENTS, PRIORITIES, SENTIMENT_LABELS, TIERS
from supportenv.episode import EpisodeState, Observation
from supportenv.errors import InvalidActionError, InvalidRequestError
from supportenv.graders import Grade
from supportenv.records import frozen_record
from supportenv.tasks import Task
from supportenv.v1 import env_pb2, grader_pb2
from supportenv.v1 import types_pb2 as pb
from supportenv.world import SPLITS


def _enum_maps(enum: object, prefix: str, names: tuple[str, ...]) -> tuple[dict[str, int], dict[int, str]]:
    to_pb = {name: enum.Value(prefix + name.upper()) for name in names}  # type: ignore[attr-defined]
    return to_pb, {v: k for k, v in to_pb.items()}


CATEGORY_TO_PB, CATEGORY_FROM_PB = _enum_maps(pb.IssueCategory, "ISSUE_CATEGORY_", CATEGORIES)
PRIORITY_TO_PB, PRIORITY_FROM_PB = _enum_maps(pb.Priority, "PRIORITY_", PRIORITIES)
TIER_TO_PB, TIER_FROM_PB = _enum_maps(pb.CustomerTier, "CUSTOMER_TIER_", TIERS)
DEPARTMENT_TO_PB, DEPARTMENT_FROM_PB = _enum_maps(pb.Department, "DEPARTMENT_", DEPARTMENTS)
SENTIMENT_TO_PB, SENTIMENT_FROM_PB = _enum_maps(pb.SentimentLabel, "SENTIMENT_LABEL_", SENTIMENT_LABELS)
SPLIT_TO_PB, SPLIT_FROM_PB = _enum_maps(pb.Split, "SPLIT_", SPLITS)
DIFFICULTY_TO_PB, _ = _enum_maps(pb.Difficulty, "DIFFICULTY_", ("easy", "medium", "hard"))
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
    return pb.Action(mark_resolved=pb.MarkResolved(summary=action.text))


@lru_cache(maxsize=256)
def episode_constants(
    ticket_id: str,
    task_id: str,
    tier: str,
    tenure_days: int,
    revenue: float,
    kb_matches: tuple[tuple[str, str, float], ...],
    requestable_fields: tuple[str, ...],
    policy: tuple[str, ...],
    instructions: str,
    max_steps: int,
    issue_types: tuple[str, ...],
) -> pb.Observation:
    """The part of an observation that never changes within an episode, built once:
    copying it (in C) is much cheaper than rebuilding its repeated fields every step."""
    return pb.Observation(
        ticket_id=ticket_id,
        task_id=task_id,
        customer_tier=TIER_TO_PB[tier],
        customer_tenure_days=tenure_days,
        customer_total_revenue=revenue,
        kb_matches=[pb.KnowledgeBaseMatch(article_id=a, title=t, score=s) for a, t, s in kb_matches],
        requestable_fields=requestable_fields,
        policy=policy,
        task_instructions=instructions,
        max_steps=max_steps,
        issue_types=issue_types,
    )


# Serialized single-item messages: a turn, fact or reward part recurs step after step of an
# episode, so each is encoded once. Bounded, so memory stays flat however many episodes run.
def encode_turn(speaker: str, text: str, step: int) -> bytes:
    turn = pb.ConversationTurn(speaker=SPEAKER_TO_PB[speaker], text=text, step=step)
    return pb.Observation(history=[turn]).SerializeToString()


_cached_turn = lru_cache(maxsize=4096)(encode_turn)
MAX_CACHED_TURN_CHARS = 1000  # longer turns (an agent's long answer, say) are encoded afresh


def turn_bytes(speaker: str, text: str, step: int) -> bytes:
    if len(text) > MAX_CACHED_TURN_CHARS:
        return encode_turn(speaker, text, step)
    return _cached_turn(speaker, text, step)


@lru_cache(maxsize=1024)
def fact_bytes(name: str, value: str) -> bytes:
    return pb.Observation(revealed_facts=[pb.Fact(name=name, value=value)]).SerializeToString()


@lru_cache(maxsize=1024)
def reward_part_bytes(name: str, value: float) -> bytes:
    return env_pb2.StepResponse(reward_breakdown=[pb.RewardComponent(name=name, value=value)]).SerializeToString()


def observation_to_pb(obs: Observation) -> pb.Observation:
    """The wire observation (the env service encodes its own straight from the state: wire.py)."""
    msg = pb.Observation()
    msg.CopyFrom(
        episode_constants(
            obs.ticket_id,
            obs.task_id,
            obs.customer_tier,
            obs.customer_tenure_days,
            obs.customer_total_revenue,
            obs.kb_matches,
            obs.requestable_fields,
            obs.policy,
            obs.task_instructions,
            obs.max_steps,
            obs.issue_types,
        )
    )
    # The repeated parts arrive as serialized pieces, merged in one parse: building them
    # field by field from Python cost more than all the rest of the observation.
    msg.MergeFromString(
        b"".join([turn_bytes(speaker, text, n) for speaker, text, n in obs.history])
        + b"".join([fact_bytes(name, value) for name, value in obs.revealed_facts])
    )
    msg.customer_message = obs.customer_message
    msg.sentiment_label = SENTIMENT_TO_PB[obs.sentiment_label]
    msg.sentiment_score = obs.sentiment_score
    msg.category = CATEGORY_TO_PB.get(obs.category, 0)
    msg.issue_type = obs.issue_type
    msg.priority = PRIORITY_TO_PB.get(obs.priority, 0)
    msg.step = obs.step
    msg.steps_left = obs.steps_left
    msg.cost_so_far = obs.cost_so_far
    msg.escalated = obs.escalated
    msg.assigned_department = DEPARTMENT_TO_PB.get(obs.assigned_department, 0)
    msg.callback_scheduled = obs.callback_scheduled
    msg.last_action_feedback = obs.last_action_feedback
    return msg


# The observation's per-episode part, converted: ticket_id, task_id, customer tier, tenure and
# revenue, knowledge-base matches, requestable fields, issue types, policy, task instructions
# and max_steps, in that order. Identical on every step of an episode (they are fixed by its
# task, split and seed), so a client following an episode converts them once.
EpisodeConstants = tuple[
    str,
    str,
    str,
    int,
    float,
    tuple[tuple[str, str, float], ...],
    tuple[str, ...],
    tuple[str, ...],
    tuple[str, ...],
    str,
    int,
]


def episode_constants_from_pb(msg: pb.Observation) -> EpisodeConstants:
    return (
        msg.ticket_id,
        msg.task_id,
        TIER_FROM_PB.get(msg.customer_tier, "regular"),
        msg.customer_tenure_days,
        msg.customer_total_revenue,
        tuple([(m.article_id, m.title, m.score) for m in msg.kb_matches]),
        tuple(msg.requestable_fields),
        tuple(msg.issue_types),
        tuple(msg.policy),
        msg.task_instructions,
        msg.max_steps,
    )


def observation_from_pb(msg: pb.Observation, constants: EpisodeConstants | None = None) -> Observation:
    """The library's Observation from the wire one, so policies work in-process and remotely.
    `constants`, from an earlier observation of the same episode (episode_constants_from_pb),
    spares converting that part again; they are used only if the ticket id matches.
    (A client converts one per environment per step: built without the frozen __init__,
    and repeated fields read in list comprehensions, which cost half as much.)"""
    if constants is None or constants[0] != msg.ticket_id:
        constants = episode_constants_from_pb(msg)
    ticket_id, task_id, tier, tenure, revenue, kb_matches, requestable, issue_types, policy, instructions, max_steps = (
        constants
    )
    speaker = SPEAKER_FROM_PB.get
    return frozen_record(
        Observation,
        {
            "ticket_id": ticket_id,
            "task_id": task_id,
            "customer_message": msg.customer_message,
            "history": tuple([(speaker(t.speaker, "system"), t.text, t.step) for t in msg.history]),
            "sentiment_label": SENTIMENT_FROM_PB.get(msg.sentiment_label, "neutral"),
            "sentiment_score": msg.sentiment_score,
            "customer_tier": tier,
            "customer_tenure_days": tenure,
            "customer_total_revenue": revenue,
            "category": CATEGORY_FROM_PB.get(msg.category, ""),
            "issue_type": msg.issue_type,
            "priority": PRIORITY_FROM_PB.get(msg.priority, ""),
            "kb_matches": kb_matches,
            "revealed_facts": tuple([(f.name, f.value) for f in msg.revealed_facts]),
            "requestable_fields": requestable,
            "issue_types": issue_types,
            "policy": policy,
            "task_instructions": instructions,
            "step": msg.step,
            "max_steps": max_steps,
            "steps_left": msg.steps_left,
            "cost_so_far": msg.cost_so_far,
            "escalated": msg.escalated,
            "assigned_department": DEPARTMENT_FROM_PB.get(msg.assigned_department, ""),
            "callback_scheduled": msg.callback_scheduled,
            "last_action_feedback": msg.last_action_feedback,
        },
    )


def episode_state_to_pb(state: EpisodeState, obs: Observation) -> env_pb2.EpisodeState:
    from supportenv.tasks import get_task

    return env_pb2.EpisodeState(
        episode_id=state.episode_id,
        task_id=state.task_id,
        split=SPLIT_TO_PB[state.split],
        seed=state.seed,
        step=state.step,
        max_steps=get_task(state.task_id).max_steps,
        terminated=state.terminated,
        truncated=state.truncated,
        cumulative_reward=state.cumulative_reward,
        actions=[action_to_pb(a) for a in state.actions],
        rewards=state.rewards,
        observation=observation_to_pb(obs),
    )


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
    )
