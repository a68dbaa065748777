"""Hostile inputs through the real server get clean status codes or safe output —
never UNKNOWN/INTERNAL, never a crash, never a link or raw HTML taken from a record."""

from __future__ import annotations

import re

import grpc
import pytest

from server.pb.source_tracer.v1 import tracer_pb2 as pb
from tests.server.conftest import EN_RECORDS, EN_REPORT, records_pb, strip_markers

RAW_HTML = re.compile(r"(?<!\\)<\s*/?\s*(script|img|iframe|a|svg)\b", re.IGNORECASE)  # unescaped tag
FACT = "In 2023, battery electric vehicles accounted for 82.4% of new car sales in Norway."
REPORT = f"# EVs\n\n{FACT}\n"


def _record(url: str, title: str) -> pb.Record:
    return pb.Record(url=url, title=title, content=f"Official figures: {FACT} Up from 79.3%.")


def _raw_call(server, data: bytes) -> grpc.RpcError:
    call = server.channel().unary_unary(
        "/source_tracer.v1.SourceTracer/Trace",
        request_serializer=lambda b: b, response_deserializer=lambda b: b,
    )
    with pytest.raises(grpc.RpcError) as err:
        call(data, timeout=30)
    return err.value


def test_oversized_report_is_resource_exhausted(stub) -> None:
    with pytest.raises(grpc.RpcError) as err:
        stub.Trace(pb.TraceRequest(report="a. " * 400_000))
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "report: 1200000 exceeds the limit of 1000000" in err.value.details()


def test_200k_records_is_resource_exhausted(stub) -> None:
    rec = pb.Record(url="https://e.org", title="t", content="c")
    request = pb.TraceRequest(report=REPORT)
    request.records.extend([rec] * 200_000)
    with pytest.raises(grpc.RpcError) as err:
        stub.Trace(request)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "records: 200000 exceeds the limit of 5000" in err.value.details()


def test_invalid_utf8_bytes_are_invalid_argument(server) -> None:
    err = _raw_call(server, b"\x0a\x02\xff\xfe")  # field 1 (report) with bad UTF-8
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "not a valid TraceRequest" in err.details()
    err = _raw_call(server, b"\x0a\x05abc")  # truncated
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_malformed_stream_item_gets_its_own_status(server) -> None:
    call = server.channel().stream_stream(
        "/source_tracer.v1.SourceTracer/TraceStream",
        request_serializer=lambda b: b, response_deserializer=pb.TraceResponse.FromString,
    )
    good = pb.TraceRequest(id="ok", report="Fine.").SerializeToString()
    out = list(call(iter([b"\x0a\x02\xff\xfe", good]), timeout=30))
    codes = sorted(r.status.code for r in out)
    assert codes == [0, grpc.StatusCode.INVALID_ARGUMENT.value[0]]


def test_deeply_nested_lists(stub) -> None:
    lines = [("  " * i) + f"- level {i} says {FACT}" for i in range(300)]
    report = "# Deep\n\n" + "\n".join(lines) + "\n"
    resp = stub.Trace(pb.TraceRequest(report=report, records=[_record("https://ok.example/a", "ok")]))
    assert strip_markers(resp.report).startswith(strip_markers(report).rstrip("\n"))


@pytest.mark.parametrize("url", ["javascript:alert(1)", "data:text/html,<script>alert(1)</script>",
                                 "JaVaScRiPt:alert(1)", " javascript:alert(1)", "vbscript:msgbox"])
def test_dangerous_urls_never_become_links(stub, url: str) -> None:
    resp = stub.Trace(pb.TraceRequest(report=REPORT, records=[_record(url, "Evil source")]))
    body_end = len(strip_markers(REPORT).rstrip("\n"))
    tail = strip_markers(resp.report)[body_end:]
    assert not re.search(r"\]\(\s*(javascript|data|vbscript):", tail, re.IGNORECASE)
    assert not RAW_HTML.search(resp.report)
    for ref in resp.references:
        if ref.url == url:
            assert f"]({url}" not in resp.report


@pytest.mark.parametrize(
    "title",
    [
        "Evil](https://attacker.example) [x",
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "Bad\x1b[31mred\x07 \x00title\u202e",
        "[1] fake reference\n## Injected heading",
    ],
)
def test_hostile_titles_are_escaped(stub, title: str) -> None:
    resp = stub.Trace(pb.TraceRequest(report=REPORT, records=[_record("https://ok.example/p", title)]))
    assert resp.citations, "the fact is verbatim in the record"
    section = resp.report[len(REPORT.rstrip("\n")):]
    assert "](https://attacker.example)" not in section
    assert not RAW_HTML.search(section)
    assert not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202e]", section)
    assert "\n## Injected" not in section
    numbers = re.findall(r"^\[(\d+)\]", section, re.MULTILINE)
    assert numbers == ["1"]


def test_control_characters_in_report_are_kept_verbatim(stub) -> None:
    report = f"# T\x00\n\n{FACT}\x07 More\x1b text.\r\n"
    resp = stub.Trace(pb.TraceRequest(report=report, records=records_pb(EN_RECORDS)))
    assert strip_markers(resp.report).startswith(strip_markers(report).rstrip("\r\n"))


def test_empty_and_whitespace_requests(stub) -> None:
    for report in ("", " ", "\n\n\n"):
        resp = stub.Trace(pb.TraceRequest(report=report, records=records_pb(EN_RECORDS)))
        assert resp.report == report


def test_many_small_records_within_limit(stub) -> None:
    records = [pb.Record(url=f"https://e.org/{i}", title=f"t{i}", content=f"Record {i} about cars.")
               for i in range(5000)]
    resp = stub.Trace(pb.TraceRequest(report=EN_REPORT, records=records))
    assert resp.stats.records == 5000


@pytest.mark.parametrize("content", ["c", "!!!", "🙂🙂", "...", "\u200b"])
def test_records_without_indexable_terms(stub, content: str) -> None:
    records = [pb.Record(url="https://e.org/x", title="x", content=content)]
    resp = stub.Trace(pb.TraceRequest(report=REPORT, records=records))
    assert resp.report == REPORT and not resp.citations
    records.append(_record("https://ok.example/a", "ok"))
    resp = stub.Trace(pb.TraceRequest(report=REPORT, records=records))
    assert resp.citations
