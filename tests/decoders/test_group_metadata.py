"""Classic group records (type 2), byte by byte, and the consumer-protocol bytes inside.

Vectors are spelled out from GroupMetadataValue.json (and the v0–v3 Scala schemas in
GroupMetadataManager.scala 2.7) and ConsumerProtocol{Subscription,Assignment}.json — not
produced by our encoder.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoders import DecodedRecord, EncodeError, decode_record, encode_record
from decoders.consumer_protocol import encode_subscription
from tests.decoders.strategies import TOPIC_ASSIGNMENTS, assignment_strategy, subscription_strategy

KEY = bytes.fromhex("0002" "0005" "67726f7570")  # type 2 | group "group"

CONSUMER = "0008" "636f6e73756d6572"  # "consumer", int16 length


def _decoded(value: bytes) -> DecodedRecord:
    record = decode_record(KEY, value)
    assert isinstance(record, DecodedRecord)
    assert (record.type, record.key_version, record.key) == ("group_metadata", 2, {"group": "group"})
    assert encode_record(record.type, record.key, record.value, record.value_version) == (KEY, value)
    return record


def test_value_v0_with_a_range_consumer() -> None:
    subscription = bytes.fromhex(
        "0000"                    # ConsumerProtocolSubscription v0
        "00000001" "0001" "74"    # topics: ["t"]
        "ffffffff"                # userData: null
    )
    assignment = bytes.fromhex(
        "0000"                    # ConsumerProtocolAssignment v0
        "00000001"                # 1 topic
        "0001" "74"               #   topic "t"
        "00000002" "00000000" "00000001"  # partitions [0, 1]
        "ffffffff"                # userData: null
    )
    value = bytes.fromhex(
        "0000"                    # value version 0 (IBP < 0.10.1)
        + CONSUMER                # protocolType "consumer"
        + "00000001"              # generation 1
        "0005" "72616e6765"       # protocol "range"
        "0002" "6d31"             # leader "m1"
        "00000001"                # members: 1
        "0002" "6d31"             #   memberId "m1"
        "0001" "63"               #   clientId "c"
        "0002" "2f68"             #   clientHost "/h"
        "00002710"                #   sessionTimeout 10000
        "0000000d"                #   subscription: 13 bytes
    ) + subscription + bytes.fromhex("00000019") + assignment  # assignment: 25 bytes
    record = _decoded(value)
    assert record.value_version == 0
    assert record.value == {
        "protocol_type": "consumer", "generation": 1, "protocol": "range", "leader": "m1",
        "members": [{
            "member_id": "m1", "client_id": "c", "client_host": "/h", "session_timeout": 10000,
            "subscription_raw": subscription, "assignment_raw": assignment,
            "subscription": {"topics": ["t"], "user_data": None, "version": 0, "sticky_user_data": None},
            "assignment": {"partitions": [{"topic": "t", "partitions": [0, 1]}], "user_data": None, "version": 0},
            "undecoded": False, "undecoded_reason": None,
        }],
    }


def test_value_v1_of_a_connect_group_keeps_raw_bytes_and_says_so() -> None:
    value = bytes.fromhex(
        "0001"                          # value version 1 (KIP-62: adds rebalanceTimeout)
        "0007" "636f6e6e656374"         # protocolType "connect"
        "00000002"                      # generation 2
        "0009" "73657373696f6e6564"     # protocol "sessioned"
        "0001" "77"                     # leader "w"
        "00000001"                      # members: 1
        "0001" "77"                     #   memberId "w"
        "0001" "63"                     #   clientId "c"
        "0002" "2f68"                   #   clientHost "/h"
        "0000ea60"                      #   rebalanceTimeout 60000
        "00002710"                      #   sessionTimeout 10000
        "00000003" "010203"             #   subscription: 3 opaque bytes
        "00000000"                      #   assignment: empty
    )
    member = _decoded(value).value["members"][0]  # type: ignore[index]
    assert member["rebalance_timeout"] == 60000
    assert member["subscription_raw"] == b"\x01\x02\x03" and member["assignment_raw"] == b""
    assert member["subscription"] is None and member["assignment"] is None
    assert member["undecoded"] is True
    assert member["undecoded_reason"] == "protocol type 'connect' is not the consumer protocol"


def test_value_v2_of_an_empty_group() -> None:
    value = bytes.fromhex(
        "0002"                # value version 2 (KIP-211: adds currentStateTimestamp)
        + CONSUMER            # protocolType "consumer"
        + "00000005"          # generation 5
        "ffff"                # protocol: null
        "ffff"                # leader: null
        "00000000000003e8"    # currentStateTimestamp 1000
        "00000000"            # members: none
    )
    assert _decoded(value).value == {"protocol_type": "consumer", "generation": 5, "protocol": None, "leader": None,
                                     "current_state_timestamp": 1000, "members": []}


def test_value_v3_with_a_static_sticky_member() -> None:
    sticky_user_data = bytes.fromhex(
        "00000001" "0001" "74" "00000001" "00000002"  # previous_assignment: [t: [2]]
        "00000006"                                    # generation 6 (StickyAssignorUserData v1)
    )
    subscription = bytes.fromhex(
        "0001"                            # ConsumerProtocolSubscription v1 (Kafka 2.4-3.3)
        "00000001" "0001" "74"            # topics ["t"]
        "00000013"                        # userData: 19 bytes
    ) + sticky_user_data + bytes.fromhex(
        "00000001" "0001" "74" "00000001" "00000002"  # ownedPartitions [t: [2]]
    )
    assignment = bytes.fromhex("0001" "00000001" "0001" "74" "00000001" "00000002" "ffffffff")
    value = bytes.fromhex(
        "0003"                # value version 3 (KIP-345), what 2.3 .. 4.3 write
        + CONSUMER
        + "00000007"          # generation 7
        "0006" "737469636b79" # protocol "sticky"
        "0001" "6d"           # leader "m"
        "00000000000003e8"    # currentStateTimestamp 1000
        "00000001"            # members: 1
        "0001" "6d"           #   memberId "m"
        "0002" "6931"         #   groupInstanceId "i1"
        "0001" "63"           #   clientId "c"
        "0002" "2f68"         #   clientHost "/h"
        "0000ea60"            #   rebalanceTimeout 60000
        "00002710"            #   sessionTimeout 10000
        "0000002f"            #   subscription: 47 bytes
    ) + subscription + bytes.fromhex("00000015") + assignment  # assignment: 21 bytes
    member = _decoded(value).value["members"][0]  # type: ignore[index]
    assert member["group_instance_id"] == "i1"
    assert member["subscription"] == {
        "topics": ["t"], "user_data": sticky_user_data,
        "owned_partitions": [{"topic": "t", "partitions": [2]}], "version": 1,
        "sticky_user_data": {"previous_assignment": [{"topic": "t", "partitions": [2]}], "generation": 6},
    }
    assert member["assignment"] == {"partitions": [{"topic": "t", "partitions": [2]}], "user_data": None, "version": 1}


def test_value_v4_is_flexible_with_compact_fields_and_tagged_sections() -> None:
    subscription = bytes.fromhex(
        "0001"                              # ConsumerProtocolSubscription v1 (never flexible)
        "00000001" "0001" "74"              # topics ["t"]
        "00000004" "00000003"               # userData: 4 bytes = cooperative-sticky generation 3
        "00000001" "0001" "74" "00000001" "00000000"  # ownedPartitions [t: [0]]
    )
    value = bytes.fromhex(
        "0004"                              # value version 4: flexible (KIP-915), never written
        "09" "636f6e73756d6572"             # protocolType: varint 9 = 8 + 1, "consumer"
        "00000003"                          # generation 3
        "13" "636f6f7065726174697665" "2d737469636b79"  # protocol: 18 + 1, "cooperative-sticky"
        "02" "6d"                           # leader "m"
        "00000000000003e8"                  # currentStateTimestamp 1000
        "02"                                # members: varint 2 = 1 + 1
        "02" "6d"                           #   memberId "m"
        "00"                                #   groupInstanceId: null
        "02" "63"                           #   clientId "c"
        "03" "2f68"                         #   clientHost "/h"
        "0000ea60"                          #   rebalanceTimeout 60000
        "00002710"                          #   sessionTimeout 10000
        "21"                                #   subscription: varint 33 = 32 + 1
    ) + subscription + bytes.fromhex(
        "01"                                #   assignment: varint 1 = empty
        "00"                                #   member's tagged fields: none
        "00"                                # value's tagged fields: none
    )
    record = _decoded(value)
    member = record.value["members"][0]  # type: ignore[index]
    assert record.value["protocol"] == "cooperative-sticky"  # type: ignore[index]
    assert member["group_instance_id"] is None
    assert member["subscription"]["sticky_user_data"] == {"previous_assignment": None, "generation": 3}
    assert member["subscription"]["owned_partitions"] == [{"topic": "t", "partitions": [0]}]
    # Empty assignment bytes are normal (members the leader did not assign): not "undecoded".
    assert (member["assignment_raw"], member["assignment"], member["undecoded"]) == (b"", None, False)


def test_malformed_consumer_protocol_bytes_leave_the_member_undecoded_not_the_record() -> None:
    value = bytes.fromhex(
        "0000" + CONSUMER + "00000001" "0005" "72616e6765" "0001" "6d" "00000001"
        "0001" "6d" "0001" "63" "0002" "2f68" "00002710"
        "00000006" "0000" "00000005"        # subscription: v0 claiming 5 topics, none follow
        "00000000"                          # assignment: empty
    )
    member = _decoded(value).value["members"][0]  # type: ignore[index]
    assert member["subscription"] is None and member["undecoded"] is True
    assert member["undecoded_reason"].startswith("subscription: [version 0] truncated at subscription byte 2")


def _members(key: bytes, value: bytes | None) -> list[dict[str, Any]]:
    record = decode_record(key, value)
    assert isinstance(record, DecodedRecord) and record.value is not None
    return record.value["members"]  # type: ignore[no-any-return]


def _member(**extra: Any) -> dict[str, Any]:
    return {"member_id": "m", "group_instance_id": None, "client_id": "c", "client_host": "/h",
            "rebalance_timeout": 300000, "session_timeout": 45000, **extra}


def test_members_can_be_encoded_from_decoded_subscription_dicts() -> None:
    sub = {"topics": ["a", "b"], "user_data": None, "owned_partitions": [], "generation_id": 4, "rack_id": "r"}
    asg = {"partitions": [{"topic": "a", "partitions": [0]}], "user_data": None}
    group = {"protocol_type": "consumer", "generation": 4, "protocol": "range", "leader": "m",
             "current_state_timestamp": 1, "members": [_member(subscription=sub, assignment=asg)]}
    key, value = encode_record("group_metadata", {"group": "group"}, group)
    record = decode_record(key, value)
    assert isinstance(record, DecodedRecord) and record.value_version == 3
    member = record.value["members"][0]  # type: ignore[index]
    # default consumer-protocol version is 3, what 4.x Java clients send
    assert member["subscription_raw"][:2] == b"\x00\x03" and member["assignment_raw"][:2] == b"\x00\x03"
    assert member["subscription"] == {**sub, "version": 3, "sticky_user_data": None}
    assert member["assignment"] == {**asg, "version": 3}


def test_members_can_be_encoded_from_raw_blobs_or_without_an_assignment() -> None:
    blob = encode_subscription({"topics": ["t"]}, version=0)
    group = {"protocol_type": "consumer", "generation": 1, "protocol": "range", "leader": "m",
             "members": [_member(subscription=blob)]}
    _, value = encode_record("group_metadata", {"group": "group"}, group, 3)
    member = _members(KEY, value)[0]
    assert member["subscription_raw"] == blob and member["assignment_raw"] == b""
    with pytest.raises(EncodeError, match="subscription_raw"):
        encode_record("group_metadata", {"group": "group"}, {**group, "members": [_member()]}, 3)


def test_raw_bytes_win_over_decoded_dicts_so_re_encoding_is_byte_exact() -> None:
    # a subscription from a future client: version 9 with a trailing byte we do not know
    future = bytes.fromhex("0009" "00000000" "ffffffff" "00000000" "ffffffff" "ffff" "ee")
    group = {"protocol_type": "consumer", "generation": 1, "protocol": "range", "leader": "m",
             "current_state_timestamp": -1, "members": [_member(subscription_raw=future, assignment_raw=b"")]}
    key, value = encode_record("group_metadata", {"group": "group"}, group, 3)
    record = decode_record(key, value)
    assert isinstance(record, DecodedRecord)
    assert record.value["members"][0]["subscription"]["version"] == 9  # type: ignore[index]
    assert encode_record(record.type, record.key, record.value, record.value_version) == (key, value)


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    protocol=st.sampled_from(["range", "roundrobin", "sticky", "cooperative-sticky", "stream", None]),
    version=st.integers(0, 4),
    cp_version=st.integers(0, 3),
)
def test_consumer_groups_round_trip_through_decoded_subscriptions(
    data: st.DataObject, protocol: str | None, version: int, cp_version: int
) -> None:
    sub = data.draw(subscription_strategy(cp_version))
    sticky = None
    if protocol == "sticky" and data.draw(st.booleans()):
        sticky = {"previous_assignment": data.draw(TOPIC_ASSIGNMENTS), "generation": data.draw(st.none() | INT32)}
    elif protocol == "cooperative-sticky" and data.draw(st.booleans()):
        sticky = {"previous_assignment": None, "generation": data.draw(INT32)}
    if sticky is not None:
        sub = {**sub, "user_data": None, "sticky_user_data": sticky}
    asg = data.draw(st.none() | assignment_strategy(cp_version))
    member = _member(subscription={**sub, "version": cp_version},
                     assignment=None if asg is None else {**asg, "version": cp_version})
    if version < 3:
        member.pop("group_instance_id")
    group = {"protocol_type": "consumer", "generation": 1, "protocol": protocol, "leader": "m", "members": [member]}
    key, value = encode_record("group_metadata", {"group": "g"}, group, version)
    decoded = _members(key, value)[0]
    assert decoded["undecoded"] is False
    subscription = decoded["subscription"]
    assert subscription["version"] == cp_version
    for name, expected in sub.items():
        if name != "user_data" and name != "sticky_user_data":
            assert subscription[name] == expected
    if sticky is not None:
        assert subscription["sticky_user_data"] == sticky
    else:
        assert subscription["user_data"] == sub["user_data"]
    if protocol not in ("sticky", "cooperative-sticky"):
        assert subscription["sticky_user_data"] is None
    if asg is None:
        assert decoded["assignment"] is None and decoded["assignment_raw"] == b""
    else:
        assert decoded["assignment"] == {**asg, "version": cp_version}


INT32 = st.integers(-(2**31), 2**31 - 1)
