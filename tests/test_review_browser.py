"""The review page in a real headless Chromium (Debian's `chromium`, installed by scripts/test).

Checks: the page's script runs, a marker opened by its link target (what a click does:
`href="#cite-1"`) shows its popup with the evidence highlighted, and screenshots prove the
page renders and that the evidence highlight becomes visible only once the marker is opened.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from tracer.models import Candidate, Layout, Record, Sentence, Stats, Support, TraceResult, Unsupported
from tracer.options import TraceOptions
from tracer.render import render_report
from tracer.review import render_review_html

WIDTH, HEIGHT = 1000, 700
EVIDENCE_RGB = (0xFF, 0xD6, 0x00)  # mark.evidence background in tracer/review.py
UNSUPPORTED_RGB = (0xFD, 0xE2, 0xE1)  # .unsup background


def chromium() -> str:
    for cand in (os.environ.get("CHROMIUM", ""), "/usr/bin/chromium", shutil.which("chromium") or "",
                 shutil.which("chromium-browser") or ""):
        if cand and Path(cand).exists():
            return cand
    pytest.fail("chromium not found: install it with `apt-get install -y chromium` (scripts/test does this)")


def run_chromium(tmp: Path, url: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    profile = tmp / "profile"
    profile.mkdir(exist_ok=True)
    cmd = [
        chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", "--hide-scrollbars", f"--user-data-dir={profile}",
        f"--window-size={WIDTH},{HEIGHT}", "--virtual-time-budget=3000", *args, url,
    ]
    return subprocess.run(cmd, capture_output=True, timeout=120, check=False, cwd=tmp)


def read_png(path: Path) -> tuple[int, int, list[bytes]]:
    """Decode an 8-bit RGB/RGBA non-interlaced PNG into rows of RGB bytes (stdlib only)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0 and color in (2, 6), (depth, color, interlace)
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ftype == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif ftype == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev, strict=True))
        elif ftype == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif ftype == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = prev[i]
                c = prev[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        prev = line
        rgb = bytes(line) if channels == 3 else bytes(v for i, v in enumerate(line) if i % 4 != 3)
        rows.append(rgb)
    return width, height, rows


def count_color(rows: list[bytes], rgb: tuple[int, int, int], tol: int = 6) -> int:
    n = 0
    for row in rows:
        for x in range(0, len(row), 3):
            if all(abs(row[x + k] - rgb[k]) <= tol for k in range(3)):
                n += 1
    return n


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pieces = ["Revenue grew 45% in 2023.", "据统计，2023年销量达到950万辆。", "Mars has 17 colonies."]
    text, sentences = "", []
    for i, p in enumerate(pieces):
        if i:
            text += " "
        sentences.append(Sentence(i, len(text), len(text) + len(p), p))
        text += p
    report = text + "\n"
    records = [
        Record(0, "https://a.example/r", "Annual <script>alert(1)</script> report",
               "Intro. Revenue grew 45% in 2023 thanks to services.", source_key="a"),
        Record(1, "https://b.example/ev", "EV 销量", "据统计，2023年销量达到950万辆，同比增长。",
               source_key="b"),
    ]
    chosen = {0: [Candidate(0, 0, 0, Support(0.93, "exact", 7, 31))],
              1: [Candidate(1, 1, 1, Support(0.88, "fuzzy", 0, 19))]}
    out = render_report(report, Layout(len(report), None, ()), sentences, chosen, [], {}, records,
                        TraceOptions(), "en")
    mars = sentences[2]
    result = TraceResult(out.report, out.citations, out.references,
                         (Unsupported(mars.text, mars.start, mars.end, "no record supports this sentence"),),
                         "", Stats(sentences=3), ())
    path = tmp_path_factory.mktemp("review") / "review.html"
    path.write_text(render_review_html(result, records), encoding="utf-8")
    return path


def test_opening_a_marker_shows_its_evidence_in_the_dom(page: Path) -> None:
    done = run_chromium(page.parent, page.as_uri() + "#cite-1", "--dump-dom")
    dom = done.stdout.decode("utf-8", "replace")
    assert done.returncode == 0 and "<html" in dom, done.stderr.decode()[-2000:]
    assert 'data-ready="1"' in dom  # the inline script ran (CSP allows only inline code)
    pop = re.search(r'<aside class="pop open" id="cite-1"[^>]*data-open="1"[^>]*>(.*?)</aside>', dom, re.S)
    assert pop is not None, "marker 1's popup did not open"
    assert '<mark class="evidence">Revenue grew 45% in 2023</mark>' in pop.group(1)
    assert "score 0.93" in pop.group(1) and "exact" in pop.group(1)
    assert "Annual &lt;script&gt;alert(1)&lt;/script&gt; report" in pop.group(1)
    assert re.search(r'<aside class="pop" id="cite-2"', dom)  # the other popup stays closed
    assert re.search(r'<a class="marker active" id="m-1"', dom)


def test_screenshots_render_and_the_opened_marker_shows_highlighted_evidence(page: Path) -> None:
    shots = {}
    for name, suffix in (("closed", ""), ("open", "#cite-1")):
        out = page.parent / f"{name}.png"
        done = run_chromium(page.parent, page.as_uri() + suffix, f"--screenshot={out}")
        assert done.returncode == 0 and out.exists(), done.stderr.decode()[-2000:]
        width, height, rows = read_png(out)
        assert (width, height) == (WIDTH, HEIGHT)
        shots[name] = rows
    closed, opened = shots["closed"], shots["open"]
    colors = {row[x:x + 3] for row in closed[::7] for x in range(0, len(row), 21)}
    assert len(colors) > 20, "the page rendered blank"
    assert count_color(closed, UNSUPPORTED_RGB) > 200, "the unsupported sentence is not highlighted"
    assert count_color(closed, EVIDENCE_RGB) == 0
    assert count_color(opened, EVIDENCE_RGB) > 500, "the opened marker does not show its evidence"
