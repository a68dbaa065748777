"""source-tracer core: re-cite a markdown report against its search records.

Public surface: `trace()`, the option and result models, and the error classes.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from tracer.errors import CancelledError, InvalidInputError, LimitExceededError, TracerError
from tracer.models import (
    Citation,
    CitedSource,
    NearMiss,
    Record,
    Reference,
    Stats,
    TraceResult,
    Unsupported,
)
from tracer.options import ExistingPolicy, Mode, Placement, TraceOptions, Tuning
from tracer.pipeline import held_working_data, trace

try:
    __version__: str = _version("source-tracer")
except PackageNotFoundError:  # a checkout on sys.path that was never installed
    __version__ = "0+unknown"

__all__ = [
    "__version__",
    "trace",
    "held_working_data",
    "TraceOptions",
    "Tuning",
    "Mode",
    "ExistingPolicy",
    "Placement",
    "TraceResult",
    "Citation",
    "CitedSource",
    "Reference",
    "Unsupported",
    "NearMiss",
    "Record",
    "Stats",
    "TracerError",
    "InvalidInputError",
    "LimitExceededError",
    "CancelledError",
]
