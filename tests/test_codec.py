"""The observation codec (supportenv.v1.codec): its bytes are exactly the messages an
independent, message-building reference encoder (below, test code only) makes of
episode.observe(), every proto field is mapped, and decoding gives observe() back."""

from __future__ import annotations

import json
import random
from dataclasses import fields

import pytest
from expert_episodes import script as expert_script

from supportenv import expert
from supportenv.actions import Action, use_tool, validate
from supportenv.episode import Observation, advance, observe
from supportenv.replay import new_episode
from supportenv.tasks import EXPERT_TASK_ID, TASKS, get_task
from supportenv.tools import ToolResult
from supportenv.v1 import codec, convert, env_pb2
from supportenv.v1 import types_pb2 as pb
from supportenv.world import Briefing

# Off-plan actions mixed into the expert's, so that every branch of a step shows up:
# wrong classifications, pointless and repeated questions, rude and wrong answers,
# wrong transfers, escalations, callbacks, unparseable output.
DETOURS = (
    Action("classify_issue", category="billing", priority="low", issue_type="double_charge"),
    Action("classify_issue", category="technical"),
    Action("ask_for_more_info", fields=("order_id",)),
    Action("ask_for_more_info", fields=("account_email", "error_code")),
    Action("ask_for_more_info", text="What is going on?"),
    Action("respond_with_solution", text="Sorry about that, please try restarting the app."),
    Action("respond_with_solution", text="This is a stupid question."),
    Action("suggest_knowledge_base", article_id="KB-PAY-01"),
    Action("assign_department", department="technical", text="over to you"),
    Action("escalate_to_human", text="needs a human"),
    Action("request_callback", text="call them"),
    Action("invalid_action", text="{not json", error="unparseable output"),
)


def _episodes(per_split: int):
    """(scenario, state) after every step of mixed expert/detour episodes of every task and split."""
    for task in TASKS:
        for split in ("train", "validation", "test"):
            for seed in range(per_split):
                rng = random.Random(f"{task.task_id}:{split}:{seed}")
                scenario, state = new_episode(task.task_id, split, seed, episode_id="" if seed % 2 else f"e-{seed}")
                yield scenario, state, None
                while not state.done:
                    if rng.random() < 0.6:
                        action = expert.expert_action(scenario, state, task.task_id)
                    else:
                        action = validate(rng.choice(DETOURS))
                    yield scenario, state, advance(scenario, state, action)
    yield from _expert_episodes(per_split)


