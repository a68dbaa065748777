"""The SourceTracer servicer: protobuf in, `tracer.trace()` in a worker (server/workers.py), protobuf out.

Everything gRPC-specific lives here or in `server/`: status codes (one table), limits,
the in-flight bound, deadlines/cancellation, request ids, logs and metrics."""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from server.config import ServerConfig
from server.convert import MAX_MESSAGE_KEY, STREAM_CONCURRENCY_KEY, check_limits
from server.logs import log
from server.metrics import Metrics
from server.pb.source_tracer.v1 import tracer_pb2 as pb
from server.pb.source_tracer.v1 import tracer_pb2_grpc
from server.wire import first_bad_utf8, last_string
from server.workers import (
    Cancel,
    PoolClosed,
    TraceSummary,
    WorkerCrashed,
    WorkerFailed,
    Workers,
    llm_deadline_within,
)
from tracer import __version__
from tracer.errors import CancelledError, InvalidInputError, LimitExceededError, TracerError

# The one table mapping core errors to status codes (first match wins: subclasses first).
# Anything else is a bug: INTERNAL, logged with its traceback, never caused by bad input.
STATUS_BY_ERROR: tuple[tuple[type[TracerError], grpc.StatusCode], ...] = (
    (LimitExceededError, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (InvalidInputError, grpc.StatusCode.INVALID_ARGUMENT),
    (CancelledError, grpc.StatusCode.CANCELLED),  # DEADLINE_EXCEEDED when the deadline passed
)

# gRPC's retry pushback (gRFC A6): a negative value tells the client's retry policy not to retry.
RETRY_PUSHBACK_KEY = "grpc-retry-pushback-ms"

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:/+=-]{1,128}$")
_TRACE_REQUEST = pb.DESCRIPTOR.message_types_by_name["TraceRequest"]  # = pb.TraceRequest.DESCRIPTOR


class MalformedRequest:
    """Stands in for a request whose bytes are not a valid TraceRequest (e.g. bad UTF-8), so
    the call is answered INVALID_ARGUMENT instead of gRPC's UNKNOWN for deserializer errors.
    `message` is that status message; `id` is the request's own when it could be read, so that a
    TraceStream client can match the item's answer."""

    report = ""
    records: tuple[()] = ()

    def __init__(self, message: str, id: str = "") -> None:
        self.message = message
        self.id = id


def parse_request(data: bytes) -> pb.TraceRequest | MalformedRequest:
    try:
        request: pb.TraceRequest = pb.TraceRequest.FromString(data)
    except DecodeError as exc:
        return malformed_request(data, exc)
    return request


def malformed_request(data: bytes, exc: DecodeError) -> MalformedRequest:
    """Name the field when protobuf refused a string that is not UTF-8 (it names none itself)."""
    bad = first_bad_utf8(data, _TRACE_REQUEST)
    if bad is None:   # damaged otherwise, or too many fields to walk on the event loop: say no more
        message = f"request: not a valid TraceRequest: {str(exc).rsplit(': ', 1)[-1] or 'cannot parse'}"
        return MalformedRequest(message)
    message = (f"{bad.path}: not valid UTF-8 (byte offset {bad.offset} of the field), "
               "so the request is not a valid TraceRequest")
    return MalformedRequest(message, last_string(data, _TRACE_REQUEST, "id") or "")


def add_to_server(service: SourceTracerService, server: grpc.aio.Server) -> None:
    """Register the servicer like the generated helper, but with `parse_request`."""
    name = pb.DESCRIPTOR.services_by_name["SourceTracer"].full_name
    serialize = pb.TraceResponse.SerializeToString
    handlers = {
        "Trace": grpc.unary_unary_rpc_method_handler(
            service.Trace, request_deserializer=parse_request, response_serializer=serialize),
        "TraceStream": grpc.stream_stream_rpc_method_handler(
            service.TraceStream, request_deserializer=parse_request, response_serializer=serialize),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))
    server.add_registered_method_handlers(name, handlers)


_FRAME_RESERVE = 64  # bytes of a message's gRPC framing, kept free under max_message_bytes


