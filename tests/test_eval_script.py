"""scripts/eval scores a benchmark file as ../shared/bench/README.md defines, for the tracer and
for the naive baseline it is compared with. The cases here are the suite's own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts" / "py"))

from baseline import naive_trace, tokens  # noqa: E402

from tracer.options import Tuning  # noqa: E402

DEFAULT_MIN_SCORE = Tuning().min_score

RIGHT = "The Hollow Creek bridge opened to traffic in 1937 after four years of work."
SWAPPED = "The Hollow Creek bridge was repainted in 1952 by the county."
RECORDS = [
    {"url": "https://a.example/bridge", "title": "Hollow Creek bridge",
     "content": "History. The Hollow Creek bridge opened to traffic in 1937 after four years of work. "
                "The Hollow Creek bridge was repainted in 1958 by the county."},
    {"url": "https://b.example/weather", "title": "Weather",
     "content": "Rain is expected over the county this week, with cooler nights."},
]
ZH_RIGHT = "长江大桥于1957年建成通车。"
ZH_RECORDS = [{"url": "https://c.example/qiao", "title": "大桥",
               "content": "武汉长江大桥于1957年建成通车，是长江上第一座大桥。"}]


def _case(case_id: str, lang: str, sentences: list[str], records: list[dict[str, str]],
          supporting: list[list[str]]) -> dict[str, object]:
    report = "## Notes\n\n" + " ".join(sentences) + "\n"
    gold = []
    for sentence, urls in zip(sentences, supporting, strict=True):
        start = report.index(sentence)
        gold.append({"sentence": sentence, "start": start, "end": start + len(sentence),
                     "needs_citation": True, "supporting_urls": urls, "partially_supporting_urls": []})
    return {"id": case_id, "lang": lang, "report": report, "records": records, "gold": gold}


def _bench_file(tmp_path: Path, *cases: dict[str, object]) -> Path:
    path = tmp_path / "bench.jsonl"
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8")
    return path


@pytest.fixture()
def bench(tmp_path: Path) -> Path:
    return _bench_file(tmp_path,
                       _case("wice-t1", "en", [RIGHT, SWAPPED], RECORDS, [["https://a.example/bridge"], []]),
                       _case("citecheck-t1", "zh", [ZH_RIGHT], ZH_RECORDS, [["https://c.example/qiao"]]))


def _table(out: str) -> dict[str, tuple[float, float, int]]:
    rows = {}
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] in {"wice", "citecheck", "lang:en", "lang:zh", "overall"}:
            rows[parts[0]] = (float(parts[1]), float(parts[2]), int(parts[5]))
    return rows


def _eval(*args: str) -> str:
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "py" / "eval.py"), *args],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_baseline_cites_the_record_sharing_most_words_at_0_55_or_more() -> None:
    case = _case("wice-t1", "en", [RIGHT, SWAPPED], RECORDS, [["https://a.example/bridge"], []])
    cited = {c["sentence"]: [s["url"] for s in c["sources"]] for c in naive_trace(case)["citations"]}
    # The swapped year still shares 10 of its 11 words with the record: the baseline cites it.
    assert cited == {RIGHT: ["https://a.example/bridge"], SWAPPED: ["https://a.example/bridge"]}
    assert naive_trace(case, threshold=0.95)["citations"][0]["sentence"] == RIGHT
    assert len(naive_trace(case, threshold=0.95)["citations"]) == 1


def test_baseline_uses_jieba_words_for_chinese() -> None:
    assert tokens("长江大桥于1957年建成通车。", "zh") == ["长江大桥", "于", "1957", "年", "建成", "通车"]
    assert tokens("The bridge's 2nd span.", "en") == ["the", "bridge", "s", "2nd", "span"]


def test_eval_scores_the_tracer_and_the_baseline_on_the_same_cases(bench: Path) -> None:
    out = _eval(str(bench))
    tracer = _table(out)
    # the swapped year is reported unsupported, its closest record named with the year it lacks
    assert ("unstated figures: of 1 gold sentences reported unsupported with a closest record, 1 list "
            "figures it does not state (1 of them annotated unsupportable); for 1 of those its quote states "
            "other figures of their sort (1 annotated unsupportable)") in out
    baseline_out = _eval(str(bench), "--baseline")
    assert baseline_out.startswith("naive baseline")
    baseline = _table(baseline_out)
    # The tracer cites the true sentence and not the one whose year disagrees with the record.
    assert tracer["wice"] == (1.0, 1.0, 1)
    assert baseline["wice"] == (0.5, 1.0, 2)
    assert tracer["citecheck"] == baseline["citecheck"] == (1.0, 1.0, 1)
    assert tracer["overall"] == (1.0, 1.0, 2)
    assert baseline["overall"] == (pytest.approx(2 / 3, abs=0.001), 1.0, 3)


def test_eval_refuses_a_threshold_for_the_baseline(bench: Path) -> None:
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "py" / "eval.py"), str(bench), "--baseline",
                          "--min-score", "0.7"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "--baseline has its own fixed threshold" in out.stderr


def test_explain_shows_the_figures_a_missed_sentences_near_miss_lacks(tmp_path: Path) -> None:
    # annotated (here, wrongly) as supported: a false negative whose near miss states another year
    path = _bench_file(tmp_path, _case("wice-t2", "en", [SWAPPED], RECORDS, [["https://a.example/bridge"]]))
    out = _eval(str(path), "--explain")
    assert f"  FN [wice-t2] {SWAPPED}" in out
    assert "     figures:  does not state 1952; its quote states 1958\n" in out


def test_explain_and_the_counts_show_a_near_miss_whose_quote_contradicts_the_sentence(tmp_path: Path) -> None:
    negated = "The Hollow Creek bridge was not repainted in 1958 by the county."
    path = _bench_file(tmp_path, _case("wice-t3", "en", [negated], RECORDS, [["https://a.example/bridge"]]))
    out = _eval(str(path), "--explain")
    assert f"  FN [wice-t3] {negated}" in out
    assert '     conflict: the sentence negates its quote ("not repainted")\n' in out
    assert ("conflicts: of 1 gold sentences reported unsupported with a closest record, 1 are contradicted "
            "by its quote (0 of them annotated unsupportable)") in out


def test_calibrate_fits_both_languages_and_estimates_them_by_cross_validation(tmp_path: Path) -> None:
    from tracer.verify import FEATURES

    wrong_zh = "长江大桥于1958年建成通车。"
    zh_records = [*ZH_RECORDS, {"url": "https://d.example/he", "title": "黄河",
                                "content": "黄河大桥正在修建。"}]
    cases = []
    for i in range(4):
        cases.append(_case(f"wice-c{i}", "en", [RIGHT, SWAPPED], RECORDS, [["https://a.example/bridge"], []]))
        cases.append(_case(f"citecheck-c{i}", "zh", [ZH_RIGHT, wrong_zh], zh_records,
                           [["https://c.example/qiao"], []]))
    path = _bench_file(tmp_path, *cases)
    script = ROOT / "scripts" / "py" / "calibrate.py"
    out = subprocess.run([sys.executable, str(script), str(path), "--cv", "2"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    for lang in ("en", "zh"):
        line = next(x for x in out.stdout.splitlines() if x.startswith(f"weights_{lang}="))
        weights = [float(v) for v in line.split("=(", 1)[1].split(")", 1)[0].split(",")]
        assert len(weights) == len(FEATURES)
        assert weights[FEATURES.index("numbers")] >= 1.0  # a figure the record does not state always counts
    # held out, the sentence whose year the record contradicts is never cited: precision stays 1
    cv = next(x for x in out.stdout.splitlines() if x.strip().startswith("min_score=0.64"))
    assert "wice P1.000" in cv and "citecheck P1.000" in cv


def test_perturb_edits_right_citations_once_and_counts_those_still_cited(tmp_path: Path) -> None:
    sentence = "The Hollow Creek bridge was opened to traffic in 1937 after four years of work."
    records = [{"url": "https://a.example/bridge", "title": "Hollow Creek bridge",
                "content": f"History. {sentence} It was repainted in 1958 by the county."}]
    other = "The Millbrook tunnel was dug under the ridge by hand."
    tunnel = [{"url": "https://m.example/tunnel", "title": "Tunnel", "content": other}]
    path = _bench_file(tmp_path, _case("wice-p1", "en", [sentence], records, [["https://a.example/bridge"]]),
                       _case("wice-p2", "en", [other], tunnel, [[]]),
                       _case("citecheck-p1", "zh", [ZH_RIGHT], ZH_RECORDS, [["https://c.example/qiao"]]))
    script = ROOT / "scripts" / "py" / "perturb.py"
    out = subprocess.run([sys.executable, str(script), str(path), "--explain"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert f"made from 2 right citations (min_score {DEFAULT_MIN_SCORE:.2f})" in out.stdout
    rows = {tuple(line.split()[:2]): line.split()[2:] for line in out.stdout.splitlines()
            if line.startswith(("en ", "zh "))}
    # 1938 for 1937, "was not opened", "before" for "after", Millbrook for Hollow: each contradicts
    # the record's own sentence, so none is cited; the uncited wice-p2 sentence is never edited
    for kind in ("figure", "negation", "opposite", "name"):
        assert rows[("en", kind)][:2] == ["1", "0"], out.stdout
    assert rows[("en", "all")][:2] == ["4", "0"]
    assert rows[("zh", "figure")][:2] == ["1", "0"]  # 长江大桥于1958年
    assert "STILL CITED" not in out.stdout


def test_perturb_edits_the_first_or_with_last_the_last_number_verb_and_opposite() -> None:
    from perturb import edits

    sentence = "Sales rose in 2019 and fell in 2020, when the firm was sold."
    first = {e.kind: e.sentence for e in edits(sentence, "en", "", [], {}, 0)}
    last = {e.kind: e.sentence for e in edits(sentence, "en", "", [], {}, 0, last=True)}
    assert first["figure"] == "Sales rose in 2020 and fell in 2020, when the firm was sold."
    assert last["figure"] == "Sales rose in 2019 and fell in 2021, when the firm was sold."
    assert first["opposite"] == "Sales fell in 2019 and fell in 2020, when the firm was sold."
    assert last["opposite"] == "Sales rose in 2019 and fell in 2020, when the firm was bought."
    assert first["negation"] == last["negation"] == sentence.replace("was sold", "was not sold")
    zh = {e.kind: e.sentence for e in edits("销量在2019年增长，在2020年下降。", "zh", "", [], {}, 0, True)}
    assert zh["figure"] == "销量在2019年增长，在2021年下降。"
    assert zh["opposite"] == "销量在2019年增长，在2020年增长。"


def test_perturb_abbreviate_writes_the_first_name_as_its_initials_and_counts_those_still_cited(
        tmp_path: Path) -> None:
    from perturb import abbreviated

    sentence = "In 1958 the Hollow Creek Bridge Authority repainted the old bridge for the county."
    assert abbreviated(sentence, "") == "In 1958 the HCBA repainted the old bridge for the county."
    assert abbreviated(sentence, "the HCBA said") is None  # the record writes the initials itself
    assert abbreviated("The Hollow Creek bridge opened.", "") == "The HC bridge opened."  # not "THC"
    assert abbreviated("Officials at the bridge met.", "") is None  # no run of capitalised words
    cited = ("In 1958 the Hollow Creek Bridge Authority repainted the old steel bridge over the Mill River "
             "at a cost of 40,000 dollars.")
    records = [{"url": "https://a.example/bridge", "title": "Bridge",
                "content": f"History. {cited} It was opened in 1937."},
               {"url": "https://m.example/tunnel", "title": "Tunnel",
                "content": "The Millbrook tunnel was dug under the ridge by hand in 1910."},
               {"url": "https://b.example/bread", "title": "Bread",
                "content": "Knead the dough for ten minutes and let it rest for an hour before baking."}]
    path = _bench_file(tmp_path, _case("wice-a1", "en", [cited], records, [["https://a.example/bridge"]]))
    script = ROOT / "scripts" / "py" / "perturb.py"
    out = subprocess.run([sys.executable, str(script), str(path), "--abbreviate"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    tail = f"(min_score {DEFAULT_MIN_SCORE:.2f}): 1 made, 1 still cited (1.00)"
    assert out.stdout.strip().endswith(tail), out.stdout


def test_perturb_faithful_lists_each_paraphrase_and_counts_those_read_as_a_conflict() -> None:
    from perturb import FAITHFUL

    script = ROOT / "scripts" / "py" / "perturb.py"
    out = subprocess.run([sys.executable, str(script), "--faithful"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    verdicts = [line.split()[0] for line in lines[:-1]]
    assert len(verdicts) == len(FAITHFUL) and set(verdicts) <= {"agrees", "CONFLICT"}
    assert lines[-1] == (f"faithful negative paraphrases read as a conflict: "
                         f"{verdicts.count('CONFLICT')} of {len(FAITHFUL)}")
    # those the check reads as agreeing (tests/tracer/test_conflict.py) are listed so
    agreeing = [s for s, line in zip(FAITHFUL, lines, strict=False) if line.split()[0] == "agrees"]
    assert any("flightless" in quote for _s, quote, _l in agreeing)


def test_bench_llm_names_an_unknown_fake_model_before_running_anything() -> None:
    script = ROOT / "scripts" / "py" / "bench_llm.py"
    out = subprocess.run([sys.executable, str(script), "--dev", "--models", "oracle,http500"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stdout == ""
    assert "--models: unknown http500 (known: hallucinate, plausible, garbage, 500, slow" in out.stderr


def test_meaning_counts_wrong_sentences_cited_and_faithful_ones_cited(tmp_path: Path) -> None:
    record = {"url": "https://a.example/bridge", "title": "Hollow Creek bridge",
              "content": "The Hollow Creek bridge was opened to traffic in 1937 after four years of work."}
    (tmp_path / "cases.json").write_text(json.dumps({"t/bridge": {"lang": "en", "records": [record]}}))
    bridge = "The Hollow Creek bridge was {} to traffic in {} after four years of work."
    rows = [("F", "faithful", bridge.format("opened", 1937)),
            ("W", "opposite", bridge.format("closed", 1937)), ("W", "year", bridge.format("opened", 1973))]
    (tmp_path / "sentences.jsonl").write_text("".join(
        json.dumps({"battery": "t", "case": "t/bridge", "lang": "en", "kind": k, "edit": e, "sentence": s})
        + "\n" for k, e, s in rows))
    script = ROOT / "scripts" / "py" / "meaning.py"
    out = subprocess.run([sys.executable, str(script), "--data", str(tmp_path), "--explain"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    line = next(ln.split() for ln in out.stdout.splitlines() if ln.startswith("t "))
    assert line[2:5] == ["0", "/", "2"] and line[6:9] == ["1", "/", "1"], out.stdout
    assert "W cited" not in out.stdout and "F missed" not in out.stdout


def test_meaning_adds_the_shared_fillers_to_the_cases_that_ask_for_them(tmp_path: Path) -> None:
    # the only record that states the sentence is a shared filler: cited only through "fillers"
    bridge = {"url": "https://a.example/bridge", "title": "Hollow Creek bridge",
              "content": "The Hollow Creek bridge was opened to traffic in 1937 after four years of work."}
    other = {"url": "https://b.example/bees", "title": "Bees", "content": "Honeybees visit many flowers."}
    cases = {"_fillers": {"en": [bridge]}, "t/with": {"lang": "en", "records": [other], "fillers": True},
             "t/without": {"lang": "en", "records": [other]}}
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    said = "The Hollow Creek bridge was opened to traffic in 1937 after four years of work."
    (tmp_path / "sentences.jsonl").write_text("".join(
        json.dumps({"battery": b, "case": f"t/{b}", "lang": "en", "kind": "F", "edit": "faithful",
                    "sentence": said}) + "\n" for b in ("with", "without")))
    script = ROOT / "scripts" / "py" / "meaning.py"
    out = subprocess.run([sys.executable, str(script), "--data", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    got = {ln.split()[0]: ln.split()[-4:-1] for ln in out.stdout.splitlines()
           if ln.startswith(("with ", "without "))}
    assert got == {"with": ["1", "/", "1"], "without": ["0", "/", "1"]}, out.stdout


def test_the_meaning_batteries_are_whole() -> None:
    data = ROOT / "bench" / "meaning"
    cases = json.loads((data / "cases.json").read_text(encoding="utf-8"))
    fillers = cases.pop("_fillers")
    assert set(fillers) == {"en", "zh"}
    assert all(r["url"] and r["content"] for rs in fillers.values() for r in rs)
    rows = [json.loads(line) for line in (data / "sentences.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 1600
    assert {r["battery"] for r in rows} == {"fresh", "zh", "en", "unseen", "adversarial", "unseen37"}
    assert all(r["case"] in cases and r["kind"] in ("W", "F") and r["lang"] == cases[r["case"]]["lang"]
               and r["sentence"].strip() for r in rows)
    assert all(c["records"] and all(rec["url"] and rec["content"] for rec in c["records"])
               for c in cases.values())


def test_calibrate_chance_counts_resampled_splits_that_meet_the_targets() -> None:
    import numpy as np
    from benchdata import Tally
    from calibrate import chance

    cases = [{"id": f"{src}-{i}"} for src in ("expertqa", "wice", "citecheck") for i in range(4)]
    right = Tally(emitted=4, correct=4, supportable=4, recalled=4)
    # precision 0.8 on every case: no split meets P >= 0.90, whatever its size
    wrong = Tally(emitted=5, correct=4, supportable=4, recalled=4)
    assert chance(cases, [right] * 12, 30, 200, np.random.RandomState(0)) == (200, 200)
    assert chance(cases, [wrong] * 12, 30, 200, np.random.RandomState(0)) == (0, 0)
    # ExpertQA alone below its F1 target (0.65): the overall targets hold, not every target
    weak = Tally(emitted=1, correct=1, supportable=4, recalled=1)
    strong = Tally(emitted=40, correct=40, supportable=40, recalled=40)
    tallies = [weak] * 4 + [strong] * 8
    assert chance(cases, tallies, 30, 200, np.random.RandomState(0)) == (200, 0)
    # half the splits drawn from a mixed pool land on each side
    mixed = [right, wrong] * 6
    both, every = chance(cases, mixed, 3, 2000, np.random.RandomState(0))
    assert 0 < both < 2000 and every == both


def test_calibrate_leaves_one_case_out_and_prints_the_chance_table(tmp_path: Path) -> None:
    cases = []
    for i in range(3):
        cases.append(_case(f"wice-l{i}", "en", [RIGHT, SWAPPED], RECORDS, [["https://a.example/bridge"], []]))
        cases.append(_case(f"citecheck-l{i}", "zh", [ZH_RIGHT], ZH_RECORDS, [["https://c.example/qiao"]]))
    path = _bench_file(tmp_path, *cases)
    script = ROOT / "scripts" / "py" / "calibrate.py"
    out = subprocess.run([sys.executable, str(script), str(path), "--loo", "--chance", "12", "--draws", "50"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "leave one case out estimate on gold sentences (folds by case):" in out.stdout
    line = next(x for x in out.stdout.splitlines() if x.strip().startswith("12 cases"))
    cells = dict(c.split(": ") for c in line.split("cases", 1)[1].split("  ") if c.strip())
    assert set(cells) == {"0.50", "0.55", "0.60", "0.62", "0.64", "0.65", "0.66", "0.67", "0.68", "0.70",
                          "0.75"}
    for value in cells.values():
        both, every = (float(v) for v in value.split("/"))
        assert 0.0 <= every <= both <= 1.0
