"""pipelines/end_offsets.py: real ListOffsets snapshots of a real broker, and the lag arithmetic."""

from __future__ import annotations

import time
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.workload import create_topic
from pipelines.delta_tables import read_table
from pipelines.end_offsets import (
    PENDING,
    TABLE,
    CommittedMessage,
    EndOffsetsError,
    WatermarkHistory,
    append_snapshot,
    interpolated_time_at_offset,
    lag_in_messages,
    lag_seconds_from_message,
    lag_seconds_interpolated,
    snapshot_end_offsets,
    take_snapshot,
    unpassed_partitions,
)


def produce(client: dict[str, str], topic: str, per_partition: dict[int, list[int]]) -> None:
    """Messages with explicit CreateTime timestamps (ms), per partition, in order."""
    from confluent_kafka import Producer

    producer = Producer({**client, "linger.ms": 5})
    for partition, stamps in per_partition.items():
        for i, stamp in enumerate(stamps):
            producer.produce(topic, value=f"{partition}-{i}".encode(), partition=partition, timestamp=stamp)
    assert producer.flush(30) == 0


def commit(client: dict[str, str], group: str, topic: str, offsets: dict[int, int]) -> None:
    """A real consumer of ``group`` commits these offsets (OffsetCommit, without joining the group)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**client, "group.id": group, "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()], asynchronous=False)
    finally:
        consumer.close()


def delete_records_before(client: dict[str, str], topic: str, partition: int, offset: int) -> None:
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient

    admin = AdminClient(client)
    for future in admin.delete_records([TopicPartition(topic, partition, offset)], request_timeout=30).values():
        future.result(timeout=30)


@pytest.mark.broker
@pytest.mark.spark
def test_a_snapshot_records_each_partitions_log_start_high_watermark_and_last_stable_offset(
        spark, settings_for, kafka_broker) -> None:
    settings = settings_for()
    client = settings.kafka.librdkafka_config()
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    create_topic(client, topic, partitions=3)
    now = int(time.time() * 1000)
    produce(client, topic, {0: [now] * 10, 1: [now] * 7, 2: []})
    delete_records_before(client, topic, 0, 4)  # DeleteRecords moves partition 0's log start to 4
    commit(client, f"reader-{topic}", topic, {1: 2})  # __consumer_offsets exists, with a commit not ingested

    report = snapshot_end_offsets(spark, settings, [topic], message_timestamps=False)
    append_snapshot(spark, settings, report.snapshot)  # the same snapshot again: skipped (same txnVersion)

    # Pending: no ingest has read __consumer_offsets up to where it ended with the snapshot (other tests' groups
    # committed on this broker). silver.partition_end_offsets gains it once one has.
    assert read_table(spark, settings, TABLE).isEmpty()
    rows = read_table(spark, settings, PENDING).collect()
    assert sorted((r.topic, r.partition, r.earliest_offset, r.latest_offset, r.last_stable_offset) for r in rows) == [
        (topic, 0, 4, 10, 10), (topic, 1, 0, 7, 7), (topic, 2, 0, 0, 0)]
    assert {tuple(sorted(r.offsets_topic_end.items())) for r in rows} == {
        tuple(sorted(report.snapshot.offsets_topic_end.items()))}
    assert {(r.cluster_name, r.snapshot_id) for r in rows} == {("test", report.snapshot.snapshot_id)}
    assert {r.snapshot_time for r in rows} == {report.snapshot.snapshot_time.replace(tzinfo=None)}
    assert all(r.committed_messages == [] for r in rows)
    # And the topic's id, as the broker keeps it beside each partition's log (partition.metadata, KIP-516).
    stored = (kafka_broker.log_dirs / f"{topic}-0" / "partition.metadata").read_text().split()
    assert {r.topic_id for r in rows} == {stored[stored.index("topic_id:") + 1]}


@pytest.mark.spark
def test_a_table_from_before_topic_ids_gains_the_column_and_keeps_its_rows(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    from conf.settings import Settings
    from pipelines.delta_tables import table_path
    from pipelines.end_offsets import EndOffsetsSnapshot, PartitionEndOffsets, snapshot_frame

    settings = Settings(cluster_name="test", warehouse=str(tmp_path / "warehouse"))
    old = EndOffsetsSnapshot("test", 1_764_000_000_000, (PartitionEndOffsets("orders", 0, 0, 5, 5),))
    snapshot_frame(spark, old).drop("topic_id").write.format("delta").save(str(table_path(settings, TABLE)))
    new = dataclasses.replace(old, snapshot_id=old.snapshot_id + 60_000, partitions=(
        PartitionEndOffsets("orders", 0, 0, 9, 9, topic_id="aHcoLvlDTvK26y2j6N5kcg"),))

    append_snapshot(spark, settings, new)

    rows = read_table(spark, settings, TABLE).orderBy("snapshot_id").collect()
    assert [(r.latest_offset, r.topic_id) for r in rows] == [(5, None), (9, "aHcoLvlDTvK26y2j6N5kcg")]


@pytest.mark.broker
def test_without_topics_a_snapshot_covers_every_topic_but_the_internal_ones(settings_for) -> None:
    settings = settings_for()
    topic = f"visible-{uuid.uuid4().hex[:8]}"
    create_topic(settings.kafka.librdkafka_config(), topic, partitions=1)
    topics = {p.topic for p in take_snapshot(settings, message_timestamps=False).partitions}
    assert topic in topics
    assert not any(t.startswith("__") for t in topics)
    with pytest.raises(EndOffsetsError, match="no such topic: missing-topic"):
        take_snapshot(settings, ["missing-topic"])


@pytest.mark.broker
def test_the_last_stable_offset_stays_below_the_high_watermark_while_a_transaction_is_open(settings_for) -> None:
    from confluent_kafka import Producer

    settings = settings_for()
    client = settings.kafka.librdkafka_config()
    topic = f"payments-{uuid.uuid4().hex[:8]}"
    create_topic(client, topic, partitions=1)
    produce(client, topic, {0: [int(time.time() * 1000)] * 3})  # offsets 0-2, not transactional

    producer = Producer({**client, "transactional.id": f"txn-{topic}"})
    producer.init_transactions(30)
    producer.begin_transaction()
    for i in range(5):
        producer.produce(topic, value=f"txn-{i}".encode(), partition=0)
    assert producer.flush(30) == 0  # written to the log (offsets 3-7), not yet committed
    during = take_snapshot(settings, [topic], message_timestamps=False).by_partition()[(topic, 0)]
    producer.commit_transaction(30)
    # The coordinator writes the COMMIT marker to the partition after EndTxn returns: wait for it.
    deadline = time.monotonic() + 15
    while True:
        after = take_snapshot(settings, [topic], message_timestamps=False).by_partition()[(topic, 0)]
        if after.latest_offset == 9 or time.monotonic() > deadline:
            break
        time.sleep(0.2)

    # Open transaction: the LSO is the first offset of the open transaction (3); the high watermark is past it.
    assert (during.latest_offset, during.last_stable_offset) == (8, 3)
    # Committed: a COMMIT control record is appended (offset 8) and the LSO catches up with the high watermark.
    assert (after.latest_offset, after.last_stable_offset) == (9, 9)


@pytest.mark.broker
def test_a_snapshot_reads_the_timestamp_of_the_message_at_each_committed_offset(settings_for) -> None:
    settings = settings_for()
    client = settings.kafka.librdkafka_config()
    topic = f"clicks-{uuid.uuid4().hex[:8]}"
    create_topic(client, topic, partitions=2)
    base = int(time.time() * 1000) - 60_000
    stamps = {0: [base + 1000 * i for i in range(6)], 1: [base + 500 * i for i in range(4)]}
    produce(client, topic, stamps)
    suffix = uuid.uuid4().hex[:6]
    commit(client, f"slow-{suffix}", topic, {0: 1, 1: 4})  # partition 1 fully read: nothing to time
    commit(client, f"fast-{suffix}", topic, {0: 5, 1: 2})

    snapshot = take_snapshot(settings, [topic], message_timestamps=True).by_partition()
    assert sorted(snapshot[(topic, 0)].committed_messages, key=lambda m: m.offset) == [
        CommittedMessage(1, 1, stamps[0][1], "create_time"), CommittedMessage(5, 5, stamps[0][5], "create_time")]
    assert snapshot[(topic, 1)].committed_messages == (CommittedMessage(2, 2, stamps[1][2], "create_time"),)


# --- the arithmetic -------------------------------------------------------------------------------

def test_a_snapshot_is_passed_once_the_ingests_planned_ends_reach_the_offsets_topic_ends_recorded_with_it() -> None:
    ends = {0: 120, 1: 7, 2: 0}  # read_committed ends of __consumer_offsets when the snapshot was taken
    assert unpassed_partitions(ends, {0: 119, 1: 7}) == {0: 120}  # partition 2 is empty: nothing to read
    assert unpassed_partitions(ends, {0: 120, 1: 9}) == {}
    assert unpassed_partitions(ends, {}) == {0: 120, 1: 7}  # no ingest yet


def test_a_partition_ending_in_a_transaction_marker_is_passed_by_the_planned_end_not_by_bronzes_last_record(
        ) -> None:
    # A transactional offset commit at offset 6, its COMMIT marker at 7: the read_committed end is 8, the last
    # record a read_committed consumer ever gets is 6, and the ingest's batch planned up to 8.
    ends, newest_record_in_bronze, planned_end = {0: 8}, 6, 8
    assert unpassed_partitions(ends, {0: newest_record_in_bronze + 1}) == {0: 8}  # would wait for ever
    assert unpassed_partitions(ends, {0: planned_end}) == {}


def test_lag_is_the_distance_from_the_commit_to_the_high_watermark() -> None:
    result = lag_in_messages(committed=30, earliest=0, latest=100)
    assert (result.lag, result.commit_ahead_of_snapshot, result.committed_below_log_start) == (70, False, False)


def test_lag_is_null_when_nothing_is_committed() -> None:
    result = lag_in_messages(committed=None, earliest=0, latest=100)
    assert (result.lag, result.commit_ahead_of_snapshot, result.committed_below_log_start) == (None, None, None)


def test_a_commit_ahead_of_the_snapshot_has_zero_lag_and_is_flagged() -> None:
    result = lag_in_messages(committed=120, earliest=0, latest=100)
    assert (result.lag, result.commit_ahead_of_snapshot) == (0, True)


def test_a_commit_below_the_log_start_counts_only_the_messages_still_in_the_log() -> None:
    result = lag_in_messages(committed=10, earliest=40, latest=100)
    assert (result.lag, result.committed_below_log_start) == (60, True)


def test_interpolation_finds_when_the_high_watermark_passed_the_offset() -> None:
    history = [(0, 0), (10_000, 100), (20_000, 100), (30_000, 300)]
    # 50 lies between (0 ms, 0) and (10 s, 100): halfway, 5 s.
    assert interpolated_time_at_offset(history, 50) == 5_000.0
    # 100 was reached by 10 s, but the last snapshot still at 100 is at 20 s: the message at offset 100 came
    # after that, so the bracket is (20 s, 100)-(30 s, 300) and the time 20 s.
    assert interpolated_time_at_offset(history, 100) == 20_000.0
    assert interpolated_time_at_offset(history, 200) == 25_000.0
    assert interpolated_time_at_offset(history, 300) is None  # not reached yet
    assert interpolated_time_at_offset([(5_000, 40), (10_000, 80)], 20) is None  # before the history starts


@given(st.lists(st.integers(0, 50), max_size=30), st.booleans(), st.integers(-1, 60), st.data())
def test_a_watermark_history_interpolates_every_prefix_as_the_plain_scan_does(
        steps: list[int], rising: bool, offset: int, data: st.DataObject) -> None:
    """Rising histories (the binary search) and any others (handed to the scan), over each prefix of them."""
    latest = [sum(steps[:i + 1]) for i in range(len(steps))] if rising else steps
    history = [(1_000 * (i + 1), o) for i, o in enumerate(latest)]
    end = data.draw(st.integers(0, len(history)))
    assert WatermarkHistory.of(history).upto(end).time_at_offset(offset) == \
        interpolated_time_at_offset(history[:end], offset)


def test_a_watermark_history_that_went_down_is_read_as_the_plain_scan_reads_it() -> None:
    history = [(0, 0), (10_000, 100), (20_000, 30), (30_000, 300)]  # the topic was re-created at 20 s
    watermarks = WatermarkHistory.of(history)
    assert not watermarks.rising
    # The last snapshot at or below 50 is the one at 20 s (30), the bracket (20 s, 30)-(30 s, 300).
    assert watermarks.time_at_offset(50) == interpolated_time_at_offset(history, 50) == \
        20_000 + (50 - 30) * 10_000 / (300 - 30)


def test_lag_in_seconds_by_interpolation_ages_the_oldest_unread_message() -> None:
    history = WatermarkHistory.of([(0, 0), (10_000, 100), (30_000, 300)])
    assert lag_seconds_interpolated(history, 30_000, committed=50, earliest=0, lag=250) == 25.0
    # Below the log start (60): the oldest message still there is at 60, reached at 6 s.
    assert lag_seconds_interpolated(history, 30_000, committed=10, earliest=60, lag=240) == 24.0
    assert lag_seconds_interpolated(history, 30_000, committed=300, earliest=0, lag=0) == 0.0
    assert lag_seconds_interpolated(history, 30_000, committed=None, earliest=0, lag=None) is None


def test_lag_in_seconds_by_message_timestamp_is_the_age_of_the_committed_message() -> None:
    assert lag_seconds_from_message(now_ms=50_000, message_timestamp_ms=20_000, lag=5) == 30.0
    assert lag_seconds_from_message(now_ms=50_000, message_timestamp_ms=None, lag=5) is None
    assert lag_seconds_from_message(now_ms=50_000, message_timestamp_ms=None, lag=0) == 0.0
    assert lag_seconds_from_message(now_ms=50_000, message_timestamp_ms=20_000, lag=None) is None


def test_snapshot_topic_ids_are_written_the_way_the_decoders_write_them() -> None:
    from confluent_kafka import Uuid as ClientUuid

    from decoders.wire import Uuid
    from pipelines.end_offsets import kafka_uuid_text

    raw = bytes.fromhex("6877282ef9434ef2b6eb2da3e8de6472")  # a topic id a real broker wrote
    msb, lsb = (int.from_bytes(raw[i:i + 8], "big", signed=True) for i in (0, 8))
    # librdkafka prints standard base64 ('/' and '+'); Kafka and the decoders use base64url.
    assert kafka_uuid_text(ClientUuid(msb, lsb)) == str(Uuid(raw)) == "aHcoLvlDTvK26y2j6N5kcg"
    assert kafka_uuid_text(ClientUuid(-1, -5)) == str(Uuid(b"\xff" * 15 + b"\xfb"))


def test_a_warehouse_fed_only_from_a_copy_of_the_offsets_topic_has_its_snapshots_counted_as_passed(
        spark, warehouse_settings) -> None:  # type: ignore[no-untyped-def]
    from pathlib import Path

    from pipelines.end_offsets import fed_from_another_topic

    checkpoints = Path(warehouse_settings.warehouse) / "_checkpoints" / warehouse_settings.cluster_name
    assert not fed_from_another_topic(spark, warehouse_settings)  # a new warehouse waits for its ingest
    (checkpoints / "copied-offsets" / "ingest").mkdir(parents=True)
    assert fed_from_another_topic(spark, warehouse_settings)  # only a copy was ingested: nothing to compare with
    (checkpoints / "__consumer_offsets" / "ingest").mkdir(parents=True)
    assert not fed_from_another_topic(spark, warehouse_settings)  # the offsets topic itself: the rule applies
