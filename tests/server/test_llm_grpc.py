"""The LLM path behind the real gRPC service: `serve` picks the model up from the environment,
a deadline the model cannot meet degrades to the deterministic path, and a client cancel closes the
in-flight model calls."""

from __future__ import annotations

import time
from collections.abc import Iterator

import grpc
import pytest

from server.llm_client import LLMConfig, backend_from_config
from server.pb.source_tracer.v1 import tracer_pb2 as pb
from server.pb.source_tracer.v1 import tracer_pb2_grpc
from tests.fake_openai import FakeOpenAI, Reply, candidates_first, free_port, match_json, silent
from tests.server.conftest import (
    EN_RECORDS,
    EN_REPORT,
    InProcessServer,
    SubprocessServer,
    base_config,
    metric_value,
    records_pb,
    scrape,
    wait_until,
)
from tracer.llm import LLMSettings


def request() -> pb.TraceRequest:
    return pb.TraceRequest(report=EN_REPORT, records=records_pb(EN_RECORDS))


def test_serve_in_auto_mode_uses_the_llm_configured_in_the_environment() -> None:
    with FakeOpenAI(candidates_first) as model:
        env = {"OPENAI_BASE_URL": model.base_url, "SOURCE_TRACER_LLM_MODEL": "fake-model"}
        srv = SubprocessServer(env=env)
        try:
            with grpc.insecure_channel(srv.address) as ch:
                resp = tracer_pb2_grpc.SourceTracerStub(ch).Trace(request(), timeout=60)
        finally:
            srv.terminate()
            srv.wait()
            srv.close()
    assert resp.mode == "llm" and not resp.degraded
    assert resp.stats.llm_calls == len(model.log) >= 2
    assert {e.body["model"] for e in model.log} == {"fake-model"}
    assert resp.citations


@pytest.fixture()
def slow_model_server() -> Iterator[tuple[FakeOpenAI, InProcessServer]]:
    model = FakeOpenAI([Reply(match_json({}), delay=20.0)]).__enter__()
    llm = backend_from_config(LLMConfig(base_url=model.base_url, model="m",
                                        settings=LLMSettings(timeout=60.0)))
    srv = InProcessServer(base_config(), llm=llm)
    yield model, srv
    srv.close()
    model.__exit__(None, None, None)


def test_a_deadline_the_model_cannot_meet_still_gets_an_answer(
    slow_model_server: tuple[FakeOpenAI, InProcessServer],
) -> None:
    """The model gets the deadline less a reserve (0.5 s of 2 s); its unanswered calls are then
    abandoned and the request is traced without it: OK, degraded, said in a warning."""
    model, srv = slow_model_server
    t0 = time.monotonic()
    resp = srv.stub().Trace(request(), timeout=2.0)
    elapsed = time.monotonic() - t0
    assert resp.status.code == 0 and resp.mode == "llm" and resp.degraded
    assert resp.citations, "the deterministic path cited what the records support"
    assert any("deadline" in w for w in resp.warnings), list(resp.warnings)
    assert 1.3 < elapsed < 2.0
    wait_until(lambda: model.log and all(e.end for e in model.log), 10, "model calls to end")
    assert len(model.log) == 1 and model.log[0].aborted  # recognition hung up; matching never asked


def test_a_deadline_shorter_than_the_reserve_skips_the_model(
    slow_model_server: tuple[FakeOpenAI, InProcessServer],
) -> None:
    model, srv = slow_model_server
    resp = srv.stub().Trace(request(), timeout=0.4)
    assert resp.status.code == 0 and resp.degraded and resp.citations
    assert any("no time left before the call's deadline" in w for w in resp.warnings)
    assert model.log == []


