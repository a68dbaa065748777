"""The records stage: parse, validate and normalise search records; cut them into passages.

Accepted shapes (see docs/records.md):
  * a list of records (dicts or `Record` objects), e.g. parsed JSON or JSONL;
  * a grouped mapping ``{source_type: [records...]}`` (openJiuwen), flattened in order;
  * an object with ``records`` (a list) or ``classified_content`` (openJiuwen line shape).

Every input record gets `Record.index` = its position in the flattened input, dropped ones
included, so indices always map back to the request. A bad record is dropped with a warning
that starts with ``"record {index}"``; other warnings start with ``"records"``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import fields
from types import MappingProxyType
from typing import Any
from urllib.parse import unquote, urlsplit

import orjson

from tracer.errors import InvalidInputError
from tracer.models import Passage, Record

__all__ = [
    "canonical_url",
    "fallback_content",
    "flatten_records",
    "is_link",
    "normalize_records",
    "parse_records_text",
    "source_key",
    "split_passages",
]

# Key aliases, in priority order: the first alias holding a non-empty string wins. They cover
# what search tools return as they return it: Tavily (`raw_content`, the page, before `content`,
# its snippet; `published_date`), Exa (`text`, `publishedDate`), Google / SerpAPI (`link`,
# `snippet`), Bing (`name`, `snippet`, `datePublished`), Brave and You.com (`description`),
# Firecrawl (`markdown`), a LangChain Document (`page_content`), a LlamaIndex node (`text`, `id_`),
# Dify's retriever resources (`document_name`, `document_id`) and openJiuwen. (With no text at
# all, a list of passages is read: `SNIPPET_LISTS`.)
RECORD_ALIASES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "url": ("url", "link", "href", "source"),
    "title": ("title", "name", "document_name"),
    "content": ("raw_content", "content", "original_content", "text", "page_content", "markdown",
                "snippet", "body", "description"),
    "source_type": ("source_type",),
    "id": ("id", "index", "id_", "document_id"),
    "published_at": ("published_at", "publish_time", "published", "published_date", "publishedDate",
                     "datePublished", "date"),
    "author": ("author", "authors"),
    "site": ("site", "site_name"),
})
# Where a record gives no url or title of its own, its `metadata` object may (a LangChain
# Document's `metadata.source`, Firecrawl's `metadata.sourceURL`, a LlamaIndex file node's
# `metadata.file_path` and `file_name`).
METADATA_ALIASES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "url": ("source", "url", "sourceURL", "source_url", "link", "file_path"),
    "title": ("title", "file_name", "document_name"),
    "id": ("document_id",),   # only for a record with no url nor id of its own (Dify)
})
_URL_KEYS = RECORD_ALIASES["url"]
_TITLE_KEYS = RECORD_ALIASES["title"]
_CONTENT_KEYS = RECORD_ALIASES["content"]
_OPTIONAL_KEYS = {k: v for k, v in RECORD_ALIASES.items() if k not in ("url", "title", "content")}

# ---------------------------------------------------------------------------------------------
# canonical source identity


# Query parameters that only track the click; they never change which page is served.
_TRACKING_PARAMS = frozenset({
    "fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "mc_cid", "mc_eid", "yclid",
    "_ga", "_gl", "igshid", "ref_src", "spm", "_hsenc", "_hsmi", "mkt_tok", "srsltid",
    # what Chinese apps add when a page is shared: Baidu's feed, WeChat, Toutiao, Bilibili
    "wfr", "isappinstalled", "share_token", "share_source", "share_medium", "share_tag", "vd_source",
    "bd_vid",
})
# ... and parameters that track only with these values ("from=timeline", Baidu's "for=pc", the
# "referrer=grok.com" Grok adds to the links it cites)
_TRACKING_VALUES = {"from": frozenset({"timeline", "singlemessage", "groupmessage", "message", "share"}),
                    "for": frozenset({"pc"}),
                    "referrer": frozenset({"grok.com", "chatgpt.com", "perplexity.ai", "copilot.com"})}
_DEFAULT_PORTS = {"http": 80, "https": 443}
_DOI_HOSTS = frozenset({"doi.org", "dx.doi.org", "www.doi.org"})
_ARXIV_HOSTS = frozenset({"arxiv.org", "www.arxiv.org", "export.arxiv.org"})
# New-style ids (2101.00001) and old-style ids (hep-th/9901001), optional version and ".pdf".
_ARXIV_PATH = re.compile(
    r"^/(?:abs|pdf|html|format)/((?:\d{4}\.\d{4,5})|(?:[a-z][a-z.-]*/\d{7}))(?:v\d+)?(?:\.pdf)?/?$",
    re.IGNORECASE,
)
_ARXIV_ID = re.compile(r"^arxiv:\s*((?:\d{4}\.\d{4,5})|(?:[a-z][a-z.-]*/\d{7}))(?:v\d+)?$", re.IGNORECASE)
_PCT = re.compile(r"%[0-9A-Fa-f]{2}")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_BAD_LINK_CHARS = re.compile(r"[\s\x00-\x1f\x7f<>\"`]")


# sub-delimiters that one encoder escapes and another does not ("Python_(programming_language)",
# "Python_%28programming_language%29"): not equivalent under RFC 3986, but web servers serve one
# page for both
_SAME_ESCAPED = frozenset("()!*'")


def _normalise_percent(part: str) -> str:
    """Upper-case percent escapes and decode the ones that encode unreserved characters; encode
    non-ASCII characters as UTF-8 escapes, so ".../wiki/天宫" and ".../wiki/%E5%A4%A9%E5%AE%AB"
    are one page."""

    def fix(m: re.Match[str]) -> str:
        ch = chr(int(m.group(0)[1:], 16))
        return ch if ch in _UNRESERVED or ch in _SAME_ESCAPED else m.group(0).upper()

    if not part.isascii():
        part = "".join(ch if ch.isascii() else "".join(f"%{b:02X}" for b in ch.encode("utf-8", "replace"))
                       for ch in part)
    return _PCT.sub(fix, part)


def _is_tracking(param: str) -> bool:
    key, _eq, value = param.partition("=")
    k = unquote(key).lower()
    return (k.startswith("utm_") or k in _TRACKING_PARAMS
            or unquote(value).lower() in _TRACKING_VALUES.get(k, ()))


def canonical_url(url: str) -> str:
    """Canonical identity of a source: records sharing it share one reference number.

    http(s): lower-case scheme and host, no default port, no fragment (except "#/" and "#!"
    routes, which select a page), no tracking parameters (utm_*, fbclid, gclid, ...), no
    trailing slash. Other parameters keep their order; ``www.`` is kept (it can be a different
    host). DOI links become ``doi:10.x/...`` and arXiv links ``arxiv:<id>`` without version.
    Anything else is returned stripped.
    """
    s = url.strip()
    low = s.lower()
    if low.startswith("doi:"):
        return "doi:" + s[4:].strip().lower()
    m = _ARXIV_ID.match(s)
    if m:
        return "arxiv:" + m.group(1).lower()
    if not (low.startswith("http://") or low.startswith("https://")):
        return s
    try:
        parts = urlsplit(s)
        port = parts.port
    except ValueError:
        return s
    host = (parts.hostname or "").rstrip(".")
    if not host or _BAD_LINK_CHARS.search(host):
        return s
    if not host.isascii():  # an internationalised host and its punycode form are one host
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            pass
    scheme = parts.scheme.lower()
    path = _normalise_percent(parts.path)
    if host in _DOI_HOSTS and path.startswith("/10."):
        return "doi:" + unquote(path[1:]).rstrip("/").lower()
    if host in _ARXIV_HOSTS:
        am = _ARXIV_PATH.match(path)
        if am:
            return "arxiv:" + am.group(1).lower()
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        netloc += f":{port}"
    if parts.username is not None:
        user = parts.username + (f":{parts.password}" if parts.password is not None else "")
        netloc = f"{user}@{netloc}"
    path = path.rstrip(" \t\n\r\f\v/")  # slashes, and whitespace left before a dropped fragment ("/ /")
    query = "&".join(
        p for p in parts.query.split("&") if p.strip() and not _is_tracking(p)
    ).rstrip()  # whitespace left before a dropped fragment / tracking parameter
    out = f"{scheme}://{netloc}{path}"
    if query:
        out += "?" + _normalise_percent(query)
    frag = parts.fragment
    if frag.startswith("/") or frag.startswith("!"):
        out += "#" + frag
    return out


def is_link(url: str) -> bool:
    """True when `url` may be rendered as a link: http(s), a host, no whitespace or markup."""
    s = url.strip()
    if _BAD_LINK_CHARS.search(s):
        return False
    try:
        parts = urlsplit(s)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)


def _doc_key(source: str) -> str:
    """A stable key for a non-http(s) source: a local path, a file:// URL or an opaque id."""
    s = source.strip()
    if s.lower().startswith("file://"):
        rest = s[7:]
        s = unquote(rest[rest.find("/"):] if "/" in rest else rest)  # drop the (usually empty) host
    s = s.replace("\\", "/")
    if "/" in s:
        lead = "/" if s.startswith("/") else ""
        s = lead + posixpath.normpath(s).lstrip("/")
    return "doc:" + s


