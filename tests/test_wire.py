"""The hand-encoded replies (supportenv.v1.wire) are exactly the messages convert builds."""

from __future__ import annotations

import random
from dataclasses import fields

import pytest

from supportenv import expert
from supportenv.actions import Action, validate
from supportenv.episode import Observation, advance, new_episode, observe
from supportenv.tasks import TASKS, get_task
from supportenv.v1 import convert, env_pb2, wire
from supportenv.v1 import types_pb2 as pb

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


def _same(encoded: bytes, expected) -> None:
    parsed = type(expected).FromString(encoded)
    assert parsed == expected
    assert parsed.SerializeToString(deterministic=True) == expected.SerializeToString(deterministic=True)


def test_observation_matches_convert_over_many_episodes():
    checked = 0
    for scenario, state, _ in _episodes(per_split=25):
        _same(wire.observation(scenario, state), convert.observation_to_pb(observe(scenario, state)))
        checked += 1
    assert checked > 1000


def test_the_sdk_reads_back_the_library_observation():
    """What clients get (convert.observation_from_pb of the encoded bytes) is the library's own
    Observation: equal, hashing alike, its fields in declaration order."""
    names = [f.name for f in fields(Observation)]
    for scenario, state, _ in _episodes(per_split=8):
        back = convert.observation_from_pb(pb.Observation.FromString(wire.observation(scenario, state)))
        expected = observe(scenario, state)
        assert back == expected and hash(back) == hash(expected)
        assert list(vars(back)) == names


def test_episode_constants_are_reused_only_for_their_own_ticket():
    """A client following an episode converts its constant part once (VectorEnvClient does)."""
    constants, ticket = None, None
    for scenario, state, stepped in _episodes(per_split=4):
        msg = pb.Observation.FromString(wire.observation(scenario, state))
        if stepped is None:  # a new episode: what the last one's constants would give must not leak in
            stale, constants = constants, convert.episode_constants_from_pb(msg)
            if stale is not None and ticket != scenario.ticket_id:
                assert convert.observation_from_pb(msg, stale) == observe(scenario, state)
            ticket = scenario.ticket_id
        assert convert.observation_from_pb(msg, constants) == observe(scenario, state)


def test_step_and_reset_responses_match_messages():
    for scenario, state, stepped in _episodes(per_split=6):
        token = f"token-{state.step}".encode()
        expected_reset = env_pb2.ResetResponse(
            observation=convert.observation_to_pb(observe(scenario, state)),
            state_token=token,
            episode_id=state.episode_id,
            task=convert.task_to_pb(get_task(state.task_id)),
        )
        _same(wire.reset_response(scenario, state, token), expected_reset)
        if stepped is None:
            continue
        reward, breakdown = stepped
        expected = env_pb2.StepResponse(
            observation=convert.observation_to_pb(observe(scenario, state)),
            reward=reward,
            terminated=state.terminated,
            truncated=state.truncated,
            reward_breakdown=[pb.RewardComponent(name=n, value=v) for n, v in breakdown],
            state_token=token,
            cumulative_reward=state.cumulative_reward,
        )
        _same(wire.step_response(scenario, state, reward, breakdown, token), expected)
        # With the next episode's reset in the same reply, and in a batch and a stream.
        following = wire.reset_response(scenario, state, b"next")
        expected.next_episode.CopyFrom(env_pb2.ResetResponse.FromString(following))
        encoded = wire.step_response(scenario, state, reward, breakdown, token, following)
        _same(encoded, expected)
        _same(wire.repeated(wire.BATCH_ITEM, [encoded, encoded]), env_pb2.StepBatchResponse(responses=[expected] * 2))
        _same(wire.present(wire.SESSION_STEP, encoded), env_pb2.SessionResponse(step=expected))


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 2**31 - 1, 2**63 - 1, -1, -(2**31)])
def test_varint_matches_protobuf(value):
    expected = pb.Observation(step=value) if -(2**31) <= value < 2**31 else None
    if expected is not None:
        _same(wire.number(wire.tag(pb.Observation, "step"), value), expected)
    msg = env_pb2.ResetRequest(seed=value) if value >= 0 else None
    if msg is not None:
        _same(wire.number(wire.tag(env_pb2.ResetRequest, "seed"), value), msg)


def test_doubles_keep_negative_zero_and_skip_zero():
    key = wire.tag(pb.Observation, "sentiment_score")
    _same(wire.double(key, -0.0), pb.Observation(sentiment_score=-0.0))
    assert wire.double(key, 0.0) == b""
    _same(wire.double(key, -0.375), pb.Observation(sentiment_score=-0.375))
