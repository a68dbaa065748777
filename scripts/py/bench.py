"""Speed and memory of the deterministic engine (prints numbers; not a test).

    scripts/bench [BENCH.jsonl] [--repeat N] [--no-grpc] [--no-scaling] [--scaling-lang en|zh]
                  [--overhead] [--large]

1. in-process: traces/s over every benchmark case, single process; once as a library caller
   runs it, and once with the collector tuned as `source-tracer serve` tunes its own process
   (`server.workers.tune_gc`), which is what the service's numbers include;
2. the same cases through the gRPC service (a `source-tracer serve` subprocess on loopback,
   one call at a time); after a warm-up pass of each, rounds of 1 and 2 alternate and the
   median round of each is printed; then each case in process and through the service back to
   back (the ratio of the two that the machine's noise moves least), and the service again with
   as many callers at once as the machine has CPUs (what a server's worker processes are for);
3. scaling: one 50-sentence report against 50, 200, 800 and 3200 records of 3,000 characters
   (English by default; `--scaling-lang zh` builds both from the Chinese cases);
4. the benchmark's naive baseline (scripts/py/baseline.py: the record with the highest share of
   each gold sentence's words; told which sentences are gold) over the same cases, in the same
   run, for reference;
peak RSS of this process is printed at the end.

`--large` instead traces one 50-sentence report against requests near the service's default size
limits (1,000 and 5,000 records; English and Chinese record text from the benchmark), each in a
fresh process, and prints the time and the peak memory the trace added (docs/operations.md).

`--overhead` instead measures what the service costs per call apart from tracing: the same
requests against servers whose trace step does no real work, either returning at once or
after keeping the CPU busy for 5 or 20 ms, beside the health check's round trip.
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchdata import DEFAULT_BENCH, load_cases  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class GrpcServer:
    """A `source-tracer serve` subprocess on loopback with a connected stub; with `hold_ms`,
    a server whose trace step only sleeps that long (see `hold_server`)."""

    def __init__(self, hold_ms: float | None = None) -> None:
        self.hold_ms = hold_ms
        self.log_path: Path | None = None

    def __enter__(self) -> GrpcServer:
        import grpc

        from server.pb.source_tracer.v1 import tracer_pb2_grpc

        port = free_port()
        env = dict(os.environ, OPENAI_BASE_URL="", SOURCE_TRACER_LLM_MODEL="")
        if self.hold_ms is None:
            cmd = [str(ROOT / ".venv" / "bin" / "source-tracer"), "serve", "--host", "127.0.0.1",
                   "--port", str(port)]
        else:
            cmd = [sys.executable, __file__, "--hold-server", str(port), str(self.hold_ms)]
        import tempfile

        log = tempfile.NamedTemporaryFile(prefix="bench-server-", suffix=".log", delete=False)
        self.log_path = Path(log.name)
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=log)
        log.close()
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=[
            ("grpc.max_send_message_length", 64 << 20), ("grpc.max_receive_message_length", 64 << 20)])
        grpc.channel_ready_future(self.channel).result(timeout=30)
        self.stub = tracer_pb2_grpc.SourceTracerStub(self.channel)
        return self

    def __exit__(self, *exc: object) -> None:
        self.channel.close()
        self.proc.terminate()
        self.proc.wait(timeout=30)
        if self.log_path is not None:
            self.log_path.unlink(missing_ok=True)

    def trace_events(self) -> dict[str, dict[str, Any]]:
        """The server's `trace` log lines so far, by request id."""
        import json

        out: dict[str, dict[str, Any]] = {}
        assert self.log_path is not None
        for line in self.log_path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("event") == "trace" and "request_id" in event:
                out[event["request_id"]] = event
        return out


def inprocess_round(cases: list[dict[str, Any]], tuned: bool = False) -> float:
    """Cases per second for one pass over every case in this process; with `tuned`, with the
    collector set as `source-tracer serve` sets its own (server.workers.tune_gc), then reset."""
    import gc

    from server.workers import tune_gc
    from tracer import trace

    previous = gc.get_threshold()
    if tuned:
        tune_gc()
    try:
        t0 = time.perf_counter()
        for c in cases:
            trace(c["report"], c["records"])
        return len(cases) / (time.perf_counter() - t0)
    finally:
        if tuned:
            gc.unfreeze()
            gc.set_threshold(*previous)


