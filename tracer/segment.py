"""Sentence spans over the original report (Chinese and English), markdown-aware.

Works on `text[:layout.body_end]`. Lines wholly covered by a block region of the layout
(headings, code, tables, HTML blocks, front matter, ...) are not prose; inline regions
(code spans, links, URLs, math) may sit inside a sentence but never split one. Rules and
examples: docs/segmentation.md.
"""

from __future__ import annotations

import bisect
import heapq
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from tracer.existing import (
    MARKER_RE,
    RUN_JOIN,
    labelled_entries,
    source_note_at,
    source_note_spans,
    strip_markers,
)
from tracer.markdown import heading_title, table_line_regions
from tracer.models import Layout, Sentence, Span
from tracer.text import _CJK_CHAR, _LATIN_LETTER, DIGIT_NOTE, EN_STOPWORDS, MAYBE_END, NEVER_END, note_after

_PREFIX = re.compile(r"[ \t]*(?:>[ \t]?)*[ \t]*")
_LIST = re.compile(
    r"(?:[-*+•·][ \t]+|\d{1,3}[.)][ \t]+|\d{1,3}[、．）][ \t]*|[(（]\d{1,2}[)）][ \t]*"
    r"|[一二三四五六七八九十]{1,3}、[ \t]*|[①-⑳][ \t]*"
    # an emoji or symbol bullet: "✅ Done", "🔹 Point", "➤ Step", "1️⃣ First", "🇨🇳 China"
    r"|(?:[\u203b\u2190-\u21ff\u2300-\u23ff\u25a0-\u27bf\u2b00-\u2bff\U0001F000-\U0001FAFF]"
    r"|[0-9#*]\ufe0f?\u20e3)[\u203b\u2190-\u21ff\u2300-\u23ff\u25a0-\u27bf\u2b00-\u2bff"
    r"\U0001F000-\U0001FAFF\ufe0f\u200d]*[ \t]+"
    r")(?:\[[ xX]\][ \t]+)?"
)
# a lettered or roman clause: "(a) providers, …;", "b) deployers", "(iv) importers" — only where the
# line before ends a clause or is an item too (a hard-wrapped "… in point\n(a) of paragraph 1 …" goes
# on), and not "(c) 2024", a copyright
_LETTERED = re.compile(r"(?:[(（](?:[A-Za-z]|(?:i{1,3}|iv|vi{0,3}|ix|x))[)）]|[a-z]\))[ \t]+(?!\d)")
_CLAUSE_END = frozenset(":;：；.。!?！？")   # (not a comma: "Under Article 99,\n(a) fines …" goes on)
_PSEUDO_HEADING = re.compile(r"(\*\*|__)[^*_\n].*?\1[ \t]*+(?:[:：][ \t]*+)?")
# a callout's first line in a quote (GitHub's "> [!NOTE]", Obsidian's "> [!tip]- Good to know"):
# its type and title head what the quote says, as a heading does
_CALLOUT = re.compile(r"\[![A-Za-z][\w-]{0,30}\][+-]?[ \t]*+")

# terminal punctuation, then closing quotes / brackets / emphasis that stay with the sentence
_BOUNDARY = re.compile(
    r"(?P<p>[。！？；!?]+[。！？；!?…]*|…+[。！？!?]*|\.{2,}|\.(?:[!?]+)?)"
    r"(?P<c>[”’\"'」』）)\]】》〉*_⁰¹²³⁴⁵⁶⁷⁸⁹]*)"
)
_DOT_NAMES = frozenset({"NET", "COM", "ORG", "CN", "IO", "AI", "JS", "PY", "EXE", "PDF", "ZIP"})
_CAPS = re.compile(r"[A-Z]+")


def _caps_at(text: str, at: int) -> str:
    m = _CAPS.match(text, at)
    return m.group(0) if m else ""


_ENUMERATOR = re.compile(r"(?:\*\*|__|\*|_)?[ \t]*\d{1,2}")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]")
_WORD_BEFORE = re.compile(r"(?:[A-Za-z]+\.)*[A-Za-z]+$")
_NEXT_WORD = re.compile(r"[A-Za-z]+")
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
# who said a quotation, after it: "雷军表示。", "他在发布会上说。" (a short run ending in a verb of saying)
_SPEAKER_AFTER = re.compile(
    r"[^。！？；\n“”「」‘’\[]{1,16}?(?:表示|说道|(?<!小)说|指出|称|认为|强调|透露|介绍|坦言|回应|写道|补充道|表态|直言)")
_CLOSING_TAGS = re.compile(r"(?:</(?:b|strong|em|i|u|span|mark|small|big|font|ins|s)\s*>)+", re.IGNORECASE)
_HAS_WORD = re.compile(r"[^\W_]", re.UNICODE)

