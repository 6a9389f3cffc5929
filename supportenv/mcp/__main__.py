"""`python -m supportenv.mcp`: serve the environment to MCP clients, one episode per session.

    python -m supportenv.mcp                                     # stdio (what an MCP client launches)
    python -m supportenv.mcp --transport streamable-http --port 8001   # http://127.0.0.1:8001/mcp
    python -m supportenv.mcp --env-address 127.0.0.1:50051 [--grader-address 127.0.0.1:50052]

Logs and the ready line go to stderr (on stdio, stdout carries the protocol).
"""

from __future__ import annotations

import argparse
import logging
import sys

from supportenv.cli import run_cli
from supportenv.mcp.backends import SERVICE_TIMEOUT_S, backend_factory, describe
from supportenv.mcp.server import make_server
from supportenv.mcp.transports import HTTP_PATH, listen, run_http, run_stdio, url

PROG = "python -m supportenv.mcp"
STDIO, HTTP = "stdio", "streamable-http"
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8001  # 8000 is the OpenEnv adapter's


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Serve the customer-support environment over MCP (Model Context Protocol): one episode per "
            "session, played through tools: reset(task_id, split, seed), one tool per action kind and per "
            "help-desk tool, and grade()."
        ),
        epilog=(
            f"Episodes run in this process unless --env-address names an env service. Over HTTP the endpoint "
            f"is http://HOST:PORT{HTTP_PATH}; on a loopback host only loopback Host/Origin headers are accepted."
        ),
    )
    parser.add_argument(
        "--transport", choices=(STDIO, HTTP), default=STDIO, help=f"how clients connect (default {STDIO})"
    )
    parser.add_argument("--host", help=f"{HTTP} only: the address to listen on (default {DEFAULT_HOST})")
    parser.add_argument(
        "--port", type=int, help=f"{HTTP} only: the port to listen on (default {DEFAULT_PORT}; 0 picks a free one)"
    )
    parser.add_argument(
        "--env-address",
        metavar="HOST:PORT",
        help="play the episodes on this gRPC env service instead of in-process",
    )
    parser.add_argument(
        "--grader-address",
        metavar="HOST:PORT",
        help="with --env-address: grade with this gRPC grader service (default: replay the actions with the "
        "library's grader, which is right only for a service without a world key)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=SERVICE_TIMEOUT_S,
        metavar="S",
        help=f"with --env-address: deadline of each service call, in seconds (default {SERVICE_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--log-level",
        default="WARNING",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        type=str.upper,
        help="logging threshold; logs go to stderr (default WARNING)",
    )
    return parser


def _say(line: str) -> None:
    print(f"{PROG}: {line}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.transport == STDIO and (args.host is not None or args.port is not None):
        parser.error(f"--host and --port are for --transport {HTTP}")
    if args.grader_address and not args.env_address:
        parser.error("--grader-address needs --env-address (in-process episodes are graded in-process)")
    logging.basicConfig(stream=sys.stderr, level=args.log_level, format="%(levelname)s %(name)s: %(message)s")
    server = make_server(backend_factory(args.env_address, args.grader_address, args.timeout))
    where = describe(args.env_address, args.grader_address)
    if args.transport == STDIO:
        # The ready line once the server runs: a Ctrl-C from then on gets the clean ending.
        run_stdio(server, lambda: _say(f"serving MCP over stdio, one episode per session; {where}"))
        return 0
    host, port = args.host or DEFAULT_HOST, DEFAULT_PORT if args.port is None else args.port
    try:
        sock = listen(host, port)
    except OSError as exc:
        parser.exit(2, f"{PROG}: cannot listen on {host}:{port}: {exc.strerror or exc}\n")
    ready = f"serving MCP over streamable HTTP at {url(sock)}; {where} (Ctrl-C stops)"
    run_http(server, sock, args.log_level, lambda: _say(ready))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
