"""Session streams' limits and resumption, on real servers over loopback: a stream idle too
long ends with DEADLINE_EXCEEDED, one over the worker's cap is refused with
RESOURCE_EXHAUSTED, each with a message that says what to do; a stream's episode continues
in another stream (on another replica) from its last token; and SessionClient resumes a
lost stream by itself, with the library's rewards. Every wait is bounded."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal

import grpc
import pytest

from baseline_agent.embedded import ServiceProcess, start_service
from env_service.sessions import IDLE_ENV, MAX_OPEN_ENV, session_limits_from_env
from supportenv import expert
from supportenv.episode import advance
from supportenv.replay import new_episode
from supportenv.v1 import WORKER_METADATA, convert, env_pb2, env_pb2_grpc
from supportenv.v1.client import CHANNEL_OPTIONS, AsyncEnvClient, SessionClient, reset_request
from supportenv.v1.server import CONNECTION_AGE_ENV, CONNECTION_AGE_GRACE_ENV, connection_age_options

TASK, SPLIT = "expert_resolution", "validation"
WAIT_S = 20


def planned(seed: int, task: str = TASK) -> tuple[list, list[float]]:
    """The expert's actions for (task, SPLIT, seed) and the library's reward for each."""
    scenario, state = new_episode(task, SPLIT, seed)
    actions, rewards = [], []
    while not state.done:
        action = expert.expert_action(scenario, state, task)
        rewards.append(advance(scenario, state, action)[0])
        actions.append(convert.action_to_pb(action))
    return actions, rewards


@pytest.fixture
def start():
    started: list[ServiceProcess] = []

    def run(**env: str) -> ServiceProcess:
        settings = {"SUPPORTENV_WORKERS": "1", "SUPPORTENV_LOG_LEVEL": "WARNING", **env}
        started.append(start_service("env_service", settings))
        return started[-1]

    yield run
    for service in started:
        if service.process.poll() is None:
            os.kill(service.process.pid, signal.SIGCONT)  # in case a test failed while it was frozen
        service.stop()


REFUSALS = 20  # streams refused over the cap, one after another


async def exchange(call, request: env_pb2.SessionRequest) -> env_pb2.SessionResponse:
    # The stream may have ended already: then the read below raises its status.
    with contextlib.suppress(asyncio.InvalidStateError, grpc.aio.AioRpcError):
        await call.write(request)
    return await asyncio.wait_for(call.read(), WAIT_S)


def test_the_limits_come_from_the_environment_and_bad_values_are_refused():
    limits = session_limits_from_env({IDLE_ENV: "2.5", MAX_OPEN_ENV: "7"})
    assert (limits.idle_s, limits.max_open) == (2.5, 7)
    defaults = session_limits_from_env({})
    assert defaults.idle_s >= 60 and defaults.max_open >= 1000
    bad = (
        (IDLE_ENV, "0"),
        (IDLE_ENV, "soon"),
        (IDLE_ENV, "nan"),
        (IDLE_ENV, "inf"),
        (MAX_OPEN_ENV, "-1"),
        (MAX_OPEN_ENV, "1.5"),
    )
    for name, value in bad:
        with pytest.raises(SystemExit, match=name):
            session_limits_from_env({name: value})


@pytest.mark.timeout(60)
def test_an_idle_stream_ends_with_deadline_exceeded_and_the_client_resumes_it(start):
    env = start(**{IDLE_ENV: "0.5"})
    actions, rewards = planned(3)

    async def run() -> None:
        async with grpc.aio.insecure_channel(env.address) as channel:
            call = env_pb2_grpc.EnvServiceStub(channel).Session()
            await exchange(call, env_pb2.SessionRequest(reset=reset_request(TASK, SPLIT, 3)))
            await asyncio.sleep(1.5)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await exchange(call, env_pb2.SessionRequest(step=actions[0]))
            assert refused.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            assert IDLE_ENV in refused.value.details() and "resume" in refused.value.details()

            # SessionClient: idle between every step, so every stream ends; the episode goes on.
            session = SessionClient(channel=channel, timeout=WAIT_S)
            await session.reset(TASK, SPLIT, 3)
            got = []
            for action in actions:
                await asyncio.sleep(0.7)
                got.append((await session.step(action))[1])
            await session.close()
            assert got == rewards and session.resumed == len(actions)

    asyncio.run(run())


@pytest.mark.timeout(60)
def test_a_stream_over_the_workers_cap_is_refused_and_the_others_go_on(start):
    env = start(**{MAX_OPEN_ENV: "2"})
    actions, rewards = planned(5)

    async def run() -> None:
        async with grpc.aio.insecure_channel(env.address) as channel:
            stub = env_pb2_grpc.EnvServiceStub(channel)
            first, second = stub.Session(), stub.Session()
            for call in (first, second):
                await exchange(call, env_pb2.SessionRequest(reset=reset_request(TASK, SPLIT, 5)))
            # (again and again: a client that writes before it reads gets the refusal, never a failed write
            # that grpc reports as INTERNAL, as a refusal sent before the first request was read once did)
            for _ in range(REFUSALS):
                third = stub.Session()
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await exchange(third, env_pb2.SessionRequest(reset=reset_request(TASK, SPLIT, 5)))
                assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, refused.value.details()
                assert MAX_OPEN_ENV in refused.value.details() and "another replica" in refused.value.details()
            # The two open streams are untouched by the refusal; closing one frees its place.
            got = [(await exchange(first, env_pb2.SessionRequest(step=a))).step.reward for a in actions]
            assert got == rewards
            await first.done_writing()
            assert await asyncio.wait_for(first.read(), WAIT_S) is grpc.aio.EOF
            fourth = stub.Session()
            reply = await exchange(fourth, env_pb2.SessionRequest(reset=reset_request(TASK, SPLIT, 5)))
            assert reply.HasField("reset")
            for call in (second, fourth):
                await call.done_writing()

    asyncio.run(run())


@pytest.mark.timeout(60)
def test_an_episode_moves_to_another_stream_on_another_replica_with_its_token(start):
    key = {"SUPPORTENV_TOKEN_KEY": secrets.token_hex(32)}
    one, two = start(**key), start(**key)
    actions, rewards = planned(7)
    half = len(actions) // 2

    async def run() -> None:
        async with (
            grpc.aio.insecure_channel(one.address) as first_channel,
            grpc.aio.insecure_channel(two.address) as second_channel,
        ):
            first = env_pb2_grpc.EnvServiceStub(first_channel).Session()
            reply = await exchange(first, env_pb2.SessionRequest(reset=reset_request(TASK, SPLIT, 7), want_token=True))
            token, got = reply.reset.state_token, []
            for action in actions[:half]:
                reply = await exchange(first, env_pb2.SessionRequest(step=action, want_token=True))
                token = reply.step.state_token
                got.append(reply.step.reward)
            first.cancel()  # the stream is lost; the token is not

            second = env_pb2_grpc.EnvServiceStub(second_channel).Session()
            resumed = await exchange(second, env_pb2.SessionRequest(resume=token))
            assert resumed.HasField("state") and resumed.state.state.step == half
            for action in actions[half:]:
                got.append((await exchange(second, env_pb2.SessionRequest(step=action))).step.reward)
            await second.done_writing()
            assert got == rewards

    asyncio.run(run())


async def reach_both_replicas(channel: grpc.aio.Channel) -> None:
    """Calls until round_robin has a connection to each replica (else new streams all go to the first one up)."""
    stub, seen = env_pb2_grpc.EnvServiceStub(channel), set()
    for _ in range(50):
        call = stub.ListTasks(env_pb2.ListTasksRequest(), timeout=WAIT_S)
        await call
        seen.add(dict(await call.initial_metadata())[WORKER_METADATA])
        if len(seen) == 2:
            return
    raise AssertionError("round_robin never reached the second replica")


@pytest.mark.timeout(90)
def test_session_clients_lose_no_episode_when_a_replica_is_killed(start):
    key = {"SUPPORTENV_TOKEN_KEY": secrets.token_hex(32)}
    victim, survivor = start(**key), start(**key)
    target = f"ipv4:{victim.address},{survivor.address}"
    seeds = range(16)
    plans = {seed: planned(seed) for seed in seeds}

    async def play(channel: grpc.aio.Channel, seed: int, halfway: asyncio.Barrier) -> tuple[list[float], int]:
        session = SessionClient(channel=channel, timeout=5)
        actions, _ = plans[seed]
        got = []
        await session.reset(TASK, SPLIT, seed)
        for turn, action in enumerate(actions):
            if turn == 2:
                await halfway.wait()  # every episode is in flight when the replica dies
            got.append((await session.step(action))[1])
        await session.close()
        return got, session.resumed

    async def run() -> None:
        halfway = asyncio.Barrier(len(seeds) + 1)
        # Several channels, so the sessions' streams spread over both replicas.
        channels = [grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS) for _ in range(4)]
        for channel in channels:
            await reach_both_replicas(channel)
        games = [asyncio.ensure_future(play(channels[i % 4], seed, halfway)) for i, seed in enumerate(seeds)]
        await asyncio.wait_for(halfway.wait(), WAIT_S)
        victim.process.kill()
        results = await asyncio.wait_for(asyncio.gather(*games), 60)
        for channel in channels:
            await channel.close()
        for seed, (got, _) in zip(seeds, results, strict=True):
            assert got == plans[seed][1], f"seed {seed}: rewards differ from the library's"
        assert sum(resumed for _, resumed in results) > 0, "no stream was on the killed replica"

    asyncio.run(run())


@pytest.mark.timeout(60)
def test_connections_past_their_age_are_closed_and_the_clients_carry_on(start):
    # What lets replicas added behind one name get clients already connected: the server closes
    # each connection after its age; unary clients reconnect, Session streams resume.
    env = start(**{CONNECTION_AGE_ENV: "1", CONNECTION_AGE_GRACE_ENV: "0.5"})
    actions, rewards = planned(9)

    async def run() -> None:
        async with grpc.aio.insecure_channel(env.address, options=CHANNEL_OPTIONS) as channel:
            session = SessionClient(channel=channel, timeout=WAIT_S)
            unary = AsyncEnvClient(channel=channel, timeout=WAIT_S)
            await session.reset(TASK, SPLIT, 9)
            await unary.reset(TASK, SPLIT, 9)
            got, got_unary = [], []
            for action in actions:
                await asyncio.sleep(0.6)  # every other step lands on a connection past its age
                got.append((await session.step(action))[1])
                got_unary.append((await unary.step(action))[1])
            await session.close()
            assert got == got_unary == rewards
            assert session.resumed >= 1, "the stream outlived its connection and went on in a new one"

    asyncio.run(run())


def test_a_bad_connection_age_stops_the_service_at_start():
    for value in ("soon", "0", "nan", "inf", "1e-9"):
        with pytest.raises(SystemExit, match=CONNECTION_AGE_ENV):
            connection_age_options({CONNECTION_AGE_ENV: value})
    assert connection_age_options({}) == []
    assert dict(connection_age_options({CONNECTION_AGE_ENV: "300"})) == {
        "grpc.max_connection_age_ms": 300_000,
        "grpc.max_connection_age_grace_ms": 30_000,
    }


@pytest.mark.timeout(60)
def test_a_refused_reset_leaves_no_episode_to_resume(start):
    env = start()
    actions, _ = planned(4)

    async def run() -> None:
        async with SessionClient(env.address, timeout=WAIT_S) as session:
            await session.reset(TASK, SPLIT, 4)
            await session.step(actions[0])
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await session.reset("no_such_task", SPLIT, 4)
            assert refused.value.code() == grpc.StatusCode.NOT_FOUND
            # The refusal ended the stream; the old episode must not come back in a new one.
            with pytest.raises(grpc.aio.AioRpcError) as no_episode:
                await session.step(actions[1])
            assert no_episode.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert session.resumed == 0

    asyncio.run(run())
