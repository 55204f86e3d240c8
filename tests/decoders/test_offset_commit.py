"""Offset commit records, byte by byte.

Every vector below is spelled out from Kafka's field tables (OffsetCommitKey.json,
OffsetCommitValue.json, LegacyOffsetCommitValue.json; the v0–v3 Scala schemas in
GroupMetadataManager.scala 2.7), not produced by our encoder: int16/int32/int64 are
big-endian, classic strings are an int16 length + UTF-8, v4 uses a varint (length+1) and
ends with a tagged-field section.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from decoders import DecodedRecord, DecodeError, decode_record, encode_record
from decoders.offset_commit import OFFSET_COMMIT_VALUE
from decoders.records import _decode_generic
from decoders.wire import ZERO_UUID, Uuid
from tests.decoders.strategies import struct_strategy

KEY = bytes.fromhex(
    "0001"        # int16 record type 1 = OffsetCommitKey
    "0002" "6731"  # group: int16 length 2, "g1"
    "0001" "74"    # topic: int16 length 1, "t"
    "00000003"     # partition: int32 3
)
KEY_DICT = {"group": "g1", "topic": "t", "partition": 3}


def _decoded(key: bytes, value: bytes) -> DecodedRecord:
    record = decode_record(key, value)
    assert isinstance(record, DecodedRecord)
    # the fast path and the table-driven codec must agree on every hand vector
    assert record == _decode_generic(record.key_version, key, value)
    # and our encoder must reproduce the hand-written bytes exactly
    assert encode_record(record.type, record.key, record.value, record.value_version) == (key, value)
    return record


def test_value_v0_written_by_kafka_0_8_2() -> None:
    value = bytes.fromhex(
        "0000"              # int16 value version 0
        "0000000000000064"  # offset: int64 100
        "0002" "6d64"       # metadata: "md"
        "00000000000003e8"  # commitTimestamp ("timestamp" in 0.8.2): int64 1000
    )
    record = _decoded(KEY, value)
    assert (record.type, record.key_version, record.value_version) == ("offset_commit", 1, 0)
    assert record.key == KEY_DICT
    assert record.value == {"offset": 100, "metadata": "md", "commit_timestamp": 1000}


def test_value_v1_carries_the_expire_timestamp() -> None:
    value = bytes.fromhex(
        "0001"              # value version 1 (Kafka 0.9; still written when a retention time is sent)
        "0000000000000064"  # offset 100
        "0000"              # metadata "" (length 0)
        "00000000000003e8"  # commitTimestamp 1000
        "00000000000007d0"  # expireTimestamp 2000
    )
    assert _decoded(KEY, value).value == {"offset": 100, "metadata": "", "commit_timestamp": 1000,
                                          "expire_timestamp": 2000}


def test_value_v2_drops_the_expire_timestamp() -> None:
    value = bytes.fromhex(
        "0002"              # value version 2 (KIP-211, IBP 2.1-IV0)
        "ffffffffffffffff"  # offset -1
        "0001" "78"         # metadata "x"
        "0000000000000000"  # commitTimestamp 0
    )
    assert _decoded(KEY, value).value == {"offset": -1, "metadata": "x", "commit_timestamp": 0}


def test_value_v3_adds_the_leader_epoch_before_the_metadata() -> None:
    value = bytes.fromhex(
        "0003"              # value version 3 (KIP-320), written by 2.1 .. 4.0
        "0000000000000005"  # offset 5
        "00000007"          # leaderEpoch 7
        "0000"              # metadata ""
        "00000000000003e8"  # commitTimestamp 1000
    )
    assert _decoded(KEY, value).value == {"offset": 5, "leader_epoch": 7, "metadata": "", "commit_timestamp": 1000}


def test_value_v4_is_flexible_with_a_tagged_topic_id() -> None:
    value = bytes.fromhex(
        "0004"              # value version 4, flexible (written by 4.1+)
        "0000000000000005"  # offset 5
        "ffffffff"          # leaderEpoch -1
        "03" "6162"         # metadata: varint 3 = length 2 + 1, "ab"
        "00000000000003e8"  # commitTimestamp 1000
        "01"                # tagged section: 1 field
        "00" "10"           #   tag 0 (topicId), size 16
        "000102030405060708090a0b0c0d0e0f"  # the uuid, most significant long first
    )
    record = _decoded(KEY, value)
    assert record.value == {"offset": 5, "leader_epoch": -1, "metadata": "ab", "commit_timestamp": 1000,
                            "topic_id": Uuid(bytes(range(16)))}
    assert record.to_json_dict()["value"]["topic_id"] == "AAECAwQFBgcICQoLDA0ODw"


def test_value_v4_without_a_topic_id_has_an_empty_tagged_section() -> None:
    value = bytes.fromhex("0004" "0000000000000005" "ffffffff" "01" "00000000000003e8" "00")
    assert _decoded(KEY, value).value == {"offset": 5, "leader_epoch": -1, "metadata": "", "commit_timestamp": 1000,
                                          "topic_id": ZERO_UUID}


def test_value_v4_skips_unknown_tags() -> None:
    # tagged section with two fields: tag 0 topicId, then an unknown tag 5 of 2 bytes
    value = bytes.fromhex("0004" "0000000000000005" "ffffffff" "01" "00000000000003e8"
                          "02" "00" "10" "000102030405060708090a0b0c0d0e0f" "05" "02" "abcd")
    record = decode_record(KEY, value)
    assert isinstance(record, DecodedRecord)
    assert record.value is not None and record.value["topic_id"] == Uuid(bytes(range(16)))


def test_legacy_type_0_record_from_kafka_0_8_2() -> None:
    key = bytes.fromhex(
        "0000"         # int16 record type 0 = LegacyOffsetCommitKey (0.8.2's key version 0)
        "0002" "6731"  # group "g1"
        "0001" "74"    # topic "t"
        "00000003"     # partition 3
    )
    value = bytes.fromhex(
        "0000"              # LegacyOffsetCommitValue v0 (same bytes as OffsetCommitValue v0)
        "000000000000002a"  # offset 42
        "0000"              # metadata ""
        "0000000000000001"  # commitTimestamp 1
    )
    record = _decoded(key, value)
    assert (record.type, record.key_version, record.value_version) == ("legacy_offset_commit", 0, 0)
    assert record.key == KEY_DICT
    assert record.value == {"offset": 42, "metadata": "", "commit_timestamp": 1}


def test_an_offset_tombstone_keeps_the_key() -> None:
    record = decode_record(KEY, None)
    assert isinstance(record, DecodedRecord)
    assert (record.type, record.key, record.value, record.is_tombstone) == ("offset_commit", KEY_DICT, None, True)


def test_a_topic_id_can_be_given_as_text_bytes_or_uuid() -> None:
    import uuid

    raw = bytes(range(16))
    encodings = {
        encode_record("offset_commit", KEY_DICT, {"offset": 0, "metadata": "", "commit_timestamp": 0, "topic_id": t}, 4)
        for t in (Uuid(raw), raw, "AAECAwQFBgcICQoLDA0ODw", uuid.UUID(bytes=raw))
    }
    assert len(encodings) == 1


def _outcome(decode: Any, *args: Any) -> Any:
    try:
        return decode(*args)
    except DecodeError as exc:
        return (exc.record_type, exc.version, exc.part, exc.position, exc.reason)


@settings(max_examples=300, deadline=None)
@given(
    type_id=st.sampled_from([0, 1]),
    key_tail=st.sampled_from([KEY[2:], b"", b"\x00\x01g"]) | st.binary(max_size=16),
    version=st.integers(0, 5),
    value_tail=st.binary(max_size=48),
    tombstone=st.booleans(),
)
def test_the_fast_path_never_accepts_what_the_table_driven_codec_rejects(
    type_id: int, key_tail: bytes, version: int, value_tail: bytes, tombstone: bool
) -> None:
    key = type_id.to_bytes(2, "big") + key_tail
    value = None if tombstone else version.to_bytes(2, "big") + value_tail
    assert _outcome(decode_record, key, value) == _outcome(_decode_generic, type_id, key, value)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_fast_path_and_the_codec_agree_on_mutated_offset_values(data: st.DataObject) -> None:
    version = data.draw(st.integers(0, 4))
    drawn = data.draw(struct_strategy(OFFSET_COMMIT_VALUE, version))
    _, value = encode_record("offset_commit", KEY_DICT, drawn, version)
    assert value is not None
    buf = bytearray(value)
    at = data.draw(st.integers(0, len(buf) - 1))
    mutation = data.draw(st.sampled_from(["flip", "truncate", "append"]))
    if mutation == "flip":
        buf[at] ^= data.draw(st.integers(1, 255))
    elif mutation == "truncate":
        del buf[at:]
    else:
        buf += data.draw(st.binary(min_size=1, max_size=3))
    assert _outcome(decode_record, KEY, bytes(buf)) == _outcome(_decode_generic, 1, KEY, bytes(buf))
