"""tracer.segment: sentence spans over the original text, zh + en, markdown-aware."""

from __future__ import annotations

import pytest

from tracer.markdown import scan_markdown
from tracer.models import Sentence
from tracer.segment import segment_sentences


def seg(text: str) -> list[Sentence]:
    return segment_sentences(text, scan_markdown(text))


def texts(text: str) -> list[str]:
    return [s.text for s in seg(text)]


def test_spans_point_into_original_and_ids_are_ordered() -> None:
    text = "First one. Second one!\n\n第三句。第四句？"
    sents = seg(text)
    assert [s.id for s in sents] == list(range(len(sents)))
    for s in sents:
        assert text[s.start:s.end] == s.text
        assert s.text == s.text.strip()
    assert [s.start for s in sents] == sorted(s.start for s in sents)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "The U.S. Dept. of Labor said so. It was true.",
            ["The U.S. Dept. of Labor said so.", "It was true."],
        ),
        ("Apple Inc. The company grew.", ["Apple Inc.", "The company grew."]),
        ("Apple Inc. announced results.", ["Apple Inc. announced results."]),
        ("Fruit, e.g. apples, i.e. red ones. Done.", ["Fruit, e.g. apples, i.e. red ones.", "Done."]),
        ("Mr. Smith met Dr. Jones. They talked.", ["Mr. Smith met Dr. Jones.", "They talked."]),
        ("See Fig. 3 and No. 5 in Smith et al. 2020.", ["See Fig. 3 and No. 5 in Smith et al. 2020."]),
        ("J. K. Rowling wrote it. Plan B. The end.", ["J. K. Rowling wrote it.", "Plan B.", "The end."]),
        ("Apples vs. oranges. Next.", ["Apples vs. oranges.", "Next."]),
        ("Costs rose 5.2% to $30.8 billion. Next.", ["Costs rose 5.2% to $30.8 billion.", "Next."]),
        ("Version v1.2.3 shipped. Next.", ["Version v1.2.3 shipped.", "Next."]),
        ("Go to https://ex.com/a.b?c=d. Then stop.", ["Go to https://ex.com/a.b?c=d.", "Then stop."]),
        ('He said "stop." Then left.', ['He said "stop."', "Then left."]),
        ("(See above.) Next.", ["(See above.)", "Next."]),
        ("Wait... and then. Next... Yes.", ["Wait... and then.", "Next...", "Yes."]),
        ("Really? Yes! Ok.", ["Really?", "Yes!", "Ok."]),
        ("Yahoo! is a company.", ["Yahoo! is a company."]),
        ("Shout! Factory released it in 2019. Next.", ["Shout! Factory released it in 2019.", "Next."]),
        ("He joined Yahoo! Japan in 2001. It grew.", ["He joined Yahoo! Japan in 2001.", "It grew."]),
        ("She left Yahoo! The firm declined.", ["She left Yahoo!", "The firm declined."]),
        ("收购了Yahoo!中国的资产。交易完成。", ["收购了Yahoo!中国的资产。", "交易完成。"]),
        ("“小米将在2025年盈利。”雷军表示。下一句。", ["“小米将在2025年盈利。”雷军表示。", "下一句。"]),
        ("他说：“我们会赢。”比赛随后开始。", ["他说：“我们会赢。”", "比赛随后开始。"]),
        ("“小米将盈利。”雷军表示[1]。下一句。", ["“小米将盈利。”雷军表示[1]。", "下一句。"]),  # traced again
        ("“这是一个故事。”后来被改编为小说。", ["“这是一个故事。”", "后来被改编为小说。"]),  # no speaker
        ("<b>Fact one is here.</b>[1] Fact two.", ["<b>Fact one is here.</b>", "Fact two."]),
        ("<b>第一句话在这里。</b>[1]第二句。", ["<b>第一句话在这里。</b>", "第二句。"]),
        ("“会盈利。”他表示[[1]](https://c.co)。下句。", ["“会盈利。”他表示[[1]](https://c.co)。", "下句。"]),
        ("Fact one is here.\\\nFact two.", ["Fact one is here.", "Fact two."]),  # a hard line break
        ("<b>Fact one is here.</b> Fact two.", ["<b>Fact one is here.</b>", "Fact two."]),
        ("他们赢了!中国队晋级。", ["他们赢了!", "中国队晋级。"]),  # no name before it: a boundary
        ("We won! Factory output rose.", ["We won!", "Factory output rose."]),  # not a name: a boundary
        ("**Bold claim.** Next claim.", ["**Bold claim.**", "Next claim."]),
        ("Meet at 10 a.m. The bus left.", ["Meet at 10 a.m.", "The bus left."]),
        ("In 2020. 2021 was better.", ["In 2020.", "2021 was better."]),
        ("Growth was 3.5 times. Next.", ["Growth was 3.5 times.", "Next."]),
        ("Apples, pears, etc. The end.", ["Apples, pears, etc.", "The end."]),
        ("Apples, pears, etc. are fruit.", ["Apples, pears, etc. are fruit."]),
        ("Sales rose 🚀. Profits fell 📉! Why?", ["Sales rose 🚀.", "Profits fell 📉!", "Why?"]),
        ("The U.S. President spoke. In the U.S. The end.", ["The U.S. President spoke.", "In the U.S.", "The end."]),  # noqa: E501
        # a capital letter after a label word is no initial
        ("It raised a Series A. Investors cheered.", ["It raised a Series A.", "Investors cheered."]),
        ("Take vitamin D. Doctors agree.", ["Take vitamin D.", "Doctors agree."]),
        ("John A. Smith came.", ["John A. Smith came."]),
        # a time ends before a capitalised word that does not go on with it
        ("We met at 9 a.m. Participants left.", ["We met at 9 a.m.", "Participants left."]),
        ("At 9 a.m. Eastern Time it began. At 10 p.m. Beijing time it ended.",
         ["At 9 a.m. Eastern Time it began.", "At 10 p.m. Beijing time it ended."]),
        ("The a.m. Session ran late.", ["The a.m. Session ran late."]),
        # superscript digits after the terminal are a note mark that stays with its sentence
        ("Sales rose 40%.¹ Costs fell.²", ["Sales rose 40%.¹", "Costs fell.²"]),
        ("E = mc². It holds.", ["E = mc².", "It holds."]),
        # "Doc." before a number is no sentence's end
        ("Sales rose (Doc. 1). Costs fell (Docs. 2 and 3).",
         ["Sales rose (Doc. 1).", "Costs fell (Docs. 2 and 3)."]),
        ("The manual is a Google Doc. Hubble made 1.5 million observations. Read the docs. It works.",
         ["The manual is a Google Doc.", "Hubble made 1.5 million observations.", "Read the docs.",
          "It works."]),
    ],
)
def test_english_rules(text: str, expected: list[str]) -> None:
    assert texts(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("第一句。第二句！第三句？", ["第一句。", "第二句！", "第三句？"]),
        ("他说：“我们会赢。”然后离开了。", ["他说：“我们会赢。”", "然后离开了。"]),
        ("「你好！」她说。", ["「你好！」她说。"]),  # a quotation and its speaker: one sentence
        ("前者；后者。", ["前者；", "后者。"]),
        ("等等……然后呢？", ["等等……", "然后呢？"]),
        ("营收增长5.2%，达到308亿美元。下一句。", ["营收增长5.2%，达到308亿美元。", "下一句。"]),
        ("版本v1.2.3发布了。见https://a.cn/x。完", ["版本v1.2.3发布了。", "见https://a.cn/x。", "完"]),
        ("（注：数据来自报告。）下一句。", ["（注：数据来自报告。）", "下一句。"]),
        ("Apple公司发布了iPhone。It sold well.", ["Apple公司发布了iPhone。", "It sold well."]),
        ("数据显示😀增长迅速。下一句🚀。", ["数据显示😀增长迅速。", "下一句🚀。"]),
        # a bold numbered lead-in enumerates; an ASCII stop after Chinese ends before a capital
        ("**1. 市场规模：** 2023年达到1.2万亿元。**2. 增长率：** 同比增长8.5%。",
         ["**1. 市场规模：** 2023年达到1.2万亿元。", "**2. 增长率：** 同比增长8.5%。"]),
        ("该模型由OpenAI发布.GPT-4的参数量未公开.", ["该模型由OpenAI发布.", "GPT-4的参数量未公开."]),
        ("该系统基于.NET Core开发。", ["该系统基于.NET Core开发。"]),
    ],
)
def test_chinese_rules(text: str, expected: list[str]) -> None:
    assert texts(text) == expected


