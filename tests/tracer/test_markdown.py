"""tracer.markdown: protected regions and the trailing references section."""

from __future__ import annotations

import pytest

from tracer.markdown import is_references_title, scan_markdown, unclosed_block
from tracer.models import Layout


def covered(layout: Layout, text: str, needle: str) -> bool:
    """Is every character of the (unique) `needle` inside a protected region?"""
    s = text.index(needle)
    e = s + len(needle)
    return all(any(a <= p < b for a, b in layout.protected) for p in range(s, e))


def touched(layout: Layout, text: str, needle: str) -> bool:
    s = text.index(needle)
    e = s + len(needle)
    return any(a < e and s < b for a, b in layout.protected)


def test_protected_regions_are_sorted_and_disjoint() -> None:
    text = "# T\n\nA `x` and [l](http://a.b) and $x$.\n\n```\ncode\n```\n| a |\n|---|\n| b |\n"
    layout = scan_markdown(text)
    spans = list(layout.protected)
    assert spans == sorted(spans)
    assert all(a < b for a, b in spans)
    assert all(spans[i][1] <= spans[i + 1][0] for i in range(len(spans) - 1))


@pytest.mark.parametrize(
    "needle",
    [
        "`inline code`",
        "[a link](https://example.com/x_(y))",
        "![image](img.png)",
        "<https://auto.link/x>",
        "https://bare.example.com/path?q=1",
        "$E = mc^2$",
        "<sup>",
        "\\(a+b\\)",
    ],
)
def test_inline_constructs_are_protected(needle: str) -> None:
    text = f"Intro sentence with {needle} inside it.\n"
    layout = scan_markdown(text)
    assert covered(layout, text, needle)
    assert not touched(layout, text, "Intro sentence with")


def test_bare_url_excludes_trailing_punctuation() -> None:
    text = "See https://example.com/a.html. Next, see https://ex.org/b)."
    layout = scan_markdown(text)
    spans = [text[a:b] for a, b in layout.protected]
    assert spans == ["https://example.com/a.html", "https://ex.org/b"]


def test_money_is_not_math() -> None:
    text = "Revenue was $30.8 billion, up from $25 billion, and $5-$10 per share.\n"
    layout = scan_markdown(text)
    assert layout.protected == ()


@pytest.mark.parametrize(
    "block",
    [
        "```python\nx = 1. Not prose.\n```\n",
        "~~~\nfenced with tildes.\n~~~\n",
        "    indented code line.\n",
        "<div>\nhtml block text.\n</div>\n",
        "<!-- a comment.\nspanning lines -->\n",
        "$$\nx = 1.\n$$\n",
        "| col a | col b |\n|:---|---:|\n| 1.5 | two. |\n",
        "## A heading.\n",
        "Setext heading\n==============\n",
        "[label]: https://example.com/def\n",
        "---\n",
    ],
)
def test_block_constructs_cover_whole_lines(block: str) -> None:
    text = f"Before paragraph.\n\n{block}\nAfter paragraph.\n"
    layout = scan_markdown(text)
    start = text.index(block)
    end = start + len(block)
    assert any(a <= start and end <= b for a, b in layout.protected), layout.protected
    assert not touched(layout, text, "Before paragraph.")
    assert not touched(layout, text, "After paragraph.")


def test_front_matter() -> None:
    text = "---\ntitle: A. B.\ndate: 2024\n---\nBody text.\n"
    layout = scan_markdown(text)
    assert layout.protected[0] == (0, text.index("Body"))


def test_leading_rule_is_not_front_matter() -> None:
    text = "---\n\nParagraph one.\n\n---\n\nMore.\n"
    layout = scan_markdown(text)
    assert not touched(layout, text, "Paragraph one.")


def test_unclosed_block_runs_to_end() -> None:
    text = "Prose.\n\n```\ncode\n## References\n[1] x https://a.com\n"
    layout = scan_markdown(text)
    assert layout.references is None
    assert layout.body_end == len(text)
    assert layout.protected[-1] == (text.index("```"), len(text))


def test_headings_recorded() -> None:
    text = "# One\n\ntext\n\nTwo\n---\n\nmore\n"
    layout = scan_markdown(text)
    assert [text[a:b] for a, b in layout.headings] == ["# One", "Two\n---"]


def test_lone_dash_line_after_paragraph_is_setext_only_for_one_line() -> None:
    text = "Line one\nline two.\n---\n\nAfter.\n"
    layout = scan_markdown(text)
    assert not touched(layout, text, "Line one")


def test_an_equals_underline_under_a_longer_paragraph_is_no_prose() -> None:
    # "===" under two lines makes them a heading; a marker after it would unmake the heading
    text = "Webb launched in 2021\nfrom French Guiana\n===\n\nAfter.\n"
    layout = scan_markdown(text)
    assert covered(layout, text, "===\n") and not touched(layout, text, "Webb launched")


@pytest.mark.parametrize(
    ("text", "region"),
    [
        ("Run <code>Webb launched. Its mirror is wide.</code> now.",
         "<code>Webb launched. Its mirror is wide.</code>"),
        ('See <a href="https://x.org">Webb launched. It is wide</a> here.',
         '<a href="https://x.org">Webb launched. It is wide</a>'),
        ('Webb <abbr title="launch > 2021. It is wide.">UTC</abbr> ok.',
         '<abbr title="launch > 2021. It is wide.">'),
        ("Intro.\n\n\\begin{equation}\nWebb launched. Next.\n\\end{equation}\n\nAfter.\n",
         "\\begin{equation}\nWebb launched. Next.\n\\end{equation}\n"),
        ("Intro.\n\n\\begin{equation}\\label{eq:e}\nWebb launched.\n\\end{equation}\n\nAfter.\n",
         "\\begin{equation}\\label{eq:e}\nWebb launched.\n\\end{equation}\n"),
    ],
)
def test_html_elements_quoted_attributes_and_latex_environments_are_regions(text: str, region: str) -> None:
    assert covered(scan_markdown(text), text, region)


def test_an_element_left_open_protects_only_its_tag() -> None:
    text = "Run <code>Webb launched.\n\nIts mirror is wide.</code> now."
    layout = scan_markdown(text)
    assert covered(layout, text, "<code>") and not touched(layout, text, "Webb launched.")
    # an anchor without href is no link, and a later link's "</a>" closes that link only
    text = '<a name="results">Webb launched. It is wide. See the <a href="https://x.org">filing</a>.'
    layout = scan_markdown(text)
    assert not touched(layout, text, "Webb launched. It is wide.")
    assert covered(layout, text, '<a href="https://x.org">filing</a>')


def test_an_emoji_shortcode_before_a_colon_is_a_region() -> None:
    text = "The mirror is gold coated :tada::"
    assert covered(scan_markdown(text), text, ":tada:")


def test_latex_outside_math_environments_is_prose() -> None:
    text = "LaTeX users type\n\\begin{document} first.\n\nWebb launched.\n\nThey end with \\end{document}.\n"
    assert not touched(scan_markdown(text), text, "Webb launched.")


def test_list_nested_indentation_is_not_code() -> None:
    text = "- item one\n\n    continued paragraph of item.\n- item two\n"
    layout = scan_markdown(text)
    assert layout.protected == ()


def test_table_without_leading_pipe() -> None:
    text = "Intro.\n\na | b\n--- | ---\n1 | 2\n\nOutro.\n"
    layout = scan_markdown(text)
    assert covered(layout, text, "a | b\n--- | ---\n1 | 2")


# --- references section -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "heading",
    [
        "## References",
        "# Sources",
        "### 参考文献",
        "## 参考资料：",
        "**References**",
        "**参考文献：**",
        "## 5. References",
        "## 七、参考文献",
        "Bibliography\n============",
        "#### Works Cited:",
        "## Reference Articles",
        "## 📚 Sources",
        "**来源**",
        "## Further Reading",
        "## Reference Links",
        "## 附录：参考文献",
        "## Appendix B: References",
        "## 参 考 文 献",
        "**Sources**\u200b",
        "<h2>References</h2>",
        '<h3 id="refs">参考文献</h3>',
        # Chinese headings with a modifier, a chapter number or a note in brackets
        "## 主要参考文献",
        "## 参考文献列表",
        "## 附：参考资料",
        "## 参考文献（按引用顺序）",
        "## 第七章 参考文献",
        "## 第七部分 参考文献",
        "## 资料来源与说明",
        "## 引文",
        "## References (selected)",
        # English headings with a modifier
        "## Key Sources",
        "## Sources Used",
        "## Works Consulted",
        "### Selected References",
        "## List of References",
    ],
)
def test_trailing_references_detected(heading: str) -> None:
    body = "# Report\n\nRevenue rose 5%.[1]\n\n"
    refs = f"{heading}\n\n[1] Title one https://a.example.com/x\n2. [Title two](https://b.example.com)\n"
    text = body + refs
    layout = scan_markdown(text)
    assert layout.references == (len(body), len(text))
    assert layout.body_end == len(body)
    assert text[: layout.body_end] == body