def source_key(url: str) -> str:
    """The identity used for numbering: canonical URL (http folded into https), DOI/arXiv id, or
    ``doc:<path or id>``."""
    canon = canonical_url(url)
    if canon.startswith("http://") and not _EXPLICIT_PORT.match(canon):
        # One page over http and https is one source (a link keeps the scheme it was given).
        return "https://" + canon[7:]
    if canon.lower().startswith(("http://", "https://", "doi:", "arxiv:")):
        return canon
    return _doc_key(url)


_EXPLICIT_PORT = re.compile(r"^https?://(?:[^/?#@]*@)?(?:\[[^\]]*\]|[^/?#:]*):\d")


_SCRIPT_SCHEME = re.compile(r"(?i)(data|javascript|vbscript|blob):")
_URL_IGNORED = re.compile(r"[\t\n\r]")


def _display_name(url: str) -> str:
    """A title for a record whose title is empty: host and path, or the document's name."""
    s = url.strip()
    # a browser drops leading controls and spaces and every tab or line break: "\x01java\tscript:"
    scheme = _SCRIPT_SCHEME.match(_URL_IGNORED.sub("", s.lstrip("".join(map(chr, range(33))))))
    if scheme:                         # "data:text/html,<script>…": no name of a page
        return f"{scheme.group(1).lower()}: URL"
    if is_link(s):
        parts = urlsplit(s)
        host = (parts.hostname or "").lower()
        path = unquote(parts.path).rstrip("/")
        return host + path
    canon = canonical_url(s)
    if canon.startswith(("doi:", "arxiv:")):
        return canon
    name = posixpath.basename(_doc_key(s)[4:].rstrip("/"))
    return name or s


