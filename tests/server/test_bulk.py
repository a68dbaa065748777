"""`source-tracer bulk` with the local engine, run as a user runs it (subprocess), plus the
output file's repair/resume rules in-process."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bulk_cases import case, comparable, read_out, write_cases

import tracer
from server.bulk import DUPLICATE_CODE, BadLine, BulkError, Output, parse_line, parse_retry

REPO = Path(__file__).resolve().parents[2]


def bulk(*args: str | Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCE_TRACER_")}
    return subprocess.run(
        [sys.executable, "-m", "server.cli", "bulk", *map(str, args)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout,
    )


def by_id(lines: list[dict]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for line in lines:
        assert line["id"] not in out, f"duplicate id {line['id']}"
        out[line["id"]] = line
    return out


def test_each_line_answered_with_citations(tmp_path: Path) -> None:
    ids = write_cases(tmp_path / "in.jsonl", 6)
    r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--workers", "1")
    assert r.returncode == 0, r.stderr
    lines = by_id(read_out(tmp_path / "out.jsonl"))
    assert sorted(lines) == sorted(ids)
    one = lines["case-0002"]
    assert one["status"] == {"code": 0, "message": ""}
    assert "[1]" in one["report"] and "[2]" in one["report"]
    assert [ref["url"] for ref in one["references"]] == [
        "https://history.example/corvin2", "https://census.example/corvin2?utm_source=x"]
    assert one["stats"]["cited_sentences"] == 2 and one["report"].endswith(
        "Many visitors find the old harbour charming.\n\n## References\n\n"
        "[1] [History of Corvin2](https://history.example/corvin2)\n"
        "[2] [Corvin2 census](https://census.example/corvin2?utm_source=x)\n")
    # not a terminal: plain progress lines, the last one with the totals
    assert "bulk: 6/6 done, 0 errors" in r.stderr


def test_malformed_lines_become_error_lines_with_line_numbers(tmp_path: Path) -> None:
    bad = [
        '{"id": "broken", "report": ',                                   # line 3: not JSON
        json.dumps({"id": "no-report", "records": []}),                   # line 6
        json.dumps({"id": "bad-opt", "report": "x.", "options": {"max_sources": 99}}),  # line 9
        json.dumps(case(0)),                                              # line 12: duplicate id
        "[1, 2]",                                                         # line 15: not an object
        json.dumps({"id": "bad-key", "report": "x.", "options": {"colour": "red"}}),  # line 18
    ]
    ids = write_cases(tmp_path / "in.jsonl", 12, extra=bad, every=2)
    with open(tmp_path / "in.jsonl", "a", encoding="utf-8") as fh:
        fh.write("\n   \n")  # blank lines are not input lines
    r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--workers", "2")
    assert r.returncode == 0, r.stderr
    lines = read_out(tmp_path / "out.jsonl")
    assert len(lines) == 12 + len(bad)
    errors = {(ln["id"], ln["error"]["line"]): ln["error"] for ln in lines if "error" in ln}
    assert set(errors) == {("line-3", 3), ("no-report", 6), ("bad-opt", 9), ("case-0000", 12),
                           ("line-15", 15), ("bad-key", 18)}
    assert "not valid JSON" in errors[("line-3", 3)]["message"]
    assert errors[("no-report", 6)] == {"code": "INVALID_ARGUMENT", "message": "line 6: report: missing",
                                        "line": 6}
    assert "options.max_sources" in errors[("bad-opt", 9)]["message"]
    assert errors[("case-0000", 12)]["code"] == DUPLICATE_CODE
    assert "first used on line 1" in errors[("case-0000", 12)]["message"]
    assert "options.colour" in errors[("bad-key", 18)]["message"]
    ok = {ln["id"] for ln in lines if "error" not in ln}
    assert ok == set(ids)
    assert "6 errors" in r.stderr


def test_a_line_without_id_is_never_refused_as_a_duplicate_of_a_given_one(tmp_path: Path) -> None:
    """Line 2 has no id, and line 1 gave "line-2" as its own: line 2 is traced as "line-2-2" (on
    resume too), not refused as a duplicate; a later line that gives "line-2-2" itself is."""
    lines = [{"id": "line-2", "report": "Water boils at 100 C.", "records": []},
             {"report": "Ice melts at 0 C.", "records": []},
             {"id": "line-2-2", "report": "Lead melts at 327 C.", "records": []}]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--workers", "1")
    assert r.returncode == 0, r.stderr
    out = read_out(tmp_path / "out.jsonl")
    answered = {ln["id"]: ln["report"] for ln in out if "error" not in ln}
    assert answered == {"line-2": "Water boils at 100 C.", "line-2-2": "Ice melts at 0 C."}
    [dup] = [ln for ln in out if "error" in ln]
    assert dup["error"]["code"] == DUPLICATE_CODE and dup["error"]["line"] == 3
    assert "first used on line 2" in dup["error"]["message"]
    r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--resume", "--workers", "1")
    assert r.returncode == 0 and read_out(tmp_path / "out.jsonl") == out, r.stderr


def test_existing_output_needs_resume_or_overwrite(tmp_path: Path) -> None:
    write_cases(tmp_path / "in.jsonl", 2)
    (tmp_path / "out.jsonl").write_text('{"id": "old"}\n')
    r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl")
    assert r.returncode == 2 and "--resume" in r.stderr
    r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--overwrite", "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert sorted(ln["id"] for ln in read_out(tmp_path / "out.jsonl")) == ["case-0000", "case-0001"]


def test_worker_parity_one_vs_two(tmp_path: Path) -> None:
    write_cases(tmp_path / "in.jsonl", 16)
    r1 = bulk(tmp_path / "in.jsonl", tmp_path / "w1.jsonl", "--workers", "1")
    r2 = bulk(tmp_path / "in.jsonl", tmp_path / "w2.jsonl", "--workers", "2")
    assert r1.returncode == 0 and r2.returncode == 0, r1.stderr + r2.stderr
    one = {k: comparable(v) for k, v in by_id(read_out(tmp_path / "w1.jsonl")).items()}
    two = {k: comparable(v) for k, v in by_id(read_out(tmp_path / "w2.jsonl")).items()}
    assert one == two and len(one) == 16


def test_resume_after_sigkill_at_a_random_point(tmp_path: Path) -> None:
    n = 240
    bad = ['{"id": "torn-input", "report": "unterminated', json.dumps({"id": "no-report-2"})]
    ids = write_cases(tmp_path / "in.jsonl", n, extra=bad, every=70)
    out = tmp_path / "out.jsonl"
    rng = random.Random(int(time.time()))
    kill_after = rng.randint(1, n // 3)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCE_TRACER_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "server.cli", "bulk", str(tmp_path / "in.jsonl"), str(out),
         "--workers", "2", "--fsync", "never"],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if out.exists() and out.read_bytes().count(b"\n") >= kill_after:
                break
            assert proc.poll() is None, "the run finished before it could be killed"
            time.sleep(0.005)
        workers = _children(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)  # the main process only; its workers lose their parent
    finally:
        proc.wait(30)
    deadline = time.monotonic() + 15  # orphaned workers notice and exit
    while time.monotonic() < deadline and any(_running(pid) for pid in workers):
        time.sleep(0.1)
    assert workers and not any(_running(pid) for pid in workers)
    before = read_out(out)
    assert 0 < len(before) < n + len(bad), f"killed after {len(before)} lines"
    # a crash can also leave a torn last line: resume must cut it away
    with open(out, "ab") as fh:
        fh.write(b'{"id": "case-9999", "report": "half a li')
    r = bulk(tmp_path / "in.jsonl", out, "--resume", "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert "torn last line" in r.stderr
    after = read_out(out)
    assert after[: len(before)] == before           # nothing rewritten
    assert len(after) == n + len(bad)               # one line per input line
    got = by_id(after)                              # and every id exactly once
    assert set(got) == set(ids) | {"line-71", "no-report-2"}
    assert all("error" not in got[i] for i in ids)


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie has exited (pid 1 of a container may not reap it)


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def test_output_repair_and_resume_state(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_bytes(
        b'{"id":"a","report":"x"}\n'
        b'{"id":"a","error":{"code":"ALREADY_EXISTS","message":"dup","line":7}}\n'
        b'{"id":"b","error":{"code":"INVALID_ARGUMENT","message":"m","line":2}}\n'
        b'{"id":"c","rep'
    )
    o = Output(str(out), resume=True, overwrite=False, fsync="always")
    try:
        assert o.truncated_bytes == len(b'{"id":"c","rep')
        assert o.done_ids == {"a", "b"} and o.done_dup_lines == {7: "a"} and o.lines_present == 3
        o.write(b'{"id":"c"}')
    finally:
        o.close()
    assert out.read_bytes().endswith(b'"line":2}}\n{"id":"c"}\n')
    held = Output(str(out), resume=True, overwrite=False, fsync="never")
    try:  # one writer at a time: a second run on the same OUT is refused
        with pytest.raises(BulkError, match="being written by another bulk run"):
            Output(str(out), resume=True, overwrite=False, fsync="never")
    finally:
        held.close()
    out.write_bytes(b'{"id":"a"}\nnot json\n')
    with pytest.raises(BulkError, match="line 2 is not an output line"):
        Output(str(out), resume=True, overwrite=False, fsync="never")


def test_resume_keeps_duplicate_lines_answered_once(tmp_path: Path) -> None:
    lines = [json.dumps(case(0)), json.dumps(case(1)), json.dumps(case(0))]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.jsonl"
    # as if killed after the duplicate's error line but before case-0000's own answer
    out.write_text(json.dumps({"id": "case-0000", "error": {"code": DUPLICATE_CODE, "message": "dup",
                                                             "line": 3}}) + "\n")
    r = bulk(tmp_path / "in.jsonl", out, "--resume", "--workers", "1")
    assert r.returncode == 0, r.stderr
    got = read_out(out)
    assert len(got) == 3
    answered = [ln for ln in got if "error" not in ln]
    assert sorted(ln["id"] for ln in answered) == ["case-0000", "case-0001"]
    r = bulk(tmp_path / "in.jsonl", out, "--resume", "--workers", "1")  # nothing left to do
    assert r.returncode == 0 and len(read_out(out)) == 3


def test_resume_after_in_changed_skips_a_duplicate_line_only_for_its_own_id(tmp_path: Path) -> None:
    """A duplicate-id error line is remembered with its line number *and* id: after the duplicate
    was deleted from IN, the line now at that number is another item, and is traced."""
    (tmp_path / "in.jsonl").write_text("\n".join(json.dumps(case(i)) for i in (0, 1, 2)) + "\n")
    out = tmp_path / "out.jsonl"
    # what a run of (case-0000, case-0000, case-0001, case-0002) left when killed after line 2's error
    out.write_text(json.dumps({"id": "case-0000", "error": {"code": DUPLICATE_CODE, "message": "dup",
                                                             "line": 2}}) + "\n")
    r = bulk(tmp_path / "in.jsonl", out, "--resume", "--workers", "1")
    assert r.returncode == 0, r.stderr
    answered = sorted(ln["id"] for ln in read_out(out) if "error" not in ln)
    assert answered == ["case-0000", "case-0001", "case-0002"]
    assert "bulk: 3/3 done, 0 errors, 0 skipped" in r.stderr


def test_resume_traces_a_line_whose_id_is_no_longer_a_duplicate(tmp_path: Path) -> None:
    """Run 1 read (case-0000, case-0000) and was killed after line 2's duplicate error; the user
    then fixed line 1. Line 2 still holds case-0000, but it is its first line now: traced."""
    (tmp_path / "in.jsonl").write_text("\n".join(json.dumps(case(i)) for i in (1, 0)) + "\n")
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps({"id": "case-0000", "error": {"code": DUPLICATE_CODE, "message": "dup",
                                                             "line": 2}}) + "\n")
    r = bulk(tmp_path / "in.jsonl", out, "--resume", "--workers", "1")
    assert r.returncode == 0, r.stderr
    answered = sorted(ln["id"] for ln in read_out(out) if "error" not in ln)
    assert answered == ["case-0000", "case-0001"], r.stderr


def test_resume_progress_counts_only_what_is_left(tmp_path: Path) -> None:
    """OUT holding answers for ids IN no longer has: the total still ends at what was done."""
    (tmp_path / "in.jsonl").write_text("\n".join(json.dumps(case(i)) for i in (0, 1, 2)) + "\n")
    out = tmp_path / "out.jsonl"
    ids = ("gone-1", "gone-2", "case-0001")
    out.write_text("".join(json.dumps({"id": i, "report": "x"}) + "\n" for i in ids))
    r = bulk(tmp_path / "in.jsonl", out, "--resume", "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert "bulk: 2/2 done, 0 errors, 1 skipped" in r.stderr, r.stderr


def test_an_id_of_spaces_is_no_id() -> None:
    for raw_id in ("", "   ", "\t"):
        item = parse_line(4, json.dumps({"id": raw_id, "report": "A fact.", "records": []}).encode())
        assert item.id == "line-4", raw_id


def test_parse_line_accepts_options_and_grouped_records() -> None:
    raw = json.dumps({
        "id": 7, "report": "A fact.",
        "records": {"news": [{"link": "https://n.example/1", "name": "N", "text": "A fact."}]},
        "options": {"mode": "deterministic", "placement": "after", "existing": "EXISTING_REPLACE",
                    "min_score": 0.4, "style": "link", "language": "en", "llm_min_score": 0.5,
                    "llm_keep_score": 2, "strict_figures": True},
    }).encode()
    item = parse_line(1, raw)
    assert not hasattr(item, "code"), item
    from server.pb.source_tracer.v1 import tracer_pb2 as pb

    req = pb.TraceRequest.FromString(item.request)  # type: ignore[union-attr]
    assert req.id == "7"
    assert (req.records[0].url, req.records[0].title, req.records[0].content, req.records[0].source_type) == (
        "https://n.example/1", "N", "A fact.", "news")
    assert req.options.mode == pb.MODE_DETERMINISTIC and req.options.placement == pb.PLACEMENT_AFTER_PUNCT
    assert req.options.existing == pb.EXISTING_REPLACE and abs(req.options.min_score - 0.4) < 1e-6
    assert (req.options.llm_min_score, req.options.llm_keep_score) == (0.5, 2.0)
    assert req.options.strict_figures
    unset = pb.TraceRequest.FromString(parse_line(2, b'{"report": "y"}').request)  # type: ignore[union-attr]
    assert not unset.options.HasField("llm_min_score") and not unset.options.HasField("llm_keep_score")
    typo = parse_line(3, b'{"report": "y", "options": {"llm_keep_score": "off"}}')
    assert getattr(typo, "code", "") == "INVALID_ARGUMENT" and "options.llm_keep_score" in typo.message  # type: ignore[union-attr]
    flag = parse_line(5, b'{"report": "y", "options": {"strict_figures": "yes"}}')
    assert getattr(flag, "code", "") == "INVALID_ARGUMENT" and "options.strict_figures" in flag.message  # type: ignore[union-attr]
    bad = parse_line(4, b'{"id": "x", "report": "y", "options": {"mode": "fast"}}')
    assert getattr(bad, "code", "") == "INVALID_ARGUMENT" and "options.mode" in bad.message  # type: ignore[union-attr]


def test_parse_line_reads_lone_surrogate_escapes_keeping_the_id() -> None:
    """`JSON.stringify` writes a string cut inside an emoji as "\\ud83d": a record holding one is
    read with U+FFFD in its place and a warning; a report holding one is refused, under its id."""
    from server.pb.source_tracer.v1 import tracer_pb2 as pb

    fact = "Norway had 82.4% of new car sales electric in 2023."
    line = json.dumps({"id": "cut", "report": fact, "records": [
        {"url": "https://a.org", "content": fact}, {"url": "https://b.org", "title": "B \ud83d",
                                                   "content": "cut emoji \ud83d"}]})
    item = parse_line(1, line.encode())
    assert not hasattr(item, "code"), item
    req = pb.TraceRequest.FromString(item.request)  # type: ignore[union-attr]
    assert (req.id, req.records[1].title, req.records[1].content) == ("cut", "B \ufffd", "cut emoji \ufffd")
    assert [n.split(":")[1] for n in item.notes] == [" title", " content"]  # type: ignore[union-attr]
    bad = parse_line(2, json.dumps({"id": "r", "report": fact + " \ud83d", "records": []}).encode())
    assert (bad.id, bad.code) == ("r", "INVALID_ARGUMENT")  # type: ignore[union-attr]
    assert "report: holds a lone surrogate (U+D83D" in bad.message  # type: ignore[union-attr]


_FACT = "Norway had 82.4% of new car sales electric in 2023."


@pytest.mark.parametrize(("line", "answer"), [
    ('{"id": "a\\ud800", "report": "x\\ud800", "records": []}', ("line-1", "id: holds a lone surrogate")),
    ('{"id": "o", "report": "x", "options": {"references_heading": "R\\ud83d"}}',
     ("o", "options: holds a lone surrogate")),
    ('{"id": "d", "report": "x", "x": ' + "[" * 200_000 + '"\\ud83d"' + "]" * 200_000 + "}",
     ("line-1", "not valid JSON")),
    ('[{"id": "t", "report": "\\ud83d"},]', ("line-1", "not valid JSON")),
    ('{"id": "g", "report": "' + _FACT + '", "records": {"w\\ud83d": [{"url": "https://a.org", '
     '"content": "' + _FACT + '"}]}}',
     ("g", "records: group 'w\ufffd': a lone surrogate in its name replaced by U+FFFD")),
    ('{"id": "m", "report": "' + _FACT + '", "records": [{"url": "https://a.org", "content": "' + _FACT
     + '", "metadata": {"k\\ud83d": "v\\ud83d", "n\\ud800": 1}, "x": ' + "[" * 500 + '"\\ud83d"'
     + "]" * 500 + "}]}", ("m", "records[0]: metadata.k\ufffd: 1 lone surrogate")),
])
def test_a_line_with_lone_surrogates_anywhere_is_answered_never_raised(
        line: str, answer: tuple[str, str]) -> None:
    """A line that escapes half a UTF-16 pair (in an id, the options, a group's name, a metadata key,
    deep inside an unknown field) gets its own answer: an error line, or a trace with a warning."""
    got = parse_line(1, line.encode())
    item_id, says = answer
    assert got.id == item_id
    text = got.message if isinstance(got, BadLine) else " | ".join(got.notes)
    assert says in text, text
    assert "\ud83d" not in text and "\ud800" not in text


def test_a_line_of_invalid_utf8_says_so_and_where() -> None:
    got = parse_line(4, b'{"id": "u", "report": "ok \xff\xfe"}\n')
    assert isinstance(got, BadLine) and got.id == "line-4"
    assert got.message == "line 4: invalid UTF-8 at byte 26"


def test_parse_line_takes_records_or_classified_content_not_both() -> None:
    from server.pb.source_tracer.v1 import tracer_pb2 as pb

    cc = [{"index": 0, "title": "T", "url": "https://c.example/cc", "original_content": "A fact."}]
    item = parse_line(1, json.dumps({"id": "e", "report": "A fact.", "records": [],
                                     "classified_content": cc}).encode())
    req = pb.TraceRequest.FromString(item.request)  # type: ignore[union-attr]
    assert [r.url for r in req.records] == ["https://c.example/cc"]
    both = parse_line(2, json.dumps({"id": "b", "report": "A fact.", "classified_content": cc,
                                     "records": [{"url": "https://r.example", "content": "x"}]}).encode())
    assert (both.id, both.code) == ("b", "INVALID_ARGUMENT")  # type: ignore[union-attr]
    assert "records and classified_content both" in both.message  # type: ignore[union-attr]


JIUWEN_ITEMS = [
    {"index": 1, "title": "Fundy facts", "url": "https://fundy.example/facts",
     "original_content": "Tides in the Bay of Fundy can exceed 16 metres, the largest range anywhere."},
    {"index": 2, "title": "World tides", "url": "https://tides.example/world",
     "original_content": "The Bay of Fundy has the highest tides in the world, scientists say."},
]


def test_openjiuwen_shape_round_trip(tmp_path: Path) -> None:
    report = ("# Tides\n\nThe Bay of Fundy has the highest tides in the world[citation:2].\n\n"
              "The Bay of Fundy tides can exceed 16 metres, the largest range anywhere.\n")
    lines = [
        {"id": "oj", "report": report, "classified_content": JIUWEN_ITEMS},
        {"id": "oj-link", "report": report, "classified_content": JIUWEN_ITEMS, "options": {"style": "link"}},
    ]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--output-shape", "openjiuwen", "--workers", "1")
    assert r.returncode == 0, r.stderr
    got = by_id(read_out(tmp_path / "out.jsonl"))
    oj = got["oj"]
    assert set(oj) == {"id", "modified_report", "datas", "warnings"}
    body = oj["modified_report"].split("\n## ")[0]
    assert "[citation:2]" not in body
    assert "world[source_tracer_result][World tides](https://tides.example/world)." in body
    assert "anywhere[source_tracer_result][Fundy facts](https://fundy.example/facts)." in body
    assert [(d["url"], d["chunk"]) for d in oj["datas"]] == [
        ("https://tides.example/world", "The Bay of Fundy has the highest tides in the world."),
        ("https://fundy.example/facts",
         "The Bay of Fundy tides can exceed 16 metres, the largest range anywhere."),
    ]
    assert oj["datas"][1]["content"] == JIUWEN_ITEMS[0]["original_content"]
    assert "[[1]](https://tides.example/world)" in got["oj-link"]["modified_report"]

    # their output is valid input again: the markers resolve by URL, nothing changes
    (tmp_path / "again.jsonl").write_text(json.dumps(
        {"id": "oj", "report": oj["modified_report"], "classified_content": JIUWEN_ITEMS}) + "\n")
    r = bulk(tmp_path / "again.jsonl", tmp_path / "again-out.jsonl", "--output-shape", "openjiuwen",
             "--workers", "1")
    assert r.returncode == 0, r.stderr
    second = read_out(tmp_path / "again-out.jsonl")[0]
    assert second["modified_report"] == oj["modified_report"]
    assert [d["url"] for d in second["datas"]] == [d["url"] for d in oj["datas"]]


def test_per_item_timeout_and_progress_bar(tmp_path: Path) -> None:
    write_cases(tmp_path / "in.jsonl", 3)
    r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--workers", "1", "--timeout", "0.000001",
             "--progress", "bar")
    assert r.returncode == 0, r.stderr
    errors = [ln["error"] for ln in read_out(tmp_path / "out.jsonl")]
    assert len(errors) == 3 and {e["code"] for e in errors} == {"DEADLINE_EXCEEDED"}
    assert "100%" in r.stderr and "errors=3" in r.stderr  # the tqdm bar, with the error count
    assert "bulk: 3/3 done, 3 errors" in r.stderr


def test_llm_flags_reach_the_workers(tmp_path: Path) -> None:
    from tests.fake_openai import FakeOpenAI, candidates_first

    ids = write_cases(tmp_path / "in.jsonl", 4)
    with FakeOpenAI(candidates_first) as srv:
        r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--workers", "2",
                 "--llm-base-url", srv.base_url, "--llm-model", "fake-model", "--llm-api-key", "k")
    assert r.returncode == 0, r.stderr
    got = by_id(read_out(tmp_path / "out.jsonl"))
    assert sorted(got) == sorted(ids)
    assert {ln["mode"] for ln in got.values()} == {"llm"}
    assert all(ln["stats"]["llm_calls"] >= 1 and "[1]" in ln["report"] for ln in got.values())
    assert len(srv.log) >= 4  # every item asked the model


@pytest.mark.parametrize(("workers", "cap"), [(2, 2), (3, 1)])
def test_llm_max_concurrency_caps_the_whole_run_not_each_worker(
        tmp_path: Path, workers: int, cap: int) -> None:
    """--llm-max-concurrency 2 with 2 workers: each worker's backend gets one call in flight, so
    the model never sees more than 2 at once (it saw 4: the cap applied per worker). With fewer
    calls than workers, fewer workers run (3 workers at 1 had 3 calls in flight)."""
    from tests.fake_openai import FakeOpenAI, Reply, match_json

    write_cases(tmp_path / "in.jsonl", 6)
    with FakeOpenAI([Reply(match_json({}), delay=0.3)]) as srv:
        r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--workers", str(workers), "--window", "6",
                 "--llm-max-concurrency", str(cap), "--llm-base-url", srv.base_url,
                 "--llm-model", "fake-model", "--llm-api-key", "k", "--llm-chunk-sentences", "1")
        log = list(srv.log)
    assert r.returncode == 0, r.stderr
    assert (f"{workers} workers reduced to {cap}" in r.stderr) is (workers > cap), r.stderr
    events = sorted([(e.start, 1) for e in log] + [(e.end, -1) for e in log])
    peak = now = 0
    for _, step in events:
        now += step
        peak = max(peak, now)
    assert len(log) >= 6 and peak <= cap, (len(log), peak)


def test_a_model_slower_than_the_item_timeout_degrades_the_item(tmp_path: Path) -> None:
    from tests.fake_openai import FakeOpenAI, Reply, match_json

    ids = write_cases(tmp_path / "in.jsonl", 2)
    with FakeOpenAI([Reply(match_json({}), delay=30.0)]) as srv:
        r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--workers", "1", "--timeout", "2",
                 "--llm-base-url", srv.base_url, "--llm-model", "fake-model", "--llm-api-key", "k")
    assert r.returncode == 0, r.stderr
    got = by_id(read_out(tmp_path / "out.jsonl"))
    assert sorted(got) == sorted(ids)
    for ln in got.values():
        assert "error" not in ln and ln["degraded"] and "[1]" in ln["report"]
        assert any("deadline" in w for w in ln["warnings"])


_ORPHAN_SCRIPT = r"""
import multiprocessing, os, sys, time

