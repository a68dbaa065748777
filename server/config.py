"""Service configuration: CLI flags > environment (SOURCE_TRACER_*) > TOML file > defaults.

The TOML file (``--config PATH`` or ``SOURCE_TRACER_CONFIG``) has the sections
``[server]``, ``[limits]``, ``[auth]``, ``[tls]`` and ``[llm]``; ``[llm]`` is handed
unchanged to ``server.llm_client.build_backend``. docs/operations.md lists every key.
"""

from __future__ import annotations

import argparse
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

MiB = 1024 * 1024


class ConfigError(ValueError):
    """The configuration is unusable (bad value, unreadable file); message names the key."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-request size limits; a violation is answered RESOURCE_EXHAUSTED naming limit and value."""

    request_bytes: int = 64 * MiB        # serialized TraceRequest size
    report_chars: int = 1_000_000        # code points in TraceRequest.report
    records: int = 5_000                 # number of records in one request
    record_chars: int = 2_000_000        # code points in one record's content


@dataclass(frozen=True, slots=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 50051
    max_message_bytes: int = 64 * MiB    # gRPC max send/receive message length
    limits: Limits = field(default_factory=Limits)
    max_in_flight: int = 64              # concurrent calls; beyond -> RESOURCE_EXHAUSTED at once
    workers: int = 0                     # traces run at once; 0 = number of CPUs
    worker_mode: str = "auto"            # process | thread | auto (one trace in a thread, the rest in
    #                                      processes; with an LLM, model-calling traces in threads)
    stream_concurrency: int = 0          # items of one TraceStream processed at once; 0 = max(4, workers),
    #                                      with an LLM backend max(4, workers, llm max_concurrency)
    grace_s: float = 30.0                # drain period on SIGTERM/SIGINT
    auth_token: str = ""                 # "" = no auth
    tls_cert: str = ""
    tls_key: str = ""
    tls_ca: str = ""                     # set -> clients must present a cert signed by it (mTLS)
    metrics_port: int = 0                # 0 = no metrics endpoint
    metrics_host: str = ""               # "" = same as host
    log_level: str = "INFO"
    sensitive: bool = True               # never log report or record text
    llm: Mapping[str, Any] = field(default_factory=dict)  # [llm] section for build_backend

    def validated(self) -> ServerConfig:
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"server.port: must be 0..65535, got {self.port}")
        if self.max_in_flight < 1:
            raise ConfigError(f"server.max_in_flight: must be >= 1, got {self.max_in_flight}")
        if self.workers < 0:
            raise ConfigError(f"server.workers: must be >= 0 (0 = number of CPUs), got {self.workers}")
        if self.worker_mode not in ("auto", "process", "thread"):
            raise ConfigError(
                f"server.worker_mode: must be auto, process or thread, got {self.worker_mode!r}")
        if self.stream_concurrency < 0:
            raise ConfigError("server.stream_concurrency: must be >= 0 (0 = max(4, workers)), "
                              f"got {self.stream_concurrency}")
        if not (0 <= self.grace_s <= 86_400):  # NaN fails too
            raise ConfigError(f"server.grace: must be 0..86400 seconds, got {self.grace_s}")
        if not 0 <= self.metrics_port <= 65535:
            raise ConfigError(f"server.metrics_port: must be 0..65535 (0 = none), got {self.metrics_port}")
        if self.max_message_bytes < 1024:
            raise ConfigError(f"server.max_message_bytes: must be >= 1024, got {self.max_message_bytes}")
        for f in fields(Limits):
            if getattr(self.limits, f.name) < 1:
                raise ConfigError(f"limits.{f.name}: must be >= 1, got {getattr(self.limits, f.name)}")
        if bool(self.tls_cert) != bool(self.tls_key):
            raise ConfigError("tls: cert and key must be given together")
        if self.tls_ca and not self.tls_cert:
            raise ConfigError("tls.ca: mTLS needs tls.cert and tls.key too")
        if self.log_level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR"):
            raise ConfigError(f"server.log_level: must be DEBUG/INFO/WARNING/ERROR, got {self.log_level!r}")
        return self

    @property
    def tls(self) -> bool:
        return bool(self.tls_cert)


# key in file section / env suffix -> (attribute, type). Limits keys live under [limits].
_SERVER_KEYS: dict[str, tuple[str, type]] = {
    "host": ("host", str),
    "port": ("port", int),
    "max_message_bytes": ("max_message_bytes", int),
    "max_in_flight": ("max_in_flight", int),
    "workers": ("workers", int),
    "worker_mode": ("worker_mode", str),
    "stream_concurrency": ("stream_concurrency", int),
    "grace": ("grace_s", float),
    "metrics_port": ("metrics_port", int),
    "metrics_host": ("metrics_host", str),
    "log_level": ("log_level", str),
    "sensitive": ("sensitive", bool),
}
_LIMIT_KEYS: dict[str, type] = {f.name: int for f in fields(Limits)}
_TLS_KEYS = {"cert": "tls_cert", "key": "tls_key", "ca": "tls_ca"}