# ---------------------------------------------------------------------------------------------
# normalisation


# C0/C1 controls, line/paragraph separators and bidi overrides (which can spoof a title).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]+")
_SPACES = re.compile(r"\s+")


def _clean_title(title: str) -> str:
    """Replace control characters (newlines, tabs, escapes) with spaces and collapse runs."""
    title = _CONTROL.sub(" ", title)
    return _SPACES.sub(" ", title).strip()


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _record_as_mapping(rec: Record) -> dict[str, Any]:
    return {f.name: getattr(rec, f.name) for f in fields(rec) if f.name not in ("index", "source_key")}


def _flatten(raw: object, warnings: list[str]) -> Iterator[tuple[str, object]]:
    """Yield (group source_type, item) for every input record, in request order; a LlamaIndex
    `NodeWithScore` ({"node": {…}, "score": …}) as its node."""
    for group, item in _flatten_input(raw, warnings):
        if isinstance(item, Mapping) and isinstance(node := item.get("node"), Mapping) \
                and not any(k in item for k in (*_CONTENT_KEYS, *_URL_KEYS)):
            item = node
        yield group, _serialized(item)


def _serialized(item: object) -> object:
    """A LangChain object as `dumpd` / `dumps` write it ({"lc": 1, "type": "constructor", "id":
    [..., "Document"], "kwargs": {"page_content": …, "metadata": …}}) as its kwargs; else the item
    (and so a record with a text or a url of its own, whatever else it holds)."""
    if isinstance(item, Mapping) and type(item.get("lc")) is int and item.get("lc") == 1 \
            and item.get("type") == "constructor" and isinstance(item.get("id"), list) \
            and isinstance(kwargs := item.get("kwargs"), Mapping) \
            and not any(k in item for k in (*_CONTENT_KEYS, *_URL_KEYS)):
        return kwargs
    return item


def _flatten_input(raw: object, warnings: list[str]) -> Iterator[tuple[str, object]]:
    if isinstance(raw, (str, bytes, bytearray)):
        raise InvalidInputError("records", "must be a list of records or a mapping, got a string")
    if isinstance(raw, Record):
        yield "", raw
        return
    if isinstance(raw, Mapping):
        yield from _flatten_mapping(raw, warnings)
        return
    if not isinstance(raw, Iterable):
        raise InvalidInputError(
            "records", f"must be a list of records or a mapping, got {_type_name(raw)}"
        )
    for item in raw:
        if isinstance(item, Mapping) and isinstance(item.get("classified_content"), (list, tuple)):
            yield from _flatten_mapping(item, warnings)
        else:
            yield "", item


