"""Tests of the records stage: input shapes, validation, canonical identity, passages, parsing."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tracer.errors import InvalidInputError
from tracer.models import Passage, Record
from tracer.records import (
    canonical_url,
    is_link,
    normalize_records,
    parse_records_text,
    split_passages,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def rec(url: str = "https://example.com/a", title: str = "A", content: str = "Some text.") -> dict[str, str]:
    return {"url": url, "title": title, "content": content}


# ------------------------------------------------------------------------------ input shapes


def test_flat_list_keeps_order_and_indices() -> None:
    recs, warnings = normalize_records([rec("https://a.com/1"), rec("https://b.com/2")])
    assert [r.index for r in recs] == [0, 1]
    assert [r.url for r in recs] == ["https://a.com/1", "https://b.com/2"]
    assert [r.source_key for r in recs] == ["https://a.com/1", "https://b.com/2"]
    assert warnings == []


def test_grouped_mapping_flattens_in_order_and_fills_source_type() -> None:
    raw = {
        "web": [rec("https://a.com/1"), rec("https://a.com/2")],
        "local": [rec("/srv/docs/plan.md", "Plan", "Internal plan.")],
    }
    recs, warnings = normalize_records(raw)
    assert [(r.index, r.source_type) for r in recs] == [(0, "web"), (1, "web"), (2, "local")]
    assert recs[2].source_key == "doc:/srv/docs/plan.md"
    assert warnings == []


def test_grouped_record_keeps_its_own_source_type() -> None:
    item = rec() | {"source_type": "news"}
    recs, _ = normalize_records({"web": [item]})
    assert recs[0].source_type == "news"


def test_grouped_mapping_ignores_non_list_groups_with_warning() -> None:
    recs, warnings = normalize_records({"query": "solar power", "web": [rec()]})
    assert len(recs) == 1
    assert warnings == ["records: group 'query' ignored: not a list of records"]
    assert not any(w.startswith("record ") for w in warnings)  # not counted as a dropped record


def test_openjiuwen_classified_content() -> None:
    raw = {
        "query": "q",
        "classified_content": [
            {"index": 7, "title": "T7", "url": "https://a.com/7", "original_content": "Seven."},
            {"index": 9, "title": "T9", "url": "https://a.com/9", "original_content": "Nine."},
        ],
    }
    recs, warnings = normalize_records(raw)
    assert [(r.index, r.id, r.content) for r in recs] == [(0, "7", "Seven."), (1, "9", "Nine.")]
    assert warnings == []


def test_list_of_openjiuwen_lines_is_flattened() -> None:
    item = {"index": 1, "title": "T", "url": "https://a.com", "original_content": "X."}
    line = {"classified_content": [item]}
    recs, _ = normalize_records([line, rec("https://b.com")])
    assert [(r.index, r.url) for r in recs] == [(0, "https://a.com"), (1, "https://b.com")]


def test_object_with_records_key() -> None:
    recs, _ = normalize_records({"report": "ignored", "records": [rec()]})
    assert len(recs) == 1


def test_single_record_mapping() -> None:
    recs, _ = normalize_records(rec())
    assert len(recs) == 1 and recs[0].index == 0
    # a grouped mapping with string fields beside its groups is still grouped
    recs, _ = normalize_records({"query": "tesla", "source": "bing", "web": [rec()]})
    assert len(recs) == 1
    # a list field ("authors") does not make it a {source_type: [records]} mapping
    recs, warnings = normalize_records({**rec(), "authors": ["Statistics Norway", "OFV"]})
    assert warnings == [] and [r.author for r in recs] == ["Statistics Norway, OFV"]


def test_record_objects_are_revalidated() -> None:
    good = Record(index=5, url="https://A.com/x/?utm_medium=m", title="T", content="Text.")
    bad = Record(index=6, url="https://a.com/y", title="T", content="   ")
    recs, warnings = normalize_records([good, bad])
    assert [(r.index, r.source_key) for r in recs] == [(0, "https://a.com/x")]
    assert warnings == ["record 1 dropped: empty content"]


def test_generator_input() -> None:
    recs, _ = normalize_records(rec(f"https://a.com/{i}") for i in range(3))
    assert len(recs) == 3


@pytest.mark.parametrize("raw", ["not records", 42, {"foo": "bar"}, None])
def test_wrong_overall_shape_raises(raw: object) -> None:
    with pytest.raises(InvalidInputError) as exc:
        normalize_records(raw)
    assert exc.value.field == "records"


def test_empty_inputs() -> None:
    assert normalize_records([]) == ([], [])
    assert normalize_records({}) == ([], [])


# ------------------------------------------------------------------------------ aliases and fields


@pytest.mark.parametrize("content_key", ["content", "original_content", "text", "snippet", "body",
                                         "raw_content", "page_content", "markdown", "description"])
@pytest.mark.parametrize("url_key", ["url", "link", "href", "source"])
@pytest.mark.parametrize("title_key", ["title", "name"])
def test_key_aliases(content_key: str, url_key: str, title_key: str) -> None:
    recs, warnings = normalize_records([{url_key: "https://a.com/p", title_key: "P", content_key: "Body."}])
    assert (recs[0].url, recs[0].title, recs[0].content) == ("https://a.com/p", "P", "Body.")
    assert warnings == []


def test_first_non_empty_alias_wins() -> None:
    recs, _ = normalize_records([{"url": "https://a.com", "title": "T", "content": "", "snippet": "Snip."}])
    assert recs[0].content == "Snip."


def test_search_tools_results_as_they_return_them() -> None:
    """Tavily's page (raw_content) before its snippet, its published_date; Exa's publishedDate;
    Bing's name/snippet/datePublished; a LangChain Document (with its vector store's id too) and
    a Firecrawl page, whose url and title sit in their metadata; a Haystack Document's `meta`."""
    page = "The bridge opened in 1932. It carries eight lanes."
    recs, warnings = normalize_records([
        {"url": "https://t.example/a", "title": "Tavily", "content": "It carries eight lanes.",
         "raw_content": page, "score": 0.9, "published_date": "2024-03-01"},
        {"url": "https://e.example/b", "title": "Exa", "text": page, "publishedDate": "2023-01-02"},
        {"name": "Bing", "url": "https://b.example/c", "snippet": page, "datePublished": "2022-05-06"},
        {"page_content": page, "metadata": {"source": "/kb/bridge.pdf", "page": 3}, "type": "Document"},
        {"markdown": page, "metadata": {"title": "Firecrawl", "sourceURL": "https://f.example/d"}},
        {"id": "kb-7", "page_content": page, "metadata": {"source": "https://kb.example/7"}},
        {"url": "", "content": page, "metadata": {"url": "https://m.example/e", "title": "  "}},
        {"id": "h1", "content": page, "meta": {"url": "https://h.example/f", "title": "Haystack"}},
    ])
    assert warnings == []
    assert [r.content for r in recs] == [page] * 8
    assert [r.url for r in recs] == ["https://t.example/a", "https://e.example/b", "https://b.example/c",
                                     "/kb/bridge.pdf", "https://f.example/d", "https://kb.example/7",
                                     "https://m.example/e", "https://h.example/f"]
    assert [r.title for r in recs][:5] == ["Tavily", "Exa", "Bing", "bridge.pdf", "Firecrawl"]
    assert recs[7].title == "Haystack" and recs[7].metadata["url"] == "https://h.example/f"
    assert [r.published_at for r in recs][:3] == ["2024-03-01", "2023-01-02", "2022-05-06"]
    assert recs[5].id == "kb-7" and recs[3].metadata["source"] == "/kb/bridge.pdf"


