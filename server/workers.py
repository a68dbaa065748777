"""Where traces run: a pool of worker processes (default) or of threads.

The pipeline is CPU-bound pure Python, so threads of one process share one core (the GIL):
on a 2-core machine two concurrent calls through a thread pool finish no faster than one
after the other. Worker processes each have their own interpreter, so a server with
`workers = N` traces N requests at once on N cores. Threads remain for servers with an LLM
backend (their traces mostly wait on the network) and for tests that inject a trace function.

With an LLM backend, RoutedWorkers sends traces that call the model to threads and the ones
asking for the deterministic engine to the other pool.

Both pools take a parsed TraceRequest and return a concurrent Future of
`(TraceSummary, TraceResponse)`. Cancellation crosses into worker processes through one byte
per running call in shared memory, which the pipeline checks between stages.
"""

from __future__ import annotations

import collections
import ctypes
import ctypes.util
import gc
import math
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from server.convert import request_to_core, result_to_pb
from server.pb.source_tracer.v1 import tracer_pb2 as pb
from tracer.errors import TracerError
from tracer.models import Stats, TraceResult
from tracer.pipeline import LLMBackend, held_working_data, trace

TraceFn = Callable[..., TraceResult]
Done = Future[tuple["TraceSummary", pb.TraceResponse]]  # what a pool's submit returns


@dataclass(frozen=True, slots=True)
class TraceSummary:
    """What the service logs and counts about a finished trace (the response carries the rest)."""

    mode: str
    degraded: bool
    stats: Stats
    worker_ms: float = 0.0  # in the worker: protobuf to core, the trace, the result to protobuf
    # The trace's working data, freed once the answer is on its way (`release`); thread lanes only.
    held: list[object] = field(default_factory=list, compare=False, repr=False)

    @classmethod
    def of(cls, result: TraceResult, started: float, held: list[object] | None = None) -> TraceSummary:
        """`started`: `time.perf_counter()` when the worker took the request."""
        return cls(mode=str(result.mode), degraded=result.degraded, stats=result.stats,
                   worker_ms=(time.perf_counter() - started) * 1000, held=held if held is not None else [])

    def release(self) -> None:
        """Free the trace's working data (about 0.6 ms for a dev case), after the answer is sent."""
        self.held.clear()


class WorkerCrashed(RuntimeError):
    """The worker process running a trace died (killed, out of memory, a crash in native code)."""


class PoolClosed(RuntimeError):
    """The worker pool shut down (the server is stopping) before this trace ran."""


class WorkerFailed(RuntimeError):
    """The trace raised an unexpected exception in a worker process; carries its traceback."""

    def __init__(self, summary: str, formatted: str) -> None:
        super().__init__(summary)
        self.formatted = formatted

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.formatted))


class Cancel:
    """A cancel flag for one call: `set()` once, `is_set()` polled by the pipeline between stages.
    Callbacks registered with `on_set` run when it is set (at once if it already is)."""

    __slots__ = ("_event", "_hooks", "_lock", "llm_deadline")

    def __init__(self, llm_deadline: float | None = None) -> None:
        self._event = threading.Event()
        self._hooks: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        # time.monotonic() by which model calls must be done (the call's deadline less a reserve
        # for the deterministic path); None without a deadline.
        self.llm_deadline = llm_deadline

    def set(self) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            hooks, self._hooks = self._hooks, []
        for hook in hooks:
            hook()

    def is_set(self) -> bool:
        return self._event.is_set()

    def hurry(self, at: float) -> None:
        """Model calls must end by `at` (time.monotonic()), if that is sooner: the server drains."""
        with self._lock:
            if self.llm_deadline is None or at < self.llm_deadline:
                self.llm_deadline = at

    def on_set(self, hook: Callable[[], None]) -> Callable[[], None]:
        """Run `hook` when set; returns a function that unregisters it (a stream's cancel flag
        outlives each of its items)."""
        with self._lock:
            if not self._event.is_set():
                self._hooks.append(hook)
                return lambda: self._forget(hook)
        hook()
        return lambda: None

    def _forget(self, hook: Callable[[], None]) -> None:
        with self._lock:
            try:
                self._hooks.remove(hook)
            except ValueError:
                pass


