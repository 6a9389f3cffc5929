"""The limits on Session streams, per worker: how long one may sit idle, and how many may be open.

A Session stream holds its episode in the worker's memory for as long as it is open, so a
client that walks away without closing it, or thousands that open one each, would hold
memory and file descriptors indefinitely. An idle stream ends with DEADLINE_EXCEEDED and
one over the cap is refused with RESOURCE_EXHAUSTED; neither loses the episode of a client
that asked for tokens (want_token): it goes on in a new stream with `resume`, on any replica.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

IDLE_ENV = "SUPPORTENV_SESSION_IDLE_S"
MAX_OPEN_ENV = "SUPPORTENV_MAX_SESSIONS"
# Long enough for a language model's slowest turn; short enough that abandoned streams go.
DEFAULT_IDLE_S = 300.0
# A few KB to a few tens of KB each: 2,048 open streams cost well under 100 MB per worker.
DEFAULT_MAX_OPEN = 2048


@dataclass(frozen=True)
class SessionLimits:
    idle_s: float = DEFAULT_IDLE_S
    max_open: int = DEFAULT_MAX_OPEN

    def idle_message(self) -> str:
        return (
            f"this Session stream sent no request for {self.idle_s:g} s after its last reply ({IDLE_ENV}) "
            "and was closed; open a new one, or resume the episode from its last state token (want_token, then resume)"
        )

    def full_message(self) -> str:
        return (
            f"this worker already serves {self.max_open} open Session streams ({MAX_OPEN_ENV}); "
            "retry shortly or on another replica, or step with unary Step calls and state tokens"
        )


def _number(environ: dict[str, str] | os._Environ[str], name: str, default: float, kind: type) -> float:
    text = environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        value = 0
    if not 0 < value < math.inf:  # also refuses nan
        unit = "seconds" if kind is float else "streams"
        raise SystemExit(f"env_service: {name}={text!r} must be a positive number of {unit}")
    return value


def session_limits_from_env(environ: dict[str, str] | os._Environ[str] = os.environ) -> SessionLimits:
    return SessionLimits(
        idle_s=float(_number(environ, IDLE_ENV, DEFAULT_IDLE_S, float)),
        max_open=int(_number(environ, MAX_OPEN_ENV, DEFAULT_MAX_OPEN, int)),
    )
