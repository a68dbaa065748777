"""Render stage: markers at span ends, numbering, existing markers, references, styles."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tracer.errors import InvalidInputError
from tracer.existing import unmarked
from tracer.markdown import scan_markdown
from tracer.models import Candidate, ExistingMarker, Layout, Record, Sentence, Span, Support
from tracer.options import ExistingPolicy, Mode, Placement, TraceOptions
from tracer.render import STYLES, Rendered, marker_regex, render_report, strip_emitted_markers


def rec(i: int, url: str = "", title: str = "", content: str = "", key: str = "", **kw: str) -> Record:
    url = url or f"https://site{i}.example/page"
    return Record(index=i, url=url, title=title or f"Title {i}", content=content or f"content of record {i}",
                  source_key=key or url, **kw)


def cand(sid: int, r: int, score: float = 0.9, match: str = "exact", span: Span = (0, 7)) -> Candidate:
    return Candidate(sentence=sid, record=r, passage=r, support=Support(score, match, span[0], span[1]))


@dataclass
class Doc:
    """A report built from sentence pieces, so every span is known by construction."""

    report: str
    sentences: list[Sentence]
    layout: Layout


def doc(pieces: list[str], sep: str = " ", tail: str = "", refs_section: str = "",
        protected: list[tuple[int, str]] | None = None) -> Doc:
    text = ""
    sentences = []
    starts = []
    for i, p in enumerate(pieces):
        if i:
            text += sep
        starts.append(len(text))
        sentences.append(Sentence(i, len(text), len(text) + len(p), p))
        text += p
    text += tail
    body_end = len(text)
    prot: list[Span] = []
    for idx, sub in protected or []:  # (sentence index, substring) -> span inside that sentence
        off = pieces[idx].index(sub)
        prot.append((starts[idx] + off, starts[idx] + off + len(sub)))
    report = text + refs_section
    layout = Layout(body_end=body_end, references=(body_end, len(report)) if refs_section else None,
                    protected=tuple(sorted(prot)))
    return Doc(report, sentences, layout)


def run(d: Doc, chosen: dict[int, list[Candidate]], recs: list[Record], lang: str = "en",
        markers: list[ExistingMarker] | None = None, resolved: dict[int, int | None] | None = None,
        **opts: object) -> Rendered:
    return render_report(d.report, d.layout, d.sentences, chosen, markers or [], resolved or {}, recs,
                         TraceOptions().with_(**opts), lang)


def body_of(out: str, heading: str = "## References") -> str:
    return out[: out.rindex(heading)]


# ------------------------------------------------------------------ basics

def test_numeric_marker_before_terminal_punctuation_and_reference_list() -> None:
    d = doc(["Revenue grew 45% in 2023.", "Nothing to cite here."])
    out = run(d, {0: [cand(0, 0)]}, [rec(0, title="Annual report")])
    assert out.report == (
        "Revenue grew 45% in 2023[1]. Nothing to cite here.\n\n## References\n\n"
        "[1] [Annual report](https://site0.example/page)\n"
    )
    (c,) = out.citations
    assert (c.start, c.end, c.sentence) == (0, 25, "Revenue grew 45% in 2023.")
    (src,) = c.sources
    assert (src.number, src.record_index, src.score, src.match) == (1, 0, 0.9, "exact")
    assert (src.evidence, src.evidence_start, src.evidence_end) == ("content", 0, 7)
    (ref,) = out.references
    assert (ref.number, ref.url, ref.title) == (1, "https://site0.example/page", "Annual report")
    assert ref.is_link


def test_nothing_cited_returns_report_byte_identical() -> None:
    d = doc(["One fact.", "Two facts."], tail="\r\n", refs_section="## Sources\r\n- x\r\n")
    out = run(d, {}, [rec(0)])
    assert out.report == d.report
    assert out.citations == () and out.references == ()


def test_placement_after_punctuation() -> None:
    d = doc(["A fact.", "Another one!"])
    out = run(d, {0: [cand(0, 0)], 1: [cand(1, 1)]}, [rec(0), rec(1)], placement=Placement.AFTER_PUNCT)
    assert body_of(out.report) == "A fact.[1] Another one![2]\n\n"


def test_marker_goes_after_closing_quotes_and_brackets() -> None:
    d = doc(['He said "it works".', "研究对象（PTSD）。", 'She wrote "done."'], sep="")
    out = run(d, {0: [cand(0, 0)], 1: [cand(1, 1)], 2: [cand(2, 2)]}, [rec(0), rec(1), rec(2)], lang="zh")
    expected = 'He said "it works"[1].研究对象（PTSD）[2]。She wrote "done."[3]\n\n'
    assert body_of(out.report, "## 参考文献") == expected


def test_several_sources_one_number_per_canonical_source_first_appearance() -> None:
    recs = [rec(0), rec(1, url="https://site0.example/page?utm_source=x", key="https://site0.example/page"),
            rec(2)]
    d = doc(["First claim.", "Second claim.", "Third claim."])
    chosen = {0: [cand(0, 2)], 1: [cand(1, 0), cand(1, 2)], 2: [cand(2, 1)]}
    out = run(d, chosen, recs)
    assert body_of(out.report) == "First claim[1]. Second claim[1][2]. Third claim[2].\n\n"
    assert [r.number for r in out.references] == [1, 2]
    assert [r.record_index for r in out.references] == [2, 0]
    # a chunk of the same page found by a later sentence keeps the number (and its own record index)
    assert [s.record_index for s in out.citations[2].sources] == [1]


def test_max_sources_caps_new_sources() -> None:
    d = doc(["Claim."])
    out = run(d, {0: [cand(0, i) for i in range(5)]}, [rec(i) for i in range(5)], max_sources=2)
    assert body_of(out.report) == "Claim[1][2].\n\n"


def test_protected_region_is_never_split() -> None:
    d = doc(["Run `make test.`", "See [the docs](https://d.example/x)."],
            protected=[(0, "`make test.`"), (1, "[the docs](https://d.example/x)")])
    out = run(d, {0: [cand(0, 0)], 1: [cand(1, 1)]}, [rec(0), rec(1)])
    assert body_of(out.report) == "Run `make test.`[1] See [the docs](https://d.example/x)[2].\n\n"


def test_marker_never_forms_an_inline_link() -> None:
    # the sentence has no terminal punctuation and is followed directly by "(": "[1](note)" would be a link
    d = doc(["A fact", "(note)"], sep="")
    out = run(d, {0: [cand(0, 0)]}, [rec(0)])
    assert out.report == d.report  # no safe spot: the citation is left out, with a warning
    assert out.citations == () and any("left out" in w for w in out.warnings)
    out = run(d, {0: [cand(0, 0)]}, [rec(0)], style="superscript")
    assert out.report.startswith("A fact<sup>[1]</sup>(note)")
    # "[text](url)" that the scan did not mark (brackets nested too deep): no style splits it
    d = doc(["[A fact]", "(https://x.example/a)"], sep="")
    for style in ("superscript", "numeric"):
        out = run(d, {0: [cand(0, 0)]}, [rec(0)], style=style)
        assert out.report == d.report and any("left out" in w for w in out.warnings)


_ONE = {"numeric": "[1]", "footnote": "[^1]", "citation": "[citation:1]"}


@pytest.mark.parametrize("style", ["numeric", "footnote", "citation"])
def test_marker_never_turns_a_following_shortcut_reference_into_its_own_link(style: str) -> None:
    # "[1][agency]" would be a full reference link with the text "1": the marker goes elsewhere
    d = doc(["A fact.", "[the  Agency] agreed."], sep="", tail="\n\n[The Agency]: https://x.example/a\n")
    d = Doc(d.report, d.sentences, scan_markdown(d.report))
    out = run(d, {0: [cand(0, 0)]}, [rec(0)], style=style, placement="after")
    assert out.report.startswith("A fact" + _ONE[style] + ".[the  Agency] agreed.")
    plain = doc(["A fact.", "[not defined] here."], sep="")
    plain = Doc(plain.report, plain.sentences, scan_markdown(plain.report))
    out = run(plain, {0: [cand(0, 0)]}, [rec(0)], style=style, placement="after")
    assert out.report.startswith("A fact." + _ONE[style] + "[not defined] here.")


@pytest.mark.parametrize("year", ["[2020]", "【2023】"])
def test_no_marker_goes_next_to_a_bracketed_year(year: str) -> None:
    # "[1][2020]" reads as two markers, so a second trace would delete the author's year
    d = doc(["Revenue rose in 2023."], tail=year + "\n")
    out = run(d, {0: [cand(0, 0)]}, [rec(0)], placement="after")
    assert out.report.startswith("Revenue rose in 2023[1]." + year)


def test_no_marker_goes_between_a_footnote_reference_and_a_colon() -> None:
    d = doc(["Prices rose 18% in 2022 [^1]:"], tail="\n\nNext.\n")
    out = run(d, {0: [cand(0, 0)]}, [rec(0)], style="superscript")
    assert out.report.startswith("Prices rose 18% in 2022 <sup>[1]</sup>[^1]:\n")


@pytest.mark.parametrize(("sentence", "cited"), [
    ("产业规模突破3800亿元[^1]。", "产业规模突破3800亿元[1][^1]。"),
    ("Revenue reached $96.8 billion[^note][^2].", "Revenue reached $96.8 billion[1][^note][^2]."),
])
def test_a_marker_goes_before_the_authors_footnote_references_ending_a_sentence(sentence: str,
                                                                                cited: str) -> None:
    # "[^1]" + "[1]" would read as a link's halves, and after the stop the marker would open the
    # next sentence ("。[1]上海是…"): before the footnote reference
    d = doc([sentence, "Next sentence."])
    out = run(d, {0: [cand(0, 0)]}, [rec(0)])
    assert body_of(out.report).startswith(cited + " Next sentence.")


@pytest.mark.parametrize("sentence", ["Output grew in the U.S.", "The merger was led by a Ph.D.",
                                      "The survey is by Wang et al.", "It was led by Martin Luther King Jr."])
def test_abbreviation_at_sentence_end_keeps_marker_outside(sentence: str) -> None:
    d = doc([sentence])
    out = run(d, {0: [cand(0, 0)]}, [rec(0)])
    assert body_of(out.report).startswith(sentence + "[1]")



# ------------------------------------------------------------------ references section

@pytest.mark.parametrize(
    ("tail", "sep"),
    [("", "\n\n"), ("\n", "\n"), ("\n\n", ""), ("\n\n\n", ""), ("  ", "\n\n"), ("\n\n  ", "\n")],
)
def test_exactly_one_blank_line_before_heading_by_appending_only(tail: str, sep: str) -> None:
    d = doc(["A fact."], tail=tail)
    out = run(d, {0: [cand(0, 0)]}, [rec(0)])
    assert out.report.startswith("A fact[1]." + tail + sep + "## References\n")


def test_crlf_report_gets_crlf_section_and_unclosed_fence_is_closed() -> None:
    d = doc(["A fact."], tail="\r\n")
    out = run(d, {0: [cand(0, 0)]}, [rec(0)])
    assert out.report == "A fact[1].\r\n\r\n## References\r\n\r\n[1] [Title 0](https://site0.example/page)\r\n"
    d = doc(["A fact."], tail="\n\n```python\nx = 1\n")
    d = Doc(d.report, d.sentences, scan_markdown(d.report))  # the real scan marks the open fence
    out = run(d, {0: [cand(0, 0)]}, [rec(0)])
    assert "x = 1\n```\n\n## References" in out.report
    nested = doc(["A fact."], tail="\n\n- item\n\n      ```\n      code\n")  # fence indented in a list
    nested = Doc(nested.report, nested.sentences, scan_markdown(nested.report))
    assert "      code\n      ```\n\n## References" in run(nested, {0: [cand(0, 0)]}, [rec(0)]).report


@pytest.mark.parametrize(
    ("opener", "closer", "kind"),
    [("<!-- draft", "-->", "HTML comment"), ("<pre>", "</pre>", "<pre> block"),
     ("<script>", "</script>", "<script> block")],
)
def test_an_unclosed_comment_or_raw_html_block_is_closed_before_the_section(
    opener: str, closer: str, kind: str
) -> None:
    # the block runs to the end of the document, so the section would be hidden or print raw
    d = doc(["A fact."], tail=f"\n\n{opener}\nnote\n")
    d = Doc(d.report, d.sentences, scan_markdown(d.report))
    out = run(d, {0: [cand(0, 0)]}, [rec(0)])
    assert f"{opener}\nnote\n{closer}\n\n## References\n" in out.report
    assert any(f"unclosed {kind}; closed it with {closer}" in w for w in out.warnings)
    closed = doc(["A fact."], tail=f"\n\n{opener}\nnote\n{closer}\n")
    closed = Doc(closed.report, closed.sentences, scan_markdown(closed.report))
    out = run(closed, {0: [cand(0, 0)]}, [rec(0)])
    assert f"{closer}\n\n## References" in out.report and f"{closer}\n{closer}" not in out.report
    assert not any("unclosed" in w for w in out.warnings)


def test_heading_by_language_and_override() -> None:
    d = doc(["营收增长。"])
    assert "\n## 参考文献\n" in run(d, {0: [cand(0, 0)]}, [rec(0)], lang="zh").report
    assert "\n## Sources\n" in run(d, {0: [cand(0, 0)]}, [rec(0)], references_heading="Sources").report
    assert "\n### Quellen\n" in run(d, {0: [cand(0, 0)]}, [rec(0)], references_heading="### Quellen").report


def test_references_section_is_cut_and_replaced() -> None:
    d = doc(["A fact."], tail="\n\n", refs_section="## References\n\n1. old entry\n")
    out = run(d, {0: [cand(0, 0)]}, [rec(0)])
    assert "old entry" not in out.report
    assert out.report.count("## References") == 1


def test_hostile_titles_are_escaped_and_only_http_links() -> None:
    recs = [
        rec(0, title="<script>alert(1)</script> [x](javascript:y) *b* `c`\n# H\x00\x07"),
        rec(1, url="javascript:alert(1)", title="JS"),
        rec(2, url="/home/me/notes.md", title="Local notes"),
        Record(3, "https://host.example/a(b)", "", "text", source_key="h"),
    ]
    d = doc(["One.", "Two.", "Three.", "Four."])
    out = run(d, {i: [cand(i, i)] for i in range(4)}, recs)
    section = out.report[out.report.index("## References"):]
    lines = section.splitlines()
    assert len(lines) == 2 + 4
    assert not re.search(r"(?<!\\)[<>]", section) and "\x00" not in section and "\x07" not in section
    assert lines[2] == (
        "[1] [\\<script\\>alert\\(1\\)\\</script\\> \\[x\\]\\(javascript:y\\) \\*b\\* "
        "\\`c\\` \\# H](https://site0.example/page)"
    )
    assert lines[3] == "[2] JS (javascript:alert\\(1\\))"
    assert lines[4] == "[3] Local notes (/home/me/notes.md)"
    assert lines[5] == "[4] [host.example](https://host.example/a%28b%29)"
    assert [r.is_link for r in out.references] == [True, False, False, True]


# ------------------------------------------------------------------ existing markers

def _with_markers(
    text_pieces: list[str], marks: list[tuple[int, str, tuple[int, ...]]]
) -> tuple[Doc, list[ExistingMarker]]:
    """marks: (sentence index, marker text inside that sentence, numbers)."""
    d = doc(text_pieces)
    markers = []
    for sid, m, nums in marks:
        s = d.sentences[sid]
        off = s.start + text_pieces[sid].index(m)
        markers.append(ExistingMarker(off, off + len(m), nums, sentence=sid))
    return d, markers


def test_keep_renumbers_and_merges_existing_with_new() -> None:
    d, markers = _with_markers(["Alpha holds [7].", "Beta holds [2, 9]."],
                               [(0, "[7]", (7,)), (1, "[2, 9]", (2, 9))])
    recs = [rec(0), rec(1), rec(2)]
    out = run(d, {1: [cand(1, 2), cand(1, 0)]}, recs, markers=markers, resolved={7: 1, 2: 0, 9: None})
    assert body_of(out.report) == "Alpha holds [1]. Beta holds [2][3].\n\n"
    assert [r.record_index for r in out.references] == [1, 0, 2]
    kept = out.citations[0].sources[0]
    assert (kept.match, kept.score, kept.evidence) == ("existing", 0.0, "")
    confirmed = out.citations[1].sources[0]  # old [2] -> record 0, also verified: carries its support
    assert (confirmed.record_index, confirmed.match) == (0, "exact")
    assert any("9" in w and "does not resolve" in w for w in out.warnings)


def test_keep_never_drops_existing_over_max_sources() -> None:
    d, markers = _with_markers(["Alpha [1][2]."], [(0, "[1][2]", (1, 2))])
    out = run(d, {0: [cand(0, 2)]}, [rec(0), rec(1), rec(2)], markers=markers, resolved={1: 0, 2: 1},
              max_sources=1)
    assert body_of(out.report) == "Alpha [1][2].\n\n"


def test_replace_removes_old_markers() -> None:
    d, markers = _with_markers(["Alpha holds[7].", "Beta holds.[3]"], [(0, "[7]", (7,)), (1, "[3]", (3,))])
    out = run(d, {1: [cand(1, 0)]}, [rec(0), rec(1)], markers=markers, resolved={7: 1, 3: 1},
              existing=ExistingPolicy.REPLACE)
    assert body_of(out.report) == "Alpha holds. Beta holds[1].\n\n"


# ------------------------------------------------------------------ styles

STYLE_BODIES = {
    "numeric": "One[1]. Two[1][2].",
    "numeric-comma": "One[1]. Two[1, 2].",
    "link": "One[[1]](https://a.example/x). Two[[1]](https://a.example/x)[2].",
    "footnote": "One[^1]. Two[^1][^2].",
    "footnote-evidence": "One[^1]. Two[^1][^2].",
    "superscript": "One<sup>[1]</sup>. Two<sup>[1][2]</sup>.",
    "openjiuwen": "One[source_tracer_result][A \\*site\\*](https://a.example/x). "
                  "Two[source_tracer_result][A \\*site\\*](https://a.example/x)[source_tracer_result][Doc].",
    "citation": "One[citation:1]. Two[citation:1][citation:2].",
}


@pytest.mark.parametrize("style", STYLES)
def test_every_style(style: str) -> None:
    recs = [rec(0, url="https://a.example/x", title="A *site*", content="the evidence quote"),
            rec(1, url="C:/docs/doc.txt", title="Doc")]
    d = doc(["One.", "Two."])
    out = run(d, {0: [cand(0, 0, span=(4, 12))], 1: [cand(1, 0), cand(1, 1)]}, recs, style=style)
    assert body_of(out.report).rstrip("\n") == STYLE_BODIES[style]
    assert strip_emitted_markers(body_of(out.report), style) == "One. Two.\n\n"
    section = out.report[out.report.index("## References"):]
    if style.startswith("footnote"):
        assert "[^1]: [A \\*site\\*](https://a.example/x)" in section
        assert "[^2]: Doc (C:/docs/doc.txt)" in section
        assert ("evidence" in section) is (style == "footnote-evidence")
    else:
        assert "[1] [A \\*site\\*](https://a.example/x)\n[2] Doc (C:/docs/doc.txt)\n" in section


def test_unknown_style_and_format_are_rejected_naming_the_field() -> None:
    d = doc(["One."])
    with pytest.raises(InvalidInputError) as e:
        run(d, {0: [cand(0, 0)]}, [rec(0)], style="chicago-ish")
    assert e.value.field == "options.style"
    with pytest.raises(InvalidInputError) as e:
        run(d, {0: [cand(0, 0)]}, [rec(0)], reference_format="mla")
    assert e.value.field == "options.reference_format"


# ------------------------------------------------------------------ property: lossless + gap-free

FRAGMENTS = [
    "Revenue rose 5% in 2023.", "Sales hit $3.2 billion!", 'He said "it works".', "营收增长了百分之五。",
    "研究对象（PTSD）。", "Use `make x.` here.", "See [docs](https://d.example/a_(b)).", "Plain words",
    "Output grew in the U.S.", "Is it true?", "列表项：数据", "Ends with emphasis **bold.**",
]
SEPS = [" ", "\n", "\n\n", "\r\n", "", "\n- "]
OLD = ["", "[1]", " [2]", "[3, 4]", "[9]"]


Scenario = tuple[Doc, list[ExistingMarker], dict[int, int | None], dict[int, list[Candidate]]]


@st.composite
def scenario(draw: st.DrawFn) -> Scenario:
    n = draw(st.integers(1, 7))
    picks = [draw(st.sampled_from(FRAGMENTS)) for _ in range(n)]
    text = ""
    sentences: list[Sentence] = []
    markers: list[ExistingMarker] = []
    prot: list[Span] = []
    for i, frag in enumerate(picks):
        if i:
            text += draw(st.sampled_from(SEPS))
        start = len(text)
        old = draw(st.sampled_from(OLD))
        before = draw(st.booleans())
        piece = frag
        mstart = -1
        if old:
            cut = len(frag.rstrip(".!?。？")) if before else len(frag)
            mstart = start + cut + (1 if old.startswith(" ") else 0)
            piece = frag[:cut] + old + frag[cut:]
        text += piece
        sentences.append(Sentence(i, start, len(text), piece))
        if old:
            nums = tuple(int(x) for x in re.findall(r"\d+", old))
            markers.append(ExistingMarker(mstart, mstart + len(old.strip()), nums, sentence=i))
        for m in re.finditer(r"`[^`]*`|\[docs\]\([^ ]*\)\)?", piece):
            prot.append((start + m.start(), start + m.end()))
    text += draw(st.sampled_from(["", "\n", "\n\n"]))
    layout = Layout(body_end=len(text), references=None, protected=tuple(prot))
    resolved: dict[int, int | None] = {1: 0, 2: 3, 3: 1, 4: None, 9: None}
    chosen = {
        s.id: [cand(s.id, r) for r in draw(st.lists(st.integers(0, 5), max_size=3, unique=True))]
        for s in sentences
    }
    return Doc(text, sentences, layout), markers, resolved, chosen


RECORDS = [rec(0), rec(1), rec(2), rec(3, key="https://site0.example/page"), rec(4, url="/local/a.txt"),
           rec(5, url="https://site5.example/p", key="https://site2.example/page")]


def _numbers_in_order(body: str, style: str, titles: dict[str, int]) -> list[int]:
    out: list[int] = []
    for m in marker_regex(style).finditer(body):
        if style == "openjiuwen":
            out += [titles[t] for t in re.findall(r"\]\[((?:\\.|[^\\\]])*)\]", m.group(0))]
        else:
            out += [int(x) for x in re.findall(r"\d+", re.sub(r"\([^)]*\)", "", m.group(0)))]
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario(), st.sampled_from(STYLES), st.sampled_from(list(Placement)),
       st.sampled_from(list(ExistingPolicy)))
def test_every_style_is_lossless_with_gap_free_first_appearance_numbers(
    sc: Scenario,
    style: str, placement: Placement, policy: ExistingPolicy,
) -> None:
    d, markers, resolved, chosen = sc
    out = run(d, chosen, RECORDS, markers=markers, resolved=resolved, style=style, placement=placement,
              existing=policy)
    # the input body as it reads without its old markers == the output body without its markers
    # (`unmarked`: a run of markers goes with what joins it, and the blank before it where it ends
    # a sentence, a line or an aside)
    expected = unmarked(d.report)
    if not out.citations and not out.references:
        # nothing cited: the report as it came, or under replace without its (unverified) old markers
        if policy is ExistingPolicy.KEEP:
            assert out.report == d.report
        else:
            assert unmarked(out.report) == expected
        return
    heading = out.report.rindex("## References")
    marked = out.report[:heading]
    stripped = unmarked(marked)
    assert stripped.startswith(expected)
    assert set(stripped[len(expected):]) <= {"\r", "\n"}  # the separator only appends line breaks
    # numbers: gap-free 1..n by first appearance, and exactly the references
    titles = {f"Title {i}": 0 for i in range(6)}
    for r in out.references:
        titles[f"Title {r.record_index}"] = r.number
    seen = _numbers_in_order(marked, style, titles)
    first: list[int] = []
    for n in seen:
        if n not in first:
            first.append(n)
    assert first == list(range(1, len(out.references) + 1))
    assert [r.number for r in out.references] == first
    # one number per canonical source
    keys = [RECORDS[r.record_index].source_key for r in out.references]
    assert len(keys) == len(set(keys))


def test_marker_at_body_end_still_gets_one_blank_line_before_heading() -> None:
    report = "Claim without punctuation\n"
    layout = Layout(body_end=len(report), references=None, protected=())
    for end in (25, 26):  # a span that (wrongly) includes the newline is handled the same way
        s = Sentence(0, 0, end, report[:end])
        out = render_report(report, layout, [s], {0: [cand(0, 0)]}, [], {}, [rec(0)], TraceOptions(), "en")
        assert out.report.startswith("Claim without punctuation[1]\n\n## References\n")


# ------------------------------------------------------------------ whole pipeline, every style

PIPE_FACTS = [
    "Revenue rose 5.2% to $30.8 billion in 2023.", "The U.S. Dept. of Labor reported 3.9% unemployment.",
    'The CEO said "growth will continue."', "2023年全国GDP增长5.2%。", "他说：“我们会赢。”",
    "据统计，该公司营收达到308亿美元！",
]
PIPE_EXTRAS = ["", " See `code [1]. x`.", " Read [the docs](https://docs.example.com/a_(b)).", " 😀"]
PIPE_OLD = ["", "[1]", " [2]", "[1, 2]", "[^1]", "[citation:2]", "[9]"]


@st.composite
def pipeline_case(draw: st.DrawFn) -> tuple[str, list[dict[str, str]]]:
    blocks = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["para", "para", "list", "fence", "table", "heading"]))
        sents = [
            draw(st.sampled_from(PIPE_FACTS)) + draw(st.sampled_from(PIPE_OLD))
            + draw(st.sampled_from(PIPE_EXTRAS))
            for _ in range(draw(st.integers(1, 3)))
        ]
        if kind == "para":
            blocks.append(draw(st.sampled_from([" ", "\n"])).join(sents))
        elif kind == "list":
            blocks.append("\n".join("- " + s for s in sents))
        elif kind == "fence":
            blocks.append("```\nx = a[1]. y = 2.\n" + draw(st.sampled_from(["```", ""])))
        elif kind == "table":
            blocks.append(f"| fact | v |\n|---|---|\n| {sents[0]} | 1 |")
        else:
            blocks.append("## Results 2023")
    report = "\n\n".join(blocks) + draw(st.sampled_from(
        ["", "\n", "\n\n## References\n[1] Alpha https://a.example.com/x\n[2] Beta https://b.example.com/y\n"]))
    if draw(st.booleans()):
        report = report.replace("\n", "\r\n")
    facts = draw(st.permutations(PIPE_FACTS))  # every fact is in some record: most cases cite
    records = [
        {"url": "https://a.example.com/x", "title": "Alpha *1*", "content": " ".join(facts[:3])},
        {"url": "https://b.example.com/y?utm_source=z", "title": "Beta",
         "content": " ".join(facts[3:])},
        {"url": "/local/notes.md", "title": "Notes", "content": " ".join(facts[1:4])},
    ]
    return report, records


def _align(expected: str, out: str, rx: re.Pattern[str],
           loose: frozenset[int] | set[int] = frozenset()) -> tuple[int, list[str]] | None:
    """Match `out` against `expected` where `out` may carry extra `rx` markers and may lack the
    characters of `expected` at `loose` offsets; return where `expected` ends in `out` and the
    markers skipped, or None when anything else differs."""
    stack: list[tuple[int, int, tuple[str, ...]]] = [(0, 0, ())]
    seen: set[tuple[int, int]] = set()
    while stack:
        i, j, skipped = stack.pop()
        while (i, j) not in seen:
            seen.add((i, j))
            if i == len(expected):
                return j, list(skipped)
            if i in loose:
                stack.append((i + 1, j, skipped))
            m = rx.match(out, j)
            if m and m.end() > j:
                stack.append((i, m.end(), (*skipped, m.group(0))))
            if j < len(out) and out[j] == expected[i]:
                i, j = i + 1, j + 1
                continue
            break
    return None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pipeline_case(), st.sampled_from(STYLES), st.sampled_from(list(Placement)),
       st.sampled_from(list(ExistingPolicy)))
def test_pipeline_every_style_lossless_and_gap_free(
    c: tuple[str, list[dict[str, str]]], style: str, placement: Placement, policy: ExistingPolicy,
) -> None:
    from tracer.existing import find_existing_markers
    from tracer.markdown import scan_markdown
    from tracer.pipeline import trace
    from tracer.segment import segment_sentences

    report, records = c
    options = TraceOptions(style=style, placement=placement, existing=policy, mode=Mode.DETERMINISTIC)
    result = trace(report, records, options)
    event(f"cited: {bool(result.references)}")
    layout = scan_markdown(report)
    olds = find_existing_markers(report, layout, segment_sentences(report, layout))
    # the input body without its old markers; what joins them ("[1], [2]") and the blanks before
    # them may go too (`tracer.existing.unmarked` reads the text without them)
    expected, loose, cur = "", set[int](), 0
    spans = sorted((m.start, m.end) for m in olds)
    for a, b in spans:
        gap = report[cur:a]
        if cur and (a, b) != spans[0] and re.fullmatch(r"[ \t]*[,;，；、]?[ \t]*", gap):
            loose.update(range(len(expected), len(expected) + len(gap)))
        else:
            blank = len(gap) - len(gap.rstrip(" \t"))
            loose.update(range(len(expected) + len(gap) - blank, len(expected) + len(gap)))
        expected += gap
        cur = b
    expected += report[cur:layout.body_end]
    if not result.references:
        # nothing cited: the report as it came, or under replace without its (unverified) old markers
        if policy is ExistingPolicy.KEEP or not olds:
            assert result.report == report
        else:
            assert unmarked(result.report).rstrip() == unmarked(report[:layout.body_end]).rstrip()
        return
    rx = marker_regex(style)
    aligned = _align(expected, result.report, rx, loose)
    assert aligned is not None, "output body is not the input body plus markers"
    end, markers = aligned
    rest = result.report[end:]
    while (m := rx.match(rest)) and m.end() > 0:
        markers.append(m.group(0))
        rest = rest[m.end():]
    section = r"^(?:\r?\n)*(?:(?:```|~~~)\r?\n(?:\r?\n)*)?## (?:References|参考文献)\r?\n"
    assert re.match(section, rest), rest[:80]
    titles = {"Alpha \\*1\\*": 0, "Beta": 0, "Notes": 0}
    for ref in result.references:
        titles[{"Alpha *1*": "Alpha \\*1\\*"}.get(ref.title, ref.title)] = ref.number
    seen = _numbers_in_order("".join(markers), style, titles)
    first: list[int] = []
    for n in seen:
        if n not in first:
            first.append(n)
    assert first == [r.number for r in result.references] == list(range(1, len(result.references) + 1))


def test_kept_marker_outside_any_sentence_is_renumbered_in_place() -> None:
    report = "Intro line.\n\n- item [4]\n"
    layout = Layout(body_end=len(report), references=None, protected=())
    s = Sentence(0, 0, 11, "Intro line.")
    at = report.index("[4]")
    old = [ExistingMarker(at, at + 3, (4,), sentence=None)]
    recs = [rec(0), rec(1)]
    out = render_report(report, layout, [s], {0: [cand(0, 1)]}, old, {4: 0}, recs, TraceOptions(), "en")
    assert out.report.startswith("Intro line[1].\n\n- item [2]\n\n## References\n")
    assert [r.record_index for r in out.references] == [1, 0]
    assert len(out.citations) == 1  # the orphan marker has no sentence to report


def test_escape_before_the_marker_is_avoided_for_every_style() -> None:
    d = doc(["It ends in a backslash \\.", "Next."])  # "\\[1]." would escape the marker
    for style in STYLES:
        out = run(d, {0: [cand(0, 0)]}, [rec(0)], style=style)
        assert body_of(out.report).startswith("It ends in a backslash \\.")
        assert strip_emitted_markers(body_of(out.report), style) == "It ends in a backslash \\. Next.\n\n"


@pytest.mark.parametrize("style", ["footnote", "footnote-evidence"])
def test_footnote_styles_do_not_reuse_a_label_the_report_defines(style: str) -> None:
    # "[^1]: note" in the body is the author's own footnote; a second "[^1]:" would lose to it.
    from tracer.pipeline import trace

    report = "Revenue rose 5.2% in 2023.[^1]\n\n[^1]: a note of the author\n"
    records = [{"url": "https://a.example.com/x", "title": "Alpha", "content": "Revenue rose 5.2% in 2023."}]
    result = trace(report, records, TraceOptions(style=style))
    assert result.references
    assert result.report.count("[^1]:") == 1
    assert result.report.startswith("Revenue rose 5.2% in 2023[1].[^1]\n\n[^1]: a note of the author\n")
    assert any("footnote" in w for w in result.warnings)


@pytest.mark.parametrize("style", ["numeric", "numeric-comma", "superscript", "link"])
def test_bare_markers_do_not_become_links_to_a_body_link_definition(style: str) -> None:
    # "[docs][1]" + "[1]: url" in the body: a new "[1]" marker would link to that url
    from tracer.pipeline import trace

    report = "See [docs][1]. Revenue rose 5.2% in 2023.\n\n[1]: https://z.example.com\n"
    records = [{"url": "https://a.example.com/x", "title": "Alpha", "content": "Revenue rose 5.2% in 2023."}]
    result = trace(report, records, TraceOptions(style=style))
    assert result.references
    assert result.report.startswith(
        "See [docs][1]. Revenue rose 5.2% in 2023[citation:1].\n\n[1]: https://z.example.com\n"
    )
    assert any("link label" in w for w in result.warnings)


@pytest.mark.parametrize("style", [s for s in STYLES if s != "superscript"])
def test_marker_never_follows_a_closing_bracket(style: str) -> None:
    # "[the filing][1]" would turn the shortcut link "[the filing]" into a broken reference link
    d = doc(["Revenue rose per [the filing].", "Next."])
    out = run(d, {0: [cand(0, 0)]}, [rec(0)], style=style)
    assert body_of(out.report).startswith("Revenue rose per [the filing].")
    assert "[the filing][" not in out.report
    assert out.references


def test_a_superscript_marker_that_falls_back_to_brackets_never_follows_a_closing_bracket() -> None:
    # With "[1]: url" defined in the body, superscript markers become "[citation:n]"; placed where a
    # superscript is safe, "[launch report]" + "[citation:1]" read as one (broken) reference link.
    from tracer.pipeline import trace

    report = ("Webb launched aboard an Ariane 5 rocket, says the [launch report].\n\n"
              "[1]: https://esa.example/other\n[launch report]: https://esa.example/launch\n")
    fact = "Webb launched aboard an Ariane 5 rocket"
    records = [{"url": "https://a.example/jwst", "title": "JWST", "content": fact + "."}]
    result = trace(report, records, TraceOptions(style="superscript"))
    assert result.report.startswith(fact + ", says the [launch report].[citation:1]")
    assert any("link label" in w for w in result.warnings)


def test_footnote_fallback_also_avoids_body_link_labels() -> None:
    from tracer.pipeline import trace

    report = "Revenue rose 5.2% in 2023.[^1]\n\n[^1]: a note\n[1]: https://z.example.com\n"
    records = [{"url": "https://a.example.com/x", "title": "Alpha", "content": "Revenue rose 5.2% in 2023."}]
    result = trace(report, records, TraceOptions(style="footnote"))
    assert result.report.startswith("Revenue rose 5.2% in 2023[citation:1].[^1]\n")


@pytest.mark.parametrize(
    "tail", ["- [[1]](https://a.example.com/x): note\n", "> [[1]](https://a.example.com/x): x\n",
             "# Title [[1]](https://a.example.com/x)(x)\n", "# Title [[1]](https://a.example.com/x): x\n"],
)
@pytest.mark.parametrize("style", ["footnote", "numeric"])
def test_kept_marker_outside_sentences_never_joins_following_markdown(tail: str, style: str) -> None:
    # re-numbered in place these would read "- [^1]: note" (a definition) or "[1](x)" (a link)
    from tracer.existing import unmarked
    from tracer.pipeline import trace

    report = "Revenue rose 5.2% in 2023.\n\n" + tail
    records = [{"url": "https://a.example.com/x", "title": "Alpha", "content": "Revenue rose 5.2% in 2023."}]
    result = trace(report, records, TraceOptions(style=style))
    body = result.report[: result.report.index("\n\n## References")]
    assert unmarked(body) == unmarked(report.rstrip("\n"))
    assert not re.search(r"\]\(x\)|^[->] \[\^?1\]:", body, re.MULTILINE)


_GLUED_TO_URL = re.compile(r"(?:https?://|www\.)[^\s<]*?(?:\[\^?\d+\]|\[citation:|\[source_tracer_result\])")


@pytest.mark.parametrize("style", [s for s in STYLES if s != "superscript"])
@pytest.mark.parametrize(
    ("tail", "expected"),
    [
        (" (see https://esa.example/webb).", "{m} (see https://esa.example/webb)."),
        (", see https://esa.example/webb", "{m}, see https://esa.example/webb"),
        (" per www.esa.example/webb.", " per{m} www.esa.example/webb."),
        (" — see https://esa.example/webb.", "{m} — see https://esa.example/webb."),
        (" via https://esa.example/webb.", "{m} via https://esa.example/webb."),
        (" - details at: https://esa.example/webb", "{m} - details at: https://esa.example/webb"),
        ("（见https://esa.example/webb）。", "{m}（见https://esa.example/webb）。"),
    ],
)
def test_a_marker_never_extends_a_bare_url(style: str, tail: str, expected: str) -> None:
    """GFM autolinks a bare URL up to the next space or "<": "https://x.org/a[1]", ".[1]" or
    ")[1]" after it would render as a link to "https://x.org/a%5B1%5D", so the marker goes
    before the aside holding the URL."""
    from tracer.pipeline import trace

    fact = "Webb launched aboard an Ariane 5 rocket in December 2021"
    records = [{"url": "https://a.example/jwst", "title": "JWST", "content": fact + "."}]
    report = fact + tail + "\n\nNext paragraph here.\n"
    result = trace(report, records, TraceOptions(style=style))
    assert result.references and not result.warnings
    body = result.report.split("\n\n")[0]
    assert not _GLUED_TO_URL.search(body), body
    pre, post = expected.split("{m}")
    assert body.startswith(fact + pre) and body.endswith(post)
    marker = body[len(fact + pre):len(body) - len(post)]
    assert marker.startswith("[") and " " not in marker.replace("[source_tracer_result]", "")[:3]
    assert strip_emitted_markers(body, style) == report.split("\n\n")[0]


@pytest.mark.parametrize("tail", [" (see <https://esa.example/webb>).", " by [ESA](https://esa.example/webb)."])
def test_a_marker_may_follow_an_angle_autolink_or_a_link(tail: str) -> None:
    from tracer.pipeline import trace

    fact = "Webb launched aboard an Ariane 5 rocket in December 2021"
    records = [{"url": "https://a.example/jwst", "title": "JWST", "content": fact + "."}]
    result = trace(fact + tail + "\n", records, TraceOptions())
    assert result.report.startswith(fact + tail[:-1] + "[1].")


def test_a_superscript_marker_may_follow_a_bare_url() -> None:
    from tracer.pipeline import trace

    fact = "Webb launched aboard an Ariane 5 rocket in December 2021"
    records = [{"url": "https://a.example/jwst", "title": "JWST", "content": fact + "."}]
    result = trace(fact + ", see https://esa.example/webb\n", records, TraceOptions(style="superscript"))
    assert result.report.startswith(fact + ", see https://esa.example/webb<sup>[1]</sup>\n")


def test_a_marker_kept_off_a_url_never_lands_inside_a_number() -> None:
    from tracer.pipeline import trace

    fact = "The Northwind factory in Ohio produced 1,250 electric buses in 2023"
    records = [{"url": "https://a.example/nw", "title": "NW", "content": fact + "."}]
    for placement in ("before", "after"):
        result = trace(fact + " https://northwind.example/report\n", records,
                       TraceOptions(placement=placement))
        assert result.report.startswith(fact + "[1] https://northwind.example/report\n"), result.report


@pytest.mark.parametrize("tail", [" — see https://nasa.example/images.", " via https://nasa.example/images.",
                                  " at https://nasa.example/images."])
@pytest.mark.parametrize("fact", [
    "NASA released the first full-colour images from the telescope on July 12, 2022",
    "Attendance at the observatory rose 12% in the 2020 - 2021 season"])
def test_a_marker_kept_off_a_url_never_lands_inside_a_date(tail: str, fact: str) -> None:
    """The comma of "July 12, 2022" and the dash of "2020 - 2021" are no aside's: the marker goes
    after the date, before the words leading to the URL (it went to "July 12[1], 2022")."""
    from tracer.pipeline import trace

    records = [{"url": "https://a.example/img", "title": "Images", "content": fact + "."}]
    result = trace(fact + tail + "\n", records, TraceOptions())
    assert result.report.startswith(fact + "[1]" + tail + "\n"), result.report


@pytest.mark.parametrize("tail", ["，见[注]（https://s.cn/a）。", "，来源：《比亚迪年报》https://s.cn/a"])
def test_a_chinese_asides_comma_takes_the_marker_whatever_brackets_lead_to_its_url(tail: str) -> None:
    from tracer.pipeline import trace

    fact = "比亚迪全年营业收入达到7771亿元"
    records = [{"url": "https://s.cn/a", "title": "年报", "content": fact + "，同比增长29%。"}]
    assert trace(fact + tail + "\n", records, TraceOptions()).report.startswith(fact + "[1]" + tail)


def test_a_url_the_authors_words_already_follow_does_not_keep_markers_off_them() -> None:
    """Chinese prose runs on after a URL without a space, so GFM's autolink has taken those words
    in already: a marker after them changes nothing more, and the sentences keep their citations
    (they lost every one for 4,096 characters after the URL)."""
    from tracer.pipeline import trace

    facts = [f"第{i}号工厂2023年生产了{100 + i}辆电动公交车" for i in range(1, 6)]
    records = [{"url": f"https://a.example/{i}", "title": f"厂{i}", "content": f + "。"}
               for i, f in enumerate(facts, 1)]
    report = "来源：https://example.org/x。" + "".join(f + "。" for f in facts) + "\n"
    result = trace(report, records, TraceOptions())
    assert len(result.citations) == 5 and not result.warnings, result.warnings


@pytest.mark.parametrize("tail", [
    ' https://esa.example/search?q="webb".',      # the rest of a URL our scan ended early
    " https://esa.example/we[b]b.",
    " https://esa.example/webb)))))))))).",
    " see https://esa.example/a https://esa.example/b",   # two URLs: the marker goes before both
    ", see https://esa.example/a, https://esa.example/b.",
    " `a,b` https://esa.example/webb.",              # a comma in code is no clause's comma
])
def test_a_marker_never_joins_a_urls_autolink_and_the_citation_is_kept(tail: str) -> None:
    from tracer.pipeline import trace

    fact = "Webb launched aboard an Ariane 5 rocket in December 2021"
    records = [{"url": "https://a.example/jwst", "title": "JWST", "content": fact + "."}]
    result = trace(fact + tail + "\n", records, TraceOptions())
    assert len(result.citations) == 1 and not result.warnings, result.warnings
    body = result.report.split("\n\n## References")[0]
    url_runs = re.findall(r"(?:https?://|www\.)\S*", body)
    assert url_runs and not any("[1]" in run for run in url_runs), body
    assert strip_emitted_markers(body, "numeric").rstrip("\n") == fact + tail


def test_an_old_marker_between_a_url_and_its_full_stop_leaves_no_gap_for_the_new_one() -> None:
    from tracer.pipeline import trace

    fact = "Webb launched aboard an Ariane 5 rocket in December 2021"
    records = [{"url": "https://a.example/jwst", "title": "JWST", "content": fact + "."}]
    for existing in ("keep", "replace"):
        result = trace(fact + " see https://esa.example/webb[3].\n", records, TraceOptions(existing=existing))
        assert "webb.[1]" not in result.report and "webb[1]" not in result.report, result.report
        assert result.citations
