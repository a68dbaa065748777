"""The OpenAI adapter + ChatBackend through the real `openai` client against a scripted local
OpenAI-compatible HTTP server (tests/fake_openai.py): replies, faults, concurrency, cancellation."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import pytest

from server.llm_client import FORM_LADDER as FORMS
from server.llm_client import LLMConfig, backend_from_config
from tests.fake_openai import FakeOpenAI, Reply, candidates_first, free_port, match_json
from tracer.errors import CancelledError
from tracer.llm import ChatBackend, LLMSettings
from tracer.llm.parsing import MATCH_SCHEMA
from tracer.models import Passage, Sentence, Stats
from tracer.options import TraceOptions

SENTS = [Sentence(i, i * 20, i * 20 + 19, f"Sentence number {i}.") for i in range(4)]
PASSAGES = [Passage(p, p, 0, 15, f"Passage text {p}.") for p in range(8)]
CANDS = {0: [0, 1], 1: [2, 3], 2: [4, 5], 3: [6, 7]}


def make(url: str, config: dict[str, object] | None = None, **settings: object) -> ChatBackend:
    """A backend over the real openai client; `config`: LLMConfig fields, `settings`: LLMSettings."""
    base: dict[str, object] = {"backoff": 0.01, "retries": 1, "timeout": 5.0}
    base.update(settings)
    return backend_from_config(LLMConfig(base_url=url, model="fake-model", api_key="sk-test",
                                         settings=LLMSettings(**base), **(config or {})))  # type: ignore[arg-type]


def run_match(b: ChatBackend, cancel: threading.Event | None = None) -> tuple[
        dict[int, list[int]], set[int], list[str], Stats]:
    stats = Stats()
    proposals, failed, warnings = b.match(SENTS, CANDS, PASSAGES, TraceOptions(), stats, cancel)
    return proposals, failed, warnings, stats


def test_good_reply_through_the_real_client_sends_model_key_and_counts_usage() -> None:
    with FakeOpenAI(candidates_first) as srv:
        proposals, failed, warnings, stats = run_match(make(srv.base_url))
    assert proposals == {0: [0], 1: [2], 2: [4], 3: [6]}
    assert failed == set() and warnings == []
    body = srv.log[0].body
    assert body["model"] == "fake-model" and body["temperature"] == 0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert stats.llm_calls == 1 and stats.llm_prompt_tokens > 50 and stats.llm_completion_tokens > 5


@pytest.mark.parametrize("wrap", [
    "```json\n{}\n```", "Here are the results:\n\n{}\n\nLet me know if you need more.", "```\n{}\n```"])
def test_fenced_and_prose_wrapped_replies(wrap: str) -> None:
    content = wrap.replace("{}", match_json({1: [1], 3: [3, 4]}))
    with FakeOpenAI([Reply(content)]) as srv:
        proposals, failed, _, _ = run_match(make(srv.base_url))
    assert proposals == {0: [0], 2: [2, 3]} and failed == set()


def test_invented_sentences_out_of_range_and_bool_indices_are_dropped() -> None:
    content = match_json([
        {"sentence": 1, "matched_source_indices": [True, 2, 99, 0, -1]},
        {"sentence": 77, "matched_source_indices": [1]},
        {"sentence": False, "matched_source_indices": [1]},
        {"sentence": 4, "matched_source_indices": [8]},
    ])
    with FakeOpenAI([Reply(content)]) as srv:
        proposals, failed, warnings, _ = run_match(make(srv.base_url))
    assert proposals == {0: [1], 3: [7]}
    # which sentences the two dropped items meant is unknown: those with no valid item get no verdict
    assert failed == {1, 2}
    assert "dropped 2 invalid items and 4 invalid passage ids" in warnings[0]
    assert "2 sentences had no valid item; they used the deterministic matcher" in warnings[1]


def test_a_sentence_whose_passage_ids_are_all_invalid_falls_back_and_says_so() -> None:
    """Naming only passages that do not exist is no verdict ("no source"): the sentence takes the
    deterministic matcher, as for a failed call, and the trace is degraded."""
    content = match_json([
        {"sentence": 1, "matched_source_indices": [99, -5]},
        {"sentence": 2, "matched_source_indices": []},          # a real verdict: unsupported
        {"sentence": 3, "matched_source_indices": [99]},
        {"sentence": 3, "matched_source_indices": [3]},          # ...but 3 named a real one too
    ])
    with FakeOpenAI([Reply(content)]) as srv:
        proposals, failed, warnings, _ = run_match(make(srv.base_url))
    assert failed == {0} and proposals == {2: [2]}
    assert any("1 sentences named only passage ids that do not exist" in w for w in warnings), warnings


def test_429_then_ok_honours_retry_after() -> None:
    with FakeOpenAI([Reply(status=429, headers={"retry-after": "1"}),
                     Reply(match_json({1: [1]}))]) as srv:
        proposals, failed, _, stats = run_match(make(srv.base_url, backoff=0.0))
    assert proposals == {0: [0]} and failed == set()
    assert stats.llm_retries == 1 and stats.llm_calls == 2
    assert srv.log[1].start - srv.log[0].end >= 0.9    # waited as told, not the 0 s backoff


def test_persistent_500s_fail_the_chunk_after_retries() -> None:
    with FakeOpenAI([Reply(status=500)]) as srv:
        proposals, failed, warnings, stats = run_match(make(srv.base_url, retries=2))
    assert proposals == {} and failed == {0, 1, 2, 3}
    assert len(srv.log) == 3 and stats.llm_retries == 2
    assert "server error (HTTP 500), after 3 attempts" in warnings[0]


def test_reply_slower_than_the_timeout() -> None:
    with FakeOpenAI([Reply(match_json({1: [1]}), delay=3.0)]) as srv:
        proposals, failed, warnings, _ = run_match(make(srv.base_url, timeout=0.3, retries=0))
    assert failed == {0, 1, 2, 3} and proposals == {}
    assert "timeout after 0.3s" in warnings[0]
    assert srv.log[0].aborted                             # the client hung up rather than waiting


def test_connection_refused() -> None:
    proposals, failed, warnings, stats = run_match(make(f"http://127.0.0.1:{free_port()}/v1"))
    assert failed == {0, 1, 2, 3} and proposals == {}
    assert "connection failed" in warnings[0] and stats.llm_retries == 1


@pytest.mark.parametrize("reply,cause", [
    (Reply(raw_body=b"<html>Bad gateway</html>"), "bad reply"),
    # an HTML page sent as such (a proxy's or a web UI's, base_url missing its /v1)
    (Reply(raw_body=b"<html><body>Open WebUI</body></html>", headers={"content-type": "text/html"}),
     "not a chat completion: the endpoint answered with text, not JSON ('<html><body>Open WebUI"),
    (Reply(""), "empty reply"),
    (Reply(None), "empty reply (no choices)"),
    (Reply("I am sorry, I cannot do that."), "no valid JSON"),
])
def test_garbage_and_empty_replies_fail_the_chunk(reply: Reply, cause: str) -> None:
    with FakeOpenAI([reply]) as srv:
        proposals, failed, warnings, _ = run_match(make(srv.base_url))
    assert failed == {0, 1, 2, 3} and proposals == {}
    assert cause in warnings[0]
    assert len(srv.log) == 1


@pytest.mark.parametrize(("config", "sent"), [
    ({}, {"max_tokens": 4096}),
    ({"max_output_tokens": 700, "output_tokens_field": "max_completion_tokens"},
     {"max_completion_tokens": 700}),
    ({"max_output_tokens": 0}, {}),
])
def test_each_call_carries_the_output_token_cap(config: dict[str, object], sent: dict[str, int]) -> None:
    with FakeOpenAI(candidates_first) as srv:
        proposals, failed, _, _ = run_match(make(srv.base_url, config))
    assert proposals and failed == set()
    body = srv.log[0].body
    assert {k: body[k] for k in ("max_tokens", "max_completion_tokens") if k in body} == sent


@pytest.mark.parametrize(("config", "kind"), [
    ({}, "json_schema"),
    ({"structured_output": "none"}, None),
    ({"json_mode": True}, "json_object"),
    ({"json_mode": True, "structured_output": "none"}, "json_object"),
    ({"structured_output": "json_object"}, "json_object"),
    ({"structured_output": "json_schema"}, "json_schema"),
    ({"json_mode": True, "structured_output": "json_schema"}, "json_schema"),
    ({"structured_output": "json_object_schema"}, "json_object_schema"),
])
def test_response_format(config: dict[str, object], kind: str | None) -> None:
    with FakeOpenAI(candidates_first) as srv:
        proposals, failed, _, _ = run_match(make(srv.base_url, config))
    assert proposals and failed == set()
    sent = srv.log[0].body.get("response_format")
    if kind is None:
        assert sent is None
    elif kind == "json_object":
        assert sent == {"type": "json_object"}
    elif kind == "json_object_schema":
        assert sent == {"type": "json_object", "schema": MATCH_SCHEMA}
    else:
        assert sent == {"type": "json_schema", "json_schema": {
            "name": "match", "schema": MATCH_SCHEMA, "strict": True}}


def refusing(*kinds: str, status: int = 500) -> Callable[[dict[str, Any], int], Reply]:
    """A server that refuses these response_format forms, naming the field as real servers do
    (llama-cpp-python: HTTP 500 with a validation error; OpenAI, vLLM: 400); else a good reply."""
    def script(body: dict[str, Any], n: int) -> Reply:
        fmt = body.get("response_format")
        kind = "none" if fmt is None else "json_object_schema" if "schema" in fmt else fmt["type"]
        if kind in kinds:
            error = {"error": {"message": "1 validation error: ('body', 'response_format', 'type') "
                               f"Input should be 'text' or 'json_object', got {kind!r}"}}
            return Reply(status=status, raw_body=json.dumps(error).encode())
        return candidates_first(body, n)
    return script


def form_of(body: dict[str, Any]) -> str:
    fmt = body.get("response_format")
    return "none" if fmt is None else "json_object_schema" if "schema" in fmt else str(fmt["type"])


def test_auto_steps_down_to_the_form_the_server_accepts_and_stays_there() -> None:
    with FakeOpenAI(refusing("json_schema")) as srv:
        backend = make(srv.base_url, retries=0)
        first = run_match(backend)
        second = run_match(backend)
    assert first[0] == second[0] == {0: [0], 1: [2], 2: [4], 3: [6]}
    assert first[1] == second[1] == set() and first[2] == second[2] == []
    # the refused call is sent again at once in the next form; later calls start there
    assert [form_of(e.body) for e in srv.log] == ["json_schema", "json_object_schema", "json_object_schema"]
    # llm_calls counts HTTP requests: the one sent again in the next form too (not a retry)
    assert first[3].llm_calls == 2 and first[3].llm_retries == 0 and second[3].llm_calls == 1


def test_auto_ends_at_no_response_format_on_a_server_that_refuses_every_form() -> None:
    with FakeOpenAI(refusing("json_schema", "json_object_schema", "json_object", status=400)) as srv:
        backend = make(srv.base_url, retries=0)
        proposals, failed, warnings, _ = run_match(backend)
        again = run_match(backend)
    assert proposals == again[0] == {0: [0], 1: [2], 2: [4], 3: [6]}
    assert failed == set() and warnings == []
    assert [form_of(e.body) for e in srv.log] == [
        "json_schema", "json_object_schema", "json_object", "none", "none"]


def test_a_call_every_form_of_which_is_refused_counts_every_request() -> None:
    with FakeOpenAI(refusing(*FORMS, status=400)) as srv:
        backend = make(srv.base_url, retries=0)
        _, failed, warnings, stats = run_match(backend)
    assert failed == {0, 1, 2, 3} and "HTTP 400" in warnings[0]
    assert [form_of(e.body) for e in srv.log] == list(FORMS)
    assert stats.llm_calls == len(srv.log) == 4 and stats.llm_retries == 0


def test_a_call_that_times_out_in_the_next_form_counts_both_requests() -> None:
    refused = refusing("json_schema", status=400)

    def script(body: dict[str, Any], n: int) -> Reply:
        if form_of(body) == "json_schema":
            return refused(body, n)
        return Reply('{"source_traced_results": []}', delay=3.0)   # past the call's 1 s

    with FakeOpenAI(script) as srv:
        backend = make(srv.base_url, retries=0, timeout=1.0)
        _, failed, warnings, stats = run_match(backend)
    assert failed == {0, 1, 2, 3} and "timeout" in warnings[0]
    assert stats.llm_calls == len(srv.log) == 2


def bare_refusing(*kinds: str, status: int = 400) -> Callable[[dict[str, Any], int], Reply]:
    """A gateway that refuses these forms with an error naming nothing; else a good reply."""
    def script(body: dict[str, Any], n: int) -> Reply:
        if form_of(body) in kinds:
            return Reply(status=status, raw_body=b'{"error": {"message": "Bad Request"}}')
        return candidates_first(body, n)
    return script


@pytest.mark.parametrize("status", [400, 422])
def test_auto_probes_a_bare_400_once_and_keeps_the_form_answered(status: int) -> None:
    with FakeOpenAI(bare_refusing("json_schema", "json_object_schema", status=status)) as srv:
        backend = make(srv.base_url, retries=0)
        first = run_match(backend)
        second = run_match(backend)
    assert first[0] == second[0] == {0: [0], 1: [2], 2: [4], 3: [6]}
    assert first[1] == second[1] == set() and first[2] == []
    assert [form_of(e.body) for e in srv.log] == [
        "json_schema", "json_object_schema", "json_object", "json_object"]
    assert first[3].llm_calls + second[3].llm_calls == len(srv.log) == 4


def test_a_bare_400_that_every_form_gets_is_not_about_the_form() -> None:
    # e.g. a prompt over the model's context: probed once, the form is kept, the chunk fails
    with FakeOpenAI(bare_refusing(*FORMS)) as srv:
        backend = make(srv.base_url, retries=0)
        _, failed, warnings, stats = run_match(backend)
        again = run_match(backend)
    assert failed == again[1] == {0, 1, 2, 3}
    assert "HTTP 400" in warnings[0]
    # llm_calls counts the failed call's requests in every form it was sent in
    assert stats.llm_calls + again[3].llm_calls == len(srv.log) == 5
    # the probe tried each lower form once; the next call starts at the first form again and
    # is not probed a second time
    assert [form_of(e.body) for e in srv.log] == [
        "json_schema", "json_object_schema", "json_object", "none", "json_schema"]


def test_a_chosen_form_is_not_negotiated_and_other_errors_do_not_step_down() -> None:
    # a form set by name is kept even when refused: the chunk fails, as configured
    with FakeOpenAI(refusing("json_schema")) as srv:
        chosen = make(srv.base_url, {"structured_output": "json_schema"}, retries=1)
        _, failed, warnings, _ = run_match(chosen)
    assert failed == {0, 1, 2, 3} and "HTTP 500" in warnings[0]
    assert [form_of(e.body) for e in srv.log] == ["json_schema", "json_schema"]
    # under auto, an error that does not name response_format is retried in the same form
    with FakeOpenAI([Reply(status=500), Reply(status=500), Reply(status=500)]) as srv:
        _, failed, _, _ = run_match(make(srv.base_url, retries=2))
    assert failed == {0, 1, 2, 3}
    assert [form_of(e.body) for e in srv.log] == ["json_schema"] * 3


def test_a_reply_cut_off_at_the_cap_says_so() -> None:
    cut = match_json({1: [1], 2: [3]})[:25]
    with FakeOpenAI([Reply(cut, finish_reason="length")]) as srv:
        proposals, failed, warnings, _ = run_match(make(srv.base_url))
    assert proposals == {} and failed == {0, 1, 2, 3}
    assert "cut off at the output-token cap (llm.max_output_tokens)" in warnings[0]


def test_a_reply_cut_off_inside_its_list_keeps_the_items_before_the_cut() -> None:
    full = match_json({1: [1], 2: [3], 3: [5], 4: [7]})
    cut = full[: full.index('"sentence": 3')]
    with FakeOpenAI([Reply(cut, finish_reason="length")]) as srv:
        proposals, failed, warnings, _ = run_match(make(srv.base_url))
    assert proposals == {0: [0], 1: [2]} and failed == {2, 3}
    assert "cut off at the output-token cap (llm.max_output_tokens) after 2 sentences" in warnings[0]
    assert "its other 2 sentences used the deterministic matcher" in warnings[0]


def test_chunk_calls_overlap_in_time() -> None:
    with FakeOpenAI(lambda body, n: Reply(candidates_first(body, n).content, delay=0.3)) as srv:
        proposals, failed, _, stats = run_match(make(srv.base_url, top_k=2, chunk_passages=2))
    assert len(proposals) == 4 and failed == set() and stats.llm_calls == 4
    spans = sorted((e.start, e.replying) for e in srv.log)  # arrival .. reply started
    assert all(later[0] < earlier[1] for earlier, later in zip(spans, spans[1:], strict=False))


def test_concurrency_limit_is_respected() -> None:
    with FakeOpenAI(lambda body, n: Reply(candidates_first(body, n).content, delay=0.2)) as srv:
        run_match(make(srv.base_url, top_k=2, chunk_passages=2, max_concurrency=2))
    # A request is in flight from its arrival until its reply starts: once the reply is on its
    # way, the client may free the slot and send the next one before this thread logs `end`.
    events = sorted([(e.start, 1) for e in srv.log] + [(e.replying, -1) for e in srv.log])
    level = peak = 0
    for _, d in events:
        level += d
        peak = max(peak, level)
    assert peak == 2


def test_cancel_stops_in_flight_calls() -> None:
    cancel = threading.Event()
    with FakeOpenAI([Reply(match_json({}), delay=5.0)]) as srv:
        threading.Timer(0.3, cancel.set).start()
        with pytest.raises(CancelledError):
            run_match(make(srv.base_url, top_k=2, chunk_passages=2), cancel)
        for _ in range(100):  # the server notices hang-ups within its 20 ms poll
            if all(e.end for e in srv.log):
                break
            threading.Event().wait(0.02)
    assert len(srv.log) == 4 and all(e.aborted for e in srv.log)


def test_recognition_through_the_real_client() -> None:
    with FakeOpenAI([Reply(json.dumps({"sentences_needing_citation": [1, 3, 9]}))]) as srv:
        b = make(srv.base_url)
        needs, warnings = b.recognize(SENTS, "en", Stats(), None)
    assert needs == {0, 2}
    assert "dropped 1 unknown sentence ids" in warnings[0]
    assert "sentences_needing_citation" in srv.log[0].body["messages"][0]["content"]


def test_concurrency_limit_is_shared_by_concurrent_requests() -> None:
    with FakeOpenAI(lambda body, n: Reply(candidates_first(body, n).content, delay=0.15)) as srv:
        b = make(srv.base_url, top_k=2, chunk_passages=2, max_concurrency=3)
        results: list[set[int]] = []
        threads = [threading.Thread(target=lambda: results.append(run_match(b)[1])) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert results == [set(), set(), set()] and len(srv.log) == 12
    # A request is in flight from its arrival until its reply starts: once the reply is on its
    # way, the client may free the slot and send the next one before this thread logs `end`.
    events = sorted([(e.start, 1) for e in srv.log] + [(e.replying, -1) for e in srv.log])
    level = peak = 0
    for _, d in events:
        level += d
        peak = max(peak, level)
    assert peak == 3


def test_the_endpoint_check_tells_a_down_or_refusing_model_from_one_that_answers() -> None:
    """`serve` asks the model's endpoint once at start-up (server/app.py logs a warning when it
    fails): a closed port cannot connect, a 401 refuses the key, and a server that answers
    anything else (the fake has no GET /models) counts as up."""
    import asyncio
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from server.llm_client import check_endpoint

    def check(url: str) -> str | None:
        return asyncio.run(check_endpoint(LLMConfig(base_url=url, model="m", api_key="sk-x"), timeout=5.0))

    with FakeOpenAI(candidates_first) as model:
        assert check(model.base_url) is None
    problem = check(f"http://127.0.0.1:{free_port()}/v1")
    assert problem is not None and problem.startswith("cannot connect")

    class Refuses(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            body = b'{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}'
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Refuses)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        problem = check(f"http://127.0.0.1:{httpd.server_address[1]}/v1")
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert problem is not None and "refused the API key" in problem and "401" in problem


def test_a_reply_trickled_a_byte_at_a_time_is_bounded_by_the_call_timeout() -> None:
    """httpx's timeout bounds each read, and a server sending its reply a byte every 50 ms never
    trips it: the call's own clock must. (The reply takes 2 s; the timeout is 1 s, and the
    backend's backstop for a hung client, 1.5 x 1 + 1 s, would let it through.)"""
    import socket
    import time

    message = {"role": "assistant", "content": match_json({1: [1]})}
    body = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                       "choices": [{"index": 0, "finish_reason": "stop", "message": message}]}).encode()
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                conn.recv(65536)
                head = ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
                try:
                    conn.sendall(head)
                    pause = 2.0 / len(body)
                    for i in range(len(body)):
                        if stop.is_set():
                            return
                        conn.sendall(body[i:i + 1])
                        time.sleep(pause)
                except OSError:
                    pass  # the client hung up: what the test wants

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        port = listener.getsockname()[1]
        backend = make(f"http://127.0.0.1:{port}/v1", timeout=1.0, retries=0)
        proposals, failed, warnings, _ = run_match(backend)
    finally:
        stop.set()
        thread.join(5)
        listener.close()
    assert failed == {0, 1, 2, 3} and proposals == {}
    assert "timeout after 1s" in warnings[0]


def test_calls_that_meet_a_bare_400_while_another_probes_wait_for_what_it_finds() -> None:
    """A fresh process sends its first calls at once; one probes the bare 400, the others are
    sent again in the form it finds instead of failing (all four chunks answered)."""
    refuse = bare_refusing("json_schema", "json_object_schema")

    def slow(body: dict[str, Any], n: int) -> Reply:
        reply = refuse(body, n)
        reply.delay = 0.1
        return reply

    with FakeOpenAI(slow) as srv:
        proposals, failed, warnings, stats = run_match(make(srv.base_url, retries=0, chunk_sentences=1,
                                                            max_concurrency=4))
    assert failed == set() and warnings == []
    assert proposals == {0: [0], 1: [2], 2: [4], 3: [6]}
    assert [form_of(e.body) for e in srv.log].count("json_schema") == 4  # all four went out at once
    assert stats.llm_calls == len(srv.log)
