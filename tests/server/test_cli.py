"""`source-tracer trace` as a user runs it (subprocess), plus config precedence."""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import pytest

from server.config import ConfigError, Limits, load_config
from tests.server.conftest import EN_RECORDS, EN_REPORT, PYTHON, REPO, ZH_RECORDS, ZH_REPORT, strip_markers


def run_cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [PYTHON, "-m", "server.cli", *args], cwd=REPO, input=stdin, capture_output=True, timeout=120
    )


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {
        "en_report": tmp_path / "en.md",
        "en_records": tmp_path / "en.json",
        "zh_report": tmp_path / "zh.md",
        "zh_records": tmp_path / "zh.jsonl",
    }
    out["en_report"].write_text(EN_REPORT, encoding="utf-8")
    out["en_records"].write_text(json.dumps(EN_RECORDS), encoding="utf-8")
    out["zh_report"].write_text(ZH_REPORT, encoding="utf-8")
    out["zh_records"].write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in ZH_RECORDS), "utf-8")
    return out


def test_version_is_the_installed_packages() -> None:
    from importlib.metadata import version

    r = run_cli("--version")
    assert r.returncode == 0
    assert r.stdout.decode().strip() == f"source-tracer {version('source-tracer')}"


def test_a_trace_without_a_model_never_loads_the_openai_client(files) -> None:
    code = ("import sys; from server.cli import main; rc = main(); "
            "print('openai' in sys.modules, 'httpx2' in sys.modules, file=sys.stderr); sys.exit(rc)")
    r = subprocess.run([PYTHON, "-c", code, "trace", str(files["en_report"]), str(files["en_records"]),
                        "-o", str(files["en_report"].with_suffix(".out.md"))],
                       cwd=REPO, capture_output=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    assert r.stderr.decode().splitlines()[-1] == "False False"
    assert "[1]" in files["en_report"].with_suffix(".out.md").read_text(encoding="utf-8")


def test_trace_markdown(files) -> None:
    proc = run_cli("trace", str(files["en_report"]), str(files["en_records"]))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert "[1]" in out and "## References" in out
    assert strip_markers(out).startswith(strip_markers(EN_REPORT).rstrip("\n"))


def test_show_unsupported_lists_them_on_stderr_with_the_closest_record(files) -> None:
    quiet = run_cli("trace", str(files["en_report"]), str(files["en_records"]))
    shown = run_cli("trace", str(files["en_report"]), str(files["en_records"]), "--show-unsupported")
    assert shown.returncode == 0 and shown.stdout == quiet.stdout, "stdout (the report) is unchanged"
    assert b"unsupported" not in quiet.stderr
    lines = shown.stderr.decode().splitlines()
    assert any(ln.startswith("unsupported: chars 27-67 'Norway is a leader in electric mobility.'")
               and "closest: record 0 'Norway EV sales 2023', score 0." in ln for ln in lines), lines
    assert any("moon" in ln and "closest" not in ln for ln in lines), lines


def test_timeout_with_a_slow_model_degrades_and_a_tiny_one_fails(files) -> None:
    from tests.fake_openai import FakeOpenAI, Reply, match_json

    with FakeOpenAI([Reply(match_json({}), delay=30.0)]) as srv:
        llm = ("--llm-base-url", srv.base_url, "--llm-model", "m", "--llm-api-key", "k")
        slow = run_cli("trace", str(files["en_report"]), str(files["en_records"]), "--timeout", "2", *llm)
    assert slow.returncode == 0, slow.stderr
    assert "[1]" in slow.stdout.decode(), "traced without the model"
    assert b"LLM matching failed (no time left before the call's deadline)" in slow.stderr
    tiny = run_cli("trace", str(files["en_report"]), str(files["en_records"]), "--timeout", "0.000001")
    assert tiny.returncode == 1 and b"timed out after 1e-06 s (--timeout)" in tiny.stderr
    bad = run_cli("trace", str(files["en_report"]), str(files["en_records"]), "--timeout", "-1")
    assert bad.returncode == 2 and b"--timeout: must be >= 0" in bad.stderr


def test_trace_json_has_proto_names_and_defaults(files) -> None:
    proc = run_cli("trace", str(files["zh_report"]), str(files["zh_records"]), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc) >= {"report", "citations", "references", "unsupported", "removed_references",
                        "stats", "warnings", "degraded", "mode", "id", "status"}
    assert doc["removed_references"] == "" and doc["degraded"] is False  # defaults printed
    src = doc["citations"][0]["sources"][0]
    assert isinstance(src["evidence_start"], int) and isinstance(src["record_index"], int)
    assert "stage_ms" in doc["stats"] and isinstance(doc["stats"]["sentences"], int)


def test_trace_stdin_and_output_file(files, tmp_path: Path) -> None:
    out = tmp_path / "out.md"
    proc = run_cli("trace", "-", str(files["en_records"]), "-o", str(out),
                   stdin=EN_REPORT.encode())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b""
    assert "[1]" in out.read_text(encoding="utf-8")


def test_a_full_disk_error_names_the_file_that_could_not_be_written(files, tmp_path: Path) -> None:
    """/dev/full fails every write with ENOSPC: the error names that file, not the one written."""
    out = tmp_path / "out.md"
    proc = run_cli("trace", str(files["en_report"]), str(files["en_records"]), "-o", str(out),
                   "--refs-out", "/dev/full")
    assert proc.returncode == 2
    assert b"output '/dev/full': cannot write: No space left on device" in proc.stderr
    assert not out.exists()   # the side file is written first: a failed run leaves no whole-looking report
    proc = run_cli("trace", str(files["en_report"]), str(files["en_records"]), "-o", "/dev/full")
    assert proc.returncode == 2 and b"output '/dev/full': cannot write" in proc.stderr


def test_trace_keeps_a_byte_order_mark_and_the_front_matter_after_it(files, tmp_path: Path) -> None:
    report = tmp_path / "bom.md"
    text = "---\ntitle: Norway\n---\n\n" + EN_REPORT
    report.write_bytes(b"\xef\xbb\xbf" + text.encode())
    proc = run_cli("trace", str(report), str(files["en_records"]))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(b"\xef\xbb\xbf---\ntitle: Norway\n---\n")
    assert strip_markers(proc.stdout.decode()[1:]).startswith(strip_markers(text).rstrip("\n"))
    assert b"[1]" in proc.stdout


def test_trace_options_are_passed(files) -> None:
    proc = run_cli("trace", str(files["en_report"]), str(files["en_records"]), "--placement", "after",
                   "--references-heading", "Sources", "--max-sources", "1")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert "Sources" in out and ".[1]" in out


def test_strict_figures_flag(tmp_path: Path) -> None:
    report = tmp_path / "r.md"
    report.write_text("In the first half of 2019, Supor reported revenue of 8.849 billion yuan, up 25.27% "
                      "year on year.\n", encoding="utf-8")
    records = tmp_path / "r.json"
    records.write_text(json.dumps([{"url": "https://a.example/supor", "title": "Supor results", "content": (
        "According to the flash report, Supor posted revenue of 8.849 billion yuan in the first half of "
        "2018, up 25.27% year on year. The company plans to expand.")},
        {"url": "https://b.example/weather", "title": "Weather",
         "content": "Rain is expected over the county this week, with cooler nights."}]), encoding="utf-8")
    lenient = run_cli("trace", str(report), str(records), "--format", "json")
    strict = run_cli("trace", str(report), str(records), "--format", "json", "--strict-figures")
    assert lenient.returncode == strict.returncode == 0, strict.stderr
    assert json.loads(lenient.stdout)["citations"] and not json.loads(strict.stdout)["citations"]


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda d: (d / "missing.md", d / "r.json"), "missing.md"),
        (lambda d: (_write(d / "bad.md", b"ok \xff\xfe here"), d / "r.json"), "invalid UTF-8 at byte 3"),
        (lambda d: (d / "ok.md", _write(d / "bad.json", b'[{"url": ')), "bad.json"),
        (lambda d: (d / "ok.md", _write(d / "deep.json", b"[" * 100_000 + b"]" * 100_000)), "deep.json"),
        (lambda d: (d / "ok.md", _write(d / "scalar.json", b"42")), "scalar.json"),
        (lambda d: (d / "ok.md", _write(d / "bin.json", b"\x00\x81\x82")), "invalid UTF-8"),
        # an object of no known shape, read when the trace starts
        (lambda d: (d / "ok.md", _write(d / "obj.json", b'{"foo": "bar"}')), "obj.json': expected a list"),
    ],
)
def test_bad_input_exits_2_naming_the_file(tmp_path: Path, make, needle, capsys) -> None:
    (tmp_path / "ok.md").write_text("Hello.", encoding="utf-8")
    (tmp_path / "r.json").write_text("[]", encoding="utf-8")
    report, records = make(tmp_path)
    code, err = run_main("trace", str(report), str(records), capsys=capsys)
    assert code == 2, err
    assert needle in err


