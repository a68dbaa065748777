"""tracer.existing: recognising old citation markers and resolving them to records."""

from __future__ import annotations

import pytest

from tracer.existing import (
    MARKER_RE,
    find_existing_markers,
    parse_reference_entries,
    resolve_existing,
    strip_markers,
)
from tracer.markdown import scan_markdown
from tracer.models import ExistingMarker, Record
from tracer.segment import segment_sentences


def find(text: str) -> list[ExistingMarker]:
    layout = scan_markdown(text)
    return find_existing_markers(text, layout, segment_sentences(text, layout))


def found(text: str) -> list[tuple[str, tuple[int, ...]]]:
    return [(text[m.start:m.end], m.numbers) for m in find(text)]


@pytest.mark.parametrize(
    ("marker", "numbers"),
    [
        ("[1]", (1,)),
        ("[1, 2]", (1, 2)),
        ("[1,3]", (1, 3)),
        ("[1-3]", (1, 2, 3)),
        ("[2–4, 7]", (2, 3, 4, 7)),
        # a range's dash as input methods type it: full-width, hyphen, minus sign, "至"
        ("[1－3]", (1, 2, 3)),
        ("【1－3】", (1, 2, 3)),
        ("[1‐3]", (1, 2, 3)),
        ("[1−3]", (1, 2, 3)),
        ("[1至3]", (1, 2, 3)),
        ("[1, 3－4]", (1, 3, 4)),
        ("【1】", (1,)),
        ("【1，2】", (1, 2)),
        # typed with a space inside the brackets
        (" [ 1 ]", (1,)),
        (" [ 1, 2 ]", (1, 2)),
        ("[ 2]", (2,)),
        (" ([ 1 ])", (1,)),
        ("[^1]", (1,)),
        ("[citation:3]", (3,)),
        ("[[1]](https://a.com/x)", (-1,)),   # its URL's own number
        ("[1](https://a.com/x)", (-1,)),
        ("<sup>[1]</sup>", (1,)),
        ("<sup>[1][2]</sup>", (1, 2)),
        ("<sup>1,2</sup>", (1, 2)),
        # full-width brackets, and what the author wrapped around or between the brackets
        ("［1］", (1,)),
        ("〔1，2〕", (1, 2)),
        ("（[1]）", (1,)),
        (" ([1], [2])", (1, 2)),
        (" ([1])", (1,)),
        ("^[1]", (1,)),
        # what writer agents emit: ChatGPT, Gemini, Kimi, wiki-style double brackets, "[Source n]"
        ("【1†source】", (1,)),
        ("【2:0†L10-L20】", (2,)),
        ("[cite: 1, 2]", (1, 2)),
        ("[cite:2]", (2,)),
        ("[^1^]", (1,)),
        ("[[1]]", (1,)),
        ("[[1, 2]]", (1, 2)),
        ("[Source 1]", (1,)),
        ("[sources: 1, 2]", (1, 2)),
        # a number under a label word, in brackets or parentheses, and ChatGPT's form in ASCII brackets
        ("[ref1]", (1,)),
        ("[Ref. 2]", (2,)),
        ("[refs 1-2]", (1, 2)),
        ("[doc1]", (1,)),
        ("[Source2]", (2,)),
        ("[来源1]", (1,)),
        ("[参考文献：2]", (2,)),
        ("【来源1】", (1,)),
        ("【参考 1，2】", (1, 2)),
        (" (ref. 1)", (1,)),
        (" (Source: 1, 2)", (1, 2)),
        ("（来源：2）", (2,)),
        ("（参考资料：2）", (2,)),
        ("[1†source]", (1,)),
        ("[2:0†L10-L20]", (2,)),
        # the label again before each number, a page, full-width brackets, a cue with its brackets
        ("[Source 1, Source 2]", (1, 2)),
        ("【来源1、来源2】", (1, 2)),
        ("[ref1-ref2]", (1, 2)),
        ("[ref2, p. 5]", (2,)),
        (" (Ref. 2; Ref. 1)", (2, 1)),
        ("[Source #1]", (1,)),
        ("［来源1］", (1,)),
        (" (Ref. [2])", (2,)),
        ("（参考文献[1]）", (1,)),
        # a labelled one among others in one parenthesis: one marker, or "(see)" was left
        (" (see (Source: 2), [1])", (2, 1)),
        (" (see ref. 2)", (2,)),
        (" (cf. Refs. 1, 2)", (1, 2)),
        ("（参见来源：2）", (2,)),
        ("（参见（来源：2）、[1]）", (2, 1)),
        # Tencent Yuanbao's numbers of its search results, linked to "@ref"
        ("[2](@ref)", (2,)),
        ("[1,2](@ref)", (1, 2)),
    ],
)
def test_marker_forms(marker: str, numbers: tuple[int, ...]) -> None:
    text = f"Revenue rose 5%{marker}. Next sentence.\n\n## References\n\n[1] A https://a.com/x\n[2] B https://b.com\n"
    assert found(text) == [(marker.strip(), numbers)]
    m = find(text)[0]
    assert m.sentence == 0


def test_adjacent_markers_are_separate() -> None:
    assert found("Fact.[1][3] Next.") == [("[1]", (1,)), ("[3]", (3,))]


def test_link_marker_carries_url() -> None:
    m = find("Fact.[[2]](https://a.com/x) Next.")[0]
    assert m.urls == ("https://a.com/x",)
    assert m.numbers == (-1,)   # its URL says what it cites: a number of its own


def test_markers_with_their_own_urls_resolve_by_them_whatever_their_numbers() -> None:
    """Sections that restart their numbering: "[[1]](caam)" and "[[1]](byd)" are two sources."""
    recs = [Record(url="https://www.caam.org.cn/2024", title="中汽协", content="x", index=0),
            Record(url="https://www.byd.com/annual2024", title="比亚迪", content="y", index=1)]
    text = ("销量增长35.5%[[1]](https://www.caam.org.cn/2024)。\n\n"
            "份额为33.2%[[1]](https://www.byd.com/annual2024)。\n")
    ms = find(text)
    resolved = resolve_existing(ms, "", recs)
    assert [resolved[m.numbers[0]] for m in ms] == [0, 1]
    # a footnote defined by a URL, beside a "【1】" entry of the same list that names another
    text = ("销量增长35.5%【1】。份额为33.2%[^1]。\n\n## 参考文献\n\n【1】中汽协 https://www.caam.org.cn/2024\n"
            "[^1]: 比亚迪 https://www.byd.com/annual2024\n")
    layout = scan_markdown(text)
    ms = find(text)
    resolved = resolve_existing(ms, text[layout.body_end:], recs)
    assert [resolved[m.numbers[0]] for m in ms] == [0, 1]


def test_openjiuwen_marker_gets_synthetic_number_per_url() -> None:
    text = (
        "Alpha.[source_tracer_result][Title A](https://a.com) "
        "Beta.[source_tracer_result][Title B](https://b.com) "
        "Gamma.[source_tracer_result][Title A](https://a.com)"
    )
    ms = find(text)
    assert [m.numbers for m in ms] == [(-1,), (-2,), (-1,)]
    assert [m.urls for m in ms] == [("https://a.com",), ("https://b.com",), ("https://a.com",)]
    assert [m.sentence for m in ms] == [0, 1, 2]


@pytest.mark.parametrize(
    "text",
    [
        "See [the docs](https://a.com) now.",
        "- [x] done task\n- [ ] open task\n",
        "In [2020] the law passed.",
        "【2023】第5号文件发布。",
        "Code `x[1]` here.",
        "```\nx = a[1]\n```\n",
        "Array $a[1]$ here.",
        "Footnote def below.\n\n[^1]: the note\n",
        "[1]: https://a.com\n",
        "See [the [1] docs](https://a.com) now.",
        # a label word with no number, a year, or a word that is no source's
        "The data (Source: 2023 survey) show it.",
        "Sales rose (Source: 2023).",
        "See Figure (2) and [Table 1] for the figures.",
        "[references] are listed below.",
    ],
)
def test_non_markers(text: str) -> None:
    assert found(text) == []


def test_markers_in_tables_and_headings_are_found() -> None:
    text = "## Results [1]\n\n| a | b [2] |\n|---|---|\n| c | d【3】 |\n"
    assert found(text) == [("[1]", (1,)), ("[2]", (2,)), ("【3】", (3,))]
    # a heading and a table's header row are no sentences; a body row is one
    assert [m.sentence for m in find(text)] == [None, None, 0]


def test_superscript_markers_in_table_rows_and_headings_are_found() -> None:
    text = "## Results<sup>[1]</sup>\n\n| a | b |\n|---|---|\n| c | d<sup>[2]</sup> |\n"
    assert found(text) == [("<sup>[1]</sup>", (1,)), ("<sup>[2]</sup>", (2,))]
    assert found("| a | b |\n|---|---|\n| c | `<sup>[2]</sup>` |\n") == []  # in code: text


@pytest.mark.parametrize("text", [
    "[^1]: a note.\n[1][^1]: a note.\n",          # after a definition, a line may define
    "Fact.\n\n> [2] [3][^1]: a note.\n\n[^1]: a note.\n",
    "Fact.\n\n[1][label]: https://e.example/a\n",
    # a kept footnote's label after the run: the line would open with it whatever precedes it
    # (hypothesis found this one: "**References**\n[12][^1]: a note.")
    "[^1]: a note.\n**References**\n[12][^1]: a note.\n",
])
def test_a_marker_whose_removal_would_open_a_definition_stays(text: str) -> None:
    # removing "[1]" from "[1][^1]: a note." would turn the line into a footnote definition
    assert [m for m, _ in found(text) if not m.startswith("[^")] == []


@pytest.mark.parametrize("text", [
    "Fact.\n[1][2]: https://e.example/a\n",        # a paragraph's next line defines nothing
    "Fact.\n\n[1][2]: as the two studies show.\n",  # no destination: "[2]: as …" is no definition
    "Fact.\n\n[1][2]: https://e.example/a \"Title\"\n",  # both go: ": https://…" defines nothing
])
def test_markers_before_a_colon_that_would_define_nothing_are_markers(text: str) -> None:
    assert [m for m, _ in found(text)] == ["[1]", "[2]"]


def test_big_number_in_marker_list_context() -> None:
    assert found("Fact.[1][1024] Next.") == [("[1]", (1,)), ("[1024]", (1024,))]


def test_range_is_capped() -> None:
    assert found("Fact [1-300].") == [("[1-300]", (1, 300))]


