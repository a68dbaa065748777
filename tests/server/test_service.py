"""End to end through the real gRPC server and the generated stubs: Trace, TraceStream,
status codes, limits, request ids, health, reflection registration and metrics."""

from __future__ import annotations

import socket
import threading

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

import tracer
from server.pb.source_tracer.v1 import tracer_pb2 as pb
from server.pb.source_tracer.v1 import tracer_pb2_grpc
from tests.server.conftest import (
    EN_RECORDS,
    EN_REPORT,
    RETRY_SERVICE_CONFIG,
    ZH_RECORDS,
    ZH_REPORT,
    InProcessServer,
    base_config,
    metric_value,
    records_pb,
    scrape,
    strip_markers,
    wait_until,
)


def _check_lossless(report: str, resp: pb.TraceResponse) -> None:
    stripped_in = strip_markers(report)
    stripped_out = strip_markers(resp.report)
    assert stripped_out.startswith(stripped_in.rstrip("\n"))


def test_trace_english_end_to_end(stub) -> None:
    resp, call = stub.Trace.with_call(
        pb.TraceRequest(report=EN_REPORT, records=records_pb(EN_RECORDS)),
        metadata=(("x-request-id", "req-en-1"),),
    )
    assert ("x-request-id", "req-en-1") in call.trailing_metadata()
    assert resp.status.code == 0
    _check_lossless(EN_REPORT, resp)
    assert resp.citations, "the 82.4% sentence is verbatim in record 0"
    cited = {s.record_index for c in resp.citations for s in c.sources}
    assert 0 in cited
    for c in resp.citations:
        assert EN_REPORT[c.start:c.end] == c.sentence
        for s in c.sources:
            content = EN_RECORDS[s.record_index]["content"]
            assert content[s.evidence_start:s.evidence_end] == s.evidence
            assert 0 < s.score <= 1.0
            assert f"[{s.number}]" in resp.report
    numbers = [r.number for r in resp.references]
    assert numbers == list(range(1, len(numbers) + 1))
    assert {r.url for r in resp.references} <= {r["url"] for r in EN_RECORDS}
    assert resp.stats.records == 2
    assert resp.stats.sentences >= 4
    assert resp.stats.citations == sum(len(c.sources) for c in resp.citations)
    assert {"records", "segment", "render"} <= set(resp.stats.stage_ms)
    assert resp.stats.total_ms > 0
    assert resp.mode == "deterministic"
    assert not resp.degraded


def test_a_record_without_url_takes_its_metadata_url_and_inline_html_reads_as_spaces(stub) -> None:
    fact = "The Eiffel Tower is 330 metres tall and was completed in 1889."
    snippet = fact.replace("Eiffel Tower", "<strong>Eiffel Tower</strong>")
    resp = stub.Trace(pb.TraceRequest(report=fact, records=[
        pb.Record(id="d1", content=snippet,
                  metadata={"source": "https://kb.example/eiffel", "title": "Tower"})]))
    assert resp.status.code == 0 and [(r.url, r.title) for r in resp.references] == [
        ("https://kb.example/eiffel", "Tower")]
    [src] = resp.citations[0].sources
    quote = snippet[src.evidence_start:src.evidence_end]
    assert quote.replace("<strong>", "").replace("</strong>", "") == fact
    assert "records[0]: content: 2 inline HTML tags (<strong>) read as spaces" in resp.warnings


def test_unsupported_sentences_carry_their_closest_record(stub) -> None:
    resp = stub.Trace(pb.TraceRequest(report=EN_REPORT, records=records_pb(EN_RECORDS)))
    by_text = {u.sentence: u for u in resp.unsupported}
    near = by_text["Norway is a leader in electric mobility."]
    assert near.HasField("closest") and near.closest.record_index == 0
    content = EN_RECORDS[0]["content"]
    assert content[near.closest.evidence_start:near.closest.evidence_end] == near.closest.evidence
    assert 0.1 <= near.closest.score < 0.64 and near.closest.url == EN_RECORDS[0]["url"]
    moon = by_text["Nobody knows what the weather will be like on the moon next week."]
    assert not moon.HasField("closest")
    assert "mobility.[" not in resp.report, "a near miss is never cited"
    assert list(near.closest.unstated) == [] and near.reason == "no record supports this sentence"


