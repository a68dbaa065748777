"""Table rows: each body row of a markdown table is a sentence of its own, cited inside the row
when a record states it, with every figure of the row."""

from __future__ import annotations

from typing import Any

import pytest

from tracer import TraceOptions, trace
from tracer.existing import strip_markers

FILLER = [  # more records, as a real request has: word rarity means something then
    {"url": f"https://filler.example/{i}", "title": f"Note {i}", "content": text}
    for i, text in enumerate([
        "The city council approved a new budget for road repairs in the spring session.",
        "A regional bakery chain opened three shops and plans to hire forty staff next year.",
        "Researchers described a beetle species found in the canopy of a tropical forest.",
        "The museum extended its opening hours on weekends during the summer holidays.",
        "Local farmers reported an early harvest after a mild and dry winter season.",
        "A football club signed a young goalkeeper on a four-year contract this week.",
    ])
]
GPU_RECORDS: list[dict[str, Any]] = [
    {"url": "https://a.example/4090", "title": "GeForce RTX 4090 review",
     "content": "NVIDIA released the GeForce RTX 4090 graphics card in October 2022. The RTX 4090 has "
                "24 GB of GDDR6X memory and a launch price of $1,599."},
    {"url": "https://b.example/7900", "title": "Radeon RX 7900 XTX review",
     "content": "AMD's Radeon RX 7900 XTX graphics card ships with 24 GB of GDDR6 memory. Its launch price "
                "was $999 in December 2022."},
    *FILLER,
]
TABLE = (
    "# Flagship graphics cards\n\n"
    "| Card | Memory | Launch price |\n"
    "|---|---|---|\n"
    "| GeForce RTX 4090 | 24 GB GDDR6X memory | $1,599 launch price |\n"
    "| Radeon RX 7900 XTX | 24 GB GDDR6 memory | $1,099 launch price |\n"
    "| Feature | Yes |\n"
)


TRIALS = {"url": "https://nejm.example/trials", "title": "Semaglutide vs tirzepatide weight loss trials",
          "content": "In the STEP-1 trial, semaglutide 2.4 mg produced a mean weight loss of 14.9% over 68 "
                     "weeks. In SURMOUNT-1, tirzepatide 15 mg produced a mean weight loss of 20.9% over 72 "
                     "weeks. Liraglutide 3.0 mg produced 8.0% in SCALE."}


def _rows(report: str) -> list[str]:
    return [line for line in report.splitlines() if line.startswith("| ") and "---" not in line]


def test_a_row_a_record_states_is_cited_inside_the_row() -> None:
    result = trace(TABLE, GPU_RECORDS)
    rows = _rows(result.report)
    assert rows[1] == "| GeForce RTX 4090 | 24 GB GDDR6X memory | $1,599 launch price[1] |"
    cited = {c.sentence: [s.url for s in c.sources] for c in result.citations}
    assert cited["GeForce RTX 4090 | 24 GB GDDR6X memory | $1,599 launch price"] == ["https://a.example/4090"]
    # the body is unchanged but for the marker
    assert strip_markers(result.report).startswith(TABLE.rstrip("\n"))


def test_a_row_with_a_figure_its_record_does_not_state_is_not_cited() -> None:
    # the record says $999: the rest of the row matches it, but a row is mostly its figures
    result = trace(TABLE, GPU_RECORDS)
    assert "| Radeon RX 7900 XTX | 24 GB GDDR6 memory | $1,099 launch price |" in _rows(result.report)
    bad = [u for u in result.unsupported if u.sentence.startswith("Radeon")]
    assert len(bad) == 1 and bad[0].closest is not None
    assert "$1,099" in " ".join(bad[0].closest.unstated) or "1099" in " ".join(bad[0].closest.unstated)
    # a row with no figure and a word or two is not reported as needing a source
    assert not any(u.sentence.startswith("Feature") for u in result.unsupported)


def test_a_row_is_held_to_every_figure_where_a_sentence_is_not() -> None:
    # The same words as a sentence: in English a sentence may be cited with one figure its record
    # leaves out (partly supported, listed in `unstated`); the row is not.
    records = [
        {"url": "https://a.example/4090", "title": "GeForce RTX 4090 review",
         "content": "NVIDIA's GeForce RTX 4090 graphics card has 24 GB of GDDR6X memory, 16,384 CUDA cores "
                    "and a 450 W board power, and it was the fastest consumer card of 2022."},
        *FILLER,
    ]
    prose = ("The GeForce RTX 4090 graphics card has 24 GB of GDDR6X memory and 16,384 CUDA cores "
             "at 2.52 GHz.\n")
    as_prose = trace(prose, records)
    assert [c.sources[0].unstated for c in as_prose.citations] == [("2.52",)]
    table = ("| Card | Memory | Cores |\n|---|---|---|\n"
             "| GeForce RTX 4090 graphics card | 24 GB of GDDR6X memory | 16,384 CUDA cores at 2.52 GHz |\n")
    as_row = trace(table, records)
    assert as_row.citations == ()
    assert as_row.unsupported[0].closest is not None
    assert as_row.unsupported[0].closest.unstated == ("2.52",)


