"""CLI glue for the review page and reference exports (logic lives in tracer.review / tracer.refformat).

- `source-tracer trace ... --format html` prints the review page instead of markdown;
- `source-tracer trace ... --refs-out FILE --refs-format csl-json|bibtex|ris` also writes the
  cited sources in that format;
- `source-tracer render INPUT [RECORDS] --html OUT.html` writes the review page for either a
  saved result (`trace --format json` output) or a markdown report (traced first; RECORDS required).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from typing import Any

from tracer.errors import InvalidInputError
from tracer.models import (
    Citation,
    CitedSource,
    NearMiss,
    Record,
    Reference,
    Stats,
    TraceResult,
    Unsupported,
)
from tracer.refformat import EXPORT_FORMATS, export_references, validate_export_format
from tracer.review import render_review_html

# ---- trace extension ---------------------------------------------------------------------------

def add_trace_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--refs-out", metavar="FILE", help="also write the cited sources to FILE")
    parser.add_argument("--refs-format", choices=list(EXPORT_FORMATS), default="csl-json",
                        help="format of --refs-out (default csl-json)")


def _records_for(args: argparse.Namespace) -> list[Record] | None:
    """The normalised records of this run, for passage context (None when they came on stdin)."""
    from server.cli import parse_records, read_text
    from tracer.records import normalize_records

    path = getattr(args, "records", None)
    if not path or path == "-":
        return None
    recs, _ = normalize_records(parse_records(read_text(path, "records"), repr(path)))
    return recs


def _html(result: TraceResult, args: argparse.Namespace) -> str:
    return render_review_html(result, _records_for(args))


FORMATS = {"html": _html}


def _with_record_details(result: TraceResult, records: list[Record] | None) -> TraceResult:
    """References enriched with author/site/date from the records (the wire Reference lacks them)."""
    if not records:
        return result
    by_index = {r.index: r for r in records}
    refs = tuple(
        replace(ref, author=ref.author or by_index[ref.record_index].author,
                site=ref.site or by_index[ref.record_index].site,
                published_at=ref.published_at or by_index[ref.record_index].published_at)
        if ref.record_index in by_index else ref
        for ref in result.references
    )
    return replace(result, references=refs)


def after_trace(result: TraceResult, args: argparse.Namespace) -> None:
    out = getattr(args, "refs_out", None)
    if not out:
        return
    text = export_references(result.references, validate_export_format(args.refs_format))
    try:
        with open(out, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    except OSError as exc:  # a full disk fails the write or close with no file name: name it
        if exc.filename is None:
            exc.filename = out
        raise


# ---- render subcommand -------------------------------------------------------------------------

def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "render", help="write the HTML review page of a trace (saved JSON result, or report + records)"
    )
    p.add_argument("input", metavar="INPUT", help="`trace --format json` output, or a markdown report")
    p.add_argument("records", metavar="RECORDS", nargs="?",
                   help="the records (required for a markdown report; adds passage context otherwise)")
    p.add_argument("--html", metavar="OUT.html", required=True, help="where to write the review page")
    p.add_argument("--style", default="numeric", help="marker style when INPUT is a markdown report")
    p.add_argument("--refs-out", metavar="FILE", help="also write the cited sources to FILE")
    p.add_argument("--refs-format", choices=list(EXPORT_FORMATS), default="csl-json")
    p.set_defaults(func=run_render)


def _near_miss(n: dict[str, Any]) -> NearMiss:
    return NearMiss(int(n.get("record_index", 0)), str(n.get("url", "")), str(n.get("title", "")),
                    float(n.get("score", 0.0)), str(n.get("evidence", "")), int(n.get("evidence_start", 0)),
                    int(n.get("evidence_end", 0)), tuple(str(v) for v in n.get("unstated", []) or []),
                    tuple(str(v) for v in n.get("quote_figures", []) or []), str(n.get("conflict", "")))


def result_from_json(data: Any, label: str) -> TraceResult:
    """A TraceResult from the protobuf JSON mapping printed by `trace --format json`."""
    from tracer.records import is_link

    if not isinstance(data, dict) or not isinstance(data.get("report"), str):
        raise InvalidInputError(label, "not a trace result (no string field 'report')")
    try:
        citations = tuple(
            Citation(c["sentence"], int(c["start"]), int(c["end"]), tuple(
                CitedSource(int(s["number"]), s["url"], s["title"], int(s["record_index"]),
                            float(s["score"]), s["match"], s["evidence"], int(s["evidence_start"]),
                            int(s["evidence_end"]), tuple(s.get("unstated", ())),
                            tuple(s.get("quote_figures", ())))
                for s in c.get("sources", [])
            ))
            for c in data.get("citations", [])
        )
        references = tuple(
            Reference(int(r["number"]), r["url"], r["title"], int(r["record_index"]),
                      is_link=is_link(r["url"]))
            for r in data.get("references", [])
        )
        unsupported = tuple(
            Unsupported(u["sentence"], int(u["start"]), int(u["end"]), u.get("reason", ""),
                        _near_miss(u["closest"]) if u.get("closest") else None)
            for u in data.get("unsupported", [])
        )
        st = data.get("stats", {}) or {}
        stats = Stats(
            sentences=int(st.get("sentences", 0)), needs_citation=int(st.get("needs_citation", 0)),
            cited_sentences=int(st.get("cited_sentences", 0)), unsupported=int(st.get("unsupported", 0)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInputError(label, f"malformed trace result: {exc!r}") from None
    return TraceResult(
        report=data["report"], citations=citations, references=references, unsupported=unsupported,
        removed_references=str(data.get("removed_references", "")), stats=stats,
        warnings=tuple(str(w) for w in data.get("warnings", [])), degraded=bool(data.get("degraded", False)),
        mode=str(data.get("mode", "deterministic")),
    )


def run_render(args: argparse.Namespace) -> int:
    from server.cli import EXIT_INPUT, EXIT_OK, InputError, _fail, parse_records, read_text
    from tracer.options import TraceOptions
    from tracer.pipeline import trace
    from tracer.records import normalize_records

    try:
        text = read_text(args.input, "input")
        records: list[Record] | None = None
        raw_records: Any = None
        if args.records:
            label = "stdin" if args.records == "-" else repr(args.records)
            raw_records = parse_records(read_text(args.records, "records"), label)
            records, _ = normalize_records(raw_records)
        data: Any = None
        if text.lstrip().startswith("{"):
            try:
                data = json.loads(text)
            except ValueError:
                data = None
        if isinstance(data, dict) and "report" in data:
            result = result_from_json(data, f"input {args.input!r}")
        elif isinstance(data, dict):
            raise InputError(f"input {args.input!r}: a JSON object without 'report' is not a trace result "
                             "(`source-tracer trace --format json` output)")
        else:
            if raw_records is None:
                raise InputError(
                    f"input {args.input!r} is a markdown report: RECORDS are required to trace it"
                )
            result = trace(text, raw_records, TraceOptions(style=args.style).validated())
            for warning in result.warnings:
                print(f"warning: {warning}", file=sys.stderr)
        result = _with_record_details(result, records)
        page = render_review_html(result, records)
    except InputError as exc:
        return _fail(str(exc), EXIT_INPUT)
    except InvalidInputError as exc:
        return _fail(str(exc), EXIT_INPUT)
    try:
        try:
            with open(args.html, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(page)
        except OSError as exc:
            if exc.filename is None:
                exc.filename = args.html
            raise
        if args.refs_out:
            after_trace(result, args)
    except OSError as exc:
        target = exc.filename if exc.filename is not None else args.html
        return _fail(f"output {str(target)!r}: cannot write: {exc.strerror or exc}", EXIT_INPUT)
    return EXIT_OK
