"""docker-compose.yml and the Dockerfile, checked without a container engine: first their
structure, then every compose service's own command run as a local process with its own
environment, rewriting only what must differ on one machine (ports, the key path, host names)."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
import yaml

from env_service.tokens import KEY_ENV, KEY_FILE_ENV
from supportenv.v1 import convert, env_pb2, env_pb2_grpc
from supportenv.v1.health_probe import wait_healthy

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
CPU_BUDGET = 2.0
MEMORY_BUDGET = 8 * 1024**3
PORT_VARS = {"env": "SUPPORTENV_ENV_PORT", "grader": "SUPPORTENV_GRADER_PORT"}
ADDR_VARS = {"env": "SUPPORTENV_ENV_ADDR", "grader": "SUPPORTENV_GRADER_ADDR"}
WAIT_S = 60  # upper bound for any one child process, so the test can never hang


# --- reading the files ------------------------------------------------------------------


def argv(value: str | list) -> list[str]:
    return shlex.split(value) if isinstance(value, str) else [str(part) for part in value]


def command(service: str) -> list[str]:
    return argv(SERVICES[service]["command"])


def healthcheck(service: str) -> list[str]:
    test = SERVICES[service]["healthcheck"]["test"]
    if isinstance(test, str):  # the string form runs through a shell
        return shlex.split(test)
    kind, *rest = test
    return shlex.split(rest[0]) if kind == "CMD-SHELL" else rest


def environment(service: str) -> dict[str, str]:
    env = SERVICES[service].get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {key: str(value) for key, value in env.items()}


def volumes(service: str) -> dict[str, tuple[str, bool]]:
    """Mount target -> (source, read-only), from the short or the long syntax."""
    found = {}
    for volume in SERVICES[service].get("volumes", []):
        if isinstance(volume, str):
            source, target, *mode = volume.split(":")
            found[target] = (source, "ro" in mode)
        else:
            found[volume["target"]] = (volume["source"], bool(volume.get("read_only")))
    return found


def memory_bytes(value: str | int) -> int:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([bkmgt]?)i?b?", str(value).strip().lower())
    assert match, f"unreadable memory size {value!r}"
    number, unit = match.groups()
    return int(float(number) * 1024 ** "bkmgt".index(unit or "b"))


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    lines = [line for line in (ROOT / "Dockerfile").read_text().splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\s*\n", " ", "\n".join(lines))
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in joined.splitlines() if line.strip()]


def copy_sources() -> list[str]:
    sources = []
    for instruction, args in dockerfile():
        if instruction in ("COPY", "ADD"):
            parts = json.loads(args) if args.startswith("[") else args.split()
            parts = [part for part in parts if not part.startswith("--")]
            sources += parts[:-1]
    return sources


def modules() -> set[str]:
    """Every `python -m MODULE` in a compose command or healthcheck."""
    lines = [command(name) for name in SERVICES] + [healthcheck(n) for n in SERVICES if "healthcheck" in SERVICES[n]]
    return {line[line.index("-m") + 1] for line in lines if "-m" in line}


# --- static structure -------------------------------------------------------------------


def test_services_exist_with_healthchecks():
    assert "version" not in COMPOSE, "the compose spec has no top-level version"
    assert {"keygen", "env", "grader", "agent"} <= set(SERVICES)
    for name in ("env", "grader"):
        assert healthcheck(name)[:3] == ["python", "-m", "supportenv.v1.health_probe"], name


def test_resource_limits_fit_the_budget():
    cpus = {name: float(service["deploy"]["resources"]["limits"]["cpus"]) for name, service in SERVICES.items()}
    memory = {name: memory_bytes(s["deploy"]["resources"]["limits"]["memory"]) for name, s in SERVICES.items()}
    # The header promises the budget holds with `--scale env=2` too, so count env twice.
    assert sum(cpus.values()) + cpus["env"] <= CPU_BUDGET, cpus
    assert sum(memory.values()) + memory["env"] <= MEMORY_BUDGET, memory


def test_start_order():
    assert SERVICES["env"]["depends_on"]["keygen"]["condition"] == "service_completed_successfully"
    for name in ("env", "grader"):
        assert SERVICES["agent"]["depends_on"][name]["condition"] == "service_healthy"
    assert str(SERVICES["keygen"].get("restart")) == "no"


def test_one_image_for_every_service():
    builds = {(json.dumps(s.get("build"), sort_keys=True), s.get("image")) for s in SERVICES.values()}
    assert len(builds) == 1, f"services differ in build or image: {builds}"
    ((build, image),) = builds
    assert build != "null" and image, builds


def test_token_key_is_shared_through_a_volume_not_written_here():
    for name in SERVICES:
        assert KEY_ENV not in environment(name), f"{name} carries the token key in plain text"
    key_file = environment("env")[KEY_FILE_ENV]
    assert key_file in command("keygen"), "keygen must write the file env reads"
    (target,) = [t for t in volumes("env") if key_file.startswith(t.rstrip("/") + "/")]
    source, read_only = volumes("env")[target]
    assert read_only and volumes("keygen")[target] == (source, False)
    assert source in COMPOSE["volumes"], "a named volume, shared by every env replica"
    # A new named volume copies the image folder's owner: the Dockerfile must make it for the non-root user.
    assert any(target in args for instruction, args in dockerfile() if instruction == "RUN")


def test_dockerfile():
    instructions = dockerfile()
    assert [args for instruction, args in instructions if instruction == "FROM"] == ["python:3.11-slim"]
    users = [args for instruction, args in instructions if instruction == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0"), "the services must not run as root"
    runs = " ".join(args for instruction, args in instructions if instruction == "RUN")
    assert "--no-cache-dir -r requirements.txt" in runs and "requirements-dev" not in runs


def test_everything_copied_exists_and_is_in_the_build_context():
    ignored = [
        line.strip().strip("/")
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith(("#", "!"))
    ]
    for source in copy_sources():
        assert (ROOT / source).exists(), f"the Dockerfile copies {source}, which is not in the repository"
        assert not any(fnmatch.fnmatch(source.strip("/"), pattern) for pattern in ignored), f"{source} is ignored"


def test_every_module_in_a_command_exists_and_is_copied():
    copied = {source.strip("/") for source in copy_sources()}
    for module in modules():
        path = ROOT / module.replace(".", "/")
        assert path.with_suffix(".py").is_file() or (path / "__main__.py").is_file(), f"no module {module}"
        assert module.split(".")[0] in copied, f"the Dockerfile does not copy {module}"


# --- live: the composed commands as local processes -------------------------------------


def local(line: list[str]) -> list[str]:
    """The image's `python` is this interpreter here."""
    return [sys.executable if line[0] == "python" else line[0], *line[1:]]