def _expert_episodes(per_split: int):
    """The same for the expert task, its tool calls (refused, not found, ok) included."""
    for split in ("train", "validation", "test"):
        for seed in range(max(1, per_split // 3)):
            scenario, state = new_episode(EXPERT_TASK_ID, split, seed, episode_id=f"x-{seed}")
            yield scenario, state, None
            for action in expert_script(seed, split):
                yield scenario, state, advance(scenario, state, validate(action))


# Observation fields sent as enums, by the value maps of the wire vocabulary.
_ENUMS = {
    "sentiment_label": convert.SENTIMENT_TO_PB,
    "customer_tier": convert.TIER_TO_PB,
    "category": convert.CATEGORY_TO_PB,
    "priority": convert.PRIORITY_TO_PB,
    "assigned_department": convert.DEPARTMENT_TO_PB,
}


def reference_observation(obs: Observation) -> pb.Observation:
    """The wire observation built generically, field by field of the library's Observation,
    with messages: the reference the codec's bytes are checked against. (Any field the
    library adds lands here by itself, so the codec cannot silently leave it out.)"""
    msg = pb.Observation()
    for field in fields(Observation):
        value = getattr(obs, field.name)
        if field.name == "history":
            msg.history.extend(
                pb.ConversationTurn(speaker=convert.SPEAKER_TO_PB[who], text=text, step=n) for who, text, n in value
            )
        elif field.name == "kb_matches":
            msg.kb_matches.extend(pb.KnowledgeBaseMatch(article_id=a, title=t, score=s) for a, t, s in value)
        elif field.name == "revealed_facts":
            msg.revealed_facts.extend(pb.Fact(name=name, value=fact) for name, fact in value)
        elif field.name == "last_reward_breakdown":
            msg.last_reward_breakdown.extend(pb.RewardComponent(name=name, value=part) for name, part in value)
        elif field.name == "tool_result":
            if value is not None:
                msg.tool_result.CopyFrom(
                    pb.ToolResult(
                        tool=value.tool,
                        status=value.status,
                        message=value.message,
                        data_json=json.dumps(value.data, sort_keys=True, separators=(",", ":"), ensure_ascii=False),
                    )
                )
        elif field.name in _ENUMS:
            setattr(msg, field.name, _ENUMS[field.name].get(value, 0))
        elif isinstance(value, tuple):
            getattr(msg, field.name).extend(value)
        else:
            setattr(msg, field.name, value)
    return msg


def test_every_observation_field_is_mapped():
    """The proto Observation and the library's are the same fields; the briefing is the
    part fixed for the episode; and over many episodes every field is sent set."""
    proto = set(pb.Observation.DESCRIPTOR.fields_by_name)
    assert proto == {f.name for f in fields(Observation)}
    assert {f.name for f in fields(Briefing)} <= proto
    seen: set[str] = set()
    for scenario, state, _ in _episodes(per_split=6):
        seen.update(
            field.name for field, _ in pb.Observation.FromString(codec.observation(scenario, state)).ListFields()
        )
    assert seen == proto, f"never set: {sorted(proto - seen)}"


def _same(encoded: bytes, expected) -> None:
    parsed = type(expected).FromString(encoded)
    assert parsed == expected
    assert parsed.SerializeToString(deterministic=True) == expected.SerializeToString(deterministic=True)


def test_observation_matches_the_reference_over_many_episodes():
    checked = 0
    for scenario, state, _ in _episodes(per_split=25):
        _same(codec.observation(scenario, state), reference_observation(observe(scenario, state)))
        checked += 1
    assert checked > 1000


def test_decoding_the_encoding_gives_the_library_observation():
    """decode(encode(state)) is observe(state): equal and hashing alike, over the same 1,000+
    mixed states."""
    checked = 0
    for scenario, state, _ in _episodes(per_split=25):
        back = codec.observation_from_pb(pb.Observation.FromString(codec.observation(scenario, state)))
        expected = observe(scenario, state)
        assert back == expected
        if expected.tool_result is None:  # a tool result's data is a dict: unhashable
            assert hash(back) == hash(expected)
        checked += 1
    assert checked > 1000


def test_a_briefing_is_reused_only_for_its_own_episode():
    """A client following an episode converts its briefing once (VectorEnvClient does)."""
    briefing = None
    for scenario, state, stepped in _episodes(per_split=4):
        msg = pb.Observation.FromString(codec.observation(scenario, state))
        if stepped is None:  # a new episode: the last one's briefing must not leak in
            stale, briefing = briefing, codec.briefing_from_pb(msg)
            assert briefing == scenario.briefing
            if stale is not None:
                assert codec.observation_from_pb(msg, stale) == observe(scenario, state)
        assert codec.observation_from_pb(msg, briefing) == observe(scenario, state)


def test_state_carries_the_same_observation():
    for scenario, state, _ in _episodes(per_split=3):
        public = codec.episode_state(scenario, state)
        assert public.observation == reference_observation(observe(scenario, state))
        assert [convert.action_from_pb(a) for a in public.actions] == state.actions
        assert list(public.rewards) == state.rewards and public.max_steps == get_task(state.task_id).max_steps


def test_step_and_reset_responses_match_messages():
    for scenario, state, stepped in _episodes(per_split=6):
        token = f"token-{state.step}".encode()
        expected_reset = env_pb2.ResetResponse(
            observation=reference_observation(observe(scenario, state)),
            state_token=token,
            episode_id=state.episode_id,
            task=convert.task_to_pb(get_task(state.task_id)),
        )
        _same(codec.reset_response(scenario, state, token), expected_reset)
        if stepped is None:
            continue
        reward, breakdown = stepped
        expected = env_pb2.StepResponse(
            observation=reference_observation(observe(scenario, state)),
            reward=reward,
            terminated=state.terminated,
            truncated=state.truncated,
            reward_breakdown=[pb.RewardComponent(name=n, value=v) for n, v in breakdown],
            state_token=token,
            cumulative_reward=state.cumulative_reward,
        )
        _same(codec.step_response(scenario, state, reward, breakdown, token), expected)
        # With the next episode's reset in the same reply, and in a batch and a stream.
        following = codec.reset_response(scenario, state, b"next")
        expected.next_episode.CopyFrom(env_pb2.ResetResponse.FromString(following))
        encoded = codec.step_response(scenario, state, reward, breakdown, token, following)
        _same(encoded, expected)
        _same(codec.repeated(codec.BATCH_ITEM, [encoded, encoded]), env_pb2.StepBatchResponse(responses=[expected] * 2))
        _same(codec.present(codec.SESSION_STEP, encoded), env_pb2.SessionResponse(step=expected))


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 2**31 - 1, 2**63 - 1, -1, -(2**31)])
def test_varint_matches_protobuf(value):
    expected = pb.Observation(step=value) if -(2**31) <= value < 2**31 else None
    if expected is not None:
        _same(codec.number(codec.tag(pb.Observation, "step"), value), expected)
    msg = env_pb2.ResetRequest(seed=value) if value >= 0 else None
    if msg is not None:
        _same(codec.number(codec.tag(env_pb2.ResetRequest, "seed"), value), msg)


def test_doubles_keep_negative_zero_and_skip_zero():
    key = codec.tag(pb.Observation, "sentiment_score")
    _same(codec.double(key, -0.0), pb.Observation(sentiment_score=-0.0))
    assert codec.double(key, 0.0) == b""
    _same(codec.double(key, -0.375), pb.Observation(sentiment_score=-0.375))


def test_tool_calls_and_results_round_trip():
    """A use_tool action keeps its arguments in order; a tool result's data is canonical JSON."""
    action = use_tool("issue_refund", order_id="ORD-123456", amount="12.50")
    msg = convert.action_to_pb(action)
    assert msg.WhichOneof("kind") == "use_tool"
    assert [(a.name, a.value) for a in msg.use_tool.arguments] == [("order_id", "ORD-123456"), ("amount", "12.50")]
    assert convert.action_from_pb(pb.Action.FromString(msg.SerializeToString())) == action
    result = ToolResult("look_up_order", "ok", "Found order.", {"b": [1, 2.5, None], "a": {"z": "é", "y": True}})
    wire = convert.tool_result_to_pb(result)
    assert wire.data_json == '{"a":{"y":true,"z":"é"},"b":[1,2.5,null]}'
    assert convert.tool_result_from_pb(wire) == result
    assert convert.tool_result_from_pb(pb.ToolResult(tool="t", status="not_found")).data == {}