# names whose "!" is part of the name: it ends a sentence only before a typical sentence opener
_BANG_NAMES = frozenset("yahoo jeopardy shout panic wham oklahoma airplane oliver".split())
# a capital letter after these is a label, not an initial: "Series A. Investors", "Vitamin D. Doctors"
_LABELS = frozenset(
    """series plan type class grade vitamin category phase group option part appendix section figure
    table level tier round exhibit schedule hepatitis team block zone unit model stage step division
    league""".split()
)
# a capitalised word after "9 a.m." that goes on with the time rather than opening a sentence
_TIME_WORDS = frozenset(
    """et est edt pt pst pdt ct cst cdt mt mst mdt gmt utc bst cet cest ist jst kst hkt sgt aest eastern
    pacific central mountain atlantic greenwich monday tuesday wednesday thursday friday saturday
    sunday january february march april may june july august september october november december jan
    feb mar apr jun jul aug sep sept oct nov dec""".split()
)
_PREV_WORD = re.compile(r"([A-Za-z]+)[ \t]+$")
_TIME_AFTER = re.compile(r"[A-Za-z]+[ \t]+(?:time|Time)\b")
_STARTERS = frozenset(
    """the this that these those it its in on at as however but and he she they we i a an according
    meanwhile also for by with since while after before despite although overall moreover furthermore
    additionally there such other some many most if when our their his her so yet still thus therefore
    hence what why how who where which one two three both each all no not only then now today last next
    first second third finally instead indeed because unlike like given following""".split()
)


@dataclass(slots=True)
class _Unit:
    """A paragraph or list item: content ranges of its lines (prefixes and bullets excluded)."""

    ranges: list[Span] = field(default_factory=list)
    in_list: bool = False
    heading: str = ""
    ends: list[int] = field(default_factory=list)   # range ends, for bisect

    def add(self, start: int, end: int) -> None:
        self.ranges.append((start, end))
        self.ends.append(end)


@dataclass(slots=True)
class _Cursor:
    """Walks sorted protected spans forward (positions are queried in increasing order)."""

    spans: tuple[Span, ...]
    k: int = 0

    def inside(self, pos: int) -> bool:
        spans = self.spans
        while self.k < len(spans) and spans[self.k][1] <= pos:
            self.k += 1
        return self.k < len(spans) and spans[self.k][0] <= pos


def _lines(text: str, end: int) -> list[tuple[int, int, int]]:
    """(start, content_end, next_start) for each line of text[:end]."""
    out: list[tuple[int, int, int]] = []
    pos = 0
    while pos < end:
        nl = text.find("\n", pos, end)
        le, nxt = (end, end) if nl < 0 else (nl, nl + 1)
        ce = le - 1 if le > pos and text[le - 1] == "\r" else le
        out.append((pos, ce, nxt))
        pos = nxt
    return out


def _units(text: str, layout: Layout) -> list[_Unit]:
    prot = layout.protected
    prot_starts = [s for s, _ in prot]
    heads = sorted(layout.headings)
    head_k = 0
    heading = ""
    units: list[_Unit] = []
    cur: _Unit | None = None

    def flush() -> None:
        nonlocal cur
        if cur is not None and cur.ranges:
            units.append(cur)
        cur = None

    for ls, ce, nxt in _lines(text, layout.body_end):
        while head_k < len(heads) and heads[head_k][0] <= ls:
            hs, he = heads[head_k]
            first = text[hs:he].split("\n", 1)[0].rstrip("\r")
            heading = heading_title(first)
            head_k += 1
        k = bisect.bisect_right(prot_starts, ls) - 1
        # A block line (heading, code, table, HTML, ...) is protected through its terminator,
        # or through the end of the body when it is the last line and has none.
        if k >= 0 and prot[k][1] >= nxt and _ends_block(text, prot[k][1], layout.body_end):
            flush()
            continue
        pm = _PREFIX.match(text, ls, ce)
        cs = pm.end() if pm else ls
        if cs >= ce:
            flush()                    # blank (or a bare ">" line)
            continue
        lm = _LIST.match(text, cs, ce)
        if lm is None and (cur is None or cur.in_list
                           or text[max(0, ls - 200):ls].rstrip()[-1:] in _CLAUSE_END):
            lm = _LETTERED.match(text, cs, ce)
        if lm:
            flush()
            cur = _Unit(in_list=True, heading=heading)
            cs = lm.end()
            if cs < ce:
                cur.add(cs, ce)
            continue
        if cur is None and ">" in text[ls:cs] and (cm := _CALLOUT.match(text, cs, ce)):
            if cm.end() >= ce or not _ends_terminal(text, cm.end(), ce):
                flush()
                heading = text[cm.end():ce].strip() or heading
                continue
            cs = cm.end()              # "> [!NOTE] Mercury is small.": its title is its sentence
        if _PSEUDO_HEADING.fullmatch(text, cs, ce) and not _ends_terminal(text, cs, ce):
            flush()
            heading = heading_title(text[cs:ce])
            continue
        if cur is None:
            cur = _Unit(heading=heading)
        cur.add(cs, ce)
    flush()
    return units