def process_env(service: str, **overrides: str) -> dict[str, str]:
    env = {**os.environ, **environment(service), **overrides, "PYTHONPATH": str(ROOT)}
    env.pop(KEY_ENV, None)  # so the key really comes from the file
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


def with_port(line: list[str], old: str, new: int) -> list[str]:
    rewritten = [re.sub(rf":{old}$", f":{new}", part) for part in line]
    assert rewritten != line, f"{line} does not name port {old}"
    return rewritten


def local_address(service: str, value: str, ports: dict[str, int]) -> str:
    """`env:50051` or `dns:///env:50051` -> the same on 127.0.0.1 and the local port."""
    prefix, _, host_port = value.rpartition("/")
    host, port = host_port.rsplit(":", 1)
    assert (host, port) == (service, environment(service)[PORT_VARS[service]]), value
    return f"{prefix}/127.0.0.1:{ports[service]}" if prefix else f"127.0.0.1:{ports[service]}"


@pytest.fixture
def processes():
    """Popen objects the test started; whatever is still running at the end is killed."""
    started: list[subprocess.Popen] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=WAIT_S)


def run(line: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(local(line), env=env, cwd=ROOT, capture_output=True, text=True, timeout=WAIT_S)


def run_keygen(key_file: Path) -> str:
    line = [str(key_file) if part == environment("env")[KEY_FILE_ENV] else part for part in command("keygen")]
    done = run(line, process_env("keygen"))
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_composed_services_run(tmp_path, processes):
    key_file = tmp_path / "run" / "token.key"
    assert "wrote" in run_keygen(key_file)
    key = key_file.read_text()
    assert re.fullmatch(r"[0-9a-f]{64}\n", key) and key_file.stat().st_mode & 0o777 == 0o600
    assert "exists" in run_keygen(key_file) and key_file.read_text() == key, "a rerun must keep the key"

    ports = dict(zip(("env", "grader", "env-2"), free_ports(3), strict=True))
    for name, port in ports.items():
        service = name.split("-")[0]  # env-2: a second replica, as `--scale env=2` makes
        env = process_env(service, **{PORT_VARS[service]: str(port), "SUPPORTENV_HOST": "127.0.0.1"})
        if service == "env":
            env[KEY_FILE_ENV] = str(key_file)
        with open(tmp_path / f"{name}.log", "w") as log:
            processes.append(subprocess.Popen(local(command(service)), env=env, cwd=ROOT, stdout=log, stderr=log))
    for name, port in ports.items():
        try:
            wait_healthy(f"127.0.0.1:{port}", timeout=WAIT_S / 2)
        except TimeoutError as exc:
            pytest.fail(f"{exc}\n{(tmp_path / f'{name}.log').read_text()}")

    for service in ("env", "grader"):
        line = with_port(healthcheck(service), environment(service)[PORT_VARS[service]], ports[service])
        done = run(line, process_env(service))
        assert done.returncode == 0, done.stderr

    # Replicas share the key: an episode started on one continues on the other.
    with (
        grpc.insecure_channel(f"127.0.0.1:{ports['env']}") as one,
        grpc.insecure_channel(f"127.0.0.1:{ports['env-2']}") as two,
    ):
        task = env_pb2_grpc.EnvServiceStub(one).ListTasks(env_pb2.ListTasksRequest(), timeout=10).tasks[0].task_id
        reset = env_pb2_grpc.EnvServiceStub(one).Reset(
            env_pb2.ResetRequest(task_id=task, split=convert.SPLIT_TO_PB["test"], seed=0), timeout=10
        )
        env_pb2_grpc.EnvServiceStub(two).State(env_pb2.StateRequest(state_token=reset.state_token), timeout=10)

    agent = command("agent")
    agent[agent.index("--episodes") + 1] = "2"
    addresses = {ADDR_VARS[s]: local_address(s, environment("agent")[ADDR_VARS[s]], ports) for s in ADDR_VARS}
    done = run(agent, process_env("agent", **addresses))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "weighted score" in done.stdout

    for process in processes:  # graceful stop, as `docker compose down` asks for it
        process.send_signal(signal.SIGTERM)
    for process in processes:
        assert process.wait(timeout=10) == 0
