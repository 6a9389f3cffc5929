"""The observation codec: an episode's observation and the env service's replies, encoded
from the episode state, and the observation decoded back into the library's Observation.

This is the one place that knows how an Observation maps onto the wire, both ways: the
service encodes its replies here (Reset, Step, the batches, Session and State), and every
client decodes here. A new observation field is an edit to `observation`, to `briefing_bytes`
if it is fixed for the episode, and to `observation_from_pb`; tests/test_codec.py checks
every field of the proto against an independent reference.

Replies are written as bytes: a step's reply is mostly parts that recur (the briefing,
the transcript's turns, facts and reward parts), each encoded once and cached, joined with
the few scalars that change each step. Building messages instead meant parsing those
parts back into message objects only to serialize them again. The handlers return these
bytes, and the server sends them as they are (see env_service.servicer.EnvServicer). Every
tag comes from the generated descriptors, so a field cannot be misnumbered.
"""

from __future__ import annotations

import struct
from functools import cache, lru_cache
from typing import Any, TypeVar

from google.protobuf.descriptor import FieldDescriptor

from supportenv.episode import EpisodeState, Observation, given_facts, last_customer_message, sentiment_label
from supportenv.tasks import get_task
from supportenv.v1 import convert, env_pb2
from supportenv.v1 import types_pb2 as pb
from supportenv.world import Briefing, Scenario

K = TypeVar("K")
V = TypeVar("V")


def _encode_varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


# Every varint of one or two bytes (lengths up to 16 KB, counts, enum values), encoded once.
_VARINTS = [_encode_varint(n) for n in range(1 << 14)]
_SMALL = _VARINTS[:0x80]


def varint(value: int) -> bytes:
    """Protobuf base-128 varint; negative int32/int64 values as their 64-bit two's complement."""
    return _VARINTS[value] if 0 <= value < 0x4000 else _encode_varint(value)


_WIRE_TYPE = {
    FieldDescriptor.TYPE_DOUBLE: 1,
    FieldDescriptor.TYPE_BOOL: 0,
    FieldDescriptor.TYPE_ENUM: 0,
    FieldDescriptor.TYPE_INT32: 0,
    FieldDescriptor.TYPE_INT64: 0,
    FieldDescriptor.TYPE_STRING: 2,
    FieldDescriptor.TYPE_BYTES: 2,
    FieldDescriptor.TYPE_MESSAGE: 2,
}


def tag(message: Any, name: str) -> bytes:
    """The key bytes (field number and wire type) of field `name` of `message`."""
    field = message.DESCRIPTOR.fields_by_name[name]
    return varint(field.number << 3 | _WIRE_TYPE[field.type])


def string(key: bytes, text: str) -> bytes:
    data = text.encode()
    return key + varint(len(data)) + data if data else b""


def blob(key: bytes, data: bytes) -> bytes:
    """A bytes or message field (a message's encoding is its bytes); proto3 omits an empty one."""
    return key + varint(len(data)) + data if data else b""


def present(key: bytes, data: bytes) -> bytes:
    """A message field that is present even when empty (a oneof member, say)."""
    return key + varint(len(data)) + data


def number(key: bytes, value: int) -> bytes:
    return key + varint(value) if value else b""


def flag(key: bytes, value: bool) -> bytes:
    return key + b"\x01" if value else b""


_pack_double = struct.Struct("<d").pack
_ZERO_DOUBLE = _pack_double(0.0)


def double(key: bytes, value: float) -> bytes:
    data = _pack_double(value)
    return key + data if data != _ZERO_DOUBLE else b""  # -0.0 is sent, as protobuf itself does


_O = pb.Observation
_CUSTOMER_MESSAGE, _SENTIMENT_LABEL = tag(_O, "customer_message"), tag(_O, "sentiment_label")
_SENTIMENT_SCORE, _CATEGORY, _ISSUE_TYPE = tag(_O, "sentiment_score"), tag(_O, "category"), tag(_O, "issue_type")
_PRIORITY, _STEP, _STEPS_LEFT = tag(_O, "priority"), tag(_O, "step"), tag(_O, "steps_left")
_COST, _ESCALATED, _DEPARTMENT = tag(_O, "cost_so_far"), tag(_O, "escalated"), tag(_O, "assigned_department")
_CALLBACK, _FEEDBACK = tag(_O, "callback_scheduled"), tag(_O, "last_action_feedback")
_LAST_REWARD, _LAST_BREAKDOWN = tag(_O, "last_reward"), tag(_O, "last_reward_breakdown")
_TOOL_RESULT = tag(_O, "tool_result")

