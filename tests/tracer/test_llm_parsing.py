"""Reply parsing: tolerant of wrapping, strict per item."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracer.llm.parsing import MatchReply, extract_json_object, parse_match_reply, parse_recognize_reply

S = {1, 2, 3}
P = {1, 2, 3, 4}


def _m(items: object) -> str:
    return json.dumps({"source_traced_results": items})


def test_plain_fenced_and_prose_wrapped_json_parse_the_same() -> None:
    body = _m([{"sentence": 1, "matched_source_indices": [2, 3]}])
    for text in (body, f"```json\n{body}\n```", f"Sure! Here it is:\n{body}\nHope this helps {{}}.",
                 f"```\n{body}```", f"Thinking...\n```python\nprint(1)\n```\n```json\n{body}\n```"):
        reply = parse_match_reply(text, S, P)
        assert reply is not None, text
        assert reply.matches == {1: [2, 3]}


def test_invented_sentence_ids_and_bad_items_are_dropped_not_the_reply() -> None:
    reply = parse_match_reply(_m([
        {"sentence": 1, "matched_source_indices": [1]},
        {"sentence": 9, "matched_source_indices": [1]},        # invented sentence
        {"sentence": True, "matched_source_indices": [1]},     # bool is not an id
        {"sentence": "2", "matched_source_indices": ["1"]},    # a whole number in quotes is one
        {"sentence": "2a", "matched_source_indices": [1]},     # other text is not
        {"sentence": 2.5, "matched_source_indices": [1]},
        {"sentence": 3, "matched_source_indices": "1"},        # not a list
        "garbage",
        {"sentence": 3},
    ]), S, P)
    assert reply is not None
    assert reply.matches == {1: [1], 2: [1]}
    assert reply.dropped_items == 7


def test_out_of_range_and_bool_passage_ids_are_dropped_per_id() -> None:
    ids = [0, 5, True, 4, 4, 1.0, None, 2, 2.5, " 3 ", "x"]
    reply = parse_match_reply(_m([{"sentence": 2, "matched_source_indices": ids}]), S, P)
    assert reply is not None
    assert reply.matches == {2: [4, 1, 2, 3]}
    assert reply.dropped_ids == 6


def test_a_sentence_that_names_only_invalid_ids_is_garbled_not_unsupported() -> None:
    reply = parse_match_reply(_m([{"sentence": 1, "matched_source_indices": [0, 9]},
                                  {"sentence": 2, "matched_source_indices": []},
                                  {"sentence": 3, "matched_source_indices": [True]},
                                  {"sentence": 3, "matched_source_indices": [2]}]), S, P)
    assert reply is not None and reply.garbled == {1} and reply.matches == {1: [], 2: [], 3: [2]}


def test_items_for_one_sentence_are_merged_in_order() -> None:
    reply = parse_match_reply(_m([{"sentence": 1, "matched_source_indices": [3]},
                                  {"sentence": 1, "matched_source_indices": [1, 3]}]), S, P)
    assert reply is not None and reply.matches == {1: [3, 1]}


def test_garbage_empty_and_wrong_shape_are_rejected_whole() -> None:
    for text in ("", "   ", "no json here", "{not json}", '{"other": []}', '{"source_traced_results": 5}',
                 "[1, 2, 3]"):
        assert parse_match_reply(text, S, P) is None, text


def test_recognition_reply_keeps_known_ids_only() -> None:
    reply = parse_recognize_reply(
        '```json\n{"sentences_needing_citation": [1, 3, 7, true, "2", "x"]}\n```', S)
    assert reply is not None and reply.ids == {1, 2, 3} and reply.dropped_ids == 3
    assert parse_recognize_reply("I think sentences 1 and 3.", S) is None


def test_extract_picks_the_object_with_the_key_amid_other_objects() -> None:
    text = 'first {"a": 1} then {"source_traced_results": []} end'
    assert extract_json_object(text, "source_traced_results") == {"source_traced_results": []}


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=300) | st.recursive(
    st.none() | st.booleans() | st.integers(-3, 8) | st.text(max_size=5),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(
        st.sampled_from(["sentence", "matched_source_indices", "source_traced_results", "x"]), c, max_size=3),
    max_leaves=12,
).map(json.dumps))
def test_parsing_never_raises_and_never_returns_ids_we_did_not_send(text: str) -> None:
    for truncated in (False, True):
        _check_ids(parse_match_reply(text, S, P, truncated=truncated))
        _check_ids(parse_match_reply(text[: len(text) // 2], S, P, truncated=truncated))
    rec = parse_recognize_reply(text, S)
    assert rec is None or rec.ids <= S


def _check_ids(reply: MatchReply | None) -> None:
    if reply is not None:
        assert set(reply.matches) <= S
        assert all(set(v) <= P and all(type(p) is int for p in v) for v in reply.matches.values())


def test_reasoning_drafts_are_ignored() -> None:
    draft = _m([{"sentence": 1, "matched_source_indices": [1, 2, 3, 4]}])
    final = _m([{"sentence": 1, "matched_source_indices": [2]}])
    reply = parse_match_reply(f"<think>maybe {draft}? no.</think>\n{final}", S, P)
    assert reply is not None and reply.matches == {1: [2]}


def test_a_reply_cut_off_at_the_cap_keeps_its_complete_items() -> None:
    full = _m([{"sentence": 1, "matched_source_indices": [2]}, {"sentence": 2, "matched_source_indices": []},
               {"sentence": 3, "matched_source_indices": [4, 1]}])
    cut = full[: full.index('{"sentence": 3') + 30]  # inside the third item
    assert parse_match_reply(cut, S, P) is None            # not cut at the cap: not trusted
    reply = parse_match_reply(cut, S, P, truncated=True)
    assert reply is not None and reply.cut
    assert reply.matches == {1: [2], 2: []}                # sentence 3 is lost, not guessed
    whole = parse_match_reply(full, S, P, truncated=True)  # a whole object is never "cut"
    assert whole is not None and not whole.cut and set(whole.matches) == {1, 2, 3}
    assert parse_match_reply('{"source_traced_results": [{"sente', S, P, truncated=True) is None


def test_drafts_are_dropped_in_linear_time_and_an_unclosed_one_takes_the_rest() -> None:
    from tracer.llm.parsing import without_drafts

    assert without_drafts('a<think>x</think>b<THINK>y</think>c') == "abc"
    assert without_drafts('{"k": 1} <think>draft {"k": 2}') == '{"k": 1} '
    assert extract_json_object('<think>draft {"k": 2} and more', "k") is None
    assert extract_json_object("<think>" * 40000, "k") is None          # was quadratic: 36 s
    assert extract_json_object("[" * 5000, "k") is None                 # was a RecursionError
    assert extract_json_object("{x} " * 100_000 + '{"k": 1}', "k") is None  # starts tried are capped


def test_a_reply_of_unclosed_objects_is_read_a_bounded_number_of_times(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """'{"a":[1,1,…{"a":[1,…' makes every "{" tried read to the end of the reply: the tries stop
    after a budget of characters read (200 tries of 1 MB were 2 s of CPU in the event loop)."""
    import json

    from tracer.llm import parsing

    unit = '{"a":[' + "1," * 2490
    reply = "```json\n" + (unit * 100)[:499_000] + "```\n" + (unit * 100)[:499_000]
    calls = 0
    real = json.JSONDecoder.raw_decode

    def counted(self: json.JSONDecoder, s: str, idx: int = 0) -> tuple[object, int]:
        nonlocal calls
        calls += 1
        return real(self, s, idx)

    monkeypatch.setattr(json.JSONDecoder, "raw_decode", counted)
    assert parsing.extract_json_object(reply, "source_traced_results") is None
    assert calls <= 10


def test_a_long_draft_does_not_push_the_answer_out_of_reach() -> None:
    from tracer.llm.parsing import extract_json_object

    reply = "<think>" + "x" * 1_500_000 + "</think>" + '{"source_traced_results": []}'
    assert extract_json_object(reply, "source_traced_results") == {"source_traced_results": []}
