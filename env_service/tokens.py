"""State tokens: an episode's identity and its action log, signed with HMAC-SHA256.

Layout: version (1 byte) | key id (4 bytes) | HMAC-SHA256 of version, key id and payload
(32 bytes) | compact JSON: [[world version, world id, task_id, split, seed, episode_id],
[action rows]], an action row being the library Action's fields by position (a tool call's
arguments as [name, value] pairs; a row of the 9 fields before tool calls still reads). The
library is deterministic, so (task, split, seed, episode_id, actions) *is* the state (an
expert episode's desk too: whether the customer was verified, the changes made, the refused
ones, the last tool result): decoding replays the actions on the ticket regenerated in the
codec's world (its world key's, supportenv.world), and refuses an episode of another world.
A token is a few hundred bytes and costs microseconds to sign, whatever the episode's
transcript holds, and any replica holding the same key can verify and continue an episode;
a flipped bit, a truncated token or another key's token fails verification. (LiveStates, in
env_service.live, spares the replay for the tokens a worker has just issued.)

Key rotation: the key id (the first 4 bytes of SHA-256 of the key) names the key that
signed a token, so a replica picks the right key at once; which keys sign and verify is
read by env_service.token_keys. This is the service layer, so it may read the clock; the
simulation library never does.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable
from typing import Any

import orjson

from env_service.token_keys import KEY_ID_BYTES, TokenKey, key_id, utc_text
from supportenv.actions import Action
from supportenv.episode import EpisodeState
from supportenv.errors import EpisodeFinishedError, InvalidActionError, InvalidRequestError, UnknownTaskError
from supportenv.replay import replay
from supportenv.v1.keys import WORLD_KEY_ENV
from supportenv.v1.limits import MAX_TOKEN_BYTES
from supportenv.world import WORLD_VERSION, world_id

# 2: positional state rows; 3: a key id before the MAC; 4: an action log; 5: the world's id
TOKEN_VERSION = b"\x05"
MAC_BYTES = 32
HEADER_BYTES = 1 + KEY_ID_BYTES + MAC_BYTES
# The fields of an action row before the tool call (tool, arguments) was added: a row of these
# (a token issued before) reads as an action with no tool.
_ROW_FIELDS_BEFORE_TOOLS = 9


def action_row(action: Action) -> list[Any]:
    """An action as a token's log holds it: its fields by position (half the bytes of a dict);
    a tool call's arguments as [name, value] pairs, in order."""
    return list(action)


def action_from_row(row: list[Any]) -> Action:
    if len(row) == _ROW_FIELDS_BEFORE_TOOLS:
        row = [*row, "", ()]
    if len(row) != len(Action._fields):
        raise ValueError(f"an action row has {len(Action._fields)} fields, not {len(row)}")
    kind, category, priority, issue_type, fields, text, article_id, department, error, tool, arguments = row
    return Action(
        kind,
        category,
        priority,
        issue_type,
        tuple(fields),
        text,
        article_id,
        department,
        error,
        tool,
        tuple([(name, value) for name, value in arguments]),
    )


class InvalidTokenError(InvalidRequestError):
    """The token is not one this service (or a replica sharing its key) issued: a bad
    request parameter, so INVALID_ARGUMENT like any InvalidRequestError."""


