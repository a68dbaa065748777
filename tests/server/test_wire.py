"""server/wire.py: which string field of refused request bytes is not UTF-8 — on hand-built bytes,
and end to end, where the status message names it (and a TraceStream item keeps its id)."""

from __future__ import annotations

import random

import grpc
import pytest
from google.protobuf import struct_pb2
from google.protobuf.message import DecodeError

from server import wire
from server.pb.source_tracer.v1 import tracer_pb2 as pb
from server.wire import BadUtf8, first_bad_utf8, last_string
from tests.server.conftest import EN_RECORDS, EN_REPORT, records_pb

DESC = pb.TraceRequest.DESCRIPTOR
BAD = b"\xff\xfe\xfd\xfc"  # as long as the placeholder it replaces
PLACEHOLDER = "XXXX"


def _corrupt(request: pb.TraceRequest, bad: bytes = BAD) -> bytes:
    """`request` serialized, its one placeholder replaced by bytes that are not UTF-8."""
    data = request.SerializeToString()
    assert data.count(PLACEHOLDER.encode()) == 1
    out = data.replace(PLACEHOLDER.encode(), bad)
    with pytest.raises(DecodeError, match="UTF-8"):
        pb.TraceRequest.FromString(out)  # protobuf refuses it, without naming the field
    return out


def _request(**changes: object) -> pb.TraceRequest:
    records = [pb.Record(url=f"https://e.org/{i}", title=f"t{i}", content=f"content {i}",
                         metadata={"lang": "en"}) for i in range(5)]
    request = pb.TraceRequest(report="A report. With two sentences.", records=records, id="item-1",
                              options=pb.TraceOptions(mode=pb.MODE_DETERMINISTIC, max_sources=2))
    for name, value in changes.items():
        if isinstance(value, pb.TraceOptions):
            request.options.CopyFrom(value)
        else:
            setattr(request, name, value)
    return request


def test_report() -> None:
    data = _corrupt(_request(report="Fine start. XXXX"))
    assert first_bad_utf8(data, DESC) == BadUtf8("report", 12)


def test_nested_record_content() -> None:
    request = _request()
    request.records[3].content = "abXXXX"
    assert first_bad_utf8(_corrupt(request), DESC) == BadUtf8("records[3].content", 2)


def test_a_lone_surrogate_is_not_utf8_either() -> None:
    request = _request()
    request.records[1].title = "aXXXX"
    # U+D800 encoded as UTF-8 would be: CESU-style, refused by protobuf and Python alike
    assert first_bad_utf8(_corrupt(request, b"\xed\xa0\x80z"), DESC) == BadUtf8("records[1].title", 1)


def test_metadata_value_names_its_key() -> None:
    request = _request()
    request.records[0].metadata["k"] = "vXXXX"
    assert first_bad_utf8(_corrupt(request), DESC) == BadUtf8('records[0].metadata["k"]', 1)


def test_metadata_key_is_said_to_be_the_key() -> None:
    request = _request()
    request.records[2].metadata['a"XXXX'] = "value"
    found = first_bad_utf8(_corrupt(request), DESC)
    assert found == BadUtf8(r'records[2].metadata key "a\"\xff\xfe\xfd\xfc"', 2)


def test_metadata_value_before_its_key_on_the_wire() -> None:
    # other encoders may write the value first: the path still names the entry's key
    entry = b"\x12\x02v\xff" + b"\x0a\x03key"
    record = b"\x3a" + bytes([len(entry)]) + entry
    data = b"\x12" + bytes([len(record)]) + record
    with pytest.raises(DecodeError):
        pb.TraceRequest.FromString(data)
    assert first_bad_utf8(data, DESC) == BadUtf8('records[0].metadata["key"]', 1)


def test_long_key_is_cut_in_the_path() -> None:
    request = _request()
    request.records[0].metadata["k" * 500] = "XXXX"
    found = first_bad_utf8(_corrupt(request), DESC)
    assert found is not None and found.path == 'records[0].metadata["' + "k" * 40 + '…"]'


