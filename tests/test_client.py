"""The SDK's one call policy (deadline, retries, wait_for_ready), tested once for every client
built on it: EnvClient, GraderClient and their asyncio twins. A purpose-built server on loopback
fails each call with the status codes it is given, then answers."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest

from supportenv.v1 import env_pb2, env_pb2_grpc, grader_pb2, grader_pb2_grpc
from supportenv.v1 import types_pb2 as pb
from supportenv.v1.client import (
    RETRIES,
    AsyncEnvClient,
    AsyncGraderClient,
    EnvClient,
    GraderClient,
)

TASK = "end_to_end_resolution"
UNAVAILABLE, CANCELLED = grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED
INVALID_ARGUMENT = grpc.StatusCode.INVALID_ARGUMENT


class Flaky(env_pb2_grpc.EnvServiceServicer, grader_pb2_grpc.GraderServiceServicer):
    """Fails the next calls of the method named `failing` with `failures` (one code each), then
    answers; with `hang` set, that method's calls wait (bounded) instead, to meet the deadline."""

    def __init__(self) -> None:
        self.failing = ""
        self.failures: list[grpc.StatusCode] = []
        self.calls: Counter[str] = Counter()
        self.hang = threading.Event()
        self.release = threading.Event()
        self.graded: list[pb.Trajectory] = []

    def _answer(self, method: str, context: grpc.ServicerContext) -> None:
        self.calls[method] += 1
        if method != self.failing:
            return
        if self.hang.is_set():
            self.release.wait(10)
        if self.failures:
            context.abort(self.failures.pop(0), "told to fail")

    def ListTasks(self, request, context):  # noqa: N802 (gRPC method name)
        self._answer("ListTasks", context)
        return env_pb2.ListTasksResponse(tasks=[pb.TaskInfo(task_id=TASK)])

    def Reset(self, request, context):  # noqa: N802
        self._answer("Reset", context)
        return env_pb2.ResetResponse(state_token=b"t0", episode_id="e")

    def Step(self, request, context):  # noqa: N802
        self._answer("Step", context)
        return env_pb2.StepResponse(state_token=request.state_token + b"+", reward=0.5)

    def Grade(self, request, context):  # noqa: N802
        self._answer("Grade", context)
        self.graded.append(request.trajectory)
        return grader_pb2.GradeResponse(score=0.75, passed=True, task_id=request.trajectory.task_id)


def serve(flaky: Flaky, port: int = 0) -> tuple[grpc.Server, str]:
    server = grpc.server(ThreadPoolExecutor(max_workers=4))
    env_pb2_grpc.add_EnvServiceServicer_to_server(flaky, server)
    grader_pb2_grpc.add_GraderServiceServicer_to_server(flaky, server)
    port = server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    return server, f"127.0.0.1:{port}"


@pytest.fixture
def flaky() -> Iterator[tuple[Flaky, str]]:
    servicer = Flaky()
    server, address = serve(servicer)
    yield servicer, address
    servicer.release.set()
    server.stop(None)


# Each client's calls, sync or async, as one blocking function of (address, timeout).
def env_list_tasks(address: str, timeout: float) -> object:
    with EnvClient(address, timeout) as client:
        return client.list_tasks()[0].task_id


def env_episode(address: str, timeout: float) -> object:
    with EnvClient(address, timeout) as client:
        client.reset_reply(TASK, "train", 1)
        return client.step_reply("mark_resolved").state_token, client.token


def grader_grade(address: str, timeout: float) -> object:
    with GraderClient(address, timeout) as client:
        return client.grade(TASK, "test", 3, ["mark_resolved"]).score


def async_env_episode(address: str, timeout: float) -> object:
    async def run() -> object:
        async with AsyncEnvClient(address, timeout) as client:
            await client.reset(TASK, "train", 1)
            _, reward, *_ = await client.step("mark_resolved")
            return reward, client.token

    return asyncio.run(run())


def async_grader_grade(address: str, timeout: float) -> object:
    async def run() -> object:
        async with AsyncGraderClient(address, timeout) as client:
            return (await client.grade(TASK, "test", 3, ["mark_resolved"])).score

    return asyncio.run(run())


