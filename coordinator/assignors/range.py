"""The ``range`` assignor (``clients/.../consumer/RangeAssignor.java``, Kafka 4.2).

Per topic, partitions in numeric order are split into contiguous ranges over the topic's
subscribers sorted by :class:`~coordinator.assignors.base.MemberInfo` (static members by instance
id first); the first ``partitions % consumers`` subscribers take one extra partition.

Topics are processed in the iteration order of the ``HashMap`` built by
``AbstractPartitionAssignor.assign``, which is why a member's list can start with any topic: that
order is kept here because it is visible in the serialized assignment.
"""

from __future__ import annotations

from coordinator.assignors.base import MemberInfo, PartitionAssignor
from coordinator.consumer_protocol import Subscription
from coordinator.java_collections import JavaHashMap
from coordinator.topic_partition import TopicPartition

RANGE_ASSIGNOR_NAME = "range"


class _TopicAssignmentState:
    """``RangeAssignor.TopicAssignmentState`` without the rack fields."""

    def __init__(self, partitions: list[TopicPartition], members: list[MemberInfo] | None):
        members = members if members is not None else []
        members.sort(key=MemberInfo.sort_key)  # Collections.sort sorts the shared list in place
        self.consumers: list[str] = list(dict.fromkeys(m.member_id for m in members))
        self.unassigned: dict[TopicPartition, None] = dict.fromkeys(partitions)
        self.num_assigned = {c: 0 for c in self.consumers}
        self.per_consumer = len(partitions) // len(self.consumers) if self.consumers else 0
        self.with_extra = len(partitions) % len(self.consumers) if self.consumers else 0

    def max_assignable(self, consumer: str) -> int:
        limit = self.per_consumer + (1 if self.with_extra > 0 else 0) - self.num_assigned[consumer]
        return max(0, limit)

    def on_assigned(self, consumer: str, assigned: list[TopicPartition]) -> None:
        self.num_assigned[consumer] += len(assigned)
        if self.num_assigned[consumer] > self.per_consumer:
            self.with_extra -= 1
        for tp in assigned:
            self.unassigned.pop(tp, None)


class RangeAssignor(PartitionAssignor):
    name = RANGE_ASSIGNOR_NAME

    def assign_partitions(
        self,
        partitions_per_topic: JavaHashMap[str, list[TopicPartition]],
        subscriptions: JavaHashMap[str, Subscription],
    ) -> JavaHashMap[str, list[TopicPartition]]:
        consumers_per_topic: JavaHashMap[str, list[MemberInfo]] = JavaHashMap()
        for member_id in subscriptions:
            sub = subscriptions[member_id]
            info = MemberInfo(member_id, sub.group_instance_id)
            for topic in sub.topics:
                consumers_per_topic.compute_if_absent(topic, lambda _: []).append(info)

        states = [
            _TopicAssignmentState(partitions_per_topic[topic], consumers_per_topic.get(topic))
            for topic in partitions_per_topic
            if partitions_per_topic[topic]
        ]
        assignment: JavaHashMap[str, list[TopicPartition]] = JavaHashMap()
        for member_id in subscriptions:
            assignment[member_id] = []
        for state in states:
            for consumer in state.consumers:
                if not state.unassigned:
                    break
                assignable = list(state.unassigned)[: state.max_assignable(consumer)]
                if not assignable:
                    continue
                assignment[consumer].extend(assignable)
                state.on_assigned(consumer, assignable)
        return assignment
