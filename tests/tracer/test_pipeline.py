"""tracer.trace() end to end: invariants, stats, options, degradation and cancellation."""

from __future__ import annotations

import threading

import pytest

from tracer import CancelledError, InvalidInputError, Mode, TraceOptions, Tuning, trace
from tracer.existing import strip_markers

REPORT = """# Webb

The James Webb Space Telescope launched on 25 December 2021 on an Ariane 5 rocket from Kourou.
Its primary mirror is 8.5 metres across and weighs 705 kg.
The telescope orbits the Sun near the second Lagrange point, about 1.5 million km from Earth.

```python
print("The James Webb Space Telescope launched on 25 December 2021")
```

| instrument | band |
|---|---|
| NIRCam | near-infrared |

## References

[1] Old list entry https://example.org/old
"""

RECORDS = [
    {"url": "https://example.org/webb", "title": "Webb launch",
     "content": "The James Webb Space Telescope launched on 25 December 2021 aboard an Ariane 5 rocket "
                "from Kourou in French Guiana."},
    {"url": "", "title": "broken", "content": "no url"},
    {"url": "https://example.org/l2?utm_source=news", "title": "Webb orbit",
     "content": "Webb orbits the Sun near the second Lagrange point (L2), roughly 1.5 million km from Earth. "
                "Its primary mirror is 6.5 metres across."},
]


def test_citations_are_verified_spans_into_the_input() -> None:
    res = trace(REPORT, RECORDS)
    assert res.mode == "deterministic" and not res.degraded
    cited = {c.sentence.split()[1]: c for c in res.citations}
    assert set(cited) == {"James", "telescope"}
    for c in res.citations:
        assert REPORT[c.start:c.end] == c.sentence
        for s in c.sources:
            content = RECORDS[s.record_index]["content"]
            assert content[s.evidence_start:s.evidence_end] == s.evidence and s.evidence
            assert s.score >= TraceOptions().threshold
    # record 1 was dropped, so the L2 page keeps its request index 2
    assert cited["telescope"].sources[0].record_index == 2
    assert any(w.startswith("record 1 dropped") for w in res.warnings)


def test_conflicting_number_is_not_cited_and_is_reported_unsupported() -> None:
    res = trace(REPORT, RECORDS)
    mirror = "Its primary mirror is 8.5 metres across and weighs 705 kg."
    assert all(c.sentence != mirror for c in res.citations)
    assert any(u.sentence == mirror for u in res.unsupported)


def test_a_figure_in_another_unit_is_not_cited_and_a_converted_one_counts_as_stated() -> None:
    records = [{"url": "https://a.example/bridge", "title": "Hollow Creek bridge",
                "content": "The Hollow Creek bridge spans the river. The Hollow Creek bridge is 1,200 metres "
                           "long and opened to traffic in 1937. It was repainted in 1958."},
               {"url": "https://b.example/weather", "title": "Weather",
                "content": "Rain is expected over the county this week, with cooler nights."}]

    def score(report: str) -> float:
        res = trace(report, records)
        scores = [s.score for c in res.citations for s in c.sources]
        scores += [u.closest.score for u in res.unsupported if u.closest]
        return max(scores)

    right = score("The Hollow Creek bridge is 1,200 metres long.")
    feet = trace("The Hollow Creek bridge is 1,200 feet long.", records)
    assert right == 1.0 and not feet.citations          # "1,200 feet" is not what the record says
    (miss,) = feet.unsupported
    assert miss.closest is not None and miss.closest.unstated == ("1200 ft",)
    assert miss.closest.quote_figures == ("1200 m",)
    assert miss.reason == ("no record supports this sentence; the closest does not state 1200 ft "
                           "(its quote states 1200 m)")
    converted = score("The Hollow Creek bridge is 1.2 km long.")
    wrong = score("The Hollow Creek bridge is 1.5 km long.")
    assert converted > wrong + 0.15                      # 1.2 km is the record's 1,200 metres


def test_a_date_the_record_writes_in_digits_is_a_stated_date() -> None:
    records = [{"url": "https://a.example/launch", "title": "Launch log",
                "content": "Launch log of the station. 2021.04.29 The Tianhe core module lifted off from "
                           "Wenchang aboard a Long March 5B rocket. 2021.06.17 The first crew arrived."}]
    records += [{"url": f"https://b.example/{i}", "title": f"Other {i}", "content": text} for i, text in
                enumerate(["The station's robotic arm was tested in orbit during the summer months.",
                           "Wenchang is a coastal city on Hainan island with a space launch site.",
                           "The Long March 5 family lifts the heaviest payloads of China's rockets.",
                           "Crew members exercise for two hours a day to keep their muscles strong.",
                           "Cargo ships dock with the station automatically within a few hours."])]
    right = trace("The Tianhe core module lifted off from Wenchang on 29 April 2021.", records)
    wrong = trace("The Tianhe core module lifted off from Wenchang on 29 May 2021.", records)
    assert [s.url for c in right.citations for s in c.sources] == ["https://a.example/launch"]
    assert not wrong.citations


def test_a_figure_the_record_writes_in_words_is_a_stated_figure() -> None:
    records = [{"url": "https://a.example/bridge", "title": "Golden Gate facts",
                "content": "The Golden Gate Bridge carries six lanes of traffic and opened in 1937. It took "
                           "four years to build, and eleven workers died during its construction."},
               {"url": "https://b.example/paris", "title": "Paris",
                "content": "Paris is the capital of France and has many museums."}]

    def cited(report: str) -> list[str]:
        return [s.url for c in trace(report, records).citations for s in c.sources]

    assert cited("The Golden Gate Bridge carries 6 lanes of traffic.") == ["https://a.example/bridge"]
    assert cited("The Golden Gate Bridge took 4 years to build.") == ["https://a.example/bridge"]
    assert cited("11 workers died building the Golden Gate Bridge.") == ["https://a.example/bridge"]
    wrong = trace("12 workers died building the Golden Gate Bridge.", records)
    assert not wrong.citations
    (miss,) = wrong.unsupported
    assert miss.closest is not None and miss.closest.unstated == ("12",)  # not "6", "4" or "11"


def test_body_is_lossless_and_references_rebuilt() -> None:
    res = trace(REPORT, RECORDS)
    body_end = REPORT.index("## References")
    assert res.removed_references == REPORT[body_end:]
    stripped = strip_markers(res.report)
    body = REPORT[:body_end]
    assert stripped.startswith(body)  # the input body, byte for byte, then only the new section
    appended = stripped[len(body):]
    assert appended.lstrip("\n").startswith("## References\n")
    section = res.report[res.report.rindex("## References\n"):]
    lines = [ln for ln in section.splitlines() if ln.strip() and not ln.startswith("#")]
    assert [ln.split("]")[0] for ln in lines] == [f"[{r.number}" for r in res.references]
    assert [r.number for r in res.references] == list(range(1, len(res.references) + 1))
    assert "example.org/old" not in res.report
    # the code block keeps its text untouched (no marker inside protected regions)
    assert 'print("The James Webb Space Telescope launched on 25 December 2021")' in res.report


@pytest.mark.parametrize("existing", ["keep", "replace"])
def test_tracing_its_own_output_again_changes_nothing(existing: str) -> None:
    """Bulk re-runs over already re-cited reports must be stable: the second trace keeps the
    first one's markers and rebuilds the same references."""
    from tracer import ExistingPolicy

    opts = TraceOptions(existing=ExistingPolicy(existing))
    first = trace(REPORT, RECORDS, opts)
    second = trace(first.report, RECORDS, opts)
    assert first.citations and second.report == first.report
    # the same sentences cite the same sources (offsets differ: the second input has the markers)
    assert [(strip_markers(c.sentence).strip(), [s.url for s in c.sources]) for c in second.citations] == [
        (c.sentence.strip(), [s.url for s in c.sources]) for c in first.citations]
    assert second.references == first.references


def test_a_report_with_a_lone_surrogate_is_refused_naming_where() -> None:
    """Half of a UTF-16 pair is no text any encoder writes back: the report could not come back as it came."""
    with pytest.raises(InvalidInputError) as exc:
        trace("Webb launched in 2021 \ud83d.", RECORDS)
    assert exc.value.field == "report" and "lone surrogate (U+D83D" in exc.value.reason
    assert "offset 22" in exc.value.reason


def test_lines_ending_in_a_lone_carriage_return_are_named_in_a_warning() -> None:
    report = REPORT.replace("\n", "\r")
    result = trace(report, RECORDS)
    assert any(w.startswith("report: a carriage return with no line feed after it (offset 6)")
               for w in result.warnings), result.warnings
    assert not any("carriage return" in w for w in trace(REPORT.replace("\n", "\r\n"), RECORDS).warnings)


def test_no_records_returns_the_report_unchanged() -> None:
    res = trace(REPORT, [])
    assert res.report == REPORT and res.citations == () and res.references == ()
    assert res.removed_references == ""
    assert res.unsupported and all(u.reason == "no records" for u in res.unsupported)


def test_stats_count_every_stage() -> None:
    res = trace(REPORT, RECORDS)
    st = res.stats
    assert st.records == 2 and st.records_dropped == 1 and st.passages >= 2
    assert st.sentences >= 3 and st.cited_sentences == len(res.citations)
    assert st.citations == sum(len(c.sources) for c in res.citations)
    assert {"records", "markdown", "segment", "existing", "recognize", "retrieve", "match",
            "render"} <= set(st.stage_ms)
    assert st.total_ms >= sum(st.stage_ms.values()) * 0.5


def test_min_score_one_cites_only_exact_quotes() -> None:
    res = trace(REPORT, RECORDS, TraceOptions(min_score=1.0))
    assert all(s.match == "exact" for c in res.citations for s in c.sources)


def test_llm_mode_without_a_model_degrades_and_says_so() -> None:
    res = trace(REPORT, RECORDS, TraceOptions(mode=Mode.LLM))
    assert res.degraded and res.mode == "deterministic"
    assert any("no LLM is configured" in w for w in res.warnings)
    assert res.citations  # the deterministic path still did the work


@pytest.mark.parametrize(
    ("options", "field"),
    [
        (TraceOptions(max_sources=0), "options.max_sources"),
        (TraceOptions(min_score=1.5), "options.min_score"),
        (TraceOptions(language="fr"), "options.language"),
        (TraceOptions(style="bogus"), "options.style"),
        (TraceOptions(reference_format="mla"), "options.reference_format"),
        (TraceOptions(references_heading="a\nb"), "options.references_heading"),
        (TraceOptions(min_score="0.5"), "options.min_score"),           # type: ignore[arg-type]
        (TraceOptions(llm_keep_score=True), "options.llm_keep_score"),
        (TraceOptions(max_sources=2.5), "options.max_sources"),         # type: ignore[arg-type]
        (TraceOptions(min_score=-0.10000000149011612), "options.min_score"),
        (TraceOptions(references_heading=None), "options.references_heading"),  # type: ignore[arg-type]
        (TraceOptions(style=3), "options.style"),                       # type: ignore[arg-type]
        (TraceOptions(strict_figures="no"), "options.strict_figures"),  # type: ignore[arg-type]
        ({"max_source": 2}, "options.max_source"),                     # a mapping's unknown key
        ({"max_sources": 0}, "options.max_sources"),
        (3, "options"),
        ({"tuning": {"min_scor": 0.5}}, "options.tuning.min_scor"),
        ({"tuning": {"passage_chars": "big"}}, "options.tuning.passage_chars"),
        ({"tuning": {"weights_en": [1, 2]}}, "options.tuning.weights_en"),
        ({"tuning": 5}, "options.tuning"),
    ],
)
def test_invalid_options_name_the_field(options: TraceOptions, field: str) -> None:
    with pytest.raises(InvalidInputError) as err:
        trace(REPORT, RECORDS, options)
    assert err.value.field == field
    assert "0000000" not in str(err.value)  # a float32 from protobuf reads as written: -0.1


