"""Library errors as gRPC status codes: one fixed table, the status message (clipped),
and `rpc`, the decorator that applies them to a unary handler."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import grpc

from supportenv.errors import EpisodeFinishedError, InvalidActionError, InvalidRequestError, UnknownTaskError
from supportenv.v1.limits import LimitExceededError
from supportenv.v1.malformed import Unparsable, own_request_checks, refuse_unparsable

# Longest status message sent back, in UTF-8 bytes. Messages may quote the client's own
# input, and a message that outgrows gRPC's metadata limit reaches the client as a
# confusing RESOURCE_EXHAUSTED "Stream removed" instead of the real error.
MAX_DETAILS_BYTES = 1024


class NoEpisodeError(ValueError):
    """A Session stream stepped before any reset (FAILED_PRECONDITION)."""


# Fixed: a service's own error maps by subclassing one of these (a bad state token is an
# InvalidRequestError), so the table never changes after import.
_STATUS_FOR: tuple[tuple[type[BaseException], grpc.StatusCode], ...] = (
    (InvalidActionError, grpc.StatusCode.INVALID_ARGUMENT),
    (InvalidRequestError, grpc.StatusCode.INVALID_ARGUMENT),
    (UnknownTaskError, grpc.StatusCode.NOT_FOUND),
    (EpisodeFinishedError, grpc.StatusCode.FAILED_PRECONDITION),
    (NoEpisodeError, grpc.StatusCode.FAILED_PRECONDITION),
    (LimitExceededError, grpc.StatusCode.RESOURCE_EXHAUSTED),
)

R = TypeVar("R")


def status_for(exc: BaseException) -> grpc.StatusCode | None:
    for kind, code in _STATUS_FOR:
        if isinstance(exc, kind):
            return code
    return None


def details(exc: BaseException) -> str:
    """The status message for `exc`, clipped to MAX_DETAILS_BYTES."""
    text = str(exc)
    raw = text.encode()
    if len(raw) <= MAX_DETAILS_BYTES:
        return text
    return raw[:MAX_DETAILS_BYTES].decode(errors="ignore") + f"... ({len(raw)} bytes in all)"


async def abort_for_error(exc: Exception, context: grpc.aio.ServicerContext) -> NoReturn:
    """End the call with the status code `exc` maps to and its message; raise `exc` again
    if it maps to none (gRPC then answers UNKNOWN and logs it)."""
    code = status_for(exc)
    if code is not None:
        await context.abort(code, details(exc))
    raise exc  # unmapped (abort itself always raises)


def rpc(method: Callable[..., Awaitable[R]]) -> Callable[..., Awaitable[R]]:
    """For a handler of a unary request: refuse a request that did not parse (see
    malformed.own_request_checks) and turn library errors into the documented status codes,
    with their message. One wrapper for both, as each layer costs every call a coroutine."""

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> R:
        if type(request) is Unparsable:  # tested here, so that a good request costs no extra coroutine
            await refuse_unparsable(request, context)
        try:
            return await method(self, request, context)
        except Exception as exc:
            await abort_for_error(exc, context)

    return own_request_checks(wrapper)
