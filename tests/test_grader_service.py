"""The grader service over real gRPC: it replays, and agrees with a local replay."""

from __future__ import annotations

import expert_episodes
import grpc
import pytest

from supportenv import expert
from supportenv.episode import step
from supportenv.graders import grade_trajectory
from supportenv.replay import new_episode
from supportenv.tasks import EXPERT_TASK_ID, get_task
from supportenv.v1 import convert, env_pb2, grader_pb2
from supportenv.v1 import types_pb2 as pb


def play_over_grpc(env, task_id, seed, choose):
    """Play one episode through the env service; `choose` picks each action from the scenario."""
    scenario, state = new_episode(task_id, "test", seed)
    reply = env.Reset(env_pb2.ResetRequest(task_id=task_id, split=pb.SPLIT_TEST, seed=seed), timeout=5)
    token, actions, rewards, done = reply.state_token, [], [], False
    while not done:
        action = choose(scenario, state, task_id)
        step(scenario, state, action)
        result = env.Step(env_pb2.StepRequest(state_token=token, action=convert.action_to_pb(action)), timeout=5)
        token, done = result.state_token, result.terminated or result.truncated
        actions.append(action)
        rewards.append(result.reward)
    return actions, rewards


def trajectory(task_id, seed, actions):
    return pb.Trajectory(
        task_id=task_id, split=pb.SPLIT_TEST, seed=seed, actions=[convert.action_to_pb(a) for a in actions]
    )


@pytest.mark.parametrize(
    "task_id", ["issue_classification", "action_selection", "end_to_end_resolution", EXPERT_TASK_ID]
)
def test_grade_equals_local_replay(env, grader, task_id):
    for seed in range(5):
        actions, rewards = play_over_grpc(env, task_id, seed, expert.expert_action)
        remote = grader.Grade(grader_pb2.GradeRequest(trajectory=trajectory(task_id, seed, actions)), timeout=5)
        local = grade_trajectory(task_id, "test", seed, actions)
        assert remote.score == pytest.approx(local.score, abs=0) and remote.passed == local.passed
        assert [(c.name, c.score) for c in remote.components] == [(c.name, c.score) for c in local.components]
        assert list(remote.rewards) == pytest.approx(rewards) == list(local.rewards)
        assert remote.grader_version == local.grader_version
        assert 0.0 <= remote.score <= 1.0


def test_expert_trajectories_grade_as_the_library_does(env, grader):
    """Expert-task episodes with tool calls (refused, not found, verify_identity, the case's
    changes) played over the env service, then replayed and graded by the grader service."""
    for seed in expert_episodes.SEEDS:
        actions = expert_episodes.script(seed, "test")
        assert any(a.kind == "use_tool" for a in actions)
        rewards = []
        reply = env.Reset(env_pb2.ResetRequest(task_id=EXPERT_TASK_ID, split=pb.SPLIT_TEST, seed=seed), timeout=5)
        token = reply.state_token
        for action in actions:
            result = env.Step(env_pb2.StepRequest(state_token=token, action=convert.action_to_pb(action)), timeout=5)
            token = result.state_token
            rewards.append(result.reward)
        state = env.State(env_pb2.StateRequest(state_token=token), timeout=5).state
        assert [convert.action_from_pb(a) for a in state.actions] == actions
        request = grader_pb2.GradeRequest(
            trajectory=pb.Trajectory(task_id=EXPERT_TASK_ID, split=pb.SPLIT_TEST, seed=seed, actions=state.actions)
        )
        remote = grader.Grade(request, timeout=5)
        local = grade_trajectory(EXPERT_TASK_ID, "test", seed, actions)
        assert remote.score == local.score and remote.passed == local.passed and 0.0 <= remote.score <= 1.0
        assert [(c.name, c.score, c.weight) for c in remote.components] == [
            (c.name, c.score, c.weight) for c in local.components
        ]
        assert [c.name for c in remote.components] == [name for name, _ in get_task(EXPERT_TASK_ID).components]
        assert list(remote.failed_gates) == list(local.failed_gates)
        assert list(remote.rewards) == rewards == list(local.rewards)
        assert remote.task_id == EXPERT_TASK_ID and remote.pass_threshold == local.pass_threshold


def expect_status(code, call):
    with pytest.raises(grpc.RpcError) as info:
        call()
    assert info.value.code() == code, info.value.details()
    return info.value.details()