def test_crlf_references() -> None:
    body = "# Report\r\n\r\nRevenue rose 5%.[1]\r\n\r\n"
    text = body + "## References\r\n[1] A https://a.com\r\n"
    layout = scan_markdown(text)
    assert layout.body_end == len(body)


def test_references_inside_code_fence_is_ignored() -> None:
    text = "Prose.\n\n```markdown\n## References\n[1] https://a.com\n```\n"
    layout = scan_markdown(text)
    assert layout.references is None
    assert layout.body_end == len(text)


def test_non_trailing_references_heading_is_kept() -> None:
    text = (
        "# Report\n\n## Sources\n\nWe used many sources for this study, mostly interviews.\n"
        "They were collected in 2023 by the team.\n\n## Findings\n\nRevenue rose.\n"
    )
    layout = scan_markdown(text)
    assert layout.references is None
    assert layout.body_end == len(text)


def test_a_comment_after_the_entries_is_no_prose() -> None:
    text = "Intro.\n\n## References\n\n[1] A https://a.com\n\n<!-- generated by the writer -->\n"
    assert scan_markdown(text).references == (8, len(text))
    details = "Intro.\n\n## References\n\n[1] A https://a.com\n\n<details>\nmore\n</details>\n"
    assert scan_markdown(details).references is None   # a block that shows something is prose


def test_references_followed_by_closing_matter_are_cut_without_it() -> None:
    """An appendix, a disclaimer or an AI notice after the references is the report's own: the
    section ends before it (and it stays in the report, after the new references)."""
    refs = "## References\n[1] A https://a.com\n[2] B https://b.com\n\n"
    for closing in ("## Appendix\n\nThis appendix explains the method in detail.\nIt has two sentences.\n",
                    "## 免责声明\n\n本报告仅供参考，不构成任何投资建议。\n",
                    "## Appendix A\n\nWe read every filing.\n",
                    "*Report generated on 2024-05-01.*\n",               # a year, but a closing line
                    "© 2024 Acme Research. All rights reserved.\n",
                    "---\n\n*This report was generated by AI and may contain errors.*\n",
                    "**风险提示：** 本报告仅供参考，不构成任何投资建议。\n"):
        text = "Intro.\n\n" + refs + closing
        assert scan_markdown(text).references == (8, 8 + len(refs) - 1), closing


@pytest.mark.parametrize(
    "closing",
    ["## 七、风险提示\n\n宏观经济下行风险。\n", "## 免责声明与风险提示\n\n本报告仅供参考。\n",
     "## 法律声明及风险提示\n\n本报告仅供参考。\n", "## 分析师声明\n\n本人保证报告独立。\n",
     "## 附录：术语表\n\nGMV：成交总额。\n", "## Appendix: Survey method\n\nWe surveyed 1,000 managers.\n",
     "## Disclaimer and methodology\n\nWe surveyed 1,000 managers.\n",
     "## Notes\n\nAll figures in dollars.\n",
     "分析师：张三　报告日期：2025年1月15日\n", "（全文完）\n", "编辑：李四\n",
     "**免责声明：** 本报告仅供参考，\n不构成任何投资建议。\n",
     "## 注释\n\n本文数据均来自公开资料。\n", "## 作者简介\n\n张三，分析师。\n", "## 备注\n\n单位：亿元。\n",
     "注释：本文数据均来自公开资料。\n", "备注：单位为亿元。\n",
     # the questions a chat or search app suggests after its sources
     "## Related questions\n\n- When did Hubble launch?\n- What is JWST?\n",
     "## Follow-up questions\n\n1. When did Hubble launch?\n2. What is JWST?\n",
     "## People also ask\n\n- When did Hubble launch?\n", "## 猜你想问\n\n- 哈勃望远镜何时发射？\n"],
)
def test_closing_matter_of_more_kinds_is_not_cut(closing: str) -> None:
    refs = "## 参考资料\n[1] A https://a.com\n[2] B https://b.com\n"
    text = "Intro.\n\n" + refs + "\n" + closing
    assert scan_markdown(text).references == (8, 8 + len(refs)), closing


@pytest.mark.parametrize("closing", ["编辑：小王\n", "编辑：小王 | 审核：小李\n",
                                     "责任编辑：李四\n校对：王五\n"])
def test_a_byline_right_under_the_last_entry_is_closing_matter(closing: str) -> None:
    # WeChat articles end "参考资料：[1] … [2] …" with "编辑：…" on the next line, no blank line between
    refs = "参考资料：\n[1] 中国汽车工业协会\n[2] 乘联会\n"
    text = "出口增长[1]。渗透率创新高[2]。\n\n" + refs + closing
    start = text.index(refs)
    assert scan_markdown(text).references == (start, start + len(refs))
    # a line that is no byline stays the list's prose, as before
    prose = text.replace(closing, "以上数据仅供参考。\n")
    assert scan_markdown(prose).references != (start, start + len(refs))
    # indented, it goes on the entry above: the list is cut with it
    indented = text.replace(closing, "   " + closing.replace("\n", "\n   ").rstrip(" "))
    assert scan_markdown(indented).references == (start, len(indented))


def test_a_sources_own_line_right_under_its_entry_is_cut_with_the_list() -> None:
    # "© 2024 Reuters" under an entry, no blank line between, is that entry's
    refs = ("## References\n\n1. [Tesla Q4 2023 deliveries](https://ir.tesla.com/q4-2023)\n"
            "© 2024 Tesla, Inc.\n2. [BYD overtakes Tesla](https://www.reuters.com/byd-2024)\n"
            "© 2024 Reuters\n")
    text = "Tesla delivered 1,808,581 vehicles in 2023 [1]. BYD sold 3.02 million [2].\n\n" + refs
    assert scan_markdown(text).references == (text.index(refs), len(text))
    more = text + "3. [IEA](https://www.iea.org/x)\n"
    assert scan_markdown(more).references == (text.index(refs), len(more))


def test_a_closing_line_before_more_report_is_the_sections_prose() -> None:
    # "*All figures in US dollars.*" then "## Findings": the findings are the report's, so the
    # list before them is no trailing references section (nothing is cut, all is cited)
    text = ("Intro.\n\n## Sources\n[1] A https://a.com\n[2] B https://b.com\n\n"
            "*All figures in US dollars.*\n\n## Findings\n\n"
            "Revenue rose.\nCosts fell.\nMargins widened.\nHiring resumed.\nStores opened.\n")
    assert scan_markdown(text).references is None


@pytest.mark.parametrize(
    "after",
    [
        # more report of another title, short or long, or titled like closing matter only at its start
        "## Method\n\nWe read every filing.\n",
        "## About the telescope\n\nIt orbits far away.\n",
        "## Notes on methodology\n\nWe read every filing.\n",
        # more report that gives a link in a sentence: read, not cut as a group of entries
        "## Conclusion\n\nWebb will remain NASA's flagship observatory for at least a decade; "
        "follow it at https://webb.nasa.gov.\n",
        "## Appendix\n\nThe full data set, with every filing we read, is at https://data.example/x.\n",
        # closing matter that cites: its markers would keep the old numbers
        "## Appendix\n\nWebb orbits the second Lagrange point [1].\n",
        "## Appendix\n\nWebb orbits the second Lagrange point citeturn0search1.\n",   # a chat app's
        "## Appendix\n\nWebb orbits the second Lagrange point [web:1].\n",
        "## Appendix\n\nWebb orbits the second Lagrange point [attached_file:1].\n",
        '## Appendix\n\nWebb orbits the second Lagrange point<grok-card data-id="a1"></grok-card>.\n',
        "## Appendix\n\nWebb orbits the second Lagrange point.[cite: 1]\n",
    ],
)
def test_a_later_section_that_is_more_report_makes_no_closing_matter(after: str) -> None:
    text = "Intro.\n\n## References\n[1] A https://a.com\n[2] B https://b.com\n\n" + after
    assert scan_markdown(text).references is None


def test_a_closing_line_that_cites_is_cut_with_the_references_as_before() -> None:
    text = "Intro.\n\n## References\n[1] A https://a.com\n[2] B https://b.com\n\n*Data from [1].*\n"
    assert scan_markdown(text).references == (8, len(text))


