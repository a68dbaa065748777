"""ChatBackend orchestration over an in-memory chat client (no network): merging, failures,
retries, budgets, strategies, batching and cancellation. The same paths run through the real
openai client against a local HTTP server in tests/server/test_llm_client.py."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracer.errors import CancelledError, InvalidInputError
from tracer.llm import ChatBackend, ChatError, ChatMessage, ChatReply, LLMSettings, ReplySchema, Strategy
from tracer.llm.chunking import plan_match_chunks
from tracer.llm.parsing import MATCH_SCHEMA, RECOGNIZE_SCHEMA, parse_match_reply, parse_recognize_reply
from tracer.models import Passage, Sentence, Stats
from tracer.options import TraceOptions

Answer = Callable[[str, int], "ChatReply | ChatError"]


class MemoryClient:
    """Answers from a function of (user prompt, call number); records concurrency."""

    def __init__(self, answer: Answer, delay: float = 0.0) -> None:
        self.answer = answer
        self.delay = delay
        self.calls: list[str] = []
        self.schemas: list[ReplySchema | None] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.cancelled = 0
        self.closed = 0

    async def complete(
        self, messages: list[ChatMessage], *, timeout: float, schema: ReplySchema | None = None
    ) -> ChatReply:
        self.schemas.append(schema)
        n = len(self.calls)
        self.calls.append(messages[-1]["content"])
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.in_flight -= 1
        out = self.answer(messages[-1]["content"], n)
        if isinstance(out, ChatError):
            raise out
        return out

    async def aclose(self) -> None:
        self.closed += 1


def ids(prompt: str, tag: str) -> list[int]:
    return [int(x) for x in re.findall(rf'<{tag} id="(\d+)"', prompt)]


def first_candidate(prompt: str, n: int) -> ChatReply:
    items = [{"sentence": int(s), "matched_source_indices": [int(c.split(",")[0])]}
             for s, c in re.findall(r'<sentence id="(\d+)" candidates="([\d,]+)"', prompt)]
    return ChatReply(json.dumps({"source_traced_results": items}), prompt_tokens=100, completion_tokens=10)


def fixture(n_sent: int = 6, n_pass: int = 12) -> tuple[list[Sentence], list[Passage], dict[int, list[int]]]:
    sents = [Sentence(i, i * 10, i * 10 + 9, f"sentence {i}") for i in range(n_sent)]
    passages = [Passage(p, p // 2, 0, 9, f"passage {p}") for p in range(n_pass)]
    cands = {i: [(2 * i) % n_pass, (2 * i + 1) % n_pass, (2 * i + 5) % n_pass] for i in range(n_sent)}
    return sents, passages, cands


def backend(client: MemoryClient, **settings: object) -> ChatBackend:
    base = {"backoff": 0.0, "retries": 1}
    base.update(settings)
    return ChatBackend(lambda: client, LLMSettings(**base))  # type: ignore[arg-type]


def test_match_maps_local_ids_back_and_sends_only_top_k_candidates() -> None:
    sents, passages, cands = fixture()
    client = MemoryClient(first_candidate)
    stats = Stats()
    proposals, failed, warnings = backend(client, top_k=2, chunk_passages=4).match(
        sents, cands, passages, TraceOptions(), stats, None)
    assert failed == set() and warnings == []
    assert proposals == {i: [cands[i][0]] for i in range(6)}
    assert all(len(ids(p, "passage")) <= 4 for p in client.calls)
    assert len(client.calls) == 3 and stats.llm_calls == 3
    assert stats.llm_prompt_tokens == 300 and stats.llm_completion_tokens == 30
    assert client.closed == 1


def test_a_client_without_the_schema_keyword_is_called_without_it() -> None:
    """A ChatClient written to the older protocol (`complete(messages, *, timeout)`) keeps
    working: the backend reads its signature and sends no schema, instead of failing every call
    with a TypeError and degrading every trace."""

    class OldClient:
        def __init__(self) -> None:
            self.calls = 0

        async def complete(self, messages: list[ChatMessage], *, timeout: float) -> ChatReply:
            self.calls += 1
            return first_candidate(messages[-1]["content"], self.calls)

        async def aclose(self) -> None:
            pass

    sents, passages, cands = fixture()
    client = OldClient()
    b = ChatBackend(lambda: client, LLMSettings(backoff=0.0, retries=0, top_k=2, chunk_passages=4))
    proposals, failed, warnings = b.match(sents, cands, passages, TraceOptions(), Stats(), None)
    assert failed == set() and warnings == [] and client.calls == 3
    assert proposals == {i: [cands[i][0]] for i in range(6)}


def test_each_call_names_its_reply_schema() -> None:
    sents, passages, cands = fixture()
    client = MemoryClient(lambda p, n: ChatReply(json.dumps({"sentences_needing_citation": [1]}))
                          if n == 0 else first_candidate(p, n))  # call 0 is recognition
    b = backend(client, top_k=2, chunk_passages=4)
    b.recognize(sents, "en", Stats(), None)
    b.match(sents, cands, passages, TraceOptions(), Stats(), None)
    assert [s.name if s else None for s in client.schemas] == ["recognize", "match", "match", "match"]
    assert client.schemas[0] == ReplySchema("recognize", RECOGNIZE_SCHEMA)
    assert client.schemas[1] == ReplySchema("match", MATCH_SCHEMA)


def _strict(schema: object) -> bool:
    """OpenAI's strict structured-output rules: every object lists all its properties as
    required and allows no others."""
    if not isinstance(schema, dict):
        return True
    if schema.get("type") == "object":
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is not False or set(schema.get("required", [])) != set(props):
            return False
    return all(_strict(v) for v in schema.values() if isinstance(v, dict)) and all(
        _strict(v) for v in schema.get("properties", {}).values())


def test_reply_schemas_are_strict_and_describe_what_the_parsers_accept() -> None:
    assert _strict(MATCH_SCHEMA) and _strict(RECOGNIZE_SCHEMA)
    reply = {"source_traced_results": [{"sentence": 1, "matched_source_indices": [2, 1]}]}
    parsed = parse_match_reply(json.dumps(reply), [1], [1, 2])
    assert parsed is not None and parsed.matches == {1: [2, 1]}
    parsed_r = parse_recognize_reply(json.dumps({"sentences_needing_citation": [1, 2]}), [1, 2])
    assert parsed_r is not None and parsed_r.ids == {1, 2}
    assert list(MATCH_SCHEMA["required"]) == ["source_traced_results"]  # type: ignore[call-overload]
    assert list(RECOGNIZE_SCHEMA["required"]) == ["sentences_needing_citation"]  # type: ignore[call-overload]


def test_chunks_run_concurrently_up_to_the_limit() -> None:
    sents, passages, cands = fixture(12, 24)
    client = MemoryClient(first_candidate, delay=0.05)
    backend(client, top_k=2, chunk_passages=2, max_concurrency=3).match(
        sents, cands, passages, TraceOptions(), Stats(), None)
    assert len(client.calls) == 12
    assert client.max_in_flight == 3


def test_full_strategy_sends_every_record_one_call_at_a_time() -> None:
    sents, passages, cands = fixture(4, 8)
    client = MemoryClient(lambda p, n: ChatReply(json.dumps({"source_traced_results": [
        {"sentence": 1, "matched_source_indices": [1]}]})), delay=0.01)
    proposals, failed, _ = backend(client, strategy=Strategy.FULL).match(
        sents, cands, passages, TraceOptions(), Stats(), None)
    assert len(client.calls) == 4                      # records 0..3, two passages each
    assert client.max_in_flight == 1
    assert all(ids(p, "sentence") == [1, 2, 3, 4] for p in client.calls)
    assert proposals == {0: [0, 2, 4, 6]}              # union over records, global ids
    assert failed == set()


def test_full_strategy_keeps_asking_when_only_some_sentences_of_a_call_got_no_verdict() -> None:
    """A sentence that named only passage ids that do not exist falls back; the other sentences
    are still asked about every other record (the loop stopped after the first record)."""
    sents, passages, cands = fixture(4, 8)

    def answer(prompt: str, n: int) -> ChatReply:
        items = [{"sentence": k, "matched_source_indices": [1]} for k in (1, 2)]
        if n == 0:
            items.append({"sentence": 3, "matched_source_indices": [7]})
        return ChatReply(json.dumps({"source_traced_results": items}))

    client = MemoryClient(answer)
    proposals, failed, _ = backend(client, strategy=Strategy.FULL).match(
        sents, cands, passages, TraceOptions(), Stats(), None)
    assert len(client.calls) == 4 and failed == {2}
    assert proposals == {0: [0, 2, 4, 6], 1: [0, 2, 4, 6]}


def test_a_failed_chunk_fails_only_its_sentences_and_names_the_cause() -> None:
    sents, passages, cands = fixture()

    def answer(prompt: str, n: int) -> ChatReply | ChatError:
        if 'id="1" candidates' in prompt and "sentence 0" in prompt:
            return ChatError("server error (HTTP 500)", retryable=True)
        return first_candidate(prompt, n)

    stats = Stats()
    proposals, failed, warnings = backend(client := MemoryClient(answer), top_k=2, chunk_passages=4).match(
        sents, cands, passages, TraceOptions(), stats, None)
    assert failed == {0, 1}
    assert set(proposals) == {2, 3, 4, 5}
    assert any("server error (HTTP 500), after 2 attempts" in w and "2 sentences" in w for w in warnings)
    assert stats.llm_retries == 1 and stats.llm_calls == len(client.calls) == 4


def test_non_retryable_errors_and_garbage_are_not_retried() -> None:
    sents, passages, cands = fixture(2, 4)
    rejected = ChatError("request rejected (HTTP 400)", retryable=False)
    for answer, cause in ((lambda p, n: rejected, "HTTP 400"),
                          (lambda p, n: ChatReply("I cannot help with that."), "no valid JSON"),
                          (lambda p, n: ChatReply(""), "empty reply")):
        client = MemoryClient(answer)
        stats = Stats()
        b = backend(client, retries=3)
        _, failed, warnings = b.match(sents, cands, passages, TraceOptions(), stats, None)
        assert failed == {0, 1} and len(client.calls) == 1 and stats.llm_retries == 0
        assert cause in warnings[0]


def test_call_budget_fails_the_chunks_beyond_it() -> None:
    sents, passages, cands = fixture()
    client = MemoryClient(first_candidate)
    stats = Stats()
    _, failed, warnings = backend(client, top_k=2, chunk_passages=4, max_calls=2, max_concurrency=1).match(
        sents, cands, passages, TraceOptions(), stats, None)
    assert stats.llm_calls == 2 and len(failed) == 2
    assert any("call budget of 2" in w for w in warnings)


def test_token_budget_is_checked_before_sending() -> None:
    sents, passages, cands = fixture()
    client = MemoryClient(first_candidate)
    b = backend(client, max_tokens=10)
    _, failed, warnings = b.match(sents, cands, passages, TraceOptions(), Stats(), None)
    assert client.calls == [] and failed == set(range(6))
    assert "token budget of 10" in warnings[0]


def test_recognition_batches_long_reports_without_a_cap() -> None:
    sents = [Sentence(i, i, i + 1, f"fact number {i}.") for i in range(130)]
    client = MemoryClient(lambda p, n: ChatReply(json.dumps(
        {"sentences_needing_citation": ids(p, "sentence") + [999]})))
    needs, warnings = backend(client, recognize_batch=50).recognize(sents, "en", Stats(), None)
    assert needs == set(range(130))
    assert len(client.calls) == 3
    assert all(ids(p, "sentence")[0] == 1 for p in client.calls)     # ids are per batch
    assert any("dropped 1 unknown sentence ids" in w for w in warnings)


def test_recognition_failure_returns_none_with_a_warning() -> None:
    sents = [Sentence(i, i, i + 1, f"s{i}") for i in range(3)]
    client = MemoryClient(lambda p, n: ChatReply("no"))
    needs, warnings = backend(client).recognize(sents, "zh", Stats(), None)
    assert needs is None and any("rule-based" in w for w in warnings)
    assert "Chinese" in client.calls[0]


def test_cancel_cancels_in_flight_calls_and_raises() -> None:
    sents, passages, cands = fixture()
    client = MemoryClient(first_candidate, delay=30)
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    with pytest.raises(CancelledError):
        b = backend(client, top_k=2, chunk_passages=4)
        b.match(sents, cands, passages, TraceOptions(), Stats(), cancel)
    assert client.cancelled == 3 and client.closed == 1


def test_a_deadline_keeps_the_chunks_answered_in_time_and_fails_the_rest() -> None:
    sents, passages, cands = fixture()

    class SlowForSentenceZero(MemoryClient):
        async def complete(
            self, messages: list[ChatMessage], *, timeout: float, schema: ReplySchema | None = None
        ) -> ChatReply:
            self.delay = 30 if "sentence 0" in messages[-1]["content"] else 0.0
            return await super().complete(messages, timeout=timeout, schema=schema)

    client = SlowForSentenceZero(first_candidate)
    t0 = time.monotonic()
    proposals, failed, warnings = backend(client, top_k=2, chunk_passages=4).match(
        sents, cands, passages, TraceOptions(), Stats(), None, deadline=t0 + 0.3)
    assert time.monotonic() - t0 < 1.0
    assert failed == {0, 1} and set(proposals) == {2, 3, 4, 5}
    assert client.cancelled == 1 and client.closed == 1
    assert any("2 sentences used the deterministic matcher" in w for w in warnings)


def test_waiting_for_a_model_slot_ends_at_the_deadline() -> None:
    """Another request holds the backend's only slot; this one gives up at its deadline."""
    sents, passages, cands = fixture(2, 4)
    client = MemoryClient(first_candidate, delay=2.0)
    b = backend(client, max_concurrency=1)
    other = threading.Thread(target=b.match, args=(sents, cands, passages, TraceOptions(), Stats(), None))
    other.start()
    while not client.calls:
        time.sleep(0.01)
    t0 = time.monotonic()
    _, failed, warnings = b.match(sents, cands, passages, TraceOptions(), Stats(), None,
                                  deadline=t0 + 0.3)
    waited = time.monotonic() - t0
    other.join()
    assert failed == {0, 1} and len(client.calls) == 1
    assert "no time left before the call's deadline" in warnings[0]
    assert waited < 1.0


