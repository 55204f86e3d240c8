"""The consumer protocol carried inside JoinGroup/SyncGroup and GroupMetadata records.

Kafka's Java client serializes a ``Subscription`` with ``ConsumerProtocol.serializeSubscription``
(``clients/.../consumer/internals/ConsumerProtocol.java``), which *sorts* the topics and the owned
partitions, and writes the highest schema version it knows (v3 since Kafka 3.5). The coordinator
compares members' protocol metadata byte for byte (``ClassicGroupMember.matches``), so two
subscriptions that serialize identically must compare equal here: :func:`subscription` applies
the same normalization, and the dataclasses are frozen value objects.

The bytes themselves are produced by :mod:`decoders` when records are written (see
:mod:`coordinator.records`); :meth:`Subscription.as_record_dict` and
:meth:`Assignment.as_record_dict` are the shapes handed to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from coordinator.java_collections import java_string_key
from coordinator.topic_partition import TopicPartition, by_topic_then_partition, group_by_topic

PROTOCOL_TYPE = "consumer"  # ConsumerProtocol.PROTOCOL_TYPE
#: ConsumerProtocolSubscription/Assignment version written by Kafka 3.5+ Java clients (KIP-881 added v3).
CONSUMER_PROTOCOL_VERSION = 3


@dataclass(frozen=True)
class Subscription:
    """``ConsumerPartitionAssignor.Subscription`` as the leader sees it after deserialization."""

    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: tuple[TopicPartition, ...] = ()
    #: ``None`` when the client sent -1 (``Subscription`` maps negative generations to empty).
    generation_id: int | None = None
    rack_id: str | None = None
    #: Not serialized; the leader copies it from the JoinGroup response (``setGroupInstanceId``).
    group_instance_id: str | None = field(default=None, compare=False)
    version: int = CONSUMER_PROTOCOL_VERSION

    def with_instance_id(self, group_instance_id: str | None) -> Subscription:
        return replace(self, group_instance_id=group_instance_id)

    def as_record_dict(self) -> dict:
        """The ``subscription`` dict :func:`decoders.encode_record` accepts."""
        return {
            "version": self.version,
            "topics": list(self.topics),
            "user_data": self.user_data,
            "owned_partitions": [
                {"topic": t, "partitions": ps} for t, ps in group_by_topic(list(self.owned_partitions))
            ],
            "generation_id": -1 if self.generation_id is None else self.generation_id,
            "rack_id": self.rack_id,
        }


def subscription(
    topics: list[str] | set[str] | tuple[str, ...],
    user_data: bytes | None = None,
    owned_partitions: list[TopicPartition] | tuple[TopicPartition, ...] = (),
    generation_id: int = -1,
    rack_id: str | None = None,
) -> Subscription:
    """Build a subscription the way ``serializeSubscription`` + ``deserializeSubscription`` would
    leave it: topics sorted by ``String.compareTo``, owned partitions by topic then partition."""
    return Subscription(
        topics=tuple(sorted(set(topics), key=java_string_key)),
        user_data=user_data,
        owned_partitions=tuple(sorted(owned_partitions, key=by_topic_then_partition)),
        generation_id=None if generation_id < 0 else generation_id,
        rack_id=rack_id or None,
    )


@dataclass(frozen=True)
class Assignment:
    """``ConsumerPartitionAssignor.Assignment``: partitions in the assignor's order (significant:
    ``serializeAssignment`` groups them by topic in order of first appearance)."""

    partitions: tuple[TopicPartition, ...] = ()
    user_data: bytes | None = None
    version: int = CONSUMER_PROTOCOL_VERSION

    def as_record_dict(self) -> dict:
        return {
            "version": self.version,
            "partitions": [{"topic": t, "partitions": ps} for t, ps in group_by_topic(list(self.partitions))],
            "user_data": self.user_data,
        }

    def by_topic(self) -> list[tuple[str, list[int]]]:
        return group_by_topic(list(self.partitions))
