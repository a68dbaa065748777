"""OpenAI-compatible LLM backend wiring for the CLI and the service (docs/llm.md).

`add_llm_arguments(parser)` adds the `--llm-*` flags; `build_backend(args, file_config_llm)`
resolves the configuration (flags > environment > config file `[llm]` section > defaults) and
returns a `tracer.llm.ChatBackend` over `server.openai_chat.OpenAIChatClient`, or None when no
model is configured (base URL and model are both required) or the LLM is disabled. openai itself
is imported only then.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from server.config import ConfigError
from server.logs import log
from tracer.errors import InvalidInputError
from tracer.llm import (
    ChatBackend,
    LLMSettings,
    PromptError,
    ReplySchema,
    Strategy,
)

if TYPE_CHECKING:
    from tracer.pipeline import LLMBackend


class LLMConfigError(InvalidInputError, ConfigError):
    """A bad LLM setting; the message names where it came from (flag, variable or [llm] key)."""


@dataclass(frozen=True, slots=True)
class Setting:
    key: str                      # config-file key and LLMConfig attribute
    kind: Callable[[str], Any]    # parser for flag/env strings
    help: str
    env: tuple[str, ...] = ()     # environment variables, first wins


def _bool(text: str) -> bool:
    low = str(text).strip().lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"not a boolean: {text!r}")


def _word_or_number(word: str) -> Callable[[Any], float | None]:
    """A parser for settings that are `word` (None) or a number."""
    def parse(text: Any) -> float | None:
        if isinstance(text, str) and text.strip().lower() == word:
            return None
        if isinstance(text, bool):
            raise ValueError(text)
        return float(text)
    return parse


_auto_or_number = _word_or_number("auto")  # auto: the built-in rule or the request's value
_off_or_number = _word_or_number("off")


def _env(key: str) -> tuple[str, ...]:
    return (f"SOURCE_TRACER_LLM_{key.upper()}",)


_D = LLMSettings()
# A matching reply lists a few ids per sentence of a chunk: a few hundred tokens. The cap stops a
# model that never ends its reply (a base model, a runaway) from generating to its context limit.
MAX_OUTPUT_TOKENS = 4096
OUTPUT_TOKENS_FIELDS = ("max_tokens", "max_completion_tokens")
STRUCTURED_OUTPUTS = ("auto", "none", "json_object", "json_schema", "json_object_schema")
# What `auto` tries, best first: the next form after one the server refuses (docs/llm.md).
FORM_LADDER = ("json_schema", "json_object_schema", "json_object", "none")

SETTINGS: tuple[Setting, ...] = (
    Setting("base_url", str, "OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1",
            ("SOURCE_TRACER_LLM_BASE_URL", "OPENAI_BASE_URL")),
    Setting("api_key", str, "API key (prefer the environment or --llm-api-key-file)",
            ("SOURCE_TRACER_LLM_API_KEY", "OPENAI_API_KEY")),
    Setting("api_key_file", str, "file holding the API key", _env("api_key_file")),
    Setting("model", str, "model name; with a base URL this enables the LLM", _env("model")),
    Setting("enabled", _bool, "false disables the LLM even when configured (default true)", _env("enabled")),
    Setting("strategy", str, f"matching strategy: chunked | full (default {_D.strategy.value})",
            _env("strategy")),
    Setting("recognize", _bool, "also use the model for recognition (default true)", _env("recognize")),
    Setting("timeout", float, f"seconds per call (default {_D.timeout:g})", _env("timeout")),
    Setting("max_concurrency", int,
            f"model calls in flight at once, all requests together (default {_D.max_concurrency})",
            _env("max_concurrency")),
    Setting("retries", int, f"retries after 429/5xx/timeout/connection errors (default {_D.retries})",
            _env("retries")),
    Setting("max_calls", int, f"per-request budget of calls, 0 = unlimited (default {_D.max_calls})",
            _env("max_calls")),
    Setting("max_tokens", int, f"per-request budget of tokens, 0 = unlimited (default {_D.max_tokens})",
            _env("max_tokens")),
    Setting("top_k", int, f"candidate passages per sentence shown to the model (default {_D.top_k})",
            _env("top_k")),
    Setting("chunk_passages", int, f"passages per matching call (default {_D.chunk_passages})",
            _env("chunk_passages")),
    Setting("chunk_sentences", int, f"sentences per matching call (default {_D.chunk_sentences})",
            _env("chunk_sentences")),
    Setting("recognize_batch", int, f"sentences per recognition call (default {_D.recognize_batch})",
            _env("recognize_batch")),
    Setting("deadline_reserve", _auto_or_number,
            "seconds of a request's deadline (gRPC deadline, --timeout) kept from the model for the "
            "deterministic path: auto | SECONDS (default auto: a fifth of the time, 0.5 to 5 s)",
            _env("deadline_reserve")),
    Setting("min_score", _auto_or_number,
            "support score a pair the model proposed needs to be cited: auto | SCORE in 0..1 (default auto: "
            "the request's min_score; lower trusts the model's reading more, see docs/llm.md)",
            _env("min_score")),
    Setting("keep_score", _off_or_number,
            "a sentence the model left uncited keeps deterministic citations scoring at least this: "
            "off | SCORE in 0..1 (default 0.9: a record stating it nearly word for word)",
            _env("keep_score")),
    Setting("temperature", float, "sampling temperature (default 0)", _env("temperature")),
    Setting("json_mode", _bool, "send response_format=json_object (default false)", _env("json_mode")),
    Setting("structured_output", str,
            "ask the server for replies of the parser's JSON Schema: auto | json_schema (OpenAI style) | "
            "json_object_schema (llama-cpp-python style) | json_object | none (default auto: the best "
            "form the server accepts; json_mode=true means json_object)", _env("structured_output")),
    Setting("max_output_tokens", int,
            f"cap on each reply's tokens, sent with every call; 0 = send none (default {MAX_OUTPUT_TOKENS})",
            _env("max_output_tokens")),
    Setting("output_tokens_field", str,
            "request field carrying that cap: max_tokens | max_completion_tokens (default max_tokens)",
            _env("output_tokens_field")),
)
_BY_KEY = {s.key: s for s in SETTINGS}
_TUNING = ("strategy", "recognize", "timeout", "max_concurrency", "retries", "max_calls", "max_tokens",
           "top_k", "chunk_passages", "chunk_sentences", "recognize_batch", "deadline_reserve", "min_score",
           "keep_score")


def _key_problem(key: str) -> str | None:
    """Why an API key cannot be sent in an Authorization header, never quoting it; None if it can.
    (httpx refuses it at each call, and its message quotes the header: the key would reach every
    warning and response.)"""
    if not key or key.isascii() and key.isprintable() and " " not in key:
        return None
    if "\n" in key or "\r" in key:
        return "holds a line break (a key file must hold the key alone, on one line)"
    if not key.isascii():
        return "holds a character that is not ASCII"
    return "holds a space or a control character"


@dataclass(frozen=True, slots=True)
class LLMConfig:
    """The resolved configuration; `enabled` is true only with a base URL and a model."""

    base_url: str = ""
    api_key: str = ""
    model: str = ""
    temperature: float = 0.0
    json_mode: bool = False
    structured_output: str = "auto"
    max_output_tokens: int = MAX_OUTPUT_TOKENS
    output_tokens_field: str = "max_tokens"
    settings: LLMSettings = LLMSettings()
    disabled: bool = False
    # where a base URL or model given without the other came from ("--llm-base-url", "[llm] model")
    given_alone: str = ""

    def __post_init__(self) -> None:
        if (why := _key_problem(self.api_key)) is not None:
            raise LLMConfigError("llm.api_key", why)

    @property
    def enabled(self) -> bool:
        return bool(self.base_url and self.model) and not self.disabled

    def unused_note(self) -> str | None:
        """Why a model half configured is not used (a base URL and no model, or the reverse), for a
        warning; None when it is used, disabled, or not configured at all. A base URL from
        OPENAI_BASE_URL alone says nothing: other tools set it."""
        if self.enabled or self.disabled or not self.given_alone:
            return None
        lacking = "--llm-model / SOURCE_TRACER_LLM_MODEL / [llm] model" if self.base_url else \
            "--llm-base-url / SOURCE_TRACER_LLM_BASE_URL / OPENAI_BASE_URL / [llm] base_url"
        return (f"the model is not used: {self.given_alone} is set but not {lacking}; "
                "the deterministic engine is used")


def add_llm_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the --llm-* flags to a CLI (sub)parser (every default is None: unset falls through)."""
    group = parser.add_argument_group("LLM (OpenAI-compatible; see docs/llm.md)")
    for s in SETTINGS:
        if s.key == "enabled":
            group.add_argument("--no-llm", dest="llm_enabled", action="store_const", const=False,
                               default=None, help="never use an LLM, even when one is configured")
            continue
        group.add_argument(f"--llm-{s.key.replace('_', '-')}", dest=f"llm_{s.key}", default=None,
                           metavar=s.key.split("_")[-1].upper(), help=s.help)