def test_invalid_option_exits_2(files, capsys) -> None:
    code, err = run_main("trace", str(files["en_report"]), str(files["en_records"]), "--max-sources", "0",
                         capsys=capsys)
    assert code == 2
    assert "options.max_sources" in err


def run_main(*args: str, capsys) -> tuple[int, str]:
    """In-process `main()` (what the console script calls) for the fast error-path cases."""
    from server.cli import main

    code = main(list(args))
    return code, capsys.readouterr().err


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# ---- config precedence: flags > env > file ---------------------------------------------------


def _args(**kw: object) -> argparse.Namespace:
    from server.config import add_serve_arguments

    p = argparse.ArgumentParser()
    add_serve_arguments(p)
    argv: list[str] = []
    for k, v in kw.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    return p.parse_args(argv)


def test_config_precedence(tmp_path: Path) -> None:
    cfg_file = tmp_path / "st.toml"
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    cfg_file.write_text(
        '[server]\nport = 6000\nmax_in_flight = 7\nhost = "0.0.0.0"\n'
        "[limits]\nrecords = 10\nreport_chars = 99\n"
        f'[auth]\ntoken_file = "{token}"\n'
        '[llm]\nmodel = "m"\n'
    )
    cfg = load_config(_args(config=cfg_file), env={})
    assert (cfg.port, cfg.max_in_flight, cfg.host) == (6000, 7, "0.0.0.0")
    assert cfg.limits == Limits(records=10, report_chars=99)
    assert cfg.auth_token == "s3cret" and cfg.llm == {"model": "m"}
    env = {"SOURCE_TRACER_PORT": "7000", "SOURCE_TRACER_LIMIT_RECORDS": "20",
           "SOURCE_TRACER_CONFIG": str(cfg_file)}
    cfg = load_config(_args(), env=env)
    assert (cfg.port, cfg.limits.records, cfg.max_in_flight) == (7000, 20, 7)
    cfg = load_config(_args(port=8000), env=env)
    assert cfg.port == 8000
    assert load_config(None, env={}).host == "127.0.0.1"
    env["SOURCE_TRACER_WORKER_MODE"] = "thread"
    cfg = load_config(_args(workers=3), env=env)
    assert (cfg.workers, cfg.worker_mode) == (3, "thread")
    assert load_config(_args(worker_mode="process"), env=env).worker_mode == "process"
    assert load_config(None, env={}).worker_mode == "auto"


