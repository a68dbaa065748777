"""Candidate passages per sentence: BM25 (bm25s) over CJK-aware content tokens.

Chinese passages are indexed by jieba words plus character bigrams, so a paraphrase that
cuts words differently still shares terms. Candidates are diversified by record: the best
passages of the best records, never k chunks of one long page.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import bm25s
import numpy as np

from tracer.models import Passage, Record
from tracer.text import cjk_bigrams, content_tokens


class PassageIndex:
    """Token statistics and a BM25 index over the passages of one request."""

    def __init__(
        self, passages: list[Passage], records: list[Record], lang: str, idf_floor: int = 0
    ) -> None:
        self.passages = passages
        self.records = records
        self.lang = lang
        self.tokens: list[list[str]] = []
        # how many of each passage's terms are its content tokens (the rest are CJK bigrams):
        # the verifier reads a passage's word bigrams from them instead of cutting it again
        self._content_len = np.zeros(len(passages), dtype=np.int32)
        for i, p in enumerate(passages):
            words = content_tokens(p.text)
            self._content_len[i] = len(words)
            self.tokens.append(words + cjk_bigrams(p.text))
        # Each passage's distinct terms are needed only for the candidates a sentence verifies
        # against; built on first use, since a set per passage of a large request would cost
        # more memory than its token lists.
        self._token_sets: dict[int, frozenset[str]] = {}
        # IDF is computed as if there were at least `idf_floor` passages, so a request with
        # one or two records does not make every word look common (and every claim weak).
        self._idf_n = max(len(passages), idf_floor, 1)
        self._record_of = np.fromiter((p.record for p in passages), dtype=np.int64, count=len(passages))
        self._by_record: dict[int, list[int]] | None = None
        # the request's terms, numbered in order of first use, and how many passages hold each
        self._vocab: dict[str, int] = {}
        self._df: list[int] = []
        self._bm25: _BM25 | None = None
        if any(self.tokens):  # bm25s cannot index a corpus without a single term
            vocab = self._vocab
            ids = [[vocab.setdefault(t, len(vocab)) for t in toks] for toks in self.tokens]
            self._bm25 = _BM25()
            self._bm25.index((ids, dict(vocab)), show_progress=False)
            self._df = self._bm25.doc_freqs

    def passages_of(self, record: int) -> list[int]:
        """The ids of a record's passages, in order (grouped once, on first use)."""
        if self._by_record is None:
            grouped: dict[int, list[int]] = {}
            for p in self.passages:
                grouped.setdefault(p.record, []).append(p.id)
            self._by_record = grouped
        return self._by_record.get(record, [])

    @staticmethod
    def terms(text: str) -> list[str]:
        """Index terms: content tokens, plus character bigrams for CJK text."""
        return content_tokens(text) + cjk_bigrams(text)

    def content_tokens_of(self, pid: int) -> list[str]:
        """The passage's content tokens (`tracer.text.content_tokens` of its text), in order."""
        return self.tokens[pid][: int(self._content_len[pid])]

    def token_set(self, pid: int) -> frozenset[str]:
        """The passage's distinct index terms (cached)."""
        got = self._token_sets.get(pid)
        if got is None:
            got = self._token_sets[pid] = frozenset(self.tokens[pid])
        return got

    def idf(self, term: str) -> float:
        """Smoothed IDF of a term over this request's passages (rare terms weigh more)."""
        i = self._vocab.get(term)
        return math.log(1.0 + (self._idf_n + 1) / ((0 if i is None else self._df[i]) + 0.5))

    def search(self, text: str, k: int, per_record: int = 2) -> list[tuple[int, float]]:
        """(passage id, BM25 score) of the best passages of the k best records, best first."""
        if self._bm25 is None or k <= 0:
            return []
        query = self.terms(text)
        if not query:
            return []
        scores = self._bm25.get_scores(query)
        nonzero = np.flatnonzero(scores > 0)
        if nonzero.size == 0:
            return []
        order = nonzero[np.argsort(-scores[nonzero], kind="stable")]
        taken: dict[int, int] = {}
        out: list[tuple[int, float]] = []
        for pid in order.tolist():
            rec = int(self._record_of[pid])
            count = taken.get(rec, 0)
            if count == 0 and len(taken) >= k:
                continue
            if count >= per_record:
                continue
            taken[rec] = count + 1
            out.append((pid, float(scores[pid])))
            if len(taken) >= k and all(c >= per_record for c in taken.values()):
                break
        return out


