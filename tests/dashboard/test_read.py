"""dashboard/read.py: delta-rs reads tables with deletion vectors, as the MERGE targets now have them."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from conf.settings import Settings
from dashboard.read import count_rows_by_group, read_with_delta_rs, read_with_spark
from pipelines.delta_tables import ensure_table, evolve_table, table_path
from pipelines.gold import committed_offsets

pytestmark = pytest.mark.spark


def _row(partition: int, offset: int, tombstone: bool = False) -> dict:
    return {"cluster_name": "c", "group": "g", "topic": "t", "partition": partition, "offset": offset,
            "is_tombstone": tombstone, "commit_timestamp": dt.datetime(2026, 11, 26, 12, 0, partition),
            "source_topic": "__consumer_offsets", "source_partition": 0, "source_offset": partition}


@pytest.fixture
def table(spark, tmp_path):  # type: ignore[no-untyped-def]
    """gold.committed_offsets as ensure_table makes it, three rows, one deleted the way a MERGE deletes."""
    settings = Settings(cluster_name="c", warehouse=str(tmp_path / "warehouse"))
    spec = committed_offsets.TABLE
    path = str(ensure_table(spark, settings, spec))
    rows = [_row(0, 10), _row(1, 20), _row(2, 30)]
    spark.createDataFrame([tuple(r.get(f.name) for f in spec.schema.fields) for r in rows], spec.schema) \
        .write.format("delta").mode("append").save(path)
    spark.sql(f"DELETE FROM delta.`{path}` WHERE `partition` = 1")
    return settings, path


def test_the_merge_targets_are_made_with_deletion_vectors_and_a_delete_writes_one(table) -> None:  # type: ignore[no-untyped-def]
    _, path = table
    log = sorted((Path(table_path(table[0], committed_offsets.TABLE)) / "_delta_log").glob("*.json"))
    actions = [json.loads(line) for line in log[-1].read_text().splitlines()]
    # The delete marked the row in a deletion vector instead of rewriting the file.
    assert any("deletionVector" in (a.get("add") or {}) and a["add"]["deletionVector"] for a in actions)


def test_delta_rs_reads_the_table_without_the_deleted_row(table) -> None:  # type: ignore[no-untyped-def]
    settings, _ = table
    rows = read_with_delta_rs(settings, committed_offsets.TABLE.name, ("partition", "offset", "commit_timestamp"))
    assert sorted((r["partition"], r["offset"]) for r in rows) == [(0, 10), (2, 30)]
    # Timestamps as epoch milliseconds, as the page expects.
    assert {r["commit_timestamp"] for r in rows} == {
        int(dt.datetime(2026, 11, 26, 12, 0, s, tzinfo=dt.UTC).timestamp() * 1000) for s in (0, 2)}


def test_a_filter_keeps_the_rows_where_the_boolean_column_is_true(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from schemas import offset_commits

    settings = Settings(cluster_name="c", warehouse=str(tmp_path / "warehouse"))
    spec = offset_commits.TABLE
    path = str(ensure_table(spark, settings, spec))
    filled = {"string": "x", "int": 0, "bigint": 0, "smallint": 0, "boolean": False,
              "timestamp": dt.datetime(2026, 11, 26), "date": dt.date(2026, 11, 26)}
    rows = [tuple({"source_offset": offset, "is_tombstone": offset == 1}.get(f.name, filled.get(
        f.dataType.simpleString()) if not f.nullable else None) for f in spec.schema.fields) for offset in range(3)]
    spark.createDataFrame(rows, spec.schema).write.format("delta").mode("append").save(path)

    kept = read_with_delta_rs(settings, spec.name, ("source_offset", "is_tombstone"), filters=("is_tombstone",))

    assert kept == [{"source_offset": 1, "is_tombstone": True}]


def test_a_table_made_before_gets_the_specs_properties(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    from delta.tables import DeltaTable

    settings = Settings(cluster_name="c", warehouse=str(tmp_path / "warehouse"))
    older = dataclasses.replace(committed_offsets.TABLE, properties=())
    path = str(ensure_table(spark, settings, older))

    evolve_table(spark, settings, committed_offsets.TABLE)

    properties = DeltaTable.forPath(spark, path).detail().collect()[0]["properties"]
    assert properties.get("delta.enableDeletionVectors") == "true"


def test_a_group_filter_keeps_only_those_groups_rows_in_both_readers(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The dashboard reads the charts' detail for its charted groups alone; a quote in a name stays a name."""
    settings = Settings(cluster_name="c", warehouse=str(tmp_path / "warehouse"))
    spec = committed_offsets.TABLE
    path = str(ensure_table(spark, settings, spec))
    rows = [{**_row(p, 10 * p), "group": group} for p, group in enumerate(("billing", "o'brien", "search", "billing"))]
    spark.createDataFrame([tuple(r.get(f.name) for f in spec.schema.fields) for r in rows], spec.schema) \
        .write.format("delta").mode("append").save(path)

    for read in (lambda **kw: read_with_delta_rs(settings, spec.name, ("group", "partition"), **kw),
                 lambda **kw: read_with_spark(spark, settings, spec.name, ("group", "partition"), **kw)):
        assert sorted((r["group"], r["partition"]) for r in read(groups=("billing", "o'brien"))) == [
            ("billing", 0), ("billing", 3), ("o'brien", 1)]
        assert read(groups=()) == []
    # what charting each group would read, counted without reading the rows, by both engines
    for engine in ("delta-rs", "spark"):
        assert count_rows_by_group(settings, [spec.name], engine, spark_factory=lambda: spark) == {
            ("c", "billing"): 2, ("c", "o'brien"): 1, ("c", "search"): 1}
        assert count_rows_by_group(settings, [spec.name], engine, lambda: spark, groups=["search"]) == {
            ("c", "search"): 1}
