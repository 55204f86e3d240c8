"""pipelines/gold/committed_offsets.py on small hand-built silver rows: the latest live commit per partition.

Both ways the refresh builds the table: ``committed_offsets`` (the full rebuild from all of silver) and
``merge_commits`` (the incremental MERGE of what silver gained since). Records of one group share one
``__consumer_offsets`` partition, so append order decides: the later record time, then the later position.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from pipelines.delta_tables import ensure_table, read_table, table_path
from pipelines.gold.committed_offsets import TABLE, committed_offsets, merge_commits
from schemas.offset_commits import TABLE as SILVER

pytestmark = pytest.mark.spark

T0 = dt.datetime(2026, 11, 27, 10, 0, 0)


def commit(source_offset: int, seconds: int, group: str, partition: int, offset: int | None, *,
           leader_epoch: int = 5, source_partition: int = 0) -> dict[str, Any]:
    """A silver.offset_commits row; ``offset`` None is a tombstone (the offset deleted)."""
    at = T0 + dt.timedelta(seconds=seconds)
    return {"cluster_name": "c", "source_topic": "__consumer_offsets", "source_partition": source_partition,
            "source_offset": source_offset, "record_timestamp": at, "group": group, "topic": "orders",
            "partition": partition, "offset": offset, "leader_epoch": None if offset is None else leader_epoch,
            "metadata": None if offset is None else "", "commit_timestamp": None if offset is None else at,
            "expire_timestamp": None, "topic_id": None, "is_tombstone": offset is None, "record_type": 1,
            "value_version": None if offset is None else 4, "commit_date": at.date()}


def offsets(frame) -> dict[tuple[str, int], tuple[int, int | None, int]]:  # type: ignore[no-untyped-def]
    """(group, partition) -> (offset, leader_epoch, source_offset)."""
    return {(r["group"], r["partition"]): (r["offset"], r["leader_epoch"], r["source_offset"])
            for r in frame.collect()}


def test_the_latest_record_wins_a_tombstone_removes_the_partition_and_epoch_minus_one_is_null(spark) -> None:  # type: ignore[no-untyped-def]
    rows = [commit(0, 1, "g", 0, 10), commit(1, 2, "g", 0, 20), commit(2, 2, "g", 0, 15),  # same ms: position
            commit(3, 1, "g", 1, 7), commit(4, 3, "g", 1, None),  # deleted
            commit(5, 4, "h", 0, 3, leader_epoch=-1)]
    built = committed_offsets(spark.createDataFrame(rows, SILVER.schema))
    assert built.columns == TABLE.schema.fieldNames()
    assert offsets(built) == {("g", 0): (15, 5, 2), ("h", 0): (3, None, 5)}


def test_merging_what_silver_gained_gives_the_rebuild_of_all_of_it_and_merging_it_again_changes_nothing(
        spark, warehouse_settings) -> None:  # type: ignore[no-untyped-def]
    before = [commit(0, 1, "g", 0, 10), commit(1, 1, "g", 1, 7), commit(2, 1, "h", 0, 3)]
    gained = [commit(3, 5, "g", 0, 30),  # newer: updates
              commit(4, 6, "g", 1, None),  # tombstone: deletes
              commit(5, 6, "k", 2, 1),  # new key: inserted
              commit(6, 6, "m", 0, None),  # tombstone of a key gold never had: nothing
              commit(7, 0, "h", 0, 99)]  # appended before gold's row (an earlier time): ignored
    ensure_table(spark, warehouse_settings, TABLE)
    committed_offsets(spark.createDataFrame(before, SILVER.schema)).write.format("delta").mode("append").save(
        table_path(warehouse_settings, TABLE))
    expected = {("g", 0): (30, 5, 3), ("h", 0): (3, 5, 2), ("k", 2): (1, 5, 5)}
    # the full rebuild of all of silver: of the two h/0 records the later by time is offset 3
    assert offsets(committed_offsets(spark.createDataFrame(before + gained, SILVER.schema))) == expected

    merge_commits(spark, warehouse_settings, spark.createDataFrame(gained, SILVER.schema))
    assert offsets(read_table(spark, warehouse_settings, TABLE)) == expected
    merge_commits(spark, warehouse_settings, spark.createDataFrame(gained, SILVER.schema))
    assert offsets(read_table(spark, warehouse_settings, TABLE)) == expected