def test_marker_attaches_to_preceding_sentence_across_space() -> None:
    text = "Fact one. [1] Fact two.\n\n[2] Orphan paragraph."
    ms = find(text)
    assert [(text[m.start:m.end], m.sentence) for m in ms] == [("[1]", 0), ("[2]", None)]


def test_a_number_opening_a_line_with_a_url_labels_an_entry() -> None:
    # a references list that is not cut (a disclaimer follows it): its labels are no citations
    text = ("Fact one [1].\n\n## 主要资料\n\n[1] 中国信通院 https://www.caict.ac.cn/b.pdf\n"
            "- [2] [国务院](https://www.gov.cn/a.html)\n【3】 Title www.example.com\n\n"
            "## 免责声明\n\n仅供参考。\n")
    assert found(text) == [("[1]", (1,))]
    # without a URL or link on the line it stays a marker (an orphan one)
    assert found("Fact one.\n\n[2] Orphan paragraph.") == [("[2]", (2,))]


def test_markers_in_references_section_are_ignored() -> None:
    text = "Fact.[1]\n\n## References\n[1] A https://a.com\n"
    assert found(text) == [("[1]", (1,))]


def test_chinese_markers() -> None:
    text = "营收增长5%。[1]利润下降【2】。"
    ms = find(text)
    assert [(text[m.start:m.end], m.sentence) for m in ms] == [("[1]", 0), ("【2】", 1)]


def test_strip_markers_removes_every_form() -> None:
    text = (
        "a[1] b[1][3] c[1, 3] d[[1]](https://x.com) e[^1] f<sup>[1]</sup> g[citation:1] h【1】 "
        "i[source_tracer_result][A \\] title](https://x.com) j[1-3] k[1](https://y.com)"
    )
    assert strip_markers(text) == "a b c d e f g h i j k"


def test_strip_markers_keeps_links_and_tasks() -> None:
    text = "See [docs](https://a.com) and - [x] done and ![img](a.png)."
    assert strip_markers(text) == text


# --- resolution ---------------------------------------------------------------------------------


def rec(pos: int, url: str, title: str, rid: str = "") -> Record:
    return Record(index=pos, url=url, title=title, content="c", id=rid)


RECS = [
    rec(0, "https://example.com/a", "Alpha report"),
    rec(1, "https://example.com/b?utm_source=x", "Beta 研究"),
    rec(2, "https://example.com/c", "Gamma", rid="7"),
]


def markers(*nums: int) -> list[ExistingMarker]:
    return [ExistingMarker(i, i + 1, (n,)) for i, n in enumerate(nums)]


@pytest.mark.parametrize(
    "refs",
    [
        "## References\n[1] Alpha report https://example.com/a/\n[2] Beta https://EXAMPLE.com/b\n",
        "## References\n1. [Alpha report](https://example.com/a)\n2. [Beta](https://example.com/b#x)\n",
        "## Sources\n[^1]: https://example.com/a\n[^2]: https://example.com/b\n",
        "## Sources\n- [1] Alpha report\n- [2] Beta 研究\n",
        "[1]: https://example.com/a\n[2]: https://example.com/b\n",
        "**参考文献：**\n【1】《Alpha report》\n【2】Beta 研究，某网站，2024\n",
    ],
)
def test_resolve_through_references(refs: str) -> None:
    assert resolve_existing(markers(1, 2), refs, RECS) == {1: 0, 2: 1}


def test_an_entrys_url_under_the_other_scheme_or_without_www_resolves_to_the_records_page() -> None:
    """An author copies "http://" for the record's "https://", or drops "www.": the same page.
    A URL written without its scheme (MLA) resolves so too, and a site in brackets after a title is
    no part of it (on that site); another path, or another site's, is still no record."""
    recs = [rec(0, "https://a.example.org/x", "Apple sales"), rec(1, "https://www.b.example.org/y", "Tesla")]
    for refs in ("## References\n[1] Apple annual http://a.example.org/x\n[2] Tesla deliveries https://b.example.org/y\n",
                 "## References\n[1] Apple annual www.a.example.org/x/\n[2] Tesla deliveries http://www.b.example.org/y\n",
                 '## Works Cited\n1. "Apple sales." *Apple*, 2023, a.example.org/x.\n'
                 '2. "Tesla deliveries." *Tesla*, 2023, b.example.org/y.\n',
                 "## References\n1. Apple sales (a.example.org)\n2. Tesla (b.example.org)\n"):
        assert resolve_existing(markers(1, 2), refs, recs) == {1: 0, 2: 1}, refs
    # a site in brackets names the record's only when the record is on it; a year names no record
    refs = "## References\n1. Apple sales (c.example.org)\n2. Tesla (2024)\n"
    assert resolve_existing(markers(1, 2), refs, recs) == {1: None, 2: None}
    refs = ("## References\n[1] Apple annual http://a.example.org/z\n[2] Tesla https://c.example.org/y\n"
            "[3] Apple annual, 2023, a.example.org/z.\n")
    assert resolve_existing(markers(1, 2, 3), refs, recs) == {1: None, 2: None, 3: None}


def test_an_entrys_url_keeps_its_parentheses() -> None:
    """Wikipedia's "Mercury_(planet)", The Lancet's "PIIS0140-6736(24)00001-0": the parentheses are
    the URL's; one that closes a bracket the URL stands in, or ends the sentence, is not."""
    recs = [rec(0, "https://en.wikipedia.org/wiki/Mercury_(planet)", "Mercury (planet)"),
            rec(1, "https://www.thelancet.com/journals/lancet/article/PIIS0140-6736(24)00001-0/fulltext",
                "GBD"),
            rec(2, "https://en.wikipedia.org/wiki/Venus", "Venus")]
    for refs in ("## References\n1. https://en.wikipedia.org/wiki/Mercury_(planet)\n"
                 "2. https://www.thelancet.com/journals/lancet/article/PIIS0140-6736(24)00001-0/fulltext.\n"
                 "3. Venus (https://en.wikipedia.org/wiki/Venus)\n",
                 "## References\n[^1]: Mercury, https://en.wikipedia.org/wiki/Mercury_(planet).\n"
                 "[^2]: GBD https://www.thelancet.com/journals/lancet/article/PIIS0140-6736(24)00001-0/fulltext\n"
                 "[^3]: (Venus, https://en.wikipedia.org/wiki/Venus)\n"):
        assert resolve_existing(markers(1, 2, 3), refs, recs) == {1: 0, 2: 1, 3: 2}, refs


def test_unresolvable_is_none_never_positional() -> None:
    refs = "## References\n[1] Unknown https://other.org/x\n"
    assert resolve_existing(markers(1, 3), refs, RECS) == {1: None, 3: None}


def test_resolve_by_marker_url() -> None:
    ms = [ExistingMarker(0, 5, (4,), ("https://example.com/c/",))]
    assert resolve_existing(ms, "", RECS) == {4: 2}


def test_resolve_by_record_id() -> None:
    assert resolve_existing(markers(7), "", RECS) == {7: 2}


def test_record_id_never_overrides_a_reference_entry() -> None:
    assert resolve_existing(markers(7), "## References\n[7] Other https://other.org\n", RECS) == {7: None}
    ms = [ExistingMarker(0, 5, (7,), ("https://other.org/x",))]
    assert resolve_existing(ms, "", RECS) == {7: None}


def test_resolve_openjiuwen_synthetic() -> None:
    ms = [ExistingMarker(0, 5, (-1,), ("https://example.com/b",))]
    assert resolve_existing(ms, "", RECS) == {-1: 1}


def test_parse_reference_entries_continuation_lines() -> None:
    entries = parse_reference_entries("[1] Alpha report\n    https://example.com/a\n[2] [B](https://b.com)\n")
    assert entries[1][0] == ["https://example.com/a"]
    assert entries[2] == (["https://b.com"], ["B"])


def test_parse_reference_entries_reads_entries_numbered_by_a_superscript() -> None:
    refs = ("**参考来源：**\n\n<sup>[1]</sup> [A](https://a.org/x)\n<SUP>2</SUP> B report https://b.org/y\n"
            "<sup>\\[3\\]</sup> [C](https://c.org/z)\n")
    entries = parse_reference_entries(refs)
    assert {n: urls for n, (urls, _t) in entries.items()} == {
        1: ["https://a.org/x"], 2: ["https://b.org/y"], 3: ["https://c.org/z"]}


def test_superscript_markers_keep_resolving_through_a_list_numbered_by_superscripts() -> None:
    from tracer import TraceOptions, trace
    report = ("The bridge opened in 1932<sup>[1]</sup>. The tower was finished in 1889<sup>[2]</sup>.\n\n"
              "**参考来源：**\n\n<sup>[1]</sup> [A](https://a.org/x)\n<sup>[2]</sup> [B](https://b.org/y)\n")
    records = [{"url": "https://a.org/x", "title": "A", "content": "The bridge opened in 1932 and carries "
                "eight lanes of traffic across the harbour."},
               {"url": "https://b.org/y", "title": "B", "content": "The tower was finished in 1889 for the "
                "world fair."}]
    result = trace(report, records, TraceOptions(existing="keep"))
    assert not [w for w in result.warnings if "does not resolve" in w]
    assert [(c.sentence, [s.url for s in c.sources]) for c in result.citations] == [
        ("The bridge opened in 1932<sup>[1]</sup>.", ["https://a.org/x"]),
        ("The tower was finished in 1889<sup>[2]</sup>.", ["https://b.org/y"])]


def test_parse_reference_entries_reads_an_html_list() -> None:
    # items numbered by their place in an "<ol>" (from its start), links and entities decoded,
    # other tags dropped; a "<ul>" item numbers itself or not at all
    refs = ('<h2>References</h2>\n<ol start="3">\n'
            '<li><a href="https://a.com/x?p=1&amp;q=2">Alpha <b>report</b></a>, 2024</li>\n'
            '<li>Beta, https://b.com/y\n</ol>\n<ul><li>[7] Gamma https://c.com</li>'
            '<li>Delta https://d.com</li></ul>\n')
    entries = parse_reference_entries(refs)
    assert {n: urls for n, (urls, _titles) in entries.items()} == {
        3: ["https://a.com/x?p=1&q=2"], 4: ["https://b.com/y"], 7: ["https://c.com"]}
    assert entries[3][1][0] == "Alpha report" and entries[7][1] == ["Gamma"]
    # unquoted and single-quoted hrefs, tags inside the link
    entries = parse_reference_entries(
        "<ol><li><a href=https://a.com/x>A</a></li>"
        "<li><a class='c' href='https://b.com' target=_blank>B <i>x</i></a></li></ol>")
    assert entries == {1: (["https://a.com/x"], ["A"]), 2: (["https://b.com"], ["B x"])}
    # entities decoded once; a "<li>" in a markdown entry's text is no HTML list
    once = parse_reference_entries('<ol><li><a href="https://a.com/?x=1&amp;amp;y">A</a></li></ol>')
    assert once[1][0] == ["https://a.com/?x=1&amp;y"]
    assert parse_reference_entries("[3] Using the <li> tag, https://c.com/x\n")[3][0] == ["https://c.com/x"]


