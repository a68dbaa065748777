"""Reference formatting: safe markdown pieces, reference-list line formats and exports.

Line formats (`TraceOptions.reference_format`): ``markdown`` (default), ``apa``, ``ieee``,
``gbt7714``. Exports of the cited sources: CSL-JSON, BibTeX and RIS. Every field is
optional except the title/URL pair; a missing field is left out, never printed as "None".
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from urllib.parse import quote, urlsplit

from tracer.errors import InvalidInputError
from tracer.models import Reference

REFERENCE_FORMATS: tuple[str, ...] = ("markdown", "apa", "ieee", "gbt7714")
EXPORT_FORMATS: tuple[str, ...] = ("csl-json", "bibtex", "ris")

_MAX_TITLE = 300
# ASCII punctuation that CommonMark lets us backslash-escape and that could start markup.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]()<>#!|~&$^])")
_SPACES = re.compile(r"\s+")
_DATE = re.compile(r"^\s*(\d{4})(?:[-/.年](\d{1,2})(?:[-/.月](\d{1,2}))?)?")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
# Characters never left raw inside a markdown link destination.
_URL_SAFE = "/:?#[]@!$&'*+,;=%-._~"
_STRAY_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


def validate_reference_format(name: str) -> str:
    """Return the canonical format name ("" means markdown) or raise naming the field."""
    fmt = (name or "markdown").strip().lower().replace("_", "").replace("/", "").replace(" ", "")
    fmt = {"gbt": "gbt7714", "gb7714": "gbt7714", "gbt77142015": "gbt7714", "md": "markdown"}.get(fmt, fmt)
    if fmt not in REFERENCE_FORMATS:
        raise InvalidInputError(
            "options.reference_format",
            f"unknown format {name!r}; expected one of {', '.join(REFERENCE_FORMATS)}",
        )
    return fmt


def validate_export_format(name: str) -> str:
    fmt = name.strip().lower().replace("_", "-")
    fmt = {"csljson": "csl-json", "csl": "csl-json", "bib": "bibtex"}.get(fmt, fmt)
    if fmt not in EXPORT_FORMATS:
        raise InvalidInputError(
            "refs_format", f"unknown export format {name!r}; expected one of {', '.join(EXPORT_FORMATS)}"
        )
    return fmt


# ---------------------------------------------------------------- safe markdown pieces

def clean_text(text: str, limit: int = _MAX_TITLE) -> str:
    """One line of printable text: control/format characters dropped, whitespace collapsed."""
    kept = "".join(
        " " if ch.isspace() else ch
        for ch in text
        if ch.isspace() or unicodedata.category(ch)[0] != "C"
    )
    out = _SPACES.sub(" ", kept).strip()
    if len(out) > limit:
        out = out[: limit - 1].rstrip() + "…"
    return out


def escape_markdown(text: str, limit: int = _MAX_TITLE) -> str:
    """Text that renders literally in markdown: no links, emphasis, HTML or line breaks."""
    return _MD_SPECIAL.sub(r"\\\1", clean_text(text, limit))


def is_http_url(url: str) -> bool:
    """True for absolute http(s) URLs with a host: the only sources rendered as links."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc) and not any(
        ch.isspace() for ch in url.strip()
    )


def safe_url(url: str) -> str:
    """The URL percent-encoded so it cannot end a markdown link/autolink or break HTML."""
    encoded = quote(clean_text(url, 4000).replace(" ", ""), safe=_URL_SAFE.replace("'", ""))
    return _STRAY_PERCENT.sub("%25", encoded)


def host_of(url: str) -> str:
    try:
        return urlsplit(url.strip()).hostname or ""
    except ValueError:
        return ""


def display_title(ref: Reference) -> str:
    """The title to show: the record's title, else its host, else the URL/path itself."""
    title = clean_text(ref.title)
    if title:
        return title
    if ref.is_link and host_of(ref.url):
        return host_of(ref.url)
    return clean_text(ref.url) or f"Source {ref.number}"


# ---------------------------------------------------------------- dates

