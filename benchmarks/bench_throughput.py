"""Throughput of every way to step the environment, side by side.

    python benchmarks/bench_throughput.py [--seconds 3] [--json PATH]

Steps are full hard-task episodes (resets included; in-process, expert-task ones too) played by a fixed policy: the
expert's actions for a pool of seeds, computed before timing so that only the
environment and its transport are measured. Each step carries the next episode's reset
(next_episode), so a new episode starts in the call of the step that ends the last one,
as a vector env's autoreset does. The env service runs as a real server on
loopback with its default workers (one per CPU); the client runs in this process, on
the same machine, so both share its cores.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import secrets
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from supportenv.v1 import CLASSIC_IO

# The clients run with the settings the services use (and the README recommends): gRPC's
# classic I/O, set before grpc is imported, and asyncio on uvloop (event_loop.run_event_loop).
os.environ.setdefault("GRPC_EXPERIMENTS", CLASSIC_IO)

from baseline_agent.embedded import ServiceProcess, start_service
from supportenv import expert
from supportenv.actions import Action, use_tool
from supportenv.cli import run_cli
from supportenv.episode import observe, step
from supportenv.replay import new_episode
from supportenv.tasks import EXPERT_TASK_ID
from supportenv.v1 import WORKER_METADATA, convert, env_pb2
from supportenv.v1 import types_pb2 as pb
from supportenv.v1.client import AsyncEnvClient, EnvClient, VectorEnvClient
from supportenv.v1.event_loop import run_event_loop

PROG = "python benchmarks/bench_throughput.py"

TASK = "end_to_end_resolution"
POOL = 256  # seeds cycled through; every one is a full episode
CONCURRENCY = 64
# Each client its own connection (gRPC would otherwise share one between the channels of a
# process), so that the server's workers (SO_REUSEPORT, per connection) all take a share.
# The figures time the SDK clients' bare `stub`s (no deadline, no retries) on channels with
# these options.
OWN_CONNECTION = [("grpc.use_local_subchannel_pool", 1)]
# One connection per worker, spread over the workers (spread_async_clients). More connections add
# calls, which on 2 cores shared with the client cost more than they gain.
BATCH_CONNECTIONS = 2
# Enough episodes to fill every bounded cache of a worker (the largest hold 4,096 entries).
WARM_UP_EPISODES = 5_000


def plan(pool: int, task: str = TASK) -> list[tuple[int, list[Action]]]:
    episodes = []
    for seed in range(pool):
        scenario, state = new_episode(task, "train", seed)
        actions = []
        while not state.done:
            actions.append(expert.expert_action(scenario, state, task))
            step(scenario, state, actions[-1])
        episodes.append((seed, actions))
    return episodes


def reset_pb(seed: int, task: str = TASK) -> env_pb2.ResetRequest:
    return env_pb2.ResetRequest(task_id=task, split=pb.SPLIT_TRAIN, seed=seed)


def percentile(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1] if len(samples) > 1 else samples[0]


def timed(seconds: float, body: Callable[[], int]) -> float:
    """Run body() repeatedly for `seconds`; steps per second."""
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        steps += body()
    return steps / (time.perf_counter() - start)


def bench_inprocess(episodes, seconds: float, task: str = TASK) -> float:
    it = iter(range(10**12))

    def one() -> int:
        seed, actions = episodes[next(it) % len(episodes)]
        scenario, state = new_episode(task, "train", seed)
        observe(scenario, state)
        for action in actions:
            step(scenario, state, action)
        return len(actions)

    return timed(seconds, one)


def next_token(reply: env_pb2.StepResponse) -> bytes:
    """The next episode's token, which the last step of a planned episode must carry."""
    if not reply.HasField("next_episode"):
        raise RuntimeError("the plan's last action did not end its episode")
    return reply.next_episode.state_token


