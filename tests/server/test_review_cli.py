"""CLI: `trace --format html`, `--refs-out/--refs-format`, and `render --html`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import bibtexparser
import pytest
import rispy

from server.cli import main

REPORT = (
    "# Brief\n\n"
    "The Webb telescope launched on 25 December 2021 from Kourou. "
    "Its primary mirror is 6.5 metres across.\n\n"
    "## References\n\n1. old list\n"
)
RECORDS = [
    {"url": "https://esa.example/launch", "title": "Webb <b>lifts off</b>", "author": "ESA",
     "published_at": "2021-12-25",
     "content": "Webb launched on 25 December 2021 from Kourou, French Guiana, on an Ariane 5."},
    {"url": "https://nasa.example/mirror", "title": "Mirror facts",
     "content": "Its primary mirror is 6.5 metres across and has 18 segments."},
]


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path]:
    report = tmp_path / "report.md"
    report.write_text(REPORT, encoding="utf-8")
    records = tmp_path / "records.json"
    records.write_text(json.dumps(RECORDS), encoding="utf-8")
    return report, records


def test_trace_format_html_and_bibtex_export(files: tuple[Path, Path], tmp_path: Path) -> None:
    report, records = files
    out, bib = tmp_path / "page.html", tmp_path / "refs.bib"
    code = main(["trace", str(report), str(records), "--format", "html", "-o", str(out),
                 "--refs-out", str(bib), "--refs-format", "bibtex", "--mode", "deterministic"])
    assert code == 0
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.count("<script") == 1
    markers = re.findall(r'<a class="marker" id="m-\d+"', page)
    assert len(markers) >= 1
    assert '<mark class="evidence">' in page and "Webb &lt;b&gt;lifts off&lt;/b&gt;" in page
    lib = bibtexparser.parse_string(bib.read_text(encoding="utf-8"))
    assert lib.failed_blocks == [] and len(lib.entries) >= 1
    urls = {e.fields_dict["url"].value for e in lib.entries}
    assert urls <= {"https://esa.example/launch", "https://nasa.example/mirror"}


def test_render_from_saved_json_result(files: tuple[Path, Path], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    report, records = files
    result = tmp_path / "result.json"
    assert main(["trace", str(report), str(records), "--format", "json", "-o", str(result),
                 "--mode", "deterministic"]) == 0
    data = json.loads(result.read_text(encoding="utf-8"))
    page, ris = tmp_path / "review.html", tmp_path / "refs.ris"
    assert main(["render", str(result), str(records), "--html", str(page), "--refs-out", str(ris),
                 "--refs-format", "ris"]) == 0
    html = page.read_text(encoding="utf-8")
    assert len(re.findall(r'<a class="marker"', html)) == len(data["citations"]) >= 1
    summary = re.search(r'<ul class="summary">(.*?)</ul>', html).group(1)  # type: ignore[union-attr]
    assert f"<b>{len(data['references'])}</b> sources" in summary
    entries = rispy.loads(ris.read_text(encoding="utf-8"))
    assert [e["urls"][0] for e in entries] == [r["url"] for r in data["references"]]
    # without records the page still renders (evidence quotes only)
    assert main(["render", str(result), "--html", str(page)]) == 0
    assert '<mark class="evidence">' in page.read_text(encoding="utf-8")


def test_rendered_json_shows_the_closest_record_of_an_unsupported_sentence(
        files: tuple[Path, Path], tmp_path: Path) -> None:
    _, records = files
    report = tmp_path / "near.md"
    extra = " Its primary mirror has 21 segments.\n\n## References"
    report.write_text(REPORT.replace("\n\n## References", extra), encoding="utf-8")
    result, page = tmp_path / "near.json", tmp_path / "near.html"
    assert main(["trace", str(report), str(records), "--format", "json", "-o", str(result),
                 "--mode", "deterministic"]) == 0
    data = json.loads(result.read_text(encoding="utf-8"))
    (near,) = [u for u in data["unsupported"] if "21 segments" in u["sentence"]]
    assert near["closest"]["record_index"] == 1 and "18 segments" in near["closest"]["evidence"]
    assert near["closest"]["unstated"] == ["21"] and near["closest"]["quote_figures"] == ["18"]
    assert near["closest"]["conflict"] == 'its quote says "18" where the sentence says "21"'
    assert near["reason"].endswith('the closest contradicts it: its quote says "18" where the sentence '
                                   'says "21"')
    assert main(["render", str(result), str(records), "--html", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert html.count('<div class="closest">closest record, not cited:') == 1
    assert "Mirror facts</a>" in html.split('<div class="closest">')[1]
    assert '<span class="unstated">does not state 21; its quote states 18</span>' in html
    # a near miss whose quote contradicts the sentence says so on the page
    near["closest"]["conflict"] = 'its quote says "fewer" where the sentence says "more"'
    result.write_text(json.dumps(data), encoding="utf-8")
    assert main(["render", str(result), str(records), "--html", str(page)]) == 0
    assert ('<span class="unstated">contradicts it: its quote says &quot;fewer&quot; where the sentence '
            "says &quot;more&quot;</span>") in page.read_text(encoding="utf-8")


def test_render_traces_a_markdown_report_in_the_given_style(files: tuple[Path, Path], tmp_path: Path) -> None:
    report, records = files
    page = tmp_path / "review.html"
    assert main(["render", str(report), str(records), "--html", str(page), "--style", "footnote"]) == 0
    assert re.search(r'<a class="marker"[^>]*>\[\^1\]</a>', page.read_text(encoding="utf-8"))


def test_render_errors_name_the_input(files: tuple[Path, Path], tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    report, _ = files
    assert main(["render", str(report), "--html", str(tmp_path / "x.html")]) == 2
    assert "RECORDS are required" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"report": "x", "citations": [{"start": 1}]}', encoding="utf-8")
    assert main(["render", str(bad), "--html", str(tmp_path / "x.html")]) == 2
    assert "malformed trace result" in capsys.readouterr().err
    assert main(["render", str(tmp_path / "missing.json"), "--html", str(tmp_path / "x.html")]) == 2
    assert "missing.json" in capsys.readouterr().err


def test_output_errors_name_the_file_that_failed(files: tuple[Path, Path], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    report, records = files
    missing = tmp_path / "no-such-dir"
    # trace: the --refs-out file cannot be written, so neither stdout nor -o gets the report
    assert main(["trace", str(report), str(records), "--refs-out", str(missing / "refs.json")]) == 2
    out, err = capsys.readouterr()
    assert str(missing / "refs.json") in err and "None" not in err and out == ""
    assert main(["trace", str(report), str(records), "-o", str(tmp_path / "o.md"),
                 "--refs-out", str(missing / "refs.json")]) == 2
    assert not (tmp_path / "o.md").exists()
    capsys.readouterr()
    # ... and an -o that cannot be written leaves no --refs-out file either
    assert main(["trace", str(report), str(records), "-o", str(missing / "o.md"),
                 "--refs-out", str(tmp_path / "refs.json")]) == 2
    assert str(missing / "o.md") in capsys.readouterr().err and not (tmp_path / "refs.json").exists()
    # render: the review page cannot be written
    assert main(["render", str(report), str(records), "--html", str(missing / "x.html")]) == 2
    assert str(missing / "x.html") in capsys.readouterr().err
    # render --refs-out into a missing directory names that file, not the page
    page = tmp_path / "ok.html"
    assert main(["render", str(report), str(records), "--html", str(page),
                 "--refs-out", str(missing / "r.ris"), "--refs-format", "ris"]) == 2
    assert str(missing / "r.ris") in capsys.readouterr().err


def test_render_json_that_is_not_a_trace_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"foo": 1}', encoding="utf-8")
    assert main(["render", str(other), "--html", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert "not a trace result" in err and "markdown report" not in err


def test_a_cited_source_that_does_not_state_a_figure_says_so_in_json_and_on_the_page(tmp_path: Path) -> None:
    from tests.server.test_service import PENDLETON, PENDLETON_RECORDS

    report, records = tmp_path / "r.md", tmp_path / "records.json"
    report.write_text(PENDLETON + "\n", encoding="utf-8")
    records.write_text(json.dumps(PENDLETON_RECORDS), encoding="utf-8")
    result, page = tmp_path / "r.json", tmp_path / "r.html"
    assert main(["trace", str(report), str(records), "--format", "json", "-o", str(result),
                 "--mode", "deterministic"]) == 0
    (cit,) = json.loads(result.read_text(encoding="utf-8"))["citations"]
    assert cit["sources"][0]["unstated"] == ["2001"] and cit["sources"][0]["quote_figures"] == ["2002"]
    assert main(["render", str(result), str(records), "--html", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert '<span class="unstated">does not state 2001 (its quote states 2002)</span>' in html
