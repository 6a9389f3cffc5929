"""The OpenEnv adapter (openenv_adapter/) against real processes on loopback ports: the
adapter, played with openenv's own clients over WebSockets, must give the same episodes as
env_service over gRPC; `openenv validate` must pass; and the gRPC image must stay free of
openenv and its web stack."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import grpc
import pytest
import yaml
from openenv.core.generic_client import GenericEnvClient

from baseline_agent.embedded import start_service
from openenv_adapter.client import SupportEnvClient
from openenv_adapter.health_probe import wait_healthy
from openenv_adapter.models import SupportAction, SupportObservation
from supportenv import actions, episode, expert, replay
from supportenv.catalog import ARTICLES, TOOL_KIND
from supportenv.v1 import codec, convert, env_pb2, env_pb2_grpc

ROOT = Path(__file__).resolve().parent.parent
# openenv imports gradio when its server module loads: tens of seconds on a busy 2-core machine.
START_S = 180
CALL_S = 30
REWARD_RANGE = yaml.safe_load((ROOT / "openenv.yaml").read_text())["validation"]["reward"]["range"]
FORBIDDEN_IN_GRPC_IMAGE = {"openenv", "gradio", "fastapi"}


# --- processes ---------------------------------------------------------------------------


@dataclasses.dataclass
class Adapter:
    process: subprocess.Popen[str]
    port: int
    output: list[str]
    pump: threading.Thread


def start_adapter(*args: str, env: dict[str, str] | None = None) -> Adapter:
    """Start `python -m openenv_adapter ARGS` and wait for its `listening on` line and /health."""
    proc_env = {**os.environ, **(env or {}), "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "openenv_adapter", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=proc_env,
        cwd=ROOT,
    )
    output: list[str] = []
    announced = threading.Event()

    def pump() -> None:
        # Drain for the process's whole life so it never blocks on a full pipe.
        for line in process.stdout:  # type: ignore[union-attr]
            output.append(line.rstrip())
            if "listening on" in line:
                announced.set()
        announced.set()

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    try:
        match = re.search(r"listening on \S+:(\d+)", "\n".join(output)) if announced.wait(START_S) else None
        assert match, "openenv_adapter did not announce its port:\n" + "\n".join(output[-20:])
        port = int(match.group(1))
        wait_healthy(f"http://127.0.0.1:{port}/health", timeout=START_S)
    except BaseException:
        stop(process)
        raise
    return Adapter(process, port, output, thread)


def stop(process: subprocess.Popen[str]) -> int:
    """SIGTERM, then SIGKILL if it does not exit in time."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
    return process.returncode


@pytest.fixture(scope="module")
def adapter_url():
    adapter = start_adapter("--host", "127.0.0.1", "--port", "0")
    try:
        yield f"http://127.0.0.1:{adapter.port}"
    finally:
        stop(adapter.process)


@pytest.fixture(scope="module")
def grpc_env():
    service = start_service("env_service", {"SUPPORTENV_TOKEN_KEY": secrets.token_hex(32)})
    try:
        with grpc.insecure_channel(service.address) as channel:
            yield env_pb2_grpc.EnvServiceStub(channel)
    finally:
        service.stop()


def client(url: str) -> SupportEnvClient:
    return SupportEnvClient(base_url=url, connect_timeout_s=CALL_S, message_timeout_s=CALL_S)


def generic_client(url: str) -> GenericEnvClient:
    return GenericEnvClient(base_url=url, connect_timeout_s=CALL_S, message_timeout_s=CALL_S)


def http(url: str, body: dict | None = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=CALL_S) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


# --- the same episodes over OpenEnv and over gRPC ----------------------------------------


def scripted(task: str, split: str, seed: int) -> list[tuple[actions.Action, episode.StepResult]]:
    """The expert's episode with two mistakes after its first step (a wrong article, then
    unparseable model output), played in-process; the servers must agree with it."""
    scenario, state = replay.new_episode(task, split, seed)
    wrong_article = next(a.article_id for a in ARTICLES if a.article_id != scenario.expected.article_id)
    mistakes = [
        actions.suggest_article(wrong_article),
        actions.invalid('{"kind": "classify_issue", "category": ', "output is not valid JSON"),
    ]
    played = []
    while not state.done:
        action = mistakes.pop(0) if played and mistakes else expert.expert_action(scenario, state, task)
        played.append((action, episode.step(scenario, state, action)))
    return played


