from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Mode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MODE_AUTO: _ClassVar[Mode]
    MODE_DETERMINISTIC: _ClassVar[Mode]
    MODE_LLM: _ClassVar[Mode]

class ExistingPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EXISTING_KEEP: _ClassVar[ExistingPolicy]
    EXISTING_REPLACE: _ClassVar[ExistingPolicy]

class Placement(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PLACEMENT_BEFORE_PUNCT: _ClassVar[Placement]
    PLACEMENT_AFTER_PUNCT: _ClassVar[Placement]
MODE_AUTO: Mode
MODE_DETERMINISTIC: Mode
MODE_LLM: Mode
EXISTING_KEEP: ExistingPolicy
EXISTING_REPLACE: ExistingPolicy
PLACEMENT_BEFORE_PUNCT: Placement
PLACEMENT_AFTER_PUNCT: Placement

class Record(_message.Message):
    __slots__ = ("url", "title", "content", "source_type", "id", "published_at", "metadata", "author", "site")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    URL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_AT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    SITE_FIELD_NUMBER: _ClassVar[int]
    url: str
    title: str
    content: str
    source_type: str
    id: str
    published_at: str
    metadata: _containers.ScalarMap[str, str]
    author: str
    site: str
    def __init__(self, url: _Optional[str] = ..., title: _Optional[str] = ..., content: _Optional[str] = ..., source_type: _Optional[str] = ..., id: _Optional[str] = ..., published_at: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ..., author: _Optional[str] = ..., site: _Optional[str] = ...) -> None: ...

class TraceOptions(_message.Message):
    __slots__ = ("mode", "style", "max_sources", "min_score", "existing", "references_heading", "language", "placement", "reference_format", "llm_min_score", "llm_keep_score", "strict_figures")
    MODE_FIELD_NUMBER: _ClassVar[int]
    STYLE_FIELD_NUMBER: _ClassVar[int]
    MAX_SOURCES_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    EXISTING_FIELD_NUMBER: _ClassVar[int]
    REFERENCES_HEADING_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    PLACEMENT_FIELD_NUMBER: _ClassVar[int]
    REFERENCE_FORMAT_FIELD_NUMBER: _ClassVar[int]
    LLM_MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    LLM_KEEP_SCORE_FIELD_NUMBER: _ClassVar[int]
    STRICT_FIGURES_FIELD_NUMBER: _ClassVar[int]
    mode: Mode
    style: str
    max_sources: int
    min_score: float
    existing: ExistingPolicy
    references_heading: str
    language: str
    placement: Placement
    reference_format: str
    llm_min_score: float
    llm_keep_score: float
    strict_figures: bool
    def __init__(self, mode: _Optional[_Union[Mode, str]] = ..., style: _Optional[str] = ..., max_sources: _Optional[int] = ..., min_score: _Optional[float] = ..., existing: _Optional[_Union[ExistingPolicy, str]] = ..., references_heading: _Optional[str] = ..., language: _Optional[str] = ..., placement: _Optional[_Union[Placement, str]] = ..., reference_format: _Optional[str] = ..., llm_min_score: _Optional[float] = ..., llm_keep_score: _Optional[float] = ..., strict_figures: _Optional[bool] = ...) -> None: ...

class TraceRequest(_message.Message):
    __slots__ = ("report", "records", "options", "id")
    REPORT_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    report: str
    records: _containers.RepeatedCompositeFieldContainer[Record]
    options: TraceOptions
    id: str
    def __init__(self, report: _Optional[str] = ..., records: _Optional[_Iterable[_Union[Record, _Mapping]]] = ..., options: _Optional[_Union[TraceOptions, _Mapping]] = ..., id: _Optional[str] = ...) -> None: ...

class CitedSource(_message.Message):
    __slots__ = ("number", "url", "title", "record_index", "score", "match", "evidence", "evidence_start", "evidence_end", "unstated", "quote_figures")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    RECORD_INDEX_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_START_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_END_FIELD_NUMBER: _ClassVar[int]
    UNSTATED_FIELD_NUMBER: _ClassVar[int]
    QUOTE_FIGURES_FIELD_NUMBER: _ClassVar[int]
    number: int
    url: str
    title: str
    record_index: int
    score: float
    match: str
    evidence: str
    evidence_start: int
    evidence_end: int
    unstated: _containers.RepeatedScalarFieldContainer[str]
    quote_figures: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, number: _Optional[int] = ..., url: _Optional[str] = ..., title: _Optional[str] = ..., record_index: _Optional[int] = ..., score: _Optional[float] = ..., match: _Optional[str] = ..., evidence: _Optional[str] = ..., evidence_start: _Optional[int] = ..., evidence_end: _Optional[int] = ..., unstated: _Optional[_Iterable[str]] = ..., quote_figures: _Optional[_Iterable[str]] = ...) -> None: ...