def _ends_block(text: str, end: int, body_end: int) -> bool:
    """Block regions end after a line terminator (or at the end); inline ones never do."""
    return end >= body_end or text[end - 1] == "\n"


def _ends_terminal(text: str, s: int, e: int) -> bool:
    t = text[s:e].rstrip().rstrip("*_").rstrip()
    return t.endswith((".", "!", "?", "。", "！", "？", "…"))


class _Splitter:
    def __init__(self, text: str, layout: Layout) -> None:
        self.text = text
        self.cursor = _Cursor(layout.protected)
        self.prot = layout.protected
        self.prot_starts = [s for s, _ in layout.protected]
        # "(Source 2)" is a marker where the cut references list gives entry 2 under that word
        # ("Source 2: …"), as `tracer.existing` reads it; elsewhere it is text ("(Source 1) is the
        # deepest well", a number the list does not give), the same on a second trace
        self.labelled = labelled_entries(text[layout.body_end:]) if layout.body_end < len(text) else {}

    def mark_at(self, p: int, end: int) -> tuple[int, int] | None:
        """The span of a citation marker at `p` (a source note too, where it cites)."""
        m = MARKER_RE.match(self.text, p, end)
        if m is not None:
            return m.start(), m.end()
        return source_note_at(self.text, p, end, self.labelled) if self.labelled else None

    def protected(self, pos: int) -> bool:
        k = bisect.bisect_right(self.prot_starts, pos) - 1
        return k >= 0 and self.prot[k][1] > pos

    def next_content(self, unit: _Unit, pos: int) -> int:
        """First position >= pos inside the unit's content that is not whitespace or a marker."""
        text = self.text
        ranges = unit.ranges
        for i in range(bisect.bisect_right(unit.ends, pos), len(ranges)):
            rs, re_ = ranges[i]
            p = max(pos, rs)
            while p < re_:
                ch = text[p]
                if ch.isspace() or (ch == "\\" and text.startswith(("\\\n", "\\\r\n"), p)):
                    p += 1     # a backslash ending a line is a hard line break, not text
                    continue
                mm = self.mark_at(p, re_)
                if mm and not self.protected_whole(*mm):
                    p = mm[1]
                    continue
                return p
        return unit.ranges[-1][1]

    def protected_whole(self, s: int, e: int) -> bool:
        """Is [s, e) inside a protected region larger than itself (e.g. inline code)?"""
        k = bisect.bisect_right(self.prot_starts, s) - 1
        return k >= 0 and self.prot[k][1] > s and not (self.prot[k][0] == s and self.prot[k][1] <= e)

    def _speaker_after(self, at: int, unit_end: int) -> bool:
        """Whether a short run naming who said a quotation follows it, to a terminal: "雷军表示。",
        "雷军表示[1]。", "雷军表示[[1]](url)。" (the markers a trace put there)."""
        m = _SPEAKER_AFTER.match(self.text, at, min(unit_end, at + 24))
        if m is None:
            return False
        r = m.end()
        while (mk := MARKER_RE.match(self.text, r, unit_end)) is not None:
            r = mk.end()
        return self.text[r:r + 1] in ("。", "！", "？", "；") and r < unit_end

    def is_boundary(self, unit: _Unit, p_start: int, p: str, b: int) -> bool:
        text = self.text
        unit_end = unit.ranges[-1][1]
        nx = self.next_content(unit, b)
        if nx >= unit_end:
            return True
        # what directly follows the closers (after markers glued to the punctuation)
        q = b
        while True:
            mm = self.mark_at(q, unit_end)
            if not mm:
                # "2023.[1], [2] As": what joins two markers is their run's, as the output reads
                # once they are gone (`tracer.existing.unmarked`)
                join = RUN_JOIN.match(text, q, unit_end)
                if q > b and join is not None and join.end() > q and self.mark_at(join.end(), unit_end):
                    q = join.end()
                    continue
                break
            q = mm[1]
        follow = text[q] if q < len(text) else " "
        if follow == "<" and _BREAK.match(text, q):
            follow = " "  # "Fact one.<br>Fact two.": a line break
        elif follow == "<" and (ct := _CLOSING_TAGS.match(text, q)) is not None:
            r = ct.end()              # "<b>Fact one.</b> Fact two.", "<b>Fact one.</b>[1] Fact two."
            while (mk := MARKER_RE.match(text, r, unit_end)) is not None:
                r = mk.end()
            follow = text[r] if r < len(text) else " "
        elif follow == "\\" and text.startswith(("\\\n", "\\\r\n"), q):
            follow = " "  # "Fact one.\" at a line end: a hard line break
        cjk_p = any(ch in "。！？；…" for ch in p)
        nx_ch = text[nx]
        if nx_ch == "—":
            return False  # an attribution: '“…。”——中汽协副秘书长陈士华', '"…." — Jensen Huang'
        if cjk_p and text[b - 1:b] in "”」』’\"" and self._speaker_after(nx, unit_end):
            return False  # '“小米汽车将在2025年实现盈利。”雷军表示。': the quote and its speaker
        if cjk_p:
            if p[0] == "…" and q < unit_end and follow.isspace() and nx_ch.islower():
                return False
            return True
        wm = _WORD_BEFORE.search(text, max(0, p_start - 40), p_start)
        word = wm.group(0).lower() if wm else ""
        if wm is not None and len(wm.group(0)) > 1 and wm.group(0).isupper() and "." not in wm.group(0):
            word = "ACRONYM"  # "the SEC.", "in CA.", "on MMLU.": no abbreviation
        elif wm is not None and wm.start() > 0 and text[wm.start() - 1] == "-":
            word = "COMPOUND"  # "state-of-the-art."
        if not follow.isspace():
            # "3.5", "e.g.,", "U.S.-China", "example.com": no boundary; "数据.下一句" / "Yes!是的" /
            # "增长37.9%.渗透率" / "Sonnet.该模型" are, but not "图1.所示" or "Inc.发布"
            if not _CJK.match(follow):
                # "由OpenAI发布.GPT-4的参数量": a Chinese sentence's ASCII stop before a capital
                return p == "." and follow.isupper() and p_start > 0 and bool(_CJK.match(text[p_start - 1])) \
                    and _caps_at(text, q) not in _DOT_NAMES  # not "基于.NET Core"
            if p == "!" and wm is not None and word in _BANG_NAMES and wm.group(0)[0].isupper():
                return False   # "收购了Yahoo!中国的全部资产": the name goes on
            if p != ".":
                return True
            prev = text[p_start - 1] if p_start > 0 else ""
            return not prev.isdigit() and word not in NEVER_END and word not in MAYBE_END \
                and "." not in word
        nw = _NEXT_WORD.match(text, nx)
        next_word = nw.group(0).lower() if nw else ""
        starter = next_word in _STARTERS and nx_ch.isupper()
        if nx_ch.islower() and nw is not None and any(c.isupper() for c in nw.group(0)[1:]):
            nx_ch = nx_ch.upper()  # "mRNA", "iPhone", "eBay" open a sentence like capitals do
        if p == "!" and wm is not None and word in _BANG_NAMES and wm.group(0)[0].isupper():
            return starter or bool(_CJK.match(nx_ch))  # "Shout! Factory released" vs "Yahoo! The firm"
        if "!" in p or "?" in p:
            return not nx_ch.islower()
        if len(p) >= 2:                # ".." / "..." ellipsis
            return nx_ch.isupper() or bool(_CJK.match(nx_ch))
        if p_start > 0 and text[p_start - 1].isdigit():
            return not nx_ch.islower()  # "in 2020. The" / "grew 5." ; "p. 5" has a word before
        if word in NEVER_END:
            return False
        if word in ("doc", "docs") and nx_ch.isdigit():
            return False               # "(Doc. 1)", "Docs. 2 and 3" ("a Google Doc. Hubble…" ends)
        if word in ("a.m", "p.m") and wm is not None and nx_ch.isupper() \
                and re.search(r"\d[ \t]*$", text[max(0, wm.start() - 4):wm.start()]):
            # "at 9 a.m. Participants" ends; "9 a.m. Eastern Time", "9 a.m. Beijing time" go on
            return next_word not in _TIME_WORDS and not _TIME_AFTER.match(text, nx)
        if word in MAYBE_END or (word and "." in word and all(len(w) == 1 for w in word.split("."))):
            if word in ("no", "nos") and wm is not None and wm.group(0)[0].isupper() and nx_ch.isdigit():
                return False
            return starter or bool(_CJK.match(nx_ch))
        if len(word) == 1:
            pw = _PREV_WORD.search(text, max(0, p_start - 30), wm.start()) if wm is not None else None
            if pw is not None and pw.group(1).lower() in _LABELS:
                return not nx_ch.islower()  # "Series A. Investors": a label, not an initial
            return starter or bool(_CJK.match(nx_ch))  # "J. K. Rowling" vs "Plan B. The"
        return not nx_ch.islower()


