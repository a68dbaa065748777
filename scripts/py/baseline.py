"""The benchmark's naive reference point (../shared/bench/README.md, "Metrics"), run here so that
the tracer can be compared with it on the same cases in the same run.

For each gold sentence (it is told which sentences are gold; the tracer must find them itself),
cite the one record with the highest share of the sentence's word tokens (jieba words for
Chinese) found in it (title and content) when that share is at least 0.55. Nothing else: no
retrieval, no numbers, no verification. It reads every record for every gold sentence.
"""

from __future__ import annotations

import re
from typing import Any

import rjieba

THRESHOLD = 0.55
_WORD = re.compile(r"\w+")


def tokens(text: str, lang: str) -> list[str]:
    """Lowercased word tokens: `\\w+` runs for English, jieba words (punctuation and space
    dropped) for Chinese."""
    if lang == "zh":
        return [t for t in (w.strip().lower() for w in rjieba.cut(text)) if t and _WORD.fullmatch(t)]
    return _WORD.findall(text.lower())


def naive_trace(case: dict[str, Any], threshold: float = THRESHOLD) -> dict[str, Any]:
    """Citations in the shape `scripts/eval` scores: one source at most per gold sentence,
    `score` = the share of the sentence's tokens found in the record."""
    lang = case.get("lang", "en")
    vocab = [set(tokens(f"{r.get('title') or ''} {r.get('content') or ''}", lang)) for r in case["records"]]
    citations = []
    for g in case["gold"]:
        words = tokens(g["sentence"], lang)
        if not words:
            continue
        best, best_share = -1, 0.0
        for i, v in enumerate(vocab):
            share = sum(w in v for w in words) / len(words)
            if share > best_share:
                best, best_share = i, share
        if best >= 0 and best_share >= threshold:
            citations.append({"start": g["start"], "end": g["end"], "sentence": g["sentence"],
                              "sources": [{"url": case["records"][best]["url"], "score": best_share}]})
    return {"citations": citations, "unsupported": [], "report": case["report"]}
