"""A references section with more of the report after it ("## References", its entries, then
"## Findings"): traced as if it stood at the report's end, every offset mapped back."""

from __future__ import annotations

import re

import pytest

from tracer import TraceOptions, trace
from tracer.existing import strip_markers
from tracer.markdown import misplaced_references, scan_markdown

RECORDS = [
    {"url": "https://a.example/hubble", "title": "Hubble facts",
     "content": "Hubble has made more than 1.5 million observations since its launch in 1990."},
    {"url": "https://b.example/webb", "title": "Webb",
     "content": "The James Webb Space Telescope launched on 25 December 2021 from French Guiana. "
                "Webb orbits the Sun at the second Lagrange point, 1.5 million km from Earth."},
]

BEFORE = ("# Telescopes\n\n"
          "The James Webb Space Telescope launched on 25 December 2021 [2]. "
          "Hubble has made more than 1.5 million observations [1].\n\n")
SECTION = ("## References\n\n"
           "[1] Hubble facts. https://a.example/hubble\n"
           "[2] Webb. https://b.example/webb\n\n")
AFTER = ("## Findings\n\n"
         "Webb orbits the Sun at the second Lagrange point, 1.5 million km from Earth [2].\n")
REPORT = BEFORE + SECTION + AFTER


@pytest.mark.parametrize("existing", ["keep", "replace"])
def test_the_section_is_cut_and_the_text_after_it_is_traced(existing: str) -> None:
    out = trace(REPORT, RECORDS, TraceOptions(existing=existing))
    assert out.removed_references == SECTION
    body, _, refs = out.report.partition("## References\n")
    # the text around the section, markers aside, byte for byte and in its order
    assert strip_markers(body).rstrip() == strip_markers(BEFORE + AFTER).rstrip()
    assert "[1] [Webb](https://b.example/webb)" in refs
    assert "[2] [Hubble facts](https://a.example/hubble)" in refs
    assert "## References" not in body and out.report.count("https://") == 2
    # every span is the report's own: the sentences after the section included
    cited = {REPORT[c.start:c.end]: [s.number for s in c.sources] for c in out.citations}
    assert cited == {
        "The James Webb Space Telescope launched on 25 December 2021 [2].": [1],
        "Hubble has made more than 1.5 million observations [1].": [2],
        "Webb orbits the Sun at the second Lagrange point, 1.5 million km from Earth [2].": [1],
    }
    assert "Earth [1].\n" in out.report
    # traced again, it is the same report (its list is now at the end)
    again = trace(out.report, RECORDS, TraceOptions(existing=existing))
    assert again.report == out.report


def test_an_old_marker_after_the_section_is_named_at_its_own_offset() -> None:
    report = BEFORE + SECTION + AFTER + "\nMars has two moons [7].\n"
    out = trace(report, RECORDS, TraceOptions(existing="keep"))
    named = [w for w in out.warnings if "'[7]'" in w]
    assert len(named) == 1, out.warnings
    at = int(re.search(r"offset (\d+)", named[0]).group(1))  # type: ignore[union-attr]
    assert report[at:at + 3] == "[7]"
    (gap,) = [u for u in out.unsupported if "Mars" in u.sentence]
    assert report[gap.start:gap.end] == "Mars has two moons [7]."


def test_an_unsupported_sentence_after_the_section_keeps_its_span() -> None:
    report = BEFORE + SECTION + AFTER + "\nSaturn's rings are made of ice and rock and dust.\n"
    out = trace(report, RECORDS)
    (gap,) = [u for u in out.unsupported if "Saturn" in u.sentence]
    assert report[gap.start:gap.end] == "Saturn's rings are made of ice and rock and dust."


def test_nothing_to_cite_gives_the_report_back_as_it_came() -> None:
    records = [{"url": "https://c.example/mars", "title": "Mars", "content": "Mars has two small moons."}]
    report = BEFORE.replace(" [2]", "").replace(" [1]", "") + SECTION + AFTER.replace(" [2]", "")
    out = trace(report, records, TraceOptions(existing="keep"))
    assert out.report == report and not out.citations and out.removed_references == ""