EPISODES = [
    (task, split, seed)
    for task in ("issue_classification", "action_selection", "end_to_end_resolution")
    for split, seed in (("train", 0), ("train", 1), ("test", 2))
]


@pytest.mark.parametrize(("task", "split", "seed"), EPISODES)
def test_episode_matches_grpc(adapter_url, grpc_env, task, split, seed):
    episode_id = f"openenv-{task}-{split}-{seed}-{secrets.token_hex(4)}"
    plan = scripted(task, split, seed)
    reset = grpc_env.Reset(
        env_pb2.ResetRequest(task_id=task, split=convert.SPLIT_TO_PB[split], seed=seed, episode_id=episode_id),
        timeout=CALL_S,
    )
    token = reset.state_token
    with client(adapter_url).sync() as env:
        result = env.reset(task_id=task, split=split, seed=seed, episode_id=episode_id)
        assert result.reward is None and result.done is False
        assert result.observation.to_library() == codec.observation_from_pb(reset.observation)
        assert result.observation.last_reward == 0.0 and result.observation.last_reward_breakdown == []
        assert env.state().episode_id == episode_id == reset.episode_id

        for count, (action, local) in enumerate(plan, start=1):
            result = env.step(SupportAction.from_library(action))
            remote = grpc_env.Step(
                env_pb2.StepRequest(state_token=token, action=convert.action_to_pb(action)), timeout=CALL_S
            )
            token = remote.state_token
            where = f"step {count}: {action.label()}"
            assert result.reward == remote.reward == local.reward, where
            assert result.done == (remote.terminated or remote.truncated) == (local.terminated or local.truncated)
            assert result.observation.customer_message == remote.observation.customer_message, where
            assert result.observation.to_library() == codec.observation_from_pb(remote.observation), where
            assert result.observation.to_library() == local.observation, where
            assert result.observation.reward_breakdown == {c.name: c.value for c in remote.reward_breakdown}, where
            # The step's reward shows in its observation, as the library's and the gRPC service's do.
            assert result.observation.last_reward == result.reward, where
            assert [(p.name, p.value) for p in result.observation.last_reward_breakdown] == list(local.breakdown), where
            assert REWARD_RANGE[0] <= result.reward <= REWARD_RANGE[1], "openenv.yaml declares the served range"
            assert env.state().step_count == count, where
        state = env.state()

    grpc_state = grpc_env.State(env_pb2.StateRequest(state_token=token), timeout=CALL_S).state
    assert result.done and state.terminated, "the expert closes every ticket"
    assert state.episode_id == episode_id
    assert state.step_count == len(plan) == grpc_state.step
    assert state.actions == [a.to_dict() for a, _ in plan]
    assert state.cumulative_reward == grpc_state.cumulative_reward == round(sum(r.reward for _, r in plan), 6)


@pytest.mark.filterwarnings("ignore:connect\\(\\) must be used as a context manager:DeprecationWarning")
def test_openenv_runtime_checks_pass_against_the_server(adapter_url, tmp_path):
    """The runtime checks `openenv validate` runs once it has built and started the image on a
    Docker host (rewards in the declared range, observations valid against /schema, episode_id
    and step_count), run by openenv's own collector and graders against this server (there is
    no Docker engine here). These are openenv 0.10 internals, pinned in requirements-openenv.txt."""
    from openenv.validation.graders import Subject
    from openenv.validation.graders.runtime import ObservationSchemaGrader, RewardWellFormedGrader, StateContractGrader
    from openenv.validation.parsers.openenv_yaml import OpenEnvYamlParser
    from openenv.validation.runtime.collector import collect_runtime_evidence
    from openenv.validation.runtime.contracts import RuntimePlan

    plan = RuntimePlan.model_validate_json(
        json.dumps(
            {
                "plan_schema_version": "1",
                "reset": {"episode_id": "runtime-probe", "seed": 11, "options": {"task_id": "action_selection"}},
                "actions": [action.to_dict() for action, _ in scripted("action_selection", "train", 11)],
            }
        )
    )
    evidence = collect_runtime_evidence(adapter_url, plan, episode_timeout_s=60)
    assert evidence.failure_reason is None, evidence.failure_reason
    subject = Subject(
        root=ROOT,
        manifest=OpenEnvYamlParser().parse(ROOT),
        image_ref=None,
        running=None,
        outputs_dir=tmp_path,
        runtime_evidence=evidence,
    )
    for grader in (RewardWellFormedGrader(), ObservationSchemaGrader(), StateContractGrader()):
        result = grader.run(subject)
        assert result.status.value == "pass", (grader.check_id, result.evidence)


