"""Citation markers already present in a report, and their resolution to records.

Recognised forms: ``[1]``, ``[1, 2]``, ``[1-3]``, ``[1][3]`` (two markers), ``【1】``,
``[^1]`` (footnote references, not definitions), ``[citation:1]``, ``[[1]](url)``,
``[1](http…)``, ``<sup>[1]</sup>``, any of these in bold or italics (``**[1]**``), the openJiuwen
form ``[source_tracer_result][title](url)``,
and what writer agents emit: ``【4†source】`` / ``【4:0†L10-L20】`` / ``【turn0search3】`` and
ChatGPT's private-use ``\ue200cite\ue202turn0search3\ue201``, Gemini's ``[cite: 1, 2]`` (with
its ``[cite_start]`` span openers, which cite nothing and are removed), Kimi's ``[^1^]``,
``[[1]]``, ``[Source 1]`` and other label words (``[ref1]``, ``[doc1]``, ``[来源2]``, ``(ref. 2)``),
``[4†source]``, and what chat apps leave in a copied answer (``citeturn0search3``,
``:contentReference[oaicite:0]{index=0}``, ``[oai_citation:1‡Reuters](url)``, Perplexity's ``[web:1]``,
Grok's citation cards, Gemini's ``[span_1](start_span)``). A marker is never guessed positionally:
it resolves through the removed references section (by canonical URL, then exact title), through
its own URL, or through a record id (``turn0search3`` only through one); otherwise it maps to None.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import html
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from urllib.parse import urlsplit

from tracer.markdown import (
    ATTRIBUTION_TAIL,
    BULLET_ITEM,
    CITATION_CUE,
    CITATION_LABEL_WORD,
    LINK_CITATION_END,
    LINK_OPEN,
    SCHEMELESS_URL,
    footnote_note,
    heading_title,
    inline_regions,
    is_code_region,
    link_definitions,
    link_label,
    one_line_entries,
    references_title,
    trim_url,
)
from tracer.models import ExistingMarker, Layout, Record, Sentence
from tracer.text import DIGIT_NOTE, content_tokens, note_after, numbers, title_key

_MAX_RANGE = 50                        # "[1-3]" expands; "[1-9999]" is not a citation
_MAX_NUMBER = 999                      # a lone "[2020]" is a year, not a citation
_MAX_GAP = 64                          # whitespace allowed between a sentence and its marker

_NUM = r"\d{1,4}"
# a range's dash as authors and input methods type it ("[1-3]", "[1－3]", "[1−3]", "[1至3]")
_DASH = r"(?:[-–—~～‐‑‒−－]|至)"
_SEP = rf"\s*(?:[,，、;；]|{_DASH})\s*"
_NUM_LIST = rf"{_NUM}(?:{_SEP}{_NUM})*"
# a number list in square brackets, as typed with a space inside ("[ 1 ]", "[ 1, 2 ]") or not
_PLAIN = rf"\[[ \t]?{_NUM_LIST}[ \t]?\]"
_PAGES = r"[ \t]*[,，:][ \t]*(?:pp?\.|pages?|S\.)[ \t]*\d{1,5}(?:[ \t]*[-–—][ \t]*\d{1,5})?"
# a source's number under a label word: "[ref1]", "[Ref. 2]", "[doc1]", "[来源2]", "【参考3】", the word
# again before each number ("[Source 2, Source 3]", "【来源2、来源3】", "[ref1-ref3]", "[Source #1]"),
# and the page ("[ref2, p. 5]")
_LABEL_AGAIN = rf"(?:{CITATION_LABEL_WORD}[ \t]*+(?:[:：][ \t]*+)?)"
_LABELLED_NUMS = rf"#?{_NUM}(?:{_SEP}{_LABEL_AGAIN}?#?{_NUM})*"
_LABELLED = rf"{_LABEL_AGAIN}{_LABELLED_NUMS}(?:{_PAGES})?"
# ... and in parentheses only what cannot be a name: "(ref. 2)", "(Source: 1, 2)", "（来源：2）",
# "(Ref. 2; Ref. 1)", "(see ref. 2)", not "(Source 1)", a well's name
_LABELLED_PAREN = (rf"[(（][ \t]*+(?:(?i:see|cf\.)[ \t]++|参见|详见)?"
                   rf"(?:(?i:refs?\.?|references?)[ \t]*+(?:[:：][ \t]*+)?"
                   rf"|(?:(?i:sources?)|来源|参考文献|参考资料|出处)[ \t]*+[:：][ \t]*+)"
                   rf"{_LABELLED_NUMS}(?:{_PAGES})?"
                   rf"[ \t]*+[)）]")
# ... and "(Source 1)", "(Sources 1 and 2)", "（来源1）", "(doc 3)" where the cut references list labels its
# entries so ("Source 1: …", "[Source 1] …"), and only there (`_candidates`)
_SOURCE_NOTE = re.compile(
    rf"[(（][ \t]*+(?P<word>{CITATION_LABEL_WORD})[ \t]*+(?:[:：][ \t]*+)?#?{_NUM}"
    rf"(?:(?:{_SEP}|[ \t]*+,?[ \t]*+(?:and|&|和|与)[ \t]*+){_LABEL_AGAIN}?#?{_NUM})*"
    rf"(?:{_PAGES})?[ \t]*+[)）]")
# a number list in any bracket an author uses for citations ("（详见【1】）" wraps one too)
_BRACKETED = (rf"(?:{_PLAIN}|【{_NUM_LIST}】|［{_NUM_LIST}］|〔{_NUM_LIST}〕"
              rf"|\[{_LABELLED}\]|【{_LABELLED}】|［{_LABELLED}］|\[{_NUM}(?::{_NUM})?†[^\[\]†\n]{{0,60}}\])")
_CUE = CITATION_CUE
_URL = r"[^()\s]*(?:\([^()\s]*\)[^()\s]*)*"
# (a key with two digits or more, as citation keys carry a year: "[@alice]", "[@types/react]" are
# handles and packages)
_PANDOC_KEY = r"(?<![\w.@])-?@(?=[\w:.#$%&+?~/-]{0,80}\d\d)(?:\w[\w:.#$%&+?~/-]{0,80})?\w"
_PANDOC_CITATION = (rf"\[(?:[^\[\]\n@]{{0,40}}?)?{_PANDOC_KEY}(?:[^\[\]\n@]{{0,80}}?{_PANDOC_KEY}){{0,20}}"
                    r"[^\[\]\n@]{0,80}?\]")
# (to a page, or to an anchor of its notes or references: not '<a href="#fig2">[2]</a>', a figure)
_HTML_LINKED_NUMBER = (r"<a\s[^<>]{0,300}?\bhref\s*=\s*[\"'](?:(?:https?://|www\.)[^\"'<>\s]{1,2000}"
                       r"|\#(?i:ref|cite|citation|fn|footnote|note|endnote|source|bib)[^\"'<>\s]{0,80})"
                       r"[\"'][^<>]{0,300}>[ \t]*\[\d{1,4}\][ \t]*</a\s*>")

# the kinds of source Perplexity's tags name: "[web:1]", "[attached_file:2]", "[conversation_history:3]"
# (not its "[page:2]" or "[file:2]", which prose and code write too: "see [page:3] of the form")
_CHAT_TAG_FORM = r"\[(?:web|attached_file|conversation_history):\d{1,4}\]"
_TITLE = r"(?:\\.|[^\\\[\]\n]|\[[^\[\]\n]*\])*"
# The markers that name a chat's own id (or number, or URL) as writer agents and chat apps leave them:
# ChatGPT's "【4†source】", "【4:0†L10-L20】", "【turn0search3】", its private-use
# "\ue200cite\ue202turn0search3\ue201" and, copied without those characters, "citeturn0search3turn1news0";
# its ":contentReference[oaicite:0]{index=0}" and "[oai_citation:1‡Reuters](https://…)"; Perplexity's
# "[web:1]", "[attached_file:2]"; Grok's "[](grok_render_citation_card_json={"cardIds":["3bb883"]})"
# and "<grok-card data-id=…></grok-card>"
_CHAT_ONE = (
    r"【[^【】†\n]{1,40}†[^【】\n]{0,60}】|【turn\d{1,3}[a-z]{2,12}\d{1,4}】"
    r"|\ue200(?:file)?cite(?:\ue202[^\ue200-\ue202\n]{1,60}){1,20}\ue201"
    r"|(?:file)?cite(?:turn\d{1,3}[a-z]{2,12}\d{1,4})++"
    r"|:{0,2}contentReference\[oaicite:\d{1,4}\]\{index=\d{1,4}\}"
    rf"|\[oai_citation(?:_attribution)?:\d{{1,4}}(?:‡{_TITLE})?\]\((?:https?://|www\.){_URL}\)"
    rf"|{_CHAT_TAG_FORM}"
    r"|\[\]\(grok_render_citation_card_json=\{[^(){}\n]{0,400}\}\)"
    r"|<grok-card(?:\s[^<>\n]{0,200})?(?:/>|>[ \t]*</grok-card>)"
)
# Gemini's "[span_1](start_span)" … "[span_1](end_span)" around a cited span: they cite nothing
_SPAN = r"\[span_\d{1,4}\]\((?:start|end)_span\)"
# a link whose text names its source, not a number: "[Reuters](https://…)", "[toureiffel.paris](https://…)"
_NAMED_LINK = (rf"\[(?![\d\s,，\-–]*\]|[ \t]*{CITATION_LABEL_WORD}[ \t]*(?:[:：][ \t]*)?#?\d"
               rf"|[^\[\]\n]{{0,80}}†)[^\[\]\n]{{1,80}}\](?:\((?:https?://|www\.){_URL}\)|\[{_NUM}\])")
# (not "[ref2][1]", "[2†source][1]": a labelled marker and a number, each a marker of its own)
# (or a reference link to a numbered definition: ChatGPT's "([Wikipedia][1])" with "[1]: https://…" below)
# links alone in parentheses, as ChatGPT and others cite: "([Reuters](https://…))", "([a.com](…); [b.org](…))"
_LINK_GROUP = rf"[(（][ \t]*+{_CUE}?{_NAMED_LINK}(?:[ \t]*+[,，;；][ \t]*+{_NAMED_LINK})*+[ \t]*+[)）]"
_ONE = (
    rf"\[source_tracer_result\]\[{_TITLE}\](?:\({_URL}\))?"
    rf"|\[\[{_NUM}\]\]\({_URL}\)"
    rf"|\[{_NUM}\]\((?:https?://|www\.){_URL}\)"
    # "[1](#ref-1)": a number linking to its entry further down (not "[2](#figure-2)"); "[\[1\]](url)",
    # brackets escaped
    rf"|\[{_NUM}\]\(#(?i:ref|cite|citation|fn|footnote|note|endnote|source|bib)[^()\s]{{0,80}}\)"
    # Tencent Yuanbao's "[3](@ref)", "[5,6](@ref)": numbers of its search results
    rf"|\[{_NUM_LIST}\]\(@ref\)"
    rf"|\[\\\[{_NUM_LIST}\\\]\]\({_URL}\)"
    # a number with the page it cites: "[1, p. 5]", "[2, pp. 10–12]"
    rf"|\[{_NUM_LIST}{_PAGES}\]"
    # a footnote reference; "[^1]:" is a definition only where it opens a line
    rf"|\[\^[\w.-]{{1,40}}\](?!:)|(?<=\S)\[\^[\w.-]{{1,40}}\](?=:)"
    rf"|\[(?i:citation):\s*{_NUM_LIST}\]"
    # writer agents' forms: ChatGPT "【4†source】", "【4:0†L10-L20】", "【turn0search3】" and its
    # private-use "\ue200cite\ue202turn0search3\ue201"; Gemini "[cite: 1, 2]" and the
    # "[cite_start]" opening a cited span; "[Source 1]"; Kimi "[^1^]"; "[[1]]"
    rf"|{_CHAT_ONE}"
    rf"|\[(?i:cite)(?::[ \t]*|[ \t]+){_NUM_LIST}\]|\[cite_start\]|{_SPAN}"
    # ... and ChatGPT's "^[A sentence.]({"attribution":{"attributableIndex":"1009-1"}})": the two
    # halves around the sentence (which stays), citing nothing; the tail alone too
    rf"|\^\[(?=(?:[^\[\]\n]|\[[^\[\]\n]*+\]){{1,2000}}+\]{ATTRIBUTION_TAIL})|\]?{ATTRIBUTION_TAIL}"
    # a number under a label word: "[ref1]", "[Source 1]", "[doc2]", "[来源2]", "【参考3】", and in
    # parentheses "(ref. 2)", "(Source: 1, 2)", "（来源：2）"; ChatGPT's "[4†source]" in ASCII brackets
    rf"|\[{_LABELLED}\]|【{_LABELLED}】|［{_LABELLED}］|{_LABELLED_PAREN}"
    rf"|\[{_NUM}(?::{_NUM})?†[^\[\]†\n]{{0,60}}\]"
    # a number in brackets an HTML link wraps, as a page copied as HTML cites: '<a href="url">[2]</a>'
    rf"|{_HTML_LINKED_NUMBER}"
    # Pandoc's, Quarto's and R Markdown's citation keys: "[@smith2020]", "[@a; @b, p. 3]", "[-@key]"
    rf"|{_PANDOC_CITATION}"
    # Bing / Copilot "[^1^][1]": Kimi's form as a reference link to its "[1]: url" definition
    rf"|\[\^{_NUM}\^\]\[{_NUM}\]"
    rf"|\[\^{_NUM}\^\]|\[\[{_NUM_LIST}\]\](?!\()"
    rf"|【{_NUM_LIST}】|［{_NUM_LIST}］|〔{_NUM_LIST}〕"
    # one marker with what the author wrapped around its brackets, so that removing it leaves no
    # "（）" or "^" behind: "（[1]）", "([1], [2])", "^[1]"
    # "(see [1])", "（参见[1]）", "(Source: [1])": a cue word with it, so no "(see )" is left either
    # ... and a chat app's markers among them: "(citeturn0search3)", "（[web:1]）", "(see [1], [web:2])"
    # ... and labelled ones among them: "(see (Source: 2), [1])"
    rf"|[(（][ \t]*+{_CUE}?(?:{_BRACKETED}|{_CHAT_ONE}|{_LABELLED_PAREN})"
    rf"(?:[ \t]*+(?:[,，、;；][ \t]*+)?(?:{_BRACKETED}|{_CHAT_ONE}|{_LABELLED_PAREN}))*+[ \t]*+[)）]"
    rf"|[(（][ \t]*+{_CUE}{_LABELLED_PAREN}[ \t]*+[)）]"   # "(see (ref. 2))": one marker, as "(see [2])"
    rf"|{_LINK_GROUP}"
    rf"|\[\[{_NUM}\]\((?:https?://|www\.){_URL}\)\]|\^\[{_NUM_LIST}\]\^"
    rf"|\^\[{_NUM_LIST}\](?!\()"
    rf"|{_PLAIN}(?!\()"

)
# a superscript number that raises to a power: after 10 ("10<sup>6</sup>"), or a square or cube
# after a unit ("m<sup>2</sup>", "ft<sup>3</sup>", E = "mc<sup>2</sup>")
_POWER = re.compile(r"<sup>\s*(\d{1,2})\s*</sup>")
_UNIT_BEFORE = re.compile(r"(?<![^\W\d_])(?:[kcmnμµd]?m|ft|in|mi|yd|mc)\Z")


# Atomic: the items between the tags split one way only. Tried every way ("1,2" as one list or
# as two, "11" as one number or two), a "<sup>" with no "</sup>" after its digits took time
# exponential in their number (30 digits: 51 s).
_SUP = rf"<sup>(?>\s*(?:{_ONE}|{_NUM_LIST})(?:\s*[,，]?\s*(?:{_ONE}|{_NUM_LIST}))*\s*)</sup>"

# markers the author set in bold, italics or strike-through, or in an HTML tag of those: "hectares
# **[1]**.", "占地72公顷**[1]**。", "*[1][2]*", "<b>[1]</b>": one marker with its delimiters, so that
# removing it leaves no "****" behind. Only after a word or a stop (a blank between or not): a
# bold number opening a line ("**[1]** Open the app.") labels a step, as a bare one may.
_WRAPPED_ITEMS = rf"(?>{_ONE})(?:[ \t]*+(?:[,，、;；][ \t]*+)?(?>{_ONE}))*+"
_AFTER_WORD = r"[\w.,;:!?。，；：！？)）%\"”'’\]】]"
_EMPHASIS = (rf"(?=[*_~<])(?:(?<={_AFTER_WORD})|(?<={_AFTER_WORD}[ \t]))"
             rf"(?:(?P<md_em>\*{{1,3}}|_{{1,3}}|~~){_WRAPPED_ITEMS}(?P=md_em)(?![\w*~])"
             rf"|<(?P<html_em>b|strong|em|i)>{_WRAPPED_ITEMS}</(?P=html_em)>)")

#: One citation marker of any recognised form (markers written back to back match one by one).
MARKER_RE = re.compile(rf"{_EMPHASIS}|{_SUP}|{_ONE}")
#: A labelled number in parentheses ("(ref. 2)", "（来源：2）"): a marker without square brackets.
LABELLED_PAREN_RE = re.compile(_LABELLED_PAREN)
#: A source's number in parentheses under any label word ("(Source 2)", "（来源1）"): a marker where
#: the cut references list labels its entries with that word, a source note in any case; with what
#: wraps one ("（参见（来源1））", "<sup>(Source 2)</sup>"), so no "（参见）" is left of it in a claim.
_NOTE = _SOURCE_NOTE.pattern.replace("(?P<word>", "(?:")
SOURCE_NOTE_RE = re.compile(rf"[(（][ \t]*+{_CUE}{_NOTE}[ \t]*+[)）]|<sup>{_NOTE}</sup>|{_NOTE}")
_LABELLED_HEAD = re.compile(rf"[\[【［(（][ \t]*{CITATION_LABEL_WORD}")   # "[ref1]", "(ref. 2)"
_NO_PARENS = str.maketrans("()（）#", "     ")
_LABEL_WORDS = re.compile(rf"{CITATION_LABEL_WORD}[ \t]*(?:[:：][ \t]*)?")

_HTML_TAG = re.compile(r"<[^<>]*>")
_HREF = re.compile(r"\bhref\s*=\s*[\"']([^\"'<>\s]+)[\"']")
_BING_MARKER = re.compile(rf"\[\^{_NUM}\^\]\[({_NUM})\]")
_NUMS_IN = re.compile(rf"{_NUM}(?:\s*{_DASH}\s*{_NUM})?")
# (as a search: only a blank run's first blank starts a match, or a marker with a long run of
# spaces in it is scanned from each of them)
_PAGES_IN = re.compile(r"(?<![ \t])[ \t]*+[,，:][ \t]*+(?:pp?\.|pages?|S\.)[ \t]*+\d{1,5}"
                       r"(?:[ \t]*+[-–—][ \t]*+\d{1,5})?")
_URL_IN = re.compile(r"\((" + _URL + r")\)")
_JIUWEN = re.compile(rf"\[source_tracer_result\]\[({_TITLE})\](?:\(({_URL})\))?")
_LINK_GROUP_RE = re.compile(_LINK_GROUP)
_LINK_END = LINK_CITATION_END
_LINK_URL = re.compile(rf"\]\(((?:https?://|www\.){_URL})\)|\]\[({_NUM})\]")


def strip_markers(text: str) -> str:
    """`text` with every citation marker removed (the forms above and every form we emit).

    Repeated until nothing changes: removing "[1]" from "[2023[1]]" leaves "[2023]", which
    reads as a marker too, so a body and the same body with its markers removed strip alike.
    """
    out = MARKER_RE.sub("", text)
    while out != text:
        text, out = out, MARKER_RE.sub("", out)
    return out


# what joins the markers of one run: nothing ("[1][2]"), or a comma or semicolon right after the
# first, blanks after it or not ("[1], [2]", "[1]; [2]", "[1]，[2]", "[1]、[2]"). Blanks alone ("[1]
# [2]"), or before the comma, part two runs: removing "[3]" from "(…) [3], [1]" joins nothing.
RUN_JOIN = re.compile(r"(?:[,;，；、][ \t]*+)?")
# what may follow a run that ends a sentence, a line, a clause or an aside: the blank before such a
# run is the marker's ("Canaveral [1].", "BYD [1], and", "(see page 4 [1])"), not the text's (a
# comma or semicolon that joins a marker after it is the run's own).
_RUN_ENDERS = frozenset("\r\n.!?:,;)]}>。！？：，；、）】》」』\"'*_|~")
# what the blank before a run may follow and still be the text's: a line break (an indent), a
# full stop ("2021. [1] Its": what follows may start a sentence), a comma, a colon, an opening
# bracket ("Tesla, [1].")
_BLANK_KEEPERS = frozenset("\r\n.!?。！？,;:，；：、([{（【《")


def marker_runs(text: str, spans: Iterable[tuple[int, int]] | None = None) -> list[tuple[int, int]]:
    """The runs of markers in `text` (of `MARKER_RE`'s matches, or of the sorted `spans`): markers
    that touch or that `RUN_JOIN` joins, each run as one (start, end)."""
    runs: list[tuple[int, int]] = []
    found = spans if spans is not None else ((m.start(), m.end()) for m in MARKER_RE.finditer(text))
    for a, b in found:
        if runs and a < runs[-1][1]:
            continue
        if runs and RUN_JOIN.fullmatch(text, runs[-1][1], a):
            runs[-1] = (runs[-1][0], b)
        else:
            runs.append((a, b))
    return runs


def run_blanks(text: str, runs: Sequence[tuple[int, int]]) -> list[int]:
    """For each of the sorted `runs`, where it begins with the blank before it that goes with it:
    the blanks right before it when the run ends a sentence, a line, a clause or an aside ("Canaveral [1].",
    "cars [2]\n", "(see page 4 [1])"), unless they follow a line break, a full stop, a comma, a
    colon or an opening bracket (`_BLANK_KEEPERS`). What stands on either side is read past other
    runs and blanks, so the answer does not change as markers come or go. (Runs with only blanks
    between them are read as one cluster, once: linear in the runs.)"""
    out: list[int] = []
    n = len(text)
    i = 0
    while i < len(runs):
        first = i   # the cluster: runs with only blanks between them
        while i + 1 < len(runs) and not text[runs[i][1]:runs[i + 1][0]].strip(" \t"):
            i += 1
        j = runs[i][1]   # what follows the cluster
        while j < n and text[j] in " \t":
            j += 1
        p = runs[first][0]   # what precedes it
        while p > 0 and text[p - 1] in " \t":
            p -= 1
        keep = (j < n and text[j] not in _RUN_ENDERS) or p == 0 or text[p - 1] in _BLANK_KEEPERS
        # "long. [1] The", "long. [1]\n" (or ".[2] [1]\n"): they cite the sentence before, and go with
        # their blanks; but one blank stays when the next sentence is glued to them (". [1] ^[The")
        spare = False
        if p > 0 and text[p - 1] in ".!?" and _trails_a_stop(text, j) and (
                p < runs[first][0] or any(runs[k][1] < runs[k + 1][0] for k in range(first, i))):
            keep = False
            spare = j == runs[i][1] and j < n and text[j] not in "\r\n"
        for lo, _hi in runs[first:i + 1]:
            s = lo
            while s > 0 and text[s - 1] in " \t":
                s -= 1
            out.append(lo if keep or s == lo or s == 0 or spare else s)
            spare = spare and s == lo
        i += 1
    return out


def opening_runs(text: str, runs: Sequence[tuple[int, int]]) -> list[bool]:
    """For each of the sorted `runs`, whether it opens a line or a sentence: only blanks, commas,
    semicolons and other runs between it and the start of its line or of its list item ("- [1]:
    x"), a full stop with a blank after it ("2021. [1] found that"; not when a capital, a figure or
    the line's end follows the run, `_trails_a_stop`: "long. [1] The …"), or a Chinese full stop
    ("。[1]、[2]指出"). Such a run loses its markers only: what is left ("[3], [1] found that" ->
    ", found that") still starts a sentence of its own, and no marker before it reads as the
    previous sentence's, when traced again. (Linear in the runs: each gap is read once.)"""
    out: list[bool] = []
    n = len(text)
    ends = [0] * len(runs)   # where each run's cluster (runs with blanks and joins between) ends
    for i in range(len(runs) - 1, -1, -1):
        hi = runs[i][1]
        joined = i + 1 < len(runs) and not text[hi:runs[i + 1][0]].strip(" \t,;，；、")
        ends[i] = ends[i + 1] if joined else hi
    p = 0             # where what precedes the current cluster of runs ends
    blank = False     # a blank between that point and the current run
    for i, (lo, _hi) in enumerate(runs):
        gap_from = runs[i - 1][1] if i else 0
        q = lo
        while q > gap_from and text[q - 1] in " \t,;，；、":
            q -= 1
        gap_blank = any(ch in " \t" for ch in text[q:lo])
        if i and q == gap_from:   # only blanks and joins since the previous run: the same cluster
            blank = blank or gap_blank
        else:
            p, blank = q, gap_blank
        j = ends[i]
        while j < n and text[j] in " \t":
            j += 1
        out.append(p == 0 or text[p - 1] in "\r\n。！？"
                   or (blank and text[p - 1] in ".!?" and not _trails_a_stop(text, j))
                   or (blank and text[p - 1] in "-*+.)>"
                       and _ITEM_OPENER.fullmatch(text, text.rfind("\n", 0, p) + 1, p) is not None))
    return out


def _trails_a_stop(text: str, j: int) -> bool:
    """Whether markers after a full stop and a blank, with the first other character at `j`
    (past blanks), cite the sentence before them: a line or the text ends after them, or a capital
    or a figure follows ("long. [1] The Forbidden City …"), which opens the next sentence; not
    "2021. [1] found that", where the markers are its subject."""
    return j >= len(text) or text[j] in "\r\n" or text[j].isupper() or text[j].isdigit()


# what opens a list item or a quote's line: "- ", "1. ", "> ", "> - " (then the item's own words)
_ITEM_OPENER = re.compile(r"[ \t]*(?:(?:[-*+]|\d{1,9}[.)]|>)[ \t]*)*(?:[-*+]|\d{1,9}[.)]|>)")


def without_runs(text: str, spans: Iterable[tuple[int, int]] | None = None, *,
                 gap: Callable[[str, int, int], str] | None = None, blanks: bool = True) -> str:
    """One pass of `unmarked`: `text` without the runs of its markers (`MARKER_RE`'s matches, or
    the sorted `spans`), each with what joins its markers, a run that opens a line or a sentence
    marker by marker. `gap(text, start, end)`: what each removed run or marker leaves (nothing by
    default); `blanks`: whether the blank before a run that ends a sentence goes with it."""
    found = list(spans) if spans is not None else [(m.start(), m.end()) for m in MARKER_RE.finditer(text)]
    if not found:
        return text
    runs = marker_runs(text, found)
    out: list[str] = []
    at = 0
    for (a, b), blank, opening in zip(runs, run_blanks(text, runs), opening_runs(text, runs), strict=True):
        pieces = found[bisect.bisect_left(found, (a, -1)):bisect.bisect_left(found, (b, b + 1))] \
            if opening else [(blank if blanks else a, b)]   # an opening run: its markers only
        for c, d in pieces:
            if c < at:
                continue
            out.append(text[at:c])
            if gap is not None:
                out.append(gap(text, c, d))
            at = d
    out.append(text[at:])
    return "".join(out)


def unmarked(text: str, spans: Iterable[tuple[int, int]] | None = None) -> str:
    """`text` as it reads without its citation markers. Each run of markers (`marker_runs`) goes
    whole, with what joins its markers: "Canaveral [1], [2]." reads "Canaveral .". Where the run
    ends a sentence, a line, a clause or an aside, the blank before it goes too (`run_blanks`):
    "Canaveral." A run that opens a line or a sentence (`opening_runs`) loses its markers only:
    "[3], [1] found that" reads ", found that". This is what the tracer keeps byte for byte: the
    body it returns reads the same as the one it was given.

    `spans`: the first round's markers, if not `MARKER_RE`'s matches (sorted (start, end)).
    Repeated, like `strip_markers`, until nothing changes."""
    out = without_runs(text, spans)
    while out != text:
        text, out = out, without_runs(out)
    return out


def _numbers(marker: str) -> tuple[int, ...]:
    """The citation numbers of one marker, ranges expanded ("[1-3]" -> 1, 2, 3)."""
    if (linked := _BING_MARKER.fullmatch(marker)) is not None:   # "[^1^][1]": the label it links
        return (int(linked.group(1)),)
    if "<a" in marker:              # '<a href="https://x.org/2023">[2]</a>': its text's number only
        marker = _HTML_TAG.sub("", marker)
    if _LABELLED_HEAD.search(marker):   # "[ref1-ref3]": the numbers without their label words
        marker = _LABEL_WORDS.sub("", marker).translate(_NO_PARENS)
    elif marker[:1] in "(（^":  # "([1])", "^[1]": the brackets inside hold the numbers
        marker = _unwrapped(marker)
    if marker.startswith("[") and "](" in marker:
        body = marker[: marker.find("](") + 1]
    else:
        body = _PAGES_IN.sub("", _URL_IN.sub("", marker))
    out: list[int] = []
    for m in _NUMS_IN.finditer(body):
        part = m.group(0)
        bounds = re.split(rf"\s*{_DASH}\s*", part)
        if len(bounds) == 2:
            a, b = int(bounds[0]), int(bounds[1])
            if a <= b and b - a <= _MAX_RANGE:
                out.extend(range(a, b + 1))
            else:
                out.extend((a, b))
        else:
            out.append(int(part))
    seen: set[int] = set()
    return tuple(n for n in out if not (n in seen or seen.add(n)))  # type: ignore[func-returns-value]


_PANDOC_WHOLE = re.compile(_PANDOC_CITATION)
_PANDOC_KEYS = re.compile(r"(?<![\w.@])-?@((?:\w[\w:.#$%&+?~/-]{0,80})?\w)")


def _pandoc_keys(raw: str) -> tuple[str, ...] | None:
    """The citation keys of a Pandoc citation ("[see @smith2020, p. 3; -@lee2021]": smith2020,
    lee2021), or None for any other marker."""
    if "@" not in raw or not _PANDOC_WHOLE.fullmatch(raw):
        return None
    return tuple(dict.fromkeys(_PANDOC_KEYS.findall(raw)))


def _numbered(raw: str) -> bool:
    """Whether the marker is a bracketed number, bare or under a label word ("[1]", "【2】", "[ref1]"):
    such a number may label a heading, a row or a list entry rather than cite."""
    return raw[0] in "[【［〔" and (_opens_with_digit(raw) or bool(_LABELLED_HEAD.match(raw)))


def _opens_with_digit(raw: str) -> bool:
    """Whether a digit follows the marker's opening bracket, a space or tab between them or not
    ("[1]", "[ 1 ]")."""
    return raw[1:3].lstrip(" \t")[:1].isdigit()


_EMPHASIS_TAG = re.compile(r"<(b|strong|em|i)>")


def _without_emphasis(raw: str) -> str:
    """The markers inside the bold, italics or strike-through of an `_EMPHASIS` match ("**[1]**",
    "<b>[1]</b>": "[1]"); any other marker as it is."""
    if raw[:1] in "*_~":
        n = len(raw) - len(raw.lstrip(raw[0]))
        return raw[n:-n]
    if (tag := _EMPHASIS_TAG.match(raw)) is not None:
        return raw[tag.end():-len(tag.group(1)) - 3]
    return raw


def _unwrapped(marker: str) -> str:
    """A marker without the parentheses or caret the author wrapped around its brackets."""
    if marker[:1] not in "(（^":
        return marker
    inner = marker.lstrip("(（^ \t").rstrip(")）^ \t")
    at = next((i for i, ch in enumerate(inner) if ch in "[【［〔"), -1)
    return inner[at:] if at >= 0 else inner  # "see [1]", "详见【1】": the brackets on


def labelled_entries(removed_references: str) -> dict[str, set[int]]:
    """The numbers a references section lists under each label word ("Source 1: …" gives
    {"source": {1}}; `label_key` spells the word): the body's source notes that cite."""
    return _parse_entries(removed_references)[1]


def source_note_at(text: str, pos: int, end: int, labelled: dict[str, set[int]]) -> tuple[int, int] | None:
    """The span of the source note at `pos` ("(Source 2)", or with what wraps it as `_wrapped`
    reads it: "<sup>(Source 2)</sup>", "(see (Source 2))") when it cites: `labelled` lists its
    numbers under its word."""
    m = _SOURCE_NOTE.match(text, pos, end)   # the note itself ("(Source 2)" opens like a cue's "(")
    if m is None:
        if text.startswith("<sup>", pos):
            m = _SOURCE_NOTE.match(text, pos + 5, end)
        elif (cue := _CUE_AT.match(text, pos, end)) is not None:
            m = _SOURCE_NOTE.match(text, cue.end(), end)
    if m is None or not _cites(m, labelled):
        return None
    s, e, _raw = _wrapped(text, m.start(), m.end())
    return (s, e) if s == pos and e <= end else None


def source_note_spans(
    text: str, start: int, end: int, labelled: dict[str, set[int]],
) -> list[tuple[int, int]]:
    """The spans of the source notes in text[start:end] that cite, with what wraps them."""
    out = []
    for m in _SOURCE_NOTE.finditer(text, start, end):
        if _cites(m, labelled):
            s, e, _raw = _wrapped(text, m.start(), m.end())
            out.append((max(s, start), min(e, end)))
    return out


def _cites(note: re.Match[str], labelled: dict[str, set[int]]) -> bool:
    return set(_numbers(note.group(0))) <= labelled.get(label_key(note.group("word")), set())


def _labelled_paren(raw: str) -> bool:
    """A number in parentheses under a label word ("(ref. 2)", "(Source 2)", "（来源1）")."""
    return raw[0] in "(（" and bool(_LABELLED_HEAD.match(raw))


def _candidates(text: str, body_end: int, ctx: _LabelContext) -> Iterator[tuple[int, int, str]]:
    """(start, end, text) of the body's marker matches in order: `MARKER_RE`'s, and where the cut
    references list labels its entries with a word ("Source 1: …"), the source notes in
    parentheses that name them (with what wraps one, `_wrapped`)."""
    found = ((m.start(), m.end(), m.group(0)) for m in MARKER_RE.finditer(text, 0, body_end))
    labelled = ctx.labelled()
    if not labelled:
        yield from found
        return
    notes = (_wrapped(text, m.start(), m.end()) for m in _SOURCE_NOTE.finditer(text, 0, body_end)
             if _cites(m, labelled))
    last_end = -1
    for s, e, raw in heapq.merge(found, notes, key=lambda c: c[0]):   # on a tie, MARKER_RE's first
        if s >= last_end:
            last_end = e
            yield s, e, raw


def _wrapped(text: str, s: int, e: int) -> tuple[int, int, str]:
    """A source note at [s, e) with what wraps it as it wraps a marker: "<sup>…</sup>", or a
    parenthesis with a cue word ("(see (Source 2))" is one marker, as "(see [2])" is)."""
    if text.startswith("<sup>", s - 5) and text.startswith("</sup>", e):
        s, e = s - 5, e + 6
    else:
        cue = _CUE_OPEN.search(text, max(0, s - 24), s)
        close = _CLOSE.match(text, e)
        if cue and close:
            s, e = cue.start(), close.end()
    return s, e, text[s:e]


_CUE_OPEN = re.compile(rf"[(（][ \t]*+{_CUE}\Z")
_CUE_AT = re.compile(rf"[(（][ \t]*+{_CUE}")
_CLOSE = re.compile(r"[ \t]*+[)）]")


def find_existing_markers(text: str, layout: Layout, sentences: list[Sentence]) -> list[ExistingMarker]:
    """Citation markers in the body (outside code), each attached to its sentence if any."""
    body_end = layout.body_end
    prot = layout.protected
    prot_starts = [s for s, _ in prot]
    starts = [s.start for s in sentences]
    jiuwen_ids: dict[str, int] = {}   # synthetic (negative) numbers: number-less markers, links
    body_notes, ref_notes = _footnote_definitions(text, layout)
    ref_notes_said = _notes_in_references(text, layout) if ref_notes else set()
    link_defs = link_definitions(text, layout)
    inner: dict[int, tuple[list[tuple[int, int]], list[int]]] = {}
    out: list[ExistingMarker] = []
    attach_end: dict[int, int] = {}    # sentence id -> end of the last marker attached after it
    ctx = _LabelContext(text, layout)
    leads: dict[int, int] = {}         # line start -> end of the markers that open the line
    prev_end = -1                      # where the previous match ended: "[1][2]" is a run
    index_end = -1                     # where the last index read as no marker ended ("list[0]")
    for s, e, raw in _candidates(text, body_end, ctx):
        glued, prev_end = s > 0 and text[s - 1] == "]" and s != prev_end, e
        raw = _without_emphasis(raw)   # "**[1]**" is read as "[1]" is (its span keeps the "**")
        if not _outside_code(text, layout, prot_starts, s, e, inner):
            continue
        if glued and raw[0] == "(" and _LABELLED_HEAD.match(raw):
            continue                   # "[1](ref. 4)": text; removed, it would make "[1]" a marker next time
            # ("[PDF]([1], [3])" is the author's citation, as before)
        if text.startswith(":", e) and _opens_line(text, s) and not _CONTENT_REFERENCE.match(text, e):
            continue                   # "[1]: url" (also in a quote or list item) defines a link / footnote
        if _would_define(text, s, e, leads, body_notes):
            continue                   # "[1][^2]: x", "[1][2]: x": without them the line would define
        jm = _JIUWEN.search(raw)
        urls: tuple[str, ...] = ()
        ids: tuple[str, ...] = ()
        numbers: tuple[int, ...]
        linked = inline = False
        named: tuple[str, ...] = ()    # ids named by chat markers beside a number ("(see [1], [web:2])")
        chat = _chat_parts(raw)        # "<sup>[web:1]</sup>", "(citeturn0search3)": what they wrap
        agent = _agent_reference(raw) if chat is None else _agent_references(chat)
        if _CITES_NOTHING.fullmatch(raw) or (
                chat is not None and all(_CITES_NOTHING.fullmatch(p) for p in chat)):
            sid = _sentence_of(text, sentences, starts, s, e, attach_end)
            if sid is not None:        # "….[span_1](end_span)[cite: 2]": what follows is the sentence's too
                attach_end[sid] = e
            out.append(ExistingMarker(s, e, (), (), sid, opener=True))
            continue
        if agent is not None and _CHAT_TAG.fullmatch(raw) and raw[1:-1].casefold() in link_defs:
            # "[web:1]" with "[web:1]: https://…" in the body is the author's shortcut link, as "[1]" is
            urls, linked = (link_defs[raw[1:-1].casefold()],), True
            numbers = (jiuwen_ids.setdefault("link:" + raw[1:-1].casefold(), -(len(jiuwen_ids) + 1)),)
        elif (keys := _pandoc_keys(raw)) is not None:
            # "[@smith2020; @lee2021]": each key names a record by its id, as a chat's ids do
            ids = keys
            numbers = tuple(jiuwen_ids.setdefault("id:" + i, -(len(jiuwen_ids) + 1)) for i in ids)
        elif agent is not None:
            numbers, ids = agent
            if ids:
                numbers = tuple(jiuwen_ids.setdefault("id:" + i, -(len(jiuwen_ids) + 1)) for i in ids)
        elif (oai := [raw] if raw.startswith("[oai_citation") else [
                p for p in chat or () if p.startswith("[oai_citation")]) and len(oai) == len(chat or oai):
            # "[oai_citation:1‡Reuters](https://…)" cites its URL (its number is the chat's own); so
            # does each of several in one parenthesis, as an inline link citation's links do
            urls = tuple(_URL_IN.search(p[p.rindex("]("):]).group(1) for p in oai)   # type: ignore[union-attr]
            numbers = tuple(jiuwen_ids.setdefault("url:" + u, -(len(jiuwen_ids) + 1)) for u in urls)
        elif chat is not None:         # chat apps' markers of mixed kinds: each names itself
            ids = tuple(dict.fromkeys(p for p in chat if not _CITES_NOTHING.fullmatch(p)))
            numbers = tuple(jiuwen_ids.setdefault("id:" + i, -(len(jiuwen_ids) + 1)) for i in ids)
        elif raw.startswith("[^") and not _BING_MARKER.fullmatch(raw):   # (Bing's: a number)
            label = raw[2:-1]
            if label in body_notes or label in ref_notes_said:
                continue               # a working footnote whose note is in the body, not a citation
                # (or in the cut list, where it is a note, not a source: it comes back after the new list)
            urls = tuple(ref_notes.get(label, ()))
            numbers = (int(label),) if label.isdigit() else (
                jiuwen_ids.setdefault("^" + label, -(len(jiuwen_ids) + 1)),
            )
        elif raw[0] in "(（" and _LINK_GROUP_RE.fullmatch(raw):
            # "([Reuters](https://…))": each link cites its url, and only that url (a link to no
            # record stays as the author wrote it: see the pipeline); only where a citation
            # stands, ending a clause or after a sentence ("The tower ([site](…)) is tall": an aside)
            found = _LINK_URL.findall(raw)
            urls = tuple(u or link_defs.get(n, "") for u, n in found)
            listed = tuple(int(n) for u, n in found if n and n not in link_defs)
            if listed:                 # "([Wikipedia][1])": entry 1 of the cut list, wherever it
                if len(listed) < len(found):   # stands, as "[1]" is
                    continue           # ... beside a link of another kind: left as written
                numbers, urls = listed, ()
            else:
                k = bisect.bisect_right(starts, s) - 1
                if not _LINK_END.match(text, e) and (k >= 0 and s < sentences[k].end or k < 0):
                    continue           # inside its sentence ("In the U.S. ([Census](…)) the …")
                if _NARRATIVE_BEFORE.search(text, max(0, s - 24), s) \
                        or _NARRATIVE_AFTER.match(text, e, min(len(text), e + 20)):
                    continue           # "According to ([Reuters](…)), …": a word of its sentence, as written
                numbers = tuple(jiuwen_ids.setdefault("url:" + u, -(len(jiuwen_ids) + 1)) for u in urls)
                linked = inline = True
        elif jm:
            url = (jm.group(2) or "").strip()
            key = url or jm.group(1)
            # openJiuwen markers carry no number: each distinct source gets a synthetic negative one
            numbers = (jiuwen_ids.setdefault(key, -(len(jiuwen_ids) + 1)),)
            urls = (url,) if url else ()
        else:
            # "<sup>[1] citeturn3search2</sup>": the number of "[1]" (and of a "【3†source】" beside it),
            # not the digits of a chat's id nor a URL of its marker
            clean, listed, named = _without_chat_parts(raw) if chat is None else (raw, (), ())
            numbers = tuple(dict.fromkeys((*_numbers(clean), *listed)))
            if not numbers:
                continue
            if raw.startswith("<sup>") and "[" not in raw:
                # "mc<sup>2</sup>" is an exponent: a bare superscript number cites only what the
                # references section lists
                if not set(numbers) <= ctx.entries() or set(numbers) & ctx.notes():
                    continue           # ... and not one whose note the body writes out
                if (power := _POWER.fullmatch(raw)) is not None and (
                        text.endswith("10", max(0, s - 3), s) and not text[s - 3:s - 2].isdigit()
                        or power.group(1) in ("2", "3") and _UNIT_BEFORE.search(text, max(0, s - 8), s)):
                    continue           # "10<sup>6</sup>", "72,735 m<sup>2</sup>", "mc<sup>2</sup>": a
                    # power, whatever a list numbers (the new list would make a second trace read it)
            bare = _unwrapped(clean)
            urls = tuple(u for u in (_HREF.findall(bare) if "<a" in bare else _URL_IN.findall(bare))
                         if u and u != "@ref")   # Yuanbao's "[3](@ref)" links nowhere: its number cites
            if urls and len(numbers) == 1 and not urls[0].startswith("#"):
                # "[[1]](https://byd…)" cites its URL: a number of its own, so that a "[1]" of
                # another section (or the list) that means another source is not taken for it
                numbers = (jiuwen_ids.setdefault("url:" + urls[0], -(len(jiuwen_ids) + 1)),)
            labels = {link_label(x) for x in _BRACKET_LABEL.findall(bare)} \
                if _BRACKETS_ONLY.fullmatch(bare) else set()
            if len(labels) > 1 and labels & set(link_defs):
                continue               # "([1], [2])" with "[2]: url" in the body: the author's links
            label = next(iter(labels)) if labels else ""
            if label in link_defs:
                # "[1]" with "[1]: url" in the body is a shortcut reference link: it cites that url,
                # under a synthetic number of its own, so it never shares one with a "[citation:1]"
                urls, linked = (link_defs[label],), True
                numbers = (jiuwen_ids.setdefault("link:" + label, -(len(jiuwen_ids) + 1)),)
            elif not _plausible(text, s, e, numbers, raw):
                continue
            elif raw[0] == "[" and _opens_with_digit(raw) and (s == index_end or (
                    0 in numbers and s > 0 and text[s - 1].isascii()
                    and (text[s - 1].isalpha() or text[s - 1] == "_") and 0 not in ctx.entries())
                    or _indexes(text, s, e)):
                index_end = e          # "list[0]", "M[0][1]": an index (after a digit, a bracket or
                continue               # a space it cites, 0-based, and a list numbered from 0 lists it)
            elif (_numbered(raw) or _labelled_paren(raw)) and _is_entry_label(text, s, e):
                continue               # "[1] Title https://…" opening a line labels a list entry
            elif raw[0] in "(（" and (0 in numbers or (
                    _TWO_NUMBERS.search(raw) and ctx.entries() and max(numbers) > max(ctx.entries()) + 2)):
                continue               # "(from [0, 1])", "(from [1, 10])" past the list's end: figures
            elif (_numbered(raw) or _labelled_paren(raw)) and _is_label(text, s, e, raw, numbers, ctx):
                continue               # "## [1] Introduction", "【1】市场规模：…", "a scale of [1, 5]"
        if named and not urls and not linked:
            # "(see [1], [web:2])": the ids its chat markers name come first, each a number of its own
            ids = named
            numbers = (*(jiuwen_ids.setdefault("id:" + i, -(len(jiuwen_ids) + 1)) for i in ids), *numbers)
        sid = _sentence_of(text, sentences, starts, s, e, attach_end)
        if sid is not None:
            attach_end[sid] = e
        if s > 0 and text[s - 1] in "(（" and raw[0] == "[":
            sep = _AFTER_OPENING.match(text, e, body_end)
            if sep is not None:
                e = sep.end()          # "([1]; Smith 2020)": the separator goes with it, no "(; "
        out.append(ExistingMarker(s, e, numbers, urls, sid, linked, ids, inline_link=inline))
    return _narrative_runs(text, _footnotes_apart(text, out, jiuwen_ids), sentences)


def _footnotes_apart(text: str, markers: list[ExistingMarker],
                     synthetic: dict[str, int]) -> list[ExistingMarker]:
    """A footnote "[^1]" whose definition gives a URL, in a report whose other markers use 1 too
    ("【1】" for another entry of the same list): the footnote's own number, so each resolves by
    what it names."""
    noted = {n for m in markers if text.startswith("[^", m.start) and m.urls for n in m.numbers}
    if not noted:
        return markers
    shared = noted & {n for m in markers if not text.startswith("[^", m.start) for n in m.numbers}
    if not shared:
        return markers
    out: list[ExistingMarker] = []
    for m in markers:
        if text.startswith("[^", m.start) and m.urls and set(m.numbers) & shared:
            label = "^" + text[m.start + 2:m.end - 1]
            m = replace(m, numbers=(synthetic.setdefault(label, -(len(synthetic) + 1)),))
        out.append(m)
    return out


# superscript numbers after a sign, a Chinese character or punctuation: "35.5%²", "771.9万辆¹", "^2^"
# "35.5%²", "^2^", and a circled number ending a clause ("增长29.02%①。", not "：①打开设置")
# (after a word of four letters or more too, a blank between or not: "hectares²", "long ^1^"; not
# a unit's power, "m²", "km²", "ft³")
_SUPERSCRIPT_NOTE = re.compile(
    r"(?:(?<=[%％\u4e00-\u9fff。，、；：！？.,;:!?”’」』])|(?<=[^\W\d_]{4})|(?<=[^\W\d_]{4} ))"
    r"(?:\^(\d{1,3})\^|([¹²³⁴⁵⁶⁷⁸⁹⁰]{1,3}))"
    r"|(?<=[%％\u4e00-\u9fff”’」』)）])([①-⑳])(?=[。，、；：！？.,;:!?\s]|\Z)")
_SUPERSCRIPT_DIGITS = str.maketrans("¹²³⁴⁵⁶⁷⁸⁹⁰", "1234567890")


def superscript_notes(text: str, body_end: int, removed_references: str) -> list[str]:
    """Superscript numbers in the body that the removed references list numbers ("35.5%²" with a
    "2." entry): likely the author's old citations. They are not read as markers (a trace's own
    list would make a second trace read "很常见¹" as its [1]), so the caller warns about them."""
    if not removed_references:
        return []
    entries = set(parse_reference_entries(removed_references))
    found: list[str] = []
    for m in _SUPERSCRIPT_NOTE.finditer(text, 0, body_end):
        n = int(m.group(1) or (m.group(2) or "").translate(_SUPERSCRIPT_DIGITS) or ord(m.group(3)) - 0x245F)
        if n in entries and m.group(0) not in found:
            found.append(m.group(0))
            if len(found) >= 8:
                return found
    for m in _DIGIT_NOTE_WARN.finditer(text, 0, body_end):   # "vehicles.1 In …", copied as digits
        word = _WORD_BEFORE_NOTE.search(text, max(0, m.start() - 24), m.start())
        shown = (word.group(0) if word else "") + m.group(0)
        if int(m.group(0)) in entries and shown not in found and note_after(text, m.start() - 1):
            found.append(shown)
            if len(found) >= 8:
                break
    return found[:8]


_IN_HTML = re.compile(rf"{_PLAIN}|【{_NUM_LIST}】|<sup>[ \t]*{_NUM_LIST}[ \t]*</sup>")
_NOT_HTML_PROSE = ("<!--", "<pre", "<code", "<script", "<style", "<math", "<svg", "<textarea")


def html_notes(text: str, layout: Layout, removed_references: str) -> list[str]:
    """Old markers inside HTML blocks ('<div class="note">… [3].</div>') whose numbers the removed
    references list numbers: HTML is not traced, so they stay as written, numbering the old list,
    and the caller warns about them."""
    if not removed_references:
        return []
    entries: set[int] | None = None
    found: list[str] = []
    for a, b in layout.protected:
        if a >= layout.body_end:
            break
        head = text[a:a + 12].lstrip(" ").lower()
        if not head.startswith("<") or head.startswith(_NOT_HTML_PROSE) or not (
                b >= len(text) or text[b - 1] == "\n"):
            continue                   # code, a comment, or an inline element
        for m in _IN_HTML.finditer(text, a, min(b, layout.body_end)):
            if entries is None:
                entries = set(parse_reference_entries(removed_references))
            if set(_numbers(m.group(0))) & entries and m.group(0) not in found:
                found.append(m.group(0))
                if len(found) >= 8:
                    return found
    return found


_DIGIT_NOTE_WARN = re.compile(DIGIT_NOTE.pattern + r"(?=[ \t]+[A-Z\u4e00-\u9fff]|[ \t]*(?:\r?\n|\Z))")
_WORD_BEFORE_NOTE = re.compile(r"[^\s\[\]()<>]{1,20}[.!?]\Z")


# a number in parentheses ending a clause, right after a word, a figure or a Chinese character:
# "… in 2021 (1).", "…组成（1）。", "(1, 2)" — the form of a references list numbered "(1) …"
_PAREN_NOTE = re.compile(r"(?<=[\w%％)）\u4e00-\u9fff])[ \t]?[(（]\d{1,3}(?:[ \t]*[,，、][ \t]*\d{1,3})*[)）]"
                         r"(?=[ \t]*(?:[.。,，;；:：!?！？]|\r?$))", re.MULTILINE)


def paren_notes(text: str, body_end: int, removed_references: str) -> list[str]:
    """Numbers in parentheses ending a clause ("… in 2021 (1).") that the removed references list
    numbers in parentheses ("(1) Title. https://…"): likely the author's old citations. They are
    not read as markers ("(1)" also enumerates, and words of a sentence stay), so the caller
    warns about them, as about `superscript_notes`."""
    if not removed_references:
        return []
    numbered = {int(m.group(4)) for line in removed_references.splitlines()
                if (m := _REF_LINE.match(line)) and m.group(4)}
    if not numbered:
        return []
    found: list[str] = []
    for m in _PAREN_NOTE.finditer(text, 0, body_end):
        raw = m.group(0).strip()
        if all(int(n) in numbered for n in re.findall(r"\d+", raw)) and raw not in found:
            found.append(raw)
    return found[:8]


# an author-year (APA, Harvard) references entry: "Avgerinos, K. I., Spyrou, N., … (2018). Title…",
# "- Smith, J. and Lee, K. 2020. Title…": its first author's surname, and its year
_AUTHOR_YEAR_ENTRY = re.compile(
    r"^[ \t]*+(?:[-*+•][ \t]++|\d{1,4}[.)][ \t]++)?(?:\*\*|__)?"
    r"(?P<name>(?:(?:van|von|de|del|der|da|di|le|la)[ \t]++)?[A-Z][\w'’-]{1,40}),[ \t]++[^\n]{0,400}?"
    r"[(\s](?P<year>(?:1[89]|20)\d\d)[a-z]?(?:[),.]|\Z)")
# ... and what cites one in the body: "(Avgerinos et al., 2018)", "(Smith & Lee, 2020; Kim, 2019a)",
# "(see Smith and Lee 2020)", and the narrative "Avgerinos et al. (2018)"
_AUTHOR_YEAR_ITEM = (r"(?:(?:see|e\.g\.,?|cf\.)[ \t]+)?(?P<n>(?:(?:van|von|de|del|der|da|di|le|la)[ \t]+)?"
                     r"[A-Z][\w'’-]{1,40})(?:[ \t]+et[ \t]+al\.?|[ \t]+(?:and|&)[ \t]+[A-Z][\w'’-]{1,40})?"
                     r",?[ \t]+(?P<y>(?:1[89]|20)\d\d)[a-z]?")
_AUTHOR_YEAR_ONE = re.compile(_AUTHOR_YEAR_ITEM)
_AUTHOR_YEAR_PAREN = re.compile(r"[(（]([^()（）\n]{4,300})[)）]")
_AUTHOR_YEAR_NARRATIVE = re.compile(
    r"\b((?:[A-Z][\w'’-]{1,40})(?:[ \t]+et[ \t]+al\.?|[ \t]+(?:and|&)[ \t]+[A-Z][\w'’-]{1,40})?)"
    r"[ \t]+\((?:1[89]|20)\d\d[a-z]?\)")


def author_year_notes(text: str, body_end: int, removed_references: str) -> list[str]:
    """Author-year citations in the body ("(Avgerinos et al., 2018)", "Smith and Lee (2020)")
    whose first author and year head an entry of the removed references list ("Avgerinos, K. I.,
    … (2018). …"): the author's old citations, which are not read as markers (an author and a
    year name no record by themselves), so the caller warns that they stay as written and that
    their entries survive only in the removed list."""
    if not removed_references:
        return []
    keys = {(m.group("name").casefold(), m.group("year")) for line in removed_references.splitlines()
            if (m := _AUTHOR_YEAR_ENTRY.match(line))}
    if not keys:
        return []
    found: list[tuple[int, str]] = []
    for m in _AUTHOR_YEAR_PAREN.finditer(text, 0, body_end):
        items = [i.strip() for i in re.split(r"[;；]", m.group(1))]
        hits = [h for i in items if (h := _AUTHOR_YEAR_ONE.fullmatch(i)) is not None]
        if hits and len(hits) == len(items) and any((h.group("n").casefold(), h.group("y")) in keys
                                                      for h in hits):
            found.append((m.start(), m.group(0)))
    for m in _AUTHOR_YEAR_NARRATIVE.finditer(text, 0, body_end):
        name = m.group(1).split()[0].casefold()
        if (name, re.sub(r"\D", "", m.group(0)[-7:])[:4]) in keys:
            found.append((m.start(), m.group(0)))
    out: list[str] = []
    for _at, raw in sorted(found):
        if raw not in out:
            out.append(raw)
    return out[:8]


# a marker used as a word of its sentence: "如[2]所述", "据文献[1]报道", "根据[3]的统计", "as shown in [2]",
# "see [1] for details", "[4] found that …": removed, it would leave "如所述" or "as shown in ."
# (whole words only: "很常见[1]", "缺乏依据[1]", "invested the most in [1]" end a sentence with a citation)
# what may stand between a citing word and a run's first marker once an earlier member of the run
# was removed ("According to  and [1]", "由、[1]可知"), and between the markers of one run
# (up to three separators: "[1] and , [2]" is what "[1] and [3], [2]" leaves once [3] is removed)
_RUN_SEP = r"(?:(?:[,，、;；]|and|or|&|和|及|与|或)[ \t]*){0,3}"
# ...and between a run and the verb it is the subject of: only what a removed member leaves ("[1]
# and  found", "[1],  found", "[1]和指出", "[1]、指出"), never a clause's comma or a conjunction
# ("…35.5%[1]，表明…", "2023 [1], estimated at…", "[1] and found that": a citation, then more)
# ("[1] and 指出" too: "and" before a Chinese verb is a removed member's, with one space)
# (after up to two more separators, what removing several later members leaves: "[1] and ,  found"
# is "[1] and [2], [3] found" without [2] and [3])
_LEFT_SEPS = r"(?:(?:[,，、;；]|and|or|&|和|及|与|或)[ \t]*){0,2}"
_AFTER_SEP = (_LEFT_SEPS + r"(?:(?:、|和|及|与|或)[ \t]*|,[ \t]{2,}"
              r"|(?:,[ \t]*)?(?:and|or|&)(?:[ \t]{2,}|[ \t]+(?=[\u4e00-\u9fff])))")
_AFTER_SEP = f"(?:{_AFTER_SEP})?"
_NARRATIVE_BEFORE = re.compile(
    r"(?:(?:^|(?<=[\s，。；：、（(“「\]】>)]))(?:正如|诚如|如|据|根据|依据|见|由)|参见|详见|参阅|参照|文献|引自|来自)"
    r"[ \t]*" + _RUN_SEP + r"\Z"
    r"|\b(?:(?:as )?(?:shown|reported|described|noted|discussed|defined|proposed|found|stated|given|cited)"
    r" (?:in|by)|as in|according to|based on|per|citing|see(?: also)?|cf\.|refer to|reference|ref\.|in|by"
    r"|from|following|unlike|like)[ \t]+" + _RUN_SEP + r"\Z",
    re.IGNORECASE)
# a pointer's word before a marker that ends its sentence ("详见[2]。", "For details, see [2].")
_POINTER_BEFORE = re.compile(
    r"(?:\b(?:see(?: also)?|cf\.|refer to)[ \t]+|(?:详见|参见|参阅)[ \t]*)" + _RUN_SEP + r"\Z",
    re.IGNORECASE)
#: a source's work named after its marker ("[2]的数据显示", "根据[1]的统计"): the marker is a word of
#: its sentence (here and in `tracer.verify`'s frames)
ZH_SOURCE_WORK = r"的(?:研究|报告|数据|统计|观点|结论|分析|调查)"
_NARRATIVE_AFTER = re.compile(
    r"[ \t]*" + _AFTER_SEP
    + r"(?:所述|所示|所言|所说|所指|中提到|中指出|报道|指出|显示|表明|认为|提出|发现|统计"
    r"|" + ZH_SOURCE_WORK +
    r"|(?:shows?|showed|found|finds|reports?|reported|notes?|noted|argues?|argued|suggests?|suggested"
    r"|states?|stated|describes?|described|estimates?|estimated|claims?|claimed)\b)", re.IGNORECASE)
# a run that opens its sentence as its subject ("[4] found that …", "。[2]指出，…"): only verbs
# that cannot open a sentence themselves ("Estimates vary", "统计显示", "表明…" can, after a cited one)
# (at a sentence's start a comma may stand between: "。[2]，指出" is what "。[4]，[2]指出" leaves
# when [2] is removed)
# A verb that can open a sentence ("表明…", "统计显示") is a subject's too after what a removed member
# leaves ("。[1]和认为，…", "。[1]、显示"): nothing else opens a sentence with "和" or "、" before it.
_REMNANT_SEP = (_LEFT_SEPS + r"(?:[，,、；;][ \t]*|(?:和|及|与|或)[ \t]*"
                r"|(?:and|or|&)(?:[ \t]{2,}|[ \t]+(?=[\u4e00-\u9fff])))")
_SUBJECT_SEP = _REMNANT_SEP + "?"
_ZH_REPORTING = r"(?:报道|显示|表明|认为|提出|发现|统计)"   # what a source does after a separator
SUBJECT_VERB = re.compile(
    r"[ \t]*(?:" + _SUBJECT_SEP + r"(?:所述|所示|所言|所说|中提到|中指出|指出"
    r"|" + ZH_SOURCE_WORK +
    r"|(?:shows?|showed|found|finds|reports?|reported|notes?|noted|argues?|argued|suggests?|suggested"
    r"|states?|stated|describes?|described|estimates?|estimated|claims?|claimed)\b)"
    r"|" + _REMNANT_SEP + _ZH_REPORTING + ")")
# ... and right after a marker opening a line, with its comma ("[2]显示，…"): the source is the
# line's subject, no label of it
_REPORTS = re.compile(r"[ \t]*(?:" + _ZH_REPORTING + r"|指出)[，,：:]")
_WORD_AFTER = re.compile(r"[^\W_]")
_RUN_GAP = re.compile(r"[ \t]*" + _RUN_SEP + r"\Z", re.IGNORECASE)
_GAP = re.compile(r"[ \t]*" + _SUBJECT_SEP, re.IGNORECASE)
_SENTENCE_CLOSERS = frozenset(".!?。！？")


# The words of a sentence that only points to a source ("See [2] for details.", "详见[2]。"),
# as content tokens (stemmed): nothing in it is a claim for the source to support.
_POINTER_WORDS = frozenset({
    "see", "refer", "cf", "detail", "inform", "more", "further", "also", "full", "method", "methodolog",
    "discuss", "overview", "background", "explan", "sourc", "here",
    "详见", "参见", "参阅", "参考", "详情", "更多", "信息", "完整", "具体", "内容", "方法", "说明", "资料",
})


def is_pointer(sentence: Sentence) -> bool:
    """Whether the sentence only points to a source and states nothing itself: its words, once
    markers are stripped, are all pointing words, and it gives no figure."""
    text = strip_markers(sentence.text)
    words = content_tokens(text)
    return bool(words) and set(words) <= _POINTER_WORDS and not numbers(text)


def is_narrative(text: str, start: int, end: int, sentence_end: int, pointer: bool = False) -> bool:
    """Whether the old marker (or run of markers) at [start, end) is a word of its sentence ("如[2]
    所述", "as shown in [2], …", "In [1], Smith …", "[4] found that"), which removing would leave
    broken: a citing word next to it, and more of the sentence's words after it before
    `sentence_end` (a marker that ends its sentence, "…综述文献[1]。", "…the most in [1].", cites
    it, and is where a trace puts its own), but for the marker of a `pointer` sentence ("详见[2]。",
    "See also [2].")."""
    if text[start:start + 1] in "(（" and not _LABELLED_HEAD.match(text, start):
        return False           # "(see [1])" wraps a citation; "According to (Source 2), …" is a word
    before = text[max(0, start - 24):start]
    if not _WORD_AFTER.search(text, end, max(end, sentence_end)):
        # ending its sentence, a marker is a word only of a sentence that just points to it
        # ("详见[2]。"); in "X，详见[1]。" it is X's citation, where a new one goes
        return pointer and bool(_POINTER_BEFORE.search(before))
    return bool(_NARRATIVE_BEFORE.search(before)
                or _NARRATIVE_AFTER.match(text, end, min(len(text), end + 20)))


def _narrative_runs(text: str, markers: list[ExistingMarker],
                    sentences: list[Sentence]) -> list[ExistingMarker]:
    """Mark the markers that are words of their sentence (`ExistingMarker.narrative`), run by run:
    "如[1][2]所述" and "as shown in [2], [5], and [6], …" are read as one word. A run that opens a
    sentence as its subject ("[4] found that …", "…上涨。[2]指出，…") belongs to that sentence."""
    prose = [s for s in sentences if not s.in_table]
    ends = {s.id: s.end for s in prose}
    by_id = {s.id: s for s in prose}
    opening = {s.start: s for s in prose}
    out = list(markers)
    i = 0
    while i < len(out):
        j = i
        sid = out[i].sentence
        # a run opening a sentence ("[4], [5] found that …", "…in 2023. [1]、[5] found that"): its
        # first markers precede every sentence (None) or trail the one before, and the next ones
        # open the sentence, so the run is that sentence's
        # (across sentences, joined by a separator right after a marker, not by spaces: "2023.[1]
        # [2] found" and "2023.[1] 、[2] found" are the first sentence's citation after its period,
        # then the second's subject, one of whose members was removed)
        while (j + 1 < len(out) and out[j + 1].start >= out[j].end and out[j + 1].start - out[j].end <= 16
               and _RUN_GAP.match(text[out[j].end:out[j + 1].start])
               and (out[j + 1].sentence == sid or sid is None
                    or (ends.get(sid, 0) <= out[i].start and text[out[j].end:out[j].end + 1].strip()))):
            j += 1
            sid = out[j].sentence
        first = out[i].sentence
        closer = text[out[i].start - 1:out[i].start]
        if first is not None and ends.get(first, 0) <= out[i].start and closer in _SENTENCE_CLOSERS:
            # markers glued to a sentence's period are that sentence's citations (placement=after):
            # "…in 2023.[1] 、 found", "…35.5%。[1][2]指出": never the next sentence's subject,
            # but for the last of them after a Chinese period ("。[2]指出" opens with its subject)
            while i < j and out[i].end == out[i + 1].start:
                i += 1
            if closer in ".!?":
                i += 1
            if i > j:
                continue
        first = out[i].sentence
        if first is not None and ends.get(first, 0) <= out[i].start:
            # the run starts after its sentence ended: a citation after that sentence's period
            # comes first ("2023.[1] [2]、[3] found"), and stays that sentence's; the rest of the
            # run follows the last gap of spaces alone
            i = max((x for x in range(i + 1, j + 1) if not text[out[x - 1].end:out[x].start].strip()),
                    default=i)
        # "…。（[Title](https://…)）、[4]指出": a parenthesis is no word; what follows it may be (and
        # "…。（[Title](https://…)），指出" has no subject: the parenthesis cites the sentence before)
        while i <= j and text[out[i].start:out[i].start + 1] in "(（" \
                and not _LABELLED_HEAD.match(text, out[i].start):
            i += 1
        run = out[i:j + 1]
        if run and not any(m.opener for m in run):
            end = run[-1].end
            gap = _GAP.match(text, end)   # spaces, and a separator a removed member left ("[1] and  found")
            subject_of = next((opening[q] for q in range(end, gap.end() + 1 if gap else end + 1)
                               if q in opening), None)
            if subject_of is not None and SUBJECT_VERB.match(text, end, min(len(text), end + 20)) \
                    and all(m.sentence is None or ends.get(m.sentence, 0) <= run[0].start for m in run):
                out[i:j + 1] = [replace(m, sentence=subject_of.id, narrative=True) for m in run]
            elif sid in ends and is_narrative(
                    text, run[0].start, end, ends[sid],
                    # read only for a run that ends its sentence: is that sentence a pointer?
                    not _WORD_AFTER.search(text, end, max(end, ends[sid])) and is_pointer(by_id[sid])):
                out[i:j + 1] = [replace(m, sentence=sid, narrative=True) for m in run]
        i = j + 1
    return out


_AFTER_OPENING = re.compile(r"[ \t]*[;；,，][ \t]*(?=[^\s\[【)）])")


_AGENT_NUMBER = re.compile(r"(\d{1,4})(?::\d{1,4})?")
_TURN_ID = re.compile(r"turn\d{1,3}[a-z]{2,12}\d{1,4}")
_CHAT_TAG = re.compile(_CHAT_TAG_FORM)
_CARD_IDS = re.compile(r'"cardIds"\s*:\s*\[([^\[\]]*)\]')
_CARD_ID = re.compile(r'"([\w-]{1,40})"')
_DATA_ID = re.compile(r'\bdata-id\s*=\s*["\']?([\w-]{1,40})')


# the markers that cite nothing (the span openers and closers of Gemini and ChatGPT; "^[" only
# opening a sentence); a chat app's markers as "<sup>" or a parenthesis may hold them
_SPAN_MARK = rf"\[cite_start\]|{_SPAN}|\]?{ATTRIBUTION_TAIL}"
_CITES_NOTHING = re.compile(rf"{_SPAN_MARK}|\^\[")
_CHAT_PART = re.compile(rf"{_CHAT_ONE}|{_SPAN_MARK}")
_CHAT_PART_SEPARATORS = re.compile(r"[ \t,，、;；]*")
_LEADING_CUE = re.compile(rf"[ \t]*+{_CUE}")
_CONTENT_REFERENCE = re.compile(r":{0,2}contentReference\[")


def _without_chat_parts(raw: str) -> tuple[str, tuple[int, ...], tuple[str, ...]]:
    """`raw` with the chat apps' markers in it blanked, the numbers those of them cite
    ("【3†source】") and the ids they name ("[web:2]"); `raw` itself when it holds none."""
    if not _CHAT_PART.search(raw):
        return raw, (), ()
    refs = [ref for m in _CHAT_PART.finditer(raw) if (ref := _agent_reference(m.group(0))) is not None]
    return (_CHAT_PART.sub(" ", raw), tuple(n for ref in refs for n in ref[0]),
            tuple(dict.fromkeys(i for ref in refs for i in ref[1])))


def _chat_parts(raw: str) -> list[str] | None:
    """The chat apps' markers a "<sup>…</sup>" or a parenthesis wraps ("<sup>[web:1][web:2]</sup>",
    "(see citeturn0search3)"), when it wraps nothing else; None otherwise."""
    if raw.startswith("<sup>") and raw.endswith("</sup>"):
        body = raw[5:-6]
    elif raw[:1] in "(（" and raw[-1:] in ")）":
        body = raw[1:-1]
        cue = _LEADING_CUE.match(body)
        body = body[cue.end():] if cue else body
    else:
        return None
    parts = [m.group(0) for m in _CHAT_PART.finditer(body)]
    if not parts or not _CHAT_PART_SEPARATORS.fullmatch(_CHAT_PART.sub("", body)):
        return None
    return parts


def _agent_references(parts: list[str]) -> tuple[tuple[int, ...], tuple[str, ...]] | None:
    """`_agent_reference` of several markers written as one ("<sup>[web:1][web:2]</sup>"): their
    ids, or their numbers, in order; None when they mix the two or are none of its forms (an
    "[oai_citation…](url)" cites its URL instead)."""
    found = [_agent_reference(p) for p in parts if not _CITES_NOTHING.fullmatch(p)]
    if not found or any(f is None for f in found):
        return None
    numbers = tuple(dict.fromkeys(n for f in found if f is not None for n in f[0]))
    ids = tuple(dict.fromkeys(i for f in found if f is not None for i in f[1]))
    return None if numbers and ids else (numbers, ids)


def _agent_reference(raw: str) -> tuple[tuple[int, ...], tuple[str, ...]] | None:
    """(numbers, record ids) of a writer agent's marker: "【4†source】" or "[4†source]" cites [4]
    (what precedes "†", a ":0" part index dropped), "【turn0search3†L5】", "【turn0search3】" and
    "\ue200cite\ue202turn0search3\ue202turn0news1\ue201" name record ids, "[^1^]" cites [1];
    what chat apps leave in a copied answer names an id of theirs: "citeturn0search3" its turn id,
    ":contentReference[oaicite:0]{index=0}" "oaicite:0", "[web:1]" "web:1", a Grok card its card
    ids; None for every other form."""
    if raw.startswith("【") or (raw.startswith("[") and "†" in raw and not raw.startswith("[oai_citation")):
        head = raw[1:-1].split("†", 1)[0].strip()
        m = _AGENT_NUMBER.fullmatch(head)
        if "†" not in raw and not head.startswith("turn"):
            return None
        return ((int(m.group(1)),), ()) if m else ((), (head,))
    if raw.startswith("\ue200"):
        return (), tuple(dict.fromkeys(x.strip() for x in raw[1:-1].split("\ue202")[1:] if x.strip()))
    if raw.startswith(("cite", "filecite")):        # "citeturn0search3turn1news0": the same, copied
        return (), tuple(dict.fromkeys(_TURN_ID.findall(raw)))
    if raw.startswith(":") or raw.startswith("contentReference"):   # ":contentReference[oaicite:0]{index=0}"
        return (), (raw[raw.index("[") + 1:raw.index("]")],)
    if _CHAT_TAG.fullmatch(raw):                    # Perplexity's "[web:1]": the tag is its id
        return (), (raw[1:-1],)
    if raw.startswith("[](grok_render"):            # Grok's cards: their ids
        listed = _CARD_IDS.search(raw)
        return (), tuple(dict.fromkeys(_CARD_ID.findall(listed.group(1)) if listed else ())) or (raw[3:-1],)
    if raw.startswith("<grok-card"):
        m = _DATA_ID.search(raw)
        return (), (m.group(1) if m else raw,)
    if raw.startswith("[^") and raw.endswith("^]"):
        return (int(raw[2:-2]),), ()
    return None


_FOOTNOTE_DEF = re.compile(r"^[ \t]{0,3}\[\^([\w.-]{1,40})\]:(.*)$", re.MULTILINE)


def _footnote_definitions(text: str, layout: Layout) -> tuple[set[str], dict[str, list[str]]]:
    """Labels of footnotes defined in the body, and URLs of those defined in the references."""
    body: set[str] = set()
    refs: dict[str, list[str]] = {}
    if "[^" not in text:
        return body, refs
    starts = [ps for ps, _ in layout.protected]
    for m in _FOOTNOTE_DEF.finditer(text):
        if m.start() < layout.body_end:
            # a definition is its own protected block; one inside a code block is just code
            k = bisect.bisect_right(starts, m.start()) - 1
            if k >= 0 and layout.protected[k][0] == m.start():
                body.add(m.group(1))
        else:
            rest = m.group(2)
            urls = [lm.group(2) for lm in _MD_LINK.finditer(rest)]
            plain = _MD_LINK.sub(" ", rest)
            urls += [plain[s:e] for s, e, _ in _bare_urls(plain)]
            refs.setdefault(m.group(1), urls)
    return body, refs


def _notes_in_references(text: str, layout: Layout) -> set[str]:
    """Labels of the cut list's footnotes that are notes, not sources ("[^hyb]: This figure
    excludes plug-in hybrids.", `footnote_note`); a number's ("[^3]: …") is always a citation."""
    out: set[str] = set()
    for m in _FOOTNOTE_DEF.finditer(text, layout.body_end):
        if not m.group(1).isdigit() and footnote_note(m.group(2)):
            out.add(m.group(1))
    return out


_BRACKET_LABEL = re.compile(r"\[([^\[\]]*)\]")
_BRACKETS_ONLY = re.compile(r"\[[^\[\]]*\](?:[ \t]*[,，、]?[ \t]*\[[^\[\]]*\])*")
_ENTRY_AFTER = re.compile(rf"[ \t]+(?:\S[^\n]*?)?(?:https?://|www\.|{LINK_OPEN})")   # "[1] https://…" too


def _is_entry_label(text: str, s: int, e: int) -> bool:
    """Whether the marker at [s, e) opens a line whose rest gives a URL or a link: the label of a
    references entry ("[1] 中国信通院 https://…") in a list that is not cut as the section; not
    when the marker opens a run of markers or is the subject of a verb ("【2】 found that … 1957
    ([Bridge](https://…)).", "[5] and [3] report that …")."""
    return _opens_line(text, s) and bool(_ENTRY_AFTER.match(text, e)) \
        and not _RUN_NEXT.match(text, e) and not SUBJECT_VERB.match(text, e)


_HEADING_PREFIX = re.compile(r"[ \t]{0,3}#{1,6}[ \t]+")
# what says a pair of numbers in brackets is an interval: "rated on a scale of [1, 5]", "评分范围为【1，5】"
_INTERVAL_CUE = re.compile(
    r"(?:\b(?:scale|range|ranges|ranging|interval|between|within)(?:[ \t]+(?:of|is|was|from))?"
    r"|∈|区间|范围|取值|分值|评分|介于)[ \t]*(?:为|是|在|=|:|：)?[ \t]*\Z", re.IGNORECASE)
_MATH_INTERVAL_CUE = re.compile(
    r"(?:\binterval(?:[ \t]+(?:of|is|was|from))?|∈|区间)[ \t]*(?:为|是|在|=|:|：)?[ \t]*\Z", re.IGNORECASE)
# what follows a marker that opens a run of markers, not a label ("【1】、[2]指出", "[2]和[3]认为")
_RUN_ON = r"(?:[,，、;；]|(?:和|及|与|或|and|or|&)[ \t]*[\[【［〔(（])"
_RUN_NEXT = re.compile(r"[ \t]*+" + _RUN_ON)
_NUMBER_LABEL = re.compile(
    r"[ \t]*(?:(?:[-*+>]|\d{1,9}[.)])[ \t]+)?(?:[\[【［〔]"
    r"(?:[ \t]*" + CITATION_LABEL_WORD + r"[ \t]*(?:[:：][ \t]*)?|[ \t])?(\d{1,4})[ \t]*[\]】］〕]"
    # or in parentheses under a label word: "(Source 1) Municipal well: …"
    r"|[(（][ \t]*" + CITATION_LABEL_WORD + r"[ \t]*(?:[:：][ \t]*)?(\d{1,4})[ \t]*[)）])(?P<close>)[ \t]*"
    r"(?!" + _RUN_ON + r")[^\s.,;:!?。，；：！？\[【]")
# a short title and a colon ("市场规模：", "Scope:", "Bridge [history]:"; `_titled` keeps a marker's
# colon out: "and [Source: 2]")
_TITLED = re.compile(r"[^\n.!?。！？]{1,24}?[:：]")



# headings of a table's first column that numbers its rows
_ROW_NUMBER_HEADINGS = frozenset(
    "# no no. nr nr. number step steps item id index rank 序号 编号 步骤 序 排名 条目".split())


class _LabelContext:
    """What `_is_label` asks of the whole text, found once: line bounds, heading starts, the numbers
    the cut references section lists, which tables number their rows."""

    def __init__(self, text: str, layout: Layout) -> None:
        self.text = text
        self.layout = layout
        self._breaks: list[int] | None = None
        self._entries: set[int] | None = None
        self._labelled: dict[str, set[int]] = {}
        self._notes: set[int] | None = None
        self._first_mark: dict[str, int] = {}
        self.heading_starts = {a for a, _b in layout.headings}
        self.row_tables: dict[int, bool] = {}   # table row start -> whether its table numbers rows

    def line(self, pos: int) -> tuple[int, int]:
        """(start, end) of the line holding `pos`, its terminator excluded."""
        if self._breaks is None:
            self._breaks = [m.start() for m in re.finditer("\n", self.text)]
        k = bisect.bisect_left(self._breaks, pos)
        start = self._breaks[k - 1] + 1 if k > 0 else 0
        return start, self._breaks[k] if k < len(self._breaks) else len(self.text)

    def entries(self) -> set[int]:
        """The numbers the cut references section lists ("[1] …", "2. …")."""
        if self._entries is None:
            listed, self._labelled = _parse_entries(self.text[self.layout.body_end:])
            self._entries = set(listed)
        return self._entries

    def labelled(self) -> dict[str, set[int]]:
        """The numbers the cut references section lists under each label word ("Source 1: …" gives
        {"source": {1}}; `label_key` spells the word)."""
        self.entries()
        return self._labelled

    def _marked_before(self, number: str, end: int) -> bool:
        """Whether a "<sup>number</sup>" stands in a line's text before `end`, after words of its
        line ("$1,599<sup>1</sup>"), not opening it ("<sup>1</sup><sup>3</sup> Fact." cites)."""
        first = self._first_mark.get(number)
        if first is None:              # once per number: the first such mark in the body
            first = len(self.text)
            mark = f"<sup>{number}</sup>"
            at = self.text.find(mark, 0, self.layout.body_end)
            seen_to, words = 0, False    # how far this line has been read, and if it had words
            while at >= 0:
                nl = self.text.rfind("\n", seen_to, at)
                if nl >= 0 or seen_to == 0:   # a new line: read it from its start
                    seen_to, words = (nl + 1 if nl >= 0 else 0), False
                words = words or bool(_HAS_WORD.search(MARKER_RE.sub("", self.text[seen_to:at])))
                seen_to = at + len(mark)
                if words:
                    first = at
                    break
                at = self.text.find(mark, at + 1, self.layout.body_end)
            self._first_mark[number] = first
        return first < end

    def notes(self) -> set[int]:
        """The numbers whose note the body writes on a line of its own ("<sup>1</sup> US price,
        excluding tax."): a bare "<sup>1</sup>" elsewhere points to that note, not to a source."""
        if self._notes is None:
            self._notes = set()
            prot = self.layout.protected
            starts = [a for a, _b in prot]
            noted = -1                 # where the last note line ended: notes may follow each other
            for m in _SUP_NOTE_LINE.finditer(self.text, 0, self.layout.body_end):
                k = bisect.bisect_left(starts, m.start()) - 1  # regions opening before the line
                if k >= 0 and prot[k][1] > m.start():
                    continue           # in code, a comment or an HTML block: not the author's note
                ls = m.start()
                prev = self.text[self.text.rfind("\n", 0, max(0, ls - 1)) + 1:max(0, ls - 1)]
                # a note opens a block ("It was\n<sup>1</sup> a long project." is a wrapped
                # citation) and follows a mark that points to it ("<sup>3</sup> Fact." opening the
                # report cites)
                if (ls == 0 or not prev.strip() or ls - 1 == noted) and self._marked_before(m.group(1), ls):
                    self._notes.add(int(m.group(1)))
                    end = self.text.find("\n", ls)
                    noted = len(self.text) if end < 0 else end
        return self._notes


# "<sup>1</sup> US price, excluding tax.": the note's text opens with a word (not ":" or "<sup>")
_HAS_WORD = re.compile(r"[^\W_]")
_SUP_NOTE_LINE = re.compile(r"^[ \t>*_]*<sup>\s*(\d{1,4})\s*</sup>[ \t]*[^\W\d_]", re.MULTILINE)
_REST = re.compile(r"[ \t]*+(\S?)")
_TWO_NUMBERS = re.compile(rf"[\[【［〔][ \t]*\d{{1,4}}[ \t]*(?:[,，]|{_DASH})[ \t]*\d{{1,4}}[ \t]*[\]】］〕]")


def _is_label(text: str, s: int, e: int, raw: str, numbers: tuple[int, ...], ctx: _LabelContext) -> bool:
    """Whether the bracketed number at [s, e) labels or numbers something rather than citing it:
    it opens a heading ("## [1] Introduction", "**[1] Introduction**", a setext heading), or the
    first cell of a table whose column numbers the rows ("| [1] | Install |" under "| Step | … |");
    or it opens a line of text in a run of lines numbered in order, each with a short title and a
    colon ("【1】市场规模：…", "【2】增长率：…"). When the cut references section does not list its
    numbers, also a run of numbered lines without titles, a line that gives a short title and a
    colon after a blank line or a heading ("[2] Orphan paragraph." still cites, and so does a
    marker opening a wrapped line of a paragraph), or a pair of numbers after a word that opens
    an interval ("a scale of [1, 5]", "范围为【1，5】") or more than two past the list's last entry
    ("[1, 10]" where it ends at 2)."""
    ls, le = ctx.line(s)
    m = _REST.match(text, e, le)
    first = m.group(1) if m else ""
    lead = text[ls:s] if s - ls <= 12 else None     # a heading's or a cell's prefix is short
    if first and first not in "[【" and lead is not None and (
            _HEADING_PREFIX.fullmatch(lead) or lead.strip() in ("**", "__")
            or (ls in ctx.heading_starts and not lead.strip())):
        return True
    if first == "|" and lead is not None and lead.strip() == "|" and _row_numbers(text, ls, ctx.row_tables):
        return True
    if 0 in numbers and _TWO_NUMBERS.fullmatch(raw):
        return True            # "[0, 1]": no citation is numbered 0
    listed = bool(numbers) and set(numbers) <= ctx.entries()   # the old list holds it
    if first and first not in ".,;:!?。，；：！？[【" and len(numbers) == 1 and not _RUN_NEXT.match(text, e) \
            and not SUBJECT_VERB.match(text, e, min(le, e + 20)) \
            and not _REPORTS.match(text, e, min(le, e + 20)) and _opens_line(text, s):
        n = numbers[0]
        prev = ctx.line(ls - 1) if ls > 0 else None
        nxt = ctx.line(le + 1) if le < len(text) else None
        titled = _titled(text, m.start(1) if m else e, le)
        entries = ctx.entries()
        # a neighbour numbered n - 1 or n + 1 makes a run; without titles, only where the old list
        # does not give both numbers ("[1] Open the dashboard.\n[2] Export …" under a list of one
        # entry, a trace's own output, numbers steps; "- [1] reports that …\n- [2] finds …" under
        # a list of two cites them)
        run = any(k == n + step and (titled or k not in entries or not listed)
                  for step, line in ((-1, prev), (1, nxt)) if line is not None
                  for k in (_label_number(text, *line),))
        if run and (titled or raw[0] not in "(（"):
            return True        # a run of numbered lines: "【1】市场规模：…\n【2】增长率：…" ("- [1] reports
            # that …\n- [2] finds …" cites the sources the old list gives those numbers; "(ref. 1)"
            # labels a run only with titles: with none it is a citation, whatever the list)
        blank_before = prev is None or not text[prev[0]:prev[1]].strip() \
            or text[prev[0]:prev[1]].lstrip().startswith("#")
        if blank_before and titled and not listed:
            return True        # "【1】市场规模：…" after a blank line or a heading
    if not _TWO_NUMBERS.fullmatch(raw):
        return False
    if _INTERVAL_CUE.search(text, max(ls, s - 24), s) and (
            not listed or (_WORD_AFTER.match(first) and _MATH_INTERVAL_CUE.search(text, max(ls, s - 24), s))):
        return True            # "a scale of [1, 5]"; where the old list gives both numbers, only after
        # "interval", "∈" or 区间 with the sentence going on ("the closed interval [2, 3] holds …"; "a
        # wide range [1, 2] of outcomes" and "… the range [1, 2]." cite)
    entries = ctx.entries()
    # "[1, 10]" where the old list ends at 2: a pair of figures (a list one or two entries short
    # of the body's numbers is common: "[1, 3]" still cites)
    return not listed and bool(entries) and max(numbers) > max(entries) + 2


def _titled(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] opens with a short title and a colon ("市场规模：…"), the colon not
    one of a marker's ("[5] and （来源：5）中指出" is a run of markers, not a title)."""
    t = _TITLED.match(text, start, end)
    if t is None:
        return False
    colon = t.end() - 1
    return not any(mk.start() < colon < mk.end() for mk in MARKER_RE.finditer(text, start, t.end() + 40))


def _label_number(text: str, start: int, end: int) -> int:
    """The number of the label opening the line text[start:end] followed by text ("【2】增长率…":
    2), or -1."""
    m = _NUMBER_LABEL.match(text, start, min(end, start + 40))
    if not m or SUBJECT_VERB.match(text, m.end("close"), min(end, m.end("close") + 20)):
        return -1              # "【3】 found that …" is a subject, no label
    return int(m.group(1) or m.group(2))


def _row_numbers(text: str, line_start: int, row_tables: dict[int, bool]) -> bool:
    """Whether the table row at `line_start` belongs to a table whose first column heading numbers
    its rows ("#", "Step", "序号"). `row_tables` remembers the answer for each row walked over, so
    a table's rows are walked up once in all."""
    start = line_start
    walked: list[int] = []
    while start not in row_tables:
        walked.append(start)
        prev = text.rfind("\n", 0, start - 1) + 1 if start > 0 else start
        if prev == start or not text[prev:start].lstrip().startswith("|"):
            nl = text.find("\n", start)
            cells = text[start:nl if nl >= 0 else len(text)].strip().strip("|").split("|")
            row_tables[start] = cells[0].strip().strip("*").casefold() in _ROW_NUMBER_HEADINGS
            break
        start = prev
    for row in walked:
        row_tables[row] = row_tables[start]
    return row_tables[line_start]


_LABEL_COLON = re.compile(r"\[[^\[\]\n]{1,40}\]:")


def _would_define(text: str, s: int, e: int, leads: dict[int, int], kept: set[str]) -> bool:
    """Whether the marker text[s:e] is one of the markers that open its line (after a container
    prefix) and removing them would leave a label that stays ("[^1]" whose note the body holds,
    `kept`) opening the line as a definition ("[1][^1]: a note."): markdown would read the line as
    a footnote or link definition. When every marker of the run goes, ": …" is left, which defines
    nothing, so they go. The run that opens a line is measured once per line (`leads`), so a line
    of n markers costs O(n)."""
    ls = text.rfind("\n", max(0, s - 256), s)
    if ls < 0 and s > 256:
        return False                   # its line starts further back than a run of markers reaches
    ls += 1
    run_end = leads.get(ls)
    if run_end is None:
        run_end = p = _CONTAINER.match(text, ls).end()  # type: ignore[union-attr]
        while (m := MARKER_RE.match(text, p)) is not None:
            if m.group(0).startswith("[^") and m.group(0)[2:-1] in kept:
                break                  # a working footnote reference stays: the run ends before it
            run_end = p = m.end()
            while p < len(text) and text[p] in " \t":
                p += 1
        leads[ls] = run_end
    if e > run_end:
        return False                   # not in the run that opens the line
    after = run_end
    while after < len(text) and text[after] in " \t":
        after += 1
    close = text.find("]", after, after + 44) if text.startswith("[^", after) else -1
    if close >= 0 and text.startswith(":", close + 1):
        return True                    # "[12][^1]: a note." with the note [^1] in the body: without the
        # run the line would open with the label whatever precedes it (the lossless check reads it so)
    if ls >= 2:                        # only a line that may open a block can define
        prev = text[text.rfind("\n", 0, ls - 1) + 1:ls - 1]
        if prev.strip() and not _BLOCK_LINE.match(prev):
            return False               # a paragraph's next line ("Fact.\n[1][^1]: …") defines nothing
    p = run_end
    if text.startswith(":", p) and text.startswith("[^", text.rfind("[", ls, p)):
        return True                    # a run ending in a footnote reference before a colon stays
    while p < len(text) and text[p] in " \t":
        p += 1
    label = _LABEL_COLON.match(text, p)
    return label is not None and _defines(text, p, label.end())


# a line after which a definition may open: a definition, a heading, a table row, a fence, a break
_BLOCK_LINE = re.compile(
    r"[ \t]{0,3}(?:\[[^\[\]\n]{1,40}\]:|#{1,6}(?:[ \t]|$)|\||`{3,}|~{3,}|(?:[-*_][ \t]*){3,}$)")
# what follows "[label]:" in a link reference definition: a destination, maybe a title, nothing else
_DEFINITION_REST = re.compile(
    r"[ \t]*[^\s\[\]]\S*(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^)\n]*\)))?[ \t]*(?:\r?\n|$)")


def _defines(text: str, label_start: int, after_colon: int) -> bool:
    """Whether "[label]:" at label_start, opening a line, would define something: a footnote
    ("[^1]: any note") or a link (a destination and maybe a title, then the line's end)."""
    if text.startswith("[^", label_start):
        return True
    return bool(_DEFINITION_REST.match(text, after_colon))


def _opens_line(text: str, s: int) -> bool:
    """Whether only a container prefix ("> ", "- ", "1. ", indentation) stands before s on its
    line. A prefix is short: the line start is looked for in the 64 characters before s only, so
    a long line of markers is not searched back to its start for each one."""
    ls = text.rfind("\n", max(0, s - 64), s)
    if ls < 0 and s > 64:
        return False
    return bool(_CONTAINER.fullmatch(text, ls + 1, s))


_CONTAINER = re.compile(r"[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+|>[ \t]*)*")  # "> ", "- ", "1. " prefixes
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
def _outside_code(
    text: str, layout: Layout, prot_starts: list[int], s: int, e: int,
    inner: dict[int, tuple[list[tuple[int, int]], list[int]]],
) -> bool:
    """True unless [s, e) lies inside code, HTML, math, front matter or an inline link / URL.

    Link-shaped markers ("[[1]](url)") are exactly one inline region, which is fine; block
    regions (ending at a line end) that are not code — headings, tables — are searched, but
    not the code spans, links, URLs and math inside them (`inner` caches those by block).
    """
    prot = layout.protected
    k = bisect.bisect_right(prot_starts, s) - 1
    if k >= 0 and prot[k][1] > s:
        ps, pe = prot[k]
        if ps == s and pe <= e:
            return True
        block = pe == len(text) or text[pe - 1] == "\n"
        if not block or is_code_region(text, ps):
            return False
        if ps not in inner:
            regions = sorted(inline_regions(text, ps, pe, layout.link_labels))
            reach = list(itertools.accumulate((b for _a, b in regions), max))
            inner[ps] = (regions, reach)
        regions, reach = inner[ps]
        # the regions starting before the marker's end, from the last back while one may still
        # reach into it (a table of n rows with a marker each is O(n log n), not O(n²)); the
        # marker's own parts may be regions ("<sup>", "</sup>" of "<sup>[1]</sup>")
        i = bisect.bisect_left(regions, (e, -1)) - 1
        while i >= 0 and reach[i] > s:
            a, b = regions[i]
            if b > s and not (s <= a and b <= e):
                return False
            i -= 1
        return True
    return True


# what makes "[1]" glued to a name an index: the code goes on after it ("ids[1]=2", "rows[2].name",
# "a[1]_b"), or the name is a lower-case snake_case one ("my_list[2]"); a notebook's prompt, "In [4]:"
# (not a word or a digit after it: "IEA[1]的数据", "…turn0news1[3]2024年" cite; nor "2023[1].1", a note)
_INDEX_AFTER = re.compile(r"[=_]|\.[a-z_]")   # (not "/", "(" or ".China": "Reuters[1]/Bloomberg")
_SNAKE_BEFORE = re.compile(r"(?<![\w_])[a-z][a-z\d]*(?:_[a-z\d]+)+\Z")   # not "_Nature_", "IEA_2023"
_PROMPT = re.compile(r"(?:^|\n)[ \t]*(?:In[ \t]?|Out)\Z")


def _indexes(text: str, s: int, e: int) -> bool:
    """Whether the bracketed number at [s, e) indexes the name glued before it, or numbers a
    notebook's prompt ("In [4]:", "Out[4]:"), rather than citing."""
    if text.startswith(":", e) and _PROMPT.search(text, max(0, s - 8), s):
        return True
    if s == 0 or not (text[s - 1].isascii() and (text[s - 1].isalnum() or text[s - 1] == "_")):
        return False
    return bool(_INDEX_AFTER.match(text, e) or _SNAKE_BEFORE.search(text, max(0, s - 40), s))


def _plausible(text: str, s: int, e: int, numbers: tuple[int, ...], raw: str) -> bool:
    """Reject "[2020]"-style years and checkbox-like brackets that are not marker lists."""
    if all(n <= _MAX_NUMBER for n in numbers):
        return True
    if _LABELLED_HEAD.match(raw):
        return False                   # "(Source: 2023)", "[ref 2020]": a year, even beside a marker
    if raw.startswith(("<sup>", "[cite", "[^")):
        return True                    # <sup>…</sup>, [citation:…], [cite: …], [^n] are explicit
    # a big number counts only next to another marker: "[1][1024]" (【2023】 is a year label)
    before = text[max(0, s - 1):s]
    after = text[e:e + 1]
    return before in ("]", "】") or after in ("[", "【")


def _sentence_of(
    text: str, sentences: list[Sentence], starts: list[int], s: int, e: int, attach_end: dict[int, int]
) -> int | None:
    k = bisect.bisect_right(starts, s) - 1
    if k < 0:
        return None
    sent = sentences[k]
    if s < sent.end:
        return sent.id
    gap_from = max(sent.end, attach_end.get(sent.id, sent.end))
    if s - gap_from > _MAX_GAP:
        return None
    gap = text[gap_from:s]
    if gap.strip() == "" and "\n\n" not in gap.replace("\r", ""):
        return sent.id
    if gap_from > sent.end and RUN_JOIN.fullmatch(gap):
        return sent.id   # "2023.[2], [1]": the run's next marker, after what joins them
    return None


# --- resolution -----------------------------------------------------------------------------------

_REF_LINE = re.compile(
    r"^[ \t]*(?:[-*+•][ \t]+)?(?:\*\*|__|\*(?=[\[【［〔(（\d])|_)?"     # "**[1]** …", "**1.** …"
    r"(?:\\?\[[ \t]?\^?(\d{1,4})\^?[ \t]?\\?\]:?|[【［〔](\d{1,4})[】］〕]|(\d{1,4})[.)、]"
    r"|[(（](\d{1,4})[)）]|([①-⑳]))"
    r"(?:\*\*|__|\*|_)?[ \t]*(.*)$"
)
# an entry numbered by a superscript, as some chat exports write the list: "<sup>[1]</sup> [A](u)"
_SUP_ENTRY = re.compile(
    r"^([ \t]*(?:[-*+•][ \t]+)?)<sup>[ \t]*\\?\[?[ \t]*(\d{1,4})[ \t]*\\?\]?[ \t]*</sup>[ \t]*",
    re.IGNORECASE)
_LABELLED_ENTRY = re.compile(
    rf"^([ \t]*(?:[-*+•][ \t]+)?)\\?[\[【(（][ \t]*(?P<word>{CITATION_LABEL_WORD})[ \t]*(?:[:：][ \t]*)?"
    rf"(?P<num>\d{{1,4}})[ \t]*\\?[\]】)）]")
# ... or with no brackets at all, the word, the number and a colon, dot or dash: "Source 1: BYD annual
# report https://…", "- **Ref 2.** …", "1. *Source 3:* …" (the list's own enumerator goes),
# "来源3：国家统计局"
_BARE_LABELLED_ENTRY = re.compile(
    rf"^([ \t]*(?:[-*+•][ \t]+)?)(?:\d{{1,4}}[.)、][ \t]*)?(?P<em>\*\*|__|\*|_)?"
    rf"(?P<word>{CITATION_LABEL_WORD})[ \t]*#?(?P<num>\d{{1,4}})"
    rf"(?:\*\*|__|\*|_)?[ \t]*(?:[:：]|[.\-–—](?=[ \t*_]))(?:\*\*|__|\*|_)?(?=[ \t]*\S)")
_MD_LINK = re.compile(r"!?\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\((" + _URL + r")(?:\s+\"[^\"]*\")?\)")
# a URL with its balanced parentheses ("https://en.wikipedia.org/wiki/Mercury_(planet)"), trimmed
# of what ends a sentence or closes a bracket it stands in (`_bare_urls`)
_BARE_URL = re.compile(r"(?:https?://|www\.)[^\s<>\"'`\]\u3000-\u303f\uff00-\uffef]+")


def _bare_urls(text: str) -> list[tuple[int, int, int]]:
    """(start, end, end of the match with what was trimmed) of each URL in text."""
    return [(m.start(), trim_url(text, m.start(), m.end()), m.end()) for m in _BARE_URL.finditer(text)]


def _without_urls(text: str, spans: list[tuple[int, int, int]]) -> str:
    parts, at = [], 0
    for s, _, e in spans:
        parts += [text[at:s], " "]
        at = e
    return "".join([*parts, text[at:]])


def _canon_fn() -> Callable[[str], str]:
    try:
        from tracer.records import canonical_url
    except ImportError:  # records stage not available: compare URLs as written
        return lambda u: u.strip().rstrip("/").lower()
    return canonical_url


# a page title's site name after it: "比亚迪销量创新高_新浪财经_新浪网", "…|网易汽车", "… - 知乎"
_SITE_SEP = re.compile(r"\s*(?:_|\||｜| - | — | – )\s*")
_MAX_SITE_PARTS = 3      # the parts a site's name takes at most


def _site_suffixed(title: str) -> list[str]:
    """`title` without the site names a page title ends with, shortest cut first ("A_B_C" gives
    "A_B", then "A"); only title-sized parts."""
    parts = _SITE_SEP.split(title.strip())
    out = []
    # a site's name is one to three parts at the end ("_新浪财经_新浪网"): cutting more, a title of
    # thousands of parts ("a_a_a_…") would join thousands of prefixes, each as long as the title
    for k in range(len(parts) - 1, max(0, len(parts) - 1 - _MAX_SITE_PARTS), -1):
        if any(ch.isdigit() for ch in parts[k]):
            break                        # "Quarterly results - Q1 2023": no site's name
        text = " ".join(parts[:k]).strip()
        if len(text) >= (4 if _CJK.search(text) else 10):
            out.append(text)
    return out


_TABLE_ROW = re.compile(
    r"^[ \t]*\|[ \t]*[\[【]?(" + CITATION_LABEL_WORD
    + r"[ \t]*(?:[:：][ \t]*)?)?(\d{1,4})[\]】]?[ \t]*\|(.*)$")


def parse_reference_entries(removed_references: str) -> dict[int, tuple[list[str], list[str]]]:
    """Number -> (urls, title candidates) from a references section's entry lines."""
    return _parse_entries(removed_references)[0]


def _one_line_entries(text: str) -> str:
    """`text` with a one-line references list of numbered entries ("Sources: [1] https://a… [2]
    https://b…", `tracer.markdown.one_line_entries`) cut into one line per entry."""
    if text.count("[") + text.count("【") < 2:
        return text
    out: list[str] = []
    for line in text.splitlines():
        parts = one_line_entries(line)
        if parts:
            out.extend(p.strip() for p in parts)
        else:
            out.append(line)
    return "\n".join(out)


def label_key(word: str) -> str:
    """One spelling of a label word: "Sources", "source" and "Source." are "source"; "Ref.", "refs"
    and "References" are "ref"."""
    w = word.strip(" \t.:：").casefold()
    if w.startswith("ref"):
        return "ref"
    return w[:-1] if w.endswith("s") else w


def _parse_entries(
    removed_references: str,
) -> tuple[dict[int, tuple[list[str], list[str]]], dict[str, set[int]]]:
    """`parse_reference_entries`, and the numbers whose entries are written under a label word
    ("[ref1] …", "Source 2: …"), by that word (`label_key`)."""
    removed_references = _bullets_numbered(_one_line_entries(_html_list_lines(removed_references)))
    entries: dict[int, tuple[list[str], list[str]]] = {}
    notes: dict[int, tuple[list[str], list[str]]] = {}   # "[^1]: …" lines, read after the others
    last: tuple[dict[int, tuple[list[str], list[str]]], int] | None = None
    forms: dict[int, set[bool]] = {}   # number -> whether its entry lines are labelled ("[ref1] …")
    words: dict[int, str] = {}         # number -> the label word of its entry
    for line in removed_references.splitlines():
        row = _TABLE_ROW.match(line)
        labelled = bool(row and row.group(1))
        if row:  # "| 1 | Alpha report | https://a.com/x |": the number, then the other cells
            line = f"[{row.group(2)}] " + " | ".join(c.strip() for c in row.group(3).split("|") if c.strip())
        line = _SUP_ENTRY.sub(r"\g<1>[\g<2>]", line, count=1)   # "<sup>[1]</sup> [A](https://…)": "[1] …"
        written = line
        word = _LABELLED_ENTRY.match(line) or _BARE_LABELLED_ENTRY.match(line)
        line = _LABELLED_ENTRY.sub(r"\g<1>[\g<num>]", line, count=1)   # "[ref1] …", "【来源1】…": "[1] …"
        if line == written:
            line = _BARE_LABELLED_ENTRY.sub(r"\g<1>[\g<num>]", line, count=1)   # "Source 1: …": "[1] …"
        labelled = labelled or line != written
        if row and row.group(1):
            words[int(row.group(2))] = label_key(row.group(1))
        elif word and line != written:
            words[int(word.group("num"))] = label_key(word.group("word"))
        m = _REF_LINE.match(line)
        if m:
            num = int(next(g for g in m.groups()[:4] if g)) if not m.group(5) else ord(m.group(5)) - 0x245F
            rest = m.group(6)
            # a footnote definition that shares its number with an entry of another form comes after
            # it, whatever the order of the lines: the "【1】" marker means the "【1】" entry
            book = notes if _FOOTNOTE_LINE.match(line) else entries
            if book is entries:
                forms.setdefault(num, set()).add(labelled)
            last = (book, num)
            entry = book.setdefault(num, ([], []))
        elif last is not None and line[:1] in (" ", "\t") and line.strip():
            rest = line
            entry = last[0][last[1]]
        else:
            last = None
            continue
        urls, titles = entry
        for lm in _MD_LINK.finditer(rest):
            titles.append(lm.group(1))
            urls.append(lm.group(2))
        plain = _MD_LINK.sub(" ", rest)
        spans = _bare_urls(plain)
        urls.extend(plain[s:e] for s, e, _ in spans)
        plain = _without_urls(plain, spans)
        plain = re.sub(r"^\s*[:：]\s*", "", plain)
        titles.extend(t for t in _title_candidates(plain) if t)
    for num, seen in forms.items():
        if len(seen) > 1:   # "[1] Car sales …" and "[ref1] Hubble …": which one a "[1]" means is unknown
            del entries[num]
    by_word: dict[str, set[int]] = {}
    for num, seen in forms.items():
        if seen == {True} and num in words:
            by_word.setdefault(words[num], set()).add(num)
    for num, (urls, titles) in notes.items():
        entry = entries.setdefault(num, ([], []))
        entry[0].extend(urls)
        entry[1].extend(titles)
    return dict(sorted(entries.items())), by_word


_GIVES_LINK = re.compile(rf"https?://|\bwww\.|{LINK_OPEN}", re.IGNORECASE)


def _bullets_numbered(section: str) -> str:
    """A references list of bullets, each giving a URL or a link ("- [Reuters](https://…)"), with
    no numbered entry: its items numbered in order ("1. [Reuters](https://…)"), as the body's
    "[1]", "[2]" cite them. Any other section as it is."""
    lines = section.splitlines()
    title = next((line for line in lines if line.strip()), "")
    if references_title(heading_title(title)) in ("further reading", "further readings"):
        return section         # more reading, in no order the body's numbers follow
    bullets = [k for k, line in enumerate(lines) if BULLET_ITEM.match(line)]
    numbered = (_REF_LINE, _LABELLED_ENTRY, _BARE_LABELLED_ENTRY, _TABLE_ROW)
    if not bullets or any(p.match(line) for line in lines for p in numbered) \
            or not all(_GIVES_LINK.search(lines[k]) for k in bullets):
        return section
    for n, k in enumerate(bullets, 1):
        lines[k] = BULLET_ITEM.sub(f"{n}. ", lines[k], count=1)
    return "\n".join(lines)


_LIST_TOKEN = re.compile(
    r"<(/?)(ol|ul)\b([^<>]*)>|<li\b[^<>]*>(.*?)(?:</li\s*>|(?=<li\b|</?(?:ol|ul)\b|\Z))",
    re.IGNORECASE | re.DOTALL)
# (linear: no part can take what the next one takes; an "<a" inside the text ends the match)
_A_HREF = re.compile(r"<a\b[^<>]*?\bhref\s*=\s*(?:\"([^\"<>]*)\"|'([^'<>]*)'|([^\s\"'<>]+))[^<>]*>"
                     r"([^<]*(?:<(?!/?a\b)[^<]*)*)</a\s*>", re.IGNORECASE)
_OL_START = re.compile(r"\bstart\s*=\s*[\"']?(\d{1,4})", re.IGNORECASE)
_TAG = re.compile(r"<[^<>]*>")


_LIST_OPEN = re.compile(r"<(?:ol|ul)\b[^<>]*>", re.IGNORECASE)


def _md_link(a: re.Match[str]) -> str:
    """An `_A_HREF` match as a markdown link, "[text](href)"."""
    href = next(g for g in (a.group(1), a.group(2), a.group(3)) if g is not None)
    return f"[{' '.join(_TAG.sub(' ', a.group(4)).split())}]({href.strip()})"


@functools.lru_cache(maxsize=8)
def _html_list_lines(text: str) -> str:
    """`text` with its HTML lists written as markdown list lines, one per item: "<ol><li><a
    href="u">T</a></li>…" gives "1. [T](u)" (numbered from the list's `start`), a "<ul>" item
    "- …"; other tags inside an item are dropped and entities decoded."""
    if not _LIST_OPEN.search(text):
        return text                      # "[3] Using the <li> tag, https://…" is no HTML list
    out: list[str] = []
    stack: list[list[int]] = []          # [numbered (1/0), next number] per open list
    pos = 0
    for m in _LIST_TOKEN.finditer(text):
        out.append(text[pos:m.start()])
        pos = m.end()
        if m.group(2):
            if m.group(1):
                if stack:
                    stack.pop()
            else:
                st = _OL_START.search(m.group(3)) if m.group(2).lower() == "ol" else None
                stack.append([int(m.group(2).lower() == "ol"), int(st.group(1)) if st else 1])
            out.append("\n")
            continue
        # entities decoded once, the href's with the rest ("&amp;amp;" is "&amp;")
        item = html.unescape(" ".join(_TAG.sub(" ", _A_HREF.sub(_md_link, m.group(4))).split()))
        if stack and stack[-1][0]:
            out.append(f"\n{stack[-1][1]}. {item}\n")
            stack[-1][1] += 1
        else:
            out.append(f"\n- {item}\n")
    out.append(text[pos:])
    return "".join(out)


_FOOTNOTE_LINE = re.compile(r"[ \t]*(?:[-*+•][ \t]+)?\\?\[\^")

# the document-type code a GB/T 7714 entry puts after its title: "报告[R]", "文章[J]", "网页[EB/OL]"
_GBT_TYPE = re.compile(r"(?<!\s)\s*+\[(?:[A-Z]{1,2})(?:/OL)?\]\s*+$")
# a title in quotes or 《》 inside an entry (an opener stops the scan of the one before it: an entry of
# unclosed openers is read in linear time)
_QUOTED_TITLE = re.compile(r"《([^》《]+)》|[\"“]([^\"”“]+)[\"”]")


# a site in brackets after an entry's title: "Apple sales (apple.com)"
_TITLE_SITE = re.compile(
    r"(?<![ \t])[ \t]*+[(（]((?:[\w-]{1,63}\.)+[a-z]{2,24})[)）][ \t.]*+\Z", re.IGNORECASE)
_SCHEMELESS = re.compile(SCHEMELESS_URL, re.IGNORECASE)


def _title_candidates(plain: str) -> Iterable[str]:
    s = plain.strip().strip('"“”').strip()
    if not s:
        return
    yield s
    for q in _QUOTED_TITLE.findall(s):
        yield q[0] or q[1]
    for part in re.split(r" - | — | \| |，|, |\. |。", s):
        part = _GBT_TYPE.sub("", part.strip()).strip().strip('"“”*_').strip()
        # a part must be title-sized: "Tesla" or "News" from "Tesla, Inc. … News" names no record
        if part != s and len(part) >= (4 if _CJK.search(part) else 10):
            yield part


def _on_site(url: str, site: str) -> bool:
    """Whether the URL's host is the site or one of its subdomains ("www.apple.com" is on "apple.com")."""
    try:
        host = (urlsplit(url).hostname or "") if "//" in url else ""
    except ValueError:             # "https://[bad" : no host to be on
        return False
    site = site.casefold().removeprefix("www.")
    return host == site or host.endswith("." + site)


def _loose_key(canonical: str) -> str | None:
    """A canonical http(s) URL without its scheme and a leading "www.", or None for another kind."""
    low = canonical[:8].lower()
    if low.startswith("https://"):
        rest = canonical[8:]
    elif low.startswith("http://"):
        rest = canonical[7:]
    else:
        return None
    return rest[4:] if rest[:4].lower() == "www." else rest


def resolve_existing(
    markers: list[ExistingMarker], removed_references: str, recs: list[Record]
) -> dict[int, int | None]:
    """Map each old citation number to a position in `recs`, or None when it cannot be resolved."""
    if not markers:
        return {}
    canon = _canon_fn()
    by_url: dict[str, int] = {}
    by_title: dict[str, int] = {}
    by_id: dict[str, int] = {}
    for pos, rec in enumerate(recs):
        for key in (canon(rec.url), rec.source_key):
            if key:
                by_url.setdefault(key, pos)
        t = title_key(rec.title)
        if t:
            by_title.setdefault(t, pos)
        if rec.id:
            by_id.setdefault(rec.id.strip(), pos)
    cut: dict[str, set[int]] = {}      # then the titles without a site's name after them, where
    for pos, rec in enumerate(recs):   # only one record's title gives that title
        for t in _site_suffixed(rec.title):
            cut.setdefault(title_key(t), set()).add(pos)
    for t, poses in cut.items():
        if len(poses) == 1:
            by_title.setdefault(t, min(poses))
    # then the same page under the other scheme or without "www." ("http://a.org/x" for the
    # record's "https://www.a.org/x"), as an author copies a link: one record's page, the first's
    loose: dict[str, int] = {}
    for pos, rec in enumerate(recs):
        if (lk := _loose_key(canon(rec.url))) is not None:
            loose.setdefault(lk, pos)
    entries = parse_reference_entries(removed_references)

    def by_urls(urls: Iterable[str]) -> int | None:
        keys = []
        for u in urls:
            u = u.strip()
            if not u:
                continue
            if u.lower().startswith("www."):
                u = "https://" + u
            hit = by_url.get(canon(u))
            if hit is not None:
                return hit
            keys.append(_loose_key(canon(u)))
        return next((loose[k] for k in keys if k is not None and k in loose), None)

    entry_hit: dict[int, int | None] = {}  # each entry is read once, however many markers cite it

    def by_entry(n: int) -> int | None:
        if n not in entry_hit:
            urls, titles = entries[n]
            hit = by_urls(urls)
            if hit is None and not urls:  # an entry's own url says what it was: no title guess
                hit = next((by_title[t] for t in map(title_key, titles) if t in by_title), None)
                if hit is None and titles and (site := _TITLE_SITE.search(titles[0])) is not None:
                    # "Apple sales (apple.com)": the title, from a record on that site only
                    pos = by_title.get(title_key(titles[0][:site.start()]))
                    if pos is not None and _on_site(recs[pos].url, site.group(1)):
                        hit = pos
                if hit is None and titles:    # "\"Apple sales.\" *Apple*, 2023, a.org/x."
                    hit = by_urls("https://" + u.group(0).rstrip(".,;:")
                                  for u in _SCHEMELESS.finditer(titles[0]))
            entry_hit[n] = hit
        return entry_hit[n]

    out: dict[int, int | None] = {}
    for m in markers:
        # "【turn0search3】" names a record id, nothing else (its number comes first, before a
        # number beside it: "(see [1], [web:2])")
        for n, ident in zip(m.numbers, m.ids, strict=False):
            out[n] = by_id.get(ident)
        for n in m.numbers[len(m.ids):]:
            if out.get(n) is not None:
                continue
            # each its own URL: "([oai_citation:1‡A](https://a…), [oai_citation:2‡B](https://b…))"
            hit = by_urls(m.urls[m.numbers.index(n):][:1] if len(m.urls) == len(m.numbers) > 1 else m.urls)
            if m.linked:               # the link goes where its body definition says, nowhere else
                out[n] = by_urls(m.urls[m.numbers.index(n):][:1]) if len(m.urls) > 1 else hit
                continue
            if hit is None and n in entries:
                hit = by_entry(n)
            if hit is None and n > 0 and n not in entries and not m.urls:
                hit = by_id.get(str(n))    # only when nothing else defines what [n] was
            out[n] = hit
    return out


#: Old markers resolved through one of several lists (`resolve_in_scopes`) carry their numbers
#: plus this times the list's place (1, 2, …), so that "[1]" of one section is not "[1]" of the next;
#: written numbers have at most four digits, and `n % SCOPE_STEP` gives back the written one.
SCOPE_STEP = 10_000


def resolve_in_scopes(
    markers: list[ExistingMarker], text: str, scopes: Sequence[tuple[int, int, int, int]], recs: list[Record]
) -> tuple[list[ExistingMarker], dict[int, int | None]]:
    """`resolve_existing` for a report with one references list per section
    (`tracer.markdown.section_references`): each marker in a list's scope (scope start, scope end,
    list start, list end; offsets of `text`) resolves through that list alone, one outside every
    scope through none. Numbers are made apart per list (`SCOPE_STEP`); a marker's synthetic
    (negative) numbers, which name record ids or links, stay as they are."""
    groups: dict[int, list[ExistingMarker]] = {}
    for m in markers:
        k = next((i for i, (a, b, _c, _d) in enumerate(scopes) if a <= m.start < b), -1)
        groups.setdefault(k, []).append(m)
    resolved: dict[int, int | None] = {}
    renumbered: dict[int, ExistingMarker] = {}     # id(marker) -> the marker with its numbers apart
    for k, group in groups.items():
        found = resolve_existing(group, text[scopes[k][2]:scopes[k][3]] if k >= 0 else "", recs)
        shift = (k + 1) * SCOPE_STEP
        resolved.update({n + shift if n > 0 else n: r for n, r in found.items()})
        for m in group:
            renumbered[id(m)] = replace(m, numbers=tuple(n + shift if n > 0 else n for n in m.numbers))
    return [renumbered[id(m)] for m in markers], resolved


__all__ = [
    "MARKER_RE",
    "SOURCE_NOTE_RE",
    "strip_markers",
    "unmarked",
    "without_runs",
    "marker_runs",
    "run_blanks",
    "opening_runs",
    "RUN_JOIN",
    "find_existing_markers",
    "resolve_existing",
    "resolve_in_scopes",
    "SCOPE_STEP",
    "parse_reference_entries",
]