_SOURCES = "\n\n## Sources\n\nSource 1: Car sales https://a.example/car\nSource 2: Bridge https://b.example/b\n"
_来源 = "\n\n## 参考文献\n\n来源1：汽车 https://a.example/car\n来源2：大桥 https://b.example/b\n"


@pytest.mark.parametrize(("text", "expected"), [
    # where the cut list labels its entries "Source 1: …", "(Source 2)" is a marker: passed over
    ("It opened in 1957.(Source 2) As shown, it is long." + _SOURCES,
     ["It opened in 1957.", "As shown, it is long."]),
    ("It opened in 1957. (Sources 1 and 2) It is long." + _SOURCES, ["It opened in 1957.", "It is long."]),
    ("销量增长5%。（来源1）价格也涨了。" + _来源, ["销量增长5%。", "价格也涨了。"]),
    ("It opened in 1957.\n\n(Source 2)\n\nIt is long." + _SOURCES, ["It opened in 1957.", "It is long."]),
    # with what wraps it
    ("It opened in 1957. (see (Source 2)) It is long." + _SOURCES, ["It opened in 1957.", "It is long."]),
    ("It opened in 1957.<sup>(Source 2)</sup> It is long." + _SOURCES, ["It opened in 1957.", "It is long."]),
    # elsewhere it is text: a name ("Source 1" a well), opening its sentence
    ("It opened in 1957. (Source 1) is the deepest well. It is 40 m deep.",
     ["It opened in 1957.", "(Source 1) is the deepest well.", "It is 40 m deep."]),
    ("It opened in 1957.\n\n(Source 2)\n\nIt is long.", ["It opened in 1957.", "(Source 2)", "It is long."]),
])
def test_a_source_note_is_a_marker_where_the_list_labels_its_entries_with_words(
        text: str, expected: list[str]) -> None:
    assert texts(text) == expected


