"""RangeAssignor against the examples in its Javadoc (``clients/.../consumer/RangeAssignor.java``)."""

from __future__ import annotations

from coordinator.assignors.range import RangeAssignor
from tests.coordinator.assignors.helpers import assign, sub, tp


def test_each_topic_is_split_in_ranges_and_the_first_consumers_take_the_extra_partition() -> None:
    # Javadoc: C0 and C1, t0 and t1 with 3 partitions each -> C0: t0p0 t0p1 t1p0 t1p1, C1: t0p2 t1p2.
    result = assign(RangeAssignor(), {"t0": 3, "t1": 3}, {"C0": sub("t0", "t1"), "C1": sub("t0", "t1")})
    assert sorted(result["C0"], key=str) == [tp("t0", 0), tp("t0", 1), tp("t1", 0), tp("t1", 1)]
    assert sorted(result["C1"], key=str) == [tp("t0", 2), tp("t1", 2)]


def test_static_members_are_ordered_by_instance_id_not_member_id() -> None:
    # Javadoc: with instance ids I0, I1 the ranges follow the instance ids whatever the member ids.
    members = {"C3": sub("t0", "t1", instance="I1"), "C2": sub("t0", "t1", instance="I0")}
    result = assign(RangeAssignor(), {"t0": 3, "t1": 3}, members)
    assert sorted(result["C2"], key=str) == [tp("t0", 0), tp("t0", 1), tp("t1", 0), tp("t1", 1)]
    assert sorted(result["C3"], key=str) == [tp("t0", 2), tp("t1", 2)]


def test_a_topic_only_some_members_subscribe_to_is_split_among_them_in_hashmap_topic_order() -> None:
    # Topics are visited in HashMap order: "t0".hashCode() = 3644 -> bucket 12, "t1" = 3645 -> 13,
    # so t0's range comes first in b's list.
    result = assign(RangeAssignor(), {"t0": 2, "t1": 4}, {"a": sub("t0"), "b": sub("t0", "t1")})
    assert result == {"a": [tp("t0", 0)], "b": [tp("t0", 1), tp("t1", 0), tp("t1", 1), tp("t1", 2), tp("t1", 3)]}


def test_topics_missing_from_the_cluster_are_skipped_and_every_member_gets_a_list() -> None:
    result = assign(RangeAssignor(), {"t0": 1}, {"a": sub("t0", "gone"), "b": sub("gone")})
    assert result == {"a": [tp("t0", 0)], "b": []}