def worker() -> None:
    time.sleep(1.5)  # still "importing" when the driver dies
    from server.workers import exit_with_parent
    exit_with_parent()
    time.sleep(120)

if __name__ == "__main__":
    proc = multiprocessing.get_context("spawn").Process(target=worker)
    proc.start()
    print(proc.pid, flush=True)
    os._exit(0)  # the driver dies (like SIGKILL) before the worker's watchdog starts
"""


def test_worker_started_after_its_driver_died_exits(tmp_path: Path) -> None:
    script = tmp_path / "orphan.py"
    script.write_text(_ORPHAN_SCRIPT)
    driver = subprocess.run([sys.executable, str(script)], cwd=REPO, capture_output=True, text=True,
                            timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert driver.returncode == 0, driver.stderr
    pid = int(driver.stdout.split()[0])
    deadline = time.monotonic() + 30  # the orphan notices its spawner is gone and exits
    while time.monotonic() < deadline and _running(pid):
        time.sleep(0.1)
    alive = _running(pid)
    if alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, "an orphaned pool worker kept running"


def test_pool_workers_tune_their_collector() -> None:
    from bulk_cases import gc_work

    from server.bulk import Item, run_local
    from server.workers import GC_GEN0_THRESHOLD

    out: list[dict[str, int]] = []
    items = [Item(line=i, id=str(i), request=b"") for i in range(1, 5)]
    run_local(iter(items), lambda _n, line, _ok: out.append(json.loads(line)), workers=2,
              shape="source-tracer", llm_args=None, llm_section=None, timeout_s=0, work=gc_work)
    assert sorted(o["line"] for o in out) == [1, 2, 3, 4]
    assert all(o["gen0"] == GC_GEN0_THRESHOLD and o["frozen"] > 10_000 for o in out), out


def test_a_poison_item_costs_one_error_line_not_the_run() -> None:
    """A worker that dies breaks the pool: the items in flight are retried alone, the one that
    kills its worker again gets an INTERNAL error line, every other item is answered."""
    from bulk_cases import poison_work

    from server.bulk import CRASHED, Item, run_local
    from server.pb.source_tracer.v1 import tracer_pb2 as pb

    items = []
    for i in range(12):
        c = case(i)
        cid = c["id"] + ("-poison" if i == 5 else "")
        req = pb.TraceRequest(id=cid, report=c["report"], records=[pb.Record(**r) for r in c["records"]])
        items.append(Item(line=i + 1, id=cid, request=req.SerializeToString()))
    out: list[tuple[dict[str, object], bool]] = []
    run_local(iter(items), lambda _n, line, ok: out.append((json.loads(line), ok)), workers=2,
              shape="source-tracer", llm_args=None, llm_section=None, timeout_s=0, work=poison_work)

    assert sorted(str(o["id"]) for o, _ in out) == sorted(it.id for it in items)  # each once
    bad = [(o, ok) for o, ok in out if not ok]
    assert len(bad) == 1
    entry, _ = bad[0]
    assert entry["id"] == "case-0005-poison"
    assert entry["error"] == {"code": "INTERNAL", "message": CRASHED, "line": 6}
    assert entry["engine_version"] == tracer.__version__  # which release failed it
    assert all(o.get("citations") for o, ok in out if ok)  # the others were traced for real


def test_ordered_output_follows_input_order_with_error_lines_in_place(tmp_path: Path) -> None:
    """--ordered: a slow first item holds back faster later ones; error lines keep their place."""
    heavy = case(0)
    filler = " ".join(f"Filler sentence {k} about river trade and harbour fees." for k in range(40))
    heavy["records"] = heavy["records"] + [
        {"url": f"https://filler.example/{k}", "title": f"Filler {k}", "content": filler * 8}
        for k in range(150)
    ]
    lines = [json.dumps(heavy)]
    expected = [heavy["id"]]
    for i in range(1, 10):
        lines.append(json.dumps(case(i)))
        expected.append(case(i)["id"])
        if i == 3:
            lines.append('{"id": "broken", ')
            expected.append("line-5")
        if i == 6:
            lines.append(json.dumps(case(2)))  # duplicate id: answered where it stands
            expected.append("case-0002")
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--workers", "2", "--ordered")
    assert r.returncode == 0, r.stderr
    out = read_out(tmp_path / "out.jsonl")
    assert [ln["id"] for ln in out] == expected
    assert [ln["error"]["line"] for ln in out if "error" in ln] == [5, 9]


def test_in_order_releases_each_line_once_after_all_earlier_ones() -> None:
    import threading

    from server.bulk import InOrder

    written: list[int] = []
    in_order = InOrder(lambda n, _line, _ok: written.append(n))
    numbers = list(range(1, 401))
    for n in numbers:
        in_order.dispatched(n)
    shuffled = numbers[:]
    random.Random(7).shuffle(shuffled)

    def finish(part: list[int]) -> None:
        for n in part:
            in_order(n, b"{}", True)

    threads = [threading.Thread(target=finish, args=(shuffled[k::4],)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert written == numbers and in_order.held == 0


def test_engine_ray_without_ray_installed_stops_before_writing(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Without the ray extra, `--engine ray` is refused before OUT is created, so the same command
    runs once the extra is installed (no "OUT is not empty")."""
    import importlib.util

    from server import bulk as bulk_module

    real = importlib.util.find_spec
    monkeypatch.setattr(bulk_module.importlib.util, "find_spec",
                        lambda name, *a: None if name == "ray" else real(name, *a))
    write_cases(tmp_path / "in.jsonl", 2, extra=["not json"], every=1)
    code = bulk_module.main([str(tmp_path / "in.jsonl"), str(tmp_path / "out.jsonl"), "--engine", "ray"])
    assert code == 2
    assert "pip install 'source-tracer[ray]'" in capsys.readouterr().err
    assert not (tmp_path / "out.jsonl").exists()


