"""`source-tracer` command line: `trace` a report locally, `serve` the gRPC service.

Extension points (one-line edits, modules imported lazily so a missing one never breaks
the CLI):
- SUBCOMMANDS: `(name, "module:function")`; the function gets the argparse subparsers
  object and registers its subcommand (setting `func=` to a callable(args) -> exit code).
- TRACE_EXTENSIONS: modules that extend `trace`; each may define
  `add_trace_arguments(parser)`, `FORMATS: dict[str, Callable[[TraceResult, Namespace], str]]`
  (extra `--format` values) and `after_trace(result, args)` (e.g. writing side files).

Exit codes: 0 ok, 1 unexpected failure, 2 unreadable or invalid input (message names the
file or field and the problem; never a traceback).
"""

from __future__ import annotations

import argparse
import errno
import functools
import importlib
import logging
import math
import os
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

SUBCOMMANDS: list[tuple[str, str]] = [
    ("trace", "server.cli:register_trace"),
    ("serve", "server.cli:register_serve"),
    ("bulk", "server.bulk:register"),
    ("render", "server.review_cli:register"),
]

TRACE_EXTENSIONS: list[str] = ["server.review_cli"]  # --format html, --refs-out/--refs-format

EXIT_OK, EXIT_FAILURE, EXIT_INPUT = 0, 1, 2


class InputError(Exception):
    """Unreadable or invalid CLI input; the message names the file and the problem."""


def _load(spec: str) -> Any | None:
    """Import "module:attr"; None when that module does not exist (yet)."""
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            return None
        raise
    return getattr(module, attr) if attr else module


def _trace_extensions() -> list[ModuleType]:
    return [m for m in (_load(name) for name in TRACE_EXTENSIONS) if m is not None]


# ---- input -----------------------------------------------------------------------------------


def read_text(path: str, what: str, keep_bom: bool = False) -> str:
    """Read a UTF-8 file (or stdin for "-"); InputError names the file and the problem. A
    leading byte-order mark is dropped unless `keep_bom` (a report keeps it: the output is the
    input's bytes plus markers, and the tracer reads past it)."""
    label = "stdin" if path == "-" else repr(path)
    try:
        data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()  # noqa: SIM115
    except OSError as exc:
        raise InputError(f"{what} {label}: cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{what} {label}: invalid UTF-8 at byte {exc.start}") from None
    return text if keep_bom else text.removeprefix("\ufeff")


def parse_records(text: str, label: str) -> Any:
    """Records file text (JSON list, {source_type: [...]}, or JSONL) -> raw records."""
    from tracer.errors import InvalidInputError
    from tracer.records import parse_records_text

    try:
        return parse_records_text(text, f"records {label}")
    except InvalidInputError as exc:
        raise InputError(str(exc)) from None
    except (ValueError, RecursionError) as exc:
        raise InputError(f"records {label}: invalid JSON/JSONL: {exc}") from None


# ---- trace -----------------------------------------------------------------------------------


