"""Action-log tokens and the worker's cache of live states (env_service.live).

The cache must be invisible: an episode played on one worker (cache hits), with the cache
off (every token replayed), or alternating between two replicas (every call a miss) gives
byte-identical responses, tokens included; a token stepped twice (branching) gives what a
fresh replay gives; a refused action leaves the token usable."""

from __future__ import annotations

import hashlib
import hmac
import secrets

import grpc
import orjson
import pytest

from baseline_agent.embedded import start_service
from env_service.live import LiveStates
from env_service.token_keys import key_id
from env_service.tokens import HEADER_BYTES, TOKEN_VERSION, InvalidTokenError, TokenCodec
from supportenv import expert
from supportenv.episode import step
from supportenv.replay import new_episode
from supportenv.v1 import convert, env_pb2, env_pb2_grpc
from supportenv.v1 import types_pb2 as pb
from supportenv.world import PUBLIC_WORLD, WORLD_VERSION

TASK = "end_to_end_resolution"


def expert_actions(seed: int, task: str = TASK) -> list[pb.Action]:
    scenario, state = new_episode(task, "train", seed)
    actions = []
    while not state.done:
        action = expert.expert_action(scenario, state, task)
        actions.append(convert.action_to_pb(action))
        step(scenario, state, action)
    return actions


def play(stubs, seed: int, task: str = TASK) -> list[env_pb2.StepResponse]:
    """One expert episode, call i going to stubs[i % len(stubs)]; every response."""
    first = stubs[0].Reset(env_pb2.ResetRequest(task_id=task, split=pb.SPLIT_TRAIN, seed=seed), timeout=10)
    responses, token = [first], first.state_token
    for i, action in enumerate(expert_actions(seed, task), start=1):
        reply = stubs[i % len(stubs)].Step(env_pb2.StepRequest(state_token=token, action=action), timeout=10)
        responses.append(reply)
        token = reply.state_token
    return responses


@pytest.fixture(scope="module")
def services():
    key = secrets.token_hex(32)
    started = {
        "cached": start_service("env_service", {"SUPPORTENV_TOKEN_KEY": key, "SUPPORTENV_WORKERS": "1"}),
        "other": start_service("env_service", {"SUPPORTENV_TOKEN_KEY": key, "SUPPORTENV_WORKERS": "1"}),
        "uncached": start_service(
            "env_service", {"SUPPORTENV_TOKEN_KEY": key, "SUPPORTENV_WORKERS": "1", "SUPPORTENV_STATE_CACHE": "0"}
        ),
    }
    channels = {name: grpc.insecure_channel(s.address) for name, s in started.items()}
    try:
        yield {name: env_pb2_grpc.EnvServiceStub(c) for name, c in channels.items()}
    finally:
        for channel in channels.values():
            channel.close()
        assert [s.stop() for s in started.values()] == [0, 0, 0]


@pytest.mark.parametrize("task", ["issue_classification", "action_selection", "end_to_end_resolution"])
def test_hits_misses_and_replicas_give_identical_responses(services, task):
    for seed in (0, 3, 11):
        hits = play([services["cached"]], seed, task)
        replayed = play([services["uncached"]], seed, task)
        alternating = play([services["cached"], services["other"]], seed, task)
        assert hits == replayed == alternating
        assert hits[-1].terminated, "the expert finishes the episode"


def test_a_token_stepped_twice_branches_like_a_fresh_replay(services):
    stub = services["cached"]
    first = stub.Reset(env_pb2.ResetRequest(task_id=TASK, split=pb.SPLIT_TRAIN, seed=21), timeout=10)
    classify, ask = expert_actions(21)[:2]
    other = {pb.ISSUE_CATEGORY_GENERAL, pb.ISSUE_CATEGORY_BILLING} - {classify.classify_issue.category}
    wrong = pb.Action(classify_issue=pb.ClassifyIssue(category=min(other)))
    a = stub.Step(env_pb2.StepRequest(state_token=first.state_token, action=classify), timeout=10)
    b = stub.Step(env_pb2.StepRequest(state_token=first.state_token, action=wrong), timeout=10)
    a_again = stub.Step(env_pb2.StepRequest(state_token=first.state_token, action=classify), timeout=10)
    assert a == a_again and a.observation != b.observation
    # Continue both branches; each matches the uncached service step for step.
    for token, action in ((a.state_token, ask), (b.state_token, ask)):
        cached = stub.Step(env_pb2.StepRequest(state_token=token, action=action), timeout=10)
        fresh = services["uncached"].Step(env_pb2.StepRequest(state_token=token, action=action), timeout=10)
        assert cached == fresh


def test_a_refused_action_leaves_the_token_usable(services):
    stub = services["cached"]
    first = stub.Reset(env_pb2.ResetRequest(task_id=TASK, split=pb.SPLIT_TRAIN, seed=5), timeout=10)
    bad = pb.Action(suggest_knowledge_base=pb.SuggestKnowledgeBase(article_id="KB-nope"))
    for request in (
        env_pb2.StepRequest(state_token=first.state_token, action=bad),
        env_pb2.StepRequest(state_token=first.state_token),
    ):
        with pytest.raises(grpc.RpcError) as info:
            stub.Step(request, timeout=10)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    action = expert_actions(5)[0]
    after = stub.Step(env_pb2.StepRequest(state_token=first.state_token, action=action), timeout=10)
    fresh = services["uncached"].Step(env_pb2.StepRequest(state_token=first.state_token, action=action), timeout=10)
    assert after == fresh and after.observation.step == 1


