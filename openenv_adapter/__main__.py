"""python -m openenv_adapter [--host H] [--port P]: serve supportenv through OpenEnv's own server.

Port 8000 by default (env SUPPORTENV_OPENENV_PORT); --port 0 picks a free port. Like the gRPC
services it prints `openenv_adapter listening on HOST:PORT` once the port is bound, and stops
gracefully on SIGTERM (open sessions get 5 s).
"""

from __future__ import annotations

import argparse
import os
import socket
import sys

import uvicorn

from supportenv.cli import run_cli

PROG = "python -m openenv_adapter"

PORT_ENV = "SUPPORTENV_OPENENV_PORT"
DEFAULT_PORT = 8000
GRACE_S = 5


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__)
    parser.add_argument(
        "--host", default=os.environ.get("SUPPORTENV_HOST", "0.0.0.0"), help="bind address (env SUPPORTENV_HOST)"
    )
    # A string default goes through type=int too, so a bad env value is a usage error, not a traceback.
    parser.add_argument(
        "--port",
        type=int,
        default=os.environ.get(PORT_ENV, str(DEFAULT_PORT)),
        help=f"port, 0 for any free port (env {PORT_ENV}; default {DEFAULT_PORT})",
    )
    parser.add_argument("--log-level", default=os.environ.get("SUPPORTENV_LOG_LEVEL", "info"))
    return parser.parse_args(argv)


def bind(host: str, port: int) -> socket.socket:
    """Bind and listen before serving, so --port 0 can be announced with the real port and
    early clients wait in the backlog instead of being refused."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = found[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(address)
    sock.listen(128)
    return sock


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from openenv_adapter.app import app  # after argument errors, which need no server

    sock = bind(args.host, args.port)
    print(f"openenv_adapter listening on {args.host}:{sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level=args.log_level.lower(), timeout_graceful_shutdown=GRACE_S)
    uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
