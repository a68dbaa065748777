"""`ChatBackend`: the pipeline's LLMBackend over any ChatClient.

The pipeline is synchronous (it runs in a worker thread); each backend call runs its own event
loop, opens one client, fans the calls out under a semaphore and closes the client. Faults never
escape: a failed call marks its sentences failed (the pipeline falls back to the deterministic
matcher) with a warning naming the cause. Only cancellation escapes, as tracer.errors.CancelledError,
after the in-flight calls have been cancelled.
"""

from __future__ import annotations

import asyncio
import inspect
import random
import re
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from tracer.errors import CancelledError
from tracer.llm.chunking import MatchChunk, batches, plan_match_chunks
from tracer.llm.client import ChatClient, ChatClientFactory, ChatError, ChatReply, ReplySchema
from tracer.llm.parsing import REPLY_SCHEMAS, parse_match_reply, parse_recognize_reply
from tracer.llm.prompts import ChatMessage, PromptLibrary, default_prompts_dir
from tracer.llm.settings import LLMSettings, Strategy
from tracer.models import Passage, Sentence, Stats
from tracer.options import TraceOptions

if TYPE_CHECKING:
    from tracer.models import CancelToken

T = TypeVar("T")

_CANCEL_POLL_S = 0.02
_SLOT_POLL_S = 0.002          # the first wait for a slot; each next one is longer, up to
_SLOT_POLL_MAX_S = 0.05        # this (a call waits seconds for its model, so 50 ms is nothing)
# After a call fails, its retries spent, because the endpoint did not answer or refused the key,
# calls fail at once for this long (every request's): a hung model cost each request its
# timeouts twice over (recognition, then matching), minutes with the defaults.
DOWN_COOLDOWN_S = 30.0
_OUT_OF_TIME = "no time left before the call's deadline"
_HURRIED = "the call's deadline was brought forward (its server is shutting down); the model was abandoned"


class _Budget(Exception):
    def __init__(self, cause: str) -> None:
        self.cause = cause
        super().__init__(cause)


_WIDE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def _estimate_tokens(messages: Sequence[ChatMessage]) -> int:
    # ~4 characters a token in English, about one a character in Chinese (a third of that was
    # counted, and concurrent Chinese calls overspent `max_tokens`); an upper-ish bound.
    total = wide = 0
    for m in messages:
        text = m["content"]
        total += len(text)
        wide += len(_WIDE.findall(text))
    return wide + (total - wide) // 3 + 16


class _Slots:
    """The concurrency limit shared by every request using one backend (each request runs its own
    event loop, in its own worker thread, so the limit is a thread-safe semaphore polled async)."""

    def __init__(self, limit: int) -> None:
        self._sem = threading.BoundedSemaphore(limit)

    @asynccontextmanager
    async def hold(self, deadline: float | None = None) -> AsyncIterator[None]:
        """A slot; raises _Budget if `deadline` (time.monotonic()) passes while waiting for one."""
        wait = _SLOT_POLL_S
        while not self._sem.acquire(blocking=False):
            if deadline is not None and time.monotonic() >= deadline:
                raise _Budget(_OUT_OF_TIME)
            await asyncio.sleep(wait)
            wait = min(wait * 1.5, _SLOT_POLL_MAX_S)   # a queue of waiters polls little
        try:
            yield
        finally:
            self._sem.release()


class _Breaker:
    """Whether the model's endpoint was found down a moment ago (`DOWN_COOLDOWN_S`), shared by every
    request using one backend; any answer closes it again."""

    def __init__(self, cooldown: float) -> None:
        self._lock = threading.Lock()
        self._cooldown = cooldown
        self._until = 0.0
        self._cause = ""

    def check(self) -> None:
        """Raise a non-retryable ChatError while the endpoint counts as down."""
        with self._lock:
            left = self._until - time.monotonic()
            cause = self._cause
        if left > 0:
            raise ChatError(f"the model's endpoint was found down ({cause}); not asked again for "
                            f"{left:.0f} s", retryable=False)

    def trip(self, cause: str) -> None:
        with self._lock:
            self._until = time.monotonic() + self._cooldown
            self._cause = cause

    def reset(self) -> None:
        with self._lock:
            self._until = 0.0


def _takes_schema(client: ChatClient) -> bool:
    """Whether the client's `complete` accepts the `schema` keyword (or any keyword). An older
    client without it still works: it is called without a schema, as before the keyword existed."""
    try:
        params = inspect.signature(client.complete).parameters
    except (TypeError, ValueError):  # no signature to read (a C callable): assume the protocol
        return True
    return "schema" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