def test_reset_defaults_and_generated_episode_id(adapter_url):
    with client(adapter_url).sync() as env:
        result = env.reset()
        state = env.state()
    scenario, expected = replay.new_episode("end_to_end_resolution", "train", 0)
    assert result.observation.to_library() == episode.observe(scenario, expected)
    assert (state.task_id, state.split, state.seed, state.step_count) == ("end_to_end_resolution", "train", 0, 0)
    assert state.episode_id == expected.episode_id


NOT_ACTIONS = ({"kind": "dance"}, {"kind": "mark_resolved", "bogus": 1}, {"kind": "ask_for_more_info", "fields": 3})


def test_malformed_actions_do_not_break_the_session(adapter_url):
    with generic_client(adapter_url).sync() as env:
        env.reset(task_id="issue_classification", seed=5, episode_id="malformed")
        # Not an action at all: openenv's own validation rejects the message; nothing is played.
        for bad in NOT_ACTIONS:
            with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
                env.step(bad)
        assert env.state()["step_count"] == 0
        # Well-formed but impossible: a penalised step, the reason in the observation, as for
        # any unparseable agent output.
        result = env.step({"kind": "classify_issue", "category": "nonsense"})
        assert result.reward == pytest.approx(-0.1) and not result.done
        assert result.observation["reward_breakdown"] == {"invalid_action": -0.1}
        assert "category" in result.observation["last_action_feedback"]
        assert env.state()["actions"][0]["kind"] == actions.INVALID_KIND
        result = env.step({"kind": "mark_resolved"})
        assert result.done and env.state()["step_count"] == 2
        with pytest.raises(RuntimeError, match="already ended"):
            env.step({"kind": "mark_resolved"})
        with pytest.raises(RuntimeError, match="unknown task"):
            env.reset(task_id="no_such_task")
        assert env.reset(task_id="issue_classification", seed=5).done is False


def test_sessions_are_isolated(adapter_url):
    with client(adapter_url).sync() as one, client(adapter_url).sync() as two:
        one.reset(task_id="issue_classification", seed=1, episode_id="one")
        two.reset(task_id="action_selection", seed=1, episode_id="two")
        one.step(SupportAction(kind="mark_resolved"))
        assert (one.state().episode_id, one.state().step_count) == ("one", 1)
        assert (two.state().episode_id, two.state().step_count) == ("two", 0)


def test_http_routes(adapter_url):
    assert http(adapter_url + "/health") == (200, {"status": "healthy"})
    status, metadata = http(adapter_url + "/metadata")
    assert status == 200 and metadata["name"] == "supportenv"
    status, schema = http(adapter_url + "/schema")
    assert status == 200
    assert set(schema["action"]["properties"]["kind"]["enum"]) == {
        *actions.ACTION_KINDS,
        TOOL_KIND,
        actions.INVALID_KIND,
    }
    assert {"tool", "arguments"} <= set(schema["action"]["properties"])
    library_fields = {f.name for f in dataclasses.fields(episode.Observation)}
    assert library_fields | {"reward", "done", "reward_breakdown"} <= set(schema["observation"]["properties"])
    assert set(SupportObservation.model_fields) >= library_fields

    status, body = http(adapter_url + "/reset", {"task_id": "issue_classification", "seed": 4, "split": "validation"})
    scenario, _ = replay.new_episode("issue_classification", "validation", 4)
    assert status == 200 and body["observation"]["customer_message"] == scenario.opening_message
    assert http(adapter_url + "/reset", {"task_id": "nope"})[0] == 404
    assert http(adapter_url + "/reset", {"task": "issue_classification"})[0] == 400  # misspelt option
    assert http(adapter_url + "/reset", {"seed": -1})[0] == 422
    # Plain HTTP gives every request a fresh environment: episodes need a WebSocket session.
    status, body = http(adapter_url + "/step", {"action": {"kind": "mark_resolved"}})
    assert status == 409 and "WebSocket" in body["detail"]
    assert http(adapter_url + "/step", {"action": {"kind": "dance"}})[0] == 422


