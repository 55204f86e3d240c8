"""CooperativeStickyAssignor: the first of two rebalances withholds partitions that change owner (KIP-429)."""

from __future__ import annotations

from coordinator.assignors.base import RebalanceProtocol
from coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from tests.coordinator.assignors.helpers import assign, sub, tp


def test_a_new_member_gets_nothing_until_the_owners_have_revoked() -> None:
    owned_a = (tp("t", 0), tp("t", 1), tp("t", 2))
    owned_b = (tp("t", 3), tp("t", 4), tp("t", 5))
    members = {"a": sub("t", owned=owned_a, generation=3), "b": sub("t", owned=owned_b, generation=3), "c": sub("t")}
    result = assign(CooperativeStickyAssignor(), {"t": 6}, members)
    assert result["c"] == []
    assert set(result["a"]) < set(owned_a) and set(result["b"]) < set(owned_b)
    assert len(result["a"]) + len(result["b"]) == 4  # two partitions are in flight


def test_the_second_round_hands_the_revoked_partitions_out() -> None:
    members = {
        "a": sub("t", owned=(tp("t", 0), tp("t", 1)), generation=4),
        "b": sub("t", owned=(tp("t", 3), tp("t", 4)), generation=4),
        "c": sub("t", generation=-1),
    }
    result = assign(CooperativeStickyAssignor(), {"t": 6}, members)
    assert {m: set(p) for m, p in result.items()} == {
        "a": {tp("t", 0), tp("t", 1)},
        "b": {tp("t", 3), tp("t", 4)},
        "c": {tp("t", 2), tp("t", 5)},
    }


def test_it_supports_both_rebalance_protocols_and_sends_its_generation_as_user_data() -> None:
    assignor = CooperativeStickyAssignor()
    assert assignor.supported_protocols() == [RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER]
    assert assignor.subscription_user_data({"t"}) == b"\xff\xff\xff\xff"  # DEFAULT_GENERATION -1
    assignor.on_assignment([], 9)
    assert assignor.subscription_user_data({"t"}) == b"\x00\x00\x00\x09"
