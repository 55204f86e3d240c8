"""Primitive readers and writers: varints, lengths, UUIDs."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoders.errors import INVALID_VARINT, NEGATIVE_LENGTH, TRUNCATED, DecodeError, EncodeError
from decoders.wire import Uuid, as_uuid, read_length, read_uvarint, uvarint_size, write_uvarint


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        (0, "00"),
        (1, "01"),
        (127, "7f"),                  # the largest one-byte varint
        (128, "8001"),                # low 7 bits 0000000 + continuation, then 1
        (300, "ac02"),                # 300 = 0b10_0101100: 0x2c|0x80, then 0b10
        (16383, "ff7f"),
        (16384, "808001"),
        (2**32 - 1, "ffffffff0f"),    # five bytes, the last holding the top 4 bits
    ],
)
def test_unsigned_varints_are_little_endian_groups_of_seven_bits(value: int, encoded: str) -> None:
    out = bytearray()
    write_uvarint(out, value)
    assert out.hex() == encoded
    assert uvarint_size(value) == len(out)
    assert read_uvarint(bytes(out), 0, len(out)) == (value, len(out))


def test_a_sixth_varint_byte_and_values_above_32_bits_are_invalid() -> None:
    with pytest.raises(DecodeError) as err:
        read_uvarint(bytes.fromhex("8080808080"), 0, 5)
    assert (err.value.reason, err.value.position) == (INVALID_VARINT, 0)
    with pytest.raises(DecodeError) as err:
        read_uvarint(bytes.fromhex("ffffffff1f"), 0, 5)  # 2**33 - 1
    assert err.value.reason == INVALID_VARINT
    with pytest.raises(DecodeError) as err:
        read_uvarint(bytes.fromhex("0080"), 1, 2)  # continuation bit, then the end
    assert (err.value.reason, err.value.position) == (TRUNCATED, 1)
    with pytest.raises(EncodeError):
        write_uvarint(bytearray(), 2**32)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_every_32_bit_value_round_trips_through_a_varint(value: int) -> None:
    out = bytearray()
    write_uvarint(out, value)
    assert read_uvarint(bytes(out), 0, len(out)) == (value, len(out))


def test_lengths_accept_the_null_marker_only_where_nullable() -> None:
    assert read_length(b"\xff\xff", 0, 2, compact=False, wide=False, nullable=True, what="s") == (-1, 2)
    assert read_length(b"\x00", 0, 1, compact=True, wide=False, nullable=True, what="s") == (-1, 1)
    for data, kwargs in [(b"\xff\xff", {"compact": False, "wide": False}), (b"\x00", {"compact": True, "wide": False}),
                         (b"\xff\xff\xff\xfe", {"compact": False, "wide": True})]:
        with pytest.raises(DecodeError) as err:
            read_length(data, 0, len(data), nullable=False, what="s", **kwargs)
        assert err.value.reason == NEGATIVE_LENGTH


def test_uuids_print_as_kafka_does_base64url_without_padding() -> None:
    u = Uuid(bytes.fromhex("ffeeddccbbaa99887766554433221100"))
    assert str(u) == "_-7dzLuqmYh3ZlVEMyIRAA"  # '-' and '_' replace '+' and '/'
    assert Uuid.from_string(str(u)) == u
    assert as_uuid(uuid.UUID(bytes=bytes(u))) == u and as_uuid(bytes(u)) == u and as_uuid(str(u)) == u
    assert repr(u) == "Uuid('_-7dzLuqmYh3ZlVEMyIRAA')"
    with pytest.raises(ValueError):
        Uuid(b"short")
    with pytest.raises(ValueError):
        Uuid.from_string("too-short")
    with pytest.raises(TypeError):
        as_uuid(42)
