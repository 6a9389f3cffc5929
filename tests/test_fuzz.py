"""Fuzzing the two decoders that read untrusted bytes, in process and over real gRPC.

- The token decoder (TokenCodec.decode) fed random bytes and mutated valid tokens
  raises InvalidTokenError and nothing else; a token changed in any way never verifies.
- The action decoder (Action parsed from random or mutated bytes, then action_from_pb
  and validate) raises protobuf's DecodeError or InvalidActionError and nothing else;
  whatever it accepts goes back onto the wire (as State echoes it) unchanged.
- Over gRPC, random and mutated tokens and random and mutated serialized requests, for
  every RPC, get a documented status code, never UNKNOWN or INTERNAL, and the services
  stay SERVING.

Hypothesis runs derandomized with a bounded number of examples, so a run is
deterministic and takes seconds."""

from __future__ import annotations

import copy

import grpc
import pytest
from google.protobuf.message import DecodeError
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from env_service.tokens import InvalidTokenError, TokenCodec
from supportenv import expert
from supportenv.actions import validate
from supportenv.episode import EpisodeState, step
from supportenv.errors import InvalidActionError
from supportenv.replay import new_episode
from supportenv.v1 import convert, env_pb2, grader_pb2
from supportenv.v1 import types_pb2 as pb

TASK = "end_to_end_resolution"
TIMEOUT = 20
OK = grpc.StatusCode.OK
INVALID = grpc.StatusCode.INVALID_ARGUMENT
NOT_FOUND = grpc.StatusCode.NOT_FOUND
PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION
EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED
DOCUMENTED = {INVALID, NOT_FOUND, PRECONDITION, EXHAUSTED}


