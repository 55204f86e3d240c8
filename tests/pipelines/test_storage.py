"""The warehouse's files through Hadoop's FileSystem (pipelines/storage.py), and a warehouse given as a URI."""

from __future__ import annotations

from pathlib import Path

from pipelines.storage import Storage, join


def test_join_keeps_a_uri_s_double_slash_and_adds_one_slash_per_part() -> None:
    assert join("s3a://bucket/wh/", "gold", "/rebalance_events") == "s3a://bucket/wh/gold/rebalance_events"
    assert join("hdfs://127.0.0.1:9000/wh", "_checkpoints", "", "ingest") == "hdfs://127.0.0.1:9000/wh/_checkpoints/ingest"
    assert join("/data/wh", "silver") == "/data/wh/silver"


def test_files_are_listed_read_and_deleted_by_path_and_by_file_uri_alike(spark, tmp_path: Path) -> None:
    (tmp_path / "table" / "_delta_log").mkdir(parents=True)
    (tmp_path / "table" / "_delta_log" / "00000000000000000000.json").write_text('{"commitInfo": {}}\n')
    (tmp_path / "table" / "part-0.parquet").write_bytes(b"PAR1")
    storage = Storage(spark)
    for base in (str(tmp_path), f"file://{tmp_path}"):
        table = join(base, "table")
        assert [(e.name, e.is_dir) for e in storage.list(table)] == [("_delta_log", True), ("part-0.parquet", False)]
        assert storage.list(table)[1].uri == join(table, "part-0.parquet")
        assert storage.read_text(join(table, "_delta_log", "00000000000000000000.json")) == '{"commitInfo": {}}\n'
        assert storage.read_bytes(join(table, "part-0.parquet")) == b"PAR1"
        assert storage.is_dir(table) and not storage.is_dir(join(table, "part-0.parquet"))
        assert storage.read_text(join(table, "missing.json")) is None and storage.list(join(base, "missing")) == []
    storage.mkdirs(f"file://{tmp_path}/made/here")
    assert (tmp_path / "made" / "here").is_dir()
    assert storage.delete(f"file://{tmp_path}/made") and not (tmp_path / "made").exists()
    assert not storage.delete(f"file://{tmp_path}/made")


def test_a_warehouse_given_as_a_file_uri_gets_the_same_silver_and_gold_as_one_given_as_a_path(
        spark, settings_for, tmp_path: Path, monkeypatch) -> None:
    """Every step of ingest and gold (Delta writes, the batch writer's offset-log read, gold's incremental
    reads of silver's log) takes the URI as it is; ``Path("file:///x")`` would have made ``./file:/x``."""
    from pipelines.delta_tables import read_table
    from pipelines.gold.refresh import GOLD, refresh_gold
    from pipelines.ingest import ensure_tables, write_batch
    from schemas.catalog import SILVER
    from tests.pipelines.maintained_warehouse import BATCHES, RAW_SCHEMA

    monkeypatch.chdir(tmp_path)  # a relative ./file: directory would appear here
    by_path = settings_for(warehouse=str(tmp_path / "by-path"))
    by_uri = settings_for(warehouse=f"file://{tmp_path}/by-uri")
    assert by_uri.warehouse_uri == str(tmp_path / "by-uri")  # one spelling for Spark, Delta and delta-rs
    for settings in (by_path, by_uri):
        ensure_tables(spark, settings)
        offset = 0
        for batch_id, records in enumerate(BATCHES[:2]):
            raw = spark.createDataFrame([(k, v, "__consumer_offsets", 0, offset + i, at)
                                         for i, (k, v, at) in enumerate(records)], RAW_SCHEMA)
            offset += len(records)
            write_batch(spark, settings, "__consumer_offsets", raw, batch_id)
            refresh_gold(spark, settings)  # the second refresh reads only what silver's log added

    def rows(settings, spec) -> list[str]:  # type: ignore[no-untyped-def]
        frame = read_table(spark, settings, spec)
        frame = frame.drop(*[f.name for f in frame.schema.fields if f.name.endswith("_at")])  # times of the run
        return sorted(repr(sorted(row.asDict(recursive=True).items())) for row in frame.collect())

    for spec in (*SILVER, *GOLD):
        assert rows(by_uri, spec) == rows(by_path, spec), spec.name
    assert rows(by_uri, GOLD[0]), "gold.committed_offsets has the batches' commits"
    assert (tmp_path / "by-uri" / "gold").is_dir() and not (tmp_path / "file:").exists()
