"""The build: the package metadata is in pyproject.toml; this adds the compiled modules.

`pip install .` (or `pip wheel .`) compiles supportenv.compiled.COMPILED_SOURCES with mypyc
(pinned in pyproject.toml's build requirements) into C extension modules beside the pure
source. SUPPORTENV_PURE=1, or a machine without a C compiler, builds the pure package instead.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import sysconfig
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent


def _compiled_settings():  # supportenv.compiled, read without importing the package
    spec = importlib.util.spec_from_file_location("_supportenv_compiled_settings", ROOT / "supportenv" / "compiled.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def has_c_compiler() -> bool:
    """A C compiler and Python's headers, which compiling the extension modules needs."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    return shutil.which(compiler) is not None and headers.exists()


def ext_modules() -> list:
    settings = _compiled_settings()
    if settings.wants_pure(os.environ):
        print(f"setup.py: {settings.PURE_ENV} is set: building the pure package", file=sys.stderr)
        return []
    if not has_c_compiler():
        print("setup.py: no C compiler or Python headers here: building the pure package", file=sys.stderr)
        return []
    from mypyc.build import mypycify

    # debug_level "0": no debug information, which takes gcc a third of its time on the one large C file.
    return mypycify(list(settings.COMPILED_SOURCES), opt_level="3", debug_level="0", group_name=settings.GROUP_NAME)


setup(ext_modules=ext_modules())