def test_crlf_and_chinese() -> None:
    records = [{"url": "https://caam.example/2024", "title": "汽车工业",
                "content": "2024年中国新能源汽车销量达到1286.6万辆，同比增长35.5%。"
                           "新能源汽车渗透率达到40.9%。"}]
    report = ("# 新能源汽车\r\n\r\n2024年中国新能源汽车销量达到1286.6万辆，同比增长35.5%[1]。\r\n\r\n"
              "## 参考文献\r\n\r\n[1] 汽车工业 https://caam.example/2024\r\n\r\n"
              "## 五、结论\r\n\r\n新能源汽车渗透率达到40.9%[1]。\r\n")
    out = trace(report, records, TraceOptions(existing="replace"))
    assert out.removed_references == "## 参考文献\r\n\r\n[1] 汽车工业 https://caam.example/2024\r\n\r\n"
    assert out.report.index("## 五、结论") < out.report.index("## 参考文献")
    assert [report[c.start:c.end] for c in out.citations] == [
        "2024年中国新能源汽车销量达到1286.6万辆，同比增长35.5%[1]。", "新能源汽车渗透率达到40.9%[1]。"]
    assert "\n" not in out.report.replace("\r\n", "")


H = "# Space\n\nHubble has made more than 1.5 million observations [1].\n\n"
REFS = "## References\n\n[1] Hubble facts. https://a.example/hubble\n[2] Webb. https://b.example/webb\n\n"


