"""One references list per section ("## Webb", its text, "### Sources" and its entries, then
"## Hubble" with its own "### Sources", each numbered from 1, as open_deep_research writes
reports): every list is cut, each resolves only its own section's old markers, and every offset the
trace reports is the report's own."""

from __future__ import annotations

import re

import pytest

from tracer import TraceOptions, trace
from tracer.existing import strip_markers
from tracer.markdown import misplaced_references, scan_markdown, section_references

RECORDS = [
    {"url": "https://a.example/webb-launch", "title": "Webb launch",
     "content": "The James Webb Space Telescope launched on 25 December 2021 from French Guiana."},
    {"url": "https://b.example/webb-orbit", "title": "Webb orbit",
     "content": "Webb orbits the Sun at the second Lagrange point, 1.5 million km from Earth."},
    {"url": "https://c.example/hubble", "title": "Hubble facts",
     "content": "Hubble has made more than 1.5 million observations since its launch in 1990."},
]

INTRO = "# Space telescopes\n\n## Introduction\n\nTwo telescopes shape astronomy today.\n\n"
WEBB = ("## Webb\n\n"
        "The James Webb Space Telescope launched on 25 December 2021 [1]. "
        "Webb orbits the Sun at the second Lagrange point, 1.5 million km from Earth [2].\n\n")
WEBB_SOURCES = ("### Sources\n\n"
                "[1] Webb launch: https://a.example/webb-launch\n"
                "[2] Webb orbit: https://b.example/webb-orbit\n\n")
HUBBLE = "## Hubble\n\nHubble has made more than 1.5 million observations [1].\n\n"
HUBBLE_SOURCES = "### Sources\n\n[1] Hubble facts: https://c.example/hubble\n\n"
CONCLUSION = "## Conclusion\n\nBoth telescopes will keep working for years.\n"
REPORT = INTRO + WEBB + WEBB_SOURCES + HUBBLE + HUBBLE_SOURCES + CONCLUSION
BODY = INTRO + WEBB + HUBBLE + CONCLUSION
# each sentence of REPORT with the page its own section's list gives its marker
CITED = {
    "The James Webb Space Telescope launched on 25 December 2021 [1].": ["https://a.example/webb-launch"],
    "Webb orbits the Sun at the second Lagrange point, 1.5 million km from Earth [2].": ["https://b.example/webb-orbit"],
    "Hubble has made more than 1.5 million observations [1].": ["https://c.example/hubble"],
}


def _cited(report: str, out) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    return {report[c.start:c.end]: [s.url for s in c.sources] for c in out.citations}


@pytest.mark.parametrize("existing", ["keep", "replace"])
def test_each_list_is_cut_and_resolves_its_own_section(existing: str) -> None:
    out = trace(REPORT, RECORDS, TraceOptions(existing=existing))
    body, sep, refs = out.report.partition("### References\n")
    assert sep and "### " not in refs and "### Sources" not in body
    # the text around the lists, markers aside, byte for byte and in its order
    assert strip_markers(body).rstrip() == strip_markers(BODY).rstrip()
    assert out.removed_references == WEBB_SOURCES + HUBBLE_SOURCES
    # every span is the report's own, and each section's "[1]" is its own list's [1]
    assert _cited(REPORT, out) == CITED
    assert "observations [3].\n" in out.report and "[3] [Hubble facts](https://c.example/hubble)" in refs
    assert not [w for w in out.warnings if "existing citation" in w], out.warnings
    # traced again, it is the same report (one list, at the end)
    assert trace(out.report, RECORDS, TraceOptions(existing=existing)).report == out.report


def test_under_keep_a_section_marker_is_not_read_through_another_sections_list() -> None:
    # Hubble's "[1]" would be Webb's launch page through the first list, and Webb's "[2]" a page
    # the second list does not have: each is the author's citation of its own list's entry
    records = [{**r, "content": "Unrelated text about galaxies and stars."} for r in RECORDS]
    out = trace(REPORT, records, TraceOptions(existing="keep"))
    assert _cited(REPORT, out) == CITED
    # each is warned about as the author wrote it, at its own offset
    named = [w for w in out.warnings if "not supported by its record" in w]
    assert len(named) == 3, out.warnings
    for w in named:
        a, b = map(int, re.search(r"at (\d+)\.\.(\d+)", w).groups())  # type: ignore[union-attr]
        assert REPORT[a:b] in _cited(REPORT, out)


def test_the_moved_text_maps_back_piece_by_piece() -> None:
    moved = section_references(REPORT, scan_markdown(REPORT))
    assert moved is not None
    assert moved.text == BODY + "\n" + WEBB_SOURCES + HUBBLE_SOURCES
    for p in range(len(moved.text)):
        if p != len(BODY):                 # (the separator the move adds)
            assert REPORT[moved.original(p)] == moved.text[p]
    # a span that ends where a list was ends there, not after it
    assert moved.original(len(INTRO + WEBB), end=True) == len(INTRO + WEBB)
    assert moved.original(len(INTRO + WEBB)) == len(INTRO + WEBB + WEBB_SOURCES)
    # each list's scope is its own section's text
    (a1, b1, c1, d1), (a2, b2, c2, d2) = moved.scopes
    assert moved.text[a1:b1] == WEBB and moved.text[c1:d1] == WEBB_SOURCES
    assert moved.text[a2:b2] == HUBBLE and moved.text[c2:d2] == HUBBLE_SOURCES


