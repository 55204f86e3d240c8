"""silver.topic_names: each topic id a snapshot described, once, with the first snapshot that named it; a warehouse
whose snapshots predate the table gets their ids from its first snapshot."""

from __future__ import annotations

import pytest

from pipelines.delta_tables import idempotent_append, read_table
from pipelines.end_offsets import TABLE as SNAPSHOTS
from pipelines.end_offsets import EndOffsetsSnapshot, PartitionEndOffsets, append_snapshot, snapshot_frame
from pipelines.end_offsets import app_id as snapshots_app_id
from pipelines.gold.refresh import latest_version
from schemas.topic_names import TABLE

pytestmark = [pytest.mark.spark]

ORDERS, PAYMENTS, REFUNDS = "AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg", "AAAAAAAAAAAAAAAAAAAAAw"


@pytest.fixture
def settings(warehouse_settings):  # type: ignore[no-untyped-def]
    return warehouse_settings


def snapshot(settings, snapshot_id: int, *topics: tuple[str, str | None]) -> EndOffsetsSnapshot:  # type: ignore[no-untyped-def]
    """A snapshot of two partitions of each (topic, topic id)."""
    return EndOffsetsSnapshot(settings.cluster_name, snapshot_id, tuple(
        PartitionEndOffsets(topic, partition, 0, 10, 10, topic_id=topic_id)
        for topic, topic_id in topics for partition in (0, 1)))


def rows(spark, settings) -> list[tuple]:  # type: ignore[no-untyped-def]
    return sorted((r["topic_id"], r["topic"], r["first_snapshot_id"]) for r in read_table(spark, settings, TABLE)
                  .collect())


def test_a_topic_id_gets_one_row_named_by_the_first_snapshot_that_described_it(spark, settings) -> None:  # type: ignore[no-untyped-def]
    append_snapshot(spark, settings, snapshot(settings, 1000, ("orders", ORDERS), ("no-id", None)))
    assert rows(spark, settings) == [(ORDERS, "orders", 1000)]
    version = latest_version(spark, settings, TABLE)
    append_snapshot(spark, settings, snapshot(settings, 2000, ("orders", ORDERS)))
    assert latest_version(spark, settings, TABLE) == version  # nothing new: nothing written
    append_snapshot(spark, settings, snapshot(settings, 3000, ("orders", ORDERS), ("payments", PAYMENTS)))
    assert rows(spark, settings) == [(ORDERS, "orders", 1000), (PAYMENTS, "payments", 3000)]


def test_the_ids_of_snapshots_made_before_the_table_are_taken_over_by_its_first_snapshot(  # type: ignore[no-untyped-def]
        spark, settings) -> None:
    for older in (snapshot(settings, 1000, ("orders", ORDERS)), snapshot(settings, 2000, ("orders", ORDERS),
                                                                              ("payments", PAYMENTS))):
        idempotent_append(snapshot_frame(spark, older), settings, SNAPSHOTS, snapshots_app_id(settings),
                          older.snapshot_id)  # as an offsetlake without silver.topic_names wrote them
    append_snapshot(spark, settings, snapshot(settings, 3000, ("orders", ORDERS), ("refunds", REFUNDS)))
    assert rows(spark, settings) == [(ORDERS, "orders", 1000), (PAYMENTS, "payments", 2000),
                                     (REFUNDS, "refunds", 3000)]
