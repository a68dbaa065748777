"""Language detection, tokens and numbers shared by retrieve, verify and recognize.

English words are lower-cased and Snowball-stemmed; Chinese runs are cut with rjieba
(dictionary load ~0.15 s per process) and additionally described by character bigrams,
which survive paraphrase better than word cuts.
"""

from __future__ import annotations

import bisect
import operator
import re
import sys
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

import rjieba
import Stemmer

_CJK_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_LETTER = re.compile(r"[A-Za-z]")
# Latin words (with inner apostrophes; a hyphenated compound is its words), numbers (with
# separators), CJK runs.
_TOKEN = re.compile(
    r"(?P<num>\d+(?:[.,]\d+)*%?)"
    r"|(?P<word>[A-Za-z\u00c0-\u024f]+(?:['’][A-Za-z\u00c0-\u024f]+)*)"
    r"|(?P<cjk>[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)"
)
_DIGIT = re.compile(r"\d")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,}")
# (Each pattern that scans whole records opens with the character class of its first character,
# and checks what stands before that character right after it: a pattern that opens with a
# look-behind is tried at every position of the text, one with a class only where the class is.)
_NUMBER = re.compile(
    r"(\d(?<![A-Za-z0-9_.．]\d)(?:\d{0,2}(?:,\d{3})+"
    # thousands set apart by a (thin or no-break) space: "35 000 000", "12 500" (a plain space
    # only in two groups or more: "in 2023 100 people", "scores of 3 100" stay apart)
    # (possessive, and never from inside a run of groups: linear however long the run)
    r"|(?<!\d[ \u00a0\u202f\u2009]\d)\d{0,2}(?:[\u00a0\u202f\u2009]\d{3})++(?!\d)"
    r"|(?<!\d[ \u00a0\u202f\u2009]\d)\d{0,2}(?: \d{3}){2,}+(?!\d)"
    r"|\d*))(?:[.．](\d+))?[ \t\u00a0]*(%|percent(?!age)|％)?"
)
_GROUPING = str.maketrans("", "", ", \u00a0\u202f\u2009")
_CN_NUMBER_UNIT = {"万": 1e4, "亿": 1e8, "千": 1e3, "百": 1e2}
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
# Scales a page abbreviates right after the digits ("5m users", "$3bn", "10k"): a record's side
# reads the scaled figure as well as the bare one, since "5m" may as well be five metres.
# ("671B", "$500M", "10K" too, as model cards and tech pages write them)
_SHORT_SCALE = re.compile(r"(bn|Bn|BN|[mkMKB])(?![A-Za-z0-9²³/])")
_SHORT_SCALES = {"bn": 1e9, "b": 1e9, "m": 1e6, "k": 1e3}

_STEMMER = Stemmer.Stemmer("english")