def test_options_may_be_a_mapping_of_their_fields() -> None:
    given = trace(REPORT, RECORDS, {"max_sources": 1, "existing": "replace", "style": "footnote"})
    assert given.report == trace(REPORT, RECORDS, TraceOptions(max_sources=1, existing="replace",
                                                                style="footnote")).report
    from tracer import Tuning
    tuned = trace(REPORT, RECORDS, {"tuning": {"min_score": 0.3, "figure_conflicts": ["zh", "en"]}})
    assert tuned.report == trace(REPORT, RECORDS, TraceOptions(
        tuning=Tuning(min_score=0.3, figure_conflicts=("zh", "en")))).report


def test_a_whole_float_is_a_count_of_sources() -> None:
    import numpy as np

    assert trace(REPORT, RECORDS, TraceOptions(max_sources=1.0)).citations  # type: ignore[arg-type]
    # any real number will do (numpy's too), and a value out of range reads as written
    assert trace(REPORT, RECORDS, TraceOptions(max_sources=np.int64(2), min_score=np.float32(0.5))).citations
    with pytest.raises(InvalidInputError, match=r"got 1\.0000001$"):
        trace(REPORT, RECORDS, TraceOptions(min_score=1.0000001))


def test_cancel_token_stops_the_trace() -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(CancelledError):
        trace(REPORT, RECORDS, cancel=cancel)


def test_chinese_report_gets_chinese_heading() -> None:
    report = "天和核心舱于2021年4月29日在文昌航天发射场发射升空。红烧肉很好吃。\n"
    records = [{"url": "https://example.cn/a", "title": "天宫",
                "content": "2021年4月29日，天和核心舱在文昌航天发射场由长征五号B遥二运载火箭发射升空。"}]
    res = trace(report, records)
    assert "## 参考文献" in res.report
    assert res.citations and res.citations[0].sentence.startswith("天和核心舱")
    assert strip_markers(res.report).startswith(report.rstrip("\n"))


def test_a_report_in_another_language_is_traced_with_a_warning() -> None:
    report = (
        "Der Eiffelturm wurde im Jahr 1889 fertiggestellt und ist heute 330 Meter hoch. Das Bauwerk "
        "wurde von Gustave Eiffel konstruiert und war bis 1930 das höchste Bauwerk der Welt. Er steht "
        "am Ende des Champ de Mars, nahe dem Ufer der Seine, und ist das Wahrzeichen der Stadt."
    )
    records = [{"url": "https://de.example/eiffel", "title": "Eiffelturm",
                "content": "Der Eiffelturm wurde im Jahr 1889 fertiggestellt und ist heute 330 Meter hoch."}]
    result = trace(report, records)
    assert any("looks like German, not English or Chinese" in w for w in result.warnings)
    # still traced as usual: the verbatim sentence is cited, the text is unchanged
    assert [c.sentence for c in result.citations] == [report.split(". ")[0] + "."]
    assert strip_markers(result.report.split("\n\n## ")[0]) == report

    english = trace("The Eiffel Tower was finished in 1889 and is 330 metres tall today.", records)
    assert not any("looks like" in w for w in english.warnings)


def test_kept_author_citations_are_scored_and_unsupported_ones_warned() -> None:
    report = ("Webb launched on 25 December 2021 from Kourou [1]. Its mirror is 6.5 metres across [2].\n\n"
              "## References\n\n[1] https://e.org/launch\n[2] https://e.org/launch\n")
    records = [
        {"url": "https://e.org/launch", "title": "launch",
         "content": "Webb launched on 25 December 2021 from Kourou on an Ariane 5."},
        {"url": "https://e.org/mirror", "title": "mirror", "content": "Bread needs flour and water."},
    ]
    res = trace(report, records)
    first, second = res.citations
    assert first.sources[0].score == 1.0 and first.sources[0].evidence
    kept = second.sources[0]
    assert kept.match == "existing" and kept.url == "https://e.org/launch"  # the author's choice stays
    assert kept.score < TraceOptions().threshold
    (warning,) = [w for w in res.warnings if w.startswith("existing citation [1] on the sentence at")]
    assert "(score 0.00; it does not state 6.5 m); kept as the author wrote it" in warning
    # a record that states another figure of the sort: the warning says which
    records[1]["content"] = "The primary mirror of Webb weighs 625 kg and is made of beryllium."
    report = ("Its primary mirror weighs 705 kg [1].\n\n## References\n\n[1] https://e.org/mirror\n")
    (warning,) = [w for w in trace(report, records).warnings if w.startswith("existing citation [1]")]
    assert "it does not state 705 kg, its quote states 625 kg); kept as the author wrote it" in warning
    # a quote that says the opposite: the warning says where
    records[1]["content"] = "The primary mirror of Webb was made of beryllium, which is light and strong."
    report = ("The primary mirror of Webb was made of beryllium, which is heavy and strong [1].\n\n"
              "## References\n\n[1] https://e.org/mirror\n")
    (warning,) = [w for w in trace(report, records).warnings if w.startswith("existing citation [1]")]
    assert ('(score 0.30; contradicted: its quote says "light" where the sentence says "heavy"); kept as '
            "the author wrote it") in warning
    # in Chinese, a noun the sentence adds that the record never states, and a year the quote
    # states otherwise (named once, by the contradiction)
    zh_records = [{"url": "https://film.example/box", "title": "春节档",
                   "content": "2023春节档票房冠军是《满江红》，总票房超过45亿元。"}]
    report = "2023年春节档首日票房冠军是《满江红》[1]。\n\n## 参考文献\n\n[1] https://film.example/box\n"
    (warning,) = [w for w in trace(report, zh_records).warnings if w.startswith("existing citation [1]")]
    assert '(score 0.30; contradicted: the sentence adds "首日", which the record never states)' in warning
    report = "2022年春节档票房冠军是《满江红》[1]。\n\n## 参考文献\n\n[1] https://film.example/box\n"
    (warning,) = [w for w in trace(report, zh_records).warnings if w.startswith("existing citation [1]")]
    assert ("(score 0.30; contradicted: its quote states 2023 where the sentence says 2022, which the record "
            "does not state); kept as") in warning


def test_unsupported_sentence_names_the_record_that_came_closest() -> None:
    """A near miss is reported for the writer (here a conflicting number), never cited."""
    res = trace(REPORT, RECORDS)
    mirror = "Its primary mirror is 8.5 metres across and weighs 705 kg."
    assert all(c.sentence != mirror for c in res.citations)
    (u,) = [u for u in res.unsupported if u.sentence == mirror]
    n = u.closest
    assert n is not None and n.record_index == 2 and n.url == RECORDS[2]["url"] and n.title == "Webb orbit"
    assert RECORDS[2]["content"][n.evidence_start:n.evidence_end] == n.evidence == \
        "Its primary mirror is 6.5 metres across."
    assert TraceOptions().tuning.near_miss_floor <= n.score < TraceOptions().threshold
    # Below the floor nothing is named; without records there is nothing to name.
    strict = trace(REPORT, RECORDS, TraceOptions(tuning=Tuning(near_miss_floor=n.score + 0.01)))
    assert [u.closest for u in strict.unsupported if u.sentence == mirror] == [None]
    assert all(u.closest is None for u in trace(REPORT, []).unsupported)


def test_explain_support_scores_one_record_as_the_trace_does() -> None:
    from tracer.pipeline import explain_support

    mirror = "Its primary mirror is 8.5 metres across and weighs 705 kg."
    (u,) = [u for u in trace(REPORT, RECORDS).unsupported if u.sentence == mirror]
    sup = explain_support(mirror, RECORDS, 2, lang="en")
    assert sup is not None and u.closest is not None
    assert (sup.score, sup.evidence_start, sup.evidence_end) == (
        u.closest.score, u.closest.evidence_start, u.closest.evidence_end)
    launched = "The James Webb Space Telescope launched on 25 December 2021 on an Ariane 5 rocket."
    launch = explain_support(launched, RECORDS, 0)
    assert launch is not None and launch.score >= TraceOptions().threshold
    assert explain_support(mirror, RECORDS, 1) is None, "record 1 is dropped (no url)"


def test_a_forced_language_that_the_report_contradicts_is_warned_about() -> None:
    english = ("The bridge opened to traffic in 1937 after four years of construction work. "
               "It carries about forty thousand vehicles on an average weekday, the county says. ") * 3
    chinese = "该桥于1937年建成通车，此前施工历时四年。据县政府统计，工作日平均每天约有四万辆车通过。" * 2
    records = [{"url": "https://a.example/bridge", "title": "Bridge", "content": english + chinese}]

    def warned(report: str, language: str) -> bool:
        result = trace(report, records, TraceOptions(language=language))
        return any(w.startswith("options.language is") for w in result.warnings)

    assert warned(english, "zh") and warned(chinese, "en")
    assert not warned(english, "en") and not warned(chinese, "zh")
    assert not warned("A short line.", "zh")  # too short to tell: no warning
    assert not warned(english, "")  # detected, not forced


def test_records_in_the_other_language_are_warned_about() -> None:
    english = ("The bridge opened to traffic in 1937 after four years of construction work. "
               "It carries about forty thousand vehicles on an average weekday, the county says. ") * 3
    chinese = "该桥于1937年建成通车，此前施工历时四年。据县政府统计，工作日平均每天约有四万辆车通过。" * 2

    def other(report: str, contents: list[str]) -> list[str]:
        records = [{"url": f"https://a.example/{i}", "title": "Bridge", "content": c}
                   for i, c in enumerate(contents)]
        return [w for w in trace(report, records).warnings if w.startswith("the report reads as")]

    (warning,) = other(chinese, [english, english, chinese])
    assert warning.startswith("the report reads as Chinese but 2 of 3 records read as English: ")
    assert "cited only from a record that shares its words, names or figures" in warning
    (warning,) = other(english, [chinese])
    assert warning.startswith("the report reads as English but 1 of 1 records read as Chinese")
    # a few records in the other language among many in the report's, or none: no warning
    assert other(chinese, [english, chinese, chinese, chinese]) == []
    assert other(english, [english]) == [] and other(chinese, [chinese]) == []
    assert other(chinese, ["Short."]) == []   # too short to tell
    # a request of many records is read from a sample spread over it
    (warning,) = other(english, [chinese] * 500)
    assert "records (of a sample of 167 of the 500) read as Chinese" in warning


def test_a_sentence_of_figures_alone_is_never_cited_from_its_figures() -> None:
    """"It was 40% in 2023." says nothing a record could support but its figures; a table that
    states the same figures is no source for it (the Chinese model, which weighs figures heavily,
    scored it 0.93 before)."""
    banana = "香蕉是一种黄色的热带水果，富含钾元素。"
    records = [{"url": "https://a.example/table", "title": "统计表",
                "content": "附表：40% 2023 2021 100 200 6.5 18"},
               {"url": "https://a.example/banana", "title": "香蕉", "content": banana}]
    report = "香蕉是一种黄色的热带水果，富含钾元素。\n\nIt was 40% in 2023.\n"
    for language in ("", "zh", "en"):
        result = trace(report, records, TraceOptions(language=language))
        cited = {c.sentence: [s.url for s in c.sources] for c in result.citations}
        assert "It was 40% in 2023." not in cited, (language, cited)
    assert trace(report, records).citations[0].sources[0].url == "https://a.example/banana"


