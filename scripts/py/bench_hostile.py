"""Hostile inputs: does any stage grow faster than its input? Prints numbers; asserts nothing.

Each input is a generator of size n, traced at n and at 4n in a fresh subprocess (with a time
limit, so a regression shows as TIMEOUT rather than a hung run). `grew x` is how much the input
grew (the report or the records, whichever the case grows: 4 for most), `time x` how much the
trace time grew: linear work keeps them about equal. The stage that took longest at 4n is named.
Inputs
stay within the documented limits (docs/configuration.md). They come from an adversarial review
that found catastrophic backtracking and quadratic loops (docs/performance.md, "Hostile inputs").

    scripts/bench-hostile [--only 'NAME|NAME'] [--scale K] [--timeout SEC]
"""

from __future__ import annotations

import argparse
import json
import pickle
import subprocess
import sys
from collections.abc import Callable
from typing import Any

P = "The Eiffel Tower is 330 metres tall.\n\n"
S = "The Eiffel Tower is 330 metres tall"
REC = [{"url": "https://a.example/1", "title": "A",
        "content": "The Eiffel Tower is 330 metres tall. It was built in 1889 by Gustave Eiffel's company."}]

Gen = Callable[[int], tuple[str, list[dict[str, str]]]]
_FILL = "Paris hosts many visitors every year and the city has old iron structures built in 1889. "