def _coerce(name: str, value: Any, typ: type) -> Any:
    try:
        if typ is bool:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        if typ is str and not isinstance(value, str):
            raise ValueError(value)      # "host = 5" in a file: no host name
        if typ is int and isinstance(value, bool):
            raise ValueError(value)
        if typ is int and isinstance(value, float):
            if not value.is_integer():
                raise ValueError(value)  # "workers = 2.5" is no count of workers
            return int(value)
        return typ(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name}: expected {typ.__name__}, got {value!r}") from None


def _read_token_file(path: str) -> str:
    try:
        token = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"auth token file {path!r}: {exc}") from None
    if not token:
        raise ConfigError(f"auth token file {path!r}: is empty")
    return token


def load_file(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"config file {path!r}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path!r}: invalid TOML: {exc}") from None


def _env_name(key: str) -> str:
    """The environment variable of a flat key ("workers" -> SOURCE_TRACER_WORKERS,
    "limits.records" -> SOURCE_TRACER_LIMIT_RECORDS)."""
    if key.startswith("limits."):
        return "SOURCE_TRACER_LIMIT_" + key.split(".", 1)[1].upper()
    return "SOURCE_TRACER_" + key.replace(".", "_").upper()


def _apply(cfg: ServerConfig, values: Mapping[str, Any], origin: str, section: str = "") -> ServerConfig:
    """Apply a flat mapping {server key | 'limits.x' | 'tls.x' | 'auth.token' ...: value};
    `section` names a server key's table in messages ("server." for a config file); an `origin`
    of "env " names the environment variable instead."""
    changes: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    for key, value in values.items():
        if value is None:
            continue
        label = _env_name(key) if origin == "env " else \
            f"{origin}{section if key in _SERVER_KEYS else ''}{key}"
        if key in _SERVER_KEYS:
            attr, typ = _SERVER_KEYS[key]
            changes[attr] = _coerce(label, value, typ)
        elif key.startswith("limits."):
            name = key.split(".", 1)[1]
            if name not in _LIMIT_KEYS:
                raise ConfigError(f"{label}: unknown limit (known: {', '.join(_LIMIT_KEYS)})")
            limits[name] = _coerce(label, value, int)
        elif key.startswith("tls."):
            name = key.split(".", 1)[1]
            if name not in _TLS_KEYS:
                raise ConfigError(f"{origin}{key}: unknown TLS key (known: cert, key, ca)")
            changes[_TLS_KEYS[name]] = _coerce(label, value, str)
        elif key in ("auth.token", "auth.token_file"):
            given = _coerce(label, value, str)
            if not given.strip():        # a secret templated empty would open the service unannounced
                raise ConfigError(f"{label}: is empty; leave it out to serve without auth")
            changes["auth_token"] = given if key == "auth.token" else _read_token_file(given)
        elif key.startswith("auth."):
            raise ConfigError(f"{origin}{key}: unknown auth key (known: token, token_file)")
        else:
            raise ConfigError(f"{origin}{section}{key}: unknown setting")
    if limits:
        changes["limits"] = replace(cfg.limits, **limits)
    return replace(cfg, **changes)


def _flatten_file(data: Mapping[str, Any], path: str) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for section, body in data.items():
        if section == "llm":
            continue
        if not isinstance(body, Mapping):
            if section not in ("server", "limits", "tls", "auth"):
                raise ConfigError(f"config file {path!r}: {section} is a key outside any section; put it "
                                  "under [server], [limits], [tls], [auth] or [llm]")
            raise ConfigError(f"config file {path!r}: [{section}] must be a table")
        if section not in ("server", "limits", "tls", "auth"):  # even an empty one: a typo
            raise ConfigError(f"config file {path!r}: unknown section [{section}]")
        for key, value in body.items():
            if section == "server":
                flat[key] = value
            elif section in ("limits", "tls", "auth"):
                flat[f"{section}.{key}"] = value
            else:
                raise ConfigError(f"config file {path!r}: unknown section [{section}]")
    return flat


