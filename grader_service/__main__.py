"""python -m grader_service [--host H] [--port P]: run the grader service."""

from __future__ import annotations

import sys

import grpc

from grader_service.servicer import GraderServicer
from supportenv.cli import run_cli
from supportenv.v1 import grader_pb2, grader_pb2_grpc
from supportenv.v1.keys import load_world_key
from supportenv.v1.server import run, serve, server_args

DEFAULT_PORT = 50052
PROG = "python -m grader_service"


def main(argv: list[str] | None = None) -> int:
    args = server_args(__doc__ or "", "SUPPORTENV_GRADER_PORT", DEFAULT_PORT, argv, prog=PROG)

    async def start() -> None:
        servicer = GraderServicer(load_world_key("grader_service"))

        def register(server: grpc.aio.Server) -> list[str]:
            grader_pb2_grpc.add_GraderServiceServicer_to_server(servicer, server)
            return [grader_pb2.DESCRIPTOR.services_by_name["GraderService"].full_name]

        await serve("grader_service", args.host, args.port, register)

    return run("grader_service", start, args.log_level)


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