@pytest.mark.parametrize("number",
                         ["**[{n}]**", "**{n}.**", "__{n}.__", "*[{n}]*", "- **[{n}]**", "**【{n}】**"])
def test_parse_reference_entries_reads_numbers_in_emphasis(number: str) -> None:
    refs = "".join(number.format(n=n) + f" Report {n} — https://e{n}.example.com\n" for n in (1, 2))
    entries = parse_reference_entries(refs)
    assert {n: urls for n, (urls, _titles) in entries.items()} == {
        1: ["https://e1.example.com"], 2: ["https://e2.example.com"]}


def test_marker_right_after_bare_url() -> None:
    assert found("See https://example.com/report[1]. Next.") == [("[1]", (1,))]


def test_resolve_by_title_part_of_a_citation_line() -> None:
    refs = "## 参考文献\n[1] 中国汽车工业协会. Alpha report. 2024.\n[2] Smith J, \"Beta 研究\", Journal\n"
    assert resolve_existing(markers(1, 2), refs, RECS) == {1: 0, 2: 1}
    # GB/T 7714: the document-type code after the title ("[R]", "[J]", "[EB/OL]") is no part of it
    refs = ("## 参考文献\n[1] 中国汽车工业协会. Alpha report[R]. 北京, 2024.\n"
            "[2] 张三. Beta 研究[EB/OL]. 2023.\n")
    assert resolve_existing(markers(1, 2), refs, RECS) == {1: 0, 2: 1}


def test_resolve_by_a_title_that_the_record_gives_with_its_sites_name() -> None:
    recs = [rec(0, "https://finance.sina.com.cn/x", "比亚迪2024年销量创新高_新浪财经_新浪网"),
            rec(1, "https://reuters.example/t", "Tesla Q3 deliveries beat estimates - Reuters"),
            rec(2, "https://zhihu.example/q", "电池|知乎")]   # too short once cut: names no record
    refs = ("## 参考文献\n[1] 比亚迪2024年销量创新高. 新浪财经, 2025.\n"
            "[2] Tesla Q3 deliveries beat estimates. 2024.\n[3] 电池.\n")
    assert resolve_existing(markers(1, 2, 3), refs, recs) == {1: 0, 2: 1, 3: None}
    # a part with a figure is no site's name, and a cut title two records give names neither
    recs = [rec(0, "https://a.example/q1", "Quarterly results - Q1 2023"),
            rec(1, "https://a.example/q4", "Quarterly results - Q4 2023"),
            rec(2, "https://b.example/x", "Battery prices fall_新浪财经"),
            rec(3, "https://c.example/y", "Battery prices fall_网易")]
    refs = "## References\n[1] Quarterly results. 2023.\n[2] Battery prices fall.\n"
    assert resolve_existing(markers(1, 2), refs, recs) == {1: None, 2: None}


def test_footnote_with_note_in_body_is_not_a_citation() -> None:
    assert found("Claim[^1]. Other[^n].\n\n[^1]: a note kept in the body\n[^n]: another\n") == []


def test_footnote_definition_inside_code_does_not_count() -> None:
    assert found("Claim[^1].\n\n```\n[^1]: code\n```\n") == [("[^1]", (1,))]


def test_named_footnote_defined_in_references() -> None:
    text = "Claim[^src]. Other[^1].\n\n## Sources\n[^src]: [A](https://example.com/a)\n[^1]: https://example.com/b\n"
    ms = find(text)
    assert [(text[m.start:m.end], m.numbers, m.urls, m.sentence) for m in ms] == [
        ("[^src]", (-1,), ("https://example.com/a",), 0),
        ("[^1]", (1,), ("https://example.com/b",), 1),
    ]
    layout = scan_markdown(text)
    assert resolve_existing(ms, text[layout.body_end:], RECS) == {-1: 0, 1: 1}


def test_footnote_reference_before_a_colon_mid_line_is_a_marker() -> None:
    text = "such as[^1]: the list\n[^1]: a definition"
    assert strip_markers(text) == "such as: the list\n[^1]: a definition"


def test_strip_markers_is_idempotent_when_removal_joins_a_new_marker() -> None:
    # "[2023[1]]" minus "[1]" is "[2023]": the body with its markers removed must strip alike
    assert strip_markers("Seen [2023[1]] here.") == strip_markers("Seen [2023] here.") == "Seen  here."


def test_an_unclosed_sup_with_many_numbers_is_read_in_linear_time() -> None:
    """"<sup>" followed by numbers and no "</sup>" is no marker, and telling so must not try every
    way of splitting the numbers (30 digits took 51 s, 18 listed numbers 50 s; these would not
    finish)."""
    from tracer import trace

    assert MARKER_RE.search("<sup>" + "1" * 200 + "x") is None
    listed = "Webb launched in 2021<sup>" + ",".join(str(i) for i in range(1, 200)) + " and it works."
    assert MARKER_RE.search(listed) is None
    result = trace(listed, [{"url": "https://a.example", "title": "t", "content": "Webb launched in 2021."}])
    assert strip_markers(result.report.split("\n\n## ")[0]) == strip_markers(listed)


def test_a_numeric_label_defined_in_the_body_is_a_link_to_its_url() -> None:
    text = "Claim [1]. Other [2]. Third [3].\n\n[1]: https://example.com/a\n[2]: <https://other.org/x>\n\nMore.\n"
    ms = find(text)
    # a link gets a synthetic number of its own: it never shares one with a "[citation:1]"
    assert [(text[m.start:m.end], m.numbers, m.urls, m.linked) for m in ms] == [
        ("[1]", (-1,), ("https://example.com/a",), True),
        ("[2]", (-2,), ("https://other.org/x",), True),
        ("[3]", (3,), (), False),
    ]
    # the link goes where its definition says: never to the references section's entry [2]
    refs = "## References\n[1] Beta https://example.com/b\n[2] Alpha report https://example.com/a\n"
    assert resolve_existing(ms, refs, RECS) == {-1: 0, -2: None, 3: None}


def test_a_link_definition_inside_code_makes_no_link() -> None:
    ms = find("Claim [1].\n\n```\n[1]: https://example.com/a\n```\n")
    assert [(m.urls, m.linked) for m in ms] == [((), False)]


def test_markers_inside_code_links_and_math_of_tables_and_headings_are_not_markers() -> None:
    # table rows and headings are protected whole; the code, links and math inside them still count
    text = (
        "| A | B |\n|---|---|\n| `xs[2]` | $x_[2]$ |\n| [see [2]](https://z.com) | ![img [2]](i.png) |\n"
        "| <https://e.com/[2]> | fact [3] |\n\n## Indexing with `xs[2]` [4]\n\nProse.\n"
    )
    assert found(text) == [("[3]", (3,)), ("[4]", (4,))]


def test_a_bare_superscript_number_is_a_marker_only_when_the_references_list_it() -> None:
    text = "E = mc<sup>2</sup> holds. Water is 10<sup>3</sup> m deep. Fact<sup>1</sup>.\n"
    assert found(text) == []                      # exponents, not citations
    refs = "\n## References\n\n1. A https://a.com/x\n2. B https://b.com/y\n"
    # a power stays one whatever the list numbers ("mc<sup>2</sup>", "10<sup>3</sup>",
    # "m<sup>2</sup>"): the new list would otherwise make a second trace read it as a marker
    assert found(text + refs) == [("<sup>1</sup>", (1,))]
    powers = "It covers 72,735 m<sup>2</sup>. Sales rose<sup>2</sup>.\n"
    assert found(powers + refs) == [("<sup>2</sup>", (2,))]
    assert found("Fact<sup>[3]</sup>.\n") == [("<sup>[3]</sup>", (3,))]  # brackets say it is one


def test_an_entry_with_its_own_url_is_never_resolved_by_a_title_fragment() -> None:
    recs = [rec(0, "https://en.wikipedia.org/wiki/Tesla,_Inc.", "Tesla"),
            rec(1, "https://www.who.int/news", "News"),
            rec(2, "https://example.com/c", "World Malaria Report 2023")]
    refs = (
        "## References\n\n[1] Tesla, Inc. 2023 Annual Report (Form 10-K), https://ir.tesla.com/x/tsla-10k.pdf\n"
        "[2] World Malaria Report 2023. World Health Organization. News, https://www.who.int/teams/wmr-2023\n"
        "[3] Tesla, Inc. Annual Report. News\n"      # no url: only a title-sized part may match
        "[4] Annual digest. World Malaria Report 2023. WHO\n"
    )
    assert resolve_existing(markers(1, 2, 3, 4), refs, recs) == {1: None, 2: None, 3: None, 4: 2}


@pytest.mark.parametrize("prefix", ["", "   ", "> ", ">> ", "- ", "1. ", "> - "])
def test_a_definition_in_a_quote_or_list_item_is_not_a_marker(prefix: str) -> None:
    assert found(f"Prose.\n\n{prefix}[1]: https://x.example.com/a\n\nMore text.\n") == []


def test_footnote_references_written_together_are_two_markers() -> None:
    # "[^2][^3]" looked like a reference link to the defined label "^3", so neither was a marker
    text = ("占有率达到31.6%[^2][^3]。\n\n## 参考文献\n\n[^1]: [甲](https://a.example.cn/1)\n"
            "[^2]: [乙](https://b.example.cn/2)\n[^3]: [丙](https://c.example.cn/3)\n")
    assert found(text) == [("[^2]", (2,)), ("[^3]", (3,))]
    assert found("Fact[^a][^b].\n\n[^a]: https://a.example.com\n[^b]: https://b.example.com\n") == [
        ("[^a]", (-1,)), ("[^b]", (-2,))]


