"""pipelines/gold/streams_task_assignments.py: gold.streams_task_assignments takes the replay's ``tasks`` rows, and
share and streams groups reach gold from silver.consumer_group_records.

The replay's rows have exactly the table's columns and a key of their own (what they hold:
tests/history/test_streams.py). The Spark test writes the share and streams groups of tests/history/test_share.py and
test_streams.py into silver.consumer_group_records as the ingest would (decoded from the bytes a broker writes), in
two batches, refreshes gold after each, and compares gold with a rebuild from all of silver.
"""

from __future__ import annotations

import base64
import datetime as dt
from typing import Any

import pytest

from pipelines.gold.streams_task_assignments import TABLE
from tests.pipelines.gold.replayed_rows import assert_rows_fit


def test_every_replayed_row_has_the_tables_columns_and_a_key_of_its_own() -> None:
    assert_rows_fit(TABLE, frozenset({"streams"}))


def silver_records(spark, entries: list[dict[str, Any]]):  # type: ignore[no-untyped-def]
    """silver.consumer_group_records rows of ``entries`` (``tests.history.group_log.Log`` records)."""
    from decoders.records import decode_record
    from schemas import consumer_group_records

    schema = consumer_group_records.TABLE.schema
    rows = []
    for e in entries:
        value = None if e["value"] is None else base64.b64decode(e["value"])
        decoded = decode_record(base64.b64decode(e["key"]), value)
        plain = decoded.to_json_dict()  # uuids in Kafka's base64url, as silver holds them
        v = plain["value"] or {}
        row = {"cluster_name": "c", "source_topic": "__consumer_offsets", "source_partition": e["partition"],
               "source_offset": e["offset"], "record_timestamp": dt.datetime.fromtimestamp(
                   1_790_000_000 + e["timestamp"] / 1000, dt.UTC).replace(tzinfo=None),
               "type": decoded.type, "record_type": decoded.key_version, "group_id": decoded.key["group_id"],
               "member_id": decoded.key.get("member_id"), "is_tombstone": decoded.value is None,
               "value_version": decoded.value_version,
               "group_epoch": v.get("epoch", v.get("assignment_epoch")), "member_epoch": v.get("member_epoch"),
               "previous_member_epoch": v.get("previous_member_epoch"), "member_state": v.get("state"),
               decoded.type: {"key": plain["key"], "value": plain["value"]}}
        rows.append(tuple(row.get(name) for name in schema.fieldNames()))
    return spark.createDataFrame(rows, schema)


@pytest.mark.spark
def test_share_and_streams_groups_reach_gold_and_a_refresh_per_batch_equals_a_rebuild(  # type: ignore[no-untyped-def]
        spark, warehouse_settings) -> None:
    from pyspark.sql import functions as F

    from pipelines.delta_tables import ensure_table, idempotent_append, read_table
    from pipelines.gold import refresh
    from schemas import consumer_group_records, group_members, group_metadata, offset_commits
    from tests.history.test_share import two_members_then_leave
    from tests.history.test_streams import upgraded_then_deleted

    settings = warehouse_settings
    for spec in (offset_commits.TABLE, group_metadata.TABLE, group_members.TABLE, consumer_group_records.TABLE):
        ensure_table(spark, settings, spec)
    share, streams = two_members_then_leave().entries, upgraded_then_deleted().entries
    for e in streams:
        e["partition"] = 1  # another coordinator partition than the share group's
    # first batch: each group's first records; second batch: the rest (a group gaining records is replayed whole)
    halves = [share[:len(share) // 2] + streams[:len(streams) // 2],
              share[len(share) // 2:] + streams[len(streams) // 2:]]
    for batch, entries in enumerate(halves):
        idempotent_append(silver_records(spark, entries), settings, consumer_group_records.TABLE, "test", batch)
        refresh.refresh_gold_tables(spark, settings)

    def types(name: str) -> set[tuple[str, str]]:
        spec = next(s for s in refresh.GOLD if s.name == name)
        return {(r["group"], r["group_type"]) for r in read_table(spark, settings, spec).select(
            "group", "group_type").distinct().collect()}

    both = {("share-g", "share"), ("streams-g", "streams")}
    for name in ("gold.group_generations", "gold.group_membership", "gold.group_state_history",
                 "gold.rebalance_events"):
        assert types(name) == both, name
    assert types("gold.partition_assignments") == {("share-g", "share")}
    assert types("gold.streams_task_assignments") == types("gold.streams_topology") == {("streams-g", "streams")}
    states = read_table(spark, settings, next(s for s in refresh.GOLD if s.name == "gold.group_state_history"))
    assert [r["state"] for r in states.filter(F.col("group") == "streams-g").orderBy("at").collect()] == [
        "NotReady", "Stable", "Reconciling", "Stable", "Assigning", "Stable", "Stable", "Empty", "Dead"]
    assert refresh.rebuild_differences(spark, settings) == {spec.name: (0, 0) for spec in refresh.GOLD}
