"""Does an evidence quote contradict the sentence it would support?

A quote that repeats a sentence word for word except at one short spot, where it says the
opposite ("decreased" for "increased", "Northern Hemisphere" for "Southern"), adds or drops a
negation ("did not acquire" for "acquired"), states another figure ("2021款" for "2022款", "12
June" for "12 May") or names another thing ("… is Berlin, not Bonn" for "… is Paris, not Bonn",
利物浦 for 曼联), is evidence against the sentence, however many of its words it shares. Token
statistics cannot see this (the changed word is one of many), so the matcher checks the pairs it
could cite on their aligned quote, and a contradicted pair is never cited
(`tracer.verify.CONTRADICTED`, scored at most `CONFLICT_SCORE`).

The check is narrow on purpose: the two texts are aligned word by word (difflib), at least half
of the sentence's words must align, and the change must be short (at most three words a side)
with aligned words before or after it (on both sides for a negation, a figure or a name; a
name may also open both texts, after a connective such as "However," or "然而"). The sentence's
word at that spot must be nowhere in the quote, and an added negation must add nothing but the
negation and small words. In Chinese, the leading clauses before a long aligned run are compared
too (`_leading_swap`), so are the proper names right before any aligned run
(`_proper_before_run`), and `quote_addition` reads a noun or time that the sentence adds to its
quote. A negation that the alignment does not reach is read on its own (`_unanswered_negation`):
the sentence denies something and its quote, which repeats half of it, denies nothing, unless
the record sentence before or after the quote answers it; so is an opposite word
(`_crossed_opposite`). For a quote that repeats less (a paraphrase), only the sentence's own
denial of a verb or an adjective is read, and only when the quote speaks of the negated clause,
and an opposite word with two of the sentence's words near it in both.

Beyond one changed spot (twenty-first session): a plan, forecast or proposal stated as done and
the reverse (`_prospect_change`, `_planned_for_done`, `_done_or_not`), a sentence surer than its
quote (`_strong_modal`), another rank (`rank_conflict`, verbatim quotes too), roles the other way
round around a word both texts share (`_roles_swapped`), and in Chinese more of them than the
quote says (`_zh_quantity`) and a figure the quote gives to another measure (`_zh_figure_slot`);
the figure slot and the role swap read Chinese without the alignment, whose clauses move. And
(thirty-eighth session) a quote that takes part of the sentence back with a word the sentence
lacks (`_qualified`: "seldom performed" for "performed", "probably reduces" for "reduces",
"non-cancerous" for "cancerous", 涉嫌挪用 for 挪用), a sentence that makes it a first or a most
(`_made_first`: 首次, 最高 for 较高), and a quote that only says so on a condition it opens
with (`_condition_dropped`: "If the economy slows, the bank will cut rates" for "The bank will cut
rates").
docs/quality.md lists every rule with the cases it was measured on (`scripts/perturb`,
`scripts/meaning`).
"""

from __future__ import annotations

import bisect
import difflib
import itertools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

import rjieba
from rapidfuzz.distance import Levenshtein

from tracer.text import EN_STOPWORDS, NAME_JOINERS, _cn_value, _stem, figure_near, hedge_of

_EN_OPPOSITES = """
increase:decrease increase:reduce increase:decline increase:drop increase:fall rise:fall rise:decline
rise:drop rose:fell rose:fall rise:fell risen:fallen grow:shrink grow:decline gain:lose gain:loss higher:lower
more:less more:fewer with:without heavy:light
larger:smaller bigger:smaller greater:smaller greater:lesser most:least maximum:minimum above:below
before:after earlier:later north:south northern:southern east:west eastern:western upper:lower
positive:negative win:lose won:lost victory:defeat success:failure succeed:fail accept:reject approve:reject
allow:prohibit allow:forbid allow:ban legal:illegal include:exclude inside:outside internal:external
strengthen:weaken expand:contract expand:shrink true:false majority:minority youngest:oldest younger:older
high:low strong:weak hot:cold fast:slow faster:slower faster:slowly quickly:slowly rapidly:slowly
quicker:slower rich:poor private:public male:female men:women
man:woman import:export buy:sell bought:sold agree:disagree possible:impossible able:unable likely:unlikely
safe:unsafe safe:dangerous common:rare always:never present:absent alive:dead benign:malignant acute:chronic
best:worst better:worse advantage:disadvantage support:oppose profit:loss surplus:deficit highest:lowest
largest:smallest biggest:smallest longest:shortest longer:shorter heavier:lighter wider:narrower
effective:ineffective efficient:inefficient appreciate:depreciate inflation:deflation improve:worsen
improve:deteriorate expensive:cheap accurate:inaccurate significant:insignificant visible:invisible
survive:die start:end begin:end began:ended
hire:lay hire:fire hired:laid hired:fired acquit:convict acquitted:convicted add:remove added:removed
pass:reject passed:rejected pass:block passed:blocked early:late
confirm:deny confirmed:denied admit:deny admitted:denied approve:veto approved:vetoed open:close
opened:closed up:down upward:downward
approve:block approved:blocked join:leave join:left joined:left arrest:release arrested:released
uphold:overturn upheld:overturned miss:beat missed:beat lift:impose lifted:imposed enact:repeal
enacted:repealed first:last remove:return removed:returned appoint:dismiss appointed:dismissed
daily:weekly daily:monthly weekly:monthly monthly:quarterly quarterly:annual monthly:annual weekly:annual
"""
# Common adjectives and verbs read as opposites only one for the other between aligned words ("a
# bad way to learn" for "a good way to learn", "can prevent" for "can cause"), not in a longer
# change ("a large study found" for "using a small sample, researchers found") nor across clauses
# (`_crossed_opposite`) (thirty-eighth session: a differential sweep found each swapped and cited).
_EN_OPPOSITES_IN_PLACE = """
good:bad large:small big:small young:old long:short cause:prevent caused:prevented same:different
similar:different identical:different warm:cool easy:difficult major:minor latest:earliest
newest:oldest benefit:harm guilty:innocent full:empty wet:dry
"""
# Words that move a figure up or down: every one of the first row is the opposite of every one of
# the second ("lowered its forecast" for "raised", "plunged" for "surged").
_EN_UP = """raise increase rise rose risen climb jump surge soar gain widen accelerate upgrade expand grow
grew grown boost hike strengthen rally"""
_EN_DOWN = """lower cut decrease reduce fall fell fallen drop slump plunge lose lost narrow slow decelerate
downgrade shrink shrank contract weaken tumble sink sank decline dip slash trim"""
# measures rather than directions: a quote may state both in different clauses ("同比增长5.8%，
# 3月份环比增长0.3%"), so they count only where the alignment puts one in the other's place
_MEASURES = frozenset({"同比", "环比", "平均", "最高", "最低"})
_ZH_OPPOSITES = """
同比:环比 平均:最高 平均:最低
增加:减少 增长:下降 增长:减少 上升:下降 提高:降低 升高:降低 扩大:缩小 高于:低于 多于:少于 加快:放缓 加速:减速
最高:最低 最大:最小 最多:最少 之前:之后 以前:以后 增强:减弱 上涨:下跌 盈利:亏损 胜:负 赢:输 成功:失败
支持:反对 允许:禁止 合法:非法 正面:负面 积极:消极 优点:缺点 开放:关闭 大于:小于 北部:南部 东部:西部
南方:北方 东方:西方 男性:女性 进口:出口 买入:卖出 升:降 涨:跌 增:减 高:低 多:少 大:小 强:弱 早:晚 快:慢
良性:恶性 急性:慢性 上半年:下半年 上升:下跌 有效:无效 有利:不利 正常:异常 安全:危险 可能:不可能 同意:反对
增多:减少 扩张:收缩 上调:下调 升值:贬值 顺差:逆差 通胀:通缩 利好:利空 涨价:降价 改善:恶化 提升:下降
上升:降低 上升:减少 提高:下调 提高:下降 上调:降低 上涨:下降 上涨:回落 增长:回落 加息:降息 升息:降息
批准:否决 通过:否决 批准:驳回 同意:拒绝 接受:拒绝 获批:被拒 增长:持平 下降:持平 上涨:持平 增加:持平
正面:背面 较高:较低 较大:较小 较多:较少 较快:较慢 偏高:偏低 偏大:偏小 上方:下方 国内:国外 境内:境外
城市:农村 城镇:农村 内部:外部 首次:再次 甲型:乙型 上游:下游 上行:下行 顺利:受阻
加入:退出 逮捕:释放 维持:撤销 超出:不及 好于:不及 生效:废止 生效:失效 任命:免去 任命:辞去 任命:免职
解除:实施 解除:实行 上市:退市 首个:最后
提前:推迟 提前:延后 提前:延迟 提前:推后 提早:推迟 提早:延后 提前:滞后
"""


def _opposites(pairs: str, stem: bool) -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for pair in pairs.split():
        a, b = (_stem(w) if stem else w for w in pair.split(":"))
        out.setdefault(a, set()).add(b)
        out.setdefault(b, set()).add(a)
    return {k: frozenset(v) for k, v in out.items()}


EN_OPPOSITES = _opposites(
    _EN_OPPOSITES + " ".join(f"{u}:{d}" for u in _EN_UP.split() for d in _EN_DOWN.split()), stem=True)
_EN_ONE_FOR_ONE = _opposites(_EN_OPPOSITES_IN_PLACE, stem=True)
# Chinese words that move a figure up or down, each of the first row the opposite of each of the
# second ("下滑12%" for "同比增长12%", "回升" for "回落"), and buying against selling
# (not 扩大/缩小/收窄: "跌幅扩大" is a fall; not 收购/出售: "A收购B的业务" is "B出售给A")
_ZH_UP = "增长 增加 上升 上涨 提升 提高 升高 回升 攀升 走高 增多 上扬 反弹 飙升 大涨 跃升"
_ZH_DOWN = "下降 下滑 下跌 降低 减少 萎缩 回落 下挫 走低 下行 大跌 暴跌 锐减 缩减 下调"
_ZH_BUY_SELL = "增持:减持"
# opposites only as a one-word change between words both texts share, where the same subject does
# both ("阿里巴巴于2023年出售了…" against "…收购了…"; "净亏损为5亿元" against "净利润为5亿元"; "扩大至12%"
# against "下降至12%"), not in a reworded clause ("联想从IBM收购" is "IBM出售给联想", "跌幅扩大" a fall)
ZH_STRICT_OPPOSITES = _opposites(" ".join((
    "收购:出售 收购:出让 购入:出售 买下:卖出 净利润:净亏损 利润:亏损 扩大:收窄 扩大:缩小",
    # a bound, the other way ("65岁以上" against "65岁以下", "超过10万元" against "不到10万元")
    "以上:以下 以上:以内 超过:不到 超过:不足 超过:低于 超出:不到 超出:不足 高于:不足 高于:不到 "
    "至少:至多 至少:最多 不少于:不超过 不低于:不高于 不少于:少于 不超过:超过", *(
        f"扩大:{d}" for d in "下降 下滑 下跌 降低 减少 萎缩 回落".split()), *(
        f"{w}:{u}" for w in ("收窄", "缩小") for u in "增长 增加 上升 上涨 提升 提高".split()))), stem=False)
ZH_OPPOSITES = _opposites(" ".join((_ZH_OPPOSITES, _ZH_BUY_SELL, *(
    f"{u}:{d}" for u in _ZH_UP.split() for d in _ZH_DOWN.split()))), stem=False)
EN_NEGATIONS = frozenset({"not", "no", "never", "neither", "nor", "without", "none", "cannot"})
ZH_NEGATIONS = frozenset(
    "不 没 没有 未 无 非 不是 不会 不能 无法 未能 并非 从未 从不 绝不 不可 不再 不要 "
    "不得 未曾 不该 不应 毫无 不太 并不 并未 尚未 不宜 别".split())
# Capitalised words that do not name anything ("He acquired" is no name swap for "Google acquired").
_NOT_NAMES = EN_STOPWORDS | frozenset({"he", "she", "it", "they", "we", "i", "you", "this", "that", "these",
                                       "those", "its", "his", "her", "their", "our", "my", "your"})
