"""The warehouse's files through Hadoop's FileSystem (pipelines/storage.py).

A whole warehouse on another file system (ingest, gold, maintain on ``hdfs://``) is tests/cluster/test_cluster.py's;
a ``file:`` URI names the same directory as its path (tests/conf/test_settings.py), so it takes the path's code.
"""

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