@pytest.mark.parametrize(
    "report",
    [
        # one source list per section: each stays the section's
        "## Webb\n\nWebb launched in 2021 [1].\n\n### Sources\n\n[1] Webb https://b.example/webb\n\n"
        "## Hubble\n\nHubble launched in 1990 [1].\n\n### Sources\n\n[1] Hubble https://a.example/hubble\n",
        "## Webb\n\nWebb launched in 2021 [1].\n\n## Sources\n\n[1] Webb https://b.example/webb\n\n"
        "## Hubble\n\nHubble launched in 1990 [2].\n\n**Sources**\n\n[2] Hubble https://a.example/hubble\n",
        # more reading, not the body's sources
        "Webb launched in 2021.\n\n## Further reading\n\n- https://b.example/webb\n\n"
        "## Findings\n\nIt works.\n",
        # the last section: a trailing section the scan did not cut stays so
        "Webb launched in 2021 [1].\n\n## Sources\n\nWe read what NASA publishes, mostly its press pages.\n",
        # prose under the title: a section of the report
        "Intro.\n\n## Sources\n\nWe read every filing that the companies published in 2023, and then we read "
        "the press coverage.\n\n## Findings\n\nRevenue rose.\n",
        # a closing line under the entries: not the whole section is a list of sources
        "Intro.\n\n## Sources\n[1] A https://a.com\n[2] B https://b.com\n\n*All figures in US dollars.*\n\n"
        "## Findings\n\nRevenue rose.\n",
        # a deeper heading after it is part of it, and nothing at its level or above follows
        "# Report\n\nIntro [1].\n\n## References\n\n[1] A https://a.com\n\n### Web\n\n[2] B https://b.com\n",
        # a section's own list without a heading: the other section's list is not moved over it
        "## Webb\n\nWebb launched in 2021 [1].\n\n### Sources\n\n[1] Webb https://b.example/webb\n\n"
        "## Hubble\n\nHubble launched in 1990 [1].\n\n[1] Hubble facts https://a.example/hubble\n\n"
        "## Outlook\n\nBoth work.\n",
        "## Webb\n\nWebb launched in 2021 [1].\n\n### Sources\n\n[1] Webb https://b.example/webb\n\n"
        "## Hubble\n\nHubble launched in 1990.\n\nSource: [Hubble facts](https://a.example/hubble)\n\n"
        "## Outlook\n\nBoth work.\n",
        # under "Sources", lists of the report's own that give links: the rest cites none of it
        "# Comparison\n\nWe compare two vendors.\n\n## Sources\n\n- Vendor A is cheaper: https://a.example/p\n"
        "- Vendor B is faster: https://b.example/b\n\n## Recommendation\n\nPick A.\n",
        # figures under a label, quotations, steps: the report's own, whatever the title
        "Intro [1].\n\n## References\n\n- Coal: 55.3% of supply in 2023 (https://iea.example/coal)\n"
        "- Gas: 8.5% of supply in 2023 (https://iea.example/gas)\n\n## Findings\n\nCoal still dominates.\n",
        "Intro [1].\n\n## 参考资料\n\n- 煤炭：2023年占比55.3%（https://nea.example/coal）\n\n"
        "## 结论\n\n煤炭仍占主导。\n",
        "Intro [1].\n\n## References\n\n- “AI is the new electricity.” — Andrew Ng, https://x.example/ng\n"
        "\n## Findings\n\nIt is.\n",
        "Intro [1].\n\n## References\n\n1. Go to https://console.example and sign in\n"
        "2. Download the data from https://data.example\n\n## Findings\n\nIt rose.\n",
        # a rule with nothing before it under the heading
        "Intro [1].\n\n## References\n\n---\n\n[1] A https://a.com\n\n## Findings\n\nIt rose.\n",
        # one section's own list, in the shapes writers give them: the moved list would resolve
        # the other section's markers
        *(H + REFS + "## Tesla\n\nTesla delivered 1.8 million cars in 2023 [1]. BYD sold 3 million [2].\n\n"
          + own + "## Outlook\n\nBoth work [2].\n" for own in (
              "- [Reuters](https://reuters.example/t) — Tesla delivered 1.81 million vehicles in 2023.\n"
              "- [CNBC](https://cnbc.example/b) — BYD sold 3 million cars.\n\n",
              "1. 路透社：特斯拉2023年交付181万辆。https://reuters.example/t\n2. CNBC：比亚迪售出300万辆。https://cnbc.example/b\n\n",
              "[1] Tesla delivered 1.81 million vehicles in 2023, Reuters reports. https://reuters.example/t\n\n",
              '[1] Reuters, "Tesla deliveries", 2 January 2024.\n\n',
              "**Sources for this section:**\n\n- Reuters, Tesla deliveries, January 2024\n\n",
              "本节参考资料\n\n- 路透社，特斯拉交付量\n\n",
              "¹ Reuters, Tesla deliveries https://reuters.example/t\n\n",
          )),
        # "### References" closing one "## …" section is that section's
        "## Webb\n\nThe James Webb Space Telescope launched on 25 December 2021 [1].\n\n### References\n\n"
        "[1] Webb. https://b.example/webb\n\n## Hubble\n\n"
        "Hubble has made more than 1.5 million observations [1].\n",
        # the author's link definitions, which the report links through
        "# T\n\nHubble has made more than 1.5 million observations [1].\n\n## References\n\n"
        "[hubble]: https://a.example/hubble\n[webb]: https://b.example/webb\n\n"
        "## Findings\n\nSee [Webb][webb].\n",
        "# T\n\nHubble has made more than 1.5 million observations.\n\n## References\n\n"
        "[1]: https://a.example/hubble\n[2]: https://b.example/webb\n\n"
        "## Findings\n\nSee the [Webb page][2].\n",
        # figures under a label, with no percent; a lead-in that names no sources
        "# Tesla\n\nTesla's revenue grew to $96.8 billion in 2023 [1].\n\n## References\n\n"
        "- Revenue: $96.8 billion in 2023 (https://ir.tesla.example/10k)\n"
        "- Deliveries: 1.81 million vehicles (https://ir.tesla.example/q4)\n\n## Outlook\n\nGrowth slows.\n",
        "# Jobs\n\nPayrolls rose by 200,000 in May [1].\n\n## References\n\nTools we used:\n\n"
        "- [pandas](https://pandas.pydata.org)\n- [FRED](https://fred.example)\n\n"
        "## Findings\n\nHiring was broad.\n",
        # "Sources" cited for one of its four entries
        "Intro [1].\n\n## Sources\n\n- [A](https://a.example)\n- [B](https://b.example)\n- [C](https://c.example)\n"
        "- [D](https://d.example)\n\n## Findings\n\nIt rose.\n",
        # inside code it is no heading
        "Intro.\n\n```\n## References\n[1] A https://a.com\n```\n\n## Findings\n\nRevenue rose.\n",
        # a bold title: cited for one of its four entries, in code, inside a paragraph, of more
        # reading, or one of two lists
        "Intro [1].\n\n**References**\n\n- [A](https://a.example)\n- [B](https://b.example)\n"
        "- [C](https://c.example)\n- [D](https://d.example)\n\n## Findings\n\nIt rose.\n",
        "Intro [1].\n\n```\n**References**\n\n[1] A https://a.com\n```\n\n## Findings\n\nIt rose [1].\n",
        "Intro [1].\n**References**\n[1] A https://a.com\n\n## Findings\n\nIt rose [1].\n",
        "Intro [1].\n\n**Further reading**\n\n[1] A https://a.com\n\n## Findings\n\nIt rose [1].\n",
        "## Webb\n\nWebb launched in 2021 [1].\n\n**Sources**\n\n[1] Webb https://b.example/webb\n\n"
        "## Hubble\n\nHubble launched in 1990 [2].\n\n**Sources**\n\n[2] Hubble https://a.example/hubble\n\n"
        "## Outlook\n\nBoth work [1].\n",
        # a bold title closing a section that nothing before it cites: that section's own list
        "# Space\n\n## Webb\n\nWebb launched in 2021 [1].\n\n**Sources**\n\n[1] Webb https://b.example/webb\n\n"
        "## Hubble\n\nHubble has made more than 1.5 million observations [1].\n",
    ],
)
def test_what_is_not_moved(report: str) -> None:
    assert misplaced_references(report, scan_markdown(report)) is None


