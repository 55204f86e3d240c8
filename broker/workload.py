"""Real client traffic for the embedded broker: a topic, messages, and a consumer group that commits.

This is what puts OffsetCommit (key type 1) and GroupMetadata (key type 2)
records into ``__consumer_offsets`` for the demo and the integration tests.
Everything goes through confluent-kafka against the real broker; nothing is faked.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class GroupRun:
    """What a consumer group did: which partitions it committed and up to where."""

    group_id: str
    topic: str
    consumed: int
    committed: dict[int, int] = field(default_factory=dict)  # partition -> next offset


def create_topic(client_config: dict[str, str], topic: str, partitions: int, timeout: float = 30.0) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient(client_config)
    futures = admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)],
                                  operation_timeout=timeout)
    futures[topic].result(timeout=timeout)
    # Wait until the partitions have leaders, or a consumer may see an empty topic.
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        meta = admin.list_topics(topic, timeout=5).topics.get(topic)
        if meta and meta.error is None and len(meta.partitions) == partitions and all(
            p.leader >= 0 for p in meta.partitions.values()
        ):
            return
        time.sleep(0.2)
    raise TimeoutError(f"topic {topic} has no leaders after {timeout}s")


def produce_messages(client_config: dict[str, str], topic: str, count: int, partitions: int) -> None:
    """``count`` small messages spread round-robin over the partitions."""
    from confluent_kafka import Producer

    producer = Producer({**client_config, "linger.ms": 5})
    for i in range(count):
        producer.produce(topic, key=str(i).encode(), value=f"message-{i}".encode(), partition=i % partitions)
        if i % 1000 == 0:
            producer.poll(0)
    remaining = producer.flush(30)
    if remaining:
        raise RuntimeError(f"{remaining} messages were not delivered to {topic}")


def consume_and_commit(client_config: dict[str, str], topic: str, group_id: str, expected: int, *,
                       assignor: str = "range", extra: dict[str, str] | None = None,
                       timeout: float = 60.0, on_progress: Callable[[int], None] | None = None) -> GroupRun:
    """Join ``group_id`` with the classic protocol, read ``expected`` messages, commit, leave.

    Commits are synchronous after every poll batch so that each commit becomes
    its own OffsetCommit record, as with a typical at-least-once consumer.
    """
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer({
        **client_config,
        "group.id": group_id,
        "client.id": f"{group_id}-client",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "partition.assignment.strategy": assignor,
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 500,
        **(extra or {}),
    })
    consumed = 0
    committed: dict[int, int] = {}
    deadline = time.monotonic() + timeout
    try:
        consumer.subscribe([topic])
        while consumed < expected:
            if time.monotonic() > deadline:
                raise TimeoutError(f"group {group_id} consumed {consumed}/{expected} messages in {timeout}s")
            messages = consumer.consume(num_messages=100, timeout=1.0)
            batch: dict[int, int] = {}
            for message in messages:
                if message.error():
                    raise KafkaException(message.error())
                batch[message.partition()] = message.offset() + 1
                consumed += 1
            if batch:
                offsets = [TopicPartition(topic, p, o) for p, o in sorted(batch.items())]
                consumer.commit(offsets=offsets, asynchronous=False)
                committed.update(batch)
                if on_progress:
                    on_progress(consumed)
    finally:
        consumer.close()  # LeaveGroup: the group goes Empty and its metadata is rewritten
    return GroupRun(group_id=group_id, topic=topic, consumed=consumed, committed=committed)