def test_a_closing_line_right_under_a_rule_under_the_last_entry_is_closing_matter() -> None:
    refs = "## References\n[1] A https://a.com\n[2] B https://b.com\n"
    text = "Intro.\n\n" + refs + "---\n*This report was generated by AI.*\n"
    assert scan_markdown(text).references == (8, 8 + len(refs))


def test_a_references_line_right_under_the_last_sentence_opens_the_section() -> None:
    body = "Fact one [1]. Fact two [2].\n"
    for title in ("References:", "**Sources:**", "参考文献："):
        text = body + title + "\n[1] A https://a.com\n[2] B https://b.com\n"
        assert scan_markdown(text).references == (len(body), len(text)), title
    # not without its colon, nor under a line that does not end a sentence
    for text in ("Fact one [1].\nSources\n[1] A https://a.com\n[2] B https://b.com\n",
                 "Our two main\nReferences:\n[1] A https://a.com\n[2] B https://b.com\n"):
        assert scan_markdown(text).references is None, text


def test_titles_and_publishers_under_sources_are_references() -> None:
    text = ('Intro.\n\n## Sources\n\n1. "The State of AI in 2023" — McKinsey, 2023\n'
            '2. "World Energy Outlook" — IEA, 2024\n')
    assert scan_markdown(text).references == (8, len(text))


@pytest.mark.parametrize("refs", [
    "## 参考资料\n\n【来源1】国家统计局\n【来源2】中汽协\n",
    "## Sources\n\n[Ref. 1] Company filing\n[Ref. 2] Trade press\n",
    "## References\n\n- [doc1] Company filing\n- [doc2] Trade press\n",
    # and with no brackets, when they give a source: a URL, a year ("Source 1: …", "来源3：…")
    "## Sources\n\nSource 1: Company filing https://a.example/f\nSource 2: Trade press, 2024\n",
    "## References\n\n- **Ref 1.** Company filing\n- **Ref 2.** Trade press\n",
    "## 参考资料\n\n来源1：国家统计局 https://stats.example/x\n来源2 - 中汽协，2024\n",
])
def test_entries_labelled_with_a_word_and_a_number_are_references(refs: str) -> None:
    """"【来源1】…", "[Ref. 1] …": the labels the body's "[来源1]" / "[Ref. 1]" markers name."""
    text = "Intro.\n\n" + refs
    assert scan_markdown(text).references == (8, len(text))


@pytest.mark.parametrize("section", [
    "## Sources\n\nSource 1: the municipal well near the school\n"
    "Source 2: the river intake below the bridge\n",
    "## 来源\n\n来源1：学校附近的市政水井\n来源2：大桥下游的取水口\n",
])
def test_lines_that_describe_sources_of_a_thing_are_no_references(section: str) -> None:
    """"Source 1: the municipal well": a label and a description, no source's URL, year or title."""
    assert scan_markdown("The town draws its water from two sources.\n\n" + section).references is None


def test_a_references_heading_followed_by_the_report_is_not_cut() -> None:
    # a long section of another title after a list of sources is more report, not closing matter
    text = (
        "Intro.\n\n## References\n[1] A https://a.com\n\n## Findings\n\n"
        "Revenue rose.\nCosts fell.\nMargins widened.\nThe outlook improved.\nHiring resumed.\n"
    )
    assert scan_markdown(text).references is None
    # nor is a last line of an entry that runs on without indentation the closing matter
    wrapped = ("Intro.\n\n## References\n\n[1] A https://a.com\n[2] Smith, J. A long title\n"
               "that continues here.\n")
    assert scan_markdown(wrapped).references == (8, len(wrapped))


def test_a_table_of_references_is_a_section() -> None:
    text = ("Intro.\n\n## References\n\n| # | Source | Link |\n|---|---|---|\n"
            "| 1 | Alpha report | https://a.com/x |\n| 2 | Beta facts | https://b.com/y |\n")
    assert scan_markdown(text).references == (8, len(text))


def test_references_with_subheadings_of_entries() -> None:
    body = "Intro.\n\n"
    text = body + "## 参考文献\n\n### 网页\n[1] 甲 https://a.cn\n\n### 论文\n[2] 乙 https://doi.org/10.1/x\n"
    assert scan_markdown(text).body_end == len(body)


def test_last_of_two_references_headings_wins_only_if_first_is_not_trailing() -> None:
    text = (
        "## Sources\n\nThe sources we used were interviews with staff.\nMore prose here.\n"
        "And more prose.\n\n## References\n- [A](https://a.com)\n"
    )
    layout = scan_markdown(text)
    assert layout.body_end == text.index("## References")


def test_empty_trailing_references_heading_is_cut() -> None:
    text = "Prose.\n\n## References\n"
    assert scan_markdown(text).body_end == text.index("## References")


def test_reference_entries_without_urls() -> None:
    text = "Prose.\n\n## Bibliography\n1. Smith, J. (2020). A book. Publisher.\n2. Doe, A. (2019). Paper.\n"
    assert scan_markdown(text).body_end == text.index("## Bibliography")


def test_footnote_definitions_as_references() -> None:
    text = "Prose.[^1]\n\n## Sources\n\n[^1]: https://a.com Title\n"
    assert scan_markdown(text).body_end == text.index("## Sources")


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("References", True),
        ("references:", True),
        ("REFERENCES", True),
        ("参考文献：", True),
        ("1. Sources", True),
        ("Source(s)", True),
        ("**引用**", True),
        ("References and Further Reading", True),
        ("Notes & Sources", True),
        ("参考文献与资料来源", True),
        ("参考文献（References）", True),
        ("参考文献 References", True),
        ("References (参考资料)", True),
        ("Notes and comments", False),
        ("Sources of growth", False),
        ("Referenced data", False),
        ("Source code", False),
        ("Introduction", False),
        ("附录", False),
        ("Appendix: Methods", False),
        ("参 考", True),
        ("Linked sources of growth", False),
        ("Key findings", False),
        ("Main results", False),
        ("Methods used", False),
        ("Key sources of revenue", False),
    ],
)
def test_is_references_title(title: str, expected: bool) -> None:
    assert is_references_title(title) is expected


def test_no_references_body_is_whole_text() -> None:
    text = "Just prose. More prose.\n"
    layout = scan_markdown(text)
    assert layout.references is None
    assert layout.body_end == len(text)


def test_empty_text() -> None:
    layout = scan_markdown("")
    assert layout.body_end == 0
    assert layout.protected == ()


@pytest.mark.parametrize("line", ["References:", "参考资料：", "Sources"])
def test_plain_references_line_with_entries(line: str) -> None:
    body = "Revenue rose 5%.[1]\n\n"
    text = body + f"{line}\n1. Alpha https://a.com\n2. Beta https://b.com\n"
    assert scan_markdown(text).body_end == len(body)


def test_plain_references_line_needs_entries_and_no_prose() -> None:
    assert scan_markdown("Intro.\n\nSources:\nwere many and varied in this study.\n").references is None
    assert scan_markdown("Intro.\n\nReferences:\n").references is None


@pytest.mark.parametrize(
    "section",
    [
        "## Citations\n\nPolice issued 4,512 citations in 2023, up 12% from 2022.\n",
        "## 引用\n\n他说：“我们会赢。”\n",
        "## 来源\n\n1. 收入在2023年增长了5%。\n2. 成本在2022年下降了3%。\n",
        "References:\n\nThe data were collected in 2023 by the national statistics office.\n",
        "## Sources\n\n- According to the agency, sales reached 14 million in 2023.\n",
        # figures under a label, and quotations: a list of data or of sayings, not of sources
        "## Sources\n\n- Coal: 55.3% of supply in 2023\n- Oil: 18.3% of supply in 2023\n",
        "## 来源\n\n- 煤炭：2023年占比55.3%\n- 石油：2023年占比18.3%\n- 天然气：2023年占比8.5%\n",
        "## 引用\n\n- “人工智能是新的电力。”——吴恩达，2017年\n- “软件正在吞噬世界。”——马克·安德森，2011年\n",
    ],
)
def test_a_section_of_sentences_is_body_even_under_a_references_title(section: str) -> None:
    # a year or a number makes a line look like an entry; a sentence is still a sentence
    assert scan_markdown("Intro.\n\n" + section).references is None


