"""gold.committed_offsets: the latest committed offset per (cluster, group, topic, partition)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from conf.settings import Settings
from pipelines.delta_tables import table_path
from schemas.committed_offsets import TABLE

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

KEY = ("cluster_name", "group", "topic", "partition")


def _later_first() -> list[Column]:
    from pyspark.sql import functions as F

    # Records of one group share one __consumer_offsets partition: append order is the truth.
    return [F.col("record_timestamp").desc(), F.col("source_partition").desc(), F.col("source_offset").desc()]


def latest_commit_records(commits: DataFrame) -> DataFrame:
    """The last silver.offset_commits row per key, tombstones included (a tombstone there means deleted)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    w = Window.partitionBy(*KEY).orderBy(*_later_first())
    latest = commits.withColumn("_rank", F.row_number().over(w)).filter("_rank = 1")
    return latest.select(
        *KEY, "offset", F.when(F.col("leader_epoch") >= 0, F.col("leader_epoch")).alias("leader_epoch"),
        "metadata", "commit_timestamp", "expire_timestamp", "topic_id", "source_topic", "source_partition",
        "source_offset", "record_timestamp", "is_tombstone",
    )


def committed_offsets(commits: DataFrame) -> DataFrame:
    """Full rebuild: the latest live commit per key (the pure transform; tests compare it with the table)."""
    return latest_commit_records(commits).filter("NOT is_tombstone").select(*TABLE.schema.fieldNames())


def merge_commits(spark: SparkSession, settings: Settings, new_commits: DataFrame) -> None:
    """Apply newer commits and tombstones; a re-applied or older record changes nothing (idempotent)."""
    from delta.tables import DeltaTable

    source = latest_commit_records(new_commits)
    on = " AND ".join(f"t.`{c}` = s.`{c}`" for c in KEY)
    # Compared field by field, not as (partition, offset) tuples: Spark compares tuples as structs and refuses
    # two whose fields differ in nullability or comments (the change data feed's rows against the table's).
    newer = ("(s.record_timestamp > t.record_timestamp OR (s.record_timestamp = t.record_timestamp AND "
             "(s.source_partition > t.source_partition OR (s.source_partition = t.source_partition AND "
             "s.source_offset > t.source_offset))))")
    values = {c: f"s.`{c}`" for c in TABLE.schema.fieldNames()}
    (
        DeltaTable.forPath(spark, str(table_path(settings, TABLE))).alias("t").merge(source.alias("s"), on)
        .whenMatchedDelete(condition=f"s.is_tombstone AND {newer}")
        .whenMatchedUpdate(condition=f"NOT s.is_tombstone AND {newer}", set=values)
        .whenNotMatchedInsert(condition="NOT s.is_tombstone", values=values)
        .execute()
    )
