"""What the env service's own work costs per step, without gRPC: its handlers called in process.

    python benchmarks/bench_handler.py [--seconds 3]

The same hard-task episodes as bench_throughput (the expert's actions, resets riding on
each episode's last step), through the servicer's real handlers: StepBatch of 64 (request
parsing, the step, the token, the encoded reply) and a Session stream (request parsing,
the step, the encoded reply; no token). Set against bench_grpc_floor's figures, this shows
how a served step's time splits between the environment and the transport. (Inside a
running server the same code runs slower: gRPC's work between steps leaves caches cold.)
"""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_throughput import POOL, PlannedSlots, plan, reset_pb
from env_service.servicer import EnvServicer
from env_service.tokens import TokenCodec
from supportenv import build
from supportenv.cli import run_cli
from supportenv.v1 import convert, env_pb2
from supportenv.v1.event_loop import run_event_loop

PROG = "python benchmarks/bench_handler.py"

BATCH = 64


def batched_us(servicer: EnvServicer, episodes, seconds: float) -> float:
    """Microseconds of handler time per step, StepBatch of BATCH (the client's side not counted)."""

    async def run() -> float:
        first = env_pb2.ResetBatchRequest(requests=[reset_pb(episodes[i][0]) for i in range(BATCH)])
        reply = env_pb2.ResetBatchResponse.FromString(await servicer.ResetBatch(first, None))
        slots = PlannedSlots(episodes, [item.state_token for item in reply.responses])
        spent, steps, start = 0.0, 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            request = env_pb2.StepBatchRequest(requests=slots.requests(range(BATCH))).SerializeToString()
            t0 = time.perf_counter()
            encoded = await servicer.StepBatch(env_pb2.StepBatchRequest.FromString(request), None)
            spent += time.perf_counter() - t0
            slots.take(range(BATCH), env_pb2.StepBatchResponse.FromString(encoded).responses)
            steps += BATCH
        return spent / steps * 1e6

    return run_event_loop(run())


def streamed_us(servicer: EnvServicer, episodes, seconds: float) -> float:
    """Microseconds of handler time per message of one Session stream, request parsing included."""
    messages = [env_pb2.SessionRequest(reset=reset_pb(episodes[0][0])).SerializeToString()]
    for n in range(len(episodes) * 4):
        following = reset_pb(episodes[(n + 1) % len(episodes)][0])
        for action in episodes[n % len(episodes)][1]:
            messages.append(env_pb2.SessionRequest(step=action, next_episode=following).SerializeToString())

    async def run() -> float:
        count, spent, start = 0, 0.0, time.perf_counter()
        while time.perf_counter() - start < seconds:

            async def requests():
                for data in messages:
                    yield env_pb2.SessionRequest.FromString(data)

            t0 = time.perf_counter()
            async for _ in servicer.Session(requests(), None):
                count += 1
            spent += time.perf_counter() - t0
        return spent / count * 1e6

    return run_event_loop(run())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="duration of each measurement")
    args = parser.parse_args(argv)
    episodes = [(seed, [convert.action_to_pb(a) for a in actions]) for seed, actions in plan(POOL)]
    servicer = EnvServicer(TokenCodec(secrets.token_bytes(32)))
    batch, stream = batched_us(servicer, episodes, args.seconds), streamed_us(servicer, episodes, args.seconds)
    print(f"env service handlers in process, no gRPC ({build()} build; hard-task episodes incl. resets)")
    print(f"  StepBatch of {BATCH}   {batch:8.1f} us per step")
    print(f"  Session stream   {stream:8.1f} us per message")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
