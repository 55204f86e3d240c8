"""Sticky / cooperative-sticky user data, byte by byte (StickyAssignor.java and
CooperativeStickyAssignor.java: old-style Schema, int16 strings, int32 arrays, no version)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoders.errors import EncodeError
from decoders.sticky_user_data import decode_sticky_user_data, encode_sticky_user_data
from tests.decoders.strategies import TOPIC_ASSIGNMENTS

PREVIOUS = (
    "00000002"                                   # previous_assignment: 2 topics
    "0001" "61" "00000002" "00000000" "00000001"  #   "a": [0, 1]
    "0001" "62" "00000000"                        #   "b": []
)


def test_sticky_v1_carries_the_generation_after_the_previous_assignment() -> None:
    data = bytes.fromhex(PREVIOUS + "00000005")  # generation 5
    expected = {"previous_assignment": [{"topic": "a", "partitions": [0, 1]}, {"topic": "b", "partitions": []}],
                "generation": 5}
    assert decode_sticky_user_data(data, "sticky") == expected
    assert encode_sticky_user_data(expected) == data


def test_sticky_v0_has_no_generation_and_is_found_by_falling_back() -> None:
    data = bytes.fromhex(PREVIOUS)
    decoded = decode_sticky_user_data(data, "sticky")
    assert decoded is not None and decoded["generation"] is None
    assert encode_sticky_user_data(decoded) == data


def test_cooperative_sticky_is_just_the_generation() -> None:
    assert decode_sticky_user_data(bytes.fromhex("ffffffff"), "cooperative-sticky") == {"previous_assignment": None,
                                                                                        "generation": -1}
    assert encode_sticky_user_data({"previous_assignment": None, "generation": -1}) == bytes.fromhex("ffffffff")


def test_unparseable_or_absent_user_data_is_ignored_as_kafka_does() -> None:
    assert decode_sticky_user_data(bytes.fromhex("7fffffff"), "sticky") is None  # 2**31-1 topics in 4 bytes
    assert decode_sticky_user_data(b"\x01", "cooperative-sticky") is None
    assert decode_sticky_user_data(None, "sticky") is None
    assert decode_sticky_user_data(b"", "sticky") is None
    assert decode_sticky_user_data(bytes.fromhex(PREVIOUS), "range") is None


def test_encoding_needs_something_to_encode() -> None:
    with pytest.raises(EncodeError):
        encode_sticky_user_data({"previous_assignment": None, "generation": None})
    with pytest.raises(EncodeError):
        encode_sticky_user_data({"generation": 1, "extra": 2})


@settings(max_examples=200, deadline=None)
@given(previous=TOPIC_ASSIGNMENTS, generation=st.none() | st.integers(-(2**31), 2**31 - 1))
def test_sticky_user_data_round_trips(previous: list, generation: int | None) -> None:
    view = {"previous_assignment": previous, "generation": generation}
    assert decode_sticky_user_data(encode_sticky_user_data(view), "sticky") == view
    if generation is not None:
        coop = {"previous_assignment": None, "generation": generation}
        assert decode_sticky_user_data(encode_sticky_user_data(coop), "cooperative-sticky") == coop
