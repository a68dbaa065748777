"""OpenAI-compatible LLM backend wiring for the CLI and the service (docs/llm.md).

`add_llm_arguments(parser)` adds the `--llm-*` flags; `build_backend(args, file_config_llm)`
resolves the configuration (flags > environment > config file `[llm]` section > defaults) and
returns a `tracer.llm.ChatBackend` over `OpenAIChatClient`, or None when no model is configured
(base URL and model are both required) or the LLM is disabled.
"""

from __future__ import annotations

import argparse
import asyncio
import email.utils
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2
import openai

from server.config import ConfigError
from server.logs import log
from tracer.errors import InvalidInputError
from tracer.llm import (
    ChatBackend,
    ChatError,
    ChatMessage,
    ChatReply,
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


class ReplyTooLarge(openai.OpenAIError):
    """A reply body over MAX_REPLY_BYTES, or compressed though it was asked for uncompressed (the
    cap counts what arrives, and 64 KiB of gzip can unpack to 64 MiB). An OpenAIError, so the
    client raises it as it is."""


class _CappedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, limit: int) -> None:
        self._inner = inner
        self._limit = limit

    async def __aiter__(self):  # type: ignore[no-untyped-def]
        total = 0
        async for chunk in self._inner:
            total += len(chunk)
            if total > self._limit:
                raise ReplyTooLarge(f"reply larger than {self._limit >> 20} MiB")
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CappedTransport(httpx2.AsyncBaseTransport):
    """httpx's transport, with every response body cut off after `limit` bytes."""

    def __init__(self, limit: int = MAX_REPLY_BYTES) -> None:
        from openai._constants import DEFAULT_CONNECTION_LIMITS  # the pool openai's own client keeps

        self._inner = httpx2.AsyncHTTPTransport(limits=DEFAULT_CONNECTION_LIMITS)
        self._limit = limit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        stream = response.stream
        assert isinstance(stream, httpx2.AsyncByteStream)
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if encoding not in ("", "identity"):
            await stream.aclose()
            raise ReplyTooLarge(f"reply compressed ({encoding}) though asked for uncompressed")
        return httpx2.Response(response.status_code, headers=response.headers, request=request,
                               stream=_CappedStream(stream, self._limit), extensions=response.extensions)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _http_client() -> httpx2.AsyncClient:
    """The openai client's default HTTP client (its timeouts, limits and redirects), replies capped.
    It asks for replies uncompressed: the cap counts the bytes that arrive, and 400 KiB of gzip
    can unpack to 400 MiB."""
    return openai.DefaultAsyncHttpxClient(transport=_CappedTransport(),
                                          headers={"Accept-Encoding": "identity"})


async def check_endpoint(config: LLMConfig, timeout: float = 5.0) -> str | None:
    """Whether the model's endpoint answers, asked once (`GET {base_url}/models`): None when it
    answers anything but an auth refusal (a gateway without `/models` answers 404, which is
    fine), else why not. For a start-up warning only: a server whose model is down still serves,
    each trace degrading to the deterministic engine until the model answers."""
    client = openai.AsyncOpenAI(base_url=config.base_url, api_key=config.api_key or "not-needed",
                                max_retries=0, timeout=timeout, http_client=_http_client())
    try:
        await client.models.list()
    except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
        return f"it refused the API key ({_status_text(exc)})"
    except openai.APIStatusError:
        return None
    except openai.APITimeoutError:
        return f"no answer within {timeout:g} s"
    except ReplyTooLarge:
        return None  # it answered, at length
    except openai.APIConnectionError as exc:
        return f"cannot connect: {_redacted(str(exc.__cause__ or exc), config.api_key)}"
    finally:
        await client.close()
    return None


def backend_from_config(config: LLMConfig) -> ChatBackend:
    forms = FormNegotiation()  # shared by the backend's clients (one per event loop)

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


