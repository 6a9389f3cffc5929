"""One contract, every transport: unary, batched and streamed stepping (and the
in-process library) give the same episode, and each fails the documented way."""

from __future__ import annotations

import asyncio
import secrets
import socket
import threading
import time

import expert_episodes
import grpc
import pytest

from baseline_agent.embedded import start_service
from supportenv import casework, expert
from supportenv.actions import Action, use_tool
from supportenv.episode import observe, step
from supportenv.errors import InvalidActionError
from supportenv.replay import new_episode
from supportenv.v1 import codec, convert, env_pb2, env_pb2_grpc
from supportenv.v1 import types_pb2 as pb
from supportenv.v1.client import AsyncEnvClient, EnvClient, SessionClient, VectorEnvClient
from supportenv.v1.limits import MAX_BATCH

TASK = "end_to_end_resolution"
SEEDS = (0, 1, 2, 3)


def script(seed: int, task: str = TASK, split: str = "train") -> list[Action]:
    """The expert's actions plus one wrong one in the middle, so penalties are compared too;
    on the expert task, the tool calls of tests/expert_episodes.py (refused, not found, ok)."""
    if task == expert_episodes.TASK:
        return expert_episodes.script(seed, split)
    scenario, state = new_episode(task, split, seed)
    actions = [Action("escalate_to_human", text="just in case")]
    step(scenario, state, actions[0])
    while not state.done:
        actions.append(expert.expert_action(scenario, state, task))
        step(scenario, state, actions[-1])
    return actions


def library_run(seed: int, task: str = TASK, split: str = "train") -> list[tuple]:
    scenario, state = new_episode(task, split, seed)
    out = [(observe(scenario, state), 0.0, False, False)]
    for action in script(seed, task, split):
        result = step(scenario, state, action)
        out.append((result.observation, result.reward, result.terminated, result.truncated))
    return out


def unary_run(address: str, seed: int, task: str = TASK, split: str = "train") -> list[tuple]:
    with EnvClient(address) as client:
        obs, _ = client.reset(task, split, seed)
        out = [(obs, 0.0, False, False)]
        for action in script(seed, task, split):
            obs, reward, term, trunc, _ = client.step(action)
            out.append((obs, reward, term, trunc))
    return out


def async_run(address: str, seed: int, task: str = TASK, split: str = "train") -> list[tuple]:
    async def play():
        async with AsyncEnvClient(address) as client:
            obs, _ = await client.reset(task, split, seed)
            out = [(obs, 0.0, False, False)]
            for action in script(seed, task, split):
                obs, reward, term, trunc, _ = await client.step(action)
                out.append((obs, reward, term, trunc))
            return out

    return asyncio.run(play())


def stream_run(address: str, seed: int, task: str = TASK, split: str = "train") -> list[tuple]:
    async def play():
        async with SessionClient(address) as session:
            obs, _ = await session.reset(task, split, seed)
            out = [(obs, 0.0, False, False)]
            for action in script(seed, task, split):
                obs, reward, term, trunc, _ = await session.step(action)
                out.append((obs, reward, term, trunc))
            return out

    return asyncio.run(play())


def batch_run(address: str, seed: int, task: str = TASK, split: str = "train") -> list[tuple]:
    vector = VectorEnvClient(address, num_envs=1, task_id=task, split=split, seeds=iter([seed, 10_000]))
    try:
        out = [(vector.reset()[0], 0.0, False, False)]
        for action in script(seed, task, split):
            observations, rewards, term, trunc, infos = vector.step([action])
            obs = infos[0].get("final_observation", observations[0])
            out.append((obs, rewards[0], term[0], trunc[0]))
    finally:
        vector.close()
    return out


@pytest.fixture(scope="module")
def address():
    service = start_service("env_service", {"SUPPORTENV_TOKEN_KEY": secrets.token_hex(32), "SUPPORTENV_WORKERS": "2"})
    try:
        yield service.address
    finally:
        assert service.stop() == 0


@pytest.mark.parametrize("transport", [unary_run, async_run, stream_run, batch_run])
def test_every_transport_plays_the_same_episode(address, transport):
    for seed in SEEDS:
        assert transport(address, seed) == library_run(seed), (transport.__name__, seed)


