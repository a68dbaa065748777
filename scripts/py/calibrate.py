"""Fit the logistic support model (tracer.options.Tuning.weights_*/bias_*) on a benchmark split.

For each gold sentence, candidate records come from the real retrieve stage. A pair is
positive when the record's URL is in the sentence's supporting or partially supporting set.
Each record is represented by its best passage under the current weights, and the model is
refit a few rounds. The script prints the weights to paste into Tuning, plus a K-fold
cross-validated estimate (folds by case) of precision, recall and F1 at several thresholds
on gold sentences. That estimate, not the in-sample fit, is what to expect on unseen data
(docs/quality.md).

    scripts/calibrate [BENCH.jsonl] [--rounds 3] [--l2 0.3] [--cv 5] [--seeds 1] [--idf-floor N]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchdata import DEFAULT_BENCH, Tally, load_cases, norm_url, source_of  # noqa: E402

from tracer import records as records_stage  # noqa: E402
from tracer.match import record_ranks  # noqa: E402
from tracer.options import Tuning  # noqa: E402
from tracer.retrieve import PassageIndex  # noqa: E402
from tracer.text import detect_language  # noqa: E402
from tracer.verify import (  # noqa: E402
    CONFLICT_SCORE,
    FEATURES,
    NEAR_EXACT_FUZZY,
    NEAR_EXACT_MIN_LENGTH,
    NEAR_EXACT_SCORE,
    Verifier,
    sentence_query,
)


@dataclass
class Row:
    case: int
    gold: int
    lang: str
    source_key: str
    vectors: np.ndarray   # one feature vector per candidate passage of this record
    exact: bool
    conflicts: np.ndarray  # per passage: its evidence quote contradicts the sentence (capped score)
    label: int


def collect(cases: list[dict[str, Any]], tuning: Tuning) -> list[Row]:
    """One row per (gold sentence, candidate record)."""
    rows = []
    for ci, case in enumerate(cases):
        recs, _ = records_stage.normalize_records(case["records"])
        passages = records_stage.split_passages(recs, tuning.passage_chars, tuning.passage_overlap)
        lang = detect_language(case["report"])
        index = PassageIndex(passages, recs, lang, tuning.idf_floor)
        ver = Verifier(index, recs, tuning)
        for gi, g in enumerate(case["gold"]):
            ok = {norm_url(u) for u in g.get("supporting_urls", []) + g.get("partially_supporting_urls", [])}
            cands = index.search(sentence_query(g["sentence"]), tuning.retrieve_top_k)
            ranks = record_ranks(cands, index)
            per_rec: dict[int, list[list[float]]] = {}
            conflicts: dict[int, list[bool]] = {}
            exact: dict[int, bool] = {}
            for pid, _ in cands:
                rec = passages[pid].record
                f = ver.features(g["sentence"], pid, ranks.get(rec, 0.0))
                per_rec.setdefault(rec, []).append(f.vector())
                contradicted = not f.exact and ver.conflict(g["sentence"], pid) is not None
                conflicts.setdefault(rec, []).append(contradicted)
                exact[rec] = exact.get(rec, False) or f.exact
            for rec, vecs in per_rec.items():
                rows.append(Row(ci, gi, lang, recs[rec].source_key, np.array(vecs), exact[rec],
                                np.array(conflicts[rec]), int(norm_url(recs[rec].url) in ok)))
    return rows


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> np.ndarray:
    """Logistic regression by Newton's method with an L2 penalty (bias unpenalised)."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    reg = np.full(xb.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(60):
        p = 1 / (1 + np.exp(-xb @ w))
        grad = xb.T @ (p - y) + reg * w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + np.diag(reg) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-7:
            break
    return w


# Number agreement must count for support, never against it (a claim's number that the record
# does not state is evidence of a wrong citation): its weight is held at or above this floor.
NUMBERS = FEATURES.index("numbers")
MIN_NUMBERS_WEIGHT = 1.0


