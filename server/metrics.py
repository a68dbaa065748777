"""Prometheus metrics of one server instance (own registry, so tests can run several)."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

from server.workers import TraceSummary
from tracer import __version__

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
_QUEUE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class Metrics:
    """All series are prefixed `source_tracer_`; docs/operations.md lists them."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter(
            "source_tracer_requests",
            "Finished calls (stream items count once each) by method and status code",
            ["method", "code"], registry=r)
        self.latency = Histogram(
            "source_tracer_request_seconds", "Wall time of one call or stream item",
            ["method"], buckets=_LATENCY_BUCKETS, registry=r)
        self.queue = Histogram(
            "source_tracer_queue_seconds",
            "Time a call or stream item waited for a free worker lane, plus the hand-offs to and from it",
            ["method"], buckets=_QUEUE_BUCKETS, registry=r)
        self.stage = Histogram(
            "source_tracer_stage_seconds", "Wall time per pipeline stage",
            ["stage"], buckets=_LATENCY_BUCKETS, registry=r)
        self.in_flight = Gauge("source_tracer_in_flight", "Calls being processed now", registry=r)
        self.rejected = Counter(
            "source_tracer_rejected", "Calls refused before any work, by reason (in_flight, draining, auth)",
            ["reason"], registry=r)
        self.citations = Counter("source_tracer_citations", "(sentence, source) pairs emitted", registry=r)
        self.cited_sentences = Counter(
            "source_tracer_cited_sentences", "Sentences given a marker", registry=r)
        self.unsupported = Counter(
            "source_tracer_unsupported_sentences", "Sentences needing a citation that no record supports",
            registry=r)
        self.records_dropped = Counter(
            "source_tracer_records_dropped", "Invalid or duplicate records dropped with a warning",
            registry=r)
        self.llm_calls = Counter("source_tracer_llm_calls", "LLM requests made", registry=r)
        self.llm_retries = Counter("source_tracer_llm_retries", "LLM requests retried", registry=r)
        self.llm_errors = Counter(
            "source_tracer_llm_errors", "Traces where an LLM stage failed (fell back to deterministic)",
            registry=r)
        self.llm_pairs_rejected = Counter(
            "source_tracer_llm_pairs_rejected", "LLM-proposed pairs the verify stage refused", registry=r)
        self.llm_sentences_kept = Counter(
            "source_tracer_llm_sentences_kept",
            "Sentences the LLM left uncited that kept a near-verbatim citation (llm.keep_score)", registry=r)
        self.degraded = Counter("source_tracer_degraded", "Responses marked degraded", registry=r)
        self.llm_tokens = Counter("source_tracer_llm_tokens", "LLM tokens used", ["kind"], registry=r)
        self.workers = Gauge(
            "source_tracer_workers", "Traces the server runs at once, by where they run (thread, process)",
            ["kind"], registry=r)
        self.worker_crashes = Counter(
            "source_tracer_worker_crashes", "Calls failed because their worker process died", registry=r)
        self.worker_pool_rebuilds = Counter(
            "source_tracer_worker_pool_rebuilds",
            "Worker pools rebuilt because one of their processes died (each call on it tried again)",
            registry=r)
        build = Gauge("source_tracer_build_info", "Always 1; the running source-tracer version",
                      ["version"], registry=r)
        build.labels(version=__version__).set(1)

    def observe_result(self, result: TraceSummary) -> None:
        st = result.stats
        for name, ms in st.stage_ms.items():
            self.stage.labels(stage=name).observe(ms / 1000.0)
        self.citations.inc(st.citations)
        self.cited_sentences.inc(st.cited_sentences)
        self.unsupported.inc(st.unsupported)
        self.records_dropped.inc(st.records_dropped)
        self.llm_calls.inc(st.llm_calls)
        self.llm_retries.inc(st.llm_retries)
        self.llm_pairs_rejected.inc(st.llm_pairs_rejected)
        self.llm_sentences_kept.inc(st.llm_sentences_kept)
        self.llm_tokens.labels(kind="prompt").inc(st.llm_prompt_tokens)
        self.llm_tokens.labels(kind="completion").inc(st.llm_completion_tokens)
        if result.degraded:
            self.degraded.inc()
            if result.mode == "llm" or st.llm_calls:
                self.llm_errors.inc()

    def serve(self, host: str, port: int) -> Any:
        """Start the /metrics HTTP endpoint on a daemon thread; returns the HTTP server."""
        server, _thread = start_http_server(port, addr=host, registry=self.registry)
        return server