def test_rag_frameworks_retrieval_results_as_they_return_them() -> None:
    """A LlamaIndex NodeWithScore (its node: `text`, `id_`, a file node's `metadata.file_path` and
    `file_name`) and Dify's retriever resources (`document_name`, `document_id`: chunks of one
    document share its source)."""
    page = "The bridge opened in 1932."
    node = {"node": {"id_": "n1", "embedding": None, "text": page, "class_name": "TextNode",
                     "metadata": {"file_path": "/kb/bridge.pdf", "file_name": "bridge.pdf",
                                  "page_label": "3"},
                     "relationships": {"1": {"node_id": "x"}}}, "score": 0.82, "class_name": "NodeWithScore"}
    dify = [{"position": k, "dataset_name": "KB", "document_id": "doc-9", "document_name": "Bridge history",
             "segment_id": f"s{k}", "score": 0.7, "content": text}
            for k, text in ((1, page), (2, "It carries eight lanes."))]
    recs, warnings = normalize_records([node, *dify])
    assert warnings == []
    assert [(r.id, r.url, r.title, r.content) for r in recs] == [
        ("n1", "/kb/bridge.pdf", "bridge.pdf", page), ("doc-9", "", "Bridge history", page),
        ("doc-9", "", "Bridge history", "It carries eight lanes.")]
    assert recs[0].source_key == "doc:/kb/bridge.pdf"
    assert recs[1].source_key == recs[2].source_key == "id:doc-9"
    # Dify's knowledge retrieval node: the document's id in the metadata (used only with no url nor id)
    node_out = {"result": [
        {"metadata": {"_source": "knowledge", "document_id": "doc-1", "document_name": "b.pdf",
                      "segment_id": f"s{k}", "score": 0.8}, "title": "b.pdf", "content": text}
        for k, text in ((1, page), (2, "It carries eight lanes."))]}
    recs, warnings = normalize_records(node_out)
    assert [(r.id, r.title, r.source_key) for r in recs] == [("doc-1", "b.pdf", "id:doc-1")] * 2
    assert not warnings
    # Dify's chat answer and its "message_end" event carry the resources in their metadata
    for event in ({"event": "message_end", "id": "m1", "conversation_id": "c1",
                   "metadata": {"usage": {"total_tokens": 9}, "retriever_resources": dify}},
                  {"event": "message", "answer": "The bridge opened in 1932.",
                   "metadata": {"retriever_resources": dify}},
                  {"retriever_resources": dify}):
        recs, warnings = normalize_records(event)
        assert [(r.id, r.content) for r in recs] == [("doc-9", page), ("doc-9", "It carries eight lanes.")]
        assert warnings == []
    recs, _ = normalize_records([{"id": blank, "content": page, "metadata": {"document_id": f"doc-{k}"}}
                                 for k, blank in enumerate((None, "", "  "))])
    assert [(r.id, r.source_key) for r in recs] == [(f"doc-{k}", f"id:doc-{k}") for k in range(3)]
    recs, _ = normalize_records([{"url": "https://a.example", "content": page,
                                  "metadata": {"document_id": "d"}}])
    assert recs[0].id == "" and recs[0].source_key == "https://a.example"
    recs, _ = normalize_records([{"url": "https://a.example/p", "node": {"text": page}, "title": "P"}])
    assert recs == []                                            # a url of its own: no NodeWithScore
    recs, _ = normalize_records(node)                           # one NodeWithScore alone
    assert [(r.id, r.url) for r in recs] == [("n1", "/kb/bridge.pdf")]
    # a record that gives its own text keeps it, whatever its "node" holds
    recs, _ = normalize_records([{"url": "https://a.example", "content": page, "node": {"text": "other"}}])
    assert recs[0].content == page


def test_a_search_apis_response_gives_its_results_and_a_record_may_hold_lists_of_objects() -> None:
    fact = "The Eiffel Tower is 330 metres tall."
    tavily = {"query": "eiffel", "answer": "330 m", "results": [
        {"url": "https://a.example/t", "title": "Tower", "content": fact}],
        "images": [{"url": "https://img.example/e.jpg", "description": fact}]}
    recs, warnings = normalize_records(tavily)
    assert [r.url for r in recs] == ["https://a.example/t"] and warnings == []
    one = {"url": "https://a.example/t", "title": "Tower", "text": fact, "authors": [{"name": "J"}],
           "subpages": [{"url": "https://a.example/t/2", "text": "More."}]}
    recs, warnings = normalize_records(one)
    assert [(r.url, r.content) for r in recs] == [("https://a.example/t", fact)]
    # ... and so is an Exa result with highlights instead of a text, beside its subpages
    exa = {"url": "https://a.example/t", "title": "Tower", "highlights": [fact],
           "subpages": [{"url": "https://a.example/t/2", "text": "More."}]}
    recs, warnings = normalize_records(exa)
    assert [(r.url, r.content) for r in recs] == [("https://a.example/t", fact)] and warnings == []
    # a {source_type: [records]} mapping stays one, even with a "results" group
    recs, _ = normalize_records({"news": [one], "results": [{"url": "https://b.example/r", "content": fact}]})
    assert [(r.source_type, r.url) for r in recs] == [("news", "https://a.example/t"),
                                                      ("results", "https://b.example/r")]
    recs, _ = normalize_records({"web": [one], "local": [{"id": "d1", "content": fact}]})
    assert [(r.source_type, r.url or r.id) for r in recs] == [("web", "https://a.example/t"), ("local", "d1")]


