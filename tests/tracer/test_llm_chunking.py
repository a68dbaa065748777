"""Chunk planning: every sentence in one chunk with all its top-k candidates, chunks bounded."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tracer.llm.chunking import batches, plan_match_chunks


def test_sentences_are_packed_in_order_within_the_passage_limit() -> None:
    cands = {0: [1, 2, 3], 1: [3, 4], 2: [5, 6, 7], 3: [], 4: [1, 9]}
    chunks = plan_match_chunks([0, 1, 2, 3, 4], cands, top_k=3, max_passages=5, max_sentences=10)
    assert [c.sentences for c in chunks] == [(0, 1), (2, 4)]
    assert chunks[0].passages == (1, 2, 3, 4)
    assert chunks[1].passages == (5, 6, 7, 1, 9)
    assert chunks[1].candidates[4] == (1, 9)


def test_top_k_cuts_candidates_and_sentence_cap_splits() -> None:
    cands = {i: [i * 10 + j for j in range(8)] for i in range(4)}
    chunks = plan_match_chunks(range(4), cands, top_k=2, max_passages=40, max_sentences=3)
    assert [c.sentences for c in chunks] == [(0, 1, 2), (3,)]
    assert chunks[0].candidates[1] == (10, 11)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(st.integers(0, 30), st.lists(st.integers(0, 60), max_size=10), max_size=30),
    st.integers(1, 6), st.integers(6, 20), st.integers(1, 8),
)
def test_plan_properties(cands: dict[int, list[int]], k: int, max_p: int, max_s: int) -> None:
    order = sorted(cands)
    chunks = plan_match_chunks(order, cands, top_k=k, max_passages=max_p, max_sentences=max_s)
    seen = [s for c in chunks for s in c.sentences]
    assert seen == [s for s in order if cands[s]]           # each once, in order; empty ones skipped
    for c in chunks:
        assert len(c.passages) <= max_p and len(c.sentences) <= max_s
        assert len(set(c.passages)) == len(c.passages)
        for s in c.sentences:
            assert c.candidates[s] == tuple(dict.fromkeys(cands[s]))[:k]
            assert set(c.candidates[s]) <= set(c.passages)


def test_batches() -> None:
    assert batches([1, 2, 3, 4, 5], 2) == [(1, 2), (3, 4), (5,)]
    assert batches([], 3) == []
