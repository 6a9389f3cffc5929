"""Which build of the library this process runs: compiled with mypyc, or pure Python.

The compiled build is this same source compiled to C extension modules by mypyc: setup.py
builds it into a wheel, `make compiled` (tools/compiled_build.py) into the virtualenv. Both
builds give byte-identical transcripts, rewards, grades and wire bytes (tools/build_digest.py).
SUPPORTENV_PURE=1 chooses the pure build: when building (setup.py then compiles nothing), and
when running (the virtualenv's compiled modules are then not loaded). Without a C compiler the
build is pure. This module is never compiled itself, and imports nothing of the library.
"""

from __future__ import annotations

import importlib.machinery
from collections.abc import Mapping

PURE_ENV = "SUPPORTENV_PURE"
# The shared library all compiled modules live in (one group: calls between them are native).
GROUP_NAME = "supportenv_core"
# The modules compiled, as paths from the repository's root: the library and the env service's
# hot path (the reply encoder, the live-state cache, the tokens). The rest (the CLI, play, the
# LLM prompt, the adapters, the generated protobuf code, the gRPC plumbing) is not on the hot
# path, or is what mypyc cannot compile: the servicer's Session handler is an async generator.
COMPILED_SOURCES = (
    "supportenv/actions.py",
    "supportenv/casework.py",
    "supportenv/catalog.py",
    "supportenv/content.py",
    "supportenv/customer.py",
    "supportenv/env.py",
    "supportenv/episode.py",
    "supportenv/errors.py",
    "supportenv/expert.py",
    "supportenv/graders.py",
    "supportenv/memo.py",
    "supportenv/replay.py",
    "supportenv/rewards.py",
    "supportenv/solutions.py",
    "supportenv/tasks.py",
    "supportenv/text.py",
    "supportenv/tools.py",
    "supportenv/world/__init__.py",
    "supportenv/world/system_of_record.py",
    "supportenv/v1/codec.py",
    "env_service/live.py",
    "env_service/tokens.py",
)


def wants_pure(environ: Mapping[str, str]) -> bool:
    """Whether SUPPORTENV_PURE asks for the pure build (any value but empty, 0, false or no)."""
    return environ.get(PURE_ENV, "").strip().lower() not in ("", "0", "false", "no")


def module_name(source: str) -> str:
    """supportenv/world/__init__.py -> supportenv.world; env_service/live.py -> env_service.live."""
    parts = source.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def build() -> str:
    """The build this process runs: "compiled" (its modules are mypyc's extension modules), or "pure"."""
    import supportenv.episode  # the heart of the library: compiled in every compiled build

    loader = getattr(supportenv.episode, "__loader__", None)
    return "compiled" if isinstance(loader, importlib.machinery.ExtensionFileLoader) else "pure"
