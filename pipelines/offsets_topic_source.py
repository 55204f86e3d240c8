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


def topic_partitions(settings: Settings, topic: str, timeout: float = 30.0) -> list[int]:
    """The topic's partition ids, from the cluster's metadata (confluent-kafka admin)."""
    from confluent_kafka.admin import AdminClient

    metadata = AdminClient(settings.kafka.librdkafka_config()).list_topics(topic, timeout=timeout)
    found = metadata.topics.get(topic)
    if found is None or found.error is not None or not found.partitions:
        reason = found.error if found is not None and found.error is not None else "no partitions"
        raise SourceTopicError(f"topic {topic} is not readable on {settings.kafka.bootstrap_servers}: {reason}")
    return sorted(found.partitions)


class SourceTopicError(RuntimeError):
    """The topic to ingest does not exist or cannot be described."""


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
    from confluent_kafka.admin import AdminClient, OffsetSpec

    admin = AdminClient(settings.kafka.librdkafka_config())
    partitions = topic_partitions(settings, topic)
    futures = admin.list_offsets({TopicPartition(topic, p): OffsetSpec.latest() for p in partitions},
                                 isolation_level=IsolationLevel.READ_COMMITTED, request_timeout=30)
    return {tp.partition: future.result().offset for tp, future in futures.items()}