# Share of a time limit kept from the model for the deterministic path (llm_deadline_within).
LLM_RESERVE_SHARE = 0.2
LLM_RESERVE_MIN_S = 0.5
LLM_RESERVE_MAX_S = 5.0


def llm_deadline_within(seconds: float, reserve: float | None = None) -> float:
    """The `time.monotonic()` by which model calls must be done when the whole trace has `seconds`:
    the limit less a reserve for the deterministic path (`reserve` seconds, the backend's
    `llm.deadline_reserve`; by default a fifth, at least 0.5 s, at most 5 s). A model still
    unanswered then is abandoned and its sentences are traced without it, so the caller gets an
    answer instead of a timeout."""
    if reserve is None:
        reserve = min(LLM_RESERVE_MAX_S, max(LLM_RESERVE_MIN_S, LLM_RESERVE_SHARE * seconds))
    return time.monotonic() + seconds - reserve


def deadline_reserve_of(llm: object) -> float | None:
    """The backend's configured `llm.deadline_reserve` (None: the default rule, or no backend)."""
    settings = getattr(llm, "settings", None)
    reserve = getattr(settings, "deadline_reserve", None)
    return float(reserve) if isinstance(reserve, (int, float)) else None


class TimeLimit:
    """A cancel token that trips once `seconds` have passed (the pipeline checks it between
    stages): the CLI's and bulk's --timeout. `llm_deadline` is when its model calls must end."""

    __slots__ = ("at", "llm_deadline")

    def __init__(self, seconds: float, reserve: float | None = None) -> None:
        self.at = time.monotonic() + seconds
        self.llm_deadline = llm_deadline_within(seconds, reserve)

    def is_set(self) -> bool:
        return time.monotonic() >= self.at


class Workers(Protocol):
    mode: str
    size: int

    def lanes(self) -> dict[str, int]:
        """How many traces run at once in threads and in worker processes."""
        ...

    def submit(self, request: pb.TraceRequest, cancel: Cancel) -> Done:
        ...

    def warm_up(self) -> None:
        ...

    def shutdown(self, wait: bool = False) -> None:
        """Stop taking work and drop queued traces; with `wait`, also wait for the running ones
        and for worker processes to exit (a clean exit: nothing left for the resource tracker)."""
        ...


