"""Generate the Python code and type stubs for protos/ with grpcio-tools.

`make proto` runs this into the repository root; the drift test runs it into a
temporary folder and compares, so committed code can never fall behind the protos.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script, from anywhere

from supportenv.cli import run_cli  # noqa: E402

PROG = "python tools/protogen.py"
PROTO_ROOT = ROOT / "protos"


def proto_files() -> list[Path]:
    return sorted(PROTO_ROOT.rglob("*.proto"))


def generate(out_dir: Path) -> list[Path]:
    """Write *_pb2.py, *_pb2.pyi and *_pb2_grpc.py for every proto into out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    include = str(Path(protoc.__file__).parent / "_proto")
    files = [str(p.relative_to(PROTO_ROOT)) for p in proto_files()]
    args = [
        "grpc_tools.protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        *files,
    ]
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed for {files}")
    # What protoc wrote for our protos only (out_dir may hold other packages' *_pb2 files, e.g. a venv).
    stems = [out_dir / Path(name).with_suffix("") for name in files]
    return sorted(Path(f"{stem}{suffix}") for stem in stems for suffix in ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT, help="output root (default: repository root)")
    args = parser.parse_args(argv)
    for path in generate(args.out):
        print(f"generated {path.relative_to(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
