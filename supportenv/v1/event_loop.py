"""The event loop a service, or a benchmark's client, runs on: uvloop unless
$SUPPORTENV_EVENT_LOOP chooses asyncio's own."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any, TypeVar

R = TypeVar("R")

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
