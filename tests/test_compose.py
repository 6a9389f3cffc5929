"""docker-compose.yml and the Dockerfiles, checked without a container engine: first their
structure, then every compose service's own command run as a local process with its own
environment, rewriting only what must differ on one machine (ports, the key path, host names).
`${VAR:-default}` in the compose file is filled in from a host environment, as `docker compose` does.

The default profile is the gRPC stack (one image, ./Dockerfile); the `openenv` profile is the
OpenEnv adapter (Dockerfile.openenv), an alternative that runs on its own."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import secrets
import shlex
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import grpc
import pytest

from env_service.token_keys import KEY_ENV, KEY_FILE_ENV
from openenv_adapter.health_probe import wait_healthy as wait_http
from supportenv import expert
from supportenv.episode import advance
from supportenv.replay import new_episode
from supportenv.v1 import convert, env_pb2, env_pb2_grpc
from supportenv.v1.client import GraderClient
from supportenv.v1.keys import WORLD_KEY_ENV, WORLD_KEY_FILE_ENV
from supportenv.world import ticket_id
from tests.deployment import (
    ADDR_VARS,
    COMPOSE,
    CPU_BUDGET,
    MEMORY_BUDGET,
    PORT_VARS,
    ROOT,
    SERVICES,
    WAIT_S,
    child_env,
    command,
    declared_environment,
    environment,
    free_ports,
    memory_bytes,
    processes_fixture,  # noqa: F401 (the `processes` fixture)
    run,
    start,
    wait_serving,
)

# Services without `profiles` are the default stack; a profile's services run instead of it.
DEFAULT = sorted(name for name, service in SERVICES.items() if not service.get("profiles"))
PROFILES = sorted({profile for service in SERVICES.values() for profile in service.get("profiles", [])})
OPENENV_WAIT_S = 180  # openenv imports gradio at startup: slow on a busy 2-core machine


# --- reading the files ------------------------------------------------------------------


def healthcheck(service: str) -> list[str]:
    test = SERVICES[service]["healthcheck"]["test"]
    if isinstance(test, str):  # the string form runs through a shell
        return shlex.split(test)
    kind, *rest = test
    return shlex.split(rest[0]) if kind == "CMD-SHELL" else rest


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


def profile(name: str) -> list[str]:
    return sorted(n for n, service in SERVICES.items() if name in service.get("profiles", []))


def dockerfile_of(service: str) -> str:
    build = SERVICES[service]["build"]
    return build.get("dockerfile", "Dockerfile") if isinstance(build, dict) else "Dockerfile"


DOCKERFILES = sorted({dockerfile_of(name) for name in SERVICES})


def dockerfile(name: str = "Dockerfile") -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    lines = [line for line in (ROOT / name).read_text().splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\s*\n", " ", "\n".join(lines))
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in joined.splitlines() if line.strip()]


def copy_sources(name: str = "Dockerfile") -> list[str]:
    """What the Dockerfile copies from the build context (not what a stage copies from another)."""
    sources = []
    for instruction, args in dockerfile(name):
        if instruction in ("COPY", "ADD") and not args.startswith("--from="):
            parts = json.loads(args) if args.startswith("[") else args.split()
            parts = [part for part in parts if not part.startswith("--")]
            sources += parts[:-1]
    return sources


def stages(name: str) -> list[list[tuple[str, str]]]:
    """The Dockerfile's stages, each its instructions from its FROM on."""
    found: list[list[tuple[str, str]]] = []
    for instruction, args in dockerfile(name):
        if instruction == "FROM":
            found.append([])
        found[-1].append((instruction, args))
    return found


def modules() -> set[tuple[str, str]]:
    """(service, MODULE) for every `python -m MODULE` in a compose command or healthcheck."""
    checked = [name for name in SERVICES if "healthcheck" in SERVICES[name]]
    lines = [(name, command(name)) for name in SERVICES] + [(name, healthcheck(name)) for name in checked]
    return {(name, line[line.index("-m") + 1]) for name, line in lines if "-m" in line}


