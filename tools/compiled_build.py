"""Build the compiled modules with mypyc into this virtualenv, or check or remove that build.

    python tools/compiled_build.py            build (what `make compiled` and `make test` run)
    python tools/compiled_build.py --check    exit 1 unless the build is installed and matches the source
    python tools/compiled_build.py --remove   uninstall it: the pure build runs

The extension modules go to <venv>/mypyc/lib, never beside the source, so no stale build can
shadow an edited file. A manifest of each source file's SHA-256 and an import hook
(tools/compiled_finder.py, installed as _supportenv_compiled with a .pth file) make every
process of the virtualenv load them in place of the source files, unless SUPPORTENV_PURE is
set or a source file has changed since (then the pure build runs, and says why). Without a C
compiler nothing is built and the pure build runs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# This tool reads the source, never an installed build of it (which may be the stale one it replaces).
os.environ["SUPPORTENV_PURE"] = "1"

from supportenv.cli import run_cli  # noqa: E402
from supportenv.compiled import COMPILED_SOURCES, GROUP_NAME, PURE_ENV, module_name  # noqa: E402

PROG = "python tools/compiled_build.py"
HOOK_NAME = "_supportenv_compiled"
BUILD_DIR = Path(sys.prefix) / "mypyc"
SITE = Path(sysconfig.get_paths()["purelib"])
SUFFIX = EXTENSION_SUFFIXES[0]  # ".cpython-311-x86_64-linux-gnu.so" here


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _extension(lib: Path, name: str, package: bool) -> Path:
    return lib / (name.replace(".", "/") + ("/__init__" if package else "") + SUFFIX)


def manifest(lib: Path) -> dict:
    modules = {}
    for source in COMPILED_SOURCES:
        name, package = module_name(source), source.endswith("/__init__.py")
        modules[name] = {
            "source": source,
            "sha256": _sha256(ROOT / source),
            "extension": str(_extension(lib, name, package)),
            "package": package,
        }
    group = f"{GROUP_NAME}__mypyc"
    modules[group] = {"source": "", "sha256": "", "extension": str(lib / (group + SUFFIX)), "package": False}
    return {"source_root": str(ROOT), "group_module": group, "modules": modules}


def build() -> int:
    if shutil.which((sysconfig.get_config_var("CC") or "cc").split()[0]) is None:
        print("compiled_build: no C compiler here; the pure build runs", file=sys.stderr)
        remove()
        return 0
    lib, temp = BUILD_DIR / "lib", BUILD_DIR / "temp"
    started = time.monotonic()
    print(
        f"compiled_build: compiling {len(COMPILED_SOURCES)} modules with mypyc into {lib} (a few minutes)", flush=True
    )
    # setup.py's own mypycify; its C files are written under temp, so an unchanged module is not recompiled.
    env = {k: v for k, v in os.environ.items() if k != PURE_ENV}
    command = [sys.executable, "setup.py", "--quiet", "build_ext", "--build-lib", str(lib), "--build-temp", str(temp)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        print("compiled_build: mypyc failed (above); the pure build runs", file=sys.stderr)
        remove()
        return 1
    built = manifest(lib)
    missing = [e["extension"] for e in built["modules"].values() if not Path(e["extension"]).exists()]
    if missing:
        print(f"compiled_build: the build made no {missing[0]}", file=sys.stderr)
        remove()
        return 1
    SITE.joinpath(f"{HOOK_NAME}.json").write_text(json.dumps(built, indent=1))
    shutil.copyfile(ROOT / "tools" / "compiled_finder.py", SITE / f"{HOOK_NAME}.py")
    SITE.joinpath(f"{HOOK_NAME}.pth").write_text(f"import {HOOK_NAME}\n")
    print(f"compiled_build: done in {time.monotonic() - started:.0f} s; SUPPORTENV_PURE=1 runs the pure build")
    return 0


def check() -> int:
    """0 when the installed build is this checkout's, of its current source; else 1 and why."""
    try:
        installed = json.loads(SITE.joinpath(f"{HOOK_NAME}.json").read_text())
    except (OSError, ValueError):
        print("compiled_build: no compiled build is installed (`make compiled`)", file=sys.stderr)
        return 1
    if installed["source_root"] != str(ROOT):
        print(f"compiled_build: the installed build is of {installed['source_root']}", file=sys.stderr)
        return 1
    for name, entry in installed["modules"].items():
        if entry["source"] and _sha256(ROOT / entry["source"]) != entry["sha256"]:
            print(f"compiled_build: {entry['source']} has changed since the build (`make compiled`)", file=sys.stderr)
            return 1
        if not Path(entry["extension"]).exists():
            print(f"compiled_build: {name}'s extension module is missing", file=sys.stderr)
            return 1
    if {e["source"] for e in installed["modules"].values() if e["source"]} != set(COMPILED_SOURCES):
        print("compiled_build: the list of compiled modules has changed since the build", file=sys.stderr)
        return 1
    if SITE.joinpath(f"{HOOK_NAME}.py").read_bytes() != (ROOT / "tools" / "compiled_finder.py").read_bytes():
        print("compiled_build: the installed import hook is out of date", file=sys.stderr)
        return 1
    return 0


def remove() -> None:
    for suffix in (".pth", ".py", ".json"):
        SITE.joinpath(HOOK_NAME + suffix).unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--check", action="store_true", help="check the installed build against the source")
    action.add_argument("--remove", action="store_true", help="uninstall the compiled build")
    args = parser.parse_args(argv)
    if args.check:
        return check()
    if args.remove:
        remove()
        return 0
    return build()


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
