"""The generated readers (decoders.readers) against their reference, the table-driven codec.

For every record type and value version a valid record decodes through the generated path
to the very same DecodedRecord as through the codec (same values, same types, same key
order); a malformed one is never accepted by the generated path, and decode_record then
raises the very same DecodeError as the codec. The consumer-protocol blobs inside
GroupMetadata and the sticky assignors' user data are checked the same way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decoders import (
    DecodedRecord,
    DecodeError,
    codec,
    decode_assignment,
    decode_record,
    decode_subscription,
    encode_record,
)
from decoders.consumer_group import CONSUMER_GROUP_MEMBER_METADATA_VALUE
from decoders.consumer_protocol import assignment_reader, encode_assignment, encode_subscription, subscription_reader
from decoders.group_metadata import GROUP_METADATA_VALUE, MEMBER_METADATA
from decoders.layout import RECORD_SPECS
from decoders.readers import IRREGULAR, reader_source
from decoders.records import UnknownRecord, _decode_generated, _decode_generic
from decoders.spec import RecordSpec
from decoders.sticky_user_data import decode_sticky_user_data, encode_sticky_user_data, sticky_user_data_reader
from decoders.wire import Uuid
from tests.decoders.strategies import (
    TOPIC_ASSIGNMENTS,
    assignment_strategy,
    mutated,
    record_cases,
    struct_strategy,
    subscription_strategy,
)

CLASSIC_MEMBER_METADATA = CONSUMER_GROUP_MEMBER_METADATA_VALUE.field_named("classic_member_metadata").type
PER_CASE = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MANY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

CASES = record_cases()
CASE_IDS = [f"{spec.name}-v{v}" for spec, v in CASES]


def _json(record: DecodedRecord | UnknownRecord) -> str:
    """The record as the CLI prints it: key order, and bytes versus uuids, show here."""
    return json.dumps(record.to_json_dict())


def _outcome(decode: Callable[..., DecodedRecord | UnknownRecord], *args: Any) -> tuple[Any, ...]:
    try:
        record = decode(*args)
    except DecodeError as exc:
        return ("error", exc.record_type, exc.version, exc.part, exc.position, exc.reason, exc.detail)
    return ("record", record, _json(record))


def _record_type(key: bytes) -> int:
    return int.from_bytes(key[:2], "big", signed=True)


def _assert_generated_path_agrees(key: bytes, value: bytes | None, *, must_be_generated: bool = False) -> None:
    """The generated reader gives the codec's record or hands over; decode_record gives the
    codec's record or the codec's DecodeError."""
    record_type = _record_type(key)
    reference = _outcome(_decode_generic, record_type, key, value)
    generated = _decode_generated(record_type, key, value)
    if reference[0] == "error":
        assert generated is None, f"the generated reader accepted what the codec rejects: {reference}"
    elif generated is not None:
        assert ("record", generated, _json(generated)) == reference
    else:
        assert not must_be_generated, "the generated reader handed a valid record over to the codec"
    assert _outcome(decode_record, key, value) == reference


# ----------------------------------------------------------------- every type and version


@pytest.mark.parametrize(("spec", "version"), CASES, ids=CASE_IDS)
def test_every_type_and_version_decodes_through_its_generated_reader_as_through_the_codec(
    spec: RecordSpec, version: int
) -> None:
    @PER_CASE
    @given(key=struct_strategy(spec.key, 0), value=struct_strategy(spec.value, version), tombstone=st.booleans())
    def same_record(key: dict[str, Any], value: dict[str, Any], tombstone: bool) -> None:
        key_bytes, value_bytes = encode_record(spec.name, key, None if tombstone else value, version)
        _assert_generated_path_agrees(key_bytes, value_bytes, must_be_generated=True)

    same_record()


@MANY
@given(data=st.data())
def test_mutated_records_of_every_type_decode_or_fail_exactly_as_through_the_codec(data: st.DataObject) -> None:
    spec, version = data.draw(st.sampled_from(CASES))
    key, value = encode_record(spec.name, data.draw(struct_strategy(spec.key, 0)),
                               data.draw(struct_strategy(spec.value, version)), version)
    assert value is not None
    if data.draw(st.booleans()):
        value = mutated(data, value)
    else:
        key = key[:2] + mutated(data, key)[2:]
    _assert_generated_path_agrees(key, value)


@MANY
@given(
    type_id=st.sampled_from([s.type_id for s in RECORD_SPECS]),
    key_tail=st.binary(max_size=24),
    version=st.integers(-1, 5),
    value_tail=st.binary(max_size=120),
)
def test_arbitrary_bytes_behind_a_known_type_are_refused_by_the_generated_reader_where_the_codec_refuses_them(
    type_id: int, key_tail: bytes, version: int, value_tail: bytes
) -> None:
    key = type_id.to_bytes(2, "big") + key_tail
    _assert_generated_path_agrees(key, version.to_bytes(2, "big", signed=True) + value_tail)


def test_an_unknown_record_type_is_an_unknown_record_on_both_paths() -> None:
    key, value = bytes.fromhex("0012" "0001" "67"), b"\x00\x00junk"
    assert _decode_generated(18, key, value) == _decode_generic(18, key, value) == UnknownRecord(18, key, value)


# ----------------------------------------------------------------- wire corners


def test_long_strings_and_long_lists_need_multi_byte_varints_and_read_as_through_the_codec() -> None:
    # Compact lengths of 127 bytes or more take two varint bytes; 256+ partitions leave the
    # precompiled small-array Structs.
    member = {"instance_id": "i" * 127, "rack_id": None, "client_id": "c" * 300, "client_host": "/10.0.0.1",
              "subscribed_topic_names": [f"topic-{t}" for t in range(200)], "subscribed_topic_regex": "x" * 200,
              "rebalance_timeout_ms": 300_000, "server_assignor": "uniform",
              "classic_member_metadata": {"session_timeout_ms": 45_000,
                                          "supported_protocols": [{"name": "range", "metadata": b"m" * 400}]}}
    key, value = encode_record(5, {"group_id": "g" * 500, "member_id": "m"}, member)
    _assert_generated_path_agrees(key, value, must_be_generated=True)
    assignment = {"member_epoch": 3, "previous_member_epoch": 2, "state": 0,
                  "assigned_partitions": [{"topic_id": Uuid(bytes([t]) * 16), "partitions": list(range(300 + t)),
                                           "assignment_epochs": [3] * (300 + t)} for t in range(130)],
                  "partitions_pending_revocation": []}
    key, value = encode_record(8, {"group_id": "g", "member_id": "m"}, assignment)
    _assert_generated_path_agrees(key, value, must_be_generated=True)


def test_unknown_tags_are_skipped_and_a_repeated_tag_keeps_its_last_value_on_both_paths() -> None:
    key = bytes.fromhex("0003" "0001" "67")  # ConsumerGroupMetadataKey, group "g"
    epoch = "0000" "00000007"  # value v0, Epoch 7
    tags = [
        "02" "05" "02" "aabb" "00" "08" "0000000000000009",  # unknown tag 5, then MetadataHash 9
        "02" "00" "08" "0000000000000001" "00" "08" "0000000000000009",  # MetadataHash twice
        "8200" "00" "08" "0000000000000009" "05" "00",  # a 2-byte varint count (non-canonical 2)
        "01" "00" "8800" "0000000000000009",  # a 2-byte varint size (non-canonical 8)
        "01" "00" "07" "00000000000009",  # MetadataHash in 7 bytes: truncated
        "01" "00" "09" "000000000000000900",  # MetadataHash in 9 bytes: a byte left over
        "01" "7f" "00",  # unknown tag 127, empty
        "01" "8080808000" "08" "0000000000000009",  # tag 0 as a 5-byte varint: the longest allowed
        "01" "808080808000" "08" "0000000000000009",  # tag 0 as a 6-byte varint: too long
        "01" "ffffffff1f" "00",  # a tag above 32 bits
    ]
    for tail in tags:
        _assert_generated_path_agrees(key, bytes.fromhex(epoch + tail))


def test_a_negative_length_other_than_minus_one_is_refused_even_where_the_field_is_nullable() -> None:
    key = bytes.fromhex("0002" "0001" "67")  # GroupMetadataKey, group "g"
    # GroupMetadataValue v3: protocolType "" | generation 0 | protocol: length -2 | leader null |
    # currentStateTimestamp -1 | no members
    head, tail = "0003" "0000" "00000000", "ffff" "ffffffffffffffff" "00000000"
    _assert_generated_path_agrees(key, bytes.fromhex(head + "fffe" + tail))
    # ... and the same with -1, which is null
    _assert_generated_path_agrees(key, bytes.fromhex(head + "ffff" + tail), must_be_generated=True)


def test_a_compact_string_longer_than_32767_bytes_is_refused_as_kafka_refuses_it() -> None:
    key = bytes.fromhex("000a" "0001" "67" "0001" "6d")  # ShareGroupMemberMetadataKey, group "g", member "m"
    rack = b"a" * 32768
    # ShareGroupMemberMetadataValue v0: RackId of 32768 bytes | ClientId "" | ClientHost "" | no topics | no tags
    too_long = b"\x00\x00" + bytes([0x81, 0x80, 0x02]) + rack + bytes.fromhex("01" "01" "01" "00")
    _assert_generated_path_agrees(key, too_long)
    longest = b"\x00\x00" + bytes([0x80, 0x80, 0x02]) + rack[1:] + bytes.fromhex("01" "01" "01" "00")
    _assert_generated_path_agrees(key, longest, must_be_generated=True)


def test_a_tagged_struct_must_fill_its_payload_exactly() -> None:
    classic = {"session_timeout_ms": 45_000, "supported_protocols": [{"name": "range", "metadata": b"\x00\x03"}]}
    member = {"instance_id": None, "rack_id": None, "client_id": "c", "client_host": "h",
              "subscribed_topic_names": [], "subscribed_topic_regex": None, "rebalance_timeout_ms": 1,
              "server_assignor": None, "classic_member_metadata": classic}
    key, value = encode_record(5, {"group_id": "g", "member_id": "m"}, member)
    # The value ends with its tagged section: 1 field, tag 0, the size, then the payload:
    # varint 1 ("not null") and the struct.
    payload = b"\x01" + bytes(codec.encode_struct(CLASSIC_MEMBER_METADATA, classic, 0, True))
    assert value is not None and value.endswith(bytes([1, 0, len(payload)]) + payload)
    head = value[: -len(payload) - 1]
    _assert_generated_path_agrees(key, value, must_be_generated=True)
    _assert_generated_path_agrees(key, head + bytes([len(payload) + 1]) + payload + b"\x00")  # a byte left over
    _assert_generated_path_agrees(key, head + bytes([len(payload) - 1]) + payload[:-1])  # the struct cut short


def test_a_nullable_struct_is_present_unless_its_int8_marker_is_negative() -> None:
    member = {"instance_id": None, "rack_id": None, "client_id": "c", "client_host": "h", "rebalance_timeout_ms": 1,
              "topology_epoch": 2, "process_id": "p", "user_endpoint": {"host": "h", "port": 9092}, "client_tags": []}
    key, value = encode_record(19, {"group_id": "g", "member_id": "m"}, member)
    assert value is not None
    endpoint = bytes.fromhex("01" "0268" "2384" "00")  # marker 1 | host "h" | port 9092 | no tags
    at = value.index(endpoint)
    for marker in (0x00, 0x01, 0x7F, 0x80, 0xFF):  # 0 and 127 mean present too; any negative means null
        edited = value[:at] + bytes([marker]) + value[at + 1:]
        _assert_generated_path_agrees(key, edited, must_be_generated=marker < 0x80)


def test_a_list_of_strings_read_again_is_a_fresh_list() -> None:
    # A []string field remembers the last list it read: the next record with the same bytes
    # must still get a list of its own.
    value = {"instance_id": None, "rack_id": None, "client_id": "c", "client_host": "h",
             "subscribed_topic_names": ["orders", "payments"], "subscribed_topic_regex": None,
             "rebalance_timeout_ms": 1, "server_assignor": None, "classic_member_metadata": None}
    key, value_bytes = encode_record(5, {"group_id": "g", "member_id": "m"}, value)
    first = decode_record(key, value_bytes)
    assert isinstance(first, DecodedRecord) and first.value is not None
    first.value["subscribed_topic_names"].append("changed by the caller")
    _assert_generated_path_agrees(key, value_bytes, must_be_generated=True)
    # ... and a list that starts with the same bytes but is longer is read afresh.
    longer = {**value, "subscribed_topic_names": ["orders", "payments", "refunds"]}
    _assert_generated_path_agrees(*encode_record(5, {"group_id": "g", "member_id": "m"}, longer),
                                  must_be_generated=True)
    _assert_generated_path_agrees(key, value_bytes, must_be_generated=True)


def test_a_run_of_fixed_size_fields_is_read_with_one_unpack() -> None:
    # MemberMetadata v3: rebalanceTimeout int32, sessionTimeout int32, then the subscription's
    # int32 length: three ints, one unpack_from.
    source = reader_source(MEMBER_METADATA, 3, False)
    assert "f_rebalance_timeout, f_session_timeout, n_f_subscription_raw = _unpack_iii(buf, p)" in source


# ----------------------------------------------------------------- GroupMetadata with consumer-protocol blobs

ASSIGNORS = st.sampled_from(["range", "roundrobin", "sticky", "cooperative-sticky", "stream", None])


@st.composite
def sticky_user_data(draw: st.DrawFn, assignor: str | None) -> bytes | None:
    if assignor == "cooperative-sticky":
        valid = {"previous_assignment": None, "generation": draw(st.integers(-(2**31), 2**31 - 1))}
    else:
        valid = {"previous_assignment": draw(TOPIC_ASSIGNMENTS),
                 "generation": draw(st.none() | st.integers(-(2**31), 2**31 - 1))}
    return draw(st.sampled_from([encode_sticky_user_data(valid), None, b""]) | st.binary(max_size=12))


@st.composite
def subscription_blob(draw: st.DrawFn, assignor: str | None, damaged: bool = True) -> bytes:
    """A subscription as a client of any version sends it: future versions (read with the
    newest layout) and trailing bytes included; sometimes cut short, unless not ``damaged``."""
    version = draw(st.integers(0, 5))
    value = draw(subscription_strategy(min(version, 3)))
    value["user_data"] = draw(sticky_user_data(assignor))
    blob = version.to_bytes(2, "big") + encode_subscription(value, min(version, 3))[2:]
    blob += draw(st.sampled_from([b"", b"\x00", b"\xff\xff\xff"]))
    if not damaged:
        return blob
    return draw(st.just(blob) | st.builds(lambda n: blob[:n], st.integers(0, len(blob))))


@st.composite
def assignment_blob(draw: st.DrawFn, damaged: bool = True) -> bytes:
    version = draw(st.integers(0, 5))
    value = draw(assignment_strategy(min(version, 3)))
    blob = version.to_bytes(2, "big") + encode_assignment(value, min(version, 3))[2:]
    if not damaged:
        return blob
    return draw(st.sampled_from([blob, b""]) | st.builds(lambda n: blob[:n], st.integers(0, len(blob))))


@st.composite
def consumer_group_metadata(draw: st.DrawFn) -> tuple[bytes, bytes]:
    version = draw(st.integers(0, 4))
    assignor = draw(ASSIGNORS)
    members = []
    for _ in range(draw(st.integers(0, 4))):
        member = draw(struct_strategy(MEMBER_METADATA, version))
        member["subscription_raw"] = draw(subscription_blob(assignor))
        member["assignment_raw"] = draw(assignment_blob())
        members.append(member)
    value = draw(struct_strategy(GROUP_METADATA_VALUE, version))
    value.update(protocol_type=draw(st.sampled_from(["consumer", "consumer", "connect", ""])),
                 protocol=assignor, members=members)
    key, value_bytes = encode_record("group_metadata", {"group": "g"}, value, version)
    assert value_bytes is not None
    return key, value_bytes


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record=consumer_group_metadata())
def test_group_metadata_with_consumer_protocol_blobs_decodes_as_through_the_codec(record: tuple[bytes, bytes]) -> None:
    # Damaged blobs leave a member undecoded with the codec's reason; the record still decodes.
    _assert_generated_path_agrees(*record, must_be_generated=True)


@PER_CASE
@given(record=consumer_group_metadata(), data=st.data())
def test_damaged_group_metadata_decodes_or_fails_exactly_as_through_the_codec(
    record: tuple[bytes, bytes], data: st.DataObject
) -> None:
    key, value = record
    _assert_generated_path_agrees(key, mutated(data, value))


def _big_group(members: int, topics: int, partitions_per_topic: int) -> tuple[bytes, bytes]:
    names = [f"orders.topic-{t:02d}" for t in range(topics)]
    slots = [(name, p) for name in names for p in range(partitions_per_topic)]
    per_member = len(slots) // members
    member_dicts = []
    for m in range(members):
        mine: dict[str, list[int]] = {}
        for name, p in slots[m * per_member:(m + 1) * per_member]:
            mine.setdefault(name, []).append(p)
        owned = [{"topic": name, "partitions": ps} for name, ps in mine.items()]
        member_dicts.append({
            "member_id": f"consumer-{m}-0f5c", "group_instance_id": None, "client_id": f"consumer-{m}",
            "client_host": f"/10.0.{m // 250}.{m % 250}", "rebalance_timeout": 300_000, "session_timeout": 45_000,
            "subscription_raw": encode_subscription({
                "topics": names, "user_data": encode_sticky_user_data({"previous_assignment": None, "generation": 9}),
                "owned_partitions": owned, "generation_id": 9, "rack_id": f"rack-{m % 3}"}, 3),
            "assignment_raw": encode_assignment({"partitions": owned, "user_data": None}, 3),
        })
    value = {"protocol_type": "consumer", "generation": 9, "protocol": "cooperative-sticky",
             "leader": member_dicts[0]["member_id"], "current_state_timestamp": 1_700_000_000_000,
             "members": member_dicts}
    key, value_bytes = encode_record("group_metadata", {"group": "big"}, value, 3)
    assert value_bytes is not None
    return key, value_bytes


def test_a_group_of_200_members_and_1000_assigned_partitions_decodes_as_through_the_codec() -> None:
    key, value = _big_group(members=200, topics=20, partitions_per_topic=50)
    record = decode_record(key, value)
    assert isinstance(record, DecodedRecord) and record.value is not None
    members = record.value["members"]
    assert len(members) == 200
    assert sum(len(tp["partitions"]) for m in members for tp in m["assignment"]["partitions"]) == 1000
    _assert_generated_path_agrees(key, value, must_be_generated=True)


# ----------------------------------------------------------------- the blobs on their own


def _blob_outcome(read: Callable[[], dict[str, Any]]) -> tuple[str, Any]:
    try:
        return ("value", read())
    except DecodeError:
        return ("error", None)


@MANY
@given(assignor=ASSIGNORS, data=st.data())
def test_the_subscription_reader_returns_what_decode_subscription_returns_or_hands_over(
    assignor: str | None, data: st.DataObject
) -> None:
    blob = data.draw(subscription_blob(assignor) | st.binary(max_size=40))
    reference = _blob_outcome(lambda: decode_subscription(blob, assignor))
    try:
        generated = subscription_reader(assignor)(blob)
    except IRREGULAR:
        return  # handed over: decode_subscription then runs, whatever it says
    assert reference == ("value", generated)
    assert list(generated) == list(reference[1])


@MANY
@given(data=st.data())
def test_the_assignment_reader_returns_what_decode_assignment_returns_or_hands_over(data: st.DataObject) -> None:
    blob = data.draw(assignment_blob() | st.binary(max_size=40))
    reference = _blob_outcome(lambda: decode_assignment(blob))
    try:
        generated = assignment_reader()(blob)
    except IRREGULAR:
        return
    assert reference == ("value", generated)
    assert list(generated) == list(reference[1])


@MANY
@given(assignor=ASSIGNORS, data=st.data())
def test_the_sticky_user_data_reader_returns_what_decode_sticky_user_data_returns(
    assignor: str | None, data: st.DataObject
) -> None:
    user_data = data.draw(sticky_user_data(assignor))
    assert sticky_user_data_reader(assignor)(user_data) == decode_sticky_user_data(user_data, assignor)


@MANY
@given(assignor=ASSIGNORS, data=st.data())
def test_blobs_as_clients_send_them_are_read_by_the_generated_readers_not_handed_over(
    assignor: str | None, data: st.DataObject
) -> None:
    subscription = data.draw(subscription_blob(assignor, damaged=False))
    assert subscription_reader(assignor)(subscription) == decode_subscription(subscription, assignor)
    assignment = data.draw(assignment_blob(damaged=False))
    assert assignment_reader()(assignment) == decode_assignment(assignment)