_S = env_pb2.StepResponse
_STEP_OBSERVATION, _REWARD, _TERMINATED = tag(_S, "observation"), tag(_S, "reward"), tag(_S, "terminated")
_TRUNCATED, _STEP_TOKEN, _CUMULATIVE = tag(_S, "truncated"), tag(_S, "state_token"), tag(_S, "cumulative_reward")
_NEXT_EPISODE, _BREAKDOWN = tag(_S, "next_episode"), tag(_S, "reward_breakdown")

_R = env_pb2.ResetResponse
_RESET_OBSERVATION, _RESET_TOKEN = tag(_R, "observation"), tag(_R, "state_token")
_EPISODE_ID, _TASK = tag(_R, "episode_id"), tag(_R, "task")

BATCH_ITEM = tag(env_pb2.StepBatchResponse, "responses")
assert tag(env_pb2.ResetBatchResponse, "responses") == BATCH_ITEM
SESSION_RESET, SESSION_STEP = tag(env_pb2.SessionResponse, "reset"), tag(env_pb2.SessionResponse, "step")

_SENTIMENT = convert.SENTIMENT_TO_PB
_CATEGORY_PB, _PRIORITY_PB, _DEPARTMENT_PB = convert.CATEGORY_TO_PB, convert.PRIORITY_TO_PB, convert.DEPARTMENT_TO_PB


def _remember(cache: dict[K, V], size: int, key: K, data: V) -> V:
    """Keep `data` under `key`, dropping the oldest entry when `cache` holds `size`:
    bounded, however many episodes run. (A plain dict looked up by the caller: cheaper
    on the hot path than an lru_cache call.)"""
    if len(cache) >= size:
        del cache[next(iter(cache))]
    cache[key] = data
    return data


# Encoded transcript turns by (speaker, text, step), the very tuples EpisodeState.history holds;
# bounded in entries and, as long turns are not kept, in size.
_TURNS: dict[tuple[str, str, int], bytes] = {}
TURNS_SIZE = 4096
MAX_CACHED_TURN_CHARS = 1000  # longer turns (an agent's long answer, say) are encoded afresh


def _new_turn(turn: tuple[str, str, int]) -> bytes:
    speaker, text, step = turn
    data = pb.Observation(
        history=[pb.ConversationTurn(speaker=convert.SPEAKER_TO_PB[speaker], text=text, step=step)]
    ).SerializeToString()
    return data if len(text) > MAX_CACHED_TURN_CHARS else _remember(_TURNS, TURNS_SIZE, turn, data)


@lru_cache(maxsize=1024)
def _kb_suggestions(matches: tuple[tuple[str, str, float], ...]) -> bytes:
    return pb.Observation(
        kb_matches=[pb.KnowledgeBaseMatch(article_id=a, title=t, score=s) for a, t, s in matches]
    ).SerializeToString()


@lru_cache(maxsize=1024)
def _fact(name: str, value: str) -> bytes:
    return pb.Observation(revealed_facts=[pb.Fact(name=name, value=value)]).SerializeToString()


@lru_cache(maxsize=1024)
def _reward_part(key: bytes, name: str, value: float) -> bytes:
    """One item of a repeated RewardComponent field: StepResponse.reward_breakdown or
    Observation.last_reward_breakdown, by `key`."""
    return present(key, pb.RewardComponent(name=name, value=value).SerializeToString())


def _encode_briefing(brief: Briefing) -> bytes:
    return pb.Observation(
        ticket_id=brief.ticket_id,
        task_id=brief.task_id,
        customer_tier=convert.TIER_TO_PB[brief.customer_tier],
        customer_tenure_days=brief.customer_tenure_days,
        customer_total_revenue=brief.customer_total_revenue,
        requestable_fields=brief.requestable_fields,
        issue_types=brief.issue_types,
        policy=brief.policy,
        task_instructions=brief.task_instructions,
        max_steps=brief.max_steps,
        allowed_actions=brief.allowed_actions,
    ).SerializeToString()


