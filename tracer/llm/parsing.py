"""Reading model replies: find the JSON object, then validate it item by item.

A reply is only rejected as a whole when no JSON object with the expected key can be found; a
malformed item (or id) inside an otherwise good reply is dropped and counted, never fatal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field

_FENCE_INFO = re.compile(r"[A-Za-z0-9_-]*+[ \t]*+\n?")   # after a fence's "```": its language, its newline
_MAX_REPLY_CHARS = 1_000_000
_MAX_STARTS = 200  # "{" positions tried amid prose: each try may read to the end of the reply
# characters the tries may read in all: a reply of unclosed objects ('{"a":[1,{"a":[1,…') makes
# every try read to its end, 200 of them 2 s of CPU in the event loop, past the call's deadline
_MAX_SCANNED = 2_000_000


def _fenced(text: str) -> list[str]:
    """What each fenced block of a reply holds ("```json\n{…}\n```"), in order, in linear time (a
    lazy regex read a reply of backticks with no closing fence from each of them: quadratic)."""
    out: list[str] = []
    at = text.find("```")
    while at >= 0:
        info = _FENCE_INFO.match(text, at + 3)
        start = info.end() if info else at + 3
        end = text.find("```", start)
        if end < 0:
            break
        out.append(text[start:end])
        at = text.find("```", end + 3)
    return out


def without_drafts(text: str) -> str:
    """`text` without reasoning models' `<think>…</think>` drafts, in linear time; a draft that
    is never closed (a reply cut off while the model was still thinking) takes the rest of the
    text with it: what it holds is no answer."""
    low = text.lower()
    if "<think>" not in low:
        return text
    out: list[str] = []
    pos = 0
    while True:
        i = low.find("<think>", pos)
        if i < 0:
            out.append(text[pos:])
            return "".join(out)
        out.append(text[pos:i])
        j = low.find("</think>", i + 7)
        if j < 0:
            return "".join(out)
        pos = j + 8


def extract_json_object(text: str, key: str) -> dict[str, object] | None:
    """The first JSON object in `text` having `key`: inside code fences, bare, or amid prose."""
    if not isinstance(text, str) or not text.strip():
        return None
    # drafts first (a long one would push the answer past the cap), then the start is enough:
    # far over any output cap
    text = without_drafts(text)[:_MAX_REPLY_CHARS]
    candidates = [*_fenced(text), text]
    decoder = json.JSONDecoder()
    scanned = 0
    for chunk in candidates:
        stripped = chunk.strip()
        try:
            value = json.loads(stripped)
        except (ValueError, RecursionError):  # RecursionError: nested thousands deep
            value = None
        if isinstance(value, dict) and key in value:
            return value
        scanned += len(stripped)
        tries = 0
        pos = chunk.find("{")
        while pos >= 0 and tries < _MAX_STARTS and scanned < _MAX_SCANNED:
            tries += 1
            try:
                value, end = decoder.raw_decode(chunk, pos)
            except json.JSONDecodeError as exc:
                value, end = None, exc.pos
            except (ValueError, RecursionError):
                value, end = None, len(chunk)
            scanned += max(1, end - pos)
            if isinstance(value, dict) and key in value:
                return value
            pos = chunk.find("{", pos + 1)
    return None


# The reply shapes the parsers accept, as JSON Schema, for servers that constrain their output to a
# schema (OpenAI structured outputs, vLLM guided decoding, llama.cpp grammars): `llm.structured_output`.
# Strict-mode rules: every property required, no others allowed.
MATCH_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {
        "source_traced_results": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "sentence": {"type": "integer"},
                    "matched_source_indices": {"type": "array", "items": {"type": "integer"}},
                },
                "required": ["sentence", "matched_source_indices"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["source_traced_results"],
    "additionalProperties": False,
}
RECOGNIZE_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"sentences_needing_citation": {"type": "array", "items": {"type": "integer"}}},
    "required": ["sentences_needing_citation"],
    "additionalProperties": False,
}
REPLY_SCHEMAS: dict[str, dict[str, object]] = {"match": MATCH_SCHEMA, "recognize": RECOGNIZE_SCHEMA}


def _as_id(value: object) -> int | None:
    """An id as the model wrote it: a whole number, or one in quotes ("3") or with a point (3.0), as
    models often write ids whatever the schema asks; None for anything else (true, "3a", 2.5)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e9:
        return int(value)
    if isinstance(value, str) and _ID_TEXT.fullmatch(value):
        return int(value)
    return None