@pytest.mark.parametrize(
    "section",
    [
        "## References\n\n1. Smith, J. (2020). The oceans are warming. Journal of Climate, 12(3), 45-67.\n"
        "2. Lee, K. et al. Global trends in electric vehicles. 2021.\n",
        "## 参考文献\n\n[1] 张三. 电动汽车发展报告[R]. 北京: 科学出版社, 2020.\n"
        "[2] 《新能源汽车年鉴》，国家统计局，2023\n",
        "## Sources\n\n- Norwegian Road Federation, new car registrations, 2023\n"
        "- IEA Global EV Outlook 2024\n",
        "## References\n\n1. The agency reported that sales rose in 2023. https://a.example/x\n",
        "## 数据来源\n\n- 国家统计局2023年统计公报\n- 中国汽车工业协会月度数据\n",
        # under an unmistakable title, a list with figures is still the references
        "## References\n\n- Coal: 55.3% of supply in 2023\n- Oil: 18.3% of supply in 2023\n",
        "## Sources\n\n- IEA: 55.3% of supply, https://iea.example/coal\n- BP: 18.3% https://bp.example/oil\n",
    ],
)
def test_entries_that_read_like_references_are_still_a_section(section: str) -> None:
    assert scan_markdown("Intro.\n\n" + section).references is not None


def test_dash_line_after_list_item_is_not_setext() -> None:
    text = "- item\n---\n"
    layout = scan_markdown(text)
    assert layout.headings == ()


def test_bare_url_with_many_closing_parens_is_fast_and_trimmed() -> None:
    text = "see https://a.b/" + ")" * 30000 + " ok"
    assert scan_markdown(text).protected == ((4, 16),)


def test_fence_nested_in_list_item() -> None:
    text = "1. Install it:\n    ```bash\n    pip install x. Then run.\n    ```\n2. Run it.\n"
    layout = scan_markdown(text)
    assert covered(layout, text, "    ```bash\n    pip install x. Then run.\n    ```")
    assert not touched(layout, text, "2. Run it.")


@pytest.mark.parametrize(
    ("text", "fence"),
    [
        ("Prose.\n\n```py\ncode\n", "```"),
        ("Prose.\n\n~~~~\ncode", "~~~~"),
        ("- item\n    ```\n    code\n", "```"),
        ("Prose.\n\n```\ncode\n```\n", ""),
        ("Prose.\n\n```\ncode\n```", ""),
        ("Prose with ``` inline.\n", ""),
        ("```\n", "```"),
        ("Prose.\n\n```\ncode\n\n## References\n[1] A https://a.com\n", "```"),
        ("Prose.\n\n<!-- draft\n\n## References\n[1] A https://a.com\n", "-->"),
        ("Prose.\n\n<!-- a --> b\n", ""),
        ("Prose.\n\n<!--\nnote\n-->\n", ""),
        ("Prose.\n\n  <PRE>\ncode\n", "</pre>"),
        ("Prose.\n\n<pre>\ncode\n</PRE>\n", ""),
        ("Prose.\n\n<script>\nx = 1\n", "</script>"),
        ("Prose.\n\n<style>\np {}\n", "</style>"),
        ("Prose.\n\n<textarea>\ntext\n", "</textarea>"),
        ("Prose.\n\n<div>\ntext\n", ""),
        ("Prose. Run ```pip install\nevstats```", ""),
        ("Prose. Run ```pip\n", ""),
    ],
)
def test_unclosed_block(text: str, fence: str) -> None:
    assert unclosed_block(text, scan_markdown(text)) == fence


def test_unnumbered_citation_lines_and_a_footer() -> None:
    body = "Prose.\n\n"
    text = (
        body + "## Sources\n"
        'Reuters, "Tesla deliveries", Jan 2024.\n'
        "《2023年统计公报》，国家统计局\n\n---\n\n*Generated automatically by the writer*\n"
    )
    assert scan_markdown(text).body_end == len(body)


def test_one_entry_and_a_prose_paragraph_is_not_cut() -> None:
    text = "Prose.\n\n## Sources\n- https://a.com\n\nWe also talked to many experts in the field.\n"
    assert scan_markdown(text).references is None


def test_text_reference_link_with_a_numeric_label_is_protected() -> None:
    # "[see][1]" with "[1]: url" defined is a link; only "[1][3]"-shaped pairs are citation markers
    text = "Intro [see][1] and [1][3].\n\n[1]: https://z.example.com\n\nEnd."
    prot = [text[a:b] for a, b in scan_markdown(text).protected]
    assert "[see][1]" in prot
    assert "[1][3]" not in prot


def test_trailing_numbered_link_definitions_are_the_references() -> None:
    # "[1]: url" lines at the end are an LLM's references list; left in the body they would
    # turn the renumbered "[1]" markers into links to the old sources
    body = "Fact one.[2] Fact two.[1]\r\n\r\n"
    text = body + "[1]: https://b.example.com/y\r\n[2]: https://a.example.com/x \"A\"\r\n"
    layout = scan_markdown(text)
    assert layout.body_end == len(body)
    assert layout.references == (len(body), len(text))
    # but not when the body links through them, or when prose shares the block
    for text in ("See [docs][1].\n\n[1]: https://z.example.com\n", "Fact.\n\nNote\n[1]: https://z.example.com\n"):
        assert scan_markdown(text).references is None


@pytest.mark.parametrize("defs", [
    "[2]: https://example.com/operator\n",
    "[2]: https://example.com/operator\n[3]: https://example.com/b \"B\"\n",
    "[^2]: [Operator](https://example.com/operator)\n",
])
@pytest.mark.parametrize("gap", ["\n", "\n\n\n"])
@pytest.mark.parametrize("after", ["", "\n---\n\n*Generated by AI.*\n"])
def test_link_definitions_right_above_the_references_heading_are_cut_with_it(
        defs: str, gap: str, after: str) -> None:
    # without the section they end the report and are its references: a second trace cut them
    body = "The rocket launched in 2021 [1]. See the operator [2] for more.\n\n"
    refs = "## References\n\n[1] Some source https://example.com/a\n"
    text = body + defs + gap + refs + after
    layout = scan_markdown(text)
    assert layout.body_end == len(body)
    assert layout.references == (len(body), len(body + defs + gap + refs))


@pytest.mark.parametrize("text", [
    # the body links through them ("[text][2]")
    "See the [operator][2].\n\n[2]: https://example.com/operator\n\n## References\n\n[1] A https://a.example\n",
    # a paragraph between them and the heading
    "See the operator [2].\n\n[2]: https://example.com/operator\n\nMore.\n\n## References\n\n"
    "[1] A https://a.example\n",
    # entries taken for what the body cites, which the new markers change
    "Fact [3].\n\n[1] Other https://o.example\n\n## References\n\n[3] A https://a.example\n",
    # a rule under them: a report that ends so keeps them too
    "See the operator [2].\n\n[2]: https://example.com/operator\n\n---\n\n## References\n\n"
    "[1] A https://a.example\n",
    # a footnote that is a note
    "Fact [^2].\n\n[^2]: A note on the figure.\n\n## References\n\n[1] A https://a.example\n",
])
def test_what_stays_above_the_references_heading(text: str) -> None:
    layout = scan_markdown(text)
    assert layout.references is not None
    assert text[layout.body_end:].startswith("## References")


def test_trailing_footnote_definitions_that_give_urls_are_the_references() -> None:
    # how many writers emit their sources: left in the body they make a second list
    body = "Fact one.[^1] Fact two.[^src]\n\n"
    text = body + "[^1]: [Alpha](https://a.example.com/x)\n[^src]: Beta,\n    https://b.example.com/y\n"
    assert scan_markdown(text).references == (len(body), len(text))
    # a footnote that is a note keeps the whole block in the body
    for notes in ("[^1]: A note on the figure.\n", "[^1]: https://a.example.com/x\n[^2]: Only a note.\n"):
        assert scan_markdown("Fact.[^1]\n\n" + notes).references is None


@pytest.mark.parametrize("gap", ["\n", "\n---\n\n", "\n***\n"])
def test_a_trailing_headingless_list_of_numbered_sources_is_the_references(gap: str) -> None:
    # "[1] Title. https://…" lines after a blank line or a rule, one per line or a blank line
    # apart: left in the body they would keep the old numbers beside the new list
    body = "Fact one [1]. Fact two [2].\n" + gap
    for refs in ("[1] Alpha. https://a.example.com/x\n[2] [Beta](https://b.example.com/y)\n",
                 "[1] Alpha. https://a.example.com/x\n\n[2] Beta,\n    https://b.example.com/y\n",
                 "[1] Alpha,\n    https://a.example.com/x\n\n[2] Beta,\n    https://b.example.com/y\n",
                 "【1】甲报告 https://a.example.com/x\n【2】乙报告 https://b.example.com/y\n"):
        text = body + refs
        assert scan_markdown(text).references == (len(body), len(text)), refs


