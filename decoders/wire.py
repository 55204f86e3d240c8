"""Kafka's primitive wire encodings: fixed-width big-endian integers, unsigned varints,
int16/int32-length ("classic") and varint-length ("compact") strings, bytes and array
counts, and the 16-byte UUID.

Why hand-rolled and bounds-checked on every read: the input is whatever sits in
``__consumer_offsets`` (or whatever a fuzzer sends), so every reader takes an explicit
``end`` and raises :class:`~decoders.errors.DecodeError` with the byte offset instead of
letting ``struct.error``/``IndexError`` escape. Readers never allocate from a declared
length before checking that the bytes are actually there.

Sources: ``clients/src/main/java/org/apache/kafka/common/utils/ByteUtils.java``
(``readUnsignedVarint``/``writeUnsignedVarint``), ``.../protocol/ByteBufferAccessor.java``,
``.../common/Uuid.java``, and the generated readers/writers described by
``generator/src/main/java/org/apache/kafka/message/MessageDataGenerator.java`` (Kafka 4.3.1).

All readers have the signature ``read(buf, pos, end) -> (value, new_pos)``; all writers
``write(out: bytearray, value) -> None``.
"""

from __future__ import annotations

import base64
import struct
import uuid as _uuid
from typing import Any

from decoders.errors import (
    INVALID_UTF8,
    INVALID_VARINT,
    NEGATIVE_LENGTH,
    STRING_TOO_LONG,
    TRUNCATED,
    DecodeError,
    EncodeError,
)

INT8 = struct.Struct(">b")
INT16 = struct.Struct(">h")
UINT16 = struct.Struct(">H")
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")

MAX_STRING_BYTES = 0x7FFF
"""Kafka's generated readers reject longer strings ("string field x had invalid length")
and its writers refuse to write them, in both classic and compact form."""


class Uuid(bytes):
    """A Kafka ``uuid`` field: 16 bytes (most-significant long first, as ``Uuid.java``).

    It *is* ``bytes`` (so Spark/Arrow see a binary value and ``==`` with plain bytes
    works) but prints in Kafka's text form — URL-safe base64 without padding, 22 chars —
    which is what ``Uuid.toString()``, ``kafka-topics --describe`` and the JSON
    formatters show.

    >>> Uuid.from_string("MKXx1fIkQy2J9jXHhK8m1w").hex()
    '30a5f1d5f224432d89f635c784af26d7'
    >>> str(Uuid(bytes(16)))
    'AAAAAAAAAAAAAAAAAAAAAA'
    """

    __slots__ = ()

    def __new__(cls, value: bytes | bytearray | memoryview = b"\x00" * 16) -> Uuid:
        raw = bytes(value)
        if len(raw) != 16:
            raise ValueError(f"a Kafka uuid is 16 bytes, got {len(raw)}")
        return super().__new__(cls, raw)

    @classmethod
    def from_string(cls, text: str) -> Uuid:
        """Parse Kafka's base64url-without-padding form (``Uuid.fromString``)."""
        if len(text) != 22:
            raise ValueError(f"a Kafka uuid string has 22 characters, got {len(text)}: {text!r}")
        return cls(base64.urlsafe_b64decode(text + "=="))

    def __str__(self) -> str:
        return base64.urlsafe_b64encode(bytes(self)).rstrip(b"=").decode("ascii")

    def __repr__(self) -> str:
        return f"Uuid('{self}')"


ZERO_UUID = Uuid()
"""``Uuid.ZERO_UUID``: the default of every uuid field, meaning "no id"."""


def as_uuid(value: Any) -> Uuid:
    """Accept the forms a caller may reasonably hold a topic id in."""
    if isinstance(value, Uuid):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return Uuid(value)
    if isinstance(value, str):
        return Uuid.from_string(value)
    if isinstance(value, _uuid.UUID):
        return Uuid(value.bytes)
    raise TypeError(f"expected a uuid (Uuid, 16 bytes, base64url str or uuid.UUID), got {type(value).__name__}")


# --------------------------------------------------------------------------- readers


def need(buf: bytes, pos: int, end: int, size: int, what: str) -> None:
    """Raise ``truncated`` unless ``size`` bytes are available at ``pos``."""
    if end - pos < size:
        raise DecodeError(pos, TRUNCATED, f"{what} needs {size} bytes, {max(end - pos, 0)} left")


