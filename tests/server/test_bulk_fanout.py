"""`bulk --server`: fan-out to two real `source-tracer serve` subprocesses over TraceStream,
compared with the local engine; the default window follows what a server says it can take."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bulk_cases import comparable, read_out, write_cases
from conftest import InProcessServer, SubprocessServer, base_config
from test_bulk import bulk, by_id

from tracer.pipeline import trace


@pytest.fixture(scope="module")
def servers() -> Iterator[list[SubprocessServer]]:
    started = [SubprocessServer(), SubprocessServer()]
    yield started
    for srv in started:
        srv.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_fanout_matches_local_engine(tmp_path: Path, servers: list[SubprocessServer]) -> None:
    bad = [json.dumps({"id": "no-report"}),
           json.dumps({"id": "too-many", "report": "x.", "options": {"max_sources": 0}})]
    ids = write_cases(tmp_path / "in.jsonl", 20, extra=bad, every=7)
    targets = ",".join(s.address for s in servers)
    remote = bulk(tmp_path / "in.jsonl", tmp_path / "remote.jsonl", "--server", targets, "--window", "3")
    local = bulk(tmp_path / "in.jsonl", tmp_path / "local.jsonl", "--workers", "1")
    assert remote.returncode == 0 and local.returncode == 0, remote.stderr + local.stderr
    r = {k: comparable(v) for k, v in by_id(read_out(tmp_path / "remote.jsonl")).items()}
    lo = {k: comparable(v) for k, v in by_id(read_out(tmp_path / "local.jsonl")).items()}
    assert set(r) == set(ids) | {"no-report", "too-many"}
    assert r == lo
    assert all(r[i]["stats"]["cited_sentences"] == 2 for i in ids)


def test_fanout_ordered_writes_input_order(tmp_path: Path, servers: list[SubprocessServer]) -> None:
    bad = [json.dumps({"id": "no-report"})]
    ids = write_cases(tmp_path / "in.jsonl", 16, extra=bad, every=5)
    targets = ",".join(s.address for s in servers)
    r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--server", targets, "--window", "4", "--ordered")
    assert r.returncode == 0, r.stderr
    order = [json.loads(line)["id"] for line in (tmp_path / "in.jsonl").read_text().splitlines() if line]
    assert [ln["id"] for ln in read_out(tmp_path / "out.jsonl")] == order
    assert set(order) == set(ids) | {"no-report"}


def test_server_side_errors_become_error_lines(tmp_path: Path, servers: list[SubprocessServer]) -> None:
    # a record over the service's per-record limit is rejected by the server for that item only
    (tmp_path / "in.jsonl").write_text("\n".join([
        json.dumps({"id": "ok", "report": "Water boils at 100 degrees Celsius at sea level.",
                    "records": [{"url": "https://w.example", "title": "W",
                                 "content": "Water boils at 100 degrees Celsius at sea level."}]}),
        json.dumps({"id": "huge", "report": "Short.", "records": [
            {"url": "https://h.example", "title": "H", "content": "a" * 2_000_001}]}),
    ]) + "\n")
    r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--server", servers[0].address)
    assert r.returncode == 0, r.stderr
    got = by_id(read_out(tmp_path / "out.jsonl"))
    assert got["huge"]["error"]["code"] == "RESOURCE_EXHAUSTED"
    assert "records[0].content" in got["huge"]["error"]["message"] and got["huge"]["error"]["line"] == 2
    assert "[1]" in got["ok"]["report"]


def test_an_item_over_the_servers_message_size_is_an_error_line_and_the_run_goes_on(tmp_path: Path) -> None:
    """gRPC ends a whole stream on a message over its size limit: the item the server would
    refuse so is answered with an error line and never sent, and the run finishes (it stopped
    with 'every server failed', and --resume could never get past the item)."""
    fact = "Water boils at 100 degrees Celsius at sea level."
    ok = {"report": fact, "records": [{"url": "https://w.example", "title": "W", "content": fact}]}
    (tmp_path / "in.jsonl").write_text("\n".join([
        json.dumps({"id": "a", **ok}),
        json.dumps({"id": "big", "report": "Short.", "records": [
            {"url": "https://h.example", "title": "H", "content": "a" * 1_500_000}]}),
        *(json.dumps({"id": f"r{i}", **ok}) for i in range(4)),
    ]) + "\n")
    srv = InProcessServer(base_config(max_message_bytes=1 << 20))
    try:
        r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--server", srv.address, "--window", "2")
    finally:
        srv.close()
    assert r.returncode == 0, r.stderr
    got = by_id(read_out(tmp_path / "out.jsonl"))
    assert sorted(got) == sorted(["a", "big", "r0", "r1", "r2", "r3"])
    assert got["big"]["error"]["code"] == "RESOURCE_EXHAUSTED" and got["big"]["error"]["line"] == 2
    assert "max message size of 1048576 bytes" in got["big"]["error"]["message"]
    assert all("[1]" in got[i]["report"] for i in ("a", "r0", "r1", "r2", "r3"))


def test_a_dead_server_leaves_the_work_to_the_live_one(tmp_path: Path,
                                                        servers: list[SubprocessServer]) -> None:
    ids = write_cases(tmp_path / "in.jsonl", 8)
    targets = f"127.0.0.1:{_free_port()},{servers[1].address}"
    r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--server", targets)
    assert r.returncode == 0, r.stderr
    assert sorted(by_id(read_out(tmp_path / "out.jsonl"))) == sorted(ids)


def test_all_servers_down_stops_resumably(tmp_path: Path) -> None:
    write_cases(tmp_path / "in.jsonl", 3)
    r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--server", f"127.0.0.1:{_free_port()}")
    assert r.returncode == 1
    assert "every server failed" in r.stderr and "--resume" in r.stderr
    assert "no server answered a single item" in r.stderr and "--server-tls-ca" in r.stderr
    assert read_out(tmp_path / "out.jsonl") == []


def test_a_server_that_refuses_the_token_stops_the_run_saying_what_to_fix(tmp_path: Path) -> None:
    """UNAUTHENTICATED is no outage: the run stops at once (exit 2, nothing written) and says to
    fix the token before resuming, instead of only "rerun with --resume"."""
    write_cases(tmp_path / "in.jsonl", 3)
    srv = InProcessServer(base_config(auth_token="right-token"))
    try:
        r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--server", srv.address,
                 "--auth-token", "wrong-token")
    finally:
        srv.close()
    assert r.returncode == 2, r.stderr
    assert "refused the run" in r.stderr and "UNAUTHENTICATED" in r.stderr and "--auth-token" in r.stderr
    assert read_out(tmp_path / "out.jsonl") == []


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGTERM"])
def test_a_server_killed_mid_run_hands_its_items_to_the_other(tmp_path: Path, sig: str) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from test_bulk import REPO

    ids = write_cases(tmp_path / "in.jsonl", 150)
    victim, survivor = SubprocessServer(), SubprocessServer()
    out = tmp_path / "out.jsonl"
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCE_TRACER_")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "server.cli", "bulk", str(tmp_path / "in.jsonl"), str(out),
             "--server", f"{victim.address},{survivor.address}", "--window", "4"],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not out.exists() or out.read_bytes().count(b"\n") < 20):
            time.sleep(0.01)
        assert proc.poll() is None and out.read_bytes().count(b"\n") < 150, "finished before the kill"
        victim.terminate(getattr(signal, sig))  # SIGTERM: the service drains, then cancels
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
    finally:
        victim.close()
        survivor.close()
    got = by_id(read_out(out))  # asserts no id twice
    assert sorted(got) == sorted(ids)
    assert all("error" not in line for line in got.values())


class _Peak:
    """A trace function (threads only) that holds each trace 0.2 s and records the most traces
    running at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = self.peak = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
        try:
            time.sleep(0.2)
            return trace(*args, **kwargs)
        finally:
            with self.lock:
                self.running -= 1


