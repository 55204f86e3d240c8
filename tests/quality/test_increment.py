"""quality/increment.py: a check after the first reads what is new since it, each rule as much as its scope needs."""

from __future__ import annotations

import pytest

from pipelines.delta_tables import ensure_table, table_path
from quality.checkpoint import run_checks
from quality.increment import _rewritten
from schemas import consumer_group_records, group_metadata, offset_commits
from schemas.catalog import TABLES
from tests.quality.rows import at, frame, source

pytestmark = pytest.mark.spark

DECREASE = ("offset_commits", "offsets_never_decrease_within_a_generation")
INCOHERENT = ("offset_commits", "tombstones_and_commits_are_coherent")


def commit(group: str, position: int, offset: int | None, tombstone: bool = False) -> dict:
    return {**source(position), "group": group, "topic": "orders", "partition": 0, "offset": offset,
            "commit_timestamp": at(position), "is_tombstone": tombstone, "record_type": 1, "value_version": 3,
            "commit_date": at(position).date()}


def generation(group: str, position: int) -> dict:
    return {**source(position), "group": group, "protocol_type": "consumer", "generation": 1, "member_count": 1,
            "current_state_timestamp": at(position), "is_tombstone": False, "value_version": 3}


def append(spark, settings, spec, rows) -> None:  # type: ignore[no-untyped-def]
    frame(spark, spec, rows).write.format("delta").mode("append").save(table_path(settings, spec))


def flagged(report, rule: tuple[str, str], column: str = "group") -> list:  # type: ignore[no-untyped-def]
    return sorted(row[column] for row in report.result(*rule).unexpected_sample)


@pytest.fixture
def silver(spark, warehouse_settings, tmp_path):  # type: ignore[no-untyped-def]
    """Silver with a rewind and an incoherent tombstone, checked once (whole tables, recorded)."""
    settings = warehouse_settings
    for spec in (offset_commits.TABLE, group_metadata.TABLE, consumer_group_records.TABLE):
        ensure_table(spark, settings, spec)
    append(spark, settings, group_metadata.TABLE, [generation("rewound", 10), generation("steady", 20)])
    append(spark, settings, offset_commits.TABLE, [
        commit("rewound", 11, 50), commit("rewound", 12, 40), commit("steady", 21, 10),
        commit("broken", 30, 5, tombstone=True)])
    first = run_checks(spark, settings, docs_dir=tmp_path / "docs")
    assert first.read == "whole tables (no earlier check recorded what it read)"
    assert flagged(first, DECREASE) == ["rewound"] and flagged(first, INCOHERENT) == ["broken"]
    return settings


def test_a_later_check_judges_only_the_new_rows_and_the_groups_they_touch_and_a_delete_makes_it_read_whole_tables(  # type: ignore[no-untyped-def]
        spark, silver, tmp_path) -> None:
    # "steady" goes back below an offset committed before the first check; "later" writes an incoherent tombstone.
    append(spark, silver, offset_commits.TABLE, [commit("steady", 22, 5), commit("later", 40, 7, tombstone=True)])

    second = run_checks(spark, silver, tables=["offset_commits"], docs_dir=tmp_path / "docs")

    assert second.read == "the increment since the last check: 2 groups touched, 2 new rows"
    assert flagged(second, DECREASE) == ["steady"]  # found against the old commit; "rewound" was not read again
    assert flagged(second, INCOHERENT) == ["later"]  # the new rows only: "broken" was judged by the first check

    # A --table check records nothing: the next one still reads from the first check, and silver has now changed
    # otherwise than by appends since then.
    spark.sql(f"DELETE FROM delta.`{table_path(silver, offset_commits.TABLE)}` WHERE `group` = 'later'")
    whole = run_checks(spark, silver, tables=["offset_commits"], docs_dir=tmp_path / "docs")
    assert whole.read == "whole tables (silver.offset_commits changed otherwise than by appends (delete))"
    assert flagged(whole, DECREASE) == ["rewound", "steady"] and flagged(whole, INCOHERENT) == ["broken"]


def test_a_gold_table_is_rewritten_for_the_check_by_a_whole_overwrite_not_by_appends_or_per_group_ones(  # type: ignore[no-untyped-def]
        spark, warehouse_settings) -> None:
    spec = TABLES["gold.group_generations"]
    ensure_table(spark, warehouse_settings, spec)
    path = table_path(warehouse_settings, spec)

    def write(groups: list[str], mode: str, replace_where: str | None = None) -> int:
        rows = [{"cluster_name": "test", "group": group, "incarnation": 1, "generation": 1, "records": 1,
                 "group_type": "classic"} for group in groups]
        writer = frame(spark, spec, rows).write.format("delta").mode(mode)
        if replace_where:
            writer = writer.option("replaceWhere", replace_where)
        writer.save(path)
        return int(spark.sql(f"DESCRIBE HISTORY delta.`{path}` LIMIT 1").first()["version"])

    start = write(["a", "b"], "append")
    per_group = write(["a"], "overwrite", "`group` IN ('a')")
    assert not _rewritten(spark, warehouse_settings, spec.name, start, per_group)
    whole = write(["c"], "overwrite")
    assert _rewritten(spark, warehouse_settings, spec.name, per_group, whole)
    assert not _rewritten(spark, warehouse_settings, spec.name, whole, whole)


@pytest.mark.long  # ~10-16 s more of checks: in `make test-long` (Makefile says why)
def test_versions_whose_files_a_vacuum_removed_make_the_check_read_whole_tables(spark, silver, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Rows appended after the first check, compacted by OPTIMIZE, the appended files vacuumed: the change data feed
    # since the first check can no longer be read (a check that had not run for longer than the retention).
    append(spark, silver, offset_commits.TABLE, [commit("steady", 22, 5)])
    path = table_path(silver, offset_commits.TABLE)
    spark.sql(f"OPTIMIZE delta.`{path}`")
    spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    try:
        spark.sql(f"VACUUM delta.`{path}` RETAIN 0 HOURS")
    finally:
        spark.conf.unset("spark.databricks.delta.retentionDurationCheck.enabled")

    after = run_checks(spark, silver, tables=["offset_commits"], docs_dir=tmp_path / "docs")

    assert after.read.startswith("whole tables (silver.offset_commits's change data feed cannot be read after version")
    assert flagged(after, DECREASE) == ["rewound", "steady"]
