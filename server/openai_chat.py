"""The OpenAI-compatible chat client behind `server.llm_client` (docs/llm.md): `OpenAIChatClient`
over `openai.AsyncOpenAI`, with every reply body capped, and the start-up endpoint check.

Imported only when a model is configured, so a deterministic CLI run, `bulk` worker or server
does not load openai and httpx2 (about 0.6 s of start-up)."""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import httpx2
import openai

from server.llm_client import (
    FORM_LADDER,
    MAX_REPLY_BYTES,
    FormNegotiation,
    LLMConfig,
    _response_format,
)
from tracer.llm import ChatError, ChatMessage, ChatReply, ReplySchema


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
