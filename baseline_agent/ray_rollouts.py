"""Rollout workers as Ray actors: many episodes played against the env service at once,
each one graded by the grader service.

    python -m baseline_agent.ray_rollouts [--env-addr TARGET --grader-addr HOST:PORT]
        [--tasks ...] [--split train] [--episodes 32] [--policy rule] [--workers 2] [--num-envs 8]

Without addresses it starts two env replicas (one token key) and a grader on loopback
ports, and stops them at the end. `--ray-address` (or RAY_ADDRESS) joins a running Ray
cluster; by default a local one is started for the run.

The pattern: one client per actor, built in the actor.
- `RolloutWorker` receives only plain strings (addresses) and numbers. It builds its own
  `GraderClient` in `__init__` and a `VectorEnvClient` per batch of seeds, in its own
  process; the driver (`run_rollouts`) never builds a client at all. A gRPC channel owns
  sockets and the threads of gRPC's core, which survive neither a fork nor pickling (the
  channel is a C object: it cannot be pickled, and one inherited across fork() hangs or
  fails), so every channel lives and dies in the process that opened it. Ray's worker
  processes are started fresh by the raylet (exec'd, not forked from the driver), and
  they import this module anew. To make a mistake loud, the driver and every actor
  register a Ray serializer for the SDK's client classes that refuses with a clear error,
  instead of Ray's "no default __reduce__ due to non-trivial __cinit__".
- The env address may name every replica: `ipv4:127.0.0.1:P1,127.0.0.1:P2`, or
  `dns:///env.svc:50051` (a headless Kubernetes service, one address per pod). The SDK's
  channels balance calls round_robin over them; episodes travel in signed state tokens
  (the replicas share SUPPORTENV_TOKEN_KEY), so consecutive steps of one episode may be
  served by different replicas.
- Each actor steps `num_envs` episodes of one task with one StepBatch call per step, the
  vector client resetting a finished episode to the next seed in the same call. When a
  batch's seeds run out, an env whose episode ends is simply not stepped again
  (VectorEnvClient's `exhausted`), until the batch's last episode ends (`done`).
- Ray starts the actors' processes, so they must import the project: `init_ray` puts the
  repository on their PYTHONPATH (runtime_env env_vars; nothing is uploaded). On a
  cluster whose nodes do not share this checkout, install the project in the nodes'
  image instead, or pass runtime_env={"working_dir": ...} to `ray.init` yourself.

Ray is imported only here: the library (`supportenv`) and the services never depend on it.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ray

from baseline_agent.embedded import ROOT, EmbeddedServices
from baseline_agent.policies import POLICIES, Policy, make_policy
from baseline_agent.progress import Progress, wants_bar
from baseline_agent.runner import EpisodeRecord, TrajectoryWriter
from supportenv.actions import Action
from supportenv.cli import run_cli
from supportenv.tasks import ALL_TASK_IDS, get_task
from supportenv.v1.client import (
    DEFAULT_TIMEOUT_S,
    AsyncEnvClient,
    AsyncGraderClient,
    EnvClient,
    GraderClient,
    SessionClient,
    VectorEnvClient,
)
from supportenv.world import SPLITS

PROG = "python -m baseline_agent.ray_rollouts"

CLIENT_TYPES = (EnvClient, GraderClient, VectorEnvClient, AsyncEnvClient, AsyncGraderClient, SessionClient)
GRADING_THREADS = 2  # grades overlap the stepping; the grader is another process


def _refuse_client(client: object) -> Any:
    raise TypeError(
        f"a {type(client).__name__} holds a gRPC channel, which cannot be sent to another process: "
        "pass its address (a string) instead and build the client where it is used "
        "(see baseline_agent.ray_rollouts)"
    )


def refuse_to_serialize_clients() -> None:
    """Make Ray refuse, with a clear error, to send an SDK client (this process only)."""
    for client_type in CLIENT_TYPES:
        ray.util.register_serializer(client_type, serializer=_refuse_client, deserializer=_refuse_client)


def require_address(name: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError(
            f"{name} must be an address string such as 'ipv4:127.0.0.1:50051,127.0.0.1:50052' or "
            f"'dns:///env:50051', not {type(value).__name__}: each actor builds its own clients"
        )
    return value


def init_ray(address: str | None = None, **options: Any) -> None:
    """`ray.init` with this repository on the workers' PYTHONPATH, so actors import the project."""
    path = os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))
    ray.init(address=address, runtime_env={"env_vars": {"PYTHONPATH": path}}, **options)