_CHUNK_DOCS = 512   # passages whose (passage, term) pairs are counted at once


class _BM25(bm25s.BM25):  # type: ignore[misc]  # (bm25s has no type hints)
    """bm25s's BM25 with its default settings (Lucene), its index built with whole-array NumPy
    operations instead of a Python loop per passage and per term (`build_index_from_ids` is the
    method bm25s offers to override for this). The index is the same, bit for bit: each value is
    computed by the same operations in the same types (tests/tracer/test_retrieve.py compares
    them), and the IDF of each document frequency with `math.log`, as bm25s does. It also keeps
    the document frequencies (`doc_freqs`, by term id), which the verifier's IDF reads."""

    doc_freqs: list[int]

    def build_index_from_ids(self, unique_token_ids: list[int], corpus_token_ids: list[list[int]],
                             show_progress: bool = True, leave_progress: bool = False) -> dict[str, Any]:
        if self.method != "lucene" or self.idf_method not in (None, "lucene"):
            raise ValueError("_BM25 builds bm25s's default variant only (method 'lucene')")
        n_docs = len(corpus_token_ids)
        n_vocab = len(unique_token_ids)
        lengths = np.fromiter(map(len, corpus_token_ids), dtype=np.int64, count=n_docs)
        avg_doc_len = np.array([len(doc) for doc in corpus_token_ids]).mean()   # (as bm25s has it)
        # each (passage, term) once, ordered by passage, with the term's count in the passage; a
        # chunk of passages at a time, so that the sort's working arrays stay small
        docs_of, terms_of, counts_of = [], [], []
        for lo in range(0, n_docs, _CHUNK_DOCS):
            hi = min(n_docs, lo + _CHUNK_DOCS)
            flat = np.fromiter(itertools.chain.from_iterable(corpus_token_ids[lo:hi]), dtype=np.int64,
                               count=int(lengths[lo:hi].sum()))
            pairs, counts = np.unique(np.repeat(np.arange(lo, hi, dtype=np.int64), lengths[lo:hi]) * n_vocab
                                      + flat, return_counts=True)
            del flat
            docs_of.append((pairs // n_vocab).astype(np.int32))
            terms_of.append((pairs % n_vocab).astype(np.int32))
            counts_of.append(counts.astype(np.int32))
            del pairs, counts
        docs, terms, counts = (np.concatenate(parts) for parts in (docs_of, terms_of, counts_of))
        del docs_of, terms_of, counts_of
        df = np.bincount(terms, minlength=n_vocab)
        self.doc_freqs = df.tolist()
        freqs, which = np.unique(df, return_inverse=True)
        idf = np.array([math.log(1 + (n_docs - d + 0.5) / (d + 0.5)) if d else 0.0 for d in freqs.tolist()],
                       dtype=np.float64)[which].astype(self.dtype)
        # bm25s: tf / (k1 * ((1 - b) + b * l_d / l_avg) + tf), in float64, times the float32 IDF
        # (a chunk at a time too)
        norm = self.k1 * ((1 - self.b) + (self.b * lengths.astype(np.float64)) / avg_doc_len)
        scores = np.empty(len(terms), dtype=self.dtype)
        for lo in range(0, len(terms), _CHUNK_DOCS * 256):
            part = slice(lo, lo + _CHUNK_DOCS * 256)
            tf = counts[part].astype(self.dtype).astype(np.float64)
            scores[part] = idf[terms[part]] * (tf / (norm[docs[part]] + tf))
        del counts
        self.nonoccurrence_array = None
        data, indices, indptr = self._np_csc(
            data=scores, rows=docs.astype(self.int_dtype, copy=False),
            cols=terms.astype(self.int_dtype, copy=False), shape=(n_docs, n_vocab))
        return {"data": data.astype(self.dtype), "indices": indices, "indptr": indptr, "num_docs": n_docs}
