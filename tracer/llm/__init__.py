"""The LLM path: prompts, chunking, reply parsing and orchestration over an abstract chat client.

No network code lives here; `server/llm_client.py` supplies an OpenAI-compatible ChatClient.
"""

from tracer.llm.backend import ChatBackend
from tracer.llm.client import ChatClient, ChatClientFactory, ChatError, ChatReply, ReplySchema
from tracer.llm.prompts import ChatMessage, PromptError, PromptLibrary, render_prompt
from tracer.llm.settings import LLMSettings, Strategy

__all__ = [
    "ChatBackend", "ChatClient", "ChatClientFactory", "ChatError", "ChatReply", "ChatMessage", "ReplySchema",
    "PromptError", "PromptLibrary", "render_prompt", "LLMSettings", "Strategy",
]