def test_blank_line_always_ends_sentence() -> None:
    assert texts("No punctuation here\n\nNext paragraph") == ["No punctuation here", "Next paragraph"]


def test_single_newline_joins_unless_terminal() -> None:
    assert texts("A line that wraps\nonto the next. Done.\nNew line.") == [
        "A line that wraps\nonto the next.",
        "Done.",
        "New line.",
    ]
    assert texts("第一行没有标点\n第二行。") == ["第一行没有标点\n第二行。"]


def test_line_ending_with_colon_ends_sentence() -> None:
    assert texts("The formula is:\nV = l × w × d\n公式如下：\n体积等于长乘宽") == [
        "The formula is:",
        "V = l × w × d\n公式如下：",
        "体积等于长乘宽",
    ]
    assert texts("See https://a.com/x:\nnext line") == ["See https://a.com/x:", "next line"]


def test_list_items_are_own_units_without_bullets() -> None:
    text = (
        "Intro:\n- first item\n- second item. Two sentences.\n* star item\n+ plus\n1. one\n2) two\n"
        "- [x] task\n"
    )
    sents = seg(text)
    assert [(s.text, s.in_list) for s in sents] == [
        ("Intro:", False),
        ("first item", True),
        ("second item.", True),
        ("Two sentences.", True),
        ("star item", True),
        ("plus", True),
        ("one", True),
        ("two", True),
        ("task", True),
    ]


