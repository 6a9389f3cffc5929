"""EnvService: a thin gRPC layer over the library.

Unary and batched calls need no episode kept between calls: everything comes in, and
goes back out, inside the signed state token (LiveStates only spares the replay of the
tokens this worker issued last). A Session stream keeps its one episode in the stream
handler's local variables, so it dies with the stream; SessionLimits bound how long a
stream may sit idle and how many may be open."""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator, Callable, Sequence
from functools import lru_cache
from typing import Any

import grpc

from env_service.live import LiveStates
from env_service.sessions import SessionLimits
from env_service.tokens import TokenCodec
from supportenv.actions import Action, validate
from supportenv.episode import EpisodeState, advance, observe
from supportenv.errors import InvalidActionError, InvalidRequestError, UnknownTaskError
from supportenv.replay import check_episode_key, new_episode
from supportenv.tasks import ALL_TASKS
from supportenv.v1 import WORKER_METADATA, codec, convert, env_pb2, env_pb2_grpc, types_pb2
from supportenv.v1.describe import describe_environment
from supportenv.v1.limits import MAX_BATCH, MAX_EPISODE_ID_CHARS, MAX_TOKEN_BYTES, LimitExceededError
from supportenv.v1.malformed import own_request_checks, refuse_unparsable
from supportenv.v1.status import NoEpisodeError, abort_for_error, rpc, status_for
from supportenv.world import Scenario, generate

# How long a Session stream over the cap is given to send its first request before it is refused.
FIRST_REQUEST_WAIT_S = 2.0

# Requests repeat: an agent sends the same few actions, and a vector env the same next
# episodes, over and over. Each distinct one is checked and converted once. Both caches are
# bounded in entries and in size (an action's bytes, at most MAX_CACHED_ACTION_BYTES; a valid
# episode key), so memory stays flat.
MAX_CACHED_ACTION_BYTES = 512


@lru_cache(maxsize=2048)
def _checked_action(data: bytes) -> Action:
    """The validated library Action for an encoded types.Action (invalid ones raise, uncached)."""
    return validate(convert.action_from_pb(types_pb2.Action.FromString(data)))


@lru_cache(maxsize=4096)
def _checked_split(task_id: str, split: int, seed: int) -> str:
    """The split's name, once (task_id, split, seed) is a valid episode key (an invalid one
    raises, uncached: so only known task ids, short strings, are ever kept)."""
    name = convert.split_from_pb(split)
    check_episode_key(task_id, name, seed)
    return name


def _check_batch(size: int) -> None:
    if size > MAX_BATCH:
        raise LimitExceededError(f"batch of {size} items; the limit is {MAX_BATCH}")


def _item(index: int, exc: Exception) -> Exception:
    """The same error, with the failing batch item named in its message."""
    return type(exc)(f"item {index}: {exc}")