@pytest.mark.parametrize(
    ("toml", "needle"),
    [
        ("[server]\nport = 70000\n", "server.port"),
        ("[limits]\nrecords = 0\n", "limits.records"),
        ("[limits]\nbogus = 1\n", "limits.bogus"),
        ("[server]\nport = 'x'\n", "port"),
        ("[server]\nworker_mode = 'fibers'\n", "server.worker_mode"),
        ("[server]\nworkers = -1\n", "server.workers"),
        ("[tls]\ncert = 'a'\n", "tls"),
        ("[nope]\na = 1\n", "[nope]"),
        ("[sever]\n", "unknown section [sever]"),    # a typo, even with nothing in it
        ("workers = 2\n[server]\n", "workers is a key outside any section"),
        ("not toml [", "invalid TOML"),
        ("[server]\ngrace = nan\n", "server.grace: must be 0..86400"),
        ("[server]\ngrace = inf\n", "server.grace: must be 0..86400"),
        ("[server]\nworkers = 2.5\n", "server.workers: expected int, got 2.5"),
        ("[server]\nmetrics_port = 70000\n", "server.metrics_port: must be 0..65535"),
        ("[server]\nmetrics_port = -5\n", "server.metrics_port: must be 0..65535"),
        ("[server]\nhost = 5\n", "server.host: expected str, got 5"),
        ("[tls]\ncert = 5\n", "tls.cert: expected str, got 5"),
        # an auth secret templated empty would open the service without a word
        ('[auth]\ntoken = ""\n', "auth.token: is empty"),
        ('[auth]\ntoken_file = " "\n', "auth.token_file: is empty"),
        ('[auth]\nbogus = "x"\n', "auth.bogus: unknown auth key (known: token, token_file)"),
    ],
)
def test_bad_config_names_the_key(tmp_path: Path, toml: str, needle: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as err:
        load_config(_args(config=path), env={})
    assert needle in str(err.value)


def test_an_auth_token_set_empty_in_the_environment_is_refused() -> None:
    for name in ("SOURCE_TRACER_AUTH_TOKEN", "SOURCE_TRACER_AUTH_TOKEN_FILE"):
        with pytest.raises(ConfigError, match=f"{name}: is empty"):
            load_config(None, env={name: ""})


def test_a_whole_float_is_a_count_and_env_values_are_checked_alike(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[server]\nworkers = 2.0\n")
    assert load_config(_args(config=path), env={}).workers == 2
    for key, value, needle in (("GRACE", "nan", "server.grace"),
                               ("METRICS_PORT", "70000", "server.metrics_port")):
        with pytest.raises(ConfigError, match=needle):
            load_config(None, env={f"SOURCE_TRACER_{key}": value})


def test_an_environment_value_is_named_by_its_variable_and_a_range_by_every_source() -> None:
    with pytest.raises(ConfigError, match="SOURCE_TRACER_WORKERS: expected int, got 'abc'"):
        load_config(None, env={"SOURCE_TRACER_WORKERS": "abc"})
    with pytest.raises(ConfigError, match="SOURCE_TRACER_LIMIT_RECORDS: expected int"):
        load_config(None, env={"SOURCE_TRACER_LIMIT_RECORDS": "x"})
    with pytest.raises(ConfigError, match=r"server.grace: .* \(set by --grace, SOURCE_TRACER_GRACE or "
                                          r"\[server\] grace\)"):
        load_config(None, env={"SOURCE_TRACER_GRACE": "-1"})
    with pytest.raises(ConfigError) as err:  # no --stream-concurrency flag to name
        load_config(None, env={"SOURCE_TRACER_STREAM_CONCURRENCY": "-1"})
    assert "(set by SOURCE_TRACER_STREAM_CONCURRENCY or [server] stream_concurrency)" in str(err.value)


def test_trace_timeout_must_be_a_number_of_seconds(files, capsys) -> None:
    code, err = run_main("trace", str(files["en_report"]), str(files["en_records"]), "--timeout", "nan",
                         capsys=capsys)
    assert code == 2 and "--timeout: must be >= 0 seconds, got nan" in err


def test_serve_bad_config_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[limits]\nrecords = -1\n")
    proc = run_cli("serve", "--config", str(path))
    assert proc.returncode == 2
    assert "limits.records" in proc.stderr.decode()


def test_invalid_utf8_exit_code_of_the_real_process(tmp_path: Path) -> None:
    report = _write(tmp_path / "latin1.md", "Café résumé.".encode("latin-1"))
    records = _write(tmp_path / "r.json", b"[]")
    proc = run_cli("trace", str(report), str(records))
    err = proc.stderr.decode()
    assert proc.returncode == 2
    assert "latin1.md" in err and "invalid UTF-8 at byte 3" in err
    assert "Traceback" not in err


def test_serve_on_a_taken_port_fails_cleanly() -> None:
    from tests.server.conftest import SubprocessServer

    first = SubprocessServer()
    try:
        proc = run_cli("serve", "--port", str(first.port))
        err = proc.stderr.decode()
        assert proc.returncode == 1
        assert f"cannot listen on 127.0.0.1:{first.port}" in err and "Traceback" not in err
    finally:
        first.close()


def test_serve_warns_at_start_when_its_model_does_not_answer() -> None:
    """A configured model that is down does not stop the server (traces degrade to the
    deterministic engine), but the operator is told at start-up rather than by slow traces."""
    from tests.fake_openai import free_port
    from tests.server.conftest import SubprocessServer, wait_until

    srv = SubprocessServer(env={"OPENAI_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",
                                "SOURCE_TRACER_LLM_MODEL": "some-model"})
    try:
        serving = next(e for e in srv.logs if e.get("event") == "serving")
        assert serving["llm"] is True
        wait_until(lambda: any(e.get("event") == "llm endpoint not answering" for e in srv.logs),
                   timeout=30, what="the start-up warning")
        warning = next(e for e in srv.logs if e.get("event") == "llm endpoint not answering")
        assert warning["level"] == "warning" and warning["error"].startswith("cannot connect")
    finally:
        srv.close()


def test_trace_prints_the_engines_log_lines_readably(files: dict[str, Path]) -> None:
    """A one-shot command shows the engine's warnings as `source-tracer: event (key=value)`,
    not as JSON and not as Python's bare last-resort line ("llm structured output refused")."""
    from tests.fake_openai import FakeOpenAI
    from tests.server.test_llm_client import refusing

    with FakeOpenAI(refusing("json_schema")) as model:
        r = run_cli("trace", str(files["en_report"]), str(files["en_records"]),
                    "--llm-base-url", model.base_url, "--llm-model", "m")
    err = r.stderr.decode()
    assert r.returncode == 0, err
    lines = [ln for ln in err.splitlines() if "structured output refused" in ln]
    assert lines and all(ln.startswith("source-tracer: llm structured output refused (") for ln in lines), err
    assert "refused=json_schema" in lines[0] and "now=json_object_schema" in lines[0]


def test_serve_with_its_metrics_port_taken_fails_cleanly() -> None:
    """The metrics endpoint starts before the gRPC server: a taken port is a clean start-up
    error (exit 1, no traceback), and nothing is left serving."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = run_cli("serve", "--port", "0", "--metrics-port", str(port), "--workers", "1")
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert f"cannot serve metrics on 127.0.0.1:{port}: Address already in use" in err
    assert "Traceback" not in err and "never awaited" not in err
