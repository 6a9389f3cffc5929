"""The token key settings: which keys sign and verify state tokens, read from the environment.

New tokens are always signed with the current key ($SUPPORTENV_TOKEN_KEY or the file named by
$SUPPORTENV_TOKEN_KEY_FILE); tokens signed with the previous key ($SUPPORTENV_TOKEN_KEY_PREVIOUS
or $SUPPORTENV_TOKEN_KEY_PREVIOUS_FILE, optional) still verify, until the Unix time in
$SUPPORTENV_TOKEN_KEY_PREVIOUS_UNTIL if that is set. The key id (the first 4 bytes of SHA-256 of
the key) names the key that signed a token. Read once at start-up; env_service.tokens signs and
verifies with what this returns.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import secrets
import time
from collections.abc import Mapping
from datetime import datetime, timezone

from supportenv.v1.keys import KeySettingError, read_key, read_or_exit

KEY_ID_BYTES = 4
KEY_ENV = "SUPPORTENV_TOKEN_KEY"
KEY_FILE_ENV = "SUPPORTENV_TOKEN_KEY_FILE"
PREVIOUS_KEY_ENV = "SUPPORTENV_TOKEN_KEY_PREVIOUS"
PREVIOUS_KEY_FILE_ENV = "SUPPORTENV_TOKEN_KEY_PREVIOUS_FILE"
PREVIOUS_UNTIL_ENV = "SUPPORTENV_TOKEN_KEY_PREVIOUS_UNTIL"
LATEST_UNTIL = 253402300800  # 10000-01-01: a deadline must be a date the logs can print

log = logging.getLogger(__name__)


# The configured token key is unusable (too short, unreadable, inconsistent settings): the
# error every key setting raises (supportenv.v1.keys), by the name env_service.tokens has always used.
TokenKeyError = KeySettingError


def key_id(key: bytes) -> bytes:
    """The 4-byte id written into every token: the first bytes of SHA-256 of the key."""
    return hashlib.sha256(key).digest()[:KEY_ID_BYTES]


def utc_text(timestamp: float) -> str:
    """A Unix time as the logs and error messages print it."""
    return datetime.fromtimestamp(timestamp, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class TokenKey(bytes):
    """The signing key (its bytes), with the previous key still accepted for verification
    and the end of that grace period (a Unix time, or None for no deadline).

    A bytes subclass, so it travels wherever a plain key does (to spawned worker
    processes too) and `TokenCodec(load_key())` picks up the rotation settings."""

    previous: bytes | None
    previous_until: float | None

    def __new__(cls, key: bytes, previous: bytes | None = None, previous_until: float | None = None) -> TokenKey:
        self = super().__new__(cls, key)
        self.previous = bytes(previous) if previous else None
        self.previous_until = previous_until
        return self

    def __reduce__(self) -> tuple[type[TokenKey], tuple[bytes, bytes | None, float | None]]:  # type: ignore[override]
        return (TokenKey, (bytes(self), self.previous, self.previous_until))

    def __repr__(self) -> str:  # never the secret itself
        previous = f", previous={key_id(self.previous).hex()}" if self.previous else ""
        return f"TokenKey(id={key_id(self).hex()}{previous})"


def read_keys(environ: Mapping[str, str] | None = None) -> TokenKey | None:
    """The configured keys, or None when no current key is configured. TokenKeyError
    (with a message naming the setting) when a setting is unusable."""
    environ = os.environ if environ is None else environ
    current = read_key(environ, KEY_ENV, KEY_FILE_ENV, "token key")
    previous = read_key(environ, PREVIOUS_KEY_ENV, PREVIOUS_KEY_FILE_ENV, "token key", required_file=False)
    until_text = environ.get(PREVIOUS_UNTIL_ENV, "").strip()
    until = None
    if until_text:
        try:
            until = float(until_text)
        except ValueError:
            until = math.nan
        if not 0 <= until < LATEST_UNTIL:  # also refuses nan
            raise TokenKeyError(f"{PREVIOUS_UNTIL_ENV}={until_text!r} is not a Unix time in seconds")
    if current is None:
        if previous is not None:
            raise TokenKeyError(f"{previous[1]} is set but {KEY_ENV} / {KEY_FILE_ENV} is not: set the new key too")
        return None
    if previous is not None:
        if previous[0] != current[0] and key_id(previous[0]) == key_id(current[0]):
            raise TokenKeyError("the current and previous token keys have the same key id; generate a new key")
        if previous[0] == current[0]:
            previous = None  # rotation finished without removing the setting: nothing extra to accept
    return TokenKey(current[0], previous[0] if previous else None, until)


def load_key() -> bytes:
    """The keys for this process, from the environment: a TokenKey (the signing key,
    plus the previous key during a rotation), else a fresh random key for this process
    only. An unusable setting stops the service with a message saying which and why."""
    keys = read_or_exit("env_service", "token key", read_keys)
    if keys is None:
        log.warning(
            "%s is not set: using a random per-process key. Tokens will not be accepted by other "
            "replicas or after a restart; set the same key on every replica.",
            KEY_ENV,
        )
        return secrets.token_bytes(32)
    log.info("token key id %s", key_id(keys).hex())
    if keys.previous:
        until = keys.previous_until
        log.info(
            "previous token key id %s is accepted for verification %s",
            key_id(keys.previous).hex(),
            f"until {utc_text(until)}" if until is not None else "(no deadline)",
        )
        if until is not None and until <= time.time():
            log.warning("the grace period of the previous token key ended at %s; it is refused", utc_text(until))
    elif os.environ.get(PREVIOUS_KEY_FILE_ENV):
        log.info("no previous token key accepted: %s is absent or holds the current key", PREVIOUS_KEY_FILE_ENV)
    return keys
