"""EnvService: a thin gRPC layer over the library. It keeps no episode between calls:
everything comes in, and goes back out, inside the signed state token."""

from __future__ import annotations

import grpc

from env_service.tokens import InvalidTokenError, TokenCodec
from supportenv.actions import validate
from supportenv.episode import new_episode, observe, step
from supportenv.errors import InvalidRequestError
from supportenv.tasks import TASKS, get_task
from supportenv.v1 import convert, env_pb2, env_pb2_grpc
from supportenv.v1.serving import register_status, rpc
from supportenv.world import generate

MAX_EPISODE_ID_CHARS = 128
register_status(InvalidTokenError, grpc.StatusCode.INVALID_ARGUMENT)


class EnvServicer(env_pb2_grpc.EnvServiceServicer):
    def __init__(self, codec: TokenCodec) -> None:
        self._codec = codec
        self._tasks = env_pb2.ListTasksResponse(tasks=[convert.task_to_pb(t) for t in TASKS])

    @rpc
    async def ListTasks(self, request, context):  # noqa: N802 (gRPC method name)
        return self._tasks

    @rpc
    async def Reset(self, request, context):  # noqa: N802
        if not request.task_id:
            raise InvalidRequestError("task_id is required; call ListTasks for the available tasks")
        if len(request.episode_id) > MAX_EPISODE_ID_CHARS:
            raise InvalidRequestError(f"episode_id is longer than {MAX_EPISODE_ID_CHARS} characters")
        split = convert.split_from_pb(request.split)
        scenario, state = new_episode(request.task_id, split, request.seed, request.episode_id)
        return env_pb2.ResetResponse(
            observation=convert.observation_to_pb(observe(scenario, state)),
            state_token=self._codec.encode(state),
            episode_id=state.episode_id,
            task=convert.task_to_pb(get_task(state.task_id)),
        )

    @rpc
    async def Step(self, request, context):  # noqa: N802
        state = self._codec.decode(request.state_token)
        if not request.HasField("action"):
            raise InvalidRequestError("action is required")
        action = validate(convert.action_from_pb(request.action))
        result = step(generate(state.task_id, state.split, state.seed), state, action)
        return convert.step_to_pb(result, state, self._codec.encode(state))

    @rpc
    async def State(self, request, context):  # noqa: N802
        state = self._codec.decode(request.state_token)
        obs = observe(generate(state.task_id, state.split, state.seed), state)
        return env_pb2.StateResponse(state=convert.episode_state_to_pb(state, obs))
