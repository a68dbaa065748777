"""The review page in a real headless Chromium (Debian's `chromium`, installed by scripts/test).

Checks: the page's script runs, a marker opened by its link target (what a click does:
`href="#cite-1"`) shows its popup with the evidence highlighted, and screenshots prove the
page renders and that the evidence highlight becomes visible only once the marker is opened.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import time
import urllib.parse
import urllib.request
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


# ---- real clicks and hovers, through the DevTools protocol (stdlib websocket client) ----------

class DevTools:
    """The smallest DevTools-protocol client: one page target, JSON calls over a websocket."""

    def __init__(self, ws_url: str) -> None:
        parts = urllib.parse.urlsplit(ws_url)
        self.sock = socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            f"GET {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            assert chunk, "DevTools closed the connection during the handshake"
            head += chunk
        assert head.split(b"\r\n", 1)[0].split()[1] == b"101", head[:200]
        self.buf = head.split(b"\r\n\r\n", 1)[1]
        self.next_id = 0

    def _read(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            assert chunk, "DevTools connection closed"
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _recv_message(self) -> dict[str, Any]:
        payload = b""
        while True:
            b0, b1 = self._read(2)
            length = b1 & 0x7F
            if length == 126:
                (length,) = struct.unpack(">H", self._read(2))
            elif length == 127:
                (length,) = struct.unpack(">Q", self._read(8))
            mask = self._read(4) if b1 & 0x80 else b""
            data = self._read(length)
            if mask:
                data = bytes(c ^ mask[i % 4] for i, c in enumerate(data))
            payload += data
            if b0 & 0x80:
                break
        message: dict[str, Any] = json.loads(payload)
        return message

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        data = json.dumps({"id": self.next_id, "method": method, "params": params}).encode()
        mask = os.urandom(4)
        n = len(data)
        if n < 126:
            header = bytes([0x81, 0x80 | n])
        elif n < 65536:
            header = bytes([0x81, 0x80 | 126]) + struct.pack(">H", n)
        else:
            header = bytes([0x81, 0x80 | 127]) + struct.pack(">Q", n)
        self.sock.sendall(header + mask + bytes(c ^ mask[i % 4] for i, c in enumerate(data)))
        while True:
            msg = self._recv_message()
            if msg.get("id") == self.next_id:
                assert "error" not in msg, msg
                result: dict[str, Any] = msg.get("result", {})
                return result

    def js(self, expression: str) -> Any:
        res = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return res["result"].get("value")

    def close(self) -> None:
        self.sock.close()


@pytest.fixture()
def devtools(tmp_path: Path) -> Iterator[DevTools]:
    profile = tmp_path / "cdp-profile"
    proc = subprocess.Popen(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars", f"--user-data-dir={profile}",
         f"--window-size={WIDTH},{HEIGHT}", "--remote-debugging-address=127.0.0.1",
         "--remote-debugging-port=0", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    client: DevTools | None = None
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().strip()):
            assert proc.poll() is None, "chromium exited before opening DevTools"
            assert time.monotonic() < deadline, "chromium did not open its DevTools port"
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as resp:
            targets = json.load(resp)
        page_ws = next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page")
        client = DevTools(page_ws)
        yield client
    finally:
        if client is not None:
            client.close()
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait(cdp: DevTools, expression: str) -> None:
    deadline = time.monotonic() + 30
    while not cdp.js(expression):
        assert time.monotonic() < deadline, f"timed out waiting for {expression}"
        time.sleep(0.05)


def _mouse(cdp: DevTools, kind: str, selector: str) -> None:
    box = cdp.js(f"(function(){{var r=document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                 "return [r.left + r.width / 2, r.top + r.height / 2];})()")
    x, y = box
    if kind == "click":
        for event in ("mouseMoved", "mousePressed", "mouseReleased"):
            cdp.call("Input.dispatchMouseEvent", type=event, x=x, y=y, button="left", clickCount=1)
    else:
        cdp.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)


VISIBLE = ("(function(id){var p=document.getElementById(id);"
           "return !!p && getComputedStyle(p).display!=='none';})")
EVIDENCE_OF = "document.querySelector('#{} mark.evidence').textContent"


def test_clicking_and_hovering_markers_show_evidence(page: Path, devtools: DevTools, tmp_path: Path) -> None:
    devtools.call("Page.enable")
    devtools.call("Page.navigate", url=page.as_uri())
    _wait(devtools, "document.body && document.body.getAttribute('data-ready') === '1'")
    assert devtools.js(f"{VISIBLE}('cite-1')") is False  # nothing open before interacting

    _mouse(devtools, "click", "#m-1")
    _wait(devtools, f"{VISIBLE}('cite-1')")
    assert devtools.js(EVIDENCE_OF.format("cite-1")) == "Revenue grew 45% in 2023"
    shot = tmp_path / "clicked.png"
    shot.write_bytes(base64.b64decode(devtools.call("Page.captureScreenshot", format="png")["data"]))
    _, _, rows = read_png(shot)
    assert count_color(rows, EVIDENCE_RGB) > 500, "the clicked marker's evidence is not on screen"

    _mouse(devtools, "hover", "#m-2")
    _wait(devtools, f"{VISIBLE}('cite-2')")
    assert devtools.js(f"{VISIBLE}('cite-1')") is False  # one panel at a time
    assert devtools.js(EVIDENCE_OF.format("cite-2")) == "据统计，2023年销量达到950万辆，"
    assert "0.88" in devtools.js("document.getElementById('cite-2').textContent")