def test_offsets_map_back_to_the_report() -> None:
    moved = misplaced_references(REPORT, scan_markdown(REPORT))
    assert moved is not None
    start, end = len(BEFORE), len(BEFORE) + len(SECTION)
    assert moved.segments[-1][1:] == (start, len(SECTION))
    assert moved.text == BEFORE + AFTER + "\n" + SECTION
    assert moved.layout.references is not None and moved.text[moved.layout.references[0]:] == SECTION
    for p in range(len(moved.text)):
        q = moved.original(p)
        if p < len(BEFORE) + len(AFTER):
            assert REPORT[q] == moved.text[p]
        elif p >= len(moved.text) - len(SECTION):
            assert REPORT[q] == moved.text[p] and start <= q < end
    # a span that ends where the section started ends there, not after it
    assert moved.original(len(BEFORE), end=True) == len(BEFORE)
    assert moved.original(len(BEFORE) + len(AFTER), end=True) == len(REPORT)


def test_a_warning_maps_the_offset_it_names_and_not_a_number_it_quotes() -> None:
    report = BEFORE + SECTION + AFTER + "\nAs [7] shows, the clock at offset 250 ms was fixed.\n"
    out = trace(report, RECORDS, TraceOptions(existing="replace"))
    (named,) = [w for w in out.warnings if "'[7]'" in w]
    at = int(re.search(r"at offset (\d+)", named).group(1))  # type: ignore[union-attr]
    assert report[at:at + 3] == "[7]"
    assert "the clock at offset 250 ms" in named


@pytest.mark.parametrize(
    ("section", "after"),
    [
        # a rule between the entries and the next section stays the report's
        ("## References\n\n[1] Hubble facts. https://a.example/hubble\n[2] Webb. https://b.example/webb\n\n",
         "---\n\n" + AFTER),
        # a lead-in line over the entries
        ("## References\n\nThe following sources were consulted:\n\n[1] Hubble facts. https://a.example/hubble\n"
         "[2] Webb. https://b.example/webb\n\n", AFTER),
        # a deeper heading grouping entries is part of it
        ("## References\n\n### Web\n\n[1] Hubble facts. https://a.example/hubble\n"
         "[2] Webb. https://b.example/webb\n\n", AFTER),
        # "Sources" that the rest of the report cites by number
        ("## Sources\n\n1. [Hubble facts](https://a.example/hubble)\n"
         "2. [Webb](https://b.example/webb)\n\n", AFTER),
        # a bold title, in the paragraph before the next heading
        ("**References**\n\n[1] Hubble facts. https://a.example/hubble\n[2] Webb. https://b.example/webb\n\n",
         AFTER),
        ("**Sources:**\n\n1. [Hubble facts](https://a.example/hubble)\n"
         "2. [Webb](https://b.example/webb)\n\n", AFTER.replace("## ", "### ")),
    ],
)
def test_more_forms_are_moved(section: str, after: str) -> None:
    _moved(BEFORE + section + after, section)


