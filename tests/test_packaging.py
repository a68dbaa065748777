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


# The server, started from the unpacked wheel only (same import-path trick as _PROBE).
_SERVE = """
import os, sys
target, checkout = sys.argv[1], os.path.realpath(sys.argv[2])
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__.lower()
                    and "editable" not in getattr(f, "__name__", "").lower()]
sys.path[:] = [target] + [p for p in sys.path if p and os.path.realpath(p) != checkout]
import server.cli
assert server.cli.__file__.startswith(target), server.cli.__file__
sys.exit(server.cli.main(sys.argv[3:]))
"""


def _dockerfile() -> tuple[list[str], dict[str, str], str, list[str]]:
    """COPY sources, ENV, WORKDIR and ENTRYPOINT + CMD of the Dockerfile (the forms it uses)."""
    import json
    import shlex

    copies: list[str] = []
    env: dict[str, str] = {}
    workdir, entry, cmd = "/", [], []
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    for line in text.splitlines():
        word, _, rest = line.strip().partition(" ")
        if word == "COPY":
            copies += shlex.split(rest)[:-1]
        elif word == "ENV":
            env.update(kv.split("=", 1) for kv in shlex.split(rest))
        elif word == "WORKDIR":
            workdir = rest.strip()
        elif word == "ENTRYPOINT":
            entry = json.loads(rest)
        elif word == "CMD":
            cmd = json.loads(rest)
    return copies, env, workdir, entry + cmd


def test_the_dockerfile_build_context_installs_and_serves(tmp_path: Path) -> None:
    """What `docker build` and `docker run` would do, minus the base image (no Docker engine
    here): only the files the Dockerfile COPYs make the package, which then serves with the
    Dockerfile's ENV, WORKDIR and ENTRYPOINT/CMD, answers a health check and a trace."""
    import os
    import shutil
    import socket

    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    copies, env, workdir, argv = _dockerfile()
    assert argv[:2] == ["source-tracer", "serve"] and workdir == "/app"
    app = tmp_path / "app"
    app.mkdir()
    for src in copies:
        (shutil.copytree if (ROOT / src).is_dir() else shutil.copy2)(ROOT / src, app / src)
    wheels = tmp_path / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels),
         str(app)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, "the COPYed files alone must build the package:\n" + built.stderr[-3000:]
    (wheel,) = wheels.glob("source_tracer-*.whl")
    target = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(target)

    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    args = [a.replace("50051", str(ports[0])).replace("9464", str(ports[1])) for a in argv[2:]]
    run_env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCE_TRACER_", "OPENAI_"))}
    run_env.update({k: v.replace("/app", str(app)) for k, v in env.items()})
    proc = subprocess.Popen([sys.executable, "-c", _SERVE, str(target), str(ROOT), "serve", *args],
                            cwd=app, env=run_env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    failure: BaseException | None = None
    try:
        channel = grpc.insecure_channel(f"127.0.0.1:{ports[0]}")
        grpc.channel_ready_future(channel).result(timeout=60)
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=30)
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        from server.pb.source_tracer.v1 import tracer_pb2 as pb
        from server.pb.source_tracer.v1 import tracer_pb2_grpc

        resp = tracer_pb2_grpc.SourceTracerStub(channel).Trace(pb.TraceRequest(
            report="In 2023, battery electric vehicles accounted for 82.4% of new car sales in Norway.\n",
            records=[pb.Record(url="https://example.org/ev", title="EVs", content=(
                "In 2023, battery electric vehicles accounted for 82.4% of new car sales in Norway."))]),
            timeout=60)
        assert resp.citations and resp.references[0].url == "https://example.org/ev"
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{ports[1]}/metrics", timeout=10) as page:
            assert b"source_tracer_requests_total" in page.read()
        channel.close()
    except BaseException as exc:  # re-raised below with the server's log
        failure = exc
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    if failure is not None:  # say what the server said, so a failure under load can be read
        raise AssertionError(f"{failure!r}; the server's log:\n{err[-3000:]}") from failure
    assert proc.returncode == 0, err[-3000:]
    assert '"event":"serving"' in err.replace(" ", "") and '"host":"0.0.0.0"' in err.replace(" ", "")