def test_a_worker_that_dies_between_submissions_costs_one_error_line_not_the_run() -> None:
    """Input read slower than items finish: the pool breaks while the driver is between two
    submissions, and the next `submit` itself raises. That item and those in flight are retried
    alone like any others; only the poison item gets an error line."""
    from bulk_cases import poison_work

    from server.bulk import CRASHED, Item, run_local
    from server.pb.source_tracer.v1 import tracer_pb2 as pb

    def items() -> Iterator[Item]:
        for i in range(6):
            c = case(i)
            cid = c["id"] + ("-poison" if i == 1 else "")
            req = pb.TraceRequest(id=cid, report=c["report"], records=[pb.Record(**r) for r in c["records"]])
            yield Item(line=i + 1, id=cid, request=req.SerializeToString())
            time.sleep(0.4)

    out: list[tuple[dict[str, object], bool]] = []
    run_local(items(), lambda _n, line, ok: out.append((json.loads(line), ok)), workers=2,
              shape="source-tracer", llm_args=None, llm_section=None, timeout_s=0, work=poison_work)
    assert sorted(str(o["id"]) for o, _ in out) == sorted(
        case(i)["id"] + ("-poison" if i == 1 else "") for i in range(6))
    bad = [o for o, ok in out if not ok]
    assert [o["id"] for o in bad] == ["case-0001-poison"] and bad[0]["error"]["message"] == CRASHED


