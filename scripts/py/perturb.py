"""How often a one-edit unfaithful sentence is still cited: a robustness check with no labels of
its own.

    scripts/perturb [BENCH.jsonl] [--min-score X] [--explain] [--only PREFIX] [--last] [--strict-figures]
    scripts/perturb --faithful
    scripts/perturb --abbreviate [BENCH.jsonl] [--min-score X] [--explain]
    scripts/perturb --frame [BENCH.jsonl] [--min-score X] [--explain]

For every gold sentence the tracer cites from one of its annotated supporting records (score at
or above `min_score`), the sentence is edited once in each of four ways, each of which makes it
say something its record does not:

- figure: its first number raised by one ("1937" -> "1938", "3.9%" -> "3.8%");
- negation: "not" after its first auxiliary ("was" -> "was not"), or "不" before its first verb;
- opposite: its first word from the conflict check's list of opposites swapped for the opposite
  ("increased" -> "decreased", "增长" -> "下降");
- name: a capitalised name inside an English sentence, or a person, place or organisation in a
  Chinese one, replaced by a name of the same sort from another case that its record never
  mentions.

Each edited sentence is scored against the same record exactly as a trace scores it
(`tracer.pipeline.explain_support`); it counts as still cited at or above `min_score`. An edit that
does not apply to a sentence (no number, no auxiliary) is not made. The edits are deterministic:
the same benchmark gives the same table.

`--abbreviate` makes a faithful edit instead, and counts how often the sentence is still cited
(here higher is better): in an English sentence, the first run of two or more capitalised words
("Field Training Detachment", "Food and Drug Administration") written as its initials ("FTD",
"FDA"), where the record never writes those initials itself, so that only reading an acronym as
the name it stands for keeps the citation.

`--frame` makes a faithful edit too: the sentence is credited to its source in words, as writer
agents do, with an old marker as the source's name ("According to [1], …", "[1] found that …",
"As shown in [1], …"; "如[1]所述，…", "[1]指出，…", "据[1]报道，…"), or opens with a connective
("Notably, …", "In addition, …", "It is worth noting that …"; "此外，…", "值得注意的是，…",
"总体而言，…"), and the table counts how often each is still cited (higher is better).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import rjieba  # noqa: E402
from benchdata import DEFAULT_BENCH, load_cases, norm_url  # noqa: E402

from tracer import records as record_stage  # noqa: E402
from tracer.conflict import (  # noqa: E402
    _EN_OPPOSITES,
    _ZH_OPPOSITES,
    ZH_NEGATIONS,
    aligned_share,
    quote_conflict,
)
from tracer.options import TraceOptions  # noqa: E402
from tracer.pipeline import explain_support  # noqa: E402
from tracer.text import abbreviations  # noqa: E402
from tracer.verify import sentence_query  # noqa: E402

KINDS = ("figure", "negation", "opposite", "name")
_NUMBER = re.compile(r"(?<![\d.,])\d+(?:[.,]\d+)*")
_AUXILIARY = re.compile(r"\b(?:is|are|was|were|has|have|had|can|will|could|would|did|does|should)\b"
                        r"(?! not\b)(?!n't)")
_EN_NAME = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]{2,}\b")
_NOT_NAMES = frozenset(
    "The A An In On At For Of And But Or It This That These Those He She They We I You His Her Their "
    "Its Our My Your As By To From With When While If However Also".split())
_ZH_NAME_TAGS = ("nr", "ns", "nt")


def _pairs(text: str) -> list[tuple[str, str]]:
    out = []
    for pair in text.split():
        a, b = pair.split(":")
        out += [(a, b), (b, a)]
    return out


EN_OPPOSITE_WORDS = _pairs(_EN_OPPOSITES)
ZH_OPPOSITE_WORDS = _pairs(_ZH_OPPOSITES)


@dataclass(frozen=True)
class Edit:
    kind: str
    sentence: str


def _bump(number: str) -> str:
    """The number raised by one in its last digit's place ("1937" -> "1938", "3.9" -> "4.0")."""
    digits = number.replace(",", "")
    if "." in digits:
        whole, frac = digits.split(".", 1)
        step = 10 ** -len(frac)
        return f"{float(digits) + step:.{len(frac)}f}"
    return str(int(digits) + 1)