def test_emoji_and_symbol_bullets_start_list_items() -> None:
    # deep-research writers list facts behind emoji; without terminals the lines ran together
    text = "✅ Fact one\n✅ Fact two\n1️⃣ First step\n🇨🇳 China grew\n➤ Next step\n※ 注意事项\n★★★☆☆ Good"
    sents = seg(text)
    assert [(s.text, s.in_list) for s in sents] == [
        ("Fact one", True), ("Fact two", True), ("First step", True), ("China grew", True),
        ("Next step", True), ("注意事项", True), ("Good", True),
    ]
    # an emoji glued to the word, or inside a line, is text
    assert texts("🚀Launch day\nwent well.") == ["🚀Launch day\nwent well."]
    assert texts("Sales rose 🚀 fast\nand then fell.") == ["Sales rose 🚀 fast\nand then fell."]


def test_year_at_line_start_is_not_a_list_marker() -> None:
    assert texts("Sales peaked in\n2023. Then they fell.") == ["Sales peaked in\n2023.", "Then they fell."]


def test_nested_list_and_continuation() -> None:
    text = "- outer item\n  continues here.\n    - inner item.\n"
    assert texts(text) == ["outer item\n  continues here.", "inner item."]


def test_chinese_list() -> None:
    assert texts("1、第一点。\n2、第二点。") == ["第一点。", "第二点。"]
    assert texts("（1）第一点\n（2）第二点\n一、总体\n① 甲\n· 乙") == ["第一点", "第二点", "总体", "甲", "乙"]


def test_lettered_and_roman_clauses_are_items() -> None:
    """Each clause is a unit, so a marker on (a) stays on (a); before, the three were one sentence."""
    text = ("The Regulation names these roles:\n(a) providers, who develop an AI system [1];\n"
            "(b) deployers, who use one;\nc) importers [2].\n(iv) distributors.\n")
    assert texts(text) == ["The Regulation names these roles:", "providers, who develop an AI system [1];",
                           "deployers, who use one;", "importers [2].", "distributors."]
    assert texts("(a)b is a word.\nSo is (c) here.") == ["(a)b is a word.", "So is (c) here."]
    # a hard-wrapped sentence goes on; "(c) 2024" is a copyright
    assert texts("The obligations referred to in point\n(a) of paragraph 1 apply from 2026.") == [
        "The obligations referred to in point\n(a) of paragraph 1 apply from 2026."]
    assert texts("Text ends here.\n(c) 2024 Reuters") == ["Text ends here.", "(c) 2024 Reuters"]
    wrapped = "Under Article 99,\n(a) fines can reach 7%."
    assert texts(wrapped) == [wrapped]
    # after the first item, the next ones open items whatever the line before ends with
    assert texts("The roles:\n(a) providers,\n(b) deployers, and\n(c) importers.") == [
        "The roles:", "providers,", "deployers, and", "importers."]


def test_tables_code_headings_front_matter_are_not_prose() -> None:
    text = (
        "---\ntitle: Front. Matter.\n---\n"
        "# Heading. Text.\n\n"
        "Para one.\n\n"
        "| a. | b. |\n|---|---|\n| c. | d. |\n\n"
        "```\n## References\nCode line.\n```\n\n"
        "<div>\nHTML block.\n</div>\n\n"
        "    indented code.\n\n"
        "Para two.\n"
    )
    # a table's body row is a sentence of its own (its header row is not)
    assert texts(text) == ["Para one.", "c. | d.", "Para two."]
    assert [s.in_table for s in seg(text)] == [False, True, False]


