"""Gold tables against the reference coordinator: every scenario's records go through the real pipeline.

The warehouse is the shared scenario warehouse (``tests/pipelines/scenario_warehouse.py``): the records of
all scenarios in ``conf/scenarios/`` produced to one plain topic on the embedded broker in two
parts, ingested into silver after each part, and gold refreshed after each ingest; a third
refresh has nothing new. The expected rows are what ``pipelines/validation.py`` derives from the
simulator's timeline (``coordinator/timeline.py``), narrowed by rules that say what the records
can show (spelled out there, where they are applied):

* a generation is visible only if a GroupMetadata record was written for it: it reached Stable
  (``stable_at``) or it has no members (Empty); a generation cut short in CompletingRebalance is
  not, so the visible generation before it ends when the next *visible* one starts;
* record times: each record stands for a time (``record_at``): the first record of a generation
  for its currentStateTimestamp, any other record (a static member swap) and a tombstone for
  its append time. A departure is seen at the first record time at or after it;
* a member's stay starts when the first record lists it: ``max(joined, its first visible
  generation's start)``; members of no visible generation never appear;
* PreparingRebalance is never persisted; CompletingRebalance only shows for generations that
  reached Stable.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from pipelines.delta_tables import read_table
from pipelines.gold.refresh import GOLD, full_rebuild, groups_predicate, rebuild_differences, row_differences
from pipelines.validation import (
    CAUSES,
    expected_committed_offsets,
    expected_consumer_group_assignments,
    expected_consumer_group_generations,
    expected_consumer_group_membership,
    expected_consumer_group_rebalances,
    expected_consumer_group_state_history,
    expected_group_generations,
    expected_group_membership,
    expected_group_state_history,
    expected_partition_assignments,
    visible_generations,
)

pytestmark = [pytest.mark.broker, pytest.mark.spark]


@pytest.fixture(scope="module")
def run(spark, scenario_warehouse):  # type: ignore[no-untyped-def]
    """The shared scenario warehouse (tests/pipelines/scenario_warehouse.py), read back once for this module."""
    settings = scenario_warehouse["settings"]
    return {
        **scenario_warehouse, "results": list(scenario_warehouse["results"].values()),
        "gold": {spec.name: _rows(read_table(spark, settings, spec)) for spec in GOLD},
        "full": {name: _rows(frame) for name, frame in full_rebuild(spark, settings).items()},
    }


def _rows(frame) -> list[dict]:  # type: ignore[no-untyped-def]
    """Rows as dicts, timestamps as epoch milliseconds (the simulator's unit)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    columns = [F.unix_millis(f.name).alias(f.name) if isinstance(f.dataType, T.TimestampType) else F.col(f.name)
               for f in frame.schema.fields]
    return [row.asDict(recursive=True) for row in frame.select(*columns).collect()]


def _gold(run, table: str, group_type: str = "classic") -> list[dict]:  # type: ignore[no-untyped-def]
    """Gold's rows of classic groups (or of KIP-848 groups: ``group_type`` 'consumer'); committed offsets
    and commit rates have no group type."""
    return [r for r in run["gold"][f"gold.{table}"] if r.get("group_type", group_type) == group_type]


def _expected(run, rows_of) -> list[dict]:  # type: ignore[no-untyped-def]
    """What pipelines/validation.py's rules say gold must hold, over every scenario of the run."""
    return [row for result in run["results"] for row in rows_of(result)]


def _projected(rows: list[dict], fields: list[str]) -> list[tuple]:
    return sorted((tuple(row[f] for f in fields) for row in rows), key=repr)


def test_group_generations_are_the_reference_generations_that_records_show(run) -> None:  # type: ignore[no-untyped-def]
    expected = _expected(run, expected_group_generations)
    fields = [f for f in expected[0] if f != "end_reason"]
    rows = _gold(run, "group_generations")
    assert _projected(rows, fields) == _projected(expected, fields)
    # The likely cause agrees with the reference's actual cause wherever one rebalance separates them.
    by_key = {(r["group"], r["generation"]): r["end_reason"] for r in rows}
    wrong = [(e["group"], e["generation"], by_key[(e["group"], e["generation"])], e["end_reason"])
             for e in expected if e["end_reason"] is not None
             and e["end_reason"] not in CAUSES.get(by_key[(e["group"], e["generation"])], set())]
    assert wrong == []


