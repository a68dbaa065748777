"""`source-tracer bulk IN.jsonl OUT.jsonl`: re-cite many reports, resumably (docs/bulk.md).

One output line per input line, written whole (one write of line + newline), in completion
order. Three engines run the same per-item code (`trace_item`): local worker processes,
running services over TraceStream (`--server`), or Ray Data (`--engine ray`, server/bulk_ray.py).

Every engine turns an input line into the same protobuf TraceRequest first, and local/Ray
workers run exactly what the service runs (limits check, `request_to_core`, `trace`,
`result_to_pb`), so the three produce the same reports and citations for the same input.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import errno
import fcntl
import glob
import importlib.util
import math
import multiprocessing
import os
import queue
import re
import signal
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Container, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import IO, Any

import orjson
from google.protobuf import json_format

from server.convert import MAX_MESSAGE_KEY, STREAM_CONCURRENCY_KEY
from server.pb.source_tracer.v1 import tracer_pb2 as pb
from tracer import __version__, openjiuwen
from tracer import records as records_stage
from tracer.errors import InvalidInputError

# ---------------------------------------------------------------------------------------------
# errors and codes

DUPLICATE_CODE = "ALREADY_EXISTS"   # error code of a line whose id an earlier input line used


class BulkError(Exception):
    """The run cannot start (bad arguments, unusable OUT: exit 2) or go on (a worker died,
    every server failed: exit 1, `resumable`). Lines already written stay valid."""

    def __init__(self, message: str, resumable: bool = False) -> None:
        super().__init__(message + ("; rerun with --resume to finish" if resumable else ""))
        self.resumable = resumable
        self.reason = message   # without the --resume advice (which a pipe OUT cannot take)


def _status_name(code: int) -> str:
    import grpc

    for sc in grpc.StatusCode:
        if sc.value[0] == code:
            return str(sc.name)
    return str(code)


def error_line(item_id: str, code: str, message: str, line: int) -> bytes:
    """`{"id", "error": {"code", "message", "line"}, "engine_version"}`; `code` is a gRPC status
    code name."""
    return orjson.dumps({"id": item_id, "error": {"code": code, "message": message, "line": line},
                         "engine_version": __version__})


@dataclass(frozen=True, slots=True)
class Retry:
    """Which of OUT's lines `--resume --retry` traces again: error lines with one of `codes`
    (every error code when `errors`), and answers the model could not finish (`degraded`).
    Duplicate-id error lines never: the same input gives the same duplicate."""

    codes: frozenset[str] = frozenset()
    errors: bool = False
    degraded: bool = False

    def __bool__(self) -> bool:
        return bool(self.codes) or self.errors or self.degraded

    def reason(self, obj: Mapping[str, Any]) -> str | None:
        """The label a line is traced again under, or None to keep it."""
        err = obj.get("error")
        if isinstance(err, dict):
            code = str(err.get("code", ""))
            if code != DUPLICATE_CODE and (self.errors or code in self.codes):
                return code or "error"
            return None
        if self.degraded and obj.get("degraded") is True:
            return "degraded"
        return None


RETRY_WORDS = ("errors", "degraded")


def parse_retry(spec: str) -> Retry:
    """`--retry DEADLINE_EXCEEDED,INTERNAL`, `errors`, `degraded` (any mix, any case)."""
    import grpc

    names = {sc.name for sc in grpc.StatusCode} - {"OK", DUPLICATE_CODE}
    codes: set[str] = set()
    errors = degraded = False
    for word in (w.strip() for w in spec.split(",")):
        if not word:
            continue
        if word.lower() == "errors":
            errors = True
        elif word.lower() == "degraded":
            degraded = True
        elif word.upper() in names:
            codes.add(word.upper())
        elif word.upper() == DUPLICATE_CODE:
            raise BulkError(f"--retry: {DUPLICATE_CODE} lines are duplicate ids; tracing them again "
                            "gives the same line (fix IN instead)")
        else:
            raise BulkError(f"--retry: unknown {word!r}; give gRPC status names "
                            "(e.g. DEADLINE_EXCEEDED,INTERNAL,UNAVAILABLE), errors (every error line) "
                            "or degraded (answers whose model stage fell back), comma-separated")
    retry = Retry(frozenset(codes), errors, degraded)
    if not retry:
        raise BulkError("--retry: empty; give status names, errors or degraded")
    return retry


# ---------------------------------------------------------------------------------------------
# input line -> TraceRequest

# Friendly option values (as in tracer.options) and the protobuf enum names are both accepted.
_MODES = {"auto": pb.MODE_AUTO, "deterministic": pb.MODE_DETERMINISTIC, "llm": pb.MODE_LLM}
_EXISTING = {"keep": pb.EXISTING_KEEP, "replace": pb.EXISTING_REPLACE}
_PLACEMENTS = {
    "before": pb.PLACEMENT_BEFORE_PUNCT, "before_punct": pb.PLACEMENT_BEFORE_PUNCT,
    "after": pb.PLACEMENT_AFTER_PUNCT, "after_punct": pb.PLACEMENT_AFTER_PUNCT,
}
_ENUM_OPTIONS: dict[str, tuple[Mapping[str, Any], str]] = {
    "mode": (_MODES, "MODE_"), "existing": (_EXISTING, "EXISTING_"), "placement": (_PLACEMENTS, "PLACEMENT_"),
}
_STR_OPTIONS = ("style", "references_heading", "language", "reference_format")
OPTION_KEYS = ("mode", "style", "max_sources", "min_score", "existing", "placement", "language",
               "references_heading", "reference_format", "llm_min_score", "llm_keep_score", "strict_figures")
_SCORE_OPTIONS = ("min_score", "llm_min_score", "llm_keep_score")

# The wire Record fields that take strings only (records_stage.RECORD_ALIASES maps keys onto them).
_TEXT_FIELDS = frozenset({"url", "title", "content"})


def _scalar_str(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(value)
    return None


def _wire_record(item: object, group: str = "") -> pb.Record:
    """One input record as a wire Record (`group`: the source_type it was listed under).
    Non-objects and wrongly typed fields become empty, so the records stage drops the record
    with a warning naming its index (the same on every engine)."""
    rec = pb.Record(source_type=group)
    if not isinstance(item, Mapping):
        return rec
    for name, aliases in records_stage.RECORD_ALIASES.items():
        first: str | None = None
        for key in aliases:
            raw = item.get(key)
            # url/title/content must be strings; optional fields also take numbers (ids) and lists
            value = raw if isinstance(raw, str) else (None if name in _TEXT_FIELDS else _scalar_str(raw))
            if value is not None and value.strip():
                first = value
                break
            if value is not None and first is None:
                first = value
        if first:
            setattr(rec, name, first)
    if not rec.content.strip() and all(isinstance(item.get(k), (str, type(None)))
                                       for k in records_stage.RECORD_ALIASES["content"]) \
            and (found := records_stage.fallback_content(item)) is not None:
        rec.content = found[1]          # LlamaIndex's text_resource, Exa's highlights: as `trace` reads them
    meta = records_stage.record_metadata(item)
    if isinstance(meta, Mapping):   # (the records stage takes a missing url or title from it)
        for k, v in meta.items():
            sv = records_stage.metadata_value(v)
            if sv is not None:
                rec.metadata[str(k)] = sv
    return rec


def _flat_records(obj: Mapping[str, Any]) -> tuple[list[tuple[str, object]], list[str]]:
    """(source_type group, record) for the line's records in order: a list, a
    {source_type: [records]} mapping, or openJiuwen's classified_content; and the warnings for
    what the flattening skipped (the records stage's own rules, as for `trace`)."""
    if obj.get("classified_content") and obj.get("records"):
        raise InvalidInputError("records", "a line gives records and classified_content both: give one")
    if openjiuwen.is_openjiuwen_input(obj):
        items = obj["classified_content"]
        if not isinstance(items, list):
            raise InvalidInputError("classified_content", "must be a list")
        return [("", r) for r in openjiuwen.records_from_classified_content(items)], []
    raw = obj.get("records")
    if raw is None:
        return [], []
    if not isinstance(raw, (list, Mapping)):
        raise InvalidInputError("records", "must be a list of records or a {source_type: [records]} object")
    return records_stage.flatten_records(raw)


def _record_notes(
    raw: object, flat: list[tuple[str, object]], skipped: list[str], halves: bool = False
) -> tuple[tuple[str, ...], set[int]]:
    """The records stage's warnings for this line when the wire form would lose their reason
    (a record that is not an object, a url, title or content that is not a string, a skipped
    group): the wire Record has only strings, so such a record arrives empty and would be
    reported as "empty url". Also the positions the records stage drops, which must arrive
    empty so that they are dropped on the wire too. ((), set()) when nothing is lost (the common
    case, checked cheaply)."""
    lossy = bool(skipped) or halves   # halves: the stage's warnings name the surrogates it replaced
    aliases_of = records_stage.RECORD_ALIASES
    for _group, item in flat:
        if lossy:
            break
        if not isinstance(item, Mapping):
            lossy = True
            break
        for aliases in (aliases_of["url"], aliases_of["title"], aliases_of["content"]):
            if any(not isinstance(item.get(k), (str, type(None))) for k in aliases):
                lossy = True
                break
        # inline HTML: the stage's warning names the key the text came from, the wire's "content"
        if any(isinstance(v := item.get(k), str) and "<" in v and records_stage.has_inline_tag(v)
               for k in aliases_of["content"]):
            lossy = True
        # no url or no content key at all: the stage says "missing", the wire could say "empty"
        meta = records_stage.record_metadata(item)
        has_url = any(k in item for k in (*aliases_of["url"], *aliases_of["id"])) or (
            isinstance(meta, Mapping) and any(records_stage.metadata_alias(meta, f) is not None
                                              for f in ("url", "id")))
        if not has_url or not any(k in item for k in aliases_of["content"]):
            lossy = True
        if meta is not None and (not isinstance(meta, Mapping)
                                 or any(records_stage.metadata_value(v) is None for v in meta.values())):
            lossy = True
    if not lossy:
        return (), set()
    # the stage's own run over the same flattening: its warnings, in its order
    kept, warnings = records_stage.normalize_records(raw if raw is not None else [r for _g, r in flat])
    return tuple(warnings), set(range(len(flat))) - {r.index for r in kept}


def _enum_option(key: str, value: object) -> Any:
    table, prefix = _ENUM_OPTIONS[key]
    if isinstance(value, str):
        v = value.strip().lower()
        if v.startswith(prefix.lower()):
            v = v[len(prefix):]
        if v in table:
            return table[v]
    names = sorted({k for k in table if "_" not in k})
    raise InvalidInputError(f"options.{key}", f"must be one of {', '.join(names)}, got {value!r}")


def options_to_pb(options: object) -> pb.TraceOptions:
    """The line's `options` object as wire options; InvalidInputError names the bad key."""
    msg = pb.TraceOptions()
    if options is None:
        return msg
    if not isinstance(options, Mapping):
        raise InvalidInputError("options", "must be an object")
    for key, value in options.items():
        if key in _ENUM_OPTIONS:
            setattr(msg, key, _enum_option(key, value))
        elif key in _STR_OPTIONS:
            if not isinstance(value, str):
                raise InvalidInputError(f"options.{key}", f"must be a string, got {type(value).__name__}")
            setattr(msg, key, value)
        elif key == "max_sources":
            if not isinstance(value, int) or isinstance(value, bool):
                raise InvalidInputError("options.max_sources", f"must be an integer, got {value!r}")
            if not 1 <= value <= 20:
                raise InvalidInputError("options.max_sources", f"must be 1..20, got {value}")
            msg.max_sources = value
        elif key == "strict_figures":
            if not isinstance(value, bool):
                raise InvalidInputError("options.strict_figures", f"must be true or false, got {value!r}")
            msg.strict_figures = value
        elif key in _SCORE_OPTIONS:
            if value is None:
                continue
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise InvalidInputError(f"options.{key}", f"must be a number, got {value!r}")
            setattr(msg, key, float(value))
        else:
            raise InvalidInputError(f"options.{key}", f"unknown option (known: {', '.join(OPTION_KEYS)})")
    return msg


@dataclass(frozen=True, slots=True)
class Item:
    """One input line ready to trace: its 1-based line number and the serialized request."""

    line: int
    id: str
    request: bytes  # pb.TraceRequest, serialized (cheap to ship to processes and Ray)
    notes: tuple[str, ...] = ()  # the records warnings the wire form loses (see _record_notes)


@dataclass(frozen=True, slots=True)
class BadLine:
    line: int
    id: str
    code: str
    message: str


def parse_line(
    line: int, raw: bytes, default_style: str = "", taken: Container[str] = frozenset(),
) -> Item | BadLine:
    """Input line -> Item, or BadLine naming the problem (id = the given id, else "line-N";
    "line-N-2", "line-N-3", ... when an earlier line gave "line-N" as its own id: `taken`)."""
    fallback, k = f"line-{line}", 2
    while fallback in taken:   # an id-less line is never refused as a duplicate of a given id
        fallback, k = f"line-{line}-{k}", k + 1
    halves = False    # a string escapes a lone surrogate ("\ud83d", an emoji cut by JSON.stringify)
    try:
        obj = orjson.loads(raw.rstrip(b"\r\n"))
    except orjson.JSONDecodeError as exc:
        try:
            obj, halves = records_stage.loads_json(raw.rstrip(b"\r\n")), True
        except orjson.JSONDecodeError:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as bad:   # orjson says "surrogates not allowed" of any bad byte
                return BadLine(line, fallback, "INVALID_ARGUMENT",
                               f"line {line}: invalid UTF-8 at byte {bad.start}")
            return BadLine(line, fallback, "INVALID_ARGUMENT", f"line {line}: not valid JSON: {exc}")
    if not isinstance(obj, dict):
        return BadLine(line, fallback, "INVALID_ARGUMENT", f"line {line}: must be a JSON object")
    raw_id = obj.get("id")
    if halves and isinstance(raw_id, str) and records_stage.lone_surrogate(raw_id):
        return BadLine(line, fallback, "INVALID_ARGUMENT", f"line {line}: id: holds a lone surrogate "
                       "(half of a UTF-16 pair): not valid Unicode text")
    if raw_id is None or (isinstance(raw_id, str) and not raw_id.strip()):
        item_id = fallback           # (an id of spaces names nothing either)
    elif isinstance(raw_id, str):
        item_id = raw_id
    elif isinstance(raw_id, int) and not isinstance(raw_id, bool):
        item_id = str(raw_id)
    else:
        return BadLine(line, fallback, "INVALID_ARGUMENT", f"line {line}: id must be a string or integer")
    if "report" not in obj:
        return BadLine(line, item_id, "INVALID_ARGUMENT", f"line {line}: report: missing")
    if not isinstance(obj["report"], str):
        return BadLine(line, item_id, "INVALID_ARGUMENT", f"line {line}: report: must be a string")
    if halves and (half := records_stage.lone_surrogate(obj["report"])) is not None:
        return BadLine(line, item_id, "INVALID_ARGUMENT", f"line {line}: report: {half}")
    if halves and records_stage.replace_lone_surrogates(obj.get("options")) != obj.get("options"):
        return BadLine(line, item_id, "INVALID_ARGUMENT", f"line {line}: options: holds a lone surrogate "
                       "(half of a UTF-16 pair): not valid Unicode text")
    try:
        options = options_to_pb(obj.get("options"))
        flat, skipped = _flat_records(obj)
        notes, dropped = _record_notes(
            None if openjiuwen.is_openjiuwen_input(obj) else obj.get("records"), flat, skipped, halves)
        if halves:   # the records stage's warnings said where; the wire takes only whole characters
            flat = records_stage.replace_lone_surrogates(flat)
        records = [pb.Record() if i in dropped else _wire_record(r, group)
                   for i, (group, r) in enumerate(flat)]
    except InvalidInputError as exc:
        return BadLine(line, item_id, "INVALID_ARGUMENT", f"line {line}: {exc}")
    if default_style and not options.style:
        options.style = default_style
    req = pb.TraceRequest(report=obj["report"], records=records, options=options, id=item_id)
    return Item(line, item_id, req.SerializeToString(), notes)


# ---------------------------------------------------------------------------------------------
# TraceResponse -> output line (shared by every engine)

OUTPUT_SHAPES = ("native", "openjiuwen")


def response_line(req: pb.TraceRequest, line: int, resp: pb.TraceResponse, shape: str) -> bytes:
    """The output line for one answered request: an error line when its status is not OK."""
    if resp.status.code != 0:
        return error_line(req.id, _status_name(resp.status.code), resp.status.message, line)
    d = json_format.MessageToDict(
        resp, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    d["id"] = req.id
    if shape == "openjiuwen":
        from server.convert import record_to_dict

        records = [record_to_dict(r) for r in req.records]
        out = openjiuwen.to_openjiuwen_output(
            d["report"], openjiuwen.citations_from_json(d["citations"]), records
        )
        return orjson.dumps({"id": req.id, **out, "warnings": d["warnings"]})
    return orjson.dumps({"id": d.pop("id"), **d})


def with_record_notes(line: bytes, notes: tuple[str, ...]) -> bytes:
    """An answered line with its records warnings replaced by the records stage's own (`notes`),
    at their place (first, where the records stage puts them)."""
    d = orjson.loads(line)
    warnings = d.get("warnings")
    if not isinstance(warnings, list):
        return line
    at = next((i for i, w in enumerate(warnings) if w.startswith(("record ", "records"))), 0)
    kept = [w for w in warnings if not w.startswith(("record ", "records"))]
    d["warnings"] = [*kept[:at], *notes, *kept[at:]]
    return orjson.dumps(d)


# ---------------------------------------------------------------------------------------------
# the in-process work (local worker processes and Ray workers)

_LLM: Any = None
_TIMEOUT_S = 0.0


def init_worker(llm_args: argparse.Namespace | None, llm_section: Mapping[str, Any] | None,
                timeout_s: float) -> None:
    """Per-process setup: the LLM backend (flags > environment > [llm] section; None when no
    model is configured) and the per-item timeout."""
    global _LLM, _TIMEOUT_S
    _TIMEOUT_S = timeout_s
    if llm_args is None:
        _LLM = None  # no model configured: skip importing the LLM client at all
        return
    from server.llm_client import build_backend

    _LLM = build_backend(llm_args, llm_section)


def _init_pool_worker(llm_args: argparse.Namespace | None, llm_section: Mapping[str, Any] | None,
                      timeout_s: float) -> None:
    from server.logs import setup_cli_logging
    from server.workers import exit_with_parent, tune_gc

    setup_cli_logging()  # a worker's warnings read like the driver's
    exit_with_parent()  # a bulk run killed outright must not leave its pool behind
    init_worker(llm_args, llm_section, timeout_s)
    import tracer.pipeline  # noqa: F401  (loaded before the collector is tuned, as in the service)

    tune_gc()


def trace_item(line: int, request: bytes, shape: str) -> bytes:
    """Trace one serialized TraceRequest exactly as the service does; return its output line."""
    from server.config import Limits
    from server.convert import check_limits, request_to_core, result_to_pb
    from server.service import status_for
    from server.workers import TimeLimit, deadline_reserve_of
    from tracer.errors import TracerError
    from tracer.pipeline import trace

    req = pb.TraceRequest.FromString(request)
    deadline = TimeLimit(_TIMEOUT_S, deadline_reserve_of(_LLM)) if _TIMEOUT_S > 0 else None
    try:
        check_limits(req, Limits())
        report, records, options = request_to_core(req)
        # As in the service: the model gets the item's time less a reserve for the deterministic path.
        result = trace(report, records, options, llm=_LLM, cancel=deadline,
                       llm_deadline=None if deadline is None else deadline.llm_deadline)
    except TracerError as exc:
        code, message = status_for(exc, deadline is not None and deadline.is_set())
        return error_line(req.id, str(code.name), message, line)
    except Exception as exc:  # a bug in the core: report it on this line, keep the run going
        return error_line(req.id, "INTERNAL", f"internal error: {type(exc).__name__}: {exc}", line)
    return response_line(req, line, result_to_pb(result, req.id), shape)


# ---------------------------------------------------------------------------------------------
# output file: whole lines, resumable


class Output:
    """OUT opened for appending whole lines.

    Each line goes out in one os.write of line + "\\n" on an O_APPEND descriptor (no user-space
    buffer), so a killed process leaves at most a torn last line after power loss or disk-full;
    that tail (no trailing newline) is truncated away on start. fsync policy: `always` after
    every line, `interval` at most every `fsync_every` seconds and at close, `never` leaves it
    to the OS."""

    def __init__(self, path: str, *, resume: bool, overwrite: bool, fsync: str, fsync_every: float = 2.0,
                 retry: Retry | None = None, in_ids: set[str] | None = None):
        self.path = path
        # IN's ids, when known: `--retry` takes out only lines IN will answer again (an IN of the
        # failed items alone leaves the other items' lines as they are)
        self.in_ids = in_ids
        self.not_in_input: collections.Counter[str] = collections.Counter()  # reason -> lines kept
        self.fsync = fsync
        self.fsync_every = fsync_every
        self.retry = retry or Retry()
        self.done_ids: set[str] = set()
        self.done_dup_lines: dict[int, str] = {}   # line -> the id its duplicate-id error line names
        self.lines_present = 0
        self.truncated_bytes = 0
        self.retried: collections.Counter[str] = collections.Counter()  # reason -> lines taken out
        self._lock = threading.Lock()
        self._last_sync = time.monotonic()
        self._failed = False  # a write failed: nothing more is written (no line after a torn one)
        self._fd = self._open_locked(path)
        st = os.fstat(self._fd)
        if path == "-" or not stat.S_ISREG(st.st_mode):
            # a pipe or a terminal ("-", /dev/stdout, a FIFO): nothing to resume, and fsync
            # does not apply to it (EINVAL)
            self.path = "standard output" if path == "-" else path
            if resume:
                os.close(self._fd)
                raise BulkError(f"{self.path}: --resume needs OUT to be a regular file, not a pipe or "
                                "terminal")
            self.fsync = "never"
            return
        size = st.st_size
        if size and not resume and not overwrite:
            os.close(self._fd)
            raise BulkError(f"{path} exists and is not empty: pass --resume to continue it or --overwrite")
        if overwrite and not resume:
            os.ftruncate(self._fd, 0)
        elif size:
            try:
                self._scan_and_repair()
            except BaseException:
                os.close(self._fd)
                raise

    @staticmethod
    def _open_locked(path: str) -> int:
        """OUT opened for appending and locked (`flock`, released by the kernel on any exit). A
        `--retry` run replaces OUT by a rename while it holds the lock: a lock taken on the file
        that was OUT a moment ago is let go and taken again on the one there now."""
        for _ in range(20):
            try:
                if path == "-":  # standard output, whatever it is (a pipe, a socket, a terminal, a file)
                    fd = os.dup(sys.stdout.fileno())
                else:
                    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            except OSError as exc:
                raise BulkError(f"{path}: cannot open for writing: {exc.strerror or exc}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise BulkError(f"{path} is being written by another bulk run") from None
            if path == "-" or _same_file(fd, path):
                return fd
            os.close(fd)   # replaced between the open and the lock
        raise BulkError(f"{path} keeps being replaced while this run opens it; is another bulk run "
                        "rewriting it?")

    def _scan_and_repair(self) -> None:
        """Cut a torn last line, then read the ids line by line (memory: one line, not OUT)."""
        size = os.fstat(self._fd).st_size
        end = _after_last_newline(self.path, size)
        if end < size:
            self.truncated_bytes = size - end
            os.truncate(self.path, end)
        with open(self.path, "rb") as fh:
            self._read_ids(fh)
        if self.retried:   # a first pass only counts: OUT is copied only when it holds such lines
            self.done_ids.clear()
            self.done_dup_lines.clear()
            self.lines_present = 0
            self.retried.clear()
            self._take_out_retried()

    def _take_out_retried(self) -> None:
        """OUT without the lines `--retry` names, so they are traced again and each input line
        still ends with one line. The kept lines are copied to a new file beside OUT, synced,
        locked and renamed over it: a run killed at any point leaves either OUT as it was or OUT
        without those lines (whose items a resumed run then traces), never a half-copied OUT. A
        killed copy can leave its temporary file (`.OUT.*.retry`) behind."""
        target = os.path.realpath(self.path)   # a symlinked OUT stays a link to the rewritten file
        folder, name = os.path.split(target)
        st = os.fstat(self._fd)
        if st.st_nlink > 1:
            raise BulkError(f"{self.path} has {st.st_nlink} hard links; --retry replaces the file, which "
                            "would leave the other links with the old lines (copy OUT, or remove the links)")
        for stale in glob.glob(os.path.join(glob.escape(folder), f".{glob.escape(name)}.*.retry")):
            with contextlib.suppress(OSError):   # a killed rewrite's copy: only a lock holder makes one
                os.unlink(stale)
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".retry", dir=folder)
        except OSError as exc:
            raise BulkError(f"{self.path}: --retry rewrites OUT, but cannot create a file beside it in "
                            f"{folder or '.'}: {exc.strerror or exc}") from None
        new_fd = -1
        try:
            with os.fdopen(fd, "wb") as kept, open(self.path, "rb") as fh:
                self._read_ids(fh, kept)
                kept.flush()
                os.fsync(kept.fileno())
            new_fd = os.open(tmp, os.O_WRONLY | os.O_APPEND)
            fcntl.flock(new_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # locked before anyone can open it as OUT
            os.fchmod(new_fd, stat.S_IMODE(st.st_mode))
            with contextlib.suppress(OSError):   # the owner stays (when this user may set it)
                os.fchown(new_fd, st.st_uid, st.st_gid)
            os.rename(tmp, target)
            tmp = ""
            _fsync_dir(folder or ".")
        except OSError as exc:
            if new_fd >= 0:
                os.close(new_fd)
            room = f"; it needs about {st.st_size / 2**20:,.0f} MiB free beside OUT" \
                if exc.errno == errno.ENOSPC else ""
            raise BulkError(f"{self.path}: --retry could not rewrite OUT (left as it was): "
                            f"{exc.strerror or exc}{room}", resumable=exc.errno == errno.ENOSPC) from None
        except BaseException:
            if new_fd >= 0:
                os.close(new_fd)
            raise
        finally:
            if tmp:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        os.close(self._fd)   # the old file's lock goes with it; the new file holds its own
        self._fd = new_fd

    def _read_ids(self, fh: IO[bytes], kept: IO[bytes] | None = None) -> None:
        """Read OUT's answered ids and count the lines `--retry` takes out (`retried`); with `kept`,
        copy there every line it does not take out, and leave those out of the ids."""
        for n, raw in enumerate(fh, 1):
            if not raw.strip():
                if kept is not None:
                    kept.write(raw)
                continue
            try:
                obj = orjson.loads(raw)
                item_id = obj["id"]
            except (orjson.JSONDecodeError, KeyError, TypeError):
                raise BulkError(f"{self.path}: line {n} is not an output line; fix or remove it") from None
            reason = self.retry.reason(obj) if self.retry and isinstance(obj, dict) else None
            if reason is not None and self.in_ids is not None and str(item_id) not in self.in_ids:
                if kept is None:
                    self.not_in_input[reason] += 1
                reason = None      # IN would not answer it again: it stays as it is
            if reason is not None:
                self.retried[reason] += 1
                if kept is not None:
                    continue
            elif kept is not None:
                kept.write(raw)
            self.lines_present += 1
            err = obj.get("error")
            dup = isinstance(err, dict) and err.get("code") == DUPLICATE_CODE
            if dup and isinstance(err.get("line"), int):
                self.done_dup_lines[err["line"]] = str(item_id)
            else:
                self.done_ids.add(str(item_id))

    def write(self, line: bytes) -> None:
        """Append one line. A failed write (a full disk) stops the run resumably: the torn line it
        may leave is the file's last, which a resumed run cuts away, so nothing more is written."""
        data = line + b"\n"
        with self._lock:
            if self._failed:
                raise BulkError(f"{self.path}: an earlier write failed", resumable=True)
            try:
                view = memoryview(data)
                while view:
                    n = os.write(self._fd, view)
                    view = view[n:]
                now = time.monotonic()
                due = self.fsync == "interval" and now - self._last_sync >= self.fsync_every
                if self.fsync == "always" or due:
                    os.fsync(self._fd)
                    self._last_sync = now
            except OSError as exc:
                self._failed = True
                if exc.errno == errno.EPIPE:
                    raise BulkError(f"{self.path}: closed by its reader (broken pipe)",
                                    resumable=True) from None
                raise BulkError(f"cannot write {self.path}: {exc.strerror or exc} (free space or fix it)",
                                resumable=True) from None

    def close(self) -> None:
        with self._lock:
            try:
                if self.fsync != "never" and not self._failed:
                    try:
                        os.fsync(self._fd)
                    except OSError as exc:
                        self._failed = True
                        raise BulkError(f"cannot write {self.path}: {exc.strerror or exc}",
                                        resumable=True) from None
            finally:
                os.close(self._fd)


def _same_file(fd: int, path: str) -> bool:
    """Whether `path` names the file open on `fd` (not one renamed over it since)."""
    try:
        a, b = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _fsync_dir(folder: str) -> None:
    """Make a rename in `folder` durable (where the filesystem allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _after_last_newline(path: str, size: int, block: int = 1 << 16) -> int:
    """The offset just after the last newline of the file's first `size` bytes (0 if none),
    read backwards in blocks."""
    with open(path, "rb") as fh:
        pos = size
        while pos > 0:
            start = max(0, pos - block)
            fh.seek(start)
            i = fh.read(pos - start).rfind(b"\n")
            if i >= 0:
                return start + i + 1
            pos = start
    return 0


# ---------------------------------------------------------------------------------------------
# progress


def _fmt_eta(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    s = int(seconds)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


class Progress:
    """tqdm bar on a terminal (items, rate, ETA, errors); plain periodic lines otherwise."""

    def __init__(self, total: int, mode: str, every_s: float, stream: IO[str]) -> None:
        self.total = max(0, total)
        self.done = self.errors = self.skipped = 0
        self.every_s = every_s
        self.stream = stream
        self.t0 = time.monotonic()
        self._last = self.t0
        self._lock = threading.Lock()
        use_bar = mode == "bar" or (mode == "auto" and stream.isatty())
        self.mode = "none" if mode == "none" else ("bar" if use_bar else "plain")
        self._bar: Any = None
        if self.mode == "bar":
            from tqdm import tqdm

            self._bar = tqdm(total=self.total or None, unit="report", file=stream, dynamic_ncols=True,
                             smoothing=0.1)

    def skip(self) -> None:
        """A line answered by an earlier run (--resume): it leaves the total."""
        with self._lock:
            self.skipped += 1
            self.total = max(0, self.total - 1)
            if self._bar is not None:
                self._bar.total = self.total or None   # shown at its next update, not redrawn per line

    def add(self, ok: bool) -> None:
        with self._lock:
            self.done += 1
            if not ok:
                self.errors += 1
            if self._bar is not None:
                self._bar.update(1)
                self._bar.set_postfix(errors=self.errors, refresh=False)
            elif self.mode == "plain":
                now = time.monotonic()
                if now - self._last >= self.every_s:
                    self._last = now
                    self.stream.write(self.line() + "\n")
                    self.stream.flush()

    def line(self, final: bool = False) -> str:
        elapsed = max(1e-9, time.monotonic() - self.t0)
        rate = self.done / elapsed
        of = f"/{self.total}" if self.total else ""
        head = (f"bulk: {self.done}{of} done, {self.errors} errors, {self.skipped} skipped, "
                f"{rate:.2f} reports/s")
        if final:
            return f"{head} in {_fmt_eta(elapsed)}"
        left = max(0, self.total - self.done)
        return f"{head}, ETA {_fmt_eta(left / rate if rate > 0 else math.inf)}"

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        if self.mode != "none":
            self.stream.write(self.line(final=True) + "\n")
            self.stream.flush()


# ---------------------------------------------------------------------------------------------
# reading the input


# Writes one output line: (input line number, the line, ok?). Engines may call it from threads.
Emit = Callable[[int, bytes, bool], None]


class InOrder:
    """An Emit that releases lines in input order (`--ordered`): each answered line waits until
    every line dispatched before it is written. Lines finished behind a slow one are held in
    memory until it finishes (bounded by --timeout, if set)."""

    def __init__(self, sink: Emit) -> None:
        self._sink = sink
        self._order: collections.deque[int] = collections.deque()
        self._ready: dict[int, tuple[bytes, bool]] = {}
        self._lock = threading.Lock()

    def dispatched(self, n: int) -> None:
        with self._lock:
            self._order.append(n)

    def __call__(self, n: int, line: bytes, ok: bool) -> None:
        with self._lock:
            self._ready[n] = (line, ok)
            while self._order and self._order[0] in self._ready:
                first = self._order.popleft()
                held, held_ok = self._ready.pop(first)
                self._sink(first, held, held_ok)

    @property
    def held(self) -> int:
        return len(self._ready)


def _input_ids(path: str, default_style: str) -> tuple[set[str], int]:
    """The ids IN's lines answer under, as `read_items` gives them (an id-less line's "line-N"),
    and how many items IN holds (`count_lines`, from the same read)."""
    seen: dict[str, int] = {}
    items = 0
    with open(path, "rb") as fh:
        for n, raw in enumerate(fh, 1):
            if n == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")
            if raw.strip():
                items += 1
                seen.setdefault(parse_line(n, raw, default_style, seen).id, n)
    return set(seen), items


def count_lines(path: str) -> int:
    """Non-blank lines of `path` (for the progress total)."""
    n = 0
    with open(path, "rb") as fh:
        for k, raw in enumerate(fh):
            if raw.strip() and not (k == 0 and raw.removeprefix(b"\xef\xbb\xbf").strip() == b""):
                n += 1   # (a first line of only a byte order mark is no item, as `read_items` reads it)
    return n


def read_items(
    path: str, out: Output, emit: Emit, progress: Progress, default_style: str,
    dispatched: Callable[[int], None] | None = None,
) -> Iterator[Item]:
    """Yield the lines still to trace. Bad lines and duplicate ids are answered here (via
    `emit`); lines already answered in OUT (--resume) are skipped. Blank lines are not items.
    `dispatched(n)` is called, in input order, for every line that will be answered."""
    seen: dict[str, int] = {}
    with open(path, "rb") as fh:
        for n, raw in enumerate(fh, 1):
            if n == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte order mark is not JSON
            if not raw.strip():
                continue
            parsed = parse_line(n, raw, default_style, seen)
            if out.done_dup_lines.get(n) == parsed.id and parsed.id in seen:
                # answered as a duplicate already: the same id on the same line, and still a
                # duplicate (IN may have changed since: then the line is read afresh)
                progress.skip()
                continue
            first = seen.get(parsed.id)
            if first is not None:
                message = f"line {n}: duplicate id {parsed.id!r}, first used on line {first}"
                if dispatched is not None:
                    dispatched(n)
                emit(n, error_line(parsed.id, DUPLICATE_CODE, message, n), False)
                continue
            seen[parsed.id] = n
            if parsed.id in out.done_ids:
                progress.skip()
                continue
            if dispatched is not None:
                dispatched(n)
            if isinstance(parsed, BadLine):
                emit(n, error_line(parsed.id, parsed.code, parsed.message, parsed.line), False)
                continue
            yield parsed


# ---------------------------------------------------------------------------------------------
# engines


Work = Callable[[int, bytes, str], bytes]

_CANARY = pb.TraceRequest(id="canary", report="A canary sentence.").SerializeToString()
CRASHED = ("worker process died while tracing this item (crashed or killed; it was retried alone and "
           "died again)")


def started(pool: ProcessPoolExecutor, size: int) -> ProcessPoolExecutor:
    """Start every worker of a new pool before any item is submitted: one alone first, then the
    rest. Workers that cannot start at all (a failing start-up, no memory) then stop the run at
    once, resumably, before any item is blamed. (Starting them alone also keeps CPython 3.11's
    pool from breaking in its manager thread while `submit` is still adding a process to it,
    as server/workers.py's warm-up explains.)"""
    try:
        pool.submit(os.getpid).result()
        for f in [pool.submit(os.getpid) for _ in range(size * 2)]:
            f.result()
    except BrokenProcessPool:
        pool.shutdown(wait=True, cancel_futures=True)
        raise BulkError("worker processes fail to start (see the error above; a failing start-up or "
                        "no memory?)", resumable=True) from None
    return pool


def restarted(new_pool: Callable[[int], ProcessPoolExecutor], size: int,
              tries: int = 3) -> ProcessPoolExecutor:
    """`started` for a pool that replaces a broken one. Its workers started before, so one that
    dies while the new ones start was killed (the OOM killer often strikes twice): try again, and
    only then stop the run, resumably, saying so."""
    for _ in range(tries - 1):
        try:
            return started(new_pool(size), size)
        except BulkError:
            time.sleep(0.5)
    try:
        return started(new_pool(size), size)
    except BulkError:
        raise BulkError(f"worker processes died {tries} times while the pool restarted (killed, or out of "
                        "memory?)", resumable=True) from None


def run_local(items: Iterator[Item], emit: Emit, *, workers: int, shape: str,
              llm_args: argparse.Namespace | None, llm_section: Mapping[str, Any] | None,
              timeout_s: float, window: int = 0, work: Work = trace_item) -> None:
    """Trace in `workers` processes with a bounded number of items in flight; `emit` in completion order.

    A worker that dies (a crash in native code, the OOM killer, a stray SIGKILL) breaks the pool
    and fails every item then in flight. Those items are retried one at a time in a
    single-worker pool: the ones that succeed are written as usual, and an item that kills its
    worker again gets an INTERNAL error line. So one poison item costs one error line, not the
    run, and a resumed run does not meet it again."""
    window = window or workers * 4
    ctx = multiprocessing.get_context("spawn")  # no fork of a process holding grpc/threads

    def new_pool(size: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(size, mp_context=ctx, initializer=_init_pool_worker,
                                   initargs=(llm_args, llm_section, timeout_s))

    def isolate(suspects: list[Item]) -> None:
        solo = new_pool(1)
        try:
            for item in sorted(suspects, key=lambda it: it.line):
                try:
                    line = solo.submit(work, item.line, item.request, shape).result()
                except BrokenProcessPool:
                    solo.shutdown(wait=True, cancel_futures=True)
                    solo = new_pool(1)
                    # Blame the item only if a fresh worker can trace a trivial request: when
                    # workers die whatever they do (a failing start-up, no memory at all), stop
                    # resumably instead of writing error lines for innocent items.
                    try:
                        solo.submit(work, 0, _CANARY, shape).result()
                    except BrokenProcessPool:
                        raise BulkError("worker processes die even on a trivial request (failing start-up "
                                        "or no memory?)", resumable=True) from None
                    line = error_line(item.id, "INTERNAL", CRASHED, item.line)
                emit(item.line, line, _is_ok(line))
        finally:
            solo.shutdown(wait=True, cancel_futures=True)

    pool = started(new_pool(workers), workers)
    in_flight: dict[Future[bytes], Item] = {}

    def restart(failed: list[Item]) -> None:
        """The pool is broken: every item still in it fails the same way; retry them alone."""
        nonlocal pool
        failed.extend(in_flight.values())
        in_flight.clear()
        pool.shutdown(wait=True, cancel_futures=True)
        isolate(failed)
        pool = restarted(new_pool, workers)

    def drain(block_until: int) -> None:
        while len(in_flight) > block_until:
            done, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
            failed: list[Item] = []
            for fut in done:
                item = in_flight.pop(fut)
                try:
                    line = fut.result()
                except BrokenProcessPool:
                    failed.append(item)
                    continue
                emit(item.line, line, _is_ok(line))
            if failed:
                restart(failed)

    try:
        for item in items:
            drain(window - 1)
            try:
                in_flight[pool.submit(work, item.line, item.request, shape)] = item
            except BrokenProcessPool:  # a worker died since the last drain: the pool takes no work
                restart([item])
        drain(0)
    except KeyboardInterrupt:
        # stopped: what the workers finished is written before the pool stops (the rest waits
        # for --resume)
        for fut, item in list(in_flight.items()):
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                emit(item.line, fut.result(), _is_ok(fut.result()))
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _is_ok(line: bytes) -> bool:
    """An output line is an error line when its second key is "error" (cheap, no parse)."""
    # error lines are {"id":...,"error":{...}}; ok lines never have a top-level "error" key
    return b',"error":{"code"' not in line


def _parse_targets(spec: str) -> list[str]:
    targets = [t.strip() for t in spec.split(",") if t.strip()]
    for t in targets:
        host, _, port = t.rpartition(":")
        if not host or not port.isdigit():
            raise BulkError(f"--server: expected host:port[,host:port...], got {t!r}")
        if not 0 < int(port) < 65536:
            raise BulkError(f"--server: port must be 1..65535, got {t!r}")
    if not targets:
        raise BulkError("--server: no host:port given")
    return targets


class _FanOut:
    """Shared state of a fan-out run: the feed queue, items put back by a failed stream, and
    the count of items fed but not yet answered (a lane closes its stream only at zero)."""

    def __init__(self, capacity: int) -> None:
        self.work: queue.Queue[Item] = queue.Queue(maxsize=capacity)
        self.retry: collections.deque[Item] = collections.deque()
        self.fed_all = threading.Event()
        self.stop = threading.Event()
        self.error: BulkError | None = None  # what stopped the run, other than the servers
        self._lock = threading.Lock()
        self.outstanding = 0
        self.answers = 0   # items a server answered (an error line included)
        self._attempts: dict[str, int] = {}

    def retry_item(self, item: Item, max_attempts: int = 3) -> bool:
        """Put back an item a server could not take right now; False once it has had its tries."""
        with self._lock:
            n = self._attempts.get(item.id, 0) + 1
            if n >= max_attempts:
                self._attempts.pop(item.id, None)
                return False
            self._attempts[item.id] = n
        self.retry.append(item)
        return True

    def fail(self, error: BulkError) -> None:
        with self._lock:
            if self.error is None:
                self.error = error
        self.stop.set()

    def fed(self) -> None:
        with self._lock:
            self.outstanding += 1

    def answered(self) -> None:
        with self._lock:
            self.outstanding -= 1
            self.answers += 1

    def finished(self) -> bool:
        with self._lock:
            return self.fed_all.is_set() and self.outstanding == 0

    def next_item(self) -> Item | None:
        """An item to send, or None when there is none right now."""
        try:
            return self.retry.popleft()
        except IndexError:
            pass
        try:
            return self.work.get(timeout=0.1)
        except queue.Empty:
            return None


class _Lane(threading.Thread):
    """One TraceStream to one server, at most `window` items in flight. On a broken stream its
    unanswered items go back for any lane to take, and it reconnects (then gives up)."""

    def __init__(self, target: str, state: _FanOut, window: int, shape: str, emit: Emit,
                 metadata: tuple[tuple[str, str], ...], tls_ca: bytes | None = None,
                 retries: int = 3, auto_window: bool = False) -> None:
        super().__init__(name=f"bulk-lane-{target}", daemon=True)
        self.target, self.state, self.window, self.shape = target, state, window, shape
        self.auto_window = auto_window
        self.emit, self.metadata, self.retries, self.tls_ca = emit, metadata, retries, tls_ca
        self.failure: str | None = None
        self.refused = False  # the server refused the call itself (auth, wrong service): a retry cannot help

    def run(self) -> None:
        import grpc

        from server.pb.source_tracer.v1 import tracer_pb2_grpc

        failures = 0
        options = [("grpc.max_send_message_length", SEND_LIMIT),
                   ("grpc.max_receive_message_length", SEND_LIMIT)]
        while not self.state.stop.is_set():
            if self.tls_ca is not None:
                creds = grpc.ssl_channel_credentials(root_certificates=self.tls_ca)
                channel = grpc.secure_channel(self.target, creds, options=options)
            else:
                channel = grpc.insecure_channel(self.target, options=options)
            stream = _Stream(self.state, self.window, self.too_large)
            try:
                stub = tracer_pb2_grpc.SourceTracerStub(channel)
                call = stub.TraceStream(stream.requests(), metadata=self.metadata)
                if self.auto_window:
                    self.window = max(self.window, advertised_window(call.initial_metadata()))
                    stream.widen(self.window)
                taken = advertised_max_message(call.initial_metadata())
                stream.max_bytes = min(SEND_LIMIT, taken or SEND_LIMIT)
                for resp in call:
                    entry = stream.answered(resp.id)
                    if entry is None:
                        continue
                    item, req = entry
                    if resp.status.code in _RETRY_ITEM_CODES and self.state.retry_item(item):
                        continue  # e.g. the server is draining: another server (or this one later)
                    try:
                        self.emit(item.line, response_line(req, item.line, resp, self.shape),
                                  resp.status.code == 0)
                    except BulkError as exc:  # OUT cannot be written: no server's fault; stop the run
                        self.state.fail(exc)
                        return
                    self.state.answered()
                    failures = 0
                if stream.empty() and (self.state.finished() or self.state.stop.is_set()):
                    return
                raise RuntimeError("the server ended the stream early")
            except Exception as exc:  # grpc.RpcError, or a stream cut short
                failures += 1
                back = stream.take_back()
                # an item over a message size limit ends the whole stream: answer it, retry the rest
                over = _LARGER_THAN_MAX.search(_rpc_error_text(exc))
                if over is not None:
                    size, limit = int(over.group(1)), int(over.group(2))
                    big = [item for item in back if len(item.request) == size]
                    if big:
                        for item in big:
                            self.too_large(item, limit)
                        back = [item for item in back if len(item.request) != size]
                        failures -= 1  # the item's fault, not the server's
                self.state.retry.extend(back)
                code = getattr(exc, "code", None)
                if callable(code) and code() in _FATAL_STREAM_CODES:
                    failures = self.retries + 1  # retrying cannot help (auth, wrong service)
                    self.refused = True
                if failures > self.retries:
                    self.failure = f"{self.target}: {_rpc_error_text(exc)}"
                    return
                time.sleep(min(2.0, 0.2 * 2 ** failures))
            finally:
                channel.close()

    def too_large(self, item: Item, limit: int) -> None:
        """Answer an item over the server's (or this client's) message size limit with an error
        line, as a server answers an item over its own limits: the run goes on."""
        whose = "server" if limit < SEND_LIMIT else "client"
        message = (f"request: {len(item.request)} bytes, over the {whose}'s max message size of {limit} bytes"
                   + (" (serve --max-message-bytes)" if whose == "server" else ""))
        try:
            self.emit(item.line, error_line(item.id, "RESOURCE_EXHAUSTED", message, item.line), False)
        except BulkError as exc:
            self.state.fail(exc)
            return
        self.state.answered()


class _Stream:
    """The send side of one TraceStream call and the items it has in flight."""

    def __init__(self, state: _FanOut, window: int,
                 too_large: Callable[[Item, int], None] | None = None) -> None:
        self.state = state
        self.window = window
        self.too_large = too_large
        self.max_bytes = SEND_LIMIT   # what the server says it takes, once its metadata is read
        self.slots = threading.Semaphore(window)
        self.lock = threading.Lock()
        self.in_flight: dict[str, tuple[Item, pb.TraceRequest]] = {}
        self.closed = False  # taken back: the call is over, and gRPC would drop what it still reads

    def widen(self, window: int) -> None:
        """Allow `window` items in flight from now on (never fewer than before)."""
        with self.lock:
            extra, self.window = window - self.window, max(self.window, window)
        if extra > 0:
            self.slots.release(extra)

    def requests(self) -> Iterator[pb.TraceRequest]:
        """What gRPC sends, read on gRPC's own thread. That thread may still be waiting here for an
        item after the call broke and `take_back` ran: an item it then takes goes back to the
        queue (gRPC would drop it unsent, and the run would wait for its answer forever)."""
        state = self.state
        while not (state.stop.is_set() or self.closed):
            if state.finished():
                return  # closes our side; the server then ends the stream
            if not self.slots.acquire(timeout=0.1):
                continue
            item = state.next_item()
            if item is None:
                self.slots.release()
                continue
            if len(item.request) > self.max_bytes and self.too_large is not None:
                self.slots.release()
                self.too_large(item, self.max_bytes)   # never sent: it would end the stream
                continue
            req = pb.TraceRequest.FromString(item.request)
            with self.lock:
                if self.closed:
                    state.retry.appendleft(item)
                    return
                self.in_flight[item.id] = (item, req)
            yield req

    def answered(self, item_id: str) -> tuple[Item, pb.TraceRequest] | None:
        with self.lock:
            entry = self.in_flight.pop(item_id, None)
        if entry is not None:
            self.slots.release()
        return entry

    def empty(self) -> bool:
        with self.lock:
            return not self.in_flight

    def take_back(self) -> list[Item]:
        """Close the stream to new items and return the unanswered ones."""
        with self.lock:
            self.closed = True
            back = [item for item, _ in self.in_flight.values()]
            self.in_flight.clear()
        return back


MAX_AUTO_WINDOW = 1024


def advertised_window(metadata: Any) -> int:
    """The window that keeps a server busy: twice the items it says it works on at once (those
    plus the next ones queued behind them), or 0 when it says nothing usable."""
    for key, value in metadata or ():
        if key == STREAM_CONCURRENCY_KEY and isinstance(value, str) and value.isdigit():
            return min(MAX_AUTO_WINDOW, 2 * int(value))
    return 0


def advertised_max_message(metadata: Any) -> int | None:
    """The largest request the server takes (`x-max-message-bytes`), or None when it does not say."""
    for key, value in metadata or ():
        if key == MAX_MESSAGE_KEY and isinstance(value, str) and value.isdigit():
            return int(value)
    return None


# "Received message larger than max (2000070 vs. 1048576)": gRPC's words for a message over a limit
_LARGER_THAN_MAX = re.compile(r"larger than max \((\d+) vs\. (\d+)\)")
SEND_LIMIT = 64 * 1024 * 1024   # this client's own max message length


def _fatal_codes() -> frozenset[Any]:
    import grpc

    return frozenset({grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED,
                      grpc.StatusCode.UNIMPLEMENTED})


_FATAL_STREAM_CODES = _fatal_codes()
# Per-item statuses that say "not now" rather than "not this item": UNAVAILABLE, CANCELLED
# (a draining server cancels what it holds), ABORTED. Such an item is tried again, 3 times.
_RETRY_ITEM_CODES = frozenset({14, 1, 10})


def _rpc_error_text(exc: BaseException) -> str:
    code = getattr(exc, "code", None)
    details = getattr(exc, "details", None)
    if callable(code) and callable(details):
        return f"{code().name}: {details()}"
    return str(exc)


def run_servers(items: Iterator[Item], emit: Emit, *, targets: list[str], shape: str,
                window: int, metadata: tuple[tuple[str, str], ...] = (), tls_ca: bytes | None = None,
                auto_window: bool = False) -> None:
    """Fan items out to running services over TraceStream, `window` in flight per server (with
    `auto_window`, at least twice what each server advertises it works on at once).
    Servers pull work as they free up, so a faster server takes more of it."""
    state = _FanOut(capacity=max(2, len(targets) * window))
    lanes = [_Lane(t, state, window, shape, emit, metadata, tls_ca, auto_window=auto_window)
             for t in targets]
    for lane in lanes:
        lane.start()

    def check_alive() -> None:
        if state.error is not None:
            raise state.error
        if not any(lane.is_alive() for lane in lanes):
            failures = "; ".join(lane.failure or "stopped" for lane in lanes)
            if all(lane.refused for lane in lanes):  # the same run would be refused again
                raise BulkError(f"every server refused the run ({failures}); fix that (--auth-token, "
                                f"--server-tls-ca, the address), then rerun with --resume to finish")
            hint = "" if state.answers else (
                "; no server answered a single item: check the address, that the service is up, "
                "and TLS (a TLS server needs --server-tls-ca, a plain one none)")
            raise BulkError(f"every server failed ({failures}){hint}", resumable=True)

    try:
        for item in items:
            state.fed()
            while True:
                check_alive()
                try:
                    state.work.put(item, timeout=0.2)
                    break
                except queue.Full:
                    continue
        state.fed_all.set()
        while not state.finished():
            check_alive()
            time.sleep(0.05)
        for lane in lanes:
            lane.join(5.0)
    finally:
        state.stop.set()


# ---------------------------------------------------------------------------------------------
# CLI


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {text}")
    return value


def default_workers() -> int:
    """The cores this process may use, capped by a container's CPU quota, as `serve` counts them."""
    from server.workers import available_cpus  # (no gRPC there)
    return available_cpus()


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="IN.jsonl",
                   help="one request per line: {id, report, records, options?}; - reads standard input")
    p.add_argument("output", metavar="OUT.jsonl",
                   help="one response or error line per input line (- for standard output: no --resume)")
    p.add_argument("--resume", action="store_true", help="skip ids already answered in OUT and append")
    p.add_argument("--overwrite", action="store_true", help="truncate a non-empty OUT instead of failing")
    p.add_argument("--retry", metavar="WHAT", default="",
                   help="with --resume: trace again OUT's lines of these kinds (gRPC status names of "
                        "error lines, e.g. DEADLINE_EXCEEDED,INTERNAL; errors: every error line; "
                        "degraded: answers whose model stage fell back), comma-separated")
    p.add_argument("--workers", type=int, default=0, help="local worker processes (default: number of cores)")
    p.add_argument("--engine", choices=("local", "ray"), default="local")
    p.add_argument("--ray-address", default="", help="Ray cluster address (default: start a local Ray)")
    p.add_argument("--server", default=None, metavar="HOST:PORT[,HOST:PORT...]",
                   help="fan the work out to running services over TraceStream")
    p.add_argument("--window", type=int, default=0,
                   help="items in flight per worker pool / per server (default: 4 x workers; per server "
                        "twice what it works on at once, at least 8)")
    p.add_argument("--auth-token", default=os.environ.get("SOURCE_TRACER_AUTH_TOKEN", ""),
                   help="bearer token for --server (env SOURCE_TRACER_AUTH_TOKEN)")
    p.add_argument("--server-tls-ca", metavar="PATH",
                   help="CA bundle (PEM): talk TLS to --server, verifying it (default plaintext)")
    p.add_argument("--output-shape", choices=OUTPUT_SHAPES, default="native",
                   help="native: TraceResponse JSON; openjiuwen: {id, modified_report, datas}")
    p.add_argument("--timeout", type=float, default=0.0, help="per-item time limit in seconds (local/ray)")
    p.add_argument("--ordered", action="store_true",
                   help="write OUT in input order (default: in completion order)")
    p.add_argument("--fsync", choices=("always", "interval", "never"), default="interval",
                   help="fsync OUT after every line, every 2 s (default), or never")
    p.add_argument("--progress", choices=("auto", "bar", "plain", "none"), default="auto",
                   help="auto: a bar on a terminal, plain periodic lines otherwise")
    p.add_argument("--progress-every", type=_positive_seconds, default=10.0,
                   help="seconds between plain progress lines (more than 0)")
    p.add_argument("--config", metavar="PATH", help="TOML config file; its [llm] section is used (local/ray)")
    try:
        from server.llm_client import add_llm_arguments

        add_llm_arguments(p)
    except ImportError:  # pragma: no cover
        pass


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the `bulk` subcommand to the CLI."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "bulk", help="re-cite a JSONL file of reports (resumable)",
        description="Re-cite every report of IN.jsonl into OUT.jsonl; see docs/bulk.md.",
    )
    add_arguments(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Run `bulk`; exit 0 when every line is answered (error lines included), 2 on bad usage,
    1 when the run stopped early (then --resume finishes it)."""
    spooled: str | None = None
    stopped_by: list[int] = []

    def on_stop(signum: int, _frame: Any) -> None:  # Ctrl-C; systemd, Kubernetes, `timeout`
        stopped_by.append(signum)
        if len(stopped_by) == 1:
            # The interrupt unwinds through the worker pool's shutdown, which waits for the items
            # in flight (a model call may take a minute) and, raised at the wrong instant inside
            # the pool, can wait for ever: past STOP_GRACE_S the process ends anyway. OUT holds
            # whole lines only (a torn last one is cut on resume), so --resume still finishes it.
            print(f"bulk: stopping; waiting at most {STOP_GRACE_S:.0f} s for the items in flight",
                  file=sys.stderr, flush=True)
            watchdog = threading.Timer(STOP_GRACE_S, _stop_now, (args.output, signum))
            watchdog.daemon = True
            watchdog.start()
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_stop)
    previous_int = signal.signal(signal.SIGINT, on_stop)
    try:
        spooled = _spool_stream(args)
        return _run(args)
    except BulkError as exc:
        if exc.resumable and _streams(args.output):   # nothing to resume from: say what to do
            print(f"bulk: {exc.reason}; the lines written are complete, run again for the rest",
                  file=sys.stderr)
        else:
            print(f"bulk: {exc}", file=sys.stderr)
        return 1 if exc.resumable else 2
    except KeyboardInterrupt:
        print("bulk: interrupted; " + ("run again for the rest" if _streams(args.output)
                                       else "rerun with --resume to finish"), file=sys.stderr)
        return 128 + (stopped_by[0] if stopped_by else signal.SIGINT)
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)
        if spooled is not None:
            if spooled.startswith("/proc/self/fd/"):
                os.close(int(spooled.rsplit("/", 1)[1]))
            else:
                os.unlink(spooled)


def _streams(output: str) -> bool:
    """Whether OUT is standard output or another file that is not a regular one (a pipe): no
    --resume can continue it."""
    if output == "-":
        return True
    try:
        return not stat.S_ISREG(os.stat(output).st_mode)
    except OSError:
        return False


# How long a run stopped by SIGTERM or Ctrl-C may take to stop its workers before it ends without them.
STOP_GRACE_S = 10.0


def _stop_now(output: str, signum: int = signal.SIGTERM) -> None:
    print("bulk: interrupted; " + ("run again for the rest" if _streams(output)
                                   else "rerun with --resume to finish")
          + f" (the workers did not stop within {STOP_GRACE_S:.0f} s)", file=sys.stderr, flush=True)
    os._exit(128 + signum)


def _spool_stream(args: argparse.Namespace) -> str | None:
    """IN read from a pipe, a FIFO or `-` (standard input) is copied to a temporary file first:
    bulk reads IN twice (to count the lines, then to trace them), and a stream read once is gone
    (`cat in.jsonl | bulk /dev/stdin out` counted 3 lines and then traced none, exit 0). Returns
    the copy's path (args.input then names it), or None for a regular file."""
    source = args.input
    if source != "-":
        try:
            if stat.S_ISREG(os.stat(source).st_mode) or os.path.isdir(source):
                return None
        except OSError:
            return None  # _run names the problem
    import shutil
    import tempfile

    fd, path = tempfile.mkstemp(prefix="source-tracer-bulk-", suffix=".jsonl")
    # Where the system lets a process reopen its own descriptors (Linux's /proc), the copy leaves
    # the directory at once: a run killed outright (kill -9) leaves no copy behind.
    named = f"/proc/self/fd/{fd}"
    if os.path.exists(named):
        os.unlink(path)
        path = named
    try:
        with os.fdopen(os.dup(fd), "wb") as copy:
            if source == "-":
                shutil.copyfileobj(sys.stdin.buffer, copy, 1 << 20)
            else:
                with open(source, "rb") as fh:
                    shutil.copyfileobj(fh, copy, 1 << 20)
    except BaseException as exc:
        os.close(fd)
        if path != named:
            os.unlink(path)
        if isinstance(exc, OSError):
            raise BulkError(f"{source}: cannot read: {exc.strerror or exc}") from None
        raise
    if path != named:
        os.close(fd)
    args.input = path
    return path


def _run(args: argparse.Namespace) -> int:
    if os.path.isdir(args.input):
        raise BulkError(f"{args.input}: is a directory, not a JSONL file")
    try:
        same = args.output != "-" and os.path.exists(args.output) \
            and os.path.samefile(args.input, args.output)
    except OSError:
        same = False
    if same:  # --overwrite would empty IN before reading it, --resume read IN as answered lines
        raise BulkError(f"{args.output}: is IN itself; write OUT to another file")
    try:  # before OUT is touched, so a bad IN leaves no output behind
        with open(args.input, "rb"):
            pass
    except OSError as exc:
        raise BulkError(f"{args.input}: cannot read: {exc.strerror or exc}") from None
    if args.resume and args.overwrite:
        raise BulkError("--resume and --overwrite are alternatives: keep OUT's lines, or start it again")
    retry = parse_retry(args.retry) if args.retry else None
    if retry is not None and not args.resume:
        raise BulkError("--retry needs --resume: it traces again lines of the OUT a run left")
    if args.server is not None and args.engine == "ray":
        raise BulkError("--server and --engine ray are alternatives; pick one")
    for flag, value in (("--workers", args.workers), ("--window", args.window), ("--timeout", args.timeout)):
        if not (math.isfinite(value) and value >= 0):   # NaN too
            raise BulkError(f"{flag}: must be a finite number >= 0, got {value:g}")
    if args.server is not None and args.timeout:
        raise BulkError("--timeout is for the local and ray engines; with --server, each service's "
                        "own deadlines apply (drop --timeout)")
    if args.server is not None and args.workers:
        raise BulkError("--workers is for the local and ray engines; with --server, each service's "
                        "own workers apply (drop --workers)")
    if args.server is not None and (given := _llm_flags_given(args)):
        raise BulkError(f"{given[0]} is for the local and ray engines; with --server, each service's own "
                        "model applies (drop the --llm-* flags)")
    if args.ray_address and args.engine != "ray":
        raise BulkError("--ray-address is for --engine ray (add it, or drop --ray-address)")
    if args.engine == "ray" and importlib.util.find_spec("ray") is None:  # before OUT is touched
        raise BulkError("--engine ray needs the optional extra: pip install 'source-tracer[ray]'")
    workers = args.workers or default_workers()
    shape = args.output_shape
    default_style = openjiuwen.MARKER_STYLE if shape == "openjiuwen" else ""
    targets = _parse_targets(args.server) if args.server is not None else []
    llm_args, llm_section = _llm_config(args)
    if llm_args is not None and not targets:
        workers = _share_model_calls(llm_args, llm_section, workers)
    tls_ca: bytes | None = None
    if args.server_tls_ca:
        try:
            with open(args.server_tls_ca, "rb") as fh:
                tls_ca = fh.read()
        except OSError as exc:
            raise BulkError(f"--server-tls-ca {args.server_tls_ca!r}: cannot read: {exc.strerror}") from None

    # (`--retry` reads IN's ids before OUT is rewritten, and its item count with them: IN is read
    # twice in all, that once and to trace it)
    in_ids, total = _input_ids(args.input, default_style) if retry is not None else (None, -1)
    out = Output(args.output, resume=args.resume, overwrite=args.overwrite, fsync=args.fsync,
                 retry=retry, in_ids=in_ids)
    if out.truncated_bytes:
        print(f"bulk: removed a torn last line ({out.truncated_bytes} bytes) from {args.output}",
              file=sys.stderr)
    if retry is not None:
        kinds = ", ".join(f"{why} {n}" for why, n in sorted(out.retried.items()))
        print(f"bulk: --retry: {sum(out.retried.values())} lines of {args.output} to trace again"
              + (f" ({kinds})" if kinds else ""), file=sys.stderr)
        if out.not_in_input:
            print(f"bulk: --retry: {sum(out.not_in_input.values())} more lines it names are kept as they "
                  f"are: their ids are not in {args.input}", file=sys.stderr)
    if total < 0:
        total = count_lines(args.input)   # less each line an earlier run answered, as it is read
    progress = Progress(total, args.progress, args.progress_every, sys.stderr)

    notes: dict[int, tuple[str, ...]] = {}  # line -> records warnings to put back in its output

    def write(n: int, line: bytes, ok: bool) -> None:
        noted = notes.pop(n, None)
        if noted and ok:
            line = with_record_notes(line, noted)
        out.write(line)
        progress.add(ok)

    def noting(items: Iterator[Item]) -> Iterator[Item]:
        for item in items:
            if item.notes:
                notes[item.line] = item.notes
            yield item

    emit: Emit = write
    dispatched: Callable[[int], None] | None = None
    if args.ordered:
        in_order = InOrder(write)
        emit, dispatched = in_order, in_order.dispatched
    try:
        items = noting(read_items(args.input, out, emit, progress, default_style, dispatched))
        if targets:
            metadata: tuple[tuple[str, str], ...] = ()
            if args.auth_token:
                metadata = (("authorization", f"Bearer {args.auth_token}"),)
            run_servers(items, emit, targets=targets, shape=shape,
                        window=args.window or 8, metadata=metadata, tls_ca=tls_ca,
                        auto_window=not args.window)
        elif args.engine == "ray":
            from server.bulk_ray import run_ray

            run_ray(items, emit, address=args.ray_address, shape=shape, workers=workers,
                    llm_args=llm_args, llm_section=llm_section, timeout_s=args.timeout)
        else:
            run_local(items, emit, workers=workers, shape=shape, llm_args=llm_args,
                      llm_section=llm_section, timeout_s=args.timeout, window=args.window)
    finally:
        progress.close()
        out.close()
    return 0


def _llm_flags_given(args: argparse.Namespace) -> list[str]:
    """The --llm-* flags (and --no-llm) given on the command line."""
    from server.llm_client import SETTINGS

    return [("--no-llm" if st.key == "enabled" else f"--llm-{st.key.replace('_', '-')}")
            for st in SETTINGS if getattr(args, f"llm_{st.key}", None) is not None]


def _llm_config(args: argparse.Namespace) -> tuple[argparse.Namespace | None, dict[str, Any] | None]:
    """The --llm-* flags and the config file's [llm] section for the workers, checked here
    once so a bad setting stops the run before any work (BulkError names it); (None, None)
    when no model is configured."""
    from server.cli import _llm_section
    from server.llm_client import build_backend

    flags = argparse.Namespace(**{k: v for k, v in vars(args).items() if k != "func"})
    try:
        section = _llm_section(args)
        backend = build_backend(flags, section)
    except Exception as exc:  # ConfigError, InvalidInputError, OSError: all name the setting
        raise BulkError(f"LLM configuration: {exc}") from None
    if backend is None:
        return None, None
    return flags, section


def _share_model_calls(flags: argparse.Namespace, section: Mapping[str, Any] | None, workers: int) -> int:
    """llm.max_concurrency caps the model calls in flight of the whole run, but each worker
    process builds its own backend: at most that many workers run, and each gets its share of the
    cap (`flags` set so). Returns the number of workers to run."""
    from server.llm_client import resolve_config

    cap = resolve_config(flags, section).settings.max_concurrency
    if not cap:
        return workers
    if workers > cap:
        print(f"bulk: {workers} workers reduced to {cap}, llm.max_concurrency: each worker makes its own "
              "model calls, and the run never has more than the cap in flight", file=sys.stderr)
        workers = cap
    flags.llm_max_concurrency = str(cap // workers)
    return workers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="source-tracer bulk")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