def register_trace(subparsers: Any) -> None:
    from server import llm_client

    p = subparsers.add_parser("trace", help="re-cite a markdown report against its search records")
    p.add_argument("report", metavar="REPORT", help="markdown report file, or - for stdin")
    p.add_argument("records", metavar="RECORDS", help="records: JSON list, {source_type: [...]} or JSONL")
    p.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")
    formats = ["markdown", "json"]
    for ext in _trace_extensions():
        formats.extend(getattr(ext, "FORMATS", {}))
    p.add_argument("--format", choices=formats, default="markdown",
                   help="markdown: the traced report; json: the TraceResponse (protobuf JSON mapping)")
    p.add_argument("--mode", choices=["auto", "deterministic", "llm"], default="auto")
    p.add_argument("--style", default="numeric", help="citation marker style (default numeric: [1])")
    p.add_argument("--max-sources", type=int, default=3, help="sources per sentence (default 3)")
    p.add_argument("--min-score", type=float, default=None, help="support score a pair needs (0..1)")
    p.add_argument("--existing", choices=["keep", "replace"], default="keep",
                   help="citations already in the report: keep (renumber) or replace (re-trace)")
    p.add_argument("--placement", choices=["before", "after"], default="before",
                   help="marker before or after the sentence's final punctuation")
    p.add_argument("--lang", choices=["en", "zh"], default="", help="language (default: detect)")
    p.add_argument("--references-heading", default="", help="heading of the references section")
    p.add_argument("--reference-format", default="", help="references list format (default markdown)")
    p.add_argument("--show-unsupported", action="store_true",
                   help="also list on stderr the sentences no record supports, with the closest record")
    p.add_argument("--strict-figures", action="store_true",
                   help="every figure must agree with its source: in English too, a figure the record "
                        "lacks where its quote states another is a contradiction (docs/configuration.md)")
    p.add_argument("--config", metavar="PATH", help="TOML config file; its [llm] section is used")
    p.add_argument("--timeout", type=float, default=0.0, metavar="SEC",
                   help="time limit in seconds (default none); with a model, the model gets it less a "
                        "reserve and the rest is traced without it (docs/llm.md)")
    llm_client.add_llm_arguments(p)
    for ext in _trace_extensions():
        add = getattr(ext, "add_trace_arguments", None)
        if add is not None:
            add(p)
    p.set_defaults(func=run_trace)


def _options(args: argparse.Namespace) -> Any:
    from tracer.options import ExistingPolicy, Mode, Placement, TraceOptions

    defaults = TraceOptions()
    return TraceOptions(
        mode=Mode(args.mode),
        style=args.style,
        max_sources=args.max_sources,
        min_score=args.min_score,
        existing=ExistingPolicy(args.existing),
        references_heading=args.references_heading,
        language=args.lang,
        placement=Placement(args.placement),
        reference_format=args.reference_format or defaults.reference_format,
        strict_figures=args.strict_figures,
    ).validated()


def _llm_section(args: argparse.Namespace) -> dict[str, Any]:
    import os

    from server.config import load_file

    path = args.config or os.environ.get("SOURCE_TRACER_CONFIG")
    if not path:
        return {}
    section = load_file(path).get("llm", {})
    return dict(section) if isinstance(section, dict) else {}


def run_trace(args: argparse.Namespace) -> int:
    from server import llm_client
    from server.config import ConfigError
    from server.convert import response_to_json, result_to_pb
    from server.workers import TimeLimit, deadline_reserve_of
    from tracer.errors import CancelledError, InvalidInputError
    from tracer.pipeline import trace

    label = "stdin" if args.records == "-" else repr(args.records)
    try:
        if not (math.isfinite(args.timeout) and args.timeout >= 0):  # NaN too
            raise InputError(f"--timeout: must be >= 0 seconds, got {args.timeout:g}")
        if args.report == "-" and args.records == "-":
            raise InputError("REPORT and RECORDS cannot both be stdin")
        report = read_text(args.report, "report", keep_bom=True)
        raw_records = parse_records(read_text(args.records, "records"), label)
        options = _options(args)
        llm = llm_client.build_backend(args, _llm_section(args))
        # The clock starts when the trace does (reading and parsing the input are not counted).
        deadline = TimeLimit(args.timeout, deadline_reserve_of(llm)) if args.timeout > 0 else None
        result = trace(report, raw_records, options, llm=llm, cancel=deadline,
                       llm_deadline=None if deadline is None else deadline.llm_deadline)
    except CancelledError:
        return _fail(f"timed out after {args.timeout:g} s (--timeout)", EXIT_FAILURE)
    except InputError as exc:
        return _fail(str(exc), EXIT_INPUT)
    except InvalidInputError as exc:
        if exc.field == "records" or exc.field.startswith(("records.", "records[")):
            # the records' shape is read when the trace starts: name the file it came from
            return _fail(f"records {label}{exc.field[len('records'):]}: {exc.reason}", EXIT_INPUT)
        return _fail(str(exc), EXIT_INPUT)
    except ConfigError as exc:
        return _fail(str(exc), EXIT_INPUT)

    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.show_unsupported:
        for u in result.unsupported:
            near = u.closest
            hint = (f"; closest: record {near.record_index} {near.title!r}, score {near.score:.2f}: "
                    f"{near.evidence[:160]!r}") if near else ""
            print(f"unsupported: chars {u.start}-{u.end} {u.sentence[:160]!r} ({u.reason}{hint})",
                  file=sys.stderr)
    if args.format == "markdown":
        out = result.report
    elif args.format == "json":
        out = response_to_json(result_to_pb(result)) + "\n"
    else:
        formatter: Callable[[Any, argparse.Namespace], str] | None = None
        for ext in _trace_extensions():
            formatter = getattr(ext, "FORMATS", {}).get(args.format, formatter)
        assert formatter is not None
        out = formatter(result, args)
    try:
        # the side files first (--refs-out): one that cannot be written fails the command before
        # the report is written or printed, so a failed run leaves no output that looks whole (and
        # an -o that cannot be written fails before them)
        if args.output:
            _check_writable(args.output)
        for ext in _trace_extensions():
            after = getattr(ext, "after_trace", None)
            if after is not None:
                after(result, args)
        if args.output:
            try:
                with open(args.output, "w", encoding="utf-8", newline="") as fh:
                    fh.write(out)
            except OSError as exc:  # a full disk fails the write or close with no file name
                if exc.filename is None:
                    exc.filename = args.output
                raise
        else:
            sys.stdout.write(out)
            sys.stdout.flush()
    except OSError as exc:
        target = exc.filename if exc.filename is not None else "stdout"
        return _fail(f"output {str(target)!r}: cannot write: {exc.strerror or exc}", EXIT_INPUT)
    return EXIT_OK


