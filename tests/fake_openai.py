"""A scripted OpenAI-compatible chat-completions server on a real loopback socket.

Tests (and scripts/bench-llm) start it, point the real `openai` client at `server.base_url`, and
script the replies: a list of `Reply` (served in order, the last one repeating) or a function
`(request_json, call_index) -> Reply`. Every request is logged with its start/end times and
whether the client hung up before the reply (cancellation).
"""

from __future__ import annotations

import json
import re
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_TOKEN = re.compile(r"[\u3400-\u9fff]|[^\W\u3400-\u9fff]+|[^\w\s]", re.UNICODE)
_SENTENCE = re.compile(r'<sentence id="(\d+)"(?: candidates="([\d,]*)")?>')
_PASSAGE = re.compile(r'<passage id="(\d+)">')


def count_tokens(text: str) -> int:
    """A stand-in tokenizer (words, CJK characters, punctuation), the same for every design compared."""
    return len(_TOKEN.findall(text))


@dataclass
class Reply:
    content: str | None = None        # assistant message text (None with status 200 = no choices)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0                # seconds before answering (client hang-ups are noticed)
    raw_body: bytes | None = None     # send these bytes instead of a chat completion
    completion_tokens: int | None = None
    finish_reason: str = "stop"       # "length": the model hit the request's output cap
    endless: bool = False             # a chunked body that never ends (until the client hangs up)


@dataclass
class Logged:
    body: dict[str, Any]
    start: float
    end: float = 0.0
    replying: float = 0.0             # when the reply started: the client may see it from here on
    status: int = 0
    aborted: bool = False             # the client closed the connection before the reply
    sent: int = 0                     # body bytes written
    headers: dict[str, str] = field(default_factory=dict)  # the request's, names lower-cased

    @property
    def user(self) -> str:
        msgs = self.body.get("messages", [])
        return str(msgs[-1]["content"]) if msgs else ""


def prompt_ids(body: dict[str, Any]) -> tuple[list[int], list[int], dict[int, list[int]]]:
    """Sentence ids, passage ids and per-sentence candidate ids found in a rendered user prompt."""
    text = str(body["messages"][-1]["content"])
    sents: list[int] = []
    cands: dict[int, list[int]] = {}
    for m in _SENTENCE.finditer(text):
        sid = int(m.group(1))
        sents.append(sid)
        cands[sid] = [int(x) for x in (m.group(2) or "").split(",") if x]
    return sents, [int(m.group(1)) for m in _PASSAGE.finditer(text)], cands


def passage_texts(body: dict[str, Any]) -> dict[int, str]:
    text = str(body["messages"][-1]["content"])
    return {int(m.group(1)): m.group(2) for m in
            re.finditer(r'<passage id="(\d+)">\n(.*?)\n</passage>', text, re.DOTALL)}


def sentence_texts(body: dict[str, Any]) -> dict[int, str]:
    text = str(body["messages"][-1]["content"])
    return {int(m.group(1)): m.group(2) for m in
            re.finditer(r'<sentence id="(\d+)"[^>]*>(.*?)</sentence>', text, re.DOTALL)}


def match_json(results: dict[int, list[Any]] | list[Any]) -> str:
    items = results if isinstance(results, list) else [
        {"sentence": s, "matched_source_indices": p} for s, p in results.items()
    ]
    return json.dumps({"source_traced_results": items})


def hallucinate(body: dict[str, Any], n: int) -> Reply:
    """A model claiming every sentence matches every passage (and every sentence needs a citation)."""
    sents, passages, _ = prompt_ids(body)
    if "sentences_needing_citation" in str(body["messages"][0]["content"]):
        return Reply(json.dumps({"sentences_needing_citation": sents}))
    return Reply(match_json({s: passages for s in sents}))


def candidates_first(body: dict[str, Any], n: int) -> Reply:
    """A plausible model: each sentence's first candidate (recognition: every sentence)."""
    sents, _, cands = prompt_ids(body)
    if "sentences_needing_citation" in str(body["messages"][0]["content"]):
        return Reply(json.dumps({"sentences_needing_citation": sents}))
    return Reply(match_json({s: cands[s][:1] for s in sents if cands.get(s)}))