def resolve_config(
    args: argparse.Namespace | None,
    file_config: Mapping[str, Any] | None,
    env: Mapping[str, str] | None = None,
) -> LLMConfig:
    """Flags > environment > config file [llm] > defaults. Raises InvalidInputError naming the source."""
    env = os.environ if env is None else env
    file_config = file_config or {}
    unknown = sorted(set(file_config) - set(_BY_KEY))
    if unknown:
        raise LLMConfigError(f"[llm] {unknown[0]}", f"unknown key (known: {', '.join(_BY_KEY)})")
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for s in SETTINGS:
        flag = getattr(args, f"llm_{s.key}", None) if args is not None else None
        if flag is not None:
            origin[s.key] = "--no-llm" if s.key == "enabled" else f"--llm-{s.key.replace('_', '-')}"
            values[s.key] = _parse(s, flag, origin[s.key])
            continue
        env_name = next((e for e in s.env if env.get(e, "").strip()), None)
        if env_name is not None:
            origin[s.key] = env_name
            values[s.key] = _parse(s, env[env_name].strip(), env_name)
        elif s.key in file_config and file_config[s.key] is not None:
            origin[s.key] = f"[llm] {s.key}"
            values[s.key] = _parse(s, file_config[s.key], origin[s.key])
    api_key = values.get("api_key", "")
    if not api_key and values.get("api_key_file"):
        path = Path(values["api_key_file"])
        try:
            api_key = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise LLMConfigError("llm.api_key_file", f"cannot read {path}: {exc.strerror}") from None
    if (why := _key_problem(api_key)) is not None:
        raise LLMConfigError("llm.api_key_file" if not values.get("api_key") else origin["api_key"], why)
    base_url = str(values.get("base_url", "")).strip()
    if base_url and not base_url.startswith(("http://", "https://")):
        raise LLMConfigError("llm.base_url", f"must be an http(s) URL, got {base_url!r}")
    tuning = {k: values[k] for k in _TUNING if k in values}
    if "strategy" in tuning:
        try:
            tuning["strategy"] = Strategy(tuning["strategy"])
        except ValueError:
            raise LLMConfigError(
                "llm.strategy", f"must be 'chunked' or 'full', got {tuning['strategy']!r}"
            ) from None
    try:
        settings = LLMSettings(**tuning).validated()
    except InvalidInputError as exc:
        raise LLMConfigError(exc.field, exc.reason) from None
    temperature = float(values.get("temperature", 0.0))
    if not 0.0 <= temperature <= 2.0:
        raise LLMConfigError("llm.temperature", f"must be within 0..2, got {temperature}")
    structured = _choice(values, "structured_output", STRUCTURED_OUTPUTS)
    max_output = int(values.get("max_output_tokens", MAX_OUTPUT_TOKENS))
    if not 0 <= max_output <= 10_000_000:
        raise LLMConfigError("llm.max_output_tokens", f"must be within 0..10000000, got {max_output}")
    field_name = _choice(values, "output_tokens_field", OUTPUT_TOKENS_FIELDS)
    model = str(values.get("model", "")).strip()
    alone = ("base_url" if base_url and not model else "model" if model and not base_url else "")
    return LLMConfig(
        base_url=base_url, api_key=api_key, model=model,
        given_alone="" if not alone or origin[alone] == "OPENAI_BASE_URL" else origin[alone],
        temperature=temperature, json_mode=bool(values.get("json_mode", False)),
        structured_output=structured,
        max_output_tokens=max_output, output_tokens_field=field_name,
        settings=settings, disabled=values.get("enabled") is False,
    )