_AMBIGUOUS_CLOSERS = "*_\"'"
_QUOTE_APOSTROPHE = re.compile(r"(?<![^\W\d_])'|'(?![^\W\d_])")  # not "it's": a quote mark


class _Counts:
    """Counts of the characters the boundary rules weigh, in text[start:end], for a sentence
    start that stays put while the end moves forward: each boundary the rules reject costs only
    the text since the last one, not a count over the whole sentence so far (a 64,000-character
    sentence of "1." took seconds)."""

    _CHARS = "《》（(）)*_\""

    def __init__(self, text: str) -> None:
        self.text = text
        self.start = self.end = -1
        self.n: dict[str, int] = {}

    def upto(self, start: int, end: int) -> dict[str, int]:
        if start != self.start or end < self.end:
            self.start = self.end = start
            self.n = dict.fromkeys(self._CHARS + "'", 0)
        if end > self.end:
            chunk = self.text[self.end:end]
            for ch in self._CHARS:
                self.n[ch] += chunk.count(ch)
            if "'" in chunk:
                self.n["'"] += sum(1 for _ in _QUOTE_APOSTROPHE.finditer(self.text, self.end, end))
            self.end = end
        return self.n


def _closing(counts: _Counts, start: int, p: int, closers: str) -> int:
    """How many of the closers after the punctuation at p end the sentence that began at start.

    Quotes and brackets always do; "*", "_", '"' and "'" open as often as they close, so a run of
    them stays with the sentence only when the sentence has one open: "**Bold.**" keeps its "**",
    "增长37.9%。**值得注意的是**" leaves it to the next sentence. Apostrophes ("it's") are no quotes.
    """
    n = 0
    while n < len(closers):
        ch = closers[n]
        run = len(closers[n:]) - len(closers[n:].lstrip(ch)) if ch in _AMBIGUOUS_CLOSERS else 1
        if ch in _AMBIGUOUS_CLOSERS:
            seen = counts.upto(start, p)[ch]
            is_open = seen % 2 == 1 if ch == "'" else seen % (2 * run) != 0
            if not is_open:
                break
        n += run
    return n