def test_a_near_miss_names_the_figures_its_record_does_not_state(stub) -> None:
    records = [{"url": "https://a.example/bridge", "title": "Hollow Creek bridge",
                "content": "The Hollow Creek bridge spans the river. The Hollow Creek bridge is 1,200 metres "
                           "long and opened to traffic in 1937."},
               {"url": "https://b.example/weather", "title": "Weather",
                "content": "Rain is expected over the county this week, with cooler nights."}]
    report = "The Hollow Creek bridge is 1,200 feet long and opened to traffic in 1936."
    resp = stub.Trace(pb.TraceRequest(report=report, records=records_pb(records)))
    assert not resp.citations
    (u,) = resp.unsupported
    assert u.closest.record_index == 0 and list(u.closest.unstated) == ["1200 ft", "1936"]
    assert list(u.closest.quote_figures) == ["1200 m", "1937"]  # what the record says instead
    # the year is contradicted in place; the length is left for "does not state"
    assert u.reason == ("no record supports this sentence; the closest contradicts it: its quote says "
                        '"1937" where the sentence says "1936"; does not state 1200 ft (its quote states '
                        "1200 m)")


PENDLETON = "The Pretty Things guitarist Brian Pendleton died in Maidstone, Kent, in 2001 at the age of 57."
PENDLETON_RECORDS = [
    {"url": "https://g.example/obit", "title": "Brian Pendleton obituary",
     "content": "Brian Pendleton, who played guitar in the Pretty Things, has died at the age of 57 in "
                "Maidstone, Kent, the band said in 2002."},
    *({"url": f"https://f{i}.example/x", "title": "Other", "content": text} for i, text in enumerate((
        "The Millbrook tunnel was dug under the ridge by hand in 1950.",
        "Rainfall in the valley averages 900 millimetres a year.",
        "The county library holds old maps of the creek and the mill.",
        "A ferry crossed the river before the roads were paved.",
        "The band released its first album in 1965 on the Fontana label.",
        "Kent is a county in South East England."))),
]


def test_a_cited_source_names_the_figures_its_record_does_not_state(stub) -> None:
    """Partly supported: cited, and the response says which figure the source does not back."""
    resp = stub.Trace(pb.TraceRequest(report=PENDLETON, records=records_pb(PENDLETON_RECORDS)))
    (cit,) = resp.citations
    (src,) = cit.sources
    assert src.record_index == 0 and src.score >= 0.64
    assert list(src.unstated) == ["2001"] and list(src.quote_figures) == ["2002"]
    # a source that states every figure of its sentence lists none
    full = [dict(PENDLETON_RECORDS[0], content=PENDLETON_RECORDS[0]["content"].replace("2002", "2001")),
            *PENDLETON_RECORDS[1:]]
    (cit,) = stub.Trace(pb.TraceRequest(report=PENDLETON, records=records_pb(full))).citations
    assert list(cit.sources[0].unstated) == [] and list(cit.sources[0].quote_figures) == []
    # strict_figures refuses the partly supported citation instead
    strict = stub.Trace(pb.TraceRequest(report=PENDLETON, records=records_pb(PENDLETON_RECORDS),
                                        options=pb.TraceOptions(strict_figures=True)))
    assert not strict.citations


def test_strict_figures_rejects_an_english_figure_the_record_states_otherwise(stub) -> None:
    records = [{"url": "https://a.example/supor", "title": "Supor results", "content": (
        "According to the flash report, Supor posted revenue of 8.849 billion yuan in the first half of "
        "2018, up 25.27% year on year. The company plans to expand.")},
               {"url": "https://b.example/weather", "title": "Weather",
                "content": "Rain is expected over the county this week, with cooler nights."}]
    report = "In the first half of 2019, Supor reported revenue of 8.849 billion yuan, up 25.27% on the year."
    lenient = stub.Trace(pb.TraceRequest(report=report, records=records_pb(records)))
    assert len(lenient.citations) == 1  # by default partly supported, as dev's English labels count it
    strict = stub.Trace(pb.TraceRequest(report=report, records=records_pb(records),
                                        options=pb.TraceOptions(strict_figures=True)))
    assert not strict.citations
    (u,) = strict.unsupported
    assert u.closest.conflict == ("its quote states 2018 where the sentence says 2019, "
                                  "which the record does not state")