def available_cpus(cgroup: Path = Path("/sys/fs/cgroup")) -> int:
    """CPUs this process may use: its affinity mask, capped by a cgroup CPU quota (a container's
    `--cpus` or a Kubernetes CPU limit, rounded up), which `os.cpu_count()` ignores."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    quota = _cgroup_quota(cgroup)
    if quota is not None:
        n = min(n, math.ceil(quota))
    return max(1, n)


def _cgroup_quota(root: Path) -> float | None:
    try:  # cgroup v2: "<quota> <period>" or "max <period>"
        quota, period = (root / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:  # cgroup v1: quota -1 means none
        quota_us = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        period_us = int((root / "cpu" / "cpu.cfs_period_us").read_text())
        return quota_us / period_us if quota_us > 0 and period_us > 0 else None
    except (OSError, ValueError):
        return None


# ---- threads ----------------------------------------------------------------------------------


class ThreadWorkers:
    """Traces in threads of this process (one core in all, whatever `size` is)."""

    mode = "thread"

    def __init__(self, size: int, trace_fn: TraceFn = trace, llm: LLMBackend | None = None) -> None:
        self.size = size
        self._trace = trace_fn
        self._llm = llm
        self._executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="trace")

    def _work(self, request: pb.TraceRequest, cancel: Cancel) -> tuple[TraceSummary, pb.TraceResponse]:
        started = time.perf_counter()
        report, records, options = request_to_core(request)
        with held_working_data() as held:  # freed by the service once the call is over
            if self._llm is not None:
                result = self._trace(report, records, options, llm=self._llm, cancel=cancel,
                                     llm_deadline=cancel.llm_deadline)
            else:
                result = self._trace(report, records, options, llm=None, cancel=cancel)
        response = result_to_pb(result, request.id)
        return TraceSummary.of(result, started, held), response

    def submit(self, request: pb.TraceRequest, cancel: Cancel) -> Done:
        return self._executor.submit(self._work, request, cancel)

    def lanes(self) -> dict[str, int]:
        return {"thread": self.size, "process": 0}

    def warm_up(self) -> None:
        self._executor.submit(_warm_up).result()

    def shutdown(self, wait: bool = False) -> None:
        self._executor.shutdown(wait=wait, cancel_futures=True)


# ---- processes --------------------------------------------------------------------------------

# Worker-process globals, set by _init_worker.
_FLAGS: Any = None
_TRACE_FN: TraceFn = trace


def _pid_after(seconds: float) -> int:
    """A worker's pid, after holding it `seconds` (the pool's warm-up)."""
    if seconds > 0:
        time.sleep(seconds)
    return os.getpid()


def _warm_up() -> None:
    """Load what the first real trace would (word lists, the jieba dictionary, the stemmer)."""
    trace("Warm-up sentence about 2024. 预热句子，2024年。",
          [{"url": "https://warm.up/", "title": "warm-up",
            "content": "Warm-up sentence about 2024. 预热句子。"}])


# A trace allocates tens of thousands of short-lived containers (token lists, position maps),
# so with CPython's default gen0 threshold (700) the collector runs hundreds of times per report
# and its full passes walk the whole heap: up to about 10% of a dev trace's time in the server
# process (docs/performance.md). Traces free what they allocate by reference counting.
GC_GEN0_THRESHOLD = 10_000
# After a trace of a request this large (serialized bytes), a worker process collects its garbage
# and hands the heap's free memory back to the system (glibc `malloc_trim`). Otherwise the
# allocator keeps what a large trace freed for later: a worker that traced a few 8 MB requests
# stayed up to 150 MB larger than one that trims (`scripts/bench-soak`: 234-382 against 165-241
# MB; docs/operations.md, "Memory after large requests"), which a memory limit counts. A few ms,
# then about 45 ms in a thread of its own. (The server process gains nothing from it: measured in
# thread mode, it grew as much either way.)
TRIM_AFTER_BYTES = 2 * 1024 * 1024


def _libc_trim() -> Callable[[int], int] | None:
    try:
        trim: Callable[[int], int] = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):   # not glibc (musl, macOS): nothing to trim this way
        return None
    return trim


_MALLOC_TRIM = _libc_trim()


def give_back_memory() -> threading.Thread | None:
    """Collect garbage (a few ms), then return the heap's free memory to the system in a thread of
    its own (about 45 ms after a large trace, with the GIL released), so that neither the event loop
    nor an answer waits for it. The thread, or None without glibc."""
    gc.collect()
    if _MALLOC_TRIM is None:
        return None
    trimming = threading.Thread(target=_MALLOC_TRIM, args=(0,), name="malloc-trim", daemon=True)
    trimming.start()
    return trimming


def tune_gc() -> None:
    """For a long-running process whose code and caches are loaded (a server after its warm-up,
    a worker process after its own): move everything alive now out of the collector's sight
    (`gc.freeze()`: modules, word lists and caches never become garbage), and let the
    youngest generation grow to GC_GEN0_THRESHOLD objects before a collection."""
    gc.freeze()
    gen0, gen1, gen2 = gc.get_threshold()
    if gen0:  # 0: the collector is disabled; leave it so
        gc.set_threshold(max(gen0, GC_GEN0_THRESHOLD), gen1, gen2)


def _init_worker(flags: Any, trace_fn: TraceFn) -> None:
    global _FLAGS, _TRACE_FN
    # The parent drains on SIGTERM/SIGINT and then closes the pool; a signal sent to the whole
    # process group (Ctrl-C, systemd) must not kill the traces it is waiting for.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # ...but a server killed outright (SIGKILL, OOM) must not leave its workers behind.
    exit_with_parent()
    _FLAGS = flags
    _TRACE_FN = trace_fn
    _warm_up()
    tune_gc()


def exit_with_parent() -> None:
    """In a multiprocessing child (a service or bulk pool worker): end this process as soon as
    the process that started it is gone, even SIGKILLed or already dead when this runs, instead
    of waiting forever on a queue nobody will write to. It watches the spawner's sentinel pipe,
    not `os.getppid()`: a forkserver child's OS parent is the forkserver, and an orphan's is init."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_when_ready, args=(parent.sentinel,), name="parent-watch",
                         daemon=True).start()


