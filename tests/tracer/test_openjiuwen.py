"""openJiuwen shapes: classified_content in, {modified_report, datas} out."""

from __future__ import annotations

import dataclasses
import re

from tracer.openjiuwen import (
    citations_from_json,
    is_openjiuwen_input,
    records_from_classified_content,
    to_openjiuwen_output,
)
from tracer.options import TraceOptions
from tracer.pipeline import trace

ITEMS = [
    {"index": 1, "title": "Fundy facts", "url": "https://fundy.example/facts",
     "original_content": "Tides in the Bay of Fundy can exceed 16 metres, the largest range anywhere.",
     "publish_time": "2024-05-01"},
    {"index": 2, "title": "World tides", "url": "https://tides.example/world",
     "original_content": "The Bay of Fundy has the highest tides in the world, scientists say."},
]
REPORT = ("# Tides\n\nThe Bay of Fundy has the highest tides in the world[citation:2]. "
          "Ships wait for the tide in the harbour.\n")
JIUWEN_MARKER = re.compile(r"\[source_tracer_result\]\[([^\]]*)\]\(([^)]*)\)")


def test_items_become_records_with_index_as_id() -> None:
    recs = records_from_classified_content([*ITEMS, "not an object", {"index": True, "url": "u"}])
    assert recs[0] == {"url": "https://fundy.example/facts", "title": "Fundy facts",
                       "content": ITEMS[0]["original_content"], "id": "1", "published_at": "2024-05-01"}
    assert recs[1]["id"] == "2" and recs[2] == "not an object"
    assert "id" not in recs[3]  # a boolean is not an index
    assert is_openjiuwen_input({"report": "", "classified_content": []})
    # an empty records list gives way to classified_content (the library reads them so too)
    assert is_openjiuwen_input({"report": "", "records": [], "classified_content": []})
    assert not is_openjiuwen_input({"report": "", "records": [{"url": "u"}], "classified_content": []})
    assert not is_openjiuwen_input({"report": "", "records": [], "classified_content": None})  # as trace()


def test_citation_markers_resolve_through_index_and_render_in_their_style() -> None:
    records = records_from_classified_content(ITEMS)
    result = trace(REPORT, records, TraceOptions(style="openjiuwen"))
    body = result.report.split("\n## ")[0]
    assert JIUWEN_MARKER.findall(body) == [("World tides", "https://tides.example/world")]
    assert "[citation:2]" not in result.report
    # the body is the input body with the old marker swapped for the new one
    assert JIUWEN_MARKER.sub("", body).rstrip("\n") == REPORT.replace("[citation:2]", "").rstrip("\n")

    out = to_openjiuwen_output(result.report, result.citations, records)
    assert out["modified_report"] == result.report
    assert [(d["url"], d["title"], d["chunk"]) for d in out["datas"]] == [
        ("https://tides.example/world", "World tides",
         "The Bay of Fundy has the highest tides in the world.")]
    assert out["datas"][0]["content"] == ITEMS[1]["original_content"]
    assert set(out["datas"][0]) >= {"url", "title", "content", "chunk", "score"}


def test_link_style_and_datas_per_source() -> None:
    records = records_from_classified_content(ITEMS)
    report = "The Bay of Fundy tides can exceed 16 metres, the largest range anywhere.\n"
    result = trace(report, records, TraceOptions(style="link"))
    assert re.search(r"\[\[1\]\]\(https://fundy\.example/facts\)", result.report)
    out = to_openjiuwen_output(result.report, result.citations, records)
    assert out["datas"][0]["url"] == "https://fundy.example/facts"
    assert out["datas"][0]["publish_time"] == "2024-05-01"
    assert 0.0 < out["datas"][0]["score"] <= 1.0


def test_citations_from_json_rebuilds_models() -> None:
    records = records_from_classified_content(ITEMS)
    result = trace("Tides in the Bay of Fundy can exceed 16 metres.\n", records)
    as_json = [dataclasses.asdict(c) for c in result.citations]
    assert tuple(citations_from_json(as_json)) == result.citations
    assert citations_from_json([{"sentence": "s", "sources": [{"url": "u"}]}])[0].sources[0].number == 0
