"""Frozen dataclass records built without their generated __init__.

A frozen dataclass's __init__ sets each field through object.__setattr__, which made the
records built on every step (observations, step results, judgements, customer answers)
cost more than the work that fills them. `frozen_record` installs the field values as the
instance dict in one go; eq, hash, repr, pickling and dataclasses.replace are unaffected.
"""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")

_new, _set = object.__new__, object.__setattr__


def frozen_record(cls: type[T], fields: dict[str, Any]) -> T:
    """An instance of the frozen dataclass `cls` holding `fields`: every field, in declaration order."""
    record = _new(cls)
    _set(record, "__dict__", fields)
    return record
