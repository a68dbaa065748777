"""Property tests of the whole pipeline over generated markdown: the body is never edited.

For any report (fences, tables, lists, links, CJK, emoji, CRLF, old markers, a trailing
references section) traced against records built from some of its sentences:
- removing every citation marker from the output body and from the input body gives the
  same string (the new references section is the only addition);
- every marker number in the output body has a reference entry;
- references are numbered 1..n without gaps, in order of first appearance.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracer import TraceOptions, trace
from tracer.existing import MARKER_RE, find_existing_markers, strip_markers
from tracer.markdown import scan_markdown
from tracer.options import ExistingPolicy, Placement
from tracer.segment import segment_sentences

EN_FACTS = [
    "Revenue rose 5.2% to $30.8 billion in 2023.",
    "The U.S. Dept. of Labor reported 3.9% unemployment in May.",
    "Apple Inc. sold 231 million iPhones in fiscal 2023.",
    "J. K. Rowling published the first book in 1997.",
    'The CEO said "growth will continue." in an interview.',
    "Version v1.2.3 fixed 42 bugs, e.g. the login crash.",
    "Tesla delivered 1.81 million vehicles in 2023 🚗.",
]
ZH_FACTS = [
    "2023年全国GDP增长5.2%。",
    "他说：“我们会赢。”",
    "据统计，该公司营收达到308亿美元！",
    "研究显示，睡眠不足会增加患病风险；",
    "第三季度销量同比增长12%……",
    "新能源汽车渗透率超过30%🚀。",
]
OLD_MARKERS = ["[1]", "[2]", "[1, 2]", "[1-3]", "【1】", "[^1]", "[citation:2]", "[[1]](https://a.example.com/x)",
               "<sup>[2]</sup>", "[9]", "[source_tracer_result][Alpha](https://a.example.com/x)"]


@st.composite
def sentence(draw: st.DrawFn) -> str:
    fact = draw(st.sampled_from(EN_FACTS + ZH_FACTS))
    extra = draw(
        st.sampled_from(
            ["", " See `code [1]. x`.", " Read [the docs](https://docs.example.com/a_(b)).",
             " Visit https://example.com/p?q=1.", " Math $x_1$ holds.", " 😀"]
        )
    )
    if draw(st.booleans()):
        fact = fact + draw(st.sampled_from(OLD_MARKERS))
    return fact + extra


@st.composite
def block(draw: st.DrawFn) -> str:
    kinds = ["para", "para", "para", "list", "fence", "table", "heading", "quote", "html"]
    kind = draw(st.sampled_from(kinds))
    if kind == "para":
        sents = draw(st.lists(sentence(), min_size=1, max_size=4))
        sep = draw(st.sampled_from([" ", "\n", ""]))
        return sep.join(sents)
    if kind == "list":
        items = draw(st.lists(sentence(), min_size=1, max_size=3))
        bullet = draw(st.sampled_from(["- ", "* ", "1. ", "- [x] "]))
        return "\n".join(bullet + it for it in items)
    if kind == "fence":
        fence = draw(st.sampled_from(["```", "~~~"]))
        body = draw(
            st.sampled_from(["## References\n[1] https://a.example.com/x", "x = a[1]. y = 2.", "参考文献"])
        )
        closed = draw(st.booleans())
        return f"{fence}python\n{body}\n" + (fence if closed else "")
    if kind == "table":
        cell = draw(st.sampled_from(EN_FACTS + ZH_FACTS))
        return f"| name | value |\n|---|---:|\n| {cell} | 5.2% |"
    if kind == "heading":
        level = draw(st.integers(1, 4))
        titles = ["Overview", "概述", "Sources of growth", "Results 2023", "**Key points**"]
        title = draw(st.sampled_from(titles))
        return "#" * level + " " + title
    if kind == "quote":
        return "> " + draw(sentence())
    return "<div>\n" + draw(sentence()) + "\n</div>"


REFS_SECTIONS = [
    "",
    "\n\n## References\n[1] Alpha https://a.example.com/x\n[2] Beta https://b.example.com/y\n",
    "\n\n**参考文献：**\n1. [Alpha](https://a.example.com/x)\n2. [Beta](https://b.example.com/y)\n",
    "\n\n## Sources\n\n[^1]: https://a.example.com/x\n",
]


@st.composite
def case(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]], TraceOptions]:
    blocks = draw(st.lists(block(), min_size=1, max_size=6))
    report = "\n\n".join(blocks) + draw(st.sampled_from(REFS_SECTIONS))
    if draw(st.booleans()):
        report = report.replace("\n", "\r\n")
    facts = draw(st.lists(st.sampled_from(EN_FACTS + ZH_FACTS), min_size=0, max_size=5, unique=True))
    records: list[dict[str, Any]] = [
        {"url": "https://a.example.com/x", "title": "Alpha", "content": " ".join(facts[:2]) or "nothing"},
        {"url": "https://b.example.com/y?utm_source=z", "title": "Beta",
         "content": " ".join(facts[2:]) or "none"},
        {"url": "https://a.example.com/x/", "title": "Alpha copy", "content": " ".join(facts[1:3]) or "zero"},
    ]
    options = TraceOptions(
        existing=draw(st.sampled_from(list(ExistingPolicy))),
        placement=draw(st.sampled_from(list(Placement))),
    )
    return report, records, options


def body_of(text: str) -> str:
    return text[: scan_markdown(text).body_end]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case())
def test_trace_is_lossless_and_numbers_are_sound(c: tuple[str, list[dict[str, Any]], TraceOptions]) -> None:
    report, records, options = c
    result = trace(report, records, options)
    in_body = report[: scan_markdown(report).body_end]
    out_layout = scan_markdown(result.report)
    out_body = result.report[: out_layout.body_end]

    # 1. the body is never edited: only markers differ, the new section is the only addition
    assert strip_markers(out_body).startswith(strip_markers(in_body))
    # (after an unclosed code fence the renderer closes it before appending its section)
    assert strip_markers(out_body)[len(strip_markers(in_body)):].strip() in ("", "```", "~~~")
    if not result.references:
        assert result.report == report
    else:
        assert result.removed_references == report[len(in_body):]

    # 2. every marker in the output body has a reference entry
    numbers = {r.number for r in result.references}
    out_sents = segment_sentences(result.report, out_layout)
    out_markers = find_existing_markers(result.report, out_layout, out_sents)
    if result.references:
        for m in out_markers:
            assert set(m.numbers) <= numbers, (result.report[m.start:m.end], numbers)

    # 3. references numbered 1..n gap-free, by first appearance in the body
    assert sorted(numbers) == list(range(1, len(numbers) + 1))
    assert [r.number for r in result.references] == sorted(numbers)
    first_seen: list[int] = []
    for m in out_markers:
        for n in m.numbers:
            if n not in first_seen:
                first_seen.append(n)
    if result.references:
        assert first_seen == sorted(first_seen)
        assert set(first_seen) == numbers


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab .。!?[]1^`$|#-*\n\r>()：“”😀")), max_size=200))
def test_segments_are_well_formed_on_arbitrary_text(text: str) -> None:
    layout = scan_markdown(text)
    assert 0 <= layout.body_end <= len(text)
    sents = segment_sentences(text, layout)
    prev_end = 0
    for i, s in enumerate(sents):
        assert s.id == i
        assert prev_end <= s.start < s.end <= layout.body_end
        assert text[s.start:s.end] == s.text
        assert s.text == s.text.strip()
        assert MARKER_RE.match(s.text) is None
        prev_end = s.end
