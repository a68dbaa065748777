"""`bulk --engine ray`: Ray Data on a local Ray (2 CPUs) gives the local engine's output."""

from __future__ import annotations

import json
from pathlib import Path

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