def test_a_search_response_whose_results_sit_in_an_object_gives_them() -> None:
    """Bing's "webPages": {"value": [...]}, Brave's "web": {"results": [...]}, Firecrawl's
    "data": {"web": [...], "news": [...]}: each group's records under the group's name, the
    other members ignored with a warning as before."""
    fact = "The Eiffel Tower is 330 metres tall."
    bing = {"_type": "SearchResponse", "queryContext": {"originalQuery": "eiffel"},
            "webPages": {"webSearchUrl": "https://bing.example/s", "totalEstimatedMatches": 1, "value": [
                {"id": "https://api.bing.example/#WebPages.0", "name": "Tower", "url": "https://a.example/t",
                 "snippet": fact}]},
            "rankingResponse": {"mainline": {"items": [{"answerType": "WebPages", "resultIndex": 0}]}}}
    recs, warnings = normalize_records(bing)
    assert [(r.source_type, r.url, r.title, r.content) for r in recs] == [
        ("webPages", "https://a.example/t", "Tower", fact)]
    assert warnings == [f"records: group {k!r} ignored: not a list of records"
                        for k in ("_type", "queryContext", "rankingResponse")]
    brave = {"type": "search", "mixed": {"main": [{"type": "web", "index": 0}]},
             "web": {"type": "search", "results": [{"title": "Tower", "url": "https://a.example/t",
                                                    "description": fact, "extra_snippets": ["x"]}]},
             "news": {"results": [{"title": "N", "url": "https://n.example/1", "description": fact}]}}
    recs, _ = normalize_records(brave)
    assert [(r.source_type, r.url) for r in recs] == [("web", "https://a.example/t"), ("news", "https://n.example/1")]
    firecrawl = {"success": True, "data": {
        "web": [{"url": "https://a.example/t", "title": "T", "description": fact}],
        "news": [{"url": "https://n.example/1", "snippet": fact}]}}
    recs, _ = normalize_records(firecrawl)
    assert [(r.source_type, r.url) for r in recs] == [("web", "https://a.example/t"), ("news", "https://n.example/1")]
    # images, videos and suggested searches with no text: one warning per group, not per item
    bing["images"] = {"value": [{"name": "img", "contentUrl": "https://i.example/1.jpg"}] * 10}
    bing["relatedSearches"] = {"value": [{"text": "eiffel height", "webSearchUrl": "https://b.example"}] * 8}
    recs, warnings = normalize_records(bing)
    assert len(recs) == 1 and [w for w in warnings if "images" in w or "relatedSearches" in w] == [
        f"records: group {k!r} ignored: images, videos or suggested searches with no text to cite"
        for k in ("images", "relatedSearches")]
    youcom = {"results": {"web": [{"url": "https://a.example/t", "title": "T", "description": fact,
                                   "snippets": ["x"]}],
                          "news": [{"url": "https://n.example/1", "title": "N", "description": fact}]},
              "metadata": {"request_uuid": "u", "query": "eiffel"}}
    recs, _ = normalize_records(youcom)
    assert [(r.source_type, r.url) for r in recs] == [("web", "https://a.example/t"), ("news", "https://n.example/1")]
    recs, warnings = normalize_records({"web": [{"url": "https://a.example/t", "content": fact}],
                                        "videos": []})
    assert len(recs) == 1 and warnings == []                    # an empty group: nothing to say
    # Bing's news search: its "sort" list beside "value" holds no records
    news = {"_type": "News", "sort": [{"name": "Best match", "id": "relevance", "url": "https://api.example/x"}],
            "value": [{"name": "N", "url": "https://n.example/1", "description": fact}]}
    recs, warnings = normalize_records(news)
    assert [r.url for r in recs] == ["https://n.example/1"] and warnings == []
    # passages given instead of a page's text: Exa's highlights (with no "text"), You.com's snippets
    exa = {"requestId": "r", "results": [
        {"url": "https://a.example/t", "title": "T", "highlights": [" One fact. ", "", "Two facts."],
         "highlightScores": [0.4, 0.1, 0.3]},
        {"url": "https://b.example/u", "title": "U", "text": "The page.", "highlights": ["Other."]},
        {"url": "https://c.example/v", "title": "V", "text": "", "snippets": ["Third.", 7]},
        {"url": "https://d.example/w", "title": "W", "highlights": ["", "  "]}]}
    recs, warnings = normalize_records(exa)
    assert [(r.url, r.content) for r in recs] == [("https://a.example/t", "One fact.\n\nTwo facts."),
                                                 ("https://b.example/u", "The page."),
                                                 ("https://c.example/v", "Third.")]
    assert warnings == ["record 3 dropped: missing content"]
    recs, _ = normalize_records(exa["results"][0])              # one result alone is one record
    assert [r.content for r in recs] == ["One fact.\n\nTwo facts."]
    # llama-index-core 0.12's Document.model_dump(): its text in "text_resource", alone or in a NodeWithScore
    doc = {"id_": "d1", "metadata": {"file_path": "/kb/plan.md", "file_name": "plan.md"},
           "text_resource": {"embeddings": None, "text": " The plan. ", "path": None, "url": None}}
    recs, warnings = normalize_records([doc, {"node": doc, "score": 0.8}, {**doc, "text": "Own text."}])
    assert [(r.url, r.title, r.content) for r in recs] == [("/kb/plan.md", "plan.md", " The plan. "),
                                                          ("/kb/plan.md", "plan.md", "Own text.")]
    assert warnings == ["record 1 dropped: exact duplicate of record 0"]
    # a LangChain Document as dumpd / dumps write it, in a list or alone
    lc = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "document", "Document"],
          "kwargs": {"page_content": "The plan.", "metadata": {"source": "https://a.example/p", "title": "P"},
                     "type": "Document"}}
    for shape in ([lc], lc, {"web": [lc]}):
        recs, warnings = normalize_records(shape)
        assert [(r.url, r.title, r.content) for r in recs] == [("https://a.example/p", "P", "The plan.")]
        assert warnings == []
    # ... but a record with a text or url of its own is that record, whatever else it holds
    recs, _ = normalize_records([{"lc": 1, "type": "constructor", "id": ["x"], "url": "https://r.example",
                                  "content": "Real.", "kwargs": {}}])
    assert [(r.url, r.content) for r in recs] == [("https://r.example", "Real.")]

    recs, warnings = normalize_records(bing["webPages"])       # the group alone
    assert [r.url for r in recs] == ["https://a.example/t"] and warnings == []
    # an object of scalars and objects that hold no records is still refused
    with pytest.raises(InvalidInputError):
        normalize_records({"type": "search", "mixed": {"main": [{"type": "web"}]}})


