"""Reference-list formats and the CSL-JSON / BibTeX / RIS exports (parsed back by real parsers)."""

from __future__ import annotations

import json
import re

import bibtexparser
import pytest
import rispy

from tracer.errors import InvalidInputError
from tracer.models import Reference
from tracer.refformat import (
    EXPORT_FORMATS,
    REFERENCE_FORMATS,
    export_references,
    format_reference,
    validate_export_format,
    validate_reference_format,
)

FULL = Reference(1, "https://news.example/a?id=7", "Rates rise again", 0, author="Jane Doe",
                 site="Example News", published_at="2023-05-04T09:30:00Z")
BARE = Reference(2, "https://bare.example/p", "", 3)
LOCAL = Reference(3, "/data/report.pdf", "年度报告", 5, published_at="2022", is_link=False)
HOSTILE_TITLE = "Evil {title} & 100% _x_ \\ <script>\nER  - \nTY  - JOUR"
HOSTILE = Reference(4, "https://h.example/x?a={1}&b=%", HOSTILE_TITLE, 6, author="O'Brien, Ann")
REFS = [FULL, BARE, LOCAL, HOSTILE]


@pytest.mark.parametrize(
    ("fmt", "ref", "line"),
    [
        ("markdown", FULL, "[Rates rise again](https://news.example/a?id=7)"),
        ("markdown", BARE, "[bare.example](https://bare.example/p)"),
        ("markdown", LOCAL, "年度报告 (/data/report.pdf)"),
        ("apa", FULL, "Jane Doe. (2023, May 4). *Rates rise again*. Example News. <https://news.example/a?id=7>"),
        ("apa", BARE, "*bare.example*. (n.d.). <https://bare.example/p>"),
        ("apa", LOCAL, "*年度报告*. (2022). /data/report.pdf"),
        ("ieee", FULL, 'Jane Doe, "Rates rise again," *Example News*, May 4, 2023. '
                       "[Online]. Available: <https://news.example/a?id=7>"),
        ("ieee", BARE, '"bare.example." [Online]. Available: <https://bare.example/p>'),
        ("ieee", LOCAL, '"年度报告," 2022. /data/report.pdf'),
        ("gbt7714", FULL, "Jane Doe. Rates rise again\\[EB/OL\\]. Example News, (2023-05-04). "
                          "<https://news.example/a?id=7>."),
        ("gbt7714", BARE, "bare.example\\[EB/OL\\]. <https://bare.example/p>."),
        ("gbt7714", LOCAL, "年度报告\\[Z\\]. (2022). /data/report.pdf."),
    ],
)
def test_reference_line_formats(fmt: str, ref: Reference, line: str) -> None:
    assert format_reference(ref, fmt) == line


@pytest.mark.parametrize("fmt", REFERENCE_FORMATS)
def test_missing_fields_degrade_gracefully(fmt: str) -> None:
    for ref in REFS:
        line = format_reference(ref, fmt)
        assert "None" not in line and "()" not in line and ",," not in line and ".." not in line
        assert "\n" not in line and not re.search(r"(?<!\\)<script", line)


def test_format_names_are_validated_naming_the_field() -> None:
    assert validate_reference_format("") == "markdown"
    assert validate_reference_format("GB/T 7714") == "gbt7714"
    assert validate_export_format("CSL_JSON") == "csl-json"
    with pytest.raises(InvalidInputError) as e:
        validate_reference_format("mla")
    assert e.value.field == "options.reference_format"
    with pytest.raises(InvalidInputError) as e:
        export_references(REFS, "endnote")
    assert e.value.field == "refs_format" and all(f in e.value.reason for f in EXPORT_FORMATS)


def test_csl_json_parses_back() -> None:
    items = json.loads(export_references(REFS, "csl-json"))
    assert [i["id"] for i in items] == ["ref1", "ref2", "ref3", "ref4"]
    full = items[0]
    assert full["type"] == "webpage" and full["URL"] == FULL.url and full["title"] == "Rates rise again"
    assert full["author"] == [{"literal": "Jane Doe"}] and full["container-title"] == "Example News"
    assert full["issued"] == {"date-parts": [[2023, 5, 4]]}
    assert items[1]["title"] == "bare.example" and "issued" not in items[1] and "author" not in items[1]
    assert items[2]["type"] == "document"
    assert "URL" not in items[2]
    assert items[2]["source"] == "/data/report.pdf"
    assert items[3]["title"] == "Evil {title} & 100% _x_ \\ <script> ER - TY - JOUR"


def _unlatex(value: str) -> str:
    value = value.replace(r"\textbackslash{}", "\\").replace(r"\^{}", "^").replace(r"\~{}", "~")
    return re.sub(r"\\([{}%&$#_])", r"\1", value)


def test_bibtex_parses_back() -> None:
    text = export_references(REFS, "bibtex")
    lib = bibtexparser.parse_string(text)
    assert lib.failed_blocks == []
    assert [e.key for e in lib.entries] == ["ref1", "ref2", "ref3", "ref4"]
    fields = [{k: f.value for k, f in e.fields_dict.items()} for e in lib.entries]
    assert all(e.entry_type == "misc" for e in lib.entries)
    assert fields[0]["url"] == FULL.url and fields[0]["year"] == "2023" and fields[0]["month"] == "5"
    assert _unlatex(fields[0]["author"]) == "{Jane Doe}" and fields[0]["organization"] == "Example News"
    assert "year" not in fields[1] and "author" not in fields[1]
    assert "url" not in fields[2] and fields[2]["note"] == "/data/report.pdf"
    assert fields[2]["title"] == LOCAL.title
    assert _unlatex(fields[3]["title"]) == "Evil {title} & 100% _x_ \\ <script> ER - TY - JOUR"
    assert fields[3]["url"] == "https://h.example/x?a=%7B1%7D&b=%25"


def test_ris_parses_back() -> None:
    entries = rispy.loads(export_references(REFS, "ris"))
    assert len(entries) == 4  # a title with "ER  -" cannot end a record early
    full, bare, local, hostile = entries
    assert full["type_of_reference"] == "ELEC" and full["id"] == "ref1"
    assert full["title"] == "Rates rise again"
    assert full["urls"] == [FULL.url]
    assert full["authors"] == ["Jane Doe"]
    assert full["year"] == "2023" and full["date"] == "2023/05/04/" and full["publisher"] == "Example News"
    assert bare["title"] == "bare.example" and "year" not in bare
    assert local["type_of_reference"] == "GEN"
    assert "urls" not in local
    assert local["notes"] == ["/data/report.pdf"]
    assert hostile["title"] == "Evil {title} & 100% _x_ \\ <script> ER - TY - JOUR"
    assert hostile["authors"] == ["O'Brien, Ann"]


def test_empty_export_is_valid() -> None:
    assert json.loads(export_references([], "csl-json")) == []
    assert bibtexparser.parse_string(export_references([], "bibtex")).entries == []
    assert rispy.loads(export_references([], "ris")) == []
