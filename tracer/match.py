"""Choose sources per sentence: score candidate passages with the verifier, keep the best
record(s) above the threshold. The same gate validates what an LLM proposes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from tracer.conflict import Conflict
from tracer.errors import CancelledError
from tracer.models import CancelToken, Candidate, NearMiss, Sentence, Support
from tracer.options import TraceOptions
from tracer.retrieve import PassageIndex
from tracer.verify import CONFLICT_SCORE, CONTRADICTED, Verifier


def record_ranks(candidates: Sequence[tuple[int, float]], index: PassageIndex) -> dict[int, float]:
    """Each record's best retrieval score relative to the best record's (0..1)."""
    best: dict[int, float] = {}
    for pid, score in candidates:
        rec = index.passages[pid].record
        if score > best.get(rec, 0.0):
            best[rec] = score
    top = max(best.values(), default=0.0)
    return {rec: (s / top if top > 0 else 0.0) for rec, s in best.items()}


def select_sources(scored: list[Candidate], index: PassageIndex, options: TraceOptions,
                   extra_floor: float = 0.0) -> list[Candidate]:
    """Best passage per source, above the threshold, within the margin of the best, capped; a
    source after the best also at or above `extra_floor`. A passage whose quote contradicts the
    sentence is never chosen, whatever the threshold."""
    by_source: dict[str, Candidate] = {}
    for cand in scored:
        if cand.support.match == CONTRADICTED:
            continue
        key = index.records[cand.record].source_key or f"#{cand.record}"
        cur = by_source.get(key)
        if cur is None or cand.support.score > cur.support.score:
            by_source[key] = cand
    ranked = sorted(by_source.values(), key=lambda c: (-c.support.score, c.record))
    kept = [c for c in ranked if c.support.score >= options.threshold]
    if not kept:
        return []
    floor = max(kept[0].support.score - options.tuning.second_source_margin, extra_floor)
    return [kept[0], *(c for c in kept[1:] if c.support.score >= floor)][: options.max_sources]


def _with_evidence(sentence: Sentence, picked: list[Candidate], verifier: Verifier) -> list[Candidate]:
    """Locate evidence only for the sources actually cited (alignment is the costly part), with
    the sentence's figures each record does not state and what its quote states instead."""
    out = []
    for c in picked:
        support = verifier.with_evidence_span(sentence.query, c.passage, c.support)
        unstated = tuple(verifier.unstated_numbers_in(sentence.query, c.record))
        if unstated:
            quote = verifier.records[c.record].content[support.evidence_start:support.evidence_end]
            instead = tuple(verifier.figures_instead_in(sentence.query, c.record, quote))
            support = replace(support, unstated=unstated, quote_figures=instead)
        out.append(replace(c, support=support))
    return out


def match_deterministic(
    sentences: Sequence[Sentence],
    candidates: Mapping[int, Sequence[tuple[int, float]]],
    index: PassageIndex,
    options: TraceOptions,
    verifier: Verifier | None = None,
    cancel: CancelToken | None = None,
    closest: dict[int, Candidate] | None = None,
) -> dict[int, list[Candidate]]:
    """Verified sources for each sentence, best first (sentences without support omitted).
    Checks `cancel` between sentences, so a deadline stops long reports mid-stage. With
    `closest`, each sentence left without a source gets its best-scoring candidate there."""
    if verifier is None:
        verifier = Verifier(index, index.records, options.verify_tuning)
        verifier.set_rows(sentences)
    chosen: dict[int, list[Candidate]] = {}
    for s in sentences:
        if cancel is not None and cancel.is_set():
            raise CancelledError("cancelled during matching")
        cands = candidates.get(s.id, ())
        if not cands:
            continue
        raw = _score_all(s, cands, index, verifier)
        scored = _checked(s, raw, verifier, options.threshold)
        top = max((c for c in raw if c.support.score >= options.threshold),
                  key=lambda c: (c.support.score, -c.record), default=None)
        if top is not None and any(c.record == top.record and c.support.match == CONTRADICTED
                                   for c in scored):
            # The record that matches the sentence best contradicts it: no weaker record cites it.
            # (A weaker one agrees only in part, or on words both share with the wrong claim: "The
            # new teams will begin play in the 2024–25 season" cited to a salary-cap page for its
            # "2024–25 season" where the expansion page says 2025–26.)
            if closest is not None:
                closest[s.id] = _best([c for c in scored if c.record == top.record])
            continue
        # A sentence's second and third sources need the calibrated default threshold even when
        # the request lowers `min_score`: below it, a source that is not the sentence's best is
        # right far less often than its score says (docs/quality.md).
        picked = select_sources(_row_figures_stated(s, scored, verifier, options.threshold), index, options,
                                extra_floor=options.tuning.min_score)
        if picked:
            chosen[s.id] = _with_evidence(s, picked, verifier)
        elif closest is not None and scored:
            closest[s.id] = _closest(s, scored, verifier)
    return chosen