def _check_writable(path: str) -> None:
    """Raise the OSError opening `path` for writing would, without creating or truncating it
    (a missing folder, a folder, no permission)."""
    folder = os.path.dirname(path) or "."
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    if not os.access(path if os.path.exists(path) else folder, os.W_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)


# ---- serve -----------------------------------------------------------------------------------


def register_serve(subparsers: Any) -> None:
    from server import llm_client
    from server.config import add_serve_arguments

    p = subparsers.add_parser("serve", help="run the gRPC service (health + reflection included)")
    add_serve_arguments(p)
    llm_client.add_llm_arguments(p)
    p.set_defaults(func=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    import asyncio

    from server import llm_client
    from server.app import StartupError, serve
    from server.config import ConfigError, load_config
    from server.logs import setup_logging

    try:
        config = load_config(args)
        setup_logging(config.log_level)
        llm_config = llm_client.resolve_config(args, config.llm)
        llm = llm_client.backend_from_config(llm_config) if llm_config.enabled else None
    except ConfigError as exc:
        return _fail(str(exc), EXIT_INPUT)
    if (note := llm_config.unused_note()) is not None:
        from server.logs import log

        log("llm not configured", logging.WARNING, error=note)
    # asked once after start-up: a model that does not answer is logged, not fatal
    llm_check = functools.partial(llm_client.check_endpoint, llm_config) if llm is not None else None
    try:
        return asyncio.run(serve(config, llm, llm_check))
    except ConfigError as exc:
        return _fail(str(exc), EXIT_INPUT)
    except StartupError as exc:
        return _fail(str(exc), EXIT_FAILURE)


# ---- entry point -----------------------------------------------------------------------------


def _fail(message: str, code: int) -> int:
    print(f"source-tracer: error: {message}", file=sys.stderr)
    return code


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="source-tracer",
        description="Insert verified citations into a markdown report and rebuild its references.",
    )
    from tracer import __version__

    parser.add_argument("--version", action="version", version=f"source-tracer {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for _name, spec in SUBCOMMANDS:
        register = _load(spec)
        if register is not None:
            register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.func is not run_serve:  # serve sets up its JSON logs itself
        from server.logs import setup_cli_logging

        setup_cli_logging()
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
