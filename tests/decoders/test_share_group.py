"""Share-group records (types 9–15), byte by byte from ShareGroup*.json (4.3.1; 4.0 for
type 9), including the 4.0 → 4.1 layout change of types 11 and 15 at the same version."""

from __future__ import annotations

import pytest

from decoders import DecodedRecord, DecodeError, decode_record, encode_record
from decoders.errors import TRUNCATED
from decoders.wire import Uuid

TOPIC_ID = "00112233445566778899aabbccddeeff"
GROUP_KEY = "0001" "67"  # GroupId "g"


def _decoded(key: bytes, value: bytes) -> DecodedRecord:
    record = decode_record(key, value)
    assert isinstance(record, DecodedRecord)
    assert encode_record(record.type, record.key, record.value, record.value_version) == (key, value)
    return record


def test_share_group_metadata_has_the_4_1_untagged_metadata_hash() -> None:
    key = bytes.fromhex("000b" + GROUP_KEY)
    value = bytes.fromhex("0000" "00000002" "00000000000000ff" "00")  # Epoch 2 | MetadataHash 255 | no tags
    assert _decoded(key, value).value == {"epoch": 2, "metadata_hash": 255}


def test_a_4_0_share_group_metadata_record_does_not_fit_the_4_1_layout() -> None:
    key = bytes.fromhex("000b" + GROUP_KEY)
    with pytest.raises(DecodeError) as err:
        decode_record(key, bytes.fromhex("0000" "00000002" "00"))  # 4.0: Epoch 2 | no tags
    assert (err.value.record_type, err.value.position, err.value.reason) == (11, 6, TRUNCATED)


def test_state_partition_metadata_in_the_4_1_layout() -> None:
    key = bytes.fromhex("000f" + GROUP_KEY)
    value = bytes.fromhex(
        "0000"
        "01"                                        # InitializingTopics: none
        "02" + TOPIC_ID + "02" "74" "02" "00000000" "00"  # InitializedTopics: [{id, "t", [0]}]
        "01"                                        # DeletingTopics: none
        "00"
    )
    assert _decoded(key, value).value == {
        "initializing_topics": [],
        "initialized_topics": [{"topic_id": Uuid(bytes.fromhex(TOPIC_ID)), "topic_name": "t", "partitions": [0]}],
        "deleting_topics": [],
    }


def test_type_9_is_decoded_with_its_4_0_layout() -> None:
    key = bytes.fromhex("0009" + GROUP_KEY)
    value = bytes.fromhex(
        "0000"
        "02"                      # Topics: 1
        + TOPIC_ID +
        "02" "74"                 #   TopicName "t"
        "00000001"                #   NumPartitions 1
        "02" "00000000" "02" "04" "723161" "00"  # PartitionMetadata: [{0, ["r1a"]}]
        "00"                      #   TopicMetadata tags
        "00"
    )
    record = _decoded(key, value)
    assert record.type == "share_group_partition_metadata"
    assert record.value["topics"][0]["partition_metadata"] == [{"partition": 0, "racks": ["r1a"]}]  # type: ignore[index]


def test_current_member_assignment_and_member_metadata() -> None:
    key = bytes.fromhex("000e" + GROUP_KEY + "0001" "6d")
    value = bytes.fromhex("0000" "00000003" "00000002" "00" "02" + TOPIC_ID + "02" "00000007" "00" "00")
    assert _decoded(key, value).value == {
        "member_epoch": 3, "previous_member_epoch": 2, "state": 0,
        "assigned_partitions": [{"topic_id": Uuid(bytes.fromhex(TOPIC_ID)), "partitions": [7]}],
    }
    key = bytes.fromhex("000a" + GROUP_KEY + "0001" "6d")
    value = bytes.fromhex("0000" "03" "7231" "02" "63" "03" "2f68" "02" "02" "74" "00")
    assert _decoded(key, value).value == {"rack_id": "r1", "client_id": "c", "client_host": "/h",
                                          "subscribed_topic_names": ["t"]}
