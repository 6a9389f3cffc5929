"""python -m env_service [--host H] [--port P] [--workers N]: run the environment service.

With more than one worker, N processes serve one port (SO_REUSEPORT) with one shared
token key; the service is stateless, so any worker can take any call."""

from __future__ import annotations

import os

# gRPC's newer EventEngine I/O costs this service 15-30% more CPU and latency per call than
# the classic polling engine (measured with `make bench` on a 2-core VM), so the service runs
# the classic one unless the operator chooses otherwise. Read when gRPC starts, so set it
# before anything imports grpc; the spawned workers inherit it.
CLASSIC_IO = "-event_engine_client,-event_engine_listener,-event_engine_for_all_other_endpoints"
os.environ.setdefault("GRPC_EXPERIMENTS", CLASSIC_IO)

import logging  # noqa: E402
import sys  # noqa: E402

from env_service.live import cache_size_from_env  # noqa: E402
from env_service.tokens import TokenCodec, load_key  # noqa: E402
from env_service.worker import NAME, register, worker  # noqa: E402
from supportenv.v1.serving import run, run_workers, serve, server_args  # noqa: E402

DEFAULT_PORT = 50051


def main(argv: list[str] | None = None) -> int:
    args = server_args(__doc__ or "", "SUPPORTENV_ENV_PORT", DEFAULT_PORT, argv, workers=True)
    cache_size = cache_size_from_env()
    if args.workers > 1:
        logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
        key = load_key()  # once, so every worker signs with the same key
        return run_workers(NAME, args.host, args.port, args.workers, worker, (key, cache_size, args.log_level))

    async def start() -> None:
        await serve(NAME, args.host, args.port, register(TokenCodec(load_key()), cache_size))

    return run(NAME, start, args.log_level)


if __name__ == "__main__":
    sys.exit(main())