class TokenCodec:
    """Signs tokens with `key`; verifies tokens of `key` and, during a rotation, of the
    previous key (taken from a TokenKey, or given) until `previous_until` by `clock`.
    Its tokens are episodes of the world of `world_key` (None: the public world), which
    decoding replays them in."""

    def __init__(
        self,
        key: bytes,
        previous: bytes | None = None,
        previous_until: float | None = None,
        clock: Callable[[], float] = time.time,
        world_key: bytes | None = None,
    ) -> None:
        if isinstance(key, TokenKey):
            previous = previous if previous is not None else key.previous
            previous_until = previous_until if previous_until is not None else key.previous_until
        self._key = bytes(key)
        self._id = key_id(self._key)
        self._previous = bytes(previous) if previous and bytes(previous) != self._key else None
        self._previous_id = key_id(self._previous) if self._previous else None
        self._previous_until = previous_until
        self._clock = clock
        self.world_key = world_key
        self.world = world_id(world_key)
        # HMAC states with each key already absorbed: copying one is cheaper than keying anew.
        self._keyed = {k: hmac.new(k, digestmod=hashlib.sha256) for k in (self._key, self._previous) if k}

    def _mac(self, key: bytes, head: bytes, payload: bytes) -> bytes:
        mac = self._keyed[key].copy()
        mac.update(head)
        mac.update(payload)
        return mac.digest()

    def encode(self, state: EpisodeState) -> bytes:
        identity = [WORLD_VERSION, self.world, state.task_id, state.split, state.seed, state.episode_id]
        payload = orjson.dumps([identity, [action_row(a) for a in state.actions]])
        head = TOKEN_VERSION + self._id
        return head + self._mac(self._key, head, payload) + payload

    def extend(self, token: bytes, state: EpisodeState) -> bytes:
        """encode(state) for a state one action past `token` (a token this codec verified
        or issued): the log's encoding is reused and only the new action is encoded."""
        payload = token[HEADER_BYTES:]
        if payload.endswith(b",[]]") != (len(state.actions) == 1):  # not one action behind: no shortcut
            return self.encode(state)
        row = orjson.dumps(action_row(state.actions[-1]))
        # "...,[]]" becomes "...,[row]]"; "...,[[a],[b]]]" becomes "...,[[a],[b],row]]".
        payload = payload[:-2] + (row if len(state.actions) == 1 else b"," + row) + b"]]"
        head = TOKEN_VERSION + self._id
        return head + self._mac(self._key, head, payload) + payload

    def _verifying_key(self, kid: bytes) -> bytes:
        if kid == self._id:
            return self._key
        if kid == self._previous_id and self._previous is not None:
            until = self._previous_until
            if until is not None and self._clock() >= until:
                raise InvalidTokenError(
                    f"state_token was signed with the previous token key (id {kid.hex()}), whose grace period "
                    f"ended at {utc_text(until)}; start a new episode with Reset"
                )
            return self._previous
        raise InvalidTokenError(
            f"state_token was signed with an unknown key (id {kid.hex()}): it was issued by a service with "
            "another key, or before a key rotation whose grace period is over"
        )

    def decode(self, token: bytes) -> EpisodeState:
        if not token:
            raise InvalidTokenError("state_token is empty: pass the token from the last Reset or Step")
        if len(token) > MAX_TOKEN_BYTES:
            raise InvalidTokenError(f"state_token is {len(token)} bytes; the limit is {MAX_TOKEN_BYTES}")
        if token[:1] != TOKEN_VERSION:
            raise InvalidTokenError(
                f"state_token has format version {token[0]}, this service reads version {TOKEN_VERSION[0]}: "
                "it is malformed, or was issued by another release; start a new episode with Reset"
            )
        if len(token) <= HEADER_BYTES:
            raise InvalidTokenError("state_token is malformed or truncated")
        head, mac, payload = token[: 1 + KEY_ID_BYTES], token[1 + KEY_ID_BYTES : HEADER_BYTES], token[HEADER_BYTES:]
        key = self._verifying_key(head[1:])
        if not hmac.compare_digest(mac, self._mac(key, head, payload)):
            raise InvalidTokenError(
                "state_token failed verification: it was altered, truncated or signed with another key"
            )
        try:
            (version, world, task_id, split, seed, episode_id), rows = orjson.loads(payload)
            actions = [action_from_row(row) for row in rows]
        except (ValueError, TypeError) as exc:  # signed by us, so this means a version skew
            raise InvalidTokenError(f"state_token could not be decoded: {exc}") from exc
        if version != WORLD_VERSION:
            raise InvalidTokenError(
                f"state_token is an episode of world {version!r}; this service generates {WORLD_VERSION!r}, "
                "so it cannot continue it: start a new episode with Reset"
            )
        if world != self.world:
            raise InvalidTokenError(
                f"state_token is an episode of world {world!r}; this service generates world {self.world!r} "
                f"(another {WORLD_KEY_ENV}), so it cannot continue it: start a new episode with Reset"
            )
        try:
            return replay(task_id, split, seed, actions, episode_id, self.world_key)[1]
        except (InvalidRequestError, InvalidActionError, UnknownTaskError, EpisodeFinishedError) as exc:
            raise InvalidTokenError(f"state_token could not be replayed by this release: {exc}") from exc
