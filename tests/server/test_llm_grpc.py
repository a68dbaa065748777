"""The LLM path behind the real gRPC service: `serve` picks the model up from the environment,
and a deadline or a client cancel closes the in-flight model calls."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest

from server.llm_client import LLMConfig, backend_from_config
from server.pb.source_tracer.v1 import tracer_pb2 as pb
from server.pb.source_tracer.v1 import tracer_pb2_grpc
from tests.fake_openai import FakeOpenAI, Reply, candidates_first, match_json
from tests.server.conftest import (
    EN_RECORDS,
    EN_REPORT,
    InProcessServer,
    SubprocessServer,
    base_config,
    records_pb,
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


def test_deadline_cancels_in_flight_llm_calls(slow_model_server: tuple[FakeOpenAI, InProcessServer]) -> None:
    model, srv = slow_model_server
    with pytest.raises(grpc.RpcError) as err:
        srv.stub().Trace(request(), timeout=1.0)
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    wait_until(lambda: model.log and all(e.end for e in model.log), 10, "model calls to end")
    assert all(e.aborted for e in model.log)


def test_client_cancel_cancels_in_flight_llm_calls(
    slow_model_server: tuple[FakeOpenAI, InProcessServer],
) -> None:
    model, srv = slow_model_server
    future = srv.stub().Trace.future(request(), timeout=60)
    wait_until(lambda: len(model.log) >= 1, 20, "the model to be called")
    future.cancel()
    wait_until(lambda: all(e.end for e in model.log), 10, "model calls to end")
    assert all(e.aborted for e in model.log)
