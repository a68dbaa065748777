"""scripts/bench-bulk: reports/s of `source-tracer bulk` per engine (docs/bulk.md).

Builds N cases by cycling the benchmark split's cases (read at run time, written to a temp
dir, never into the repo), runs each engine as a user would (the CLI in a subprocess, wall
time including start-up), and checks every run's output against the first one."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdata import DEFAULT_BENCH, require_bench  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable


def build_input(bench: Path, n: int, dest: Path) -> None:
    cases = [json.loads(line) for line in require_bench(bench).read_text(encoding="utf-8").splitlines()
             if line.strip()]
    with dest.open("w", encoding="utf-8") as fh:
        for i in range(n):
            c = cases[i % len(cases)]
            fh.write(json.dumps({"id": f"{c['id']}#{i // len(cases)}", "report": c["report"],
                                 "records": c["records"]}, ensure_ascii=False) + "\n")


class Service:
    """`source-tracer serve --port 0`; the port comes from its `serving` log line."""

    def __init__(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCE_TRACER_")}
        self.proc = subprocess.Popen([PY, "-m", "server.cli", "serve", "--port", "0"], cwd=ROOT, env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert self.proc.stderr is not None
        self.address = ""
        for line in self.proc.stderr:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("event") == "serving":
                self.address = f"127.0.0.1:{entry['port']}"
                break
        if not self.address:
            raise SystemExit("bench-bulk: a service did not start")
        # keep draining its log so it never blocks on a full pipe
        import threading

        threading.Thread(target=lambda: [None for _ in self.proc.stderr or ()], daemon=True).start()

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()


REPEAT = 1


def run_bulk(inp: Path, out: Path, *extra: str) -> float:
    return min(_run_bulk_once(inp, out, *extra) for _ in range(REPEAT))


def _run_bulk_once(inp: Path, out: Path, *extra: str) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCE_TRACER_")}
    t0 = time.perf_counter()
    r = subprocess.run([PY, "-m", "server.cli", "bulk", str(inp), str(out), "--overwrite",
                        "--progress", "none", *extra], cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"bench-bulk: bulk {' '.join(extra)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return wall


def comparable(path: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        stats = obj.pop("stats", {}) or {}
        stats.pop("stage_ms", None)
        stats.pop("total_ms", None)
        obj["stats"] = stats
        out[obj["id"]] = obj
    return out


def main() -> int:
    ap = argparse.ArgumentParser(prog="scripts/bench-bulk")
    ap.add_argument("bench", nargs="?", type=Path, default=DEFAULT_BENCH)
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--only", default="local1,local2,service1,fanout,ray")
    ap.add_argument("--repeat", type=int, default=1, help="runs per engine; the fastest counts (noisy hosts)")
    args = ap.parse_args()
    global REPEAT
    REPEAT = max(1, args.repeat)
    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    rows: list[tuple[str, float, str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-bulk-") as tmp:
        tdir = Path(tmp)
        inp = tdir / "in.jsonl"
        build_input(args.bench, args.cases, inp)
        reference: dict[str, Any] | None = None
        print(f"bench-bulk: {args.cases} cases cycled from {args.bench} ({os.cpu_count()} CPUs, "
              f"load average {os.getloadavg()[0]:.2f}, best of {REPEAT})", flush=True)
        for name in wanted:
            out = tdir / f"{name}.jsonl"
            services: list[Service] = []
            try:
                if name == "local1":
                    label, wall = "local, 1 worker", run_bulk(inp, out, "--workers", "1")
                elif name == "local2":
                    label, wall = "local, 2 workers", run_bulk(inp, out, "--workers", "2")
                elif name == "service1":
                    services = [Service()]
                    label, wall = "one service (worker processes)", run_bulk(
                        inp, out, "--server", services[0].address)
                elif name == "fanout":
                    services = [Service(), Service()]
                    targets = ",".join(s.address for s in services)
                    label, wall = "fan-out, 2 services", run_bulk(inp, out, "--server", targets)
                elif name == "ray":
                    label, wall = "ray local, 2 CPUs", run_bulk(inp, out, "--engine", "ray", "--workers", "2")
                else:
                    raise SystemExit(f"bench-bulk: unknown engine {name!r}")
            finally:
                for s in services:
                    s.close()
            got = comparable(out)
            if reference is None:
                reference, same = got, "reference"
            else:
                equal = sum(1 for k, v in got.items() if reference.get(k) == v)
                same = f"{equal}/{len(reference)} identical"
            rows.append((label, wall, same))
            print(f"  {label}: {args.cases / wall:.1f} reports/s", flush=True)
    print()
    print("| engine | wall s | reports/s | output vs first run |")
    print("|---|---:|---:|---|")
    for label, wall, same in rows:
        print(f"| {label} | {wall:.1f} | {args.cases / wall:.1f} | {same} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