def _exit_when_ready(sentinel: int) -> None:
    multiprocessing.connection.wait([sentinel])
    os._exit(0)


class _FlagToken:
    __slots__ = ("_slot",)

    def __init__(self, slot: int) -> None:
        self._slot = slot

    def is_set(self) -> bool:
        return bool(_FLAGS[self._slot])


def _work_in_process(data: bytes, slot: int) -> tuple[TraceSummary, bytes]:
    """Runs in a worker process. Core errors go back as themselves (they pickle); anything else
    as WorkerFailed with the traceback, so an odd exception can never break the pool."""
    started = time.perf_counter()
    request = pb.TraceRequest.FromString(data)
    try:
        report, records, options = request_to_core(request)
        result = _TRACE_FN(report, records, options, llm=None, cancel=_FlagToken(slot))
        response = result_to_pb(result, request.id).SerializeToString()
        summary = TraceSummary.of(result, started)
        if len(data) >= TRIM_AFTER_BYTES:
            del result, report, records, request
            give_back_memory()
        return summary, response
    except TracerError:
        raise
    except Exception as exc:
        raise WorkerFailed(f"{type(exc).__name__}: {exc}", traceback.format_exc()) from None


class ProcessWorkers:
    """Traces in `size` worker processes (forkserver), so concurrent calls use that many cores.

    A worker that dies breaks the pool, and every call on it with it: the pool is rebuilt and
    each of those calls is tried once more on it, so only a trace that kills its worker twice
    fails (WorkerCrashed, answered INTERNAL)."""

    mode = "process"

    def __init__(self, size: int, slots: int, trace_fn: TraceFn = trace) -> None:
        try:
            pickle.dumps(trace_fn)
        except Exception as exc:
            raise ValueError(f"process workers need a module-level trace function: {exc}") from None
        methods = multiprocessing.get_all_start_methods()
        self._ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        if self._ctx.get_start_method() == "forkserver":
            # Workers fork from a server process that has imported the pipeline once (no effect
            # when that server already runs).
            self._ctx.set_forkserver_preload(["server.workers"])
        self.size = size
        self._trace = trace_fn
        self._flags = self._ctx.RawArray(ctypes.c_ubyte, slots)
        self._free = list(range(slots - 1, -1, -1))
        self._lock = threading.Lock()
        self._pool = self._new_pool()
        self._closed = False
        self.on_rebuild: Callable[[], None] | None = None   # called after a broken pool is replaced

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=self.size, mp_context=self._ctx,
            initializer=_init_worker, initargs=(self._flags, self._trace),
        )

    def lanes(self) -> dict[str, int]:
        return {"thread": 0, "process": self.size}

    def warm_up(self) -> None:
        """Start every worker process now (each loads the pipeline), not on the first calls.

        The processes are spawned from this thread with SIGTERM and SIGINT blocked, so that
        multiprocessing's forkserver (and everything it forks) never acts on them: a stop signal
        sent to the whole process group (systemd's default, `timeout`, Ctrl-C) is for the server,
        which drains and then closes the pool. Blocked here, the signals still reach the server's
        main thread.

        One worker starts first, alone: when workers cannot start at all, the pool breaks on it
        before any other call is submitted. (CPython 3.11's pool breaks in its manager thread,
        which walks the pool's process table while `submit` may still be adding a process to
        it: "dictionary changed size during iteration".)"""
        first = self._submit_blocking_stop_signals(1)
        first[0].result(timeout=120)
        # The pool starts a process on `submit` only while no worker is idle, and a worker that
        # finished an instant task is idle again: each task holds its worker a moment, so the
        # submits see them busy, and they are repeated until every process runs.
        for _ in range(10):
            for f in self._submit_blocking_stop_signals(self.size, hold=0.05):
                f.result(timeout=120)
            if len(getattr(self._pool, "_processes", None) or {}) >= self.size:
                break

    def _submit_blocking_stop_signals(self, n: int, hold: float = 0.0) -> list[Future[int]]:
        stop_signals = {signal.SIGTERM, signal.SIGINT}
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)
        try:
            return [self._pool.submit(_pid_after, hold) for _ in range(n)]
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)

    def submit(self, request: pb.TraceRequest, cancel: Cancel) -> Done:
        out: Done = Future()
        out.set_running_or_notify_cancel()  # like a thread's future: a caller's cancel does not
        # complete it early; the cancel flag stops the worker and `out` completes when it has
        with self._lock:
            if self._closed:
                raise RuntimeError("the worker pool is shut down")
            if not self._free:  # more calls running than max_in_flight x stream_concurrency
                raise RuntimeError("no free cancel slot for a new trace")
            slot = self._free.pop()
            self._flags[slot] = 0
        data = request.SerializeToString()
        state = {"done": False}
        forget: Callable[[], None] = lambda: None  # noqa: E731

        def cancelled() -> None:
            with self._lock:
                if not state["done"]:
                    self._flags[slot] = 1

        def complete(result: tuple[TraceSummary, pb.TraceResponse] | None, exc: BaseException | None) -> None:
            with self._lock:
                state["done"] = True
                self._free.append(slot)
            forget()
            if exc is None:
                assert result is not None
                out.set_result(result)
            else:
                out.set_exception(exc)

        def crashed() -> WorkerCrashed:
            return WorkerCrashed("the worker process running this trace died (killed, out of memory or "
                                 "crashed), here and when the trace was tried again")

        def run(retries: int) -> None:
            """Hand the trace to the current pool. When a worker dies, the pool breaks and every
            call on it fails with it; each is tried once more on the rebuilt pool, so only a trace
            that kills its worker again (or a call cancelled meanwhile) fails."""
            with self._lock:
                pool, closed = self._pool, self._closed
            if closed:
                complete(None, PoolClosed("the server is shutting down; retry elsewhere"))
                return
            try:
                future = pool.submit(_work_in_process, data, slot)
            except BrokenProcessPool:
                self._replace(pool)
                if retries and not self._flags[slot]:
                    run(retries - 1)
                else:
                    complete(None, crashed())
                return
            except RuntimeError:  # shut down between the check above and the submit
                complete(None, PoolClosed("the server is shutting down; retry elsewhere"))
                return
            future.add_done_callback(lambda f: finished(f, pool, retries))

        def finished(f: Future[tuple[TraceSummary, bytes]], pool: ProcessPoolExecutor, retries: int) -> None:
            if f.cancelled():  # queued when the pool shut down
                complete(None, PoolClosed("the server is shutting down; retry elsewhere"))
                return
            exc = f.exception()
            if exc is None:
                summary, payload = f.result()
                complete((summary, pb.TraceResponse.FromString(payload)), None)
            elif isinstance(exc, BrokenProcessPool):
                self._replace(pool)
                if retries and not self._flags[slot]:
                    run(retries - 1)
                else:
                    complete(None, crashed())
            else:
                complete(None, exc)

        forget = cancel.on_set(cancelled)
        run(1)
        return out

    def _replace(self, broken: ProcessPoolExecutor) -> None:
        """A new pool for a broken one. Its processes are all started here, before any call can
        reach it (as `warm_up` does at start), so that no later `submit` adds a process while the
        pool's manager thread may be walking its process table (CPython 3.11's race, above)."""
        with self._lock:
            if self._pool is not broken or self._closed:
                return
            fresh = self._new_pool()
            for _ in range(self.size):
                fresh.submit(os.getpid)  # each starts a process while none is idle
            self._pool = fresh
        # The broken pool's other workers ignore SIGTERM (_init_worker), which is all its manager
        # thread sends them: they lived on (180 MB each), and its join on them kept the server
        # from ever exiting. They hold no call any more (each is retried on the fresh pool).
        for proc in list((getattr(broken, "_processes", None) or {}).values()):
            if proc.is_alive():
                proc.kill()
        broken.shutdown(wait=False, cancel_futures=True)
        if self.on_rebuild is not None:
            self.on_rebuild()

    def shutdown(self, wait: bool = False) -> None:
        with self._lock:
            self._closed = True
            pool = self._pool
        pool.shutdown(wait=wait, cancel_futures=True)


