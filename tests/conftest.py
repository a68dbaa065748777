"""Hypothesis settings for the whole suite.

The suite runs the same examples on every run (`gate`: derandomized, no example database), so a
red run is the code's, not the draw's, and replays exactly. To hunt for new counterexamples, draw
fresh ones: `HYPOTHESIS_PROFILE=discovery .venv/bin/python -m pytest tests/tracer`; keep each one
found as an `@example` of its test, beside the fix.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("gate", derandomize=True, database=None, print_blob=True)
settings.register_profile("discovery", derandomize=False, database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "gate"))