def test_chinese_rows() -> None:
    records = [
        {"url": "https://cmse.example/tianhe", "title": "天和核心舱发射",
         "content": "2021年4月29日，长征五号B遥二运载火箭在文昌航天发射场将天和核心舱送入预定轨道。"},
        {"url": "https://cmse.example/wentian", "title": "问天实验舱发射",
         "content": "问天实验舱于2022年7月24日由长征五号B遥三运载火箭在文昌航天发射场发射。"},
        {"url": "https://cmse.example/mengtian", "title": "梦天实验舱发射",
         "content": "梦天实验舱于2022年10月31日由长征五号B遥四运载火箭发射，随后与组合体完成对接。"},
        *FILLER,
    ]
    report = ("| 舱段 | 发射时间 | 运载火箭 |\n|---|---|---|\n"
              "| 天和核心舱 | 2021年4月29日 | 长征五号B遥二 |\n"
              "| 问天实验舱 | 2022年7月24日 | 长征五号B遥三 |\n"
              "| 梦天实验舱 | 2022年11月30日 | 长征五号B遥四 |\n"   # the wrong date
              "| 天舟二号 | — | — |\n")
    rows = _rows(trace(report, records).report)
    assert rows[1:] == [
        "| 天和核心舱 | 2021年4月29日 | 长征五号B遥二[1] |",
        "| 问天实验舱 | 2022年7月24日 | 长征五号B遥三[2] |",
        "| 梦天实验舱 | 2022年11月30日 | 长征五号B遥四 |",
        "| 天舟二号 | — | — |",
    ]


@pytest.mark.parametrize("existing", ["keep", "replace"])
def test_author_markers_in_rows(existing: str) -> None:
    report = TABLE.replace("$1,599 launch price |", "$1,599 launch price [2] |").replace(
        "$1,099 launch price |", "$1,099 launch price [1] |")
    report += "\n## References\n\n[1] https://a.example/4090\n[2] https://b.example/7900\n"
    result = trace(report, GPU_RECORDS, TraceOptions(existing=existing))
    rows = _rows(result.report)
    if existing == "keep":
        # the author's markers stay where they were, renumbered, and each is checked: neither
        # names the record that supports its row; the first row gets that record as well
        assert rows[1].endswith("$1,599 launch price [1][2] |")
        assert rows[2].endswith("$1,099 launch price [2] |")
        assert [r.url for r in result.references] == ["https://b.example/7900", "https://a.example/4090"]
        assert sum("is not supported by its record" in w for w in result.warnings) == 2
    else:
        # re-traced: the first row gets its own record, the second (a wrong figure) nothing
        assert rows[1].endswith("$1,599 launch price [1] |")  # in the slot of the author's marker
        assert rows[2].endswith("$1,099 launch price |")
    assert all(r.url != "" for r in result.references)


def test_link_markers_in_a_row_cannot_break_it() -> None:
    records = [dict(GPU_RECORDS[0], url="https://a.example/cards?id=4090|ti"), *FILLER]
    result = trace(TABLE, records, TraceOptions(style="link"))
    row = _rows(result.report)[1]
    assert row.count("|") == 4  # the URL's pipe is percent-encoded: still three cells
    assert "%7Cti" in row


def test_the_column_headers_say_what_a_row_of_figures_claims() -> None:
    # "China | 17.8 | 5.2%" alone is a name and two numbers; under its headers it is a claim
    records = [
        {"url": "https://w.example/cn", "title": "China economy 2023",
         "content": "China's GDP reached 17.8 trillion US dollars in 2023, and the economy grew 5.2% "
                    "over the year, the statistics bureau said."},
        {"url": "https://w.example/us", "title": "US economy 2023",
         "content": "The United States economy expanded 2.5% in 2023, with GDP at about 27.4 trillion "
                    "dollars."},
        {"url": "https://w.example/jp", "title": "Japan",
         "content": "Japan's economy grew 1.9% in 2023; it ranks fourth by GDP after the US, China and "
                    "Germany."},
        *FILLER,
    ]
    report = ("| Country | GDP 2023 (trillion USD) | Growth |\n|---|---|---|\n"
              "| China | 17.8 | 5.2% |\n| United States | 27.4 | 2.5% |\n| Japan | 4.2 | 1.9% |\n")
    result = trace(report, records)
    assert _rows(result.report)[1:] == [
        "| China | 17.8 | 5.2%[1] |", "| United States | 27.4 | 2.5%[2] |", "| Japan | 4.2 | 1.9% |"]
    # Japan's 4.2 is stated nowhere: the near miss says so
    (japan,) = result.unsupported
    assert japan.closest is not None and japan.closest.url == "https://w.example/jp"
    assert japan.closest.unstated == ("4.2",)


def test_which_rows_need_a_source() -> None:
    from tracer.markdown import scan_markdown
    from tracer.recognize import needs_citation
    from tracer.segment import segment_sentences

    text = ("| Country | GDP | Growth |\n|---|---|---|\n| China | 17.8 | 5.2% |\n| Feature | Yes |\n\n"
            "| Language | Type | Typing |\n|---|---|---|\n| Python | interpreted | dynamic |\n"
            "| Color | Blue |\n")
    flagged = {s.text: needs_citation(s, "en") for s in segment_sentences(text, scan_markdown(text))}
    assert flagged == {
        "China | 17.8 | 5.2%": True,            # one name, but two figures under their headers
        "Feature | Yes": False,
        "Python | interpreted | dynamic": True,
        "Color | Blue": False,
    }


SOURCE_COLUMN = (
    "| Card | Memory | Launch price | Source |\n|---|---|---|---|\n"
    "| GeForce RTX 4090 | 24 GB GDDR6X memory | $1,599 launch price | [2] |\n"
    "| Radeon RX 7900 XTX | 24 GB GDDR6 memory | $999 launch price | [2] |\n"
    "\n## References\n\n[1] https://a.example/4090\n[2] https://b.example/7900\n"
)


def test_a_source_column_keeps_its_markers_and_takes_the_new_ones() -> None:
    kept = trace(SOURCE_COLUMN, GPU_RECORDS)
    # the author's [2] on the 4090 row names the 7900's review: kept, checked, warned about, and
    # the verified source joins it in the same cell; the 7900 row's is right and stays alone
    assert _rows(kept.report)[1:] == [
        "| GeForce RTX 4090 | 24 GB GDDR6X memory | $1,599 launch price | [1][2] |",
        "| Radeon RX 7900 XTX | 24 GB GDDR6 memory | $999 launch price | [1] |",
    ]
    assert [r.url for r in kept.references] == ["https://b.example/7900", "https://a.example/4090"]
    unsupported = [w for w in kept.warnings if "not supported" in w]
    assert len(unsupported) == 1
    at = SOURCE_COLUMN.index("GeForce")
    assert unsupported[0].startswith(f"existing citation [1] on the sentence at {at}..")
    replaced = trace(SOURCE_COLUMN, GPU_RECORDS, TraceOptions(existing="replace"))
    assert _rows(replaced.report)[1:] == [
        "| GeForce RTX 4090 | 24 GB GDDR6X memory | $1,599 launch price | [1] |",
        "| Radeon RX 7900 XTX | 24 GB GDDR6 memory | $999 launch price | [2] |",
    ]


