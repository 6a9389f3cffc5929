"""How MCP clients reach the server: stdio, and streamable HTTP, as the SDK provides them.

- `run_stdio(server, on_ready)`: one session over this process's stdin and stdout, until stdin ends.
  The SDK's stdio transport, fed by a reader of our own (`stdin_lines`) so that one Ctrl-C at a
  terminal stops it; a client gone mid-write ends it as a BrokenPipeError (run_cli's exit 141).
- `listen(host, port)` then `run_http(server, sock, log_level, on_ready)`: the SDK's streamable-HTTP session
  manager (a session per client, by its Mcp-Session-Id) at `HTTP_PATH`, served by uvicorn.
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
import os
import socket
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel

HTTP_PATH = "/mcp"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
SHUTDOWN_GRACE_S = 5  # open streams get this long to close on Ctrl-C / SIGTERM
_READ_CHUNK = 65536


# ---- stdio ----


async def stdin_lines(fd: int = 0) -> AsyncIterator[str]:
    """stdin's lines (UTF-8, as the SDK reads them), read by a daemon thread from the raw descriptor.
    The SDK's own reader (1.30) blocks in a worker thread the interpreter waits for, so Ctrl-C at a
    terminal did nothing until the next line or EOF (modelcontextprotocol/python-sdk#3551)."""
    send, receive = anyio.create_memory_object_stream[str](max_buffer_size=math.inf)
    token = anyio.lowlevel.current_token()

    def deliver(call: Any, *args: Any) -> bool:
        try:
            anyio.from_thread.run_sync(call, *args, token=token)
            return True
        except (RuntimeError, anyio.ClosedResourceError, anyio.BrokenResourceError):  # the session has ended
            return False

    def pump() -> None:
        pending = b""
        try:
            while chunk := os.read(fd, _READ_CHUNK):
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    if not deliver(send.send_nowait, line.decode("utf-8", "replace") + "\n"):
                        return
        except OSError:  # stdin closed under us: the same as its end
            pass
        if pending:
            deliver(send.send_nowait, pending.decode("utf-8", "replace"))
        deliver(send.close)

    threading.Thread(target=pump, name="mcp-stdin", daemon=True).start()
    async with receive:
        async for line in receive:
            yield line


async def serve_stdio(server: Any, on_ready: Callable[[], None]) -> None:
    from mcp.server.stdio import stdio_server

    # UTF-8 over the process's own stdout, as the SDK's default, but detached at the end: the SDK's
    # own wrapper closes sys.stdout when it is collected.
    stdout = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8")
    try:
        lines: Any = stdin_lines()  # an async iterable of lines is all the transport reads
        async with stdio_server(lines, anyio.wrap_file(stdout)) as (read_stream, write_stream):
            on_ready()
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        with contextlib.suppress(OSError, ValueError):  # a reader that left: run_cli handles it
            stdout.detach()


def _only_broken_pipes(exc: BaseException) -> bool:
    """Whether `exc` is a BrokenPipeError, or an exception group of nothing else (the client left)."""
    inner = getattr(exc, "exceptions", None)
    if inner is None:
        return isinstance(exc, BrokenPipeError)
    return all(_only_broken_pipes(e) for e in inner)


def run_stdio(server: Any, on_ready: Callable[[], None]) -> None:
    """Serve one session on stdin/stdout; `on_ready()` once it runs (and Ctrl-C gets the clean ending)."""
    try:
        anyio.run(serve_stdio, server, on_ready)
    except Exception as exc:
        if _only_broken_pipes(exc):  # raised out of the transport's task group: one, for run_cli
            raise BrokenPipeError from None
        raise


# ---- streamable HTTP ----


class _SessionEndNoise(logging.Filter):
    """Drops the SDK's (1.30) traceback when a client ends its HTTP session while its GET stream is
    open: the stream's reader is closed under it, which is how that session ends, not an error."""

    def filter(self, record: logging.LogRecord) -> bool:
        closed = record.exc_info is not None and isinstance(record.exc_info[1], anyio.ClosedResourceError)
        return not (closed and record.getMessage() == "Error in standalone SSE writer")


def listen(host: str, port: int) -> socket.socket:
    """A listening socket, bound before serving so that the ready line can name the real port."""
    family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    return socket.create_server(address, family=family)


def url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{HTTP_PATH}"


def http_app(server: Any, host: str, on_ready: Callable[[], None]) -> Any:
    """A Starlette app serving `server` at HTTP_PATH with the SDK's streamable-HTTP session manager;
    `on_ready()` once the manager runs (uvicorn then accepts what the listening socket queued)."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.routing import Route

    # On a loopback host, refuse other Host/Origin headers (DNS rebinding), as the SDK's FastMCP does.
    security = (
        TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
        if host in LOOPBACK
        else None
    )
    manager = StreamableHTTPSessionManager(app=server, security_settings=security)

    class Endpoint:  # an ASGI app (a class instance), so Starlette's Route hands it the raw request
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await manager.handle_request(scope, receive, send)

    @asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        async with manager.run():
            on_ready()
            yield

    route = Route(HTTP_PATH, endpoint=Endpoint(), methods=["GET", "POST", "DELETE"])
    return Starlette(routes=[route], lifespan=lifespan)


async def serve_http(server: Any, sock: socket.socket, log_level: str, on_ready: Callable[[], None]) -> None:
    import uvicorn

    logging.getLogger("mcp.server.streamable_http").addFilter(_SessionEndNoise())
    config = uvicorn.Config(
        http_app(server, sock.getsockname()[0], on_ready),
        log_level=log_level.lower(),
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )
    await uvicorn.Server(config).serve(sockets=[sock])


def run_http(server: Any, sock: socket.socket, log_level: str, on_ready: Callable[[], None]) -> None:
    """Serve until Ctrl-C or SIGTERM (uvicorn's graceful shutdown, then the signal's own ending)."""
    anyio.run(serve_http, server, sock, log_level, on_ready)
