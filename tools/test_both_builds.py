"""Run the whole test suite on both builds at once: compiled, and pure (SUPPORTENV_PURE=1).

    python tools/test_both_builds.py [--workers N] [pytest arguments, passed to both passes]

What `make test` runs once the compiled build is installed (tools/compiled_build.py). The two
passes run side by side, each spread over N pytest-xdist workers (default 2, a module to a
worker: its fixtures are built once), so one pass's waits are the other's CPU time. The compiled
pass prints here; the pure pass writes to .venv/pytest-pure.log, whose summary is printed at the
end. It fails if either pass fails.

The README's blocks run in copies of the checkout, which the compiled build leaves to the source,
so the compiled pass runs them on the pure build and the pure pass leaves them to it; likewise
tests/test_builds.py's byte-for-byte comparison of the two builds over 2,000 episodes runs once,
in the compiled pass. On a machine without a C compiler there is no compiled build, and the whole
suite runs once, on the pure build.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from supportenv.cli import run_cli  # noqa: E402
from supportenv.compiled import PURE_ENV  # noqa: E402

PROG = "python tools/test_both_builds.py"
PURE_LOG = Path(sys.prefix) / "pytest-pure.log"
TAIL_LINES = 40
DEFAULT_WORKERS = 2
# Tells tests/test_builds.py (and the README's blocks) which build its pass must be running.
EXPECT_ENV = "SUPPORTENV_EXPECT_BUILD"


def compiled_build_state() -> tuple[bool, str]:
    """(installed and fresh, why not)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "compiled_build.py"), "--check"], capture_output=True, text=True
    )
    return done.returncode == 0, done.stderr.strip()


def pytest_command(workers: int, argv: list[str]) -> list[str]:
    # --dist loadfile: a module's tests share one worker, so its module fixtures (services, the
    # scored boards) are built once; no cache plugin, as the two passes would share .pytest_cache.
    spread = ["-n", str(workers), "--dist", "loadfile"] if workers > 0 else []
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *spread, *argv]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__.split("\n\n")[0], epilog="Other arguments go to pytest, in both passes."
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=DEFAULT_WORKERS,
        metavar="N",
        help=f"pytest-xdist workers per pass (default {DEFAULT_WORKERS}; 0: no workers, each pass in one process)",
    )
    parser.add_argument(
        "--pure-log", type=Path, default=PURE_LOG, metavar="PATH", help=f"the pure pass's output (default {PURE_LOG})"
    )
    args, argv = parser.parse_known_args(argv)
    if args.workers < 0:
        parser.error("--workers must be 0 or more")
    fresh, why = compiled_build_state()
    pytest = pytest_command(args.workers, argv)
    pure_env = {**os.environ, PURE_ENV: "1", EXPECT_ENV: "pure"}
    compiled_env = {**{k: v for k, v in os.environ.items() if k != PURE_ENV}, EXPECT_ENV: "compiled"}
    if not fresh:
        if "no compiled build is installed" not in why:
            print(f"test_both_builds: {why}", file=sys.stderr)
            return 1
        print("test_both_builds: no compiled build here (no C compiler?): the whole suite, pure", flush=True)
        return subprocess.call(pytest, cwd=ROOT, env=pure_env)
    started = time.monotonic()
    print(f"test_both_builds: the pure build's pass runs alongside, into {args.pure_log}", flush=True)
    with args.pure_log.open("w") as log:
        pure = subprocess.Popen(pytest, cwd=ROOT, env=pure_env, stdout=log, stderr=subprocess.STDOUT)
        print("test_both_builds: the compiled build's pass:", flush=True)
        compiled_code = subprocess.call(pytest, cwd=ROOT, env=compiled_env)
        if pure.poll() is None:
            print("test_both_builds: waiting for the pure build's pass ...", flush=True)
        pure_code = pure.wait()
    lines = args.pure_log.read_text(errors="replace").splitlines()
    print(f"\ntest_both_builds: the pure build's pass (last {TAIL_LINES} lines of {args.pure_log}):")
    print("\n".join(lines[-TAIL_LINES:]))
    verdict = {0: "passed"}
    print(
        f"\ntest_both_builds: compiled build {verdict.get(compiled_code, 'FAILED')}, "
        f"pure build {verdict.get(pure_code, 'FAILED')}, in {time.monotonic() - started:.0f} s"
    )
    return 0 if compiled_code == pure_code == 0 else 1


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
