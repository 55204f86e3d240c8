"""StickyAssignor against the examples in its Javadoc (``clients/.../consumer/StickyAssignor.java``)."""

from __future__ import annotations

from coordinator.assignors.sticky import StickyAssignor, decode_sticky_user_data, encode_sticky_user_data
from tests.coordinator.assignors.helpers import assign, sub, tp


def _previous(partitions, generation=1) -> bytes:  # noqa: ANN001
    return encode_sticky_user_data(partitions, generation)


def test_a_fresh_assignment_spreads_partitions_evenly() -> None:
    members = {m: sub("t0", "t1", "t2", "t3") for m in ("C0", "C1", "C2")}
    result = assign(StickyAssignor(), {"t0": 2, "t1": 2, "t2": 2, "t3": 2}, members)
    assert sorted(len(p) for p in result.values()) == [2, 3, 3]
    assert sorted(str(p) for ps in result.values() for p in ps) == sorted(
        f"t{t}-{p}" for t in range(4) for p in range(2)
    )


def test_removing_a_member_keeps_every_surviving_assignment() -> None:
    # Javadoc example 1: C0 [t0p0, t1p1, t3p0], C1 [t0p1, t2p0, t3p1], C2 [t1p0, t2p1]; C1 leaves.
    c0 = [tp("t0", 0), tp("t1", 1), tp("t3", 0)]
    c2 = [tp("t1", 0), tp("t2", 1)]
    topics = ("t0", "t1", "t2", "t3")
    members = {"C0": sub(*topics, user_data=_previous(c0)), "C2": sub(*topics, user_data=_previous(c2))}
    result = assign(StickyAssignor(), {t: 2 for t in topics}, members)
    assert set(c0) <= set(result["C0"]) and set(c2) <= set(result["C2"])
    assert sorted(len(p) for p in result.values()) == [4, 4]


def test_unequal_subscriptions_are_balanced_better_than_round_robin() -> None:
    # Javadoc example 2: C0 -> t0; C1 -> t0, t1; C2 -> t0, t1, t2 with 1, 2, 3 partitions.
    members = {"C0": sub("t0"), "C1": sub("t0", "t1"), "C2": sub("t0", "t1", "t2")}
    result = assign(StickyAssignor(), {"t0": 1, "t1": 2, "t2": 3}, members)
    assert {m: set(p) for m, p in result.items()} == {
        "C0": {tp("t0", 0)},
        "C1": {tp("t1", 0), tp("t1", 1)},
        "C2": {tp("t2", 0), tp("t2", 1), tp("t2", 2)},
    }


def test_user_data_round_trips_with_and_without_a_generation() -> None:
    partitions = [tp("b", 1), tp("a", 0), tp("b", 0)]
    decoded = decode_sticky_user_data(encode_sticky_user_data(partitions, 7))
    assert sorted(decoded.partitions, key=str) == sorted(partitions, key=str) and decoded.generation == 7
    assert decode_sticky_user_data(encode_sticky_user_data(partitions, None)).generation is None
    assert decode_sticky_user_data(b"\x01").partitions == []  # unparseable -> empty, like Java