def test_enum_options_given_as_plain_strings_mean_the_same_and_bad_ones_are_refused() -> None:
    """TraceOptions(existing="keep") is ExistingPolicy.KEEP, not a silent replace (the engine
    compares enums); an unknown value is an InvalidInputError naming the field."""
    from tracer.options import ExistingPolicy, Placement

    report = "It launched on 25 December 2021 [1].\n\n## References\n\n[1] https://a.example/x\n"
    records = [{"url": "https://a.example/x", "title": "t", "content": "It launched on 25 December 2021."}]
    as_strings = trace(report, records, TraceOptions(existing="keep", placement="before"))  # type: ignore[arg-type]
    enums = TraceOptions(existing=ExistingPolicy.KEEP, placement=Placement.BEFORE_PUNCT)
    as_enums = trace(report, records, enums)
    assert as_strings.report == as_enums.report and as_strings.stats.existing_citations == 1
    with pytest.raises(InvalidInputError) as err:
        trace(report, records, TraceOptions(existing="bogus"))  # type: ignore[arg-type]
    assert err.value.field == "options.existing"


@pytest.mark.parametrize("existing", ["keep", "replace"])
def test_an_author_link_to_a_url_outside_the_records_is_left_in_place(existing: str) -> None:
    # "[2]" with "[2]: url" in the body is a working reference link, not a stray citation
    report = (
        "The James Webb Space Telescope launched on 25 December 2021 aboard an Ariane 5 rocket [1].\n\n"
        "[1]: https://example.org/webb\n\nWebb was named after a NASA administrator [2].\n\n"
        "[2]: https://elsewhere.example/nasa\n\nThe end of the brief.\n"
    )
    result = trace(report, RECORDS, TraceOptions(existing=existing))
    body = result.report[: result.report.index("## References")]
    assert "administrator [2].\n\n[2]: https://elsewhere.example/nasa\n" in body
    assert any("'[2]'" in w and "https://elsewhere.example/nasa" in w and "left in place" in w
               for w in result.warnings)
    assert not any("does not resolve" in w for w in result.warnings)
    # "[1]" links to a record: it is an existing citation of that record, renumbered as usual
    assert [(c.sentence[:20], [s.url for s in c.sources]) for c in result.citations] == [
        ("The James Webb Space", ["https://example.org/webb"])
    ]
    assert "rocket [citation:1].\n" in body


FACT = "The James Webb Space Telescope launched on 25 December 2021 aboard an Ariane 5 rocket."


@pytest.mark.parametrize(
    "definition",
    ["[1]: https://elsewhere.example/x", "- note\n  [1]: https://elsewhere.example/x",
     "[ 1 ]: https://elsewhere.example/x", "[1]:\n  https://elsewhere.example/x", "> [1]: https://elsewhere.example/x"],
)
@pytest.mark.parametrize("style", ["numeric", "openjiuwen"])
def test_no_marker_or_reference_line_becomes_a_link_to_the_authors_own_definition(definition: str,
                                                                                   style: str) -> None:
    report = f"{FACT} See [the agency][1].\n\n{definition}\n\nMore prose.\n"
    result = trace(report, RECORDS, TraceOptions(style=style))
    assert result.references and definition in result.report
    section = result.report[result.report.index("## References"):]
    assert "\n[1\\] [Webb launch](https://example.org/webb)\n" in section   # escaped: not "[1]" the link
    if style == "numeric":
        assert "rocket[citation:1]." in result.report
    again = trace(result.report, RECORDS, TraceOptions(style=style))  # the escaped section is one
    assert again.report == result.report and again.removed_references == section


def test_replace_with_nothing_verified_removes_old_markers_and_reports_the_sentence() -> None:
    from tracer import ExistingPolicy

    weather = {"url": "https://a.example.cn/1", "title": "天气",
               "content": "北京今天晴转多云，最高气温25摄氏度。"}
    station = {"url": "https://c.example.cn/3", "title": "天宫",
               "content": "天宫空间站于2022年底全面建成。"}
    body = "中国的人口在2023年减少了208万人[1]。\n\n"
    section = "## 参考文献\n\n[1] 天气 https://a.example.cn/1\n"
    replaced = trace(body + section, [weather, station], TraceOptions(existing=ExistingPolicy.REPLACE))
    assert replaced.report == strip_markers(body)          # the unverified marker goes, and its section
    assert replaced.removed_references == section
    assert [u.sentence for u in replaced.unsupported] == ["中国的人口在2023年减少了208万人[1]。"]
    # keep: the author's marker stays, with a warning, and the report comes back as it came
    kept = trace(body + section, [weather, station], TraceOptions(existing=ExistingPolicy.KEEP))
    assert kept.report.startswith(body) and kept.unsupported == ()
    assert any("is not supported by its record" in w for w in kept.warnings)


def test_urls_and_markup_in_a_sentence_are_not_part_of_its_claim() -> None:
    record = {"url": "https://www.gov.example.cn/a.html", "title": "国务院",
              "content": "2022年我国数字经济规模达到50.2万亿元，占GDP比重达到41.5%。"}
    url = "https://www.example.com/some/long/path/page-about-it.html"
    for sentence in (f"数字经济占GDP比重达到41.5%[[2]]({url})。",
                     '数字经济占GDP比重达到41.5%，详见<a href="https://a.example.cn/1">报告</a>。',
                     f"数字经济占GDP比重达到41.5%，详见 {url} 。",
                     "数字经济占GDP比重达到41.5%，据https://www.gov.example.cn/显示。"):
        result = trace(sentence + "\n", [record, RECORDS[0]])
        assert [c.sources[0].url for c in result.citations] == [record["url"]], sentence


def test_a_source_note_and_a_gloss_do_not_cost_the_claim() -> None:
    battery = {"url": "https://a.example.cn/battery", "title": "2023年12月动力电池月度信息",
               "content": "1-12月，我国动力电池累计装车量387.7GWh，累计同比增长31.6%。"}
    huawei = {"url": "https://a.example.cn/huawei", "title": "华为",
              "content": "华为技术有限公司成立于1987年，总部位于广东省深圳市龙岗区。"}
    for sentence, record in (
        ("2023年，我国动力电池累计装车量387.7GWh，同比增长31.6%（数据来源：中国汽车动力电池产业创新联盟）。",
         battery),
        ("华为（Huawei）成立于1987年。", huawei),
    ):
        result = trace(sentence + "\n", [record, RECORDS[0]])
        assert [c.sources[0].url for c in result.citations] == [record["url"]], sentence
    # a note that states figures claims them: 949.5万辆 is not stated by a record of 688.7万辆
    sales = {"url": "https://a.example.cn/sales", "title": "销量",
             "content": "2023年新能源汽车销量增长较快，全年销量688.7万辆。"}
    result = trace("2023年新能源汽车销量增长较快（数据来源：中国汽车工业协会，全年销量949.5万辆）。\n",
                   [sales, RECORDS[0]])
    assert result.citations == ()
    # a title's figures are no figures the record states: its 2024 does not make 2023 content say 2024
    outlook = {"url": "https://a.example.cn/outlook", "title": "比亚迪2024年展望",
               "content": "2023年，比亚迪新能源汽车销量增长5%。"}
    assert trace("2024年比亚迪新能源汽车销量增长5%。\n", [outlook, RECORDS[0]]).citations == ()



def test_a_bare_url_in_a_chinese_sentence_ends_at_the_chinese_text() -> None:
    unrelated = {"url": "https://stats.example.cn/about", "title": "统计局",
                 "content": "据国家统计局网站介绍，该网站提供各类统计数据。"}
    result = trace("据国家统计局网站https://www.stats.gov.cn/发布的数据显示2023年国内生产总值增长5.2%。\n",
                   [unrelated, RECORDS[0]])
    assert result.citations == ()


def test_a_note_mark_and_a_caret_keep_markers_out_of_the_authors_notation() -> None:
    record = {"url": "https://a.example.com/lake", "title": "Lake",
              "content": "The lake covers an area of 50 km^2^ and is 30 metres deep. It formed in 1900."}
    out = trace("The lake covers an area of 50 km^2^.\n", [record, RECORDS[0]]).report
    assert "^[" not in out and out.startswith("The lake covers an area of 50 km^2^")
    record = {"url": "https://a.example.com/sales", "title": "Sales",
              "content": "Battery electric vehicles accounted for 82.4% of new car sales in Norway in 2023."}
    out = trace("Battery electric vehicles accounted for 82.4% of new car sales in Norway in 2023.¹\n",
                [record, RECORDS[0]]).report
    assert out.startswith("Battery electric vehicles accounted for 82.4% of new car sales in Norway "
                          "in 2023[1].¹")


AGENT_RECORDS = [
    {"id": "turn0search0", "url": "https://a.example/webb", "title": "Webb launch",
     "content": "The James Webb Space Telescope launched on 25 December 2021 from Kourou in French Guiana "
                "on an Ariane 5 rocket."},
    {"id": "turn0search1", "url": "https://b.example/l2", "title": "Webb orbit",
     "content": "Webb orbits the Sun near the second Lagrange point, roughly 1.5 million km from Earth."},
]
_LAUNCH = "The James Webb Space Telescope launched on 25 December 2021 from Kourou on an Ariane 5 rocket"
_ORBIT = "It orbits the Sun near the second Lagrange point, about 1.5 million km from Earth"


