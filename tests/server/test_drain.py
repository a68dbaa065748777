"""Graceful shutdown of a real `source-tracer serve` process: SIGTERM with 16 calls in
flight -> every accepted call answers OK, new calls get UNAVAILABLE, exit code 0."""

from __future__ import annotations

import json
import signal
import socket
import time
from collections.abc import Iterator

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from server.pb.source_tracer.v1 import tracer_pb2 as pb
from server.pb.source_tracer.v1 import tracer_pb2_grpc
from tests.server.conftest import EN_RECORDS, EN_REPORT, SubprocessServer, metric_value, scrape, wait_until


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _heavy_request(i: int) -> pb.TraceRequest:
    # 150 copies of the report's paragraphs and 30 more records: about 0.4 s of real work per
    # call on one core (50 copies took 0.14 s, and on a busy machine the 16 calls could finish
    # before a scrape of the metrics saw them all in flight).
    body = EN_REPORT.split("\n\n", 1)[1]
    report = "\n\n".join(body for _ in range(150))
    records = [pb.Record(**r) for r in EN_RECORDS] + [
        pb.Record(url=f"https://e.org/{j}", title=f"t{j}",
                  content=f"Filler text about cars and policy number {j}. " * 40)
        for j in range(30)
    ]
    return pb.TraceRequest(id=str(i), report=report, records=records)


def test_sigterm_drains_sixteen_in_flight_calls() -> None:
    metrics_port = _free_port()
    srv = SubprocessServer("--metrics-port", str(metrics_port), "--grace", "60", "--max-in-flight", "64")
    try:
        channel = grpc.insecure_channel(srv.address)
        stub = tracer_pb2_grpc.SourceTracerStub(channel)
        calls = [stub.Trace.future(_heavy_request(i), timeout=120, metadata=(("x-request-id", f"drain-{i}"),))
                 for i in range(16)]
        wait_until(lambda: metric_value(scrape(metrics_port), "source_tracer_in_flight") >= 16,
                   what="16 calls in flight")
        srv.terminate(signal.SIGTERM)
        wait_until(lambda: any(e.get("event") == "draining" for e in srv.logs), what="drain to start")

        # New calls are refused while the accepted ones finish.
        fresh = tracer_pb2_grpc.SourceTracerStub(grpc.insecure_channel(srv.address))
        try:
            fresh.Trace(pb.TraceRequest(report="late."), timeout=30)
            raise AssertionError("a call made during the drain was accepted")
        except grpc.RpcError as err:
            assert err.code() == grpc.StatusCode.UNAVAILABLE
        try:
            health = health_pb2_grpc.HealthStub(channel)
            status = health.Check(health_pb2.HealthCheckRequest(), timeout=5).status
            assert status == health_pb2.HealthCheckResponse.NOT_SERVING
        except grpc.RpcError as err:  # already closed: also not serving
            assert err.code() == grpc.StatusCode.UNAVAILABLE

        responses = [c.result() for c in calls]
        assert sorted(int(r.id) for r in responses) == list(range(16))
        assert all(r.status.code == 0 and r.citations for r in responses)
        assert srv.wait(90) == 0
        stopped = [e for e in srv.logs if e.get("event") == "stopped"]
        assert stopped and stopped[0]["unfinished"] == 0
        # Structured logs: one JSON "trace" event per call with its request id and stage timings,
        # and (sensitive mode, the default) no report or record text anywhere.
        traces = {e["request_id"]: e for e in srv.logs if e.get("event") == "trace"}
        assert {f"drain-{i}" for i in range(16)} <= set(traces)
        assert all(traces[f"drain-{i}"]["code"] == "OK" for i in range(16))
        assert {"segment", "retrieve", "render"} <= set(traces["drain-0"]["stage_ms"])
        # Where each call's time went: handler > waiting for the worker > in the worker > the trace.
        for i in range(16):
            e = traces[f"drain-{i}"]
            assert e["ms"] >= e["wait_ms"] >= e["worker_ms"] >= e["trace_ms"] > 0, e
        assert not [e for e in srv.logs if "raw" in e], "every log line is JSON"
        assert not any("electric" in json.dumps(e) or "Filler" in json.dumps(e) for e in srv.logs)
    finally:
        srv.close()


def test_sigint_when_idle_exits_zero() -> None:
    srv = SubprocessServer("--grace", "5")
    try:
        srv.terminate(signal.SIGINT)
        assert srv.wait(60) == 0
        # Only JSON log lines: the worker processes went away cleanly (no resource-tracker warning).
        assert [e["raw"] for e in srv.logs if "raw" in e] == []
        assert srv.logs[-1]["event"] == "stopped"
    finally:
        srv.close()


