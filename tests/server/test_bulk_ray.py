"""`bulk --engine ray`: Ray Data on a local Ray (2 CPUs), and on a two-node cluster whose nodes sit
at different network addresses (the second in its own network namespace), joined with token
authentication, gives the local engine's output."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from bulk_cases import comparable, read_out, write_cases
from test_bulk import bulk, by_id, sigterm_after


def test_ray_engine_matches_local_engine(tmp_path: Path) -> None:
    bad = ['{"id": "not-json", ', json.dumps({"id": "no-report", "records": []})]
    ids = write_cases(tmp_path / "in.jsonl", 10, extra=bad, every=4)
    ray = bulk(tmp_path / "in.jsonl", tmp_path / "ray.jsonl", "--engine", "ray", "--workers", "2",
               timeout=240)
    local = bulk(tmp_path / "in.jsonl", tmp_path / "local.jsonl", "--workers", "1")
    assert ray.returncode == 0 and local.returncode == 0, ray.stderr[-3000:] + local.stderr
    r = {k: comparable(v) for k, v in by_id(read_out(tmp_path / "ray.jsonl")).items()}
    lo = {k: comparable(v) for k, v in by_id(read_out(tmp_path / "local.jsonl")).items()}
    assert set(r) == set(ids) | {"line-5", "no-report"}
    assert r == lo
    assert all(r[i]["stats"]["cited_sentences"] == 2 for i in ids)
    # resume on the ray engine: nothing left, nothing duplicated
    again = bulk(tmp_path / "in.jsonl", tmp_path / "ray.jsonl", "--engine", "ray", "--resume",
                 "--workers", "1", timeout=240)
    assert again.returncode == 0, again.stderr[-3000:]
    assert len(read_out(tmp_path / "ray.jsonl")) == 12


def test_a_local_ray_run_ignores_another_ray_on_the_machine(tmp_path: Path) -> None:
    """Without --ray-address the run starts its own local Ray. ray.init() alone joins whatever
    RAY_ADDRESS (or a `ray start`, or a leftover) names, and refuses num_cpus there: every run
    on such a machine failed."""
    import os

    from test_bulk import REPO

    ids = write_cases(tmp_path / "in.jsonl", 3)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCE_TRACER_")}
    env["RAY_ADDRESS"] = "127.0.0.1:1"  # nothing listens there
    r = subprocess.run([sys.executable, "-m", "server.cli", "bulk", str(tmp_path / "in.jsonl"),
                        str(tmp_path / "out.jsonl"), "--engine", "ray", "--workers", "1"],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    assert sorted(by_id(read_out(tmp_path / "out.jsonl"))) == sorted(ids)


_FIRST_BATCH = r"""
import gc, json, sys
from server.bulk_ray import _trace_batch
from server.pb.source_tracer.v1 import tracer_pb2 as pb
before = gc.get_threshold()[0]
req = pb.TraceRequest(report="The bridge opened in 1937.", records=[pb.Record(
    url="https://a.example/b", title="b", content="The bridge opened in 1937 after four years of work.")])
out = _trace_batch({"line": [0], "request": [req.SerializeToString()]}, "native", None, None, 30.0)
print(json.dumps({"before": before, "after": gc.get_threshold()[0], "frozen": gc.get_freeze_count(),
                  "cited": json.loads(bytes(out["out"][0]))["stats"]["cited_sentences"]}))
