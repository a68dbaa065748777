"""Options of one trace, with documented defaults (the only place tuning constants live)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum

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
    min_score: float = 0.62          # support score a pair needs to be cited
    second_source_margin: float = 0.1  # extra sources must score within this of the best
    evidence_context: int = 300      # max characters an evidence quote widens to whole sentences
    # Logistic support model over tracer.verify.FEATURES, one per language (Chinese reports are
    # scored on character bigrams, English on stemmed words); fitted by scripts/calibrate on
    # the dev benchmark, see docs/quality.md.
    weights_en: tuple[float, ...] = (
        0.515, 0.498, 0.268, 0.693, 1.135, 0.810, -0.504, -0.056, -0.741, -0.430, 0.111,
        1.203, 0.003, 2.356, -0.696, 0.935, -1.305,
    )
    bias_en: float = -5.779
    weights_zh: tuple[float, ...] = (
        1.008, 1.558, 1.609, 0.252, 0.160, 0.592, 0.804, 0.505, 0.644, 2.337, -1.632,
        0.160, -0.017, -0.931, 0.054, -0.529, -0.121,
    )
    bias_zh: float = -5.034

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
    tuning: Tuning = field(default_factory=Tuning)

    @property
    def threshold(self) -> float:
        return self.tuning.min_score if self.min_score is None else self.min_score

    def validated(self) -> TraceOptions:
        """Return self, or raise InvalidInputError naming the bad field."""
        if not 1 <= self.max_sources <= 20:
            raise InvalidInputError("options.max_sources", f"must be 1..20, got {self.max_sources}")
        if self.min_score is not None and not 0.0 <= self.min_score <= 1.0:
            raise InvalidInputError("options.min_score", f"must be within 0..1, got {self.min_score}")
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