def test_group_membership_has_every_member_of_a_recorded_generation_with_record_times(run) -> None:  # type: ignore[no-untyped-def]
    expected = _expected(run, expected_group_membership)
    fields = list(expected[0])
    assert _projected(_gold(run, "group_membership"), fields) == _projected(expected, fields)


def test_partition_assignments_are_the_stored_assignments_until_the_next_record(run) -> None:  # type: ignore[no-untyped-def]
    expected = _expected(run, expected_partition_assignments)
    fields = list(expected[0])
    assert _projected(_gold(run, "partition_assignments"), fields) == _projected(expected, fields)


def test_group_state_history_is_the_reference_sequence_without_unpersisted_states(run) -> None:  # type: ignore[no-untyped-def]
    expected = _expected(run, expected_group_state_history)
    rows = _gold(run, "group_state_history")
    assert _projected(rows, ["group", "state", "at"]) == _projected(expected, ["group", "state", "at"])
    assert all(r["until"] is None or r["until"] >= r["at"] for r in rows)


@pytest.mark.parametrize(("table", "rows_of"), [
    ("group_generations", expected_consumer_group_generations),
    ("group_membership", expected_consumer_group_membership),
    ("partition_assignments", expected_consumer_group_assignments),
    ("group_state_history", expected_consumer_group_state_history),
    ("rebalance_events", expected_consumer_group_rebalances),
])
def test_kip848_groups_are_the_reference_groups_epoch_by_epoch(run, table, rows_of) -> None:  # type: ignore[no-untyped-def]
    expected = _expected(run, rows_of)
    assert expected  # kip848-subscription-change
    fields = [f for f in expected[0] if f not in ("end_reason", "likely_cause")]  # causes: validate's CAUSES
    assert _projected(_gold(run, table, "consumer"), fields) == _projected(expected, fields)


def test_committed_offsets_are_the_last_commit_per_partition_with_tombstones_applied(run) -> None:  # type: ignore[no-untyped-def]
    expected = _expected(run, expected_committed_offsets)
    fields = list(expected[0])
    assert _projected(_gold(run, "committed_offsets"), fields) == _projected(expected, fields)
    # Some partitions had their offsets removed (OffsetDelete, expiry, DeleteGroups): fewer rows than keys.
    committed = {(c["group"], c["topic"], c["partition"]) for r in run["results"]
                 for c in r.tables["committed_offsets"]}
    assert len(expected) < len(committed)


