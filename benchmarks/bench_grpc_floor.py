"""What gRPC itself costs on this machine: a no-op echo service, no environment at all.

    python benchmarks/bench_grpc_floor.py [--calls 3000]

The server is a grpc.aio server in its own process, with env_service's settings (gRPC's
classic I/O, supportenv.v1.CLASSIC_IO, and uvloop); the client is this process, with the same
settings, as in the throughput benchmark: unary calls from a sync client, stream messages
from an asyncio client, each
carrying 1.5 KB each way (about one step). Every figure of the throughput benchmark pays
this floor once per call (unary) or per message (stream), on top of the environment's work.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from supportenv.v1 import CLASSIC_IO

os.environ.setdefault("GRPC_EXPERIMENTS", CLASSIC_IO)  # the client too, as in bench_throughput

import grpc

from supportenv.cli import run_cli
from supportenv.v1.event_loop import run_event_loop

PROG = "python benchmarks/bench_grpc_floor.py"

PAYLOAD = b"x" * 1500
OWN_CONNECTION = [("grpc.use_local_subchannel_pool", 1)]


def _identity(data: bytes) -> bytes:
    return data


def serve() -> None:
    """The echo server (run in a subprocess); prints its port, stops on stdin EOF."""

    async def unary(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return request

    async def stream(requests, context: grpc.aio.ServicerContext):
        async for request in requests:
            yield request

    async def main() -> None:
        handlers = {
            "Unary": grpc.unary_unary_rpc_method_handler(unary, _identity, _identity),
            "Stream": grpc.stream_stream_rpc_method_handler(stream, _identity, _identity),
        }
        server = grpc.aio.server()
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("Echo", handlers),))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        print(port, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        await server.stop(None)

    run_event_loop(main())


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(pid: int, calls: int, one_call) -> tuple[float, float, float]:
    """p50 latency (ms), server and client CPU per call (us)."""
    latencies = []
    server_cpu, client_cpu = cpu_seconds(pid), time.process_time()
    for _ in range(calls):
        t0 = time.perf_counter()
        one_call()
        latencies.append(time.perf_counter() - t0)
    server = (cpu_seconds(pid) - server_cpu) / calls * 1e6
    client = (time.process_time() - client_cpu) / calls * 1e6
    return statistics.median(latencies) * 1e3, server, client


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args(argv)
    server = subprocess.Popen(
        [sys.executable, "-c", "from benchmarks.bench_grpc_floor import serve; serve()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
        env={**os.environ, "GRPC_EXPERIMENTS": os.environ.get("GRPC_EXPERIMENTS", CLASSIC_IO)},
    )
    try:
        assert server.stdout is not None
        address = f"127.0.0.1:{server.stdout.readline().strip()}"
        with grpc.insecure_channel(address, options=OWN_CONNECTION) as channel:
            unary = channel.unary_unary("/Echo/Unary")
            for _ in range(200):
                unary(PAYLOAD)
            unary_figures = measure(server.pid, args.calls, lambda: unary(PAYLOAD))

        async def streamed() -> tuple[float, float, float]:
            async with grpc.aio.insecure_channel(address, options=OWN_CONNECTION) as channel:
                call = channel.stream_stream("/Echo/Stream")()
                for _ in range(200):
                    await call.write(PAYLOAD)
                    await call.read()
                latencies = []
                server_cpu, client_cpu = cpu_seconds(server.pid), time.process_time()
                for _ in range(args.calls):
                    t0 = time.perf_counter()
                    await call.write(PAYLOAD)
                    await call.read()
                    latencies.append(time.perf_counter() - t0)
                server_us = (cpu_seconds(server.pid) - server_cpu) / args.calls * 1e6
                client_us = (time.process_time() - client_cpu) / args.calls * 1e6
                await call.done_writing()
                return statistics.median(latencies) * 1e3, server_us, client_us

        stream_figures = run_event_loop(streamed())
    finally:
        if server.stdin:
            server.stdin.close()
        server.wait(timeout=30)
    print(f"gRPC floor: a no-op echo, 1.5 KB each way, {args.calls} calls ({os.cpu_count()} CPUs)")
    for name, (p50, server_us, client_us) in (("unary call", unary_figures), ("stream message", stream_figures)):
        print(f"  {name:<16} p50 {p50:.3f} ms   server CPU {server_us:,.0f} us   client CPU {client_us:,.0f} us")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
