"""Spark's Kafka source, configured for reading ``__consumer_offsets`` correctly.

The rules: ``read_committed`` so aborted
transactional offset commits are never seen, ``failOnDataLoss=false`` because
the topic is compacted and has gaps by design, and connection/security options
from ``conf.settings`` with Spark's ``kafka.`` prefix.

Internal topics need two workarounds, both found on Spark 4.1.1 against a real
broker. Spark's default, Admin-based partition discovery
(``ConsumerStrategy.retrieveAllPartitions``) drops every topic whose
``TopicDescription.isInternal`` is set, so ``subscribe=__consumer_offsets``
silently reads nothing. We therefore (1) use the consumer-based offset fetching
(``spark.sql.streaming.kafka.useDeprecatedOffsetFetching=true``, set by
pipelines/spark_session.py) and (2) ``assign`` the topic's partitions
explicitly: with ``subscribe`` the consumer-based reader *joins a group*, which
would write its own GroupMetadata records into the very topic we ingest. The
partition count of ``__consumer_offsets`` is fixed at creation, so an explicit
assignment does not go stale. Ordinary topics keep ``subscribe``.

The topic must exist, and no client offsetlake makes creates it: it is looked up with a DescribeTopics request
(``check_source_topic``, before a command starts Spark and before the ingest makes any table), and the Java
consumer takes ``allow.auto.create.topics=false`` (librdkafka's clients: ``pipelines.kafka_clients``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from conf.settings import Settings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

OFFSETS_TOPIC = "__consumer_offsets"


def is_internal_topic(topic: str) -> bool:
    return topic.startswith("__")


def topic_partitions(settings: Settings, topic: str) -> list[int]:
    """The topic's partition ids, as the cluster describes them (``pipelines.kafka_clients.describe_topic``: never
    creating it). ``SourceTopicError`` when it does not exist, ``ClusterUnreachable`` when the cluster does not
    answer within ``kafka.timeout_seconds``."""
    from pipelines.kafka_clients import describe_topic

    found = describe_topic(settings, topic)
    if found is None:
        created = (" yet: the broker creates it when a consumer group first uses it" if topic == OFFSETS_TOPIC
                   else "; offsetlake never creates a topic: check its name")
        raise TopicNotFound(topic, f"topic {topic} does not exist on cluster {settings.cluster_name} "
                                   f"({settings.kafka.bootstrap_servers}){created}")
    if not found.partitions:
        raise SourceTopicError(f"topic {topic} has no partitions on cluster {settings.cluster_name} "
                               f"({settings.kafka.bootstrap_servers})")
    return sorted(p.id for p in found.partitions)


def check_source_topic(settings: Settings, topic: str) -> None:
    """Raise ``SourceTopicError`` or ``ClusterUnreachable`` unless the cluster answers and holds ``topic``: one
    DescribeTopics request, the check a command makes before it starts Spark (a JVM started for a typo costs
    more than the answer), and the ingest before it creates any table."""
    topic_partitions(settings, topic)


class SourceTopicError(RuntimeError):
    """The topic to ingest does not exist or cannot be described."""


class TopicNotFound(SourceTopicError):
    """The topic to ingest does not exist (yet, for ``__consumer_offsets``: ``pipelines.source_faults`` waits for
    it)."""

    def __init__(self, topic: str, message: str) -> None:
        super().__init__(message)
        self.topic = topic


def kafka_source_options(settings: Settings, topic: str = OFFSETS_TOPIC,
                         max_offsets_per_trigger: int | None = None,
                         partitions: list[int] | None = None) -> dict[str, str]:
    options = {f"kafka.{k}": v for k, v in settings.kafka.java_client_config().items()}
    if is_internal_topic(topic):
        if partitions is None:
            partitions = topic_partitions(settings, topic)
        options["assign"] = json.dumps({topic: partitions})
    else:
        options["subscribe"] = topic
    options.update({
        # Only for a query without a checkpoint (conf.settings KafkaSettings.starting_offsets).
        "startingOffsets": starting_offsets_option(settings, topic, partitions),
        "kafka.isolation.level": "read_committed",
        # The Java consumer's Metadata requests name the topic; it must not create it (KIP-361).
        "kafka.allow.auto.create.topics": "false",
        "failOnDataLoss": "false",
        "includeHeaders": "false",
    })
    if max_offsets_per_trigger:
        options["maxOffsetsPerTrigger"] = str(max_offsets_per_trigger)
    return options


def starting_offsets_option(settings: Settings, topic: str, partitions: list[int] | None = None) -> str:
    """``startingOffsets`` for Spark's Kafka source from ``kafka.starting_offsets``.

    Spark wants every partition named once any offset is given (``KafkaOffsetReader`` asserts
    it), so partitions the setting leaves out start at their earliest offset (-2).
    """
    starting = settings.kafka.starting_offsets_by_partition()
    if starting is None:
        return settings.kafka.starting_offsets
    every = partitions if partitions is not None else topic_partitions(settings, topic)
    return json.dumps({topic: {str(p): starting.get(p, -2) for p in sorted(set(every) | set(starting))}})


def read_offsets_topic_stream(spark: SparkSession, settings: Settings, topic: str = OFFSETS_TOPIC,
                              max_offsets_per_trigger: int | None = None) -> DataFrame:
    """A streaming DataFrame of raw records: key, value, topic, partition, offset, timestamp."""
    if spark.conf.get("spark.sql.streaming.kafka.useDeprecatedOffsetFetching", "false") != "true":
        raise SourceTopicError("the SparkSession must set spark.sql.streaming.kafka.useDeprecatedOffsetFetching=true "
                               "(build it with pipelines.spark_session.build_spark_session)")
    reader = spark.readStream.format("kafka")
    for key, value in kafka_source_options(settings, topic, max_offsets_per_trigger).items():
        reader = reader.option(key, value)
    return reader.load()


def topic_end_offsets(settings: Settings, topic: str) -> dict[int, int]:
    """partition -> current end offset (ListOffsets LATEST; the LSO under read_committed)."""
    from confluent_kafka import IsolationLevel, TopicPartition
    from confluent_kafka.admin import OffsetSpec

    from pipelines.kafka_clients import admin_client

    partitions = topic_partitions(settings, topic)
    with admin_client(settings) as (admin, _):
        futures = admin.list_offsets({TopicPartition(topic, p): OffsetSpec.latest() for p in partitions},
                                     isolation_level=IsolationLevel.READ_COMMITTED,
                                     request_timeout=settings.kafka.timeout_seconds)
        return {tp.partition: future.result().offset for tp, future in futures.items()}
