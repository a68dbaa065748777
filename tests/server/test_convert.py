"""protobuf <-> core mapping: options, records, every response field, the JSON mapping."""

from __future__ import annotations

import dataclasses
import json

import pytest

import tracer
from server.config import Limits
from server.convert import check_limits, options_from_pb, record_to_dict, response_to_json, result_to_pb
from server.pb.source_tracer.v1 import tracer_pb2 as pb
from tracer.errors import InvalidInputError, LimitExceededError
from tracer.models import Citation, CitedSource, Reference, Stats, TraceResult, Unsupported
from tracer.options import ExistingPolicy, Mode, Placement


def test_default_options() -> None:
    opts = options_from_pb(pb.TraceOptions())
    assert (opts.mode, opts.style, opts.max_sources, opts.min_score) == (Mode.AUTO, "numeric", 3, None)
    assert (opts.existing, opts.placement, opts.reference_format) == (
        ExistingPolicy.KEEP, Placement.BEFORE_PUNCT, "markdown")


def test_set_options() -> None:
    opts = options_from_pb(pb.TraceOptions(
        mode=pb.MODE_LLM, style="superscript", max_sources=2, min_score=0.0, existing=pb.EXISTING_REPLACE,
        references_heading="Sources", language="zh", placement=pb.PLACEMENT_AFTER_PUNCT,
    ))
    assert opts.mode is Mode.LLM and opts.max_sources == 2
    assert opts.min_score == 0.0  # explicit zero is kept (optional field presence)
    assert opts.llm_min_score is None and opts.llm_keep_score is None  # unset: the server's
    gate = options_from_pb(pb.TraceOptions(llm_min_score=0.0, llm_keep_score=2.0))
    assert (gate.llm_min_score, gate.llm_keep_score) == (0.0, 2.0)
    assert not opts.strict_figures and options_from_pb(pb.TraceOptions(strict_figures=True)).strict_figures
    assert opts.existing is ExistingPolicy.REPLACE and opts.placement is Placement.AFTER_PUNCT
    assert (opts.style, opts.references_heading, opts.language) == ("superscript", "Sources", "zh")


@pytest.mark.parametrize("field", ["mode", "existing", "placement"])
def test_unknown_enum_values_name_the_field(field: str) -> None:
    with pytest.raises(InvalidInputError) as err:
        options_from_pb(pb.TraceOptions(**{field: 42}))
    assert err.value.field == f"options.{field}"


def test_record_to_dict_keeps_optional_fields_only_when_set() -> None:
    rec = pb.Record(url="u", title="t", content="c", site="s", metadata={"k": "v"})
    expected = {"url": "u", "title": "t", "content": "c", "site": "s", "metadata": {"k": "v"}}
    assert record_to_dict(rec) == expected
    assert record_to_dict(pb.Record()) == {"url": "", "title": "", "content": ""}


def test_check_limits_order_and_fields() -> None:
    limits = Limits(request_bytes=10_000, report_chars=10, records=2, record_chars=5)
    check_limits(pb.TraceRequest(report="x" * 10), limits)
    with pytest.raises(LimitExceededError) as err:
        check_limits(pb.TraceRequest(report="x" * 11, records=[pb.Record()] * 3), limits)
    assert (err.value.field, err.value.limit, err.value.value) == ("records", 2, 3)
    with pytest.raises(LimitExceededError) as err:
        check_limits(pb.TraceRequest(records=[pb.Record(content="ok"), pb.Record(content="toolong")]), limits)
    assert err.value.field == "records[1].content"


def _result() -> TraceResult:
    src = CitedSource(number=1, url="https://a.example", title="A", record_index=2, score=0.75, match="fuzzy",
                      evidence="quote", evidence_start=10, evidence_end=15)
    return TraceResult(
        report="Fact[1].\n\n## References\n\n[1] [A](https://a.example)\n",
        citations=(Citation("Fact.", 0, 5, (src,)),),
        references=(Reference(1, "https://a.example", "A", 2),),
        unsupported=(Unsupported("Claim 42.", 6, 15, "no record supports this sentence"),),
        removed_references="## Sources\n\n1. old\n",
        stats=Stats(sentences=2, needs_citation=2, cited_sentences=1, unsupported=1, records=3,
                    records_dropped=1, passages=4, citations=1, stage_ms={"render": 0.5}, total_ms=1.5),
        warnings=("record 0 dropped: missing content",),
        degraded=True,
        mode="llm",
    )


def test_result_to_pb_maps_every_field() -> None:
    resp = result_to_pb(_result(), "item-7")
    assert resp.id == "item-7" and resp.mode == "llm" and resp.degraded and resp.status.code == 0
    s = resp.citations[0].sources[0]
    assert (s.number, s.record_index, s.match, s.evidence_start, s.evidence_end) == (1, 2, "fuzzy", 10, 15)
    assert s.score == pytest.approx(0.75)
    assert resp.references[0].record_index == 2
    assert (resp.unsupported[0].start, resp.unsupported[0].end) == (6, 15)
    assert resp.removed_references.startswith("## Sources")
    assert resp.stats.records_dropped == 1 and dict(resp.stats.stage_ms) == {"render": 0.5}
    assert list(resp.warnings) == ["record 0 dropped: missing content"]
    assert resp.engine_version == tracer.__version__ != "0+unknown"


def test_every_stats_field_reaches_the_response() -> None:
    names = [f.name for f in dataclasses.fields(Stats)]
    assert set(names) == {f.name for f in pb.Stats.DESCRIPTOR.fields}
    counts = {n: i + 1 for i, n in enumerate(names) if n not in ("stage_ms", "total_ms")}
    stats = Stats(**counts, stage_ms={"match": 2.0}, total_ms=3.0)  # type: ignore[arg-type]
    resp = result_to_pb(dataclasses.replace(_result(), stats=stats))
    assert {n: getattr(resp.stats, n) for n in counts} == counts
    assert dict(resp.stats.stage_ms) == {"match": 2.0} and resp.stats.total_ms == 3.0


def test_json_mapping_uses_proto_names_defaults_and_order() -> None:
    doc = json.loads(response_to_json(result_to_pb(_result())))
    assert list(doc) == [f.name for f in pb.TraceResponse.DESCRIPTOR.fields]
    src = doc["citations"][0]["sources"][0]
    assert list(src) == [f.name for f in pb.CitedSource.DESCRIPTOR.fields]
    assert doc["citations"][0]["start"] == 0 and doc["id"] == ""  # defaults printed, ints stay ints
    assert doc["stats"]["llm_calls"] == 0 and doc["stats"]["stage_ms"] == {"render": 0.5}
    empty = json.loads(response_to_json(pb.TraceResponse()))
    assert empty["citations"] == [] and empty["report"] == "" and empty["degraded"] is False