def _choice(values: Mapping[str, Any], key: str, allowed: tuple[str, ...]) -> str:
    """The setting's value, one of `allowed` (the first is the default)."""
    value = str(values.get(key, allowed[0])).strip()
    if value not in allowed:
        raise LLMConfigError(f"llm.{key}", f"must be one of {', '.join(allowed)}, got {value!r}")
    return value


def _parse(s: Setting, raw: Any, source: str) -> Any:
    if s.kind is str:
        return str(raw)
    if s.kind is _bool and isinstance(raw, bool):
        return raw
    if s.kind in (int, float) and isinstance(raw, bool):
        raise LLMConfigError(source, f"must be a number, got {raw!r}")
    if s.kind is int and isinstance(raw, float):
        raise LLMConfigError(source, f"must be an integer, got {raw!r}")
    try:
        return s.kind(raw)
    except (TypeError, ValueError):
        kind = {int: "an integer", float: "a number", _bool: "true or false",
                _auto_or_number: "'auto' or a number",
                _off_or_number: "'off' or a number"}.get(s.kind, "valid")
        raise LLMConfigError(source, f"must be {kind}, got {raw!r}") from None


def build_backend(
    args: argparse.Namespace | None, file_config: Mapping[str, Any] | None
) -> LLMBackend | None:
    """The configured LLM backend (flags > environment > config file [llm] section), or None
    (with a warning on stderr when the model is half configured: `LLMConfig.unused_note`)."""
    config = resolve_config(args, file_config)
    if not config.enabled:
        if (note := config.unused_note()) is not None:
            print(f"warning: {note}", file=sys.stderr)
        return None
    return backend_from_config(config)


