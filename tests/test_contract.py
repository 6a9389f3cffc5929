"""The contract: generated code matches the protos, and the layers point inward."""

from __future__ import annotations

import ast
import filecmp
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "supportenv" / "v1"


def test_generated_code_matches_make_proto(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "tools" / "protogen.py"), "--out", str(tmp_path)], check=True)
    fresh = sorted(
        p.relative_to(tmp_path / "supportenv" / "v1") for p in (tmp_path / "supportenv" / "v1").glob("*_pb2*")
    )
    committed = sorted(p.relative_to(GENERATED) for p in GENERATED.glob("*_pb2*"))
    assert fresh == committed, "generated file set differs: run `make proto` and commit"
    for name in fresh:
        assert filecmp.cmp(tmp_path / "supportenv" / "v1" / name, GENERATED / name, shallow=False), (
            f"{name} is stale: run `make proto` and commit the result"
        )


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_simulation_library_is_pure():
    """The core library never reaches for the network, the wire layer, or the outer layers."""
    forbidden = (
        "grpc",
        "google.protobuf",
        "supportenv.v1",
        "env_service",
        "grader_service",
        "baseline_agent",
        "socket",
        "time",
        "datetime",
        "threading",
        "asyncio",
        "os",
        "subprocess",
        "uuid",
    )
    for path in sorted((ROOT / "supportenv").glob("*.py")):
        for module in _imports(path):
            assert not any(module == f or module.startswith(f + ".") for f in forbidden), (
                f"{path.name} imports {module}"
            )


def test_services_do_not_import_agents():
    for package in ("env_service", "grader_service"):
        for path in (ROOT / package).glob("*.py"):
            assert not any(m.startswith("baseline_agent") for m in _imports(path)), path


def _modules_named(path: Path) -> set[str]:
    """Every module `path` imports, with `from a import b` counted as a.b too."""
    found = _imports(path)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _python_sources() -> list[Path]:
    """The project's own code, tests and generated code aside."""
    tracked = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    paths = [ROOT / line for line in tracked.stdout.split()]
    return [p for p in paths if not p.name.endswith(("_pb2.py", "_pb2_grpc.py")) and "tests" not in p.parts]


def test_the_transition_does_not_grade():
    """A step never consults the expert or the graders; grading replays finished trajectories."""
    imported = _modules_named(ROOT / "supportenv" / "episode.py")
    for module in ("supportenv.expert", "supportenv.graders", "supportenv.replay"):
        assert module not in imported, f"supportenv/episode.py imports {module}"
    assert "supportenv.graders" not in _modules_named(ROOT / "env_service" / "tokens.py")


def _calls_named(path: Path, names: set[str]) -> list[str]:
    """Calls in `path` of anything spelled `names` (a bare name or an attribute)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in names:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def _wire_observations_built(path: Path) -> list[str]:
    """Where `path` builds a types_pb2.Observation (however the module is imported)."""
    tree = ast.parse(path.read_text())
    aliases = {
        a.asname or a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module == "supportenv.v1"
        for a in n.names
        if a.name == "types_pb2"
    }
    return [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "Observation"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in aliases
    ]


def test_one_encoder_of_the_observation():
    """Only the codec builds a wire Observation."""
    codec = ROOT / "supportenv" / "v1" / "codec.py"
    outside = [c for path in _python_sources() if path != codec for c in _wire_observations_built(path)]
    assert outside == [], f"wire Observations built outside supportenv/v1/codec.py: {outside}"
    assert _wire_observations_built(codec), "the codec builds them"


def test_only_the_client_builds_stubs():
    """One retry, deadline and channel policy: every service stub comes from supportenv.v1.client."""
    client = ROOT / "supportenv" / "v1" / "client.py"
    stubs = {"EnvServiceStub", "GraderServiceStub"}
    outside = [c for path in _python_sources() if path != client for c in _calls_named(path, stubs)]
    assert outside == [], f"stubs built outside supportenv/v1/client.py: {outside}"
