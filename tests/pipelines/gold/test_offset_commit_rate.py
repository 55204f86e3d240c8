"""pipelines/gold/offset_commit_rate.py on small hand-built silver rows: commits per group per minute.

Both ways the refresh builds the table: ``offset_commit_rate`` (the full rebuild from all of silver) and
``merge_rates`` (the incremental MERGE, which recounts from silver every minute that received a new commit,
so that merging the same records twice counts nothing twice). One OffsetCommit request writes one record
per partition, all with the request's commit timestamp; a tombstone deletes an offset and is no commit.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

import pytest
from pyspark.sql import functions as F

from pipelines.delta_tables import ensure_table, read_table, table_path
from pipelines.gold.offset_commit_rate import TABLE, merge_rates, offset_commit_rate
from schemas.offset_commits import TABLE as SILVER

pytestmark = pytest.mark.spark

T0 = dt.datetime(2026, 11, 27, 10, 0, 0)


def commit(source_offset: int, seconds: float, group: str, partition: int, *, topic: str = "orders",
           tombstone: bool = False, commit_time: bool = True) -> dict[str, Any]:
    """A silver.offset_commits row committed (and appended) ``seconds`` after T0."""
    at = T0 + dt.timedelta(seconds=seconds)
    return {"cluster_name": "c", "source_topic": "__consumer_offsets", "source_partition": 0,
            "source_offset": source_offset, "record_timestamp": at, "group": group, "topic": topic,
            "partition": partition, "offset": None if tombstone else 100 + source_offset,
            "leader_epoch": None, "metadata": None if tombstone else "",
            "commit_timestamp": at if commit_time and not tombstone else None, "expire_timestamp": None,
            "topic_id": None, "is_tombstone": tombstone, "record_type": 1, "value_version": None if tombstone else 4,
            "commit_date": at.date()}


def rates(frame) -> dict[tuple[str, int], tuple[int, int, int]]:  # type: ignore[no-untyped-def]
    """(group, minute after T0) -> (commit_records, commit_requests, partitions)."""
    return {(r["group"], int((r["minute"] - T0).total_seconds()) // 60):
            (r["commit_records"], r["commit_requests"], r["partitions"]) for r in frame.collect()}


def test_a_request_of_three_partitions_is_three_records_and_one_request_and_tombstones_do_not_count(spark) -> None:  # type: ignore[no-untyped-def]
    rows = [commit(0, 1, "g", 0), commit(1, 1, "g", 1), commit(2, 1, "g", 2),  # one request, three partitions
            commit(3, 30, "g", 0),  # a second request in the same minute, a partition already counted
            commit(4, 59.9, "g", 0, tombstone=True),  # deletion
            commit(5, 61, "g", 0),  # the next minute
            commit(6, 5, "h", 0, tombstone=True)]  # a group with only a deletion has no row
    built = offset_commit_rate(spark.createDataFrame(rows, SILVER.schema))
    assert built.columns == TABLE.schema.fieldNames()
    assert rates(built) == {("g", 0): (4, 2, 3), ("g", 1): (1, 1, 1)}


def test_a_commit_without_commit_time_is_counted_in_the_minute_it_was_appended(spark) -> None:  # type: ignore[no-untyped-def]
    rows = [commit(0, 125, "g", 0, commit_time=False)]
    assert rates(offset_commit_rate(spark.createDataFrame(rows, SILVER.schema))) == {("g", 2): (1, 0, 1)}


def test_merging_what_silver_gained_recounts_the_touched_minutes_and_merging_it_again_changes_nothing(
        spark, warehouse_settings) -> None:  # type: ignore[no-untyped-def]
    before = [commit(0, 1, "g", 0), commit(1, 1, "g", 1),  # g, minute 0: one request
              commit(2, 70, "g", 0),  # g, minute 1
              commit(3, 10, "h", 0)]  # h, minute 0
    gained = [commit(4, 40, "g", 0), commit(5, 40, "g", 2),  # g, minute 0: a second request, a new partition
              commit(6, 50, "h", 0, tombstone=True),  # h's minute 0 is recounted: still one commit
              commit(7, 200, "k", 0)]  # a new group
    ensure_table(spark, warehouse_settings, TABLE)
    offset_commit_rate(spark.createDataFrame(before, SILVER.schema)).write.format("delta").mode("append").save(
        table_path(warehouse_settings, TABLE))
    everything = spark.createDataFrame(before + gained, SILVER.schema)
    expected = {("g", 0): (4, 2, 3), ("g", 1): (1, 1, 1), ("h", 0): (1, 1, 1), ("k", 3): (1, 1, 1)}
    assert rates(offset_commit_rate(everything)) == expected

    for _ in range(2):
        merge_rates(spark, warehouse_settings, spark.createDataFrame(gained, SILVER.schema), everything)
        assert rates(read_table(spark, warehouse_settings, TABLE)) == expected


def test_merging_recounts_a_touched_minute_from_commits_without_commit_time_appended_in_it(
        spark, warehouse_settings) -> None:  # type: ignore[no-untyped-def]
    before = [commit(0, 301, "g", 0, commit_time=False)]  # minute 5 by its append time
    gained = [commit(1, 302, "g", 1, commit_time=False)]
    ensure_table(spark, warehouse_settings, TABLE)
    offset_commit_rate(spark.createDataFrame(before, SILVER.schema)).write.format("delta").mode("append").save(
        table_path(warehouse_settings, TABLE))
    everything = spark.createDataFrame(before + gained, SILVER.schema)
    merge_rates(spark, warehouse_settings, spark.createDataFrame(gained, SILVER.schema), everything)
    assert rates(read_table(spark, warehouse_settings, TABLE)) == {("g", 5): (2, 0, 2)}


def test_merging_leaves_the_untouched_minutes_and_groups_as_they_are(spark, warehouse_settings) -> None:  # type: ignore[no-untyped-def]
    before = [commit(0, 10, "g", 0), commit(1, 70, "g", 0), commit(2, 10, "h", 0)]
    gained = [commit(3, 20, "g", 1)]  # touches g's minute 0 only
    ensure_table(spark, warehouse_settings, TABLE)
    stored = offset_commit_rate(spark.createDataFrame(before, SILVER.schema)).withColumn("commit_records",
                                                                                      F.lit(99).cast("long"))
    stored.write.format("delta").mode("append").save(table_path(warehouse_settings, TABLE))
    everything = spark.createDataFrame(before + gained, SILVER.schema)
    merge_rates(spark, warehouse_settings, spark.createDataFrame(gained, SILVER.schema), everything)
    # g's minute 0 recounted from silver; g's minute 1 and h's minute 0 keep what the table held (99 here).
    assert rates(read_table(spark, warehouse_settings, TABLE)) == {
        ("g", 0): (2, 2, 2), ("g", 1): (99, 1, 1), ("h", 0): (99, 1, 1)}


def test_merging_only_tombstones_changes_nothing(spark, warehouse_settings) -> None:  # type: ignore[no-untyped-def]
    before = [commit(0, 10, "g", 0)]
    ensure_table(spark, warehouse_settings, TABLE)
    offset_commit_rate(spark.createDataFrame(before, SILVER.schema)).write.format("delta").mode("append").save(
        table_path(warehouse_settings, TABLE))
    gained = [commit(1, 20, "g", 0, tombstone=True)]
    everything = spark.createDataFrame(before + gained, SILVER.schema)
    merge_rates(spark, warehouse_settings, spark.createDataFrame(gained, SILVER.schema), everything)
    assert rates(read_table(spark, warehouse_settings, TABLE)) == {("g", 0): (1, 1, 1)}


def test_a_minute_is_filed_under_its_utc_date(spark) -> None:  # type: ignore[no-untyped-def]
    before_midnight = T0.replace(hour=23, minute=59, second=30)
    rows = [commit(0, (before_midnight - T0).total_seconds(), "g", 0),
            commit(1, (before_midnight - T0).total_seconds() + 60, "g", 0)]
    built = {r["minute"]: r["minute_date"] for r in offset_commit_rate(spark.createDataFrame(rows, SILVER.schema))
             .collect()}
    assert built == {dt.datetime(2026, 11, 27, 23, 59): dt.date(2026, 11, 27),
                     dt.datetime(2026, 11, 28, 0, 0): dt.date(2026, 11, 28)}


def test_merging_reads_only_the_days_of_the_recounted_minutes(spark, warehouse_settings) -> None:  # type: ignore[no-untyped-def]
    """The MERGE names the recounted minutes' days, so Delta reads only those days' files: here the earlier
    day's files are gone from storage, and the MERGE of the next day's commits does not miss them."""
    a_day = 86_400
    before = [commit(0, 10, "g", 0), commit(1, a_day + 10, "g", 0)]
    gained = [commit(2, a_day + 20, "g", 1)]  # the next day's minute 0
    ensure_table(spark, warehouse_settings, TABLE)
    path = table_path(warehouse_settings, TABLE)
    offset_commit_rate(spark.createDataFrame(before, SILVER.schema)).write.format("delta").mode("append").save(path)
    first_day = [f for f in spark.read.format("delta").load(path).inputFiles() if "minute_date=2026-11-27" in f]
    assert len(first_day) == 1
    os.remove(first_day[0].removeprefix("file:"))

    everything = spark.createDataFrame(before + gained, SILVER.schema)
    merge_rates(spark, warehouse_settings, spark.createDataFrame(gained, SILVER.schema), everything)
    recounted = read_table(spark, warehouse_settings, TABLE).filter("minute_date = DATE'2026-11-28'")
    assert {(k[0], k[1] - 24 * 60): v for k, v in rates(recounted).items()} == {("g", 0): (2, 2, 2)}
