"""Loading benchmark cases and scoring traced output (definitions: ../shared/bench/README.md)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

DEFAULT_BENCH = Path(__file__).resolve().parents[2].parent / "shared" / "bench" / "dev.jsonl"


def require_bench(path: Path) -> Path:
    """`path`, or exit with a message saying where the benchmark comes from."""
    if not path.is_file():
        raise SystemExit(
            f"benchmark file not found: {path}\n"
            "Pass BENCH.jsonl as the first argument. The citation benchmark's dev split is not part of "
            "this repository: the scripts look for it at ../shared/bench/dev.jsonl beside the checkout "
            "(one JSON case per line; ../shared/bench/README.md defines the format and the metrics)."
        )
    return path


def load_cases(path: Path) -> list[dict[str, Any]]:
    with require_bench(path).open("rb") as fh:
        return [orjson.loads(line) for line in fh if line.strip()]


def norm_url(url: str) -> str:
    url = url.strip().lower()
    return url[:-1] if url.endswith("/") else url


def source_of(case: dict[str, Any]) -> str:
    return str(case["id"]).split("-", 1)[0]


@dataclass
class Tally:
    emitted: int = 0
    correct: int = 0
    supportable: int = 0
    recalled: int = 0
    unsupportable: int = 0
    abstained: int = 0

    def add(self, other: Tally) -> None:
        for k in vars(self):
            setattr(self, k, getattr(self, k) + getattr(other, k))

    @property
    def precision(self) -> float:
        return self.correct / self.emitted if self.emitted else 1.0

    @property
    def recall(self) -> float:
        return self.recalled / self.supportable if self.supportable else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def abstain(self) -> float:
        return self.abstained / self.unsupportable if self.unsupportable else 1.0


@dataclass
class Pair:
    gold: int
    url: str
    score: float
    correct: bool
    citation: dict[str, Any] = field(default_factory=dict)
    source: dict[str, Any] = field(default_factory=dict)


def attach(case: dict[str, Any], citations: Iterable[dict[str, Any]]) -> list[Pair]:
    """Attach each emitted (sentence, url) to the gold sentence its span overlaps most."""
    gold = case["gold"]
    best: dict[tuple[int, str], Pair] = {}
    for cit in citations:
        s, e = int(cit["start"]), int(cit["end"])
        overlaps = [(min(e, g["end"]) - max(s, g["start"]), i) for i, g in enumerate(gold)]
        ov, gi = max(overlaps, default=(0, -1))
        if ov <= 0:
            continue
        g = gold[gi]
        ok_urls = {norm_url(u) for u in g.get("supporting_urls", []) + g.get("partially_supporting_urls", [])}
        for src in cit["sources"]:
            key = (gi, norm_url(src["url"]))
            pair = Pair(gi, src["url"], float(src.get("score", 0.0)), key[1] in ok_urls, cit, src)
            if key not in best or pair.score > best[key].score:
                best[key] = pair
    return list(best.values())


def tally(case: dict[str, Any], pairs: list[Pair], min_score: float = 0.0) -> Tally:
    t = Tally()
    kept = [p for p in pairs if p.score >= min_score]
    t.emitted = len(kept)
    t.correct = sum(p.correct for p in kept)
    cited = {p.gold for p in kept}
    correct_gold = {p.gold for p in kept if p.correct}
    for i, g in enumerate(case["gold"]):
        if g.get("supporting_urls") or g.get("partially_supporting_urls"):
            t.supportable += 1
            t.recalled += i in correct_gold
        else:
            t.unsupportable += 1
            t.abstained += i not in cited
    return t


def groups(case: dict[str, Any]) -> Iterator[str]:
    yield source_of(case)
    yield f"lang:{case['lang']}"
    yield "overall"
