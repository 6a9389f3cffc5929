"""A cache for functions of a text: agents send the same texts over and over, so what is read
from one is read once (long texts are read afresh, so that the caches' memory stays small)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, wraps
from typing import TypeVar

R = TypeVar("R")
# Longer texts are judged afresh each time, so that the caches' memory stays small.
MAX_CACHED_TEXT_CHARS = 1000


def cached_for_short_texts(reading: Callable[..., R]) -> Callable[..., R]:
    """`reading(text, ...)`, cached unless the text is long."""
    cached = lru_cache(maxsize=4096)(reading)

    @wraps(reading)
    def read_text(text: str, *args: object) -> R:
        return reading(text, *args) if len(text) > MAX_CACHED_TEXT_CHARS else cached(text, *args)

    read_text.cache = cached  # type: ignore[attr-defined]
    return read_text
