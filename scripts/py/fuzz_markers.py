"""Generated reports with old citation markers in every form a writer uses, traced twice.

    scripts/fuzz-markers [--start N] [--count N] [--show N] [--labelled | --links | --chat]

Each seed makes one report from the sentences of a few fixed records (Chinese or English):
paragraphs, lists, headings, a quote, a small table, with old markers at a sentence's end, after
its period, inside it, or as words of it ("According to [2], …", "[4] found that …", "如[1]所述，…",
"[1]和[2]认为，…", "See [2] and [3] for details."), numbers past the old list, an old references
section listing some of the records, and a random policy (keep / replace) and placement. Every
report is traced, and its output traced again with the same records and options. It counts:

- errors: the trace raised;
- not lossless: the output's body, markers taken out, is not the input's body, markers taken out
  (or, when nothing was cited under `keep`, not the input itself);
- not idempotent: the second trace's report differs from the first's.

`--links` makes half the markers inline link citations instead ("([Car sales](https://a.example/car))",
"（[比亚迪年报](https://…)）", now and then with a link to a page that is none of the records).
`--chat` makes half the markers what chat apps leave in a copied answer ("citeturn0search2",
":contentReference[oaicite:1]{index=1}", "[web:3]", "[oai_citation:1‡Title](https://…)", Grok's cards,
Gemini's "[span_1](end_span)", ChatGPT's '^[A sentence.]({"attribution":…})' wrapper); the records
then have ChatGPT's ids ("turn0search0", …).

The seeds are deterministic: the same range gives the same table. Prints the counts and, for the
first `--show` failing seeds, the input and the differing lines. A robustness check of the
old-marker reading (docs/styles.md, "Existing citations"), not a benchmark.
"""

from __future__ import annotations

import argparse
import difflib
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tracer import TraceOptions, trace  # noqa: E402
from tracer.existing import unmarked  # noqa: E402
from tracer.markdown import scan_markdown  # noqa: E402

ZH = [
    ("https://www.caam.org.cn/2024", "2024年汽车工业经济运行情况",
     ["2024年中国新能源汽车销量达到1286.6万辆，同比增长35.5%。", "新能源汽车渗透率达到40.9%。",
      "汽车出口量为585.9万辆，同比增长19.3%。"]),
    ("https://www.byd.com/annual2024", "比亚迪2024年年报",
     ["比亚迪2024年新能源汽车销量为427万辆，市场份额约为33.2%。", "比亚迪全年营业收入达到7771亿元。",
      "公司研发投入为542亿元。"]),
    ("https://www.stats.gov.cn/gdp2023", "2023年国民经济统计公报",
     ["2023年国内生产总值为1260582亿元，比上年增长5.2%。", "全年城镇新增就业1244万人。",
      "全国居民人均可支配收入为39218元。"]),
    ("https://news.example.cn/ai", "人工智能产业报告",
     ["2023年中国人工智能核心产业规模达到5784亿元。", "人工智能企业数量超过4500家。",
      "大模型数量达到238个。"]),
]
EN = [
    ("https://a.example/car", "Car sales in China",
     ["CAAM data show that car sales in China reached 30.09 million in 2023, up 12% on 2022.",
      "Exports of cars rose to 4.91 million units in 2023.",
      "Electric vehicles accounted for 31.6% of new car sales."]),
    ("https://b.example/bridge", "Wuhan bridge",
     ["The Wuhan Yangtze River Bridge opened to traffic in 1957.",
      "It was the first bridge over the Yangtze.", "The bridge is 1,670 metres long."]),
    ("https://c.example/hubble", "Hubble Space Telescope",
     ["The Hubble Space Telescope was launched into low Earth orbit in 1990.",
      "Its primary mirror has a diameter of 2.4 metres.",
      "Hubble has made more than 1.5 million observations."]),
    ("https://d.example/apple", "Apple annual report",
     ["Apple reported revenue of $383.3 billion in fiscal 2023.",
      "Services revenue reached a record $85.2 billion.",
      "The company sold 231 million iPhones in fiscal 2023."]),
]
FILLER = {"zh": ["这一趋势值得关注。", "市场竞争依然激烈。", "未来前景广阔。"],
          "en": ["This trend deserves attention.", "Competition remains fierce.", "The outlook is bright."]}