# The encoded briefings of recent episodes, by the briefing object itself (each scenario has
# one): its identity is cheap to look up where hashing its fields is not. An entry holds its
# briefing, so the id cannot be reused while the entry lives.
_BRIEFINGS: dict[int, tuple[Briefing, bytes]] = {}
BRIEFINGS_SIZE = 256


def briefing_bytes(brief: Briefing) -> bytes:
    """The observation fields that are fixed for the episode, encoded."""
    entry = _BRIEFINGS.get(id(brief))
    if entry is not None and entry[0] is brief:
        return entry[1]
    data = _encode_briefing(brief)
    _remember(_BRIEFINGS, BRIEFINGS_SIZE, id(brief), (brief, data))
    return data


def observation(scenario: Scenario, state: EpisodeState) -> bytes:
    """episode.observe(scenario, state), encoded as a types.Observation.
    (Written out field by field: each helper call would cost more than its encoding.)"""
    history = state.history
    brief = scenario.briefing
    parts = [briefing_bytes(brief)]
    parts += [_TURNS.get(turn) or _new_turn(turn) for turn in history]
    if state.revealed:
        parts += [_fact(name, value) for name, value in given_facts(scenario, state)]
    text = last_customer_message(history).encode()
    if text:
        parts += (_CUSTOMER_MESSAGE, varint(len(text)), text)
    parts += (_SENTIMENT_LABEL, _SMALL[_SENTIMENT[sentiment_label(state.sentiment)]])
    score = _pack_double(round(state.sentiment, 3))
    if score != _ZERO_DOUBLE:
        parts += (_SENTIMENT_SCORE, score)
    if state.category:
        parts += (_CATEGORY, _SMALL[_CATEGORY_PB[state.category]])
        matches = scenario.suggestions(state.category, state.issue_type)
        if matches:
            parts.append(_kb_suggestions(matches))
    if state.issue_type:
        text = state.issue_type.encode()
        parts += (_ISSUE_TYPE, varint(len(text)), text)
    if state.priority:
        parts += (_PRIORITY, _SMALL[_PRIORITY_PB[state.priority]])
    parts += (number(_STEP, state.step), number(_STEPS_LEFT, brief.max_steps - state.step))
    cost = _pack_double(state.cost)
    if cost != _ZERO_DOUBLE:
        parts += (_COST, cost)
    if state.escalated:
        parts.append(_ESCALATED + b"\x01")
    if state.department:
        parts += (_DEPARTMENT, _SMALL[_DEPARTMENT_PB[state.department]])
    if state.callback:
        parts.append(_CALLBACK + b"\x01")
    if state.last_feedback:
        text = state.last_feedback.encode()
        parts += (_FEEDBACK, varint(len(text)), text)
    reward = _pack_double(state.last_reward)
    if reward != _ZERO_DOUBLE:
        parts += (_LAST_REWARD, reward)
    if state.last_breakdown:
        parts += [_reward_part(_LAST_BREAKDOWN, name, value) for name, value in state.last_breakdown]
    if state.tool_result is not None:  # only on the step after a tool call: encoded afresh
        parts.append(present(_TOOL_RESULT, convert.tool_result_to_pb(state.tool_result).SerializeToString()))
    return b"".join(parts)


def step_response(
    scenario: Scenario,
    state: EpisodeState,
    reward: float,
    breakdown: tuple[tuple[str, float], ...],
    token: bytes,
    next_episode: bytes = b"",
) -> bytes:
    """A StepResponse for a step taken with episode.advance; `next_episode` is an
    encoded ResetResponse (reset_response) or empty."""
    return b"".join(
        [
            present(_STEP_OBSERVATION, observation(scenario, state)),
            double(_REWARD, reward),
            flag(_TERMINATED, state.terminated),
            flag(_TRUNCATED, state.truncated),
            *[_reward_part(_BREAKDOWN, name, value) for name, value in breakdown],
            blob(_STEP_TOKEN, token),
            double(_CUMULATIVE, state.cumulative_reward),
            present(_NEXT_EPISODE, next_episode) if next_episode else b"",
        ]
    )


@cache  # one per task
def _task(task_id: str) -> bytes:
    return present(_TASK, convert.task_to_pb(get_task(task_id)).SerializeToString())


def reset_response(scenario: Scenario, state: EpisodeState, token: bytes) -> bytes:
    return b"".join(
        [
            present(_RESET_OBSERVATION, observation(scenario, state)),
            blob(_RESET_TOKEN, token),
            string(_EPISODE_ID, state.episode_id),
            _task(state.task_id),
        ]
    )