def bench_unary_1(address: str, episodes, seconds: float) -> tuple[float, float, float]:
    latencies: list[float] = []
    with EnvClient(address, options=OWN_CONNECTION) as client:
        stub = client.stub
        order = iter(range(10**12))
        current = next(order)
        token = stub.Reset(reset_pb(episodes[current][0])).state_token

        def one() -> int:
            nonlocal current, token
            _, actions = episodes[current % len(episodes)]
            current = next(order)
            following = reset_pb(episodes[current % len(episodes)][0])
            for action in actions:
                t0 = time.perf_counter()
                reply = stub.Step(env_pb2.StepRequest(state_token=token, action=action, next_episode=following))
                latencies.append(time.perf_counter() - t0)
                token = reply.state_token
            token = next_token(reply)
            return len(actions)

        rate = timed(seconds, one)
    return rate, percentile(latencies, 50) * 1e3, percentile(latencies, 99) * 1e3


async def _concurrent(address: str, seconds: float, clients: int, worker) -> float:
    # One channel (so one connection, so one worker) per client, as separate agents would have.
    agents = [AsyncEnvClient(address, options=OWN_CONNECTION) for _ in range(clients)]
    counts = [0] * clients
    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    await asyncio.gather(*(worker(agent.stub, i, counts, deadline) for i, agent in enumerate(agents)))
    elapsed = time.perf_counter() - start
    for agent in agents:
        await agent.close()
    return sum(counts) / elapsed


def bench_unary_n(address: str, episodes, seconds: float, clients: int) -> float:
    async def worker(stub, index, counts, deadline):
        n = index
        token = (await stub.Reset(reset_pb(episodes[n % len(episodes)][0]))).state_token
        while time.perf_counter() < deadline:
            _, actions = episodes[n % len(episodes)]
            n += clients
            following = reset_pb(episodes[n % len(episodes)][0])
            for action in actions:
                reply = await stub.Step(env_pb2.StepRequest(state_token=token, action=action, next_episode=following))
                token = reply.state_token
            token = next_token(reply)
            counts[index] += len(actions)

    return run_event_loop(_concurrent(address, seconds, clients, worker))


def bench_stream(address: str, episodes, seconds: float, clients: int) -> tuple[float, float]:
    latencies: list[float] = []

    async def worker(stub, index, counts, deadline):
        call = stub.Session()
        n = index
        await call.write(env_pb2.SessionRequest(reset=reset_pb(episodes[n % len(episodes)][0])))
        await call.read()
        while time.perf_counter() < deadline:
            _, actions = episodes[n % len(episodes)]
            n += clients
            following = reset_pb(episodes[n % len(episodes)][0])
            for action in actions:
                t0 = time.perf_counter()
                await call.write(env_pb2.SessionRequest(step=action, next_episode=following))
                reply = await call.read()
                if clients == 1:
                    latencies.append(time.perf_counter() - t0)
            next_token(reply.step)  # checks the stream went on with the next episode
            counts[index] += len(actions)
        await call.done_writing()

    rate = run_event_loop(_concurrent(address, seconds, clients, worker))
    return rate, (percentile(latencies, 50) * 1e3 if latencies else float("nan"))


async def spread_async_clients(address: str, count: int) -> list[AsyncEnvClient]:
    """Clients whose connections reach different workers where the server has them (as
    supportenv.v1.client.spread_clients does for the sync SDK): the kernel spreads
    connections by a hash, so without this two connections can land on one worker."""
    clients: list[AsyncEnvClient] = []
    seen: set[str] = set()
    for tries in range(1, 100):
        client = AsyncEnvClient(address, options=OWN_CONNECTION)
        call = client.stub.ListTasks(env_pb2.ListTasksRequest())
        worker = dict(await call.initial_metadata()).get(WORKER_METADATA, "")
        await call
        if worker not in seen or tries > 4 * count:
            seen.add(worker)
            clients.append(client)
            if len(clients) == count:
                break
        else:
            await client.close()
    return clients


