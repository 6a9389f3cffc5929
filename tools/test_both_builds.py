"""Run the test suite on both builds at once: compiled (the whole suite) and pure (SUPPORTENV_PURE=1).

    python tools/test_both_builds.py [--pure-pass library|whole] [pytest arguments, passed to both passes]

What `make test-both` runs once the compiled build is installed (tools/compiled_build.py). The two
passes run side by side, one per core: the compiled pass prints here, the pure pass writes to
.venv/pytest-pure.log and its summary is printed at the end. It fails if either pass fails.

The compiled pass runs the whole suite. The pure pass runs, by default, the library's own tests
(PURE_PASS_TESTS: everything the library decides, in process, where the build is all there is
to it), among them tests/test_builds.py, which shows the two builds' transcripts, rewards, grades
and wire bytes byte-identical over 2,000 episodes. `--pure-pass whole` runs the whole suite on
the pure build too: about 20 minutes on this 2-core machine, which with the installs is more than
CI's budget. On a machine without a C compiler there is no compiled build, and the whole suite
runs on the pure build.
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

PROG = "python tools/test_both_builds.py"
PURE_LOG = Path(sys.prefix) / "pytest-pure.log"
TAIL_LINES = 40
# The library's own tests: the world, the customer, the episode, the tools, the graders, the expert, the
# reply codec, the live-state cache and the tokens, in process (no services, no command lines).
PURE_PASS_TESTS = (
    "tests/test_builds.py",
    "tests/test_casework.py",
    "tests/test_codec.py",
    "tests/test_customer.py",
    "tests/test_determinism.py",
    "tests/test_expert_task.py",
    "tests/test_fidelity.py",
    "tests/test_figures.py",
    "tests/test_impostor.py",
    "tests/test_library.py",
    "tests/test_live_states.py",
    "tests/test_properties.py",
    "tests/test_solutions.py",
    "tests/test_system_of_record.py",
    "tests/test_text.py",
    "tests/test_tools.py",
    "tests/test_world.py",
)
# Tells tests/test_builds.py which build its pass must be running.
EXPECT_ENV = "SUPPORTENV_EXPECT_BUILD"


def compiled_build_state() -> tuple[bool, str]:
    """(installed and fresh, why not)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "compiled_build.py"), "--check"], capture_output=True, text=True
    )
    return done.returncode == 0, done.stderr.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__.split("\n\n")[0], epilog="Other arguments go to pytest, in both passes."
    )
    parser.add_argument(
        "--pure-pass",
        choices=("library", "whole"),
        default="library",
        help="what the pure build's pass runs: the library's own tests (default) or the whole suite",
    )
    args, argv = parser.parse_known_args(argv)
    fresh, why = compiled_build_state()
    pure_env = {**os.environ, "SUPPORTENV_PURE": "1", EXPECT_ENV: "pure"}
    pytest = [sys.executable, "-m", "pytest", *argv]
    if not fresh:
        if "no compiled build is installed" not in why:
            print(f"test_both_builds: {why}", file=sys.stderr)
            return 1
        print("test_both_builds: no compiled build here (no C compiler?); the pure build's pass only", flush=True)
        return subprocess.call(pytest, cwd=ROOT, env=pure_env)
    started = time.monotonic()
    what = "the library's own tests" if args.pure_pass == "library" else "the whole suite"
    print(f"test_both_builds: the pure build's pass ({what}) runs alongside, into {PURE_LOG}", flush=True)
    with PURE_LOG.open("w") as log:
        # (no cache plugin: the two passes would write the same .pytest_cache)
        chosen = list(PURE_PASS_TESTS) if args.pure_pass == "library" else []
        pure = subprocess.Popen(
            [*pytest, "-p", "no:cacheprovider", *chosen], cwd=ROOT, env=pure_env, stdout=log, stderr=subprocess.STDOUT
        )
        print("test_both_builds: the compiled build's pass:", flush=True)
        compiled_code = subprocess.call(pytest, cwd=ROOT, env={**os.environ, EXPECT_ENV: "compiled"})
        pure_code = pure.wait()
    lines = PURE_LOG.read_text(errors="replace").splitlines()
    print(f"\ntest_both_builds: the pure build's pass (last {TAIL_LINES} lines of {PURE_LOG}):")
    print("\n".join(lines[-TAIL_LINES:]))
    verdict = {0: "passed"}
    print(
        f"\ntest_both_builds: compiled build {verdict.get(compiled_code, 'FAILED')}, "
        f"pure build {verdict.get(pure_code, 'FAILED')}, in {time.monotonic() - started:.0f} s"
    )
    return 0 if compiled_code == pure_code == 0 else 1


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