def paired_round(server: GrpcServer, cases: list[dict[str, Any]], requests: list[Any],
                 out: list[tuple[float, float]]) -> None:
    """Each case traced in this process and through the service back to back (which goes first
    alternates), so that the machine's slow and fast moments fall on both alike; appends the two
    times (ms) of each case to `out`."""
    from tracer import trace

    for i, (c, r) in enumerate(zip(cases, requests, strict=True)):
        times = [0.0, 0.0]
        for path in ((0, 1) if (len(out) + i) % 2 == 0 else (1, 0)):
            t0 = time.perf_counter()
            if path == 0:
                trace(c["report"], c["records"])
            else:
                server.stub.Trace(r, timeout=120)
            times[path] = (time.perf_counter() - t0) * 1000
        out.append((times[0], times[1]))


def baseline_round(cases: list[dict[str, Any]]) -> float:
    """Cases per second for the naive baseline over every case (scripts/py/baseline.py)."""
    from baseline import naive_trace

    t0 = time.perf_counter()
    for c in cases:
        naive_trace(c)
    return len(cases) / (time.perf_counter() - t0)


def grpc_round(server: GrpcServer, requests: list[Any], calls: dict[str, float] | None = None) -> float:
    """Cases per second for one pass over every case, one call at a time, through the service.
    With `calls`, each call gets a request id and its wall time (ms) is stored under it."""
    t0 = time.perf_counter()
    for r in requests:
        if calls is None:
            server.stub.Trace(r, timeout=120)
            continue
        rid = f"bench-{len(calls)}"
        t = time.perf_counter()
        server.stub.Trace(r, timeout=120, metadata=(("x-request-id", rid),))
        calls[rid] = (time.perf_counter() - t) * 1000
    return len(requests) / (time.perf_counter() - t0)


def print_split(calls: dict[str, float], events: dict[str, dict[str, Any]]) -> None:
    """Where a one-caller call's time goes, from the client's clock and the server's log line."""
    rows = [(ms, events[rid]) for rid, ms in calls.items() if events.get(rid, {}).get("code") == "OK"]
    if not rows:
        print("split: the server logged no matching trace lines")
        return

    def mean(values: list[float]) -> float:
        return sum(values) / len(values)

    client = mean([ms for ms, _ in rows])
    handler, wait, worker, trace_ms = (mean([float(e[k]) for _, e in rows])
                                       for k in ("ms", "wait_ms", "worker_ms", "trace_ms"))
    print(f"gRPC split, mean of {len(rows)} calls: client {client:.2f} ms = trace {trace_ms:.2f}"
          f" + protobuf<->core in the worker {worker - trace_ms:.2f}"
          f" + hand-off to and from the worker {wait - worker:.2f}"
          f" + the handler's own work {handler - wait:.2f}"
          f" + gRPC and loopback {client - handler:.2f}")


