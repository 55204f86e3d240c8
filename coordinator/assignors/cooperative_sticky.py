"""The ``cooperative-sticky`` assignor (``clients/.../consumer/CooperativeStickyAssignor.java``, Kafka 4.2).

It runs the sticky algorithm, then withholds every partition that would move from one owner to
another (``adjustAssignment``): the current owner loses it in this generation, nobody gains it, and
the owner's follow-up JoinGroup (KIP-429: a member that revoked partitions rejoins at once) lets a
second rebalance hand it out. Ownership comes from the subscription's ``ownedPartitions`` and
``generationId`` (ConsumerProtocolSubscription v2+), or from the assignor's user data (an int32
generation) for older clients.
"""

from __future__ import annotations

import struct

from coordinator.assignors.base import RebalanceProtocol
from coordinator.assignors.sticky import DEFAULT_GENERATION, AbstractStickyAssignor, MemberData, _remove_first
from coordinator.consumer_protocol import Subscription
from coordinator.java_collections import JavaHashMap, JavaHashSet
from coordinator.topic_partition import TopicPartition

COOPERATIVE_STICKY_ASSIGNOR_NAME = "cooperative-sticky"


class CooperativeStickyAssignor(AbstractStickyAssignor):
    name = COOPERATIVE_STICKY_ASSIGNOR_NAME

    def __init__(self) -> None:
        super().__init__()
        self._generation = DEFAULT_GENERATION

    def supported_protocols(self) -> list[RebalanceProtocol]:
        return [RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER]

    def on_assignment(self, partitions_assigned: list[TopicPartition], generation_id: int) -> None:
        self._generation = generation_id

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        """``COOPERATIVE_STICKY_ASSIGNOR_USER_DATA_V0``: one int32, the last generation."""
        return struct.pack(">i", self._generation)

    def member_data(self, sub: Subscription) -> MemberData:
        if sub.generation_id is not None:
            return MemberData(list(sub.owned_partitions), sub.generation_id)
        if sub.user_data is None:
            generation = None
        elif len(sub.user_data) >= 4:
            generation = struct.unpack_from(">i", sub.user_data)[0]
        else:
            generation = DEFAULT_GENERATION
        return MemberData(list(sub.owned_partitions), generation)

    def assign_partitions(
        self,
        partitions_per_topic: JavaHashMap[str, list[TopicPartition]],
        subscriptions: JavaHashMap[str, Subscription],
    ) -> JavaHashMap[str, list[TopicPartition]]:
        assignments = super().assign_partitions(partitions_per_topic, subscriptions)
        transferring = self.partitions_transferring_ownership
        if transferring is None:
            transferring = _partitions_transferring_ownership(subscriptions, assignments)
        for tp in transferring:
            _remove_first(assignments[transferring[tp]], tp)
        return assignments


def _partitions_transferring_ownership(
    subscriptions: JavaHashMap[str, Subscription], assignments: JavaHashMap[str, list[TopicPartition]]
) -> JavaHashMap[TopicPartition, str]:
    """``computePartitionsTransferringOwnership``: added to one member while revoked from another."""
    added: JavaHashMap[TopicPartition, str] = JavaHashMap()
    revoked: JavaHashSet[TopicPartition] = JavaHashSet()
    for consumer in assignments:
        owned = list(subscriptions[consumer].owned_partitions)
        assigned = assignments[consumer]
        owned_set = JavaHashSet(owned, copy=True)
        for tp in assigned:
            if tp not in owned_set:
                added[tp] = consumer
        assigned_set = JavaHashSet(assigned, copy=True)
        for tp in owned:
            if tp not in assigned_set:
                revoked.add(tp)
    for tp in list(added):
        if tp not in revoked:
            del added[tp]
    return added