def test_a_bold_title_closing_the_last_section_is_the_reports_list_when_earlier_sections_cite_it() -> None:
    before = ("# Space\n\n## Webb\n\nThe James Webb Space Telescope launched on 25 December 2021 [2].\n\n"
              "## Hubble\n\nHubble has made more than 1.5 million observations [1].\n\n")
    section = "**References**\n\n[1] Hubble facts. https://a.example/hubble\n[2] Webb. https://b.example/webb\n\n"
    _moved(before + section + AFTER, section)


def _moved(report: str, section: str) -> None:
    moved = misplaced_references(report, scan_markdown(report))
    assert moved is not None and report[moved.segments[-1][1]:sum(moved.segments[-1][1:])] == section
    out = trace(report, RECORDS, TraceOptions(existing="keep"))
    assert out.removed_references == section
    body = out.report.partition("## References\n")[0]
    assert strip_markers(body).rstrip() == strip_markers(report.replace(section, "")).rstrip()
    assert trace(out.report, RECORDS, TraceOptions(existing="keep")).report == out.report


def test_a_rule_kept_in_the_report_never_underlines_the_paragraph_above_the_section() -> None:
    # no blank line before the heading: "…[1].\n---" would make the paragraph a heading, so the
    # rule goes with the section
    report = ("Hubble has made more than 1.5 million observations [1].\n## References\n\n"
              "[1] Hubble facts. https://a.example/hubble\n\n---\n\n## Findings\n\n"
              "Webb orbits the Sun at the second Lagrange point, 1.5 million km from Earth.\n")
    out = trace(report, RECORDS, TraceOptions(existing="replace"))
    assert out.removed_references == "## References\n\n[1] Hubble facts. https://a.example/hubble\n\n---\n\n"
    assert [report[c.start:c.end] for c in out.citations] == [
        "Hubble has made more than 1.5 million observations [1].",
        "Webb orbits the Sun at the second Lagrange point, 1.5 million km from Earth."]
    assert not scan_markdown(out.report).headings[0][0] == 0


DEFS_REPORT = ("# T\n\nHubble has made more than 1.5 million observations. See [Webb][webb] and [Hubble].\n\n"
               "## References\n\n[hubble]: https://a.example/hubble\n[webb]: https://b.example/webb\n"
               "[unused]: https://c.example/\n")


@pytest.mark.parametrize("existing", ["keep", "replace"])
def test_the_authors_link_definitions_the_body_uses_come_back_after_the_new_list(existing: str) -> None:
    out = trace(DEFS_REPORT, RECORDS, TraceOptions(existing=existing))
    assert out.report.endswith(
        "## References\n\n[1] [Hubble facts](https://a.example/hubble)\n\n"
        "[hubble]: https://a.example/hubble\n[webb]: https://b.example/webb\n")
    assert "[unused]" not in out.report
    assert trace(out.report, RECORDS, TraceOptions(existing=existing)).report == out.report


def test_link_definitions_come_back_before_closing_matter_and_when_nothing_is_cited() -> None:
    out = trace(DEFS_REPORT + "\n---\n\n*Generated by AI.*\n", RECORDS, TraceOptions(existing="replace"))
    assert out.report.endswith("[webb]: https://b.example/webb\n\n---\n\n*Generated by AI.*\n")
    uncited = DEFS_REPORT.replace("Hubble has made more than 1.5 million observations.",
                                  "Saturn has rings [1].")
    out = trace(uncited, RECORDS, TraceOptions(existing="replace"))
    assert out.report == ("# T\n\nSaturn has rings. See [Webb][webb] and [Hubble].\n\n"
                          "[hubble]: https://a.example/hubble\n[webb]: https://b.example/webb\n")


@pytest.mark.parametrize("existing", ["keep", "replace"])
@pytest.mark.parametrize("defs", ["[2]: https://example.com/operator\n",
                                  "[^2]: [Operator](https://example.com/operator)\n"])
def test_definitions_above_the_references_heading_trace_the_same_twice(existing: str, defs: str) -> None:
    # left in the body when nothing was cited, "[2]: url" came back last: the next trace took it
    # for the references list and removed the author's "[2]" with it
    report = ("Saturn has rings [1]. See the operator [2] for more.\n\n" + defs
              + "\n## References\n\n[1] Some source https://example.com/a\n")
    out = trace(report, RECORDS, TraceOptions(existing=existing))
    if existing == "replace":   # ("keep" keeps the uncited "[1]" and the list it cites)
        assert out.report == "Saturn has rings. See the operator  for more.\n\n"
        assert "https://example.com/operator" in out.removed_references
    assert trace(out.report, RECORDS, TraceOptions(existing=existing)).report == out.report