def test_a_near_miss_says_where_its_quote_contradicts_the_sentence(stub) -> None:
    records = [{"url": "https://a.example/ice", "title": "Sea ice",
                "content": "Arctic sea ice extent has decreased sharply since 1979, satellites show."},
               {"url": "https://b.example/weather", "title": "Weather",
                "content": "Rain is expected over the county this week, with cooler nights."}]
    report = "Arctic sea ice extent has increased sharply since 1979."
    resp = stub.Trace(pb.TraceRequest(report=report, records=records_pb(records), options=pb.TraceOptions(
        min_score=0.31)))
    assert not resp.citations, "a contradicted quote is never cited, however low min_score goes"
    (u,) = resp.unsupported
    assert u.closest.record_index == 0 and u.closest.score < 0.31  # capped at 0.3 (a float32)
    assert u.closest.conflict == 'its quote says "decreased" where the sentence says "increased"'
    assert u.reason == ("no record supports this sentence; the closest contradicts it: its quote says "
                        '"decreased" where the sentence says "increased"')


def test_trace_chinese_end_to_end(stub) -> None:
    resp = stub.Trace(pb.TraceRequest(report=ZH_REPORT, records=records_pb(ZH_RECORDS)))
    _check_lossless(ZH_REPORT, resp)
    assert resp.citations
    assert "参考文献" in resp.report
    for c in resp.citations:
        assert ZH_REPORT[c.start:c.end] == c.sentence


def test_no_records_returns_report_unchanged(stub) -> None:
    resp = stub.Trace(pb.TraceRequest(report=EN_REPORT))
    assert resp.report == EN_REPORT
    assert not resp.citations and not resp.references


def test_generated_request_id_is_echoed(stub) -> None:
    _resp, call = stub.Trace.with_call(pb.TraceRequest(report="Hello."))
    rid = dict(call.trailing_metadata())["x-request-id"]
    assert len(rid) == 32


def test_insane_request_id_is_replaced(stub) -> None:
    _resp, call = stub.Trace.with_call(pb.TraceRequest(report="Hello."),
                                       metadata=(("x-request-id", "a b <script>" + "x" * 300),))
    rid = dict(call.trailing_metadata())["x-request-id"]
    assert len(rid) == 32 and rid.isalnum()


def test_invalid_record_is_dropped_with_warning(stub) -> None:
    records = records_pb(EN_RECORDS) + [pb.Record(url="https://bad.example", title="no content")]
    resp = stub.Trace(pb.TraceRequest(report=EN_REPORT, records=records))
    assert resp.stats.records_dropped == 1
    assert any("2" in w for w in resp.warnings)
    assert resp.citations


def test_local_record_with_only_an_id_is_cited_by_its_id(stub) -> None:
    """Local search results may have no URL: the id identifies the source, nothing is invented."""
    records = [pb.Record(id="kb-7", title="Internal memo" if i == 0 else "", content=r["content"])
               for i, r in enumerate(EN_RECORDS)]
    resp = stub.Trace(pb.TraceRequest(report=EN_REPORT, records=records))
    assert resp.stats.records_dropped == 0 and not resp.warnings
    assert resp.citations
    assert {s.url for c in resp.citations for s in c.sources} == {""}
    # Both records share the id, so they are one source under one number.
    assert [(r.number, r.url, r.title) for r in resp.references] == [(1, "", "Internal memo")]
    assert "[1] Internal memo" in resp.report
    _check_lossless(EN_REPORT, resp)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        (pb.TraceOptions(max_sources=-1), "options.max_sources"),
        (pb.TraceOptions(max_sources=99), "options.max_sources"),
        (pb.TraceOptions(min_score=1.5), "options.min_score"),
        (pb.TraceOptions(llm_min_score=-0.5), "options.llm_min_score"),
        (pb.TraceOptions(llm_keep_score=float("inf")), "options.llm_keep_score"),
        (pb.TraceOptions(language="fr"), "options.language"),
        (pb.TraceOptions(mode=7), "options.mode"),
        (pb.TraceOptions(references_heading="a\nb"), "options.references_heading"),
    ],
)
def test_invalid_options_name_the_field(stub, options, field) -> None:
    with pytest.raises(grpc.RpcError) as err:
        stub.Trace(pb.TraceRequest(report="Hello.", options=options))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in err.value.details()


