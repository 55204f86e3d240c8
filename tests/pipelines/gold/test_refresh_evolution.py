"""A warehouse an older offsetlake wrote is brought up to today's tables instead of failing the refresh: the
group tables gain the KIP-848 columns; gold.offset_commit_rate, clustered by group before it was partitioned by
day, is made anew and gold rebuilt from silver."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from pyspark.sql import types as T

from pipelines import delta_tables
from pipelines.delta_tables import ensure_table, read_table, table_path
from pipelines.gold import offset_commit_rate, partition_assignments, rebalance_events
from pipelines.gold.refresh import GROUP_TABLES, ensure_gold_tables, refresh_gold_tables, replace_groups
from pipelines.storage import Storage
from schemas import offset_commits
from schemas.table_spec import GROUP_CLUSTERING

pytestmark = [pytest.mark.spark]

# The columns each group table gained for KIP-848 groups (see schemas/).
ADDED = {
    "gold.group_generations": {"group_type"},
    "gold.group_membership": {"group_type", "rack_id", "subscribed_topics", "subscribed_topic_regex",
                              "server_assignor", "first_member_epoch", "last_member_epoch"},
    "gold.partition_assignments": {"group_type", "assignment_kind", "topic_id"},
    "gold.group_state_history": {"group_type", "assignment_epoch"},
    "gold.rebalance_events": {"group_type", "started_at", "stopped_at_lower_bound", "stopped_at_upper_bound",
                              "stopped_ms_lower_bound", "stopped_ms_upper_bound"},
}
# Columns a table had before and no longer has (issue 12, item 3: bounds replaced it).
DROPPED = {"gold.rebalance_events": [T.StructField("duration_upper_bound_ms", T.LongType(), True)]}


def _as_before(spec):  # type: ignore[no-untyped-def]
    """The table as the previous release declared it: without the added columns, topic NOT NULL."""
    fields = [f for f in spec.schema.fields if f.name not in ADDED[spec.name]] + DROPPED.get(spec.name, [])
    if spec is partition_assignments.TABLE:
        fields = [T.StructField(f.name, f.dataType, False, f.metadata) if f.name == "topic" else f for f in fields]
    return dataclasses.replace(spec, schema=T.StructType(fields))


def test_an_older_warehouse_gains_the_new_columns_and_loses_the_topic_not_null(spark, settings_for) -> None:  # type: ignore[no-untyped-def]
    settings = settings_for()
    for spec in GROUP_TABLES:
        ensure_table(spark, settings, _as_before(spec))
    ensure_gold_tables(spark, settings)
    for spec in GROUP_TABLES:
        schema = read_table(spark, settings, spec).schema
        dropped = {f.name for f in DROPPED.get(spec.name, [])}
        assert set(schema.fieldNames()) == set(spec.schema.fieldNames()) | dropped, spec.name
        assert schema["group_type"].metadata["comment"].startswith("'classic'")
    assert read_table(spark, settings, partition_assignments.TABLE).schema["topic"].nullable
    ensure_gold_tables(spark, settings)  # a second time: nothing left to change, no error
    # A refresh writes rows without the dropped column: Delta fills it with nulls.
    events = spark.createDataFrame([], rebalance_events.TABLE.schema)
    replace_groups(settings, rebalance_events.TABLE, events, [("c", "g")])
    assert "duration_upper_bound_ms" in read_table(spark, settings, rebalance_events.TABLE).columns


T0 = dt.datetime(2026, 11, 27, 23, 58)


def silver_commits(spark, settings, first: int, count: int) -> None:  # type: ignore[no-untyped-def]
    """Append ``count`` commits of group g to silver.offset_commits, one every 40 s from T0 on (across midnight)."""
    rows = []
    for n in range(first, first + count):
        at = T0 + dt.timedelta(seconds=40 * n)
        rows.append({"cluster_name": "c", "source_topic": "__consumer_offsets", "source_partition": 0,
                     "source_offset": n, "record_timestamp": at, "group": "g", "topic": "t", "partition": n % 2,
                     "offset": n, "leader_epoch": None, "metadata": "", "commit_timestamp": at,
                     "expire_timestamp": None, "topic_id": None, "is_tombstone": False, "record_type": 1,
                     "value_version": 4, "commit_date": at.date()})
    ensure_table(spark, settings, offset_commits.TABLE)
    spark.createDataFrame(rows, offset_commits.TABLE.schema).write.format("delta").mode("append").save(
        table_path(settings, offset_commits.TABLE))


def test_a_commit_rate_table_clustered_by_group_is_made_anew_partitioned_by_day_and_gold_rebuilt(  # type: ignore[no-untyped-def]
        spark, warehouse_settings, monkeypatch, capsys) -> None:
    settings, spec = warehouse_settings, offset_commit_rate.TABLE
    silver_commits(spark, settings, 0, 4)
    refresh_gold_tables(spark, settings)
    # The table as offsetlake made it before 2026-11-28, holding a count no rebuild gives; then a new process.
    older = dataclasses.replace(spec, schema=T.StructType([f for f in spec.schema.fields if f.name != "minute_date"]),
                                partition_by=(), cluster_by=GROUP_CLUSTERING)
    Storage(spark).delete(table_path(settings, spec))
    ensure_table(spark, settings, older)
    spark.createDataFrame([("c", "g", T0, 99, 1, 1)], older.schema).write.format("delta").mode("append").save(
        table_path(settings, spec))
    monkeypatch.setattr(delta_tables, "_CURRENT", set())
    silver_commits(spark, settings, 4, 2)  # and new commits since its last refresh

    refresh_gold_tables(spark, settings)

    assert "gold.offset_commit_rate is laid out as an older offsetlake made it" in capsys.readouterr().err
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{table_path(settings, spec)}`").head()
    assert list(detail["partitionColumns"]) == ["minute_date"]
    rates = {(r["minute"], r["minute_date"], r["commit_records"]) for r in read_table(spark, settings, spec).collect()}
    assert rates == {(dt.datetime(2026, 11, 27, 23, 58), dt.date(2026, 11, 27), 2),
                     (dt.datetime(2026, 11, 27, 23, 59), dt.date(2026, 11, 27), 1),
                     (dt.datetime(2026, 11, 28, 0, 0), dt.date(2026, 11, 28), 2),
                     (dt.datetime(2026, 11, 28, 0, 1), dt.date(2026, 11, 28), 1)}
