"""pipelines/raw_records.py: __consumer_offsets from a real broker lands in Delta, record for record."""

from __future__ import annotations

import struct
import uuid

import pytest

from broker.workload import consume_and_commit, create_topic, produce_messages
from pipelines.raw_records import land_raw_records, raw_landing

pytestmark = [pytest.mark.broker, pytest.mark.spark]


def parse_offset_commit_key(key: bytes) -> tuple[str, str, int]:
    """(group, topic, partition) from an OffsetCommitKey, read straight from Kafka's layout:
    int16 type, int16-length group, int16-length topic, int32 partition."""
    (group_len,) = struct.unpack_from(">h", key, 2)
    group = key[4:4 + group_len].decode()
    pos = 4 + group_len
    (topic_len,) = struct.unpack_from(">h", key, pos)
    topic = key[pos + 2:pos + 2 + topic_len].decode()
    (partition,) = struct.unpack_from(">i", key, pos + 2 + topic_len)
    return group, topic, partition


def parse_group_key(key: bytes) -> str:
    (group_len,) = struct.unpack_from(">h", key, 2)
    return key[4:4 + group_len].decode()


def test_a_committing_group_lands_offset_commit_records_for_exactly_its_partitions(spark, settings_for) -> None:
    settings = settings_for()
    client = settings.kafka.librdkafka_config()
    suffix = uuid.uuid4().hex[:8]
    topic, group = f"orders-{suffix}", f"billing-{suffix}"
    create_topic(client, topic, partitions=3)
    produce_messages(client, topic, count=90, partitions=3)
    run = consume_and_commit(client, topic, group, expected=90)
    assert run.committed == {0: 30, 1: 30, 2: 30}

    landing = land_raw_records(spark, settings)
    rows = spark.read.format("delta").load(str(landing.table_path)).collect()

    commits = [r for r in rows if r["key_type"] == 1 and parse_offset_commit_key(r["key"])[0] == group]
    assert {parse_offset_commit_key(r["key"])[1:] for r in commits} == {(topic, 0), (topic, 1), (topic, 2)}
    group_records = [r for r in rows if r["key_type"] == 2 and parse_group_key(r["key"]) == group]
    assert group_records, "joining and leaving writes GroupMetadata (key type 2) records"
    assert all(r["cluster_name"] == "test" and r["topic"] == "__consumer_offsets" for r in rows)
    # The source position is kept, and no record is landed twice.
    positions = [(r["partition"], r["offset"]) for r in rows]
    assert len(positions) == len(set(positions))


def test_a_second_run_resumes_from_the_checkpoint_and_adds_only_new_records(spark, settings_for) -> None:
    settings = settings_for()
    client = settings.kafka.librdkafka_config()
    suffix = uuid.uuid4().hex[:8]
    topic = f"payments-{suffix}"
    create_topic(client, topic, partitions=1)
    produce_messages(client, topic, count=10, partitions=1)
    consume_and_commit(client, topic, f"first-{suffix}", expected=10)
    landing = land_raw_records(spark, settings)
    before = spark.read.format("delta").load(str(landing.table_path)).count()

    consume_and_commit(client, topic, f"second-{suffix}", expected=10)
    land_raw_records(spark, settings)
    rows = spark.read.format("delta").load(str(landing.table_path)).collect()
    positions = [(r["partition"], r["offset"]) for r in rows]
    assert len(rows) > before
    assert len(positions) == len(set(positions)), "records already landed are not landed again"
    assert any(r["key_type"] == 1 and parse_offset_commit_key(r["key"])[0] == f"second-{suffix}" for r in rows)


def test_the_landing_is_per_cluster(settings_for) -> None:
    a = raw_landing(settings_for(cluster_name="east"))
    b = raw_landing(settings_for(cluster_name="west"))
    assert a.checkpoint_path != b.checkpoint_path