def _names(cases: list[dict[str, Any]]) -> tuple[list[str], dict[str, list[str]]]:
    """Every English capitalised name and Chinese name (by rjieba tag) in the gold sentences."""
    en: set[str] = set()
    zh: dict[str, set[str]] = {t: set() for t in _ZH_NAME_TAGS}
    for case in cases:
        for g in case["gold"]:
            sentence = case["report"][g["start"]:g["end"]]
            if case["lang"] == "zh":
                for word, tag in rjieba.tag(sentence):
                    if tag in zh and len(word) >= 2:
                        zh[tag].add(word)
            else:
                en.update(m.group(0) for m in _EN_NAME.finditer(sentence) if m.group(0) not in _NOT_NAMES)
    return sorted(en), {t: sorted(v) for t, v in zh.items()}


def _pick(items: list[Any], last: bool) -> Any:
    return (items[-1] if last else items[0]) if items else None


def edits(sentence: str, lang: str, record_text: str, en_names: list[str],
          zh_names: dict[str, list[str]], seed: int, last: bool = False) -> Iterator[Edit]:
    """The one-edit unfaithful versions of `sentence` that apply to it (see the module's text);
    with `last`, the last number, auxiliary or verb and opposite word, and other names."""
    m = _pick(list(_NUMBER.finditer(sentence)), last)
    if m:
        yield Edit("figure", sentence[:m.start()] + _bump(m.group(0)) + sentence[m.end():])
    low_record = record_text.lower()
    draw = seed * 7 + 3 if last else seed
    if lang == "zh":
        spans, pos = [], 0
        for word, tag in rjieba.tag(sentence):
            spans.append((pos, pos + len(word), word, tag))
            pos += len(word)
        if not any(n in sentence for n in ZH_NEGATIONS):
            verb = _pick([s for s in spans if s[3] == "v" and len(s[2]) >= 2], last)
            if verb:
                yield Edit("negation", sentence[:verb[0]] + "不" + sentence[verb[0]:])
        swaps: dict[tuple[int, int], str] = {}
        for start, end, word, _tag in spans:
            for a, b in ZH_OPPOSITE_WORDS:
                if a == word:
                    swaps.setdefault((start, end), b)
        at = _pick(sorted(swaps), last)
        if at:
            yield Edit("opposite", sentence[:at[0]] + swaps[at] + sentence[at[1]:])
        names = [s for s in spans if s[3] in _ZH_NAME_TAGS and len(s[2]) >= 2]
        if names:
            start, end, word, tag = names[draw % len(names)]
            pool = [n for n in zh_names[tag] if n not in record_text and n not in sentence]
            if pool:
                yield Edit("name", sentence[:start] + pool[draw % len(pool)] + sentence[end:])
        return
    if not re.search(r"\bnot\b|n't\b", sentence):
        aux = _pick(list(_AUXILIARY.finditer(sentence)), last)
        if aux:
            yield Edit("negation", sentence[:aux.end()] + " not" + sentence[aux.end():])
    opposites: dict[tuple[int, int], str] = {}
    for a, b in EN_OPPOSITE_WORDS:
        for hit in re.finditer(rf"\b{a}\b", sentence):
            opposites.setdefault(hit.span(), b)
    span = _pick(sorted(opposites), last)
    if span:
        yield Edit("opposite", sentence[:span[0]] + opposites[span] + sentence[span[1]:])
    capitals = [n for n in _EN_NAME.finditer(sentence) if n.group(0) not in _NOT_NAMES]
    if capitals:
        n = capitals[draw % len(capitals)]
        pool = [p for p in en_names if p.lower() not in low_record and p.lower() not in sentence.lower()]
        if pool:
            yield Edit("name", sentence[:n.start()] + pool[draw % len(pool)] + sentence[n.end():])


