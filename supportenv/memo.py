"""A cache for functions of a text: agents send the same texts over and over, so what is read
from one is read once (long texts are read afresh, so that the caches' memory stays small)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Generic, TypeVar

R = TypeVar("R")
# Longer texts are judged afresh each time, so that the caches' memory stays small.
MAX_CACHED_TEXT_CHARS = 1000


class ShortTextCache(Generic[R]):
    """`reading(text, ...)`, cached unless the text is long; `.cache` is the lru_cache behind it."""

    def __init__(self, reading: Callable[..., R]) -> None:
        self.reading = reading
        self.cache = lru_cache(maxsize=4096)(reading)
        self.__doc__ = reading.__doc__

    def __call__(self, text: str, *args: object) -> R:
        return self.reading(text, *args) if len(text) > MAX_CACHED_TEXT_CHARS else self.cache(text, *args)


def cached_for_short_texts(reading: Callable[..., R]) -> ShortTextCache[R]:
    """`reading(text, ...)`, cached unless the text is long."""
    return ShortTextCache(reading)
