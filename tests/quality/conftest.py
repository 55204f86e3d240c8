"""A small real warehouse for the quality tests, built once per test module.

Real traffic on the session broker: a classic group (two members, range) that reads a topic and
leaves; an admin reset of its offsets to 0 while it is Empty (AlterConsumerGroupOffsets, what
``kafka-consumer-groups --reset-offsets`` does), then the group reads everything again; a KIP-848
group; two end-offset snapshots around more messages. Then what a scheduler runs: ingest, gold,
lag.
"""

from __future__ import annotations

import dataclasses
import uuid

import pytest

from conf.settings import KafkaSettings
from tests.ingest_scope import from_now_on

PARTITIONS = 3
MESSAGES = 60


@pytest.fixture(scope="module")
def warehouse(spark, kafka_broker, base_settings, tmp_path_factory):  # type: ignore[no-untyped-def]
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    from broker.workload import create_topic, produce_messages, run_members
    from pipelines.end_offsets import snapshot_end_offsets
    from pipelines.gold.consumer_lag import refresh_consumer_lag
    from pipelines.gold.refresh import refresh_gold
    from pipelines.ingest import IngestOptions, run_ingest

    settings = dataclasses.replace(
        base_settings, warehouse=str(tmp_path_factory.mktemp("quality") / "warehouse"),
        kafka=KafkaSettings(bootstrap_servers=kafka_broker.bootstrap_servers))
    settings = from_now_on(settings)  # ingest this module's traffic, not every earlier test's
    client = settings.kafka.librdkafka_config()
    suffix = uuid.uuid4().hex[:8]
    topic, classic, modern = f"quality-{suffix}", f"quality-classic-{suffix}", f"quality-kip848-{suffix}"
    create_topic(client, topic, PARTITIONS)
    produce_messages(client, topic, MESSAGES, PARTITIONS)
    run_members(client, topic, classic, MESSAGES, members=2, assignor="range")
    admin = AdminClient(client)
    reset = [TopicPartition(topic, p, 0) for p in range(PARTITIONS)]
    for future in admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(classic, reset)]).values():
        future.result(timeout=30)
    run_members(client, topic, classic, MESSAGES, members=2, assignor="range")
    run_members(client, topic, modern, MESSAGES, members=2, protocol="consumer")
    snapshot_end_offsets(spark, settings)
    produce_messages(client, topic, MESSAGES // 2, PARTITIONS)
    snapshot_end_offsets(spark, settings)
    run_ingest(spark, settings, IngestOptions(once=True))
    refresh_gold(spark, settings)
    refresh_consumer_lag(spark, settings)
    return {"settings": settings, "topic": topic, "classic": classic, "modern": modern}
