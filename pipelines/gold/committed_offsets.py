"""gold.committed_offsets: the latest committed offset per (cluster, group, topic, partition).

The table's whole definition, in one module: ``TABLE`` (schema, key, clustering, properties),
the build step (``committed_offsets``: the full rebuild from silver.offset_commits) and the incremental
strategy (``Incremental.MERGE_LATEST_PER_KEY``, ``merge_commits``: each key's newest new record, MERGEd when newer
than the row there, a tombstone deleting it).
Tested on hand-built rows in tests/pipelines/gold/test_committed_offsets.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import types as T

from conf.settings import Settings
from pipelines.delta_tables import table_path
from schemas.table_spec import DELETION_VECTORS, GROUP_CLUSTERING, Incremental, TableSpec, column

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession


TABLE = TableSpec(
    name="gold.committed_offsets",
    description=(
        "Latest committed offset per group, topic and partition. Offset tombstones (expiry, OffsetDelete, "
        "group deletion) remove the row. Transactional commits appear only once their transaction committed: "
        "ingest reads with isolation.level=read_committed, so aborted or still-open ones never reach silver."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster the commit was read from", False),
        column("group", T.StringType(), "consumer group id", False),
        column("topic", T.StringType(), "committed topic", False),
        column("partition", T.IntegerType(), "committed partition", False),
        column("offset", T.LongType(), "committed offset: the next message the group will read", False),
        column("leader_epoch", T.IntegerType(), "leader epoch sent with the commit; null when the client sent -1"),
        column("metadata", T.StringType(), "client-supplied commit metadata"),
        column("commit_timestamp", T.TimestampType(), "when the commit was made (broker clock)"),
        column("expire_timestamp", T.TimestampType(), "expiry requested with the commit (OffsetCommitValue v1 only)"),
        column("topic_id", T.StringType(), "topic id, base64url (OffsetCommitValue v4, Kafka 4.1+); else null"),
        column("source_topic", T.StringType(), "topic the commit record was read from", False),
        column("source_partition", T.IntegerType(), "partition of the commit record", False),
        column("source_offset", T.LongType(), "offset of the commit record: later records win", False),
        column("record_timestamp", T.TimestampType(), "append time of the commit record"),
    ]),
    key=("cluster_name", "group", "topic", "partition"),
    cluster_by=GROUP_CLUSTERING,
    # Deletion vectors: every refresh MERGEs a few keys into this table; with them a
    # MERGE marks the rows it replaces instead of rewriting each file that holds one. The dashboard
    # reads such tables through delta-rs's DataFusion engine (dashboard/read.py), which applies them.
    properties=(DELETION_VECTORS,),
    incremental=Incremental.MERGE_LATEST_PER_KEY,
)

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
