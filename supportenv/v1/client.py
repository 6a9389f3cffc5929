"""Python client SDK for the env service.

- `EnvClient` (sync) and `AsyncEnvClient` (asyncio): reset / step / state over unary
  calls; the client carries the state token for you, applies a deadline to every call,
  and retries UNAVAILABLE and server-side CANCELLED (every call is idempotent: Step is a
  pure function of its token). `reset_reply` / `step_reply` give the reply messages as
  they came.
- `GraderClient` (sync) and `AsyncGraderClient` (asyncio): Grade, with the same deadline,
  retries and channel options.
- `VectorEnvClient`: N episodes stepped together with one StepBatch per step, resetting
  finished episodes automatically (gymnasium's vector-env convention).
- `SessionClient` (asyncio): one bidirectional Session stream; the episode lives in the
  stream. It also keeps the episode's last token, so a lost stream resumes in a new one.

Actions may be `supportenv.Action` objects, dicts ({"action_type": ...}) or bare kinds;
observations come back as the library's `Observation`. A tool call (tasks whose
allowed_actions list "use_tool") is `use_tool("look_up_order", order_id="ORD-123456")`, or
the clients' own `use_tool(...)`, which sends one; its result comes back decoded in the next
observation's `tool_result` (a `supportenv.tools.ToolResult`, its data a dict).

Every client's `stub` is the bare generated stub on its channel (no deadline, no retries):
what the benchmarks time, on channels opened with their own `options`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

import grpc

from supportenv.actions import Action, parse, use_tool
from supportenv.episode import Observation
from supportenv.v1 import WORKER_METADATA, codec, convert, env_pb2, env_pb2_grpc, grader_pb2, grader_pb2_grpc
from supportenv.v1 import types_pb2 as pb
from supportenv.world import Briefing

T = TypeVar("T")
DEFAULT_TIMEOUT_S = 10.0
RETRIES = 4
# Spread calls over every address a name resolves to (e.g. all env replicas): any replica
# can serve any call.
# Every client its own connections: by default gRPC shares one connection between channels to the
# same address, so the clients of one process would all land on one server worker.
CHANNEL_OPTIONS = [("grpc.lb_policy_name", "round_robin"), ("grpc.use_local_subchannel_pool", 1)]
ChannelOptions = Sequence[tuple[str, Any]]

StepResult = tuple[Observation, float, bool, bool, dict[str, Any]]
ActionLike = Action | dict[str, Any] | str | pb.Action


# UNAVAILABLE: no server (yet). CANCELLED: a server shutting down drops calls it had
# accepted but not started (grpc/grpc#41785); these helpers never cancel a call themselves,
# so a CANCELLED here came from the server. Every call is idempotent, so both are retried.
RETRYABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)


def with_retries(call: Callable[[], T], retries: int = RETRIES) -> T:
    """Run `call`, retrying UNAVAILABLE and server-side CANCELLED with exponential backoff."""
    for attempt in range(retries):
        try:
            return call()
        except grpc.RpcError as exc:
            if exc.code() not in RETRYABLE or attempt == retries - 1:  # type: ignore[attr-defined]
                raise
            time.sleep(0.1 * 2**attempt)
    raise AssertionError("unreachable")


async def with_retries_async(call: Callable[[], Any], retries: int = RETRIES) -> Any:
    for attempt in range(retries):
        try:
            return await call()
        except grpc.aio.AioRpcError as exc:
            if exc.code() not in RETRYABLE or attempt == retries - 1:
                raise
            await asyncio.sleep(0.1 * 2**attempt)
    raise AssertionError("unreachable")


def action_pb(action: Action | dict[str, Any] | str | pb.Action) -> pb.Action:
    return action if isinstance(action, pb.Action) else convert.action_to_pb(parse(action))


def reset_request(task_id: str, split: str, seed: int, episode_id: str = "") -> env_pb2.ResetRequest:
    return env_pb2.ResetRequest(task_id=task_id, split=convert.SPLIT_TO_PB[split], seed=seed, episode_id=episode_id)


def grade_request(
    task_id: str, split: str, seed: int, actions: Iterable[ActionLike], episode_id: str = ""
) -> grader_pb2.GradeRequest:
    trajectory = pb.Trajectory(
        task_id=task_id,
        split=convert.SPLIT_TO_PB[split],
        seed=seed,
        actions=[action_pb(a) for a in actions],
        episode_id=episode_id,
    )
    return grader_pb2.GradeRequest(trajectory=trajectory)


def step_result(reply: env_pb2.StepResponse, briefing: Briefing | None = None) -> StepResult:
    """The gymnasium-style step tuple of a reply (`briefing`: see codec.observation_from_pb)."""
    info = {
        "reward_breakdown": {c.name: c.value for c in reply.reward_breakdown},
        "cumulative_reward": reply.cumulative_reward,
        "feedback": reply.observation.last_action_feedback,
    }
    observation = codec.observation_from_pb(reply.observation, briefing)
    return observation, reply.reward, reply.terminated, reply.truncated, info


class _Client:
    """A channel to one service, the bare generated `stub` on it, and the SDK's policy for
    unary calls: a deadline on every call, and with_retries. `wait_for_ready`: a call waits
    (up to its deadline) for a service not reachable yet instead of failing at once.
    `channel`: an open channel (of the client's kind, sync or asyncio) to share among many
    clients, left open when the client closes; otherwise the client opens its own to `address`."""

    _open_channel: Callable[..., Any] = staticmethod(grpc.insecure_channel)
    _stub_type: Callable[[Any], Any]

    def __init__(
        self,
        address: str = "",
        timeout: float = DEFAULT_TIMEOUT_S,
        retries: int = RETRIES,
        options: ChannelOptions = CHANNEL_OPTIONS,
        wait_for_ready: bool = False,
        channel: Any = None,
    ) -> None:
        if channel is None and not address:
            raise ValueError(f"{type(self).__name__} needs an address or an open channel")
        self._own_channel = channel is None
        self._channel = self._open_channel(address, options=options) if channel is None else channel
        self.stub = self._stub_type(self._channel)
        self.timeout, self.retries, self.wait_for_ready = timeout, retries, wait_for_ready

    def _attempt(self, method: Callable[..., T], request: Any) -> Callable[[], T]:
        return lambda: method(request, timeout=self.timeout, wait_for_ready=self.wait_for_ready)


class _SyncClient(_Client):
    def __enter__(self: C) -> C:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._own_channel:
            self._channel.close()

    def _call(self, method: Callable[..., T], request: Any) -> T:
        return with_retries(self._attempt(method, request), self.retries)


class _AsyncClient(_Client):
    _open_channel = staticmethod(grpc.aio.insecure_channel)

    async def __aenter__(self: A) -> A:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._own_channel:
            await self._channel.close()

    async def _call(self, method: Callable[..., Any], request: Any) -> Any:
        return await with_retries_async(self._attempt(method, request), self.retries)


C = TypeVar("C", bound=_SyncClient)
A = TypeVar("A", bound=_AsyncClient)


class EnvClient(_SyncClient):
    """One episode at a time over unary calls."""

    _stub_type = env_pb2_grpc.EnvServiceStub
    stub: env_pb2_grpc.EnvServiceStub
    token = b""  # the episode's state token, carried from each reply to the next call

    def list_tasks(self) -> list[pb.TaskInfo]:
        return list(self._call(self.stub.ListTasks, env_pb2.ListTasksRequest()).tasks)

    def worker(self) -> str:
        """The server worker this client's connection reached ("" if the server does not say)."""
        _, call = self._call(self.stub.ListTasks.with_call, env_pb2.ListTasksRequest())
        return dict(call.initial_metadata()).get(WORKER_METADATA, "")

    def reset_reply(self, task_id: str, split: str, seed: int, episode_id: str = "") -> env_pb2.ResetResponse:
        """Reset, giving the reply message as it came; the client keeps its state token."""
        reply = self._call(self.stub.Reset, reset_request(task_id, split, seed, episode_id))
        self.token = reply.state_token
        return reply

    def reset(
        self, task_id: str = "end_to_end_resolution", split: str = "train", seed: int = 0, episode_id: str = ""
    ) -> tuple[Observation, dict[str, Any]]:
        reply = self.reset_reply(task_id, split, seed, episode_id)
        return codec.observation_from_pb(reply.observation), {"episode_id": reply.episode_id}

    def step_reply(self, action: ActionLike) -> env_pb2.StepResponse:
        """Step, giving the reply message as it came; the client keeps its state token."""
        reply = self._call(self.stub.Step, env_pb2.StepRequest(state_token=self.token, action=action_pb(action)))
        self.token = reply.state_token
        return reply

    def step(self, action: Action | dict[str, Any] | str | pb.Action) -> StepResult:
        return step_result(self.step_reply(action))

    def use_tool(self, tool: str, **arguments: str) -> StepResult:
        """Step with a tool call; its result is the observation's tool_result."""
        return self.step(use_tool(tool, **arguments))

    def state(self) -> env_pb2.EpisodeState:
        return self._call(self.stub.State, env_pb2.StateRequest(state_token=self.token)).state

    def describe(self, with_prompt: bool = False) -> env_pb2.DescribeEnvironmentResponse:
        """The world as a model is shown it (DescribeEnvironment); `with_prompt`: also the prompt
        for this client's episode now (its system_prompt and user_prompt)."""
        token = self.token if with_prompt else b""
        return self._call(self.stub.DescribeEnvironment, env_pb2.DescribeEnvironmentRequest(state_token=token))


class GraderClient(_SyncClient):
    """Grades a trajectory: the grader replays (task, split, seed, actions) from scratch."""

    _stub_type = grader_pb2_grpc.GraderServiceStub
    stub: grader_pb2_grpc.GraderServiceStub

    def grade(
        self, task_id: str, split: str, seed: int, actions: Iterable[ActionLike], episode_id: str = ""
    ) -> grader_pb2.GradeResponse:
        return self._call(self.stub.Grade, grade_request(task_id, split, seed, actions, episode_id))


def spread_clients(address: str, count: int, timeout: float = DEFAULT_TIMEOUT_S) -> list[EnvClient]:
    """`count` clients whose connections reach different server workers, as far as the
    server has them: the kernel spreads connections over workers by a hash, so two can
    land on one. A connection to a worker already reached is dropped and another opened,
    up to 4 tries per client; after that duplicates are kept."""
    clients: list[EnvClient] = []
    seen: set[str] = set()
    tries = 0
    while len(clients) < count:
        client = EnvClient(address, timeout)
        worker = client.worker()
        tries += 1
        if worker not in seen or tries > 4 * count:
            seen.add(worker)
            clients.append(client)
        else:
            client.close()
    return clients


class AsyncEnvClient(_AsyncClient):
    """The asyncio twin of EnvClient."""

    _stub_type = env_pb2_grpc.EnvServiceStub
    stub: env_pb2_grpc.EnvServiceStub
    token = b""

    async def reset(
        self, task_id: str = "end_to_end_resolution", split: str = "train", seed: int = 0, episode_id: str = ""
    ) -> tuple[Observation, dict[str, Any]]:
        reply = await self._call(self.stub.Reset, reset_request(task_id, split, seed, episode_id))
        self.token = reply.state_token
        return codec.observation_from_pb(reply.observation), {"episode_id": reply.episode_id}

    async def step(self, action: Action | dict[str, Any] | str | pb.Action) -> StepResult:
        request = env_pb2.StepRequest(state_token=self.token, action=action_pb(action))
        reply = await self._call(self.stub.Step, request)
        self.token = reply.state_token
        return step_result(reply)

    async def use_tool(self, tool: str, **arguments: str) -> StepResult:
        """Step with a tool call; its result is the observation's tool_result."""
        return await self.step(use_tool(tool, **arguments))

    async def state(self) -> env_pb2.EpisodeState:
        return (await self._call(self.stub.State, env_pb2.StateRequest(state_token=self.token))).state


class AsyncGraderClient(_AsyncClient):
    """The asyncio twin of GraderClient."""

    _stub_type = grader_pb2_grpc.GraderServiceStub
    stub: grader_pb2_grpc.GraderServiceStub

    async def grade(
        self, task_id: str, split: str, seed: int, actions: Iterable[ActionLike], episode_id: str = ""
    ) -> grader_pb2.GradeResponse:
        return await self._call(self.stub.Grade, grade_request(task_id, split, seed, actions, episode_id))


class VectorEnvClient:
    """`num_envs` episodes of one task, stepped with one StepBatch call per step.

    Finished episodes reset automatically to the next seed from `seeds` (drawn one episode
    ahead for each env), in the same call as the step that finished them (next_episode);
    that step returns its last observation in info["final_observation"] and the new
    episode's first observation in place, as gymnasium's vector envs do. When a finite
    `seeds` has none left for an env, its episode just ends there: from then on it is not
    sent, its entry repeats its last observation with reward 0, not terminated, and
    info["seeds_exhausted"] True, and the action given for it is ignored (None will do);
    `done` says when every env is so (step no more).

    With `connections` > 1 the episodes are split into that many shards, each sent at the
    same time on its own connection: a server spreads connections over its worker
    processes, so more of them work on every step (use about one per server worker)."""

    def __init__(
        self,
        address: str,
        num_envs: int,
        task_id: str = "end_to_end_resolution",
        split: str = "train",
        seeds: Iterator[int] | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        connections: int = 1,
    ) -> None:
        if num_envs < 1 or connections < 1:
            raise ValueError("num_envs and connections must be at least 1")
        connections = min(connections, num_envs)
        # Several connections are spread over the server's workers; one needs no call to set up.
        self._clients = (
            spread_clients(address, connections, timeout) if connections > 1 else [EnvClient(address, timeout)]
        )
        self._pool = ThreadPoolExecutor(max_workers=max(1, connections - 1), thread_name_prefix="vector-env")
        # Contiguous shards, one per connection: env i always travels on the same one.
        bounds = [num_envs * k // connections for k in range(connections + 1)]
        self._shards = [range(bounds[k], bounds[k + 1]) for k in range(connections)]
        self.num_envs, self.task_id, self.split = num_envs, task_id, split
        self._seeds = seeds if seeds is not None else iter(range(2**62))
        self.tokens: list[bytes] = [b""] * num_envs
        self.seeds: list[int] = [0] * num_envs
        self._next_seeds: list[int | None] = [None] * num_envs
        self.exhausted: list[bool] = [False] * num_envs  # ended with no seed left for another episode
        self._last: list[Observation | None] = [None] * num_envs  # an exhausted env's last observation
        # Each env's briefing, converted once per episode (codec.observation_from_pb).
        self._briefings: list[Briefing | None] = [None] * num_envs

    def close(self) -> None:
        self._pool.shutdown()
        for client in self._clients:
            client.close()

    def _batch(self, method: str, batch_type: type, items: dict[int, Any]) -> dict[int, Any]:
        """Send items {env index: request} as one batch per connection, all at once;
        the responses by env index (each shard retried on its own, like any call)."""
        sends = []
        for client, shard in zip(self._clients, self._shards, strict=True):
            indexes = [i for i in shard if i in items]
            if indexes:
                request = batch_type(requests=[items[i] for i in indexes])
                sends.append((indexes, partial(client._call, getattr(client.stub, method), request)))
        # Blocking calls on pool threads (a sync channel's future() starts a thread per call);
        # the last shard goes from this thread.
        futures = [self._pool.submit(send) for _, send in sends[:-1]]
        replies = [*(f.result() for f in futures), sends[-1][1]()] if sends else []
        out: dict[int, Any] = {}
        for (indexes, _), reply in zip(sends, replies, strict=True):
            out.update(zip(indexes, reply.responses, strict=True))
        return out

    def _reset_many(self, indexes: Sequence[int]) -> list[Observation]:
        requests = {}
        for i in indexes:
            seed = next(self._seeds, None)
            if seed is None:  # not StopIteration, which a caller's generator would turn into RuntimeError
                raise ValueError(
                    f"VectorEnvClient: `seeds` has no seed for env {i} of {self.num_envs}: give at least one "
                    "per env, or an endless iterator (itertools.count())"
                )
            self.seeds[i] = seed
            requests[i] = reset_request(self.task_id, self.split, self.seeds[i])
        replies = self._batch("ResetBatch", env_pb2.ResetBatchRequest, requests)
        out = []
        for i in indexes:
            self.tokens[i] = replies[i].state_token
            out.append(self._first_observation(i, replies[i].observation))
        return out

    def _first_observation(self, i: int, msg: pb.Observation) -> Observation:
        self._briefings[i] = briefing = codec.briefing_from_pb(msg)
        return codec.observation_from_pb(msg, briefing)

    def reset(self) -> list[Observation]:
        observations = self._reset_many(range(self.num_envs))
        self._next_seeds = [next(self._seeds, None) for _ in range(self.num_envs)]
        self.exhausted, self._last = [False] * self.num_envs, [None] * self.num_envs
        return observations

    @property
    def done(self) -> bool:
        """Every env has ended its last episode (a finite `seeds` ran out)."""
        return all(self.exhausted)

    def _step_request(self, i: int, action: Action | dict[str, Any] | str | pb.Action) -> env_pb2.StepRequest:
        request = env_pb2.StepRequest(state_token=self.tokens[i], action=action_pb(action))
        if self._next_seeds[i] is not None:
            request.next_episode.CopyFrom(reset_request(self.task_id, self.split, self._next_seeds[i]))
        return request

    def step(
        self, actions: Sequence[Action | dict[str, Any] | str | pb.Action]
    ) -> tuple[list[Observation], list[float], list[bool], list[bool], list[dict[str, Any]]]:
        if len(actions) != self.num_envs:
            raise ValueError(f"expected {self.num_envs} actions, got {len(actions)}")
        requests = {i: self._step_request(i, actions[i]) for i in range(self.num_envs) if not self.exhausted[i]}
        replies = self._batch("StepBatch", env_pb2.StepBatchRequest, requests)
        observations, rewards, terminated, truncated, infos = [], [], [], [], []
        for i in range(self.num_envs):
            if self.exhausted[i]:  # not sent: its episode ended with no seed left
                observations.append(self._last[i])
                rewards.append(0.0)
                terminated.append(False)
                truncated.append(False)
                infos.append({"seed": self.seeds[i], "seeds_exhausted": True})
                continue
            item = replies[i]
            self.tokens[i] = item.state_token
            obs, reward, term, trunc, info = step_result(item, self._briefings[i])
            info["seed"] = self.seeds[i]
            if item.HasField("next_episode"):
                info["final_observation"] = obs
                obs = self._first_observation(i, item.next_episode.observation)
                self.tokens[i], self.seeds[i] = item.next_episode.state_token, self._next_seeds[i]
                self._next_seeds[i] = next(self._seeds, None)
            elif term or trunc:  # no next seed was drawn: `seeds` ran out, this env is done
                self.exhausted[i], self._last[i] = True, obs
                info["seeds_exhausted"] = True
            observations.append(obs)
            rewards.append(reward)
            terminated.append(term)
            truncated.append(trunc)
            infos.append(info)
        return observations, rewards, terminated, truncated, infos


# A Session stream that ended with one of these lost its episode, not the request: the
# request goes again on a new stream. INTERNAL: a write on a connection that died (the
# services themselves never answer INTERNAL). RESOURCE_EXHAUSTED only on a new stream's first
# exchange, where it is the worker's cap of open streams (a later one is an oversized request).
STREAM_LOST = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.INTERNAL,
)


def _stream_lost(exc: Exception, first: bool) -> bool:
    """Whether `exc`, ending an exchange (`first`: a new stream's first), lost the stream rather than the request."""
    if not isinstance(exc, grpc.aio.AioRpcError):
        return True  # closed without a status, or no reply within the timeout
    return exc.code() in STREAM_LOST or (first and exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED)


def _reply_token(reply: env_pb2.SessionResponse) -> bytes:
    """The token of the stream's episode after this reply ("" for a state reply)."""
    if reply.HasField("reset"):
        return reply.reset.state_token
    if reply.HasField("step"):
        step = reply.step
        return step.next_episode.state_token if step.HasField("next_episode") else step.state_token
    return b""


class SessionClient:
    """One Session stream (asyncio): reset and step without tokens on the wire.

    With `resume` (the default) every reply also brings the episode's signed state token
    (want_token), and a stream lost mid-episode (its replica gone, the worker shutting down
    or at its cap of open streams, the stream closed after sitting idle, no reply within
    `timeout`) is replaced by a new one, which continues the episode from the last token
    (SessionRequest.resume) and sends the request again: a step the lost stream may have
    applied is applied again to the same state, with the same result, so no episode is lost
    and none is changed. Up to `retries` streams per request, with backoff. `resume=False`
    sends no tokens, and any failure ends the session.

    `channel`: an open grpc.aio channel to share among many sessions (one channel carries
    many streams; it stays open when the session closes); otherwise the session opens its
    own to `address`."""

    def __init__(
        self,
        address: str = "",
        timeout: float = DEFAULT_TIMEOUT_S,
        resume: bool = True,
        retries: int = RETRIES,
        channel: grpc.aio.Channel | None = None,
    ) -> None:
        if channel is None and not address:
            raise ValueError("SessionClient needs an address or an open channel")
        self._own_channel = channel is None
        self._channel = grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) if channel is None else channel
        self._stub = env_pb2_grpc.EnvServiceStub(self._channel)
        self._call: Any = None
        self.timeout, self.resume, self.retries = timeout, resume, max(1, retries)
        self.token = b""  # the episode's last state token (with resume)
        self.resumed = 0  # times the episode went on in a new stream (SessionRequest.resume)

    async def __aenter__(self) -> SessionClient:
        self._call = self._stub.Session()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._call is not None:
            if not self._call.done():
                await self._call.done_writing()
            self._call = None
        if self._own_channel:
            await self._channel.close()

    def _open_call(self) -> Any:
        """The stream, if it is still open (None before the first request and after it ended)."""
        return None if self._call is None or self._call.done() else self._call

    async def _exchange(self, request: env_pb2.SessionRequest) -> env_pb2.SessionResponse:
        if self._open_call() is None:
            self._call = self._stub.Session()  # a new stream (an ended one has lost its episode)
        # The stream may have ended already: then the read below raises its status.
        with contextlib.suppress(asyncio.InvalidStateError, grpc.aio.AioRpcError):
            await self._call.write(request)
        reply = await asyncio.wait_for(self._call.read(), self.timeout)
        if reply is grpc.aio.EOF:
            raise ConnectionError("the session stream closed")
        return reply

    async def _ask(self, request: env_pb2.SessionRequest) -> env_pb2.SessionResponse:
        if not self.resume:
            return await self._exchange(request)
        request.want_token = True
        if request.WhichOneof("kind") == "reset":
            self.token = b""  # the old episode is over, even if this reset is refused
        for attempt in range(self.retries):
            first = self._open_call() is None  # the next exchange is a new stream's first
            try:
                if first and self.token and request.WhichOneof("kind") in ("step", "state"):
                    await self._exchange(env_pb2.SessionRequest(resume=self.token))
                    self.resumed += 1
                    first = False
                reply = await self._exchange(request)
                break
            except (grpc.aio.AioRpcError, ConnectionError, TimeoutError) as exc:
                if not _stream_lost(exc, first) or attempt == self.retries - 1:
                    raise
                self._call.cancel()
                self._call = None
                await asyncio.sleep(0.1 * 2**attempt)
        self.token = _reply_token(reply) or self.token
        return reply

    async def reset(
        self, task_id: str = "end_to_end_resolution", split: str = "train", seed: int = 0, episode_id: str = ""
    ) -> tuple[Observation, dict[str, Any]]:
        reply = await self._ask(env_pb2.SessionRequest(reset=reset_request(task_id, split, seed, episode_id)))
        return codec.observation_from_pb(reply.reset.observation), {"episode_id": reply.reset.episode_id}

    async def step(self, action: Action | dict[str, Any] | str | pb.Action) -> StepResult:
        reply = await self._ask(env_pb2.SessionRequest(step=action_pb(action)))
        return step_result(reply.step)

    async def use_tool(self, tool: str, **arguments: str) -> StepResult:
        """Step with a tool call; its result is the observation's tool_result."""
        return await self.step(use_tool(tool, **arguments))