def test_an_output_path_that_cannot_be_opened_is_a_usage_error(tmp_path: Path) -> None:
    write_cases(tmp_path / "in.jsonl", 2)
    for out in (tmp_path, tmp_path / "missing" / "out.jsonl"):
        r = bulk(tmp_path / "in.jsonl", out)
        assert r.returncode == 2, r.stderr
        assert f"{out}: cannot open for writing" in r.stderr and "Traceback" not in r.stderr


def test_a_full_disk_stops_the_run_resumably(tmp_path: Path) -> None:
    write_cases(tmp_path / "in.jsonl", 2)
    r = bulk(tmp_path / "in.jsonl", "/dev/full", "--workers", "1")
    assert r.returncode == 1, r.stderr
    # /dev/full is a device, not a file: nothing to resume from, so no --resume advice
    assert "cannot write /dev/full: No space left on device" in r.stderr
    assert "run again for the rest" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_file_that_cannot_grow_stops_the_run_resumably(tmp_path: Path) -> None:
    """A regular OUT that cannot take another line (a full disk; here a file-size limit): the run
    stops with exit 1 and says --resume finishes it."""
    write_cases(tmp_path / "in.jsonl", 40)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCE_TRACER_")}

    # The limit is set by the child itself before it runs the CLI, not by a preexec_fn: a
    # preexec_fn runs Python between fork and exec, where gRPC's fork handlers in this (threaded,
    # gRPC-using) test process can abort the child before it ever starts.
    small_files = ("import resource, runpy, signal, sys\n"
                   "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"  # past the limit: EFBIG
                   "resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))\n"
                   "sys.argv[0] = 'server.cli'\n"
                   "runpy.run_module('server.cli', run_name='__main__', alter_sys=True)\n")
    r = subprocess.run([sys.executable, "-c", small_files, "bulk", str(tmp_path / "in.jsonl"),
                        str(tmp_path / "out.jsonl"), "--workers", "1"], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 1, r.stderr
    assert "File too large" in r.stderr and "rerun with --resume to finish" in r.stderr, r.stderr
    r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--resume", "--workers", "1")
    assert r.returncode == 0 and len(read_out(tmp_path / "out.jsonl")) == 40, r.stderr


def _trivial_items(n: int) -> list[Any]:
    """n one-sentence requests with no records, as bulk items."""
    from server.bulk import Item
    from server.pb.source_tracer.v1 import tracer_pb2 as pb

    return [Item(line=i + 1, id=f"x{i}",
                 request=pb.TraceRequest(id=f"x{i}", report="A b c.").SerializeToString())
            for i in range(n)]


def test_workers_that_cannot_start_stop_the_run_before_any_item_is_sent(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """A worker start-up that fails (here an [llm] section the parent never checked) stops the
    run at once with a resumable error saying so: no item is sent, none is blamed."""
    import argparse

    from server.bulk import run_local

    items = _trivial_items(4)
    written: list[bytes] = []
    with pytest.raises(BulkError) as err:
        run_local(iter(items), lambda _n, line, _ok: written.append(line), workers=2, shape="source-tracer",
                  llm_args=argparse.Namespace(), llm_section={"no_such_key": 1}, timeout_s=0)
    assert err.value.resumable and "fail to start" in str(err.value)
    assert written == []
    errors = capfd.readouterr().err
    assert "no_such_key" in errors  # the worker's own error is shown, not swallowed
    assert "dictionary changed size" not in errors


def test_a_pool_restart_survives_workers_killed_while_it_starts() -> None:
    """The OOM killer often strikes twice: a worker of the replacement pool that dies while the
    pool starts is tried again, and only repeated deaths stop the run, saying what happened (it
    said the workers "fail to start", with no error above it)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from server.bulk import restarted

    ctx = multiprocessing.get_context("spawn")
    made: list[int] = []

    def dies_first(size: int) -> ProcessPoolExecutor:  # the first pool's workers die as they start
        made.append(size)
        if len(made) == 1:
            return ProcessPoolExecutor(size, mp_context=ctx, initializer=os._exit, initargs=(9,))
        return ProcessPoolExecutor(size, mp_context=ctx)

    pool = restarted(dies_first, 1)
    try:
        assert pool.submit(os.getpid).result() != os.getpid() and made == [1, 1]
    finally:
        pool.shutdown()

    def always(size: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(size, mp_context=ctx, initializer=os._exit, initargs=(9,))

    with pytest.raises(BulkError) as err:
        restarted(always, 1, tries=2)
    assert err.value.resumable and "died 2 times while the pool restarted" in str(err.value)


def test_workers_that_die_on_everything_stop_the_run_without_blaming_items() -> None:
    from bulk_cases import always_dies

    from server.bulk import run_local

    items = _trivial_items(4)
    written: list[bytes] = []
    with pytest.raises(BulkError) as err:
        run_local(iter(items), lambda _n, line, _ok: written.append(line), workers=2, shape="source-tracer",
                  llm_args=None, llm_section=None, timeout_s=0, work=always_dies)
    assert err.value.resumable and "trivial request" in str(err.value)
    assert written == []  # no item was blamed: a resumed run traces them all


def test_an_input_that_cannot_be_read_is_a_usage_error_and_leaves_no_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from server import bulk as bulk_module

    (tmp_path / "dir.jsonl").mkdir()
    for src, says in ((tmp_path / "missing.jsonl", "cannot read: No such file or directory"),
                      (tmp_path / "dir.jsonl", "is a directory, not a JSONL file")):
        code = bulk_module.main([str(src), str(tmp_path / "out.jsonl")])
        assert code == 2
        assert f"{src}: {says}" in capsys.readouterr().err
        assert not (tmp_path / "out.jsonl").exists()


def test_server_flag_values_that_would_be_ignored_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from server import bulk as bulk_module

    write_cases(tmp_path / "in.jsonl", 1)
    for extra, says in ((["--server", ""], "--server: no host:port given"),
                        (["--server", "127.0.0.1:1", "--timeout", "5"], "--timeout is for the local and ray"),
                        (["--timeout", "nan"], "--timeout: must be a finite number >= 0, got nan"),
                        (["--timeout", "inf"], "--timeout: must be a finite number >= 0, got inf"),
                        (["--workers", "-1"], "--workers: must be a finite number >= 0, got -1"),
                        # flags another engine reads, silently ignored before (a run the operator
                        # meant for a model came out deterministic)
                        (["--server", "127.0.0.1:1", "--workers", "7"], "--workers is for the local and ray"),
                        (["--server", "127.0.0.1:1", "--llm-model", "m"],
                         "--llm-model is for the local and ray"),
                        (["--ray-address", "1.2.3.4:6379"], "--ray-address is for --engine ray")):
        code = bulk_module.main([str(tmp_path / "in.jsonl"), str(tmp_path / "out.jsonl"), *extra])
        assert code == 2
        assert says in capsys.readouterr().err
        assert not (tmp_path / "out.jsonl").exists()


def test_bad_records_are_reported_as_the_trace_command_reports_them(tmp_path: Path) -> None:
    """The wire Record holds only strings, so a record that is no object (or has a number for a
    url) would arrive empty; bulk still words each drop, and drops the same records, as `trace`."""
    from tracer import trace

    fact = "In 2023, battery electric vehicles accounted for 82.4% of new car sales in Norway."
    good = {"url": "https://b.example.com/ev", "title": "EV", "content": fact}
    cases = {
        "list": [1, None, {"url": "x"}, {"url": 5, "id": "k", "content": "c"}, good, dict(good)],
        "grouped": {"web": [good, {"url": "https://c.example.com", "content": 7}], "query": "q"},
        "metadata": [{**good, "metadata": {"tags": {"a": 1}, "n": 3}}],
        # search tools' shapes: url and title from metadata (LangChain, Firecrawl), Tavily's page
        "tools": [{"page_content": fact, "metadata": {"source": "/kb/ev.pdf"}},
                  {"markdown": fact, "metadata": {"title": "FC", "sourceURL": "https://f.example/ev"}},
                  {"url": "https://t.example/ev", "content": "EVs.", "raw_content": fact},
                  {"id": "k9", "text": fact, "metadata": {"source": "intranet"}}],
        # the stage's "missing" (not the wire's "empty"), metadata it ignores, Haystack's meta,
        # a search API's response, a snippet's inline HTML
        "missing": [{"url": "https://m.example/a", "title": "T"}, {"title": "x", "content": "y"},
                    {**good, "metadata": {"alt": [], "ok": True, "n": 2.5}}],
        "haystack": [{"id": "h1", "content": fact, "meta": {"url": "https://h.example/ev", "title": "H"}}],
        "tavily": {"query": "q", "results": [good], "images": [{"url": "https://i.example/x.jpg",
                                                                 "description": fact}]},
        "brave": [{"url": "https://br.example/ev",
                   "description": fact.replace("Norway", "<strong>Norway</strong>")}],
        # text given as passages (Exa's highlights) or as LlamaIndex 0.12 dumps it; a LangChain
        # object as dumpd writes it; Dify's message_end event
        "passages": [{"url": "https://e.example/ev", "highlights": ["Intro.", fact]},
                     {"id_": "n1", "text_resource": {"text": fact}, "metadata": {"file_path": "/kb/n.md"}},
                     {"url": "https://x.example/ev", "content": 7, "highlights": [fact]}],
        "frameworks": {"event": "message_end", "metadata": {"retriever_resources": [
            {"document_id": "d1", "document_name": "EV report", "content": fact},
            {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "document", "Document"],
             "kwargs": {"page_content": fact, "metadata": {"source": "https://l.example/ev"}}}]}},
    }
    (tmp_path / "in.jsonl").write_text(
        "".join(json.dumps({"id": k, "report": fact, "records": v}) + "\n" for k, v in cases.items()))
    r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--workers", "1")
    assert r.returncode == 0, r.stderr
    got = by_id([json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()])
    for key, records in cases.items():
        want = trace(fact, records)
        assert got[key]["warnings"] == list(want.warnings), key
        assert got[key]["stats"]["records_dropped"] == want.stats.records_dropped, key
        assert [s["record_index"] for c in got[key]["citations"] for s in c["sources"]] == [
            s.record_index for c in want.citations for s in c.sources], key
        assert [(ref["url"], ref["title"]) for ref in got[key]["references"]] == [
            (ref.url, ref.title) for ref in want.references], key
    assert [ref["url"] for ref in got["tools"]["references"]][:3] == [   # (at most max_sources cited)
        "/kb/ev.pdf", "https://f.example/ev", "https://t.example/ev"]
    assert [ref["url"] for ref in got["tavily"]["references"]] == [good["url"]]      # no image cited
    assert [ref["url"] for ref in got["brave"]["references"]] == ["https://br.example/ev"]
    assert [ref["url"] for ref in got["haystack"]["references"]] == ["https://h.example/ev"]
    assert [ref["url"] for ref in got["passages"]["references"]] == ["https://e.example/ev", "/kb/n.md"]
    assert [ref["url"] or ref["title"] for ref in got["frameworks"]["references"]] == [
        "EV report", "https://l.example/ev"]


@pytest.mark.parametrize("source", ["-", "/dev/stdin"])
def test_in_read_from_a_pipe_is_traced_whole(tmp_path: Path, source: str) -> None:
    """bulk reads IN twice (to count, then to trace): a pipe read once was gone, and the run
    'finished' with nothing traced, exit 0. `-` and /dev/stdin on a pipe are copied first."""
    ids = write_cases(tmp_path / "in.jsonl", 3)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCE_TRACER_")}
    with open(tmp_path / "in.jsonl", "rb") as fh:
        cat = subprocess.Popen(["cat"], stdin=fh, stdout=subprocess.PIPE)
        r = subprocess.run([sys.executable, "-m", "server.cli", "bulk", source, str(tmp_path / "out.jsonl"),
                            "--workers", "1"], stdin=cat.stdout, cwd=REPO, env=env, capture_output=True,
                           text=True, timeout=180)
        cat.wait()
    assert r.returncode == 0, r.stderr
    assert sorted(by_id(read_out(tmp_path / "out.jsonl"))) == sorted(ids)
    assert "3/3 done" in r.stderr or "3 done" in r.stderr, r.stderr


def test_a_run_killed_outright_leaves_no_copy_of_its_piped_input(tmp_path: Path) -> None:
    """The copy of a piped IN is unlinked as soon as it is made (read back through /proc), so a
    run killed with SIGKILL mid-way leaves nothing in the temporary directory."""
    from tests.fake_openai import FakeOpenAI, Reply, match_json

    write_cases(tmp_path / "in.jsonl", 3)
    spool = tmp_path / "tmp"
    spool.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCE_TRACER_")}
    env["TMPDIR"] = str(spool)
    with FakeOpenAI([Reply(match_json({}), delay=60.0)]) as model:
        with open(tmp_path / "in.jsonl", "rb") as fh:
            proc = subprocess.Popen(
                [sys.executable, "-m", "server.cli", "bulk", "-", str(tmp_path / "out.jsonl"),
                 "--workers", "1", "--llm-base-url", model.base_url, "--llm-model", "m",
                 "--llm-api-key", "k"],
                stdin=fh, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while not model.log and time.monotonic() < deadline:   # tracing: IN was copied
                time.sleep(0.05)
            assert model.log, "the run never reached the model"
            assert list(spool.iterdir()) == []
            proc.kill()
            proc.wait(30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert list(spool.iterdir()) == []


@pytest.mark.parametrize("how", ["same", "symlink"])
def test_out_that_is_in_itself_is_refused_and_in_is_left_whole(tmp_path: Path, how: str) -> None:
    write_cases(tmp_path / "in.jsonl", 3)
    before = (tmp_path / "in.jsonl").read_bytes()
    out = tmp_path / "in.jsonl"
    if how == "symlink":
        out = tmp_path / "link.jsonl"
        out.symlink_to(tmp_path / "in.jsonl")
    for flag in ("--overwrite", "--resume"):
        r = bulk(tmp_path / "in.jsonl", out, flag, "--workers", "1")
        assert r.returncode == 2 and "is IN itself" in r.stderr, r.stderr
    assert (tmp_path / "in.jsonl").read_bytes() == before


def sigterm_after(out: Path, lines: int, *args: str | Path) -> tuple[int, str, float]:
    """Run `bulk *args` writing OUT `out`, send it SIGTERM once OUT holds `lines` lines: (its exit
    code, its stderr, the seconds it took to stop)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCE_TRACER_")}
    proc = subprocess.Popen([sys.executable, "-m", "server.cli", "bulk", *map(str, args)], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for = time.monotonic() + 180
        while not (out.exists() and out.read_bytes().count(b"\n") >= lines):
            assert proc.poll() is None and time.monotonic() < wait_for, "the run ended before SIGTERM"
            time.sleep(0.01)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        return proc.returncode, err, time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_sigterm_stops_the_run_resumably_like_ctrl_c(tmp_path: Path) -> None:
    """systemd, Kubernetes and `timeout` send SIGTERM: the run stops as on Ctrl-C, saying how to
    finish it (it died with no word, exit 143), and --resume finishes it."""
    ids = write_cases(tmp_path / "in.jsonl", 200)
    out = tmp_path / "out.jsonl"
    code, err, _ = sigterm_after(out, 5, tmp_path / "in.jsonl", out, "--workers", "1")
    assert code == 143, err
    assert "interrupted; rerun with --resume to finish" in err
    r = bulk(tmp_path / "in.jsonl", out, "--resume", "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert sorted(by_id(read_out(out))) == sorted(ids)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_ends_the_run_in_time_though_a_worker_waits_on_a_slow_model(
        tmp_path: Path, signum: int) -> None:
    """Stopping waits for the items in flight; one waiting on a model that answers in a minute
    held SIGTERM that long (and an interrupt raised at the wrong instant in the pool could hold it
    for ever), and Ctrl-C for the whole model call, with no word (a second Ctrl-C did not end it
    either). Now the run says it is stopping, and past the stop grace it ends anyway, saying so,
    with 143 or 130; --resume finishes it."""
    from server.bulk import STOP_GRACE_S
    from tests.fake_openai import FakeOpenAI, Reply, match_json

    write_cases(tmp_path / "in.jsonl", 3)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCE_TRACER_")}
    with FakeOpenAI([Reply(match_json({}), delay=120.0)]) as model:
        cmd = [sys.executable, "-m", "server.cli", "bulk", str(tmp_path / "in.jsonl"),
               str(tmp_path / "out.jsonl"), "--workers", "1", "--llm-base-url", model.base_url,
               "--llm-model", "m", "--llm-api-key", "k"]
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while not model.log and time.monotonic() < deadline:
                time.sleep(0.05)
            assert model.log, "the run never reached the model"
            t0 = time.monotonic()
            if signum == signal.SIGINT:
                os.killpg(proc.pid, signum)    # to the whole group, as a terminal sends Ctrl-C
            else:
                proc.send_signal(signum)       # to the run alone, as systemd and Kubernetes do
            _, err = proc.communicate(timeout=60)
            waited = time.monotonic() - t0
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 128 + signum and waited < STOP_GRACE_S + 5, (proc.returncode, waited, err)
    assert f"stopping; waiting at most {STOP_GRACE_S:.0f} s" in err, err
    assert "rerun with --resume to finish" in err and "did not stop within" in err, err


def test_resume_with_overwrite_and_a_port_out_of_range_are_usage_errors(tmp_path: Path) -> None:
    write_cases(tmp_path / "in.jsonl", 1)
    for every in ("0", "-1", "nan"):
        r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--progress-every", every)
        assert r.returncode == 2 and "--progress-every: must be more than 0 seconds" in r.stderr, r.stderr
    r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--resume", "--overwrite")
    assert r.returncode == 2 and "--resume and --overwrite are alternatives" in r.stderr
    r = bulk(tmp_path / "in.jsonl", tmp_path / "out2.jsonl", "--server", "127.0.0.1:99999")
    assert r.returncode == 2 and "port must be 1..65535" in r.stderr
    assert not (tmp_path / "out.jsonl").exists() and not (tmp_path / "out2.jsonl").exists()


def test_out_dash_writes_to_a_pipe_without_fsync_and_cannot_resume(tmp_path: Path) -> None:
    """OUT "-" is standard output, as IN "-" is standard input: written to a pipe with every line
    answered and exit 0 (fsync on a pipe fails with EINVAL, which stopped the run as "disk full").
    A pipe holds nothing to resume from."""
    ids = write_cases(tmp_path / "in.jsonl", 3)
    r = bulk(tmp_path / "in.jsonl", "-", "--workers", "1", "--fsync", "always")
    assert r.returncode == 0, r.stderr
    assert sorted(json.loads(line)["id"] for line in r.stdout.splitlines()) == sorted(ids)
    assert not (REPO / "-").exists()
    r = bulk(tmp_path / "in.jsonl", "-", "--resume", "--workers", "1")
    assert r.returncode == 2 and "--resume needs OUT to be a regular file" in r.stderr, r.stderr
    # a reader that stops early (`| head -1`): said as such, and no --resume advice it cannot take
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCE_TRACER_")}
    write_cases(tmp_path / "many.jsonl", 300)
    proc = subprocess.Popen([sys.executable, "-m", "server.cli", "bulk", str(tmp_path / "many.jsonl"), "-",
                             "--workers", "1"], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    json.loads(proc.stdout.readline())
    proc.stdout.close()
    err = proc.communicate(timeout=120)[1]
    assert proc.returncode == 1 and "standard output: closed by its reader (broken pipe)" in err, err
    assert "--resume" not in err


def test_out_dash_is_standard_output_whatever_it_is(tmp_path: Path) -> None:
    """Standard output that is a socket (systemd's journal, a socketpair) cannot be reopened as
    /dev/stdout: bulk writes to the descriptor it was given."""
    import socket

    ids = write_cases(tmp_path / "in.jsonl", 2)
    a, b = socket.socketpair()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCE_TRACER_")}
    with a, b:
        r = subprocess.run([sys.executable, "-m", "server.cli", "bulk", str(tmp_path / "in.jsonl"), "-",
                            "--workers", "1"], cwd=REPO, env=env, stdout=a, stderr=subprocess.PIPE,
                           text=True, timeout=120)
        a.close()
        b.settimeout(5)
        got = b""
        while chunk := b.recv(1 << 16):
            got += chunk
    assert r.returncode == 0, r.stderr
    assert sorted(json.loads(line)["id"] for line in got.decode().splitlines()) == sorted(ids)


def test_resume_retry_traces_named_error_and_degraded_lines_again(tmp_path: Path) -> None:
    """`--resume --retry` takes the named lines out of OUT and traces their items again: each
    input line still has exactly one line, the kept lines stay byte for byte, and only the
    kinds named are retried."""
    ids = write_cases(tmp_path / "in.jsonl", 5)
    out = tmp_path / "out.jsonl"
    answered = json.dumps({"id": ids[0], "report": "kept as it was", "degraded": False})
    timed_out = json.dumps({"id": ids[1], "error": {"code": "DEADLINE_EXCEEDED", "message": "t", "line": 2}})
    internal = json.dumps({"id": ids[2], "error": {"code": "INTERNAL", "message": "bug", "line": 3}})
    degraded = json.dumps({"id": ids[3], "report": "fell back", "degraded": True})
    out.write_text("\n".join([answered, timed_out, internal, degraded]) + "\n")
    out.chmod(0o640)
    r = bulk(tmp_path / "in.jsonl", out, "--resume", "--retry", "deadline_exceeded,degraded",
             "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert f"bulk: --retry: 2 lines of {out} to trace again (DEADLINE_EXCEEDED 1, degraded 1)" in r.stderr
    text = out.read_text()
    assert text.startswith(answered + "\n" + internal + "\n"), text[:300]
    got = by_id(read_out(out))
    assert sorted(got) == sorted(ids)
    for i in (1, 3, 4):
        assert "error" not in got[ids[i]] and got[ids[i]]["degraded"] is False
        assert "[1]" in got[ids[i]]["report"]
    assert got[ids[2]]["error"]["code"] == "INTERNAL"
    assert out.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.jsonl"]  # no temporary left

    r = bulk(tmp_path / "in.jsonl", out, "--resume", "--retry", "errors", "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert "(INTERNAL 1)" in r.stderr
    got = by_id(read_out(out))
    assert sorted(got) == sorted(ids) and not any("error" in ln for ln in got.values())
    r = bulk(tmp_path / "in.jsonl", out, "--resume", "--retry", "errors", "--workers", "1")
    assert r.returncode == 0 and "--retry: 0 lines" in r.stderr and len(read_out(out)) == 5


def test_retry_takes_out_only_lines_in_will_answer_again(tmp_path: Path) -> None:
    """An IN of the failed items alone is a common way to retry: the other items' lines named by
    --retry stay as they are (before, they were taken out and nothing answered them again)."""
    ids = write_cases(tmp_path / "all.jsonl", 4)
    out = tmp_path / "out.jsonl"
    failed = [json.dumps({"id": i, "error": {"code": "DEADLINE_EXCEEDED", "message": "t", "line": n}})
              for n, i in enumerate(ids, 1)]
    out.write_text("\n".join(failed) + "\n")
    lines = (tmp_path / "all.jsonl").read_text().splitlines()
    (tmp_path / "some.jsonl").write_text("\n".join(lines[:2]) + "\n")
    r = bulk(tmp_path / "some.jsonl", out, "--resume", "--retry", "DEADLINE_EXCEEDED", "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert "2 lines of" in r.stderr and "2 more lines it names are kept as they are" in r.stderr
    got = by_id(read_out(out))
    assert sorted(got) == sorted(ids)
    assert [("error" in got[i]) for i in ids] == [False, False, True, True]


def test_a_bom_alone_on_the_first_line_is_no_item(tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_bytes(b"\xef\xbb\xbf\n" + json.dumps(case(0)).encode() + b"\n")
    r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--workers", "1")
    assert r.returncode == 0 and "bulk: 1/1 done" in r.stderr, r.stderr


def test_retry_keeps_duplicate_lines_and_a_symlinked_out(tmp_path: Path) -> None:
    """Duplicate-id lines are never retried (`--retry errors` leaves them; naming the code is a
    usage error); a symlinked OUT stays a link to the rewritten file, locked against a second run."""
    lines = [json.dumps(case(0)), json.dumps(case(1)), json.dumps(case(0))]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    real = tmp_path / "real.jsonl"
    dup = json.dumps({"id": "case-0000", "error": {"code": DUPLICATE_CODE, "message": "dup", "line": 3}})
    failed = json.dumps({"id": "case-0000", "error": {"code": "UNAVAILABLE", "message": "u", "line": 1}})
    real.write_text(dup + "\n" + failed + "\n")
    link = tmp_path / "out.jsonl"
    link.symlink_to(real)
    r = bulk(tmp_path / "in.jsonl", link, "--resume", "--retry", "errors", "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and link.resolve() == real
    got = read_out(real)
    assert len(got) == 3 and got[0] == json.loads(dup)
    assert sorted(ln["id"] for ln in got if "error" not in ln) == ["case-0000", "case-0001"]

    o = Output(str(link), resume=True, overwrite=False, fsync="never", retry=parse_retry("degraded"))
    try:
        with pytest.raises(BulkError, match="being written by another bulk run"):
            Output(str(link), resume=True, overwrite=False, fsync="never")
    finally:
        o.close()


def test_retry_usage_errors(tmp_path: Path) -> None:
    write_cases(tmp_path / "in.jsonl", 1)
    out = tmp_path / "out.jsonl"
    for args, message in [
        (("--retry", "INTERNAL"), "--retry needs --resume"),
        (("--resume", "--retry", "TIMEOUT"), "--retry: unknown 'TIMEOUT'; give gRPC status names"),
        (("--resume", "--retry", "already_exists"), "--retry: ALREADY_EXISTS lines are duplicate ids"),
        (("--resume", "--retry", ","), "--retry: empty"),
    ]:
        r = bulk(tmp_path / "in.jsonl", out, *args)
        assert r.returncode == 2 and message in r.stderr, (args, r.stderr)
    assert not out.exists()


def test_retry_copies_out_only_when_it_holds_such_lines_and_refuses_hard_links(tmp_path: Path) -> None:
    write_cases(tmp_path / "in.jsonl", 2)
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps({"id": "case-0000", "report": "x", "degraded": False}) + "\n")
    (tmp_path / ".out.jsonl.k1ll3d.retry").write_text("a killed rewrite's copy\n")
    inode = out.stat().st_ino
    r = bulk(tmp_path / "in.jsonl", out, "--resume", "--retry", "degraded", "--workers", "1")
    assert r.returncode == 0 and "--retry: 0 lines" in r.stderr, r.stderr
    assert out.stat().st_ino == inode and len(read_out(out)) == 2   # appended to, not rewritten
    assert (tmp_path / ".out.jsonl.k1ll3d.retry").exists()          # nothing rewritten: left alone

    out.write_text(json.dumps({"id": "case-0000", "error": {"code": "INTERNAL", "message": "m", "line": 1}})
                   + "\n")
    os.link(out, tmp_path / "other-name.jsonl")
    r = bulk(tmp_path / "in.jsonl", out, "--resume", "--retry", "INTERNAL", "--workers", "1")
    assert r.returncode == 2 and "has 2 hard links; --retry replaces the file" in r.stderr, r.stderr
    (tmp_path / "other-name.jsonl").unlink()
    r = bulk(tmp_path / "in.jsonl", out, "--resume", "--retry", "INTERNAL", "--workers", "1")
    assert r.returncode == 0 and "(INTERNAL 1)" in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.jsonl"]  # the stale copy went too
    assert not any("error" in ln for ln in read_out(out))


def test_a_lock_taken_on_a_file_renamed_away_is_taken_again_on_out(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that opened OUT just before a `--retry` run renamed its copy over it must not lock
    (and cut, and append to) the replaced file: it opens OUT again and finds it locked."""
    import fcntl

    import server.bulk as bulk_mod

    out = tmp_path / "out.jsonl"
    out.write_text('{"id": "a", "report": "old"}\n')
    real_flock = fcntl.flock
    replaced: list[int] = []

    def flock_after_a_rename(fd: int, op: int) -> None:
        if not replaced:   # another run renames its copy over OUT, locked, between our open and lock
            new = tmp_path / "copy"
            new.write_text('{"id": "a", "report": "new"}\n')
            held = os.open(new, os.O_RDONLY)
            real_flock(held, fcntl.LOCK_EX)
            os.rename(new, out)
            replaced.append(held)
        real_flock(fd, op)

    monkeypatch.setattr(bulk_mod.fcntl, "flock", flock_after_a_rename)
    with pytest.raises(BulkError, match="being written by another bulk run"):
        Output(str(out), resume=True, overwrite=False, fsync="never")
    os.close(replaced[0])
    o = Output(str(out), resume=True, overwrite=False, fsync="never")   # the lock is free now
    try:
        assert o.done_ids == {"a"}
    finally:
        o.close()
