"""The trace pipeline: records -> markdown -> segment -> existing -> recognize -> retrieve
-> match -> verify -> render. Each stage is a plain function over `tracer.models`."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import Any, Protocol

import tracer.existing as existing_stage
from tracer import markdown, recognize, records, render, segment
from tracer.conflict import quote_conflict
from tracer.errors import CancelledError, InvalidInputError
from tracer.match import (
    closest_candidate,
    match_deterministic,
    near_miss,
    record_support,
    verify_kept,
    verify_named,
    verify_proposals,
)
from tracer.models import (
    CancelToken,
    Candidate,
    Citation,
    ExistingMarker,
    NearMiss,
    Passage,
    Record,
    Sentence,
    Stats,
    Support,
    TraceResult,
    Unsupported,
)
from tracer.options import ExistingPolicy, Mode, TraceOptions, options_from
from tracer.retrieve import PassageIndex
from tracer.text import clear_language, detect_language, language_caveat
from tracer.verify import Verifier, sentence_query, sentences_around


class LLMBackend(Protocol):
    """What the pipeline needs from an LLM (implemented in tracer.llm; optional)."""

    @property
    def min_score(self) -> float | None:
        """Support score a pair the model proposed needs to be cited (None: the request's
        threshold; never more than it)."""
        ...

    @property
    def keep_score(self) -> float | None:
        """A sentence the model left uncited keeps its deterministic citations from this score
        (never below the request's threshold); None: the model's answer is final."""
        ...

    def recognize(
        self, sentences: list[Sentence], lang: str, stats: Stats, cancel: CancelToken | None,
        *, deadline: float | None = None,
    ) -> tuple[set[int] | None, list[str]]:
        """Ids of sentences needing a citation, or None when the model failed; plus warnings.
        `deadline` (a `time.monotonic()` value): no model call may run past it."""
        ...

    def match(
        self,
        sentences: list[Sentence],
        candidates: Mapping[int, list[int]],
        passages: list[Passage],
        options: TraceOptions,
        stats: Stats,
        cancel: CancelToken | None,
        *,
        deadline: float | None = None,
    ) -> tuple[dict[int, list[int]], set[int], list[str]]:
        """Proposed passage ids per sentence id, the sentence ids whose chunk failed
        (they fall back to the deterministic matcher), and warnings naming causes.
        `deadline` (a `time.monotonic()` value): no model call may run past it."""
        ...


class _Timer:
    def __init__(self, stats: Stats, cancel: CancelToken | None) -> None:
        self.stats = stats
        self.cancel = cancel

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        if self.cancel is not None and self.cancel.is_set():
            raise CancelledError(f"cancelled before stage {name}")
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.stats.stage_ms[name] = self.stats.stage_ms.get(name, 0.0) + (time.perf_counter() - t0) * 1000


# Where `trace` leaves its working data instead of freeing it as it returns (`held_working_data`).
_HELD: ContextVar[list[object] | None] = ContextVar("tracer_held_working_data", default=None)


@contextmanager
def held_working_data() -> Iterator[list[object]]:
    """Within it, `trace` (in this thread or task) hands its working data — passages, their index,
    the verifier's caches, candidates — to the list this yields rather than freeing it as it returns.
    Freeing it takes about 0.6 ms after a dev case's 35 ms trace; a service that sends its answer
    first and then clears the list (or drops it) keeps that out of its callers' latency."""
    held: list[object] = []
    token = _HELD.set(held)
    try:
        yield held
    finally:
        _HELD.reset(token)


# a line ending in "\r" alone (classic Mac OS)
_LONE_CR = re.compile("\r(?!\n)")


def trace(
    report: str,
    raw_records: Iterable[Mapping[str, Any] | Record] | Mapping[str, Any],
    options: TraceOptions | Mapping[str, Any] | None = None,
    *,
    llm: LLMBackend | None = None,
    cancel: CancelToken | None = None,
    llm_deadline: float | None = None,
) -> TraceResult:
    """Re-cite `report` against `raw_records`. Never edits the body; never cites unverified.

    `llm_deadline` (a `time.monotonic()` value) bounds the model's stages: a model call still
    unanswered then is abandoned, and its sentences take the deterministic path (with a warning),
    so a caller's deadline gets an answer rather than an error."""
    t_start = time.perf_counter()
    options = options_from(options).validated()
    if not isinstance(report, str):
        raise InvalidInputError("report", "must be a string")
    if (half := records.lone_surrogate(report)) is not None:
        # no UTF-8 encoder writes it, so the traced report could not be written back as it came
        raise InvalidInputError("report", half)
    stats = Stats()
    timer = _Timer(stats, cancel)
    warnings: list[str] = []
    degraded = False
    if (cr := _LONE_CR.search(report)) is not None:
        warnings.append(f"report: a carriage return with no line feed after it (offset {cr.start()}) "
                        "is not read as a line break; lines ending in a lone \\r are read as one line "
                        "(convert them to \\n or \\r\\n)")

    use_llm = llm is not None and options.mode in (Mode.AUTO, Mode.LLM)
    if options.mode is Mode.LLM and llm is None:
        warnings.append("mode=llm requested but no LLM is configured; used the deterministic path")
        degraded = True
    mode_used = "llm" if use_llm else "deterministic"

    with timer.stage("records"):
        recs, rec_warnings = records.normalize_records(raw_records)
        warnings.extend(rec_warnings)
        passages = records.split_passages(
            recs, options.tuning.passage_chars, options.tuning.passage_overlap
        )
        stats.records = len(recs)
        stats.records_dropped = sum(1 for w in rec_warnings if w.startswith("record "))
        stats.passages = len(passages)

    with timer.stage("markdown"):
        layout = markdown.scan_markdown(report, titles=[r.title for r in recs])
        # a references section before more of the report is traced from the report's end, and
        # every offset the trace reports mapped back (the text around the section is the same)
        moved = markdown.misplaced_references(report, layout) or markdown.section_references(report, layout)
        original, mapped_from = report, len(warnings)
        if moved is not None:
            report, layout = moved.text, moved.layout
        removed = report[layout.references[0]:layout.references[1]] if layout.references else ""

    head = report[: min(layout.body_end, 20_000)]  # as much of the body as either looks at
    # the language of the words, not of markers, link targets and URLs (an output's own
    # openJiuwen markers carry English titles and URLs into a Chinese report)
    lang = options.language or detect_language(sentence_query(head))
    if options.language and (clear := clear_language(head)) is not None and clear != options.language:
        names = {"en": "English", "zh": "Chinese"}
        warnings.append(
            f"options.language is {options.language!r} but the report reads as {names[clear]} ({clear!r}): "
            f"it is segmented and matched as {names[options.language]}, so expect fewer citations; "
            "leave language unset to detect it"
        )
    caveat = language_caveat(head, lang)
    if caveat is not None:
        warnings.append(
            f"the report looks like {caveat}, not English or Chinese: the engine is tuned for those "
            "two, so expect fewer citations (each one it makes is verified as usual)"
        )

    if (other := _records_in_another_language(head, recs)) is not None:
        warnings.append(other)

    with timer.stage("segment"):
        sentences = segment.segment_sentences(report, layout)
        stats.sentences = len(sentences)

    with timer.stage("existing"):
        old_markers = existing_stage.find_existing_markers(report, layout, sentences)
        if moved is not None and moved.scopes:   # one list per section: each resolves its own
            old_markers, resolved = existing_stage.resolve_in_scopes(old_markers, report, moved.scopes, recs)
        else:
            resolved = existing_stage.resolve_existing(old_markers, removed, recs)
        stats.existing_citations = sum(1 for m in old_markers if not m.opener)
        # "[2]" with "[2]: url" in the body is the author's link; when that url is none of the
        # records it is left as it is (removing it would lose the link), whatever the policy.
        # So is an inline link citation ("([Reuters](https://…))") when one of its urls is none of them.
        links = [m for m in old_markers if m.linked and any(resolved.get(n) is None for n in m.numbers)]
        for m in links:
            unresolved = [u for n, u in zip(m.numbers, m.urls, strict=False) if resolved.get(n) is None]
            where = "an inline link" if m.inline_link else "defined in the report"
            warnings.append(
                f"existing citation {report[m.start:m.end]!r} at offset {m.start} links to "
                f"{', '.join(unresolved) or 'an empty url'} ({where}), which is none of the records; "
                "left in place"
            )
        if links:
            old_markers = [m for m in old_markers if m not in links]
        # numbers the removed list numbers, in forms not read as markers ("35.5%²", "… in 2021 (1).")
        for found, what, why in (
                (existing_stage.superscript_notes(report, layout.body_end, removed),
                 "superscript number(s)", "the removed references list numbers them"),
                (existing_stage.paren_notes(report, layout.body_end, removed),
                 "number(s) in parentheses", "the removed references list numbers its entries so"),
                (existing_stage.html_notes(report, layout, removed),
                 "marker(s) inside HTML blocks", "HTML is not traced, and the removed references list "
                 "numbers them")):
            if found:
                warnings.append(f"{what} {', '.join(found)} look like the author's old citations ({why}); "
                                "they stay as written and do not follow the new numbering")
        if found := existing_stage.author_year_notes(report, layout.body_end, removed):
            warnings.append(
                f"author-year citation(s) {', '.join(found)} look like the author's old citations (the "
                "removed references list has entries by those authors and years); they stay as written and "
                "are not checked, and their entries are only in removed_references")

    with timer.stage("recognize"):
        needs: set[int] | None = None
        if use_llm and llm is not None:
            needs, llm_warn = llm.recognize(sentences, lang, stats, cancel,
                                            deadline=_model_deadline(cancel, llm_deadline))
            warnings.extend(llm_warn)
            if needs is None:
                degraded = True
        if needs is None:
            needs = recognize.recognize_sentences(sentences, lang)
        # a topic's label ("1. **动力电池**" over its points) states nothing: never cited
        labels = {s.id for s in sentences if recognize.is_label(s, report)}
        # nor is a question ("Why did BYD overtake Tesla?"): it states nothing a record could support
        labels |= {s.id for s in sentences if recognize.is_question(s) or recognize.is_furniture(s, report)}
        needs -= labels
        stats.needs_citation = len(needs)

    with timer.stage("retrieve"):
        index = PassageIndex(passages, recs, lang, options.tuning.idf_floor)
        k = options.tuning.retrieve_top_k
        candidates = {}
        for s in sentences:
            if cancel is not None and cancel.is_set():
                raise CancelledError("cancelled during retrieval")
            candidates[s.id] = [] if s.id in labels else index.search(sentence_query(s.query), k)
        verifier = Verifier(index, recs, options.verify_tuning)
        verifier.set_rows(sentences)

    kept_existing = {  # sentences whose author citations stay (existing=keep)
        m.sentence for m in old_markers
        if m.sentence is not None and any(resolved.get(n) is not None for n in m.numbers)
    } if options.existing is ExistingPolicy.KEEP else set()
    chosen: dict[int, list[Candidate]] = {}
    closest: dict[int, Candidate] = {}  # best candidate of each sentence left without a source
    near: dict[int, NearMiss | None] = {}
    with timer.stage("match"):
        fallback_ids = {s.id for s in sentences}
        if use_llm and llm is not None and recs:
            # The model only sees sentences recognition flagged: that is what recognition is for.
            flagged = [s for s in sentences if s.id in needs]
            proposals, failed, llm_warn = llm.match(
                flagged, {s.id: [p for p, _ in candidates[s.id]] for s in flagged},
                passages, options, stats, cancel, deadline=_model_deadline(cancel, llm_deadline),
            )
            warnings.extend(llm_warn)
            if failed:
                degraded = True
            # The bar for a proposed pair, and for a sentence's sources after its best: a model
            # trusted to read (llm.min_score) is trusted for both; otherwise a request that lowers
            # its min_score lets in weaker best sources only, as on the deterministic path.
            if options.llm_min_score is not None:  # the caller's gate for this request
                floor = extra = options.llm_min_score
                if floor < options.tuning.min_score:
                    warnings.append(
                        f"options.llm_min_score {floor:.2f} is below the verifier's calibrated threshold "
                        f"({options.tuning.min_score:.2f}): a pair the model proposed is cited at a score "
                        f"that low, so such citations trust the model's reading, not the verifier's")
            elif llm.min_score is not None:
                floor = min(llm.min_score, options.threshold)
                extra = min(llm.min_score, options.tuning.min_score)
            else:
                floor, extra = options.threshold, options.tuning.min_score
            chosen, rejected = verify_proposals(
                sentences, proposals, candidates, index, replace(options, min_score=floor), verifier, extra
            )
            stats.llm_pairs_rejected += rejected
            # Unflagged sentences still get the (verified, cheap) deterministic matcher, so a
            # supported sentence is cited whichever mode runs.
            fallback_ids = set(failed) | {s.id for s in sentences if s.id not in needs}
            keep_score = llm.keep_score if options.llm_keep_score is None else options.llm_keep_score
            if keep_score is not None and keep_score <= 1.0:
                # A record that states a sentence (nearly) word for word is not lost to a model
                # that missed it: a veto there is more often the model's error than a right call.
                silent = [s for s in flagged if s.id not in failed and not chosen.get(s.id)]
                keep = replace(options, min_score=max(keep_score, options.threshold))
                kept = match_deterministic(silent, candidates, index, keep, verifier, cancel, closest)
                stats.llm_sentences_kept += len(kept)
                chosen.update(kept)
        if fallback_ids and recs:
            chosen.update(match_deterministic(
                [s for s in sentences if s.id in fallback_ids], candidates, index, options, verifier,
                cancel, closest,
            ))
        if options.existing is ExistingPolicy.REPLACE and recs:
            _verify_narrative(old_markers, resolved, sentences, chosen, candidates, index, verifier, options)
        if any(m.inline_link for m in old_markers):
            stay = _unverified_links(old_markers, resolved, sentences, chosen, candidates, index, verifier,
                                     options)
            for m in stay:
                if m.sentence is not None:   # (in a heading or a table cell: no sentence, no claim)
                    warnings.append(
                        f"existing citation {report[m.start:m.end]!r} at offset {m.start} links to a record "
                        "that does not support its sentence; left in place as the author wrote it")
            if stay:
                old_markers = [m for m in old_markers if m not in stay]
                if options.existing is ExistingPolicy.KEEP:
                    kept_existing = {m.sentence for m in old_markers if m.sentence is not None
                                     and any(resolved.get(n) is not None for n in m.numbers)}
        # Sentences that need a source and got none (nor kept the author's): reported unsupported,
        # each with the record that came closest.
        left = [s for s in sentences if s.id in needs and not chosen.get(s.id) and s.id not in kept_existing]
        for s in left if recs else ():
            cand = closest.get(s.id) or closest_candidate(s, candidates.get(s.id, ()), index, verifier)
            near[s.id] = near_miss(s, cand, index, verifier, options.tuning.near_miss_floor)

    with timer.stage("render"):
        by_id = {s.id: s for s in sentences}
        # "See [2] for details.": asked once of each sentence that names a source
        named = {m.sentence for m in old_markers if m.narrative and m.sentence in by_id}
        pointers = {sid for sid in named if existing_stage.is_pointer(by_id[sid])}
        out = render.render_report(
            report, layout, sentences, chosen, old_markers, resolved, recs, options, lang,
            pointers=pointers,
        )
        citations = _verify_kept_citations(out.citations, sentences, candidates, index, verifier, options)
        position = {r.index: i for i, r in enumerate(recs)}
        by_span = {(s.start, s.end): s for s in sentences}
        for c in citations:
            row = by_span.get((c.start, c.end))
            kept_here = any(s.match == "existing" for s in c.sources)
            if row is not None and kept_here and existing_stage.is_pointer(row):
                continue  # "See [1] for details.": no claim for its source to support
            claim = row.query if row is not None else c.sentence
            for src in c.sources:
                rec = position.get(src.record_index)
                if src.match != "existing":
                    continue
                # a row is held to every figure and to what it is about, as when it is traced
                in_table = row is not None and row.in_table
                subject = row.subject if row is not None else ""
                unnamed = bool(subject) and rec is not None and not verifier.names_subject(subject, rec)
                if src.score >= options.threshold and not (in_table and (src.unstated or unnamed)):
                    continue
                around = "" if rec is None else sentences_around(
                    index.records[rec].content, src.evidence_start, src.evidence_end)
                lacks = _why_unsupported(claim, src.evidence, rec, verifier, index.lang, around)
                if unnamed:
                    lacks += f"; it does not name {sentence_query(subject).strip()[:80]!r}"
                warnings.append(f"existing citation [{src.number}] on the sentence at {c.start}..{c.end} "
                                f"is not supported by its record (score {src.score:.2f}{lacks}); kept as the "
                                "author wrote it")

    unsupported = tuple(Unsupported(s.text, s.start, s.end, _unsupported_reason(
        bool(recs), miss, s.in_table and miss is not None and miss.score >= options.threshold), miss)
        for s in left for miss in (near.get(s.id),))
    warnings.extend(out.warnings)
    if moved is not None:
        citations, unsupported, warnings = _moved_back(moved, citations, unsupported, warnings, mapped_from)
        if out.report == report:
            out = replace(out, report=original)
        report = original
    if not out.references and out.report == report:
        removed = ""  # nothing cited: the report comes back byte-identical, its section included
    stats.unsupported = len(unsupported)
    stats.cited_sentences = len(citations)
    stats.citations = sum(len(c.sources) for c in citations)
    if (held := _HELD.get()) is not None:
        held.extend((index, verifier, candidates, passages, recs, sentences, layout, old_markers, chosen,
                     closest, near, out))
    stats.total_ms = (time.perf_counter() - t_start) * 1000
    return TraceResult(
        report=out.report,
        citations=citations,
        references=out.references,
        unsupported=unsupported,
        removed_references=removed,
        stats=stats,
        warnings=_capped(warnings),
        degraded=degraded,
        mode=mode_used,
    )


# Warnings one per item (an old marker, a dropped record) are listed up to this many in all; the
# rest are counted in one more line. 333,333 "[1]"s in a report gave as many warnings, 24 MB.
MAX_ITEM_WARNINGS = 1000
_ITEM_WARNING = re.compile(r"existing citation |record \d+ dropped")


def _capped(warnings: list[str]) -> tuple[str, ...]:
    """The warnings, those one per item up to MAX_ITEM_WARNINGS (the first, in order), every other."""
    items = sum(1 for w in warnings if _ITEM_WARNING.match(w))
    if items <= MAX_ITEM_WARNINGS:
        return tuple(warnings)
    out, seen = [], 0
    for w in warnings:
        if _ITEM_WARNING.match(w):
            seen += 1
            if seen > MAX_ITEM_WARNINGS:
                continue
        out.append(w)
    out.append(f"{items - MAX_ITEM_WARNINGS} more warnings about old citations or dropped records are not "
               f"listed (the first {MAX_ITEM_WARNINGS} are)")
    return tuple(out)


# where a warning names an offset of the report (its first such phrase: quoted text comes after)
_OFFSET = re.compile(r"(?<=at offset )\d+|(?<=on the sentence at )(\d+)\.\.(\d+)")


def _moved_back(
    moved: markdown.Moved, citations: tuple[Citation, ...], unsupported: tuple[Unsupported, ...],
    warnings: list[str], since: int,
) -> tuple[tuple[Citation, ...], tuple[Unsupported, ...], list[str]]:
    """Spans and the offsets warnings name, from the rearranged report back to the report's own."""
    back = moved.original

    def offsets(m: re.Match[str]) -> str:
        if m.group(1) is None:
            return str(back(int(m.group(0))))
        return f"{back(int(m.group(1)))}..{back(int(m.group(2)), end=True)}"

    return (
        tuple(replace(c, start=back(c.start), end=back(c.end, end=True)) for c in citations),
        tuple(replace(u, start=back(u.start), end=back(u.end, end=True)) for u in unsupported),
        [*warnings[:since], *(_OFFSET.sub(offsets, w, count=1) for w in warnings[since:])],
    )


_LANGUAGE_NAMES = {"en": "English", "zh": "Chinese"}
_LANGUAGE_SAMPLE = 200   # records read for their language, spread over the request
_LANGUAGE_CHARS = 600    # of each record's text


def _records_in_another_language(head: str, recs: Sequence[Record]) -> str | None:
    """A warning when the report reads clearly as English or Chinese and at least a third of the
    records (those clearly one or the other, up to `_LANGUAGE_SAMPLE` of them spread over the
    request) read as the other: both engines cite a sentence only from a record that shares its
    words, names or figures, so a Chinese report over English pages gets few citations."""
    lang = clear_language(head) if recs else None
    if lang is None:
        return None
    step = -(-len(recs) // _LANGUAGE_SAMPLE)
    read = [clear_language(f"{r.title}\n{r.content[:_LANGUAGE_CHARS]}") for r in recs[::step]]
    clear = [x for x in read if x is not None]
    other = sum(x != lang for x in clear)
    if not other or 3 * other < len(clear):
        return None
    sample = f" (of a sample of {len(read)} of the {len(recs)})" if step > 1 else ""
    return (f"the report reads as {_LANGUAGE_NAMES[lang]} but {other} of {len(clear)} records{sample} "
            f"read as {_LANGUAGE_NAMES['zh' if lang == 'en' else 'en']}: "
            "a sentence is cited only from a record that shares its words, names or figures, so "
            "expect few citations from those (translate the records or the report to cite across "
            "languages)")


def _why_unsupported(sentence: str, quote: str, record: int | None, verifier: Verifier, lang: str,
                     around: str = "") -> str:
    """What an author's kept citation gets wrong, for its warning: where its quote contradicts the
    sentence, and the figures its record does not state (with its quote's figures of their
    sort), but for those the contradiction already names."""
    if record is None:
        conflict = quote_conflict(sentence_query(sentence), quote, lang)
        return f"; contradicted: {conflict.describe()}" if conflict else ""
    conflict = verifier.quote_conflict_in(sentence, record, quote, around)
    said = conflict.describe() if conflict else ""
    lacks = f"; contradicted: {said}" if said else ""
    if unstated := _unnamed(verifier.unstated_numbers_in(sentence, record), said):
        lacks += f"; it does not state {', '.join(unstated)}"
        if instead := _unnamed(verifier.figures_instead_in(sentence, record, quote), said):
            lacks += f", its quote states {', '.join(instead)}"
    return lacks


def _unnamed(figures: Sequence[str], conflict: str) -> list[str]:
    """The figures that the conflict's description does not name."""
    return [v for v in figures if not re.search(rf"(?<![\w.]){re.escape(v)}(?![\w.])", conflict)]


def _unsupported_reason(have_records: bool, closest: NearMiss | None, row_unstated: bool = False) -> str:
    """Why nothing is cited. `row_unstated`: the sentence is a table row whose closest record
    scores over the threshold but does not state the row's figures where it speaks of the row's
    subject, or not plainly (`match._row_figures_stated`)."""
    if not have_records:
        return "no records"
    parts = []
    if closest is not None and closest.conflict:
        parts.append(f"contradicts it: {closest.conflict}")
    # the figures it does not state and what its quote states instead, but for those the conflict
    # already names ("1937" for "1936")
    if closest is not None:
        said = closest.conflict
        lacks, instead = _unnamed(closest.unstated, said), _unnamed(closest.quote_figures, said)
        if lacks:
            states = f" (its quote states {', '.join(instead)})" if instead else ""
            parts.append(f"does not state {', '.join(lacks)}{states}")
    if not parts and row_unstated and closest is not None:
        parts.append(f"(score {closest.score:.2f}) does not state the row's figures where it speaks of "
                     "what the row is about, or states them only hedged")
    if parts:
        return "no record supports this sentence; the closest " + "; ".join(parts)
    return "no record supports this sentence"


def explain_support(
    sentence: str, raw_records: Iterable[Any] | Mapping[str, Any], record_index: int,
    options: TraceOptions | Mapping[str, Any] | None = None, lang: str | None = None,
) -> Support | None:
    """The verifier's support of `sentence` by one record (its `Record.index`), scored as a trace
    of the same records scores it: best passage, evidence span into the record's content. None
    when that record was dropped. For error analysis (`scripts/eval --explain`)."""
    options = options_from(options).validated()
    recs, _warnings = records.normalize_records(raw_records)
    position = next((i for i, r in enumerate(recs) if r.index == record_index), None)
    if position is None:
        return None
    passages = records.split_passages(recs, options.tuning.passage_chars, options.tuning.passage_overlap)
    index = PassageIndex(passages, recs, lang or options.language or detect_language(sentence),
                         options.tuning.idf_floor)
    candidates = index.search(sentence_query(sentence), options.tuning.retrieve_top_k)
    verifier = Verifier(index, recs, options.verify_tuning)
    return record_support(Sentence(0, 0, len(sentence), sentence), position, candidates, index, verifier)


def _model_deadline(cancel: CancelToken | None, llm_deadline: float | None) -> float | None:
    """When model calls must end: `llm_deadline`, or the cancel token's own `llm_deadline` if
    sooner (a server that drains moves it up while the trace runs)."""
    moved = getattr(cancel, "llm_deadline", None)
    if not isinstance(moved, (int, float)):
        return llm_deadline
    return moved if llm_deadline is None else min(moved, llm_deadline)


def _verify_narrative(
    old_markers: Sequence[ExistingMarker],
    resolved: Mapping[int, int | None],
    sentences: Sequence[Sentence],
    chosen: dict[int, list[Candidate]],
    candidates: Mapping[int, list[tuple[int, float]]],
    index: PassageIndex,
    verifier: Verifier,
    options: TraceOptions,
) -> None:
    """Under existing=replace, a marker that is a word of its sentence ("如[2]所述", "as shown in
    [2], …") stays, renumbered, only for a source that verifies: each record it names is checked
    as any proposal is (the sentence's best source needs `options.threshold`, the ones after it
    the calibrated default too) and added to the sentence's chosen sources when it passes. The
    renderer keeps the marker where it stands for the sources chosen and removes it otherwise."""
    by_id = {s.id: s for s in sentences}
    for m in old_markers:
        sent = by_id.get(m.sentence) if m.narrative and m.sentence is not None else None
        if sent is None:
            continue
        for n in m.numbers:
            r = resolved.get(n)
            if r is None or not 0 <= r < len(index.records):
                continue
            _known, cand = _named_source(sent, r, chosen.get(sent.id, []), candidates, index, verifier,
                                         options)
            if cand is not None:
                chosen.setdefault(sent.id, []).append(cand)


def _named_source(
    sent: Sentence,
    record: int,
    have: Sequence[Candidate],
    candidates: Mapping[int, list[tuple[int, float]]],
    index: PassageIndex,
    verifier: Verifier,
    options: TraceOptions,
) -> tuple[bool, Candidate | None]:
    """A record the sentence names (a marker that is a word of it, an inline link): (True, None)
    when it is among the sentence's sources `have` already (or the same page under another
    record); else (False, its candidate when it verifies, as any proposal is: the sentence's best
    source needs `options.threshold`, the ones after it the calibrated default too)."""
    key = index.records[record].source_key
    if any(c.record == record or (key and index.records[c.record].source_key == key) for c in have):
        return True, None
    floor = max(options.threshold, options.tuning.min_score) if have else options.threshold
    return False, verify_named(sent, record, candidates.get(sent.id, []), index, verifier, floor)


def _unverified_links(
    old_markers: Sequence[ExistingMarker],
    resolved: Mapping[int, int | None],
    sentences: Sequence[Sentence],
    chosen: dict[int, list[Candidate]],
    candidates: Mapping[int, list[tuple[int, float]]],
    index: PassageIndex,
    verifier: Verifier,
    options: TraceOptions,
) -> list[ExistingMarker]:
    """Inline link citations ("([Reuters](https://…))") whose records do not all support their
    sentence, under either policy: such a link may be no citation at all ("- Official site
    ([Alpha](https://…))"), and removing it would lose the author's link, so it stays as written.
    Each record of the others is verified as a named source is, and added to the sentence's chosen
    sources (so the renderer cites it where the link was)."""
    by_id = {s.id: s for s in sentences}
    stay = []
    for m in old_markers:
        if not m.inline_link:
            continue
        sent = by_id.get(m.sentence) if m.sentence is not None else None
        picks: list[Candidate] = []
        for n in m.numbers:
            r = resolved.get(n)
            if sent is None or r is None or not 0 <= r < len(index.records):
                break
            known, cand = _named_source(sent, r, [*chosen.get(sent.id, []), *picks], candidates, index,
                                        verifier, options)
            if known:
                continue
            if cand is None:
                break
            picks.append(cand)
        else:
            if sent is not None:
                chosen.setdefault(sent.id, []).extend(picks)
                continue
        stay.append(m)
    return stay


def _verify_kept_citations(
    citations: tuple[Citation, ...],
    sentences: list[Sentence],
    candidates: Mapping[int, list[tuple[int, float]]],
    index: PassageIndex,
    verifier: Verifier,
    options: TraceOptions,
) -> tuple[Citation, ...]:
    """Give every kept author citation its verifier score and evidence (it is reported, and
    warned about when unsupported, but not removed: the author made it)."""
    by_span = {(s.start, s.end): s for s in sentences}
    position = {r.index: i for i, r in enumerate(index.records)}
    out = []
    for c in citations:
        sent = by_span.get((c.start, c.end))
        if sent is None or not any(s.match == "existing" and not s.evidence for s in c.sources):
            out.append(c)
            continue
        sources = []
        for src in c.sources:
            rec = position.get(src.record_index)
            if src.match == "existing" and not src.evidence and rec is not None:
                sup = verify_kept(sent, rec, candidates.get(sent.id, []), index, verifier)
                content = index.records[rec].content
                quote = content[sup.evidence_start:sup.evidence_end]
                unstated = tuple(verifier.unstated_numbers_in(sent.query, rec))
                instead = tuple(verifier.figures_instead_in(sent.query, rec, quote)) if unstated else ()
                src = replace(src, score=sup.score, evidence=quote, evidence_start=sup.evidence_start,
                              evidence_end=sup.evidence_end, unstated=unstated, quote_figures=instead)
            sources.append(src)
        out.append(replace(c, sources=tuple(sources)))
    return tuple(out)


__all__ = ["trace", "LLMBackend", "CancelToken", "Record", "Sentence", "Passage"]
