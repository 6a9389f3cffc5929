"""The Node.js client (clients/node/play.js) plays and grades every task over real gRPC,
and its trajectories grade the same in Python: the contract works across languages.

Skipped when node or npm is not on PATH. `npm ci` runs only when clients/node/node_modules
is missing or was installed from a different package-lock.json."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format

from baseline_agent.embedded import EmbeddedServices
from supportenv.graders import grade_trajectory
from supportenv.replay import replay
from supportenv.tasks import ALL_TASK_IDS, EXPERT_TASK_ID, get_task
from supportenv.v1 import convert, grader_pb2, grader_pb2_grpc
from supportenv.v1 import types_pb2 as pb
from tests.npm import npm_ci

ROOT = Path(__file__).resolve().parent.parent
CLIENT = ROOT / "clients" / "node"
NODE, NPM = shutil.which("node"), shutil.which("npm")
PLAY_TIMEOUT = 120

pytestmark = pytest.mark.skipif(NODE is None or NPM is None, reason="node and npm are needed for the Node.js client")


@pytest.fixture(scope="module")
def node_client() -> Path:
    """clients/node with its node_modules installed from the committed lock."""
    npm_ci(CLIENT)
    return CLIENT / "play.js"


@pytest.fixture(scope="module")
def running():
    with EmbeddedServices() as services:
        yield services


def _play(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([NODE, str(script), *args], cwd=CLIENT, capture_output=True, text=True, timeout=PLAY_TIMEOUT)


@pytest.fixture(scope="module")
def played(node_client, running) -> list[dict]:
    done = _play(node_client, "--env", running.env.address, "--grader", running.grader.address, "--seed", "7")
    assert done.returncode == 0, f"play.js exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def _actions(result: dict) -> list[pb.Action]:
    """Rebuild the wire Actions from play.js's {kind, params} (enums by name)."""
    return [json_format.ParseDict({a["kind"]: a["params"]}, pb.Action()) for a in result["actions"]]


def test_every_task_played_and_graded(played):
    assert sorted(r["task_id"] for r in played) == sorted(ALL_TASK_IDS)
    for r in played:
        assert 0.0 <= r["score"] <= 1.0, r
        assert isinstance(r["passed"], bool)
        assert r["steps"] >= 1
        assert len(r["rewards"]) == len(r["actions"]) == r["steps"]
        assert r["terminated"] or r["truncated"], r
        assert (r["split"], r["seed"]) == ("test", 7)


def test_node_trajectories_grade_the_same_in_python(played, running):
    with grpc.insecure_channel(running.grader.address) as channel:
        grader = grader_pb2_grpc.GraderServiceStub(channel)
        for r in played:
            wire = _actions(r)
            local = grade_trajectory(r["task_id"], r["split"], r["seed"], [convert.action_from_pb(a) for a in wire])
            assert local.score == r["score"], r["task_id"]
            assert local.passed == r["passed"]
            assert list(local.rewards) == r["rewards"]
            assert local.steps == r["steps"]
            trajectory = pb.Trajectory(task_id=r["task_id"], split=pb.SPLIT_TEST, seed=r["seed"], actions=wire)
            remote = grader.Grade(grader_pb2.GradeRequest(trajectory=trajectory), timeout=30)
            assert remote.score == r["score"], r["task_id"]
            assert list(remote.rewards) == r["rewards"]


def test_node_sends_tool_calls_and_reads_their_results(played):
    """On the expert task the rule looks the records up with UseTool; the results play.js decoded
    (data_json parsed in JavaScript) are the library's, and only that task gets tool calls."""
    for r in played:
        assert tuple(r["allowed_actions"]) == get_task(r["task_id"]).allowed_actions
        kinds = [a["kind"] for a in r["actions"]]
        assert ("use_tool" in kinds) == (r["task_id"] == EXPERT_TASK_ID), r["task_id"]
    (expert,) = [r for r in played if r["task_id"] == EXPERT_TASK_ID]
    assert {t["tool"] for t in expert["tool_results"]} == {"look_up_order", "look_up_customer"}
    actions = [convert.action_from_pb(a) for a in _actions(expert)]
    for result in expert["tool_results"]:
        _, state = replay(EXPERT_TASK_ID, expert["split"], expert["seed"], actions[: result["step"]])
        library = state.tool_result
        assert library is not None and result["status"] == library.status == "ok"
        assert (result["tool"], result["message"], result["data"]) == (library.tool, library.message, library.data)


def test_errors_exit_non_zero(node_client, running):
    with socket.socket() as sock:  # a loopback port with nothing listening once closed
        sock.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{sock.getsockname()[1]}"
    done = _play(node_client, "--env", running.env.address, "--grader", dead, "--deadline-ms", "3000")
    assert done.returncode != 0
    assert "Grade failed" in done.stderr, done.stderr
    done = _play(node_client, "--env", running.env.address, "--grader", running.grader.address, "--tasks", "nope")
    assert done.returncode != 0
    assert "unknown task" in done.stderr, done.stderr


def test_the_node_rule_reads_the_catalogs_issues_and_impact_cues():
    """play.js carries its own copy of the help desk's tables; they must be the catalog's."""
    from supportenv import content
    from supportenv.catalog import IMPACTS, ISSUE_TYPES, ticket_priority

    source = (CLIENT / "play.js").read_text()
    for issue in ISSUE_TYPES:
        assert f'{issue.issue_id}: ["{issue.category}", "{issue.article_id}", "{issue.department}",' in source, issue
    for impact, cues in content.IMPACT_CUES.items():
        assert f"{impact}: {json.dumps(list(cues))}" in source, impact
    for impact in IMPACTS:
        assert f"{impact}: {json.dumps(ticket_priority(impact))}" in source, impact
