"""One env_service worker process (a module of its own so that `spawn` can import it)."""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
from collections.abc import Callable

import grpc

from env_service.live import LiveStates
from env_service.servicer import EnvServicer
from env_service.sessions import SessionLimits
from env_service.tokens import TokenCodec
from supportenv.v1 import env_pb2, env_pb2_grpc
from supportenv.v1.event_loop import run_event_loop
from supportenv.v1.server import serve

NAME = "env_service"


def register(
    codec: TokenCodec, cache_size: int, session_limits: SessionLimits
) -> Callable[[grpc.aio.Server], list[str]]:
    def add(server: grpc.aio.Server) -> list[str]:
        servicer = EnvServicer(codec, LiveStates(cache_size), session_limits)
        env_pb2_grpc.add_EnvServiceServicer_to_server(servicer, server)
        return [env_pb2.DESCRIPTOR.services_by_name["EnvService"].full_name]

    return add


def worker(
    key: bytes,
    world_key: bytes | None,
    cache_size: int,
    session_limits: SessionLimits,
    log_level: str,
    host: str,
    port: int,
    ready: multiprocessing.Queue,
) -> None:
    """Serve on a port shared with the other workers; report readiness to the parent."""
    logging.basicConfig(
        level=log_level.upper(), stream=sys.stderr, format=f"%(asctime)s {NAME} %(levelname)s %(message)s"
    )
    add = register(TokenCodec(key, world_key=world_key), cache_size, session_limits)
    run_event_loop(serve(NAME, host, port, add, on_ready=lambda _port: ready.put(os.getpid())))