def test_a_drain_ends_an_open_stream_once_its_items_in_progress_are_answered() -> None:
    """A bulk client keeps a TraceStream open while it has input. A drain stops reading new items:
    the ones in progress are answered (an item that raced the drain gets UNAVAILABLE, which the
    client resends elsewhere), then the stream ends OK, well before the grace period, instead of
    tracing on until the grace runs out and then being cut."""
    import threading
    import time

    from tests.server.conftest import InProcessServer, base_config

    srv = InProcessServer(base_config(grace_s=20.0, workers=2, worker_mode="thread"))
    answers: list[tuple[str, int]] = []
    ended: dict[str, str] = {}

    def endless() -> Iterator[pb.TraceRequest]:
        i = 0
        while True:
            yield pb.TraceRequest(id=str(i), report=EN_REPORT, records=[pb.Record(**r) for r in EN_RECORDS])
            i += 1

    def client() -> None:
        try:
            for resp in srv.stub().TraceStream(endless(), timeout=60):
                answers.append((resp.id, resp.status.code))
            ended["how"] = "OK"
        except grpc.RpcError as exc:
            ended["how"] = f"{exc.code().name}: {exc.details()}"

    reader = threading.Thread(target=client, daemon=True)
    reader.start()
    wait_until(lambda: len(answers) >= 5, timeout=30, what="a few answers")
    t0 = time.monotonic()
    srv.close(grace=20.0)
    took = time.monotonic() - t0
    reader.join(10)
    assert ended.get("how") == "OK", ended
    assert took < 10, f"the drain waited {took:.1f} s for an open stream"
    assert {code for _, code in answers} <= {0, grpc.StatusCode.UNAVAILABLE.value[0]}
    assert len({i for i, _ in answers}) == len(answers)  # each item answered once


def test_a_stream_the_client_cancels_logs_every_item_it_started_and_only_json() -> None:
    """Items in progress when the client goes away get their `trace` line (CANCELLED), and the
    read the stream had pending leaves nothing for asyncio to print ("Task exception was never
    retrieved") on the server's JSON-lines stderr."""
    srv = SubprocessServer("--grace", "30")
    try:
        with grpc.insecure_channel(srv.address) as channel:
            stub = tracer_pb2_grpc.SourceTracerStub(channel)

            def items() -> Iterator[pb.TraceRequest]:
                yield from (_heavy_request(i) for i in range(6))
                time.sleep(30)  # keep the stream open: the server has a read pending

            call = stub.TraceStream(items(), timeout=60)
            next(call)
            call.cancel()
        wait_until(lambda: sum(e.get("method") == "TraceStream" for e in srv.logs) >= 4,
                   what="a trace line for each item the stream worked on", timeout=30)
        srv.terminate(signal.SIGTERM)
        assert srv.wait() == 0
        lines = [e for e in srv.logs if e.get("method") == "TraceStream"]
        assert "CANCELLED" in {e["code"] for e in lines}
        assert [e for e in srv.logs if "raw" in e] == []
    finally:
        srv.close()


def test_the_drain_ends_at_its_grace_though_a_trace_still_runs_in_a_thread() -> None:
    """A trace still running in a thread of the server when the grace ran out held the exit
    until its current stage ended (seconds past --grace): the process now ends at the grace."""
    metrics_port = _free_port()
    srv = SubprocessServer("--worker-mode", "thread", "--workers", "1", "--grace", "0.5",
                           "--metrics-port", str(metrics_port))
    try:
        filler = " ".join(f"Record {i} lists routine checks of valves, pumps and cables."
                          for i in range(150))
        slow = pb.TraceRequest(report=EN_REPORT * 100, records=[
            pb.Record(url=f"https://s.example/{i}", title="S", content=f"{filler} case {i}")
            for i in range(3000)])
        stub = tracer_pb2_grpc.SourceTracerStub(grpc.insecure_channel(
            srv.address, options=[("grpc.max_send_message_length", 64 << 20)]))
        call = stub.Trace.future(slow, timeout=120)
        wait_until(lambda: metric_value(scrape(metrics_port), "source_tracer_in_flight") >= 1,
                   what="the slow call in flight")
        time.sleep(1.0)   # into its retrieval stage: about 3 s of indexing 3,000 records
        srv.terminate(signal.SIGTERM)
        assert srv.wait(2.5) == 0   # the stage alone would hold the exit seconds more
        stopped = [e for e in srv.logs if e.get("event") == "stopped"]
        assert stopped and stopped[0]["unfinished"] == 1
        try:
            call.result()
            raise AssertionError("the abandoned call was answered")
        except grpc.RpcError:
            pass
    finally:
        srv.close()


def test_a_second_signal_during_the_drain_exits_at_once() -> None:
    """Ctrl-C twice, or a second SIGTERM: the operator will not wait out the grace. The server
    says so and exits 1 at once, though a call (waiting on a slow model) is still running."""
    from tests.fake_openai import FakeOpenAI, Reply, match_json

    with FakeOpenAI([Reply(match_json({}), delay=60.0)]) as model:
        env = {"OPENAI_BASE_URL": model.base_url, "SOURCE_TRACER_LLM_MODEL": "m"}
        srv = SubprocessServer("--grace", "120", env=env)
        try:
            channel = grpc.insecure_channel(srv.address)
            stub = tracer_pb2_grpc.SourceTracerStub(channel)
            request = pb.TraceRequest(report=EN_REPORT, records=[pb.Record(**r) for r in EN_RECORDS])
            call = stub.Trace.future(request, timeout=300)
            wait_until(lambda: len(model.log) >= 1, 30, "the call to reach the model")
            srv.terminate(signal.SIGTERM)
            wait_until(lambda: any(e.get("event") == "draining" for e in srv.logs), what="drain to start")
            srv.terminate(signal.SIGTERM)  # the same stop delivered twice at once is no second one
            time.sleep(1.5)
            assert srv.proc.poll() is None
            t0 = time.monotonic()
            srv.terminate(signal.SIGINT)
            assert srv.wait(30) == 1 and time.monotonic() - t0 < 10
            said = [e for e in srv.logs if e.get("event") == "second signal; exiting without waiting for the "
                    "calls still running"]
            assert said and said[0]["in_flight"] == 1
            assert call.exception(timeout=30) is not None
        finally:
            srv.close()
