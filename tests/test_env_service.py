"""The environment service over real gRPC: statelessness, tokens and bad input."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys

import expert_episodes
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from baseline_agent.embedded import ROOT, start_service
from supportenv.episode import observe, step
from supportenv.replay import replay
from supportenv.tasks import ALL_TASKS
from supportenv.v1 import codec, convert, env_pb2, env_pb2_grpc
from supportenv.v1 import types_pb2 as pb
from supportenv.v1.limits import MAX_MESSAGE_BYTES

TASK = "end_to_end_resolution"


def reset(env, task_id=TASK, seed=0, split=pb.SPLIT_TRAIN, **kw):
    return env.Reset(env_pb2.ResetRequest(task_id=task_id, split=split, seed=seed, **kw), timeout=5)


def classify_billing():
    return pb.Action(classify_issue=pb.ClassifyIssue(category=pb.ISSUE_CATEGORY_BILLING, priority=pb.PRIORITY_HIGH))


def resolve_action():
    return pb.Action(mark_resolved=pb.MarkResolved(summary="done"))


def expect_status(code, call):
    with pytest.raises(grpc.RpcError) as info:
        call()
    assert info.value.code() == code, info.value.details()
    assert info.value.details(), "every error carries a message"
    return info.value.details()


def assert_healthy(channel):
    reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_list_tasks(env):
    tasks = env.ListTasks(env_pb2.ListTasksRequest(), timeout=5).tasks
    assert [t.task_id for t in tasks] == [
        "issue_classification",
        "action_selection",
        "end_to_end_resolution",
        "expert_resolution",
    ]
    assert [t.weight for t in tasks] == [0.2, 0.3, 0.5, 0.0]
    assert all(t.grader_components and t.max_steps > 0 and 0 < t.pass_threshold <= 1 for t in tasks)
    # The action kinds each task takes, by the Action oneof's names: use_tool only on the expert task.
    oneof = [f.name for f in pb.Action.DESCRIPTOR.oneofs_by_name["kind"].fields if f.name != "invalid_action"]
    for task in tasks:
        assert tuple(task.allowed_actions) == next(t.allowed_actions for t in ALL_TASKS if t.task_id == task.task_id)
        assert set(task.allowed_actions) <= set(oneof)
        assert ("use_tool" in task.allowed_actions) == (task.task_id == "expert_resolution")
    assert set(tasks[-1].allowed_actions) == set(oneof)
    assert tasks[-1].difficulty == pb.DIFFICULTY_EXPERT and tasks[0].difficulty == pb.DIFFICULTY_EASY


def test_an_expert_episode_token_continues_it_exactly(env):
    """A token taken mid-way through an expert episode (after verify_identity and a refund)
    carries the desk (verified, the changes, the refused change, the last tool result): State
    shows it as the library does, and stepping on from the token, twice, branches identically."""
    seed = expert_episodes.REFUND_SEED
    actions = expert_episodes.script(seed)
    cut = next(i for i, a in enumerate(actions) if a.tool == "issue_refund" and i > 0) + 1
    token = reset(env, expert_episodes.TASK, seed, split=pb.SPLIT_VALIDATION).state_token
    for action in actions[:cut]:
        token = env.Step(
            env_pb2.StepRequest(state_token=token, action=convert.action_to_pb(action)), timeout=5
        ).state_token
    scenario, state = replay(expert_episodes.TASK, expert_episodes.SPLIT, seed, actions[:cut])
    assert state.verified and state.changes == [("issue_refund", *state.changes[0][1:])] and state.refused_changes == 1
    assert state.tool_result is not None and state.tool_result.status == "ok"
    public = env.State(env_pb2.StateRequest(state_token=token), timeout=5).state
    assert [convert.action_from_pb(a) for a in public.actions] == actions[:cut]
    # The desk's work shows in State as in the library: verified, and each change made.
    assert public.identity_verified and [(c.tool, c.target, c.value) for c in public.changes] == state.changes
    assert codec.observation_from_pb(public.observation) == observe(scenario, state)
    refund = codec.observation_from_pb(public.observation).tool_result
    assert refund.tool == "issue_refund" and refund.data["order"]["refunds"][-1]["refund_id"].startswith("REF-D")
    for _ in range(2):  # the same token, stepped twice: the same continuation
        branch, (scenario, state) = token, replay(expert_episodes.TASK, expert_episodes.SPLIT, seed, actions[:cut])
        for action in actions[cut:]:
            expected = step(scenario, state, action)
            reply = env.Step(env_pb2.StepRequest(state_token=branch, action=convert.action_to_pb(action)), timeout=5)
            assert codec.observation_from_pb(reply.observation) == expected.observation
            assert (reply.reward, reply.terminated, reply.truncated) == (
                expected.reward,
                expected.terminated,
                expected.truncated,
            )
            branch = reply.state_token
        assert reply.terminated and reply.cumulative_reward == state.cumulative_reward


def test_reset_step_state(env):
    first = reset(env, seed=4, episode_id="mine")
    assert first.episode_id == "mine" and first.state_token and first.task.task_id == TASK
    assert first.observation.customer_message and first.observation.steps_left == 12
    step = env.Step(env_pb2.StepRequest(state_token=first.state_token, action=classify_billing()), timeout=5)
    assert step.observation.step == 1 and not step.terminated and not step.truncated
    assert step.reward == pytest.approx(sum(c.value for c in step.reward_breakdown))
    state = env.State(env_pb2.StateRequest(state_token=step.state_token), timeout=5).state
    assert state.step == 1 and state.episode_id == "mine" and state.task_id == TASK
    assert list(state.actions) == [classify_billing()]
    assert list(state.rewards) == [pytest.approx(step.reward)]


@pytest.mark.parametrize("task_id", ["action_selection", TASK])
def test_each_observation_carries_the_last_step_s_reward(env, task_id):
    """A Step's observation carries that step's reward and parts, and so does State's; the
    first observation none (action_selection's opening steps are a previous agent's)."""
    first = reset(env, task_id=task_id, seed=5)
    assert first.observation.last_reward == 0.0 and not first.observation.last_reward_breakdown
    token, rewards = first.state_token, []
    escalate = pb.Action(escalate_to_human=pb.EscalateToHuman(reason="just in case"))
    for action in (classify_billing(), escalate, resolve_action()):
        step = env.Step(env_pb2.StepRequest(state_token=token, action=action), timeout=5)
        assert step.observation.last_reward == step.reward
        assert list(step.observation.last_reward_breakdown) == list(step.reward_breakdown)
        token = step.state_token
        rewards.append(step.reward)
    state = env.State(env_pb2.StateRequest(state_token=token), timeout=5).state
    assert state.observation.last_reward == step.reward and state.observation == step.observation
    assert any(rewards), "some step was rewarded or penalised"


def test_step_is_a_pure_function_of_the_token(env):
    first = reset(env, seed=8)
    request = env_pb2.StepRequest(state_token=first.state_token, action=classify_billing())
    assert env.Step(request, timeout=5) == env.Step(request, timeout=5)


def test_unknown_task_is_not_found(env):
    message = expect_status(grpc.StatusCode.NOT_FOUND, lambda: reset(env, task_id="no_such_task"))
    assert "no_such_task" in message


@pytest.mark.parametrize(
    "request_kwargs",
    [dict(task_id=""), dict(seed=-1), dict(split=99)],
    ids=["empty-task", "negative-seed", "unknown-split"],
)
def test_bad_reset_is_invalid_argument(env, request_kwargs):
    kwargs = dict(task_id=TASK, seed=0, split=pb.SPLIT_TRAIN) | request_kwargs
    expect_status(grpc.StatusCode.INVALID_ARGUMENT, lambda: env.Reset(env_pb2.ResetRequest(**kwargs), timeout=5))


def test_tampered_and_truncated_tokens_are_rejected(env, env_channel):
    token = reset(env, seed=2).state_token
    flipped = bytearray(token)
    flipped[len(flipped) // 2] ^= 0x01
    bad_tokens = {
        "flipped-bit": bytes(flipped),
        "truncated": token[: len(token) // 2],
        "empty": b"",
        "garbage": b"\x01" * 40,
    }
    other = reset(env, seed=3)  # another client's episode, which must not be affected
    for bad in bad_tokens.values():
        for call in (
            lambda b=bad: env.Step(env_pb2.StepRequest(state_token=b, action=classify_billing()), timeout=5),
            lambda b=bad: env.State(env_pb2.StateRequest(state_token=b), timeout=5),
        ):
            expect_status(grpc.StatusCode.INVALID_ARGUMENT, call)
        assert_healthy(env_channel)
    still = env.Step(env_pb2.StepRequest(state_token=other.state_token, action=classify_billing()), timeout=5)
    assert still.observation.step == 1


def test_bad_actions_are_invalid_argument(env):
    token = reset(env, seed=1).state_token
    for action, hint in (
        (pb.Action(), "no kind"),
        (pb.Action(classify_issue=pb.ClassifyIssue(category=42)), "unknown value 42"),
        (pb.Action(ask_for_more_info=pb.AskForMoreInfo(fields=["shoe_size"])), "unknown fields"),
        (pb.Action(respond_with_solution=pb.RespondWithSolution(message="")), "needs a message"),
        (pb.Action(respond_with_solution=pb.RespondWithSolution(message="x" * 5000)), "limit"),
    ):
        request = env_pb2.StepRequest(state_token=token, action=action)
        assert hint in expect_status(grpc.StatusCode.INVALID_ARGUMENT, lambda r=request: env.Step(r, timeout=5))
    expect_status(grpc.StatusCode.INVALID_ARGUMENT, lambda: env.Step(env_pb2.StepRequest(state_token=token), timeout=5))


def test_oversized_request_is_resource_exhausted(env):
    huge = env_pb2.StepRequest(state_token=b"\x01" * (MAX_MESSAGE_BYTES + 1), action=resolve_action())
    expect_status(grpc.StatusCode.RESOURCE_EXHAUSTED, lambda: env.Step(huge, timeout=5))


def test_step_after_end_is_failed_precondition(env):
    token = reset(env, seed=6).state_token
    done = env.Step(env_pb2.StepRequest(state_token=token, action=resolve_action()), timeout=5)
    assert done.terminated
    message = expect_status(
        grpc.StatusCode.FAILED_PRECONDITION,
        lambda: env.Step(env_pb2.StepRequest(state_token=done.state_token, action=resolve_action()), timeout=5),
    )
    assert "already ended" in message


def test_any_replica_with_the_key_continues_an_episode_and_others_refuse():
    key = secrets.token_hex(32)
    replicas = [start_service("env_service", {"SUPPORTENV_TOKEN_KEY": k}) for k in (key, key, secrets.token_hex(32))]
    try:
        channels = [grpc.insecure_channel(r.address) for r in replicas]
        a, b, foreign = (env_pb2_grpc.EnvServiceStub(c) for c in channels)
        token = reset(a, seed=9).state_token
        on_b = b.Step(env_pb2.StepRequest(state_token=token, action=classify_billing()), timeout=5)
        on_a = a.Step(env_pb2.StepRequest(state_token=token, action=classify_billing()), timeout=5)
        assert on_a == on_b
        message = expect_status(
            grpc.StatusCode.INVALID_ARGUMENT,
            lambda: foreign.Step(env_pb2.StepRequest(state_token=token, action=classify_billing()), timeout=5),
        )
        assert "another key" in message
        for channel in channels:
            channel.close()
    finally:
        codes = [r.stop() for r in replicas]
    assert codes == [0, 0, 0], "SIGTERM shuts every replica down cleanly"


def test_reflection_lists_the_services(env_channel):
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    stub = reflection_pb2_grpc.ServerReflectionStub(env_channel)
    replies = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5)
    names = {s.name for reply in replies for s in reply.list_services_response.service}
    assert "supportenv.v1.EnvService" in names and "grpc.health.v1.Health" in names


def test_the_service_runs_on_asyncio_s_own_loop_when_asked():
    """uvloop is the default event loop; SUPPORTENV_EVENT_LOOP=asyncio must serve the same."""
    service = start_service("env_service", {"SUPPORTENV_EVENT_LOOP": "asyncio", "SUPPORTENV_WORKERS": "1"})
    try:
        with grpc.insecure_channel(service.address) as channel:
            env = env_pb2_grpc.EnvServiceStub(channel)
            token = reset(env).state_token
            reply = env.Step(env_pb2.StepRequest(state_token=token, action=classify_billing()), timeout=5)
            assert reply.observation.step == 1 and reply.state_token
    finally:
        service.stop()


def test_a_bad_event_loop_setting_stops_the_service_at_once():
    done = subprocess.run(
        [sys.executable, "-m", "env_service", "--host", "127.0.0.1", "--port", "0"],
        env={**os.environ, "SUPPORTENV_EVENT_LOOP": "twisted", "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "listening" not in done.stdout
    assert "SUPPORTENV_EVENT_LOOP='twisted' is not an event loop: use uvloop or asyncio" in done.stderr
    assert "Traceback" not in done.stderr
