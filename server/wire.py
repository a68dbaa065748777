"""Protobuf wire format, read just far enough to say which string field of a refused request is
not valid UTF-8: protobuf's own parser only says "String field had bad UTF-8", and a Go, C++ or
hand-rolled client can send such bytes.

Only for bytes protobuf has already refused. Never raises on any input; linear in the bytes,
with the work and the message nesting bounded (MAX_TAGS, MAX_DEPTH); None whenever the bytes do
not tell (malformed before any bad string, a bound reached, or no bad string at all). Assumes
the descriptor's strings are UTF-8-validated (proto3, as source_tracer.v1 is)."""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.descriptor import Descriptor, FieldDescriptor

MAX_DEPTH = 32  # message nesting walked (protobuf's own limit is 100); deeper: None
# fields read in all before giving up (None): about 0.8 µs each, so some 25 ms at worst on the event
# loop (a request of 5,000 records with a few fields each fits)
MAX_TAGS = 30_000
_SHOWN = 40  # characters of a map key shown in a path

_VARINT, _I64, _LEN, _SGROUP, _EGROUP, _I32 = range(6)
_MAX_FIELD_NUMBER = 2**29 - 1
_LOOKED_INTO = (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_MESSAGE)  # the rest is skipped


@dataclass(frozen=True, slots=True)
class BadUtf8:
    """The first string field (in wire order) whose bytes are not UTF-8."""

    path: str  # "report", "records[3].content", 'records[0].metadata["k"]', 'records[0].metadata key "k\xff"'
    offset: int  # of the first invalid byte, from the start of the field's bytes


class _Stop(Exception):
    """The bytes stop making sense here (or a bound is reached): the answer is None."""


def first_bad_utf8(data: bytes, descriptor: Descriptor) -> BadUtf8 | None:
    """The first string field of the `descriptor` message encoded in `data` that is not UTF-8."""
    walk = _Walk(data)
    try:
        return walk.message(0, len(data), descriptor, "", 0)
    except _Stop:
        return None


def last_string(data: bytes, descriptor: Descriptor, name: str) -> str | None:
    """The top-level string field `name` as protobuf would read it (its last occurrence; "" when
    absent), or None when an occurrence is not UTF-8 or the top level of the bytes is malformed
    anywhere (a value guessed from damaged bytes could be another item's)."""
    field = descriptor.fields_by_name.get(name)
    if field is None or field.type != FieldDescriptor.TYPE_STRING:
        return None
    walk = _Walk(data)
    value = ""
    pos, end = 0, len(data)
    try:
        while pos < end:
            number, wire, pos = walk.tag(pos, end)
            if number != field.number or wire != _LEN:
                pos = walk.skip(pos, end, number, wire, 0)
                continue
            start, pos = walk.span(pos, end)
            value = str(walk.view[start:pos], "utf-8")
    except (_Stop, UnicodeDecodeError):
        return None
    return value


