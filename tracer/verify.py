"""Support of one (sentence, passage) pair: a calibrated score, a match kind and the
evidence span in the record. The gate no citation passes without, whoever proposed it.

Signals (each 0..1): IDF-weighted coverage of the sentence's content words by the passage,
bigram coverage (word bigrams in English, character bigrams in Chinese), fuzzy alignment of
the best window (rapidfuzz), agreement of numbers (a number the record never states is
strong evidence against support), coverage of named entities, and how the record ranks
against the request's other records. They are combined by a logistic model whose weights
live in `tracer.options.Tuning` and were calibrated on the dev benchmark (docs/quality.md).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from rapidfuzz import fuzz

from tracer.models import Passage, Record, Support
from tracer.options import Tuning
from tracer.retrieve import PassageIndex
from tracer.text import cjk_bigrams, content_tokens, normalize_for_match, numbers

_MARKER = re.compile(r"\[(?:\^?\d+(?:\s*[,，\-–]\s*\d+)*|citation:\d+)\]|【\d+】|<sup>.*?</sup>")
_BOUNDARY = re.compile(r"[.!?。！？\n]")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-zA-Z\u00c0-\u024f]+(?:\s+[A-Z][a-zA-Z]+)*)")
_NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|without|n't)\b|不|没有|未|无|非")

FEATURES = ("coverage", "bigram", "fuzzy", "numbers", "entity", "rank", "length", "negation",
            "window", "matched", "missing",
            # interactions: lexical support counts for more when the record also ranks first
            "coverage*rank", "window*rank", "matched*rank", "coverage*window", "rank^2", "window^2")


@dataclass(frozen=True, slots=True)
class PairFeatures:
    coverage: float
    bigram: float
    fuzzy: float
    numbers: float      # share of the sentence's numbers that the record states (1 if none)
    entity: float       # share of the sentence's capitalised names found in the passage
    rank: float         # retrieval score of this record relative to the best record (0..1)
    length: float       # log of the sentence's content-word count
    negation: float     # 1 when exactly one side is negated
    window: float       # IDF-weighted coverage inside the best window of the passage
    matched: float      # log(1 + IDF mass of the sentence's words found in the window)
    missing: float      # log(1 + IDF mass of the sentence's words the window lacks)
    exact: bool

    def vector(self) -> list[float]:
        return [self.coverage, self.bigram, self.fuzzy, self.numbers, self.entity, self.rank,
                self.length, self.negation, self.window, self.matched, self.missing,
                self.coverage * self.rank, self.window * self.rank, self.matched * self.rank,
                self.coverage * self.window, self.rank * self.rank, self.window * self.window]


def sentence_query(text: str) -> str:
    """The sentence without citation markers (they are not part of the claim)."""
    return _MARKER.sub(" ", text)


class Verifier:
    """Scores pairs for one request; caches per-record and per-passage derived data."""

    def __init__(self, index: PassageIndex, records: list[Record], tuning: Tuning) -> None:
        self.index = index
        self.records = records
        self.tuning = tuning
        self._model = tuning.model(index.lang)
        self._record_numbers: dict[int, set[str]] = {}
        self._record_norm: dict[int, str] = {}
        self._passage_bigrams: dict[int, frozenset[tuple[str, str]]] = {}
        self._passage_cjk: dict[int, frozenset[str]] = {}

    # -- cached record/passage data -------------------------------------------------
    def _numbers_of(self, record: int) -> set[str]:
        if record not in self._record_numbers:
            self._record_numbers[record] = numbers(self.records[record].content)
        return self._record_numbers[record]

    def _norm_of(self, record: int) -> str:
        if record not in self._record_norm:
            self._record_norm[record] = normalize_for_match(self.records[record].content)
        return self._record_norm[record]

    def _bigrams_of(self, pid: int) -> frozenset[tuple[str, str]]:
        if pid not in self._passage_bigrams:
            toks = content_tokens(self.index.passages[pid].text)
            self._passage_bigrams[pid] = frozenset(zip(toks, toks[1:], strict=False))
        return self._passage_bigrams[pid]

    def _cjk_of(self, pid: int) -> frozenset[str]:
        if pid not in self._passage_cjk:
            self._passage_cjk[pid] = frozenset(cjk_bigrams(self.index.passages[pid].text))
        return self._passage_cjk[pid]

    # -- features ---------------------------------------------------------------------
    def features(self, sentence: str, pid: int, rank: float) -> PairFeatures:
        passage = self.index.passages[pid]
        claim = sentence_query(sentence)
        toks = content_tokens(claim)
        ptoks = self.index.token_sets[pid]
        weights = [self.index.idf(t) for t in toks]
        total = sum(weights) or 1.0
        coverage = sum(w for t, w in zip(toks, weights, strict=True) if t in ptoks) / total

        cjk = cjk_bigrams(claim)
        if len(cjk) >= 4:
            pc = self._cjk_of(pid)
            bigram = sum(1 for b in cjk if b in pc) / len(cjk)
        else:
            pairs = list(zip(toks, toks[1:], strict=False))
            pb = self._bigrams_of(pid)
            bigram = sum(1 for b in pairs if b in pb) / len(pairs) if pairs else coverage

        norm_claim = normalize_for_match(claim)
        fuzzy_score = fuzz.partial_ratio(norm_claim, normalize_for_match(passage.text)) / 100.0 \
            if norm_claim else 0.0

        sent_nums = numbers(claim)
        if sent_nums:
            rec_nums = self._numbers_of(passage.record)
            nums = len(sent_nums & rec_nums) / len(sent_nums)
        else:
            nums = 1.0

        ents = {e.lower() for e in _CAPITALISED.findall(claim)}
        if ents:
            ptext = passage.text.lower()
            entity = sum(1 for e in ents if e in ptext) / len(ents)
        else:
            entity = coverage

        window, matched_mass = _window_coverage(
            toks, weights, self.index.tokens[pid], max(12, 2 * len(toks) + 8)
        )
        neg_s = bool(_NEGATION.search(claim))
        neg_p = bool(_NEGATION.search(passage.text))
        exact = len(norm_claim) >= 20 and norm_claim in self._norm_of(passage.record)
        return PairFeatures(
            coverage=coverage,
            bigram=bigram,
            fuzzy=fuzzy_score,
            numbers=nums,
            entity=entity,
            rank=rank,
            length=math.log(1 + len(toks)),
            negation=1.0 if (neg_s and not neg_p) else 0.0,
            window=window,
            matched=math.log1p(matched_mass),
            missing=math.log1p(max(0.0, sum(weights) - matched_mass)),
            exact=exact,
        )

    def score(self, f: PairFeatures) -> float:
        if f.exact:
            return 1.0
        w, bias = self._model
        z = bias + sum(a * b for a, b in zip(w, f.vector(), strict=True))
        return 1.0 / (1.0 + math.exp(-z))

    def support(self, sentence: str, pid: int, rank: float) -> tuple[Support, PairFeatures]:
        """Score the pair and locate the evidence span (offsets into the record content)."""
        f = self.features(sentence, pid, rank)
        s = self.score(f)
        start, end = self.evidence_span(sentence, pid)
        if f.exact:
            kind = "exact"
        elif f.fuzzy >= 0.9:
            kind = "fuzzy"
        else:
            kind = "lexical"
        return Support(score=round(s, 4), match=kind, evidence_start=start, evidence_end=end), f

    def evidence_span(self, sentence: str, pid: int) -> tuple[int, int]:
        """Best-aligned window of the passage, widened to whole record sentences."""
        passage = self.index.passages[pid]
        claim = sentence_query(sentence).strip()
        text = passage.text
        lowered = text.lower()
        haystack = lowered if len(lowered) == len(text) else text
        if not claim or not text:
            return passage.start, passage.start
        al = fuzz.partial_ratio_alignment(claim.lower(), haystack)
        if al is None:
            return passage.start, passage.start
        content = self.records[passage.record].content
        start = passage.start + al.dest_start
        end = passage.start + al.dest_end
        limit = self.tuning.evidence_context
        lo = max(0, start - limit)
        prev = [m.end() for m in _BOUNDARY.finditer(content, lo, start)]
        start = prev[-1] if prev else lo
        nxt = _BOUNDARY.search(content, max(end - 1, start), min(len(content), end + limit))
        end = nxt.end() if nxt else min(len(content), end + limit)
        while start < end and content[start].isspace():
            start += 1
        while end > start and content[end - 1].isspace():
            end -= 1
        return start, end


def _window_coverage(
    toks: list[str], weights: list[float], passage_tokens: list[str], width: int
) -> tuple[float, float]:
    """Best IDF-weighted share of the sentence's distinct words inside any run of `width`
    passage tokens (a sliding window, linear in the passage length)."""
    weight_of: dict[str, float] = {}
    for t, w in zip(toks, weights, strict=True):
        weight_of[t] = w
    total = sum(weight_of.values())
    if total <= 0 or not passage_tokens:
        return 0.0, 0.0
    counts: dict[str, int] = {}
    mass = best = 0.0
    for i, tok in enumerate(passage_tokens):
        w = weight_of.get(tok)
        if w is not None:
            if counts.get(tok, 0) == 0:
                mass += w
            counts[tok] = counts.get(tok, 0) + 1
        if i >= width:
            old = passage_tokens[i - width]
            ow = weight_of.get(old)
            if ow is not None:
                counts[old] -= 1
                if counts[old] == 0:
                    mass -= ow
        if mass > best:
            best = mass
    return best / total, best
