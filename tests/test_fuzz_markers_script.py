"""scripts/fuzz-markers generates reports with old markers and traces each twice. Its first
seeds, every policy and placement among them, must come back lossless and the same the second
time: before the twenty-fifth session's fixes, 3 of these 60 came back different. So must they with
markers and lists under label words ("[ref1]", "【来源2】", "(ref. 3)"; `--labelled`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts" / "py"))

from fuzz_markers import check, generate  # noqa: E402


def test_generated_reports_are_deterministic_and_cover_both_languages_and_policies() -> None:
    seen = set()
    for seed in range(20000, 20060):
        report, records, options = generate(seed)
        assert (report, records, options) == generate(seed)
        seen.add((any("\u4e00" <= ch <= "\u9fff" for ch in report), options.existing, options.placement))
    assert len(seen) == 8, seen


def test_the_first_sixty_seeds_trace_losslessly_and_the_same_twice() -> None:
    failed = {seed: got for seed in range(20000, 20060) if (got := check(seed)) is not None}
    assert not failed, {seed: kind for seed, (kind, _a, _b) in failed.items()}


def test_the_first_sixty_labelled_seeds_trace_losslessly_and_the_same_twice() -> None:
    assert any("[ref" in generate(seed, labelled=True)[0] for seed in range(20000, 20060))
    failed = {seed: got for seed in range(20000, 20060) if (got := check(seed, labelled=True)) is not None}
    assert not failed, {seed: kind for seed, (kind, _a, _b) in failed.items()}


def test_the_first_sixty_seeds_with_link_citations_trace_losslessly() -> None:
    # "([Title](https://…))" in half the markers, some to pages that are none of the records:
    # never an error, never a body changed beyond its markers (a few still differ on a second
    # trace, as runs with numbers past the old list do: docs/styles.md)
    assert sum("](https://" in generate(seed, links=True)[0] for seed in range(20000, 20060)) >= 40
    kinds = {seed: got[0] for seed in range(20000, 20060) if (got := check(seed, links=True)) is not None}
    assert set(kinds.values()) <= {"not idempotent"} and set(kinds) <= {20001, 20026}, kinds


def test_the_first_sixty_seeds_with_chat_apps_markers_trace_losslessly() -> None:
    # "citeturn0search2", "[web:3]", "[oai_citation:1‡…](…)", Grok's cards, ChatGPT's attribution
    # wrapper in half the markers: never an error, never a body changed beyond its markers, the same
    # on a second trace
    reports = [generate(seed, chat=True)[0] for seed in range(20000, 20060)]
    assert sum("citeturn" in r for r in reports) >= 10 and any("attribution" in r for r in reports)
    failed = {seed: got[0] for seed in range(20000, 20060) if (got := check(seed, chat=True)) is not None}
    assert not failed, failed


@pytest.mark.parametrize("seed", [20098, 20242, 20452, 20522, 20631, 20745, 20848, 21011, 21031, 21789])
def test_labelled_seeds_that_once_came_back_different_trace_the_same_twice(seed: int) -> None:
    """These came back different when label words were first read (0afca82): "As shown in , , X"
    (two markers removed) read as a claim with its frame, "[5] and （来源：5）中指出" as a titled line."""
    assert check(seed, labelled=True) is None


@pytest.mark.parametrize(("seed", "labelled"), [(22933, False), (20685, True)])
def test_a_frame_left_without_its_marker_traces_the_same_twice(seed: int, labelled: bool) -> None:
    """"… observations.[1] and [2] As shown in [1][1], hubble …" (one sentence, run on): the first
    trace read the frame with its markers as no part of the claim, the second, the markers gone,
    read "As shown in ," as words of it and cited the sentence."""
    assert check(seed, labelled=labelled) is None


def test_the_script_prints_its_counts() -> None:
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "py" / "fuzz_markers.py"), "--count", "5",
                        "--show", "0"], capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    assert "5 generated reports (seeds 20000..20004): errors 0, not lossless 0, not idempotent 0" in r.stdout