def test_numbered_sources_right_under_the_last_sentence_are_the_references() -> None:
    # no blank line between (as some chat apps copy them): markdown reads one paragraph, but
    # "[n] Title https://…" lines under a sentence's end that the body cites are its sources
    for body, refs in (
        ("2024年全国新能源乘用车零售1089.9万辆[1]。特斯拉2024年交付178.9万辆[2]。\n",
         "[1] 乘联会 https://a.example.cn/x\n[2] 特斯拉2024年交付量 https://b.example.cn/y\n"),
        ("Fact one [1]. Fact two [2]\n", "[1] Alpha. https://a.example.com/x\n[2] [Beta](https://b.example.com/y)\n"),
    ):
        assert scan_markdown(body + refs).references == (len(body), len(body + refs)), body
    for text in (
        "Fact one [1].\n[1] Alpha https://a.example.com\n",                  # one entry
        "Fact one. Fact two.\n[1] Alpha https://a.example.com\n[2] Beta https://b.example.com\n",  # uncited
        "Sources such as\n[1] Alpha https://a.example.com\n[2] Beta https://b.example.com\n",  # mid-sentence
        "Fact [1] [2].\n[1] Alpha found that https://a.example.com is down.\n[2] Beta https://b.example.com\n",
        "Fact [1] [2].\n1. Alpha https://a.example.com\n2. Beta https://b.example.com\n",  # a list item
    ):
        assert scan_markdown(text).references is None, text


def test_a_headingless_numbered_list_needs_a_source_link_and_a_block_of_its_own() -> None:
    for text in (
        "Fact [1].\n\n[1] Alpha, a report.\n[2] Beta, a book.\n",         # no link: notes, not sources
        "Fact [1].\nSee:\n[1] Alpha https://a.example.com\n[2] B https://b.example.com\n",  # a paragraph's
        "Fact one.\n\n[1] Alpha https://a.example.com\n",            # one entry the body never cites
        "Fact [1].\n\n[1] Alpha https://a.example.com\nIt rained all week.\n",   # prose after it
    ):
        assert scan_markdown(text).references is None, text
    text = "Fact [1].\n\n[1] Alpha https://a.example.com\n"          # one entry the body cites
    assert scan_markdown(text).references == (11, len(text))


@pytest.mark.parametrize("gap", ["\n", "\n---\n\n"])
def test_a_trailing_numbered_list_of_links_the_body_cites_is_the_references(gap: str) -> None:
    # "1. https://…" after the last paragraph, its numbers cited as "[1]": left in the body, the
    # report would end with two lists and its markers would not resolve
    body = "Fact one [1]. Fact two [2].\n" + gap
    for refs in ("1. https://a.example.com/x\n2. [Beta](https://b.example.com/y)\n",
                 "1) Alpha report, https://a.example.com/x\n2) Beta https://b.example.com/y\n",
                 "1. Alpha report\n   https://a.example.com/x\n2. Beta\n   https://b.example.com/y\n",
                 "1. 甲报告 https://a.example.com/x\n\n2. 乙报告 https://b.example.com/y\n"):
        text = body + refs
        assert scan_markdown(text).references == (len(body), len(text)), refs


def test_a_trailing_numbered_list_of_links_is_more_reading_unless_the_body_cites_it() -> None:
    refs = "1. Alpha https://a.example.com/x\n2. [Beta](https://b.example.com/y)\n"
    for body in ("Fact one. Fact two.\n\n",                  # no marker: the author's further reading
                 "Fact one [1]. Fact two [5].\n\n",           # [5] is none of its entries
                 "Fact one [1].\nRead:\n"):                  # a paragraph's own list
        assert scan_markdown(body + refs).references is None, body
    for refs in ("1. Go to https://a.example.com/x and sign in with your account.\n2. Click [here](https://b.example.com).\n",
                 "1. Alpha https://a.example.com/x\n2. A book with no address\n"):
        assert scan_markdown("Do this [1].\n\n" + refs).references is None, refs
    # a year in brackets is no citation past the list
    text = "Fact [1], as in [2020].\n\n1. Alpha https://a.example.com/x\n"
    assert scan_markdown(text).references == (text.index("1. Alpha"), len(text))


@pytest.mark.parametrize("heading", ["<h2>References</h2>\n", "## References\n\n", "<h3>参考资料</h3>\n\n"])
def test_an_html_list_of_sources_under_a_references_heading_is_cut(heading: str) -> None:
    body = "Fact one [1]. Fact two [2].\n\n"
    for refs in ('<ol>\n<li><a href="https://a.example.com/x">Alpha</a></li>\n'
                 '<li>Beta https://b.example.com</li>\n</ol>\n',
                 "<ol>\n  <li><a href='https://a.example.com/x'>Alpha</a>\n\n"
                 "  <li>Beta, www.b.example.com\n</ol>\n"):
        text = body + heading + refs
        assert scan_markdown(text).references == (len(body), len(text)), refs
    # an item without a link, or other markup in the block, keeps it no list of sources
    for refs in ('<ol>\n<li><a href="https://a.example.com/x">Alpha</a></li>\n<li>A book</li>\n</ol>\n',
                 '<div><ol><li><a href="https://a.example.com/x">Alpha</a></li></ol></div>\n'):
        assert scan_markdown(body + heading + refs).references is None, refs


def test_a_numbered_list_of_the_bodys_links_above_the_references_stays() -> None:
    # one kind of entry per list: the "[1]" list (or "[1]:" / "[^1]:" definitions) is cut, the
    # body's own numbered links above it stay, whatever numbers the body cites
    steps = "To follow the decisions:\n\n1. Subscribe at https://fed.example/sub\n2. Calendar https://fed.example/cal\n\n"
    for body, refs in (
            ("Rates rose [1].\n\n" + steps, "[1] Reuters. https://r.example.com/a\n"),
            ("Rates rose [1].\n\n" + steps, "[1]: https://r.example.com/a\n"),
            ("Rates rose[^1].\n\n" + steps, "[^1]: [Reuters](https://r.example.com/a)\n"),
            ("Rates rose [1]. Jobs [2]. Other [3].\n\n1. [FRED](https://fred.example)\n2. [CME](https://cme.example)\n\n",
             "[1] Reuters. https://r.example.com/a\n[2] AP. https://ap.example.com/b\n[3] C. https://c.example.com\n")):
        text = body + refs
        assert scan_markdown(text).references == (len(body), len(text)), text


def test_a_numbered_list_of_links_the_report_introduces_or_that_gives_steps_stays() -> None:
    links = "1. [CME FedWatch](https://cme.example/fw)\n2. [FRED](https://fred.example)\n"
    for text in (
        "Rates rose [1]. Jobs fell [2].\n\nTo track rates yourself, these sites are useful:\n\n" + links,
        "利率上升[1]。就业下降[2]。\n\n推荐关注以下网站：\n\n" + links,
        "Renew it [1] [2] [3].\n\n1. Check eligibility at https://travel.example/renew\n"
        "2. Download the form from https://travel.example/form\n3. Pay the fee at https://pay.example\n",
        "Call `argv[1]` and `argv[2]`.\n\n" + links,                    # code, not citations
        # the body cites one of three
        "Rates rose [1].\n\n1. A https://a.example\n2. B https://b.example\n3. C https://c.example\n",
    ):
        assert scan_markdown(text).references is None, text
    # a list numbered "1、", cited as "[1, 2]", is cut
    text = "利率上升[1, 2]。\n\n1、路透社 https://r.example.com/a\n2、美联社 https://ap.example.com/b\n"
    assert scan_markdown(text).references == (text.index("1、"), len(text))


