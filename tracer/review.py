"""A self-contained HTML review page for one trace: the report, clickable markers, evidence.

No network and no external assets: CSS and JS are inline and a Content-Security-Policy
forbids every fetch. All record and report text is HTML-escaped; raw HTML in the report is
shown as text (markdown is rendered with HTML disabled), and only http(s) URLs become links.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token

from tracer.models import Citation, NearMiss, Record, Reference, TraceResult
from tracer.refformat import clean_text, display_title, is_http_url

_CONTEXT = 280  # characters of the passage shown on each side of the evidence
# Sentinels around unsupported sentences. Unicode punctuation, so markdown emphasis still
# closes next to them ("**x.**" + sentinel), and private enough never to occur in reports.
_UNSUP_OPEN = "\u2e00"
_UNSUP_CLOSE = "\u2e01"
_ESC = "\ue102"       # precedes a backslash-escaped character inside collected text
_JW_OPEN = "\ue100"   # openJiuwen marker folded from a link: _JW_OPEN + number + _JW_CLOSE
_JW_CLOSE = "\ue101"
_SENTINELS = (_UNSUP_OPEN, _UNSUP_CLOSE, _ESC, _JW_OPEN, _JW_CLOSE)
_MARKER = re.compile(
    r"(?:<sup>)?(?:\[(?:\^|citation:)?\d+(?:\s*,\s*\d+)*\])+(?:</sup>)?"
    r"|(?:\[source_tracer_result\]\[(?:\ue102.|[^\[\]\ue102])*\]|\ue100\d+\ue101)+"
)
_REF_LINE = re.compile(r"^(?:\[\^?\d+\]|\s*$)")
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]")
_JIUWEN = "[source_tracer_result]"


@dataclass(slots=True)
class _Marker:
    id: int
    numbers: tuple[int, ...]
    citation: Citation | None


def _unsentinel(text: str) -> str:
    for ch in _SENTINELS:
        text = text.replace(ch, "")
    return text


def _body_of(result: TraceResult) -> str:
    """The report without the appended references section."""
    text = result.report
    if not result.references:
        return text
    lines = text.splitlines(keepends=True)
    offset = len(text)
    for i in range(len(lines) - 1, -1, -1):
        offset -= len(lines[i])
        if _HEADING.match(lines[i]):
            if all(_REF_LINE.match(line) for line in lines[i + 1:]):
                return text[:offset]
            break
    return text


def _closest_html(n: NearMiss | None) -> str:
    """The record that came closest to an unsupported sentence (not a citation)."""
    if n is None:
        return ""
    title = html.escape(clean_text(n.title, 300) or clean_text(n.url, 300) or f"record {n.record_index}")
    if is_http_url(n.url):
        title = (f'<a href="{html.escape(n.url, quote=True)}" target="_blank" '
                 f'rel="noopener noreferrer nofollow">{title}</a>')
    lacks = ", ".join(n.unstated)
    if n.quote_figures:
        lacks += f"; its quote states {', '.join(n.quote_figures)}"
    unstated = f' <span class="unstated">does not state {html.escape(lacks)}</span>' if n.unstated else ""
    if n.conflict:
        unstated = f' <span class="unstated">contradicts it: {html.escape(n.conflict)}</span>' + unstated
    return (f'<div class="closest">closest record, not cited: {title} <span class="score">score '
            f'{n.score:.2f}</span>{unstated}<blockquote>{html.escape(clean_text(n.evidence, 600))}'
            f'</blockquote></div>')


def _mark_unsupported(body: str, result: TraceResult) -> str:
    """Wrap unsupported sentences in sentinels (found in order after the previous one)."""
    for ch in _SENTINELS:
        body = body.replace(ch, "")
    out: list[str] = []
    cur = 0
    for u in sorted(result.unsupported, key=lambda u: u.start):
        if not u.sentence:
            continue
        at = body.find(u.sentence, cur)  # display only: offsets refer to the input report
        if at < 0:
            continue
        out.append(body[cur:at])
        out.append(_UNSUP_OPEN + u.sentence + _UNSUP_CLOSE)
        cur = at + len(u.sentence)
    out.append(body[cur:])
    return "".join(out)


# what stands between the markers of one run ("[1] and [2]", "[1]、[2]")
_RUN_GAP = re.compile(r"[ \t]*(?:[,，、;；][ \t]*)?(?:(?:and|or|&|和|及|与|或)[ \t]*)?", re.IGNORECASE)


class _Page:
    def __init__(self, result: TraceResult, records: Sequence[Record] | None) -> None:
        self.result = result
        self.records = {r.index: r for r in records or ()}
        self.refs = {r.number: r for r in result.references}
        self.citations = sorted(result.citations, key=lambda c: (c.start, c.end))
        self.next_citation = 0
        self.shown: dict[int, set[int]] = {}   # citation index -> its numbers already given a marker
        self.markers: list[_Marker] = []
        self.inside_unsupported = False

    # -------------------------------------------------------------- markers
    def _numbers_from_jiuwen(self, titles: list[str], hrefs: list[str]) -> tuple[int, ...]:
        nums: list[int] = []
        for title, href in zip(titles, hrefs, strict=True):
            for ref in self.result.references:
                if (href and is_http_url(ref.url) and href.rstrip("/") in (ref.url.rstrip("/"),)) or (
                    clean_text(title) == clean_text(display_title(ref), 200)
                ):
                    nums.append(ref.number)
                    break
        return tuple(nums)

    def _new_marker(self, numbers: tuple[int, ...], glued: bool = False) -> _Marker:
        wanted = set(numbers)
        citation = None
        last = self.markers[-1].citation if glued and self.markers else None
        if last is not None and wanted <= {s.number for s in last.sources}:
            # the next marker of a run ("according to [1] and [2], …", "[1] and [1]" for one page
            # listed twice): the same sentence's citation
            marker = _Marker(len(self.markers) + 1, numbers, last)
            self.markers.append(marker)
            j = self.citations.index(last)
            self.shown[j] = self.shown.get(j, set()) | wanted
            return marker
        for j in range(self.next_citation, len(self.citations)):
            # a sentence that names a source in its words ("如[1]所述 … 35.5%[2]。") has two markers
            # and one citation: each marker takes its part of it, the citation's sources in turn
            have = {s.number for s in self.citations[j].sources}
            shown = self.shown.get(j, set())
            if wanted and wanted <= have and not wanted & shown:
                citation = self.citations[j]
                self.shown[j] = shown | wanted
                self.next_citation = j + 1 if self.shown[j] == have else j
                break
        marker = _Marker(len(self.markers) + 1, numbers, citation)
        self.markers.append(marker)
        return marker

    def _marker_html(self, label: str, numbers: tuple[int, ...], glued: bool = False) -> str:
        m = self._new_marker(numbers, glued)
        return (
            f'<a class="marker" id="m-{m.id}" href="#cite-{m.id}" data-cite="{m.id}" '
            f'aria-controls="cite-{m.id}">{html.escape(label)}</a>'
        )

    def _text_html(self, text: str) -> str:
        """Escaped text with unsupported sentinels and citation markers turned into elements."""
        out: list[str] = []
        pos = 0
        pattern = re.compile(f"[{_UNSUP_OPEN}{_UNSUP_CLOSE}]|" + _MARKER.pattern)
        if self.inside_unsupported:
            out.append('<span class="unsup">')
        after_marker = -1  # end of the last marker in this text, for runs of markers
        for m in pattern.finditer(text):
            out.append(html.escape(text[pos:m.start()].replace(_ESC, "")))
            glued = after_marker >= 0 and _RUN_GAP.fullmatch(text, after_marker, m.start()) is not None
            pos = m.end()
            tok = m.group(0)
            if tok == _UNSUP_OPEN:
                if not self.inside_unsupported:
                    out.append('<span class="unsup" title="No record supports this sentence">')
                self.inside_unsupported = True
            elif tok == _UNSUP_CLOSE:
                if self.inside_unsupported:
                    out.append('</span><span class="unsup-badge" title="No record supports this sentence">'
                               "unsupported</span>")
                self.inside_unsupported = False
            elif tok.startswith((_JIUWEN, _JW_OPEN)):
                nums_list: list[int] = []
                for folded, title in re.findall(
                    "\ue100(\\d+)\ue101|\\[source_tracer_result\\]\\[((?:\ue102.|[^\\[\\]\ue102])*)\\]", tok
                ):
                    if folded:
                        nums_list.append(int(folded))
                    else:
                        nums_list += self._numbers_from_jiuwen([title.replace(_ESC, "")], [""])
                nums = tuple(nums_list)
                label = "".join(f"[{n}]" for n in nums)
                plain = html.escape(tok.replace(_ESC, ""))
                out.append(self._marker_html(label, nums, glued) if nums else plain)
                after_marker = m.end()
            else:
                nums = tuple(int(n) for n in re.findall(r"\d+", tok))
                label = re.sub(r"</?sup>", "", tok)
                link = self._marker_html(label, nums, glued)
                out.append(f"<sup>{link}</sup>" if tok.startswith("<sup>") else link)
                after_marker = m.end()
        out.append(html.escape(text[pos:].replace(_ESC, "")))
        if self.inside_unsupported:
            out.append("</span>")
        return "".join(out)

    def _rewrite_inline(self, children: list[Token]) -> list[Token]:
        """Fold marker links ("[[1]](url)", openJiuwen) into text, then render text ourselves."""
        folded: list[Token] = []
        i = 0
        while i < len(children):
            t = children[i]
            if t.type == "link_open":
                j = i + 1
                while j < len(children) and children[j].type in ("text", "text_special"):
                    j += 1
                if j < len(children) and children[j].type == "link_close" and j > i + 1:
                    inner = "".join(c.content for c in children[i + 1:j])
                    href = str(t.attrs.get("href", ""))
                    prev = folded[-1] if folded else None
                    if re.fullmatch(r"\[\d+\]", inner):
                        folded.append(Token("text", "", 0, content=inner))
                        i = j + 1
                        continue
                    if prev is not None and prev.type == "text" and prev.content.endswith(_JIUWEN):
                        nums = self._numbers_from_jiuwen([inner], [href])
                        if nums:
                            prev.content = prev.content[: -len(_JIUWEN)]
                            folded.append(Token("text", "", 0, content=f"{_JW_OPEN}{nums[0]}{_JW_CLOSE}"))
                            i = j + 1
                            continue
            folded.append(t)
            i += 1
        out: list[Token] = []
        run: list[str] = []

        def flush() -> None:
            if run:
                out.append(Token("html_inline", "", 0, content=self._text_html("".join(run))))
                run.clear()

        for t in folded:
            if t.type == "text":
                run.append(t.content)
            elif t.type == "text_special":
                run.append(_ESC + t.content)
            elif t.type == "code_inline":
                flush()
                t.content = _unsentinel(t.content)
                out.append(t)
            else:
                flush()
                out.append(t)
        flush()
        return out

    # -------------------------------------------------------------- page parts
    def report_html(self) -> str:
        md = MarkdownIt("commonmark", {"html": False, "typographer": False})
        md.enable(["table", "strikethrough"]).disable("text_join")
        body = _mark_unsupported(_body_of(self.result), self.result)
        tokens = md.parse(body)
        in_row = False  # a table row is one sentence across its cells: its highlight goes on
        for tok in tokens:
            if tok.type == "inline" and tok.children is not None:
                tok.children = self._rewrite_inline(tok.children)
                if not in_row:
                    self.inside_unsupported = False
            elif tok.type in ("tr_open", "tr_close"):
                in_row = tok.type == "tr_open"
                self.inside_unsupported = False
            elif tok.type in ("fence", "code_block"):
                tok.content = _unsentinel(tok.content)
        return str(md.renderer.render(tokens, md.options, {}))

    def _source_html(self, ref: Reference | None, number: int, src_score: float | None, match: str,
                     evidence: str, ev_start: int, ev_end: int, record_index: int,
                     unstated: tuple[str, ...] = (), quote_figures: tuple[str, ...] = ()) -> str:
        title = html.escape(display_title(ref)) if ref else f"Source {number}"
        if ref is not None and ref.is_link and is_http_url(ref.url):
            head = (f'<a href="{html.escape(ref.url, quote=True)}" target="_blank" '
                    f'rel="noopener noreferrer nofollow">{title}</a>')
            where = f'<div class="url">{html.escape(clean_text(ref.url, 500))}</div>'
        else:
            head = f"<span>{title}</span>"
            where = f'<div class="url">{html.escape(clean_text(ref.url, 500))}</div>' if ref else ""
        meta = []
        if src_score is not None:
            meta.append(f'<span class="score">score {src_score:.2f}</span>')
        if match:
            kind = html.escape(match, quote=True)
            meta.append(f'<span class="match match-{kind}">{kind}</span>')
        if unstated:  # a figure of the sentence this source does not back
            instead = f" (its quote states {', '.join(quote_figures)})" if quote_figures else ""
            lacks = html.escape(", ".join(unstated) + instead)
            meta.append(f'<span class="unstated">does not state {lacks}</span>')
        rec = self.records.get(record_index)
        if evidence and rec is not None and rec.content[ev_start:ev_end] == evidence:
            before = rec.content[max(0, ev_start - _CONTEXT):ev_start]
            after = rec.content[ev_end:ev_end + _CONTEXT]
            lead = "…" if ev_start > _CONTEXT else ""
            tail = "…" if ev_end + _CONTEXT < len(rec.content) else ""
            passage = (f'<blockquote class="passage">{lead}{html.escape(before)}<mark class="evidence">'
                       f"{html.escape(evidence)}</mark>{html.escape(after)}{tail}</blockquote>")
        elif evidence:
            passage = (f'<blockquote class="passage"><mark class="evidence">{html.escape(evidence)}</mark>'
                       "</blockquote>")
        else:
            passage = '<p class="noevidence">Kept from the original report; no evidence quote.</p>'
        offsets = f' <span class="offsets">chars {ev_start}–{ev_end}</span>' if evidence else ""
        return (f'<div class="source"><div class="src-head"><span class="num">[{number}]</span> {head}</div>'
                f'{where}<div class="meta">{" · ".join(meta)}{offsets}</div>{passage}</div>')

    def popups_html(self) -> str:
        parts = []
        for m in self.markers:
            inner = []
            if m.citation is not None:
                inner.append(f'<blockquote class="sentence">{html.escape(m.citation.sentence)}</blockquote>')
                for s in sorted(m.citation.sources, key=lambda s: s.number):
                    if s.number not in m.numbers:
                        continue
                    inner.append(self._source_html(
                        self.refs.get(s.number), s.number, s.score, s.match, s.evidence, s.evidence_start,
                        s.evidence_end, s.record_index, s.unstated, s.quote_figures,
                    ))
            else:
                for n in m.numbers:
                    ref = self.refs.get(n)
                    index = ref.record_index if ref else -1
                    inner.append(self._source_html(ref, n, None, "", "", 0, 0, index))
            parts.append(
                f'<aside class="pop" id="cite-{m.id}" role="dialog" aria-label="Sources of marker {m.id}">'
                f'<a class="close" href="#m-{m.id}" aria-label="Close">×</a>'
                f'<h3>Sources {html.escape("".join(f"[{n}]" for n in m.numbers))}</h3>'
                + "".join(inner) + "</aside>"
            )
        return "".join(parts)

    def summary_html(self) -> str:
        r = self.result
        items = [
            ("sentences", r.stats.sentences), ("cited", len(r.citations)),
            ("unsupported", len(r.unsupported)), ("sources", len(r.references)),
        ]
        lis = "".join(f'<li class="stat-{k}"><b>{v}</b> {k}</li>' for k, v in items)
        mode = f'<li class="mode">mode {html.escape(r.mode)}{" (degraded)" if r.degraded else ""}</li>'
        warn = ""
        if r.warnings:
            warn = ('<details class="warnings"><summary>' + f"{len(r.warnings)} warning(s)</summary><ul>"
                    + "".join(f"<li>{html.escape(w)}</li>" for w in r.warnings) + "</ul></details>")
        return f'<ul class="summary">{lis}{mode}</ul>{warn}'

    def references_html(self) -> str:
        if not self.result.references:
            return ""
        lis = []
        for ref in self.result.references:
            title = html.escape(display_title(ref))
            if ref.is_link and is_http_url(ref.url):
                body = (f'<a href="{html.escape(ref.url, quote=True)}" target="_blank" '
                        f'rel="noopener noreferrer nofollow">{title}</a>')
            else:
                body = f'{title} <span class="url">({html.escape(clean_text(ref.url, 500))})</span>'
            lis.append(f'<li id="ref-{ref.number}" value="{ref.number}">{body}</li>')
        return f'<section class="refs"><h2>References</h2><ol>{"".join(lis)}</ol></section>'

    def unsupported_html(self) -> str:
        if not self.result.unsupported:
            return ""
        lis = "".join(
            f'<li><span class="unsup">{html.escape(u.sentence)}</span> <small>({html.escape(u.reason)}; '
            f"chars {u.start}–{u.end})</small>{_closest_html(u.closest)}</li>"
            for u in self.result.unsupported
        )
        return f'<section class="unsupported-list"><h2>Unsupported sentences</h2><ul>{lis}</ul></section>'


_CSS = """
:root{--fg:#1d2330;--muted:#5b6475;--line:#d9dee7;--accent:#1f5fd1;--unsup:#fde2e1;--ev:#ffd600}
*{box-sizing:border-box}
body{margin:0;font:16px/1.6 system-ui,-apple-system,"Segoe UI","Noto Sans CJK SC","PingFang SC",sans-serif;
color:var(--fg);background:#fafbfc}
header{padding:1rem 2rem;background:#fff;border-bottom:1px solid var(--line)}
header h1{margin:0 0 .4rem;font-size:1.3rem}
.summary{display:flex;gap:1.5rem;list-style:none;margin:0;padding:0;flex-wrap:wrap}
.summary b{font-size:1.2rem}
.warnings{margin-top:.4rem;color:var(--muted)}
main{max-width:54rem;margin:0 auto;padding:1rem 2rem 40vh}
article.report{background:#fff;border:1px solid var(--line);border-radius:8px;padding:1rem 2rem}
pre,code{background:#f2f4f7;border-radius:4px}
pre{padding:.6rem;overflow:auto}
table{border-collapse:collapse}td,th{border:1px solid var(--line);padding:.2rem .5rem}
a.marker{color:var(--accent);text-decoration:none;font-weight:600;border-radius:3px;padding:0 1px;
cursor:pointer}
a.marker:hover,a.marker.active{background:#dbe6fb}
.unsup{background:var(--unsup);text-decoration:underline wavy #c62828;text-underline-offset:3px}
.unsup-badge{font-size:.7rem;color:#fff;background:#c62828;border-radius:3px;padding:0 .3rem;
margin-left:.25rem;
vertical-align:super}
.pop{display:none;position:fixed;right:1rem;bottom:1rem;width:min(30rem,92vw);max-height:70vh;overflow:auto;
background:#fff;border:2px solid var(--accent);border-radius:8px;padding:.8rem 1rem;
box-shadow:0 6px 24px #0003;
z-index:10}
.pop.open,body:not(.js) .pop:target{display:block}
.pop h3{margin:0 0 .4rem;font-size:1rem}
.pop .close{position:absolute;right:.6rem;top:.3rem;text-decoration:none;font-size:1.3rem;color:var(--muted)}
.sentence{margin:.2rem 0 .6rem;color:var(--muted);border-left:3px solid var(--line);padding-left:.6rem}
.source{border-top:1px solid var(--line);padding:.5rem 0}
.src-head{font-weight:600}.url,.meta,.offsets{font-size:.8rem;color:var(--muted);word-break:break-all}
.match{border:1px solid var(--line);border-radius:3px;padding:0 .3rem}
.passage{margin:.4rem 0 0;padding:.4rem .6rem;background:#f6f7f9;border-left:3px solid var(--accent);
white-space:pre-wrap;font-size:.9rem}
mark.evidence{background:var(--ev);color:#000;padding:0 1px}
.refs li,.unsupported-list li{margin:.2rem 0;word-break:break-word}
.closest{font-size:.85rem;color:var(--muted);margin:.2rem 0 .4rem}
.closest .unstated,.meta .unstated{color:var(--warn,#b45309)}
.closest blockquote{margin:.2rem 0 0;padding:.2rem .5rem;border-left:3px dashed var(--line);
white-space:pre-wrap}
"""

_JS = """
(function(){
  document.body.classList.add('js');
  function open(id){
    document.querySelectorAll('.pop.open').forEach(function(p){p.classList.remove('open');});
    document.querySelectorAll('a.marker.active').forEach(function(a){a.classList.remove('active');});
    var pop=document.getElementById('cite-'+id); if(!pop) return;
    pop.classList.add('open'); pop.setAttribute('data-open','1');
    var m=document.getElementById('m-'+id); if(m) m.classList.add('active');
  }
  document.querySelectorAll('a.marker').forEach(function(a){
    a.addEventListener('mouseenter',function(){open(a.getAttribute('data-cite'));});
    a.addEventListener('click',function(){open(a.getAttribute('data-cite'));});
  });
  document.querySelectorAll('.pop .close').forEach(function(c){
    c.addEventListener('click',function(){
      var p=c.parentNode; p.classList.remove('open'); p.removeAttribute('data-open');
    });
  });
  var h=/^#cite-(\\d+)$/.exec(location.hash); if(h) open(h[1]);
  document.body.setAttribute('data-ready','1');
})();
"""

_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


def render_review_html(result: TraceResult, records: Sequence[Record] | None = None) -> str:
    """One self-contained HTML page reviewing `result` (records add passage context)."""
    page = _Page(result, records)
    report = page.report_html()  # first: it creates the markers the popups describe
    lang = "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in result.report[:2000]) else "en"
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        "<title>Citation review</title>"
        f"<style>{_CSS}</style></head><body>"
        f"<header><h1>Citation review</h1>{page.summary_html()}</header>"
        f'<main><article class="report">{report}</article>'
        f"{page.references_html()}{page.unsupported_html()}</main>"
        f'<div class="pops">{page.popups_html()}</div>'
        f"<script>{_JS}</script></body></html>\n"
    )


__all__ = ["render_review_html"]