def test_new_shapes_take_over_no_input_read_before() -> None:
    """Dify's resources, passage lists: read only where nothing else in the object gives records."""
    d = {"document_id": "d", "document_name": "D", "content": "D text."}
    w = {"url": "https://w.example", "content": "W text."}
    recs, _ = normalize_records({"retriever_resources": [d], "web": [w]})
    assert [(r.source_type, r.source_key) for r in recs] == [("retriever_resources", "id:d"),
                                                             ("web", "https://w.example")]
    recs, _ = normalize_records({"web": [w], "metadata": {"retriever_resources": [d]}})
    assert [r.source_key for r in recs] == ["https://w.example"]
    for key in ("results", "value"):
        recs, _ = normalize_records({key: [w], "event": "message_end",
                                     "metadata": {"retriever_resources": []}})
        assert [r.source_key for r in recs] == ["https://w.example"], key
    # a search response's own id or url beside passages is no record: its results are
    for own in ({"id": "req-1"}, {"url": "https://api.example/q"}):
        recs, _ = normalize_records({**own, "highlights": ["H"], "results": [w]})
        assert [r.source_key for r in recs] == ["https://w.example"], own
    recs, _ = normalize_records({"retriever_resources": [d]})   # a group of that name, as before
    assert [(r.source_type, r.source_key) for r in recs] == [("retriever_resources", "id:d")]


def test_inline_html_in_a_snippet_reads_as_spaces_with_a_warning() -> None:
    raw = "The <strong>Eiffel Tower</strong> is 330 metres<br/> tall <a href='x'>per</a> <abbr>IGN</abbr>."
    recs, warnings = normalize_records([{"url": "https://b.example", "description": raw}])
    assert recs[0].content == ("The " + " " * 8 + "Eiffel Tower" + " " * 9 + " is 330 metres" + " " * 5
                               + " tall " + " " * 12 + "per" + " " * 4 + " <abbr>IGN</abbr>.")
    assert len(recs[0].content) == len(raw)
    assert warnings == ["records[0]: description: 5 inline HTML tags (<strong>) read as spaces"]
    # a comparison is no tag
    recs, warnings = normalize_records([{"url": "https://b.example", "content": "If a<b and c>d then a<d."}])
    assert recs[0].content == "If a<b and c>d then a<d." and warnings == []


def test_optional_fields_and_metadata() -> None:
    raw = rec() | {
        "id": 12,
        "published_at": "2024-05-01",
        "authors": ["Ada Lovelace", "Alan Turing"],
        "site": "Example",
        "metadata": {"lang": "en", "rank": 3, "flag": True, "nested": {"x": 1}, "none": None},
    }
    recs, warnings = normalize_records([raw])
    r = recs[0]
    assert (r.id, r.published_at, r.author, r.site) == (
        "12", "2024-05-01", "Ada Lovelace, Alan Turing", "Example"
    )
    assert dict(r.metadata) == {"lang": "en", "rank": "3", "flag": "true"}
    assert warnings == ["records[0]: metadata keys ignored (values must be strings): nested, none"]


def test_content_is_kept_verbatim() -> None:
    content = "  Line one.\r\nLine two.\t\n"
    recs, _ = normalize_records([rec(content=content)])
    assert recs[0].content == content


def test_title_control_characters_become_spaces() -> None:
    recs, _ = normalize_records([rec(title="Bad\ntitle\x00with\u202econtrols\t ")])
    assert recs[0].title == "Bad title with controls"


def test_empty_or_null_title_falls_back_to_url_name() -> None:
    recs, warnings = normalize_records([
        rec("https://www.Example.com/reports/2024/", title=""),
        {"url": "C:\\data\\notes\\q3 summary.docx", "title": None, "content": "Q3."},
        rec("doc-17", title="   "),
    ])
    assert [r.title for r in recs] == ["www.example.com/reports/2024", "q3 summary.docx", "doc-17"]
    assert warnings == []


def test_a_fallback_title_is_cleaned_and_a_script_url_gives_no_name_of_its_own() -> None:
    recs, _ = normalize_records([rec("data:text/html,<script>alert(1)</script>", title=""),
                                rec("JavaScript:alert(1)", title=""), rec("report\x00 2024.pdf", title=""),
                                rec("\x01java\tscript:alert(1)", title="")])
    assert [r.title for r in recs] == ["data: URL", "javascript: URL", "report 2024.pdf", "javascript: URL"]


# ------------------------------------------------------------------------------ drop rules


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        ({"title": "T", "content": "C."}, "missing url (or id)"),
        ({"id": True, "content": "C."}, "missing url (or id) (id must be a string or number, got boolean)"),
        ({"url": None, "title": "T", "content": "C."}, "empty url"),
        ({"url": "", "id": "  ", "title": "T", "content": "C."}, "empty url"),
        ({"url": "https://a.com", "title": "T"}, "missing content"),
        ({"url": "https://a.com", "title": "T", "content": "   \n\t"}, "empty content"),
        ({"url": "https://a.com", "title": "T", "content": ""}, "empty content"),
        ({"url": "  ", "title": "T", "content": "C."}, "empty url"),
        ({"url": 5, "title": "T", "content": "C."}, "url must be a string, got number"),
        ({"url": "https://a.com", "title": ["T"], "content": "C."}, "title must be a string, got array"),
        ({"url": "https://a.com", "title": "T", "content": None}, "content must be a string, got null"),
        ({"url": "https://a.com", "title": "T", "content": {"x": 1}}, "content must be a string, got object"),
        ("just a string", "expected an object, got str"),
        (["a", "list"], "expected an object, got array"),
    ],
)
def test_drop_reasons_name_the_index(item: object, reason: str) -> None:
    recs, warnings = normalize_records([rec("https://ok.com/0"), rec("https://ok.com/1"), item, rec("https://ok.com/3")])
    assert [r.index for r in recs] == [0, 1, 3]  # indices still map back to the request
    assert warnings == [f"record 2 dropped: {reason}"]