class EnvServicer(env_pb2_grpc.EnvServiceServicer):
    """The EnvService handlers. Unlike the generated base class, Reset, Step, ResetBatch,
    StepBatch and Session's reset and step replies return their response already encoded, as
    bytes: they are written straight from the episode state (supportenv.v1.codec), rather than
    built as messages only to be serialized again on every step. So this class works only
    under supportenv.v1.server.serve, whose interceptor (malformed.MalformedRequestInterceptor)
    sends bytes as they are; called in process, e.g. `await servicer.Step(request, None)`, such
    a handler returns the bytes, which parse with the response message's FromString."""

    def __init__(
        self, codec: TokenCodec, live: LiveStates | None = None, session_limits: SessionLimits | None = None
    ) -> None:
        self._codec = codec
        self._limits = SessionLimits() if session_limits is None else session_limits
        self._open_sessions = 0  # Session streams this worker serves now (one event loop: no lock)
        self._world_key = codec.world_key  # the world the codec's tokens replay in is the one we generate
        self._live = LiveStates() if live is None else live
        self._worker = f"{socket.gethostname()}:{os.getpid()}"
        self._tasks = env_pb2.ListTasksResponse(tasks=[convert.task_to_pb(t) for t in ALL_TASKS])

    # ---- the work, shared by every transport ----

    def _token(self, state: EpisodeState, before: bytes = b"") -> bytes:
        """The signed token, never one that decode would refuse as too long. `before`, when
        given, is the token of this state one action earlier, whose encoding is reused."""
        token = self._codec.extend(before, state) if before else self._codec.encode(state)
        if len(token) > MAX_TOKEN_BYTES:
            raise LimitExceededError(
                f"the episode's state token would be {len(token)} bytes; the limit is {MAX_TOKEN_BYTES}. "
                "It carries every text of the episode: send shorter texts"
            )
        return token

    @staticmethod
    def _check_reset(request: env_pb2.ResetRequest) -> str:
        """Everything a Reset checks before it starts the episode; the split's name."""
        if not request.task_id:
            raise InvalidRequestError("task_id is required; call ListTasks for the available tasks")
        if len(request.episode_id) > MAX_EPISODE_ID_CHARS:
            raise InvalidRequestError(f"episode_id is longer than {MAX_EPISODE_ID_CHARS} characters")
        return _checked_split(request.task_id, request.split, request.seed)

    @classmethod
    def _check_next_episode(cls, request: env_pb2.StepRequest | env_pb2.SessionRequest) -> bool:
        """Whether the request asks for an autoreset; a bad one is refused before the step."""
        if not request.HasField("next_episode"):
            return False
        try:
            cls._check_reset(request.next_episode)
        except (InvalidRequestError, UnknownTaskError) as exc:
            raise type(exc)(f"next_episode: {exc}") from exc
        return True

    def _start(self, request: env_pb2.ResetRequest) -> tuple[Scenario, EpisodeState]:
        split = self._check_reset(request)
        return new_episode(request.task_id, split, request.seed, request.episode_id, self._world_key)

    @staticmethod
    def _advance(
        scenario: Scenario, state: EpisodeState, action: types_pb2.Action
    ) -> tuple[float, tuple[tuple[str, float], ...]]:
        data = action.SerializeToString()
        if len(data) > MAX_CACHED_ACTION_BYTES:
            return advance(scenario, state, validate(convert.action_from_pb(action)))
        return advance(scenario, state, _checked_action(data))

    def _open(self, token: bytes) -> EpisodeState:
        """The episode behind a token, now the caller's to change."""
        state = self._live.take(token)
        return self._codec.decode(token) if state is None else state

    def _read(self, token: bytes) -> tuple[Scenario, EpisodeState]:
        """The episode behind a token, to read, not to change."""
        state = self._live.peek(token) or self._codec.decode(token)
        return generate(state.task_id, state.split, state.seed, self._world_key), state

    def _step_token(self, request: env_pb2.StepRequest) -> bytes:
        """One step of a token's episode: its StepResponse, encoded (supportenv.v1.codec)."""
        token = request.state_token
        state = self._open(token)
        try:
            if not request.HasField("action"):
                raise InvalidRequestError("action is required")
            autoreset = self._check_next_episode(request)
            scenario = generate(state.task_id, state.split, state.seed, self._world_key)
            reward, breakdown = self._advance(scenario, state, request.action)
        except (InvalidRequestError, InvalidActionError, UnknownTaskError):
            self._live.put(token, state)  # refused before the step changed it: still the token's state
            raise
        following = self._reset_token(request.next_episode) if autoreset and state.done else b""
        return codec.step_response(scenario, state, reward, breakdown, self._issue(state, token), following)

    def _issue(self, state: EpisodeState, before: bytes = b"") -> bytes:
        """The token for a state no one will change any more, remembered for the next call
        (`before`: as in _token)."""
        token = self._token(state, before)
        if not state.done:  # a finished episode is never stepped again: keep the room for live ones
            self._live.put(token, state)
        return token

    def _reset_token(self, request: env_pb2.ResetRequest) -> bytes:
        """A new episode: its ResetResponse, encoded."""
        scenario, state = self._start(request)
        return codec.reset_response(scenario, state, self._issue(state))

    # ---- unary and batched ----

    @rpc
    async def ListTasks(  # noqa: N802 (gRPC method name)
        self, request: env_pb2.ListTasksRequest, context: grpc.aio.ServicerContext
    ) -> env_pb2.ListTasksResponse:
        # Which worker answered: lets a client spread its connections over the workers.
        await context.send_initial_metadata(((WORKER_METADATA, self._worker),))
        return self._tasks

    @rpc
    async def Reset(self, request: env_pb2.ResetRequest, context: grpc.aio.ServicerContext) -> bytes:  # noqa: N802
        return self._reset_token(request)

    @rpc
    async def Step(self, request: env_pb2.StepRequest, context: grpc.aio.ServicerContext) -> bytes:  # noqa: N802
        return self._step_token(request)

    @rpc
    async def State(self, request: env_pb2.StateRequest, context: grpc.aio.ServicerContext) -> env_pb2.StateResponse:  # noqa: N802
        return env_pb2.StateResponse(state=codec.episode_state(*self._read(request.state_token)))

    @rpc
    async def DescribeEnvironment(  # noqa: N802
        self, request: env_pb2.DescribeEnvironmentRequest, context: grpc.aio.ServicerContext
    ) -> env_pb2.DescribeEnvironmentResponse:
        if not request.state_token:
            return describe_environment()
        return describe_environment(observe(*self._read(request.state_token)))

    @rpc
    async def ResetBatch(self, request: env_pb2.ResetBatchRequest, context: grpc.aio.ServicerContext) -> bytes:  # noqa: N802
        _check_batch(len(request.requests))
        return codec.repeated(codec.BATCH_ITEM, self._each(request.requests, self._reset_token))

    @rpc
    async def StepBatch(self, request: env_pb2.StepBatchRequest, context: grpc.aio.ServicerContext) -> bytes:  # noqa: N802
        _check_batch(len(request.requests))
        return codec.repeated(codec.BATCH_ITEM, self._each(request.requests, self._step_token))

    @staticmethod
    def _each(items: Sequence[Any], work: Callable[[Any], bytes]) -> list[bytes]:
        """work(item) for every item of a batch; a failure names its item."""
        out = []
        for index, item in enumerate(items):
            try:
                out.append(work(item))
            except Exception as exc:
                raise (_item(index, exc) if status_for(exc) else exc) from exc
        return out

    # ---- one stream, one episode in memory ----

    @own_request_checks
    async def Session(  # noqa: N802
        self, request_iterator: AsyncIterator[env_pb2.SessionRequest], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[bytes]:  # encoded SessionResponses (codec)
        if self._open_sessions >= self._limits.max_open:
            # Refused once its first request is in (waiting a moment at most), so that a client that writes
            # before it reads gets the refusal, not a write that failed on a closed stream, which grpc
            # reports to it as INTERNAL (seen in CI on 2026-12-07).
            try:
                async with asyncio.timeout(FIRST_REQUEST_WAIT_S):
                    await anext(aiter(request_iterator), None)
            except (TimeoutError, grpc.RpcError):
                pass
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, self._limits.full_message())
        self._open_sessions += 1
        scenario: Scenario | None = None
        state: EpisodeState | None = None
        clock, idle_s = asyncio.get_running_loop().time, self._limits.idle_s
        try:
            # Armed only while waiting for the client's next request: work and replies are not idleness.
            async with asyncio.timeout(idle_s) as idle:
                async for request in request_iterator:
                    idle.reschedule(None)
                    await refuse_unparsable(request, context)
                    try:
                        kind = request.WhichOneof("kind")
                        if kind == "reset":
                            scenario, state = self._start(request.reset)
                            token = self._token(state) if request.want_token else b""
                            response = codec.present(codec.SESSION_RESET, codec.reset_response(scenario, state, token))
                        elif kind == "resume":
                            state = self._open(request.resume)
                            scenario = generate(state.task_id, state.split, state.seed, self._world_key)
                            response = self._session_state(scenario, state)
                        elif kind is None:
                            raise InvalidRequestError("a SessionRequest needs one of reset, step, state or resume")
                        elif scenario is None or state is None:
                            raise NoEpisodeError("this session has no episode yet: send a reset (or a resume) first")
                        elif kind == "step":
                            response, scenario, state = self._session_step(request, scenario, state)
                        else:
                            response = self._session_state(scenario, state)
                    except Exception as exc:
                        await abort_for_error(exc, context)
                    yield response
                    idle.reschedule(clock() + idle_s)
        except TimeoutError:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, self._limits.idle_message())
        finally:
            self._open_sessions -= 1

    def _session_step(
        self, request: env_pb2.SessionRequest, scenario: Scenario, state: EpisodeState
    ) -> tuple[Any, Scenario, EpisodeState]:
        """A Session step's encoded response, and the stream's episode after it (the next one
        when the step ended it and the request asked for an autoreset)."""
        autoreset = self._check_next_episode(request)
        reward, breakdown = self._advance(scenario, state, request.step)
        token = self._token(state) if request.want_token else b""
        stepped, following = (scenario, state), b""
        if autoreset and state.done:
            scenario, state = self._start(request.next_episode)
            following = codec.reset_response(scenario, state, self._token(state) if request.want_token else b"")
        reply = codec.step_response(*stepped, reward, breakdown, token, following)
        return codec.present(codec.SESSION_STEP, reply), scenario, state

    @staticmethod
    def _session_state(scenario: Scenario, state: EpisodeState) -> env_pb2.SessionResponse:
        return env_pb2.SessionResponse(state=env_pb2.StateResponse(state=codec.episode_state(scenario, state)))
