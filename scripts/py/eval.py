"""Trace every benchmark case exactly as a user would and print the citation metrics.

    scripts/eval [BENCH.jsonl] [--explain] [--sweep] [--grpc HOST:PORT] [--min-score X] [--baseline]
                 [--strict-figures] [--supporting-records-only]

`--baseline` scores the benchmark's naive reference point instead (scripts/py/baseline.py: the
record with the highest share of a gold sentence's words, at 0.55 or more; it is told which
sentences are gold), so the two can be compared on the same cases.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchdata import (  # noqa: E402
    DEFAULT_BENCH,
    Pair,
    Tally,
    attach,
    groups,
    load_cases,
    norm_url,
    source_of,
    tally,
)

ORDER = ["expertqa", "wice", "citecheck", "lang:en", "lang:zh", "overall"]


def trace_inprocess(case: dict[str, Any], min_score: float | None,
                    strict_figures: bool = False) -> dict[str, Any]:
    from tracer import TraceOptions, trace

    opts = TraceOptions(min_score=min_score, strict_figures=strict_figures)
    res = trace(case["report"], case["records"], opts)
    return {
        "citations": [
            {"start": c.start, "end": c.end, "sentence": c.sentence,
             "sources": [{"url": s.url, "score": s.score, "record_index": s.record_index,
                          "evidence": s.evidence, "match": s.match} for s in c.sources]}
            for c in res.citations
        ],
        "unsupported": [
            {"start": u.start, "end": u.end, "sentence": u.sentence}
            | ({"closest": {"url": u.closest.url, "score": u.closest.score,
                            "unstated": list(u.closest.unstated),
                            "quote_figures": list(u.closest.quote_figures),
                            "conflict": u.closest.conflict}} if u.closest else {})
            for u in res.unsupported
        ],
        "report": res.report,
    }


def make_grpc_tracer(target: str, strict_figures: bool = False) -> Any:
    import grpc
    from google.protobuf.json_format import MessageToDict

    from server.pb.source_tracer.v1 import tracer_pb2, tracer_pb2_grpc

    limits = [("grpc.max_receive_message_length", 64 << 20), ("grpc.max_send_message_length", 64 << 20)]
    channel = grpc.insecure_channel(target, options=limits)
    stub = tracer_pb2_grpc.SourceTracerStub(channel)

    def run(case: dict[str, Any], min_score: float | None) -> dict[str, Any]:
        opts = tracer_pb2.TraceOptions(strict_figures=strict_figures)
        if min_score is not None:
            opts.min_score = min_score
        req = tracer_pb2.TraceRequest(report=case["report"], options=opts, records=[
            tracer_pb2.Record(url=r.get("url", ""), title=r.get("title", ""), content=r.get("content", ""))
            for r in case["records"]
        ])
        resp = stub.Trace(req, timeout=120)
        return MessageToDict(
            resp, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )

    return run


def fmt_row(name: str, t: Tally) -> str:
    return (f"{name:<10} {t.precision:9.3f} {t.recall:7.3f} {t.f1:7.3f} {t.abstain:8.3f} "
            f"{t.emitted:8d} {t.supportable:6d} {t.unsupportable:6d}")


def print_table(tallies: dict[str, Tally]) -> None:
    print(f"{'group':<10} {'precision':>9} {'recall':>7} {'f1':>7} {'abstain':>8} {'pairs':>8} "
          f"{'supp':>6} {'unsupp':>6}")
    for name in ORDER:
        if name in tallies:
            print(fmt_row(name, tallies[name]))


def explain(case: dict[str, Any], pairs: list[Pair], out: dict[str, Any], scores: bool) -> None:
    """False positives, then false negatives with the expected record's own score and evidence
    window (`scores`: in process only) and the record the trace reported as closest."""
    gold = case["gold"]
    got = {(p.gold, p.url.lower().rstrip("/")) for p in pairs}
    for p in pairs:
        if not p.correct:
            g = gold[p.gold]
            print(f"  FP [{case['id']}] score={p.score:.3f} match={p.source.get('match')}\n"
                  f"     sentence: {g['sentence'][:200]}\n     cited:    {p.url}\n"
                  f"     evidence: {p.source.get('evidence', '')[:200]!r}\n"
                  f"     expected: {g.get('supporting_urls', []) + g.get('partially_supporting_urls', [])}")
    for i, g in enumerate(gold):
        ok = g.get("supporting_urls", []) + g.get("partially_supporting_urls", [])
        if not ok or any((i, u.lower().rstrip("/")) in got for u in ok):
            continue
        print(f"  FN [{case['id']}] {g['sentence'][:200]}")
        for url in ok:
            line = f"     expected: {url}"
            at = next((k for k, r in enumerate(case["records"]) if norm_url(r["url"]) == norm_url(url)), None)
            if scores and at is not None:
                from tracer.pipeline import explain_support

                sup = explain_support(g["sentence"], case["records"], at, lang=case["lang"])
                if sup is not None:
                    window = case["records"][at]["content"][sup.evidence_start:sup.evidence_end]
                    line += (f" score={sup.score:.3f} match={sup.match}\n"
                             f"     window:   {window[:200]!r} [{sup.evidence_start}:{sup.evidence_end}]")
            print(line)
        for u in out.get("unsupported", []):
            closest = u.get("closest") or {}
            if int(u.get("start", 0)) < g["end"] and g["start"] < int(u.get("end", 0)) and closest.get("url"):
                print(f"     closest:  {closest['url']} score={float(closest.get('score', 0)):.3f} "
                      "(reported as the sentence's near miss)")
                if closest.get("unstated"):
                    instead = closest.get("quote_figures") or []
                    print(f"     figures:  does not state {', '.join(closest['unstated'])}"
                          + (f"; its quote states {', '.join(instead)}" if instead else ""))
                if closest.get("conflict"):
                    print(f"     conflict: {closest['conflict']}")
                break


def print_evidence(results: list[tuple[dict[str, Any], list[Pair]]]) -> None:
    """How often the evidence quote of a correct citation contains a sentence the annotators
    marked as evidence (WiCE gold carries `evidence_sentences`), and how long quotes are."""
    from rapidfuzz import fuzz

    checked = found = 0
    lengths: list[int] = []
    for case, pairs in results:
        for p in pairs:
            quote = str(p.source.get("evidence", ""))
            if p.correct and quote:
                lengths.append(len(quote))
            marked = case["gold"][p.gold].get("evidence_sentences") or []
            if not p.correct or not marked or not quote:
                continue
            checked += 1
            found += any(fuzz.partial_ratio(m, quote) >= 80 if len(m) <= len(quote)
                         else fuzz.partial_ratio(quote, m) >= 80 for m in marked)
    if checked:
        print(f"\nevidence: {found}/{checked} correct citations with annotated evidence sentences quote one "
              f"of them ({found / checked:.2f}); median quote of a correct citation "
              f"{sorted(lengths)[len(lengths) // 2]} chars")


def print_near_misses(outs: list[tuple[dict[str, Any], dict[str, Any]]],
                      results: list[tuple[dict[str, Any], list[Pair]]]) -> None:
    """For supportable gold sentences left without a correct citation and reported unsupported:
    how often `Unsupported.closest` names a record the annotators marked as supporting. For every
    gold sentence reported unsupported with a closest record: how often it lists figures that
    record does not state (`NearMiss.unstated`), how often its quote states others of their
    sort (`NearMiss.quote_figures`), and how often its quote contradicts it (`NearMiss.conflict`)."""
    named = right = missed = 0
    with_closest = figures = figures_unsupportable = instead = instead_unsupportable = 0
    conflicts = conflicts_unsupportable = 0
    for (case, out), (_, pairs) in zip(outs, results, strict=True):
        recalled = {p.gold for p in pairs if p.correct}
        for i, g in enumerate(case["gold"]):
            hits = [u for u in out.get("unsupported", [])
                    if int(u.get("start", 0)) < g["end"] and g["start"] < int(u.get("end", 0))]
            if not hits:
                continue
            closest = hits[0].get("closest") or {}
            ok = {norm_url(u) for u in g.get("supporting_urls", []) + g.get("partially_supporting_urls", [])}
            if closest.get("url"):
                with_closest += 1
                if closest.get("unstated"):
                    figures += 1
                    figures_unsupportable += not ok
                    if closest.get("quote_figures"):
                        instead += 1
                        instead_unsupportable += not ok
                if closest.get("conflict"):
                    conflicts += 1
                    conflicts_unsupportable += not ok
            if ok and i not in recalled:
                missed += 1
                if closest.get("url"):
                    named += 1
                    right += norm_url(closest["url"]) in ok
    if missed:
        print(f"near misses: of {missed} supportable sentences reported unsupported, {named} name a closest "
              f"record, and it is an annotated supporting record for {right}")
    if with_closest:
        print(f"unstated figures: of {with_closest} gold sentences reported unsupported with a closest "
              f"record, {figures} list figures it does not state ({figures_unsupportable} of them annotated "
              f"unsupportable); for {instead} of those its quote states other figures of their sort "
              f"({instead_unsupportable} annotated unsupportable)")
        print(f"conflicts: of {with_closest} gold sentences reported unsupported with a closest record, "
              f"{conflicts} are contradicted by its quote ({conflicts_unsupportable} of them annotated "
              "unsupportable)")


def print_reliability(pairs: list[Pair]) -> None:
    """Is the score a probability? For each score band, the share of emitted pairs that are right
    (on gold sentences; every pair the trace emitted at min_score 0.05, the sweep's floor)."""
    bands = [(0.05, 0.3), (0.3, 0.4), (0.4, 0.5), (0.5, 0.6), (0.6, 0.7), (0.7, 0.8), (0.8, 0.9),
             (0.9, 1.0), (1.0, 1.01)]
    print(f"\n{'score band':>12} {'pairs':>6} {'mean score':>10} {'right':>6}")
    for lo, hi in bands:
        inside = [p for p in pairs if lo <= p.score < hi]
        if not inside:
            continue
        name = "1.0 (exact)" if lo == 1.0 else f"{lo:.2f}-{hi:.2f}"
        mean = sum(p.score for p in inside) / len(inside)
        right = sum(p.correct for p in inside) / len(inside)
        print(f"{name:>12} {len(inside):6d} {mean:10.3f} {right:6.3f}")


def print_recognition(cases: list[dict[str, Any]]) -> None:
    """Rule-based recognition (tracer.recognize) against each gold sentence's `needs_citation`."""
    from tracer.models import Sentence
    from tracer.recognize import needs_citation

    cells: dict[str, list[int]] = {}  # source -> [yes&yes, yes&no, no&no, no&yes] (gold & predicted)
    for case in cases:
        cell = cells.setdefault(source_of(case), [0, 0, 0, 0])
        for g in case["gold"]:
            said = needs_citation(Sentence(0, g["start"], g["end"], g["sentence"]), case["lang"])
            cell[(0 if said else 1) if g["needs_citation"] else (2 if not said else 3)] += 1
    parts = []
    for src, (yy, yn, nn, ny) in cells.items():
        cell_text = f"{src} recall {yy / max(1, yy + yn):.3f}"
        if nn + ny:
            cell_text += f", specificity {nn / (nn + ny):.3f}, accuracy {(yy + nn) / (yy + yn + nn + ny):.3f}"
        parts.append(cell_text)
    print("recognition vs gold needs_citation: " + "; ".join(parts))


def _supporting_records_only(case: dict[str, Any]) -> dict[str, Any]:
    """The case with only the records its annotations say support one of its sentences."""
    wanted = {norm_url(u) for g in case["gold"]
              for u in (*(g.get("supporting_urls") or ()), *(g.get("partially_supporting_urls") or ()))}
    return {**case, "records": [r for r in case["records"] if norm_url(r.get("url", "")) in wanted]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench", nargs="?", type=Path, default=DEFAULT_BENCH)
    ap.add_argument("--explain", action="store_true", help="list false positives/negatives per case")
    ap.add_argument("--sweep", action="store_true", help="precision/recall over min_score")
    ap.add_argument("--grpc", metavar="HOST:PORT", help="trace through a running service")
    ap.add_argument("--min-score", type=float, default=None)
    ap.add_argument("--only", help="only cases whose id starts with this")
    ap.add_argument("--baseline", action="store_true",
                    help="score the benchmark's naive baseline instead of the tracer")
    ap.add_argument("--strict-figures", action="store_true",
                    help="trace with the strict_figures option (a figure the record states otherwise "
                         "is a contradiction in English too)")
    ap.add_argument("--supporting-records-only", action="store_true",
                    help="a robustness check, not the benchmark: trace each case with only the records "
                         "annotated as supporting one of its sentences (as a caller that sends few records)")
    args = ap.parse_args()

    cases = load_cases(args.bench)
    if args.only:
        cases = [c for c in cases if c["id"].startswith(args.only)]
    if args.supporting_records_only:
        cases = [_supporting_records_only(c) for c in cases]
    if args.baseline and (args.grpc or args.min_score is not None):
        ap.error("--baseline has its own fixed threshold and runs in process")
    if args.grpc:
        run = make_grpc_tracer(args.grpc, args.strict_figures)
    else:
        run = lambda case, min_score: trace_inprocess(case, min_score, args.strict_figures)  # noqa: E731
    if args.baseline:
        from baseline import naive_trace

        run = lambda case, _min_score: naive_trace(case)  # noqa: E731
    base = 0.05 if args.sweep else args.min_score
    t0 = time.perf_counter()
    outs = [(case, run(case, base)) for case in cases]
    results = [(case, attach(case, out["citations"])) for case, out in outs]
    elapsed = time.perf_counter() - t0

    tallies: dict[str, Tally] = {}
    for (case, pairs), (_, out) in zip(results, outs, strict=True):
        t = tally(case, pairs)
        for g in groups(case):
            tallies.setdefault(g, Tally()).add(t)
        if args.explain:
            explain(case, pairs, out, scores=not (args.grpc or args.baseline))
    if args.baseline:
        print("naive baseline (told which sentences are gold), not the tracer:")
        print_table(tallies)
    elif not args.sweep:
        print_table(tallies)
        print_evidence(results)
        print_near_misses(outs, results)
        print_recognition(cases)
    else:
        print(f"{'min_score':>9} {'precision':>9} {'recall':>7} {'f1':>7} {'abstain':>8} {'pairs':>6}")
        for i in range(2, 20):
            th = i / 20
            tot = Tally()
            for case, pairs in results:
                tot.add(tally(case, pairs, th))
            print(f"{th:9.2f} {tot.precision:9.3f} {tot.recall:7.3f} {tot.f1:7.3f} {tot.abstain:8.3f} "
                  f"{tot.emitted:6d}")
        print_reliability([p for _, pairs in results for p in pairs])
    print(f"\n{len(cases)} cases in {elapsed:.1f}s ({len(cases) / elapsed:.1f} cases/s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
