"""What test_compose and test_kubernetes share: the project's resource budget, docker-compose.yml
as read by `docker compose`, and running a container's command as a local process."""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml

from env_service.token_keys import KEY_ENV
from supportenv.v1.health_probe import wait_healthy

ROOT = Path(__file__).resolve().parent.parent
# The whole default stack (two env replicas included) fits one card of 2 vCPUs and 8 GB.
CPU_BUDGET = 2.0
MEMORY_BUDGET = 8 * 1024**3
WAIT_S = 60  # upper bound for any one child process, so a test can never hang
PORT_VARS = {"env": "SUPPORTENV_ENV_PORT", "grader": "SUPPORTENV_GRADER_PORT", "openenv": "SUPPORTENV_OPENENV_PORT"}
ADDR_VARS = {"env": "SUPPORTENV_ENV_ADDR", "grader": "SUPPORTENV_GRADER_ADDR"}


# --- docker-compose.yml -----------------------------------------------------------------

COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]


def argv(value: str | list) -> list[str]:
    return shlex.split(value) if isinstance(value, str) else [str(part) for part in value]


def command(service: str) -> list[str]:
    return argv(SERVICES[service]["command"])


def declared_environment(service: str) -> dict[str, str]:
    """The service's environment as the file writes it, `${...}` and all."""
    env = SERVICES[service].get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {key: str(value) for key, value in env.items()}


_HOST_VARIABLE = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}")


def environment(service: str, host: Mapping[str, str] | None = None) -> dict[str, str]:
    """The service's environment on a host whose environment is `host` (default: nothing set)."""
    host = host or {}

    def fill(match: re.Match[str]) -> str:
        return host.get(match.group(1)) or match.group(2) or ""

    return {key: _HOST_VARIABLE.sub(fill, value) for key, value in declared_environment(service).items()}


def memory_bytes(value: str | int) -> int:
    """A compose memory size (`1536m`, `1g`) in bytes."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([bkmgt]?)i?b?", str(value).strip().lower())
    assert match, f"unreadable memory size {value!r}"
    number, unit = match.groups()
    return int(float(number) * 1024 ** "bkmgt".index(unit or "b"))


# --- containers as local processes ------------------------------------------------------


def local(line: list[str]) -> list[str]:
    """The image's `python` is this interpreter here."""
    return [sys.executable if line[0] == "python" else line[0], *line[1:]]


def child_env(container_env: Mapping[str, str]) -> dict[str, str]:
    """This process's environment with the container's on top, the repository importable."""
    env = {**os.environ, **container_env, "PYTHONPATH": str(ROOT)}
    if KEY_ENV not in container_env:
        env.pop(KEY_ENV, None)  # so the key really comes from where the container gets it
    return env


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:  # all held open at once, so the ports differ
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


# Imported by name, this registers the `processes` fixture in a test module.
@pytest.fixture(name="processes")
def processes_fixture():
    """Popen objects the test started; whatever is still running at the end is killed."""
    started: list[subprocess.Popen] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=WAIT_S)


def run(line: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(local(line), env=env, cwd=ROOT, capture_output=True, text=True, timeout=WAIT_S)


def start(processes: list[subprocess.Popen], line: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    """Start `line` in the background, its output in `log`; the fixture kills it at the end."""
    with open(log, "w") as out:
        process = subprocess.Popen(local(line), env=env, cwd=ROOT, stdout=out, stderr=out)
    processes.append(process)
    return process


def wait_serving(address: str, log: Path, service: str = "") -> None:
    """The gRPC health check until SERVING, else fail with the server's log."""
    try:
        wait_healthy(address, timeout=WAIT_S / 2, service=service)
    except TimeoutError as exc:
        pytest.fail(f"{exc}\n{log.read_text()}")
