"""Tables as ``schemas/`` declares them: gold.consumer_lag's row rules are Delta CHECK constraints, enforced at every
write, given to a table an older offsetlake made, and left off (with a warning) where old rows break them; the gold
tables are clustered by group (but gold.offset_commit_rate, partitioned by day)."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from dashboard.read import read_with_delta_rs
from pipelines.delta_tables import ensure_current_table, ensure_table, evolve_table, table_path
from pipelines.gold import committed_offsets, consumer_lag, offset_commit_rate
from pipelines.gold.refresh import GOLD, latest_version
from pipelines.maintenance import maintain
from quality.checkpoint import ENFORCED, run_checks
from schemas import consumer_group_records, group_members, group_metadata

pytestmark = [pytest.mark.spark]

SPEC = consumer_lag.TABLE
AT = dt.datetime(2026, 11, 27, 7, 0)


@pytest.fixture
def settings(warehouse_settings):  # type: ignore[no-untyped-def]
    return warehouse_settings


def lag_row(**changes: object) -> dict:
    """Partition 0 of t at snapshot 1: committed 90 of 0..100, lag 10, Burrow OK."""
    return {"cluster_name": "c", "snapshot_id": 1, "snapshot_time": AT, "group": "g", "topic": "t", "partition": 0,
            "committed_offset": 90, "commit_time": AT, "earliest_offset": 0, "latest_offset": 100,
            "last_stable_offset": 100, "lag": 10, "commit_ahead_of_snapshot": False, "committed_below_log_start": False,
            "lag_seconds_interpolated": 1.5, "lag_seconds_message_timestamp": 2.0, "committed_message_timestamp": AT,
            "partition_status": "OK", "window_commits": 3, "window_complete": 1.0, "group_status": "OK",
            "group_lag": 10, "snapshot_date": AT.date(), **changes}


def append(spark, settings, *rows: dict) -> None:  # type: ignore[no-untyped-def]
    frame = spark.createDataFrame([tuple(row[f] for f in SPEC.schema.fieldNames()) for row in rows], SPEC.schema)
    frame.write.format("delta").mode("append").save(table_path(settings, SPEC))


def constraints_of(spark, settings) -> set[str]:  # type: ignore[no-untyped-def]
    properties = spark.sql(f"DESCRIBE DETAIL delta.`{table_path(settings, SPEC)}`").head()["properties"]
    return {key.removeprefix("delta.constraints.") for key in properties if key.startswith("delta.constraints.")}


def test_consumer_lag_is_created_with_its_row_rules_and_a_write_with_a_row_breaking_one_is_refused_whole(  # type: ignore[no-untyped-def]
        spark, settings) -> None:
    ensure_table(spark, settings, SPEC)
    assert constraints_of(spark, settings) == {"lag_is_non_negative_or_flagged", "partition_status_is_a_burrow_status",
                                               "group_status_is_a_burrow_status"}
    append(spark, settings, lag_row(), lag_row(partition=1, committed_offset=None, lag=None, partition_status=None))
    broken = {
        "lag_is_non_negative_or_flagged": [
            {"lag": -3}, {"lag": 11},  # not latest - committed
            {"committed_offset": 120, "lag": 0}],  # ahead of the high watermark, not flagged
        "partition_status_is_a_burrow_status": [{"partition_status": "LATE"}],
        "group_status_is_a_burrow_status": [{"group_status": "BAD"}],
    }
    for rule, changes in broken.items():
        for change in changes:
            with pytest.raises(Exception, match=f"DELTA_VIOLATE_CONSTRAINT_WITH_VALUES.*{rule}"):
                append(spark, settings, lag_row(partition=2), lag_row(**change))
    assert spark.read.format("delta").load(table_path(settings, SPEC)).count() == 2


def test_a_table_from_before_gains_the_constraints_except_one_its_rows_break(spark, settings, capsys) -> None:  # type: ignore[no-untyped-def]
    ensure_table(spark, settings, dataclasses.replace(SPEC, constraints=()))
    append(spark, settings, lag_row(), lag_row(partition=1, lag=-3))
    ensure_current_table(spark, settings, SPEC)
    assert constraints_of(spark, settings) == {"partition_status_is_a_burrow_status", "group_status_is_a_burrow_status"}
    assert "gold.consumer_lag holds rows that violate lag_is_non_negative_or_flagged" in capsys.readouterr().err
    # The check reads the two constraints and scans for the third, which fails on the old row.
    report = run_checks(spark, settings, tables=[SPEC.name], docs_dir=settings.warehouse_path / "docs",
                        write_results=False)
    results = {r.expectation: r for r in report.results}
    assert {name for name, r in results.items() if r.expectation_type == ENFORCED} == {
        "partition_status_is_a_burrow_status", "group_status_is_a_burrow_status"}
    lag = results["lag_is_non_negative_or_flagged"]
    assert (lag.status, lag.unexpected_count, [row["lag"] for row in lag.unexpected_sample]) == ("failed", 1, [-3])
    # Evolved again: the constraints it holds are left as they are (no new table version), the refused one still
    # refused; made current, the table records its spec (any process then leaves it as it is).
    version = latest_version(spark, settings, SPEC)
    evolve_table(spark, settings, SPEC)
    assert latest_version(spark, settings, SPEC) == version
    assert "violate lag_is_non_negative_or_flagged" in capsys.readouterr().err
    ensure_current_table(spark, settings, SPEC)
    assert "violate" not in capsys.readouterr().err


def commit_row(group: str, partition: int) -> tuple:
    """gold.committed_offsets: ``group`` committed 7 on t-``partition``."""
    return ("c", group, "t", partition, 7, -1, "", AT, None, None, "__consumer_offsets", 0, partition, AT)


def test_gold_tables_are_clustered_by_group_and_an_older_one_is_clustered_keeping_its_rows(  # type: ignore[no-untyped-def]
        spark, settings) -> None:
    clustered = committed_offsets.TABLE
    for spec in GOLD:
        ensure_table(spark, settings, spec)
        if spec is offset_commit_rate.TABLE:  # MERGEd by day: partitioned by it instead (its module says why)
            assert clustering_of(spark, settings, spec) == [] and partitioning_of(spark, settings, spec) == [
                "minute_date"]
        else:
            assert clustering_of(spark, settings, spec) == ["cluster_name", "group"], spec.name
    older = settings.model_copy(update={"warehouse": str(settings.warehouse_path / "older")})
    ensure_table(spark, older, dataclasses.replace(clustered, cluster_by=()))
    rows = spark.createDataFrame([commit_row(f"g{i % 3}", i) for i in range(6)], clustered.schema)
    rows.write.format("delta").mode("append").save(table_path(older, clustered))
    assert clustering_of(spark, older, clustered) == []
    ensure_current_table(spark, older, clustered)
    assert clustering_of(spark, older, clustered) == ["cluster_name", "group"]
    # OPTIMIZE (offsetlake maintain) clusters it; the dashboard's delta-rs path still reads every row.
    maintain(spark, older, [clustered])
    read = read_with_delta_rs(older, clustered.name, ("group", "partition"))
    assert sorted((r["group"], r["partition"]) for r in read) == sorted((f"g{i % 3}", i) for i in range(6))


def test_silver_group_tables_are_clustered_by_group_for_the_refresh_to_skip_other_groups(  # type: ignore[no-untyped-def]
        spark, settings) -> None:
    for spec in (group_metadata.TABLE, group_members.TABLE):
        ensure_current_table(spark, settings, spec)
        assert clustering_of(spark, settings, spec) == ["cluster_name", "group"], spec.name
    ensure_current_table(spark, settings, consumer_group_records.TABLE)
    assert clustering_of(spark, settings, consumer_group_records.TABLE) == ["cluster_name", "group_id"]


def clustering_of(spark, settings, spec) -> list[str]:  # type: ignore[no-untyped-def]
    return list(spark.sql(f"DESCRIBE DETAIL delta.`{table_path(settings, spec)}`").head()["clusteringColumns"] or [])


def partitioning_of(spark, settings, spec) -> list[str]:  # type: ignore[no-untyped-def]
    return list(spark.sql(f"DESCRIBE DETAIL delta.`{table_path(settings, spec)}`").head()["partitionColumns"] or [])


def test_a_table_made_current_records_its_spec_and_is_evolved_again_only_when_the_spec_changes(  # type: ignore[no-untyped-def]
        spark, settings) -> None:
    from pipelines.delta_tables import recorded_spec, spec_fingerprint

    older = dataclasses.replace(committed_offsets.TABLE, properties=())
    ensure_table(spark, settings, older)
    assert recorded_spec(settings, committed_offsets.TABLE) == spec_fingerprint(older) != spec_fingerprint(
        committed_offsets.TABLE)
    ensure_current_table(spark, settings, committed_offsets.TABLE)
    version = latest_version(spark, settings, committed_offsets.TABLE)
    assert recorded_spec(settings, committed_offsets.TABLE) == spec_fingerprint(committed_offsets.TABLE)
    ensure_current_table(spark, settings, committed_offsets.TABLE)  # e.g. the next refresh, or another process
    assert latest_version(spark, settings, committed_offsets.TABLE) == version
    older_still = settings.model_copy(update={"warehouse": str(settings.warehouse_path / "older")})
    ensure_table(spark, older_still, older)
    spark.sql(f"ALTER TABLE delta.`{table_path(older_still, committed_offsets.TABLE)}` UNSET TBLPROPERTIES "
              "('offsetlake.spec')")  # as an offsetlake before the property made it
    assert recorded_spec(older_still, committed_offsets.TABLE) == ""
    ensure_current_table(spark, older_still, committed_offsets.TABLE)
    assert recorded_spec(older_still, committed_offsets.TABLE) == spec_fingerprint(committed_offsets.TABLE)
    assert recorded_spec(settings.model_copy(update={"warehouse": str(settings.warehouse_path / "none")}),
                         committed_offsets.TABLE) is None
