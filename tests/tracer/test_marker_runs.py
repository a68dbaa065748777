"""Runs of old markers ("[1], [2]", "[1]; [2]", "[1]、[2]"): removed or replaced whole, with what
joins them and, where nothing is written in their place, the blank before them, so existing=replace
leaves no ", " or " ." behind; `unmarked` is the reading both sides of the lossless check share."""

from __future__ import annotations

import pytest

from tracer import TraceOptions, trace
from tracer.existing import unmarked
from tracer.markdown import scan_markdown
from tracer.segment import segment_sentences
from tracer.verify import sentence_query

RECORDS = [
    {"url": "https://a.example/falcon", "title": "Falcon 9",
     "content": "The Falcon 9 rocket first flew in June 2010 from Cape Canaveral."},
    {"url": "https://b.example/spacex", "title": "SpaceX",
     "content": "SpaceX's Falcon 9 rocket first flew in June 2010 from Cape Canaveral in Florida."},
]
REFS = "\n## References\n\n[1] https://a.example/falcon\n[2] https://b.example/spacex\n"


@pytest.mark.parametrize(("text", "reads"), [
    ("Canaveral [1], [2].", "Canaveral."),              # a run ending a sentence: joins and blank
    ("Canaveral [1]; [2]\n", "Canaveral\n"),
    ("(see page 4 [1])", "(see page 4)"),
    ("x [1] [2].", "x."),                               # two runs, both ending the sentence
    ("比亚迪[1]、[2]，特斯拉", "比亚迪，特斯拉"),
    ("如[1]、[2]所述", "如所述"),
    ("Tesla [1] and BYD", "Tesla  and BYD"),             # before a word the blank is the text's
    ("BYD [1], and", "BYD, and"),                        # a comma or semicolon after the run: a clause end
    ("比亚迪 [1]，特斯拉", "比亚迪，特斯拉"),
    ("BYD [1]; Tesla", "BYD; Tesla"),
    ("Tesla, [1].", "Tesla, ."),                         # the blank after a comma is the text's
    ("2021. [1] Its", "2021.  Its"),                     # a run opening a list item ("2021."): markers only
    ("in 2021. [1] found that", "in 2021.  found that"),  # ... or a sentence, as its subject
    ("in 2021. [1] and [2] found", "in 2021.  and  found"),
    # after a full stop, with a capital, a figure or the line's end after it: the sentence's before
    ("in 2021. [1] Its", "in 2021. Its"),
    ("in 2021. [1], [2] 2022 was", "in 2021. 2022 was"),
    ("in 2021. [1] [2]\nNext", "in 2021.\nNext"),
    ("in 2021! [1]", "in 2021!"),
    ("[3], [1] found that", ",  found that"),
    ("- [1]: x", "- : x"),                               # ... or a list item
])
def test_unmarked_reads_a_run_of_markers_whole(text: str, reads: str) -> None:
    assert unmarked(text) == reads


def _body(report: str) -> str:
    return report.split("\n\n## References")[0]


def test_a_run_of_old_markers_is_replaced_without_its_joins() -> None:
    report = "The Falcon 9 rocket first flew in June 2010 from Cape Canaveral [1], [2].\n" + REFS
    for existing in ("replace", "keep"):
        once = trace(report, RECORDS, TraceOptions(existing=existing))
        # the new markers take the run's place, the author's blank before it kept
        assert _body(once.report) == "The Falcon 9 rocket first flew in June 2010 from Cape Canaveral [1][2]."
        assert trace(once.report, RECORDS, TraceOptions(existing=existing)).report == once.report


def test_a_run_that_goes_takes_its_joins_and_the_blank_before_it() -> None:
    report = ("The Falcon 9 rocket first flew in June 2010 from Cape Canaveral. "
              "Bananas are yellow [1]; [2]. Tasty, too [2], [1]\n" + REFS)
    once = trace(report, RECORDS, TraceOptions(existing="replace"))
    assert _body(once.report) == ("The Falcon 9 rocket first flew in June 2010 from Cape Canaveral[1][2]. "
                                  "Bananas are yellow. Tasty, too")
    assert unmarked(_body(once.report)) == unmarked(report[:report.index("\n## R")]).rstrip()
    assert trace(once.report, RECORDS, TraceOptions(existing="replace")).report == once.report


@pytest.mark.parametrize("run", ["[2], [3]", "[3], [2]", "[3][2]"])
def test_a_marker_that_stays_keeps_its_place_in_the_run(run: str) -> None:
    # "[2]" links the author's own page ("[2]: url" in the body): it stays, "[3]" goes with its join
    # (a paragraph after it: definitions right above the references list go with it)
    report = (f"Bananas are yellow and tasty {run}.\n\n[2]: https://example.org/own\n\n"
              "They grow in bunches.\n\n## References\n\n[1] https://a.example/falcon\n[3] https://b.example/spacex\n")
    out = trace(report, RECORDS, TraceOptions(existing="replace"))
    assert out.report.startswith("Bananas are yellow and tasty [2].\n\n[2]: https://example.org/own\n")


