"""Kafka's four built-in client-side assignors, ported so their results equal the Java ones.

``ASSIGNORS`` maps the protocol name a consumer advertises in JoinGroup (``assignor.name()``) to
the class; each consumer holds its own instances (the sticky ones keep state between rebalances).
"""

from __future__ import annotations

from coordinator.assignors.base import MemberInfo, PartitionAssignor, RebalanceProtocol
from coordinator.assignors.cooperative_sticky import COOPERATIVE_STICKY_ASSIGNOR_NAME, CooperativeStickyAssignor
from coordinator.assignors.range import RANGE_ASSIGNOR_NAME, RangeAssignor
from coordinator.assignors.round_robin import ROUNDROBIN_ASSIGNOR_NAME, RoundRobinAssignor
from coordinator.assignors.sticky import STICKY_ASSIGNOR_NAME, StickyAssignor

ASSIGNORS: dict[str, type[PartitionAssignor]] = {
    RANGE_ASSIGNOR_NAME: RangeAssignor,
    ROUNDROBIN_ASSIGNOR_NAME: RoundRobinAssignor,
    STICKY_ASSIGNOR_NAME: StickyAssignor,
    COOPERATIVE_STICKY_ASSIGNOR_NAME: CooperativeStickyAssignor,
}

#: ``partition.assignment.strategy`` default since Kafka 3.0 (``ConsumerConfig``): range first.
DEFAULT_ASSIGNMENT_STRATEGY = (RANGE_ASSIGNOR_NAME, COOPERATIVE_STICKY_ASSIGNOR_NAME)


def new_assignor(name: str) -> PartitionAssignor:
    try:
        return ASSIGNORS[name]()
    except KeyError:
        raise ValueError(f"unknown assignor {name!r}; expected one of {sorted(ASSIGNORS)}") from None


__all__ = [
    "ASSIGNORS",
    "DEFAULT_ASSIGNMENT_STRATEGY",
    "MemberInfo",
    "PartitionAssignor",
    "RebalanceProtocol",
    "new_assignor",
    "CooperativeStickyAssignor",
    "RangeAssignor",
    "RoundRobinAssignor",
    "StickyAssignor",
]
