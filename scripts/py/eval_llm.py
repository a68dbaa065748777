"""Dev-benchmark quality of the LLM path against scripted fake models (no real model needed):

    scripts/bench-llm --dev [--models hallucinate,garbage,500,slow,plausible,oracle] [--limit N]
                            [--llm-min-score auto|X] [--llm-keep-score off|X]

For each fake behaviour, every case is traced in-process through the real openai client against
tests/fake_openai.py; prints precision/recall/F1 (overall and per source) beside the deterministic
path, how many requests were degraded and whether any failed. The verify gate must keep precision
>= deterministic for a model that proposes everything (`hallucinate`) at the default gate.

`oracle` is a perfect reader: it answers each matching call from the case's gold annotations (the
passages shown whose record the annotators marked as supporting the sentence); `reader90` and
`reader80` read 90% and 80% of the sentences that way and the rest wrongly. It measures how far
the LLM path can go at a given `llm.min_score` with a model that reads perfectly, and
`hallucinate` how far precision falls with one that proposes everything."""

from __future__ import annotations

import html
import json
import re
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchdata import DEFAULT_BENCH, Tally, attach, load_cases, norm_url, source_of, tally

from server.llm_client import LLMConfig, backend_from_config
from tests.fake_openai import FakeOpenAI, Reply, candidates_first, hallucinate
from tracer.llm import LLMSettings
from tracer.options import Mode, TraceOptions
from tracer.pipeline import trace

Model = Callable[[dict[str, Any], int], Reply]