def test_indices_count_dropped_records_in_grouped_input() -> None:
    raw = {"web": [rec("https://a.com/0"), {"title": "x"}], "local": [rec("/d/e.txt")]}
    recs, warnings = normalize_records(raw)
    assert [r.index for r in recs] == [0, 2]
    assert warnings == ["record 1 dropped: missing url (or id), content"]


def test_missing_title_falls_back_to_a_name_from_the_url() -> None:
    recs, warnings = normalize_records([{"url": "https://www.example.com/reports/2024/", "content": "C."}])
    assert warnings == []
    assert recs[0].title == "www.example.com/reports/2024"


def test_record_with_an_id_and_no_url_is_identified_by_its_id() -> None:
    recs, warnings = normalize_records([
        {"id": "kb-17", "title": "Handbook", "content": "Local text."},
        {"url": "", "index": 4, "content": "Other local text."},
        {"url": "  ", "id": "kb-17", "title": "Handbook", "content": "Same document, another chunk."},
        {"url": "https://a.com/x", "id": "kb-17", "title": "Web", "content": "Web text."},
    ])
    assert warnings == []
    assert [(r.url, r.id, r.title, r.source_key) for r in recs] == [
        ("", "kb-17", "Handbook", "id:kb-17"),
        ("", "4", "4", "id:4"),  # no title: the id names it
        ("", "kb-17", "Handbook", "id:kb-17"),  # same id: same source
        ("https://a.com/x", "kb-17", "Web", "https://a.com/x"),  # a url wins over the id
    ]


def test_exact_duplicates_dropped() -> None:
    recs, warnings = normalize_records([
        rec("https://example.com/page", "Page", "Same text."),
        rec("https://EXAMPLE.com/page/?utm_source=news#top", "Page", "Same text."),
        rec("https://example.com/page", "Page", "Different text."),  # same source, other content: kept
        rec("https://example.com/page", "Other title", "Same text."),  # other title: kept
    ])
    assert [r.index for r in recs] == [0, 2, 3]
    assert {r.source_key for r in recs} == {"https://example.com/page"}
    assert warnings == ["record 1 dropped: exact duplicate of record 0"]


# ------------------------------------------------------------------------------ canonical identity


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("https://example.com/a", "https://example.com/a"),
        ("HTTPS://Example.COM/Path/Case", "https://example.com/Path/Case"),  # path case is significant
        ("https://example.com/a/", "https://example.com/a"),
        ("https://example.com/", "https://example.com"),
        ("https://example.com", "https://example.com"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("https://example.com:8443/a", "https://example.com:8443/a"),
        ("http://example.com:443/a", "http://example.com:443/a"),  # not the default port for http
        ("https://example.com/a#section-2", "https://example.com/a"),
        ("https://example.com/app#/route/2", "https://example.com/app#/route/2"),  # SPA route kept
        ("https://example.com/a?utm_source=x&utm_medium=y&id=7", "https://example.com/a?id=7"),
        ("https://example.com/a?b=2&fbclid=abc&a=1&gclid=z", "https://example.com/a?b=2&a=1"),
        ("https://example.com/a?UTM_Campaign=x", "https://example.com/a"),
        # what Chinese apps add when a page is shared, and only those values of "from" / "for"
        ("https://baijiahao.baidu.com/s?id=1790&wfr=spider&for=pc", "https://baijiahao.baidu.com/s?id=1790"),
        ("https://mp.weixin.qq.com/s/abc?from=timeline&isappinstalled=0", "https://mp.weixin.qq.com/s/abc"),
        ("https://example.com/x?from=2020&for=all", "https://example.com/x?from=2020&for=all"),
        # what chat apps add to the links they cite
        ("https://example-news.test/page?referrer=grok.com", "https://example-news.test/page"),
        ("https://www.nature.com/articles/xyz?utm_source=chatgpt.com", "https://www.nature.com/articles/xyz"),
        ("https://example.com/x?referrer=partner-7", "https://example.com/x?referrer=partner-7"),
        ("https://example.com/a?msclkid=1&mc_cid=2&mc_eid=3&yclid=4&_ga=5&igshid=6&spm=7&ref_src=8",
         "https://example.com/a"),
        ("https://example.com/a/?utm_source=x#frag", "https://example.com/a"),
        ("https://www.example.com/a", "https://www.example.com/a"),  # www is a different host
        ("https://example.com./a", "https://example.com/a"),
        ("https://example.com/%7ejane/a%2fb", "https://example.com/~jane/a%2Fb"),
        ("https://en.wikipedia.org/wiki/Python_%28programming_language%29?q=%21",
         "https://en.wikipedia.org/wiki/Python_(programming_language)?q=!"),
        # an IRI and its percent-encoded form are one page
        ("https://zh.wikipedia.org/wiki/天宫?q=中",
         "https://zh.wikipedia.org/wiki/%E5%A4%A9%E5%AE%AB?q=%E4%B8%AD"),
        ("https://zh.wikipedia.org/wiki/%e5%a4%a9%e5%ae%ab",
         "https://zh.wikipedia.org/wiki/%E5%A4%A9%E5%AE%AB"),
        ("  https://example.com/a  ", "https://example.com/a"),
        ("https://doi.org/10.1038/NATURE12373", "doi:10.1038/nature12373"),
        ("http://dx.doi.org/10.1000/xyz123/", "doi:10.1000/xyz123"),
        ("doi:10.1000/ABC", "doi:10.1000/abc"),
        ("https://arxiv.org/abs/2303.08774", "arxiv:2303.08774"),
        ("https://arxiv.org/abs/2303.08774v4", "arxiv:2303.08774"),
        ("http://arxiv.org/pdf/2303.08774v2.pdf", "arxiv:2303.08774"),
        ("https://arxiv.org/pdf/2303.08774", "arxiv:2303.08774"),
        ("https://export.arxiv.org/abs/hep-th/9901001v1", "arxiv:hep-th/9901001"),
        ("arXiv:2303.08774v1", "arxiv:2303.08774"),
        ("https://arxiv.org/list/cs.CL/recent", "https://arxiv.org/list/cs.CL/recent"),
        ("doc-1", "doc-1"),
        ("  /home/u/report.pdf ", "/home/u/report.pdf"),
        ("ftp://Example.com/file", "ftp://Example.com/file"),
        ("https://example.com:notaport/a", "https://example.com:notaport/a"),
        ("https://example.com/a?b=1 #frag", "https://example.com/a?b=1"),  # idempotent: no " " kept
        ("http://0? &utm_a=1", "http://0"),
    ],
)
def test_canonical_url(url: str, canonical: str) -> None:
    assert canonical_url(url) == canonical