class Citation(_message.Message):
    __slots__ = ("sentence", "start", "end", "sources")
    SENTENCE_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    sentence: str
    start: int
    end: int
    sources: _containers.RepeatedCompositeFieldContainer[CitedSource]
    def __init__(self, sentence: _Optional[str] = ..., start: _Optional[int] = ..., end: _Optional[int] = ..., sources: _Optional[_Iterable[_Union[CitedSource, _Mapping]]] = ...) -> None: ...

class Reference(_message.Message):
    __slots__ = ("number", "url", "title", "record_index")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    RECORD_INDEX_FIELD_NUMBER: _ClassVar[int]
    number: int
    url: str
    title: str
    record_index: int
    def __init__(self, number: _Optional[int] = ..., url: _Optional[str] = ..., title: _Optional[str] = ..., record_index: _Optional[int] = ...) -> None: ...

class NearMiss(_message.Message):
    __slots__ = ("record_index", "url", "title", "score", "evidence", "evidence_start", "evidence_end", "unstated", "quote_figures", "conflict")
    RECORD_INDEX_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_START_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_END_FIELD_NUMBER: _ClassVar[int]
    UNSTATED_FIELD_NUMBER: _ClassVar[int]
    QUOTE_FIGURES_FIELD_NUMBER: _ClassVar[int]
    CONFLICT_FIELD_NUMBER: _ClassVar[int]
    record_index: int
    url: str
    title: str
    score: float
    evidence: str
    evidence_start: int
    evidence_end: int
    unstated: _containers.RepeatedScalarFieldContainer[str]
    quote_figures: _containers.RepeatedScalarFieldContainer[str]
    conflict: str
    def __init__(self, record_index: _Optional[int] = ..., url: _Optional[str] = ..., title: _Optional[str] = ..., score: _Optional[float] = ..., evidence: _Optional[str] = ..., evidence_start: _Optional[int] = ..., evidence_end: _Optional[int] = ..., unstated: _Optional[_Iterable[str]] = ..., quote_figures: _Optional[_Iterable[str]] = ..., conflict: _Optional[str] = ...) -> None: ...

class Unsupported(_message.Message):
    __slots__ = ("sentence", "start", "end", "reason", "closest")
    SENTENCE_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CLOSEST_FIELD_NUMBER: _ClassVar[int]
    sentence: str
    start: int
    end: int
    reason: str
    closest: NearMiss
    def __init__(self, sentence: _Optional[str] = ..., start: _Optional[int] = ..., end: _Optional[int] = ..., reason: _Optional[str] = ..., closest: _Optional[_Union[NearMiss, _Mapping]] = ...) -> None: ...

