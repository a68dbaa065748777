"""The chat-client seam: what the orchestration needs from an OpenAI-compatible endpoint.

The core never talks to the network; `server/llm_client.py` implements `ChatClient` over the
`openai` package and maps its exceptions to `ChatError` so retry policy lives here, in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from tracer.llm.prompts import ChatMessage


@dataclass(frozen=True, slots=True)
class ChatReply:
    """The assistant's text and the token usage the API reported (0 when it reported none).
    `truncated`: the reply stopped at the request's output-token cap (finish_reason "length").
    `requests`: HTTP requests the call took (more than 1 when a refused `response_format` made
    the client send it again), counted in `Stats.llm_calls`."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    truncated: bool = False
    requests: int = 1


@dataclass(frozen=True, slots=True)
class ReplySchema:
    """The JSON Schema a reply must match, under a name (`match`, `recognize`)."""

    name: str
    schema: Mapping[str, object]


class ChatError(Exception):
    """One failed chat call. `cause` is a short human label used in warnings."""

    def __init__(self, cause: str, *, retryable: bool, retry_after: float | None = None,
                 requests: int = 1, down: bool = False) -> None:
        self.cause = cause
        self.retryable = retryable
        self.retry_after = retry_after
        self.requests = requests    # HTTP requests the failed call took (see ChatReply.requests)
        # the endpoint did not answer (a timeout, no connection) or refused the key: any call now
        # would fail the same way (after its retries, the backend stops asking for a while)
        self.down = down
        super().__init__(cause)


class ChatClient(Protocol):
    """One chat-completions endpoint, used inside a single event loop and then closed."""

    async def complete(
        self, messages: list[ChatMessage], *, timeout: float, schema: ReplySchema | None = None
    ) -> ChatReply:
        """Send one request; raise ChatError on any failure. `schema` names the reply's shape and
        gives it as JSON Schema, for clients that ask the server to constrain its output to it."""
        ...

    async def aclose(self) -> None: ...


# Called inside the event loop of one backend call (async HTTP clients are bound to their loop).
ChatClientFactory = Callable[[], ChatClient]
