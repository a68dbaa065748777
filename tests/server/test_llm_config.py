"""LLM configuration: flags > environment > config file [llm] > defaults; errors name their source."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from server.llm_client import (
    SETTINGS,
    LLMConfig,
    add_llm_arguments,
    backend_from_config,
    build_backend,
    resolve_config,
)
from server.workers import TimeLimit, deadline_reserve_of
from tracer.errors import InvalidInputError
from tracer.llm import ChatBackend, Strategy


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_llm_arguments(parser)
    return parser.parse_args(list(argv))


ENV = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "SOURCE_TRACER_LLM_MODEL": "env-model",
       "OPENAI_API_KEY": "sk-env"}


def test_unconfigured_means_no_backend() -> None:
    cfg = resolve_config(parse(), None, env={})
    assert not cfg.enabled
    assert not resolve_config(parse(), None, env={"OPENAI_BASE_URL": "http://x/v1"}).enabled  # no model


def test_a_model_half_configured_is_named_in_a_warning(capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in list(__import__("os").environ) if k.startswith(("OPENAI_", "SOURCE_TRACER_LLM"))]:
        monkeypatch.delenv(key)
    assert build_backend(parse("--llm-base-url", "http://127.0.0.1:9/v1"), None) is None
    err = capsys.readouterr().err
    assert "warning: the model is not used: --llm-base-url is set but not --llm-model" in err
    note = resolve_config(None, {"model": "m"}, env={}).unused_note()
    assert note is not None
    assert note.startswith("the model is not used: [llm] model is set but not --llm-base-url")
    # nothing to say: neither given, both given, disabled, or only the OPENAI_BASE_URL other tools set
    for cfg in (resolve_config(parse(), None, env={}), resolve_config(None, None, env=ENV),
                resolve_config(parse("--no-llm", "--llm-model", "m"), None, env={}),
                resolve_config(None, None, env={"OPENAI_BASE_URL": "http://x/v1"})):
        assert cfg.unused_note() is None


def test_environment_alone_enables_the_llm(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = resolve_config(None, None, env=ENV)
    assert cfg.enabled and cfg.model == "env-model" and cfg.api_key == "sk-env"
    for key in [k for k in list(__import__("os").environ) if k.startswith(("OPENAI_", "SOURCE_TRACER_LLM"))]:
        monkeypatch.delenv(key)
    assert build_backend(None, None) is None
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    assert isinstance(build_backend(None, None), ChatBackend)
    assert build_backend(parse("--no-llm"), None) is None


def test_flags_beat_environment_beat_file() -> None:
    file_cfg = {"model": "file-model", "timeout": 11, "top_k": 3, "strategy": "full", "max_concurrency": 2,
                "retries": 4, "recognize": False}
    env = dict(ENV, SOURCE_TRACER_LLM_TIMEOUT="22", SOURCE_TRACER_LLM_TOP_K="4")
    cfg = resolve_config(parse("--llm-timeout", "33", "--llm-max-calls", "7"), file_cfg, env=env)
    assert cfg.model == "env-model"                   # env over file
    assert cfg.settings.timeout == 33.0               # flag over env over file
    assert cfg.settings.top_k == 4                    # env over file
    assert cfg.settings.strategy is Strategy.FULL     # file over default
    assert cfg.settings.max_concurrency == 2 and cfg.settings.retries == 4
    assert cfg.settings.recognize is False
    assert cfg.settings.max_calls == 7
    assert cfg.base_url == "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(("argv", "env", "file_cfg", "reserve"), [
    ((), {}, {}, None),
    ((), {}, {"deadline_reserve": "auto"}, None),
    ((), {}, {"deadline_reserve": 3}, 3.0),
    ((), {"SOURCE_TRACER_LLM_DEADLINE_RESERVE": "1.5"}, {"deadline_reserve": 3}, 1.5),
    (("--llm-deadline-reserve", "AUTO"), {"SOURCE_TRACER_LLM_DEADLINE_RESERVE": "1.5"}, {}, None),
])
def test_deadline_reserve_is_auto_or_seconds(argv: tuple[str, ...], env: dict[str, str],
                                             file_cfg: dict[str, object], reserve: float | None) -> None:
    cfg = resolve_config(parse(*argv), file_cfg, env=dict(ENV, **env))
    assert cfg.settings.deadline_reserve == reserve
    # the service, trace --timeout and bulk --timeout keep exactly that much from the model
    limit = TimeLimit(10.0, deadline_reserve_of(backend_from_config(cfg)))
    kept = limit.at - limit.llm_deadline
    assert kept == pytest.approx(2.0 if reserve is None else reserve, abs=0.01)


def test_min_score_is_auto_or_a_score() -> None:
    assert resolve_config(None, {}, env=ENV).settings.min_score is None
    cfg = resolve_config(parse("--llm-min-score", "0.4"), {"min_score": "auto"}, env=ENV)
    assert cfg.settings.min_score == 0.4 and backend_from_config(cfg).min_score == 0.4


def test_keep_score_is_off_or_a_score() -> None:
    assert resolve_config(None, {}, env=ENV).settings.keep_score == 0.9
    cfg = resolve_config(parse("--llm-keep-score", "OFF"), {"keep_score": 0.95}, env=ENV)
    assert cfg.settings.keep_score is None and backend_from_config(cfg).keep_score is None
    assert resolve_config(None, {"keep_score": 1}, env=ENV).settings.keep_score == 1.0
    with pytest.raises(InvalidInputError, match=r"llm.keep_score: must be 'off' or a score in 0..1, got 2.0"):
        resolve_config(None, {"keep_score": 2}, env=ENV)
    with pytest.raises(InvalidInputError, match=r"--llm-keep-score: must be 'off' or a number, got 'auto'"):
        resolve_config(parse("--llm-keep-score", "auto"), None, env=ENV)


def test_tool_specific_variables_beat_openai_ones() -> None:
    env = dict(ENV, SOURCE_TRACER_LLM_BASE_URL="http://127.0.0.1:8/v1", SOURCE_TRACER_LLM_API_KEY="sk-st")
    cfg = resolve_config(None, None, env=env)
    assert cfg.base_url == "http://127.0.0.1:8/v1" and cfg.api_key == "sk-st"


def test_api_key_file(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_text("sk-from-file\n", encoding="utf-8")
    cfg = resolve_config(parse("--llm-api-key-file", str(key)), None,
                         env={k: v for k, v in ENV.items() if k != "OPENAI_API_KEY"})
    assert cfg.api_key == "sk-from-file"
    with pytest.raises(InvalidInputError, match="llm.api_key_file"):
        resolve_config(parse("--llm-api-key-file", str(tmp_path / "missing")), None, env={})


@pytest.mark.parametrize(("key", "why"), [
    ("sk-SECRET123\n# staging key\n", "holds a line break"),
    ("sk-SECRET123\x00", "control character"),
    ("sk-SECRÉT123", "not ASCII"),
    ("sk-SECRET 123", "space"),
])
def test_a_key_no_header_can_carry_is_refused_without_quoting_it(tmp_path: Path, key: str, why: str) -> None:
    """Sent, httpx would refuse it at each call with a message quoting the Authorization header,
    and that message reached every warning, response and log line."""
    path = tmp_path / "key"
    path.write_text(key, encoding="utf-8")
    env = {k: v for k, v in ENV.items() if k != "OPENAI_API_KEY"}
    for argv, field in (("--llm-api-key-file", str(path)), "llm.api_key_file"), \
                       (("--llm-api-key", key), "--llm-api-key"):
        with pytest.raises(InvalidInputError, match=f"{field}.*{why}") as caught:
            resolve_config(parse(*argv, "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m"),
                           None, env=env)
        assert "SECRET" not in str(caught.value)
    with pytest.raises(InvalidInputError, match=f"llm.api_key.*{why}") as caught:
        LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", api_key=key)
    assert "SECRET" not in str(caught.value)


@pytest.mark.parametrize("argv,env,file_cfg,needle", [
    (["--llm-timeout", "soon"], {}, {}, "--llm-timeout: must be a number"),
    ([], {"SOURCE_TRACER_LLM_MAX_CONCURRENCY": "many"}, {}, "SOURCE_TRACER_LLM_MAX_CONCURRENCY"),
    ([], {}, {"retries": "x"}, r"\[llm\] retries"),
    ([], {}, {"top_k": 2.5}, r"\[llm\] top_k: must be an integer"),
    ([], {}, {"colour": "blue"}, r"\[llm\] colour: unknown key"),
    (["--llm-strategy", "random"], {}, {}, "llm.strategy"),
    (["--llm-base-url", "ftp://x"], {}, {}, "llm.base_url"),
    (["--llm-top-k", "0"], {}, {}, "llm.top_k"),
    ([], {"SOURCE_TRACER_LLM_RECOGNIZE": "maybe"}, {}, "SOURCE_TRACER_LLM_RECOGNIZE"),
    (["--llm-max-output-tokens", "-1"], {}, {}, "llm.max_output_tokens: must be within 0..10000000"),
    ([], {}, {"output_tokens_field": "n_predict"},
     "llm.output_tokens_field: must be one of max_tokens, max_completion_tokens"),
    (["--llm-structured-output", "grammar"], {}, {}, "llm.structured_output: must be one of auto, none, "),
    (["--llm-deadline-reserve", "soon"], {}, {},
     "--llm-deadline-reserve: must be 'auto' or a number"),
    ([], {}, {"deadline_reserve": -1},
     r"llm.deadline_reserve: must be 'auto' or a number of seconds in 0..3600"),
    ([], {}, {"deadline_reserve": True}, r"\[llm\] deadline_reserve: must be 'auto'"),
    (["--llm-min-score", "1.5"], {}, {}, r"llm.min_score: must be 'auto' or a score in 0..1, got 1.5"),
    ([], {"SOURCE_TRACER_LLM_MIN_SCORE": "high"}, {},
     "SOURCE_TRACER_LLM_MIN_SCORE: must be 'auto' or a number"),
])
def test_bad_values_name_their_source(argv: list[str], env: dict[str, str], file_cfg: dict[str, object],
                                      needle: str) -> None:
    with pytest.raises(InvalidInputError, match=needle):
        resolve_config(parse(*argv), file_cfg, env=env)


def test_every_setting_has_a_flag_an_env_variable_and_is_documented() -> None:
    parser = argparse.ArgumentParser()
    add_llm_arguments(parser)
    help_text = parser.format_help()
    doc = (Path(__file__).resolve().parents[2] / "docs" / "llm.md").read_text(encoding="utf-8")
    for s in SETTINGS:
        flag = "--no-llm" if s.key == "enabled" else f"--llm-{s.key.replace('_', '-')}"
        assert flag in help_text
        assert s.env, s.key
        for name in (flag, *s.env, f"`{s.key}`"):
            assert name in doc, name


def test_missing_prompts_directory_is_a_config_error_saying_how_to_fix_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from server.config import ConfigError

    monkeypatch.setenv("SOURCE_TRACER_PROMPTS_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(ConfigError, match="SOURCE_TRACER_PROMPTS_DIR"):
        build_backend(None, {"base_url": "http://127.0.0.1:9/v1", "model": "m"})