def test_options_field() -> None:
    data = _corrupt(_request(options=pb.TraceOptions(references_heading="Sources XXXX", language="en")))
    assert first_bad_utf8(data, DESC) == BadUtf8("options.references_heading", 8)


def test_id_field_and_last_string() -> None:
    data = _corrupt(_request(id="XXXX"))
    assert first_bad_utf8(data, DESC) == BadUtf8("id", 0)
    assert last_string(data, DESC, "id") is None  # not readable: no id to echo
    request = _request(id="item-9")
    request.records[4].content = "XXXX"
    assert last_string(_corrupt(request), DESC, "id") == "item-9"
    assert last_string(b"\x22\x01a\x22\x01b", DESC, "id") == "b"  # protobuf keeps the last
    assert last_string(b"", DESC, "id") == ""
    assert last_string(b"\x22\x05ab", DESC, "id") is None  # truncated


def test_first_in_wire_order() -> None:
    request = _request(report="XXXX")
    data = _corrupt(request)
    request.records[0].content = "YYYY"
    data = data.replace(b"YYYY", b"\xc3\xc3\xc3\xc3")
    assert first_bad_utf8(data, DESC) == BadUtf8("report", 0)


def test_valid_requests_have_nothing_bad() -> None:
    request = _request(report="Unicode: héllo 中文 🙂", id="é")
    request.records[0].metadata["ключ"] = "значение"
    assert first_bad_utf8(request.SerializeToString(), DESC) is None
    assert first_bad_utf8(b"", DESC) is None


@pytest.mark.parametrize("data", [
    b"\x0a\x05abc",                          # report longer than the bytes left
    b"\x12\x03\x1a\x05ab",                   # a record's content longer than the record
    b"\x0a",                                  # a tag and nothing else
    b"\x08" + b"\xff" * 11,                   # a varint over 10 bytes
    b"\x00\x01",                              # field number 0
    b"\x0f\x00",                              # wire type 7
    b"\x0c",                                  # an end-group with no group
    b"\x0b\x0a\x01a",                         # a group never ended
    b"\x0b" * 10_000,                         # groups nested past the depth bound
    b"\x12\x02" + b"\x12\x00" * 3,            # records that overrun their parent
    bytes(range(256)),
])
def test_malformed_bytes_give_none(data: bytes) -> None:
    assert first_bad_utf8(data, DESC) is None
    last_string(data, DESC, "id")  # no exception either


def test_groups_are_skipped_not_looked_into() -> None:
    # a group in an unknown field (or one sent with the wrong wire type) is not read by protobuf
    group = b"\x0b\x0a\x01\xff\x0c"
    pb.TraceRequest.FromString(group)
    assert first_bad_utf8(group, DESC) is None
    assert first_bad_utf8(group + b"\x22\x02a\xff", DESC) == BadUtf8("id", 1)


def test_a_known_field_with_another_wire_type_is_skipped() -> None:
    data = b"\x08\x05" + b"\x15\x00\x00\x00\x00" + b"\x0a\x01\xff"  # report as varint, as fixed32
    assert first_bad_utf8(data, DESC) == BadUtf8("report", 0)


def test_recursive_messages_and_maps_of_messages() -> None:
    # google.protobuf.Struct: map<string, Value>, a Value holding a Struct or a ListValue of Values
    value = struct_pb2.Value()
    value.struct_value.fields["outer"].list_value.values.add(string_value="ok")
    value.struct_value.fields["outer"].list_value.values.add().struct_value.fields["in"].string_value = "XXXX"
    data = value.SerializeToString().replace(PLACEHOLDER.encode(), BAD)
    assert first_bad_utf8(data, struct_pb2.Value.DESCRIPTOR) == BadUtf8(
        'struct_value.fields["outer"].list_value.values[1].struct_value.fields["in"].string_value', 0)