def _checked(sentence: Sentence, scored: list[Candidate], verifier: Verifier,
             threshold: float) -> list[Candidate]:
    """`scored`, each record that could be chosen (a passage at or above `threshold`) checked for
    a quote that contradicts the sentence (`Verifier.unless_contradicted`) on its best passage.
    A record whose best passage contradicts the sentence is contradicted: its other passages,
    which match the sentence less well, do not stand for it."""
    contradicted: dict[int, Candidate] = {}
    checked: set[int] = set()
    for cand in sorted(scored, key=lambda c: (-c.support.score, c.passage)):
        if cand.record in checked or cand.support.score < threshold:
            continue
        checked.add(cand.record)
        support = verifier.unless_contradicted(sentence.query, cand.passage, cand.support)
        if support.match == CONTRADICTED:
            contradicted[cand.record] = replace(cand, support=support)
    return [_capped(c, contradicted[c.record]) if c.record in contradicted else c for c in scored]


def _row_figures_stated(sentence: Sentence, scored: list[Candidate], verifier: Verifier,
                        threshold: float) -> list[Candidate]:
    """`scored`, for a table row only the records that state every figure of the row and name
    what the row is about (`Sentence.subject`, its first value), together and plainly
    (`Verifier.row_stated_here`): a row is mostly figures, and one its
    source does not state is no part of what the source supports (in prose a record may leave
    out a figure of a sentence it otherwise backs), while the same figures stated of another
    thing ("| Chandra | 1990 |" against Hubble's page) support nothing."""
    if not sentence.in_table:
        return scored
    subject = sentence.subject
    stated: dict[int, bool] = {}
    out = []
    for c in scored:
        if c.support.score < threshold:
            continue
        if c.record not in stated:
            stated[c.record] = not verifier.unstated_numbers_in(sentence.query, c.record) \
                and (not subject or verifier.names_subject(subject, c.record))
        if stated[c.record] and verifier.row_stated_here(sentence, c.passage):
            out.append(c)
    return out


def _capped(cand: Candidate, best: Candidate) -> Candidate:
    """`cand`, a passage of a record whose best passage `best` contradicts the sentence."""
    if cand.passage == best.passage:
        return best
    support = replace(cand.support, score=min(cand.support.score, CONFLICT_SCORE), match=CONTRADICTED)
    return replace(cand, support=support)


def _closest(sentence: Sentence, scored: Sequence[Candidate], verifier: Verifier) -> Candidate:
    """The best candidate once those whose quote contradicts the sentence count at most
    CONFLICT_SCORE: checked best first, until one stands or the rest score no more than that. A
    record whose best passage is contradicted is contradicted (its other passages are not
    checked and do not stand)."""
    ranked = sorted(scored, key=lambda c: (-c.support.score, c.record, c.passage))
    seen: list[Candidate] = []
    against: set[int] = set()
    for i, cand in enumerate(ranked):
        if cand.support.score <= CONFLICT_SCORE:
            return _best(seen + ranked[i:])
        if cand.record in against:
            continue
        cand = replace(cand, support=verifier.unless_contradicted(sentence.query, cand.passage, cand.support))
        if cand.support.match != CONTRADICTED:
            return cand
        against.add(cand.record)
        seen.append(cand)
    return _best(seen)


def _score_all(
    sentence: Sentence, candidates: Sequence[tuple[int, float]], index: PassageIndex, verifier: Verifier
) -> list[Candidate]:
    """Every candidate passage of a sentence, scored (no evidence span yet)."""
    ranks = record_ranks(candidates, index)
    scored = []
    for pid, _ in candidates:
        rec = index.passages[pid].record
        support, _f = verifier.support(sentence.query, pid, ranks.get(rec, 0.0), with_evidence=False)
        scored.append(Candidate(sentence.id, rec, pid, support))
    return scored


def _best(scored: Sequence[Candidate]) -> Candidate:
    return max(scored, key=lambda c: (c.support.score, -c.record, -c.passage))


def closest_candidate(
    sentence: Sentence,
    candidates: Sequence[tuple[int, float]],
    index: PassageIndex,
    verifier: Verifier,
) -> Candidate | None:
    """The best-scoring candidate passage of a sentence, whatever its score."""
    scored = _score_all(sentence, candidates, index, verifier)
    return _closest(sentence, scored, verifier) if scored else None


def near_miss(sentence: Sentence, cand: Candidate | None, index: PassageIndex, verifier: Verifier,
              floor: float) -> NearMiss | None:
    """`cand` as a NearMiss with its evidence, when it scored at least `floor`."""
    if cand is None or cand.support.score < floor:
        return None
    support = verifier.with_evidence_span(sentence.query, cand.passage, cand.support)
    rec = index.records[cand.record]
    quote = rec.content[support.evidence_start:support.evidence_end]
    return NearMiss(rec.index, rec.url, rec.title, support.score, quote,
                    support.evidence_start, support.evidence_end,
                    tuple(verifier.unstated_numbers_in(sentence.query, cand.record)),
                    tuple(verifier.figures_instead_in(sentence.query, cand.record, quote)),
                    _described(verifier.conflict(sentence.query, cand.passage)))


