"""Third-party clients: grpcurl through server reflection, and Node (@grpc/grpc-js with
@grpc/proto-loader reading the .proto) — other languages can use the contract."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.conftest import EN_RECORDS, EN_REPORT, REPO, ZH_RECORDS, ZH_REPORT, strip_markers

GRPCURL = str(Path(sys.executable).parent / "grpcurl")
NODE_DIR = REPO / "tests" / "node"


def grpcurl(*args: str, data: str | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [GRPCURL, "-plaintext", *(["-d", "@"] if data is not None else []), *args]
    return subprocess.run(cmd, input=data, capture_output=True, text=True, timeout=60)


def test_grpcurl_lists_and_describes_via_reflection(server) -> None:
    out = grpcurl(server.address, "list")
    assert out.returncode == 0, out.stderr
    assert {"source_tracer.v1.SourceTracer", "grpc.health.v1.Health"} <= set(out.stdout.split())
    desc = grpcurl(server.address, "describe", "source_tracer.v1.SourceTracer")
    assert "rpc Trace" in desc.stdout and "rpc TraceStream" in desc.stdout


def test_grpcurl_calls_trace(server) -> None:
    request = {"report": EN_REPORT, "records": EN_RECORDS, "options": {"max_sources": 2}}
    out = grpcurl(server.address, "source_tracer.v1.SourceTracer/Trace", data=json.dumps(request))
    assert out.returncode == 0, out.stderr
    resp = json.loads(out.stdout)  # grpcurl prints lowerCamelCase JSON names
    assert resp["citations"] and resp["references"]
    assert isinstance(resp["citations"][0]["start"], int)
    assert strip_markers(resp["report"]).startswith(strip_markers(EN_REPORT).rstrip("\n"))


def test_grpcurl_invalid_argument_names_field(server) -> None:
    request = {"report": "Hello.", "options": {"language": "klingon"}}
    out = grpcurl(server.address, "source_tracer.v1.SourceTracer/Trace", data=json.dumps(request))
    assert out.returncode != 0
    assert "InvalidArgument" in out.stderr and "options.language" in out.stderr


def test_grpcurl_health(server) -> None:
    out = grpcurl(server.address, "grpc.health.v1.Health/Check")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["status"] == "SERVING"


@pytest.fixture(scope="module")
def node_client() -> list[str]:
    node = shutil.which("node")
    assert node, "node is required for the Node client test"
    if not (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
        npm = shutil.which("npm")
        assert npm, "npm is required to install the Node client (npm ci in tests/node)"
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True, timeout=600,
                       capture_output=True)
    return [node, str(NODE_DIR / "trace_client.js")]


def _node_call(node_client: list[str], address: str, request: dict) -> tuple[int, dict]:
    out = subprocess.run([*node_client, address], input=json.dumps(request), capture_output=True,
                         text=True, timeout=120)
    assert out.stdout, out.stderr
    return out.returncode, json.loads(out.stdout)


def test_node_client_calls_trace(server, node_client) -> None:
    cases = ((EN_REPORT, EN_RECORDS, "References"), (ZH_REPORT, ZH_RECORDS, "参考文献"))
    for report, records, heading in cases:
        request = {"report": report, "records": records, "options": {"mode": "MODE_DETERMINISTIC"}}
        rc, resp = _node_call(node_client, server.address, request)
        assert rc == 0
        assert heading in resp["report"]
        assert resp["citations"][0]["sources"][0]["number"] == 1
        assert resp["stats"]["records"] == 2 and resp["mode"] == "deterministic"
        assert strip_markers(resp["report"]).startswith(strip_markers(report).rstrip("\n"))


def test_node_client_sees_status_codes(server, node_client) -> None:
    rc, resp = _node_call(node_client, server.address, {"report": "x", "options": {"max_sources": 77}})
    assert rc == 3
    assert resp["error"]["code"] == 3  # INVALID_ARGUMENT
    assert "options.max_sources" in resp["error"]["details"]
