"""RoundRobinAssignor against the examples in its Javadoc (``clients/.../consumer/RoundRobinAssignor.java``)."""

from __future__ import annotations

from coordinator.assignors.round_robin import RoundRobinAssignor
from tests.coordinator.assignors.helpers import assign, sub, tp


def test_identical_subscriptions_deal_sorted_partitions_over_sorted_members() -> None:
    result = assign(RoundRobinAssignor(), {"t0": 3, "t1": 3}, {"C1": sub("t0", "t1"), "C0": sub("t0", "t1")})
    assert result == {"C0": [tp("t0", 0), tp("t0", 2), tp("t1", 1)], "C1": [tp("t0", 1), tp("t1", 0), tp("t1", 2)]}


def test_members_not_subscribed_to_a_topic_are_skipped_which_can_unbalance() -> None:
    members = {"C0": sub("t0"), "C1": sub("t0", "t1"), "C2": sub("t0", "t1", "t2")}
    result = assign(RoundRobinAssignor(), {"t0": 1, "t1": 2, "t2": 3}, members)
    assert result == {
        "C0": [tp("t0", 0)],
        "C1": [tp("t1", 0)],
        "C2": [tp("t1", 1), tp("t2", 0), tp("t2", 1), tp("t2", 2)],
    }


def test_static_members_deal_in_instance_id_order() -> None:
    members = {
        "C5": sub("t0", "t1", instance="I1"),
        "C3": sub("t0", "t1", instance="I2"),
        "C4": sub("t0", "t1", instance="I3"),
    }
    result = assign(RoundRobinAssignor(), {"t0": 3, "t1": 3}, members)
    assert result == {
        "C5": [tp("t0", 0), tp("t1", 0)],
        "C3": [tp("t0", 1), tp("t1", 1)],
        "C4": [tp("t0", 2), tp("t1", 2)],
    }