def test_deep_nesting_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"\x1a\x01\xff"  # Value.string_value, not UTF-8
    for _ in range(1000):  # in a ListValue (Value.list_value = 6, ListValue.values = 1), over and over
        data = b"\x0a" + _varint(len(data)) + data
        data = b"\x32" + _varint(len(data)) + data
    assert first_bad_utf8(data, struct_pb2.Value.DESCRIPTOR) is None  # no RecursionError
    assert first_bad_utf8(data[-30:], struct_pb2.Value.DESCRIPTOR) is None  # cut: malformed
    shallow = b"\x1a\x01\xff"
    for _ in range(5):
        shallow = b"\x32" + _varint(len(shallow) + 2) + b"\x0a" + _varint(len(shallow)) + shallow
    assert first_bad_utf8(shallow, struct_pb2.Value.DESCRIPTOR) == BadUtf8(
        "list_value.values[0]." * 5 + "string_value", 0)
    monkeypatch.setattr(wire, "MAX_DEPTH", 8)  # 11 messages deep
    assert first_bad_utf8(shallow, struct_pb2.Value.DESCRIPTOR) is None


def test_work_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"\x28\x01" * 100 + b"\x0a\x01\xff"  # 100 unknown fields, then a bad report
    assert first_bad_utf8(data, DESC) == BadUtf8("report", 0)
    monkeypatch.setattr(wire, "MAX_TAGS", 50)
    assert first_bad_utf8(data, DESC) is None
    assert last_string(data, DESC, "id") is None


def test_random_damage_never_raises_nor_accuses_a_field_protobuf_reads() -> None:
    options = pb.TraceOptions(references_heading="Réf", min_score=0.5)
    base = _request(report="héllo wörld 中文", options=options)
    base.records[1].metadata["é"] = "ü"
    data = base.SerializeToString()
    rng = random.Random(7)
    found = 0
    for _ in range(4000):
        buf = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(buf)) if buf else 0
            op = rng.random()
            if op < 0.6 and buf:
                buf[at] = rng.choice([0xFF, 0xC3, 0x80, 0xED, rng.randrange(256)])
            elif op < 0.8 and buf:
                del buf[at:]
            else:
                buf.insert(at, rng.randrange(256))
        bad = first_bad_utf8(bytes(buf), DESC)
        last_string(bytes(buf), DESC, "id")
        try:
            pb.TraceRequest.FromString(bytes(buf))
        except DecodeError:
            found += bad is not None
        else:
            assert bad is None, bytes(buf)  # every string protobuf accepted is UTF-8
    assert found > 1000


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


# ---- end to end: the real server -----------------------------------------------------------

def _bad_content_request(id: str = "") -> bytes:
    request = pb.TraceRequest(report=EN_REPORT, records=records_pb(EN_RECORDS), id=id)
    request.records[1].content = "abXXXX"
    return _corrupt(request)


def test_trace_names_the_field_that_is_not_utf8(server) -> None:
    call = server.channel().unary_unary(
        "/source_tracer.v1.SourceTracer/Trace",
        request_serializer=lambda b: b, response_deserializer=lambda b: b,
    )
    with pytest.raises(grpc.RpcError) as err:
        call(_bad_content_request(), timeout=30)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.value.details() == ("records[1].content: not valid UTF-8 (byte offset 2 of the field), "
                                   "so the request is not a valid TraceRequest")


def test_trace_stream_item_keeps_its_id(server) -> None:
    call = server.channel().stream_stream(
        "/source_tracer.v1.SourceTracer/TraceStream",
        request_serializer=lambda b: b, response_deserializer=pb.TraceResponse.FromString,
    )
    good = pb.TraceRequest(id="good-1", report=EN_REPORT, records=records_pb(EN_RECORDS)).SerializeToString()
    out = {r.id: r for r in call(iter([_bad_content_request("bad-7"), good]), timeout=60)}
    assert set(out) == {"bad-7", "good-1"}
    assert out["good-1"].status.code == 0
    assert out["bad-7"].status.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert out["bad-7"].status.message.startswith("records[1].content: not valid UTF-8 (byte offset 2")