@pytest.mark.parametrize("style", ["numeric", "superscript", "link"])
def test_a_url_or_code_span_ends_at_its_cell(style: str) -> None:
    # GFM splits a row at unescaped pipes before it reads code spans, links and URLs in a cell
    report = ("|Card|Memory|Launch price|\n|---|---|---|\n"
              "|GeForce RTX 4090|24 GB GDDR6X memory|$1,599 launch price see https://a.example/4090|\n"
              "| GeForce RTX 4090 | 24 GB GDDR6X memory | $1,599 launch price `x|y` |\n")
    first = trace(report, GPU_RECORDS, TraceOptions(style=style))
    rows = [line for line in first.report.splitlines() if line.startswith("|") and "4090" in line]
    # each row keeps its pipes, and its marker stands in its third cell, the header's last (GFM
    # splits "`x|y`" at its pipe and drops the fourth cell that makes)
    assert [row.count("|") for row in rows] == [line.count("|") for line in report.splitlines()[2:]]
    assert all(row.endswith("|") and row[:row.index("[1]")].count("|") == 3 for row in rows)
    assert len(first.citations) == 2
    # tracing the output again changes nothing: the markers are found where they were put
    again = trace(first.report, GPU_RECORDS, TraceOptions(style=style))
    assert again.report == first.report


def test_a_stray_backtick_does_not_hide_markers_in_later_rows() -> None:
    report = ("| Card | Memory | Launch price |\n|---|---|---|\n"
              "| `GeForce RTX 4090 | 24 GB GDDR6X memory | $1,599 launch price [2] |\n"
              "| Radeon RX 7900 XTX | 24 GB GDDR6 memory | $999 launch price` |\n"
              "\n## References\n\n[1] https://a.example/4090\n[2] https://b.example/7900\n")
    result = trace(report, GPU_RECORDS, TraceOptions(existing="replace"))
    # the author's [2] (the 7900's review, on the 4090 row) is found and replaced by the right one
    assert _rows(result.report)[1].endswith("$1,599 launch price [1] |")
    assert [r.url for r in result.references] == ["https://a.example/4090", "https://b.example/7900"]


def test_a_row_number_is_no_figure_of_the_row() -> None:
    report = ("| # | Card | Memory | Launch price |\n|---|---|---|---|\n"
              "| 1 | GeForce RTX 4090 | 24 GB GDDR6X memory | $1,599 launch price |\n")
    assert _rows(trace(report, GPU_RECORDS).report)[1].endswith("$1,599 launch price[1] |")
    ranked = report.replace("| # |", "| Rank |")  # a rank is a claim: the record must state it
    assert trace(ranked, GPU_RECORDS).citations == ()


def test_a_row_is_cited_only_by_a_record_about_its_subject() -> None:
    records = [
        {"url": "https://h.example/hubble", "title": "Hubble Space Telescope",
         "content": "The Hubble Space Telescope was launched on 24 April 1990 aboard the Space Shuttle "
                    "Discovery. Its primary mirror is 2.4 metres across."},
        {"url": "https://w.example/webb", "title": "James Webb Space Telescope",
         "content": "Webb was launched on 25 December 2021 on an Ariane 5. Its primary mirror is 6.5 metres "
                    "across."},
        *FILLER,
    ]
    report = ("| Telescope | Launch | Mirror |\n|---|---|---|\n"
              "| Hubble Space Telescope | 24 April 1990 | 2.4 metres |\n"
              "| Chandra X-ray Observatory | 24 April 1990 | 2.4 metres |\n"   # Hubble's figures
              "| James Webb | 25 December 2021 | 6.5 metres |\n")
    result = trace(report, records)
    assert [c.sentence.split(" |")[0] for c in result.citations] == ["Hubble Space Telescope", "James Webb"]
    # an author's citation of Hubble's page for the Chandra row is kept, and said to be wrong
    kept = trace(report.replace("2.4 metres |\n| James", "2.4 metres [1] |\n| James")
                 + "\n## References\n\n[1] https://h.example/hubble\n", records)
    (warning,) = [w for w in kept.warnings if "not supported" in w]
    assert "it does not name 'Chandra X-ray Observatory'" in warning


def test_a_column_of_properties_names_no_subject() -> None:
    # "| Launch date | 25 December 2021 |" under "| Property | Value |" is about the table's thing:
    # a record that states the date is its source without writing "launch date"
    records = [
        {"url": "https://esa.example/webb", "title": "Webb lifts off on Ariane 5",
         "content": "The James Webb Space Telescope lifted off on an Ariane 5 launcher from Kourou at "
                    "13:20 CET on 25 December 2021."},
        *FILLER,
    ]
    for header in ("| Property | Value |", "| Metric | Value |", "|  | Webb |"):
        report = f"{header}\n|---|---|\n| Launch date | 25 December 2021 |\n"
        assert [c.sentence for c in trace(report, records).citations] == ["Launch date | 25 December 2021"]
    from tracer.markdown import scan_markdown
    from tracer.segment import segment_sentences

    text = "| Telescope | Launch |\n|---|---|\n| 1. Hubble [2] | 1990 |\n"
    assert [s.subject for s in segment_sentences(text, scan_markdown(text))] == ["1. Hubble [2]"]
    text = "| # | Telescope | Launch |\n|---|---|---|\n| 1 | Hubble | 1990 |\n"
    assert [s.subject for s in segment_sentences(text, scan_markdown(text))] == ["Hubble"]