def test_state_reads_without_consuming(services):
    stub = services["cached"]
    first = stub.Reset(env_pb2.ResetRequest(task_id=TASK, split=pb.SPLIT_TRAIN, seed=6), timeout=10)
    seen = [stub.State(env_pb2.StateRequest(state_token=first.state_token), timeout=10) for _ in range(2)]
    assert seen[0] == seen[1] == services["uncached"].State(env_pb2.StateRequest(state_token=first.state_token))
    action = expert_actions(6)[0]
    after = stub.Step(env_pb2.StepRequest(state_token=first.state_token, action=action), timeout=10)
    assert after == services["uncached"].Step(env_pb2.StepRequest(state_token=first.state_token, action=action))


def test_a_bad_cache_setting_stops_the_service_with_a_message():
    import subprocess
    import sys

    from baseline_agent.embedded import ROOT

    done = subprocess.run(
        [sys.executable, "-m", "env_service", "--port", "0", "--workers", "1"],
        env={"PATH": "/usr/bin:/bin", "SUPPORTENV_STATE_CACHE": "lots", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode != 0
    assert "SUPPORTENV_STATE_CACHE='lots'" in done.stderr and "Traceback" not in done.stderr


# ---- in process ----


def test_live_states_are_bounded_and_taken_once():
    live = LiveStates(size=3)
    _, state = new_episode(TASK, "train", 1)
    for i in range(5):
        live.put(b"t%d" % i, state)
    assert len(live) == 3 and live.peek(b"t0") is None and live.peek(b"t1") is None, "oldest evicted first"
    assert live.peek(b"t4") is state and live.take(b"t4") is state
    assert live.take(b"t4") is None, "a taken state is gone: the caller changes it"
    small = LiveStates(size=10, max_token_bytes=10)
    small.put(b"aaaa", state)
    small.put(b"bbbb", state)
    small.put(b"cccc", state)  # 12 bytes: the oldest goes
    assert small.peek(b"aaaa") is None and small.peek(b"cccc") is state and len(small) == 2
    small.put(b"x" * 11, state)  # larger than the whole budget: not kept, nothing evicted
    assert len(small) == 2 and small.take(b"bbbb") is state
    small.put(b"dddddd", state)
    assert len(small) == 2, "taking gave its bytes back"
    off = LiveStates(size=0)
    off.put(b"t", state)
    assert len(off) == 0 and off.take(b"t") is None


def test_request_caches_keep_only_small_keys():
    """The service's caches of checked requests hold what they check, not a client's bytes:
    a reset's unknown fields or episode id, or a long answer's text, are never kept."""
    from env_service import servicer
    from supportenv import memo, text
    from supportenv.v1 import codec

    servicer._checked_split.cache_clear()
    base = env_pb2.ResetRequest(task_id=TASK, split=pb.SPLIT_TRAIN, seed=3).SerializeToString()
    unknown = codec.varint(1000 << 3 | 2) + codec.varint(100_000) + b"u" * 100_000  # field 1000, unknown
    episode_id = codec.tag(env_pb2.ResetRequest, "episode_id")
    for n in range(20):
        request = env_pb2.ResetRequest.FromString(base + unknown + codec.string(episode_id, f"episode-{n}"))
        assert servicer.EnvServicer._check_reset(request) == "train"
    assert servicer._checked_split.cache_info().currsize == 1
    text.verdict.cache.cache_clear()
    long_answer = "Please reset your password from the login page. " * 40
    assert len(long_answer) > memo.MAX_CACHED_TEXT_CHARS
    assert text.verdict(long_answer, (("password_reset", "KB-ACC-01"),), "") == text.verdict(
        long_answer, (("password_reset", "KB-ACC-01"),), ""
    )
    assert text.verdict.cache.cache_info().currsize == 0


def test_tokens_are_small_deterministic_and_replay_exactly():
    codec = TokenCodec(b"k" * 32)
    scenario, state = new_episode(TASK, "train", 13)
    while not state.done:
        step(scenario, state, expert.expert_action(scenario, state, TASK))
        token = codec.encode(state)
        assert token == TokenCodec(b"k" * 32).encode(codec.decode(token)), "same state, same bytes"
        assert codec.decode(token) == state
    assert len(token) < 1024, "an action log, not a transcript"


def _signed(key: bytes, payload: object) -> bytes:
    head = TOKEN_VERSION + key_id(key)
    body = orjson.dumps(payload)
    return head + hmac.digest(key, head + body, hashlib.sha256) + body


def test_signed_tokens_that_cannot_be_replayed_are_refused_clearly():
    key = b"k" * 32
    codec = TokenCodec(key)
    identity = [WORLD_VERSION, PUBLIC_WORLD, TASK, "train", 3, "e"]
    assert codec.decode(_signed(key, [identity, []])).seed == 3
    cases = {
        "world 'world-0'": [["world-0", PUBLIC_WORLD, TASK, "train", 3, "e"], []],
        "world 'sealed-0000beef'.*SUPPORTENV_WORLD_KEY": [[WORLD_VERSION, "sealed-0000beef", *identity[2:]], []],
        "could not be replayed": [[WORLD_VERSION, PUBLIC_WORLD, "no_such_task", "train", 3, "e"], []],
        "could not be decoded": [identity],
    }
    resolve = ["mark_resolved", "", "", "", [], "", "", "", ""]
    cases["comes after the episode ended"] = [identity, [resolve, resolve]]
    for expected, payload in cases.items():
        with pytest.raises(InvalidTokenError, match=expected):
            codec.decode(_signed(key, payload))
    assert len(_signed(key, [identity, []])) > HEADER_BYTES