class HybridWorkers:
    """One trace at a time in a thread of this process; traces beyond it, while it runs, in
    `size - 1` worker processes. A caller making one call at a time never pays the hop to a
    worker process (about 1 ms a call); concurrent callers still get `size` cores.

    A call that finds every lane busy waits here and goes to the first lane that frees, thread or
    process: handed to the worker processes at once, it waited behind whatever they ran (a soak
    test saw 40 ms calls take 4-8 s behind a large trace while the thread had long been free)."""

    mode = "auto"

    def __init__(self, size: int, slots: int, trace_fn: TraceFn = trace) -> None:
        self.size = size
        self._local = ThreadWorkers(1, trace_fn)
        self._remote = ProcessWorkers(size - 1, slots, trace_fn)
        self._lock = threading.Lock()
        self._local_busy = False
        self._remote_busy = 0
        self._waiting: collections.deque[tuple[pb.TraceRequest, Cancel, Done]] = collections.deque()
        self._closed = False

    def _take_lane(self) -> str | None:
        """A free lane, now taken ("thread" first), or None; under `_lock`."""
        if not self._local_busy:
            self._local_busy = True
            return "thread"
        if self._remote_busy < self._remote.size:
            self._remote_busy += 1
            return "process"
        return None

    def submit(self, request: pb.TraceRequest, cancel: Cancel) -> Done:
        with self._lock:
            if self._closed:
                raise RuntimeError("the worker pool is shut down")
            lane = self._take_lane()
            if lane is None:
                out: Done = Future()
                out.set_running_or_notify_cancel()   # completes when its trace has run, as a lane's
                self._waiting.append((request, cancel, out))
                return out
        return self._start(lane, request, cancel)

    def _start(self, lane: str, request: pb.TraceRequest, cancel: Cancel) -> Done:
        try:
            future = (self._local if lane == "thread" else self._remote).submit(request, cancel)
        except BaseException:
            self._lane_free(lane)
            raise
        future.add_done_callback(lambda _f: self._lane_free(lane))
        return future

    def _lane_free(self, lane: str) -> None:
        """A lane finished: it takes the call that has waited longest, if any."""
        with self._lock:
            if lane == "thread":
                self._local_busy = False
            else:
                self._remote_busy -= 1
            if not self._waiting or self._closed:
                return
            request, cancel, out = self._waiting.popleft()
            taken = self._take_lane()
            assert taken is not None, "the lane just freed is free"
            lane = taken
        try:
            future = self._start(lane, request, cancel)
        except BaseException as exc:   # the pool shut down meanwhile
            out.set_exception(PoolClosed(f"the server is shutting down; retry elsewhere ({exc})"))
            return
        future.add_done_callback(lambda f: _settle(out, f))

    def lanes(self) -> dict[str, int]:
        return {"thread": 1, "process": self.size - 1}

    def warm_up(self) -> None:
        self._local.warm_up()
        self._remote.warm_up()

    def shutdown(self, wait: bool = False) -> None:
        with self._lock:
            self._closed = True
            waiting, self._waiting = list(self._waiting), collections.deque()
        for _request, _cancel, out in waiting:
            out.set_exception(PoolClosed("the server is shutting down; retry elsewhere"))
        self._local.shutdown(wait)
        self._remote.shutdown(wait)