# The other side of the conflict check: sentences that deny what their quote says in other words,
# each faithful to its quote (written for this check, not taken from a benchmark). Every one read
# as a conflict would cost a right citation.
FAITHFUL = (
    ("The composer never married and had no children, living alone in Vienna until his death.",
     "The composer remained single all his life and lived alone in Vienna until he died childless.", "en"),
    ("The drug was not approved by the FDA for use in children under twelve years of age.",
     "The FDA has approved the drug only for patients aged twelve and older.", "en"),
    ("The bridge was not completed until 1932 because of funding problems during the Depression.",
     "Funding problems during the Depression delayed the completion of the bridge to 1932.", "en"),
    ("The company did not disclose the terms of the acquisition of the startup in its filing.",
     "Terms of the startup acquisition were kept confidential in the company filing.", "en"),
    ("Early settlers could not grow wheat in the region because the soil was too acidic.",
     "The acidic soil of the region made wheat cultivation impossible for early settlers.", "en"),
    ("The species is not found outside Madagascar, where it lives in dry forests of the west.",
     "The species is endemic to Madagascar, where it inhabits the dry forests of the west.", "en"),
    ("The vaccine does not contain live virus, so it cannot cause the disease it prevents.",
     "Because the vaccine contains only inactivated virus, it is unable to cause the disease.", "en"),
    ("The law does not require employers to reimburse workers for mileage, although many do.",
     "Federal law leaves mileage reimbursement to employers, and many of them pay it anyway.", "en"),
    ("The museum does not charge admission on Sundays, when entry to the galleries is free.",
     "Entry to the galleries of the museum is free on Sundays.", "en"),
    ("Penguins cannot fly, but they are excellent swimmers that hunt fish underwater.",
     "Penguins are flightless birds and excellent swimmers that hunt fish underwater.", "en"),
    ("The film did not perform well at the box office, earning only $2 million against a $30 million budget.",
     "The film was a box office flop, earning $2 million against a $30 million budget.", "en"),
    ("The treaty was never ratified by the Senate, so the United States did not join the league.",
     "The Senate rejected the treaty, and the United States stayed out of the league.", "en"),
    ("He did not attend university and instead started working at his father's shop at sixteen.",
     "Instead of going to university, he started working at his father's shop at sixteen.", "en"),
    ("不是所有患者都需要手术治疗，多数可以通过药物控制症状。",
     "多数患者可以通过药物控制症状，只有少数患者需要手术治疗。", "zh"),
    ("该项目并未按期完工，直到2015年才正式投入使用。", "该项目延期完工，于2015年正式投入使用。", "zh"),
    # a second set, written after the first had been read
    ("The startup did not make a profit in its first three years of operation.",
     "The startup lost money in each of its first three years of operation.", "en"),
    ("The island has no permanent residents and is visited only by researchers.",
     "The island is uninhabited apart from visiting researchers.", "en"),
    ("The painting was not sold at the auction because no bidder met the reserve price.",
     "The painting went unsold at the auction after bids fell short of the reserve price.", "en"),
    ("The singer did not release any new music between 2015 and 2019.",
     "The singer took a break from recording between 2015 and 2019.", "en"),
    ("The city does not allow cars in the historic centre on weekends.",
     "Cars are banned from the historic centre of the city on weekends.", "en"),
    ("The patient did not survive the surgery, according to the hospital statement.",
     "The patient died during the surgery, the hospital said in a statement.", "en"),
    ("The factory did not resume production until March because of the flood damage.",
     "Flood damage kept the factory closed until production resumed in March.", "en"),
    ("The study found no link between coffee consumption and heart disease.",
     "The study found that coffee consumption was unrelated to heart disease.", "en"),
    ("The team has never won the championship in its 50-year history.",
     "The team is still waiting for its first championship title after 50 years.", "en"),
    ("The bill did not pass the Senate, falling two votes short.",
     "The bill failed in the Senate, two votes short of a majority.", "en"),
    ("The company no longer manufactures typewriters at its Ohio plant.",
     "The company ended typewriter production at its Ohio plant.", "en"),
    ("The suspect was not charged and was released the same day.",
     "The suspect was released without charge the same day.", "en"),
    ("该公司去年没有盈利，净亏损达到3亿元。", "该公司去年净亏损3亿元。", "zh"),
    ("这座古桥至今没有进行过大规模修缮。", "这座古桥从建成至今从未大修。", "zh"),
    ("该地区全年几乎不下雪，冬季气温温和。", "该地区冬季气温温和，全年罕见降雪。", "zh"),
    # a third set, in Chinese, written after the second
    ("该药物不适用于孕妇和哺乳期妇女。", "孕妇和哺乳期妇女禁用该药物。", "zh"),
    ("这家餐厅周一不营业，其余时间正常开放。", "这家餐厅每周一休息，其余时间正常开放。", "zh"),
    ("该航班因天气原因未能按时起飞。", "受天气影响，该航班延误起飞。", "zh"),
    ("他从未公开谈论过自己的家庭生活。", "他对自己的家庭生活一直讳莫如深。", "zh"),
    ("这款手机不支持5G网络，只能使用4G。", "这款手机仅支持4G网络。", "zh"),
    ("该法案没有在议会获得通过。", "该法案在议会表决中被否决。", "zh"),
    ("比赛没有如期举行，推迟到了明年。", "比赛延期至明年举行。", "zh"),
    ("这座城市冬天很少下雪。", "这座城市冬季降雪稀少。", "zh"),
    ("公司没有透露具体的收购金额。", "公司未披露具体收购金额。", "zh"),
    ("这项研究并未发现两者之间存在因果关系。", "研究表明两者之间不存在因果关系。", "zh"),
    ("该景区不收取门票费用。", "该景区免费对游客开放。", "zh"),
    ("他没有参加当年的高考，而是直接出国留学。", "他放弃了当年的高考，直接出国留学。", "zh"),
)


