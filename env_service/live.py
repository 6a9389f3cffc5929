"""The states behind the tokens this worker issued last: a bounded cache that spares replays.

A token carries the episode's action log, and decoding it replays those actions. In an
RL loop the next call nearly always brings back the token the same worker has just
issued, so each worker keeps the live EpisodeState behind its most recent tokens. A hit
needs no MAC check either: the key is the exact token bytes this worker signed.

Nothing depends on the cache: a miss (another replica issued the token, the entry was
evicted, the worker restarted, or the token is being stepped a second time to branch the
episode) replays the token, with identical results. Taking an entry removes it, because
the caller goes on to change that state; the new state comes back with the new token.
"""

from __future__ import annotations

import os
from collections import OrderedDict

from supportenv.episode import EpisodeState

CACHE_ENV = "SUPPORTENV_STATE_CACHE"
# States per worker. One is about 6 KB, so the default costs about 3 MB per worker at most.
DEFAULT_CACHE_SIZE = 512


def cache_size_from_env() -> int:
    text = os.environ.get(CACHE_ENV, "").strip()
    if not text:
        return DEFAULT_CACHE_SIZE
    try:
        size = int(text)
    except ValueError:
        size = -1
    if size < 0:
        raise SystemExit(f"env_service: {CACHE_ENV}={text!r} must be a whole number of states (0 turns the cache off)")
    return size


class LiveStates:
    def __init__(self, size: int = DEFAULT_CACHE_SIZE) -> None:
        self._size = size
        self._states: OrderedDict[bytes, EpisodeState] = OrderedDict()

    def __len__(self) -> int:
        return len(self._states)

    def put(self, token: bytes, state: EpisodeState) -> None:
        """Remember `state` under the token just issued for it; the caller must not change it afterwards."""
        if self._size <= 0:
            return
        self._states[token] = state
        if len(self._states) > self._size:
            self._states.popitem(last=False)

    def take(self, token: bytes) -> EpisodeState | None:
        """The state behind `token`, now the caller's to change; None when not cached."""
        return self._states.pop(token, None)

    def peek(self, token: bytes) -> EpisodeState | None:
        """The state behind `token`, for reading only; None when not cached."""
        return self._states.get(token)