def image_command(name: str, instruction: str = "CMD") -> list[str]:
    """The image's last CMD or HEALTHCHECK command, as an argv (the shell form runs under sh -c)."""
    (args,) = [args for found, args in dockerfile(name) if found == instruction][-1:]
    if instruction == "HEALTHCHECK":
        args = args.split(" CMD ", 1)[1]
    return json.loads(args) if args.startswith("[") else ["sh", "-c", args]


# --- static structure -------------------------------------------------------------------


def test_services_exist_with_healthchecks():
    assert "version" not in COMPOSE, "the compose spec has no top-level version"
    assert {"keygen", "env", "grader", "agent"} <= set(DEFAULT)
    assert profile("openenv") == ["openenv"], "the OpenEnv adapter runs only in its own profile"
    for name in ("env", "grader"):
        assert healthcheck(name)[:3] == ["python", "-m", "supportenv.v1.health_probe"], name
    port = environment("openenv")[PORT_VARS["openenv"]]
    assert healthcheck("openenv") == ["python", "-m", "openenv_adapter.health_probe", f"http://127.0.0.1:{port}/health"]
    assert SERVICES["openenv"]["ports"] == [f"{port}:{port}"] and port == "8000"


def limits(names: list[str]) -> tuple[dict[str, float], dict[str, int]]:
    resources = {name: SERVICES[name]["deploy"]["resources"]["limits"] for name in names}
    return (
        {name: float(limit["cpus"]) for name, limit in resources.items()},
        {name: memory_bytes(limit["memory"]) for name, limit in resources.items()},
    )


def test_resource_limits_fit_the_budget():
    cpus, memory = limits(DEFAULT)
    # The header promises the budget holds with `--scale env=2` too, so count env twice.
    assert sum(cpus.values()) + cpus["env"] <= CPU_BUDGET, cpus
    assert sum(memory.values()) + memory["env"] <= MEMORY_BUDGET, memory
    # A profile runs instead of the default stack (`docker compose --profile P up SERVICE`): its own budget.
    for name in PROFILES:
        cpus, memory = limits(profile(name))
        assert sum(cpus.values()) <= CPU_BUDGET and sum(memory.values()) <= MEMORY_BUDGET, (name, cpus, memory)


def test_start_order():
    assert SERVICES["env"]["depends_on"]["keygen"]["condition"] == "service_completed_successfully"
    for name in ("env", "grader"):
        assert SERVICES["agent"]["depends_on"][name]["condition"] == "service_healthy"
    assert str(SERVICES["keygen"].get("restart")) == "no"


def test_one_image_for_the_default_stack_and_its_own_for_openenv():
    builds = {(json.dumps(SERVICES[n].get("build"), sort_keys=True), SERVICES[n].get("image")) for n in DEFAULT}
    assert len(builds) == 1, f"services differ in build or image: {builds}"
    ((build, image),) = builds
    assert build != "null" and image, builds
    assert dockerfile_of("openenv") == "Dockerfile.openenv"
    assert SERVICES["openenv"]["image"] not in (image, None), "building one image must not retag the other"


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


def test_world_key_reaches_env_and_grader_from_the_host_and_is_absent_by_default():
    declared = {name: declared_environment(name) for name in SERVICES}
    assert declared["env"][WORLD_KEY_ENV] == declared["grader"][WORLD_KEY_ENV] == f"${{{WORLD_KEY_ENV}:-}}"
    for name in SERVICES:
        assert WORLD_KEY_FILE_ENV not in declared[name], name
        if name not in ("env", "grader"):
            assert WORLD_KEY_ENV not in declared[name], f"only env and grader hold the world key, not {name}"
    assert environment("env")[WORLD_KEY_ENV] == environment("grader")[WORLD_KEY_ENV] == ""
    sealed = {WORLD_KEY_ENV: "w" * 32}
    assert environment("env", sealed)[WORLD_KEY_ENV] == environment("grader", sealed)[WORLD_KEY_ENV] == "w" * 32


