"""Which sentences need a citation (rules). A sentence that states a checkable fact does;
questions, heading-like fragments, list lead-ins, advice and talk about the answer itself don't.

Recognition decides what is reported as *unsupported*; any prose sentence that a record
verifiably supports is still cited (a supported sentence never loses its source), but for a
label that only names a topic (`is_label`), which states nothing to support."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tracer.existing import SOURCE_NOTE_RE, strip_markers
from tracer.models import Sentence
from tracer.text import content_tokens, numbers

# Discourse openers say how a sentence relates to the others, not whether it states a fact:
# "In summary, X" and "最后，X" need a citation exactly when X does, so they are stripped first.
_LEAD = re.compile(
    r"^(?:(?:in (?:summary|conclusion|short|general|addition|particular|fact|practice|brief)|overall|"
    r"finally|lastly|additionally|furthermore|moreover|however|therefore|thus|also|ultimately|"
    r"consequently|similarly|likewise|meanwhile|for (?:example|instance)|as a result|"
    r"on the other hand|in other words|that said|importantly|notably|specifically|generally|"
    r"typically|to (?:sum up|summarize|conclude)|first(?:ly)?|second(?:ly)?|then|next)\s*,?\s+"
    r"|it is (?:important|worth|essential|crucial|vital) to (?:note|remember|mention|consider|"
    r"understand|recognize) (?:that )?"
    r"|(?:最后|总的来说|总之|总而言之|综上所述|综上|首先|其次|此外|另外|同时|然而|因此|所以|例如|比如|"
    r"其实|事实上|另一方面|而且|并且)[，,、]?\s*)",
    re.IGNORECASE,
)
# Talk about the answer itself, not about the world.
_META = re.compile(
    r"^(?:(?:i|we) (?:hope|recommend|suggest|think|believe)|let me|let's|here (?:is|are)|hope this|"
    r"as an ai|以下是|下面是|希望|我认为|我建议)",
    re.IGNORECASE,
)
# Instructions and advice ("Click Save.", "You should consult ...") state no checkable fact.
_INSTRUCTION = re.compile(
    r"^(?:select|click|choose|open|go|save|press|type|enter|navigate|install|run|use|try|consider|"
    r"make sure|ensure|remember|note that|avoid|prioriti[sz]e|check|visit|contact|consult|ask|keep|"
    r"follow|see|refer to)\b(?!-)"
    r"(?!\s+(?:of|to|with|for|by|in|is|was|are|were|has|had)\b)"  # "Use of X rose", "Follow-up"
    r"|^(?:you|we) (?:should|may|might|can|could|will|need to|must)\b"
    r"|^(?:请|建议|你可以|你需要|我们可以|您可以)",
    re.IGNORECASE,
)
MIN_CONTENT_WORDS = 4


def needs_citation(sentence: Sentence, lang: str) -> bool:
    """Rule-based cite-worthiness of one sentence: a declarative statement of at least
    MIN_CONTENT_WORDS content words (fewer if it states a number), once discourse openers are
    stripped, that is not a question, a lead-in to a list, talk about the answer, or advice."""
    # "See [1] for details.": a marker is no figure, nor a source note's number ("(Source 2)")
    text = strip_markers(SOURCE_NOTE_RE.sub("", sentence.text)).strip()
    if not text or text.endswith(("?", "？")):
        return False
    if sentence.in_table:  # a row names things and gives their figures: no openers or advice to read
        row = strip_markers(text)     # a marker's number is no figure of the row
        words = content_tokens(strip_markers(sentence.query))  # its values under their column headers
        figures = bool(numbers(row))
        claims = len(words) >= MIN_CONTENT_WORDS or (figures and len(words) >= 2)
        return claims and (figures or len(content_tokens(row)) >= 3)  # "| Feature | Yes |" claims nothing
    for _ in range(3):  # "Finally, in summary, X"
        m = _LEAD.match(text)
        if m is None or not m.end():
            break
        text = text[m.end():]
    if text.rstrip().endswith((":", "：")) or _META.search(text) or _INSTRUCTION.search(text):
        return False
    words = content_tokens(text)
    if len(words) < MIN_CONTENT_WORDS:
        return bool(numbers(text)) and len(words) >= 2
    return True


# what may stand before a list item's text on its line: indentation, a quote's ">", a bullet or a
# number, a task box
_ITEM_PREFIX = re.compile(
    r"[ \t>]*(?:(?:[-*+•·]|\d{1,3}[.)、．）]|[（(]\d{1,3}[)）]|[一二三四五六七八九十]{1,3}、|[①-⑳])[ \t]*)?"
    r"(?:\[[ xX]\][ \t]*)?")
_ITEM_OPEN = re.compile(r"[ \t>]*(?:[-*+•·]|\d{1,3}[.)、．）]|[（(]\d{1,3}[)）]|[①-⑳])[ \t]")
_LABEL_END = re.compile(r"[.!?。！？;；…]$")
_WHOLE_EMPHASIS = re.compile(r"(\*\*|__)(?=\S).*\S\1[ \t]*[:：]?")
MAX_LABEL_WORDS = 3
_VERB = re.compile(r"\b(?i:is|are|was|were|has|have|had|will|would|can|could|did|does|do|may|might|must|"
                   r"shall|should|became|becomes|remains?|rose|fell|grew|leads?|led|wins?|won)\b")


# a line that captions a table or figure ("Table 1. Sales by maker", Pandoc's ": Table 1. …" under a
# table, "图1 …"), or heads a memo ("**To:** Board  **From:** …", "Date: 4 December 2026")
_FURNITURE_LINE = re.compile(
    r"[ \t>]*(?::[ \t]+)?(?:"
    r"(?:\*\*|__|\*|_)?(?:Table|Figure|Fig\.|Chart|Exhibit|Source)[ \t]*\d+(?:\.\d+)?[a-z]?"
    r"(?:\*\*|__|\*|_)?[ \t]*[.:：]"
    r"|(?:\*\*|__)?[图表][ \t]*\d+(?:\*\*|__)?[ \t.:：]"
    r"|(?:\*\*|__)?(?:To|From|Date|Subject|Re|Cc|CC|Bcc|Attn|Memo|Memorandum|Prepared (?:by|for)"
    r"|收件人|发件人|抄送|日期|主题|事由)(?:\*\*|__)?[ \t]*[:：]"
    # a line in italics that says who the document is for or by ("*A briefing prepared for league
    # sponsors.*", "_Prepared by the strategy team, May 2025_", "*Last updated: 3 June 2025*")
    r"|(?P<em>\*|_)(?=[^*_\n]{0,120}?\b(?:(?:prepared|written|compiled|produced|commissioned) (?:for|by)"
    r"|[Ll]ast updated|[Uu]pdated (?:on )?\d)\b)[^*_\n]{1,200}(?P=em)[ \t]*(?:\r?\n|\Z))")


def is_furniture(sentence: Sentence, text: str) -> bool:
    """Whether a sentence is part of a line that captions a table or figure ("Table 1. New energy
    vehicle sales by maker in 2023", Pandoc's ": Table 1. …" under a table, "图1 …") or heads a memo
    ("**To:** Board of directors  **From:** Strategy team"): it describes the document, not the
    world, so it is never cited (nor reported unsupported). Not a sentence with its author's marker."""
    if sentence.in_table:
        return False
    ls = text.rfind("\n", 0, sentence.start) + 1
    if _FURNITURE_LINE.match(text, ls) is None:
        # Pandoc's caption under a table (": Selected policies"), not a definition list's ": …"
        above = text[:ls].rstrip() if text.startswith(": ", ls) else ""
        if not above[above.rfind("\n") + 1:].lstrip().startswith("|"):
            return False
    return strip_markers(SOURCE_NOTE_RE.sub("", sentence.text)).strip() == sentence.text.strip()


# an indirect question standing alone, as lists of open questions write them
_OPEN_QUESTION = re.compile(r"(?:Whether|Whether or not)\b|是否|能否|会否")
_CLAUSE_COMMA = re.compile(r"[,，;；:：]")


def is_question(sentence: Sentence) -> bool:
    """Whether a sentence asks rather than states ("Why did BYD overtake Tesla in 2023?"): it ends
    in a question mark, or is an indirect question alone ("Whether the league will realign its
    conferences.", "是否上调利率。", no comma: "Whether or not it rains, the game goes on" states),
    and bears no marker of its author. A record may state what the question
    takes for granted, but a citation on a question reads as support for an answer it does not
    give, so it is never cited (nor reported unsupported). A question its author cited ("Did BYD
    overtake Tesla? [1]") is read as the author's claim, as a label with a marker is."""
    # (one that ends in a quoted question states what someone asks: 'summarized by the phrase "Who
    # says what … with what effect?"')
    if sentence.in_table:
        return False
    asks = sentence.text.rstrip("*_ \t\r\n").endswith(("?", "？"))
    if not asks and not _OPEN_QUESTION.match(sentence.text.lstrip("*_ \t")):
        return False   # (most sentences: no marker scan)
    said = strip_markers(SOURCE_NOTE_RE.sub("", sentence.text)).strip()
    if said != sentence.text.strip():
        return False
    if _OPEN_QUESTION.match(said.lstrip("*_ \t")) and not _CLAUSE_COMMA.search(said):
        return True   # "Whether the league will realign its conferences.": a question to watch
    return said.rstrip("*_ \t").endswith(("?", "？"))


def is_label(sentence: Sentence, text: str) -> bool:
    """Whether a sentence is a label that names a topic and states nothing ("1. **动力电池**" over
    its points, "- Economic growth" over sub-items, "经济增长" alone on its line): no marker, no
    figure and no end punctuation, the whole of its line, and all in bold with at most
    MAX_LABEL_WORDS content words, or with one fewer a list item with deeper items under it or a
    paragraph of one line. A record that names the topic does not support it, so it is never
    cited (nor reported unsupported)."""
    if sentence.in_table:
        return False
    said = strip_markers(SOURCE_NOTE_RE.sub("", sentence.text)).strip()
    if said != sentence.text.strip():
        return False                     # an author's marker on it: a claim ("Apple acquired Beats [1]")
    core = said.rstrip(":： \t").strip("*_` \t")
    if not core or _LABEL_END.search(core) or numbers(core):
        return False
    if _VERB.search(core):
        return False                     # "**Diesel was surpassed**" says something
    bold = _WHOLE_EMPHASIS.fullmatch(said) is not None
    if len(content_tokens(core)) > (MAX_LABEL_WORDS if bold else MAX_LABEL_WORDS - 1):
        return False
    ls = text.rfind("\n", 0, sentence.start) + 1
    le = text.find("\n", sentence.end)
    le = len(text) if le < 0 else le
    if _ITEM_PREFIX.fullmatch(text, ls, sentence.start) is None \
            or strip_markers(text[sentence.end:le]).strip(" \t\r*_"):
        return False                     # more of the line is text: a sentence's part
    if bold:
        return True
    prev_end = ls - 1 if ls else 0
    prev = text[text.rfind("\n", 0, max(0, prev_end)) + 1:prev_end] if ls else ""
    nxt, blank_after = le + 1, False
    while nxt < len(text):               # the next line with text
        e = text.find("\n", nxt)
        e = len(text) if e < 0 else e
        if text[nxt:e].strip():
            break
        nxt, blank_after = e + 1, True
    after_end = text.find("\n", nxt)
    after = text[nxt:len(text) if after_end < 0 else after_end] if nxt < len(text) else ""
    if sentence.in_list:                 # deeper items under it
        prefix = text[ls:sentence.start]
        indent = len(prefix) - len(prefix.lstrip(" \t>"))
        return _ITEM_OPEN.match(after) is not None and len(after) - len(after.lstrip(" \t>")) > indent
    # a paragraph of its own line, or one over a list
    return not prev.strip() and (blank_after or not after or _ITEM_OPEN.match(after) is not None)


def recognize_sentences(sentences: Sequence[Sentence], lang: str) -> set[int]:
    """Ids of the sentences that need a citation."""
    return {s.id for s in sentences if needs_citation(s, lang)}