ZH_FORMS = ["{b}{m}{p}", "{s}{m}", "如{m}所述，{s}", "据{m}报道，{s}", "{m}指出，{s}", "{m}显示，{s}",
            "根据{m}的统计，{s}", "{s}详见{m}。", "{s}", "{s}", "{m}，指出{s}", "文献{m}中提到，{s}",
            "{m}中指出，{s}", "正如{m}所示，{s}", "{ins}", "{ins}", "{m}、{m2}指出，{s}",
            "{m}和{m2}认为，{s}"]
EN_FORMS = ["{b}{m}{p}", "{b} {m}{p}", "{s}{m}", "{s} {m}", "According to {m}, {l}", "{m} found that {l}",
            "{m} reports that {l}", "As shown in {m}, {l}", "{s} See {m} for details.", "{s}", "{s}",
            "In {m}, the authors note that {l}", "{ins}", "{ins}", "{m}, {m2} found that {l}",
            "{b} (see {m}){p}", "Based on {m}, {l}", "{s} See {m} and {m2} for details."]


LINK_FORMS = {"zh": ["{b}{m}{p}", "{s}{m}"], "en": ["{b} {m}{p}", "{b}{m}{p}", "{s} {m}", "{s}{m}"]}


# --labelled: half the markers, and half the old lists, take a label word ("[ref1]", "【来源2】",
# "(ref. 3)", "[4†source]"; docs/segmentation.md lists the forms)
LABELLED = {"en": ["[ref{a}]", "[Ref. {a}]", "[doc{a}]", "[Source {a}]", "(ref. {a})", "(Source: {a})",
                   "[{a}†source]", "[refs {a}, {b}]"],
            "zh": ["[来源{a}]", "【来源{a}】", "【参考文献{a}】", "（来源：{a}）", "[ref{a}]",
                   "[{a}†source]"]}
LABELLED_LISTS = {"en": ["[ref{i}] {rest}", "- [doc{i}] {rest}", "(ref. {i}) {rest}", "[Source {i}]: {rest}"],
                  "zh": ["【来源{i}】{rest}", "[来源{i}] {rest}", "[ref{i}] {rest}"]}


# --chat: what chat apps leave in a copied answer (docs/styles.md, "Existing citations")
CHAT = ["citeturn0search{k}", "citeturn0search{k}turn0news{b}", ":contentReference[oaicite:{a}]{{index={a}}}",
        "[web:{a}]", "[attached_file:{a}]", "[oai_citation:{a}‡{t}]({u})",
        '[](grok_render_citation_card_json={{"cardIds":["c{a}"]}})',
        '<grok-card data-id="c{a}" data-type="citation_card"></grok-card>', "[span_{a}](end_span)"]


def _marker(r: random.Random, n: int, lang: str, labelled: bool,
            links: list[tuple[str, str]] | None = None, chat: list[tuple[str, str]] | None = None) -> str:
    if chat and r.random() < 0.5:
        k = r.randrange(len(chat) + 1)   # now and then an id no record has
        u, t = chat[k % len(chat)]
        one = r.choice(CHAT).format(k=k, a=r.randint(0, 9), b=r.randint(0, 3), u=u, t=t)
        return r.choice([one, one, " " + one, one + f"[{r.randint(1, n + 1)}]"])
    if links and r.random() < 0.5:    # "([Title](url))", "（[标题](url)）"; one in five names no record
        picked = r.sample(links, r.choice([1, 1, 1, 2]))
        if r.random() < 0.2:
            picked.append(("https://elsewhere.example/page", "Elsewhere"))
        group = r.choice([", ", "; "]).join(f"[{t}]({u})" for u, t in picked)
        return f"（{group}）" if lang == "zh" else f"({group})"
    a, b = r.randint(1, n + 1), r.randint(1, n + 1)   # now and then a number past the old list
    if labelled and r.random() < 0.5:
        one = r.choice(LABELLED[lang]).format(a=a, b=b)
        return r.choices([one, one + f"[{b}]", f"{one}, [{b}]", f"[{b}] and {one}"], [60, 15, 15, 10])[0]
    # (and now and then in bold or italics: "**[1]**", "*[1][2]*")
    return r.choices([f"[{a}]", f"[{a}][{b}]", f"[{a}, {b}]", f"【{a}】", f"[{a}] and [{b}]", f"[ {a} ]",
                      f"**[{a}]**", f"*[{a}][{b}]*"],
                     [50, 15, 15, 10, 10, 5, 4, 2])[0]