def test_entries_numbered_with_circled_or_full_width_labels_resolve() -> None:
    refs = "## 参考文献\n① Alpha https://example.com/a\n［2］ Beta 研究 https://example.com/b\n〔3〕 Gamma\n"
    entries = parse_reference_entries(refs)
    assert sorted(entries) == [1, 2, 3]
    assert resolve_existing(markers(1, 2), refs, RECS) == {1: 0, 2: 1}
    text = "增长5%［1］。\n\n## 参考文献\n\n① Alpha https://example.com/a\n② Beta https://example.com/b\n"
    assert scan_markdown(text).body_end == text.index("## 参考文献")



def test_wrapped_and_full_width_brackets_keep_the_year_rule_and_entry_labels() -> None:
    # a document number's year is no citation: "国办发〔2020〕39号" stays as written
    assert found("国务院办公厅印发通知（国办发〔2020〕39号）。另见［2023］5号、（[2020]）与^[2020]。") == []
    # a full-width label opening a line with a URL labels an entry, as "[1]" and "【1】" do
    text = "以上数据。\n\n［1］ 国家统计局 https://stats.example.com/x\n\n〔2〕 统计局 https://b.example.com\n"
    assert found(text) == []


def test_an_authors_link_written_next_to_a_marker_stays_a_link() -> None:
    text = ("Revenue rose 5.2% in 2023 [1], [2].\n\n[2]: https://sec.example.gov/filing\n\nMore prose here.\n"
            "\n## References\n\n[1] Alpha https://example.com/a\n")
    ms = find(text)
    assert [(text[m.start:m.end], m.linked) for m in ms] == [("[1]", False), ("[2]", True)]


@pytest.mark.parametrize(
    ("marker", "ids"),
    [
        # ChatGPT's markers name the search result, not a number
        ("【turn0search3】", ("turn0search3",)),
        ("【turn0search3†L5-L9】", ("turn0search3",)),
        ("\ue200cite\ue202turn0search3\ue201", ("turn0search3",)),
        ("\ue200cite\ue202turn0search3\ue202turn1news0\ue201", ("turn0search3", "turn1news0")),
        # ... the same copied without its private-use characters, and its other leftovers
        ("citeturn0search3", ("turn0search3",)),
        ("citeturn0search3turn1news0turn0search3", ("turn0search3", "turn1news0")),
        ("fileciteturn0file2", ("turn0file2",)),
        (":contentReference[oaicite:3]{index=3}", ("oaicite:3",)),
        ("::contentReference[oaicite:12]{index=12}", ("oaicite:12",)),
        # Perplexity's tags
        ("[web:3]", ("web:3",)),
        ("[attached_file:1]", ("attached_file:1",)),
        ("[conversation_history:2]", ("conversation_history:2",)),
        # Grok's citation cards
        ('[](grok_render_citation_card_json={"cardIds":["3bb883","a1"]})', ("3bb883", "a1")),
        ('[](grok_render_citation_card_json={"cardIds": ["bde569"]})', ("bde569",)),
        ('<grok-card data-id="e8ff4f" data-type="citation_card"></grok-card>', ("e8ff4f",)),
    ],
)
def test_agent_and_chat_app_markers_name_record_ids(marker: str, ids: tuple[str, ...]) -> None:
    """A writer agent's marker, or what a chat app leaves in a copied answer, is an old citation
    naming an id of theirs: each id gets a synthetic number of its own and resolves by a record's
    id and nothing else (no "turn0search3" entry is [3]), and none of its bytes is left in the claim."""
    text = f"Revenue rose 5%{marker}. Next sentence.\n\n## References\n\n[3] A https://a.com/x\n"
    [m] = find(text)
    assert text[m.start:m.end] == marker and m.ids == ids and m.sentence == 0 and not m.opener
    assert len(m.numbers) == len(ids) and all(n < 0 for n in m.numbers)
    recs = [Record(index=0, url="https://a.com/x", title="A", content="a"),
            Record(index=1, url="https://b.com/y", title="B", content="b", id=ids[0])]
    resolved = resolve_existing([m], "[3] A https://a.com/x\n", recs)
    assert resolved[m.numbers[0]] == 1
    assert all(resolved[n] is None for n in m.numbers[1:])
    assert strip_markers(f"Revenue rose 5%{marker}.") == "Revenue rose 5%."


@pytest.mark.parametrize(
    ("wrapped", "ids"),
    [
        ("<sup>[web:1]</sup>", ("web:1",)),
        ("<sup>[web:1][attached_file:2]</sup>", ("web:1", "attached_file:2")),
        ("<sup>citeturn0search1</sup>", ("turn0search1",)),
        ("<sup>:contentReference[oaicite:1]{index=1}</sup>", ("oaicite:1",)),
        ("<sup>【turn0search0】</sup>", ("turn0search0",)),
        (" (citeturn0search0)", ("turn0search0",)),
        (" (see citeturn0search0, [web:2])", ("turn0search0", "web:2")),
        ("（[web:1]）", ("web:1",)),
        (" (:contentReference[oaicite:0]{index=0})", ("oaicite:0",)),
        (" (【turn0search0】)", ("turn0search0",)),
        (" cite" + "".join(f"turn0search{i}" for i in range(22)),
         tuple(f"turn0search{i}" for i in range(22))),
        (' [](grok_render_citation_card_json={"cardIds":["a1"],"kind":"web"})', ("a1",)),
    ],
)
def test_chat_markers_wrapped_or_long_are_one_marker_naming_their_ids(wrapped: str,
                                                                      ids: tuple[str, ...]) -> None:
    """A chat app's markers in "<sup>" or in a parenthesis of their own are one marker naming
    their ids (not numbers of the old list: "[web:1]" is not its entry 1), with what wraps them, so
    no "()" is left behind; a long run of ids is one marker too."""
    text = f"Revenue rose 5%{wrapped}. Next sentence.\n\n## References\n\n1. A https://a.com/x\n"
    [m] = find(text)
    assert text[m.start:m.end] == wrapped.lstrip(" ") and m.ids == ids and m.sentence == 0
    assert strip_markers(f"Revenue rose 5%{wrapped}.").rstrip(" .") == "Revenue rose 5%"


def test_chat_markers_that_cite_nothing_or_a_url_when_wrapped() -> None:
    text = ("Revenue rose 5%.<sup>[span_1](end_span)</sup> Costs fell <sup>[oai_citation:1‡ESA 2021]"
            "(https://z.example/other)</sup>. Prices rose [oai_citation:2‡[PDF] Webb](https://a.com/x). "
            "<sup>[cite_start]</sup>Fees fell.\n")
    ms = find(text)
    assert [(m.opener, m.urls, len(m.numbers)) for m in ms] == [
        (True, (), 0), (False, ("https://z.example/other",), 1), (False, ("https://a.com/x",), 1),
        (True, (), 0)]
    assert all(n < 0 for m in ms for n in m.numbers)   # not 1, 2 or 2021
    text = "Revenue rose 5% ([oai_citation:1‡A](https://a.com/x), [oai_citation:2‡B](https://b.com/y)).\n"
    [m] = find(text)
    recs = [Record(index=0, url="https://b.com/y", title="B", content="b"),
            Record(index=1, url="https://a.com/x", title="A", content="a")]
    resolved = resolve_existing([m], "", recs)
    assert [resolved[n] for n in m.numbers] == [1, 0]    # each by its own URL


def test_chat_lookalikes_next_to_other_markers_and_code() -> None:
    # a line-opening marker before ":contentReference…" defines no link: both are markers
    text = "Revenue rose.\n:contentReference[oaicite:0]{index=0}:contentReference[oaicite:1]{index=1}\n"
    assert [m.ids for m in find(text)] == [("oaicite:0",), ("oaicite:1",)]
    # a URL ending in "_span" is an ordinary link citation
    [m] = find("Attention span is short [1](https://en.wikipedia.org/wiki/Attention_span).\n")
    assert not m.opener and m.urls == ("https://en.wikipedia.org/wiki/Attention_span",)
    # "[page:2]" and "[file:2]" are what prose and code write too
    assert find("Use items[page:2] to slice the list, and rows[file:3] too.\n") == []
    assert find("Researchers recite the figures on [page:3] of the report, see [file:2].\n") == []
    # a URL ending in "}})" is no attribution tail
    [m] = find("Revenue rose [1](https://example.com/{{id}}).\n")
    assert not m.opener and m.urls == ("https://example.com/{{id}}",)
    # a chat marker beside a number in one "<sup>" or parenthesis: the number, and the id it names
    # (first, a number of its own), never the id's digits
    for marker, numbers, ids in (("<sup>[1] citeturn3search2</sup>", (1,), ("turn3search2",)),
                                 (" (see [1], [web:2])", (1,), ("web:2",)),
                                 ("<sup>[1][web:2]</sup>", (1,), ("web:2",)),
                                 (" (【3†source】, [2])", (2, 3), ()),
                                 ("<sup>【3†source】[2]</sup>", (2, 3), ()),
                                 ("<sup>[2][span_3](end_span)</sup>", (2,), ())):
        text = f"Revenue rose 5%{marker}. Next.\n\n## References\n\n1. A https://a.com/x\n2. B https://b.com/y\n"
        [m] = find(text)
        assert text[m.start:m.end] == marker.lstrip()
        assert (m.numbers[len(ids):], m.ids, m.urls) == (numbers, ids, ())
        assert all(n < 0 for n in m.numbers[:len(ids)])
        if ids:
            recs = [Record(index=0, url="https://a.com/x", title="A", content="a"),
                    Record(index=1, url="https://z.com/q", title="Z", content="z", id=ids[0])]
            resolved = resolve_existing([m], "1. A https://a.com/x\n", recs)
            assert [resolved[n] for n in m.numbers] == [1, 0]
    # "[web:1]" that the body defines as a link label is the author's link, as "[1]" is
    text = "Revenue rose 5% [web:1].\n\n[web:1]: https://a.com/x\n"
    [m] = find(text)
    assert m.linked and m.urls == ("https://a.com/x",) and not m.ids


def test_chatgpt_oai_citation_links_cite_their_url() -> None:
    text = ("Revenue rose 5% [oai_citation:1‡Reuters 2024](https://b.com/y). Costs fell "
            "[oai_citation_attribution:2‡Wikipedia](https://a.com/x).\n")
    ms = find(text)
    assert [(text[m.start:m.end].split("‡")[0], m.urls, m.sentence) for m in ms] == [
        ("[oai_citation:1", ("https://b.com/y",), 0),
        ("[oai_citation_attribution:2", ("https://a.com/x",), 1)]
    assert all(len(m.numbers) == 1 and m.numbers[0] < 0 for m in ms)   # not 1, 2 or 2024
    recs = [Record(index=0, url="https://a.com/x", title="A", content="a"),
            Record(index=1, url="https://b.com/y", title="B", content="b")]
    resolved = resolve_existing(ms, "", recs)
    assert [resolved[m.numbers[0]] for m in ms] == [1, 0]