def test_url_variants_share_source_key() -> None:
    recs, _ = normalize_records([
        rec("https://news.example.org/story/42?utm_source=twitter", content="Part one."),
        rec("HTTPS://news.example.org:443/story/42/#comments", content="Part two."),
        rec("https://doi.org/10.5555/ABC", content="Paper."),
        rec("https://dx.doi.org/10.5555/abc", content="Paper again."),
    ])
    assert [r.source_key for r in recs] == [
        "https://news.example.org/story/42",
        "https://news.example.org/story/42",
        "doi:10.5555/abc",
        "doi:10.5555/abc",
    ]


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("doc-1", "doc:doc-1"),
        ("/home/u/./docs//plan.md", "doc:/home/u/docs/plan.md"),
        ("./notes/a.txt", "doc:notes/a.txt"),
        ("C:\\Reports\\Q3.docx", "doc:C:/Reports/Q3.docx"),
        ("file:///home/u/My%20Doc.pdf", "doc:/home/u/My Doc.pdf"),
        ("arXiv:2303.08774v2", "arxiv:2303.08774"),
    ],
)
def test_non_url_source_keys(url: str, key: str) -> None:
    recs, _ = normalize_records([rec(url)])
    assert recs[0].source_key == key
    assert recs[0].url == url.strip()


def test_internationalised_host_and_its_punycode_share_a_source_key() -> None:
    recs, _ = normalize_records([
        rec("https://Bücher.example/katalog", content="Unicode host."),
        rec("https://xn--bcher-kva.example/katalog", content="Punycode host."),
    ])
    assert recs[0].source_key == recs[1].source_key == "https://xn--bcher-kva.example/katalog"
    assert recs[0].url == "https://Bücher.example/katalog"


def test_http_and_https_of_one_page_share_a_source_key_but_keep_their_urls() -> None:
    recs, _ = normalize_records([
        rec("http://Example.com/a/", content="Over http."),
        rec("https://example.com/a", content="Over https."),
        rec("http://example.com:8080/a", content="Another server."),
        rec("https://example.com:8080/a", content="Another scheme on that port."),
    ])
    assert [r.source_key for r in recs] == [
        "https://example.com/a", "https://example.com/a",
        "http://example.com:8080/a", "https://example.com:8080/a",
    ]
    assert recs[0].url == "http://Example.com/a/"


@pytest.mark.parametrize(
    ("url", "link"),
    [
        ("https://example.com/a", True),
        ("http://example.com", True),
        ("HTTPS://EXAMPLE.COM/x", True),
        ("https://en.wikipedia.org/wiki/Foo_(bar)", True),
        ("ftp://example.com/a", False),
        ("javascript:alert(1)", False),
        ("file:///etc/passwd", False),
        ("/home/u/a.pdf", False),
        ("doc-1", False),
        ("doi:10.1/x", False),
        ("https://", False),
        ("https:///path", False),
        ("https://exa mple.com/a", False),
        ("https://example.com/a\nb", False),
        ('https://example.com/"onmouseover', False),
        ("https://example.com:99999/", False),
    ],
)
def test_is_link(url: str, link: bool) -> None:
    assert is_link(url) is link


# ------------------------------------------------------------------------------ passages


def _record(content: str) -> Record:
    return Record(index=0, url="https://a.com", title="T", content=content)


def _check_passages(recs: list[Record], passages: list[Passage]) -> None:
    """Offsets are exact, ids are positions, and the passages of each record tile its content."""
    assert [p.id for p in passages] == list(range(len(passages)))
    for ri, r in enumerate(recs):
        own = [p for p in passages if p.record == ri]
        assert own, "every record has at least one passage"
        assert own[0].start == 0 and own[-1].end == len(r.content)
        for p in own:
            assert p.text == r.content[p.start:p.end]
            assert p.start < p.end
        for a, b in zip(own, own[1:], strict=False):
            assert a.start < b.start <= a.end  # ordered, no gap (coverage), possibly overlapping
            assert a.end < b.end


def test_short_record_is_one_passage() -> None:
    recs = [_record("One sentence. Another one."), _record("短文本。")]
    passages = split_passages(recs, 1200, 200)
    assert [(p.record, p.start, p.end) for p in passages] == [(0, 0, 26), (1, 0, 4)]
    _check_passages(recs, passages)


def _english(n: int) -> str:
    return " ".join(
        f"Sentence number {i} reports that revenue grew by {i}.5% in {2000 + i % 20}." for i in range(n)
    )


def test_english_passages_cut_at_sentence_ends_with_overlap() -> None:
    content = _english(80)
    recs = [_record(content)]
    passages = split_passages(recs, 400, 100)
    _check_passages(recs, passages)
    assert len(passages) > 5
    for p in passages[:-1]:
        assert p.end - p.start <= 400
        assert content[p.end - 2:p.end] == ". "  # ends after a sentence terminator
    for p in passages[1:]:
        assert content[p.start:p.start + 9] == "Sentence "  # starts at a sentence start
    overlaps = [a.end - b.start for a, b in zip(passages, passages[1:], strict=False)]
    assert all(0 < o <= 100 for o in overlaps)  # sentences are ~60 chars: one sentence repeats


def test_decimals_are_not_boundaries() -> None:
    content = _english(40)
    for p in split_passages([_record(content)], 300, 0)[1:]:
        assert not content[p.start - 1].isdigit()


def test_no_overlap_when_zero() -> None:
    content = _english(50)
    passages = split_passages([_record(content)], 300, 0)
    _check_passages([_record(content)], passages)
    assert all(a.end == b.start for a, b in zip(passages, passages[1:], strict=False))


def test_chinese_passages_cut_after_terminators() -> None:
    content = "".join(
        f"第{i}段报告指出，该地区的光伏装机容量增长了{i}%！是否可持续？专家认为可以。" for i in range(60)
    )
    recs = [_record(content)]
    passages = split_passages(recs, 200, 50)
    _check_passages(recs, passages)
    for p in passages[:-1]:
        assert content[p.end - 1] in "。！？"
    assert any(a.end > b.start for a, b in zip(passages, passages[1:], strict=False))


