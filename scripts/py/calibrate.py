"""Fit the logistic support model (tracer.options.Tuning.weights/bias) on a benchmark split.

For each gold sentence, candidate records come from the real retrieve stage; a pair is
positive when the record's URL is in the sentence's supporting or partially supporting set.
Each record is represented by its best passage under the current weights (refit a few rounds).
Prints the weights to paste into Tuning, and the held-in log loss. Tuning data only: the
fitted values are reviewed and committed by hand (docs/quality.md).

    scripts/calibrate [BENCH.jsonl] [--rounds 3] [--l2 1.0]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchdata import DEFAULT_BENCH, load_cases, norm_url  # noqa: E402

from tracer import records as records_stage  # noqa: E402
from tracer.match import _rank_of  # noqa: E402
from tracer.options import Tuning  # noqa: E402
from tracer.retrieve import PassageIndex  # noqa: E402
from tracer.text import detect_language  # noqa: E402
from tracer.verify import FEATURES, Verifier, sentence_query  # noqa: E402


def collect(cases: list[dict], tuning: Tuning) -> list[tuple[str, list[list[float]], int]]:
    """Per (gold sentence, record): the feature vectors of its candidate passages, and the label."""
    rows = []
    for case in cases:
        recs, _ = records_stage.normalize_records(case["records"])
        passages = records_stage.split_passages(recs, tuning.passage_chars, tuning.passage_overlap)
        lang = detect_language(case["report"])
        index = PassageIndex(passages, recs, lang)
        ver = Verifier(index, recs, tuning)
        for g in case["gold"]:
            ok = {norm_url(u) for u in g.get("supporting_urls", []) + g.get("partially_supporting_urls", [])}
            cands = index.search(sentence_query(g["sentence"]), tuning.retrieve_top_k)
            ranks = _rank_of(cands, index)
            per_rec: dict[int, list[list[float]]] = {}
            for pid, _ in cands:
                rec = passages[pid].record
                f = ver.features(g["sentence"], pid, ranks.get(rec, 0.0))
                per_rec.setdefault(rec, []).append(f.vector() + [1.0 if f.exact else 0.0])
            for rec, vecs in per_rec.items():
                rows.append((lang, vecs, int(norm_url(recs[rec].url) in ok)))
    return rows


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> np.ndarray:
    """Logistic regression by Newton's method with an L2 penalty (bias unpenalised)."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    reg = np.full(xb.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-xb @ w))
        grad = xb.T @ (p - y) + reg * w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + np.diag(reg) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return w


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("bench", nargs="?", type=Path, default=DEFAULT_BENCH)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--l2", type=float, default=1.0)
    args = ap.parse_args()
    tuning = Tuning()
    all_rows = collect(load_cases(args.bench), tuning)
    for lang in ("en", "zh"):
        rows = [r for r in all_rows if r[0] == lang]
        if not rows:
            continue
        weights, bias = tuning.model(lang)
        w = np.array(list(weights) + [bias])
        for _ in range(args.rounds):
            xs, ys = [], []
            for _lang, vecs, label in rows:
                v = np.array(vecs)[:, : len(FEATURES)]
                xs.append(v[np.argmax(v @ w[:-1])])
                ys.append(label)
            x, y = np.array(xs), np.array(ys, dtype=float)
            w = fit(x, y, args.l2)
        p = 1 / (1 + np.exp(-(np.hstack([x, np.ones((len(x), 1))]) @ w)))
        loss = -np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))
        print(f"[{lang}] pairs={len(y)} positives={int(y.sum())} logloss={loss:.4f}")
        for name, val in zip(FEATURES, w[:-1], strict=True):
            print(f"  {name:<9} {val:+.3f}")
        print(f"weights_{lang}=(" + ", ".join(f"{v:.3f}" for v in w[:-1]) + f"), bias_{lang}={w[-1]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