def test_a_marker_outside_every_section_with_a_list_resolves_through_none() -> None:
    report = REPORT.replace("shape astronomy today.", "shape astronomy today [1].")
    out = trace(report, RECORDS, TraceOptions(existing="keep"))
    (named,) = [w for w in out.warnings if "does not resolve" in w]
    at = int(re.search(r"at offset (\d+)", named).group(1))  # type: ignore[union-attr]
    assert report[at:at + 3] == "[1]" and "'[1]'" in named and ": 1 does not resolve" in named


def test_lists_of_a_heading_level_with_their_sections_and_a_trailing_list() -> None:
    # "## References" after each "## …" section, the last one at the report's end, then closing matter
    report = ("# Telescopes\n\n## Webb\n\n"
              "The James Webb Space Telescope launched on 25 December 2021 [1].\n\n"
              "## References\n\n1. Webb launch. https://a.example/webb-launch\n\n"
              "## Hubble\n\nHubble has made more than 1.5 million observations [1].\n\n"
              "## References\n\n1. Hubble facts. https://c.example/hubble\n\n"
              "*Generated by a research agent.*\n")
    out = trace(report, RECORDS, TraceOptions(existing="keep"))
    assert _cited(report, out) == {
        "The James Webb Space Telescope launched on 25 December 2021 [1].": ["https://a.example/webb-launch"],
        "Hubble has made more than 1.5 million observations [1].": ["https://c.example/hubble"],
    }
    assert out.report.count("## References") == 1
    assert out.report.endswith(
        "[2] [Hubble facts](https://c.example/hubble)\n\n*Generated by a research agent.*\n")


def test_one_list_that_closes_its_section_before_more_report() -> None:
    # "### References" under "## Results", then "## Methodology": the list is cut, and resolves the
    # markers of its section
    report = ("# Report\n\n## Results\n\n"
              "The James Webb Space Telescope launched on 25 December 2021 [1].\n\n"
              "### References\n\n1. Webb launch. https://a.example/webb-launch\n\n"
              "## Methodology\n\nWe read the mission pages.\n")
    out = trace(report, RECORDS, TraceOptions(existing="keep"))
    assert _cited(report, out) == {
        "The James Webb Space Telescope launched on 25 December 2021 [1].": ["https://a.example/webb-launch"]}
    assert "We read the mission pages.\n\n### References\n\n[1] [Webb launch]" in out.report
    assert not [u for u in out.unsupported if "https://" in u.sentence]


def test_a_list_whose_section_cites_one_of_its_entries_is_cut_and_the_output_traces_the_same() -> None:
    # Webb's list gives three entries and its section cites one: cut too (left in the body, the
    # output's renumbered markers made the next trace read it otherwise)
    orbit = " Webb orbits the Sun at the second Lagrange point, 1.5 million km from Earth [2]."
    report = REPORT.replace(orbit, "").replace("[2] Webb orbit: https://b.example/webb-orbit\n",
                                        "[2] Webb orbit: https://b.example/webb-orbit\n"
                                        "[3] Kepler: https://d.example/kepler\n")
    out = trace(report, RECORDS, TraceOptions(existing="keep"))
    assert _cited(report, out) == {
        "The James Webb Space Telescope launched on 25 December 2021 [1].": ["https://a.example/webb-launch"],
        "Hubble has made more than 1.5 million observations [1].": ["https://c.example/hubble"],
    }
    assert "Kepler" not in out.report and out.report.count("### ") == 1
    assert trace(out.report, RECORDS, TraceOptions(existing="keep")).report == out.report


def test_a_summary_citing_nothing_before_a_trailing_list_leaves_each_section_its_own_list() -> None:
    # "## Conclusion" cites nothing and a final "## References" lists every source from 1: the
    # sections' markers still resolve through their own lists, not through the final one
    final = "## References\n\n1. Hubble facts. https://c.example/hubble\n2. Webb orbit. https://b.example/webb-orbit\n"
    report = REPORT + "\n" + final
    out = trace(report, RECORDS, TraceOptions(existing="keep"))
    assert _cited(report, out) == CITED
    assert out.removed_references == WEBB_SOURCES + HUBBLE_SOURCES + final
    assert trace(out.report, RECORDS, TraceOptions(existing="keep")).report == out.report