def test_gemini_span_brackets_cite_nothing() -> None:
    text = "[span_1](start_span)Revenue rose 5%.[span_1](end_span) Costs fell.\n"
    ms = find(text)
    assert [(text[m.start:m.end], m.numbers, m.opener) for m in ms] == [
        ("[span_1](start_span)", (), True), ("[span_1](end_span)", (), True)]
    assert strip_markers(text) == "Revenue rose 5%. Costs fell.\n"


def test_chatgpt_attribution_wrapper_halves_cite_nothing() -> None:
    tail = '({"attribution":{"attributableIndex":"1009-1"}})'
    note = "\n\nA pandoc note^[a note] stays.\n"
    text = f"^[Revenue rose 5% in [Q3](https://a.com/q).]{tail} Costs fell.{tail}{note}"
    ms = find(text)
    assert [(text[m.start:m.end], m.numbers, m.opener, m.sentence) for m in ms] == [
        ("^[", (), True, None), ("]" + tail, (), True, 0), (tail, (), True, 1)]
    assert strip_markers(text) == "Revenue rose 5% in [Q3](https://a.com/q). Costs fell." + note
    # its tail, a Grok card or a Gemini span is no link making a line a references entry: "[2]" opening
    # the line cites
    for other in (f"^[Costs fell.]{tail}", '[](grok_render_citation_card_json={"cardIds":["a1"]})',
                  "[span_1](start_span)Costs fell.[span_1](end_span)"):
        text = f"[2] reports that revenue rose. {other} More.\n\n## References\n\n[2] B https://b.com\n"
        assert [text[m.start:m.end] for m in find(text)][0] == "[2]", other


def test_chat_app_lookalikes_stay_text() -> None:
    """Words that only look like the chat apps' markers are the report's own."""
    text = ("The excited turnout cited turn 3 results. See [web] or [web: page] and [image:1] here; "
            "a <grok-cards> list and the contentReference field.\n")
    assert find(text) == []
    assert strip_markers(text) == text


def test_gemini_span_openers_are_markers_citing_nothing() -> None:
    text = "[cite_start]Revenue rose 5%.[cite: 1] [cite_start]Costs fell.[cite: 2]\n"
    ms = find(text)
    assert [(text[m.start:m.end], m.numbers, m.opener) for m in ms] == [
        ("[cite_start]", (), True), ("[cite: 1]", (1,), False),
        ("[cite_start]", (), True), ("[cite: 2]", (2,), False),
    ]
    assert strip_markers(text) == "Revenue rose 5%. Costs fell.\n"


def test_entries_numbered_on_one_line_are_entries() -> None:
    """A one-line references list ("Sources: [1] https://… [2] https://…") numbers its entries as
    lines do; a line whose labels do not each give a link is one entry, as before."""
    assert parse_reference_entries("Sources: [1] https://a.com/x [2] [B](https://b.com/y)\n") == {
        1: (["https://a.com/x"], []), 2: (["https://b.com/y"], ["B"])}
    assert parse_reference_entries("来源：【1】新华网 https://a.com/x 【2】人民网 https://b.com/y\n") == {
        1: (["https://a.com/x"], ["新华网"]), 2: (["https://b.com/y"], ["人民网"])}
    assert parse_reference_entries("[1] Smith, see [2] at https://a.com/x\n[2] Jones https://b.com\n") == {
        1: (["https://a.com/x"], ["Smith, see [2] at", "see [2] at"]), 2: (["https://b.com"], ["Jones"])}
    assert parse_reference_entries("Sources: ([1] https://a.com/x, [2] https://b.com/y)\n") == {
        1: (["https://a.com/x"], []), 2: (["https://b.com/y"], [])}
    # (a list item's line too, under a references heading)
    assert parse_reference_entries("- Sources: [1] Beta https://b.com/y [2] Alpha https://a.com/x\n") == {
        1: (["https://b.com/y"], ["Beta"]), 2: (["https://a.com/x"], ["Alpha"])}
    entries = parse_reference_entries("Sources: [1](https://a.com/x), [2](https://b.com/y)\n")
    assert [entries[n][0] for n in (1, 2)] == [["https://a.com/x"], ["https://b.com/y"]]
    # only such a line: an entry of a list that names another number with its link stays one entry
    section = "[1] Alpha https://a.com/x (see also [2] https://b.com/y)\n[2] Beta https://c.com/z\n"
    assert parse_reference_entries(section)[2] == (["https://c.com/z"], ["Beta"])


def test_footnote_labels_with_carets_list_entries() -> None:
    """Kimi's "[^1^]" markers come with "[^1^]: url" definitions in the references."""
    assert parse_reference_entries("[^1^]: https://a.com/x\n[^2^]: [B](https://b.com)\n") == {
        1: (["https://a.com/x"], []), 2: (["https://b.com"], ["B"])}


@pytest.mark.parametrize(
    ("text", "marker", "numbers"),
    [
        # a number with the page it cites, a number linking to its entry, brackets escaped
        ("Webb launched in 2021 [1, p. 5].", "[1, p. 5]", (1,)),
        ("Webb launched in 2021 [2, pp. 10–12].", "[2, pp. 10–12]", (2,)),
        ("Webb launched in 2021 [1](#ref-1).", "[1](#ref-1)", (1,)),
        ("Webb launched in 2021 [\\[3\\]](https://a.com/x).", "[\\[3\\]](https://a.com/x)", (-1,)),
        # a cue word or the brackets around it go with it: removed, it leaves no "(see )" or "[]"
        ("Webb launched in 2021 (see [1]).", "(see [1])", (1,)),
        ("Webb launched in 2021 (Source: [2]).", "(Source: [2])", (2,)),
        ("Webb launched in 2021 (from [2]).", "(from [2])", (2,)),
        ("韦布于2021年发射（参见[1]）。", "（参见[1]）", (1,)),
        # ... ChatGPT's "[4†source]" in ASCII brackets too, as its "【4†source】" is
        ("Webb launched in 2021 (see [1†source]).", "(see [1†source])", (1,)),
        ("Webb is large ([1†source], [2]).", "([1†source], [2])", (1, 2)),
        ("Webb launched in 2021 [[1](https://a.com/x)].", "[[1](https://a.com/x)]", (-1,)),
        ("Webb launched in 2021^[1]^.", "^[1]^", (1,)),
    ],
)
def test_more_written_forms_are_markers(text: str, marker: str, numbers: tuple[int, ...]) -> None:
    assert found(text) == [(marker, numbers)]
    assert "[" not in strip_markers(text)


@pytest.mark.parametrize(
    "text",
    [
        "## [1] Introduction\n\nSome text here.",
        "Intro.\n\n【1】市场规模：2023年市场继续扩大。\n【2】增长率：未来三年保持稳定。",
        "Intro.\n\n[1] Scope: what the study covers.",
        "Steps.\n\n| Step | Action |\n|---|---|\n| [1] | Install the package |\n| [2] | Run it |",
        "| 序号 | 内容 |\n|---|---|\n| 【1】 | 安装 |",
        "Each answer was rated on a scale of [1, 5] by two annotators.",
        "每个样本的评分范围为【1，5】之间。",
        "Rate each item on a scale of [1-5].",
        "Probabilities lie in [0, 1].",
        "Probabilities lie in [ 0, 1 ].",
        "Each answer was rated on a scale of [ 1, 5 ] by two annotators.",
        "## [ 1 ] Introduction\n\nSome text here.",
        "**[1] Introduction**\n\nThe market grew.\n",
        "[1] Introduction\n----------------\n\nThe market grew.\n",
        "| Index | Task |\n|---|---|\n| [1] | Install |\n| [2] | Run |\n",
        "1. [1] Scope: the mission.\n2. [2] Design: the mirror.\n3. [3] Orbit: far away.\n",
        "Scores were drawn uniformly (from [0, 1]).",
        "Ratings used a scale (from [1, 10]).\n\n## References\n\n[1] A https://a.com\n[2] B https://b.com\n",
        # a pair of figures past the list's end, whichever way it runs
        "The tensor has shape [64, 32] after pooling.\n\n## References\n\n[1] A https://a.com\n[2] B https://b.com\n",
        "The kernel is [8, 8] wide.\n\n## References\n\n[1] A https://a.com\n[2] B https://b.com\n",
        # an interval after "interval", whatever numbers the list gives
        "The closed interval [2, 3] holds the mode.\n\n## References\n\n[1] A https://a.com\n"
        "[2] B https://b.com\n[3] C https://c.com\n",
        # with a references list holding 1 and 2: titled numbered lines are still labels
        "Intro.\n\n【1】市场规模：继续扩大。\n【2】增长率：保持稳定。\n\n## 参考文献\n\n[1] 甲 https://a.cn\n"
        "[2] 乙 https://b.cn\n",
    ],
)
def test_numbers_that_label_or_bound_something_are_no_markers(text: str) -> None:
    assert found(text) == []


