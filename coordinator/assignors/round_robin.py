"""The ``roundrobin`` assignor (``clients/.../consumer/RoundRobinAssignor.java``, Kafka 4.2).

All subscribed topic-partitions, topics in ``String.compareTo`` order and partitions in numeric
order, are dealt over the members sorted by :class:`~coordinator.assignors.base.MemberInfo` with
a circular iterator that skips members not subscribed to the partition's topic.
"""

from __future__ import annotations

from coordinator.assignors.base import MemberInfo, PartitionAssignor, partitions
from coordinator.consumer_protocol import Subscription
from coordinator.java_collections import JavaHashMap, java_string_key
from coordinator.topic_partition import TopicPartition

ROUNDROBIN_ASSIGNOR_NAME = "roundrobin"


class RoundRobinAssignor(PartitionAssignor):
    name = ROUNDROBIN_ASSIGNOR_NAME

    def assign_counts(
        self, partitions_per_topic: JavaHashMap[str, int], subscriptions: JavaHashMap[str, Subscription]
    ) -> JavaHashMap[str, list[TopicPartition]]:
        assignment: JavaHashMap[str, list[TopicPartition]] = JavaHashMap()
        members: list[MemberInfo] = []
        for member_id in subscriptions:
            assignment[member_id] = []
            members.append(MemberInfo(member_id, subscriptions[member_id].group_instance_id))
        members.sort(key=MemberInfo.sort_key)

        topics = sorted({t for m in subscriptions for t in subscriptions[m].topics}, key=java_string_key)
        all_partitions: list[TopicPartition] = []
        for topic in topics:
            count = partitions_per_topic.get(topic)
            if count is not None:
                all_partitions.extend(partitions(topic, count))

        # CircularIterator: `position` is the index of the member peek() would return.
        position = 0
        for tp in all_partitions:
            while tp.topic not in subscriptions[members[position].member_id].topics:
                position = (position + 1) % len(members)
            assignment[members[position].member_id].append(tp)
            position = (position + 1) % len(members)
        return assignment