def test_an_author_citation_of_a_row_is_held_to_every_figure() -> None:
    report = ("| Card | Memory | Launch price |\n|---|---|---|\n"
              "| Radeon RX 7900 XTX | 24 GB GDDR6 memory | $1,099 launch price [1] |\n"
              "\n## References\n\n[1] https://b.example/7900\n")
    result = trace(report, GPU_RECORDS)
    (cited,) = result.citations
    assert cited.sources[0].match == "existing" and cited.sources[0].unstated == ("$1099",)
    (warning,) = [w for w in result.warnings if "not supported" in w]
    assert "does not state $1099" in warning


def test_a_line_that_starts_another_block_ends_the_table() -> None:
    report = ("| Card | Memory |\n|---|---|\n| GeForce RTX 4090 | 24 GB GDDR6X memory |\n"
              "## Radeon | AMD\n> a quote | with a pipe\n- a list | item\n")
    from tracer.markdown import scan_markdown

    layout = scan_markdown(report)
    assert [report[a:b] for a, b in layout.table_rows] == ["| GeForce RTX 4090 | 24 GB GDDR6X memory |"]
    assert [report[a:b] for a, b in layout.headings] == ["## Radeon | AMD"]


def test_a_table_in_a_quote_is_left_alone() -> None:
    report = ("Intro.\n\n> | Card | Memory | Launch price |\n> |---|---|---|\n"
              "> | GeForce RTX 4090 | 24 GB GDDR6X memory | $1,599 launch price |\n\n"
              "> The GeForce RTX 4090 has 24 GB of GDDR6X memory and a launch price of $1,599.\n")
    result = trace(report, GPU_RECORDS)
    # no sentence joins the quoted table's lines, and no marker goes past its last pipe
    assert [c.sentence for c in result.citations] == [
        "The GeForce RTX 4090 has 24 GB of GDDR6X memory and a launch price of $1,599."]
    assert "$1,599 launch price |\n" in result.report


def test_cells_past_the_header_take_no_marker() -> None:
    report = ("| Card | Memory | Launch price |\n|---|---|---|\n"
              "| GeForce RTX 4090 | 24 GB GDDR6X memory | $1,599 launch price | 2022 |\n")
    assert _rows(trace(report, GPU_RECORDS).report)[1] == \
        "| GeForce RTX 4090 | 24 GB GDDR6X memory | $1,599 launch price[1] | 2022 |"


@pytest.mark.parametrize(("report", "placement"), [
    ("| Card | Memory | Launch price |\n|---|---|---|\n"
     "| GeForce RTX 4090 | 24 GB GDDR6X memory | $1,599 launch price [1] [2] |\n", "before"),
    ("| Card | Memory | Launch price |\n|---|---|---|\n"
     "| GeForce RTX 4090 | 24 GB GDDR6X memory | $1,599 launch price [1, 2] |\n", "before"),
    ("NVIDIA released the GeForce RTX 4090 graphics card in October 2022 [2].\n", "after"),
])
def test_a_second_trace_puts_the_markers_where_the_first_did(report: str, placement: str) -> None:
    report += "\n## References\n\n[1] https://a.example/4090\n[2] https://b.example/7900\n"
    for style in ("numeric", "footnote", "link"):
        options = TraceOptions(style=style, placement=placement)
        first = trace(report, GPU_RECORDS, options).report
        assert trace(first, GPU_RECORDS, options).report == first, style


def test_a_row_is_not_read_for_word_order() -> None:
    # "2.4 mg" before "STEP-1" is the columns' order, not who did what to whom
    records = [
        {"url": "https://n.example/step1", "title": "STEP-1 trial of semaglutide",
         "content": "In the STEP-1 trial, semaglutide 2.4 mg produced a mean weight loss of 14.9% over "
                    "68 weeks."},
        *FILLER,
    ]
    report = ("| Drug | Trial | Weight loss | Duration |\n|---|---|---|---|\n"
              "| Semaglutide 2.4 mg | STEP-1 | 14.9% | 68 weeks |\n")
    assert len(trace(report, records).citations) == 1


def test_the_language_is_read_from_words_not_from_markers() -> None:
    # an openJiuwen output carries its sources' English titles and URLs into a Chinese report: a
    # second trace read it as English and wrote "## References"
    title = " ".join(["English"] * 30)
    url = "https://news.example/tianhe-launch-story-with-a-long-english-path"
    records = [{"url": url, "title": title,
                "content": "2021年4月29日，长征五号B遥二运载火箭在文昌航天发射场将天和核心舱送入预定轨道。"}]
    marker = f"[source_tracer_result][{title}]({url})"
    report = f"2021年4月29日，长征五号B遥二运载火箭在文昌航天发射场将天和核心舱送入预定轨道{marker * 3}。\n"
    out = trace(report, records, TraceOptions(style="openjiuwen")).report
    assert "## 参考文献" in out and "## References" not in out


@pytest.mark.parametrize(("report", "rows"), [
    ("| Ref |\n|---|\n| [1](https://a.example/4090)", []),
    ("| a | b |\n|---|---|\n| x | y |\n| [1](#ref-1)", ["x | y"]),
    ("| a |\n|---|\n| [1](#ref-1) |\n", []),
    ("| a | b |\n|---|---|\n| [1](#ref-1) | GeForce RTX 4090 graphics card |\n",
     ["GeForce RTX 4090 graphics card"]),
])
def test_a_link_shaped_marker_is_no_value_of_its_row(report: str, rows: list[str]) -> None:
    from tracer.markdown import scan_markdown
    from tracer.segment import segment_sentences

    sents = segment_sentences(report, scan_markdown(report))
    assert [s.text for s in sents] == rows
    trace(report, GPU_RECORDS)  # and the trace goes through (it raised IndexError)