def test_the_claim_reads_a_run_without_its_joins() -> None:
    # as the output will read once the run is gone, so a second trace matches the same words
    assert sentence_query("汽车出口【来源5】, [2]量为585.9万辆") == "汽车出口量为585.9万辆"
    assert sentence_query("Exports rose [1], [2] to 4.91 million") == "Exports rose  to 4.91 million"


def test_a_run_after_a_full_stop_ends_its_sentence_there() -> None:
    # "[1], [2]" glued to the full stop are that sentence's citations, not the next one's words
    text = "Exports rose to 4.91 million units in 2023.[1], [2] As shown, sales grew in 2024."
    sentences = segment_sentences(text, scan_markdown(text))
    assert [s.text for s in sentences][0] == "Exports rose to 4.91 million units in 2023."
    assert len(sentences) == 2


def test_a_blank_the_author_put_before_the_full_stop_stays_before_it() -> None:
    # a new marker goes before that blank: after it, the blank would read as the marker's
    report = "The Falcon 9 rocket first flew in June 2010 from Cape Canaveral .\n"
    out = trace(report, RECORDS).report
    assert out.startswith("The Falcon 9 rocket first flew in June 2010 from Cape Canaveral[1][2] .\n"), out
    assert unmarked(_body(out)) == report.rstrip("\n")


def test_the_warning_for_a_removed_word_marker_quotes_the_sentence_as_it_now_reads() -> None:
    report = ("As shown in [3], [4], the Falcon 9 rocket first flew in June 2010 from Cape Canaveral.\n"
              "\n## References\n\n[3] https://c.example/x\n[4] https://d.example/y\n")
    out = trace(report, RECORDS, TraceOptions(existing="replace"))
    assert _body(out.report).startswith("As shown in, the Falcon 9 rocket")
    assert any("so the sentence reads, markers aside, 'As shown in, the Falcon 9 rocket" in w
               for w in out.warnings), out.warnings


@pytest.mark.parametrize("wrapped", ["**[1]**", "*[1]*", "__[1]__", "_[1]_", "~~[1]~~", "***[1]***",
                                     "**([1])**", "**[1], [2]**", "*[1][2]*", "<b>[1]</b>",
                                     "<strong>[1]</strong>", "<em>[2]</em>", "**[ref1]**"])
def test_a_marker_in_bold_or_italics_goes_with_its_delimiters(wrapped: str) -> None:
    # removed alone, it left "****", "**" or "<b></b>" behind, which a reader sees
    assert unmarked(f"Cape Canaveral {wrapped}.") == "Cape Canaveral."
    assert unmarked(f"佛罗里达州卡纳维拉尔角{wrapped}。") == "佛罗里达州卡纳维拉尔角。"
    report = f"The Falcon 9 rocket first flew in June 2010 from Cape Canaveral {wrapped}.\n{REFS}"
    for existing in ("keep", "replace"):
        once = trace(report, RECORDS, TraceOptions(existing=existing))
        assert _body(once.report) == "The Falcon 9 rocket first flew in June 2010 from Cape Canaveral [1][2]."
        assert trace(once.report, RECORDS, TraceOptions(existing=existing)).report == once.report
    gone = trace(f"Bananas are yellow {wrapped}.\n{REFS}", RECORDS, TraceOptions(existing="replace"))
    assert gone.report.strip() == "Bananas are yellow."


@pytest.mark.parametrize("text", [
    "**[1]** Open the dashboard.",          # a bold number opening a line labels a step
    "- **[2]** Export the table.",
    "Bold **Revenue rose [1]** here.",      # bold text that ends in a marker: only the marker goes
    "a **[1]**b",                           # no emphasis: a word glued to the closing delimiter
])
def test_what_emphasis_around_a_marker_does_not_take(text: str) -> None:
    assert "**" in unmarked(text)


def test_a_run_after_a_full_stop_that_cites_the_sentence_before_leaves_one_blank() -> None:
    # "long. [1] The …": "long[1]. The …", not "long[1].  The …"; the last run leaves no blank
    report = ("The Falcon 9 rocket first flew in June 2010 from Cape Canaveral. [1] Bananas are yellow. [2]\n"
              + REFS)
    once = trace(report, RECORDS, TraceOptions(existing="replace"))
    assert _body(once.report) == ("The Falcon 9 rocket first flew in June 2010 from Cape Canaveral[1][2]. "
                                  "Bananas are yellow.")
    assert trace(once.report, RECORDS, TraceOptions(existing="replace")).report == once.report