@pytest.fixture(scope="module")
def small_limits_server():
    from server.config import Limits

    limits = Limits(request_bytes=200_000, report_chars=1000, records=3, record_chars=500)
    srv = InProcessServer(base_config(limits=limits, metrics_port=0))
    yield srv
    srv.close()


@pytest.mark.parametrize(
    ("request_kwargs", "needle"),
    [
        ({"report": "x" * 1001}, "report: 1001 exceeds the limit of 1000"),
        ({"records": [pb.Record(url="u", title="t", content="c")] * 4}, "records: 4 exceeds the limit of 3"),
        ({"records": [pb.Record(url="u", title="t", content="c" * 501)]},
         "records[0].content: 501 exceeds the limit of 500"),
        ({"records": [pb.Record(url="u", title="t" * 250_000, content="c")]},
         "request bytes: 250014 exceeds the limit of 200000"),
    ],
)
def test_limits_name_limit_and_value(small_limits_server, request_kwargs, needle) -> None:
    with pytest.raises(grpc.RpcError) as err:
        small_limits_server.stub().Trace(pb.TraceRequest(**request_kwargs))
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert needle in err.value.details()


def test_a_request_over_a_limit_is_not_retried_by_the_documented_policy(small_limits_server) -> None:
    channel = small_limits_server.channel(
        options=[("grpc.service_config", RETRY_SERVICE_CONFIG), ("grpc.enable_retries", 1)])
    count = small_limits_server.running.metrics.registry.get_sample_value
    labels = {"method": "Trace", "code": "RESOURCE_EXHAUSTED"}
    before = count("source_tracer_requests_total", labels) or 0
    try:
        with pytest.raises(grpc.RpcError) as err:
            tracer_pb2_grpc.SourceTracerStub(channel).Trace(pb.TraceRequest(report="x" * 1001), timeout=30)
    finally:
        channel.close()
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert ("grpc-retry-pushback-ms", "-1") in err.value.trailing_metadata()
    assert count("source_tracer_requests_total", labels) == before + 1, "one attempt, not five"


def test_message_over_transport_limit_is_resource_exhausted() -> None:
    srv = InProcessServer(base_config(max_message_bytes=64 * 1024))
    try:
        with pytest.raises(grpc.RpcError) as err:
            srv.stub().Trace(pb.TraceRequest(report="y" * 100_000))
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "65536" in err.value.details()
    finally:
        srv.close()


def test_a_response_over_the_message_limit_is_an_answer_not_a_broken_call() -> None:
    """The request fits but its answer would not: gRPC would refuse to send it after all the
    work (and end a stream with it). The call, or that stream item, gets RESOURCE_EXHAUSTED."""
    srv = InProcessServer(base_config(max_message_bytes=1024))
    try:
        big = pb.TraceRequest(id="big", report=EN_REPORT, records=records_pb(EN_RECORDS))
        assert big.ByteSize() < 1024
        with pytest.raises(grpc.RpcError) as err:
            srv.stub().Trace(big, metadata=(("x-request-id", "big-1"),), timeout=30)
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        details = err.value.details()
        assert "max_message_bytes (1024)" in details and "options.max_sources" in details
        trailers = err.value.trailing_metadata()
        assert ("grpc-retry-pushback-ms", "-1") in trailers and ("x-request-id", "big-1") in trailers
        items = [pb.TraceRequest(id="a", report="Plain text."), big,
                 pb.TraceRequest(id="c", report="More text.")]
        got = {r.id: r.status for r in srv.stub().TraceStream(iter(items), timeout=30)}
        assert set(got) == {"a", "big", "c"}
        assert got["big"].code == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]
        assert got["a"].code == got["c"].code == 0
    finally:
        srv.close()


