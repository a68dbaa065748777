"""Plain data passed between stages. Text is carried as spans into an original string."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

Span = tuple[int, int]  # [start, end) code-point offsets


class CancelToken(Protocol):
    """Anything with `is_set()` (threading.Event works); stages check it and stop."""

    def is_set(self) -> bool: ...

_EMPTY: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Record:
    """A validated search record. `index` is its position in the request's flattened records."""

    index: int
    url: str
    title: str
    content: str
    source_type: str = ""
    id: str = ""
    published_at: str = ""
    author: str = ""
    site: str = ""
    metadata: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    source_key: str = ""  # canonical identity: records sharing it share one reference number


@dataclass(frozen=True, slots=True)
class Passage:
    """A slice [start, end) of one record's content; `id` is its position in the passage list."""

    id: int
    record: int  # position of the record in the normalised record list (not Record.index)
    start: int
    end: int
    text: str    # == records[record].content[start:end], kept for speed


@dataclass(frozen=True, slots=True)
class Layout:
    """Result of the one markdown scan over the report."""

    body_end: int                     # the references section (if any) starts here
    references: Span | None           # the trailing references section, cut verbatim
    protected: tuple[Span, ...]       # sorted, disjoint regions that are never prose
    headings: tuple[Span, ...] = ()   # heading lines (also inside `protected`)
    link_labels: frozenset[str] = frozenset()  # casefolded labels of "[label]: url" in the body
    # the body rows of the body's tables (a header row, a delimiter row, then these), each line
    # without its line break; they are inside `protected` too, and each is a sentence of its own
    table_rows: tuple[Span, ...] = ()


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence span [start, end) of the original report (trailing whitespace excluded)."""

    id: int
    start: int
    end: int
    text: str
    in_list: bool = False
    heading: str = ""                 # nearest heading text above it (context for retrieval)
    in_table: bool = False            # a table's body row, [start, end) its cells' text
    # what the verifier reads when it is not `text`: a table row's cells, each after its column's
    # header ("Country China, GDP 2023 (trillion USD) 17.8, Growth 5.2%")
    claim: str = ""
    # a table row's first value when its column names things ("Telescope", "国家"), not properties
    # ("Property", "指标"): what a record must name to be the row's source
    subject: str = ""
    table: int = 0                    # a table row's table, 1, 2, … in the report's order (0: prose)

    @property
    def query(self) -> str:
        """The text a claim is read from: `claim`, else the sentence itself."""
        return self.claim or self.text


@dataclass(frozen=True, slots=True)
class ExistingMarker:
    """A citation marker already present in the report, e.g. "[1, 3]" or "[^2]"."""

    start: int
    end: int
    numbers: tuple[int, ...]
    urls: tuple[str, ...] = ()        # for "[[1]](url)" style markers
    sentence: int | None = None       # Sentence.id it belongs to, if any
    linked: bool = False              # "[1]" whose label the body defines ("[1]: url"): a link
    # record ids a writer agent's marker names instead of numbers ("【turn0search3】"), one per
    # synthetic (negative) number in `numbers`; they resolve by `Record.id` only
    ids: tuple[str, ...] = ()
    opener: bool = False              # "[cite_start]": opens a cited span and cites nothing itself
    # a word of its sentence ("如[2]所述", "as shown in [2], …"): removing it would break the text,
    # so it is renumbered where it stands when its source is kept (tracer.existing.is_narrative)
    narrative: bool = False
    # an inline link citation ("([Reuters](https://…))"): it stays as written unless its records
    # support the sentence (tracer.pipeline)
    inline_link: bool = False


@dataclass(frozen=True, slots=True)
class Support:
    """Verification of one (sentence, record) pair."""

    score: float                      # calibrated 0..1
    match: str                        # "exact" | "fuzzy" | "lexical" | "existing" | "contradicted"
    evidence_start: int               # offsets into the record's content
    evidence_end: int
    # For a cited pair: the sentence's figures the record does not state, and the quote's figures
    # of their sorts (`CitedSource.unstated`, `CitedSource.quote_figures`).
    unstated: tuple[str, ...] = ()
    quote_figures: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Candidate:
    """A proposed source for a sentence, after verification."""

    sentence: int
    record: int                       # position in the normalised record list
    passage: int
    support: Support


@dataclass(frozen=True, slots=True)
class CitedSource:
    """A record cited for a sentence. `unstated` lists the sentence's numbers, dates and
    quantities that this record does not state (a citation may still be made: a sentence with
    one figure its record leaves out or states otherwise is partly supported), and
    `quote_figures` the figures its quote states of the same sorts, as in `NearMiss`: a reviewer
    sees which figure the source does not back and what it says instead."""

    number: int
    url: str
    title: str
    record_index: int
    score: float
    match: str
    evidence: str
    evidence_start: int
    evidence_end: int
    unstated: tuple[str, ...] = ()
    quote_figures: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Citation:
    sentence: str
    start: int
    end: int
    sources: tuple[CitedSource, ...]


@dataclass(frozen=True, slots=True)
class Reference:
    number: int
    url: str
    title: str
    record_index: int
    author: str = ""
    site: str = ""
    published_at: str = ""
    is_link: bool = True              # False for local documents / non-http(s) sources


@dataclass(frozen=True, slots=True)
class NearMiss:
    """The record that came closest to supporting an unsupported sentence, scoring below
    `min_score` (or, for a table row, scoring over it without stating the row's figures where it
    speaks of the row's subject): a hint for the writer (which source is nearest, and what it
    says), never a citation. Offsets are into that record's content. `unstated` lists the sentence's numbers,
    dates and quantities that this record does not state ("1200 ft", "2021-04-29"): when the
    record is the right source, a figure it does not back (wrong, or from elsewhere).
    `quote_figures` lists the figures the quote states of the same sorts (a date for a date, a
    percentage for a percentage, a length for a length): what the record likely says instead.
    It is empty when the quote states none of their sort (the record leaves the figure out).
    `conflict` says where the quote contradicts the sentence, when it does ('its quote says
    "decreased" where the sentence says "increased"'; `tracer.conflict`): such a record scores
    at most `tracer.verify.CONFLICT_SCORE`, whatever the words it shares."""

    record_index: int
    url: str
    title: str
    score: float
    evidence: str
    evidence_start: int
    evidence_end: int
    unstated: tuple[str, ...] = ()
    quote_figures: tuple[str, ...] = ()
    conflict: str = ""


@dataclass(frozen=True, slots=True)
class Unsupported:
    sentence: str
    start: int
    end: int
    reason: str
    closest: NearMiss | None = None   # set when some record scored at least Tuning.near_miss_floor


@dataclass(slots=True)
class Stats:
    sentences: int = 0
    needs_citation: int = 0
    cited_sentences: int = 0
    unsupported: int = 0
    records: int = 0
    records_dropped: int = 0
    passages: int = 0
    citations: int = 0
    existing_citations: int = 0
    llm_calls: int = 0
    llm_prompt_tokens: int = 0
    llm_completion_tokens: int = 0
    llm_retries: int = 0
    llm_pairs_rejected: int = 0
    llm_sentences_kept: int = 0       # model left them uncited; llm.keep_score kept a citation
    stage_ms: dict[str, float] = field(default_factory=dict)
    total_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class TraceResult:
    report: str
    citations: tuple[Citation, ...]
    references: tuple[Reference, ...]
    unsupported: tuple[Unsupported, ...]
    removed_references: str
    stats: Stats
    warnings: tuple[str, ...]
    degraded: bool = False
    mode: str = "deterministic"
