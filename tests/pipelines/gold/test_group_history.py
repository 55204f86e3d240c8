"""pipelines/gold/group_history.py: Spark feeds each group's silver rows to the replay and parses its rows back.

What the replay decides is tested without Spark in tests/history/; here only the driving: which commits reach the
replay as evidence (the latest per partition between two records, up to the later record's join completion), that
a group's silver rows come back as rows of every group table in the tables' schemas, and that the replay's rows
have exactly the columns of the tables they go to.
"""

from __future__ import annotations

import datetime as dt

import pytest

from history import TASKS, TOPOLOGY, classic, consumer
from pipelines.gold.group_history import commit_evidence, commits_in_windows, group_tables, merged_ranges
from pipelines.gold.refresh import GROUP_TABLES
from tests.pipelines.gold.classic_history import T0, silver_frames

A, B = ("a", None, "t", [0, 1]), ("b", None, "t", [2, 3])
# Generation 1 formed at 0 s (appended at 1 s); c joins, generation 2's join completes at 60 s, appended at 61 s.
RECORDS = [("g", 0, 1, 1, 0, [A, B]), ("g", 1, 2, 61, 60, [A, B, ("c", None, "t", [])])]
# (partition of t, seconds after T0): before the first record, within the gap, after the join completed
COMMITS = [(0, 0.5), (0, 30.0), (1, 50.0), (1, 59.5), (2, 59.8), (3, 40.0), (0, 60.5), (1, 62.0)]


def seconds(s: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=s)


def commit_frame(spark, commits):  # type: ignore[no-untyped-def]
    from schemas import offset_commits

    rows = [{"cluster_name": "c", "source_topic": "__consumer_offsets", "source_partition": 0,
             "source_offset": 100 + i, "record_timestamp": seconds(s), "group": "g", "topic": "t", "partition": p,
             "offset": i, "commit_timestamp": seconds(s), "is_tombstone": False, "record_type": 1,
             "commit_date": seconds(s).date()} for i, (p, s) in enumerate(commits)]
    names = offset_commits.TABLE.schema.fieldNames()
    return spark.createDataFrame([tuple(r.get(n) for n in names) for r in rows], offset_commits.TABLE.schema)


@pytest.mark.spark
def test_the_replay_gets_the_latest_commit_per_partition_between_a_record_and_the_next_join_completion(spark) -> None:  # type: ignore[no-untyped-def]
    metadata, _ = silver_frames(spark, RECORDS)
    t0_ms = metadata.selectExpr("min(unix_millis(record_timestamp)) - 1000 AS t0").first()["t0"]  # first at 1 s
    evidence = commit_evidence(metadata, commit_frame(spark, COMMITS)).collect()
    got = {(r["value"], (r["at_ms"] - t0_ms) / 1000) for r in evidence}
    # 0.5 s precedes the first record; 60.5 s and 62 s come after the join completed at 60 s
    assert got == {('{"topic":"t","partition":0}', 30.0), ('{"topic":"t","partition":1}', 59.5),
                   ('{"topic":"t","partition":2}', 59.8), ('{"topic":"t","partition":3}', 40.0)}


@pytest.mark.spark
def test_a_groups_silver_rows_come_back_as_rows_of_every_group_table_with_the_commits_bounding_the_stop(  # type: ignore[no-untyped-def]
        spark, base_settings) -> None:
    from schemas import consumer_group_records

    metadata, members = silver_frames(spark, RECORDS)
    records = spark.createDataFrame([], consumer_group_records.TABLE.schema)
    tables = group_tables(metadata, members, records, commit_frame(spark, COMMITS), base_settings, GROUP_TABLES)
    for spec in GROUP_TABLES:
        # names and types (JSON parsing leaves every field nullable; Delta enforces the table's own at write)
        assert [(f.name, f.dataType.simpleString()) for f in tables[spec.name].schema] == [
            (f.name, f.dataType.simpleString()) for f in spec.schema], spec.name
    [event] = tables["gold.rebalance_events"].collect()
    # a worked until 59.5 s, b until 59.8 s: the earliest of the two bounds every stop from below
    assert (event["likely_cause"], event["stopped_at_lower_bound"], event["stopped_at_upper_bound"]) == (
        "member_joined", seconds(59.5), seconds(60))
    assert event["members_joined"] == ["c"] and event["rebalances_in_window"] == 1
    assert sorted((r["member_id"], r["generation"]) for r in tables["gold.partition_assignments"].collect()
                  if r["partition"] == 0) == [("a", 1), ("a", 2)]


