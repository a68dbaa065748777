"""Which sentences need a citation (rules). A sentence that states a checkable fact does;
questions, headings-like fragments, advice, meta-commentary and conclusions don't.

Recognition decides what is reported as *unsupported*; any prose sentence that a record
verifiably supports is still cited (a supported sentence never loses its source)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tracer.models import Sentence
from tracer.text import content_tokens, numbers

_ATTRIBUTION = re.compile(
    r"\b(?:according to|reported|reports|said|says|stated|found|showed|shows|estimated|survey|study|"
    r"studies|research|data|statistics|published|announced|percent)\b|据|根据|报道|表示|指出|显示|研究|调查|数据|统计|宣布|发布",
    re.IGNORECASE,
)
_QUOTE = re.compile(r"[\"“”「」『』]")
_NAME = re.compile(r"(?<!^)(?<![.!?]\s)\b[A-Z][a-z]+")
_META = re.compile(
    r"^(?:in (?:summary|conclusion|short|general)|overall|to (?:sum up|summarize|conclude)|"
    r"it is (?:important|worth|essential|crucial) to (?:note|remember|consider)|"
    r"(?:i|we) (?:hope|recommend|suggest|think|believe)|let me|here (?:is|are)|"
    r"总之|总的来说|综上|总而言之|希望|建议你|你可以|我们可以|以下是)",
    re.IGNORECASE,
)


# Instructions and advice ("Click Save.", "You should consult ...") state no checkable fact.
_INSTRUCTION = re.compile(
    r"^(?:(?:first|then|next|finally|also|now),?\s+)?(?:select|click|choose|open|go|save|press|type|enter|"
    r"navigate|install|run|use|try|consider|make sure|ensure|remember|note that|avoid|prioriti[sz]e|"
    r"check|visit|contact|consult|ask|keep|follow)\b"
    r"|^(?:you|we) (?:should|may|might|can|could|will|need to|must)\b"
    r"|^(?:请|先|然后|接着|最后|建议)",
    re.IGNORECASE,
)


def needs_citation(sentence: Sentence, lang: str) -> bool:
    """Rule-based cite-worthiness of one sentence."""
    text = sentence.text.strip()
    if not text or text.endswith(("?", "？")):
        return False
    if _META.search(text) or _INSTRUCTION.search(text):
        return False
    words = content_tokens(text)
    min_words = 4 if lang == "zh" else 5
    if len(words) < min_words:
        return bool(numbers(text)) and len(words) >= 2
    if numbers(text) or _QUOTE.search(text) or _ATTRIBUTION.search(text):
        return True
    if lang != "zh" and _NAME.search(text):
        return True
    return len(words) >= (6 if lang == "zh" else 8)


def recognize_sentences(sentences: Sequence[Sentence], lang: str) -> set[int]:
    """Ids of the sentences that need a citation."""
    return {s.id for s in sentences if needs_citation(s, lang)}
