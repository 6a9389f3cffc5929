"""What both gRPC services share: error mapping, limits, health and reflection,
the ready line, and graceful shutdown on SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import functools
import inspect
import logging
import multiprocessing
import os
import queue
import signal
import socket
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

import grpc
from google.protobuf.message import DecodeError
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from supportenv.errors import EpisodeFinishedError, InvalidActionError, InvalidRequestError, UnknownTaskError
from supportenv.v1.limits import MAX_MESSAGE_BYTES, SHUTDOWN_GRACE_S

log = logging.getLogger("supportenv")

# Longest status message sent back, in UTF-8 bytes. Messages may quote the client's own
# input, and a message that outgrows gRPC's metadata limit reaches the client as a
# confusing RESOURCE_EXHAUSTED "Stream removed" instead of the real error.
MAX_DETAILS_BYTES = 1024


class LimitExceededError(ValueError):
    """A request is larger than a documented limit (RESOURCE_EXHAUSTED)."""


class NoEpisodeError(ValueError):
    """A Session stream stepped before any reset (FAILED_PRECONDITION)."""


_STATUS_FOR: tuple[tuple[type[BaseException], grpc.StatusCode], ...] = (
    (InvalidActionError, grpc.StatusCode.INVALID_ARGUMENT),
    (InvalidRequestError, grpc.StatusCode.INVALID_ARGUMENT),
    (UnknownTaskError, grpc.StatusCode.NOT_FOUND),
    (EpisodeFinishedError, grpc.StatusCode.FAILED_PRECONDITION),
    (NoEpisodeError, grpc.StatusCode.FAILED_PRECONDITION),
    (LimitExceededError, grpc.StatusCode.RESOURCE_EXHAUSTED),
)

R = TypeVar("R")


def status_for(exc: BaseException) -> grpc.StatusCode | None:
    for kind, code in _STATUS_FOR:
        if isinstance(exc, kind):
            return code
    return None


def details(exc: BaseException) -> str:
    """The status message for `exc`, clipped to MAX_DETAILS_BYTES."""
    text = str(exc)
    raw = text.encode()
    if len(raw) <= MAX_DETAILS_BYTES:
        return text
    return raw[:MAX_DETAILS_BYTES].decode(errors="ignore") + f"... ({len(raw)} bytes in all)"


def register_status(kind: type[BaseException], code: grpc.StatusCode) -> None:
    """Let a service map its own error type (e.g. a bad token) to a status code."""
    global _STATUS_FOR
    _STATUS_FOR = (*_STATUS_FOR, (kind, code))


def rpc(method: Callable[..., Awaitable[R]]) -> Callable[..., Awaitable[R]]:
    """For a handler of a unary request: refuse a request that did not parse (see
    own_request_checks) and turn library errors into the documented status codes, with
    their message. One wrapper for both, as each layer costs every call a coroutine."""

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> R:
        if type(request) is _Unparsable:  # tested here, so that a good request costs no extra coroutine
            await refuse_unparsable(request, context)
        try:
            return await method(self, request, context)
        except Exception as exc:
            code = status_for(exc)
            if code is None:
                raise
            await context.abort(code, details(exc))
            raise  # unreachable: abort raises

    return own_request_checks(wrapper)


class _Unparsable:
    """Stands in for request bytes that are not a valid message, so that the call is
    refused with INVALID_ARGUMENT (a failing deserializer would make it UNKNOWN)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _lenient(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if deserializer is None:
        return None

    def parse(data: bytes) -> Any:
        try:
            return deserializer(data)
        except DecodeError as exc:
            return _Unparsable(str(exc))

    return parse


async def refuse_unparsable(request: Any, context: grpc.aio.ServicerContext) -> None:
    """End the call with INVALID_ARGUMENT if `request` did not parse (see own_request_checks)."""
    if isinstance(request, _Unparsable):
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"malformed request: {request.reason}")


def own_request_checks(behavior: Callable[..., R]) -> Callable[..., R]:
    """Mark a handler that refuses unparsable requests itself (refuse_unparsable on each
    request of a stream, or rpc's own check), so that
    MalformedRequestInterceptor does not wrap it: on a stream, each wrapping layer costs
    every message an extra async-generator hop."""
    behavior.own_request_checks = True  # type: ignore[attr-defined]
    return behavior