def _from_env(env: Mapping[str, str]) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key in _SERVER_KEYS:
        name = f"SOURCE_TRACER_{key.upper()}"
        if name in env:
            flat[key] = env[name]
    for key in _LIMIT_KEYS:
        name = f"SOURCE_TRACER_LIMIT_{key.upper()}"
        if name in env:
            flat[f"limits.{key}"] = env[name]
    for key in _TLS_KEYS:
        name = f"SOURCE_TRACER_TLS_{key.upper()}"
        if name in env:
            flat[f"tls.{key}"] = env[name]
    if "SOURCE_TRACER_AUTH_TOKEN_FILE" in env:   # set empty, it is refused: auth was meant
        flat["auth.token_file"] = env["SOURCE_TRACER_AUTH_TOKEN_FILE"]
    if "SOURCE_TRACER_AUTH_TOKEN" in env:
        flat["auth.token"] = env["SOURCE_TRACER_AUTH_TOKEN"]
    return flat


# the server settings `serve` takes as flags of their own name (--max-in-flight, --grace, ...)
_FLAG_KEYS = frozenset({"host", "port", "metrics_port", "max_in_flight", "log_level", "max_message_bytes",
                        "workers", "worker_mode", "grace"})


def _from_args(args: argparse.Namespace) -> dict[str, Any]:
    flat: dict[str, Any] = {}

    def get(name: str) -> Any:
        return getattr(args, name, None)

    for key in _FLAG_KEYS - {"grace"}:
        flat[key] = get(key)
    flat["grace"] = get("grace")
    if get("log_payloads"):
        flat["sensitive"] = False
    flat["tls.cert"], flat["tls.key"], flat["tls.ca"] = get("tls_cert"), get("tls_key"), get("tls_ca")
    if get("auth_token_file"):
        flat["auth.token_file"] = get("auth_token_file")
    return flat


def load_config(
    args: argparse.Namespace | None = None, env: Mapping[str, str] | None = None
) -> ServerConfig:
    """Build the effective configuration. Raises ConfigError naming the bad key."""
    env = os.environ if env is None else env
    path = (getattr(args, "config", None) if args is not None else None) or env.get("SOURCE_TRACER_CONFIG")
    cfg = ServerConfig()
    llm: dict[str, Any] = {}
    if path:
        data = load_file(path)
        llm_section = data.get("llm", {})
        if not isinstance(llm_section, Mapping):
            raise ConfigError(f"config file {path!r}: [llm] must be a table")
        llm = dict(llm_section)
        cfg = _apply(cfg, _flatten_file(data, path), f"{path}: ", section="server.")
    cfg = _apply(cfg, _from_env(env), "env ")
    if args is not None:
        cfg = _apply(cfg, _from_args(args), "--")
    try:
        return replace(cfg, llm=llm).validated()
    except ConfigError as exc:  # a value out of range, from whichever source set it: name them all
        m = re.match(r"(server|limits)\.(\w+): ", str(exc))
        if m is None:
            raise
        key = m.group(2) if m.group(1) == "server" else f"limits.{m.group(2)}"
        flag = f"--{m.group(2).replace('_', '-')}, " if key in _FLAG_KEYS else ""
        raise ConfigError(f"{exc} (set by {flag}{_env_name(key)} or [{m.group(1)}] {m.group(2)})") from None


def add_serve_arguments(p: argparse.ArgumentParser) -> None:
    """Flags of `source-tracer serve`; every one overrides env and file."""
    p.add_argument("--config", metavar="PATH", help="TOML config file (or SOURCE_TRACER_CONFIG)")
    p.add_argument("--host", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default 50051; 0 = pick a free one)")
    p.add_argument("--metrics-port", type=int, help="serve Prometheus metrics on this port")
    p.add_argument("--auth-token-file", metavar="PATH",
                   help="require 'authorization: Bearer <token>' (or SOURCE_TRACER_AUTH_TOKEN)")
    p.add_argument("--tls-cert", metavar="PATH", help="server certificate (PEM)")
    p.add_argument("--tls-key", metavar="PATH", help="server private key (PEM)")
    p.add_argument("--tls-ca", metavar="PATH", help="CA bundle; clients must present a cert it signed (mTLS)")
    p.add_argument("--max-in-flight", type=int,
                   help="concurrent calls before RESOURCE_EXHAUSTED (default 64)")
    p.add_argument("--max-message-bytes", type=int, help="gRPC max message size (default 64 MiB)")
    p.add_argument("--workers", type=int, help="traces run at once (default: number of CPUs)")
    p.add_argument("--worker-mode", choices=("auto", "process", "thread"),
                   help="run traces in worker processes (one core each) or threads (one core in all); "
                        "auto (default) = the first trace at a time in a thread, the others in "
                        "processes; traces that call an LLM always run in threads")
    p.add_argument("--grace", type=float, help="seconds in-flight calls get on SIGTERM (default 30)")
    p.add_argument("--log-level", help="DEBUG, INFO, WARNING or ERROR (default INFO)")
    p.add_argument("--log-payloads", action="store_true",
                   help="turn off sensitive mode: log report text (never use with real data)")
