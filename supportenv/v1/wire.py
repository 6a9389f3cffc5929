"""The env service's hot replies, encoded straight from the episode state to protobuf bytes.

A step's reply is mostly parts that recur: the episode's constants (ticket, customer,
knowledge-base matches, policy, instructions), the transcript's turns and the reward
parts. Building a message from them meant parsing those parts back into message objects
only to serialize them again for the wire. Here the reply is written as bytes: cached
encoded parts, joined with the few scalars that change each step. The handlers return
these bytes and the server sends them as they are (env_service.servicer.EnvServicer says
how).

Every tag comes from the generated descriptors, so a field cannot be misnumbered, and
tests/test_wire.py checks that the bytes parse to exactly the messages convert builds
(observation_to_pb(observe(...)), field for field) over many episodes.
"""

from __future__ import annotations

import struct
from functools import cache
from typing import TypeVar

from google.protobuf.descriptor import FieldDescriptor

from supportenv.catalog import ISSUE_TYPE_IDS, REQUESTABLE_FIELDS
from supportenv.episode import EpisodeState, last_customer_message, sentiment_label
from supportenv.tasks import get_task
from supportenv.v1 import convert, env_pb2
from supportenv.v1 import types_pb2 as pb
from supportenv.world import Scenario

K = TypeVar("K")


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


def tag(message: type, name: str) -> bytes:
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

_S = env_pb2.StepResponse
_STEP_OBSERVATION, _REWARD, _TERMINATED = tag(_S, "observation"), tag(_S, "reward"), tag(_S, "terminated")
_TRUNCATED, _STEP_TOKEN, _CUMULATIVE = tag(_S, "truncated"), tag(_S, "state_token"), tag(_S, "cumulative_reward")
_NEXT_EPISODE = tag(_S, "next_episode")

_R = env_pb2.ResetResponse
_RESET_OBSERVATION, _RESET_TOKEN = tag(_R, "observation"), tag(_R, "state_token")
_EPISODE_ID, _TASK = tag(_R, "episode_id"), tag(_R, "task")

BATCH_ITEM = tag(env_pb2.StepBatchResponse, "responses")
assert tag(env_pb2.ResetBatchResponse, "responses") == BATCH_ITEM
SESSION_RESET, SESSION_STEP = tag(env_pb2.SessionResponse, "reset"), tag(env_pb2.SessionResponse, "step")

_SENTIMENT = convert.SENTIMENT_TO_PB
_CATEGORY_PB, _PRIORITY_PB, _DEPARTMENT_PB = convert.CATEGORY_TO_PB, convert.PRIORITY_TO_PB, convert.DEPARTMENT_TO_PB
_fact, _reward_part = convert.fact_bytes, convert.reward_part_bytes


def _remember(cache: dict[K, bytes], size: int, key: K, data: bytes) -> bytes:
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


def _new_turn(turn: tuple[str, str, int]) -> bytes:
    data = convert.encode_turn(*turn)
    return data if len(turn[1]) > convert.MAX_CACHED_TURN_CHARS else _remember(_TURNS, TURNS_SIZE, turn, data)


# The encoded constant part of each recent episode's observation, by (task, split, seed).
_CONSTANTS: dict[tuple[str, str, int], bytes] = {}
CONSTANTS_SIZE = 256


def _constants(scenario: Scenario, state: EpisodeState) -> bytes:
    key = (state.task_id, state.split, state.seed)
    data = _CONSTANTS.get(key)
    if data is None:
        task = get_task(state.task_id)
        data = convert.episode_constants(
            scenario.ticket_id,
            state.task_id,
            scenario.tier,
            scenario.tenure_days,
            scenario.total_revenue,
            scenario.kb_matches_titled,
            REQUESTABLE_FIELDS,
            scenario.policy_text,
            task.instructions,
            task.max_steps,
            ISSUE_TYPE_IDS,
        ).SerializeToString()
        _remember(_CONSTANTS, CONSTANTS_SIZE, key, data)
    return data


def observation(scenario: Scenario, state: EpisodeState) -> bytes:
    """convert.observation_to_pb(observe(scenario, state)), encoded: the same message.
    (Written out field by field: each helper call would cost more than its encoding.)"""
    facts = scenario.facts_by_name
    history = state.history
    parts = [_constants(scenario, state)]
    parts += [_TURNS.get(turn) or _new_turn(turn) for turn in history]
    if state.revealed:
        parts += [_fact(name, facts.get(name) or "") for name in state.revealed]
    text = last_customer_message(history).encode()
    if text:
        parts += (_CUSTOMER_MESSAGE, varint(len(text)), text)
    parts += (_SENTIMENT_LABEL, _SMALL[_SENTIMENT[sentiment_label(state.sentiment)]])
    score = _pack_double(round(state.sentiment, 3))
    if score != _ZERO_DOUBLE:
        parts += (_SENTIMENT_SCORE, score)
    if state.category:
        parts += (_CATEGORY, _SMALL[_CATEGORY_PB[state.category]])
    if state.issue_type:
        text = state.issue_type.encode()
        parts += (_ISSUE_TYPE, varint(len(text)), text)
    if state.priority:
        parts += (_PRIORITY, _SMALL[_PRIORITY_PB[state.priority]])
    parts += (number(_STEP, state.step), number(_STEPS_LEFT, get_task(state.task_id).max_steps - state.step))
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
            *[_reward_part(name, value) for name, value in breakdown],
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
