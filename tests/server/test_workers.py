"""Traces in worker processes: concurrent calls run in separate processes; deadlines, client
cancellation, crashes and bugs inside a worker are handled like in threads; the default
("auto") keeps one trace at a time in the server process and sends the rest to workers; with an
LLM backend, traces that call the model run in threads of their own; a killed server leaves
no worker behind."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

import tracer
from server.llm_client import LLMConfig, backend_from_config
from server.pb.source_tracer.v1 import tracer_pb2 as pb
from server.workers import GC_GEN0_THRESHOLD
from tests.fake_openai import FakeOpenAI, candidates_first
from tests.server.conftest import (
    EN_RECORDS,
    EN_REPORT,
    InProcessServer,
    SubprocessServer,
    base_config,
    records_pb,
    wait_until,
)
from tests.server.worker_fns import scripted_trace
from tracer.errors import InvalidInputError, LimitExceededError
from tracer.llm import LLMSettings


@pytest.fixture(scope="module")
def procs() -> Iterator[InProcessServer]:
    srv = InProcessServer(base_config(workers=2, worker_mode="process"), trace_fn=scripted_trace)
    yield srv
    srv.close()


def _request(first_line: str, rid: str = "") -> pb.TraceRequest:
    return pb.TraceRequest(id=rid, report=f"{first_line}\n\n{EN_REPORT}", records=records_pb(EN_RECORDS))


def _pid(response: pb.TraceResponse) -> int:
    assert response.warnings[-1].startswith("pid=")
    return int(response.warnings[-1][4:])


@pytest.fixture(scope="module")
def hybrid() -> Iterator[InProcessServer]:
    srv = InProcessServer(base_config(workers=2), trace_fn=scripted_trace)
    yield srv
    srv.close()


def test_auto_runs_one_call_at_a_time_here_and_concurrent_ones_in_workers(hybrid, tmp_path: Path) -> None:
    assert hybrid.running.workers.mode == "auto"
    gauge = hybrid.running.metrics.registry.get_sample_value
    assert [gauge("source_tracer_workers", {"kind": k}) for k in ("thread", "process")] == [1, 1]
    assert gauge("source_tracer_build_info", {"version": tracer.__version__}) == 1
    stub = hybrid.stub()
    alone = [_pid(stub.Trace(_request("#!pid"), timeout=30)) for _ in range(3)]
    assert alone == [os.getpid()] * 3, "sequential calls stay in the server process"
    calls = [stub.Trace.future(_request(f"#!barrier {tmp_path} 2"), timeout=60) for _ in range(2)]
    pids = {_pid(c.result()) for c in calls}
    assert len(pids) == 2 and os.getpid() in pids, "the second call ran in a worker process"


def test_auto_gives_a_waiting_call_to_the_first_lane_that_frees(hybrid) -> None:
    """Both lanes busy, a third call waits for whichever frees first: the server's thread, after
    a short trace, while the worker process still runs a long one. It used to go to the worker
    process at once and wait behind the long trace."""
    stub = hybrid.stub()
    short = stub.Trace.future(_request("#!sleep 1.0"), timeout=60)   # the thread
    wait_until(lambda: hybrid.service.in_flight == 1, what="the short call in flight")
    long = stub.Trace.future(_request("#!sleep 8.0"), timeout=60)    # the worker process
    wait_until(lambda: hybrid.service.in_flight == 2, what="the long call in flight")
    third = stub.Trace.future(_request("#!pid"), timeout=60)
    assert _pid(third.result()) == os.getpid(), "it ran in the server's thread once that was free"
    assert not long.done(), "…while the long trace still ran in the worker process"
    assert _pid(short.result()) == os.getpid() != _pid(long.result())


def test_concurrent_calls_run_in_separate_worker_processes(procs, tmp_path: Path) -> None:
    stub = procs.stub()
    calls = [stub.Trace.future(_request(f"#!barrier {tmp_path} 2"), timeout=60) for _ in range(2)]
    responses = [c.result() for c in calls]
    pids = {_pid(r) for r in responses}
    assert len(pids) == 2, "both calls waited at the barrier at once, in two processes"
    assert os.getpid() not in pids
    for r in responses:
        assert r.citations, "the real pipeline ran in the worker"


def test_deadline_reaches_the_worker_process(procs, tmp_path: Path) -> None:
    with pytest.raises(grpc.RpcError) as err:
        procs.stub().Trace(_request(f"#!wait-cancel {tmp_path}"), timeout=0.5)
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    wait_until(lambda: (tmp_path / "cancelled").exists(), what="the worker to see the cancel flag")
    wait_until(lambda: procs.service.in_flight == 0, what="slot released")


def test_client_cancel_reaches_the_worker_process(procs, tmp_path: Path) -> None:
    fut = procs.stub().Trace.future(_request(f"#!wait-cancel {tmp_path}"))
    wait_until(lambda: procs.service.in_flight == 1, what="the call in flight")
    fut.cancel()
    wait_until(lambda: (tmp_path / "cancelled").exists(), what="the worker to see the cancel flag")
    wait_until(lambda: procs.service.in_flight == 0, what="slot released")


def test_a_cancelled_call_holds_its_slot_until_the_worker_process_has_stopped(procs, tmp_path: Path) -> None:
    fut = procs.stub().Trace.future(_request(f"#!wait-cancel-slow {tmp_path}"))
    wait_until(lambda: procs.service.in_flight == 1, what="the call in flight")
    fut.cancel()
    wait_until(lambda: (tmp_path / "cancelled").exists(), what="the worker to see the cancel flag")
    assert procs.service.in_flight == 1, "the worker is still running: the slot stays taken"
    wait_until(lambda: (tmp_path / "stopped").exists(), what="the worker to stop")
    wait_until(lambda: procs.service.in_flight == 0, what="slot released")


def test_a_bug_in_a_worker_is_internal_and_the_pool_survives(procs) -> None:
    stub = procs.stub()
    with pytest.raises(grpc.RpcError) as err:
        stub.Trace(_request("#!bug"), metadata=(("x-request-id", "bug-7"),), timeout=30)
    assert err.value.code() == grpc.StatusCode.INTERNAL
    assert err.value.details() == "internal error (request id bug-7)"
    assert stub.Trace(_request("#!pid"), timeout=30).citations


def test_a_core_error_raised_in_a_worker_keeps_its_status(procs) -> None:
    req = _request("#!pid")
    req.options.max_sources = 99
    with pytest.raises(grpc.RpcError) as err:
        procs.stub().Trace(req, timeout=30)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "options.max_sources" in err.value.details()


def test_a_crashed_worker_fails_only_its_call_and_is_replaced(procs) -> None:
    stub = procs.stub()
    before = _pid(stub.Trace(_request("#!pid"), timeout=30))
    with pytest.raises(grpc.RpcError) as err:
        stub.Trace(_request("#!crash"), metadata=(("x-request-id", "crash-1"),), timeout=30)
    assert err.value.code() == grpc.StatusCode.INTERNAL
    assert "worker process running this trace died" in err.value.details()
    assert "crash-1" in err.value.details()
    assert procs.running.metrics.registry.get_sample_value("source_tracer_worker_crashes_total") == 1
    # the new pool's processes were all started with it, before the next call (white box: the
    # number the pool has started, which a later `submit` would otherwise add to)
    assert len(procs.running.workers._pool._processes) == procs.running.workers.size
    after = [_pid(stub.Trace(_request("#!pid"), timeout=60)) for _ in range(3)]
    assert before not in after, "the pool was rebuilt with new processes"
    wait_until(lambda: procs.service.in_flight == 0, what="slots released")


def test_a_worker_killed_from_outside_costs_no_call(procs, tmp_path: Path) -> None:
    """A dead worker breaks the whole pool: the calls on it, its own included, are tried once
    more on the rebuilt pool, so a worker the OOM killer took fails no call."""
    stub = procs.stub()
    crashes = procs.running.metrics.registry.get_sample_value("source_tracer_worker_crashes_total") or 0.0
    other = stub.Trace.future(_request("#!sleep 1.5"), timeout=60)  # busy on the other worker
    wait_until(lambda: procs.service.in_flight == 1, what="the first call in flight")
    killed = stub.Trace(_request(f"#!crash-once {tmp_path}"), timeout=60)
    assert (tmp_path / "crashed").exists() and killed.citations
    assert other.result().citations
    registry = procs.running.metrics.registry
    assert (registry.get_sample_value("source_tracer_worker_crashes_total") or 0.0) == crashes
    wait_until(lambda: procs.service.in_flight == 0, what="slots released")


def test_worker_processes_tune_their_collector_after_loading(procs) -> None:
    response = procs.stub().Trace(_request("#!gc"), timeout=60)
    *_, pid, collector = response.warnings
    gen0, frozen = (int(x) for x in collector.removeprefix("gc=").split(","))
    assert int(pid.removeprefix("pid=")) != os.getpid()  # measured in a worker process
    assert gen0 == GC_GEN0_THRESHOLD and frozen > 10_000  # the pipeline's modules and caches


def test_tune_gc_freezes_what_is_loaded_and_raises_gen0_only() -> None:
    import json
    import subprocess
    import sys

    from tests.server.conftest import REPO

    code = ("import gc, json; from server.workers import tune_gc; before = gc.get_threshold(); tune_gc(); "
            "print(json.dumps([before, gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()])); "
            "gc.set_threshold(0, 7, 7); tune_gc(); print(json.dumps(gc.get_threshold()))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    first, second = (json.loads(line) for line in out.stdout.splitlines())
    before, after, frozen, enabled = first
    assert before[0] < GC_GEN0_THRESHOLD  # CPython's default (700 on 3.11)
    assert after == [GC_GEN0_THRESHOLD, before[1], before[2]]  # only the youngest generation moves
    assert frozen > 1000 and enabled
    assert second == [0, 7, 7]  # a collector switched off (threshold 0) stays off


def test_process_mode_refuses_a_trace_function_that_cannot_cross_processes() -> None:
    from server.config import ConfigError

    with pytest.raises(ConfigError, match="module-level trace function"):
        InProcessServer(base_config(worker_mode="process"), trace_fn=lambda *a, **k: None)


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.add(child)
            todo.append(child)
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def test_a_killed_server_leaves_no_worker_processes() -> None:
    srv = SubprocessServer("--worker-mode", "process", "--workers", "2")
    helpers = _descendants(srv.proc.pid)
    assert len(helpers) >= 2, "the worker processes (and multiprocessing's helpers) are running"
    srv.proc.send_signal(signal.SIGKILL)
    srv.proc.wait(10)
    wait_until(lambda: not any(_alive(p) for p in helpers), timeout=20, what="every worker to exit")


@pytest.mark.parametrize("exc", [
    InvalidInputError("options.style", "unknown style 'x'"),
    LimitExceededError("records", 10, 11),
])
def test_core_errors_survive_the_trip_back_from_a_worker(exc: Exception) -> None:
    import pickle

    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is type(exc) and str(back) == str(exc) and back.field == exc.field


@pytest.mark.parametrize(("files", "expected_cap"), [
    ({"cpu.max": "150000 100000\n"}, 2),                  # cgroup v2, 1.5 CPUs -> 2
    ({"cpu.max": "max 100000\n"}, None),                  # v2, no limit
    ({"cpu/cpu.cfs_quota_us": "100000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1),  # v1
    ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),   # v1, none
    ({}, None),
])
def test_default_worker_count_respects_a_container_cpu_limit(
    tmp_path: Path, files: dict[str, str], expected_cap: int | None
) -> None:
    from server.workers import available_cpus

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    mask = len(os.sched_getaffinity(0))
    assert available_cpus(tmp_path) == (mask if expected_cap is None else min(mask, expected_cap))


def test_auto_falls_back_to_threads_when_worker_processes_cannot_start() -> None:
    from tests.server.worker_fns_unloadable import plain_trace

    srv = InProcessServer(base_config(workers=2), trace_fn=plain_trace)
    try:
        assert srv.running.workers.mode == "thread"
        gauge = srv.running.metrics.registry.get_sample_value
        assert [gauge("source_tracer_workers", {"kind": k}) for k in ("thread", "process")] == [2, 0]
        assert srv.stub().Trace(_request("#!pid"), timeout=30).citations
    finally:
        srv.close()


def test_explicit_process_mode_fails_to_start_when_workers_cannot() -> None:
    from server.app import StartupError
    from tests.server.worker_fns_unloadable import plain_trace

    with pytest.raises(StartupError, match="worker processes could not start"):
        InProcessServer(base_config(workers=2, worker_mode="process"), trace_fn=plain_trace)


def test_workers_that_cannot_start_break_the_pool_without_a_thread_error(monkeypatch) -> None:
    """The pool breaks in its manager thread; no `submit` may be adding a process meanwhile
    (CPython 3.11: "dictionary changed size during iteration", about one start in three when
    every warm-up call was submitted at once)."""
    import threading

    from server.app import StartupError
    from tests.server.worker_fns_unloadable import plain_trace

    caught: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: caught.append(args.exc_value))
    baseline = threading.active_count()
    for _ in range(20):
        with pytest.raises(StartupError, match="worker processes could not start"):
            InProcessServer(base_config(workers=6, worker_mode="process"), trace_fn=plain_trace)
    wait_until(lambda: caught or threading.active_count() <= baseline, what="the pools' threads to end")
    assert caught == []


@pytest.mark.parametrize(("workers", "stream_concurrency", "expected"), [(6, 0, 6), (2, 0, 4), (6, 3, 3)])
def test_one_stream_can_keep_every_worker_busy(workers: int, stream_concurrency: int, expected: int) -> None:
    config = base_config(workers=workers, worker_mode="thread", stream_concurrency=stream_concurrency)
    srv = InProcessServer(config)
    try:
        assert srv.running.config.stream_concurrency == expected
        assert srv.running.workers.size == workers
    finally:
        srv.close()


def test_a_stop_signal_to_the_whole_process_group_drains_cleanly() -> None:
    """systemd's default KillMode (and `timeout`, and Ctrl-C) signal every process of the group:
    the forkserver and the workers must leave the stop to the server, which drains and exits 0."""
    import json
    import subprocess
    import sys

    from tests.server.conftest import REPO

    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCE_TRACER_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "server.cli", "serve", "--port", "0", "--workers", "2", "--grace", "10"],
        cwd=REPO, env=env, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stderr is not None
        first = json.loads(proc.stderr.readline())
        assert first["event"] == "serving" and first["worker_mode"] == "auto"
        assert first["gc_threshold"][0] == GC_GEN0_THRESHOLD  # the server tuned its own collector
        assert first["version"] == tracer.__version__ != "0+unknown"
        helpers = _descendants(proc.pid)
        assert helpers, "the forkserver and a worker process are running"
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(60) == 0
        rest = proc.stderr.read().splitlines()
        events = [json.loads(line)["event"] for line in rest]  # every line is JSON: no warnings
        assert events[-1] == "stopped"
        wait_until(lambda: not any(_alive(p) for p in helpers), timeout=20, what="every helper to exit")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def test_concurrent_answers_are_the_in_process_answers() -> None:
    """Whatever lane a call takes (the server's thread or a worker process) and whatever ran there
    before, the answer is byte-for-byte what `trace()` gives in process (timings aside)."""
    import json
    from concurrent.futures import ThreadPoolExecutor

    from server.convert import result_to_pb
    from tests.server.conftest import REPO
    from tracer.pipeline import trace

    cases = []
    for lang in ("en", "zh"):
        report = (REPO / "examples" / lang / "report.md").read_text(encoding="utf-8")
        data = json.loads((REPO / "examples" / lang / "records.json").read_text(encoding="utf-8"))
        records = [r for group in data.values() for r in group] if isinstance(data, dict) else data
        records = [{k: r[k] for k in ("url", "title", "content")} for r in records]
        cases += [(report, records), (report, records[::-1]), (report.split("\n\n", 2)[-1], records)]

    def comparable(resp: pb.TraceResponse) -> bytes:
        resp.stats.ClearField("stage_ms")
        resp.stats.ClearField("total_ms")
        return resp.SerializeToString(deterministic=True)

    requests, expected = [], []
    for i, (report, records) in enumerate(cases):
        requests.append(pb.TraceRequest(id=f"c{i}", report=report, records=[pb.Record(**r) for r in records]))
        expected.append(comparable(result_to_pb(trace(report, records), f"c{i}")))
    srv = InProcessServer(base_config(workers=3))
    try:
        stub = srv.stub()
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(lambda r: stub.Trace(r, timeout=60), requests * 4))
    finally:
        srv.close()
    assert [comparable(r) for r in got] == expected * 4


@pytest.fixture()
def llm_server() -> Iterator[tuple[FakeOpenAI, InProcessServer]]:
    """An auto-mode server with 2 workers and an LLM backend allowing 6 model calls at once."""
    with FakeOpenAI(candidates_first) as model:
        llm = backend_from_config(LLMConfig(base_url=model.base_url, model="m",
                                            settings=LLMSettings(max_concurrency=6, timeout=30.0)))
        srv = InProcessServer(base_config(workers=2), llm=llm, trace_fn=scripted_trace)
        try:
            yield model, srv
        finally:
            srv.close()


def test_with_an_llm_more_traces_than_workers_wait_on_the_model_at_once(llm_server, tmp_path: Path) -> None:
    model, srv = llm_server
    gauge = srv.running.metrics.registry.get_sample_value
    assert [gauge("source_tracer_workers", {"kind": k}) for k in ("thread", "process")] == [1 + 6, 1]
    assert srv.running.config.stream_concurrency == 6, "a stream can keep the model's threads busy"
    stub = srv.stub()
    # Six calls must all be inside a trace at once to pass the barrier before their deadline:
    # with one trace thread per worker (2), four of them would wait and miss it.
    calls = [stub.Trace.future(_request(f"#!barrier {tmp_path} 6"), timeout=15) for _ in range(6)]
    responses = [c.result() for c in calls]
    assert {_pid(r) for r in responses} == {os.getpid()}, "traces that call the model stay here"
    assert all(r.mode == "llm" and not r.degraded and r.citations for r in responses)
    assert len(model.log) >= 6


def test_with_an_llm_deterministic_requests_still_use_worker_processes(llm_server, tmp_path: Path) -> None:
    model, srv = llm_server
    stub = srv.stub()
    reqs = [_request(f"#!barrier {tmp_path} 2") for _ in range(2)]
    for r in reqs:
        r.options.mode = pb.MODE_DETERMINISTIC
    responses = [c.result() for c in [stub.Trace.future(r, timeout=60) for r in reqs]]
    pids = {_pid(r) for r in responses}
    assert len(pids) == 2 and os.getpid() in pids, "the second concurrent call ran in a worker process"
    assert all(r.mode == "deterministic" and r.citations for r in responses)
    assert model.log == [], "the model was not called"


def test_thread_mode_with_an_llm_adds_threads_for_the_model_calls() -> None:
    with FakeOpenAI(candidates_first) as model:
        llm = backend_from_config(LLMConfig(base_url=model.base_url, model="m",
                                            settings=LLMSettings(max_concurrency=5)))
        srv = InProcessServer(base_config(workers=2, worker_mode="thread"), llm=llm)
        try:
            assert srv.running.workers.mode == "thread"
            gauge = srv.running.metrics.registry.get_sample_value
            assert [gauge("source_tracer_workers", {"kind": k}) for k in ("thread", "process")] == [2 + 5, 0]
            resp = srv.stub().Trace(_request(""), timeout=30)
            assert resp.mode == "llm" and resp.citations and model.log
        finally:
            srv.close()


def test_process_mode_with_an_llm_keeps_model_calls_here_and_the_rest_in_workers(tmp_path: Path) -> None:
    with FakeOpenAI(candidates_first) as model:
        llm = backend_from_config(LLMConfig(base_url=model.base_url, model="m",
                                            settings=LLMSettings(max_concurrency=3)))
        srv = InProcessServer(base_config(workers=2, worker_mode="process"), llm=llm, trace_fn=scripted_trace)
        try:
            gauge = srv.running.metrics.registry.get_sample_value
            assert [gauge("source_tracer_workers", {"kind": k}) for k in ("thread", "process")] == [3, 2]
            stub = srv.stub()
            resp = stub.Trace(_request(""), timeout=30)
            assert resp.mode == "llm" and resp.citations and model.log
            assert _pid(resp) == os.getpid(), "the trace calling the model ran beside the backend"
            calls = len(model.log)
            req = _request(f"#!barrier {tmp_path} 2")
            req.options.mode = pb.MODE_DETERMINISTIC
            responses = [c.result() for c in [stub.Trace.future(req, timeout=60) for _ in range(2)]]
            pids = {_pid(r) for r in responses}
            assert len(pids) == 2 and os.getpid() not in pids, "deterministic traces ran in worker processes"
            assert all(r.mode == "deterministic" and r.citations for r in responses)
            assert len(model.log) == calls
        finally:
            srv.close()


def test_a_dead_worker_takes_its_pools_other_workers_with_it_and_is_counted() -> None:
    """The broken pool's other workers ignore SIGTERM, all its manager thread sends: they lived
    on (180 MB each), and the manager's join on them kept the server from exiting on SIGTERM.
    They are killed when the pool is rebuilt, and the rebuild is logged and counted."""
    srv = InProcessServer(base_config(workers=2, worker_mode="process"), trace_fn=scripted_trace)
    try:
        stub = srv.stub()
        stub.Trace(_request("#!pid"), timeout=60)
        old = list(srv.running.workers._pool._processes)  # white box: the pool's worker pids
        assert len(old) == 2
        broken = srv.running.workers._pool
        os.kill(old[0], signal.SIGKILL)
        wait_until(lambda: not _alive(old[0]), timeout=10, what="the killed worker to die")
        # until the pool's manager thread has seen the death, a call may still be answered by the
        # live worker of the old pool (a race the test lost once in CI, not the behaviour it checks)
        wait_until(lambda: bool(broken._broken), timeout=10, what="the pool to see its worker died")
        assert stub.Trace(_request("#!pid"), timeout=60).citations  # on the rebuilt pool
        assert srv.running.workers._pool._processes.keys().isdisjoint(old)
        wait_until(lambda: not any(_alive(p) for p in old), timeout=3, what="the old workers to exit")
        registry = srv.running.metrics.registry
        assert registry.get_sample_value("source_tracer_worker_pool_rebuilds_total") == 1
        assert (registry.get_sample_value("source_tracer_worker_crashes_total") or 0.0) == 0
    finally:
        srv.close()


def test_a_server_whose_worker_died_still_stops_on_sigterm() -> None:
    """Once a worker died, the broken pool's manager thread waited forever on its other workers
    (they ignore SIGTERM), and so did the server's exit: it logged 'stopped' and never ended."""
    srv = SubprocessServer("--worker-mode", "process", "--workers", "2")
    try:
        import grpc as _grpc

        from server.pb.source_tracer.v1 import tracer_pb2_grpc

        with _grpc.insecure_channel(srv.address) as channel:
            stub = tracer_pb2_grpc.SourceTracerStub(channel)
            request = pb.TraceRequest(report=EN_REPORT, records=records_pb(EN_RECORDS))
            assert stub.Trace(request, timeout=60).citations
            children = {int(p.parent.name) for p in Path("/proc").glob("[0-9]*/stat")
                        if p.read_text().rsplit(")", 1)[1].split()[1] == str(srv.proc.pid)}
            workers = sorted(_descendants(srv.proc.pid) - children)   # the forkserver's children
            assert len(workers) == 2, workers
            # both workers busy with a slow trace when one of them dies; its answer (the report
            # comes back whole) is larger than a pipe holds, so the other worker blocks writing it
            filler = " ".join(f"Record {i} lists routine checks of valves, pumps and cables."
                              for i in range(150))
            slow = pb.TraceRequest(report=EN_REPORT * 300, records=[
                pb.Record(url=f"https://s.example/{i}", title="S", content=f"{filler} case {i}")
                for i in range(1200)])
            idle = {w: _cpu_ticks(w) for w in workers}
            calls = [stub.Trace.future(slow, timeout=120) for _ in range(2)]
            wait_until(lambda: all(_cpu_ticks(w) > idle[w] + 50 for w in workers), timeout=60,
                       what="both workers half a second into their traces")
            os.kill(workers[0], signal.SIGKILL)
            assert all(c.result().citations is not None for c in calls)  # tried again on the new pool
            time.sleep(1.0)
            pool = _descendants(srv.proc.pid) - children
            assert len(pool) == 2 and workers[1] not in pool, "the broken pool's other worker lives on"
        srv.proc.send_signal(signal.SIGTERM)
        assert srv.proc.wait(30) == 0
        assert not _alive(workers[1])
    finally:
        if srv.proc.poll() is None:
            srv.proc.kill()
            srv.proc.wait(10)


def test_bulk_counts_the_cores_it_may_use_as_serve_does() -> None:
    # (a container's CPU quota caps both: `docker --cpus 2` on a large host starts two workers)
    from server.bulk import default_workers
    from server.workers import available_cpus
    assert default_workers() == available_cpus()


def test_a_worker_process_gives_memory_back_after_a_large_request(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes

    import server.workers as workers

    calls: list[int] = []
    monkeypatch.setattr(workers, "give_back_memory", lambda: calls.append(1))
    monkeypatch.setattr(workers, "_FLAGS", (ctypes.c_ubyte * 1)())
    small = _request("small")
    summary, payload = workers._work_in_process(small.SerializeToString(), 0)
    assert pb.TraceResponse.FromString(payload).citations and calls == []
    big = _request("large")
    big.records.extend(pb.Record(url=f"https://filler.example/{i}", content="Filler text. " * 4000)
                       for i in range(45))
    assert big.ByteSize() >= workers.TRIM_AFTER_BYTES
    summary, payload = workers._work_in_process(big.SerializeToString(), 0)
    assert pb.TraceResponse.FromString(payload).citations and calls == [1]


def test_giving_memory_back_runs_here() -> None:
    """The machines this runs on are glibc Linux: `malloc_trim` is found and runs."""
    import server.workers as workers

    assert workers._MALLOC_TRIM is not None
    trimming = workers.give_back_memory()
    assert trimming is not None
    trimming.join(30)
    assert not trimming.is_alive()
