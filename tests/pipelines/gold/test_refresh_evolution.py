"""A warehouse written before KIP-848 gold existed gets the new columns (and the streams groups' tables) instead of
a failing refresh."""

from __future__ import annotations

import dataclasses

import pytest
from pyspark.sql import types as T

from pipelines.delta_tables import ensure_table, read_table
from pipelines.gold import partition_assignments, rebalance_events
from pipelines.gold.refresh import GROUP_TABLES, ensure_gold_tables, replace_groups

pytestmark = [pytest.mark.spark]

# The columns each group table gained for KIP-848 groups (see schemas/).
ADDED = {
    "gold.group_generations": {"group_type"},
    "gold.group_membership": {"group_type", "rack_id", "subscribed_topics", "subscribed_topic_regex",
                              "server_assignor", "first_member_epoch", "last_member_epoch", "process_id",
                              "user_endpoint", "topology_epoch"},
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
        if spec.name in ADDED:  # the streams groups' tables are new: made by ensure_gold_tables
            ensure_table(spark, settings, _as_before(spec))
    ensure_gold_tables(spark, settings)
    for spec in GROUP_TABLES:
        schema = read_table(spark, settings, spec).schema
        dropped = {f.name for f in DROPPED.get(spec.name, [])}
        assert set(schema.fieldNames()) == set(spec.schema.fieldNames()) | dropped, spec.name
        if spec.name in ADDED:
            assert schema["group_type"].metadata["comment"].startswith("'classic'")
    assert read_table(spark, settings, partition_assignments.TABLE).schema["topic"].nullable
    ensure_gold_tables(spark, settings)  # a second time: nothing left to change, no error
    # A refresh writes rows without the dropped column: Delta fills it with nulls.
    events = spark.createDataFrame([], rebalance_events.TABLE.schema)
    replace_groups(settings, rebalance_events.TABLE, events, [("c", "g")])
    assert "duration_upper_bound_ms" in read_table(spark, settings, rebalance_events.TABLE).columns
