"""decode_record / encode_record: round trips for every record type and value version,
the fuzz contract (only DecodeError escapes), error positions, tombstones, unknown types."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decoders import DecodedRecord, DecodeError, EncodeError, UnknownRecord, decode_record, encode_record
from decoders.errors import INVALID_UTF8, NEGATIVE_LENGTH, OVER_LONG, STRING_TOO_LONG, TRUNCATED, UNKNOWN_VERSION
from decoders.layout import RECORD_SPECS
from decoders.records import _decode_generic
from decoders.spec import RecordSpec
from tests.decoders.strategies import mutated, record_cases, strip_derived, struct_strategy

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PER_CASE = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

CASES = record_cases()
CASE_IDS = [f"{spec.name}-v{v}" for spec, v in CASES]


def test_every_released_record_type_has_a_layout() -> None:
    assert sorted(spec.type_id for spec in RECORD_SPECS) == [*range(0, 18), *range(19, 24)]


@pytest.mark.parametrize(("spec", "version"), CASES, ids=CASE_IDS)
def test_encoding_then_decoding_gives_back_the_dict_for_every_type_and_version(spec: RecordSpec, version: int) -> None:
    @PER_CASE
    @given(key=struct_strategy(spec.key, 0), value=struct_strategy(spec.value, version))
    def round_trip(key: dict, value: dict) -> None:
        key_bytes, value_bytes = encode_record(spec.name, key, value, version)
        record = decode_record(key_bytes, value_bytes)
        assert isinstance(record, DecodedRecord)
        assert (record.type, record.key_version, record.value_version) == (spec.name, spec.type_id, version)
        assert record.key == key
        assert strip_derived(spec.value, record.value) == value
        # ... and the decoded record re-encodes to the very same bytes.
        assert encode_record(record.type, record.key, record.value, record.value_version) == (key_bytes, value_bytes)

    round_trip()


@pytest.mark.parametrize("spec", RECORD_SPECS, ids=[s.name for s in RECORD_SPECS])
def test_a_null_value_is_a_tombstone_for_every_type(spec: RecordSpec) -> None:
    @PER_CASE
    @given(key=struct_strategy(spec.key, 0))
    def tombstone(key: dict) -> None:
        key_bytes, value_bytes = encode_record(spec.name, key, None)
        assert value_bytes is None
        record = decode_record(key_bytes, None)
        assert isinstance(record, DecodedRecord)
        assert record.is_tombstone and record.value is None and record.value_version is None
        assert record.key == key
        assert record.to_json_dict()["value"] is None

    tombstone()


def _check_only_decode_errors(key: bytes, value: bytes | None) -> None:
    start = time.monotonic()
    try:
        decode_record(key, value)
    except DecodeError as exc:
        assert exc.reason in {TRUNCATED, OVER_LONG, NEGATIVE_LENGTH, INVALID_UTF8, UNKNOWN_VERSION,
                              "invalid varint", STRING_TOO_LONG}
        assert exc.position >= 0
        assert exc.part in {"key", "value"}
    assert time.monotonic() - start < 1.0, "decode_record must not hang"


@FAST
@given(key=st.binary(max_size=64), value=st.none() | st.binary(max_size=256))
def test_arbitrary_bytes_raise_nothing_but_decode_error(key: bytes, value: bytes | None) -> None:
    _check_only_decode_errors(key, value)


@FAST
@given(
    type_id=st.sampled_from([s.type_id for s in RECORD_SPECS]),
    key_tail=st.binary(max_size=40),
    version=st.integers(0, 5),
    value_tail=st.binary(max_size=300),
)
def test_arbitrary_bytes_behind_a_valid_type_and_version_raise_nothing_but_decode_error(
    type_id: int, key_tail: bytes, version: int, value_tail: bytes
) -> None:
    _check_only_decode_errors(type_id.to_bytes(2, "big") + key_tail, version.to_bytes(2, "big") + value_tail)


@FAST
@given(data=st.data())
def test_mutated_valid_records_raise_nothing_but_decode_error(data: st.DataObject) -> None:
    spec, version = data.draw(st.sampled_from(CASES))
    key, value = encode_record(spec.name, data.draw(struct_strategy(spec.key, 0)),
                               data.draw(struct_strategy(spec.value, version)), version)
    assert value is not None
    _check_only_decode_errors(key, mutated(data, value))


def test_a_huge_declared_array_count_is_a_truncation_not_an_allocation() -> None:
    # GroupMetadataValue v3: protocolType "" | generation 0 | protocol null | leader null |
    # currentStateTimestamp -1 | members count 0x7fffffff and nothing behind it.
    value = bytes.fromhex("0003" "0000" "00000000" "ffff" "ffff" "ffffffffffffffff" "7fffffff")
    with pytest.raises(DecodeError) as err:
        decode_record(bytes.fromhex("0002" "0001" "67"), value)
    assert (err.value.reason, err.value.position, err.value.part) == (TRUNCATED, 20, "value")


def test_a_huge_declared_string_length_in_a_flexible_value_is_a_truncation() -> None:
    # Type 10 ShareGroupMemberMetadataValue v0: RackId, a compact nullable string, declares
    # (5-byte varint fe ff ff ff 0f = 0xfffffffe) - 1 bytes: refused before any slicing.
    value = bytes.fromhex("0000" "feffffff0f")
    with pytest.raises(DecodeError) as err:
        decode_record(bytes.fromhex("000a" "0001" "67" "0001" "6d"), value)
    assert (err.value.reason, err.value.position) == (STRING_TOO_LONG, 2)


def test_an_unknown_record_type_is_a_typed_result_not_an_exception() -> None:
    record = decode_record(bytes.fromhex("0012" "0001" "67"), b"\x00\x00garbage")
    assert record == UnknownRecord(18, bytes.fromhex("0012000167"), b"\x00\x00garbage")
    assert record.to_json_dict() == {"type": "unknown", "record_type": 18, "key": "0012000167",
                                     "value": "0000" "67617262616765"}
    assert decode_record(b"\xff\xff", None) == UnknownRecord(-1, b"\xff\xff", None)
    assert decode_record(b"\x7f\xff\x00", b"") == UnknownRecord(32767, b"\x7f\xff\x00", b"")


# ----------------------------------------------------------------- errors, by hand

OFFSET_KEY = bytes.fromhex("0001" "0001" "67" "0001" "74" "00000000")  # group "g", topic "t", partition 0
V3_HEAD = "0003" "0000000000000005" "00000007"  # version 3, offset 5, leader epoch 7


def _error(key: bytes, value: bytes | None) -> DecodeError:
    with pytest.raises(DecodeError) as err:
        decode_record(key, value)
    return err.value


def test_a_key_cut_inside_the_group_string_is_truncated_at_the_string() -> None:
    # type 1 | group length 5 but only "gr" follows
    e = _error(bytes.fromhex("0001" "0005" "6772"), None)
    assert (e.record_type, e.version, e.part, e.position, e.reason) == (1, None, "key", 2, TRUNCATED)


def test_a_key_shorter_than_its_type_is_truncated_with_no_record_type() -> None:
    e = _error(b"\x00", None)
    assert (e.record_type, e.part, e.position, e.reason) == (None, "key", 0, TRUNCATED)
    e = _error(None, None)  # type: ignore[arg-type]
    assert (e.part, e.reason) == ("key", TRUNCATED)


def test_trailing_bytes_after_a_key_are_over_long() -> None:
    e = _error(OFFSET_KEY + b"\x00", None)
    assert (e.record_type, e.part, e.position, e.reason) == (1, "key", len(OFFSET_KEY), OVER_LONG)


def test_trailing_bytes_after_a_value_at_a_known_version_are_over_long() -> None:
    value = bytes.fromhex(V3_HEAD + "0000" "00000000000003e8" "ab")  # metadata "" | commit 1000 | junk
    e = _error(OFFSET_KEY, value)
    assert (e.record_type, e.version, e.part, e.position, e.reason) == (1, 3, "value", 24, OVER_LONG)


def test_a_value_cut_inside_the_commit_timestamp_is_truncated_there() -> None:
    value = bytes.fromhex(V3_HEAD + "0000" "000000")  # commit timestamp has 3 of 8 bytes
    e = _error(OFFSET_KEY, value)
    assert (e.version, e.position, e.reason) == (3, 16, TRUNCATED)


def test_a_value_shorter_than_its_version_is_truncated_with_no_version() -> None:
    e = _error(OFFSET_KEY, b"\x00")
    assert (e.record_type, e.version, e.part, e.position, e.reason) == (1, None, "value", 0, TRUNCATED)


def test_a_negative_string_length_is_rejected_at_the_length() -> None:
    e = _error(OFFSET_KEY, bytes.fromhex(V3_HEAD + "fffe" "00000000000003e8"))
    assert (e.version, e.position, e.reason) == (3, 14, NEGATIVE_LENGTH)


def test_the_null_marker_in_a_non_nullable_string_is_a_negative_length() -> None:
    e = _error(OFFSET_KEY, bytes.fromhex(V3_HEAD + "ffff" "00000000000003e8"))
    assert (e.position, e.reason) == (14, NEGATIVE_LENGTH)
    # compact form (v4): varint 0 = null, metadata is not nullable
    e = _error(OFFSET_KEY, bytes.fromhex("0004" "0000000000000005" "00000007" "00" "00000000000003e8" "00"))
    assert (e.version, e.position, e.reason) == (4, 14, NEGATIVE_LENGTH)


def test_the_null_marker_is_accepted_where_the_field_is_nullable() -> None:
    # GroupMetadataValue v0: protocolType "" | generation 0 | protocol null | leader null | no members
    value = bytes.fromhex("0000" "0000" "00000000" "ffff" "ffff" "00000000")
    record = decode_record(bytes.fromhex("0002" "0001" "67"), value)
    assert isinstance(record, DecodedRecord)
    assert record.value == {"protocol_type": "", "generation": 0, "protocol": None, "leader": None, "members": []}


def test_a_negative_length_other_than_minus_one_is_rejected_even_where_nullable() -> None:
    e = _error(bytes.fromhex("0002" "0001" "67"), bytes.fromhex("0000" "0000" "00000000" "fffe" "ffff" "00000000"))
    assert (e.record_type, e.version, e.position, e.reason) == (2, 0, 8, NEGATIVE_LENGTH)


def test_invalid_utf8_is_reported_at_the_offending_byte() -> None:
    e = _error(OFFSET_KEY, bytes.fromhex(V3_HEAD + "0002" "61ff" "00000000000003e8"))  # "a\xff"
    assert (e.version, e.position, e.reason) == (3, 17, INVALID_UTF8)
    e = _error(bytes.fromhex("0001" "0002" "c328" "0001" "74" "00000000"), None)  # bad 2-byte sequence
    assert (e.part, e.position, e.reason) == ("key", 4, INVALID_UTF8)


def test_an_unknown_value_version_is_reported_with_that_version() -> None:
    e = _error(OFFSET_KEY, bytes.fromhex("0005" "00"))
    assert (e.record_type, e.version, e.part, e.position, e.reason) == (1, 5, "value", 0, UNKNOWN_VERSION)
    e = _error(OFFSET_KEY, bytes.fromhex("ffff"))
    assert (e.version, e.reason) == (-1, UNKNOWN_VERSION)
    # type 0 (LegacyOffsetCommitValue) has only version 0 since Kafka 4.1
    legacy_key = b"\x00\x00" + OFFSET_KEY[2:]
    e = _error(legacy_key, bytes.fromhex(V3_HEAD + "0000" "00000000000003e8"))
    assert (e.record_type, e.version, e.reason) == (0, 3, UNKNOWN_VERSION)


def test_a_varint_longer_than_five_bytes_is_invalid() -> None:
    # ConsumerGroupMetadataValue v0: epoch 1, tagged-field count as a 6-byte varint
    e = _error(bytes.fromhex("0003" "0001" "67"), bytes.fromhex("0000" "00000001" "808080808001"))
    assert (e.record_type, e.position, e.reason) == (3, 6, "invalid varint")


def test_decode_error_text_names_type_version_part_and_position() -> None:
    e = _error(OFFSET_KEY, bytes.fromhex(V3_HEAD + "fffe"))
    assert str(e).startswith("[record type 1, version 3] negative length at value byte 14")


# ----------------------------------------------------------------- encode_record


def test_encode_record_defaults_to_the_version_a_current_broker_writes() -> None:
    key = {"group": "g", "topic": "t", "partition": 0}
    _, v = encode_record("offset_commit", key, {"offset": 1, "metadata": "", "commit_timestamp": 2})
    assert v is not None and v[:2] == b"\x00\x04"
    expiring = {"offset": 1, "metadata": "", "commit_timestamp": 2, "expire_timestamp": 3}
    _, v = encode_record("offset_commit", key, expiring)
    assert v is not None and v[:2] == b"\x00\x01"
    _, v = encode_record("group_metadata", {"group": "g"},
                         {"protocol_type": "", "generation": 0, "protocol": None, "leader": None, "members": []})
    assert v is not None and v[:2] == b"\x00\x03"
    _, v = encode_record(3, {"group_id": "g"}, {"epoch": 1})
    assert v == bytes.fromhex("0000" "00000001" "00")


def test_encode_record_rejects_unknown_types_fields_and_versions() -> None:
    with pytest.raises(EncodeError, match="unknown record type"):
        encode_record("no_such_record", {}, None)
    with pytest.raises(EncodeError, match="no field"):
        encode_record("offset_commit", {"group": "g", "topic": "t", "partition": 0, "groupp": 1}, None)
    with pytest.raises(EncodeError, match="versions 0-4"):
        encode_record("offset_commit", {"group": "g", "topic": "t", "partition": 0}, {"offset": 1}, 5)
    with pytest.raises(EncodeError, match="metadata"):
        encode_record("offset_commit", {"group": "g", "topic": "t", "partition": 0}, {"metadata": None}, 3)
    with pytest.raises(EncodeError, match="partition"):
        encode_record("offset_commit", {"group": "g", "topic": "t", "partition": 2**31}, None)
    with pytest.raises(EncodeError, match="32767"):
        encode_record("group_metadata", {"group": "x" * 32768}, None)


def test_fields_absent_at_the_requested_version_are_dropped_when_kafka_calls_them_ignorable() -> None:
    key = {"group": "g", "topic": "t", "partition": 0}
    full = {"offset": 1, "leader_epoch": 9, "metadata": "", "commit_timestamp": 2, "expire_timestamp": 3}
    _, v0 = encode_record("offset_commit", key, full, 0)
    assert v0 == bytes.fromhex("0000" "0000000000000001" "0000" "0000000000000002")


def test_to_json_dict_renders_bytes_as_hex_and_uuids_as_base64url() -> None:
    k, v = encode_record("offset_commit", {"group": "g", "topic": "t", "partition": 0},
                         {"offset": 100, "leader_epoch": 10, "metadata": "metadata", "commit_timestamp": 1234,
                          "topic_id": "MKXx1fIkQy2J9jXHhK8m1w"}, 4)
    record = decode_record(k, v)
    assert record.to_json_dict() == {
        "type": "offset_commit", "key_version": 1, "value_version": 4,
        "key": {"group": "g", "topic": "t", "partition": 0},
        "value": {"offset": 100, "leader_epoch": 10, "metadata": "metadata", "commit_timestamp": 1234,
                  "topic_id": "MKXx1fIkQy2J9jXHhK8m1w"},
    }


@FAST
@given(data=st.data())
def test_the_offset_commit_fast_path_agrees_with_the_table_driven_codec(data: st.DataObject) -> None:
    spec = data.draw(st.sampled_from([s for s in RECORD_SPECS if s.type_id in (0, 1)]))
    version = data.draw(st.sampled_from(spec.value_versions.members(spec.max_value_version)))
    key, value = encode_record(spec.name, data.draw(struct_strategy(spec.key, 0)),
                               data.draw(struct_strategy(spec.value, version)), version)
    if data.draw(st.booleans()):
        value = None
    assert decode_record(key, value) == _decode_generic(spec.type_id, key, value)