@pytest.mark.parametrize(
    ("report", "warned"),
    [
        # Gemini: "[cite_start]" opens each cited span, "[cite: n]" closes it, numbered sources
        (f"# Webb\n\n[cite_start]{_LAUNCH}.[cite: 1] [cite_start]{_ORBIT}.[cite: 2]\n\n"
         "## Sources\n\n1. Webb launch https://a.example/webb\n2. Webb orbit https://b.example/l2\n", []),
        # ChatGPT: private-use markers naming search results by id, one of them unknown
        (f"# Webb\n\n{_LAUNCH} \ue200cite\ue202turn0search0\ue201. {_ORBIT} "
         "\ue200cite\ue202turn0search1\ue202turn0search7\ue201.\n", ["turn0search7 does not resolve"]),
        (f"# Webb\n\n{_LAUNCH}【turn0search0†L3-L5】. {_ORBIT}【turn0search1】.\n", []),
        (f"# Webb\n\n{_LAUNCH}【12†source】. {_ORBIT}【3:0†L10-L20】.\n",
         ["12 does not resolve", "3 does not resolve"]),
        # Kimi: "[^n^]" with "[^n^]: url" definitions
        (f"# Webb\n\n{_LAUNCH}[^1^]. {_ORBIT}[^2^].\n\n## References\n\n"
         "[^1^]: https://a.example/webb\n[^2^]: https://b.example/l2\n", []),
        (f"# Webb\n\n{_LAUNCH}[[1]]. {_ORBIT}[[2]].\n\n## References\n\n"
         "1. https://a.example/webb\n2. https://b.example/l2\n", []),
        # what chat apps leave in a copied answer: ChatGPT's marker without its private-use
        # characters, its "oai_citation" links and "contentReference"; Perplexity's tags; Grok's
        # cards; Gemini's span brackets
        (f"# Webb\n\n{_LAUNCH} citeturn0search0. {_ORBIT} citeturn0search1turn0search7.\n",
         ["turn0search7 does not resolve"]),
        (f"# Webb\n\n{_LAUNCH} [oai_citation:1‡Webb launch](https://a.example/webb). {_ORBIT} "
         "[oai_citation:0‡ESA 2021](https://b.example/l2).\n", []),
        (f"# Webb\n\n{_LAUNCH}:contentReference[oaicite:0]{{index=0}}. {_ORBIT}[web:2].\n",
         ["oaicite:0 does not resolve", "web:2 does not resolve"]),
        (f"# Webb\n\n{_LAUNCH}[attached_file:1]. {_ORBIT}[conversation_history:3].\n",
         ["attached_file:1 does not resolve", "conversation_history:3 does not resolve"]),
        (f'# Webb\n\n{_LAUNCH}<grok-card data-id="a1" data-type="citation_card"></grok-card>. {_ORBIT}'
         '[](grok_render_citation_card_json={"cardIds":["b2"]}).\n',
         ["a1 does not resolve", "b2 does not resolve"]),
        (f"# Webb\n\n[span_0](start_span){_LAUNCH}[span_0](end_span).[cite: 1] [span_1](start_span){_ORBIT}."
         "[span_1](end_span)[cite: 2]\n\n## Sources\n\n1. Webb launch https://a.example/webb\n"
         "2. Webb orbit https://b.example/l2\n", []),
        # Bing's exported chat: "[^1^][1]" links its "[1]: url" definition, under its own list
        (f"# Webb\n\n{_LAUNCH}[^1^][1]. {_ORBIT}[^2^][2].\n\nSource: Conversation with Bing, 12/3/2023\n"
         "(1) Webb launch - NASA. https://a.example/webb.\n(2) Webb orbit - ESA. https://b.example/l2.\n"
         '[1]: https://a.example/webb ""\n[2]: https://b.example/l2 ""\n', []),
        # ... and Copilot's, once Bing Chat was renamed
        (f"# Webb\n\n{_LAUNCH}[^1^][1]. {_ORBIT}[^2^][2].\n\nSource: Conversation with Copilot, 5/14/2024\n"
         "(1) Webb launch - NASA. https://a.example/webb.\n(2) Webb orbit - ESA. https://b.example/l2.\n"
         '[1]: https://a.example/webb ""\n[2]: https://b.example/l2 ""\n', []),
        # Copilot's: the same markers over "Learn more" and its numbered links
        (f"# Webb\n\n{_LAUNCH}[^1^][1]. {_ORBIT}[^2^][2].\n\nLearn more\n\n"
         "1. [a.example](https://a.example/webb)\n2. [b.example](https://b.example/l2)\n\n"
         '[1]: https://a.example/webb ""\n[2]: https://b.example/l2 ""\n', []),
        (f"# Webb\n\n{_LAUNCH}[^1^][1]. {_ORBIT}[^2^][2].\n\n"
         '[1]: https://a.example/webb ""\n[2]: https://b.example/l2 ""\n', []),
    ],
    ids=["gemini", "chatgpt-private-use", "chatgpt-turn", "chatgpt-dagger", "kimi", "double-brackets",
         "chatgpt-copied", "chatgpt-oai-citation", "chatgpt-perplexity-unresolved", "perplexity-unresolved",
         "grok", "gemini-spans", "bing", "copilot-conversation", "copilot", "bing-definitions"],
)
def test_writer_agents_citation_forms_are_understood(report: str, warned: list[str]) -> None:
    """Each agent's own markers are old citations: removed from the body (none of their bytes,
    no "[]" or "[cite_start]", is left behind), resolved where they name a record, and the
    sentence cited with the engine's own markers; the figures inside "【12†L10-L20】" are no
    claim of the sentence."""
    for existing in ("keep", "replace"):
        res = trace(report, AGENT_RECORDS, TraceOptions(existing=existing))
        body = res.report.split("\n\n## References\n\n")[0]
        assert body == f"# Webb\n\n{_LAUNCH}[1]. {_ORBIT}[2]." or (
            any(f" {x}" in report for x in ("\ue200", "cite", "[oai"))
            and body == f"# Webb\n\n{_LAUNCH} [1]. {_ORBIT} [2].")
        assert [c.sources[0].url for c in res.citations] == ["https://a.example/webb", "https://b.example/l2"]
        assert not res.unsupported
        assert res.stats.existing_citations == 2  # markers; "[cite_start]" is none
        if existing == "keep":
            assert [w for w in res.warnings if "does not resolve" in w] == [
                w for w in res.warnings if any(x in w for x in warned)]
            assert len([w for w in res.warnings if "does not resolve" in w]) == len(warned)


def test_a_one_line_numbered_sources_list_is_cut_and_resolves_the_markers() -> None:
    line = "Sources: [1] https://b.example/l2 [2] Webb launch, https://a.example/webb\n"
    report = f"# Webb\n\n{_LAUNCH} [2]. {_ORBIT} [1].\n\n{line}"
    res = trace(report, AGENT_RECORDS, TraceOptions(existing="keep"))
    assert res.removed_references == line
    assert res.report.split("\n\n## References")[0] == f"# Webb\n\n{_LAUNCH} [1]. {_ORBIT} [2]."
    assert [c.sources[0].url for c in res.citations] == ["https://a.example/webb", "https://b.example/l2"]
    assert not [w for w in res.warnings if "existing" in w]


@pytest.mark.parametrize("wrapped", ["(citeturn0search0)", "([web:1])", "（[web:1]）", "(【turn0search0】)",
                                     "(:contentReference[oaicite:0]{index=0})"])
def test_a_chat_marker_in_parentheses_goes_with_them(wrapped: str) -> None:
    """"(citeturn0search0)" after a sentence is one old citation with its parentheses: under keep
    its record comes back as "[1]" in their place, and a second trace changes nothing (a "([1])"
    left behind would be read the next time as one marker, parentheses and all)."""
    report = f"# Webb\n\n{_LAUNCH}. {wrapped}\n"
    for existing in ("keep", "replace"):
        res = trace(report, AGENT_RECORDS, TraceOptions(existing=existing))
        # (under replace the slot after the period obeys no placement: the new marker goes before it)
        expected = f"{_LAUNCH}. [1]" if existing == "keep" else f"{_LAUNCH}[1]."
        assert res.report.split("\n\n## References")[0] == f"# Webb\n\n{expected}"
        assert trace(res.report, AGENT_RECORDS, TraceOptions(existing=existing)).report == res.report


@pytest.mark.parametrize("opener",
                         ["[cite_start]", "[span_2](start_span)", "<sup>[span_1](start_span)</sup> "])
def test_a_marker_after_a_span_opener_is_read_the_same_on_a_second_trace(opener: str) -> None:
    report = f"# Webb\n\n{_LAUNCH}. {opener}[cite: 2] {_ORBIT}.\n\n## Sources\n\n1. Webb launch " \
             "https://a.example/webb\n2. Webb orbit https://b.example/l2\n"
    res = trace(report, AGENT_RECORDS, TraceOptions(existing="keep"))
    assert trace(res.report, AGENT_RECORDS, TraceOptions(existing="keep")).report == res.report


def test_chatgpt_attribution_wrappers_go_and_their_sentences_are_cited() -> None:
    """ChatGPT's '^[A sentence.]({"attribution":{"attributableIndex":"1009-1"}})', copied: its two
    halves cite nothing and go; the sentence between them stays, cited as any other."""
    tail = '({{"attribution":{{"attributableIndex":"1009-{}"}}}})'
    report = (f"# Webb\n\n^[{_LAUNCH}.]{tail.format(1)} ^[{_ORBIT}.]{tail.format(2)}\n\n"
              f"That is all.{tail.format(3)}\n")
    for existing in ("keep", "replace"):
        res = trace(report, AGENT_RECORDS, TraceOptions(existing=existing))
        body = res.report.split("\n\n## References")[0]
        assert body == f"# Webb\n\n{_LAUNCH}[1]. {_ORBIT}[2].\n\nThat is all."
        assert res.stats.existing_citations == 0 and not [w for w in res.warnings if "existing" in w]


def test_labels_and_intervals_stay_while_page_citations_are_renumbered() -> None:
    """Bracketed numbers that label a heading, a line or a table row, or bound an interval, are
    text: they stay as written. "[1, p. 5]" cites entry 1 of the old list, renumbered [1]."""
    recs = [{"url": "https://b.com/y", "title": "Beta facts", "content": "Its mirror is 6.5 metres across."},
            {"url": "https://a.com/x", "title": "Alpha report",
             "content": "Webb launched on 25 December 2021 from French Guiana."}]
    body = ("## [1] Launch\n\nWebb launched on 25 December 2021 [1, p. 5]. Its mirror is 6.5 metres across.\n"
            "Each part was rated on a scale of [1, 5] by two engineers.\n\n"
            "【1】市场规模：2023年市场继续扩大。\n【2】增长率：未来三年保持稳定。\n")
    report = body + "\n## References\n\n[1] Alpha report https://a.com/x\n[2] Beta facts https://b.com/y\n"
    r = trace(report, recs, TraceOptions())
    out = r.report.split("\n## 参考文献")[0]
    assert "## [1] Launch" in out and "a scale of [1, 5] by" in out
    assert "【1】市场规模" in out and "【2】增长率" in out
    assert "2021 [1]." in out and "[1, p. 5]" not in out and "across[2]." in out
    assert not [w for w in r.warnings if "does not resolve" in w]


_LINK_RECS = [{"url": "https://a.com/x", "title": "Alpha report",
               "content": "Webb launched on 25 December 2021 from French Guiana."},
              {"url": "https://b.com/y", "title": "Beta facts",
               "content": "Its mirror is 6.5 metres across."}]


@pytest.mark.parametrize("existing", ["keep", "replace"])
def test_inline_link_citations_to_records_become_numbered_citations(existing: str) -> None:
    # ChatGPT's "([site](url))" ending a sentence, or after it, is an old citation of that url
    report = ("Webb launched on 25 December 2021 ([Alpha](https://a.com/x?utm_source=chatgpt.com)). "
              "Its mirror is 6.5 metres across. ([b.com](https://b.com/y))\n")
    r = trace(report, _LINK_RECS, TraceOptions(existing=existing))
    body = r.report.split("\n\n## ")[0]
    assert "](" not in body and not r.warnings, (body, r.warnings)
    assert body.startswith("Webb launched on 25 December 2021 [1]. Its mirror is 6.5 metres across")
    assert [s.url for c in r.citations for s in c.sources] == ["https://a.com/x", "https://b.com/y"]


@pytest.mark.parametrize("existing", ["keep", "replace"])
def test_inline_links_to_other_pages_or_that_are_words_stay_as_written(existing: str) -> None:
    cases = {
        # a link to no record (one of two): the author's link stays, with a warning
        "Webb launched on 25 December 2021 ([Alpha](https://a.com/x), [Wiki](https://w.org/webb)).\n":
            "links to https://w.org/webb (an inline link), which is none of the records; left in place",
        # an aside inside the sentence, and a link that is a word of it: no citation at all
        "Webb ([mission page](https://a.com/x)) launched on 25 December 2021.\n": None,
        "According to ([Alpha](https://a.com/x)), Webb launched on 25 December 2021.\n": None,
        "Webb launched on 25 December 2021 (read [the Alpha report](https://a.com/x) here).\n": None,
    }
    for report, warned in cases.items():
        r = trace(report, _LINK_RECS, TraceOptions(existing=existing))
        link = "[the Alpha" if "([" not in report else report[
            report.index("(["):report.index(")", report.index("]("))]
        assert link in r.report, (report, r.report)
        assert [w for w in r.warnings if "inline link" in w] == ([
            f"existing citation {report[report.index('(['):report.index('))') + 2]!r} at offset "
            f"{report.index('([')} {warned}"] if warned else []), r.warnings