def fit_monotone(x: np.ndarray, y: np.ndarray, l2: float) -> np.ndarray:
    """`fit`, with the numbers weight clamped to MIN_NUMBERS_WEIGHT (the rest refit around it)."""
    w = fit(x, y, l2)
    if w[NUMBERS] >= MIN_NUMBERS_WEIGHT:
        return w
    rest = [i for i in range(x.shape[1]) if i != NUMBERS]
    offset = MIN_NUMBERS_WEIGHT * x[:, NUMBERS]
    xb = np.hstack([x[:, rest], np.ones((len(x), 1))])
    v = np.zeros(xb.shape[1])
    reg = np.full(xb.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(60):
        p = 1 / (1 + np.exp(-(xb @ v + offset)))
        grad = xb.T @ (p - y) + reg * v
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + np.diag(reg) + 1e-9 * np.eye(len(v))
        step = np.linalg.solve(hess, grad)
        v -= step
        if np.abs(step).max() < 1e-7:
            break
    out = np.zeros(x.shape[1] + 1)
    out[rest] = v[:-1]
    out[NUMBERS] = MIN_NUMBERS_WEIGHT
    out[-1] = v[-1]
    return out


def fit_rounds(rows: list[Row], start: np.ndarray, rounds: int, l2: float) -> np.ndarray:
    """Refit while re-choosing each record's best passage under the current weights."""
    w = start
    for _ in range(rounds):
        x = np.array([r.vectors[np.argmax(r.vectors @ w[:-1])] for r in rows])
        y = np.array([r.label for r in rows], dtype=float)
        w = fit_monotone(x, y, l2)
    return w


def score(rows: list[Row], w: np.ndarray) -> np.ndarray:
    """Each row's score as the verifier gives it: its best passage, a near-verbatim passage (every
    number stated) at least NEAR_EXACT_SCORE, at most CONFLICT_SCORE when that best passage is
    contradicted, an exact quote 1.0."""
    fuzzy, numbers, length = (FEATURES.index(k) for k in ("fuzzy", "numbers", "length"))
    out = []
    for r in rows:
        s = 1 / (1 + np.exp(-(r.vectors @ w[:-1] + w[-1])))
        v = r.vectors
        near = ((v[:, fuzzy] >= NEAR_EXACT_FUZZY) & (v[:, numbers] == 1.0)
                & (v[:, length] >= NEAR_EXACT_MIN_LENGTH))
        s = np.where(near, np.maximum(s, NEAR_EXACT_SCORE), s)
        best = int(np.argmax(s))  # a record whose best passage is contradicted is contradicted
        out.append(1.0 if r.exact else float(min(s[best], CONFLICT_SCORE) if r.conflicts[best] else s[best]))
    return np.array(out)


def case_tallies(cases: list[dict[str, Any]], rows: list[Row], scores: np.ndarray, tuning: Tuning,
                 threshold: float) -> list[Tally]:
    """Each case's metrics on its gold sentences with the engine's selection rule (threshold,
    margin, cap 3; a source after the best also at or above the default threshold,
    `tuning.min_score`)."""
    by_gold: dict[tuple[int, int], list[tuple[float, Row]]] = {}
    for r, s in zip(rows, scores, strict=True):
        by_gold.setdefault((r.case, r.gold), []).append((float(s), r))
    out = []
    for ci, case in enumerate(cases):
        t = Tally()
        for gi, g in enumerate(case["gold"]):
            cands = sorted(by_gold.get((ci, gi), []), key=lambda c: -c[0])
            kept = [c for c in cands if c[0] >= threshold]
            if kept:
                floor = max(kept[0][0] - tuning.second_source_margin, tuning.min_score)
                kept = [kept[0], *(c for c in kept[1:] if c[0] >= floor)][:3]
            t.emitted += len(kept)
            t.correct += sum(c[1].label for c in kept)
            if g.get("supporting_urls") or g.get("partially_supporting_urls"):
                t.supportable += 1
                t.recalled += any(c[1].label for c in kept)
            else:
                t.unsupportable += 1
                t.abstained += not kept
        out.append(t)
    return out


def evaluate(cases: list[dict[str, Any]], rows: list[Row], scores: np.ndarray, tuning: Tuning,
             threshold: float) -> dict[str, Tally]:
    """Metrics per source and overall (`case_tallies`, summed)."""
    out: dict[str, Tally] = {}
    for case, t in zip(cases, case_tallies(cases, rows, scores, tuning, threshold), strict=True):
        for key in (source_of(case), "overall"):
            out.setdefault(key, Tally()).add(t)
    return out


# Issue 3's targets: overall precision and F1, and F1 per source.
TARGET_PRECISION = 0.90
TARGET_F1 = 0.84
TARGET_SOURCE_F1 = {"expertqa": 0.65, "wice": 0.85, "citecheck": 0.88}


def _f1(correct: np.ndarray, emitted: np.ndarray, recalled: np.ndarray,
        supportable: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = np.where(emitted > 0, correct / np.maximum(emitted, 1), 1.0)
    r = np.where(supportable > 0, recalled / np.maximum(supportable, 1), 1.0)
    return p, np.where(p + r > 0, 2 * p * r / np.maximum(p + r, 1e-12), 0.0)


def chance(cases: list[dict[str, Any]], tallies: list[Tally], size: int, draws: int,
           rng: np.random.RandomState) -> tuple[int, int]:
    """Draw `draws` splits of `size` cases from these cases' (cross-validated) tallies, with
    replacement, each source in its share of dev; count the draws that meet the overall targets
    (precision and F1) and those that meet every target (the per-source F1s as well)."""
    sources = [source_of(c) for c in cases]
    cols = np.array([[t.correct, t.emitted, t.recalled, t.supportable] for t in tallies], dtype=float)
    total = np.zeros((draws, 4))
    per_source_ok = np.ones(draws, dtype=bool)
    for src in sorted(set(sources)):
        idx = np.array([i for i, s in enumerate(sources) if s == src])
        n = max(1, round(size * len(idx) / len(cases)))
        picked = cols[idx[rng.randint(0, len(idx), (draws, n))]].sum(axis=1)
        total += picked
        if src in TARGET_SOURCE_F1:
            _, f = _f1(*picked.T)
            per_source_ok &= f >= TARGET_SOURCE_F1[src]
    p, f = _f1(*total.T)
    overall_ok = (p >= TARGET_PRECISION) & (f >= TARGET_F1)
    return int(overall_ok.sum()), int((overall_ok & per_source_ok).sum())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench", nargs="?", type=Path, default=DEFAULT_BENCH)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--l2", type=float, default=0.3)
    ap.add_argument("--cv", type=int, default=5, help="folds for the cross-validated estimate (0: skip)")
    ap.add_argument("--seeds", type=int, default=1, help="redraw the folds this many times and average")
    ap.add_argument("--idf-floor", type=int, default=None, help="try another Tuning.idf_floor")
    ap.add_argument("--loo", action="store_true",
                    help="leave one case out: as many folds as cases, one case each (ignores --cv, --seeds)")
    ap.add_argument("--chance", type=str, default="",
                    help="comma-separated split sizes (cases): the share of resampled splits of that size "
                         "that would meet issue 3's targets, from the cross-validated scores")
    ap.add_argument("--draws", type=int, default=3000, help="resampled splits per size and --seeds split")
    args = ap.parse_args()
    sizes = [int(v) for v in args.chance.split(",") if v.strip()]
    if args.loo:
        args.cv, args.seeds = len(load_cases(args.bench)), 1
    tuning = Tuning() if args.idf_floor is None else Tuning(idf_floor=args.idf_floor)
    cases = load_cases(args.bench)
    rows = collect(cases, tuning)
    start = np.zeros(len(FEATURES) + 1)
    start[0] = 1.0  # round one picks each record's passage by coverage

    for lang in ("en", "zh"):
        part = [r for r in rows if r.lang == lang]
        if not part:
            continue
        w = fit_rounds(part, start, args.rounds, args.l2)
        print(f"[{lang}] pairs={len(part)} positives={sum(r.label for r in part)}")
        for name, val in zip(FEATURES, w[:-1], strict=True):
            print(f"  {name:<16} {val:+.3f}")
        print(f"weights_{lang}=(" + ", ".join(f"{v:.3f}" for v in w[:-1]) + f"), bias_{lang}={w[-1]:.3f}")

    if args.cv > 1:
        # Folds by case; with --seeds N the split is redrawn N times and the table is the mean
        # (one 121-case split moves F1 by about +-0.01, enough to hide a small change).
        thresholds = (0.5, 0.55, 0.6, 0.62, 0.64, 0.65, 0.66, 0.67, 0.68, 0.7, 0.75)
        sums: dict[tuple[float, str], list[float]] = {}
        met: dict[tuple[int, float], list[int]] = {}
        rng = np.random.RandomState(12345)
        for seed in range(args.seeds):
            if args.loo:
                fold = np.arange(len(cases))
            else:
                fold = np.random.RandomState(seed).randint(0, args.cv, len(cases))
            cv_scores = np.zeros(len(rows))
            for lang in ("en", "zh"):
                for k in range(args.cv):
                    train = [r for r in rows if r.lang == lang and fold[r.case] != k]
                    test_idx = [i for i, r in enumerate(rows) if r.lang == lang and fold[r.case] == k]
                    if not train or not test_idx:
                        continue
                    w = fit_rounds(train, start, args.rounds, args.l2)
                    cv_scores[test_idx] = score([rows[i] for i in test_idx], w)
            for th in thresholds:
                tallies = case_tallies(cases, rows, cv_scores, tuning, th)
                totals: dict[str, Tally] = {}
                for case, t in zip(cases, tallies, strict=True):
                    for key in (source_of(case), "overall"):
                        totals.setdefault(key, Tally()).add(t)
                for key, t in totals.items():
                    acc = sums.setdefault((th, key), [0.0, 0.0, 0.0])
                    acc[0] += t.precision / args.seeds
                    acc[1] += t.recall / args.seeds
                    acc[2] += t.f1 / args.seeds
                for size in sizes:
                    both, every = chance(cases, tallies, size, args.draws, rng)
                    acc_met = met.setdefault((size, th), [0, 0])
                    acc_met[0] += both
                    acc_met[1] += every
        label = f"mean over {args.seeds} splits, " if args.seeds > 1 else ""
        scheme = "leave one case out" if args.loo else f"{args.cv}-fold cross-validated"
        print(f"\n{scheme} estimate on gold sentences ({label}folds by case):")
        for th in thresholds:
            cells = " | ".join(f"{k} P{v[0]:.3f} R{v[1]:.3f} F{v[2]:.3f}" for (t, k), v in sums.items()
                               if t == th and k in ("expertqa", "wice", "citecheck", "overall"))
            print(f"  min_score={th:.2f}  {cells}")
        if sizes:
            n = args.draws * args.seeds
            print(f"\nShare of {n} resampled splits (cases drawn by source, with replacement, from the scores"
                  f" above) meeting overall P >= {TARGET_PRECISION} and F1 >= {TARGET_F1} / and every "
                  "per-source F1 target too:")
            for size in sizes:
                cells = "  ".join(f"{th:.2f}: {met[(size, th)][0] / n:.2f}/{met[(size, th)][1] / n:.2f}"
                                  for th in thresholds)
                print(f"  {size} cases  {cells}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