def _described(conflict: Conflict | None) -> str:
    return conflict.describe() if conflict is not None else ""


def verify_proposals(
    sentences: Sequence[Sentence],
    proposals: Mapping[int, Sequence[int]],
    candidates: Mapping[int, Sequence[tuple[int, float]]],
    index: PassageIndex,
    options: TraceOptions,
    verifier: Verifier | None = None,
    extra_floor: float | None = None,
) -> tuple[dict[int, list[Candidate]], int]:
    """Pass LLM-proposed (sentence, passage) pairs through the same gate; count rejections.
    A sentence's sources after its best need `extra_floor` too: by default the calibrated
    threshold, as on the deterministic path, however low `options.min_score` is; a caller that
    trusts the model's reading (`llm.min_score`) passes that instead."""
    if verifier is None:
        verifier = Verifier(index, index.records, options.verify_tuning)
        verifier.set_rows(sentences)
    by_id = {s.id: s for s in sentences}
    chosen: dict[int, list[Candidate]] = {}
    rejected = 0
    for sid, pids in proposals.items():
        sent = by_id.get(sid)
        if sent is None:
            rejected += len(pids)
            continue
        ranks = record_ranks(candidates.get(sid, ()), index)
        # The model names a passage; the gate weighs its record: the named passage and the
        # record's other retrieved passages for this sentence, the best of them standing for it.
        by_record: dict[int, list[int]] = {}
        for pid, _ in candidates.get(sid, ()):
            by_record.setdefault(index.passages[pid].record, []).append(pid)
        scored = []
        weighed: set[int] = set()  # passages scored for this sentence (two proposals of one record)
        proposed = 0
        for pid in dict.fromkeys(pids):
            if not 0 <= pid < len(index.passages):
                rejected += 1
                continue
            proposed += 1
            rec = index.passages[pid].record
            for other in (pid, *by_record.get(rec, ())):
                if other in weighed:
                    continue
                weighed.add(other)
                support, _f = verifier.support(sent.query, other, ranks.get(rec, 0.0), with_evidence=False)
                scored.append(Candidate(sid, rec, other, support))
        checked = _row_figures_stated(sent, _checked(sent, scored, verifier, options.threshold), verifier,
                                      options.threshold)
        picked = select_sources(checked, index, options,
                                extra_floor=options.tuning.min_score if extra_floor is None else extra_floor)
        rejected += max(0, proposed - len(picked))
        if picked:
            chosen[sid] = _with_evidence(sent, picked, verifier)
    return chosen, rejected


def record_support(
    sentence: Sentence,
    record: int,
    candidates: Sequence[tuple[int, float]],
    index: PassageIndex,
    verifier: Verifier,
) -> Support:
    """How well one record (a position in `index.records`) supports the sentence: its best
    passage, scored with the record's retrieval rank among `candidates`, with the evidence span
    (a passage whose quote contradicts the sentence counts at most CONFLICT_SCORE)."""
    best = _record_best(sentence, record, candidates, index, verifier)
    if best is None:
        return Support(0.0, "", 0, 0)
    return verifier.with_evidence_span(sentence.query, best.passage, best.support)


def _record_best(
    sentence: Sentence,
    record: int,
    candidates: Sequence[tuple[int, float]],
    index: PassageIndex,
    verifier: Verifier,
) -> Candidate | None:
    """The record's best passage for the sentence, scored as `record_support` scores it but
    without its evidence span (the costly alignment); None for a record without passages."""
    rank = record_ranks(candidates, index).get(record, 0.0)
    scored = [Candidate(sentence.id, record, pid,
                        verifier.support(sentence.query, pid, rank, with_evidence=False)[0])
              for pid in index.passages_of(record)]
    if not scored:
        return None
    return _closest(sentence, scored, verifier)


def verify_named(
    sentence: Sentence,
    record: int,
    candidates: Sequence[tuple[int, float]],
    index: PassageIndex,
    verifier: Verifier,
    floor: float,
) -> Candidate | None:
    """A record the sentence names in its own words ("如[2]所述", "as shown in [2], …"), verified
    like any proposed source: the candidate when it scores at least `floor` and its quote does not
    contradict the sentence, else None."""
    best = _record_best(sentence, record, candidates, index, verifier)
    if best is None or best.support.score < floor or best.support.match == CONTRADICTED:
        return None
    return _with_evidence(sentence, [best], verifier)[0]


def verify_kept(
    sentence: Sentence,
    record: int,
    candidates: Sequence[tuple[int, float]],
    index: PassageIndex,
    verifier: Verifier,
) -> Support:
    """Verifier support for a citation the author already made (kept under ExistingPolicy.KEEP):
    `record_support`, reported, never used to drop the author's citation."""
    return replace(record_support(sentence, record, candidates, index, verifier), match="existing")