# Each image installs exactly one requirements file: the gRPC image never gets openenv.
REQUIREMENTS = {"Dockerfile": "requirements.txt", "Dockerfile.openenv": "requirements-openenv.txt"}


@pytest.mark.parametrize("name", sorted(REQUIREMENTS))
def test_dockerfile(name):
    assert sorted(REQUIREMENTS) == DOCKERFILES
    image = stages(name)[-1]  # the stage that runs
    assert image[0] == ("FROM", "python:3.11-slim")
    assert all(args.startswith("python:3.11-slim") for stage in stages(name) for _, args in stage[:1])
    users = [args for instruction, args in image if instruction == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0"), "the services must not run as root"
    runs = " ".join(args for instruction, args in image if instruction == "RUN")
    assert re.findall(r"pip install --no-cache-dir -r (\S+)", runs) == [REQUIREMENTS[name]], runs


def test_the_grpc_image_ships_the_compiled_build_and_no_compiler():
    """The build stage compiles the project's wheel (setup.py, mypyc); the image installs it, with
    no C compiler, and copies no source of the packages the wheel holds, which would shadow it."""
    build, image = stages("Dockerfile")
    assert build[0] == ("FROM", "python:3.11-slim AS build")
    build_runs = " ".join(args for instruction, args in build if instruction == "RUN")
    assert "gcc" in build_runs and "pip wheel --no-cache-dir --no-deps --wheel-dir /wheels ." in build_runs
    built = {part.strip("/") for instruction, args in build if instruction == "COPY" for part in args.split()[:-1]}
    assert {"setup.py", "pyproject.toml", "supportenv", "env_service"} <= built
    image_runs = " ".join(args for instruction, args in image if instruction == "RUN")
    assert "gcc" not in image_runs
    assert ("COPY", "--from=build /wheels/ /tmp/wheels/") in image
    assert "pip install --no-cache-dir --no-deps /tmp/wheels/*.whl" in image_runs
    packages = {"supportenv", "env_service", "grader_service", "baseline_agent", "openenv_adapter"}
    copied = {args.split()[0].strip("/") for instruction, args in image if instruction == "COPY"}
    assert not copied & packages, "a copied package's source would be imported before the compiled wheel"


def test_everything_copied_exists_and_is_in_the_build_context():
    ignored = [
        line.strip().strip("/")
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith(("#", "!"))
    ]
    for name in DOCKERFILES:
        for source in copy_sources(name):
            assert (ROOT / source).exists(), f"{name} copies {source}, which is not in the repository"
            assert not any(fnmatch.fnmatch(source.strip("/"), pattern) for pattern in ignored), f"{source} is ignored"


def test_every_module_in_a_command_exists_and_is_copied():
    for service, module in modules():
        path = ROOT / module.replace(".", "/")
        assert path.with_suffix(".py").is_file() or (path / "__main__.py").is_file(), f"no module {module}"
        copied = {source.strip("/") for source in copy_sources(dockerfile_of(service))}
        assert module.split(".")[0] in copied, f"{dockerfile_of(service)} does not copy {module}"


# --- live: the composed commands as local processes -------------------------------------


def process_env(service: str, host: Mapping[str, str] | None = None, **overrides: str) -> dict[str, str]:
    return child_env({**environment(service, host), **overrides})


def with_port(line: list[str], old: str, new: int) -> list[str]:
    rewritten = [re.sub(rf":{old}(?=$|/)", f":{new}", part) for part in line]
    assert rewritten != line, f"{line} does not name port {old}"
    return rewritten


def local_address(service: str, value: str, ports: dict[str, int]) -> str:
    """`env:50051` or `dns:///env:50051` -> the same on 127.0.0.1 and the local port."""
    prefix, _, host_port = value.rpartition("/")
    host, port = host_port.rsplit(":", 1)
    assert (host, port) == (service, environment(service)[PORT_VARS[service]]), value
    return f"{prefix}/127.0.0.1:{ports[service]}" if prefix else f"127.0.0.1:{ports[service]}"


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
    world_key = secrets.token_hex(32)  # sealed, as an evaluation runs it: the host sets the world key
    host = {WORLD_KEY_ENV: world_key}
    for name, port in ports.items():
        service = name.split("-")[0]  # env-2: a second replica, as `--scale env=2` makes
        env = process_env(service, host, **{PORT_VARS[service]: str(port), "SUPPORTENV_HOST": "127.0.0.1"})
        if service == "env":
            env[KEY_FILE_ENV] = str(key_file)
        start(processes, command(service), env, tmp_path / f"{name}.log")
    for name, port in ports.items():
        wait_serving(f"127.0.0.1:{port}", tmp_path / f"{name}.log")

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
    # Both hold the world key: the env's tickets are the sealed world's, and the grader scores that world.
    assert reset.observation.ticket_id == ticket_id(task, "test", 0, world_key.encode())
    scenario, state = new_episode(task, "test", 0, world_key=world_key.encode())
    while not state.done:
        advance(scenario, state, expert.expert_action(scenario, state, task))
    with GraderClient(f"127.0.0.1:{ports['grader']}") as grader:
        assert grader.grade(task, "test", 0, state.actions).score >= 0.9

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


def wait_http_healthy(url: str, log: Path) -> None:
    try:
        wait_http(url, timeout=OPENENV_WAIT_S)
    except TimeoutError as exc:
        pytest.fail(f"{exc}\n{log.read_text()}")


def stop_gracefully(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGTERM)
    # uvicorn shuts down cleanly, then re-raises SIGTERM: the exit status is SIGTERM's.
    assert process.wait(timeout=30) in (0, -signal.SIGTERM)


def test_composed_openenv_service_runs(tmp_path, processes):
    (port,) = free_ports(1)
    env = process_env("openenv", **{PORT_VARS["openenv"]: str(port), "SUPPORTENV_HOST": "127.0.0.1"})
    log = tmp_path / "openenv.log"
    start(processes, command("openenv"), env, log)
    wait_http_healthy(f"http://127.0.0.1:{port}/health", log)
    done = run(with_port(healthcheck("openenv"), environment("openenv")[PORT_VARS["openenv"]], port), env)
    assert done.returncode == 0, done.stderr
    stop_gracefully(processes[-1])


def test_openenv_image_command_serves_on_the_platform_port(tmp_path, processes):
    """Dockerfile.openenv's CMD and HEALTHCHECK, run by a local shell, with PORT set as hosting
    platforms set it; `python` is this interpreter."""
    line = image_command("Dockerfile.openenv")
    assert line[:2] == ["sh", "-c"] and "0.0.0.0" in line[2] and "${PORT:-" in line[2], line
    shim = tmp_path / "bin" / "python"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
    shim.chmod(0o755)
    (port,) = free_ports(1)
    env = {**os.environ, "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}
    env.update(PORT=str(port), SUPPORTENV_HOST="127.0.0.1")  # loopback here; the image's default is 0.0.0.0
    env.pop(PORT_VARS["openenv"], None)
    log = tmp_path / "image.log"
    start(processes, line, env, log)  # `sh -c ...`: the shim above is its `python`
    wait_http_healthy(f"http://127.0.0.1:{port}/health", log)
    done = subprocess.run(
        image_command("Dockerfile.openenv", "HEALTHCHECK"), env=env, capture_output=True, text=True, timeout=WAIT_S
    )
    assert done.returncode == 0, done.stderr
    stop_gracefully(processes[-1])
