"""``org.apache.kafka.common.TopicPartition`` with Java's hash code and orderings.

The hash code matters because assignors keep partitions in ``HashMap``/``HashSet`` collections whose
iteration order shows up in their results (see :mod:`coordinator.java_collections`).
"""

from __future__ import annotations

from dataclasses import dataclass

from coordinator.java_collections import java_string_hash, java_string_key, to_int32


@dataclass(frozen=True, slots=True)
class TopicPartition:
    topic: str
    partition: int

    def java_hash_code(self) -> int:
        """``TopicPartition.hashCode``: ``31 * (31 + partition) + topic.hashCode()``."""
        return to_int32(31 * to_int32(31 + self.partition) + java_string_hash(self.topic))

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


def by_topic_then_partition(tp: TopicPartition) -> tuple[bytes, int]:
    """``TopicPartitionComparator`` / ``comparing(topic).thenComparing(partition)``."""
    return (java_string_key(tp.topic), tp.partition)


def by_partition_then_topic(tp: TopicPartition) -> tuple[int, bytes]:
    """``comparing(TopicPartition::partition).thenComparing(TopicPartition::topic)`` (sticky assignor)."""
    return (tp.partition, java_string_key(tp.topic))


def group_by_topic(partitions: list[TopicPartition]) -> list[tuple[str, list[int]]]:
    """Topics in order of first appearance, each with its partitions in list order.

    This is how ``ConsumerProtocol.serializeAssignment`` lays out an assignment (it appends to
    the topic entry found by name), so it keeps the assignor's order, not a sorted one.
    """
    grouped: dict[str, list[int]] = {}
    for tp in partitions:
        grouped.setdefault(tp.topic, []).append(tp.partition)
    return list(grouped.items())
