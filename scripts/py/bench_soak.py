"""Memory of a running service under mixed traffic: prints numbers; asserts nothing.

Starts `source-tracer serve` on a free port and, for each round, sends one large request (a
50-sentence report against `--records` records of about `--chars` characters each, sentences of the
benchmark's English records in a new random order every round) beside every benchmark case, two
calls at a time. After each round it prints the resident size (VmRSS) of the server and of each
process under it (multiprocessing's forkserver and resource tracker, the worker processes).
Then it stops the server with SIGTERM and prints its exit code. docs/operations.md, "Memory after
large requests", has what it measured.

    scripts/bench-soak [BENCH.jsonl] [--rounds 6] [--records 40] [--chars 200000] [--mode auto]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchdata import DEFAULT_BENCH, load_cases  # noqa: E402

from server.pb.source_tracer.v1 import tracer_pb2 as pb  # noqa: E402
from server.pb.source_tracer.v1 import tracer_pb2_grpc  # noqa: E402


def _rss_mb(pid: int) -> int | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    return int(status.split("VmRSS:")[1].split()[0]) // 1024


def _cmd(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def _role(pid: int, server: int) -> str:
    """A worker process is forked from the forkserver, whose command line it keeps."""
    if pid == server:
        return "server"
    if "resource_tracker" in _cmd(pid):
        return "resource-tracker"
    if "forkserver" in _cmd(pid) and _parent(pid) == server:
        return "forkserver"
    return "worker"


def _descendants(pid: int) -> list[int]:
    out: list[int] = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _parent(int(entry.name)) == pid:
            out += [int(entry.name), *_descendants(int(entry.name))]
    return out


def _large(sentences: list[str], seed: int, records: int, chars: int) -> pb.TraceRequest:
    rnd = random.Random(seed)
    recs = []
    for i in range(records):
        picked: list[str] = []
        size = 0
        while size < chars:
            picked.append(rnd.choice(sentences))
            size += len(picked[-1]) + 2
        recs.append(pb.Record(url=f"https://soak.example/{seed}/{i}", title=f"Soak {i}",
                              content=". ".join(picked)))
    report = "\n\n".join(rnd.choice(sentences).strip() + "." for _ in range(50))
    return pb.TraceRequest(report=report, records=recs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench", nargs="?", type=Path, default=DEFAULT_BENCH)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--records", type=int, default=40, help="records of the large request")
    ap.add_argument("--chars", type=int, default=200_000, help="characters of each of its records")
    ap.add_argument("--mode", default="auto", choices=("auto", "process", "thread"),
                    help="the server's worker mode")
    args = ap.parse_args()
    cases = load_cases(args.bench)
    sentences = [s for c in cases if c.get("lang") == "en" for r in c["records"]
                 for s in r["content"].split(". ") if len(s) > 40]
    requests = [pb.TraceRequest(report=c["report"], records=[
        pb.Record(url=r["url"], title=r.get("title") or "", content=r["content"]) for r in c["records"]])
        for c in cases]

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCE_TRACER_")}
    env["SOURCE_TRACER_WORKER_MODE"] = args.mode
    server = subprocess.Popen([sys.executable, "-m", "server.cli", "serve", "--port", str(port)],
                              cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    big = 64 * 1024 * 1024
    channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=[
        ("grpc.max_send_message_length", big), ("grpc.max_receive_message_length", big)])
    try:
        grpc.channel_ready_future(channel).result(timeout=60)
        stub = tracer_pb2_grpc.SourceTracerStub(channel)
        stub.Trace(requests[0], timeout=120)
        print(f"mode={args.mode} cases={len(requests)} large request: {args.records} records x "
              f"{args.chars:,} chars")
        with ThreadPoolExecutor(2) as pool:
            for rnd in range(args.rounds):
                t0 = time.perf_counter()
                large = pool.submit(stub.Trace, _large(sentences, rnd, args.records, args.chars), timeout=600)
                small = [pool.submit(stub.Trace, r, timeout=300) for r in requests]
                large.result()
                for f in small:
                    f.result()
                time.sleep(1.0)
                procs = [server.pid, *_descendants(server.pid)]
                sizes = ((p, _rss_mb(p)) for p in procs)
                rss = ", ".join(f"{_role(p, server.pid)} {mb}" for p, mb in sizes if mb is not None)
                print(f"round {rnd + 1}: {time.perf_counter() - t0:5.1f} s; RSS MB: {rss}", flush=True)
    finally:
        channel.close()
        server.send_signal(signal.SIGTERM)
        code = server.wait(60)
    print(f"server exit code after SIGTERM: {code}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