def _flatten_mapping(raw: Mapping[Any, Any], warnings: list[str]) -> Iterator[tuple[str, object]]:
    cc = raw.get("classified_content")
    if cc and raw.get("records"):
        raise InvalidInputError("records", "an object gives records and classified_content both: give one")
    if cc is not None and not raw.get("records"):
        if not isinstance(cc, (list, tuple)):
            raise InvalidInputError("records.classified_content", f"must be a list, got {_type_name(cc)}")
        group = raw.get("source_type")
        for item in cc:
            yield (group if isinstance(group, str) else ""), item
        return
    if isinstance(raw.get("node"), Mapping) and not any(k in raw for k in (*_CONTENT_KEYS, *_URL_KEYS)) \
            or _serialized(raw) is not raw:
        yield "", raw                 # one LlamaIndex NodeWithScore or LangChain Document (`_flatten`)
        return
    recs = raw.get("records")
    if not isinstance(recs, (list, tuple)) and not _looks_like_record(raw):
        # Dify's chat answer or its "message_end" event: {"answer": …, "metadata": {"usage": …,
        # "retriever_resources": [...]}}, the resources also alone; only where nothing else in
        # the object lists records
        meta = raw.get("metadata")     # ({"retriever_resources": [...]} alone is a group of that name)
        found = meta.get("retriever_resources") if isinstance(meta, Mapping) and any(
            k in raw for k in _DIFY_KEYS) else None
        others = any(isinstance(v, (list, tuple)) and v and any(isinstance(x, Mapping) for x in v)
                     for k, v in raw.items() if k != "retriever_resources")
        if isinstance(found, (list, tuple)) and not others:
            recs = found
    if not isinstance(recs, (list, tuple)) and isinstance(raw.get("value"), (list, tuple)) and not any(
            isinstance(v, (list, tuple)) and any(isinstance(x, Mapping) and _looks_like_record(x) for x in v)
            for k, v in raw.items() if k != "value") and not _looks_like_record(raw):
        recs = raw["value"]           # Bing's {"webSearchUrl": …, "value": [...]} (news: and a "sort" list)
    if not isinstance(recs, (list, tuple)) and _looks_like_record(raw):
        yield "", raw  # a single record, even with a list of objects ("authors": [{"name": …}])
        return
    if not isinstance(recs, (list, tuple)) and isinstance(raw.get("results"), (list, tuple)) and all(
            k == "results" or k in _RESPONSE_LISTS or not isinstance(v, (list, tuple))
            for k, v in raw.items()):
        # a search API's response: Tavily, Exa, Perplexity's search, Jina give their hits as
        # "results", beside images, statuses, an answer (not records); any other list makes the
        # object a {source_type: [records]} mapping, "results" one of its groups
        recs = raw["results"]
    if isinstance(recs, (list, tuple)):
        for item in recs:
            yield "", item
        return
    groups_of_records = any(isinstance(v, (list, tuple)) and v and all(isinstance(x, Mapping) for x in v)
                            for v in raw.values())
    if not groups_of_records and any(isinstance(raw.get(k), str) for k in _CONTENT_KEYS + _URL_KEYS):
        yield "", raw  # a single record, even with a list of strings ("authors": ["A", "B"])
        return
    groups = [(k, v) for k, v in raw.items() if isinstance(v, (list, tuple)) or _wraps_records(k, v)]
    if groups:
        for key, value in raw.items():
            if isinstance(value, (list, tuple)):
                if _media_only(key, value):
                    warnings.append(f"records: group {str(key)!r} ignored: {_MEDIA_WHY}")
                    continue
                for item in value:
                    yield _group_name(key, warnings), item
            elif isinstance(value, Mapping) and (
                    isinstance(value.get("classified_content"), list) or _wraps_records(key, value)):
                # a group wrapped in an object: Bing's "webPages": {"value": [...]}, Brave's
                # "web": {"results": [...]}, Firecrawl's "data": {"web": [...], "news": [...]}
                inner = list(_flatten_mapping(value, warnings))
                if _media_only(key, [item for _st, item in inner]):
                    warnings.append(f"records: group {str(key)!r} ignored: {_MEDIA_WHY}")
                    continue
                for st, item in inner:
                    yield st or _group_name(key, warnings), item
            else:
                warnings.append(f"records: group {str(key)!r} ignored: not a list of records")
        return
    if any(k in raw for k in _CONTENT_KEYS + _URL_KEYS):
        yield "", raw  # a single record
        return
    if not raw:
        return
    raise InvalidInputError(
        "records",
        "expected a list of records, a {source_type: [records]} mapping, "
        "or an object with 'records' or 'classified_content'",
    )


# the lists beside a search API's "results" that hold no records (Tavily, Exa)
_RESPONSE_LISTS = frozenset({"images", "statuses", "follow_up_questions", "failed_results"})


# a search response's groups of images, videos and suggested searches: when none of their items
# gives any text, the group is skipped with one warning instead of one per item
_MEDIA_GROUPS = frozenset({"images", "videos", "relatedSearches", "related_searches", "image_results",
                           "video_results", "inline_images", "inline_videos", "relatedQuestions"})
_MEDIA_WHY = "images, videos or suggested searches with no text to cite"


def _media_only(key: object, items: Sequence[object]) -> bool:
    """Whether a group is one of `_MEDIA_GROUPS` and none of its items gives a text and a url."""
    return key in _MEDIA_GROUPS and bool(items) and not any(
        isinstance(x, Mapping) and _looks_like_record(x) for x in items)


def _wraps_records(key: object, value: object) -> bool:
    """Whether a search response's member is an object that holds its records: a list of objects
    under "results", "value" or "records" (Brave's "web", Bing's "webPages"), or, under "data" or
    "results", groups of them (Firecrawl's and You.com's {"web": [...], "news": [...]})."""
    if not isinstance(value, Mapping) or _looks_like_record(value):
        return False

    def objects(v: object) -> bool:
        return isinstance(v, (list, tuple)) and bool(v) and all(isinstance(x, Mapping) for x in v)

    if any(objects(value.get(k)) for k in ("results", "value", "records")):
        return True
    return key in ("data", "results") and any(objects(v) for v in value.values())


# lists of objects a page's result holds that are pages of its own, not groups of records (Exa's
# "subpages": a result with highlights only and subpages is still one record)
_PAGE_LISTS = frozenset({"subpages"})

# what marks an object as Dify's chat answer or event (its resources sit in its "metadata")
_DIFY_KEYS = ("event", "answer", "conversation_id", "message_id")


def _looks_like_record(raw: Mapping[Any, Any]) -> bool:
    """Whether a mapping gives a record's text and its url or id (then it is one record, whatever
    lists it holds, not a {source_type: [records]} mapping)."""
    _k, content = _pick(raw, _CONTENT_KEYS)
    _k, url = _pick(raw, _URL_KEYS)
    if _blank(content) and isinstance(url, str) and url.strip() and not any(
            isinstance(v, (list, tuple)) and any(isinstance(x, Mapping) for x in v)
            for k, v in raw.items() if k not in _PAGE_LISTS) \
            and (passages := fallback_content(raw)):
        content = passages[1]          # (an Exa result with highlights only; not a response with results)
    _k, rid = _pick(raw, _OPTIONAL_KEYS["id"])
    return isinstance(content, str) and bool(content.strip()) and (
        (isinstance(url, str) and bool(url.strip())) or bool(_optional_str(rid)))


