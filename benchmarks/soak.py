"""Soak: a bounded load against two env replicas and the grader, checked for errors,
losses and memory growth.

    python benchmarks/soak.py [--clients 64] [--seconds 60] [--sessions 0.5] [--channels 32]
                              [--kill-replica-after S] [--json PATH]

Starts two env_service replicas (separate processes sharing one fresh token key) and one
grader_service, all on loopback ports, and stops them at the end. Channels balance calls
over both replicas themselves (client-side round_robin over `ipv4:127.0.0.1:P1,127.0.0.1:P2`,
so consecutive steps of one episode land on different replicas). Every client loops: reset,
play a full hard-task episode with the expert's actions, grade the trajectory; so `--clients`
episodes are in flight at once. A `--sessions` share of the clients play over a Session
stream (SessionClient, resuming a lost stream from its last token), the rest over unary
calls. By default every client has its own channels; `--channels N` makes the clients share
N channels per service, as a process running a thousand episodes would. Every reward and
grade is compared with the library's own, computed in this process beforehand.

`--kill-replica-after S` kills (SIGKILL) the first env replica S seconds into the measured
load: the episodes in flight on it must carry on on the other replica, none lost.

After `--seconds` no client starts a new episode; those in progress finish (at most
`--drain` seconds more). The run fails (exit 1) on any error, any episode or grade started
and never finished, any reward or grade differing from the library's, a server that does
not stop cleanly (the killed one aside), or server memory (RSS of every surviving server
process, workers included) growing by more than `--max-growth-mb` between the end of the
warm-up and the end of the load. A killed replica's working set (its memory above idle at the
end of the warm-up) is counted as moved to the survivors, with its load.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import secrets
import signal
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grpc

from baseline_agent.embedded import ServiceProcess, start_service
from benchmarks.bench_throughput import rss_mb
from supportenv import expert
from supportenv.cli import run_cli
from supportenv.episode import advance
from supportenv.graders import grade_state
from supportenv.replay import new_episode
from supportenv.v1 import convert
from supportenv.v1 import types_pb2 as pb
from supportenv.v1.client import CHANNEL_OPTIONS, AsyncEnvClient, AsyncGraderClient, SessionClient

PROG = "python benchmarks/soak.py"

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
    in_flight: int = 0
    max_in_flight: int = 0  # episodes started and not yet finished, at most at once
    streams_resumed: int = 0
    messages: list[str] = field(default_factory=list)
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"unary": [], "session": []})

    def error(self, text: str) -> None:
        self.errors += 1
        if len(self.messages) < 10:
            self.messages.append(text)

    def start_episode(self) -> None:
        self.episodes_started += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)


class Channels:
    """Where clients get their channels: each its own (count 0), or one of `count` shared ones."""

    def __init__(self, env_target: str, grader_addr: str, count: int) -> None:
        self.env_target, self.grader_addr = env_target, grader_addr
        self._shared = [
            (
                grpc.aio.insecure_channel(env_target, options=CHANNEL_OPTIONS),
                grpc.aio.insecure_channel(grader_addr, options=CHANNEL_OPTIONS),  # each its own connection
            )
            for _ in range(count)
        ]
        self._next = itertools.cycle(self._shared) if self._shared else None

    def clients(self, session: bool) -> tuple[AsyncEnvClient | SessionClient, AsyncGraderClient]:
        env_channel, grader_channel = next(self._next) if self._next else (None, None)
        if session:
            env = SessionClient(self.env_target, timeout=RPC_TIMEOUT_S, channel=env_channel)
        else:
            env = AsyncEnvClient(self.env_target, timeout=RPC_TIMEOUT_S, channel=env_channel)
        return env, AsyncGraderClient(self.grader_addr, timeout=RPC_TIMEOUT_S, channel=grader_channel)

    async def close(self) -> None:
        for env_channel, grader_channel in self._shared:
            await env_channel.close()
            await grader_channel.close()


async def client(
    index: int, clients: int, session: bool, channels: Channels, episodes: list[Planned], stop_at: float, tally: Tally
) -> None:
    """One client: episode after episode until `stop_at`, every one graded."""
    env, grader = channels.clients(session)
    kind = "session" if session else "unary"
    try:
        n = index
        while time.monotonic() < stop_at:
            planned = episodes[n % len(episodes)]
            n += clients
            tally.start_episode()
            try:
                try:
                    await env.reset(TASK, SPLIT, planned.seed)
                    rewards = []
                    for action in planned.actions:
                        t0 = time.perf_counter()
                        _, reward, _, _, _ = await env.step(action)
                        tally.latencies[kind].append(time.perf_counter() - t0)
                        tally.steps += 1
                        rewards.append(reward)
                finally:
                    tally.in_flight -= 1
                tally.episodes_completed += 1
                tally.grades_started += 1
                grade = await grader.grade(TASK, SPLIT, planned.seed, planned.actions)
                tally.grades_completed += 1
            except Exception as exc:  # counted and reported; the client goes on
                tally.error(f"client {index} ({kind}) seed {planned.seed}: {type(exc).__name__}: {exc}")
                continue
            if rewards != planned.rewards or grade.score != planned.score:
                tally.mismatches += 1
                tally.error(f"client {index} seed {planned.seed}: rewards or grade differ from the library's")
    finally:
        if session:
            tally.streams_resumed += env.resumed
        await env.close()
        await grader.close()


async def load(
    clients: int, sessions: float, seconds: float, drain: float, channels: Channels, episodes: list[Planned]
) -> Tally:
    """`clients` clients for `seconds` (the first `sessions` share of them on Session streams);
    the episodes in progress then get `drain` seconds to end."""
    tally = Tally()
    stop_at = time.monotonic() + seconds
    on_streams = round(clients * sessions)
    tasks = [
        asyncio.ensure_future(client(i, clients, i < on_streams, channels, episodes, stop_at, tally))
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


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (Linux /proc), children first."""
    found, queue = [], [pid]
    while queue:
        parent = queue.pop()
        for task in Path(f"/proc/{parent}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                children = [int(child) for child in task.read_text().split()]
                found.extend(children)
                queue.extend(children)
    return found


def memory(servers: dict[str, ServiceProcess]) -> dict[str, float]:
    return {name: round(rss_mb(service.process.pid), 1) for name, service in servers.items()}


def percentile_ms(samples: list[float], q: int) -> float:
    if not samples:
        return 0.0
    if len(samples) == 1:
        return samples[0] * 1e3
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1] * 1e3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=64, help="concurrent clients, one episode each (default 64)")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the measured load (default 60)")
    parser.add_argument("--warmup", type=float, default=5.0, help="unmeasured load before it (default 5)")
    parser.add_argument("--drain", type=float, default=30.0, help="time the last episodes get to finish")
    parser.add_argument("--workers", type=int, default=1, help="worker processes per env replica (default 1)")
    parser.add_argument("--sessions", type=float, default=0.0, help="share of clients on Session streams (0-1)")
    parser.add_argument("--channels", type=int, default=0, help="channels shared by the clients (0: one each)")
    parser.add_argument("--kill-replica-after", type=float, metavar="S", help="SIGKILL env-1 S seconds into the load")
    parser.add_argument("--max-growth-mb", type=float, default=10.0, help="allowed server memory growth")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.clients < 1 or args.seconds <= 0 or args.warmup < 0 or args.workers < 1:
        parser.error("--clients and --workers must be at least 1, --seconds positive, --warmup not negative")
    if not 0 <= args.sessions <= 1 or args.channels < 0:
        parser.error("--sessions must be between 0 and 1, --channels not negative")
    if args.kill_replica_after is not None and not 0 <= args.kill_replica_after < args.seconds:
        parser.error("--kill-replica-after must fall within --seconds")

    episodes = plan(POOL)
    key = secrets.token_hex(32)
    env_settings = {
        "SUPPORTENV_TOKEN_KEY": key,
        "SUPPORTENV_WORKERS": str(args.workers),
        "SUPPORTENV_LOG_LEVEL": "WARNING",
    }
    servers: dict[str, ServiceProcess] = {}
    killed: set[str] = set()

    def kill(name: str) -> None:
        # The replica's worker processes too (with --workers > 1 the parent only supervises them).
        for pid in (*descendants(servers[name].process.pid), servers[name].process.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        killed.add(name)

    try:
        servers["env-1"] = start_service("env_service", env_settings)
        servers["env-2"] = start_service("env_service", env_settings)
        servers["grader"] = start_service("grader_service", {"SUPPORTENV_LOG_LEVEL": "WARNING"})
        env_target = "ipv4:" + ",".join(servers[name].address for name in ("env-1", "env-2"))
        grader_addr = servers["grader"].address
        rss_idle = memory(servers)

        async def run() -> tuple[Tally, Tally, dict[str, float], float]:
            channels = Channels(env_target, grader_addr, args.channels)  # in this loop: aio channels belong to one
            try:
                warm = Tally()
                if args.warmup:
                    warm = await load(args.clients, args.sessions, args.warmup, args.drain, channels, episodes)
                before = memory(servers)
                start = time.monotonic()
                if args.kill_replica_after is not None:
                    asyncio.get_running_loop().call_later(args.kill_replica_after, kill, "env-1")
                tally = await load(args.clients, args.sessions, args.seconds, args.drain, channels, episodes)
                return warm, tally, before, time.monotonic() - start
            finally:
                await channels.close()

        warm, tally, rss_before, elapsed = asyncio.run(run())
        rss_after = memory({name: service for name, service in servers.items() if name not in killed})
    finally:
        exit_codes = {name: service.stop() for name, service in servers.items()}

    # A killed replica's load moves to the survivors, and its working set (its memory above idle)
    # with it: a survivor carrying twice the streams holds twice the buffers, which is not a leak.
    moved = sum(rss_before[name] - rss_idle[name] for name in killed)
    growth = sum(rss_after.values()) - sum(rss_before[name] for name in rss_after) - moved
    lost_episodes = tally.episodes_started - tally.episodes_completed
    lost_grades = tally.episodes_completed - tally.grades_completed  # every finished episode is graded
    latencies = [*tally.latencies["unary"], *tally.latencies["session"]]
    on_streams = round(args.clients * args.sessions)
    figures = {
        "clients": args.clients,
        "session_clients": on_streams,
        "unary_clients": args.clients - on_streams,
        "shared_channels": args.channels,
        "seconds": args.seconds,
        "elapsed_s": round(elapsed, 2),
        "env_replicas": 2,
        "workers_per_replica": args.workers,
        "killed": sorted(killed),
        "episodes_completed": tally.episodes_completed,
        "max_episodes_in_flight": tally.max_in_flight,
        "grades_completed": tally.grades_completed,
        "steps": tally.steps,
        "steps_per_s": round(tally.steps / elapsed, 1),
        "streams_resumed": tally.streams_resumed,
        "errors": tally.errors,
        "mismatches": tally.mismatches,
        "lost_episodes": lost_episodes,
        "lost_grades": lost_grades,
        "step_p50_ms": round(percentile_ms(latencies, 50), 2),
        "step_p99_ms": round(percentile_ms(latencies, 99), 2),
        **{
            f"{kind}_step_p{q}_ms": round(percentile_ms(samples, q), 2)
            for kind, samples in tally.latencies.items()
            for q in (50, 99)
        },
        "rss_idle_mb": rss_idle,
        "rss_before_mb": rss_before,
        "rss_after_mb": rss_after,
        "rss_moved_mb": round(moved, 1),
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
    if any(code != 0 for name, code in exit_codes.items() if name not in killed):
        failures.append(f"a server did not stop cleanly: {exit_codes}")
    figures["passed"] = not failures

    mix = f"{args.clients - on_streams} unary + {on_streams} Session" if on_streams else "unary"
    shared = f"{args.channels} shared channels" if args.channels else "a channel each"
    print(
        f"soak: {args.clients} clients ({mix}, {shared}) x {args.seconds:g}s (after a {args.warmup:g}s warm-up) "
        f"against 2 env replicas ({args.workers} worker(s) each, round_robin) and 1 grader, loopback, "
        f"{os.cpu_count()} CPUs"
    )
    if killed:
        print(f"  killed               env-1 (SIGKILL) {args.kill_replica_after:g}s into the load")
    print(f"  episodes completed   {tally.episodes_completed:>10,}   ({tally.episodes_completed / elapsed:,.1f}/s)")
    print(f"  episodes in flight   {tally.max_in_flight:>10,}   (most at once)")
    print(f"  grades completed     {tally.grades_completed:>10,}")
    print(f"  steps                {tally.steps:>10,}   ({tally.steps / elapsed:,.1f}/s)")
    print(f"  errors               {tally.errors:>10,}   (of which rewards/grades differing: {tally.mismatches})")
    print(f"  lost episodes/grades {lost_episodes:>10,} / {lost_grades:,}")
    if on_streams:
        print(f"  streams resumed      {tally.streams_resumed:>10,}")
    print(f"  step latency         p50 {figures['step_p50_ms']:.2f} ms   p99 {figures['step_p99_ms']:.2f} ms")
    for kind, samples in tally.latencies.items():
        if samples and on_streams:
            p50, p99 = figures[f"{kind}_step_p50_ms"], figures[f"{kind}_step_p99_ms"]
            print(f"    {kind:<8}           p50 {p50:.2f} ms   p99 {p99:.2f} ms")
    for name in rss_before:
        after = f"{rss_after[name]:7.1f} MB" if name in rss_after else " killed"
        print(
            f"  rss {name:<8}         idle {rss_idle[name]:7.1f} MB   before {rss_before[name]:7.1f} MB   after {after}"
        )
    if killed:
        print(f"  rss moved            {moved:+10.1f} MB   (the killed replica's working set, now the survivors')")
    print(f"  rss growth (live)    {growth:+10.1f} MB   (limit {args.max_growth_mb:g} MB)")
    print(f"  server exit codes    {exit_codes}")
    for message in warm.messages + tally.messages:
        print(f"  error: {message}", file=sys.stderr)
    print("soak: " + ("PASSED" if not failures else "FAILED: " + "; ".join(failures)))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({**figures, "failures": failures}, indent=2) + "\n")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
