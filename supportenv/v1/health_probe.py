"""python -m supportenv.v1.health_probe HOST:PORT [HOST:PORT ...] [--service NAME] [--timeout SECONDS] [--wait SECONDS]

One standard grpc.health.v1 Check per address: exit 0 if every one is SERVING, else print
why to stderr and exit 1. Written for container healthchecks (the image has no
grpc_health_probe binary). With --wait, each check is retried until it passes or the
seconds are up (what a script needs after starting a service in the background);
wait_healthy is that retried check.
"""

from __future__ import annotations

import argparse
import sys
import time

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from supportenv.cli import run_cli

PROG = "python -m supportenv.v1.health_probe"


def _problem(stub: health_pb2_grpc.HealthStub, service: str, timeout: float) -> str | None:
    """None if `service` is SERVING, else a one-line reason."""
    try:
        reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
    except grpc.RpcError as exc:
        # A failed sync call is also a grpc.Call, with a code and details.
        details = exc.details()  # type: ignore[attr-defined]
        return exc.code().name + (f": {details}" if details else "")  # type: ignore[attr-defined]
    if reply.status == health_pb2.HealthCheckResponse.SERVING:
        return None
    return "status " + health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)


def check(address: str, service: str = "", timeout: float = 2.0) -> str | None:
    """One Check against `address`: None if SERVING, else why not."""
    with grpc.insecure_channel(address) as channel:
        return _problem(health_pb2_grpc.HealthStub(channel), service, timeout)


def wait_healthy(address: str, timeout: float = 15.0, service: str = "") -> None:
    """Repeat the check on one channel until SERVING; TimeoutError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while (problem := _problem(stub, service, 1.0)) is not None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{address} did not become healthy within {timeout:.0f}s: {problem}")
            time.sleep(0.05)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__)
    parser.add_argument("addresses", nargs="+", metavar="HOST:PORT")
    parser.add_argument("--service", default="", help="service name to check (default: the whole server)")
    parser.add_argument("--timeout", type=float, default=2.0, help="deadline of the Check call in seconds")
    parser.add_argument(
        "--wait", type=float, default=0.0, metavar="SECONDS", help="retry until healthy for up to this long (default 0)"
    )
    args = parser.parse_args(argv)
    failed = 0
    for address in args.addresses:
        if args.wait > 0:
            try:
                wait_healthy(address, args.wait, args.service)
                continue
            except TimeoutError as exc:
                problem = str(exc)
        else:
            problem = check(address, args.service, args.timeout)
            if problem is None:
                continue
            problem = f"{address} {args.service or '(server)'} is not healthy: {problem}"
        print(problem, file=sys.stderr)
        failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
