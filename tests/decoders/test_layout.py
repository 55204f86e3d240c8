"""The layout registry and the Spark-free shape derived from it — including a check that
every decoded record conforms to its type's shape, so the Spark schema cannot drift from
the decoder."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decoders import DecodedRecord, decode_record, encode_assignment, encode_record, encode_subscription, struct_shape
from decoders.layout import BY_NAME, RECORD_SPECS, Shape, record_spec
from decoders.wire import Uuid
from tests.decoders.strategies import assignment_strategy, record_cases, struct_strategy, subscription_strategy

KINDS = {"struct", "array", "string", "binary", "uuid", "boolean", "int8", "int16", "uint16", "int32", "int64"}


def _names(shape: Shape) -> list[str]:
    return [c.name for c in shape.children]


def test_record_type_names_are_kafkas_coordinator_record_types_in_snake_case() -> None:
    assert [s.name for s in RECORD_SPECS] == [
        "legacy_offset_commit", "offset_commit", "group_metadata",
        "consumer_group_metadata", "consumer_group_partition_metadata", "consumer_group_member_metadata",
        "consumer_group_target_assignment_metadata", "consumer_group_target_assignment_member",
        "consumer_group_current_member_assignment",
        "share_group_partition_metadata", "share_group_member_metadata", "share_group_metadata",
        "share_group_target_assignment_metadata", "share_group_target_assignment_member",
        "share_group_current_member_assignment", "share_group_state_partition_metadata",
        "consumer_group_regular_expression",
        "streams_group_metadata", "streams_group_member_metadata", "streams_group_target_assignment_metadata",
        "streams_group_target_assignment_member", "streams_group_current_member_assignment", "streams_group_topology",
    ]
    assert record_spec(1) is record_spec("offset_commit") is BY_NAME["offset_commit"]
    with pytest.raises(KeyError):
        record_spec(18)


def test_offset_commit_shape_has_the_documented_names_and_derived_nullability() -> None:
    shape = struct_shape("offset_commit")
    assert _names(shape.child("key")) == ["group", "topic", "partition"]
    value = shape.child("value")
    assert value.nullable  # tombstones
    assert [(c.name, c.kind, c.nullable) for c in value.children] == [
        ("offset", "int64", False),
        ("leader_epoch", "int32", True),       # absent before v3
        ("metadata", "string", False),
        ("commit_timestamp", "int64", False),
        ("expire_timestamp", "int64", True),   # v1 only
        ("topic_id", "uuid", True),            # v4 only
    ]


def test_group_metadata_shape_includes_the_decoded_consumer_protocol() -> None:
    value = struct_shape("group_metadata").child("value")
    assert _names(value) == ["protocol_type", "generation", "protocol", "leader", "current_state_timestamp", "members"]
    member = value.child("members").children[0]
    assert _names(member) == ["member_id", "group_instance_id", "client_id", "client_host", "rebalance_timeout",
                              "session_timeout", "subscription_raw", "assignment_raw", "subscription", "assignment",
                              "undecoded", "undecoded_reason"]
    subscription = member.child("subscription")
    assert subscription.nullable
    assert _names(subscription) == ["topics", "user_data", "owned_partitions", "generation_id", "rack_id", "version",
                                    "sticky_user_data"]
    assert [c.nullable for c in subscription.children] == [False, True, True, True, True, False, True]
    assert _names(member.child("assignment")) == ["partitions", "user_data", "version"]
    assert _names(subscription.child("sticky_user_data")) == ["previous_assignment", "generation"]


def test_kip_848_keys_and_values_use_snake_case_schema_names() -> None:
    shape = struct_shape("consumer_group_current_member_assignment")
    assert _names(shape.child("key")) == ["group_id", "member_id"]
    assert _names(shape.child("value"))[:3] == ["member_epoch", "previous_member_epoch", "state"]
    tp = shape.child("value").child("assigned_partitions").children[0]
    assert [(c.name, c.kind, c.nullable) for c in tp.children] == [
        ("topic_id", "uuid", False), ("partitions", "array", False), ("assignment_epochs", "array", True)]


@pytest.mark.parametrize("spec", RECORD_SPECS, ids=[s.name for s in RECORD_SPECS])
def test_every_shape_uses_only_the_neutral_kinds(spec: Any) -> None:
    def walk(shape: Shape) -> None:
        assert shape.kind in KINDS
        if shape.kind == "array":
            assert len(shape.children) == 1 and not shape.children[0].nullable
        for child in shape.children:
            walk(child)
        names = [c.name for c in shape.children]
        assert len(names) == len(set(names))

    walk(struct_shape(spec.type_id))


_PY_TYPES = {"string": str, "binary": bytes, "uuid": Uuid, "boolean": bool, "int8": int, "int16": int,
             "uint16": int, "int32": int, "int64": int}


def conforms(value: Any, shape: Shape, path: str) -> None:
    if value is None:
        assert shape.nullable, f"{path} is None but not nullable"
        return
    if shape.kind == "struct":
        assert isinstance(value, dict), path
        assert set(value) <= {c.name for c in shape.children}, f"{path}: {set(value)} vs {_names(shape)}"
        for child in shape.children:
            if child.name in value:
                conforms(value[child.name], child, f"{path}.{child.name}")
            else:
                assert child.nullable, f"{path}.{child.name} missing but not nullable"
    elif shape.kind == "array":
        assert isinstance(value, list), path
        for i, item in enumerate(value):
            conforms(item, shape.children[0], f"{path}[{i}]")
    else:
        assert isinstance(value, _PY_TYPES[shape.kind]), f"{path}: {type(value)} is not {shape.kind}"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_decoded_records_conform_to_their_shape(data: st.DataObject) -> None:
    spec, version = data.draw(st.sampled_from(record_cases()))
    value = data.draw(struct_strategy(spec.value, version))
    if spec.name == "group_metadata":
        value["protocol_type"] = data.draw(st.sampled_from(["consumer", "connect", value["protocol_type"]]))
        value["protocol"] = data.draw(st.sampled_from(["sticky", "cooperative-sticky", value["protocol"]]))
        for member in value["members"]:  # mostly well-formed consumer-protocol blobs
            if data.draw(st.integers(0, 3)):
                cp = data.draw(st.integers(0, 3))
                member["subscription_raw"] = encode_subscription(data.draw(subscription_strategy(cp)), cp)
                member["assignment_raw"] = encode_assignment(data.draw(assignment_strategy(cp)), cp)
    key_bytes, value_bytes = encode_record(spec.name, data.draw(struct_strategy(spec.key, 0)), value, version)
    record = decode_record(key_bytes, value_bytes if data.draw(st.integers(0, 9)) else None)
    assert isinstance(record, DecodedRecord)
    as_row = {"type": record.type, "key_version": record.key_version, "value_version": record.value_version,
              "key": record.key, "value": record.value}
    conforms(as_row, struct_shape(spec.name), spec.name)
