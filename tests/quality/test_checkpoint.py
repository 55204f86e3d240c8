"""Every suite over a warehouse built from real Kafka traffic (tests/quality/conftest.py), then tampered.

The clean warehouse must pass every expectation. The tampered one gets, in copies of its tables
passed to the run as DataFrames, one violation per important rule; exactly those expectations must
fail, each showing the offending rows.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

import cli.check
from pipelines.delta_tables import read_table, table_path
from pipelines.gold import committed_offsets, consumer_lag, group_generations, partition_assignments
from quality.checkpoint import ENFORCED, SUITES, run_checks
from schemas import (
    data_quality_results,
    group_members,
    group_metadata,
    offset_commits,
    offsets_topic_records,
    quarantine,
)

pytestmark = [pytest.mark.broker, pytest.mark.spark]
EVERY_RULE = sorted((s.name, r.name) for s in SUITES for r in s.rules)


@pytest.fixture(scope="module")
def clean(spark, warehouse):  # type: ignore[no-untyped-def]
    return run_checks(spark, warehouse["settings"])


def test_every_expectation_passes_on_a_warehouse_built_from_real_kafka_traffic(clean) -> None:  # type: ignore[no-untyped-def]
    assert sorted((r.suite, r.expectation) for r in clean.results) == EVERY_RULE
    assert [(r.suite, r.expectation, r.status) for r in clean.results if r.status != "passed"] == []
    assert clean.ok


def test_the_rules_delta_enforces_are_read_from_the_tables_constraints_not_scanned(clean) -> None:  # type: ignore[no-untyped-def]
    enforced = {(r.suite, r.expectation): r.status for r in clean.results if r.expectation_type == ENFORCED}
    assert enforced == {("consumer_lag", "lag_is_non_negative_or_flagged"): "passed",
                        ("consumer_lag", "partition_status_is_a_burrow_status"): "passed",
                        ("consumer_lag", "group_status_is_a_burrow_status"): "passed"}


def test_the_run_is_recorded_in_the_results_table_and_the_data_docs(spark, warehouse, clean) -> None:  # type: ignore[no-untyped-def]
    settings = warehouse["settings"]
    rows = read_table(spark, settings, data_quality_results.TABLE).where(f"run_id = '{clean.run_id}'").collect()
    assert sorted((r["suite"], r["expectation"]) for r in rows) == EVERY_RULE
    assert {(r["status"], r["success"], r["cluster_name"]) for r in rows} == {("passed", True, settings.cluster_name)}
    lag = next(r for r in rows if r["expectation"] == "lag_is_non_negative_or_flagged")
    assert (lag["table"], lag["severity"], lag["observed_value"], lag["unexpected_sample"]) == \
        ("gold.consumer_lag", "critical", "0", "[]")
    assert clean.docs_index == settings.warehouse_path / "_quality" / "data_docs" / "index.html"
    index = clean.docs_index.read_text(encoding="utf-8")
    assert all(suite.name in index for suite in SUITES)
    assert clean.run_id in index  # the GX run name is offsetlake's run id


def test_tables_that_do_not_exist_yet_are_reported_as_skipped(spark, warehouse, tmp_path) -> None:  # type: ignore[no-untyped-def]
    settings = warehouse["settings"].model_copy(update={"warehouse": str(tmp_path / "empty")})
    report = run_checks(spark, settings, tables=["quarantine"], docs_dir=tmp_path / "docs")
    assert [(r.suite, r.expectation, r.status, r.details) for r in report.results] == [
        ("quarantine", "quarantine_rate_below_threshold", "skipped",
         "table bronze.offsets_topic_records, silver.quarantine does not exist yet")]
    assert report.ok
    assert [r["status"] for r in read_table(spark, settings, data_quality_results.TABLE).collect()] == ["skipped"]


def _with(spark, settings, spec, change, *, where: str, replace: bool = False):  # type: ignore[no-untyped-def]
    """``spec``'s table plus a changed copy of its first row matching ``where`` (instead of it, if ``replace``)."""
    table = read_table(spark, settings, spec)
    original = table.where(where).orderBy(*table.columns[:6]).first()
    assert original is not None, f"no {spec.name} row where {where}"
    row = {**original.asDict(), **change(original)}
    copy = spark.createDataFrame([tuple(row[c] for c in table.columns)], table.schema)
    if replace:
        key = " AND ".join(f"`{c}` = '{original[c]}'" for c in spec.key)
        table = table.where(f"NOT ({key})")
    return table.unionByName(copy)


