"""Faults survived: a replica killed mid-run, the grader restarted mid-stream, and a
graceful SIGTERM. Real processes on loopback ports; every wait is bounded, and only the
processes started here are signalled (through their Popen objects)."""

from __future__ import annotations

import asyncio
import io
import os
import secrets
import signal
import socket
import threading
import time

import grpc
import pytest

from baseline_agent.embedded import ServiceProcess, start_service
from baseline_agent.policies import make_policy
from baseline_agent.runner import Runner
from supportenv import expert
from supportenv.episode import Observation, step
from supportenv.graders import grade_state
from supportenv.replay import new_episode
from supportenv.v1 import client as client_module
from supportenv.v1 import convert, env_pb2, env_pb2_grpc, grader_pb2, grader_pb2_grpc
from supportenv.v1 import types_pb2 as pb
from supportenv.v1.client import CHANNEL_OPTIONS, RETRIES, SessionClient, with_retries
from supportenv.v1.limits import SHUTDOWN_GRACE_S

TASK = "end_to_end_resolution"
EPISODES = 40
WAIT_S = 30  # upper bound for any one wait below


@pytest.fixture
def services():
    """start(module, **env) starts a service; every one still running at the end is stopped."""
    started: list[ServiceProcess] = []

    def start(module: str, port: int = 0, **env: str) -> ServiceProcess:
        started.append(start_service(module, {"SUPPORTENV_WORKERS": "1", **env}, port=port))
        return started[-1]

    yield start
    for service in started:
        if service.process.poll() is None:
            os.kill(service.process.pid, signal.SIGCONT)  # in case a test failed while it was frozen
        service.stop()


def round_robin_target(*replicas: ServiceProcess) -> str:
    """One target naming every replica: the client balances calls over them itself."""
    return "ipv4:" + ",".join(replica.address for replica in replicas)


def count_unavailable(monkeypatch) -> list[str]:
    """Wrap the SDK's retry helper (the runner's clients use it) so that every UNAVAILABLE it retries is recorded."""
    seen: list[str] = []

    def counting(call, retries=RETRIES):
        def attempt():
            try:
                return call()
            except grpc.RpcError as exc:
                if exc.code() == grpc.StatusCode.UNAVAILABLE:  # type: ignore[attr-defined]
                    seen.append(exc.details())  # type: ignore[attr-defined]
                raise

        return with_retries(attempt, retries)

    monkeypatch.setattr(client_module, "with_retries", counting)
    return seen


class KillDuringEpisode:
    """The rule policy, which at step `turn` of episode `episode` freezes `victim` (SIGSTOP)
    and kills it (SIGKILL) `after` seconds later. While it is frozen, round_robin sends it
    the next call, which hangs; the kill then fails that call in flight, so the client's
    retry provably moves an episode's call to the surviving replica."""

    stochastic = False

    def __init__(self, victim: ServiceProcess, episode: int, turn: int, after: float = 0.5) -> None:
        self.inner = make_policy("rule")
        self.name = self.inner.name
        self.victim, self.episode, self.turn, self.after = victim, episode, turn, after
        self.episodes, self.turns = 0, 0
        self.timer: threading.Timer | None = None

    def begin(self, task_id: str, split: str, seed: int, trial: int = 0) -> None:
        self.episodes += 1
        self.turns = 0
        self.inner.begin(task_id, split, seed, trial)

    def act(self, obs: Observation):
        self.turns += 1
        if (self.episodes, self.turns) == (self.episode, self.turn):
            os.kill(self.victim.process.pid, signal.SIGSTOP)
            self.timer = threading.Timer(self.after, self.victim.process.kill)
            self.timer.start()
        return self.inner.act(obs)


def play(target: str, grader: str, policy) -> tuple[str, list]:
    out = io.StringIO()
    runner = Runner(target, grader, policy, split="test", out=out)
    try:
        _, records = runner.run([TASK], EPISODES)
    finally:
        runner.close()
    return out.getvalue(), records