class _Session:
    """State of one backend call: the client, the shared concurrency gate and the per-trace budget."""

    def __init__(
        self, client: ChatClient, settings: LLMSettings, stats: Stats, slots: _Slots,
        deadline: float | None = None, breaker: _Breaker | None = None,
    ) -> None:
        self.client = client
        self.breaker = breaker or _Breaker(0.0)
        self.takes_schema = _takes_schema(client)
        self.settings = settings
        self.stats = stats
        self.slots = slots
        self.deadline = deadline  # time.monotonic() past which no call runs
        self.reserved = 0  # estimated tokens of calls in flight

    def _time_left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def _admit(self, estimate: int) -> None:
        s, st = self.settings, self.stats
        if s.max_calls and st.llm_calls >= s.max_calls:
            raise _Budget(f"call budget of {s.max_calls} per request exhausted")
        used = st.llm_prompt_tokens + st.llm_completion_tokens + self.reserved
        if s.max_tokens and used + estimate > s.max_tokens:
            raise _Budget(f"token budget of {s.max_tokens} per request exhausted")

    async def call(self, messages: list[ChatMessage], prompt: str) -> ChatReply:
        """One logical call with retries; raises ChatError (after retries) or _Budget."""
        s = self.settings
        estimate = _estimate_tokens(messages)
        attempt = 0
        while True:
            self.breaker.check()
            async with self.slots.hold(self.deadline):
                left = self._time_left()
                if left is not None and left <= 0:
                    raise _Budget(_OUT_OF_TIME)
                self._admit(estimate)
                self.stats.llm_calls += 1
                if attempt:
                    self.stats.llm_retries += 1
                self.reserved += estimate
                timeout = s.timeout if left is None else min(s.timeout, left)
                # A hung client is still bounded; the call's deadline is a hard stop.
                bound = s.timeout * 1.5 + 1.0 if left is None else min(s.timeout * 1.5 + 1.0, left)
                try:
                    async with asyncio.timeout(bound):
                        if self.takes_schema:
                            reply = await self.client.complete(
                                messages, timeout=timeout, schema=ReplySchema(prompt, REPLY_SCHEMAS[prompt]))
                        else:  # a client written before `schema` existed: it is sent no schema
                            reply = await self.client.complete(messages, timeout=timeout)
                except TimeoutError:
                    error: ChatError | None = ChatError(f"timeout after {timeout:.3g}s", retryable=True,
                                                        down=True)
                except ChatError as exc:
                    error = exc
                    self.stats.llm_calls += max(0, exc.requests - 1)  # sent again in other forms
                else:
                    error = None
                finally:
                    self.reserved -= estimate
            if error is None:
                self.breaker.reset()
                self.stats.llm_calls += max(0, reply.requests - 1)  # sent again in another form
                self.stats.llm_prompt_tokens += max(0, reply.prompt_tokens)
                self.stats.llm_completion_tokens += max(0, reply.completion_tokens)
                return reply
            if not error.retryable or attempt >= s.retries:
                if error.down:
                    self.breaker.trip(error.cause)
                if attempt:
                    raise ChatError(f"{error.cause}, after {attempt + 1} attempts", retryable=False)
                raise error
            if error.retry_after is not None:
                delay = min(max(0.0, error.retry_after), s.max_backoff)
            else:
                delay = min(s.backoff * (2**attempt), s.max_backoff) * random.uniform(1.0, 1.2)
            left = self._time_left()
            if left is not None and left <= delay:
                raise ChatError(f"{error.cause}; {_OUT_OF_TIME} to retry", retryable=False)
            attempt += 1
            await asyncio.sleep(delay)


@dataclass(slots=True)
class _ChunkOutcome:
    proposals: dict[int, list[int]]
    failed: set[int]
    warnings: list[str]
    label: str = ""          # a call that failed whole: its chunk ("chunk 3/9") and why
    cause: str = ""