async def _checked(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
    async for request in requests:
        await refuse_unparsable(request, context)
        yield request


def _refusing(behavior: Callable[..., Any], streaming_requests: bool) -> Callable[..., Any] | None:
    """`behavior`, refusing unparsable requests first; None if it is not an async handler."""
    if inspect.isasyncgenfunction(behavior):

        async def stream_out(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            if streaming_requests:
                request = _checked(request, context)
            else:
                await refuse_unparsable(request, context)
            async for response in behavior(request, context):
                yield response

        return stream_out
    if inspect.iscoroutinefunction(behavior):

        async def unary_out(request: Any, context: grpc.aio.ServicerContext) -> Any:
            if streaming_requests:
                request = _checked(request, context)
            else:
                await refuse_unparsable(request, context)
            return await behavior(request, context)

        return unary_out
    return None


def _sending_bytes(serializer: Callable[[Any], bytes] | None) -> Callable[[Any], bytes] | None:
    """`serializer`, except that a reply already serialized (bytes) is sent as it is."""
    if serializer is None:
        return None

    def serialize(response: Any) -> bytes:
        return response if type(response) is bytes else serializer(response)

    return serialize


class MalformedRequestInterceptor(grpc.aio.ServerInterceptor):
    """Answers request bytes that do not parse as the method's message with INVALID_ARGUMENT.
    It also lets a handler return its reply already serialized, as bytes (supportenv.v1.wire)."""

    def __init__(self) -> None:
        self._handlers: dict[str, grpc.RpcMethodHandler] = {}  # registered methods only

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        method = handler_call_details.method
        wrapped = self._handlers.get(method)
        if wrapped is None:
            handler = await continuation(handler_call_details)
            if handler is None:  # no such method: not cached, so unknown names cannot pile up
                return None
            wrapped = self._handlers[method] = self._wrap(handler)
        return wrapped

    @staticmethod
    def _wrap(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        kind = ("stream" if handler.request_streaming else "unary") + "_"
        kind += "stream" if handler.response_streaming else "unary"
        original = getattr(handler, kind)
        if not hasattr(handler, "_replace"):
            return handler
        lenient = _lenient(handler.request_deserializer)
        serialize = _sending_bytes(handler.response_serializer)
        if getattr(original, "own_request_checks", False):
            return handler._replace(request_deserializer=lenient, response_serializer=serialize)
        behavior = _refusing(original, handler.request_streaming)
        if behavior is None:
            return handler
        return handler._replace(request_deserializer=lenient, response_serializer=serialize, **{kind: behavior})


def server_args(
    description: str, port_env: str, default_port: int, argv: Sequence[str] | None, workers: bool = False
) -> argparse.Namespace:
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
    return args


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


EVENT_LOOP_ENV = "SUPPORTENV_EVENT_LOOP"


def event_loop_choice() -> str:
    """The event loop $SUPPORTENV_EVENT_LOOP names: uvloop (the default) or asyncio."""
    choice = os.environ.get(EVENT_LOOP_ENV, "").strip().lower() or "uvloop"
    if choice not in ("uvloop", "asyncio"):
        raise SystemExit(f"{EVENT_LOOP_ENV}={choice!r} is not an event loop: use uvloop or asyncio")
    return choice


def run_event_loop(main: Coroutine[Any, Any, R]) -> R:
    """asyncio.run(main), on uvloop where it is installed (a requirement on Linux and macOS):
    it cut the server CPU of a gRPC call by 10-25% on a 2-core VM (benchmarks/bench_grpc_floor.py).
    SUPPORTENV_EVENT_LOOP=asyncio chooses the standard loop."""
    try:
        choice = event_loop_choice()
    except SystemExit:
        main.close()
        raise
    if choice == "uvloop":
        try:
            import uvloop
        except ImportError:  # e.g. Windows, where uvloop does not exist
            pass
        else:
            return uvloop.run(main)
    return asyncio.run(main)


def run(name: str, main: Callable[[], Awaitable[None]], log_level: str) -> int:
    logging.basicConfig(
        level=log_level.upper(), stream=sys.stderr, format=f"%(asctime)s {name} %(levelname)s %(message)s"
    )
    run_event_loop(main())
    return 0


def run_workers(name: str, host: str, port: int, workers: int, target: Callable[..., None], args: tuple) -> int:
    """Serve from `workers` processes on one port (SO_REUSEPORT): the kernel spreads
    connections over them. `target(*args, host, port, ready_queue)` runs one worker.
    SIGTERM/SIGINT are passed on to the workers, which shut down gracefully."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # Hold the port (with SO_REUSEPORT, not listening) so "--port 0" picks one for all workers.
    holder = socket.socket(family, socket.SOCK_STREAM)
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    holder.bind((host, port))
    port = holder.getsockname()[1]
    context = multiprocessing.get_context("spawn")  # no fork: gRPC's threads do not survive it
    ready = context.Queue()
    processes = [
        context.Process(target=target, args=(*args, host, port, ready), name=f"{name}-{i}") for i in range(workers)
    ]
    for process in processes:
        process.start()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        for _ in processes:
            ready.get(timeout=60)
    except queue.Empty:
        stop.set()
        log.error("%s: workers did not start within 60s", name)
    holder.close()
    if not stop.is_set():
        print(f"{name} listening on {host}:{port} ({workers} workers)", flush=True)
    while not stop.wait(0.2):
        if any(p.exitcode is not None for p in processes):
            log.error("%s: a worker exited unexpectedly; stopping the others", name)
            break
    for process in processes:
        if process.is_alive():
            os.kill(process.pid, signal.SIGTERM)
    for process in processes:
        process.join(SHUTDOWN_GRACE_S + 5)
        if process.is_alive():
            process.kill()
            process.join()
    print(f"{name} stopped", flush=True)
    return 0 if stop.is_set() and all(p.exitcode == 0 for p in processes) else 1
