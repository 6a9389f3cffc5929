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