@dataclass(slots=True)
class _Outcome:
    code: grpc.StatusCode
    message: str
    response: pb.TraceResponse | None = None
    summary: TraceSummary | None = None
    wait_ms: float = 0.0  # from handing the request to the workers until the result is back here

    def release(self) -> None:
        """Free the trace's working data, once the answer is on its way (or the call is over)."""
        if self.summary is not None:
            self.summary.release()


def status_for(exc: BaseException, deadline_passed: bool = False) -> tuple[grpc.StatusCode, str]:
    """Status code and message for an exception raised while tracing."""
    for cls, code in STATUS_BY_ERROR:
        if isinstance(exc, cls):
            if cls is CancelledError and deadline_passed:
                return grpc.StatusCode.DEADLINE_EXCEEDED, f"deadline exceeded: {exc}"
            return code, str(exc)
    return grpc.StatusCode.INTERNAL, "internal error"


def request_id_of(context: grpc.aio.ServicerContext) -> str:
    """The caller's x-request-id when it is a sane token, else a fresh one."""
    for key, value in context.invocation_metadata() or ():
        if key == "x-request-id" and isinstance(value, str) and _REQUEST_ID.match(value):
            return value
    return uuid.uuid4().hex


class SourceTracerService(tracer_pb2_grpc.SourceTracerServicer):
    def __init__(
        self,
        config: ServerConfig,
        workers: Workers,
        metrics: Metrics,
        llm_reserve: float | None = None,
    ) -> None:
        self._config = config
        self._llm_reserve = llm_reserve  # llm.deadline_reserve (None: the default rule)
        self._workers = workers
        self._metrics = metrics
        self._lock = threading.Lock()
        self._in_flight = 0  # accepted calls whose work has not finished (workers included)
        self.draining = False
        self._drain_started = asyncio.Event()  # wakes open streams so they stop reading items
        self._live: dict[_Slot, Cancel] = {}  # admitted calls still running, and their cancel flags
        self._drain_llm_at: float | None = None  # when model calls must end, once draining

    def begin_drain(self, grace: float | None = None) -> None:
        """Refuse new calls from now on, and have open streams stop reading new items. With a
        `grace`, every running call's model calls must end in time for its deterministic answer
        within it (the same reserve as a deadline's): a slow model is abandoned, so the call is
        answered, degraded, instead of being cut off when the grace runs out."""
        self.draining = True
        self._drain_started.set()
        if grace is not None:
            at = self._drain_llm_at = llm_deadline_within(grace, self._llm_reserve)
            with self._lock:
                live = list(self._live.values())
            for cancel in live:
                cancel.hurry(at)

    # ---- admission ---------------------------------------------------------------------

    @property
    def in_flight(self) -> int:
        """Accepted calls not finished yet, counting worker threads still running for them."""
        with self._lock:
            return self._in_flight

    def _try_enter(self) -> _Slot | None:
        with self._lock:
            if self._in_flight >= self._config.max_in_flight:
                return None
            self._in_flight += 1
        self._metrics.in_flight.inc()
        return _Slot(self)

    def _slot_released(self) -> None:
        with self._lock:
            self._in_flight -= 1
        self._metrics.in_flight.dec()

    async def _admit(self, context: grpc.aio.ServicerContext, rid: str) -> _Slot:
        """Refuse at once when draining (UNAVAILABLE) or full (RESOURCE_EXHAUSTED)."""
        trailer = (("x-request-id", rid),)
        if self.draining:
            self._metrics.rejected.labels(reason="draining").inc()
            await context.abort(grpc.StatusCode.UNAVAILABLE, "server is shutting down; retry elsewhere",
                                trailing_metadata=trailer)
        slot = self._try_enter()
        if slot is None:
            self._metrics.rejected.labels(reason="in_flight").inc()
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"server busy: max_in_flight limit of {self._config.max_in_flight} calls reached",
                trailing_metadata=trailer,
            )
        assert slot is not None
        return slot

    # ---- one trace -----------------------------------------------------------------------

    async def _run_one(
        self, request: pb.TraceRequest, slot: _Slot, cancel: Cancel, deadline: float | None,
        rid: str,
    ) -> _Outcome:
        """Trace one request; never raises except asyncio.CancelledError (call cancelled)."""
        if isinstance(request, MalformedRequest):
            return _Outcome(grpc.StatusCode.INVALID_ARGUMENT, request.message)
        try:
            check_limits(request, self._config.limits)
        except TracerError as exc:
            code, message = status_for(exc)
            return _Outcome(code, message)
        loop = asyncio.get_running_loop()
        slot.hold()  # a drain also waits for the worker of a call the client gave up on
        submitted = time.perf_counter()
        try:
            future = self._workers.submit(request, cancel)
        except Exception as exc:  # a pool broken by a crash a moment ago (rebuilt now), or shut down
            slot.release()
            log("worker pool unavailable", logging.ERROR, request_id=rid, error=str(exc))
            return _Outcome(grpc.StatusCode.UNAVAILABLE, f"no trace worker available: {exc}; retry")
        future.add_done_callback(lambda _f: slot.release())
        try:
            summary, response = await asyncio.wrap_future(future, loop=loop)
        except asyncio.CancelledError:
            cancel.set()  # the caller went away: stop the worker at its next stage boundary
            raise
        except TracerError as exc:
            passed = deadline is not None and time.monotonic() >= deadline
            code, message = status_for(exc, passed)
            return _Outcome(code, message)
        except PoolClosed as exc:
            return _Outcome(grpc.StatusCode.UNAVAILABLE, str(exc))
        except WorkerCrashed as exc:
            self._metrics.worker_crashes.inc()
            log("worker crashed", logging.ERROR, request_id=rid, error=str(exc))
            return _Outcome(grpc.StatusCode.INTERNAL, f"internal error: {exc} (request id {rid})")
        except WorkerFailed as exc:
            log("internal error", logging.ERROR, request_id=rid, traceback=exc.formatted)
            return _Outcome(grpc.StatusCode.INTERNAL, f"internal error (request id {rid})")
        except Exception:
            log("internal error", logging.ERROR, request_id=rid, traceback=_format_exc())
            return _Outcome(grpc.StatusCode.INTERNAL, f"internal error (request id {rid})")
        size, limit = response.ByteSize(), self._config.max_message_bytes - _FRAME_RESERVE
        if size > limit:
            # gRPC would refuse to send it, after all the work, and end a stream with it
            return _Outcome(grpc.StatusCode.RESOURCE_EXHAUSTED,
                            f"response: {size} bytes, over the server's max_message_bytes "
                            f"({self._config.max_message_bytes}); ask for fewer sources "
                            "(options.max_sources) or send a shorter report", None, summary)
        return _Outcome(grpc.StatusCode.OK, "", response, summary, (time.perf_counter() - submitted) * 1000)

    def _record(
        self, method: str, rid: str, request: pb.TraceRequest, outcome: _Outcome, t0: float,
        elapsed: float | None = None,
    ) -> None:
        """Metrics and the log line of one finished call (or stream item)."""
        if elapsed is None:
            elapsed = time.perf_counter() - t0
        self._metrics.requests.labels(method=method, code=outcome.code.name).inc()
        self._metrics.latency.labels(method=method).observe(elapsed)
        fields: dict[str, Any] = {
            "request_id": rid, "method": method, "code": outcome.code.name,
            "ms": round(elapsed * 1000, 2), "report_chars": len(request.report),
            "records": len(request.records),
        }
        if request.id:
            fields["item_id"] = request.id[:128]
        if outcome.code is not grpc.StatusCode.OK:
            fields["error"] = outcome.message
        if outcome.summary is not None:
            st = outcome.summary.stats
            self._metrics.observe_result(outcome.summary)
            worker_ms = outcome.summary.worker_ms
            # Waiting for a free lane plus the hops to and from it: the saturation signal.
            self._metrics.queue.labels(method=method).observe(max(0.0, outcome.wait_ms - worker_ms) / 1000)
            fields.update(
                mode=outcome.summary.mode, degraded=outcome.summary.degraded,
                sentences=st.sentences, citations=st.citations, unsupported=st.unsupported,
                records_dropped=st.records_dropped, llm_calls=st.llm_calls,
                wait_ms=round(outcome.wait_ms, 2), worker_ms=round(worker_ms, 2),
                trace_ms=round(st.total_ms, 2),
                stage_ms={k: round(v, 2) for k, v in st.stage_ms.items()},
            )
        if not self._config.sensitive:
            fields["report_head"] = request.report[:200]
        log("trace", logging.INFO if outcome.code is grpc.StatusCode.OK else logging.WARNING, **fields)

    # ---- RPCs ------------------------------------------------------------------------------

    async def _start_call(
        self, context: grpc.aio.ServicerContext
    ) -> tuple[str, _Slot, Cancel, float | None, asyncio.TimerHandle | None]:
        """Request id, admission slot, and a cancel token that the deadline (if any) sets."""
        rid = request_id_of(context)
        context.set_trailing_metadata((("x-request-id", rid),))
        slot = await self._admit(context, rid)
        remaining = context.time_remaining()
        deadline = None if remaining is None else time.monotonic() + remaining
        cancel = Cancel(None if remaining is None else llm_deadline_within(remaining, self._llm_reserve))
        slot.watch(cancel)
        if self._drain_llm_at is not None:  # admitted as the drain began: it has the grace too
            cancel.hurry(self._drain_llm_at)
        timer = None if remaining is None else asyncio.get_running_loop().call_later(
            max(0.0, remaining), cancel.set)
        return rid, slot, cancel, deadline, timer

    async def Trace(self, request: pb.TraceRequest, context: grpc.aio.ServicerContext) -> pb.TraceResponse:
        t0 = time.perf_counter()
        rid, slot, cancel, deadline, timer = await self._start_call(context)
        try:
            outcome = await self._run_one(request, slot, cancel, deadline, rid)
        except asyncio.CancelledError:
            self._record("Trace", rid, request, _ended(deadline), t0)
            raise
        finally:
            if timer is not None:
                timer.cancel()
            slot.release()
        if outcome.response is None:
            self._record("Trace", rid, request, outcome, t0)
            trailer: tuple[tuple[str, str], ...] = (("x-request-id", rid),)
            if outcome.code is grpc.StatusCode.RESOURCE_EXHAUSTED:
                # Over a size limit: the same request fails the same way, so tell a client with a
                # retry policy on RESOURCE_EXHAUSTED (meant for a busy server) not to retry it.
                trailer += ((RETRY_PUSHBACK_KEY, "-1"),)
            await context.abort(outcome.code, outcome.message, trailing_metadata=trailer)
        assert outcome.response is not None
        # Metrics, the log line and freeing the trace's working data (passages, index, caches:
        # about 0.6 ms for a dev case) wait until the call is over: they are not the caller's
        # business. Anything run on the event loop before that (even a callback scheduled for its
        # next turn) delays the response on its way out.
        elapsed = time.perf_counter() - t0

        def finished(_context: object) -> None:
            self._record("Trace", rid, request, outcome, t0, elapsed)
            outcome.release()

        context.add_done_callback(finished)
        return outcome.response

    async def TraceStream(
        self, request_iterator: AsyncIterator[pb.TraceRequest], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.TraceResponse]:
        """Bidi bulk: each item answered with its id and a per-item status, as it completes.

        At most `stream_concurrency` items are in progress; the stream stops reading the
        client until a finished item's response has been written (bounded memory)."""
        rid, slot, cancel, deadline, timer = await self._start_call(context)
        # Tell the client how many items this stream works on at once, so that it can keep
        # that many (and the next ones) in flight: `source-tracer bulk --server` sizes its window so.
        try:
            await context.send_initial_metadata(
                ((STREAM_CONCURRENCY_KEY, str(self._config.stream_concurrency)),
                 (MAX_MESSAGE_KEY, str(self._config.max_message_bytes))))
        except BaseException:
            if timer is not None:
                timer.cancel()
            slot.release()
            raise
        slots = asyncio.Semaphore(self._config.stream_concurrency)
        done: asyncio.Queue[pb.TraceResponse | None] = asyncio.Queue()
        tasks: set[asyncio.Task[None]] = set()

        async def one(request: pb.TraceRequest) -> None:
            t0 = time.perf_counter()
            try:
                outcome = await self._run_one(request, slot, cancel, deadline, rid)
            except asyncio.CancelledError:  # the stream ended under it: still one log line an item
                self._record("TraceStream", rid, request, _ended(deadline), t0)
                raise
            self._record("TraceStream", rid, request, outcome, t0)
            if outcome.response is None:
                resp = pb.TraceResponse(id=request.id, status=pb.Status(code=outcome.code.value[0],
                                                                        message=outcome.message),
                                        engine_version=__version__)
            else:
                resp = outcome.response
            await done.put(resp)
            asyncio.get_running_loop().call_soon(outcome.release)  # once the writer has it

        async def read() -> None:
            # A drain stops the reading: the items in progress finish and are answered, then
            # the stream ends (OK); an item that arrives with the drain is answered UNAVAILABLE,
            # and the client resends what is unanswered elsewhere. (Reading on would hold the
            # drain for its whole grace period, then cut the stream and waste the work.)
            items = request_iterator.__aiter__()
            drain = asyncio.ensure_future(self._drain_started.wait())
            nxt: asyncio.Future[pb.TraceRequest] | None = None
            try:
                while not drain.done():
                    nxt = asyncio.ensure_future(items.__anext__())
                    await asyncio.wait((nxt, drain), return_when=asyncio.FIRST_COMPLETED)
                    if not nxt.done():
                        nxt.cancel()
                        break
                    try:
                        request = nxt.result()
                    except StopAsyncIteration:
                        break
                    await slots.acquire()
                    if self.draining:
                        await done.put(pb.TraceResponse(
                            id=request.id, engine_version=__version__,
                            status=pb.Status(code=grpc.StatusCode.UNAVAILABLE.value[0],
                                             message="server is shutting down; retry elsewhere")))
                        break
                    task = asyncio.create_task(one(request))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                while tasks:
                    await asyncio.gather(*list(tasks))
            finally:
                drain.cancel()
                if nxt is not None:
                    # a read left pending may still end (StopAsyncIteration, an error), or have
                    # ended just as the reader was cancelled: take its outcome either way, or
                    # asyncio prints "Task exception was never retrieved" on stderr
                    if not nxt.done():
                        nxt.cancel()
                    nxt.add_done_callback(_consume)
                await done.put(None)

        reader = asyncio.create_task(read())
        try:
            while True:
                resp = await done.get()
                if resp is None:
                    break
                yield resp
                slots.release()
            await reader  # surfaces a failure of the request stream itself
        finally:
            cancel.set()
            if timer is not None:
                timer.cancel()
            for task in (reader, *tasks):
                task.cancel()
            slot.release()


class _Slot:
    """One admitted call; freed when the handler and every worker thread it started are done."""

    __slots__ = ("_service", "_holds")

    def __init__(self, service: SourceTracerService) -> None:
        self._service = service
        self._holds = 1

    def watch(self, cancel: Cancel) -> None:
        """`cancel` is this call's: a drain brings its model deadline forward (`begin_drain`)."""
        with self._service._lock:
            self._service._live[self] = cancel

    def hold(self) -> None:
        with self._service._lock:
            self._holds += 1

    def release(self) -> None:
        with self._service._lock:
            self._holds -= 1
            last = self._holds == 0
            if last:
                self._service._live.pop(self, None)
        if last:
            self._service._slot_released()


def _ended(deadline: float | None) -> _Outcome:
    """The outcome of a call or stream item that ended before its trace did."""
    if deadline is not None and time.monotonic() >= deadline:
        return _Outcome(grpc.StatusCode.DEADLINE_EXCEEDED, "deadline exceeded")
    return _Outcome(grpc.StatusCode.CANCELLED, "call cancelled by the client")


def _consume(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _format_exc() -> str:
    import traceback

    return traceback.format_exc()