class _Walk:
    __slots__ = ("view", "tags")

    def __init__(self, data: bytes) -> None:
        self.view = memoryview(data)
        self.tags = 0

    def varint(self, pos: int, end: int) -> tuple[int, int]:
        view, result, shift = self.view, 0, 0
        while pos < end and shift < 70:
            byte = view[pos]
            pos += 1
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                return result, pos
            shift += 7
        raise _Stop

    def tag(self, pos: int, end: int) -> tuple[int, int, int]:
        self.tags += 1
        if self.tags > MAX_TAGS:
            raise _Stop
        key, pos = self.varint(pos, end)
        number = key >> 3
        if not 1 <= number <= _MAX_FIELD_NUMBER:
            raise _Stop
        return number, key & 7, pos

    def span(self, pos: int, end: int) -> tuple[int, int]:
        """(start, stop) of the length-delimited bytes whose length is read at `pos`."""
        size, pos = self.varint(pos, end)
        if size > end - pos:
            raise _Stop
        return pos, pos + size

    def skip(self, pos: int, end: int, number: int, wire: int, depth: int) -> int:
        """Past the value of a field this walk does not look into."""
        if wire == _VARINT:
            return self.varint(pos, end)[1]
        if wire == _LEN:
            return self.span(pos, end)[1]
        if wire == _SGROUP:  # a group (unknown, or a field sent with the wrong wire type): skipped
            if depth >= MAX_DEPTH:
                raise _Stop
            while pos < end:
                inner, inner_wire, pos = self.tag(pos, end)
                if inner_wire == _EGROUP:
                    if inner != number:
                        raise _Stop
                    return pos
                pos = self.skip(pos, end, inner, inner_wire, depth + 1)
            raise _Stop
        size = 8 if wire == _I64 else 4 if wire == _I32 else -1  # an end-group here, or 6/7: corrupt
        if size < 0 or pos + size > end:
            raise _Stop
        return pos + size

    def utf8_error(self, start: int, stop: int) -> int | None:
        try:
            str(self.view[start:stop], "utf-8")
        except UnicodeDecodeError as exc:
            return exc.start
        return None

    def message(self, pos: int, end: int, desc: Descriptor, path: str, depth: int) -> BadUtf8 | None:
        """The first bad string in the message `desc` encoded in view[pos:end]; `path` is its own
        ("" or "records[2].")."""
        if depth >= MAX_DEPTH:
            raise _Stop
        seen: dict[int, int] = {}  # occurrences of each repeated field so far: the next index
        while pos < end:
            number, wire, pos = self.tag(pos, end)
            field = desc.fields_by_number.get(number)
            # protobuf reads a known field sent with another wire type as an unknown field
            if field is None or wire != _LEN or field.type not in _LOOKED_INTO:
                pos = self.skip(pos, end, number, wire, depth)
                continue
            start, pos = self.span(pos, end)
            name, sub = path + field.name, field.message_type  # sub: None for a string
            if field.is_repeated:
                index = seen.get(number, 0)
                seen[number] = index + 1
                if sub is not None and sub.GetOptions().map_entry:
                    found = self.map_entry(start, pos, sub, name, index, depth + 1)
                    if found is not None:
                        return found
                    continue
                name += f"[{index}]"
            if sub is None:
                offset = self.utf8_error(start, pos)
                if offset is not None:
                    return BadUtf8(name, offset)
            else:
                found = self.message(start, pos, sub, name + ".", depth + 1)
                if found is not None:
                    return found
        return None

    def map_entry(
        self, pos: int, end: int, entry: Descriptor, name: str, index: int, depth: int
    ) -> BadUtf8 | None:
        """One entry of the map field `name` (its `index`-th on the wire): key = 1, value = 2."""
        if depth >= MAX_DEPTH:
            raise _Stop
        key, value = entry.fields_by_number[1], entry.fields_by_number[2]
        string_key = key.type == FieldDescriptor.TYPE_STRING
        key_bytes = memoryview(b"")  # protobuf's default; the last one sent wins
        p = pos
        while p < end:  # the key first: a bad value's path names it, wherever it is in the entry
            number, wire, p = self.tag(p, end)
            if number != 1 or wire != _LEN or not string_key:
                p = self.skip(p, end, number, wire, depth)
                continue
            start, p = self.span(p, end)
            offset = self.utf8_error(start, p)
            if offset is not None:
                return BadUtf8(f"{name} key {_quote(self.view[start:p])}", offset)
            key_bytes = self.view[start:p]
        if value.type not in _LOOKED_INTO:
            return None
        at = f"{name}[{_quote(key_bytes)}]" if string_key else f"{name}[#{index}]"
        p = pos
        while p < end:
            number, wire, p = self.tag(p, end)
            if number != 2 or wire != _LEN:
                p = self.skip(p, end, number, wire, depth)
                continue
            start, p = self.span(p, end)
            if value.message_type is None:
                offset = self.utf8_error(start, p)
                if offset is not None:
                    return BadUtf8(at, offset)
            else:
                found = self.message(start, p, value.message_type, at + ".", depth + 1)
                if found is not None:
                    return found
        return None


def _quote(raw: memoryview) -> str:
    """`raw` in double quotes, readable: bytes that are not UTF-8 as \\xNN, quotes, backslashes
    and control characters escaped, cut at _SHOWN characters."""
    text = bytes(raw[: _SHOWN * 4]).decode("utf-8", "surrogateescape")
    out = []
    for ch in text[:_SHOWN]:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, kept by surrogateescape
            out.append(f"\\x{code - 0xDC00:02x}")
        elif ch in '"\\':
            out.append("\\" + ch)
        elif not ch.isprintable():
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    more = "…" if len(text) > _SHOWN or len(raw) > _SHOWN * 4 else ""
    return '"' + "".join(out) + more + '"'