def test_port_from_the_environment_and_graceful_stop():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    adapter = start_adapter(env={"SUPPORTENV_OPENENV_PORT": str(port), "SUPPORTENV_HOST": "127.0.0.1"})
    try:
        assert adapter.port == port
        adapter.process.send_signal(signal.SIGTERM)
        # uvicorn shuts down cleanly, then re-raises SIGTERM: the exit status is SIGTERM's.
        assert adapter.process.wait(timeout=30) in (0, -signal.SIGTERM)
        adapter.pump.join(timeout=10)
        assert "Application shutdown complete." in "\n".join(adapter.output), adapter.output[-20:]
    finally:
        stop(adapter.process)


# --- openenv validate --------------------------------------------------------------------


def openenv_cli() -> list[str]:
    script = Path(sys.executable).with_name("openenv")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "openenv.cli"]


def test_openenv_validate_passes_on_a_clean_checkout(tmp_path):
    """`openenv validate` at the root of the repository's files. It hashes the whole tree and
    fails on any symlink, so it runs on the files git tracks (plus new, not ignored ones) rather
    than on a working tree that may hold ignored node_modules/.bin links."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode()
    checkout = tmp_path / "checkout"
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file() or source.is_symlink():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, checkout / name, follow_symlinks=False)
    done = subprocess.run(
        [*openenv_cli(), "validate", "--json"], cwd=checkout, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    results = {r["check_id"]: r["status"] for r in report["results"]}
    assert results["static.manifest"] == "pass", report
    assert report["verdict"] in ("pass", "warn")


def test_openenv_validate_url_probe_passes(adapter_url):
    done = subprocess.run(
        [*openenv_cli(), "validate", "--url", adapter_url], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


# --- the gRPC image stays free of openenv ------------------------------------------------


def requirement_names(path: Path) -> set[str]:
    """Project names in a requirements file, following -r includes."""
    names: set[str] = set()
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith(("-r ", "--requirement ")):
            names |= requirement_names(path.parent / line.split(None, 1)[1])
        elif line and not line.startswith("-"):
            names.add(re.split(r"[\s\[<>=!~;@]", line, maxsplit=1)[0].lower().replace("_", "-"))
    return names


def test_grpc_image_declares_no_openenv_dependency():
    dockerfile = (ROOT / "Dockerfile").read_text()
    installs = re.findall(r"pip install[^\n]*", dockerfile)
    # the runtime's requirements, and the project's own wheel without dependencies (the compiled build)
    requirements = [line for line in installs if "--no-deps /tmp/wheels/" not in line]
    assert requirements and all(re.findall(r"-r (\S+)", line) == ["requirements.txt"] for line in requirements)
    assert not FORBIDDEN_IN_GRPC_IMAGE & requirement_names(ROOT / "requirements.txt")
    assert "openenv" in requirement_names(ROOT / "requirements-openenv.txt")
    assert "openenv_adapter" not in dockerfile, "the gRPC image does not carry the adapter"


PIP_DRY_RUN = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet", "--no-input"]
_NETWORK_TROUBLE = ("NewConnectionError", "Max retries exceeded", "Temporary failure in name resolution", "timed out")


def test_grpc_image_resolves_without_openenv(tmp_path):
    """pip resolves requirements.txt the way the image's `pip install` does (the same Python
    3.11, nothing installed) and lists every distribution it would install."""
    report = tmp_path / "report.json"
    done = subprocess.run(
        [*PIP_DRY_RUN, "--report", str(report), "-r", str(ROOT / "requirements.txt")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0 and any(sign in done.stderr for sign in _NETWORK_TROUBLE):
        pytest.skip("the package index is unreachable: " + done.stderr.strip().splitlines()[-1])
    assert done.returncode == 0, done.stderr[-3000:]
    names = {item["metadata"]["name"].lower().replace("_", "-") for item in json.loads(report.read_text())["install"]}
    assert "grpcio" in names, names
    assert not FORBIDDEN_IN_GRPC_IMAGE & names, names


# --- the expert task: use_tool, tool_result and allowed_actions ---------------------------

EXPERT = "expert_resolution"


def expert_task_plan(seed: int, split: str = "validation") -> list[actions.Action]:
    """Gather the facts, classify, look up, make the case's changes, answer, close."""
    from supportenv import casework

    scenario, _ = replay.new_episode(EXPERT, split, seed)
    exp = scenario.expected
    plan = [
        actions.ask(*dict.fromkeys((*exp.facts, "account_email", "order_id"))),
        actions.classify(exp.category, exp.priority, exp.issue_type),
        actions.use_tool("check_service_status"),
        *(actions.Action(TOOL_KIND, tool=c.name, arguments=c.arguments) for c in casework.remedy_calls(scenario)),
        actions.respond("Thank you for your patience: I have sorted this for you."),
        actions.resolve("done"),
    ]
    return plan