def abbreviated(sentence: str, record_text: str) -> str | None:
    """`sentence` with its first run of capitalised words written as its initials (the whole run,
    after any opening word such as "The"), or None when it has none or the record writes those
    initials itself."""
    runs = [(start, acr, words) for start, acr, words in abbreviations(sentence)
            if start > 0 and words[0] not in _NOT_NAMES and len(acr) == len(words)]
    if not runs:
        return None
    first = min(start for start, _, _ in runs)
    start, acr, words = max((r for r in runs if r[0] == first), key=lambda r: len(r[2]))
    end = sentence.index(words[-1], start) + len(words[-1])
    if re.search(rf"\b{acr}s?\b", record_text):
        return None
    return sentence[:start] + acr + sentence[end:]


def faithful() -> int:
    """Print how the conflict check reads each FAITHFUL pair, and how many it reads as conflicts."""
    read = 0
    for sentence, quote, lang in FAITHFUL:
        got = quote_conflict(sentence_query(sentence), quote, lang)
        read += got is not None
        print(f"  {'CONFLICT ' + got.kind if got else 'agrees':<20} {sentence[:70]}")
    print(f"faithful negative paraphrases read as a conflict: {read} of {len(FAITHFUL)}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench", nargs="?", type=Path, default=DEFAULT_BENCH)
    ap.add_argument("--min-score", type=float, default=None, help="default: the tracer's own")
    ap.add_argument("--explain", action="store_true", help="list the edited sentences still cited")
    ap.add_argument("--only", help="only cases whose id starts with this")
    ap.add_argument("--last", action="store_true",
                    help="edit the last number, auxiliary or verb and opposite word instead of the first, "
                         "and draw other names: a second set of edits")
    ap.add_argument("--strict-figures", action="store_true", help="trace with the strict_figures option")
    ap.add_argument("--faithful", action="store_true",
                    help="instead: how many of a built-in set of faithful negative paraphrases the conflict "
                         "check reads as a conflict")
    ap.add_argument("--frame", action="store_true",
                    help="instead: how often a right citation survives its sentence crediting a named "
                         "source (\"According to [1], ...\", \"如[1]所述，...\") or opening with a "
                         "connective (\"Notably, ...\", \"此外，...\")")
    ap.add_argument("--abbreviate", action="store_true",
                    help="instead: how often a right citation survives its sentence writing a name as "
                         "its initials")
    args = ap.parse_args()
    if args.faithful:
        return faithful()

    every = load_cases(args.bench)
    cases = [c for c in every if c["id"].startswith(args.only)] if args.only else every
    options = TraceOptions(min_score=args.min_score, strict_figures=args.strict_figures).validated()
    threshold = options.threshold
    en_names, zh_names = _names(every)  # names from every case, whatever --only picks
    counts: Counter[tuple[str, ...]] = Counter()
    bases = 0
    for case in cases:
        recs, _warnings = record_stage.normalize_records(case["records"])
        for gi, g in enumerate(case["gold"]):
            sentence = case["report"][g["start"]:g["end"]]
            annotated = g.get("supporting_urls", []) + g.get("partially_supporting_urls", [])
            right = {norm_url(u) for u in annotated}
            for rec in recs:
                if norm_url(rec.url) not in right:
                    continue
                base = explain_support(sentence, case["records"], rec.index, options, case["lang"])
                if base is None or base.score < threshold:
                    continue
                bases += 1
                if args.frame:
                    for kind, framed in frames(sentence, case["lang"]):
                        got = explain_support(framed, case["records"], rec.index, options, case["lang"])
                        kept = got is not None and got.score >= threshold
                        counts[(case["lang"], kind)] += 1
                        counts[(case["lang"], kind, "cited")] += kept
                        if args.explain and not kept:
                            print(f"  NOT CITED [{case['id']}] score={got.score if got else 0:.3f} "
                                  f"(was {base.score:.3f})\n     sentence: {framed}")
                    continue
                if args.abbreviate:
                    english = case["lang"] == "en"
                    short = abbreviated(sentence, f"{rec.title} {rec.content}") if english else None
                    if short is not None:
                        got = explain_support(short, case["records"], rec.index, options, case["lang"])
                        kept = got is not None and got.score >= threshold
                        counts[("abbreviated",)] += 1
                        counts[("abbreviated", "cited")] += kept
                        if args.explain and not kept:
                            print(f"  NOT CITED [{case['id']}] score={got.score if got else 0:.3f} "
                                  f"(was {base.score:.3f})\n     sentence: {short}")
                    continue
                quote = rec.content[base.evidence_start:base.evidence_end]
                repeats = aligned_share(sentence_query(sentence), quote, case["lang"]) >= 0.5
                seed = sum(map(ord, case["id"])) + gi
                for edit in edits(sentence, case["lang"], f"{rec.title} {rec.content}", en_names, zh_names,
                                  seed, args.last):
                    got = explain_support(edit.sentence, case["records"], rec.index, options, case["lang"])
                    key = (case["lang"], edit.kind)
                    counts[key + ("made",)] += 1
                    counts[key + ("made", "repeats")] += repeats
                    if got is None:
                        continue
                    if got.score >= threshold:
                        counts[key + ("cited",)] += 1
                        counts[key + ("cited", "repeats")] += repeats
                        if args.explain:
                            quote = rec.content[got.evidence_start:got.evidence_end]
                            print(f"  STILL CITED [{case['id']}] {edit.kind} score={got.score:.3f} "
                                  f"(was {base.score:.3f}) match={got.match}\n"
                                  f"     sentence: {edit.sentence}\n     quote:    {quote[:300]!r}")
                    elif got.match == "contradicted":
                        counts[key + ("contradicted",)] += 1
    if args.frame:
        print(f"sentences crediting a named source or opening with a connective, from {bases} right "
              f"citations (min_score {threshold:.2f}):")
        for lang in ("en", "zh"):
            for kind in FRAMES[lang]:
                made, kept = counts[(lang, kind)], counts[(lang, kind, "cited")]
                if made:
                    print(f"{lang:<3} {kind:<20} {made:5d} made, {kept:5d} still cited ({kept / made:.2f})")
        return 0
    if args.abbreviate:
        made, kept = counts[("abbreviated",)], counts[("abbreviated", "cited")]
        print(f"English sentences with a name written as its initials, from {bases} right citations "
              f"(min_score {threshold:.2f}): {made} made, {kept} still cited ({kept / max(made, 1):.2f})")
        return 0
    print(f"one-edit unfaithful sentences made from {bases} right citations (min_score {threshold:.2f}):")
    print("(the last two columns: only sentences whose right citation quotes them, at least half of")
    print(" their words in order, the case the word-level conflict check reads)")
    print(f"{'lang':<5} {'edit':<9} {'made':>5} {'still cited':>12} {'contradicted':>13} "
          f"{'quoted: made':>13} {'still cited':>12}")
    for lang in ("en", "zh"):
        for kind in (*KINDS, "all"):
            kinds = KINDS if kind == "all" else (kind,)
            made = sum(counts[(lang, k, "made")] for k in kinds)
            if not made:
                continue
            cited = sum(counts[(lang, k, "cited")] for k in kinds)
            contradicted = sum(counts[(lang, k, "contradicted")] for k in kinds)
            quoted = sum(counts[(lang, k, "made", "repeats")] for k in kinds)
            quoted_cited = sum(counts[(lang, k, "cited", "repeats")] for k in kinds)
            share = f"({quoted_cited / quoted:.2f})" if quoted else ""
            print(f"{lang:<5} {kind:<9} {made:5d} {cited:6d} ({cited / made:.2f}) {contradicted:6d} "
                  f"({contradicted / made:.2f}) {quoted:13d} {quoted_cited:5d} {share:>6}")
    return 0