@pytest.mark.parametrize(
    ("text", "markers"),
    [
        # a paragraph opened by a marker that is no run of numbered lines and gives no title
        ("Fact one.\n\n[2] Orphan paragraph.", ["[2]"]),
        # a marker opening a wrapped line still cites the sentence before it
        ("Webb launched in 2021\n[1]. It is large.", ["[1]"]),
        # a table column of sources, and two numbers that are no interval
        ("| Fact | Source |\n|---|---|\n| 6.5 m | [1] |", ["[1]"]),
        ("Webb launched in 2021 [1, 5].", ["[1, 5]"]),
        ("As shown in [1, 5], it is large.", ["[1, 5]"]),
        ("Evidence from [1, 2] shows it.", ["[1, 2]"]),
        # the old list holds the numbers: after an interval word, or opening a run of lines, they cite
        ("Cells widen the temperature range [1, 2].\n\n## References\n\n[1] A https://a.com\n"
         "[2] B https://b.com\n", ["[1, 2]"]),
        ("Models predict a wide range [1, 2] of warming outcomes.\n\n## References\n\n[1] A https://a.com\n"
         "[2] B https://b.com\n", ["[1, 2]"]),
        ("Studies disagree:\n\n- [1] reports that it launched.\n- [2] finds that it is wide.\n\n"
         "## References\n\n[1] A https://a.com\n[2] B https://b.com\n", ["[1]", "[2]"]),
        # a number past the list's end after a line the list's number opens: citations both (the
        # first trace's own list would make a second trace read a kept "[3]" as its entry 3)
        ("- [2]显示，销量增长。\n- [3]显示，份额约为33.2%。\n\n## 参考文献\n\n[1] 甲 https://a.cn\n"
         "[2] 乙 https://b.cn\n", ["[2]", "[3]"]),
        ("[1] reports that it launched.\n【2】 reports that it is wide.\n\n## References\n\n"
         "[1] A https://a.com\n", ["[1]", "【2】"]),
        # a line opened by a run of markers is no label, nor a neighbour's run partner
        ("- [1]和[3]认为，销量增长。\n- [2]显示，份额约为33.2%。\n", ["[1]", "[3]", "[2]"]),
        ("- （来源：1）、[3]指出，销量增长。\n- [2]显示，份额约为33.2%。\n", ["（来源：1）", "[3]", "[2]"]),
        # a line opened by a subject or a run of markers is no references entry, a link further on
        ("Intro.\n\n【2】 found that it launched. The bridge opened in 1957 ([Bridge](https://b.example/b)).\n",
         ["【2】", "([Bridge](https://b.example/b))"]),
        ("Intro.\n\n[5] and [3] report that it launched in 1990 ([Hubble](https://c.example/h)).\n",
         ["[5]", "[3]", "([Hubble](https://c.example/h))"]),
        # a number followed by a verb of saying is a subject, neither a line's label nor a run partner
        ("Intro.\n\n【3】 found that it launched.\n[4, 4] reports that it is wide.\n", ["【3】", "[4, 4]"]),
        ("Intro.\n\n- [1] reports that it launched.\n- [2] finds that it is wide.\n", ["[1]", "[2]"]),
        # a number linking to a figure is no citation
        ("It is wide, as Figure [2](#figure-2) shows [1].", ["[1]"]),
    ],
)
def test_markers_that_cite_stay_markers(text: str, markers: list[str]) -> None:
    assert [m for m, _n in found(text)] == markers


def test_bare_superscript_numbers_are_no_markers() -> None:
    """"35.5%²" and pandoc "^2^" may be notes, but the first trace's own list would make a second
    trace read "很常见¹" as its [1] (a citation nobody checked): they stay text."""
    refs = "\n\n## 参考资料\n\n1. 乘联会 https://a.cn\n2. 中汽协 https://b.cn\n"
    for text in ("销量增长35.5%²。纯电动车销量771.9万辆¹。", "销量增长35.5%^2^。",
                 "The rate is 0.35 s⁻¹ here."):
        assert found(text + refs) == [], text


def test_a_bare_superscript_whose_note_the_body_writes_out_is_no_citation() -> None:
    refs = "\n\n## References\n\n[1] https://a.example/x\n"
    assert found("Price $1,599<sup>1</sup>." + refs) == [("<sup>1</sup>", (1,))]
    noted = "Price $1,599<sup>1</sup>.\n\n<sup>1</sup> US price, excluding tax.\n" + refs
    assert found(noted) == []
    # a bracketed superscript is a citation whatever the body writes; a line that opens with a bare
    # one no earlier mark points to cites too ("<sup>3</sup> Fact." opening a paragraph)
    assert found(noted.replace("599<sup>1</sup>", "599<sup>[1]</sup>")) == [
        ("<sup>[1]</sup>", (1,)), ("<sup>1</sup>", (1,))]
    # ("<sup>1</sup>:" opening a line reads as a definition, as it always did; the mark after
    # "Fact two" is a citation: no note line points it elsewhere)
    text = "<sup>1</sup>: Fact one.\n\nFact two<sup>1</sup>.\n" + refs
    assert [(m.start, m.numbers) for m in find(text)] == [(text.index("two") + 3, (1,))]
    assert found("<sup>1</sup> Fact one.\n\nFact two<sup>1</sup>.\n" + refs) == [
        ("<sup>1</sup>", (1,)), ("<sup>1</sup>", (1,))]
    # a note line in code or a comment is no note, nor is a wrapped line that opens with a citation
    for elsewhere in ("```html\n<sup>1</sup> a footnote mark\n```", "<!--\n<sup>1</sup> draft\n-->"):
        assert found(f"Price $1,599<sup>1</sup>.\n\n{elsewhere}\n" + refs) == [("<sup>1</sup>", (1,))]
    assert found("It was\n<sup>1</sup> a long project.\n" + refs) == [("<sup>1</sup>", (1,))]


def test_superscripts_that_open_lines_are_citations_not_notes() -> None:
    refs = "\n\n## References\n\n[1] https://a.example/x\n[2] https://b.example/y\n[3] https://c.example/z\n"
    text = "<sup>1</sup><sup>3</sup> Fact one.\n\n<sup>2</sup> Fact two.\n\n<sup>3</sup> Fact three.\n" + refs
    assert [m.numbers for m in find(text)] == [(1,), (3,), (2,), (3,)]


def test_numbers_resolve_through_a_bulleted_list_of_links_by_place() -> None:
    """"- [Beta](https://b.com/y)" is entry 1 of a list of bullets that each give a link, with no
    numbered entry; a list with one, or a bullet without a link, numbers nothing by place."""
    recs = [Record(url="https://a.com/x", title="Alpha", content="x", index=0),
            Record(url="https://b.com/y", title="Beta", content="y", index=1)]
    for refs in ("- [Beta](https://b.com/y)\n- [Alpha](https://a.com/x)\n",
                 "* Beta https://b.com/y\n\n* Alpha, https://a.com/x\n"):
        text = "Revenue rose 5% [1]. Costs fell 2% [2].\n\n## References\n\n" + refs
        layout = scan_markdown(text)
        resolved = resolve_existing(find(text), text[layout.body_end:], recs)
        assert [resolved[n] for n in (1, 2)] == [1, 0], refs
        # a nested item is part of the one above it
        nested = refs.replace("\n", "\n  - [Mirror](https://mirror.example/y)\n", 1)
        resolved = resolve_existing(find(text), nested, recs)
        assert [resolved[n] for n in (1, 2)] == [1, 0], nested
    for refs in ("- [Beta](https://b.com/y)\n- A book about costs\n",
                 "- [Beta](https://b.com/y)\n2. [Alpha](https://a.com/x)\n",
                 # more reading, in no order the body's numbers follow (a helper's review)
                 "**Further reading**\n\n- [Beta](https://b.com/y)\n- [Alpha](https://a.com/x)\n"):
        assert parse_reference_entries(refs).get(1) is None, refs


def test_labelled_markers_resolve_through_a_list_labelled_the_same_way() -> None:
    """"[ref1]" / "【来源2】" in the body, "[ref1] Title https://…" / "【来源2】…" in the list."""
    recs = [Record(url="https://a.com/x", title="Alpha", content="x", index=0),
            Record(url="https://b.com/y", title="Beta", content="y", index=1)]
    for a, b in (("[ref1]", "[ref2]"), ("【来源1】", "【来源2】"), ("[doc1]", "- [doc 2]:")):
        text = (f"Revenue rose 5%{a}. Costs fell 2%{b.removeprefix('- ').rstrip(':')}.\n\n## References\n\n"
                f"{a} Beta https://b.com/y\n{b} Alpha https://a.com/x\n")
        layout = scan_markdown(text)
        assert text[layout.body_end:].startswith("## References")
        ms = find(text)
        assert [m.numbers for m in ms] == [(1,), (2,)]
        resolved = resolve_existing(ms, text[layout.body_end:], recs)
        assert [resolved[n] for n in (1, 2)] == [1, 0], (a, b)


def test_parse_reference_entries_reads_labelled_entries() -> None:
    entries = parse_reference_entries(
        "[ref1] Alpha https://a.com\n【来源2】Beta https://b.com\n- [Doc 3]: Gamma\n")
    assert {n: urls for n, (urls, _) in entries.items()} == {
        1: ["https://a.com"], 2: ["https://b.com"], 3: []}


_EN_RECORDS = [
    {"url": "https://a.example/car", "title": "Car sales",
     "content": "Exports of cars rose to 4.91 million units in 2023."},
    {"url": "https://b.example/bridge", "title": "Wuhan bridge",
     "content": "The Wuhan Yangtze River Bridge opened to traffic in 1957. "
                "It was the first bridge over the Yangtze."},
]
_BRIDGE = "The Wuhan Yangtze River Bridge opened to traffic in 1957"