"""


def test_a_ray_worker_tunes_its_collector_on_its_first_batch() -> None:
    """As the local engine's and the service's workers do (gc.freeze, a larger gen0 threshold)."""
    from server.workers import GC_GEN0_THRESHOLD

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", _FIRST_BATCH], cwd=root, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["before"] < GC_GEN0_THRESHOLD == got["after"] and got["frozen"] > 0 and got["cited"] == 1


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(*cmd: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd}: " + done.stdout[-2000:] + done.stderr[-2000:]
    return done


@pytest.fixture()
def two_host_cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str]]:
    """A real two-node Ray cluster whose nodes have different network addresses: the head, with
    no CPUs (so no task can run there), on this host's side of a veth link, and a node with 2 CPUs
    in its own network namespace on the other side, joined with token authentication as on a
    multi-machine cluster. Yields the head's address and the node's IP."""
    import secrets

    ray_cli = str(Path(sys.executable).parent / "ray")
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.setenv("RAY_AUTH_TOKEN", secrets.token_hex(32))
    tag = secrets.token_hex(3)
    ns, head_if, node_if = f"st-{tag}", f"sth{tag}", f"stn{tag}"
    net = f"10.{200 + secrets.randbelow(50)}.{secrets.randbelow(250)}"
    head_ip, node_ip = f"{net}.1", f"{net}.2"
    address = f"{head_ip}:{_free_port()}"
    try:
        _run("ip", "netns", "add", ns)
        _run("ip", "link", "add", head_if, "type", "veth", "peer", "name", node_if)
        _run("ip", "link", "set", node_if, "netns", ns)
        _run("ip", "addr", "add", f"{head_ip}/24", "dev", head_if)
        _run("ip", "link", "set", head_if, "up")
        for cmd in (("addr", "add", f"{node_ip}/24", "dev", node_if), ("link", "set", node_if, "up"),
                    ("link", "set", "lo", "up")):
            _run("ip", "netns", "exec", ns, "ip", *cmd)
        _run(ray_cli, "start", "--head", "--node-ip-address", head_ip, "--port", address.rsplit(":", 1)[1],
             "--num-cpus", "0", "--include-dashboard", "false", "--disable-usage-stats")
        _run("ip", "netns", "exec", ns, ray_cli, "start", "--address", address, "--node-ip-address",
             node_ip, "--num-cpus", "2", "--disable-usage-stats")
        yield address, node_ip
    finally:
        subprocess.run([ray_cli, "stop", "--force"], capture_output=True, timeout=120)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)  # takes both veth ends


def test_ray_engine_on_a_two_host_cluster(two_host_cluster: tuple[str, str], tmp_path: Path) -> None:
    address, node_ip = two_host_cluster
    code = (f"import json, ray; ray.init(address={address!r}, logging_level='ERROR'); "
            "print(json.dumps(sorted((n['NodeManagerAddress'], n['Resources'].get('CPU', 0)) "
            "for n in ray.nodes() if n['Alive'])))")
    probe = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert probe.returncode == 0, probe.stderr[-3000:]
    nodes = {ip: cpus for ip, cpus in json.loads(probe.stdout.strip().splitlines()[-1])}
    assert nodes == {address.rsplit(":", 1)[0]: 0, node_ip: 2}, "a CPU-less head, a node at its own address"

    ids = write_cases(tmp_path / "in.jsonl", 10, extra=['{"id": "not-json", '], every=5)
    ray = bulk(tmp_path / "in.jsonl", tmp_path / "ray.jsonl", "--engine", "ray", "--ray-address",
               address, "--workers", "2", timeout=240)
    local = bulk(tmp_path / "in.jsonl", tmp_path / "local.jsonl", "--workers", "1")
    assert ray.returncode == 0 and local.returncode == 0, ray.stderr[-3000:] + local.stderr
    r = {k: comparable(v) for k, v in by_id(read_out(tmp_path / "ray.jsonl")).items()}
    lo = {k: comparable(v) for k, v in by_id(read_out(tmp_path / "local.jsonl")).items()}
    assert set(ids) <= set(r) and len(r) == 11
    assert r == lo, "every item was traced on the other host exactly as locally"


def test_sigterm_stops_a_ray_run_as_it_stops_a_local_one(tmp_path: Path) -> None:
    """ray.init puts in its own SIGTERM handler (exit 15, a stack dump, no word on how to finish);
    the run keeps bulk's: exit 143, "rerun with --resume", within the stop grace."""
    from server.bulk import STOP_GRACE_S

    write_cases(tmp_path / "in.jsonl", 400)
    out = tmp_path / "out.jsonl"
    code, err, waited = sigterm_after(out, 2, tmp_path / "in.jsonl", out, "--engine", "ray", "--workers", "1")
    assert code == 143 and waited < STOP_GRACE_S + 10, (code, waited, err[-2000:])
    assert "rerun with --resume to finish" in err, err[-2000:]
