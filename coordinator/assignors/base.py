"""What every client-side assignor shares: ``AbstractPartitionAssignor`` and ``MemberInfo``.

Ported from ``clients/src/main/java/org/apache/kafka/clients/consumer/internals/AbstractPartitionAssignor.java``
(Kafka 4.2). The leader calls :meth:`PartitionAssignor.assign` with the cluster's partition counts
and a ``HashMap`` of member subscriptions built in JoinGroup-response order
(``ConsumerCoordinator.onLeaderElected``); the assignors iterate Java hash collections, so the
inputs are :class:`~coordinator.java_collections.JavaHashMap` instances to keep Kafka's order.

Rack-aware assignment (KIP-881) is not reproduced: it needs replica racks from cluster metadata,
which scenarios do not model. Assignors raise if a subscription carries a rack id.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum

from coordinator.consumer_protocol import Subscription
from coordinator.java_collections import JavaHashMap, JavaHashSet, java_string_key
from coordinator.topic_partition import TopicPartition


class RebalanceProtocol(IntEnum):
    """``ConsumerPartitionAssignor.RebalanceProtocol``; the id orders them (higher is newer)."""

    EAGER = 0
    COOPERATIVE = 1


@dataclass(frozen=True)
class MemberInfo:
    """``AbstractPartitionAssignor.MemberInfo``: static members sort first (by instance id), then
    dynamic members by member id (KIP-345 keeps range/roundrobin stable across restarts)."""

    member_id: str
    group_instance_id: str | None = None

    def sort_key(self) -> tuple:
        if self.group_instance_id is not None:
            return (0, java_string_key(self.group_instance_id))
        return (1, java_string_key(self.member_id))


def partitions(topic: str, num_partitions: int) -> list[TopicPartition]:
    """``AbstractPartitionAssignor.partitions``."""
    return [TopicPartition(topic, i) for i in range(num_partitions)]


def ensure_no_racks(subscriptions: Mapping[str, Subscription]) -> None:
    for member_id, sub in subscriptions.items():
        if sub.rack_id:
            raise NotImplementedError(
                f"rack-aware assignment is not modelled (member {member_id} has rack {sub.rack_id!r})"
            )


class PartitionAssignor:
    """Base of the four built-in assignors. One instance lives in each consumer for its lifetime,
    like the Java client's, because the sticky assignors keep state between rebalances."""

    name: str = ""

    def supported_protocols(self) -> list[RebalanceProtocol]:
        return [RebalanceProtocol.EAGER]

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        """``ConsumerPartitionAssignor.subscriptionUserData``: none for range/roundrobin."""
        return None

    def on_assignment(self, partitions_assigned: list[TopicPartition], generation_id: int) -> None:
        """``ConsumerPartitionAssignor.onAssignment``."""

    def assign(
        self, partitions_per_topic_count: Mapping[str, int], subscriptions: JavaHashMap[str, Subscription]
    ) -> JavaHashMap[str, list[TopicPartition]]:
        """``AbstractPartitionAssignor.assign(Cluster, GroupSubscription)``: keep the subscribed
        topics the cluster knows, with their partitions in numeric order, and delegate."""
        ensure_no_racks(subscriptions)
        all_subscribed_topics: JavaHashSet[str] = JavaHashSet()
        for member_id in subscriptions:
            all_subscribed_topics.add_all(subscriptions[member_id].topics)
        partitions_per_topic: JavaHashMap[str, list[TopicPartition]] = JavaHashMap()
        for topic in all_subscribed_topics:
            count = partitions_per_topic_count.get(topic)
            if count:
                partitions_per_topic[topic] = partitions(topic, count)
        return self.assign_partitions(partitions_per_topic, subscriptions)

    def assign_partitions(
        self,
        partitions_per_topic: JavaHashMap[str, list[TopicPartition]],
        subscriptions: JavaHashMap[str, Subscription],
    ) -> JavaHashMap[str, list[TopicPartition]]:
        """Default ``assignPartitions``: collapse to partition counts (``Collectors.toMap``)."""
        counts: JavaHashMap[str, int] = JavaHashMap()
        for topic in partitions_per_topic:
            counts[topic] = len(partitions_per_topic[topic])
        return self.assign_counts(counts, subscriptions)

    def assign_counts(
        self, partitions_per_topic: JavaHashMap[str, int], subscriptions: JavaHashMap[str, Subscription]
    ) -> JavaHashMap[str, list[TopicPartition]]:
        raise NotImplementedError
