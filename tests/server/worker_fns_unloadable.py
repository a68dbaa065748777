"""A trace function that cannot be loaded in a worker process (unpickling it there raises): a
server given it cannot start worker processes, like a machine without a writable temp directory
for the forkserver. In the server process itself it is a plain trace."""

from __future__ import annotations

from typing import Any

from tracer.models import TraceResult
from tracer.pipeline import trace


def _refuse() -> None:
    raise RuntimeError("this trace function does not load in worker processes")


class UnloadableTrace:
    def __call__(self, report: str, records: Any, options: Any, **kw: Any) -> TraceResult:
        return trace(report, records, options, **kw)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_refuse, ())


plain_trace = UnloadableTrace()