_EN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+(?:['’][A-Za-z\u00c0-\u024f]+)*|\d+(?:[.,]\d+)*")
_FIGURE = re.compile(r"(\d+(?:[.,]\d+)*)(?:st|nd|rd|th)?")
# (with the measure words counts take: "三支球队" for "两支球队", "五款车型", "两家银行")
_ZH_FIGURE = re.compile(r"第?([零〇一二两三四五六七八九十百千\d]+)"
                        r"([次个届名位年月日号期轮季代支款家辆项种条只台部人座所件架艘颗枚张本篇场批套份]?)")
_EN_ORDINAL = {w: str(i + 1) for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth".split())}
# Months and weekdays (stemmed, as the words are keyed) are figures of their own sorts.
_EN_NAMED_FIGURE = {
    **{_stem(w): f"month {i + 1}" for i, w in enumerate(
        "january february march april may june july august september october november december".split())},
    **{_stem(w): f"weekday {i + 1}" for i, w in enumerate(
        "monday tuesday wednesday thursday friday saturday sunday".split())},
    **_EN_ORDINAL,
}
_CONTRACTED = {"ca": "can", "wo": "will", "sha": "shall"}
# Words after which "not" / "no" negates nothing ("not only", "not just", "no doubt"), stemmed.
_NOT_NEGATING = frozenset(_stem(w) for w in ("only", "just", "merely", "least", "matter", "doubt", "unlike"))
_THAN = frozenset(_stem(w) for w in (  # "no later than", "none other than"
    "more", "less", "fewer", "later", "earlier", "sooner", "greater", "other", "better", "worse", "higher",
    "lower", "bigger", "smaller", "longer", "shorter"))
_UNTIL = frozenset({"until", "till", "til"})
_NEAR = 4                # words either side of a negation that another negation must stand within
_ANSWER_NEAR = 6         # words between a negation next to a quote and a word of the negated clause
_MAX_CHANGE = 3          # words a side in a change that can be a conflict
_CLAUSE = 5              # words either side of a word that `_other_subject` reads as its clause
_MIN_ALIGNED = 0.5       # share of the sentence's words the quote must repeat, in order
# Below that share, a sentence's denial is still read (`_unanswered_negation`, loose); in English
# only these negations of a verb or an adjective, and not when a determiner, a quantifier or a
# limiting word follows ("not the sole cause", "not a member", "not exceeding 50", "not only"),
# which denies a part of a claim that a record may leave out rather than the claim.
_LOOSE_NEGATIONS = frozenset({"not", "never", "cannot"})
_NOT_A_DENIAL = frozenset(_stem(w) for w in (
    "the", "a", "an", "any", "all", "every", "each", "some", "this", "that", "these", "those", "his",
    "her", "its", "their", "our", "my", "your", "one", "only", "just", "necessarily", "exactly",
    "quite", "always", "entirely", "fully", "completely", "much", "many", "more", "less", "most",
    "least", "exceeding", "over", "under", "above", "below", "as", "so", "too", "very", "yet"))


@dataclass(frozen=True, slots=True)
class Conflict:
    """Where a quote contradicts a sentence: `kind` is "opposite", "negation", "unanswered" (a
    negation the quote answers nowhere), "figure" or "name" (`quote_conflict`), "addition"
    (`quote_addition`) or "figures" (from `tracer.verify`: figures the record states nowhere, and
    the quote's figures of their sort);
    `sentence_says` and `quote_says` are the two texts' words at that spot (one of them empty
    for a negation only one side has)."""

    kind: str
    sentence_says: str
    quote_says: str

    def describe(self) -> str:
        if self.kind == "figures":  # from the number check: the record states none of them
            return (f"its quote states {self.quote_says} where the sentence says {self.sentence_says}, "
                    "which the record does not state")
        if self.kind == "addition":
            return f'the sentence adds "{self.sentence_says}", which the record never states'
        if self.kind == "condition":
            return f'its quote only says so on a condition ("{self.quote_says}")'
        if self.kind == "qualified":
            return f'its quote qualifies it ("{self.quote_says}")'
        if self.kind == "modality":
            return f'its quote only says it may be so ("{self.quote_says}")'
        if self.kind == "plan":
            return f'its quote only says it is planned or expected ("{self.quote_says}")'
        if self.kind == "done":
            return f'its quote says it is done ("{self.quote_says}") where the sentence only plans it'
        if self.kind == "certainty":
            return (f'the sentence is surer than its quote ("{self.sentence_says}" where it says '
                    f'"{self.quote_says}")')
        if self.kind == "ratio":
            return f'its quote gives the ratio the other way round ("{self.quote_says}")'
        if self.kind == "swap":
            return f'its quote has the roles the other way round ("{self.quote_says}")'
        if self.kind == "framed":
            return f'its quote only reports it as a question or a claim ("{self.quote_says}")'
        if self.kind == "direction":
            return f"its record says it {self.quote_says} where the sentence says it {self.sentence_says}"
        if self.kind == "speaker":
            return (f'the sentence gives the words to {self.sentence_says}, whom the record never names; '
                    f'its quote gives them to another ("{self.quote_says}")')
        if self.kind == "unanswered":
            return f'the sentence denies what its quote never denies ("{self.sentence_says}")'
        if self.kind == "negation":
            if self.quote_says:
                return f'its quote negates it ("{self.quote_says}")'
            return f'the sentence negates its quote ("{self.sentence_says}")'
        return f'its quote says "{self.quote_says}" where the sentence says "{self.sentence_says}"'


# A word: (key it aligns on, as written, part-of-speech tag or "" for English). A tag ends in
# _APART when punctuation stands before the word ("广州、福州": 福州 is another name, not part of
# the one before it).
_Word = tuple[str, str, str]
_Op = tuple[str, int, int, int, int]  # difflib's opcode: tag, i1, i2, j1, j2
_APART = "|"
# what sets English words apart: a comma, a colon, a bracket, and a stop before a blank (not "3.5",
# "U.S.A"): "…$124.3 billion. iPhone revenue was $69.1 billion" measures 69.1 by "iPhone revenue"
_EN_APART = re.compile(r"[,;:()\[\]/]|[.!?](?=\s)")


_EN_PERCENT = re.compile(r"(?<=\d)\s*(?:per\s?cent|pct)\b\.?", re.IGNORECASE)


def _en_words(text: str) -> tuple[_Word, ...]:
    out: list[_Word] = []
    end = 0
    text = _EN_PERCENT.sub("%", text)  # "9 percent" is "9%", whose sign no word keeps
    for m in _EN_WORD.finditer(text):
        apart = _APART if _EN_APART.search(text, end, m.start()) else ""
        end = m.end()
        word = m.group(0).replace("’", "'")
        low = word.lower()
        if low.endswith("n't"):  # "didn't" -> "did" "not"
            base = low[:-3]
            out.append((_stem(_CONTRACTED.get(base, base)), word[:-3], apart))
            out.append(("not", "n't", ""))
            continue
        if low.endswith("'s"):
            low, word = low[:-2], word[:-2]
        if len(low) == 2 and low.isdigit() and out and out[-1][0] == "fy" and not apart \
                and m.start() - len(out[-1][1]) >= 0 and text[m.start() - 1] in "Yy '’":
            low = "20" + low   # a fiscal year: "FY24" is FY2024
        out.append((_stem(low), word, apart))
    return tuple(out)


def _zh_words(text: str) -> tuple[_Word, ...]:
    out: list[_Word] = []
    apart = ""
    for w, tag in rjieba.tag(text):
        if not w.strip() or tag == "x":
            apart = _APART
            continue
        out.append((w, w, tag + apart))
        apart = ""
    return tuple(out)


@lru_cache(maxsize=256)
def _sentence_words(text: str, zh: bool) -> tuple[_Word, ...]:
    return _zh_words(text) if zh else _en_words(text)


def _first_word_names(a: tuple[_Word, ...], b: tuple[_Word, ...], s1: int, s2: int, t1: int, t2: int,
                      text: str, written: WrittenCase | None = None) -> bool:
    """Whether two English runs that open both texts are names, though an opening word is
    capitalised whatever it is ("Researchers found" and "Scientists found" are no swap): the
    record writes the quote's run capitalised after a lower-case word, not as part of a longer
    name ("…made by Pfizer.", not "…the Metropolitan Police"), neither it nor the sentence writes
    a word of the sentence's run in lower case, and neither run abbreviates the other ("VW" for
    "Volkswagen"). Or, with `written` (how the request's records write a phrase), records write
    both runs so, and no record, nor the sentence, writes a word of either in lower case ("Honda
    sold 11.2 million vehicles" against "Toyota sold 11.2 million vehicles", where another record
    says "…behind Toyota and Honda"; not "Doha mediated" against "Qatar mediated" where only
    "hosted by Qatar" is written)."""
    if not text or s2 - s1 > 3 or t2 - t1 > 3:
        return False
    said, quoted = _said(a, s1, s2), _said(b, t1, t2)
    if _abbreviates(said, quoted) or _abbreviates(quoted, said):
        return False
    sentence = " ".join(w for _k, w, _t in a)
    # a run written as only a name is ("BYD", "McKinsey", "iPhone": a capital after its first
    # letter) against one that neither text writes in lower case ("Tesla cut …" for "BYD cut …")
    said_named, quoted_named = _named_by_form(a[s1:s2]), _named_by_form(b[t1:t2])
    if said_named or quoted_named:
        plain = b[t1:t2] if said_named else a[s1:s2]
        lower = any(re.search(rf"\b{re.escape(w.lower())}\b", text) or w.lower() in sentence
                    for _k, w, _t in plain)
        if (said_named and quoted_named) or (all(w[:1].isupper() for _k, w, _t in plain) and not lower):
            return True
    if re.search(rf"(?:^|[\s(])[a-z]+[,;:]? {re.escape(quoted)}\b(?! [A-Z])", text):
        return not any(re.search(rf"\b{re.escape(w.lower())}\b", text) or w.lower() in sentence
                       for _k, w, _t in a[s1:s2])
    if written is None:
        return False
    words = [w for _k, w, _t in (*a[s1:s2], *b[t1:t2])]
    return not any(w.lower() in sentence or written(w.lower())[0] for w in words) \
        and written(quoted)[1] and written(said)[1]


def _named_by_form(words: tuple[_Word, ...]) -> bool:
    """Whether a run of English words has one that only a name is written as: three letters or
    more with a capital after the first ("BYD", "McKinsey", "iPhone"), not a roman numeral ("III").
    Not two ("US", "UK", "EU" stand for "American", "British", "European" as often as not)."""
    return any(len(w) >= 3 and w.isalpha() and any(c.isupper() for c in w[1:]) and not _ROMAN.fullmatch(w)
               for _k, w, _t in words)


def _abbreviates(short: str, long: str) -> bool:
    """Whether the capitals of `short` are letters of `long`, in order ("VW", "Volkswagen")."""
    caps = [c.lower() for c in short if c.isupper()]
    if not caps or len(short) > 5:
        return False
    it = iter(long.lower())
    return all(c in it for c in caps)


# words that stand for a subject without naming it: "公司公告" for "比亚迪公告" is no other company
_ZH_GENERIC = frozenset("公司 该公司 企业 集团 官方 政府 机构 报告 数据 研究 调查 专家 媒体 市场 行业 国家 "
                        "地方 当局 厂商 车企 品牌 平台 项目 部门 我们 他们 其".split())


def _zh_unknown_name(a: tuple[_Word, ...], s1: int, s2: int, b: tuple[_Word, ...], t1: int, t2: int,
                     zh: bool, record: str) -> bool:
    """A Chinese word that rjieba does not tag a name ("蔚来" as a verb) opening the sentence where
    the quote opens with a person, place or organisation: another name, when it is one word of
    two to four characters, no generic subject ("公司"), and nowhere in the record."""
    if not zh or s2 - s1 != 1 or not _is_proper(b[t1:t2]):
        return False
    word = a[s1][1]
    return 2 <= len(word) <= 4 and word not in _ZH_GENERIC and bool(record) and word not in record


def _is_name_run(words: tuple[_Word, ...], zh: bool) -> bool:
    if zh:  # nouns, names, places, times; at most five characters; not "now" in other words
        return all(tag[:1] in ("n", "t") and w not in _ZH_NOW for _k, w, tag in words) \
            and sum(len(w) for _k, w, _t in words) <= 5
    return all(w[:1].isupper() and w.lower() not in _NOT_NAMES for _k, w, _t in words)


_ZH_INSTITUTION_HEADS = ("中心", "总局", "银行", "发射场", "委员会", "研究院", "研究所", "大学", "学院",
                         "医院", "公司", "集团", "交易所", "法院", "检察院", "协会", "基金会")
_ZH_NOT_NAME_TAGS = ("u", "p", "c", "m", "q", "r", "d", "x", "w")


def _zh_split_name(words: tuple[_Word, ...]) -> bool:
    """Two to four single characters none of them a small word: a name rjieba does not know, cut
    apart ("毕" + "昇", "屠" + "呦" + "呦")."""
    return 2 <= len(words) <= 4 and all(len(w) == 1 and not t.rstrip(_APART).startswith(_ZH_NOT_NAME_TAGS)
                                        for _k, w, t in words)


def _zh_long_name(words: tuple[_Word, ...]) -> bool:
    """A proper name of up to ten characters in nouns: a person's, place's or organisation's word
    among them, or an institution's head at the end ("西昌卫星发射中心", "文昌航天发射场",
    "国家金融监督管理总局")."""
    text = "".join(w for _k, w, _t in words)
    return len(text) <= 10 and all(t[:1] in ("n", "l") for _k, _w, t in words) \
        and (any(t[:2] in ("nr", "ns", "nt", "nz") for _k, _w, t in words)
             or text.endswith(_ZH_INSTITUTION_HEADS))


def _zh_names(x: tuple[_Word, ...], y: tuple[_Word, ...]) -> bool:
    """Whether two Chinese runs at one spot both read as names (`_is_name_run`), or as names rjieba
    reads poorly: a person's name against one it cut into characters ("沈括" against "毕" "昇"), or
    two long proper names (`_zh_long_name`)."""
    if _is_name_run(x, True) and _is_name_run(y, True):
        return True
    if (_is_proper(x) and _zh_split_name(y)) or (_is_proper(y) and _zh_split_name(x)):
        return True
    return _zh_long_name(x) and _zh_long_name(y)


# times that say "now" or "lately" in other words ("目前" and "今年" do not disagree)
_ZH_NOW = frozenset({"目前", "现在", "当前", "如今", "现今", "眼下", "当下", "近日", "近期", "最近", "日前",
                     "此时", "这时", "同时", "当今", "时下"})


def _title_case(words: tuple[_Word, ...]) -> bool:
    """Whether every content word is capitalised, as in a heading ("The Effects of Smoking on
    Health"): then a capital says nothing about a name. A sentence has lower-case words."""
    content = [w for _k, w, _t in words if w[:1].isalpha() and w.lower() not in _NOT_NAMES]
    return len(content) >= 3 and all(w[:1].isupper() for w in content)


def _part_of_a_name(words: tuple[_Word, ...], at: int, zh: bool, apart: bool = False) -> bool:
    """Whether the aligned word next to a changed name is a name itself: then the change is
    another form of the same name ("Barack Obama" and "President Obama", "总统奥巴马" and
    "参议员奥巴马"), not another name. Not when punctuation stands between them (`apart`: the
    names of a list, "广州、福州")."""
    if apart or not 0 <= at < len(words):
        return False
    key, word, tag = words[at]
    if zh:
        return tag[:2] in ("nr", "ns", "nt", "nz")
    if _ROMAN.fullmatch(word):  # a regnal number: "Philip II" and "January II" are two names
        return False
    # a generic head ("County", "River") names a kind of thing: the changed word is the name
    return word[:1].isupper() and word.lower() not in _NOT_NAMES and key not in _GENERIC_HEADS


# a historical period ("明朝", "唐代", "20世纪", "春秋时期"); not the generic ones ("现代", "时代")
_ZH_PERIOD = re.compile(r"^(?!(?:现|当|近|时|年|历|世|后|一|古)代$)"
                        r"[\u4e00-\u9fff\d]{1,4}(?:朝|代|世纪|年代|时期|年间)$")
_PERIOD_SUFFIX = re.compile(r"(?:朝|代|时期|年间)$")
_LEAD_RUN = 4  # aligned words that end the leading parts of the two texts


def _same_period(said: str, quoted: str) -> bool:
    """Whether two historical periods are one ("明代" and "明朝", "唐朝" and "唐代")."""
    return _PERIOD_SUFFIX.sub("", said) == _PERIOD_SUFFIX.sub("", quoted)


def _leading_swap(a: tuple[_Word, ...], b: tuple[_Word, ...], ops: Sequence[_Op],
                  in_b: set[str], in_a: set[str]) -> Conflict | None:
    """Chinese texts whose leading parts differ before a long aligned run (four words or more):
    the clauses right before the run end in different names ("…，同时橡胶按钮具有…" against
    "硅胶按钮具有…"), or the leading parts name different historical periods ("明朝在文化艺术方面繁荣
    创新，文学…" against "在宋朝，文学…")."""
    run = next((o for o in ops if o[0] == "equal" and o[2] - o[1] >= _LEAD_RUN), None)
    if run is None or run[1] == 0 or run[3] == 0:
        return None
    i, j = run[1], run[3]
    s1 = _after_connectives(a, max((x for x in range(i) if _apart(a, x)), default=0), i, True)
    t1 = _after_connectives(b, max((x for x in range(j) if _apart(b, x)), default=0), j, True)
    if s1 < i and t1 < j and i - s1 <= _MAX_CHANGE and j - t1 <= _MAX_CHANGE \
            and not {k for k, _w, _t in a[s1:i]} & in_b and not {k for k, _w, _t in b[t1:j]} & in_a \
            and _is_name_run(a[s1:i], True) and _is_name_run(b[t1:j], True) \
            and not _part_of_a_name(a, i, True) and not _one_name(_said(a, s1, i), _said(b, t1, j), True):
        return Conflict("name", _said(a, s1, i), _said(b, t1, j))
    said = sorted(w for k, w, _t in a[:i] if _ZH_PERIOD.search(w) and k not in in_b)
    quoted = sorted(w for k, w, _t in b[:j] if _ZH_PERIOD.search(w) and k not in in_a)
    return Conflict("name", said[0], quoted[0]) if said and quoted and not _same_period(said[0], quoted[0]) \
        else None


def _head_swap(a: tuple[_Word, ...], b: tuple[_Word, ...], s1: int, s2: int, t1: int, t2: int,
               zh: bool) -> bool:
    """Whether an English change after an aligned name word is the name's last word, its head,
    and so another name ("Democratic Republic of Parliament" for "… of Congo", "Nottingham
    Prognostic Lisandra" for "… Index"): the caller has checked that no name word follows. A
    company's or a person's suffix is no other name ("Apple Inc." and "Apple Corp.", "Jr.")."""
    if zh:
        return False
    said = {k for k, _w, _t in a[s1:s2]} | {k for k, _w, _t in b[t1:t2]}
    return not said & _ENTITY_SUFFIXES


_ENTITY_SUFFIXES = frozenset(_stem(w) for w in (
    "inc", "corp", "corporation", "ltd", "llc", "co", "company", "group", "holdings", "plc", "ag", "sa",
    "gmbh", "limited", "incorporated", "jr", "sr"))
_ROMAN = re.compile(r"X{0,3}(?:IX|IV|V?I{0,3})")


def _proper_before_run(a: tuple[_Word, ...], b: tuple[_Word, ...], ops: Sequence[_Op],
                       in_b: set[str], in_a: set[str]) -> Conflict | None:
    """Chinese texts in which an aligned run (two words or more, three characters or more)
    follows a different proper name of the same kind in each: two persons, two places or two
    organisations by rjieba's tags ("然而，巴黎和加拿大的大部分高等院校" against "至今为止，美国和加拿大
    共有…院校"), each absent from the other text. What comes before the names may differ
    entirely, which the flanked swap above needs aligned; a name word before either name makes
    it another form of the same name."""
    for tag, i1, i2, j1, _j2 in ops:
        if tag != "equal" or i1 == 0 or j1 == 0 or i2 - i1 < 2 \
                or sum(len(w) for _k, w, _t in a[i1:i2]) < 3:
            continue
        x, y = a[i1 - 1], b[j1 - 1]
        kind = x[2].rstrip(_APART)[:2]
        if kind in ("nr", "ns", "nt") and y[2].rstrip(_APART)[:2] == kind \
                and x[0] not in in_b and y[0] not in in_a \
                and not _part_of_a_name(a, i1 - 2, True, _apart(a, i1 - 1)) \
                and not _part_of_a_name(b, j1 - 2, True, _apart(b, j1 - 1)) \
                and not _one_name(x[1], y[1], True):
            return Conflict("name", x[1], y[1])
    return None


def _one_name(said: str, quoted: str, zh: bool) -> bool:
    """Whether two names at one spot name one thing: two spellings of an English name
    (`_spelling`); in Chinese, one name whose characters the other has in order (a fuller form or
    an abbreviation), places by their one-character names ("沪深" and "上海、深圳"), or times that
    say the same ("年底" and "年末")."""
    if zh:  # a fuller form ("武汉长江大桥" of "长江大桥") or an abbreviation ("中科院" of "中国科学院")
        if said in _ZH_GENERIC or quoted in _ZH_GENERIC:
            return True  # "公司" stands for the company the sentence names ("蓝海电池")
        short, long = sorted((said, quoted), key=len)
        rest = iter(long)
        return (len(short) >= 2 and all(ch in rest for ch in short)) \
            or any(said in group and quoted in group for group in _ZH_SAME_TIME) \
            or _zh_short_for(said, quoted) or _zh_short_for(quoted, said)   # "沪上" for "上海"
    return _spelling(said, quoted)


_ZH_SAME_TIME = tuple(frozenset(g.split()) for g in (
    "年底 年末 岁末 年尾", "年初 年头 岁初", "月底 月末", "月初 月头", "去年 上年 上一年", "明年 来年",
    "今年 本年", "上午 早上 早晨 清晨", "下午 午后", "晚上 夜间 夜晚 夜里", "周末 双休日",
    "平均气温 平均温度", "气温 温度", "全部 全线 全程", "家长 监护人", "患者 病人", "孩子 儿童"))


def _spelling(said: str, quoted: str) -> bool:
    """Whether two English names are spellings of one: one letter apart in a word of five letters
    or more ("Organization" and "Organisation", "Philip" and "Phillip", "Tchaikovsky" and
    "Tchaikovski"), two in one of nine or more, or an abbreviation that begins the other: of at
    most four letters ("Med" for "Medicine"), or of five for a word four letters longer or more
    ("Calif" for "California", "Assoc" for "Association"). "Austria" and "Australia", "Niger" and
    "Nigeria" are two names."""
    x, y = said.lower().replace(".", ""), quoted.lower().replace(".", "")
    short, long = sorted((x, y), key=len)
    if long.startswith(short) and (len(short) <= 4 <= len(long) - 2 or 5 == len(short) <= len(long) - 4):
        return True   # "Med" for "Medicine", "Calif" for "California" (not "Niger" for "Nigeria")
    if _letters(x) == _letters(y) or _acronym(said, quoted) or _acronym(quoted, said) \
            or any(_letters(x) in group and _letters(y) in group for group in _EN_SAME_PLACE):
        return True
    if len(short) < 5:
        return False
    return Levenshtein.distance(x, y) <= (2 if len(short) >= 9 else 1)


def _letters(name: str) -> str:
    """A name's letters and digits, lowercased ("J. P. Morgan" and "JPMorgan" alike)."""
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _acronym(short: str, long: str) -> bool:
    """Whether `short` is written from the initials of `long`'s words ("US" of "United States",
    "WHO" of "World Health Organization"; small words such as "of" may be left out)."""
    letters = short.replace(".", "")
    words = re.findall(r"[A-Za-z]+", long.replace("'s", "").replace("’s", ""))
    if not (2 <= len(letters) <= 6 and letters.isalpha() and letters.isupper()) or len(words) < 2:
        return False
    every = "".join(w[0] for w in words).upper()
    major = "".join(w[0] for w in words if w.lower() not in _ACRONYM_SKIPS).upper()
    return letters in (every, major)


# Two names already known to stand in the same place may differ by any small word; a run of
# capitalised words in running text is joined only by NAME_JOINERS ("Officials at the ..." is no name).
_ACRONYM_SKIPS = NAME_JOINERS | {"at", "to", "a", "an"}
# a few places whose names share no letters ("US", "America"); compared as `_letters` gives them
_EN_SAME_PLACE = tuple(frozenset(g.split()) for g in (
    "us usa america unitedstates unitedstatesofamerica", "uk britain greatbritain unitedkingdom",
    "uae emirates unitedarabemirates", "holland netherlands thenetherlands", "russia russianfederation",
    "czechia czechrepublic", "myanmar burma", "turkey turkiye", "eswatini swaziland",
    # a capital standing for its country's government ("Beijing announced" for "China announced")
    "china beijing peking", "russia moscow", "japan tokyo", "us washington", "uk britain london",
    "france paris", "germany berlin", "eu brussels europeanunion", "southkorea seoul",
    "northkorea pyongyang", "iran tehran", "india newdelhi delhi", "canada ottawa", "australia canberra",
    "ukraine kyiv kiev", "turkey ankara", "saudiarabia riyadh", "israel jerusalem", "taiwan taipei",
    "vietnam hanoi", "pakistan islamabad", "egypt cairo", "brazil brasilia", "italy rome", "spain madrid",
    "poland warsaw", "mexico mexicocity", "indonesia jakarta", "thailand bangkok", "philippines manila",
    # a city's old and new names
    "mumbai bombay", "kolkata calcutta", "chennai madras", "guangzhou canton", "yangon rangoon",
    "hochiminhcity saigon", "beijing peking", "kyiv kiev", "almaty almaata", "istanbul constantinople"))


def _apart(words: tuple[_Word, ...], at: int) -> bool:
    """Whether punctuation stands before words[at]."""
    return 0 <= at < len(words) and words[at][2].endswith(_APART)


def _trimmed(words: tuple[_Word, ...], start: int, end: int) -> tuple[int, int]:
    """words[start:end] without the small words at either end (particles, prepositions,
    conjunctions, adverbs: "了上海" is "上海")."""
    while start < end and words[start][2][:1] in ("u", "p", "c", "d"):
        start += 1
    while end > start and words[end - 1][2][:1] in ("u", "p", "c", "d"):
        end -= 1
    return start, end


def _is_proper(words: tuple[_Word, ...]) -> bool:
    """Chinese words that rjieba tags a person, place, organisation or other proper name."""
    return bool(words) and all(t[:2] in ("nr", "ns", "nt", "nz") for _k, _w, t in words)


_GENERIC_HEADS = frozenset(_stem(w) for w in (
    "county", "river", "lake", "island", "islands", "street", "road", "avenue", "bridge", "park",
    "mountain", "mountains", "city", "state", "province", "district", "region", "valley", "bay", "sea",
    "ocean", "university", "college", "school", "hospital", "church", "cathedral", "airport",
    "station", "company", "corporation", "party", "award", "awards", "prize", "cup", "league",
    "championship", "festival", "museum", "gallery", "hotel", "theatre", "theater", "stadium",
    "act", "treaty", "war", "battle", "index"))


_MAX_ALIGN = 400  # sentence words aligned (a quote's four times as many): no sentence is longer


def _aligned(ka: list[str], kb: list[str]) -> tuple[Sequence[_Op], float]:
    """difflib's alignment of two word lists, and the share of the first that the second repeats
    in order. difflib takes time quadratic in the lengths where words repeat ("为", "亿元"), so
    past _MAX_ALIGN sentence words (about 1,000 characters) only the start is aligned and the
    rest stands as one change, which no rule reads (a 38,000-character "sentence" took 3.5 s)."""
    la, lb = min(len(ka), _MAX_ALIGN), min(len(kb), 4 * _MAX_ALIGN)
    ops: list[_Op] = list(difflib.SequenceMatcher(None, ka[:la], kb[:lb], autojunk=False).get_opcodes())
    if la < len(ka) or lb < len(kb):
        tag = "replace" if la < len(ka) and lb < len(kb) else "delete" if la < len(ka) else "insert"
        ops.append((tag, la, len(ka), lb, len(kb)))
    same = sum(i2 - i1 for tag, i1, i2, _j1, _j2 in ops if tag == "equal")
    return ops, same / la if la else 0.0   # of the part aligned


#: How a request's records write a phrase: (some record writes it in lower case, some record writes
#: it capitalised after a lower-case word, as a name is written mid-sentence).
WrittenCase = Callable[[str], tuple[bool, bool]]


def quote_conflict(sentence: str, quote: str, lang: str, around: str = "", record: str = "",
                   ordered: bool = True, written: WrittenCase | None = None) -> Conflict | None:
    """The first spot where `quote` contradicts `sentence` (see the module's description), or
    None. `lang` is "zh" for Chinese (rjieba words and tags), anything else for English.
    `around`, the record's text next to the quote, may answer a negation that the quote leaves
    out ("…was nominated in 2010. It did not win."): then the sentence's negation is no conflict.
    `record`, the whole record, tells whether an English sentence's first word is a name.
    `ordered=False` for a table row's claim, whose word order is its columns' order: the rules that
    read who or what comes first (roles, a figure's measure) are skipped. `written` tells how the
    request's records write a phrase, which may show a sentence's first word to be a name."""
    zh = lang == "zh"
    a = _sentence_words(sentence, zh)  # a sentence meets many quotes; each quote is read once
    b = _zh_words(quote) if zh else _en_words(quote)
    if not a or not b:
        return None
    ka = [k for k, _w, _t in a]
    kb = [k for k, _w, _t in b]
    ops, share = _aligned(ka, kb)
    opposites = ZH_OPPOSITES if zh else EN_OPPOSITES
    negations = ZH_NEGATIONS if zh else EN_NEGATIONS
    # read without the alignment: clauses move
    slot: Conflict | None = None
    if ordered:
        slot = _reversed_ratio(sentence, quote) or _comparison_flipped(sentence, quote, zh) or ((
            _zh_growth_moved(sentence, quote) or _zh_growth_owner(sentence, quote) or _zh_figure_slot(a, b)
            or _zh_from_to_swapped(sentence, quote) or _zh_as_of_moved(sentence, quote)
            or _zh_yoy_flipped(sentence, quote) or _multiple_conflict(sentence, quote, True)
            or _zh_figure_subject(sentence, quote)
            or zh_done_but_pending(a, quote)
            or _roles_swapped(a, b, zh, False)) if zh
            else (_en_figure_slot(a, b) or en_year_moved(sentence, quote)
                  or _en_from_to_swapped(sentence, quote) or _en_plan_as_done(sentence, quote)
                  or _en_count_instead(sentence, quote) or _en_share_swapped(sentence, quote)
                  or _multiple_conflict(sentence, quote)))
    if slot is None and ordered:
        slot = _draft_as_in_force(sentence, quote, zh) or _first_widened(sentence, quote, zh) \
            or _trial_as_adopted(sentence, quote, zh) or _share_overstated(sentence, quote, zh) \
            or (_zh_main_secondary(sentence, quote) if zh else None)
    if slot is not None:
        return slot
    dropped = _condition_dropped(a, b, zh)
    if dropped is not None:
        return dropped
    if share < _MIN_ALIGNED:  # a paraphrase: a denial of what the quote speaks of, unanswered, or
        # an opposite word with two of the sentence's words near it in both
        return _unanswered_negation(a, b, ka, kb, zh, negations, opposites, sentence, around, loose=True) \
            or _crossed_opposite(a, b, ka, kb, zh, negations, opposites) \
            or _flanked_negation(a, b, ka, kb, ops, zh, negations)
    tail = ops[-1]
    opening = kb[tail[3]:tail[3] + 2] if tail[0] == "insert" else []
    cond_at = tail[3] + (1 if opening[:1] == ["onli"] else 0)
    if not zh and tail[1] == len(ka) and opening and (opening[0] in IF_WORDS or opening == ["onli", "if"]) \
            and (kb[cond_at] != "if" or _opens_clause(b, cond_at + 1)) \
            and len(ops) > 1 and ops[-2][0] == "equal" and ops[-2][2] - ops[-2][1] >= 3 \
            and not any(k in _CONDITIONS or k in IF_WORDS for k in ka):
        # the quote goes on with a condition where the sentence ends ("… in June if the economy slows")
        return Conflict("condition", "", _said(b, tail[3], min(tail[4], tail[3] + 6)))
    in_b = set(kb)
    title_case = not zh and _title_case(a)
    # the part of each text the other repeats (a negation elsewhere in a long quote is no answer)
    span_a = (ops[0][2] if ops[0][0] != "equal" else 0, ops[-1][1] if ops[-1][0] != "equal" else len(ka))
    span_b = (ops[0][4] if ops[0][0] != "equal" else 0, ops[-1][3] if ops[-1][0] != "equal" else len(kb))
    if zh:
        got = _leading_swap(a, b, ops, in_b, set(ka)) or _proper_before_run(a, b, ops, in_b, set(ka))
        if got is not None:
            return got
    planned = _prospect_change(a, b, ops, zh) or (
        (_done_or_not(a, b, ops, negations) or _zh_quantity(a, b, ops)) if zh else None) \
        or (None if zh else (_roles_swapped(a, b, zh, title_case) if ordered else None)
            or _planned_for_done(a, b, ops))
    if planned is not None:
        return planned
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if zh and tag == "replace" and k == len(ops) - 1 and i2 == len(ka) \
                and i2 - i1 <= _MAX_CHANGE < j2 - j1:
            j2 = j1 + (i2 - i1)   # the quote goes on past the sentence's end ("处于较低水平。" against
            # "处于较高水平，但已呈下降趋势"): its words in the sentence's place
        elif not zh and tag == "replace" and k == len(ops) - 1 and i2 == len(ka) \
                and i2 - i1 < j2 - j1 and b[j1 + (i2 - i1)][2] == _APART:
            j2 = j1 + (i2 - i1)   # so in English up to the quote's clause break ("in April 2011." against
            # "in April 2010, and sold well")
        if zh and tag == "replace" and i2 - i1 <= 2 and j2 - j1 > _MAX_CHANGE and 0 < k < len(ops) - 1 \
                and ops[k - 1][0] == "equal" and ops[k + 1][0] == "equal":
            # a bound the other way, however many words the quote adds after it ("超过了不少于100克"
            # against "低于任务设计时不少于100克")
            core = [w for w in ka[i1:i2] if w not in ("了", "过", "着")]
            if len(core) == 1 and kb[j1] in ZH_STRICT_OPPOSITES.get(core[0], ()) and core[0] not in in_b \
                    and not _negated(kb, j1, j2, negations) \
                    and not _NEGATIVE_FIGURE.search(sentence) and not _NEGATIVE_FIGURE.search(quote):
                return Conflict("opposite", core[0], b[j1][1])
        if tag == "equal" or i2 - i1 > _MAX_CHANGE or j2 - j1 > _MAX_CHANGE:
            continue
        flank_before = ops[k - 1][2] - ops[k - 1][1] if k > 0 and ops[k - 1][0] == "equal" else 0
        flank_after = ops[k + 1][2] - ops[k + 1][1] if k + 1 < len(ops) and ops[k + 1][0] == "equal" else 0
        if not (flank_before or flank_after):
            continue
        before, after = flank_before > 0, flank_after > 0
        # for a figure, the end of both texts is as good a flank as a word, when two words or
        # more align before it ("… released in April 2011." against "… released in April 2010.")
        ends = i2 == len(ka) and flank_before >= 2 and (
            j2 == len(kb) or (not zh and b[j2][2] == _APART))   # (or the quote's clause: "…, while")
        said, quoted = ka[i1:i2], kb[j1:j2]
        # one word for its opposite, the sentence's absent from the quote; not when a negation
        # takes part in the change ("did not increase" for "decreased" says the same)
        double = _negated(ka, i1, i2, negations) or _negated(kb, j1, j2, negations)
        for x in () if double else said:
            if x in in_b:
                continue
            for y in quoted:
                if y in opposites.get(x, ()) or (not zh and len(said) == len(quoted) == 1 and (
                        y in _EN_ONE_FOR_ONE.get(x, ())) and not _negated(ka, 0, len(ka), negations)
                        and not _negated(kb, 0, len(kb), negations)) or (not zh and _prefixed_opposite(
                        a[i1 + said.index(x)][1], b[j1 + quoted.index(y)][1])):
                    if not zh and i2 < len(a) and a[i2][1].lower() in _STATES:
                        continue  # "fell ill" is "grew ill", "fell silent" "grew silent"
                    return Conflict("opposite", a[i1 + said.index(x)][1], b[j1 + quoted.index(y)][1])
        # the quote only says it may be so, the sentence says it is: "reduces" for "may reduce",
        # "will rise" for "could rise" (a sentence weaker than its quote is no conflict)
        if tag in ("insert", "replace") and before and after and j2 - j1 <= 2:
            if zh:
                weak = [j for j in range(j1, j2) if b[j][0] in _ZH_WEAK_ONLY
                        and not (j > 0 and b[j - 1][0] in _ZH_NOT)]   # "不可能" denies, not hedges
                hedged = any(w[0] in _ZH_WEAK or w[0] in _ZH_ABLE or w[0] in _ZH_PROSPECT
                             or any(h in w[0] for h in _ZH_WEAK_ONLY) for w in a)   # ("可能性" too)
            else:
                weak = [j for j in range(j1, j2) if _weak_modal(b, j)]
                hedged = any(_weak_modal(a, i) or a[i][1].lower() in _ABLE for i in range(len(a)))
            if weak and not hedged:
                return Conflict("modality", _said(a, i1, i2), _said(b, j1, j2))
        # the quote takes part of it back: "seldom performed" for "performed", "a proposed
        # station" for "a station"
        # (the start of both texts flanks it too, when three words or more align after it: "Not
        # having enough serotonin is thought to …" for "Having enough serotonin is thought to …")
        opens = i1 == 0 and j1 == 0 and flank_after >= 3
        if tag in ("insert", "replace") and (before or opens) and after and j2 - j1 <= 2:
            got = _qualified(a, b, i1, i2, j1, j2, zh)
            if got is not None:
                return got
        # the sentence makes it a first, an only or a most the record never says ("中方首次表达了…"
        # for "中方表达了…", "价格最高" for "价格较高")
        if tag in ("delete", "replace") and (before or opens) and (after or ends) and i2 - i1 <= 2 and record:
            got = _made_first(a, b, i1, i2, j1, j2, zh, record)
            if got is not None:
                return got
        # another quantity of the same things: "all" for "most", "several" for "none"
        if not zh and tag == "replace" and after and (before or (i1 == 0 and j1 == 0)):
            qa = [_QUANTIFIER_RANK[w[1].lower()] for w in a[i1:i2] if w[1].lower() in _QUANTIFIER_RANK]
            qb = [_QUANTIFIER_RANK[w[1].lower()] for w in b[j1:j2] if w[1].lower() in _QUANTIFIER_RANK]
            around_change = {w[1].lower() for w in (*a[i1:i2 + 1], *b[j1:j2 + 1])}
            idiom = {"than", "at", "longer", "doubt", "matter"} & around_change
            # the sentence says more of them than the quote, or either says none ("some" for
            # "most" says less, and is no conflict; "no more than" is "at most")
            if qa and qb and qa[0] != qb[0] and (qa[0] > qb[0] or 0 in (qa[0], qb[0])) and not idiom:
                return Conflict("quantifier", _said(a, i1, i2), _said(b, j1, j2))
        if zh and not double and tag == "replace":
            chars = _opposite_chars("".join(said), "".join(quoted), opposites, quote)
            if chars:
                return Conflict("opposite", *chars)
            core = [w for w in said if w not in ("了", "过", "着")]   # "超过了不少于100克" against "低于…"
            if before and (after or ends) and len(core) == 1 and (len(quoted) == 1 or len(core) < len(said)) \
                    and quoted[0] in ZH_STRICT_OPPOSITES.get(core[0], ()) and core[0] not in in_b \
                    and not _NEGATIVE_FIGURE.search(sentence) and not _NEGATIVE_FIGURE.search(quote):
                return Conflict("opposite", core[0], b[j1][1])   # ("净利润为-5亿元" is a loss)
            # one Latin name or code for another in Chinese text ("H100" for "A100", "GPT-4" for
            # "GPT-4o"), flanked on both sides: another product, model or company
            if before and after and len(said) == 1 and len(quoted) == 1 \
                    and a[i1][2].rstrip(_APART) == "eng" and b[j1][2].rstrip(_APART) == "eng" \
                    and _other_code(said[0], quoted[0]) and said[0] not in in_b:
                return Conflict("name", a[i1][1], b[j1][1])
        # a negation one text adds, unless the word it negates comes again in that text ("not 100%
        # effective, but it is effective": a contrast, not a denial)
        if (before or opens) and after and tag in ("insert", "delete"):
            # where two words or more agree on each side, only a negation near the spot answers it
            around_a, around_b = span_a, span_b
            if min(flank_before, flank_after) >= 2:
                around_a = (max(span_a[0], i1 - _NEAR), min(span_a[1], i2 + _NEAR))
                around_b = (max(span_b[0], j1 - _NEAR), min(span_b[1], j2 + _NEAR))
            if tag == "insert" and not _negated(ka, *around_a, negations) \
                    and not any(k in _MINIMIZING and k not in kb for k in ka) \
                    and not any(_denies(k, zh) and k not in kb for k in ka[around_a[0]:around_a[1]]) \
                    and _negated(kb, j1, j2, negations) and not _recurs(kb, j2) \
                    and _only_negation(b, kb, j1, j2, zh, negations) \
                    and (not zh or _predicate_follows(b, j2, flank_after)):
                return Conflict("negation", "", _said(b, j1, j2 + 1))
            if tag == "delete" and not _negated(kb, *around_b, negations) \
                    and not any(k in _MINIMIZING and k not in ka for k in kb) \
                    and not any(_denies(k, zh) and k not in ka for k in kb[around_b[0]:around_b[1]]) \
                    and _negated(ka, i1, i2, negations) and not _recurs(ka, i2) \
                    and _only_negation(a, ka, i1, i2, zh, negations) \
                    and (not zh or _predicate_follows(a, i2, flank_after)):
                return Conflict("negation", _said(a, i1, i2 + 1), "")
        # a negation where the other text affirms ("was not ahead" for "was also ahead", "without
        # the bass" for "with the bass", "不来自" for "全都来自"), either way round
        if tag == "replace" and before and after and len(said) == 1 and len(quoted) == 1:
            # (as above: where two words or more agree on each side, only a negation near the spot
            # answers it; "cannot make good strides … without worrying" for "can make …")
            near_a, near_b = span_a, span_b
            if min(flank_before, flank_after) >= 2:
                near_a = (max(span_a[0], i1 - _NEAR), min(span_a[1], i2 + _NEAR))
                near_b = (max(span_b[0], j1 - _NEAR), min(span_b[1], j2 + _NEAR))
            if _affirms(quoted[0], said[0], negations) and not _negated(kb, *near_b, negations) \
                    and not _recurs(ka, i2):
                return Conflict("negation", _said(a, i1, i2 + 1), "")
            if _affirms(said[0], quoted[0], negations) and not _negated(ka, *near_a, negations) \
                    and not _recurs(kb, j2):
                return Conflict("negation", "", _said(b, j1, j2 + 1))
        # the same words with a negation among them, cut otherwise ("完全不符合" against the
        # sentence's "完全符合", which rjieba reads as one word)
        if zh and tag == "replace" and before and after and i2 - i1 <= 2 and j2 - j1 <= 3:
            got = _zh_negation_inside(said, quoted, a, b, i1, i2, j1, j2, ka, kb, negations)
            if got is not None:
                return got
        # a Chinese word and its negated form ("不是" for "是", "没有" for "有", "并非" for "是")
        if zh and tag == "replace" and before and after and len(said) == 1 and len(quoted) == 1:
            if _zh_negated_form(said[0], quoted[0]) and not _negated(kb, *span_b, negations):
                return Conflict("negation", _said(a, i1, i2 + 1), "")
            if _zh_negated_form(quoted[0], said[0]) and not _negated(ka, *span_a, negations):
                return Conflict("negation", "", _said(b, j1, j2 + 1))
        if tag == "replace" and before and (after or ends) and len(said) == 1 and len(quoted) == 1 \
                and said[0] not in in_b:
            fx, fy = _figure_value(said[0]), _figure_value(quoted[0])
            # "2022款" where the quote has "2021款"; not "约300" (or "302.4") where it has "302.44"
            if fx is not None and fy is not None and fx != fy and not _near(a, i1, b[j1][1]):
                return Conflict("figure", a[i1][1], b[j1][1])
        if tag == "replace" and before and (after or ends) and (len(said) > 1 or len(quoted) > 1):
            fa = [i for i in range(i1, i2) if _figure_value(ka[i]) is not None]
            fb = [j for j in range(j1, j2) if _figure_value(kb[j]) is not None]
            if len(fa) == 1 and len(fb) == 1 and ka[fa[0]] not in in_b \
                    and _figure_value(ka[fa[0]]) != _figure_value(kb[fb[0]]) \
                    and not _near(a, fa[0], b[fb[0]][1]) \
                    and all(_minor(w, zh) for i, w in enumerate(a[i1:i2], i1) if i != fa[0]) \
                    and all(_minor(w, zh) for j, w in enumerate(b[j1:j2], j1) if j != fb[0]) \
                    and not _from_year_to(a, fa[0], b, fb[0]):
                return Conflict("figure", a[fa[0]][1], b[fb[0]][1])
        # a name swap: flanked on both sides, so that a capital is a name's and not a sentence's
        # ("Researchers found" and "Scientists found" are no swap), and not in title-case text,
        # where every word has one. In Chinese, whose words are short: by two words or more (one
        # on one side is enough between a person, place or organisation and another), and
        # without the small words at either end of the change ("了上海" for "中国").
        if tag == "replace":
            s1, s2 = _trimmed(a, i1, i2) if zh else (i1, i2)
            t1, t2 = _trimmed(b, j1, j2) if zh else (j1, j2)
            least, most = sorted((flank_before, flank_after))
            if zh:  # the end of both texts flanks a proper name ("总部位于上海。" for "…杭州。")
                flanked = (least >= 2 or (least >= 1 and most >= 2) or ends) \
                    and (least >= 2 or (_is_proper(a[s1:s2]) and _is_proper(b[t1:t2])))
            else:
                # (or ended: "… from Wells Fargo and Citigroup." for "… and Barclays.", where two
                # words or more align before the name, so that its capital is no sentence's)
                flanked = (least >= 1 or ends) and not (title_case or _title_case(b))
            if zh and flanked and s2 - s1 == 1 and t2 - t1 == 1 and ka[s1] not in in_b \
                    and _ZH_PERIOD.search(a[s1][1]) and _ZH_PERIOD.search(b[t1][1]) \
                    and not _same_period(a[s1][1], b[t1][1]) and not _one_name(a[s1][1], b[t1][1], zh):
                return Conflict("name", a[s1][1], b[t1][1])   # "清朝" for "明朝", whatever follows
            if flanked and s1 < s2 and t1 < t2 and not set(ka[s1:s2]) & in_b \
                    and (_zh_names(a[s1:s2], b[t1:t2]) if zh
                         else _is_name_run(a[s1:s2], zh) and _is_name_run(b[t1:t2], zh)) \
                    and (not _part_of_a_name(a, s1 - 1, zh, _apart(a, s1))
                         or _head_swap(a, b, s1, s2, t1, t2, zh)) \
                    and not _part_of_a_name(a, s2, zh, _apart(a, s2)) \
                    and not _one_name(_said(a, s1, s2), _said(b, t1, t2), zh):
                return Conflict("name", _said(a, s1, s2), _said(b, t1, t2))
        # the same at the start of both texts, after a connective ("然而，瓦良格的争议" against
        # "但阿斯巴甜的争议"): the start is as good a flank as a word, if the words after it agree
        if tag == "replace" and i1 == 0 and j1 == 0 and flank_after >= (3 if zh else 2):
            s1, t1 = _after_connectives(a, 0, i2, zh), _after_connectives(b, 0, j2, zh)
            s2, t2 = i2, j2
            if zh:  # "李四于" against "张三于": the particle is no part of the name
                s1, s2 = _trimmed(a, s1, s2)
                t1, t2 = _trimmed(b, t1, t2)
            if s1 < s2 and t1 < t2 and (zh or (t1 > 0 and not (title_case or _title_case(b)))
                                        or _first_word_names(a, b, s1, s2, t1, t2, record, written)) \
                    and not set(ka[s1:s2]) & in_b \
                    and ((_is_name_run(a[s1:s2], zh) and _is_name_run(b[t1:t2], zh))
                         or (zh and _zh_names(a[s1:s2], b[t1:t2]))
                         or (_zh_unknown_name(a, s1, s2, b, t1, t2, zh, record)
                             and _is_name_run(b[t1:t2], zh))) \
                    and not _part_of_a_name(a, s2, zh) \
                    and not _one_name(_said(a, s1, s2), _said(b, t1, t2), zh):
                return Conflict("name", _said(a, s1, s2), _said(b, t1, t2))
    return _unanswered_negation(a, b, ka, kb, zh, negations, opposites, sentence, around) \
        or _crossed_opposite(a, b, ka, kb, zh, negations, opposites)


def _from_year_to(a: tuple[_Word, ...], i: int, b: tuple[_Word, ...], j: int) -> bool:
    """English: the quote's year is the one a change is measured from and the sentence's a later
    one it happened in ("fell 20% in 2024" against "dropped 20% from 2023"): the same change."""
    return 0 < i and 0 < j and a[i - 1][1].lower() == "in" and b[j - 1][1].lower() in ("from", "since") \
        and _YEAR.fullmatch(a[i][1]) is not None and _YEAR.fullmatch(b[j][1]) is not None \
        and int(a[i][1]) > int(b[j][1])


_NEGATIVE_FIGURE = re.compile(r"(?:[-−–]|负)\s*\d")


def _code_key(word: str) -> str:
    """A Latin name or code as compared: case, hyphens and spaces aside ("GPT-4" is "gpt4")."""
    return re.sub(r"[\s\-_.]", "", word).casefold()


def _other_code(said: str, quoted: str) -> bool:
    """Whether two Latin model codes name different things: both hold a digit, and neither is the
    other written otherwise or with its maker's name (three letters or more) before it ("R1" in
    "DeepSeek-R1"; "GB200" is no "B200"); tickers and names ("TSLA", "Tesla") hold no digit and are
    left alone."""
    x, y = _code_key(said), _code_key(quoted)
    if x == y or not any(c.isdigit() for c in x) or not any(c.isdigit() for c in y):
        return False
    short, long = sorted((x, y), key=len)
    if not long.endswith(short):
        return True
    # "DeepSeek-R1" and "i9-14900K" name "R1" and "14900K" after a maker or a line (a separator in
    # the longer, or three letters or more before it); "GB200" is no "B200"
    written = said if len(x) > len(y) else quoted
    return len(long) - len(short) < 3 and not re.search(r"[\s\-_.]", written)


# --- a plan stated as done (English, read without the alignment) -------------------------------------

_EN_IRREGULAR_PAST = {"began": "begin", "begun": "begin", "built": "build", "took": "take", "taken": "take",
                      "won": "win", "sold": "sell", "made": "make", "bought": "buy", "paid": "pay",
                      "spent": "spend", "brought": "bring", "held": "hold", "led": "lead", "sent": "send",
                      "left": "leave", "got": "get", "gotten": "get", "gave": "give", "given": "give",
                      "rose": "rise", "risen": "rise", "fell": "fall", "fallen": "fall", "grew": "grow",
                      "grown": "grow", "drove": "drive", "driven": "drive", "broke": "break",
                      "broken": "break", "chose": "choose", "chosen": "choose", "struck": "strike",
                      "sank": "sink", "slid": "slide", "shrank": "shrink"}
_EN_DONE_VERB = re.compile(
    r"\b(?:(?P<aux>has|have|had)\s+(?:already\s+|now\s+|just\s+|since\s+)?|already\s+)?"
    r"(?P<v>[a-z]{3,}ed|" + "|".join(_EN_IRREGULAR_PAST) + r")\b")
_EN_PLANNED_VERB = re.compile(
    r"\b(?P<plan>(?:plans?|planned|planning|intends?|intended|aims?|aimed|expects?|expected|proposes?|proposed"
    r"|hopes?|seeks?|wants?|(?:is|are|was|were)\s+(?:set|due|scheduled|expected|slated|poised))\s+to"
    # "expects capital spending to rise", "forecasts exports to fall": the thing, then what it will do
    r"|(?:expects?|expected|forecasts?|forecast|projects?|projected|predicts?|predicted)"
    r"\s+(?:[\w$%.-]+\s+){1,4}?to"
    r"|will|would|could|may|might)\s+(?:(?:also|soon|eventually|then|only)\s+)?(?P<v>[a-z]{3,})\b")
_EN_PLAN_IN_SENTENCE = re.compile(
    r"\b(?:plans?|planned|planning|intends?|intended|aims?|expects?|expected|proposes?|proposed|will|would"
    r"|could|may|might|to|set|due|scheduled|forecasts?|projected|hopes?)\b", re.IGNORECASE)


def _verb_stem(word: str) -> str:
    return _stem(_EN_IRREGULAR_PAST.get(word, word))


def _en_plan_as_done(sentence: str, quote: str) -> Conflict | None:
    """English: the sentence says a thing was done ("has already restarted", "began building")
    that the quote only plans or expects, with the same verb ("plans to restart", "plans to begin
    construction"), and the quote never says it was done; the sentence plans or expects nothing."""
    if _EN_PLAN_IN_SENTENCE.search(sentence):
        return None
    done = [(m.group(0), _verb_stem(m.group("v"))) for m in _EN_DONE_VERB.finditer(sentence)]
    if not done:
        return None
    planned = {_verb_stem(m.group("v")): m.group(0) for m in _EN_PLANNED_VERB.finditer(quote)}
    if not planned:
        return None
    quote_done = {_verb_stem(m.group("v")) for m in _EN_DONE_VERB.finditer(quote)}
    for said, stem in done:
        # (a move said done in other words counts: "rose" against "grew 5% … expected to rise")
        same = next((g for g in _EN_MOVE_GROUPS if stem in g), frozenset((stem,)))
        if stem in planned and not same & quote_done:
            return Conflict("plan", said, planned[stem])
    return None


_EN_MOVE_GROUPS = (frozenset(_stem(w) for w in "rise grow increase climb jump surge gain rebound".split()),
                   frozenset(_stem(w) for w in "fall drop decline decrease slide slip sink shrink".split()))


# a rule in force, and a rule still in draft
_ZH_IN_FORCE = re.compile(r"(?:正式)?(?:施行|实施|生效)")
_ZH_DRAFT = re.compile(r"征求意见稿|草案|公开征求意见|征求意见")
_EN_IN_FORCE = re.compile(r"\b(?:took effect|takes effect|came into (?:force|effect)|entered into force|"
                          r"(?:is|are|was|were) (?:now )?in (?:force|effect)|went into effect)\b",
                          re.IGNORECASE)
_EN_DRAFT = re.compile(r"\b(?:draft|proposed rules?|consultation|public comment|proposal)\b", re.IGNORECASE)


def _draft_as_in_force(sentence: str, quote: str, zh: bool) -> Conflict | None:
    """The sentence says a rule is in force ("已于…正式施行", "took effect") where its quote gives
    only a draft out for comment ("征求意见稿", "草案", "draft rules … public comment") and never
    says it took effect."""
    force, draft = (_ZH_IN_FORCE, _ZH_DRAFT) if zh else (_EN_IN_FORCE, _EN_DRAFT)
    said = force.search(sentence)
    if said is None or draft.search(sentence) or force.search(quote):
        return None
    quoted = draft.search(quote)
    return Conflict("plan", said.group(0), quoted.group(0)) if quoted else None


_ZH_MAIN = re.compile(r"([\u4e00-\u9fff]{2,8}?)为主")


def _zh_main_secondary(sentence: str, quote: str) -> Conflict | None:
    """Chinese: the sentence makes the main way ("以实物安置为主") what its quote makes the
    secondary one ("货币化安置为主、实物安置为辅")."""
    if "为主" not in sentence or "为辅" not in quote:
        return None
    for m in _ZH_MAIN.finditer(sentence):
        words = m.group(1).removeprefix("以")
        for n in range(len(words), 1, -1):
            part = words[-n:]
            if f"{part}为辅" in quote and f"{part}为主" not in quote:
                return Conflict("opposite", f"{part}为主", f"{part}为辅")
    return None


# an English count and what it counts: "2,120 program-funded stations", "20 teams", "7,500 steel jobs"
_EN_COUNT = re.compile(r"(?<![\w.,$£€])(\d{1,3}(?:,\d{3})+|\d+)(?![\d.,]\d)"
                       r"(?!\s*(?:%|percent|per cent|million|billion|thousand|trillion|bn|m)\b)"
                       r"((?:\s+(?!(?:of|in|and|or|to|for|from|by|at|on|per|a|an|the)\b)[A-Za-z-]+){1,3})")
_EN_STOP_COUNTED = frozenset("million billion thousand trillion years months weeks days hours minutes "
                             "percent times".split())


def _en_counts(text: str) -> dict[str, set[str]]:
    """Each plural noun an English text counts, and the counts it gives it ("20 teams": {"team":
    {"20"}}), the noun being the first plural among the three words after the figure."""
    out: dict[str, set[str]] = {}
    for m in _EN_COUNT.finditer(text):
        figure = m.group(1).replace(",", "")
        if _YEAR.fullmatch(figure):
            continue
        noun = next((w for w in m.group(2).split() if w.endswith("s") and len(w) > 3), None)
        if noun is None or noun.lower() in _EN_STOP_COUNTED:
            continue
        out.setdefault(_stem(noun.lower()), set()).add(figure)
    return out


def _en_count_instead(sentence: str, quote: str) -> Conflict | None:
    """English: the sentence counts a thing ("2,120 program-funded stations", "20 teams") that its
    quote counts otherwise ("212 stations", "18 teams"), one count for it, and the quote states the
    sentence's figure nowhere: the record may state it elsewhere, of another thing ("7,500" lost
    jobs, where the quote's "2,400 jobs" are the saved ones)."""
    said = _en_counts(sentence)
    if not said:
        return None
    quoted = _en_counts(quote)
    plain = _ungrouped(quote)
    own = set(re.findall(r"(?<![\d.])\d+(?:\.\d+)?", _ungrouped(sentence)))
    for noun, figures in said.items():
        theirs = quoted.get(noun)
        if not theirs or len(theirs) != 1 or figures & theirs:
            continue
        other = next(iter(theirs))
        if other in own:
            continue   # the sentence states the quote's count too, of something it names otherwise
        for figure in figures:
            if not _states(plain, figure) and not _same_figure(figure, other):
                return Conflict("figure", figure, other)
    return None


# a share of a group named by a word and its noun: "38% of rural counties", "4 percent of urban counties"
_EN_SHARE_OF = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:%|percent\b|per cent\b)\s+of\s+(?:the\s+|all\s+)?"
                          r"([A-Za-z-]{3,})\s+([A-Za-z-]{3,})")


def _en_share_swapped(sentence: str, quote: str) -> Conflict | None:
    """English: the sentence gives one group's share to another group of the same kind ("38% of
    urban counties" against "38% of rural counties …, compared with 4% of urban counties")."""
    def shares(text: str) -> list[tuple[str, str, str]]:
        return [(m.group(1), m.group(2).lower(), _stem(m.group(3).lower()))
                for m in _EN_SHARE_OF.finditer(text)]

    said = shares(sentence)
    if not said:
        return None
    quoted = shares(quote)
    for figure, group, noun in said:
        if (figure, group, noun) in quoted:
            continue
        moved = [g for f, g, n in quoted if n == noun and f == figure and g != group]
        own = [f for f, g, n in quoted if n == noun and g == group and f != figure]
        if moved and own:
            return Conflict("figure", f"{figure}% of {group}", f"{own[0]}% of {group}")
    return None


# a first across the world, and a first within one country
_ZH_FIRST_WORD = r"(?:首次|首个|首款|首家|第一个|第一次|首例)"
_ZH_WORLD_FIRST = re.compile(r"(?:人类|全球|世界|国际|全世界|史上)(?:上)?" + _ZH_FIRST_WORD)
_ZH_LOCAL_FIRST = re.compile(r"(?:我国|国内|中国|全国|国产|省内|全省|亚洲)(?:的)?" + _ZH_FIRST_WORD)
_EN_WORLD_FIRST = re.compile(r"\b(?:world'?s first|first ever|first in the world|first in history|"
                             r"humanity'?s first)\b", re.IGNORECASE)
_EN_LOCAL_FIRST = re.compile(
    r"\b(?:(?:country|nation|China|India|Japan|Europe|America)'?s first"
    r"|first (?:in|for) (?:the country|China|India|Japan|Europe|the nation|the region))\b", re.IGNORECASE)


def _first_widened(sentence: str, quote: str, zh: bool) -> Conflict | None:
    """The sentence makes a country's first the world's ("人类首次小行星采样返回任务" against "我国首次
    …", "the world's first" against "the country's first"), and the quote says it is the world's
    first nowhere."""
    world, local = (_ZH_WORLD_FIRST, _ZH_LOCAL_FIRST) if zh else (_EN_WORLD_FIRST, _EN_LOCAL_FIRST)
    said = world.search(sentence)
    if said is None or world.search(quote) or local.search(sentence):
        return None
    quoted = local.search(quote)
    return Conflict("opposite", said.group(0), quoted.group(0)) if quoted else None


# a change by a multiple: "doubled", "tripled", "halved", "more than quadruple the $1,720", "翻了一番"
_EN_MULTIPLE = {"doubled": 2.0, "doubles": 2.0, "double": 2.0, "tripled": 3.0, "triples": 3.0, "triple": 3.0,
                "trebled": 3.0, "quadrupled": 4.0, "quadruples": 4.0, "quadruple": 4.0, "halved": 0.5,
                "halves": 0.5}
_EN_MULTIPLE_WORD = re.compile(
    r"\b(" + "|".join(_EN_MULTIPLE) + r")\b(?!\s+(?:digits?|-digit|room|bed|check))", re.IGNORECASE)
_ZH_MULTIPLE = (("翻两番", 4.0), ("翻了两番", 4.0), ("翻了一番", 2.0), ("翻一番", 2.0), ("翻番", 2.0),
                ("增加了一倍", 2.0), ("增长了一倍", 2.0), ("增加一倍", 2.0), ("增长一倍", 2.0),
                ("近一倍", 2.0),
                ("减半", 0.5), ("一半", 0.5))
_EN_PERCENT_MOVE = re.compile(
    r"\b(?:(?P<up>rose|increased|grew|jumped|surged|climbed|soared|up)|(?P<down>fell|decreased|declined|dropped"
    r"|slumped|plunged|down))\s+(?:by\s+)?(?:about\s+|nearly\s+|almost\s+|some\s+|roughly\s+)?"
    r"(?P<n>\d+(?:\.\d+)?)\s*(?:%|percent\b|per cent\b)", re.IGNORECASE)
_ZH_PERCENT_MOVE = re.compile(
    r"(?:(?P<up>增长|增加|上升|提高|上涨|增幅为|增幅达)|(?P<down>下降|减少|降低|下滑|下跌|降幅为))了?(?:约|近)?"
    r"(?P<n>\d+(?:\.\d+)?)[%％]")
# "up from £3.2 billion", "from 4 last year", "较去年同期的7.1%": the level it changed from
_EN_FROM_LEVEL = re.compile(r"\bfrom (?:the |an? )?(?:estimated |about |around )?[$£€]?(\d[\d,]*(?:\.\d+)?)")
_ZH_FROM_LEVEL = re.compile(r"(?:较|比|从|由)(?:去年|上年|上一年)?(?:同期)?(?:的)?(\d+(?:\.\d+)?)")
_LEVEL = re.compile(r"(?<![\d.])(\d[\d,]*(?:\.\d+)?)")
_GROUP_COMMA = re.compile(r"(?<=\d),(?=\d{3})")


def _ungrouped(text: str) -> str:
    """`text` with the commas that group a figure's digits taken out ("2,120" is "2120")."""
    return _GROUP_COMMA.sub("", text)


def _states(plain: str, figure: str) -> bool:
    """Whether an `_ungrouped` text writes the figure whole ("2.1" is not in "2.15" nor "12.1")."""
    return re.search(rf"(?<![\d.]){re.escape(figure)}(?![\d]|\.\d)", plain) is not None


def _multiple_conflict(sentence: str, quote: str, zh: bool = False) -> Conflict | None:
    """The sentence gives a change as a multiple ("tripled", "doubled … to £3.9 billion", "翻了一番")
    that its quote gives otherwise: as another multiple ("doubled"), as a percentage far from it
    ("rose 48%", "增加了约15%"), or as the level it changed from ("up from £3.2 billion" where the
    sentence's £3.9 billion is the new level: ×1.2). More than a fifth off counts; the quote
    writing the sentence's multiple itself answers it."""
    if zh:
        said = next(((w, f) for w, f in _ZH_MULTIPLE if w in sentence), None)
        if said is None:
            return None
        word, factor = said
        if word in quote:
            return None
        other = next((w for w, f in _ZH_MULTIPLE if w in quote and f != factor), None)
        moves, level_from = _ZH_PERCENT_MOVE, _ZH_FROM_LEVEL
    else:
        m = _EN_MULTIPLE_WORD.search(sentence)
        if m is None:
            return None
        word, factor = m.group(1), _EN_MULTIPLE[m.group(1).lower()]
        quoted = [(x.group(1), _EN_MULTIPLE[x.group(1).lower()]) for x in _EN_MULTIPLE_WORD.finditer(quote)]
        if any(f == factor for _w, f in quoted):
            return None
        other = quoted[0][0] if quoted else None
        moves, level_from = _EN_PERCENT_MOVE, _EN_FROM_LEVEL
    if other is not None:
        return Conflict("figure", word, other)
    found = list(moves.finditer(quote))
    if len(found) == 1:
        change = float(found[0].group("n")) / 100
        ratio = 1 + change if found[0].group("up") else 1 - change
        if abs(ratio - factor) / factor > 0.2:
            return Conflict("figure", word, found[0].group(0))
        return None
    # the level it changed from, and the sentence's new level, both in the quote
    plain = _ungrouped(quote)
    froms = [float(x.group(1).replace(",", "")) for x in level_from.finditer(plain)]
    levels = {v for x in _LEVEL.finditer(_ungrouped(sentence)) if not _YEAR.fullmatch(v := x.group(1))
              and _states(plain, v)}
    if len(froms) == 1 and froms[0] > 0 and len(levels) == 1:
        ratio = float(next(iter(levels))) / froms[0]
        if abs(ratio - factor) / factor > 0.2:
            return Conflict("figure", word, f"{froms[0]:g} → {next(iter(levels))}")
    return None


# a Chinese change against the year before, and its direction: "同比也实现了正增长", "与去年同期相比仍下降12%"
_ZH_YOY_MOVE = re.compile(
    r"(?:同比|较?(?:去年|上年)同期(?:相比)?|与(?:去年|上年)同期相比|比上年|较上年|比去年|较去年)[^，,。；;、]{0,8}?"
    r"(?:(?P<up>正增长|增长|上涨|上升|提高|增加|回升)|(?P<down>负增长|下降|下滑|减少|回落|下跌|降低))")


def _zh_yoy_flipped(sentence: str, quote: str) -> Conflict | None:
    """Chinese: the sentence says a thing moved one way against the year before, with no figure,
    where its quote says only the other way ("同比也实现了正增长" against "与去年同期相比仍下降12%")."""
    said = {("up" if m.group("up") else "down"): m.group(0) for m in _ZH_YOY_MOVE.finditer(sentence)
            if not re.match(r"[了约近超过逾 \t]*\d", sentence[m.end():m.end() + 6])}
    if len(said) != 1:
        return None   # (a change with its figure is the figure checks' to read: "同比增长5%")
    quoted = {("up" if m.group("up") else "down"): m.group(0) for m in _ZH_YOY_MOVE.finditer(quote)}
    if len(quoted) != 1 or said.keys() == quoted.keys():
        return None
    return Conflict("opposite", next(iter(said.values())), next(iter(quoted.values())))


# a thing in use everywhere, and a thing on trial
_EN_IN_USE = re.compile(
    r"\b(?:now uses|uses|used|has (?:adopted|introduced|rolled out|deployed|implemented)"
    r"|have (?:adopted|introduced|rolled out|deployed|implemented)|adopted|rolled out|deployed)\b",
    re.IGNORECASE)
_EN_ON_TRIAL = re.compile(
    r"\b(?:(?:is|are|was|were|has been|have been|began|begun|started)\s+"
    r"(?:testing|trialling|trialing|piloting)"
    r"|pilot (?:programme|program|project|scheme|phase)|on a trial basis|in a trial|a trial of|trial run)\b",
    re.IGNORECASE)
_EN_TRIAL_WORD = re.compile(r"\b(?:test\w*|trial\w*|pilot\w*|experiment\w*)\b", re.IGNORECASE)
_ZH_IN_USE = re.compile(r"全面(?:推行|推广|实施|应用|启用)|已(?:推广|推行|全面|普及)")
_ZH_ON_TRIAL = re.compile(r"试点|试行|试运行|测试|试验")


def _trial_as_adopted(sentence: str, quote: str, zh: bool) -> Conflict | None:
    """The sentence says a thing is in use (everywhere) that its quote says is only on trial ("The
    league now uses AI-assisted officiating in all of its games" against "is testing AI-assisted
    officiating technology in its development league"; "全面推行" against "试点"), and the sentence
    speaks of no trial itself."""
    use, on_trial, trial_word = (_ZH_IN_USE, _ZH_ON_TRIAL, _ZH_ON_TRIAL) if zh \
        else (_EN_IN_USE, _EN_ON_TRIAL, _EN_TRIAL_WORD)
    said, trial, own = use.search(sentence), on_trial.search(quote), trial_word.search(sentence)
    if said is None or trial is None or own is not None:
        return None
    return Conflict("plan", said.group(0), trial.group(0))


# how much of a group the sentence says ("all", "nearly all", "most"; "全部", "绝大多数", "大多数")
_EN_SHARE_WORDS = ((1.0, re.compile(r"\b(?:all|every|entirely|wholly|unanimously)\b", re.IGNORECASE)),
                   (0.8, re.compile(r"\b(?:nearly all|almost all|virtually all|the vast majority)\b",
                                    re.IGNORECASE)),
                   # (not "the most crimes", a superlative)
                   (0.5, re.compile(r"(?<![Tt]he )\b(?:most|the majority|a majority|more than half)\b"
                                    r"(?! of all)", re.IGNORECASE)))
_ZH_SHARE_WORDS = ((1.0, re.compile(r"全部|全都|所有|(?<![人平])均(?=[已为有表在将未可能需须不])|一律|全体"
                                     r"|无一例外")),
                   (0.8, re.compile(r"绝大多数|绝大部分|几乎所有|几乎全部")),
                   (0.5, re.compile(r"大多数|大部分|多数|过半|半数以上")))
# ... and the shares of a group a quote gives: "61% of", "72% said", "19 of 30", "about a third",
# "56%的家长", "近四成", "30位家长，其中有19位", "19名代表中，有13人"
_EN_GROUP_SHARE = re.compile(
    r"(?<![\d.])(?P<p>\d+(?:\.\d+)?)\s*(?:%|percent\b|per cent\b)\s+"
    r"(?:of\s+(?:the\s+|its\s+|their\s+|all\s+)?(?P<of>[A-Za-z-]+)"
    r"|(?:said|say|reported|expected|agreed|supported|backed|were|had|found|opposed)\b)"
    r"|(?<![\d.,])(?P<n>\d+) (?:out )?of (?:the |its |their )?(?P<m>\d+)\b"
    r"|\b(?:up to |about |around |roughly |nearly |almost )?"
    r"(?P<frac>a third|one third|a quarter|one quarter|half|two-thirds|two thirds|a fifth|one fifth) of\b",
    re.IGNORECASE)
_ZH_GROUP_SHARE = re.compile(
    r"(?<![\d.])(?P<p>\d+(?:\.\d+)?)[%％](?:的(?P<of>[\u4e00-\u9fff]{2})|表示|认为|支持|反对|来自|同意)"
    r"|(?P<tenths>[一二三四五六七八九])成"
    r"|(?<![\d.])(?P<m>\d+)[位名个人家所户批款]?[^，。；\d]{0,12}?[，,]?(?:其中|中)(?:有|仅有|只有)?(?:约)?(?P<n>\d+)"
    r"|(?P<den>[二三四五六七八九十])分之(?P<num>[一二三四五六七八九])")
_EN_FRACTION = {"a third": 1 / 3, "one third": 1 / 3, "a quarter": 0.25, "one quarter": 0.25, "half": 0.5,
                "two-thirds": 2 / 3, "two thirds": 2 / 3, "a fifth": 0.2, "one fifth": 0.2}
_ZH_DIGIT = {c: i for i, c in enumerate("零一二三四五六七八九十")}


def _group_shares(quote: str, zh: bool, sentence: str) -> list[float]:
    """The shares of a group the quote gives; a share "of" a thing ("61% of businesses", "56%的家长")
    only when the sentence names that thing (not "12% of salary" against "All employees …")."""
    out: list[float] = []
    said = sentence if zh else {_stem(w.lower()) for w in re.findall(r"[A-Za-z-]+", sentence)}
    for m in (_ZH_GROUP_SHARE if zh else _EN_GROUP_SHARE).finditer(quote):
        if m.group("p"):
            thing = m.group("of")
            if thing is None or (thing in said if zh else _stem(thing.lower()) in said):
                out.append(float(m.group("p")) / 100)
        elif m.group("n") and m.group("m") and int(m.group("n")) <= int(m.group("m")) and int(m.group("m")):
            out.append(int(m.group("n")) / int(m.group("m")))
        elif not zh and m.group("frac"):
            out.append(_EN_FRACTION[m.group("frac").lower()])
        elif zh and m.group("tenths"):
            out.append(_ZH_DIGIT[m.group("tenths")] / 10)
        elif zh and m.group("den"):
            out.append(_ZH_DIGIT[m.group("num")] / _ZH_DIGIT[m.group("den")])
    return out


def _share_overstated(sentence: str, quote: str, zh: bool) -> Conflict | None:
    """The sentence says all, nearly all or most of a group ("nearly all of them reported lower
    revenue", "30位家长全都表示", "绝大多数家长支持") where every share of a group its quote gives is
    smaller ("61% reported", "其中有19位", "56%的家长支持"). Not when the sentence gives a share itself,
    which the figure checks read."""
    if re.search(r"\d\s*(?:%|％|percent|per cent)|\d+\s+of\s+\d+|成", sentence):
        return None
    # ("nearly all" before "all", "绝大多数" before "大多数")
    words = _ZH_SHARE_WORDS if zh else _EN_SHARE_WORDS
    said = next(((bound, m) for bound, pattern in (words[1], words[0], words[2])
                 if (m := pattern.search(sentence))), None)
    if said is None:
        return None
    shares = _group_shares(quote, zh, sentence)
    bound, word = said
    if (word.group(0) in quote) if zh \
            else re.search(rf"\b{re.escape(word.group(0))}\b", quote, re.IGNORECASE):
        return None   # the quote says it too ("extended to every household", "when only about half …")
    if not shares or any(x >= 0.995 if bound == 1.0 else x >= bound if bound == 0.8 else x > bound
                         for x in shares):
        return None
    return Conflict("quantifier", word.group(0), f"{round(max(shares) * 100)}%")


def _flanked_negation(a: tuple[_Word, ...], b: tuple[_Word, ...], ka: list[str], kb: list[str],
                      ops: Sequence[_Op], zh: bool, negations: frozenset[str]) -> Conflict | None:
    """In a quote that repeats little of the sentence: a negation the quote alone has, between
    words both share, one or more before it and two or more after ("Orion Auto has committed to
    native NACS ports" against "Orion Auto … has not committed to a date"), where the sentence
    negates nothing and the quote does not affirm the negated word again after a contrast."""
    if _negated(ka, 0, len(ka), negations):
        return None
    for k in range(1, len(ops) - 1):
        tag, i1, i2, j1, j2 = ops[k]
        before, after = ops[k - 1], ops[k + 1]
        if tag != "insert" or before[0] != "equal" or after[0] != "equal" \
                or after[2] - after[1] < 2 or (before[2] - before[1]) + (after[2] - after[1]) < 3:
            continue
        if _negated(kb, j1, j2, negations) and _only_negation(b, kb, j1, j2, zh, negations) \
                and not _recurs(kb, j2) and (not zh or _predicate_follows(b, j2, after[2] - after[1])):
            return Conflict("negation", "", _said(b, j1, j2 + 1))
    return None


def _only_negation(words: tuple[_Word, ...], keys: list[str], start: int, end: int, zh: bool,
                   negations: frozenset[str]) -> bool:
    """Whether the words one text adds at [start, end) are a negation and small words ("did
    not", "从未"), not a clause of their own ("had no children", which says more, not otherwise)."""
    return all(keys[i] in negations or keys[i] in _EN_MODALS or keys[i] in _ZH_MODALS
               or keys[i] in _NEGATION_PARTS or _minor(words[i], zh) for i in range(start, end))


def _predicate_follows(words: tuple[_Word, ...], at: int, run: int) -> bool:
    """Whether a verb or an adjective stands among the first four words of the aligned run that
    follows a Chinese negation: "没有[在议会]获得通过" against "[在议会]表决中被否决" shares only the
    place, not what the negation denies; "没有[在2019年发布]" shares the verb."""
    return any(words[k][2][:1] in ("v", "a") or words[k][1] in _ZH_PLAN_WORDS
               for k in range(at, min(at + run, at + 4, len(words))))


# nouns that say what is planned, and so are what a negation before them denies ("没有计划扩建")
_ZH_PLAN_WORDS = frozenset("计划 打算 意向 规划 安排 意图".split())


# words that complete a negation ("no longer", "not yet", "never even", "not at all")
_NEGATION_PARTS = frozenset(_stem(w) for w in (
    "longer", "more", "yet", "ever", "even", "all", "at", "always"))


def _crossed_opposite(a: tuple[_Word, ...], b: tuple[_Word, ...], ka: list[str], kb: list[str], zh: bool,
                      negations: frozenset[str], opposites: dict[str, frozenset[str]]) -> Conflict | None:
    """A word of the sentence whose opposite the quote states with two more of the sentence's
    words near it, where the word-by-word alignment does not reach (the texts order their clauses
    differently): "The population increased sharply in the northern provinces…" against "…in the
    northern provinces, the population decreased sharply." Not when the sentence states the
    opposite too, when a negation stands just before either word ("did not fall" is "rose"), or
    when the quote's clause speaks of another thing (`_other_subject`: "南方地区降水减少，北方地区
    降水偏多" for "北方地区降水增加")."""
    in_a, in_b = set(ka), set(kb)
    sentence_text = "".join(w for _k, w, _t in a)
    for i, x in enumerate(ka):
        if x in in_b or x not in opposites or x in _MEASURES or _negated(ka, max(0, i - 3), i, negations):
            continue
        context = {ka[n] for n in range(max(0, i - _NEAR), min(len(ka), i + 1 + _NEAR))
                   if n != i and not _minor(a[n], zh)}
        if not zh and i + 1 < len(a) and a[i + 1][1].lower() in _STATES:
            continue  # "fell ill" is "grew ill"
        for j, y in enumerate(kb):
            if y not in opposites[x] or y in in_a or _negated(kb, max(0, j - 3), j, negations) \
                    or _negated(kb, j + 1, min(len(kb), j + 2), negations):  # "with no" is "without"
                continue
            if {x, y} & _VERB_TOO:
                continue  # "help United defeat Arsenal" against "a famous victory over Arsenal"
            near = set(kb[max(0, j - _NEAR):j]) | set(kb[j + 1:j + 1 + _NEAR])
            if len(context & near) >= 2 and not _other_subject(b, j, in_a, zh, opposites, sentence_text):
                return Conflict("opposite", a[i][1], b[j][1])
    return None


# opposites that are also verbs of the other sense, told apart only by the clause around them
_VERB_TOO = frozenset(_stem(w) for w in ("defeat", "defeated", "loss", "lost", "win", "won"))


def _other_subject(b: tuple[_Word, ...], j: int, in_a: set[str], zh: bool,
                   opposites: dict[str, frozenset[str]], sentence_text: str = "") -> bool:
    """Whether the clause of b[j] (between punctuation) speaks of another thing than the sentence:
    it holds a name the sentence lacks, or the opposite of one of the sentence's words ("南方地区
    降水减少" in a quote, for a sentence on "北方地区")."""
    # the clause: to punctuation, at most five words before and four after (English words carry
    # no mark at a full stop, and the next sentence's first word is capitalised)
    start = j
    while start > max(0, j - _CLAUSE) and not _apart(b, start):
        start -= 1
    end = j + 1
    while end < min(len(b), j + 1 + (_CLAUSE if zh else 4)) and not _apart(b, end):
        end += 1
    if zh:  # Chinese words run together ("南方地区"): compare opposites of two characters or more
        clause = "".join(w for i, (_k, w, _t) in enumerate(b[start:end], start) if i != j)
        if any(len(p) >= 2 and p in clause and p not in sentence_text
               and any(q in sentence_text for q in qs) for p, qs in opposites.items()):
            return True
    for i in range(start, end):
        key, word, tag = b[i]
        if i == j:
            continue
        if opposites.get(key, frozenset()) & in_a:
            return True
        # in English a capital is a name's inside the clause, not a sentence's first word: after
        # the word, only one that follows a small word ("in the Southern Cone") counts
        proper = tag.rstrip(_APART)[:2] in ("nr", "ns", "nt") if zh else (
            i > start and word[:1].isupper() and (i < j or b[i - 1][1].lower() in EN_STOPWORDS))
        if proper and key not in in_a:
            return True
    return False




def _unanswered_negation(a: tuple[_Word, ...], b: tuple[_Word, ...], ka: list[str], kb: list[str],
                         zh: bool, negations: frozenset[str], opposites: dict[str, frozenset[str]],
                         sentence: str, around: str = "", loose: bool = False) -> Conflict | None:
    """A negation that one text has and the other answers nowhere, where the word-by-word
    alignment does not reach it (the texts order their clauses differently, or reword around it).
    `loose`: the quote repeats less than half of the sentence; then only the sentence's own
    denial is read, of a verb or an adjective (`_loose_denial`), only when the quote speaks of
    the negated clause (two of its words near the negation are in the quote: a quote may support
    another clause of the sentence), and a quote that states the denied word in a conditional
    clause answers it: the two may put one rule in different syntax ("to a point where failure to
    reimburse does not cause net pay to fall below…" against "when failure to reimburse causes net
    pay to fall below…, employers could be open to lawsuits").

    The other text must hold no negation and no word that denies in other terms ("lack",
    "unable", "缺乏", a word with "un-" or "-less" made from the negated word, or the negated word's
    opposite: "did not fall" is "rose"). Then
    - the quote affirms what the sentence denies, or the other way round, when the negated word
      (the first after the negation that is not a modal, an auxiliary or a small word) stands in
      the other text with two more of the first text's words near it: "scholars have not
      challenged the view" against "…, but many scholars have challenged this view";
    - the sentence denies what its quote never denies, when the sentence negates outside a direct
      quotation: "the chorus, which had not a more prominent role" against "the chorus, which had
      played a more prominent role". Not inside a direct quotation, whose idiom a record may
      paraphrase ("he hasn't done anything" for "all he's done is…"), and not when the record
      sentences next to the quote (`around`) may answer it (`_answers`).
    In both, the negated word stands once in its text (a text that also states it plainly may be
    contrasting two things) and, in Chinese, is a verb or an adjective ("没有投行部" says that a
    thing is absent, not that a claim is false)."""
    sides = ((a, b, ka, kb, True),) + (() if loose else ((b, a, kb, ka, False),))
    for x, y, kx, ky, sentence_negates in sides:
        counts = Counter(kx)
        # a denying word both texts hold ("paid little attention") answers neither's negation
        if not _negated(kx, 0, len(kx), negations) or _negated(ky, 0, len(ky), negations) \
                or any(_denies(k, zh) and k not in kx for k in ky):
            continue
        for p in range(len(kx) - 1):
            if not _negated(kx, p, p + 1, negations) or _recurs(kx, p + 1):
                continue
            if loose and not _loose_denial(x, kx, p, zh):
                continue
            r = p + 1
            while r < len(kx) - 1 and r - p <= 3 and (kx[r] in _EN_MODALS or kx[r] in _ZH_MODALS
                                                      or kx[r] in _NEGATION_PARTS or _minor(x[r], zh)):
                r += 1
            w = kx[r]
            if _minor(x[r], zh) or counts[w] > 1 or (zh and x[r][2][:1] not in ("v", "a")) \
                    or opposites.get(w, frozenset()) & set(ky) \
                    or (not zh and any(k != w and _negative_form(k, w) for k in ky)):
                continue
            said = _said(x, p, r + 1)
            context = {k for i, k in enumerate(kx[max(0, p - _NEAR):r + 1 + _NEAR], max(0, p - _NEAR))
                       if not p <= i <= r and not _minor(x[i], zh)}
            for q in (i for i, k in enumerate(ky) if k == w):
                if len(context & (set(ky[max(0, q - _NEAR - 1):q]) | set(ky[q + 1:q + _NEAR + 2]))) >= 2:
                    if loose and _conditional(y, q, zh):  # "when failure … causes": a condition
                        return None
                    return Conflict("negation", *((said, "") if sentence_negates else ("", said)))
            if sentence_negates and not _in_quotation(sentence, x[p][1], said) \
                    and not (around and _answers(around, w, context, zh, negations, opposites)) \
                    and not (loose and len(context & set(ky)) < 2):  # a quote on another clause
                return Conflict("unanswered", said, "")
    return None


_CONDITIONS = frozenset(_stem(w) for w in (
    "if", "when", "whenever", "unless", "whether", "where", "wherever", "once")) | frozenset(
    "如果 若 假如 倘若 要是 一旦 只要 除非 当 每当".split())
_CLAUSE_WORDS = 15  # how far back in its clause a word's condition may open


def _conditional(words: tuple[_Word, ...], q: int, zh: bool) -> bool:
    """Whether the word at q stands in a conditional clause: "if", "when", "unless", "whether" or
    "where" before it in its clause ("When failure to reimburse … causes net pay to fall…"); in
    Chinese "如果", "一旦", "只要", "当" and the like among the words before it."""
    for i in range(q - 1, max(-1, q - 1 - _CLAUSE_WORDS), -1):
        if words[i][0] in _CONDITIONS:
            return True
        if not zh and words[i][2]:  # the clause starts at this word (Chinese: the field is a tag)
            return False
    return False


# what opens a condition that a sentence must keep ("If the economy slows, the bank will cut rates"
# does not say the bank will cut them); not "when", "once", 当, which more often say when
IF_WORDS = frozenset({"if", "unless"}) | frozenset("如果 若 假如 倘若 要是 一旦 只要 除非 万一 假设".split())
# ... not "Provided free of charge, …" or "Assuming office in 2009, …" (participles), "If anything,"
# or ", if a little expensive" (a concession): after "if" the next word opens a clause
CLAUSE_OPENERS = frozenset("the it they he she we you i there this that these those its their his her our "
                            "your my one someone anyone people".split())


def _opens_clause(words: tuple[_Word, ...], at: int) -> bool:
    """Whether words[at] can open an English clause: a determiner or pronoun, a capitalised name or
    a figure ("if the economy slows", "unless Congress acts", "if 2% …"; not "if unevenly")."""
    if at >= len(words):
        return False
    w = words[at][1]
    return w.lower() in CLAUSE_OPENERS or w[:1].isupper() or w[:1].isdigit()


def _condition_dropped(a: tuple[_Word, ...], b: tuple[_Word, ...], zh: bool) -> Conflict | None:
    """The quote opens with a condition ("If the economy slows, …", "如果经济放缓，…") and the
    sentence says what follows it, from its first words on (three or more, the whole sentence if
    shorter), without any condition of its own: the quote only says so on that condition."""
    if not b or b[0][0] not in IF_WORDS or any(w[0] in _CONDITIONS or w[0] in IF_WORDS for w in a) \
            or (b[0][0] == "if" and not _opens_clause(b, 1)):
        return None
    brk = next((j for j in range(2, min(len(b), _CLAUSE_WORDS + 1)) if b[j][2].endswith(_APART)), None)
    if brk is None:
        return None
    n = min(len(a), 3)
    if n and [w[0] for w in a[:n]] == [w[0] for w in b[brk:brk + n]] \
            and not any(w[0] in _ADVICE for w in b[brk:brk + 4]) and not _restates(a, b[1:brk], zh):
        return Conflict("condition", "", _said(b, 0, brk))
    return None


def _restates(a: tuple[_Word, ...], condition: Sequence[_Word], zh: bool) -> bool:
    """Whether the sentence states the condition's content in its own words: half of its content
    words or more ("The museum offers free entry to visitors under 18" against "If you are under 18,
    the museum offers free entry"; "俄罗斯是世界上面积最大的国家" against "若以面积计算，…")."""
    said = {w[0] for w in a}
    content = [w[0] for w in condition if not _minor(w, zh) and w[1].lower() not in CLAUSE_OPENERS]
    return bool(content) and 2 * sum(k in said for k in content) >= len(content)


# what gives advice: its condition says when to follow it, not whether it holds ("如果需要加热食物，
# 建议将食物转移到…容器中", "If you have symptoms, you should see a doctor")
_ADVICE = frozenset(_stem(w) for w in ("should", "recommend", "recommended", "consider", "advise", "advised",
                                       "please", "try")) | frozenset(
    "建议 应 应该 应当 需要 请 最好 不妨 可以 宜".split())


def _loose_denial(x: tuple[_Word, ...], kx: list[str], p: int, zh: bool) -> bool:
    """Whether the negation at p denies a verb or an adjective, as `_unanswered_negation` reads it
    for a loosely aligned quote. In English: "not", "never" or "cannot", then (past auxiliaries, modals
    and "to") no determiner, quantifier or limiting word ("not have the required", "not to be the
    case", "not exceeding", "not only"), and no clause break ("was not, according to …")."""
    if zh:  # `_unanswered_negation` asks for a verb or an adjective after any Chinese negation
        return True
    if kx[p] not in _LOOSE_NEGATIONS:
        return False
    q = p + 1
    while q < len(kx) - 1 and (kx[q] in _EN_MODALS or kx[q] == "to"):
        q += 1
    return q < len(kx) and kx[q] not in _NOT_A_DENIAL and not x[p + 1][2]


def _answers(text: str, word: str, context: set[str], zh: bool, negations: frozenset[str],
             opposites: dict[str, frozenset[str]]) -> bool:
    """Whether `text` (the record around a quote) may answer a negation of `word` that the quote
    does not: it holds the word's opposite or a negative form of it, or a negation or a word that
    denies within `_ANSWER_NEAR` words of the word, of one of the sentence's words around its
    negation (`context`) or of a pronoun that opens the record sentence: "…was nominated in 2010.
    It did not win." answers "did not win", while a negation about something else next to the
    quote does not. `text` holds one record sentence a line."""
    for line in text.split("\n"):  # a record sentence before the quote, one after it
        keys = [k for k, _w, _t in (_zh_words(line) if zh else _en_words(line))]
        if opposites.get(word, frozenset()) & set(keys) \
                or (not zh and any(k != word and _negative_form(k, word) for k in keys)):
            return True
        near = [i for i, k in enumerate(keys) if k == word or k in context]
        # a sentence that opens on a pronoun speaks of the quote's subject ("It refused the money.")
        if keys and keys[0] in _PRONOUNS:
            near.append(0)
        if any((_negated(keys, i, i + 1, negations) or keys[i] in _DENYING)
               and any(abs(i - j) <= _ANSWER_NEAR for j in near) for i in range(len(keys))):
            return True
    return False


_PRONOUNS = frozenset(_stem(w) for w in (
    "it", "he", "she", "they", "this", "that", "these", "those", "its", "his", "her", "their")) | frozenset(
    "它 他 她 它们 他们 她们 其 该 此 这 这些 那".split())


def _negative_form(key: str, word: str) -> bool:
    """Whether `key` is a negative form of `word` (stems): "unavailable" of "available",
    "untreated" of "treatment", "useless" of "use", "flightless" of "flight"."""
    for prefix in ("un", "non", "in", "im", "il", "ir", "dis"):
        root = key[len(prefix):].lstrip("-")
        if key.startswith(prefix) and len(root) >= 4 and (word.startswith(root) or root.startswith(word)):
            return True
    return key.endswith("less") and len(key) >= 7 and len(word) >= 3 and key[:-4].startswith(word[:4])


def _denies(key: str, zh: bool) -> bool:
    """Whether a word denies without being a negation ("lack", "unable", "缺乏", "无效")."""
    if zh:
        return key in _DENYING or (key not in _ZH_NOT_DENYING
                                   and any(ch in key for ch in "不无没未非否缺免禁拒"))
    return key in _DENYING


# Chinese words with a negating character that deny nothing: "not only", "no matter", "very",
# "future", "constantly", "quite a few", "countless", "soon", "different", "extraordinary"
_ZH_NOT_DENYING = frozenset("不仅 不但 不论 不管 无论 非常 未来 不断 不少 无数 不久 不同 非凡 不仅仅".split())


def _in_quotation(sentence: str, negation: str, said: str) -> bool:
    """Whether the words `said` (a negation and the word it negates) stand inside a direct
    quotation of the sentence ("…, saying that \"he hasn't done…\""; "isn’t" as "isn't")."""
    sentence = sentence.replace("’", "'")  # same length: offsets and quote counts hold
    at = sentence.find(said)
    if at < 0:
        at = sentence.find(negation)
    if at < 0:
        return False
    before = sentence[:at]
    return before.count('"') % 2 == 1 or before.count("“") > before.count("”") \
        or before.count("「") > before.count("」")


# Words that say "little or none" ("副作用轻微", "side effects were mild"): a negation the other
# text makes ("不会引起严重的副作用", "does not cause serious side effects") may be their paraphrase,
# wherever in the quote they stand.
_MINIMIZING = frozenset({"轻微", "很少", "极少", "罕见", "少见", "鲜有"}) | frozenset(_stem(w) for w in (
    "mild", "mildly", "minor", "slight", "slightly", "negligible", "rare", "rarely", "seldom", "few",
    "little", "minimal"))
# words that deny without a negation: a text holding one may answer a negation in other terms
_DENYING = frozenset({"缺乏", "缺少", "拒绝", "否认", "避免", "禁止", "难以", "失败", "停止", "取消", "终止",
                      "放弃", "仅", "只", "只有", "仅仅", "唯一", "延期", "推迟", "延迟", "延误", "逾期",
                      "搁置"}) | frozenset(_stem(w) for w in (
    "delay", "delayed", "postpone", "postponed", "overdue", "endemic", "confidential", "secret", "flop",
    "exempt",
    "lack", "lacks", "lacking", "fail", "fails", "failed", "failure", "unable", "refuse", "refused",
    "deny", "denied", "absent", "absence", "rarely", "seldom", "hardly", "barely", "scarcely", "avoid",
    "prevent", "instead", "rather", "free", "unlike", "except", "exclude", "nothing", "nobody", "nowhere",
    "few", "little", "ban", "banned", "prohibit", "forbid", "forbidden", "reject", "rejected", "only",
    "solely", "exclusively", "stop", "stopped", "cease", "ceased", "discontinued", "former", "formerly",
    "abandon", "halt", "quit", "missing", "miss", "pending", "await", "zero", "neither", "unknown",
    "impossible", "against", "lose", "lost", "decline", "declined", "oppose", "opposed", "doubt", "unclear",
    "uncertain", "until", "yet")) | _MINIMIZING


# Words that make what follows them in a quote a question, a denial or someone's claim rather
# than a fact: "There is no evidence that the vaccine causes autism", "…are investigating
# whether the drug reduces…", "该公司否认曾裁员", "是否会降息".
_FRAME_EN = re.compile(
    r"\b(?:whether|no evidence (?:that|of)|little evidence (?:that|of)|no proof that|allegations? that"
    r"|alleged that|claims? that|claimed that|rumou?rs? that|den(?:y|ies|ied) that|myth that|not true that"
    # "claimed on Monday that", "alleged last week that": a time between the verb and what it claims
    r"|(?:claimed|alleged) (?:(?:on|last|this|earlier|late|early) \w+(?: \d{1,2})?|yesterday|today"
    r"|earlier|in a statement) that"
    r"|falsely (?:claimed|said|reported|stated)|speculation that|hypothes[ie]s that"
    r"|it is not the case that|speculated that|(?:fears?|feared) that|posts? claiming"
    # "denied reports that", "refuted suggestions that", "said it was false that"
    r"|(?:den(?:y|ies|ied)|refut\w*|dismiss\w*|rebut\w*|reject\w*) (?:the )?(?:media )?"
    r"(?:reports?|claims?|suggestions?|rumou?rs?|allegations?|speculation) that"
    r"|(?:false|untrue|a myth|a hoax|fake news) that"
    # "The startup claims its battery can …": a verb before what it claims ("insurance claims rose" is none)
    r"|claim(?:s|ed) (?=(?:its|it|the|their|his|her|to)\b))\b",
    re.IGNORECASE,
)
_FRAME_ZH = re.compile(
    r"是否|有无(?![数人线限法机])|(?:并无|没有|尚无|无)证据(?:表明|显示|证明)?|传言|谣言|否认|辟谣|不实|是不是"
    r"|尚不清楚|尚不明确|尚无定论|尚未证实|未经证实|有待证实|有待确认|网传|据传|(?<![数根证依论])据[称说]|传闻|市场猜测|猜测称|网友称|爆料称"
    r"|宣称|声称|指责|指控|预计|预期|有消息称|有(?:媒体|外媒|网友)?(?:报道|爆料)称|有媒体称"
    r"|(?:网络上|网上|坊间|社交媒体上)流传")
# a denial after what it denies, in the same quote sentence ("网传…提高到67岁，人社部回应称该消息不实",
# "… to 67, but the ministry called it a fabrication")
_POST_DENIAL_EN = re.compile(
    r"\b(?:(?:this|these|the (?:reports?|claims?|rumou?rs?|story|stories)) (?:is|was|are|were)"
    r" (?:false|untrue|not true|fake(?: news)?|a (?:myth|hoax|fabrication|rumou?r)|baseless)"
    r"|called (?:it|this|that|them|the (?:reports?|claims?|rumou?rs?)) (?:false|untrue|fake(?: news)?"
    r"|a (?:fabrication|hoax|myth|rumou?r)|baseless|groundless))\b", re.IGNORECASE)
_POST_DENIAL_ZH = re.compile(r"不实|谣言|辟谣|不属实|假消息|虚假信息|纯属捏造|系误读")
# ... and in Chinese, what ties the denial to the claim: the claim named as such right after it
# ("…67岁的说法，官方辟谣"), or a word pointing back to it ("该消息不实", "对此"); "关于裁员的传闻不实"
# after another claim denies that one
_ZH_CLAIM_NAMED = re.compile(r"[”\"」』]?的?(?:说法|消息|传闻|传言|报道)")
_ZH_POINTS_BACK = re.compile(r"(?:该|此|这一?|上述|相关)(?:消息|说法|传闻|传言|报道|信息)|对此")
_POST_DENIAL_GAP = 40    # characters between the last repeated word and the denial
_QUOTE_SENTENCE_END = re.compile(r"[.!?。！？]\s*")
_QUOTE_SENTENCE_END_OR_LAST = re.compile(r"[.!?。！？]\s*|\Z")   # an unfinished last sentence too


# --- ranks ---------------------------------------------------------------------------------------

# "第三大", "前三", "最大", "首任", "之一", "排名第二": a kind (大, 任, 次, rank …) and a place
_ZH_RANK = re.compile(
    r"(?P<verb>排名|位列|位居|名列|排行|排在|居于)?(?:全球|全国|国内|世界|全省|全市|行业|亚洲|欧洲|中国|本赛季)?"
    r"(?:(?P<ord>第|前)(?P<n>[一二三四五六七八九十两]{1,3}|\d{1,3})(?P<suf>大|高|多|名|位|任|次|届|家|强)?"
    r"|最(?P<sup>大|高|多|强|早|长|快|低|小|少|晚|短|慢|深|重)|首(?P<first>任|次|届|家|位)"
    r"|(?P<zhi>之首|之一|榜首))")
_EN_RANK = re.compile(
    r"\b(?P<oneof>one of the\s+)?(?:(?P<ord>first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|"
    r"tenth|\d{1,2}(?:st|nd|rd|th))[- ])?(?P<sup>largest|biggest|highest|greatest|longest|tallest|oldest|"
    r"youngest|smallest|lowest|fastest|richest|busiest|deepest|heaviest|strongest|widest|best-selling|"
    r"costliest|deadliest|hottest|coldest|warmest|wettest|driest|cheapest|wealthiest|poorest|"
    r"slowest|shortest|largest-ever|brightest|safest|hardest|worst|best|"
    r"most (?!of\b|people\b|likely\b|recently\b|often\b|commonly\b|notably\b)[a-z]{4,}(?:ly)?)\b",
    re.IGNORECASE)
_ONE_OF = "one of"
# what makes "most …", "best" or "worst" a rank: "the most expensive", "Europe's best", "its worst"
_DETERMINED = re.compile(r"(?:\bthe|['’]s|\bits|\btheir|\bhis|\bher|\bour)\s+"
                         r"(?:(?:single|very|absolute|all-time|overall|undisputed)\s+)?$", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[，。；！？,;!?]")
_Place = int | tuple[str, int] | str


_MAX_RANKS = 32   # ranks read per text: a text of hundreds of ranks is a table, not a claim
# what makes a superlative no plain first place: "the largest after Tokyo" (a name follows),
# "除美国和中国以外全球最大", "仅次于北京"
_RANK_QUALIFIED = re.compile(r"\b(?:second only to|after|behind|apart from|except|excluding|other than|"
                             r"besides)\s+(?:the\s+)?[A-Z]|除了?[^，。；,;]{1,20}?(?:以外|之外)|仅次于|不含|不包括")
_EN_ONE_OF = re.compile(r"\b(?:one of|among)\b(?:\s+\S+){0,3}\s*$", re.IGNORECASE)


def _ranks(text: str, zh: bool) -> list[tuple[str, _Place, str]]:
    """(kind, place, as written) of each rank the text states: place 3 for "第三大", ("top", 3)
    for "前三", "one of" for "最大的…之一", "one of the largest", "among America's largest" or
    "one of the 10 largest". A superlative its clause qualifies ("largest … after Tokyo",
    "除…以外…最大") states no place. Clause ends and qualifiers are found once, and at most
    _MAX_RANKS superlatives are read, so the work is linear in the text."""
    out: list[tuple[str, _Place, str]] = []
    ends = [m.start() for m in _CLAUSE_END.finditer(text)]
    qualified = {bisect.bisect_left(ends, m.start()) for m in _RANK_QUALIFIED.finditer(text)}

    def in_qualified_clause(at: int) -> bool:
        return bisect.bisect_left(ends, at) in qualified

    matches = _EN_RANK.finditer(text) if not zh else _ZH_RANK.finditer(text)
    for seen, m in enumerate(matches):
        if len(out) >= _MAX_RANKS or seen >= 4 * _MAX_RANKS:
            break
        if not zh:
            if in_qualified_clause(m.start()):
                continue
            kind = m.group("sup").lower()
            if (kind.startswith("most ") or kind in ("best", "worst")) and not m.group("oneof") \
                    and not _DETERMINED.search(text, max(0, m.start() - 24), m.start()):
                continue   # "most economists", "best practices", "June 5th most stores": no rank
            o = (m.group("ord") or "").lower()
            one_of = m.group("oneof") or _EN_ONE_OF.search(text, max(0, m.start() - 40), m.start())
            place: _Place = _ONE_OF if one_of else (
                int(_EN_ORDINAL.get(o, "") or re.sub(r"\D", "", o) or 1))
            out.append((kind, place, m.group(0).strip()))
        elif m.group("zhi"):
            out.append(("之", _ONE_OF if m.group("zhi") == "之一" else 1, m.group(0)))
        elif m.group("sup"):
            if in_qualified_clause(m.start()):
                continue
            k = bisect.bisect_left(ends, m.end())
            tail = text[m.end():min(ends[k] if k < len(ends) else len(text), m.end() + 20)]
            one_of = tail.find("之一")
            out.append((m.group("sup"), 1, m.group(0)) if one_of < 0 else
                       (m.group("sup"), _ONE_OF, m.group(0) + tail[:one_of + 2]))
        elif m.group("first"):
            kind = "rank" if m.group("first") in "家位" else m.group("first")
            out.append((kind, 1, m.group(0)))
        else:
            suf = m.group("suf") or ""
            if suf in ("名", "位", "强") or (not suf and m.group("verb")):
                suf = "rank"
            n = int(m.group("n")) if m.group("n").isdigit() else _cn_value(m.group("n"))
            if suf and n:
                out.append((suf, ("top", n) if m.group("ord") == "前" else n, m.group(0)))
    return out


def _place_holds(said: _Place, quoted: _Place) -> bool:
    """Whether a quote's place of some kind backs the sentence's: the same place, a place within
    the sentence's "top N", or any place for "one of"."""
    if said == quoted or said == _ONE_OF:
        return True
    if isinstance(said, tuple):
        return (isinstance(quoted, int) and quoted <= said[1]) or (
            isinstance(quoted, tuple) and quoted[1] <= said[1])
    return False


def rank_conflict(sentence: str, quote: str, lang: str) -> Conflict | None:
    """A rank the quote gives otherwise: "最大" where the quote ranks it "第三大", "the largest"
    for "one of the largest" (or "最大的…之一", which a verbatim quote may go on to say), "第一次"
    for "第二次", "首任" for "第二任", "排名第一" for "前三". Only against ranks of the same
    kind (大 with 大, 任 with 任), and only when no rank of that kind in the quote backs it."""
    zh = lang == "zh"
    said = _ranks(sentence, zh)
    if not said:
        return None
    by_kind: dict[str, list[tuple[_Place, str]]] = {}
    for k, p, t in _ranks(quote, zh):
        by_kind.setdefault(k, []).append((p, t))
    for kind, place, text in said:
        same = by_kind.get(kind, [])
        # (not where the sentence names the quote's rank too: "第四次调查…比第三次调查增长了16.8%"
        # against "与第三次调查相比…增长16.8%" compares the two)
        if same and not any(_place_holds(place, p) for p, _t in same) \
                and not all(any(_place_holds(o, p) for k, o, _t in said if k == kind) for p, _t in same):
            return Conflict("rank", text, same[0][1])
    return None


def framed(sentence: str, quote: str, lang: str) -> Conflict | None:
    """Where the quote repeats the sentence (70% of its words or more, in order, all after the
    frame) only after words, in the same quote sentence, that make what follows a question, a
    denial or someone's claim, and the sentence carries no such words itself: "The vaccine causes
    autism." against "There is no evidence that the vaccine causes autism."; "The company laid off
    300 workers." against "The company denied that it had laid off 300 workers.". Not when the
    frame is itself denied or confirmed ("cannot deny that", "confirmed rumours that", "不能否认"),
    when a finding follows it ("tested whether the drug works found that it reduces…"), or, for
    a denial, when the sentence denies too ("found no link" against "no evidence of a link")."""
    pattern = _FRAME_ZH if lang == "zh" else _FRAME_EN
    post = _POST_DENIAL_ZH if lang == "zh" else _POST_DENIAL_EN
    pre_frame = pattern.search(quote) is not None and pattern.search(sentence) is None
    post_frame = post.search(quote) is not None and post.search(sentence) is None
    if not (pre_frame or post_frame):
        return None
    unit = _FRAME_UNIT_ZH if lang == "zh" else _FRAME_UNIT_EN
    a = [m.group(0).lower() for m in unit.finditer(sentence)]
    qm = list(unit.finditer(quote))
    b = [m.group(0).lower() for m in qm]
    if len(a) < 4 or not b:
        return None
    blocks = [x for x in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks() if x.size]
    denies = _SENTENCE_DENIES.search(sentence) is not None
    for f in post.finditer(quote) if post_frame and not denies else ():
        before = [x for x in blocks if qm[x.b + x.size - 1].end() <= f.start()]
        if sum(x.size for x in before) < 0.7 * len(a):
            continue
        last_end = qm[max(x.b + x.size - 1 for x in before)].end()
        if f.start() - last_end > _POST_DENIAL_GAP or _QUOTE_SENTENCE_END.search(quote, last_end, f.start()) \
                or _FRAME_UNDONE.search(quote[max(0, f.start() - 24):f.start()]) \
                or (lang == "zh" and not _ZH_CLAIM_NAMED.match(quote, last_end)
                    and not _ZH_POINTS_BACK.search(quote, last_end, f.start() + 2)):
            continue
        first_at = qm[min(x.b for x in before)].start()
        begin = max((m.end() for m in _QUOTE_SENTENCE_END.finditer(quote, 0, first_at)), default=0)
        return Conflict("framed", "", quote[begin:f.end()].strip())
    for f in pattern.finditer(quote) if pre_frame else ():
        after = [x for x in blocks if qm[x.b].start() >= f.end()]
        if sum(x.size for x in after) < 0.7 * len(a):
            continue
        claim_at = qm[min(x.b for x in after)].start()  # where the repeated words start after it
        # (a Chinese frame may stand before a comma: "该公司宣称，其电池…", "分析人士预计，苹果将…")
        gap_from = f.end() + (1 if lang == "zh" and quote[f.end():f.end() + 1] == "称" else 0)   # "传闻称，"
        gap_from += 1 if lang == "zh" and quote[gap_from:gap_from + 1] in "，：," else 0
        if claim_at - f.end() > 60 or _CLAUSE_BREAK.search(quote, gap_from, claim_at):
            continue
        last_at = qm[max(x.b for x in after)].start()
        if _FRAME_UNDONE.search(quote[max(0, f.start() - 24):f.start()]) \
                or _FINDING.search(quote, f.end(), last_at) or (denies and _DENIAL_FRAME.match(f.group(0))) \
                or (not _DENIAL_FRAME.match(f.group(0))
                    and _CONFIRMED.search(quote, f.end(), _sentence_end(quote, last_at))):
            continue
        begin = max((m.end() for m in _QUOTE_SENTENCE_END.finditer(quote, 0, f.start())), default=0)
        return Conflict("framed", "", quote[begin:f.end()].strip())
    return None


def asked(sentence: str, quote: str, lang: str, after: str = "") -> Conflict | None:
    """Where the quote repeats the sentence (70% of its words or more) only in a question
    ("…海外销量超过41万辆？", "Did sales top 410,000?") while the sentence asks nothing, and what
    follows the question (in the quote, then `after`, the record's text after the quote) does
    not answer it: "Yes", "是的", "答：", or a sentence that repeats 40% of the sentence's words."""
    if "?" not in quote and "？" not in quote or sentence.rstrip().endswith(("?", "？")):
        return None
    unit = _FRAME_UNIT_ZH if lang == "zh" else _FRAME_UNIT_EN
    a = [m.group(0).lower() for m in unit.finditer(sentence)]
    if len(a) < 4:
        return None
    begin = 0
    question: str | None = None
    for end in _QUOTE_SENTENCE_END_OR_LAST.finditer(quote):
        if end.end() == begin and end.start() == len(quote):
            break
        part = quote[begin:end.end()]
        b = [m.group(0).lower() for m in unit.finditer(part)]
        repeats = sum(x.size for x in difflib.SequenceMatcher(None, a, b, autojunk=False)
                      .get_matching_blocks()) >= 0.7 * len(a)
        if repeats and end.group(0).strip() not in ("?", "？"):
            return None                    # stated too (the answer to an FAQ's question)
        # a question of about the claim's length (a scraped page may run many sentences into one)
        if repeats and question is None and len(b) <= 1.5 * len(a) + 4 \
                and not _answered(a, unit, quote[end.end():] + after):
            question = part.strip()
        begin = end.end()
    return None if question is None else Conflict("framed", "", question)


def _answered(a: list[str], unit: re.Pattern[str], rest: str) -> bool:
    """Whether `rest`, the text after a question, answers it: it opens with a yes or an answer's
    mark, or its first sentence repeats 40% of the claim's words `a`."""
    if _ANSWERED.match(rest):
        return True
    first = _QUOTE_SENTENCE_END.split(rest.lstrip(), maxsplit=1)[0]
    b = [m.group(0).lower() for m in unit.finditer(first)]
    return bool(b) and sum(x.size for x in difflib.SequenceMatcher(None, a, b, autojunk=False)
                           .get_matching_blocks()) >= 0.4 * len(a)


# a question answered right after it ("Is it 330 m tall? Yes, …", "…吗？是的。")
_ANSWERED = re.compile(r"\s*(?:(?:A|答|回答)[:：]"
                       r"|(?:yes|yeah|correct|indeed|true|是的|对|没错|正确|确实)\b)", re.IGNORECASE)


# a frame itself denied or confirmed ("cannot deny that", "confirmed rumours that", "不能否认")
_FRAME_UNDONE = re.compile(
    r"(?:\b(?:confirm\w*|cannot|can't|can not|nobody|no one|never|not|hardly)\s+(?:\w+\s+){0,2}$)"
    r"|(?:不能|不可|无可|没有|无法|难以|已经|证实)$", re.IGNORECASE)
# a finding after the frame asserts what follows it ("tested whether it works found that it …")
_FINDING = re.compile(
    r"\b(?:found|find|finds|showed|shows|shown|concluded|confirmed|demonstrated|established)\s+that\b"
    r"|发现|证实|表明|显示", re.IGNORECASE)
# a confirmation after a rumour, in its sentence ("此前有传闻称…，今日该公司正式宣布…", "据传…，已予以确认")
_CONFIRMED = re.compile(
    r"\b(?:confirmed|announced)\b|宣布|确认|证实", re.IGNORECASE)


def _sentence_end(text: str, at: int) -> int:
    """Where the sentence holding `at` ends (after its end mark), or the text's end."""
    m = _QUOTE_SENTENCE_END.search(text, at)
    return m.end() if m else len(text)
_DENIAL_FRAME = re.compile(
    r"no |little |den|myth|false|not true|it is not|并无|没有|尚无|无证据|否认|辟谣|不实", re.IGNORECASE)
_SENTENCE_DENIES = re.compile(r"\b(?:no|not|never|none|nothing|without|n't)\b|没有|不|未|无", re.IGNORECASE)


_CLAUSE_BREAK = re.compile(r"[.!?。！？,;，；:：]")
_FRAME_UNIT_EN = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")
_FRAME_UNIT_ZH = re.compile(r"[\u4e00-\u9fff]|[A-Za-z0-9]+")


def aligned_share(sentence: str, quote: str, lang: str) -> float:
    """The share of the sentence's words that the quote repeats in order (what `quote_conflict`
    needs to be at least one half before it reads a change)."""
    zh = lang == "zh"
    a = [k for k, _w, _t in _sentence_words(sentence, zh)]
    return _aligned(a, [k for k, _w, _t in (_zh_words(quote) if zh else _en_words(quote))])[1]


def _zh_copied(sentence: str, quote: str
               ) -> tuple[tuple[_Word, ...], tuple[_Word, ...], Sequence[_Op]] | None:
    """A Chinese sentence's words, its quote's and their alignment, when the quote repeats 70% of
    the sentence's words or more, in order (`quote_addition`, `zh_other_place`)."""
    a = _sentence_words(sentence, True)
    b = _zh_words(quote)
    if not a or not b:
        return None
    ops, share = _aligned([k for k, _w, _t in a], [k for k, _w, _t in b])
    return (a, b, ops) if share >= 0.7 else None


def quote_addition(sentence: str, quote: str, record: str) -> Conflict | None:
    """A Chinese sentence that copies its quote but adds a noun or time the record never states
    ("2023年春节档首日票房冠军" against "2023春节档票房冠军"): it claims more than its source says.
    At least 70% of the sentence's words align, and the added words (one or two, two characters
    or more) stand between two aligned words or more on each side."""
    copied = _zh_copied(sentence, quote)
    if copied is None:
        return None
    a, _b, ops = copied
    for k, (tag, i1, i2, _j1, _j2) in enumerate(ops):
        if tag != "delete" or i2 - i1 > 2 or not 0 < k < len(ops) - 1:
            continue
        if ops[k - 1][0] != "equal" or ops[k + 1][0] != "equal" \
                or min(ops[k - 1][2] - ops[k - 1][1], ops[k + 1][2] - ops[k + 1][1]) < 2:
            continue
        added = a[i1:i2]
        text = "".join(w for _k, w, _t in added)
        if len(text) >= 2 and all(t[:1] in ("n", "t") for _k, _w, t in added) \
                and not any(w in record for _k, w, _t in added):
            return Conflict("addition", text, "")
    return None


_ADMIN_SUFFIX = re.compile(r"(?:省|市|县|区|州|自治区|特别行政区)$")
# one-character names of provinces and cities ("沪" for 上海, "粤" for 广东): "沪上", "沪深两市"
_ZH_SHORT_NAMES = {p[0]: p[1:] for p in (
    "沪上海 申上海 京北京 津天津 渝重庆 粤广东 苏江苏 浙浙江 鲁山东 川四川 蜀四川 鄂湖北 "
    "湘湖南 闽福建 赣江西 皖安徽 冀河北 豫河南 晋山西 陕陕西 秦陕西 甘甘肃 陇甘肃 黔贵州 "
    "滇云南 桂广西 琼海南 辽辽宁 吉吉林 黑黑龙江 蒙内蒙古 宁宁夏 青青海 藏西藏 新新疆 港香港 "
    "澳澳门 台台湾 深深圳 穗广州 杭杭州 汉武汉 蓉成都 榕福州 厦厦门 ").split()}


def _zh_short_for(word: str, text: str) -> bool:
    """Whether `word` is written with one-character names of places `text` names in full ("沪上" for
    上海, "沪深" for 上海 and 深圳)."""
    names = [_ZH_SHORT_NAMES.get(ch) for ch in word if ch not in "上两地市"]
    return bool(names) and all(n is not None and n in text for n in names)


def zh_other_place(sentence: str, quote: str, record: str) -> Conflict | None:
    """A Chinese sentence that copies its quote (70% of its words or more, in order) but names a
    place or organisation the record never states, where the quote names another of that kind the
    sentence never does ("江苏2023年地区生产总值2.41万亿元" against "2023年江西地区生产总值2.41万亿元"):
    the figures are another place's. `record` is the record's text and title."""
    copied = _zh_copied(sentence, quote)
    if copied is None:
        return None
    a, b, _ops = copied

    def near(words: tuple[_Word, ...], at: int) -> set[str]:   # its neighbours of two characters or more
        return {k for k, w, _t in (*words[max(0, at - 2):at], *words[at + 1:at + 3]) if len(w) >= 2}

    for i, (_k, w, t) in enumerate(a):
        kind = t.rstrip(_APART)[:2]
        if kind not in ("ns", "nt") or len(w) < 2 or w in record or _ADMIN_SUFFIX.sub("", w) in record \
                or _zh_short_for(w, record):
            continue
        # in the sentence name's place: another of its kind, beside a word beside it
        other = next((v for j, (_k2, v, t2) in enumerate(b) if t2.rstrip(_APART)[:2] == kind and len(v) >= 2
                      and v not in sentence and _ADMIN_SUFFIX.sub("", v) not in sentence
                      and near(a, i) & near(b, j)), None)
        if other is not None and not _one_name(w, other, True):
            return Conflict("name", w, other)
    return None


_CAUSE = re.compile(r"\b(?:because(?: of)?|due to(?!\s+be\b)|owing to|as a result of|caused by|thanks to"
                    r"|driven by)\b", re.IGNORECASE)
# a quote that sets two facts side by side without saying one caused the other
_SIDE_BY_SIDE = re.compile(r"\b(?:while|whereas|meanwhile)\b", re.IGNORECASE)
_ANY_CAUSE = re.compile(r"\b(?:because|due|owing|result\w*|caus\w*|thanks|driv\w*|attribut\w*|led|lead|leads"
                        r"|amid|after|following|since|as|so|therefore|reason|over|for|when|helped|boost\w*"
                        r"|fuel\w*|prompt\w*|forc\w*|trigger\w*|response|spurred|on)\b", re.IGNORECASE)


# A Chinese figure's change, right before it: "同比上涨0.8%", "环比下降0.3个百分点", "增长了12.5%"
_ZH_UP = "上涨|上升|增长|增加|提高|提升|回升|攀升|上扬|走高|扩大"
_ZH_DOWN = "下降|下跌|减少|降低|回落|下滑|下行|走低|收窄|缩小"
_ZH_CHANGE = re.compile(
    rf"(?P<measure>同比|环比)?[ \t]*(?:(?P<up>{_ZH_UP})|(?P<down>{_ZH_DOWN}))了?[ \t]*(?:约|近|超过?)?[ \t]*"
    r"(?P<figure>\d+(?:\.\d+)?)[ \t]*(?:%|％|个百分点|倍|成)")


# ... and an English one: "rose 12%", "fell by 3.1 percentage points", "widened to 46.2%"
_EN_UP = r"rose|rises|risen|rising|increased|increases|grew|grown|grows|climbed|jumped|surged|gained|widened"
_EN_DOWN = (r"fell|falls|fallen|falling|declined|declines|dropped|drops|decreased|decreases|slid|shrank"
            r"|narrowed|slipped|sank")
_EN_CHANGE = re.compile(
    # ("up 9 percent", "down 3%": not "up to 9%", a bound)
    rf"\b(?:(?P<up>{_EN_UP}|up(?=[ \t]+\d))|(?P<down>{_EN_DOWN}|down(?=[ \t]+\d)))[ \t]+"
    r"(?:(?:to|from|by)[ \t]+)?"
    r"(?:about|nearly|almost|roughly|some|around)?[ \t]*"
    r"(?P<figure>\d+(?:\.\d+)?)[ \t]*(?:%|percent\b|per cent\b|percentage points?\b)", re.IGNORECASE)


@lru_cache(maxsize=64)   # a record is read once, not once per sentence it is checked against
def _changes(text: str, zh: bool = True) -> dict[str, list[tuple[str, str, str]]]:
    """Each figure a change names: its measure (同比 / 环比, or "" in English), its direction, and
    the words (read only: the result is shared)."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    for m in (_ZH_CHANGE if zh else _EN_CHANGE).finditer(text):
        measure = m.group("measure") if zh else ""
        out.setdefault(m.group("figure"), []).append(
            (measure or "", "up" if m.group("up") else "down", m.group(0).strip()))
    return out


_Read = TypeVar("_Read")


def _read_both(sentence: str, record: str, lang: str, read: Callable[[str, bool], dict[str, _Read]]
               ) -> tuple[dict[str, _Read], dict[str, _Read]] | None:
    """What `read` finds in a sentence with a figure and, when it finds anything, in the record
    (`figure_change_conflict`, `year_role_conflict`; `read` caches the record's reading)."""
    if not any(ch.isdigit() for ch in sentence):
        return None
    zh = lang == "zh"
    said = read(sentence, zh)
    return (said, read(record, zh)) if said else None


_SIGNED_CHANGE = re.compile(
    r"(?<![\w.])(?P<sign>[+＋\-−－])[ \t]*(?P<figure>\d+(?:\.\d+)?)[ \t]*(?:%|％|个百分点)")


def _signed_changes(text: str) -> dict[str, list[tuple[str, str, str]]]:
    """Each figure a sign gives a direction ("+8.1%", "−0.6%", as a table writes a change)."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    for m in _SIGNED_CHANGE.finditer(text):
        out.setdefault(m.group("figure"), []).append(("", "up" if m.group("sign") in "+＋" else "down",
                                                      m.group(0).strip()))
    return out


def figure_change_conflict(sentence: str, record: str, lang: str) -> Conflict | None:
    """A change the record gives the sentence's figure only otherwise: "同比上涨0.8%" where every
    "0.8%" of the record is "同比下降0.8%" (or "环比上涨0.8%"), "fell 3%" where it "rose 3%", a
    table's "+8.1%" where it "同比下降8.1%". Statistics releases put 同比 and 环比, up and down,
    side by side, so the words alone all match."""
    both = _read_both(sentence, record, lang, _changes)
    signed = _signed_changes(sentence) if any(c in sentence for c in "+＋-−－") else {}
    if both is None and not signed:
        return None
    said, stated = both if both is not None else ({}, _changes(record, lang == "zh"))
    if signed:   # (a copy: `_changes` shares what it reads)
        said = {figure: list(claims) for figure, claims in said.items()}
        for figure, claims in signed.items():
            mine = said.setdefault(figure, [])
            mine.extend(c for c in claims if all(c[1] != x[1] for x in mine))
    for figure, claims in said.items():
        where = stated.get(figure)
        if not where:
            continue                       # the record gives that figure no change: nothing to say
        said_at = len(re.findall(rf"(?<![\d.]){re.escape(figure)}[ \t]*(?:%|％|percent|per cent|个百分点"
                                 r"|percentage point|倍|成)", record, re.IGNORECASE))
        if said_at > len(where):
            continue                       # the record states it elsewhere too ("a 20% decrease")
        for measure, way, words in claims:
            # (a change with no measure fits either; in English "to" and "by" are not told apart:
            # "rose to 3.7 percent" and "increased 3.7 percent" both report a rate)
            if any(way == w and (not measure or not m or measure == m) for m, w, _ in where):
                continue
            return Conflict("opposite", words, where[0][2])
    return None


# a thing that changes, the way it changes, and the year: "sales doubled in 2024", "German heat pump
# sales nearly halve in 2024", "exports fell sharply in 2023" (direction words with no figure too)
_EN_UP_WORDS = _EN_UP + r"|doubled|doubles|tripled|triples|quadrupled|soared|soars|rebounded|expanded|expands"
_EN_DOWN_WORDS = _EN_DOWN + r"|halved|halve|halves|plunged|plunges|slumped|slumps|tumbled|tumbles|contracted"
_EN_MOVE = re.compile(
    r"\b(?P<noun>[a-z][a-z-]{2,30})[ \t]+(?P<neg>(?:(?:have|has|had|were|was|nearly|almost|sharply|steadily"
    r"|roughly|also|then|more[ \t]+than|not|never|n't|did|didn't)[ \t]+){0,3})"
    rf"(?:(?P<up>{_EN_UP_WORDS})|(?P<down>{_EN_DOWN_WORDS}))\b"
    r"(?=(?P<tail>[^.;!?\n]{0,80}))", re.IGNORECASE)
_EN_YEAR_AFTER = re.compile(r"\b(?:in|during|for|through|over)[ \t]+(?:fiscal[ \t]+|calendar[ \t]+|FY[ \t]*)?"
                            r"((?:19|20)\d\d)\b(?![ \t]*(?:-|–|to)[ \t]*(?:19|20)?\d\d\b)")
_EN_NOT_SUBJECT = frozenset("""it they this that these those which who what there here he she we you one
    also and but or not has have had was were been be is are will would could may might can
    than then when while as so to of in on at by for with from about""".split())


@lru_cache(maxsize=64)   # a record is read once, not once per sentence it is checked against
def _en_moves(text: str) -> dict[tuple[str, str], set[str]]:
    """Each (thing, year) the text says went up or down, and which ways ("up", "down"): "sales
    doubled in 2024" gives ("sale", "2024") -> {"up"}. Negated moves ("did not fall") say none."""
    out: dict[tuple[str, str], set[str]] = {}
    for m in _EN_MOVE.finditer(text):
        noun = m.group("noun").lower()
        if noun in _EN_NOT_SUBJECT or re.search(r"\bnot\b|\bnever\b|n't", m.group("neg"), re.IGNORECASE):
            continue
        tail = m.group("tail")
        year = _EN_YEAR_AFTER.search(tail)
        if year is not None and re.search(r"\bfrom\b", tail[:year.start()]):
            # "dropped from 9 in 2023 to 6 in 2024": the move is the later year's
            to = re.search(r"\bto\b", tail[year.end():])
            year = _EN_YEAR_AFTER.search(tail, year.end() + to.end()) if to else None
        if year is None:
            continue
        out.setdefault((_stem(noun), year.group(1)), set()).add("up" if m.group("up") else "down")
    return out


def direction_conflict(sentence: str, record: str, lang: str) -> Conflict | None:
    """A thing the sentence says went one way in a year, where the record says only that it went
    the other ("Germany's sales doubled in 2024" against "sales nearly halve in 2024", "sales fell
    48% in 2024"), though the quote chosen may hold neither: the figure and the direction words
    often sit in another of the record's sentences than the one that matches the most words.
    English; a record that moves that thing both ways in that year says nothing."""
    if lang == "zh" or not any(ch.isdigit() for ch in sentence):
        return None
    said = _en_moves(sentence)
    if not said:
        return None
    stated = _en_moves(record)
    for key, ways in said.items():
        theirs = stated.get(key)
        if theirs and len(ways) == 1 and not ways & theirs:
            way = next(iter(ways))
            return Conflict("direction", f"{'rose' if way == 'up' else 'fell'} in {key[1]}",
                            f"{'fell' if way == 'up' else 'rose'} in {key[1]}")
    return None


# events a year is given to: "成立于2015年", "2019年在深交所上市", "founded in 2015", "listed … in 2019"
_ZH_EVENTS = ("成立|创立|创办|创建|建立|注册|上市|挂牌|发射|发布|推出|开业|开通|通车|投产|竣工|完工|开工"
              "|去世|逝世|出生|诞生|加入|退出|当选|就任|卸任|收购|并购|获批|获得|夺得|建成|落成|开馆|开园|首飞"
              "|问世|破产|更名|进入")
_ZH_EVENT_YEAR = re.compile(
    rf"(?P<e1>{_ZH_EVENTS})(?:于|在)(?P<y1>(?:1[89]|20)\d\d)年"
    rf"|(?P<y2>(?:1[89]|20)\d\d)年(?:[^，。；;,\d年]{{0,14}}?)(?P<e2>{_ZH_EVENTS})")
_EN_EVENTS = (r"founded|established|incorporated|listed|launched|opened|released|born|died|joined|left"
              r"|acquired|merged|elected|appointed|completed|built|introduced|published|founding|debuted")
_MONTHS = ("January|February|March|April|May|June|July|August|September|October|November|December"
           "|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec")
_EN_EVENT_YEAR = re.compile(
    rf"\b(?P<e1>{_EN_EVENTS})\b(?:(?!(?:1[89]|20)\d\d)[^.;,]){{0,40}}?"
    rf"\bin (?:(?:early|mid|late|{_MONTHS})[ -])?(?P<y1>(?:1[89]|20)\d\d)\b", re.IGNORECASE)


@lru_cache(maxsize=64)   # a record is read once, not once per sentence it is checked against
def _event_years(text: str, zh: bool) -> dict[str, set[str]]:
    """Each event the text gives a year ("成立" -> {"2015"}, "founded" -> {"2015"})."""
    out: dict[str, set[str]] = {}
    for m in (_ZH_EVENT_YEAR if zh else _EN_EVENT_YEAR).finditer(text):
        event = (m.group("e1") or m.group("e2")) if zh else _stem(m.group("e1").lower())
        out.setdefault(event, set()).add(m.group("y1") or (m.group("y2") if zh else ""))
    return out


def year_role_conflict(sentence: str, record: str, lang: str) -> Conflict | None:
    """Two events whose years the sentence swaps ("公司成立于2019年，2015年…上市" against "公司成立于
    2015年，2019年…上市"; "founded in 2019 and listed in 2015" against the reverse). A record that
    gives an event the sentence's year too says nothing."""
    both = _read_both(sentence, record, lang, _event_years)
    if both is None:
        return None
    said, stated = both
    for event, years in said.items():
        theirs = stated.get(event)
        if not theirs or years & theirs:
            continue
        for year in years:
            # swapped: the other event takes the sentence's year in the record, and this one's year
            # in the sentence (one year moved is left to the score: "launched the Model S in 2012
            # and released the Model 3 in 2017" is no conflict for "released the Model S in 2012")
            other = next((e for e, ys in stated.items() if e != event and year in ys
                          and said.get(e, set()) & theirs), None)
            if other is not None:
                return Conflict("figure", year, min(theirs))
    return None


# a Chinese figure with its unit, and the words that may stand between a clause and its figure
_ZH_CLAUSE_FIGURE = re.compile(
    r"(?P<num>\d+(?:\.\d+)?)[ \t]*(?P<unit>%|％|个百分点|万亿元|亿元|万元|万亿|亿|倍)")
_ZH_FIGURE_LEAD = re.compile(r"(?:了|约|近|达|达到|为|至|到|超过|逾|[ \t])*$")
_ZH_CLAUSE_BREAK = re.compile(r"[，。；：,;:！？!?、（）()]")
_ZH_TIME_WORD = re.compile(
    r"\d{4}年|全年|上半年|下半年|前三季度|[一二三四第]季度|\d{1,2}月份?|年初|年末|年底")
_ZH_RECORD_LEAD = re.compile(r"(?:了|约|近|达|达到|为|至|到|超过|逾|[ \t]){0,4}")
_MIN_CLAUSE = 6        # characters of the words before a figure that must recur in the record
_MAX_CLAUSE = 60       # ... and at most these are read (a clause, not a run-on page)
_MAX_CLAUSE_FIGURES = 16


def zh_clause_figure(sentence: str, record: str) -> Conflict | None:
    """A Chinese figure whose clause the record writes word for word with another figure, and never
    with this one ("2023年江西第二产业增加值增长5.8%" where the record has "第二产业增加值增长5.0%，第三
    产业增加值增长5.8%"; "全年居民消费价格比上年上涨0.5%" against "…上涨0.3%"): the longest end of the
    words before the figure in its clause (six characters or more) that the record writes, and what
    follows it there. A figure near the sentence's ("5.79%" for "5.8%") agrees, and one within its
    hedge ("超过8%" or "约8.4%" for 8.5%)."""
    for m in itertools.islice(_ZH_CLAUSE_FIGURE.finditer(sentence), _MAX_CLAUSE_FIGURES):
        lead = _ZH_FIGURE_LEAD.search(sentence, max(0, m.start() - 12), m.start())
        start = m.start() - (len(lead.group(0)) if lead else 0)
        # "超过8%" and "约8.4%" for the record's 8.5%: within the sentence's hedge
        how = hedge_of(lead.group(0) if lead else "", sentence[m.end():m.end() + 8])
        reach = max(0, start - _MAX_CLAUSE)
        begin = max((b.end() for b in _ZH_CLAUSE_BREAK.finditer(sentence, reach, start)), default=reach)
        words = sentence[begin:start]
        if len(words) < _MIN_CLAUSE:
            continue
        # the longest end of them the record writes (each longer end holds the shorter: one scan
        # when the shortest is not there, as for most figures)
        n = _MIN_CLAUSE
        if words[-n:] not in record:
            continue
        while n < len(words) and words[-(n + 1):] in record:
            n += 1
        found: list[str] = []
        dropped = _ZH_TIME_WORD.findall(words[:-n])
        for x in re.finditer(re.escape(words[-n:]), record):
            if x.start() > 0 and not _ZH_CLAUSE_BREAK.match(record, x.start() - 1):
                continue     # "…扣除非经常性损益的净利润同比增长": the words end a longer measure
            reach = max(0, x.start() - 300)    # its sentence, so far
            opens = max(reach, *(record.rfind(ch, reach, x.start()) + 1 for ch in "。！？!?"))
            here = record[opens:x.start()]
            if any(t not in here for t in dropped):
                continue     # "全年…增长" against "12月份，…增长": another period's figure
            theirs = _ZH_RECORD_LEAD.match(record, x.end())
            fig = _ZH_CLAUSE_FIGURE.match(record, theirs.end() if theirs else x.end())
            if fig is not None and fig.group("unit") == m.group("unit"):
                found.append(fig.group("num"))
        num = m.group("num")
        if found and not any(float(f) == float(num) or figure_near(how, num, f)
                             or (how == "round" and figure_near("round", f, num)) for f in found):
            return Conflict("figure", num + m.group("unit"), found[0] + m.group("unit"))
    return None


def record_stems(record: str) -> frozenset[str]:
    """A record's words, stemmed, as `cause_addition` and `clause_addition` look words up in
    them (the verifier reads them once per record and passes them in)."""
    words = set(re.findall(r"[a-z]+|[0-9]+(?:[.,][0-9]+)*", record.lower()))
    return frozenset(_stem(w.replace(",", "")) for w in words)


class RecordStems:
    """A record's `record_stems`, read at the first lookup: most pairs that `cause_addition` and
    `clause_addition` check never look a word up (on dev, 10 records of the 392 they are given)."""

    __slots__ = ("_record", "_stems")

    def __init__(self, record: str) -> None:
        self._record = record
        self._stems: frozenset[str] | None = None

    def __contains__(self, stem: object) -> bool:
        if self._stems is None:
            self._stems = record_stems(self._record)
        return stem in self._stems


def _absent_from(record: str | frozenset[str] | RecordStems, word: str) -> bool:
    stems = record_stems(record) if isinstance(record, str) else record
    return _stem(word.lower().replace(",", "")) not in stems


def cause_addition(sentence: str, quote: str, record: str | frozenset[str] | RecordStems) -> Conflict | None:
    """An English sentence that copies its quote and adds a cause the quote does not give:
    "Net income fell 6% because of weaker demand in Europe" against "Net income fell 6% as the
    company increased spending" (a cause the record never gives), or "Unemployment rose because
    consumer spending fell" against "Unemployment rose, while consumer spending fell" (a link the
    quote does not make). The part before "because" must align with the quote (70% of its words);
    then the cause is an addition when the quote has no word of cause at all, or when most of the
    cause's words are nowhere in the record. A cause that opens the sentence runs to its first
    comma ("Thanks to X, Y": Y is the claim). A record that states both facts in its own sentences
    may give the link in words no list holds ("drove", "made this possible", "reflecting"), so
    the cause's words found there are no addition."""
    m = _CAUSE.search(sentence)
    if m is None:
        return None
    theirs = _CAUSE.search(quote)
    claim, cause = sentence[:m.start()], sentence[m.end():]
    if not claim.strip(" \t\"'“‘*_") and (comma := sentence.find(", ", m.end())) > 0:
        claim, cause = sentence[comma + 2:], sentence[m.end():comma]
    a = _en_words(claim)
    b = _en_words(quote)
    if len(a) < 3 or not b:
        return None
    _ops, share = _aligned([k for k, _w, _t in a], [k for k, _w, _t in b])
    if share < 0.7 and (theirs is None or share < 0.5):
        return None
    words = [w for _k, w, _t in _en_words(cause) if w.lower() not in EN_STOPWORDS]
    if not words:
        return None
    if theirs is not None:
        # the quote gives its own cause: another one in its place ("driven by the new media deal"
        # against "driven by higher ticket sales, sponsorship deals and merchandise") when most words
        # of the sentence's cause are none of the quote's (half its words aligned will do)
        quoted = {k for k, _w, _t in _en_words(quote)}
        keys = [k for k, w, _t in _en_words(cause) if w.lower() not in EN_STOPWORDS]
        if 2 * sum(k not in quoted for k in keys) <= len(keys):
            return None
        return Conflict("addition", (m.group(0) + cause).strip().rstrip(".!?"), "")
    absent = [w for w in words if _absent_from(record, w)]
    side_by_side = _SIDE_BY_SIDE.search(quote) is not None and _ANY_CAUSE.search(quote) is None
    if len(absent) * 2 < len(words) and not side_by_side:
        return None
    return Conflict("addition", (m.group(0) + cause).strip().rstrip(".!?"), "")


# a tail that names a source: "…, police say", "…, as reported by Reuters", "…, data from the
# city show", "…, the researchers wrote in The Lancet"
_REPORTING = re.compile(
    r"\b(?:say|says|said|saying|confirm\w*|told|tell|tells|show|shows|showed|shown|wr[io]te|writes|written"
    r"|according|report\w*|announc\w*|state[sd]?|stating|note[sd]?|noting|add(?:ed|s)|explain\w*"
    r"|estimat\w*|cit(?:ed|ing|es)|publish\w*|per|sources?|data|figures|statistics|survey)\b",
    re.IGNORECASE)


def clause_addition(sentence: str, quote: str, record: str | frozenset[str] | RecordStems) -> Conflict | None:
    """An English sentence that copies its quote and adds what the record never states: a
    trailing clause after a comma ("…killing at least 23 people, most of them in the market
    district", "…for 2023, double the previous year's figure"), two-thirds of whose words (two or
    more) are nowhere in the record; or a name between aligned words ("approved in the United
    States and Europe" against "…in the United States for adults")."""
    b = _en_words(quote)
    kb = [k for k, _w, _t in b]

    def absent(word: str) -> bool:
        return _absent_from(record, word)

    cut = sentence.rfind(", ")
    if cut > 0:
        head = _en_words(sentence[:cut])
        if len(head) >= 4 and _aligned([k for k, _w, _t in head], kb)[1] >= 0.8:
            tail = sentence[cut + 2:].strip().rstrip(".!?").strip()
            words = [w for _k, w, _t in _en_words(tail) if w.lower() not in EN_STOPWORDS]
            if len(words) >= 2 and 3 * sum(absent(w) for w in words) >= 2 * len(words) \
                    and not _REPORTING.search(tail):  # "…, says the launch report": a source
                return Conflict("addition", tail, "")
    a = _sentence_words(sentence, False)
    ka = [k for k, _w, _t in a]
    ops, share = _aligned(ka, kb)
    if share < 0.7:
        return None
    for k, (tag, i1, i2, _j1, _j2) in enumerate(ops):
        if tag != "delete" or i2 - i1 > 3 or not 0 < k < len(ops) - 1:
            continue
        if min(ops[k - 1][2] - ops[k - 1][1], ops[k + 1][2] - ops[k + 1][1]) < 2:
            continue
        # a name joined to the aligned one ("…States and Europe"), not a title or an acronym
        # of it ("President Biden", "Bank (ECB)")
        joined = any(w.lower() in ("and", "or") for _k, w, _t in a[i1:i2])
        names = [w for _k, w, _t in a[i1:i2] if w[:1].isupper() and w.lower() not in _NOT_NAMES]
        if joined and names and all(absent(w) and len(w) > 1 for w in names):
            return Conflict("addition", _said(a, i1, i2), "")
    return None


_EN_CONNECTIVES = frozenset(_stem(w) for w in (
    "however", "but", "and", "also", "furthermore", "moreover", "meanwhile", "additionally", "yet",
    "still", "then", "thus", "therefore", "so", "instead", "similarly", "likewise", "indeed"))


def _after_connectives(words: tuple[_Word, ...], start: int, end: int, zh: bool) -> int:
    """The first position in words[start:end] past leading connectives ("然而", "但", "However")."""
    i = start
    while i < end and (words[i][2][:1] in ("c", "d") if zh else words[i][0] in _EN_CONNECTIVES):
        i += 1
    return i


_ZH_MODALS = frozenset({"可能", "会", "能", "能够", "可以", "应该", "应", "应当", "需要", "要", "是", "必须",
                        "得"})
_EN_MODALS = frozenset(_stem(w) for w in (
    "be", "is", "are", "was", "were", "been", "can", "could", "will", "would", "shall", "should", "may",
    "might", "must", "have", "has", "had", "do", "does", "did"))


_RECUR_WINDOW = 40


def _recurs(keys: list[str], at: int) -> bool:
    """Whether the word a negation before keys[at] negates comes again later: the first word that
    is not a modal or auxiliary ("不可能包含" negates 包含, "not be effective" effective)."""
    i = at
    while i + 1 < len(keys) and (keys[i] in _ZH_MODALS or keys[i] in _EN_MODALS or keys[i] in _ARTICLES):
        i += 1
    later = keys[i + 1:i + 1 + _RECUR_WINDOW]  # a contrast is near ("not 100% X, but X"); bounded,
    if keys[i] not in later:                  # so a sentence of many negations stays linear
        return False
    again = later.index(keys[i])
    return any(k in _CONTRASTS for k in later[:again])


_ARTICLES = frozenset({"the", "a", "an"})   # "not the cause …, but …": the negated word is "cause"
_AFFIRMING = frozenset({"都", "也", "全", "全都", "均", "就", "总是", "一直", "经常", "通常", "确实", "已经",
                        "还", "仍", "仍然"}) | frozenset(_stem(w) for w in (
    "also", "still", "always", "indeed", "often", "usually", "generally", "commonly", "typically",
    "frequently", "already", "actually", "certainly", "definitely", "too"))
_POSITIVE = {_stem(neg): frozenset(_stem(w) for w in pos.split()) for neg, pos in (
    ("without", "with"), ("never", "ever always"), ("cannot", "can"), ("neither", "either both"),
    ("nor", "or and"), ("none", "all some"), ("no", "a an the some"))}


# words that open with a negating character and deny nothing: "非常" (very), "未来" (future)
_ZH_NOT_NEGATED = frozenset("非常 未来 不过 不断 无论 不仅 不少 无数 无限 不久 无比 不但 非但 无疑".split())
_ZH_NEGATED = {"并非": "是", "并不是": "是", "无法": "能", "不可以": "可以"}


def _zh_negated_form(word: str, other: str) -> bool:
    """Whether the Chinese `word` is `other` negated: a negating character before it ("不是",
    "没有", "未能", "不会"), or a negation that stands for it ("并非" for "是")."""
    if word in ZH_NEGATIONS and _ZH_NEGATED.get(word) == other:
        return True
    return len(word) == len(other) + 1 and word[0] in "不没未无非" and word[1:] == other \
        and word not in _ZH_NOT_NEGATED


def _affirms(word: str, negation: str, negations: frozenset[str]) -> bool:
    """Whether `word` stands where `negation` (one of `negations`) would deny: an affirming
    adverb ("also", "always", "都") or the negation's positive form ("with" for "without")."""
    return negation in negations and (word in _AFFIRMING or word in _POSITIVE.get(negation, ()))


_CONTRASTS = frozenset({"但", "但是", "而", "而是", "却", "可是", "不过", "然而", "只是"}) | frozenset(
    _stem(w) for w in ("but", "however", "yet", "though", "although", "still", "rather"))


def _minor(word: _Word, zh: bool) -> bool:
    """A word that says little by itself: a preposition, particle, conjunction or adverb (its
    tag in Chinese), a stop word in English."""
    return word[2][:1] in ("p", "u", "c", "d") if zh else word[1].lower() in EN_STOPWORDS


def _opposite_chars(said: str, quoted: str, opposites: dict[str, frozenset[str]],
                    quote: str) -> tuple[str, str] | None:
    """Chinese words that differ only where one says the opposite of the other ("太少" and
    "太多", "偏高" and "偏低"): the differing characters, when they are opposites and the
    sentence's is nowhere in the quote."""
    n = 0
    while n < min(len(said), len(quoted)) and said[n] == quoted[n]:
        n += 1
    m = 0
    while m < min(len(said), len(quoted)) - n and said[-1 - m] == quoted[-1 - m]:
        m += 1
    if not (n or m) or n == len(said) - m or n == len(quoted) - m:
        return None
    # the differing characters, or with a shared one beside them ("进口国" and "出口国" differ in
    # 进 and 出, which say nothing alone; 进口 and 出口 are opposites)
    for a in range(min(n, 1) + 1):
        for b in range(min(m, 1) + 1):
            x, y = said[n - a:len(said) - m + b], quoted[n - a:len(quoted) - m + b]
            if x not in quote and y in opposites.get(x, ()):
                return said, quoted
    return None


# states a verb of motion only links to ("fell ill", "grew silent"): no rise or fall
_STATES = frozenset("ill sick silent quiet asleep dark cold warm tired weary old angry pale calm still "
                    "apart loose short due vacant dormant".split())
_WEAK_MODALS = frozenset({"may", "might", "could", "possibly", "potentially", "perhaps"})
# what says a thing can be so, no more than "may" does ("can lower" for "may lower")
_ABLE = frozenset({"can", "able", "allowed", "permitted", "unable", "cannot"})
# English words that take back part of what the words around them say, so that a quote holding one
# where its sentence has none says less, or the opposite ("Baroque works were seldom performed"
# for "… were performed", "sometimes late" for "late", "probably reduces" for "reduces",
# "non-cancerous" for "cancerous"): adverbs of polarity, of occasion and part, and of belief, and
# prefixes written apart. Read where the quote adds such a word alone (with small words at most)
# between aligned words, and the sentence has none of them, nor "may" (`_qualified`; a differential
# sweep of near-copies found each one dropped and cited); a prefix also one for one in place of a
# word ("non-profit" for "for-profit"). Not "barely" ("barely passed" passed), nor "often",
# "usually", "largely" ("largely upheld the fine" overstates a little); not a word the quote adds
# with the word it qualifies ("the supposedly unsinkable Titanic sank" backs "the Titanic sank"),
# nor adjectives ("fake", "alleged", "proposed", "failed", "prospective"…): a review of faithful
# sentences found "Napoleon's failed invasion cost 400,000 lives", "a prospective study found",
# "potential energy" refused, for fewer wrong sentences caught.
EN_PREFIXES = frozenset("non anti pseudo".split())
# ... and in Chinese ("该药物很少用于儿童" for "该药物用于儿童", "涉嫌挪用公款" for "挪用公款",
# "有时会" for "会"); 可能, 或许, 也许 are the modality rule's, 据称, 据传, 传闻 the frames' (`framed`,
# which reads a rumour confirmed); not 所谓, 拟建, 疑似, 假, which name the thing more often than
# they deny it ("这家所谓的“网红”餐厅每天接待顾客上千人")
ZH_QUALIFIERS = frozenset("很少 极少 鲜少 鲜有 少有 并非 未必 不一定 偶尔 偶有 有时 有时候 部分 一部分 "
                          "涉嫌".split())
EN_QUALIFIERS = EN_PREFIXES | frozenset(
    "seldom rarely hardly scarcely sometimes occasionally partly partially "
    "probably presumably apparently seemingly supposedly reportedly allegedly purportedly arguably".split())


# what says a thing is planned, expected or proposed, not done: English words that take "to"
# ("plans to", "is expected to"), and words that say it alone ("will", "proposed")
_PROSPECT_TO = frozenset("plan plans planned planning expect expects expected intend intends intended "
                         "aim aims aimed seek seeks hope hopes hoped pledge pledges pledged promise "
                         "promises promised schedule scheduled slated set poised likely going "
                         "prepare prepares preparing".split())
_PROSPECT = frozenset("will would shall proposed proposes proposing propose considering considers "
                      "forecast forecasts projected".split())
_ZH_PROSPECT = frozenset("计划 拟 拟于 预计 预期 有望 可望 择机 打算 力争 争取 将要 即将 或将 规划 筹划 "
                         "目标 承诺 设想 准备 将会 预定 预测 展望 希望 定于".split())
_ZH_WEAK = frozenset("可能 或许 也许 大概 估计 或 恐".split())
# ... those that only hedge, whatever follows ("或" joins, "估计" counts), and what says a thing can be so
_ZH_WEAK_ONLY = frozenset("可能 或许 也许 有望 可望".split())
_ZH_ABLE = frozenset("可 可以 能 能够 有助于 有望".split())
_ZH_NOT = frozenset("不 没 没有 无 并不 绝不 决不".split())
# what puts a sentence's claim ahead of the quote's time, or names a plan as one ("The offer of
# $41.50 is a 28% premium", "定于9月28日首销", "opens next year"): such a sentence states no plan
# as done
_AHEAD = frozenset("offer offers proposal proposals bid bids target targets goal goals projection "
                   "expected expects expect anticipated anticipates planned slated "
                   "reckon reckons reckoned 测算 据测算 估算 预估 "
                   "projections outlook upcoming next future tomorrow soon scheduled pending "
                   "定于 将于 将在 即将 明年 后年 下周 下月 未来 今后 届时 拟定 预定 计划".split())


_ZH_YEAR_WORD = re.compile(r"(?:\d{4}|[零〇一二三四五六七八九]{4}|今|明|后)年")


def _prospect_change(a: tuple[_Word, ...], b: tuple[_Word, ...], ops: Sequence[_Op],
                     zh: bool) -> Conflict | None:
    """The quote only plans, expects or proposes what the sentence says is done or so: "has
    built" for "plans to build", "已于2026年底投产" for "预计将于2026年底开始投产". The plan
    word stands in a change of the quote that an aligned run follows, within its last four words
    ("计划于2026年" before "建成"), where the sentence writes something else (an insert only in
    Chinese, before a verb: "the tournament will be held in" for "the tournament in" plans
    nothing the sentence says was done), and the sentence has no such word, nor "may" or "可能"."""
    strong = _strong_modal(a, b, ops, zh)
    if strong is not None:
        return strong
    if any(_prospect(a, i, zh) or _weak_modal(a, i) or a[i][1] in _ZH_WEAK
           or (a[i][1] if zh else a[i][1].lower()) in _AHEAD for i in range(len(a))):
        return None
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag not in ("replace", "insert") or i2 - i1 > 2 * _MAX_CHANGE or j2 - j1 > 2 * _MAX_CHANGE \
                or k + 1 >= len(ops) or ops[k + 1][0] != "equal":
            continue
        if tag == "replace":
            plan = any(_prospect(b, j, zh) for j in range(max(j1, j2 - 4), j2))
        elif zh:      # "计划于2026年" inserted before the verb both texts share, or "计划" or "将" before
            # the time both share ("计划于2024年上半年推出" for "于2024年上半年推出")
            # (or before the year both share: "预计2023年全球经济增速为2.1%" for "2023年…为2.1%")
            year = _ZH_YEAR_WORD.match("".join(w[1] for w in b[j2:j2 + 2])) is not None
            plan = j2 < len(b) and (b[j2][2][:1] == "v" or b[j2][1] in ("于", "在") or year) and any(
                _prospect(b, j, zh) for j in range(max(j1, j2 - 4), j2))
        else:         # "are expected to" or "will" right before the verb both share ("resume"), where
            # the sentence says it was done: a past form, or has / had ("enter duty-free" against "will
            # enter duty-free" states a rule, in the present, as the quote's schedule does)
            plan = (_prospect(b, j2 - 1, zh) or (
                b[j2 - 1][1] == "to" and j2 - 2 >= j1 and _prospect(b, j2 - 2, zh))) \
                and _en_said_done(a, i1, i2)
        if plan:
            return Conflict("plan", _said(a, i1, i2), _said(b, j1, j2))
    return None


# words that say a thing must or certainly will be so, and what a quote says them with
_ZH_CERTAIN = frozenset("一定 必须 必定 必然 肯定 务必 注定 势必 必将 绝对 毫无疑问".split())
_ZH_CERTAIN_QUOTED = frozenset("须 需 需要 应 应当 应该 要求 强制 确定 确保 一定 肯定 注定 势必 绝对 "
                               "毫无疑问 不得不 只能 不可避免 务必 得 都要 一律 责令 勒令 命令 必然 "
                               "无疑".split())
_EN_CERTAIN = frozenset("must certainly definitely inevitably undoubtedly surely necessarily".split())
_EN_CERTAIN_QUOTED = frozenset("must certainly definitely inevitably undoubtedly surely necessarily "
                               "required require requires requirement mandatory obliged obligated "
                               "compulsory have has had need needs needed shall bound ordered order "
                               "orders forced compelled mandated".split())
# "without doubt", "no doubt": certain in two words ("There is doubt" is not)
_EN_NO_DOUBT = re.compile(r"\b(?:without|no)\s+(?:a\s+)?doubt\b", re.IGNORECASE)


def _strong_modal(a: tuple[_Word, ...], b: tuple[_Word, ...], ops: Sequence[_Op],
                  zh: bool) -> Conflict | None:
    """The sentence says it must or certainly will be so ("一定会被突破", "must lower") where
    its quote says nothing of the kind ("从未如此接近被突破", "will guide banks to lower"): the
    word is in a change of the sentence that an aligned run follows, and no word of the quote
    says it must or will surely be so."""
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag not in ("replace", "delete") or i2 - i1 > _MAX_CHANGE or k + 1 >= len(ops) \
                or ops[k + 1][0] != "equal":
            continue
        said = next((a[i][1] for i in range(i1, i2)
                     if (a[i][1] in _ZH_CERTAIN if zh else a[i][1].lower() in _EN_CERTAIN)), None)
        if said is None:
            continue
        if zh and (any(w in _ZH_CERTAIN_QUOTED or w[:1] == "必" for _k, w, _t in b)
                   or any(b[i][1] == "要" and b[i - 1][1] in ("都", "均", "一律") for i in range(1, len(b)))):
            return None  # "都要参加" says it must be so
        if not zh and (any(w.lower() in _EN_CERTAIN_QUOTED for _k, w, _t in b)
                       or _EN_NO_DOUBT.search(" ".join(w for _k, w, _t in b))):
            return None
        return Conflict("certainty", said, _said(b, j1, j2))
    return None


# verbs that make two roles one ("A met B" is "B met A"), and what turns the roles round when it
# follows the verb ("A was bought by B" is "B bought A", "A met with B")
_SYMMETRIC = frozenset(_stem(w) for w in (
    "met", "meet", "meets", "married", "marry", "merged", "merge", "merger", "played", "play", "tied",
    "drew", "draw", "faced", "face", "partnered", "partner", "joined", "versus", "vs", "between",
    "fought", "fight", "battled", "battle", "debated", "debate", "competed", "compete", "clashed",
    "negotiated", "talked", "collaborated", "teamed")) \
    | frozenset("会见 会谈 会晤 合并 结婚 联姻 战平 打平 握手 合作 对阵 交手 通话 携手 联手 联合 共同 并肩 "
                "对决 交锋 较量 辩论 竞争 谈判 角逐 争夺".split())
_TURNING = frozenset(_stem(w) for w in ("by", "with", "and", "or", "from", "to")) \
    | frozenset("被 由 受 遭 让 给 与 和 同 跟 及 以及".split())
# verbs that say the same of two roles, read as one where the roles are compared ("击败" and "战胜")
_SAME_VERB = {k: group[0] for group in (
    [_stem(w) for w in ("beat", "defeated", "defeat", "beats", "overcame", "overcome")],
    [_stem(w) for w in ("acquire", "acquired", "buy", "bought", "buys", "purchase", "purchased")],
    [_stem(w) for w in ("sued", "sue", "sues")],
    "击败 战胜 打败 击溃 力克 逆转战胜".split(), "收购 并购 买下 购入".split()) for k in group}


# words that end a company's name after the word that names it ("星图软件", "远航科技股份")
_ZH_COMPANY_HEADS = frozenset("科技 软件 集团 公司 股份 控股 银行 医药 生物 电池 航运 船务 汽车 动力 "
                              "能源 电子 通信 网络 证券 保险 地产 电气 化工 钢铁 制药 传媒 资本 基金 "
                              "实业 物流 航空".split())


_MAX_ROLES = 12
# verbs that say the same with the roles the other way round ("A beat B" is "B lost to A")
_CONVERSE = (
    (frozenset(_stem(w) for w in ("beat", "beats", "defeated", "defeat", "won", "outsold", "ahead",
                                  "exceeded", "surpassed")),
     frozenset(_stem(w) for w in ("lost", "loses", "lose", "trailed", "behind"))),
    (frozenset("战胜 击败 打败 赢 胜 力克 击溃 超过 超越 领先 高于 多于 大于".split()),
     frozenset("负于 输给 不敌 败给 落后 落后于 低于 少于 小于".split())),
)


def _converse(a: tuple[_Word, ...], b: tuple[_Word, ...], span_a: tuple[int, int],
              span_b: tuple[int, int]) -> bool:
    """Whether one text says with one verb what the other says with its converse, each verb
    between the two roles (`span_*`, the roles' positions): "A以3比1战胜B" and "B以1比3负于A";
    not a "低于" elsewhere in the sentence."""
    def words(t: tuple[_Word, ...], span: tuple[int, int]) -> set[str]:
        lo, hi = sorted(span)
        return {x for k, w, _t in t[lo:hi] for x in (k, w)}

    ka, kb = words(a, span_a), words(b, span_b)
    return any((one & ka and other & kb) or (other & ka and one & kb) for one, other in _CONVERSE)

_MAX_SHARED = 64  # shared words a swap is looked for around


def _is_year_word(w: str) -> bool:
    return len(w) == 4 and w.isdigit() and 1800 <= int(w) <= 2100


def _roles_swapped(a: tuple[_Word, ...], b: tuple[_Word, ...], zh: bool,
                   title_case: bool) -> Conflict | None:
    """Two names or figures on either side of a word both texts share, the other way round in the
    quote: "Apple overtook Samsung" for "Samsung overtook Apple", "星图软件已完成对远航科技的收购"
    for "远航科技…已完成对星图软件的收购", "由2年调整为5年" for "从5年调整为2年", "哥伦布…比郑和…早"
    for "郑和…比哥伦布…早". The shared word (a verb may stand for its like: "击败" for "战胜", "buy"
    for "acquire") stands once in each text, the names once in the sentence and in the quote where
    they stand nearest it; neither text makes the roles one ("met", "merged", 会见) between them
    or turns them round after it ("by", "with", 被, 由, 与: "A was bought by B", "A met with B")."""
    if title_case:
        return None

    def canon(k: str) -> str:
        return _SAME_VERB.get(k, k)

    once_a, once_b = Counter(canon(k) for k, _w, _t in a), Counter(canon(k) for k, _w, _t in b)
    pos_a = {canon(k): i for i, (k, _w, _t) in enumerate(a) if once_a[canon(k)] == 1}
    at_b: dict[str, list[int]] = {}
    for j, (k, _w, _t) in enumerate(b):
        at_b.setdefault(canon(k), []).append(j)
    shared = [k for k in pos_a if k in at_b]
    if len(shared) < 3:
        return None

    def role(words: tuple[_Word, ...], i: int) -> bool:
        _k, w, tag = words[i]
        if w[:1].isdigit():
            return not _is_year_word(w)
        if zh:  # a name, or a word before a company's head ("星图" of 星图软件, whatever its tag)
            return len(w) >= 2 and w not in _ZH_GENERIC and (
                tag[:2] in ("nr", "ns", "nt", "nz")
                or (i + 1 < len(words) and words[i + 1][1][:2] in _ZH_COMPANY_HEADS))
        return w[:1].isupper() and w.lower() not in _NOT_NAMES

    def named(k: str) -> bool:  # a capital at the start of both texts says nothing of a name
        return role(a, pos_a[k]) and all(role(b, j) for j in at_b[k]) \
            and (zh or pos_a[k] > 0 or at_b[k][0] > 0)

    def joins(words: tuple[_Word, ...], lo: int, verb: int, hi: int) -> bool:
        return any(k in _SYMMETRIC or w in _SYMMETRIC for k, w, _t in words[lo + 1:hi]) \
            or any(k in _TURNING or w in _TURNING for k, w, _t in words[verb + 1:hi]) \
            or (zh and verb > 0 and words[verb - 1][1] in _TURNING)

    roles = [k for k in shared if named(k)][:_MAX_ROLES]  # a list of names is no pair of roles
    if len(roles) < 2:
        return None
    verbs = [k for k in shared if once_b[k] == 1 and (zh or k not in EN_STOPWORDS)
             and not (zh and a[pos_a[k]][2][:1] not in ("v", "n", "d", "a") and a[pos_a[k]][1] != "比")]
    def nearest(positions: list[int], at: int) -> int:  # positions ascending
        k = bisect.bisect_left(positions, at)
        return min(positions[max(0, k - 1):k + 1], key=lambda j: abs(j - at))

    for v in verbs[:_MAX_SHARED]:
        av, bv = pos_a[v], at_b[v][0]
        # in the quote, each name where it stands nearest the shared word
        near = {k: nearest(at_b[k], bv) for k in roles}
        before = [x for x in roles if pos_a[x] < av and near[x] > bv]   # x … v … y in the sentence,
        after = [y for y in roles if pos_a[y] > av and near[y] < bv]    # y … v … x in the quote
        for x in before:
            for y in after:
                ax, ay, bx, by = pos_a[x], pos_a[y], near[x], near[y]
                if a[ax][1][:1].isdigit() != a[ay][1][:1].isdigit():
                    continue  # two names or two figures, not one of each
                if a[ax][1][:1].isdigit() and a[av][1] in ("比", ":", "-"):
                    continue  # "3比1" is a score, read either way round with its verb ("战胜", "负于")
                if _converse(a, b, (ax, ay), (by, bx)):
                    continue  # "A以3比1战胜B" is "B以1比3负于A": the roles turn with the verb
                if not joins(a, ax, av, ay) and not joins(b, by, bv, bx):
                    return Conflict("swap", f"{a[ax][1]} … {a[ay][1]}", f"{b[by][1]} … {b[bx][1]}")
    return None


# a ratio ("按4:6分担", "randomised 2:1", "按照6比4的比例"), and the words that say it is one (a score,
# "以2比1战胜", reads either way round with its verb)
_RATIO = re.compile(r"(?<![\d.:：∶])(\d{1,3})[ \t]*(?:[:：∶]|比)[ \t]*(\d{1,3})(?![\d.:：∶%])")
_RATIO_WORD = re.compile(r"比例|比率|配比|分担|分配|分成|ratio|proportion|split|randomi[sz]ed|allocated",
                         re.IGNORECASE)


# a comparison that finds no difference, or one that finds the first thing better, with what it
# is compared to: "no better than a low-fat diet", "superior to the low-fat diet", "不优于低脂饮食"
_EN_DET = r"(?:(?:the|a|an)[ \t]+)?"
_EN_NO_BETTER = re.compile(
    r"\b(?:no|not|hardly|scarcely)[ \t]+(?:any[ \t]+)?(?:better|more[ \t]+effective|superior)"
    r"[ \t]+(?:than|to)[ \t]+" + _EN_DET + r"(?P<x>[a-z][\w-]*)"
    r"|\b(?:did[ \t]+not|didn't|failed[ \t]+to)[ \t]+(?:outperform|beat)[ \t]+" + _EN_DET
    + r"(?P<y>[a-z][\w-]*)"
    r"|\b(?:as[ \t]+(?:effective|good)[ \t]+as|comparable[ \t]+to|similar[ \t]+to|no[ \t]+different[ \t]+from"
    r"|equivalent[ \t]+to|non-?inferior[ \t]+to)[ \t]+" + _EN_DET + r"(?P<z>[a-z][\w-]*)", re.IGNORECASE)
_EN_BETTER = re.compile(
    r"\b(?P<pre>\w+[ \t]+\w+[ \t]+)?(?:superior[ \t]+to|(?:significantly[ \t]+)?better[ \t]+than"
    r"|more[ \t]+effective[ \t]+than|outperformed|beat)[ \t]+" + _EN_DET + r"(?P<x>[a-z][\w-]*)",
    re.IGNORECASE)
_EN_BETTER_UNDONE = re.compile(r"\b(?:no|not|n't|never|hardly|scarcely|neither|nor|any)\b", re.IGNORECASE)
_ZH_BETTER_WORD = r"(?:优于|好于|胜过|强于)(?P<x>[\u4e00-\u9fff]{2})"
_ZH_NO_BETTER = re.compile(r"(?:并不|并未|不|未|没有)(?:显著)?" + _ZH_BETTER_WORD)
_ZH_BETTER = re.compile(r"(?<![不未没并])(?:显著|明显)?" + _ZH_BETTER_WORD)


_EN_COMPARES = re.compile(r"better|superior|effective|outperform|beat|comparable|similar|different|equivalent"
                          r"|inferior|good as", re.IGNORECASE)
_ZH_COMPARES = re.compile(r"优于|好于|胜过|强于")


def _comparison_flipped(sentence: str, quote: str, zh: bool) -> Conflict | None:
    """The sentence finds no difference where its quote finds the first thing better, with the same
    thing compared to: "the Mediterranean diet was no better than a low-fat diet" against "was
    superior to the low-fat diet"; "并不优于低脂饮食" against "优于低脂饮食". And the other way round."""
    if not (_ZH_COMPARES if zh else _EN_COMPARES).search(sentence):
        return None   # (most sentences compare nothing: no scan of the quote)
    if zh:
        nb_s = {m.group("x") for m in _ZH_NO_BETTER.finditer(sentence)}
        nb_q = {m.group("x") for m in _ZH_NO_BETTER.finditer(quote)}
        b_s = {m.group("x"): m.group(0) for m in _ZH_BETTER.finditer(sentence)}
        b_q = {m.group("x"): m.group(0) for m in _ZH_BETTER.finditer(quote)}
    else:
        nb_s = {_stem((m.group("x") or m.group("y") or m.group("z")).lower())
                for m in _EN_NO_BETTER.finditer(sentence)}
        nb_q = {_stem((m.group("x") or m.group("y") or m.group("z")).lower())
                for m in _EN_NO_BETTER.finditer(quote)}
        b_s = {_stem(m.group("x").lower()): m.group(0)[len(m.group("pre") or ""):]
               for m in _EN_BETTER.finditer(sentence) if not _EN_BETTER_UNDONE.search(m.group("pre") or "")}
        b_q = {_stem(m.group("x").lower()): m.group(0)[len(m.group("pre") or ""):]
               for m in _EN_BETTER.finditer(quote) if not _EN_BETTER_UNDONE.search(m.group("pre") or "")}
    for x in sorted(nb_s):
        if x in b_q and x not in nb_q:
            return Conflict("opposite", "no better", b_q[x])
    for x in sorted(b_s):
        if x in nb_q and x not in b_q and x not in nb_s:
            return Conflict("opposite", b_s[x], "no better")
    return None


def _reversed_ratio(sentence: str, quote: str) -> Conflict | None:
    """The quote gives the sentence's ratio the other way round, and never as the sentence does
    ("按4:6分担" against "按照6:4的比例共同承担", "randomised 1:2" against "2:1"), where either
    text says it is a ratio within a few characters of it."""
    said = [(m.group(1), m.group(2), m.start(), m.end()) for m in _RATIO.finditer(sentence)
            if int(m.group(1)) != int(m.group(2))]
    if not said:
        return None
    quoted = [(m.group(1), m.group(2), m.start(), m.end()) for m in _RATIO.finditer(quote)]
    as_said = {(int(x), int(y)) for x, y, _s, _e in quoted}
    for x, y, s, e in said:
        if (int(x), int(y)) in as_said:
            continue
        for qx, qy, qs, qe in quoted:
            if (int(qx), int(qy)) == (int(y), int(x)) and (
                    _RATIO_WORD.search(sentence, max(0, s - 12), e + 12)
                    or _RATIO_WORD.search(quote, max(0, qs - 12), qe + 12)) \
                    and not _arms_turned(*_clause(sentence, s, e), *_clause(quote, qs, qe)):
                return Conflict("ratio", sentence[s:e], quote[qs:qe])
    return None


_ARM = re.compile(r"[\u4e00-\u9fff]|[A-Za-z]+")
_CLAUSE_END = re.compile(r"[，。；！？,;!?]|\.(?:\s|$)")


def _clause(text: str, start: int, end: int) -> tuple[str, str]:
    """The clause around text[start:end] (at most 24 characters either side): before it, after it."""
    lo = max(0, start - 24)
    before = [m.end() for m in _CLAUSE_END.finditer(text, lo, start)]
    after = _CLAUSE_END.search(text, end, end + 24)
    return text[before[-1] if before else lo:start], text[end:after.start() if after else end + 24]


def _arms_turned(said_before: str, said_after: str, quoted_before: str, quoted_after: str) -> bool:
    """Whether the two clauses name the ratio's two sides in the other order ("男女比例为1:2" and
    "女男比例为2:1", "sand to cement 3:1" and "cement and sand 1:3", "2:1 to drug or placebo" and
    "1:2 to placebo or drug"): two words (or Chinese characters) that each clause holds once, on the
    same side of the ratio in both, stand the other way round. Then the ratios agree. ("双方按4:6分担
    费用" and "费用由双方按照6:4的比例分担" move a word across the ratio: no sides turned.)"""
    def once(text: str) -> dict[str, int]:
        units = [u.lower() for u in _ARM.findall(text)]
        return {u: i for i, u in enumerate(units) if units.count(u) == 1}
    for a, b in ((once(said_before), once(quoted_before)), (once(said_after), once(quoted_after))):
        shared = [u for u in a if u in b]
        if any((a[u] < a[v]) != (b[u] < b[v]) for i, u in enumerate(shared) for v in shared[i + 1:]):
            return True
    return False


# a figure and, right after it, how much it changed: "营收486亿元，同比增长35%", "净利润达96.3亿元，较上年
# 增长18.7%", "装车量139.0GWh，比去年同期下降3.1个百分点"
_ZH_GROWTH_PAIR = re.compile(
    r"(?<![\d.])(\d+(?:\.\d+)?)[ \t]*([^\d\s，,。；;：:、（）()%]{0,4}?)[ \t]*[，,]?[ \t]*"
    r"(同比|环比|较上年同期|比上年同期|较去年同期|比去年同期|较上年|比上年|较去年|比去年|较上季度|比上季度|较上月|比上月)?"
    r"(?:增长|下降|增加|减少|提高|降低|上涨|下跌|上升|回落|下滑|增幅为|降幅为)了?"
    r"[ \t]*(?:约|近|超过|逾)?[ \t]*"
    r"(\d+(?:\.\d+)?)[ \t]*(%|％|个百分点)")


_ZH_TIME_UNITS_FIRST = frozenset("年月日号时点分秒季周天")
# the words that say against what a change is measured, by what they mean
_ZH_AGAINST = {"较上年同期": "同比", "比上年同期": "同比", "较去年同期": "同比", "比去年同期": "同比",
               "较上年": "同比", "比上年": "同比", "较去年": "同比", "比去年": "同比",
               "较上季度": "环比", "比上季度": "环比", "较上月": "环比", "比上月": "环比"}


def _in_its_clause(quote: str, figure: str, change: str) -> bool:
    """Whether the quote states `change` after `figure` before its clause ends (at "；" or "。")."""
    at = quote.find(figure)
    while at >= 0:
        end = min((i for i in (quote.find(c, at) for c in "；;。") if i >= 0), default=len(quote))
        if change in quote[at:end]:
            return True
        at = quote.find(figure, at + 1)
    return False


def _same_kind(a: str, b: str) -> bool:
    """Two changes of one kind: both 同比, both 环比, or one of them unqualified and the other not
    环比 (a report's plain "增长" is year on year)."""
    return a == b or "环比" not in (a, b)


def _zh_growth_moved(sentence: str, quote: str) -> Conflict | None:
    """Chinese: the sentence gives a figure's change that the quote gives another figure, while the
    quote gives the sentence's change to another figure ("营收486亿元，同比增长35%" against
    "营业收入为486亿元，同比增长21%；净利润为29亿元，同比增长35%"): read by the figures, so
    营收 and 营业收入 need no matching, and only where the change follows its figure at once."""
    said = [(v, u, _ZH_AGAINST.get(p, p), c, g) for v, u, p, c, g in _ZH_GROWTH_PAIR.findall(sentence)]
    if not said:
        return None
    quoted = [(v, u, _ZH_AGAINST.get(p, p), c, g) for v, u, p, c, g in _ZH_GROWTH_PAIR.findall(quote)]
    if len(quoted) < 2:
        return None

    def same(x: str, y: str) -> bool:
        return x == y or figure_near("about", x, y) or figure_near("about", y, x)

    for value, unit, period, change, sign in said:
        if _is_year_word(value) or unit[:1] in _ZH_TIME_UNITS_FIRST:
            continue   # "2024年，同比增长…": a date, not a figure that changed
        # the same kind of change only: "环比增长35%" is no "同比增长21%" ("同比" and "较上年" are one)
        theirs = [(v, c) for v, u, p, c, g in quoted
                  if u == unit and _same_kind(p, period) and g == sign and same(value, v)]
        if not theirs or any(same(change, c) for v, u, p, c, g in quoted
                             if u == unit and g == sign and same(value, v)):
            continue
        if _in_its_clause(quote, theirs[0][0] + unit, change + sign):
            continue   # "营收486亿元，同比增长21%，环比增长35%": the quote gives it 35% too
        other = next((v + u for v, u, p, c, g in quoted
                      if g == sign and _same_kind(p, period) and same(change, c)
                      and not (u == unit and same(value, v))), None)
        if other is not None:
            return Conflict("figures-slot", f"{value}{unit}，{change}{sign}",
                            f"{theirs[0][0]}{unit}，{theirs[0][1]}{sign}")
    return None


_ZH_PERIOD_WORDS = (r"同比|环比|较上年同期|比上年同期|较去年同期|比去年同期|较上年|比上年|较去年|比去年"
                    r"|较上季度|比上季度|较上月|比上月")
_ZH_UP_WORD = r"增长|增加|提高|上涨|上升"
_ZH_DOWN_WORD = r"下降|减少|降低|下跌|回落|下滑"
# a measure and its change, in the sentence: "销售额同比下降14.6%", "旅游收入同比增长9.2%"
_ZH_MEASURE_CHANGE = re.compile(
    rf"(?P<m>[\u4e00-\u9fff]{{2,6}})(?P<p>{_ZH_PERIOD_WORDS})?(?:(?P<up>{_ZH_UP_WORD})|(?P<down>{_ZH_DOWN_WORD}))了?"
    r"[ \t]*(?P<c>\d+(?:\.\d+)?)[ \t]*(?:%|％)")
# ... and a change in the quote, wherever it stands after its measure's figure
_ZH_CHANGE_AT = re.compile(
    rf"(?P<p>{_ZH_PERIOD_WORDS})?(?:(?P<up>{_ZH_UP_WORD})|(?P<down>{_ZH_DOWN_WORD}))了?[ \t]*"
    r"(?:约|近|超过|逾)?[ \t]*(?P<c>\d+(?:\.\d+)?)[ \t]*(?:%|％)")
_ZH_CLAUSE_END = re.compile(r"[；;。！？!?]")


# a Chinese change from one figure to another: "由上映首日的42%降至2月10日的31%", "从31%升至42%"
_ZH_FT_GAP = r"(?:[^。；;，,\d]|\d{1,4}[年月日号])"   # words, and dates: "由上映首日的…", "至2月10日的…"
_ZH_FT_NUM = r"(?<![\d.])(\d+(?:\.\d+)?)(?![\d.年月日号])"
_ZH_FROM_TO = re.compile(
    rf"(?:由|从){_ZH_FT_GAP}{{0,16}}?{_ZH_FT_NUM}[^。；;\d]{{0,16}}?"
    r"(?:升|降|增|减|提高|提升|下降|上升|增长|减少|扩大|缩小|回落|回升|攀升|下滑)?[至到]"
    rf"{_ZH_FT_GAP}{{0,16}}?{_ZH_FT_NUM}")


# a figure as of a date: "截至2月10日24时，…累计票房达38.6亿元", "截至春节档结束的2月4日，…38.6亿元"
_ZH_AS_OF = re.compile(
    r"截[至止](?:[^，,。；;\d]{0,12})?(?P<d>(?:\d{4}年)?\d{1,2}月\d{1,2}日|\d{4}年(?:\d{1,2}月)?(?:底|末)?)"
    r"(?P<rest>[^。；;]{0,80})")
_ZH_AS_OF_FIGURE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)[ \t]*(亿元|万元|元|亿|万|%|人次|万人次|亿人次)")


def _zh_as_of(text: str) -> dict[str, set[str]]:
    """Each figure (with its unit) the text gives as of a date, and those dates."""
    out: dict[str, set[str]] = {}
    for m in _ZH_AS_OF.finditer(text):
        date = m.group("d")
        for f in _ZH_AS_OF_FIGURE.finditer(m.group("rest")):
            out.setdefault(f.group(1) + f.group(2), set()).add(date)
    return out


def _zh_as_of_moved(sentence: str, quote: str) -> Conflict | None:
    """Chinese: the sentence gives a figure as of another date than the quote does ("截至春节档结束
    的2月4日，…累计票房已达38.6亿元" against "截至2月10日24时，…累计票房达38.6亿元"), and the quote
    gives it as of no date the sentence says."""
    if "截" not in sentence:
        return None
    said = _zh_as_of(sentence)
    if not said:
        return None
    quoted = _zh_as_of(quote)
    for figure, dates in said.items():
        theirs = quoted.get(figure)
        if theirs and not any(_same_date(d, t) for d in dates for t in theirs):
            return Conflict("figure", f"截至{min(dates)}…{figure}", f"截至{min(theirs)}…{figure}")
    return None


def _same_date(a: str, b: str) -> bool:
    """Whether two Chinese dates may be one: the numbers of one start or end the other's ("2023年底"
    and "2023年末", "2月10日" and "2024年2月10日", "2023年" and "2023年12月31日")."""
    x = tuple(int(n) for n in re.findall(r"\d+", a))
    y = tuple(int(n) for n in re.findall(r"\d+", b))
    short, long = sorted((x, y), key=len)
    return long[:len(short)] == short or long[len(long) - len(short):] == short


def _zh_from_to_swapped(sentence: str, quote: str) -> Conflict | None:
    """Chinese: the sentence gives a change the other way round from its quote ("由…42%降至…31%"
    against "从…31%逐步升至…42%")."""
    said = {(m.group(2), m.group(1)) for m in _ZH_FROM_TO.finditer(sentence)}
    if not said:
        return None
    quoted = {(m.group(2), m.group(1)) for m in _ZH_FROM_TO.finditer(quote)}
    for now, before in sorted(said):
        if now != before and (before, now) in quoted and (now, before) not in quoted \
                and not _is_year_word(now) and not _is_year_word(before):
            return Conflict("swap", f"{before}→{now}", f"{now}→{before}")
    return None


def _zh_changes_after(quote: str, at: int) -> list[tuple[str, str, str]]:
    """The changes (period word, direction, figure) the quote states in the clause from `at` to the
    next "；" or "。" (within 40 characters): the first is what a measure named at `at` changed by."""
    end = _ZH_CLAUSE_END.search(quote, at)
    stop = min(end.start() if end else len(quote), at + 40)
    return [(_ZH_AGAINST.get(m.group("p") or "", m.group("p") or ""), "up" if m.group("up") else "down",
             m.group("c")) for m in _ZH_CHANGE_AT.finditer(quote, at, stop)]


def _zh_growth_owner(sentence: str, quote: str) -> Conflict | None:
    """Chinese: the sentence gives a measure a change that the quote gives another measure, while
    the quote gives this measure its own change ("销售额同比下降14.6%" against "销售面积812万平方米，同比
    下降14.6%；销售额1236亿元，同比下降19.2%"): read by the measure's words (its last three or
    more characters the quote writes) and the first change after them in their clause."""
    for m in _ZH_MEASURE_CHANGE.finditer(sentence):
        words = m.group("m")
        period = _ZH_AGAINST.get(m.group("p") or "", m.group("p") or "")
        way = "up" if m.group("up") else "down"
        change = m.group("c")
        measure = next((words[-n:] for n in range(len(words), 2, -1) if words[-n:] in quote), None)
        if measure is None:
            continue   # (two characters name no measure for sure: "名义增长6.3%")
        own = [c for at in _find_all(quote, measure)
               for c in _zh_changes_after(quote, at + len(measure))[:1]]
        own = [c for c in own if _same_kind(c[0], period) and c[1] == way]
        if not own or any(_same_figure(change, c[2]) for c in own):
            continue
        # ... and gives the sentence's change to another measure: not under a word the sentence says
        # too ("三季度国内生产总值同比增长4.6%" against "一季度国内生产总值同比增长5.3%，…，三季度增长4.6%")
        if any(x.group("c") == change and bool(x.group("up")) == (way == "up")
               and _same_kind(_ZH_AGAINST.get(x.group("p") or "", x.group("p") or ""), period)
               and not _said_before(quote, x.start(), sentence)
               for x in _ZH_CHANGE_AT.finditer(quote)):
            return Conflict("figures-slot", f"{measure}{m.group(0)[len(words):]}",
                            f"{measure}…{own[0][0]}{'增长' if way == 'up' else '下降'}{own[0][2]}%")
    return None


_ZH_CLAUSE_MARK = re.compile(r"[，,；;。：:（(]")


def _said_before(quote: str, at: int, sentence: str) -> bool:
    """Whether the words of the quote's clause before `at` (two characters or more) are the
    sentence's words too: the change at `at` is the sentence's thing, named as the sentence names it."""
    floor = max(0, at - 20)
    start = max((m.end() for m in _ZH_CLAUSE_MARK.finditer(quote, floor, at)), default=floor)
    words = quote[start:at].strip()
    return len(words) >= 2 and words in sentence


def _find_all(text: str, part: str) -> list[int]:
    out: list[int] = []
    at = text.find(part)
    while at >= 0 and len(out) < 16:
        out.append(at)
        at = text.find(part, at + 1)
    return out


# what may stand between a measure and its figure: "净利润为6.2亿元", "运营船舶约85艘"
_ZH_FIGURE_FILLERS = frozenset("为 是 达 达到 约 约为 近 接近 超 超过 逾 共 共计 合计 总计 了 的 至 到 "
                               "高达 仅 仅为 在 有 分别 分别为 累计".split())
_ZH_TIME_UNITS = frozenset("年 月 日 号 时 点 分 秒 季度 季 周 天 年度 月份 世纪 年代".split())
_ZH_NUMBER = re.compile(r"(\d+(?:[.,]\d+)*)(%|‰)?$")
_Slot = tuple[tuple[str, ...], str, str]  # (measure words before it, nearest first; value; unit)
_ZH_FIGURE_JOINERS = frozenset("和 、 及 与 或".split())
_MAX_SLOTS = 64   # figures a measure is compared with: a quote that gives one measure more is a table


def _zh_figure_slots(words: tuple[_Word, ...]) -> list[_Slot]:
    """Each figure of a Chinese text with the one or two words of its clause that it measures
    ("净利润为6.2亿元": (净利润,), 6.2, 亿元; "同比增长12.4%": (增长, 同比), 12.4, %); no dates."""
    out: list[_Slot] = []
    last_end = -9                        # the last word of the last slot's figure (and unit)
    for i, (_k, w, _t) in enumerate(words):
        m = _ZH_NUMBER.match(w)
        if m is None:
            continue
        unit = m.group(2) or ""
        if not unit and i + 1 < len(words) and words[i + 1][2].rstrip(_APART) == "m" \
                and not words[i + 1][1][:1].isdigit() and not words[i + 1][2].endswith(_APART):
            unit = words[i + 1][1]
        counted = i + 1 < len(words) and words[i + 1][2].rstrip(_APART) == "q" \
            and words[i + 1][1] not in _ZH_TIME_UNITS    # "1460公顷", "1800只": no year
        if unit in _ZH_TIME_UNITS or (not unit and len(m.group(1)) == 4 and m.group(1).isdigit()
                                      and not counted):
            continue   # a year ("2024" with no unit); "42.7万人" is a figure
        if any(0 <= x < len(words) and words[x][1] in ("比", ":", "：") for x in (i - 1, i + 1)):
            continue  # a score or a ratio ("3比1"), read with its verb, not a measure
        if out and last_end == i - 2 and words[i - 1][1] in _ZH_FIGURE_JOINERS:
            # "同比分别增长34.4%和35.5%": the second figure of a list measures what the first does
            out.append((out[-1][0], m.group(1).replace(",", ""), unit))
            last_end = i + (1 if unit and not m.group(2) else 0)
            continue
        context: list[str] = []
        j = i
        while j > 0 and len(context) < 2 and not words[j][2].endswith(_APART):
            j -= 1
            k, prev, tag = words[j]
            if prev[:1].isdigit() or tag.rstrip(_APART) == "m":
                break
            if prev not in _ZH_FIGURE_FILLERS:
                context.append(k)
        if context:
            out.append((tuple(context), m.group(1).replace(",", ""), unit))
            last_end = i + (1 if unit and not m.group(2) else 0)   # the figure's last word
    return out


def _zh_figure_slot(a: tuple[_Word, ...], b: tuple[_Word, ...]) -> Conflict | None:
    """Chinese: the quote gives the sentence's measure another figure and the sentence's figure
    to another measure ("净利润为6.2亿元" against "营业收入为6.2亿元，净利润为0.9亿元"; "同比增长12.4%"
    against "环比增长12.4%，同比增长9.8%"): the figure belongs to another clause of the quote."""
    return _figure_moved([("", x) for x in _zh_figure_slots(a)[:4 * _MAX_SLOTS]],
                         [("", x) for x in _zh_figure_slots(b)[:4 * _MAX_SLOTS]],
                         frozenset(k for k, _w, _t in a))


def _same_measure(theirs: tuple[str, ...], mine: tuple[str, ...]) -> bool:
    """Whether two figures' measure words (nearest first) name one measure: the same words as far
    as both go. A measure that opens its clause has one word and takes what qualifies it from the
    clause before ("普通本专科招生42.7万人，…，在校生131.5万人": 在校生 is 普通本专科在校生)."""
    k = min(len(theirs), len(mine))
    return theirs[:k] == mine[:k]


def _same_figure(value: str, other: str) -> bool:
    """`other` states `value`: the same figure, or one within 3% ("约1286亿元" for 1286.4亿元)."""
    return other == value or figure_near("about", value, other) or figure_near("about", other, value)


def _figure_moved(said: list[tuple[str, _Slot]], quoted: list[tuple[str, _Slot]],
                  said_words: frozenset[str] = frozenset()) -> Conflict | None:
    """The first of the sentence's figures (with its subject, "" for none, and measure) whose
    subject and measure the quote gives another figure (not one within 3%), while it gives this
    figure to another subject or measure. Not when the quote gives it to the same measure under
    a word the sentence says too (`said_words`): "三季度…同比增长4.6%" against "…同比增长5.3%，
    二季度增长4.7%，三季度增长4.6%"."""
    for subject, (context, value, unit) in said:
        mine = [v for s, (c, v, u) in quoted if s == subject and _same_measure(c, context) and u == unit]
        if not mine or any(_same_figure(value, v) for v in mine[:_MAX_SLOTS]):
            continue
        if said_words and any(_same_figure(value, v) and u == unit and s == subject and c[:1] == context[:1]
                              and len(c) > 1 and c[1] in said_words for s, (c, v, u) in quoted):
            continue
        if any(u == unit and (s != subject or not _same_measure(c, context)) and _same_figure(value, v)
               for s, (c, v, u) in quoted):
            label = subject + "".join(reversed(context))
            return Conflict("figures-slot", label + value + unit, label + mine[0] + unit)
    return None


# what may stand between an English measure and its figure: "lowered blood pressure by an average of
# 12.4 mmHg", "operates about 85 vessels", "was awarded the Davy Medal in 2016"
_EN_FIGURE_FILLERS = frozenset(_stem(w) for w in (
    "about around approximately roughly nearly almost some just only over under more less than up "
    "average total totalling totaling overall estimated an a the of by to at in on for as per "
    "was were is are be been being has have had reached reaching now today currently presently still "
    "also already ever then recently").split()) | EN_STOPWORDS
# where a figure's clause opens: "… in men and by 9.1 mmHg": "men" measures the figure before
_EN_FIGURE_STOPS = frozenset({"and", "or", "but", "while", "whereas", "than", "versus", "vs"})
_EN_MONTHS = frozenset(("january february march april june july august september october november "
                        "december jan feb mar apr jun jul aug sep sept oct nov dec").split())


_YEAR = re.compile(r"1[89]\d\d|20\d\d")
_TIME_NOUNS = frozenset(_stem(w) for w in "year years month months quarter quarters week weeks day days time "
                        "period".split())


def _in_a_date(words: tuple[_Word, ...], at: int) -> bool:
    """Whether the figure at `at` is a day or year next to a month ("March 6", "6 March", "March
    2019"): a date's parts are no measure's figures."""
    return any(0 <= j < len(words) and (words[j][1].lower() in _EN_MONTHS or words[j][1] == "May")
               for j in (at - 1, at + 1))


@dataclass(frozen=True)
class _EnSlot:
    """An English figure, its unit, the content words just before it (nearest first: its measure)
    and just after it (what qualifies it: "9.1 mmHg in women")."""

    before: tuple[str, ...]
    written: tuple[str, ...]
    value: str
    unit: str
    unit_written: str
    after: frozenset[str]


def _en_figure_slots(words: tuple[_Word, ...]) -> list[_EnSlot]:
    """Each figure of an English text with up to two content words of its clause on either side
    ("lowered blood pressure by an average of 12.4 mmHg in men": (pressure, blood), 12.4, mmhg,
    {men}; "awarded the Davy Medal in 2016": (medal, davy), 2016). The word right after a figure
    is its unit when it is no stop word; a year after it qualifies it ("500 units in 2021");
    neither side reads past punctuation, another figure or a word that opens a clause ("and"), and
    the words before a figure stop at what qualifies the figure before it ("35 degrees at noon
    before it reached 40": "noon" is 35's, not 40's measure)."""
    out: list[_EnSlot] = []
    figures = [i for i, (_k, w, _t) in enumerate(words) if w[:1].isdigit() and not _in_a_date(words, i)]
    figures = figures[:4 * _MAX_SLOTS]
    units = {i + 1 for i in figures if i + 1 < len(words) and not words[i + 1][2].endswith(_APART)
             and not words[i + 1][1][:1].isdigit() and words[i + 1][1].lower() not in EN_STOPWORDS}
    afters: list[list[str]] = []
    taken: set[int] = set()   # positions of the words that qualify a figure, after it
    for i in figures:
        after: list[str] = []
        j = i + 2 if i + 1 in units else i + 1
        while j < len(words) and len(after) < 2 and not words[j][2].endswith(_APART):
            k, nxt, _tag = words[j]
            if _YEAR.fullmatch(nxt):
                after.append(nxt)  # "500 units in 2021": the year qualifies it
                taken.add(j)
                break
            if nxt[:1].isdigit() or nxt.lower() in _EN_FIGURE_STOPS:
                break
            if k not in _EN_FIGURE_FILLERS and nxt.lower() not in _EN_FIGURE_FILLERS:
                after.append(k)
                taken.add(j)
            j += 1
        afters.append(after)
    for i, after in zip(figures, afters, strict=True):
        unit = words[i + 1][0] if i + 1 in units else ""
        before: list[str] = []
        written: list[str] = []
        j = i
        while j > 0 and len(before) < 2 and not words[j][2].endswith(_APART):
            j -= 1
            k, prev, _tag = words[j]
            if prev[:1].isdigit() or j in units or j in taken or prev.lower() in _EN_FIGURE_STOPS:
                break
            if k not in _EN_FIGURE_FILLERS and prev.lower() not in _EN_FIGURE_FILLERS:
                before.append(k)
                written.append(prev)
        out.append(_EnSlot(tuple(before), tuple(reversed(written)), words[i][1].replace(",", ""), unit,
                           words[i + 1][1] if unit else "", frozenset(after)))
    return out


def _en_figure_slot(a: tuple[_Word, ...], b: tuple[_Word, ...]) -> Conflict | None:
    """English: the quote gives the sentence's measure another figure and the sentence's figure to
    another measure ("awarded the Davy Medal in 2018" against "awarded the Davy Medal in 2016 and
    … elected a Fellow of the Royal Society in 2018"): the figures are swapped or moved. A measure
    qualified otherwise after its figure ("9.1 mmHg in women", "12.4 mmHg in men") is another
    measure; a figure whose words before it begin like the sentence's ("it fell 6%" for "net
    income fell 6%") or that shares a qualifier with it is not moved."""
    slots = _en_figure_slots(a)
    said = [x for x in slots if x.before]
    if not said:
        return None
    quoted = _en_figure_slots(b)
    for x in said:
        n = len(x.before)
        mine = [q.value for q in quoted if q.before[:n] == x.before and q.unit == x.unit
                and not (x.after and q.after and not x.after & q.after)]
        if not mine or any(v == x.value or figure_near("about", x.value, v)
                           or figure_near("about", v, x.value) for v in mine[:_MAX_SLOTS]):
            continue
        moved = frozenset().union(*(q.after | set(q.before) for q in quoted if q.value == x.value and q.before
                                    and q.before[:len(x.before)] != x.before[:len(q.before)])) - _TIME_NOUNS
        if any(y.value in mine and y.before[:n] == x.before[:len(y.before)] and not y.after & moved
               for y in slots if y is not x):
            continue   # "reached $10 million this year, up from $8 million": the sentence has both
            # (not "3.1 mmHg, versus 12.4 mmHg in the placebo group", where the quote's 3.1 is the
            # placebo group's: the qualifier moved with the figure)
        if any(q.value == x.value and q.unit == x.unit and q.before
               and q.before[:len(x.before)] != x.before[:len(q.before)] and not x.after & q.after
               for q in quoted):
            label = " ".join(x.written)
            unit = f" {x.unit_written}" if x.unit else ""
            return Conflict("figures-slot", f"{label} {x.value}{unit}", f"{label} {mine[0]}{unit}")
    return None


_ZH_SENTENCE_END = re.compile(r"[；;。！？!?\n]")


def _zh_subject_slots(text: str) -> list[tuple[str, _Slot]]:
    """The figures of a Chinese text, each with its measure and the subject of its sentence or
    semicolon clause: the first name there ("东海航运集团…运营船舶约230艘；南洋船务…约85艘" gives 东海
    230艘 and 南洋 85艘)."""
    out: list[tuple[str, _Slot]] = []
    for part in _ZH_SENTENCE_END.split(text)[:_MAX_SLOTS]:
        words = _zh_words(part)
        subject = next((w for _k, w, t in words if t.rstrip(_APART)[:2] in ("nr", "ns", "nt", "nz")
                        and len(w) >= 2 and w not in _ZH_GENERIC), "")
        if subject:
            out.extend((subject, slot) for slot in _zh_figure_slots(words))
    return out[:4 * _MAX_SLOTS]   # a text of more figures is a table: the pairs compared stay few


def _zh_figure_subject(sentence: str, quote: str) -> Conflict | None:
    """Chinese: the quote gives the sentence's subject another figure for the measure, and the
    sentence's figure to another subject ("东海航运集团运营船舶约85艘" against "东海航运集团…运营船舶约
    230艘；南洋船务…运营船舶约85艘"): the figure is the other subject's."""
    said = _zh_subject_slots(sentence)
    return _figure_moved(said, _zh_subject_slots(quote)) if said else None


# Chinese quantifiers by how many they say: some, most, all ("也有" is "some … too")
_ZH_QUANTITY = {"所有": 3, "全部": 3, "一切": 3, "全体": 3, "一律": 3, "全都": 3, "大多数": 2, "多数": 2,
                "大部分": 2, "绝大多数": 2, "绝大部分": 2, "部分": 1, "一部分": 1, "一些": 1, "有些": 1,
                "有的": 1, "少数": 1, "个别": 1, "某些": 1}


def _zh_quantity(a: tuple[_Word, ...], b: tuple[_Word, ...], ops: Sequence[_Op]) -> Conflict | None:
    """Chinese: the sentence says more of them than its quote ("所有中小企业" for "部分中小企业",
    "大多数中小股东" for "部分中小股东", "所有投资者" for "也有投资者"): the quote's quantifier
    ends its change, within three words of the run both share; the sentence's stands in its
    change of the same spot."""
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag != "replace" or k + 1 >= len(ops) or ops[k + 1][0] != "equal":
            continue
        said = [_ZH_QUANTITY[w] for _k, w, _t in a[i1:i2] if w in _ZH_QUANTITY]
        near = b[max(j1, j2 - 3):j2]
        quoted = [_ZH_QUANTITY[w] for _k, w, _t in near if w in _ZH_QUANTITY]
        quoted += [1 for x in range(len(near) - 1) if near[x][1] == "也" and near[x + 1][1] == "有"]
        if said and quoted and max(said) > min(quoted):
            return Conflict("quantifier", _said(a, i1, i2), _said(b, j1, j2))
    return None


# verbs that say a thing stopped or was refused: done, they say what a negation says
_ZH_STOPPING = frozenset("停止 拒绝 取消 放弃 终止 退出 关闭 停产 暂停 撤销 否决 中止 叫停 停售 撤回 "
                         "不再".split())
_ZH_PLAN = frozenset("计划 拟 打算 准备 将要 即将 筹划 规划 拟于 计划于".split())
_EN_PLAN = frozenset("plan plans planning intend intends intending considering considers aim aims will "
                     "proposes proposing".split())
_EN_DONE = frozenset("has have had already".split())


def _planned_for_done(a: tuple[_Word, ...], b: tuple[_Word, ...], ops: Sequence[_Op]) -> Conflict | None:
    """English: the sentence only plans what its quote says is done: "is planning to open" for
    "has opened", "will lift" for "has already lifted". The plan word ends the sentence's change
    right before the run both share (the verb), whose quote change says has, have, had or
    already, and no plan word of the quote's. Or the quote writes that verb in the past ("plans
    to sign a licensing deal" for "In August 2024 it signed a licensing deal"), and no word of
    the whole quote plans anything ("said it expanded the network and plans to expand it again"
    may support "plans to expand the network")."""
    planless: bool | None = None
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag not in ("replace", "delete") or k + 1 >= len(ops) or ops[k + 1][0] != "equal":
            continue
        said = [w.lower() for _k, w, _t in a[i1:i2]]
        quoted = [w.lower() for _k, w, _t in b[j1:j2]]
        if (quoted and quoted[-1] == "to") or (j2 < len(b) and b[j2][1].lower() == "to"):
            continue  # "has agreed to merge", "has decided to sell": a decision, not the deed
        if tag == "replace" and i2 - i1 <= _MAX_CHANGE and j2 - j1 <= _MAX_CHANGE \
                and any(w in _EN_PLAN for w in said[-3:]) and any(w in _EN_DONE for w in quoted) \
                and not any(_prospect(b, j, False) for j in range(j1, j2)):
            return Conflict("done", _said(a, i1, i2), _said(b, j1, j2))
        if len(said) >= 2 and said[-1] == "to" and said[-2] in _EN_PLAN and j2 < len(b) and i2 < len(a) \
                and b[j2][1].lower().endswith("ed") and not a[i2][1].lower().endswith("ed"):
            if planless is None:
                planless = not any(_prospect(b, j, False) or b[j][1].lower() in _EN_PLAN
                                   for j in range(len(b)))
            if planless:
                return Conflict("done", _said(a, max(i1, i2 - 3), i2), _said(b, j2, j2 + 1))
    return None


def _zh_done(word: str) -> bool:
    """已, 已经, 已于, 已与 …: the thing is done (not 已故, 已婚, 已知)."""
    if word in ("业已", "均已", "都已"):
        return True
    return word[:1] == "已" and word not in ("已故", "已婚", "已知", "已往")


def _done_or_not(a: tuple[_Word, ...], b: tuple[_Word, ...], ops: Sequence[_Op],
                 negations: frozenset[str]) -> Conflict | None:
    """Chinese: the sentence says it has not happened where its quote says it has, or the other
    way round: "并未于2024年10月投产" for "已于2024年10月投产", "尚未与…签署" for "公司已与…签署".
    The 已 word stands at the end of its text's change, right before the run both share, and
    that change holds no negation. Or the sentence only plans what the quote says is done: "计划
    启动" for "已启动", and for "还选派了" or "组建了" (`_done_with_le`) "计划选派", "计划组建"."""
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if k + 1 >= len(ops) or ops[k + 1][0] != "equal":
            continue
        if tag == "delete" and i2 - i1 <= 2 and any(w in _ZH_PLAN for _k, w, _t in a[i1:i2]) \
                and _done_with_le(a, b, i2, j2):
            return Conflict("done", _said(a, i1, i2), _said(b, j2, j2 + 2))
        if tag != "replace" or i2 - i1 > 2 * _MAX_CHANGE or j2 - j1 > 2 * _MAX_CHANGE:
            continue
        if any(w in _ZH_STOPPING for _k, w, _t in (*a[i1:i2 + 1], *b[j1:j2 + 1])):
            continue  # "不再生产" is "已停止生产", "没有接受" is "已拒绝"
        said_not = any(w in negations for _k, w, _t in a[i1:i2])
        quoted_not = any(w in negations for _k, w, _t in b[j1:j2])
        if said_not and not quoted_not and any(_zh_done(w) for _k, w, _t in b[max(j1, j2 - 2):j2]):
            return Conflict("negation", _said(a, i1, i2), _said(b, j1, j2))
        if quoted_not and not said_not and any(_zh_done(w) for _k, w, _t in a[max(i1, i2 - 2):i2]):
            return Conflict("negation", _said(a, i1, i2), _said(b, j1, j2))
        # a plan where the quote says it is done: "计划启动" for "已启动"
        if not quoted_not and any(w in _ZH_PLAN for _k, w, _t in a[max(i1, i2 - 3):i2]) \
                and (any(_zh_done(w) for _k, w, _t in b[max(j1, j2 - 2):j2]) or _done_with_le(a, b, i2, j2)):
            return Conflict("done", _said(a, i1, i2), _said(b, j1, j2))
    return None


def _done_with_le(a: tuple[_Word, ...], b: tuple[_Word, ...], i2: int, j2: int) -> bool:
    """Chinese: the quote writes 了 after the word both texts share at a[i2] and b[j2] ("组建了")
    and the sentence does not, and no word of the quote plans or expects anything ("去年推出了…，
    并计划明年推出…" may support "计划推出")."""
    return j2 + 1 < len(b) and b[j2 + 1][1] == "了" and not (i2 + 1 < len(a) and a[i2 + 1][1] == "了") \
        and not any(_prospect(b, j, True) for j in range(len(b)))


# what measures against a plan or forecast before the word ("比原计划", "按计划", "好于预期")
_ZH_AGAINST_PLAN = ("原", "比", "较", "按", "按照", "超", "超出", "超过", "好于", "低于", "高于", "不及",
                    "符合", "如", "依")


def _en_said_done(a: tuple[_Word, ...], i1: int, i2: int) -> bool:
    """Whether the sentence says a thing was done around its change a[i1:i2] (the two words before
    it, it, and the verb after it): a past form ("opened", "began") or has, had, already, was,
    were; not the present, which states a rule or a schedule ("enter duty-free", "pays 25%")."""
    for w in a[max(0, i1 - 2):min(len(a), i2 + 1)]:
        low = w[1].lower()
        if (low.endswith("ed") and len(low) > 4) or low in _EN_IRREGULAR_PAST \
                or low in ("has", "have", "had", "already", "was", "were", "did"):
            return True
    return False


_DETERMINERS = frozenset("the a an its their his her our this that these those".split())


def _prospect(words: tuple[_Word, ...], i: int, zh: bool) -> bool:
    """Whether words[i] says the thing is planned, expected or proposed: "plans (to)", "will",
    "计划", "预计"; "将" only before a verb or "于" ("将于", "将引导"), for "将存量房贷利率…"
    is "把"."""
    w = words[i][1]
    if zh:
        if w == "规划" and i > 0 and words[i - 1][1].endswith("免疫"):
            return False   # "非免疫规划疫苗": the immunisation programme, no plan
        if w in ("计划", "预计", "预期", "预定", "规划") and i > 0 \
                and words[i - 1][1].endswith(_ZH_AGAINST_PLAN):
            return False   # "比原计划提前45天", "按计划", "好于预期": measured against a plan, no plan
        if w == "将":   # (not "将约121.6克样品送回": 将 before a figure takes its object)
            return i + 1 < len(words) and words[i + 1][2][:1] in ("v", "p", "d") \
                and words[i + 1][1] not in ("约", "近", "大约", "超过", "逾", "近乎")
        return w in _ZH_PROSPECT or (w[:1] == "拟" and len(w) == 2 and w[1] in "向于以将在对")
    low = w.lower()
    if low in ("proposed", "planned", "projected") and i > 0 and words[i - 1][1].lower() in _DETERMINERS:
        return False   # "opposed the proposed merger": a name for the deal, no plan of the clause's
    if low in _PROSPECT:
        return True
    if low == "due":  # "is due to open", not "delayed due to fog"
        return i > 0 and words[i - 1][1].lower() in ("is", "are", "was", "were", "be", "'s") \
            and i + 1 < len(words) and words[i + 1][1].lower() == "to"
    return low in _PROSPECT_TO and i + 1 < len(words) and words[i + 1][1].lower() == "to"


# what makes a thing a first, the only one or the most of its kind
_ZH_FIRSTS = frozenset("首次 首度 第一次 首个 第一个 首家 首位 首款 首批 唯一 史上 最 最为".split())
# (not "first": "Apple released the first iPhone in 2007" against "It introduced the iPhone in 2007"
# is a fair reading, where "首次表达了关切" against "表达了关切" claims what the record does not)
_EN_FIRSTS = frozenset("only sole unprecedented".split())
_ZH_DEGREES = ("比较", "非常", "相当", "十分", "特别", "较", "更", "很", "偏", "挺", "蛮")


def _made_first(a: tuple[_Word, ...], b: tuple[_Word, ...], i1: int, i2: int, j1: int, j2: int,
                zh: bool, record: str) -> Conflict | None:
    """The sentence adds, in a change of at most two words, a word that makes the thing a first, the
    only one or the most (首次, 第一个, 唯一, 史上, 最…; "only", "sole", "unprecedented") that its
    record never writes; or, one word for one, a superlative where the quote says a lesser degree
    ("最高" for "较高", "最重要" for "很重要")."""
    said = [w[1] for w in a[i1:i2]]
    if zh:
        if len(said) == 1 and 1 <= j2 - j1 <= 2:
            s_w, q_w = said[0], "".join(w[1] for w in b[j1:j2])   # (rjieba cuts 较高 as 较 + 高)
            if s_w.startswith("最") and len(s_w) >= 2 and q_w.endswith(s_w[1:]) \
                    and q_w[:len(q_w) - len(s_w) + 1] in _ZH_DEGREES:
                return Conflict("superlative", s_w, q_w)
        if j1 != j2:
            return None
        for w in said:
            if (w in _ZH_FIRSTS or (w.startswith("最") and len(w) <= 3)) and w not in record:
                return Conflict("addition", w, "")
        return None
    if j1 != j2:
        return None
    for w in said:
        low = w.lower()
        if low in _EN_FIRSTS and re.search(rf"\b{low}\b", record, re.IGNORECASE) is None:
            return Conflict("addition", w, "")
    return None


def _zh_negation_inside(said: list[str], quoted: list[str], a: tuple[_Word, ...], b: tuple[_Word, ...],
                        i1: int, i2: int, j1: int, j2: int, ka: list[str], kb: list[str],
                        negations: frozenset[str]) -> Conflict | None:
    """One text's words are the other's with one negation more ("完全不符合" for "完全符合"), and the
    other has no negation within four words of the spot."""
    for x, y, other, o1, o2, quote_side in ((quoted, said, ka, i1, i2, True),
                                            (said, quoted, kb, j1, j2, False)):
        for k, w in enumerate(x):
            if w in negations and len(x) > 1 and "".join(x[:k] + x[k + 1:]) == "".join(y) \
                    and not _negated(other, max(0, o1 - _NEAR), min(len(other), o2 + _NEAR), negations):
                words = b[j1:j2] if quote_side else a[i1:i2]
                text = "".join(t for _k, t, _g in words)
                return Conflict("negation", "", text) if quote_side else Conflict("negation", text, "")
    return None


def _zh_not_qualifying(b: tuple[_Word, ...], j: int) -> bool:
    """Whether b[j], a Chinese qualifier, qualifies nothing here: 部分 or 一部分 after 有 ("也有一部分
    读者认为" says no more than "也有读者认为") or before anything but a noun, where it is the noun
    "part" ("叶缘部分含有蜜腺"; "该地区部分学校" counts); 所谓 but before 的 ("所谓“八音”，就是…"
    defines, "所谓，…" quotes a saying; "所谓的专家" doubts)."""
    word = b[j][1]
    if word in ("部分", "一部分"):
        return (j > 0 and b[j - 1][1].endswith("有")) or j + 1 >= len(b) or b[j + 1][2][:1] != "n"
    if word == "所谓":
        return j + 1 >= len(b) or b[j + 1][1] != "的"
    return False


def _qualified(a: tuple[_Word, ...], b: tuple[_Word, ...], i1: int, i2: int, j1: int,
               j2: int, zh: bool) -> Conflict | None:
    """The quote's change b[j1:j2] is one of EN_QUALIFIERS (ZH_QUALIFIERS), with small words at
    most, that the sentence holds nowhere (nor a weak modal): it says less than the sentence, or the
    opposite. In place of the sentence's words (a[i1:i2] not empty), only a prefix for one word
    ("non-profit" for "for-profit"), or 是非 for 是 (rjieba's cut of "是非恶性的" against "是恶性的")."""
    words = ZH_QUALIFIERS if zh else EN_QUALIFIERS
    if zh:
        if i2 - i1 == 1 and j2 - j1 == 1 and b[j1][1] == a[i1][1] + "非" \
                and not any(w[1] in words for w in a):
            return Conflict("qualified", a[i1][1], b[j1][1])
    said = [w[1] if zh else w[1].lower() for w in a]
    quoted = [w[1] if zh else w[1].lower() for w in b[j1:j2]]
    if i1 != i2:   # in place of the sentence's words: a prefix one for one ("non-profit", "for-profit")
        if zh or i2 - i1 != 1 or len(quoted) != 1 or quoted[0] not in EN_PREFIXES:
            return None
    # the qualifier alone, with small words at most: a word it qualifies, added with it, is no part
    # of what the sentence claims ("the supposedly unsinkable Titanic")
    if any(q not in words and not _minor(w, zh) and not (zh and q in ("不", "一定"))
           for q, w in zip(quoted, b[j1:j2], strict=True)):
        return None
    hits = [j for j, q in enumerate(quoted, j1) if q in words and not (zh and _zh_not_qualifying(b, j))
            and (zh or j == 0 or not b[j][1][:1].isupper())]   # (a title: "her single Sometimes")
    if zh and "不一定" in "".join(quoted):   # (rjieba cuts it 不 + 一定)
        hits.append(j1)
    if not hits:
        return None
    if zh:
        hedged = any(w in words or w in _ZH_WEAK for w in said) \
            or any(w in ZH_NEGATIONS for w in said[max(0, i1 - 1):i2])
    else:
        hedged = any(w in words or _weak_modal(a, i) for i, w in enumerate(said)) \
            or any(w[0] in EN_NEGATIONS for w in a[i1:i2])   # ("not often" says "rarely")
    return None if hedged else Conflict("qualified", _said(a, i1, i2), _said(b, j1, j2))


def _weak_modal(words: tuple[_Word, ...], i: int) -> bool:
    """Whether words[i] says it may be so: "may" in lower case (not the month or Theresa May),
    "might", "could" (not "could not", which says it was not so), "possibly" …"""
    w = words[i][1]
    if w.lower() not in _WEAK_MODALS or (w.lower() == "may" and w != "may"):
        return False
    nxt = words[i + 1][1].lower() if i + 1 < len(words) else ""
    if nxt in ("not", "n't") or nxt[:1].isdigit():
        return False
    return not (w == "may" and i > 0 and words[i - 1][1][:1].isupper() and i > 1)
# English quantifiers by how many they say: none, some, most, all
_QUANTIFIER_RANK = {"none": 0, "no": 0, "some": 1, "several": 1, "few": 1, "many": 1, "most": 2,
                    "majority": 2, "minority": 1, "all": 3, "every": 3, "each": 3}
_NEGATIVE_PREFIXES = ("un", "in", "im", "il", "ir", "non")
_ADJECTIVE_END = re.compile(
    r"(?:able|ible|al|ful|ive|ent|ant|ic|ous|ar|id|ate|ed|own|ly|ary|ory|ure|ite|ect|ial)$")
_NOT_PREFIXED = frozenset({"inflammable", "invaluable", "infamous", "impassioned", "inhabitable",
                           "unravelled", "irregardless"})


def _prefixed_opposite(said: str, quoted: str) -> bool:
    """An English adjective and its negative form: "valid" / "invalid", "achievable" /
    "unachievable", "legal" / "illegal" (not "inflammable", which means "flammable")."""
    x, y = said.lower(), quoted.lower()
    short, long = (x, y) if len(x) < len(y) else (y, x)
    if long in _NOT_PREFIXED or len(short) < 4 or not _ADJECTIVE_END.search(short):
        return False
    return any(long == p + short or long == p + "-" + short for p in _NEGATIVE_PREFIXES)


def _negated(keys: list[str], start: int, end: int, negations: frozenset[str]) -> bool:
    """Whether a negation stands in keys[start:end]; "not only", "no doubt", "no matter", "no
    later than", "none other than", "not unlike" and "not … until" negate nothing."""
    return any(keys[i] in negations and not _idiom(keys, i) for i in range(start, end))


def _idiom(keys: list[str], i: int) -> bool:
    """Whether the negation at keys[i] opens an idiom that denies nothing: "not only", "no more
    than" (at most), "none other than", "not unlike" (like), "did not open until 1932" (opened
    in 1932)."""
    if i >= 2 and keys[i - 1] == "or" and keys[i - 2] == "whether":
        return True   # "whether or not": either way
    after = keys[i + 1:i + 3]
    return bool(after) and (after[0] in _NOT_NEGATING or (after[0] in _THAN and after[1:] == ["than"])
                            or any(k in _UNTIL for k in keys[i + 1:i + 5]))


def _figure_value(key: str) -> str | None:
    """A word's figure, when it is one: digits ("1,200" and "1200" alike, "3rd" 3), an ordinal
    ("second" 2), a month or weekday, a Chinese numeral with its classifier ("第二次" "2次",
    "第2次" "2次"); else None. Figures of different sorts differ too ("May" is no "5")."""
    m = _FIGURE.fullmatch(key)
    if m:
        return m.group(1).replace(",", "")
    if key in _EN_NAMED_FIGURE:
        return _EN_NAMED_FIGURE[key]
    m = _ZH_FIGURE.fullmatch(key)
    if m:
        numeral, classifier = m.groups()
        value = int(numeral) if numeral.isdigit() else _cn_value(numeral)
        return None if value is None else f"{value}{classifier}"
    return None


def _near(words: tuple[_Word, ...], at: int, quoted: str) -> bool:
    """Whether the quote's figure `quoted` states what the sentence's figure at `at` says, as a
    rounded or hedged figure ("约300" or "超过300" for "302.44", "302.4" for "302.44")."""
    before = words[at - 1][1] if at > 0 else ""
    after = words[at + 1][1] if at + 1 < len(words) else ""
    said = words[at][1]
    if said.endswith(("%", "％")) and quoted.endswith(("%", "％")):
        said, quoted = said[:-1], quoted[:-1]   # "超过8%" for "8.5%": percents alike
    return figure_near(hedge_of(before, after), said, quoted)


def _said(words: tuple[_Word, ...], start: int, end: int) -> str:
    """The words from `start` to `end` as written (joined with spaces in English)."""
    run = [w for _k, w, _t in words[start:end]]
    if any(w[:1].isascii() for w in run):
        return " ".join(run).replace(" n't", "n't")
    return "".join(run)


# --- who said it ---------------------------------------------------------------------------------

# a verb that gives someone's words or view: "X said", "X told reporters", "X wrote that"
_EN_SPEECH = (r"(?:said|says|told|tells|wrote|writes|argued|argues|noted|notes|added|adds|cautioned|cautions|"
              r"warned|warns|stated|states|explained|explains|described|describes|predicted|predicts|"
              r"acknowledged|acknowledges|insisted|insists|stressed|stresses|emphasi[sz]ed|emphasi[sz]es|"
              r"contended|contends|observed|remarked|concluded|concludes|believes|believed|announced|"
              r"announces|testified|testifies|recalled|recalls|claimed|claims)")
_EN_SPEAKER = re.compile(
    r"(?P<name>(?:[A-Z][\w'’.-]*\s+){0,5}[A-Z][\w'’-]*)\s+" + _EN_SPEECH + r"\b"
    r"|\b" + _EN_SPEECH + r"\s+(?P<after>(?:[A-Z][\w'’.-]*\s+){0,4}[A-Z][\w'’-]*)(?=\s*[.,;]|\s*$)"
    r"|\baccording to (?P<source>(?:[A-Z][\w'’.-]*\s+){0,4}[A-Z][\w'’-]*)")
# capitalised words that give a speaker's role or stand for no one in particular, not a name
_EN_NOT_SPEAKERS = frozenset(
    "the a an he she they it we i you his her their its our this that these those there then but and "
    "chief executive officer ceo cfo coo cto chairman chairwoman chair president vice deputy senior "
    "assistant associate principal lead investigator dr mr mrs ms miss prof professor judge justice "
    "governor minister secretary senator sen rep representative mayor director commissioner general "
    "lieutenant colonel captain sir dame lord lady head manager spokesperson spokesman spokeswoman "
    "analyst analysts economist economists researcher researchers scientist scientists expert experts "
    "official officials officer officers doctor doctors state federal national county city company "
    "government ministry department agency police court study report reports survey data statement "
    "however meanwhile also in on at for by of to from with as after before when while".split())
_EN_SPEECH_WORD = re.compile(r"\b" + _EN_SPEECH + r"\b")
_ZH_SPEECH = re.compile(r"表示|认为|指出|强调|介绍|透露|坦言|回应称|说道|写道|称")


def unnamed_speaker(sentence: str, quote: str, record: str, lang: str) -> Conflict | None:
    """The sentence gives its words to a named person or body that the record never names, where
    the quote gives them to another, named one: "Chief Executive Officer Maren Lindqvist said
    Halvorsen now expects…" against "Okafor said the company now expects…", "王振华认为，…"
    against "李明远认为，…". A speaker is, in English, a capitalised run right before "said",
    "told", "wrote" … (or after it at the clause's end, or after "according to"), without role
    words ("Chief Executive Officer", "Dr.") and not a lone word opening the sentence
    ("Researchers said"); in Chinese a person's name (rjieba's nr, two to four characters)
    right before 表示, 认为, 指出 …. Every word of the sentence's speaker must be missing from the
    record, so a record that names the speaker anywhere, in any form, is no conflict, and the
    English quote's speaker must be missing from the sentence (a page need not name its
    publisher: "Popular Mechanics said that …" against the magazine's own words is no conflict).
    A Chinese quote need only give the words to someone (表示, 认为 …): its speaker may be no
    name rjieba tags ("教授李明远认为"), and the sentence's, a person's, is no publisher."""
    if not (_ZH_SPEECH if lang == "zh" else _EN_SPEECH_WORD).search(sentence):
        return None   # (most sentences name no speaker: no tagging, no name scan)
    if lang == "zh":
        # by role, where rjieba may cut the name ("陆景行" as 陆景 + 行): "恒远钢铁总经理陆景行表示，…"
        # against "协会副会长魏长松表示：“…”", the sentence's speaker named in the record, not the quote
        mine = {m.group(1) for m in _ZH_ROLE_SPEAKER.finditer(sentence)}
        theirs = [m.group(1) for m in _ZH_ROLE_SPEAKER.finditer(quote)] if mine else []
        if mine and theirs and not any(n in quote for n in mine) and not set(theirs) & mine \
                and any(n in record for n in mine):
            return Conflict("speaker", min(mine), theirs[0])
    said = _speakers(sentence, lang)
    if not said:
        return None
    if lang == "zh":   # (a person, by rjieba's tag: no publisher; the quote's speaker may be untagged)
        spoken = _ZH_SPEECH.search(quote)
        quoted = [quote[max(0, spoken.start() - 5):spoken.end()]] if spoken else []
    else:
        quoted = [w for names in _speakers(quote, lang, True) for w in names
                  if not re.search(rf"\b{re.escape(w.lower())}\b", sentence.lower())]
    if not quoted:
        return None
    low = record.lower()
    low_quote = quote.lower()
    for names in said:
        if lang == "zh":
            if not any(w in record or (len(w) == 3 and w[1:] in record) for w in names):
                return Conflict("speaker", "".join(names), quoted[0])
        elif not any(re.search(rf"\b{re.escape(w.lower())}\b", low) for w in names):
            return Conflict("speaker", " ".join(names), quoted[0])
        # a person the record names, not in the quote, whose quote gives the words to another by
        # name ("… said fisheries officer Morag Lennie" against "… said association secretary Alan
        # Buchan"); not an organisation ("the University of Chicago announced")
        elif len(names) >= 2 and not any(w.lower() in _EN_ORG_WORDS for w in names) \
                and not any(re.search(rf"\b{re.escape(w.lower())}\b", low_quote) for w in names) \
                and _EN_PERSON_SPEECH.search(sentence):
            return Conflict("speaker", " ".join(names), quoted[0])
    return None

    return None


# a Chinese speaker after the role that introduces them ("总经理陆景行表示", "副馆长欧阳琳回应称")
_ZH_ROLE_SPEAKER = re.compile(
    r"(?:总经理|董事长|总裁|局长|部长|副?会长|主任|教授|院长|馆长|副馆长|领袖|发言人|主席|秘书长|经理|学者|研究员|"
    r"分析师|首席[\u4e00-\u9fff]{1,4}官|书记|市长|省长|区长|县长|厂长|校长|队长|理事长)"
    r"([\u4e00-\u9fff]{2,3}|[\u4e00-\u9fff]{2,4}·[\u4e00-\u9fff]{2,4})"
    r"(?:在[^，。：；]{0,12})?(?:表示|认为|指出|强调|回应称|介绍|坦言|透露|称)")
_EN_ORG_WORDS = frozenset("university college company inc corp ltd ministry department council agency bank "
                          "group association institute authority board commission committee office union "
                          "party government police court service services foundation fund centre center "
                          "league club federation organisation organization".split())
_EN_PERSON_SPEECH = re.compile(r"\b(?:said|says|told|argued|warned|added|insisted|stressed|noted)\b")


# --- whose figure it is ---------------------------------------------------------------------------

_EN_LEAD_IN = re.compile(r"(?:(?:In|On|By|As of|During|Last|This|Earlier|Separately|Meanwhile)\b"
                         r"[^,]{0,40},\s+)?(?:(?:The|A|An)\s+)?")
_EN_CAP_WORD = re.compile(r"[A-Z][\w&'’.-]*")
_EN_SUBJECT_FIGURE = re.compile(
    r"(?<![\w.,])[$£€]?(\d[\d,]*(?:\.\d+)?)"
    r"(?:\s?(?:%|percent\b|per cent\b|million\b|billion\b|bn\b|trillion\b))?")
_EN_SENTENCE_CUT = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"“‘'])")


def _opening_name(text: str, speaker: bool = False) -> list[str]:
    """The name that opens an English sentence, as its words ("Kestrel Airways has committed …":
    ["Kestrel", "Airways"]; "In March, Dunmore Airport Holdings said …"), without role words; []
    unless it is two capitalised words or more, or an acronym ("NAAB"); [] too when a speech verb
    follows it, unless `speaker` (a speaker's figure may be whoever the words are about)."""
    at = _EN_LEAD_IN.match(text)
    pos = at.end() if at else 0
    words: list[str] = []
    while (m := _EN_CAP_WORD.match(text, pos)) is not None:
        words.append(m.group(0).removesuffix("'s").removesuffix("’s").rstrip("."))
        pos = m.end()
        if text[pos:pos + 1] != " ":
            break
        pos += 1
    after = text[pos:pos + 30]
    names = [w for w in words if w.lower() not in _EN_NOT_SPEAKERS and len(w) >= 2]
    if not speaker and (_EN_SPEECH_WORD.match(after)
                        or re.match(r"(?:has|had|have|was|is)\s+" + _EN_SPEECH, after)):
        return []
    if len(names) >= 2 or (len(names) == 1 and names[0].isupper() and len(names[0]) <= 6):
        return names
    return []


@lru_cache(maxsize=64)   # a record is lowered once, not once per sentence checked against it
def _lowered(text: str) -> str:
    return text.lower()


def _spelled_out(acronym: str, text: str) -> bool:
    """Whether a run of capitalised words in `text` starts with the acronym's letters ("NVSA" in
    "The National Vehicle Safety Administration said …")."""
    initials = "".join(w[0] for w in re.findall(r"\b[A-Z][a-z]+", text))
    return acronym.upper() in initials


def en_figure_subject(sentence: str, quote: str, record: str) -> Conflict | None:
    """English: the sentence gives a figure to the name that opens it, where the quote's sentence
    with that figure opens with another name and never names the sentence's ("Kestrel Airways has
    committed £14.5 million …" against "Dunmore Airport Holdings said … it would spend £14.5
    million …"), the record names the sentence's elsewhere (so it is another party of the story,
    not another name for the quote's), and no sentence of the record gives it that figure."""
    mine = _opening_name(sentence)
    if not mine:
        return None
    figures = {m.group(1).replace(",", "") for m in _EN_SUBJECT_FIGURE.finditer(sentence)}
    figures = {f for f in figures if not _YEAR.fullmatch(f) and (len(f.replace(".", "")) >= 2)}
    if not figures:
        return None
    low_record = _lowered(record)
    if not all(re.search(rf"\b{re.escape(w.lower())}\b", low_record) for w in mine):
        return None

    def names_mine(text: str) -> bool:
        low = text.lower()
        return any(re.search(rf"\b{re.escape(w.lower())}\b", low) for w in mine)

    quoted = _EN_SENTENCE_CUT.split(_ungrouped(quote))
    stated: list[str] | None = None   # the record's sentences, read once, if a figure gets that far
    for figure in sorted(figures):
        theirs = [q for q in quoted if _states(q, figure)]
        if not theirs or any(names_mine(q) for q in theirs):
            continue
        other = _opening_name(theirs[0], speaker=True)
        if not other or {w.lower() for w in other} & {w.lower() for w in mine} \
                or (len(mine) == 1 and _spelled_out(mine[0], theirs[0])):
            continue
        if stated is None:
            stated = _EN_SENTENCE_CUT.split(_ungrouped(record))
        if any(_states(r, figure) and names_mine(r) for r in stated):
            continue
        return Conflict("name", " ".join(mine), " ".join(other))
    return None


def _speakers(text: str, lang: str, lone: bool = False) -> list[list[str]]:
    """The names of who speaks in `text` (`unnamed_speaker`), each as its words; with `lone`, a
    lone word opening the text too ("Okafor said …")."""
    if lang == "zh":
        words = rjieba.tag(text)
        return [[w] for i, (w, tag) in enumerate(words[:-1])
                if tag == "nr" and 2 <= len(w) <= 4 and _ZH_SPEECH.match(words[i + 1][0])]
    out: list[list[str]] = []
    for m in _EN_SPEAKER.finditer(text):
        run = m.group("name") or m.group("after") or m.group("source")
        start = m.start("name") if m.group("name") else -1
        names = [w.strip(".'’").removesuffix("'s").removesuffix("’s") for w in run.split()]
        names = [w for w in names if w.lower() not in _EN_NOT_SPEAKERS and len(w) >= 2]
        opening = start == 0 or (start > 0 and text[start - 1] in "\"“'‘")
        if names and (lone or not (opening and len(names) < 2)):
            out.append(names)   # not "Researchers said", "Officials told …": a sentence's first word
    return out


# --- done, where the quote says it is still to come ------------------------------------------------

# what says a thing is still to come or undecided, before its verb in a Chinese clause: "正在研究将…纳入",
# "提出将…延长", "将由…公布", "暂缓开通", "预计…投入使用", "需待…后方能落地"
_ZH_PENDING = re.compile(r"正在研究|正在考虑|研究将|提出将|拟|计划|打算|准备|将由|将于|将在|暂缓|推迟|预计|"
                         r"有望|需待|尚待|有待|待定|尚未|还未|仍未|未能")
_ZH_CLAUSE = re.compile(r"[，。；！？,;!?]")


def zh_done_but_pending(words: tuple[_Word, ...], quote: str) -> Conflict | None:
    """Chinese: the sentence (its `_zh_words`) says it is done (已 before its verb: "已将EV71疫苗
    纳入…", "已于4月公布…") where every clause of the quote that has that verb says it is still to
    come or undecided ("正在研究将EV71疫苗纳入…", "最终名单将由国家游泳队于5月公布", "暂缓开通"),
    and none of them says it is done."""
    for i, (_k, w, _tag) in enumerate(words):
        # (rjieba may join 已 to the word before it: "国家卫生健康委已于": "委已")
        if not (w.startswith("已") or (len(w) == 2 and w.endswith("已"))) \
                or w in ("已故", "已婚", "已知", "已往"):
            continue
        at = next((k for k in range(i + 1, min(i + 9, len(words)))
                   if words[k][2].startswith("v") and len(words[k][1]) >= 2), None)
        if at is None or words[at][1] not in quote:
            continue
        verb = words[at][1]
        # the clauses of the verb that name what the sentence names between 已 and it ("已在澳大利亚
        # 和新西兰上映" against "于2月7日在北美上映…将于3月在澳大利亚和新西兰上映"), when any does
        named = [w for _k, w, t in words[i + 1:at] if t[:1] == "n" and len(w) >= 2]
        spots = []
        for m in re.finditer(re.escape(verb), quote):
            opens = max((c.end() for c in _ZH_CLAUSE.finditer(quote, 0, m.start())), default=0)
            spots.append((opens, m, any(w in quote[opens:m.start()] for w in named)))
        if any(hit for _o, _m, hit in spots):
            spots = [x for x in spots if x[2]]
        pending: list[str] = []
        for opens, m, _hit in spots:
            before = quote[opens:m.start()]
            marker = _ZH_PENDING.search(before)
            if marker is None or "已" in before[marker.end():] or "已" in before[:marker.start()]:
                pending = []
                break
            pending.append(quote[opens:m.end()])
        if pending:
            return Conflict("plan", "".join(x for _k, x, _t in words[i:at + 1]), pending[0])
    return None


# an English figure and the year right after it that dates it: "310,000 naloxone kits in 2024"
# (up to six words between: "14 battery-related recall campaigns for electric vehicles in 2024"; not
# a clause's conjunction: "14 recalls and fires in 2024")
_EN_FIGURE_YEAR = re.compile(
    r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?)(?:%| percent)?"
    r"((?:[ \t]+(?!(?:in|and|or|but|while|whereas)\b)[A-Za-z-]+){0,6})[ \t]+in[ \t]+((?:19|20)\d\d)\b")


