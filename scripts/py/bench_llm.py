"""scripts/bench-llm: chunked + concurrent LLM matching vs the sequential full-record design."""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from server.llm_client import LLMConfig, backend_from_config  # noqa: E402
from tests.fake_openai import (  # noqa: E402
    FakeOpenAI,
    Reply,
    match_json,
    passage_texts,
    sentence_texts,
)
from tracer.llm import LLMSettings, Strategy  # noqa: E402
from tracer.options import Mode, TraceOptions  # noqa: E402
from tracer.pipeline import trace  # noqa: E402

SYLLABLES = ["ka", "lo", "mi", "ra", "te", "no", "su", "vi", "de", "po", "zan", "el", "or", "qui", "ba"]
VERBS = ["reported", "announced", "measured", "recorded", "estimated", "published", "observed"]
UNITS = ["megawatts", "tonnes", "percent", "million dollars", "patients", "kilometres", "households"]


def word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))


def fact(rng: random.Random) -> str:
    subject = f"The {word(rng)} {word(rng)} of {word(rng).title()}"
    return (f"{subject} {rng.choice(VERBS)} {rng.randint(2, 990)} {rng.choice(UNITS)} in "
            f"{rng.randint(1990, 2024)}, according to the {word(rng)} {word(rng)} survey.")


def make_case(n_records: int, n_sentences: int, seed: int = 7) -> tuple[str, list[dict[str, Any]]]:
    """A report whose sentences come in pairs from records; records of ~3,000 characters."""
    rng = random.Random(seed)
    records = []
    for i in range(n_records):
        facts: list[str] = []
        while sum(len(f) + 1 for f in facts) < 3000:
            facts.append(fact(rng))
        records.append({"url": f"https://example.org/{i}", "title": f"Record {i}",
                        "content": " ".join(facts)})
    sentences: list[str] = []
    for rec in rng.sample(records, (n_sentences + 1) // 2):
        facts = rec["content"].split(". ")
        start = rng.randrange(0, len(facts) - 2)
        sentences += [f.rstrip(".") + "." for f in facts[start:start + 2]]
    report = "# Findings\n\n" + "\n".join(" ".join(sentences[i:i + 3])
                                         for i in range(0, n_sentences, 3)) + "\n"
    return report, records


def run(strategy: Strategy, report: str, records: list[dict[str, Any]], delay: float) -> dict[str, Any]:
    def model(body: dict[str, Any], n: int) -> Reply:
        """An oracle: recognition says every sentence; matching cites passages quoting the sentence."""
        sents = sentence_texts(body)
        if "sentences_needing_citation" in body["messages"][0]["content"]:
            return Reply(json.dumps({"sentences_needing_citation": list(sents)}), delay=delay)
        passages = passage_texts(body)
        found = {s: [p for p, ptext in passages.items() if stext.rstrip(".") in ptext][:3]
                 for s, stext in sents.items()}
        return Reply(match_json({s: p for s, p in found.items() if p}), delay=delay)

    with FakeOpenAI(model) as srv:
        llm = backend_from_config(LLMConfig(base_url=srv.base_url, model="bench", settings=LLMSettings(
            strategy=strategy, max_calls=0, max_tokens=0, timeout=120.0)))
        t0 = time.perf_counter()
        result = trace(report, records, TraceOptions(mode=Mode.LLM), llm=llm)
        wall = time.perf_counter() - t0
        spans = sorted((e.start, e.end) for e in srv.log)
    peak = level = 0
    for _, d in sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans]):
        level += d
        peak = max(peak, level)
    st = result.stats
    return {"wall": wall, "match_s": st.stage_ms.get("match", 0.0) / 1000, "calls": st.llm_calls,
            "prompt": st.llm_prompt_tokens, "completion": st.llm_completion_tokens, "peak": peak,
            "cited": st.cited_sentences, "degraded": result.degraded}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--records", type=int, default=200)
    ap.add_argument("--sentences", type=int, default=50)
    ap.add_argument("--delay", type=float, default=0.2, help="fake model latency per call, seconds")
    ap.add_argument("--dev", action="store_true",
                    help="instead: dev-benchmark quality against scripted fake models (eval_llm.py)")
    ap.add_argument("--models", default="hallucinate,plausible,garbage,500,slow")
    ap.add_argument("--limit", type=int, default=0, help="--dev: only the first N cases")
    ap.add_argument("--llm-min-score", default="auto",
                    help="--dev: llm.min_score for model-proposed pairs (auto: the request's min_score)")
    ap.add_argument("--llm-keep-score", default="0.9",
                    help="--dev: llm.keep_score for sentences the model left uncited (off, or a score)")
    args = ap.parse_args()
    if args.dev:
        from eval_llm import MODELS, evaluate

        unknown = [m for m in args.models.split(",") if m not in MODELS]
        if unknown:
            ap.error(f"--models: unknown {', '.join(unknown)} (known: {', '.join(MODELS)})")
        floor = None if args.llm_min_score == "auto" else float(args.llm_min_score)
        keep = None if args.llm_keep_score == "off" else float(args.llm_keep_score)
        evaluate(args.models.split(","), limit=args.limit, min_score=floor, keep_score=keep)
        return 0
    report, records = make_case(args.records, args.sentences)
    print(f"case: {args.records} records (~3,000 chars each), {args.sentences} sentences; "
          f"fake model latency {args.delay * 1000:.0f} ms; "
          "tokens = words, CJK characters and punctuation of the prompt")
    rows = {s: run(s, report, records, args.delay) for s in (Strategy.CHUNKED, Strategy.FULL)}
    print(f"{'design':<24}{'calls':>7}{'peak':>6}{'wall s':>9}{'match s':>9}{'prompt tok':>12}"
          f"{'compl tok':>11}{'cited':>7}")
    names = {Strategy.CHUNKED: "chunked + concurrent", Strategy.FULL: "full, sequential"}
    for s, r in rows.items():
        print(f"{names[s]:<24}{r['calls']:>7}{r['peak']:>6}{r['wall']:>9.2f}{r['match_s']:>9.2f}"
              f"{r['prompt']:>12}{r['completion']:>11}{r['cited']:>7}"
              + ("  DEGRADED" if r["degraded"] else ""))
    c, f = rows[Strategy.CHUNKED], rows[Strategy.FULL]
    wall_ratio = c["wall"] / f["wall"]
    tok_ratio = f["prompt"] / max(1, c["prompt"])
    ok_wall = "OK" if wall_ratio <= 1 / 3 else "MISS"
    ok_tok = "OK" if tok_ratio >= 5 else "MISS"
    print(f"wall: chunked/full = {wall_ratio:.3f} (target <= 0.333) {ok_wall}")
    print(f"prompt tokens: full/chunked = {tok_ratio:.1f}x (target >= 5x) {ok_tok}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