# The most a reply body may hold. The reply parser reads 1,000,000 characters at most (6 MB as
# JSON-escaped CJK); a model that sends more, or never stops, is cut off here instead of being
# buffered whole (an endless reply grew the process by 330 MB a second until the call's timeout).
MAX_REPLY_BYTES = 8 << 20


async def check_endpoint(config: LLMConfig, timeout: float = 5.0) -> str | None:
    """Whether the model's endpoint answers (`server.openai_chat.check_endpoint`)."""
    from server.openai_chat import check_endpoint as check

    return await check(config, timeout)


def backend_from_config(config: LLMConfig) -> ChatBackend:
    forms = FormNegotiation()  # shared by the backend's clients (one per event loop)

    from server.openai_chat import OpenAIChatClient  # openai is imported only for a model in use

    def factory() -> OpenAIChatClient:
        return OpenAIChatClient(config, forms)

    try:
        return ChatBackend(factory, config.settings)
    except PromptError as exc:  # e.g. an installed wheel without prompts/: say how to fix it
        raise LLMConfigError(
            "llm.prompts", f"{exc} (set SOURCE_TRACER_PROMPTS_DIR to the prompts/ directory)"
        ) from None


class FormNegotiation:
    """`structured_output = auto`: the best `response_format` form this server has not refused.

    Starts at the first of FORM_LADDER; a call whose form the server refuses moves it one step
    down (for every later call too) and is sent again in the next form, so a server that knows
    none of them ends at `none` after a few quick refusals, once per process.

    A gateway may refuse the field with a bare 400 or 422 that names nothing. The first such
    error of the process is probed: the same call is sent again in each lower form until one is
    answered, and that form is kept. When even `none` is refused, the 400 was about something
    else and the form stays as it was."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._form = FORM_LADDER[0]
        self._probed = False
        self.probing = False  # a probe is out: other calls' bare 400s wait for what it finds

    @property
    def form(self) -> str:
        return self._form

    def refused(self, form: str, why: str) -> str | None:
        """The server refused `form`: the form to try next, or None when there is none left."""
        step = FORM_LADDER.index(form) + 1
        if step >= len(FORM_LADDER):
            return None
        with self._lock:
            lowered = FORM_LADDER.index(self._form) < step
            if lowered:
                self._form = FORM_LADDER[step]
            form = self._form
        if lowered:
            log("llm structured output refused", logging.WARNING, refused=FORM_LADDER[step - 1],
                now=form, error=why)
        return form

    def claim_probe(self) -> bool:
        """True once per process: the caller may probe a bare 400 (see the class docstring)."""
        with self._lock:
            if self._probed:
                return False
            self._probed = self.probing = True
            return True

    def probe_finished(self) -> None:
        self.probing = False

    def accepted(self, refused: str, form: str, why: str) -> None:
        """A probe found that the server answers `form` after refusing `refused` unnamed."""
        with self._lock:
            lowered = FORM_LADDER.index(self._form) < FORM_LADDER.index(form)
            if lowered:
                self._form = form
        if lowered:
            log("llm structured output refused", logging.WARNING, refused=refused, now=form,
                error=f"{why}, naming nothing; a call in the lower form was answered")


def _response_format(form: str, schema: ReplySchema | None) -> dict[str, Any] | None:
    if form == "json_schema" and schema is not None:  # OpenAI, vLLM, llama.cpp's llama-server
        return {"type": "json_schema", "json_schema": {
            "name": schema.name, "schema": dict(schema.schema), "strict": True}}
    if form == "json_object_schema" and schema is not None:  # llama-cpp-python's server
        return {"type": "json_object", "schema": dict(schema.schema)}
    if form != "none":
        return {"type": "json_object"}
    return None


__all__ = ["add_llm_arguments", "LLMConfigError", "build_backend", "resolve_config", "backend_from_config",
           "LLMConfig", "FormNegotiation", "SETTINGS", "check_endpoint"]