@pytest.mark.spark
def test_the_commits_within_the_records_windows_are_the_ones_the_evidence_uses(spark) -> None:  # type: ignore[no-untyped-def]
    # What a refresh reads of silver.offset_commits for the groups it replays: only commit times after a record
    # and up to the next record's join completion, so that Delta skips the other files.
    metadata, _ = silver_frames(spark, RECORDS)
    commits = commit_frame(spark, COMMITS)
    kept = sorted((r["commit_timestamp"] - T0).total_seconds() for r in commits_in_windows(commits, metadata).collect())
    assert kept == [30.0, 40.0, 50.0, 59.5, 59.8]
    assert sorted(commit_evidence(metadata, commits_in_windows(commits, metadata)).collect()) == sorted(
        commit_evidence(metadata, commits).collect())


def test_merged_ranges_joins_overlaps_and_closes_the_smallest_gaps_beyond_the_limit() -> None:
    assert merged_ranges([(5, 9), (0, 2), (1, 3), (3, 4)], 10) == [(0, 4), (5, 9)]
    assert merged_ranges([(0, 1), (2, 3), (10, 11), (13, 14), (30, 31)], 3) == [(0, 3), (10, 14), (30, 31)]
    assert merged_ranges([(0, 1), (5, 6)], 1) == [(0, 6)]
    assert merged_ranges([], 3) == []


def test_every_group_table_takes_replay_rows_with_exactly_its_columns_of_both_protocols() -> None:
    from history.group import group_rows

    member = classic.ClassicMember("a", client_id="a", subscribed_topics=("t",), assigned=(("t", (0,)),))
    classic_records = [classic.GroupMetadataRecord(1000, (0, 0), generation=1, protocol="range", member_count=1,
                                                   current_state_ms=900, members=(member,)),
                       classic.GroupMetadataRecord(5000, (0, 1), generation=2, protocol="range", member_count=0,
                                                   current_state_ms=5000)]
    info = consumer.MemberInfo(client_id="k", subscribed_topics=("t",))
    consumer_records = [
        consumer.GroupRecord(7000, (0, 2), consumer.MEMBER_METADATA, member_id="k", member=info),
        consumer.GroupRecord(7000, (0, 3), consumer.GROUP_METADATA, epoch=1),
        consumer.GroupRecord(7000, (0, 4), consumer.TARGET_MEMBER, member_id="k", target=frozenset({("id", 0)})),
        consumer.GroupRecord(7000, (0, 5), consumer.TARGET_METADATA, epoch=1),
        consumer.GroupRecord(7000, (0, 6), consumer.CURRENT_ASSIGNMENT, member_id="k",
                             current=consumer.CurrentAssignment(1, assigned=frozenset({("id", 0)})))]
    found = group_rows(classic_records, (), consumer_records)
    for spec in GROUP_TABLES:
        rows = found.rows[spec.replay_rows]
        streams_only = spec.replay_rows in (TASKS, TOPOLOGY)  # tests/history/test_streams.py
        assert {row["group_type"] for row in rows} == (set() if streams_only else {"classic", "consumer"}), spec.name
        for row in rows:
            assert sorted(row) == sorted(set(spec.schema.fieldNames()) - {"cluster_name", "group"}), spec.name