def _still_open(text: str, counts: _Counts, start: int, ps: int, b: int, punct: str) -> bool:
    """Is the punctuation at ps inside a title or bracket that is still open?

    "《AI会取代人类吗？》一书指出" is one sentence; so is "（数据来源：IDC；Gartner）显示".
    """
    head = counts.upto(start, ps)
    if head["《"] > head["》"]:
        return True
    if punct[0] not in "；;":
        return False
    tail = text[ps:b]
    opened = head["（"] + head["("] + tail.count("（") + tail.count("(")
    return opened > head["）"] + head[")"] + tail.count("）") + tail.count(")")


def segment_sentences(text: str, layout: Layout) -> list[Sentence]:
    """Sentence spans of the body, in order, ids 0..n-1 (see docs/segmentation.md)."""
    sp = _Splitter(text, layout)
    counts = _Counts(text)
    spans: list[tuple[int, int, bool, str]] = []
    for unit in _units(text, layout):
        unit_start = unit.ranges[0][0]
        unit_end = unit.ranges[-1][1]
        cur = sp.next_content(unit, unit_start)
        for rs, re_ in unit.ranges:
            for m in _boundaries(text, rs, re_):
                ps = m.start()
                if ps < cur:
                    continue
                if m.lastgroup == "br":   # the tag is an inline region of its own, not inside one
                    if not sp.protected_whole(ps, m.end()) \
                            and _ends_line_at_break(text, sp, unit, cur, ps, m.end()):
                        _emit(text, sp, spans, cur, ps, unit)   # "… Erica Xu<br/>Next line": two
                        cur = sp.next_content(unit, m.end())
                    continue
                if sp.cursor.inside(ps):
                    continue
                if m.group("p") == "." and _ENUMERATOR.fullmatch(text, cur, ps):
                    continue  # "**1. 市场规模：** …": a number opening the sentence enumerates
                b = m.end("p") + _closing(counts, cur, ps, m.group("c"))
                k = text.find("]", m.end("p"), b)
                if k >= 0 and MARKER_RE.match(text, k) is not None:
                    b = k   # '^[A sentence.]({"attribution":…})': the "]" is the marker's, not a closer
                if _still_open(text, counts, cur, ps, b, m.group("p")):
                    continue
                if m.group("p") in ".!?" and b == m.end("p") and (dn := DIGIT_NOTE.match(text, b, re_)) \
                        and note_after(text, ps) and sp.is_boundary(unit, ps, m.group("p"), dn.end()):
                    b = dn.end()         # "… vehicles.1 In the EU": the note ends the sentence
                if sp.is_boundary(unit, ps, m.group("p"), b):
                    ct = _CLOSING_TAGS.match(text, b, re_)
                    if ct is not None:
                        r = ct.end()
                        while (mk := MARKER_RE.match(text, r, re_)) is not None:
                            r = mk.end()
                        if r == re_ or text[r].isspace() or m.group("p")[0] in "。！？；":
                            b = ct.end()   # "<b>Fact one.</b> Fact two.": the closing tag ends it
                    _emit(text, sp, spans, cur, b, unit)
                    cur = sp.next_content(unit, b)
            # a line ending with a colon introduces what follows: "The formula is:\nV = l × w"
            e = re_
            while e > rs and text[e - 1] in " \t":
                e -= 1
            if re_ < unit_end and e > cur and text[e - 1] in ":：" and not sp.protected(e - 1):
                _emit(text, sp, spans, cur, e, unit)
                cur = sp.next_content(unit, e)
        if cur < unit_end:
            _emit(text, sp, spans, cur, unit_end, unit)
    rows = _table_rows(text, layout, sp.labelled)
    if not rows:
        return [Sentence(i, s, e, text[s:e], lst, h) for i, (s, e, lst, h) in enumerate(spans)]
    merged = sorted([(s, e, lst, h, False, "", "", 0) for s, e, lst, h in spans] + rows)
    return [Sentence(i, s, e, text[s:e], lst, h, tab, claim, subject, table)
            for i, (s, e, lst, h, tab, claim, subject, table) in enumerate(merged)]


