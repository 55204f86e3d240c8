"""What a gold refresh reads of silver: the rows appended since the version gold reflects, from Delta's change data
feed, or the whole table when silver did more than append (``pipelines.gold.refresh.silver_changes``)."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from pipelines.delta_tables import ensure_table, idempotent_append, table_path
from pipelines.gold.refresh import (
    GroupScope,
    SilverChanges,
    SilverVersions,
    is_small,
    latest_version,
    silver_changes,
    silver_versions,
    touched_groups,
)
from pipelines.ingest import ensure_tables
from schemas import group_members, group_metadata, offset_commits
from schemas.table_spec import CHANGE_DATA_FEED
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


def offsets_of(change) -> list[int]:  # type: ignore[no-untyped-def]
    return sorted(row["source_offset"] for row in change.rows.collect())


def three_appends(spark, settings) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Offsets 0-2, 3-4 and 5 appended in three versions: (the first version, the last)."""
    ensure_table(spark, settings, SPEC)
    first = append(spark, settings, range(0, 3), 0)
    append(spark, settings, range(3, 5), 1)
    return first, append(spark, settings, range(5, 6), 2)


def test_a_refresh_reads_only_the_rows_appended_after_the_version_it_reflects(spark, settings) -> None:  # type: ignore[no-untyped-def]
    first, last = three_appends(spark, settings)
    change = silver_changes(spark, settings, SPEC, first)
    assert not change.full and change.version == last
    assert offsets_of(change) == [3, 4, 5]
    assert change.rows.columns == spark.read.format("delta").load(table_path(settings, SPEC)).columns
    assert silver_changes(spark, settings, SPEC, last) is None


def test_delta_history_tells_how_many_rows_the_new_versions_appended_before_any_is_read(spark, settings) -> None:  # type: ignore[no-untyped-def]
    first, last = three_appends(spark, settings)
    new = silver_versions(spark, settings, SPEC, first)
    assert new is not None and (new.version, new.appended, new.rows) == (last, (first + 1, last), 3)
    never_read = silver_versions(spark, settings, SPEC, None)
    assert never_read is not None and (never_read.appended, never_read.rows) == (None, None)


def test_a_refresh_runs_interpreted_only_on_a_counted_increment_within_the_limit() -> None:
    small, large = (SilverVersions(SPEC, 9, (8, 9), rows) for rows in (400, 600))
    assert is_small([small, small], 800)
    assert not is_small([small, large], 800)
    assert not is_small([small, SilverVersions(SPEC, 9, (8, 9), None)], 800)  # rows not counted
    assert not is_small([SilverVersions(SPEC, 9, None, None)], 800)  # the whole table: a rebuild
    assert not is_small([small], 0)  # 0: always generated code


def test_an_optimize_between_appends_is_passed_over(spark, settings) -> None:  # type: ignore[no-untyped-def]
    ensure_table(spark, settings, SPEC)
    append(spark, settings, range(0, 2), 0)
    first = append(spark, settings, range(2, 4), 1)
    spark.sql(f"OPTIMIZE delta.`{table_path(settings, SPEC)}`")  # rewrites offsets 0-3 into one file
    append(spark, settings, range(4, 5), 2)
    change = silver_changes(spark, settings, SPEC, first)
    assert not change.full
    assert offsets_of(change) == [4]


def test_a_delete_makes_the_refresh_read_the_whole_table(spark, settings) -> None:  # type: ignore[no-untyped-def]
    ensure_table(spark, settings, SPEC)
    first = append(spark, settings, range(0, 4), 0)
    spark.sql(f"DELETE FROM delta.`{table_path(settings, SPEC)}` WHERE source_offset = 1")
    append(spark, settings, range(4, 5), 1)
    change = silver_changes(spark, settings, SPEC, first)
    assert change.full
    assert offsets_of(change) == [0, 2, 3, 4]


def test_a_table_from_before_the_change_data_feed_gains_it_and_older_versions_are_read_in_full(  # type: ignore[no-untyped-def]
        spark, settings) -> None:
    older = dataclasses.replace(SPEC, properties=())
    ensure_table(spark, settings, older)
    created = latest_version(spark, settings, SPEC)
    before = append(spark, settings, range(0, 2), 0)  # no change data recorded for this version
    ensure_tables(spark, settings)  # what the ingest does when it starts
    properties = spark.sql(f"DESCRIBE DETAIL delta.`{table_path(settings, SPEC)}`").head()["properties"]
    assert properties.get(CHANGE_DATA_FEED[0]) == CHANGE_DATA_FEED[1]
    append(spark, settings, range(2, 3), 1)
    since_created = silver_changes(spark, settings, SPEC, created)
    assert since_created.full and offsets_of(since_created) == [0, 1, 2]
    since_before = silver_changes(spark, settings, SPEC, before)
    assert not since_before.full and offsets_of(since_before) == [2]


def test_new_members_alone_touch_their_group_as_their_record_does(spark) -> None:  # type: ignore[no-untyped-def]
    # The ingest appends a batch's GroupMetadata rows, then their members (two Delta commits), while `run`
    # refreshes gold beside it: a refresh can see the record without its members, and the next one only the
    # members; it must recompute their group.
    metadata, members = silver_frames(spark, [("g", 0, 1, 2, 1, [("a", None, "t", [0]), ("b", None, "t", [1])])])
    assert touched_groups({group_members.TABLE.name: SilverChanges(7, members, full=False)}) == GroupScope([("c", "g")])
    assert touched_groups({group_metadata.TABLE.name: SilverChanges(7, metadata, full=False)}) == GroupScope(
        [("c", "g")])
    assert touched_groups({group_members.TABLE.name: SilverChanges(7, None, full=False)}) is None