class ChatBackend:
    """Implements tracer.pipeline.LLMBackend over a ChatClient factory (see server/llm_client.py)."""

    def __init__(
        self,
        client_factory: ChatClientFactory,
        settings: LLMSettings | None = None,
        prompts: PromptLibrary | None = None,
    ) -> None:
        self.client_factory = client_factory
        self.settings = (settings or LLMSettings()).validated()
        self.prompts = prompts or PromptLibrary(default_prompts_dir())
        self._slots = _Slots(self.settings.max_concurrency)
        self._breaker = _Breaker(DOWN_COOLDOWN_S)
        for name in ("recognize", "match"):
            self.prompts.check(name)  # fail at start-up, not on the first request

    @property
    def min_score(self) -> float | None:
        return self.settings.min_score

    @property
    def keep_score(self) -> float | None:
        return self.settings.keep_score

    # ---- recognition -------------------------------------------------------------------------

    def recognize(
        self, sentences: list[Sentence], lang: str, stats: Stats, cancel: CancelToken | None,
        *, deadline: float | None = None,
    ) -> tuple[set[int] | None, list[str]]:
        """Ids of sentences needing a citation, or None (with a warning) when any batch failed."""
        if not self.settings.recognize:
            from tracer import recognize as rules  # the deterministic recogniser, by choice

            return set(rules.recognize_sentences(sentences, lang)), []
        if not sentences:
            return set(), []

        async def work(session: _Session) -> tuple[set[int] | None, list[str]]:
            groups = batches([s.id for s in sentences], self.settings.recognize_batch)
            by_id = {s.id: s for s in sentences}
            outcomes = await asyncio.gather(
                *(self._recognize_batch(session, [by_id[i] for i in g], lang) for g in groups)
            )
            needs: set[int] = set()
            warnings: list[str] = []
            failed = False
            for n, (ids, warn) in enumerate(outcomes, 1):
                if warn:
                    warnings.append(f"LLM recognition batch {n}/{len(groups)}: {warn}")
                if ids is None:
                    failed = True
                else:
                    needs |= ids
            if failed:
                warnings.append("LLM recognition failed; used the rule-based recogniser")
                return None, warnings
            return needs, warnings

        return self._run(work, stats, cancel, deadline, on_failure=lambda why: (None, [
            f"LLM recognition failed ({why}); used the rule-based recogniser"]))

    async def _recognize_batch(
        self, session: _Session, batch: list[Sentence], lang: str
    ) -> tuple[set[int] | None, str]:
        local = {n: s.id for n, s in enumerate(batch, 1)}
        messages = self.prompts.render("recognize", {
            "language": "Chinese" if lang == "zh" else "English",
            "sentences": [{"id": n, "text": s.query} for n, s in enumerate(batch, 1)],
        })
        try:
            reply = await session.call(messages, "recognize")
        except (ChatError, _Budget) as exc:
            return None, exc.cause
        parsed = parse_recognize_reply(reply.text, local.keys())
        if parsed is None and reply.truncated:
            # the sentences after the cut are unknown: a partial list cannot be trusted (a whole
            # object before the cut, chatter after it, is the model's whole answer)
            return None, "reply cut off at the output-token cap (llm.max_output_tokens)"
        if parsed is None:
            return None, _garbage(reply)
        if parsed.dropped_ids > len(parsed.ids):
            # most ids it named are no sentence's: which sentences it meant is unknown
            return None, (f"{parsed.dropped_ids} of the {parsed.dropped_ids + len(parsed.ids)} sentence "
                          "ids it named do not exist")
        warn = f"dropped {parsed.dropped_ids} unknown sentence ids" if parsed.dropped_ids else ""
        return {local[i] for i in parsed.ids}, warn

    # ---- matching ----------------------------------------------------------------------------

    def match(
        self,
        sentences: list[Sentence],
        candidates: Mapping[int, list[int]],
        passages: list[Passage],
        options: TraceOptions,
        stats: Stats,
        cancel: CancelToken | None,
        *,
        deadline: float | None = None,
    ) -> tuple[dict[int, list[int]], set[int], list[str]]:
        """Proposed passage ids per sentence id, the failed sentence ids, and warnings."""
        by_pid = {p.id: p for p in passages}
        by_sid = {s.id: s for s in sentences}
        all_ids = {s.id for s in sentences}
        if not sentences or not passages or (
            self.settings.strategy != Strategy.FULL
            and not any(p in by_pid for s in sentences for p in candidates.get(s.id, ()))
        ):
            return {}, set(), []  # nothing to ask: no client, no call

        async def work(session: _Session) -> tuple[dict[int, list[int]], set[int], list[str]]:
            if self.settings.strategy == Strategy.FULL:
                outcomes = await self._match_full(session, sentences, passages, options.max_sources)
            else:
                chunks = plan_match_chunks(
                    [s.id for s in sentences],
                    {sid: [p for p in c if p in by_pid] for sid, c in candidates.items()},
                    self.settings.top_k, self.settings.chunk_passages, self.settings.chunk_sentences,
                )
                outcomes = await asyncio.gather(*(
                    self._match_chunk(session, chunk, f"chunk {n}/{len(chunks)}", by_sid, by_pid,
                                      options.max_sources)
                    for n, chunk in enumerate(chunks, 1)
                ))
            proposals: dict[int, list[int]] = {}
            failed: set[int] = set()
            warnings: list[str] = []
            for out in outcomes:
                for sid, pids in out.proposals.items():
                    merged = proposals.setdefault(sid, [])
                    merged.extend(p for p in pids if p not in merged)
                failed |= out.failed
                warnings.extend(out.warnings)
            warnings.extend(_failure_warnings(outcomes))
            for sid in failed:
                proposals.pop(sid, None)
            return proposals, failed, warnings

        return self._run(work, stats, cancel, deadline, on_failure=lambda why: ({}, set(all_ids), [
            f"LLM matching failed ({why}); all sentences used the deterministic matcher"]))

    async def _match_chunk(
        self,
        session: _Session,
        chunk: MatchChunk,
        label: str,
        by_sid: Mapping[int, Sentence],
        by_pid: Mapping[int, Passage],
        max_sources: int,
    ) -> _ChunkOutcome:
        local_p = {pid: n for n, pid in enumerate(chunk.passages, 1)}
        sents = [
            {"id": n, "text": by_sid[sid].text, "candidates": [local_p[p] for p in chunk.candidates[sid]]}
            for n, sid in enumerate(chunk.sentences, 1)
        ]
        return await self._match_call(
            session, label, list(chunk.sentences), list(chunk.passages), sents, by_pid, max_sources
        )

    async def _match_full(
        self, session: _Session, sentences: list[Sentence], passages: list[Passage], max_sources: int
    ) -> list[_ChunkOutcome]:
        """The reference design: every record, whole, against every sentence, one call at a time."""
        by_record: dict[int, list[Passage]] = {}
        for p in passages:
            by_record.setdefault(p.record, []).append(p)
        by_pid = {p.id: p for p in passages}
        sids = [s.id for s in sentences]
        sents = [{"id": n, "text": s.query, "candidates": []} for n, s in enumerate(sentences, 1)]
        outcomes: list[_ChunkOutcome] = []
        for n, rec in enumerate(sorted(by_record), 1):
            out = await self._match_call(
                session, f"record {n}/{len(by_record)}", sids, [p.id for p in by_record[rec]], sents,
                by_pid, max_sources,
            )
            outcomes.append(out)
            if out.failed >= set(sids):  # every sentence already falls back; stop spending calls
                break
        return outcomes

    async def _match_call(
        self,
        session: _Session,
        label: str,
        sentence_ids: list[int],
        passage_ids: list[int],
        sentence_vars: list[dict[str, Any]],
        by_pid: Mapping[int, Passage],
        max_sources: int,
    ) -> _ChunkOutcome:
        cut = self.settings.passage_chars
        messages = self.prompts.render("match", {
            "sentences": sentence_vars,
            "passages": [{"id": n, "text": by_pid[pid].text[:cut]} for n, pid in enumerate(passage_ids, 1)],
            "max_sources": max_sources,
        })
        try:
            reply = await session.call(messages, "match")
        except (ChatError, _Budget) as exc:
            return _failed(sentence_ids, label, exc.cause)
        local_s = dict(enumerate(sentence_ids, 1))
        local_p = dict(enumerate(passage_ids, 1))
        parsed = parse_match_reply(reply.text, local_s.keys(), local_p.keys(), truncated=reply.truncated)
        if parsed is None:
            return _failed(sentence_ids, label, _garbage(reply))
        warnings = []
        failed: set[int] = set()
        if parsed.cut:  # what the model would have said after the cut is unknown: no verdict
            failed = {local_s[ls] for ls in local_s if ls not in parsed.matches}
            warnings.append(
                f"LLM match {label}: reply cut off at the output-token cap (llm.max_output_tokens) after "
                f"{len(parsed.matches)} sentences; its other {len(failed)} sentences used the "
                f"deterministic matcher")
        if parsed.dropped_items or parsed.dropped_ids:
            warnings.append(
                f"LLM match {label}: dropped {parsed.dropped_items} invalid items and "
                f"{parsed.dropped_ids} invalid passage ids"
            )
        if parsed.dropped_items and not parsed.cut:
            # an item naming no sentence it was given: which sentence it meant is unknown, so a
            # sentence with no valid item has no verdict (not "no source")
            unknown = {local_s[ls] for ls in local_s if ls not in parsed.matches} - failed
            if unknown:
                failed |= unknown
                warnings.append(
                    f"LLM match {label}: {len(unknown)} sentences had no valid item; they used the "
                    "deterministic matcher")
        if parsed.garbled:  # it named passages, none of them real: that is no verdict
            failed |= {local_s[ls] for ls in parsed.garbled}
            warnings.append(
                f"LLM match {label}: {len(parsed.garbled)} sentences named only passage ids that do not "
                f"exist; they used the deterministic matcher")
        proposals = {
            local_s[ls]: [local_p[lp] for lp in lps] for ls, lps in parsed.matches.items() if lps
        }
        return _ChunkOutcome(proposals, failed, warnings)

    # ---- event loop --------------------------------------------------------------------------

    def _run(
        self,
        work: Callable[[_Session], Awaitable[T]],
        stats: Stats,
        cancel: CancelToken | None,
        deadline: float | None,
        on_failure: Callable[[str], T],
    ) -> T:
        if cancel is not None and cancel.is_set():
            raise CancelledError("cancelled before the LLM call")
        if deadline is not None and deadline <= time.monotonic():
            return on_failure(_OUT_OF_TIME)

        async def main() -> T:
            try:
                client = self.client_factory()
            except Exception as exc:  # misconfiguration must not fail the request
                return on_failure(f"client setup failed: {exc}")
            task = asyncio.ensure_future(work(_Session(client, self.settings, stats, self._slots, deadline,
                                                       self._breaker)))
            watcher = asyncio.ensure_future(_wait_cancel(cancel, deadline)) if cancel is not None else None
            try:
                if watcher is not None:
                    await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
                    if not task.done():
                        task.cancel()
                        await asyncio.gather(task, return_exceptions=True)
                        if cancel is not None and not cancel.is_set():  # its deadline moved up
                            return on_failure(_HURRIED)
                        raise CancelledError("cancelled; in-flight LLM calls were cancelled")
                try:
                    return await task
                except Exception as exc:  # a bug in this path must degrade, not fail the request
                    return on_failure(f"internal error {type(exc).__name__}: {exc}")
            finally:
                if watcher is not None:
                    watcher.cancel()
                try:
                    await client.aclose()
                except Exception:  # closing is best effort
                    pass

        return _run_coroutine(main)