def test_no_retry_when_the_deadline_comes_first() -> None:
    sents, passages, cands = fixture(2, 4)
    client = MemoryClient(lambda p, n: ChatError("server error (HTTP 503)", retryable=True))
    _, failed, warnings = backend(client, retries=3, backoff=1.0).match(
        sents, cands, passages, TraceOptions(), Stats(), None, deadline=time.monotonic() + 0.5)
    assert failed == {0, 1} and len(client.calls) == 1
    assert "(HTTP 503); no time left before the call's deadline to retry" in warnings[0]


def test_a_deadline_already_past_sends_nothing() -> None:
    sents, passages, cands = fixture()
    client = MemoryClient(first_candidate)
    b = backend(client)
    needs, warnings = b.recognize(sents, "en", Stats(), None, deadline=time.monotonic() - 1)
    assert needs is None and "no time left before the call's deadline" in warnings[0]
    _, failed, warnings = b.match(sents, cands, passages, TraceOptions(), Stats(), None,
                                  deadline=time.monotonic() - 1)
    assert failed == set(range(6)) and client.calls == []


def test_already_cancelled_sends_nothing() -> None:
    sents, passages, cands = fixture()
    client = MemoryClient(first_candidate)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(CancelledError):
        backend(client).match(sents, cands, passages, TraceOptions(), Stats(), cancel)
    assert client.calls == []