def _date_parts(published: str) -> tuple[int, int | None, int | None] | None:
    m = _DATE.match(published or "")
    if not m:
        return None
    year = int(m.group(1))
    month = int(m.group(2)) if m.group(2) else None
    day = int(m.group(3)) if m.group(3) else None
    if month is not None and not 1 <= month <= 12:
        month, day = None, None
    if day is not None and not 1 <= day <= 31:
        day = None
    return year, month, day


def _date_apa(published: str) -> str:
    parts = _date_parts(published)
    if parts is None:
        return clean_text(published, 40) or "n.d."
    y, m, d = parts
    if m is None:
        return str(y)
    return f"{y}, {_MONTHS[m - 1]}" + (f" {d}" if d else "")


def _date_ieee(published: str) -> str:
    parts = _date_parts(published)
    if parts is None:
        return clean_text(published, 40)
    y, m, d = parts
    if m is None:
        return str(y)
    month = _MONTHS[m - 1]
    month = month if len(month) <= 4 else month[:3] + "."
    return f"{month} {d}, {y}" if d else f"{month} {y}"


def _date_iso(published: str) -> str:
    parts = _date_parts(published)
    if parts is None:
        return clean_text(published, 40)
    y, m, d = parts
    return "-".join([f"{y:04d}"] + ([f"{m:02d}"] if m else []) + ([f"{d:02d}"] if m and d else []))


# ---------------------------------------------------------------- list lines

def _md_link_or_text(ref: Reference) -> str:
    return f"<{safe_url(ref.url)}>" if ref.is_link else escape_markdown(ref.url)


def format_reference(ref: Reference, fmt: str = "markdown") -> str:
    """One reference-list entry (without its "[n] " prefix) as safe markdown."""
    title = escape_markdown(display_title(ref))
    author = escape_markdown(ref.author, 200)
    site = escape_markdown(ref.site, 200)
    if fmt == "markdown":
        if ref.is_link:
            return f"[{title}]({safe_url(ref.url)})"
        path = escape_markdown(ref.url)
        same = clean_text(ref.url) == clean_text(display_title(ref))
        return f"{title} ({path})" if path and not same else title
    where = _md_link_or_text(ref)
    if fmt == "apa":
        date = escape_markdown(_date_apa(ref.published_at), 60)
        head = f"{author}. ({date}). *{title}*." if author else f"*{title}*. ({date})."
        return " ".join(p for p in (head, f"{site}." if site else "", where) if p)
    if fmt == "ieee":
        date = escape_markdown(_date_ieee(ref.published_at), 60)
        tail = [p for p in (f"*{site}*" if site else "", date) if p]
        quoted = f'"{title}," ' + ", ".join(tail) + "." if tail else f'"{title}."'
        text = (f"{author}, " if author else "") + quoted
        online = f"[Online]. Available: {where}" if ref.is_link else where
        return f"{text} {online}".strip()
    if fmt == "gbt7714":
        kind = "EB/OL" if ref.is_link else "Z"
        date = escape_markdown(_date_iso(ref.published_at), 60)
        head = f"{author}. {title}\\[{kind}\\]." if author else f"{title}\\[{kind}\\]."
        pub = ", ".join(p for p in (site, f"({date})" if date else "") if p)
        return " ".join(p for p in (head, f"{pub}." if pub else "", f"{where}." if where else "") if p)
    raise InvalidInputError("options.reference_format", f"unknown format {fmt!r}")


# ---------------------------------------------------------------- exports

def _csl_item(ref: Reference) -> dict[str, object]:
    item: dict[str, object] = {
        "id": f"ref{ref.number}",
        "citation-number": str(ref.number),
        "type": "webpage" if ref.is_link else "document",
        "title": display_title(ref),
    }
    if ref.is_link:
        item["URL"] = clean_text(ref.url, 4000)
    elif clean_text(ref.url):
        item["source"] = clean_text(ref.url, 4000)
    if clean_text(ref.site):
        item["container-title"] = clean_text(ref.site)
    if clean_text(ref.author):
        item["author"] = [{"literal": clean_text(ref.author)}]
    parts = _date_parts(ref.published_at)
    if parts is not None:
        item["issued"] = {"date-parts": [[p for p in parts if p is not None]]}
    elif clean_text(ref.published_at):
        item["issued"] = {"raw": clean_text(ref.published_at, 60)}
    return item


