"""One service port served by several processes (SO_REUSEPORT): start the workers,
announce them, pass SIGTERM/SIGINT on and stop them all if one dies."""

from __future__ import annotations

import logging
import multiprocessing
import os
import queue
import signal
import socket
import threading
from collections.abc import Callable

from supportenv.v1.limits import SHUTDOWN_GRACE_S

log = logging.getLogger("supportenv")


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
        if process.is_alive() and process.pid is not None:
            os.kill(process.pid, signal.SIGTERM)
    for process in processes:
        process.join(SHUTDOWN_GRACE_S + 5)
        if process.is_alive():
            process.kill()
            process.join()
    print(f"{name} stopped", flush=True)
    return 0 if stop.is_set() and all(p.exitcode == 0 for p in processes) else 1