def _group_name(key: object, warnings: list[str]) -> str:
    """A group's key as its records' source_type, whole characters only (see `_whole`)."""
    name = str(key)
    if not _LONE_SURROGATE.search(name):
        return name
    name = _LONE_SURROGATE.sub("\ufffd", name)
    if not any(w.startswith(f"records: group {name!r}: ") for w in warnings):
        warnings.append(f"records: group {name!r}: a lone surrogate in its name replaced by U+FFFD")
    return name


def replace_lone_surrogates(value: Any) -> Any:
    """A parsed JSON value with each lone surrogate in its strings and keys replaced by U+FFFD
    (walked without recursion: a document may nest a thousand levels deep)."""
    def clean(v: Any) -> Any:
        return _LONE_SURROGATE.sub("\ufffd", v) if isinstance(v, str) else v

    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]   # (container, key) whose value is to be cleaned
    while stack:
        holder, key = stack.pop()
        v = holder[key]
        if isinstance(v, str):
            holder[key] = clean(v)
        elif isinstance(v, (list, tuple)):
            v = holder[key] = list(v)
            stack.extend((v, i) for i in range(len(v)))
        elif isinstance(v, Mapping):
            v = holder[key] = {clean(k): item for k, item in v.items()}
            stack.extend((v, k) for k in v)
    return root[0]


def _pick(item: Mapping[Any, Any], keys: tuple[str, ...]) -> tuple[str | None, object]:
    """The first alias holding a non-blank string; else the first alias present; else (None, None)."""
    first: tuple[str | None, object] = (None, None)
    for k in keys:
        if k in item:
            v = item[k]
            if isinstance(v, str) and v.strip():
                return k, v
            if first[0] is None:
                first = (k, v)
    return first


def metadata_alias(meta: Mapping[Any, Any], field: str) -> tuple[str, str] | None:
    """The first of `field`'s `METADATA_ALIASES` holding a non-blank string in `meta`, as
    (its key, its value)."""
    return next(((k, v) for k in METADATA_ALIASES[field]
                 if isinstance(v := meta.get(k), str) and v.strip()), None)


def record_metadata(item: Mapping[Any, Any]) -> object:
    """A record's metadata: its `metadata` (LangChain, LlamaIndex, Firecrawl), else its `meta`
    (Haystack)."""
    meta = item.get("metadata")
    return item.get("meta") if meta is None else meta


def _metadata_pick(meta: Mapping[Any, Any], field: str) -> tuple[str | None, object]:
    """`metadata_alias` as `_pick` gives it, the key named "metadata.<key>"."""
    found = metadata_alias(meta, field)
    return (None, None) if found is None else (f"metadata.{found[0]}", found[1])


# Lists of passages a search API gives instead of (or beside) a page's text: Exa's "highlights",
# You.com's "snippets", Brave's "extra_snippets". Read as the content only when no content alias
# holds text, joined with blank lines (evidence offsets index the joined text).
SNIPPET_LISTS = ("highlights", "snippets", "extra_snippets")
SNIPPET_JOINER = "\n\n"


def fallback_content(item: Mapping[Any, Any]) -> tuple[str, str] | None:
    """Where a record with no content alias holding text gives it: a LlamaIndex node's
    `text_resource.text` (llama-index-core 0.12's `Document.model_dump()`), else (key, its
    passages joined) of the first snippet list holding a non-blank string; None otherwise."""
    resource = item.get("text_resource")
    if isinstance(resource, Mapping) and isinstance(text := resource.get("text"), str) and text.strip():
        return "text_resource.text", text
    for key in SNIPPET_LISTS:
        value = item.get(key)
        if isinstance(value, (list, tuple)):
            parts = [v.strip() for v in value if isinstance(v, str) and v.strip()]
            if parts:
                return key, SNIPPET_JOINER.join(parts)
    return None


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _optional_str(value: object) -> str | None:
    """Optional fields accept strings, numbers (ids) and lists of strings (authors)."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return ", ".join(v.strip() for v in value if v.strip())
    return None


# half of a UTF-16 pair on its own: what `JSON.stringify` writes for a string cut inside an emoji
# ("\ud83d"); no UTF-8 encoder takes it
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> str | None:
    """Why `text` is no Unicode text when it holds a lone surrogate (the first one's code and
    offset), else None."""
    half = _LONE_SURROGATE.search(text)
    if half is None:
        return None
    return (f"holds a lone surrogate (U+{ord(half.group()):04X}, half of a UTF-16 pair) at offset "
            f"{half.start()}: not valid Unicode text")


def _whole(value: str, index: int, key: str, warnings: list[str]) -> str:
    """`value` with each lone surrogate replaced by U+FFFD (one character for one, so offsets into
    it stay), and a warning when there was one."""
    if not _LONE_SURROGATE.search(value):
        return value
    fixed, n = _LONE_SURROGATE.subn("\ufffd", value)
    warnings.append(f"records[{index}]: {key}: {n} lone surrogate{'s' if n > 1 else ''} (half of a UTF-16 "
                    f"pair, e.g. a cut emoji) replaced by U+FFFD")
    return fixed


# inline HTML a search API marks its snippet with ("The <strong>Eiffel Tower</strong> is…", Brave)
_INLINE_TAG = re.compile(r"</?(?:strong|b|em|i|u|mark|span|a|sup|sub|small|font|br)"
                         r"(?:\s+[\w:-]{1,40}=(?:\"[^\"<>\n]{0,300}\"|'[^'<>\n]{0,300}'|[^\s<>'\"]{1,300})){0,8}"
                         r"\s*/?>", re.IGNORECASE)   # attributes with values only: not "a<b and c>d"


def has_inline_tag(text: str) -> bool:
    """Whether `text` holds an inline HTML tag that the records stage reads as spaces."""
    return _INLINE_TAG.search(text) is not None


def _inline_tags_blanked(content: str, index: int, key: str, warnings: list[str]) -> str:
    """`content` with inline HTML tags replaced by as many spaces (so offsets into it stay), and a
    warning when there was one: tags between the words would keep a sentence from matching."""
    if "<" not in content:
        return content
    first: list[str] = []

    def blank(m: re.Match[str]) -> str:
        first[:] = first or [m.group(0)]
        return " " * len(m.group(0))

    blanked, n = _INLINE_TAG.subn(blank, content)
    if n:
        warnings.append(f"records[{index}]: {key}: {n} inline HTML tag{'s' if n > 1 else ''} "
                        f"({first[0][:40]}) read as spaces")
    return blanked


def metadata_value(value: object) -> str | None:
    """A metadata value as the string kept: strings as they are, numbers in decimal, booleans
    "true" / "false"; None for anything else (ignored with a warning)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return None