# name: (the client calls, the method made to fail, what the calls give when they succeed)
CALLS = {
    "EnvClient.list_tasks": (env_list_tasks, "ListTasks", TASK),
    "EnvClient.reset_reply": (env_episode, "Reset", (b"t0+", b"t0+")),
    "EnvClient.step_reply": (env_episode, "Step", (b"t0+", b"t0+")),
    "GraderClient.grade": (grader_grade, "Grade", 0.75),
    "AsyncEnvClient.reset": (async_env_episode, "Reset", (0.5, b"t0+")),
    "AsyncEnvClient.step": (async_env_episode, "Step", (0.5, b"t0+")),
    "AsyncGraderClient.grade": (async_grader_grade, "Grade", 0.75),
}


@pytest.mark.parametrize("name", CALLS)
@pytest.mark.parametrize("code", [UNAVAILABLE, CANCELLED])
def test_unavailable_and_cancelled_are_retried(flaky, name, code):
    servicer, address = flaky
    call, servicer.failing, expected = CALLS[name]
    servicer.failures = [code] * (RETRIES - 1)  # the last attempt succeeds
    assert call(address, 5.0) == expected
    assert servicer.calls[servicer.failing] == RETRIES


@pytest.mark.parametrize("name", CALLS)
def test_retries_give_up_after_retries_attempts(flaky, name):
    servicer, address = flaky
    call, servicer.failing, _ = CALLS[name]
    servicer.failures = [UNAVAILABLE] * (RETRIES + 5)
    with pytest.raises(grpc.RpcError) as raised:
        call(address, 5.0)
    assert raised.value.code() == UNAVAILABLE
    assert servicer.calls[servicer.failing] == RETRIES


@pytest.mark.parametrize("name", CALLS)
def test_invalid_argument_is_not_retried(flaky, name):
    servicer, address = flaky
    call, servicer.failing, _ = CALLS[name]
    servicer.failures = [INVALID_ARGUMENT, INVALID_ARGUMENT]
    with pytest.raises(grpc.RpcError) as raised:
        call(address, 5.0)
    assert raised.value.code() == INVALID_ARGUMENT
    assert servicer.calls[servicer.failing] == 1


@pytest.mark.parametrize("name", CALLS)
def test_every_call_has_a_deadline(flaky, name):
    servicer, address = flaky
    call, servicer.failing, _ = CALLS[name]
    servicer.hang.set()
    start = time.monotonic()
    with pytest.raises(grpc.RpcError) as raised:
        call(address, 0.3)
    assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert servicer.calls[servicer.failing] == 1, "a call past its deadline is not retried"
    assert time.monotonic() - start < 8, "the client's deadline ended the call, not the server"


def test_grader_client_sends_the_trajectory(flaky):
    servicer, address = flaky
    with GraderClient(address) as client:
        actions = ["mark_resolved", {"action_type": "escalate_to_human", "text": "x"}]
        grade = client.grade(TASK, "validation", 9, actions, "ep-1")
    assert (grade.score, grade.passed, grade.task_id) == (0.75, True, TASK)
    (sent,) = servicer.graded
    assert (sent.task_id, sent.split, sent.seed, sent.episode_id) == (TASK, pb.SPLIT_VALIDATION, 9, "ep-1")
    assert [a.WhichOneof("kind") for a in sent.actions] == ["mark_resolved", "escalate_to_human"]


def test_wait_for_ready_waits_for_a_service_that_starts_late():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    servicer, started = Flaky(), []

    def start_late() -> None:
        time.sleep(1.5)  # longer than every backoff of the retries put together
        started.append(serve(servicer, port)[0])

    thread = threading.Thread(target=start_late)
    thread.start()
    try:
        with EnvClient(f"127.0.0.1:{port}", timeout=20.0, retries=1, wait_for_ready=True) as client:
            assert client.list_tasks()[0].task_id == TASK
    finally:
        thread.join()
        for server in started:
            server.stop(None)
