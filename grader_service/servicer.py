"""GraderService: trusts only the trajectory's (task, split, seed, actions); the
library regenerates the ticket, in the world of the grader's world key (the env
service's), and replays the actions to score them."""

from __future__ import annotations

from supportenv.errors import InvalidRequestError
from supportenv.graders import grade_state
from supportenv.replay import replay
from supportenv.v1 import convert, grader_pb2_grpc
from supportenv.v1.limits import MAX_EPISODE_ID_CHARS
from supportenv.v1.status import rpc


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
        actions = [convert.action_from_pb(a) for a in traj.actions]
        scenario, state = replay(traj.task_id, split, traj.seed, actions, traj.episode_id, self._world_key)
        return convert.grade_to_pb(grade_state(scenario, state), traj.episode_id)
