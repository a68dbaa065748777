"""openJiuwen compatibility: pure conversion of their input and output shapes (docs/bulk.md).

Input: a line ``{"report", "classified_content": [{"index", "title", "url", "original_content"}]}``
whose report may carry inline ``[citation:N]`` markers, N being an item's ``index``. Each item
becomes one record whose ``id`` is ``str(index)``, which is what the existing-citation stage
resolves ``[citation:N]`` through.

Output: ``{"modified_report", "datas"}`` where the report carries ``[source_tracer_result][title](url)``
markers (style ``openjiuwen``) or ``[[n]](url)`` (style ``link``), and ``datas`` has one entry per
(sentence, source) pair: ``url``, ``title``, ``content``, ``chunk``, ``score`` and a few extras.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tracer.existing import unmarked
from tracer.models import Citation, CitedSource

__all__ = [
    "LINK_STYLE",
    "MARKER_STYLE",
    "citations_from_json",
    "is_openjiuwen_input",
    "records_from_classified_content",
    "to_openjiuwen_output",
]

MARKER_STYLE = "openjiuwen"  # [source_tracer_result][title](url)
LINK_STYLE = "link"          # [[n]](url)

# openJiuwen item key -> our record key (first present wins for content).
_CONTENT_KEYS = ("original_content", "content")
_PUBLISHED_KEYS = ("publish_time", "published_at")


def is_openjiuwen_input(obj: Mapping[str, Any]) -> bool:
    """True for a line in openJiuwen's shape: ``classified_content`` (not null) and no ``records``
    (or an empty one; both given is an error, `tracer.records`)."""
    return obj.get("classified_content") is not None and not obj.get("records")


def records_from_classified_content(items: Sequence[object]) -> list[object]:
    """One record per item, in order, so ``record_index`` maps back to the item's position.

    ``index`` becomes the record ``id`` (``[citation:N]`` resolves through it) and
    ``original_content`` its content. Items that are not objects pass through unchanged, so
    the records stage drops them with a warning naming their position.
    """
    out: list[object] = []
    for item in items:
        if not isinstance(item, Mapping):
            out.append(item)
            continue
        rec: dict[str, object] = {"url": item.get("url"), "title": item.get("title", "")}
        rec["content"] = next((item[k] for k in _CONTENT_KEYS if k in item), None)
        index = item.get("index")
        if isinstance(index, int) and not isinstance(index, bool):
            rec["id"] = str(index)
        elif isinstance(index, str) and index.strip():
            rec["id"] = index.strip()
        published = next((item[k] for k in _PUBLISHED_KEYS if isinstance(item.get(k), str)), None)
        if published:
            rec["published_at"] = published
        for key in ("source_type", "author", "site"):
            if isinstance(item.get(key), str):
                rec[key] = item[key]
        out.append(rec)
    return out


def _record_field(records: Sequence[object], index: int, key: str) -> str:
    if 0 <= index < len(records):
        rec = records[index]
        if isinstance(rec, Mapping):
            value = rec.get(key)
            if isinstance(value, str):
                return value
    return ""


def to_openjiuwen_output(
    report: str, citations: Sequence[Citation], records: Sequence[object]
) -> dict[str, Any]:
    """openJiuwen's result shape for a traced report.

    `report` is the traced report, already rendered in the ``openjiuwen`` or ``link`` style;
    `records` are the request's records (``CitedSource.record_index`` indexes them), whose
    content becomes each data's ``content``. ``chunk`` is the cited sentence without the
    markers it carried in the input, ``score`` the verified support score (for a kept
    existing citation, the verifier's score of its record, which may be below ``min_score``);
    datas come in report order, sources in citation order.
    """
    datas: list[dict[str, Any]] = []
    for citation in citations:
        chunk = unmarked(citation.sentence).strip()
        for source in citation.sources:
            datas.append({
                "url": source.url,
                "title": source.title,
                "content": _record_field(records, source.record_index, "content"),
                "chunk": chunk,
                "score": source.score,
                "publish_time": _record_field(records, source.record_index, "published_at"),
                "number": source.number,
                "evidence": source.evidence,
                "match": source.match,
            })
    return {"modified_report": report, "datas": datas}


def _int(obj: Mapping[str, Any], key: str) -> int:
    value = obj.get(key, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _str(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key, "")
    return value if isinstance(value, str) else ""


def citations_from_json(citations: Sequence[Mapping[str, Any]]) -> list[Citation]:
    """Citations from the JSON mapping of ``TraceResponse.citations`` (absent fields = defaults)."""
    out: list[Citation] = []
    for c in citations:
        sources = tuple(
            CitedSource(
                number=_int(s, "number"),
                url=_str(s, "url"),
                title=_str(s, "title"),
                record_index=_int(s, "record_index"),
                score=float(s.get("score", 0.0)),
                match=_str(s, "match"),
                evidence=_str(s, "evidence"),
                evidence_start=_int(s, "evidence_start"),
                evidence_end=_int(s, "evidence_end"),
            )
            for s in c.get("sources", ())
        )
        out.append(Citation(_str(c, "sentence"), _int(c, "start"), _int(c, "end"), sources))
    return out
