"""Running one gRPC service process: its command line (server_args), serving until
SIGTERM/SIGINT with health, reflection and the ready line (serve), and run (logging,
then the event loop). Several processes on one port: supportenv.v1.workers."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from supportenv.v1.event_loop import event_loop_choice, run_event_loop
from supportenv.v1.limits import MAX_MESSAGE_BYTES, SHUTDOWN_GRACE_S
from supportenv.v1.malformed import MalformedRequestInterceptor

log = logging.getLogger("supportenv")


def server_args(
    description: str,
    port_env: str,
    default_port: int,
    argv: Sequence[str] | None,
    workers: bool = False,
    prog: str | None = None,
) -> argparse.Namespace:
    """The command line of a service; `prog` is the command as a user types it
    (`python -m env_service`), for its usage line and errors."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument(
        "--host", default=os.environ.get("SUPPORTENV_HOST", "0.0.0.0"), help="bind address (env SUPPORTENV_HOST)"
    )
    parser.add_argument(
        "--port",
        type=int,
        default=int(os.environ.get(port_env, default_port)),
        help=f"port, 0 for any free port (env {port_env}; default {default_port})",
    )
    parser.add_argument(
        "--log-level",
        default=os.environ.get("SUPPORTENV_LOG_LEVEL", "INFO"),
        help="DEBUG, INFO, WARNING or ERROR (env SUPPORTENV_LOG_LEVEL; default INFO)",
    )
    if workers:
        parser.add_argument(
            "--workers",
            type=int,
            default=int(os.environ.get("SUPPORTENV_WORKERS", os.cpu_count() or 1)),
            help="worker processes sharing the port (env SUPPORTENV_WORKERS; default: the CPU count)",
        )
    args = parser.parse_args(argv)
    if workers and args.workers < 1:
        parser.error("--workers must be at least 1")
    event_loop_choice()  # a bad setting stops the service now, not in each worker
    connection_age_options()  # likewise
    return args


CONNECTION_AGE_ENV = "SUPPORTENV_MAX_CONNECTION_AGE_S"
CONNECTION_AGE_GRACE_ENV = "SUPPORTENV_MAX_CONNECTION_AGE_GRACE_S"
DEFAULT_CONNECTION_AGE_GRACE_S = 30.0


def connection_age_options(environ: dict[str, str] | os._Environ[str] = os.environ) -> list[tuple[str, int]]:
    """gRPC's connection-age options from the environment: off unless SUPPORTENV_MAX_CONNECTION_AGE_S
    is set. Then the server closes each connection gracefully after that age (calls in flight get
    the grace period), and the client reconnects, resolving the service name again: so replicas
    added behind one name (a Kubernetes autoscaler's) get their share of clients already
    connected. A Session stream still open after the grace ends with UNAVAILABLE, and SessionClient
    resumes it from its last token."""
    options = []
    for name, key, default in (
        (CONNECTION_AGE_ENV, "grpc.max_connection_age_ms", None),
        (CONNECTION_AGE_GRACE_ENV, "grpc.max_connection_age_grace_ms", DEFAULT_CONNECTION_AGE_GRACE_S),
    ):
        text = environ.get(name, "").strip()
        if not text:
            if default is None:
                return []  # no age: connections live as long as their clients keep them
            seconds = default
        else:
            try:
                seconds = float(text)
            except ValueError:
                seconds = -1.0
            if not 0.001 <= seconds < 1e9:  # a whole millisecond or more; refuses nan and inf too
                raise SystemExit(f"{name}={text!r} must be a number of seconds from 0.001 to 1e9")
        options.append((key, int(seconds * 1000)))
    return options


async def serve(
    name: str,
    host: str,
    port: int,
    register: Callable[[grpc.aio.Server], Sequence[str]],
    on_ready: Callable[[int], None] | None = None,
) -> None:
    """Run a server until SIGTERM/SIGINT. `register` adds the servicers and returns
    their full service names (for health and reflection). A worker of a multi-process
    server passes `on_ready`, shares the port (SO_REUSEPORT) and prints no ready line."""
    server = grpc.aio.server(
        interceptors=[MalformedRequestInterceptor()],
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            # Off for a lone server, so it can never silently share a port with another one.
            ("grpc.so_reuseport", 1 if on_ready else 0),
            *connection_age_options(),
        ],
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
    if on_ready:
        on_ready(bound)
    else:
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
    if not on_ready:
        print(f"{name} stopped", flush=True)


def run(name: str, main: Callable[[], Coroutine[Any, Any, None]], log_level: str) -> int:
    logging.basicConfig(
        level=log_level.upper(), stream=sys.stderr, format=f"%(asctime)s {name} %(levelname)s %(message)s"
    )
    run_event_loop(main())
    return 0