def test_a_marker_is_no_figure_of_a_row() -> None:
    from tracer.markdown import scan_markdown
    from tracer.recognize import needs_citation
    from tracer.segment import segment_sentences

    def flagged(text: str) -> list[bool]:
        return [needs_citation(s, "en") for s in segment_sentences(text, scan_markdown(text))]

    text = ("| Feature | Supported | Source |\n|---|---|---|\n| Feature | Yes | [1] |\n"
            "| Ray tracing [3] | Yes |\n| Memory [12] | 24 GB |\n")
    assert flagged(text) == flagged(strip_markers(text)) == [False, True, True]


def test_replace_with_placement_after_puts_the_marker_after_the_period() -> None:
    report = ("NVIDIA released the GeForce RTX 4090 graphics card in October 2022 [2].\n"
              "\n## References\n\n[1] https://a.example/4090\n[2] https://b.example/7900\n")
    out = trace(report, GPU_RECORDS, TraceOptions(existing="replace", placement="after")).report
    assert out.startswith("NVIDIA released the GeForce RTX 4090 graphics card in October 2022.[1]\n")


def test_a_row_takes_no_figures_the_record_gives_another_row() -> None:
    # one page states both trials; each row is cited only with the figures stated of its drug
    drugs = [TRIALS, *FILLER]
    report = ("| Drug | Trial | Weight loss | Duration |\n|---|---|---|---|\n"
              "| Semaglutide 2.4 mg | STEP-1 | 14.9% | 68 weeks |\n"
              "| Tirzepatide 15 mg | SURMOUNT-1 | 14.9% | 72 weeks |\n"     # semaglutide's loss
              "| Liraglutide 3.0 mg | SCALE | 20.9% | 68 weeks |\n"        # nobody's row
              "| Tirzepatide 15 mg | SURMOUNT-1 | 20.9% | 72 weeks |\n")
    cited = [c.sentence.split(" |")[0] + c.sentence.split("|")[2] for c in trace(report, drugs).citations]
    assert cited == ["Semaglutide 2.4 mg 14.9% ", "Tirzepatide 15 mg 20.9% "]
    # the sentence after a subject's counts for it, unless it names another row's subject
    cars = [{"url": "https://cn.example/rank", "title": "2023年新能源车企销量排行",
             "content": "2023年新能源车企销量排行中，比亚迪以302.4万辆居首，特斯拉以180.9万辆位列第二，"
                        "理想汽车交付37.6万辆，同比增长182.2%。蔚来交付16.0万辆，同比增长30.7%。"}, *FILLER]
    report = ("| 车企 | 交付量 | 同比增长 |\n|---|---|---|\n| 理想汽车 | 37.6万辆 | 182.2% |\n"
              "| 蔚来 | 37.6万辆 | 182.2% |\n| 理想汽车 | 16.0万辆 | 30.7% |\n| 蔚来 | 16.0万辆 | 30.7% |\n")
    assert [c.sentence for c in trace(report, cars).citations] == [
        "理想汽车 | 37.6万辆 | 182.2%", "蔚来 | 16.0万辆 | 30.7%"]


@pytest.mark.parametrize(("content", "report"), [
    ("Claude 3.5 Sonnet does not support a context window of 1 million tokens.",
     "| Model | Context window |\n|---|---|\n| Claude 3.5 Sonnet | 1 million tokens |\n"),
    ("GPT-5 may launch in 2025 with a context window of 1 million tokens and 90% on MMLU.",
     "| Model | Release | Context window | MMLU |\n|---|---|---|---|\n"
     "| GPT-5 | 2025 | 1 million tokens | 90% |\n"),
    ("The startup claims that its battery lasts 1,000 cycles and charges in 10 minutes.",
     "| Startup battery | Cycle life | Charge time |\n|---|---|---|\n"
     "| Battery | 1,000 cycles | 10 minutes |\n"),
    ("比亚迪2023年销量并未达到300万辆，实际为280万辆。",
     "| 企业 | 2023年销量 |\n|---|---|\n| 比亚迪 | 300万辆 |\n"),
])
def test_a_row_is_not_cited_to_a_figure_its_record_denies_hedges_or_attributes(content: str,
                                                                              report: str) -> None:
    record = {"url": "https://x.example/1", "title": "Source", "content": content}
    assert trace(report, [record, *FILLER]).citations == ()
    # stated plainly, the same figures are the row's source
    plain = {"url": "https://x.example/1", "title": "Source",
             "content": "Claude 3.5 Sonnet supports a context window of 1 million tokens."}
    assert len(trace("| Model | Context window |\n|---|---|\n| Claude 3.5 Sonnet | 1 million tokens |\n",
                     [plain, *FILLER]).citations) == 1


def test_a_header_in_another_script_than_its_value_is_left_out_of_the_claim() -> None:
    from tracer.markdown import scan_markdown
    from tracer.segment import segment_sentences

    report = ("| 显卡 | 显存 | 首发价 |\n|---|---|---|\n| GeForce RTX 4090 | 24 GB GDDR6X | $1,599 |\n"
              "| Radeon RX 7900 XTX | 24 GB GDDR6 | $999 |\n")
    assert [s.claim for s in segment_sentences(report, scan_markdown(report))] == [
        "GeForce RTX 4090, 24 GB GDDR6X, 首发价 $1,599", "Radeon RX 7900 XTX, 24 GB GDDR6, 首发价 $999"]
    assert len(trace(report, GPU_RECORDS).citations) == 2


