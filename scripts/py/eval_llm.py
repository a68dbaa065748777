"""Dev-benchmark quality of the LLM path against scripted fake models (no real model needed):

    scripts/bench-llm --dev [--models hallucinate,garbage,500,slow,plausible] [--limit N]

For each fake behaviour, every case is traced in-process through the real openai client against
tests/fake_openai.py; prints precision/recall/F1 beside the deterministic path, how many requests
were degraded and whether any failed. The verify gate must keep precision >= deterministic."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchdata import DEFAULT_BENCH, Tally, attach, load_cases, tally

from server.llm_client import LLMConfig, backend_from_config
from tests.fake_openai import FakeOpenAI, Reply, candidates_first, hallucinate
from tracer.llm import LLMSettings
from tracer.options import Mode, TraceOptions
from tracer.pipeline import trace

Model = Callable[[dict[str, Any], int], Reply]

MODELS: dict[str, tuple[Model, dict[str, Any]]] = {
    "hallucinate": (hallucinate, {}),
    "plausible": (candidates_first, {}),
    "garbage": (lambda b, n: Reply("```json\n{oops, not json}\n```"), {}),
    "500": (lambda b, n: Reply(status=500), {"retries": 1, "backoff": 0.01}),
    "slow": (lambda b, n: Reply(json.dumps({"source_traced_results": []}), delay=1.0),
             {"timeout": 0.3, "retries": 0}),
}


def _citations(result: Any) -> list[dict[str, Any]]:
    return [{"start": c.start, "end": c.end,
             "sources": [{"url": s.url, "score": s.score} for s in c.sources]} for c in result.citations]


def evaluate(models: list[str], bench: Path = DEFAULT_BENCH, limit: int = 0) -> None:
    cases = load_cases(bench)
    if limit:
        cases = cases[:limit]
    rows: list[tuple[str, Tally, int, int, float, int]] = []
    det = Tally()
    t0 = time.perf_counter()
    for case in cases:
        res = trace(case["report"], case["records"], TraceOptions(mode=Mode.DETERMINISTIC))
        det.add(tally(case, attach(case, _citations(res))))
    rows.append(("deterministic", det, 0, 0, time.perf_counter() - t0, 0))
    for name in models:
        model, settings = MODELS[name]
        tot, degraded, failed, calls = Tally(), 0, 0, 0
        t0 = time.perf_counter()
        with FakeOpenAI(model) as srv:
            llm = backend_from_config(LLMConfig(base_url=srv.base_url, model=name,
                                                settings=LLMSettings(**settings)))
            for case in cases:
                try:
                    res = trace(case["report"], case["records"], TraceOptions(mode=Mode.LLM), llm=llm)
                except Exception as exc:  # a failed request is exactly what must never happen
                    failed += 1
                    print(f"  FAILED {case['id']}: {type(exc).__name__}: {exc}")
                    continue
                degraded += res.degraded
                calls += res.stats.llm_calls
                tot.add(tally(case, attach(case, _citations(res))))
        rows.append((f"llm:{name}", tot, degraded, failed, time.perf_counter() - t0, calls))
    print(f"{len(cases)} cases from {bench.name}")
    print(f"{'path':<16}{'precision':>10}{'recall':>8}{'f1':>7}{'pairs':>7}{'degraded':>10}{'failed':>8}"
          f"{'calls':>7}{'s':>7}")
    for name, t, deg, fail, secs, calls in rows:
        print(f"{name:<16}{t.precision:>10.3f}{t.recall:>8.3f}{t.f1:>7.3f}{t.emitted:>7}{deg:>10}{fail:>8}"
              f"{calls:>7}{secs:>7.1f}")
