"""Server interceptors: bearer-token authentication.

Request ids, logs and metrics live in the servicer (they need the call's outcome)."""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from server.logs import log
from server.metrics import Metrics
from server.service import request_id_of

# Generic clients and orchestrators must reach these without a token.
OPEN_METHOD_PREFIXES = (
    "/grpc.health.v1.Health/",
    "/grpc.reflection.v1alpha.ServerReflection/",
    "/grpc.reflection.v1.ServerReflection/",
)


def _metadata_value(details: grpc.HandlerCallDetails, key: str) -> str | None:
    for k, v in details.invocation_metadata or ():
        if k == key:
            return v if isinstance(v, str) else None
    return None


class BearerTokenAuth(grpc.aio.ServerInterceptor):
    """Require `authorization: Bearer <token>`; answer UNAUTHENTICATED otherwise."""

    def __init__(self, token: str, metrics: Metrics | None = None) -> None:
        self._expected = token.encode()
        self._metrics = metrics

    def _authorized(self, details: grpc.HandlerCallDetails) -> bool:
        value = _metadata_value(details, "authorization")
        if value is None:
            return False
        scheme, _, token = value.partition(" ")
        # the scheme is case-insensitive (RFC 7235): "bearer", "BEARER" and "Bearer" alike
        return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), self._expected)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        method = handler_call_details.method or ""
        if method.startswith(OPEN_METHOD_PREFIXES) or self._authorized(handler_call_details):
            return await continuation(handler_call_details)
        handler = await continuation(handler_call_details)
        if handler is None:  # unknown method: let gRPC answer UNIMPLEMENTED
            return handler
        if self._metrics is not None:
            self._metrics.rejected.labels(reason="auth").inc()
        return _deny_like(handler, method)


def _deny_like(handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
    """A handler of the same shape as `handler` that answers UNAUTHENTICATED, with the call's
    request id in its trailers and a log line, like every other answer."""
    message = "missing or invalid 'authorization: Bearer <token>' metadata"

    async def deny(_request: Any, context: grpc.aio.ServicerContext) -> None:
        rid = request_id_of(context)
        log("auth refused", logging.WARNING, request_id=rid, method=method.rsplit("/", 1)[-1],
            code="UNAUTHENTICATED")
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message,
                            trailing_metadata=(("x-request-id", rid),))

    kwargs = {
        "request_deserializer": handler.request_deserializer,
        "response_serializer": handler.response_serializer,
    }
    if handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(deny, **kwargs)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(deny, **kwargs)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(deny, **kwargs)
    return grpc.unary_unary_rpc_method_handler(deny, **kwargs)