def grpc_concurrent_round(server: GrpcServer, requests: list[Any], callers: int) -> float:
    """Cases per second with `callers` calls in flight at once."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(callers) as pool:
        t0 = time.perf_counter()
        for _ in pool.map(lambda r: server.stub.Trace(r, timeout=120), requests):
            pass
        return len(requests) / (time.perf_counter() - t0)


def grpc_requests(cases: list[dict[str, Any]]) -> list[Any]:
    from server.pb.source_tracer.v1 import tracer_pb2

    return [tracer_pb2.TraceRequest(report=c["report"], records=[
        tracer_pb2.Record(url=r["url"], title=r["title"], content=r["content"]) for r in c["records"]])
        for c in cases]


def scaling(cases: list[dict[str, Any]], lang: str = "en") -> list[tuple[int, float]]:
    from tracer import trace

    sentences = [g["sentence"] for c in cases if c["lang"] == lang for g in c["gold"]][:50]
    glue = "" if lang == "zh" else " "
    report = "# Scaling report\n\n" + "\n\n".join(glue.join(sentences[i:i + 5]) for i in range(0, 50, 5))
    pool = "\n\n".join(r["content"] for c in cases if c["lang"] == lang for r in c["records"])
    out = []
    for n in (50, 200, 800, 3200):
        recs = []
        for i in range(n):
            off = (i * 3001) % max(1, len(pool) - 3000)
            recs.append({"url": f"https://example.org/doc/{i}", "title": f"Doc {i}",
                         "content": pool[off:off + 3000]})
        t0 = time.perf_counter()
        trace(report, recs)
        out.append((n, time.perf_counter() - t0))
    return out


def held(hold_ms: float, report: str, records: Any, options: Any, **_: Any) -> Any:
    """The hold server's trace step (module level: it runs in the server's worker processes)."""
    from tracer import trace

    end = time.perf_counter() + hold_ms / 1000
    while time.perf_counter() < end:  # busy, like a real trace (a sleep would overshoot)
        pass
    return trace("", [], options)


def hold_server(port: int, hold_ms: float) -> None:
    """The real service (conversion, admission, the worker lane, metrics, log line: with the default
    `worker_mode`, a single caller's trace runs in the server's thread lane, as in `serve`), but its trace
    step keeps the CPU busy for `hold_ms` and traces an empty report instead of the request."""
    import asyncio
    import functools
    from dataclasses import replace

    from server.app import start_server
    from server.config import ServerConfig

    async def run() -> None:
        config = replace(ServerConfig(), host="127.0.0.1", port=port)
        running = await start_server(config, trace_fn=functools.partial(held, hold_ms))
        await asyncio.Event().wait()  # until terminated; `running` keeps the server alive
        del running

    asyncio.run(run())


def overhead(cases: list[dict[str, Any]], repeat: int) -> None:
    """Per-call cost of the service apart from tracing, in ms (median of `repeat` rounds)."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    requests = grpc_requests(cases)
    print(f"requests: {len(requests)} dev cases, "
          f"{statistics.mean(r.ByteSize() for r in requests) / 1000:.1f} kB on average")
    for hold in (0.0, 5.0, 20.0):
        with GrpcServer(hold_ms=hold) as server:
            health = health_pb2_grpc.HealthStub(server.channel)
            grpc_round(server, requests)
            calls, checks = [], []
            for _ in range(repeat):
                calls.append(1000 / grpc_round(server, requests) - hold)
                t0 = time.perf_counter()
                for _ in requests:
                    health.Check(health_pb2.HealthCheckRequest(), timeout=30)
                checks.append((time.perf_counter() - t0) * 1000 / len(requests))
        print(f"trace step busy for {hold:4.1f} ms: {statistics.median(calls):.2f} ms a call beyond "
              f"that (rounds: {', '.join(f'{c:.2f}' for c in calls)}); health check "
              f"{statistics.median(checks):.2f} ms")


LARGE = [(1000, 12000, "en"), (5000, 12000, "en"), (1000, 6000, "zh"), (5000, 4000, "zh")]


def large_one(bench: Path, n: int, size: int, lang: str) -> None:
    """One large trace in this (fresh) process; prints one line."""
    from tracer import trace

    cases = load_cases(bench)
    sentences = [g["sentence"] for c in cases if c["lang"] == lang for g in c["gold"]][:50]
    glue = "" if lang == "zh" else " "
    report = "# Large report\n\n" + "\n\n".join(glue.join(sentences[i:i + 5]) for i in range(0, 50, 5))
    pool = "\n\n".join(r["content"] for c in cases if c["lang"] == lang for r in c["records"])
    span = max(1, len(pool) - size)
    records = [{"url": f"https://example.org/doc/{i}", "title": f"Doc {i}",
                "content": pool[(i * 7919) % span:(i * 7919) % span + size]} for i in range(n)]
    del cases
    mib = sum(len(r["content"].encode()) for r in records) / 2**20
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    trace(report, records)
    took = time.perf_counter() - t0
    added = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before
    print(f"large ({lang}): {n} records x {size:,} chars ({mib:.0f} MiB of content): {took:.1f} s, "
          f"peak RSS +{added:.0f} MiB", flush=True)