def test_paragraphs_and_lines_are_boundaries() -> None:
    content = "\n\n".join(f"Heading {i}\nA line without a full stop about item {i}" for i in range(30))
    recs = [_record(content)]
    passages = split_passages(recs, 250, 60)
    _check_passages(recs, passages)
    for p in passages[1:]:
        assert content[p.start - 1] == "\n"


def test_hard_wrapped_sentences_are_not_cut_at_line_breaks() -> None:
    sentence = "The survey of {i} towns found\nthat rents rose by {i}%\nover the decade."
    content = " ".join(sentence.format(i=i) for i in range(40))
    recs = [_record(content)]
    passages = split_passages(recs, 300, 80)
    _check_passages(recs, passages)
    for p in passages[1:]:
        assert content[p.start:p.start + 10] == "The survey"


def test_lines_without_punctuation_are_cut_at_line_breaks() -> None:
    content = "\n".join(f"Archive month {i}" for i in range(300))  # a menu: no terminators
    recs = [_record(content)]
    passages = split_passages(recs, 200, 40)
    _check_passages(recs, passages)
    for p in passages[1:]:
        assert content[p.start - 1] == "\n" and content[p.start:p.start + 7] == "Archive"


def test_closing_quotes_stay_with_their_sentence() -> None:
    content = " ".join(f'He said "item {i} is done." Then left.' for i in range(40))
    passages = split_passages([_record(content)], 200, 0)
    for p in passages[1:]:
        assert content[p.start] in "HT"


def test_long_unit_without_sentence_breaks_is_split_at_spaces_then_hard() -> None:
    words = " ".join(f"word{i}" for i in range(2000))  # no terminators at all
    blob = "x" * 5000  # no breaks at all: hard cut as a last resort
    recs = [_record(words), _record(blob)]
    passages = split_passages(recs, 500, 100)
    _check_passages(recs, passages)
    for p in passages:
        assert p.end - p.start <= 500 * 5 // 4
    for p in passages:
        if p.record == 0 and p.start > 0:
            assert words[p.start - 1] == " "


def test_short_tail_is_merged_into_last_passage() -> None:
    content = "A" * 390 + ". " + "Tail end."
    passages = split_passages([_record(content)], 400, 50)
    assert [(p.start, p.end) for p in passages] == [(0, len(content))]


def test_passage_record_is_position_not_index() -> None:
    raw = [{"url": "x"}, rec(content="First."), rec("https://b.com", content="Second.")]
    recs, _ = normalize_records(raw)
    passages = split_passages(recs, 1200, 200)
    assert [(p.record, recs[p.record].index) for p in passages] == [(0, 1), (1, 2)]


def test_100k_page_is_cut_completely() -> None:
    para = (
        "The 2023 annual survey recorded 4,512 respondents across 37 countries. "
        "Median income rose by 3.4% (U.S. data) while costs fell! Was it enough? Analysts disagree.\n"
    )
    content = (para * 700)[:100_000] + "中文部分说明了调查方法。样本覆盖三十七个国家！" * 200
    recs = [_record(content), _record("Short one.")] * 3
    passages = split_passages(recs, 1200, 200)
    _check_passages(recs, passages)
    big = [p for p in passages if p.record == 0]
    assert 80 <= len(big) <= 200
    assert max(p.end - p.start for p in big) <= 1500


def test_nonpositive_passage_chars_means_whole_records() -> None:
    content = _english(30)
    passages = split_passages([_record(content)], 0, 0)
    assert [(p.start, p.end) for p in passages] == [(0, len(content))]


_TEXT = st.text(
    alphabet=st.sampled_from(list("abc de.!?。！？，,\n\t”) 0")),
    min_size=1,
    max_size=600,
).filter(lambda s: s.strip() != "")


@settings(max_examples=150, deadline=None)
@given(content=_TEXT, limit=st.integers(min_value=1, max_value=200), overlap=st.integers(0, 120))
def test_passages_always_tile_content(content: str, limit: int, overlap: int) -> None:
    recs = [_record(content)]
    passages = split_passages(recs, limit, overlap)
    _check_passages(recs, passages)
    for p in passages:
        assert p.end - p.start <= max(limit + limit // 4, limit)


# ------------------------------------------------------------------------------ text parsing


def test_parse_json_list_and_grouped() -> None:
    assert parse_records_text('[{"url": "u", "title": "t", "content": "c"}]') == [
        {"url": "u", "title": "t", "content": "c"}
    ]
    assert parse_records_text('\ufeff{"web": []}') == {"web": []}


def test_parse_jsonl_with_blank_lines() -> None:
    text = '{"url": "a", "title": "A", "content": "x"}\n\n{"url": "b", "title": "B", "content": "y"}\r\n'
    assert parse_records_text(text) == [
        {"url": "a", "title": "A", "content": "x"},
        {"url": "b", "title": "B", "content": "y"},
    ]


def test_parse_jsonl_splits_at_line_feeds_only() -> None:
    """U+2028, U+2029 and U+0085 stand raw inside JSON strings (`JSON.stringify` writes them so)."""
    text = '{"url": "a", "content": "one\u2028two"}\n{"url": "b", "content": "x\u2029y\u0085z"}\n'
    assert parse_records_text(text) == [{"url": "a", "content": "one\u2028two"},
                                        {"url": "b", "content": "x\u2029y\u0085z"}]


def test_a_jsonl_line_that_is_no_object_is_a_record_dropped_with_a_warning() -> None:
    raw = parse_records_text('{"url": "https://a.org", "content": "x"}\n[1, 2]\n5\n'
                             '{"url": "https://b.org", "content": "y"}\n')
    records, warnings = normalize_records(raw)
    assert [r.url for r in records] == ["https://a.org", "https://b.org"]
    assert warnings == ["record 1 dropped: expected an object, got array",
                        "record 2 dropped: expected an object, got number"]


def test_a_lone_surrogate_escape_is_read_and_replaced_with_a_warning() -> None:
    """`JSON.stringify` writes a string cut inside an emoji as "\\ud83d"; orjson refuses it."""
    raw = parse_records_text(
        '[{"url": "https://a.org", "title": "A \\ud83d", "content": "cut \\ud83d here"}]')
    records, warnings = normalize_records(raw)
    assert (records[0].title, records[0].content) == ("A \ufffd", "cut \ufffd here")
    assert warnings == [f"records[0]: {k}: 1 lone surrogate (half of a UTF-16 pair, e.g. a cut emoji) "
                        "replaced by U+FFFD" for k in ("title", "content")]
    with pytest.raises(InvalidInputError):
        parse_records_text('[{"url": "a", "content": "\\ud83d"}, oops]')


@pytest.mark.parametrize(("raw", "urls"), [
    ({"records": [], "classified_content": [{"index": 0, "url": "https://c.org", "original_content": "x"}]},
     ["https://c.org"]),
    ({"records": [{"url": "https://r.org", "content": "x"}], "classified_content": []}, ["https://r.org"]),
])
def test_an_empty_records_or_classified_content_gives_way_to_the_other(
        raw: dict[str, Any], urls: list[str]) -> None:
    assert [r.url for r in normalize_records(raw)[0]] == urls


def test_records_and_classified_content_both_given_is_an_error() -> None:
    with pytest.raises(InvalidInputError, match="records and classified_content both"):
        normalize_records({"records": [{"url": "https://r.org", "content": "x"}], "classified_content": [
            {"index": 0, "url": "https://c.org", "original_content": "y"}]})


@pytest.mark.parametrize("end", ["\r", "\r\n", "\n"])
def test_parse_jsonl_with_any_line_ending(end: str) -> None:
    text = '{"url": "a", "content": "x"}' + end + '{"url": "b", "content": "y"}\r' + end
    assert parse_records_text(text) == [{"url": "a", "content": "x"}, {"url": "b", "content": "y"}]


def test_parse_empty_text_is_no_records() -> None:
    assert parse_records_text("  \n") == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"url": "a"}\n{"url": oops}\n', r"line 2: invalid JSON at column \d+"),
        ('[\n  {"url": "a"},\n  {"url": }\n]', r"invalid JSON at line 3 column \d+"),
        ("{\n  \"web\": [\n}\n", r"invalid JSON at line 3 column \d+"),
        ("42", "expected a JSON array or object of records, got number"),
        ('"text"', "got str"),
        ("url,title,content\nhttps://a.com,A,x\n", r"invalid JSON at line 1 column 1"),
    ],
)
def test_parse_errors_name_source_and_line(text: str, message: str) -> None:
    with pytest.raises(InvalidInputError) as exc:
        parse_records_text(text, source="recs.jsonl")
    assert exc.value.field == "recs.jsonl"
    assert re.search(message, exc.value.reason), exc.value.reason