@pytest.mark.parametrize("existing", ["keep", "replace"])
def test_chatgpts_reference_link_citations_and_their_definitions_are_old_citations(existing: str) -> None:
    # "([Alpha][1])" with "[1]: https://…?utm_source=chatgpt.com "Title"" at the end, as ChatGPT
    # copies out: the definitions are the references list, each group cites its entry
    body = ("Webb launched on 25 December 2021 ([Alpha][1]). "
            "Its mirror is 6.5 metres across ([Beta][2], [Alpha][1]).\n\n")
    refs = ('[1]: https://a.com/x?utm_source=chatgpt.com "Alpha report"\n'
            '[2]: https://b.com/y?utm_source=chatgpt.com "Beta facts"\n')
    r = trace(body + refs, _LINK_RECS, TraceOptions(existing=existing))
    assert r.removed_references == refs
    assert r.report.startswith("Webb launched on 25 December 2021 [1]. Its mirror is 6.5 metres across [")
    assert "[Alpha]" not in r.report and "[Beta]" not in r.report
    assert trace(r.report, _LINK_RECS, TraceOptions(existing=existing)).report == r.report
    # an aside or a word of its sentence keeps its definition: the author's link stays whole
    for report in ("Webb ([Alpha][1]) launched on 25 December 2021.\n\n[1]: https://a.com/x\n",
                   "According to ([Alpha][1]), Webb launched on 25 December 2021.\n\n[1]: https://a.com/x\n"):
        r = trace(report, _LINK_RECS, TraceOptions(existing=existing))
        assert "([Alpha][1])" in r.report and "\n[1]: https://a.com/x\n" in r.report, r.report
    # with a cue word too ("(see [Alpha][1])"): the definitions go with the citation
    report = "Webb launched on 25 December 2021 (see [Alpha][1]).\n\n[1]: https://a.com/x\n"
    r = trace(report, _LINK_RECS, TraceOptions(existing=existing))
    assert r.removed_references == "[1]: https://a.com/x\n" and "[Alpha]" not in r.report
    # a labelled marker and a number ("(see [ref2][1])") are two old citations, not a link
    report = ("Its mirror is 6.5 metres across (see [ref2][1]).\n\n## References\n\n"
              "[1] Beta facts https://b.com/y\n[2] Alpha report https://a.com/x\n")
    r = trace(report, _LINK_RECS, TraceOptions(existing="keep"))
    assert r.report.startswith("Its mirror is 6.5 metres across [1][2].") or r.report.startswith(
        "Its mirror is 6.5 metres across [2][1]."), r.report
    # a label the body also links through ("[guide][1]") keeps the definitions in the body
    report = "See the [guide][1] first. Webb launched on 25 December 2021 ([Alpha][1]).\n\n[1]: https://a.com/x\n"
    r = trace(report, _LINK_RECS, TraceOptions(existing=existing))
    assert "[guide][1]" in r.report and "\n[1]: https://a.com/x\n" in r.report
    assert "([Alpha][1])" not in r.report


@pytest.mark.parametrize("existing", ["keep", "replace"])
def test_an_inline_link_to_a_record_that_does_not_support_its_line_stays(existing: str) -> None:
    # a list item or a line that links a tool's page is no citation: the link stays, with a warning
    for report in ("- Official site ([Alpha](https://a.com/x))\n",
                   "You can download the installer from the official website ([download page](https://b.com/y)).\n"):
        r = trace(report, _LINK_RECS, TraceOptions(existing=existing))
        assert r.report.startswith(report.rstrip("\n")), r.report
        assert any("does not support its sentence; left in place" in w for w in r.warnings), r.warnings


def test_a_bracketed_number_the_body_defines_is_no_inline_link() -> None:
    # "([1])" with "[1]: url" kept in the body cites that url as "[1]" does: replaced when it verifies
    report = "See the [guide][1] first. Its mirror is 6.5 metres across ([1]).\n\n[1]: https://b.com/y\n"
    r = trace(report, _LINK_RECS, TraceOptions(existing="replace"))
    assert "([1])" not in r.report and not [w for w in r.warnings if "left in place" in w], r.warnings
    # a link in a heading supports no sentence of its own: left as written, without a warning
    r = trace("## Its mirror is 6.5 metres across ([Beta](https://b.com/y))\n\nText.\n", _LINK_RECS,
              TraceOptions())
    assert "([Beta](https://b.com/y))" in r.report and not [w for w in r.warnings if "left in place" in w]


def test_inline_link_citations_side_by_side_are_one_run_and_an_abbreviation_ends_no_sentence() -> None:
    report = "Webb launched on 25 December 2021 ([Alpha](https://a.com/x)) ([Alpha page](https://a.com/x/)).\n"
    once = trace(report, _LINK_RECS, TraceOptions(existing="replace"))
    assert once.report.startswith("Webb launched on 25 December 2021 [1].") and not once.warnings
    assert trace(once.report, _LINK_RECS, TraceOptions(existing="replace")).report == once.report
    # "U.S." is no sentence's end: the parenthesis after it is an aside, left as written
    report = "In the U.S. ([Alpha](https://a.com/x)) Webb launched on 25 December 2021.\n"
    r = trace(report, _LINK_RECS, TraceOptions())
    assert r.report.startswith("In the U.S. ([Alpha](https://a.com/x)) Webb launched"), r.report


@pytest.mark.parametrize("sources", ["## Sources\n\nWe used public data from the Fed and BLS.\n",
                                     "<h2>Sources</h2>\n<p>We used public data from the Fed and BLS.</p>\n"])
def test_a_sources_section_of_prose_survives_a_second_trace(sources: str) -> None:
    # traced again, its prose and the new references under it must not read as one section
    report = "Webb launched on 25 December 2021. Its mirror is 6.5 metres across.\n\n" + sources
    once = trace(report, _LINK_RECS, TraceOptions())
    assert sources in once.report and len(once.references) == 2    # two entries under the prose
    twice = trace(once.report, _LINK_RECS, TraceOptions())
    assert twice.report == once.report and sources in twice.report


def test_a_number_glued_into_a_code_states_no_figure_with_units() -> None:
    # "X90" is a product, not "90公里"; a record that states the figure only in other units
    # (90万辆) does not support it, whatever codes hold its digits
    rec = [{"url": "https://c.example/x90", "title": "X90", "content": "产品X90于去年发布，销量达到90万辆。"}]
    r = trace("销量达到90公里。\n", rec, TraceOptions())
    assert not r.citations and r.unsupported and "90 km" in r.unsupported[0].closest.unstated


def test_an_html_references_list_is_read_as_the_old_references() -> None:
    recs = [{"url": "https://a.com/x?p=1&q=2", "title": "Alpha report",
             "content": "Webb launched on 25 December 2021 from French Guiana."},
            {"url": "https://b.com/y", "title": "Beta facts", "content": "Its mirror is 6.5 metres across."}]
    body = "Webb launched on 25 December 2021 [2]. Its mirror is 6.5 metres across [1].\n\n"
    refs = ('<h2>References</h2>\n<ol>\n<li><a href="https://b.com/y">Beta facts</a></li>\n'
            '<li><a href="https://a.com/x?p=1&amp;q=2">Alpha report</a></li>\n</ol>\n')
    r = trace(body + refs, recs, TraceOptions(existing="keep"))
    assert r.removed_references == refs
    assert r.report.startswith("Webb launched on 25 December 2021 [1]. Its mirror is 6.5 metres across [2].")
    assert "<ol>" not in r.report and not r.warnings


def test_a_headingless_numbered_list_of_links_is_read_as_the_old_references() -> None:
    # "---" then "1. url" lines: cut, and its numbers resolve the old markers by their urls
    recs = [{"url": "https://a.com/x", "title": "Alpha report",
             "content": "Webb launched on 25 December 2021 from French Guiana."},
            {"url": "https://b.com/y", "title": "Beta facts", "content": "Its mirror is 6.5 metres across."}]
    body = "Webb launched on 25 December 2021 [2]. Its mirror is 6.5 metres across [1].\n\n---\n\n"
    refs = "1. https://b.com/y\n2. Alpha report, https://a.com/x\n"
    r = trace(body + refs, recs, TraceOptions(existing="keep"))
    assert r.removed_references == refs
    assert r.report.startswith("Webb launched on 25 December 2021 [1]. Its mirror is 6.5 metres across [2].")
    assert r.report.count("https://a.com/x") == 1 and not r.warnings


@pytest.mark.parametrize("existing", ["keep", "replace"])
def test_a_headingless_list_of_record_titles_is_read_as_the_old_references(existing: str) -> None:
    # a writer over local documents lists them by title alone, with no heading: the list goes,
    # its numbers resolve the old markers by title, and a second trace changes nothing
    recs = [{"id": "doc-7", "title": "2023年度财务报告.pdf",
             "content": "公司2023年实现营业收入52亿元，同比增长12%。"},
            {"id": "doc-9", "title": "2024年市场调研报告.docx",
             "content": "调研显示，该品类市场规模在2024年达到300亿元。"}]
    body = "公司2023年实现营业收入52亿元，同比增长12%[2]。该品类市场规模在2024年达到300亿元[1]。\n\n"
    refs = "[1] 2024年市场调研报告.docx\n[2] 2023年度财务报告.pdf\n"
    r = trace(body + refs, recs, TraceOptions(existing=existing))
    assert r.removed_references == refs
    assert r.report.startswith("公司2023年实现营业收入52亿元，同比增长12%[1]。"
                               "该品类市场规模在2024年达到300亿元[2]。\n\n")
    assert r.report.count("2023年度财务报告.pdf") == 1 and r.report.count("[2]") == 2
    assert trace(r.report, recs, TraceOptions(existing=existing)).report == r.report


@pytest.mark.parametrize(
    "closing",
    [
        "---\n\n*This report was generated by AI and may contain errors.*\n",
        "**风险提示：** 本报告仅供参考，不构成任何投资建议。\n",
        "## Disclaimer\n\nThis report is for information only and is not investment advice.\n"
        "Past performance does not guarantee future results.\n",
        "## Related questions\n\n- When did Webb launch?\n- How large is its mirror?\n",
    ],
)
@pytest.mark.parametrize("title", ["## References", "**Sources:**"])
def test_closing_matter_after_the_references_stays_after_the_new_ones(closing: str, title: str) -> None:
    recs = [{"url": "https://a.com/x", "title": "Alpha report",
             "content": "Webb launched on 25 December 2021 from French Guiana."},
            {"url": "https://b.com/y", "title": "Beta facts", "content": "Its mirror is 6.5 metres across."}]
    body = "Webb launched on 25 December 2021[2]. Its mirror is 6.5 metres across[1].\n\n"
    refs = f"{title}\n\n1. [Beta facts](https://b.com/y)\n2. [Alpha report](https://a.com/x)\n\n"
    r = trace(body + refs + closing, recs, TraceOptions())
    assert r.report.endswith("\n\n" + closing)
    assert r.removed_references == refs.rstrip("\n") + "\n"
    head = r.report[: -len(closing)]
    assert "2021[1]." in head and "across[2]." in head and head.count("https://") == 2
    assert not r.warnings
    # traced again, the output keeps its closing matter once
    again = trace(r.report, recs, TraceOptions())
    assert again.report == r.report