def silent(body: dict[str, Any], n: int) -> Reply:
    """A model that flags every sentence as needing a citation and then matches none of them."""
    sents, _, _ = prompt_ids(body)
    if "sentences_needing_citation" in str(body["messages"][0]["content"]):
        return Reply(json.dumps({"sentences_needing_citation": sents}))
    return Reply(match_json({}))


Script = list[Reply] | Callable[[dict[str, Any], int], Reply]


class FakeOpenAI:
    """`with FakeOpenAI(script) as srv:` … `srv.base_url`, `srv.log`."""

    def __init__(self, script: Script | None = None) -> None:
        self.script: Script = script if script is not None else [Reply('{"source_traced_results": []}')]
        self.log: list[Logged] = []
        self._lock = threading.Lock()
        self._calls = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                outer._handle(self)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        # Requests still being answered finish first (a client that timed out and hung up is
        # noticed within 20 ms), so the log is complete when the block ends, however loaded the
        # machine; a reply scripted to outlast its client is not waited for past 5 s.
        deadline = time.perf_counter() + 5.0
        while time.perf_counter() < deadline:
            with self._lock:
                if all(entry.end for entry in self.log):
                    break
            time.sleep(0.01)
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            n = self._calls
            self._calls += 1
        if callable(self.script):
            return self.script(body, n)
        return self.script[min(n, len(self.script) - 1)]

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        start = time.perf_counter()
        length = int(h.headers.get("content-length") or 0)
        raw = h.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        entry = Logged(body=body, start=start, headers={k.lower(): v for k, v in h.headers.items()})
        with self._lock:
            self.log.append(entry)
        reply = self._next(body)
        if reply.delay and _client_hung_up(h.connection, reply.delay):
            entry.aborted = True
            entry.end = time.perf_counter()
            h.close_connection = True
            return
        if reply.endless:
            entry.replying = time.perf_counter()
            entry.sent, entry.aborted = _send_endless(h)
            entry.status, entry.end = 200, time.perf_counter()
            h.close_connection = True
            return
        if reply.raw_body is not None:
            payload = reply.raw_body
        elif reply.status == 200:
            payload = json.dumps(self._completion(body, reply)).encode()
        else:
            payload = json.dumps({"error": {"message": f"scripted {reply.status}", "type": "fake"}}).encode()
        entry.replying = time.perf_counter()
        try:
            h.send_response(reply.status)
            h.send_header("content-type", "application/json")
            h.send_header("content-length", str(len(payload)))
            for k, v in reply.headers.items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(payload)
        except OSError:
            entry.aborted = True
        entry.status = reply.status
        entry.end = time.perf_counter()

    @staticmethod
    def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        prompt = sum(count_tokens(str(m.get("content", ""))) for m in body.get("messages", []))
        content = reply.content or ""
        choices = [] if reply.content is None else [{
            "index": 0, "finish_reason": reply.finish_reason,
            "message": {"role": "assistant", "content": content},
        }]
        completion = reply.completion_tokens if reply.completion_tokens is not None else count_tokens(content)
        return {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "fake"), "choices": choices,
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        }


def _client_hung_up(conn: socket.socket, delay: float) -> bool:
    """Wait `delay` seconds; True as soon as the client closes the connection."""
    deadline = time.perf_counter() + delay
    while True:
        left = deadline - time.perf_counter()
        if left <= 0:
            return False
        readable, _, _ = select.select([conn], [], [], min(left, 0.02))
        if readable:
            try:
                if conn.recv(1, socket.MSG_PEEK) == b"":
                    return True
            except OSError:
                return True
            time.sleep(min(left, 0.02))  # pipelined bytes: not a hang-up


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_ENDLESS_CAP = 256 << 20


def _send_endless(h: BaseHTTPRequestHandler) -> tuple[int, bool]:
    """A chat completion whose content never ends, chunk by chunk, until the client hangs up (or
    256 MiB, so a client that never does cannot keep the test running): (bytes sent, hung up)."""
    chunk = b"x" * (64 << 10)
    sent = 0
    try:
        h.send_response(200)
        h.send_header("content-type", "application/json")
        h.send_header("transfer-encoding", "chunked")
        h.end_headers()
        head = b'{"id":"x","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,' \
               b'"message":{"role":"assistant","content":"'
        for part in (head, *(chunk for _ in range(_ENDLESS_CAP // len(chunk)))):
            h.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            sent += len(part)
    except OSError:
        return sent, True
    return sent, False
