"""The wheel is complete: installed from it (not from this checkout), the package finds its
prompts and its generated stubs."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Runs in a fresh interpreter: drop the editable install's finder and this checkout from the
# import path so that every `tracer`/`server` import comes from the unpacked wheel.
_PROBE = """
import os, sys
target, checkout = sys.argv[1], os.path.realpath(sys.argv[2])
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__.lower()
                    and "editable" not in getattr(f, "__name__", "").lower()]
sys.path[:] = [target] + [p for p in sys.path if p and os.path.realpath(p) != checkout]
import tracer, server.pb.source_tracer.v1.tracer_pb2 as pb
from tracer.llm.prompts import DECLARED, PromptLibrary, default_prompts_dir
assert tracer.__file__.startswith(target), tracer.__file__
assert pb.__file__.startswith(target), pb.__file__
root = default_prompts_dir()
assert str(root).startswith(target), root
lib = PromptLibrary(root)
for name in DECLARED:
    lib.check(name)
print(root)
"""


def test_wheel_ships_prompts_and_stubs(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels),
         str(ROOT)],
        check=True, capture_output=True, timeout=300,
    )
    (wheel,) = wheels.glob("source_tracer-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for prompt in ("match/system.md", "match/user.md", "recognize/system.md", "recognize/user.md"):
        assert f"tracer/_prompts/{prompt}" in names
    target = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(target)
    out = subprocess.run([sys.executable, "-c", _PROBE, str(target), str(ROOT)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(target / "tracer" / "_prompts")
