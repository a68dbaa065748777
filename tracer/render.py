"""Render stage: number the sources, insert markers at sentence ends, append the references.

The body is never edited: the output is the input body with marker strings inserted at
span ends (old markers removed or renumbered), followed by a new references section that is
only ever *appended*. Sources are numbered 1..n by first appearance in the text, one number
per canonical source (`Record.source_key`), so chunks and URL variants of a page share one.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from tracer.errors import InvalidInputError
from tracer.existing import (
    MARKER_RE,
    RUN_JOIN,
    SCOPE_STEP,
    SUBJECT_VERB,
    _footnote_definitions,
    marker_runs,
    opening_runs,
    run_blanks,
    strip_markers,
    unmarked,
)
from tracer.markdown import kept_definitions, link_definitions, link_label, open_table_rows, unclosed_block
from tracer.models import (
    Candidate,
    Citation,
    CitedSource,
    ExistingMarker,
    Layout,
    Record,
    Reference,
    Sentence,
    Span,
    Support,
)
from tracer.options import ExistingPolicy, Placement, TraceOptions
from tracer.refformat import (
    clean_text,
    display_title,
    escape_markdown,
    format_reference,
    is_http_url,
    safe_url,
    validate_reference_format,
)
from tracer.text import DIGIT_NOTE_END, note_after

STYLES: tuple[str, ...] = (
    "numeric", "numeric-comma", "link", "footnote", "footnote-evidence", "superscript", "openjiuwen",
    "citation",
)
_STYLE_ALIASES = {
    "": "numeric", "default": "numeric", "brackets": "numeric", "numeric_comma": "numeric-comma",
    "comma": "numeric-comma", "hyperlink": "link", "linked": "link", "footnotes": "footnote",
    "gfm": "footnote",
    "footnote_evidence": "footnote-evidence", "sup": "superscript", "open-jiuwen": "openjiuwen",
    "open_jiuwen": "openjiuwen", "jiuwen": "openjiuwen",
}

# Terminal punctuation a marker goes before (default placement).
_TERMINAL = frozenset(".!?。！？；;…:：")
_SUPERSCRIPT_DIGITS = frozenset("⁰¹²³⁴⁵⁶⁷⁸⁹")
_ABBREV_TAIL = re.compile(
    r"(?:\b[A-Za-z]\.){1,}[A-Za-z]?$|\b(?:e\.g|i\.e|etc|vs|Inc|Ltd|Co|Corp|Dept|Mr|Mrs|Ms|Dr|St|No|Jr|Sr)$"
    r"|\bet al$"                               # "Wang et al."
    r"|\b[A-Z][a-z]{0,2}\.[A-Za-z]{1,3}$"   # "a Ph.D.", "an M.Sc."
)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_YEAR_BRACKET_AFTER = re.compile(r"\[\d{4}\]|【\d{4}】")
_YEAR_BRACKET_BEFORE = re.compile(r"(?:\[\d{4}\]|【\d{4}】)\Z")
_FOOTNOTE_REF_BEFORE = re.compile(r"\[\^[\w.-]{1,40}\]\Z")
_BARE_URL_START = re.compile(r"(?i:https?://|www\.)")
# what ends the run of characters a bare URL's autolink takes in: whitespace, "<", or the
# author's own Chinese words (already inside the autolink, so a marker after them adds nothing)
_URL_RUN_ENDS = re.compile(r"[\s<\u3400-\u9fff\uf900-\ufaff]")
_CLAUSE_COMMA = re.compile(r"(?<!\d),|,(?!\d)|，")
# what may stand between an aside's comma and its URL: a few words, no figure (", see also", ", via",
# "，见[注]（", "，来源：《比亚迪年报》")
_ASIDE_LEAD = re.compile(r"[ \t]*(?:[^\d\s]+[ \t]*){0,4}")
# a dash opening an aside ("… in 2022 — see https://…")
_ASIDE_DASH = re.compile(r"[ \t]+(?:—|–|--?)[ \t]+")
# the words leading to a URL at the end of a clause ("… in 2021 via https://…", "details at")
_ASIDE_CUE = re.compile(r"[ \t]+(?:(?:see|via|at|from|visit|on|details|more|read|available|source|sources)"
                        r"(?:[ \t]+(?:also|more|at|on|here|in))*[ \t]*:?[ \t]*"
                        r"|(?:详见|参见|见|来源|出处)[:：]?[ \t]*)$", re.IGNORECASE)
_ONE_NEWLINE = re.compile(r"\A[ \t]*\r?\n(?=[ \t]*\S)")
_CONTAINER_PREFIX = re.compile(r"[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+|>[ \t]*)+")

_MARKER_PATTERNS: dict[str, str] = {
    "numeric": r"(?:\[\d+\])+",
    "numeric-comma": r"\[\d+(?:, \d+)*\]",
    "link": r"(?:\[\[\d+\]\]\([^)\s]*\)|\[\d+\])+",
    "footnote": r"(?:\[\^\d+\])+",
    "footnote-evidence": r"(?:\[\^\d+\])+",
    "superscript": r"<sup>(?:\[\d+\])+</sup>",
    "openjiuwen": r"(?:\[source_tracer_result\]\[(?:\\.|[^\\\[\]])*\](?:\([^)\s]*\))?)+",
    "citation": r"(?:\[citation:\d+\])+",
}


@dataclass(frozen=True, slots=True)
class Rendered:
    report: str
    citations: tuple[Citation, ...]
    references: tuple[Reference, ...]
    warnings: tuple[str, ...] = ()


def validate_style(style: str) -> str:
    """The canonical style name, or InvalidInputError naming `options.style`."""
    key = (style or "").strip().lower()
    key = _STYLE_ALIASES.get(key, key)
    if key not in STYLES:
        raise InvalidInputError(
            "options.style", f"unknown style {style!r}; expected one of {', '.join(STYLES)}"
        )
    return key


def marker_regex(style: str) -> re.Pattern[str]:
    """A regex matching every marker `render_report` emits in `style` (for stripping)."""
    return re.compile(_MARKER_PATTERNS[validate_style(style)])


def strip_emitted_markers(text: str, style: str) -> str:
    """`text` with every marker of `style` removed."""
    return marker_regex(style).sub("", text)


def _named_keys(markers: Iterable[ExistingMarker], resolved: Mapping[int, int | None],
                recs: Sequence[Record]) -> set[str]:
    """The canonical sources the old `markers` resolve to."""
    out: set[str] = set()
    for m in markers:
        for n in m.numbers:
            r = resolved.get(n)
            if r is not None and 0 <= r < len(recs):
                out.add(source_key(recs[r]))
    return out


def _reads_without(report: str, sentence: Sentence, marker: ExistingMarker) -> str:
    """The sentence around an old marker that was removed, markers aside as the output reads it
    (`tracer.existing.unmarked`; for a warning): whole when short, else 40 characters either side,
    cut at a space where there is one, "…" where cut."""
    lo, hi = sentence.start, sentence.end
    if hi - lo > 120:
        lo, hi = max(lo, marker.start - 40), min(hi, marker.end + 40)
    left, right = report[lo:marker.start], report[marker.end:hi]
    if lo > sentence.start:
        left = "…" + (left[left.index(" ") + 1:] if " " in left else left)
    if hi < sentence.end:
        right = (right[:right.rindex(" ")] if " " in right else right) + "…"
    return unmarked(left + report[marker.start:marker.end] + right)


def _old_label(marker: ExistingMarker, n: int) -> str:
    """How a warning names an old marker's source: its number, the record id it gave, or the
    URL it links to (a link marker's number is internal, and negative)."""
    if n < 0 and n in marker.numbers[:len(marker.ids)]:
        return marker.ids[marker.numbers.index(n)]
    if n < 0 and marker.urls:
        one_each = len(marker.urls) == len(marker.numbers)
        return marker.urls[marker.numbers.index(n) if one_each else 0]
    return str(n % SCOPE_STEP)   # (one of several lists': its number as written)


def _link_check() -> Callable[[str], bool]:
    try:  # tracer.records owns the canonical rule; fall back to ours while it is absent
        from tracer.records import is_link
    except ImportError:
        return is_http_url
    return is_link


def source_key(rec: Record) -> str:
    """Canonical identity used for numbering (falls back to the raw URL)."""
    return rec.source_key or rec.url.strip() or f"#record-{rec.index}"


@dataclass(slots=True)
class _Entry:
    record: int                # position in recs
    support: Support | None    # None: kept old citation without a verified pair


@dataclass(slots=True)
class _Anchor:
    pos: int
    sentence: Sentence | None
    entries: list[_Entry] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    fixed: bool = False   # renumbered where it stands: a word of its sentence ("如[2]所述")


class _Text:
    """The body with the spans that will be deleted, seen as the output will see it."""

    def __init__(self, body: str, deletions: list[Span], protected: Sequence[Span],
                 link_labels: frozenset[str] = frozenset()) -> None:
        self.body = body
        self.link_labels = link_labels
        self.deletions = deletions
        self.del_end = {b: a for a, b in deletions}
        self.del_start = {a: b for a, b in deletions}
        # a run of touching deletions ("<sup>1</sup><sup>1</sup>…") seen whole from either end, so
        # the text next to a point is found in one step, not one per deletion of the run
        self._run_start: dict[int, int] = {}
        self._run_end: dict[int, int] = {}
        ordered = sorted(deletions)
        for k, (a, b) in enumerate(ordered):
            self._run_start[b] = self._run_start.get(a, a) if k and ordered[k - 1][1] == a else a
        for k in range(len(ordered) - 1, -1, -1):
            a, b = ordered[k]
            nxt = ordered[k + 1] if k + 1 < len(ordered) else None
            self._run_end[a] = self._run_end[b] if nxt is not None and nxt[0] == b else b
        self.protected = protected
        self._url_spans: list[Span] | None = None
        self._url_ends: list[int] = []
        regions = sorted([*protected, *deletions])
        self._starts = [a for a, _ in regions]
        self._reach: list[int] = []  # running max of region ends (robust to nested regions)
        for _, end in regions:
            self._reach.append(max(end, self._reach[-1] if self._reach else end))

    def after_bare_url(self, p: int) -> bool:
        """Would a marker at p extend a bare URL before it? GFM's autolinks ("https://…",
        "www.…") run to the next whitespace or "<", so "see https://x.org/a[1]", and ".[1]" or
        ")[1]" after one, render as a link to "https://x.org/a%5B1%5D" (deleted markers between
        count as gone)."""
        return self._bare_url_before(p) is not None

    def url_asides(self, p: int, floor: int) -> list[int]:
        """Where a marker that would extend the bare URL before p may go instead, best first:
        before the aside that holds the URL ("(see https://…)", " — see https://…", or ", see
        https://…": a dash or comma followed by at most four words and no figure, never the one
        in "1,250" or "July 12, 2022"), before the words leading to it (" via https://…"), then
        right before the URL (its leading space left after the marker), and so on back past an
        earlier URL of the same aside ("see https://a https://b"); only places after `floor`."""
        out: list[int] = []
        for _ in range(4):
            url = self._bare_url_before(p)
            if url is None:
                break
            body = self.body
            window = max(floor, url - 60)
            opened = max(body.rfind("(", window, url), body.rfind("（", window, url))
            comma = -1
            for m in _CLAUSE_COMMA.finditer(body, max(floor, url - 30), url):
                comma = m.start()
            if comma >= 0 and not _ASIDE_LEAD.fullmatch(body, comma + 1, url):
                comma = -1   # "on July 12, 2022 — see https://…": a comma of the clause, not the aside's
            dash = -1
            for m in _ASIDE_DASH.finditer(body, window, url):
                if _ASIDE_LEAD.fullmatch(body, m.end(), url):   # not "the 2020 - 2021 season at https://…"
                    dash = m.start()
            cue = _ASIDE_CUE.search(body, window, url)
            candidates = [url]
            if cue is not None:
                candidates.insert(0, cue.start())
            if comma >= 0:
                candidates.insert(0, comma)
            if dash >= 0:
                candidates.insert(0, dash)
            if opened >= 0 and not any(c in body[opened:url] for c in ")）"):
                candidates.insert(0, opened)
            for q in candidates:
                while q > floor and body[q - 1].isspace():
                    q -= 1
                if q > floor and q not in out:
                    out.append(q)
            p = out[-1] if out else url
            if p <= floor:
                break
        return out

    def _bare_url_before(self, p: int) -> int | None:
        """The start of the bare URL whose autolink a marker at p would join: GFM's autolink runs
        on to the next whitespace or "<", so the marker joins it when nothing but such characters
        (deleted markers aside) stand between the URL and p — the rest of a URL our scan ended
        early (`?q="a"`, `we[b]b`), closing punctuation, ")". Where the author's own Chinese words
        already run on from the URL ("来源：https://x.org/a。据报道…"), the autolink has taken them
        in already and a marker after them changes nothing more."""
        if self._url_spans is None:
            # a URL inside an old marker being deleted ("[source_tracer_result][T](https://…)",
            # "[[1]](https://…)") is gone from the output: no marker can join it
            spans = sorted((a, b) for a, b in self.protected
                           if _BARE_URL_START.match(self.body, a) and not self._deleted(a, b))
            self._url_spans = spans
            self._url_ends = [b for _a, b in spans]
        if not self._url_spans:
            return None
        q = p
        while q in self.del_end:
            q = self.del_end[q]
        k = bisect_right(self._url_ends, q) - 1   # the last URL ending at or before q
        if k < 0:
            return None
        start, end = self._url_spans[k]
        if q - end > 4096:
            return None
        gap = self._kept(end, q)
        return None if _URL_RUN_ENDS.search(gap) else start

    def opens_with_subject(self, p: int) -> bool:
        """Does a verb whose subject is a marker follow p ("指出", "found that"), deleted markers
        aside? Then a marker at p reads as that subject."""
        hi = min(len(self.body), p + 40)
        kept = self._kept(p, hi)
        end = min(len(self.body), p + 4096)
        while len(kept) < 40 and hi < end:   # past long deleted markers ("[[2]](https://…)")
            hi = min(end, hi + 400)
            kept = self._kept(p, hi)
        # (a verb on the next line of the paragraph too: "2023.[1]\n found that …")
        return SUBJECT_VERB.match(_ONE_NEWLINE.sub(" ", kept, count=1)) is not None

    def _deleted(self, lo: int, hi: int) -> bool:
        """Whether body[lo:hi] lies inside one marker being deleted."""
        i = bisect_right(self.deletions, (lo, len(self.body) + 1)) - 1
        return i >= 0 and self.deletions[i][0] <= lo and hi <= self.deletions[i][1]

    def _kept(self, lo: int, hi: int) -> str:
        """body[lo:hi] without the markers being deleted in it."""
        parts: list[str] = []
        at = lo
        i = bisect_left(self.deletions, (lo, lo))
        if i > 0 and self.deletions[i - 1][1] > lo:
            i -= 1
        while i < len(self.deletions) and self.deletions[i][0] < hi:
            a, b = self.deletions[i]
            parts.append(self.body[at:max(at, a)])
            at = max(at, b)
            i += 1
        parts.append(self.body[at:hi] if at < hi else "")
        return "".join(parts)

    def covering_end(self, p: int) -> int | None:
        """End of the protected region or deleted marker strictly containing p, if any."""
        i = bisect_left(self._starts, p)  # regions starting before p: [:i]
        if i and self._reach[i - 1] > p:
            return self._reach[i - 1]
        return None

    def prev_char(self, p: int) -> str:
        p = self._run_start.get(p, p)
        return self.body[p - 1] if p > 0 else "\n"

    def year_bracket_near(self, p: int) -> bool:
        """Is p right next to a bracketed big number ("[2020]", "【2023】")?

        Next to a marker such a number reads as one more citation ("[1][2020]"), so tracing
        the output again would delete the author's year.
        """
        q = p
        while q in self.del_start:
            q = self.del_start[q]
        r = p
        while r > 0 and r in self.del_end:
            r = self.del_end[r]
        return bool(_YEAR_BRACKET_AFTER.match(self.body, q)
                    or _YEAR_BRACKET_BEFORE.search(self.body, max(0, r - 6), r))

    def reference_label_at(self, p: int) -> bool:
        """Does a "[label]" that the body defines ("[label]: url") follow p?"""
        while p in self.del_start:
            p = self.del_start[p]
        if not self.link_labels or not self.body.startswith("[", p):
            return False
        q = self.body.find("]", p + 1, p + 1000)
        if q < 0 or "\n\n" in self.body[p:q] or "[" in self.body[p + 1:q]:
            return False
        label = link_label(self.body[p + 1:q])
        # (a footnote's label makes no link: "[1][^2]" is a marker and a footnote reference)
        return not label.startswith("^") and label in self.link_labels

    def deleted_through(self, p: int) -> int:
        """The end of the run of deletions that starts at p (p itself if none does)."""
        return self._run_end.get(p, p)

    def next_char(self, p: int) -> str:
        p = self._run_end.get(p, p)
        return self.body[p] if p < len(self.body) else "\n"

    def line_before(self, p: int) -> str:
        """The text of p's line before p (its last 256 characters at most)."""
        return self.body[self.body.rfind("\n", max(0, p - 256), p) + 1 or max(0, p - 256):p]

    def at_line_start(self, p: int) -> bool:
        while p > 0:
            while p in self.del_end:
                p = self.del_end[p]
            if p == 0:
                return True
            ch = self.body[p - 1]
            if ch == "\n":
                return True
            if ch not in " \t":
                return False
            p -= 1
        return True


def _core_end(text: _Text, s: Sentence) -> int:
    """Sentence end with trailing whitespace and deleted markers (and the spaces before them) skipped."""
    p = min(s.end, len(text.body))
    moved = True
    while moved and p > s.start:
        moved = False
        while p > s.start and text.body[p - 1].isspace():  # spans exclude it; be safe if one does not
            p -= 1
            moved = True
        if p in text.del_end and text.del_end[p] >= s.start:
            p = text.del_end[p]
            moved = True
    return p


_CLOSE_TAG_AT_END = re.compile(r"</(?:b|strong|em|i|u|span|mark|small|big|font|ins|s)\s*>\Z", re.IGNORECASE)


def _before_punct(text: _Text, s: Sentence, end: int) -> int:
    body = text.body
    # "<b>Fact one.</b>": before the terminal inside the element ("Fact one[1].</b>"), so that the
    # sentence still ends where it did when the output is traced again
    inner = end
    while (tag := _CLOSE_TAG_AT_END.search(body, max(s.start, inner - 40), inner)) is not None \
            and tag.start() > s.start:
        inner = tag.start()
    if inner != end:
        p = _before_terminal(text, s, inner)
        return p if p != inner else end
    return _before_terminal(text, s, end)


def _before_terminal(text: _Text, s: Sentence, end: int) -> int:
    body = text.body
    p = end
    while p > s.start and body[p - 1] in _SUPERSCRIPT_DIGITS:
        p -= 1  # "in 2023.¹": the note mark after the terminal goes with it
    if p == end and (dn := DIGIT_NOTE_END.search(body, max(s.start, end - 8), end)) \
            and note_after(body, dn.start() - 1):
        p = dn.start()  # "vehicles.1": so does a note copied as digits (`tracer.text.DIGIT_NOTE`)
    if p == end or body[p - 1] not in _TERMINAL:
        p = end
    while p > s.start:
        if p in text.del_end and text.del_end[p] >= s.start:
            p = text.del_end[p]
            continue
        if body[p - 1] in _TERMINAL:
            p -= 1
            continue
        break
    if p == end or p <= s.start:
        return end
    run = body[p:end]
    if run == "." and _ABBREV_TAIL.search(body[max(s.start, p - 12):p]):
        return end  # "the U.S." — a marker inside the abbreviation would read wrong
    while p - 1 > s.start and body[p - 1] in " \t":
        p -= 1  # "in 2023 ." -> "in 2023[1] .": the blank before the stop is the text's, not the marker's
    return p


def _hazard(text: _Text, p: int, style: str) -> bool:
    """Would a `style` marker at p create markdown that was not there (link, image, escape, ref def)?"""
    nxt = text.next_char(p)
    prv = text.prev_char(p)
    if prv == "\\" or (prv == "!" and style == "link"):  # "\\[1]" escapes, "![[1]](u)" is an image
        return True
    if prv == "^" and style != "superscript":  # "km^2^" + "[1]" would read as the marker "^[1]"
        return True
    if prv == "]" and nxt == "(":  # between the halves of a link the scan did not take for one
        return True
    if nxt == ":" and prv == "]" and _FOOTNOTE_REF_BEFORE.search(text.body, max(0, p - 44), p):
        return True  # "x [^1]" + marker + ":" would make the author's "[^1]" read as a marker
    if style == "superscript":
        return False                   # "<sup>" ends an autolink
    if text.after_bare_url(p):
        return True
    if nxt in "[【" or prv == "】":
        if text.year_bracket_near(p):
            return True
    if nxt == "[" and text.reference_label_at(p):  # "[1][统计局]" is a link with the text "1"
        return True
    if prv == "]":  # "[the filing]" + "[1]" reads as the reference link "[the filing][1]"
        return True
    if nxt == "(":  # "[1](x)" would become a link
        return True
    if nxt != ":":
        return False
    if text.at_line_start(p) or _CONTAINER_PREFIX.fullmatch(strip_markers(text.line_before(p))):
        return True  # "[1]: x" opening a line, list item or quote is a link definition
    return prv.isspace() and style in ("footnote", "footnote-evidence")  # " [^1]:" reads as one


def _place(text: _Text, p: int) -> int:
    """p, moved past any protected region or deleted marker it falls inside."""
    end = text.covering_end(p)
    while end is not None:
        p = end
        end = text.covering_end(p)
    return p


def _positions(text: _Text, s: Sentence, old: list[ExistingMarker], placement: Placement,
               keep: bool = True) -> list[int]:
    """Insertion points for sentence s, preferred first. The author's slot comes first under
    `keep`, and under replace where it obeys `placement` (or no punctuation ends the sentence)."""
    end = _core_end(text, s)
    before = _before_punct(text, s, end)
    first = before if placement is Placement.BEFORE_PUNCT else end
    second = end if placement is Placement.BEFORE_PUNCT else before
    order: list[int] = []
    # "fact [1]." -> "fact [2].": reuse the author's slot so no stray space is left behind.
    if old:
        # the slot of the last run of markers the author wrote ("x [1][2]" or "x [1], [2]" ->
        # "x [3]"), so a second trace finds the same slot in the output
        k = len(old) - 1
        while k > 0 and RUN_JOIN.fullmatch(text.body, old[k - 1].end, old[k].start):
            k -= 1
        slot = old[k].start
        # under replace the slot must also obey the placement: before the terminal for "before"
        # ("2021. [1] Its" -> "2021[2]. Its"), after it for "after" ("2021 [1]." -> "2021 .[2]")
        # (a run of old markers and the blank before it are deleted as one: "x [1]." is "x" + ".")
        reach = text.deleted_through(before)
        obeys = before == end or (slot <= reach if placement is Placement.BEFORE_PUNCT else slot >= end)
        if slot > s.start and text.body[slot - 1] in " \t" and old[-1].end >= before and (keep or obeys):
            order.append(slot)
    order.append(first)
    if placement is Placement.BEFORE_PUNCT and before != end:
        # "…3800亿元[^1]。" with the author's footnote kept: "[^1]" + "[1]" would read as a link's
        # halves, and after "。" the marker would open the next sentence; so before the footnote
        fn = before
        while (ref := _FOOTNOTE_REF_BEFORE.search(text.body, max(s.start, fn - 44), fn)) is not None \
                and ref.start() > s.start:
            fn = ref.start()
        if fn != before:
            order.append(fn)
    order += [second, s.end]
    out: list[int] = []
    for p in order:
        q = _place(text, min(p, len(text.body)))
        if q not in out:
            out.append(q)
    return out


def _format_marker(style: str, numbers: list[int], refs: Mapping[int, Reference]) -> str:
    if style == "numeric-comma":
        return "[" + ", ".join(str(n) for n in numbers) + "]"
    if style in ("footnote", "footnote-evidence"):
        return "".join(f"[^{n}]" for n in numbers)
    if style == "superscript":
        return "<sup>" + "".join(f"[{n}]" for n in numbers) + "</sup>"
    if style == "citation":
        return "".join(f"[citation:{n}]" for n in numbers)
    if style == "link":
        return "".join(
            f"[[{n}]]({safe_url(refs[n].url)})" if refs[n].is_link else f"[{n}]" for n in numbers
        )
    if style == "openjiuwen":
        parts = []
        for n in numbers:
            ref = refs[n]
            title = escape_markdown(display_title(ref), 200)
            url = f"({safe_url(ref.url)})" if ref.is_link else ""
            parts.append(f"[source_tracer_result][{title}]{url}")
        return "".join(parts)
    return "".join(f"[{n}]" for n in numbers)


def _separator(body: str, nl: str) -> str:
    """What to append so exactly one blank line precedes the heading (body bytes untouched)."""
    if not body:
        return ""
    tail = body[len(body.rstrip()):]
    newlines = tail.count("\n")
    if body.endswith("\n"):
        return "" if newlines >= 2 else nl
    return nl if newlines >= 1 else nl + nl


_OLD_HEADING = re.compile(r" {0,3}(#{1,6})[ \t]")


def _heading(options: TraceOptions, lang: str, old: str = "", closing: str = "") -> str:
    """The new list's heading, at the level of the old list's markdown heading (`old`, the cut
    section's text) when it had one: "### 参考资料" over it and "### 延伸阅读" after gives
    "### 参考文献", which a second trace reads as the first read the old one. Under a bold or no
    title, no shallower than a heading that opens the closing matter after it (`closing`), which
    would read as a group of its entries."""
    m = _OLD_HEADING.match(old)
    marks = m.group(1) if m else "##"
    after = None if m else _OLD_HEADING.match(closing.lstrip("\r\n"))
    if after is not None and len(after.group(1)) > len(marks):
        marks = after.group(1)
    custom = clean_text(options.references_heading, 200)
    if custom:
        return custom if custom.startswith("#") else f"{marks} {custom}"
    return f"{marks} 参考文献" if lang.startswith("zh") else f"{marks} References"


def _evidence_quote(src: CitedSource | None) -> str:
    if src is None or not src.evidence.strip():
        return ""
    return " — “" + escape_markdown(src.evidence, 280) + "”"


def render_report(
    report: str,
    layout: Layout,
    sentences: list[Sentence],
    chosen: Mapping[int, list[Candidate]],
    old_markers: list[ExistingMarker],
    resolved: Mapping[int, int | None],
    recs: list[Record],
    options: TraceOptions,
    lang: str,
    pointers: Collection[int] = (),
) -> Rendered:
    """Insert markers for `chosen` (and kept `old_markers`) and append the references list.
    `pointers`: sentences that make no claim of their own ("See [1] for details."), whose markers
    that are words of the sentence stay, renumbered, under existing=replace too."""
    style = validate_style(options.style)
    fmt = validate_reference_format(options.reference_format)
    body_end = max(0, min(layout.body_end, len(report)))
    body = report[:body_end]
    warnings: list[str] = []
    is_link = _link_check()

    # 1. old markers: every one in the body is deleted; under KEEP the resolvable ones come back renumbered.
    keep = options.existing is ExistingPolicy.KEEP
    markers = sorted((m for m in old_markers if 0 <= m.start < m.end <= body_end), key=lambda m: m.start)
    deletions: list[Span] = []
    kept: dict[int, list[int]] = {}
    old_by_sentence: dict[int, list[ExistingMarker]] = {}
    orphans: list[tuple[int, list[int]]] = []
    # "如[2]所述", "as shown in [2], …": a marker that is a word of its sentence stays where it is,
    # renumbered, for its sources the sentence keeps (under keep the author's, under replace those
    # that verified: tracer.pipeline checks them); removed otherwise, like any other old marker
    in_place: list[tuple[ExistingMarker, list[_Entry]]] = []
    verified_of: dict[int, dict[str, Candidate]] = {}  # sentence -> its chosen sources by canonical key
    for sid, cands in chosen.items():
        for c in cands:
            if 0 <= c.record < len(recs):
                verified_of.setdefault(sid, {}).setdefault(source_key(recs[c.record]), c)
    sentence_of = {s.id: s for s in sentences}
    for m in markers:
        if deletions and m.start < deletions[-1][1]:
            continue  # overlapping marker spans: the first one wins
        deletions.append((m.start, m.end))
        if m.narrative and m.sentence in sentence_of and not m.opener:
            verified_here = verified_of.get(m.sentence, {})
            here: list[_Entry] = []
            dropped: list[str] = []
            seen_keys: set[str] = set()
            for n in m.numbers:
                r = resolved.get(n)
                if r is None or not 0 <= r < len(recs):
                    dropped.append(f"{_old_label(m, n)} does not resolve to a record")
                    continue
                if source_key(recs[r]) in seen_keys:   # "[1, 2]" for one page listed twice: one source
                    continue
                seen_keys.add(source_key(recs[r]))
                named_c = verified_here.get(source_key(recs[r]))   # the same page under another record too
                if named_c is not None:
                    here.append(_Entry(named_c.record, named_c.support))
                elif keep or m.sentence in pointers:   # the author's: scored and warned about later
                    here.append(_Entry(r, None))
                else:
                    dropped.append(f"{_old_label(m, n)} is not supported by its record")
            raw = report[m.start:m.end]
            if here:
                in_place.append((m, here))
                if dropped:
                    warnings.append(
                        f"existing citation {raw!r} at offset {m.start} is a word of its sentence; "
                        f"renumbered in place without what did not stand ({'; '.join(dropped)})")
            else:
                warnings.append(
                    f"existing citation {raw!r} at offset {m.start} is a word of its sentence, but "
                    f"{'; '.join(dropped)}; removed, so the sentence reads, markers aside, "
                    f"{_reads_without(report, sentence_of[m.sentence], m)!r}")
            continue
        if m.sentence is not None and not m.opener and not m.narrative:
            # its slot: a new marker goes where the author's last one stood ("x [1] |" -> "x [2] |")
            old_by_sentence.setdefault(m.sentence, []).append(m)
        if not keep or m.opener:
            continue
        found: list[int] = []
        missing: list[int] = []
        for n in m.numbers:
            r = resolved.get(n)
            (found if r is not None and 0 <= r < len(recs) else missing).append(n if r is None else r)
        if missing or not m.numbers:
            warnings.append(
                f"existing citation {report[m.start:m.end]!r} at offset {m.start}: "
                f"{', '.join(_old_label(m, n) for n in missing if n > 0 or m.ids or m.urls) or 'it'} "
                "does not resolve to a record; removed"
            )
        if not found:
            continue
        if m.sentence is None:
            orphans.append((m.start, found))
        else:
            kept.setdefault(m.sentence, []).extend(found)

    # Markers are placed in the body as it reads with the old ones deleted and what they leave
    # behind too, as if no new marker were written in a run of old ones (`_tidied`)
    runs = _Runs.of(body) if deletions else None
    text = _Text(body, _tidied(body, deletions, (), runs), open_table_rows(report, layout),
                 layout.link_labels)

    # 2. sources per sentence: kept old ones first, then new ones, deduped by canonical source.
    anchors: list[_Anchor] = []
    named_of: dict[int, set[str]] = {}
    for m, here in in_place:
        named_of.setdefault(m.sentence or 0, set()).update(source_key(recs[e.record]) for e in here)
    for s in sorted(sentences, key=lambda s: (s.start, s.end)):
        if s.end > body_end:
            continue
        entries: list[_Entry] = []
        by_key: dict[str, _Entry] = {}
        # sources renumbered where the sentence names them are not repeated at its end, unless
        # the author's marker there names them too ("As [1] found, X [1]."; not "…[2]", which a
        # trace of "as [1] found" writes itself); they count toward max_sources and are never dropped
        named = named_of.get(s.id, set())
        at_end = _named_keys(old_by_sentence.get(s.id, ()), resolved, recs) if named else set()
        verified = [c for c in chosen.get(s.id, []) if 0 <= c.record < len(recs)
                    and (source_key(recs[c.record]) not in named or source_key(recs[c.record]) in at_end)]
        for r in kept.get(s.id, []):
            key = source_key(recs[r])
            if key not in by_key:
                by_key[key] = _Entry(r, None)
                entries.append(by_key[key])
        n_new = 0
        room = max(0, options.max_sources - len(entries) - len(named))  # kept citations are never dropped
        for c in verified:
            key = source_key(recs[c.record])
            if key in by_key:
                entry = by_key[key]
                if entry.support is None:  # a kept citation confirmed by verification
                    entry.record, entry.support = c.record, c.support
                continue
            if n_new >= room:
                continue
            by_key[key] = _Entry(c.record, c.support)
            entries.append(by_key[key])
            n_new += 1
        if entries:
            anchors.append(_Anchor(-1, s, entries))
    for m, here in in_place:
        anchors.append(_Anchor(m.start, sentence_of[m.sentence or 0], here, fixed=True))
    for pos, found in orphans:
        entries = []
        seen: set[str] = set()
        for r in found:
            key = source_key(recs[r])
            if key not in seen:
                seen.add(key)
                entries.append(_Entry(r, None))
        anchors.append(_Anchor(pos, None, entries))

    if not anchors:
        return _uncited(report, layout, body, deletions, keep, warnings, runs)

    # 3. positions first (so numbers follow the text order of the markers), each at a spot
    #    where the style's marker cannot join the following markdown.
    placed: list[_Anchor] = []
    # A superscript marker may become "[citation:n]" below (when the report defines numeric link
    # labels); place it where a bracketed marker is safe too ("[the filing][citation:1]" is a link).
    defined = {int(k) for k in link_definitions(report, layout) if k.isdigit() and len(k) <= 4}
    place_style = "citation" if style == "superscript" and defined else style
    fixed_at = {a.pos for a in anchors if a.fixed}
    for a in anchors:
        if a.sentence is None or a.fixed:
            if _hazard(text, a.pos, place_style):  # a kept marker outside any sentence, e.g. "- [1]: x"
                warnings.append(
                    f"existing citation at offset {a.pos}: re-numbered in place it would join the "
                    "following markdown; removed"
                )
                continue
            placed.append(a)
            continue
        options_at = _positions(text, a.sentence, old_by_sentence.get(a.sentence.id, []), options.placement,
                                keep)
        # "…35.5%。[2]指出", "…35.5%。指出" (its subject removed), "…in 1957. [1],  found"
        # (the author's slot under keep): this sentence's marker right before the next sentence's
        # subject, or where it stood, would read as that subject on a second trace; it goes before
        # the period instead ("…35.5%[1]。[2]指出")
        options_at = sorted(options_at, key=lambda p: p in fixed_at or text.opens_with_subject(p))
        safe = next((p for p in options_at if not _hazard(text, p, place_style)), None)
        if safe is None:  # "fact (see https://x.org/a).": before the aside, "fact[1] (see …)."
            asides = (q for p in options_at for q in text.url_asides(p, a.sentence.start))
            safe = next((q for q in asides if _place(text, q) == q and not _hazard(text, q, place_style)),
                        None)
        if safe is None:  # e.g. "fact(note)" with no punctuation: no spot avoids "[1](note)"
            what = "extending the bare URL before it" if any(
                text.after_bare_url(p) for p in options_at) else "joining the following markdown"
            warnings.append(
                f"sentence at offset {a.sentence.start}: no marker position avoids {what}; citation left out"
            )
            continue
        a.pos = safe
        placed.append(a)
    anchors = placed
    if not anchors:
        return _uncited(report, layout, body, deletions, keep, warnings, runs)
    order = sorted(range(len(anchors)), key=lambda i: (anchors[i].pos, i))

    # 4. numbers by first appearance, one per canonical source.
    number_of: dict[str, int] = {}
    refs: dict[int, Reference] = {}
    for i in order:
        a = anchors[i]
        for e in a.entries:
            rec = recs[e.record]
            key = source_key(rec)
            if key not in number_of:
                n = len(number_of) + 1
                number_of[key] = n
                refs[n] = Reference(
                    number=n, url=rec.url, title=rec.title, record_index=rec.index, author=rec.author,
                    site=rec.site, published_at=rec.published_at, is_link=bool(is_link(rec.url)),
                )
            a.numbers.append(number_of[key])
    if style in ("footnote", "footnote-evidence"):
        # The report's own footnotes ("[^1]: a note" in the body) keep their labels: ours would
        # collide with them (first definition wins), so number with plain brackets instead.
        own, _ = _footnote_definitions(report, layout)
        taken = sorted(lab for lab in own if lab.isdigit() and int(lab) in refs)
        if taken:
            labels = ", ".join(f"[^{t}]" for t in taken)
            warnings.append(
                f"style {style}: the report defines its own footnote(s) {labels}; "
                "used numeric markers so the labels do not collide"
            )
            style = "numeric"
    if style in ("numeric", "numeric-comma", "superscript", "link"):
        # "[1]: url" defined in the body would make a bare "[1]" marker a link to that url
        clash = sorted(n for n in defined if n in refs)
        if clash:
            labels = ", ".join(f"[{n}]" for n in clash)
            warnings.append(
                f"style {style}: the report defines link label(s) {labels}; "
                "used [citation:n] markers so they do not become links"
            )
            style = "citation"
    # A named run in numeric style stays one bracket ("如[1, 2]所述"): glued ("。[1][2]指出") its
    # first markers would read, traced again, as the previous sentence's citation after its period.
    insertions = [
        (anchors[i].pos, i, _format_marker(
            "numeric-comma" if anchors[i].fixed and style == "numeric" and len(set(anchors[i].numbers)) > 1
            else style, sorted(set(anchors[i].numbers)), refs)) for i in order
    ]
    fence = unclosed_block(report, layout)  # the scan's own notion of blocks, any indentation
    if fence:  # close it at the opener's indentation, or a list item's fence would stay open
        opener = report[layout.protected[-1][0]:]
        fence = opener[: len(opener) - len(opener.lstrip(" \t"))] + fence
        warnings.append(
            f"the report ends inside an unclosed {_BLOCK_KIND.get(fence.strip(), 'code fence')}; "
            f"closed it with {fence.strip()} before the references section"
        )
    heading = _heading(options, lang, *((report[layout.references[0]:], report[layout.references[1]:])
                                        if layout.references else ()))
    # what the deletions leave behind goes too, now that it is known where new markers go
    at = [p for p, _i, _m in insertions]
    final = _Text(body, _tidied(body, deletions, at, runs), text.protected, text.link_labels)
    if bare := [p for p in at if _hazard(final, p, place_style)]:
        final = _Text(body, _tidied(body, deletions, at, runs, bare), text.protected, text.link_labels)
    text = final
    out = _assemble(
        body, anchors, order, insertions, refs, recs, style, fmt, heading, lang, text, warnings, fence,
        defined,
    )
    return replace(out, report=out.report + _closing(report, layout, out.report))


def _closing(report: str, layout: Layout, before: str) -> str:
    """The report's closing matter after its references section (a disclaimer, an appendix, an
    AI notice: `Layout.references` ends before it), verbatim, after a blank line that keeps it
    from joining the text `before` it ("---" under a list line would underline a heading); before
    it, the old section's link definitions the report links through (`kept_definitions`)."""
    if layout.references is None:
        return ""
    nl = "\r\n" if "\r\n" in report else "\n"
    # the author's link definitions the body links through ("[Webb][webb]"), verbatim
    kept = nl.join(kept_definitions(report, layout))
    if kept:
        kept = _separator(before, nl) + kept + nl
        before += kept
    tail = report[layout.references[1]:]
    if not tail.strip():
        return kept
    lead = len(tail) - len(tail.lstrip("\r\n"))
    return kept + _separator(before, nl) + tail[lead:]


@dataclass(frozen=True)
class _Runs:
    """The body's markers (`MARKER_RE`), their runs, and what `tracer.existing` reads of each run:
    where its blank begins (`run_blanks`) and whether it opens a line or sentence (`opening_runs`).
    Read once per render: they do not depend on where new markers go."""

    found: list[Span]
    whole: list[Span]
    blanks: list[int]
    opens: list[bool]

    @classmethod
    def of(cls, body: str) -> _Runs:
        found = [(m.start(), m.end()) for m in MARKER_RE.finditer(body)]
        whole = marker_runs(body, found)
        return cls(found, whole, run_blanks(body, whole), opening_runs(body, whole))


def _tidied(body: str, deletions: Sequence[Span], at: Collection[int], runs: _Runs | None = None,
            bare: Collection[int] = ()) -> list[Span]:
    """The deletions, with what they would leave behind as `tracer.existing.unmarked` reads a
    run of markers. In a run (`marker_runs`), what joins its markers (", ", "、") stays only between
    two markers of the output, old ones that stay or new ones written there (`at`): "Canaveral
    [1], [2]." -> "Canaveral [3]." not "Canaveral , [3].", "[1], [2]" with "[2]" staying -> "[2]".
    A run that loses every marker also loses the blank before it where it ends a sentence, a line
    or an aside ("cars [2]." -> "cars."). A run that opens a line or a sentence loses its markers
    only (`tracer.existing.opening_runs`). Each old marker and each join stays a deletion of its
    own, so a new marker goes between two of them, never inside one. Markers are placed as if
    none were written in any run (`render_report`); a run where one is written after all keeps
    more (the blank before it, or its joins), never less, unless a new marker there is in `bare`
    (the blank would join it to what follows: " [^1]:" reads as a footnote's definition)."""
    dels = sorted(deletions)
    if not dels:
        return []
    runs = runs or _Runs.of(body)
    found = runs.found
    points = sorted(set(at))
    out: list[Span] = list(dels)
    k = 0
    for (lo, hi), blank, opening in zip(runs.whole, runs.blanks, runs.opens, strict=True):
        if opening:
            continue   # its markers only (`tracer.existing.opening_runs`)
        j = bisect_left(dels, (lo, -1))
        if j >= len(dels) or dels[j][0] >= hi:
            continue   # no old marker of this run is deleted
        members = found[bisect_left(found, (lo, -1)):bisect_left(found, (hi, hi + 1))]
        gone = set(dels[j:bisect_left(dels, (hi, hi + 1))])
        if not gone <= set(members):
            continue   # deletions that are not whole markers of the run: left as they are
        while k < len(points) and points[k] < lo:
            k += 1
        here = []
        while k < len(points) and points[k] <= hi:
            here.append(points[k])
            k += 1
        # what stands in the output: markers that stay, and new ones (at a marker's start or end)
        items = [m not in gone or any(m[0] <= p <= m[1] for p in here) for m in members]
        if any(not any(m[0] <= p <= m[1] for m in members) for p in here):
            continue   # a new marker inside a join: left as it is
        waiting: list[Span] = []
        seen_item = False
        for n, m in enumerate(members):
            if items[n]:
                if seen_item and waiting:
                    waiting = waiting[1:]   # one join between two markers of the output
                out.extend(waiting)
                waiting = []
                seen_item = True
            if n + 1 < len(members) and m[1] < members[n + 1][0]:
                waiting.append((m[1], members[n + 1][0]))
        out.extend(waiting)
        if blank < lo and (not any(items) or any(lo <= p <= hi for p in bare)):
            out.append((blank, lo))
    return sorted(set(out))


def _uncited(report: str, layout: Layout, body: str, deletions: list[Span], keep: bool,
             warnings: list[str], runs: _Runs | None) -> Rendered:
    """Nothing to cite. The report comes back as it came, unless existing=replace removes old
    markers (none of them verified): then they go, and with them the old references section."""
    if keep or not deletions:
        return Rendered(report, (), (), tuple(w.replace("; removed", "") for w in warnings))
    out: list[str] = []
    cur = 0
    for a, b in _tidied(body, deletions, (), runs):
        out.append(body[cur:a])
        cur = b
    out.append(body[cur:])
    return Rendered("".join(out) + _closing(report, layout, "".join(out)), (), (), tuple(warnings))


_BLOCK_KIND = {"-->": "HTML comment", "</pre>": "<pre> block", "</script>": "<script> block",
               "</style>": "<style> block", "</textarea>": "<textarea> block"}
def _assemble(
    body: str, anchors: list[_Anchor], order: list[int], insertions: list[tuple[int, int, str]],
    refs: dict[int, Reference], recs: list[Record], style: str, fmt: str, heading: str, lang: str,
    text: _Text, warnings: list[str], fence: str, defined: set[int],
) -> Rendered:
    # Body: deletions and insertions applied left to right over the original bytes.
    events: list[tuple[int, int, int, str]] = [(a, 1, b, "") for a, b in text.deletions]
    events += [(p, 0, i, m) for p, i, m in insertions]
    events.sort(key=lambda e: (e[0], e[1]))
    out: list[str] = []
    cur = 0
    for pos, kind, arg, marker in events:
        if kind == 1:
            if arg <= cur:
                continue
            start = max(pos, cur)
            out.append(body[cur:start])
            cur = arg
        else:
            p = max(pos, cur)
            out.append(body[cur:p])
            cur = p
            out.append(marker)
    out.append(body[cur:])

    # Structured citations, in text order of the sentences.
    citations: list[Citation] = []
    cited_at: dict[Span, int] = {}
    first_cited: dict[int, CitedSource] = {}
    for i in order:
        a = anchors[i]
        sources: list[CitedSource] = []
        for e, n in zip(a.entries, a.numbers, strict=True):
            rec = recs[e.record]
            if e.support is not None:
                es = max(0, min(e.support.evidence_start, len(rec.content)))
                ee = max(es, min(e.support.evidence_end, len(rec.content)))
                src = CitedSource(n, rec.url, rec.title, rec.index, e.support.score, e.support.match,
                                  rec.content[es:ee], es, ee, e.support.unstated, e.support.quote_figures)
            else:
                src = CitedSource(n, rec.url, rec.title, rec.index, 0.0, "existing", "", 0, 0)
            if n not in first_cited or (not first_cited[n].evidence and src.evidence):
                first_cited[n] = src
            sources.append(src)
        if a.sentence is not None:
            s = a.sentence
            # one citation per sentence: the sources it names in its words ("如[2]所述") first
            same = cited_at.get((s.start, s.end))
            if same is None:
                cited_at[(s.start, s.end)] = len(citations)
                citations.append(Citation(s.text, s.start, s.end, tuple(sources)))
            else:
                had = citations[same].sources
                more = tuple(x for x in sources if x.number not in {h.number for h in had})
                citations[same] = replace(citations[same], sources=had + more)
    citations.sort(key=lambda c: (c.start, c.end))

    # References section: only appended.
    nl = "\r\n" if "\r\n" in body else "\n"
    lines = [heading, ""]
    for n in sorted(refs):
        entry = format_reference(refs[n], fmt)
        if style in ("footnote", "footnote-evidence"):
            quote = _evidence_quote(first_cited.get(n)) if style == "footnote-evidence" else ""
            lines.append(f"[^{n}]: {entry}{quote}")
        elif n in defined:  # "[1] …" would be a shortcut link to the body's own "[1]: url"
            lines.append(f"[{n}\\] {entry}")  # not "\\[1\\]": that is display math to many renderers
        else:
            lines.append(f"[{n}] {entry}")
    marked = "".join(out)
    if fence:  # close a code block, comment or raw HTML block left open at the end, or the list
        # would be code, hidden or raw text
        sep = ("" if marked.endswith("\n") else nl) + fence + nl + nl
    else:
        sep = _separator(marked, nl)
    section = sep + nl.join(lines) + nl
    references = tuple(refs[n] for n in sorted(refs))
    return Rendered(marked + section, tuple(citations), references, tuple(warnings))


__all__ = ["Rendered", "render_report", "STYLES", "validate_style", "marker_regex", "strip_emitted_markers",
           "source_key"]