def test_offset_commit_rate_counts_each_groups_commit_records_per_minute(run) -> None:  # type: ignore[no-untyped-def]
    expected: dict[tuple, int] = defaultdict(int)
    for result in run["results"]:
        for c in result.tables["committed_offsets"]:
            expected[(c["group"], c["commit_timestamp"] // 60_000 * 60_000)] += 1
    actual = {(r["group"], r["minute"]): r["commit_records"] for r in _gold(run, "offset_commit_rate")}
    assert actual == dict(expected)


def test_rebalance_events_have_one_row_per_new_generation_and_flag_storms(run) -> None:  # type: ignore[no-untyped-def]
    rows = _gold(run, "rebalance_events")
    rebalances = [r for r in rows if r["event_type"] == "rebalance"]
    expected = sorted((group, gen["generation"]) for result in run["results"]
                      for group, gens in visible_generations(result).items() for gen in gens[1:])
    assert sorted((r["group"], r["to_generation"]) for r in rebalances) == expected
    # Bounds, where someone was there to stop: ordered, and never past the moment the group was Stable again.
    bounded = [r for r in rebalances if r["members_before"]]
    assert bounded and all(r["last_stable_at"] <= r["stopped_at_lower_bound"] <= r["stopped_at_upper_bound"]
                           <= r["stable_at"] for r in bounded)
    assert all(0 <= r["stopped_ms_lower_bound"] <= r["stopped_ms_upper_bound"] for r in bounded)
    assert all(r["stopped_at_lower_bound"] is None for r in rebalances if not r["members_before"])
    storms = {r["group"] for r in rebalances if r["is_storm"]}
    assert "workers" in storms and "billing" not in storms
    # The static members' restarts that kept generation 1 (static-membership-restart): edge-b, then edge-a.
    restarts = sorted((r["group"], r["to_generation"], tuple(r["static_restarts"]))
                      for r in rows if r["event_type"] == "static_member_restart")
    assert ("sessions", 1, ("edge-b",)) in restarts and ("sessions", 1, ("edge-a",)) in restarts


def test_refreshing_incrementally_gives_the_same_tables_as_a_full_rebuild(run) -> None:  # type: ignore[no-untyped-def]
    for spec in GOLD:
        assert sorted(run["gold"][spec.name], key=repr) == sorted(run["full"][spec.name], key=repr), spec.name


def test_gold_equals_a_full_rebuild_from_the_raw_records_in_bronze(  # type: ignore[no-untyped-def]
        spark, scenario_warehouse, scenario_silver_from_bronze) -> None:
    differences = rebuild_differences(spark, scenario_warehouse["settings"], scenario_silver_from_bronze)
    assert differences == {spec.name: (0, 0) for spec in GOLD}


def test_a_refresh_with_no_new_silver_data_writes_nothing(run) -> None:  # type: ignore[no-untyped-def]
    assert run["again"] == run["counts"]
    assert run["versions_after"] == run["versions"]
    # ... while the refresh of the second part did write every gold table but the streams groups' own two: this
    # traffic has no streams group, and they have no row to write.
    streams_tables = {"gold.streams_task_assignments", "gold.streams_topology"}
    assert all(run["versions"][name] > version for name, version in run["first_versions"].items()
               if name not in streams_tables)
    assert all(n > 0 for name, n in run["counts"].items() if name not in streams_tables)
    assert all(run["counts"][name] == 0 for name in streams_tables)


def test_an_incremental_refresh_announces_each_table_once_committed_in_the_order_freshness_needs(run) -> None:  # type: ignore[no-untyped-def]
    steps = run["written_steps"]
    assert all(len(step) == 1 for step in steps)  # one call per table, as its commit returns
    # The committed offsets first, then the group tables once (rebalance events first; the streams groups' tasks and
    # topology among them), for the classic and the KIP-848 groups the increment holds alike, and the commit rate last.
    group_tables = {"gold.group_generations", "gold.group_membership", "gold.partition_assignments",
                    "gold.group_state_history", "gold.rebalance_events", "gold.streams_task_assignments",
                    "gold.streams_topology"}
    assert [step[0] for step in steps[:2]] == ["gold.committed_offsets", "gold.rebalance_events"]
    assert {step[0] for step in steps[1:8]} == group_tables
    assert [step[0] for step in steps[8:]] == ["gold.offset_commit_rate"]


def test_the_groups_predicate_selects_exactly_those_groups_of_their_cluster_quotes_and_backslashes_included(  # type: ignore[no-untyped-def]
        spark) -> None:
    odd = "it's a \\ group"
    rows = spark.createDataFrame([("c", odd), ("c", "plain"), ("c", "other"), ("d", "plain"), ("d", odd)],
                                 "cluster_name string, group_id string")
    chosen = rows.filter(groups_predicate([("c", odd), ("c", "plain"), ("d", "x")], group_column="group_id"))
    assert sorted(tuple(r) for r in chosen.collect()) == [("c", "it's a \\ group"), ("c", "plain")]


def test_row_differences_counts_each_sides_surplus_rows_duplicates_and_nulls_included(spark) -> None:  # type: ignore[no-untyped-def]
    schema = "g string, n int, tags array<string>"
    left = spark.createDataFrame([("a", 1, ["x"]), ("a", 1, ["x"]), ("b", None, None), ("c", 3, [])], schema)
    right = spark.createDataFrame([("a", 1, ["x"]), ("b", None, None), ("d", 4, ["y"]), ("e", 5, None)], schema)
    # left has a second ("a", 1, [x]) and c; right has d and e; b (nulls) is on both sides
    assert row_differences(left, right, ["g", "n", "tags"]) == (2, 2)
    assert row_differences(left, left, ["g", "n", "tags"]) == (0, 0)
    assert row_differences(left, right.limit(0), ["g"]) == (4, 0)


# Gold's query over silver's change data feeds (pipelines/gold/silver_changes.py), on small warehouses of their own.


def _silver(spark, settings, batch: int, offsets: range, generation: int) -> None:  # type: ignore[no-untyped-def]
    """Commits of group g at ``offsets`` and a GroupMetadata record of generation ``generation``, as an
    ingest batch appends them (commits first, then the record, then its members)."""
    import datetime as dt

    from pipelines.delta_tables import ensure_table, idempotent_append
    from schemas import group_members, group_metadata, offset_commits
    from tests.pipelines.gold.classic_history import silver_frames

    when = dt.datetime(2026, 11, 27, 6, generation)
    for spec in (offset_commits.TABLE, group_metadata.TABLE, group_members.TABLE):
        ensure_table(spark, settings, spec)
    commits = spark.createDataFrame(
        [("c", "__consumer_offsets", 0, offset, when, "g", "t", offset % 2, offset, -1, "", when, None, None, False,
          1, 4, when.date()) for offset in offsets], offset_commits.TABLE.schema)
    idempotent_append(commits, settings, offset_commits.TABLE, "test", batch)
    metadata, members = silver_frames(spark, [("g", offsets.stop, generation, generation * 60, generation * 60,
                                               [("a", None, "t", [0]), ("b", None, "t", [1])])])
    idempotent_append(metadata, settings, group_metadata.TABLE, "test", batch)
    idempotent_append(members, settings, group_members.TABLE, "test", batch)


def _level_with_silver(spark, settings) -> bool:  # type: ignore[no-untyped-def]
    return rebuild_differences(spark, settings) == {spec.name: (0, 0) for spec in GOLD}


@pytest.mark.long  # ~37 s (four refreshes and four comparisons): in `make test-long` (Makefile says why)
def test_gold_keeps_its_own_books_a_refresh_that_dies_is_run_again_and_a_deleted_silver_row_rebuilds_gold(  # type: ignore[no-untyped-def]
        spark, warehouse_settings, monkeypatch, capsys) -> None:
    """One warehouse through the refresh's bookkeeping, step by step (each refresh costs seconds):

    * every refresh records in gold's commits the silver versions gold then reflects (what ``check`` reads),
      unchanged by an ingest until the next refresh;
    * a refresh that dies half-way (here: after the commit tables, writing the group tables) leaves its batch
      uncommitted in the query's checkpoint; the next one runs it again and gold ends level with silver;
    * a row deleted from silver makes the next refresh rebuild every gold table;
    * so does a gold table an older offsetlake laid out otherwise (gold.offset_commit_rate, clustered by group
      before it was partitioned by day: Delta cannot repartition it in place), which is made anew.
    (A missing gold table starts gold's query afresh too: ``test_silver_changes``, and bench/gold.py's rebuild.)
    """
    import dataclasses
    import datetime as dt

    from pyspark.sql import types as T

    from pipelines.delta_tables import ensure_table, table_path
    from pipelines.gold import refresh
    from pipelines.gold.committed_offsets import TABLE as COMMITTED_OFFSETS
    from pipelines.gold.group_generations import TABLE as GROUP_GENERATIONS
    from pipelines.gold.offset_commit_rate import TABLE as OFFSET_COMMIT_RATE
    from pipelines.gold.offset_commit_rate import offset_commit_rate
    from pipelines.storage import Storage
    from schemas import offset_commits
    from schemas.table_spec import GROUP_CLUSTERING

    settings = warehouse_settings

    def newest_silver() -> dict[str, int]:
        return {spec.name: refresh.latest_version(spark, settings, spec) for spec in refresh.SOURCES}

    assert refresh.reflected_silver_versions(spark, settings) == {}
    _silver(spark, settings, 0, range(0, 4), 1)
    assert set(refresh.refresh_gold_tables(spark, settings)) == {spec.name for spec in GOLD}  # the first: a rebuild
    reflected = newest_silver()
    assert refresh.reflected_silver_versions(spark, settings) == reflected
    _silver(spark, settings, 1, range(5, 9), 2)  # ingested, not yet in gold
    assert refresh.reflected_silver_versions(spark, settings) == reflected

    replace = refresh.replace_groups

    def dies(settings_, *args, **kwargs):  # type: ignore[no-untyped-def]
        # Only this test's warehouse: background warehouse builds (tests/background.py) run in threads of this
        # process meanwhile, and their group tables' writes go through the same module attribute.
        if settings_.warehouse == settings.warehouse:
            raise RuntimeError("killed while writing the group tables")
        return replace(settings_, *args, **kwargs)

    monkeypatch.setattr(refresh, "replace_groups", dies)
    with pytest.raises(RuntimeError, match="killed while writing the group tables"):
        refresh.refresh_gold_tables(spark, settings)
    generations = {r["generation"] for r in read_table(spark, settings, GROUP_GENERATIONS).collect()}
    assert generations == {1}  # gold.group_generations still lacks generation 2
    monkeypatch.setattr(refresh, "replace_groups", replace)
    # a refresh after the kill knows only what gold's commits record (nothing kept in the process)
    assert "gold.group_generations" in refresh.refresh_gold_tables(spark, settings)
    assert _level_with_silver(spark, settings)
    assert refresh.reflected_silver_versions(spark, settings) == newest_silver()

    spark.sql(f"DELETE FROM delta.`{table_path(settings, offset_commits.TABLE)}` WHERE source_offset = 8")
    assert set(refresh.refresh_gold_tables(spark, settings)) == {spec.name for spec in GOLD}
    latest = {r["partition"]: r["offset"] for r in read_table(spark, settings, COMMITTED_OFFSETS).collect()}
    assert latest == {0: 6, 1: 7}  # partition 0's last commit (8) is gone from silver: the one before it stays

    # The commit rates as an older offsetlake made them (clustered, no minute_date, here a count no rebuild
    # gives), read by a new process; and commits ingested since the last refresh.
    older = dataclasses.replace(OFFSET_COMMIT_RATE, partition_by=(), cluster_by=GROUP_CLUSTERING, schema=T.StructType(
        [f for f in OFFSET_COMMIT_RATE.schema.fields if f.name != "minute_date"]))
    Storage(spark).delete(table_path(settings, OFFSET_COMMIT_RATE))
    ensure_table(spark, settings, older)
    spark.createDataFrame([("c", "g", dt.datetime(2026, 11, 27, 6, 1), 99, 1, 1)], older.schema).write.format(
        "delta").mode("append").save(table_path(settings, OFFSET_COMMIT_RATE))
    _silver(spark, settings, 2, range(9, 12), 3)
    assert set(refresh.refresh_gold_tables(spark, settings)) == {spec.name for spec in GOLD}
    assert "gold.offset_commit_rate is laid out as an older offsetlake made it" in capsys.readouterr().err
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{table_path(settings, OFFSET_COMMIT_RATE)}`").head()
    assert list(detail["partitionColumns"]) == ["minute_date"]
    # The made-anew table holds the rebuild's counts (the count of 99 gone), the commits ingested since included.
    # Only this table is compared: every table's rebuild is the deleted row's step above (all seven cost ~6 s).
    rates = read_table(spark, settings, OFFSET_COMMIT_RATE)
    assert row_differences(rates, offset_commit_rate(read_table(spark, settings, offset_commits.TABLE)),
                           OFFSET_COMMIT_RATE.schema.fieldNames()) == (0, 0)


@pytest.mark.long  # ~20 s (two refreshes): in `make test-long`
def test_a_refresh_records_silver_versions_in_gold_commits_only_not_in_commits_other_threads_make_meanwhile(  # type: ignore[no-untyped-def]
        spark, warehouse_settings, tmp_path) -> None:
    """The record is carried by the refresh's own writes (a write option, a session of its own for the MERGEs),
    not by a conf of the shared session: an ingest appending beside it in the same process marks nothing."""
    import threading

    from delta.tables import DeltaTable

    from pipelines.delta_tables import table_path
    from pipelines.gold import refresh
    from pipelines.gold.committed_offsets import TABLE as COMMITTED_OFFSETS

    settings = warehouse_settings
    _silver(spark, settings, 0, range(0, 4), 1)
    refresh.refresh_gold_tables(spark, settings)
    _silver(spark, settings, 1, range(5, 9), 2)
    beside = str(tmp_path / "beside")
    spark.range(1).write.format("delta").save(beside)
    gold = threading.Thread(target=refresh.refresh_gold_tables, args=(spark, settings))
    gold.start()
    appends = 0
    while gold.is_alive():
        spark.range(1).write.format("delta").mode("append").save(beside)
        appends += 1
    gold.join()
    assert appends > 1
    assert [r["userMetadata"] for r in DeltaTable.forPath(spark, beside).history().collect()] == [None] * (appends + 1)
    [merge] = DeltaTable.forPath(spark, table_path(settings, COMMITTED_OFFSETS)).history(1).collect()
    assert merge["operation"] == "MERGE"
    assert refresh.reflected_silver_versions(spark, settings) == {
        spec.name: refresh.latest_version(spark, settings, spec) for spec in refresh.SOURCES}
