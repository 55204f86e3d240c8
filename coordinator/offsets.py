"""Committed offsets as the coordinator holds them.

Port of ``OffsetAndMetadata`` and ``OffsetMetadataManager.Offsets`` (Kafka 4.2): a
``TimelineHashMap`` of group -> topic -> partition. Its iteration order decides the order of the
tombstones written by offset expiry and DeleteGroups, so the nesting uses
:class:`~coordinator.java_collections.TimelineHashMap`. Empty inner maps are removed, as in Java.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from coordinator.java_collections import TimelineHashMap


@dataclass(frozen=True)
class OffsetAndMetadata:
    committed_offset: int
    leader_epoch: int | None
    metadata: str
    commit_timestamp_ms: int
    #: Only set when the commit carried an explicit retention (OffsetCommit v2-v4); written as
    #: OffsetCommitValue v1 (``GroupCoordinatorRecordHelpers.offsetCommitValueVersion``).
    expire_timestamp_ms: int | None = None
    topic_id: str | None = None


class OffsetStore:
    def __init__(self) -> None:
        self._by_group: TimelineHashMap[str, TimelineHashMap[str, TimelineHashMap[int, OffsetAndMetadata]]] = (
            TimelineHashMap()
        )

    def get(self, group_id: str, topic: str, partition: int) -> OffsetAndMetadata | None:
        topics = self._by_group.get(group_id)
        if topics is None:
            return None
        partitions = topics.get(topic)
        return None if partitions is None else partitions.get(partition)

    def put(self, group_id: str, topic: str, partition: int, value: OffsetAndMetadata) -> None:
        topics = self._by_group.compute_if_absent(group_id, lambda _: TimelineHashMap())
        partitions = topics.compute_if_absent(topic, lambda _: TimelineHashMap())
        partitions[partition] = value

    def remove(self, group_id: str, topic: str, partition: int) -> OffsetAndMetadata | None:
        topics = self._by_group.get(group_id)
        if topics is None:
            return None
        partitions = topics.get(topic)
        if partitions is None:
            return None
        removed = partitions.pop(partition, None)
        if not partitions:
            del topics[topic]
        if not topics:
            del self._by_group[group_id]
        return removed

    def has_group(self, group_id: str) -> bool:
        return group_id in self._by_group

    def group_offsets(self, group_id: str) -> Iterator[tuple[str, int, OffsetAndMetadata]]:
        """(topic, partition, offset) in ``TimelineHashMap`` iteration order."""
        topics = self._by_group.get(group_id)
        if topics is None:
            return
        for topic in topics:
            partitions = topics[topic]
            for partition in partitions:
                yield topic, partition, partitions[partition]

    def topics_of(self, group_id: str) -> list[str]:
        topics = self._by_group.get(group_id)
        return list(topics) if topics is not None else []

    def partitions_of(self, group_id: str, topic: str) -> list[tuple[int, OffsetAndMetadata]]:
        topics = self._by_group.get(group_id)
        if topics is None or topic not in topics:
            return []
        partitions = topics[topic]
        return [(p, partitions[p]) for p in partitions]