def _metadata(value: object, index: int, warnings: list[str]) -> Mapping[str, str]:
    if value is None:
        return MappingProxyType({})
    if not isinstance(value, Mapping):
        warnings.append(f"records[{index}]: metadata ignored: expected an object, got {_type_name(value)}")
        return MappingProxyType({})
    out: dict[str, str] = {}
    skipped: list[str] = []
    for raw_key, v in value.items():
        k = _whole(str(raw_key), index, "metadata key", warnings)
        if isinstance(v, str):
            out[k] = _whole(v, index, f"metadata.{k}", warnings)
        elif (sv := metadata_value(v)) is not None:
            out[k] = sv
        else:
            skipped.append(k)
    if skipped:
        warnings.append(
            f"records[{index}]: metadata keys ignored (values must be strings): {', '.join(skipped[:10])}"
        )
    return MappingProxyType(out)


# The longest url, title and id (and author, site, date...) a record may give, in characters.
MAX_URL_CHARS = 8_192
MAX_TITLE_CHARS = 4_096
MAX_FIELD_CHARS = 1_024


def _validate(index: int, group: str, item: object, warnings: list[str]) -> Record | None:
    typed = False                      # a Record: its url and title are its own
    if isinstance(item, Record):
        item, typed = _record_as_mapping(item), True
    if not isinstance(item, Mapping):
        warnings.append(f"record {index} dropped: expected an object, got {_type_name(item)}")
        return None

    url_key, url = _pick(item, _URL_KEYS)
    title_key, title = _pick(item, _TITLE_KEYS)
    content_key, content = _pick(item, _CONTENT_KEYS)
    if _blank(content) and not typed and (passages := fallback_content(item)) is not None:
        content_key, content = passages   # a LlamaIndex text_resource; Exa's "highlights", with no text
    id_key, rid = _pick(item, _OPTIONAL_KEYS["id"])
    # A local search result may carry only an id: it is then identified (and numbered) by it.
    has_id = id_key is not None and bool(_clean_title(_optional_str(rid) or ""))
    meta = record_metadata(item)
    if isinstance(meta, Mapping) and not typed:   # a url or title the record itself lacks
        if _blank(url) and (found := _metadata_pick(meta, "url"))[0] is not None:
            url_key, url = found
        if _blank(title) and (found := _metadata_pick(meta, "title"))[0] is not None:
            title_key, title = found
        if not has_id and _blank(url) and (found := _metadata_pick(meta, "id"))[0] is not None:
            id_key, rid = found          # Dify's knowledge retrieval: "metadata": {"document_id": …}
            has_id = bool(_clean_title(rid if isinstance(rid, str) else ""))
    missing = [name for name, key in (("url (or id)", url_key), ("content", content_key))
               if key is None and not (name == "url (or id)" and has_id)]
    if missing:
        bad_id = id_key is not None and rid is not None and _optional_str(rid) is None
        why = f" ({id_key} must be a string or number, got {_type_name(rid)})" if bad_id else ""
        warnings.append(f"record {index} dropped: missing {', '.join(missing)}{why}")
        return None
    # A missing or null title is only cosmetic: it falls back to a name derived from the URL or id.
    picked = (("url", url_key, url), ("title", title_key, title), ("content", content_key, content))
    for name, key, value in picked:
        if key is not None and not isinstance(value, str) and not (name != "content" and value is None):
            warnings.append(f"record {index} dropped: {key} must be a string, got {_type_name(value)}")
            return None
    if not isinstance(url, (str, type(None))) or not isinstance(content, str) \
            or not isinstance(title, (str, type(None))):
        return None  # unreachable: checked above; narrows the types
    url = _whole((url or "").strip(), index, url_key or "url", warnings)
    title = _whole(title, index, title_key or "title", warnings) if title else title
    content = _whole(content, index, content_key or "content", warnings)
    content = _inline_tags_blanked(content, index, content_key or "content", warnings)
    if not url and not has_id:
        warnings.append(f"record {index} dropped: empty url")
        return None
    for name, key, value, limit in (("url", url_key, url, MAX_URL_CHARS),
                                    ("title", title_key, title, MAX_TITLE_CHARS),
                                    ("id", id_key, rid, MAX_FIELD_CHARS)):
        if isinstance(value, str) and len(value) > limit:
            # a page's address or name, not its text: anything longer is not one (and would be
            # echoed in every reference and citation of the response)
            warnings.append(f"record {index} dropped: {key or name} is {len(value)} characters, over the "
                            f"limit of {limit}")
            return None
    if not content.strip():
        warnings.append(f"record {index} dropped: empty content")
        return None
    opt: dict[str, str] = {}
    for fname, keys in _OPTIONAL_KEYS.items():
        k, v = _pick(item, keys)
        if fname == "id" and id_key is not None and id_key.startswith("metadata."):
            k, v = id_key, rid           # from the metadata (the record's own id is missing or blank)
        if k is None or v is None:
            continue
        sv = _optional_str(v)
        if sv is None:
            warnings.append(f"records[{index}]: {k} ignored: expected a string, got {_type_name(v)}")
        elif len(sv) > MAX_FIELD_CHARS:
            warnings.append(f"records[{index}]: {k} ignored: {len(sv)} characters, over the limit of "
                            f"{MAX_FIELD_CHARS}")
        else:
            opt[fname] = _clean_title(_whole(sv, index, k, warnings))
    if not opt.get("source_type"):
        opt["source_type"] = group
    clean_title = (_clean_title(title or "") or _clean_title(_display_name(url) if url else opt["id"])
                   or _clean_title(url or opt.get("id", "")) or "untitled")   # a url of control characters
    return Record(
        index=index,
        url=url,
        title=clean_title,
        content=content,
        source_type=opt.get("source_type", ""),
        id=opt.get("id", ""),
        published_at=opt.get("published_at", ""),
        author=opt.get("author", ""),
        site=opt.get("site", ""),
        metadata=_metadata(meta, index, warnings),
        source_key=source_key(url) if url else "id:" + opt["id"],
    )