async def _wait_cancel(cancel: CancelToken, deadline: float | None) -> None:
    """Until `cancel` is set, or its `llm_deadline` (a server drain moves it up) is sooner than
    the `deadline` these calls started with and has passed."""
    while not cancel.is_set():
        moved = getattr(cancel, "llm_deadline", None)
        if isinstance(moved, (int, float)) and (deadline is None or moved < deadline) \
                and time.monotonic() >= moved:
            return
        await asyncio.sleep(_CANCEL_POLL_S)


def _run_coroutine(main: Callable[[], Awaitable[T]]) -> T:
    """asyncio.run, or asyncio.run on a helper thread when this thread already runs a loop."""

    async def runner() -> T:
        return await main()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(runner())
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(runner())
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="tracer-llm", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    result: T = box["value"]
    return result


def _failed(sentence_ids: Sequence[int], label: str, cause: str) -> _ChunkOutcome:
    return _ChunkOutcome({}, set(sentence_ids), [], label=label, cause=cause)


def _failure_warnings(outcomes: Sequence[_ChunkOutcome]) -> list[str]:
    """One warning per cause of the calls that failed whole: the chunk's own when one failed so,
    a count when several did (a model down failed every chunk: one line, not hundreds)."""
    by_cause: dict[str, list[_ChunkOutcome]] = {}
    for out in outcomes:
        if out.cause:
            by_cause.setdefault(out.cause, []).append(out)
    lines = []
    for cause, outs in by_cause.items():
        n = sum(len(o.failed) for o in outs)
        if len(outs) == 1:
            lines.append(f"LLM match {outs[0].label} failed ({cause}); its {n} sentences used the "
                         "deterministic matcher")
        else:
            named = ", ".join(o.label for o in outs[:3]) + (", …" if len(outs) > 3 else "")
            lines.append(f"LLM match: {len(outs)} calls failed ({cause}): {named}; their {n} sentences "
                         "used the deterministic matcher")
    return lines


def _garbage(reply: ChatReply) -> str:
    if reply.truncated:
        return "reply cut off at the output-token cap (llm.max_output_tokens) with no valid JSON result"
    return "empty reply" if not reply.text.strip() else "reply had no valid JSON result"
