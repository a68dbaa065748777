"""Every error the core can raise, as one tree.

    TracerError
     ├── InvalidInputError        a request field is malformed (field, reason)
     │    └── LimitExceededError  a configured limit is exceeded (field, limit, value)
     └── CancelledError           the caller cancelled or the deadline expired

`server/` maps each class to exactly one gRPC status code; the CLI maps them to exit 2.
Bad *records* are not errors: they are dropped with a warning naming their index.
"""

from __future__ import annotations


class TracerError(Exception):
    """Base class of every error raised by `tracer`."""


class InvalidInputError(TracerError):
    """A request field is malformed."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")

    def __reduce__(self) -> tuple[object, ...]:  # picklable: errors cross from worker processes
        return (type(self), (self.field, self.reason))


class LimitExceededError(InvalidInputError):
    """A configured size limit was exceeded."""

    def __init__(self, field: str, limit: int, value: int) -> None:
        self.limit = limit
        self.value = value
        super().__init__(field, f"{value} exceeds the limit of {limit}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.field, self.limit, self.value))


class CancelledError(TracerError):
    """The caller cancelled the trace or its deadline expired."""
