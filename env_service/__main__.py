"""python -m env_service [--host H] [--port P]: run the environment service."""

from __future__ import annotations

import sys

import grpc

from env_service.servicer import EnvServicer
from env_service.tokens import TokenCodec, load_key
from supportenv.v1 import env_pb2, env_pb2_grpc
from supportenv.v1.serving import run, serve, server_args

DEFAULT_PORT = 50051


def main(argv: list[str] | None = None) -> int:
    args = server_args(__doc__ or "", "SUPPORTENV_ENV_PORT", DEFAULT_PORT, argv)

    async def start() -> None:
        codec = TokenCodec(load_key())

        def register(server: grpc.aio.Server) -> list[str]:
            env_pb2_grpc.add_EnvServiceServicer_to_server(EnvServicer(codec), server)
            return [env_pb2.DESCRIPTOR.services_by_name["EnvService"].full_name]

        await serve("env_service", args.host, args.port, register)

    return run("env_service", start, args.log_level)


if __name__ == "__main__":
    sys.exit(main())