def test_a_last_bulleted_list_of_links_the_body_cites_by_place_is_the_references() -> None:
    """"- [Title](url)" lines at the end, the body citing "[1]", "[2]": as a numbered list's, each
    item is the entry its place numbers; a list the body does not cite, one it introduces, one
    whose items say more than a link, and one in the middle of the report stay."""
    links = "- [CME FedWatch](https://cme.example/fw)\n- [FRED](https://fred.example)\n"
    for body in ("Rates rose [1]. Jobs fell [2].\n\n", "Rates rose [1]. Jobs fell [2].\n\n---\n\n",
                 "利率上升[1]。就业下降[1, 2]。\n\n"):
        text = body + links
        assert scan_markdown(text).references == (len(body), len(text)), text
    spaced = "Rates rose [1]. Jobs fell [2].\n\n* https://cme.example/fw\n\n* https://fred.example\n"
    assert scan_markdown(spaced).references == (spaced.index("* https"), len(spaced))
    for text in (
        "Rates rose. Jobs fell.\n\n" + links,                                      # nothing cited
        "Rates rose [1]. Jobs fell [3].\n\n" + links,                              # [3] past it
        "Scores lie in [0, 1]. Jobs fell.\n\n" + links,                           # an interval
        "Rates rose [1]. Jobs fell [2].\n\nThese sites are useful:\n\n" + links,  # introduced
        "Rates rose [1]. Jobs fell [2].\n\n- Track rates at https://cme.example/fw\n- [FRED](https://fred.example)\n",
        "Rates rose [1]. Jobs fell [2].\n\n" + links + "\nMore prose after the list.\n",
        "Rates rose [1]. Jobs fell [2].\n\n1. [CME](https://cme.example/fw)\n- [FRED](https://fred.example)\n",
        # under a label, or under another list: the body's (a helper's review)
        "Rates rose [1]. Jobs fell [2].\n\n**Next steps**\n\n- Download the [data](https://d.example/x)\n"
        "- Read the [method](https://m.example/y)\n",
        "Rates rose [1]. Jobs fell [2].\n\nTools we used\n\n" + links,
        "Rates rose [1]. Jobs fell [2].\n\n1. [Reuters](https://r.example/a)\n2. [AP](https://ap.example/b)\n\n"
        + links,
    ):
        assert scan_markdown(text).references is None, text
    # a nested item is part of the one above it
    nested = ("Rates rose [1]. Jobs fell [2].\n\n- [CME](https://cme.example/fw)\n"
              "  - [mirror](https://m.example/fw)\n- [FRED](https://fred.example)\n")
    assert scan_markdown(nested).references == (nested.index("- [CME]"), len(nested))


@pytest.mark.parametrize("heading",
                         ["## Notes", "## Endnotes", "### 相关链接", "## 注释", "## 4. Useful links"])
def test_a_list_of_sources_under_a_notes_heading_that_the_body_cites_is_the_references(heading: str) -> None:
    """Under "## Notes" or "## 相关链接" (no references title) the list is the references, heading
    and all, where the same list without the heading would be: the body cites its numbers; not
    where it cites none of them, or the entries are notes without a source link."""
    body = "Rates rose [1]. Jobs fell [2].\n\n"
    for entries in ("1. CME FedWatch - https://cme.example/fw\n2. FRED - https://fred.example\n",
                    "[1] CME FedWatch https://cme.example/fw\n[2] FRED https://fred.example\n",
                    "- [CME FedWatch](https://cme.example/fw)\n- [FRED](https://fred.example)\n"):
        text = f"{body}{heading}\n\n{entries}"
        assert scan_markdown(text).references == (len(body), len(text)), text
    for text in (f"Rates rose. Jobs fell.\n\n{heading}\n\n1. CME - https://cme.example/fw\n"
                 "2. FRED - https://fred.example\n",
                 f"{body}{heading}\n\n1. The rate is the target's midpoint.\n2. Jobs are nonfarm payrolls.\n",
                 f"{body}## Results\n\n1. CME - https://cme.example/fw\n2. FRED - https://fred.example\n",
                 # "[n]" entries the body does not cite, notes that give a link among what they say,
                 # footnotes, and more reading after the body's own list of sources (a helper's review)
                 f"Rates rose. Jobs fell.\n\n{heading}\n\n[1] CME https://cme.example/fw\n"
                 "[2] FRED https://fred.example\n",
                 f"{body}{heading}\n\n[1] The rate is the midpoint of the target range; see "
                 "https://cme.example/fw for the odds.\n"
                 "[2] Payrolls exclude farm workers (https://fred.example) and are revised.\n",
                 f"Rates rose [^1].\n\n{heading}\n\n[^1]: [CME FedWatch](https://cme.example/fw)\n",
                 f"{body}{heading}\n\n[1] 此处为批发口径，零售口径约为1090万辆，详见 https://cme.example/fw\n"
                 "[2] 含插电混动车型，见 https://fred.example\n",
                 f"{body}[1] CME https://cme.example/fw\n[2] FRED https://fred.example\n\n{heading}\n\n"
                 "- [CME data](https://cme.example/data) – odds\n- [BLS](https://bls.example) – payrolls\n"):
        assert scan_markdown(text).references is None, text


@pytest.mark.parametrize("entries", [
    "- [CME FedWatch](https://cme.example/fw) – rate odds by meeting\n"
    "- [FRED](https://fred.example) — payrolls\n",
    "- [CME FedWatch](https://cme.example/fw): rate odds by meeting\n"
    "- [FRED](https://fred.example): payrolls\n",
    "1. [CME FedWatch](https://cme.example/fw) - rate odds\n2. **[FRED](https://fred.example)** | payrolls\n",
    "1. https://cme.example/fw – rate odds\n2. https://fred.example – payrolls\n",
])
def test_a_last_list_of_links_each_with_what_it_is_after_a_dash_is_the_references(entries: str) -> None:
    """An entry that opens with its link and says what the source is after a dash or a colon is an
    entry, as one that ends with its link is; a step's link is followed by no such separator."""
    body = "Rates rose [1]. Jobs fell [2].\n\n"
    text = body + entries
    assert scan_markdown(text).references == (len(body), len(text)), text
    steps = (body + "1. [Download](https://d.example/x) and install it.\n"
             "2. [Sign in](https://s.example/y) first.\n")
    assert scan_markdown(steps).references is None


def test_a_sources_section_that_is_no_list_stays_before_a_later_references_list() -> None:
    """"## Sources" over descriptions of data sources is no references list on its own, so a
    "## References" list after it (the trace's own, on a second trace) is cut alone."""
    sources = ("## Sources\n\n- Company filings: Tesla's quarterly \"Production and Deliveries\" release.\n"
               "- Industry data: the IEA's annual outlook.\n")
    text = "Tesla delivered 1.79 million vehicles [1].\n\n" + sources
    assert scan_markdown(text).references is None
    text += "\n## References\n\n[1] [Tesla deliveries](https://r.example/t)\n"
    assert scan_markdown(text).references == (text.index("## References"), len(text))


@pytest.mark.parametrize("heading", ["## Useful links", "## 相关链接", "## 延伸阅读"])
def test_more_reading_after_the_references_stays_the_reports(heading: str) -> None:
    """"## Useful links" after the references list is more reading, no source the body cites: it
    stays in the report, after the new list, and a second trace reads it the same."""
    from tracer import trace

    refs = "## References\n\n[1] Wuhan bridge https://b.example/bridge\n"
    more = f"{heading}\n\n- [CME FedWatch](https://cme.example/fw)\n- [FRED](https://fred.example)\n"
    text = "The Wuhan Yangtze River Bridge opened to traffic in 1957 [1].\n\n" + refs + "\n" + more
    assert scan_markdown(text).references == (text.index(refs), text.index(refs) + len(refs))
    records = [{"url": "https://b.example/bridge", "title": "Wuhan bridge",
                "content": "The Wuhan Yangtze River Bridge opened to traffic in 1957."}]
    once = trace(text, records)
    assert once.report.endswith(more) and once.removed_references == refs, once.report
    assert trace(once.report, records).report == once.report
    # ... but a list that cites on under it is still the section's
    cited = text.replace("(https://fred.example)", "(https://fred.example) [1]")
    assert scan_markdown(cited).references == (cited.index(refs), len(cited))


def test_one_spaced_entry_the_body_cites_spaced_is_the_references() -> None:
    text = "Fact [ 1 ].\n\n[ 1 ] Title https://a.example/x\n"
    assert scan_markdown(text).references == (text.index("[ 1 ] Title"), len(text))


def test_a_list_of_mla_entries_is_a_references_list() -> None:
    """'1. "Apple sales." *Apple*, 2023, apple.example.com/x.': a quoted title with its period inside
    and a URL without its scheme make an entry, not a sentence."""
    body = "Apple sold 230 million iPhones [1]. Tesla delivered 1.8 million [2].\n\n"
    text = (body + '## Works Cited\n\n1. "Apple sales." *Apple*, 2023, apple.example.com/x.\n'
            '2. "Tesla reports deliveries." *Tesla*, 2 Jan. 2024, tesla.example.com/ir/deliveries.\n')
    assert scan_markdown(text).references == (len(body), len(text))