def test_a_labelled_citation_definition_is_a_citation_not_a_link_to_keep() -> None:
    report = ("Hubble has made more than 1.5 million observations [Source 1].\n\n## References\n\n"
              "[Source 1]: Hubble facts https://a.example/hubble\n")
    out = trace(report, RECORDS, TraceOptions(existing="keep"))
    assert out.report.endswith("## References\n\n[1] [Hubble facts](https://a.example/hubble)\n")


S = ("# T\n\nHubble has made more than 1.5 million observations. See [Webb][webb].\n\n## References\n\n"
     "[1] Hubble facts. https://a.example/hubble\n\n")


@pytest.mark.parametrize(
    ("report", "kept"),
    [
        # the URL on the line under a bare "[webb]:", a title on the next line
        (S + "[webb]:\nhttps://b.example/webb\n", "[webb]:\nhttps://b.example/webb"),
        (S + '[webb]: https://b.example/webb\n"Webb page"\n', '[webb]: https://b.example/webb\n"Webb page"'),
        # line endings as the report's
        ((S + '[webb]: https://b.example/webb\n    "Webb page"\n').replace("\n", "\r\n"),
         '[webb]: https://b.example/webb\r\n    "Webb page"'),
        # labels matched as CommonMark matches them: spaces collapsed, case folded
        (S.replace("[Webb][webb]", "[Webb][James  WEBB]") + "[james webb]: https://b.example/webb\n",
         "[james webb]: https://b.example/webb"),
        # a label with a number that numbers nothing
        (S.replace("[Webb][webb]", "[Webb][jwst-2]") + "[jwst-2]: https://b.example/webb\n",
         "[jwst-2]: https://b.example/webb"),
        # a label the closing matter links through
        (S + "[notice]: https://c.example/n\n\n---\n\n*Generated by AI; see [notice].*\n",
         "[notice]: https://c.example/n"),
    ],
)
def test_kept_definitions_are_verbatim_and_found_as_commonmark_reads_labels(report: str, kept: str) -> None:
    out = trace(report, RECORDS, TraceOptions(existing="replace"))
    assert kept in out.report
    assert trace(out.report, RECORDS, TraceOptions(existing="replace")).report == out.report


def test_a_chat_citation_label_is_no_link_to_keep() -> None:
    report = ("# T\n\nHubble has made more than 1.5 million observations [web:1].\n\n## References\n\n"
              "[web:1]: https://c.example/nasa\n")
    for style in ("numeric", "citation"):
        out = trace(report, RECORDS, TraceOptions(existing="keep", style=style))
        assert "c.example" not in out.report
        assert trace(out.report, RECORDS, TraceOptions(existing="keep", style=style)).report == out.report


@pytest.mark.parametrize("defs", [
    "## Sources\n\n[^1^]: https://a.example/hubble\n[^2^]: https://b.example/webb\n",   # Kimi's
    "[^1^]: https://a.example/hubble\n[^2^]: https://b.example/webb\n",
    "## References\n\n[^hubble]: NASA, https://a.example/hubble\n[^webb]: https://b.example/webb\n",
    "[^hubble]: NASA, https://a.example/hubble\n[^webb]: https://b.example/webb\n",
])
@pytest.mark.parametrize("existing", ["keep", "replace"])
def test_footnote_definitions_are_cut_and_never_come_back(defs: str, existing: str) -> None:
    # a footnote's reference in the body is a citation marker, renumbered with the rest: its
    # definition is the old list's entry, not a link of the author's to keep
    body = ("The James Webb Space Telescope launched on 25 December 2021.[^2^] "
            "Hubble has made more than 1.5 million observations.[^1^]\n\n")
    if "hubble]" in defs:
        body = body.replace("[^2^]", "[^webb]").replace("[^1^]", "[^hubble]")
    out = trace(body + defs, RECORDS, TraceOptions(existing=existing))
    assert out.removed_references == defs and "[^" not in out.report
    assert [[s.url for s in c.sources] for c in out.citations] == [
        ["https://b.example/webb"], ["https://a.example/hubble"]]
    assert not out.warnings
    assert trace(out.report, RECORDS, TraceOptions(existing=existing)).report == out.report


