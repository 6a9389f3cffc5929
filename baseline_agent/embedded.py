"""Start the env and grader services as child processes on free loopback ports, and
stop them again. Used when the runner gets no addresses, and by the tests."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from supportenv.v1.health_probe import wait_healthy

ROOT = Path(__file__).resolve().parent.parent
_READY = re.compile(r"listening on (\S+):(\d+)")


@dataclass
class ServiceProcess:
    module: str
    process: subprocess.Popen[str]
    address: str
    output: list[str] = field(default_factory=list)

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM (graceful), then SIGKILL if it does not exit in time."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def start_service(
    module: str,
    env: dict[str, str] | None = None,
    timeout: float = 20.0,
    port: int = 0,
    wait_ready: Callable[[str], None] = wait_healthy,
) -> ServiceProcess:
    """Run `python -m module --host 127.0.0.1 --port PORT` (0: any free port), wait for its
    ready line, then for `wait_ready(address)` (by default: the gRPC health check says SERVING)."""
    proc_env = {**os.environ, **(env or {})}
    proc_env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), proc_env.get("PYTHONPATH"))))
    process = subprocess.Popen(
        [sys.executable, "-m", module, "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=proc_env,
        cwd=ROOT,
    )
    assert process.stdout is not None
    output: list[str] = []
    found: list[str] = []
    ready = threading.Event()

    def pump() -> None:
        # Keep draining the pipe for the process's whole life so it never blocks on output.
        for line in process.stdout:  # type: ignore[union-attr]
            output.append(line.rstrip())
            match = _READY.search(line)
            if match and not found:
                found.append(f"127.0.0.1:{match.group(2)}")
                ready.set()
        ready.set()

    threading.Thread(target=pump, name=f"{module}-output", daemon=True).start()
    if not ready.wait(timeout) or not found:
        process.kill()
        process.wait()
        raise RuntimeError(f"{module} did not start within {timeout:.0f}s:\n" + "\n".join(output[-20:]))
    service = ServiceProcess(module, process, found[0], output)
    try:
        wait_ready(service.address)
    except BaseException:
        service.stop()
        raise
    return service


class EmbeddedServices:
    """Both services for the length of a `with` block, sharing a fresh token key and
    `environment`, settings for both (a world key, say) on top of this process's.

    `env_replicas` > 1 starts that many env services on one token key, so any of them can
    serve any step; `env_target` names them all for a client's round_robin."""

    def __init__(self, environment: dict[str, str] | None = None, env_replicas: int = 1) -> None:
        self.environment = dict(environment or {})
        self.env_replicas = env_replicas
        self.envs: list[ServiceProcess] = []
        self.env: ServiceProcess | None = None  # the first replica
        self.grader: ServiceProcess | None = None

    @property
    def env_target(self) -> str:
        """One address for every env replica: `ipv4:HOST:P1,HOST:P2`, or the one address."""
        addresses = [service.address for service in self.envs]
        return "ipv4:" + ",".join(addresses) if len(addresses) > 1 else addresses[0]

    def __enter__(self) -> EmbeddedServices:
        key = {"SUPPORTENV_TOKEN_KEY": secrets.token_hex(32)}
        try:
            for _ in range(self.env_replicas):
                self.envs.append(start_service("env_service", {**self.environment, **key}))
            self.env = self.envs[0]
            self.grader = start_service("grader_service", self.environment)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for service in (self.grader, *self.envs):
            if service is not None:
                service.stop()
