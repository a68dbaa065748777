"""Protobuf messages <-> core models. No policy here beyond field mapping and limits."""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import json_format

from server.config import Limits
from server.pb.source_tracer.v1 import tracer_pb2 as pb
from tracer import __version__
from tracer.errors import InvalidInputError, LimitExceededError
from tracer.models import TraceResult
from tracer.options import ExistingPolicy, Mode, Placement, TraceOptions

_MODES = {pb.MODE_AUTO: Mode.AUTO, pb.MODE_DETERMINISTIC: Mode.DETERMINISTIC, pb.MODE_LLM: Mode.LLM}
_EXISTING = {pb.EXISTING_KEEP: ExistingPolicy.KEEP, pb.EXISTING_REPLACE: ExistingPolicy.REPLACE}
_PLACEMENT = {
    pb.PLACEMENT_BEFORE_PUNCT: Placement.BEFORE_PUNCT,
    pb.PLACEMENT_AFTER_PUNCT: Placement.AFTER_PUNCT,
}
_INT32_MAX = 2**31 - 1

# Initial metadata of every TraceStream: how many of its items the server works on at once
# (`source-tracer bulk --server` sizes its window from it).
STREAM_CONCURRENCY_KEY = "x-stream-concurrency"
MAX_MESSAGE_KEY = "x-max-message-bytes"   # the largest request a TraceStream item may be


def check_limits(request: pb.TraceRequest, limits: Limits) -> None:
    """Raise LimitExceededError naming the first limit the request exceeds (cheapest checks first)."""
    if len(request.records) > limits.records:
        raise LimitExceededError("records", limits.records, len(request.records))
    if len(request.report) > limits.report_chars:
        raise LimitExceededError("report", limits.report_chars, len(request.report))
    for i, rec in enumerate(request.records):
        if len(rec.content) > limits.record_chars:
            raise LimitExceededError(f"records[{i}].content", limits.record_chars, len(rec.content))
    size = request.ByteSize()
    if size > limits.request_bytes:
        raise LimitExceededError("request bytes", limits.request_bytes, size)


def options_from_pb(msg: pb.TraceOptions) -> TraceOptions:
    """Protobuf options -> validated TraceOptions; InvalidInputError names the bad field."""
    if msg.mode not in _MODES:
        raise InvalidInputError("options.mode", f"unknown value {msg.mode}")
    if msg.existing not in _EXISTING:
        raise InvalidInputError("options.existing", f"unknown value {msg.existing}")
    if msg.placement not in _PLACEMENT:
        raise InvalidInputError("options.placement", f"unknown value {msg.placement}")
    defaults = TraceOptions()
    return TraceOptions(
        mode=_MODES[msg.mode],
        style=msg.style or defaults.style,
        max_sources=msg.max_sources or defaults.max_sources,
        min_score=msg.min_score if msg.HasField("min_score") else None,
        existing=_EXISTING[msg.existing],
        references_heading=msg.references_heading,
        language=msg.language,
        placement=_PLACEMENT[msg.placement],
        reference_format=msg.reference_format or defaults.reference_format,
        llm_min_score=msg.llm_min_score if msg.HasField("llm_min_score") else None,
        llm_keep_score=msg.llm_keep_score if msg.HasField("llm_keep_score") else None,
        strict_figures=msg.strict_figures,
    ).validated()


def record_to_dict(rec: pb.Record) -> dict[str, Any]:
    """One protobuf record as the plain mapping the core's record stage accepts.

    url/title/content are always present (the core drops a record missing one, with a
    warning naming its index); optional fields only when set."""
    out: dict[str, Any] = {"url": rec.url, "title": rec.title, "content": rec.content}
    for name in ("source_type", "id", "published_at", "author", "site"):
        value = getattr(rec, name)
        if value:
            out[name] = value
    if rec.metadata:
        out["metadata"] = dict(rec.metadata)
    return out