def test_a_table_row_is_one_sentence_from_its_first_to_its_last_value() -> None:
    text = (
        "## GPUs\n\n"
        "| Model | Memory | Price |\n|---|:--|--:|\n"
        "| RTX 4090 | 24 GB | $1,599 [1] |\n"
        "|  | 16 GB. Fast. | — |\n"           # empty and placeholder cells are no part of it
        "RX 7900 XTX | 24 GB | $999\n"         # no outer pipes
        "| a \\| b | `code` | [link](https://e.example/a) |\n"
        "| [Alpha](https://e.example/a) | <br> |\n"
        "| — | `code` | [1] |\n"                # nothing but a dash, code and a marker: no sentence
        "\nAfter the table.\n"
    )
    sents = seg(text)
    assert [(s.text, s.in_table, s.heading) for s in sents] == [
        ("RTX 4090 | 24 GB | $1,599 [1]", True, "GPUs"),
        ("16 GB. Fast.", True, "GPUs"),
        ("RX 7900 XTX | 24 GB | $999", True, "GPUs"),
        ("a \\| b | `code` | [link](https://e.example/a)", True, "GPUs"),
        ("[Alpha](https://e.example/a)", True, "GPUs"),
        ("After the table.", False, "GPUs"),
    ]
    assert all(text[s.start:s.end] == s.text for s in sents)


def test_a_row_claims_each_value_after_its_column_header() -> None:
    text = (
        "| Country | **GDP 2023** (trillion USD) | Value | Growth |\r\n|---|---|---|---|\r\n"
        "| China | 17.8 | x | 5.2% [1] |\r\n"
        "| Japan | — | 4.2 |\r\n"               # a placeholder cell is no value; a missing one neither
        "\n| 项目 | 发射时间 |\n|---|---|\n| 天和核心舱 | 2021年4月29日 |\n"
        "\nGrowth | Growth\n---|---\ngrowth | 2%\n"  # no outer pipes; a cell that repeats its header
    )
    assert [(s.text, s.claim) for s in seg(text)] == [
        ("China | 17.8 | x | 5.2% [1]",
         "Country China, **GDP 2023** (trillion USD) 17.8, x, Growth 5.2% [1]"),
        ("Japan | — | 4.2", "Country Japan, 4.2"),         # "Value" names nothing
        ("天和核心舱 | 2021年4月29日", "天和核心舱, 发射时间 2021年4月29日"),
        ("growth | 2%", "growth, Growth 2%"),
    ]
    assert [s.query for s in seg("Prose. Here.")] == ["Prose.", "Here."]


def test_a_row_starts_after_its_markers_and_a_link_with_brackets_is_a_value() -> None:
    text = "| A | B |\n|---|---|\n| [1] Alpha | x |\n| [a [b] c](https://e.example/a) | — |\n"
    assert texts(text) == ["Alpha | x", "[a [b] c](https://e.example/a)"]


def test_no_table_rows_in_the_references_section_or_without_a_delimiter_row() -> None:
    text = "Fact one.\n\n| a | b |\n| c | d |\n\n## References\n\n| # | Source |\n|---|---|\n| 1 | Alpha |\n"
    assert texts(text) == ["Fact one."]


@pytest.mark.parametrize("tail", [
    "```", "````", "~~~", "```python", "```\ncode", "```\ncode\n```", "| a |\n|---|"])
def test_a_block_on_the_last_line_without_a_newline_is_not_prose(tail: str) -> None:
    # found by a long property-test run: a fence opened on the report's last line, right after
    # a paragraph line, was joined to the paragraph, so the marker went into the fence's info string
    assert texts(f"Revenue grew\n{tail}") == ["Revenue grew"]
    assert texts(f"营收增长\n{tail}") == ["营收增长"]


def test_inline_code_links_math_stay_inside_sentence() -> None:
    text = "Call `f(x). g()` now. See [the docs. v2](https://a.b/c.d) here. Math $a. b$ too. End."
    assert texts(text) == [
        "Call `f(x). g()` now.",
        "See [the docs. v2](https://a.b/c.d) here.",
        "Math $a. b$ too.",
        "End.",
    ]


def test_image_only_line_is_not_a_sentence() -> None:
    assert texts("![chart](c.png)\n\nText.") == ["Text."]


