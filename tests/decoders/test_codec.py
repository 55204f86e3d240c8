"""The table-driven codec's rules for tagged fields and versions."""

from __future__ import annotations

import pytest

from decoders import codec
from decoders.errors import EncodeError
from decoders.spec import field, struct
from decoders.sticky_user_data import STICKY_ASSIGNOR_USER_DATA
from decoders.streams_group import STREAMS_GROUP_METADATA_VALUE

TWO_TAGS = struct(
    "TwoTags",
    field("A", "int32", "0+"),
    field("Late", "int8", "0+", tag=7, tagged="0+", default=0),
    field("Early", "int8", "0+", tag=2, tagged="0+", default=0),
)


def test_tagged_fields_are_written_in_ascending_tag_order_whatever_the_declaration_order() -> None:
    out = codec.encode_struct(TWO_TAGS, {"a": 1, "late": 5, "early": 6}, 0, True)
    assert out.hex() == "00000001" "02" "02" "01" "06" "07" "01" "05"


def test_tagged_fields_at_their_default_are_not_written() -> None:
    assert codec.encode_struct(TWO_TAGS, {"a": 1, "late": 0}, 0, True).hex() == "00000001" "00"


def test_tags_are_read_in_any_order_and_absent_ones_take_their_default() -> None:
    one = bytes.fromhex("00000001" "01" "07" "01" "05")
    value, _ = codec.decode_struct(TWO_TAGS, one, 0, len(one), 0, True)
    assert value == {"a": 1, "late": 5, "early": 0} and list(value) == ["a", "late", "early"]
    two = bytes.fromhex("00000001" "02" "07" "01" "05" "02" "01" "06")
    value, _ = codec.decode_struct(TWO_TAGS, two, 0, len(two), 0, True)
    assert value == {"a": 1, "late": 5, "early": 6}


def test_streams_metadata_tags_come_out_ascending() -> None:
    configs = [{"key": "a", "value": "b"}]
    value = {"epoch": 1, "metadata_hash": 0, "last_assignment_configs": configs, "validated_topology_epoch": 4}
    out = codec.encode_struct(STREAMS_GROUP_METADATA_VALUE, value, 0, True)
    # ... "02" tags | tag 0, 4 bytes, int32 4 | tag 1, 6 bytes, [{"a": "b"}]
    assert out.hex().endswith("02" "00" "04" "00000004" "01" "06" "02" "0261" "0262" "00")


def test_a_json_null_default_means_the_empty_array_and_null_is_written_explicitly() -> None:
    # LastAssignmentConfigs says "default": null (JSON null) = no default (FieldSpec.fieldDefault):
    # the empty array is the default and is omitted; a null is tag 1, size 1, varint 0.
    spec = STREAMS_GROUP_METADATA_VALUE
    base = {"epoch": 1, "metadata_hash": 0}
    empty = codec.encode_struct(spec, {**base, "last_assignment_configs": []}, 0, True)
    assert empty.hex() == "00000001" "0000000000000000" "00"
    null = codec.encode_struct(spec, {**base, "last_assignment_configs": None}, 0, True)
    assert null.hex() == "00000001" "0000000000000000" "01" "01" "01" "00"
    absent, _ = codec.decode_struct(spec, bytes(empty), 0, len(empty), 0, True)
    assert absent["last_assignment_configs"] == []


def test_a_non_ignorable_field_absent_from_the_version_must_hold_its_default() -> None:
    with pytest.raises(EncodeError, match="not ignorable"):
        codec.encode_struct(STICKY_ASSIGNOR_USER_DATA, {"previous_assignment": [], "generation": 5}, 0, False)
    at_default = {"previous_assignment": [], "generation": -1}
    assert codec.encode_struct(STICKY_ASSIGNOR_USER_DATA, at_default, 0, False) == b"\0\0\0\0"


def test_encoder_errors_name_the_field_path() -> None:
    with pytest.raises(EncodeError, match=r"StickyAssignorUserData.previous_assignment: \[0\]: TopicAssignment.topic"):
        bad_topic = {"previous_assignment": [{"topic": 1, "partitions": []}]}
        codec.encode_struct(STICKY_ASSIGNOR_USER_DATA, bad_topic, 0, False)
    with pytest.raises(EncodeError, match="expected an int"):
        codec.encode_struct(TWO_TAGS, {"a": "1"}, 0, True)
    with pytest.raises(EncodeError, match="expected a dict"):
        codec.encode_struct(TWO_TAGS, [1], 0, True)
