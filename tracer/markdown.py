"""One scan over a markdown report: protected regions and the trailing references section.

Protected regions are never prose and never receive a citation marker. Block regions
(front matter, code, HTML blocks, math blocks, headings, tables, thematic breaks, link
reference definitions) cover whole lines *including* their line terminator; inline regions
(code spans, links, images, autolinks, bare URLs, HTML tags, inline math) cover just the
construct. `tracer.segment` relies on that difference to tell block lines from prose lines.
See docs/segmentation.md.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from tracer.models import Layout, Span
from tracer.text import title_key

# --- block-level patterns (matched against one line without its terminator) ---------------
_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")  # any indent: fences nest in list items
# group 2 keeps any closing "#"s (`_atx_text` drops them): a lazy title before an optional closing
# sequence was tried at every length, and a heading with a long run of spaces took seconds
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
_SETEXT_EQ = re.compile(r"^ {0,3}=+[ \t]*$")
_SETEXT_DASH = re.compile(r"^ {0,3}-+[ \t]*$")
# markers after a sentence's end ("… in 2023.[1]", "…。【2】"), read past to find that end
_TRAILING_MARKS = re.compile(
    r"(?:[ \t]*+(?:\[[^\[\]\n]{1,20}\]|【[^【】\n]{1,20}】|<sup>[^<>\n]{1,40}</sup>))++[ \t]*+\Z")
_STATEMENT_END = re.compile(r"[.。][\"'”’)）*_]*[ \t]*$")   # not "?": "Why prices rose?" is a title
_THEMATIC = re.compile(r"^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_TABLE_DELIM = re.compile(r"^[ \t]*+\|?[ \t]*+:?-++:?[ \t]*+(?:\|[ \t]*+:?-++:?[ \t]*+)*+\|?[ \t]*+$")
_LINK_DEF = re.compile(r"^ {0,3}\[(\^?[^\]\n]+)\]:(?:[ \t]|$)")
_QUOTE_PREFIX = re.compile(r" {0,3}(?:>[ \t]?)+")


def _quote_depth(line: str) -> int:
    """How many ">" open the line ("> > a" and ">>a": 2)."""
    m = _QUOTE_PREFIX.match(line)
    return m.group(0).count(">") if m else 0
# a line that starts another block ends a table (GFM), even with a pipe in it
_ENDS_TABLE = re.compile(r" {0,3}(?:#{1,6}(?:[ \t]|$)|>|`{3,}|~{3,}|[-*+][ \t]|\d{1,9}[.)][ \t])")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+•][ \t]+|\d{1,3}[.)][ \t]+|\d{1,3}、)")
_HTML_COMMENT_OPEN = re.compile(r"^ {0,3}<!--")
_HTML_HEADING = re.compile(r"<h([1-6])(?:\s[^>]*)?>(.{1,200}?)</h\1>", re.IGNORECASE)
_HTML_RAW_OPEN = re.compile(r"^ {0,3}<(script|pre|style|textarea)(?:[\s>]|$)", re.IGNORECASE)
_HTML_BLOCK_TAGS = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|"
    "dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h1|h2|h3|h4|h5|h6|"
    "head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|"
    "p|param|search|section|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul"
)
_HTML_BLOCK_OPEN = re.compile(rf"^ {{0,3}}</?(?:{_HTML_BLOCK_TAGS})(?:[\s/>]|$)", re.IGNORECASE)
_HTML_LONE_TAG = re.compile(
    r"^ {0,3}(?:<[A-Za-z][A-Za-z0-9-]*+(?:\s++[^<>]*+)?/?>|</[A-Za-z][A-Za-z0-9-]*+\s*+>)[ \t]*+$"
)
# "$$", "\[" or a LaTeX math environment alone on its line ("\begin{equation}", "\begin{align*}")
_MATH_BLOCK_OPEN = re.compile(
    r"^[ \t]*(\$\$|\\\[|\\begin\{((?:equation|align|alignat|flalign|gather|multline|eqnarray"
    r"|displaymath|math|split)\*?)\}(?:[ \t]*\\label\{[^{}\n]{0,80}\})?[ \t]*$)")
_INDENTED = re.compile(r"^(?: {4}|\t)")
_FRONT_OPEN = re.compile(r"^(---|\+\+\+)[ \t]*$")
_FRONT_KEY = re.compile(r"^[A-Za-z_][\w.-]*[ \t]*[:=]")  # a YAML / TOML key opens front matter

#: The tail ChatGPT leaves after a sentence it wraps in "^[…]" when its answer is copied:
#: '^[A sentence.]({"attribution":{"attributableIndex":"1009-1"}})'. Not a link (tracer.existing
#: reads its halves as markers citing nothing).
ATTRIBUTION_TAIL = (r'\(\{\s*"attribution"\s*:\s*\{\s*"attributableIndex"\s*:\s*"[\d-]{1,20}"'
                    r'\s*\}\s*\}\)')

# --- inline patterns (one alternation; leftmost match wins, alternatives in precedence order) ---
_INLINE = re.compile(
    r"""
      (?P<autolink><(?:https?|ftp|mailto):[^<>\s]+>|<[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}>)
    | (?P<comment><!--[\s\S]*?-->)
    | (?P<tag></?[A-Za-z][A-Za-z0-9-]*+(?:\s++(?:"[^"\n]*+"|'[^'\n]*+'|[^<>"'\n])*+)?/?>)
    | (?P<link>!?\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\](?!\(\{\s*"attribution")
          \((?:[^()\s]|\([^()\s]*\))*(?:\s+(?:"[^"\n]*"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*\))
    | (?P<reflink>!?\[(?:[^\[\]\n]|\[[^\[\]\n]*\])+\]\[(?P<label>[^\[\]\n]*)\])
    | (?P<dmath>\$\$(?:(?!\n[ \t]*\r?\n)[\s\S])+?\$\$)
    | (?P<math>(?<![\\$])\$(?=[^\s$])(?:[^$\n\\]|\\.)+?(?<=[^\s\\])\$(?!\d))
    | (?P<pmath>\\\((?:(?!\n[ \t]*\r?\n)[\s\S])+?\\\)|\\\[(?:(?!\n[ \t]*\r?\n)[\s\S])+?\\\])
    | (?P<url>(?:https?://|www\.)[^\s<>"`\[\]\u3000-\u303f\uff00-\uffef\u4e00-\u9fff]+
          # brackets the URL goes on after are its own ("?ids[1]=2", "data[1]/t.csv"); not a
          # marker after it, before punctuation ("https://x.org[1].")
          (?:\[[^\s<>"`\[\]]{1,40}\](?=[A-Za-z0-9/=&%\#?_~+-]|\.[A-Za-z0-9])
              [^\s<>"`\[\]\u3000-\u303f\uff00-\uffef\u4e00-\u9fff]+)*)
    | (?P<entity>&(?:[A-Za-z][A-Za-z0-9]{1,31}|\#[0-9]{1,7}|\#[xX][0-9A-Fa-f]{1,6});)
    | (?P<shortcode>(?<![A-Za-z0-9_:]):(?:[a-z][a-z0-9_+-]{0,40}|[+-]1):(?![A-Za-z0-9_]))
    """,
    re.VERBOSE,
)
_URL_TRAIL = ".,;:!?'\"*_~"
# inline HTML elements whose content is no prose of the report's (code, keys, a link's text): the
# element is one region from its opening tag to its closing tag, if that comes before a blank line
_ELEMENT_OPEN = re.compile(r"<(code|kbd|samp|tt|var|math|a(?=\s[^<>]*?\bhref\s*=))(?=[\s>])", re.IGNORECASE)
_ELEMENT_ANY_OPEN = re.compile(r"<(code|kbd|samp|tt|var|math|a)(?=[\s>])", re.IGNORECASE)
_ELEMENT_CLOSE = re.compile(r"</(code|kbd|samp|tt|var|a|math)\s*>", re.IGNORECASE)
# "[1]", "[1, 2]", "[^1]", "[1－3]": a marker, not link text
_NUMBERISH = re.compile(r"\^?[\d\s,，、;；\-–—~～‐‑‒−－至]+\^?")   # Bing "[^1^]" too
_MAX_CANDIDATES = 16

# --- references headings ------------------------------------------------------------------------
_REF_TITLES = frozenset(
    {
        "references", "reference", "sources", "source", "source(s)", "bibliography", "works cited",
        "works consulted",
        "citations", "reference articles", "further reading", "further readings", "reference list",
        "references and sources", "sources and references", "参考文献", "参考资料", "参考文章",
        "参考来源", "引用", "引用来源", "来源", "资料来源", "信息来源", "数据来源", "参考链接",
        "引用文献", "参考", "reference links", "source links", "引文", "文献", "参考书目",
        "参考网址", "参考网站", "参考出处", "文献来源", "引用资料", "引用链接",
        "learn more", "了解详细信息",   # Copilot's list of its sources
    }
)
# Bing's exported chat: "Source: Conversation with Bing, 12/3/2023" over "(1) Title. https://…" (and
# Copilot's, as Bing Chat was renamed: "Source: Conversation with Copilot, 5/14/2024")
_BING_TITLE = re.compile(
    r"(?:sources?|源|来源)[ \t]*[:：][ \t]*"
    r"(?:conversation with (?:bing|copilot)|与[ \t]*(?:必应|copilot)的对话)\b")
# titles that head other lists too ("## Sources" over data points, "## 引用" over famous quotes): a
# section under one whose entries are mostly figures or quotations is no references list
_LOOSE_TITLES = frozenset({"sources", "source", "source(s)", "citations", "引用", "来源", "信息来源",
                           "数据来源", "资料来源", "引文", "参考"})
_INVISIBLE = re.compile("[\u200b-\u200d\u2060\ufeff]")
_APPENDIX = re.compile(r"^(?:附录|附|appendix(?:\s+[a-z\d]{1,3})?)\s*[:：.、\-–—]\s*", re.IGNORECASE)
# "主要参考文献", "参考文献列表", "参考文献（按引用顺序）", "References (selected)", "Key Sources",
# "Sources Used", "Works Consulted"
_TITLE_MODIFIERS = re.compile(r"^主要|(?:列表|清单|目录)$|\s*[（(](?!单位)[^（）()]{1,20}[)）]$"
                              r"|^(?:key|main|selected|cited|list of)\s+"
                              r"|\s+(?:used|cited|consulted|referenced)$")
_CHAPTER = re.compile(r"^第[一二三四五六七八九十百\d]{1,4}(?:章|节|部分|篇)\s*[:：.、]?\s*")
_CJK_SPACED = re.compile(r"(?<=[\u4e00-\u9fff])[ \t\u3000]+(?=[\u4e00-\u9fff])")
# headings over more reading: after the references list, such a section stays the report's
_LINKS_TITLES = frozenset({"links", "useful links", "related links", "相关链接", "链接", "延伸阅读",
                           "扩展阅读", "相关阅读"})
# headings over notes or links, and over an author's references list too: "## Notes" holding
# "1. Title. https://…" entries the body cites as "[1]" (`notes_title`)
_NOTES_TITLES = _LINKS_TITLES | {"notes", "endnotes", "footnotes", "注释", "注", "脚注", "尾注"}
_REF_COMPANIONS = frozenset(
    {"notes", "links", "data", "further reading", "延伸阅读", "相关链接", "注释", "资料", "说明"}
)
_SENTENCE_END = re.compile(r"[.!?。！？][\"'”’)）*_]*[ \t]*$")
_TITLE_JOINERS = re.compile(
    r"\s*(?:\band\b|&|/|与|和|及|、|,|，|[()（）])\s*"
    r"|(?<=[\u4e00-\u9fff])\s+(?=[A-Za-z])|(?<=[A-Za-z])\s+(?=[\u4e00-\u9fff])"
)
_NUMBERING = re.compile(
    r"^(?:\d+(?:\.\d+)*[.)、]?|[一二三四五六七八九十百]+[、.．]|[IVXLC]+[.)]|[（(][一二三四五六七八九十\d]+[)）])\s*"
)
_BOLD_LINE = re.compile(r"^ {0,3}(\*\*|__)(?P<text>[^*_\n].*?)(?:\1)[ \t]*+(?:[:：][ \t]*+)?$")

#: The word a writer puts before a source's number: "[ref1]", "[Ref. 2]", "[doc1]" (Azure OpenAI's
#: "on your data"), "[Source 1]", "[来源2]", "【参考文献3】", "(ref. 2)", "（来源：2）".
#: Only words that name a source and nothing else: "[Document 1]", "【资料1】", "（文献1）" are how
#: contracts and lists label their own parts.
CITATION_LABEL_WORD = (r"(?:(?i:refs?|references?|docs?|sources?)\.?"
                       r"|来源|参考文献|参考资料|参考|引用|出处|信源)")
#: The cue word an author puts in a citation's parenthesis: "(see [1])", "(Source: [1])", "（参见[1]）".
CITATION_CUE = (r"(?:(?i:see|cf\.|source|sources|via|from|refs?\.?|references?)[ \t]*+:?[ \t]*+"
                r"|(?:参见|详见|见|来源|出处|资料来源|参考文献|参考|引用)[ \t]*+[:：]?[ \t]*+)")
_LABELLED_NUMBER = rf"[\[【]{CITATION_LABEL_WORD}[ \t]*(?:[:：][ \t]*)?\d{{1,4}}[\]】]"
# "[1][3]", "[2:0†L10-L20][doc3]", "[ref1][ref2]": a run of citation markers, not a reference link
# (its label is a citation's, defined by the references list), even where the list defines it
_CITE_LABEL = re.compile(rf"\d{{1,4}}|{CITATION_LABEL_WORD}[ \t]*(?:[:：][ \t]*)?\d{{1,4}}")
_CITE_INNER = re.compile(rf"\^?[\d\s,，、;；\-–—~～‐‑‒−－至]+"
                         rf"|{CITATION_LABEL_WORD}[ \t]*+(?:[:：][ \t]*+)?[\d ,，\-–]+"
                         rf"|\d{{1,4}}(?::\d{{1,4}})?†[^\[\]†\n]{{0,60}}")
# a line that looks like an entry of a references list
_REF_ENTRY = re.compile(
    r"^[ \t]*(?:[-*+•][ \t]+|\d{1,4}[.)、][ \t]*|\\?\[\^?[\w.-]+\\?\]|\[[ \t]\d{1,4}[ \t]?\]"
    r"|[【［〔]\d+[】］〕]|[（(]\d+[)）]"
    r"|\^\d+|[①-⑳]|\\?" + _LABELLED_NUMBER + ")"
)
#: A link's "](" (not a chat app's marker shaped like one: ChatGPT's ']({"attribution":…})' tail, Grok's
#: "[](grok_render_citation_card_json=…)", Gemini's "[span_1](start_span)").
LINK_OPEN = r"\]\((?!\{|grok_render|(?:start|end)_span\))"
_STRONG_REF = re.compile(
    rf"(?:https?://|www\.|{LINK_OPEN}|doi\.org|\bdoi:|arxiv"
    r"|^[ \t]*(?:\\?\[[ \t]?\^?\d+[ \t]?\\?\]|[【［〔]\d+[】］〕]))",
    re.IGNORECASE,
)
# an unnumbered citation line: 'Reuters, "Tesla deliveries", Jan 2024.' / 《报告》，国家统计局，2023
# a table row numbered in its first cell: "| 1 | Alpha report | https://… |"
_TABLE_ENTRY = re.compile(r"^[ \t]*\|[ \t]*\[?\d{1,4}\]?[ \t]*\|")
_CITATION_HINT = re.compile(
    r"(?:\b(?:19|20)\d\d\b|《|“|\"|\bet al\b|\bretrieved\b|\baccessed\b|访问|检索|出版社|\bpress\b)",
    re.IGNORECASE,
)


@dataclass(slots=True)
class _Line:
    start: int        # offset of the first character
    end: int          # offset after the content (before "\r\n" / "\n")
    next: int         # offset of the next line (after the terminator)
    text: str


def _split_lines(text: str) -> list[_Line]:
    lines: list[_Line] = []
    pos = 1 if text.startswith("\ufeff") else 0   # a byte-order mark opens no line's text
    n = len(text)
    while pos < n:
        nl = text.find("\n", pos)
        if nl < 0:
            end = nxt = n
        else:
            end, nxt = nl, nl + 1
        content_end = end - 1 if end > pos and text[end - 1] == "\r" else end
        lines.append(_Line(pos, content_end, nxt, text[pos:content_end]))
        pos = nxt
    return lines


def _atx_text(raw: str) -> str:
    """An ATX heading's text without its closing sequence ("Sub ##" -> "Sub", "C#" stays)."""
    t = raw.rstrip(" \t")
    bare = t.rstrip("#")
    if bare != t and (not bare or bare[-1] in " \t"):
        t = bare.rstrip(" \t")
    return t


_LABEL_SPACE = re.compile(r"[ \t\r\n]+")


def link_label(raw: str) -> str:
    """A link label as CommonMark matches it: spaces, tabs and line breaks collapsed, case folded."""
    return _LABEL_SPACE.sub(" ", raw).strip().casefold()


def heading_title(line: str) -> str:
    """The visible text of a heading line (ATX, setext text line or bold pseudo-heading)."""
    m = _ATX.match(line)
    s = _atx_text(m.group(2) or "") if m else line.strip()
    b = _BOLD_LINE.match(s)
    if b:
        s = b.group("text")
    return s.strip().strip("*_").strip()


def is_references_title(title: str) -> bool:
    """True when a heading's text names a references section ("5. References:", "参考文献：")."""
    return references_title(title) is not None


def _title_words(title: str) -> str | None:
    """A heading's text without what decorates it: invisible characters, emphasis, a leading emoji,
    "Appendix:", spaces between Chinese characters, its numbering or chapter, a trailing colon;
    casefolded. None for a sentence (over 120 characters)."""
    s = _INVISIBLE.sub("", title).strip().strip("*_ \t").strip()
    if len(s) > 120:
        return None                            # a sentence, not a title (and no regex runs over it)
    s = re.sub(r"^[^\w(（]+", "", s)          # leading emoji / symbols
    s = _APPENDIX.sub("", s, count=1)         # "附录：参考文献", "Appendix: References"
    s = _CJK_SPACED.sub("", s)                # "参 考 文 献"
    s = _NUMBERING.sub("", s, count=1)
    s = _CHAPTER.sub("", s, count=1)          # "第七章 参考文献"
    return s.strip().strip("*_ \t").rstrip(":：").strip().strip("*_").strip().casefold()


def notes_title(title: str) -> bool:
    """Whether a heading's text names notes or links ("## Notes", "## 相关链接"): a section that
    is the references only when what it holds is a list of sources the body cites by number
    (`_trailing_definitions`), where a `references_title` heads one whatever the body cites."""
    return _title_words(title) in _NOTES_TITLES


def references_title(title: str) -> str | None:
    """The references title a heading's text names, normalised ("5. References:" and "**Further
    Reading**" give "references" and "further reading"), or None."""
    s = _title_words(title)
    if s is None:
        return None
    if s in _REF_TITLES:
        return s
    if _BING_TITLE.match(s):
        return "sources"
    bare = _TITLE_MODIFIERS.sub("", s).strip()
    if bare != s and bare in _REF_TITLES:
        return bare
    # "References and Further Reading", "Notes & Sources", "参考文献与资料来源"
    parts = [p for p in _TITLE_JOINERS.split(s) if p]
    if (
        len(parts) > 1
        and all(p in _REF_TITLES or p in _REF_COMPANIONS for p in parts)
        and any(p in _REF_TITLES for p in parts)
    ):
        return next((p for p in parts if p in _REF_TITLES and p not in _LOOSE_TITLES), "sources")
    return None


class _Blocks:
    """Accumulates block regions while scanning lines."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.headings: list[Span] = []

    def add(self, lines: list[_Line], i: int, j: int) -> None:
        """Protect lines[i..j] inclusive, including the last line's terminator."""
        self.spans.append((lines[i].start, lines[j].next))


def scan_markdown(text: str, *, find_references: bool = True, titles: Collection[str] = ()) -> Layout:
    """Mark protected regions and find the trailing references section (see module doc).

    With find_references=False the whole text is body (used to re-scan a traced output's body).
    `titles`, the records' titles, let a headingless list of titles alone at the end be the
    references (`_trailing_titles`).
    """
    lines = _split_lines(text)
    blocks = _Blocks()
    candidates: list[int] = []        # line indices of references headings (outside code)
    plain: set[int] = set()           # candidates that are plain text lines ("References:")
    heading_lines: set[int] = set()   # line indices that are headings (for the trailing test)
    label_lines: list[tuple[str, int]] = []   # (label, where its definition starts)
    table_rows: list[Span] = []
    n = len(lines)
    i = 0
    last_line: dict[str, int] = {}  # a math closer -> the last line that holds it

    # front matter: only at the very start
    if n > 1 and _FRONT_OPEN.match(lines[0].text) and _FRONT_KEY.match(lines[1].text):
        close = "---" if lines[0].text.startswith("-") else "+++"
        for j in range(1, n):
            t = lines[j].text.rstrip()
            if t == close or (close == "---" and t == "..."):
                blocks.add(lines, 0, j)
                i = j + 1
                break

    para_start = -1                   # index of first line of the current paragraph, -1 if none
    list_ctx = False                  # inside a list (indented lines are continuations, not code)
    para_list = False                 # the current paragraph is a list item
    while i < n:
        line = lines[i]
        t = line.text
        if not t.strip():
            para_start = -1
            i += 1
            continue
        indented = bool(_INDENTED.match(t))
        # fenced code (unclosed runs to the end)
        fm = _FENCE_OPEN.match(t)
        if fm and not (fm.group(1)[0] == "`" and "`" in fm.group(2)):
            fence = fm.group(1)
            j = i + 1
            close_re = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
            while j < n and not close_re.match(lines[j].text):
                j += 1
            j = min(j, n - 1)
            blocks.add(lines, i, j)
            para_start = -1
            if t[:1] not in (" ", "\t"):
                list_ctx = False          # a fence at the margin ends the list
            i = j + 1
            continue
        if indented and para_start < 0 and not list_ctx:
            j = i
            while j + 1 < n and (not lines[j + 1].text.strip() or _INDENTED.match(lines[j + 1].text)):
                j += 1
            while j > i and not lines[j].text.strip():
                j -= 1
            blocks.add(lines, i, j)
            i = j + 1
            continue
        if not indented and not _LIST_ITEM.match(t):
            list_ctx = False
        # math block
        mm = _MATH_BLOCK_OPEN.match(t)
        if mm and (para_start < 0 or t.strip() in ("$$", "\\[") or mm.group(2)):  # an opener alone breaks a
            # paragraph; a LaTeX environment ("\begin{equation}" … "\end{equation}") is math too
            closer = "$$" if mm.group(1) == "$$" else f"\\end{{{mm.group(2)}}}" if mm.group(2) else "\\]"
            rest = t[mm.end():]
            j = i
            if closer not in rest:
                if closer not in last_line:  # the last line holding it: none after it can close
                    last_line[closer] = next((k for k in range(n - 1, -1, -1) if closer in lines[k].text), -1)
                if last_line[closer] > i:
                    j = i + 1
                    while closer not in lines[j].text:
                        j += 1
                # else unclosed: only the opening line is math
            blocks.add(lines, i, j)
            i = j + 1
            continue
        # HTML blocks
        if t.lstrip().startswith("<"):
            end_j = -1
            if _HTML_COMMENT_OPEN.match(t):
                end_j = _find_line(lines, i, "-->")
            else:
                rm = _HTML_RAW_OPEN.match(t)
                if rm:
                    end_j = _find_line(lines, i, f"</{rm.group(1).lower()}>", casefold=True)
                elif _HTML_BLOCK_OPEN.match(t) or (para_start < 0 and _HTML_LONE_TAG.match(t)):
                    end_j = i
                    while end_j + 1 < n and lines[end_j + 1].text.strip():
                        end_j += 1
            if end_j >= 0:
                hm = _HTML_HEADING.fullmatch(t.strip()) if not _HTML_COMMENT_OPEN.match(t) else None
                if hm and end_j > i:      # "<h2>References</h2>" over "<ol>": a block of its own
                    blocks.add(lines, i, i)
                    blocks.add(lines, i + 1, end_j)
                else:
                    blocks.add(lines, i, end_j)
                if hm and is_references_title(re.sub(r"<[^>]*>", "", hm.group(2))):
                    candidates.append(i)       # "<h2>References</h2>"
                    heading_lines.add(i)
                para_start = -1
                i = end_j + 1
                continue
        # ATX heading
        if _ATX.match(t):
            blocks.add(lines, i, i)
            blocks.headings.append((line.start, line.end))
            heading_lines.add(i)
            if is_references_title(heading_title(t)):
                candidates.append(i)
            para_start = -1
            i += 1
            continue
        # setext heading: a one-line paragraph followed by === or --- (not a sentence, with its end
        # punctuation and markers, over "---": a rule meant under its paragraph, which stays prose)
        if para_start == i - 1 >= 0 and not para_list and (_SETEXT_EQ.match(t) or _SETEXT_DASH.match(t)) \
                and not (_THEMATIC.match(t) and _STATEMENT_END.search(
                    _TRAILING_MARKS.sub("", lines[i - 1].text[-300:]))):   # (its end only: linear)
            blocks.add(lines, i - 1, i)
            blocks.headings.append((lines[i - 1].start, line.end))
            heading_lines.add(i - 1)
            if is_references_title(lines[i - 1].text):
                candidates.append(i - 1)
            para_start = -1
            i += 1
            continue
        # under a longer paragraph the underline makes it a heading too, but its lines stay prose
        # (a "---" meant as a break is common there); the underline itself is never prose, or a
        # marker after it ("===[1]") would unmake the heading
        if para_start >= 0 and not para_list and (_SETEXT_EQ.match(t) or _SETEXT_DASH.match(t)):
            blocks.add(lines, i, i)
            para_start = -1
            i += 1
            continue
        if _THEMATIC.match(t):
            blocks.add(lines, i, i)
            para_start = -1
            i += 1
            continue
        # a table in a quote ("> | a | b |", "> |---|---|"): protected whole, its rows no sentences
        # (read as prose, its header and delimiter joined a sentence and a marker went past the last
        # pipe, where GFM drops it)
        qm = _QUOTE_PREFIX.match(t) if "|" in t and t.lstrip().startswith(">") else None
        depth = qm.group(0).count(">") if qm else 0
        if qm and i + 1 < n and _quote_depth(lines[i + 1].text) == depth and "|" in lines[i + 1].text \
                and _TABLE_DELIM.match(_QUOTE_PREFIX.sub("", lines[i + 1].text, count=1)):
            j = i + 1
            while j + 1 < n and _quote_depth(lines[j + 1].text) == depth and "|" in lines[j + 1].text:
                j += 1
            blocks.add(lines, i, j)
            para_start = -1
            i = j + 1
            continue
        # tables: a header row followed by a delimiter row, then rows with pipes
        if "|" in t and i + 1 < n and _TABLE_DELIM.match(lines[i + 1].text) and "|" in lines[i + 1].text:
            j = i + 1
            while j + 1 < n and "|" in lines[j + 1].text and lines[j + 1].text.strip() \
                    and not _ENDS_TABLE.match(lines[j + 1].text):
                j += 1
            blocks.add(lines, i, j)
            table_rows.extend((lines[k].start, lines[k].end) for k in range(i + 2, j + 1))
            para_start = -1
            i = j + 1
            continue
        ts = t.strip()
        if len(ts) > 1 and ts.startswith("|") and ts.endswith("|"):
            blocks.add(lines, i, i)
            para_start = -1
            i += 1
            continue
        # link reference / footnote definitions (with indented continuation lines)
        dm = _LINK_DEF.match(t)
        if dm and para_start < 0:
            label_lines.append((link_label(dm.group(1)), lines[i].start))
            j = i
            while j + 1 < n and lines[j + 1].text.strip() and _INDENTED.match(lines[j + 1].text):
                j += 1
            blocks.add(lines, i, j)
            i = j + 1
            continue
        # bold pseudo-heading, or a plain "References:" line opening a paragraph
        bm = _BOLD_LINE.match(t)
        if bm and is_references_title(bm.group("text")):
            candidates.append(i)
            heading_lines.add(i)
        elif (len(t) <= 40 or _BING_TITLE.match(t.casefold())) and is_references_title(t) and (
                para_start < 0
                or (t.rstrip().endswith((":", "：")) and _SENTENCE_END.search(lines[i - 1].text))):
            # opening a paragraph, or "References:" right under its last sentence
            candidates.append(i)
            heading_lines.add(i)
            plain.add(i)
        if _LIST_ITEM.match(t):
            list_ctx = True
            para_start = i
            para_list = True
        elif para_start < 0:
            para_start = i
            para_list = False
        i += 1

    # only the last few candidates can start a trailing section (and each test is linear)
    tail = candidates[-_MAX_CANDIDATES:] if find_references else []
    spans = blocks.spans
    ref_line = ref_end = None
    for c in tail:
        ref_end = _section_end(lines, c, heading_lines, spans, c in plain)
        if ref_end is not None:
            ref_line = _list_above(text, lines, spans, heading_lines, c, ref_end)
            break
    if ref_line is None and find_references:
        found = _trailing_definitions(text, lines, spans, heading_lines)
        if found is not None:
            ref_line, ref_end = found
    if ref_line is None and find_references:
        ref_line, ref_end = _sources_line(lines, spans, heading_lines), None
    if ref_line is None and find_references and titles:
        ref_line = _trailing_titles(text, lines, spans, heading_lines, titles)
    if ref_line is not None:
        body_end = lines[ref_line].start
        ends_at = lines[ref_end].start if ref_end is not None and ref_end < len(lines) else len(text)
        references: Span | None = (body_end, ends_at)
    else:
        body_end = len(text)
        references = None

    # only what the body defines links the body: "[bridge page][2]" with "[2]: url" in the cut
    # references list is the author's citation of that url, read as one (the list goes)
    link_labels = {label for label, at in label_lines if at < body_end}
    protected = _with_inline(text, blocks.spans, body_end, link_labels)
    headings = tuple(h for h in blocks.headings if h[0] < body_end)
    return Layout(body_end=body_end, references=references, protected=protected, headings=headings,
                  link_labels=frozenset(link_labels),
                  table_rows=tuple(r for r in table_rows if r[1] <= body_end))


_FOOTNOTE_DEF = re.compile(r"^ {0,3}\[\^[\w.-]{1,40}\^?\]:[ \t]*\S")   # Kimi's "[^1^]: …" too
_SOURCE_LINK = re.compile(rf"https?://|\bwww\.|{LINK_OPEN}|\bdoi\.org/|\bdoi:", re.IGNORECASE)
_NUMBERED_DEF = re.compile(r"^ {0,3}\[(\d{1,4})\]:[ \t]*\S")
# "\[1\] Title https://…": an entry escaped so that it is no link, not "\[ … \]" display math
_ESCAPED_ENTRY = re.compile(r"^ {0,3}\\\[\d{1,4}\\\][ \t]+\S")
_MAX_CLOSING_BLOCKS = 16   # closing paragraphs and sections read after a headingless list
# a headingless list's entry: "[1] Title. https://…", "【1】标题 https://…"; `_TRAILING_ENTRY`: a
# line that opens one, a footnote definition included
_BRACKET_ENTRY = re.compile(
    r"^ {0,3}(?:\\?\[[ \t]?(\d{1,4})[ \t]?\\?\](?!:)|[【［〔](\d{1,4})[】］〕])[ \t]*\S")
_TRAILING_ENTRY = re.compile(
    r"^ {0,3}(?:\\?\[[ \t]?\d{1,4}[ \t]?\\?\]|[【［〔]\d{1,4}[】］〕]|\[\^[\w.-]{1,40}\]:"
    r"|\d{1,4}(?:[.)][ \t]|、))")
# "1. Title. https://…", "1、标题 https://…": a numbered list's entry (cut only when the body cites
# its numbers)
_DOTTED_ENTRY = re.compile(r"^ {0,3}(\d{1,4})(?:[.)][ \t]+|、[ \t]*)(?=\S)")
# ... whose link ends it, with no word that makes it a step before the link ("Renew at https://…")
_END_LINK = (r"(?:(?:https?://|www\.)[^\s<>]+|\[[^\[\]\n]*\]\([^()\s]*(?:\([^()\s]*\)[^()\s]*)*\)"
             r"|<https?://[^<>\s]+>)[ \t.,;。，；)）*_]*$")
_ENDS_WITH_LINK = re.compile(_END_LINK)
_STEP_BEFORE_LINK = re.compile(
    r"(?:\b(?:at|on|to|from|via|visit|see|in|into|under|through|using|with|here|click|open|go)"
    r"|详见|参见|请见|见|访问|登录|点击|前往)[ \t]*[:：]?[ \t]*"
    + _END_LINK,
    re.IGNORECASE)
_OPENS_WITH_LINK = re.compile(
    r"[ \t]*(?:[-*+•]|\d{1,4}[.)、])[ \t]*(?:\*\*|__)?(?:\[[^\[\]\n]{1,200}\]\((?:https?://|www\.)[^()\s]{1,2000}\)"
    r"|(?:https?://|www\.)[^\s<>]{1,2000})(?:\*\*|__)?(?:[ \t]+(?:[-–—|]|--)|[ \t]*[:：])[ \t]+\S")
_LINK_TAIL = 2048   # the end of an entry these are tried on: a link is shorter, and the search stays linear
# the numbers a body cites in brackets: "[1]", "[1, 2]", "【2-3】" (not "[2](url)", a link)
_BODY_MARKER = re.compile(
    r"[\[【［〔][ \t]?(\d{1,4}(?:[ \t]*[,，、\-–][ \t]*\d{1,4}){0,20})[ \t]?[\]】］〕](?!\()")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
# a parenthesis of reference links only: "([Wikipedia][1])", "([a.com][1], [b.org][2])"
_REF_ITEM = r"\[[^\[\]\n]{1,80}\]\[\d{1,4}\]"
_REF_GROUP = re.compile(
    rf"[(（][ \t]*+{CITATION_CUE}?{_REF_ITEM}(?:[ \t]*+[,，;；][ \t]*+{_REF_ITEM})*+[ \t]*+[)）]")
# where such a parenthesis is a citation: ending a clause or a line, or before another one; not
# after a citing word ("According to ([Alpha][1]), …": a word of its sentence)
#: What may follow a link citation: a clause's or sentence's punctuation, the line's end, or another
#: link citation ("([Alpha](…)) ([Beta](…))." is one run); tracer.existing reads them by it too.
LINK_CITATION_END = re.compile(
    r"[ \t]*+(?:[.!?。！？;；,，:：…]|[*_]{1,2}(?![\w*_])|\r?\n|\Z|[(（][ \t]*+\[)")
_CITING_BEFORE = re.compile(
    r"(?:\b(?i:according to|(?:as )?(?:shown|reported|described|noted|stated) (?:in|by)|based on|per|see"
    r"|cf\.|refer to|in|by|from|citing)|如|据|根据|依据|参见|详见|见)[ \t]*\Z")
_TEXT_REFLINK = re.compile(r"\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\[[ \t]*(\d{1,4})[ \t]*\]")


def _list_above(
    text: str, lines: list[_Line], blocks: list[Span], heading_lines: set[int], start: int, end: int,
) -> int:
    """Where the cut starts for the references section on lines [start, end): at `start`, or
    earlier when definitions that `_trailing_definitions` would take for a headingless
    references list ("[2]: url", "[^1]: [Title](url)") sit right above its heading, with only
    blank lines or a rule between. Read alone, without the section, that list would end the report
    and be its references; so it is cut with the section, as a second trace would cut it once
    the section is gone (left in the body, "[2]: url" came back last when nothing was cited,
    and the next trace cut it and removed the author's "[2]" with it). Not entries that are taken
    for what the body cites ("[1] Title https://…", "1. [Title](url)"): the new markers change
    that, and the next trace would cut what this one kept."""
    k = start - 1
    while k >= 0 and _blank_or_rule(lines[k].text):
        k -= 1
    head = k
    while head > 0 and _INDENTED.match(lines[head].text) and lines[head - 1].text.strip():
        head -= 1
    if k < 0 or not (_NUMBERED_DEF.match(lines[head].text) or _FOOTNOTE_DEF.match(lines[head].text)):
        return start
    # the report as the section's cut leaves it: the lines above it, then the ones after it
    cut_from = lines[start].start
    cut_to = lines[end].start if end < len(lines) else len(text)
    shift = cut_to - cut_from
    rest = [_Line(ln.start - shift, ln.end - shift, ln.next - shift, ln.text) for ln in lines[end:]]
    probe = lines[:start] + rest
    headings = {h if h < start else h - (end - start) for h in heading_lines if not start <= h < end}
    found = _trailing_definitions(text[:cut_from] + text[cut_to:], probe,
                                  [b for b in blocks if b[0] < cut_from], headings)
    if found is None or found[0] >= start:
        return start
    if any(probe[x].text.strip() for x in range(start, found[1])):
        return start                     # the list runs on past the section (into what follows it)
    if not all(_NUMBERED_DEF.match(t) or _FOOTNOTE_DEF.match(t) or not t.strip() or _INDENTED.match(t)
               or _blank_or_rule(t) for t in (ln.text for ln in lines[found[0]:start])):
        return start                     # entries cut for what the body cites: new markers change that
    return found[0]


def _trailing_definitions(
    text: str, lines: list[_Line], blocks: list[Span], heading_lines: set[int],
) -> tuple[int, int] | None:
    """(first line, end line) of a headingless references list at the end: "[1]: url"
    definitions, footnote definitions that each give a URL ("[^1]: [Title](url)"), or entries
    numbered "[1]" that each give one ("[1] Title. https://…"; two or more of them, or one the
    body cites), in blocks of their own (after a blank line or "---"), blank lines between them
    allowed. Closing matter after them, holding no link and no marker (`_CLOSING_LINE` paragraphs:
    "*This report was generated by AI.*"; sections under a `_closing_title`: "## Disclaimer")
    stays the report's: the end line is the list's last
    line's successor then.

    Left in the body, such a list would keep the author's old numbers beside the new ones, and
    definitions would turn the new "[1]" markers into links to the old sources. Not when the body
    uses one of the labels in a reference link ("[text][1]"): then the definitions are the body's own.
    """
    block_starts = {a for a, _ in blocks}

    def blank_or_rule(k: int) -> bool:
        return _blank_or_rule(lines[k].text)

    end = len(lines)
    j = end - 1
    while j >= 0 and not lines[j].text.strip():
        j -= 1
    headings = sorted(heading_lines)
    for _ in range(_MAX_CLOSING_BLOCKS):  # closing matter at the very end (a few blocks: bounded)
        if j < 0:
            break
        at = bisect.bisect_right(headings, j) - 1
        h = headings[at] if at >= 0 else -1
        if h > 0 and _closing_title(heading_title(lines[h].text)) and not any(
                _STRONG_REF.search(ln.text) or _MARKER_HINT.search(ln.text) for ln in lines[h + 1:j + 1]):
            end, j = h, h - 1            # a section of it ("## Disclaimer"), all of it plain text
        else:                            # a paragraph opened by a closing line, with no link or marker
            p = j
            while p > 0 and not blank_or_rule(p - 1):
                p -= 1
            para = [ln.text for ln in lines[p:j + 1]]
            if p == 0 or not _CLOSING_LINE.match(para[0]) or any(
                    _STRONG_REF.search(t) or _MARKER_HINT.search(t) for t in para):
                break
            end, j = p, p - 1
        while j >= 0 and blank_or_rule(j):
            j -= 1
    if end < len(lines):
        end = j + 1                      # the rule and blank lines before closing matter stay with it
    first: int | None = None
    labels: set[str] = set()
    numbered: set[str] = set()           # the "[1] Title. url" entries' numbers
    dotted: set[int] = set()             # the "1. Title. url" entries' numbers
    bullets = 0                          # the "- [Title](url)" entries: numbered 1, 2, … in order
    notelike = False                     # a "[1]" entry or a footnote that may be a note, not a source
    below = ""                           # continuation lines under the definition above them
    while j >= 0:
        t = lines[j].text
        if not t.strip():
            k = j
            while k >= 0 and not lines[k].text.strip():
                k -= 1
            head = k                     # the entry above, past its indented continuation lines
            while head > 0 and _INDENTED.match(lines[head].text) and lines[head - 1].text.strip():
                head -= 1
            entry = "".join(ln.text for ln in lines[head:k + 1]) if k >= 0 else ""
            if below or k < 0 or not (_TRAILING_ENTRY.match(lines[head].text)
                                      or (bullets and BULLET_ITEM.match(lines[head].text))) or not (
                    _NUMBERED_DEF.match(entry) or _FOOTNOTE_DEF.match(entry) or _SOURCE_LINK.search(entry)) \
                    or (first is not None and bool(dotted) != _is_dotted(lines[head].text)):
                break                    # the list's first block starts below this blank line
                # (not "[1]的数据显示，…" or "[1] found that …": the body's last paragraph; nor a
                # numbered list of the body's links above "[1]: url" definitions)
            j = k
            continue
        dm = _NUMBERED_DEF.match(t)
        fm = _FOOTNOTE_DEF.match(t)
        bm = None if dm or fm else _BRACKET_ENTRY.match(t)
        om = None if dm or fm or bm else _DOTTED_ENTRY.match(t)
        um = None if dm or fm or bm or om else BULLET_ITEM.match(t)
        if first is not None and (dm or fm or bm or om or um) and (bool(dotted) != bool(om)
                                                                   or bool(bullets) != bool(um)):
            break                        # one kind of entry per list
        if (dm or fm) and lines[j].start in block_starts:
            if fm and not _SOURCE_LINK.search(t + below):
                if first is None:
                    return None          # a footnote that is a note, not a source
                j = first - 1            # the notes above the sources below them stay the body's
                break
            if dm:
                labels.add(dm.group(1))
            notelike = notelike or bool(fm)
        elif bm and _SOURCE_LINK.search(t + below):
            numbered.add(bm.group(1) or bm.group(2))
            notelike = notelike or _prose_like(t) or not _link_entry((t + below).rstrip())
        elif om and _SOURCE_LINK.search(t + below) and not _prose_like(t) \
                and _link_entry((t + below).rstrip()):
            dotted.add(int(om.group(1)))   # not "1. Go to https://… and sign in.", "2. Pay at https://…"
        elif um and (first is None or bullets) and _SOURCE_LINK.search(t + below) and not _prose_like(t) \
                and _link_entry((t + below).rstrip()):
            bullets += 1
        elif _INDENTED.match(t) or (t[:1] in (" ", "\t") and _SOURCE_LINK.search(t)):
            below = t + below
            j -= 1
            continue
        else:
            break                        # prose or another construct
        first, below = j, ""
        j -= 1
    if first is None or below:
        return None                      # no list
    if j >= 0 and not blank_or_rule(j) and not _glued_entries(text, lines, first, j, numbered, notelike,
                                                              bool(labels or dotted or bullets)):
        return None                      # one that opens inside a paragraph
    k = j
    while k >= 0 and blank_or_rule(k):
        k -= 1
    notes = k if k in heading_lines and notes_title(heading_title(lines[k].text)) else None
    if k in heading_lines and notes is None:
        return None                      # a heading's own list, which `_section_end` did not take
    # ... but under "## Notes" or "## 相关链接" the list is the references, heading and all, when
    # each entry is a source (its link ends it, or opens it before what the source is), the body
    # cites half its numbers, and the body lists no sources of its own ("[1] Title https://…"
    # above, then "## Related links": the later list is more reading)
    if notes is not None:
        if notelike or any((_BRACKET_ENTRY.match(ln.text) or _NUMBERED_DEF.match(ln.text))
                           and _SOURCE_LINK.search(ln.text) for ln in lines[:k]):
            return None
        dotted = dotted or {int(n) for n in numbered} or {int(x) for x in labels if x.isdigit()}
        if not dotted and not bullets:
            return None
    body = text[: lines[first].start]
    if numbered and len(numbered) < 2 and not any(
            re.search(rf"[\[【［〔][ \t]?{n}[ \t]?[\]】］〕]", body) for n in numbered):
        return None
    groups = [(g.start(), g.end()) for g in _REF_GROUP.finditer(body)
              if LINK_CITATION_END.match(body, g.end())
              and not _CITING_BEFORE.search(body, max(0, g.start() - 24), g.start())
              ] if "(" in body or "（" in body else []
    for m in _TEXT_REFLINK.finditer(body):
        if m.group(2) in labels and not _NUMBERISH.fullmatch(m.group(1)) and not any(
                a <= m.start() and m.end() <= b for a, b in groups):
            return None    # (but in "([Wikipedia][1])", ChatGPT's citation, the label is a citation's)
    if bullets:
        # "- [Reuters](https://…)": the body's "[1]" cites the first; only a list set apart from the
        # body's prose by a rule, or by a blank line after a sentence's end or a citation, not one
        # under a label ("**Next steps**", "Tools we used") or another list ("2. [AP](https://…)")
        ruled = any(lines[x].text.strip() for x in range(k + 1, first))
        if k >= 0 and notes is None and not ruled and not (_SENTENCE_END.search(lines[k].text)
                                         or _ENDS_CITING.search(lines[k].text)):
            return None
        dotted = set(range(1, bullets + 1))
    if dotted:
        # a numbered list of links ends many reports as more reading; it is their references when
        # the body cites half its numbers or more in brackets (outside code), and no number past
        # it, and no line introduces it ("These sites are useful:")
        if k >= 0 and notes is None and lines[k].text.rstrip().rstrip("*_").endswith((":", "：")):
            return None
        plain = list(body)
        for a, b in blocks:
            if b <= len(plain):
                plain[a:b] = " " * (b - a)
        # not "[2020]", a year, nor "[0, 1]", an interval (no citation is numbered 0)
        cited = {n for m in _BODY_MARKER.finditer(_CODE_SPAN.sub(" ", "".join(plain)))
                 for ns in (_bracket_numbers(m.group(1)),) if 0 not in ns for n in ns if n < 1000}
        if 2 * len(cited & dotted) < len(dotted) or max(cited) > max(dotted):
            return None
    return (first if notes is None else notes), end


def _glued_entries(text: str, lines: list[_Line], first: int, j: int, numbered: set[str], notelike: bool,
                   other: bool) -> bool:
    """Whether "[1] Title https://…" entries from line `first` on, right under the body's last
    line `j` with no blank line between (as some chat apps copy them), are its references: two
    or more, each giving a source, no other kind among them, the line above ending a sentence or
    a citation, and the body citing half their numbers in brackets."""
    if other or notelike or len(numbered) < 2:
        return False
    above = lines[j].text
    if not (_SENTENCE_END.search(above) or _ENDS_CITING.search(above)) or _BRACKET_ENTRY.match(above):
        return False
    body = _CODE_SPAN.sub(" ", text[:lines[first].start])
    cited = {n for m in _BODY_MARKER.finditer(body) for n in _bracket_numbers(m.group(1))}
    return 2 * len(cited & {int(n) for n in numbered}) >= len(numbered)


def _link_entry(entry: str) -> bool:
    """Whether a numbered line's link ends it, with no word before it that makes it a step, or
    opens it, a dash or colon and what the source is after it ("1. [Reuters](https://…) – Tesla's
    deliveries", "- [FRED](https://…): rates")."""
    tail = entry[-_LINK_TAIL:]
    return (bool(_ENDS_WITH_LINK.search(tail)) and not _STEP_BEFORE_LINK.search(tail)) \
        or bool(_OPENS_WITH_LINK.match(entry))


# "- [Reuters](https://…)", "* Title https://…": a bulleted list's entry (cut only when the body
# cites its items by their place in it, as a numbered list's)
#: a top-level bullet item's opening ("- ", "* ", "• "): a nested item is part of the one above it
BULLET_ITEM = re.compile(r"^[-*+•][ \t]+(?=\S)")
_ENDS_CITING = re.compile(r"[\]】][ \t]*$")


def _is_dotted(line: str) -> bool:
    return bool(_DOTTED_ENTRY.match(line)) and not _BRACKET_ENTRY.match(line)


_LIST_SEP = re.compile(r"(?<![ \t])[ \t]*+[,，、][ \t]*+")   # only a run's first blank starts a split


def _bracket_numbers(inner: str) -> set[int]:
    """The numbers of a bracket's list: "1, 3" gives {1, 3}, "2-4" {2, 3, 4} (short ranges only)."""
    out: set[int] = set()
    for part in _LIST_SEP.split(inner):
        lo, _, hi = part.partition("-") if "-" in part else part.partition("–")
        if hi and lo.strip().isdigit() and hi.strip().isdigit() and 0 <= int(hi) - int(lo) <= 50:
            out.update(range(int(lo), int(hi) + 1))
        elif part.strip().isdigit():
            out.add(int(part))
    return out


# "Sources: [Reuters](https://…), [AP](https://…)", "来源：https://…；https://…": a references list
# written on one line
# (possessive: two runs of spaces side by side, tried every way, made a line of 16,000 spaces take 40 s)
_SOURCES_LINE = re.compile(r"^ {0,3}(?:\*\*|__)?(?P<title>[^:：*_\n]{1,40}?)[ \t]*+(?:\*\*|__)?+[ \t]*+[:：]"
                           r"[ \t]*+(?:\*\*|__)?+[ \t]*+(?P<rest>\S.*)$")
_LINE_LINK = re.compile(r"\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\]"
                        r"\((?:[^()\s]|\([^()\s]*\))+(?:[ \t]+\"[^\"\n]*\")?\)"
                        r"|<https?://[^<>\s]+>|(?:https?://|www\.)[^\s<>\"'`，；、]+")
_LIST_OR_QUOTE = re.compile(r"^[ \t]*(?:[-*+•][ \t]+|>[ \t]*|\d{1,4}[.)、][ \t]*)+")
_PLURAL_TITLE = re.compile(r"(?i:sources|references|citations|links)\b")
_LINK_SEPARATORS = re.compile(r"(?:[\s,;，；、|·•/]|\band\b|和|及|与)*", re.IGNORECASE)
#: A number labelling one of several references entries written on one line ("Sources: [1]
#: https://… [2] https://…", "来源：【1】新华网 https://… 【2】…"; `one_line_entries`).
LINE_ENTRY = re.compile(r"(?<![^\s:：,，;；、])[\[【](\d{1,4})[\]】](?=[ \t]*+(?![\[【]\d)\S)")


def _line_rest(m: re.Match[str]) -> str:
    """What follows a one-line references list's title, without emphasis, a last stop or the
    parentheses around it all ("Sources: ([A](…), [B](…))")."""
    rest = m.group("rest").rstrip().rstrip("*_").rstrip(".。")
    return rest[1:-1] if rest[:1] in "(（" and rest[-1:] in ")）" else rest


# one numbered entry of a one-line references list: its number, a short title or none, its link
# (or its number linked: "[1](https://…)")
_LINE_PART = re.compile(rf"[\[【]\d{{1,4}}[\]】](?:\((?:https?://|www\.)[^\s()<>]+\)"
                        rf"|[ \t]*(?P<title>[^\n]{{0,80}}?)[ \t,，:：\-–—|]*(?:{_LINE_LINK.pattern}))"
                        rf"[ \t]*[,，;；、|·•/.。]?[ \t]*")
_TITLE_MARK = re.compile(r"[A-Z\d\u3400-\u9fff]")
_TITLE_SENTENCE = re.compile(r"[.!?。！？;；][ \t]")


def one_line_entries(line: str) -> list[str] | None:
    """The entries of a one-line references list whose entries are numbered ("Sources: [1]
    https://… [2] Reuters, https://…", "来源：【1】新华网 https://… 【2】…"), each from its number to
    the next, as written; None when `line` is no such list: a references title and a colon, then
    (in parentheses or not) two or more entries numbered in increasing order, each a short title
    (a name, not a sentence) or none and one link or URL, and nothing else. Read the same way
    where the line is cut (`scan_markdown`) and where its numbers are resolved (tracer.existing)."""
    m = _SOURCES_LINE.match(line) if len(line) <= 8192 and ("[" in line or "【" in line) else None
    if m is None or not is_references_title(m.group("title")):
        return None
    rest = _line_rest(m)
    labels = list(LINE_ENTRY.finditer(rest))
    numbers = [int(x.group(1)) for x in labels]
    if len(labels) < 2 or labels[0].start() != 0 or any(
            b <= a for a, b in zip(numbers, numbers[1:], strict=False)):
        return None
    parts = [rest[a.start():b.start() if b else len(rest)]
             for a, b in zip(labels, [*labels[1:], None], strict=True)]
    for part in parts:
        pm = _LINE_PART.fullmatch(part)
        title = (pm.group("title") or "").strip() if pm else ""
        if pm is None or (title and (not _TITLE_MARK.search(title) or _TITLE_SENTENCE.search(title))):
            return None
    return parts


def _sources_line(lines: list[_Line], blocks: list[Span], heading_lines: set[int]) -> int | None:
    """The line of a one-line references list that ends the text ("Sources: [A](url), [B](url)"):
    a references title, a colon, then links or URLs and nothing but separators between them, in a
    paragraph of its own (after a blank line or "---"), outside any block. None otherwise."""
    j = len(lines) - 1
    while j >= 0 and not lines[j].text.strip():
        j -= 1
    if j <= 0 or _INDENTED.match(lines[j].text) or any(a <= lines[j].start < b for a, b in blocks):
        return None                      # (in code, or any other block)
    prev = lines[j - 1].text
    if prev.strip() and not _THEMATIC.match(prev):
        return None
    m = _SOURCES_LINE.match(lines[j].text)
    if m is None or not is_references_title(m.group("title")) or _LIST_OR_QUOTE.match(lines[j].text):
        return None
    rest = _line_rest(m)
    links = one_line_entries(lines[j].text) or []   # "[1] Reuters https://… [2] AP https://…"
    if not links:
        links = _LINE_LINK.findall(rest)
        if not links or not _LINK_SEPARATORS.fullmatch(_LINE_LINK.sub(" ", rest)):
            return None
    if len(links) < 2 and not _PLURAL_TITLE.search(m.group("title")):
        return None                      # "Source: [H.15](…)", "数据来源：[国家统计局](…)": a caption
    k = j - 1
    while k >= 0 and _blank_or_rule(lines[k].text):
        k -= 1
    if k >= 0 and (k in heading_lines or lines[k].text.lstrip().startswith(("|", "![", "<img"))):
        return None                      # under a table or an image: its caption; a heading's own line
    for i in range(j):                   # each story's "Source: …" line: the last is the last story's
        other = _SOURCES_LINE.match(_LIST_OR_QUOTE.sub("", lines[i].text))
        if other is not None and is_references_title(other.group("title")):
            return None
    return j


_MIN_TITLE = 8          # characters a record title needs to name a headingless list's entry
_TITLE_ENTRY_EXTRA = 120  # what an entry may hold beyond its title (authors, site, year)
def _trailing_titles(text: str, lines: list[_Line], blocks: list[Span], heading_lines: set[int],
                     titles: Collection[str]) -> int | None:
    """The first line of a headingless list of record titles that ends the text, with no link in
    it ("[1] Apple annual report 2020", "【2】2023年度财务报告.pdf", "1. Pear results 2021"): local
    documents and sources without a URL are listed so. Each entry holds a record's title (of
    `_MIN_TITLE` characters or more, marks and case aside) and little else; two entries or more,
    or one the body cites; in a paragraph of their own (after a blank line or "---", not under a
    heading: a heading's own list stays), outside any block; "1." entries only when the body
    cites half their numbers in brackets. None otherwise."""
    # the titles by their first `_MIN_TITLE` characters, then by length: a set lookup per length
    # at each place of an entry, however many titles open alike ("Annual report 2021", "… 2022")
    by_head: dict[str, dict[int, set[str]]] = {}
    for k in {title_key(t) for t in titles}:
        if len(k) >= _MIN_TITLE and k != "untitled":
            by_head.setdefault(k[:_MIN_TITLE], {}).setdefault(len(k), set()).add(k)
    if not by_head:
        return None

    def holds_title(entry: str) -> bool:
        # a title of `size` characters at `p`: p + size <= len(entry) <= size + _TITLE_ENTRY_EXTRA
        for p in range(min(len(entry) - _MIN_TITLE, _TITLE_ENTRY_EXTRA) + 1):
            sizes = by_head.get(entry[p:p + _MIN_TITLE])
            if sizes:
                for size in range(max(_MIN_TITLE, len(entry) - _TITLE_ENTRY_EXTRA), len(entry) - p + 1):
                    if (keys := sizes.get(size)) and entry[p:p + size] in keys:
                        return True
        return False

    j = len(lines) - 1
    while j >= 0 and not lines[j].text.strip():
        j -= 1
    first, numbers, dotted = None, [], False
    while j >= 0:
        t = lines[j].text
        if not t.strip():
            j -= 1
            continue
        if _INDENTED.match(t) or any(a <= lines[j].start < b for a, b in blocks):
            break
        bm = _BRACKET_ENTRY.match(t)
        om = None if bm else _DOTTED_ENTRY.match(t)
        if (bm is None and om is None) or (first is not None and dotted != bool(om)):
            break
        m = bm or om
        assert m is not None
        entry = title_key(t[m.end() - 1 if bm else m.end():])
        if _SOURCE_LINK.search(t) or len(t) > 2000 or _prose_like(t) or not holds_title(entry):
            break
        first, dotted = j, bool(om)
        numbers.append(int(m.group(1) or (m.group(2) if bm else "0")))
        j -= 1
    if first is None:
        return None
    while j >= 0 and not lines[j].text.strip():
        j -= 1
    if j >= 0 and (not _blank_or_rule(lines[first - 1].text) or j in heading_lines):
        return None                      # inside a paragraph, or a heading's own list
    body = text[:lines[first].start]
    cited = {int(n) for m in _BODY_MARKER.finditer(body) for n in _bracket_numbers(m.group(1))}
    if dotted and 2 * len(cited & set(numbers)) < len(numbers):
        return None
    if len(numbers) < 2 and not cited & set(numbers):
        return None
    return first


def _blank_or_rule(text: str) -> bool:
    return not text.strip() or bool(_THEMATIC.match(text))


def unclosed_block(text: str, layout: Layout) -> str:
    """What closes the block left open at the end of the body ("```", "-->", "</pre>", ...), or "".

    An unclosed code fence, HTML comment or raw HTML block (`<pre>`, `<script>`, `<style>`,
    `<textarea>`) runs to the end of the document, so whatever is appended after such a body
    would render as code, stay hidden or print raw: a caller appending a section must close the
    block first. Agrees with `scan_markdown` by construction.
    """
    if not layout.protected:
        return ""
    start, end = layout.protected[-1]
    if end != layout.body_end or (start > 0 and text[start - 1] != "\n"):
        return ""  # closed, or an inline region (a code span running to the end is no block)
    first_nl = text.find("\n", start, end)
    first = text[start:end if first_nl < 0 else first_nl].rstrip("\r")
    if _HTML_COMMENT_OPEN.match(first):
        return "" if "-->" in text[text.find("<!--", start) + 4:end] else "-->"
    rm = _HTML_RAW_OPEN.match(first)
    if rm:
        closer = f"</{rm.group(1).lower()}>"
        return "" if closer in text[start:end].lower() else closer
    fm = _FENCE_OPEN.match(first)
    if not fm or (fm.group(1)[0] == "`" and "`" in fm.group(2)):
        return ""
    fence = fm.group(1)
    close_re = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
    body_lines = text[start:end].splitlines()
    if len(body_lines) > 1 and close_re.match(body_lines[-1]):
        return ""
    return fence


def _find_line(lines: list[_Line], i: int, needle: str, casefold: bool = False) -> int:
    """Index of the first line from i containing needle (the last line when there is none)."""
    for j in range(i, len(lines)):
        t = lines[j].text.lower() if casefold else lines[j].text
        if needle in (t[t.find("<!--") + 4:] if j == i and needle == "-->" else t):
            return j
    return len(lines) - 1


# headings of closing matter a report may put after its references ("## Disclaimer", "## 七、风险提示",
# "## 免责声明与风险提示", "## Appendix: Survey method"): the whole title (numbering dropped), or its
# parts joined by and / & / 与 / 及, each closing matter, or any title after "Appendix:" / "附录：";
# so "About the telescope" or "Notes on methodology" is more report
_CLOSING_TITLE = re.compile(
    r"(?:disclaimers?|legal notice|important notice|notices?|appendix(?:\s+[a-z\d]{1,3})?|appendices"
    r"|acknowledge?ments?|about the authors?|about this report|contact|copyright|license|notes"
    r"|methodology|glossary|related|related questions|related searches|related topics"
    r"|people also ask"
    r"|(?:suggested |recommended )?follow[- ]?up questions|(?:further|suggested) questions"
    r"|frequently asked questions|免责声明|免责条款|风险提示|风险揭示|法律声明|重要声明|分析师声明|声明"
    r"|评级说明|投资评级说明|附录|致谢|版权声明|版权|关于本报告|联系方式|术语表|名词解释|延伸阅读|相关阅读"
    r"|相关问题|常见问题|延伸问题|推荐问题|相关推荐|相关搜索|猜你想问|你可能还想问|注释|注|说明|备注|附注"
    r"|脚注|作者简介|关于作者|faq)[ \t]*[:：]?", re.IGNORECASE)
_APPENDIX_OF = re.compile(r"(?:appendix(?:\s+[a-z\d]{1,3})?|附录[一二三四五六七八九十A-Z\d]?)\s*[:：.、\-–—]",
                          re.IGNORECASE)


def _closing_title(title: str) -> bool:
    """Whether a heading's text names closing matter (see `_CLOSING_TITLE`)."""
    s = _INVISIBLE.sub("", title).strip().strip("*_ \t")
    if len(s) > 60:
        return False
    s = _CHAPTER.sub("", _NUMBERING.sub("", s, count=1), count=1).strip()
    if _APPENDIX_OF.match(s):
        return True
    parts = [p for p in _TITLE_JOINERS.split(s) if p]
    # ("Methodology" only beside another: alone, it is more of the report, whose claims are traced)
    return bool(parts) and all(_CLOSING_TITLE.fullmatch(p) for p in parts) and any(
        not re.fullmatch(r"methodology[ \t]*[:：]?", p, re.IGNORECASE) for p in parts)
# a closing line after the entries: all in emphasis ("*Generated by AI…*"), or one that opens with a
# notice ("**风险提示：**…", "Disclaimer:", "© 2024 …", "This report was generated …")
_CLOSING_LINE = re.compile(
    r"^[ \t]*(?:>[ \t]*)?(?:(?:\*{1,2}|_{1,2})(?=\S)[^\n]*\S(?:\*{1,2}|_{1,2})[ \t]*$"
    r"|(?:\*\*|__)?(?:©|\(c\)\s|copyright\b|all rights reserved|disclaimer\b|notice\b|note\b|notes\b"
    r"|risk (?:notice|warning|disclosure)\b|important\b"
    r"|this (?:report|document|analysis|summary) (?:was|is|has been)\b|generated\b|last updated\b"
    # an English byline or contact line ("Written by the desk.", "Author: Jane Doe", "Contact: …")
    r"|(?:(?:report|article|analysis)[ \t]+)?(?:written|prepared|compiled|edited|produced|reviewed)[ \t]+by\b"
    r"|authors?[ \t]*:|contact(?:[ \t]+us)?[ \t]*:|questions\??[ \t]*:|e-?mail[ \t]*:"
    r"|免责|风险提示|风险揭示|声明|注[:：]|注释[:：]|备注[:：]|附注[:：]|说明[:：]|本报告|本文|以上内容|数据截至|更新于"
    r"|分析师|编辑"
    r"|责任编辑|作者|撰稿|审核|校对|报告日期|发布日期|发布时间|[（(]?全文完[)）]?|[（(]完[)）]|点击|扫码"
    r"|关注))", re.IGNORECASE)


def _section_end(
    lines: list[_Line], c: int, heading_lines: set[int], blocks: list[Span], plain: bool
) -> int | None:
    """Where the references section opened by the candidate heading at line c ends (the index of
    its first line after it, len(lines) at the end of the text), or None when c opens no
    references section: when it is not followed only by reference-like content.

    Entries (numbered / bulleted / linked lines, or short lines with a year, quotes, 《》,
    "et al.", "retrieved") and sub-headings over entries may follow; a few prose lines are
    tolerated (a note, a footer: one, or one per three entries, given two entries or more);
    a later non-references heading must be followed by strong entries (URLs, links, "[n]") that
    do not read as sentences.
    A plain "References:" line needs entries and no prose at all.

    The report's closing matter after the entries is not the section's: closing lines
    (`_CLOSING_LINE`: "*Generated by AI…*", "**风险提示：**…") after a blank line or "---" below
    the last entry, or a later heading of closing matter (`_CLOSING_TITLE`: "## Disclaimer",
    "## 附录") with no source link under it, and all after them. They stay in the report, after
    the new references, so they must hold no citation marker (then they are read as before: as
    prose, or as a section that makes the candidate no references section).
    """
    entries = prose = data = 0        # data: entries that give a figure or a quotation, not a source
    prose_at_last = 0                 # prose lines before the last entry
    under_other_heading = False       # below a later heading that is not a references heading
    deeper = False                    # ... one deeper than the candidate's (a group of entries)
    level = _heading_level(lines, c)
    prev_entry = False
    last_entry = c                    # the line of the last entry (or the heading)
    gap_after_entry = False           # a blank line or "---" since the last entry
    tail_from = -1                    # the first closing line, while only closing lines follow it
    tail_lines = 0
    tail_glued = False                # ... a byline right under the last entry, no blank line between
    tail_para = False                 # the line before was a closing line of the same paragraph
    after: list[tuple[bool, bool]] | None = None   # `_what_follows`, once needed
    block_end = dict(blocks)
    code_starts = set(block_end)
    in_block_until = -1
    for j in range(c + 1, len(lines)):
        ln = lines[j]
        t = ln.text
        if ln.start < in_block_until:
            continue
        if not t.strip() or _THEMATIC.match(t) or _SETEXT_EQ.match(t):
            gap_after_entry = gap_after_entry or not prev_entry or not t.strip() or bool(_THEMATIC.match(t))
            prev_entry = prev_entry and bool(t.strip())
            tail_para = False
            continue
        if j in heading_lines:
            under_other_heading = not is_references_title(heading_title(t))
            if not under_other_heading and _heading_level(lines, j) <= level and (
                    (prose and not entries) or _accepted(entries, prose, data, plain, lines, c, j) is None):
                return None           # "## Sources" over prose, then "## References": the later one's
                # (so too when what it holds so far would be no references section on its own: the
                # output, traced again, is read as the input was)
            # a sub-heading groups entries ("### Company" under "## Sources"); a heading of the
            # references heading's level or above that is no references title opens more report,
            # so only source lines that read as no sentence are entries under it
            deeper = _heading_level(lines, j) > level
            prev_entry = False
            more_reading = under_other_heading and _heading_level(lines, j) <= level \
                and _title_words(heading_title(t)) in _LINKS_TITLES
            if under_other_heading and entries and (more_reading or _closing_title(heading_title(t))):
                if after is None:
                    after = _what_follows(lines)
                strong_after, marked_after = after[j]
                # (more reading, "## Useful links" after the list, stays the report's too, links and
                # all: they are no sources the body cites)
                if not marked_after and (more_reading or not strong_after):
                    # the lines after the last entry stay with the closing matter: only the prose
                    # among the entries counts (so the output, traced again, is read the same)
                    return _accepted(entries, prose_at_last, data, plain, lines, c, last_entry + 1)
            if under_other_heading and tail_from >= 0:   # a heading of more report after a closing
                prose += tail_lines                        # line: that line was the section's prose
                tail_from, tail_lines = -1, 0
            continue
        closing = not _STRONG_REF.search(t) and not _MARKER_HINT.search(t) and (
            bool(_CLOSING_LINE.match(t)) or (tail_from >= 0 and tail_para))   # or its paragraph's
        # an editor's byline closes the list even right under its last entry ("编辑：小王"), at the
        # margin (indented, it goes on the entry above; and one an entry follows was that entry's)
        byline = prev_entry and not gap_after_entry and bool(_BYLINE.match(t))
        if tail_from >= 0 or ((gap_after_entry or byline) and entries and not under_other_heading
                              and closing):
            if closing:
                if tail_from < 0:
                    tail_glued = byline
                tail_from = j if tail_from < 0 else tail_from
                tail_lines += 1
                tail_para = True
                continue
            # anything else after it (an entry, a marker, more report): the closing lines were prose,
            # or, right under an entry, that entry's own lines
            prose += 0 if tail_glued else tail_lines
            tail_from, tail_lines = -1, 0
        if ln.start in code_starts and not t.lstrip().startswith(("[", "|")) and not _ESCAPED_ENTRY.match(t):
            # a code / HTML / math block after the heading counts as one line of prose,
            # except a comment, which shows nothing ("<!-- generated by … -->"), and an HTML list
            # of sources ("<ol><li><a href=…>Title</a></li>…"), whose items are entries
            in_block_until = block_end[ln.start]
            k = j
            while k + 1 < len(lines) and lines[k + 1].start < in_block_until:
                k += 1
            items = _html_list_entries("\n".join(x.text for x in lines[j:k + 1]))
            if items:
                entries += items
                prev_entry = True
                last_entry, gap_after_entry, prose_at_last = k, False, prose
                continue
            prose += not _HTML_COMMENT_OPEN.match(t)
            continue
        if t.lstrip().startswith("|") and (_TABLE_DELIM.match(t) or (
                j + 1 < len(lines) and _TABLE_DELIM.match(lines[j + 1].text))):
            continue                  # a table's heading row and delimiter row: a table of entries
        strong = bool(_STRONG_REF.search(t)) or bool(_PANDOC_REFS.match(t))
        weak = strong or (
            (bool(_REF_ENTRY.match(t)) or bool(_TABLE_ENTRY.match(t))
             or (len(t) <= 250 and bool(_CITATION_HINT.search(t))))
            and not _prose_like(t)
        )
        continuation = prev_entry and t[:1] in (" ", "\t")
        data += not strong and not _BIB.search(t) and bool(_DATA_ENTRY.match(t))
        if under_other_heading:
            # a source line, not a sentence of more report that gives a link ("## Conclusion" /
            # "…; follow it at https://webb.nasa.gov.")
            # (and opens as an entry does: "The James Webb Space Telescope launched on 25 December
            # 2021 [[1]](https://…)." is more report, though most of its words are names)
            if (strong and (deeper or (not _prose_like(t) and _opens_as_entry(t)))) or continuation:
                entries += 1
                prev_entry = True
                last_entry, gap_after_entry, prose_at_last = j, False, prose
            else:
                return None
        elif weak or continuation:
            entries += 1
            prev_entry = True
            last_entry, gap_after_entry, prose_at_last = j, False, prose
        else:
            prose += 1
            prev_entry = False
    # closing lines after the entries stay in the report: from the line after the last entry
    end = last_entry + 1 if tail_from >= 0 else len(lines)
    return _accepted(entries, prose, data, plain, lines, c, end)


# where Pandoc and Quarto put the bibliography: "::: {#refs}" … ":::" (or an HTML div so named)
_PANDOC_REFS = re.compile(r"^ {0,3}(?::{3,}[ \t]*(?:\{[ \t]*#refs\b[^{}\n]*\})?"
                          r"|<div[ \t]+id=[\"']refs[\"'][^<>\n]*>(?:[ \t]*</div>)?)[ \t]*$")
# an editor's line, never a source's ("作者：", "©" may be an entry's own)
_BYLINE = re.compile(r"(?:\*\*|__)?(?:(?:责任)?编辑|审核|校对|编审|主编)[:：]")


def _opens_as_entry(line: str) -> bool:
    """Whether a line opens as a references entry does: a bullet, a number, a bracket, a
    superscript, a link or a URL (emphasis aside)."""
    return bool(_ENTRY_OPENING.match(line) or _ENTRY_OPENING.match(line.lstrip(" \t*_")))


_HTML_LIST_TAG = re.compile(r"</?(?:ol|ul)\b[^<>]*>", re.IGNORECASE)
_HTML_ITEM = re.compile(r"<li\b[^<>]*>(.*?)(?:</li\s*>|(?=<li\b|</?(?:ol|ul)\b|\Z))",
                        re.IGNORECASE | re.DOTALL)
_HTML_SOURCE = re.compile(r"\bhref\s*=|https?://|\bwww\.|\bdoi:", re.IGNORECASE)


def _html_list_entries(block: str) -> int:
    """How many sources an HTML list block gives ("<ol>", "<li><a href=…>Title</a></li>", …, "</ol>"):
    the number of its items when the block is list markup only and every item gives a link, else 0."""
    if "<li" not in block.lower():
        return 0
    items = _HTML_ITEM.findall(block)
    rest = _HTML_LIST_TAG.sub("", _HTML_ITEM.sub("", block))
    if rest.strip() or not items or not all(_HTML_SOURCE.search(i) for i in items):
        return 0
    return len(items)


# a citation marker, roughly ("[1]", "[1, 2]", "[^1]", "【1】", "[citation:1]", "<sup>"): closing matter
# holding one stays no closing matter (its markers would point at the old numbers)
_MARKER_HINT = re.compile(r"\[\^?\d{1,4}(?:\s*[,，\-–—~～‐‑‒−－至]\s*\d{1,4})*\]|【\d{1,4}(?:[，,]\d{1,4})*】"
                          r"|\[citation:|<sup>|\ue200|citeturn\d|contentReference\[|<grok-card|grok_render_"
                          r"|\[(?:web|page|file|attached_file|conversation_history):\d|\[cite:|oai_citation",
                          re.IGNORECASE)


def _what_follows(lines: list[_Line]) -> list[tuple[bool, bool]]:
    """For each line, whether a line after it gives a source link, and whether one holds a citation
    marker (one pass from the end, so that each later heading is judged in constant time)."""
    out: list[tuple[bool, bool]] = [(False, False)] * len(lines)
    strong = marked = False
    for j in range(len(lines) - 1, -1, -1):
        out[j] = (strong, marked)
        t = lines[j].text
        if t.strip():
            strong = strong or bool(_STRONG_REF.search(t))
            marked = marked or bool(_MARKER_HINT.search(t))
    return out


def _heading_level(lines: list[_Line], j: int) -> int:
    """The level of the heading at line j: 1–6 for ATX, setext and HTML headings, 7 for a bold or
    plain line read as one (below every real heading)."""
    t = lines[j].text
    if (m := _ATX.match(t)) is not None:
        return len(m.group(1))
    if (h := _HTML_HEADING.search(t)) is not None:
        return int(h.group(1))
    if j + 1 < len(lines):
        if _SETEXT_EQ.match(lines[j + 1].text):
            return 1
        if _SETEXT_DASH.match(lines[j + 1].text):
            return 2
    return 7


def _accepted(entries: int, prose: int, data: int, plain: bool, lines: list[_Line], c: int,
              end: int) -> int | None:
    """`end` when what the section under line c holds makes it a references section, else None."""
    if data * 2 > entries and references_title(heading_title(lines[c].text)) in _LOOSE_TITLES:
        return None            # "## Sources" over "- Coal: 55.3% of supply", "## 引用" over quotations
    if plain:
        return end if entries > 0 and prose == 0 else None
    return end if prose == 0 or (entries >= 2 and prose <= max(1, entries // 3)) else None


_LEAD = re.compile(r"^[ \t]*(?:[-*+•][ \t]+|\d{1,4}[.)、][ \t]*)?")
# an entry that gives a figure under a short label ("- Coal: 55.3% of supply", "- 煤炭：2023年占比55.3%")
# or a quotation ("- “软件正在吞噬世界。”——马克·安德森")
_DATA_ENTRY = re.compile(
    r"^[ \t]*(?:[-*+•][ \t]+|\d{1,4}[.)、][ \t]*)?(?:[^:：\n]{1,30}[:：][^\n]*?\d[\d.,]*\s*(?:%|％|‰)"
    r"|[“\"「『][^\n]{3,}?[。！？.!?…][”\"」』][ \t]*[—–-]{1,2})")
_BIB = re.compile(
    r"《|\bet al\b|\bretrieved\b|\baccessed\b|访问|检索|出版社|\[[JMRDCNZ]\]|[(（](?:19|20)\d\d[a-z]?[)）]"
    r"|\b(?:vol|pp|no|ed|eds)\.|\bdoi\b|\bisbn\b|\bjournal\b|\bproceedings\b|\bpress\b",
    re.IGNORECASE,
)
#: A URL written without its scheme: "apple.com/newsroom", "a.org/x" (MLA's entries drop it).
SCHEMELESS_URL = r"(?<![\w@/.:-])(?:[a-z0-9-]{1,63}\.)+[a-z]{2,24}/[^\s<>\"'`)\]]*"
# MLA's entry: a quoted title, its period inside the quotes, and at its end a URL without its scheme
# ('"Apple sales." *Apple*, 2023, apple.com/newsroom.'); either alone is common in prose
_MLA_TITLE = re.compile(r"[“\"][^\"“”\n]{1,200}[.,!?][”\"]")
_ENDS_WITH_BARE_URL = re.compile(SCHEMELESS_URL + r"\Z", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


def _prose_like(line: str) -> bool:
    """Does a line (minus its bullet or number) read as a sentence rather than a reference entry?

    "Police issued 4,512 citations in 2023, up 12% from 2022." and "收入在2023年增长了5%。" do;
    "Smith, J. (2020). The oceans. Journal of Climate, 12(3)." and "《报告》，国家统计局，2023" do not.
    """
    t = _LEAD.sub("", line, count=1).strip()
    if _BIB.search(t) or (_ENDS_WITH_BARE_URL.search(t[-300:].rstrip(" .")) and _MLA_TITLE.search(t)):
        return False
    t = t.rstrip("*_”’\"'）)」』 ")
    if t.endswith(("。", "！", "？")):
        return True                    # a Chinese sentence (Chinese entries end in "." or nothing)
    if not t.endswith((".", "!", "?")):
        return False
    words = _WORD.findall(t)
    if len(words) < 6:
        return False
    lower = sum(1 for w in words if w[0].islower())
    return lower / len(words) >= 0.6 and t.count(". ") <= 1


def _with_inline(text: str, blocks: list[Span], body_end: int, link_labels: set[str]) -> tuple[Span, ...]:
    """Add inline regions found in the gaps between block regions of the body."""
    out: list[Span] = []
    pos = 0
    for bs, be in [*blocks, (body_end, body_end)]:
        if bs > pos:
            gap_end = min(bs, body_end)
            if gap_end > pos:
                out.extend(_inline_spans(text, pos, gap_end, link_labels))
        if bs < body_end:
            out.append((bs, min(be, body_end)))
        pos = max(pos, be)
        if pos >= body_end:
            break
    out.sort()
    merged: list[Span] = []
    for s, e in out:
        if merged and s < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((s, e))
    return tuple(merged)


def is_code_region(text: str, start: int) -> bool:
    """Does the protected region starting at `start` hold code, HTML, math or front matter?"""
    head = text[start:start + 4]
    if start == 0 and head.startswith(("---", "+++")):
        return True
    if head.startswith(("    ", "\t")):
        return True
    s = head.lstrip(" ")
    return s.startswith(("`", "~~~", "<", "$", "\\[", "\\("))


# "[label]: url", also in a quote or list item, with spaces in the label or the url on the next
# line: for reading authors' links and keeping markers from becoming links, erring towards finding
# one only costs a fallback style, missing one turns a marker into a link
_ANY_LINK_DEF = re.compile(
    r"^[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+|>[ \t]*)*\[([^\[\]\n^][^\[\]\n]{0,39})\]:"
    r"[ \t]*(?:\r?\n[ \t>]*)?<?([^\s>]*)",
    re.MULTILINE,
)


def link_definitions(text: str, layout: Layout) -> dict[str, str]:
    """Label (whitespace collapsed, casefolded) -> url of the link reference definitions in the
    body, outside code; the first definition of a label wins, as in CommonMark."""
    out: dict[str, str] = {}
    if "]:" not in text:
        return out
    starts = [ps for ps, _ in layout.protected]
    for m in _ANY_LINK_DEF.finditer(text, 0, layout.body_end):
        k = bisect.bisect_right(starts, m.start(1)) - 1
        if k >= 0 and layout.protected[k][1] > m.start(1) and is_code_region(text, starts[k]):
            continue
        out.setdefault(link_label(m.group(1)), m.group(2))
    return out


# a reference link's label: "[Webb page][2]" gives "2"
_REF_LINK_LABEL = re.compile(r"\]\[([^\[\]]{1,999})\]")
# a bracketed label anywhere in a text (a link's text, a reference link's label, a shortcut), one pass
_BRACKETED = re.compile(r"(?<!\\)\[([^\[\]]{1,999})\]")
# a label that numbers a citation: "1", "Source 1", "web:1", "citation:1", "doc1", "^1" (not "jwst-2")
_NUMBERING_LABEL = re.compile(
    rf"\^?(?:{CITATION_LABEL_WORD}|(?i:web|citation|cite|page|attached_file))?[ \t]*[:：.]?[ \t]*\d{{1,4}}")


def _labels_in(text: str) -> set[str]:
    """Every bracketed label of `text`, normalised (`_label`): what a definition could serve."""
    return {link_label(m.group(1)) for m in _BRACKETED.finditer(text)}


def footnote_note(definition: str) -> bool:
    """Whether a footnote's definition text is a note ("This figure excludes plug-in hybrids."),
    not a source: no link, URL or DOI, and it reads as a sentence."""
    return not _SOURCE_LINK.search(definition) and _prose_like(definition)


def kept_definitions(text: str, layout: Layout) -> list[str]:
    """The link reference definitions of the cut references section that the rest of the report
    links through by a label of words ("See [Webb][webb]", "[Hubble]" with "[webb]: https://…" in
    the list): the author's links, not citations (a numbering label, "[1]: https://…", "[Source
    1]: …", "[web:1]: …", is one). Each verbatim, with the lines it goes on to (a title, or its
    URL after a bare "[webb]:"). They come back after the new references list, so the report's
    links still resolve."""
    if layout.references is None or "]:" not in text:
        return []
    start, end = layout.references
    lines = _split_lines(text[start:end])
    found = [(i, m) for i, ln in enumerate(lines) if (m := _LINK_DEF.match(ln.text)) is not None]
    if not found:
        return []
    used = _labels_in(text[:start] + text[end:])
    out: list[str] = []
    for i, m in found:
        label = link_label(m.group(1))
        note = label.startswith("^") and not label[1:].isdigit() and footnote_note(lines[i].text[m.end():])
        if _NUMBERING_LABEL.fullmatch(label) or (label.startswith("^") and not note) or label not in used:
            continue                     # a footnote's reference is a citation marker: it is renumbered
            # (but for a note's, "[^hyb]: This figure excludes hybrids.": it stays, and its note)
        j = i
        bare = not lines[i].text[m.end():].strip()        # "[webb]:" with its URL below
        while j + 1 < len(lines):
            nxt = lines[j + 1].text
            if not nxt.strip() or _LINK_DEF.match(nxt) or not (
                    _INDENTED.match(nxt) or (bare and j == i) or (j <= i + 1 and nxt.lstrip()[:1] in "\"'(")):
                break
            j += 1
        out.append(text[start + lines[i].start:start + lines[j].end])
    return out


def inline_regions(text: str, start: int, end: int, link_labels: frozenset[str] | set[str]) -> list[Span]:
    """Inline regions (code spans, links, URLs, math, HTML) in text[start:end], such as a heading.

    The scan protects table rows and headings whole; a caller that looks inside them for
    citation markers uses this to keep out of the code, links and math they hold. A block that
    is a table (a line, then a delimiter row) is read cell by cell, as GFM reads it: an unescaped
    pipe ends a cell, and a code span, link or URL inside the cell ("`a|b`", "https://x|y")."""
    nl = text.find("\n", start, end)
    if nl < 0 or "|" not in text[start:nl]:
        return _inline_spans(text, start, end, link_labels)
    second = text[nl + 1:text.find("\n", nl + 1, end) if text.find("\n", nl + 1, end) >= 0 else end]
    if not (_TABLE_DELIM.match(second) and "|" in second):
        return _inline_spans(text, start, end, link_labels)
    out: list[Span] = []
    ls = start
    while ls < end:
        le = text.find("\n", ls, end)
        le = end if le < 0 else le
        out.extend(table_line_regions(text, ls, le, link_labels))
        ls = le + 1
    return out


_UNESCAPED_BAR = re.compile(r"(?<!\\)\|")


def table_line_regions(text: str, ls: int, le: int, link_labels: frozenset[str] | set[str]) -> list[Span]:
    """Inline regions of one table line text[ls:le], found in each cell on its own."""
    out: list[Span] = []
    a = ls
    for m in [*_UNESCAPED_BAR.finditer(text, ls, le), None]:
        b = le if m is None else m.start()
        if b > a:
            out.extend(_inline_spans(text, a, b, link_labels))
        a = b + 1
    return out


def open_table_rows(text: str, layout: Layout) -> tuple[Span, ...]:
    """`layout.protected` with the body's table rows opened (but for the code, links, URLs, math
    and HTML inside them), so a marker may go inside a row: the row is a sentence of its own."""
    if not layout.table_rows:
        return layout.protected
    rows = layout.table_rows
    out: list[Span] = []
    k = 0
    for a, b in layout.protected:
        while k < len(rows) and rows[k][1] <= a:
            k += 1
        cur = a
        while k < len(rows) and rows[k][0] < b:
            rs, re_ = rows[k]
            if rs > cur:
                out.append((cur, rs))
            out.extend(table_line_regions(text, rs, re_, layout.link_labels))
            cur = max(cur, re_)
            k += 1
        if cur < b:
            out.append((cur, b))
    return tuple(out)


_TICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*\r?\n")


class _CodeSpans:
    """Code spans of text[start:end], found as CommonMark does: a run of backticks opens one when
    a later run of the same length closes it before a blank line; a run with no such closer is
    literal text. Built in one pass (O(n log n)), then asked for the first span at or after a
    position: a regex that looked for each opener's closer scanned on to the end of the paragraph
    for every unclosed run, at every run length (a line of 1,000 backticks took 4 s)."""

    def __init__(self, text: str, start: int, end: int) -> None:
        found = text.find("`", start, end) >= 0
        runs = [(m.start(), m.end()) for m in _TICKS.finditer(text, start, end)] if found else []
        blanks = [m.start() for m in _BLANK_LINE.finditer(text, start, end)] if runs else []
        last_of: dict[int, int] = {}
        closer = [-1] * len(runs)
        for j in range(len(runs) - 1, -1, -1):  # the next run of its length, if no blank line is first
            a, b = runs[j]
            c = last_of.get(b - a, -1)
            if c >= 0:
                k = bisect.bisect_left(blanks, b)
                if k >= len(blanks) or blanks[k] >= runs[c][0]:
                    closer[j] = c
            last_of[b - a] = j
        self.starts = [a for a, _ in runs]
        self.spans: list[Span | None] = [None] * (len(runs) + 1)  # first span opening at run j or later
        for j in range(len(runs) - 1, -1, -1):
            c = closer[j]
            self.spans[j] = (runs[j][0], runs[c][1]) if c >= 0 else self.spans[j + 1]

    def first_from(self, pos: int) -> Span | None:
        return self.spans[bisect.bisect_left(self.starts, pos)] if self.starts else None


def _positions(text: str, token: str, start: int, end: int) -> list[int]:
    out: list[int] = []
    p = text.find(token, start, end)
    while p >= 0:
        out.append(p)
        p = text.find(token, p + 1, end)
    return out


def _unclosable(text: str, start: int, end: int) -> list[int]:
    """Openers in text[start:end] that nothing closes: "<!--" with no "-->" after it, "\\(" or
    "\\[" with no "\\)" / "\\]" before the next blank line. The scan masks them: its regex
    looked for each one's closer to the end of the region, for every opener (quadratic)."""
    out: list[int] = []
    if text.find("<!--", start, end) >= 0:
        last = text.rfind("-->", start, end)
        out += [p for p in _positions(text, "<!--", start, end) if last < p + 4]
    if text.find("\\", start, end) < 0:
        return out
    blanks: list[int] | None = None
    for opener, closer in (("\\(", "\\)"), ("\\[", "\\]")):
        opens = _positions(text, opener, start, end)
        if not opens:
            continue
        closes = _positions(text, closer, start, end)
        if blanks is None:
            blanks = [m.start() for m in _BLANK_LINE.finditer(text, start, end)]
        for p in opens:
            k = bisect.bisect_left(closes, p + 3)
            if k == len(closes):
                out.append(p)
                continue
            b = bisect.bisect_left(blanks, p + 2)
            if b < len(blanks) and blanks[b] < closes[k]:
                out.append(p)
    return out


def _inline_spans(text: str, start: int, end: int, link_labels: frozenset[str] | set[str]) -> list[Span]:
    spans: list[Span] = []
    code = _CodeSpans(text, start, end)
    # the regex runs over `src` from `shift` on: the text itself, or a copy of the region (and the
    # character before it, for look-behinds) with each unclosable opener's first character masked
    src, shift = text, 0
    dead = _unclosable(text, start, end)
    if dead:
        shift = max(start - 1, 0)
        chars = list(text[shift:end])
        for p in dead:
            chars[p - shift] = "\x01"
        src = "".join(chars)

    def search(at: int) -> re.Match[str] | None:
        return _INLINE.search(src, at - shift, end - shift)

    closes: dict[str, list[Span]] | None = None   # `_element_closes`, once an element opens
    opens: dict[str, list[int]] = {}
    blanks: list[int] = []
    pos = start
    m = search(pos)
    while True:
        c = code.first_from(pos)
        if c is not None and (m is None or c[0] < m.start() + shift):
            spans.append(c)  # leftmost wins: a code span before the next other region
            pos = c[1]
            if m is not None and m.start() + shift < pos:
                m = search(pos)
            continue
        if m is None:
            break
        kind = m.lastgroup
        s, e = m.start() + shift, m.end() + shift
        pos = e
        if kind == "reflink":
            label = m.group("label").strip().casefold()
            if not label:
                inner = m.group(0)
                label = inner[inner.find("[") + 1:inner.find("]")].casefold()
            inner = m.group(0)
            inner = inner[inner.find("[") + 1:inner.find("]")]
            if label not in link_labels or label.startswith("^") \
                    or (_CITE_LABEL.fullmatch(label) and _CITE_INNER.fullmatch(inner)):
                # "[^2][^3]": footnote references; "[^3]" is never a reference link's label
                # "[1][3]" is a pair of citation markers, not a reference link: rescan after "["
                # ("[text][1]" with "[1]: url" defined stays a link)
                spans.extend(_inline_spans(text, s + 1, e, link_labels))
                m = search(pos)
                continue
        elif kind == "url":
            e = trim_url(text, s, e)
        elif kind == "tag" and (om := _ELEMENT_OPEN.match(text, s)) is not None:
            if closes is None:
                closes, opens, blanks = _element_closes(text, start, end)
            name = om.group(1).lower()
            at = closes.get(name, [])
            k = bisect.bisect_left(at, (e, 0))
            if k < len(at):
                b = bisect.bisect_left(blanks, e)
                o = opens.get(name, [])
                nxt = bisect.bisect_left(o, e)   # another opening first: this one is not closed
                if (b >= len(blanks) or blanks[b] > at[k][0]) and (nxt >= len(o) or o[nxt] > at[k][0]):
                    e = pos = at[k][1]   # the element whole: "<code>…</code>", "<a href=…>…</a>"
        spans.append((s, e))
        m = search(pos)
    return spans


def _element_closes(text: str, start: int, end: int
                    ) -> tuple[dict[str, list[Span]], dict[str, list[int]], list[int]]:
    """The closing and opening tags of `_ELEMENT_CLOSE`'s elements in text[start:end] by name, and
    the blank lines there (found once: each opening tag then finds its closer by bisection)."""
    closes: dict[str, list[Span]] = {}
    opens: dict[str, list[int]] = {}
    for m in _ELEMENT_CLOSE.finditer(text, start, end):
        closes.setdefault(m.group(1).lower(), []).append((m.start(), m.end()))
    for m in _ELEMENT_ANY_OPEN.finditer(text, start, end):
        opens.setdefault(m.group(1).lower(), []).append(m.start())
    return closes, opens, [m.start() for m in _BLANK_LINE.finditer(text, start, end)]


# --- a references section before more report (`misplaced_references`) ------------------------------
# words that name sources, in a heading or a label anywhere else ("### Hubble sources", "本节参考资料",
# "**Sources for this section:**"): a list of the report's own there, so nothing is moved
_SOURCE_WORDS = re.compile(r"\b(?:sources?|references?|bibliography|citations?|works cited)\b"
                           r"|参考|来源|文献|出处|引用", re.IGNORECASE)
# a link or a URL, taken out of a line to read what it says around them
_LINK_OR_URL = re.compile(r"\[[^\[\]\n]*\]\([^()\s]*\)|<?(?:https?://|www\.)[^\s<>]+>?")
# links in parentheses that hold nothing else: a sentence's link citation, "… in 1990 ([NASA](https://…))."
_PAREN_LINKS = re.compile(r"(?<!\])[(（][ \t]*(?:(?:\[[^\[\]\n]*\]\([^()\s]*\)|<?(?:https?://|www\.)[^\s<>()（）]+>?)"
                          r"[ \t]*[,;，；、]?[ \t]*)+[)）]")
# "Source: [Title](https://…)", "来源：…": a line that gives a paragraph's source
_SOURCE_LABEL = re.compile(
    r"^[ \t>*_]*(?:sources?|references?|来源|资料来源|数据来源|参考|出处)[ \t*_]*[:：]", re.IGNORECASE)
# a line opening as an entry does: a bullet, a number, a bracketed number, a superscript, a link
_ENTRY_OPENING = re.compile(r"[ \t>]*(?:[-*+•][ \t]|\d{1,4}[.)、]|[\[【［〔(（<①-⑳^]|[¹²³⁴⁵⁶⁷⁸⁹⁰]|https?://|www\.|doi)",
                            re.IGNORECASE)
# a figure under a short label, "- Revenue: $96.8 billion in 2023 (https://…)": the report's own data
_LABELLED_FIGURE = re.compile(r"^[ \t]*(?:[-*+•][ \t]+|\d{1,4}[.)、][ \t]*)?[^:：\n]{1,30}[:：][ \t]*"
                              r"(?:US\$|\$|€|£|¥|￥|RMB)?[ \t]*\d")
_SUPERSCRIPT_RUN = re.compile(r"(?<=[^\s⁰¹²³⁴⁵⁶⁷⁸⁹])[¹²³⁴⁵⁶⁷⁸⁹][⁰¹²³⁴⁵⁶⁷⁸⁹]{0,2}(?![⁰¹²³⁴⁵⁶⁷⁸⁹])")
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
# titles of more reading, not of the body's sources: such a section mid-report stays where it is
_READING_TITLES = frozenset({"further reading", "further readings"})


@dataclass(frozen=True, slots=True)
class Moved:
    """A report whose references sit before more of the report ("## References", its entries, then
    "## Findings"; or one list closing each section), rearranged so that it can be traced as any
    report is: `text` is the report without the lists, then a blank line, then the lists, where
    `layout` cuts them. `original` maps an offset of `text` back to the report's."""

    text: str
    layout: Layout
    # the report's pieces `text` is made of, in `text`'s order: (offset in `text`, offset in the
    # report, length); what lies between two is a separator `text` adds
    segments: tuple[tuple[int, int, int], ...]
    # lists that each resolve only their own section's old markers (`section_references`): for each,
    # (scope start, scope end, list start, list end), offsets of `text`; () when one list resolves
    # every marker
    scopes: tuple[tuple[int, int, int, int], ...] = ()

    def original(self, p: int, *, end: bool = False) -> int:
        """The report's offset for `text`'s offset `p` (`end`: `p` ends a span)."""
        k = bisect.bisect_right([ms for ms, _os, _n in self.segments], p) - 1
        if k < 0:
            return p
        ms, os_, n = self.segments[k]
        if end and p == ms and k > 0:        # an end where a piece starts: the end of the piece before
            pms, pos, pn = self.segments[k - 1]
            if pms + pn == p:
                return pos + pn
        return os_ + min(p - ms, n)          # in a separator after a piece: that piece's end


def misplaced_references(text: str, layout: Layout) -> Moved | None:
    """A references section with more of the report after it, read as if it were at the end.

    Leans to leaving it where it is: moved, it also resolves the old markers of the whole report,
    so a list that may be one section's own, or the report's content, stays. See
    docs/segmentation.md ("A references section before more report") for the rules. The text
    around it is kept byte for byte; only the section moves."""
    if layout.references is not None or not layout.headings:
        return None
    found: list[tuple[int, str, int]] = []      # (heading start, title, level)
    for hs, he in layout.headings:
        line = text[hs:he].rstrip("\r\n")
        title = references_title(heading_title(line))
        if title is not None:
            m = _ATX.match(line)
            if m is None or title in _READING_TITLES:
                return None
            found.append((hs, title, len(m.group(1))))
    lines = _split_lines(text)
    found += _bold_titles(text, lines, layout)
    if len(found) != 1:
        return None
    hs, title, level = found[0]
    # the next section at its level (a deeper heading groups entries): one above it, "## Webb"
    # after "### References", makes the list the closing of one section, its own; a bold title
    # has no level, and runs to the next heading
    after = None
    for s2, e2 in layout.headings:
        if s2 > hs:
            nm = _ATX.match(text[s2:e2].rstrip("\r\n"))
            if nm is None or 0 < len(nm.group(1)) < level:
                return None
            if len(nm.group(1)) == level or level == 0:
                after = s2
                break
    if after is None:
        return None
    plain = list(text)
    for a, b in layout.protected:
        plain[a:b] = " " * (b - a)
    if level == 0 and _bold_closes_its_section("".join(plain), lines, layout, hs, after):
        return None
    first = bisect.bisect_left([ln.start for ln in lines], hs)
    section = _section_lines(text, lines[first + 1:], after, hs)
    if section is None:
        return None
    entries, end = section
    if not _rest_lists_no_sources(text, lines, layout, [(hs, end)]):
        return None
    body = text[:hs] + text[end:]
    if title in _LOOSE_TITLES or level == 0:
        # "## Sources" also heads lists of figures, quotations, tools: the rest cites half of this one
        rest = _CODE_SPAN.sub(" ", "".join(plain[:hs] + plain[end:]))
        cited = {n for m in _BODY_MARKER.finditer(rest) for n in _bracket_numbers(m.group(1))}
        # superscript notes cite by number too ("… $60.9 billion.¹"), though never read as markers
        cited |= {int(m.group(0).translate(_SUPERSCRIPTS)) for m in _SUPERSCRIPT_RUN.finditer(rest)}
        if 2 * len(cited & set(range(1, entries + 1))) < entries:
            return None
    nl = "\r\n" if "\r\n" in text else "\n"
    stripped = body.rstrip("\r\n")
    sep = body[len(stripped):]
    sep = "" if sep.count("\n") >= 2 else (nl if sep else nl + nl)
    moved = body + sep + text[hs:end]
    lay = scan_markdown(moved)
    at = len(body) + len(sep)
    if lay.references is None or lay.references[0] != at or moved[lay.references[1]:].strip():
        return None
    return Moved(moved, lay, ((0, 0, hs), (hs, end, len(text) - end), (at, hs, end - hs)))


# a references entry's number: "[1] …", "【1】…", "[^1]: …", "1. …", "- [1] …"
_ENTRY_NUMBER = re.compile(
    r"^ {0,3}(?:[-*+•][ \t]+)?(?:[\[【]\^?(\d{1,4})\^?[\]】]|(\d{1,4})(?:[.)][ \t]|、))")


def _entry_numbers(section: str) -> set[int]:
    """The numbers a references list gives its entries (its lines' leading "[n]", "n.", "【n】")."""
    return {int(m.group(1) or m.group(2)) for line in section.splitlines()
            if (m := _ENTRY_NUMBER.match(line)) is not None}


def _cited_numbers(plain: str) -> set[int]:
    """The numbers `plain` (protected regions blanked) cites in brackets or superscripts."""
    rest = _CODE_SPAN.sub(" ", plain)
    cited = {n for m in _BODY_MARKER.finditer(rest) for n in _bracket_numbers(m.group(1))}
    return cited | {int(m.group(0).translate(_SUPERSCRIPTS)) for m in _SUPERSCRIPT_RUN.finditer(rest)}


def section_references(text: str, layout: Layout) -> Moved | None:
    """Reference lists that each close a section of the report, read as if they stood at the end,
    each resolving only its own section's old markers: "## Webb", its text citing [1] and [2],
    then "### Sources" and entries [1] and [2], then "## Hubble", its text citing [1], then its own
    "### Sources" (open_deep_research writes reports so, numbering each section's sources from 1).

    Each such list is under a markdown heading naming references (not Further reading), or a bold
    title naming them ("**Sources**", one level below every heading), runs to the next heading at its
    level or above, and holds only entries that give a source
    (`_section_lines`); its scope, the text from its section's heading (the nearest above it, a
    level up) or from the list before it, whichever is later, up to the list, cites one of its
    entries' numbers or more (a trailing list's may cite none), and no number it does not give; or
    no scope cites a number and there are two such lists or more, numbered or not ("- [Title](https:
    //…)"). There are two such lists or more (a trailing one, under such a heading or title,
    counts), or one that a heading closes: one a level above it, or any after a bold title. No
    other line of the report gives a source as a list's entry does or names sources
    (`_rest_lists_no_sources`). Moved to the
    report's end, in their order, they are cut as one references section. A marker outside every
    scope resolves through no list. The text around the lists is kept byte for byte."""
    if not layout.headings:
        return None
    titled = [(hs, line, references_title(heading_title(line)))      # (a setext title's text line)
              for hs, he in layout.headings for line in (text[hs:he].split("\n", 1)[0].rstrip("\r"),)]
    lines = _split_lines(text)
    # a bold title ("**Sources**") heads a list as "#### Sources" would, one level below every
    # heading: it runs to the next heading of any level, and its section is the heading above it
    bold = _bold_titles(text, lines, layout) if "**" in text or "__" in text else []
    if not bold and all(title is None for _hs, _line, title in titled):
        return None
    starts = [ln.start for ln in lines]
    heads: list[tuple[int, int, bool]] = []     # (start, level, names references) of each heading
    body_at: dict[int, int] = {}                # where the lines under each heading start
    for (hs, line, title), (_hs, he) in zip(titled, layout.headings, strict=True):
        m = _ATX.match(line)
        if title is not None and title in _READING_TITLES:
            return None                          # more reading: left as it is
        level = len(m.group(1)) if m else _heading_level(lines, bisect.bisect_left(starts, hs))
        if title is not None and level > 6:
            return None                          # no heading's level (a plain "References:" line)
        heads.append((hs, level, title is not None))
        body_at[hs] = bisect.bisect_left(starts, he)   # (a setext title's underline is its own)
    known = {hs for hs, _level, _named in heads}
    heads = sorted(heads + [(hs, _BOLD_LEVEL, True) for hs, _title, _level in bold if hs not in known])
    lists: list[tuple[int, int, int]] = []      # (start, end, level) of each list, in order
    parents: list[int] = []                      # where each list's section starts
    closed_above = False
    # for each heading, the next at its level or above, and the nearest above it a level up (its
    # section's), each found once for all (a stack of open headings: linear)
    closer: list[tuple[int, int] | None] = [None] * len(heads)
    section_of: list[int] = [0] * len(heads)
    open_: list[int] = []
    for k, (hs, level, _named) in enumerate(heads):
        while open_ and heads[open_[-1]][1] >= level:
            closer[open_.pop()] = (hs, level)
        section_of[k] = heads[open_[-1]][0] if open_ else 0
        open_.append(k)
    for k, (hs, level, named) in enumerate(heads):
        if not named:
            continue
        after = closer[k]
        if after is None:
            return None                          # runs to the trailing section: the scan's to read
        first = body_at.get(hs, bisect.bisect_left(starts, hs) + 1)
        section = _section_lines(text, (lines[i] for i in range(first, len(lines))), after[0], hs)
        if section is None:
            return None
        lists.append((hs, section[1], level))
        parents.append(section_of[k])
        closed_above = after[1] < level
    if not lists:
        return None
    trailing = layout.references
    if trailing is not None:
        line_end = text.find("\n", trailing[0])
        first_line = text[trailing[0]:line_end if line_end >= 0 else len(text)].rstrip("\r")
        # ATX, setext or HTML: 1-6; a bold title ("**Sources**" closing the last section, as the
        # others): `_BOLD_LEVEL`; anything else is no heading to read sections by
        tlevel = _heading_level(lines, bisect.bisect_left(starts, trailing[0]))
        if tlevel > 6:
            bm = _BOLD_LINE.match(first_line)
            if bm is None or references_title(bm.group("text")) in (None, *_READING_TITLES):
                return None
            tlevel = _BOLD_LEVEL
        lists.append((trailing[0], trailing[1], tlevel))
        parents.append(next((s2 for s2, l2, _ in reversed(heads) if l2 < tlevel), 0))
    elif len(lists) == 1 and not closed_above:
        return None                              # one list before more report: `misplaced_references`'
    plain = list(text)
    for a, b in layout.protected:
        plain[a:b] = " " * (b - a)
    scopes: list[tuple[int, int]] = []
    prev_end = 0
    silent: list[bool] = []                     # per list: its section cites no number
    summary = False                              # the trailing list closes a section citing none
    for k, ((hs, end, _level), parent) in enumerate(zip(lists, parents, strict=True)):
        scope = (max(parent, prev_end), hs)
        numbers = _entry_numbers(text[hs:end])
        cited = _cited_numbers("".join(plain[scope[0]:scope[1]]))
        # (not half of them: a writer lists sources it does not cite, and a list left in the body
        # because of that was cut when the output, its markers renumbered, was traced again; the
        # trailing list, which the scan cuts anyway, may close a section that cites nothing, a
        # summary under the sections' own lists)
        silent.append(not cited)
        if not cited:
            summary = bool(numbers) and trailing is not None and k == len(lists) - 1
        elif not numbers or not cited & numbers or not cited <= numbers:
            return None
        scopes.append(scope)
        prev_end = end
    # lists whose sections cite nothing ("- [Title](https://…)" entries, or numbered ones no marker
    # cites): every list, two or more (a report that cites by no number), or only a trailing summary's
    if any(silent) and not (all(silent) and len(lists) >= 2) and not (sum(silent) == 1 and summary):
        return None
    if not _rest_lists_no_sources(text, lines, layout, [(a, b) for a, b, _ in lists]):
        return None
    # the report without its lists, a blank line, then the lists in their order
    nl = "\r\n" if "\r\n" in text else "\n"
    mids = lists[:-1] if trailing is not None else lists
    body_end = trailing[0] if trailing is not None else len(text)
    segments: list[tuple[int, int, int]] = []
    parts: list[str] = []
    size = 0

    def put(a: int, b: int) -> int:
        nonlocal size
        segments.append((size, a, b - a))
        parts.append(text[a:b])
        size += b - a
        return size - (b - a)

    def gap() -> None:
        nonlocal size
        done = "".join(parts[-1:])
        tail = done[len(done.rstrip("\r\n")):]
        sep = "" if tail.count("\n") >= 2 else (nl if tail else nl + nl)
        parts.append(sep)
        size += len(sep)

    cursor = 0
    moved_scopes: list[tuple[int, int]] = []
    for (hs, end, _level), (a, b) in zip(mids, scopes, strict=False):
        at = put(cursor, hs)
        moved_scopes.append((at + a - cursor, at + b - cursor))
        cursor = end
    at = put(cursor, body_end)
    if trailing is not None:
        moved_scopes.append((at + scopes[-1][0] - cursor, at + scopes[-1][1] - cursor))
    moved_lists: list[tuple[int, int]] = []
    for hs, end, _level in mids:
        gap()
        at = put(hs, end)
        moved_lists.append((at, at + end - hs))
    if trailing is not None:
        gap()
        at = put(trailing[0], len(text))
        moved_lists.append((at, at + trailing[1] - trailing[0]))
    moved = "".join(parts)
    lay = scan_markdown(moved)
    # (cut whole, and no more: what followed the trailing list follows it still)
    if lay.references is None or lay.references[0] != moved_lists[0][0] \
            or moved[lay.references[1]:].strip() != moved[moved_lists[-1][1]:].strip():
        return None
    return Moved(moved, lay, tuple(segments), tuple((a, b, c, d) for (a, b), (c, d) in zip(
        moved_scopes, moved_lists, strict=True)))


_BOLD_LEVEL = 7   # a bold title's level in `section_references`: below every heading (see `_heading_level`)


def _bold_titles(text: str, lines: list[_Line], layout: Layout) -> list[tuple[int, str, int]]:
    """(start, title, level 0) of each bold line that titles references ("**References**",
    "**Sources:**") and opens a paragraph outside any block: a references heading in all but
    markup. A title of more reading stays where it is."""
    found: list[tuple[int, str, int]] = []
    starts = [a for a, _ in layout.protected]
    for i, ln in enumerate(lines):
        if ln.start >= layout.body_end:
            break
        bm = _BOLD_LINE.match(ln.text) if ln.text.startswith(("**", "__", " ")) else None
        if bm is None or (i > 0 and lines[i - 1].text.strip()):
            continue
        title = references_title(bm.group("text"))
        if title is None or title in _READING_TITLES:
            continue
        k = bisect.bisect_right(starts, ln.start) - 1
        if k >= 0 and layout.protected[k][1] > ln.start:
            continue                     # inside code, a table, a quote: no title of the report's
        found.append((ln.start, title, 0))
    return found


def _bold_closes_its_section(plain: str, lines: list[_Line], layout: Layout, hs: int, after: int) -> bool:
    """Whether the list under a bold title at `hs` closes the section it stands in, as "### Sources"
    closing "## Webb" does, and so may be that section's own: the next heading (at `after`) is
    at the level of the section's heading or above, that heading is not the report's first (its
    title, over all of it), and nothing before it cites a number (`plain`: the text with its
    protected regions blanked)."""
    before = [h for h in layout.headings if h[0] < hs]
    if len(before) < 2:
        return False
    starts = [ln.start for ln in lines]
    own = _heading_level(lines, bisect.bisect_left(starts, before[-1][0]))
    if _heading_level(lines, bisect.bisect_left(starts, after)) > own:
        return False
    return _BODY_MARKER.search(_CODE_SPAN.sub(" ", plain[:before[-1][0]])) is None


def _section_lines(text: str, lines: Iterable[_Line], after: int, hs: int) -> tuple[int, int] | None:
    """(entries, end) of the section under a references heading, up to `after`, when every line
    under it gives a source (a URL, link, DOI) and reads as no sentence, figure, quotation or step,
    or goes on the line above it, or is a deeper heading; one lead-in line that names sources may
    open it ("The following sources were consulted:"). A rule after the last entry stays the
    report's, with what follows, when a blank line stands before the heading (else the rule would
    underline the paragraph above it as a heading). None when it is no such section."""
    entries, prev, lead, rule = 0, False, False, -1
    for ln in lines:
        if ln.start >= after:
            break
        t = ln.text
        if not t.strip():
            prev = False
        elif _THEMATIC.match(t):
            if not entries:
                return None
            prev, rule = False, ln.start if rule < 0 else rule
        elif _ATX.match(t):
            prev, rule = False, -1
        elif prev and t[:1] in (" ", "\t"):
            rule = -1
        elif _SOURCE_LINK.search(t) and not _prose_like(t) and not _STEP_BEFORE_LINK.search(t) \
                and not (_DATA_ENTRY.match(t) and not _BIB.search(t)) and not _LABELLED_FIGURE.match(t):
            entries, prev, rule = entries + 1, True, -1
        elif not entries and not lead and len(t) <= 120 and _SOURCE_WORDS.search(t) \
                and t.rstrip().rstrip("*_").endswith((":", "：")):
            lead = True
        else:
            return None
    if not entries:
        return None
    blank_before = hs == 0 or text.endswith(("\n\n", "\n\r\n"), 0, hs)
    return entries, (rule if rule >= 0 and blank_before else after)


def _rest_lists_no_sources(text: str, lines: list[_Line], layout: Layout, cut: list[tuple[int, int]]) -> bool:
    """Whether no line outside the sections `cut` ([start, end) each) gives a source as an entry
    of a list does ("[1] Title https://…", "- [Reuters](https://…) — what it says",
    "Source: https://…", "[1] Reuters, \"Tesla deliveries\", 2024."), names sources in a heading
    or a label ("### Hubble sources", "**Sources for this section:**"), or defines a link label
    the report links through: then the section may be one section's own list, and its numbers the
    report's other markers' too."""
    headings = {h[0] for h in layout.headings}
    cut_starts = [a for a, _b in cut]            # (sorted, apart)
    labels: set[str] = set()
    for ln in lines:
        t = ln.text
        if not t.strip():
            continue
        k = bisect.bisect_right(cut_starts, ln.start) - 1
        if k >= 0 and ln.start < cut[k][1]:
            if (d := _LINK_DEF.match(t)) is not None:
                labels.add(link_label(d.group(1)))
            continue
        label = len(t) <= 80 and (bool(_BOLD_LINE.match(t)) or t.rstrip().endswith((":", "："))) \
            or (len(t.strip()) <= 24 and not _SENTENCE_END.search(t))     # "本节参考资料"
        if (ln.start in headings or label) and _SOURCE_WORDS.search(heading_title(t)):
            return False
        opens = _opens_as_entry(t) or bool(_SOURCE_LABEL.match(t))
        if _SOURCE_LINK.search(_PAREN_LINKS.sub("", t)):
            # a link that is no sentence's citation in parentheses
            said = _LINK_OR_URL.sub("", t).rstrip(" \t()（）;；,，、")
            if opens or not (_prose_like(t) or _prose_like(said)):
                return False
        elif opens and _BRACKET_ENTRY.match(t) and (_CITATION_HINT.search(t) or _BIB.search(t)) \
                and not _prose_like(t):
            return False                        # "[1] Reuters, \"Tesla deliveries\", 2024."
    if labels:
        rest = "".join(text[a:b] for a, b in zip([0, *(e for _s, e in cut)],
                                                  [*(s_ for s_, _e in cut), len(text)], strict=True))
        used = _labels_in(rest)
        linked = {link_label(m.group(1)) for m in _REF_LINK_LABEL.finditer(rest)}
        if any(lab in linked or (not lab.isdigit() and lab in used) for lab in labels):
            return False                        # "[Webb][webb]": the author's own link definitions
    return True


def trim_url(text: str, s: int, e: int) -> int:
    """Drop trailing punctuation and unbalanced closing brackets from a bare URL."""
    opened = {")": text.count("(", s, e), "]": text.count("[", s, e)}
    closed = {")": text.count(")", s, e), "]": text.count("]", s, e)}
    while e > s:
        ch = text[e - 1]
        if ch in _URL_TRAIL:
            e -= 1
        elif ch in closed and opened[ch] < closed[ch]:
            closed[ch] -= 1
            e -= 1
        else:
            break
    return e


__all__ = ["scan_markdown", "is_references_title", "references_title", "LINK_OPEN", "BULLET_ITEM",
           "one_line_entries", "heading_title", "unclosed_block", "inline_regions", "table_line_regions",
           "is_code_region", "link_definitions", "link_label", "Moved", "misplaced_references",
           "section_references", "trim_url",
           "footnote_note",
           "kept_definitions"]