def test_expert_task_in_process():
    from openenv_adapter.environment import SupportEnvironment

    seed = 3
    env = SupportEnvironment()
    first = env.reset(task_id=EXPERT, split="validation", seed=seed)
    assert first.allowed_actions[-1] == TOOL_KIND and first.tool_result is None
    scenario, state = replay.new_episode(EXPERT, "validation", seed)
    assert first.to_library() == episode.observe(scenario, state)
    for action in expert_task_plan(seed):
        obs = env.step(SupportAction.from_library(action))
        local = episode.step(scenario, state, action)
        assert obs.to_library() == local.observation, action.label()
        assert obs.reward == local.reward and obs.reward_breakdown == dict(local.breakdown)
        assert (obs.tool_result is not None) == (action.kind == TOOL_KIND)
    assert obs.done and obs.terminated
    assert env.state.actions == [a.to_dict() for a in expert_task_plan(seed)]
    # Numbers are accepted for argument values, read as their text.
    env.reset(task_id=EXPERT, seed=1)
    action = SupportAction(kind=TOOL_KIND, tool="issue_refund", arguments={"order_id": "ORD-1", "amount": 12.5})
    assert action.to_library().arguments == (("order_id", "ORD-1"), ("amount", "12.5"))
    refused = env.step(action)  # not verified yet
    assert refused.tool_result is not None and refused.tool_result.status == "refused"
    # A bad tool call is a penalised step; so is use_tool on a task that does not take it.
    bad = env.step(SupportAction(kind=TOOL_KIND, tool="no_such_tool"))
    assert bad.reward_breakdown == {"invalid_action": -0.1} and "unknown tool" in bad.last_action_feedback
    env.reset(task_id="end_to_end_resolution", seed=1)
    outside = env.step(SupportAction(kind=TOOL_KIND, tool="check_service_status"))
    assert outside.reward_breakdown == {"invalid_action": -0.1} and outside.tool_result is None
    assert "does not take use_tool" in outside.last_action_feedback


def test_expert_task_over_the_adapters_websocket_and_http(adapter_url):
    seed = 2
    scenario, state = replay.new_episode(EXPERT, "validation", seed)
    with client(adapter_url).sync() as env:
        result = env.reset(task_id=EXPERT, split="validation", seed=seed)
        assert result.observation.to_library() == episode.observe(scenario, state)
        for action in expert_task_plan(seed):
            result = env.step(SupportAction.from_library(action))
            local = episode.step(scenario, state, action)
            assert result.observation.to_library() == local.observation, action.label()
            assert result.reward == local.reward
            if action.kind == TOOL_KIND:
                assert result.observation.tool_result.tool == action.tool
        assert result.done
        assert env.state().actions == [a.to_dict() for a in expert_task_plan(seed)]
    # A raw JSON tool call, as any OpenEnv client sends it.
    with generic_client(adapter_url).sync() as env:
        env.reset(task_id=EXPERT, split="validation", seed=seed)
        result = env.step({"kind": TOOL_KIND, "tool": "check_service_status", "arguments": {}})
        assert result.observation["tool_result"]["tool"] == "check_service_status"
        assert result.observation["tool_result"]["status"] == "ok"
        assert TOOL_KIND in result.observation["allowed_actions"]
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            env.step({"kind": TOOL_KIND, "tool": "look_up_order", "arguments": ["ORD-1"]})
    status, body = http(adapter_url + "/reset", {"task_id": EXPERT, "seed": seed, "split": "validation"})
    assert status == 200 and body["observation"]["allowed_actions"][-1] == TOOL_KIND
    assert body["observation"]["tool_result"] is None
    status, schema = http(adapter_url + "/schema")
    assert {"tool_result", "allowed_actions"} <= set(schema["observation"]["properties"])
