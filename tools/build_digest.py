"""A digest of everything the library decides, to prove two builds of it (compiled and pure) agree.

Plays mixed episodes, every task on every split with oracle, rule, random and exploit policies, and
hashes each step's observation, reward and breakdown, the wire bytes the env service would send
(ResetResponse and StepResponse, their signed tokens included), and the final transcript, state and
grade with its GradeResponse bytes. Two builds agree when their digests are equal:

    SUPPORTENV_PURE=1 python tools/build_digest.py --episodes 2000
    python tools/build_digest.py --episodes 2000

It prints one JSON line: the build it ran on, the episode and step counts, and the digest.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from baseline_agent.policies import make_policy
from env_service.tokens import TokenCodec
from supportenv import build
from supportenv.actions import parse
from supportenv.cli import run_cli
from supportenv.episode import observe, step
from supportenv.graders import grade_state
from supportenv.replay import new_episode
from supportenv.tasks import ALL_TASKS
from supportenv.v1 import codec, convert

PROG = "python tools/build_digest.py"
SPLITS = ("train", "validation", "test")
POLICIES = ("oracle", "rule", "random", "ask_everything", "every_tool", "refund_excess", "keyword_stuffer")
# A fixed key: the tokens' MACs are part of the wire bytes compared.
TOKEN_KEY = b"build-digest-key-0123456789abcdef"


def episodes(count: int) -> list[tuple[str, str, str, int]]:
    """`count` (task, split, policy, seed), cycling tasks, splits and policies so that any
    count of at least their product covers every combination."""
    combos = [(t.task_id, s, p) for t in ALL_TASKS for s in SPLITS for p in POLICIES]
    return [(*combos[i % len(combos)], i // len(combos)) for i in range(count)]


def play(digest: hashlib._Hash, tokens: TokenCodec, task_id: str, split: str, policy_name: str, seed: int) -> int:
    policy = make_policy(policy_name)
    policy.begin(task_id, split, seed)
    scenario, state = new_episode(task_id, split, seed, episode_id=f"{policy_name}-{seed}")
    token = tokens.encode(state)
    digest.update(codec.reset_response(scenario, state, token))
    obs = observe(scenario, state)
    steps = 0
    while not state.done:
        result = step(scenario, state, parse(policy.act(obs)))
        obs, steps = result.observation, steps + 1
        token = tokens.extend(token, state)
        digest.update(repr((obs, result.reward, result.breakdown)).encode())
        digest.update(codec.step_response(scenario, state, result.reward, result.breakdown, token))
    grade = grade_state(scenario, state)
    digest.update(repr(grade).encode())
    digest.update(convert.grade_to_pb(grade, state.episode_id).SerializeToString(deterministic=True))
    digest.update(json.dumps(state.to_dict(), sort_keys=True).encode())
    return steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=2000, help="episodes to play (default 2000)")
    args = parser.parse_args(argv)
    digest, tokens, steps = hashlib.sha256(), TokenCodec(TOKEN_KEY), 0
    plan = episodes(args.episodes)
    for task_id, split, policy_name, seed in plan:
        steps += play(digest, tokens, task_id, split, policy_name, seed)
    print(json.dumps({"build": build(), "episodes": len(plan), "steps": steps, "digest": digest.hexdigest()}))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