def test_a_table_of_references_resolves_the_old_markers() -> None:
    recs = [{"url": "https://a.com/x", "title": "Alpha report",
             "content": "Webb launched on 25 December 2021 from French Guiana."}]
    report = ("Webb launched on 25 December 2021[1].\n\n## References\n\n"
              "| # | Source | Link |\n|---|---|---|\n| 1 | Alpha report | https://a.com/x |\n")
    r = trace(report, recs, TraceOptions())
    assert r.report.count("https://a.com/x") == 1 and "| 1 |" not in r.report
    assert not [w for w in r.warnings if "does not resolve" in w]


@pytest.mark.parametrize(
    ("plain", "written"),
    [
        ("Tesla delivered 1.81 million vehicles in 2023.",
         "Tesla delivered **1.81 million** vehicles in 2023."),
        ("The unemployment rate fell to 3.7% in November.",
         "The unemployment rate fell to *3.7%* in November."),
        ("Nvidia's data center revenue rose to $18.4 billion.",
         "Nvidia's data center revenue rose to __$18.4 billion__."),
        ("Its mirror is 6.5 metres across.", "Its mirror is 6.5 metres across 👍"),
        ("Its mirror is 6.5 metres across.", "Its mirror is ~~8.5~~ 6.5 metres across."),
        ("2024年销量达到302万辆，同比增长35%。", "2024年销量达到**302万辆**，同比增长35%。"),
        ("2024年人均收入39218元。", "2024年人均收入~~39000元~~39218元。"),
        # not emphasis: an exponent stays a figure
        ("The expression 2**64 evaluates to 18446744073709551616.",
         "The expression 2**64 evaluates to 18446744073709551616."),
    ],
)
def test_emphasis_and_emoji_are_no_words_of_the_claim(plain: str, written: str) -> None:
    content = f"Background text goes here. {plain} More follows."
    recs = [{"url": "https://a.com", "title": "A", "content": content}]
    got = trace(written, recs, TraceOptions())
    want = trace(plain, recs, TraceOptions())
    assert [c.sources[0].score for c in got.citations] == [c.sources[0].score for c in want.citations]
    assert len(got.citations) == 1 and got.citations[0].sources[0].match == want.citations[0].sources[0].match


def test_a_range_written_with_two_tildes_is_no_struck_text() -> None:
    """"20~~25度" is a range: its figures are read (struck out, they would go unchecked)."""
    recs = [{"url": "https://a.com/x", "title": "A", "content": "大棚种植草莓时，白天温度应控制在20至30度，"
             "空气湿度为50至60%，夜间温度不低于8度。"}]
    report = "大棚种植草莓时，白天温度应控制在20~~25度，空气湿度为40~~60%，夜间温度不低于8度。"
    r = trace(report, recs, TraceOptions())
    assert not r.citations and r.unsupported


@pytest.mark.parametrize(
    "report",
    [
        "\ufeff---\ntitle: Webb\nsummary: Webb launched on 25 December 2021.\n---\n\n"
        "The telescope cost about 10 billion dollars.\n",
        "\ufeff# Webb launched on 25 December 2021\n\nThe telescope cost about 10 billion dollars.\n",
        "\ufeffThe telescope cost about 10 billion dollars.\n\n## References\n\n[1] A https://a.com/x\n",
    ],
)
def test_a_byte_order_mark_hides_no_front_matter_heading_or_sentence_start(report: str) -> None:
    recs = [{"url": "https://a.com/x", "title": "A", "content": "Webb launched on 25 December 2021 from "
             "French Guiana. The telescope cost about 10 billion dollars."}]
    r = trace(report, recs, TraceOptions())
    assert r.report.startswith("\ufeff") and r.report.count("[1]") == 2      # one marker, one entry
    assert [(c.sentence, report[c.start:c.end]) for c in r.citations] == [
        ("The telescope cost about 10 billion dollars.",) * 2]


def test_closing_matter_under_a_list_of_one_is_kept_when_traced_again() -> None:
    recs = [{"url": "https://a.com/x", "title": "Alpha report",
             "content": "Webb launched on 25 December 2021 from French Guiana."}]
    footer = "**风险提示：** 本报告仅供参考，不构成任何投资建议。\n"
    report = ("Webb launched on 25 December 2021[1].\n\n## References\n\n[1] Alpha report https://a.com/x\n"
              "[2] Beta facts https://b.com/y\n\n" + footer)
    once = trace(report, recs, TraceOptions()).report
    assert once.count("## References") == 1 and once.endswith("\n\n" + footer)
    assert trace(once, recs, TraceOptions()).report == once


def test_removing_an_old_marker_leaves_no_orphaned_separator() -> None:
    recs = [{"url": "https://a.com/x", "title": "Alpha report",
             "content": "Tesla delivered 1.81 million vehicles worldwide in 2023, a record."}]
    refs = "\n\n## References\n\n[1] Alpha report https://a.com/x\n"
    for old, left in ((" ([1]; Smith 2020)", " (Smith 2020)"), ("（[1]，2023年）", "（2023年）"),
                      (" ([1]; [2])", " ")):
        report = f"Tesla delivered 1.81 million vehicles worldwide in 2023{old}." + refs
        body = trace(report, recs, TraceOptions()).report.split("\n\n## ")[0]
        assert body == f"Tesla delivered 1.81 million vehicles worldwide in 2023{left}[1].", body


@pytest.mark.parametrize("marker", ["【1】", "［1］", "〔1〕"])
def test_a_full_width_old_marker_is_no_figure_of_the_claim(marker: str) -> None:
    recs = [{"url": "https://www.byd.com/annual2024", "title": "比亚迪2024年年报",
             "content": "比亚迪2024年新能源汽车销量为427万辆，市场份额约为33.2%。"}]
    report = f"比亚迪市场份额约为33.2%{marker}。\n\n## 参考资料\n\n[1] 比亚迪2024年年报 https://www.byd.com/annual2024\n"
    for policy in ("keep", "replace"):
        r = trace(report, recs, TraceOptions(existing=policy))
        assert len(r.citations) == 1 and not r.unsupported and not r.warnings, (policy, r.warnings)


@pytest.mark.parametrize(
    "report",
    ["<b>Webb launched on 25 December 2021.</b> Its mirror is 6.5 metres across.",
     "“小米汽车将在2025年实现盈利。”雷军表示。它的电池供应商是宁德时代。"],
)
def test_sentences_ending_in_a_tag_or_a_speaker_trace_again_the_same(report: str) -> None:
    recs = [{"url": "https://a.com", "title": "A",
             "content": "Webb launched on 25 December 2021. Its mirror is 6.5 metres across."},
            {"url": "https://c.com", "title": "C", "content": "雷军表示，“小米汽车将在2025年实现盈利。”"}]
    once = trace(report, recs, TraceOptions())
    assert once.citations and trace(once.report, recs, TraceOptions()).report == once.report


def test_closing_matter_after_a_prose_line_traces_again_the_same() -> None:
    recs = [{"url": "https://a.example/ev", "title": "EV sales report",
             "content": "Global electric vehicle sales rose 35% in 2023 to 14 million units."}]
    report = ("Global electric vehicle sales rose 35% in 2023 to 14 million units [1].\n\n## References\n\n"
              "1. EV sales report https://a.example/ev\n2. Battery prices https://b.example/bat\n\n"
              "Figures are provisional and may change.\n\n## Appendix: Data table\n\nSee below.\n")
    once = trace(report, recs, TraceOptions()).report
    assert once.count("## References") == 1 and once.endswith("## Appendix: Data table\n\nSee below.\n")
    assert trace(once, recs, TraceOptions()).report == once


def test_a_footnote_before_a_bracket_entry_of_the_same_number_keeps_them_apart() -> None:
    recs = [{"url": "https://a.example/ev", "title": "EV sales report",
             "content": "Global electric vehicle sales rose 35% in 2023 to 14 million units."},
            {"url": "https://b.example/bat", "title": "Battery prices",
             "content": "Lithium-ion battery pack prices fell 14% in 2023 to 139 dollars per kWh."}]
    report = ("Global electric vehicle sales rose 35% in 2023 to 14 million units[^1]. "
              "Lithium-ion battery pack prices fell 14% in 2023 to 139 dollars per kWh【1】.\n\n"
              "## References\n\n[^1]: EV sales report https://a.example/ev\n【1】Battery prices https://b.example/bat\n")
    r = trace(report, recs, TraceOptions())
    assert "units[1]." in r.report and "per kWh[2]." in r.report and not r.warnings


def test_closing_tags_by_the_thousand_cost_no_recursion() -> None:
    recs = [{"url": "https://a.com", "title": "A", "content": "Webb launched on 25 December 2021."}]
    r = trace("Webb launched on 25 December 2021." + "</b>" * 20000 + "\n", recs, TraceOptions())
    assert r.report.startswith("Webb launched on 25 December 2021")


def test_parenthesised_numbers_of_a_list_numbered_so_stay_with_a_warning() -> None:
    recs = [{"url": "https://www.esa.int/webb", "title": "ESA",
             "content": "Webb lifted off on an Ariane 5 rocket on 25 December 2021."}]
    fact = "Webb lifted off on an Ariane 5 rocket on 25 December 2021"
    for cite, refs in ((" (1)", "(1) Webb lifts off. https://www.esa.int/webb\n(2) Cost. https://b.example/c\n"),
                       ("（1，2）", "（1）Webb https://www.esa.int/webb\n（2）Cost https://b.example/c\n")):
        r = trace(f"{fact}{cite}.\n\n## References\n\n{refs}", recs, TraceOptions())
        assert r.report.startswith(f"{fact}{cite}[1].") and "## References" in r.report
        assert [w for w in r.warnings if w.startswith("number(s) in parentheses")] == [
            f"number(s) in parentheses {cite.strip()} look like the author's old citations (the removed "
            "references list numbers its entries so); they stay as written and do not follow the new "
            "numbering"]
    # an enumeration, a list numbered otherwise, or a number it does not hold: no warning
    for report in (f"Two steps: (1) build, (2) test. {fact}.\n\n## References\n\n(1) A https://www.esa.int/webb\n",
                   f"{fact} (1).\n\n## References\n\n1. A https://www.esa.int/webb\n",
                   f"{fact} (3).\n\n## References\n\n(1) A https://www.esa.int/webb\n"):
        r = trace(report, recs, TraceOptions())
        assert not [w for w in r.warnings if w.startswith("number(s) in parentheses")], report


@pytest.mark.parametrize("existing", ["keep", "replace"])
def test_author_year_citations_of_an_author_year_list_stay_with_a_warning(existing: str) -> None:
    recs = [{"url": "https://doi.org/10.1016/j.exger.2018.04.013", "title": "Creatine and cognition",
             "content": "Creatine supplementation improved short-term memory and intelligence/reasoning of "
                        "healthy individuals."}]
    body = ("Creatine improved short-term memory and intelligence/reasoning in healthy individuals "
            "(Avgerinos et al., 2018). Publication bias cannot be excluded (Prokopidis et al., 2024; Kim, "
            "2019a). As Smith and Lee (2020) argued, doses vary. Two steps (Phase 1, 2020) followed.")
    refs = ("\n\n## References\n\n"
            "Avgerinos, K. I., Spyrou, N., & Kapogiannis, D. (2018). Effects of creatine. *Experimental "
            "Gerontology*, 108, 166–173. https://doi.org/10.1016/j.exger.2018.04.013\n\n"
            "Prokopidis, K., Giannos, P., et al. (2024). Creatine and memory. *Nutrition Reviews*.\n\n"
            "- Smith, J. and Lee, K. 2020. Dosing. Journal of Things.\n")
    r = trace(body + refs, recs, TraceOptions(existing=existing))
    warned = [w for w in r.warnings if w.startswith("author-year citation(s)")]
    # each citation that names an entry's first author and year, once, in the body's order; not
    # "(Phase 1, 2020)", which names no entry
    assert warned == [
        "author-year citation(s) (Avgerinos et al., 2018), (Prokopidis et al., 2024; Kim, 2019a), "
        "Smith and Lee (2020) look like the author's old citations (the removed references list has "
        "entries by those authors and years); they stay as written and are not checked, and their "
        "entries are only in removed_references"]
    assert strip_markers(r.report).startswith(body)   # the citations stay as the author wrote them
    # a numbered list, or no list: no warning
    for report in (body + "\n\n## References\n\n[1] Avgerinos K. Creatine. https://doi.org/x\n", body):
        assert not [w for w in trace(report, recs, TraceOptions(existing=existing)).warnings
                    if w.startswith("author-year")]


