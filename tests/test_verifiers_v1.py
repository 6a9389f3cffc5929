"""The supportenv-verifiers-v1 taskset under verifiers 0.4's own rollouts, on every task.

verifiers 0.4 cannot share this venv (it needs openai<3 and mcp==2.0.0), so it lives in
.venv/verifiers-v1 (requirements-verifiers-v1.txt) and the rollouts run there:
integrations/verifiers_v1/smoke.py, as a subprocess, plays every task against a scripted model on
loopback that opens with a bad call (a penalised invalid step), then replays the oracle's tool
calls two a reply, and one more after the episode's end; it prints each rollout as a JSON line.
Here, with the library alone, each rollout's actions are replayed through SupportEnv: the reward
must be that episode's grade, the actions the script's, the tools the task's functions, and every
tool result the model read the observation after its step.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from supportenv.actions import Action
from supportenv.env import SupportEnv
from supportenv.llm import action_tools, user_prompt
from supportenv.tasks import ALL_TASK_IDS

ROOT = Path(__file__).resolve().parents[1]
VENV_PYTHON = ROOT / ".venv" / "verifiers-v1" / "bin" / "python"
SMOKE = ROOT / "integrations" / "verifiers_v1" / "smoke.py"
SEEDS = (1,)  # an episode of each task: each rollout is a process of its own, so few

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(
        not VENV_PYTHON.exists(),
        reason="no verifiers 0.4 venv: make verifiers-v1",
    ),
]


@pytest.fixture(scope="module")
def rollouts() -> list[dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [str(VENV_PYTHON), str(SMOKE), "--split", "test", "--seeds", ",".join(map(str, SEEDS))]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=55)
    assert done.returncode == 0, f"smoke.py exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def replayed(rollout: dict[str, Any]) -> tuple[SupportEnv, list[str], bool]:
    """The rollout's episode through the library: its env, each step's observation as the
    model reads it, and whether the episode had ended."""
    env = SupportEnv(rollout["task"], rollout["split"], rollout["seed"])
    env.reset()
    texts, done = [], False
    for action in rollout["actions"]:
        assert not done, "an action was applied after the episode ended"
        observation, _, done, _ = env.step(Action.from_dict(action))
        texts.append(user_prompt(observation, tool_calls=True))
    return env, texts, done


def test_every_task_is_rolled_out_to_the_end_of_its_episode(rollouts):
    assert sorted((r["task"], r["seed"]) for r in rollouts) == sorted((t, s) for t in ALL_TASK_IDS for s in SEEDS)
    for rollout in rollouts:
        assert rollout["ok"] and rollout["errors"] == [], rollout
        assert rollout["stop_condition"] == "episode_over"
        assert replayed(rollout)[2], "the rollout stopped before its episode ended"


def test_each_reward_is_the_librarys_grade_of_its_actions(rollouts):
    for rollout in rollouts:
        grade = replayed(rollout)[0].grade()
        assert rollout["reward"] == grade.score, rollout["task"]
        assert rollout["metrics"]["passed"] == float(grade.passed)
        assert rollout["metrics"]["steps"] == len(rollout["actions"])


def test_the_rollouts_apply_the_scripted_oracles_actions(rollouts):
    for rollout in rollouts:
        # The script's actions, so neither the call after the end nor any other went astray.
        assert rollout["actions"] == rollout["scripted_actions"], rollout["task"]
        assert rollout["actions"][0]["kind"] == "invalid_action"  # the bad call: a penalised step
        assert len(rollout["actions"]) > 1


def test_the_model_is_offered_its_tasks_functions_and_reads_each_steps_observation(rollouts):
    for rollout in rollouts:
        assert rollout["tools"] == [t["function"]["name"] for t in action_tools(rollout["task"])]
        # The trace holds the results the model read back: all but its last reply's.
        assert rollout["tool_results"] == replayed(rollout)[1][: len(rollout["tool_results"])]
    assert all(r["tool_results"] for r in rollouts)  # the bad call's result, at least, was read back


def test_the_smoke_command_names_itself_and_refuses_an_unknown_task():
    """A command line like the project's others (tests/test_cli.py cannot run it: another venv)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    helped = subprocess.run(
        [str(VENV_PYTHON), str(SMOKE), "--help"], env=env, capture_output=True, text=True, timeout=30
    )
    assert helped.returncode == 0 and helped.stdout.startswith("usage: python integrations/verifiers_v1/smoke.py ")
    for option in ("--tasks", "--split", "--seeds"):
        assert option in helped.stdout
    refused = subprocess.run(
        [str(VENV_PYTHON), str(SMOKE), "--tasks", "no_such_task"], env=env, capture_output=True, text=True, timeout=30
    )
    assert refused.returncode == 2 and "unknown task 'no_such_task'" in refused.stderr  # argparse's error
    assert "Traceback" not in refused.stderr