_SPACE = re.compile(r"\s+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # as the prompt's `data` filter


def _flat(text: str) -> str:
    return _SPACE.sub(" ", _CONTROL.sub(" ", text)).strip()


class Oracle:
    """A reader for the case being traced (`case` is set before each trace): perfect, or wrong on
    a share `error` of the sentences (a fixed pseudo-random draw per case and sentence). A wrong
    reading proposes the first candidate shown that no annotator marked, instead of the right ones
    (or, for a sentence with none, instead of nothing)."""

    def __init__(self, error: float = 0.0) -> None:
        self.error = error
        self.case: dict[str, Any] = {}
        self._contents: list[tuple[str, str]] = []  # (normalised url, flattened content)

    def set_case(self, case: dict[str, Any]) -> None:
        self.case = case
        self._contents = [(norm_url(r["url"]), _flat(r["content"])) for r in case["records"]]

    def _urls_of(self, passage: str) -> set[str]:
        probe = passage[len(passage) // 3:len(passage) // 3 + 80] if len(passage) > 100 else passage
        return {url for url, content in self._contents if probe in content}

    def __call__(self, body: dict[str, Any], n: int) -> Reply:
        text = str(body["messages"][-1]["content"])
        if "sentences_needing_citation" in str(body["messages"][0]["content"]):
            ids = [int(m) for m in re.findall(r'<sentence id="(\d+)"', text)]
            return Reply(json.dumps({"sentences_needing_citation": ids}))
        passages = {int(m.group(1)): self._urls_of(_flat(html.unescape(m.group(2)))) for m in
                    re.finditer(r'<passage id="(\d+)">\n(.*?)\n</passage>', text, re.DOTALL)}
        results = []
        for m in re.finditer(r'<sentence id="(\d+)"(?: candidates="([\d,]*)")?>(.*?)</sentence>', text,
                             re.DOTALL):
            sentence = _flat(html.unescape(m.group(3)))
            good: set[str] = set()
            for g in self.case["gold"]:
                gold = _flat(g["sentence"])
                if gold in sentence or sentence in gold:
                    good |= {norm_url(u) for u in g.get("supporting_urls", []) +
                             g.get("partially_supporting_urls", [])}
            hits = [pid for pid, urls in passages.items() if urls & good]
            draw = zlib.crc32(f"{self.case['id']}|{sentence}".encode()) / 2**32
            if draw < self.error:  # a wrong reading
                shown = [int(x) for x in (m.group(2) or "").split(",") if x]
                hits = [pid for pid in shown if pid in passages and not passages[pid] & good][:1]
            if hits:
                results.append({"sentence": int(m.group(1)), "matched_source_indices": hits[:3]})
        return Reply(json.dumps({"source_traced_results": results}))


READERS = {"oracle": Oracle(), "reader90": Oracle(0.1), "reader80": Oracle(0.2)}

MODELS: dict[str, tuple[Model, dict[str, Any]]] = {
    "hallucinate": (hallucinate, {}),
    "plausible": (candidates_first, {}),
    "garbage": (lambda b, n: Reply("```json\n{oops, not json}\n```"), {}),
    "500": (lambda b, n: Reply(status=500), {"retries": 1, "backoff": 0.01}),
    "slow": (lambda b, n: Reply(json.dumps({"source_traced_results": []}), delay=1.0),
             {"timeout": 0.3, "retries": 0}),
    **{name: (reader, {}) for name, reader in READERS.items()},
}
SOURCES = ("expertqa", "wice", "citecheck")


def _citations(result: Any) -> list[dict[str, Any]]:
    return [{"start": c.start, "end": c.end,
             "sources": [{"url": s.url, "score": s.score} for s in c.sources]} for c in result.citations]


def evaluate(models: list[str], bench: Path = DEFAULT_BENCH, limit: int = 0,
             min_score: float | None = None, keep_score: float | None = LLMSettings().keep_score) -> None:
    cases = load_cases(bench)
    if limit:
        cases = cases[:limit]
    rows: list[tuple[str, dict[str, Tally], int, int, float, int]] = []
    det: dict[str, Tally] = {}
    t0 = time.perf_counter()
    for case in cases:
        res = trace(case["report"], case["records"], TraceOptions(mode=Mode.DETERMINISTIC))
        _add(det, case, tally(case, attach(case, _citations(res))))
    rows.append(("deterministic", det, 0, 0, time.perf_counter() - t0, 0))
    for name in models:
        model, settings = MODELS[name]
        tot: dict[str, Tally] = {}
        degraded = failed = calls = 0
        t0 = time.perf_counter()
        with FakeOpenAI(model) as srv:
            llm = backend_from_config(LLMConfig(base_url=srv.base_url, model=name, structured_output="none",
                                                settings=LLMSettings(**settings, min_score=min_score,
                                                                     keep_score=keep_score)))
            for case in cases:
                if isinstance(model, Oracle):
                    model.set_case(case)
                try:
                    res = trace(case["report"], case["records"], TraceOptions(mode=Mode.LLM), llm=llm)
                except Exception as exc:  # a failed request is exactly what must never happen
                    failed += 1
                    print(f"  FAILED {case['id']}: {type(exc).__name__}: {exc}")
                    continue
                degraded += res.degraded
                calls += res.stats.llm_calls
                _add(tot, case, tally(case, attach(case, _citations(res))))
        rows.append((f"llm:{name}", tot, degraded, failed, time.perf_counter() - t0, calls))
    gate = "the request's min_score" if min_score is None else f"{min_score:g}"
    keep = "off" if keep_score is None else f"{keep_score:g}"
    print(f"{len(cases)} cases from {bench.name}; model-proposed pairs need llm.min_score = {gate}; "
          f"llm.keep_score = {keep}")
    print(f"{'path':<16}{'precision':>10}{'recall':>8}{'f1':>7}{'pairs':>7}{'degraded':>10}{'failed':>8}"
          f"{'calls':>7}{'s':>7}   F1 " + " / ".join(SOURCES))
    for name, by, deg, fail, secs, calls in rows:
        t = by.get("overall", Tally())
        per = " / ".join(f"{by[k].f1:.3f}" if k in by else "-" for k in SOURCES)
        print(f"{name:<16}{t.precision:>10.3f}{t.recall:>8.3f}{t.f1:>7.3f}{t.emitted:>7}{deg:>10}{fail:>8}"
              f"{calls:>7}{secs:>7.1f}   {per}")


def _add(by: dict[str, Tally], case: dict[str, Any], t: Tally) -> None:
    for key in (source_of(case), "overall"):
        by.setdefault(key, Tally()).add(t)
