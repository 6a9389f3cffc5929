"""Real verifiers 0.4 rollouts of every task against a scripted model on loopback.

Run with the isolated venv's python and the repository root on PYTHONPATH:

    PYTHONPATH=. .venv/verifiers-v1/bin/python integrations/verifiers_v1/smoke.py

The model is tests/scripted_model.py's EpisodeScriptedModel (streaming, as verifiers' chat program
asks), answering each rollout from its own episode's script: a bad call first (a penalised invalid
step), then the oracle's actions as tool calls (`supportenv.llm.tool_call_of`), two a reply, the
last reply carrying one more call after the episode has ended (not applied).
The taskset, its tool server, the harness's chat program and the interception server are
verifiers' own, all on 127.0.0.1. One JSON line per rollout: task, split, seed, reward, the
actions applied (`Action.to_dict()`), the actions the script meant, the tools the model was
offered, the tool results it read, metrics, stop condition and errors. Exits 1 if a rollout failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import verifiers.v1 as vf
from verifiers.v1.types import content_text

from baseline_agent.policies import make_policy
from supportenv.actions import Action
from supportenv.cli import run_cli
from supportenv.env import SupportEnv
from supportenv.errors import UnknownTaskError
from supportenv.llm import parse_tool_call, user_prompt
from supportenv.tasks import ALL_TASK_IDS, task_ids
from tests.scripted_model import EpisodeScriptedModel, Reply, episode_key, tool_call_of

PROG = "python integrations/verifiers_v1/smoke.py"
TASKSET_ID = "supportenv-verifiers-v1"
REPO_ROOT = Path(__file__).resolve().parents[2]
BAD_CALL = ("classify_issue", json.dumps({"category": "no_such_category"}))
AFTER_THE_END = ("mark_resolved", json.dumps({"summary": "Closing twice."}))


def oracle_script(task_id: str, split: str, seed: int) -> tuple[str, list[Reply], list[Action]]:
    """One episode as the model plays it: its key, its replies, and the actions they mean."""
    env = SupportEnv(task_id, split, seed)
    obs = env.reset()
    key = episode_key(user_prompt(obs, tool_calls=True))
    oracle = make_policy("oracle")
    oracle.begin(task_id, split, seed)
    replies: list[Reply] = []
    actions: list[Action] = []
    done = False

    def play(action: Action) -> None:
        nonlocal obs, done
        obs, _, done, _ = env.step(action)
        actions.append(action)

    replies.append([BAD_CALL])
    play(parse_tool_call(BAD_CALL[0], json.loads(BAD_CALL[1]), obs.allowed_actions))  # as MCP hands it over
    while not done:
        calls = []
        for _ in range(2):
            if done:
                break
            action = oracle.act(obs)
            calls.append(tool_call_of(action))
            play(action)
        replies.append(calls)
    replies[-1].append(AFTER_THE_END)
    return key, replies, actions


def env_config(tasks: list[str], split: str, seeds: list[int]) -> vf.EnvConfig:
    return vf.resolve_env_config(
        {
            "taskset": {"id": TASKSET_ID, "tasks": tasks, "split": split, "seeds": seeds},
            # The harness's chat program on this machine, bounded: an episode takes at most a few
            # dozen turns, and a stuck rollout must not hold the run.
            "agent": {"runtime": {"type": "subprocess"}, "max_turns": 64, "timeout": {"rollout": 120}},
        }
    )


async def run(tasks: list[str], split: str, seeds: list[int]) -> list[dict[str, Any]]:
    scripts = {}
    meant: dict[str, list[Action]] = {}
    for seed in seeds:
        for task_id in tasks:
            key, replies, actions = oracle_script(task_id, split, seed)
            scripts[key], meant[f"{task_id}/{split}/{seed}"] = replies, actions
    env = vf.load_environment(env_config(tasks, split, seeds))
    with EpisodeScriptedModel(scripts) as model:
        client = vf.EvalClientConfig(base_url=model.url, api_key_var="SUPPORTENV_SMOKE_NO_KEY")
        ctx = vf.ModelContext(model="scripted-oracle", client=client)
        async with env.serving():
            slots = [slot for task in env.taskset for slot in env.slots(task)]
            episodes = await asyncio.gather(*(env.run_slot(slot, ctx) for slot in slots))
    rows = []
    for slot, episode in zip(slots, episodes, strict=True):
        (trace,) = episode.traces
        data = slot.task.data
        rows.append(
            {
                "task": data.task_id,
                "split": data.split,
                "seed": data.seed,
                "reward": trace.reward,
                "actions": trace.state.actions,
                "scripted_actions": [a.to_dict() for a in meant[slot.task.key]],
                "tools": [tool.name for tool in trace.tools],
                "tool_results": [content_text(m.content) for m in trace.tool_messages],
                "metrics": trace.metrics,
                "stop_condition": trace.stop_condition,
                "ok": episode.ok,
                "errors": [f"{e.type}: {e.message}" for e in (*episode.errors, *trace.errors)],
            }
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default=",".join(ALL_TASK_IDS), help="comma-separated task ids (default: all)")
    parser.add_argument("--split", default="test", help="train, validation or test (default: test)")
    parser.add_argument("--seeds", default="1", help="comma-separated seeds (default: 1)")
    args = parser.parse_args()
    # verifiers runs the harness's chat program with uv: this venv's (else it would pip-install one
    # into the home directory).
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    # The tool server is a subprocess in a directory of its own: it finds supportenv by an absolute path.
    paths = [str(REPO_ROOT), *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    try:
        tasks = list(task_ids(args.tasks))
    except (UnknownTaskError, ValueError) as exc:
        parser.error(str(exc))
    rows = asyncio.run(run(tasks, args.split, [int(s) for s in args.seeds.split(",") if s]))
    for row in rows:
        print(json.dumps(row), flush=True)
    return 0 if all(row["ok"] and not row["errors"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
