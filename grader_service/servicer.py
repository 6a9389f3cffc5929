"""GraderService: trusts only the trajectory's (task, split, seed, actions); the
library regenerates the ticket, in the world of the grader's world key (the env
service's), and replays the actions to score them."""

from __future__ import annotations

from supportenv.actions import Action
from supportenv.errors import InvalidActionError, InvalidRequestError
from supportenv.graders import grade_state
from supportenv.replay import replay
from supportenv.v1 import convert, grader_pb2_grpc, types_pb2
from supportenv.v1.limits import MAX_EPISODE_ID_CHARS
from supportenv.v1.status import rpc


def _action(index: int, action: types_pb2.Action) -> Action:
    """The library's action, or the error naming it as replay and StepBatch do (from 0)."""
    try:
        return convert.action_from_pb(action)
    except (InvalidActionError, InvalidRequestError) as exc:
        raise type(exc)(f"actions[{index}]: {exc}") from exc


class GraderServicer(grader_pb2_grpc.GraderServiceServicer):
    def __init__(self, world_key: bytes | None = None) -> None:
        self._world_key = world_key

    @rpc
    async def Grade(self, request, context):  # noqa: N802 (gRPC method name)
        if not request.HasField("trajectory"):
            raise InvalidRequestError("trajectory is required")
        traj = request.trajectory
        if not traj.task_id:
            raise InvalidRequestError("trajectory.task_id is required")
        if len(traj.episode_id) > MAX_EPISODE_ID_CHARS:
            raise InvalidRequestError(f"trajectory.episode_id is longer than {MAX_EPISODE_ID_CHARS} characters")
        split = convert.split_from_pb(traj.split)
        actions = [_action(index, action) for index, action in enumerate(traj.actions)]
        scenario, state = replay(traj.task_id, split, traj.seed, actions, traj.episode_id, self._world_key)
        return convert.grade_to_pb(grade_state(scenario, state), traj.episode_id)
