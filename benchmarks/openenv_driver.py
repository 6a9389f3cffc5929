"""The OpenEnv side of the throughput benchmark: the OpenEnv adapter (openenv's own
server) driven by OpenEnv's own client, over the same library and the same episodes."""

from __future__ import annotations

import asyncio
import time
import urllib.request
from collections.abc import Sequence

from baseline_agent.embedded import start_service
from openenv_adapter.app import MAX_SESSIONS_ENV
from openenv_adapter.client import SupportEnvClient
from openenv_adapter.models import SupportAction
from supportenv.actions import Action
from supportenv.v1.event_loop import run_event_loop

TASK = "end_to_end_resolution"
START_TIMEOUT_S = 180.0  # openenv imports gradio at start-up


def _http_ready(address: str, timeout: float = START_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"http://{address}/health", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"openenv adapter at {address} not healthy within {timeout:.0f}s")
        time.sleep(0.2)


async def _run(base_url: str, episodes, seconds: float, sessions: int) -> float:
    counts = [0] * sessions
    deadline = time.perf_counter() + seconds

    async def session(index: int) -> None:
        async with SupportEnvClient(base_url=base_url) as env:
            n = index
            while time.perf_counter() < deadline:
                seed, actions = episodes[n % len(episodes)]
                n += sessions
                await env.reset(task_id=TASK, split="train", seed=seed)
                for action in actions:
                    await env.step(action)
                counts[index] += len(actions)

    start = time.perf_counter()
    await asyncio.gather(*(session(i) for i in range(sessions)))
    return sum(counts) / (time.perf_counter() - start)


def measure(
    episodes: Sequence[tuple[int, list[Action]]], seconds: float, concurrency: int, repeat: int = 1
) -> dict[str, list[float]]:
    """Steps per second for 1 and `concurrency` sessions, `repeat` runs of each (one adapter)."""
    wire = [(seed, [SupportAction.from_library(a) for a in actions]) for seed, actions in episodes]
    # Room for every benchmark session (the adapter's default is 32).
    env = {MAX_SESSIONS_ENV: str(max(concurrency, 1) + 8)}
    adapter = start_service("openenv_adapter", env, timeout=START_TIMEOUT_S, wait_ready=_http_ready)
    try:
        base_url = f"http://{adapter.address}"
        figures: dict[str, list[float]] = {"openenv_ws_steps_per_s_1": [], f"openenv_ws_steps_per_s_{concurrency}": []}
        for _ in range(repeat):
            figures["openenv_ws_steps_per_s_1"].append(run_event_loop(_run(base_url, wire, seconds, 1)))
            figures[f"openenv_ws_steps_per_s_{concurrency}"].append(
                run_event_loop(_run(base_url, wire, seconds, concurrency))
            )
        return figures
    finally:
        adapter.stop()
