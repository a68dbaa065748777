"""Module-level trace functions for servers whose traces run in worker processes (they must
pickle by reference). The first line of the report scripts what happens:

    #!pid                    trace normally; the response's last warning is "pid=<worker pid>"
    #!barrier DIR N          as #!pid, but first wait until N calls have reached the barrier
    #!wait-cancel DIR        wait for the call's cancel flag, write DIR/cancelled, stop
    #!wait-cancel-slow DIR   the same, but take 2 s to stop after DIR/cancelled (then DIR/stopped)
    #!crash                  kill the worker process
    #!crash-once DIR         kill the worker process unless DIR/crashed exists (then create it)
    #!sleep S                as #!pid, after sleeping S seconds
    #!bug                    raise an unexpected exception
    #!gc                     as #!pid, then "gc=<gen0 threshold>,<objects frozen>" as the last warning
"""

from __future__ import annotations

import gc
import os
import signal
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from tracer.errors import CancelledError
from tracer.models import TraceResult
from tracer.pipeline import trace


def scripted_trace(report: str, records: Any, options: Any, **kw: Any) -> TraceResult:
    first, _, _rest = report.partition("\n")
    words = first.split()
    what = words[0] if words else ""
    if what == "#!barrier":
        folder, n = Path(words[1]), int(words[2])
        (folder / f"{os.getpid()}-{threading.get_ident()}").touch()  # one file per trace
        end = time.monotonic() + 20
        while len(list(folder.iterdir())) < n and time.monotonic() < end:
            time.sleep(0.01)
    elif what in ("#!wait-cancel", "#!wait-cancel-slow"):
        cancel = kw.get("cancel")
        end = time.monotonic() + 20
        while cancel is not None and not cancel.is_set() and time.monotonic() < end:
            time.sleep(0.01)
        if cancel is not None and cancel.is_set():
            (Path(words[1]) / "cancelled").touch()
            if what == "#!wait-cancel-slow":
                time.sleep(2.0)
                (Path(words[1]) / "stopped").touch()
            raise CancelledError("cancelled while waiting")
    elif what == "#!crash":
        os.kill(os.getpid(), signal.SIGKILL)
    elif what == "#!crash-once":
        flag = Path(words[1]) / "crashed"
        if not flag.exists():
            flag.touch()
            os.kill(os.getpid(), signal.SIGKILL)
    elif what == "#!sleep":
        time.sleep(float(words[1]))
    elif what == "#!bug":
        raise KeyError("simulated bug")
    result = trace(report, records, options, **kw)
    warnings = (*result.warnings, f"pid={os.getpid()}")
    if what == "#!gc":
        warnings = (*warnings, f"gc={gc.get_threshold()[0]},{gc.get_freeze_count()}")
    return replace(result, warnings=warnings)