def request_to_core(request: pb.TraceRequest) -> tuple[str, list[dict[str, Any]], TraceOptions]:
    """TraceRequest -> (report, record dicts in request order, options)."""
    options = options_from_pb(request.options)
    return request.report, [record_to_dict(r) for r in request.records], options


def _i32(value: int) -> int:
    return max(-_INT32_MAX - 1, min(_INT32_MAX, int(value)))


def result_to_pb(result: TraceResult, request_id: str = "") -> pb.TraceResponse:
    """TraceResult -> TraceResponse (every field; `id` echoes the request's id)."""
    resp = pb.TraceResponse(
        report=result.report,
        removed_references=result.removed_references,
        warnings=list(result.warnings),
        degraded=result.degraded,
        mode=str(result.mode),
        id=request_id,
        engine_version=__version__,
    )
    for c in result.citations:
        resp.citations.append(pb.Citation(
            sentence=c.sentence, start=_i32(c.start), end=_i32(c.end),
            sources=[
                pb.CitedSource(
                    number=_i32(s.number), url=s.url, title=s.title, record_index=_i32(s.record_index),
                    score=float(s.score), match=s.match, evidence=s.evidence,
                    evidence_start=_i32(s.evidence_start), evidence_end=_i32(s.evidence_end),
                    unstated=list(s.unstated), quote_figures=list(s.quote_figures),
                )
                for s in c.sources
            ],
        ))
    for r in result.references:
        resp.references.append(pb.Reference(
            number=_i32(r.number), url=r.url, title=r.title, record_index=_i32(r.record_index)
        ))
    for u in result.unsupported:
        item = resp.unsupported.add(
            sentence=u.sentence, start=_i32(u.start), end=_i32(u.end), reason=u.reason)
        if u.closest is not None:
            n = u.closest
            item.closest.CopyFrom(pb.NearMiss(
                record_index=_i32(n.record_index), url=n.url, title=n.title, score=float(n.score),
                evidence=n.evidence, evidence_start=_i32(n.evidence_start), evidence_end=_i32(n.evidence_end),
                unstated=list(n.unstated), quote_figures=list(n.quote_figures), conflict=n.conflict,
            ))
    st = result.stats
    resp.stats.CopyFrom(pb.Stats(
        sentences=_i32(st.sentences), needs_citation=_i32(st.needs_citation),
        cited_sentences=_i32(st.cited_sentences), unsupported=_i32(st.unsupported),
        records=_i32(st.records), records_dropped=_i32(st.records_dropped), passages=_i32(st.passages),
        citations=_i32(st.citations), existing_citations=_i32(st.existing_citations),
        llm_calls=_i32(st.llm_calls), llm_prompt_tokens=_i32(st.llm_prompt_tokens),
        llm_completion_tokens=_i32(st.llm_completion_tokens), llm_retries=_i32(st.llm_retries),
        llm_pairs_rejected=_i32(st.llm_pairs_rejected), llm_sentences_kept=_i32(st.llm_sentences_kept),
        stage_ms={k: float(v) for k, v in st.stage_ms.items()}, total_ms=float(st.total_ms),
    ))
    resp.status.CopyFrom(pb.Status(code=0, message=""))
    return resp


def _in_field_order(value: Any, descriptor: Any) -> Any:
    """MessageToDict output with keys in .proto field order (it puts defaults last)."""
    if not isinstance(value, dict) or descriptor is None:
        return value
    out: dict[str, Any] = {}
    for f in descriptor.fields:
        if f.name not in value:
            continue
        item = value[f.name]
        sub = f.message_type
        if sub is not None and sub.GetOptions().map_entry:
            sub = None
        if isinstance(item, list):
            out[f.name] = [_in_field_order(v, sub) for v in item]
        else:
            out[f.name] = _in_field_order(item, sub)
    return out


def response_to_json(resp: pb.TraceResponse) -> str:
    """Protobuf JSON mapping with the .proto field names, every default-valued field printed,
    keys in .proto order."""
    doc = json_format.MessageToDict(
        resp, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    return json.dumps(_in_field_order(doc, resp.DESCRIPTOR), ensure_ascii=False, indent=2)
