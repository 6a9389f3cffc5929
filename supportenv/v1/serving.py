"""What both gRPC services share: error mapping, limits, health and reflection,
the ready line, and graceful shutdown on SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from supportenv.errors import EpisodeFinishedError, InvalidActionError, InvalidRequestError, UnknownTaskError

# Documented limits: one place for the numbers a client can run into.
MAX_MESSAGE_BYTES = 1024 * 1024
SHUTDOWN_GRACE_S = 5.0

log = logging.getLogger("supportenv")

_STATUS_FOR: tuple[tuple[type[BaseException], grpc.StatusCode], ...] = (
    (InvalidActionError, grpc.StatusCode.INVALID_ARGUMENT),
    (InvalidRequestError, grpc.StatusCode.INVALID_ARGUMENT),
    (UnknownTaskError, grpc.StatusCode.NOT_FOUND),
    (EpisodeFinishedError, grpc.StatusCode.FAILED_PRECONDITION),
)

R = TypeVar("R")


def status_for(exc: BaseException) -> grpc.StatusCode | None:
    for kind, code in _STATUS_FOR:
        if isinstance(exc, kind):
            return code
    return None


def register_status(kind: type[BaseException], code: grpc.StatusCode) -> None:
    """Let a service map its own error type (e.g. a bad token) to a status code."""
    global _STATUS_FOR
    _STATUS_FOR = (*_STATUS_FOR, (kind, code))


def rpc(method: Callable[..., Awaitable[R]]) -> Callable[..., Awaitable[R]]:
    """Turn library errors into the documented status codes, with their message."""

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> R:
        try:
            return await method(self, request, context)
        except Exception as exc:
            code = status_for(exc)
            if code is None:
                raise
            await context.abort(code, str(exc))
            raise  # unreachable: abort raises

    return wrapper


def server_args(description: str, port_env: str, default_port: int, argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--host", default=os.environ.get("SUPPORTENV_HOST", "0.0.0.0"), help="bind address (env SUPPORTENV_HOST)"
    )
    parser.add_argument(
        "--port",
        type=int,
        default=int(os.environ.get(port_env, default_port)),
        help=f"port, 0 for any free port (env {port_env}; default {default_port})",
    )
    parser.add_argument("--log-level", default=os.environ.get("SUPPORTENV_LOG_LEVEL", "INFO"))
    return parser.parse_args(argv)


async def serve(
    name: str,
    host: str,
    port: int,
    register: Callable[[grpc.aio.Server], Sequence[str]],
) -> None:
    """Run a server until SIGTERM/SIGINT. `register` adds the servicers and returns
    their full service names (for health and reflection)."""
    server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            ("grpc.so_reuseport", 0),
        ]
    )
    service_names = list(register(server))
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection([*service_names, health.SERVICE_NAME, reflection.SERVICE_NAME], server)
    bound = server.add_insecure_port(f"{host}:{port}")
    if bound == 0:
        raise SystemExit(f"{name}: could not bind {host}:{port}")
    await server.start()
    for service in ("", *service_names):
        await health_servicer.set(service, health_pb2.HealthCheckResponse.SERVING)
    # The ready line: scripts and tests wait for it to learn the port.
    print(f"{name} listening on {host}:{bound}", flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("%s: shutting down; in-flight calls get %.0fs to finish", name, SHUTDOWN_GRACE_S)
    await health_servicer.enter_graceful_shutdown()
    await server.stop(SHUTDOWN_GRACE_S)
    print(f"{name} stopped", flush=True)


def run(name: str, main: Callable[[], Awaitable[None]], log_level: str) -> int:
    logging.basicConfig(
        level=log_level.upper(), stream=sys.stderr, format=f"%(asctime)s {name} %(levelname)s %(message)s"
    )
    asyncio.run(main())
    return 0