class Stats(_message.Message):
    __slots__ = ("sentences", "needs_citation", "cited_sentences", "unsupported", "records", "records_dropped", "passages", "citations", "existing_citations", "llm_calls", "llm_prompt_tokens", "llm_completion_tokens", "llm_retries", "llm_pairs_rejected", "stage_ms", "total_ms", "llm_sentences_kept")
    class StageMsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    SENTENCES_FIELD_NUMBER: _ClassVar[int]
    NEEDS_CITATION_FIELD_NUMBER: _ClassVar[int]
    CITED_SENTENCES_FIELD_NUMBER: _ClassVar[int]
    UNSUPPORTED_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    RECORDS_DROPPED_FIELD_NUMBER: _ClassVar[int]
    PASSAGES_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    EXISTING_CITATIONS_FIELD_NUMBER: _ClassVar[int]
    LLM_CALLS_FIELD_NUMBER: _ClassVar[int]
    LLM_PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    LLM_COMPLETION_TOKENS_FIELD_NUMBER: _ClassVar[int]
    LLM_RETRIES_FIELD_NUMBER: _ClassVar[int]
    LLM_PAIRS_REJECTED_FIELD_NUMBER: _ClassVar[int]
    STAGE_MS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_MS_FIELD_NUMBER: _ClassVar[int]
    LLM_SENTENCES_KEPT_FIELD_NUMBER: _ClassVar[int]
    sentences: int
    needs_citation: int
    cited_sentences: int
    unsupported: int
    records: int
    records_dropped: int
    passages: int
    citations: int
    existing_citations: int
    llm_calls: int
    llm_prompt_tokens: int
    llm_completion_tokens: int
    llm_retries: int
    llm_pairs_rejected: int
    stage_ms: _containers.ScalarMap[str, float]
    total_ms: float
    llm_sentences_kept: int
    def __init__(self, sentences: _Optional[int] = ..., needs_citation: _Optional[int] = ..., cited_sentences: _Optional[int] = ..., unsupported: _Optional[int] = ..., records: _Optional[int] = ..., records_dropped: _Optional[int] = ..., passages: _Optional[int] = ..., citations: _Optional[int] = ..., existing_citations: _Optional[int] = ..., llm_calls: _Optional[int] = ..., llm_prompt_tokens: _Optional[int] = ..., llm_completion_tokens: _Optional[int] = ..., llm_retries: _Optional[int] = ..., llm_pairs_rejected: _Optional[int] = ..., stage_ms: _Optional[_Mapping[str, float]] = ..., total_ms: _Optional[float] = ..., llm_sentences_kept: _Optional[int] = ...) -> None: ...

class Status(_message.Message):
    __slots__ = ("code", "message")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ...) -> None: ...

class TraceResponse(_message.Message):
    __slots__ = ("report", "citations", "references", "unsupported", "removed_references", "stats", "warnings", "degraded", "mode", "id", "status", "engine_version")
    REPORT_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    REFERENCES_FIELD_NUMBER: _ClassVar[int]
    UNSUPPORTED_FIELD_NUMBER: _ClassVar[int]
    REMOVED_REFERENCES_FIELD_NUMBER: _ClassVar[int]
    STATS_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ENGINE_VERSION_FIELD_NUMBER: _ClassVar[int]
    report: str
    citations: _containers.RepeatedCompositeFieldContainer[Citation]
    references: _containers.RepeatedCompositeFieldContainer[Reference]
    unsupported: _containers.RepeatedCompositeFieldContainer[Unsupported]
    removed_references: str
    stats: Stats
    warnings: _containers.RepeatedScalarFieldContainer[str]
    degraded: bool
    mode: str
    id: str
    status: Status
    engine_version: str
    def __init__(self, report: _Optional[str] = ..., citations: _Optional[_Iterable[_Union[Citation, _Mapping]]] = ..., references: _Optional[_Iterable[_Union[Reference, _Mapping]]] = ..., unsupported: _Optional[_Iterable[_Union[Unsupported, _Mapping]]] = ..., removed_references: _Optional[str] = ..., stats: _Optional[_Union[Stats, _Mapping]] = ..., warnings: _Optional[_Iterable[str]] = ..., degraded: _Optional[bool] = ..., mode: _Optional[str] = ..., id: _Optional[str] = ..., status: _Optional[_Union[Status, _Mapping]] = ..., engine_version: _Optional[str] = ...) -> None: ...