class StreamCountingProxy:
    """A TCP proxy in front of a server that counts the HTTP/2 streams (calls and their
    retry attempts) the client opens: HEADERS frames on a new odd stream id."""

    PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.streams: set[int] = set()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            threading.Thread(target=self._pipe, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, False), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, parse: bool) -> None:
        buf = b""
        try:
            while data := src.recv(65536):
                dst.sendall(data)
                if parse:
                    buf = self._frames(buf + data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                try:
                    sock.close()
                except OSError:
                    pass

    def _frames(self, buf: bytes) -> bytes:
        if buf.startswith(self.PREFACE):
            buf = buf[len(self.PREFACE):]
        while len(buf) >= 9:
            length = int.from_bytes(buf[:3], "big")
            if len(buf) < 9 + length:
                break
            if buf[3] == 0x1:  # HEADERS
                self.streams.add(int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF)
            buf = buf[9 + length:]
        return buf

    def close(self) -> None:
        self.listener.close()


@pytest.mark.parametrize(
    ("report_chars", "attempts"),
    # Over the server's 64 KiB max: a message that fits the client's 256 KiB retry buffer is
    # sent maxAttempts times; one that does not commits the call after its first attempt.
    [(100_000, 5), (300_000, 1)],
)
def test_retry_policy_and_a_message_over_the_transport_limit(report_chars: int, attempts: int) -> None:
    srv = InProcessServer(base_config(max_message_bytes=64 * 1024))
    proxy = StreamCountingProxy(srv.port)
    channel = grpc.insecure_channel(f"127.0.0.1:{proxy.port}", options=[
        ("grpc.service_config", RETRY_SERVICE_CONFIG), ("grpc.enable_retries", 1)])
    try:
        with pytest.raises(grpc.RpcError) as err:
            tracer_pb2_grpc.SourceTracerStub(channel).Trace(pb.TraceRequest(report="y" * report_chars),
                                                            timeout=60)
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert len(proxy.streams) == attempts
    finally:
        channel.close()
        proxy.close()
        srv.close()


def test_stream_echoes_ids_and_survives_a_bad_item(stub) -> None:
    requests = [
        pb.TraceRequest(id="a", report=EN_REPORT, records=records_pb(EN_RECORDS)),
        pb.TraceRequest(id="bad", report="Hello.", options=pb.TraceOptions(language="xx")),
        pb.TraceRequest(id="b", report=ZH_REPORT, records=records_pb(ZH_RECORDS)),
        pb.TraceRequest(id="c", report="Plain text."),
    ]
    responses = {r.id: r for r in stub.TraceStream(iter(requests))}
    assert set(responses) == {"a", "bad", "b", "c"}
    assert responses["bad"].status.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert "options.language" in responses["bad"].status.message
    for rid in ("a", "b", "c"):
        assert responses[rid].status.code == 0
    assert responses["a"].citations and responses["b"].citations
    assert responses["c"].report == "Plain text."
    # every item, failed or not, says which release answered it
    assert {r.engine_version for r in responses.values()} == {tracer.__version__}


def test_stream_advertises_how_many_items_it_works_on_at_once(server, stub) -> None:
    call = stub.TraceStream(iter([pb.TraceRequest(id="a", report="Plain text.")]))
    metadata = dict(call.initial_metadata())
    assert [r.id for r in call] == ["a"]
    assert metadata["x-stream-concurrency"] == str(server.running.config.stream_concurrency)


def test_stream_many_items_bounded(stub) -> None:
    requests = [pb.TraceRequest(id=str(i), report=EN_REPORT, records=records_pb(EN_RECORDS))
                for i in range(20)]
    ids = [r.id for r in stub.TraceStream(iter(requests))]
    assert sorted(ids, key=int) == [str(i) for i in range(20)]


def test_health_serving(server) -> None:
    health = health_pb2_grpc.HealthStub(server.channel())
    for service in ("", "source_tracer.v1.SourceTracer"):
        resp = health.Check(health_pb2.HealthCheckRequest(service=service))
        assert resp.status == health_pb2.HealthCheckResponse.SERVING


@pytest.mark.parametrize("package", ["grpc.reflection.v1alpha", "grpc.reflection.v1"])
def test_reflection_lists_and_describes_services(server, package: str) -> None:
    # v1 and v1alpha are the same messages under two package names: one client, two method paths.
    from grpc_reflection.v1alpha import reflection_pb2

    info = server.channel().stream_stream(
        f"/{package}.ServerReflection/ServerReflectionInfo",
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    asks = [reflection_pb2.ServerReflectionRequest(list_services=""),
            reflection_pb2.ServerReflectionRequest(file_containing_symbol="source_tracer.v1.SourceTracer")]
    listed, described = list(info(iter(asks), timeout=10))
    names = {s.name for s in listed.list_services_response.service}
    assert {"source_tracer.v1.SourceTracer", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection"} <= names
    assert described.file_descriptor_response.file_descriptor_proto, "the service's .proto is served"


def test_metrics_page(free_port_server) -> None:
    srv, metrics_port = free_port_server
    stub = srv.stub()
    stub.Trace(pb.TraceRequest(report=EN_REPORT, records=records_pb(EN_RECORDS)))
    with pytest.raises(grpc.RpcError):
        stub.Trace(pb.TraceRequest(report="x", options=pb.TraceOptions(max_sources=-5)))
    page = scrape(metrics_port)
    assert metric_value(page, "source_tracer_requests_total", method="Trace", code="OK") >= 1
    assert metric_value(page, "source_tracer_requests_total", method="Trace", code="INVALID_ARGUMENT") >= 1
    assert metric_value(page, "source_tracer_citations_total") >= 1
    assert metric_value(page, "source_tracer_stage_seconds_count", stage="segment") >= 1
    assert metric_value(page, "source_tracer_queue_seconds_count", method="Trace") == 1  # the traced call
    assert "source_tracer_request_seconds_bucket" in page
    assert "source_tracer_unsupported_sentences_total" in page
    assert "source_tracer_llm_calls_total" in page
    assert "source_tracer_degraded_total" in page
    assert metric_value(page, "source_tracer_in_flight") == 0


@pytest.fixture(scope="module")
def free_port_server():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = InProcessServer(base_config(metrics_port=port))
    yield srv, port
    srv.close()


class _Sentinel:
    """Stands for the trace's working data in the held list (a list cannot be weakly referenced)."""


def test_a_trace_s_working_data_is_freed_once_the_call_is_over_and_the_call_is_counted() -> None:
    import weakref

    from tracer.pipeline import _HELD

    refs: list[weakref.ref[_Sentinel]] = []

    def trace_fn(*args: object, **kwargs: object) -> tracer.TraceResult:
        result = tracer.trace(*args, **kwargs)  # type: ignore[arg-type]
        held = _HELD.get()
        assert held, "the service holds the trace's working data until the response is sent"
        sentinel = _Sentinel()
        held.append(sentinel)
        refs.append(weakref.ref(sentinel))
        return result

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        metrics_port = s.getsockname()[1]
    srv = InProcessServer(base_config(metrics_port=metrics_port, worker_mode="thread"), trace_fn=trace_fn)
    try:
        stub = srv.stub()
        for _ in range(3):
            resp = stub.Trace(pb.TraceRequest(report=EN_REPORT, records=records_pb(EN_RECORDS)))
            assert resp.citations
        wait_until(lambda: all(r() is None for r in refs), timeout=10, what="the working data freed")
        wait_until(lambda: metric_value(scrape(metrics_port), "source_tracer_requests_total",
                                        method="Trace", code="OK") == 3, timeout=10, what="3 calls counted")
        assert len(refs) == 3
    finally:
        srv.close()