def _inserted(r: random.Random, s: str, m: str) -> str:
    spots = [i for i in range(1, len(s))
             if s[i - 1] in " ，,、" or (s[i - 1] > "\u4e00" and r.random() < 0.1)]
    if not spots:
        return s + m
    i = r.choice(spots)
    return s[:i] + m + s[i:]


def _decorated(r: random.Random, s: str, lang: str, n: int, labelled: bool,
               links: list[tuple[str, str]] | None = None, chat: list[tuple[str, str]] | None = None) -> str:
    if chat and r.random() < 0.1:   # ChatGPT's wrapper around a sentence, citing nothing
        return "^[" + s + ']({"attribution":{"attributableIndex":"' + f'{r.randint(1, 999)}-1"}}}})'
    m = _marker(r, n, lang, labelled, links, chat)
    form = r.choice(ZH_FORMS if lang == "zh" else EN_FORMS)
    if "](" in m or any(x in m for x in ("cite", "[web:", "[attached", "grok")):
        # a link citation, or a chat app's, stands where writers put one: ending its sentence, or after it
        form = r.choice(LINK_FORMS[lang])
    return form.format(s=s, b=s[:-1], p=s[-1], m=m, m2=f"[{r.randint(1, n + 1)}]",
                       l=s[0].lower() + s[1:], ins=_inserted(r, s, m))


def generate(seed: int, labelled: bool = False, links: bool = False,
             chat: bool = False) -> tuple[str, list[dict[str, str]], TraceOptions]:
    """One report, its records and options, from `seed` alone (and `labelled`: label words too;
    `links`: inline link citations too; `chat`: chat apps' markers too)."""
    r = random.Random(seed)
    lang = r.choice(["zh", "en"])
    src = ZH if lang == "zh" else EN
    pages = [(u, t) for u, t, _c in src] if links else None
    apps = [(u, t) for u, t, _c in src] if chat else None
    records = [{"url": u, "title": t, "content": ("" if lang == "zh" else " ").join(c)} for u, t, c in src]
    if chat:
        for k, rec in enumerate(records):
            rec["id"] = f"turn0search{k}"
    order = list(range(len(src)))
    r.shuffle(order)
    n = r.randint(1, len(src))   # the old list names the first n of `order`

    def sentence() -> str:
        if r.random() < 0.15:
            return r.choice(FILLER[lang])
        return r.choice(src[r.choice(order)][2])

    blocks = []
    for _ in range(r.randint(1, 5)):
        kind = r.choices(["para", "list", "heading", "table", "quote"], [6, 2, 2, 1, 1])[0]
        if kind == "para":
            sep = "\n" if r.random() < 0.2 else ("" if lang == "zh" else " ")
            count = r.randint(1, 4)
            blocks.append(sep.join(_decorated(r, sentence(), lang, n, labelled, pages, apps)
                                   for _ in range(count)))
        elif kind == "list":
            bullet = r.choice(["- ", "1. ", "* "])
            items = [_decorated(r, sentence(), lang, n, labelled, pages, apps)
                     for _ in range(r.randint(1, 3))]
            blocks.append("\n".join(bullet + item for item in items))
        elif kind == "heading":
            blocks.append("#" * r.randint(1, 3) + " " + r.choice(
                ["概述", "市场分析"] if lang == "zh" else ["Overview", "Results"]))
        elif kind == "table":
            row = "| 新能源汽车销量 | 1286.6万辆" if lang == "zh" else "| Hubble Space Telescope | 1990"
            head = "| 指标 | 数值 |" if lang == "zh" else "| Telescope | Launch |"
            blocks.append(f"{head}\n|---|---|\n{row}{r.choice(['', ' [1]', '[2]'])} |")
        else:
            blocks.append("> " + _decorated(r, sentence(), lang, n, labelled, pages, apps))
    report = "\n\n".join(blocks)
    if r.random() < 0.85:
        heading = "## 参考文献" if lang == "zh" and r.random() >= 0.2 else "## References"
        entries = [f"[{i + 1}] {src[k][1]} {src[k][0]}" for i, k in enumerate(order[:n])]
        if labelled and r.random() < 0.5:
            shape = r.choice(LABELLED_LISTS[lang])
            entries = [shape.format(i=i + 1, rest=f"{src[k][1]} {src[k][0]}")
                       for i, k in enumerate(order[:n])]
        report += "\n\n" + heading + "\n\n" + "\n".join(entries) + "\n"
    options = TraceOptions(mode="deterministic", existing=r.choice(["keep", "replace"]),
                           placement=r.choice(["before", "after"]))
    return report, records, options