class PlannedSlots:
    """The slots of a vector env, each replaying planned episodes one after another: the
    StepRequests of a round (each carrying its slot's next episode, next_episode) and the
    bookkeeping of their replies. Slot i starts on episode i of the pool (reset by the
    caller, whose tokens it is given); later episodes follow in pool order."""

    def __init__(self, episodes, first_tokens: list[bytes]) -> None:
        self._episodes, self._order = episodes, itertools.count()
        # [actions, token, position, the next episode's (seed, actions)]
        self._slots = [[self._next()[1], token, 0, None] for token in first_tokens]
        for slot in self._slots:
            slot[3] = self._next()

    def _next(self):
        return self._episodes[next(self._order) % len(self._episodes)]

    def requests(self, indexes) -> list[env_pb2.StepRequest]:
        slots = self._slots
        return [
            env_pb2.StepRequest(
                state_token=slots[i][1], action=slots[i][0][slots[i][2]], next_episode=reset_pb(slots[i][3][0])
            )
            for i in indexes
        ]

    def take(self, indexes, replies) -> None:
        for i, item in zip(indexes, replies, strict=True):
            slot = self._slots[i]
            if item.HasField("next_episode"):
                self._slots[i] = [slot[3][1], item.next_episode.state_token, 0, self._next()]
            else:
                slot[1], slot[2] = item.state_token, slot[2] + 1


def bench_batch(address: str, episodes, seconds: float, size: int, connections: int) -> float:
    """One client running `size` episodes as a vector env: one StepBatch per round, split
    over `connections` channels sent at once so that every server worker takes a share;
    each step carries its slot's next episode (next_episode), so an episode that ends is
    replaced in the same call. (asyncio: a sync channel's future() starts a thread per
    call, which would cost more than the call.)"""

    async def run() -> float:
        clients = await spread_async_clients(address, connections)
        stubs = [client.stub for client in clients]
        first = await stubs[0].ResetBatch(
            env_pb2.ResetBatchRequest(requests=[reset_pb(episodes[i % len(episodes)][0]) for i in range(size)])
        )
        slots = PlannedSlots(episodes, [item.state_token for item in first.responses])
        shards = [list(range(k, size, connections)) for k in range(connections)]
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            calls = [
                stub.StepBatch(env_pb2.StepBatchRequest(requests=slots.requests(shard)))
                for stub, shard in zip(stubs, shards, strict=True)
            ]
            for shard, reply in zip(shards, await asyncio.gather(*calls), strict=True):
                slots.take(shard, reply.responses)
            steps += size
        rate = steps / (time.perf_counter() - start)
        for client in clients:
            await client.close()
        return rate

    return run_event_loop(run())


