"""silver.topic_names: the dimension that names topic ids, kept by the end-offset snapshots.

Why a table of its own: KIP-848 group records and offset commits v4 name partitions by topic id, and readers name
them without asking the cluster (so a rebuild from the warehouse gives the same rows). Reading the names from every
row of silver.partition_end_offsets would be a distinct over all snapshot history, growing with every snapshot. A
topic id names one topic for good (Kafka gives a re-created topic a new id, KIP-516), so this table gains a row
only when a snapshot describes an id it has not seen: in a steady cluster a snapshot reads a few rows here and
writes nothing.

- Key: (cluster_name, topic_id).
- Incremental strategy: insert-only. Each snapshot appends the ids it named that the table lacks, once
  (``txnAppId`` offsetlake-topic-names:<cluster>, ``txnVersion`` the snapshot id). A table created in a
  warehouse whose snapshots predate it is first filled from those snapshots (the first snapshot id per id).
  Two snapshot processes racing can both add a new id: readers take distinct (cluster_name, topic_id, topic).
- Build step: ``record_topic_names``, called by ``pipelines.end_offsets.append_snapshot`` before it appends the
  snapshot (a crash in between loses no name: the next snapshot describes the topic again).
- Read at read time: the view ``dashboards.topic_names`` (``pipelines/sql_views/topic_names.sql``) joins these names
  to the KIP-848 rows of gold.partition_assignments by topic id, so a name that arrives late needs no recompute.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from conf.settings import Settings
from schemas import partition_end_offsets
from schemas.topic_names import TABLE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from pipelines.end_offsets import EndOffsetsSnapshot


def app_id(settings: Settings) -> str:
    return f"offsetlake-topic-names:{settings.cluster_name}"


def record_topic_names(spark: SparkSession, settings: Settings, snapshot: EndOffsetsSnapshot) -> int:
    """Add the topic ids ``snapshot`` named that silver.topic_names lacks; return how many rows were added."""
    from pyspark.sql import functions as F

    from pipelines.delta_tables import ensure_table, idempotent_append, read_table, table_exists

    named = {p.topic_id: p.topic for p in snapshot.partitions if p.topic_id}
    new_table = not table_exists(settings, TABLE)
    if not named and not new_table:
        return 0
    ensure_table(spark, settings, TABLE)
    rows = {topic_id: (topic, snapshot.snapshot_id) for topic_id, topic in named.items()}
    older = _named_by_older_snapshots(spark, settings) if new_table else None
    if older is not None:  # take over the ids that snapshots made before this table named
        for row in older.filter(F.col("cluster_name") == settings.cluster_name).collect():
            if row["topic_id"] not in rows or row["first_snapshot_id"] < rows[row["topic_id"]][1]:
                rows[row["topic_id"]] = (row["topic"], row["first_snapshot_id"])
    else:
        known = read_table(spark, settings, TABLE).filter(F.col("cluster_name") == settings.cluster_name)
        for row in known.select("topic_id").collect():
            rows.pop(row["topic_id"], None)
    if not rows:
        return 0
    frame = spark.createDataFrame([(settings.cluster_name, topic_id, topic, first)
                                   for topic_id, (topic, first) in sorted(rows.items())], TABLE.schema)
    idempotent_append(frame, settings, TABLE, app_id(settings), snapshot.snapshot_id)
    return len(rows)


def _named_by_older_snapshots(spark: SparkSession, settings: Settings) -> DataFrame | None:
    """(cluster_name, topic_id, topic, first_snapshot_id) from silver.partition_end_offsets itself: the snapshots
    of a warehouse made before this table; None when there are none with ids."""
    from pyspark.sql import functions as F

    from pipelines.delta_tables import read_table, table_exists

    if not table_exists(settings, partition_end_offsets.TABLE):
        return None
    snapshots = read_table(spark, settings, partition_end_offsets.TABLE)
    if "topic_id" not in snapshots.columns:  # a table from before offsetlake recorded ids
        return None
    return (snapshots.filter(F.col("topic_id").isNotNull()).groupBy("cluster_name", "topic_id", "topic")
            .agg(F.min("snapshot_id").alias("first_snapshot_id")))