def test_parse_then_normalize_openjiuwen_jsonl() -> None:
    lines = [
        {"classified_content": [{"index": i, "title": t, "url": f"https://{t}.com", "original_content": t}]}
        for i, t in enumerate(["a", "b"])
    ]
    text = "\n".join(orjson.dumps(line).decode() for line in lines)
    recs, warnings = normalize_records(parse_records_text(text))
    assert [(r.index, r.id, r.url, r.content) for r in recs] == [
        (0, "0", "https://a.com", "a"),
        (1, "1", "https://b.com", "b"),
    ]
    assert warnings == []


# ------------------------------------------------------------------------------ bundled examples


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bundled_example_records_are_valid(lang: str) -> None:
    raw = parse_records_text((EXAMPLES / lang / "records.json").read_text(encoding="utf-8"))
    recs, warnings = normalize_records(raw)
    assert len(recs) >= 5
    # Each example carries exactly one URL-variant duplicate page (same source key, dropped).
    assert len(warnings) == 1
    assert re.fullmatch(r"record \d+ dropped: exact duplicate of record \d+", warnings[0])
    assert len(split_passages(recs, 1200, 200)) >= len(recs)


# ------------------------------------------------------------------------------ robustness

_URLISH = st.one_of(
    st.text(max_size=40),
    st.builds(
        lambda scheme, host, rest: f"{scheme}://{host}{rest}",
        st.sampled_from(["http", "https", "HTTPS", "ftp", "file"]),
        st.text(alphabet="abcXYZ.-:[]@0123456789%", max_size=20),
        st.text(alphabet="/?&=#%._~abcABC0123456789 utm_", max_size=30),
    ),
)


@settings(max_examples=300, deadline=None)
@given(url=_URLISH)
@example(url="HTTP://0/ /")  # a path of slashes and spaces: once canonical, it stays so
def test_identity_functions_never_raise(url: str) -> None:
    canon = canonical_url(url)
    assert canonical_url(canon) == canon or not is_link(canon)  # idempotent on links
    recs, warnings = normalize_records([{"url": url, "title": "", "content": "x"}])
    assert len(recs) + len(warnings) == 1
    if recs:
        assert recs[0].source_key and recs[0].title
        assert is_link(url) == is_link(recs[0].url)


_VALUE = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=8), st.lists(st.integers(), max_size=2)
)
_ITEM = st.one_of(
    _VALUE,
    st.dictionaries(
        st.sampled_from(["url", "link", "title", "name", "content", "text", "id", "metadata", "author"]),
        st.one_of(_VALUE, st.dictionaries(st.text(max_size=3), _VALUE, max_size=2)),
        max_size=6,
    ),
)


@settings(max_examples=200, deadline=None)
@given(items=st.lists(_ITEM, max_size=8))
def test_every_input_record_is_kept_or_dropped_with_its_index(items: list[object]) -> None:
    recs, warnings = normalize_records(items)
    dropped = [w for w in warnings if w.startswith("record ")]
    assert len(recs) + len(dropped) == len(items)
    indices = sorted([r.index for r in recs] + [int(w.split()[1]) for w in dropped])
    assert indices == list(range(len(items)))
    for r in recs:
        assert r.content.strip() and (r.url or r.id) and r.title and r.source_key


def test_an_overlong_url_title_or_id_drops_the_record_naming_the_field_and_limit() -> None:
    recs, warnings = normalize_records([
        {"url": "https://a.example/" + "x" * 9000, "content": "c"},
        {"url": "https://b.example/", "title": "t" * 5000, "content": "c"},
        {"id": "i" * 2000, "content": "c"},
        {"url": "https://c.example/", "content": "c", "author": "a" * 2000},
        {"url": "https://d.example/", "title": "t" * 4096, "content": "c"},
    ])
    assert [r.index for r in recs] == [3, 4] and recs[0].author == ""
    assert warnings == [
        "record 0 dropped: url is 9018 characters, over the limit of 8192",
        "record 1 dropped: title is 5000 characters, over the limit of 4096",
        "record 2 dropped: id is 2000 characters, over the limit of 1024",
        "records[3]: author ignored: 2000 characters, over the limit of 1024",
    ]