def _refuses_format(exc: openai.APIStatusError) -> bool:
    """Whether an error reply is the server refusing the request's `response_format` (it names
    the field: OpenAI's 400, vLLM's 400, llama-cpp-python's 500 validation error)."""
    text = f"{exc.message} {exc.body}".lower()
    return "response_format" in text or "json_schema" in text


class OpenAIChatClient:
    """tracer.llm.ChatClient over openai.AsyncOpenAI; one per event loop (see ChatBackend)."""

    def __init__(self, config: LLMConfig, forms: FormNegotiation | None = None) -> None:
        self.config = config
        self._forms = forms if forms is not None else FormNegotiation()
        self._client = openai.AsyncOpenAI(
            base_url=config.base_url,
            api_key=config.api_key or "not-needed",  # local servers (vLLM, Ollama) need none
            max_retries=0,                           # retries are ours: counted, budgeted, cancellable
            timeout=config.settings.timeout,
            http_client=_http_client(),
        )

    def _form(self) -> tuple[str, bool]:
        """The `response_format` form for the next call, and whether it is negotiated (auto)."""
        mode = self.config.structured_output
        if mode in ("auto", "none") and self.config.json_mode:
            return "json_object", False
        if mode == "auto":
            return self._forms.form, True
        return mode, False

    async def complete(
        self, messages: list[ChatMessage], *, timeout: float, schema: ReplySchema | None = None
    ) -> ChatReply:
        form, negotiated = self._form()
        started = time.monotonic()
        sent = 0
        while True:
            try:
                sent += 1
                reply = await self._call(messages, timeout, started, schema, form)
                return replace(reply, requests=sent) if sent > 1 else reply
            except ChatError as err:  # a timeout or a broken connection after a form was refused
                err.requests = sent
                raise
            except openai.APIStatusError as exc:
                refused = negotiated and form != "none" and _refuses_format(exc)
                if negotiated and form != "none" and not refused and exc.status_code in (400, 422):
                    if self._forms.claim_probe():
                        try:
                            reply = await self._probe(messages, timeout, started, schema, form, exc)
                        except ChatError as err:
                            err.requests += sent
                            raise
                        return replace(reply, requests=sent + reply.requests)
                    # another call is probing (or has probed): send this one again in what it
                    # found, rather than fail it for the form
                    while self._forms.probing and time.monotonic() - started < timeout:
                        await asyncio.sleep(0.02)
                    if FORM_LADDER.index(self._forms.form) > FORM_LADDER.index(form):
                        form = self._forms.form
                        continue
                following = self._forms.refused(form, _status_text(exc)) if refused else None
                if following is None:
                    raise _chat_error(exc, requests=sent) from None
                form = following

    async def _probe(self, messages: list[ChatMessage], timeout: float, started: float,
                     schema: ReplySchema | None, form: str, first: openai.APIStatusError) -> ChatReply:
        """A bare 400/422 under `auto`: send the call in each lower form; keep the first one
        answered. If none is, the error was not about `response_format`: raise the first one."""
        tried = 0
        try:
            for lower in FORM_LADDER[FORM_LADDER.index(form) + 1:]:
                tried += 1
                try:
                    reply = await self._call(messages, timeout, started, schema, lower)
                except openai.APIStatusError as exc:
                    if exc.status_code in (400, 422):
                        continue
                    raise _chat_error(exc, requests=tried) from None
                except ChatError as err:
                    err.requests = tried
                    raise
                self._forms.accepted(form, lower, _status_text(first))
                return replace(reply, requests=tried)
            raise _chat_error(first, requests=tried) from None
        finally:
            self._forms.probe_finished()

    async def _call(self, messages: list[ChatMessage], timeout: float, started: float,
                    schema: ReplySchema | None, form: str) -> ChatReply:
        """One request in one `response_format` form, with what is left of the call's `timeout`
        (which began at `started`); a timeout names the call's whole timeout."""
        extra: dict[str, Any] = {}
        response_format = _response_format(form, schema)
        if response_format is not None:
            extra["response_format"] = response_format
        if self.config.max_output_tokens:
            extra[self.config.output_tokens_field] = self.config.max_output_tokens
        left = max(0.001, timeout - (time.monotonic() - started))
        try:
            # httpx's timeout bounds each read, so a server trickling its reply a byte at a time
            # would hold the call far longer: the call's own clock is the bound.
            async with asyncio.timeout(left):
                resp = await self._client.chat.completions.create(
                    model=self.config.model,
                    messages=messages,  # type: ignore[arg-type]
                    temperature=self.config.temperature,
                    timeout=left,
                    **extra,
                )
        except (openai.APITimeoutError, TimeoutError):
            raise ChatError(f"timeout after {timeout:.3g}s", retryable=True, down=True) from None
        except ReplyTooLarge as exc:
            raise ChatError(f"bad reply ({exc})", retryable=False) from None
        except openai.APIConnectionError as exc:
            why = _redacted(str(exc.__cause__ or exc), self.config.api_key) or "connection error"
            raise ChatError(f"connection failed: {why}", retryable=True, down=True) from None
        except openai.APIStatusError:
            raise
        except (openai.OpenAIError, ValueError, TypeError, RecursionError) as exc:
            raise ChatError(f"bad reply ({type(exc).__name__})", retryable=False) from None
        return _reply_of(resp)

    async def aclose(self) -> None:
        await self._client.close()


