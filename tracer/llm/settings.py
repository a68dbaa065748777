"""Tuning of the LLM path, with documented defaults (docs/llm.md)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from tracer.errors import InvalidInputError


class Strategy(StrEnum):
    CHUNKED = "chunked"   # top-k candidates per sentence, chunks of passages, calls run concurrently
    FULL = "full"         # every record with every sentence, one call per record, in sequence


@dataclass(frozen=True, slots=True)
class LLMSettings:
    strategy: Strategy = Strategy.CHUNKED
    recognize: bool = True          # use the model for recognition too (else rules)
    top_k: int = 5                  # candidate passages per sentence shown to the model
    chunk_passages: int = 40        # at most this many passages per matching call
    chunk_sentences: int = 25       # at most this many sentences per matching call
    recognize_batch: int = 60       # sentences per recognition call
    passage_chars: int = 2000       # passage text shown is cut to this many characters
    max_concurrency: int = 8        # calls in flight at once, across all traces using one backend
    timeout: float = 60.0           # seconds per call
    retries: int = 2                # extra attempts after a retryable failure (429, 5xx, timeout, connection)
    backoff: float = 0.5            # first retry delay in seconds, doubled per attempt
    max_backoff: float = 20.0       # cap on any retry delay, Retry-After included
    max_calls: int = 100            # per-trace budget of calls (retries included); 0 = unlimited
    max_tokens: int = 400_000       # per-trace budget of prompt+completion tokens; 0 = unlimited
    # Seconds of a caller's time limit kept from the model for the deterministic path; None: a
    # fifth of the limit, at least 0.5 s and at most 5 s (server.workers.llm_deadline_within).
    deadline_reserve: float | None = None
    # Support score a pair the model proposed needs to be cited; None: the request's min_score.
    # Lower lets a model that reads well cite paraphrases the lexical score doubts (docs/llm.md);
    # a pair is never held to more than the request's own threshold.
    min_score: float | None = None
    # A sentence the model was asked about but left uncited still gets the deterministic citations
    # scoring at least this (and the request's min_score): a record that states it (nearly) word
    # for word. None: off, the model's silence is final.
    keep_score: float | None = 0.9

    def validated(self) -> LLMSettings:
        """Return self, or raise InvalidInputError naming the bad setting."""
        ints = {
            "top_k": (self.top_k, 1, 100),
            "chunk_passages": (self.chunk_passages, 1, 1000),
            "chunk_sentences": (self.chunk_sentences, 1, 1000),
            "recognize_batch": (self.recognize_batch, 1, 10_000),
            "passage_chars": (self.passage_chars, 100, 1_000_000),
            "max_concurrency": (self.max_concurrency, 1, 1024),
            "retries": (self.retries, 0, 20),
            "max_calls": (self.max_calls, 0, 10_000_000),
            "max_tokens": (self.max_tokens, 0, 10**12),
        }
        for name, (value, lo, hi) in ints.items():
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise InvalidInputError(f"llm.{name}", f"must be an integer in {lo}..{hi}, got {value!r}")
        for name, fvalue in (("timeout", self.timeout), ("backoff", self.backoff),
                             ("max_backoff", self.max_backoff)):
            if isinstance(fvalue, bool) or not isinstance(fvalue, (int, float)) or not 0 <= fvalue <= 3600:
                raise InvalidInputError(
                    f"llm.{name}", f"must be a number of seconds in 0..3600, got {fvalue!r}"
                )
        optional = (  # None is spelled `word` in the configuration
            ("deadline_reserve", self.deadline_reserve, "auto", 3600, "a number of seconds in 0..3600"),
            ("min_score", self.min_score, "auto", 1, "a score in 0..1"),
            ("keep_score", self.keep_score, "off", 1, "a score in 0..1"),
        )
        for name, ovalue, word, top, what in optional:
            if ovalue is not None and (isinstance(ovalue, bool) or not isinstance(ovalue, (int, float))
                                       or not 0 <= ovalue <= top):
                raise InvalidInputError(f"llm.{name}", f"must be '{word}' or {what}, got {ovalue!r}")
        if self.timeout <= 0:
            raise InvalidInputError("llm.timeout", f"must be > 0, got {self.timeout!r}")
        if self.top_k > self.chunk_passages:
            raise InvalidInputError(
                "llm.top_k", f"must not exceed llm.chunk_passages ({self.chunk_passages}), got {self.top_k}"
            )
        try:
            Strategy(self.strategy)
        except ValueError:
            raise InvalidInputError(
                "llm.strategy", f"must be 'chunked' or 'full', got {self.strategy!r}"
            ) from None
        return self
