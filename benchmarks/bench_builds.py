"""The throughput figures on both builds in one run: pure and compiled side by side.

    python benchmarks/bench_builds.py [--seconds S] [--repeat N] [--json PATH]

Runs benchmarks/bench_throughput.py once per build, the pure one under SUPPORTENV_PURE=1
(the services it starts inherit it), then prints each figure for both builds with their
ratio, and the compiled build's ratios to OpenEnv's WebSocket measured in the same run
(the OpenEnv adapter serves the same build of the library). Without an installed compiled
build (`make compiled`) only the pure figures are printed. This machine drifts by +-30%
from one minute to the next: compare ratios within one run, not figures across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from supportenv.cli import run_cli  # noqa: E402

PROG = "python benchmarks/bench_builds.py"
THROUGHPUT = ROOT / "benchmarks" / "bench_throughput.py"
# (name, numerator, denominator): what the compiled core is measured against.
TARGETS = (
    ("StepBatch of 64 / OpenEnv WebSocket at 64", "batch64_steps_per_s", "openenv_ws_steps_per_s_64"),
    ("Session stream at 1 / OpenEnv WebSocket at 1", "stream_steps_per_s_1", "openenv_ws_steps_per_s_1"),
    ("Session stream at 64 / OpenEnv WebSocket at 64", "stream_steps_per_s_64", "openenv_ws_steps_per_s_64"),
)
IN_PROCESS = ("inprocess_steps_per_s", "inprocess_expert_steps_per_s")


def compiled_build_installed() -> bool:
    check = [sys.executable, str(ROOT / "tools" / "compiled_build.py"), "--check"]
    return subprocess.run(check, capture_output=True).returncode == 0


def figures_of(build: str, passed: list[str]) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k != "SUPPORTENV_PURE"}
    if build == "pure":
        env["SUPPORTENV_PURE"] = "1"
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "figures.json"
        print(f"\n== the {build} build ==", flush=True)
        subprocess.run([sys.executable, str(THROUGHPUT), *passed, "--json", str(out)], env=env, cwd=ROOT, check=True)
        return json.loads(out.read_text())


def ratios(figures: dict[str, dict[str, float]]) -> dict[str, float]:
    compiled, pure = figures.get("compiled", {}), figures["pure"]
    found = {}
    for name, top, bottom in TARGETS:
        if compiled.get(top) and compiled.get(bottom):
            found[f"compiled {name}"] = compiled[top] / compiled[bottom]
    for key in IN_PROCESS:
        if compiled.get(key) and pure.get(key):
            found[f"{key}: compiled / pure"] = compiled[key] / pure[key]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="duration of each measurement")
    parser.add_argument("--repeat", type=int, default=1, help="runs of every figure per build; the median is kept")
    parser.add_argument("--memory-episodes", type=int, default=10_000, help="episodes of the memory figure")
    parser.add_argument("--json", type=Path, help="also write both builds' figures and the ratios here")
    args = parser.parse_args(argv)
    passed = [
        "--seconds",
        f"{args.seconds:g}",
        "--repeat",
        str(args.repeat),
        "--memory-episodes",
        str(args.memory_episodes),
    ]
    builds = ["pure", "compiled"] if compiled_build_installed() else ["pure"]
    if builds == ["pure"]:
        print("bench_builds: no compiled build is installed (`make compiled`): the pure build's figures only")
    figures = {build: figures_of(build, passed) for build in builds}
    print(f"\nthroughput on both builds (median of {args.repeat} run{'s' if args.repeat > 1 else ''} each)")
    print(f"  {'figure':<42}{'pure':>12}{'compiled':>12}{'ratio':>8}")
    for key, pure in figures["pure"].items():
        compiled = figures.get("compiled", {}).get(key)
        ratio = f"{compiled / pure:>7.2f}x" if compiled is not None and pure else ""
        shown = f"{compiled:>12,.2f}" if compiled is not None else f"{'-':>12}"
        print(f"  {key:<42}{pure:>12,.2f}{shown}{ratio}")
    found = ratios(figures)
    if found:
        print("\nthe compiled core's ratios (same run)")
        for name, value in found.items():
            print(f"  {name:<58}{value:>7.2f}x")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        rounded = {k: round(v, 3) for k, v in found.items()}
        args.json.write_text(json.dumps({**figures, "ratios": rounded}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
