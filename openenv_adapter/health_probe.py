"""python -m openenv_adapter.health_probe URL [--timeout SECONDS]

GET URL (the server's /health): exit 0 if it answers {"status": "healthy"}, else print
why to stderr and exit 1. Written for container healthchecks (python:3.11-slim has no
curl); wait_healthy is the same check, retried until a deadline. Standard library only,
so a probe does not pay for importing the server.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request

PROG = "python -m openenv_adapter.health_probe"


def check(url: str, timeout: float = 2.0) -> str | None:
    """None if healthy, else a one-line reason."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as reply:
            body = json.loads(reply.read().decode("utf-8"))
    except (OSError, ValueError) as exc:  # URLError, refused, timeouts and bad JSON
        return f"{type(exc).__name__}: {exc}"
    status = body.get("status") if isinstance(body, dict) else None
    return None if status == "healthy" else f"status {status!r}"


def wait_healthy(url: str, timeout: float = 15.0) -> None:
    """Repeat the check until healthy; TimeoutError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while (problem := check(url, 1.0)) is not None:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{url} did not become healthy within {timeout:.0f}s: {problem}")
        time.sleep(0.05)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__)
    parser.add_argument("url", metavar="URL", help="e.g. http://127.0.0.1:8000/health")
    parser.add_argument("--timeout", type=float, default=2.0)
    args = parser.parse_args(argv)
    problem = check(args.url, args.timeout)
    if problem:
        print(f"unhealthy: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    # supportenv.cli.run_cli's Ctrl-C handling, inline: importing supportenv would cost the probe
    # 0.2 s every healthcheck interval. It prints nothing on stdout, so no reader can leave early.
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        sys.exit(130)