EN_STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself just may me
    might more most must my myself no nor not of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they this
    those through to too under until up very was we were what when where which while who whom why will
    with would you your yours yourself yourselves can't cannot one ones often well however thus therefore
    additionally furthermore moreover including include includes included especially particularly
    various several many much among within without upon per via like e.g i.e etc although though whereas
    yet still since due able become becomes became use used using make makes made""".split()
)
ZH_STOPWORDS = frozenset(
    """的 了 和 是 在 也 与 及 或 等 而 且 但 并 就 都 被 把 对 于 为 以 之 其 这 那 此 该 一个 一种 一些
    这些 那些 这个 那个 可以 可能 能够 会 将 已 已经 还 又 更 很 非常 比较 通过 进行 由于 因此 所以 因为
    如果 但是 然而 其中 以及 例如 比如 包括 同时 此外 另外 首先 其次 最后 总之 总的来说 方面 问题 情况
    我们 你 我 他 她 它 他们 你们 自己 什么 如何 怎么 为什么 哪些 没有 不 有 到 从 向 上 中 下 个 着 过
    所 让 使 给 将会 需要 应该 一定 一般 通常 主要 重要 可 要 能 地 得 吗 呢 吧 啊
    则 随后 当时 即 并且 而且 还是 只是 就是 不仅 而是 之后 之前 以后 以前 目前 当前 正 曾 曾经 仍
    仍然 再 才 便 于是 从而 以便 及其 其他 其它 各种 各 每 某 某些 任何 所有 一切 这样 那样 这种 那种
    如此 这里 那里 之一 之间 之中 之下 之上 当中 方式 方法 过程 相关 有关 较 最 更加 十分 特别 尤其
    完全 主要是 即使 虽然 尽管 只要 只有 除了 对于 关于 按照 根据 随着 由 往 来 去
    年 月 日""".split()
)


def detect_language(text: str) -> str:
    """'zh' when CJK characters make up a fifth of the letters, else 'en'."""
    sample = text[:20000]
    cjk = len(_CJK_CHAR.findall(sample))
    latin = len(_LATIN_LETTER.findall(sample))
    return "zh" if cjk and cjk >= 0.2 * (cjk + latin / 5) else "en"


def clear_language(text: str) -> str | None:
    """'en' or 'zh' when the text is clearly that (CJK characters under a twentieth of the
    letters, or over half, counting five Latin letters as one character, as `detect_language`
    does), else None (a short or mixed text)."""
    sample = text[:20000]
    cjk = len(_CJK_CHAR.findall(sample))
    latin = len(_LATIN_LETTER.findall(sample))
    weight = cjk + latin / 5
    if weight < 40:  # about 200 Latin letters or 40 Chinese characters: too short to tell
        return None
    share = cjk / weight
    return "zh" if share > 0.5 else "en" if share < 0.05 else None


# Abbreviations after which a period never ends a sentence (the report's and the records'
# sentence splitters share them).
NEVER_END = frozenset(
    """mr mrs ms dr prof vs v e.g i.e cf al fig figs dept approx vols pp eds gov sen rep mt blvd refs
    eq eqs viz resp esp incl govt assn univ dist hon capt lt sgt cmdr adm maj messrs mme mlle""".split()
)
# a period after these ends a sentence only before a typical sentence opener (some are words or
# units too: "state-of-the-art.", "HBO Max.", "18 min.", "Martin Luther King Jr. He")
MAYBE_END = frozenset(
    """etc inc ltd co corp llc plc bros u.s u.k u.n e.u a.m p.m ph.d u.s.a p.r.c no nos jan feb mar
    apr jun jul aug sep sept oct nov dec sr jr st ca vol ed gen ave op ref sec ch art para min max
    est rev col""".split()
)

# A citation copied from a superscript as plain digits ("… 126,900 vehicles.1 In the EU …", as
# Gemini's reports read once copied): one to three digits after a word's end punctuation, where a
# sentence ends (`tracer.segment`), the word no abbreviation ("No.1", "Fig.2": `note_after`).
# (After a word or a marker: "vehicles[1].1" is the same on a second trace; what follows, past any
# markers, is for the sentence splitter to judge.)
_NOTE_AFTER = (r"(?:(?<=[^\W\d_][.!?])|(?<=[\])>%％][.!?])"
               r"|(?<=(?<![\d.])(?:19|20)\d\d[.!?]))")   # "in 2023.2 Germany …": a year's, too
DIGIT_NOTE = re.compile(_NOTE_AFTER + r"\d{1,3}(?![\d.,%]|[^\W\d_])")
# the same at a claim's end ("… vehicles.1")
DIGIT_NOTE_END = re.compile(_NOTE_AFTER + r"\d{1,3}[ \t]*\Z")
_WORD_AT_STOP = re.compile(r"[A-Za-z]+(?:\.[A-Za-z]+)*\Z")
_YEAR_AT_STOP = re.compile(r"(?<![\d.])(?:19|20)\d\d\Z")


def note_after(text: str, stop: int) -> bool:
    """Whether the stop at `stop` may carry a note copied as digits: it ends a word that is no
    abbreviation ("vehicles.1", not "No.1", "Fig.2", "U.S.1", "v.2"), or a marker ("[1].2")."""
    if stop <= 0:
        return False
    if text[stop - 1] in "])>%％":
        return True
    if _YEAR_AT_STOP.search(text, max(0, stop - 5), stop):
        return True                                # "… rose 37% in 2023.2 Germany …"
    m = _WORD_AT_STOP.search(text, max(0, stop - 40), stop)
    if m is None:
        return text[stop - 1].isalpha()           # a letter of another script ("é", "ü")
    word = m.group(0).lower()
    return len(word) > 1 and "." not in word and word not in NEVER_END and word not in MAYBE_END \
        and word not in _NUMBERED_THINGS


# words a number labels ("Table.1", "Step.2"): the digits after their stop are that number
_NUMBERED_THINGS = frozenset(
    """table tables figure figures step steps chapter section page item part phase stage version
    level grade class type model article appendix exhibit chart slide question task lesson unit
    round day week episode game act scene verse rule option case note box panel tier plan
    series""".split())


# the marks around and between a title's words: "《2023年度财务报告.pdf》" and "2023年度财务报告 pdf" are
# one title to a references entry or to a headingless list of titles
_TITLE_PUNCT = re.compile(r"[\s\"'“”‘’《》「」『』<>*_`.,;:，。；：!?！？\-–—|()\[\]（）【】]+")


def title_key(title: str) -> str:
    """A title as entries and records are matched by it: marks and case aside."""
    return _TITLE_PUNCT.sub(" ", title).strip().casefold()


# Scripts the engine is not tuned for (language_caveat), by Unicode block.
_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
_OTHER_SCRIPTS = (
    ("Greek", re.compile(r"[\u0370-\u03ff]")),
    ("Cyrillic", re.compile(r"[\u0400-\u04ff]")),
    ("Hebrew", re.compile(r"[\u0590-\u05ff]")),
    ("Arabic", re.compile(r"[\u0600-\u06ff]")),
    ("Devanagari", re.compile(r"[\u0900-\u097f]")),
    ("Thai", re.compile(r"[\u0e00-\u0e7f]")),
)
_NON_LATIN_SCRIPT = re.compile(
    r"[\u0370-\u06ff\u0900-\u097f\u0e00-\u0e7f\u1100-\u11ff\u3040-\u30ff\u3130-\u318f"
    r"\u31f0-\u31ff\uac00-\ud7af]"
)
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")
# Closed-class English words that other Latin-script languages rarely use: at least 18% of the
# words of each English dev report, none of a paragraph of German, French, Spanish, Italian,
# Portuguese or Dutch prose.
_EN_FUNCTION_WORDS = frozenset(
    """the of and to that for it with as on are be by this which or from at not have has their can
    these its also were been more such than they""".split()
)
# The commonest function words of German, French, Spanish, Italian, Portuguese and Dutch, less
# those English text uses too ("in", "do", "et al.", "non-", "per", "die"): 20-40% of the words of
# a paragraph of such prose, at most 1% of an English dev report and 5% of an English dev record.
# An English list of names has few words of either set, so it gets no caveat.
_OTHER_FUNCTION_WORDS = frozenset(
    """der und das ist nicht mit von zu ein eine sich auf für wurde dem des le les est une du que
    pour dans sur pas au avec qui el los las y es por con una para del se il di che è della sono os
    da em um não é het een en van dat op te zijn niet voor la de""".split()
)


def language_caveat(text: str, lang: str) -> str | None:
    """What the text looks like when it is neither English nor Chinese (None when it is either,
    or too short to tell): "Japanese", "Korean", "Cyrillic script", ..., "German", "French",
    "Spanish", "Italian", "Portuguese", "Dutch", or "a Latin-script language other than English"
    when its function words do not say which. Retrieval and verification are tuned for English
    and Chinese, so such a report gets fewer citations (the ones it gets are verified as usual)."""
    sample = text[:4000]
    if not sample.isascii() and len(letters := "".join(_NON_LATIN_SCRIPT.findall(sample))) >= 20:
        kana = len(_KANA.findall(letters))
        if kana >= 20 and kana >= 0.1 * (kana + len(_CJK_CHAR.findall(sample))):
            return "Japanese"
        if lang != "zh":
            latin = len(_LATIN_LETTER.findall(sample))
            if (hangul := len(_HANGUL.findall(letters))) >= 20 and hangul >= latin:
                return "Korean"
            for name, pattern in _OTHER_SCRIPTS:
                if (n := len(pattern.findall(letters))) >= 40 and n >= latin:
                    return f"{name} script"
    if lang == "zh":
        return None
    words = _LATIN_WORD.findall(sample[:2000].lower())
    if len(words) < 40 or sum(w in _EN_FUNCTION_WORDS for w in words) >= 0.08 * len(words):
        return None
    if sum(w in _OTHER_FUNCTION_WORDS for w in words) >= 0.12 * len(words):
        return _latin_language(words) or "a Latin-script language other than English"
    return None


# Words that tell the six apart once a text is known to be one of them: each language's
# commonest function words, less those two or more of them spell alike ("de", "la", "que",
# "en", "se", "una", "con", "del", "da", "die" ...), which would only add to a tie.
_LATIN_LANGUAGE_WORDS = (
    ("German", frozenset("der und das ist nicht mit von zu ein eine sich auf für wurde dem den im auch "
                         "werden wird sind bei nach aus".split())),
    ("French", frozenset("le les est une du pour dans sur pas au avec qui et il ce aux ont été sont "
                         "par cette".split())),
    ("Spanish", frozenset("el los las y es por para lo su al como fue más sus entre".split())),
    ("Italian", frozenset("il di che è della sono gli delle alla nel dei anche stato più".split())),
    ("Portuguese", frozenset("os em um não é do dos das ao pela pelo foi mais uma são".split())),
    ("Dutch", frozenset("het een van dat op te zijn niet voor is met aan werd ook door wordt".split())),
)


def _latin_language(words: list[str]) -> str | None:
    """The one of German, French, Spanish, Italian, Portuguese and Dutch whose own function words
    are clearly the commonest in `words` (half as many again as the next), else None."""
    counts = sorted(((sum(w in vocab for w in words), name) for name, vocab in _LATIN_LANGUAGE_WORDS),
                    reverse=True)
    (top, name), (second, _) = counts[0], counts[1]
    return name if top >= 4 and top >= 1.5 * second else None


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    if not word.isascii():  # "Māori", "café": the same word as "Maori", "cafe"
        word = "".join(ch for ch in unicodedata.normalize("NFKD", word) if not unicodedata.combining(ch))
    return str(_STEMMER.stemWord(word))


def _norm_number(raw: str) -> str:
    return raw.replace(",", "").rstrip("%")


def tokens(text: str) -> list[str]:
    """Lower-cased, stemmed word tokens (CJK cut with rjieba); numbers kept normalised."""
    out: list[str] = []
    for num, word, cjk in _TOKEN.findall(text):
        if word:
            out.append(_stem(word.lower().replace("’", "'")))
        elif num:
            out.append(_norm_number(num))
        else:
            out.extend(w for w in rjieba.cut(cjk) if w.strip())
    return out


def content_tokens(text: str) -> list[str]:
    """`tokens` without stop words and one-letter Latin tokens."""
    out: list[str] = []
    for num, word, cjk in _TOKEN.findall(text):
        if word:
            stem = _content_stem(word)
            if stem:
                out.append(stem)
        elif num:
            out.append(_norm_number(num))
        else:
            out.extend(sys.intern(w) for w in rjieba.cut(cjk) if w not in ZH_STOPWORDS and w.strip())
    return out


# Acronyms and the names they abbreviate ("NASA" for "National Aeronautics and Space
# Administration", "FDA" for "Food and Drug Administration", "DOD" for "Department of Defense").
ACRONYM = re.compile(r"\b([A-Z]{2,6})s?\b")
# small words inside a name, which its acronym may skip ("Department of Defense": "DD" or "DOD")
NAME_JOINERS = frozenset("of the and for in on de du la &".split())
_JOINER = "|".join(re.escape(j) for j in sorted(NAME_JOINERS, key=len, reverse=True))
_NAME_RUN = re.compile(rf"\b[A-Z][a-z]+(?:[ \t]+(?:(?:{_JOINER})[ \t]+){{0,2}}[A-Z][a-z]+)+")
_RUN_WORD = re.compile(r"\S+")


def acronyms(text: str) -> list[str]:
    """The all-capital words of 2-6 letters ("NASA", "EU"; a plural "s" dropped), unless the
    text is mostly capitals (a shouted heading is not a row of acronyms)."""
    letters = [ch for ch in text if ch.isalpha()]
    if sum(ch.isupper() for ch in letters) > len(letters) / 2:
        return []
    return list(dict.fromkeys(ACRONYM.findall(text)))


def abbreviations(text: str) -> list[tuple[int, str, list[str]]]:
    """Each run of 2+ capitalised words (optionally joined by "of", "and", "the"...) with the
    acronyms it may be written as: (start offset, acronym, the run's capitalised words). Every
    sub-run counts ("the Yesterday National Aeronautics..." still gives NASA), spelled with the
    capitals' initials and, when joiners sit inside, with theirs too ("DD" and "DOD"). Two
    letters are too common a spelling for a part of a longer name ("RS" in "Prime Minister Rishi
    Sunak"): a two-letter acronym comes only from a whole name (`whole_name`)."""
    out: list[tuple[int, str, list[str]]] = []
    for m in _NAME_RUN.finditer(text):
        words = [(w.start(), w.group()) for w in _RUN_WORD.finditer(m.group())]
        caps = [i for i, (_, w) in enumerate(words) if w not in NAME_JOINERS]
        for a in range(len(caps)):
            for b in range(a + 1, min(len(caps), a + 8)):
                part = words[caps[a]:caps[b] + 1]
                named = [w for w in part if w[1] not in NAME_JOINERS]
                start = m.start() + part[0][0]
                end = m.start() + part[-1][0] + len(part[-1][1])
                spellings = {"".join(w[0] for _, w in named), "".join(w[0].upper() for _, w in part)}
                for acr in spellings:
                    if 3 <= len(acr) <= 6 or (len(acr) == 2 and whole_name(text, start, end)):
                        out.append((start, acr, [w for _, w in named]))
    return out


_NAME_BEFORE = re.compile(r"([A-Z][a-z]+)[ \t]+$")
_NAME_AFTER = re.compile(r"^[ \t]+[A-Z][a-z]")
# capitalised words that open a sentence or clause rather than belong to the name after them
_NOT_NAME_WORDS = frozenset(
    "The A An In On At For Of And But Or By From With As To This That These Its Their His Her Our".split())


def whole_name(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is a whole name: no capitalised word of a longer name right before
    it (an opening "The" or "In" does not count) or right after it."""
    before = _NAME_BEFORE.search(text, max(0, start - 40), start)
    if before is not None and before.group(1) not in _NOT_NAME_WORDS:
        return False
    return _NAME_AFTER.match(text[end:end + 3]) is None


@lru_cache(maxsize=4096)
def spelled_out(acronym: str) -> re.Pattern[str]:
    """A pattern for the run of capitalised words `acronym` may stand for (the run's first word
    is group 1): "NASA" finds "National Aeronautics and Space Administration", "DOD" finds
    "Department of Defense" (a joiner may give a letter, never the first or the last)."""
    gap = rf"(?:[ \t]+(?:{_JOINER})){{0,2}}[ \t]+"  # bounded: no backtracking blow-up
    parts = []
    for i, letter in enumerate(acronym):
        word = f"{letter}[a-z]+"
        joiners = [j for j in sorted(NAME_JOINERS) if j[0] == letter.lower()]
        if 0 < i < len(acronym) - 1 and joiners:
            word = f"(?:{word}|{'|'.join(joiners)})"
        parts.append(f"({word})" if i == 0 else word)
    return re.compile(r"\b" + gap.join(parts) + r"\b")


@lru_cache(maxsize=200_000)
def _content_stem(word: str) -> str:
    """The stem of a Latin word, or "" for stop words and one-letter words."""
    stem = _stem(word.lower().replace("’", "'"))
    return stem if is_content(stem) else ""


def is_content(tok: str) -> bool:
    if tok in ZH_STOPWORDS:
        return False
    if tok.isascii():
        return (len(tok) > 1 and tok not in _EN_STOP_STEMS) or tok.isdigit()
    return True


_EN_STOP_STEMS = frozenset(_stem(w) for w in EN_STOPWORDS) | EN_STOPWORDS


def cjk_bigrams(text: str) -> list[str]:
    """Character bigrams inside CJK runs (robust to word-cut differences)."""
    out: list[str] = []
    for run in _CJK_RUN.findall(text):
        # Interned: the same bigram in many passages is one string, not one per occurrence
        # (a request's token lists are most of its memory, CJK bigrams most of those).
        out.extend(map(sys.intern, map(operator.add, run, run[1:])))
    return out


_CN_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
             "八": 8, "九": 9}
_CN_UNIT = {"十": 10, "百": 100, "千": 1000}
# Chinese numerals that name or rank something ("神舟十二号", "第十三届", "二号"): an identifier
# whose number differs ("十三号" for "十二号") is a different thing, like a conflicting number.
_CN_ORDINAL = re.compile(
    r"第([零〇一二两三四五六七八九十百千]+)[届次代期号条章季集批版轮师团旅军]"
    r"|(?<![零〇一二两三四五六七八九十百千第])([零〇一二两三四五六七八九十百千]+)号"
)


def _cn_value(numeral: str) -> int | None:
    """Value of a Chinese numeral below 10,000 ("十二" 12, "二十三" 23, "一百零五" 105), or None.
    Digits without 十/百/千 are read one by one, as in "第一一五师" (115)."""
    if len(numeral) > 1 and all(ch in _CN_DIGIT for ch in numeral):
        return int("".join(str(_CN_DIGIT[ch]) for ch in numeral))
    total = digit = 0
    for ch in numeral:
        if ch in _CN_DIGIT:
            digit = _CN_DIGIT[ch]
        else:
            total += (digit or 1) * _CN_UNIT[ch]
            digit = 0
    total += digit
    return total if total or numeral in ("零", "〇") else None


def _cn_ordinals(text: str) -> set[str]:
    found: set[str] = set()
    if "号" not in text and "第" not in text:
        return found
    for m in _CN_ORDINAL.finditer(text):
        value = _cn_value(m.group(1) or m.group(2))
        if value is not None:
            found.add(str(value))
    return found


# A list enumerator inside a sentence ("1)", "(2)", "（3）", "4）"), at its start or after a space or
# a clause's punctuation: it numbers the items, it states no fact. (A decimal's point is not
# such punctuation: "(up from 1.5)" states 1.5.)
_ENUMERATOR = re.compile(
    r"(?:^|(?<=[\s:;,!?：；，。！？])|(?<!\d\.)(?<=\.))[(（]?\d{1,2}[)）]"
    r"|^(?:\*\*|__|\*|_)?[ \t]*\d{1,2}\.(?=[ \t])"  # "**2. 增长率：**" opening the sentence
)


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number's unit: its kind ("length", "money", ...), the unit within the kind, and the
    value in the kind's base unit (metres, kilograms, °C, seconds ...; money keeps its figure)."""

    kind: str
    unit: str
    base: float


# Kinds whose units convert into each other; money does not (rates change), percent has one unit.
_CONVERTIBLE = frozenset({"length", "area", "mass", "volume", "speed", "temperature", "time"})


class StatedUnits:
    """The units a text states its numbers in: for each number (keyed like `numbers`), every
    unit it appears with (None where it appears with none), and every quantity by kind."""

    __slots__ = ("by_kind", "units_of")

    def __init__(self) -> None:
        self.units_of: dict[str, set[Quantity | None]] = {}
        self.by_kind: dict[str, set[Quantity]] = {}

    def add(self, key: str, q: Quantity | None) -> None:
        self.units_of.setdefault(key, set()).add(q)
        if q is not None and q.kind in _CONVERTIBLE:
            self.by_kind.setdefault(q.kind, set()).add(q)

    def merged(self, other: StatedUnits) -> StatedUnits:
        """A new `StatedUnits` holding both texts' units."""
        out = StatedUnits()
        for source in (self, other):
            for key, seen in source.units_of.items():
                out.units_of.setdefault(key, set()).update(seen)
            for kind, qs in source.by_kind.items():
                out.by_kind.setdefault(kind, set()).update(qs)
        return out

    def agrees(self, value: str, q: Quantity) -> bool | None:
        """True when the text states the quantity in another unit of its kind, False when it
        states the figure only with other units, None when units do not decide."""
        for other in self.by_kind.get(q.kind, ()):
            if other.unit != q.unit and _same_amount(other.base, q.base, q.kind):
                return True
        seen = self.units_of.get(value)
        if seen and all(o is not None and not _same_unit(o.unit, q.unit) for o in seen):
            return False
        return None


def _same_unit(a: str, b: str) -> bool:
    """Units that name the same thing: equal, or a bare "$" (or "dollars") and any dollar, since
    which dollar a page means goes without saying on the page ("A$5 million" may be its "$5 million")."""
    return a == b or ("$" in (a, b) and (a.endswith("$") or a == "USD") and (b.endswith("$") or b == "USD"))


def _same_amount(a: float, b: float, kind: str) -> bool:
    """Equal up to the rounding of a converted figure ("5 miles (8 km)": 0.6% apart)."""
    if kind == "temperature":
        return abs(a - b) <= 1.0
    return abs(a - b) <= 0.025 * max(abs(a), abs(b))


# (pattern, kind, unit, factor to the kind's base unit); longer forms first within a language,
# area and speed before length. Abbreviations that are also words or scales ("m" for million,
# "in", "g", "l"; 升, which is also "rise": "从5升高到10") are left out here (lower-case "m" and
# "g" after one space are read by _SHORT_UNIT): a number with no recognised unit counts as bare.
_EN_UNITS: tuple[tuple[str, str, str, float], ...] = (
    (r"square kilomet(?:er|re)s?|sq\.? ?km|km²|km2", "area", "km2", 1e6),
    (r"square met(?:er|re)s?|m²", "area", "m2", 1.0),
    (r"square miles?|sq\.? ?mi", "area", "mi2", 2_589_988.110336),
    (r"square f(?:ee|oo)t|sq\.? ?ft|ft²", "area", "ft2", 0.09290304),
    (r"acres?", "area", "acre", 4046.8564224),
    (r"hectares?", "area", "ha", 1e4),
    (r"km/h|kph|kilomet(?:er|re)s? (?:per|an) hour", "speed", "km/h", 1 / 3.6),
    (r"mph|miles (?:per|an) hour", "speed", "mph", 0.44704),
    (r"m/s|met(?:er|re)s per second", "speed", "m/s", 1.0),
    (r"knots?", "speed", "kn", 0.514444),
    (r"millimet(?:er|re)s?|mm", "length", "mm", 1e-3),
    (r"centimet(?:er|re)s?|cm", "length", "cm", 1e-2),
    (r"kilomet(?:er|re)s?|km", "length", "km", 1e3),
    (r"met(?:er|re)s?", "length", "m", 1.0),
    (r"miles?", "length", "mi", 1609.344),
    (r"feet|foot|ft", "length", "ft", 0.3048),
    (r"inch(?:es)?", "length", "inch", 0.0254),
    (r"yards?|yd", "length", "yd", 0.9144),
    (r"milligrams?|mg", "mass", "mg", 1e-6),
    (r"kilograms?|kilos?|kg", "mass", "kg", 1.0),
    (r"grams?", "mass", "g", 1e-3),
    (r"metric tons?|tonnes?|tons?", "mass", "t", 1e3),
    (r"lbs?", "mass", "lb", 0.45359237),
    (r"ounces?|oz", "mass", "oz", 0.028349523125),
    (r"millilit(?:er|re)s?|ml", "volume", "ml", 1e-3),
    (r"lit(?:er|re)s?", "volume", "l", 1.0),
    (r"gallons?", "volume", "gal", 3.785411784),
    (r"cubic met(?:er|re)s?|m³", "volume", "m3", 1e3),
    (r"°\s?c|℃|degrees? (?:celsius|centigrade)|celsius", "temperature", "C", 1.0),
    (r"°\s?f|℉|degrees? fahrenheit|fahrenheit", "temperature", "F", 1.0),
    (r"seconds?|secs?", "time", "s", 1.0),
    (r"minutes?|mins?", "time", "min", 60.0),
    (r"hours?|hrs?", "time", "h", 3600.0),
    (r"days?", "time", "d", 86400.0),
    (r"weeks?", "time", "wk", 604800.0),
    (r"months?", "time", "mo", 2_629_800.0),
    (r"years?|yrs?", "time", "yr", 31_557_600.0),
    (r"decades?", "time", "decade", 315_576_000.0),
    (r"centur(?:y|ies)", "time", "century", 3_155_760_000.0),
    (r"us dollars?|usd", "money", "USD", 1.0),
    (r"dollars?", "money", "$", 1.0),
    (r"euros?|eur", "money", "EUR", 1.0),
    (r"pounds? sterling|gbp", "money", "GBP", 1.0),
    (r"yuan|renminbi|rmb|cny", "money", "CNY", 1.0),
    (r"yen|jpy", "money", "JPY", 1.0),
    (r"percentage points?|pp", "points", "pp", 1.0),  # not a percent: "rose 1.3 percentage points"
)
_ZH_UNITS: tuple[tuple[str, str, str, float], ...] = (
    ("平方公里|平方千米", "area", "km2", 1e6),
    ("平方米", "area", "m2", 1.0),
    ("公顷", "area", "ha", 1e4),
    ("千米|公里", "length", "km", 1e3),
    ("厘米", "length", "cm", 1e-2),
    ("毫米", "length", "mm", 1e-3),
    ("英里", "length", "mi", 1609.344),
    ("英尺", "length", "ft", 0.3048),
    ("英寸", "length", "inch", 0.0254),
    ("米", "length", "m", 1.0),
    ("千克|公斤", "mass", "kg", 1.0),
    ("毫克", "mass", "mg", 1e-6),
    ("克(?!拉)", "mass", "g", 1e-3),  # not 克拉, carats
    ("斤", "mass", "jin", 0.5),
    ("个?百分点", "points", "pp", 1.0),  # "增长1.3个百分点" is no "增长1.3%"
    ("吨", "mass", "t", 1e3),
    ("毫升", "volume", "ml", 1e-3),
    ("摄氏度|℃", "temperature", "C", 1.0),
    ("华氏度|℉", "temperature", "F", 1.0),
    ("秒", "time", "s", 1.0),
    ("分钟", "time", "min", 60.0),
    ("个?小时", "time", "h", 3600.0),
    ("天", "time", "d", 86400.0),
    ("周(?![年岁])|个?星期", "time", "wk", 604800.0),  # not 周年 (anniversary), 周岁 (age)
    ("个月", "time", "mo", 2_629_800.0),
    ("年(?![级代])", "time", "yr", 31_557_600.0),  # not 年级 (school year), 年代 (decade)
    ("美元", "money", "USD", 1.0),
    ("欧元", "money", "EUR", 1.0),
    ("英镑", "money", "GBP", 1.0),
    ("日元", "money", "JPY", 1.0),
    ("港元|港币", "money", "HKD", 1.0),
    ("元", "money", "CNY", 1.0),
)
_UNIT_TABLE = _EN_UNITS + _ZH_UNITS
_EN_UNIT = re.compile(
    r"[ \t]?-?[ \t]?(?:(?:thousand|million|billion|trillion)[ \t]+)?(?:"
    + "|".join(f"(?P<u{i}>{pat})" for i, (pat, *_rest) in enumerate(_EN_UNITS))
    + r")(?![A-Za-z])",
    re.IGNORECASE,
)
_ZH_UNIT = re.compile(
    r"[ \t]?(?:[百千万]?[万亿])?(?:"  # "3万吨", "47.1万亿元", "5千万美元"
    + "|".join(f"(?P<u{i + len(_EN_UNITS)}>{pat})" for i, (pat, *_rest) in enumerate(_ZH_UNITS))
    + ")"
)
# One-letter abbreviations that are also words or scales ("5m" users, "5G", "in", "l"): read only
# lower-case (litres as "L"), after one space, before a non-letter ("8,848 m", "500 g", "2.0 L"),
# and "m" not before what a million counts ("5 m tonnes", "3 m people": a scale, not metres).
_MILLION_OF = (r"m[ \t]+(?:tonnes?|tons?|barrels?|people|users|dollars|euros|pounds|visitors|residents"
               r"|viewers|subscribers|copies|units|shares|cars|vehicles|passengers|deaths|cases|households"
               r"|customers|jobs|acres|hectares|years)\b")
_SHORT_UNIT = re.compile(rf" (?:(?!{_MILLION_OF})m|g|L)(?![A-Za-z0-9²³/])")
_MILLION_M = re.compile(_MILLION_OF)
_SHORT_UNITS = {"m": ("length", "m", 1.0), "g": ("mass", "g", 1e-3), "L": ("volume", "l", 1.0)}
_CURRENCY_BEFORE = re.compile(r"(?:(?P<code>US|A|C|HK|NT|S|NZ)?\$|(?P<sym>[€£₹]))\s?$")  # "$5", "A$5", "€5"
_CURRENCY_SYMBOL = {"€": "EUR", "£": "GBP", "₹": "INR"}


def _unit_of(text: str, m: re.Match[str], value: float) -> Quantity | None:
    """The unit a number match is stated in, from the currency sign before it or the unit
    word after it; None for a bare number."""
    if m.group(3):
        return Quantity("percent", "%", value)
    end = m.end(2) if m.group(2) else m.end(1)  # the figure's own end: m.end() has taken any space
    unit = _unit_around(text, m.start(), end, value)
    if unit is None and (dash := _RANGE_TO.match(text, end)) is not None:
        # the first figure of a range takes the unit of the second: "60-70%", "3 to 5 km"
        after = _NUMBER.match(text, dash.end())
        if after is not None:
            if after.group(3):
                return Quantity("percent", "%", value)
            more = _unit_around(text, after.start(), after.end(2) if after.group(2) else after.end(1), value)
            if more is not None and more.kind != "money":  # "$5-10" is money already, "5-$10" is not
                return more
    if unit is None and (back := _RANGE_FROM.search(text, max(0, m.start() - 24), m.start())) is not None:
        # the second figure of a range takes the first one's currency: "$5-10 million"
        first = _unit_around(text, back.start(1), back.end(1), value)
        if first is not None and first.kind == "money":
            return Quantity("money", first.unit, value)
    return unit


_RANGE_FROM = re.compile(r"(?<![\d.,])(\d[\d,]*(?:\.\d+)?)[ \t]*(?:-|–|—|~|～|至|到|to)[ \t]*$")
_RANGE_STARTS = frozenset(" \t-–—~～至到t")  # what a range's connector can begin with
_RANGE_TO = re.compile(r"[ \t]*(?:-|–|—|~|～|至|到|to\b)[ \t]*(?=\d)")


def _unit_around(text: str, start: int, end: int, value: float) -> Quantity | None:
    """The unit of the figure at text[start:end]: a currency sign before it or a unit word after."""
    before = _CURRENCY_BEFORE.search(text, max(0, start - 4), start)
    if before is not None:
        sym = before.group("sym")
        code = before.group("code")
        unit = _CURRENCY_SYMBOL[sym] if sym else {None: "$", "US": "USD"}.get(code, f"{code}$")
        return Quantity("money", unit, value)
    after = _EN_UNIT.match(text, end) or _ZH_UNIT.match(text, end)
    if after is None or after.lastgroup is None:
        short = _SHORT_UNIT.match(text, end)
        if short is None:
            return None
        kind, unit, factor = _SHORT_UNITS[short.group(0)[1]]
        return Quantity(kind, unit, value * factor)
    _pat, kind, unit, factor = _UNIT_TABLE[int(after.lastgroup[1:])]
    if kind == "temperature":
        return Quantity(kind, unit, value if unit == "C" else (value - 32) * 5 / 9)
    if unit == "yr" and value.is_integer() and 1000 <= value <= 2100:
        return None  # "2021年": a year, not a duration
    return Quantity(kind, unit, value * factor)


def numbers(text: str) -> set[str]:
    """Numbers a claim states, normalised: "45.5%" -> "45.5", "$30.8 billion" -> "30800000000", and
    dates as one value each ("2021年4月29日" / "29 April 2021" -> "d:2021-4-29"), so a claim's
    date only matches the same date, never its day and month scattered elsewhere. Figures in
    words count when they are plain counts ("twelve workers", "十二名", `claim_spelled_numbers`)."""
    found, rest = _claim_dates(text)
    if "FY" in rest or "fy" in rest:
        years, rest = _fiscal_years(rest)
        found |= years
    return found | _plain_numbers(rest) | _cn_ordinals(rest) | claim_spelled_numbers(rest) | codes(rest)


# a fiscal year written as a code: "FY24", "FY2024", "FY '24" (its year: 2024)
_FISCAL = re.compile(r"(?<![A-Za-z])(?:FY|fy) ?['’]?(\d{4}|\d{2})(?![0-9])")


def _fiscal_years(text: str) -> tuple[set[str], str]:
    """The years of the fiscal-year codes `text` writes ("FY24" -> "2024"), and `text` with them
    blanked (so that "FY 24" is no "24" besides)."""
    years = {m.group(1) if len(m.group(1)) == 4 else f"20{m.group(1)}" for m in _FISCAL.finditer(text)}
    return years, _FISCAL.sub(lambda m: " " * len(m.group()), text) if years else text


# A model, part or formula code: ASCII letters with digits glued on ("RTX4090", "A320neo",
# "TL-XDR3039" -> "XDR3039", "H5N1", "FeS2", "i7", "PM2.5"). Its digits are not a number on their own
# (`_NUMBER` skips digits after a letter), so before codes were read a claim about the RTX4080
# agreed with a record about the RTX4090. Not codes: quarters, halves and fiscal years ("Q3",
# "H1", "FY2021"), which are paraphrased in words ("the third quarter", "fiscal 2021"), and
# square or cubic units ("m2", "km2", "cm3").
_SUBSCRIPT = "₀₁₂₃₄₅₆₇₈₉"
# A code ends where its letters and digits do, or where another code starts ("F5F6F7" is F5, F6
# and F7; "H5N1" is H5 and N1, so "H5N8" states the H5 and not the N1); a letter suffix stays on
# ("A320neo" is not the A320).
_CODE_END = r"(?![0-9₀-₉])(?![A-Za-z]+(?![A-Za-z0-9₀-₉]))"
_CODE = re.compile(r"(?<![A-Za-z])[A-Za-z]+[0-9₀-₉]+(?:\.[0-9]+(?![0-9.]))?(?:[A-Za-z]+(?![0-9₀-₉]))?"
                   + _CODE_END)
_NOT_CODE = re.compile(r"(?i)[qh][1-4]|fy\d+|(?:[kcdm]?m|ft|in|mi|yd)[23]")
_CODE_RUN = re.compile(r"[A-Za-z]+|[0-9]+(?:\.[0-9]+)?")
_FROM_SUBSCRIPT = str.maketrans(_SUBSCRIPT, "0123456789")


def codes(text: str) -> set[str]:
    """The codes a text states, as "c:" values beside its numbers: "The RTX4090 has 24GB" ->
    {"c:RTX4090"}; subscript digits read as digits ("FeS₂" -> "c:FeS2")."""
    out = set()
    for m in _CODE.finditer(text):
        code = m.group().translate(_FROM_SUBSCRIPT)
        if not _NOT_CODE.fullmatch(code):
            out.add("c:" + code)
    return out


@lru_cache(maxsize=4096)
def _code_pattern(code: str) -> re.Pattern[str]:
    runs = []
    for run in _CODE_RUN.findall(code):
        runs.append(re.escape(run) if not run[0].isdigit()
                    else "".join(f"[{d}{_SUBSCRIPT[int(d)]}]" if d.isdigit() else r"\." for d in run))
    return re.compile(r"(?<![A-Za-z])" + r"[-\s_]{0,2}".join(runs) + _CODE_END, re.IGNORECASE)


def code_stated(value: str, text: str) -> bool:
    """Whether `text` states a code (a "c:" value from `codes`), in any case and with or without
    a space or hyphen between its letters and digits: "c:RTX4090" is stated by "RTX 4090" and
    "rtx-4090", but not by "RTX4080", and "c:A320" not by "A320neo" (another model)."""
    return _code_pattern(value[2:]).search(text) is not None


_GLUED = re.compile(r"[0-9](?<=[A-Za-z][0-9])[0-9]*(?![0-9.,]?[0-9])")  # (see `_NUMBER`)


def glued_numbers(text: str) -> set[str]:
    """The whole numbers a text writes glued to the letters of a code ("RTX4090" states 4090,
    "FY2021" 2021), which `stated_numbers` does not read."""
    return {m.group().lstrip("0") or "0" for m in _GLUED.finditer(text)}


def _claim_dates(text: str) -> tuple[set[str], str]:
    """A claim's dates, and the claim with them and its list enumerators blanked. All-digit
    dates count when they can be read one way only: year first ("2021.4.29"), or a day above 12
    ("25.02.2015"); "03/04/2015" stays three numbers."""
    found, rest = _dates(text, prefixes=False)
    if "/" in rest or "." in rest:
        spans = []
        for m in _NUMERIC_DATE.finditer(rest):
            readings = _digit_date_readings(m, both=False)
            if readings:
                year, month, day = readings[0]
                found.add(f"d:{year}-{month}-{day}")
                spans.append(m.span())
        if spans:  # one join, not a copy of the claim per date
            pieces, prev = [], 0
            for start, end in spans:
                pieces += [rest[prev:start], " " * (end - start)]
                prev = end
            rest = "".join(pieces) + rest[prev:]
    # Blanked with a stop, not a space: "12 1)万" must not become "12 万" (120,000).
    return found, _ENUMERATOR.sub(lambda m: ";" * len(m.group()), rest)


def stated_numbers(text: str) -> set[str]:
    """Everything a record states, leniently: plain numbers (date parts included) plus every
    date with its year, year-month and month-day forms, for matching against `numbers`."""
    found, rest = _dates(text, prefixes=True)
    if "月" in rest:
        found |= _months_in_context(text, rest)
    if "FY" in text or "fy" in text:
        found |= _fiscal_years(text)[0]
    return found | _plain_numbers(text, lenient=True) | _cn_ordinals(text)


# a Chinese month with no year of its own ("12月海外单月销量…"; not "12个月", "12月3日", "2024年12月"),
# and a year before it
_ZH_LONE_MONTH = re.compile(r"(?<![\d０-９〇零一二三四五六七八九十年.])(1[0-2]|0?[1-9])月(?![日号份\d])")
_YEAR_MENTION = re.compile(r"(?<![\d.])((?:19|20)\d\d)(?![\d.%])")
_YEAR_REACH = 300   # characters back a month looks for its year


def _months_in_context(text: str, rest: str) -> set[str]:
    """The year-months of a record's Chinese months written without a year, each in the year the
    text last named before it, within a few sentences ("2024年比亚迪海外销量…。12月海外单月销量为…"
    states "d:2024-12"). `rest`: the text with its full dates blanked (`_dates`)."""
    found: set[str] = set()
    for m in _ZH_LONE_MONTH.finditer(rest):
        window = text[max(0, m.start() - _YEAR_REACH):m.start()]
        if "\n\n" in window:
            window = window[window.rindex("\n\n"):]
        year = None
        for y in _YEAR_MENTION.finditer(window):
            year = y.group(1)
        if year is not None:
            found.add(f"d:{year}-{int(m.group(1))}")
    return found


def stated_units(text: str) -> StatedUnits:
    """The units a record states its numbers in (keyed like `stated_numbers`; date parts and
    other numbers with no unit count as bare)."""
    units = StatedUnits()
    _plain_numbers(text, lenient=True, units=units)
    return units


def claim_units(text: str) -> dict[str, Quantity]:
    """The unit a claim gives each of its numbers that has one (keyed like `numbers`):
    "1,200 feet" -> {"1200": length in ft}, "$10 billion" -> {"10000000000": USD}."""
    return numbers_and_units(text)[1]


def numbers_and_units(text: str) -> tuple[set[str], dict[str, Quantity]]:
    """`numbers` and `claim_units` of a claim, from one scan."""
    found, rest = _claim_dates(text)
    if "FY" in rest or "fy" in rest:
        years, rest = _fiscal_years(rest)
        found |= years
    units = StatedUnits()
    found |= _plain_numbers(rest, units=units) | _cn_ordinals(rest)
    found |= claim_spelled_numbers(rest, units) | codes(rest)
    out: dict[str, Quantity] = {}
    for value, seen in units.units_of.items():
        with_unit = [q for q in seen if q is not None]
        if len(with_unit) == 1 and len(seen) == 1:  # one reading only: "5 km", not "5 km ... 5 miles"
            out[value] = with_unit[0]
    return found, out


# Words that make a figure approximate, right before it (a currency sign may sit between) or, in
# Chinese, after it: "约300万辆", "超过300万辆", "300多万", "20%左右", "about $10 billion".
_HEDGE_BEFORE = re.compile(
    r"(?:(?P<about>大约|大概|(?<![合节预签制契条公规盟相邀践违履缔特誓婚租隐简])约(?:为|是|有)?"
    r"|(?<![A-Za-z])(?:approximately|about|around|roughly))"
    r"|(?P<above>超过|逾|多于|高于|(?<![A-Za-z])(?:over|more than|upwards of|in excess of|above|exceeding))"
    r"|(?P<least>至少|不少于|不低于|(?<![A-Za-z])at least)"
    r"|(?P<below>不到|不足|少于|低于|(?<![A-Za-z])(?:less than|fewer than|under|below))"
    r"|(?P<nearly>将近|接近|(?<![最附临靠亲邻贴])近|(?<![A-Za-z])(?:nearly|almost|close to)))"
    r"[ \t]*(?:US\$|HK\$|A\$|C\$|\$|€|£|¥|￥|RMB|USD)?[ \t]*$",
    re.IGNORECASE,
)
_HEDGE_AFTER = re.compile(
    r"(?:[万亿千百]{0,2}(?P<above>多|余))"
    r"|[^\s，。；、,;!?！？]{0,5}?(?:(?P<about>左右|上下)|(?P<least>以上)|(?P<atmost>以下))"
)
# how far a figure so hedged reaches, as (lowest, highest) multiples of it; "round": rounding
# ("an estimated 40 million" hedges the source's count, not the writer's: it is no approximation)
_HEDGE_RANGE = {"about": (0.97, 1.03), "above": (1.0, 1.1), "least": (1.0, 1.1), "below": (0.9, 1.0),
                "atmost": (0.9, 1.0), "nearly": (0.95, 1.0)}


def hedge_of(before: str, after: str) -> str:
    """How the words `before` and `after` a figure hedge it ("about", "above", "least", "below",
    "atmost", "nearly"), or "round" when they do not."""
    for m in (_HEDGE_BEFORE.search(before), _HEDGE_AFTER.match(after)):
        if m is not None:
            return next(k for k, v in m.groupdict().items() if v)
    return "round"


def _near_range(how: str, value: float, written: str) -> tuple[float, float]:
    """The values a figure `value`, written `written` and hedged `how`, stands for ("more": a
    Chinese figure in words and 多 or 余, "两万多" 20,000 up to 30,000, "两万七千余" up to 28,000)."""
    if how == "more":
        zeros = len(written) - len(written.rstrip("0")) if written.isdigit() else 0
        return value, value + 10.0 ** zeros
    if how != "round":
        a, b = _HEDGE_RANGE[how]
        return value * a, value * b
    scale = value / float(written)
    decimals = len(written.partition(".")[2])
    lo, hi = value - 0.5 * scale * 10 ** -decimals, value + 0.5 * scale * 10 ** -decimals
    if decimals == 0:  # "62%" for 61.9%, not "5" for 5.3
        lo, hi = max(lo, value * 0.99), min(hi, value * 1.01)
    return lo, hi


def _is_year(written: str) -> bool:
    return "." not in written and len(written) == 4 and 1800 <= int(written) <= 2100


def figure_near(how: str, written: str, other: str) -> bool:
    """Whether the figure `other` states what the figure `written` (in the same unit, hedged
    `how`) says: "302.44" for "302.4" or for "约300", "61.9" for "62"."""
    written, other = written.translate(_GROUPING), other.translate(_GROUPING)
    if not (_PLAIN_DIGITS.fullmatch(written) and _PLAIN_DIGITS.fullmatch(other)) or _is_year(written):
        return False
    value, got = float(written), float(other)
    if value <= 0 or got == value:
        return False
    return _in_reach(how, value, got, *_near_range(how, value, written))


def _in_reach(how: str, value: float, got: float, lo: float, hi: float) -> bool:
    """Whether `got` is a value the figure `value` (hedged `how`, reaching lo..hi) stands for:
    "above" and "below" exclude the figure itself."""
    if how == "above":
        return value < got <= hi
    if how == "more":
        return value < got < hi
    if how == "below":
        return lo <= got < value
    return lo <= got <= hi and got != value


_PLAIN_DIGITS = re.compile(r"\d+(?:\.\d+)?")


def approximate_figures(text: str) -> dict[str, tuple[str, str]]:
    """A claim's figures that a near value states too (keyed like `numbers`): how each is
    hedged ("about", "above", "least", "below", "atmost", "nearly") or "round" when nothing hedges
    it (a rounded figure: "302.4万" for 302.44万), and its digits as written. Dates and years are
    never approximate."""
    _found, rest = _claim_dates(text)
    spans: dict[str, list[tuple[int, int]]] = {}
    _plain_numbers(rest, spans=spans)
    out: dict[str, tuple[str, str]] = {}
    for key, where in spans.items():
        for start, end in where:
            written = text[start:end].translate(_GROUPING)
            if _TENTHS.fullmatch(text, start, end):
                written = key                      # "八成" is written "80" (%)
            if not _PLAIN_DIGITS.fullmatch(written) or _is_year(written):
                continue
            how = hedge_of(text[max(0, start - 16):start], text[end:end + 8])
            if out.get(key, ("round", ""))[0] == "round":
                out[key] = (how, written)
    spelled: dict[str, list[tuple[int, int]]] = {}
    claim_spelled_numbers(rest, spans=spelled)
    for key, where in spelled.items():   # "三十多家" (30 or more), "约两千人": hedged only (a figure
        for start, end in where:         # in words is no rounded form of a more precise one)
            how = hedge_of(text[max(0, start - 16):start], text[end:end + 8])
            if how == "above" and text[end:end + 1] in ("多", "余", "来"):
                how = "more"             # "两万多": 20,000 and up to the next ten thousand
            if how != "round" and key not in out and _PLAIN_DIGITS.fullmatch(key):
                out[key] = (how, key)
    return out


def near_figures(approx: dict[str, tuple[str, str]], missing: Iterable[str],
                 stated: Sequence[float]) -> set[str]:
    """Of a claim's `missing` figures, those a record states near enough (`stated`: its figures'
    values, sorted): within the hedge's reach ("约300万" for 302.44万, "超过300万" for 302.44万),
    or, for a figure nothing hedges, as the rounded form of a more precise value ("302.4万" or
    "302万" for 302.44万, "62%" for 61.9%)."""
    out: set[str] = set()
    for key in missing:
        got = approx.get(key)
        if got is None:
            continue
        how, written = got
        value = float(key)
        if value <= 0:
            continue
        lo, hi = _near_range(how, value, written)
        k = bisect.bisect_left(stated, lo)
        while k < len(stated) and stated[k] <= hi:
            if _in_reach(how, value, stated[k], lo, hi):
                out.add(key)
                break
            k += 1
    return out


def numbers_agreement(claimed: set[str], stated: set[str], claimed_units: dict[str, Quantity] | None = None,
                      stated_units: StatedUnits | None = None) -> float:
    """Share of a claim's numbers (from `numbers`) that a record states (from `stated_numbers`).
    A full date also agrees with the same month and day stated without a year ("4月29日").

    With units (`claim_units`, `stated_units`): a quantity also agrees when the record
    states it in another unit of the same kind ("5 miles" and "8 km", "100 °C" and "212 °F"), and
    it disagrees when the record states its figure only with other units ("1,200 feet" against a
    record that says "1,200 metres", "$5 million" against "€5 million") and never bare."""
    if not claimed:
        return 1.0
    missing = unstated_numbers(claimed, stated, claimed_units, stated_units)
    return (len(claimed) - len(missing)) / len(claimed)


def unstated_numbers(claimed: set[str], stated: set[str], claimed_units: dict[str, Quantity] | None = None,
                     stated_units: StatedUnits | None = None) -> list[str]:
    """The claim's numbers that the record does not state (as `numbers_agreement` judges), sorted."""
    missing = []
    for value in claimed:
        q = claimed_units.get(value) if claimed_units else None
        if q is not None and stated_units is not None:
            verdict = stated_units.agrees(value, q)
            if verdict is not None:
                if not verdict:
                    missing.append(value)
                continue
        if value in stated:
            continue
        if value.startswith("d:") and value.count("-") == 2 and not value.startswith("d:-"):
            _year, month, day = value[2:].split("-")
            if f"d:?-{month}-{day}" in stated:
                continue
        missing.append(value)
    return sorted(missing)


def _figure_kind(value: str, unit: Quantity | None) -> str:
    """What sort of figure a value is, for telling which of a quote's figures stand where a
    sentence's figure would: a date or year, a code's series (its leading letters), a unit's kind
    (money in any currency), or a bare number."""
    if value.startswith("d:"):
        return "date"
    if value.startswith("c:"):  # a code of the same series: "RTX4080" for "RTX4090", not "i7"
        letters = _CODE_RUN.match(value, 2)
        return "code:" + (letters.group().lower() if letters else "")
    if unit is not None:  # percentage points stand where a percentage would
        return "percent" if unit.kind == "points" else unit.kind
    if value.isdigit() and 1000 <= int(value) <= 2100:
        return "date"  # a year: a date or another year may stand in its place
    return "bare"


def figures_instead(claimed: set[str], missing: list[str], claimed_units: dict[str, Quantity], quote: str,
                    claim: str = "", limit: int = 3) -> list[str]:
    """The figures `quote` states of the same sort as the claim's `missing` ones (from
    `unstated_numbers`), as `display_number` writes them, in the order the quote states them:
    "增速将放缓至2.9%" against a quote with "2.1%" and "3.1%" gives ["2.1%", "3.1%"]; a
    "1200 ft" the quote states as "1,200 metres" gives ["1200 m"], "$5 million" against "€5
    million" ["EUR 5,000,000"]. Empty when the quote states no figure of those sorts (the
    record leaves the figure out rather than stating another).

    The quote's figures that back the claim's other figures (`claimed`, from `numbers`, less
    `missing`; a date in a year the claim states) are not listed: they replace nothing. Given
    the `claim` text, a plain count is matched by what it counts where the quote allows: "21
    segments" against "18 segments, 19 bolts" gives ["18"], not ["18", "19"]."""
    if not missing:
        return []
    wanted = {_figure_kind(v, claimed_units.get(v)) for v in missing}
    dates, rest = _claim_dates(quote)
    units = StatedUnits()
    spans: dict[str, list[tuple[int, int]]] = {}
    plain = _plain_numbers(rest, units=units, spans=spans) | _cn_ordinals(rest)
    plain |= spelled_numbers(rest, units, spans) | codes(rest)
    counted = _counted_nouns(claim, missing) if claim and "bare" in wanted else set()
    found: list[tuple[int, str, str, bool]] = []
    shown: set[str] = {display_number(v, claimed_units.get(v)) for v in missing}
    backed = claimed.difference(missing)  # the claim's figures the record states
    backed_codes = {v.lower() for v in backed if v.startswith("c:")}
    for value in dates | plain:
        if value in backed or (value.startswith("d:") and value[2:].split("-", 1)[0] in backed):
            continue
        if value.startswith("c:") and value.lower() in backed_codes:
            continue
        for unit in units.units_of.get(value) or {None}:
            kind = _figure_kind(value, unit)
            if kind == "date" and not value.startswith("d:") and _counts(rest, spans.get(value, [])):
                kind = "bare"   # "1800多只", "1,800 pandas": no year
            if kind not in wanted:
                continue
            text = display_number(value, unit)
            if text in shown:
                continue
            shown.add(text)
            where = spans.get(value, [])
            same_noun = kind == "bare" and any(_noun_after(rest, end) in counted for _start, end in where)
            at = min((start for start, _end in where), default=_first_position(quote, value))
            found.append((at, text, kind, same_noun))
    if any(same for *_rest, same in found):  # the quote counts the same thing: of its counts, those
        found = [f for f in found if f[3] or f[2] != "bare"]
    return [text for _at, text, *_rest in sorted(found)[:limit]]


_SCALES = (1e3, 1e6, 1e9, 1e-3, 1e-6, 1e-9)


def scale_slip(missing: list[str], claimed_units: dict[str, Quantity], quote: str) -> tuple[str, str] | None:
    """A measured figure of the claim's `missing` ones (from `unstated_numbers`) that `quote` states
    a thousand, a million or a billion times over or under, in the same unit ("US$26.0 million"
    against "US$26.0 billion", "€3.2 million" against "€3.2 billion"): a slip of scale, not a
    figure the record leaves out. (claim's, quote's) as `display_number` writes them, or None.
    Counts, percentages, dates and codes are not read so ("5 people" against "5,000 people" may be
    two groups), nor figures under a thousand in their unit's base ("$0.70 per share" against
    "$700 million" is another figure, not a slip)."""
    wanted = [(v, u) for v in missing if (u := claimed_units.get(v)) is not None
              and u.kind not in ("points", "percent") and u.base >= 1000]
    if not wanted:
        return None
    units = StatedUnits()
    _plain_numbers(_claim_dates(quote)[1], units=units)
    for v, u in wanted:
        for w, theirs in units.units_of.items():
            for t in theirs:
                if t is None or t.kind != u.kind or (u.kind == "money" and t.unit != u.unit) or t.base < 1000:
                    continue
                ratio = t.base / u.base
                if any(abs(ratio - f) <= 1e-9 * f for f in _SCALES):
                    return display_number(v, u), display_number(w, t)
    return None


def _counted_nouns(claim: str, missing: list[str]) -> set[str]:
    """What the claim's missing plain counts count: the word after each ("21 segments" ->
    "segment"; a Chinese figure's classifier, "3名" -> "名")."""
    _dates_found, rest = _claim_dates(claim)
    spans: dict[str, list[tuple[int, int]]] = {}
    _plain_numbers(rest, spans=spans)
    claim_spelled_numbers(rest, spans=spans)
    nouns = {_noun_after(rest, end) for v in missing for _start, end in spans.get(v, [])}
    nouns.discard("")
    return nouns


_NEXT_WORD = re.compile(r"[ \t]*(?:([A-Za-z\u00c0-\u024f]+)|([\u3400-\u9fff]))")


_COUNT_AFTER = re.compile(r"[多余几]?(?![年月日天周])[个家名位条次种项座所只件台辆架艘例部本场届期头匹]")


def _counts(text: str, where: list[tuple[int, int]]) -> bool:
    """Whether a year-like number is written, at each of `where` in `text`, as a count: grouped
    ("1,800") or before a Chinese measure word ("1800多只", "1864只")."""
    return bool(where) and all("," in text[a:b] or _COUNT_AFTER.match(text, b) for a, b in where)


def _noun_after(text: str, end: int) -> str:
    """The word after a figure ending at `end`, stemmed ("segments" -> "segment"), or the
    Chinese character after it (a classifier); "" when neither follows."""
    m = _NEXT_WORD.match(text, end)
    if m is None:
        return ""
    return _stem(m.group(1).lower()) if m.group(1) else m.group(2)


def _first_position(quote: str, value: str) -> int:
    """Where a date's year first shows in the quote (for ordering; the end when it does not)."""
    year = value[2:].split("-", 1)[0] if value.startswith("d:") else value.removeprefix("c:")
    at = quote.find(year) if year else -1
    return at if at >= 0 else len(quote)


_UNIT_LABEL = {"C": " °C", "F": " °F", "%": "%"}  # how a unit follows its figure (else " " + unit)


def display_number(value: str, unit: Quantity | None = None) -> str:
    """A canonical value from `numbers` as a reader would write it: "1200 ft", "30%", "USD
    10,000,000", "$25,000", "2021-04-29" (a date), "04-29" (a day without a year)."""
    if value.startswith("d:"):
        year, *rest = value[2:].split("-")
        return "-".join([year] * bool(year) + [part.zfill(2) for part in rest])
    if value.startswith("c:"):
        return value[2:]
    whole, dot, frac = value.partition(".")
    text = (f"{int(whole):,}" if whole.isdigit() and len(whole) > 4 else whole) + dot + frac  # "1936"
    if unit is None:
        return text
    if unit.kind == "money":
        return f"{unit.unit}{text}" if unit.unit.endswith("$") else f"{unit.unit} {text}"
    return text + _UNIT_LABEL.get(unit.unit, " " + unit.unit)


_PER = {"百分之": 1.0, "千分之": 10.0}  # what a figure after them is, in percent


def _plain_numbers(text: str, *, lenient: bool = False, units: StatedUnits | None = None,
                   spans: dict[str, list[tuple[int, int]]] | None = None) -> set[str]:
    """Each number once, by its value: "30.8 billion" and "30,800,000,000" are both
    "30800000000", "3万" and "30,000" both "30000", "45.50%" is "45.5". `lenient` (a record's
    side) adds the bare figure of a scaled number too ("30.8"). With `units`, each number's
    unit (or None) is recorded there too, and with `spans` where its digits are written."""
    found: set[str] = set()
    for m in _NUMBER.finditer(text):
        if text.startswith("成", m.end()) and _TENTHS.match(text, m.start()):
            continue   # "6成" is 60%, read below
        whole = m.group(1).translate(_GROUPING)
        frac = m.group(2)
        value = whole + ("." + frac if frac else "")
        per = _PER.get(text[max(0, m.start() - 3) : m.start()])  # "百分之3" 3%, "千分之3" 0.3%
        if per is not None:
            key = _fmt(float(value) / per)
            found.add(key)
            if spans is not None:
                spans.setdefault(key, []).append((m.start(), m.end(2) if frac else m.end(1)))
            if units is not None:
                units.add(key, Quantity("percent", "%", float(value) / per))
            continue
        tail = text[m.end() : m.end() + 12].lower()
        scale = _scale_at(text, m.end())
        if scale is None and tail[:1] == "m" and _MILLION_M.match(text, m.end()):
            scale = 1e6  # "5 m tonnes"
        if scale is None and not m.group(3):
            scale = _range_scale(text, m.end(2) if frac else m.end(1), float(value))
        keys = []
        if scale is None or lenient:
            keys.append(_fmt(float(value)))
        if scale is not None:
            keys.append(_fmt(float(value) * scale))
        short = None
        if scale is None and lenient and tail[:1] in ("m", "b", "k"):
            matched = _SHORT_SCALE.match(text, m.end())
            short = _fmt(float(value) * _SHORT_SCALES[matched.group(1).lower()]) if matched else None
        found.update(keys)
        if short is not None:  # "5m", "3bn", "10k": the scaled figure too, with no unit of its own
            found.add(short)
        if spans is not None:
            for key in keys + ([short] if short else []):
                spans.setdefault(key, []).append((m.start(), m.end(2) if frac else m.end(1)))
        if units is not None:
            q = _unit_of(text, m, float(value) * (scale or 1.0))
            if q is None and lenient and not m.group(3):
                q = _counted(text, m.start(), m.end(2) if frac else m.end(1), float(value) * (scale or 1.0))
            for key in keys:
                units.add(key, q)
            if short is not None:
                units.add(short, None)
    for t in _TENTHS.finditer(text) if "成" in text else ():   # "六成" is 60%
        tenths = 10.0 * _TENTH_DIGITS[t.group(1)]
        key = _fmt(tenths)
        found.add(key)
        if spans is not None:
            spans.setdefault(key, []).append((t.start(), t.end()))
        if units is not None:
            units.add(key, Quantity("percent", "%", tenths))
    return found


_SCALE_CHARS = frozenset("万亿千百")
_CJK_CHAR = re.compile(r"[\u4e00-\u9fff]")
_COUNTED_MORE = frozenset("号时分秒季款篇张份套间层")   # measure words `_CN_CLASSIFIER` lacks


def _counted(text: str, start: int, end: int, value: float) -> Quantity | None:
    """What a record's Chinese figure counts when a measure word follows it ("30家工厂", "12日",
    "5.2个百分点"), or that it is a time ("09:30发布"), as a unit of kind "count": such a figure is
    not the bare figure a claim's "30%" or "30亿元" may be stated as (a page's date, time or list
    number is no share). Not after a hedge ("30左右", "30多", "30以上"), which is the figure itself."""
    if start > 0 and text[start - 1] in ":：" and end < len(text) and _CJK_CHAR.match(text, end):
        return Quantity("count", ":", value)
    while end < len(text) and text[end] in _SCALE_CHARS:
        end += 1
    if end < len(text) and (text[end] in _CN_CLASSIFIER or text[end] in _COUNTED_MORE):
        return Quantity("count", text[end], value)
    return None


# tenths ("成"): "六成" 60%, "逾三成", "两成以上"; not "一成不变" or "统一成本" (成本, 成为, 成立 …)
_TENTH_DIGITS = {c: float(i) for i, c in enumerate("〇一二三四五六七八九") if i} | {
    "两": 2.0, **{str(i): float(i) for i in range(1, 10)}}
_TENTHS = re.compile(
    r"([一二两三四五六七八九1-9])(?<![〇零一二两三四五六七八九十百千万亿\d.．].)成"
    r"(?!不变|为|立|功|本|长|熟|果|绩|员|就|交|型|分|都|品|年|人|千|百|效|批|套|片|真|行|名|语|全|形|材|才"
    r"|事|色|像|因|败|活|药|仙|家|婚|亲|器|章|群|对|双|堆|串|倍)")


def _range_scale(text: str, end: int, value: float) -> float | None:
    """The scale of a range's second figure, which the first figure of the range shares: "$5-10
    million" is five to ten million, "3至5万" thirty to fifty thousand. Only when the second figure
    is the larger one ("2019-2020 million" is no range of millions)."""
    if text[end:end + 1] not in _RANGE_STARTS:
        return None
    dash = _RANGE_TO.match(text, end)
    if dash is None:
        return None
    after = _NUMBER.match(text, dash.end())
    if after is None or after.group(3):
        return None
    second = float(after.group(1).translate(_GROUPING) + ("." + after.group(2) if after.group(2) else ""))
    scale = _scale_at(text, after.end())
    return scale if scale is not None and second > value else None


_KILO_UNITS = frozenset("米克瓦卡焦伏帕赫兆")


def _scale_at(text: str, pos: int) -> float | None:
    """The scale word or character a number ending at `pos` takes ("million", "万"), if any."""
    tail = text[pos:pos + 12].lower()
    word = tail.lstrip()
    scale = next((f for w, f in _SCALE.items() if word.startswith(w)), None)
    if scale is not None:
        return scale
    if tail[:2] == "百分":
        return None  # "0.3百分点" is 0.3 percentage points, "百分比" a percentage
    if tail[:1] == "千" and tail[1:2] in _KILO_UNITS:
        return None  # "3千米" is 3 km, "12千瓦时" 12 kWh: 千 is the unit's, not a scale
    if tail[:1] in ("多", "余") and tail[1:2] in _CN_NUMBER_UNIT:
        tail = tail[1:]  # "300多万" is three million and more
    scale = _CN_NUMBER_UNIT.get(tail[:1])
    larger = _CN_NUMBER_UNIT.get(tail[1:2])
    if scale is not None and larger is not None and larger > scale:
        return scale * larger  # "47.1万亿" (10^12), "3千亿", "5百万"; not "300万千瓦" (kilowatts)
    return scale


_EN_ONES = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen".split())}
_EN_TENS = {w: 10 * (i + 2)
            for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_EN_ORDINALS = {
    **{w: i + 1 for i, w in enumerate(
        "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
        "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth".split())},
    **{w[:-1] + "ieth": v for w, v in _EN_TENS.items()},
}
_EN_MULTIPLIERS = {"hundred": 100, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12,
                   "dozen": 12}
_EN_NUMBER_WORD = "|".join(
    sorted([*_EN_ONES, *_EN_TENS, *_EN_ORDINALS, *_EN_MULTIPLIERS], key=len, reverse=True))
# A run of number words ("six", "twenty-one", "two hundred and five", "a million", "three
# thousand"), then an optional percent. Hyphens, spaces and "and" join the words.
_EN_NUMBER_INITIALS = "".join(sorted({w[0] for w in _EN_NUMBER_WORD.split("|")} | {"a"}))
_EN_SPELLED = re.compile(  # the look-ahead at the initials lets most positions fail at once
    rf"\b(?=[{_EN_NUMBER_INITIALS}])"
    rf"(?:an?[ \t]+(?=(?:hundred|thousand|million|billion|trillion|dozen)\b))?(?:{_EN_NUMBER_WORD})"
    rf"(?:(?:[ \t]*-[ \t]*|[ \t]+(?:and[ \t]+)?)(?:{_EN_NUMBER_WORD}))*\b"
    r"(?P<pct>[ \t]*(?:%|percent\b|per[ \t]cent\b))?",
)
# Matched against the lower-cased text (four times faster than IGNORECASE on long pages), or with
# IGNORECASE where lower-casing changes the text's length ("İ") and offsets would shift.
_EN_SPELLED_ANY_CASE = re.compile(_EN_SPELLED.pattern, re.IGNORECASE)
_CN_SPELLED = re.compile(r"[零〇一二两三四五六七八九十百千万亿]+")
# Classifiers after which a single Chinese digit counts ("三家", "五名"), as it does before a unit
# ("六公里"); others ("三国", "一些", "七夕") name things rather than count them.
_CN_CLASSIFIER = frozenset("个家名位条次年天岁人种项座所只件台辆架艘倍例起部本场届期月周日小")


def _en_spelled_value(words: list[str]) -> list[float]:
    """Values of a run of English number words; a run that cannot be one number ("one two
    three") gives one value per number in it."""
    values: list[float] = []
    total = current = 0.0
    last = ""  # "ones", "tens", "mult" or ""
    for word in words:
        if word in ("a", "an"):
            current, last = 1.0, "ones"
            continue
        if word in _EN_ORDINALS:
            v, kind = float(_EN_ORDINALS[word]), "ones" if _EN_ORDINALS[word] < 20 else "tens"
        elif word in _EN_ONES:
            v, kind = float(_EN_ONES[word]), "ones"
        elif word in _EN_TENS:
            v, kind = float(_EN_TENS[word]), "tens"
        else:
            mult = float(_EN_MULTIPLIERS[word])
            if mult < 1000:  # hundred, dozen
                current = (current or 1.0) * mult
            else:
                total += (current or 1.0) * mult
                current = 0.0
            last = "mult"
            continue
        if last == "ones" or (last == "tens" and kind == "tens"):  # "one two", "twenty thirty"
            values.append(total + current)
            total = current = 0.0
        current += v
        last = kind
    values.append(total + current)
    return values


def _cn_spelled_value(numeral: str) -> float:
    """Value of a Chinese numeral with 万 and 亿 ("三千五百万" 35,000,000, "一亿两千万"
    120,000,000, "三万五千" 35,000); digits without units read one by one ("一一五" 115)."""
    if all(ch in _CN_DIGIT for ch in numeral):
        return float(_cn_value(numeral) or 0) if len(numeral) > 1 else float(_CN_DIGIT[numeral])
    total = section = 0.0
    digit = 0
    for ch in numeral:
        if ch in _CN_DIGIT:
            digit = _CN_DIGIT[ch]
        elif ch in _CN_UNIT:
            section += (digit or 1) * _CN_UNIT[ch]
            digit = 0
        elif ch == "万":
            total += (section + digit or 1) * 1e4
            section, digit = 0.0, 0
        else:  # 亿
            total = (total + section + digit or 1) * 1e8
            section, digit = 0.0, 0
    return total + section + digit


def spelled_numbers(text: str, units: StatedUnits | None = None,
                    spans: dict[str, list[tuple[int, int]]] | None = None) -> set[str]:
    """Numbers a record writes in words, keyed like `stated_numbers`: "six" 6, "twenty-one" 21,
    "sixth" 6, "two million" 2000000, "a dozen" 12, "三千五百万" 35000000, "五名" 5,
    "百分之三十" 30 (a percentage). Read leniently (a record's side), and only for claims whose
    figures the record does not state in digits. With `units`, each figure's unit is recorded
    there too ("four years", "六公里"), and with `spans` where each figure is written."""
    found: set[str] = set()
    lower = text.lower()
    matches = _EN_SPELLED.finditer(lower) if len(lower) == len(text) else _EN_SPELLED_ANY_CASE.finditer(text)
    for m in matches:
        end = m.end() if m.group("pct") is None else m.start("pct")
        words = [w for w in re.split(r"[\s-]+", m.string[m.start() : end].lower()) if w and w != "and"]
        if words[0] in _EN_MULTIPLIERS:  # "2 million": the digits' reading has it
            continue
        values = _en_spelled_value(words)
        for value in values:
            found.add(_fmt(value))
            if spans is not None:
                spans.setdefault(_fmt(value), []).append((m.start(), end))
        if units is not None:
            for value in values[:-1]:
                units.add(_fmt(value), None)
            last = values[-1]
            q = Quantity("percent", "%", last) if m.group("pct") else _unit_around(text, m.start(), end, last)
            units.add(_fmt(last), q)
    for m in _CN_SPELLED.finditer(text):
        run = m.group(0)
        after = text[m.end() : m.end() + 1]
        if run in ("百", "千") and text.startswith("分之", m.end()):
            continue  # the 百 of "百分之三十" (30%): its figure follows
        if text[m.start() - 1 : m.start()].isdigit() and run.strip("百千万亿") == "":
            continue  # the 万亿 of "47.1万亿" (the digits' reading has it), the 千 of "12千瓦时"
        per = _PER.get(text[max(0, m.start() - 3) : m.start()])  # "百分之三十" 30%, "千分之五" 0.5%
        percent = per is not None
        if len(run) == 1 and not percent and (
                run in "零〇一" or (run in _CN_DIGIT and after not in _CN_CLASSIFIER
                                    and not _ZH_UNIT.match(text, m.end()))):
            continue  # "一些", "三国": not a count ("三家", "六公里" are)
        very = run == "十" and after == "分" and text[m.end() + 1 : m.end() + 2] != "钟"
        if run in ("万一", "千万", "一一") or very:
            continue  # "万一" (in case), "千万" (by all means), "十分" (very; "十分钟" is ten minutes)
        amount = _cn_spelled_value(run) / (per or 1.0)
        if amount == 0:  # "零零"
            continue
        found.add(_fmt(amount))
        if spans is not None:
            spans.setdefault(_fmt(amount), []).append((m.start(), m.end()))
        if units is not None:
            unit = Quantity("percent", "%", amount) if percent else None
            units.add(_fmt(amount), unit or _unit_around(text, m.start(), m.end(), amount))
    return found


# A determiner right before a count in words: the count refers back rather than reports.
_REFERRING = re.compile(r"(?:\b(?:the|these|those|both|all|its|their|his|her)\s+|[这那此该其各])$",
                        re.IGNORECASE)


def claim_spelled_numbers(text: str, units: StatedUnits | None = None,
                          spans: dict[str, list[tuple[int, int]]] | None = None) -> set[str]:
    """Figures a claim writes in words, read strictly: cardinals from two up ("twelve workers",
    "two million dollars", "fifty percent", "十二名", "三千万", "百分之三十"). Not "one", "a
    dozen", "a thousand" or ordinals ("the first time", "a third of"), which say more
    than they count, not a count after a determiner ("the two films", "这三个校区"), which
    refers to things named elsewhere, and not a Chinese numeral without a classifier or unit
    after it."""
    found: set[str] = set()
    written: dict[str, list[tuple[int, int]]] = {}
    seen = StatedUnits()
    spelled_numbers(text, seen, written)
    for value, where in written.items():
        try:
            n = float(value)
        except ValueError:
            continue
        if n < 2 and not any(q is not None and q.kind == "percent" for q in seen.units_of.get(value, ())):
            continue  # "one", "zero"; not "one percent", "千分之五" (0.5%)
        for start, end in where:
            run = text[start:end].lower()
            words = [w for w in re.split(r"[\s-]+", run) if w and w != "and"]
            if words and words[0] in ("a", "an"):
                continue
            if any(w in _EN_ORDINALS for w in words):
                continue
            if _REFERRING.search(text[max(0, start - 8) : start]):
                continue  # "the two films", "这三个校区": it refers to things, it reports no count
            if _CN_SPELLED.fullmatch(text[start:end]):
                if text[start - 1 : start].isdigit() or text[start:end].strip("百千万亿") == "":
                    continue  # the 万 of "3万" (the digits' reading has it), or "万人" alone
                at = end + (text[end:end + 1] in ("余", "多", "来"))   # "二万七千八百余人": past its hedge
                after = text[at : at + 1]
                percent = text[max(0, start - 3) : start] in _PER
                if not percent and after not in _CN_CLASSIFIER and not _ZH_UNIT.match(text, at):
                    continue
            found.add(value)
            if spans is not None:
                spans.setdefault(value, []).append((start, end))
        if value in found and units is not None:
            for q in seen.units_of.get(value) or {None}:
                units.add(value, q)
    return found


_MONTHS = {
    name: i + 1
    for i, names in enumerate(
        ["january jan", "february feb", "march mar", "april apr", "may", "june jun", "july jul",
         "august aug", "september sep sept", "october oct", "november nov", "december dec"]
    )
    for name in names.split()
}
_MONTH = r"(?P<{g}>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
# Patterns that start with a month name are tried only where a month name may start: at a word
# of three to nine letters with a month's initial, after a word boundary, before ",", "." and
# space and a digit (`_month_first_starts`, from the digits after space); trying the
# month alternation at every position of a 100k-character page was most of the date scanning cost.
_MONTH_FIRST = r"\b(?=[adfjmnosADFJMNOS])(?=[A-Za-z]{3,9}\.?,?\s+\d)"
_DIGIT_AFTER_SPACE = re.compile(r"\d(?<=\s\d)")   # (digits are rarer than spaces)
_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_MONTH_INITIALS = frozenset("adfjmnosADFJMNOS")


def _month_first_starts(text: str) -> Iterator[int]:
    """Where `_MONTH_FIRST` holds, in order: the positions a month-first date pattern can match at."""
    for m in _DIGIT_AFTER_SPACE.finditer(text):
        end = m.start() - 1
        while end and text[end - 1].isspace():
            end -= 1
        if end and text[end - 1] == ",":
            end -= 1
        if end and text[end - 1] == ".":
            end -= 1
        start = end
        while start and text[start - 1] in _ASCII_LETTERS and end - start <= 9:
            start -= 1
        if 3 <= end - start <= 9 and text[start] in _MONTH_INITIALS and (
                start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_")):
            yield start


def _month_first_matches(pat: re.Pattern[str], text: str, starts: list[int]) -> Iterator[re.Match[str]]:
    """`pat.finditer(text)` for a pattern that opens with `_MONTH_FIRST`, tried only at `starts`
    (`_month_first_starts(text)`)."""
    end = 0
    for start in starts:
        if start >= end:
            m = pat.match(text, start)
            if m is not None:
                end = m.end()
                yield m


# (pattern, a literal every match contains, or "" for none, whether it opens with `_MONTH_FIRST`):
# a page without that literal skips the pattern (most English pages never contain 月). No date starts
# or ends inside a longer number or a decimal ("0.5 May", "12021年4月", "May 1,200"). Each pattern
# opens with the class of its first character, and checks what stands before that character right
# after it (see `_NUMBER`).
_DATE_PATTERNS: list[tuple[re.Pattern[str], str, bool]] = [
    (re.compile(r"(?P<y>\d(?<![\d.]\d)\d{3})\s*年\s*(?P<m>\d{1,2})\s*月\s*(?P<d>\d{1,2})\s*[日号]"),
     "月", False),
    (re.compile(r"(?P<y>\d(?<![\d.]\d)\d{3})\s*年\s*(?P<m>\d{1,2})\s*月"), "月", False),
    (re.compile(r"(?P<m>\d(?<![\d.]\d)\d?)\s*月\s*(?P<d>\d{1,2})\s*[日号]"), "月", False),
    # the same in Chinese numerals: 二〇二一年四月二十九日, 四月二十九日
    (re.compile(r"(?P<y>[零〇一二三四五六七八九]{4})\s*年\s*(?P<m>[一二三四五六七八九十]{1,2})\s*月"
                r"\s*(?P<d>[一二三四五六七八九十]{1,3})\s*[日号]"), "月", False),
    (re.compile(r"(?P<y>[零〇一二三四五六七八九]{4})\s*年\s*(?P<m>[一二三四五六七八九十]{1,2})\s*月"),
     "月", False),
    (re.compile(r"(?P<m>[一二三四五六七八九十](?<![零〇一二两三四五六七八九十百千].)[一二三四五六七八九十]?)\s*月"
                r"\s*(?P<d>[一二三四五六七八九十]{1,3})\s*[日号]"), "月", False),
    (re.compile(r"(?P<y>\d(?<!\w\d)(?<!\d\.\d)\d{3})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b"), "", False),
    (re.compile(r"(?P<d>\d(?<!\w\d)(?<!\d[.,]\d)\d?)(?:st|nd|rd|th)?\s+" + _MONTH.format(g="mn")
                + r",?\s+(?P<y>\d{4})\b", re.IGNORECASE), "", False),
    (re.compile(_MONTH_FIRST + _MONTH.format(g="mn")
                + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y>\d{4})\b", re.IGNORECASE), "", True),
    (re.compile(_MONTH_FIRST + _MONTH.format(g="mn") + r",?\s+(?P<y>\d{4})\b", re.IGNORECASE), "", True),
    (re.compile(r"(?P<d>\d(?<!\w\d)(?<!\d[.,]\d)\d?)(?:st|nd|rd|th)?\s+" + _MONTH.format(g="mn") + r"\b",
                re.IGNORECASE), "", False),
    (re.compile(_MONTH_FIRST + _MONTH.format(g="mn")
                + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?\b(?!,?\s*\d{4})(?!,\d{3}(?!\d))",
               re.IGNORECASE), "", True),
]


# All-digit dates with slashes or dots: year first ("2021/4/29", "2021.04.29", common on Chinese
# pages) or last ("02/25/2015", "25.02.2015"; which of day and month comes first is the page's
# convention, so both readings that are valid count).
_NUMERIC_DATE = re.compile(r"(\d(?<![\d.]\d)(?<!\d,\d)\d{0,3})([./])(\d{1,2})\2(\d{1,4})(?!\d|\.\d)")


def numeric_dates(text: str) -> set[str]:
    """Dates a record writes in digits only, in `stated_numbers`' forms (full date, year-month,
    month-day). Read separately, only when a claim's date is not otherwise found in the record."""
    found: set[str] = set()
    for m in _NUMERIC_DATE.finditer(text):
        for year, month, day in _digit_date_readings(m, both=True):
            found.update({f"d:{year}-{month}-{day}", f"d:{year}-{month}", f"d:-{month}-{day}"})
    return found


def _digit_date_readings(m: re.Match[str], *, both: bool) -> list[tuple[str, int, int]]:
    """(year, month, day) readings of an all-digit date match that are valid dates. Year first
    reads one way; year last reads month first (US) and day first, and `both` keeps both where
    both are valid, else only a reading that is the only valid one."""
    first, _sep, middle, last = m.groups()
    if len(first) == 4:
        candidates = [(first, int(middle), int(last))]
    elif len(last) == 4 and len(first) <= 2:
        a, b = int(first), int(middle)
        candidates = [(last, a, b), (last, b, a)] if a != b else [(last, a, b)]
    else:
        return []
    valid = [(y, mo, d) for y, mo, d in candidates if 1 <= mo <= 12 and 1 <= d <= 31]
    return valid if both or len(valid) == 1 else []


def _date_part(text: str) -> int:
    """A date's year, month or day in Arabic digits or in Chinese numerals ("二〇二一", "十二");
    0 when it is neither."""
    if text.isdigit():  # "2021", also full-width "２０２１"
        return int(text)
    if all(ch in _CN_DIGIT or ch in _CN_UNIT for ch in text):
        return _cn_value(text) or 0
    return 0


def _dates(text: str, *, prefixes: bool) -> tuple[set[str], str]:
    """Date values in text, and the text with those dates blanked out (same length)."""
    found: set[str] = set()
    if not _DIGIT.search(text) and "月" not in text:
        return found, text
    starts: list[int] | None = None   # `_month_first_starts` of the text as it stands
    for pat, literal, month_first in _DATE_PATTERNS:
        if literal and literal not in text:
            continue
        spans: list[tuple[int, int]] = []
        if month_first:
            if starts is None:
                starts = list(_month_first_starts(text))
            matches = _month_first_matches(pat, text, starts)
        else:
            matches = pat.finditer(text)
        for m in matches:
            parts = m.groupdict()
            month = _MONTHS[parts["mn"].lower()] if parts.get("mn") else _date_part(parts["m"])
            day = _date_part(parts["d"]) if parts.get("d") else 0
            year = str(_date_part(parts["y"])) if parts.get("y") else ""
            if not 1 <= month <= 12 or not 0 <= day <= 31 or year == "0":
                continue
            if year and day:
                found.add(f"d:{year}-{month}-{day}")
                if prefixes:
                    found.update({f"d:{year}-{month}", f"d:-{month}-{day}", year})
            elif year:
                found.add(f"d:{year}-{month}")
                if prefixes:
                    found.add(year)
            else:
                found.add(f"d:-{month}-{day}")
                if prefixes:
                    found.add(f"d:?-{month}-{day}")  # stated without a year: any year agrees
            spans.append((m.start(), m.end()))
        if spans:  # blank this pattern's dates so later (shorter) patterns don't count them again
            text = _blank(text, spans)
            starts = None
    return found, text


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with each span blanked out, keeping its length and its dots ("12 May.3" must not
    leave a 3 that the full text would not read)."""
    pieces: list[str] = []
    prev = 0
    for start, end in spans:
        pieces.append(text[prev:start])
        pieces.append("".join("." if ch == "." else " " for ch in text[start:end]))
        prev = end
    pieces.append(text[prev:])
    return "".join(pieces)


def _fmt(value: float) -> str:
    # 12 significant digits: exact for the figures prose states, and 30.8 * 1e9 (which floats
    # make 30800000000.000004) prints as 30800000000.
    text = f"{value:.12g}"
    if "e+" in text:  # "47.1万亿" is 47100000000000, not 4.71e+13
        text = f"{float(text):.0f}"
    return text


def normalize_for_match(text: str) -> str:
    """Lower-case, collapse whitespace and unify quotes/dashes for exact/fuzzy comparison."""
    text = text.lower()
    for char, plain in _QUOTES:  # a `replace` per character present: a fifth of `translate`'s time
        if char in text:
            text = text.replace(char, plain)
    return " ".join(text.split())


_QUOTES = (("“", '"'), ("”", '"'), ("‘", "'"), ("’", "'"), ("–", "-"), ("—", "-"), ("\u00a0", " "))
