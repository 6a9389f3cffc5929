"""State tokens: the whole episode state, serialized and signed with HMAC-SHA256.

Layout: version (1 byte) | HMAC-SHA256 of the rest (32 bytes) | compact JSON of the
EpisodeState as a positional row (EpisodeState.to_row). Any replica holding the same key
can verify and continue an episode; a flipped bit, a truncated token or another key's
token fails verification.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import secrets
from pathlib import Path

from supportenv.episode import EpisodeState
from supportenv.v1.limits import MAX_TOKEN_BYTES

TOKEN_VERSION = b"\x02"  # 2: positional state rows
MAC_BYTES = 32
KEY_ENV = "SUPPORTENV_TOKEN_KEY"
KEY_FILE_ENV = "SUPPORTENV_TOKEN_KEY_FILE"
MIN_KEY_BYTES = 16

log = logging.getLogger(__name__)


class InvalidTokenError(ValueError):
    """The token is not one this service (or a replica sharing its key) issued."""


def load_key() -> bytes:
    """The signing key: from $SUPPORTENV_TOKEN_KEY, else the file named by
    $SUPPORTENV_TOKEN_KEY_FILE, else a fresh random key for this process only."""
    value = os.environ.get(KEY_ENV, "")
    path = os.environ.get(KEY_FILE_ENV, "")
    if not value and path:
        value = Path(path).read_text().strip()
    if value:
        key = value.encode()
        if len(key) < MIN_KEY_BYTES:
            raise ValueError(f"the token key must be at least {MIN_KEY_BYTES} bytes")
        return key
    log.warning(
        "%s is not set: using a random per-process key. Tokens will not be accepted by other "
        "replicas or after a restart; set the same key on every replica.",
        KEY_ENV,
    )
    return secrets.token_bytes(32)


class TokenCodec:
    def __init__(self, key: bytes) -> None:
        self._key = key

    def _mac(self, payload: bytes) -> bytes:
        return hmac.digest(self._key, TOKEN_VERSION + payload, "sha256")

    def encode(self, state: EpisodeState) -> bytes:
        payload = json.dumps(state.to_row(), separators=(",", ":"), ensure_ascii=False).encode()
        return TOKEN_VERSION + self._mac(payload) + payload

    def decode(self, token: bytes) -> EpisodeState:
        if not token:
            raise InvalidTokenError("state_token is empty: pass the token from the last Reset or Step")
        if len(token) > MAX_TOKEN_BYTES:
            raise InvalidTokenError(f"state_token is {len(token)} bytes; the limit is {MAX_TOKEN_BYTES}")
        if token[:1] != TOKEN_VERSION or len(token) <= 1 + MAC_BYTES:
            raise InvalidTokenError("state_token is malformed or truncated")
        mac, payload = token[1 : 1 + MAC_BYTES], token[1 + MAC_BYTES :]
        if not hmac.compare_digest(mac, self._mac(payload)):
            raise InvalidTokenError(
                "state_token failed verification: it was altered, truncated or signed with another key"
            )
        try:
            return EpisodeState.from_row(json.loads(payload))
        except (ValueError, KeyError, TypeError) as exc:  # signed by us, so this means a version skew
            raise InvalidTokenError(f"state_token could not be decoded: {exc}") from exc