@pytest.mark.parametrize("line", [
    'We collected figures from the IEA\'s "Global EV Outlook," and checked them against https://www.iea.org/data.',
    "Our scraper, written in Node.js/Express, pulled the figures from https://www.iea.org/data every night.",
    "Monthly figures were pulled from www.iea.org/data and checked against the makers' releases.",
])
def test_a_section_of_prose_after_the_references_stays_the_reports(line: str) -> None:
    """A quotation with its comma inside the quotes, "Node.js/Express", or a URL without its scheme
    make no line a bibliography entry (cut as one more source under another heading): only an MLA
    entry's quoted title and a bare URL at its end do."""
    refs = ("## References\n\n1. Tesla deliveries fall in 2024 - https://r.example/t\n"
            "2. BYD overtakes Tesla - https://b.example/b\n\n")
    text = ("Tesla delivered 1.79 million [1]. BYD sold 4.27 million [2].\n\n" + refs + "## Methodology\n\n"
            + line + "\n")
    cut = scan_markdown(text).references
    assert cut is None or cut[1] <= text.index("## Methodology"), cut


@pytest.mark.parametrize("heading", ["## 参考网址", "## 参考网站", "## 文献来源", "**引用资料**"])
def test_more_chinese_references_titles(heading: str) -> None:
    text = f"利率上升。\n\n{heading}\n\n- 联储 https://cme.example/fw\n"
    assert scan_markdown(text).references == (text.index(heading), len(text))


@pytest.mark.parametrize("line", [
    "Sources: [Reuters](https://r.example.com/a), [AP](https://ap.example.com/b)\n",
    "**Sources:** https://r.example.com/a; https://ap.example.com/b\n",
    "References: <https://r.example.com/a> and <https://ap.example.com/b>.\n",
    "来源：[新华网](https://x.example.cn/a)、[人民网](https://p.example.cn/b)\n",
    "Sources: ([Reuters](https://r.example.com/a), [AP](https://ap.example.com/b))\n",
    # its entries numbered, each with a short title or none
    "Sources: [1] https://r.example.com/a [2] https://ap.example.com/b\n",
    "**References:** [1] Reuters, https://r.example.com/a; [2] [AP](https://ap.example.com/b)\n",
    "来源：【1】新华网 https://x.example.cn/a 【2】人民网 https://p.example.cn/b\n",
    "Sources: ([1] https://r.example.com/a, [2] https://ap.example.com/b)\n",
    "Sources: [1](https://r.example.com/a), [2](https://ap.example.com/b)\n",
    "**Sources:** [1] [Reuters](https://r.example.com/a) [2] ESA – https://ap.example.com/b.\n",
])
def test_a_last_line_listing_the_sources_is_the_references(line: str) -> None:
    for body in ("Fact one. Fact two.\n\n", "Fact one. Fact two.\n\n---\n\n"):
        text = body + line
        assert scan_markdown(text).references == (len(body), len(text)), text


def test_sentences_wrapped_by_a_chat_app_make_no_references_list() -> None:
    """ChatGPT's '^[A fact.]({"attribution":…})' tail is no link: a last list of such facts, under a
    body that cites its numbers, is the report's."""
    tail = '({"attribution":{"attributableIndex":"1-1"}})'
    text = f"Rates rose [1], [2].\n\n1. ^[Rates rose in May.]{tail}\n2. ^[Rates fell in June.]{tail}\n"
    assert scan_markdown(text).references is None


def test_a_references_heading_over_a_note_and_a_sub_heading_is_cut_whole() -> None:
    # a sub-heading groups the entries: the note under the outer heading is the section's, not
    # prose before a later references heading
    body = "Webb launched on 25 December 2021 [1].\n\n"
    for section in ("## 参考资料\n\n以下为本文引用的资料。\n\n### 参考文献\n\n",
                    "## Sources and References\n\nThe data come from two public reports.\n\n"
                    "### References\n\n"):
        text = body + section + "[1] Alpha https://a.example/x\n[2] Beta https://b.example/y\n"
        assert scan_markdown(text).references == (len(body), len(text)), section


def test_a_last_line_with_words_beside_its_links_is_the_reports() -> None:
    for text in ("Fact one.\nSources: [Reuters](https://r.example.com/a)\n",      # the paragraph's own line
                 "Fact one.\n\nSources: Reuters and [AP](https://ap.example.com/b)\n",
                 "Fact one.\n\nSource: our own survey of 300 people.\n",
                 "Fact one.\n\nNote: [AP](https://ap.example.com/b)\n",          # no references title
                 "Fact one.\n\nSources: [Reuters](https://r.example.com/a)\n\nMore prose.\n",
                 # a caption: one link under a singular title, or under a table or an image
                 "Fact one.\n\nSource: [Federal Reserve H.15](https://fed.example/h15)\n",
                 "事实一。\n\n数据来源：[国家统计局](https://stats.example.cn)\n",
                 "| a | b |\n|---|---|\n| 1 | 2 |\n\nSources: [A](https://a.example), [B](https://b.example)\n",
                 "![chart](c.png)\n\nSources: [A](https://a.example), [B](https://b.example)\n",
                 # each story's own line, or a list item's
                 "Story one.\n\nSources: [A](https://a.example), [B](https://b.example)\n\nStory two.\n\n"
                 "Sources: [C](https://c.example), [D](https://d.example)\n",
                 "Fact one.\n\n- Sources: [A](https://a.example), [B](https://b.example)\n",
                 # a heading's own line, and a line of code
                 "Fact one.\n\n## Notes\n\nSources: [A](https://a.example), [B](https://b.example)\n",
                 "Fact one.\n\n    code\n\n    Sources: [A](https://a.example), [B](https://b.example)\n",
                 # numbered, but an entry without its link, or a sentence
                 "Fact one.\n\nSources: [1] https://a.example [2] our own survey\n",
                 "Fact one.\n\nSources: [1] and [2], both at https://a.example\n",
                 "Fact one.\n\nSources: [1], [2]\n",
                 # a sentence, words after the last link, numbers out of order, a line too long to read
                 "Fact one.\n\nSources: [1] was wrong about https://a.example, while [2] got "
                 "https://b.example.\n",
                 "Fact one.\n\nSources: [1] https://a.example [2] https://b.example Thanks for reading!\n",
                 "Fact one.\n\nSources: [1] https://b.example [1] https://a.example\n",
                 "Fact one.\n\nSources: "
                 + " ".join(f"[{i}] https://e{i}.example/page" for i in range(1, 300)) + "\n"):
        assert scan_markdown(text).references is None, text


def test_a_headingless_list_under_a_paragraph_opening_with_a_marker_is_still_cut() -> None:
    # "[1]的数据显示，…" / "[1] found that …" is the body's last paragraph, not an entry
    for body in ("比亚迪2023年销量达到302万辆。\n\n[1]的数据显示，比亚迪2023年销量同比增长62%。\n\n",
                 "Sales rose.\n\n[1] found that sales rose.\n\n"):
        text = body + "[1]: https://s.cn/a\n"
        assert scan_markdown(text).references == (len(body), len(text)), body


def test_a_heading_over_escaped_entries_is_cut_with_them_and_never_left_alone() -> None:
    body = "Sales rose [1].\n\n"
    for heading in ("## References\n\n", "### Bibliography\n\n"):
        text = body + heading + "\\[1\\] Car sales in China https://a.example/car\n"
        assert scan_markdown(text).references == (len(body), len(text)), heading
    # a heading that is no references title keeps its list: nothing is cut, not the list alone
    text = body + "## Further steps\n\n[1] Register https://a.example/r\n[2] Log in https://a.example/l\n"
    assert scan_markdown(text).references is None


def test_sub_headings_group_entries_that_describe_their_sources() -> None:
    text = ("Tesla delivered 1.81 million vehicles in 2023 [1].\n\n## Sources\n\n### Company\n\n"
            "- [Tesla Q4 2023 Update](https://ir.tesla.com/q4) — the company's own figures for the year.\n\n"
            "### Media\n\n- [Reuters](https://reuters.com/x) — coverage of the delivery numbers and views.\n")
    assert scan_markdown(text).references == (text.index("## Sources"), len(text))


def test_closing_matter_after_a_headingless_list_stays_the_reports() -> None:
    body = "Fact one.[^1] Fact two.[2]\n\n"
    refs = "[^1]: [Alpha](https://a.example.com/x)\n[2]: https://b.example.com/y\n"
    for closing in ("\n---\n\n*This report was generated by AI.*\n", "\n*Generated on 2024-05-01.*\n",
                    "\n---\n*This report was generated by AI.*\n\nDisclaimer: not advice.\n",
                    "\n## Disclaimer\n\nNot advice.\n\n## 风险提示\n\n市场有风险。\n"):
        text = body + refs + closing
        assert scan_markdown(text).references == (len(body), len(body + refs)), closing
    # a footer that cites or links is no closing matter: the list is then not the last block
    for closing in ("\n*Data from https://c.example.com.*\n", "\n## Disclaimer\n\nSee [1].\n"):
        assert scan_markdown(body + refs + closing).references is None, closing


