"""Run as a separate process by test_determinism: starts its own services (with their
own random token key), plays fixed episodes over gRPC and prints the transcript as JSON."""

from __future__ import annotations

import json
import sys

import grpc

from baseline_agent.embedded import EmbeddedServices
from baseline_agent.policies import RandomPolicy, RulePolicy
from supportenv.v1 import codec, convert, env_pb2, env_pb2_grpc, grader_pb2, grader_pb2_grpc
from supportenv.v1 import types_pb2 as pb


def transcript(env, grader, policy, task_id: str, seed: int) -> dict:
    reply = env.Reset(env_pb2.ResetRequest(task_id=task_id, split=pb.SPLIT_TEST, seed=seed), timeout=5)
    policy.begin(task_id, "test", seed)
    token, obs = reply.state_token, reply.observation
    steps, actions, done = [reply.observation.SerializeToString(deterministic=True).hex()], [], False
    while not done:
        action = convert.action_to_pb(policy.act(codec.observation_from_pb(obs)))
        result = env.Step(env_pb2.StepRequest(state_token=token, action=action), timeout=5)
        token, obs, done = result.state_token, result.observation, result.terminated or result.truncated
        actions.append(action)
        result.ClearField("state_token")  # signed with this process's own key
        steps.append(result.SerializeToString(deterministic=True).hex())
    trajectory = pb.Trajectory(task_id=task_id, split=pb.SPLIT_TEST, seed=seed, actions=actions)
    grade = grader.Grade(grader_pb2.GradeRequest(trajectory=trajectory), timeout=5)
    return {"task": task_id, "seed": seed, "steps": steps, "grade": grade.SerializeToString(deterministic=True).hex()}


def main() -> None:
    out = []
    with EmbeddedServices() as services:
        ec, gc = grpc.insecure_channel(services.env.address), grpc.insecure_channel(services.grader.address)
        env, grader = env_pb2_grpc.EnvServiceStub(ec), grader_pb2_grpc.GraderServiceStub(gc)
        for policy in (RulePolicy(), RandomPolicy()):
            for task_id in ("issue_classification", "action_selection", "end_to_end_resolution"):
                for seed in (0, 1, 2, 123456789):
                    out.append(transcript(env, grader, policy, task_id, seed))
        ec.close()
        gc.close()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