_BR_BOUNDARY = re.compile(r"(?P<br><br\s*/?>)", re.IGNORECASE)
_TERMINAL_BEFORE = re.compile(r"[.!?。！？；;:：…][\"'”’」』）)\]】*_]*[ \t]*\Z")
_LINE_OPENER = re.compile(r"[A-Z0-9\u4e00-\u9fff]")
_LAST_WORD = re.compile(r"[A-Za-z]+(?=[^A-Za-z]*\Z)")


def _boundaries(text: str, rs: int, re_: int) -> Iterator[re.Match[str]]:
    """The sentence-ending punctuation in text[rs:re_] (`_BOUNDARY`), and the "<br>" tags, in order."""
    if "<" not in text[rs:re_]:
        yield from _BOUNDARY.finditer(text, rs, re_)
        return
    yield from heapq.merge(_BOUNDARY.finditer(text, rs, re_), _BR_BOUNDARY.finditer(text, rs, re_),
                           key=lambda m: m.start())


def _ends_line_at_break(text: str, sp: _Splitter, unit: _Unit, cur: int, at: int, end: int) -> bool:
    """Whether a "<br>" at [at, end) with no end punctuation before it ends a sentence: a line of
    text before it (past the markers at its end), and after it a line that opens as a sentence
    does, with a capital, a digit or a Chinese character ("Erica Xu<br/>Next line"), not the rest
    of a sentence broken in two ("founded by<br>two friends")."""
    before = strip_markers(text[max(cur, at - 200):at])   # its end is enough: linear in the tags
    if not before.strip() or _TERMINAL_BEFORE.search(before):
        return False                     # nothing before it, or punctuation there ends it already
    last = _LAST_WORD.search(before)
    if last is not None and last.group(0).lower() in EN_STOPWORDS or before.rstrip()[-1:] in ",，、-–—(（":
        return False                     # "founded by<br>Shida Li": the line goes on
    nx = sp.next_content(unit, end)
    return nx < unit.ranges[-1][1] and _LINE_OPENER.match(text, nx) is not None


def _emit(
    text: str, sp: _Splitter, out: list[tuple[int, int, bool, str]], s: int, e: int, unit: _Unit
) -> None:
    while e > s and text[e - 1].isspace():
        e -= 1
    if s == 0 and text.startswith("\ufeff"):
        s = 1                  # a byte-order mark is no part of the first sentence
    while s < e and (br := _BREAK.match(text, s)) is not None:
        s = br.end()           # "….<br>Core inflation was 3.1%.": the line break is the last one's end
        while s < e and text[s] in " \t":
            s += 1
    if e <= s:
        return
    if not _has_prose(text, sp, s, e):
        return
    out.append((s, e, unit.in_list, unit.heading))


def _has_prose(text: str, sp: _Splitter, s: int, e: int) -> bool:
    """True when [s, e) holds a letter or digit outside protected regions and markers."""
    stripped = MARKER_RE.sub(lambda m: " " * len(m.group(0)), text[s:e])
    if sp.labelled:
        chars = list(stripped)
        for a, b in source_note_spans(text, s, e, sp.labelled):
            chars[a - s:b - s] = " " * (b - a)
        stripped = "".join(chars)
    k = bisect.bisect_right(sp.prot_starts, s) - 1
    k = max(k, 0)
    pos = s
    prot = sp.prot
    while pos < e:
        while k < len(prot) and prot[k][1] <= pos:
            k += 1
        if k < len(prot) and prot[k][0] <= pos:
            pos = prot[k][1]
            continue
        stop = min(e, prot[k][0]) if k < len(prot) else e
        if _HAS_WORD.search(stripped, pos - s, stop - s):
            return True
        pos = stop
    return False