@pytest.mark.parametrize("closing", [
    "---\nWritten by the commodities desk. Questions: desk@example.com\n",
    "\nPrepared by the research team, May 2024.\n",
    "\nAuthor: Jane Doe\n",
    "\n---\n\nContact: desk@example.com\n",
    "\nReport compiled by the markets desk.\n",
])
def test_an_english_byline_after_the_list_is_closing_matter(closing: str) -> None:
    """It stays the report's, after the new list; before, it was cut with the list as its prose."""
    body = "Arabica prices rose above $3 per pound in 2024 [1].\n\n"
    refs = ("## Sources\n- [Reuters: Arabica hits record](https://www.reuters.com/arabica-2024)\n"
            "- [ICO market report](https://www.ico.org/report)\n")
    assert scan_markdown(body + refs + closing).references == (len(body), len(body + refs))


def test_a_sentence_over_a_rule_is_prose_not_a_setext_heading() -> None:
    """"… in 2024 [1]." right above "---" is a sentence and a rule its author meant; read as a
    heading, its marker was removed under replace and the sentence listed nowhere."""
    for line in ("Prices rose in 2024 [1].", "Prices rose in 2024.[1]", "价格在2024年上涨。【1】"):
        text = f"{line}\n---\nMore text here.\n"
        layout = scan_markdown(text)
        assert layout.headings == () and not covered(layout, text, line), line
    for title in ("Market overview", "Q&A", "Why prices rose?"):
        assert scan_markdown(f"{title}\n---\n\nText.\n").headings, title
    assert scan_markdown("Prices rose in 2024 [1].\n===\n").headings   # "===" is only ever an underline


def test_entities_and_emoji_shortcodes_are_inline_regions() -> None:
    # a marker placed before their ";" or ":" would split them ("&nbsp[1];", ":tada[1]:")
    text = "A trial&nbsp;. B &amp; C &#91;1&#93; &#x2014; :tada: :+1: ok. Time 10:30:45, note: this: here.\n"
    layout = scan_markdown(text)
    for needle in ("&nbsp;", "&amp;", "&#91;", "&#93;", "&#x2014;", ":tada:", ":+1:"):
        assert covered(layout, text, needle), needle
    for needle in ("10:30:45", "note: this: here", "&#91;1"):
        assert not covered(layout, text, needle), needle


def test_a_fence_at_the_margin_ends_the_list() -> None:
    # so an indented block after it is code again, not a list item's paragraph
    text = "- item one.\n\n```\ncode\n```\n\n    Wheat prices rose 18% in 2022.\n"
    assert covered(scan_markdown(text), text, "    Wheat prices rose 18% in 2022.")
    nested = "- item one.\n\n  ```\n  code\n  ```\n\n    continued paragraph of the item.\n"
    assert not touched(scan_markdown(nested), nested, "continued paragraph")


def test_a_display_math_opener_alone_on_its_line_breaks_a_paragraph() -> None:
    text = "这一点值得进一步研究\n$$\nx = 1\n$$\n"
    layout = scan_markdown(text)
    assert covered(layout, text, "$$\nx = 1\n$$") and not touched(layout, text, "这一点值得进一步研究")
    inline = "Energy is $$E = mc^2$$ here.\n"
    assert covered(scan_markdown(inline), inline, "$$E = mc^2$$")


def test_code_spans_pair_runs_of_equal_length_as_commonmark_does() -> None:
    # a run opens a span when a later run of the same length closes it before a blank line;
    # a run with no such closer is text, and shorter runs inside a longer one do not pair
    text = "A ``x ` y`` and `z` but ``` alone, then `` two\n\nafter ``.\n"
    layout = scan_markdown(text)
    assert covered(layout, text, "``x ` y``") and covered(layout, text, "`z`")
    assert not touched(layout, text, "``` alone") and not touched(layout, text, "after")
    # a long run with nothing to close it is text: the sentence around it is prose
    text = "Revenue " + "`" * 300 + " grew.\n"
    assert scan_markdown(text).protected == ()
    # a code span beside other inline regions: leftmost wins
    text = "See [a `b](https://x.example/c) and `d [e](f)` too.\n"
    layout = scan_markdown(text)
    assert covered(layout, text, "[a `b](https://x.example/c)") and covered(layout, text, "`d [e](f)`")


def test_unclosed_math_and_comment_openers_are_text_and_closed_ones_still_regions() -> None:
    text = "x \\( a \\( b \\) c. <!-- open\n\nNext \\[ y \\] and <!-- shut --> end. \\( never\n"
    layout = scan_markdown(text)
    assert covered(layout, text, "\\( a \\( b \\)") and covered(layout, text, "\\[ y \\]")
    assert covered(layout, text, "<!-- open\n\nNext \\[ y \\] and <!-- shut -->")
    assert not touched(layout, text, "never")
    text = "x \\( a\n\nb \\) c. " + "\\( d " * 500 + "<!-- e " * 500 + "\n"
    assert not touched(scan_markdown(text), text, "a\n\nb")
    assert scan_markdown(text).protected == ()


def test_emoji_shortcodes_glued_to_chinese_text_are_inline_regions() -> None:
    text = "2023年市场规模达到1.2万亿元:tada:。\n"
    assert covered(scan_markdown(text), text, ":tada:")


def test_a_section_after_the_entries_whose_sentence_is_mostly_names_and_gives_a_link_is_more_report() -> None:
    # a traced output in link style: the sentence's marker is a link, and most of its words are
    # names, but it opens as no entry does, so the section is the report's (nothing is cut)
    text = ("Intro.\n\n## References\n\n1. [Hubble facts](https://a.example/hubble)\n"
            "2. [Webb](https://b.example/webb)\n\n## Findings\n\n"
            "The James Webb Space Telescope launched on 25 December 2021 [[1]](https://b.example/webb).\n")
    assert scan_markdown(text).references is None


def test_a_trailing_headingless_list_of_record_titles_is_the_references() -> None:
    # sources with no URL (local documents) are listed by title alone: only the records' titles
    # tell such a list from notes
    titles = ["Apple annual report 2020", "Pear results 2021", "2023年度财务报告.pdf", "Home"]
    body = "Fact one [1]. Fact two [2].\n\n"
    for refs in ("[1] Apple annual report 2020\n[2] Pear results 2021\n",
                 "[1] *Apple Annual Report 2020*. Apple Inc., 2021.\n\n[2] “Pear results 2021”\n",
                 "1. Apple annual report 2020\n2. Pear results 2021\n",
                 "【1】《2023年度财务报告.pdf》\n【2】Pear results 2021（内部资料）\n",
                 "---\n\n[1] Apple annual report 2020\n[2] Pear results 2021\n"):
        text = body + refs
        start = len(body) + (5 if refs.startswith("---") else 0)          # a rule above stays
        assert scan_markdown(text, titles=titles).references == (start, len(text)), refs
        assert scan_markdown(text).references is None, refs     # without the records' titles
    for text in (
        body + "[1] Apple annual report 2020\n[2] Notes on the pear harvest\n",   # not every entry
        body + "[1] Apple annual report 2020 was the year the company sold ten million phones, the "
               "most in its history, while its rivals in the region struggled to keep up with it.\n"
               "[2] Pear results 2021\n",                                    # an entry that is prose
        "Fact one. Fact two.\n\n1. Apple annual report 2020\n2. Pear results 2021\n",  # "1." uncited
        "Fact one.\n\n[1] Apple annual report 2020\n",                       # one entry, uncited
        "Fact one [1].\n[1] Apple annual report 2020\n[2] Pear results 2021\n",   # inside a paragraph
        "Fact one [1].\n\n## Apple and Pear\n\n[1] Apple annual report 2020\n[2] Pear results 2021\n",
        "Fact one [1].\n\n```\n[1] Apple annual report 2020\n[2] Pear results 2021\n```\n",
        "Fact [1].\n\n[1] Home\n[2] Home\n",                                 # too short to name one
        "Fact [1].\n\n1. [2] found that Apple annual report 2020 was launched in 1990.\n",  # a sentence
    ):
        assert scan_markdown(text, titles=titles).references is None, text
    text = "Fact one [1].\n\n[1] Apple annual report 2020\n"                 # one entry, cited
    assert scan_markdown(text, titles=titles).references == (15, len(text))