def test_client_setup_failure_is_a_fallback_not_an_error() -> None:
    def broken() -> MemoryClient:
        raise RuntimeError("no such host")

    sents, passages, cands = fixture(2, 4)
    b = ChatBackend(broken, LLMSettings())  # type: ignore[arg-type,return-value]
    _, failed, warnings = b.match(sents, cands, passages, TraceOptions(), Stats(), None)
    assert failed == {0, 1} and "no such host" in warnings[0]


def test_runs_inside_a_thread_that_already_has_an_event_loop() -> None:
    sents, passages, cands = fixture(2, 4)

    async def inside() -> dict[int, list[int]]:
        return backend(MemoryClient(first_candidate)).match(
            sents, cands, passages, TraceOptions(), Stats(), None)[0]

    assert asyncio.run(inside()) == {0: [0], 1: [2]}


@pytest.mark.parametrize("field,value", [("top_k", 0), ("chunk_passages", 3), ("timeout", 0),
                                         ("strategy", "everything"), ("retries", True)])
def test_settings_errors_name_the_field(field: str, value: object) -> None:
    with pytest.raises(InvalidInputError, match=f"llm.{field}"):
        LLMSettings(**{field: value}).validated()  # type: ignore[arg-type]


def test_an_unexpected_error_in_the_llm_path_degrades_instead_of_failing() -> None:
    sents, passages, cands = fixture(2, 4)
    b = backend(MemoryClient(first_candidate))
    del b.prompts.env.filters["data"]  # break rendering: a bug, not a model fault
    proposals, failed, warnings = b.match(sents, cands, passages, TraceOptions(), Stats(), None)
    assert proposals == {} and failed == {0, 1}
    assert "internal error" in warnings[0]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.fixed_dictionaries({
    "sentence": st.integers(-1, 8) | st.booleans(),
    "matched_source_indices": st.lists(st.integers(-1, 8) | st.booleans() | st.none(), max_size=6),
}), max_size=10))
def test_whatever_the_model_says_proposals_stay_within_each_sentences_chunk(items: list[object]) -> None:
    sents, passages, cands = fixture()
    reply = ChatReply(json.dumps({"source_traced_results": items}))
    client = MemoryClient(lambda p, n: reply)
    b = backend(client, top_k=2, chunk_passages=4)
    proposals, failed, _ = b.match(sents, cands, passages, TraceOptions(), Stats(), None)
    # a sentence that named only passages outside its chunk got no verdict: it falls back
    assert not failed & set(proposals)
    chunks = plan_match_chunks(range(6), cands, 2, 4, 25)
    for chunk in chunks:
        for sid in chunk.sentences:
            assert set(proposals.get(sid, [])) <= set(chunk.passages)


def test_nothing_to_match_makes_no_call() -> None:
    sents, passages, _ = fixture(2, 4)
    client = MemoryClient(first_candidate)
    b = backend(client)
    assert b.match(sents, {0: [], 1: []}, passages, TraceOptions(), Stats(), None) == ({}, set(), [])
    assert b.match([], {}, passages, TraceOptions(), Stats(), None) == ({}, set(), [])
    assert client.calls == [] and client.closed == 0


def test_the_token_estimate_counts_a_chinese_character_as_a_token() -> None:
    from tracer.llm.backend import _estimate_tokens

    zh = _estimate_tokens([{"role": "user", "content": "新能源汽车渗透率已达百分之三十" * 100}])
    en = _estimate_tokens([{"role": "user", "content": "Solar capacity grew fast. " * 100}])
    assert zh >= 1500          # 1,500 characters: at least as many tokens (was 516)
    assert 700 <= en <= 900    # 2,600 characters of English: about a third
