"""Real servers for the server tests: in-process (a grpc.aio server on its own event-loop
thread) or a `source-tracer serve` subprocess. Fixtures (reports, records) are built here."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import grpc
import pytest

from server.config import ServerConfig
from server.pb.source_tracer.v1 import tracer_pb2 as pb
from server.pb.source_tracer.v1 import tracer_pb2_grpc

REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable


# The retry policy docs/api.md recommends to callers (deploy/client/retry-service-config.json).
RETRY_SERVICE_CONFIG = (REPO / "deploy" / "client" / "retry-service-config.json").read_text(encoding="utf-8")

EN_REPORT = (
    "# Electric cars in Norway\n\n"
    "Norway is a leader in electric mobility. "
    "In 2023, battery electric vehicles accounted for 82.4% of new car sales in Norway. "
    "The country plans to end sales of new petrol and diesel cars by 2025.\n\n"
    "Nobody knows what the weather will be like on the moon next week.\n"
)
EN_RECORDS = [
    {
        "url": "https://example.org/norway-ev?utm_source=x",
        "title": "Norway EV sales 2023",
        "content": "Official figures show that in 2023, battery electric vehicles accounted for 82.4% "
        "of new car sales in Norway, up from 79.3% a year earlier.",
    },
    {
        "url": "https://example.com/policy",
        "title": "Norway's 2025 target",
        "content": "Norway plans to end sales of new petrol and diesel cars by 2025, the government said.",
    },
]
ZH_REPORT = (
    "# 中国新能源汽车\n\n"
    "2023年中国新能源汽车销量达到949.5万辆，同比增长37.9%。"
    "比亚迪2023年全年销量超过302万辆。\n"
)
ZH_RECORDS = [
    {
        "url": "https://example.cn/nev-2023",
        "title": "2023年新能源汽车产销情况",
        "content": "中汽协数据显示，2023年中国新能源汽车销量达到949.5万辆，同比增长37.9%，"
        "市场占有率达到31.6%。",
    },
    {
        "url": "https://example.cn/byd",
        "title": "比亚迪年报",
        "content": "比亚迪2023年全年销量超过302万辆，同比增长62%。",
    },
]

MARKER = re.compile(r"\[\d+\]")



def records_pb(records: list[dict[str, Any]]) -> list[pb.Record]:
    return [pb.Record(**r) for r in records]


def strip_markers(text: str) -> str:
    return MARKER.sub("", text)


class InProcessServer:
    """A real grpc.aio server running on a private event loop in a background thread."""

    def __init__(self, config: ServerConfig, **kwargs: Any) -> None:
        from server.app import start_server

        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        try:
            started = asyncio.run_coroutine_threadsafe(start_server(config, **kwargs), self.loop)
            self.running = started.result(30)
        except BaseException:
            self._stop_loop()
            raise
        self.port = self.running.port
        self.address = f"127.0.0.1:{self.port}"

    @property
    def service(self) -> Any:
        return self.running.service

    def channel(self, **kwargs: Any) -> grpc.Channel:
        return grpc.insecure_channel(self.address, **kwargs)

    def stub(self) -> tracer_pb2_grpc.SourceTracerStub:
        return tracer_pb2_grpc.SourceTracerStub(self.channel())

    def close(self, grace: float = 1.0) -> None:
        asyncio.run_coroutine_threadsafe(self.running.drain(grace), self.loop).result(30)
        self._stop_loop()

    def _stop_loop(self) -> None:
        async def stop_default_executor() -> None:  # run_in_executor's threads
            await self.loop.shutdown_default_executor()

        asyncio.run_coroutine_threadsafe(stop_default_executor(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def base_config(**changes: Any) -> ServerConfig:
    return replace(ServerConfig(host="127.0.0.1", port=0, grace_s=1.0), **changes)


@pytest.fixture(scope="module")
def server() -> Iterator[InProcessServer]:
    srv = InProcessServer(base_config())
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def stub(server: InProcessServer) -> tracer_pb2_grpc.SourceTracerStub:
    return server.stub()


def wait_until(predicate: Any, timeout: float = 30.0, what: str = "condition") -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        return resp.read().decode()


def metric_value(text: str, name: str, **labels: str) -> float:
    """Value of one sample in a Prometheus exposition page (0 when absent)."""
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        head, _, value = line.rpartition(" ")
        if head.split("{")[0] != name:
            continue
        if all(f'{k}="{v}"' in head for k, v in labels.items()):
            return float(value)
    return 0.0


class SubprocessServer:
    """`python -m server.cli serve --port 0 ...`; the bound port is read from its JSON log."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCE_TRACER_")}
        full_env.update(env or {})
        self.proc = subprocess.Popen(
            [PYTHON, "-m", "server.cli", "serve", "--port", "0", *args],
            cwd=REPO, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        self.logs: list[dict[str, Any]] = []
        self.port = 0
        assert self.proc.stderr is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                raise AssertionError(f"server exited early (rc={self.proc.wait()})")
            entry = self._parse(line)
            if entry.get("event") == "serving":
                self.port = int(entry["port"])
                break
        assert self.port, "server did not report its port"
        self._reader = threading.Thread(target=self._drain_stderr, daemon=True)
        self._reader.start()
        self.address = f"127.0.0.1:{self.port}"

    def _parse(self, line: str) -> dict[str, Any]:
        try:
            entry = json.loads(line)
        except ValueError:
            entry = {"raw": line.rstrip("\n")}
        self.logs.append(entry)
        return entry

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._parse(line)

    def terminate(self, sig: int = signal.SIGTERM) -> None:
        self.proc.send_signal(sig)

    def wait(self, timeout: float = 60) -> int:
        rc = self.proc.wait(timeout)
        self._reader.join(5)
        return rc

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
