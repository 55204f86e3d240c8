"""pipelines/gold/consumer_lag.py: lag and Burrow status from real snapshots and really ingested commits."""

from __future__ import annotations

import time
import uuid

import pytest

from broker.workload import create_topic, delete_group, run_members
from pipelines.delta_tables import read_table
from pipelines.end_offsets import snapshot_end_offsets
from pipelines.gold.consumer_lag import TABLE, refresh_consumer_lag
from pipelines.ingest import IngestOptions, run_ingest
from tests.ingest_scope import from_now_on
from tests.pipelines.test_end_offsets import commit, delete_records_before, produce

pytestmark = [pytest.mark.broker, pytest.mark.spark]


def test_lag_at_a_snapshot_is_what_was_produced_minus_what_was_committed(spark, settings_for) -> None:
    settings = from_now_on(settings_for())  # this test's groups, not every earlier test's
    client = settings.kafka.librdkafka_config()
    suffix = uuid.uuid4().hex[:8]
    topic = f"lag-{suffix}"
    full, partial, gone = f"full-{suffix}", f"partial-{suffix}", f"gone-{suffix}"
    create_topic(client, topic, partitions=2)
    base = int(time.time() * 1000) - 120_000
    stamp = {p: [base + 1000 * i + 500 * p for i in range(20)] for p in (0, 1)}  # message i of partition p

    s0 = snapshot_end_offsets(spark, settings, [topic]).snapshot  # empty topic: ends 0
    produce(client, topic, {p: stamp[p][:15] for p in (0, 1)})
    s1 = snapshot_end_offsets(spark, settings, [topic]).snapshot  # ends 15
    run_members(client, topic, full, 30, members=1)  # reads everything: commits 15 and 15
    commit(client, partial, topic, {0: 5, 1: 25})  # 25 is past the end: Kafka accepts it
    commit(client, gone, topic, {0: 3, 1: 3})
    delete_group(client, gone)  # offset tombstones
    produce(client, topic, {p: stamp[p][15:] for p in (0, 1)})  # ends 20
    delete_records_before(client, topic, 0, 8)  # partition 0 now starts at 8, above partial's commit
    s2 = snapshot_end_offsets(spark, settings, [topic]).snapshot

    run_ingest(spark, settings, IngestOptions(once=True))
    report = refresh_consumer_lag(spark, settings)
    assert report.snapshots == 3

    rows = {(r.snapshot_id, r.group, r.partition): r for r in read_table(spark, settings, TABLE).collect()}
    # Every commit came after s1, so only s2 has rows.
    assert {k[0] for k in rows} == {s2.snapshot_id}
    assert sorted((g, p) for _, g, p in rows) == sorted((g, p) for g in (full, partial, gone) for p in (0, 1))

    t0, t1, t2 = s0.snapshot_id, s1.snapshot_id, s2.snapshot_id
    expected = {
        # group, partition: committed, lag, ahead, below log start, interpolated s, message-timestamp s
        # full read 15 of 20: the message at 15 arrived after s1 (end 15) -> interpolated time t1.
        (full, 0): (15, 5, False, False, (t2 - t1) / 1000, (t2 - stamp[0][15]) / 1000),
        (full, 1): (15, 5, False, False, (t2 - t1) / 1000, (t2 - stamp[1][15]) / 1000),
        # partial committed 5 but the log starts at 8: 20 - 8 messages left, the oldest at 8, which the end
        # offset reached 8/15 of the way from s0 (0) to s1 (15); the snapshot read the message at 8.
        (partial, 0): (5, 12, False, True, (t2 - (t0 + 8 / 15 * (t1 - t0))) / 1000, (t2 - stamp[0][8]) / 1000),
        (partial, 1): (25, 0, True, False, 0.0, 0.0),
        (gone, 0): (None, None, None, None, None, None),
        (gone, 1): (None, None, None, None, None, None),
    }
    for (group, partition), (committed, lag, ahead, below, interpolated, by_message) in expected.items():
        row = rows[(t2, group, partition)]
        assert (row.committed_offset, row.lag, row.commit_ahead_of_snapshot, row.committed_below_log_start) == (
            committed, lag, ahead, below), (group, partition)
        assert row.lag_seconds_interpolated == pytest.approx(interpolated), (group, partition)
        assert row.lag_seconds_message_timestamp == pytest.approx(by_message), (group, partition)
        assert (row.earliest_offset, row.latest_offset, row.last_stable_offset) == (8 if partition == 0 else 0, 20, 20)

    # Burrow (caching.go), broker offsets [0, 15, 20] at s2:
    # full: its last commit had lag 0 against s1 (Rule 1) and 0 <= 15 spares it STOP -> OK, group OK.
    # partial/0: one commit, lag 10 against s1; broker offset 0 <= 5 spares STOP; never zero lag; the window's
    #   offsets never change (Rule 4) -> STALL. partial/1: current lag 0 -> OK. Group: STALL shown as ERR.
    # gone: no committed offset -> no partition status; no partition left -> NOTFOUND.
    statuses = {(g, p): (r.partition_status, r.group_status) for (_, g, p), r in rows.items()}
    assert statuses == {
        (full, 0): ("OK", "OK"), (full, 1): ("OK", "OK"),
        (partial, 0): ("STALL", "ERR"), (partial, 1): ("OK", "ERR"),
        (gone, 0): (None, "NOTFOUND"), (gone, 1): (None, "NOTFOUND"),
    }
    assert {g: r.group_lag for (_, g, _), r in rows.items()} == {full: 10, partial: 12, gone: None}

    # Re-running computes nothing; a new snapshot is computed alone, on top of the older ones' history.
    assert refresh_consumer_lag(spark, settings).snapshots == 0
    s3 = snapshot_end_offsets(spark, settings, [topic], message_timestamps=False).snapshot
    assert refresh_consumer_lag(spark, settings).snapshots == 1
    after = read_table(spark, settings, TABLE).collect()
    assert sorted(r.snapshot_id for r in after) == [t2] * 6 + [s3.snapshot_id] * 6
    assert {(r.group, r.partition): r.lag for r in after if r.snapshot_id == s3.snapshot_id} == {
        (full, 0): 5, (full, 1): 5, (partial, 0): 12, (partial, 1): 0, (gone, 0): None, (gone, 1): None}