def fuzz(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# ---- mutations of valid bytes ----

edits = st.lists(
    st.tuples(
        st.sampled_from(["flip", "set", "insert", "delete", "truncate", "duplicate"]),
        st.integers(0, 2**20),
        st.integers(0, 255),
        st.binary(min_size=1, max_size=8),
    ),
    min_size=1,
    max_size=4,
)


def mutate(data: bytes, ops: list[tuple[str, int, int, bytes]]) -> bytes:
    out = bytearray(data)
    for op, where, value, chunk in ops:
        at = where % (len(out) + 1)
        if op == "flip" and out:
            out[at % len(out)] ^= 1 << (value % 8)
        elif op == "set" and out:
            out[at % len(out)] = value
        elif op == "insert":
            out[at:at] = chunk
        elif op == "delete":
            del out[at : at + 1 + value % 16]
        elif op == "truncate":
            del out[at:]
        elif op == "duplicate":
            out[at:at] = out[at : at + 1 + value]
    return bytes(out)


def played_states() -> list:
    """Episode states at several points of every task: fresh, mid-way and finished."""
    states = []
    for task_id in ("issue_classification", "action_selection", TASK):
        scenario, state = new_episode(task_id, "train", 7)
        states.append(copy.deepcopy(state.to_dict()))  # a snapshot
        while not state.done:
            step(scenario, state, expert.expert_action(scenario, state, task_id))
            states.append(copy.deepcopy(state.to_dict()))
    return states


FUZZ_KEY = b"fuzzing-key-" + b"k" * 20
CODEC = TokenCodec(FUZZ_KEY)
ROWS = played_states()


def valid_token(index: int) -> bytes:
    return CODEC.encode(EpisodeState.from_dict(ROWS[index % len(ROWS)]))


def sample_actions() -> list[pb.Action]:
    """One wire action of every kind, with every field set."""
    return [
        pb.Action(classify_issue=pb.ClassifyIssue(category=1, priority=3, issue_type="double_charge")),
        pb.Action(ask_for_more_info=pb.AskForMoreInfo(fields=["order_id", "amount"], question="Your order id?")),
        pb.Action(respond_with_solution=pb.RespondWithSolution(message="I have refunded it.", article_id="KB-PAY-01")),
        pb.Action(suggest_knowledge_base=pb.SuggestKnowledgeBase(article_id="KB-BIL-02")),
        pb.Action(assign_department=pb.AssignDepartment(department=5, note="security")),
        pb.Action(escalate_to_human=pb.EscalateToHuman(reason="policy")),
        pb.Action(request_callback=pb.RequestCallback(reason="call me")),
        pb.Action(mark_resolved=pb.MarkResolved(summary="done")),
        pb.Action(invalid_action=pb.InvalidAction(raw="{oops", error="not JSON")),
    ]


ACTION_BYTES = [a.SerializeToString() for a in sample_actions()]


# ---- in process: the token decoder ----


def decode_refuses(token: bytes) -> None:
    with pytest.raises(InvalidTokenError) as info:
        CODEC.decode(token)
    assert str(info.value)


@fuzz(400)
@given(st.binary(max_size=2048))
def test_token_decoder_refuses_random_bytes(data):
    decode_refuses(data)


@fuzz(400)
@given(st.integers(0, len(ROWS) - 1), edits)
def test_token_decoder_refuses_every_changed_token(index, ops):
    token = valid_token(index)
    assert CODEC.decode(token).to_dict() == ROWS[index]
    changed = mutate(token, ops)
    if changed != token:
        decode_refuses(changed)


@fuzz(100)
@given(st.integers(0, len(ROWS) - 1), st.binary(min_size=16, max_size=64))
def test_token_decoder_refuses_tokens_of_other_keys(index, key):
    if key != FUZZ_KEY:
        decode_refuses(TokenCodec(key).encode(CODEC.decode(valid_token(index))))


# ---- in process: the action decoder ----


def decode_action(data: bytes) -> None:
    """Bytes -> wire Action -> library Action -> validated, as the services do it; only
    the documented errors may come out, and what is accepted survives the way back."""
    try:
        message = pb.Action.FromString(data)
    except DecodeError:
        return
    try:
        action = validate(convert.action_from_pb(message))
    except InvalidActionError as exc:
        assert str(exc)
        return
    assert convert.action_from_pb(convert.action_to_pb(action)) == action


@fuzz(500)
@given(st.binary(max_size=512))
def test_action_decoder_takes_random_bytes(data):
    decode_action(data)


@fuzz(500)
@given(st.integers(0, len(ACTION_BYTES) - 1), edits)
def test_action_decoder_takes_mutated_actions(index, ops):
    decode_action(mutate(ACTION_BYTES[index], ops))


# ---- over gRPC ----


@pytest.fixture(scope="module")
def wire(services):
    """Generic calls that send and receive raw bytes, for both services."""
    with grpc.insecure_channel(services.env.address) as env_ch, grpc.insecure_channel(services.grader.address) as gr:

        def unary(rpc: str):
            channel, service = (gr, "GraderService") if rpc == "Grade" else (env_ch, "EnvService")
            return channel.unary_unary(
                f"/supportenv.v1.{service}/{rpc}", request_serializer=None, response_deserializer=None
            )

        calls = {rpc: unary(rpc) for rpc in ("ListTasks", "Reset", "Step", "State", "ResetBatch", "StepBatch", "Grade")}
        calls["Session"] = env_ch.stream_stream(
            "/supportenv.v1.EnvService/Session", request_serializer=None, response_deserializer=None
        )
        yield calls
        for channel in (env_ch, gr):
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=TIMEOUT)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
    assert services.env.process.poll() is None and services.grader.process.poll() is None


@pytest.fixture(scope="module")
def service_token(env) -> bytes:
    """A token the env service itself issued, a few steps into an episode."""
    reply = env.Reset(env_pb2.ResetRequest(task_id=TASK, seed=3), timeout=TIMEOUT)
    action = pb.Action(classify_issue=pb.ClassifyIssue(category=pb.ISSUE_CATEGORY_BILLING))
    return env.Step(env_pb2.StepRequest(state_token=reply.state_token, action=action), timeout=TIMEOUT).state_token


def status(call, request, allowed: set[grpc.StatusCode]) -> grpc.StatusCode:
    """The status code of one call; it must be OK or documented, and in `allowed`."""
    try:
        if isinstance(request, list):
            list(call(iter(request), timeout=TIMEOUT))
        else:
            call(request, timeout=TIMEOUT)
    except grpc.RpcError as exc:
        code, message = exc.code(), exc.details() or ""
        assert code in DOCUMENTED, f"{code}: {message}"
        assert code in allowed, f"{code}: {message}"
        assert message.strip() and not message.startswith("Unexpected"), message
        return code
    assert OK in allowed, "this request should have been refused"
    return OK


