"""KIP-848 records (types 3–8, 16), byte by byte from ConsumerGroup*.json (Kafka 4.3.1):
flexible values with compact fields and tagged sections, including the two tricky tagged
forms — a nullable tagged struct (payload = varint 1 + struct) and a nullable tagged array."""

from __future__ import annotations

import pytest

from decoders import DecodedRecord, DecodeError, decode_record, encode_record
from decoders.errors import OVER_LONG, TRUNCATED
from decoders.wire import Uuid

TOPIC_ID = "00112233445566778899aabbccddeeff"


def _decoded(key: bytes, value: bytes) -> DecodedRecord:
    record = decode_record(key, value)
    assert isinstance(record, DecodedRecord)
    assert encode_record(record.type, record.key, record.value, record.value_version) == (key, value)
    return record


def test_group_metadata_with_the_4_1_metadata_hash_tag() -> None:
    key = bytes.fromhex("0003" "0001" "67")  # type 3 | GroupId "g"
    value = bytes.fromhex(
        "0000"                       # v0, flexible
        "0000000b"                   # Epoch 11
        "01" "00" "08"               # 1 tagged field: tag 0 (MetadataHash), 8 bytes
        "0102030405060708"
    )
    record = _decoded(key, value)
    assert (record.type, record.key) == ("consumer_group_metadata", {"group_id": "g"})
    assert record.value == {"epoch": 11, "metadata_hash": 0x0102030405060708}
    # a 3.8-4.0 record has no tag: the default 0
    assert decode_record(key, bytes.fromhex("0000" "0000000b" "00")).value == {"epoch": 11, "metadata_hash": 0}


def test_member_metadata_with_a_classic_member_as_a_nullable_tagged_struct() -> None:
    key = bytes.fromhex("0005" "0001" "67" "0001" "6d")  # type 5 | GroupId "g" | MemberId "m"
    value = bytes.fromhex(
        "0000"                       # v0
        "00"                         # InstanceId: null
        "00"                         # RackId: null
        "02" "63"                    # ClientId "c"
        "03" "2f68"                  # ClientHost "/h"
        "02" "02" "74"               # SubscribedTopicNames: 1 element, "t"
        "00"                         # SubscribedTopicRegex: null
        "00007530"                   # RebalanceTimeoutMs 30000
        "08" "756e69666f726d"        # ServerAssignor "uniform"
        "01"                         # tagged fields: 1
        "00" "12"                    #   tag 0 (ClassicMemberMetadata), 18 bytes:
        "01"                         #     varint 1: not null (nullable tagged struct marker)
        "00002710"                   #     SessionTimeoutMs 10000
        "02"                         #     SupportedProtocols: 1
        "06" "72616e6765"            #       Name "range"
        "04" "010203"                #       Metadata: 3 bytes
        "00"                         #       ClassicProtocol's tagged fields
        "00"                         #     ClassicMemberMetadata's tagged fields
    )
    record = _decoded(key, value)
    assert record.key == {"group_id": "g", "member_id": "m"}
    assert record.value == {
        "instance_id": None, "rack_id": None, "client_id": "c", "client_host": "/h",
        "subscribed_topic_names": ["t"], "subscribed_topic_regex": None, "rebalance_timeout_ms": 30000,
        "server_assignor": "uniform",
        "classic_member_metadata": {"session_timeout_ms": 10000,
                                    "supported_protocols": [{"name": "range", "metadata": b"\x01\x02\x03"}]},
    }


def test_a_consumer_protocol_member_carries_an_explicit_null_classic_member_metadata() -> None:
    # Kafka sets ClassicMemberMetadata to null for consumer-protocol members; since the JSON's
    # "default": null is a JSON null (= default: the empty struct), that null is written as
    # tag 0, size 1, varint 0 — and an absent tag reads back as the empty struct.
    key = bytes.fromhex("0005" "0001" "67" "0001" "6d")
    head = "0000" "00" "00" "02" "63" "03" "2f68" "01" "00" "00007530" "00"  # ... ServerAssignor null
    record = _decoded(key, bytes.fromhex(head + "01" "00" "01" "00"))
    assert record.value["classic_member_metadata"] is None  # type: ignore[index]
    record = _decoded(key, bytes.fromhex(head + "00"))
    assert record.value["classic_member_metadata"] == {"session_timeout_ms": 0, "supported_protocols": []}  # type: ignore[index]


