"""Shorthand for assignor tests: ``tp("t0", 1)`` and running an assignor on member subscriptions."""

from __future__ import annotations

from coordinator.assignors.base import PartitionAssignor
from coordinator.consumer_protocol import Subscription, subscription
from coordinator.java_collections import JavaHashMap
from coordinator.topic_partition import TopicPartition


def tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)


def assign(
    assignor: PartitionAssignor, topics: dict[str, int], members: dict[str, Subscription]
) -> dict[str, list[TopicPartition]]:
    subs: JavaHashMap[str, Subscription] = JavaHashMap()
    for member_id, sub in members.items():
        subs[member_id] = sub
    result = assignor.assign(topics, subs)
    return {m: list(result[m]) for m in result}


def sub(
    *topics: str,
    owned: tuple[TopicPartition, ...] = (),
    generation: int = -1,
    user_data: bytes | None = None,
    instance: str | None = None,
) -> Subscription:
    return subscription(topics, user_data, owned, generation).with_instance_id(instance)