@pytest.mark.parametrize("transport", [unary_run, async_run, stream_run, batch_run])
def test_every_transport_plays_the_same_expert_episode(address, transport):
    """The expert task's tool calls over every transport: observations (tool_result,
    allowed_actions), rewards and ends are the library's, step for step."""
    for seed in expert_episodes.SEEDS:
        expected = library_run(seed, expert_episodes.TASK, expert_episodes.SPLIT)
        results = [obs.tool_result for obs, *_ in expected if obs.tool_result is not None]
        assert {r.status for r in results} == {"ok", "not_found", "refused"}
        assert all(obs.allowed_actions[-1] == "use_tool" for obs, *_ in expected)
        got = transport(address, seed, expert_episodes.TASK, expert_episodes.SPLIT)
        assert got == expected, (transport.__name__, seed)


@pytest.mark.parametrize("connections", [1, 3])
def test_vector_client_shards_give_the_library_episodes(address, connections):
    """Five episodes side by side, over one connection or split unevenly over three."""
    seeds = [0, 1, 2, 3, 5]
    scripts = [script(seed) for seed in seeds]
    vector = VectorEnvClient(
        address, num_envs=5, task_id=TASK, seeds=iter([*seeds, *range(100, 200)]), connections=connections
    )
    try:
        got = [[(obs, 0.0, False, False)] for obs in vector.reset()]
        for t in range(max(map(len, scripts))):
            # An env whose script is over repeats a harmless action on its next episode.
            actions = [s[t] if t < len(s) else Action("classify_issue", category="billing") for s in scripts]
            observations, rewards, term, trunc, infos = vector.step(actions)
            for i in range(5):
                if t < len(scripts[i]):
                    obs = infos[i].get("final_observation", observations[i])
                    got[i].append((obs, rewards[i], term[i], trunc[i]))
    finally:
        vector.close()
    assert got == [library_run(seed) for seed in seeds]


def test_vector_client_auto_resets(address):
    vector = VectorEnvClient(address, num_envs=3, task_id="issue_classification", seeds=iter(range(100)))
    try:
        vector.reset()
        resolve = Action("mark_resolved")
        _, _, terminated, _, infos = vector.step([resolve] * 3)
        assert terminated == [True] * 3
        assert all("final_observation" in info for info in infos)
        observations, _, terminated, _, _ = vector.step([resolve] * 3)
        assert terminated == [True] * 3 and [o.step for o in observations] == [0, 0, 0]
        assert vector.seeds == [6, 7, 8]
    finally:
        vector.close()


def test_vector_client_ends_each_env_when_its_seeds_run_out(address):
    with pytest.raises(ValueError, match="no seed for env 2 of 3"):
        VectorEnvClient(address, num_envs=3, task_id="issue_classification", seeds=iter(range(2))).reset()
    vector = VectorEnvClient(address, num_envs=2, task_id="issue_classification", seeds=iter(range(3)))
    resolve = Action("mark_resolved")
    try:
        vector.reset()  # seeds 0 and 1; seed 2 drawn ahead for env 0, none left for env 1
        observations, rewards, terminated, _, infos = vector.step([resolve] * 2)
        assert terminated == [True, True] and vector.seeds == [2, 1]
        assert "final_observation" in infos[0] and infos[1]["seeds_exhausted"] and not vector.done
        ended = observations[1]
        observations, rewards, terminated, _, infos = vector.step([resolve] * 2)  # env 1 is not sent
        assert terminated == [True, False] and rewards[1] == 0.0 and observations[1] == ended
        assert infos[1] == {"seed": 1, "seeds_exhausted": True} and vector.done
    finally:
        vector.close()


def test_batch_errors_name_the_item_and_size_is_limited(address):
    with grpc.insecure_channel(address) as channel:
        stub = env_pb2_grpc.EnvServiceStub(channel)
        good = env_pb2.ResetRequest(task_id=TASK, split=pb.SPLIT_TRAIN, seed=1)
        bad = env_pb2.ResetRequest(task_id="nope")
        with pytest.raises(grpc.RpcError) as info:
            stub.ResetBatch(env_pb2.ResetBatchRequest(requests=[good, bad]))
        assert info.value.code() == grpc.StatusCode.NOT_FOUND and "item 1" in info.value.details()
        with pytest.raises(grpc.RpcError) as info:
            stub.ResetBatch(env_pb2.ResetBatchRequest(requests=[good] * (MAX_BATCH + 1)))
        assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        token = stub.Reset(good).state_token
        with pytest.raises(grpc.RpcError) as info:
            stub.StepBatch(env_pb2.StepBatchRequest(requests=[env_pb2.StepRequest(state_token=token[:-3])]))
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "item 0" in info.value.details()


