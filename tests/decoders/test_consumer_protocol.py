"""ConsumerProtocolSubscription / ConsumerProtocolAssignment blobs, byte by byte
(ConsumerProtocol{Subscription,Assignment}.json; ConsumerProtocol.java for the version rules)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoders import (
    DecodeError,
    EncodeError,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from decoders.errors import NEGATIVE_LENGTH, TRUNCATED, UNKNOWN_VERSION
from tests.decoders.strategies import assignment_strategy, subscription_strategy

SUBSCRIPTION_V3 = bytes.fromhex(
    "0003"                         # version 3 (Kafka 3.5+, KIP-881)
    "00000002"                     # topics: 2
    "0001" "61"                    #   "a"
    "0001" "62"                    #   "b"
    "00000002" "abcd"              # userData: 2 bytes
    "00000001"                     # ownedPartitions: 1
    "0001" "61"                    #   topic "a"
    "00000002" "00000000" "00000003"  #   partitions [0, 3]
    "0000000c"                     # generationId 12
    "0005" "7573652d31"            # rackId "use-1"
)


def test_subscription_v3_as_4x_java_clients_send_it() -> None:
    assert decode_subscription(SUBSCRIPTION_V3) == {
        "topics": ["a", "b"], "user_data": b"\xab\xcd",
        "owned_partitions": [{"topic": "a", "partitions": [0, 3]}],
        "generation_id": 12, "rack_id": "use-1", "version": 3, "sticky_user_data": None,
    }
    assert encode_subscription(decode_subscription(SUBSCRIPTION_V3)) == SUBSCRIPTION_V3


def test_subscription_v2_has_no_rack_and_v0_has_only_topics_and_user_data() -> None:
    # no topics | null user data | no owned partitions | generation -1
    v2 = bytes.fromhex("0002" "00000000" "ffffffff" "00000000" "ffffffff")
    assert decode_subscription(v2) == {"topics": [], "user_data": None, "owned_partitions": [], "generation_id": -1,
                                       "version": 2, "sticky_user_data": None}
    v0 = bytes.fromhex("0000" "00000001" "0001" "74" "00000000")  # topics ["t"], empty (not null) user data
    assert decode_subscription(v0) == {"topics": ["t"], "user_data": b"", "version": 0, "sticky_user_data": None}


def test_a_higher_version_is_read_with_the_newest_layout_ignoring_trailing_bytes() -> None:
    future = bytes.fromhex("0007") + SUBSCRIPTION_V3[2:] + bytes.fromhex("0102030405")
    decoded = decode_subscription(future)
    assert decoded["version"] == 7
    assert decoded["rack_id"] == "use-1" and decoded["generation_id"] == 12
    # Kafka's serializer clamps the version to its highest: so does ours
    assert encode_subscription(decoded) == SUBSCRIPTION_V3


def test_trailing_bytes_after_a_known_version_are_ignored_too() -> None:
    assert decode_subscription(SUBSCRIPTION_V3 + b"\x00")["rack_id"] == "use-1"


def test_a_negative_version_is_unsupported() -> None:
    with pytest.raises(DecodeError) as err:
        decode_subscription(bytes.fromhex("ffff" "00000000"))
    e = err.value
    assert (e.part, e.version, e.position, e.reason) == ("subscription", -1, 0, UNKNOWN_VERSION)


def test_broken_blobs_raise_decode_error_with_the_blob_position() -> None:
    with pytest.raises(DecodeError) as err:
        decode_subscription(b"\x00")
    assert (err.value.part, err.value.position, err.value.reason) == ("subscription", 0, TRUNCATED)
    with pytest.raises(DecodeError) as err:
        decode_assignment(bytes.fromhex("0000" "00000001" "fffe" "00000000"))  # topic name length -2
    e = err.value
    assert (e.part, e.version, e.position, e.reason) == ("assignment", 0, 6, NEGATIVE_LENGTH)


def test_assignment_versions_1_to_3_share_the_v0_layout() -> None:
    body = "00000001" "0001" "74" "00000001" "00000004" "00000001" "ff"  # [t: [4]], userData 0xff
    for version in range(4):
        blob = bytes.fromhex(f"000{version}" + body)
        assert decode_assignment(blob) == {"partitions": [{"topic": "t", "partitions": [4]}], "user_data": b"\xff",
                                           "version": version}
        assert encode_assignment(decode_assignment(blob)) == blob


def test_sticky_user_data_is_decoded_only_for_the_sticky_assignors() -> None:
    coop = bytes.fromhex("0001" "00000000" "00000004" "00000009" "00000000")  # userData = generation 9
    assert decode_subscription(coop, "cooperative-sticky")["sticky_user_data"] == {"previous_assignment": None,
                                                                                   "generation": 9}
    assert decode_subscription(coop, "range")["sticky_user_data"] is None
    assert decode_subscription(coop)["sticky_user_data"] is None


def test_encoding_rejects_bad_versions_and_fields() -> None:
    with pytest.raises(EncodeError, match="version"):
        encode_subscription({"topics": []}, version=-1)
    with pytest.raises(EncodeError, match="no field"):
        encode_subscription({"topics": [], "topicz": []})
    with pytest.raises(EncodeError, match="not nullable"):
        encode_assignment({"partitions": None})


@settings(max_examples=200, deadline=None)
@given(data=st.data(), version=st.integers(0, 3))
def test_subscriptions_and_assignments_round_trip_at_every_version(data: st.DataObject, version: int) -> None:
    sub = data.draw(subscription_strategy(version))
    blob = encode_subscription(sub, version)
    decoded = decode_subscription(blob)
    assert decoded == {**sub, "version": version, "sticky_user_data": None}
    assert encode_subscription(decoded) == blob
    asg = data.draw(assignment_strategy(version))
    blob = encode_assignment(asg, version)
    assert decode_assignment(blob) == {**asg, "version": version}
