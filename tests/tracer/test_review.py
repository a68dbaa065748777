"""Review page: self-contained, escaped, clickable markers with evidence, unsupported marked."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from tracer.models import (
    Candidate,
    Layout,
    Record,
    Sentence,
    Stats,
    Support,
    TraceResult,
    Unsupported,
)
from tracer.options import TraceOptions
from tracer.render import STYLES, render_report
from tracer.review import render_review_html

EVIL = "<script>alert('x')</script>"
PIECES = [
    "Revenue grew 45% in 2023.",
    f"The **CEO** said {EVIL} twice.",
    "Mars has 17 colonies.",
    "Output rose `fast [1]` today.",
]
RECORDS = [
    Record(0, "https://a.example/r", f"Annual {EVIL} report",
           "Intro. Revenue grew 45% in 2023 thanks to services. More text follows here.",
           source_key="https://a.example/r", author="Jane Doe", site="A News"),
    Record(1, "javascript:alert(1)", "Bad link", f"He said {EVIL} twice, the CEO.", source_key="js"),
    Record(2, "/srv/notes.txt", "Notes", "Output rose fast today.", source_key="/srv/notes.txt"),
]


def make_result(style: str = "numeric") -> tuple[TraceResult, str]:
    text, sentences = "", []
    for i, p in enumerate(PIECES):
        if i:
            text += " "
        sentences.append(Sentence(i, len(text), len(text) + len(p), p))
        text += p
    code = (text.index("`fast"), text.index("today") - 1)
    report = "# Title <b>bold</b>\n\n" + text + "\n"
    shift = len("# Title <b>bold</b>\n\n")
    sentences = [Sentence(s.id, s.start + shift, s.end + shift, s.text) for s in sentences]
    layout = Layout(body_end=len(report), references=None,
                    protected=((0, shift - 2), (code[0] + shift, code[1] + shift)))
    ev0 = RECORDS[0].content.index("Revenue grew 45% in 2023")
    chosen = {
        0: [Candidate(0, 0, 0, Support(0.93, "exact", ev0, ev0 + len("Revenue grew 45% in 2023")))],
        1: [Candidate(1, 1, 1, Support(0.71, "fuzzy", 0, 26)),
            Candidate(1, 0, 0, Support(0.6, "lexical", 7, 13))],
        3: [Candidate(3, 2, 2, Support(0.8, "exact", 0, 22))],
    }
    options = TraceOptions(style=style)
    out = render_report(report, layout, sentences, chosen, [], {}, list(RECORDS), options, "en")
    mars = sentences[2]
    result = TraceResult(
        report=out.report, citations=out.citations, references=out.references,
        unsupported=(Unsupported(mars.text, mars.start, mars.end, "no record supports this sentence"),),
        removed_references="", stats=Stats(sentences=4, needs_citation=4), warnings=("record 7 dropped <x>",),
    )
    return result, render_review_html(result, list(RECORDS))


class _Balance(HTMLParser):
    VOID = {"meta", "br", "hr", "img", "input", "link"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> with open {self.stack[-3:]}")
            return
        self.stack.pop()


def parse(page: str) -> _Balance:
    p = _Balance()
    p.feed(page)
    p.close()
    return p


def test_page_is_self_contained_and_well_formed() -> None:
    _, page = make_result()
    p = parse(page)
    assert p.errors == [] and p.stack == []
    assert page.count("<script") == 1  # ours; every hostile "<script>" is escaped
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not any(tag in ("link", "img", "iframe") or "src" in attrs for tag, attrs in p.tags)
    assert "@import" not in page and "url(" not in page


def test_summary_counts() -> None:
    result, page = make_result()
    summary = re.search(r'<ul class="summary">(.*?)</ul>', page).group(1)  # type: ignore[union-attr]
    stats = dict((k, int(v)) for v, k in re.findall(r"<b>(\d+)</b> (\w+)", summary))
    assert stats == {"sentences": 4, "cited": 3, "unsupported": 1, "sources": 3}
    assert "record 7 dropped &lt;x&gt;" in page


def test_markers_are_clickable_and_popups_show_evidence_in_passage() -> None:
    result, page = make_result()
    markers = re.findall(r'<a class="marker" id="m-(\d+)" href="#cite-(\d+)"[^>]*>([^<]*)</a>', page)
    assert [(m, c) for m, c, _ in markers] == [("1", "1"), ("2", "2"), ("3", "3")]
    assert [label for _, _, label in markers] == ["[1]", "[1][2]", "[3]"]
    pop1 = re.search(r'<aside class="pop" id="cite-1".*?</aside>', page, re.S).group(0)  # type: ignore[union-attr]
    assert 'href="https://a.example/r"' in pop1
    assert "Annual &lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; report" in pop1
    assert "score 0.93" in pop1 and ">exact<" in pop1
    assert 'Intro. <mark class="evidence">Revenue grew 45% in 2023</mark> thanks to services.' in pop1
    pop2 = re.search(r'<aside class="pop" id="cite-2".*?</aside>', page, re.S).group(0)  # type: ignore[union-attr]
    assert "javascript:" not in re.sub(r'<div class="url">[^<]*</div>', "", pop2)  # shown, never a link
    assert "score 0.71" in pop2 and ">fuzzy<" in pop2 and "score 0.60" in pop2
    quote = "He said &lt;script&gt;alert(&#x27;x&#x27;)"
    assert f'<mark class="evidence">{quote}</mark>&lt;/script&gt; twice' in pop2


def test_unsupported_sentence_is_marked_and_code_is_not_a_marker() -> None:
    _, page = make_result()
    assert '<span class="unsup" title="No record supports this sentence">Mars has 17 colonies.</span>' in page
    assert "unsup-badge" in page
    assert "<code>fast [1]</code>" in page  # inside code: text, not a marker
    assert "<h1>Title &lt;b&gt;bold&lt;/b&gt;</h1>" in page  # raw HTML in the report is shown as text


@pytest.mark.parametrize("style", STYLES)
def test_every_style_gets_clickable_markers(style: str) -> None:
    result, page = make_result(style)
    markers = re.findall(r'<a class="marker" id="m-(\d+)" href="#cite-\d+"', page)
    assert len(markers) == len(result.citations) == 3
    assert len(re.findall(r'<aside class="pop" id="cite-\d+"', page)) == 3
    # every popup carries the sentence it belongs to
    for c in result.citations:
        assert re.sub(r"\s+", " ", c.sentence.replace("'", "&#x27;").replace("<", "&lt;").replace(">", "&gt;")
                      ) in page
    assert parse(page).errors == []


def test_without_records_evidence_is_still_quoted() -> None:
    result, _ = make_result()
    page = render_review_html(result, None)
    assert '<mark class="evidence">Revenue grew 45% in 2023</mark>' in page
    assert "Intro." not in page


def test_nothing_cited_page() -> None:
    result = TraceResult(report="# Hi\n\nNothing.\n", citations=(), references=(), unsupported=(),
                         removed_references="", stats=Stats(sentences=1), warnings=())
    page = render_review_html(result, [])
    assert "<p>Nothing.</p>" in page and 'class="marker"' not in page
    assert parse(page).errors == []


def test_an_unsupported_table_row_is_marked_across_its_cells() -> None:
    from tracer import trace

    report = ("| Card | Memory | Price |\n|---|---|---|\n"
              "| GeForce RTX 4090 graphics card | 24 GB of GDDR6X memory | $1,599 launch price |\n"
              "| Radeon RX 7900 XTX graphics card | 24 GB of GDDR6 memory | $1,099 launch price |\n\n"
              "Which card should you buy?\n")
    records = [{"url": "https://a.example/4090", "title": "RTX 4090",
                "content": "The GeForce RTX 4090 graphics card has 24 GB of GDDR6X memory and a $1,599 "
                           "launch price. The Radeon RX 7900 XTX graphics card has 24 GB of GDDR6 memory."}]
    result = trace(report, records)
    assert [u.sentence for u in result.unsupported][:1] == [
        "Radeon RX 7900 XTX graphics card | 24 GB of GDDR6 memory | $1,099 launch price"]
    page = render_review_html(result, None)
    row = re.findall(r"<tr>.*?</tr>", page, re.S)[2]
    # each cell of the row is highlighted, and the badge follows its last value, once
    assert re.findall(r'<span class="unsup"[^>]*>([^<]*)</span>', row) == [
        "Radeon RX 7900 XTX graphics card", "24 GB of GDDR6 memory", "$1,099 launch price"]
    assert row.count("unsup-badge") == 1 and row.index("unsup-badge") > row.index("$1,099")
    assert parse(page).errors == []
    # the highlight ends with the row: the closing sentence is not marked
    assert '<p>Which card should you buy?</p>' in page