def test_existing_markers_never_start_a_sentence() -> None:
    assert texts("Fact one.[1] Fact two.[2][3] Fact three. [4] Fact four.") == [
        "Fact one.",
        "Fact two.",
        "Fact three.",
        "Fact four.",
    ]
    assert texts("事实一。[1]事实二。【2】事实三。") == ["事实一。", "事实二。", "事实三。"]
    assert texts("Fact[1]. Next [^2].") == ["Fact[1].", "Next [^2]."]


def test_headings_recorded_on_sentences() -> None:
    text = "# Top\n\nA.\n\n## Sub ##\n\nB.\n\nSetext\n======\n\nC.\n\n**Bold label**\nD.\n"
    assert [(s.text, s.heading) for s in seg(text)] == [
        ("A.", "Top"),
        ("B.", "Sub"),
        ("C.", "Setext"),
        ("D.", "Bold label"),
    ]


def test_a_callouts_type_and_title_head_its_quote() -> None:
    """GitHub's and Obsidian's callouts: "> [!NOTE]" (with a title, or folded: "[!tip]-") heads
    what the quote says and is no word of its first sentence; a title that is a sentence is one."""
    text = ("# Top\n\n> [!NOTE]\n> Mercury is small.\n\n> [!tip]- Good to know\n> It is hot.\n\n"
            "> [!WARNING] Venus is hotter.\n> It has clouds.\n\nA line with [!NOTE] in it.\n")
    assert [(s.text, s.heading) for s in seg(text)] == [
        ("Mercury is small.", "Top"),
        ("It is hot.", "Good to know"),
        ("Venus is hotter.", "Good to know"),
        ("It has clouds.", "Good to know"),
        ("A line with [!NOTE] in it.", "Good to know"),
    ]


def test_crlf() -> None:
    text = "First line.\r\nSecond line\r\ncontinues.\r\n\r\n- item\r\n"
    sents = seg(text)
    assert [s.text for s in sents] == ["First line.", "Second line\r\ncontinues.", "item"]
    assert all(not s.text.endswith("\r") for s in sents)


def test_blockquote_prefix_excluded_from_start() -> None:
    assert texts("> Quoted sentence. Another.\n> - quoted item\n") == [
        "Quoted sentence.",
        "Another.",
        "quoted item",
    ]


def test_references_section_not_segmented() -> None:
    text = "Body sentence.\n\n## References\n[1] Title. https://a.com\n"
    assert texts(text) == ["Body sentence."]


