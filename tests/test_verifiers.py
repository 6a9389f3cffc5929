"""The supportenv-verifiers environment under verifiers' own evaluate(), on every task.

A scripted OpenAI-compatible model on loopback (tests/scripted_model.py) plays the oracle's
actions as tool calls, per episode, so verifiers' concurrent rollouts each get their own
conversation. Seed 1 opens with a bad tool call (a penalised invalid step); seed 2 opens with a
plain JSON reply instead of a tool call, then makes two tool calls per reply, the last reply
carrying one more call after the episode has ended. Every example runs twice at once: rollouts of
one example must not share an episode. Each rollout's reward must be the library's grade of the
same actions replayed through SupportEnv, in process and over the gRPC services (graded by the
grader service, or by the library's replay); in a sealed world, the grader service's grade of the
service's own ticket.
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
from typing import Any

import pytest

from baseline_agent.embedded import EmbeddedServices
from baseline_agent.policies import make_policy
from supportenv.actions import Action
from supportenv.env import SupportEnv
from supportenv.graders import Grade
from supportenv.llm import action_tools, parse_action, parse_tool_call, render_prompt, user_prompt
from supportenv.tasks import ALL_TASK_IDS
from supportenv.v1.client import EnvClient, GraderClient
from tests.scripted_model import EpisodeScriptedModel, Reply, episode_key, tool_call_of

vf = pytest.importorskip("verifiers", reason="pip install -r requirements-verifiers.txt")
pytest.importorskip("supportenv_verifiers", reason="pip install -r requirements-verifiers.txt")

from supportenv_verifiers.environment import EPISODE_OVER, NOT_APPLIED  # noqa: E402

pytestmark = pytest.mark.timeout(150)

SPLIT = "test"
SEEDS = (1, 2)
BAD_CALL = ("classify_issue", json.dumps({"category": "no_such_category"}))
AFTER_THE_END = ("mark_resolved", json.dumps({"summary": "Closing twice."}))


class Scripted:
    """One episode as the model plays it: its replies, the actions they mean, the library's grade."""

    def __init__(self, task_id: str, seed: int) -> None:
        env = SupportEnv(task_id, SPLIT, seed)
        obs = env.reset()
        self.key = episode_key(user_prompt(obs))
        oracle = make_policy("oracle")
        oracle.begin(task_id, SPLIT, seed)
        self.replies: list[Reply] = []
        self.actions: list[Action] = []
        self.done = False

        def play(action: Action) -> None:
            nonlocal obs
            obs, _, self.done, _ = env.step(action)
            self.actions.append(action)

        if seed == 1:
            self.replies.append([BAD_CALL])
            play(parse_tool_call(*BAD_CALL, obs.allowed_actions))
        else:
            name, arguments = tool_call_of(oracle.act(obs))
            self.replies.append(json.dumps({"action": name, **json.loads(arguments)}))
            play(parse_action(self.replies[-1], obs.allowed_actions))
        while not self.done:
            calls = []
            for _ in range(1 if seed == 1 else 2):
                if self.done:
                    break
                action = oracle.act(obs)
                calls.append(tool_call_of(action))
                assert parse_tool_call(*calls[-1], obs.allowed_actions) == action  # the call reads back as it
                play(action)
            self.replies.append(calls)
        if seed == 2:
            self.replies[-1].append(AFTER_THE_END)
        self.grade: Grade = env.grade()


@pytest.fixture(scope="module")
def scripted() -> dict[str, Scripted]:
    episodes = [Scripted(task_id, seed) for task_id in ALL_TASK_IDS for seed in SEEDS]
    return {e.key: e for e in episodes}


@pytest.fixture(autouse=True)
def signal_handlers():
    """verifiers' environments install SIGINT/SIGTERM handlers of their own: give pytest its own back."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


@pytest.fixture(scope="module")
def model(scripted: dict[str, Scripted]):
    with EpisodeScriptedModel({key: e.replies for key, e in scripted.items()}) as server:
        yield server


@pytest.fixture(scope="module")
def services():
    with EmbeddedServices({"SUPPORTENV_WORKERS": "1"}) as running:
        yield running


def evaluate(model: EpisodeScriptedModel, **env_args: Any) -> list[dict[str, Any]]:
    """verifiers' own entry point: load the environment by its id, evaluate it on the model."""
    env = vf.load_environment(
        "supportenv-verifiers", tasks=list(ALL_TASK_IDS), eval_split=SPLIT, eval_seeds=list(SEEDS), **env_args
    )
    client = vf.ClientConfig(api_base_url=model.url, api_key_var="SUPPORTENV_TEST_NO_KEY", max_retries=0)
    results = asyncio.run(
        env.evaluate(
            client=client,
            model="scripted-oracle",
            num_examples=-1,
            rollouts_per_example=2,
            state_columns=["supportenv"],
            on_progress=lambda *_: None,
        )
    )
    return results["outputs"]


def _first_user(messages: list[Any]) -> str:
    return next(m["content"] for m in messages if m["role"] == "user")