def read_int8(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    if pos >= end:
        raise DecodeError(pos, TRUNCATED, "int8 needs 1 byte, 0 left")
    return INT8.unpack_from(buf, pos)[0], pos + 1


def read_int16(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    if end - pos < 2:
        need(buf, pos, end, 2, "int16")
    return INT16.unpack_from(buf, pos)[0], pos + 2


def read_uint16(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    if end - pos < 2:
        need(buf, pos, end, 2, "uint16")
    return UINT16.unpack_from(buf, pos)[0], pos + 2


def read_int32(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    if end - pos < 4:
        need(buf, pos, end, 4, "int32")
    return INT32.unpack_from(buf, pos)[0], pos + 4


def read_int64(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    if end - pos < 8:
        need(buf, pos, end, 8, "int64")
    return INT64.unpack_from(buf, pos)[0], pos + 8


def read_uuid(buf: bytes, pos: int, end: int) -> tuple[Uuid, int]:
    if end - pos < 16:
        need(buf, pos, end, 16, "uuid")
    return Uuid(buf[pos : pos + 16]), pos + 16


def read_uvarint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """Unsigned varint, at most 5 bytes (``ByteUtils.readUnsignedVarint`` throws
    "Varint is too long" beyond that). We also refuse values above 2**32-1, which Java
    would silently truncate to an int."""
    start = pos
    result = 0
    shift = 0
    while True:
        if pos >= end:
            raise DecodeError(start, TRUNCATED, "unsigned varint runs past the end of the input")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
        if shift > 28:
            raise DecodeError(start, INVALID_VARINT, "unsigned varint longer than 5 bytes")
    if result > 0xFFFFFFFF:
        raise DecodeError(start, INVALID_VARINT, f"unsigned varint {result} exceeds 32 bits")
    return result, pos


def read_length(
    buf: bytes, pos: int, end: int, *, compact: bool, wide: bool, nullable: bool, what: str
) -> tuple[int, int]:
    """Read a length or count prefix; return ``(-1, pos)`` for a null marker.

    ``compact``: unsigned varint N+1 (0 = null). Otherwise int16 (``wide=False``, strings)
    or int32 (``wide=True``, bytes and arrays), -1 = null. Any other negative value is a
    ``negative length`` — stricter than Kafka, which treats every negative as null.
    """
    start = pos
    if compact:
        n, pos = read_uvarint(buf, pos, end)
        n -= 1
    elif wide:
        if end - pos < 4:
            need(buf, pos, end, 4, f"{what} length")
        n = INT32.unpack_from(buf, pos)[0]
        pos += 4
    else:
        if end - pos < 2:
            need(buf, pos, end, 2, f"{what} length")
        n = INT16.unpack_from(buf, pos)[0]
        pos += 2
    if n < 0:
        if n == -1 and nullable:
            return -1, pos
        detail = f"null marker -1 in non-nullable {what}" if n == -1 else f"length {n} for {what}"
        raise DecodeError(start, NEGATIVE_LENGTH, detail)
    return n, pos


def read_string_body(buf: bytes, pos: int, end: int, n: int, start: int, what: str) -> tuple[str, int]:
    if n > MAX_STRING_BYTES:
        raise DecodeError(start, STRING_TOO_LONG, f"{what} declares {n} bytes (Kafka's limit is 32767)")
    if end - pos < n:
        raise DecodeError(start, TRUNCATED, f"{what} declares {n} bytes, {end - pos} left")
    raw = buf[pos : pos + n]
    try:
        return raw.decode("utf-8"), pos + n
    except UnicodeDecodeError as exc:
        raise DecodeError(pos + exc.start, INVALID_UTF8, f"{what}: {exc.reason}") from None


def read_bytes_body(buf: bytes, pos: int, end: int, n: int, start: int, what: str) -> tuple[bytes, int]:
    if end - pos < n:
        raise DecodeError(start, TRUNCATED, f"{what} declares {n} bytes, {end - pos} left")
    return buf[pos : pos + n], pos + n


# --------------------------------------------------------------------------- writers


def write_uvarint(out: bytearray, value: int) -> None:
    if value < 0 or value > 0xFFFFFFFF:
        raise EncodeError(f"unsigned varint out of range: {value}")
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def uvarint_size(value: int) -> int:
    size = 1
    while value >= 0x80:
        value >>= 7
        size += 1
    return size


def utf8(value: Any, what: str) -> bytes:
    """Encode a str as Kafka would, refusing what Kafka's writers refuse."""
    if not isinstance(value, str):
        raise EncodeError(f"{what}: expected str, got {type(value).__name__}")
    try:
        raw = value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise EncodeError(f"{what}: not encodable as UTF-8 ({exc.reason})") from None
    if len(raw) > MAX_STRING_BYTES:
        raise EncodeError(f"{what}: {len(raw)} UTF-8 bytes exceeds Kafka's 32767-byte string limit")
    return raw


def write_length(out: bytearray, n: int, *, compact: bool, wide: bool) -> None:
    """Write a length/count prefix; ``n == -1`` writes the null marker."""
    if compact:
        write_uvarint(out, n + 1)
    elif wide:
        out += INT32.pack(n)
    else:
        out += INT16.pack(n)