def _settle(out: Done, done: Done) -> None:
    """Complete `out` as `done` completed."""
    if done.cancelled():
        out.set_exception(PoolClosed("the server is shutting down; retry elsewhere"))
    elif (exc := done.exception()) is not None:
        out.set_exception(exc)
    else:
        out.set_result(done.result())


class RoutedWorkers:
    """With an LLM backend: traces that call the model run in threads of this process (the
    backend lives here, and its traces mostly wait on the network, so they need threads, not
    cores); traces that ask for the deterministic engine go to `deterministic`, which may use
    worker processes."""

    def __init__(self, llm: ThreadWorkers, deterministic: Workers) -> None:
        self.mode = deterministic.mode
        self.size = deterministic.size
        self._llm = llm
        self._deterministic = deterministic

    def submit(self, request: pb.TraceRequest, cancel: Cancel) -> Done:
        if request.options.mode == pb.MODE_DETERMINISTIC:
            return self._deterministic.submit(request, cancel)
        return self._llm.submit(request, cancel)

    def lanes(self) -> dict[str, int]:
        lanes = self._deterministic.lanes()
        return {"thread": lanes["thread"] + self._llm.size, "process": lanes["process"]}

    def warm_up(self) -> None:
        self._llm.warm_up()
        self._deterministic.warm_up()

    def shutdown(self, wait: bool = False) -> None:
        self._llm.shutdown(wait)
        self._deterministic.shutdown(wait)