def test_superscript_notes_count_as_citing_a_sources_list_before_more_report() -> None:
    # "## Sources" heads other lists too, so the rest must cite it: superscripts do, though they
    # are never read as markers (they stay, with a warning)
    report = ("# Telescopes\n\nHubble has made more than 1.5 million observations.¹ The James Webb Space "
              "Telescope launched on 25 December 2021.²\n\n## Sources\n\n1. [Hubble facts](https://a.example/hubble)\n"
              "2. [Webb](https://b.example/webb)\n\n## Methodology\n\nWe read the agencies' pages.\n")
    moved = misplaced_references(report, scan_markdown(report))
    assert moved is not None
    assert report[moved.segments[-1][1]:sum(moved.segments[-1][1:])].startswith("## Sources")
    out = trace(report, RECORDS)
    assert out.report.index("## Methodology") < out.report.index("## References")
    assert "## Sources" not in out.report
    assert any(w.startswith("superscript number(s) ¹, ² look like") for w in out.warnings)


@pytest.mark.parametrize("existing", ["keep", "replace"])
@pytest.mark.parametrize("style", ["numeric", "footnote"])
def test_a_footnote_that_is_a_note_stays_with_its_note(existing: str, style: str) -> None:
    # "[^hyb]: This figure excludes …" after the list is the author's note, not a source: its
    # reference stays where it is and the note comes back after the new list, on every trace
    note = "[^hyb]: This figure excludes plug-in hybrids and vans.\n"
    report = ("Hubble has made more than 1.5 million observations[^hyb]. The James Webb Space Telescope "
              "launched on 25 December 2021 [2].\n\n## References\n\n1. [Hubble facts](https://a.example/hubble)\n"
              "2. [Webb](https://b.example/webb)\n\n" + note)
    options = TraceOptions(existing=existing, style=style)
    out = trace(report, RECORDS, options)
    # (the new marker before it: after the full stop it would open the next sentence)
    assert re.search(r"observations\[\^?1\]\[\^hyb\]\.", out.report) and out.report.endswith("\n\n" + note)
    assert not out.warnings and len(out.citations) == 2
    assert trace(out.report, RECORDS, options).report == out.report


def test_a_chinese_sentence_ending_in_a_note_reference_is_cited_before_it() -> None:
    # after "。" the marker read as the next sentence's ("。[1]上海是…")
    recs = [{"url": "https://a.example/sh", "title": "上海",
             "content": "2023年，上海人工智能规上企业数量达到348家，产业规模突破3800亿元。"}]
    fact = "2023年，上海人工智能规上企业数量达到348家，产业规模突破3800亿元"
    out = trace(f"{fact}[^1]。上海是重要的产业高地。\n\n[^1]: 不含港澳台。\n\n更多内容。\n", recs)
    assert out.report.startswith(f"{fact}[1][^1]。上海是")
    assert trace(out.report, recs).report == out.report


@pytest.mark.parametrize("existing", ["keep", "replace"])
def test_source_footnotes_below_a_note_footnote_are_the_references(existing: str) -> None:
    # a Word document through pandoc: a note first, then the sources, all footnotes
    recs = [{"url": "https://www.nature.com/articles/s41586-024-07500-2",
             "title": "Hybrid working from home improves retention",
             "content": "A trial at Trip.com involving 1,612 employees found that hybrid work cut quit rates "
                        "by one third."}]
    note = "[^1]: Prepared for internal discussion only.\n"
    report = ("This memo is internal.[^1] A trial at Trip.com involving 1,612 employees found that hybrid "
              "work cut quit rates by one third.[^2]\n\n" + note + "\n[^2]: Bloom, N. (2024). \"Hybrid "
              "working from home improves retention.\" *Nature*. https://www.nature.com/articles/s41586-024-07500-2\n")
    out = trace(report, recs, TraceOptions(existing=existing))
    assert "[^2]" not in out.report and out.report.count("nature.com") == 1
    assert out.report.startswith("This memo is internal.[^1] A trial at Trip.com involving 1,612 employees "
                                 "found that hybrid work cut quit rates by one third[1].\n\n" + note)
    assert trace(out.report, recs, TraceOptions(existing=existing)).report == out.report