@pytest.mark.parametrize(("window", "peak"), [((), 12), (("--window", "5"), 5)])
def test_the_default_window_keeps_a_big_server_busy(
    tmp_path: Path, window: tuple[str, ...], peak: int
) -> None:
    # A server working on 12 items of a stream at once advertises it; bulk's default window
    # (8 per server) then widens to 24, and an explicit --window is kept.
    held = _Peak()
    srv = InProcessServer(base_config(workers=12, worker_mode="thread", stream_concurrency=12), trace_fn=held)
    try:
        write_cases(tmp_path / "in.jsonl", 36)
        r = bulk(tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--server", srv.address, *window)
        assert r.returncode == 0, r.stderr
        assert len(read_out(tmp_path / "out.jsonl")) == 36
        assert held.peak == peak
    finally:
        srv.close()


def test_a_broken_stream_loses_no_item_its_sender_was_waiting_for() -> None:
    """gRPC reads a stream's requests on its own thread, which may be waiting for an item when
    the call breaks. The item it takes after the lane took the stream's items back must go back
    to the queue: gRPC drops it unsent, and the run would wait for its answer forever."""
    import itertools
    from concurrent import futures

    import grpc

    from server.bulk import Item, run_servers
    from server.pb.source_tracer.v1 import tracer_pb2 as pb
    from server.pb.source_tracer.v1 import tracer_pb2_grpc

    calls = itertools.count()

    class BreaksFirstStream(tracer_pb2_grpc.SourceTracerServicer):
        def TraceStream(self, requests: Any, context: Any) -> Any:  # noqa: N802 (gRPC's name)
            first = next(calls) == 0
            for i, req in enumerate(requests):
                yield pb.TraceResponse(id=req.id, report="ok")
                if first and i == 2:
                    context.abort(grpc.StatusCode.UNAVAILABLE, "restarting")

    fake = grpc.server(futures.ThreadPoolExecutor(8))
    tracer_pb2_grpc.add_SourceTracerServicer_to_server(BreaksFirstStream(), fake)
    port = fake.add_insecure_port("127.0.0.1:0")
    fake.start()

    def items() -> Iterator[Item]:  # fed slowly: the stream has free slots and waits for work
        for i in range(20):
            yield Item(i + 1, f"i{i}", pb.TraceRequest(id=f"i{i}", report="x").SerializeToString())
            time.sleep(0.03)

    got: list[int] = []
    runner = threading.Thread(target=run_servers, args=(items(), lambda n, _line, _ok: got.append(n)),
                              kwargs={"targets": [f"127.0.0.1:{port}"], "shape": "source-tracer",
                                      "window": 8}, daemon=True)
    try:
        runner.start()
        runner.join(30)
        assert not runner.is_alive(), f"hung with {sorted(set(range(1, 21)) - set(got))} unanswered"
        assert sorted(got) == list(range(1, 21))
    finally:
        fake.stop(0)


def test_an_output_that_cannot_be_written_stops_the_run_as_such_not_as_a_server_failure(
        tmp_path: Path, servers: list[SubprocessServer]) -> None:
    """A full disk (/dev/full) is no server's fault: the run stops resumably naming OUT."""
    write_cases(tmp_path / "in.jsonl", 3)
    r = bulk(tmp_path / "in.jsonl", "/dev/full", "--server", servers[0].address)
    assert r.returncode == 1, r.stderr
    # a device, not a file: nothing to resume, so no --resume advice
    assert "cannot write /dev/full: No space left on device" in r.stderr
    assert "run again for the rest" in r.stderr
    assert "every server failed" not in r.stderr and "Traceback" not in r.stderr