def flatten_records(raw: object) -> tuple[list[tuple[str, object]], list[str]]:
    """`raw` flattened as `normalize_records` flattens it: (group source_type, item) pairs in
    request order (their positions are the records' indices), and the warnings for what was
    skipped (a non-list group such as ``"query": "…"``). Raises InvalidInputError like it."""
    warnings: list[str] = []
    return list(_flatten(raw, warnings)), warnings


def normalize_records(raw: object) -> tuple[list[Record], list[str]]:
    """Validate and flatten `raw` into records, returning (records, warnings).

    `Record.index` is the position in the flattened input (dropped records count too).
    Dropped records yield a warning starting with ``"record {index} dropped"``; exact
    duplicates (same source key, title and content) are dropped the same way.
    Raises InvalidInputError only when `raw` as a whole has the wrong shape.
    """
    warnings: list[str] = []
    out: list[Record] = []
    seen: dict[tuple[str, str, str], int] = {}
    for index, (group, item) in enumerate(_flatten(raw, warnings)):
        rec = _validate(index, group, item, warnings)
        if rec is None:
            continue
        key = (rec.source_key, rec.title, rec.content)
        first = seen.get(key)
        if first is not None:
            warnings.append(f"record {index} dropped: exact duplicate of record {first}")
            continue
        seen[key] = index
        out.append(rec)
    return out, warnings


# ---------------------------------------------------------------------------------------------
# text input


