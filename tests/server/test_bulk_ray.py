"""`bulk --engine ray`: Ray Data on a local Ray (2 CPUs), and on a two-node cluster joined with
token authentication, gives the local engine's output."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from bulk_cases import comparable, read_out, write_cases
from test_bulk import bulk, by_id


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


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture()
def two_node_cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A real two-node Ray cluster on this host: a head with no CPUs (so no task can run there)
    and a second node with 2, joined over the network with token authentication, as on a
    multi-machine cluster. Yields the head's address."""
    import secrets

    ray_cli = str(Path(sys.executable).parent / "ray")
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.setenv("RAY_AUTH_TOKEN", secrets.token_hex(32))
    address = f"127.0.0.1:{_free_port()}"

    def ray(*args: str) -> None:
        done = subprocess.run([ray_cli, *args], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]

    try:
        ray("start", "--head", "--port", address.rsplit(":", 1)[1], "--num-cpus", "0",
            "--include-dashboard", "false", "--disable-usage-stats")
        ray("start", "--address", address, "--num-cpus", "2", "--disable-usage-stats")
        yield address
    finally:
        subprocess.run([ray_cli, "stop", "--force"], capture_output=True, timeout=120)


def test_ray_engine_on_a_two_node_cluster(two_node_cluster: str, tmp_path: Path) -> None:
    code = (f"import json, ray; ray.init(address={two_node_cluster!r}, logging_level='ERROR'); "
            "print(json.dumps(sorted(n['Resources'].get('CPU', 0) for n in ray.nodes() if n['Alive'])))")
    probe = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert probe.returncode == 0, probe.stderr[-3000:]
    cpus = json.loads(probe.stdout.strip().splitlines()[-1])
    assert cpus == [0, 2], "a head without CPUs and one worker node"

    ids = write_cases(tmp_path / "in.jsonl", 10, extra=['{"id": "not-json", '], every=5)
    ray = bulk(tmp_path / "in.jsonl", tmp_path / "ray.jsonl", "--engine", "ray", "--ray-address",
               two_node_cluster, "--workers", "2", timeout=240)
    local = bulk(tmp_path / "in.jsonl", tmp_path / "local.jsonl", "--workers", "1")
    assert ray.returncode == 0 and local.returncode == 0, ray.stderr[-3000:] + local.stderr
    r = {k: comparable(v) for k, v in by_id(read_out(tmp_path / "ray.jsonl")).items()}
    lo = {k: comparable(v) for k, v in by_id(read_out(tmp_path / "local.jsonl")).items()}
    assert set(ids) <= set(r) and len(r) == 11
    assert r == lo, "every item was traced on the second node exactly as locally"