def test_circled_numbers_ending_a_clause_are_warned_about_as_superscripts() -> None:
    recs = [{"url": "https://a.example.cn/x", "title": "年报",
             "content": "公司营业收入7771.02亿元，同比增长29.02%。"}]
    refs = "\n\n参考文献：\n① 比亚迪2023年年报，https://a.example.cn/x\n"
    r = trace("公司营业收入7771.02亿元，同比增长29.02%①。" + refs, recs)
    assert "29.02%①[1]。" in r.report
    assert any(w.startswith("superscript number(s) ① look like") for w in r.warnings)
    # an enumerator is no note
    assert not trace("步骤如下：①打开设置；②点击保存。公司营业收入7771.02亿元。" + refs, recs).warnings


def test_superscript_numbers_the_old_list_holds_stay_with_a_warning() -> None:
    recs = [{"url": "https://www.caam.org.cn/2024", "title": "中汽协",
             "content": "2024年中国新能源汽车销量达到1286.6万辆，同比增长35.5%。"}]
    report = ("2024年中国新能源汽车销量达到1286.6万辆，同比增长35.5%²。\n\n## 参考资料\n\n"
              "1. 乘联会 https://www.cpcaauto.com/news\n2. 中汽协 https://www.caam.org.cn/2024\n")
    r = trace(report, recs, TraceOptions())
    assert "35.5%²[1]。" in r.report
    assert any(w.startswith("superscript number(s) ² look like") for w in r.warnings)
    # an exponent, or no list that numbers it: no warning
    r = trace("The park covers 120 km² of forest.", [{"url": "https://a.com", "title": "A",
              "content": "The park covers 120 km² of forest."}], TraceOptions())
    assert not [w for w in r.warnings if w.startswith("superscript")]
    # after a word, a blank between or not, and pandoc's "^2^" (but not a unit's power)
    refs = "\n\n## References\n\n1. A https://a.com\n2. B https://b.com\n"
    recs = [{"url": "https://a.com", "title": "A", "content": "The park covers 120 km² of forest."}]
    for report, shown in (("It covers 72 hectares². Next.", "²"), ("It covers 72 hectares ^2^. Next.", "^2^"),
                          ("It covers 72 hectares ¹.", "¹")):
        r = trace(report + refs, recs, TraceOptions())
        assert any(w.startswith(f"superscript number(s) {shown} look like") for w in r.warnings), report
    r = trace("The park covers 120 km² of forest, 5 m² each." + refs, recs, TraceOptions())
    assert not [w for w in r.warnings if w.startswith("superscript")]


def test_warnings_one_per_item_are_capped_and_counted() -> None:
    from tracer.pipeline import MAX_ITEM_WARNINGS

    recs = [{"url": "https://a.example/x", "content": "Paris is the capital of France."},
            *({"url": "", "content": "x"} for _ in range(5))]              # five dropped records
    result = trace("Paris is the capital of France [7]. " * (MAX_ITEM_WARNINGS + 200) + "\n", recs)
    listed = [w for w in result.warnings if w.startswith(("existing citation", "record "))]
    assert len(listed) == MAX_ITEM_WARNINGS and listed[0].startswith("record 1 dropped")
    assert result.warnings[-1] == (f"205 more warnings about old citations or dropped records are not listed "
                                   f"(the first {MAX_ITEM_WARNINGS} are)")


def test_a_record_that_states_two_of_the_sentences_figures_otherwise_is_never_cited() -> None:
    # one figure stated otherwise may be a partly supported sentence; two, at least half of the
    # sentence's, are another thing's figures (another company's quarter)
    nvidia = {"url": "https://example.com/nvda", "title": "NVIDIA fourth-quarter results",
              "content": "NVIDIA reported revenue for the fourth quarter ended January 28, 2024, of $22.1 "
                         "billion, up 22% from the previous quarter and up 265% from a year ago."}
    msft = {"url": "https://example.com/msft", "title": "Microsoft fourth-quarter results",
            "content": "Revenue was $64.7 billion and increased 15% compared to the fourth quarter of "
                       "fiscal year 2023."}
    filler = [{"url": f"https://f.example/{i}", "title": f"Note {i}", "content": text}
              for i, text in enumerate(["The city council approved a new budget for road repairs in March.",
                                        "Heavy rain caused flooding in several coastal towns last week.",
                                        "The museum opened a new wing dedicated to modern sculpture."])]
    sentence = ("Microsoft's revenue was $64.7 billion in the fourth quarter of fiscal 2024, up 15% year "
                "over year.")
    alone = trace(sentence, [nvidia, *filler])
    assert not alone.citations
    (miss,) = alone.unsupported
    assert "contradicts it" in miss.reason and "$22,100,000,000" in miss.reason
    assert [[s.url for s in c.sources] for c in trace(sentence, [nvidia, msft, *filler]).citations] == [
        ["https://example.com/msft"]]
    # one figure stated otherwise is as before: cited, and listed
    one = trace("NVIDIA's fourth-quarter revenue rose 22% from the previous quarter to $22.4 billion.",
                [nvidia, *filler])
    assert [s.unstated for c in one.citations for s in c.sources] == [("$22,400,000,000",)]


@pytest.mark.parametrize(("old", "options", "new"), [
    ("### 参考资料", {}, "### 参考文献"), ("# Sources", {"references_heading": "Sources"}, "# Sources"),
    ("**参考资料**", {}, "### 参考文献"),      # no shallower than the heading after it
    ("### 参考资料", {"references_heading": "#### 来源"}, "#### 来源"),
])
def test_the_new_list_takes_the_old_headings_level(old: str, options: dict[str, str], new: str) -> None:
    recs = [{"url": "https://a.example.cn/x", "title": "光伏行业自律公约签署",
             "content": "30余家光伏企业签署行业自律公约。"},
            {"url": "https://b.example.cn/y", "title": "IRENA统计",
             "content": "2024年全球新增光伏装机452GW。"}]
    level = "#" * max(1, old.count("#")) if old.startswith("#") else "###"
    report = (f"30余家光伏企业签署行业自律公约[1]。\n\n{old}\n1. [光伏行业自律公约签署](https://a.example.cn/x)\n\n"
              f"{level} 延伸阅读\n- [IRENA统计](https://b.example.cn/y)\n")
    once = trace(report, recs, options)
    assert f"\n{new}\n\n[1] [光伏行业自律公约签署](https://a.example.cn/x)\n" in once.report
    assert once.report.endswith(f"{level} 延伸阅读\n- [IRENA统计](https://b.example.cn/y)\n")
    assert trace(once.report, recs, options).report == once.report


@pytest.mark.parametrize("placement", ["before", "after"])
def test_a_note_copied_as_digits_after_a_year_or_a_percentage(placement: str) -> None:
    from test_tables import FILLER

    from tracer.markdown import scan_markdown
    from tracer.segment import segment_sentences

    recs = [{"url": "https://a.com/x", "title": "EU EV",
             "content": "In the EU, battery electric car sales rose 37% in 2023."},
            {"url": "https://b.com/y", "title": "Share",
             "content": "Battery cars took a 14.6% share of the market."}, *FILLER]
    report = ("Battery electric car sales in the EU rose 37% in 2023.1 Battery cars took a 14.6% share of "
              "the market.2\n\n## Works cited\n\n1. EU EV, https://a.com/x\n2. Share, https://b.com/y\n")
    options = TraceOptions(placement=placement)
    once = trace(report, recs, options)
    assert [[s.url for s in c.sources] for c in once.citations] == [["https://a.com/x"], ["https://b.com/y"]]
    assert not [s.unstated for c in once.citations for s in c.sources if s.unstated]   # no "2023.1"
    assert trace(once.report, recs, options).report == once.report
    if placement == "before":
        assert once.report.startswith("Battery electric car sales in the EU rose 37% in 2023[1].1 Battery")
    text = "The share hit 14.6%.2 The EU led. A ratio of 3.14 The end. In 12023.2 No."
    assert [s.text for s in segment_sentences(text, scan_markdown(text))] == [
        "The share hit 14.6%.2", "The EU led.", "A ratio of 3.14 The end.", "In 12023.2 No."]


@pytest.mark.parametrize("existing", ["keep", "replace"])
@pytest.mark.parametrize("placement", ["before", "after"])
@pytest.mark.parametrize("style", ["numeric", "footnote", "link", "superscript"])
def test_notes_copied_as_digits_end_their_sentences(existing: str, placement: str, style: str) -> None:
    from test_tables import FILLER

    # Gemini's superscripts, copied: "vehicles.1 In the EU" is two sentences, each cited apart
    recs = [{"url": "https://www.reuters.com/norway-ev", "title": "Norway's 2023 car sales",
             "content": "Fully electric cars accounted for a record 82.4% of new cars sold in Norway in "
                        "2023. Total new car registrations fell 26% to 126,900 vehicles."},
            {"url": "https://www.acea.auto/registrations-2023", "title": "New car registrations in 2023",
             "content": "Battery-electric cars reached a market share of 14.6% in the EU in 2023, up from "
                        "12.1% in 2022."}, *FILLER]
    report = ("Total new car registrations in Norway fell 26% to 126,900 vehicles.1 In the EU, "
              "battery-electric cars reached a market share of 14.6% in the region.2\n\n#### Works cited\n\n"
              "1. Norway's 2023 car sales, accessed May 3, 2024, https://www.reuters.com/norway-ev\n"
              "2. New car registrations in 2023, accessed May 3, 2024, https://www.acea.auto/registrations-2023\n")
    options = TraceOptions(existing=existing, placement=placement, style=style)
    once = trace(report, recs, options)
    assert [(c.sentence[-10:], [s.url for s in c.sources]) for c in once.citations] == [
        ("vehicles.1", ["https://www.reuters.com/norway-ev"]),
        ("e region.2", ["https://www.acea.auto/registrations-2023"])]
    assert any("vehicles.1, region.2 look like the author's old citations" in w for w in once.warnings)
    assert trace(once.report, recs, options).report == once.report
    if placement == "before" and style == "numeric":
        assert once.report.startswith("Total new car registrations in Norway fell 26% to 126,900 "
                                      "vehicles[1].1 In")
    # so without a list, on the first trace as on the second; but an abbreviation's digits stay
    assert len(trace(report.split("\n\n")[0], recs, options).citations) == 2
    from tracer.markdown import scan_markdown
    from tracer.segment import segment_sentences
    for text in ("See Fig.1 The chart shows growth.", "It ranks No.3 In Europe.", "See Table.1 The rows.",
                 "比亚迪是全球No.1 新能源车企。", "The U.S.2 Fleet grew.", "Sales rose 3.5 In 2023."):
        assert len(segment_sentences(text, scan_markdown(text))) == 1, text


