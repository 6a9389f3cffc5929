"""`make soak` at CI size: 8 clients for 5 s against two env replicas and the grader."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from baseline_agent.embedded import ROOT


@pytest.mark.timeout(180)
def test_a_short_soak_holds(tmp_path):
    # A 3 s warm-up: the servers' bounded caches (scenarios, judged texts, encoded turns) fill
    # during the first few hundred episodes, and after 1 s they were still filling (about +9 MB
    # over the next 5 s, against +4 MB after 3 s and +3.6 MB over 10 s), too close to the limit.
    out = tmp_path / "soak.json"
    done = subprocess.run(
        [sys.executable, "benchmarks/soak.py", "--clients", "8", "--seconds", "5", "--warmup", "3", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=150,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    figures = json.loads(out.read_text())
    assert figures["passed"] and figures["failures"] == []
    assert figures["episodes_completed"] > 0 and figures["grades_completed"] == figures["episodes_completed"]
    assert figures["errors"] == figures["lost_episodes"] == figures["lost_grades"] == 0
    assert set(figures["rss_after_mb"]) == {"env-1", "env-2", "grader"}
    assert figures["rss_growth_mb"] <= 10
    assert figures["server_exit_codes"] == {"env-1": 0, "env-2": 0, "grader": 0}
    for line in ("episodes completed", "grades completed", "errors", "lost episodes/grades", "p50", "p99", "rss"):
        assert line in done.stdout
