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
# States per worker. A typical one is about 6 KB, so the default costs about 3 MB per worker.
DEFAULT_CACHE_SIZE = 512
# And at most this many token bytes in all: a state holds its token's texts several times
# over (actions, transcript), so episodes of long texts are kept fewer, not larger.
MAX_CACHED_TOKEN_BYTES = 1_000_000


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
    def __init__(self, size: int = DEFAULT_CACHE_SIZE, max_token_bytes: int = MAX_CACHED_TOKEN_BYTES) -> None:
        self._size, self._max_bytes, self._bytes = size, max_token_bytes, 0
        self._states: OrderedDict[bytes, EpisodeState] = OrderedDict()

    def __len__(self) -> int:
        return len(self._states)

    def put(self, token: bytes, state: EpisodeState) -> None:
        """Remember `state` under the token just issued for it; the caller must not change it afterwards."""
        if self._size <= 0 or len(token) > self._max_bytes or token in self._states:
            return
        self._states[token] = state
        self._bytes += len(token)
        while len(self._states) > self._size or self._bytes > self._max_bytes:
            self._bytes -= len(self._states.popitem(last=False)[0])

    def take(self, token: bytes) -> EpisodeState | None:
        """The state behind `token`, now the caller's to change; None when not cached."""
        state = self._states.pop(token, None)
        if state is not None:
            self._bytes -= len(token)
        return state

    def peek(self, token: bytes) -> EpisodeState | None:
        """The state behind `token`, for reading only; None when not cached."""
        return self._states.get(token)