def main() -> int:
    if len(sys.argv) == 6 and sys.argv[1] == "--large-one":
        large_one(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "--hold-server":
        hold_server(int(sys.argv[2]), float(sys.argv[3]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench", nargs="?", type=Path, default=DEFAULT_BENCH)
    ap.add_argument("--repeat", type=int, default=3, help="measured rounds per path (median reported)")
    ap.add_argument("--no-grpc", action="store_true")
    ap.add_argument("--no-scaling", action="store_true")
    ap.add_argument("--scaling-lang", choices=("en", "zh"), default="en",
                    help="language of the scaling series' report and records (default en)")
    ap.add_argument("--large", action="store_true",
                    help="only time traces near the default request size limits (each in a fresh process)")
    ap.add_argument("--overhead", action="store_true",
                    help="only measure the service's own per-call cost (no tracing)")
    args = ap.parse_args()
    cases = load_cases(args.bench)
    if args.large:
        for n, size, lang in LARGE:
            subprocess.run([sys.executable, __file__, "--large-one", str(args.bench), str(n), str(size),
                            lang], check=True)
        return 0
    if args.overhead:
        overhead(cases, args.repeat)
        return 0
    chars = sum(len(r["content"]) for c in cases for r in c["records"])
    print(f"cases={len(cases)} record_chars={chars:,}")
    # Both paths get one full warm-up pass (word caches, jieba, the server's own caches), then
    # rounds alternate so that machine noise hits both alike; the median round is reported.
    inproc: list[float] = []
    tuned: list[float] = []  # in-process, the collector tuned as the server's
    remote: list[float] = []
    naive: list[float] = []  # the benchmark's naive baseline
    concurrent: list[float] = []
    calls: dict[str, float] = {}  # one-caller gRPC calls: request id -> client wall time (ms)
    events: dict[str, dict[str, Any]] = {}  # the server's log lines for them
    paired: list[tuple[float, float]] = []  # (in-process ms, gRPC ms) of a case, back to back
    from server.workers import available_cpus

    callers = available_cpus()
    baseline_round(cases)
    if args.no_grpc:
        inprocess_round(cases)
        for _ in range(args.repeat):
            inproc.append(inprocess_round(cases))
            tuned.append(inprocess_round(cases, tuned=True))
            naive.append(baseline_round(cases))
    else:
        with GrpcServer() as server:
            requests = grpc_requests(cases)
            inprocess_round(cases)
            grpc_round(server, requests)
            for _ in range(args.repeat):
                inproc.append(inprocess_round(cases))
                tuned.append(inprocess_round(cases, tuned=True))
                remote.append(grpc_round(server, requests, calls))
                naive.append(baseline_round(cases))
                paired_round(server, cases, requests, paired)
            if callers > 1:
                grpc_concurrent_round(server, requests, callers)
                concurrent = [grpc_concurrent_round(server, requests, callers) for _ in range(args.repeat)]
            time.sleep(0.5)  # the server writes each log line just after its response
            events = server.trace_events()
    rate = statistics.median(inproc)
    rate_tuned = statistics.median(tuned)
    print(f"in-process: {rate:.1f} cases/s (median of {args.repeat} rounds: "
          + ", ".join(f"{r:.1f}" for r in inproc) + ")")
    print(f"in-process, collector tuned as the server's (gc.freeze, gen0 threshold 10,000): "
          f"{rate_tuned:.1f} cases/s (rounds: " + ", ".join(f"{r:.1f}" for r in tuned) + ")")
    if remote:
        g = statistics.median(remote)
        print(f"gRPC:       {g:.1f} cases/s ({(rate - g) / rate * 100:+.1f}% slower than in-process, "
              f"{(1 / g - 1 / rate) * 1000:+.2f} ms a call; rounds: "
              + ", ".join(f"{r:.1f}" for r in remote) + ")")
        print(f"            {(rate_tuned - g) / rate_tuned * 100:+.1f}% slower than in-process with the "
              f"same collector settings ({(1 / g - 1 / rate_tuned) * 1000:+.2f} ms a call: "
              "the service's own cost)")
        print_split(calls, events)
        local, rpc = statistics.mean(a for a, _ in paired), statistics.mean(b for _, b in paired)
        print(f"gRPC paired with in-process (the library's collector settings), case by case back to back "
              f"({len(paired)} pairs): "
              f"{rpc:.2f} ms a call against {local:.2f} ms, {(rpc - local) / local * 100:+.1f}% "
              f"(median difference {statistics.median(b - a for a, b in paired):+.2f} ms)")
    if concurrent:
        c = statistics.median(concurrent)
        print(f"gRPC, {callers} callers at once: {c:.1f} cases/s ({c / rate:.2f}x in-process; rounds: "
              + ", ".join(f"{r:.1f}" for r in concurrent) + ")")
    b = statistics.median(naive)
    print(f"naive baseline (told the gold sentences; no retrieval, no verification): {b:.1f} cases/s "
          f"({b / rate:.1f}x in-process; rounds: " + ", ".join(f"{r:.1f}" for r in naive) + ")")
    if not args.no_scaling:
        series = scaling(cases, args.scaling_lang)
        base = series[0][1]
        for n, sec in series:
            print(f"scaling ({args.scaling_lang}): 50 sentences x {n:>4} records of 3,000 chars: "
                  f"{sec * 1000:8.1f} ms ({sec / base:5.1f}x of 50 records)")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
