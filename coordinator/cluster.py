"""The topics a scenario's consumers read: partition counts, leader epochs and log end offsets.

Producers are not simulated record by record: each partition starts with ``initial_records``
(partitions added later start empty) and its log end offset grows linearly at its topic's
``produce_rate`` (records per second per partition), which is all a consumer's position and
committed offsets depend on here.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Topic:
    name: str
    partitions: int
    produce_rate: float = 0.0
    leader_epoch: int = 0
    #: Records already in each partition when the scenario starts.
    initial_records: int = 0
    #: Optional topic id (22-char base64); only OffsetCommit v10+ clients send it, so it is
    #: written to OffsetCommitValue v4 only when a consumer is configured to use it.
    topic_id: str | None = None
    #: Creation time of each partition (partitions added later start empty at that time).
    created_at: list[int] = field(default_factory=list)


class Cluster:
    def __init__(self, topics: list[Topic], start_ms: int):
        self.topics: dict[str, Topic] = {}
        for topic in topics:
            if not topic.created_at:
                topic.created_at = [start_ms] * topic.partitions
            self.topics[topic.name] = topic

    def partition_counts(self) -> dict[str, int]:
        return {name: t.partitions for name, t in self.topics.items()}

    def add_partitions(self, topic: str, count: int, now: int) -> None:
        """``Admin.createPartitions``: the topic grows to ``count`` partitions (never shrinks)."""
        t = self.topics[topic]
        if count <= t.partitions:
            raise ValueError(f"topic {topic} already has {t.partitions} partitions; cannot grow to {count}")
        t.created_at.extend([now] * (count - t.partitions))
        t.partitions = count

    def log_end_offset(self, topic: str, partition: int, now: int) -> int:
        t = self.topics[topic]
        elapsed = max(0, now - t.created_at[partition])
        initial = t.initial_records if t.created_at[partition] == t.created_at[0] else 0
        return initial + int(t.produce_rate * elapsed // 1000)

    def leader_epoch(self, topic: str) -> int:
        return self.topics[topic].leader_epoch
