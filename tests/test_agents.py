"""Scores mean something: exploits earn nothing, the oracle earns full marks, and the
rule baseline sits between. The rule baseline and the oracle run through both services via the
CLI; the random agent and the exploit suite run in process on the library (tests/in_process.py),
the same episodes at a fraction of the cost: the README's scoreboard block runs every agent
through both services, and tests/test_determinism.py shows the services give the library's
episodes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from baseline_agent.policies import EXPLOITS, make_policy
from baseline_agent.runner import EpisodeRecord, default_trials, pass_hat_k
from tests import in_process

ROOT = Path(__file__).resolve().parent.parent
TASKS = ("issue_classification", "action_selection", "end_to_end_resolution")
EPISODES = 100
# Played through both services by the CLI, the rest in process.
THROUGH_THE_SERVICES = ("rule", "oracle")
IN_PROCESS = ("random", *EXPLOITS)
# Two agents on 100 seeds of each task through both services, and 18 in process: half a minute.
pytestmark = pytest.mark.timeout(900)


def cli_scores(name: str, path: Path) -> dict:
    """The CLI's --json summary of `name` on EPISODES seeds of every task."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "baseline_agent",
            "--policy",
            name,
            "--split",
            "test",
            "--episodes",
            str(EPISODES),
            "--json",
            str(path),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(path.read_text())


def in_process_scores(name: str) -> dict:
    """The parts of that summary the tests read, from the library."""
    trials = default_trials(make_policy(name))  # as the CLI plays it
    tasks, episodes = {}, []
    for task in TASKS:
        played = [
            (seed, in_process.play(name, task, "test", seed, trial)[2])
            for seed in range(EPISODES)
            for trial in range(trials)
        ]
        grades = [grade for _, grade in played]
        records = [EpisodeRecord(task, seed, passed=grade.passed) for seed, grade in played]
        tasks[task] = {
            "mean_score": sum(g.score for g in grades) / len(grades),
            "pass_rate": sum(g.passed for g in grades) / len(grades),
            "mean_reward": sum(g.cumulative_reward for g in grades) / len(grades),
            "trials": trials,
            "pass_hat_k": {str(k): v for k, v in pass_hat_k(records, trials).items()},
        }
        episodes += [{"score": g.score, "components": {c.name: c.score for c in g.components}} for g in grades]
    return {"tasks": tasks, "episodes": episodes}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = {name: cli_scores(name, tmp_path_factory.mktemp(name) / "scores.json") for name in THROUGH_THE_SERVICES}
    out.update((name, in_process_scores(name)) for name in IN_PROCESS)
    return out


def mean(results, policy, task, key="mean_score"):
    return results[policy]["tasks"][task][key]


@pytest.mark.parametrize("policy", EXPLOITS)
def test_exploits_earn_nothing(results, policy):
    for task in TASKS:
        assert mean(results, policy, task) <= 0.15, (policy, task)
        # A fixed triage is right for about 1 ticket in 25 (one issue type of 25), no more; on 100
        # seeds that floor needs some room (the 200-seed scoreboard in the README shows 2% or less).
        assert mean(results, policy, task, "pass_rate") <= 0.05, (policy, task)
        assert mean(results, policy, task) < mean(results, "rule", task), (policy, task)
        assert mean(results, policy, task, "mean_reward") < mean(results, "rule", task, "mean_reward"), (policy, task)


def test_random_is_a_floor(results):
    for task in TASKS:
        assert mean(results, "random", task) <= 0.25
        assert mean(results, "random", task, "mean_reward") < mean(results, "rule", task, "mean_reward")


def test_oracle_reaches_full_marks(results):
    for task in TASKS:
        assert mean(results, "oracle", task) >= 0.95, task


def test_rule_baseline_sits_between(results):
    assert 0.55 <= results["rule"]["weighted_score"] <= 0.90
    for task in TASKS:
        assert mean(results, "rule", task) >= mean(results, "random", task) + 0.3, task
        assert mean(results, "rule", task) < mean(results, "oracle", task), task


def test_scores_and_components_in_range(results):
    for data in results.values():
        for episode in data["episodes"]:
            assert 0.0 <= episode["score"] <= 1.0
            assert all(0.0 <= v <= 1.0 for v in episode["components"].values())


def test_pass_hat_k_for_stochastic_policies(results):
    task = results["random"]["tasks"]["action_selection"]
    assert task["trials"] == 4
    hats = [task["pass_hat_k"][str(k)] for k in (1, 2, 3, 4)]
    assert hats == sorted(hats, reverse=True), "pass^k can only fall as k grows"
    assert hats[0] == pytest.approx(task["pass_rate"], abs=1e-3)
