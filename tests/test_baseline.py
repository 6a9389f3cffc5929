"""The baseline agent end to end: CLI, log format, JSON, and rule beats random."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TASKS = ("issue_classification", "action_selection", "end_to_end_resolution")
START = re.compile(r"^\[START\] task=(\S+) env=supportenv model=(\S+)$")
STEP = re.compile(r"^\[STEP\] step=(\d+) action=(\S+) reward=(-?\d+\.\d\d) done=(true|false) error=(null|.+)$")
END = re.compile(
    r"^\[END\] success=(true|false) steps=(\d+) score=(\d+\.\d\d) rewards=((-?\d+\.\d\d)(,-?\d+\.\d\d)*)?$"
)


def run(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("SUPPORTENV_ENV_ADDR", None)
    env.pop("SUPPORTENV_GRADER_ADDR", None)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout)


@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    out = {}
    for policy in ("rule", "random"):
        path = tmp_path_factory.mktemp(policy) / "scores.json"
        done = run(
            "-m",
            "baseline_agent",
            "--policy",
            policy,
            "--split",
            "test",
            "--episodes",
            "30",
            "--json",
            str(path),
            "--quiet",
        )
        assert done.returncode == 0, done.stderr
        out[policy] = json.loads(path.read_text())
    return out


def test_json_shape(scores):
    for policy, data in scores.items():
        assert data["policy"] == policy and data["split"] == "test"
        assert set(data["tasks"]) == set(TASKS)
        for task in data["tasks"].values():
            assert {"mean_score", "pass_rate", "episodes"} <= set(task) and task["episodes"] == 30
            assert 0.0 <= task["mean_score"] <= 1.0
        weights = {"issue_classification": 0.2, "action_selection": 0.3, "end_to_end_resolution": 0.5}
        expected = sum(w * data["tasks"][t]["mean_score"] for t, w in weights.items())
        assert data["weighted_score"] == pytest.approx(expected, abs=1e-3)


def test_rule_beats_random_on_every_task(scores):
    for task in TASKS:
        assert scores["rule"]["tasks"][task]["mean_score"] > scores["random"]["tasks"][task]["mean_score"] + 0.3, task


def test_log_lines_follow_the_format():
    done = run(
        "-m", "baseline_agent", "--policy", "random", "--episodes", "2", "--trials", "1", "--tasks", "action_selection"
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("[")]
    episodes = 0
    for line in lines:
        if START.match(line):
            episodes += 1
            steps, rewards = 0, []
        elif match := STEP.match(line):
            steps += 1
            assert int(match.group(1)) == steps
            rewards.append(match.group(3))
        else:
            match = END.match(line)
            assert match, line
            assert int(match.group(2)) == steps and (match.group(4) or "") == ",".join(rewards)
    assert episodes == 2
    assert "weighted score" in done.stdout


def test_inference_prints_per_task_scores_and_weighted_average():
    done = run("inference.py", "--episodes", "2")
    assert done.returncode == 0, done.stderr
    for task in TASKS:
        assert re.search(rf"^{task}\s+0\.\d\d\s+2\s+\d\.\d{{3}}", done.stdout, re.M), task
    assert re.search(r"^weighted score\s+\d\.\d{3}$", done.stdout, re.M)
    assert run("inference.py", "--episodes", "2").stdout == done.stdout, "deterministic and reproducible"


def test_make_runs_story_tells_one_episode_then_counts_and_explains():
    done = run("inference.py", "--story", "--episodes", "2")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "[STEP]" not in out and "[START]" not in out, "the story replaces the log lines"
    story, _, table = out.partition("Now the run: 6 episodes")
    assert "One episode, in full: end_to_end_resolution, test seed 0, policy rule" in story
    assert "The customer writes:" in story and "Step 1: classify_issue(" in story and "reward " in story
    assert 'customer: "' in story, "the customer's replies are shown"
    assert "GRADE" in story and "component" in story and "pass mark" in story
    assert "pass^1..4" not in table, "pass^k only when seeds are played more than once"
    for column in ("mean score", "pass rate", "mean reward", "weighted score"):
        assert re.search(rf"^  {column}\s+\S", table, re.M), column
    assert "make run EPISODES=200" in table
    assert len(out.splitlines()) < 80, "one screen's worth, give or take"


def test_pass_hat_k_appears_when_seeds_are_played_several_times():
    done = run("-m", "baseline_agent", "--policy", "random", "--episodes", "1", "--trials", "2", "--quiet",
               "--tasks", "issue_classification")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "pass^1..4" in done.stdout


def test_cli_errors_are_clear():
    done = run("-m", "baseline_agent", "--tasks", "nope", "--episodes", "1")
    assert done.returncode != 0 and "unknown task" in (done.stdout + done.stderr)
    done = run("-m", "baseline_agent", "--env-addr", "127.0.0.1:1")
    assert done.returncode == 2 and "--grader-addr" in done.stderr