def test_large_report_linear() -> None:
    para = "The U.S. economy grew 2.5% in 2023. 中国经济增长5.2%。See https://a.b/c. [1]\n\n"
    text = para * 1500
    sents = seg(text)
    assert len(sents) == 3 * 1500
    assert sents[-1].end <= len(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # bold or a quote opening the next sentence is not the previous one's closer
        ("销量增长37.9%。**值得注意的是**，渗透率已达31.6%。",
         ["销量增长37.9%。", "**值得注意的是**，渗透率已达31.6%。"]),
        ("销量增长。\"新能源\"一词流行。", ["销量增长。", "\"新能源\"一词流行。"]),
        ("**Bold claim.** Next one.", ["**Bold claim.**", "Next one."]),
        ("He said \"it works.\" Then left.", ["He said \"it works.\"", "Then left."]),
        ("It's *done.* Next.", ["It's *done.*", "Next."]),
        # acronyms, compounds and words that are also abbreviations
        ("GPT-4o is state-of-the-art. It scored 88.7%.", ["GPT-4o is state-of-the-art.", "It scored 88.7%."]),
        ("It filed with the SEC. It grew.", ["It filed with the SEC.", "It grew."]),
        ("It streams on HBO Max. The show ended.", ["It streams on HBO Max.", "The show ended."]),
        ("Martin Luther King Jr. He spoke.", ["Martin Luther King Jr.", "He spoke."]),
        ("See Fig. 2 and Dr. Jones. Done.", ["See Fig. 2 and Dr. Jones.", "Done."]),
        ("It runs on Node.js. Developers like it.", ["It runs on Node.js.", "Developers like it."]),
        ("Saved as data.csv. Analysts read it.", ["Saved as data.csv.", "Analysts read it."]),
        ("Made in the U.S.A. Sales rose.", ["Made in the U.S.A. Sales rose."]),
        # a lower-case word with a capital inside opens a sentence
        ("Revenue fell 64%. mRNA demand collapsed.", ["Revenue fell 64%.", "mRNA demand collapsed."]),
        ("Sales rose. iPhone sales fell.", ["Sales rose.", "iPhone sales fell."]),
        # an ASCII period right before Chinese ends a sentence, unless a number or abbreviation
        ("销量增长37.9%.渗透率达31.6%.", ["销量增长37.9%.", "渗透率达31.6%."]),
        ("模型是Claude Sonnet.该模型更强。", ["模型是Claude Sonnet.", "该模型更强。"]),
        ("见图1.所示。Apple Inc.发布了新品。", ["见图1.所示。", "Apple Inc.发布了新品。"]),
        # no boundary inside a book title, nor at a semicolon inside brackets
        ("《AI会取代人类吗？》一书指出，岗位将减少。", ["《AI会取代人类吗？》一书指出，岗位将减少。"]),
        ("（数据来源：IDC；Gartner）显示增长。", ["（数据来源：IDC；Gartner）显示增长。"]),
        # an attribution after a quote belongs to it
        ("“市场化阶段。”——中汽协陈士华", ["“市场化阶段。”——中汽协陈士华"]),
        ("\"AI is here.\" — Jensen Huang, 2024. Next.", ["\"AI is here.\" — Jensen Huang, 2024.", "Next."]),
        # an HTML line break after a terminal ends the sentence like a newline
        ("Fact one.<br>Fact two.", ["Fact one.", "Fact two."]),
        # full-width list numbering
        ("1．比亚迪份额约为35%\n2．特斯拉份额约为8%\n", ["比亚迪份额约为35%", "特斯拉份额约为8%"]),
    ],
)
def test_boundaries_found_in_research_reports(text: str, expected: list[str]) -> None:
    assert texts(text) == expected


def test_full_width_punctuation_after_a_stop_opens_a_sentence() -> None:
    # the table rows' script check once shadowed the splitter's wider CJK class (kana, full-width
    # forms, CJK punctuation): these stopped splitting
    assert texts("It sold 5 million units.（注：含海外）Next fact here.") == [
        "It sold 5 million units.", "（注：含海外）Next fact here."]
    assert texts("Yes!「是的」他说。") == ["Yes!", "「是的」他说。"]


def test_a_line_break_tag_after_a_line_without_end_punctuation_ends_its_sentence() -> None:
    # "… Erica Xu<br/>Next line": read as one sentence, the marker went after the next line's
    from tracer import trace

    recs = [{"url": "https://a.org", "title": "O",
             "content": "Obsidian was founded in 2020 by Shida Li and Erica Xu."},
            {"url": "https://b.org", "title": "x", "content": "Cats sleep most of the day."},
            {"url": "https://c.org", "title": "y", "content": "The museum opened a new wing."}]
    for br in ("<br>", "<br/>", "<br />\n"):
        report = f"Obsidian was founded in 2020 by Shida Li and Erica Xu{br}Cats sleep most of the day.\n"
        out = trace(report, recs)
        want = f"Obsidian was founded in 2020 by Shida Li and Erica Xu[1]{br}Cats sleep most of the day[2]."
        assert out.report.startswith(want), out.report
        assert trace(out.report, recs).report == out.report
    # a line that goes on (a small word or a comma before the tag, a lowercase word after it) stays one
    for text in ("Obsidian was founded by<br>Shida Li and Erica Xu.", "It was founded in 2020,<br>Li said.",
                 "Obsidian was founded<br>in 2020 by Shida Li."):
        assert len(segment_sentences(text, scan_markdown(text))) == 1, text
