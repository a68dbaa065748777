"""Grouping work into model calls.

Matching: each sentence brings its top-k candidate passages; sentences are packed, in report
order, into chunks whose passage union stays within `max_passages`, so a call shows the model
only plausible passages and every sentence lands in exactly one chunk with all its candidates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class MatchChunk:
    """One matching call: global sentence ids, their candidates, and the passages shown (global ids)."""

    sentences: tuple[int, ...]
    candidates: Mapping[int, tuple[int, ...]]
    passages: tuple[int, ...]


def plan_match_chunks(
    sentence_ids: Iterable[int],
    candidates: Mapping[int, Sequence[int]],
    top_k: int,
    max_passages: int,
    max_sentences: int,
) -> list[MatchChunk]:
    """Greedy, order-preserving packing. Sentences without candidates are left out (nothing to match)."""
    chunks: list[MatchChunk] = []
    cur_sents: list[int] = []
    cur_cands: dict[int, tuple[int, ...]] = {}
    cur_passages: dict[int, None] = {}  # insertion-ordered set

    def flush() -> None:
        if cur_sents:
            chunks.append(MatchChunk(tuple(cur_sents), dict(cur_cands), tuple(cur_passages)))
        cur_sents.clear()
        cur_cands.clear()
        cur_passages.clear()

    for sid in sentence_ids:
        cands = tuple(dict.fromkeys(candidates.get(sid, ())))[: min(top_k, max_passages)]
        if not cands:
            continue
        new = [p for p in cands if p not in cur_passages]
        if cur_sents and (len(cur_passages) + len(new) > max_passages or len(cur_sents) >= max_sentences):
            flush()
            new = list(cands)
        cur_sents.append(sid)
        cur_cands[sid] = cands
        for p in new:
            cur_passages[p] = None
    flush()
    return chunks


def batches(items: Sequence[int], size: int) -> list[tuple[int, ...]]:
    """Consecutive slices of at most `size` items."""
    return [tuple(items[i : i + size]) for i in range(0, len(items), size)]
