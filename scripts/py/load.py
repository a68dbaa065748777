"""Load test: N concurrent gRPC clients over loopback for T seconds (stops by itself).

    scripts/load [--clients 64] [--duration 20] [--target HOST:PORT] [--sigterm-after S]
                 [--llm-delay S] [--mode auto|deterministic]

Without --target it starts its own `source-tracer serve` on a free port. Every call sends
an x-request-id; with --sigterm-after the script SIGTERMs its server mid-run and checks,
from the server's own JSON logs, that every call the server accepted was answered OK to
the client (calls refused with UNAVAILABLE during the drain were never accepted) and that
the server exited 0. Prints throughput, p50/p95/p99 latency and errors by status code.

With --llm-delay the server it starts has an LLM backend: a fake OpenAI-compatible model in
this process (tests/fake_openai.py, loopback only) that answers every call after S seconds,
citing each sentence's first candidate. `--mode deterministic` sends requests that ask for
the deterministic engine (MODE_DETERMINISTIC), e.g. to such a server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402

from server.pb.source_tracer.v1 import tracer_pb2 as pb  # noqa: E402
from server.pb.source_tracer.v1 import tracer_pb2_grpc  # noqa: E402


def example_requests() -> list[pb.TraceRequest]:
    """The bundled examples (en + zh) as TraceRequests."""
    from tracer.records import normalize_records, parse_records_text

    out = []
    for lang in ("en", "zh"):
        d = ROOT / "examples" / lang
        report = (d / "report.md").read_text(encoding="utf-8")
        text = (d / "records.json").read_text(encoding="utf-8")
        recs, _warnings = normalize_records(parse_records_text(text))
        records = [pb.Record(url=r.url, title=r.title, content=r.content, source_type=r.source_type)
                   for r in recs]
        out.append(pb.TraceRequest(report=report, records=records))
    return out


class OwnServer:
    """A `source-tracer serve` subprocess; its JSON log lines are kept for the drain check."""

    def __init__(self, extra: list[str], llm_url: str = "") -> None:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("SOURCE_TRACER_", "OPENAI_"))}
        if llm_url:
            env.update(OPENAI_BASE_URL=llm_url, OPENAI_API_KEY="load", SOURCE_TRACER_LLM_MODEL="fake")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "server.cli", "serve", "--port", "0", *extra],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        self.logs: list[dict[str, Any]] = []
        self.port = 0
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            entry = self._keep(line)
            if entry.get("event") == "serving":
                self.port = int(entry["port"])
                break
        if not self.port:
            raise SystemExit(f"server failed to start (rc={self.proc.wait()})")
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _keep(self, line: str) -> dict[str, Any]:
        try:
            entry = json.loads(line)
        except ValueError:
            entry = {"raw": line.rstrip()}
        self.logs.append(entry)
        return entry

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._keep(line)


async def client(
    stub: tracer_pb2_grpc.SourceTracerStub, requests: list[pb.TraceRequest], stop_at: float,
    timeout: float, results: list[tuple[str, str, float]], offset: int,
) -> None:
    i = offset
    while time.monotonic() < stop_at:
        rid = uuid.uuid4().hex
        t0 = time.perf_counter()
        try:
            await stub.Trace(requests[i % len(requests)], timeout=timeout, metadata=(("x-request-id", rid),))
            code = "OK"
        except grpc.aio.AioRpcError as err:
            code = err.code().name
        results.append((rid, code, time.perf_counter() - t0))
        if code == "UNAVAILABLE":
            return  # draining or gone: a real client fails over; here there is nowhere to go
        i += 1


def pct(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[k]


async def run(args: argparse.Namespace) -> int:
    if args.llm_delay is None:
        return await run_against(args, "")
    if args.target:
        raise SystemExit("--llm-delay needs the script's own server (no --target)")
    from tests.fake_openai import FakeOpenAI, Reply, candidates_first

    def model(body: dict[str, Any], n: int) -> Reply:
        reply = candidates_first(body, n)
        reply.delay = args.llm_delay
        return reply

    with FakeOpenAI(model) as fake:
        status = await run_against(args, fake.base_url)
        print(f"model calls       {len(fake.log)}")
        return status


async def run_against(args: argparse.Namespace, llm_url: str) -> int:
    own: OwnServer | None = None
    if args.target:
        target = args.target
    else:
        extra = ["--max-in-flight", str(args.max_in_flight), "--grace", str(args.grace)]
        own = OwnServer(extra, llm_url)
        target = f"127.0.0.1:{own.port}"
    requests = example_requests()
    if args.mode == "deterministic":
        for r in requests:
            r.options.mode = pb.MODE_DETERMINISTIC
    channel = grpc.aio.insecure_channel(target)
    stub = tracer_pb2_grpc.SourceTracerStub(channel)
    results: list[tuple[str, str, float]] = []
    t_start = time.monotonic()
    stop_at = t_start + args.duration
    tasks = [asyncio.create_task(client(stub, requests, stop_at, args.timeout, results, i))
             for i in range(args.clients)]
    if args.sigterm_after is not None:
        if own is None:
            raise SystemExit("--sigterm-after needs the script's own server (no --target)")
        await asyncio.sleep(args.sigterm_after)
        own.proc.send_signal(signal.SIGTERM)
        t_sig = time.monotonic()
    await asyncio.gather(*tasks)
    elapsed = time.monotonic() - t_start
    await channel.close()

    codes = Counter(code for _, code, _ in results)
    ok = sorted(lat for _, code, lat in results if code == "OK")
    print(f"target            {target}")
    print(f"clients           {args.clients}")
    print(f"duration          {elapsed:.1f} s")
    print(f"calls             {len(results)}")
    print(f"ok                {codes.get('OK', 0)}")
    print(f"throughput        {len(ok) / elapsed:.1f} ok calls/s")
    print(f"latency p50       {pct(ok, 0.50) * 1000:.1f} ms")
    print(f"latency p95       {pct(ok, 0.95) * 1000:.1f} ms")
    print(f"latency p99       {pct(ok, 0.99) * 1000:.1f} ms")
    errors = {c: n for c, n in codes.items() if c != "OK"}
    detail = dict(sorted(errors.items())) if errors else ""
    print(f"errors            {sum(errors.values())} {detail}".rstrip())

    status = 0
    if own is not None:
        if args.sigterm_after is None:
            own.proc.send_signal(signal.SIGTERM)
        rc = own.proc.wait(args.grace + 30)
        own.reader.join(5)
        print(f"server exit code  {rc}")
        status |= rc != 0
        if args.sigterm_after is not None:
            status |= drain_report(own, results, t_sig)
    if args.sigterm_after is None and errors:
        status = 1
    return int(status)


def drain_report(own: OwnServer, results: list[tuple[str, str, float]], t_sig: float) -> int:
    """Every call the server accepted (it logs one "trace" event per accepted call) must be OK
    on both sides; anything else the client saw must be a refusal (UNAVAILABLE) it never accepted."""
    accepted = {e["request_id"]: e["code"] for e in own.logs if e.get("event") == "trace"}
    client_codes = {rid: code for rid, code, _ in results}
    lost = [rid for rid, code in accepted.items() if code != "OK" or client_codes.get(rid) != "OK"]
    refused = Counter(code for rid, code in client_codes.items() if rid not in accepted)
    drain = next((e for e in own.logs if e.get("event") == "draining"), {})
    stopped = next((e for e in own.logs if e.get("event") == "stopped"), {})
    print(f"in flight at SIGTERM  {drain.get('in_flight')}")
    print(f"drain time        {stopped.get('drain_ms')} ms")
    print(f"accepted calls    {len(accepted)}  (all answered OK: {not lost})")
    # Never reached the servicer: refused by the draining server (UNAVAILABLE), or caught by
    # the transport closing at the end of the drain (the client saw a failure, no work was done).
    print(f"refused calls     {sum(refused.values())} {dict(sorted(refused.items()))}")
    if lost:
        print(f"LOST accepted calls: {len(lost)}, e.g. {lost[:5]}")
        return 1
    print("drain check       every accepted call completed OK")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clients", type=int, default=64)
    p.add_argument("--duration", type=float, default=20.0, help="seconds the clients keep calling")
    p.add_argument("--target", help="HOST:PORT of a running server (default: start one)")
    p.add_argument("--timeout", type=float, default=60.0, help="per-call deadline, seconds")
    p.add_argument("--max-in-flight", type=int, default=128, help="for the server this script starts")
    p.add_argument("--grace", type=float, default=60.0, help="drain grace of the server this script starts")
    p.add_argument("--sigterm-after", type=float,
                   help="SIGTERM the server after S seconds and verify the drain")
    p.add_argument("--llm-delay", type=float,
                   help="give the server this script starts a fake LLM answering after S seconds")
    p.add_argument("--mode", choices=("auto", "deterministic"), default="auto",
                   help="the requests' options.mode (default: auto, the server's default engine)")
    args = p.parse_args()
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
