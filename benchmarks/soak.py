"""Soak: a bounded load against two env replicas and the grader, checked for errors,
losses and memory growth.

    python benchmarks/soak.py [--clients 64] [--seconds 60] [--json PATH]

Starts two env_service replicas (separate processes sharing one fresh token key) and one
grader_service, all on loopback ports, and stops them at the end. Every client has its own
channel to both replicas (client-side round_robin over `ipv4:127.0.0.1:P1,127.0.0.1:P2`, so
consecutive steps of one episode land on different replicas) and to the grader, and loops:
reset, play a full hard-task episode with the expert's actions, grade the trajectory. Every
reward and grade is compared with the library's own, computed in this process beforehand.

After `--seconds` no client starts a new episode; those in progress finish (at most
`--drain` seconds more). The run fails (exit 1) on any error, any episode or grade started
and never finished, any reward or grade differing from the library's, a server that does
not stop cleanly, or server memory (RSS of every server process, workers included) growing
by more than `--max-growth-mb` between the end of the warm-up and the end of the load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from baseline_agent.embedded import ServiceProcess, start_service
from benchmarks.bench_throughput import rss_mb
from supportenv import expert
from supportenv.episode import advance
from supportenv.graders import grade_state
from supportenv.replay import new_episode
from supportenv.v1 import convert
from supportenv.v1 import types_pb2 as pb
from supportenv.v1.client import AsyncEnvClient, AsyncGraderClient

TASK = "end_to_end_resolution"
SPLIT = "train"
POOL = 256  # seeds cycled through
RPC_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Planned:
    """One episode as the library plays it: the actions, and what the services must answer."""

    seed: int
    actions: list[pb.Action]
    rewards: list[float]
    score: float


def plan(pool: int) -> list[Planned]:
    episodes = []
    for seed in range(pool):
        scenario, state = new_episode(TASK, SPLIT, seed)
        actions, rewards = [], []
        while not state.done:
            action = expert.expert_action(scenario, state, TASK)
            reward, _ = advance(scenario, state, action)
            actions.append(convert.action_to_pb(action))
            rewards.append(reward)  # a double on the wire too: compared exactly
        score = convert.grade_to_pb(grade_state(scenario, state)).score
        episodes.append(Planned(seed, actions, rewards, score))
    return episodes


@dataclass
class Tally:
    episodes_started: int = 0
    episodes_completed: int = 0
    grades_started: int = 0
    grades_completed: int = 0
    steps: int = 0
    errors: int = 0
    mismatches: int = 0
    messages: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)

    def error(self, text: str) -> None:
        self.errors += 1
        if len(self.messages) < 10:
            self.messages.append(text)


async def client(
    index: int, clients: int, env_target: str, grader_addr: str, episodes: list[Planned], stop_at: float, tally: Tally
) -> None:
    """One client: episode after episode until `stop_at`, every one graded."""
    async with (
        AsyncEnvClient(env_target, timeout=RPC_TIMEOUT_S) as env,
        AsyncGraderClient(grader_addr, timeout=RPC_TIMEOUT_S) as grader,
    ):
        n = index
        while time.monotonic() < stop_at:
            planned = episodes[n % len(episodes)]
            n += clients
            tally.episodes_started += 1
            try:
                await env.reset(TASK, SPLIT, planned.seed)
                rewards = []
                for action in planned.actions:
                    t0 = time.perf_counter()
                    _, reward, _, _, _ = await env.step(action)
                    tally.latencies.append(time.perf_counter() - t0)
                    tally.steps += 1
                    rewards.append(reward)
                tally.episodes_completed += 1
                tally.grades_started += 1
                grade = await grader.grade(TASK, SPLIT, planned.seed, planned.actions)
                tally.grades_completed += 1
            except Exception as exc:  # counted and reported; the client goes on
                tally.error(f"client {index} seed {planned.seed}: {type(exc).__name__}: {exc}")
                continue
            if rewards != planned.rewards or grade.score != planned.score:
                tally.mismatches += 1
                tally.error(f"client {index} seed {planned.seed}: rewards or grade differ from the library's")


async def load(
    clients: int, seconds: float, drain: float, env_target: str, grader_addr: str, episodes: list[Planned]
) -> Tally:
    """`clients` clients for `seconds`; the episodes in progress then get `drain` seconds to end."""
    tally = Tally()
    stop_at = time.monotonic() + seconds
    tasks = [
        asyncio.ensure_future(client(i, clients, env_target, grader_addr, episodes, stop_at, tally))
        for i in range(clients)
    ]
    done, pending = await asyncio.wait(tasks, timeout=seconds + drain)
    for task in pending:  # still running at the hard limit: what they started counts as lost
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    for task in done:
        if task.exception() is not None:
            tally.error(f"a client stopped: {type(task.exception()).__name__}: {task.exception()}")
    if pending:
        tally.error(f"{len(pending)} clients were still running {drain:g}s after the end and were cancelled")
    return tally


def memory(servers: dict[str, ServiceProcess]) -> dict[str, float]:
    return {name: round(rss_mb(service.process.pid), 1) for name, service in servers.items()}


def percentile_ms(samples: list[float], q: int) -> float:
    if not samples:
        return 0.0
    if len(samples) == 1:
        return samples[0] * 1e3
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1] * 1e3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=64, help="concurrent clients (default 64)")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the measured load (default 60)")
    parser.add_argument("--warmup", type=float, default=5.0, help="unmeasured load before it (default 5)")
    parser.add_argument("--drain", type=float, default=30.0, help="time the last episodes get to finish")
    parser.add_argument("--workers", type=int, default=1, help="worker processes per env replica (default 1)")
    parser.add_argument("--max-growth-mb", type=float, default=10.0, help="allowed server memory growth")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.clients < 1 or args.seconds <= 0 or args.warmup < 0 or args.workers < 1:
        parser.error("--clients and --workers must be at least 1, --seconds positive, --warmup not negative")

    episodes = plan(POOL)
    key = secrets.token_hex(32)
    env_settings = {
        "SUPPORTENV_TOKEN_KEY": key,
        "SUPPORTENV_WORKERS": str(args.workers),
        "SUPPORTENV_LOG_LEVEL": "WARNING",
    }
    servers: dict[str, ServiceProcess] = {}
    try:
        servers["env-1"] = start_service("env_service", env_settings)
        servers["env-2"] = start_service("env_service", env_settings)
        servers["grader"] = start_service("grader_service", {"SUPPORTENV_LOG_LEVEL": "WARNING"})
        env_target = "ipv4:" + ",".join(servers[name].address for name in ("env-1", "env-2"))
        grader_addr = servers["grader"].address
        rss_idle = memory(servers)

        async def run() -> tuple[Tally, Tally, dict[str, float], float]:
            warm = Tally()
            if args.warmup:
                warm = await load(args.clients, args.warmup, args.drain, env_target, grader_addr, episodes)
            before = memory(servers)
            start = time.monotonic()
            tally = await load(args.clients, args.seconds, args.drain, env_target, grader_addr, episodes)
            return warm, tally, before, time.monotonic() - start

        warm, tally, rss_before, elapsed = asyncio.run(run())
        rss_after = memory(servers)
    finally:
        exit_codes = {name: service.stop() for name, service in servers.items()}

    growth = sum(rss_after.values()) - sum(rss_before.values())
    lost_episodes = tally.episodes_started - tally.episodes_completed
    lost_grades = tally.episodes_completed - tally.grades_completed  # every finished episode is graded
    figures = {
        "clients": args.clients,
        "seconds": args.seconds,
        "elapsed_s": round(elapsed, 2),
        "env_replicas": 2,
        "workers_per_replica": args.workers,
        "episodes_completed": tally.episodes_completed,
        "grades_completed": tally.grades_completed,
        "steps": tally.steps,
        "steps_per_s": round(tally.steps / elapsed, 1),
        "errors": tally.errors,
        "mismatches": tally.mismatches,
        "lost_episodes": lost_episodes,
        "lost_grades": lost_grades,
        "step_p50_ms": round(percentile_ms(tally.latencies, 50), 2),
        "step_p99_ms": round(percentile_ms(tally.latencies, 99), 2),
        "rss_idle_mb": rss_idle,
        "rss_before_mb": rss_before,
        "rss_after_mb": rss_after,
        "rss_growth_mb": round(growth, 1),
        "server_exit_codes": exit_codes,
        "warmup_episodes_completed": warm.episodes_completed,
        "warmup_errors": warm.errors,
        "error_samples": warm.messages + tally.messages,
    }
    failures = []
    if warm.errors or warm.episodes_started != warm.grades_completed:
        failures.append(f"the warm-up had {warm.errors} errors")
    if tally.errors:
        failures.append(f"{tally.errors} errors")
    if lost_episodes or lost_grades:
        failures.append(f"{lost_episodes} episodes and {lost_grades} grades lost")
    if growth > args.max_growth_mb:
        failures.append(f"server memory grew by {growth:.1f} MB (limit {args.max_growth_mb:g} MB)")
    if any(code != 0 for code in exit_codes.values()):
        failures.append(f"a server did not stop cleanly: {exit_codes}")
    figures["passed"] = not failures

    print(
        f"soak: {args.clients} clients x {args.seconds:g}s (after a {args.warmup:g}s warm-up) against 2 env "
        f"replicas ({args.workers} worker(s) each, round_robin) and 1 grader, loopback, {os.cpu_count()} CPUs"
    )
    print(f"  episodes completed   {tally.episodes_completed:>10,}   ({tally.episodes_completed / elapsed:,.1f}/s)")
    print(f"  grades completed     {tally.grades_completed:>10,}")
    print(f"  steps                {tally.steps:>10,}   ({tally.steps / elapsed:,.1f}/s)")
    print(f"  errors               {tally.errors:>10,}   (of which rewards/grades differing: {tally.mismatches})")
    print(f"  lost episodes/grades {lost_episodes:>10,} / {lost_grades:,}")
    print(f"  step latency         p50 {figures['step_p50_ms']:.2f} ms   p99 {figures['step_p99_ms']:.2f} ms")
    for name in rss_before:
        print(
            f"  rss {name:<8}         idle {rss_idle[name]:7.1f} MB   before {rss_before[name]:7.1f} MB   "
            f"after {rss_after[name]:7.1f} MB"
        )
    print(f"  rss growth (all)     {growth:+10.1f} MB   (limit {args.max_growth_mb:g} MB)")
    print(f"  server exit codes    {exit_codes}")
    for message in warm.messages + tally.messages:
        print(f"  error: {message}", file=sys.stderr)
    print("soak: " + ("PASSED" if not failures else "FAILED: " + "; ".join(failures)))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({**figures, "failures": failures}, indent=2) + "\n")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
