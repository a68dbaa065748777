"""Verifier building blocks checked against brute force."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


def _window_reference(toks: list[str], weights: list[float], passage: list[str], width: int) -> float:
    """Brute force: the best weighted share of distinct sentence words in any `width` tokens."""
    weight_of = dict(zip(toks, weights, strict=True))
    total = sum(weight_of.values())
    best = 0.0
    for end in range(1, len(passage) + 1):
        window = set(passage[max(0, end - width):end])
        best = max(best, sum(w for t, w in weight_of.items() if t in window))
    return best / total if total else 0.0


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=8),
    st.lists(st.sampled_from("abcdefghijklmnop"), max_size=60),
    st.integers(min_value=1, max_value=20),
)
def test_window_coverage_matches_brute_force(toks: list[str], passage: list[str], width: int) -> None:
    from tracer.verify import window_coverage

    weights = [1.0 + (ord(t) % 3) for t in toks]
    positions: dict[str, list[int]] = {}
    for i, t in enumerate(passage):
        positions.setdefault(t, []).append(i)
    share, mass = window_coverage(toks, weights, positions, width)
    assert share == pytest.approx(_window_reference(toks, weights, passage, width))
    assert mass == pytest.approx(share * sum(dict(zip(toks, weights, strict=True)).values()))
