"""A cache for functions of a text: agents send the same texts over and over, so what is read
from one is read once. Long texts get a small cache of their own, so that the caches' memory stays
small while a long answer, read again by every check of its step and by a grader's replay, is read
once per step rather than once per check."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Generic, TypeVar

R = TypeVar("R")
# Texts up to this long share the large cache; longer ones (up to actions.MAX_TEXT_CHARS) the small one.
MAX_CACHED_TEXT_CHARS = 1000
SHORT_TEXTS_KEPT = 4096
LONG_TEXTS_KEPT = 32


class TextCache(Generic[R]):
    """`reading(text, ...)`, cached: many short texts, a few long ones. `.cache` and `.long_cache`
    are the lru_caches behind it."""

    def __init__(self, reading: Callable[..., R]) -> None:
        self.reading = reading
        self.cache = lru_cache(maxsize=SHORT_TEXTS_KEPT)(reading)
        self.long_cache = lru_cache(maxsize=LONG_TEXTS_KEPT)(reading)
        self.__doc__ = reading.__doc__

    def __call__(self, text: str, *args: object) -> R:
        return self.long_cache(text, *args) if len(text) > MAX_CACHED_TEXT_CHARS else self.cache(text, *args)


def cached_by_text(reading: Callable[..., R]) -> TextCache[R]:
    """`reading(text, ...)`, cached: many short texts, a few long ones."""
    return TextCache(reading)