def on_rebuild(workers: Workers, hook: Callable[[], None]) -> None:
    """Call `hook` whenever a worker process dies and its pool is rebuilt, for whichever worker
    processes `workers` has (none in thread mode)."""
    for part in (workers, getattr(workers, "_remote", None), getattr(workers, "_deterministic", None)):
        if isinstance(part, ProcessWorkers):
            part.on_rebuild = hook
        elif part is not None and part is not workers:
            on_rebuild(part, hook)


def llm_threads(size: int, llm: LLMBackend) -> int:
    """Traces that call the model at once: at least `size`, and enough to keep the backend's
    `max_concurrency` model calls busy (each such trace makes at least one call at a time)."""
    settings = getattr(llm, "settings", None)
    return max(size, int(getattr(settings, "max_concurrency", 0) or 0))


def with_llm(deterministic: Workers, trace_fn: TraceFn, llm: LLMBackend | None) -> Workers:
    """`deterministic` alone, or with an LLM backend behind RoutedWorkers that gives the traces
    calling the model `llm_threads` threads of their own."""
    if llm is None:
        return deterministic
    return RoutedWorkers(ThreadWorkers(llm_threads(deterministic.size, llm), trace_fn, llm), deterministic)


def thread_workers(size: int, trace_fn: TraceFn = trace, llm: LLMBackend | None = None) -> Workers:
    """Every trace in threads of this process: `size` threads, plus, with an LLM backend,
    `llm_threads` for the traces that call the model."""
    return with_llm(ThreadWorkers(size, trace_fn), trace_fn, llm)


def make_workers(
    mode: str, size: int, slots: int, trace_fn: TraceFn = trace, llm: LLMBackend | None = None
) -> Workers:
    """Pick the pool for `[server] worker_mode`:

    - "auto": HybridWorkers (one trace in a thread, the others in worker processes); threads
      only when `size` is 1. With an LLM backend, traces that call the model run in threads
      (`llm_threads` of them) and only those asking for the deterministic engine use
      HybridWorkers;
    - "process": every deterministic trace in a worker process; with an LLM backend, traces that
      call the model run in threads as with "auto" (the backend and its connections live here);
    - "thread": every trace in a thread of this process (one core in all)."""
    if mode == "process":
        return with_llm(ProcessWorkers(size, slots, trace_fn), trace_fn, llm)
    if mode == "auto" and size >= 2:
        return with_llm(HybridWorkers(size, slots, trace_fn), trace_fn, llm)
    return thread_workers(size, trace_fn, llm)
