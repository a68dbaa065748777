"""OpenAI-compatible LLM backend wiring for the CLI and the service.

Owned by the LLM work (issue 4); this first version only defines the hooks the CLI and
server call, and configures no backend.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from tracer.pipeline import LLMBackend


def add_llm_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the --llm-* flags to a CLI (sub)parser."""


def build_backend(args: argparse.Namespace | None, file_config: Mapping[str, Any] | None) -> LLMBackend | None:
    """The configured LLM backend (flags > environment > config file [llm] section), or None."""
    return None
