"""Small generated bulk inputs shared by the bulk tests (never the benchmark)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_CITIES = ["Arden", "Belmar", "Corvin", "Dunmore", "Elstow", "Fenwick", "Garrow", "Halden"]


def case(i: int) -> dict[str, Any]:
    """One request: three factual sentences, two records supporting two of them."""
    city = f"{_CITIES[i % len(_CITIES)]}{i}"
    s1 = f"The town of {city} was founded in {1500 + i} by river traders."
    s2 = f"Its population reached {10_000 + 37 * i} residents in the last census."
    s3 = "Many visitors find the old harbour charming."
    report = f"# {city}\n\n{s1} {s2}\n\n{s3}\n"
    records = [
        {"url": f"https://history.example/{city.lower()}", "title": f"History of {city}",
         "content": f"Archive notes. {s1} Trade grew quickly along the river."},
        {"url": f"https://census.example/{city.lower()}?utm_source=x", "title": f"{city} census",
         "content": f"Census office. {s2} The next census is planned."},
    ]
    return {"id": f"case-{i:04d}", "report": report, "records": records}


def write_cases(path: Path, n: int, extra: list[str] | None = None, every: int = 0) -> list[str]:
    """Write n cases as JSONL (with `extra` raw lines spliced in every `every` lines); return ids."""
    lines: list[str] = []
    ids: list[str] = []
    extra = list(extra or [])
    for i in range(n):
        c = case(i)
        ids.append(c["id"])
        lines.append(json.dumps(c, ensure_ascii=False))
        if extra and every and (i + 1) % every == 0:
            lines.append(extra.pop(0))
    lines.extend(extra)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ids


def read_out(path: Path) -> list[dict[str, Any]]:
    raw = path.read_bytes()
    assert raw == b"" or raw.endswith(b"\n"), "torn last line"
    return [json.loads(line) for line in raw.decode("utf-8").splitlines()]


def comparable(line: dict[str, Any]) -> dict[str, Any]:
    """An output line without its timings (the only part that differs between runs)."""
    out = dict(line)
    stats = dict(out.pop("stats", {}) or {})
    stats.pop("stage_ms", None)
    stats.pop("total_ms", None)
    out["stats"] = stats
    return out


def poison_work(line: int, request: bytes, shape: str) -> bytes:
    """A bulk worker function (runs in a pool process) that dies like a native crash on the item
    whose id ends in "-poison", and otherwise traces as the real worker does."""
    import os

    from server.bulk import trace_item
    from server.pb.source_tracer.v1 import tracer_pb2 as pb

    if pb.TraceRequest.FromString(request).id.endswith("-poison"):
        os._exit(139)
    return trace_item(line, request, shape)


def always_dies(line: int, request: bytes, shape: str) -> bytes:
    """A bulk worker function whose process dies on every request (like a broken start-up)."""
    import os

    os._exit(137)


def gc_work(line: int, request: bytes, shape: str) -> bytes:
    """A bulk worker function that answers with its process's collector settings."""
    import gc
    import json

    return json.dumps({"line": line, "gen0": gc.get_threshold()[0],
                       "frozen": gc.get_freeze_count()}).encode()
