"""Pickling and copying the library's dataclass records, alike on the compiled and pure builds.

A record compiled by mypyc keeps its fields in slots, not an instance dict, so the default
pickling (which saves the dict) would lose them. Each module registers its records here with
copyreg, which pickle and copy both consult: a record is rebuilt by its constructor from its
init fields (a cache that is no init field, as Scenario.derived, starts afresh).
"""

from __future__ import annotations

import copyreg
import dataclasses
from typing import Any


def _reduced(record: Any) -> tuple[type, tuple[Any, ...]]:
    cls = type(record)
    return cls, tuple([getattr(record, f.name) for f in dataclasses.fields(cls) if f.init])


def picklable(*classes: type) -> None:
    """Register dataclasses to be pickled and copied through their constructors."""
    for cls in classes:
        copyreg.pickle(cls, _reduced)