def test_a_configured_reserve_stops_the_model_that_long_before_the_deadline() -> None:
    """llm.deadline_reserve = 1.5 s of a 2 s deadline: the model gets 0.5 s, not the default 1.5 s."""
    with FakeOpenAI([Reply(match_json({}), delay=20.0)]) as model:
        llm = backend_from_config(LLMConfig(base_url=model.base_url, model="m",
                                            settings=LLMSettings(timeout=60.0, deadline_reserve=1.5)))
        srv = InProcessServer(base_config(), llm=llm)
        try:
            t0 = time.monotonic()
            resp = srv.stub().Trace(request(), timeout=2.0)
            elapsed = time.monotonic() - t0
        finally:
            srv.close()
        wait_until(lambda: model.log and all(e.end for e in model.log), 10, "model calls to end")
    assert resp.status.code == 0 and resp.degraded and resp.citations
    assert any("deadline" in w for w in resp.warnings), list(resp.warnings)
    assert 0.4 < elapsed < 1.3
    assert len(model.log) == 1 and model.log[0].aborted
    assert model.log[0].end - model.log[0].start < 1.0


def test_a_model_that_cites_nothing_keeps_the_verbatim_citations_and_says_how_many() -> None:
    """llm.keep_score: the response's stats and the metrics page count the sentences kept."""
    with FakeOpenAI(silent) as model:
        llm = backend_from_config(LLMConfig(base_url=model.base_url, model="m"))
        port = free_port()
        srv = InProcessServer(base_config(metrics_port=port), llm=llm)
        try:
            resp = srv.stub().Trace(request(), timeout=60)
            kept = resp.stats.llm_sentences_kept
            # the server records a call's metrics just after handing its response to gRPC
            wait_until(lambda: metric_value(scrape(port), "source_tracer_llm_sentences_kept_total") == kept,
                       10, "the metrics page to count the call")
        finally:
            srv.close()
    assert resp.mode == "llm" and not resp.degraded
    assert kept >= 1 and len(resp.citations) == kept
    assert all(s.score >= 0.9 for c in resp.citations for s in c.sources)


def test_a_request_overrides_the_servers_llm_gate() -> None:
    with FakeOpenAI(silent) as model:
        llm = backend_from_config(LLMConfig(base_url=model.base_url, model="m"))
        srv = InProcessServer(base_config(), llm=llm)
        try:
            default = srv.stub().Trace(request(), timeout=60)
            off = request()
            off.options.llm_keep_score = 2.0  # above 1: keep none
            final = srv.stub().Trace(off, timeout=60)
        finally:
            srv.close()
    assert default.stats.llm_sentences_kept >= 1 and default.citations
    assert final.mode == "llm" and not final.degraded
    assert final.stats.llm_sentences_kept == 0 and not final.citations


def test_client_cancel_cancels_in_flight_llm_calls(
    slow_model_server: tuple[FakeOpenAI, InProcessServer],
) -> None:
    model, srv = slow_model_server
    future = srv.stub().Trace.future(request(), timeout=60)
    wait_until(lambda: len(model.log) >= 1, 20, "the model to be called")
    future.cancel()
    wait_until(lambda: all(e.end for e in model.log), 10, "model calls to end")
    assert all(e.aborted for e in model.log)


def test_a_drain_answers_calls_waiting_on_a_slow_model_within_its_grace() -> None:
    """SIGTERM's drain brings each running call's model deadline forward to the grace less the
    reserve: calls waiting on a model that answers in 20 s are answered, degraded, within the
    grace (3 s) instead of being cut off when it runs out."""
    import asyncio

    with FakeOpenAI([Reply(match_json({}), delay=20.0)]) as model:
        llm = backend_from_config(LLMConfig(base_url=model.base_url, model="m",
                                            settings=LLMSettings(timeout=60.0)))
        srv = InProcessServer(base_config(max_in_flight=16), llm=llm)
        try:
            stub = srv.stub()
            calls = [stub.Trace.future(request(), timeout=60) for _ in range(4)]
            wait_until(lambda: len(model.log) >= 4, 20, "four calls waiting on the model")
            t0 = time.monotonic()
            left = asyncio.run_coroutine_threadsafe(srv.running.drain(3.0), srv.loop).result(30)
            elapsed = time.monotonic() - t0
            responses = [c.result(timeout=10) for c in calls]
        finally:
            srv._stop_loop()
    assert left == 0 and elapsed < 3.0, (left, elapsed)
    for resp in responses:
        assert resp.status.code == 0 and resp.degraded and resp.citations
        assert any("brought forward" in w for w in resp.warnings), list(resp.warnings)