def test_a_month_a_number_sign_or_a_word_that_holds_a_negation_is_no_hedge() -> None:
    records = [{"url": "https://x.example/q", "title": "Quarterly results",
                "content": "In May 2023, the company reported revenue of $5.2 billion, its No. 1 quarter."},
               {"url": "https://x.example/cn", "title": "营收",
                "content": "该公司营收为52亿元，位居若干同行之首。"},
               *FILLER]
    report = "| Company | Month | Revenue |\n|---|---|---|\n| The company | May 2023 | $5.2 billion |\n"
    assert len(trace(report, records).citations) == 1
    report = "| 公司 | 营收 |\n|---|---|\n| 该公司 | 52亿元 |\n"
    assert len(trace(report, records).citations) == 1


@pytest.mark.parametrize(("content", "report"), [
    ("The James Webb Space Telescope cost about $10 billion, and its propellant is expected to last for "
     "more than 20 years.",
     "| Telescope | Cost |\n|---|---|\n| James Webb Space Telescope | $10 billion |\n"),
    ("2023年理想汽车交付37.6万辆，同比增长182.2%，但未能完成40万辆的年度目标。",
     "| 车企 | 交付量 | 同比增长 |\n|---|---|---|\n| 理想汽车 | 37.6万辆 | 182.2% |\n"),
    ("阿波罗11号是阿波罗计划的第五次载人任务，于1969年7月16日发射。",
     "| 任务 | 发射日期 |\n|---|---|\n| 阿波罗11号 | 1969年7月16日 |\n"),
    ("Netflix Premium, its top plan, is priced at $22.99 a month.",     # "plan" is a noun here
     "| Service | Price |\n|---|---|\n| Netflix Premium | $22.99 |\n"),
    ("The GeForce RTX 4090 costs $1,599; warranty claims are rare.",
     "| Card | Price |\n|---|---|\n| GeForce RTX 4090 | $1,599 |\n"),
])
def test_a_hedge_in_another_clause_or_a_word_that_only_looks_like_one_is_no_hedge(content: str,
                                                                                  report: str) -> None:
    record = {"url": "https://x.example/1", "title": "Source", "content": content}
    assert len(trace(report, [record, *FILLER]).citations) == 1


def test_a_subject_named_once_then_spoken_of() -> None:
    # the page names Hubble once; its figures come two sentences on
    record = {"url": "https://h.example/hubble", "title": "Hubble",
              "content": "The Hubble Space Telescope is a space telescope operated by NASA. It orbits the "
                         "Earth. It was launched in 1990 and has a 2.4-metre mirror. Its instruments were "
                         "serviced by five missions."}
    report = ("| Telescope | Launch | Mirror |\n|---|---|---|\n"
              "| Hubble Space Telescope | 1990 | 2.4 metres |\n")
    assert len(trace(report, [record, *FILLER]).citations) == 1
    # a figure the page writes in words only is not asked where it stands
    report = ("| Telescope | Launch | Servicing missions |\n|---|---|---|\n"
              "| Hubble Space Telescope | 1990 | 5 |\n")
    assert len(trace(report, [record, *FILLER]).citations) == 1
    # another table keyed by years names no other thing of the first
    tesla = {"url": "https://t.example/tesla", "title": "Tesla",
             "content": "Tesla is an American electric vehicle maker based in Austin. Its total revenue in "
                        "2023 was $96.8 billion, up 19%."}
    one = "| Company | Revenue | Growth |\n|---|---|---|\n| Tesla | $96.8 billion | 19% |\n"
    two = one + "\n| Year | Deliveries |\n|---|---|\n| 2023 | 1.81 million |\n"
    assert len(trace(one, [tesla, *FILLER]).citations) == 1
    assert [c.sentence for c in trace(two, [tesla, *FILLER]).citations] == ["Tesla | $96.8 billion | 19%"]


def test_code_or_an_image_holding_a_marker_is_no_source_cell() -> None:
    for note, row in (("`buf[1]`", "$1,599 launch price | `buf[1]`[1] |"),  # the code is the row's last value
                      ("![chart[1]](c.png)", "$1,599 launch price[1] | ![chart[1]](c.png) |")):
        report = ("| Card | Memory | Launch price | Note |\n|---|---|---|---|\n"
                  f"| GeForce RTX 4090 | 24 GB GDDR6X memory | $1,599 launch price | {note} |\n")
        result = trace(report, GPU_RECORDS)
        assert _rows(result.report)[1].endswith(row)
        assert trace(result.report, GPU_RECORDS).report == result.report


def test_a_quoted_table_with_mixed_prefixes_is_left_alone_and_a_heading_may_precede_a_definition() -> None:
    report = ("> | Card | Memory | Launch price |\n>|---|---|---|\n"
              "> | GeForce RTX 4090 | 24 GB GDDR6X memory | $1,599 launch price |\n")
    assert trace(report, GPU_RECORDS).report == report
    from tracer.existing import find_existing_markers
    from tracer.markdown import scan_markdown
    from tracer.segment import segment_sentences

    text = "Fact one.\n\n## Notes\n[1][^1]: see below.\n\n[^1]: a note.\n"  # removing [1] would define
    layout = scan_markdown(text)
    assert find_existing_markers(text, layout, segment_sentences(text, layout)) == []


def test_a_run_of_markers_before_a_colon_goes_when_all_of_it_goes() -> None:
    # removing "[2][3]" leaves ": …", which defines nothing: kept as text they would be stale
    records = [{"url": "https://a.example/tianhe", "title": "天和",
                "content": "2021年4月29日，长征五号B遥二运载火箭在文昌航天发射场将天和核心舱送入预定轨道。"}]
    report = ("- [2][3]: 2021年4月29日，长征五号B遥二运载火箭在文昌航天发射场将天和核心舱送入预定轨道。\n\n"
              "## 参考文献\n\n[1] https://a.example/tianhe\n[2] https://b.example/x\n[3] https://c.example/y\n")
    out = trace(report, records).report
    assert out.startswith("- : 2021年4月29日")


