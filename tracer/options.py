"""Options of one trace, with documented defaults (the only place tuning constants live)."""

from __future__ import annotations

import math
import numbers
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import Any

from tracer.errors import InvalidInputError


class Mode(StrEnum):
    AUTO = "auto"                    # LLM when one is configured, else deterministic
    DETERMINISTIC = "deterministic"
    LLM = "llm"


class ExistingPolicy(StrEnum):
    KEEP = "keep"                    # resolve old markers and renumber them
    REPLACE = "replace"              # remove old markers and re-trace the sentence


class Placement(StrEnum):
    BEFORE_PUNCT = "before"          # "fact[1]."
    AFTER_PUNCT = "after"            # "fact.[1]"


@dataclass(frozen=True, slots=True)
class Tuning:
    """Engine constants. Defaults are measured on the dev benchmark (docs/quality.md)."""

    passage_chars: int = 1200        # target passage length when cutting long records
    passage_overlap: int = 200       # characters shared by consecutive passages
    retrieve_top_k: int = 8          # candidate passages per sentence
    idf_floor: int = 0               # IDF computed as if there were at least this many passages
    min_score: float = 0.66          # support score a pair needs to be cited
    second_source_margin: float = 0.2  # extra sources must score within this of the best
    near_miss_floor: float = 0.1       # an unsupported sentence names its closest record from this score
    evidence_context: int = 300      # a quote longer than twice this is cut around the claim
    evidence_pair_gain: float = 0.15  # a quote takes in the next record sentence if it adds this much
    # Report languages in which a figure the record states nowhere, where the evidence quote states
    # another of its sort, contradicts the sentence (never cited). Not English by default: dev's
    # English annotations count such a sentence as partly supported (docs/quality.md).
    figure_conflicts: tuple[str, ...] = ("zh",)
    # Logistic support model over tracer.verify.FEATURES, one per language (Chinese reports are
    # scored on character bigrams, English on stemmed words); fitted by scripts/calibrate on
    # the dev benchmark with the numbers weight held >= 1 (a number or date the record does not
    # state always counts against support), see docs/quality.md.
    weights_en: tuple[float, ...] = (
        0.781, 0.610, 0.528, 1.000, 0.996, 0.616, -0.581, 0.001, -1.634, -1.009, 0.177,
        2.629, 0.286, 2.971, -0.728, 0.111, -2.168,
    )
    bias_en: float = -5.522
    weights_zh: tuple[float, ...] = (
        1.666, 2.849, 2.903, 1.000, 0.019, 2.075, 1.271, 1.017, 1.042, 3.026, -1.659,
        0.107, -0.023, -2.345, -0.671, -0.158, -0.994,
    )
    bias_zh: float = -8.100

    def model(self, lang: str) -> tuple[tuple[float, ...], float]:
        """(weights, bias) of the support model for a report language."""
        return (self.weights_zh, self.bias_zh) if lang == "zh" else (self.weights_en, self.bias_en)