@pytest.mark.timeout(180)
def test_killing_a_replica_mid_run_loses_no_episode(services, monkeypatch):
    key = {"SUPPORTENV_TOKEN_KEY": secrets.token_hex(32)}
    victim, survivor = services("env_service", **key), services("env_service", **key)
    grader = services("grader_service")
    target = round_robin_target(victim, survivor)

    calm_transcript, calm = play(target, grader.address, make_policy("rule"))
    assert len(calm) == EPISODES and not [r.error for r in calm if r.error]
    assert calm_transcript.count("[END]") == EPISODES

    retried = count_unavailable(monkeypatch)
    policy = KillDuringEpisode(victim, episode=EPISODES // 2, turn=3)
    transcript, records = play(target, grader.address, policy)
    assert policy.timer is not None, "the fault was injected"
    policy.timer.join(WAIT_S)
    assert victim.process.wait(WAIT_S) == -signal.SIGKILL
    assert retried, "a call was in flight on the killed replica and was retried on the other"

    assert [r.error for r in records if r.error] == []
    assert records == calm, "every episode, reward and grade as in the undisturbed run"
    assert transcript == calm_transcript
    assert survivor.process.poll() is None


# --- the grader restarted while a stream of trajectories is graded ------------------------


def trajectories(count: int) -> list[tuple[grader_pb2.GradeRequest, grader_pb2.GradeResponse]]:
    """Expert trajectories of the hard task, each with the grade the library gives it."""
    out = []
    for seed in range(count):
        scenario, state = new_episode(TASK, "test", seed)
        actions = []
        while not state.done:
            action = expert.expert_action(scenario, state, TASK)
            step(scenario, state, action)
            actions.append(convert.action_to_pb(action))
        trajectory = pb.Trajectory(task_id=TASK, split=pb.SPLIT_TEST, seed=seed, actions=actions)
        out.append((grader_pb2.GradeRequest(trajectory=trajectory), convert.grade_to_pb(grade_state(scenario, state))))
    return out


GRADE_RETRIES = 8  # backoff 0.1 s .. 6.4 s, 12.7 s in all: covers a grader restart (a new process)


@pytest.mark.timeout(180)
def test_restarting_the_grader_mid_stream_loses_no_grade(services):
    work = trajectories(30)
    old = services("grader_service")
    port = int(old.address.rsplit(":", 1)[1])
    channel = grpc.insecure_channel(old.address, options=CHANNEL_OPTIONS)
    stub = grader_pb2_grpc.GraderServiceStub(channel)
    retried: list[str] = []
    cancelled: list[str] = []

    def grade(request: grader_pb2.GradeRequest) -> grader_pb2.GradeResponse:
        def attempt() -> grader_pb2.GradeResponse:
            try:
                return stub.Grade(request, timeout=10)
            except grpc.RpcError as exc:
                if exc.code() == grpc.StatusCode.UNAVAILABLE:  # type: ignore[attr-defined]
                    retried.append(exc.details())  # type: ignore[attr-defined]
                if exc.code() == grpc.StatusCode.CANCELLED:  # type: ignore[attr-defined]
                    # The server's shutdown cancels calls it accepted but had not started
                    # (grpc/grpc#41785); the SDK's with_retries retries these too.
                    cancelled.append(exc.details())  # type: ignore[attr-defined]
                raise

        return with_retries(attempt, GRADE_RETRIES)

    try:
        calm = [grade(request) for request, _ in work]
        assert calm == [expected for _, expected in work], "the undisturbed grades are the library's"

        # Four clients grade the trajectories round and round. After 30 grades the grader
        # is restarted (SIGTERM, then a new process on the same port); the stream goes on
        # until the new process has given 60 more grades.
        results: list[tuple[int, grader_pb2.GradeResponse, float]] = []
        failures: list[BaseException] = []
        lock = threading.Lock()
        restarted = threading.Event()
        stopped_at: list[float] = []
        counter = iter(range(10**9))
        deadline = time.monotonic() + 60

        def client() -> None:
            try:
                while time.monotonic() < deadline:
                    with lock:
                        if restarted.is_set() and sum(t > stopped_at[0] for _, _, t in results) >= 60:
                            return
                        index = next(counter) % len(work)
                    reply = grade(work[index][0])
                    with lock:
                        results.append((index, reply, time.monotonic()))
            except BaseException as exc:
                failures.append(exc)

        def restart() -> None:
            while len(results) < 30 and time.monotonic() < deadline:
                time.sleep(0.005)
            assert old.stop() == 0, "the old grader stops cleanly"
            stopped_at.append(time.monotonic())
            services("grader_service", port=port)
            restarted.set()

        threads = [threading.Thread(target=client) for _ in range(4)]
        restarter = threading.Thread(target=restart)
        for thread in (*threads, restarter):
            thread.start()
        for thread in (*threads, restarter):
            thread.join(WAIT_S * 3)
        assert not any(thread.is_alive() for thread in (*threads, restarter))
    finally:
        channel.close()

    assert failures == [], failures
    assert restarted.is_set()
    assert retried, "calls met the restart and were retried"
    print(f"grader restart: {len(retried)} UNAVAILABLE and {len(cancelled)} CANCELLED calls retried, no grade lost")
    after = [index for index, _, t in results if t > stopped_at[0]]
    assert len(after) >= 60, "the new grader served the rest of the stream"
    for index, reply, _ in results:
        assert reply == calm[index], f"trajectory {index}: the grade differs from the undisturbed one"


# --- SIGTERM: in-flight calls finish, new ones are refused --------------------------------


def wait_for_line(service: ServiceProcess, text: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not any(text in line for line in service.output):
        assert time.monotonic() < deadline, f"no {text!r} from {service.module}:\n" + "\n".join(service.output[-20:])
        time.sleep(0.01)


def wait_until_refused(address: str, timeout: float = WAIT_S) -> None:
    """Until a TCP connection to `address` is refused: the server has closed its listener."""
    host, port = address.rsplit(":", 1)
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((host, int(port)), timeout=1).close()
        except ConnectionRefusedError:
            return
        assert time.monotonic() < deadline, f"{address} still accepts connections"
        time.sleep(0.01)


async def wait_until_not_ready(channel: grpc.aio.Channel, timeout: float = WAIT_S) -> None:
    """Until the channel has seen the server's GOAWAY (or lost the connection)."""
    deadline = time.monotonic() + timeout
    while channel.get_state() == grpc.ChannelConnectivity.READY:
        assert time.monotonic() < deadline, "the server never told the connected client to go away"
        await asyncio.sleep(0.01)


async def play_session(
    session: SessionClient, seed: int, opened: asyncio.Event, go_on: asyncio.Event
) -> tuple[int, bool]:
    """Reset, wait for the shutdown to begin, then play the rest: all on one open stream."""
    await session.reset(TASK, "test", seed)
    opened.set()
    await go_on.wait()
    scenario, state = new_episode(TASK, "test", seed)
    steps, done = 0, False
    while not done:
        action = expert.expert_action(scenario, state, TASK)
        step(scenario, state, action)
        _, _, terminated, truncated, _ = await session.step(action)
        steps, done = steps + 1, terminated or truncated
    return steps, done


@pytest.mark.timeout(120)
def test_sigterm_finishes_in_flight_calls_and_refuses_new_ones(services):
    env = services("env_service", SUPPORTENV_TOKEN_KEY=secrets.token_hex(32))
    reset = env_pb2.ResetRequest(task_id=TASK, split=pb.SPLIT_TEST, seed=0)

    async def scenario() -> tuple[list[tuple[int, bool]], float]:
        sessions = [SessionClient(env.address, timeout=10) for _ in range(8)]
        opened, began = [asyncio.Event() for _ in sessions], asyncio.Event()
        plays = [asyncio.ensure_future(play_session(s, seed, opened[seed], began)) for seed, s in enumerate(sessions)]
        async with grpc.aio.insecure_channel(env.address) as idle:  # connected, but with no call in flight
            await env_pb2_grpc.EnvServiceStub(idle).ListTasks(env_pb2.ListTasksRequest(), timeout=5)
            await asyncio.wait_for(asyncio.gather(*(event.wait() for event in opened)), WAIT_S)

            sent = time.monotonic()
            env.process.send_signal(signal.SIGTERM)
            await asyncio.to_thread(wait_for_line, env, "shutting down")
            # The shutdown has begun once the port refuses connections and connected clients
            # have been told to go away (their channel leaves READY).
            await asyncio.to_thread(wait_until_refused, env.address)
            await wait_until_not_ready(idle)

            # New calls are refused, on a new connection and on an existing one.
            for channel in (grpc.aio.insecure_channel(env.address), idle):
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await env_pb2_grpc.EnvServiceStub(channel).Reset(reset, timeout=5)
                assert info.value.code() == grpc.StatusCode.UNAVAILABLE, info.value.details()
                if channel is not idle:
                    await channel.close()

        # The streams opened before the signal play their episodes to the end.
        began.set()
        results = await asyncio.wait_for(asyncio.gather(*plays), SHUTDOWN_GRACE_S)
        for session in sessions:
            await session.close()
        return results, sent

    results, sent = asyncio.run(asyncio.wait_for(scenario(), WAIT_S))
    assert all(done and steps > 0 for steps, done in results), results
    code = env.process.wait(WAIT_S)
    took = time.monotonic() - sent
    assert code == 0 and any("env_service stopped" in line for line in env.output)
    assert took < SHUTDOWN_GRACE_S, f"exited {took:.1f}s after SIGTERM; the grace period is {SHUTDOWN_GRACE_S}s"