@pytest.mark.parametrize(("report", "kept", "gone"), [
    # a year under a label word is a source note, not a citation, even beside one
    (f"{_BRIDGE} (Source: 2023).", "(Source: 2023)", ""),
    (f"{_BRIDGE} [1] (Source: 2023).\n\n## References\n\n[1] Wuhan bridge https://b.example/bridge\n",
     "(Source: 2023)", ""),
    ("2024年新能源汽车销量达到1286.6万辆（来源：2024）。", "（来源：2024）", ""),
    # a name of the author's own, or a heading's label
    (f"Water comes from two wells (Source 1) and (Source 2). Attach [Document 1]. {_BRIDGE} [1].\n\n"
     "## References\n\n[1] Wuhan bridge https://b.example/bridge\n",
     "(Source 1) and (Source 2). Attach [Document 1].", ""),
    (f"## [ref1] Intro\n\n{_BRIDGE} [ref1].\n\n## References\n\n[ref1] Wuhan bridge https://b.example/bridge\n",
     "## [ref1] Intro", f"{_BRIDGE} [ref1]"),
    ("【资料1】市场规模：2024年销量达到1286.6万辆。\n【资料2】增长率：同比增长35.5%。\n",
     "【资料1】市场规模", ""),
    # what the author wrapped around a labelled marker goes with it
    (f"{_BRIDGE} (see [ref1]).\n\n## References\n\n[ref1] Wuhan bridge https://b.example/bridge\n",
     f"{_BRIDGE}", "(see"),
    # a list labelled in parentheses resolves the body's "(ref. 2)"
    (f"{_BRIDGE} (ref. 2).\n\n## References\n\n(ref. 1) Car sales https://a.example/car\n"
     "(ref. 2) Wuhan bridge https://b.example/bridge\n", "[1]", "(ref. 2)"),
    # the halves of a link; a full reference link whose label only the cut list defines is the
    # author's citation of that url
    (f"{_BRIDGE} [1](ref. 4).", "[1](ref. 4)", ""),
    ("Exports of cars rose to 4.91 million units in 2023. The details are on the [bridge page][ref1].\n\n"
     "## References\n\n[ref1]: https://b.example/bridge\n", "the [bridge page]", "[ref1]"),
    # a marker after a bracket that is no link ("[PDF][2]", no "[PDF]" or "[2]" defined) cites
    (f"{_BRIDGE} [PDF][2].\n\n## References\n\n[1] Car sales https://a.example/car\n"
     "[2] Wuhan bridge https://b.example/bridge\n", f"{_BRIDGE} [PDF].[1]", "[PDF][2]"),
    # a title with a bracket of its own is still a title: its line's label is no citation
    ("[1] Exports (cars) [units]: Exports of cars rose to 4.91 million units in 2023.\n"
     f"[2] Bridge [history]: {_BRIDGE}.\n\n## References\n\n[1] Car sales https://a.example/car\n"
     "[2] Wuhan bridge https://b.example/bridge\n", "[2] Bridge [history]:", ""),
    # a full-width parenthesis after a bracket is no link's half
    (f"{_BRIDGE}，见[表1]（[2]）。\n\n## References\n\n[1] Car sales https://a.example/car\n"
     "[2] Wuhan bridge https://b.example/bridge\n", "见[表1]", "（[2]）"),
    # a plain marker in parentheses after a bracket is the author's citation, not a link's half
    (f"{_BRIDGE} [PDF]([2], [1]).\n\n## References\n\n[1] Car sales https://a.example/car\n"
     "[2] Wuhan bridge https://b.example/bridge\n", f"{_BRIDGE} [PDF]", "([2], [1])"),
    # a wrapped marker opening a line with a link later on is a citation, not a list entry's label
    ("Intro.\n\n（[2]） Exports of cars rose to 4.91 million units in 2023, see [the data](https://a.example/car)."
     "\n\n## References\n\n[1] Wuhan bridge https://b.example/bridge\n[2] Car sales https://a.example/car\n",
     "Exports of cars", "（[2]）"),
    # markers and a list typed with a space inside the brackets resolve as "[2]" and "[2] …" do
    ("Exports of cars rose to 4.91 million units in 2023 [ 2 ]. The Wuhan Yangtze River Bridge opened to "
     "traffic in 1957 [ 1 ].\n\n## References\n\n[ 1 ] Wuhan bridge https://b.example/bridge\n"
     "[ 2 ] Car sales https://a.example/car\n", "in 2023 [1]. The Wuhan", "[ 2 ]"),
    ("Exports of cars rose to 4.91 million units in 2023 [ 2 ].\n\n[ 1 ] Wuhan bridge https://b.example/bridge\n"
     "[ 2 ] Car sales https://a.example/car\n", "in 2023 [1].", "[ 2 ]"),
    # a run of numbered steps stays one whether or not the new list gives its first numbers (the
    # trace's own output, traced again, has a list of one entry), spaced or not
    (f"{_BRIDGE}.\n\nTo export the data:\n\n[1] Open the dashboard.\n[2] Export the table as CSV.\n"
     "[3] Upload it to the shared drive.\n", "[1] Open the dashboard.\n[2] Export", ""),
    (f"{_BRIDGE}.\n\nTo export the data:\n\n[ 1 ] Open the dashboard.\n[ 2 ] Export the table as CSV.\n",
     "[ 1 ] Open the dashboard.\n[ 2 ] Export", ""),
    ("2024年新能源汽车销量达到1286.6万辆。\n\n[ 1 ] 市场规模：继续扩大\n[ 2 ] 增长率：保持稳定\n",
     "[ 1 ] 市场规模：继续扩大\n[ 2 ] 增长率", ""),
    # a line of a label and a URL right after it is an entry of a list not cut, spaced or not
    (f"{_BRIDGE} [3].\n\n[ 1 ] http://iea.example/ev-outlook\n", "[ 1 ] http://iea.example", ""),
    (f"{_BRIDGE} [3].\n\n[1] http://iea.example/ev-outlook\n", "[1] http://iea.example", ""),
    # a colon inside a marker is no title's
    ("[3] and [Source: 2] report that the Wuhan Yangtze River Bridge opened to traffic in 1957.", "", ""),
])
def test_labelled_forms_trace_as_they_read_and_the_same_twice(report: str, kept: str, gone: str) -> None:
    from tracer import TraceOptions, trace

    for policy in ("keep", "replace"):
        options = TraceOptions(existing=policy)
        once = trace(report, _EN_RECORDS, options)
        assert trace(once.report, _EN_RECORDS, options).report == once.report, (policy, once.report)
        body = once.report.split("\n## References")[0].split("\n## 参考文献")[0]
        assert kept in body, (policy, body)
        assert not gone or gone not in body, (policy, body)


_SOURCE_LIST = ("\n\n## Sources\n\nSource 1: Car sales https://a.example/car\n"
                "Source 2: Wuhan bridge https://b.example/bridge\n")


@pytest.mark.parametrize(("text", "expected"), [
    (f"{_BRIDGE} (Source 2).{_SOURCE_LIST}", [("(Source 2)", (2,))]),
    (f"{_BRIDGE} (Sources 1 and 2).{_SOURCE_LIST}", [("(Sources 1 and 2)", (1, 2))]),
    (f"{_BRIDGE} (source 2, source 1).{_SOURCE_LIST}", [("(source 2, source 1)", (2, 1))]),
    ("武汉长江大桥于1957年通车（来源2）。\n\n## 参考文献\n\n来源1：汽车 https://a.example/car\n"
     "来源2：大桥 https://b.example/bridge\n", [("（来源2）", (2,))]),
    (f"{_BRIDGE} (Source 2).\n\n## Sources\n\n- **Source 1.** Car sales https://a.example/car\n"
     "- **Source 2.** Wuhan bridge https://b.example/bridge\n", [("(Source 2)", (2,))]),
    # a number the list does not label, or a list that labels none: the author's own name of a thing
    (f"Water comes from two wells (Source 7) and (Source 2).{_SOURCE_LIST}", [("(Source 2)", (2,))]),
    ("Water comes from two wells (Source 1) and (Source 2).\n\n## References\n\n"
     "[1] Car sales https://a.example/car\n[2] Wuhan bridge https://b.example/bridge\n", []),
    # the colon form is a marker as before, list or not
    (f"{_BRIDGE} (Source: 2).{_SOURCE_LIST}", [("(Source: 2)", (2,))]),
])
def test_a_source_note_in_parentheses_cites_where_the_list_labels_its_entries_so(
        text: str, expected: list[tuple[str, tuple[int, ...]]]) -> None:
    """"(Source 2)" may name a well; under a list of "Source 1: …, Source 2: …" it is the author's
    citation of entry 2."""
    assert found(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("In Python, use list[0] to read it, or M[0][1].", []),
    # apart from a word it is an old citation numbered from 0, removed as it resolves to nothing
    ("Sales rose [0].", [("[0]", (0,))]),
    ("Sales rose in 2023 [1][0].", [("[1]", (1,)), ("[0]", (0,))]),
    ("销量达到238个【0】。", [("【0】", (0,))]),
    # a list numbered from 0 lists it
    ("Sales rose [0].\n\n## References\n\n[0] Car sales https://a.example/car\n", [("[0]", (0,))]),
])
def test_a_zero_in_brackets_after_a_word_is_an_index_unless_the_list_numbers_from_zero(
        text: str, expected: list[tuple[str, tuple[int, ...]]]) -> None:
    assert found(text) == expected


def test_a_pandoc_citation_is_a_marker_naming_records_by_id() -> None:
    """Pandoc, Quarto and R Markdown cite by key; before, "[@ehpa2023]" stayed in the claim, where
    "ehpa2023" read as a figure the record does not state."""
    text = ("Norway leads Europe [@ehpa2023]. Germany follows [see @iea2024, p. 12; -@bmwk2024]. "
            "Write to [me@x.com] or [contact: a@b.org]. Thanks to [@alice] and [@types/react].")
    assert [(text[m.start:m.end], m.ids) for m in find(text)] == [
        ("[@ehpa2023]", ("ehpa2023",)), ("[see @iea2024, p. 12; -@bmwk2024]", ("iea2024", "bmwk2024"))]


def test_a_bracketed_number_an_html_link_wraps_is_a_marker_citing_its_url() -> None:
    """Pages copied as HTML cite so (Wikipedia's '<sup><a href="#cite_note-2">[2]</a></sup>'); before,
    the link stayed, and the new marker went after it: '[2]</a>[2]'."""
    text = ('Solar grew in 2023.<sup><a href="https://www.iea.org/r">[2]</a></sup> Prices rose '
            '<a class="x" href="#cite_note-3">[3]</a>. See <a href="https://a.org/2023">page 4</a>, '
            'and <a href="#fig2">[2]</a> for the chart.')
    got = [(text[m.start:m.end], m.numbers, m.urls) for m in find(text)]
    assert [(raw, urls) for raw, _, urls in got] == [
        ('<sup><a href="https://www.iea.org/r">[2]</a></sup>', ("https://www.iea.org/r",)),
        ('<a class="x" href="#cite_note-3">[3]</a>', ("#cite_note-3",))]
    assert got[1][1] == (3,)     # an anchor into the page: the cut list's entry 3
    assert got[0][1][0] < 0      # a URL: the record with that URL, under a number of its own


@pytest.mark.parametrize(("text", "expected"), [
    # an index in prose: after a dotted or underscored name, or before "=", "/", "(", "." and a word
    ("Here my_list[2] holds it, and ids[3]=4 sets it.", []),
    ("Read rows[2].name or f[1](x) there.", []),
    # a notebook's prompts
    ("In [4]:\n\n```python\nx = 1\n```\n\nOut[4]: 1.1\n", []),
    # brackets inside a bare URL are the URL's
    ("See https://x.org/a?ids[1]=2&ids[2]=3 and https://example.org/data[1]/table.csv for more.", []),
    # a marker glued to a word is still one, before punctuation, a space or another marker
    ("Mercury is small[1]. NASA[2], and ESA[3][4] say so. See https://x.org[5]. 根据IEA[6]的数据。",
     [("[1]", (1,)), ("[2]", (2,)), ("[3]", (3,)), ("[4]", (4,)), ("[5]", (5,)), ("[6]", (6,))]),
    # ... after emphasis or a name with an underscore, before "/" or a capital after a stop, and after
    # a URL before a dash (a differential review found each taken for an index or the URL's)
    ("In _Nature_[2] and __Reuters__[1], IEA_2023[3] and Reuters[4]/Bloomberg[5] said units[6].China "
     "see https://www.reuters.com/a[7]—the main source",
     [("[2]", (2,)), ("[1]", (1,)), ("[3]", (3,)), ("[4]", (4,)), ("[5]", (5,)), ("[6]", (6,)),
      ("[7]", (7,))]),
])
def test_an_index_in_prose_or_a_url_is_no_marker(
        text: str, expected: list[tuple[str, tuple[int, ...]]]) -> None:
    assert found(text) == expected