@fuzz(150)
@given(tokens=st.binary(max_size=600))
def test_random_tokens_are_invalid_argument(wire, tokens):
    action = pb.Action(mark_resolved=pb.MarkResolved())
    step_request = env_pb2.StepRequest(state_token=tokens, action=action).SerializeToString()
    assert status(wire["Step"], step_request, {INVALID}) == INVALID
    assert status(wire["State"], env_pb2.StateRequest(state_token=tokens).SerializeToString(), {INVALID}) == INVALID


@fuzz(150)
@given(ops=edits)
def test_mutated_service_tokens_are_invalid_argument(wire, service_token, ops):
    token = mutate(service_token, ops)
    expected = {OK} if token == service_token else {INVALID}
    status(wire["State"], env_pb2.StateRequest(state_token=token).SerializeToString(), expected)


# What a random or mutated request may get: never UNKNOWN or INTERNAL.
ALLOWED = {
    "ListTasks": {OK, INVALID},
    "Reset": {OK, INVALID, NOT_FOUND},
    "Step": {OK, INVALID, PRECONDITION},
    "State": {OK, INVALID},
    "ResetBatch": {OK, INVALID, NOT_FOUND, EXHAUSTED},
    "StepBatch": {OK, INVALID, PRECONDITION, EXHAUSTED},
    "Grade": {OK, INVALID, NOT_FOUND},
    "Session": {OK, INVALID, NOT_FOUND, PRECONDITION},
}


@fuzz(300)
@given(rpc=st.sampled_from(sorted(ALLOWED)), data=st.lists(st.binary(max_size=300), min_size=1, max_size=3))
def test_random_requests_get_documented_codes(wire, rpc, data):
    status(wire[rpc], data if rpc == "Session" else data[0], ALLOWED[rpc])


def valid_requests(token: bytes) -> dict[str, list[bytes]]:
    """A valid serialized request for every RPC (Session: a reset, a step and a state)."""
    reset = env_pb2.ResetRequest(task_id=TASK, split=pb.SPLIT_TEST, seed=12, episode_id="fuzz")
    steps = [env_pb2.StepRequest(state_token=token, action=a) for a in sample_actions()[:3]]
    trajectory = pb.Trajectory(task_id=TASK, split=pb.SPLIT_VALIDATION, seed=5, actions=sample_actions()[:4])
    return {
        "ListTasks": [env_pb2.ListTasksRequest().SerializeToString()],
        "Reset": [reset.SerializeToString()],
        "Step": [s.SerializeToString() for s in steps],
        "State": [env_pb2.StateRequest(state_token=token).SerializeToString()],
        "ResetBatch": [env_pb2.ResetBatchRequest(requests=[reset, reset]).SerializeToString()],
        "StepBatch": [env_pb2.StepBatchRequest(requests=steps).SerializeToString()],
        "Grade": [grader_pb2.GradeRequest(trajectory=trajectory).SerializeToString()],
        "Session": [
            env_pb2.SessionRequest(reset=reset).SerializeToString(),
            env_pb2.SessionRequest(step=sample_actions()[0], want_token=True).SerializeToString(),
            env_pb2.SessionRequest(state=env_pb2.StateRequest()).SerializeToString(),
        ],
    }


def test_the_requests_to_mutate_are_valid(wire, service_token):
    for rpc, requests in valid_requests(service_token).items():
        if rpc == "Session":
            assert status(wire[rpc], requests, {OK}) == OK
        else:
            assert all(status(wire[rpc], request, {OK}) == OK for request in requests)


@fuzz(300)
@given(rpc=st.sampled_from(sorted(ALLOWED)), which=st.integers(0, 2), ops=edits)
def test_mutated_requests_get_documented_codes(wire, service_token, rpc, which, ops):
    requests = valid_requests(service_token)[rpc]
    if rpc == "Session":
        broken = list(requests)
        broken[which] = mutate(broken[which], ops)
        status(wire[rpc], broken, ALLOWED[rpc])
    else:
        status(wire[rpc], mutate(requests[which % len(requests)], ops), ALLOWED[rpc])