def _redacted(message: str, key: str) -> str:
    """An error's text without the API key (a transport's error may quote the request's headers)."""
    if key:
        message = message.replace(key, "[API key]")
    return message


def _reply_of(resp: Any) -> ChatReply:
    """The reply of a parsed response; any shape the protocol does not allow (a null choice or
    message, content that is not text, usage counts that are not numbers) is a bad reply of
    this call, never an error of the whole stage."""
    if isinstance(resp, (str, bytes)):  # the client hands over a body that is not JSON as is
        text = resp if isinstance(resp, str) else resp.decode("utf-8", "replace")
        head = " ".join(text[:80].split())
        raise ChatError(f"not a chat completion: the endpoint answered with text, not JSON ({head!r}); "
                        "is base_url the API's /v1 address?", retryable=False)
    choices = getattr(resp, "choices", None)
    if not choices:
        raise ChatError("empty reply (no choices)", retryable=False)
    try:
        choice = choices[0]
        text = choice.message.content
        finish = getattr(choice, "finish_reason", None)
        usage = getattr(resp, "usage", None)
        prompt = _count(getattr(usage, "prompt_tokens", 0))
        completion = _count(getattr(usage, "completion_tokens", 0))
    except (AttributeError, TypeError, IndexError, KeyError) as exc:
        raise ChatError(f"bad reply ({type(exc).__name__}: a field of the response is missing or "
                        "of the wrong type)", retryable=False) from None
    if text is not None and not isinstance(text, str):
        raise ChatError(f"bad reply (message content is {type(text).__name__}, not text)", retryable=False)
    if not text and finish == "content_filter":
        raise ChatError("reply withheld by the server's content filter", retryable=False)
    return ChatReply(text=text or "", prompt_tokens=prompt, completion_tokens=completion,
                     truncated=finish == "length")


def _count(value: object) -> int:
    """A token count from a usage field; what is not a count reads 0."""
    try:
        n: int = int(value or 0)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):
        return 0
    return max(0, n)


def _status_text(exc: openai.APIStatusError) -> str:
    status = exc.status_code
    label = "rate limited" if status == 429 else "server error" if status >= 500 else "request rejected"
    return f"{label} (HTTP {status})"


def _chat_error(exc: openai.APIStatusError, requests: int = 1) -> ChatError:
    status = exc.status_code
    retryable = status in (408, 409, 429) or status >= 500
    return ChatError(_status_text(exc), retryable=retryable, retry_after=_retry_after(exc.response.headers),
                     requests=requests, down=status in (401, 403))


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


__all__ = ["add_llm_arguments", "LLMConfigError", "build_backend", "resolve_config", "backend_from_config",
           "LLMConfig", "OpenAIChatClient", "FormNegotiation", "SETTINGS"]