def test_session_errors_and_tokens(address):
    async def play():
        async with grpc.aio.insecure_channel(address) as channel:
            stub = env_pb2_grpc.EnvServiceStub(channel)
            call = stub.Session()
            await call.write(env_pb2.SessionRequest(step=convert.action_to_pb(Action("mark_resolved"))))
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await call.read()
            assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            call = stub.Session()
            reset = env_pb2.ResetRequest(task_id=TASK, split=pb.SPLIT_TRAIN, seed=2)
            await call.write(env_pb2.SessionRequest(reset=reset))
            await call.read()
            classify = convert.action_to_pb(Action("classify_issue", category="billing"))
            await call.write(env_pb2.SessionRequest(step=classify, want_token=True))
            reply = await call.read()
            await call.write(env_pb2.SessionRequest(state=env_pb2.StateRequest()))
            state = (await call.read()).state.state
            await call.done_writing()
            assert state.step == 1 and list(state.actions) == [classify]
            return reply.step.state_token

    token = asyncio.run(play())
    # The stream's episode continues over unary Step, on any replica with the key.
    with grpc.insecure_channel(address) as channel:
        stub = env_pb2_grpc.EnvServiceStub(channel)
        reply = stub.Step(env_pb2.StepRequest(state_token=token, action=convert.action_to_pb(Action("mark_resolved"))))
        assert reply.terminated and reply.observation.step == 2


def test_client_retries_until_the_service_is_up():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = []

    def start_late():
        time.sleep(0.3)
        started.append(start_service("env_service", {"SUPPORTENV_WORKERS": "1"}, port=port))

    thread = threading.Thread(target=start_late)
    thread.start()
    try:
        with EnvClient(f"127.0.0.1:{port}", timeout=5.0, retries=8) as client:
            assert len(client.list_tasks()) == 4
    finally:
        thread.join()
        for service in started:
            service.stop()


# ---- autoreset: a step that ends the episode can start the next one in the same call ----


def reset_response(address: str, seed: int) -> env_pb2.ResetResponse:
    with grpc.insecure_channel(address) as channel:
        reply = env_pb2_grpc.EnvServiceStub(channel).Reset(
            env_pb2.ResetRequest(task_id=TASK, split=pb.SPLIT_TRAIN, seed=seed)
        )
    reply.ClearField("state_token")  # compared without tokens below
    return reply


def test_unary_autoreset_plays_episode_after_episode_in_one_call_each(address):
    """Seeds 0..3 back to back over Step with next_episode: one Reset in all."""
    with grpc.insecure_channel(address) as channel:
        stub = env_pb2_grpc.EnvServiceStub(channel)
        token = stub.Reset(env_pb2.ResetRequest(task_id=TASK, split=pb.SPLIT_TRAIN, seed=SEEDS[0])).state_token
        for k, seed in enumerate(SEEDS):
            expected = library_run(seed)[1:]
            following = env_pb2.ResetRequest(task_id=TASK, split=pb.SPLIT_TRAIN, seed=SEEDS[(k + 1) % len(SEEDS)])
            for n, action in enumerate(script(seed)):
                request = env_pb2.StepRequest(
                    state_token=token, action=convert.action_to_pb(action), next_episode=following
                )
                reply = stub.Step(request)
                obs, reward, term, trunc = expected[n]
                assert (
                    codec.observation_from_pb(reply.observation),
                    reply.reward,
                    reply.terminated,
                    reply.truncated,
                ) == (obs, reward, term, trunc)
                assert reply.HasField("next_episode") == (term or trunc)
                token = reply.state_token
            started = reply.next_episode
            assert started.state_token, "the next episode comes with its token"
            token = started.state_token
            started.ClearField("state_token")
            assert started == reset_response(address, following.seed)


