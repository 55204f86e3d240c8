"""The offset rules of quality/offset_commits.py on hand-built silver rows (their queries, run in Spark)."""

from __future__ import annotations

import pytest

from quality import offset_commits
from quality.checkpoint import violations
from schemas import consumer_group_records, group_metadata
from schemas import offset_commits as offset_commits_table
from tests.quality.rows import at, frame, source

pytestmark = pytest.mark.spark


def commit(group: str, position: int, offset: int | None, partition: int = 0) -> dict:
    return {**source(position), "group": group, "topic": "orders", "partition": partition, "offset": offset,
            "commit_timestamp": None if offset is None else at(position), "is_tombstone": offset is None,
            "record_type": 1, "value_version": None if offset is None else 3}


def generation(group: str, position: int, number: int, members: int) -> dict:
    return {**source(position), "group": group, "protocol_type": "consumer", "generation": number,
            "member_count": members, "current_state_timestamp": at(position), "is_tombstone": False,
            "value_version": 3}


def epoch(group: str, position: int) -> dict:
    return {**source(position), "type": "consumer_group_metadata", "record_type": 3, "group_id": group,
            "is_tombstone": False}


def test_offsets_may_decrease_only_after_a_recorded_reset(spark, base_settings) -> None:  # type: ignore[no-untyped-def]
    commits = [
        # Reset while Empty: a new (Empty) generation is recorded, then two admin resets in a row.
        commit("reset", 11, 50), commit("reset", 13, 20), commit("reset", 14, 5),
        # A rewind within a generation with members: flagged.
        commit("rewind", 21, 50), commit("rewind", 22, 40),
        # The offset was deleted (tombstone) in between.
        commit("deleted", 31, 50), commit("deleted", 32, None), commit("deleted", 33, 10),
        # KIP-848: a group-epoch record in between exempts, a decrease within one epoch does not.
        commit("kip848", 41, 50), commit("kip848", 43, 30), commit("kip848", 44, 20),
        # A group only storing offsets (no generations) is not checked.
        commit("standalone", 50, 50), commit("standalone", 51, 10),
        # Another partition's lower offset is another key.
        commit("partitions", 61, 50, partition=0), commit("partitions", 62, 10, partition=1),
    ]
    metadata = [generation("reset", 10, 1, 2), generation("reset", 12, 2, 0), generation("rewind", 20, 1, 1),
                generation("deleted", 30, 1, 1), generation("partitions", 60, 1, 1)]
    records = [epoch("kip848", 40), epoch("kip848", 42)]
    frames = {
        offset_commits_table.TABLE.name: frame(spark, offset_commits_table.TABLE, commits),
        group_metadata.TABLE.name: frame(spark, group_metadata.TABLE, metadata),
        consumer_group_records.TABLE.name: frame(spark, consumer_group_records.TABLE, records),
    }
    found = violations(spark, offset_commits.OFFSETS_NEVER_DECREASE, offset_commits.TABLE, frames, base_settings)
    assert sorted((r["group"], r["previous_offset"], r["offset"], r["source_offset"]) for r in found.collect()) == [
        ("kip848", 30, 20, 44), ("rewind", 50, 40, 22)]


def test_timestamps_outside_the_configured_bounds_are_reported(spark, base_settings) -> None:  # type: ignore[no-untyped-def]
    import datetime as dt

    rows = [commit("ok", 1, 5), {**commit("old", 2, 5), "record_timestamp": dt.datetime(2009, 12, 31)},
            {**commit("future", 3, 5), "commit_timestamp": dt.datetime.now() + dt.timedelta(hours=1)}]
    frames = {offset_commits.TABLE: frame(spark, offset_commits_table.TABLE, rows)}
    found = violations(spark, offset_commits.TIMESTAMPS_WITHIN_BOUNDS, offset_commits.TABLE, frames, base_settings)
    assert sorted(r["group"] for r in found.collect()) == ["future", "old"]