def _prose_records(k: int, size: int) -> list[dict[str, str]]:
    body = S + ". " + _FILL * (size // len(_FILL))
    return [{"url": f"https://p.example/{j}", "title": f"P{j}", "content": body} for j in range(k)]


def _word(i: int) -> str:
    out = ""
    while True:
        out += "abcdefghijklmnopqrstuvwxyz"[i % 26]
        i //= 26
        if not i:
            return out.capitalize()


def _long_sentences(n: int) -> str:
    words = (_FILL * 20).split()
    out, k = [], 0
    while sum(len(x) for x in out) < n:
        out.append(" ".join(words[k:k + 200])[:1200].capitalize() + ".\n")
        k = (k + 7) % 200
    return "".join(out)



def _cited(entry: str) -> str:
    """A report citing [1], its references list's one entry `entry`."""
    return P + "The tower is tall [1].\n\n## References\n\n[1] " + entry + "\n"


def _report(build: Callable[[int], str]) -> Gen:
    return lambda n: (build(n), REC)


def _record(build: Callable[[int], str]) -> Gen:
    return lambda n: (P, [*REC, {"url": "https://b.example/1", "title": "B", "content": build(n)}])


# name -> (generator, base n)
CASES: dict[str, tuple[Gen, int]] = {
    # markdown scan
    "backtick run": (_report(lambda n: P + "a " + "`" * n + " b.\n"), 2_000),
    "backtick runs of every length": (_report(lambda n: P + " ".join("`" * k for k in range(1, n))), 200),
    "unclosed \\( openers": (_report(lambda n: P + "x " + "\\( a " * n + "end.\n"), 4_000),
    "unclosed <!-- openers": (_report(lambda n: P + "x <!-- a\n" * n + "end.\n"), 4_000),
    "unclosed \\[ math blocks": (_report(lambda n: P + "\\[\n" * n), 8_000),
    "tag with spaces": (_report(lambda n: P + "x <a" + " " * n + "b\n"), 16_000),
    "heading with spaces": (_report(lambda n: P + "# a" + " " * n + "b\n"), 16_000),
    "bold line with spaces": (_report(lambda n: P + "**a**" + " " * n + "x\n"), 16_000),
    "table delimiter with spaces": (_report(lambda n: P + "a|b\n" + " " * n + "x\n"), 16_000),
    "runs of * _ [ $ <": (_report(lambda n: P + "x " + "*_[$<" * n + " y.\n"), 8_000),
    # segmentation
    "one sentence of '1.'": (_report(lambda n: P + "v" + "1." * n + "\n"), 32_000),
    "one sentence of 'a.**b'": (_report(lambda n: P + "See " + "a.**b " * n + "\n"), 8_000),
    "numeric dates in one sentence": (
        _report(lambda n: P + "It opened " + " ".join(["2021.4.29"] * n) + ".\n"), 8_000),
    # existing citations and rendering
    "markers on one line": (_report(lambda n: P + "x" + " [1]:" * n + "\n"), 8_000),
    "a run of markers": (_report(lambda n: P + "Fact " + "[1]" * n + "\n"), 2_000),
    # runs read whole (`tracer.existing.unmarked`): each run looks past its neighbours once
    "markers with blanks between": (_report(lambda n: P + "Fact " + "[1] " * n + ".\n"), 2_000),
    "markers with commas between": (_report(lambda n: P + "Fact " + "[1], " * n + "[1].\n"), 2_000),
    "one line of markers before labels and colons": (
        _report(lambda n: P + "Fact one [1][a]: b. " * n), 2_000),
    "one entry cited by every line": (_report(
        lambda n: "".join(f"Fact number {i} here [1].\n" for i in range(n))
        + "\n## References\n\n1. Some title\n" + "   t\n" * n), 2_000),
    # a references section before more report: cut, and the report after it traced
    "n entries before n cited lines of more report": (_report(
        lambda n: P + "\n## References\n\n"
        + "".join(f"[{i}] T{i} https://x.example/{i}\n" for i in range(1, n + 1))
        + "\n## Findings\n\n" + "".join(f"Fact number {i} here [{i}].\n" for i in range(1, n + 1))), 1_000),
    "a references heading over n short lines before more report": (_report(
        lambda n: P + "\n## References\n\n" + "".join(f"[{i}] T{i} https://x.example/{i}\n" for i in range(n))
        + "a\n" * n + "\n## Findings\n\nIt rose.\n"), 4_000),
    "sentences before a bracketed label": (_report(lambda n: (S + "【a】. ") * n), 2_000),
    "'([1]' and a run of spaces": (
        _report(lambda n: P + "Revenue rose in 2023 ([1]" + " " * n + "x.\n"), 16_000),
    "unclosed <sup> openers": (_report(lambda n: P + "Tower" + " <sup>" * n + " tall.\n"), 8_000),
    "markers on one line, no references": (
        _report(lambda n: P + "Data " + "".join(f"x{i % 10} [{i % 900 + 1}]. " for i in range(n)) + "\n"),
        8_000),
    "lines each opening with a marker": (_report(lambda n: P + "".join(
        f"[{i % 900 + 1}] line {i} here\n" for i in range(n))), 4_000),
    # (is_pointer once per sentence, not once per marker in it: 1,500 lines took 15 s, 31st session)
    "n lines each opened by a subject, no blank line": (_report(lambda n: P + "Intro.\n\n" + "".join(
        f"[{i}] found that the bridge opened.\n" for i in range(1, n + 1))), 400),
    "small tables numbering their rows": (_report(lambda n: P + "".join(
        f"\n| # | Task |\n|---|---|\n| [{i % 900 + 1}] | do {i} |\n" for i in range(n))), 2_000),
    "a table of n rows, each with a figure": (_report(lambda n: P + "| Item | Value |\n|---|---|\n" + "".join(
        f"| {S} {_word(i)} | {i + 1}% |\n" for i in range(n))), 1_000),
    "a table of n rows, each with a link, code and a marker": (_report(
        lambda n: P + "| a | b |\n|---|---|\n"
        + "".join(f"| [x{i}](https://e.example/{i}) `c` | y [1] |\n" for i in range(n))
        + "\n## References\n\n[1] https://a.example/x\n"), 2_000),
    "a table of n rows under a long heading": (_report(
        lambda n: "# " + "word " * n + "\n\n| a | b |\n|---|---|\n" + "| x | 1 |\n" * n), 4_000),
    "a table of n rows whose subjects share a word, n/20 records naming them": (lambda n: (
        "| Card | Share |\n|---|---|\n" + "".join(f"| {_word(i)} {_word(n + i)} card | {i % 97 + 1}% |\n"
                                              for i in range(n)),
        [{"url": f"https://r.example/{k}", "title": f"R{k}", "content": " ".join(
            f"The {_word(i)} {_word(n + i)} card holds {i % 97 + 1}%. Every card in the series has a fan."
            for i in range(k * 20, k * 20 + 20))} for k in range(n // 20)]), 1_000),
    "a run of n bare superscripts, then a note line": (_report(
        lambda n: "<sup>1</sup>" * n + " x\n\n<sup>1</sup> A note.\n\n## References\n\n[1] https://a.example/x\n"),
        2_000),
    "a table row of n code spans, each with a marker": (_report(
        lambda n: P + "| A | B |\n|---|---|\n| Alpha beta | " + "`c` [1] " * n + " |\n"), 2_000),
    "a table row of n cells": (_report(lambda n: P + "| a | b |\n|---|---|\n|" + " x1 |" * n + "\n"), 4_000),
    "a table row of n pipes and escaped pipes": (
        _report(lambda n: P + "| a | b |\n|---|---|\n| x" + "\\||" * n + " y |\n"), 8_000),
    "unclosed <code> and <a> elements": (_report(lambda n: P + "Text <code>x <a href='y'>z " * n + "\n"),
                                         8_000),
    "a references list, then n headings": (_report(lambda n: P + "\n## References\n[1] A https://a.com\n"
                                                   + "".join(f"## Part {i}\n- https://x{i}.com\n"
                                                             for i in range(n))), 2_000),
    # (the 32nd session's regex hunt, /tmp/h1 of a helper: each was quadratic, 2-20 s at 8-32 KB)
    "a table row's subject with a run of spaces, its citation kept": (_report(
        lambda n: P + "| Company | Phones sold |\n|---|---|\n| Apple" + " " * n
        + "Orchard | 10 million [1] |\n\n## References\n\n[1] https://a.example/1\n"), 4_000),
    "a references entry of opening quotes": (_report(lambda n: _cited("x" + "“" * n + "x")), 4_000),
    "a references entry of 《": (_report(lambda n: _cited("x" + "《" * n + "x")), 4_000),
    "a references entry with a run of ideographic spaces": (
        _report(lambda n: _cited("Tower" + "\u3000" * n + "x")), 8_000),
    "a references entry with a run of spaces and tabs": (
        _report(lambda n: _cited("Tower" + " \t" * (n // 2) + "x")), 8_000),
    "'[1' + spaces + '-2]' before a numbered list of links": (lambda n: (
        P + "The tower is tall [1" + " " * n
        + "-2].\n\n1. Eiffel https://a.example/1\n2. Other https://b.example/2\n",
        [*REC, {"url": "https://b.example/2", "title": "B", "content": "Other text about towers."}]), 8_000),
    "'[Source' + spaces + '1x][1]' with a '[1]:' definition": (_report(
        lambda n: P + "The tower is tall [Source" + " " * n + "1x][1].\n\n[1]: https://a.example/1\n"),
        8_000),
    "a sentence with a run of ',;' inside": (
        _report(lambda n: P + S + ",;" * (n // 2) + " indeed.\n"), 8_000),
    "n records titled 'a_a_…' (4,000 characters), one old marker": (lambda n: (
        P + "The tower is tall [1].\n",
        [*REC, *({"url": f"https://s.example/{i}", "title": "a_" * 2000,
                  "content": f"Page {i} about towers."} for i in range(n))]), 25),
    "n entries of record titles alone after the report, n records titled alike": (lambda n: (
        P + "The tower is tall [1].\n\n"
        + "".join(f"[{i + 1}] Annual report of the tower {i}\n" for i in range(n)),
        [*REC, *({"url": f"https://t.example/{i}", "title": f"Annual report of the tower {i}",
                  "content": f"Page {i} about towers."} for i in range(n))]), 1_000),
    "n entries of a title's head, n records titled alike": (lambda n: (
        P + "The tower is tall [1].\n\n"
        + "".join(f"[{i + 1}] Annual report of {'x' * 200}\n" for i in range(n)),
        [*REC, *({"url": f"https://t.example/{i}", "content": f"Page {i} about towers.",
                  "title": f"Annual report of the tower {i} {'y' * (i % 120)}"} for i in range(n))]), 1_000),
    # verification
    "sentences of 1,200 characters": (lambda n: (_long_sentences(n), _prose_records(8, 3_000)), 6_000),
    "a new code per sentence, 8 large records": (
        lambda n: ("".join(f"{S} in model QX{i}.\n" for i in range(n)), _prose_records(8, 50_000)), 100),
    "a new date per sentence, 8 large records": (
        lambda n: ("".join(f"{S} since {i % 28 + 1} May 2021 near {_word(i)}.\n" for i in range(n)),
                   _prose_records(8, 50_000)), 100),
    "a sentence of n negations": (
        _report(lambda n: P + S + " and " + " ".join(["not the"] * n) + ".\n"), 4_000),
    "n names either side of one verb, the record the other way round": (lambda n: (
        " ".join(_word(i) for i in range(n)) + " overtook "
        + " ".join(_word(n + i) for i in range(n)) + ".\n",
        [{"url": "https://r.example/1", "title": "R", "content": " ".join(_word(n + i) for i in range(n))
          + " overtook " + " ".join(_word(i) for i in range(n)) + "."}]), 400),
    "a Chinese sentence of n superlatives against a record that repeats it": (lambda n: (
        "该公司是全球最大的电池制造商" + "最大" * n + "。\n",
        [{"url": "https://r.example/1", "title": "R",
          "content": "该公司是全球最大的电池制造商" + "最大" * n + "。"}]),
     8_000),
    "n measured figures in one Chinese sentence, the record's all others": (lambda n: (
        "".join(f"指标{_word(i)}为{i + 1}亿元，" for i in range(n)) + "均创新高。\n",
        [{"url": "https://r.example/1", "title": "R", "content": "".join(
            f"指标{_word(i)}为{i + 2}亿元，" for i in range(n)) + "均创新高。"}]), 400),
    # records
    "record: a run of dots": (_record(lambda n: "Tower " + "." * n), 12_000),
    "record: a run of !?": (_record(lambda n: "Tower " + "!?" * (n // 2)), 12_000),
    "record: one letter": (_record(lambda n: "a" * n), 200_000),
}

_CHILD = r"""
import pickle, resource, sys, time, json
from tracer import trace
report, records = pickle.load(sys.stdin.buffer)
t = time.perf_counter()
res = trace(report, records)
took = time.perf_counter() - t
stage = max(res.stats.stage_ms.items(), key=lambda kv: kv[1])[0]
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"s": took, "stage": stage, "rss": rss}))
"""


def _run(report: str, records: list[dict[str, str]], timeout: float) -> dict[str, Any] | None:
    try:
        p = subprocess.run([sys.executable, "-c", _CHILD], input=pickle.dumps((report, records)),
                           capture_output=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return None
    out: dict[str, Any] = json.loads(p.stdout.decode().strip().splitlines()[-1])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="case names (substrings), separated by '|'")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every base n")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per trace")
    args = ap.parse_args()
    wanted = [w.strip() for w in args.only.split("|") if w.strip()]
    print(f"{'input':38s} {'n':>8s} {'chars@4n':>9s} {'grew x':>7s} {'s at n':>8s} {'s at 4n':>8s} "
          f"{'time x':>7s}  {'top stage at 4n':16s} {'RSS MiB':>7s}")
    worst = 0.0
    for name, (gen, base) in CASES.items():
        if wanted and not any(w in name for w in wanted):
            continue
        n = max(1, int(base * args.scale))
        small, big = _run(*gen(n), args.timeout), _run(*gen(4 * n), args.timeout)
        (rep1, recs1), (rep4, recs4) = gen(n), gen(4 * n)
        rec1, rec4 = (sum(len(r["content"]) for r in recs) for recs in (recs1, recs4))
        chars = len(rep4) + rec4
        ratio = max(len(rep4) / max(len(rep1), 1), rec4 / max(rec1, 1))  # what the case grows
        if small is None or big is None:
            first = "TIMEOUT" if small is None else f"{small['s']:.3f}"
            print(f"{name:38s} {n:8d} {chars:9d} {ratio:7.1f} {first:>8s} {'TIMEOUT':>8s}")
            worst = float("inf")
            continue
        growth = big["s"] / max(small["s"], 1e-3)
        worst = max(worst, growth / ratio)
        print(f"{name:38s} {n:8d} {chars:9d} {ratio:7.1f} {small['s']:8.3f} {big['s']:8.3f} {growth:7.1f}  "
              f"{big['stage']:16s} {big['rss']:7.0f}")
    print(f"worst (time x) / (grew x): {worst:.2f} (linear work is about 1 or less)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