@pytest.mark.parametrize("change", [
    # the section does not cite its list's numbers: the list may be the report's content
    lambda r: r.replace("2021 [1]", "2021").replace("Earth [2]", "Earth"),
    # ... or cites a number the list does not give
    lambda r: r.replace("Earth [2]", "Earth [7]"),
    # a list without a link: no sources list of this kind
    lambda r: r.replace("[1] Hubble facts: https://c.example/hubble", "[1] Hubble facts, NASA, 2023."),
    # another line gives a source as an entry does
    lambda r: r.replace("Both telescopes",
                        "- [NASA](https://nasa.example/) — mission pages\n\nBoth telescopes"),
])
def test_lists_that_may_be_the_reports_own_stay(change) -> None:  # type: ignore[no-untyped-def]
    report = change(REPORT)
    assert section_references(report, scan_markdown(report)) is None
    out = trace(report, RECORDS, TraceOptions(existing="keep"))
    assert "### Sources" in out.report.partition("## Conclusion")[0]


@pytest.mark.parametrize("title", ["**Sources**", "**Sources:**", "__References__", "Sources\n-------"])
@pytest.mark.parametrize("closing", [True, False])
def test_lists_under_bold_or_setext_titles_each_resolve_their_own_section(title: str, closing: bool) -> None:
    # "**Sources**" over each section's list, as some agents write it: read as "#### Sources"
    # would be (a setext "Sources" over "-------" as "## Sources"); the last list either closes
    # the last section or ends the report
    report = REPORT.replace("### Sources", title)
    if not closing:
        report = report.replace(CONCLUSION, "")
    moved = section_references(report, scan_markdown(report))
    assert moved is not None and len(moved.scopes) == 2
    for existing in ("keep", "replace"):
        out = trace(report, RECORDS, TraceOptions(existing=existing))
        assert _cited(report, out) == CITED, existing
        assert title not in out.report and out.report.count("https://") == 3
        assert not [w for w in out.warnings if "existing citation" in w], out.warnings
        assert trace(out.report, RECORDS, TraceOptions(existing=existing)).report == out.report


def test_one_list_under_a_bold_title_that_closes_its_section_is_its_own() -> None:
    # "**Sources**" after Webb's text, then "## Hubble": not the report's list moved up
    # (`misplaced_references` leaves it), but Webb's own, as "### Sources" there would be; Hubble's
    # "[1]" resolves through no list, as it did with the list left in the body
    report = INTRO + WEBB + WEBB_SOURCES.replace("### Sources", "**Sources**") + HUBBLE + CONCLUSION
    assert misplaced_references(report, scan_markdown(report)) is None
    moved = section_references(report, scan_markdown(report))
    assert moved is not None and len(moved.scopes) == 1
    out = trace(report, RECORDS, TraceOptions(existing="keep"))
    assert "**Sources**" not in out.report
    cited = _cited(report, out)
    assert cited["The James Webb Space Telescope launched on 25 December 2021 [1]."] == [
        "https://a.example/webb-launch"]
    assert [w for w in out.warnings if "does not resolve" in w]
    assert trace(out.report, RECORDS, TraceOptions(existing="keep")).report == out.report


@pytest.mark.parametrize("title", ["### Sources", "**Sources:**"])
def test_unnumbered_lists_closing_each_section_are_all_cut(title: str) -> None:
    # "- [Title](https://…)" entries under each section, its sentences citing by no number
    webb = WEBB.replace(" [1]", "").replace(" [2]", "")
    hubble = HUBBLE.replace(" [1]", "")
    webb_sources = f"{title}\n\n- [Webb launch](https://a.example/webb-launch)\n- [Webb orbit](https://b.example/webb-orbit)\n\n"
    hubble_sources = f"{title}\n\n- [Hubble facts](https://c.example/hubble)\n\n"
    report = INTRO + webb + webb_sources + hubble + hubble_sources + CONCLUSION
    for existing in ("keep", "replace"):
        out = trace(report, RECORDS, TraceOptions(existing=existing))
        assert title not in out.report and out.removed_references == webb_sources + hubble_sources
        assert strip_markers(out.report).startswith((INTRO + webb + hubble + CONCLUSION).rstrip())
        assert sorted(u for c in out.citations for u in (s.url for s in c.sources)) == [
            "https://a.example/webb-launch", "https://b.example/webb-orbit", "https://c.example/hubble"]
        assert trace(out.report, RECORDS, TraceOptions(existing=existing)).report == out.report
    # one such list before more report, or lists of which one a section cites, stay as they are
    one = INTRO + webb + webb_sources + hubble + CONCLUSION
    assert section_references(one, scan_markdown(one)) is None
    mixed = INTRO + WEBB + WEBB_SOURCES + hubble + hubble_sources + CONCLUSION
    assert section_references(mixed, scan_markdown(mixed)) is None
    # numbered lists that no section cites are cut as unnumbered ones are (else the output's own
    # markers, cited in those sections, made a second trace read them otherwise)
    silent = INTRO + webb + WEBB_SOURCES + hubble + HUBBLE_SOURCES + CONCLUSION
    moved = section_references(silent, scan_markdown(silent))
    assert moved is not None and len(moved.scopes) == 2
    out = trace(silent, RECORDS, TraceOptions(existing="keep"))
    assert out.removed_references == WEBB_SOURCES + HUBBLE_SOURCES
    assert trace(out.report, RECORDS, TraceOptions(existing="keep")).report == out.report
