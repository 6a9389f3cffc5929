"""Same (task, split, seed, actions) -> same transcript, rewards and grade, in any process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from supportenv.world import SPLITS, generate

ROOT = Path(__file__).resolve().parent.parent
WORLD_TASKS = ("action_selection", "end_to_end_resolution")
WORLD_KEY = b"the key of a sealed world"  # any key: generation under one is as deterministic


def run_probe(hash_seed: str) -> list[dict]:
    # A different PYTHONHASHSEED per process catches any reliance on str hashing order.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "transcript_probe.py")],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


def test_two_processes_give_identical_transcripts_and_grades():
    first, second = run_probe("1"), run_probe("2")
    assert len(first) == 24
    assert first == second
    assert len({json.dumps(t["steps"]) for t in first}) > 12, "different seeds and policies give different episodes"


def test_world_generation_is_identical_across_processes():
    """In the public world and in a sealed one, ticket ids included (a scenario's repr shows them)."""
    code = (
        "import json,sys;from supportenv.world import generate;key=sys.argv[1].encode();"
        f"print(json.dumps([repr(generate(t,s,n,k)) for t in {WORLD_TASKS!r}"
        " for s in ('train','validation','test') for n in range(50) for k in (None,key)]))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code, WORLD_KEY.decode()],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed},
            timeout=60,
        ).stdout
        for seed in ("0", "99")
    }
    assert len(outputs) == 1
    here = [
        repr(generate(t, s, n, k)) for t in WORLD_TASKS for s in SPLITS for n in range(50) for k in (None, WORLD_KEY)
    ]
    assert json.loads(outputs.pop()) == here, "and identical to this process's"
