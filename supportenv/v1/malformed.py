"""Requests that do not parse as their method's message: refused with INVALID_ARGUMENT
(a failing deserializer would make the call UNKNOWN), by the server's interceptor or by a
handler that checks its own requests."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
from google.protobuf.message import DecodeError

R = TypeVar("R")


class Unparsable:
    """Stands in for request bytes that are not a valid message, so that the call is
    refused with INVALID_ARGUMENT."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _lenient(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if deserializer is None:
        return None

    def parse(data: bytes) -> Any:
        try:
            return deserializer(data)
        except DecodeError as exc:
            return Unparsable(str(exc))

    return parse


async def refuse_unparsable(request: Any, context: grpc.aio.ServicerContext) -> None:
    """End the call with INVALID_ARGUMENT if `request` did not parse (see own_request_checks)."""
    if isinstance(request, Unparsable):
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"malformed request: {request.reason}")


def own_request_checks(behavior: Callable[..., R]) -> Callable[..., R]:
    """Mark a handler that refuses unparsable requests itself (refuse_unparsable on each
    request of a stream, or status.rpc's own check), so that
    MalformedRequestInterceptor does not wrap it: on a stream, each wrapping layer costs
    every message an extra async-generator hop."""
    behavior.own_request_checks = True  # type: ignore[attr-defined]
    return behavior


async def _checked(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
    async for request in requests:
        await refuse_unparsable(request, context)
        yield request


def _refusing(behavior: Callable[..., Any], streaming_requests: bool) -> Callable[..., Any] | None:
    """`behavior`, refusing unparsable requests first; None if it is not an async handler."""
    if inspect.isasyncgenfunction(behavior):

        async def stream_out(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            if streaming_requests:
                request = _checked(request, context)
            else:
                await refuse_unparsable(request, context)
            async for response in behavior(request, context):
                yield response

        return stream_out
    if inspect.iscoroutinefunction(behavior):

        async def unary_out(request: Any, context: grpc.aio.ServicerContext) -> Any:
            if streaming_requests:
                request = _checked(request, context)
            else:
                await refuse_unparsable(request, context)
            return await behavior(request, context)

        return unary_out
    return None


def _sending_bytes(serializer: Callable[[Any], bytes] | None) -> Callable[[Any], bytes] | None:
    """`serializer`, except that a reply already serialized (bytes) is sent as it is."""
    if serializer is None:
        return None

    def serialize(response: Any) -> bytes:
        return response if type(response) is bytes else serializer(response)

    return serialize


class MalformedRequestInterceptor(grpc.aio.ServerInterceptor):
    """Answers request bytes that do not parse as the method's message with INVALID_ARGUMENT.
    It also sends a reply that a handler returns already serialized, as bytes, as it is:
    env_service.servicer.EnvServicer's docstring says which handlers do that, and why."""

    def __init__(self) -> None:
        self._handlers: dict[str, grpc.RpcMethodHandler] = {}  # registered methods only

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        method = handler_call_details.method
        wrapped = self._handlers.get(method)
        if wrapped is None:
            handler = await continuation(handler_call_details)
            if handler is None:  # no such method: not cached, so unknown names cannot pile up
                return None
            wrapped = self._handlers[method] = self._wrap(handler)
        return wrapped

    @staticmethod
    def _wrap(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        kind = ("stream" if handler.request_streaming else "unary") + "_"
        kind += "stream" if handler.response_streaming else "unary"
        original = getattr(handler, kind)
        if not hasattr(handler, "_replace"):
            return handler
        lenient = _lenient(handler.request_deserializer)
        serialize = _sending_bytes(handler.response_serializer)
        if getattr(original, "own_request_checks", False):
            return handler._replace(request_deserializer=lenient, response_serializer=serialize)
        behavior = _refusing(original, handler.request_streaming)
        if behavior is None:
            return handler
        return handler._replace(request_deserializer=lenient, response_serializer=serialize, **{kind: behavior})