def test_a_power_in_sup_tags_stays_text_on_a_second_trace() -> None:
    recs = [{"url": "https://a.org", "title": "L",
             "content": "The Louvre received 8.9 million visitors in 2023 and covers 72,735 m2."},
            {"url": "https://b.org", "title": "T", "content": "The Eiffel Tower is 330 metres tall."}]
    report = ("The Eiffel Tower is 330 metres tall. The Louvre received 8.9 million visitors in 2023 and "
              "covers 72,735 m<sup>2</sup> of space.\n")
    once = trace(report, recs)
    assert "m<sup>2</sup> of space" in once.report and trace(once.report, recs).report == once.report


def test_an_author_year_citation_is_no_figure_of_the_claim() -> None:
    # "(Avgerinos et al., 2018)" dates the source; the record never states its own year
    from tracer.verify import sentence_query

    recs = [{"url": "https://s.org/p", "title": "Creatine review",
             "content": "Creatine supplementation improved short-term memory and reasoning in healthy "
                        "individuals."},
            {"url": "https://x.org", "title": "x", "content": "Cats sleep for most of the day."}]
    for cite in ("(Avgerinos et al., 2018)", "(Avgerinos & Smith, 2018; Wu, 2019a)", "(see WHO, 2018)"):
        r = trace(f"Creatine supplementation improved short-term memory and reasoning in healthy individuals "
                  f"{cite}.", recs)
        assert [s.url for c in r.citations for s in c.sources] == ["https://s.org/p"], cite
    # a date of the claim stays one
    for dated in ("It remains open (June 2018).", "Revenue (FY 2023) rose.", "Sales (Q4 2023) rose."):
        assert sentence_query(dated) == dated


@pytest.mark.parametrize(("claim", "record", "conflict"), [
    # a figure in Chinese numerals with a hedge before its classifier is read, so a wrong one
    # conflicts (before, "两千七百余人" was no figure, and the sentence scored 0.48 on words alone)
    ("随行将士两千七百余人。", "郑和船队规模庞大，随行将士二万七千八百余人。", "27,800"),
    # ... and a hedged one reaches what it hedges, in digits or in words
    ("随行将士两万七千余人。", "郑和船队规模庞大，随行将士二万七千八百余人。", ""),
    ("三十多家企业参加了本届展会。", "本届展会共有32家企业参加，规模创下新高。", ""),
    # "两万多" is 20,000 and more, up to the next ten thousand
    ("项目带动就业两万多人。", "该项目建成后带动就业2.3万余人。", ""),
])
def test_a_chinese_numeral_with_a_hedge_is_a_figure_of_the_claim(
        claim: str, record: str, conflict: str) -> None:
    res = trace(claim, [{"url": "https://a.cn/x", "title": "郑和", "content": record}], {"language": "zh"})
    found = [u.closest for u in res.unsupported if u.closest is not None]
    if conflict:
        assert found and conflict in found[0].conflict and not res.citations
    else:
        assert not any(f.conflict or f.unstated for f in found)
        assert not [s for c in res.citations for s in c.sources if s.unstated]


_CPI = "2024年1月份，全国居民消费价格同比下降0.8%，环比上涨0.3%。其中，城市下降0.8%，农村下降1.0%。"
_MARGIN = ("Northwind reported its third-quarter results on Tuesday. The company's gross margin widened to "
           "46.2% from 41.0% a year earlier, while revenue rose 12% to $3.4 billion. Operating costs fell 3% "
           "in the quarter. Analysts at several banks had expected weaker results from the company "
           "this quarter.")


@pytest.mark.parametrize(("claim", "record", "lang", "says"), [
    # the words all match (statistics releases put 同比 and 环比, up and down, side by side)
    ("2024年1月，全国居民消费价格同比上涨0.8%。", _CPI, "zh",
     '"同比下降0.8%" where the sentence says "同比上涨0.8%"'),
    ("2024年1月，全国居民消费价格同比下降0.3%。", _CPI, "zh", '"同比下降0.8%"'),
    ("Northwind's operating costs rose 3% in the quarter.", _MARGIN, "en", '"fell 3%"'),
    # "up 9 percent" and "down 9%" say which way too ("up to 9%" is a bound)
    ("Total attendance at the museum fell 9% in 2024 to 1.42 million.",
     "Total attendance across all its galleries reached 1.42 million in 2024, up 9 percent on 2023.", "en",
     '"up 9 percent"'),
    ("Total attendance at the museum rose 9% in 2024.",
     "Total attendance across all its galleries rose by up to 9% in 2024 in some weeks.", "en", ""),
    # the same change, said the same way or without its measure, is no conflict
    ("2024年1月，全国居民消费价格同比下降0.8%。", _CPI, "zh", ""),
    ("2024年1月，全国居民消费价格下降0.8%。", _CPI, "zh", ""),
    ("Northwind's operating costs fell by 3% in the quarter.", _MARGIN, "en", ""),
    # "to" and "by" are not told apart ("rose to 3.7 percent" reports a rate as "increased 3.7
    # percent" does), and a figure the record states elsewhere too ("a 20% decrease") is left alone
    ("Over the last 12 months, the all items index rose to 3.7 percent before seasonal adjustment.",
     "Over the last 12 months, the all items index increased 3.7 percent before seasonal adjustment.",
     "en", ""),
    ("Operating costs decreased 20% year on year.",
     "Revenue increased 20% while operating costs saw a 20% decrease, the company said.", "en", ""),
])
def test_a_figure_whose_change_the_record_gives_otherwise_is_contradicted(
        claim: str, record: str, lang: str, says: str) -> None:
    res = trace(claim, [{"url": "https://a.example/x", "title": "Release", "content": record}],
                {"language": lang})
    conflicts = [u.closest.conflict for u in res.unsupported if u.closest is not None and u.closest.conflict]
    if says:
        assert not res.citations and conflicts and says in conflicts[0], (res.citations, conflicts)
    else:
        assert not conflicts


_FLU = "监测数据显示，目前全国流感活动仍处于较高水平，但已呈下降趋势。"


@pytest.mark.parametrize(("claim", "record", "says"), [
    ("嫦娥六号实现了世界首次月球正面采样返回。",
     "2024年6月25日，嫦娥六号返回器准确着陆，实现世界首次月球背面采样返回，任务取得圆满成功。", '"背面"'),
    # the quote goes on past the sentence's end, the opposite in the sentence's last word
    ("目前全国流感活动处于较低水平。", _FLU, '"高水平"'),
    ("目前全国流感活动处于较高水平。", _FLU, ""),
])
def test_a_chinese_word_swapped_for_its_counterpart_is_contradicted(
        claim: str, record: str, says: str) -> None:
    res = trace(claim, [{"url": "https://a.cn/x", "title": "t", "content": record}], {"language": "zh"})
    conflicts = [u.closest.conflict for u in res.unsupported if u.closest is not None and u.closest.conflict]
    if says:
        assert not res.citations and conflicts and says in conflicts[0]
    else:
        assert res.citations and not conflicts


_COFFEE = "一项新研究显示，每天饮用两杯咖啡可能降低2型糖尿病风险，但仍需更多证据。"


def test_a_chinese_denial_holding_a_hedge_word_is_no_hedge() -> None:
    record = {"url": "https://a.cn/x", "title": "t",
              "content": "专家指出，该病毒目前不可能在人际间大规模传播。"}
    res = trace("专家指出，该病毒目前无法在人际间大规模传播。", [record], {"language": "zh"})
    assert res.citations and not res.unsupported


@pytest.mark.parametrize(("claim", "hedged"), [
    ("研究发现，每天饮用咖啡降低2型糖尿病风险。", True),
    # a sentence that hedges too, or says it can be so, claims no more than the quote
    ("研究发现，每天饮用咖啡可降低2型糖尿病风险。", False),
    ("研究发现，每天饮用咖啡可能降低2型糖尿病风险。", False),
])
def test_a_chinese_quote_that_only_says_it_may_be_so_does_not_support_a_sure_sentence(
        claim: str, hedged: bool) -> None:
    res = trace(claim, [{"url": "https://a.cn/x", "title": "t", "content": _COFFEE}], {"language": "zh"})
    conflicts = [u.closest.conflict for u in res.unsupported if u.closest is not None and u.closest.conflict]
    assert (not res.citations and conflicts and "may be so" in conflicts[0]) if hedged else res.citations


def test_a_pandoc_report_is_recited_and_its_bibliography_placeholder_cut() -> None:
    report = ("Norway has the highest number of heat pumps per household in Europe [@ehpa2023].\n\n"
              "@bwp2024 reports that Germany installed 356,000 heat pumps in 2023.\n\n"
              "## References\n\n::: {#refs}\n:::\n")
    records = [{"id": "ehpa2023", "url": "https://ehpa.org/2023", "title": "EHPA market report",
                "content": "Norway has the highest number of heat pumps per household in Europe, ahead of "
                           "Sweden."},
               {"url": "https://bwp.de/2024", "title": "BWP",
                "content": "Germany installed 356,000 heat pumps in 2023, a record year for the industry."}]
    for existing in ("keep", "replace"):
        res = trace(report, records, TraceOptions(existing=existing))
        body, _, refs = res.report.partition("\n\n## References\n\n")
        assert body == ("Norway has the highest number of heat pumps per household in Europe [1].\n\n"
                        "@bwp2024 reports that Germany installed 356,000 heat pumps in 2023[2].")
        assert "#refs" not in res.report and res.report.count("## References") == 1
        assert [c.sources[0].url for c in res.citations] == ["https://ehpa.org/2023", "https://bwp.de/2024"]


def test_old_markers_inside_html_blocks_are_named_in_a_warning() -> None:
    """HTML is not traced, so '<div>… [3].</div>' keeps the old list's number: the trace says so
    (before, silently); one in a code block is code."""
    report = ('China installed 217 GW of solar PV in 2023 [3].\n\n'
              '<div class="note">China installed 217 GW of solar PV in 2023 [3].</div>\n\n'
              "```\nprint(x[3])\n```\n\n## References\n\n[1] A https://a.example/a\n"
              "[2] B https://b.example/b\n[3] C https://www.iea.org/r\n")
    records = [{"url": "https://www.iea.org/r", "title": "IEA",
                "content": "China installed 217 GW of solar PV in 2023."}]
    res = trace(report, records)
    assert '<div class="note">China installed 217 GW of solar PV in 2023 [3].</div>' in res.report
    [warned] = [w for w in res.warnings if "inside HTML blocks" in w]
    assert warned.startswith("marker(s) inside HTML blocks [3] look like the author's old citations")


def test_held_working_data_keeps_the_trace_s_data_for_the_caller_to_free() -> None:
    from dataclasses import replace

    from tracer import Record, held_working_data
    from tracer.models import Passage

    plain = trace(REPORT, RECORDS)
    with held_working_data() as held:
        res = trace(REPORT, RECORDS)
        other: list[int] = []
        # another thread's trace is not this caller's to hold
        t = threading.Thread(target=lambda: other.append(len(trace(REPORT, RECORDS).citations)))
        t.start()
        t.join()
    assert replace(res, stats=plain.stats) == plain and other == [len(plain.citations)]  # (timings aside)
    lists = [x for x in held if isinstance(x, list)]
    assert any(x and all(isinstance(p, Passage) for p in x) for x in lists)     # the passages
    assert any(x and all(isinstance(r, Record) for r in x) for x in lists)      # the records
    n = len(held)
    trace(REPORT, RECORDS)  # outside the block: nothing more is handed over
    assert len(held) == n
    held.clear()