def bench_vector_client(address: str, episodes, seconds: float, size: int, connections: int) -> float:
    """The SDK's VectorEnvClient over the same episodes: what a training loop that uses it
    gets, library Observations, infos and autoreset included (the batch figure above is the
    bare StepBatch, with no conversion on the client)."""
    plans = dict(episodes)
    seeds = itertools.cycle([seed for seed, _ in episodes])
    vector = VectorEnvClient(address, size, TASK, "train", seeds=seeds, connections=connections)
    try:
        vector.reset()
        position = [0] * size

        def one() -> int:
            _, _, _, _, infos = vector.step([plans[vector.seeds[i]][position[i]] for i in range(size)])
            for i, info in enumerate(infos):
                position[i] = 0 if "final_observation" in info else position[i] + 1
            return size

        return timed(seconds, one)
    finally:
        vector.close()


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its children (the workers), in MB."""
    total = 0.0
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    for p in pids:
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) / 1024
    return total


def bench_memory(service: ServiceProcess, address: str, episodes: int = 10_000, task: str = TASK) -> float:
    """Open `episodes` episodes of `task` (reset + one step each, tokens kept by the client) and
    report how much the server's memory grew: it keeps no episode, so it should not.
    A warm-up first fills the worker's bounded caches (live states, encoded turns, text analyses).
    On the expert task the step is a tool call (a look-up of the service's status)."""
    first = Action("classify_issue", category="billing") if task == TASK else use_tool("check_service_status")
    classify = convert.action_to_pb(first)

    def open_episodes(stub, seeds: range) -> list[bytes]:
        tokens = []
        for start in range(seeds.start, seeds.stop, 200):
            reply = stub.ResetBatch(
                env_pb2.ResetBatchRequest(
                    requests=[reset_pb(s, task) for s in range(start, min(start + 200, seeds.stop))]
                )
            )
            stepped = stub.StepBatch(
                env_pb2.StepBatchRequest(
                    requests=[env_pb2.StepRequest(state_token=r.state_token, action=classify) for r in reply.responses]
                )
            )
            tokens.extend(r.state_token for r in stepped.responses)
        return tokens

    with EnvClient(address, options=OWN_CONNECTION) as client:  # one worker takes every call
        stub = client.stub
        open_episodes(stub, range(10**6, 10**6 + WARM_UP_EPISODES))
        before = rss_mb(service.process.pid)
        tokens = open_episodes(stub, range(episodes))
        after = rss_mb(service.process.pid)
    assert len(tokens) == episodes
    return after - before


def openenv_figures(episodes, seconds: float, repeat: int) -> dict[str, list[float]]:
    """The OpenEnv adapter driven by OpenEnv's own client, when the adapter is installed."""
    try:
        from benchmarks.openenv_driver import measure  # the adapter and its client are optional
    except ImportError as exc:
        print(f"  (OpenEnv figures skipped: {exc})", file=sys.stderr)
        return {}
    return measure(episodes, seconds, CONCURRENCY, repeat)


def grpc_figures(library_episodes, seconds: float, run: int, memory_episodes: int) -> dict[str, float]:
    """One run of every gRPC figure against a fresh env service (default workers)."""
    wire_episodes = [(seed, [convert.action_to_pb(a) for a in actions]) for seed, actions in library_episodes]
    figures: dict[str, float] = {}
    service = start_service("env_service", {"SUPPORTENV_TOKEN_KEY": secrets.token_hex(32)})
    try:
        address = service.address
        rate, p50, p99 = bench_unary_1(address, wire_episodes, seconds)
        figures.update(unary_steps_per_s_1=rate, unary_p50_ms_1=p50, unary_p99_ms_1=p99)
        figures["unary_steps_per_s_64"] = bench_unary_n(address, wire_episodes, seconds, CONCURRENCY)
        rate, p50 = bench_stream(address, wire_episodes, seconds, 1)
        figures.update(stream_steps_per_s_1=rate, stream_p50_ms_1=p50)
        figures["stream_steps_per_s_64"] = bench_stream(address, wire_episodes, seconds, CONCURRENCY)[0]
        figures["batch64_steps_per_s"] = bench_batch(address, wire_episodes, seconds, 64, BATCH_CONNECTIONS)
        figures["vector_client64_steps_per_s"] = bench_vector_client(
            address, wire_episodes, seconds, 64, BATCH_CONNECTIONS
        )
        figures["server_rss_growth_mb_10k_episodes"] = bench_memory(service, address, memory_episodes)
        figures["server_rss_growth_mb_10k_expert_episodes"] = bench_memory(
            service, address, memory_episodes, EXPERT_TASK_ID
        )
    finally:
        service.stop()
    print(f"  run {run}: gRPC figures done", file=sys.stderr, flush=True)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="duration of each measurement")
    parser.add_argument("--repeat", type=int, default=1, help="runs of every figure; the median is reported")
    parser.add_argument("--json", type=Path, help="also write the figures (medians) here")
    parser.add_argument(
        "--memory-episodes", type=int, default=10_000, help="episodes opened by the memory figure (for quick checks)"
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    library_episodes = plan(POOL)
    # The expert task's episodes (tool calls, records and casework on the path) step in-process too.
    expert_episodes = plan(POOL, EXPERT_TASK_ID)
    runs: dict[str, list[float]] = {}
    for run in range(1, args.repeat + 1):
        runs.setdefault("inprocess_steps_per_s", []).append(bench_inprocess(library_episodes, args.seconds))
        runs.setdefault("inprocess_expert_steps_per_s", []).append(
            bench_inprocess(expert_episodes, args.seconds, EXPERT_TASK_ID)
        )
        for key, value in grpc_figures(library_episodes, args.seconds, run, args.memory_episodes).items():
            runs.setdefault(key, []).append(value)
    runs.update(openenv_figures(library_episodes, args.seconds, args.repeat))
    figures = {key: statistics.median(values) for key, values in runs.items()}
    print(
        f"throughput ({os.cpu_count()} CPUs, {args.seconds:g}s per figure, hard-task episodes incl. resets; "
        f"median of {args.repeat} run{'s' if args.repeat > 1 else ''})"
    )
    for key, value in figures.items():
        spread = f"   runs: {', '.join(f'{v:,.2f}' for v in runs[key])}" if args.repeat > 1 else ""
        print(f"  {key:<36}{value:>12,.2f}{spread}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({k: round(v, 3) for k, v in figures.items()}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