def to_csl_json(refs: Iterable[Reference]) -> str:
    """CSL-JSON (a JSON array of items), ids `ref<n>`."""
    return json.dumps([_csl_item(r) for r in refs], ensure_ascii=False, indent=2) + "\n"


_BIB_SPECIAL = re.compile(r"([\\{}%&$#_^~])")
_BIB_REPL = {"\\": r"\textbackslash{}", "^": r"\^{}", "~": r"\~{}"}


def _bib_escape(text: str) -> str:
    return _BIB_SPECIAL.sub(lambda m: _BIB_REPL.get(m.group(1), "\\" + m.group(1)), clean_text(text, 4000))


def to_bibtex(refs: Iterable[Reference]) -> str:
    """BibTeX `@misc` entries keyed `ref<n>`; text fields LaTeX-escaped, braces balanced."""
    entries = []
    for ref in refs:
        fields: list[tuple[str, str]] = [("title", _bib_escape(display_title(ref)))]
        if clean_text(ref.author):
            fields.append(("author", "{" + _bib_escape(ref.author) + "}"))
        if ref.is_link:
            url = safe_url(ref.url).replace("{", "%7B").replace("}", "%7D").replace("\\", "%5C")
            fields.append(("url", url))
            fields.append(("howpublished", "\\url{" + url + "}"))
        elif clean_text(ref.url):
            fields.append(("note", _bib_escape(ref.url)))
        if clean_text(ref.site):
            fields.append(("organization", _bib_escape(ref.site)))
        parts = _date_parts(ref.published_at)
        if parts is not None:
            fields.append(("year", str(parts[0])))
            if parts[1]:
                fields.append(("month", str(parts[1])))
        body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields)
        entries.append(f"@misc{{ref{ref.number},\n{body}\n}}\n")
    return "\n".join(entries)


def to_ris(refs: Iterable[Reference]) -> str:
    """RIS records (TY ELEC for web pages, GEN otherwise), one per source, ending `ER  -`."""
    lines: list[str] = []
    for ref in refs:
        lines.append("TY  - " + ("ELEC" if ref.is_link else "GEN"))
        lines.append(f"ID  - ref{ref.number}")
        lines.append("TI  - " + display_title(ref))
        if clean_text(ref.author):
            lines.append("AU  - " + clean_text(ref.author))
        if ref.is_link:
            lines.append("UR  - " + clean_text(ref.url, 4000))
        elif clean_text(ref.url):
            lines.append("N1  - " + clean_text(ref.url, 4000))
        if clean_text(ref.site):
            lines.append("PB  - " + clean_text(ref.site))
        parts = _date_parts(ref.published_at)
        if parts is not None:
            y, m, d = parts
            lines.append(f"PY  - {y}")
            lines.append(f"DA  - {y}/" + (f"{m:02d}" if m else "") + "/" + (f"{d:02d}" if d else "") + "/")
        lines.append("ER  - ")
        lines.append("")
    return "\n".join(lines)


def export_references(refs: Iterable[Reference], fmt: str) -> str:
    """The cited sources in `fmt` (csl-json | bibtex | ris)."""
    fmt = validate_export_format(fmt)
    if fmt == "csl-json":
        return to_csl_json(refs)
    if fmt == "bibtex":
        return to_bibtex(refs)
    return to_ris(refs)


__all__ = [
    "REFERENCE_FORMATS", "EXPORT_FORMATS", "validate_reference_format", "validate_export_format",
    "clean_text", "escape_markdown", "is_http_url", "safe_url", "display_title", "format_reference",
    "to_csl_json", "to_bibtex", "to_ris", "export_references",
]