@dataclass
class _Slot:
    """One of a vector client's envs: the episode it is playing and what it did so far."""

    policy: Policy
    seed: int = 0
    actions: list[Action] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)


@ray.remote
class RolloutWorker:
    """Plays batches of episodes of one task with a vector client; see the module docstring.

    Takes addresses, never clients: its clients are built here, in the actor's process."""

    def __init__(self, env_address: str, grader_address: str, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.env_address = require_address("env_address", env_address)
        self.timeout = timeout
        refuse_to_serialize_clients()
        self.grader = GraderClient(require_address("grader_address", grader_address), timeout)
        self._client_pids = {os.getpid()}  # where this actor's clients were built
        self._grading = ThreadPoolExecutor(GRADING_THREADS, thread_name_prefix="grade")

    def where(self) -> dict[str, Any]:
        """This actor's process id, and the process ids its clients were built in."""
        return {"pid": os.getpid(), "client_pids": sorted(self._client_pids)}

    def close(self) -> None:
        self._grading.shutdown()
        self.grader.close()

    def run(
        self,
        task_id: str,
        split: str,
        seeds: Sequence[int],
        num_envs: int = 8,
        policy: str = "rule",
        connections: int = 1,
    ) -> list[EpisodeRecord]:
        """Play one episode per seed (`num_envs` at a time) with the named policy and grade
        each; the records in the order the episodes finished."""
        vector = VectorEnvClient(
            self.env_address,
            min(num_envs, len(seeds)),
            task_id,
            split,
            seeds=iter(seeds),  # finite: each env ends when none is left for it (vector.done)
            timeout=self.timeout,
            connections=connections,
        )
        self._client_pids.add(os.getpid())
        slots = [_Slot(make_policy(policy)) for _ in range(vector.num_envs)]

        def begin(slot: _Slot, seed: int) -> None:
            slot.seed, slot.actions, slot.rewards = seed, [], []
            slot.policy.begin(task_id, split, seed)

        grades: list[Future[EpisodeRecord]] = []
        try:
            observations = vector.reset()
            for slot, seed in zip(slots, vector.seeds, strict=True):
                begin(slot, seed)
            while not vector.done:
                actions = [
                    None if vector.exhausted[i] else slot.policy.act(obs)
                    for i, (slot, obs) in enumerate(zip(slots, observations, strict=True))
                ]
                observations, rewards, terminated, truncated, infos = vector.step(actions)
                for i, slot in enumerate(slots):
                    if actions[i] is None:
                        continue  # this env had ended already
                    slot.actions.append(actions[i])
                    slot.rewards.append(rewards[i])
                    if terminated[i] or truncated[i]:
                        record = EpisodeRecord(
                            task_id,
                            slot.seed,
                            steps=len(slot.actions),
                            rewards=slot.rewards,
                            terminated=terminated[i],
                            truncated=truncated[i],
                            actions=[a.to_dict() for a in slot.actions],
                        )
                        grades.append(self._grading.submit(self._grade, split, record, slot.actions))
                        if not infos[i].get("seeds_exhausted"):
                            begin(slot, vector.seeds[i])  # the vector client already reset it to this seed
        finally:
            vector.close()
        return [graded.result() for graded in grades]

    def _grade(self, split: str, record: EpisodeRecord, actions: list[Action]) -> EpisodeRecord:
        grade = self.grader.grade(record.task_id, split, record.seed, actions)
        record.score, record.passed = grade.score, grade.passed
        record.components = {c.name: c.score for c in grade.components}
        return record


@dataclass
class TaskRollouts:
    """One task's episodes, by seed, and the wall time they took."""

    task_id: str
    records: list[EpisodeRecord]
    seconds: float

    @property
    def steps(self) -> int:
        return sum(r.steps for r in self.records)

    @property
    def mean_score(self) -> float:
        return sum(r.score for r in self.records) / max(len(self.records), 1)

    @property
    def pass_rate(self) -> float:
        return sum(r.passed for r in self.records) / max(len(self.records), 1)

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else 0.0


def batches(seeds: Sequence[int], workers: int, num_envs: int) -> list[list[int]]:
    """The seeds in about four batches per worker (progress, balance), each at least
    `num_envs` long so that every env of a vector client has an episode."""
    size = max(num_envs, math.ceil(len(seeds) / (4 * workers)))
    return [list(seeds[k : k + size]) for k in range(0, len(seeds), size)]


def run_rollouts(
    env_address: str,
    grader_address: str,
    tasks: str | Sequence[str],
    split: str = "train",
    seeds: Iterable[int] = range(32),
    workers: int = 2,
    num_envs: int = 8,
    policy: str = "rule",
    connections: int = 1,
    cpus_per_worker: float = 0.5,
    progress: bool | None = None,
    on_task: Callable[[TaskRollouts], None] | None = None,
) -> list[TaskRollouts]:
    """Play every seed of every task (`tasks`: one id or several, played one after another)
    on `workers` RolloutWorker actors, `num_envs` episodes at a time each, with the policy
    named `policy`; every episode graded by the grader service.

    Starts a local Ray unless one is running (`init_ray`), and kills its actors at the end.
    `cpus_per_worker`: what Ray reserves per actor (mostly it waits on the services).
    `progress`: a bar on stderr (default: when stderr is a terminal). `on_task` sees each
    task's rollouts as soon as they are done."""
    require_address("env_address", env_address)
    require_address("grader_address", grader_address)
    task_ids = [tasks] if isinstance(tasks, str) else list(tasks)
    for task_id in task_ids:
        get_task(task_id)  # an unknown task fails here, before any actor starts
    seeds = list(seeds)
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; choose from {', '.join(POLICIES)}")
    if workers < 1 or num_envs < 1 or connections < 1 or not seeds or not task_ids:
        raise ValueError("workers, num_envs and connections must be at least 1, and seeds and tasks not empty")

    if not ray.is_initialized():
        init_ray()
    refuse_to_serialize_clients()
    actors = [
        RolloutWorker.options(num_cpus=cpus_per_worker).remote(env_address, grader_address)  # type: ignore[attr-defined]
        for _ in range(workers)
    ]
    results: list[TaskRollouts] = []
    enabled = wants_bar(sys.stderr, quiet=False) if progress is None else progress
    try:
        ray.get([actor.where.remote() for actor in actors])  # started, so no task's time counts a start-up
        with Progress(len(task_ids) * len(seeds), enabled) as bar:
            for task_id in task_ids:
                start = time.perf_counter()
                # Batch k goes to actor k mod workers; an actor plays its batches in turn.
                pending = [
                    actors[k % workers].run.remote(task_id, split, batch, num_envs, policy, connections)
                    for k, batch in enumerate(batches(seeds, workers, num_envs))
                ]
                done: list[EpisodeRecord] = []
                while pending:
                    ready, pending = ray.wait(pending, num_returns=1)
                    for record in ray.get(ready[0]):
                        done.append(record)
                        bar.advance(task_id)
                done.sort(key=lambda r: r.seed)
                results.append(TaskRollouts(task_id, done, time.perf_counter() - start))
                if on_task is not None:
                    on_task(results[-1])
        with contextlib.suppress(ray.exceptions.RayError):
            ray.get([actor.close.remote() for actor in actors], timeout=10)
    finally:
        for actor in actors:
            ray.kill(actor)
    return results


def summary_line(rollouts: TaskRollouts) -> str:
    r = rollouts
    return (
        f"{r.task_id:<24}{len(r.records):>10}{r.mean_score:>12.3f}{r.pass_rate:>11.2f}"
        f"{r.steps:>10}{r.seconds:>10.1f}{r.steps_per_s:>10.1f}"
    )


SUMMARY_HEADER = (
    f"{'task':<24}{'episodes':>10}{'mean score':>12}{'pass rate':>11}{'steps':>10}{'seconds':>10}{'steps/s':>10}"
)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--env-addr",
        default=os.environ.get("SUPPORTENV_ENV_ADDR"),
        help="env service target, e.g. ipv4:127.0.0.1:P1,127.0.0.1:P2 or dns:///env:50051 (env SUPPORTENV_ENV_ADDR)",
    )
    parser.add_argument(
        "--grader-addr",
        default=os.environ.get("SUPPORTENV_GRADER_ADDR"),
        help="grader service HOST:PORT (env SUPPORTENV_GRADER_ADDR)",
    )
    parser.add_argument(
        "--replicas", type=int, default=2, help="env replicas to start when no addresses are given (default 2)"
    )
    parser.add_argument(
        "--tasks", nargs="+", default=list(ALL_TASK_IDS), metavar="TASK", help=f"default: {' '.join(ALL_TASK_IDS)}"
    )
    parser.add_argument("--split", choices=SPLITS, default="train")
    parser.add_argument("--episodes", type=int, default=32, help="episodes per task: seeds seed-start .. +N-1")
    parser.add_argument("--seed-start", type=int, default=0)
    parser.add_argument("--policy", choices=list(POLICIES), default="rule")
    parser.add_argument("--workers", type=int, default=2, help="RolloutWorker actors (default 2)")
    parser.add_argument("--num-envs", type=int, default=8, help="episodes each actor steps at once (default 8)")
    parser.add_argument("--connections", type=int, default=1, help="connections per vector client (default 1)")
    parser.add_argument("--cpus-per-worker", type=float, default=0.5, help="CPUs Ray reserves per actor (default 0.5)")
    parser.add_argument(
        "--ray-address",
        default=os.environ.get("RAY_ADDRESS"),
        help="a running Ray cluster, e.g. auto (env RAY_ADDRESS); default: start a local one",
    )
    parser.add_argument(
        "--trajectories",
        type=Path,
        metavar="PATH.jsonl",
        help="write every episode's trajectory here (re-score with baseline_agent.rescore)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if min(args.episodes, args.workers, args.num_envs, args.connections, args.replicas) < 1:
        parser.error("--episodes, --workers, --num-envs, --connections and --replicas must be at least 1")
    if bool(args.env_addr) != bool(args.grader_addr):
        parser.error("give both --env-addr and --grader-addr, or neither to start local services")
    unknown = [t for t in args.tasks if t not in ALL_TASK_IDS]
    if unknown:
        parser.error(f"unknown task(s) {', '.join(unknown)}; available: {', '.join(ALL_TASK_IDS)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with contextlib.ExitStack() as stack:
        env_addr, grader_addr = args.env_addr, args.grader_addr
        if not env_addr:
            services = stack.enter_context(
                EmbeddedServices({"SUPPORTENV_LOG_LEVEL": "WARNING"}, env_replicas=args.replicas)
            )
            env_addr, grader_addr = services.env_target, services.grader.address  # type: ignore[union-attr]
            print(f"started local services: env {env_addr}, grader {grader_addr}", file=sys.stderr)
        if args.ray_address:
            init_ray(args.ray_address)
        else:
            init_ray(include_dashboard=False)
        stack.callback(ray.shutdown)
        writer = None
        if args.trajectories:
            writer = stack.enter_context(TrajectoryWriter(args.trajectories, args.policy, args.split))

        print(
            f"ray rollouts: policy={args.policy} split={args.split}, {args.workers} workers x {args.num_envs} envs, "
            f"env {env_addr}, grader {grader_addr}",
            flush=True,
        )
        print(SUMMARY_HEADER, flush=True)

        def on_task(rollouts: TaskRollouts) -> None:
            print(summary_line(rollouts), flush=True)
            for record in rollouts.records if writer is not None else ():
                writer.write(record)

        seeds = range(args.seed_start, args.seed_start + args.episodes)
        results = run_rollouts(
            env_addr,
            grader_addr,
            args.tasks,
            args.split,
            seeds,
            workers=args.workers,
            num_envs=args.num_envs,
            policy=args.policy,
            connections=args.connections,
            cpus_per_worker=args.cpus_per_worker,
            progress=wants_bar(sys.stderr, args.quiet),
            on_task=on_task,
        )
    steps, seconds = sum(r.steps for r in results), sum(r.seconds for r in results)
    episodes = sum(len(r.records) for r in results)
    print(f"{'all':<24}{episodes:>10}{'':>12}{'':>11}{steps:>10}{seconds:>10.1f}{steps / seconds:>10.1f}")
    if args.trajectories:
        print(f"wrote {episodes} trajectories to {args.trajectories}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