def test_session_autoreset_goes_on_with_the_next_episode(address):
    async def play():
        async with grpc.aio.insecure_channel(address) as channel:
            call = env_pb2_grpc.EnvServiceStub(channel).Session()
            await call.write(
                env_pb2.SessionRequest(reset=env_pb2.ResetRequest(task_id=TASK, split=pb.SPLIT_TRAIN, seed=1))
            )
            await call.read()
            following = env_pb2.ResetRequest(task_id=TASK, split=pb.SPLIT_TRAIN, seed=2)
            for action in script(1):
                await call.write(env_pb2.SessionRequest(step=convert.action_to_pb(action), next_episode=following))
                last = (await call.read()).step
            assert last.terminated and last.HasField("next_episode") and not last.next_episode.state_token
            # The stream is now on seed 2: its steps are seed 2's.
            out = []
            for action in script(2)[:2]:
                await call.write(env_pb2.SessionRequest(step=convert.action_to_pb(action)))
                reply = (await call.read()).step
                out.append(
                    (codec.observation_from_pb(reply.observation), reply.reward, reply.terminated, reply.truncated)
                )
            await call.done_writing()
            return last.next_episode, out

    started, out = asyncio.run(play())
    assert started == reset_response(address, 2)
    assert out == library_run(2)[1:3]


def test_a_bad_next_episode_is_refused_before_the_step(address):
    with grpc.insecure_channel(address) as channel:
        stub = env_pb2_grpc.EnvServiceStub(channel)
        token = stub.Reset(env_pb2.ResetRequest(task_id=TASK, split=pb.SPLIT_TRAIN, seed=3)).state_token
        action = convert.action_to_pb(script(3)[0])
        bad = {
            grpc.StatusCode.NOT_FOUND: env_pb2.ResetRequest(task_id="nope"),
            grpc.StatusCode.INVALID_ARGUMENT: env_pb2.ResetRequest(task_id=TASK, split=99),
        }
        for code, following in bad.items():
            with pytest.raises(grpc.RpcError) as info:
                stub.Step(env_pb2.StepRequest(state_token=token, action=action, next_episode=following))
            assert info.value.code() == code and info.value.details().startswith("next_episode: ")
        # Not applied: the token steps as if nothing had happened.
        reply = stub.Step(env_pb2.StepRequest(state_token=token, action=action))
        assert codec.observation_from_pb(reply.observation) == library_run(3)[1][0]


def test_spread_clients_reach_every_worker(address):
    """The service in this module has 2 workers: two spread clients reach both."""
    from supportenv.v1.client import spread_clients

    clients = spread_clients(address, 2)
    try:
        workers = {c.worker() for c in clients}
        assert len(workers) == 2 and all(":" in w for w in workers)
        again = {c.worker() for c in clients}
        assert again == workers, "a client's connection stays on its worker"
    finally:
        for client in clients:
            client.close()


def test_the_clients_send_tool_calls_and_decode_their_results(address):
    """EnvClient, AsyncEnvClient and SessionClient's use_tool (and an action dict) send a tool
    call; the result comes back as the library's ToolResult, its data a dict; a malformed call
    is refused by the client before it is sent, use_tool on a task without tools by the service."""
    seed = expert_episodes.REFUND_SEED
    scenario, state = new_episode(expert_episodes.TASK, expert_episodes.SPLIT, seed)
    order = casework.identity_proofs(scenario.records)["order_id"]
    expected = step(scenario, state, use_tool("look_up_order", order_id=order)).observation.tool_result
    assert expected.status == "ok" and isinstance(expected.data, dict)

    with EnvClient(address) as client:
        client.reset(expert_episodes.TASK, expert_episodes.SPLIT, seed)
        obs, *_ = client.use_tool("look_up_order", order_id=order)
        assert obs.tool_result == expected and obs.tool_result.data["order"]["order_id"] == order
        obs, *_ = client.step({"action_type": "use_tool", "tool": "look_up_order", "arguments": {"order_id": order}})
        assert obs.tool_result == expected
        obs, *_ = client.step(Action("classify_issue", category="billing"))
        assert obs.tool_result is None and obs.allowed_actions[-1] == "use_tool"
        with pytest.raises(InvalidActionError, match="unknown tool"):
            client.use_tool("format_disk")
        client.reset(TASK, "train", 0)
        with pytest.raises(grpc.RpcError) as info:
            client.use_tool("look_up_order", order_id=order)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "does not take use_tool" in info.value.details()

    async def play():
        async with AsyncEnvClient(address) as client:
            await client.reset(expert_episodes.TASK, expert_episodes.SPLIT, seed)
            unary = (await client.use_tool("look_up_order", order_id=order))[0].tool_result
        async with SessionClient(address) as session:
            await session.reset(expert_episodes.TASK, expert_episodes.SPLIT, seed)
            streamed = (await session.use_tool("look_up_order", order_id=order))[0].tool_result
        return unary, streamed

    assert asyncio.run(play()) == (expected, expected)
