"""Structured JSON logs: one object per line on stderr.

Sensitive mode (the default) never logs report or record text: request logs carry ids,
sizes, counts, codes and timings only."""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

import orjson

LOGGER = logging.getLogger("source_tracer")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "event": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update(fields)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str, option=orjson.OPT_NON_STR_KEYS).decode()


def setup_logging(level: str = "INFO") -> None:
    """Route the `source_tracer` logger to stderr as JSON lines (idempotent)."""
    LOGGER.setLevel(level.upper())
    LOGGER.propagate = False
    for h in [h for h in LOGGER.handlers if getattr(h, "_source_tracer", "") == "text"]:
        LOGGER.removeHandler(h)  # a command's readable lines give way to the service's JSON
    if not any(getattr(h, "_source_tracer", "") == "json" for h in LOGGER.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter())
        handler._source_tracer = "json"  # type: ignore[attr-defined]
        LOGGER.addHandler(handler)


class TextFormatter(logging.Formatter):
    """One readable line for a command-line user: `source-tracer: event (key=value, ...)`."""

    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "fields", None)
        detail = ", ".join(f"{k}={v}" for k, v in fields.items() if v is not None) \
            if isinstance(fields, dict) else ""
        return f"source-tracer: {record.getMessage()}" + (f" ({detail})" if detail else "")


def setup_cli_logging(level: str = "WARNING") -> None:
    """For the one-shot commands (`trace`, `bulk`): warnings as readable lines on stderr, not
    JSON and not Python's bare last-resort line. `serve` calls `setup_logging` instead."""
    if any(getattr(h, "_source_tracer", "") for h in LOGGER.handlers):
        return  # set up already (JSON in a process that also serves: keep it)
    LOGGER.setLevel(level.upper())
    LOGGER.propagate = False
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(TextFormatter())
    handler._source_tracer = "text"  # type: ignore[attr-defined]
    LOGGER.addHandler(handler)


def log(event: str, level: int = logging.INFO, **fields: Any) -> None:
    LOGGER.log(level, event, extra={"fields": fields})