def test_bad_trajectories(grader):
    resolve = pb.Action(mark_resolved=pb.MarkResolved())
    cases = [
        (grpc.StatusCode.INVALID_ARGUMENT, grader_pb2.GradeRequest()),
        (grpc.StatusCode.NOT_FOUND, grader_pb2.GradeRequest(trajectory=pb.Trajectory(task_id="nope"))),
        (
            grpc.StatusCode.INVALID_ARGUMENT,
            grader_pb2.GradeRequest(trajectory=pb.Trajectory(task_id="issue_classification", actions=[resolve] * 5)),
        ),
        (  # an action after the end: as Step refuses it
            grpc.StatusCode.FAILED_PRECONDITION,
            grader_pb2.GradeRequest(trajectory=pb.Trajectory(task_id="action_selection", actions=[resolve, resolve])),
        ),
        (
            grpc.StatusCode.INVALID_ARGUMENT,
            grader_pb2.GradeRequest(trajectory=pb.Trajectory(task_id="action_selection", seed=-5)),
        ),
        (
            grpc.StatusCode.INVALID_ARGUMENT,
            grader_pb2.GradeRequest(trajectory=pb.Trajectory(task_id="action_selection", actions=[pb.Action()])),
        ),
    ]
    for code, request in cases:
        expect_status(code, lambda r=request: grader.Grade(r, timeout=5))


def test_a_refused_trajectory_names_its_action_as_step_batch_names_an_item(env, grader):
    """Counted from 0, as StepBatch's "item N"; and an action after the end gets Step's status."""
    ask = pb.Action(ask_for_more_info=pb.AskForMoreInfo(fields=["order_id"]))
    resolve, unset = pb.Action(mark_resolved=pb.MarkResolved()), pb.Action(classify_issue=pb.ClassifyIssue())
    trajectory = pb.Trajectory(task_id="action_selection", actions=[ask, unset])
    with pytest.raises(grpc.RpcError) as graded:
        grader.Grade(grader_pb2.GradeRequest(trajectory=trajectory), timeout=5)
    token = env.Reset(env_pb2.ResetRequest(task_id="action_selection"), timeout=5).state_token
    with pytest.raises(grpc.RpcError) as batched:
        env.StepBatch(
            env_pb2.StepBatchRequest(requests=[env_pb2.StepRequest(state_token=token, action=a) for a in (ask, unset)]),
            timeout=5,
        )
    assert graded.value.code() == batched.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert graded.value.details().startswith("actions[1]: ") and batched.value.details().startswith("item 1: ")
    assert graded.value.details().removeprefix("actions[1]: ") == batched.value.details().removeprefix("item 1: ")

    trajectory = pb.Trajectory(task_id="action_selection", actions=[resolve, resolve])
    with pytest.raises(grpc.RpcError) as graded:
        grader.Grade(grader_pb2.GradeRequest(trajectory=trajectory), timeout=5)
    ended = env.Step(env_pb2.StepRequest(state_token=token, action=resolve), timeout=5).state_token
    with pytest.raises(grpc.RpcError) as stepped:
        env.Step(env_pb2.StepRequest(state_token=ended, action=resolve), timeout=5)
    assert graded.value.code() == stepped.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert graded.value.details().startswith("actions[1] comes after the episode ended")


def test_grader_ignores_what_the_client_claims(grader):
    """A trajectory is only (task, split, seed, actions): the same actions on another
    seed are scored against that seed's ticket, not the one the client played."""
    actions = [convert.action_to_pb(a) for a in _expert_actions("end_to_end_resolution", 3)]
    own = grader.Grade(
        grader_pb2.GradeRequest(
            trajectory=pb.Trajectory(task_id="end_to_end_resolution", split=pb.SPLIT_TEST, seed=3, actions=actions)
        ),
        timeout=5,
    )
    scores = []
    for seed in range(4, 14):
        try:
            reply = grader.Grade(
                grader_pb2.GradeRequest(
                    trajectory=pb.Trajectory(
                        task_id="end_to_end_resolution", split=pb.SPLIT_TEST, seed=seed, actions=actions
                    )
                ),
                timeout=5,
            )
            scores.append(reply.score)
        except grpc.RpcError as exc:  # the replay may end early on another ticket
            assert exc.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert own.score >= 0.95 and min(scores, default=0.0) < 0.95


def _expert_actions(task_id, seed):
    scenario, state = new_episode(task_id, "test", seed)
    actions = []
    while not state.done:
        actions.append(expert.expert_action(scenario, state, task_id))
        step(scenario, state, actions[-1])
    return actions
