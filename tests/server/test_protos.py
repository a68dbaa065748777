"""The committed stubs in server/pb are exactly what scripts/gen-protos produces now."""

from __future__ import annotations

import filecmp
import subprocess
import sys
from pathlib import Path

from tests.server.conftest import REPO


def test_generated_stubs_are_fresh(tmp_path: Path) -> None:
    out = tmp_path / "pb"
    subprocess.run(
        [str(REPO / "scripts" / "gen-protos"), str(out)],
        cwd=REPO, check=True, env={"PYTHON": sys.executable, "PATH": "/usr/bin:/bin"},
    )
    committed = REPO / "server" / "pb" / "source_tracer" / "v1"
    fresh = out / "source_tracer" / "v1"
    names = ["tracer_pb2.py", "tracer_pb2.pyi", "tracer_pb2_grpc.py"]
    for name in names:
        assert (fresh / name).read_bytes() == (committed / name).read_bytes(), (
            f"server/pb/source_tracer/v1/{name} is stale: run scripts/gen-protos"
        )
    match, mismatch, errors = filecmp.cmpfiles(committed, fresh, names, shallow=False)
    assert match == names and not mismatch and not errors