@pytest.mark.parametrize(("placement", "expected"), [
    ("before", "on 25 December 2021[1]. It was built by NASA."),
    ("after", "on 25 December 2021. [1] It was built by NASA."),
])
def test_under_replace_the_authors_slot_obeys_the_placement(placement: str, expected: str) -> None:
    records = [{"url": "https://esa.example/webb", "title": "Webb lifts off",
                "content": "Webb lifted off on an Ariane 5 rocket from Kourou, French Guiana, on 25 December "
                           "2021."},
               *FILLER]
    report = ("Webb lifted off on an Ariane 5 rocket from Kourou, French Guiana, on 25 December 2021. [1] "
              "It was built by NASA.\n\n## References\n\n[1] https://esa.example/webb\n")
    out = trace(report, records, TraceOptions(existing="replace", placement=placement)).report
    assert expected in out


def _cited(report: str, contents: list[str]) -> list[str]:
    records = [{"url": f"https://s.example/{i}", "title": f"Source {i}", "content": c}
               for i, c in enumerate(contents)]
    return [c.sentence for c in trace(report, [*records, *FILLER]).citations]


@pytest.mark.parametrize(("report", "contents", "cited"), [
    # a rank or year column: the subject is the first value that names something
    ("| Rank | Country | GDP 2023 (trillion USD) |\n|---|---|---|\n| 3 | Japan | 4.5 |\n",
     ["In 2023 Germany became the world's No. 3 economy, with a GDP of 4.5 trillion US dollars."], []),
    ("| Year | Champion | Final score |\n|---|---|---|\n| 2018 | Brazil | 4–2 |\n",
     ["France beat Croatia 4–2 in the 2018 World Cup final in Moscow."], []),
    # figures two sentences on, in sentences that go on about the subject; not in one about another
    ("| Automaker | 2023 US deliveries |\n|---|---|\n| Tesla | 654,888 |\n| Ford | 72,608 |\n",
     ["Tesla remains the best-selling EV brand in the United States. The overall US EV market grew 40% "
      "last year. Rivian, a smaller rival, delivered 654,888 vehicles in 2023."], []),
    ("| Automaker | 2023 deliveries | YoY growth |\n|---|---|---|\n| Tesla | 1.81 million | 38% |\n"
     "| Ford | 1.99 million | 5% |\n",
     ["Tesla delivered 1.81 million vehicles in 2023. That was up 38% from 2022, far faster growth than "
      "Ford managed."], ["Tesla | 1.81 million | 38%"]),
    # every figure stated plainly, not one of them
    ("| Phone | Launch | Price |\n|---|---|---|\n| Pixel 10 | August 2025 | $799 |\n",
     ["The Pixel 10 launched in August 2025, but Google did not confirm the $799 price."], []),
    ("| Company | Revenue |\n|---|---|\n| Acme Corp | $10 billion |\n",
     ["Reportedly, Acme Corp earned $10 billion in revenue last year."], []),
    ("| Company | 2024 deliveries |\n|---|---|\n| Tesla | 2 million vehicles |\n",
     ["Tesla fell short of its target of 2 million vehicles in 2024."], []),
    ("| 车企 | 营收 |\n|---|---|\n| 蔚来汽车 | 100亿元 |\n", ["据称，蔚来汽车营收达到100亿元。"], []),
    # a comma after a figure ends its clause; ordinary words are no hedge; a company suffix
    ("| Company | Fiscal year | Revenue |\n|---|---|---|\n| Apple Inc. | 2023 | $383.3 billion |\n",
     ["Apple's revenue was $383.3 billion in fiscal 2023, which would mark its first annual decline in "
      "four years."], ["Apple Inc. | 2023 | $383.3 billion"]),
    ("| Company | Revenue | Net income |\n|---|---|---|\n| Apple | $383.3 billion | $97.0 billion |\n",
     ["Apple reported revenue of $383.3 billion and net income of $97.0 billion with no debt downgrade."],
     ["Apple | $383.3 billion | $97.0 billion"]),
    # a trial's name is no figure; "S.No." numbers the rows
    ("| Drug | Trial | Weight loss | Duration |\n|---|---|---|---|\n"
     "| Tirzepatide 15 mg | SURMOUNT-1 | 20.9% | 72 weeks |\n",
     ["SURMOUNT-1 enrolled 2,539 adults. Those on tirzepatide 15 mg lost 20.9% of their weight over 72 "
      "weeks."], ["Tirzepatide 15 mg | SURMOUNT-1 | 20.9% | 72 weeks"]),
    ("| S.No. | Country | GDP 2023 (trillion USD) | Growth |\n|---|---|---|---|\n"
     "| 7 | Japan | 4.2 | 1.9% |\n",
     ["Japan's GDP was 4.2 trillion US dollars in 2023, and its economy grew 1.9%."],
     ["7 | Japan | 4.2 | 1.9%"]),
    # another row's subject named without its rarest word still ends what the sentence before said
    ("| Rocket | Payload to orbit |\n|---|---|\n| Falcon Heavy | 45 tonnes |\n"
     "| Blue Origin New Glenn | 45 tonnes |\n",
     ["SpaceX's Falcon Heavy rocket first flew in 2018. The New Glenn rocket from Origin can lift 45 tonnes "
      "to orbit."], ["Blue Origin New Glenn | 45 tonnes"]),
])
def test_rows_against_pages_that_speak_of_several_things(report: str, contents: list[str],
                                                          cited: list[str]) -> None:
    assert _cited(report, contents) == cited


def test_a_table_keyed_by_years_names_no_subject() -> None:
    from tracer.markdown import scan_markdown
    from tracer.segment import segment_sentences

    report = ("| 年份 | 交付量 | 同比增长 |\n|---|---|---|\n| 2023 | 37.6万辆 | 182.2% |\n"
              "| 2022年 | 13.3万辆 | 47.2% |\n")
    assert [s.subject for s in segment_sentences(report, scan_markdown(report))] == ["", ""]
    assert _cited(report, ["理想汽车2023年交付37.6万辆新车。与2022年的13.3万辆相比，同比增长182.2%。"]) == [
        "2023 | 37.6万辆 | 182.2%"]


