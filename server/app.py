"""Server assembly and lifecycle: build, start, drain on SIGTERM/SIGINT, exit 0."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection, reflection_pb2

from server.config import ConfigError, ServerConfig
from server.interceptors import BearerTokenAuth
from server.logs import log
from server.metrics import Metrics
from server.pb.source_tracer.v1 import tracer_pb2
from server.service import SourceTracerService, add_to_server
from server.workers import (
    TraceFn,
    Workers,
    available_cpus,
    deadline_reserve_of,
    llm_threads,
    make_workers,
    on_rebuild,
    thread_workers,
    tune_gc,
)
from tracer import __version__
from tracer.pipeline import LLMBackend, trace

SERVICE_NAME = tracer_pb2.DESCRIPTOR.services_by_name["SourceTracer"].full_name


class StartupError(RuntimeError):
    """The server could not start (e.g. the port is taken); the message says why."""


@dataclass
class RunningServer:
    server: grpc.aio.Server
    service: SourceTracerService
    health: HealthServicer
    workers: Workers
    config: ServerConfig
    port: int
    metrics: Metrics
    metrics_http: Any = None

    async def drain(self, grace: float | None = None) -> int:
        """Graceful stop: NOT_SERVING, refuse new calls (UNAVAILABLE), let accepted calls
        finish within `grace` seconds, then close the server. Returns how many calls were still
        running when the grace ran out."""
        grace = self.config.grace_s if grace is None else grace
        t0 = time.monotonic()
        self.service.begin_drain(grace)
        await self.health.enter_graceful_shutdown()
        log("draining", in_flight=self.service.in_flight, grace_s=grace)
        while self.service.in_flight > 0 and time.monotonic() - t0 < grace:
            await asyncio.sleep(0.02)
        left = self.service.in_flight
        await self.server.stop(max(0.0, min(1.0, grace - (time.monotonic() - t0))))
        # With nothing left running, wait for the worker processes to exit cleanly (quick);
        # otherwise don't outlast the grace period for them.
        await asyncio.get_running_loop().run_in_executor(None, self.workers.shutdown, left == 0)
        if self.metrics_http is not None:
            self.metrics_http.shutdown()
        log("stopped", unfinished=left, drain_ms=round((time.monotonic() - t0) * 1000, 1))
        return left


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"tls.{what} {path!r}: {exc.strerror or exc}") from None


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


# grpcio-reflection implements only v1alpha; newer clients (grpcurl >= 1.9, grpcui, Postman) ask
# for grpc.reflection.v1 first. The two protocols are the same messages under another package
# name, so the v1alpha servicer answers v1 too.
REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"


def _add_reflection(server: grpc.aio.Server) -> None:
    health = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
    names = (SERVICE_NAME, health, REFLECTION_V1, reflection.SERVICE_NAME)
    servicer = reflection.aio.ReflectionServicer(names)
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    for name in (reflection.SERVICE_NAME, REFLECTION_V1):
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(name, {"ServerReflectionInfo": handler}),))


async def _start_workers(config: ServerConfig, trace_fn: TraceFn, llm: LLMBackend | None) -> Workers:
    """The trace workers, started and warmed up. When worker processes cannot start (no writable
    temp directory for the forkserver, a sandbox without fork, ...), "auto" falls back to threads
    with a warning; an explicit "process" is a start-up error."""
    size = config.workers
    loop = asyncio.get_running_loop()
    workers: Workers | None = None
    try:
        workers = make_workers(config.worker_mode, size, config.max_in_flight * config.stream_concurrency,
                               trace_fn, llm)
        await loop.run_in_executor(None, workers.warm_up)
        return workers
    except ValueError as exc:
        if workers is None:  # refused by make_workers: a configuration error
            raise ConfigError(str(exc)) from None
        reason = f"ValueError: {exc}"
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if workers is not None:
        workers.shutdown(wait=True)  # nothing was submitted; waiting keeps the exit clean
    if config.worker_mode == "process":
        raise StartupError(f"server: worker processes could not start ({reason})") from None
    log("worker processes could not start; tracing in threads (one core)", logging.WARNING, error=reason)
    threads = thread_workers(size, trace_fn, llm)
    await loop.run_in_executor(None, threads.warm_up)
    return threads


async def start_server(
    config: ServerConfig, llm: LLMBackend | None = None, trace_fn: TraceFn = trace,
    *, tune_collector: bool = False,
) -> RunningServer:
    """Build and start the gRPC server (call inside the event loop that will run it).

    `trace_fn` is the core's `trace`; tests wrap it to hold a call in flight (with worker
    processes it must be a module-level function). Health turns SERVING once the workers
    have started and loaded the pipeline. `tune_collector` (for a process that is the server's
    own, as `serve` runs it): tune this process's garbage collector once everything is loaded
    (server.workers.tune_gc); worker processes always tune their own."""
    metrics = Metrics()
    size = config.workers or available_cpus()
    # A stream works on as many items at once as the server has lanes for them: `workers`, or
    # with an LLM backend the threads of the traces that call the model; at least 4.
    lanes = llm_threads(size, llm) if llm is not None else size
    config = replace(config, workers=size, stream_concurrency=config.stream_concurrency or max(4, lanes))
    workers = await _start_workers(config, trace_fn, llm)
    service = SourceTracerService(config, workers, metrics, deadline_reserve_of(llm))

    def rebuilt() -> None:  # a worker process died (killed, out of memory): seen even when no call fails
        metrics.worker_pool_rebuilds.inc()
        log("worker process died; pool rebuilt", logging.WARNING)

    on_rebuild(workers, rebuilt)
    for kind, n in workers.lanes().items():
        metrics.workers.labels(kind=kind).set(n)
    interceptors = [BearerTokenAuth(config.auth_token, metrics)] if config.auth_token else []
    options = [
        ("grpc.max_receive_message_length", config.max_message_bytes),
        ("grpc.max_send_message_length", config.max_message_bytes),
        ("grpc.so_reuseport", 0),
    ]
    server = grpc.aio.server(interceptors=interceptors, options=options)
    add_to_server(service, server)
    health = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    _add_reflection(server)
    address = _address(config.host, config.port)
    try:
        if config.tls:
            creds = grpc.ssl_server_credentials(
                [(_read(config.tls_key, "key"), _read(config.tls_cert, "cert"))],
                root_certificates=_read(config.tls_ca, "ca") if config.tls_ca else None,
                require_client_auth=bool(config.tls_ca),
            )
            port = server.add_secure_port(address, creds)
        else:
            port = server.add_insecure_port(address)
    except RuntimeError:
        port = 0
    if not port:
        # wait: a pool shut down without waiting raced its own exit hook, which printed
        # "OSError: Bad file descriptor" on stderr after the message below (about 1 run in 8)
        workers.shutdown(wait=True)
        what = " (or the TLS certificate/key is invalid)" if config.tls else ""
        raise StartupError(f"server: cannot listen on {address}: address in use or not available{what}")
    metrics_http = None
    if config.metrics_port:  # before the gRPC server starts: a port in use stops nothing half-started
        metrics_host = config.metrics_host or config.host
        try:
            metrics_http = metrics.serve(metrics_host, config.metrics_port)
        except OSError as exc:
            workers.shutdown(wait=True)
            where = _address(metrics_host, config.metrics_port)
            raise StartupError(f"server: cannot serve metrics on {where}: {exc.strerror or exc}") from None
    await server.start()
    await health.set("", health_pb2.HealthCheckResponse.SERVING)
    await health.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
    if tune_collector:
        tune_gc()
    log("serving", host=config.host, port=port, tls=config.tls, mtls=bool(config.tls_ca),
        auth=bool(config.auth_token), metrics_port=config.metrics_port or None,
        max_in_flight=config.max_in_flight, llm=llm is not None, workers=workers.size,
        worker_mode=workers.mode, lanes=workers.lanes(), gc_threshold=list(gc.get_threshold()),
        version=__version__)
    return RunningServer(server, service, health, workers, config, port, metrics, metrics_http)


async def _check_llm(check: Callable[[], Awaitable[str | None]]) -> None:
    try:
        problem = await check()
    except Exception as exc:  # the check must never take the server down
        problem = f"{type(exc).__name__}: {exc}"
    if problem:
        log("llm endpoint not answering", logging.WARNING, error=problem,
            effect="traces degrade to the deterministic engine until it answers")


# A stop signal that arrives this soon after the first is the same stop delivered twice (to the
# process and to its group, or forwarded by a wrapper), not an operator's second Ctrl-C.
SECOND_SIGNAL_AFTER_S = 1.0


async def serve(config: ServerConfig, llm: LLMBackend | None = None,
                llm_check: Callable[[], Awaitable[str | None]] | None = None) -> int:
    """Run until SIGTERM/SIGINT, then drain. Returns the process exit code. `llm_check`, when
    given, asks the model's endpoint once after start-up; a failure is logged as a warning (the
    server serves either way: each trace degrades to the deterministic engine while the model is down)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):  # before "serving" is logged: no signal is missed
        loop.add_signal_handler(sig, stop.set)
    running = await start_server(config, llm, tune_collector=True)
    check = asyncio.create_task(_check_llm(llm_check)) if llm_check is not None else None
    await stop.wait()
    if check is not None:
        check.cancel()
    log("signal received; draining")
    first = time.monotonic()

    def now() -> None:  # a second SIGTERM/SIGINT (Ctrl-C twice): the operator will not wait
        if time.monotonic() - first < SECOND_SIGNAL_AFTER_S:
            return  # the same stop sent twice at once (a wrapper forwarding it, a process group)
        log("second signal; exiting without waiting for the calls still running", logging.WARNING,
            in_flight=running.service.in_flight)
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
        os._exit(1)

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.remove_signal_handler(sig)
        loop.add_signal_handler(sig, now)
    if await running.drain():
        # A trace still running in a thread of this process when the grace ran out would hold
        # the exit (Python joins its pool's threads) until its current stage ends: seconds past
        # the grace. It is abandoned with its call, so the process ends now.
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
        os._exit(0)
    return 0