_COMMON_OPENERS = frozenset({"The", "A", "An", "This", "These", "That", "Those", "It", "Its", "In", "There",
                             "Some", "Many", "Most", "Each", "Every", "Such", "Both", "One", "For", "By"})
FRAMES = {
    "en": {"According to [1], …": "According to [1], {}", "[1] found that …": "[1] found that {}",
           "As shown in [1], …": "As shown in [1], {}",
           # openings that join the sentence to the report, no source named
           "Notably, …": "Notably, {}", "In addition, …": "In addition, {}",
           "It is worth noting that …": "It is worth noting that {}"},
    "zh": {"如[1]所述，…": "如[1]所述，{}", "[1]指出，…": "[1]指出，{}", "据[1]报道，…": "据[1]报道，{}",
           "此外，…": "此外，{}", "值得注意的是，…": "值得注意的是，{}", "总体而言，…": "总体而言，{}"},
}


def frames(sentence: str, lang: str) -> Iterator[tuple[str, str]]:
    """The sentence credited to a named source in each way of `FRAMES` (an English sentence's
    first word lowered when it is a common opening word, not a name)."""
    first = sentence.split(" ", 1)[0]
    if lang == "en" and first in _COMMON_OPENERS:
        sentence = first.lower() + sentence[len(first):]
    for kind, form in FRAMES.get(lang, {}).items():
        yield kind, form.format(sentence)


if __name__ == "__main__":
    raise SystemExit(main())