def test_a_tagged_payload_must_be_exactly_as_long_as_its_field() -> None:
    key = bytes.fromhex("0003" "0001" "67")
    # MetadataHash tag declares 9 bytes but an int64 is 8: the 9th byte is over-long
    value = bytes.fromhex("0000" "0000000b" "01" "00" "09" "0102030405060708" "ff")
    with pytest.raises(DecodeError) as err:
        decode_record(key, value)
    assert (err.value.position, err.value.reason) == (17, OVER_LONG)
    # ... and declaring 4 bytes leaves the int64 truncated inside its payload
    value = bytes.fromhex("0000" "0000000b" "01" "00" "04" "01020304")
    with pytest.raises(DecodeError) as err:
        decode_record(key, value)
    assert (err.value.position, err.value.reason) == (9, TRUNCATED)


def test_current_member_assignment_with_4_3_assignment_epochs() -> None:
    key = bytes.fromhex("0008" "0001" "67" "0001" "6d")  # type 8
    value = bytes.fromhex(
        "0000"                       # v0
        "0000000a"                   # MemberEpoch 10
        "00000009"                   # PreviousMemberEpoch 9
        "00"                         # State 0 = STABLE
        "02"                         # AssignedPartitions: 1
        + TOPIC_ID +                 #   TopicId
        "03" "00000000" "00000001"   #   Partitions [0, 1]
        "01" "00" "09"               #   tagged: 1 field, tag 0 (AssignmentEpochs), 9 bytes
        "03" "0000000a" "0000000a"   #     compact array [10, 10]
        "01"                         # PartitionsPendingRevocation: empty
        "00"                         # value's tagged fields
    )
    record = _decoded(key, value)
    assert record.value == {
        "member_epoch": 10, "previous_member_epoch": 9, "state": 0,
        "assigned_partitions": [{"topic_id": Uuid(bytes.fromhex(TOPIC_ID)), "partitions": [0, 1],
                                 "assignment_epochs": [10, 10]}],
        "partitions_pending_revocation": [],
    }


def test_an_empty_tagged_array_is_the_default_and_a_null_one_is_written_explicitly() -> None:
    # AssignmentEpochs has "default": null in the JSON — a JSON null, which Kafka's generator
    # reads as no default: the empty array is the default (omitted); null is tag 0, size 1, 00.
    base = {"member_epoch": 1, "previous_member_epoch": 0, "state": 0, "partitions_pending_revocation": []}
    tp = {"topic_id": Uuid(bytes(16)), "partitions": []}
    _, with_empty = encode_record("consumer_group_current_member_assignment", {"group_id": "g", "member_id": "m"},
                                  {**base, "assigned_partitions": [{**tp, "assignment_epochs": []}]})
    _, with_null = encode_record("consumer_group_current_member_assignment", {"group_id": "g", "member_id": "m"},
                                 {**base, "assigned_partitions": [{**tp, "assignment_epochs": None}]})
    assert with_empty is not None and with_null is not None
    # the TopicPartitions struct ends: Partitions "01", then its tags: "00" vs "01 00 01 00"
    assert with_empty.endswith(bytes.fromhex("01" "00" "01" "00"))
    assert with_null.endswith(bytes.fromhex("01" "01000100" "01" "00"))
    record = _decoded(bytes.fromhex("0008" "0001" "67" "0001" "6d"), with_null)
    assert record.value["assigned_partitions"][0]["assignment_epochs"] is None  # type: ignore[index]


def test_regular_expression_record_keys_on_the_regex() -> None:
    key = bytes.fromhex("0010" "0001" "67" "0003" "612e2a")  # type 16 | GroupId "g" | RegularExpression "a.*"
    value = bytes.fromhex("0000" "03" "02" "61" "03" "6162" "0000000000000007" "00000000000003e8" "00")
    record = _decoded(key, value)
    assert record.key == {"group_id": "g", "regular_expression": "a.*"}
    assert record.value == {"topics": ["a", "ab"], "version": 7, "timestamp": 1000}


def test_target_assignment_member_and_metadata() -> None:
    key7 = bytes.fromhex("0007" "0001" "67" "0001" "6d")
    value7 = bytes.fromhex("0000" "02" + TOPIC_ID + "02" "00000005" "00" "00")
    assert _decoded(key7, value7).value == {"topic_partitions": [{"topic_id": Uuid(bytes.fromhex(TOPIC_ID)),
                                                                  "partitions": [5]}]}
    key6 = bytes.fromhex("0006" "0001" "67")
    value6 = bytes.fromhex("0000" "00000004" "01" "00" "08" "00000000000003e8")  # AssignmentTimestamp 1000 (4.3)
    assert _decoded(key6, value6).value == {"assignment_epoch": 4, "assignment_timestamp": 1000}