def test_a_period_after_a_company_suffix_or_an_initial_ends_no_record_sentence() -> None:
    # "Pear Inc. reported …": the record's sentence names the row's subject and states its figures;
    # read as two sentences ("Pear Inc." / "reported revenue of …") it named the subject in one and
    # stated the figures in the other, and the row went uncited
    pear = {"url": "https://pear.example/results", "title": "Pear results",
            "content": "Pear Inc. reported revenue of 5 billion dollars in 2021. Pear employs 3,000 people."}
    report = ("| Company | Notes |\n|---|---|\n"
              "| Pear | Pear Inc. reported revenue of 5 billion dollars in 2021. |\n")
    for existing in ("keep", "replace"):
        result = trace(report, [pear, *FILLER], TraceOptions(existing=existing))
        assert [s.url for c in result.citations for s in c.sources] == ["https://pear.example/results"]
        quote = result.citations[0].sources[0].evidence
        assert quote.startswith("Pear Inc. reported revenue of 5 billion dollars in 2021.")
    # a trace of the traced report cites the same
    once = trace(report, [pear, *FILLER], TraceOptions(existing="replace")).report
    assert trace(once, [pear, *FILLER], TraceOptions(existing="replace")).report == once


def test_a_row_whose_closest_record_scores_over_the_threshold_says_why_it_is_not_cited() -> None:
    drugs = [TRIALS, *FILLER]
    report = ("| Drug | Trial | Weight loss | Duration |\n|---|---|---|---|\n"
              "| Tirzepatide 15 mg | SURMOUNT-1 | 14.9% | 72 weeks |\n")
    result = trace(report, drugs)
    assert result.citations == ()
    (miss,) = result.unsupported
    assert miss.closest is not None and miss.closest.score >= TraceOptions().threshold
    assert "does not state the row's figures where it speaks of what the row is about" in miss.reason


@pytest.mark.parametrize("header", [
    "| Card [1] | Memory | Launch price |", "| Card | Memory [1] | Launch price |",
    "| # [1] | Card | Launch price |", "| 显卡 | 备注【1】 | 首发价 |",
])
def test_a_marker_in_a_header_cell_is_no_word_of_the_rows_claims(header: str) -> None:
    # Under replace the marker goes, so a second trace reads the header without it: the first
    # must read it so too, or the rows' claims, scores and citations differ between the two.
    rows = ("|---|---|---|\n| GeForce RTX 4090 | 24 GB GDDR6X memory | $1,599 launch price |\n"
            "| Radeon RX 7900 XTX | 24 GB GDDR6 memory | $999 launch price in December 2022 |\n")
    options = TraceOptions(existing="replace")
    marked = trace(f"{header}\n{rows}", GPU_RECORDS, options)
    plain = trace(f"{strip_markers(header)}\n{rows}", GPU_RECORDS, options)
    def cited(result: Any) -> list[tuple[str, list[tuple[str, float]]]]:
        return [(c.sentence, [(s.url, s.score) for s in c.sources]) for c in result.citations]
    assert cited(marked) and cited(marked) == cited(plain)
    assert trace(marked.report, GPU_RECORDS, options).report == marked.report


@pytest.mark.parametrize("style", ["numeric", "superscript", "footnote"])
def test_a_row_whose_last_value_is_code_takes_its_marker_after_the_code(style: str) -> None:
    records = [{"url": "https://so.example/taskgroup", "title": "TaskGroup vs gather",
                "content": "Use gather if you want partial results despite failures, with "
                           "return_exceptions=True, or if you must support Python 3.8."}, *FILLER]
    report = ("| Situation | Recommended |\n|---|---|\n"
              "| Want partial results despite failures | `gather(..., return_exceptions=True)` |\n")
    first = trace(report, records, TraceOptions(style=style))
    row = _rows(first.report)[1]
    # the marker closes the row, after its last value, not in the middle of it
    marker = {"numeric": "[1]", "superscript": "<sup>[1]</sup>", "footnote": "[^1]"}[style]
    assert row == f"| Want partial results despite failures | `gather(..., return_exceptions=True)`{marker} |"
    assert first.citations[0].sentence.endswith("`gather(..., return_exceptions=True)`")
    assert trace(first.report, records, TraceOptions(style=style)).report == first.report


def test_a_signed_change_in_a_row_is_held_to_the_records_direction() -> None:
    record = {"url": "https://stats.example/2024-09", "title": "9月份70个大中城市商品住宅销售价格变动情况",
              "content": "2024年9月份，临江新建商品住宅销售价格环比下降0.6%，同比下降5.9%；二手住宅销售价格"
                         "环比下降0.9%，同比下降8.1%。"}
    table = "| 指标 | 9月数据 |\n|---|---|\n| 二手住宅价格同比 | {} |\n"
    up = trace(table.format("+8.1%"), [record, *FILLER])
    assert not up.citations and up.unsupported[0].closest is not None
    assert up.unsupported[0].closest.conflict == \
        'its quote says "同比下降8.1%" where the sentence says "+8.1%"'
    down = trace(table.format("-8.1%"), [record, *FILLER])
    assert all(u.closest is None or not u.closest.conflict for u in down.unsupported)


def test_a_header_that_names_no_property_is_not_read_into_the_row() -> None:
    record = {"url": "https://gov.example/drought", "title": "抗旱应急响应",
              "content": "省防汛抗旱指挥部于8月9日启动抗旱四级应急响应，8月14日提升至三级。"}
    report = "| 日期 | 事件 |\n|---|---|\n| 8月9日 | 启动抗旱四级应急响应 |\n| 8月14日 | 提升至三级 |\n"
    result = trace(report, [record, *FILLER])
    assert [c.sentence for c in result.citations] == ["8月9日 | 启动抗旱四级应急响应", "8月14日 | 提升至三级"]