_EN_NUM = r"(\d[\d,]*(?:\.\d+)?)"
# a figure and the one it changed from: "to 2.1 tonnes … from 2.5 tonnes", "from 2.5 to 2.1", "14 …, up
# from 9"
_EN_NOT_YEAR = r"(?!(?:19|20)\d\d(?![\d,.]))"
_EN_GAP = r"(?:[^.;!?\d]|(?<!\d)(?:19|20)\d\d(?!\d))"   # no figure between, but a year may be
_EN_TO_FROM = re.compile(
    r"\bto[ \t]+(?:about[ \t]+|around[ \t]+|roughly[ \t]+|nearly[ \t]+)?[$£€]?" + _EN_NOT_YEAR + _EN_NUM
    + r"(?![\d,])" + _EN_GAP + r"{0,50}?\bfrom[ \t]+[$£€]?" + _EN_NOT_YEAR + _EN_NUM
    + r"|\bfrom[ \t]+[$£€]?" + _EN_NOT_YEAR + _EN_NUM + r"(?![\d,])" + _EN_GAP + r"{0,30}?\bto[ \t]+[$£€]?"
    + _EN_NOT_YEAR + _EN_NUM
    + r"|(?<![\w.,])" + _EN_NOT_YEAR + _EN_NUM + r"(?![\d,])" + _EN_GAP
    + r"{0,60}?,?[ \t]+(?:up|down)[ \t]+from[ \t]+[$£€]?" + _EN_NOT_YEAR + _EN_NUM,
    re.IGNORECASE)