def _body(report: str) -> str:
    """The body before the references section, markers taken out."""
    return unmarked(report[:scan_markdown(report).body_end]).rstrip()


def check(seed: int, labelled: bool = False, links: bool = False,
          chat: bool = False) -> tuple[str, str, str] | None:
    """(kind, first, second) of the seed's first failure, or None."""
    report, records, options = generate(seed, labelled, links, chat)
    try:
        once = trace(report, records, options)
        twice = trace(once.report, records, options)
    except Exception as exc:  # a crash is what this looks for
        return "errors", report, f"{type(exc).__name__}: {exc}"
    if once.references and _body(once.report) != _body(report):
        return "not lossless", _body(report), _body(once.report)
    if not once.references and options.existing == "keep" and once.report != report:
        return "not lossless", report, once.report
    if twice.report != once.report:
        return "not idempotent", once.report, twice.report
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--start", type=int, default=20000, help="first seed (default 20000)")
    ap.add_argument("--count", type=int, default=3000, help="reports to generate (default 3000)")
    ap.add_argument("--show", type=int, default=3, help="failing seeds to print in full (default 3)")
    kind = ap.add_mutually_exclusive_group()
    kind.add_argument("--labelled", action="store_true",
                    help="half the markers and old lists under a label word ([ref1], 【来源2】, (ref. 3), …)")
    kind.add_argument("--links", action="store_true",
                    help="half the markers inline link citations (([Title](https://…)), （[标题](https://…)）)")
    kind.add_argument("--chat", action="store_true",
                    help="half the markers chat apps' (citeturn0search2, [web:3], [oai_citation:1‡…](…), …)")
    args = ap.parse_args()
    counts: Counter[str] = Counter()
    seeds: dict[str, list[int]] = {}
    shown = 0
    for seed in range(args.start, args.start + args.count):
        failed = check(seed, args.labelled, args.links, args.chat)
        if failed is None:
            continue
        kind, first, second = failed
        counts[kind] += 1
        seeds.setdefault(kind, []).append(seed)
        if shown < args.show:
            shown += 1
            report = generate(seed, args.labelled, args.links, args.chat)[0]
            print(f"== seed {seed}: {kind}\n{report}\n-- differs:")
            for line in difflib.unified_diff(first.splitlines(), second.splitlines(), lineterm="", n=0):
                print(line)
            print()
    kind_of = " (labelled)" if args.labelled else " (links)" if args.links else " (chat)" if args.chat else ""
    print(f"{args.count} generated reports{kind_of} (seeds {args.start}..{args.start + args.count - 1}): "
          + ", ".join(f"{kind} {counts[kind]}" for kind in ("errors", "not lossless", "not idempotent")))
    for kind, found in seeds.items():
        print(f"  {kind}: seeds {', '.join(map(str, found[:20]))}{' …' if len(found) > 20 else ''}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
