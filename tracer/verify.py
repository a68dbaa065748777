"""Support of one (sentence, passage) pair: a calibrated score, a match kind and the
evidence span in the record. The gate no citation passes without, whoever proposed it.

Signals (each 0..1): IDF-weighted coverage of the sentence's content words by the passage,
bigram coverage (word bigrams in English, character bigrams in Chinese), fuzzy alignment of
the best window (rapidfuzz), agreement of numbers (a number the record never states is
strong evidence against support), coverage of named entities, and how the record ranks
against the request's other records. They are combined by a logistic model whose weights
live in `tracer.options.Tuning` and were calibrated on the dev benchmark (docs/quality.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from rapidfuzz import fuzz

from tracer.conflict import (
    CLAUSE_OPENERS,
    EN_NEGATIONS,
    EN_PREFIXES,
    EN_QUALIFIERS,
    IF_WORDS,
    Conflict,
    RecordStems,
    asked,
    cause_addition,
    clause_addition,
    direction_conflict,
    en_figure_subject,
    figure_change_conflict,
    framed,
    quote_addition,
    quote_conflict,
    rank_conflict,
    unnamed_speaker,
    year_role_conflict,
    zh_clause_figure,
    zh_other_place,
)
from tracer.existing import LABELLED_PAREN_RE as _LABELLED_MARKER
from tracer.existing import MARKER_RE, SOURCE_NOTE_RE, ZH_SOURCE_WORK, without_runs
from tracer.models import Record, Sentence, Support
from tracer.options import Tuning
from tracer.retrieve import PassageIndex
from tracer.text import (
    ACRONYM,
    DIGIT_NOTE_END,
    NEVER_END,
    Quantity,
    StatedUnits,
    abbreviations,
    acronyms,
    approximate_figures,
    cjk_bigrams,
    code_stated,
    content_tokens,
    display_number,
    figures_instead,
    glued_numbers,
    near_figures,
    normalize_for_match,
    note_after,
    numbers_agreement,
    numbers_and_units,
    numeric_dates,
    scale_slip,
    spelled_numbers,
    spelled_out,
    stated_numbers,
    stated_units,
    tokens,
    unstated_numbers,
    whole_name,
)

_ANSWER_REACH = 200   # characters after a quote read for the answer to a question it asks
_MAX_WRITTEN = 64     # phrases a request's records are read for (`Verifier.written`)
_MARKER = re.compile(r"\[(?:\^?\d+(?:\s*[,，\-–]\s*\d+)*|citation:\d+)\]|【\d+】"
                     r"|<sup>[^<\n]{0,200}</sup>")
# markdown emphasis around part of a sentence ("delivered **1.81 million** vehicles", "*about*"):
# the delimiters are no words of the claim, and kept they break the verbatim check
# struck out, the writer took it back: "~~8.5~~" (not "20~~25度", a range between figures)
# (a letter or digit next to the delimiters makes no emphasis; a Chinese character does: "达到**302万辆**")
_STRUCK = re.compile(r"(?<![A-Za-z0-9_~\\])~~(?=[^\s~])[^~\n]{1,300}?(?<=[^\s~\\])~~(?![A-Za-z_~])")
# a pair of "**" or "__" around words ("**1.81 million**", "__deal__"), not "2**64" or "char **argv"
_EMPHASIS = re.compile(
    r"(?<![A-Za-z0-9_*\\])(\*\*|__)(?=[^\s*_])([^\n]{1,300}?)(?<=[^\s*_\\])\1(?![A-Za-z0-9_*])")
_STAR_EMPHASIS = re.compile(r"(?<![\w*\\])\*(?=[^\s*])([^*\n]{1,300}?)(?<=[^\s*\\])\*(?![\w*])")
# emoji, their joiners and variation selectors: "across 👍", "🚀 Launch"
_EMOJI = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\uFE0F\u200D]")
# (a run's first character only starts a match: tried from each character of a long run of commas or
# quotes inside a sentence, the search was quadratic)
_TRAILING_PUNCT = re.compile(r"(?<![\s.!?;:,。！？；：，…\"'”’)）\]])[\s.!?;:,。！？；：，…\"'”’)）\]]++$")
# End of a record sentence: terminal punctuation (with closing quotes) before space, or a line break.
# (each alternative opens with a literal character, so the regex engine looks only where one of them
# is; see `tracer.text._NUMBER`)
_SENTENCE_END = re.compile("|".join(
    [rf"\{c}(?<![.!?]\{c})[.!?]*+[\"'”’)）\]]*+(?=\s|$)" for c in ".!?"]
    + [rf"{c}[。！？]*+[”’）」』]*+" for c in "。！？"] + [r"\n\n*+"]))
# the word a period follows ("Inc", "e.g", "U.S"), and the first letter after the whitespace
_WORD_BEFORE_DOT = re.compile(r"(?<![A-Za-z.])(?:[A-Za-z]+\.)*[A-Za-z]+$")
_NEXT_NON_SPACE = re.compile(r"[ \t]*+([A-Za-z])")
# a label opening a sentence ("Note: Hybrid projects …", "*Background:* …"): what follows it opens
# the sentence, and its capital is no name's
_LEAD_LABEL = re.compile(r"[*_]{0,2}[A-Za-z][\w-]*(?: [\w-]+)?[*_]{0,2}:[*_]{0,2}\s+")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-zA-Z\u00c0-\u024f]+(?:\s+[A-Z][a-zA-Z]+)*)")
_CODE_RUNS = re.compile(r"[a-z]+|[0-9]+(?:\.[0-9]+)?")
_DIGIT_RUNS = re.compile(r"[0-9]+")
_SUBSCRIPT_DIGITS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
_PLAIN_FIGURE = re.compile(r"\d+(?:\.\d+)?")
_LINK = re.compile(r"!?\[([^\[\]\n]*+)\]\((?:[^()\s]++|\([^()\s]*+\))*+(?:\s+\"[^\"\n]*+\")?\)")
# bounded: linear; a quoted attribute may hold ">" ('<abbr title="a > b">')
_HTML_TAG = re.compile(
    r"<!--[\s\S]{0,400}?-->|</?[A-Za-z](?:\"[^\"\n]{0,400}+\"|'[^'\n]{0,400}+'|[^<>\"'\n]){0,400}+>")
_BARE_URL = re.compile(r"(?:https?://|www\.)[^\s<>()\[\]“”\u3000-\u303f\uff00-\uffef\u4e00-\u9fff]+")
# an author-year citation's names: "Smith", "World Bank" (not "FY", "Q4" or "June": "(FY 2023)",
# "(June 2018)" date the claim)
_NAME_WORDS = (r"(?!(?:FY|CY|Q[1-4]|H[12]|YTD|FQ[1-4]?|Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May"
               r"|June?|July?|Aug(?:ust)?|Sep(?:t|tember)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?|Spring"
               r"|Summer|Autumn|Fall|Winter|Early|Late|Mid|As of|Since|Until|By|In|From)\b)"
               r"(?-i:[A-Z])[\w'’.-]{0,40}"
               r"(?:[ \t]+(?-i:[A-Z])[\w'’.-]{0,40}){0,2}")
_AUTHOR = rf"{_NAME_WORDS}(?:[ \t]+(?:et[ \t]+al\.?|(?:and|&)[ \t]+{_NAME_WORDS}))?"
_AUTHOR_YEAR = rf"{_AUTHOR},?[ \t]+(?:19|20)\d\d[a-z]?"
_CITE_CUE = r"(?:(?:see|e\.g\.,?|cf\.)[ \t]+)?"
# Brackets that say where a fact comes from, or what a Chinese name is in English, not what the
# sentence claims: "（数据来源：中国汽车动力电池产业创新联盟）", "(Source: IEA)", "华为（Huawei）"
_ASIDE = re.compile(
    r"[（(][ \t]*(?:数据来源|资料来源|信息来源|来源|出处|source|sources|data source)[ \t]*[:：]"
    r"[^（）()\n]{0,80}[)）]"
    r"|(?<=[\u4e00-\u9fff])[（(][A-Za-z][A-Za-z .&'’-]{0,40}[)）]"
    # an author-year citation, "(Avgerinos et al., 2018)", "(Smith & Lee, 2020; Wu, 2021a)": its year
    # dates the source, not the claim
    rf"|[(（][ \t]*{_CITE_CUE}{_AUTHOR_YEAR}(?:[ \t]*[;,][ \t]*{_AUTHOR_YEAR})*[ \t]*[)）]",
    re.IGNORECASE,
)
# a Pandoc citation key in the text, with its year: "@smith2020", "-@lee2021a" (not "@NASA", a handle)
_PANDOC_NARRATIVE = re.compile(r"(?<![\w.@])-?@[A-Za-z][\w:.-]*?\d{4}[a-z]?\b")
_NOTE_FIGURE = re.compile(r"\d+(?:[.,]\d+)*")
_NOTE_DATE = re.compile(r"\d{4}年(?:\d{1,2}月(?:\d{1,2}日)?)?|\d{4}[-/.]\d{1,2}(?:[-/.]\d{1,2})?")


def _aside_blank(m: re.Match[str]) -> str:
    """A source note goes, unless it states a figure other than a year or date ("（数据来源：中汽协，
    全年销量949.5万辆）" claims 949.5万辆; "(Source: IEA, 2024)", "（来源：中汽协，2024年1月）" nothing)."""
    figures = _NOTE_FIGURE.findall(_NOTE_DATE.sub(" ", m.group(0)))
    if any(not (len(f) == 4 and f.isdigit() and 1900 <= int(f) <= 2100) for f in figures):
        return m.group(0)
    return " "


# (the words "not", "no", "never", "neither", "nor", "without", "cannot" in any case, and "n't" ending
# a word: "didn't", "won’t"; as `_SENTENCE_END`, each alternative opens with a literal character,
# in both cases: one case-insensitive pattern scans four times slower)
_NEGATION = re.compile("|".join(
    [rf"{n}(?<!\w{n})(?i:ot|o|ever|either|or)\b|{n}['’](?i:t)\b" for n in "nN"]
    + [rf"{w}(?<!\w{w})(?i:ithout)\b" for w in "wW"] + [rf"{c}(?<!\w{c})(?i:annot)\b" for c in "cC"]
    + ["不|没有|未|无|非"]))

# A near-verbatim quote (fuzzy alignment >= 0.95 over a sentence of 5+ content words, every
# number stated) is support whatever the lexical model says about a small record set.
NEAR_EXACT_FUZZY = 0.95
NEAR_EXACT_MIN_LENGTH = math.log(1 + 5)
NEAR_EXACT_SCORE = 0.9
# A claim copied from one record sentence word for word (`Verifier._near_copy`): scored as a
# near-verbatim quote however few passages the request has (IDF over three passages makes every
# word look common, and "It orbits about 540 km above Earth." scored 0.52 against "It orbits
# about 540 km above the Earth."). The words it may leave out or write otherwise: articles, and
# a leading pronoun for a thing's name ("Its primary mirror …" for "Webb's primary mirror …"; not
# "he" or "she", which may stand for another person of the record). Nothing else: a differential
# sweep found that letting one word of the record drop out cited "often", "proposed", "anti-",
# "West" (Indies) and "million" dropped. (Each set holds the words as `tracer.text.tokens` reads
# them: stems, jieba's words.)
_COPY_ARTICLES = frozenset(tokens("a an the"))
_COPY_PRONOUNS = frozenset(tokens("it its they their them this these those 它 其 该 此 这 它们"))
_COPY_MIN_WORDS = 4
_YEAR_TOKEN = re.compile(r"(?:1[5-9]|20)\d\d\Z")

# A pair whose evidence quote contradicts the sentence (`tracer.conflict`: the opposite word, a
# negation only one side has, another figure or name in the same place) scores at most this and
# is labelled CONTRADICTED, which no threshold selects: it is never cited, and may stay a near
# miss with the conflict as its reason.
CONFLICT_SCORE = 0.3
# The most a claim made only of figures can score short of an exact quote (`_Claim.figures_only`).
FIGURES_ONLY_SCORE = 0.3
CONTRADICTED = "contradicted"
AROUND_QUOTE = 200  # characters of the record either side of a quote that may answer a negation


def sentences_around(content: str, start: int, end: int) -> str:
    """The record sentences on either side of a quote, at most AROUND_QUOTE characters each: a
    negation the quote leaves out may stand there ("…nominated in 2010. It did not win.")."""
    before = _record_sentences(content[max(0, start - AROUND_QUOTE):start])
    after = _record_sentences(content[end:end + AROUND_QUOTE])
    lo, hi = max(0, start - AROUND_QUOTE), end
    return "\n".join([content[lo + before[-1][0]:lo + before[-1][1]] if before else "",
                      content[hi + after[0][0]:hi + after[0][1]] if after else ""])

FEATURES = ("coverage", "bigram", "fuzzy", "numbers", "entity", "rank", "length", "negation",
            "window", "matched", "missing",
            # interactions: lexical support counts for more when the record also ranks first
            "coverage*rank", "window*rank", "matched*rank", "coverage*window", "rank^2", "window^2")


@dataclass(frozen=True, slots=True)
class PairFeatures:
    coverage: float
    bigram: float
    fuzzy: float
    numbers: float      # share of the sentence's numbers that the record states (1 if none)
    entity: float       # share of the sentence's capitalised names found in the passage
    rank: float         # retrieval score of this record relative to the best record (0..1)
    length: float       # log of the sentence's content-word count
    negation: float     # 1 when exactly one side is negated
    window: float       # IDF-weighted coverage inside the best window of the passage
    matched: float      # log(1 + IDF mass of the sentence's words found in the window)
    missing: float      # log(1 + IDF mass of the sentence's words the window lacks)
    exact: bool

    def vector(self) -> list[float]:
        return [self.coverage, self.bigram, self.fuzzy, self.numbers, self.entity, self.rank,
                self.length, self.negation, self.window, self.matched, self.missing,
                self.coverage * self.rank, self.window * self.rank, self.matched * self.rank,
                self.coverage * self.window, self.rank * self.rank, self.window * self.window]


@dataclass(frozen=True, slots=True)
class _Claim:
    """Per-sentence data shared by all of its candidate pairs."""

    toks: list[str]
    weights: list[float]
    total: float
    pairs: list[tuple[str, str]]
    cjk: list[str]
    norm: str
    core: str           # `norm` without trailing punctuation and closing quotes (for exact quotes)
    numbers: set[str]
    units: dict[str, Quantity]  # the unit of each number that has one
    entities: frozenset[str]
    negated: bool
    # Written as an acronym or spelled out, a name is the same name: the claim's acronyms with
    # their word token ("NASA", "nasa"), and its runs of capitalised words with the acronyms
    # they may be written as and their word tokens ("FDA", ("food", "drug", "administr")).
    acronyms: tuple[tuple[str, str], ...] = ()
    expansions: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # figures a near value states too: hedged ("约300万", "about $10 billion") or rounded ("62%")
    approx: dict[str, tuple[str, str]] = field(default_factory=dict)
    # whole figures the claim writes in words only ("千三年"): a record may write them so, year-like or not
    in_words: frozenset[str] = frozenset()

    @property
    def figures_only(self) -> bool:
        """The claim says nothing but figures ("It was 40% in 2023."): no word and no Chinese
        character of it can match, so a record stating the same figures supports nothing."""
        return bool(self.toks) and not self.cjk and all(t[:1].isdigit() for t in self.toks)


def _entities(text: str) -> frozenset[str]:
    """A claim's capitalised names, lower-cased: not its first word's, nor the first after a label
    that opens it ("Note: Hybrid projects …")."""
    lead = _LEAD_LABEL.match(text)
    return frozenset(e.lower() for e in _CAPITALISED.findall(text[lead.end():] if lead else text))


# a source's label of a letter (or 文献) and its number, alone in brackets where a clause ends or
# beside another marker: "… in 2023 [S1].", "[R2, R3]", "[文献2]。" (the tracer does not read them as
# citations, docs/styles.md; nor is "S1" a code the record must state). Not "the [S1] model".
_LETTER_LABEL = re.compile(
    r"\[(?:[A-Z]|文献)\d{1,4}(?:[ \t]*[,，、;；][ \t]*(?:[A-Z]|文献)?\d{1,4})*\]"
    r"(?=[ \t]*(?:[.!?。！？;；,，:：)）\]】\[]|\Z))")


def sentence_query(text: str) -> str:
    """The claim a sentence makes: without citation markers (of every form `tracer.existing`
    reads, "[[2]](url)" too), link and image targets (their text stays), HTML tags and bare URLs,
    which say where something is, not what the sentence claims, nor a bracketed source note
    ("（数据来源：…）", "(Source: …)", "(Source 2)") or an English gloss of a Chinese name
    ("华为（Huawei）")."""
    if ("[" in text or "<" in text or "【" in text or "［" in text or "〔" in text or "\ue200" in text
            or "citeturn" in text   # ChatGPT's marker copied without its private-use characters
            or _LABELLED_MARKER.search(text)):   # "(ref. 2)", "（来源：2）"
        # without what joins a run's markers too ("出口【来源5】, [2]量" is "出口量"), as the output
        # reads once they are gone (`tracer.existing.unmarked`)
        text = _MARKER.sub(_marker_gap, without_runs(_unframed(text), gap=_gap, blanks=False))
        text = _LINK.sub(r" \1 ", text)
        text = _HTML_TAG.sub(" ", text)
    if "://" in text or "www." in text:
        text = _BARE_URL.sub(" ", text)
    if "（" in text or "(" in text:
        text = _ASIDE.sub(_aside_blank, text)
        text = SOURCE_NOTE_RE.sub(_marker_gap, text)   # "(Source 2)": which source, not what it says
    if "@" in text:   # a Pandoc key cited in the text ("@smith2020 argues …"): which source
        text = _PANDOC_NARRATIVE.sub(" ", text)
    if "*" in text or "_" in text or "~" in text:
        text = _STAR_EMPHASIS.sub(r"\1", _EMPHASIS.sub(r"\2", _STRUCK.sub("", text)))
    text = _EMOJI.sub("", text) if _EMOJI.search(text) else text
    if "[" in text:
        text = _LETTER_LABEL.sub(" ", text)   # "… in 2023 [S1].": which source, not a code it states
    if ("Fig" in text or "Table" in text or "Exhibit" in text or "Appendix" in text or "Chart" in text
            or "图" in text or "表" in text):
        text = _CROSS_REF.sub(" ", text)
        text = _POINTER_LEFT.sub("", text)   # "See [Figure 1] and [Table 2]: X" is X
    left = _LEFT_FRAME.match(text)
    if left and left.end() and left.end() < len(text):
        text = text[left.end():]
    if "ccording to" in text or " in" in text or " by" in text or "ased on" in text:   # (" in,": tidied)
        text = _FRAME_REMNANT.sub("", text)
    for _ in range(2):   # "此外，值得注意的是，X"
        opening = _OPENING.match(text)
        if not opening or opening.end() >= len(text):
            break
        text = text[opening.end():]
    if text[-1:].isdigit() and (note := DIGIT_NOTE_END.search(text)) and note_after(text, note.start() - 1):
        text = text[:note.start()]   # "… in 2023.2": a note copied as digits, not the figure 2023.2
    return text


# A source named as a word of the sentence frames the claim rather than stating it: "According
# to [1], X", "[4] found that X", "X, as reported by [2].", "如[1]所述，X", "据[2]报道，X",
# "[3]指出，X". The frame's words are no part of X for a record to support (a record never
# says "according to …" of itself), so the claim is X alone. Read on the sentence with each
# marker as one placeholder character; only frames around a marker, so "According to the WHO,
# X" keeps its words.
_PLACEHOLDER = "\ue000"
_CONJ = r"(?:(?:and|or)\b|&|和|及|与|或)"
_RUN = (rf"{_PLACEHOLDER}(?:[ \t]*(?:(?:[,，、;；]|{_CONJ})[ \t]*){{0,3}}{_PLACEHOLDER})*"
        # and what a removed last member left ("According to [1] and , X")
        rf"(?:[ \t]*(?:{_CONJ}|[,，、;；](?=[ \t]*(?:{_CONJ}|[,，、;；]))))*")
_EN_VERB = (r"(?:shows?|showed|shown|found|finds|reports?|reported|notes?|noted|argues?|argued|suggests?"
            r"|suggested|states?|stated|describes?|described|estimates?|estimated|claims?|claimed"
            r"|indicates?|indicated|observes?|observed|concludes?|concluded|explains?|explained)")
_ZH_VERB = (r"(?:所述|所示|所言|所说|所指出的?|所指|中提到|中指出|报道|指出|显示|表明|认为|发现|提出|强调"
            r"|统计|调查)")
# the verbs after 如 ("as …"): not 发现 or 认为, after which 如 is "if" ("如发现问题")
_AS_VERB = r"(?:所述|所示|所言|所说|所指出的?|所指|中提到|中指出|报道|指出)"
_FRAME = re.compile(
    # "According to [1], X", "As shown in [2] and [3], X", "In [1], Smith showed …"
    rf"^[ \t]*(?:according to|as (?:shown|reported|described|noted|discussed|stated|found|defined|cited"
    rf"|proposed|explained|seen) (?:in|by)|as in|based on|per|in|following|citing|from)[ \t]+{_RUN}"
    rf"[ \t]*(?:[,，:：][ \t]*)?"
    # "[4] found that X", "[1], [2] report X" (a verb in lower case: "[1] Reports show …" is not one)
    rf"|^[ \t]*{_RUN}[ \t]*(?:,[ \t]*)?(?-i:{_EN_VERB})\b(?:[ \t]+that\b)?[ \t]*(?:[,:][ \t]*)?"
    # "X, according to [1]." / "X, as reported by [2], …"
    rf"|(?:[,，][ \t]*)?\b(?:according to|as (?:shown|reported|described|noted|stated|found) (?:in|by))"
    rf"[ \t]+{_RUN}"
    # "如[1]所述，X", "正如[2]所示：X" (the verb needed), "据[2]报道，X", "根据[1]的数据，X" (or not)
    rf"|(?:^|(?<=[\s，。；：、（(“「>]))(?:(?:正如|诚如|如)[ \t]*{_RUN}[ \t]*{_AS_VERB}"
    rf"|(?:据|根据|依据)[ \t]*(?:文献|资料)?[ \t]*{_RUN}[ \t]*"
    rf"(?:{_ZH_VERB}|{ZH_SOURCE_WORK}"
    rf"(?:{_ZH_VERB})?)?)[ \t]*(?:[，,：:][ \t]*)?"
    # "[3]指出，X", "[1]、[2]研究发现：X"
    rf"|^[ \t]*{_RUN}[ \t]*(?:[，,、][ \t]*)?(?:{_ZH_VERB}|研究(?:发现|表明|显示|指出))"
    rf"[ \t]*(?:[，,：:][ \t]*)?",
    re.IGNORECASE)


# ...and what such a frame leaves once its markers are gone (a trace removed them, or the author
# wrote "[4] found that" before the sentence began): "In , X", "According to  and , X", "found
# that X", "如所述，X", "据报道，X", "指出，X" at the claim's start, "X, according to ." inside it.
# None of these opens a sentence otherwise (no dev sentence does), so a claim reads the same
# whether its frame still has its markers or not, and a second trace reads it as the first did.
_LEFT_SEP = r"(?:(?:[,，、;；]|and|or|&|和|及|与|或)[ \t]*)*"
_LEFT_FRAME = re.compile(
    rf"[ \t]*(?:according to|as (?:shown|reported|described|noted|discussed|stated|found|defined|cited"
    rf"|proposed|explained|seen) (?:in|by)|as in|based on|per|in|following|citing|from)[ \t]*"
    rf"{_LEFT_SEP}[,，:：][ \t]*"
    rf"|[ \t]*{_LEFT_SEP}(?-i:{_EN_VERB})\b(?:[ \t]+that\b)?[ \t]*(?:[,:][ \t]*)?"
    rf"|[ \t]*(?:(?:正如|诚如|如)[ \t]*{_LEFT_SEP}{_AS_VERB}"
    rf"|(?:据|根据|依据)[ \t]*(?:文献|资料)?[ \t]*{_LEFT_SEP}(?:{_ZH_VERB}|{ZH_SOURCE_WORK}"
    rf"(?:{_ZH_VERB})?)|{_LEFT_SEP}(?:所述|所示|所言|所说|中提到|中指出|指出)"
    rf"|(?:(?:[,，、;；]|和|及|与|或)[ \t]*)+(?:报道|显示|表明|认为|提出|发现|统计))"
    rf"[ \t]*(?:[，,：:][ \t]*)?",
    re.IGNORECASE)
# ... and what such a frame leaves where its markers were removed ("X, according to ." or, run on,
# "… As shown in , X", "… According to  and , X"): nothing after the frame's words but the
# conjunctions of a run and punctuation
# a pointer to the document's own figures and tables ("[Figure 1]", "(see Table 2)", "Fig. 3",
# "（见图1）", "如表2所示"): where to look, so its number is no figure the claim states
_CROSS_REF = re.compile(
    r"[\[(（][ \t]*(?:(?:see|cf\.)[ \t]+)?(?:Fig(?:ure)?s?\.?|Tables?|Exhibits?|Appendix|Charts?)[ \t]*"
    r"\d+(?:\.\d+)?[a-z]?(?:[ \t]*(?:,|and|&|–|-)[ \t]*\d+(?:\.\d+)?[a-z]?)*[ \t]*[\])）]"
    r"|\b(?:Fig(?:ure)?s?\.?|Tables?|Exhibits?|Appendix|Charts?)[ \t]+\d+(?:\.\d+)?[a-z]?\b(?![.,]\d)"
    r"|[（(][ \t]*(?:见|参见|详见)?[图表][ \t]*\d+[ \t]*[)）]|如[图表][ \t]*\d+所示")
_POINTER_LEFT = re.compile(r"^[ \t]*(?i:see|refer to|cf\.)(?:[ \t]+(?:and|&)|[ \t]*,)*[ \t]*[:：][ \t]*")
_FRAME_REMNANT = re.compile(
    r"(?:[,，][ \t]*)?\b(?:according to|as (?:shown|reported|described|noted|discussed|stated|found"
    r"|defined|cited|proposed|explained|seen) (?:in|by)|based on)(?:[ \t]+(?:and|or|&)\b)*"
    r"[ \t]*(?=[.,;:!?)]|\Z)", re.IGNORECASE)


# A sentence's opening connective ("此外，", "值得注意的是，", "Additionally,", "It is worth noting that")
# says how it joins the report, not what a record states: its words only dilute the claim's
# (before, "值得注意的是，" cost 32 of dev's 182 right Chinese citations, "It is worth noting that" 24
# of the 305 English ones; `scripts/perturb --frame`). English openings that say how the sentence
# stands to the rest ("However,", "In summary,", "Therefore,") stay: taken out, they cost
# cross-validated precision (docs/quality.md).
_OPENING = re.compile(
    r"[ \t]*(?:(?:Additionally|In addition|Moreover|Furthermore|Also|Notably|Importantly"
    r"|Interestingly),[ \t]*"
    r"|It is (?:also )?(?:worth noting|worth mentioning|important to note|notable|noteworthy) that[ \t]+"
    r"|It should (?:also )?be noted that[ \t]+|Note that[ \t]+"
    r"|(?:此外|另外|同时|与此同时|然而|但是|不过|首先|其次|再次|最后|例如|比如|因此|所以|因而"
    r"|总的来说|总体而言|总体来说|总而言之|综上所述|总之|具体来说|具体而言|具体来看|一般来说|通常来说"
    r"|另一方面|再者|而且|并且|其中|值得注意的是|需要注意的是|值得一提的是|需要指出的是|换句话说"
    r"|也就是说|事实上|实际上)[ \t]*[，,：:][ \t]*)")


def _unframed(text: str) -> str:
    """`text` without the frames (`_FRAME`) around its markers, markers included; unchanged when
    it has none."""
    spans = [(m.start(), m.end()) for m in MARKER_RE.finditer(text)]
    if not spans:
        return text
    placeheld: list[str] = []
    where: list[int] = []   # the original offset of each character of `placeheld`
    at = 0
    for a, b in spans:
        placeheld.append(text[at:a])
        where.extend(range(at, a))
        placeheld.append(_PLACEHOLDER)
        where.append(a)
        at = b
    placeheld.append(text[at:])
    where.extend(range(at, len(text) + 1))   # and one past the end
    ends = {a: b for a, b in spans}
    framed = "".join(placeheld)
    cuts = [(where[m.start()], ends.get(where[m.end() - 1], where[m.end() - 1] + 1))
            for m in _FRAME.finditer(framed) if m.end() > m.start()]
    if not cuts:
        return text
    out, at = [], 0
    for a, b in cuts:
        out.append(text[at:a])
        at = b
    out.append(text[at:])
    return "".join(out)


def _marker_gap(m: re.Match[str]) -> str:
    return _gap(m.string, m.start(), m.end())


def _gap(text: str, a: int, b: int) -> str:
    """What a marker leaves in the claim: the text as it reads without it ("据文献[1]报道" is
    "据文献报道", one run for the word segmenter; "35.5%[1]。" is "35.5%。"), but a space where
    removing it would join two words ("fact[1]next")."""
    if a and b < len(text) and text[a - 1].isalnum() and text[b].isalnum() \
            and not (_HAN.match(text, a - 1) or _HAN.match(text, b)):
        return " "
    return ""


_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_FUZZY_CHUNK = 300
# a clause of a record sentence, for what qualifies a figure ("…cost $10 billion, and its propellant is
# expected to last…": the hedge is another clause's); not the comma of "1,000" or the colon of "13:20"
_CLAUSE = re.compile(r"(?<!\d)[,:，：]|[,:，：](?!\d)|[;；—]|\bbut\b|\bwhile\b|\bwhereas\b|但是|但|而")
# a subject that names no thing: a year or a total ("2023", "Total", "合计")
_NO_THING = frozenset({"total", "totals", "subtotal", "average", "sum", "overall", "all", "合计", "总计",
                       "小计", "平均", "总体", "全部"})


def _names_a_thing(subject: str) -> bool:
    """Whether a table row's subject names a thing another row's text could be about, not a
    year, a month, a quarter or a total ("2023年", "Q1 2023", "Total:")."""
    words = _NOT_A_NAME.sub(" ", sentence_query(subject)).strip(" \t:：*_")
    return words.casefold() not in _NO_THING and re.search(r"[^\W\d_]", words) is not None


# a sentence that goes on about what the one before named ("It was launched in 1990.")
_GOES_ON = re.compile(r"\s*(?:It|Its|It's|They|Their|This|That|These|Those|He|She|His|Her|"
                      r"The (?:company|firm|group|telescope|drug|trial|model|car|device|country|economy))\b")
# a figure glued to a name by a hyphen ("SURMOUNT-1", "COVID-19", "F-35"): part of the name
_CODE_FIGURE = re.compile(r"\b[A-Za-z]+-\d+\b")
_NOT_A_NAME = re.compile(r"\d+|年度|季度|[年月日号]|\b(?:Q[1-4]|H[12]|FY)\b")
# what a company's name adds that a page about it often leaves out ("Apple Inc.": "Apple")
_NAME_SUFFIX = re.compile(
    r"(?<![,\s])[,\s]++(?:Inc|Corp|Corporation|Co|Company|Ltd|Limited|PLC|LLC|Group|Holdings|AG|SA|SE|NV|N\.V|GmbH)\.?$"
    r"|(?:股份)?有限公司$|集团$|公司$", re.IGNORECASE)


def subject_words(subject: str) -> list[str]:
    """The content words a record must have to name a table row's subject, its company suffix
    left out."""
    name = sentence_query(subject).strip()
    while (m := _NAME_SUFFIX.search(name)) is not None and m.start() > 0:
        name = name[:m.start()]
    return content_tokens(name)
# words that state a figure without asserting it: a denial, a hedge, a plan, someone's claim
# ("may" in lower case only: "in May 2023" is a date; "No. 1" is a number)
_FRAMED_EN = re.compile(
    r"\b(?:(?i:(?!no (?:later|more|less) than\b|not (?:only|just)\b)(?:not|no(?!\.)|never)|neither|nor|"
    r"cannot|can't|won't|isn't|aren't|wasn't|weren't|doesn't|don't|didn't|hasn't|haven't|without|might|could|would|"
    r"should|expect(?:s|ed|ing)?|anticipat\w+|plans? (?:to|for|a)|planned|planning|targets?|targeted|goals?|"
    r"guidance|projected|forecast(?:s|ed)?|aims?|aimed|aiming|on track|rumou?red|reportedly|allegedly|"
    r"claims?|claimed|denied|denies|deny|fell short|failed to|unconfirmed|speculat\w*|if)|may)\b")
# whole words only: "未来", "模拟", "若干", "阿波罗计划" say nothing of the kind
_FRAMED_ZH = re.compile(
    r"并未|尚未|未能|未达|未曾|未获|没有|没能|并非|不是|不会|不能|不支持|无法|可能|或将|或达|预计|预期|估计|有望|力争|"
    r"拟于|拟将|拟在|计划(?=\d|于|在|将|到|明年|今年|投资|交付|生产|推出)|曾计划|目标|声称|据称|据悉|传闻|否认|如果|"
    r"若是|假如")


def _fuzzy(claim: str, passage: str) -> float:
    """How well the claim aligns with its best part of the passage (rapidfuzz `partial_ratio`,
    0..1). Its cost grows with the product of the lengths and more, so a claim longer than
    400 characters (none on dev) is aligned in 300-character pieces and their scores averaged,
    weighted by length: a 1,200-character claim took 50 ms a pair, now about 1.5 ms."""
    if len(claim) <= 400:
        return fuzz.partial_ratio(claim, passage) / 100.0
    pieces = [claim[i:i + _FUZZY_CHUNK] for i in range(0, len(claim), _FUZZY_CHUNK)]
    return sum(fuzz.partial_ratio(p, passage) * len(p) for p in pieces) / (100.0 * len(claim))


def _may_be_in_words(value: str) -> bool:
    """Whether a figure (from `numbers`) could be written in words: a whole number that does not
    look like a year ("six", "two million", "fifteen hundred", "三千万"; not "45.5", "2021" or a
    date). Years are written in digits; "nineteen eighty-four" is not read either."""
    if value.startswith("d:") or not value.isdigit():
        return False
    n = int(value)
    return not 1000 <= n <= 2100 or n % 100 == 0


class Verifier:
    """Scores pairs for one request; caches per-record and per-passage derived data."""

    def __init__(self, index: PassageIndex, records: list[Record], tuning: Tuning) -> None:
        self.index = index
        self.records = records
        self.tuning = tuning
        self._model = tuning.model(index.lang)
        self._record_numbers: dict[int, set[str]] = {}
        self._record_units: dict[int, StatedUnits] = {}
        self._record_spelled: dict[int, tuple[set[str], StatedUnits]] = {}
        self._record_units_full: dict[int, StatedUnits] = {}
        self._record_digit_dates: dict[int, set[str]] = {}
        self._record_glued: dict[int, set[str]] = {}
        self._record_codes: dict[tuple[int, str], bool] = {}
        self._record_read_more: dict[tuple[int, bool, bool], set[str]] = {}
        self._record_values: dict[int, list[float]] = {}
        self._exact: dict[tuple[str, int], bool] = {}
        self._years: dict[tuple[str, int], bool] = {}
        self._stems: dict[int, RecordStems] = {}
        self._titled: dict[int, str] = {}   # a record's title and content, as one text (read once)
        self._record_runs: dict[int, set[str]] = {}
        self._record_norm: dict[int, str] = {}
        self._passage_bigrams: dict[int, frozenset[tuple[str, str]]] = {}
        self._passage_cjk: dict[int, frozenset[str]] = {}
        self._passage_positions: dict[int, dict[str, list[int]]] = {}
        self._passage_cache: dict[int, tuple[str, str, bool]] = {}
        self._passage_units: dict[int, tuple[list[tuple[int, int]], list[frozenset[str]]]] = {}
        self._passage_spelled: dict[tuple[int, str], list[int]] = {}
        self._passage_written: dict[int, dict[str, list[int]]] = {}
        self._claims: dict[str, _Claim] = {}
        self._copy_words: dict[str, list[str]] = {}   # sentence -> the words `_near_copy` looks for
        self._spans: dict[tuple[str, int], tuple[int, int]] = {}
        self._conflicts: dict[tuple[str, int], Conflict | None] = {}
        self._record_words: dict[int, frozenset[str]] = {}
        self._written: dict[str, tuple[bool, bool]] = {}
        # the claims of table rows (`Sentence.query`): their word order is their columns' order
        self.rows: frozenset[str] = frozenset()
        self._table_subjects: dict[int, list[str]] = {}   # table -> its rows' subjects
        self._subject_index: dict[int, dict[str, list[tuple[str, list[str], float]]]] = {}

    # -- cached record/passage data -------------------------------------------------
    def _numbers_of(self, record: int) -> set[str]:
        if record not in self._record_numbers:
            self._record_numbers[record] = stated_numbers(self.records[record].content)
        return self._record_numbers[record]

    def _stated_for(self, c: _Claim, record: int) -> tuple[set[str], StatedUnits | None]:
        """What the claim's numbers are checked against: everything the record states, with units
        when the claim gives units. The record's digits are read first; its figures in words
        ("six lanes", "三千万") only when the digits leave a whole figure unstated that could be
        written in words, and its dates in digits only ("2021.04.29") only when they leave a date
        unstated whose year the record contains. Reading more never makes a figure disagree, so
        these shortcuts give the full reading's answer at a fraction of its cost."""
        stated = self._numbers_of(record)
        units = self._units_of_record(record) if c.units else None
        missing = unstated_numbers(c.numbers, stated, c.units, units)
        if not missing:
            return stated, units
        # a number glued into a code ("X90") states a bare figure, not one with units ("90公里")
        written = self._written_as_codes(record, [v for v in missing
                                                  if v.startswith("c:") or v not in c.units])
        if c.approx:  # "约300万辆" or "超过300万辆" for 302.44万, "62%" for 61.9%
            written |= near_figures(c.approx, missing, self._values_of(record))
        if written:  # "RTX 4090" for the claim's "RTX4090", "RTX4090" for its "4090"
            missing = [v for v in missing if v not in written]
            if not missing:
                return stated | written, units
        # a figure in other units may be stated in words ("1.5 km": "fifteen hundred metres")
        words = any(_may_be_in_words(v) or v in c.units or v in c.in_words for v in missing)
        dates = any(v.startswith("d:") and self._has_year(record, v.split("-", 1)[0][2:]) for v in missing)
        if words and units is not None:
            units = self._units_with_spelled(record)
        if words or dates:
            key = (record, words, dates)
            more = self._record_read_more.get(key)
            if more is None:  # one union per record and reading, not one per pair
                more = set(stated)
                if words:
                    more |= self._spelled_of(record)[0]
                if dates:
                    more |= self._digit_dates_of(record)
                self._record_read_more[key] = more
            stated = more
            if words and c.approx:   # "两万七千余人" for the record's "二万七千八百余人"
                near = [float(v) for v in self._spelled_of(record)[0] if _PLAIN_FIGURE.fullmatch(v)]
                still = unstated_numbers(c.numbers, stated | written, c.units, units)
                written |= near_figures(c.approx, still, sorted(near))
        return (stated | written if written else stated), units

    def _code_runs_in(self, value: str, record: int) -> bool:
        """Whether the record writes each letter run and digit run of the code somewhere, as it
        must to state it ("c:RTX4090": "rtx" and "4090"); the record's runs are read once."""
        runs = self._record_runs.get(record)
        if runs is None:
            text = self.records[record].content.lower().translate(_SUBSCRIPT_DIGITS)
            # decimals whole and in parts: "2021.04.29" holds the code digits "2021" too
            runs = self._record_runs[record] = set(_CODE_RUNS.findall(text)) | set(_DIGIT_RUNS.findall(text))
        want = _CODE_RUNS.findall(value[2:].lower())
        if not want or not all(r in runs for r in want[:-1]):
            return False
        last = want[-1]  # a code's last letters may open a longer run ("si" in "six6")
        return last in runs or (last.isalpha() and any(r.startswith(last) for r in runs))

    def _has_year(self, record: int, year: str) -> bool:
        """Whether the record's text holds the year (a date's first part); once per record and year."""
        key = (year, record)
        got = self._years.get(key)
        if got is None:
            got = self._years[key] = bool(year) and year in self.records[record].content
        return got

    def _quotes(self, core: str, record: int) -> bool:
        """Whether the record holds the claim verbatim (normalised); once per claim and record,
        not once per candidate passage."""
        key = (core, record)
        got = self._exact.get(key)
        if got is None:
            got = self._exact[key] = _held_verbatim(core, self._norm_of(record))
        return got

    def _values_of(self, record: int) -> list[float]:
        """The record's figures as sorted values, for near matches; read once."""
        got = self._record_values.get(record)
        if got is None:
            got = sorted(float(v) for v in self._numbers_of(record) if _PLAIN_FIGURE.fullmatch(v))
            self._record_values[record] = got
        return got

    def _written_as_codes(self, record: int, missing: list[str]) -> set[str]:
        """Of a claim's figures that the record's plain reading lacks, those it writes in a code:
        a code itself, in any case and spacing ("c:RTX4090" as "rtx 4090"), or a whole number
        glued to letters ("4090" in "RTX4090"). Each code is looked up once per record, and the
        glued numbers are read once per record, only when a claim needs them."""
        content = self.records[record].content
        out = set()
        for value in missing:
            if value.startswith("c:"):
                key = (record, value)
                found = self._record_codes.get(key)
                if found is None:  # a set lookup first: most codes' runs are not in the record
                    found = self._record_codes[key] = self._code_runs_in(value, record) \
                        and code_stated(value, content)
                if found:
                    out.add(value)
            elif value.isdigit():
                glued = self._record_glued.get(record)
                if glued is None:
                    glued = self._record_glued[record] = glued_numbers(content)
                if value in glued:
                    out.add(value)
        return out

    def _spelled_of(self, record: int) -> tuple[set[str], StatedUnits]:
        """The figures the record writes in words, with their units; read once."""
        got = self._record_spelled.get(record)
        if got is None:
            units = StatedUnits()
            got = (spelled_numbers(self.records[record].content, units), units)
            self._record_spelled[record] = got
        return got

    def _units_with_spelled(self, record: int) -> StatedUnits:
        """The record's units in digits and in words together; merged once."""
        got = self._record_units_full.get(record)
        if got is None:
            got = self._units_of_record(record).merged(self._spelled_of(record)[1])
            self._record_units_full[record] = got
        return got

    def _digit_dates_of(self, record: int) -> set[str]:
        """The dates the record writes in digits only ("2021.04.29", "02/25/2015"); read once."""
        got = self._record_digit_dates.get(record)
        if got is None:
            got = numeric_dates(self.records[record].content)
            self._record_digit_dates[record] = got
        return got

    def unstated_numbers_in(self, sentence: str, record: int) -> list[str]:
        """The sentence's numbers, dates and quantities that the record (its position in
        `self.records`) does not state, as a reader would write them ("1200 ft", "2021-04-29")."""
        c = self._claim(sentence)
        return [display_number(v, c.units.get(v)) for v in self._unstated_values(c, record)]

    def figures_instead_in(self, sentence: str, record: int, quote: str) -> list[str]:
        """The figures `quote` (of that record) states of the same sorts as the sentence's figures
        the record does not state: what it likely says instead ("2.1%", "3.1%" for a sentence's
        "2.9%"). Empty when the record states them all, or when the quote has none of their sort."""
        c = self._claim(sentence)
        return figures_instead(c.numbers, self._unstated_values(c, record), c.units, quote,
                               sentence_query(sentence))

    def _unstated_values(self, c: _Claim, record: int) -> list[str]:
        if not c.numbers:
            return []
        stated, units = self._stated_for(c, record)
        return unstated_numbers(c.numbers, stated, c.units, units)

    def _units_of_record(self, record: int) -> StatedUnits:
        """The units the record states its numbers in; scanned only for claims that give units."""
        if record not in self._record_units:
            self._record_units[record] = stated_units(self.records[record].content)
        return self._record_units[record]

    def _norm_of(self, record: int) -> str:
        if record not in self._record_norm:
            self._record_norm[record] = normalize_for_match(self.records[record].content)
        return self._record_norm[record]

    def _bigrams_of(self, pid: int) -> frozenset[tuple[str, str]]:
        if pid not in self._passage_bigrams:
            toks = self.index.content_tokens_of(pid)
            self._passage_bigrams[pid] = frozenset(zip(toks, toks[1:], strict=False))
        return self._passage_bigrams[pid]

    def _positions_of(self, pid: int) -> dict[str, list[int]]:
        """Where each token occurs in the passage (built once, shared by every sentence)."""
        got = self._passage_positions.get(pid)
        if got is None:
            got = {}
            for i, tok in enumerate(self.index.tokens[pid]):
                got.setdefault(tok, []).append(i)
            self._passage_positions[pid] = got
        return got

    def _units_of(self, pid: int) -> tuple[list[tuple[int, int]], list[frozenset[str]]]:
        """The passage's sentences (offsets into the passage) and their content words, cached."""
        got = self._passage_units.get(pid)
        if got is None:
            text = self.index.passages[pid].text
            units = _record_sentences(text)
            got = (units, [frozenset(content_tokens(text[a:b])) for a, b in units])
            self._passage_units[pid] = got
        return got

    def _cjk_of(self, pid: int) -> frozenset[str]:
        if pid not in self._passage_cjk:
            self._passage_cjk[pid] = frozenset(cjk_bigrams(self.index.passages[pid].text))
        return self._passage_cjk[pid]

    # -- features ---------------------------------------------------------------------
    def _claim(self, sentence: str) -> _Claim:
        claim = self._claims.get(sentence)
        if claim is None:
            text = sentence_query(sentence)
            toks = content_tokens(text)
            claimed, units = numbers_and_units(text)
            weights = [self.index.idf(t) for t in toks]
            claim = _Claim(
                toks=toks,
                weights=weights,
                total=sum(weights),
                pairs=list(zip(toks, toks[1:], strict=False)),
                cjk=cjk_bigrams(text),
                norm=normalize_for_match(text),
                core=_TRAILING_PUNCT.sub("", normalize_for_match(text)),
                numbers=claimed,
                units=units,
                approx=approximate_figures(text) if claimed else {},
                in_words=frozenset(v for v in claimed if v.isdigit()) - stated_numbers(text)
                if claimed else frozenset(),
                entities=_entities(text),
                negated=bool(_NEGATION.search(text)),
                acronyms=tuple((a, t[0]) for a in acronyms(text) if len(t := content_tokens(a)) == 1),
                expansions=tuple(dict.fromkeys(
                    (acr, tuple(content_tokens(" ".join(words)))) for _, acr, words in abbreviations(text))),
            )
            self._claims[sentence] = claim
        return claim

    def _spelled_out_in(self, pid: int, acronym: str) -> list[int]:
        """Where the passage spells out the name `acronym` stands for (token positions of the
        name's first word), or [] (cached)."""
        key = (pid, acronym)
        got = self._passage_spelled.get(key)
        if got is None:
            text = self.index.passages[pid].text
            m = next((m for m in spelled_out(acronym).finditer(text)
                      if len(acronym) > 2 or whole_name(text, m.start(), m.end())), None)
            first = content_tokens(m.group(1)) if m else []
            got = self._passage_spelled[key] = self._positions_of(pid).get(first[0], []) if first else []
        return got

    def _acronyms_written_of(self, pid: int) -> dict[str, list[int]]:
        """The acronyms the passage writes, each with where (token positions), cached."""
        got = self._passage_written.get(pid)
        if got is None:
            got = {}
            text = self.index.passages[pid].text
            n = len(self.index.tokens[pid])
            for m in ACRONYM.finditer(text):
                tok = content_tokens(m.group(1))
                at = self._positions_of(pid).get(tok[0], []) if tok else []
                # a stop word ("US", "WHO") has no token: where it stands, by its share of the text
                got.setdefault(m.group(1), []).extend(at or [min(n, n * m.start() // max(1, len(text)))])
            self._passage_written[pid] = got
        return got

    def _abbreviated(self, c: _Claim, pid: int, ptoks: frozenset[str]) -> dict[str, list[int]]:
        """The claim's words the passage lacks but states in other letters, with where: an
        acronym of the claim that the passage spells out, or a name of the claim that the passage
        writes as its acronym. Both count as found."""
        found: dict[str, list[int]] = {}
        for acr, tok in c.acronyms:
            if tok not in ptoks and (spelled := self._spelled_out_in(pid, acr)):
                found[tok] = spelled
        for acr, toks in c.expansions:
            missing = [t for t in toks if t not in ptoks and t not in found]
            if missing and (written := self._acronyms_written_of(pid).get(acr)):
                for t in missing:
                    found[t] = written
        return found

    def _passage_text(self, pid: int) -> tuple[str, str, bool]:
        """(normalised text, lower-cased text, negated?) of a passage, cached."""
        got = self._passage_cache.get(pid)
        if got is None:
            text = self.index.passages[pid].text
            got = (normalize_for_match(text), text.lower(), bool(_NEGATION.search(text)))
            self._passage_cache[pid] = got
        return got

    def features(self, sentence: str, pid: int, rank: float) -> PairFeatures:
        passage = self.index.passages[pid]
        c = self._claim(sentence)
        p_norm, p_lower, p_negated = self._passage_text(pid)
        ptoks = self.index.token_set(pid)
        positions = self._positions_of(pid)
        other_letters = self._abbreviated(c, pid, ptoks) if c.acronyms or c.expansions else {}
        if other_letters:
            ptoks = ptoks | other_letters.keys()
            positions = dict(positions)
            for tok, at in other_letters.items():
                positions[tok] = sorted([*positions.get(tok, ()), *at])
        total = c.total or 1.0
        coverage = sum(w for t, w in zip(c.toks, c.weights, strict=True) if t in ptoks) / total

        if len(c.cjk) >= 4:
            pc = self._cjk_of(pid)
            bigram = sum(1 for b in c.cjk if b in pc) / len(c.cjk)
        elif c.pairs:
            pb = self._bigrams_of(pid)
            bigram = sum(1 for b in c.pairs if b in pb) / len(c.pairs)
        else:
            bigram = coverage

        fuzzy_score = _fuzzy(c.norm, p_norm) if c.norm else 0.0

        if c.numbers:
            stated, units = self._stated_for(c, passage.record)
            nums = numbers_agreement(c.numbers, stated, c.units, units)
        else:
            nums = 1.0

        if c.entities:
            entity = sum(1 for e in c.entities if e in p_lower or (
                other_letters and all(t in ptoks for t in content_tokens(e)))) / len(c.entities)
        else:
            entity = coverage

        window, matched_mass = window_coverage(c.toks, c.weights, positions, max(12, 2 * len(c.toks) + 8))
        exact = len(c.core) >= 20 and self._quotes(c.core, passage.record)
        return PairFeatures(
            coverage=coverage,
            bigram=bigram,
            fuzzy=fuzzy_score,
            numbers=nums,
            entity=entity,
            rank=rank,
            length=math.log(1 + len(c.toks)),
            negation=1.0 if (c.negated and not p_negated) else 0.0,
            window=window,
            matched=math.log1p(matched_mass),
            missing=math.log1p(max(0.0, c.total - matched_mass)),
            exact=exact,
        )

    def score(self, f: PairFeatures) -> float:
        if f.exact:
            return 1.0
        w, bias = self._model
        z = bias + sum(a * b for a, b in zip(w, f.vector(), strict=True))
        p = 1.0 / (1.0 + math.exp(-z))
        if f.fuzzy >= NEAR_EXACT_FUZZY and f.numbers == 1.0 and f.length >= NEAR_EXACT_MIN_LENGTH:
            p = max(p, NEAR_EXACT_SCORE)  # a near-verbatim quote with every number stated
        return p

    def support(
        self, sentence: str, pid: int, rank: float, *, with_evidence: bool = True
    ) -> tuple[Support, PairFeatures]:
        """Score the pair and locate the evidence span (offsets into the record content).
        Without `with_evidence` the span is left empty; `with_evidence_span` fills it later."""
        f = self.features(sentence, pid, rank)
        s = self.score(f)
        copied = not f.exact and s < NEAR_EXACT_SCORE and (
            self._near_copy(sentence, pid, f) or self._restated(sentence, pid, f))
        if copied:
            s = NEAR_EXACT_SCORE
        if not f.exact and self._claim(sentence).figures_only:
            s = min(s, FIGURES_ONLY_SCORE)  # never cited from its figures alone
        if f.exact:
            kind = "exact"
        elif f.fuzzy >= 0.9 or copied:
            kind = "fuzzy"
        else:
            kind = "lexical"
        start, end = self.evidence_span(sentence, pid) if with_evidence else (0, 0)
        return Support(score=round(s, 4), match=kind, evidence_start=start, evidence_end=end), f

    def _near_copy(self, sentence: str, pid: int, f: PairFeatures) -> bool:
        """Whether the claim is copied from one of the passage's sentences word for word: every
        word of it, in order and unbroken, in one record sentence (stems compared; articles aside,
        and a leading "it", "its", "they"… may stand for a name), at least four such words, with
        every content word, figure and name of the claim in the passage and no negation of the
        claim's own. The contradiction checks still run on it as on any pair."""
        c = self._claim(sentence)
        if (f.coverage < 0.999 or f.numbers < 1.0 or f.entity < 1.0 or f.negation > 0.0
                or len(c.toks) < 3 or c.figures_only):
            return False
        want = self._copy_words.get(sentence)
        if want is None:
            said = [t for t in tokens(sentence_query(sentence)) if t not in _COPY_ARTICLES]
            want = self._copy_words[sentence] = said[1:] if said and said[0] in _COPY_PRONOUNS else said
        if len(want) < _COPY_MIN_WORDS:
            return False
        need = frozenset(c.toks)
        text = self.index.passages[pid].text
        units, words = self._units_of(pid)
        for (a, b), has in zip(units, words, strict=True):
            if need <= has and _copied_run(want, [t for t in tokens(text[a:b]) if t not in _COPY_ARTICLES]):
                return True
        return False

    def _restated(self, sentence: str, pid: int, f: PairFeatures) -> bool:
        """Whether one sentence of the passage says the claim word for word but for where a year
        stands ("In 2023 Norway had an 82.4% EV share." for "Norway had 82.4% EV share in 2023.";
        stems compared, articles aside, a year moving with its "in"): every word of it and no other,
        at least four content words, the years in the same order, every figure and name stated and
        no negation of the claim's own. The contradiction checks still run on it as on any pair."""
        c = self._claim(sentence)
        if (f.coverage < 0.999 or f.numbers < 1.0 or f.entity < 1.0 or f.negation > 0.0
                or c.figures_only or len(set(c.toks)) < _COPY_MIN_WORDS
                or not any(_YEAR_TOKEN.match(t) for t in c.toks)):
            return False
        need = frozenset(c.toks)
        units, words = self._units_of(pid)
        text = self.index.passages[pid].text
        want = None
        for (a, b), has in zip(units, words, strict=True):
            if has == need:
                want = want or _year_phrases(
                    [t for t in tokens(sentence_query(sentence)) if t not in _COPY_ARTICLES])
                if _year_phrases([t for t in tokens(text[a:b]) if t not in _COPY_ARTICLES]) == want:
                    return True
        return False

    def unless_contradicted(self, sentence: str, pid: int, support: Support) -> Support:
        """`support`, or, when the pair's evidence quote contradicts the sentence, the same capped
        at CONFLICT_SCORE and labelled CONTRADICTED. Checked only for pairs that could be cited or
        named (the check aligns the quote, which costs more than scoring)."""
        if support.match == CONTRADICTED:
            return support
        if support.match == "exact":  # verbatim, but maybe inside "no evidence that …"
            if self._framed(sentence, pid) is None:
                return support
        elif self.conflict(sentence, pid) is None:
            return support
        return replace(support, score=min(support.score, CONFLICT_SCORE), match=CONTRADICTED)

    def _framed(self, sentence: str, pid: int) -> Conflict | None:
        """What a verbatim quote still says against the sentence: a frame around it ("no evidence
        that …") or a rank it goes on to qualify ("…最大的并购交易之一")."""
        start, end = self.evidence_span(sentence, pid)
        content = self.records[self.index.passages[pid].record].content
        quote = content[start:end]
        query = sentence_query(sentence)
        return framed(query, quote, self.index.lang) \
            or asked(query, quote, self.index.lang, content[end:end + _ANSWER_REACH]) \
            or rank_conflict(query, quote, self.index.lang)

    def conflict(self, sentence: str, pid: int) -> Conflict | None:
        """Where the pair's evidence quote contradicts the sentence (`tracer.conflict`), if it does."""
        key = (sentence, pid)
        if key not in self._conflicts:
            start, end = self.evidence_span(sentence, pid)
            record = self.index.passages[pid].record
            content = self.records[record].content
            around = sentences_around(content, start, end)
            self._conflicts[key] = self.quote_conflict_in(sentence, record, content[start:end], around,
                                                          content[end:end + _ANSWER_REACH])
        return self._conflicts[key]

    def written(self, phrase: str) -> tuple[bool, bool]:
        """How the request's records write `phrase` (`tracer.conflict.WrittenCase`): whether one
        writes it in lower case, and whether one writes it capitalised after a lower-case word, as
        a name is written mid-sentence ("…behind Toyota and Honda"). Read once a phrase, and only
        for a sentence whose first words the quote replaces, so most requests never read it."""
        got = self._written.get(phrase)
        if got is None and len(self._written) >= _MAX_WRITTEN:
            return True, False   # (each reads every record: a bound, then no evidence of a name)
        if got is None:
            lower = re.compile(rf"\b{re.escape(phrase.lower())}\b")
            name = re.compile(rf"(?:^|[\s(])[a-z]+[,;:]? {re.escape(phrase)}\b(?! [A-Z])")
            low = named = False
            for rec in self.records:
                low = low or lower.search(rec.content) is not None
                named = named or name.search(rec.content) is not None
                if low and named:
                    break
            got = self._written[phrase] = (low, named)
        return got

    def quote_conflict_in(self, sentence: str, record: int, quote: str, around: str = "",
                          after: str = "") -> Conflict | None:
        """Where `quote`, from the record at position `record`, contradicts the sentence: a
        short change that says otherwise (`tracer.conflict.quote_conflict`), a figure the record
        lacks where the quote states another (for `Tuning.figure_conflicts`' languages), or, in
        Chinese, a noun or time the sentence adds that the record never states. `around` is the
        record's text next to the quote (`sentences_around`), which may answer a negation;
        `after`, the record's text right after the quote, which may answer a question."""
        query = sentence_query(sentence)
        content = self.records[record].content
        got = framed(query, quote, self.index.lang) or asked(query, quote, self.index.lang, after) \
            or quote_conflict(query, quote, self.index.lang, around, content, sentence not in self.rows,
                              self.written) \
            or rank_conflict(query, quote, self.index.lang)
        if got is None and self.index.lang in self.tuning.figure_conflicts:
            got = self._figures_instead(sentence, record, quote)
        elif got is None:
            got = self._every_figure_instead(sentence, record, quote) \
                or self._scale_slip(sentence, record, quote)
        if got is None and self.index.lang == "zh":
            got = quote_addition(query, quote, self._titled_text(record)) \
                or zh_other_place(query, quote, f"{self.records[record].title}\n{content}") \
                or zh_clause_figure(query, content)
        elif got is None:
            stems = self._stems.get(record)
            if stems is None:
                stems = self._stems[record] = RecordStems(content)
            got = cause_addition(query, quote, stems) or clause_addition(query, quote, stems)
        return got or figure_change_conflict(query, content, self.index.lang) \
            or direction_conflict(query, self._titled_text(record), self.index.lang) \
            or year_role_conflict(query, content, self.index.lang) \
            or unnamed_speaker(query, quote, content, self.index.lang) \
            or (en_figure_subject(query, quote, content) if self.index.lang != "zh" else None)

    def _titled_text(self, record: int) -> str:
        got = self._titled.get(record)
        if got is None:
            rec = self.records[record]
            got = self._titled[record] = f"{rec.title}\n{rec.content}"
        return got

    def _figures_instead(self, sentence: str, record: int, quote: str) -> Conflict | None:
        """A figure of the sentence that the record states nowhere, where the quote states
        another of its sort ("2019" against a quote's "2018", "8号" against "7号"): the quote
        contradicts the sentence (`Tuning.figure_conflicts` says for which languages)."""
        unstated = self.unstated_numbers_in(sentence, record)
        instead = self.figures_instead_in(sentence, record, quote) if unstated else []
        return Conflict("figures", ", ".join(unstated), ", ".join(instead)) if instead else None

    def _scale_slip(self, sentence: str, record: int, quote: str) -> Conflict | None:
        """A figure of the sentence that the record states nowhere, where the quote states it a
        thousand or a million times over or under in the same unit ("US$26.0 million" against
        "US$26.0 billion"): a contradiction where `Tuning.figure_conflicts` does not make every
        other figure one (`tracer.text.scale_slip`)."""
        c = self._claim(sentence)
        if not c.units:
            return None
        slip = scale_slip(self._unstated_values(c, record), c.units, quote)
        return Conflict("figures", *slip) if slip is not None else None

    def _every_figure_instead(self, sentence: str, record: int, quote: str) -> Conflict | None:
        """Where two figures or more of a sentence, half of its figures or more, are ones the record
        states nowhere and the quote states otherwise, each in its place ("revenue of $64.7 billion,
        up 15%" against "$22.1 billion, up 22%"): another thing's figures. Where
        `Tuning.figure_conflicts` does not make one such figure a contradiction (English: a record
        may back a sentence and differ on a year)."""
        c = self._claim(sentence)
        if len(c.numbers) < 2:
            return None
        missing = self._unstated_values(c, record)
        if len(missing) < 2:
            return None
        query = sentence_query(sentence)
        other = [v for v in missing if figures_instead(c.numbers, [v], c.units, quote, query)]
        if len(other) < 2 or 2 * len(other) < len(c.numbers):
            return None
        return Conflict("figures", ", ".join(display_number(v, c.units.get(v)) for v in other),
                        ", ".join(figures_instead(c.numbers, other, c.units, quote, query)))

    def names_subject(self, subject: str, record: int) -> bool:
        """Whether the record (its title or any passage) has at least half of the IDF mass of
        `subject`'s words: the thing a table row is about ("Chandra X-ray Observatory"), which a
        row's figures alone do not pin to the record."""
        toks = subject_words(subject)
        if not toks:
            return True
        words = self._record_words.get(record)
        if words is None:
            if not self._record_words:
                by_record: dict[int, set[str]] = {}
                for p in self.index.passages:
                    by_record.setdefault(p.record, set()).update(self.index.token_set(p.id))
                for r, got in by_record.items():
                    self._record_words[r] = frozenset(got | set(content_tokens(self.records[r].title)))
            title = frozenset(content_tokens(self.records[record].title))
            words = self._record_words.setdefault(record, title)
        mass = sum(self.index.idf(t) for t in toks)
        return sum(self.index.idf(t) for t in toks if t in words) >= 0.5 * mass

    def set_rows(self, sentences: Sequence[Sentence]) -> None:
        """Tell the verifier which sentences are table rows (their claims are read without word
        order) and each table's subjects (a record sentence that names another row's subject
        speaks of that row). Clears what depends on them."""
        self.rows = frozenset(s.query for s in sentences if s.in_table)
        self._table_subjects = {}
        for s in sentences:
            if s.in_table and s.subject and _names_a_thing(s.subject):
                self._table_subjects.setdefault(s.table, []).append(s.subject)
        self._subject_index = {}
        self._conflicts = {}

    def row_stated_here(self, sentence: Sentence, pid: int) -> bool:
        """Whether the passage states the table row's own figures (those of its cells that its
        claim keeps: not a column header's, a row number, a model code or a trial's "-1", nor one
        the record states only in words) where it speaks of the row's subject, and plainly. Where
        it speaks of the subject: a sentence that names it, and the sentences after it that go on
        about it (in English, those opening with "It", "Its", "They", "This" …; in Chinese, up to
        two that name no other row of the table). A page comparing things ("…semaglutide lost
        14.9% over 68 weeks. Tirzepatide lost 20.9% over 72 weeks.") states every figure of
        "| Tirzepatide | 14.9% |" and names its subject, but not together. A passage that never
        names the subject (a page about it, named in its title) counts but for its sentences
        naming another row. Plainly: each figure is stated in some clause that no denial, hedge,
        plan, target or attribution governs ("GPT-5 may launch in 2025", "did not confirm the $799
        price", "Reportedly, …"; a row has no verb to carry the hedge)."""
        subject, claim = sentence.subject, sentence.query
        c = self._claim(claim)
        record = self.index.passages[pid].record
        named = self._claim(subject).numbers if subject else set()  # "4090" of "RTX 4090" names it
        row = _CODE_FIGURE.sub(" ", sentence.text)                   # "SURMOUNT-1" is a name
        own = {v for v in self._claim(row).numbers
               if v in c.numbers and v not in named and not v.startswith("c:")} & self._numbers_of(record)
        if not own:
            return True
        units, words = self._units_of(pid)
        text = self.index.passages[pid].text
        toks = subject_words(subject) if subject else []
        mass = 0.5 * sum(self.index.idf(t) for t in toks)
        names = [sum(self.index.idf(t) for t in toks if t in w) >= mass for w in words] if toks else []
        zh = self.index.lang == "zh"
        if any(names):
            near: list[int] = []
            after = 0                    # sentences since the last one naming the subject
            for i in range(len(units)):
                if names[i]:
                    after = 0
                elif near and near[-1] == i - 1 and after < (2 if zh else 3) and (
                        not self._names_other_row(words[i], subject, sentence.table) if zh
                        else _GOES_ON.match(text, units[i][0]) is not None):
                    after += 1
                else:
                    continue
                near.append(i)
            joined = "\n".join(text[units[i][0]:units[i][1]] for i in near)
            units_near = stated_units(joined) if c.units else None
            if unstated_numbers(own, stated_numbers(joined), c.units, units_near):
                return False
        else:
            near = [i for i in range(len(units)) if not (subject and self._names_other_row(
                words[i], subject, sentence.table))]
        framed = _FRAMED_ZH if zh else _FRAMED_EN
        if framed.search(claim):
            return True  # the row says so itself ("| GPT-5 | expected 2025 |")
        plain: set[str] = set()
        for i in near:
            hedged = False                # a hedge of an earlier clause ("Reportedly, …") governs
            for part in _CLAUSE.split(text[units[i][0]:units[i][1]]):
                last_digit = max((k for k, ch in enumerate(part) if ch.isdigit()), default=len(part))
                # a hedge before the clause's last figure governs it ("did not confirm the $799
                # price"); one after it does not ("$97.0 billion with no debt")
                hedged = hedged or any(m.start() < last_digit for m in framed.finditer(part))
                if not hedged:
                    plain |= own & stated_numbers(part)
        stating = own & stated_numbers("\n".join(text[units[i][0]:units[i][1]] for i in near))
        return stating <= plain

    def _names_other_row(self, words: frozenset[str], subject: str, table: int) -> bool:
        """Whether a record sentence (its content words) names the subject of another row of
        `table` than `subject` ("蔚来交付16.0万辆" after "理想汽车交付37.6万辆"): it then speaks of
        that one. A subject is looked up by its rarest words, enough of them that a sentence
        naming it holds one, so a sentence costs a lookup per word, not one per row."""
        index = self._subject_index.get(table)
        if index is None:
            index = self._subject_index[table] = {}
            for other in dict.fromkeys(self._table_subjects.get(table, ())):
                toks = subject_words(other)
                if not toks:
                    continue
                weights = {t: self.index.idf(t) for t in toks}
                need = 0.5 * sum(weights[t] for t in toks)
                left = sum(weights[t] for t in toks)
                for t in sorted(set(toks), key=lambda t: -weights[t]):
                    index.setdefault(t, []).append((other, toks, need))
                    left -= weights[t] * toks.count(t)
                    if left < need:      # without any of the words so far it cannot be named
                        break
        seen: set[str] = set()
        for t in words:
            for other, toks, need in index.get(t, ()):
                if other != subject and other not in seen:
                    seen.add(other)
                    if sum(self.index.idf(x) for x in toks if x in words) >= need:
                        return True
        return False

    def with_evidence_span(self, sentence: str, pid: int, support: Support) -> Support:
        start, end = self.evidence_span(sentence, pid)
        return replace(support, evidence_start=start, evidence_end=end)

    def evidence_span(self, sentence: str, pid: int) -> tuple[int, int]:
        """The quote that supports the sentence: the record sentence of the passage (or two
        adjacent ones, when the second adds at least `Tuning.evidence_pair_gain` of the claim) that
        covers the most of the claim's IDF-weighted content words; fuzzy similarity breaks ties.
        Offsets are into the record content. A "sentence" longer than twice
        `Tuning.evidence_context` is cut to that length around its best-aligned part."""
        key = (sentence, pid)
        got = self._spans.get(key)
        if got is None:
            got = self._spans[key] = self._evidence_span(sentence, pid)
        return got

    def _evidence_span(self, sentence: str, pid: int) -> tuple[int, int]:
        passage = self.index.passages[pid]
        text = passage.text
        c = self._claim(sentence)
        units, token_sets = self._units_of(pid)
        if not units:
            return passage.start, passage.start
        weight_of = dict(zip(c.toks, c.weights, strict=True))
        total = sum(weight_of.values()) or 1.0
        options: list[tuple[float, int, int]] = []
        for i, toks in enumerate(token_sets):
            options.append((sum(w for t, w in weight_of.items() if t in toks) / total, i, i))
            if i + 1 < len(units):
                both = toks | token_sets[i + 1]
                gain = sum(w for t, w in weight_of.items() if t in both) / total
                options.append((gain - self.tuning.evidence_pair_gain, i, i + 1))
        top = max(score for score, _, _ in options)
        tied = [(a, b) for score, a, b in options if score >= top - 1e-9]
        if len(tied) > 1 and c.norm:
            first, last = max(tied, key=lambda ab: fuzz.partial_ratio(
                c.norm, normalize_for_match(text[units[ab[0]][0]:units[ab[1]][1]])))
        else:
            first, last = tied[0]
        start, end = units[first][0], units[last][1]
        limit = 2 * self.tuning.evidence_context
        if end - start > limit:  # one long unbroken block (a table, a list without stops)
            al = fuzz.partial_ratio_alignment(c.norm, text[start:end].lower()) if c.norm else None
            middle = start + ((al.dest_start + al.dest_end) // 2 if al is not None else 0)
            start = max(start, min(middle - limit // 2, end - limit))
            end = start + limit
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        return passage.start + start, passage.start + end


_EXACT_SCAN = 64   # places a record holds a claim's text that are read, at most
# what, right before a claim's text in a record, takes it back: "Not having enough serotonin is
# thought to …" holds "Having enough serotonin is thought to …" word for word
_TAKEN_BACK = re.compile(
    r"(?:\b(?:" + "|".join(sorted((EN_NEGATIONS | EN_QUALIFIERS) - EN_PREFIXES)) + r")\s+"
    r"|\b(?:" + "|".join(sorted(EN_PREFIXES)) + r")-?"
    # (not every Chinese negation: 别 ends 特别, 无 and 非 begin words a claim may follow)
    r"|(?:不|没|没有|未|并非|从未|从不|并未|尚未)\s*)$")


# a word's start or end glued to a claim's text that makes another word of its first or last
# ("likely" in "unlikely", "safe" in "safer"); any other letters glued there are a page's words
# run together ("…pronounsThere are"), which the claim may well quote up to
_PREFIXED = re.compile(r"(?<![^\W\d_])(?:un|in|im|il|ir|dis|mis|non)$")
_SUFFIXED = re.compile(r"(?:e?r|e?st|e?d|ing|less)(?![^\W\d_])")
_DECIMALS = re.compile(r",\d|\.(?!0+\b)\d")   # ("version 3" is "version 3.0")
_OPENERS = r"(?:" + "|".join(sorted(CLAUSE_OPENERS)) + r"|\d)\b"
_EN_IF = r"(?:if\s+" + _OPENERS + r"|unless\b)"   # (`tracer.conflict.IF_WORDS`, `_opens_clause`)
_CONDITION_AFTER = re.compile(r",?\s*(?:only\s+)?" + _EN_IF)
_ZH_IF = "|".join(sorted((w for w in IF_WORDS if not w.isascii()), key=len, reverse=True))
_CONDITION_LEAD = re.compile(r"\s*(?:" + _EN_IF + r"[^.!?]*[,;]|(?:" + _ZH_IF + r")[^。！？]*[，,;；])\s*$")


def _word_char(ch: str) -> bool:
    """A letter or digit of a word that spaces delimit (not a Chinese or Japanese character)."""
    return ch.isalnum() and ord(ch) < 0x2E80


def _held_verbatim(core: str, norm: str) -> bool:
    """Whether the record's normalised text `norm` holds the claim's `core` word for word: not as
    part of another word ("likely to win" is not in "unlikely to win", nor "is safe" in "is safer",
    nor "grew 5" in "grew 5.5%" or "grew 50%"), and not right after a word that takes it back
    (`_TAKEN_BACK`)."""
    start = 0
    for _ in range(_EXACT_SCAN):
        i = norm.find(core, start)
        if i < 0:
            return False
        start = i + 1
        j = i + len(core)
        if i > 0 and _word_char(core[0]) and (
                (core[0].isdigit() and norm[i - 1].isdigit()) or _PREFIXED.search(norm, max(0, i - 4), i)):
            continue
        if j < len(norm) and _word_char(core[-1]) and (
                (core[-1].isdigit() and (norm[j].isdigit() or _DECIMALS.match(norm, j)))
                or (core[-1].isalpha() and _SUFFIXED.match(norm, j))):
            continue
        if _TAKEN_BACK.search(norm, max(0, i - 24), i) or _after_condition(norm, i) \
                or _CONDITION_AFTER.match(norm, j):
            continue
        return True
    return False


def _after_condition(norm: str, at: int) -> bool:
    """Whether the text before `at`, back to its sentence's start (200 characters at most), is a
    condition the claim comes right after: "if the economy slows, " before "the bank will cut rates",
    "如果经济放缓，" before "央行将降息"."""
    lo = max(0, at - 200)
    start = max(norm.rfind(ch, lo, at) for ch in ".!?。！？\n") + 1
    return _CONDITION_LEAD.match(norm, max(start, lo), at) is not None


def _year_phrases(toks: list[str]) -> tuple[list[str], list[str]]:
    """(the words but its years, its years in order), a year taking the "in" before it along."""
    rest: list[str] = []
    years: list[str] = []
    for tok in toks:
        if _YEAR_TOKEN.match(tok):
            years.append(tok)
            if rest and rest[-1] == "in":
                rest.pop()
        else:
            rest.append(tok)
    return rest, years


def _copied_run(want: list[str], have: list[str]) -> bool:
    """Whether `want` appears in `have` as one unbroken run."""
    n = len(want)
    first = want[0]
    return any(tok == first and have[i:i + n] == want for i, tok in enumerate(have))


def _record_sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each non-blank sentence or line of a passage. A period after an
    abbreviation or an initial ends none ("Dr. Smith", "John F. Kennedy"), nor one before a
    lowercase word ("Pear Inc. reported revenue", "approx. the"): the quote is the claim's
    whole sentence, and a row's figures are read where the record names its subject."""
    units: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        if m.group() == "." and not _ends_sentence_at(text, m.start()):
            continue
        if text[start:m.end()].strip():
            units.append((start, m.end()))
        start = m.end()
    if text[start:].strip():
        units.append((start, len(text)))
    return units


def _ends_sentence_at(text: str, dot: int) -> bool:
    """Whether the lone period at `dot`, followed by whitespace or the end, ends a record
    sentence (`_record_sentences`)."""
    nxt = _NEXT_NON_SPACE.match(text, dot + 1)
    if nxt is not None and nxt.group(1).islower():
        return False
    word = _WORD_BEFORE_DOT.search(text, max(0, dot - 24), dot)
    if word is None:
        return True
    w = word.group().lower()
    if len(w) == 1 or w in NEVER_END:
        return False
    return True


def window_coverage(
    toks: list[str], weights: list[float], positions: dict[str, list[int]], width: int
) -> tuple[float, float]:
    """Best IDF-weighted share of the sentence's distinct words inside any run of `width`
    passage tokens, and that mass. `positions` maps each passage token to where it occurs; only
    occurrences of the sentence's words are visited (two pointers over them, in order)."""
    weight_of: dict[str, float] = {}
    for t, wt in zip(toks, weights, strict=True):
        weight_of[t] = wt
    total = sum(weight_of.values())
    if total <= 0:
        return 0.0, 0.0
    hits = sorted((pos, tok) for tok in weight_of for pos in positions.get(tok, ()))
    counts: dict[str, int] = {}
    mass = best = 0.0
    left = 0
    for pos, tok in hits:
        while hits[left][0] <= pos - width:  # leaves the window (pos - width, pos]
            old = hits[left][1]
            counts[old] -= 1
            if counts[old] == 0:
                mass -= weight_of[old]
            left += 1
        if counts.get(tok, 0) == 0:
            mass += weight_of[tok]
        counts[tok] = counts.get(tok, 0) + 1
        if mass > best:
            best = mass
    return best / total, best