def _en_changes_from(text: str) -> set[tuple[str, str]]:
    """Each (figure, the figure it changed from) of an English text."""
    out: set[tuple[str, str]] = set()
    for m in _EN_TO_FROM.finditer(text):
        g = m.groups()
        now, before = (g[0], g[1]) if g[0] else (g[3], g[2]) if g[2] else (g[4], g[5])
        out.add((now.replace(",", "").rstrip("."), before.replace(",", "").rstrip(".")))
    return out


def _en_from_to_swapped(sentence: str, quote: str) -> Conflict | None:
    """English: the sentence gives a change the other way round from its quote: "fell to 2.5
    tonnes … from 2.1 tonnes" against "dropped to 2.1 tonnes … from 2.5 tonnes"; "fell to 9 …
    from 14" against "14 …, up from 9"."""
    said = _en_changes_from(sentence)
    if not said:
        return None
    quoted = _en_changes_from(quote)
    for now, before in sorted(said):
        if now != before and (before, now) in quoted and (now, before) not in quoted:
            return Conflict("swap", f"{now} from {before}", f"{before} from {now}")
    return None


def en_year_moved(sentence: str, quote: str) -> Conflict | None:
    """English: the sentence dates a figure by a year ("310,000 naloxone kits in 2023") that the
    quote gives another figure, while the quote dates the sentence's figure by another year ("…
    310,000 naloxone kits in 2024, up from 145,000 in 2023"): the figures moved between years."""
    said = [(m.group(1).replace(",", ""), m.group(3)) for m in _EN_FIGURE_YEAR.finditer(sentence)]
    if not said:
        return None
    quoted = [(m.group(1).replace(",", ""), m.group(3)) for m in _EN_FIGURE_YEAR.finditer(quote)]
    for figure, year in said:
        if (figure, year) in quoted or _YEAR.fullmatch(figure):
            continue
        others = [y for f, y in quoted if f == figure and y != year]
        if others and any(y == year and f != figure for f, y in quoted):
            return Conflict("figure", f"{figure} … {year}", f"{figure} … {others[0]}")
    return None