def loads_json(data: str | bytes) -> Any:
    """`orjson.loads`, but a document that escapes a lone surrogate ("\\ud83d", which
    `JSON.stringify` writes for a string cut inside an emoji) is read too, by the standard library:
    its strings then hold the lone surrogate, which the records stage replaces with a warning.
    Raises orjson.JSONDecodeError like `orjson.loads`."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if "surrogate" not in str(exc):
            raise
        import json

        def no_constant(name: str) -> Any:
            raise ValueError(f"{name} is not JSON")   # orjson refuses NaN and Infinity too

        try:
            return json.loads(data, parse_constant=no_constant)
        except json.JSONDecodeError as err:   # the document's own error, not the surrogate
            raise orjson.JSONDecodeError(err.msg, err.doc, err.pos) from None
        except (ValueError, RecursionError):  # NaN; nesting too deep for the standard library
            raise exc from None


def _json_error(exc: orjson.JSONDecodeError) -> str:
    return f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"


def parse_records_text(text: str, source: str = "records") -> list[Any] | dict[str, Any]:
    """Parse a records file: JSON (list, grouped mapping, or object) or JSONL (one record a line).

    Raises InvalidInputError(source, "...line N...") on invalid input.
    """
    body = text.lstrip("\ufeff")
    if not body.strip():
        return []
    try:
        doc = loads_json(body)
    except orjson.JSONDecodeError as whole_err:
        return _parse_jsonl(body, source, whole_err)
    if not isinstance(doc, (list, dict)):
        raise InvalidInputError(
            source, f"expected a JSON array or object of records, got {_type_name(doc)}"
        )
    return doc


_LINE_BREAK = re.compile(r"\r\n?|\n")


def _parse_jsonl(body: str, source: str, whole_err: orjson.JSONDecodeError) -> list[Any]:
    items: list[Any] = []
    first = True
    # only "\n", "\r\n" or "\r" end a line (no JSON string holds them raw): U+2028, U+2029 and
    # U+0085 may stand raw inside one (`JSON.stringify`, `json.dumps(ensure_ascii=False)`)
    for lineno, line in enumerate(_LINE_BREAK.split(body), start=1):
        if not line.strip():
            continue
        try:
            value = loads_json(line)
        except orjson.JSONDecodeError as exc:
            if first:
                # Not JSONL either: the first line is not a value, so report the document error.
                raise InvalidInputError(source, _json_error(whole_err)) from None
            raise InvalidInputError(
                source, f"line {lineno}: invalid JSON at column {exc.colno}: {exc.msg}"
            ) from None
        if first and not isinstance(value, dict):
            raise InvalidInputError(source, _json_error(whole_err))
        first = False
        # a line that is no object is a bad record, dropped with a warning by the records stage
        # ("record 1 dropped: expected an object, got number"), as in a JSON list
        items.append(value)
    return items


# ---------------------------------------------------------------------------------------------
# passages

# Unit boundaries, strongest first. A boundary falls after: a CJK terminator (no space needed)
# or a Latin one followed by whitespace, with any closing quotes/brackets; or a blank line. The
# whitespace after a boundary stays with the unit before it, so units start at a sentence start.
# The leading lookahead lets the regex engine skip ahead to candidate characters (2x faster).
_SENTENCE_END = re.compile(
    r"(?=[。！？….!?\n])"
    r"(?:(?:[。！？…]++[”’」』）】》\"')\]]*+|(?<![.!?])[.!?]++[”’\"')\]]*+(?=\s))\s*+|\n[^\S\n]*+\n\s*+)"
)
# Only inside a unit longer than a passage: single line breaks (hard-wrapped text, menus,
# tables), then clause punctuation and whitespace.
_LINE_END = re.compile(r"\n\s*")
_CLAUSE_END = re.compile(r"[，、；：,;:]\s*|\s+")
_LEVELS = (_SENTENCE_END, _LINE_END, _CLAUSE_END)


def _split_units(content: str, start: int, end: int, limit: int, level: int, out: list[int]) -> None:
    """Append the unit starts of content[start:end]; units longer than `limit` split further."""
    if end - start <= limit:
        out.append(start)
        return
    if level == len(_LEVELS):
        out.extend(range(start, end, limit))  # no break at all: hard cut as the last resort
        return
    last = start
    for m in _LEVELS[level].finditer(content, start, end):
        b = m.end()
        if b >= end:
            break
        if b > last:
            _split_units(content, last, b, limit, level + 1, out)
            last = b
    _split_units(content, last, end, limit, level + 1, out)


def _units(content: str, limit: int) -> list[int]:
    """Start offsets of the cuttable units of `content`, each at most `limit` long."""
    out: list[int] = []
    _split_units(content, 0, len(content), limit, 0, out)
    return out


def _cut(content: str, limit: int, overlap: int) -> list[tuple[int, int]]:
    n = len(content)
    if n <= limit:
        return [(0, n)]
    starts = _units(content, limit)
    bounds = starts + [n]
    k = len(starts)
    slack = limit + limit // 4  # take a short tail into the last passage rather than orphan it
    spans: list[tuple[int, int]] = []
    a = 0
    while a < k:
        b = a + 1
        while b < k and bounds[b + 1] - bounds[a] <= limit:
            b += 1
        if b < k and n - bounds[a] <= slack:
            b = k
        spans.append((bounds[a], bounds[b]))
        if b >= k:
            break
        # Next passage starts at a unit boundary so that it repeats about `overlap` characters.
        nxt = b
        while nxt - 1 > a and bounds[b] - bounds[nxt - 1] <= overlap:
            nxt -= 1
        if nxt == b and b - 1 > a and bounds[b] - bounds[b - 1] <= limit // 2 and overlap > 0:
            nxt = b - 1  # at least one sentence of overlap when it is not too long
        while nxt < b and bounds[b + 1] - bounds[nxt] > limit:
            nxt += 1  # the next passage must reach past this one's end
        a = nxt
    return spans


def split_passages(recs: list[Record], passage_chars: int, overlap: int) -> list[Passage]:
    """Cut every record's content into passages at sentence/paragraph boundaries.

    Passages target `passage_chars` characters; consecutive passages share about `overlap`
    characters, starting at a sentence boundary. A short record is a single passage.
    `Passage.record` is the position in `recs`; `Passage.text == content[start:end]`.
    """
    limit = max(passage_chars, 1)
    ov = max(0, min(overlap, limit // 2))
    out: list[Passage] = []
    for ri, rec in enumerate(recs):
        content = rec.content
        if passage_chars <= 0:
            spans = [(0, len(content))]
        else:
            spans = _cut(content, limit, ov)
        for s, e in spans:
            out.append(Passage(id=len(out), record=ri, start=s, end=e, text=content[s:e]))
    return out
