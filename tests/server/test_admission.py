"""In-flight bound, deadlines and cancellation against the real server.

The server runs the real `tracer.trace`, wrapped so a call can be held in flight: the
wrapper waits on a gate (or on the call's cancel token) before tracing. The wrapper shares
state with the test, so these servers run traces in threads; test_workers.py covers the same
paths with worker processes."""

from __future__ import annotations

import threading
from typing import Any

import grpc
import pytest

from server.pb.source_tracer.v1 import tracer_pb2 as pb
from server.pb.source_tracer.v1 import tracer_pb2_grpc
from tests.server.conftest import (
    EN_RECORDS,
    EN_REPORT,
    RETRY_SERVICE_CONFIG,
    InProcessServer,
    base_config,
    records_pb,
    wait_until,
)
from tracer.pipeline import trace


class Gate:
    """trace() that first waits for `open` or for the call's cancel token."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.entered = threading.Semaphore(0)
        self.saw_cancel: list[bool] = []
        self.raised: list[str] = []

    def __call__(self, report: str, records: Any, options: Any, **kw: Any) -> Any:
        self.entered.release()
        cancel = kw.get("cancel")
        while not self.open.is_set():
            if cancel is not None and cancel.is_set():
                self.saw_cancel.append(True)
                break
            self.open.wait(0.01)
        try:
            return trace(report, records, options, **kw)
        except Exception as exc:
            self.raised.append(type(exc).__name__)
            raise


@pytest.fixture
def gated():
    gate = Gate()
    srv = InProcessServer(base_config(max_in_flight=2, workers=2, worker_mode="thread"), trace_fn=gate)
    yield srv, gate
    gate.open.set()
    srv.close()


def _request() -> pb.TraceRequest:
    return pb.TraceRequest(report=EN_REPORT, records=records_pb(EN_RECORDS))


def test_beyond_max_in_flight_is_resource_exhausted_at_once(gated) -> None:
    srv, gate = gated
    stub = srv.stub()
    held = [stub.Trace.future(_request()) for _ in range(2)]
    wait_until(lambda: srv.service.in_flight == 2, what="two calls in flight")
    with pytest.raises(grpc.RpcError) as err:
        stub.Trace(_request(), timeout=10)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "max_in_flight limit of 2" in err.value.details()
    # A stream is refused the same way.
    with pytest.raises(grpc.RpcError) as err:
        list(stub.TraceStream(iter([_request()]), timeout=10))
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    gate.open.set()
    for f in held:
        assert f.result(timeout=30).citations
    wait_until(lambda: srv.service.in_flight == 0, what="slots released")
    assert stub.Trace(_request(), timeout=30).citations


def test_the_documented_retry_policy_rides_out_a_full_server(gated) -> None:
    srv, gate = gated
    stub = srv.stub()
    held = [stub.Trace.future(_request()) for _ in range(2)]
    wait_until(lambda: srv.service.in_flight == 2, what="two calls in flight")
    rejected = srv.running.metrics.registry.get_sample_value

    def open_after_a_refusal() -> None:
        wait_until(lambda: (rejected("source_tracer_rejected_total", {"reason": "in_flight"}) or 0) >= 1,
                   what="the retrying call refused once")
        gate.open.set()

    opener = threading.Thread(target=open_after_a_refusal)
    opener.start()
    channel = srv.channel(options=[("grpc.service_config", RETRY_SERVICE_CONFIG), ("grpc.enable_retries", 1)])
    try:
        resp = tracer_pb2_grpc.SourceTracerStub(channel).Trace(_request(), timeout=30)
    finally:
        opener.join(30)
        channel.close()
    assert resp.citations, "refused while the server was full, then retried by the channel and served"
    assert rejected("source_tracer_rejected_total", {"reason": "in_flight"}) >= 1
    for f in held:
        assert f.result(timeout=30).citations


def test_deadline_stops_the_work(gated) -> None:
    srv, gate = gated
    with pytest.raises(grpc.RpcError) as err:
        srv.stub().Trace(_request(), timeout=0.3)
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    # The worker saw the cancel token and the pipeline stopped with CancelledError.
    wait_until(lambda: gate.raised == ["CancelledError"], what="pipeline cancelled")
    assert gate.saw_cancel == [True]
    wait_until(lambda: srv.service.in_flight == 0, what="slot released")


def test_client_cancel_stops_the_work(gated) -> None:
    srv, gate = gated
    fut = srv.stub().Trace.future(_request())
    assert gate.entered.acquire(timeout=10)
    fut.cancel()
    wait_until(lambda: gate.raised == ["CancelledError"], what="pipeline cancelled")
    wait_until(lambda: srv.service.in_flight == 0, what="slot released")


def test_stream_deadline_stops_its_items(gated) -> None:
    srv, gate = gated
    items = [pb.TraceRequest(id=str(i), report=EN_REPORT, records=records_pb(EN_RECORDS)) for i in range(3)]
    with pytest.raises(grpc.RpcError) as err:
        list(srv.stub().TraceStream(iter(items), timeout=0.3))
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    wait_until(lambda: srv.service.in_flight == 0, what="stream slot released (after its threads)")
    assert gate.raised and set(gate.raised) == {"CancelledError"}, "no item ran to completion"


def test_a_bug_is_internal_with_request_id_and_the_server_survives() -> None:
    calls: list[int] = []

    def buggy(report: str, records: Any, options: Any, **kw: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("simulated bug")
        return trace(report, records, options, **kw)

    srv = InProcessServer(base_config(worker_mode="thread"), trace_fn=buggy)
    try:
        stub = srv.stub()
        with pytest.raises(grpc.RpcError) as err:
            stub.Trace(_request(), metadata=(("x-request-id", "bug-1"),), timeout=30)
        assert err.value.code() == grpc.StatusCode.INTERNAL
        assert err.value.details() == "internal error (request id bug-1)"  # no internals leaked
        assert stub.Trace(_request(), timeout=30).citations
        assert srv.service.in_flight == 0
    finally:
        srv.close()
