"""python -m env_service [--host H] [--port P] [--workers N]: run the environment service.

With more than one worker, N processes serve one port (SO_REUSEPORT) with one shared
token key and world key; the service is stateless, so any worker can take any call."""

from __future__ import annotations

import os

from supportenv.v1 import CLASSIC_IO

# Read when gRPC starts, so set before anything imports grpc; the spawned workers inherit it.
os.environ.setdefault("GRPC_EXPERIMENTS", CLASSIC_IO)

import logging
import sys

from env_service.live import cache_size_from_env
from env_service.sessions import session_limits_from_env
from env_service.token_keys import load_key
from env_service.tokens import TokenCodec
from env_service.worker import NAME, register, worker
from supportenv.cli import run_cli
from supportenv.v1.keys import load_world_key
from supportenv.v1.server import run, serve, server_args
from supportenv.v1.workers import run_workers

DEFAULT_PORT = 50051
PROG = "python -m env_service"


def main(argv: list[str] | None = None) -> int:
    args = server_args(__doc__ or "", "SUPPORTENV_ENV_PORT", DEFAULT_PORT, argv, workers=True, prog=PROG)
    cache_size, session_limits = cache_size_from_env(), session_limits_from_env()
    if args.workers > 1:
        logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
        key, world_key = load_key(), load_world_key(NAME)  # once, so every worker signs with the same key
        worker_args = (key, world_key, cache_size, session_limits, args.log_level)
        return run_workers(NAME, args.host, args.port, args.workers, worker, worker_args)

    async def start() -> None:
        codec = TokenCodec(load_key(), world_key=load_world_key(NAME))
        await serve(NAME, args.host, args.port, register(codec, cache_size, session_limits))

    return run(NAME, start, args.log_level)


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