@pytest.fixture(scope="module")
def tampered(spark, warehouse):  # type: ignore[no-untyped-def]
    settings = warehouse["settings"]
    classic = warehouse["classic"]
    last = read_table(spark, settings, offsets_topic_records.TABLE).agg({"source_offset": "max"}).first()[0]

    def stable(row):  # type: ignore[no-untyped-def]  # a new generation with members, after every record
        return {"source_offset": last + 100, "generation": row["generation"] + 50}

    def rewound(row, position, offset):  # type: ignore[no-untyped-def]
        return {"source_offset": position, "offset": offset}

    # Two commits of one partition within that generation, the second lower: a rewind.
    commits = _with(spark, settings, offset_commits.TABLE, lambda r: rewound(r, last + 101, 40),
                    where=f"`group` = '{classic}' AND NOT is_tombstone")
    commits = commits.unionByName(_with(spark, settings, offset_commits.TABLE, lambda r: rewound(r, last + 102, 30),
                                        where=f"`group` = '{classic}' AND NOT is_tombstone")
                                  .where(f"source_offset = {last + 102}"))
    frames = {
        offset_commits.TABLE.name: commits,
        group_metadata.TABLE.name: _with(spark, settings, group_metadata.TABLE, stable,
                                         where=f"`group` = '{classic}' AND member_count > 0"),
        # An intruder owning a partition its member owns in the same generation, at the same time.
        partition_assignments.TABLE.name: _with(spark, settings, partition_assignments.TABLE,
                                                lambda r: {"member_id": "intruder"},
                                                where=f"`group` = '{classic}'"),
        # A generation numbered below its predecessor.
        group_generations.TABLE.name: _with(spark, settings, group_generations.TABLE,
                                            lambda r: {"generation": 0, "ended_at": None,
                                                       "started_at": r["started_at"].replace(
                                                           year=r["started_at"].year + 1)},
                                            where=f"`group` = '{classic}'"),
        # A negative lag.
        consumer_lag.TABLE.name: _with(spark, settings, consumer_lag.TABLE, lambda r: {"lag": -3},
                                       where=f"`group` = '{classic}' AND lag IS NOT NULL", replace=True),
        # A gold offset that silver never committed (negative too: the warning rule).
        committed_offsets.TABLE.name: _with(spark, settings, committed_offsets.TABLE, lambda r: {"offset": -1},
                                            where=f"`group` = '{classic}'", replace=True),
        # A member assigned a topic it did not subscribe to.
        group_members.TABLE.name: _with(spark, settings, group_members.TABLE,
                                        lambda r: {"subscribed_topics": ["some-other-topic"],
                                                   "source_offset": last + 200},
                                        where=f"`group` = '{classic}' AND size(assigned_partitions) > 0"),
        # One undecodable record, and no quarantine allowed.
        quarantine.TABLE.name: spark.createDataFrame(
            [("test", "__consumer_offsets", 0, last + 300, None, 99, None, "unknown record type 99", b"\x00c",
              None, dt.datetime(2026, 11, 22))], quarantine.TABLE.schema),
    }
    strict = settings.model_copy(update={"quality": settings.quality.model_copy(update={"max_quarantine_rate": 0.0})})
    return run_checks(spark, strict, frames=frames, write_results=False)


TAMPERED = {
    ("offset_commits", "offsets_never_decrease_within_a_generation"): "critical",
    ("partition_assignments", "no_partition_owned_by_two_members_in_one_generation"): "critical",
    ("group_generations", "generations_strictly_increase_per_group"): "critical",
    ("consumer_lag", "lag_is_non_negative_or_flagged"): "critical",
    ("cross_table", "committed_offsets_are_the_latest_silver_commits"): "critical",
    ("committed_offsets", "committed_offsets_are_non_negative"): "warning",
    ("group_members", "assigned_topics_are_in_the_owners_subscription"): "critical",
    ("quarantine", "quarantine_rate_below_threshold"): "critical",
}


def test_exactly_the_tampered_expectations_fail(tampered) -> None:  # type: ignore[no-untyped-def]
    failed = {(r.suite, r.expectation): r.severity for r in tampered.results if r.status != "passed"}
    assert failed == TAMPERED
    assert {r.status for r in tampered.results if (r.suite, r.expectation) in TAMPERED} == {"failed"}
    assert not tampered.ok


def test_a_failure_shows_the_offending_rows(tampered, warehouse) -> None:  # type: ignore[no-untyped-def]
    classic = warehouse["classic"]
    rewind = tampered.result("offset_commits", "offsets_never_decrease_within_a_generation")
    assert rewind.unexpected_count == 1
    assert [(s["group"], s["previous_offset"], s["offset"]) for s in rewind.unexpected_sample] == [(classic, 40, 30)]
    owners = tampered.result("partition_assignments", "no_partition_owned_by_two_members_in_one_generation")
    assert owners.unexpected_count == 1
    assert "intruder" in (owners.unexpected_sample[0]["member_id"], owners.unexpected_sample[0]["other_member_id"])
    lag = tampered.result("consumer_lag", "lag_is_non_negative_or_flagged")
    assert [s["lag"] for s in lag.unexpected_sample] == [-3]
    generations = tampered.result("group_generations", "generations_strictly_increase_per_group")
    assert [(s["group"], s["generation"]) for s in generations.unexpected_sample] == [(classic, 0)]
    rate = tampered.result("quarantine", "quarantine_rate_below_threshold")
    assert rate.unexpected_sample[0]["quarantined"] == 1
    mismatch = tampered.result("cross_table", "committed_offsets_are_the_latest_silver_commits")
    assert [s["gold_offset"] for s in mismatch.unexpected_sample] == [-1]
    json.dumps(list(mismatch.unexpected_sample), default=str)  # what the results table stores


def test_the_command_exits_1_naming_every_failed_critical_expectation(tampered, capsys) -> None:  # type: ignore[no-untyped-def]
    assert cli.check.print_report(tampered) == 1
    out = capsys.readouterr()
    lines = {line.split()[1]: line.split()[3] for line in out.out.splitlines()
             if line and not line.startswith(" ") and not line.startswith("SUITE")}
    assert {name for name, word in lines.items() if word == "FAIL"} == {name for _, name in TAMPERED}
    assert "7 critical failing" in out.err


def test_the_warehouse_tables_themselves_are_not_changed_by_a_tampered_run(spark, warehouse) -> None:  # type: ignore[no-untyped-def]
    settings = warehouse["settings"]
    assert read_table(spark, settings, partition_assignments.TABLE).where("member_id = 'intruder'").count() == 0
    assert (Path(table_path(settings, consumer_lag.TABLE)) / "_delta_log").is_dir()
