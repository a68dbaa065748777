"""The BM25 index: `tracer.retrieve._BM25` builds bm25s's index with whole-array operations; it
must be bm25s's own index, value for value, or candidate ranking would drift."""

from __future__ import annotations

from collections import Counter

import bm25s
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracer import retrieve
from tracer.models import Passage, Record
from tracer.retrieve import _BM25, PassageIndex

_TERMS = st.sampled_from(["moon", "orbit", "mission", "2021", "3.5", "月球", "探测", "嫦娥", "a", "x"])


def _same_index(corpus: list[list[str]]) -> None:
    stock = bm25s.BM25()
    stock.index(corpus, show_progress=False)
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in doc] for doc in corpus]
    fast = _BM25()
    fast.index((ids, dict(vocab)), show_progress=False)
    queries = [[t] for t in vocab] + [list(vocab)] + [doc for doc in corpus if doc]
    for query in queries:
        assert np.array_equal(stock.get_scores(query), fast.get_scores(query)), query
    df: Counter[str] = Counter()
    for doc in corpus:
        df.update(set(doc))
    assert {t: fast.doc_freqs[i] for t, i in vocab.items()} == dict(df)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(_TERMS, max_size=40), min_size=1, max_size=12).filter(lambda c: any(c)),
       st.sampled_from([512, 1, 2, 5]))
def test_the_whole_array_index_is_bm25s_own(corpus: list[list[str]], chunk: int) -> None:
    """Whatever the number of passages counted at once (the service's is 512)."""
    default = retrieve._CHUNK_DOCS
    retrieve._CHUNK_DOCS = chunk
    try:
        _same_index(corpus)
    finally:
        retrieve._CHUNK_DOCS = default


def test_the_whole_array_index_is_bm25s_own_on_real_passages() -> None:
    texts = [
        "The James Webb Space Telescope orbits the Sun about 1.5 million km from Earth, at L2.",
        "Webb's primary mirror is 6.5 metres across and is made of 18 hexagonal segments.",
        "Hubble orbits about 540 km above the Earth; Hubble was launched in 1990.",
        "嫦娥五号于2020年12月17日携带月球样品返回地球，共采集1731克月壤。",
        "月球探测工程分为绕、落、回三步，嫦娥五号完成了第三步。",
        "",
    ]
    _same_index([PassageIndex.terms(t) for t in texts])


def test_idf_counts_the_passages_that_hold_a_term() -> None:
    texts = ["solar wind speed", "solar panels", "wind farms and wind speed"]
    records = [Record(index=i, url=f"https://example.org/{i}", title="", content=t)
               for i, t in enumerate(texts)]
    passages = [Passage(id=i, record=i, start=0, end=len(t), text=t) for i, t in enumerate(texts)]
    index = PassageIndex(passages, records, "en")
    idf = index.idf
    assert idf("solar") == idf("wind") < idf("panel") == idf("farm") < idf("absent")
    assert [pid for pid, _ in index.search("wind speed", k=3)] == [2, 0]


def test_the_whole_array_index_refuses_a_variant_it_does_not_compute() -> None:
    with pytest.raises(ValueError, match="lucene"):
        _BM25(method="bm25+").index(([[0, 1]], {"a": 0, "b": 1}), show_progress=False)