_CELL_BAR = re.compile(r"(?<!\\)\|")
_CODE_CELL = re.compile(r"(?:(`+)(?!`).*?(?<!`)\1\s*)+")  # one or more inline code spans, nothing else
_LINK_TEXT = re.compile(r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\][(\[]")  # not an image's alt text


def _table_rows(
    text: str, layout: Layout, labelled: dict[str, set[int]],
) -> list[tuple[int, int, bool, str, bool, str, str, int]]:
    """A sentence for each body row of a table that holds prose: from its first cell's text to
    its last such cell's (the pipes between cells inside, the outer ones and the padding
    outside), so a marker goes after the row's last value, inside the row. Its claim reads each
    of those cells after its column's header."""
    if not layout.table_rows:
        return []
    heads = sorted(layout.headings)
    out: list[tuple[int, int, bool, str, bool, str, str, int]] = []
    header: list[str] = []
    table = 0
    titles: dict[int, str] = {}
    prev_end = -2
    for ls, le in layout.table_rows:
        if text.count("\n", prev_end, ls) != 1:   # a table's first body row: its header is 2 lines up
            table += 1
            dl = text.rfind("\n", 0, ls - 1) + 1
            hl = text.rfind("\n", 0, max(0, dl - 1)) + 1
            he = dl - 1 - (dl >= 2 and text[dl - 2] == "\r")
            header = [" ".join(MARKER_RE.sub(" ", text[a:b]).split())  # "| Notes [1] |": not read
                      for a, b in _cells(text, hl, max(hl, he))]
        prev_end = le
        cells = _cells(text, ls, le)[:max(1, len(header))]  # GFM drops the cells past the header's
        prose, marked = _prose_cells(text, layout, ls, le, cells, labelled)
        if not prose:
            continue
        last = max(prose[-1], marked)  # a "Source" column's markers after the values are the row's
        for j in range(last + 1, len(cells)):
            if _CODE_CELL.fullmatch(text, *cells[j]):
                last = j   # "| Want partial results | `gather(...)` |": the code is the row's last value
        parts = []
        subject = None
        for i in prose:
            cell = text[cells[i][0]:cells[i][1]]
            head = header[i] if i < len(header) else ""
            if _ROW_NUMBER.fullmatch(cell) and (i == 0 and not head or _NUMBERING_HEADER.fullmatch(head)):
                continue                 # "| 1 | …" under "#", "No." or "序号" numbers the row: no claim
            if subject is None and _LETTER.search(_FIGURE_PARTS.sub("", cell)):  # the first that names
                # names the row's thing ("| 3 | Japan |" under "Rank": Japan), unless it is a property
                subject = "" if not head or _PROPERTY_HEADER.fullmatch(head) else cell
            named = head and head.casefold() != cell.casefold() and _GENERIC_HEADER.fullmatch(head) is None \
                and not _other_script(head, cell)
            parts.append(f"{head} {cell}" if named else cell)
        k = bisect.bisect_right(heads, (ls, ls)) - 1
        if k not in titles:              # once per heading, not once per row
            titles[k] = heading_title(text[heads[k][0]:heads[k][1]].split("\n", 1)[0].rstrip("\r")) \
                if k >= 0 else ""
        heading = titles[k]
        start, first_end = cells[prose[0]]
        while (mk := MARKER_RE.match(text, start, first_end)) is not None:
            start = mk.end()             # "| [1] Alpha | …": a sentence starts after its markers
            while start < first_end and text[start] in " \t":
                start += 1
        out.append((start, cells[last][1], False, heading, True, ", ".join(parts), subject or "", table))
    return out


# a column header that names no property of its own ("| Property | Value |"): not read into the claim
_GENERIC_HEADER = re.compile(
    r"[*_\s]*(?:(?i:property|properties|value|values|item|items|details?|descriptions?|notes?|remarks?|"
    r"fields?|attributes?|parameters?|metrics?|features?|aspects?|categor(?:y|ies)|keys?|names?|"
    r"info(?:rmation)?|data|facts?|specs?|specifications?|key facts|dimension|characteristics?|"
    r"comments?|explanation|summary|#|no\.?|events?|dates?|time|timeline|milestones?|status|updates?)"
    r"|项目|数值|值|内容|说明|备注|参数|指标|属性|类别|名称|信息|数据|"
    r"特点|特征|详情|描述|要点|事项|序号|类型|维度|事件|日期|时间|进展|情况|动态|措施|举措)[*_\s:：]*"
)


# a first column whose cells are properties of the table's thing, not things ("| Launch date | … |"
# under "| Property | Value |"): the row's subject is the table's, which it does not write
_PROPERTY_HEADER = re.compile(
    r"[*_\s]*(?:(?i:propert(?:y|ies)|attributes?|parameters?|metrics?|measures?|indicators?|features?|"
    r"aspects?|items?|fields?|keys?|specs?|specifications?|characteristics?|dimensions?|criteri(?:on|a)|"
    r"factors?|categor(?:y|ies)|topics?|details?|facts?|key facts|info(?:rmation)?|data|stats?|"
    r"statistics?|figures?|details?)|项目|指标|参数|属性|特征|特点|维度|要点|事项|类别|方面|内容|信息|数据|"
    r"对比项|比较项|参数项)[*_\s:：]*"
)
_ROW_NUMBER = re.compile(r"[\[(（【]?\d{1,4}[.)\]）】]?")
_NUMBERING_HEADER = re.compile(
    r"[*_\s]*(?:#|№|(?i:no\.?|nr\.?|number|s/n|s\.?\s?no\.?|sl\.?\s?no\.?|sr\.?(?:\s?no\.?)?|index|idx)|序号|编号|序)"
    r"[*_\s]*")
_LETTER = re.compile(r"[^\W\d_]")
# what a figure is written with besides digits: "37.6万辆", "$4.5 trillion", "2023年" name nothing
_FIGURE_PARTS = re.compile(
    r"(?i:\b(?:thousand|million|billion|trillion|bn|mn|k|m|usd|rmb|eur|gbp)\b)|[万亿千百元辆台个件年月日号季度倍]")


def _other_script(head: str, cell: str) -> bool:
    """A Chinese header over a Latin value ("首发价" over "GeForce RTX 4090") or the reverse: the
    header's words are not the words its record uses, so they are left out of the claim."""
    if _CJK_CHAR.search(head):
        return _LATIN_LETTER.search(cell) is not None and _CJK_CHAR.search(cell) is None
    return _CJK_CHAR.search(cell) is not None and _LATIN_LETTER.search(head) is not None


def _cells(text: str, ls: int, le: int) -> list[Span]:
    """The cells of the table line text[ls:le], by column (outer pipes optional), each without
    its padding; an empty cell is (p, p)."""
    a, b = ls, le
    while a < b and text[a] in " \t":
        a += 1
    while b > a and text[b - 1] in " \t":
        b -= 1
    if a < b and text[a] == "|":
        a += 1
    if b > a and text[b - 1] == "|" and text[b - 2] != "\\":
        b -= 1
    cells: list[Span] = []
    for m in [*_CELL_BAR.finditer(text, a, b), None]:
        e = b if m is None else m.start()
        s, t = a, e
        while s < t and text[s].isspace():
            s += 1
        while t > s and text[t - 1].isspace():
            t -= 1
        cells.append((s, t))
        a = e + 1
    return cells


def _prose_cells(text: str, layout: Layout, ls: int, le: int, cells: list[Span],
                 labelled: dict[str, set[int]]) -> tuple[list[int], int]:
    """Indices of the `cells` that hold a letter or digit outside their code, images, links'
    targets, URLs, math and markers ("—" and "[1]" alone are no value of the row), and the index
    of the last cell that holds a citation marker (-1 if none)."""
    # markers first: a link-shaped one ("[1](https://…)", "[1](#ref-1)") is no value by its text
    masked = list(MARKER_RE.sub(lambda m: " " * len(m.group(0)), text[ls:le]))
    notes = source_note_spans(text, ls, le, labelled) if labelled else []   # "| (Source 1) |" cites too
    for a, b in notes:
        masked[a - ls:b - ls] = " " * (b - a)
    for a, b in table_line_regions(text, ls, le, layout.link_labels):
        link = _LINK_TEXT.match(text, a, b)   # a link's text is the cell's words, its target is not
        keep = (a + 1, link.end(1)) if link else (a, a)
        masked[a - ls:keep[0] - ls] = " " * (keep[0] - a)
        masked[keep[1] - ls:b - ls] = " " * (b - keep[1])
    row = "".join(masked)
    # a marker counts where it is no part of code, an image or a URL ("`buf[1]`" is code); a
    # link-shaped marker ("[1](#ref-1)") is a region of its own and counts
    regions = sorted(table_line_regions(text, ls, le, layout.link_labels))
    starts = [a for a, _b in regions]
    marked_cells: set[int] = set()
    cell_ends = [b for _a, b in cells]
    for ms, me in sorted([(m.start(), m.end()) for m in MARKER_RE.finditer(text, ls, le)] + notes):
        k = bisect.bisect_right(starts, ms) - 1   # the region that could hold it
        if k >= 0 and regions[k][1] >= me and regions[k] != (ms, me) \
                and not (ms <= regions[k][0] and regions[k][1] <= me):
            continue                     # inside code, an image or a URL
        i = bisect.bisect_left(cell_ends, me)
        if i < len(cells) and cells[i][0] <= ms:
            marked_cells.add(i)
    marked = sorted(i for i in marked_cells if cells[i][1] > cells[i][0])
    return ([i for i, (a, b) in enumerate(cells) if b > a and _HAS_WORD.search(row, a - ls, b - ls)],
            marked[-1] if marked else -1)


__all__ = ["segment_sentences"]