@dataclass(frozen=True, slots=True)
class TraceOptions:
    """What a caller may choose per request."""

    mode: Mode = Mode.AUTO
    style: str = "numeric"
    max_sources: int = 3
    min_score: float | None = None   # None = Tuning.min_score (calibrated)
    existing: ExistingPolicy = ExistingPolicy.KEEP
    references_heading: str = ""     # "" = "References" / "参考文献" by language
    language: str = ""               # "" = detect; "en" or "zh"
    placement: Placement = Placement.BEFORE_PUNCT
    reference_format: str = "markdown"
    # With a model (mode llm/auto and a backend): override the backend's gate for this request.
    llm_min_score: float | None = None   # a model-proposed pair needs this; None = backend's min_score
    llm_keep_score: float | None = None  # None = backend's keep_score; above 1 = keep none
    # Every figure must agree with its source: in English too, a figure the record states nowhere,
    # where the evidence quote states another of its sort, contradicts the sentence (it always
    # does in Chinese; Tuning.figure_conflicts).
    strict_figures: bool = False
    tuning: Tuning = field(default_factory=Tuning)

    @property
    def verify_tuning(self) -> Tuning:
        """`tuning` as the verifier uses it: with English among `figure_conflicts` when
        `strict_figures` asks for it."""
        if self.strict_figures and "en" not in self.tuning.figure_conflicts:
            return replace(self.tuning, figure_conflicts=(*self.tuning.figure_conflicts, "en"))
        return self.tuning

    @property
    def threshold(self) -> float:
        return self.tuning.min_score if self.min_score is None else self.min_score

    def validated(self) -> TraceOptions:
        """Return self (with `mode`, `existing` and `placement` given as plain strings turned into
        their enums: "keep" is ExistingPolicy.KEEP), or raise InvalidInputError naming the bad field."""
        coerced: dict[str, Any] = {}
        for name, enum in (("mode", Mode), ("existing", ExistingPolicy), ("placement", Placement)):
            value = getattr(self, name)
            if not isinstance(value, enum):
                try:
                    coerced[name] = enum(value)
                except ValueError:
                    allowed = ", ".join(repr(m.value) for m in enum)
                    raise InvalidInputError(
                        f"options.{name}", f"must be one of {allowed}, got {value!r}") from None
        if isinstance(self.tuning, Mapping):   # {"tuning": {"min_score": 0.5}} from JSON
            coerced["tuning"] = _tuning_from(self.tuning)
        elif not isinstance(self.tuning, Tuning):
            raise InvalidInputError(
                "options.tuning", f"must be a tracer.Tuning or a mapping of its fields, got {self.tuning!r}")
        if coerced:
            return replace(self, **coerced).validated()
        for name in ("min_score", "llm_min_score", "llm_keep_score"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
                raise InvalidInputError(f"options.{name}", f"must be a number, got {value!r}")
        for name in ("style", "references_heading", "language", "reference_format"):
            if not isinstance(getattr(self, name), str):
                raise InvalidInputError(f"options.{name}", f"must be a string, got {getattr(self, name)!r}")
        if not isinstance(self.strict_figures, bool):
            raise InvalidInputError("options.strict_figures",
                                    f"must be true or false, got {self.strict_figures!r}")
        count: object = self.max_sources
        if isinstance(count, numbers.Real) and not isinstance(count, (bool, numbers.Integral)) \
                and float(count).is_integer():
            return replace(self, max_sources=int(float(count))).validated()   # 3.0 is a count
        if isinstance(count, bool) or not isinstance(count, numbers.Integral):
            raise InvalidInputError("options.max_sources", f"must be a whole number, got {count!r}")
        if not 1 <= self.max_sources <= 20:
            raise InvalidInputError("options.max_sources", f"must be 1..20, got {self.max_sources}")
        if self.min_score is not None and not 0.0 <= self.min_score <= 1.0:
            raise InvalidInputError("options.min_score", f"must be within 0..1, got {_shown(self.min_score)}")
        if self.llm_min_score is not None and not 0.0 <= self.llm_min_score <= 1.0:
            raise InvalidInputError(
                "options.llm_min_score", f"must be within 0..1, got {_shown(self.llm_min_score)}")
        if self.llm_keep_score is not None and not (
                math.isfinite(self.llm_keep_score) and self.llm_keep_score >= 0.0):
            raise InvalidInputError(
                "options.llm_keep_score",
                f"must be 0..1 (above 1: keep none), got {_shown(self.llm_keep_score)}")
        if self.language not in ("", "en", "zh"):
            raise InvalidInputError("options.language", f"must be '', 'en' or 'zh', got {self.language!r}")
        # Imported here: render/refformat import this module.
        from tracer.refformat import validate_reference_format
        from tracer.render import validate_style

        validate_style(self.style)
        validate_reference_format(self.reference_format)
        if len(self.references_heading) > 200 or "\n" in self.references_heading:
            raise InvalidInputError(
                "options.references_heading", "must be one line of at most 200 characters"
            )
        return self

    def with_(self, **changes: object) -> TraceOptions:
        return replace(self, **changes)  # type: ignore[arg-type]


def options_from(given: TraceOptions | Mapping[str, Any] | None) -> TraceOptions:
    """`given` as TraceOptions: None is the defaults, and a mapping of its fields
    ({"max_sources": 2}) is one too (not yet validated: call `.validated()`)."""
    if given is None:
        return TraceOptions()
    if isinstance(given, TraceOptions):
        return given
    if isinstance(given, Mapping):
        _refuse_unknown(given, TraceOptions, "options", "option")
        return TraceOptions(**given)
    raise InvalidInputError("options", f"must be a tracer.TraceOptions or a mapping of its fields, "
                                       f"got {type(given).__name__}")


def _refuse_unknown(given: Mapping[str, Any], kind: type, prefix: str, noun: str) -> None:
    """InvalidInputError naming the first key of `given` that is no field of the dataclass `kind`."""
    known = {f.name for f in fields(kind)}
    if unknown := sorted(str(k) for k in given if k not in known):
        raise InvalidInputError(f"{prefix}.{unknown[0]}",
                                f"unknown {noun} (known: {', '.join(sorted(known))})")


def _tuning_from(given: Mapping[str, Any]) -> Tuning:
    """A Tuning from a mapping of its fields, each of its default's kind (a whole number, a
    number, or a list of as many numbers, or of strings), or InvalidInputError naming the field."""
    default = Tuning()
    _refuse_unknown(given, Tuning, "options.tuning", "setting")
    out: dict[str, Any] = {}
    for key, value in given.items():
        name = f"options.tuning.{key}"
        was = getattr(default, key)
        if isinstance(was, tuple):
            kind = str if was and isinstance(was[0], str) else numbers.Real
            if not isinstance(value, (list, tuple)) or any(
                    isinstance(v, bool) or not isinstance(v, kind) for v in value) or (
                    kind is not str and len(value) != len(was)):
                what = "strings" if kind is str else f"{len(was)} numbers"
                raise InvalidInputError(name, f"must be a list of {what}, got {value!r}")
            out[key] = tuple(value)
        elif isinstance(value, bool) or not isinstance(value, numbers.Integral if isinstance(was, int)
                                                       else numbers.Real):
            kind_name = "a whole number" if isinstance(was, int) else "a number"
            raise InvalidInputError(name, f"must be {kind_name}, got {value!r}")
        else:
            out[key] = value
    return replace(default, **out)


def _shown(value: float) -> str:
    """A number as its sender wrote it: the shortest form that reads back the same, as a double
    or, for a value that is exactly a float32 (protobuf's `float`: -0.1 arrives as
    -0.10000000149011612), as that float32."""
    v = float(value)
    if not math.isfinite(v):
        return str(v)
    single = struct.unpack("f", struct.pack("f", v))[0] == v
    for digits in range(1, 18):
        text = f"{v:.{digits}g}"
        if float(text) == v or (single and struct.pack("f", float(text)) == struct.pack("f", v)):
            return text
    return repr(v)

