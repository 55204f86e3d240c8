"""What gold's query reads of silver (``pipelines.gold.silver_changes``): each row silver's tables gain, once,
from their change data feeds, with the stream's checkpoint remembering how far it read."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from pipelines.delta_tables import ensure_table, idempotent_append, table_path
from pipelines.gold import silver_changes
from pipelines.gold.refresh import latest_version, touching_group
from pipelines.gold.silver_changes import BatchSummary, after_versions, bootstrap_needed, changed_rows, summarize
from pipelines.ingest import ensure_tables
from schemas import consumer_group_records, group_members, group_metadata, offset_commits
from tests.pipelines.gold.classic_history import silver_frames

pytestmark = [pytest.mark.spark]

SPEC = offset_commits.TABLE
AT = dt.datetime(2026, 11, 27, 6, 0)


@pytest.fixture
def settings(warehouse_settings):  # type: ignore[no-untyped-def]
    return warehouse_settings


def commits(spark, offsets: range):  # type: ignore[no-untyped-def]
    """Commits of group g to t-0, one per offset, each at its own source offset."""
    return spark.createDataFrame(
        [("c", "__consumer_offsets", 0, offset, AT, "g", "t", 0, offset, -1, "", AT, None, None, False, 1, 4,
          AT.date()) for offset in offsets], SPEC.schema)


def append(spark, settings, offsets: range, batch: int) -> int:  # type: ignore[no-untyped-def]
    idempotent_append(commits(spark, offsets), settings, SPEC, "test", batch)
    return latest_version(spark, settings, SPEC)


def drain(spark, settings, starting: dict[str, int] | None = None, touching=None  # type: ignore[no-untyped-def]
          ) -> list[tuple[BatchSummary, list[int]]]:
    """Run the query to what is available, as the gold refresh does; each batch's summary (with the groups
    ``touching`` finds) and commit offsets."""
    for spec in silver_changes.SOURCES:
        ensure_table(spark, settings, spec)
    batches: list[tuple[BatchSummary, list[int]]] = []

    def each(batch, batch_id):  # type: ignore[no-untyped-def]
        summary = summarize(batch, touching)
        rows = changed_rows(batch, summary).get(SPEC.name)
        batches.append((summary, sorted(r["source_offset"] for r in rows.collect()) if rows is not None else []))

    query = (silver_changes.silver_change_stream(spark, settings, starting).writeStream.foreachBatch(each)
             .option("checkpointLocation", silver_changes.checkpoint_path(settings))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    return batches


def offsets(batches) -> list[int]:  # type: ignore[no-untyped-def]
    return sorted(o for _, found in batches for o in found)


def test_each_appended_row_is_read_once_across_runs_of_the_query_whose_checkpoint_then_holds_a_plan(  # type: ignore[no-untyped-def]
        spark, settings) -> None:
    ensure_table(spark, settings, SPEC)
    assert bootstrap_needed(spark, settings, gold_tables_exist=True)  # no checkpoint: gold is rebuilt first
    append(spark, settings, range(0, 3), 0)
    second = append(spark, settings, range(3, 5), 1)
    first_run = drain(spark, settings, {spec.name: 0 for spec in silver_changes.SOURCES})
    assert offsets(first_run) == [0, 1, 2, 3, 4]
    assert first_run[-1][0].versions[SPEC.name] == second
    assert not bootstrap_needed(spark, settings, gold_tables_exist=True)
    assert bootstrap_needed(spark, settings, gold_tables_exist=False)  # a gold table deleted: rebuilt
    assert drain(spark, settings) == []  # nothing new: no batch at all
    last = append(spark, settings, range(5, 6), 2)
    [(summary, found)] = drain(spark, settings)
    assert found == [5]
    assert summary == BatchSummary(rows={SPEC.name: 1}, versions={SPEC.name: last}, other_changes=0)


def test_the_rows_of_a_table_come_back_with_exactly_its_columns(spark, settings) -> None:  # type: ignore[no-untyped-def]
    ensure_table(spark, settings, SPEC)
    append(spark, settings, range(0, 2), 0)
    seen = []
    for spec in silver_changes.SOURCES:
        ensure_table(spark, settings, spec)
    stream = silver_changes.silver_change_stream(spark, settings, {spec.name: 0 for spec in silver_changes.SOURCES})
    query = stream.writeStream.foreachBatch(
        lambda batch, _: seen.append(changed_rows(batch, summarize(batch))[SPEC.name].columns)).option(
        "checkpointLocation", silver_changes.checkpoint_path(settings)).trigger(availableNow=True).start()
    query.awaitTermination()
    assert seen == [SPEC.schema.fieldNames()]


def test_the_starting_version_is_read_again_and_nothing_before_it(spark, settings) -> None:  # type: ignore[no-untyped-def]
    # The bootstrap rebuilds gold at pinned versions and starts the query there: Delta refuses a version after
    # the newest, so that version's rows come once more (the refresh drops them: after_versions) and no older.
    ensure_table(spark, settings, SPEC)
    append(spark, settings, range(0, 3), 0)
    pinned = append(spark, settings, range(3, 5), 1)
    starting = {spec.name: 0 for spec in silver_changes.SOURCES} | {SPEC.name: pinned}
    assert offsets(drain(spark, settings, starting)) == [3, 4]


def test_after_versions_keeps_each_tables_rows_of_later_versions_and_all_rows_of_tables_not_named(spark) -> None:  # type: ignore[no-untyped-def]
    rows = spark.createDataFrame([("silver.offset_commits", 3), ("silver.offset_commits", 4),
                                  ("silver.group_metadata", 2), ("silver.topic_names", 0)],
                                 f"{silver_changes.SOURCE_TABLE} string, {silver_changes.COMMIT_VERSION} long")
    kept = rows.filter(after_versions({"silver.offset_commits": 3, "silver.group_metadata": 2})).collect()
    assert sorted(tuple(r) for r in kept) == [("silver.offset_commits", 4), ("silver.topic_names", 0)]


def test_an_optimize_between_appends_is_passed_over_and_a_delete_is_a_change_that_is_not_an_insert(  # type: ignore[no-untyped-def]
        spark, settings) -> None:
    ensure_table(spark, settings, SPEC)
    append(spark, settings, range(0, 2), 0)
    append(spark, settings, range(2, 4), 1)
    drain(spark, settings, {spec.name: 0 for spec in silver_changes.SOURCES})
    spark.sql(f"OPTIMIZE delta.`{table_path(settings, SPEC)}`")  # rewrites offsets 0-3 into one file
    append(spark, settings, range(4, 5), 2)
    [(summary, found)] = drain(spark, settings)
    assert found == [4] and summary.other_changes == 0
    spark.sql(f"DELETE FROM delta.`{table_path(settings, SPEC)}` WHERE source_offset = 1")
    append(spark, settings, range(5, 6), 3)
    batches = drain(spark, settings)
    assert sum(summary.other_changes for summary, _ in batches) == 1  # the refresh rebuilds gold from silver
    assert offsets(batches) == [5]


def test_a_table_from_before_the_change_data_feed_gains_it_when_the_ingest_starts(spark, settings) -> None:  # type: ignore[no-untyped-def]
    older = dataclasses.replace(SPEC, properties=())
    ensure_table(spark, settings, older)
    append(spark, settings, range(0, 2), 0)  # no change data recorded for this version
    ensure_tables(spark, settings)  # what the ingest (and `run`, before gold's query) does when it starts
    enabled = latest_version(spark, settings, SPEC)
    append(spark, settings, range(2, 3), 1)
    starting = {spec.name: 0 for spec in silver_changes.SOURCES} | {SPEC.name: enabled}
    assert offsets(drain(spark, settings, starting)) == [2]


def test_the_groups_a_batch_touches_are_those_of_its_new_records_and_members_alone(spark, settings) -> None:  # type: ignore[no-untyped-def]
    # The ingest appends a batch's GroupMetadata rows, then their members (two Delta commits), and gold's
    # query can plan a batch between the two: a batch can see the record without its members, and the next
    # one only the members; it must recompute their group.
    from pyspark.sql import functions as F

    from tests.quality.rows import frame, source

    metadata, members = silver_frames(spark, [("g", 0, 1, 2, 1, [("a", None, "t", [0]), ("b", None, "t", [1])])])
    for spec in silver_changes.SOURCES:
        ensure_table(spark, settings, spec)
    idempotent_append(members, settings, group_members.TABLE, "test", 0)
    # Commits touch no group (gold's MERGEs take them): those of another group add nothing to the scope.
    idempotent_append(commits(spark, range(0, 1)).withColumn("group", F.lit("committer")), settings, SPEC, "test", 0)
    [(first, _)] = drain(spark, settings, touching=touching_group())
    assert list(first.groups) == [("c", "g")] and first.rows[SPEC.name] == 1
    idempotent_append(metadata, settings, group_metadata.TABLE, "test", 0)
    # A KIP-848 consumer group's record touches its group, and so does a share group's (gold replays share groups).
    records = [{**source(1), "type": "consumer_group_metadata", "record_type": 3, "group_id": "k",
                "is_tombstone": False},
               {**source(2), "type": "share_group_metadata", "record_type": 11, "group_id": "s",
                "is_tombstone": False}]
    idempotent_append(frame(spark, consumer_group_records.TABLE, records), settings, consumer_group_records.TABLE,
                      "test", 0)
    [(second, _)] = drain(spark, settings, touching=touching_group())
    assert list(second.groups) == [("c", "g"), ("test", "k"), ("test", "s")]