def repeated(key: bytes, items: list[bytes]) -> bytes:
    """A repeated message field (a batch's responses) from its encoded items."""
    return b"".join([key + varint(len(item)) + item for item in items])


def episode_state(scenario: Scenario, state: EpisodeState) -> env_pb2.EpisodeState:
    """The public episode state that State returns, its observation encoded as every reply's is."""
    public = env_pb2.EpisodeState(
        episode_id=state.episode_id,
        task_id=state.task_id,
        split=convert.SPLIT_TO_PB[state.split],
        seed=state.seed,
        step=state.step,
        max_steps=scenario.briefing.max_steps,
        terminated=state.terminated,
        truncated=state.truncated,
        cumulative_reward=state.cumulative_reward,
        actions=[convert.action_to_pb(a) for a in state.actions],
        rewards=state.rewards,
        identity_verified=state.verified,
        changes=[env_pb2.RecordChange(tool=tool, target=target, value=value) for tool, target, value in state.changes],
    )
    public.observation.MergeFromString(observation(scenario, state))
    return public


# ---- decoding: what clients do with an observation ----


def briefing_from_pb(msg: pb.Observation) -> Briefing:
    """The fields of a wire observation that are fixed for its episode."""
    return Briefing(
        ticket_id=msg.ticket_id,
        task_id=msg.task_id,
        customer_tier=convert.TIER_FROM_PB.get(msg.customer_tier, "regular"),
        customer_tenure_days=msg.customer_tenure_days,
        customer_total_revenue=msg.customer_total_revenue,
        requestable_fields=tuple(msg.requestable_fields),
        issue_types=tuple(msg.issue_types),
        policy=tuple(msg.policy),
        task_instructions=msg.task_instructions,
        max_steps=msg.max_steps,
        allowed_actions=tuple(msg.allowed_actions),
    )


def observation_from_pb(msg: pb.Observation, briefing: Briefing | None = None) -> Observation:
    """The library's Observation from the wire one, so policies work in-process and remotely.
    `briefing`, from an earlier observation of the same episode (briefing_from_pb), spares
    converting that part again; it is used only if its ticket and task match.
    (A client converts one per environment per step: built without the frozen __init__,
    and repeated fields read in list comprehensions, which cost half as much.)"""
    brief = briefing
    if brief is None or brief.ticket_id != msg.ticket_id or brief.task_id != msg.task_id:
        brief = briefing_from_pb(msg)
    speaker = convert.SPEAKER_FROM_PB.get
    return Observation(
        ticket_id=brief.ticket_id,
        task_id=brief.task_id,
        customer_message=msg.customer_message,
        history=tuple([(speaker(t.speaker, "system"), t.text, t.step) for t in msg.history]),
        sentiment_label=convert.SENTIMENT_FROM_PB.get(msg.sentiment_label, "neutral"),
        sentiment_score=msg.sentiment_score,
        customer_tier=brief.customer_tier,
        customer_tenure_days=brief.customer_tenure_days,
        customer_total_revenue=brief.customer_total_revenue,
        category=convert.CATEGORY_FROM_PB.get(msg.category, ""),
        issue_type=msg.issue_type,
        priority=convert.PRIORITY_FROM_PB.get(msg.priority, ""),
        kb_matches=tuple([(m.article_id, m.title, m.score) for m in msg.kb_matches]),
        revealed_facts=tuple([(f.name, f.value) for f in msg.revealed_facts]),
        requestable_fields=brief.requestable_fields,
        issue_types=brief.issue_types,
        policy=brief.policy,
        task_instructions=brief.task_instructions,
        step=msg.step,
        max_steps=brief.max_steps,
        steps_left=msg.steps_left,
        cost_so_far=msg.cost_so_far,
        escalated=msg.escalated,
        assigned_department=convert.DEPARTMENT_FROM_PB.get(msg.assigned_department, ""),
        callback_scheduled=msg.callback_scheduled,
        last_action_feedback=msg.last_action_feedback,
        last_reward=msg.last_reward,
        last_reward_breakdown=tuple([(part.name, part.value) for part in msg.last_reward_breakdown]),
        tool_result=convert.tool_result_from_pb(msg.tool_result) if msg.HasField("tool_result") else None,
        allowed_actions=brief.allowed_actions,
    )