def check_rollouts(outputs: list[dict[str, Any]], scripted: dict[str, Scripted]) -> None:
    assert len(outputs) == len(scripted) * 2
    seen: dict[str, int] = {}
    for output in outputs:
        record = output["supportenv"]
        assert output.get("error") is None, output.get("error")
        episode = scripted[episode_key(_first_user(output["prompt"]))]
        seen[episode.key] = seen.get(episode.key, 0) + 1
        assert record["actions"] == [a.to_dict() for a in episode.actions]
        assert output["reward"] == episode.grade.score
        assert output["metrics"]["grade_score"] == episode.grade.score
        assert output["metrics"]["passed"] == float(episode.grade.passed)
        assert output["metrics"]["steps"] == len(episode.actions)
        assert output["is_completed"] and output["stop_condition"] == "has_final_env_response"
        completion = output["completion"]
        assert EPISODE_OVER in completion[-1 - (record["seed"] == 2)]["content"]
        if record["seed"] == 1:
            assert record["step_rewards"][0] < 0  # the bad call: a penalised invalid step
            assert record["actions"][0]["kind"] == "invalid_action"
        else:
            assert completion[1]["role"] == "user"  # the JSON reply is answered as a user turn
            assert completion[-1]["role"] == "tool" and completion[-1]["content"] == NOT_APPLIED
    assert set(seen.values()) == {2} and len(seen) == len(scripted)
    assert {o["supportenv"]["task_id"] for o in outputs} == set(ALL_TASK_IDS)


def test_the_dataset_is_the_first_observations_prompt_and_the_tasks_tools():
    env = vf.load_environment("supportenv-verifiers", tasks="issue_classification,expert_resolution", seeds=[4])
    assert env.env_id == "supportenv-verifiers"
    rows = env.get_dataset().to_list()
    assert [json.loads(r["info"])["task_id"] for r in rows] == ["issue_classification", "expert_resolution"]
    for row in rows:
        info = json.loads(row["info"])
        assert (info["split"], info["seed"]) == ("train", 4)
        expected = render_prompt(SupportEnv(info["task_id"], "train", 4).reset(), tool_calls=True)
        assert [{"role": m["role"], "content": m["content"]} for m in row["prompt"]] == expected
        assert [t["name"] for t in info["tool_defs"]] == [t["function"]["name"] for t in action_tools(info["task_id"])]
    with pytest.raises(RuntimeError, match="unknown task"):
        vf.load_environment("supportenv-verifiers", tasks=["no_such_task"])


def test_rollouts_in_process_score_the_librarys_grade(model, scripted):
    check_rollouts(evaluate(model), scripted)
    for request in model.requests:  # every turn offers the task's own functions
        task_id = episode_key(_first_user(request["messages"])).rsplit("/", 1)[1]
        names = [t["function"]["name"] for t in action_tools(task_id)]
        assert [t["function"]["name"] for t in request["tools"]] == names


@pytest.mark.parametrize("grader", ["grader_service", "library_replay"])
def test_rollouts_over_grpc_score_the_librarys_grade(model, scripted, services, grader):
    grader_address = services.grader.address if grader == "grader_service" else None
    outputs = evaluate(model, env_address=services.env.address, grader_address=grader_address)
    check_rollouts(outputs, scripted)


def test_an_unreachable_env_service_fails_each_rollout_not_the_run(model):
    with socket.socket() as probe:  # a loopback port with nothing listening
        probe.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{probe.getsockname()[1]}"
    env = vf.load_environment("supportenv-verifiers", tasks="issue_classification", seeds=[1], env_address=address)
    client = vf.ClientConfig(api_base_url=model.url, api_key_var="SUPPORTENV_TEST_NO_KEY", max_retries=0)
    asked = len(model.requests)
    outputs = asyncio.run(env.evaluate(client=client, model="scripted-oracle", on_progress=lambda *_: None))["outputs"]
    assert len(outputs) == 1 and outputs[0]["reward"] == 0.0
    assert "could not reset the episode" in str(outputs[0]["error"])
    assert len(model.requests) == asked  # no episode, so the model is never asked


def test_a_sealed_world_plays_the_services_ticket_and_scores_its_grade():
    task_id, seed = "issue_classification", 3
    calls = [
        ("classify_issue", json.dumps({"category": "billing", "priority": "low", "issue_type": "double_charge"})),
        ("mark_resolved", json.dumps({"summary": "Triaged."})),
    ]
    with EmbeddedServices({"SUPPORTENV_WORKERS": "1", "SUPPORTENV_WORLD_KEY": "verifiers-test-" + "k" * 16}) as sealed:
        with EnvClient(sealed.env.address) as probe:  # the sealed ticket: the public library cannot make it
            key = episode_key(user_prompt(probe.reset(task_id, SPLIT, seed)[0]))
        with GraderClient(sealed.grader.address) as grader:
            expected = grader.grade(task_id, SPLIT, seed, [parse_tool_call(*call) for call in calls])
        env = vf.load_environment(
            "supportenv-verifiers",
            tasks=task_id,
            eval_split=SPLIT,
            eval_seeds=[seed],
            env_address=sealed.env.address,
            grader_address=sealed.grader.address,
        )
        with EpisodeScriptedModel({key: [[call] for call in calls]}) as model:
            client = vf.ClientConfig(api_base_url=model.url, api_key_var="SUPPORTENV_TEST_NO_KEY", max_retries=0)
            (output,) = asyncio.run(
                env.evaluate(client=client, model="scripted", state_columns=["supportenv"], on_progress=lambda *_: None)
            )["outputs"]
    row = env.get_eval_dataset()[0]
    assert episode_key(_first_user(row["prompt"])) != key  # the row's prompt is the public world's ticket
    assert episode_key(_first_user(output["prompt"])) == key  # the rollout played the service's
    assert output.get("error") is None and len(output["supportenv"]["actions"]) == 2
    assert output["reward"] == expected.score and output["metrics"]["passed"] == float(expected.passed)
