"""pipelines/silver.py: silver is derived from bronze by its own streaming query, and silver derived again from
bronze is the silver that query wrote (issue 14, item 1).

The comparison runs on the shared scenario warehouse (tests/pipelines/scenario_warehouse.py): every scenario's
records went through two ingests, so each table's rows came from two micro-batches; derived again, they come
from one decode of everything bronze holds. The query's own behaviours run on small warehouses of their own,
bronze written as the ingest writes it.
"""

from __future__ import annotations

import pytest

from pipelines.delta_tables import read_table
from pipelines.gold.refresh import row_differences
from pipelines.silver import TABLES
from schemas import quarantine

pytestmark = [pytest.mark.spark]

COMMIT = ("offset_commit", {"group": "g", "topic": "t", "partition": 1})


def _bronze(spark, settings, offsets: range, batch_id: int) -> None:  # type: ignore[no-untyped-def]
    """Offset commits at ``offsets`` of topic "plain" into bronze, as the ingest's batch ``batch_id`` writes them."""
    import datetime as dt

    from decoders import encode_record
    from pipelines.delta_tables import idempotent_append
    from pipelines.ingest import app_id, bronze_rows
    from schemas import offsets_topic_records

    raw = spark.createDataFrame(
        [(*encode_record(*COMMIT, {"offset": o, "metadata": "", "commit_timestamp": 5}, 3), "plain", 0, o,
          dt.datetime(2026, 11, 28)) for o in offsets],
        "key binary, value binary, topic string, partition int, offset long, timestamp timestamp")
    idempotent_append(bronze_rows(raw, settings, batch_id), settings, offsets_topic_records.TABLE,
                      app_id(settings, "plain"), batch_id)


def _silver_offsets(spark, settings) -> list[int]:  # type: ignore[no-untyped-def]
    from schemas import offset_commits

    return sorted(r["source_offset"] for r in read_table(spark, settings, offset_commits.TABLE).collect())


def test_silver_reads_each_bronze_record_once_and_a_batch_that_dies_half_way_is_written_once_when_run_again(  # type: ignore[no-untyped-def]
        spark, warehouse_settings, monkeypatch) -> None:
    from pipelines import silver
    from pipelines.ingest import ensure_tables

    settings = warehouse_settings
    ensure_tables(spark, settings)
    _bronze(spark, settings, range(0, 3), 0)
    assert silver.derive_silver(spark, settings, "plain")["offset_commits"] == 3
    assert silver.derive_silver(spark, settings, "plain")["offset_commits"] == 0  # nothing new in bronze
    _bronze(spark, settings, range(3, 5), 1)
    appended = silver.idempotent_append

    def dies_after_offset_commits(frame, settings_, spec, app, version):  # type: ignore[no-untyped-def]
        appended(frame, settings_, spec, app, version)
        # Only this test's warehouse: background warehouse builds (tests/background.py) run in threads of this
        # process meanwhile, and their silver writes go through the same module attribute.
        if settings_.warehouse == settings.warehouse:
            raise RuntimeError("killed after silver.offset_commits")

    monkeypatch.setattr(silver, "idempotent_append", dies_after_offset_commits)
    with pytest.raises(RuntimeError, match="killed after silver.offset_commits"):
        silver.derive_silver(spark, settings, "plain")
    monkeypatch.setattr(silver, "idempotent_append", appended)
    # Run again: the same bronze range, the same batch id; silver.offset_commits skips the write it has.
    silver.derive_silver(spark, settings, "plain")
    assert _silver_offsets(spark, settings) == [0, 1, 2, 3, 4]


def test_a_new_query_over_a_silver_the_ingest_wrote_itself_reads_only_what_bronze_gains_from_then_on(  # type: ignore[no-untyped-def]
        spark, warehouse_settings) -> None:
    # A warehouse from before 2026-11-28: its ingest decoded each batch and wrote silver itself, no silver query.
    from pipelines import silver
    from pipelines.ingest import ensure_tables
    from pipelines.storage import Storage

    settings = warehouse_settings
    ensure_tables(spark, settings)
    _bronze(spark, settings, range(0, 3), 0)
    silver.derive_silver(spark, settings, "plain")
    Storage(spark).delete(silver.checkpoint_path(settings, "plain"))  # as if no silver query had ever run
    assert silver.derive_silver(spark, settings, "plain")["offset_commits"] == 0
    _bronze(spark, settings, range(3, 4), 1)
    assert silver.derive_silver(spark, settings, "plain")["offset_commits"] == 1
    assert _silver_offsets(spark, settings) == [0, 1, 2, 3]


@pytest.mark.broker
@pytest.mark.parametrize("spec", [spec for spec, _ in TABLES], ids=lambda spec: spec.name)
def test_each_silver_table_derived_again_from_bronze_has_exactly_the_rows_the_ingest_wrote(  # type: ignore[no-untyped-def]
        spark, scenario_warehouse, scenario_silver_from_bronze, spec) -> None:
    written = read_table(spark, scenario_warehouse["settings"], spec)
    columns = [name for name in spec.schema.fieldNames() if name != "ingested_at"]  # when it was written
    assert row_differences(written, scenario_silver_from_bronze[spec.name], columns) == (0, 0)
    if spec is not quarantine.TABLE:  # the scenarios' records all decode
        assert written.count() > 0