_WELLS = [*_EN_RECORDS, {"url": "https://c.example/well", "title": "Groundwater survey",
                         "content": "The deepest well in the valley reaches 40 metres."}]
_ZH_SOURCE_LIST = ("\n\n## 参考文献\n\n来源1：Car sales https://a.example/car\n"
                   "来源2：Wuhan bridge https://b.example/bridge\n")


@pytest.mark.parametrize(("report", "body"), [
    # a word of its sentence stays where it stands, renumbered, as "[2]" would
    (f"According to (Source 2), the Wuhan Yangtze River Bridge opened to traffic in 1957.{_SOURCE_LIST}",
     "According to [1], the Wuhan Yangtze River Bridge opened to traffic in 1957."),
    (f"The bridge is old. (Source 2) reports that the Wuhan Yangtze River Bridge opened to traffic in 1957."
     f"{_SOURCE_LIST}",
     "The bridge is old. [1] reports that the Wuhan Yangtze River Bridge opened to traffic in 1957."),
    (f"据（来源2）所述，武汉长江大桥于1957年通车。{_ZH_SOURCE_LIST}",
     "据[1]所述，武汉长江大桥于1957年通车。"),
    # a label stays as written: a heading's, a run of titled lines', a numbering column's
    (f"## (Source 1) Overview\n\n{_BRIDGE}.{_SOURCE_LIST}", f"## (Source 1) Overview\n\n{_BRIDGE}[1]."),
    (f"{_BRIDGE}.\n\n(Source 1) Municipal well: 40 m deep.\n(Source 2) River intake: 10 m deep."
     f"{_SOURCE_LIST}",
     f"{_BRIDGE}[1].\n\n(Source 1) Municipal well: 40 m deep.\n(Source 2) River intake: 10 m deep."),
    (f"{_BRIDGE}.\n\n| # | Site |\n|---|---|\n| (Source 1) | Municipal well |{_SOURCE_LIST}",
     f"{_BRIDGE}[1].\n\n| # | Site |\n|---|---|\n| (Source 1) | Municipal well |"),
    # with its "<sup>" tags, or a cue word's parenthesis, as "(see [2])"
    (f"{_BRIDGE}<sup>(Source 2)</sup>.{_SOURCE_LIST}", f"{_BRIDGE}[1]."),
    (f"{_BRIDGE} (see (Source 2)).{_SOURCE_LIST}", f"{_BRIDGE} [1]."),
    (f"{_BRIDGE} (see (ref. 2)).\n\n## References\n\n(ref. 1) Car sales https://a.example/car\n"
     "(ref. 2) Wuhan bridge https://b.example/bridge\n", f"{_BRIDGE} [1]."),
    # ... after a full stop too, where the sentence ends before the whole of it
    (f"{_BRIDGE}. (see (Source 2)) Exports of cars rose to 4.91 million units in 2023.{_SOURCE_LIST}",
     f"{_BRIDGE}. [1] Exports of cars rose to 4.91 million units in 2023[2]."),
    (f"{_BRIDGE}.<sup>(Source 2)</sup> Exports of cars rose to 4.91 million units in 2023.{_SOURCE_LIST}",
     f"{_BRIDGE}[1]. Exports of cars rose to 4.91 million units in 2023[2]."),
    # a table's source column: the note is no value of the row
    (f"| No. | Fact | Source |\n|---|---|---|\n| 1 | Exports of cars rose to 4.91 million units in 2023. "
     f"| (Source 1) |{_SOURCE_LIST}",
     "| No. | Fact | Source |\n|---|---|---|\n"
     "| 1 | Exports of cars rose to 4.91 million units in 2023. | [1] |"),
    # labelled parentheses opening untitled list items cite (and resolve to nothing here: removed)
    (f"- (ref. 1) Exports of cars rose to 4.91 million units in 2023.\n- (ref. 2) {_BRIDGE}.",
     f"-  Exports of cars rose to 4.91 million units in 2023[1].\n-  {_BRIDGE}[2]."),
    # a number the list does not give stays text, and its sentence ends before it as on a second trace
    (f"{_BRIDGE}. (Source 4) found that exports of cars rose to 4.91 million units in 2023.{_SOURCE_LIST}",
     f"{_BRIDGE}[1]. (Source 4) found that exports of cars rose to 4.91 million units in 2023[2]."),
    # no list that labels entries: a name, and the sentence after it is its own
    (f"{_BRIDGE}. (Source 1) is the deepest well in the valley, reaching 40 metres.",
     f"{_BRIDGE}[1]. (Source 1) is the deepest well in the valley, reaching 40 metres."),
    # "Source 1: the municipal well" describes a source of water: no references list
    ("The town draws its water from two sources (Source 1) and (Source 2). "
     f"{_BRIDGE}.\n\n## Sources\n\nSource 1: the municipal well near the school\n"
     "Source 2: the river intake below the bridge\n",
     "The town draws its water from two sources (Source 1) and (Source 2). "
     f"{_BRIDGE}[1].\n\n## Sources\n\nSource 1: the municipal well near the school\n"
     "Source 2: the river intake below the bridge"),
])
def test_source_notes_read_as_words_labels_and_names_like_bracketed_markers(report: str, body: str) -> None:
    from tracer import TraceOptions, trace

    once = trace(report, _WELLS, TraceOptions(existing="keep"))
    assert once.report.split("\n\n## References")[0].split("\n\n## 参考文献")[0].rstrip("\n") == body
    assert trace(once.report, _WELLS, TraceOptions(existing="keep")).report == once.report


def test_a_sentence_with_only_a_source_note_needs_no_citation() -> None:
    from tracer import TraceOptions, trace

    result = trace(f"Details vary widely (Source 2).{_SOURCE_LIST}", _WELLS, TraceOptions(existing="replace"))
    assert not result.unsupported and not result.citations


def test_entries_labelled_without_brackets_resolve() -> None:
    entries = parse_reference_entries(
        "Source 1: Car sales https://a.example/car\n- **Source 2.** Wuhan bridge https://b.example/b\n"
        "来源3：国家统计局 https://stats.example/x\nRef 4 - Some title\nSource 5.5 percent of it\n"
        "1. *Source 6:* Webb https://c.example/w\n")
    assert entries == {1: (["https://a.example/car"], ["Car sales"]),
                       2: (["https://b.example/b"], ["Wuhan bridge"]),
                       3: (["https://stats.example/x"], ["国家统计局"]), 4: ([], ["Some title"]),
                       6: (["https://c.example/w"], ["Webb"])}


def test_a_source_note_is_replaced_by_the_new_marker_and_traces_the_same_twice() -> None:
    from tracer import TraceOptions, trace

    records = [*_EN_RECORDS, *({"url": f"https://w.example/{i}", "title": f"Weather {i}",
                                "content": f"Rain is expected in the afternoon, with winds of {i + 10} km/h."}
                               for i in range(8))]
    report = (f"{_BRIDGE} (Source 2). Exports of cars rose to 4.91 million units in 2023 (Source 1)."
              f"{_SOURCE_LIST}")
    for policy in ("keep", "replace"):
        once = trace(report, records, TraceOptions(existing=policy))
        body = once.report.split("\n## References")[0]
        assert "Source" not in body, (policy, once.report)
        assert [[s.url for s in c.sources] for c in once.citations] == [
            ["https://b.example/bridge"], ["https://a.example/car"]], policy
        assert trace(once.report, records, TraceOptions(existing=policy)).report == once.report, policy


def test_a_number_two_lists_give_under_a_label_and_without_resolves_to_neither() -> None:
    """"[1] Car sales" and "[ref1] Hubble": which one a "[1]" or a "[ref1]" means is unknown, so
    neither is the author's citation of the other's source."""
    entries = parse_reference_entries(
        "[1] Car sales https://a.example/car\n\n## Sources\n\n"
        "[ref1] Hubble https://c.example/hubble\n[ref2] Bridge https://b.example/b\n")
    assert sorted(entries) == [2]
    entries = parse_reference_entries(
        "[1] Car sales https://a.example/car\n\n| # | Source |\n|---|---|\n"
        "| [ref1] | https://c.example/h |\n")
    assert sorted(entries) == []


def test_a_labelled_number_that_resolves_to_no_record_goes_as_a_bare_one_does() -> None:
    """Left in place, "(ref. 3)" would resolve on the next trace to the new list's [3], another
    source: an old citation that resolves to no record is removed, with a warning, as "[3]" is."""
    from tracer import TraceOptions, trace

    report = (f"{_BRIDGE} (ref. 3). Exports of cars rose to 4.91 million units in 2023 (ref. 1).\n\n"
              "## References\n\n(ref. 1) Car sales https://a.example/car\n")
    for policy in ("keep", "replace"):
        once = trace(report, _EN_RECORDS, TraceOptions(existing=policy))
        assert "(ref. 3)" not in once.report and "(ref. 1)" not in once.report, once.report
        if policy == "keep":   # under replace every old marker goes
            assert any("'(ref. 3)'" in w and "does not resolve" in w for w in once.warnings), once.warnings
        assert trace(once.report, _EN_RECORDS, TraceOptions(existing=policy)).report == once.report


def test_a_references_table_labelled_with_words_resolves_its_markers() -> None:
    report = (f"{_BRIDGE} [ref2].\n\n## References\n\n| # | Source | URL |\n|---|---|---|\n"
              "| [ref1] | Car sales | https://a.example/car |\n"
              "| [ref2] | Wuhan bridge | https://b.example/bridge |\n")
    layout = scan_markdown(report)
    recs = [Record(index=i, **r) for i, r in enumerate(_EN_RECORDS)]
    assert resolve_existing(find(report), report[layout.body_end:], recs) == {2: 1}
