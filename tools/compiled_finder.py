"""The compiled build's import hook, installed into a virtualenv by tools/compiled_build.py.

Copied into site-packages as _supportenv_compiled.py, with a .pth file that imports it at
start-up, it loads the compiled modules of `make compiled` (kept in the virtualenv, not beside
the source) in place of their source files. A path finder cannot do that: a checkout's root
comes first on sys.path whenever Python runs from it, so its source files would win.

It steps aside, so the pure source runs, when SUPPORTENV_PURE is set; when the package being
imported is another checkout than the one built; and when any compiled source file has changed
since the build (then it says so once on stderr: a stale build never shadows an edited file).
Standard library only: it runs in every process the virtualenv starts.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from pathlib import Path

MANIFEST = Path(__file__).with_suffix(".json")
PURE_ENV = "SUPPORTENV_PURE"


class CompiledFinder:
    """A meta path finder for the modules the manifest lists (name -> source file and extension file)."""

    def __init__(self, manifest: dict) -> None:
        self.root = Path(manifest["source_root"])
        self.modules: dict[str, dict] = manifest["modules"]
        self.group = manifest["group_module"]
        self._fresh: bool | None = None

    def fresh(self) -> bool:
        """Whether every compiled module's source is as it was built (checked once per process)."""
        if self._fresh is None:
            stale = [
                entry["source"]
                for entry in self.modules.values()
                if entry["source"] and _digest(self.root / entry["source"]) != entry["sha256"]
            ]
            self._fresh = not stale
            if stale:
                sys.stderr.write(
                    f"supportenv: {stale[0]} has changed since the compiled build; running the pure build "
                    "(`make compiled` rebuilds it)\n"
                )
        return self._fresh

    def find_spec(self, name: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        entry = self.modules.get(name)
        if entry is None or wants_pure():
            return None
        parent = name.rpartition(".")[0]
        if parent:  # only under the package of the checkout that was built
            package = sys.modules.get(parent)
            where = [os.path.realpath(p) for p in getattr(package, "__path__", ())]
            if os.path.realpath(self.root / parent.replace(".", "/")) not in where:
                return None
        if not self.fresh():
            return None
        extension = entry["extension"]
        if not entry["package"]:
            return importlib.util.spec_from_file_location(name, extension)
        # A package's submodules are the checkout's (this finder serves the compiled ones).
        source_dir = str(self.root / name.replace(".", "/"))
        loader = _PackageLoader(name, extension, source_dir)
        return importlib.util.spec_from_file_location(
            name, extension, loader=loader, submodule_search_locations=[source_dir]
        )


class _PackageLoader(importlib.machinery.ExtensionFileLoader):
    """A compiled package, whose __path__ is its source folder: mypyc's module sets it to the
    extension's own folder, where its uncompiled submodules (a __main__) are not."""

    def __init__(self, name: str, path: str, source_dir: str) -> None:
        super().__init__(name, path)
        self.source_dir = source_dir

    def exec_module(self, module: object) -> None:
        super().exec_module(module)
        module.__path__ = [self.source_dir]  # type: ignore[attr-defined]


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def wants_pure() -> bool:
    """SUPPORTENV_PURE, read at each import: a process may choose the pure build once started."""
    return os.environ.get(PURE_ENV, "").strip().lower() not in ("", "0", "false", "no")


def install() -> None:
    try:
        manifest = json.loads(MANIFEST.read_text())
    except (OSError, ValueError):
        return
    if not any(isinstance(finder, CompiledFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, CompiledFinder(manifest))


install()