_ID_TEXT = re.compile(r"[ \t]*\d{1,9}[ \t]*")


@dataclass(slots=True)
class MatchReply:
    """Validated `{"source_traced_results": [...]}`: local passage ids per local sentence id."""

    matches: dict[int, list[int]] = field(default_factory=dict)
    dropped_items: int = 0
    dropped_ids: int = 0
    cut: bool = False        # salvaged from a reply cut off at the output cap: items after the cut are lost
    # sentences whose items named passages but none valid: no verdict (not "no source")
    garbled: set[int] = field(default_factory=set)


_RESULTS_ARRAY = re.compile(r'"source_traced_results"\s*:\s*\[')


def salvage_items(text: str) -> list[object]:
    """The complete items of the `source_traced_results` array of a reply cut off mid-array."""
    text = without_drafts(text)[:_MAX_REPLY_CHARS]
    m = _RESULTS_ARRAY.search(text)
    if m is None:
        return []
    decoder = json.JSONDecoder()
    items: list[object] = []
    pos = m.end()
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            return items
        try:
            value, pos = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):  # the item the cut went through
            return items
        items.append(value)


def parse_match_reply(
    text: str, sentence_ids: Collection[int], passage_ids: Collection[int], *, truncated: bool = False
) -> MatchReply | None:
    """None when the reply holds no usable object; otherwise the valid items, in model order.
    A `truncated` reply (cut off at the output cap) with no whole object yields the complete
    items before the cut, marked `cut`."""
    obj = extract_json_object(text, "source_traced_results")
    cut = False
    if obj is None:
        salvaged = salvage_items(text) if truncated else []
        if not salvaged:
            return None
        obj, cut = {"source_traced_results": salvaged}, True
    items = obj["source_traced_results"]
    if not isinstance(items, list):
        return None
    out = MatchReply(cut=cut)
    for item in items:
        if not isinstance(item, dict):
            out.dropped_items += 1
            continue
        sid = _as_id(item.get("sentence"))
        ids = item.get("matched_source_indices")
        if sid is None or sid not in sentence_ids or not isinstance(ids, list):
            out.dropped_items += 1
            continue
        kept = out.matches.setdefault(sid, [])  # an empty list: the model judged it unsupported
        valid = 0
        for raw in ids:
            pid = _as_id(raw)
            if pid is not None and pid in passage_ids:
                valid += 1
                if pid not in kept:
                    kept.append(pid)
            else:
                out.dropped_ids += 1
        if ids and not valid:
            out.garbled.add(sid)
    out.garbled -= {sid for sid, kept in out.matches.items() if kept}  # another item of it was valid
    return out


@dataclass(slots=True)
class RecognizeReply:
    ids: set[int] = field(default_factory=set)
    dropped_ids: int = 0


def parse_recognize_reply(text: str, sentence_ids: Collection[int]) -> RecognizeReply | None:
    """Validated `{"sentences_needing_citation": [...]}`; unknown or non-int ids are dropped."""
    obj = extract_json_object(text, "sentences_needing_citation")
    if obj is None:
        return None
    ids = obj["sentences_needing_citation"]
    if not isinstance(ids, list):
        return None
    out = RecognizeReply()
    for raw in ids:
        sid = _as_id(raw)
        if sid is not None and sid in sentence_ids:
            out.ids.add(sid)
        else:
            out.dropped_ids += 1
    return out
